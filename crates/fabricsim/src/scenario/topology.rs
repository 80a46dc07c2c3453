//! `[topology]` into a [`Fabric`]: the family and its size, link rates and latencies per tier,
//! the explicit leaf-spine shape (with per-spine cable rates) or 3-tier shape, and the cables
//! failed at build time.

use super::{nanos, rate, CrossRail, OversubTier, Scenario, ServerConfig, TopologyConfig, TopologyKind};
use crate::error::{Error, Result};
use crate::topo::fat_tree::PodShape;
use crate::topo::leaf_spine::Shape;
use crate::budget::Budget;
use crate::topo::rail_optimized::{self, Servers, Wiring};
use crate::topo::racks;
use crate::topo::rail_only;
use crate::topo::{fat_tree, leaf_spine, Fabric, FabricSize, TierLinks};
use crate::topo::failures::FailuresConfig;
use crate::units::BitsPerSec;

impl TopologyConfig {
    /// The entries of `[topology.failures]` (one, or each of `[[topology.failures]]`) that are
    /// on (`enabled` unset or true), with the key each is written under.
    pub fn active_failures(&self) -> Vec<(String, &FailuresConfig)> {
        self.failures.as_ref().map_or_else(Vec::new, |f| f.active())
    }

    /// The first active failure entry's own `seed`, if it gives one (`summary.json`
    /// `failure_seed`, `check`); each entry draws from its own seed, else the master seed.
    pub fn first_failure_seed(&self) -> Option<u64> {
        self.active_failures().first().and_then(|(_, f)| f.seed)
    }
}

/// A fabric validated and counted from `[topology]`, not yet built: setup checks the workload's
/// counts against [`FabricPlan::size`] before [`FabricPlan::build`] spends seconds on a large
/// fabric's route table, so that an oversized scenario is refused at once.
pub(crate) struct FabricPlan {
    /// The counts the fabric will have.
    pub size: FabricSize,
    /// The rate of every host's link (all hosts of a tiered fabric share it).
    pub host_rate: BitsPerSec,
    /// The key that makes the fabric large, for a refusal.
    pub sized_by: &'static str,
    /// The hosts a workload addresses ([`Fabric::ranks`]).
    pub ranks: u32,
    build: Box<dyn FnOnce() -> Result<Fabric>>,
}

impl FabricPlan {
    fn new(sized_by: &'static str, size: FabricSize, host_rate: BitsPerSec, build: impl FnOnce() -> Result<Fabric> + 'static) -> FabricPlan {
        FabricPlan { size, host_rate, sized_by, ranks: size.hosts() as u32, build: Box::new(build) }
    }
}

impl Scenario {
    /// The fabric as `[topology]` describes it, counted and admitted against `budget` but not
    /// built; [`Scenario::build_fabric`] builds it.
    pub(super) fn plan_fabric(&self, budget: Budget) -> Result<FabricPlan> {
        let plan = self.plan_topology()?;
        budget.admit(plan.sized_by, plan.size.bytes(), || plan.size.describe())?;
        Ok(plan)
    }

    /// Builds a planned fabric and applies `[topology.failures]` to it.
    pub(super) fn build_fabric(&self, plan: FabricPlan) -> Result<Fabric> {
        let mut fabric = (plan.build)()?;
        debug_assert_eq!(fabric.size(), plan.size, "the plan counts what it builds");
        let entries = self.topology.active_failures();
        // Per cable (by its lower port), the entry that failed it: a cable may be in one entry
        // only, or two would each claim its rate and its loss.
        let mut claimed: Vec<Option<usize>> = vec![None; fabric.ports.len()];
        for (n, (key, f)) in entries.iter().enumerate() {
            // Each entry draws from its own seed, else the master seed (as before the key
            // existed, so that outputs of older scenarios do not move).
            let chosen = f.choose(&fabric, f.seed.unwrap_or(self.seed)).map_err(|e| e.moved("topology.failures", key))?;
            for l in &chosen.links {
                if let Some(first) = claimed[l.up.idx()].replace(n) {
                    return Err(Error::invalid(key, format!("`{}` is failed by {} already: a cable may be in one entry only", fabric.link_name(l.up), entries[first].0)));
                }
            }
            fabric.apply_failures(chosen);
        }
        Ok(fabric)
    }

    /// The intact fabric's plan: the family, its size and the rate and latency of each tier,
    /// every key checked.
    fn plan_topology(&self) -> Result<FabricPlan> {
        let t = &self.topology;
        if !t.kind.has_servers() {
            let servers = [("servers", t.servers.is_some()), ("servers_per_su", t.servers_per_su.is_some()), ("tiers", t.tiers.is_some()), ("planes", t.planes.is_some()), ("dual_tor", t.dual_tor.is_some()), ("nic_port_choice", t.nic_port_choice.is_some()), ("server", t.server.is_some())];
            refuse_given(&servers, "only for kind = \"rail_optimized\", \"rail_only\" or \"racks\" (fabrics of multi-GPU servers)")?;
        }
        let (shape, pods) = if t.kind.has_servers() { (None, None) } else { (leaf_spine_shape(t)?, pod_shape(t)?) };
        let base = rate("topology.link_rate_gbps", t.link_rate_gbps)?;
        let pick = |key: &str, v: Option<crate::units::Gbps>| -> Result<BitsPerSec> { v.map(|g| rate(key, g)).unwrap_or(Ok(base)) };
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
        let host_rate = links.host.0;
        let sw_lat = nanos("topology.switch_latency_ns", t.switch_latency_ns)?;
        let ratio = t.oversubscription.0;
        // The key that sizes a radix-built fabric.
        let sized_by = if t.hosts.is_some() { "topology.hosts" } else { "topology.k" };
        match t.kind {
            TopologyKind::FatTree => {
                if t.spine_link_rates_gbps.is_some() {
                    return Err(Error::invalid("topology.spine_link_rates_gbps", "only for kind = \"leaf_spine\" with explicit `tors`, `hosts_per_tor`, `spines`"));
                }
                if let Some(shape) = pods {
                    if t.oversubscribed_tier != OversubTier::Tor {
                        return Err(Error::invalid(
                            "topology.oversubscribed_tier",
                            "not allowed with explicit `pods`/`tors_per_pod`/`aggs_per_pod`/`hosts_per_tor`/`cores`: the ratios follow from those counts and the link rates",
                        ));
                    }
                    shape.check()?;
                    return Ok(FabricPlan::new("topology.pods", shape.size(), host_rate, move || fat_tree::build_pods(shape, links, sw_lat)));
                }
                let k = radix(t, fat_tree::radix_for_hosts, 8)?;
                if k > fat_tree::MAX_K {
                    return Err(Error::invalid("topology.k", format!("{k}: fat trees up to k={} (524288 hosts) are supported", fat_tree::MAX_K)));
                }
                let at = match t.oversubscribed_tier {
                    OversubTier::Tor => fat_tree::OversubscribedTier::Tor,
                    OversubTier::Agg => fat_tree::OversubscribedTier::Agg,
                };
                Ok(FabricPlan::new(sized_by, fat_tree::shape(k, ratio, at)?.size(), host_rate, move || fat_tree::build(k, ratio, at, links, sw_lat)))
            }
            TopologyKind::LeafSpine => {
                if t.agg_uplink_rate_gbps.is_some() {
                    return Err(Error::invalid("topology.agg_uplink_rate_gbps", "a leaf-spine has no aggregation-to-core links; use tor_uplink_rate_gbps"));
                }
                if t.oversubscribed_tier != OversubTier::Tor {
                    return Err(Error::invalid("topology.oversubscribed_tier", "a leaf-spine is oversubscribed at the ToR only; allowed: \"tor\""));
                }
                if let Some(shape) = shape {
                    shape.check()?;
                    let rates = spine_rates(t)?;
                    return Ok(FabricPlan::new("topology.tors", shape.size(), host_rate, move || leaf_spine::build_shape(shape, links, &rates, sw_lat)));
                }
                if t.spine_link_rates_gbps.is_some() {
                    return Err(Error::invalid("topology.spine_link_rates_gbps", "only with the explicit counts `tors`, `hosts_per_tor`, `spines`"));
                }
                let k = radix(t, leaf_spine::radix_for_hosts, 16)?;
                if k > leaf_spine::MAX_K {
                    return Err(Error::invalid("topology.k", format!("{k}: leaf-spines up to K={} are supported", leaf_spine::MAX_K)));
                }
                Ok(FabricPlan::new(sized_by, leaf_spine::shape(k, ratio)?.size(), host_rate, move || leaf_spine::build(k, ratio, links, sw_lat)))
            }
            TopologyKind::RailOptimized | TopologyKind::RailOnly | TopologyKind::Racks => {
                let shape = rail_shape(t)?;
                let plan = FabricPlan::new("topology.servers", shape.size(), host_rate, move || Ok(rail_optimized::build(shape, links, sw_lat)));
                Ok(FabricPlan { ranks: shape.gpus() as u32, ..plan })
            }
        }
    }
}

/// The switch radix: `k` as given, or the one that fits `hosts` (`for_hosts`), or `default`.
fn radix(t: &TopologyConfig, for_hosts: fn(u32) -> Result<u32>, default: u32) -> Result<u32> {
    match (t.k, t.hosts) {
        (Some(_), Some(_)) => Err(Error::invalid("topology.hosts", "give either `k` or `hosts`, not both")),
        (Some(k), None) => Ok(k),
        (None, Some(h)) => for_hosts(h),
        (None, None) => Ok(default),
    }
}

/// The rail-optimized or rail-only shape of `[topology]`: `servers`, `servers_per_su` (default
/// 32), `[topology.server] gpus` (default 8), `oversubscription` and optionally `spines`, and
/// for a rail-optimized fabric `tiers` (default 2) and (3 tiers) `cores`; the keys of the other
/// families refused by name.
fn rail_shape(t: &TopologyConfig) -> Result<rail_optimized::Shape> {
    let (name, _, sized_by) = kind_names(t.kind);
    let foreign = [
        ("k", t.k.is_some()),
        ("hosts", t.hosts.is_some()),
        ("tors", t.tors.is_some()),
        ("hosts_per_tor", t.hosts_per_tor.is_some()),
        ("links_per_spine", t.links_per_spine.is_some()),
        ("spine_link_rates_gbps", t.spine_link_rates_gbps.is_some()),
        ("pods", t.pods.is_some()),
        ("tors_per_pod", t.tors_per_pod.is_some()),
        ("aggs_per_pod", t.aggs_per_pod.is_some()),
    ];
    refuse_given(&foreign, &format!("not a key of kind = \"{name}\": {sized_by}"))?;
    let rail_only = t.kind == TopologyKind::RailOnly;
    if rail_only {
        let foreign = [("tiers", t.tiers.is_some()), ("cores", t.cores.is_some()), ("agg_uplink_rate_gbps", t.agg_uplink_rate_gbps.is_some())];
        refuse_given(&foreign, &format!("not a key of kind = \"rail_only\", whose rails are one switch each or 2-tier networks of their own: {sized_by}"))?;
    }
    let tiers = t.tiers.unwrap_or(2);
    if tiers == 2 && t.agg_uplink_rate_gbps.is_some() {
        return Err(Error::invalid("topology.agg_uplink_rate_gbps", "only with tiers = 3: the spine-to-core links of a 3-tier rail-optimized fabric"));
    }
    if t.oversubscribed_tier != OversubTier::Tor {
        return Err(Error::invalid("topology.oversubscribed_tier", "a rail-optimized fabric is oversubscribed at the leaves only; allowed: \"tor\""));
    }
    let servers = t.servers.ok_or_else(|| Error::invalid("topology.servers", format!("missing: kind = \"{name}\" needs the number of servers")))?;
    let server = t.server.clone().unwrap_or_default();
    let scale_up = scale_up(&server)?;
    if rail_only && server.cross_rail == Some(CrossRail::Spine) {
        return Err(Error::invalid(
            "topology.server.cross_rail",
            "\"spine\": a rail-only fabric has no spine joining its rails; GPUs on different rails of different servers meet by forwarding over the scale-up domain; allowed: \"pxn\" (the default)",
        ));
    }
    if t.kind == TopologyKind::Racks && server.cross_rail == Some(CrossRail::Pxn) {
        return Err(Error::invalid("topology.server.cross_rail", "\"pxn\": a rack-wired fabric has no rails to relay onto (each server's GPUs share a leaf); allowed: \"spine\""));
    }
    let planes = t.planes.unwrap_or(1);
    if !(1..=MAX_PLANES).contains(&planes) {
        return Err(Error::invalid("topology.planes", format!("{planes}: allowed 1..={MAX_PLANES} (independent copies of the scale-out fabric, a NIC port on each)")));
    }
    let dual_tor = t.dual_tor == Some(true);
    if t.nic_port_choice.is_some() && planes == 1 && !dual_tor {
        return Err(Error::invalid("topology.nic_port_choice", "only where each NIC has several ports: with planes > 1 or dual_tor = true"));
    }
    let port_choice = t.nic_port_choice.unwrap_or_default();
    let layout = Servers { servers, gpus_per_server: server.gpus, servers_per_su: t.servers_per_su.unwrap_or(DEFAULT_SERVERS_PER_SU), scale_up, wiring: Wiring::Rails, planes, dual_tor, port_choice };
    match t.kind {
        TopologyKind::RailOnly => rail_only::shape(layout, t.oversubscription.0, t.spines),
        TopologyKind::Racks => racks::shape(layout, t.oversubscription.0, t.spines, tiers, t.cores),
        _ => rail_optimized::Shape::new(layout, t.oversubscription.0, t.spines, tiers, t.cores),
    }
}

/// Whether a collective's messages between GPUs on different rails of different servers are
/// relayed over the scale-up domain: `cross_rail = "pxn"`, or a rail-only fabric with a
/// scale-up domain (its only way across).
pub(super) fn relays_cross_rail(t: &TopologyConfig) -> bool {
    let server = t.server.as_ref();
    match t.kind {
        TopologyKind::RailOnly => server.is_some_and(|s| s.scale_up_gbps.is_some()),
        _ => server.and_then(|s| s.cross_rail) == Some(CrossRail::Pxn),
    }
}

/// A fabric family's key (`topology.kind`), its name in prose, and what sizes it.
fn kind_names(kind: TopologyKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        TopologyKind::FatTree => ("fat_tree", "fat tree", "a fat tree is sized by `k` or `hosts`, or by `pods`, `tors_per_pod`, `aggs_per_pod`, `hosts_per_tor`, `cores`"),
        TopologyKind::LeafSpine => ("leaf_spine", "leaf-spine", "a leaf-spine is sized by `k` or `hosts`, or by `tors`, `hosts_per_tor`, `spines`"),
        TopologyKind::RailOptimized => ("rail_optimized", "rail-optimized fabric", RAIL_SIZED_BY),
        TopologyKind::RailOnly => ("rail_only", "rail-only fabric", "a rail-only fabric is sized by `servers`, `servers_per_su`, `[topology.server] gpus`, `oversubscription` and `spines`"),
        TopologyKind::Racks => ("racks", "rack-wired fabric", "a rack-wired fabric is sized by `servers`, `servers_per_su`, `[topology.server] gpus`, `tiers`, `oversubscription`, `spines` and `cores`"),
    }
}

//= type=assumption
//# NVLink/NVSwitch-class scale-up is described publicly as "sub-microsecond" GPU to GPU; with
//# two links of this delay and the switch latency, a GPU-to-GPU transfer takes 300 ns plus it.
/// Propagation delay of a GPU's link to its server's scale-up switch when
/// `scale_up_latency_ns` is not given.
const DEFAULT_SCALE_UP_LATENCY_NS: f64 = 150.0;

/// The scale-up domain `[topology.server]` asks for (`scale_up_gbps`, `scale_up_latency_ns`).
fn scale_up(server: &ServerConfig) -> Result<Option<rail_optimized::ScaleUp>> {
    let Some(gbps) = server.scale_up_gbps else {
        if server.scale_up_latency_ns.is_some() {
            return Err(Error::invalid("topology.server.scale_up_latency_ns", "only with `scale_up_gbps` (the scale-up domain's per-GPU rate), which models the domain"));
        }
        if server.cross_rail == Some(super::CrossRail::Pxn) {
            return Err(Error::invalid("topology.server.cross_rail", "\"pxn\" relays over the servers' scale-up domain, which `scale_up_gbps` models: set it, or allowed \"spine\""));
        }
        return Ok(None);
    };
    let rate = rate("topology.server.scale_up_gbps", gbps)?;
    let latency = nanos("topology.server.scale_up_latency_ns", server.scale_up_latency_ns.unwrap_or(DEFAULT_SCALE_UP_LATENCY_NS))?;
    Ok(Some(rail_optimized::ScaleUp { rate, latency }))
}

//= type=assumption
//# Multi-plane designs use 2 to 4 planes (Alibaba HPN: 2; NICs with 2 or 4 ports); a send is
//# striped over the planes and over its queue pairs, at most 16 parts in all.
/// Most planes a fabric of servers may have.
const MAX_PLANES: u32 = 8;

/// The keys that size a rail-optimized fabric, for the messages refusing others.
const RAIL_SIZED_BY: &str = "a rail-optimized fabric is sized by `servers`, `servers_per_su`, `[topology.server] gpus`, `tiers`, `oversubscription`, `spines` and `cores`";

/// Refuses the first of `keys` (`topology.<key>`, whether given) that is given, saying `why`.
fn refuse_given(keys: &[(&str, bool)], why: &str) -> Result<()> {
    match keys.iter().find(|(_, given)| *given) {
        Some((key, _)) => Err(Error::invalid(format!("topology.{key}"), why)),
        None => Ok(()),
    }
}

//= type=assumption
//# NVIDIA's DGX SuperPOD reference architecture builds its fabric of scalable units of 32
//# servers (DGX H100: 31 or 32 nodes per SU, leaves of 64 ports).
/// Servers per scalable unit when `servers_per_su` is not given.
const DEFAULT_SERVERS_PER_SU: u32 = 32;

/// The explicit leaf-spine shape given in `[topology]`, if any: `tors`, `hosts_per_tor` and
/// `spines` (and optionally `links_per_spine`, default 1), for a leaf-spine only and instead of
/// `k`, `hosts` and `oversubscription`.
fn leaf_spine_shape(t: &TopologyConfig) -> Result<Option<Shape>> {
    let given = [("tors", t.tors), ("spines", t.spines), ("links_per_spine", t.links_per_spine), ("hosts_per_tor", t.hosts_per_tor)];
    // `hosts_per_tor` belongs to a fat tree's explicit shape too.
    let own = if t.kind == TopologyKind::LeafSpine { &given[..] } else { &given[..3] };
    let Some(c) = explicit_counts(t, TopologyKind::LeafSpine, own, "`tors`, `hosts_per_tor`, `spines`")? else {
        return Ok(None);
    };
    Ok(Some(Shape { tors: c.need("tors", t.tors)?, hosts_per_tor: c.need("hosts_per_tor", t.hosts_per_tor)?, spines: c.need("spines", t.spines)?, links_per_spine: t.links_per_spine.unwrap_or(1) }))
}

//= seqbalance §5.3, §8 A22; type=assumption
//# The 16-core, 20-agg, 20-ToR "FatTree" is HPCC's 5-pod wiring, given by per-tier counts.
/// The explicit 3-tier shape given in `[topology]`, if any: `pods`, `tors_per_pod`,
/// `aggs_per_pod`, `hosts_per_tor` and `cores`, all required together, for a fat tree only and
/// instead of `k`, `hosts` and `oversubscription`.
fn pod_shape(t: &TopologyConfig) -> Result<Option<PodShape>> {
    let given = [("pods", t.pods), ("tors_per_pod", t.tors_per_pod), ("aggs_per_pod", t.aggs_per_pod), ("cores", t.cores), ("hosts_per_tor", t.hosts_per_tor)];
    let own = if t.kind == TopologyKind::FatTree { &given[..] } else { &given[..4] };
    let all = "`pods`, `tors_per_pod`, `aggs_per_pod`, `hosts_per_tor`, `cores`";
    let Some(c) = explicit_counts(t, TopologyKind::FatTree, own, all)? else {
        return Ok(None);
    };
    Ok(Some(PodShape {
        pods: c.need("pods", t.pods)?,
        tors_per_pod: c.need("tors_per_pod", t.tors_per_pod)?,
        aggs_per_pod: c.need("aggs_per_pod", t.aggs_per_pod)?,
        hosts_per_tor: c.need("hosts_per_tor", t.hosts_per_tor)?,
        cores: c.need("cores", t.cores)?,
    }))
}

/// What an explicit shape needs, for the message naming a missing count.
struct Needs {
    kind: &'static str,
    keys: &'static str,
}

impl Needs {
    fn need(&self, key: &str, v: Option<u32>) -> Result<u32> {
        v.ok_or_else(|| Error::invalid(format!("topology.{key}"), format!("missing: an explicit {} needs {}", self.kind, self.keys)))
    }
}

/// Whether any of the shape keys `given` of topology `kind` is set (`None` when none is); errors
/// when the scenario's kind is another, or `k`, `hosts` or `oversubscription` are given too.
fn explicit_counts(t: &TopologyConfig, kind: TopologyKind, given: &[(&str, Option<u32>)], keys: &'static str) -> Result<Option<Needs>> {
    let Some(&(first, _)) = given.iter().find(|(_, v)| v.is_some()) else {
        return Ok(None);
    };
    let (other, name, _) = kind_names(kind);
    if t.kind != kind {
        let sized = kind_names(t.kind).2;
        return Err(Error::invalid(format!("topology.{first}"), format!("only for kind = \"{other}\" ({sized})")));
    }
    if t.k.is_some() || t.hosts.is_some() {
        let key = if t.k.is_some() { "topology.k" } else { "topology.hosts" };
        return Err(Error::invalid(key, format!("give either `k`/`hosts` or the explicit counts {keys}, not both")));
    }
    if t.oversubscription.0 != 1 {
        return Err(Error::invalid(
            "topology.oversubscription",
            format!("not allowed with explicit {keys}: the ratio follows from those counts and the link rates"),
        ));
    }
    Ok(Some(Needs { kind: name, keys }))
}

//= seqbalance §5.1 (Fig. 8b); type=paper
//# One of the ToR's three uplinks runs at 80 Gbps, the others at 40 Gbps.
/// `spine_link_rates_gbps` as rates (empty when not given); refused together with
/// `tor_uplink_rate_gbps`, which it replaces.
fn spine_rates(t: &TopologyConfig) -> Result<Vec<BitsPerSec>> {
    let Some(list) = &t.spine_link_rates_gbps else { return Ok(Vec::new()) };
    if t.tor_uplink_rate_gbps.is_some() {
        return Err(Error::invalid("topology.spine_link_rates_gbps", "give either `tor_uplink_rate_gbps` (every spine) or `spine_link_rates_gbps` (one rate per spine), not both"));
    }
    list.iter().enumerate().map(|(i, &g)| rate(&format!("topology.spine_link_rates_gbps[{i}]"), g)).collect()
}
