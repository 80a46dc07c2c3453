//! Scenario files (TOML): the schema with defaults, `--set` overrides, and validation into a
//! ready-to-run [`Setup`].
//!
//! Every struct denies unknown keys, so a typo is an error that names the key and the allowed
//! ones; every value is range-checked here, before anything runs or any file is written.

mod link_events;
mod queues;
mod results_options;
mod run_options;
#[cfg(test)]
pub(crate) mod tests;
mod timing;
mod topology;
mod transport;
mod values;

pub use crate::workload::InputFiles;
pub use queues::{port_class, PortRules, QueueRule, PORT_CLASSES};
pub use results_options::{ResultsOptions, StationaryWindow};
pub use run_options::{DEFAULT_STALL_LIMIT_US, DROP_LIMITS, RUN_LIMITS};
pub use values::{deserialize_params, ByteSize, NoParams, Ratio};
use crate::excerpt::{clip, clip_quoted};

use crate::budget::Budget;
use crate::error::{Error, Result};
use crate::ids::PortId;
use crate::net::pfc::PfcState;
use crate::net::qdisc::QdiscTable;
use crate::topo::failures::FailureEntries;
use crate::topo::Fabric;
use crate::transport::cc::CcConfig;
use crate::transport::lb::LbConfig;
use crate::transport::shaper::ShaperCtx;
use crate::scheme::Limit;
use crate::units::{show_num, BitsPerSec, Bytes, Gbps, Time, MAX_BUFFER_BYTES, MAX_RATE_GBPS, MAX_TIME_NS, MIN_RATE_GBPS, NS};
use crate::transport::credit::CreditConfig;
use crate::transport::gate::GateConfig;
use crate::workload::graph::Traffic;
use crate::workload::{HostPlan, WorkloadConfig};
use std::sync::Arc;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A whole scenario as written in a file (after defaults are filled in).
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name, copied into results.
    pub name: String,
    /// Master seed: every random stream derives from it.
    pub seed: u64,
    /// The folder that file names in the scenario (flow lists, CDFs, collective traces) are
    /// relative to; itself relative to the scenario file's folder. Default: that folder. A
    /// run's `resolved_scenario.toml` sets it so that it can be rerun from anywhere; never part of the
    /// resolved scenario (which stays the same wherever the files are).
    #[serde(skip_serializing)]
    pub files_dir: Option<String>,
    /// The fabric.
    pub topology: TopologyConfig,
    /// Switch output ports.
    pub switch: SwitchConfig,
    /// Packet sizes, ACKs, timers, congestion control and path selection.
    pub transport: TransportConfig,
    /// The traffic.
    pub workload: WorkloadConfig,
    /// Link failures and degradations during the run.
    pub link_events: Vec<LinkEventConfig>,
    /// Run limits.
    pub run: RunConfig,
    /// What the summary counts (stationary window, flow-size buckets); left out of resolved
    /// scenarios while empty.
    #[serde(skip_serializing_if = "ResultsConfig::is_empty")]
    pub results: ResultsConfig,
}

/// Topology family.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// 3-tier k-ary fat tree (see [`fat_tree`](crate::topo::fat_tree)).
    #[default]
    FatTree,
    /// 2-tier leaf-spine (see [`leaf_spine`](crate::topo::leaf_spine)).
    LeafSpine,
    /// Rail-optimized fabric of multi-GPU servers, 2 or 3 tiers (see
    /// [`rail_optimized`](crate::topo::rail_optimized)).
    RailOptimized,
    /// Rail-only fabric: the rails of a rail-optimized fabric without the spines that join
    /// them (see [`rail_only`](crate::topo::rail_only)).
    RailOnly,
    /// Rack-wired fabric of multi-GPU servers: a rail-optimized fabric's switches and cables,
    /// each server's NICs on one leaf (see [`racks`](crate::topo::racks)).
    Racks,
}

impl TopologyKind {
    /// Whether the fabric is built of multi-GPU servers (`servers`, `[topology.server]`).
    pub fn has_servers(self) -> bool {
        matches!(self, TopologyKind::RailOptimized | TopologyKind::RailOnly | TopologyKind::Racks)
    }
}

/// How traffic between GPUs on different rails of different servers crosses over
/// (`[topology.server] cross_rail`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CrossRail {
    /// Over the fabric: up the source's rail and across a spine (or core).
    Spine,
    /// NCCL's PXN: over the server's scale-up domain to the GPU on the destination's rail, then
    /// along that rail (each message stored and forwarded at that GPU).
    Pxn,
}

/// `[topology.server]`: what a server of a rail-optimized fabric holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// GPUs per server, each with its own NIC on its own rail.
    pub gpus: u32,
    /// Scale-up domain (NVLink/NVSwitch class): each GPU's rate to the server's scale-up
    /// switch, each way, in Gb/s (e.g. 3600: NVLink 4's 450 GB/s). Unset: not modelled (GPUs of
    /// one server then reach each other through the rails).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up_gbps: Option<Gbps>,
    /// Propagation delay of each GPU's link to the scale-up switch, in ns (a GPU-to-GPU transfer
    /// crosses two, plus the switch latency). Only with `scale_up_gbps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up_latency_ns: Option<f64>,
    /// How a collective's messages between GPUs on different rails of different servers travel:
    /// `"spine"` (default on a rail-optimized fabric) or `"pxn"` (through the scale-up domain
    /// onto the destination's rail; a rail-only fabric's only way, and its default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_rail: Option<CrossRail>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        // An 8-GPU server (DGX/HGX class), as every reference design the rail wiring comes from.
        ServerConfig { gpus: 8, scale_up_gbps: None, scale_up_latency_ns: None, cross_rail: None }
    }
}

/// Tier thinned by oversubscription in a fat tree.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OversubTier {
    /// Fewer ToR uplinks.
    #[default]
    Tor,
    /// Fewer aggregation-to-core uplinks.
    Agg,
}

/// `[topology]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TopologyConfig {
    /// Family.
    pub kind: TopologyKind,
    /// Switch radix; give this or `hosts`.
    pub k: Option<u32>,
    /// Host count; the radix follows from it.
    pub hosts: Option<u32>,
    /// Oversubscription ratio, `"4:1"` or `4`.
    pub oversubscription: Ratio,
    /// Fat tree only: which tier's uplinks are thinned.
    pub oversubscribed_tier: OversubTier,
    /// Rate of every link unless overridden per tier.
    pub link_rate_gbps: Gbps,
    /// Host-to-ToR links.
    pub host_link_rate_gbps: Option<Gbps>,
    /// ToR-to-aggregation (spine) links.
    pub tor_uplink_rate_gbps: Option<Gbps>,
    /// Aggregation-to-core links.
    pub agg_uplink_rate_gbps: Option<Gbps>,
    /// Propagation delay of every link unless overridden.
    pub link_latency_ns: f64,
    /// Propagation delay of host links.
    pub host_link_latency_ns: Option<f64>,
    /// Forwarding delay of every switch.
    pub switch_latency_ns: f64,
    /// Leaf-spine only, instead of `k`/`hosts`/`oversubscription`: number of ToRs.
    pub tors: Option<u32>,
    /// Explicit shapes (leaf-spine and fat tree): hosts under each ToR.
    pub hosts_per_tor: Option<u32>,
    /// Leaf-spine only: number of spines.
    pub spines: Option<u32>,
    /// Leaf-spine only: parallel cables between each ToR and each spine (default 1).
    pub links_per_spine: Option<u32>,
    /// Explicit leaf-spine only: the rate of every cable of spine `s` (both directions), one
    /// entry per spine, instead of `tor_uplink_rate_gbps` (the seqbalance testbed's 80/40/40).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spine_link_rates_gbps: Option<Vec<Gbps>>,
    /// Fat tree only, instead of `k`/`hosts`/`oversubscription`: number of pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    /// Fat tree only: ToRs in each pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tors_per_pod: Option<u32>,
    /// Fat tree only: aggregation switches in each pod (each linked to every ToR of the pod).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggs_per_pod: Option<u32>,
    /// Fat tree: core switches, a multiple of `aggs_per_pod`; a 3-tier rail-optimized fabric:
    /// core switches, a multiple of `spines`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Fabrics of servers (rail-optimized, rail-only) only: servers in the cluster (a multiple of `servers_per_su`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// Fabrics of servers only: servers per scalable unit (default 32, NVIDIA's DGX SuperPOD unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers_per_su: Option<u32>,
    /// Rail-optimized only: switch tiers, 2 (default) or 3 (spines per scalable unit, cores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<u32>,
    /// Fabrics of servers only: independent copies of the scale-out fabric, each GPU's NIC with
    /// a port on each (default 1); a connection between GPUs is striped over them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planes: Option<u32>,
    /// Fabrics of servers only, 2 tiers: each GPU's NIC has two ports on the two leaves of a
    /// pair (dual-ToR); a connection between GPUs is striped over the two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dual_tor: Option<bool>,
    /// Fabrics of servers whose NICs have several ports (planes, dual-ToR) only: a connection
    /// between GPUs striped over the ports (`"striped"`, the default) or one whose packets leave
    /// on the NIC's next free port (`"packet"`) or on the port their entropy selects
    /// (`"entropy"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic_port_choice: Option<crate::topo::rail_optimized::PortChoice>,
    /// Fabrics of servers only: what a server holds (`[topology.server]`); kept after the plain
    /// keys so that it serializes as a sub-table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerConfig>,
    /// Links failed at build time (`[topology.failures]`, or several sets as
    /// `[[topology.failures]]`); kept last so that it serializes as a sub-table after the plain
    /// keys.
    pub failures: Option<FailureEntries>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            kind: TopologyKind::FatTree,
            k: None,
            hosts: None,
            oversubscription: Ratio(1),
            oversubscribed_tier: OversubTier::Tor,
            link_rate_gbps: Gbps(400.0),
            host_link_rate_gbps: None,
            tor_uplink_rate_gbps: None,
            agg_uplink_rate_gbps: None,
            link_latency_ns: 1000.0,
            host_link_latency_ns: None,
            switch_latency_ns: 0.0,
            tors: None,
            hosts_per_tor: None,
            spines: None,
            links_per_spine: None,
            spine_link_rates_gbps: None,
            pods: None,
            tors_per_pod: None,
            aggs_per_pod: None,
            cores: None,
            servers: None,
            servers_per_su: None,
            tiers: None,
            planes: None,
            dual_tor: None,
            nic_port_choice: None,
            server: None,
            failures: None,
        }
    }
}

/// Ranges of the numeric `[switch]` keys, also enforced on every `[switch.ports.<class>]` and
/// `[[switch.by_link_rate]]` rule (what `fabricsim list --params` shows). What depends on the
/// fabric is checked where the ports are resolved: a buffer holds at least one packet, and a
/// multiple of the BDP or of the buffer gives at most [`MAX_BUFFER_BYTES`].
pub const SWITCH_LIMITS: &[Limit] = &[
    Limit::new("rate_gbps", MIN_RATE_GBPS, MAX_RATE_GBPS),
    Limit::new("buffer_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    // 2^20 packets of the largest MTU stay below MAX_BUFFER_BYTES.
    Limit::new("buffer_pkts", 1.0, 1_048_576.0),
    Limit::new("buffer_bdp", 1e-4, 1e6),
    Limit::new("ecn_kmin", 0.0, 1.0),
    Limit::new("ecn_kmax", 0.0, 1.0),
    Limit::new("ecn_kmin_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    Limit::new("ecn_kmax_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    Limit::new("ecn_pmax", 0.0, 1.0),
    Limit::new("control_wrr_weight", 0.0, 1e6),
    Limit::new("control_lane_factor", 1e-6, 1e3),
];

/// `[switch]`: every switch output port.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchConfig {
    /// Data-queue buffer per port in bytes; overrides `buffer_pkts` and `buffer_bdp`.
    pub buffer_bytes: Option<ByteSize>,
    /// Data-queue buffer per port in full packets (`transport.mtu_bytes` each), htsim's `-q`
    /// (htsim_eqds default 35; uec-spec §5); overrides `buffer_bdp`. ECN thresholds
    /// (`ecn_kmin`/`ecn_kmax` fractions) apply to it as to any buffer. Left out of resolved
    /// scenarios while unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pkts: Option<u32>,
    /// Data-queue buffer per port as a multiple of the fabric BDP (longest path), rounded up to
    /// whole packets.
    pub buffer_bdp: f64,
    /// ECN marking on data packets.
    pub ecn: bool,
    /// Marking starts above this fraction of the buffer.
    pub ecn_kmin: f64,
    /// Everything is marked above this fraction of the buffer.
    pub ecn_kmax: f64,
    /// Kmin in bytes; overrides `ecn_kmin`.
    pub ecn_kmin_bytes: Option<ByteSize>,
    /// Kmax in bytes; overrides `ecn_kmax`.
    pub ecn_kmax_bytes: Option<ByteSize>,
    /// Marking probability at Kmax.
    pub ecn_pmax: f64,
    /// `"dequeue"` or `"enqueue"`.
    pub ecn_mark_at: MarkAtConfig,
    /// Trim would-be drops to headers (forwarded at high priority and NACKed).
    pub trimming: bool,
    /// Control packets a port sends per data packet while both classes wait (weighted
    /// round-robin, as htsim's composite queue); 0 = strict priority for control.
    pub control_wrr_weight: u32,
    /// Capacity of the control class at switch ports: `"unbounded"` (default), `"separate"`
    /// (a lane of `control_lane_factor` × the port's buffer) or `"shared"` (headers share the
    /// port's buffer with data and evict the newest data packet; needs trimming). Left out of
    /// resolved scenarios while default.
    #[serde(skip_serializing_if = "ControlLaneConfig::is_default")]
    pub control_lane: ControlLaneConfig,
    /// `separate` only: the lane's capacity as a multiple of the port's data buffer (default 1:
    /// the study's non-trimming runs; htsim's header queue is 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_lane_factor: Option<f64>,
    /// Where trimmed headers go: `"to_receiver"` (default: the receiver NACKs them),
    /// `"to_sender"` (every one returned by the trimming switch) or `"to_sender_on_overflow"`
    /// (returned only when the control class is full); needs trimming. Left out of resolved
    /// scenarios while default.
    #[serde(skip_serializing_if = "crate::net::qdisc::TrimmedHeaders::is_default")]
    pub trimmed_headers: crate::net::qdisc::TrimmedHeaders,
    /// Priority flow control on a shared buffer (lossless data class; `[switch.pfc]`).
    pub pfc: crate::net::pfc::PfcConfig,
    /// Path selection among equal-cost next hops (`lb = "random"`, or `[switch.lb]` with `name`
    /// and per-tier overrides); left out of resolved scenarios while it is the ECMP default.
    #[serde(skip_serializing_if = "crate::net::switch_lb::SwitchLbSelection::is_default")]
    pub lb: crate::net::switch_lb::SwitchLbSelection,
    /// Overrides per port class, `[switch.ports.tor_down]` etc.; win over `by_link_rate`.
    #[serde(skip_serializing_if = "PortRules::is_empty")]
    pub ports: PortRules,
    /// Overrides per link rate, `[[switch.by_link_rate]] rate_gbps = 400, ...`; win over the
    /// keys above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_link_rate: Vec<QueueRule>,
}

/// How the control class is bounded at switch ports (lb-ai-training spec §4.2).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ControlLaneConfig {
    /// No limit.
    #[default]
    Unbounded,
    /// A lane of its own, `control_lane_factor` × the port's buffer.
    Separate,
    /// Shares the port's buffer with data; headers evict the newest data packet.
    Shared,
}

impl ControlLaneConfig {
    fn is_default(&self) -> bool {
        *self == ControlLaneConfig::Unbounded
    }
}

/// Where ECN marks are decided.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAtConfig {
    /// On dequeue.
    #[default]
    Dequeue,
    /// On enqueue.
    Enqueue,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: None,
            buffer_pkts: None,
            buffer_bdp: 1.0,
            ecn: true,
            ecn_kmin: 0.2,
            ecn_kmax: 0.8,
            ecn_kmin_bytes: None,
            ecn_kmax_bytes: None,
            ecn_pmax: 1.0,
            ecn_mark_at: MarkAtConfig::Dequeue,
            trimming: true,
            control_wrr_weight: 0,
            control_lane: ControlLaneConfig::Unbounded,
            control_lane_factor: None,
            trimmed_headers: Default::default(),
            pfc: Default::default(),
            lb: Default::default(),
            ports: Default::default(),
            by_link_rate: Vec::new(),
        }
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// Where receivers' answers wait at a port (`transport.ack_class`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckClass {
    /// The control class: ahead of data, never paused.
    #[default]
    Control,
    /// The data class, FIFO with data and paused with it.
    Data,
}

impl AckClass {
    fn is_control(&self) -> bool {
        *self == AckClass::Control
    }
}

/// `[transport]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransportConfig {
    /// Wire size of a full data packet, header included.
    pub mtu_bytes: u32,
    /// Header bytes of every data packet (and the size of a trimmed packet).
    pub header_bytes: u32,
    /// Wire size of ACKs and NACKs.
    pub ack_bytes: u32,
    /// The port class receivers' answers (ACKs, NACKs, CNPs) travel in: `control` (strict
    /// priority over data, never paused) or `data` (FIFO with the data, PFC-paused with it: the
    /// HPCC ns-3 simulator's `ACK_HIGH_PRIO 0`). Left out of resolved scenarios while `control`.
    #[serde(skip_serializing_if = "AckClass::is_control")]
    pub ack_class: AckClass,
    /// Receiver sends one ACK per this many data packets (1 = per packet).
    pub ack_every: u32,
    /// Receiver also ACKs once this many wire bytes arrived un-ACKed (htsim's
    /// `-sack_threshold`, 16 384 B; uec-spec §4); 0 = off. With it on, the per-packet rule of
    /// `ack_every` = 1 no longer applies. Left out of resolved scenarios while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub ack_coalesce_bytes: u32,
    /// Receiver ACKs a CE-marked data packet at once, whatever the coalescing (htsim's default;
    /// uec-spec §4). Left out of resolved scenarios while false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ack_on_ce: bool,
    /// Retransmission timeout; default: base RTT + twice the worst queueing delay of the path
    /// (4 ms with PFC).
    pub rto_us: Option<f64>,
    /// Senders mark data packets ECN-capable.
    pub ecn_capable: bool,
    /// Congestion control (`cc = "fixed"` or a table with `name` and parameters).
    pub cc: CcConfig,
    /// Path selection (`lb = "spray"` or a table with `name` and parameters).
    pub lb: LbConfig,
    /// Message gate (`gate = "none"` or a table with `name` and parameters).
    pub gate: GateConfig,
    /// Receiver credits (`credit = "eqds"` or a table with `name` and parameters).
    pub credit: CreditConfig,
    /// Loss recovery (`reliability = "sack"`, `"go_back_n"`, `"selective_nack"`, `"strack"`).
    pub reliability: crate::transport::recovery::RecoveryConfig,
    /// Message shaper (`shaper = "none"`, or `[transport.shaper] name = "seqbalance"`, `qps`,
    /// `split`): splits each flow of a flow workload over sub-QPs. Left out of resolved
    /// scenarios while `none`.
    #[serde(skip_serializing_if = "crate::transport::shaper::ShaperConfig::is_none")]
    pub shaper: crate::transport::shaper::ShaperConfig,
    /// Other controllers for the connections of chosen source hosts
    /// (`[[transport.cc_by_source]]`, `hosts = [4, 8]`, `cc = "bbr"`): two or more congestion
    /// controls sharing one fabric. Left out of resolved scenarios while empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc_by_source: Vec<CcBySource>,
}

/// One `[[transport.cc_by_source]]` entry: the connections sent by `hosts` use `cc` instead of
/// `transport.cc`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcBySource {
    /// Source hosts (each in at most one entry).
    pub hosts: Vec<u32>,
    /// Their congestion control (`cc = "bbr"` or a table with `name` and parameters).
    pub cc: CcConfig,
}

impl TransportConfig {
    /// Every congestion control the scenario names, with its key: `transport.cc`, then each
    /// `transport.cc_by_source[i].cc`.
    pub fn ccs(&self) -> impl Iterator<Item = (String, &CcConfig)> {
        std::iter::once(("transport.cc".to_string(), &self.cc)).chain(self.cc_by_source.iter().enumerate().map(|(i, e)| (format!("transport.cc_by_source[{i}].cc"), &e.cc)))
    }

    /// Whether some congestion control of the run reads in-band telemetry (`kernel/telemetry.rs`):
    /// switches then stamp it and the packet pool keeps its lane.
    pub fn carries_telemetry(&self) -> bool {
        self.ccs().any(|(_, cc)| cc.carries_telemetry())
    }

    /// The congestion control of every source host: `transport.cc` but where
    /// `transport.cc_by_source` names the host (hosts already checked to exist).
    pub fn cc_of_hosts(&self, hosts: u32) -> Vec<&CcConfig> {
        let mut of = vec![&self.cc; hosts as usize];
        for e in &self.cc_by_source {
            for &h in &e.hosts {
                of[h as usize] = &e.cc;
            }
        }
        of
    }

    /// The congestion control of source host `h` alone (see [`Self::cc_of_hosts`]).
    pub fn cc_of_host(&self, h: u32) -> &CcConfig {
        self.cc_by_source.iter().find(|e| e.hosts.contains(&h)).map_or(&self.cc, |e| &e.cc)
    }
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            mtu_bytes: 4096,
            header_bytes: 64,
            ack_bytes: 64,
            ack_class: AckClass::Control,
            ack_every: 1,
            ack_coalesce_bytes: 0,
            ack_on_ce: false,
            rto_us: None,
            ecn_capable: true,
            cc: CcConfig::default(),
            lb: LbConfig::default(),
            gate: GateConfig::default(),
            credit: CreditConfig::default(),
            reliability: Default::default(),
            shaper: Default::default(),
            cc_by_source: Vec::new(),
        }
    }
}

/// What a link event does.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinkAction {
    /// Every packet sent onto the link is lost (both directions).
    Down,
    /// The link carries traffic again.
    Up,
    /// The link runs at `rate_gbps` (both directions).
    Rate,
    /// Routes are recomputed over the links up at that moment (the second entry that a
    /// `reroute_after_us` adds; not written in scenarios).
    #[serde(skip)]
    Reroute,
}

/// One `[[link_events]]` entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEventConfig {
    /// When, in microseconds of simulated time.
    #[serde(default)]
    pub at_us: f64,
    /// The link, as `"NODE-NODE"` with node names like `tor3`, `agg5`, `core0`, `spine2`, `host7`.
    pub link: String,
    /// `down`, `up` or `rate`.
    pub action: LinkAction,
    /// New rate for `rate`.
    pub rate_gbps: Option<Gbps>,
    /// `down`/`up` only: routing re-converges this long after the event, excluding the links
    /// down at that moment; unset: routes never change (the papers' testbeds).
    pub reroute_after_us: Option<f64>,
    /// `rate` only: `"both"` (default), `"forward"` (the first node's port towards the second,
    /// as the link is named) or `"reverse"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<EventDirection>,
    /// `rate` only: scale the changed ports' buffer and ECN thresholds with the new rate
    /// (htsim's `-failed`); default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_queue: Option<bool>,
}

/// Which direction of a named cable a `[[link_events]]` rate change applies to.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EventDirection {
    /// Both.
    Both,
    /// From the first node of the name to the second.
    Forward,
    /// From the second node to the first.
    Reverse,
}

/// `[run]`.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Stop at this simulated time even if flows remain (they are reported unfinished).
    pub end_time_us: Option<f64>,
    /// Stop with an error once no payload byte has been acknowledged for this long of
    /// simulated time while messages are outstanding (a livelock, e.g. trimmed headers starving
    /// data); stops exactly this long after the last acknowledgement (idle gaps, with nothing
    /// outstanding, do not count); default 10 000 µs, 0 turns the guard off.
    pub stall_limit_us: Option<f64>,
    /// Also write `messages.csv`: one row per message (posting, delivery and completion times).
    pub message_log: bool,
    /// Sample the traced connections' window, in-flight bytes and rate this often (writes
    /// `trace.csv`); off when unset.
    pub trace_interval_us: Option<f64>,
    /// Connections (flow indices) to trace; default: the first 16.
    pub trace_conns: Option<Vec<u32>>,
    /// Ports to trace with the same period (queue bytes, pause state, bytes sent), as links
    /// `"NODE-NODE"` meaning the port of the first node towards the second (`"tor0-host3"`
    /// is host 3's last-hop queue); writes `port_trace.csv`.
    pub trace_ports: Vec<String>,
    /// Also write `events.csv`: every packet drop and PFC PAUSE with its time and place.
    pub event_log: bool,
    /// Data packets to lose on purpose (at the first switch), to exercise loss recovery.
    pub drop_packets: Vec<DropPacket>,
    /// Log every ACK of these flows (arrival time, RTT, ECN echo) into `acks.csv`.
    pub ack_log_conns: Vec<u32>,
    /// Log every event of every data packet of these flows (sent, resent, trimmed, evicted,
    /// dropped, bounced, header at the receiver, NACK / ACK at the sender, timed out) into
    /// `packet_log.csv`: one flow's loss recovery, packet by packet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub packet_log_conns: Vec<u32>,
    /// Log every window decision of the message gates (`mcc`: time, flow, grow / hold /
    /// shrink, window) into `gate_log.csv`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gate_log: bool,
    /// Write `ports.csv`: per direction of every link, bytes sent, utilisation, deepest and
    /// mean queue, drops, wire losses, trims, CE markings, pauses and paused time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub port_stats: bool,
    /// Write `timeline.json`, a Chrome trace-event file for Perfetto: flows (and logged
    /// messages) per host, collective instances per job, traced ports' queues and pauses.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timeline: bool,
    /// Report data-queue occupancy per switch port class (`queues_by_tier` in `summary.json`);
    /// on by itself with pod–core failures (`[topology.failures] kind = "partial_lag"/"flaky"`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tier_queue_stats: bool,
    /// Record flowlet sizes, cutting each connection's packets at gaps longer than each of
    /// these (µs; SeqBalance Fig. 1 uses 10, 50, 100, 500): `flowlets` in `summary.json` and
    /// `flowlets.csv`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flowlet_gaps_us: Vec<f64>,
}

/// `[results]`: which flows the summary's FCT figures count, and how they are bucketed.
#[derive(Clone, Debug, Serialize, Deserialize, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ResultsConfig {
    /// Upper bounds of the flow-size buckets of `summary.json` `slowdown_by_size` (bytes or
    /// sizes like `"100KB"`, increasing; flows above the last fall in one more bucket); unset:
    /// no such figures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub size_buckets: Vec<ByteSize>,
    /// Flows that start before this (µs) are left out of the FCT figures (warm-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_start_us: Option<f64>,
    /// Flows that start at or after this (µs) are left out of the FCT figures (drain); must be
    /// later than `window_start_us`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_end_us: Option<f64>,
    /// The fair-share ideal of each flow (`flows.csv` `fair_ideal_fct_us`, `fair_slowdown`;
    /// `summary.json` `fair_slowdown`): `"auto"` (default) for flow workloads whose flows all
    /// start at once (permutations, incasts, all-to-alls), `"on"` for any flow workload (its
    /// fluid model costs time in proportion to flows × concurrent flows: seconds for an
    /// open-loop run of 10^5 flows), `"off"`. Never for collectives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fair_share: Option<FairShare>,
}

/// `results.fair_share`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FairShare {
    /// For flow workloads whose flows all start at the same time.
    #[default]
    Auto,
    /// For every flow workload.
    On,
    /// Never.
    Off,
}

impl ResultsConfig {
    fn is_empty(&self) -> bool {
        *self == ResultsConfig::default()
    }
}

/// One `run.drop_packets` entry: the `transmission`-th transmission (1 = the original) of
/// packet `seq` of flow (connection) `flow` is lost (or held, with `hold_us`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropPacket {
    /// Flow (connection index).
    pub flow: u32,
    /// Packet sequence number within the flow (0-based).
    pub seq: u32,
    /// Which transmission of it: 1 = the first, 2 = the first retransmission, ...
    #[serde(default = "first_transmission")]
    pub transmission: u32,
    /// Instead of losing it, the first switch holds it this long (µs) before forwarding it, so
    /// later packets overtake it: one out-of-order arrival (seqbalance spec §7 T1, the paper's
    /// Table I).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_us: Option<f64>,
}

fn first_transmission() -> u32 {
    1
}

/// A link event resolved against the fabric.
#[derive(Clone, Copy, Debug)]
pub struct LinkEvent {
    /// When.
    pub at: Time,
    /// Both ports of the cable.
    pub ports: [PortId; 2],
    /// What.
    pub action: LinkAction,
    /// New rate for [`LinkAction::Rate`].
    pub rate: BitsPerSec,
    /// `direction` other than `"both"`: only `ports[0]` changes.
    pub one_way: bool,
    /// `scale_queue`: the queue profile each port switches to with its new rate.
    pub profiles: Option<[u8; 2]>,
}

/// Everything the engine needs, validated and derived.
pub struct Setup {
    /// The scenario as resolved (defaults filled, overrides applied).
    pub scenario: Scenario,
    /// The built fabric (read-only from here on: every simulation of the setup, each partition
    /// of a parallel run among them, shares it).
    pub fabric: std::sync::Arc<Fabric>,
    /// The workload as a graph of messages on connections.
    pub traffic: Arc<Traffic>,
    /// Switch port disciplines: the profiles and each port's.
    pub qdisc: QdiscTable,
    /// Round-trip time of the longest path with full packets.
    pub base_rtt: Time,
    /// Host rate × base RTT.
    pub bdp_bytes: Bytes,
    /// Retransmission timeout.
    pub rto: Time,
    /// Link events in time order.
    pub link_events: Vec<LinkEvent>,
    /// Stop time, if any.
    pub end_time: Option<Time>,
    /// Livelock guard (`run.stall_limit_us`); 0 = off.
    pub stall_limit: Time,
    /// Sampling period of traced connections (0 = off).
    pub trace_interval: Time,
    /// Traced connections.
    pub trace_conns: Vec<u32>,
    /// Traced ports.
    pub trace_ports: Vec<u32>,
    /// Flowlet gaps θ of `run.flowlet_gaps_us` (empty: off).
    pub flowlet_gaps: Vec<Time>,
    /// PFC state to start from (off unless enabled).
    pub pfc: PfcState,
    /// `[results]` resolved.
    pub results: ResultsOptions,
    /// The folder the scenario's files were read from, absolute; `None` if it read none.
    pub files_dir: Option<PathBuf>,
}

impl Setup {
    /// The run's `resolved_scenario.toml`: the resolved scenario, plus `files_dir` when it read files,
    /// so that `fabricsim run` on it repeats the run wherever the file is.
    pub fn rerun_toml(&self) -> String {
        let mut s = String::from("# The resolved scenario of this run (defaults filled in, overrides and seed applied).\n# `fabricsim run` on this file, or on the folder holding it, repeats the run.\n");
        if let Some(dir) = &self.files_dir {
            s.push_str(&format!("files_dir = {}\n", toml::Value::String(dir.display().to_string())));
        }
        s.push_str(&self.scenario.to_toml());
        s
    }
}

//= type=assumption
//# NCCL uses each port of a multi-port NIC as a device of its own and spreads its channels, so
//# a transfer's bytes, over them; a plane is a NIC port's whole path.
/// `traffic` with every connection between two GPUs' NICs striped over their NIC ports
/// ([`Traffic::striped`]: a part of each send on each port pair of [`port_pairs`], its bytes
/// split evenly: each plane, or both ports of a dual-ToR NIC).
/// Refused when a send would have more than [`crate::workload::graph::MAX_PARTS`] parts (its queue pairs times
/// the planes) or the graph would outgrow `budget`.
fn stripe_over_planes(fabric: &Fabric, traffic: Traffic, budget: Budget) -> Result<Traffic> {
    let servers = fabric.servers.expect("NIC ports only on a fabric of servers");
    let (gpus, planes) = (servers.gpus(), servers.nic_ports());
    let planes_of: Vec<Vec<(u32, u32)>> = traffic.conns.iter().map(|c| port_pairs(fabric, c)).collect();
    let key = if servers.dual_tor { "topology.dual_tor" } else { "topology.planes" };
    let mut parts = vec![0u32; traffic.tasks.len()];
    for m in traffic.messages() {
        parts[m.task as usize] += planes_of[m.conn as usize].len() as u32;
        if parts[m.task as usize] > crate::workload::graph::MAX_PARTS {
            return Err(Error::invalid(
                key,
                format!("{planes} NIC ports: a send striped over them and its queue pairs (`qps`) would have more than {} parts; allowed: NIC ports × qps ≤ {}", crate::workload::graph::MAX_PARTS, crate::workload::graph::MAX_PARTS),
            ));
        }
    }
    let grown = traffic.striped_size(&planes_of);
    budget.admit(key, grown.bytes(), || format!("striping the connections over the planes makes {}", grown.describe()))?;
    Ok(traffic.striped(&planes_of, gpus))
}

/// The NIC port pairs (p, q) that carry connection `c`, port p of its source GPU to port q of
/// its destination's: p to p for every p on which a path joins them; when none is, the first
/// joined pair of other ports; `[(0, 0)]` when nothing joins them (for [`check_paths`] to
/// name) or an end is not a GPU's NIC port.
fn port_pairs(fabric: &Fabric, c: &crate::workload::graph::ConnSpec) -> Vec<(u32, u32)> {
    let Some((gpus, ports)) = fabric.servers.map(|s| (s.gpus(), s.nic_ports())) else { return vec![(0, 0)] };
    if c.src.0 >= gpus || c.dst.0 >= gpus {
        return vec![(0, 0)];
    }
    let joined = |&(p, q): &(u32, u32)| fabric.reachable(c.src.offset(p * gpus), c.dst.offset(q * gpus));
    let same: Vec<(u32, u32)> = (0..ports).map(|p| (p, p)).filter(joined).collect();
    if !same.is_empty() {
        return same;
    }
    let cross = (0..ports).flat_map(|p| (0..ports).map(move |q| (p, q))).find(joined);
    vec![cross.unwrap_or((0, 0))]
}

/// `traffic` for NICs that spray each connection's packets over their ports
/// (`topology.nic_port_choice`): one connection per pair of GPUs as before, named by the first
/// port pair that joins them ([`port_pairs`]); the NIC picks each packet's port
/// (`net::nic::SprayedPorts`).
fn name_by_first_ports(fabric: &Fabric, mut traffic: Traffic) -> Traffic {
    let gpus = fabric.servers.map_or(0, |s| s.gpus());
    for c in &mut traffic.conns {
        let (p, q) = port_pairs(fabric, c)[0];
        (c.src, c.dst) = (c.src.offset(p * gpus), c.dst.offset(q * gpus));
    }
    traffic
}

/// Refuses a workload with a connection between hosts that no path joins (the rails of a
/// rail-only fabric), naming the first such connection; every other fabric joins every pair.
fn check_paths(fabric: &Fabric, traffic: &crate::workload::graph::Traffic) -> Result<()> {
    let Some((i, c)) = traffic.conns.iter().enumerate().find(|(_, c)| !fabric.reachable(c.src, c.dst)) else { return Ok(()) };
    let (a, b) = (fabric.node_name(c.src), fabric.node_name(c.dst));
    let why = match fabric.servers {
        Some(s) => {
            let (ra, rb, stride) = (s.rail_of(c.src), s.rail_of(c.dst), s.gpus_per_server);
            let (where_b, remedy) = if s.scale_up.is_some() {
                (" of another server", ": put a job's ranks on one rail or in one server")
            } else {
                ("", ", which is not modelled unless [topology.server] scale_up_gbps is set; put a job's ranks on one rail")
            };
            format!("{a} is on rail {ra} and {b} on rail {rb}{where_b}, and on a rail-only fabric the rails meet only in a server's scale-up domain{remedy} (placement = \"strided\", stride = {stride})")
        }
        None => "no path joins them".to_string(),
    };
    Err(Error::invalid("workload", format!("connection {i} from {a} to {b}: {why}")))
}

fn rate(key: &str, gbps: Gbps) -> Result<BitsPerSec> {
    let gbps = gbps.0;
    if !(gbps.is_finite() && (MIN_RATE_GBPS..=MAX_RATE_GBPS).contains(&gbps)) {
        return Err(Error::invalid(key, format!("{}: must be a positive rate in Gb/s; allowed {MIN_RATE_GBPS}..={MAX_RATE_GBPS} (1 Mb/s to 1 Pb/s)", show_num(gbps))));
    }
    Ok(BitsPerSec::from_gbps(gbps))
}

fn nanos(key: &str, ns: f64) -> Result<Time> {
    if !(ns.is_finite() && (0.0..=MAX_TIME_NS).contains(&ns)) {
        return Err(Error::invalid(key, format!("{}: must be a non-negative time in nanoseconds; allowed 0..={} (1000 s)", show_num(ns), show_num(MAX_TIME_NS))));
    }
    Ok(Time((ns * NS.0 as f64).round() as u64))
}

/// The 0-based column (in characters) of byte offset `at` of `text`.
fn column_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text.get(line_start..at).map_or(0, |s| s.chars().count())
}

/// `us` microseconds at `key`, refused when it rounds to 0: `what` must be positive.
fn positive_time(key: &str, us: f64, what: &str) -> Result<Time> {
    let t = crate::workload::time_from_us(key, us)?;
    if t == Time::ZERO {
        return Err(Error::invalid(key, format!("0: {what} must be positive")));
    }
    Ok(t)
}

impl Scenario {
    /// Parses a scenario from TOML text, applying `key.path=value` overrides first.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Scenario> {
        let mut value: toml::Value = text.parse::<toml::Table>().map(toml::Value::Table).map_err(|e| Error::Syntax(crate::excerpt::short_excerpt(&e.to_string(), e.span().map_or(0, |s| column_of(text, s.start)))))?;
        for o in overrides {
            values::apply_override(&mut value, o)?;
        }
        values::expand_shorthands(&mut value);
        let de = value;
        let mut scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            // toml appends "in `key`" lines that repeat the path we already report.
            let inner: String = e.into_inner().to_string().lines().filter(|l| !l.starts_with("in `")).collect::<Vec<_>>().join(" ");
            let key = if path == "." { "(top level)".to_string() } else { path };
            // A bad value is quoted in the message: at most an excerpt of it.
            Error::invalid(key, clip_quoted(&crate::error::with_suggestion(inner.trim_end())))
        })?;
        // A switched-off failure section is dropped here, so that the run and its resolved
        // scenario are exactly those of a scenario without it.
        if scenario.topology.active_failures().is_empty() {
            scenario.topology.failures = None;
        }
        Ok(scenario)
    }

    /// Reads and parses a scenario file.
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Scenario> {
        let text = crate::budget::read_input_file(path).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
        Self::from_toml(&text, overrides)
    }

    /// The scenario back as TOML (what `summary.json` and `check` show as "resolved").
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Validates everything and builds the fabric and the flows. `base_dir` is the scenario
    /// file's folder: file names in the scenario resolve against it (or against `files_dir`,
    /// itself relative to it). A fabric or workload whose tables would not fit in this
    /// machine's memory is refused before it is built ([`crate::budget`]).
    ///
    /// The steps run in this order, so an input with several errors reports the first one met.
    pub fn setup(self, base_dir: &Path) -> Result<Setup> {
        self.setup_within(base_dir, Budget::of_machine())
    }

    /// [`Scenario::setup`] within a memory budget of its own: the fabric's tables and the
    /// workload's graph are counted before they are built and refused, naming the key that
    /// makes them large, when they would take more than `budget` ([`Budget::UNLIMITED`]: never).
    pub fn setup_within(self, base_dir: &Path, budget: Budget) -> Result<Setup> {
        transport::check(&self.transport)?;
        if self.transport.ack_class == AckClass::Data && self.switch.trimming {
            return Err(Error::invalid("transport.ack_class", "\"data\" with switch.trimming = true: a full queue would trim ACKs as if they were data; allowed \"control\", or set switch.trimming = false"));
        }
        // Everything that can be counted from the scenario's numbers is, before anything large
        // is built: the fabric's tables from its shape, then the workload from the host count
        // (a workload that needs nothing else is generated here), so that an oversized scenario
        // is refused in milliseconds, not after seconds of building a 65,536-host fabric.
        let plan = self.plan_fabric(budget)?;
        let limits = run_options::Limits::of(&self.run)?;
        let mss = (self.transport.mtu_bytes - self.transport.header_bytes) as u64;
        let shaper = self.transport.shaper.build(&mut ShaperCtx { mss });
        let files = InputFiles::new(&self.files_dir.as_ref().map_or_else(|| base_dir.to_path_buf(), |d| base_dir.join(d)));
        let hosts = HostPlan { hosts: plan.ranks, host_rate: plan.host_rate };
        let workload_budget = budget.less(plan.size.bytes());
        let early = self.workload.generate_early(hosts, self.seed, &files, &shaper, workload_budget)?;
        let fabric = self.build_fabric(plan)?;
        transport::check_cc_hosts(&self.transport, fabric.ranks())?;
        transport::check_rate_floors(&self.transport, hosts.host_rate.0)?;
        let base = timing::Base::of(&fabric, &self.transport);
        let (mut qdisc, pfc) = self.switch_ports(&fabric, base.bdp_bytes.0)?;
        let rto = timing::rto(&self.transport, self.switch.pfc.enabled, &fabric, &qdisc, &base)?;
        let stall_limit = timing::stall_limit(limits.stall_limit, rto, &base)?;
        let link_events = link_events::resolve(&self.link_events, &fabric, &mut qdisc, self.transport.mtu_bytes as u64)?;
        let results = ResultsOptions::of(&self.results)?;
        self.transport.gate.validate()?;
        //= mcc §2.1 (Fig. 5): the NIC is unmodified with its hardware congestion control off
        if matches!(self.transport.gate, GateConfig::Mcc(_)) {
            if let Some((key, cc)) = self.transport.ccs().find(|(_, cc)| !matches!(cc, CcConfig::LineRate(_))) {
                return Err(Error::invalid(&key, format!("\"{}\": gate \"mcc\" runs with the NIC's congestion control off; set {key} = \"line_rate\"", cc.name())));
            }
        }
        let mut traffic = match early {
            Some(traffic) => traffic,
            None => self.workload.generate(&fabric, self.seed, &files, &shaper, workload_budget)?,
        };
        if topology::relays_cross_rail(&self.topology) {
            traffic = self.relay_over_scale_up(&fabric, traffic, workload_budget)?;
        }
        // Workloads address GPUs; a connection inside a server runs over its scale-up domain.
        for c in &mut traffic.conns {
            (c.src, c.dst) = fabric.endpoints(c.src, c.dst);
        }
        if fabric.sprayed_ports().is_some() {
            if self.transport.credit.enabled() {
                // The receiver's pull pacer runs at one port's rate (`transport::credit`).
                let choice = self.topology.nic_port_choice.map_or("", |c| c.name());
                return Err(Error::invalid("topology.nic_port_choice", format!("\"{choice}\" with receiver credits (transport.credit = \"{}\"): the pull pacer paces one NIC port; allowed with credits: \"striped\"", self.transport.credit.name())));
            }
            traffic = name_by_first_ports(&fabric, traffic);
        } else if fabric.nic_ports() > 1 {
            traffic = stripe_over_planes(&fabric, traffic, workload_budget)?;
        }
        traffic.check_packet_counts(mss, self.workload.size_key())?;
        check_paths(&fabric, &traffic)?;
        self.switch.lb.check_ns3_names(&fabric, traffic.ns3.as_deref())?;
        let traffic = Arc::new(traffic);
        let tracing = run_options::Tracing::of(&self.run, &fabric, traffic.conns.len() as u32)?;
        Ok(Setup {
            scenario: self,
            fabric: std::sync::Arc::new(fabric),
            traffic,
            qdisc,
            base_rtt: base.rtt,
            bdp_bytes: base.bdp_bytes,
            rto,
            link_events,
            end_time: limits.end_time,
            stall_limit,
            trace_interval: tracing.interval,
            trace_conns: tracing.conns,
            trace_ports: tracing.ports,
            flowlet_gaps: tracing.flowlet_gaps,
            pfc,
            results,
            files_dir: files.used_dir(),
        })
    }

    //= type=assumption
    //# NCCL's PXN: a GPU sends to a GPU on another rail of another server through the GPU of
    //# its own server on the destination's rail, which the data reaches over NVLink.
    /// `traffic` with every connection between GPUs on different rails of different servers
    /// relayed through the source server's GPU on the destination's rail
    /// ([`crate::topo::rail_optimized::Servers::pxn_relay`]); collectives only (a relayed flow
    /// would be two rows of flows.csv: a flow workload with such a connection is refused, naming
    /// it), refused past `budget`.
    fn relay_over_scale_up(&self, fabric: &Fabric, traffic: Traffic, budget: Budget) -> Result<Traffic> {
        let servers = fabric.servers.expect("[topology.server] is refused off a fabric of servers");
        let via: Vec<_> = traffic.conns.iter().map(|c| servers.pxn_relay(c.src, c.dst)).collect();
        let Some(first) = via.iter().position(Option::is_some) else { return Ok(traffic) };
        if !matches!(self.workload, WorkloadConfig::Collectives(_)) {
            let c = &traffic.conns[first];
            let (key, how) = match self.topology.kind {
                TopologyKind::RailOnly => ("workload", "on a rail-only fabric such a message is forwarded through the source server's scale-up domain onto the destination's rail"),
                _ => ("topology.server.cross_rail", "with cross_rail = \"pxn\" such a message is relayed through the source server's scale-up domain onto the destination's rail"),
            };
            return Err(Error::invalid(
                key,
                format!(
                    "connection {first} from {} to {} joins GPUs on different rails of different servers: {how}, which fabricsim does for a collective's chunks, as NCCL does; a relayed flow would have no one row of flows.csv: use a workload of kind = \"collectives\", or put each job's ranks on one rail (placement = \"strided\", stride = {})",
                    fabric.node_name(c.src),
                    fabric.node_name(c.dst),
                    servers.gpus_per_server
                ),
            ));
        }
        let grown = traffic.relayed_size(&via);
        budget.admit("topology.server.cross_rail", grown.bytes(), || format!("relaying the cross-rail messages makes {}", grown.describe()))?;
        Ok(traffic.relayed(&via))
    }

    /// Switch port disciplines (queue profiles) and the PFC state; also checks `[switch.lb]`
    /// against the fabric's tiers.
    fn switch_ports(&self, fabric: &Fabric, bdp_bytes: u64) -> Result<(QdiscTable, PfcState)> {
        let (sw, tr) = (&self.switch, &self.transport);
        let cx = queues::Context { fabric, bdp_bytes: Bytes(bdp_bytes), mtu_bytes: Bytes(tr.mtu_bytes as u64), header_bytes: tr.header_bytes };
        let mut qdisc = queues::resolve(sw, &cx)?;
        queues::scale_failed(&mut qdisc, fabric, tr.mtu_bytes as u64)?;
        sw.lb.per_tier(fabric)?;
        let mut pfc = sw.pfc.build(fabric, tr.mtu_bytes as u64)?;
        pfc.log_on = self.run.event_log;
        Ok((qdisc, pfc))
    }
}

/// The scenario file `path` names: itself, or for a run's output folder or its `summary.json`
/// the `resolved_scenario.toml` that run wrote beside it. The second value says it is a rerun.
pub fn scenario_file(path: &Path) -> Result<(PathBuf, bool)> {
    let folder = if path.is_dir() {
        path
    } else if path.file_name().is_some_and(|n| n == "summary.json") {
        path.parent().unwrap_or(Path::new(""))
    } else {
        return Ok((path.to_path_buf(), false));
    };
    let file = folder.join("resolved_scenario.toml");
    if !file.is_file() {
        return Err(Error::Io {
            path: file.display().to_string(),
            message: "not found: a run's folder holds the resolved_scenario.toml that reruns it, and this one has none (an older fabricsim wrote it, or the file was removed)".into(),
        });
    }
    Ok((file, true))
}

/// Loads, overrides and validates a scenario in one step: a scenario file (TOML, or an htsim
/// `.cm` matrix), or a previous run's folder or `summary.json` (its `resolved_scenario.toml`).
pub fn load(path: &Path, overrides: &[String]) -> Result<Setup> {
    load_within(path, overrides, Budget::of_machine())
}

/// [`load`] within a memory budget of its own (see [`Scenario::setup_within`]).
pub fn load_within(path: &Path, overrides: &[String], budget: Budget) -> Result<Setup> {
    let (path, _) = scenario_file(path)?;
    let path = path.as_path();
    let dir: PathBuf = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let scenario = if path.extension().is_some_and(|e| e == "cm") {
        Scenario::from_toml(&htsim_matrix_scenario(path)?, overrides)?
    } else {
        Scenario::from_file(path, overrides)?
    };
    scenario.setup_within(&dir, budget)
}

/// The scenario `fabricsim run MATRIX.cm` runs: the benchmark fabric for the matrix's `Nodes`
/// count, as the shared benchmark scenarios (`bench/perm_*.toml`) spell it — a 3-tier fat tree
/// of that many hosts, 400 Gb/s and 1 µs links, no switch latency, 4096 B packets with 64 B
/// headers, 1-BDP queues with ECN from 20 % to 80 %, trimming, a fixed 1-BDP window and
/// oblivious spraying — with the matrix as a `flow_list` workload. (htsim's benchmark runs pass
/// `-linkspeed 400000`; htsim's own default, which `from-htsim` keeps, is 100 Gb/s.) `--set` changes any of
/// it; a scenario file with `workload.kind = "flow_list"` and `file = "MATRIX.cm"` does the same
/// and can be edited.
pub fn htsim_matrix_scenario(path: &Path) -> Result<String> {
    let key = "workload.file";
    let text = crate::budget::read_input_file(path).map_err(|e| Error::invalid(key, format!("cannot read {}: {e}", path.display())))?;
    let nodes = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("Nodes").map(str::trim).filter(|n| !n.is_empty()))
        .ok_or_else(|| Error::invalid(key, format!("{}: an htsim matrix starts with `Nodes N`; without it the fabric's size is unknown", path.display())))?;
    let nodes: u32 = nodes.parse().map_err(|_| Error::invalid(key, format!("{}: `Nodes {}` is not a host count", path.display(), clip(nodes))))?;
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let quoted = toml::Value::String(file.clone()).to_string();
    Ok(format!(
        "name = {}\nseed = 1\n\n[topology]\nkind = \"fat_tree\"\nhosts = {nodes}\nlink_rate_gbps = 400\nlink_latency_ns = 1000\nswitch_latency_ns = 0\n\n\
         [switch]\nbuffer_bdp = 1.0\necn_kmin = 0.2\necn_kmax = 0.8\ntrimming = true\n\n\
         [transport]\nmtu_bytes = 4096\nheader_bytes = 64\ncc = \"fixed\"\nlb = \"spray\"\n\n\
         [workload]\nkind = \"flow_list\"\nfile = {quoted}\n",
        toml::Value::String(format!("htsim matrix {file}")),
    ))
}

