//! Ring algorithm (strack spec §5.3.4 "RING"; NCCL's ring): the buffer is cut into N segments;
//! in step s rank r sends segment (r − s) mod N to rank r + 1. AllReduce runs 2(N−1) steps
//! (reduce-scatter then all-gather), AllGather and ReduceScatter N−1 steps; the traffic of each
//! step is the same, only what the receiver does with the data differs. Chunk j of step s + 1
//! leaves rank r once chunk j of step s has arrived from rank r − 1.

use super::{Dep, InstanceBuilder, Sent};

/// Emits a ring of `steps` steps over a buffer of `bytes` per rank.
pub fn build(b: &mut InstanceBuilder, bytes: u64, steps: u32) {
    let all: Vec<u32> = (0..b.ranks()).collect();
    among(b, &all, bytes, steps, None);
}

/// A ring of `steps` steps among `members` (ranks, member i sending to member i + 1) over a
/// buffer of `bytes` per member; the first step's chunks of member i wait for `start[i]` when
/// given. Returns, per member, the chunks it received in the last step (none for 0 steps).
pub fn among(b: &mut InstanceBuilder, members: &[u32], bytes: u64, steps: u32, start: Option<&[Dep]>) -> Vec<Vec<Sent>> {
    let n = members.len() as u32;
    let segment = bytes.div_ceil(n as u64);
    // prev[i] = chunks member i sent in the previous step.
    let mut prev: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    for s in 0..steps {
        let mut cur = Vec::with_capacity(n as usize);
        for i in 0..n {
            let from = &prev[((i + n - 1) % n) as usize];
            let sent = b.send_chunked(members[i as usize], members[((i + 1) % n) as usize], segment, |j| match (s, start) {
                (0, Some(d)) => vec![d[i as usize]],
                (0, None) => vec![],
                _ => vec![from[j].delivered()],
            });
            cur.push(sent);
        }
        prev = cur;
    }
    (0..n).map(|i| std::mem::take(&mut prev[((i + n - 1) % n) as usize])).collect()
}
