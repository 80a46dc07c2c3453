//! Faults on the pod–core (aggregation–core) links of a 3-tier fat tree (paper §4 "Failure
//! models" and §5.4): which `f` of a pod's uplinks fail (`placement`), and Eq. 2 of Appendix A,
//! whether the damaged uplinks become the bottleneck of an all-to-all.
//!
//! **Placement** (per pod, the same in every pod):
//! - `packed` (default; htsim's built-in model, where the paper speaks of "the switch with the
//!   failed uplinks"): the first `f` uplinks in (aggregation switch, uplink) order, so `f = 2`
//!   puts both on the pod's first aggregation switch;
//! - `spread`: (uplink, aggregation switch) order, i.e. round-robin over the aggregation
//!   switches;
//! - `random`: `f` uplinks drawn uniformly (the `failures` stream of the seed), independently
//!   per pod.
//!
//! **Eq. 2** (Appendix A): an all-to-all over `N` hosts with `H` per pod puts `N − 1` flows on
//! each host link and `H·(N − H)` flows on the pod's uplinks, whose usable capacity is
//! `U − f·p` links (`U` uplinks per pod, `f` of them losing a fraction `p`). The failures do not
//! make the uplinks the bottleneck iff `N − 1 ≥ H·(N − H) / (U − f·p)`; for k = 8 (N = 128,
//! H = 16, U = 16) that is `f·p ≤ 16 − 1792/127 ≈ 1.88976` (printed 1.890; the 1.889 quoted
//! for it is the truncation). `U` is counted from the fabric, so an oversubscribed aggregation
//! tier is covered too.
//!
//! **Sources and choices.** The paper (§4 "Failure models") uses "the failure model provided in
//! the simulator" generalised to `f` links per pod losing a fraction `p` of "the bandwidth
//! between the two nodes"; htsim's own model slows only the core→aggregation direction of pod
//! 0 and shrinks that queue. Following the paper's wording (bandwidth between the nodes, every
//! pod), both directions slow and every pod is affected; the packed placement is htsim's. The
//! queue is kept by default (the paper gives every port the same `Q`, §4.2), with htsim's
//! one-direction, queue-scaled variant available as `direction` and `scale_queue`.

use super::{Fabric, Tier};
use crate::error::{Error, Result};
use crate::ids::{NodeId, PortId};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// Which of a pod's uplinks fail.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The first `f` in (aggregation switch, uplink) order.
    #[default]
    Packed,
    /// Round-robin over the pod's aggregation switches.
    Spread,
    /// Uniformly at random per pod.
    Random,
}

/// The uplinks (aggregation port towards a core) of every pod, each pod's in (aggregation
/// switch, uplink) order; errors name `key` when the fabric has no pod–core links.
pub fn pod_uplinks(fabric: &Fabric, key: &str) -> Result<Vec<Vec<PortId>>> {
    if !fabric.three_tier {
        return Err(Error::invalid(key, "pod–core link faults need a 3-tier fat tree (kind = \"fat_tree\"); a leaf-spine has no pods and cores"));
    }
    // Pod of each aggregation switch: that of the hosts of any ToR below it.
    let host_pod = fabric.pod_of_host();
    let mut tor_pod = vec![u32::MAX; fabric.tier.len()];
    for (h, &t) in fabric.tor_of_host.iter().enumerate() {
        tor_pod[t.idx()] = host_pod[h];
    }
    let pods = host_pod.iter().max().map_or(0, |&m| m + 1) as usize;
    let mut out = vec![Vec::new(); pods];
    let aggs = (fabric.hosts..fabric.tier.len() as u32).filter(|&n| fabric.tier[n as usize] == Tier::Agg);
    for a in aggs {
        let ports = fabric.ports_of(NodeId(a));
        let Some(pod) = ports.iter().map(|&p| tor_pod[fabric.ports[p.idx()].peer.idx()]).find(|&x| x != u32::MAX) else { continue };
        out[pod as usize].extend(ports.iter().copied().filter(|&p| fabric.tier[fabric.ports[p.idx()].peer.idx()] == Tier::Core));
    }
    Ok(out)
}

/// The `f` failed uplinks of every pod under `placement`, pod by pod, each pod's in port order.
/// `f` must already be within `1..=` the uplinks of a pod.
pub fn place(fabric: &Fabric, pods: &[Vec<PortId>], f: u32, placement: Placement, seed: u64) -> Vec<PortId> {
    let f = f as usize;
    let mut rng = Rng::stream(seed, "failures", 0);
    let mut out = Vec::with_capacity(pods.len() * f);
    for ups in pods {
        let mut chosen: Vec<PortId> = match placement {
            Placement::Packed => ups[..f].to_vec(),
            Placement::Spread => {
                // Index of each uplink within its aggregation switch, then the switch.
                let mut keyed: Vec<(usize, NodeId, PortId)> = Vec::with_capacity(ups.len());
                let mut prev = (NodeId::MAX, 0);
                for &p in ups {
                    let owner = fabric.ports[p.idx()].owner;
                    prev = if owner == prev.0 { (owner, prev.1 + 1) } else { (owner, 0) };
                    keyed.push((prev.1, owner, p));
                }
                keyed.sort_unstable();
                keyed[..f].iter().map(|&(_, _, p)| p).collect()
            }
            Placement::Random => {
                let mut v = ups.clone();
                for i in 0..f {
                    let j = i + rng.below((v.len() - i) as u64) as usize;
                    v.swap(i, j);
                }
                v.truncate(f);
                v
            }
        };
        chosen.sort_unstable();
        out.extend(chosen);
    }
    out
}

/// Eq. 2 of the paper for `f` pod uplinks losing a fraction `p` each: reported by `check` and
/// in `summary.json` (information, not an error).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PodBottleneck {
    /// Failed uplinks per pod.
    pub f: u32,
    /// Fraction of each one's rate lost.
    pub p: f64,
    /// Uplinks per pod (`U`).
    pub pod_uplinks: u32,
    /// Hosts (`N`) and hosts per pod (`H`).
    pub hosts: u32,
    /// Hosts per pod.
    pub hosts_per_pod: u32,
    /// Usable uplink capacity per pod, in links: `U − f·p`.
    pub usable_uplinks: f64,
    /// Largest `f·p` that keeps the uplinks off the bottleneck: `U − H·(N − H)/(N − 1)`.
    pub max_fp: f64,
    /// Whether an all-to-all is bottlenecked on the damaged uplinks (Eq. 2 violated).
    pub bottleneck: bool,
}

impl PodBottleneck {
    /// Eq. 2 for `f`, `p` on `pods` (uplinks per pod) of `fabric`; an `(f, p)` that removes a
    /// pod's whole uplink capacity is an error naming `key`.
    pub fn of(fabric: &Fabric, pods: &[Vec<PortId>], f: u32, p: f64, key: &str) -> Result<Self> {
        let u = pods.first().map_or(0, |v| v.len()) as u32;
        let usable = u as f64 - f as f64 * p;
        if usable <= 0.0 {
            return Err(Error::invalid(key, format!("f = {f}, p = {p} removes the whole uplink capacity of every pod ({u} uplinks): the pods would be cut off")));
        }
        let n = fabric.hosts as f64;
        let h = (fabric.hosts / pods.len().max(1) as u32) as f64;
        let flows_out = h * (n - h);
        Ok(PodBottleneck {
            f,
            p,
            pod_uplinks: u,
            hosts: fabric.hosts,
            hosts_per_pod: h as u32,
            usable_uplinks: usable,
            max_fp: u as f64 - flows_out / (n - 1.0),
            // Eq. 2 multiplied out: (N − 1)·(U − f·p) ≥ H·(N − H).
            bottleneck: (n - 1.0) * usable < flows_out,
        })
    }

    /// One line for `fabricsim check`.
    pub fn describe(&self) -> String {
        format!(
            "f·p = {:.3} {} {:.3} (Eq. 2, all-to-all): pod uplinks {} the bottleneck ({:.3} of {} uplinks usable per pod)",
            self.f as f64 * self.p,
            if self.bottleneck { ">" } else { "≤" },
            self.max_fp,
            if self.bottleneck { "ARE" } else { "are not" },
            self.usable_uplinks,
            self.pod_uplinks
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::{fat_tree, TierLinks};
    use crate::units::{BitsPerSec, Time, US};

    fn k8() -> Fabric {
        let l = (BitsPerSec::from_gbps(100.0), US);
        fat_tree::build(8, 1, fat_tree::OversubscribedTier::Tor, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap()
    }

    /// (agg index within its pod, core index) of each port.
    fn named(f: &Fabric, ports: &[PortId]) -> Vec<String> {
        ports.iter().map(|&p| f.link_name(p)).collect()
    }

    //= paper §5.4: packed placement, k = 8 (4 aggs × 4 uplinks = 16 pod uplinks)
    #[test]
    fn packed_placement_exact_links() {
        let f = k8();
        let pods = pod_uplinks(&f, "k").unwrap();
        assert_eq!(pods.len(), 8);
        assert!(pods.iter().all(|p| p.len() == 16));
        let two = place(&f, &pods, 2, Placement::Packed, 1);
        assert_eq!(two.len(), 16);
        // Pod 0: both on agg0; pod 1: both on agg4 (its first aggregation switch).
        assert_eq!(named(&f, &two[..4]), ["agg0-core0", "agg0-core1", "agg4-core0", "agg4-core1"]);
        assert_eq!(named(&f, &two[14..]), ["agg28-core0", "agg28-core1"]);
        let nine = place(&f, &pods, 9, Placement::Packed, 1);
        assert_eq!(nine.len(), 72);
        // f = 9 spans aggs 0–2: all four uplinks of agg0 and agg1, the first of agg2.
        let want: Vec<String> = (0..4).map(|c| format!("agg0-core{c}")).chain((4..8).map(|c| format!("agg1-core{c}"))).chain(["agg2-core8".to_string()]).collect();
        assert_eq!(named(&f, &nine[..9]), want);
        let pod7: Vec<String> = (0..4).map(|c| format!("agg28-core{c}")).chain((4..8).map(|c| format!("agg29-core{c}"))).chain(["agg30-core8".to_string()]).collect();
        assert_eq!(named(&f, &nine[63..]), pod7);
    }

    #[test]
    fn spread_and_random_placements() {
        let f = k8();
        let pods = pod_uplinks(&f, "k").unwrap();
        let spread = place(&f, &pods, 6, Placement::Spread, 1);
        // Round-robin: first uplink of each of the 4 aggs, then the second of aggs 0 and 1.
        assert_eq!(named(&f, &spread[..6]), ["agg0-core0", "agg0-core1", "agg1-core4", "agg1-core5", "agg2-core8", "agg3-core12"]);
        let r1 = place(&f, &pods, 3, Placement::Random, 5);
        let r2 = place(&f, &pods, 3, Placement::Random, 5);
        let r3 = place(&f, &pods, 3, Placement::Random, 6);
        assert_eq!(r1, r2, "same seed, same links");
        assert_ne!(r1, r3, "another seed, other links");
        for (pod, chunk) in r1.chunks(3).enumerate() {
            let mut c = chunk.to_vec();
            c.dedup();
            assert_eq!(c.len(), 3);
            assert!(c.iter().all(|p| pods[pod].contains(p)), "pod {pod}: {:?}", named(&f, chunk));
        }
        // Over many seeds every uplink of pod 0 gets picked (uniform, not packed).
        let mut hit = [false; 16];
        for s in 0..200 {
            for p in &place(&f, &pods, 2, Placement::Random, s)[..2] {
                hit[pods[0].iter().position(|q| q == p).unwrap()] = true;
            }
        }
        assert!(hit.iter().all(|&h| h));
    }

    //= paper Appendix A, Eq. 2: k = 8 threshold f·p ≤ 1.889
    #[test]
    fn eq2_verdicts() {
        let f = k8();
        let pods = pod_uplinks(&f, "k").unwrap();
        let e = |fl: u32, p: f64| PodBottleneck::of(&f, &pods, fl, p, "topology.failures.p");
        let ok = e(2, 0.9).unwrap();
        assert!((ok.max_fp - (16.0 - 1792.0 / 127.0)).abs() < 1e-12 && (ok.max_fp - 1.889).abs() < 1e-3);
        assert_eq!((ok.hosts, ok.hosts_per_pod, ok.pod_uplinks), (128, 16, 16));
        assert!(!ok.bottleneck);
        for (fl, p) in [(3, 0.6), (4, 0.45), (6, 0.3), (9, 0.2), (1, 0.5)] {
            assert!(!e(fl, p).unwrap().bottleneck, "({fl}, {p})");
        }
        // Fig. 5: three links at 90 % (f·p = 2.7).
        let bad = e(3, 0.9).unwrap();
        assert!(bad.bottleneck && bad.describe().contains("ARE"), "{}", bad.describe());
        assert!(e(2, 0.95).unwrap().bottleneck); // 1.9 > 1.889
        let err = e(16, 1.0).unwrap_err().to_string();
        assert!(err.contains("topology.failures.p") && err.contains("whole uplink capacity"), "{err}");
    }
}
