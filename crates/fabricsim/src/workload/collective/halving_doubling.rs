//! Halving-doubling AllReduce (strack spec §5.3.4 "HD"; Rabenseifner / Thakur et al.):
//! recursive-halving reduce-scatter over log2 N steps, step i exchanging half of the data still
//! held with partner r XOR 2^i, then recursive-doubling all-gather with the partners in reverse
//! order and the data doubling each step. Needs a power-of-two number of ranks.
//!
//! Pipelining: a chunk of step t + 1 waits for the chunk of step t, received from that step's
//! partner, that completes the same fraction of the data (steps carry different amounts, so
//! this is the proportional match of [`super::matching_chunk`]).

use super::{chunk_count, matching_chunk, InstanceBuilder, Sent};

/// Emits a halving-doubling AllReduce of `bytes` per rank.
pub fn build(b: &mut InstanceBuilder, bytes: u64) {
    let n = b.ranks();
    let levels = n.trailing_zeros();
    let mut steps: Vec<(u32, u64)> = (0..levels).map(|i| (1u32 << i, bytes.div_ceil(2u64 << i))).collect();
    let gather: Vec<(u32, u64)> = (0..levels).rev().map(|i| (1u32 << i, bytes.div_ceil(2u64 << i))).collect();
    steps.extend(gather);
    // prev[r] = (partner distance, chunks rank r sent) in the previous step.
    let mut prev: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    let mut prev_dist = 0;
    for (t, &(dist, step_bytes)) in steps.iter().enumerate() {
        let mut cur = Vec::with_capacity(n as usize);
        let m = chunk_count(step_bytes, b.chunk);
        for r in 0..n {
            // What rank r received in the previous step came from its partner of that step.
            let from = &prev[(r ^ prev_dist) as usize];
            let sent = b.send_chunked(r, r ^ dist, step_bytes, |j| if t == 0 { vec![] } else { vec![from[matching_chunk(j, m, from.len())].delivered()] });
            cur.push(sent);
        }
        prev = cur;
        prev_dist = dist;
    }
}
