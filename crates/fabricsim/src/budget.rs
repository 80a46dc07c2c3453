//! The memory setting up a scenario may take, and what its large tables cost. Setup builds a
//! fabric whose route table grows with switches × ToRs, and a workload graph that grows with
//! messages (a collective in 1-byte chunks, 10⁵ iterations, a billion flows): both are counted
//! from the scenario *before* they are built, and a scenario whose tables would exceed the
//! budget is refused naming the key that makes them large, instead of dying in an allocation.
//!
//! The budget is half the machine's physical memory (the other half is left for the run's own
//! state, which [`crate::estimate`] predicts and `fabricsim run` checks) unless the caller gives
//! another ([`crate::scenario::Scenario::setup_within`]; `fabricsim run --force` gives none, the
//! fuzzer a small one). The byte costs below were measured (release build, peak resident memory of
//! `fabricsim check` on fabrics and collectives built for it); they are what setup allocates at
//! its peak, growth slack of the vectors included, not what a run adds (see [`crate::estimate`]).

use crate::error::{Error, Result};

/// One next-hop set entry (offset and length) and one distance per (switch, destination ToR).
pub const BYTES_PER_ROUTE_ENTRY: f64 = 9.0;
/// One port: its spec, adjacency, queue profile and routing scratch.
pub const BYTES_PER_PORT: f64 = 64.0;
/// One node: tier, index, adjacency offsets, breadth-first-search scratch.
pub const BYTES_PER_NODE: f64 = 32.0;
/// One graph task (send, join or instance marker, 24 bytes) with its edge offsets and its first
/// message (workloads reserve their tables at their counted size, so there is no growth slack).
pub const BYTES_PER_TASK: f64 = 32.0;
/// One message (a send's part on one queue pair): its send task and its connection.
pub const BYTES_PER_MESSAGE: f64 = 8.0;
/// One dependency edge, while collected (12 bytes) and once sorted into rows (8 bytes).
pub const BYTES_PER_EDGE: f64 = 20.0;
/// One connection, and its entry in a collective job's (rank pair, queue pair) map.
pub const BYTES_PER_CONN: f64 = 40.0;
/// One generated flow before it is compiled to the graph.
pub const BYTES_PER_FLOW: f64 = 48.0;
/// One connection while the run holds it: its transport state, its messages' bookkeeping and
/// its result rows. Measured: 10⁵ and 10⁶ one-byte flows (the example's fabric,
/// `workload.permutations` 782 and 7813) peak at 1.77 and 1.65 KB per flow, of which the graph,
/// the task state and one packet in flight take about 410 B ([`crate::estimate`] counts those).
pub const BYTES_PER_CONN_RUN: f64 = 1.2e3;
/// One graph task while it runs: dependencies left, the time it may fire (then fired), the
/// times it was delivered and completed, and a send's parts left to deliver and complete
/// (`workload::run::TaskState`).
pub const BYTES_PER_TASK_RUN: f64 = 30.0;

/// The row buffer of each streamed trace file (`results::stream`), which the estimate counts
/// instead of the samples: here, below both, so that the estimate need not reach up to results.
pub const TRACE_FILE_BUFFER_BYTES: usize = 64 << 10;

/// Setup's memory budget, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Bytes setup may plan for.
    pub bytes: f64,
}

impl Budget {
    /// No limit (`fabricsim run --force`).
    pub const UNLIMITED: Budget = Budget { bytes: f64::INFINITY };

    /// Half this machine's physical memory (unlimited where the system does not say).
    pub fn of_machine() -> Budget {
        physical_memory_bytes().map_or(Budget::UNLIMITED, |bytes| Budget { bytes: bytes / 2.0 })
    }

    /// What is left after `bytes` are taken.
    pub fn less(self, bytes: f64) -> Budget {
        Budget { bytes: (self.bytes - bytes).max(0.0) }
    }

    /// Refuses `bytes` beyond the budget: the error names `key` and says what needs them
    /// (`what`, e.g. "a route table of 2·10⁹ entries").
    pub fn admit(self, key: &str, bytes: f64, what: impl FnOnce() -> String) -> Result<()> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(Error::invalid(key, format!("{} needs about {} to set up, more than the {} allowed (half this machine's memory unless told otherwise): make it smaller", what(), show_bytes(bytes), show_bytes(self.bytes))))
    }

    /// Refuses a workload whose setup (`setup_bytes`) and run state (`run_bytes`) together
    /// exceed twice the budget (setup has half the machine, the run's own state the other
    /// half): counted before anything is generated, so that a scenario `fabricsim run` would
    /// refuse for its memory estimate is refused at once instead of after minutes of setup.
    pub fn admit_run(self, key: &str, setup_bytes: f64, run_bytes: f64, what: impl FnOnce() -> String) -> Result<()> {
        let (total, allowed) = (setup_bytes + run_bytes, 2.0 * self.bytes);
        if total <= allowed {
            return Ok(());
        }
        Err(Error::invalid(
            key,
            format!(
                "{} needs at least {} to set up and run ({} of it the connections' and tasks' run state), more than the {} allowed (this machine's memory unless told otherwise): make it smaller",
                what(),
                show_bytes(total),
                show_bytes(run_bytes),
                show_bytes(allowed)
            ),
        ))
    }
}

/// Largest input file a scenario may name (flow lists, CDFs, collective traces, the scenario
/// itself): 1 GiB.
pub const MAX_INPUT_FILE_BYTES: u64 = 1 << 30;

/// The text of an input file: refused unless it is a regular file of at most
/// [`MAX_INPUT_FILE_BYTES`], so that a name like `/dev/zero` cannot fill the memory and a pipe
/// cannot block setup forever (the check looks at the file without opening it).
pub fn read_input_file(path: &std::path::Path) -> std::io::Result<String> {
    String::from_utf8(read_input_bytes(path)?).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// [`read_input_file`]'s bytes, for binary inputs (Chakra traces).
pub fn read_input_bytes(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error as IoError, ErrorKind, Read};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(IoError::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let too_big = |n: u64| IoError::new(ErrorKind::InvalidInput, format!("{n} bytes or more: input files up to {MAX_INPUT_FILE_BYTES} bytes (1 GiB) are read"));
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    // A file that grows while read still stops at the limit.
    std::fs::File::open(path)?.take(MAX_INPUT_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Physical memory of this machine in bytes (Linux `MemTotal`), if known.
pub fn physical_memory_bytes() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: f64 = s.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024.0)
}

/// A byte count for messages: MB below a gigabyte, GB above, exponent form beyond a petabyte.
pub fn show_bytes(b: f64) -> String {
    match b {
        b if b >= 1e15 => format!("{b:.1e} bytes"),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b => format!("{:.0} MB", b / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        for special in ["/dev/zero", "/dev/urandom", "/", "/proc"] {
            let e = read_input_file(std::path::Path::new(special)).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{special}: {e}");
        }
        let t = std::env::temp_dir().join(format!("fabricsim-budget-{}", std::process::id()));
        std::fs::write(&t, "a,b\n").unwrap();
        assert_eq!(read_input_file(&t).unwrap(), "a,b\n");
        std::fs::remove_file(&t).unwrap();
    }

    #[test]
    fn a_budget_admits_what_fits_and_names_the_key_otherwise() {
        let b = Budget { bytes: 1e9 };
        assert!(b.admit("k", 1e9, String::new).is_ok());
        let e = b.less(5e8).admit("workload.jobs[0].chunk", 2e9, || "a graph of 10 messages".into()).unwrap_err().to_string();
        assert!(e.contains("`workload.jobs[0].chunk`") && e.contains("2.0 GB") && e.contains("500 MB") && e.contains("10 messages"), "{e}");
        assert!(Budget::UNLIMITED.admit("k", 1e300, String::new).is_ok());
        assert_eq!(show_bytes(3e18), "3.0e18 bytes");
    }
}
