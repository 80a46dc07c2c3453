//! A port's FIFO of packets, linked through the packets themselves (each queued packet's
//! [`Packet::link`] names the one queued after it), so a queue owns no storage.
//!
//! Why not a ring of packet ids per port: at 8192 hosts the rings of 60 k ports took some
//! 75 MB of heap, and every hop read a ring slot on top of the packet itself, one more cache
//! and TLB miss per hop. Linked, a departure reads only the head packet (which it sends
//! anyway) and an arrival writes the tail packet, which arrived shortly before. The one
//! operation a ring does better, removing the newest packet (a header evicting data, lb-ai-
//! training spec §4.2), walks the queue from its head here.

use crate::ids::PktId;
use super::packet::PacketPool;

/// A FIFO of packets of one [`PacketPool`] (8 bytes, no heap). Every operation takes the
/// pool the packets live in; a packet is in at most one queue at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketQueue {
    /// Oldest packet, or [`PacketQueue::NONE`] when empty.
    head: PktId,
    /// Newest packet (meaningful while not empty).
    tail: PktId,
}

impl Default for PacketQueue {
    fn default() -> Self {
        PacketQueue { head: Self::NONE, tail: Self::NONE }
    }
}

impl PacketQueue {
    /// `head` of an empty queue (a pool never hands out this id: it would be its 2^32-th slot).
    const NONE: PktId = PktId::MAX;

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == Self::NONE
    }

    /// The oldest packet, if any.
    #[inline]
    pub fn front(&self) -> Option<PktId> {
        (self.head != Self::NONE).then_some(self.head)
    }

    /// Appends `pkt`.
    #[inline]
    pub fn push_back(&mut self, pool: &mut PacketPool, pkt: PktId) {
        pool.get_mut(pkt).link = 0;
        if self.head == Self::NONE {
            self.head = pkt;
        } else {
            pool.get_mut(self.tail).link = pkt.0;
        }
        self.tail = pkt;
    }

    /// Removes and returns the oldest packet; its link is cleared (no route hint).
    #[inline]
    pub fn pop_front(&mut self, pool: &mut PacketPool) -> Option<PktId> {
        let pkt = self.front()?;
        let p = pool.get_mut(pkt);
        self.head = if pkt == self.tail { Self::NONE } else { PktId(p.link) };
        p.link = 0;
        Some(pkt)
    }

    /// Removes and returns the newest packet, walking from the head to find the one before
    /// it (queues evict rarely; see the module's doc).
    pub fn pop_back(&mut self, pool: &mut PacketPool) -> Option<PktId> {
        let pkt = self.front().map(|_| self.tail)?;
        if self.head == pkt {
            self.head = Self::NONE;
            return Some(pkt);
        }
        let mut before = self.head;
        while pool.get(before).link != pkt.0 {
            before = PktId(pool.get(before).link);
        }
        pool.get_mut(before).link = 0;
        self.tail = before;
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::packet::Packet;

    fn pool_of(n: u32) -> (PacketPool, Vec<PktId>) {
        let mut pool = PacketPool::default();
        let ids = (0..n).map(|i| pool.alloc(Packet { seq: i, ..Packet::default() })).collect();
        (pool, ids)
    }

    #[test]
    fn first_in_first_out_with_interleaved_pushes() {
        let (mut pool, ids) = pool_of(5);
        let mut q = PacketQueue::default();
        assert_eq!((q.front(), q.pop_front(&mut pool)), (None, None));
        q.push_back(&mut pool, ids[0]);
        q.push_back(&mut pool, ids[1]);
        assert_eq!(q.pop_front(&mut pool), Some(ids[0]));
        q.push_back(&mut pool, ids[2]);
        q.push_back(&mut pool, ids[3]);
        assert_eq!(q.front(), Some(ids[1]));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_front(&mut pool)).collect();
        assert_eq!(order, [ids[1], ids[2], ids[3]]);
        assert!(q.is_empty());
        // An emptied queue starts afresh; a popped packet carries no stale link.
        q.push_back(&mut pool, ids[4]);
        assert_eq!(q.pop_front(&mut pool), Some(ids[4]));
        assert!((0..5).all(|i| pool.get(ids[i]).link == 0));
    }

    #[test]
    fn newest_leaves_first_from_the_back() {
        let (mut pool, ids) = pool_of(4);
        let mut q = PacketQueue::default();
        for &id in &ids {
            q.push_back(&mut pool, id);
        }
        assert_eq!(q.pop_back(&mut pool), Some(ids[3]));
        assert_eq!(q.pop_back(&mut pool), Some(ids[2]));
        // The shortened queue appends after its new tail.
        q.push_back(&mut pool, ids[3]);
        assert_eq!(q.pop_front(&mut pool), Some(ids[0]));
        assert_eq!(q.pop_back(&mut pool), Some(ids[3]));
        assert_eq!(q.pop_back(&mut pool), Some(ids[1]));
        assert_eq!(q.pop_back(&mut pool), None);
        assert!(q.is_empty());
    }
}
