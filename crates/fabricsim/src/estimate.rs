//! A rough resource estimate of a validated scenario, before anything runs: data packets,
//! events, peak memory and a wall-time range. `fabricsim check` prints it; `fabricsim run`
//! refuses a scenario whose memory estimate exceeds the machine's physical memory (unless
//! `--force`), so that it fails with a message instead of an allocation abort.
//!
//! The coefficients come from measured runs on the development machine (single thread,
//! release build, 400 Gb/s fat trees with 1-BDP windows): the bundled example (128 × 2 MiB:
//! 66,688 data packets, 1.37 M events, 14.3 MB peak RSS) and `bench/perm_1024.toml` (533,504
//! data packets, 11.2 M events, 69 MB), both about 21 events per data packet; 4–15 M events/s.
//! The model is linear: a fixed base, a per-connection share (state, messages, flow rows),
//! a per-port share, and the packet pool at its peak, which the windows bound (1.25 BDP of the
//! longest path per connection, the default largest window of most controllers).

pub use crate::budget::physical_memory_bytes;
use crate::budget::show_bytes;
use crate::scenario::Setup;
use crate::workload::graph::TaskKind;

/// Events per data packet (sending, every hop's arrival and departure, the ACK's trip).
const EVENTS_PER_PACKET: f64 = 21.0;
/// Memory not proportional to the scenario: code, allocator, fixed tables.
const BASE_BYTES: f64 = 8e6;
/// Per connection: its transport state, its messages and its result rows.
const BYTES_PER_CONN: f64 = 10e3;
/// Per port: queue, counters, routing entries.
const BYTES_PER_PORT: f64 = 200.0;
/// Per packet in flight: the pool slot and its share of queue and bookkeeping.
const BYTES_PER_PACKET: f64 = 300.0;
/// In flight per connection, in BDPs of the longest path.
const WINDOW_BDP: f64 = 1.25;
/// Simulation speed range, events per second (slow: a busy shared machine; fast: small runs).
const EVENTS_PER_SEC: (f64, f64) = (3e6, 20e6);

/// What a scenario will roughly need (`summary.json` `estimate`, beside what the run measured).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// Data packets the workload posts (first transmissions).
    pub data_packets: u64,
    /// Events, roughly (retransmissions and control traffic add to it).
    pub events: f64,
    /// Peak memory, bytes.
    pub peak_memory_bytes: f64,
    /// Wall time, seconds: (fast machine, slow machine).
    pub wall_s: (f64, f64),
}

impl Estimate {
    /// The estimate of `setup`.
    pub fn of(setup: &Setup) -> Estimate {
        let tr = &setup.scenario.transport;
        let mss = (tr.mtu_bytes - tr.header_bytes) as u64;
        let data_packets: u64 = setup
            .traffic
            .tasks
            .iter()
            .filter_map(|t| match t.kind {
                TaskKind::Send { bytes, .. } => Some(bytes.div_ceil(mss).max(1)),
                _ => None,
            })
            .fold(0u64, u64::saturating_add);
        let conns = setup.traffic.conns.len() as f64;
        let window_pkts = WINDOW_BDP * setup.bdp_bytes as f64 / tr.mtu_bytes as f64;
        let in_flight = (conns * window_pkts.max(1.0)).min(data_packets as f64);
        let events = EVENTS_PER_PACKET * data_packets as f64;
        let peak_memory_bytes = BASE_BYTES + BYTES_PER_CONN * conns + BYTES_PER_PORT * setup.fabric.ports.len() as f64 + BYTES_PER_PACKET * in_flight;
        Estimate { data_packets, events, peak_memory_bytes, wall_s: (events / EVENTS_PER_SEC.1, events / EVENTS_PER_SEC.0) }
    }

    /// One line for `check`: packets, events, memory, wall time.
    pub fn describe(&self) -> String {
        format!(
            "{} data packets, ~{:.2e} events, peak memory ~{}, wall time ~{}–{}",
            self.data_packets,
            self.events,
            show_bytes(self.peak_memory_bytes),
            show_secs(self.wall_s.0),
            show_secs(self.wall_s.1)
        )
    }
}

fn show_secs(s: f64) -> String {
    let hour = 3600.0;
    match s {
        s if s >= hour => format!("{:.1} h", s / hour),
        s if s >= 1.0 => format!("{s:.0} s"),
        s => format!("{:.0} ms", (s * 1e3).max(1.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use std::path::Path;

    fn estimate(toml: &str) -> Estimate {
        Estimate::of(&Scenario::from_toml(toml, &[]).unwrap().setup(Path::new(".")).unwrap())
    }

    #[test]
    fn the_example_is_estimated_within_its_measured_figures() {
        // Measured: 66,688 data packets, 1.37 M events, 14.3 MB peak RSS.
        let e = estimate("[topology]\nk = 8\n[workload]\nkind = \"permutation\"\nflow_bytes = \"2MiB\"\n");
        assert_eq!(e.data_packets, 128 * 521);
        assert!((0.5..=2.0).contains(&(e.events / 1.37e6)), "{e:?}");
        assert!((0.5..=2.0).contains(&(e.peak_memory_bytes / 14.3e6)), "{e:?}");
        assert!(e.wall_s.0 < e.wall_s.1 && e.wall_s.1 < 1.0, "{e:?}");
        assert!(e.describe().contains("66688 data packets"), "{}", e.describe());
    }

    #[test]
    fn a_huge_scenario_is_estimated_without_overflow() {
        let e = estimate("[topology]\nk = 16\n[workload]\nkind = \"permutation\"\nflow_bytes = \"10000GB\"\n");
        // Long flows cost time, not memory: the windows bound what is in flight.
        assert!(e.peak_memory_bytes < 1e9 && e.events > 1e13 && e.wall_s.1 > 3600.0, "{e:?}");
        assert!(e.describe().contains(" h"), "{}", e.describe());
    }
}
