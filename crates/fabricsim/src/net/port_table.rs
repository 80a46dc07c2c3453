//! The output ports' state, indexed by port id, held only where it is used.
//!
//! [`PortStore`] is what the network needs of it; the network is generic over it, so that a
//! serial run's store is a plain `Vec` (its per-packet code is what it was: indexing a port is
//! one bounds check) and a partition's is a [`PortTable`]. A serial run holds every port. A partition of a parallel run holds only the ports of its own
//! nodes: an output port is only ever written and read by its owner's partition (a packet that
//! crosses to another partition arrives there as an event naming the port it crossed, but the
//! arrival reads the cable's far end from the network's `port_peer`, not the port's state), so
//! the others' ports would be copies nobody reads — at 8192 hosts 9.4 MB in every partition.
//! A partition finds its ports through a slot map (one `u32` per port id).
//! Indexing a port another partition owns panics at once (its slot is out of range): the
//! parallel engine's tests would see it, where a silently wrong copy would not show.

use super::port::PortState;
use crate::ids::PortId;
use std::ops::{Index, IndexMut};

/// The output ports' state by port id: every port's (`Vec<PortState>`, a serial run's) or one
/// partition's ([`PortTable`]).
pub trait PortStore: Index<usize, Output = PortState> + IndexMut<usize> + std::fmt::Debug + Send {
    /// Number of port ids (held or not).
    fn len(&self) -> usize;
    /// Whether there is no port.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether port `p`'s state is held here.
    fn holds(&self, p: PortId) -> bool;
    /// Port `p`'s state, if held here.
    fn get_mut(&mut self, p: PortId) -> Option<&mut PortState>;
    /// The ports held, in id order.
    fn held(&self) -> std::slice::Iter<'_, PortState>;
    /// The held ports' array and, for a partition's store, the slot of each port id in it: what
    /// a switch's path selector reads its candidates' state through
    /// ([`crate::net::switch_lb::Candidates`]).
    fn parts(&self) -> (&[PortState], Option<&[u32]>);
}

impl PortStore for Vec<PortState> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }

    #[inline]
    fn holds(&self, _p: PortId) -> bool {
        true
    }

    #[inline]
    fn get_mut(&mut self, p: PortId) -> Option<&mut PortState> {
        Some(&mut self[p as usize])
    }

    fn held(&self) -> std::slice::Iter<'_, PortState> {
        self.iter()
    }

    #[inline]
    fn parts(&self) -> (&[PortState], Option<&[u32]>) {
        (self, None)
    }
}

impl PortStore for PortTable {
    fn len(&self) -> usize {
        PortTable::len(self)
    }

    #[inline]
    fn holds(&self, p: PortId) -> bool {
        PortTable::holds(self, p)
    }

    #[inline]
    fn get_mut(&mut self, p: PortId) -> Option<&mut PortState> {
        PortTable::get_mut(self, p)
    }

    fn held(&self) -> std::slice::Iter<'_, PortState> {
        self.items.iter()
    }

    #[inline]
    fn parts(&self) -> (&[PortState], Option<&[u32]>) {
        (&self.items, Some(&self.slot))
    }
}

/// Marks a port another partition owns in [`PortTable::slot`].
const NOT_HERE: u32 = u32::MAX;

/// One partition's ports ([`PortTable::partial`]).
#[derive(Debug, Default)]
pub struct PortTable {
    /// The ports held, in port-id order.
    items: Vec<PortState>,
    /// The index in `items` of each port id ([`NOT_HERE`]: another partition's).
    slot: Box<[u32]>,
}

impl PortTable {
    /// Only the ports for which `keep(p)` holds, of `ports` (every port's state, by id).
    pub fn partial(ports: impl IntoIterator<Item = PortState>, keep: impl Fn(PortId) -> bool) -> Self {
        let mut items = Vec::new();
        let mut slot = Vec::new();
        for (p, ps) in ports.into_iter().enumerate() {
            if keep(p as PortId) {
                slot.push(items.len() as u32);
                items.push(ps);
            } else {
                slot.push(NOT_HERE);
            }
        }
        items.shrink_to_fit();
        PortTable { items, slot: slot.into_boxed_slice() }
    }

    /// Number of port ids (held or not).
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// Whether the fabric has no port.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether port `p`'s state is held here.
    #[inline]
    pub fn holds(&self, p: PortId) -> bool {
        self.slot[p as usize] != NOT_HERE
    }

    /// Port `p`'s state, if held here.
    #[inline]
    pub fn get_mut(&mut self, p: PortId) -> Option<&mut PortState> {
        if self.holds(p) {
            Some(&mut self[p as usize])
        } else {
            None
        }
    }

    /// Every port's state, from the partitions' tables (`parts[k]` held the ports of partition
    /// `k`), each port taken from the partition `owner(p)` says held it.
    pub fn merge(parts: Vec<PortTable>, owner: impl Fn(PortId) -> usize) -> Vec<PortState> {
        let n = parts.first().map_or(0, PortTable::len);
        // A partition holds its ports in id order: its next one is the next port it owns.
        let mut held: Vec<_> = parts.into_iter().map(|t| t.items.into_iter()).collect();
        (0..n).map(|p| held[owner(p as PortId)].next().expect("the owner holds the port")).collect()
    }
}

impl Index<usize> for PortTable {
    type Output = PortState;

    #[inline(always)]
    fn index(&self, p: usize) -> &PortState {
        &self.items[self.slot[p] as usize]
    }
}

impl IndexMut<usize> for PortTable {
    #[inline(always)]
    fn index_mut(&mut self, p: usize) -> &mut PortState {
        let i = self.slot[p] as usize;
        &mut self.items[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::switch_lb::tests::idle_port_states;

    #[test]
    fn a_partial_table_holds_its_ports_by_id_and_a_merge_restores_every_port() {
        let ports = idle_port_states(6);
        let tag = |t: &PortTable, p: usize| t[p].tx_bytes;
        let tagged = |k: u64| {
            let mut v = idle_port_states(6);
            for (i, ps) in v.iter_mut().enumerate() {
                ps.tx_bytes = 100 * k + i as u64;
            }
            v
        };
        let even = PortTable::partial(tagged(0), |p| p % 2 == 0);
        let odd = PortTable::partial(tagged(1), |p| p % 2 == 1);
        assert_eq!((even.len(), even.holds(2), even.holds(3)), (6, true, false));
        assert_eq!((tag(&even, 4), tag(&odd, 3)), (4, 103));
        let merged = PortTable::merge(vec![even, odd], |p| (p % 2) as usize);
        assert_eq!(merged.iter().map(|ps| ps.tx_bytes).collect::<Vec<_>>(), [0, 101, 2, 103, 4, 105]);
        assert_eq!(PortTable::partial(ports, |_| true).len(), 6);
    }

    #[test]
    #[should_panic]
    fn indexing_another_partitions_port_panics() {
        let ports = idle_port_states(4);
        let t = PortTable::partial(ports, |p| p < 2);
        let _ = &t[3];
    }
}
