//! In-band network telemetry (INT): the per-hop record a switch appends to a data packet as it
//! leaves an output port, and that the receiver echoes back to the sender in the ACK.
//!
//! **Follows:** HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), §3.1
//! and Fig. 4: each switch egress port on the path pushes its queue length (`qLen`), the bytes
//! it has transmitted (`txBytes`), a timestamp (`ts`) and its link bandwidth (`B`) onto the
//! packet; the ACK carries the whole stack back. The push happens at dequeue, when the packet
//! starts serialising, as in the HPCC ns-3 simulator (`SwitchNode::SwitchNotifyDequeue`): the
//! queue length excludes the packet itself and counts every class of the port, and `txBytes`
//! counts every packet the port sent before this one.
//!
//! **Declared once:** the records live in a lane beside the packet pool, one [`IntStack`] per
//! pool slot ([`crate::net::packet::PacketPool::enable_telemetry`]), switched on only when some
//! connection's congestion control reads them (`CcConfig::carries_telemetry`), so the 64-byte
//! packet and runs without INT are untouched. A fresh packet starts with an empty stack; the
//! receiver turns the data packet's slot into its ACK, so the ACK echoes the stack of the data
//! packet that triggered it without a copy.
//!
//! **Differences** from the ns-3 simulator's header: values are exact (ns-3 stores `qLen` in
//! 80-byte units, `txBytes` in 128-byte units modulo 2^20 and `ts` in ns modulo 2^24), and time
//! is in picoseconds. The stack holds [`MAX_HOPS`] records, as ns-3's `IntHeader::maxHop`; a
//! path with more switch hops keeps counting them but overwrites the oldest records, and a
//! reader ignores such a stack, as ns-3's does.

use crate::units::{BitsPerSec, Bytes, Time};

/// Records a stack holds: five switch egress ports, every path of a 3-tier fat tree.
pub const MAX_HOPS: usize = 5;

/// What one switch egress port reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet started leaving the port.
    pub ts: Time,
    /// Bytes the port had transmitted before this packet (every class).
    pub tx_bytes: Bytes,
    /// Bytes queued at the port (every class) once this packet was taken.
    pub qlen: u64,
    /// The port's rate.
    pub rate: BitsPerSec,
}

impl Default for IntHop {
    fn default() -> Self {
        IntHop { ts: Time::ZERO, tx_bytes: Bytes::ZERO, qlen: 0, rate: BitsPerSec(0) }
    }
}

/// The records one packet carries, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    /// Hops pushed so far (may exceed [`MAX_HOPS`]: see [`IntStack::hops`]).
    pub pushed: u8,
    /// The records; slot `i % MAX_HOPS` holds hop `i`.
    pub hop: [IntHop; MAX_HOPS],
}

impl IntStack {
    /// Appends one port's record.
    #[inline]
    pub fn push(&mut self, h: IntHop) {
        self.hop[self.pushed as usize % MAX_HOPS] = h;
        self.pushed = self.pushed.saturating_add(1);
    }

    /// The records in path order, or `None` when the path had more hops than the stack holds
    /// (its first records were overwritten).
    #[inline]
    pub fn hops(&self) -> Option<&[IntHop]> {
        let n = self.pushed as usize;
        (n <= MAX_HOPS).then(|| &self.hop[..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(ts: Time) -> IntHop {
        IntHop { ts, tx_bytes: Bytes((10 * ts).0), qlen: ts.0, rate: BitsPerSec(100_000_000_000) }
    }

    #[test]
    fn hops_come_back_in_path_order_until_the_stack_overflows() {
        let mut s = IntStack::default();
        assert_eq!(s.hops(), Some(&[][..]));
        for t in 1..=5 {
            s.push(hop(Time(t)));
        }
        assert_eq!(s.hops().unwrap().iter().map(|h| h.ts.0).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
        // A sixth hop overwrites the first: the stack no longer describes the path.
        s.push(hop(Time(6)));
        assert_eq!(s.pushed, 6);
        assert_eq!(s.hops(), None);
        assert_eq!(s.hop[0].ts, Time(6));
    }
}
