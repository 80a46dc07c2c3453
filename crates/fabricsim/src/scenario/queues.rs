//! Per-port queue settings: `[switch]` is the default of every switch output port,
//! `[[switch.by_link_rate]]` overrides it on ports of one link rate, and `[switch.ports.<class>]`
//! on one tier's ports in one direction. Precedence, key by key: class rule > rate rule >
//! `[switch]`. Each port resolves to a [`QdiscConfig`]; equal ones share a profile of the
//! [`QdiscTable`].
//!
//! Rate rules exist because the DCQCN lineage scales ECN thresholds with the link rate (mcc spec
//! §2.10.1, seqbalance spec §2.4.8/A23); class rules because buffers and marking differ between
//! a ToR's host-facing and fabric-facing ports (lb-ai-training spec sizes queues per port).

use super::{MarkAtConfig, SwitchConfig, SWITCH_LIMITS};
use crate::scheme::validate_params;
use crate::error::{Error, Result};
use crate::net::qdisc::{ControlLane, MarkAt, QdiscConfig, QdiscTable};
use crate::scenario::ByteSize;
use crate::topo::{Fabric, Tier};
use crate::units::{BitsPerSec, Bytes, MAX_BUFFER_BYTES, show_num};
use serde::{Deserialize, Serialize};

/// Overrides of `[switch]` keys for some ports; an unset key falls through to the next rule.
/// Within one rule, `_bytes` spellings win over fractions and `buffer_bytes` over `buffer_bdp`,
/// as in `[switch]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueRule {
    /// `[[switch.by_link_rate]]` only: the (build-time) rate of the ports this rule applies to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<crate::units::Gbps>,
    /// Data-queue buffer in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<ByteSize>,
    /// Data-queue buffer in full packets (`transport.mtu_bytes` each), htsim's `-q`; between
    /// `buffer_bytes` and `buffer_bdp` in precedence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pkts: Option<u32>,
    /// Data-queue buffer as a multiple of the fabric BDP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_bdp: Option<f64>,
    /// ECN marking on or off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Kmin as a fraction of this port's own buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmin: Option<f64>,
    /// Kmax as a fraction of this port's own buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmax: Option<f64>,
    /// Kmin in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmin_bytes: Option<ByteSize>,
    /// Kmax in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmax_bytes: Option<ByteSize>,
    /// Marking probability at Kmax.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_pmax: Option<f64>,
    /// `"dequeue"` or `"enqueue"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_mark_at: Option<MarkAtConfig>,
    /// Trim would-be drops to headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trimming: Option<bool>,
}

/// `[switch.ports.<class>]`: rules per port class, named by the owner's tier and the direction.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PortRules {
    /// ToR ports towards hosts (the last hop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tor_down: Option<QueueRule>,
    /// ToR ports towards aggregation switches or spines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tor_up: Option<QueueRule>,
    /// Fat tree: aggregation ports towards ToRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agg_down: Option<QueueRule>,
    /// Fat tree: aggregation ports towards cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agg_up: Option<QueueRule>,
    /// Fat tree: core ports towards aggregation switches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_down: Option<QueueRule>,
    /// Leaf-spine: spine ports towards ToRs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spine_down: Option<QueueRule>,
    /// A server's scale-up switch: ports towards its GPUs (rail-optimized fabrics with
    /// `[topology.server] scale_up_gbps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up: Option<QueueRule>,
}

/// Port class names, in [`PortRules`] order.
pub const PORT_CLASSES: [&str; 7] = ["tor_down", "tor_up", "agg_down", "agg_up", "core_down", "spine_down", "scale_up"];

impl PortRules {
    /// Whether no class has a rule (then the table is not serialized).
    pub fn is_empty(&self) -> bool {
        self.rules().iter().all(Option::is_none)
    }

    pub(super) fn rules(&self) -> [Option<&QueueRule>; PORT_CLASSES.len()] {
        [&self.tor_down, &self.tor_up, &self.agg_down, &self.agg_up, &self.core_down, &self.spine_down, &self.scale_up].map(Option::as_ref)
    }
}

/// Index into [`PORT_CLASSES`] of switch port `p` of `fabric`; `None` for a host's NIC.
pub fn port_class(fabric: &Fabric, p: usize) -> Option<usize> {
    class_of(fabric, !fabric.three_tier, p)
}

/// Gives the switch ports that `[topology.failures]` slowed with `scale_queue = true` a profile
/// of their own (see [`scaled_profile`]).
pub fn scale_failed(table: &mut QdiscTable, fabric: &Fabric, mtu_bytes: u64) -> Result<()> {
    for l in fabric.failures.iter().filter(|l| l.scale_queue && l.loss.is_none()) {
        let Some(rate) = l.rate else { continue };
        for p in l.ports() {
            let idx = scaled_profile(table, fabric, p.idx(), rate, mtu_bytes)?;
            let old = table.port_profile[p.idx()] as usize;
            if port_class(fabric, p.idx()).is_some() {
                table.switch_ports[old] -= 1;
                table.switch_ports[idx as usize] += 1;
            }
            table.port_profile[p.idx()] = idx;
        }
    }
    Ok(())
}

/// The profile of port `p` run at `rate` with its queue scaled to it: its build-time profile
/// with buffer and ECN thresholds times `rate` / its nominal rate (at least one packet of
/// `mtu_bytes` of buffer), as htsim's `-failed` shrinks the queue of the slowed port. Added to
/// `table` if new; a host's NIC keeps its profile.
pub fn scaled_profile(table: &mut QdiscTable, fabric: &Fabric, p: usize, rate: BitsPerSec, mtu_bytes: u64) -> Result<u8> {
    let old = table.port_profile[p];
    let Some(class) = port_class(fabric, p) else { return Ok(old) };
    let nominal = fabric.ports[p].rate;
    let factor = rate.0 as f64 / nominal.0 as f64;
    let q = table.profiles[old as usize];
    if factor == 1.0 {
        return Ok(old);
    }
    let scale = |b: u64| (b as f64 * factor).round() as u64;
    let control = match q.control {
        ControlLane::Separate(b) => ControlLane::Separate(scale(b)),
        c => c,
    };
    let scaled = QdiscConfig { buffer_bytes: Bytes(scale(q.buffer_bytes.0).max(mtu_bytes)), kmin_bytes: Bytes(scale(q.kmin_bytes.0)), kmax_bytes: Bytes(scale(q.kmax_bytes.0)), control, ..q };
    let label = format!("{}@{}G slowed to {}G", PORT_CLASSES[class], nominal.gbps(), rate.gbps());
    let known = table.profiles.iter().position(|x| *x == scaled);
    let idx = table.add(scaled, if known.is_some_and(|i| table.labels[i].contains(&label)) { String::new() } else { label })?;
    table.profile_buffers = table.profiles.iter().map(|q| q.buffer_bytes.0).collect();
    Ok(idx)
}

fn class_of(fabric: &Fabric, leaf_spine: bool, p: usize) -> Option<usize> {
    let spec = &fabric.ports[p];
    let (owner, peer) = (fabric.tier[spec.owner.idx()], fabric.tier[spec.peer.idx()]);
    Some(match (owner, peer) {
        (Tier::Host, _) => return None,
        (Tier::ScaleUp, _) => 6,
        (Tier::Tor, Tier::Host) => 0,
        (Tier::Tor, _) => 1,
        (Tier::Agg, Tier::Tor) if leaf_spine => 5,
        (Tier::Agg, Tier::Tor) => 2,
        (Tier::Agg, _) => 3,
        (Tier::Core, _) => 4,
    })
}

/// One layer of settings for a port and the key path that names it in errors.
type Layer<'a> = (&'a QueueRule, String);

/// The value of the highest-precedence layer that sets it, with that layer's key prefix.
fn pick<'a, T>(layers: &'a [Layer<'a>], get: impl Fn(&QueueRule) -> Option<T>) -> (T, &'a str) {
    layers.iter().rev().find_map(|(r, k)| get(r).map(|v| (v, k.as_str()))).expect("[switch] sets every key")
}

/// A byte count given directly or as a fraction of something.
enum Amount {
    Bytes(u64),
    Of(f64, &'static str),
}

//= uec-spec §5: a queue of N full packets (htsim `-q`, htsim_eqds's default 35)
fn buffer_of(r: &QueueRule, mtu_bytes: u64) -> Option<Amount> {
    r.buffer_bytes
        .map(|b| Amount::Bytes(b.0))
        .or(r.buffer_pkts.map(|n| Amount::Bytes(n as u64 * mtu_bytes)))
        .or(r.buffer_bdp.map(|f| Amount::Of(f, "buffer_bdp")))
}

fn kmin_of(r: &QueueRule) -> Option<Amount> {
    r.ecn_kmin_bytes.map(|b| Amount::Bytes(b.0)).or(r.ecn_kmin.map(|f| Amount::Of(f, "ecn_kmin")))
}

fn kmax_of(r: &QueueRule) -> Option<Amount> {
    r.ecn_kmax_bytes.map(|b| Amount::Bytes(b.0)).or(r.ecn_kmax.map(|f| Amount::Of(f, "ecn_kmax")))
}

/// Everything [`resolve`] needs besides the rules.
pub struct Context<'a> {
    /// The fabric whose ports get profiles.
    pub fabric: &'a Fabric,
    /// Host rate × longest base RTT (what `buffer_bdp` multiplies).
    pub bdp_bytes: Bytes,
    /// Full packet size (buffers are rounded up to whole packets and hold at least one).
    pub mtu_bytes: Bytes,
    /// Trimmed header size.
    pub header_bytes: u32,
}

/// Resolves the profile of every port. Errors name the key path of the rule at fault; a rule
/// that matches no port is an error.
pub fn resolve(sw: &SwitchConfig, cx: &Context) -> Result<QdiscTable> {
    validate_params(sw, SWITCH_LIMITS, "switch")?;
    for (i, r) in sw.by_link_rate.iter().enumerate() {
        validate_params(r, SWITCH_LIMITS, &format!("switch.by_link_rate[{i}]"))?;
    }
    for (class, r) in PORT_CLASSES.iter().zip(sw.ports.rules()) {
        if let Some(r) = r {
            validate_params(r, SWITCH_LIMITS, &format!("switch.ports.{class}"))?;
        }
    }
    let global = QueueRule {
        rate_gbps: None,
        buffer_bytes: sw.buffer_bytes,
        buffer_pkts: sw.buffer_pkts,
        buffer_bdp: Some(sw.buffer_bdp),
        ecn: Some(sw.ecn),
        ecn_kmin: Some(sw.ecn_kmin),
        ecn_kmax: Some(sw.ecn_kmax),
        ecn_kmin_bytes: sw.ecn_kmin_bytes,
        ecn_kmax_bytes: sw.ecn_kmax_bytes,
        ecn_pmax: Some(sw.ecn_pmax),
        ecn_mark_at: Some(sw.ecn_mark_at),
        trimming: Some(sw.trimming),
    };
    let mut rates = Vec::with_capacity(sw.by_link_rate.len());
    for (i, r) in sw.by_link_rate.iter().enumerate() {
        let key = format!("switch.by_link_rate[{i}].rate_gbps");
        let g = r.rate_gbps.ok_or_else(|| Error::invalid(&key, "missing: each [[switch.by_link_rate]] entry names the rate it applies to"))?;
        let rate = super::rate(&key, g)?;
        if let Some(j) = rates.iter().position(|&x| x == rate) {
            return Err(Error::invalid(key, format!("{g} Gb/s: already covered by switch.by_link_rate[{j}]")));
        }
        rates.push(rate);
    }
    let classes = sw.ports.rules();
    for (c, r) in classes.iter().enumerate() {
        if r.is_some_and(|r| r.rate_gbps.is_some()) {
            return Err(Error::invalid(
                format!("switch.ports.{}.rate_gbps", PORT_CLASSES[c]),
                "only allowed in [[switch.by_link_rate]]; a class rule applies to its ports at any rate",
            ));
        }
    }
    let f = cx.fabric;
    let leaf_spine = !f.three_tier;
    // Ports of one (class, rate) resolve alike: resolve each pair once.
    let mut pairs: Vec<(Option<usize>, BitsPerSec, u8)> = Vec::new();
    let mut table = QdiscTable {
        profiles: Vec::new(),
        port_profile: Vec::with_capacity(f.ports.len()),
        switch_ports: Vec::new(),
        labels: Vec::new(),
        profile_buffers: Vec::new(),
        header_bytes: cx.header_bytes,
        control_wrr_weight: sw.control_wrr_weight,
        trimmed_headers: sw.trimmed_headers,
        control_bounded: sw.control_lane != super::ControlLaneConfig::Unbounded,
    };
    let default = profile(&[(&global, "switch".into())], sw, cx, "")?;
    table.add(default, String::new())?;
    let (mut rate_used, mut class_used) = (vec![false; rates.len()], [false; PORT_CLASSES.len()]);
    for p in 0..f.ports.len() {
        let (class, rate) = (class_of(f, leaf_spine, p), f.ports[p].rate);
        if let Some(&(_, _, idx)) = pairs.iter().find(|&&(c, r, _)| c == class && r == rate) {
            table.port_profile.push(idx);
            continue;
        }
        let idx = match class {
            None => 0,
            Some(c) => {
                let mut layers: Vec<Layer> = vec![(&global, "switch".into())];
                if let Some(i) = rates.iter().position(|&r| r == rate) {
                    rate_used[i] = true;
                    layers.push((&sw.by_link_rate[i], format!("switch.by_link_rate[{i}]")));
                }
                if let Some(r) = classes[c] {
                    class_used[c] = true;
                    layers.push((r, format!("switch.ports.{}", PORT_CLASSES[c])));
                }
                let label = format!("{}@{}G", PORT_CLASSES[c], rate.gbps());
                let q = profile(&layers, sw, cx, &label)?;
                table.add(q, label)?
            }
        };
        pairs.push((class, rate, idx));
        table.port_profile.push(idx);
    }
    for (p, &idx) in table.port_profile.iter().enumerate() {
        if class_of(f, leaf_spine, p).is_some() {
            table.switch_ports[idx as usize] += 1;
        }
    }
    if let Some(i) = rate_used.iter().position(|u| !u) {
        let mut seen: Vec<f64> = (0..f.ports.len()).filter(|&p| class_of(f, leaf_spine, p).is_some()).map(|p| f.ports[p].rate.gbps()).collect();
        seen.sort_by(f64::total_cmp);
        seen.dedup();
        let seen: Vec<String> = seen.iter().map(f64::to_string).collect();
        return Err(Error::invalid(
            format!("switch.by_link_rate[{i}].rate_gbps"),
            format!("{} Gb/s: no switch port runs at this rate (switch port rates here: {} Gb/s)", rates[i].gbps(), seen.join(", ")),
        ));
    }
    if let Some(c) = (0..6).find(|&c| classes[c].is_some() && !class_used[c]) {
        let present: Vec<&str> = (0..f.ports.len()).filter_map(|p| class_of(f, leaf_spine, p)).fold(Vec::new(), |mut v, c| {
            if !v.contains(&PORT_CLASSES[c]) {
                v.push(PORT_CLASSES[c]);
            }
            v
        });
        return Err(Error::invalid(
            format!("switch.ports.{}", PORT_CLASSES[c]),
            format!("this fabric has no such ports; its port classes: {}", present.join(", ")),
        ));
    }
    //= spec lb-ai-training.md LR-TRIM-RTS (the trimming switch returns the header)
    let trims = table.profiles.iter().zip(&table.switch_ports).any(|(q, &n)| q.trimming && n > 0);
    if !sw.trimmed_headers.is_default() && !trims {
        return Err(Error::invalid(
            "switch.trimmed_headers",
            "returns trimmed headers to their sender, but no switch port trims: it needs switch.trimming = true",
        ));
    }
    table.profile_buffers = table.profiles.iter().map(|q| q.buffer_bytes.0).collect();
    Ok(table)
}

impl QdiscTable {
    /// Index of profile `q`, adding it if new; `label` joins its list of users.
    fn add(&mut self, q: QdiscConfig, label: String) -> Result<u8> {
        let i = match self.profiles.iter().position(|p| *p == q) {
            Some(i) => i,
            None => {
                if self.profiles.len() == 256 {
                    return Err(Error::invalid("switch.by_link_rate", "more than 256 distinct queue profiles"));
                }
                self.profiles.push(q);
                self.switch_ports.push(0);
                self.labels.push(String::new());
                self.profiles.len() - 1
            }
        };
        if !label.is_empty() {
            let l = &mut self.labels[i];
            if !l.is_empty() {
                l.push_str(", ");
            }
            l.push_str(&label);
        }
        Ok(i as u8)
    }
}

/// The discipline `layers` (lowest precedence first) resolve to; `label` names the ports in
/// errors about a combination of rules (empty for `[switch]` alone).
fn profile(layers: &[Layer], sw: &SwitchConfig, cx: &Context, label: &str) -> Result<QdiscConfig> {
    let pfc = sw.pfc.enabled;
    let on = if label.is_empty() { String::new() } else { format!(" on {label} ports") };
    let (buf, bk) = pick(layers, |r| buffer_of(r, cx.mtu_bytes.0));
    let buffer = match buf {
        Amount::Bytes(b) => b,
        // A multiple in SWITCH_LIMITS' range; what it gives depends on the BDP.
        Amount::Of(bdp, name) => {
            // Whole packets, as htsim sizes a 1-BDP queue (626,688 B = 153 × 4096 B).
            let bytes = (bdp * cx.bdp_bytes.0 as f64).ceil();
            if bytes > MAX_BUFFER_BYTES as f64 {
                return Err(Error::invalid(format!("{bk}.{name}"), format!("{bdp} × {} bytes: allowed at most {MAX_BUFFER_BYTES} bytes (1 TiB) per port", cx.bdp_bytes)));
            }
            let bytes = bytes as u64;
            (bytes.div_ceil(cx.mtu_bytes.0) * cx.mtu_bytes).0
        }
    };
    if buffer < cx.mtu_bytes.0 {
        return Err(Error::invalid(
            format!("{bk}.buffer_bytes"),
            format!("{buffer}: a port must hold at least one full packet ({} bytes)", cx.mtu_bytes),
        ));
    }
    // Fractions resolve against this port's own buffer, whichever rule set it.
    // Byte counts and fractions lie in SWITCH_LIMITS' ranges.
    let threshold = |(a, _): (Amount, &str)| -> u64 {
        match a {
            Amount::Bytes(b) => b,
            Amount::Of(v, _) => (v * buffer as f64).round() as u64,
        }
    };
    let (kmin_at, kmax_at) = (pick(layers, kmin_of).1, pick(layers, kmax_of).1);
    let kmin = threshold(pick(layers, kmin_of));
    let kmax = threshold(pick(layers, kmax_of));
    if kmin > kmax {
        let whose = if kmin_at == kmax_at { String::new() } else { format!(" (Kmax from {kmax_at})") };
        return Err(Error::invalid(format!("{kmin_at}.ecn_kmin"), format!("Kmin ({kmin} B) must not exceed Kmax ({kmax} B){on}{whose}")));
    }
    // A queue never holds more than its buffer, so a threshold above it never marks.
    if !pfc && pick(layers, |r| r.ecn).0 && kmin > buffer {
        return Err(Error::invalid(
            format!("{kmin_at}.ecn_kmin_bytes"),
            format!("Kmin ({kmin} B) exceeds the port's {buffer}-byte buffer{on}: the queue never reaches it, so ECN would never mark; allowed up to the buffer (or set ecn = false)"),
        ));
    }
    let (trimming, tk) = pick(layers, |r| r.trimming);
    if pfc && trimming {
        let key = if tk == "switch" { "switch.pfc.enabled".to_string() } else { format!("{tk}.trimming") };
        return Err(Error::invalid(key, "PFC makes the data class lossless, so nothing is ever trimmed: set switch.trimming = false"));
    }
    let (pmax, _) = pick(layers, |r| r.ecn_pmax);
    Ok(QdiscConfig {
        // Under PFC a port's queue is bounded by the switch's shared buffer, not by a per-port
        // limit; the per-port buffer then only scales fractional thresholds.
        buffer_bytes: if pfc { Bytes(crate::net::qdisc::UNBOUNDED_BUFFER) } else { Bytes(buffer) },
        kmin_bytes: Bytes(kmin),
        kmax_bytes: Bytes(kmax),
        pmax,
        ecn: pick(layers, |r| r.ecn).0,
        mark_at: match pick(layers, |r| r.ecn_mark_at).0 {
            MarkAtConfig::Dequeue => MarkAt::Dequeue,
            MarkAtConfig::Enqueue => MarkAt::Enqueue,
        },
        trimming,
        control: control_lane(sw, buffer, trimming, cx.header_bytes as u64)?,
    })
}

/// The control-lane bound of a port with a `buffer`-byte data buffer.
fn control_lane(sw: &SwitchConfig, buffer: u64, trimming: bool, header_bytes: u64) -> Result<ControlLane> {
    use super::ControlLaneConfig as C;
    if sw.control_lane != C::Separate && sw.control_lane_factor.is_some() {
        return Err(Error::invalid("switch.control_lane_factor", "applies only to control_lane = \"separate\""));
    }
    Ok(match sw.control_lane {
        C::Unbounded => ControlLane::Unbounded,
        C::Separate => {
            let f = sw.control_lane_factor.unwrap_or(1.0);
            // `f` lies in SWITCH_LIMITS' range; what it gives depends on the buffer.
            if f * buffer as f64 > MAX_BUFFER_BYTES as f64 {
                return Err(Error::invalid(
                    "switch.control_lane_factor",
                    format!("{f}: must be a positive multiple of the port's {buffer}-byte buffer, giving at most {MAX_BUFFER_BYTES} bytes (1 TiB)"),
                ));
            }
            let lane = (f * buffer as f64).round() as u64;
            // A lane that cannot hold one ACK drops every ACK: no run could finish.
            if lane < header_bytes {
                return Err(Error::invalid(
                    "switch.control_lane_factor",
                    format!("{}: a lane of {lane} bytes ({} × the {buffer}-byte buffer) cannot hold one ACK or header ({header_bytes} bytes, transport.header_bytes); allowed from {}", show_num(f), show_num(f), show_num(header_bytes as f64 / buffer as f64)),
                ));
            }
            ControlLane::Separate(lane)
        }
        C::Shared if !trimming => {
            return Err(Error::invalid(
                "switch.control_lane",
                "\"shared\" evicts data by trimming it: it needs switch.trimming = true (allowed without trimming: \"unbounded\", \"separate\")",
            ))
        }
        C::Shared => ControlLane::Shared,
    })
}

#[cfg(test)]
mod tests {
    use crate::units::Bytes;
    use crate::error::Error;
    use crate::net::qdisc::QdiscConfig;
    use crate::scenario::{Scenario, Setup};
    use std::path::Path;

    /// A k=4 fat tree (16 hosts; 16 ToR-down, 16 ToR-up, 16 agg-down, 16 agg-up, 16 core-down
    /// ports) with 100 G host links and 400 G fabric links, 1 MiB default buffers.
    fn setup(extra: &str) -> Result<Setup, Error> {
        let text = format!(
            "[topology]\nk = 4\nlink_rate_gbps = 400\nhost_link_rate_gbps = 100\n[switch]\nbuffer_bytes = \"1MiB\"\n{extra}\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n"
        );
        Scenario::from_toml(&text, &[])?.setup(Path::new("."))
    }

    fn key_of(e: Error) -> String {
        match e {
            Error::Invalid { key, .. } => key,
            other => panic!("expected an invalid key, got {other}"),
        }
    }

    /// Profile of the ports labelled `class@rate`, and how many switch ports use it.
    fn profile<'a>(s: &'a Setup, label: &str) -> (&'a QdiscConfig, u32) {
        let t = &s.qdisc;
        let i = t.labels.iter().position(|l| l.split(", ").any(|x| x == label)).unwrap_or_else(|| panic!("no {label} in {:?}", t.labels));
        (&t.profiles[i], t.switch_ports[i])
    }

    #[test]
    fn no_rules_one_profile_for_every_port() {
        let s = setup("").unwrap();
        assert_eq!(s.qdisc.profiles.len(), 1);
        assert_eq!(s.qdisc.switch_ports, [80]);
        let q = &s.qdisc.profiles[0];
        assert_eq!((q.buffer_bytes.0, q.kmin_bytes.0, q.kmax_bytes.0), (1 << 20, 209_715, 838_861));
    }

    #[test]
    fn tier_rule_applies_to_its_class_only_and_fractions_follow_its_buffer() {
        let s = setup("[switch.ports.tor_down]\nbuffer_bytes = \"64KiB\"").unwrap();
        assert_eq!(s.qdisc.profiles.len(), 2);
        let (q, n) = profile(&s, "tor_down@100G");
        // Kmin/Kmax stay [switch]'s fractions 0.2/0.8, now of the port's own 64 KiB.
        assert_eq!((q.buffer_bytes.0, q.kmin_bytes.0, q.kmax_bytes.0, n), (65_536, 13_107, 52_429, 16));
        let (q, n) = profile(&s, "agg_down@400G");
        assert_eq!((q.buffer_bytes.0, q.kmin_bytes.0, n), (1 << 20, 209_715, 64));
        // Host NICs keep the [switch] profile.
        assert_eq!(s.qdisc.of_port(s.fabric.host_port[0].0).buffer_bytes, Bytes(1 << 20));
    }

    //= type=test; mcc spec §2.10.1: Kmin/Kmax/Pmax 1600 KB / 6400 KB / 0.2 on 400 G ports
    #[test]
    fn rate_rule_applies_to_ports_of_its_rate() {
        // (MCC runs them under PFC; without it a port needs a buffer above Kmin.)
        let s = setup("[[switch.by_link_rate]]\nrate_gbps = 400\nbuffer_bytes = \"8MiB\"\necn_kmin_bytes = \"1600KB\"\necn_kmax_bytes = \"6400KB\"\necn_pmax = 0.2").unwrap();
        let (q, n) = profile(&s, "tor_up@400G");
        assert_eq!((q.kmin_bytes.0, q.kmax_bytes.0, q.pmax, n), (1_600_000, 6_400_000, 0.2, 64));
        let mut fast: Vec<&str> = s.qdisc.labels[1].split(", ").collect();
        fast.sort();
        assert_eq!(fast, ["agg_down@400G", "agg_up@400G", "core_down@400G", "tor_up@400G"]);
        let (q, n) = profile(&s, "tor_down@100G");
        assert_eq!((q.kmin_bytes.0, q.pmax, n), (209_715, 1.0, 16));
    }

    #[test]
    fn class_rule_beats_rate_rule_key_by_key() {
        let s = setup(
            "[switch.ports.tor_up]\necn_kmin = 0.1\nbuffer_bytes = \"2MiB\"\n\
             [[switch.by_link_rate]]\nrate_gbps = 400\necn_kmin_bytes = \"400KB\"\necn_kmax_bytes = \"1600KB\"\necn_pmax = 0.2",
        )
        .unwrap();
        // tor_up: Kmin from its class rule (a fraction of its own 2 MiB, beating the rate
        // rule's bytes), Kmax and Pmax from the rate rule.
        let (q, _) = profile(&s, "tor_up@400G");
        assert_eq!((q.buffer_bytes.0, q.kmin_bytes.0, q.kmax_bytes.0, q.pmax), (2 << 20, 209_715, 1_600_000, 0.2));
        let (q, _) = profile(&s, "agg_up@400G");
        assert_eq!((q.buffer_bytes.0, q.kmin_bytes.0, q.kmax_bytes.0), (1 << 20, 400_000, 1_600_000));
        assert_eq!(s.qdisc.profiles.len(), 3);
    }

    #[test]
    fn rules_that_match_nothing_or_contradict_are_errors_naming_the_key() {
        let k = |extra| key_of(setup(extra).err().expect("rejected"));
        assert_eq!(k("[switch.ports.spine_down]\necn = false"), "switch.ports.spine_down");
        assert_eq!(k("[[switch.by_link_rate]]\nrate_gbps = 800\necn = false"), "switch.by_link_rate[0].rate_gbps");
        assert_eq!(k("[[switch.by_link_rate]]\necn = false"), "switch.by_link_rate[0].rate_gbps");
        assert_eq!(k("[switch.ports.tor_up]\nrate_gbps = 400"), "switch.ports.tor_up.rate_gbps");
        assert_eq!(k("[switch.ports.tor_up]\necn_kmin_bytes = \"900KiB\""), "switch.ports.tor_up.ecn_kmin");
        assert_eq!(k("[switch.ports.agg_up]\necn_kmax = 1.5"), "switch.ports.agg_up.ecn_kmax");
        assert_eq!(k("[switch.ports.core_down]\nbuffer_bytes = 100"), "switch.ports.core_down.buffer_bytes");
        let e = setup("[switch.ports.tor_dwn]\necn = false").err().unwrap().to_string();
        assert!(e.contains("tor_dwn") && e.contains("tor_down") && e.contains("spine_down"), "{e}");
        let e = setup("[switch.ports.tor_down]\nkmin = 3").err().unwrap().to_string();
        assert!(e.contains("kmin") && e.contains("ecn_kmin_bytes"), "{e}");
    }
}
