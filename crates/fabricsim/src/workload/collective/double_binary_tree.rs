//! Double-binary-tree AllReduce (strack spec §5.3.4 "DBT"; NCCL 2.4's two complementary trees):
//! the buffer is split in two halves, one per tree. In each tree every rank sends chunk j to its
//! parent once chunk j has arrived from all its children (reduce), and the root, then every
//! interior rank, sends chunk j down to its children once it has it (broadcast). An interior
//! rank thus receives from two children per chunk: the 2:1 incast the STrack paper points at.
//!
//! The first tree is the in-order binary tree over ranks 0..N: rank r with lowest set bit b has
//! parent (r XOR b) OR 2b (or r XOR b when that is out of range); rank 0 is the root, with one
//! child. The second tree is the first one mirrored (rank r ↦ N−1−r) for even N and shifted by
//! one for odd N, so a leaf of one tree is an interior rank of the other.

use super::{chunk_count, Dep, InstanceBuilder, Sent};

/// Parent of rank `r` in the in-order binary tree over `n` ranks (None for the root, rank 0).
pub fn inorder_parent(n: u32, r: u32) -> Option<u32> {
    if r == 0 {
        return None;
    }
    let b = r & r.wrapping_neg();
    let up = (r ^ b) | (b << 1);
    Some(if up >= n { r ^ b } else { up })
}

/// Parent of every rank in tree `t` (0 or 1).
pub fn parents(n: u32, t: u32) -> Vec<Option<u32>> {
    let (to, from): (Box<dyn Fn(u32) -> u32>, Box<dyn Fn(u32) -> u32>) = match (t, n % 2) {
        (0, _) => (Box::new(|r| r), Box::new(|v| v)),
        (_, 0) => (Box::new(move |r| n - 1 - r), Box::new(move |v| n - 1 - v)),
        _ => (Box::new(move |r| (r + 1) % n), Box::new(move |v| (v + n - 1) % n)),
    };
    (0..n).map(|r| inorder_parent(n, to(r)).map(&from)).collect()
}

/// Emits a double-binary-tree AllReduce of `bytes` per rank.
pub fn build(b: &mut InstanceBuilder, bytes: u64) {
    let all: Vec<u32> = (0..b.ranks()).collect();
    among(b, &all, bytes, None);
}

/// A double-binary-tree AllReduce among `members` (the trees built over their positions) of
/// `bytes` per member; every chunk member i sends up its trees, and the roots' first chunks
/// down, wait for `start[i]` too when given. Returns, per member, the chunks it received last:
/// from its parent in each tree, or where it is a tree's root, from that tree's children.
pub fn among(b: &mut InstanceBuilder, members: &[u32], bytes: u64, start: Option<&[Dep]>) -> Vec<Vec<Sent>> {
    let n = members.len() as u32;
    let mut last: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
    let halves = [bytes.div_ceil(2), bytes / 2];
    for (t, &half) in halves.iter().enumerate() {
        if half == 0 {
            continue;
        }
        let parent = parents(n, t as u32);
        let mut children = vec![Vec::new(); n as usize];
        for (r, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p as usize].push(r as u32);
            }
        }
        // Visit ranks children-first for the reduce and parents-first for the broadcast.
        let mut order: Vec<u32> = Vec::with_capacity(n as usize);
        let root = parent.iter().position(|p| p.is_none()).expect("a tree has a root") as u32;
        let mut stack = vec![root];
        while let Some(r) = stack.pop() {
            order.push(r);
            stack.extend(children[r as usize].iter().copied());
        }
        let m = chunk_count(half, b.chunk);
        // A member's own data is ready at `start` (after its children's chunks, so that a
        // whole job's graph is the same as before `start` existed).
        let own = |r: u32| start.map(|d| d[r as usize]);
        let mut up: Vec<Vec<Sent>> = vec![Vec::new(); n as usize];
        for &r in order.iter().rev() {
            if let Some(p) = parent[r as usize] {
                let kids: Vec<u32> = children[r as usize].clone();
                let sent = b.send_chunked(members[r as usize], members[p as usize], half, |j| kids.iter().map(|&c| up[c as usize][j].delivered()).chain(own(r)).collect());
                up[r as usize] = sent;
            }
        }
        // down[r][j]: rank r has the reduced chunk j (root: from its children; others: from
        // their parent).
        let mut down: Vec<Vec<Vec<Dep>>> = vec![Vec::new(); n as usize];
        down[root as usize] = (0..m).map(|j| children[root as usize].iter().map(|&c| up[c as usize][j].delivered()).chain(own(root)).collect()).collect();
        for &c in &children[root as usize] {
            last[root as usize].extend(up[c as usize].iter().copied());
        }
        for &r in &order {
            let have = std::mem::take(&mut down[r as usize]);
            for &c in &children[r as usize] {
                let sent = b.send_chunked(members[r as usize], members[c as usize], half, |j| have[j].clone());
                down[c as usize] = sent.iter().map(|s| vec![s.delivered()]).collect();
                last[c as usize].extend(sent);
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_tree(n: u32, t: u32) -> Vec<u32> {
        let p = parents(n, t);
        assert_eq!(p.iter().filter(|x| x.is_none()).count(), 1, "one root");
        let mut kids = vec![0u32; n as usize];
        for r in 0..n {
            // Following parents reaches the root without cycles.
            let (mut x, mut hops) = (r, 0);
            while let Some(q) = p[x as usize] {
                x = q;
                hops += 1;
                assert!(hops <= n);
            }
            if let Some(q) = p[r as usize] {
                kids[q as usize] += 1;
            }
        }
        assert!(kids.iter().all(|&k| k <= 2), "binary");
        kids
    }

    #[test]
    fn trees_are_binary_and_complementary() {
        for n in [2u32, 3, 5, 6, 8, 16, 31, 32] {
            let k0 = check_tree(n, 0);
            let k1 = check_tree(n, 1);
            // No rank is interior in both trees when n is a power of two or even (NCCL's
            // property that balances the two trees' send loads).
            if n % 2 == 0 {
                for r in 0..n as usize {
                    assert!(k0[r] == 0 || k1[r] == 0 || n <= 2, "n={n} rank {r} interior in both trees");
                }
            }
        }
        assert_eq!(inorder_parent(8, 4), Some(0));
        assert_eq!(inorder_parent(8, 6), Some(4));
        assert_eq!(inorder_parent(8, 7), Some(6));
        assert_eq!(inorder_parent(6, 5), Some(4));
    }
}
