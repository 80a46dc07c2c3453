//! Host NIC: one egress port shared round-robin by the host's connections that may send.
//!
//! A connection joins its host's ready ring when its congestion control and pacer allow a
//! packet; the NIC takes one packet from the connection at the head of the ring each time the
//! port is free (after any pending ACK/NACK, which have priority) and puts the connection back
//! at the tail if it may send again. Packets are created only at that moment, so the NIC holds
//! no data queue.
//!
//! This file holds the scheduler state; the engine drives it (`engine/dispatch.rs`): the ready ring
//! is a round robin over connections, and only the sender can say what a connection sends.

use crate::ids::{ConnId, PortId};
use std::collections::VecDeque;

/// Scheduler state of one host: one cache line, so that the look-ahead's one prefetch of it
/// (`engine::Sim::prefetch_ahead`) brings the ring's head and its buffer's header together.
#[derive(Debug)]
#[repr(align(64))]
pub struct HostState {
    /// The NIC's egress port.
    pub port: PortId,
    /// Connections that may send now, in round-robin order.
    pub ready: ReadyRing,
}

impl HostState {
    /// A host whose NIC is `port`.
    pub fn new(port: PortId) -> Self {
        HostState { port, ready: ReadyRing::default() }
    }
}

/// A first-in first-out ring of connections whose head is kept inline.
///
/// Why: the NIC reads the head on every packet it sends, and so does the event loop's look-ahead
/// (one dependent load fewer on the chain port → host → sender). With one sending connection
/// per host (a permutation) the ring never holds more than the head, and its buffer, a separate
/// allocation per host that missed the cache on every send, is never touched.
#[derive(Debug, Default)]
pub struct ReadyRing {
    /// The oldest entry.
    head: Option<ConnId>,
    /// The entries after it, oldest first.
    rest: VecDeque<ConnId>,
}

impl ReadyRing {
    /// True when no connection waits.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The oldest entry.
    #[inline(always)]
    pub fn front(&self) -> Option<ConnId> {
        self.head
    }

    /// Appends `c`.
    #[inline]
    pub fn push_back(&mut self, c: ConnId) {
        match self.head {
            None => self.head = Some(c),
            Some(_) => self.rest.push_back(c),
        }
    }

    /// Removes and returns the oldest entry.
    #[inline]
    pub fn pop_front(&mut self) -> Option<ConnId> {
        let head = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_first_in_first_out_across_its_inline_head() {
        let mut r = ReadyRing::default();
        assert!(r.is_empty() && r.pop_front().is_none());
        for c in [3, 1, 4] {
            r.push_back(ConnId(c));
        }
        assert_eq!(r.front(), Some(ConnId(3)));
        assert_eq!(r.pop_front(), Some(ConnId(3)));
        r.push_back(ConnId(5));
        let order: Vec<u32> = std::iter::from_fn(|| r.pop_front()).map(|c| c.0).collect();
        assert_eq!(order, [1, 4, 5]);
        assert!(r.is_empty());
    }

    #[test]
    fn a_host_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<HostState>(), 64);
    }
}
