//! Python bindings of fabricsim: the native part (`fabricsim._native`) of the Python package in
//! `python/`, built by maturin with the `extension-module` feature.
//!
//! - [`columns`]: a run's tables as typed columns in the CSV files' order (plain Rust, tested by
//!   `cargo test`).
//! - `python` (feature `python`): the PyO3 module: `run` (the GIL released while simulating,
//!   interrupts polled from the progress callback, panics turned into exceptions), the results
//!   object the Python `Result` wraps, the output schema and the two exception types.

#![warn(missing_docs)]

pub mod columns;
#[cfg(feature = "python")]
mod python;

/// Large arrays on transparent huge pages, as in the command-line tool (see
/// [`fabricsim::huge_pages`]): only the extension's own allocations, never Python's.
#[cfg(feature = "python")]
#[global_allocator]
static ALLOC: fabricsim::huge_pages::HugePageAlloc = fabricsim::huge_pages::HugePageAlloc;
