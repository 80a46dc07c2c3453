//! Results of a run: one row per connection (`flows.csv`; a flow workload has one connection
//! per flow), one row per collective instance (`ccts.csv`, collective workloads only), a summary
//! (`summary.json`), and the end-of-run invariant checks.

mod invariants;

use crate::engine::{Counters, Sim};
use crate::error::{Error, Result};
use crate::scenario::Setup;
use crate::units::{Time, US};
use crate::workload::graph::{Instance, TaskKind};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Outcome of one flow (one connection, which may carry several messages).
#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    /// Index in the workload (the connection id).
    pub id: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes (of every message the workload puts on the connection).
    pub bytes: u64,
    /// Start time (ps): first message posted (or due, if none was).
    pub start: Time,
    /// Time the sender saw the last byte acknowledged (ps), if every message finished.
    pub finish: Option<Time>,
    /// Completion time on an idle fabric (ps): all wire bytes at the host rate plus the path's
    /// remaining latency for the last packet and its ACK.
    pub ideal_fct: Time,
    /// Data packets retransmitted.
    pub retransmits: u32,
    /// Data packets trimmed in the fabric.
    pub trims: u32,
    /// Packets (data or ACK) dropped in the fabric.
    pub drops: u32,
    /// ACKs that echoed ECN.
    pub ecn_acks: u32,
    /// Retransmission timeouts.
    pub timeouts: u32,
}

impl FlowResult {
    /// Flow completion time (ps).
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }

    /// FCT divided by the ideal FCT.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f as f64 / self.ideal_fct as f64)
    }
}

/// Outcome of one collective instance (a row of `ccts.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct CctResult {
    /// What ran: job, iteration, operation, algorithm, ranks, bytes.
    #[serde(flatten)]
    pub instance: Instance,
    /// When it started (ps), if it did.
    pub start: Option<Time>,
    /// When its last message completed (ps), if it did.
    pub end: Option<Time>,
    /// Ideal completion time (ps): bus bytes per rank (with headers) at the host rate plus the
    /// algorithm's latency term (see `workload::collective`).
    pub ideal: Time,
}

impl CctResult {
    /// Collective completion time (ps).
    pub fn cct(&self) -> Option<Time> {
        Some(self.end? - self.start?)
    }
    /// CCT divided by the ideal.
    pub fn normalized(&self) -> Option<f64> {
        self.cct().map(|c| c as f64 / self.ideal.max(1) as f64)
    }
}

/// One message (a row of `messages.csv`, written when `run.message_log` is set).
#[derive(Clone, Debug, Serialize)]
pub struct MessageRow {
    /// Message id (order of creation in the workload).
    pub id: u32,
    /// Connection.
    pub conn: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// When its dependencies were met and its gate let it through (ps).
    pub posted: Option<Time>,
    /// When its last byte was delivered in order at the receiver (ps).
    pub delivered: Option<Time>,
    /// When the sender saw it fully acknowledged (ps).
    pub completed: Option<Time>,
}

/// Collective figures of `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveSummary {
    /// Jobs.
    pub jobs: u32,
    /// Collective instances (jobs × iterations × sequence length).
    pub instances: u32,
    /// Instances that finished.
    pub finished: u32,
    /// CCT distribution (µs).
    pub cct_us: Stats,
    /// Normalized CCT (CCT / ideal) distribution.
    pub normalized_cct: Stats,
}

/// Distribution figures of a sample.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Smallest value.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// Figures of `v` (sorted in place); zeros for an empty sample.
    pub fn of(v: &mut [f64]) -> Stats {
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = |q: f64| v[(((q * v.len() as f64).ceil() as usize).max(1) - 1).min(v.len() - 1)];
        Stats { min: v[0], mean: v.iter().sum::<f64>() / v.len() as f64, p50: rank(0.5), p99: rank(0.99), max: v[v.len() - 1] }
    }
}

/// Packet counters as reported.
#[derive(Clone, Debug, Serialize)]
pub struct PacketCounts {
    /// Data packets sent (including retransmissions).
    pub data_sent: u64,
    /// Retransmissions.
    pub retransmitted: u64,
    /// Data packets dropped.
    pub dropped: u64,
    /// Data packets trimmed.
    pub trimmed: u64,
    /// Data packets ECN-marked.
    pub ecn_marked: u64,
    /// ACKs sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Control packets (ACK/NACK/header) dropped.
    pub control_dropped: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Packet transmissions on links (all kinds, all hops).
    pub packet_hops: u64,
    /// Data packets dropped for lack of buffer (tail drop or PFC headroom overflow).
    pub buffer_drops: u64,
    /// Congestion notification packets sent (DCQCN).
    pub cnps: u64,
    /// Sequence NACKs sent (RoCE go-back-N / selective NACK).
    pub seq_nacks: u64,
    /// Out-of-order data packets discarded by go-back-N receivers.
    pub discarded_out_of_order: u64,
    /// Loss probes sent (STrack).
    pub probes: u64,
    /// Recoveries started by the out-of-order count (STrack).
    pub ooo_recoveries: u64,
    /// Recoveries started by a probe answer (STrack).
    pub probe_recoveries: u64,
}

impl From<&Counters> for PacketCounts {
    fn from(c: &Counters) -> Self {
        PacketCounts {
            data_sent: c.data_sent,
            retransmitted: c.data_retransmitted,
            dropped: c.data_dropped,
            trimmed: c.data_trimmed,
            ecn_marked: c.ecn_marked,
            acks: c.acks_sent,
            nacks: c.nacks_sent,
            control_dropped: c.control_dropped + c.headers_dropped,
            timeouts: c.timeouts,
            packet_hops: c.packet_hops,
            buffer_drops: c.buffer_drops,
            cnps: c.cnps_sent,
            seq_nacks: c.seq_nacks_sent,
            discarded_out_of_order: 0,
            probes: c.probes_sent,
            ooo_recoveries: c.ooo_recoveries,
            probe_recoveries: c.probe_recoveries,
        }
    }
}

/// Run performance (the only fields that differ between identical runs).
#[derive(Clone, Debug, Serialize)]
pub struct Performance {
    /// Wall-clock seconds of the simulation loop.
    pub wall_seconds: f64,
    /// Events per wall second.
    pub events_per_second: f64,
    /// Packet-hops per wall second.
    pub packet_hops_per_second: f64,
    /// Peak resident memory of the process (bytes), where the OS reports it.
    pub peak_rss_bytes: Option<u64>,
}

/// `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub name: String,
    /// Master seed.
    pub seed: u64,
    /// The fabric.
    pub fabric: String,
    /// Hosts.
    pub hosts: u32,
    /// Switches.
    pub switches: u32,
    /// Cables failed at build time (`[topology.failures]`), e.g. `"tor3-spine7"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_links: Vec<String>,
    /// Base RTT of the longest path (µs).
    pub base_rtt_us: f64,
    /// BDP of the longest path (bytes).
    pub bdp_bytes: u64,
    /// Flows in the workload.
    pub flows: u32,
    /// Flows that finished.
    pub flows_finished: u32,
    /// Whether the run stopped at `run.end_time_us` with flows unfinished.
    pub stopped_at_end_time: bool,
    /// When the livelock guard (`run.stall_limit_us`) stopped the run: the last time payload
    /// was acknowledged, in µs.
    pub stalled_since_us: Option<f64>,
    /// From the first flow start to the last flow finish (µs).
    pub completion_time_us: f64,
    /// Lower bound of that: the latest per-flow ideal finish, or the busiest host link's bytes at
    /// line rate plus the longest base RTT, whichever is later (µs).
    pub ideal_completion_time_us: f64,
    /// FCT distribution (µs).
    pub fct_us: Stats,
    /// Slowdown (FCT / ideal FCT) distribution.
    pub slowdown: Stats,
    /// Collective completion times (collective workloads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collectives: Option<CollectiveSummary>,
    /// Packet counters.
    pub packets: PacketCounts,
    /// Events processed.
    pub events: u64,
    /// Most packets alive at once.
    pub peak_packets_in_pool: usize,
    /// Round-trip time of ACKed data packets (µs; percentiles at 0.13 µs resolution).
    pub ack_rtt_us: Stats,
    /// Data packets that reached their receiver more than once (spurious retransmissions).
    pub duplicate_data_packets: u64,
    /// Deepest data queue seen at any switch port (bytes) and the buffer limit.
    pub max_queue_bytes: u64,
    /// Data buffer per switch port (bytes): that of `[switch]`, the default profile.
    pub buffer_bytes: u64,
    /// Every queue profile and the ports using it, when `[switch.ports.*]` or
    /// `[[switch.by_link_rate]]` made more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_profiles: Option<Vec<QueueProfile>>,
    /// Priority flow control figures (PFC runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
    /// Invariant violations (empty when the run is sound).
    pub invariant_violations: Vec<String>,
    /// Wall-clock figures.
    pub performance: Performance,
    /// The resolved scenario: rerunning it reproduces this run.
    pub scenario: serde_json::Value,
}

/// One resolved queue profile (`summary.json` `queue_profiles`).
#[derive(Clone, Debug, Serialize)]
pub struct QueueProfile {
    /// The ports using it, as `class@rate` (`"tor_down@400G, tor_up@400G"`); empty for the
    /// `[switch]` profile when no switch port keeps it.
    pub ports: String,
    /// How many switch ports use it.
    pub port_count: u32,
    /// Data buffer (bytes).
    pub buffer_bytes: u64,
    /// ECN marking on.
    pub ecn: bool,
    /// Kmin (bytes).
    pub kmin_bytes: u64,
    /// Kmax (bytes).
    pub kmax_bytes: u64,
    /// Marking probability at Kmax.
    pub pmax: f64,
    /// `"enqueue"` or `"dequeue"`.
    pub mark_at: &'static str,
    /// Trimming on.
    pub trimming: bool,
}

impl QueueProfile {
    /// Profile `i` of `t`.
    pub fn of(t: &crate::net::qdisc::QdiscTable, i: usize) -> Self {
        let q = &t.profiles[i];
        QueueProfile {
            ports: t.labels[i].clone(),
            port_count: t.switch_ports[i],
            buffer_bytes: q.buffer_bytes,
            ecn: q.ecn,
            kmin_bytes: q.kmin_bytes,
            kmax_bytes: q.kmax_bytes,
            pmax: q.pmax,
            mark_at: match q.mark_at {
                crate::net::qdisc::MarkAt::Enqueue => "enqueue",
                crate::net::qdisc::MarkAt::Dequeue => "dequeue",
            },
            trimming: q.trimming,
        }
    }
}

/// PFC figures of a run.
#[derive(Clone, Debug, Serialize)]
pub struct PfcSummary {
    /// PAUSE frames sent by switches.
    pub pause_frames: u64,
    /// Ports that were ever paused.
    pub ports_paused: u32,
    /// Paused time summed over ports (µs).
    pub paused_time_us: f64,
    /// Longest total paused time of one port (µs) and that port.
    pub max_port_paused_us: f64,
    /// The port paused longest, as `"NODE-NODE"`.
    pub max_paused_port: String,
    /// Most bytes any switch buffered at once.
    pub max_switch_buffer_bytes: u64,
    /// Data packets dropped because headroom overflowed (must be 0: lossless).
    pub headroom_overflow_drops: u64,
    /// Every port that was paused: (`"NODE-NODE"`, PAUSE frames received, paused µs); written
    /// as `pfc_ports.csv`.
    #[serde(skip)]
    pub ports: Vec<(String, u32, f64)>,
}

/// One logged event (`events.csv`).
#[derive(Clone, Debug)]
pub struct EventRow {
    /// When.
    pub at: Time,
    /// `drop` or `pause`.
    pub kind: &'static str,
    /// Port as `"NODE-NODE"`: for a drop the link the packet last crossed, for a pause the
    /// link whose sender is paused.
    pub link: String,
    /// Connection of a dropped packet.
    pub conn: Option<u32>,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Results {
    /// Per-flow (per-connection) rows.
    pub flows: Vec<FlowResult>,
    /// Per-collective-instance rows (empty for flow workloads).
    pub ccts: Vec<CctResult>,
    /// Per-message rows (empty unless `run.message_log`).
    pub messages: Vec<MessageRow>,
    /// Sampled connection state (empty unless `run.trace_interval_us`).
    pub trace: Vec<crate::engine::trace::ConnSample>,
    /// Sampled port state (empty unless `run.trace_ports`).
    pub port_trace: Vec<crate::engine::trace::PortSample>,
    /// Logged drops and pauses (empty unless `run.event_log`).
    pub events: Vec<EventRow>,
    /// Logged ACKs (`run.ack_log_conns`): (time, connection, RTT, ECN echo).
    pub acks: Vec<(Time, u32, Time, bool)>,
    /// Names (`"NODE-NODE"`) of the traced ports.
    pub port_names: std::collections::BTreeMap<u32, String>,
    /// Summary.
    pub summary: Summary,
}

fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

/// Peak resident set size of this process (Linux `VmHWM`), if available.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Gathers results after [`Sim::run`].
pub fn collect(sim: &Sim, setup: &Setup, wall_seconds: f64) -> Results {
    let tp = sim.tp;
    let traffic = &sim.traffic;
    // What the workload puts on each connection: bytes, packets, last packet's payload, the
    // earliest due time of its messages.
    let mut plan = vec![(0u64, 0u64, 0u64, Time::MAX); traffic.conns.len()];
    for &t in &traffic.sends {
        let task = &traffic.tasks[t as usize];
        if let TaskKind::Send { conn, bytes } = task.kind {
            let p = &mut plan[conn as usize];
            let pkts = bytes.div_ceil(tp.mss as u64).max(1);
            *p = (p.0 + bytes, p.1 + pkts, bytes - (pkts - 1) * tp.mss as u64, p.3.min(task.not_before));
        }
    }
    let mut flows = Vec::with_capacity(sim.conns.len());
    for (i, c) in sim.conns.iter().enumerate() {
        let (bytes, pkts, tail, due) = plan[i];
        let host_rate = sim.ports[sim.fabric.host_port[c.src as usize] as usize].rate;
        let last = tail + tp.header as u64;
        let wire = (pkts - 1) * (tp.mss + tp.header) as u64 + last;
        // The path RTT counts one host-link serialization of a full packet; swap it for the
        // whole flow's serialization, and count the last packet's size on the other hops.
        let rtt_full = sim.path_rtt[i];
        let hops = crate::engine::hop_count(&sim.fabric, c.src, c.dst) as u64;
        let mtu = (tp.mss + tp.header) as u64;
        let ideal = host_rate.tx_time(wire) + rtt_full - hops * host_rate.tx_time(mtu) + (hops - 1) * host_rate.tx_time(last);
        let finished = c.idle() && c.size == bytes;
        flows.push(FlowResult {
            id: i as u32,
            src: c.src,
            dst: c.dst,
            bytes,
            start: if c.started { c.start } else { due },
            finish: if finished { c.finish } else { None },
            ideal_fct: ideal,
            retransmits: c.retransmits,
            trims: c.trims,
            drops: c.drops,
            ecn_acks: c.ecn_acks,
            timeouts: c.timeouts,
        });
    }
    let ccts = collect_ccts(sim, setup);
    let mut fct: Vec<f64> = flows.iter().filter_map(|f| f.fct()).map(us).collect();
    let mut slow: Vec<f64> = flows.iter().filter_map(|f| f.slowdown()).collect();
    let first_start = flows.iter().map(|f| f.start).min().unwrap_or(0);
    let last_finish = flows.iter().filter_map(|f| f.finish).max().unwrap_or(first_start);
    let flow_bound = flows.iter().map(|f| plan[f.id as usize].3 + f.ideal_fct).max().unwrap_or(0);
    let mut host_load = vec![(0u64, 0u64); sim.fabric.hosts as usize];
    for (c, &(bytes, pkts, _, _)) in sim.conns.iter().zip(&plan) {
        let wire = bytes + pkts * tp.header as u64;
        host_load[c.src as usize].0 += wire;
        host_load[c.dst as usize].1 += wire;
    }
    let busiest = host_load.iter().map(|&(o, i)| o.max(i)).max().unwrap_or(0);
    let host_rate = sim.ports[sim.fabric.host_port[0] as usize].rate;
    let cut = cut_bound(sim, &plan);
    let link_bound = first_start + host_rate.tx_time(busiest).max(cut) + setup.base_rtt;
    let ideal_completion = flow_bound.max(link_bound) - first_start;
    let max_queue = sim.ports.iter().map(|p| p.max_data_bytes).max().unwrap_or(0);
    let violations = invariants::check(sim, setup);
    let hops = sim.c.packet_hops;
    let summary = Summary {
        name: setup.scenario.name.clone(),
        seed: setup.scenario.seed,
        fabric: sim.fabric.description.clone(),
        hosts: sim.fabric.hosts,
        switches: sim.fabric.switches(),
        failed_links: sim.fabric.failures.iter().map(|l| sim.fabric.link_name(l.up)).collect(),
        base_rtt_us: us(setup.base_rtt),
        bdp_bytes: setup.bdp_bytes,
        flows: flows.len() as u32,
        flows_finished: flows.iter().filter(|f| f.finish.is_some()).count() as u32,
        stopped_at_end_time: sim.stopped_early,
        stalled_since_us: sim.stalled.map(|(since, _)| us(since)),
        completion_time_us: us(last_finish - first_start),
        ideal_completion_time_us: us(ideal_completion),
        fct_us: Stats::of(&mut fct),
        slowdown: Stats::of(&mut slow),
        collectives: (!ccts.is_empty()).then(|| {
            let mut cct: Vec<f64> = ccts.iter().filter_map(CctResult::cct).map(us).collect();
            let mut norm: Vec<f64> = ccts.iter().filter_map(CctResult::normalized).collect();
            CollectiveSummary {
                jobs: ccts.iter().map(|c| c.instance.job + 1).max().unwrap_or(0),
                instances: ccts.len() as u32,
                finished: cct.len() as u32,
                cct_us: Stats::of(&mut cct),
                normalized_cct: Stats::of(&mut norm),
            }
        }),
        packets: PacketCounts::from(&sim.c),
        events: sim.c.events,
        peak_packets_in_pool: sim.pool.high_water(),
        ack_rtt_us: rtt_stats(&sim.rtt_hist),
        duplicate_data_packets: sim.conns.iter().map(|c| c.rcv_duplicates as u64).sum(),
        max_queue_bytes: max_queue,
        pfc: sim.pfc.on.then(|| pfc_summary(sim)),
        buffer_bytes: setup.qdisc.profiles[0].buffer_bytes,
        queue_profiles: (setup.qdisc.profiles.len() > 1).then(|| (0..setup.qdisc.profiles.len()).map(|i| QueueProfile::of(&setup.qdisc, i)).collect()),
        invariant_violations: violations,
        performance: Performance {
            wall_seconds,
            events_per_second: sim.c.events as f64 / wall_seconds.max(1e-9),
            packet_hops_per_second: hops as f64 / wall_seconds.max(1e-9),
            peak_rss_bytes: peak_rss_bytes(),
        },
        scenario: serde_json::to_value(&setup.scenario).unwrap_or(serde_json::Value::Null),
    };
    let known = |t: Time| (t != Time::MAX).then_some(t);
    let messages = if setup.scenario.run.message_log {
        traffic
            .sends
            .iter()
            .enumerate()
            .map(|(id, &t)| {
                let TaskKind::Send { conn, bytes } = traffic.tasks[t as usize].kind else { unreachable!("sends are messages") };
                let c = traffic.conns[conn as usize];
                let ts = &sim.tasks;
                MessageRow {
                    id: id as u32,
                    conn,
                    src: c.src,
                    dst: c.dst,
                    bytes,
                    posted: known(ts.fired_at[t as usize]),
                    delivered: known(ts.delivered_at[t as usize]),
                    completed: known(ts.completed_at[t as usize]),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut events: Vec<EventRow> = sim
        .tracer
        .drops
        .iter()
        .map(|&(at, port, conn)| EventRow { at, kind: "drop", link: sim.fabric.link_name(port), conn: Some(conn) })
        .chain(sim.pfc.log.iter().map(|&(at, port, _)| EventRow { at, kind: "pause", link: sim.fabric.link_name(port), conn: None }))
        .collect();
    events.sort_by_key(|e| e.at);
    let mut summary = summary;
    summary.packets.discarded_out_of_order = sim.conns.iter().map(|c| c.rcv_discarded as u64).sum();
    let port_names = sim.tracer.ports.iter().map(|&p| (p, sim.fabric.link_name(p))).collect();
    Results { flows, ccts, messages, trace: sim.tracer.samples.clone(), port_trace: sim.tracer.port_samples.clone(), events, acks: sim.tracer.acks.clone(), port_names, summary }
}

fn pfc_summary(sim: &Sim) -> PfcSummary {
    // A port still paused at the end counts its open pause up to the final time.
    let paused = |p: &crate::net::port::PortState| p.paused_total + if p.paused { sim.now - p.paused_since } else { 0 };
    let (max_port, max_t) = sim.ports.iter().enumerate().map(|(i, p)| (i, paused(p))).max_by_key(|&(i, t)| (t, std::cmp::Reverse(i))).unwrap_or((0, 0));
    PfcSummary {
        pause_frames: sim.pfc.ingress.iter().map(|i| i.pauses_sent as u64).sum(),
        ports_paused: sim.ports.iter().filter(|p| p.pauses_received > 0).count() as u32,
        paused_time_us: us(sim.ports.iter().map(paused).sum()),
        max_port_paused_us: us(max_t),
        max_paused_port: if max_t > 0 { sim.fabric.link_name(max_port as u32) } else { String::new() },
        max_switch_buffer_bytes: sim.pfc.switches.iter().map(|b| b.max_used).max().unwrap_or(0),
        headroom_overflow_drops: sim.pfc.overflow_drops,
        ports: sim
            .ports
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pauses_received > 0)
            .map(|(i, p)| (sim.fabric.link_name(i as u32), p.pauses_received, us(paused(p))))
            .collect(),
    }
}

/// Time to push the traffic that must leave (or enter) each ToR and each pod through its
/// uplinks at their full rate, for the busiest one: oversubscribed fabrics are bound by this
/// rather than by host links.
fn cut_bound(sim: &Sim, plan: &[(u64, u64, u64, Time)]) -> Time {
    use crate::topo::Tier;
    let f = &sim.fabric;
    let pods = f.pod_of_host();
    let tp = sim.tp;
    let n = f.tier.len();
    // Uplink capacity (bits/s) of every ToR and of every pod (its aggregation switches' core
    // links); traffic out of / into every ToR and pod.
    let mut tor_cap = vec![0u64; n];
    let mut pod_cap = vec![0u64; pods.iter().max().map_or(0, |&p| p as usize + 1)];
    let mut pod_of_agg = vec![u32::MAX; n];
    for h in 0..f.hosts as usize {
        for &p in f.ports_of(f.tor_of_host[h]) {
            let peer = f.ports[p as usize].peer as usize;
            if f.tier[peer] == Tier::Agg {
                pod_of_agg[peer] = pods[h];
            }
        }
    }
    let removed = f.removed_ports();
    for (i, p) in f.ports.iter().enumerate() {
        let (o, q) = (p.owner as usize, p.peer as usize);
        let rate = if removed[i] { 0 } else { sim.ports[i].rate.0 };
        match (f.tier[o], f.tier[q]) {
            (Tier::Tor, Tier::Agg) => tor_cap[o] += rate,
            (Tier::Agg, Tier::Core) if pod_of_agg[o] != u32::MAX => pod_cap[pod_of_agg[o] as usize] += rate,
            _ => {}
        }
    }
    let mut tor_load = vec![(0u64, 0u64); n];
    let mut pod_load = vec![(0u64, 0u64); pod_cap.len()];
    for (c, &(bytes, pkts, _, _)) in sim.conns.iter().zip(plan) {
        let wire = bytes + pkts * tp.header as u64;
        let (ts, td) = (f.tor_of_host[c.src as usize] as usize, f.tor_of_host[c.dst as usize] as usize);
        if ts != td {
            tor_load[ts].0 += wire;
            tor_load[td].1 += wire;
        }
        let (ps, pd) = (pods[c.src as usize] as usize, pods[c.dst as usize] as usize);
        if ps != pd {
            pod_load[ps].0 += wire;
            pod_load[pd].1 += wire;
        }
    }
    let time = |bytes: u64, bps: u64| if bps == 0 { 0 } else { crate::units::BitsPerSec(bps).tx_time(bytes) };
    let tors = tor_load.iter().zip(&tor_cap).map(|(&(o, i), &c)| time(o.max(i), c));
    let pods = pod_load.iter().zip(&pod_cap).map(|(&(o, i), &c)| time(o.max(i), c));
    tors.chain(pods).max().unwrap_or(0)
}

/// Figures of the ACK RTT histogram.
fn rtt_stats(h: &crate::engine::trace::RttHistogram) -> Stats {
    let q = |x: f64| h.quantile(x).map(us).unwrap_or(0.0);
    let n = h.count();
    if n == 0 {
        return Stats::default();
    }
    let bin = 1u64 << crate::engine::trace::RTT_BIN_BITS;
    let mean = h.bins.iter().enumerate().map(|(i, &c)| c as f64 * us(i as u64 * bin + bin / 2)).sum::<f64>() / n as f64;
    Stats { min: q(0.0), mean, p50: q(0.5), p99: q(0.99), max: q(1.0) }
}

/// One row per collective instance.
fn collect_ccts(sim: &Sim, setup: &Setup) -> Vec<CctResult> {
    let tp = sim.tp;
    let host_rate = sim.ports[sim.fabric.host_port[0] as usize].rate;
    let one_way = setup.base_rtt / 2;
    let known = |t: Time| (t != Time::MAX).then_some(t);
    sim.traffic
        .instances
        .iter()
        .zip(&sim.tasks.instance_span)
        .map(|(inst, &(start, end))| {
            let wire = |b: u64| b + b.div_ceil(tp.mss as u64) * tp.header as u64;
            // A chunk on the dependency chain is at most the data of one step.
            let hop_chunk = inst.chunk.min((inst.bus_bytes / inst.chain_hops.max(1) as u64).max(1));
            let hop = host_rate.tx_time(wire(hop_chunk)) + one_way;
            let bulk = host_rate.tx_time(wire(inst.bus_bytes)) + inst.fill_hops as u64 * hop;
            let ideal = bulk.max(inst.chain_hops as u64 * hop) + inst.rtt_rounds as u64 * 2 * one_way;
            CctResult {
                instance: inst.clone(),
                start: known(start),
                end: known(end),
                ideal,
            }
        })
        .collect()
}

/// Appends each time (µs, empty when unknown) followed by a comma.
fn push_times(out: &mut String, times: &[Option<Time>]) {
    for &t in times {
        fmt_us(out, t);
        out.push(',');
    }
}

fn fmt_us(out: &mut String, t: Option<Time>) {
    if let Some(t) = t {
        let _ = write!(out, "{}.{:06}", t / US, t % US);
    }
}

impl Results {
    /// `flows.csv` text: times in µs with picosecond precision.
    pub fn flows_csv(&self) -> String {
        let mut s = String::from("flow,src,dst,bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,retransmits,trims,drops,ecn_acks,timeouts\n");
        for f in &self.flows {
            let _ = write!(s, "{},{},{},{},", f.id, f.src, f.dst, f.bytes);
            push_times(&mut s, &[Some(f.start), f.finish, f.fct(), Some(f.ideal_fct)]);
            if let Some(x) = f.slowdown() {
                let _ = write!(s, "{x:.6}");
            }
            let _ = writeln!(s, ",{},{},{},{},{}", f.retransmits, f.trims, f.drops, f.ecn_acks, f.timeouts);
        }
        s
    }

    /// `ccts.csv` text: one row per collective instance.
    pub fn ccts_csv(&self) -> String {
        let mut s = String::from("job,iteration,step,op,algorithm,ranks,bytes,start_us,end_us,cct_us,ideal_cct_us,normalized_cct\n");
        for c in &self.ccts {
            let i = &c.instance;
            let _ = write!(s, "{},{},{},{},{},{},{},", i.job, i.iteration, i.step, i.op, i.algorithm, i.ranks, i.bytes);
            push_times(&mut s, &[c.start, c.end, c.cct(), Some(c.ideal)]);
            if let Some(x) = c.normalized() {
                let _ = write!(s, "{x:.6}");
            }
            s.push('\n');
        }
        s
    }

    /// `messages.csv` text: one row per message.
    pub fn messages_csv(&self) -> String {
        let mut s = String::from("message,conn,src,dst,bytes,posted_us,delivered_us,completed_us\n");
        for m in &self.messages {
            let _ = write!(s, "{},{},{},{},{},", m.id, m.conn, m.src, m.dst, m.bytes);
            push_times(&mut s, &[m.posted, m.delivered]);
            fmt_us(&mut s, m.completed);
            s.push('\n');
        }
        s
    }

    /// `trace.csv` text: one row per sample of a traced connection.
    pub fn trace_csv(&self) -> String {
        let mut s = String::from("time_us,flow,cwnd_bytes,in_flight_bytes,pacing_gbps,acked_bytes\n");
        for t in &self.trace {
            fmt_us(&mut s, Some(t.at));
            let _ = write!(s, ",{},", t.conn);
            if let Some(w) = t.window {
                let _ = write!(s, "{w}");
            }
            let _ = write!(s, ",{},", t.in_flight);
            if let Some(r) = t.rate_bps {
                let _ = write!(s, "{:.3}", r as f64 / 1e9);
            }
            let _ = writeln!(s, ",{}", t.acked_bytes);
        }
        s
    }

    /// `port_trace.csv` text: one row per sample of a traced port.
    pub fn port_trace_csv(&self) -> String {
        let mut s = String::from("time_us,port,link,queue_bytes,tx_bytes,paused\n");
        for t in &self.port_trace {
            fmt_us(&mut s, Some(t.at));
            let link = self.port_names.get(&t.port).map_or("", String::as_str);
            let _ = writeln!(s, ",{},{link},{},{},{}", t.port, t.data_bytes, t.tx_bytes, t.paused as u8);
        }
        s
    }

    /// `acks.csv` text: every ACK of the logged flows.
    pub fn acks_csv(&self) -> String {
        let mut s = String::from("time_us,flow,rtt_us,ecn\n");
        for &(at, c, rtt, ecn) in &self.acks {
            fmt_us(&mut s, Some(at));
            let _ = write!(s, ",{c},");
            fmt_us(&mut s, Some(rtt));
            let _ = writeln!(s, ",{}", ecn as u8);
        }
        s
    }

    /// `events.csv` text: drops and PFC pauses in time order.
    pub fn events_csv(&self) -> String {
        let mut s = String::from("time_us,event,link,flow\n");
        for e in &self.events {
            fmt_us(&mut s, Some(e.at));
            let _ = write!(s, ",{},{},", e.kind, e.link);
            if let Some(c) = e.conn {
                let _ = write!(s, "{c}");
            }
            s.push('\n');
        }
        s
    }

    /// `summary.json` text.
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).unwrap_or_default() + "\n"
    }

    /// Writes `flows.csv`, `ccts.csv` (collective workloads) and `summary.json` into `dir`
    /// (created if needed).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let io = |e: std::io::Error, p: &Path| Error::Io { path: p.display().to_string(), message: e.to_string() };
        std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
        let f = dir.join("flows.csv");
        std::fs::write(&f, self.flows_csv()).map_err(|e| io(e, &f))?;
        if !self.ccts.is_empty() {
            let c = dir.join("ccts.csv");
            std::fs::write(&c, self.ccts_csv()).map_err(|e| io(e, &c))?;
        }
        if !self.trace.is_empty() {
            let t = dir.join("trace.csv");
            std::fs::write(&t, self.trace_csv()).map_err(|e| io(e, &t))?;
        }
        if !self.port_trace.is_empty() {
            let t = dir.join("port_trace.csv");
            std::fs::write(&t, self.port_trace_csv()).map_err(|e| io(e, &t))?;
        }
        if let Some(pfc) = self.summary.pfc.as_ref().filter(|p| !p.ports.is_empty()) {
            let mut s = String::from("link,pauses,paused_us\n");
            for (link, n, t) in &pfc.ports {
                let _ = writeln!(s, "{link},{n},{t:.6}");
            }
            let t = dir.join("pfc_ports.csv");
            std::fs::write(&t, s).map_err(|e| io(e, &t))?;
        }
        if !self.acks.is_empty() {
            let t = dir.join("acks.csv");
            std::fs::write(&t, self.acks_csv()).map_err(|e| io(e, &t))?;
        }
        if !self.events.is_empty() {
            let t = dir.join("events.csv");
            std::fs::write(&t, self.events_csv()).map_err(|e| io(e, &t))?;
        }
        if !self.messages.is_empty() {
            let m = dir.join("messages.csv");
            std::fs::write(&m, self.messages_csv()).map_err(|e| io(e, &m))?;
        }
        let s = dir.join("summary.json");
        std::fs::write(&s, self.summary_json()).map_err(|e| io(e, &s))?;
        Ok(())
    }
}
