//! Equal-cost next-hop tables.
//!
//! For every switch and every destination ToR we store the output ports that lie on a shortest
//! path (breadth-first search from each ToR over the switch graph). Identical port sets are
//! interned, so a 1280-switch fat tree's tables take a few megabytes. At the destination ToR the
//! packet goes straight down the host's port. The table is built once from the full topology:
//! like the papers' testbeds, routing does not reconverge when a link fails mid-run.

use super::{Fabric, Tier};
use crate::ids::{NodeId, PortId};
use std::collections::HashMap;

/// Next-hop sets indexed by (switch, destination ToR).
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// Dense index of each node among ToRs (u32::MAX for non-ToRs).
    pub tor_index: Vec<u32>,
    tors: u32,
    /// (offset, length) into `ports` for switch-local index × tors + tor index.
    sets: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Hop distance (switch-to-switch links) from each switch to each ToR.
    dist: Vec<u8>,
}

impl RouteTable {
    #[inline]
    fn slot(&self, fabric_hosts: u32, switch: NodeId, dst_tor: NodeId) -> usize {
        (switch - fabric_hosts) as usize * self.tors as usize + self.tor_index[dst_tor as usize] as usize
    }

    /// Ports of `switch` on shortest paths towards `dst_tor` (empty when `switch == dst_tor`).
    #[inline]
    pub fn next_hops(&self, fabric: &Fabric, switch: NodeId, dst_tor: NodeId) -> &[PortId] {
        let (a, n) = self.sets[self.slot(fabric.hosts, switch, dst_tor)];
        &self.ports[a as usize..(a + n) as usize]
    }

    /// Hints the CPU to load the next-hop set entry of (`switch`, `dst_tor`).
    #[inline]
    pub fn prefetch_next_hops(&self, fabric: &Fabric, switch: NodeId, dst_tor: NodeId) {
        if let Some(e) = self.sets.get(self.slot(fabric.hosts, switch, dst_tor)) {
            crate::engine::prefetch(e);
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

/// Builds the table for `fabric`.
pub fn compute(fabric: &Fabric) -> RouteTable {
    let n = fabric.tier.len();
    let hosts = fabric.hosts as usize;
    let switches = n - hosts;
    let mut tor_index = vec![u32::MAX; n];
    let mut tors = 0u32;
    for (i, t) in fabric.tier.iter().enumerate() {
        if *t == Tier::Tor {
            tor_index[i] = tors;
            tors += 1;
        }
    }
    let mut table = RouteTable {
        tor_index,
        tors,
        sets: vec![(0, 0); switches * tors as usize],
        ports: Vec::new(),
        dist: vec![u8::MAX; switches * tors as usize],
    };
    let mut interned: HashMap<Vec<PortId>, (u32, u32)> = HashMap::new();
    let mut dist = vec![u32::MAX; n];
    let mut frontier = Vec::new();
    let mut next = Vec::new();
    let mut set = Vec::new();
    for tor in hosts..n {
        if fabric.tier[tor] != Tier::Tor {
            continue;
        }
        let ti = table.tor_index[tor] as usize;
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[tor] = 0;
        frontier.clear();
        frontier.push(tor as NodeId);
        while !frontier.is_empty() {
            next.clear();
            for &u in &frontier {
                for &p in fabric.ports_of(u) {
                    let v = fabric.ports[p as usize].peer as usize;
                    if v >= hosts && dist[v] == u32::MAX {
                        dist[v] = dist[u as usize] + 1;
                        next.push(v as NodeId);
                    }
                }
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        for s in hosts..n {
            let slot = (s - hosts) * tors as usize + ti;
            table.dist[slot] = dist[s].min(u8::MAX as u32) as u8;
            if s == tor || dist[s] == u32::MAX {
                continue;
            }
            set.clear();
            for &p in fabric.ports_of(s as NodeId) {
                let v = fabric.ports[p as usize].peer as usize;
                if v >= hosts && dist[v] + 1 == dist[s] {
                    set.push(p);
                }
            }
            let entry = *interned.entry(set.clone()).or_insert_with(|| {
                let off = table.ports.len() as u32;
                table.ports.extend_from_slice(&set);
                (off, set.len() as u32)
            });
            table.sets[slot] = entry;
        }
    }
    table
}
