//! # fabricsim
//!
//! A packet-level, discrete-event simulator of the networks inside AI/ML training clusters.
//!
//! Layers, bottom up (start reading at [`engine`]); a module uses only modules of its own layer
//! and the layers before it, and the top-level modules form no import circle (`tests/layering.rs`
//! reads this list and checks both):
//! - [`units`], [`ids`], [`rng`], [`error`], [`excerpt`], [`hint`], [`huge_pages`], [`budget`]:
//!   integer picosecond time and byte counts, dense ids, seeded random streams, errors and the
//!   short excerpts of input they quote, cache prefetch hints, an allocator that puts large
//!   arrays on huge pages (binaries opt in), and the memory setup may plan for.
//! - [`kernel`]: what every element shares: packets (their kinds declared in one table) and
//!   their pool, packet queues, INT stacks, the event queue and its kinds, the run's counters
//!   and the packet and drop logs.
//! - [`scheme`]: the shape of a pluggable scheme ([`scheme::Scheme`]), the `scheme_family!` and
//!   `tagged_config!` macros and the parameter helpers they use.
//! - [`topo`]: fat trees and leaf-spines as dense arrays, static uplink failures, and equal-cost
//!   routing tables.
//! - [`net`]: output port state with its queue discipline, switch path selection, PFC accounting, host NIC schedulers;
//!   [`net::Network`] is the network layer's state.
//! - [`transport`]: connections, loss recovery ([`transport::recovery`]), congestion control
//!   ([`transport::cc`]), host path selection ([`transport::lb`]), message gates and credits,
//!   each scheme one file behind a small trait; [`transport::hosts::Hosts`] is the host layer's
//!   state.
//! - [`workload`]: permutation, incast, all-to-all, flow lists, collectives.
//! - [`scenario`]: TOML scenarios with defaults, validation and overrides.
//! - [`import`]: htsim command lines and the ns-3 RDMA simulators' configurations, read into
//!   scenarios.
//! - [`estimate`]: what a validated scenario will roughly need (packets, events, memory, time).
//! - [`engine`]: the [`engine::Sim`] context (clock, event queue, packet pool, one `Network`
//!   and one `Hosts`) and its event loop ([`engine::queue`] the event queue), with the
//!   dispatch (`engine/dispatch.rs`) that lends the elements of [`net`] and [`transport`] the
//!   kernel and carries out what their handlers return, and the builders of that state
//!   (`engine/build.rs`).
//! - [`registry`]: every scheme family, for listings.
//! - [`results`]: per-flow rows, summary and invariant checks.
//!
//! Entry point: [`scenario::load`] (or [`scenario::Scenario::from_toml`] + `setup`) gives a
//! [`scenario::Setup`]; [`run`] simulates it and returns [`results::Results`].

#![warn(missing_docs)]

use crate::ids::PortId;

/// The project commit this engine was built from (`build.rs`: `-dirty` with uncommitted changes
/// to tracked files, `unknown` outside a git checkout).
pub const ENGINE_COMMIT: &str = env!("FABRICSIM_COMMIT");

pub mod budget;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod excerpt;
pub mod hint;
pub mod huge_pages;
pub mod import;
pub mod kernel;
pub mod ids;
pub mod net;
pub mod registry;
pub mod scheme;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod topo;
pub mod transport;
pub mod units;
pub mod workload;

pub use engine::Progress;
pub use error::{Error, Result};
pub use results::Results;
pub use scenario::{Scenario, Setup};

/// Simulates a validated scenario. `progress` is called periodically with the run's progress.
/// Invariant violations are reported in the results' summary (see [`Results`]) and by
/// [`check_invariants`].
pub fn run(setup: &Setup, progress: &mut dyn FnMut(&Progress)) -> Result<Results> {
    run_until_stopped(setup, progress, &std::sync::atomic::AtomicBool::new(false))
}

/// [`run`] that stops early once `stop` is set: by another thread (a signal handler), or by
/// `progress` itself (the flag is read right after each periodic call, so a caller that polls
/// for an interrupt there stops within 65,536 events). The results of a stopped run are
/// partial and say so (`summary.interrupted`, the simulated time reached in
/// `summary.interrupted_at_us`, unfinished flows as unfinished); a run never stopped gives the
/// same results as [`run`].
pub fn run_until_stopped(setup: &Setup, progress: &mut dyn FnMut(&Progress), stop: &std::sync::atomic::AtomicBool) -> Result<Results> {
    run_threads(setup, 1, progress, stop)
}

/// [`run_until_stopped`] on up to `threads` cores: the fabric is cut into partitions that run
/// in parallel (see [`engine::parallel`]), with results byte-identical to the serial engine's
/// apart from `summary.json`'s `performance` block, which says how many partitions ran (or
/// why the run stayed serial: tracing, receiver credits, dependencies between partitions...).
pub fn run_threads(setup: &Setup, threads: usize, progress: &mut dyn FnMut(&Progress), stop: &std::sync::atomic::AtomicBool) -> Result<Results> {
    run_with(setup, threads, progress, stop, None)
}

/// [`run_threads`] for a run whose results go to the prepared folder `out`: the trace samples
/// (`trace.csv`, `port_trace.csv`) are written there while the run takes them, through a
/// bounded buffer, instead of being kept ([`results::stream`]), so a finely sampled trace needs
/// no memory; the results' `trace` and `port_trace` stay empty and [`Results::write_to`] on
/// `out` moves the files into place. The files are the same bytes as without streaming. A
/// failed write of a trace file is an [`Error::Write`] naming it.
pub fn run_into(setup: &Setup, threads: usize, progress: &mut dyn FnMut(&Progress), stop: &std::sync::atomic::AtomicBool, out: &results::OutDir) -> Result<Results> {
    run_with(setup, threads, progress, stop, Some(out))
}

fn run_with(setup: &Setup, threads: usize, progress: &mut dyn FnMut(&Progress), stop: &std::sync::atomic::AtomicBool, out: Option<&results::OutDir>) -> Result<Results> {
    if threads == 0 {
        return Err(Error::invalid("threads", "0: give 1 (serial) or more"));
    }
    // The files are opened before the run (a folder that cannot take them fails at once) and
    // lent to the engine as its sample sink.
    let samples = engine::trace::samples_anything(setup.trace_interval, &setup.trace_conns, &setup.trace_ports);
    // A timeline draws the port samples as counters: they are kept for it, not streamed.
    let sink = match out.filter(|_| samples && !setup.scenario.run.timeline) {
        Some(out) => {
            let links = setup.trace_ports.iter().map(|&p| setup.fabric.link_name(PortId(p))).collect();
            Some(Box::new(results::stream::TraceFiles::open(out, !setup.trace_conns.is_empty(), links)?) as Box<dyn engine::trace::SampleSink>)
        }
        None => None,
    };
    let Some((mut sim, exec)) = engine::parallel::run(setup, threads, progress, stop, sink)? else {
        return Err(Error::Stopped);
    };
    let streamed = match sim.tracer.files.take().map(|f| f.into_any().downcast::<results::stream::TraceFiles>()) {
        Some(Ok(files)) => files.finish()?,
        // The engine holds only the sink it was given.
        Some(Err(_)) | None => Vec::new(),
    };
    let mut results = results::collect(&sim, setup, exec.wall_seconds);
    results.streamed = streamed;
    let perf = &mut results.summary.performance;
    perf.threads = exec.threads;
    perf.partitions = exec.partitions;
    perf.serial_reason = exec.serial_reason;
    perf.sync_windows = exec.windows;
    perf.partition_cpu_seconds = exec.partition_cpu_seconds;
    perf.critical_path_seconds = exec.critical_path_seconds;
    Ok(results)
}

/// Turns a run's invariant violations into an error.
pub fn check_invariants(results: &Results) -> Result<()> {
    if results.summary.invariant_violations.is_empty() {
        Ok(())
    } else {
        Err(Error::Invariant(results.summary.invariant_violations.clone()))
    }
}
