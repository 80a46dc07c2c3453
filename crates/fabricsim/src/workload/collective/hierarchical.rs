//! Hierarchical (two-level) ring AllReduce, as NCCL runs AllReduce on multi-GPU servers and as
//! the "2D" / hierarchical ring of the literature: the ranks form groups of `group` consecutive
//! ranks (a server's GPUs, when a job is placed contiguously on servers of that many GPUs).
//! (1) Inside each group a ring ReduceScatter (`group − 1` steps over the buffer): rank l of
//! the group ends with segment l reduced over the group. (2) For each local index l, a ring
//! AllReduce (2(m − 1) steps over S / group) among the m ranks of that index, one per group:
//! on a rail-optimized fabric, one ring per rail, every NIC busy at once. (3) Inside each group
//! a ring AllGather (`group − 1` steps over the buffer). A rank starts a phase once it has
//! received the previous phase's last chunks (a join over them). Over a scale-up domain (1) and
//! (3) stay inside the servers, and each NIC carries 2(m − 1)/m · S / group, against the flat
//! ring's 2(N − 1)/N · S on the two NICs of a server it crosses.
//!
//! `hier_tree` runs phase (2) as a double binary tree among the m ranks of each local index
//! instead of a ring (NCCL's tree algorithm across servers, one pair of trees per rail; its
//! depth grows as log2 m where the ring's chain grows as 2(m − 1)): the same bytes on every
//! NIC, fewer hops in sequence, and an interior rank receiving from two children at once.

use super::{double_binary_tree, ring, Dep, InstanceBuilder, Sent};
use crate::workload::graph::Trigger;

/// How phase (2) joins the groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Across {
    /// A ring per local index (`hier`).
    Ring,
    /// A double binary tree per local index (`hier_tree`).
    Tree,
}

/// Emits the hierarchical AllReduce of `bytes` per rank in groups of `group` consecutive ranks
/// (`group` divides the rank count: validated), phase (2) as `across` says.
pub fn build(b: &mut InstanceBuilder, bytes: u64, group: u32, across: Across) {
    let n = b.ranks();
    let m = n / group;
    let groups: Vec<Vec<u32>> = (0..m).map(|k| (k * group..(k + 1) * group).collect()).collect();
    let mut received: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    // (1) ReduceScatter inside each group.
    for members in &groups {
        for (i, got) in ring::among(b, members, bytes, group - 1, None).into_iter().enumerate() {
            received[members[i] as usize] = got;
        }
    }
    // (2) AllReduce of each reduced segment among the ranks of one local index.
    let segment = bytes.div_ceil(group as u64);
    let mut next: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    for l in (0..group).filter(|_| m > 1) {
        let members: Vec<u32> = (0..m).map(|k| k * group + l).collect();
        let start = ready(b, &members, &received);
        let got = match across {
            Across::Ring => ring::among(b, &members, segment, 2 * (m - 1), start.as_deref()),
            Across::Tree => double_binary_tree::among(b, &members, segment, start.as_deref()),
        };
        for (i, got) in got.into_iter().enumerate() {
            next[members[i] as usize] = got;
        }
    }
    // Ranks whose phase (2) moved nothing (one group) go on from phase (1).
    for (r, got) in next.into_iter().enumerate() {
        if !got.is_empty() {
            received[r] = got;
        }
    }
    // (3) AllGather inside each group.
    for members in groups.iter().filter(|_| group > 1) {
        let start = ready(b, members, &received);
        ring::among(b, members, bytes, group - 1, start.as_deref());
    }
}

/// Per member, a join over the chunks it received last: what its next phase waits for (`None`
/// when no member received any, as after a phase of no steps).
fn ready(b: &mut InstanceBuilder, members: &[u32], received: &[Vec<Sent>]) -> Option<Vec<Dep>> {
    if members.iter().all(|&r| received[r as usize].is_empty()) {
        return None;
    }
    Some(
        members
            .iter()
            .map(|&r| {
                let deps: Vec<Dep> = received[r as usize].iter().map(Sent::delivered).collect();
                Dep { task: b.join(&deps), on: Trigger::Delivered }
            })
            .collect(),
    )
}

/// Emits a hierarchical ReduceScatter (`reduce`) or AllGather of a `bytes` buffer per rank in
/// groups of `group` consecutive ranks, the two halves of the AllReduce above: ReduceScatter
/// reduces inside each group (a ring over the buffer: member l ends with segment l reduced over
/// its group), then across the groups among the ranks of each local index (a ring over S /
/// group: each rank ends with its S / N reduced over all); AllGather gathers across the groups
/// first (each rank of local index l ends with the l-th S / group of the buffer), then inside
/// each group. Each NIC carries (m − 1)/m · S / group; a phase of no steps (one group, or groups
/// of one) is skipped.
pub fn build_one_way(b: &mut InstanceBuilder, bytes: u64, group: u32, reduce: bool) {
    let n = b.ranks();
    let m = n / group;
    let groups: Vec<Vec<u32>> = (0..m).map(|k| (k * group..(k + 1) * group).collect()).collect();
    let across: Vec<Vec<u32>> = (0..group).map(|l| (0..m).map(|k| k * group + l).collect()).collect();
    let inside = (&groups, bytes, group - 1);
    let between = (&across, bytes.div_ceil(group as u64), m - 1);
    let phases = if reduce { [inside, between] } else { [between, inside] };
    let mut received: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    for (sets, size, steps) in phases.into_iter().filter(|p| p.2 > 0) {
        for members in sets {
            let start = ready(b, members, &received);
            for (i, got) in ring::among(b, members, size, steps, start.as_deref()).into_iter().enumerate() {
                received[members[i] as usize] = got;
            }
        }
    }
}

