//! The receiving half of a connection (queue pair): its reorder window, what it has yet to
//! acknowledge, its loss-recovery half and its statistics, in an array of its own beside the
//! senders' ([`Hosts::rx`](super::hosts::Hosts::rx), indexed by connection id).
//!
//! Kept apart from the sender's record ([`Connection`](super::connection::Connection)) because
//! the two run at different hosts: a data arrival touches only this record (one or two cache
//! lines instead of the far end of a large sender record), and a partitioned run moves the
//! receiver's half from the partition that ran it without picking fields out of a shared
//! record. What the receiver knows of the sender's messages (their packet ranges, which reach
//! it as work requests would on an RDMA queue pair) it reads from the sender's record.

use super::connection::OpenMsg;
use super::recovery::{AnyReceiverRecovery, ReceiverRecovery, RxView};
use crate::hint::prefetch;
use crate::units::Time;
use std::collections::VecDeque;

/// The receiving half of one connection. Laid out in declaration order, what every data
/// arrival reads first.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Receiver {
    /// Every packet below this has arrived.
    pub cum: u32,
    /// Distinct data packets received.
    pub pkts: u32,
    /// Data packets received since the last ACK.
    pub unacked: u32,
    /// Their wire bytes (`transport.ack_coalesce_bytes`).
    pub unacked_bytes: u32,
    /// CE-marked data packets since the last ACK.
    pub unacked_ce: u32,
    /// Lowest sequence number that arrived since the last ACK (`u32::MAX` = none).
    pub lowest_unacked: u32,
    /// Data packets received more than once.
    pub duplicates: u32,
    /// Out-of-order packets discarded (go-back-N).
    pub discarded: u32,
    /// Distinct payload bytes delivered.
    pub bytes: u64,
    /// Messages delivered so far. The next one is the sender's `msgs[msgs_delivered -
    /// msgs_retired]`: counting both halves' progress from the start (rather than one index the
    /// sender shifts when it retires a message) lets a partitioned engine keep the receiver's
    /// half apart from the sender's, where only the posts reach the receiver (see
    /// `engine::parallel`).
    pub msgs_delivered: usize,
    /// Arrival time of the latest data packet (the receiver's clock, [`RxView::now`]).
    pub now: Time,
    /// Base RTT of the connection's path ([`RxView::base_rtt`]; the sender's record has it too).
    pub base_rtt: Time,
    /// When the last CNP left (`Time::MAX` = never).
    pub last_cnp: Time,
    /// Arrival flags for `cum..`.
    pub window: VecDeque<bool>,
    /// Loss recovery, receiver half (the mode's per-connection state).
    pub recovery: AnyReceiverRecovery,
}

impl Receiver {
    /// The receiver of a new connection whose path's base RTT is `base_rtt`.
    pub fn new(recovery: AnyReceiverRecovery, base_rtt: Time) -> Self {
        Receiver {
            cum: 0,
            pkts: 0,
            unacked: 0,
            unacked_bytes: 0,
            unacked_ce: 0,
            lowest_unacked: u32::MAX,
            duplicates: 0,
            discarded: 0,
            bytes: 0,
            msgs_delivered: 0,
            now: 0,
            base_rtt,
            last_cnp: Time::MAX,
            window: VecDeque::new(),
            recovery,
        }
    }

    /// Records arrival of data packet `seq`; returns false for a duplicate.
    #[inline]
    pub fn receive(&mut self, seq: u32) -> bool {
        if seq < self.cum {
            return false;
        }
        let idx = (seq - self.cum) as usize;
        if idx >= self.window.len() {
            self.window.resize(idx + 1, false);
        }
        if self.window[idx] {
            return false;
        }
        self.window[idx] = true;
        while self.window.front() == Some(&true) {
            self.window.pop_front();
            self.cum += 1;
        }
        true
    }

    /// Selective-ACK bitmap: bit i set when packet `cum + 1 + i` has arrived.
    #[inline]
    pub fn sack_bits(&self) -> u64 {
        self.sack_bits_from(self.cum + 1)
    }

    /// Selective-ACK bitmap: bit i set when packet `base + i` (≥ `cum`) has arrived.
    #[inline]
    pub fn sack_bits_from(&self, base: u32) -> u64 {
        let mut bits = 0u64;
        let skip = base.saturating_sub(self.cum) as usize;
        for (i, &got) in self.window.iter().skip(skip).take(64).enumerate() {
            if got {
                bits |= 1 << i;
            }
        }
        bits
    }

    /// The loss-recovery half and its view of the reorder window.
    #[inline]
    pub fn parts(&mut self) -> (&mut AnyReceiverRecovery, RxView<'_>) {
        let rx = RxView { cum: self.cum, window: &self.window, lowest_unacked: self.lowest_unacked, now: self.now, base_rtt: self.base_rtt };
        (&mut self.recovery, rx)
    }

    /// The reorder window as the loss-recovery half sees it.
    #[inline]
    pub fn view(&self) -> RxView<'_> {
        RxView { cum: self.cum, window: &self.window, lowest_unacked: self.lowest_unacked, now: self.now, base_rtt: self.base_rtt }
    }

    /// The cumulative point the ACKs carry, as the loss-recovery mode chooses.
    #[inline]
    pub fn ack_cum(&self) -> u32 {
        self.recovery.ack_cum(&self.view())
    }

    /// Base of the 64-packet SACK segment holding packet `lowest`, segments aligned to the
    /// cumulative point (strack spec §2.5.11 `segment_base`).
    #[inline]
    pub fn sack_segment_base(&self, lowest: u32) -> u32 {
        self.view().segment_base(lowest)
    }

    /// Index in the sender's `msgs`, of which the sender has retired `msgs_retired`, of the
    /// oldest message not yet delivered here.
    #[inline]
    pub fn next_msg(&self, msgs_retired: usize) -> usize {
        self.msgs_delivered - msgs_retired
    }

    /// Whether the oldest undelivered of the sender's open messages `msgs` (of which it has
    /// retired `msgs_retired`) is now complete, after the first arrival of `seq`; returns the
    /// delivered end if so (see [`ReceiverRecovery::delivered_end`]).
    #[inline]
    pub fn newly_delivered_end(&mut self, seq: u32, msgs: &VecDeque<OpenMsg>, msgs_retired: usize) -> Option<u32> {
        let m = msgs.get(self.next_msg(msgs_retired))?;
        let rx = RxView { cum: self.cum, window: &self.window, lowest_unacked: self.lowest_unacked, now: self.now, base_rtt: self.base_rtt };
        let end = self.recovery.delivered_end(&rx, seq, m);
        (m.end_pkt <= end).then_some(end)
    }

    /// Hints the CPU to load what a data arrival reads first (the event loop's look-ahead; then
    /// [`Receiver::prefetch_entry`]).
    #[inline]
    pub fn prefetch(&self) {
        prefetch(self);
        prefetch(&self.window);
    }

    /// Hints the CPU to load the reorder-window entry of packet `seq`. Reads the fields
    /// [`Receiver::prefetch`] requested.
    #[inline]
    pub fn prefetch_entry(&self, seq: u32) {
        if let Some(b) = seq.checked_sub(self.cum).and_then(|i| self.window.get(i as usize)) {
            prefetch(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver() -> Receiver {
        Receiver::new(AnyReceiverRecovery::Sack(Default::default()), 1)
    }

    #[test]
    fn reorder_window_and_sack() {
        let mut r = receiver();
        assert!(r.receive(2));
        assert_eq!(r.cum, 0);
        assert_eq!(r.sack_bits(), 0b10, "packet 2 is bit 1 above cum + 1");
        assert!(r.receive(0));
        assert_eq!(r.cum, 1);
        assert!(r.receive(1));
        assert_eq!(r.cum, 3);
        assert!(!r.receive(1), "a duplicate below cum");
        assert!(r.receive(5));
        assert!(!r.receive(5), "a duplicate in the window");
        assert_eq!(r.sack_bits_from(3), 0b100);
    }

    //= type=test; strack spec §2.5.11 segment_base: 64-packet segments aligned to the EPSN
    #[test]
    fn sack_segments_are_aligned_to_the_cumulative_point() {
        let mut r = receiver();
        for seq in [3, 70, 130, 131] {
            assert!(r.receive(seq));
        }
        assert_eq!(r.cum, 0);
        assert_eq!(r.sack_segment_base(u32::MAX), 0);
        assert_eq!(r.sack_segment_base(70), 64);
        assert_eq!(r.sack_segment_base(131), 128);
        // Bit i of a segment = packet base + i.
        assert_eq!(r.sack_bits_from(0), 1 << 3);
        assert_eq!(r.sack_bits_from(64), 1 << 6);
        assert_eq!(r.sack_bits_from(128), 0b1100);
    }
}
