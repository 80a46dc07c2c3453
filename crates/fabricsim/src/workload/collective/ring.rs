//! Ring algorithm (strack spec §5.3.4 "RING"; NCCL's ring): the buffer is cut into N segments;
//! in step s rank r sends segment (r − s) mod N to rank r + 1. AllReduce runs 2(N−1) steps
//! (reduce-scatter then all-gather), AllGather and ReduceScatter N−1 steps; the traffic of each
//! step is the same, only what the receiver does with the data differs. Chunk j of step s + 1
//! leaves rank r once chunk j of step s has arrived from rank r − 1.

use super::{InstanceBuilder, Sent};

/// Emits a ring of `steps` steps over a buffer of `bytes` per rank.
pub fn build(b: &mut InstanceBuilder, bytes: u64, steps: u32) {
    let n = b.ranks();
    let segment = bytes.div_ceil(n as u64);
    // prev[r] = chunks rank r sent in the previous step.
    let mut prev: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    for s in 0..steps {
        let mut cur = Vec::with_capacity(n as usize);
        for r in 0..n {
            let from = &prev[((r + n - 1) % n) as usize];
            let sent = b.send_chunked(r, (r + 1) % n, segment, |j| if s == 0 { vec![] } else { vec![from[j].delivered()] });
            cur.push(sent);
        }
        prev = cur;
    }
}
