//! `[topology]` into a [`Fabric`]: the family and its size, link rates and latencies per tier,
//! and the cables failed at build time.

use super::{nanos, rate, OversubTier, Scenario, TopologyConfig, TopologyKind};
use crate::error::{Error, Result};
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
        let shape = leaf_spine::shape_of(t)?;
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
