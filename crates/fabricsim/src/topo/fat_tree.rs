//! 3-tier k-ary fat tree (Al-Fares et al.): k pods of k/2 ToRs and k/2 aggregation switches,
//! (k/2)² cores, k³/4 hosts. This is htsim's default datacenter fabric and the SMaRTT-REPS
//! paper's FT1024/FT128 (smartt-reps spec §5.1).
//!
//! Oversubscription r:1 thins one tier's uplinks by r, keeping every host:
//! - at the ToR (default): each ToR keeps k/2 hosts but has k/(2r) uplinks; each pod has k/(2r)
//!   aggregation switches (each with k/2 uplinks), so cores = k/(2r)·k/2;
//! - at the aggregation tier (the SMaRTT paper's choice, spec §5.1 ASSUMPTION): all k/2 aggs,
//!   each with k/(2r) core uplinks, cores = k/2·k/(2r).

use super::{Fabric, FabricBuilder, Tier, TierLinks};
use crate::error::{Error, Result};
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
    let hosts = k * half * half;
    let mut b = FabricBuilder::new(hosts);
    let tor0 = b.add_switches(Tier::Tor, k * half);
    let agg0 = b.add_switches(Tier::Agg, k * aggs_per_pod);
    let cores = aggs_per_pod * agg_uplinks;
    let core0 = b.add_switches(Tier::Core, cores);
    for h in 0..hosts {
        b.link(h, tor0 + h / half, links.host.0, links.host.1);
    }
    for pod in 0..k {
        for t in 0..half {
            for a in 0..aggs_per_pod {
                b.link(tor0 + pod * half + t, agg0 + pod * aggs_per_pod + a, links.tor_up.0, links.tor_up.1);
            }
        }
        for a in 0..aggs_per_pod {
            for u in 0..agg_uplinks {
                b.link(agg0 + pod * aggs_per_pod + a, core0 + a * agg_uplinks + u, links.agg_up.0, links.agg_up.1);
            }
        }
    }
    let at_name = match at {
        OversubscribedTier::Tor => "ToR",
        OversubscribedTier::Agg => "aggregation",
    };
    Ok(b.build(format!("3-tier fat tree k={k}, {hosts} hosts, {ratio}:1 at the {at_name} tier"), switch_latency))
}

/// The radix of the fat tree with `hosts` hosts, or an error listing the nearest valid sizes.
pub fn radix_for_hosts(hosts: u32) -> Result<u32> {
    let mut k = 2u32;
    while k * k * k / 4 < hosts {
        k += 2;
    }
    if k * k * k / 4 == hosts {
        return Ok(k);
    }
    let below = (k - 2) * (k - 2) * (k - 2) / 4;
    Err(Error::invalid(
        "topology.hosts",
        format!(
            "{hosts}: a 3-tier k-ary fat tree has k³/4 hosts (k even); nearest valid: {below} (k={}) or {} (k={k})",
            k - 2,
            k * k * k / 4
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    fn links() -> TierLinks {
        let l = (BitsPerSec::from_gbps(400.0), US);
        TierLinks { host: l, tor_up: l, agg_up: l }
    }

    #[test]
    fn k8_counts_and_paths() {
        let f = build(8, 1, OversubscribedTier::Tor, links(), 0).unwrap();
        assert_eq!(f.hosts, 128);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 128), (Tier::Tor, 32), (Tier::Agg, 32), (Tier::Core, 16)]);
        // host 0 and 1 share a ToR; 0 and 4 share a pod; 0 and 127 cross the core.
        assert_eq!(f.representative_path(0, 1).len(), 2);
        assert_eq!(f.representative_path(0, 4).len(), 4);
        assert_eq!(f.representative_path(0, 127).len(), 6);
        // A ToR has 4 equal-cost uplinks towards a remote pod, an agg 4 core uplinks.
        let tor0 = f.tor_of_host[0];
        let remote_tor = f.tor_of_host[127];
        assert_eq!(f.routes.next_hops(&f, tor0, remote_tor).len(), 4);
        let agg = f.ports[f.routes.next_hops(&f, tor0, remote_tor)[0] as usize].peer;
        assert_eq!(f.routes.next_hops(&f, agg, remote_tor).len(), 4);
        // 6 hops of 1 us each way + 6 serializations of 4096 B and 64 B at 400G.
        assert_eq!(f.base_rtt(0, 127, 4096, 64), 12 * US + 6 * (81_920 + 1_280));
    }

    #[test]
    fn oversubscription_at_either_tier() {
        let tor = build(8, 4, OversubscribedTier::Tor, links(), 0).unwrap();
        assert_eq!(tor.tier_counts()[2], (Tier::Agg, 8));
        assert_eq!(tor.tier_counts()[3], (Tier::Core, 4));
        let tor0 = tor.tor_of_host[0];
        assert_eq!(tor.routes.next_hops(&tor, tor0, tor.tor_of_host[127]).len(), 1);
        let agg = build(8, 4, OversubscribedTier::Agg, links(), 0).unwrap();
        assert_eq!(agg.tier_counts()[3], (Tier::Core, 4));
        let err = build(8, 8, OversubscribedTier::Tor, links(), 0).unwrap_err().to_string();
        assert!(err.contains("topology.oversubscription") && err.contains("allowed: 1:1, 2:1, 4:1"), "{err}");
    }

    #[test]
    fn sizes_from_host_count() {
        assert_eq!(radix_for_hosts(1024).unwrap(), 16);
        assert_eq!(radix_for_hosts(8192).unwrap(), 32);
        let err = radix_for_hosts(1000).unwrap_err().to_string();
        assert!(err.contains("686 (k=14) or 1024 (k=16)"), "{err}");
    }
}
