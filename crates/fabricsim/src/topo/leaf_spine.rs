//! 2-tier leaf-spine ("2-tier fat tree") of radix K: K ToRs with K/2 hosts each, and K/2
//! spines with one link to every ToR; K²/2 hosts. This is htsim's 2-tier construction and the
//! STrack paper's T-8K (K = 128) and T-2K (K = 64) fabrics (strack spec §5.2).
//!
//! Oversubscription r:1 keeps K/2 hosts per ToR and cuts its uplinks (and so the spines) to
//! K/(2r), the paper's 4:1 and 8:1 construction (strack spec §5.2.2 ASSUMPTION).
//!
//! [`build_shape`] builds any other leaf-spine from explicit counts (ToRs, hosts per ToR, spines,
//! parallel cables per ToR-spine pair): the smartt-reps testbeds TB16 (2 ToRs × 8 hosts, 2
//! spines) and TB128 (2 ToRs × 64 hosts, 8 spines, 2 cables each; smartt-reps spec §5.1).
//! Such a shape may give each spine's cables a rate of their own (`spine_link_rates_gbps`):
//! the SeqBalance testbed's asymmetric fabric, where one spine's cables were moved onto
//! another, leaving each ToR one 80 G and two 40 G uplinks (seqbalance spec §5.1, Fig. 8b).
//! ECMP then sees one next hop per spine, whatever its rate.

use super::{Fabric, FabricBuilder, FabricSize, Tier, TierLinks};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::{BitsPerSec, Time};

/// Builds a leaf-spine of radix `k` with `ratio`:1 oversubscription at the ToRs.
pub fn build(k: u32, ratio: u32, links: TierLinks, switch_latency: Time) -> Result<Fabric> {
    let shape = shape(k, ratio)?;
    let hosts = k * (k / 2);
    Ok(wire(shape, links, &[]).build(format!("2-tier leaf-spine K={k}, {hosts} hosts, {ratio}:1 at the ToR tier"), switch_latency))
}

/// The counts of a leaf-spine of radix `k` with `ratio`:1 oversubscription, or why it cannot
/// be built.
pub fn shape(k: u32, ratio: u32) -> Result<Shape> {
    if k < 2 || k % 2 != 0 {
        return Err(Error::invalid("topology.k", format!("{k}: a leaf-spine's radix must be an even number >= 2")));
    }
    let half = k / 2;
    if ratio == 0 || half % ratio != 0 {
        let allowed: Vec<String> = (1..=half).filter(|r| half % r == 0).map(|r| format!("{r}:1")).collect();
        return Err(Error::invalid(
            "topology.oversubscription",
            format!(
                "{ratio}:1 cannot be built on a radix-{k} leaf-spine: a ToR has {half} uplinks, which {ratio} does not divide; allowed: {}",
                allowed.join(", ")
            ),
        ));
    }
    Ok(Shape { tors: k, hosts_per_tor: half, spines: half / ratio, links_per_spine: 1 })
}

/// Hosts under their ToRs, in order (host h under ToR h / hosts_per_tor), every ToR to every
/// spine; see [`wire_hosts`].
fn wire(shape: Shape, links: TierLinks, spine_rates: &[BitsPerSec]) -> FabricBuilder {
    wire_hosts(shape, links, spine_rates, |h| h / shape.hosts_per_tor, |_| 0..shape.spines)
}

/// Host h under ToR `tor_of(h)`, and `links_per_spine` cables from ToR t to each spine of
/// `spines_of(t)`, at `spine_rates[s]` for spine `s` (all at the ToR uplink rate when
/// `spine_rates` is empty). A rail-optimized fabric of 2 tiers is this wiring with its GPUs on
/// their rails (and, with per-rail spine groups, each leaf on its rail's spines).
pub(super) fn wire_hosts(shape: Shape, links: TierLinks, spine_rates: &[BitsPerSec], tor_of: impl Fn(u32) -> u32, spines_of: impl Fn(u32) -> std::ops::Range<u32>) -> FabricBuilder {
    let mut b = FabricBuilder::new(shape.tors * shape.hosts_per_tor);
    wire_plane(&mut b, shape, links, spine_rates, NodeId(0), tor_of, spines_of);
    b
}

/// Adds the switches of `shape` to `b` and wires them, host h being node `host0 + h` (hosts
/// already in `b`): one plane of a fabric of several ([`super::rail_optimized`]'s `planes`).
pub(super) fn wire_plane(
    b: &mut FabricBuilder,
    shape: Shape,
    links: TierLinks,
    spine_rates: &[BitsPerSec],
    host0: NodeId,
    tor_of: impl Fn(u32) -> u32,
    spines_of: impl Fn(u32) -> std::ops::Range<u32>,
) {
    let Shape { tors, hosts_per_tor, spines, links_per_spine } = shape;
    let tor0 = b.add_switches(Tier::Tor, tors);
    let spine0 = b.add_switches(Tier::Agg, spines);
    for h in 0..tors * hosts_per_tor {
        b.link(host0.offset(h), tor0.offset(tor_of(h)), links.host.0, links.host.1);
    }
    for t in 0..tors {
        for s in spines_of(t) {
            let rate = spine_rates.get(s as usize).copied().unwrap_or(links.tor_up.0);
            for _ in 0..links_per_spine {
                b.link(tor0.offset(t), spine0.offset(s), rate, links.tor_up.1);
            }
        }
    }
}

/// Counts of a leaf-spine given explicitly (`topology.tors`, `hosts_per_tor`, `spines`,
/// `links_per_spine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// ToR (leaf) switches.
    pub tors: u32,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Spine switches.
    pub spines: u32,
    /// Parallel cables between each ToR and each spine.
    pub links_per_spine: u32,
}

/// Largest fabric [`build_shape`] accepts (hosts, and ToR-spine cables).
const MAX_SHAPE: u64 = 1 << 20;

impl Shape {
    /// What the fabric's tables will hold (for a shape that passed [`Shape::check`]).
    pub fn size(&self) -> FabricSize {
        let (tors, spines) = (self.tors as u64, self.spines as u64);
        let hosts = tors * self.hosts_per_tor as u64;
        let cables = hosts + tors * spines * self.links_per_spine as u64;
        FabricSize { nodes: hosts + tors + spines, ports: 2 * cables, switches: tors + spines, tors }
    }

    /// Refuses a zero count, and more than 2^20 hosts or ToR-spine cables.
    pub fn check(&self) -> Result<()> {
        let Shape { tors, hosts_per_tor, spines, links_per_spine } = *self;
        for (key, v) in [("tors", tors), ("hosts_per_tor", hosts_per_tor), ("spines", spines), ("links_per_spine", links_per_spine)] {
            if v == 0 {
                return Err(Error::invalid(format!("topology.{key}"), "0: must be at least 1"));
            }
        }
        let hosts = tors as u64 * hosts_per_tor as u64;
        let cables = tors as u64 * spines as u64 * links_per_spine as u64;
        if hosts > MAX_SHAPE || cables > MAX_SHAPE {
            return Err(Error::invalid(
                "topology.tors",
                format!("{hosts} hosts and {cables} ToR-spine cables: at most {MAX_SHAPE} of each (tors × hosts_per_tor, tors × spines × links_per_spine)"),
            ));
        }
        Ok(())
    }
}

/// Builds a leaf-spine of the given shape: every ToR has `links_per_spine` cables to every spine,
/// those of spine `s` at `spine_rates[s]` (empty: all at the ToR uplink rate of `links`).
pub fn build_shape(shape: Shape, links: TierLinks, spine_rates: &[BitsPerSec], switch_latency: Time) -> Result<Fabric> {
    shape.check()?;
    let Shape { tors, hosts_per_tor, spines, links_per_spine } = shape;
    let hosts = tors as u64 * hosts_per_tor as u64;
    if !spine_rates.is_empty() && spine_rates.len() != spines as usize {
        return Err(Error::invalid(
            "topology.spine_link_rates_gbps",
            format!("{} rates for {spines} spines: give one rate per spine (a list of length `spines`)", spine_rates.len()),
        ));
    }
    let b = wire(shape, links, spine_rates);
    // Host capacity over uplink capacity of a ToR, e.g. 1:1 or 2:1.
    let down = hosts_per_tor as f64 * links.host.0.gbps();
    let spine_gbps: Vec<f64> = (0..spines as usize).map(|s| spine_rates.get(s).unwrap_or(&links.tor_up.0).gbps()).collect();
    let up = links_per_spine as f64 * spine_gbps.iter().sum::<f64>();
    let parallel = if links_per_spine > 1 { format!(" × {links_per_spine} cables") } else { String::new() };
    let rates = if spine_rates.is_empty() {
        String::new()
    } else {
        format!(" at {} Gb/s", spine_gbps.iter().map(|g| g.to_string()).collect::<Vec<_>>().join("/"))
    };
    Ok(b.build(
        format!(
            "2-tier leaf-spine, {tors} ToRs × {hosts_per_tor} hosts, {spines} spines{parallel}{rates}; {hosts} hosts, {}:1 at the ToR tier",
            (down / up * 100.0).round() / 100.0
        ),
        switch_latency,
    ))
}

/// Largest radix [`build`] accepts (524,288 hosts).
pub const MAX_K: u32 = 1024;

/// The radix of the leaf-spine with `hosts` hosts, or an error listing the nearest valid sizes.
pub fn radix_for_hosts(hosts: u32) -> Result<u32> {
    super::radix_for_hosts(hosts, MAX_K, |k| k as u64 * k as u64 / 2, "leaf-spines", "a leaf-spine of radix K has K²/2 hosts (K even)", "K")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    #[test]
    fn t8k_shape() {
        let l = (BitsPerSec::from_gbps(400.0), US);
        let f = build(128, 1, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap();
        assert_eq!(f.hosts, 8192);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 8192), (Tier::Tor, 128), (Tier::Agg, 64)]);
        // 8192 host cables + 8192 ToR-spine cables, two ports each.
        assert_eq!(f.ports.len(), 2 * (8192 + 8192));
        assert_eq!(f.representative_path(NodeId(0), NodeId(8191)).len(), 4);
        assert_eq!(radix_for_hosts(8192).unwrap(), 128);
        let f4 = build(128, 4, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap();
        assert_eq!(f4.tier_counts()[2], (Tier::Agg, 16));
    }

    //= smartt-reps spec §5.1 (TB128)
    //# 2 ToRs × 64 hosts at 100G, 8 spines, 2 cables of 400G per ToR-spine pair: non-blocking.
    #[test]
    fn tb128_shape() {
        let links = TierLinks { host: (BitsPerSec::from_gbps(100.0), US), tor_up: (BitsPerSec::from_gbps(400.0), US), agg_up: (BitsPerSec(1), Time::ZERO) };
        let f = build_shape(Shape { tors: 2, hosts_per_tor: 64, spines: 8, links_per_spine: 2 }, links, &[], Time::ZERO).unwrap();
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 128), (Tier::Tor, 2), (Tier::Agg, 8)]);
        // 128 host cables + 2 × 8 × 2 uplink cables.
        assert_eq!(f.ports.len(), 2 * (128 + 32));
        let (t0, t1) = (f.tor_of_host[0], f.tor_of_host[127]);
        assert_eq!(f.tor_of_host[63], t0);
        assert_eq!(f.routes.next_hops(&f, t0, t1).len(), 16);
        let spine = f.ports[(f.routes.next_hops(&f, t0, t1)[0]).idx()].peer;
        assert_eq!(f.routes.next_hops(&f, spine, t1).len(), 2);
        assert!(f.description.contains("1:1"), "{}", f.description);
        assert_eq!(f.link_name(f.routes.next_hops(&f, t0, t1)[1]), "tor0-spine0#1");
        let e = build_shape(Shape { tors: 2, hosts_per_tor: 0, spines: 8, links_per_spine: 2 }, links, &[], Time::ZERO).unwrap_err().to_string();
        assert!(e.contains("topology.hosts_per_tor"), "{e}");
    }

    /// The SeqBalance testbed: 2 leaves × 3 hosts at 40 G, `spines` spines at `spine_gbps`.
    fn testbed(spines: u32, spine_gbps: &[f64]) -> Result<Fabric> {
        let l = (BitsPerSec::from_gbps(40.0), US);
        let rates: Vec<BitsPerSec> = spine_gbps.iter().map(|&g| BitsPerSec::from_gbps(g)).collect();
        let shape = Shape { tors: 2, hosts_per_tor: 3, spines, links_per_spine: 1 };
        build_shape(shape, TierLinks { host: l, tor_up: l, agg_up: l }, &rates, Time::ZERO)
    }

    //= type=test
    //= seqbalance §5.1 (Fig. 8b); type=paper
    //# One of the three uplinks of each ToR runs at 80 Gbps, the other links at 40 Gbps; ECMP
    //# treats the 80G bundle as one next hop: 3 equal next hops.
    #[test]
    fn asymmetric_testbed_has_one_80g_spine_and_three_next_hops() {
        let f = testbed(3, &[80.0, 40.0, 40.0]).unwrap();
        assert!(f.description.contains("3 spines at 80/40/40 Gb/s") && f.description.contains("0.75:1"), "{}", f.description);
        let (t0, t1) = (f.tor_of_host[0], f.tor_of_host[5]);
        for (a, b) in [(t0, t1), (t1, t0)] {
            let hops = f.routes.next_hops(&f, a, b);
            let gbps: Vec<f64> = hops.iter().map(|&p| f.ports[p.idx()].rate.gbps()).collect();
            assert_eq!(gbps, [80.0, 40.0, 40.0]);
            // Both directions of each cable run at the spine's rate.
            for &p in hops {
                let down = f.routes.next_hops(&f, f.ports[p.idx()].peer, b)[0];
                assert_eq!(f.ports[down.idx()].rate, f.ports[p.idx()].rate);
                assert_eq!(f.ports[f.ports[p.idx()].reverse.idx()].rate, f.ports[p.idx()].rate);
            }
        }
        // Host links stay at 40 G. The base RTT follows the slowest equal-cost path (40 G).
        assert_eq!(f.ports[f.host_port[0].idx()].rate.gbps(), 40.0);
        assert_eq!(f.base_rtt(NodeId(0), NodeId(5), 1048, 64), testbed(3, &[]).unwrap().base_rtt(NodeId(0), NodeId(5), 1048, 64));
        let e = testbed(3, &[80.0]).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("topology.spine_link_rates_gbps") && e.contains("1 rates for 3 spines"), "{e}");
    }
}
