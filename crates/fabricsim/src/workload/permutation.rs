//! `permutation`: every host sends one flow and receives one, to a seeded random derangement
//! (no host sends to itself). The workload of the STrack (strack spec §5.3.1) and SMaRTT-REPS
//! (smartt-reps spec §5.2) permutation experiments and of the shared benchmarks.
//!
//! Options for the SMaRTT-REPS variants (spec §5.2 item 2): `locality = "cross_pod"` keeps
//! every pair in different pods (every path crosses the core: the load balancer's worst case;
//! `"cross_tor"` only forbids same-ToR pairs), `permutations = m` runs m independent
//! permutations at once (Fig. 15c), and `large_flows` flows chosen at random carry
//! `large_flow_bytes` instead (the uneven permutations of Figs. 15d and 17b).
//!
//! `method = "shifts"` builds the m permutations as the load-balancing study's W-PERM(m)
//! (lb-ai-training spec §5.2; paper §5 "flows per host"): one random relabelling π of the
//! hosts and m distinct random shifts j ∈ 1..n−1, permutation j sending s → π⁻¹((π(s) + j) mod n).
//! No pair repeats, every host sends and receives exactly m flows, and m = n − 1 is the full
//! all-to-all. The default `"independent"` draws each permutation on its own (pairs may repeat).

use super::{default_flow_bytes, time_from_us, FlowSpec};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::rng::Rng;
use crate::units::{ByteSize, Bytes};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "permutation";
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &[];
/// Registry summary.
pub const SUMMARY: &str = "each host sends one flow to a random distinct host (seeded derangement)";

/// Parameters of `permutation`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermutationParams {
    /// Bytes per flow.
    #[serde(default = "default_flow_bytes")]
    pub flow_bytes: ByteSize,
    /// Start time of every flow.
    pub start_us: f64,
    /// Each flow starts up to this much later, uniformly at random.
    pub start_jitter_us: f64,
    /// Which pairs are allowed.
    pub locality: Locality,
    /// Independent permutations run at once (each host sends and receives this many flows).
    pub permutations: u32,
    /// How many flows (chosen at random) carry `large_flow_bytes` instead of `flow_bytes`.
    pub large_flows: u32,
    /// Size of those flows.
    pub large_flow_bytes: Option<ByteSize>,
    /// How the `permutations` are drawn (left out of the scenario echo when default, so
    /// existing runs' summary.json stays byte-identical).
    #[serde(skip_serializing_if = "Method::is_default")]
    pub method: Method,
}

/// How several permutations are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Each permutation an independent random derangement (pairs may repeat across them).
    #[default]
    Independent,
    /// W-PERM(m): distinct shifts of one random relabelling (no pair repeats).
    Shifts,
}

impl Method {
    fn is_default(&self) -> bool {
        *self == Method::Independent
    }
}

/// Pairs a permutation may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Locality {
    /// Any two distinct hosts.
    #[default]
    Any,
    /// Hosts under different ToRs.
    CrossTor,
    /// Hosts in different pods.
    CrossPod,
}

impl Default for PermutationParams {
    fn default() -> Self {
        PermutationParams {
            flow_bytes: default_flow_bytes(),
            start_us: 0.0,
            start_jitter_us: 0.0,
            locality: Locality::Any,
            permutations: 1,
            large_flows: 0,
            large_flow_bytes: None,
            method: Method::Independent,
        }
    }
}

/// A random permutation of `0..n` with `group[i] != group[p[i]]` for every i (a derangement
/// when every host is its own group): a shuffle whose conflicts are repaired by swapping with a
/// random slot when the swap fixes the conflict without creating one.
pub fn separated_permutation(group: &[u32], rng: &mut Rng) -> Option<Vec<u32>> {
    let n = group.len();
    let mut p: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut p);
    let ok = |p: &[u32], i: usize| group[i] != group[p[i] as usize];
    for i in 0..n {
        let mut tries = 0;
        while !ok(&p, i) {
            let j = rng.below(n as u64) as usize;
            if group[i] != group[p[j] as usize] && group[j] != group[p[i] as usize] {
                p.swap(i, j);
            }
            tries += 1;
            if tries > 64 * n {
                return None;
            }
        }
    }
    Some(p)
}

/// A uniformly random derangement of `0..n` (rejection of shuffles with fixed points would be
/// slow for large n, so fixed points are repaired by swapping with a random other slot).
pub fn derangement(n: u32, rng: &mut Rng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    rng.shuffle(&mut p);
    for i in 0..n as usize {
        if p[i] == i as u32 {
            let mut j = rng.below(n as u64 - 1) as usize;
            if j >= i {
                j += 1;
            }
            p.swap(i, j);
        }
    }
    // A swap can only create a fixed point at j if p[i] == j, which the next pass repairs;
    // loop until none remain (terminates quickly: expected fixed points after a pass is ~1/n).
    while let Some(i) = (0..n as usize).find(|&i| p[i] == i as u32) {
        let j = (i + 1) % n as usize;
        p.swap(i, j);
    }
    p
}

/// `m` permutations of `0..n` as distinct shifts of one random relabelling π:
/// permutation j maps s to π⁻¹((π(s) + j) mod n) for m distinct shifts j drawn from 1..n−1.
pub fn shifted_permutations(n: u32, m: u32, rng: &mut Rng) -> Vec<Vec<u32>> {
    let mut pi: Vec<u32> = (0..n).collect();
    rng.shuffle(&mut pi);
    let mut inv = vec![0u32; n as usize];
    for (s, &label) in pi.iter().enumerate() {
        inv[label as usize] = s as u32;
    }
    let mut shifts: Vec<u32> = (1..n).collect();
    rng.shuffle(&mut shifts);
    shifts[..m as usize].iter().map(|&j| (0..n).map(|s| inv[((pi[s as usize] + j) % n) as usize]).collect()).collect()
}

/// Checks the workload's counts on `hosts` hosts (before the fabric is built, and again by
/// [`generate`]).
pub fn admit(p: &PermutationParams, hosts: u32, room: super::Room) -> Result<()> {
    if hosts < 2 {
        return Err(Error::invalid("workload.kind", "a permutation needs at least 2 hosts"));
    }
    if p.flow_bytes.0 == 0 {
        return Err(Error::invalid("workload.flow_bytes", "0: flows must carry at least one byte"));
    }
    if p.permutations == 0 {
        return Err(Error::invalid("workload.permutations", "0: must be at least 1"));
    }
    room.admit_flows("workload.permutations", hosts as u64 * p.permutations as u64, &format!("{hosts} hosts × {} permutations", p.permutations))
}

/// The flows. `pods` is the pod of every host (see `Fabric::pod_of_host`), `tors` its ToR.
pub fn generate(p: &PermutationParams, pods: &[u32], tors: &[u32], rng: &mut Rng, room: super::Room) -> Result<Vec<FlowSpec>> {
    let hosts = pods.len() as u32;
    admit(p, hosts, room)?;
    let large = match (p.large_flows, p.large_flow_bytes) {
        (0, _) => 0,
        (_, None) => return Err(Error::invalid("workload.large_flow_bytes", "missing: large_flows needs large_flow_bytes")),
        (_, Some(ByteSize(0))) => return Err(Error::invalid("workload.large_flow_bytes", "0: flows must carry at least one byte")),
        (n, Some(b)) if n <= hosts * p.permutations => b.0,
        (n, _) => return Err(Error::invalid("workload.large_flows", format!("{n}: more than the {} flows", hosts * p.permutations))),
    };
    let start = time_from_us("workload.start_us", p.start_us)?;
    let perms: Vec<Vec<u32>> = match p.method {
        Method::Shifts => {
            if p.locality != Locality::Any {
                return Err(Error::invalid("workload.locality", "method = \"shifts\" draws from every pair of hosts: only \"any\" is allowed with it"));
            }
            if p.permutations > hosts - 1 {
                return Err(Error::invalid(
                    "workload.permutations",
                    format!("{}: method = \"shifts\" allows 1..={} on {hosts} hosts (n − 1 is the all-to-all)", p.permutations, hosts - 1),
                ));
            }
            shifted_permutations(hosts, p.permutations, rng)
        }
        Method::Independent => (0..p.permutations)
            .map(|_| match p.locality {
                Locality::Any => Ok(derangement(hosts, rng)),
                Locality::CrossTor | Locality::CrossPod => {
                    let (groups, what) = if p.locality == Locality::CrossPod { (pods, "pods") } else { (tors, "ToRs") };
                    separated_permutation(groups, rng).ok_or_else(|| {
                        Error::invalid("workload.locality", format!("no permutation keeps every pair in different {what} on this fabric (allowed: \"any\", \"cross_tor\", \"cross_pod\")"))
                    })
                }
            })
            .collect::<Result<_>>()?,
    };
    let mut flows: Vec<FlowSpec> = perms
        .iter()
        .flat_map(|perm| (0..hosts).map(move |s| FlowSpec { src: NodeId(s), dst: NodeId(perm[s as usize]), bytes: Bytes(p.flow_bytes.0), start, after: None }))
        .collect();
    if p.large_flows > 0 {
        let mut idx: Vec<usize> = (0..flows.len()).collect();
        rng.shuffle(&mut idx);
        for &i in &idx[..p.large_flows as usize] {
            flows[i].bytes = Bytes(large);
        }
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    #[test]
    fn derangement_is_a_permutation_without_fixed_points() {
        for n in [2u32, 3, 5, 128, 1000] {
            let mut rng = Rng::stream(n as u64, "t", 0);
            let p = derangement(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for (i, &d) in p.iter().enumerate() {
                assert_ne!(i as u32, d);
                assert!(!seen[d as usize]);
                seen[d as usize] = true;
            }
        }
    }

    #[test]
    fn cross_pod_parallel_and_uneven_permutations() {
        use crate::topo::{fat_tree, TierLinks};
        let l = (crate::units::BitsPerSec::from_gbps(400.0), Time(1000));
        let fabric = fat_tree::build(8, 1, fat_tree::OversubscribedTier::Tor, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap();
        let pods = fabric.pod_of_host();
        // k = 8: 8 pods of 16 hosts, numbered in host order.
        assert_eq!(pods[0], 0);
        assert_eq!(pods[15], 0);
        assert_eq!(pods[16], 1);
        assert_eq!(*pods.iter().max().unwrap(), 7);
        let p = PermutationParams {
            locality: Locality::CrossPod,
            permutations: 3,
            large_flows: 2,
            large_flow_bytes: Some(ByteSize(4 << 20)),
            ..Default::default()
        };
        let mut rng = Rng::stream(1, "t", 0);
        let flows = generate(&p, &pods, &fabric.tor_of_host.iter().map(|t| t.0).collect::<Vec<_>>(), &mut rng, super::super::Room::UNLIMITED).unwrap();
        assert_eq!(flows.len(), 3 * 128);
        assert!(flows.iter().all(|f| pods[f.src.idx()] != pods[f.dst.idx()]));
        for h in 0..128u32 {
            assert_eq!(flows.iter().filter(|f| f.src == NodeId(h)).count(), 3);
            assert_eq!(flows.iter().filter(|f| f.dst == NodeId(h)).count(), 3);
        }
        assert_eq!(flows.iter().filter(|f| f.bytes == Bytes(4 << 20)).count(), 2);
        // A single pod cannot be separated.
        assert!(separated_permutation(&[0, 0, 0], &mut rng).is_none());
    }

    #[test]
    fn shifted_permutations_never_repeat_a_pair_and_n_minus_1_is_all_to_all() {
        let mut rng = Rng::stream(7, "t", 0);
        for (n, m) in [(128u32, 1u32), (128, 4), (128, 127), (5, 4)] {
            let perms = shifted_permutations(n, m, &mut rng);
            assert_eq!(perms.len(), m as usize);
            let mut pairs = std::collections::BTreeSet::new();
            for p in &perms {
                let mut seen = vec![false; n as usize];
                for (s, &d) in p.iter().enumerate() {
                    assert_ne!(s as u32, d, "a shift in 1..n-1 has no fixed point");
                    assert!(!std::mem::replace(&mut seen[d as usize], true), "each is a permutation");
                    assert!(pairs.insert((s as u32, d)), "pair ({s}, {d}) repeats");
                }
            }
            if m == n - 1 {
                assert_eq!(pairs.len(), (n * (n - 1)) as usize);
            }
        }
        let params = |m, locality| PermutationParams { permutations: m, method: Method::Shifts, locality, ..Default::default() };
        let pods = vec![0u32; 8];
        let e = generate(&params(8, Locality::Any), &pods, &pods, &mut rng, super::super::Room::UNLIMITED).unwrap_err().to_string();
        assert!(e.contains("workload.permutations") && e.contains("1..=7"), "{e}");
        let e = generate(&params(2, Locality::CrossTor), &pods, &pods, &mut rng, super::super::Room::UNLIMITED).unwrap_err().to_string();
        assert!(e.contains("workload.locality") && e.contains("\"any\""), "{e}");
        assert_eq!(generate(&params(7, Locality::Any), &pods, &pods, &mut rng, super::super::Room::UNLIMITED).unwrap().len(), 56);
    }
}
