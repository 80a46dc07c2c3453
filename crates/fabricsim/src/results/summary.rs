//! `summary.json`: the [`Summary`] of a run (fabric, flow and collective figures, packet
//! counters, queue profiles, PFC figures, invariant violations, wall-clock performance) and
//! its assembly.

use crate::units::{Bytes, Time};
use super::by_size::{self, SizeBucket, WindowFigures};
use super::collectives::{self, CctResult, CollectiveSummary};
use super::flows::{ConnPlan, FlowResult};
use super::stats::{rtt_stats, Stats};
use super::{bounds, invariants, us};
use crate::engine::{Counters, Sim};
use crate::ids::PortId;
use crate::net::packet::PktKind;
use crate::scenario::Setup;
use crate::topo::pod_faults::PodBottleneck;
use serde::Serialize;

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
    /// Of those, the ones cut after they were queued, to make room for a control packet in a
    /// lane shared with data (`switch.control_lane = "shared"`); left out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted: u64,
    /// Of those, the ones evicted for a trimmed header (the rest for ACKs, NACKs and other
    /// control packets); left out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted_by_headers: u64,
    /// Data packets that carried a CE mark (each once, however many switches marked it).
    pub ecn_marked: u64,
    /// CE markings made by switch ports (a packet marked at two hops counts twice; the sum of
    /// `port_trace.csv`'s `ecn_marks` over every port).
    pub ecn_mark_events: u64,
    /// ACKs sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Trimmed headers switches returned to their sender (`switch.trimmed_headers`,
    /// return-to-sender); left out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub bounced: u64,
    /// Of those, the ones that reached their sender (the rest were dropped on the way back);
    /// left out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub bounces_returned: u64,
    /// Control packets (ACK/NACK/header) dropped.
    pub control_dropped: u64,
    /// Retransmission timer expiries that declared packets lost (shared RTO or the mode's own).
    pub timeouts: u64,
    /// Data packets declared lost by those expiries.
    pub timeout_lost: u64,
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
    /// Fast retransmits: recoveries started by duplicate ACKs (`tcp` modes); compare with
    /// `timeouts` (lb-ai-training §5.5, "RTOs vs fast retransmits").
    pub fast_retransmits: u64,
    /// Data packets a switch-side selector re-routed, per switch hop: sent to another port than
    /// their flow's hashed or remembered one (`adaptive_packet`: than the ECMP hash;
    /// `adaptive_ecmp`, `flowlet`, `letflow`, `drill`); left out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub reroutes: u64,
    /// Every packet kind of the kind table (`kernel/packet.rs`), in its order: packets hosts sent,
    /// packets that reached their destination host (data: trimmed headers included) and packets
    /// dropped anywhere (likewise).
    pub by_kind: ByKind,
    /// Packets of any kind lost on the wire by flaky or lossy links (`[topology.failures] kind =
    /// "flaky"`, `"loss"`, `"bursty_loss"` only); they are also counted as dropped of their kind,
    /// but never as buffer drops or trims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_losses: Option<u64>,
}

/// Sent / arrived / dropped counts of one packet kind.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct KindCounts {
    /// Put on a link by a host (or made by a switch, for switch-made kinds).
    pub sent: u64,
    /// Reached the host (or switch) it was addressed to.
    pub arrived: u64,
    /// Discarded in the network.
    pub dropped: u64,
}

/// Per-kind counts, serialized as an object keyed by kind name in table order.
#[derive(Clone, Debug)]
pub struct ByKind(pub Vec<(&'static str, KindCounts)>);

impl Serialize for ByKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, counts) in &self.0 {
            m.serialize_entry(name, counts)?;
        }
        m.end()
    }
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl From<&Counters> for PacketCounts {
    fn from(c: &Counters) -> Self {
        use PktKind::*;
        PacketCounts {
            data_sent: c.sent[Data],
            retransmitted: c.data_retransmitted,
            dropped: c.dropped[Data] - c.headers_dropped,
            trimmed: c.data_trimmed,
            evicted: c.data_evicted,
            evicted_by_headers: c.evicted_by_headers,
            ecn_marked: c.ecn_marked,
            ecn_mark_events: c.ecn_mark_events,
            acks: c.sent[Ack],
            nacks: c.sent[Nack],
            bounced: c.headers_bounced,
            bounces_returned: c.bounces_returned,
            // Everything but whole data: control kinds, probes and trimmed headers.
            control_dropped: c.dropped.sum_where(|k| k != Data) + c.headers_dropped,
            timeouts: c.timeouts,
            timeout_lost: c.timeout_lost,
            packet_hops: c.packet_hops,
            buffer_drops: c.buffer_drops,
            cnps: c.sent[Cnp],
            seq_nacks: c.sent[SeqNack],
            discarded_out_of_order: 0,
            probes: c.sent[Probe],
            ooo_recoveries: c.ooo_recoveries,
            probe_recoveries: c.probe_recoveries,
            fast_retransmits: c.fast_retransmits,
            reroutes: c.reroutes,
            by_kind: ByKind(
                PktKind::ALL
                    .iter()
                    .filter(|&&k| !k.switch_made() || c.sent[k] + c.arrived[k] + c.dropped[k] > 0)
                    .map(|&k| (k.name(), KindCounts { sent: c.sent[k], arrived: c.arrived[k], dropped: c.dropped[k] }))
                    .collect(),
            ),
            wire_losses: None,
        }
    }
}

/// Loss figures of a run (lb-ai-training §5.5).
#[derive(Clone, Debug, Serialize)]
pub struct LossFigures {
    /// Data packets lost (dropped whole or trimmed) over data packets sent, over all flows.
    pub data_loss_rate: f64,
    /// Per flow, its lost data packets over its data packets sent.
    pub flow_loss_rate: Stats,
    /// The flow with the highest loss rate (lowest id on ties): the study's "worst-hit flow".
    pub worst_flow: u32,
    /// Retransmitted data packets over data packets sent.
    pub retransmitted_fraction: f64,
    /// Per flow, data packets its receiver got more than once (spurious retransmissions).
    pub spurious_retransmissions_per_flow: Stats,
}

impl LossFigures {
    /// The figures of `flows`, with the run's counters `p`.
    pub fn of(flows: &[FlowResult], p: &PacketCounts) -> LossFigures {
        let mut rates: Vec<f64> = flows.iter().map(FlowResult::loss_rate).collect();
        let worst = flows.iter().fold(None::<&FlowResult>, |w, f| match w {
            Some(w) if w.loss_rate() >= f.loss_rate() => Some(w),
            _ => Some(f),
        });
        let mut dup: Vec<f64> = flows.iter().map(|f| f64::from(f.duplicates)).collect();
        let sent = p.data_sent.max(1) as f64;
        LossFigures {
            data_loss_rate: (p.dropped + p.trimmed) as f64 / sent,
            flow_loss_rate: Stats::of(&mut rates),
            worst_flow: worst.map_or(0, |f| f.id),
            retransmitted_fraction: p.retransmitted as f64 / sent,
            spurious_retransmissions_per_flow: Stats::of(&mut dup),
        }
    }
}

/// The engine that made a run: what a results row needs to say where it comes from.
#[derive(Clone, Debug, Serialize)]
pub struct EngineBuild {
    /// The crate's version.
    pub version: &'static str,
    /// The project commit the engine was built from (`-dirty` with uncommitted changes to
    /// tracked files; `unknown` outside a git checkout): [`crate::ENGINE_COMMIT`].
    pub commit: &'static str,
}

impl EngineBuild {
    /// This build.
    pub const THIS: EngineBuild = EngineBuild { version: env!("CARGO_PKG_VERSION"), commit: crate::ENGINE_COMMIT };
}

/// Run performance (the only fields that differ between identical runs).
#[derive(Clone, Debug, Serialize)]
pub struct Performance {
    /// Wall-clock seconds of the simulation loop (a parallel run: from starting its partitions
    /// to merging them).
    pub wall_seconds: f64,
    /// Events per wall second.
    pub events_per_second: f64,
    /// Packet-hops per wall second.
    pub packet_hops_per_second: f64,
    /// Peak resident memory of the process (bytes), where the OS reports it.
    pub peak_rss_bytes: Option<u64>,
    /// Packet records the engine held at its peak: a figure of the engine's memory, not of the
    /// network (a parallel run holds one pool per partition).
    pub peak_packets_in_pool: usize,
    /// Threads the run was asked to use (`--threads`).
    pub threads: usize,
    /// Partitions that ran in parallel (1: the serial engine).
    pub partitions: usize,
    /// Why a run asked to use several threads ran serially.
    pub serial_reason: Option<String>,
    /// Synchronisation windows of a parallel run (0 when serial).
    pub sync_windows: u64,
    /// CPU seconds the partitions of a parallel run spent in their rounds, summed (null when
    /// serial, or where the OS does not report a thread's CPU time).
    pub partition_cpu_seconds: Option<f64>,
    /// The parallel rounds' critical path in CPU seconds: per round the busiest partition
    /// plus the coordinator's serial share, summed (null as above).
    pub critical_path_seconds: Option<f64>,
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
    /// `[topology.failures] seed`, when given: the seed the failed links were drawn from (else
    /// the master seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_seed: Option<u64>,
    /// `partial_lag` failures: Eq. 2 of the paper, whether the damaged pod uplinks are the
    /// bottleneck of an all-to-all (information, not an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_uplink_bottleneck: Option<PodBottleneck>,
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
    /// was acknowledged (or, if later, messages became outstanding on an idle network), in µs;
    /// the run stopped exactly `stall_limit_us` after it.
    pub stalled_since_us: Option<f64>,
    /// Whether an interrupt (Ctrl-C, SIGTERM, a stop asked by the caller) cut the run short:
    /// the results are partial.
    pub interrupted: bool,
    /// When interrupted: the simulated time the run had reached (µs).
    pub interrupted_at_us: Option<f64>,
    /// From the first flow start to the last flow finish (µs).
    pub completion_time_us: f64,
    /// Lower bound of that: the latest per-flow ideal finish, or the busiest host link's bytes at
    /// line rate plus the longest base RTT, whichever is later (µs).
    pub ideal_completion_time_us: f64,
    /// `[results] window_start_us` / `window_end_us` only: the stationary window and how many
    /// flows started in it (those `fct_us`, `slowdown` and `slowdown_by_size` count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stationary_window: Option<WindowFigures>,
    /// FCT distribution (µs) of the finished flows (that started in the stationary window).
    pub fct_us: Stats,
    /// Slowdown (FCT / ideal FCT) distribution, over the same flows.
    pub slowdown: Stats,
    /// Flow workloads only: FCT / fair-share ideal FCT, over the same flows.
    pub fair_slowdown: Option<Stats>,
    /// `[results] size_buckets` only: slowdown figures per flow-size bucket, over the same
    /// flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_by_size: Option<Vec<SizeBucket>>,
    /// Loss rate, worst-flow loss, retransmitted fraction and spurious retransmissions.
    pub loss: LossFigures,
    /// Per flow, data-packet re-routes by switches divided by the flow's data packets (a packet
    /// re-routed at two hops counts twice, so it may exceed 1): near 1 is the study's "re-routes
    /// on almost every packet" (lb-ai-training §5). Only in runs whose switches count
    /// re-routes (`adaptive_packet`, `adaptive_ecmp`, `flowlet`, `letflow`, `drill`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reroutes_per_packet: Option<Stats>,
    /// Per (ToR, sampling interval), (max − min) / mean of the bytes its uplinks sent
    /// (seqbalance Fig. 7, 13); only when the port trace holds every uplink of some ToR
    /// (`run.trace_ports = ["tor_up"]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink_imbalance: Option<super::imbalance::UplinkImbalance>,
    /// Flowlet sizes per gap θ (`run.flowlet_gaps_us` only; seqbalance Fig. 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flowlets: Option<Vec<super::FlowletSizes>>,
    /// Collective completion times (collective workloads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collectives: Option<CollectiveSummary>,
    /// Training steps only: each iteration's time against its ideals, each group kind's bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training: Option<super::TrainingSummary>,
    /// Packet counters.
    pub packets: PacketCounts,
    /// Events processed.
    pub events: u64,
    /// Round-trip time of ACKed data packets (µs; percentiles at 0.13 µs resolution).
    pub ack_rtt_us: Stats,
    /// Data packets that reached their receiver more than once (spurious retransmissions).
    pub duplicate_data_packets: u64,
    /// Deepest data queue seen at any switch port (bytes) and the buffer limit.
    pub max_queue_bytes: u64,
    /// Data buffer per switch port (bytes): that of `[switch]`, the default profile; `None`
    /// (null) under PFC, where the switch's shared buffer bounds the ports.
    pub buffer_bytes: Option<u64>,
    /// Data-queue occupancy and wire losses per switch port class (pod–core failure kinds, or
    /// `run.tier_queue_stats = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queues_by_tier: Option<Vec<TierQueues>>,
    /// A fabric of servers only (rail-optimized): the traffic each rail carried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rails: Option<Vec<RailUse>>,
    /// A fabric of servers with several planes only: the traffic each plane carried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planes: Option<Vec<PlaneUse>>,
    /// Flaky or lossy links only: every port that loses packets on the wire (`"NODE-NODE"`, the
    /// first node's port towards the second) with the packets it transmitted and lost there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flaky_ports: Vec<FlakyPortLosses>,
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
    /// The engine that made the run (version and project commit).
    pub engine: EngineBuild,
    /// What `check` estimated before the run (compare with `events` and `performance`).
    pub estimate: crate::estimate::Estimate,
    /// The resolved scenario: rerunning it reproduces this run.
    pub scenario: serde_json::Value,
}

/// One flaky port's figures (`summary.json` `flaky_ports`).
#[derive(Clone, Debug, Serialize)]
pub struct FlakyPortLosses {
    /// The port, as `"NODE-NODE"`.
    pub port: String,
    /// Packets it transmitted (lost ones included).
    pub transmitted: u64,
    /// Packets lost on the wire.
    pub wire_losses: u64,
}

/// Data-queue figures of one switch port class (`summary.json` `queues_by_tier`).
#[derive(Clone, Debug, Serialize)]
pub struct TierQueues {
    /// Port class: `tor_up`, `agg_up`, `agg_down`, `core_down`, `tor_down` (`spine_down` on a
    /// leaf-spine, `scale_up` with a server scale-up domain).
    pub class: &'static str,
    /// Ports of the class.
    pub ports: u32,
    /// Deepest data queue of any of its ports (bytes).
    pub max_bytes: u64,
    /// Time-averaged data-queue occupancy, averaged over its ports (bytes): ∫ occupancy dt
    /// over the run, divided by the run time.
    pub mean_bytes: f64,
    /// The largest time-averaged occupancy of one port of the class (bytes).
    pub max_port_mean_bytes: f64,
    /// Packets its ports lost on the wire (flaky or lossy links).
    pub wire_losses: u64,
    /// Packets (any kind) its ports dropped: no buffer, port down, or headers with nothing to
    /// evict — where the loss happens (lb-ai-training §5 diagnostics).
    pub drops: u64,
    /// Data packets its ports trimmed.
    pub trims: u64,
}

/// Per port class, in the order ToR-up, agg-up, agg-down, core-down, ToR-down (then a
/// leaf-spine's spine-down, a scale-up domain's ports), the classes the fabric has.
fn tier_queues(sim: &Sim) -> Vec<TierQueues> {
    use crate::scenario::{port_class, PORT_CLASSES};
    let f = &sim.net.fabric;
    let run = sim.k.now.max(Time(1)).0 as f64;
    let mut out: Vec<TierQueues> = Vec::new();
    for name in ["tor_up", "agg_up", "agg_down", "core_down", "tor_down", "spine_down", "scale_up"] {
        let c = PORT_CLASSES.iter().position(|&n| n == name).expect("a port class");
        let mut t = TierQueues { class: name, ports: 0, max_bytes: 0, mean_bytes: 0.0, max_port_mean_bytes: 0.0, wire_losses: 0, drops: 0, trims: 0 };
        let mut area: u128 = 0;
        for (_, ps) in sim.net.ports.iter().enumerate().filter(|&(i, _)| port_class(f, i) == Some(c)) {
            let a = ps.occupancy_area(sim.k.now);
            t.ports += 1;
            t.max_bytes = t.max_bytes.max(ps.max_data_bytes.0);
            t.max_port_mean_bytes = t.max_port_mean_bytes.max(a as f64 / run);
            t.wire_losses += ps.wire_loss.as_ref().map_or(0, |f| f.wire_losses);
            t.drops += ps.drops;
            t.trims += ps.trims;
            area += a;
        }
        if t.ports > 0 {
            t.mean_bytes = area as f64 / run / t.ports as f64;
            out.push(t);
        }
    }
    out
}

/// What one rail of a fabric of servers carried (`summary.json` `rails`): its GPUs' NIC links
/// and its leaves' links to the spines, each way, over the run.
#[derive(Clone, Debug, Serialize)]
pub struct RailUse {
    /// Rail index: GPU r of every server, and leaf r of every scalable unit.
    pub rail: u32,
    /// GPUs on the rail (one per server).
    pub gpus: u32,
    /// Bytes the rail's GPUs sent into the fabric (any packet: data, headers, ACKs).
    pub gpu_tx_bytes: u64,
    /// Bytes the rail's leaves delivered to its GPUs.
    pub gpu_rx_bytes: u64,
    /// `gpu_tx_bytes` over what the rail's GPU links could carry in the run (rate × run time).
    pub gpu_tx_utilisation: f64,
    /// Bytes the rail's leaves sent up to the spines.
    pub uplink_tx_bytes: u64,
    /// Bytes the spines sent down to the rail's leaves.
    pub uplink_rx_bytes: u64,
    /// `uplink_tx_bytes` over what the rail's leaf uplinks could carry in the run.
    pub uplink_tx_utilisation: f64,
    /// Bytes the rail's GPUs sent into their servers' scale-up domain (only with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up_tx_bytes: Option<u64>,
    /// `scale_up_tx_bytes` over what the rail's GPUs' scale-up links could carry in the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up_tx_utilisation: Option<f64>,
}

/// The per-rail traffic of a fabric of servers on rails (`None` for other fabrics, rack-wired
/// ones included: their leaves serve no one rail): every port is charged to the rail of the GPU
/// or the leaf at its lower end.
fn rail_use(sim: &Sim) -> Option<Vec<RailUse>> {
    use crate::topo::Tier;
    let f = &sim.net.fabric;
    let servers = f.servers.filter(|s| s.wiring == crate::topo::rail_optimized::Wiring::Rails)?;
    let g = servers.gpus_per_server;
    let run = sim.k.now.max(Time(1)).0 as f64 / 1e12;
    let mut rails: Vec<RailUse> = (0..g)
        .map(|rail| RailUse {
            rail,
            gpus: servers.servers,
            gpu_tx_bytes: 0,
            gpu_rx_bytes: 0,
            gpu_tx_utilisation: 0.0,
            uplink_tx_bytes: 0,
            uplink_rx_bytes: 0,
            uplink_tx_utilisation: 0.0,
            scale_up_tx_bytes: servers.scale_up.map(|_| 0),
            scale_up_tx_utilisation: None,
        })
        .collect();
    let (mut gpu_capacity, mut uplink_capacity, mut scale_up_capacity) = (vec![0f64; g as usize], vec![0f64; g as usize], vec![0f64; g as usize]);
    for (i, ps) in sim.net.ports.iter().enumerate() {
        let spec = &f.ports[i];
        let (owner, peer) = (f.tier[spec.owner.idx()], f.tier[spec.peer.idx()]);
        let bytes = ps.tx_bytes.0;
        let leaf_rail = |n: crate::ids::NodeId| servers.rail_of_leaf(f.index_in_tier[n.idx()]) as usize;
        match (owner, peer) {
            (Tier::Host, Tier::ScaleUp) => {
                let r = servers.rail_of(crate::ids::NodeId(f.rank_of(spec.owner))) as usize;
                *rails[r].scale_up_tx_bytes.get_or_insert(0) += bytes;
                scale_up_capacity[r] += ps.rate.0 as f64 * run;
            }
            (Tier::Host, _) => {
                let r = servers.rail_of(spec.owner) as usize;
                rails[r].gpu_tx_bytes += bytes;
                gpu_capacity[r] += ps.rate.0 as f64 * run;
            }
            (Tier::Tor, Tier::Host) => rails[servers.rail_of(spec.peer) as usize].gpu_rx_bytes += bytes,
            (Tier::Tor, _) => {
                let r = leaf_rail(spec.owner);
                rails[r].uplink_tx_bytes += bytes;
                uplink_capacity[r] += ps.rate.0 as f64 * run;
            }
            (_, Tier::Tor) => rails[leaf_rail(spec.peer)].uplink_rx_bytes += bytes,
            _ => {}
        }
    }
    for (r, rail) in rails.iter_mut().enumerate() {
        rail.gpu_tx_utilisation = share(rail.gpu_tx_bytes, gpu_capacity[r]);
        rail.uplink_tx_utilisation = share(rail.uplink_tx_bytes, uplink_capacity[r]);
        rail.scale_up_tx_utilisation = rail.scale_up_tx_bytes.map(|b| share(b, scale_up_capacity[r]));
    }
    Some(rails)
}

/// `bytes` sent over links that could carry `capacity` bits in the run (0 without capacity).
fn share(bytes: u64, capacity: f64) -> f64 {
    if capacity > 0.0 {
        bytes as f64 * 8.0 / capacity
    } else {
        0.0
    }
}

/// What one plane of a fabric of servers carried (`summary.json` `planes`).
#[derive(Clone, Debug, Serialize)]
pub struct PlaneUse {
    /// Plane index: the GPUs' NIC ports on it are hosts `plane × GPUs ..`.
    pub plane: u32,
    /// Bytes the GPUs' NIC ports on the plane sent into it (any packet: data, headers, ACKs).
    pub gpu_tx_bytes: u64,
    /// `gpu_tx_bytes` over what those ports could carry in the run (rate × run time).
    pub gpu_tx_utilisation: f64,
    /// Bytes the plane's leaves sent up to its spines.
    pub uplink_tx_bytes: u64,
    /// `uplink_tx_bytes` over what the plane's leaf uplinks could carry in the run.
    pub uplink_tx_utilisation: f64,
}

/// The per-plane traffic of a fabric of servers with several planes (`None` otherwise): a
/// GPU's NIC port is on plane (host / GPUs), a switch on plane (its index in its tier / the
/// tier's switches per plane).
fn plane_use(sim: &Sim) -> Option<Vec<PlaneUse>> {
    use crate::topo::Tier;
    let f = &sim.net.fabric;
    let planes = f.servers.filter(|s| s.planes > 1)?.planes;
    let tors = f.tier.iter().filter(|&&t| t == Tier::Tor).count() as u32 / planes;
    let run = sim.k.now.max(Time(1)).0 as f64 / 1e12;
    let mut out: Vec<PlaneUse> = (0..planes).map(|plane| PlaneUse { plane, gpu_tx_bytes: 0, gpu_tx_utilisation: 0.0, uplink_tx_bytes: 0, uplink_tx_utilisation: 0.0 }).collect();
    let (mut gpu_capacity, mut uplink_capacity) = (vec![0f64; planes as usize], vec![0f64; planes as usize]);
    for (i, ps) in sim.net.ports.iter().enumerate() {
        let spec = &f.ports[i];
        match (f.tier[spec.owner.idx()], f.tier[spec.peer.idx()]) {
            (Tier::Host, Tier::Tor) => {
                let p = (spec.owner.0 / f.ranks()) as usize;
                out[p].gpu_tx_bytes += ps.tx_bytes.0;
                gpu_capacity[p] += ps.rate.0 as f64 * run;
            }
            (Tier::Tor, Tier::Agg) => {
                let p = (f.index_in_tier[spec.owner.idx()] / tors) as usize;
                out[p].uplink_tx_bytes += ps.tx_bytes.0;
                uplink_capacity[p] += ps.rate.0 as f64 * run;
            }
            _ => {}
        }
    }
    for (p, u) in out.iter_mut().enumerate() {
        u.gpu_tx_utilisation = share(u.gpu_tx_bytes, gpu_capacity[p]);
        u.uplink_tx_utilisation = share(u.uplink_tx_bytes, uplink_capacity[p]);
    }
    Some(out)
}

/// One resolved queue profile (`summary.json` `queue_profiles`).
#[derive(Clone, Debug, Serialize)]
pub struct QueueProfile {
    /// The ports using it, as `class@rate` (`"tor_down@400G, tor_up@400G"`); empty for the
    /// `[switch]` profile when no switch port keeps it.
    pub ports: String,
    /// How many switch ports use it.
    pub port_count: u32,
    /// Data buffer (bytes); `None` (null) under PFC.
    pub buffer_bytes: Option<u64>,
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
            buffer_bytes: q.bounded_buffer(),
            ecn: q.ecn,
            kmin_bytes: q.kmin_bytes.0,
            kmax_bytes: q.kmax_bytes.0,
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

/// Peak resident set size of this process (Linux `VmHWM`), if available.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Figures of each flow's re-routes per data packet, when the run counts re-routes.
fn reroutes_per_packet(flows: &[FlowResult], plan: &[ConnPlan]) -> Option<Stats> {
    flows.first()?.reroutes?;
    let mut v: Vec<f64> = flows.iter().zip(plan).map(|(f, p)| f.reroutes.unwrap_or(0) as f64 / p.pkts.max(1) as f64).collect();
    Some(Stats::of(&mut v))
}

/// What the workload puts on each flow row and on each connection (the same unless a message
/// shaper splits flows over several connections).
#[derive(Clone, Copy)]
pub(super) struct Plans<'a> {
    /// Per flow row.
    pub flows: &'a [ConnPlan],
    /// Per connection.
    pub conns: &'a [ConnPlan],
}

/// The summary of `sim`'s run (set up as `setup`, which took `wall_seconds`), with `flows`
/// (planned as `plans`) and `ccts` already collected.
pub(super) fn assemble(sim: &Sim, setup: &Setup, flows: &[FlowResult], plans: Plans, ccts: &[CctResult], wall_seconds: f64) -> Summary {
    let window = setup.results.window;
    let counted = || flows.iter().filter(|f| window.is_none_or(|w| w.contains(f.start)));
    let mut fct: Vec<f64> = counted().filter_map(|f| f.fct()).map(us).collect();
    let mut slow: Vec<f64> = counted().filter_map(|f| f.slowdown()).collect();
    let mut fair: Vec<f64> = counted().filter_map(|f| f.fair_slowdown()).collect();
    let first_start = flows.iter().map(|f| f.start).min().unwrap_or(Time::ZERO);
    let last_finish = flows.iter().filter_map(|f| f.finish).max().unwrap_or(first_start);
    let ideal_completion = bounds::ideal_completion(sim, flows, plans.flows, plans.conns, ccts, first_start);
    let mut packets = PacketCounts::from(&sim.k.c);
    packets.discarded_out_of_order = sim.hosts.rx.iter().map(|r| r.discarded as u64).sum();
    let flaky = sim.net.ports.iter().any(|p| p.wire_loss.is_some());
    packets.wire_losses = flaky.then_some(sim.k.c.wire_losses);
    let pod_faults = sim.net.fabric.pod_faults();
    let hops = sim.k.c.packet_hops;
    Summary {
        name: setup.scenario.name.clone(),
        seed: setup.scenario.seed,
        fabric: sim.net.fabric.description.clone(),
        hosts: sim.net.fabric.hosts,
        switches: sim.net.fabric.switches(),
        failed_links: sim.net.fabric.failures.iter().map(|l| sim.net.fabric.link_name(l.up)).collect(),
        failure_seed: setup.scenario.topology.first_failure_seed(),
        pod_uplink_bottleneck: sim.net.fabric.pod_bottleneck.clone(),
        base_rtt_us: us(setup.base_rtt),
        bdp_bytes: setup.bdp_bytes.0,
        flows: flows.len() as u32,
        flows_finished: flows.iter().filter(|f| f.finish.is_some()).count() as u32,
        stopped_at_end_time: sim.stopped_early,
        stalled_since_us: sim.stalled.map(|(since, _)| us(since)),
        interrupted: sim.interrupted,
        interrupted_at_us: sim.interrupted.then(|| us(sim.k.now)),
        completion_time_us: us(last_finish - first_start),
        ideal_completion_time_us: us(ideal_completion),
        stationary_window: window.map(|w| WindowFigures::of(&w, flows)),
        fct_us: Stats::of(&mut fct),
        slowdown: Stats::of(&mut slow),
        fair_slowdown: flows.first().is_some_and(|f| f.fair_ideal_fct.is_some()).then(|| Stats::of(&mut fair)),
        slowdown_by_size: (!setup.results.size_buckets.is_empty()).then(|| by_size::buckets(&setup.results.size_buckets, window, flows)),
        loss: LossFigures::of(flows, &packets),
        reroutes_per_packet: reroutes_per_packet(flows, plans.flows),
        uplink_imbalance: sim.tracer.imbalance.as_ref().and_then(super::imbalance::figure),
        flowlets: None,
        collectives: collectives::summary(ccts),
        training: None,
        packets,
        events: sim.k.c.events,
        ack_rtt_us: rtt_stats(&sim.hosts.acked.rtt),
        duplicate_data_packets: sim.hosts.rx.iter().map(|r| r.duplicates as u64).sum(),
        max_queue_bytes: (sim.net.ports.iter().map(|p| p.max_data_bytes).max().unwrap_or(Bytes::ZERO)).0,
        pfc: sim.net.pfc.on.then(|| pfc_summary(sim)),
        buffer_bytes: setup.qdisc.profiles[0].bounded_buffer(),
        flaky_ports: sim
            .net
            .ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.wire_loss.as_ref().map(|f| (i, f)))
            .map(|(i, f)| FlakyPortLosses { port: sim.net.fabric.link_name(PortId(i as u32)), transmitted: f.transmitted, wire_losses: f.wire_losses })
            .collect(),
        queues_by_tier: (pod_faults || setup.scenario.run.tier_queue_stats).then(|| tier_queues(sim)),
        rails: rail_use(sim),
        planes: plane_use(sim),
        queue_profiles: (setup.qdisc.profiles.len() > 1).then(|| (0..setup.qdisc.profiles.len()).map(|i| QueueProfile::of(&setup.qdisc, i)).collect()),
        invariant_violations: {
            let mut v = invariants::check(sim, setup);
            let all_finished = flows.iter().all(|f| f.finish.is_some());
            let fastest = super::floors::Fastest::of(setup, sim);
            v.extend(bounds::below_floor(&fastest, sim, flows, plans.flows, plans.conns, ccts, first_start, last_finish - first_start, all_finished));
            v
        },
        estimate: crate::estimate::Estimate::of(setup),
        engine: EngineBuild::THIS,
        performance: Performance {
            wall_seconds,
            events_per_second: sim.k.c.events as f64 / wall_seconds.max(1e-9),
            packet_hops_per_second: hops as f64 / wall_seconds.max(1e-9),
            peak_rss_bytes: peak_rss_bytes(),
            peak_packets_in_pool: sim.k.pool.high_water(),
            threads: 1,
            partitions: 1,
            serial_reason: None,
            sync_windows: 0,
            partition_cpu_seconds: None,
            critical_path_seconds: None,
        },
        scenario: serde_json::to_value(&setup.scenario).unwrap_or(serde_json::Value::Null),
    }
}

/// Time port `i` spent paused by PFC over the run: a port still paused at the end counts its
/// open pause up to the final time (0 without PFC state for it).
pub(super) fn paused_time(sim: &Sim, i: usize) -> crate::units::Time {
    sim.net.pfc.ingress.get(i).map_or(Time::ZERO, |s| s.paused_total + if sim.net.ports[i].paused { sim.k.now - s.paused_since } else { Time::ZERO })
}

/// PFC figures of `sim`.
fn pfc_summary(sim: &Sim) -> PfcSummary {
    let stats = &sim.net.pfc.ingress;
    let paused = |i: usize| paused_time(sim, i);
    let (max_port, max_t) = (0..sim.net.ports.len()).map(|i| (i, paused(i))).max_by_key(|&(i, t)| (t, std::cmp::Reverse(i))).unwrap_or((0, Time::ZERO));
    PfcSummary {
        pause_frames: sim.net.pfc.ingress.iter().map(|i| i.pauses_sent as u64).sum(),
        ports_paused: stats.iter().filter(|s| s.pauses_received > 0).count() as u32,
        paused_time_us: us((0..sim.net.ports.len()).map(paused).sum()),
        max_port_paused_us: us(max_t),
        max_paused_port: if max_t > Time::ZERO { sim.net.fabric.link_name(PortId(max_port as u32)) } else { String::new() },
        max_switch_buffer_bytes: sim.net.pfc.switches.iter().map(|b| b.max_used).max().unwrap_or(0),
        headroom_overflow_drops: sim.net.pfc.overflow_drops,
        ports: stats
            .iter()
            .enumerate()
            .filter(|(_, s)| s.pauses_received > 0)
            .map(|(i, s)| (sim.net.fabric.link_name(PortId(i as u32)), s.pauses_received, us(paused(i))))
            .collect(),
    }
}
