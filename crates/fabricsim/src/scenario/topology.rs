//! `[topology]` into a [`Fabric`]: the family and its size, link rates and latencies per tier,
//! the explicit leaf-spine shape, and the cables failed at build time.

use super::{nanos, rate, OversubTier, Scenario, TopologyConfig, TopologyKind};
use crate::error::{Error, Result};
use crate::topo::leaf_spine::Shape;
use crate::topo::{fat_tree, leaf_spine, Fabric, TierLinks};
use crate::units::BitsPerSec;

impl Scenario {
    /// The fabric as `[topology]` describes it, with `[topology.failures]` applied.
    pub(super) fn build_fabric(&self) -> Result<Fabric> {
        let mut fabric = self.build_topology()?;
        if let Some(f) = &self.topology.failures {
            fabric.apply_failures(f.choose(&fabric, self.seed)?);
        }
        Ok(fabric)
    }

    /// The intact fabric: the family, its size and the rate and latency of each tier.
    fn build_topology(&self) -> Result<Fabric> {
        let t = &self.topology;
        let shape = leaf_spine_shape(t)?;
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
                let k = radix(t, fat_tree::radix_for_hosts, 8)?;
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
                let k = radix(t, leaf_spine::radix_for_hosts, 16)?;
                if k > 1024 {
                    return Err(Error::invalid("topology.k", format!("{k}: leaf-spines up to K=1024 are supported")));
                }
                leaf_spine::build(k, ratio, links, sw_lat)
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

/// The explicit shape given in `[topology]`, if any: `tors`, `hosts_per_tor` and `spines` (and
/// optionally `links_per_spine`, default 1), for a leaf-spine only and instead of `k`, `hosts` and
/// `oversubscription`.
fn leaf_spine_shape(t: &TopologyConfig) -> Result<Option<Shape>> {
    let given = [("tors", t.tors), ("hosts_per_tor", t.hosts_per_tor), ("spines", t.spines), ("links_per_spine", t.links_per_spine)];
    let Some(&(first, _)) = given.iter().find(|(_, v)| v.is_some()) else {
        return Ok(None);
    };
    if t.kind != TopologyKind::LeafSpine {
        return Err(Error::invalid(format!("topology.{first}"), "only for kind = \"leaf_spine\" (a fat tree is sized by `k` or `hosts`)"));
    }
    if t.k.is_some() || t.hosts.is_some() {
        let key = if t.k.is_some() { "topology.k" } else { "topology.hosts" };
        return Err(Error::invalid(key, "give either `k`/`hosts` or the explicit counts `tors`, `hosts_per_tor`, `spines`, not both"));
    }
    if t.oversubscription.0 != 1 {
        return Err(Error::invalid(
            "topology.oversubscription",
            "not allowed with explicit `tors`/`hosts_per_tor`/`spines`: the ratio follows from those counts, `links_per_spine` and the link rates",
        ));
    }
    let need = |key: &str, v: Option<u32>| v.ok_or_else(|| Error::invalid(format!("topology.{key}"), "missing: an explicit leaf-spine needs `tors`, `hosts_per_tor` and `spines`"));
    Ok(Some(Shape {
        tors: need("tors", t.tors)?,
        hosts_per_tor: need("hosts_per_tor", t.hosts_per_tor)?,
        spines: need("spines", t.spines)?,
        links_per_spine: t.links_per_spine.unwrap_or(1),
    }))
}
