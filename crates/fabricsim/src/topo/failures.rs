//! Static link failures, chosen when the fabric is built (`[topology.failures]`): `tors` ToRs,
//! picked uniformly at random from the scenario seed, each lose `uplinks_per_tor` of their
//! uplinks, also picked uniformly at random. An uplink is a ToR-to-spine cable of a leaf-spine
//! (each parallel cable counts) or a ToR-to-aggregation cable of a fat tree.
//!
//! **Follows:** strack spec §4 (link failure model) and §5.2.2 "asymmetric (failure) networks"
//! (T-8K: 16 ToRs each losing 4 or 16 of their 64 uplinks).
//!
//! **Models:**
//! - `removed` (the spec's default): the cable carries nothing and the route table is computed
//!   without it, so every ECMP next-hop set (per switch, per destination ToR) holds only ports on
//!   surviving shortest paths. Removing every uplink of a ToR would cut its hosts off, so at most
//!   all but one may fail.
//! - `degraded` (the spec's alternative, csg-htsim's built-in failure): the cable runs at
//!   `degraded_rate_factor` × its rate in both directions while ECMP keeps hashing onto it.
//!
//! **Parameters:** `tors`, `uplinks_per_tor` (required), `model` (`removed`),
//! `degraded_rate_factor` (0.1, strack spec §4: "1/10 speed").
//!
//! The fabric keeps the cables' nominal rates in [`super::PortSpec`] (so base RTTs and buffer
//! sizes are those of the healthy fabric); the engine applies the failures to its port state (`net::port::apply_failures`).

use super::{Fabric, Tier};
use crate::error::{Error, Result};
use crate::ids::PortId;
use crate::rng::Rng;
use crate::units::BitsPerSec;
use serde::{Deserialize, Serialize};

/// Default rate factor of a degraded cable (strack spec §4: 1/10 speed).
pub const DEFAULT_DEGRADED_RATE_FACTOR: f64 = 0.1;

/// How a failed cable behaves.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureModel {
    /// Carries nothing; routes avoid it.
    #[default]
    Removed,
    /// Runs at a fraction of its rate; routes still use it.
    Degraded,
}

/// `[topology.failures]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailuresConfig {
    /// Number of ToRs that lose uplinks.
    pub tors: u32,
    /// Uplinks each of those ToRs loses.
    pub uplinks_per_tor: u32,
    /// `"removed"` or `"degraded"`.
    #[serde(default)]
    pub model: FailureModel,
    /// `degraded` only: rate of a failed cable as a fraction of its rate (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded_rate_factor: Option<f64>,
}

/// One failed cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailedLink {
    /// The ToR's port onto the cable (the uplink direction).
    pub up: PortId,
    /// The far end's port back to the ToR.
    pub down: PortId,
    /// `None`: removed; `Some(r)`: degraded to rate `r` (both directions).
    pub rate: Option<BitsPerSec>,
}

impl FailuresConfig {
    /// Picks the failed cables of `fabric` from the `failures` stream of `seed`.
    pub fn choose(&self, fabric: &Fabric, seed: u64) -> Result<Vec<FailedLink>> {
        const KEY: &str = "topology.failures";
        let factor = match (self.model, self.degraded_rate_factor) {
            (FailureModel::Removed, Some(_)) => {
                return Err(Error::invalid(format!("{KEY}.degraded_rate_factor"), "only allowed with model = \"degraded\""))
            }
            (FailureModel::Removed, None) => None,
            (FailureModel::Degraded, f) => {
                let f = f.unwrap_or(DEFAULT_DEGRADED_RATE_FACTOR);
                if !(f > 0.0 && f < 1.0) {
                    return Err(Error::invalid(format!("{KEY}.degraded_rate_factor"), format!("{f}: must be a fraction strictly between 0 and 1")));
                }
                Some(f)
            }
        };
        let tors: Vec<u32> = (fabric.hosts..fabric.tier.len() as u32).filter(|&n| fabric.tier[n as usize] == Tier::Tor).collect();
        if self.tors == 0 || self.tors as usize > tors.len() {
            return Err(Error::invalid(format!("{KEY}.tors"), format!("{}: the fabric has {} ToRs; allowed: 1..={}", self.tors, tors.len(), tors.len())));
        }
        let uplinks = |t: u32| -> Vec<PortId> {
            fabric.ports_of(t).iter().copied().filter(|&p| fabric.tier[fabric.ports[p as usize].peer as usize] != Tier::Host).collect()
        };
        // Every ToR of the supported fabrics has the same number of uplinks.
        let n_up = uplinks(tors[0]).len() as u32;
        let max = match self.model {
            FailureModel::Removed => n_up.saturating_sub(1),
            FailureModel::Degraded => n_up,
        };
        if self.uplinks_per_tor == 0 || self.uplinks_per_tor > max {
            let why = if self.model == FailureModel::Removed && self.uplinks_per_tor == n_up {
                format!("removing all {n_up} uplinks of a ToR would cut its hosts off the fabric (a partition)")
            } else {
                format!("a ToR has {n_up} uplinks")
            };
            return Err(Error::invalid(
                format!("{KEY}.uplinks_per_tor"),
                format!("{}: {why}; allowed: 1..={max} with model = \"{}\"", self.uplinks_per_tor, if self.model == FailureModel::Removed { "removed" } else { "degraded" }),
            ));
        }
        let mut rng = Rng::stream(seed, "failures", 0);
        let mut pick = tors;
        partial_shuffle(&mut rng, &mut pick, self.tors as usize);
        let mut chosen = pick[..self.tors as usize].to_vec();
        chosen.sort_unstable();
        let mut out = Vec::with_capacity((self.tors * self.uplinks_per_tor) as usize);
        for t in chosen {
            let mut ups = uplinks(t);
            partial_shuffle(&mut rng, &mut ups, self.uplinks_per_tor as usize);
            let mut failed = ups[..self.uplinks_per_tor as usize].to_vec();
            failed.sort_unstable();
            for p in failed {
                let spec = &fabric.ports[p as usize];
                let rate = factor.map(|f| BitsPerSec(((spec.rate.0 as f64 * f).round() as u64).max(1)));
                out.push(FailedLink { up: p, down: spec.reverse, rate });
            }
        }
        Ok(out)
    }
}

/// Moves a uniform random sample of `k` elements of `v` to its front (in random order).
fn partial_shuffle<T>(rng: &mut Rng, v: &mut [T], k: usize) {
    for i in 0..k.min(v.len()) {
        let j = i + rng.below((v.len() - i) as u64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::{leaf_spine, TierLinks};
    use crate::units::US;

    fn t8k_like(k: u32) -> Fabric {
        let l = (BitsPerSec::from_gbps(400.0), US);
        leaf_spine::build(k, 1, TierLinks { host: l, tor_up: l, agg_up: l }, 0).unwrap()
    }

    fn cfg(tors: u32, uplinks: u32, model: FailureModel) -> FailuresConfig {
        FailuresConfig { tors, uplinks_per_tor: uplinks, model, degraded_rate_factor: None }
    }

    //= strack spec §5.2.2 (T-8K failures)
    //# 16 ToRs each lose 4 of their 64 uplinks: 64 cables, 4 per affected ToR, distinct.
    #[test]
    fn t8k_counts() {
        let f = t8k_like(128);
        let links = cfg(16, 4, FailureModel::Removed).choose(&f, 7).unwrap();
        assert_eq!(links.len(), 64);
        let mut tors: Vec<u32> = links.iter().map(|l| f.ports[l.up as usize].owner).collect();
        tors.dedup();
        assert_eq!(tors.len(), 16);
        let mut ups: Vec<PortId> = links.iter().map(|l| l.up).collect();
        ups.sort_unstable();
        ups.dedup();
        assert_eq!(ups.len(), 64);
        assert!(links.iter().all(|l| f.tier[f.ports[l.up as usize].peer as usize] == Tier::Agg && l.rate.is_none()));
    }

    #[test]
    fn degraded_rate_is_the_factor() {
        let f = t8k_like(8);
        let links = cfg(2, 4, FailureModel::Degraded).choose(&f, 1).unwrap();
        assert_eq!(links.len(), 8);
        assert!(links.iter().all(|l| l.rate == Some(BitsPerSec::from_gbps(40.0))));
    }

    #[test]
    fn out_of_range_is_refused() {
        let f = t8k_like(8);
        let e = cfg(9, 1, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.tors") && e.contains("1..=8"), "{e}");
        let e = cfg(1, 4, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.uplinks_per_tor") && e.contains("partition") && e.contains("1..=3"), "{e}");
        let e = cfg(1, 5, FailureModel::Degraded).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("uplinks_per_tor") && e.contains("1..=4"), "{e}");
        let mut c = cfg(1, 1, FailureModel::Degraded);
        c.degraded_rate_factor = Some(1.5);
        let e = c.choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.degraded_rate_factor"), "{e}");
    }
}
