//! AlltoAll: every rank sends S/N bytes to every other rank.
//!
//! `direct` (strack spec §5.3.4 "A2A"): rank n's k-th message goes to rank (n + k) mod N, k =
//! 1…N−1, which avoids incast; at most P destinations are active per sender, a new peer starting
//! when the message to the peer P places earlier has completed. Because every rank visits its
//! peers in the same staggered order, each receiver also sees at most about P senders at once,
//! the spec's per-receiver cap. `pairwise`: N−1 rounds; in round k rank n sends to n + k and
//! receives from n − k, and starts round k + 1 once both its send has completed and its receive
//! has arrived (exchange as permutation rounds).

use super::{Dep, InstanceBuilder, Sent};

/// Emits a direct AlltoAll of `bytes` per rank with at most `parallelism` peers at once.
pub fn build_direct(b: &mut InstanceBuilder, bytes: u64, parallelism: u32) {
    let n = b.ranks();
    let per_peer = bytes.div_ceil(n as u64);
    let p = parallelism.min(n - 1) as usize;
    for r in 0..n {
        // done[k] = a join over the completions of the message to peer k + 1.
        let mut done: Vec<u32> = Vec::with_capacity(n as usize - 1);
        for k in 1..n {
            let idx = (k - 1) as usize;
            let deps: Vec<Dep> = if idx >= p { vec![Dep { task: done[idx - p], on: crate::workload::graph::Trigger::Completed }] } else { vec![] };
            let sent = b.send_chunked(r, (r + k) % n, per_peer, |_| deps.clone());
            let completions: Vec<Dep> = sent.iter().map(Sent::completed).collect();
            done.push(b.join(&completions));
        }
    }
}

/// Emits a pairwise-exchange AlltoAll of `bytes` per rank.
pub fn build_pairwise(b: &mut InstanceBuilder, bytes: u64) {
    let n = b.ranks();
    let per_peer = bytes.div_ceil(n as u64);
    // round_done[r] = join: rank r's previous round is over (send completed, receive arrived).
    let mut round_done: Vec<Option<u32>> = vec![None; n as usize];
    for k in 1..n {
        let mut sent_by: Vec<Vec<Sent>> = Vec::with_capacity(n as usize);
        for r in 0..n {
            let deps: Vec<Dep> = round_done[r as usize].map(|j| vec![Dep { task: j, on: crate::workload::graph::Trigger::Delivered }]).unwrap_or_default();
            sent_by.push(b.send_chunked(r, (r + k) % n, per_peer, |_| deps.clone()));
        }
        for r in 0..n {
            let from = ((r + n - k) % n) as usize;
            let mut deps: Vec<Dep> = sent_by[r as usize].iter().map(Sent::completed).collect();
            deps.extend(sent_by[from].iter().map(Sent::delivered));
            round_done[r as usize] = Some(b.join(&deps));
        }
    }
}
