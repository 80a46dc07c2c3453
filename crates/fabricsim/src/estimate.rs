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
//! a per-port share, the packet pool at its peak, which the windows bound (1.25 BDP of the
//! longest path per connection, the default largest window of most controllers, on the
//! connections that start together: a collective's later steps wait for its first), the route
//! table (one entry per switch and destination ToR), the workload's task graph as setup built it
//! ([`crate::budget`]'s costs) and its run-time state, and the trace (every traced connection
//! and port once per sampling period over the busiest host link's time; each tick an event).
//! `fabricsim run` streams the trace samples to their files (`results::stream`), so
//! they cost write time rather than memory: the memory counts the two files' buffers and the
//! uplink-imbalance values; the wall time counts every sample's row. (A library caller that
//! keeps the samples, [`crate::run_threads`], holds 48 bytes more per sample.) Measured against
//! it: the example 1.12×, `scenarios/collectives.toml` 1.55× (it was 5× before the first-wave
//! bound), a 917,504-message collective in 1-byte chunks 1.35×, `bench/perm_1024.toml` 1.13×,
//! the example traced every 10 ns on its ToR uplinks 1.44× (13.2 MB measured) and every 1 ns on
//! every port 1.3× (14.6 MB; wall time 7.6 s, estimated 11–46 s), a k = 32 fat tree 1.25×.
//! (Those ratios predate the per-connection share's measurement below; with it the example is
//! estimated at 16 MB and `perm_1024` at 70 MB.) The per-connection share,
//! [`crate::budget::BYTES_PER_CONN_RUN`], was 10 KB, which over-counted small flows 6× and
//! refused feasible runs of 10⁷ flows; measured on 10⁵ and 10⁶ one-byte flows (177 MB and
//! 1.65 GB peak) it is 1.2 KB, and those are now estimated at 0.95× and 0.97× of what they take.

use crate::units::{Bytes, Time};
pub use crate::budget::physical_memory_bytes;
use crate::budget::show_bytes;
use crate::scenario::Setup;
use crate::workload::graph::TaskKind;

/// Events per data packet (sending, every hop's arrival and departure, the ACK's trip).
const EVENTS_PER_PACKET: f64 = 21.0;
/// Memory not proportional to the scenario: code, allocator, fixed tables.
const BASE_BYTES: f64 = 8e6;
/// Per port: queue, counters, routing entries.
const BYTES_PER_PORT: f64 = 200.0;
/// Per packet in flight: the pool slot and its share of queue and bookkeeping.
const BYTES_PER_PACKET: f64 = 300.0;
/// In flight per connection, in BDPs of the longest path.
const WINDOW_BDP: f64 = 1.25;
/// Per message with `run.message_log`: when it was posted, delivered and completed.
const BYTES_PER_LOGGED_MESSAGE: f64 = 24.0;
/// A streamed trace's buffers: two files' row buffers (`results::stream`).
const TRACE_BUFFER_BYTES: f64 = 2.0 * (crate::budget::TRACE_FILE_BUFFER_BYTES as f64 + 1024.0);
/// Per (ToR, sampling tick) of the uplink-imbalance figure: its value, and its copy while the
/// figure is sorted.
const BYTES_PER_IMBALANCE_VALUE: f64 = 16.0;
/// Wall time per trace sample written (its CSV row formatted and written through the buffer),
/// seconds: (fast machine, slow machine). Measured with `fabricsim run` (ci profile) on the
/// bundled example traced every 1 ns on every port (`run.trace_interval_us = 0.001`,
/// `run.trace_ports = ["*-*"]`): 48.76 M samples (1.97 GB of CSV) took 7.55 s against 0.17 s
/// untraced on the development machine, 151 ns per sample; the slow end allows 4× for a busy
/// machine or a slower disk.
const SECS_PER_SAMPLE: (f64, f64) = (1.5e-7, 6e-7);
/// `timeline.json` events above which `fabricsim run` and `check` warn: about 300 MB of JSON,
/// where Perfetto's UI in a browser tab becomes slow to load (its JSON importer holds the whole
/// file); the trace processor outside the browser takes more.
pub const TIMELINE_WARN_EVENTS: f64 = 2e6;
/// Per timeline event: its JSON text (~150 bytes measured on `scenarios/collectives.toml` with
/// messages and a traced port), once as an event and once in the file's text.
const BYTES_PER_TIMELINE_EVENT: f64 = 300.0;
/// Per port sample kept in memory for the timeline (not streamed): `PortSample`.
const BYTES_PER_KEPT_SAMPLE: f64 = 48.0;

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
    /// With `run.timeline`: the events `timeline.json` will hold (two per flow and per logged
    /// message, one per collective instance, two per traced-port sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline_events: Option<f64>,
    /// What each partition past the first adds on several threads: its own copy of the
    /// per-task and per-connection run state ([`GraphSize::run_bytes`]; measured: the
    /// 8192-GPU training step of `experiments/training` peaks at 5.7 GB serially, 19.0 GB on 8
    /// partitions and 32.5 GB on 16, 1.69 GB per partition, against 1.8 GB counted here).
    ///
    /// [`GraphSize::run_bytes`]: crate::workload::graph::GraphSize::run_bytes
    #[serde(skip)]
    pub bytes_per_partition: f64,
}

impl Estimate {
    /// The estimate of `setup`.
    pub fn of(setup: &Setup) -> Estimate {
        let data_packets = Self::data_packets(setup);
        let in_flight = Self::packets_in_flight(setup, data_packets);
        let (samples, ticks) = Self::trace_samples(setup, data_packets);
        // One value per (ToR, tick) in which its uplinks sent something: at most one per packet
        // sent up (a data packet at its source's ToR, an ACK at its receiver's). Every ToR is
        // counted (those whose uplinks are all traced are fewer): the estimate sits below the
        // results layer that knows which.
        let tors = if samples > 0.0 && !setup.trace_ports.is_empty() { setup.fabric.size().tors as f64 } else { 0.0 };
        let imbalance_values = (ticks * tors).min(2.0 * data_packets as f64);
        let events = EVENTS_PER_PACKET * data_packets as f64 + ticks;
        let graph = crate::workload::graph::GraphSize::of(&setup.traffic);
        let fabric = setup.fabric.size();
        let peak_memory_bytes = BASE_BYTES
            + BYTES_PER_PORT * fabric.ports as f64
            + (BYTES_PER_PACKET + Self::telemetry_bytes(setup)) * in_flight
            + fabric.route_entries() as f64 * crate::budget::BYTES_PER_ROUTE_ENTRY
            + graph.bytes()
            + graph.run_bytes()
            + if setup.scenario.run.message_log { BYTES_PER_LOGGED_MESSAGE * graph.messages as f64 } else { 0.0 }
            + if samples > 0.0 { TRACE_BUFFER_BYTES + BYTES_PER_IMBALANCE_VALUE * imbalance_values } else { 0.0 };
        let wall_s = (events / EVENTS_PER_SEC.1 + samples * SECS_PER_SAMPLE.0, events / EVENTS_PER_SEC.0 + samples * SECS_PER_SAMPLE.1);
        let run = &setup.scenario.run;
        let timeline_events = run.timeline.then(|| {
            let port_samples = ticks * setup.trace_ports.len() as f64;
            2.0 * setup.traffic.conns.len() as f64 + if run.message_log { 2.0 * graph.messages as f64 } else { 0.0 } + setup.traffic.instances.len() as f64 + 2.0 * port_samples
        });
        let peak_memory_bytes = peak_memory_bytes + timeline_events.map_or(0.0, |e| BYTES_PER_TIMELINE_EVENT * e + BYTES_PER_KEPT_SAMPLE * samples);
        Estimate { data_packets, events, peak_memory_bytes, wall_s, timeline_events, bytes_per_partition: graph.run_bytes() }
    }

    /// Peak memory on `partitions` partitions (1: serial).
    pub fn peak_memory_on(&self, partitions: usize) -> f64 {
        self.peak_memory_bytes + partitions.saturating_sub(1) as f64 * self.bytes_per_partition
    }

    /// Per packet: the INT record stack beside its pool slot (`kernel/telemetry.rs`), when a
    /// scheme of the run reads telemetry (an ACK reuses its data packet's slot, so one per
    /// packet in flight).
    fn telemetry_bytes(setup: &Setup) -> f64 {
        if setup.scenario.transport.carries_telemetry() {
            std::mem::size_of::<crate::net::telemetry::IntStack>() as f64
        } else {
            0.0
        }
    }

    /// Packet records the engine's pool should reserve address space for: twice the data
    /// packets in flight at the peak (ACKs and queued packets share the pool), at most 2^24 (a
    /// GiB). Only what the run touches becomes resident. Growing by doubling instead copied
    /// the pool into each larger block while the smaller one was still held: `perm_8192`'s
    /// peak RSS fell from 256 to 216 MB with the reservation (1.24 M packets at the peak, 3.1 M
    /// reserved), its wall time unchanged.
    pub(crate) fn pool_packets(setup: &Setup) -> usize {
        (2.0 * Self::packets_in_flight(setup, Self::data_packets(setup))).min((1u64 << 24) as f64) as usize
    }

    /// Payload bytes per packet.
    fn mss(setup: &Setup) -> u64 {
        let tr = &setup.scenario.transport;
        (tr.mtu_bytes - tr.header_bytes) as u64
    }

    /// Data packets the workload posts (first transmissions).
    fn data_packets(setup: &Setup) -> u64 {
        let mss = Self::mss(setup);
        setup.traffic.messages().map(|m| m.bytes.div_ceil(Bytes(mss)).max(1)).fold(0u64, u64::saturating_add)
    }

    /// Data packets in flight at the peak, of a workload that posts `data_packets` in all.
    fn packets_in_flight(setup: &Setup, data_packets: u64) -> f64 {
        let window_pkts = (WINDOW_BDP * setup.bdp_bytes.0 as f64 / setup.scenario.transport.mtu_bytes as f64).max(1.0);
        Self::first_wave_packets(setup, Self::mss(setup), window_pkts).min(data_packets as f64)
    }

    /// Packets in flight at the peak: every connection that has a message ready when the run (or a
    /// collective instance) starts, with at most a window of its largest such message in flight.
    /// Later messages wait on earlier ones, so the connections that start together bound it.
    fn first_wave_packets(setup: &Setup, mss: u64, window_pkts: f64) -> f64 {
        let t = &setup.traffic;
        let mut first = vec![0u64; t.conns.len()];
        let mut mark = |task: usize| {
            if let TaskKind::Send { .. } = t.tasks[task].kind() {
                for m in t.messages_of(task as u32).map(|m| t.message(m)) {
                    let c = &mut first[m.conn as usize];
                    *c = (*c).max(m.bytes.div_ceil(Bytes(mss)).max(1));
                }
            }
        };
        for (i, task) in t.tasks.iter().enumerate() {
            match task.kind() {
                TaskKind::Send { .. } if task.deps() == 0 => mark(i),
                // An instance's first messages wait for its start alone.
                TaskKind::Begin(_) => {
                    for e in t.edges_of(i as u32) {
                        if t.tasks[e.to as usize].deps() == 1 {
                            mark(e.to as usize);
                        }
                    }
                }
                _ => {}
            }
        }
        first.iter().map(|&p| (p as f64).min(window_pkts)).sum()
    }

    /// Trace samples a run records and the sampling events it takes: every traced connection and
    /// port once per `run.trace_interval_us` over the run, whose length is taken as the time the
    /// busiest host link needs for its data (at least the end time, when one is set, bounds it).
    fn trace_samples(setup: &Setup, data_packets: u64) -> (f64, f64) {
        if setup.trace_interval == Time::ZERO {
            return (0.0, 0.0);
        }
        let series = (setup.trace_conns.len() + setup.trace_ports.len()) as f64;
        let f = &setup.fabric;
        let rate = f.ports.get(f.host_port.first().map_or(0, |p| p.idx())).map_or(1.0, |p| p.rate.0 as f64);
        let mtu = setup.scenario.transport.mtu_bytes as f64;
        let mut load = vec![0u64; f.hosts as usize];
        for (c, bytes) in setup.traffic.conns.iter().zip(Self::per_conn_bytes(setup)) {
            load[c.src.idx()] += bytes;
            load[c.dst.idx()] += bytes;
        }
        let busiest = load.iter().copied().max().unwrap_or(0) as f64;
        let start = (setup.traffic.tasks.iter().map(|t| t.not_before()).max().unwrap_or(Time::ZERO)).0 as f64;
        let mut duration = start + busiest * 8.0 / rate * 1e12 + setup.base_rtt.0 as f64;
        if data_packets > 0 {
            duration = duration.max(mtu * 8.0 / rate * 1e12);
        }
        if let Some(end) = setup.end_time {
            duration = duration.min(end.0 as f64);
        }
        let ticks = (duration / setup.trace_interval.0 as f64).ceil();
        (ticks * series, ticks)
    }

    /// Payload bytes each connection carries.
    fn per_conn_bytes(setup: &Setup) -> Vec<u64> {
        let t = &setup.traffic;
        let mut bytes = vec![0u64; t.conns.len()];
        for m in t.messages() {
            bytes[m.conn as usize] = bytes[m.conn as usize].saturating_add(m.bytes.0);
        }
        bytes
    }

    /// One line for `check`: packets, events, memory, wall time (and the timeline's events).
    pub fn describe(&self) -> String {
        let timeline = self.timeline_events.map_or(String::new(), |e| format!(", timeline.json ~{e:.2e} events (~{})", show_bytes(e * BYTES_PER_TIMELINE_EVENT / 2.0)));
        format!(
            "{} data packets, ~{:.2e} events, peak memory ~{}, wall time ~{}–{}{timeline}",
            self.data_packets,
            self.events,
            show_bytes(self.peak_memory_bytes),
            show_secs(self.wall_s.0),
            show_secs(self.wall_s.1)
        )
    }

    /// A warning when `timeline.json` will be too large to open comfortably, naming what makes
    /// it large and how to make it smaller.
    pub fn timeline_warning(&self) -> Option<String> {
        self.timeline_events.filter(|&e| e > TIMELINE_WARN_EVENTS).map(|e| {
            format!(
                "warning: run.timeline: timeline.json will hold ~{e:.2e} events (~{}), more than Perfetto's UI loads comfortably ({TIMELINE_WARN_EVENTS:.0e}); \
                 flows, logged messages (run.message_log) and traced-port samples (run.trace_ports, run.trace_interval_us) make it: log or trace less, or shorten the run",
                show_bytes(e * BYTES_PER_TIMELINE_EVENT / 2.0)
            )
        })
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
    fn each_partition_past_the_first_adds_a_copy_of_the_run_state() {
        // 2 iterations of an AllReduce on 16 ranks: its tasks and connections.
        let e = estimate("[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 16\niterations = 2\ncollectives = [{ op = \"allreduce\", bytes = \"1MiB\" }]\n");
        assert!(e.bytes_per_partition > 16.0 * crate::budget::BYTES_PER_CONN_RUN, "{e:?}");
        assert_eq!(e.peak_memory_on(1), e.peak_memory_bytes);
        assert_eq!(e.peak_memory_on(0), e.peak_memory_bytes);
        assert_eq!(e.peak_memory_on(4), e.peak_memory_bytes + 3.0 * e.bytes_per_partition);
    }

    #[test]
    fn int_records_are_counted_only_when_a_scheme_reads_them() {
        let e = |cc: &str| estimate(&format!("[transport]\ncc = \"{cc}\"\n"));
        let (hpcc, dcqcn) = (e("hpcc"), e("dcqcn"));
        let lane = std::mem::size_of::<crate::net::telemetry::IntStack>() as f64;
        assert!(lane >= 160.0, "{lane}");
        // The same workload, so the same packets in flight: the difference is the lane.
        let in_flight = (hpcc.peak_memory_bytes - dcqcn.peak_memory_bytes) / lane;
        assert!(in_flight > 1000.0, "{} vs {}", hpcc.peak_memory_bytes, dcqcn.peak_memory_bytes);
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
    fn collectives_route_tables_and_traces_are_counted() {
        // Measured: 120.6 MB peak RSS (917,504 one-packet messages); 17.8 MB; 13.2 MB (the
        // trace streamed to its file: 792,320 samples, 132 MB while they were kept).
        let chunks = estimate("[topology]\nk = 8\n[workload]\nkind = \"collectives\"\nchunk = 1\n[[workload.jobs]]\nranks = 8\ncollectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]\n");
        assert!((0.5..=2.0).contains(&(chunks.peak_memory_bytes / 120.6e6)), "{chunks:?}");
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/collectives.toml")).unwrap();
        let coll = estimate(&text);
        assert!((0.5..=2.0).contains(&(coll.peak_memory_bytes / 17.8e6)), "{coll:?}");
        let traced = estimate("[topology]\nk = 8\n[workload]\nkind = \"permutation\"\nflow_bytes = \"2MiB\"\n[run]\ntrace_interval_us = 0.01\ntrace_ports = [\"tor_up\"]\n");
        assert!((0.5..=2.0).contains(&(traced.peak_memory_bytes / 13.2e6)), "{traced:?}");
        // Its samples cost write time: more than the untraced run's whole estimate.
        let plain = estimate("[topology]\nk = 8\n[workload]\nkind = \"permutation\"\nflow_bytes = \"2MiB\"\n");
        assert!(traced.wall_s.0 > 2.0 * plain.wall_s.0 && traced.wall_s.1 > 2.0 * plain.wall_s.1, "{traced:?} {plain:?}");
    }

    #[test]
    fn a_huge_scenario_is_estimated_without_overflow() {
        let e = estimate("[topology]\nk = 16\n[workload]\nkind = \"permutation\"\nflow_bytes = \"10000GB\"\n");
        // Long flows cost time, not memory: the windows bound what is in flight.
        assert!(e.peak_memory_bytes < 1e9 && e.events > 1e13 && e.wall_s.1 > 3600.0, "{e:?}");
        assert!(e.describe().contains(" h"), "{}", e.describe());
    }
}
