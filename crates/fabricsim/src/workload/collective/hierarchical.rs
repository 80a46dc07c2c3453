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
//!
//! ReduceScatter and AllGather `hier` are the AllReduce's halves: ReduceScatter reduces inside
//! each group (member l ends with segment l reduced over its group), then across the groups
//! among the ranks of each local index (a ring over S / group: each rank ends with its S / N
//! reduced over all); AllGather gathers across the groups first (each rank of local index l
//! ends with the l-th S / group of the buffer), then inside each group. Each NIC carries
//! (m − 1)/m · S / group.
//!
//! [`phases`] lists an algorithm's phases; the builder ([`build`]) and the size count
//! (`instance_size` in the parent module) both walk that one list.

use super::{double_binary_tree, ring, Dep, InstanceBuilder, Sent};
use crate::workload::graph::Trigger;

/// Which ranks a phase runs among.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Among {
    /// The members of each group, among themselves.
    Groups,
    /// The ranks of each local index, one per group, among themselves.
    LocalIndex,
}

/// How a phase moves its data among its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A ring of this many steps ([`ring::among`]).
    Ring(u32),
    /// A double binary tree AllReduce ([`double_binary_tree::among`]).
    Tree,
}

/// One phase of a hierarchical collective: among whom, over how many bytes per member, how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Which ranks.
    pub among: Among,
    /// The buffer per member the phase works on.
    pub bytes: u64,
    /// Ring or tree.
    pub shape: Shape,
}

/// The phases of `op`/`alg` (AllReduce `hier` or `hier_tree`, AllGather or ReduceScatter
/// `hier`) over `n` ranks in groups of `group` with `bytes` per rank, in order; a phase that
/// moves nothing (a ring of no steps, a tree of one rank) is left out.
pub fn phases(op: &str, alg: &str, n: u32, group: u32, bytes: u64) -> Vec<Phase> {
    let m = n / group;
    let inside = |steps: u32| Phase { among: Among::Groups, bytes, shape: Shape::Ring(steps) };
    let across = |shape: Shape| Phase { among: Among::LocalIndex, bytes: bytes.div_ceil(group as u64), shape };
    let list = match (op, alg) {
        ("allreduce", "hier_tree") => vec![inside(group - 1), across(Shape::Tree), inside(group - 1)],
        ("allreduce", _) => vec![inside(group - 1), across(Shape::Ring(2 * (m - 1))), inside(group - 1)],
        ("reducescatter", _) => vec![inside(group - 1), across(Shape::Ring(m - 1))],
        _ => vec![across(Shape::Ring(m - 1)), inside(group - 1)],
    };
    let moves = |p: &Phase| match p.shape {
        Shape::Ring(steps) => steps > 0,
        Shape::Tree => m > 1,
    };
    list.into_iter().filter(moves).collect()
}

/// Emits hierarchical `op`/`alg` of `bytes` per rank in groups of `group` consecutive ranks
/// (`group` divides the rank count: validated): [`phases`] one after the other, each rank
/// starting a phase once it has received its last chunks of the one before.
pub fn build(b: &mut InstanceBuilder, op: &str, alg: &str, bytes: u64, group: u32) {
    let n = b.ranks();
    let m = n / group;
    let groups: Vec<Vec<u32>> = (0..m).map(|k| (k * group..(k + 1) * group).collect()).collect();
    let local: Vec<Vec<u32>> = (0..group).map(|l| (0..m).map(|k| k * group + l).collect()).collect();
    let mut received: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    for phase in phases(op, alg, n, group, bytes) {
        let sets = if phase.among == Among::Groups { &groups } else { &local };
        for members in sets {
            let start = ready(b, members, &received);
            let got = match phase.shape {
                Shape::Ring(steps) => ring::among(b, members, phase.bytes, steps, start.as_deref()),
                Shape::Tree => double_binary_tree::among(b, members, phase.bytes, start.as_deref()),
            };
            for (i, got) in got.into_iter().enumerate() {
                received[members[i] as usize] = got;
            }
        }
    }
}

/// Per member, a join over the chunks it received last: what its next phase waits for (`None`
/// when no member received any: the first phase).
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
