//! A per-switch flow table: `(egress, last_seen)` per flow, for the flowlet-style schemes
//! (`flowlet`, `letflow`, `adaptive_ecmp` with `sticky`), and later the ToR logic of CONGA or
//! SeqBalance (their flow tables have the same key and ageing).
//!
//! A flow is the packet's connection and entropy (`conn`, `entropy`: the simulator's 5-tuple
//! plus flow label), so host-side subflows with their own labels are distinct flows. Entries
//! expire lazily: a lookup treats an entry idle for longer than the lifetime as absent, and when
//! the table has doubled since the last sweep, expired entries are removed in one pass. In
//! steady state (the same flows, or as many new flows as expire) the table neither grows nor
//! allocates.

use crate::net::packet::Packet;
use crate::units::Time;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The flow key of a packet: connection and entropy.
#[inline]
pub fn flow_key(p: &Packet) -> u64 {
    (p.conn.0 as u64) << 16 | p.entropy as u64
}

/// One flow's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowEntry {
    /// The flow's current choice (a candidate index, a port or a path tag; the scheme decides).
    pub choice: u32,
    /// When its last packet passed.
    pub last_seen: Time,
}

/// Hasher for integer keys (flow keys, node ids): one SplitMix64 round, far cheaper per packet
/// than the default SipHash.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        crate::rng::mix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = x as u64;
    }
}

/// A flow table whose entries live `lifetime` after their last packet.
#[derive(Clone, Debug)]
pub struct FlowTable {
    map: HashMap<u64, FlowEntry, BuildHasherDefault<KeyHasher>>,
    lifetime: Time,
    /// Sweep expired entries when the table reaches this size.
    sweep_at: usize,
}

/// Size below which the table is never swept.
const MIN_SWEEP: usize = 1024;

impl FlowTable {
    /// An empty table with entries living `lifetime` (ps) after their last packet.
    pub fn new(lifetime: Time) -> Self {
        FlowTable { map: HashMap::default(), lifetime, sweep_at: MIN_SWEEP }
    }

    /// The live entry of `key` at `now` (idle at most the lifetime), if any.
    #[inline]
    pub fn get(&self, key: u64, now: Time) -> Option<FlowEntry> {
        self.map.get(&key).copied().filter(|e| now.saturating_sub(e.last_seen) <= self.lifetime)
    }

    /// Records `choice` for `key`, last seen `now`.
    #[inline]
    pub fn set(&mut self, key: u64, choice: u32, now: Time) {
        if self.map.len() >= self.sweep_at && !self.map.contains_key(&key) {
            let lifetime = self.lifetime;
            self.map.retain(|_, e| now.saturating_sub(e.last_seen) <= lifetime);
            self.sweep_at = (2 * self.map.len()).max(MIN_SWEEP);
        }
        self.map.insert(key, FlowEntry { choice, last_seen: now });
    }

    /// Entries held (live or not yet swept).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ConnId;

    #[test]
    fn entries_expire_after_their_lifetime_and_are_swept() {
        let mut t = FlowTable::new(Time(100));
        t.set(1, 7, Time::ZERO);
        assert_eq!(t.get(1, Time(100)), Some(FlowEntry { choice: 7, last_seen: Time::ZERO }));
        assert_eq!(t.get(1, Time(101)), None);
        assert_eq!(t.get(2, Time::ZERO), None);
        // Many short-lived flows: the table is swept and stays bounded.
        for k in 0..100_000u64 {
            t.set(k, 0, Time(k * 10));
        }
        assert!(t.len() <= 2 * MIN_SWEEP, "{}", t.len());
    }

    #[test]
    fn key_separates_connections_and_entropies() {
        let a = Packet { conn: ConnId(1), entropy: 2, ..Default::default() };
        let b = Packet { conn: ConnId(2), entropy: 1, ..Default::default() };
        assert_ne!(flow_key(&a), flow_key(&b));
    }
}
