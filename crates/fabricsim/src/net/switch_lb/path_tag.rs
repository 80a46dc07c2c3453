//! The source-routing tag a source ToR writes into [`Packet::path_tag`] when it chooses a
//! whole path (seqbalance §2.4.6: SeqBalance and LetFlow pick (agg, core) at the ToR in a fat
//! tree): bit 15 says "set", the low byte is the ToR's uplink index, bits 8-14 the index the
//! next (aggregation) tier takes, modulo its fan-out. Upper tiers following the tag keep no
//! per-flow state and decide from the header alone (they answer `peek`).

use super::ecmp::Ecmp;
use crate::net::packet::Packet;

/// Bit 15: a source ToR wrote the tag.
pub const SET: u16 = 0x8000;

/// The tag of ToR uplink `tor_uplink` (< 256) and upper-tier index `upper` (< 128).
#[inline]
pub fn new(tor_uplink: usize, upper: usize) -> u16 {
    SET | (upper as u16) << 8 | tor_uplink as u16
}

/// Whether a source ToR wrote `tag`.
#[inline]
pub fn is_set(tag: u16) -> bool {
    tag & SET != 0
}

/// The ToR uplink index of `tag`.
#[inline]
pub fn tor_uplink(tag: u16) -> usize {
    (tag & 0xff) as usize
}

/// The upper-tier index of `tag`.
#[inline]
pub fn upper(tag: u16) -> usize {
    ((tag >> 8) & 0x7f) as usize
}

/// The index among `n` candidates an upper-tier switch takes for `p`: the tag's upper index
/// modulo `n`, or, for a packet no ToR tagged, `hash`'s ECMP choice.
#[inline]
pub fn follow(p: &Packet, n: usize, hash: &Ecmp) -> usize {
    if is_set(p.path_tag) {
        upper(p.path_tag) % n
    } else {
        hash.index(p, n)
    }
}
