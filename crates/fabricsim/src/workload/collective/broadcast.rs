//! Broadcast as a pipelined chain (NCCL's ring broadcast): the root sends the buffer, chunk by
//! chunk, to the next rank of the ring, and every rank forwards each chunk to its successor as
//! soon as it has arrived. The last rank of the chain only receives.

use super::{InstanceBuilder, Sent};

/// Emits a broadcast of `bytes` from rank `root`.
pub fn build(b: &mut InstanceBuilder, bytes: u64, root: u32) {
    let n = b.ranks();
    let mut prev: Vec<Sent> = Vec::new();
    for k in 0..n - 1 {
        let (src, dst) = ((root + k) % n, (root + k + 1) % n);
        let from = std::mem::take(&mut prev);
        prev = b.send_chunked(src, dst, bytes, |j| if k == 0 { vec![] } else { vec![from[j].delivered()] });
    }
}
