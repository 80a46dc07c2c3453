//! 3-tier k-ary fat tree (Al-Fares et al.): k pods of k/2 ToRs and k/2 aggregation switches,
//! (k/2)² cores, k³/4 hosts. This is htsim's default datacenter fabric and the SMaRTT-REPS
//! paper's FT1024/FT128 (smartt-reps spec §5.1).
//!
//! Oversubscription r:1 thins one tier's uplinks by r, keeping every host:
//! - at the ToR (default): each ToR keeps k/2 hosts but has k/(2r) uplinks; each pod has k/(2r)
//!   aggregation switches (each with k/2 uplinks), so cores = k/(2r)·k/2;
//! - at the aggregation tier (the SMaRTT paper's choice, spec §5.1 ASSUMPTION): all k/2 aggs,
//!   each with k/(2r) core uplinks, cores = k/2·k/(2r).
//!
//! [`build_pods`] builds any other 3-tier fabric of this wiring from explicit per-tier counts
//! (pods, ToRs and aggregation switches per pod, hosts per ToR, cores): the SeqBalance paper's
//! 320-host "FatTree" of 16 cores, 20 aggs and 20 ToRs, wired as HPCC's 5-pod fabric
//! (seqbalance spec §5.3, §8 A22).

use super::{Fabric, FabricBuilder, FabricSize, Tier, TierLinks};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::Time;

/// Where a fat tree is oversubscribed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OversubscribedTier {
    /// Fewer ToR uplinks.
    Tor,
    /// Fewer aggregation-to-core uplinks.
    Agg,
}

/// Builds a k-ary fat tree with `ratio`:1 oversubscription at `at`.
pub fn build(k: u32, ratio: u32, at: OversubscribedTier, links: TierLinks, switch_latency: Time) -> Result<Fabric> {
    let shape = shape(k, ratio, at)?;
    let hosts = shape.hosts();
    let b = wire(shape, links);
    let at_name = match at {
        OversubscribedTier::Tor => "ToR",
        OversubscribedTier::Agg => "aggregation",
    };
    Ok(b.build(format!("3-tier fat tree k={k}, {hosts} hosts, {ratio}:1 at the {at_name} tier"), switch_latency))
}

/// The tier counts of a k-ary fat tree with `ratio`:1 oversubscription at `at`, or why it
/// cannot be built.
pub fn shape(k: u32, ratio: u32, at: OversubscribedTier) -> Result<PodShape> {
    if k < 2 || k % 2 != 0 {
        return Err(Error::invalid("topology.k", format!("{k}: a fat tree's radix must be an even number >= 2")));
    }
    let half = k / 2;
    if ratio == 0 || half % ratio != 0 {
        let allowed: Vec<String> = (1..=half).filter(|r| half % r == 0).map(|r| format!("{r}:1")).collect();
        return Err(Error::invalid(
            "topology.oversubscription",
            format!(
                "{ratio}:1 cannot be built on a k={k} fat tree: the thinned tier has {half} uplinks per switch, which {ratio} does not divide; allowed: {}",
                allowed.join(", ")
            ),
        ));
    }
    let thin = half / ratio;
    let (aggs_per_pod, agg_uplinks) = match at {
        OversubscribedTier::Tor => (thin, half),
        OversubscribedTier::Agg => (half, thin),
    };
    Ok(PodShape { pods: k, tors_per_pod: half, aggs_per_pod, hosts_per_tor: half, cores: aggs_per_pod * agg_uplinks })
}

/// Counts of a 3-tier fabric given tier by tier (`topology.pods`, `tors_per_pod`,
/// `aggs_per_pod`, `hosts_per_tor`, `cores`); a k-ary fat tree is the case `pods = k`,
/// `tors_per_pod = aggs_per_pod = hosts_per_tor = k/2`, `cores = (k/2)²`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodShape {
    /// Pods.
    pub pods: u32,
    /// ToRs in each pod.
    pub tors_per_pod: u32,
    /// Aggregation switches in each pod.
    pub aggs_per_pod: u32,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Core switches; each aggregation switch links to `cores / aggs_per_pod` of them.
    pub cores: u32,
}

impl PodShape {
    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.pods * self.tors_per_pod * self.hosts_per_tor
    }

    /// Core uplinks of each aggregation switch.
    fn agg_uplinks(&self) -> u32 {
        self.cores / self.aggs_per_pod
    }

    /// What the fabric's tables will hold (for a shape that passed [`PodShape::check`]).
    pub fn size(&self) -> FabricSize {
        let (pods, tpp, app) = (self.pods as u64, self.tors_per_pod as u64, self.aggs_per_pod as u64);
        let hosts = self.hosts() as u64;
        let tors = pods * tpp;
        let switches = tors + pods * app + self.cores as u64;
        let cables = hosts + tors * app + pods * app * self.agg_uplinks() as u64;
        FabricSize { nodes: hosts + switches, ports: 2 * cables, switches, tors }
    }

    /// Refuses counts that cannot be wired (a zero, cores not a multiple of `aggs_per_pod`) or
    /// that make more than 2^20 hosts or switch-to-switch cables.
    pub fn check(&self) -> Result<()> {
        let PodShape { pods, tors_per_pod, aggs_per_pod, hosts_per_tor, cores } = *self;
        for (key, v) in [("pods", pods), ("tors_per_pod", tors_per_pod), ("aggs_per_pod", aggs_per_pod), ("hosts_per_tor", hosts_per_tor), ("cores", cores)] {
            if v == 0 {
                return Err(Error::invalid(format!("topology.{key}"), "0: must be at least 1"));
            }
        }
        if cores % aggs_per_pod != 0 {
            let allowed: Vec<String> = (1..=4).map(|m| (m * aggs_per_pod).to_string()).collect();
            return Err(Error::invalid(
                "topology.cores",
                format!(
                    "{cores}: aggregation switch j of every pod links to cores j·c .. (j+1)·c − 1 with c = cores / aggs_per_pod, so cores must be a multiple of aggs_per_pod ({aggs_per_pod}); allowed: {}, ...",
                    allowed.join(", ")
                ),
            ));
        }
        let hosts = pods as u64 * tors_per_pod as u64 * hosts_per_tor as u64;
        let cables = pods as u64 * aggs_per_pod as u64 * (tors_per_pod as u64 + (cores / aggs_per_pod) as u64);
        if hosts > MAX_SHAPE || cables > MAX_SHAPE {
            return Err(Error::invalid(
                "topology.pods",
                format!("{hosts} hosts and {cables} switch-to-switch cables: at most {MAX_SHAPE} of each (pods × tors_per_pod × hosts_per_tor; pods × aggs_per_pod × (tors_per_pod + cores/aggs_per_pod))"),
            ));
        }
        Ok(())
    }
}

/// Hosts under their ToRs, in order (host h under ToR h / hosts_per_tor); see [`wire_hosts`].
fn wire(shape: PodShape, links: TierLinks) -> FabricBuilder {
    wire_hosts(shape, links, |h| h / shape.hosts_per_tor)
}

/// Host h under ToR `tor_of(h)` (a pod's ToRs are `pod × tors_per_pod ..`); in every pod each
/// ToR to every aggregation switch of the pod; the `j`-th aggregation switch of every pod to
/// cores `j·u .. (j+1)·u − 1` with `u = cores / aggs_per_pod` (HPCC's wiring; Al-Fares' for a
/// k-ary tree). A rail-optimized fabric of 3 tiers is this wiring with its GPUs on their rails.
pub(super) fn wire_hosts(shape: PodShape, links: TierLinks, tor_of: impl Fn(u32) -> u32) -> FabricBuilder {
    let mut b = FabricBuilder::new(shape.hosts());
    wire_plane(&mut b, shape, links, NodeId(0), tor_of);
    b
}

/// Adds the switches of `shape` to `b` and wires them, host h being node `host0 + h` (hosts
/// already in `b`): one plane of a fabric of several ([`super::rail_optimized`]'s `planes`).
pub(super) fn wire_plane(b: &mut FabricBuilder, shape: PodShape, links: TierLinks, host0: NodeId, tor_of: impl Fn(u32) -> u32) {
    let PodShape { pods, tors_per_pod, aggs_per_pod, .. } = shape;
    let agg_uplinks = shape.agg_uplinks();
    let tor0 = b.add_switches(Tier::Tor, pods * tors_per_pod);
    let agg0 = b.add_switches(Tier::Agg, pods * aggs_per_pod);
    let core0 = b.add_switches(Tier::Core, shape.cores);
    for h in 0..shape.hosts() {
        b.link(host0.offset(h), tor0.offset(tor_of(h)), links.host.0, links.host.1);
    }
    for pod in 0..pods {
        for t in 0..tors_per_pod {
            for a in 0..aggs_per_pod {
                b.link(tor0.offset(pod * tors_per_pod + t), agg0.offset(pod * aggs_per_pod + a), links.tor_up.0, links.tor_up.1);
            }
        }
        for a in 0..aggs_per_pod {
            for u in 0..agg_uplinks {
                b.link(agg0.offset(pod * aggs_per_pod + a), core0.offset(a * agg_uplinks + u), links.agg_up.0, links.agg_up.1);
            }
        }
    }
}

/// Largest fabric [`build_pods`] accepts (hosts, and switch-to-switch cables).
const MAX_SHAPE: u64 = 1 << 20;

//= seqbalance §5.3; type=paper
//# "FatTree" with 16 core, 20 Agg and 20 ToR switches, 16 servers per ToR, 320 servers.
//= seqbalance §8 A22; type=assumption
//# 16 / 20 / 20 switches is not a k-ary fat tree: use the HPCC 5-pod wiring (5 pods of 4 ToRs
//# and 4 Aggs, each ToR to every Agg of its pod, Agg j of every pod to cores 4j .. 4j+3).
/// Builds a 3-tier fabric from explicit per-tier counts (the SeqBalance/HPCC 320-host fabric is
/// `pods = 5, tors_per_pod = 4, aggs_per_pod = 4, hosts_per_tor = 16, cores = 16`).
pub fn build_pods(shape: PodShape, links: TierLinks, switch_latency: Time) -> Result<Fabric> {
    shape.check()?;
    let PodShape { pods, tors_per_pod, aggs_per_pod, hosts_per_tor, cores } = shape;
    let hosts = shape.hosts();
    // Capacity below over capacity above, at the ToR and at the aggregation tier.
    let ratio = |down: f64, up: f64| (down / up * 100.0).round() / 100.0;
    let tor_ratio = ratio(hosts_per_tor as f64 * links.host.0.gbps(), aggs_per_pod as f64 * links.tor_up.0.gbps());
    let agg_ratio = ratio(tors_per_pod as f64 * links.tor_up.0.gbps(), shape.agg_uplinks() as f64 * links.agg_up.0.gbps());
    let description = format!(
        "3-tier fat tree, {pods} pods × {tors_per_pod} ToRs × {hosts_per_tor} hosts, {aggs_per_pod} aggs per pod, {cores} cores; {hosts} hosts, {tor_ratio}:1 at the ToR tier, {agg_ratio}:1 at the aggregation tier"
    );
    Ok(wire(shape, links).build(description, switch_latency))
}

/// Largest radix [`build`] accepts (524,288 hosts).
pub const MAX_K: u32 = 128;

/// The radix of the fat tree with `hosts` hosts, or an error listing the nearest valid sizes.
pub fn radix_for_hosts(hosts: u32) -> Result<u32> {
    super::radix_for_hosts(hosts, MAX_K, |k| k as u64 * k as u64 * k as u64 / 4, "fat trees", "a 3-tier k-ary fat tree has k³/4 hosts (k even)", "k")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    fn links() -> TierLinks {
        let l = (BitsPerSec::from_gbps(400.0), US);
        TierLinks { host: l, tor_up: l, agg_up: l }
    }

    /// Equal-cost paths from switch `from` to ToR `to` (product of the next-hop fan-outs).
    fn paths(f: &Fabric, from: crate::ids::NodeId, to: crate::ids::NodeId) -> usize {
        if from == to {
            return 1;
        }
        f.routes.next_hops(f, from, to).iter().map(|&p| paths(f, f.ports[p.idx()].peer, to)).sum()
    }

    /// The seqbalance §5.3 fabric: 100 G hosts, 400 G ToR–agg and agg–core, 1 µs links.
    fn seqbalance_3tier() -> Fabric {
        let (h, u) = ((BitsPerSec::from_gbps(100.0), US), (BitsPerSec::from_gbps(400.0), US));
        let shape = PodShape { pods: 5, tors_per_pod: 4, aggs_per_pod: 4, hosts_per_tor: 16, cores: 16 };
        build_pods(shape, TierLinks { host: h, tor_up: u, agg_up: u }, Time::ZERO).unwrap()
    }

    //= type=test
    //= seqbalance §5.3; type=paper
    //# 16 core, 20 Agg and 20 ToR switches, 16 servers per ToR, 320 servers; inter-pod ToR
    //# pairs have 16 paths, intra-pod 4; Agg j of every pod connects to cores 4j .. 4j+3.
    #[test]
    fn seqbalance_five_pod_counts_wiring_and_paths() {
        let f = seqbalance_3tier();
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 320), (Tier::Tor, 20), (Tier::Agg, 20), (Tier::Core, 16)]);
        assert!(f.description.contains("5 pods × 4 ToRs × 16 hosts") && f.description.contains("1:1 at the aggregation tier"), "{}", f.description);
        let tor = |i: u32| f.node_by_name(&format!("tor{i}")).unwrap();
        // tor0 and tor3 share pod 0; tor4 is in pod 1.
        assert_eq!(paths(&f, tor(0), tor(3)), 4);
        assert_eq!(paths(&f, tor(0), tor(4)), 16);
        assert_eq!(paths(&f, tor(19), tor(0)), 16);
        assert_eq!(f.pod_of_host()[..], [vec![0; 64], vec![1; 64], vec![2; 64], vec![3; 64], vec![4; 64]].concat()[..]);
        // agg 6 is the third agg (j = 2) of pod 1: ToRs 4..8 below, cores 8..12 above.
        let agg6 = f.node_by_name("agg6").unwrap();
        let peers: Vec<String> = f.ports_of(agg6).iter().map(|&p| f.node_name(f.ports[p.idx()].peer)).collect();
        assert_eq!(peers, ["tor4", "tor5", "tor6", "tor7", "core8", "core9", "core10", "core11"]);
        // Every ToR has 4 uplinks at 400 G, every core one link to each of the 5 pods.
        assert!(f.ports_of(tor(7)).iter().filter(|&&p| !f.is_host(f.ports[p.idx()].peer)).all(|&p| f.ports[p.idx()].rate.gbps() == 400.0));
        assert_eq!(f.ports_of(f.node_by_name("core15").unwrap()).len(), 5);
        // 6 links each way, 1 µs each; 1048 B data and 64 B ACK at 100 G on the host links and
        // 400 G on the four fabric links: 12 µs + 2 × (83.84 + 5.12) ns + 4 × (20.96 + 1.28) ns.
        assert_eq!(f.base_rtt(NodeId(0), NodeId(319), 1048, 64), 12 * US + Time(2 * (83_840 + 5_120)) + Time(4 * (20_960 + 1_280)));
        assert_eq!(f.farthest_pair(), (NodeId(0), NodeId(64)));
    }

    //= type=test
    //# A k-ary fat tree is the explicit shape with pods = k, k/2 ToRs, aggs and hosts, (k/2)² cores: the same cables in the same order.
    #[test]
    fn k_ary_tree_is_an_explicit_shape() {
        let k = build(4, 1, OversubscribedTier::Tor, links(), Time::ZERO).unwrap();
        let e = build_pods(PodShape { pods: 4, tors_per_pod: 2, aggs_per_pod: 2, hosts_per_tor: 2, cores: 4 }, links(), Time::ZERO).unwrap();
        let cables = |f: &Fabric| f.ports.iter().map(|p| (p.owner, p.peer, p.reverse)).collect::<Vec<_>>();
        assert_eq!(cables(&k), cables(&e));
        assert_eq!(k.tier, e.tier);
    }

    #[test]
    fn explicit_shape_errors_name_the_key() {
        let err = |shape: PodShape| build_pods(shape, links(), Time::ZERO).unwrap_err().to_string();
        let ok = PodShape { pods: 5, tors_per_pod: 4, aggs_per_pod: 4, hosts_per_tor: 16, cores: 16 };
        let e = err(PodShape { cores: 10, ..ok });
        assert!(e.contains("topology.cores") && e.contains("multiple of aggs_per_pod (4)") && e.contains("4, 8, 12, 16"), "{e}");
        assert!(err(PodShape { aggs_per_pod: 0, ..ok }).contains("topology.aggs_per_pod"));
        assert!(err(PodShape { pods: 100_000, ..ok }).contains("topology.pods"));
        // 100 G agg–core (the paper's text, spec §8 A2): 4:1 at the aggregation tier.
        let slow = TierLinks { agg_up: (BitsPerSec::from_gbps(100.0), US), ..links() };
        let f = build_pods(ok, slow, Time::ZERO).unwrap();
        assert!(f.description.contains("4:1 at the aggregation tier"), "{}", f.description);
    }

    #[test]
    fn k8_counts_and_paths() {
        let f = build(8, 1, OversubscribedTier::Tor, links(), Time::ZERO).unwrap();
        assert_eq!(f.hosts, 128);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 128), (Tier::Tor, 32), (Tier::Agg, 32), (Tier::Core, 16)]);
        // host 0 and 1 share a ToR; 0 and 4 share a pod; 0 and 127 cross the core.
        assert_eq!(f.representative_path(NodeId(0), NodeId(1)).len(), 2);
        assert_eq!(f.representative_path(NodeId(0), NodeId(4)).len(), 4);
        assert_eq!(f.representative_path(NodeId(0), NodeId(127)).len(), 6);
        // A ToR has 4 equal-cost uplinks towards a remote pod, an agg 4 core uplinks.
        let tor0 = f.tor_of_host[0];
        let remote_tor = f.tor_of_host[127];
        assert_eq!(f.routes.next_hops(&f, tor0, remote_tor).len(), 4);
        let agg = f.ports[(f.routes.next_hops(&f, tor0, remote_tor)[0]).idx()].peer;
        assert_eq!(f.routes.next_hops(&f, agg, remote_tor).len(), 4);
        // 6 hops of 1 us each way + 6 serializations of 4096 B and 64 B at 400G.
        assert_eq!(f.base_rtt(NodeId(0), NodeId(127), 4096, 64), 12 * US + Time(6 * (81_920 + 1_280)));
    }

    #[test]
    fn oversubscription_at_either_tier() {
        let tor = build(8, 4, OversubscribedTier::Tor, links(), Time::ZERO).unwrap();
        assert_eq!(tor.tier_counts()[2], (Tier::Agg, 8));
        assert_eq!(tor.tier_counts()[3], (Tier::Core, 4));
        let tor0 = tor.tor_of_host[0];
        assert_eq!(tor.routes.next_hops(&tor, tor0, tor.tor_of_host[127]).len(), 1);
        let agg = build(8, 4, OversubscribedTier::Agg, links(), Time::ZERO).unwrap();
        assert_eq!(agg.tier_counts()[3], (Tier::Core, 4));
        let err = build(8, 8, OversubscribedTier::Tor, links(), Time::ZERO).unwrap_err().to_string();
        assert!(err.contains("topology.oversubscription") && err.contains("allowed: 1:1, 2:1, 4:1"), "{err}");
    }

    #[test]
    fn sizes_from_host_count() {
        assert_eq!(radix_for_hosts(1024).unwrap(), 16);
        assert_eq!(radix_for_hosts(8192).unwrap(), 32);
        let err = radix_for_hosts(1000).unwrap_err().to_string();
        assert!(err.contains("686 (k=14) or 1024 (k=16)"), "{err}");
        // Below the smallest fat tree: no "0 (k=0)".
        for h in [0, 1] {
            let err = radix_for_hosts(h).unwrap_err().to_string();
            assert!(err.contains("the smallest is 2 (k=2)") && !err.contains("k=0"), "{err}");
        }
    }
}
