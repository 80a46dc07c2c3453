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

use crate::ids::{ConnId, NodeId, PortId};
use std::collections::VecDeque;

/// Scheduler state of one host: one cache line, so that the look-ahead's one prefetch of it
/// (`engine::Sim::prefetch_ahead`) brings the ring's head and its buffer's header together.
///
/// A GPU's NIC whose ports share its connections ([`SprayedPorts`]) is one host per port, each
/// with its egress port, all taking their packets from the ready ring of the first (its `ring`).
#[derive(Debug)]
#[repr(align(64))]
pub struct HostState {
    /// The NIC's egress port.
    pub port: PortId,
    /// The host whose ready ring this port sends from: itself, or the first port of a NIC
    /// that sprays packets over its ports.
    pub ring: NodeId,
    /// A spraying NIC's first port: the port to offer a packet to first when several are free
    /// (the one after the last that sent), as an index among the NIC's ports.
    pub next_port: u8,
    /// Connections that may send now, in round-robin order.
    pub ready: ReadyRing,
}

impl HostState {
    /// Host `host`, whose NIC is `port` and which sends from `ring`'s ready ring.
    pub fn new(port: PortId, ring: NodeId) -> Self {
        HostState { port, ring, next_port: 0, ready: ReadyRing::default() }
    }
}

/// The NICs of a fabric whose GPUs spray each connection's packets over their NIC's ports
/// (`topology.nic_port_choice = "packet"`): port q of GPU i is host q × `gpus` + i, and a
/// connection between GPUs is one queue pair whose packets leave on whichever port of the
/// sender's NIC is free next, each for the peer's port that port reaches.
#[derive(Debug, Clone)]
pub struct SprayedPorts {
    /// GPUs (hosts per port index).
    pub gpus: u32,
    /// Ports of each NIC.
    pub ports: u32,
    /// Per connection and sending port q (`conn × ports + q`): the index of the peer's port its
    /// packets on port q go to (the same where it reaches it), [`SprayedPorts::NONE`] where
    /// port q reaches none of the peer's (its cable, or the peer's, removed).
    pub peer_port: Vec<u8>,
    /// Each packet on the port its entropy selects (`nic_port_choice = "entropy"`), rather
    /// than on the port that is free.
    pub by_entropy: bool,
}

impl SprayedPorts {
    /// No port of the peer: the sending port does not carry the connection.
    pub const NONE: u8 = u8::MAX;

    /// Whether host `h` is a port of a spraying NIC (not a scale-up port).
    #[inline]
    pub fn sprays(&self, h: NodeId) -> bool {
        h.0 < self.gpus * self.ports
    }

    /// The port a packet of connection `c` with `entropy` leaves by (`by_entropy`): the one its
    /// entropy selects if that port reaches the peer, else `fallback` if it does, else the
    /// first that does. The choice hashes the connection with the entropy, as the switches'
    /// ECMP does: path selectors whose entropies are path ids counted from the same start in
    /// every connection (STrack's) would otherwise put every connection's first packet on the
    /// same port.
    #[inline]
    pub fn port_of(&self, c: ConnId, entropy: u32, fallback: u32) -> u32 {
        let reaches = |q: u32| self.peer_port[c.idx() * self.ports as usize + q as usize] != Self::NONE;
        // (Fibonacci hashing of the pair: its high bits are well mixed.)
        let mixed = ((c.0 as u64) << 16 | entropy as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let chosen = (mixed % self.ports as u64) as u32;
        [chosen, fallback].into_iter().chain(0..self.ports).find(|&q| reaches(q)).unwrap_or(fallback)
    }

    /// The peer's port (host) that connection `c` to host `dst` reaches from sending port `q`,
    /// if any.
    #[inline]
    pub fn peer(&self, c: ConnId, q: u32, dst: NodeId) -> Option<NodeId> {
        let r = self.peer_port[c.idx() * self.ports as usize + q as usize];
        (r != Self::NONE).then(|| NodeId(dst.0 % self.gpus + r as u32 * self.gpus))
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
