//! Equal-cost next-hop tables.
//!
//! For every switch and every destination ToR we store the output ports that lie on a shortest
//! path (breadth-first search from each ToR over the switch graph). Identical port sets are
//! interned, so a 1280-switch fat tree's tables take a few megabytes. At the destination ToR the
//! packet goes straight down the host's port.
//!
//! [`compute`] takes a liveness predicate over ports: a cable counts only if both its ports are
//! alive, so a spine that lost its link to ToR X is no next hop towards X from anywhere (strack
//! spec §4 "link failure model": ECMP groups rebuilt over surviving next hops per destination
//! ToR). The table is built once at setup (with statically removed links excluded, see
//! [`super::failures`]); by default it is never rebuilt when a link fails mid-run, as in the
//! smartt-reps testbed (spec §4.6), unless a link event asks for re-convergence
//! (`reroute_after_us`).
//!
//! A switch that cannot reach a ToR over live links keeps its full-topology next hops towards
//! it. Following those strictly lowers the full-topology distance and never meets a switch that
//! can reach the ToR (it would then reach it too), so such packets end on a dead port and are
//! dropped instead of looping.

use super::Fabric;
use crate::ids::{NodeId, PortId};
use std::collections::HashMap;
use std::sync::Arc;

/// Next-hop sets indexed by (switch, destination ToR).
///
/// Immutable once computed (a link change that reroutes computes a new table), so its arrays
/// are shared: a copy costs four reference counts. Each partition of a parallel run holds a
/// copy of the fabric; with its own table each, 16 partitions of an 8192-host fabric held
/// 56 MB more (718 against 662 MB at the peak), and 16 copies of what every lookup reads
/// competed for the shared cache. An `Arc<[T]>` sits in the table as pointer and length, so
/// a lookup loads no more than from a `Vec`.
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// Dense index of each node among ToRs (u32::MAX for non-ToRs).
    pub tor_index: Arc<[u32]>,
    tors: u32,
    /// (offset, length) into `ports` for switch-local index × tors + tor index.
    sets: Arc<[(u32, u32)]>,
    ports: Arc<[PortId]>,
    /// Hop distance (switch-to-switch links) from each switch to each ToR.
    dist: Arc<[u8]>,
}

impl RouteTable {
    #[inline]
    fn slot(&self, fabric_hosts: u32, switch: NodeId, dst_tor: NodeId) -> usize {
        (switch.0 - fabric_hosts) as usize * self.tors as usize + self.tor_index[dst_tor.idx()] as usize
    }

    /// Ports of `switch` on shortest paths towards `dst_tor` (empty when `switch == dst_tor`).
    #[inline]
    pub fn next_hops(&self, fabric: &Fabric, switch: NodeId, dst_tor: NodeId) -> &[PortId] {
        self.next_hops_of(fabric.hosts, switch, dst_tor)
    }

    /// [`RouteTable::next_hops`], given the fabric's host count (which a switch's per-packet
    /// path keeps at hand).
    #[inline]
    pub fn next_hops_of(&self, hosts: u32, switch: NodeId, dst_tor: NodeId) -> &[PortId] {
        let (a, n) = self.sets[self.slot(hosts, switch, dst_tor)];
        &self.ports[a as usize..(a + n) as usize]
    }

    /// Hints the CPU to load the next-hop set entry of (`switch`, `dst_tor`).
    #[inline]
    pub fn prefetch_next_hops(&self, hosts: u32, switch: NodeId, dst_tor: NodeId) {
        if let Some(e) = self.sets.get(self.slot(hosts, switch, dst_tor)) {
            crate::hint::prefetch(e);
        }
    }

    /// Switch-to-switch hops from `switch` to `dst_tor` (u8::MAX if unreachable).
    pub fn distance(&self, fabric: &Fabric, switch: NodeId, dst_tor: NodeId) -> u8 {
        self.dist[self.slot(fabric.hosts, switch, dst_tor)]
    }

    /// Ports of the tables' interned sets (a size figure for `check`).
    pub fn stored_ports(&self) -> usize {
        self.ports.len()
    }
}

/// Builds the table for `fabric`, using only cables whose two ports satisfy `alive`.
pub fn compute(fabric: &Fabric, alive: impl Fn(PortId) -> bool) -> RouteTable {
    let n = fabric.tier.len();
    let hosts = fabric.hosts as usize;
    let switches = n - hosts;
    let mut tor_index = vec![u32::MAX; n];
    let mut tors = 0u32;
    for (i, t) in fabric.tier.iter().enumerate() {
        if t.attaches_hosts() {
            tor_index[i] = tors;
            tors += 1;
        }
    }
    // Built in place, shared once complete.
    let mut sets = vec![(0u32, 0u32); switches * tors as usize];
    let mut ports: Vec<PortId> = Vec::new();
    let mut hop_dist = vec![u8::MAX; switches * tors as usize];
    // A cable is usable when both directions are alive (failures take whole cables down).
    let up: Vec<bool> = (0..fabric.ports.len() as u32).map(|p| alive(PortId(p)) && alive(fabric.ports[p as usize].reverse)).collect();
    let all_up = up.iter().all(|&u| u);
    let mut interned: HashMap<Vec<PortId>, (u32, u32)> = HashMap::new();
    let mut dist = vec![u32::MAX; n];
    let mut full = vec![u32::MAX; n];
    let mut scratch = (Vec::new(), Vec::new());
    let mut set = Vec::new();
    for tor in hosts..n {
        if !fabric.tier[tor].attaches_hosts() {
            continue;
        }
        let ti = tor_index[tor] as usize;
        bfs(fabric, NodeId(tor as u32), |p| up[p.idx()], &mut dist, &mut scratch);
        if !all_up {
            bfs(fabric, NodeId(tor as u32), |_| true, &mut full, &mut scratch);
        }
        for s in hosts..n {
            let slot = (s - hosts) * tors as usize + ti;
            hop_dist[slot] = dist[s].min(u8::MAX as u32) as u8;
            if s == tor {
                continue;
            }
            set.clear();
            if dist[s] != u32::MAX {
                for &p in fabric.ports_of(NodeId(s as u32)) {
                    let v = fabric.ports[p.idx()].peer.idx();
                    if v >= hosts && up[p.idx()] && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                        set.push(p);
                    }
                }
            } else if !all_up && full[s] != u32::MAX {
                // Cut off: keep the full-topology next hops (see the module doc).
                for &p in fabric.ports_of(NodeId(s as u32)) {
                    let v = fabric.ports[p.idx()].peer.idx();
                    if v >= hosts && full[v] != u32::MAX && full[v] + 1 == full[s] {
                        set.push(p);
                    }
                }
            }
            if set.is_empty() {
                continue;
            }
            let entry = *interned.entry(set.clone()).or_insert_with(|| {
                let off = ports.len() as u32;
                ports.extend_from_slice(&set);
                (off, set.len() as u32)
            });
            sets[slot] = entry;
        }
    }
    RouteTable { tor_index: tor_index.into(), tors, sets: sets.into(), ports: ports.into(), dist: hop_dist.into() }
}

/// Hop distances from every switch to `tor` over the switch graph, crossing only ports `p` with
/// `usable(p)` (`u32::MAX` where unreachable). Cables are symmetric, so walking outward from the
/// ToR gives each switch's distance towards it.
fn bfs(fabric: &Fabric, tor: NodeId, usable: impl Fn(PortId) -> bool, dist: &mut [u32], scratch: &mut (Vec<NodeId>, Vec<NodeId>)) {
    let hosts = fabric.hosts as usize;
    let (frontier, next) = scratch;
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    dist[tor.idx()] = 0;
    frontier.clear();
    frontier.push(tor);
    while !frontier.is_empty() {
        next.clear();
        for &u in frontier.iter() {
            for &p in fabric.ports_of(u) {
                let v = fabric.ports[p.idx()].peer.idx();
                if v >= hosts && dist[v] == u32::MAX && usable(p) {
                    dist[v] = dist[u.idx()] + 1;
                    next.push(NodeId(v as u32));
                }
            }
        }
        std::mem::swap(frontier, next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::{leaf_spine, Tier, TierLinks};
    use crate::units::{BitsPerSec, Time, US};

    /// Leaf-spine K=4: tor0..tor3 (2 hosts each), spine0 and spine1.
    fn k4() -> Fabric {
        let l = (BitsPerSec::from_gbps(400.0), US);
        leaf_spine::build(4, 1, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap()
    }

    fn peers(f: &Fabric, set: &[PortId]) -> Vec<String> {
        set.iter().map(|&p| f.node_name(f.ports[p.idx()].peer)).collect()
    }

    //= type=test
    //= strack spec §4 (link failure model)
    //# ECMP sets are rebuilt over surviving next hops per destination ToR: a spine that lost its
    //# cable to ToR X is no next hop towards X from anywhere.
    #[test]
    fn removed_cable_leaves_every_next_hop_set() {
        let f = k4();
        let (tor0, tor1) = (f.node_by_name("tor0").unwrap(), f.node_by_name("tor1").unwrap());
        let spine0 = f.node_by_name("spine0").unwrap();
        let dead = f.port_between(tor0, spine0).unwrap();
        let rev = f.ports[dead.idx()].reverse;
        // Only one direction is reported dead: the whole cable must still be avoided.
        let r = compute(&f, |p| p != rev);
        assert_eq!(peers(&f, r.next_hops(&f, tor1, tor0)), ["spine1"]);
        assert_eq!(peers(&f, r.next_hops(&f, tor0, tor1)), ["spine1"]);
        // spine0 now reaches tor0 in 3 hops, down through any other ToR.
        assert_eq!(peers(&f, r.next_hops(&f, spine0, tor0)), ["tor1", "tor2", "tor3"]);
        assert_eq!(r.distance(&f, spine0, tor0), 3);
        assert_eq!(r.distance(&f, tor1, tor0), 2);
        for s in f.hosts..(NodeId::at(f.tier.len())).0 {
            for t in [tor0, tor1] {
                assert!(!r.next_hops(&f, NodeId(s), t).iter().any(|&p| p == dead || p == rev));
            }
        }
        // Healthy: both spines everywhere.
        let all = compute(&f, |_| true);
        assert_eq!(peers(&f, all.next_hops(&f, tor1, tor0)), ["spine0", "spine1"]);
    }

    //= type=test
    //# A ToR cut off from the fabric: switches keep their full-topology next hops towards it, so
    //# a packet ends on a dead port within a few hops instead of looping.
    #[test]
    fn cut_off_tor_routes_end_on_a_dead_port() {
        let f = k4();
        let tor0 = f.node_by_name("tor0").unwrap();
        let dead: Vec<PortId> = f.ports_of(tor0).iter().copied().filter(|&p| !f.is_host(f.ports[p.idx()].peer) && f.tier[f.ports[p.idx()].peer.idx()] != Tier::Tor).collect();
        assert_eq!(dead.len(), 2);
        let r = compute(&f, |p| !dead.contains(&p) && !dead.contains(&f.ports[p.idx()].reverse));
        for src in ["tor1", "tor2", "tor3", "spine0", "spine1"] {
            let mut node = f.node_by_name(src).unwrap();
            let mut hops = 0;
            loop {
                let set = r.next_hops(&f, node, tor0);
                assert!(!set.is_empty(), "{src}: no next hop at {}", f.node_name(node));
                let p = set[0];
                if dead.contains(&f.ports[p.idx()].reverse) {
                    break;
                }
                node = f.ports[p.idx()].peer;
                hops += 1;
                assert!(hops < 4 && node != tor0, "{src}: walked to {}", f.node_name(node));
            }
            assert_eq!(r.distance(&f, f.node_by_name(src).unwrap(), tor0), u8::MAX);
        }
    }
}
