//! Scenario files (TOML): the schema with defaults, `--set` overrides, and validation into a
//! ready-to-run [`Setup`].
//!
//! Every struct denies unknown keys, so a typo is an error that names the key and the allowed
//! ones; every value is range-checked here, before anything runs or any file is written.

mod queues;
mod topology;
mod values;

pub use queues::{PortRules, QueueRule};
pub use values::{deserialize_params, ByteSize, NoParams, Ratio};

use crate::error::{Error, Result};
use crate::net::qdisc::QdiscTable;
use crate::topo::failures::FailuresConfig;
use crate::topo::{fat_tree, leaf_spine, Fabric, TierLinks};
use crate::transport::cc::CcConfig;
use crate::transport::lb::LbConfig;
use crate::units::{BitsPerSec, Time, NS};
use crate::transport::credit::CreditConfig;
use crate::transport::gate::GateConfig;
use crate::workload::graph::Traffic;
use crate::workload::WorkloadConfig;
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
}

/// Topology family.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// 3-tier k-ary fat tree (see [`fat_tree`]).
    #[default]
    FatTree,
    /// 2-tier leaf-spine (see [`leaf_spine`]).
    LeafSpine,
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
    pub link_rate_gbps: f64,
    /// Host-to-ToR links.
    pub host_link_rate_gbps: Option<f64>,
    /// ToR-to-aggregation (spine) links.
    pub tor_uplink_rate_gbps: Option<f64>,
    /// Aggregation-to-core links.
    pub agg_uplink_rate_gbps: Option<f64>,
    /// Propagation delay of every link unless overridden.
    pub link_latency_ns: f64,
    /// Propagation delay of host links.
    pub host_link_latency_ns: Option<f64>,
    /// Forwarding delay of every switch.
    pub switch_latency_ns: f64,
    /// Leaf-spine only, instead of `k`/`hosts`/`oversubscription`: number of ToRs.
    pub tors: Option<u32>,
    /// Leaf-spine only: hosts under each ToR.
    pub hosts_per_tor: Option<u32>,
    /// Leaf-spine only: number of spines.
    pub spines: Option<u32>,
    /// Leaf-spine only: parallel cables between each ToR and each spine (default 1).
    pub links_per_spine: Option<u32>,
    /// Uplinks failed at build time (`[topology.failures]`); kept last so that it serializes
    /// as a sub-table after the plain keys.
    pub failures: Option<FailuresConfig>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            kind: TopologyKind::FatTree,
            k: None,
            hosts: None,
            oversubscription: Ratio(1),
            oversubscribed_tier: OversubTier::Tor,
            link_rate_gbps: 400.0,
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
            failures: None,
        }
    }
}

/// `[switch]`: every switch output port.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchConfig {
    /// Data-queue buffer per port in bytes; overrides `buffer_bdp`.
    pub buffer_bytes: Option<ByteSize>,
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
            pfc: Default::default(),
            lb: Default::default(),
            ports: Default::default(),
            by_link_rate: Vec::new(),
        }
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
    /// Receiver sends one ACK per this many data packets (1 = per packet).
    pub ack_every: u32,
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
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            mtu_bytes: 4096,
            header_bytes: 64,
            ack_bytes: 64,
            ack_every: 1,
            rto_us: None,
            ecn_capable: true,
            cc: CcConfig::default(),
            lb: LbConfig::default(),
            gate: GateConfig::default(),
            credit: CreditConfig::default(),
            reliability: Default::default(),
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
    pub rate_gbps: Option<f64>,
    /// `down`/`up` only: routing re-converges this long after the event, excluding the links
    /// down at that moment; unset: routes never change (the papers' testbeds).
    pub reroute_after_us: Option<f64>,
}

/// `[run]`.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Stop at this simulated time even if flows remain (they are reported unfinished).
    pub end_time_us: Option<f64>,
    /// Stop with an error once no payload byte has been acknowledged for this long of
    /// simulated time while the network stays busy (a livelock, e.g. trimmed headers starving
    /// data); default 10 000 µs, 0 turns the guard off.
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
}

/// One `run.drop_packets` entry: the `transmission`-th transmission (1 = the original) of
/// packet `seq` of flow (connection) `flow` is lost.
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
    pub ports: [u32; 2],
    /// What.
    pub action: LinkAction,
    /// New rate for [`LinkAction::Rate`].
    pub rate: BitsPerSec,
}

/// Everything the engine needs, validated and derived.
pub struct Setup {
    /// The scenario as resolved (defaults filled, overrides applied).
    pub scenario: Scenario,
    /// The built fabric.
    pub fabric: Fabric,
    /// The workload as a graph of messages on connections.
    pub traffic: Arc<Traffic>,
    /// Switch port disciplines: the profiles and each port's.
    pub qdisc: QdiscTable,
    /// Round-trip time of the longest path with full packets.
    pub base_rtt: Time,
    /// Host rate × base RTT.
    pub bdp_bytes: u64,
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
    /// PFC state to start from (off unless enabled).
    pub pfc: crate::net::pfc::PfcState,
}

fn rate(key: &str, gbps: f64) -> Result<BitsPerSec> {
    if !(gbps.is_finite() && gbps > 0.0) {
        return Err(Error::invalid(key, format!("{gbps}: must be a positive rate in Gb/s")));
    }
    Ok(BitsPerSec::from_gbps(gbps))
}

fn nanos(key: &str, ns: f64) -> Result<Time> {
    if !(ns.is_finite() && ns >= 0.0) {
        return Err(Error::invalid(key, format!("{ns}: must be a non-negative time in nanoseconds")));
    }
    Ok((ns * NS as f64).round() as Time)
}

fn fraction(key: &str, v: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&v) {
        return Err(Error::invalid(key, format!("{v}: must be a fraction between 0 and 1")));
    }
    Ok(v)
}

impl Scenario {
    /// Parses a scenario from TOML text, applying `key.path=value` overrides first.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Scenario> {
        let mut value: toml::Value = text.parse::<toml::Table>().map(toml::Value::Table).map_err(|e| Error::Syntax(e.to_string()))?;
        for o in overrides {
            values::apply_override(&mut value, o)?;
        }
        values::expand_shorthands(&mut value);
        let de = value;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            // toml appends "in `key`" lines that repeat the path we already report.
            let inner: String = e.into_inner().to_string().lines().filter(|l| !l.starts_with("in `")).collect::<Vec<_>>().join(" ");
            let key = if path == "." { "(top level)".to_string() } else { path };
            Error::invalid(key, inner.trim_end().to_string())
        })
    }

    /// Reads and parses a scenario file.
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
        Self::from_toml(&text, overrides)
    }

    /// The scenario back as TOML (what `summary.json` and `check` show as "resolved").
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    fn build_fabric(&self) -> Result<Fabric> {
        let mut fabric = self.build_topology()?;
        if let Some(f) = &self.topology.failures {
            fabric.apply_failures(f.choose(&fabric, self.seed)?);
        }
        Ok(fabric)
    }

    fn build_topology(&self) -> Result<Fabric> {
        let t = &self.topology;
        let shape = topology::leaf_spine_shape(t)?;
        let base = rate("topology.link_rate_gbps", t.link_rate_gbps)?;
        let pick = |key: &str, v: Option<f64>| -> Result<BitsPerSec> { v.map(|g| rate(key, g)).unwrap_or(Ok(base)) };
        let lat = nanos("topology.link_latency_ns", t.link_latency_ns)?;
        let host_lat = match t.host_link_latency_ns {
            Some(v) => nanos("topology.host_link_latency_ns", v)?,
            None => lat,
        };
        let links = TierLinks {
            host: (pick("topology.host_link_rate_gbps", t.host_link_rate_gbps)?, host_lat),
            tor_up: (pick("topology.tor_uplink_rate_gbps", t.tor_uplink_rate_gbps)?, lat),
            agg_up: (pick("topology.agg_uplink_rate_gbps", t.agg_uplink_rate_gbps)?, lat),
        };
        let sw_lat = nanos("topology.switch_latency_ns", t.switch_latency_ns)?;
        let ratio = t.oversubscription.0;
        match t.kind {
            TopologyKind::FatTree => {
                let k = match (t.k, t.hosts) {
                    (Some(_), Some(_)) => return Err(Error::invalid("topology.hosts", "give either `k` or `hosts`, not both")),
                    (Some(k), None) => k,
                    (None, Some(h)) => fat_tree::radix_for_hosts(h)?,
                    (None, None) => 8,
                };
                if k > 128 {
                    return Err(Error::invalid("topology.k", format!("{k}: fat trees up to k=128 (524288 hosts) are supported")));
                }
                let at = match t.oversubscribed_tier {
                    OversubTier::Tor => fat_tree::OversubscribedTier::Tor,
                    OversubTier::Agg => fat_tree::OversubscribedTier::Agg,
                };
                fat_tree::build(k, ratio, at, links, sw_lat)
            }
            TopologyKind::LeafSpine => {
                if t.agg_uplink_rate_gbps.is_some() {
                    return Err(Error::invalid("topology.agg_uplink_rate_gbps", "a leaf-spine has no aggregation-to-core links; use tor_uplink_rate_gbps"));
                }
                if t.oversubscribed_tier != OversubTier::Tor {
                    return Err(Error::invalid("topology.oversubscribed_tier", "a leaf-spine is oversubscribed at the ToR only; allowed: \"tor\""));
                }
                if let Some(shape) = shape {
                    return leaf_spine::build_shape(shape, links, sw_lat);
                }
                let k = match (t.k, t.hosts) {
                    (Some(_), Some(_)) => return Err(Error::invalid("topology.hosts", "give either `k` or `hosts`, not both")),
                    (Some(k), None) => k,
                    (None, Some(h)) => leaf_spine::radix_for_hosts(h)?,
                    (None, None) => 16,
                };
                if k > 1024 {
                    return Err(Error::invalid("topology.k", format!("{k}: leaf-spines up to K=1024 are supported")));
                }
                leaf_spine::build(k, ratio, links, sw_lat)
            }
        }
    }

    /// Validates everything and builds the fabric and the flows. `base_dir` resolves file names
    /// in the scenario (the scenario file's folder).
    pub fn setup(self, base_dir: &Path) -> Result<Setup> {
        let tr = &self.transport;
        if tr.header_bytes == 0 || tr.mtu_bytes <= tr.header_bytes {
            return Err(Error::invalid(
                "transport.mtu_bytes",
                format!("{}: must exceed header_bytes ({}) so packets carry payload", tr.mtu_bytes, tr.header_bytes),
            ));
        }
        if tr.mtu_bytes > 65_535 {
            return Err(Error::invalid("transport.mtu_bytes", format!("{}: at most 65535 bytes", tr.mtu_bytes)));
        }
        if tr.ack_bytes == 0 || tr.ack_bytes > tr.mtu_bytes {
            return Err(Error::invalid("transport.ack_bytes", format!("{}: must be between 1 and mtu_bytes", tr.ack_bytes)));
        }
        if tr.ack_every == 0 || tr.ack_every > 64 {
            return Err(Error::invalid("transport.ack_every", format!("{}: must be between 1 and 64 packets", tr.ack_every)));
        }
        tr.cc.validate()?;
        tr.lb.validate()?;
        tr.credit.validate()?;
        tr.reliability.validate()?;
        let fabric = self.build_fabric()?;
        let (a, b) = fabric.farthest_pair();
        let base_rtt = fabric.base_rtt(a, b, tr.mtu_bytes as u64, tr.ack_bytes as u64);
        let host_rate = fabric.ports[fabric.host_port[0] as usize].rate;
        let bdp_bytes = host_rate.bytes_in(base_rtt);

        let sw = &self.switch;
        let cx = queues::Context { fabric: &fabric, bdp_bytes, mtu_bytes: tr.mtu_bytes as u64, header_bytes: tr.header_bytes };
        let qdisc = queues::resolve(sw, &cx)?;
        sw.lb.per_tier(&fabric)?;
        let mut pfc = sw.pfc.build(&fabric, tr.mtu_bytes as u64)?;
        pfc.log_on = self.run.event_log;

        let rto = match tr.rto_us {
            Some(us) => {
                let t = crate::workload::time_from_us("transport.rto_us", us)?;
                if t == 0 {
                    return Err(Error::invalid("transport.rto_us", "0: the retransmission timeout must be positive"));
                }
                t
            }
            // A lossless fabric loses nothing to congestion, and pauses can hold a packet far
            // longer than one port's buffer takes to drain: RoCE NICs use milliseconds (4 ms,
            // the HPCC ns-3 default the seqbalance spec §2.3.2 adopts).
            None if sw.pfc.enabled => 4 * crate::units::MS,
            None => {
                // Worst case of a packet that is not lost: the longest path's base RTT plus a full
                // data buffer drained at every hop, with a factor 2 of margin.
                let path = fabric.representative_path(a, b);
                let queueing: Time = path.iter().map(|&p| fabric.ports[p as usize].rate.tx_time(qdisc.of_port(p).buffer_bytes)).sum();
                base_rtt + 2 * queueing
            }
        };

        let mut link_events = Vec::new();
        for (i, ev) in self.link_events.iter().enumerate() {
            let key = format!("link_events[{i}]");
            let at = crate::workload::time_from_us(&format!("{key}.at_us"), ev.at_us)?;
            // `#i` picks the i-th of parallel cables (`links_per_spine`), as `check` names them.
            let (link, nth) = match ev.link.split_once('#') {
                Some((l, i)) => (l, i.parse::<usize>().map_err(|_| Error::invalid(format!("{key}.link"), format!("`{}`: `#` must be followed by a cable index", ev.link)))?),
                None => (ev.link.as_str(), 0),
            };
            let (x, y) = link.split_once('-').ok_or_else(|| {
                Error::invalid(format!("{key}.link"), format!("`{}`: expected NODE-NODE, e.g. \"tor0-agg1\"", ev.link))
            })?;
            let node = |n: &str| {
                fabric.node_by_name(n.trim()).ok_or_else(|| {
                    Error::invalid(format!("{key}.link"), format!("no node named `{n}` (names: host<i>, tor<i>, agg<i>, core<i>, spine<i>)"))
                })
            };
            let (na, nb) = (node(x)?, node(y)?);
            let pa = fabric.port_between(na, nb).ok_or_else(|| Error::invalid(format!("{key}.link"), format!("`{x}` and `{y}` are not linked")))?;
            let pa = fabric.parallel_ports(pa).get(nth).copied().ok_or_else(|| Error::invalid(format!("{key}.link"), format!("`{}`: no cable #{nth} between `{x}` and `{y}`", ev.link)))?;
            let pb = fabric.ports[pa as usize].reverse;
            let new_rate = match (ev.action, ev.rate_gbps) {
                (LinkAction::Rate, Some(g)) => rate(&format!("{key}.rate_gbps"), g)?,
                (LinkAction::Rate, None) => return Err(Error::invalid(format!("{key}.rate_gbps"), "missing: action \"rate\" needs rate_gbps")),
                (_, Some(_)) => return Err(Error::invalid(format!("{key}.rate_gbps"), "only allowed with action = \"rate\"")),
                (_, None) => BitsPerSec(0),
            };
            link_events.push(LinkEvent { at, ports: [pa, pb], action: ev.action, rate: new_rate });
            if let Some(us) = ev.reroute_after_us {
                let k = format!("{key}.reroute_after_us");
                if !matches!(ev.action, LinkAction::Down | LinkAction::Up) {
                    return Err(Error::invalid(k, "only allowed with action = \"down\" or \"up\" (a rate change leaves routes alone)"));
                }
                let after = crate::workload::time_from_us(&k, us)?;
                link_events.push(LinkEvent { at: at + after, ports: [pa, pb], action: LinkAction::Reroute, rate: BitsPerSec(0) });
            }
        }
        link_events.sort_by_key(|e| e.at);

        let end_time = match self.run.end_time_us {
            Some(us) => Some(crate::workload::time_from_us("run.end_time_us", us)?),
            None => None,
        };
        let stall_limit = crate::workload::time_from_us("run.stall_limit_us", self.run.stall_limit_us.unwrap_or(10_000.0))?;
        tr.gate.validate()?;
        let traffic = Arc::new(self.workload.generate(&fabric, self.seed, base_dir)?);
        let trace_interval = match self.run.trace_interval_us {
            Some(us) => {
                let t = crate::workload::time_from_us("run.trace_interval_us", us)?;
                if t == 0 {
                    return Err(Error::invalid("run.trace_interval_us", "0: the sampling period must be positive"));
                }
                t
            }
            None => 0,
        };
        let n_conns = traffic.conns.len() as u32;
        let trace_conns = match &self.run.trace_conns {
            Some(v) => {
                if let Some(&bad) = v.iter().find(|&&c| c >= n_conns) {
                    return Err(Error::invalid("run.trace_conns", format!("flow {bad} does not exist: the workload has flows 0..{}", n_conns - 1)));
                }
                v.clone()
            }
            None => (0..n_conns.min(16)).collect(),
        };
        let mut trace_ports = Vec::new();
        for (i, name) in self.run.trace_ports.iter().enumerate() {
            let key = format!("run.trace_ports[{i}]");
            let (x, y) = name.split_once('-').ok_or_else(|| Error::invalid(&key, format!("`{name}`: expected NODE-NODE, e.g. \"tor0-host3\"")))?;
            let node = |n: &str| fabric.node_by_name(n.trim()).ok_or_else(|| Error::invalid(&key, format!("no node named `{n}` (names: host<i>, tor<i>, agg<i>, core<i>, spine<i>)")));
            let (na, nb) = (node(x)?, node(y)?);
            trace_ports.push(fabric.port_between(na, nb).ok_or_else(|| Error::invalid(&key, format!("`{x}` and `{y}` are not linked")))?);
        }
        if let Some(&bad) = self.run.ack_log_conns.iter().find(|&&c| c >= n_conns) {
            return Err(Error::invalid("run.ack_log_conns", format!("flow {bad} does not exist: the workload has flows 0..{}", n_conns.saturating_sub(1))));
        }
        for (i, d) in self.run.drop_packets.iter().enumerate() {
            if d.flow >= n_conns {
                return Err(Error::invalid(format!("run.drop_packets[{i}].flow"), format!("flow {} does not exist: the workload has flows 0..{}", d.flow, n_conns.saturating_sub(1))));
            }
            if d.transmission == 0 {
                return Err(Error::invalid(format!("run.drop_packets[{i}].transmission"), "0: transmissions count from 1 (the original)"));
            }
        }
        if !trace_ports.is_empty() && trace_interval == 0 {
            return Err(Error::invalid("run.trace_ports", "tracing ports needs run.trace_interval_us (the sampling period)"));
        }
        Ok(Setup { scenario: self, fabric, traffic, qdisc, base_rtt, bdp_bytes, rto, link_events, end_time, stall_limit, trace_interval, trace_conns, trace_ports, pfc })
    }
}

/// Loads, overrides and validates a scenario file in one step.
pub fn load(path: &Path, overrides: &[String]) -> Result<Setup> {
    let scenario = Scenario::from_file(path, overrides)?;
    let dir: PathBuf = path.parent().map(Path::to_path_buf).unwrap_or_default();
    scenario.setup(&dir)
}

