//! 2-tier leaf-spine ("2-tier fat tree") of radix K: K ToRs with K/2 hosts each, and K/2
//! spines with one link to every ToR; K²/2 hosts. This is htsim's 2-tier construction and the
//! STrack paper's T-8K (K = 128) and T-2K (K = 64) fabrics (strack spec §5.2).
//!
//! Oversubscription r:1 keeps K/2 hosts per ToR and cuts its uplinks (and so the spines) to
//! K/(2r), the paper's 4:1 and 8:1 construction (strack spec §5.2.2 ASSUMPTION).

use super::{Fabric, FabricBuilder, Tier, TierLinks};
use crate::error::{Error, Result};
use crate::units::Time;

/// Builds a leaf-spine of radix `k` with `ratio`:1 oversubscription at the ToRs.
pub fn build(k: u32, ratio: u32, links: TierLinks, switch_latency: Time) -> Result<Fabric> {
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
    let spines = half / ratio;
    let hosts = k * half;
    let mut b = FabricBuilder::new(hosts);
    let tor0 = b.add_switches(Tier::Tor, k);
    let spine0 = b.add_switches(Tier::Agg, spines);
    for h in 0..hosts {
        b.link(h, tor0 + h / half, links.host.0, links.host.1);
    }
    for t in 0..k {
        for s in 0..spines {
            b.link(tor0 + t, spine0 + s, links.tor_up.0, links.tor_up.1);
        }
    }
    Ok(b.build(format!("2-tier leaf-spine K={k}, {hosts} hosts, {ratio}:1 at the ToR tier"), switch_latency))
}

/// The radix of the leaf-spine with `hosts` hosts, or an error listing the nearest valid sizes.
pub fn radix_for_hosts(hosts: u32) -> Result<u32> {
    let mut k = 2u32;
    while k * k / 2 < hosts {
        k += 2;
    }
    if k * k / 2 == hosts {
        return Ok(k);
    }
    Err(Error::invalid(
        "topology.hosts",
        format!(
            "{hosts}: a leaf-spine of radix K has K²/2 hosts (K even); nearest valid: {} (K={}) or {} (K={k})",
            (k - 2) * (k - 2) / 2,
            k - 2,
            k * k / 2
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    #[test]
    fn t8k_shape() {
        let l = (BitsPerSec::from_gbps(400.0), US);
        let f = build(128, 1, TierLinks { host: l, tor_up: l, agg_up: l }, 0).unwrap();
        assert_eq!(f.hosts, 8192);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 8192), (Tier::Tor, 128), (Tier::Agg, 64)]);
        // 8192 host cables + 8192 ToR-spine cables, two ports each.
        assert_eq!(f.ports.len(), 2 * (8192 + 8192));
        assert_eq!(f.representative_path(0, 8191).len(), 4);
        assert_eq!(radix_for_hosts(8192).unwrap(), 128);
        let f4 = build(128, 4, TierLinks { host: l, tor_up: l, agg_up: l }, 0).unwrap();
        assert_eq!(f4.tier_counts()[2], (Tier::Agg, 16));
    }
}
