//! `permutation`: every host sends one flow and receives one, to a seeded random derangement
//! (no host sends to itself). The workload of the STrack (strack spec §5.3.1) and SMaRTT-REPS
//! (smartt-reps spec §5.2) permutation experiments and of the shared benchmarks.

use super::{default_flow_bytes, time_from_us, FlowSpec};
use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::scenario::ByteSize;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "permutation";
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
}

impl Default for PermutationParams {
    fn default() -> Self {
        PermutationParams { flow_bytes: default_flow_bytes(), start_us: 0.0, start_jitter_us: 0.0 }
    }
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

/// The flows.
pub fn generate(p: &PermutationParams, hosts: u32, rng: &mut Rng) -> Result<Vec<FlowSpec>> {
    if hosts < 2 {
        return Err(Error::invalid("workload.kind", "a permutation needs at least 2 hosts"));
    }
    if p.flow_bytes.0 == 0 {
        return Err(Error::invalid("workload.flow_bytes", "0: flows must carry at least one byte"));
    }
    let start = time_from_us("workload.start_us", p.start_us)?;
    let perm = derangement(hosts, rng);
    Ok((0..hosts).map(|s| FlowSpec { src: s, dst: perm[s as usize], bytes: p.flow_bytes.0, start, after: None }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
