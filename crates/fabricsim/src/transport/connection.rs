//! Per-connection state: one flow's sender scoreboard and receiver reorder window.

use super::cc::AnyCc;
use super::lb::AnyLb;
use crate::ids::NodeId;
use crate::rng::Rng;
use crate::units::Time;
use std::collections::VecDeque;

/// Scoreboard state of a sent packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SeqState {
    /// Sent and neither acknowledged nor declared lost.
    InFlight,
    /// Declared lost (NACK or timeout) and waiting in the retransmission queue.
    Lost,
    /// Acknowledged.
    Acked,
}

/// One scoreboard slot.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// State.
    pub state: SeqState,
    /// Send time of the latest transmission (tells stale feedback from current).
    pub sent_at: Time,
    /// Entropy of the latest transmission.
    pub entropy: u16,
}

/// A flow's connection.
#[derive(Debug)]
pub struct Connection {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes of the flow.
    pub size: u64,
    /// Number of data packets.
    pub n_pkts: u32,
    /// When the flow started (set at start).
    pub start: Time,
    /// When the sender saw every byte acknowledged.
    pub finish: Option<Time>,
    /// Whether the flow has started.
    pub started: bool,

    // --- sender ---
    /// Next never-sent sequence number.
    pub next_seq: u32,
    /// Lowest unacknowledged sequence number: the scoreboard's base.
    pub snd_una: u32,
    /// Slots for `snd_una..next_seq`.
    pub board: VecDeque<Slot>,
    /// Packets declared lost, oldest first (may hold entries acknowledged since: skipped).
    pub retx: VecDeque<u32>,
    /// Transmissions in time order, for the retransmission timer (stale entries skipped).
    pub tx_log: VecDeque<(u32, Time)>,
    /// Wire bytes of packets in state InFlight.
    pub in_flight: u64,
    /// Packets acknowledged so far.
    pub acked_pkts: u32,
    /// Earliest time the pacer lets the next packet go.
    pub next_send: Time,
    /// Whether the connection sits in its host's ready ring.
    pub in_ready: bool,
    /// Whether a pacing wake-up is scheduled.
    pub wake_pending: bool,
    /// Whether a retransmission-timer event is scheduled.
    pub timer_pending: bool,
    /// Timeouts since the last ACK.
    pub consecutive_timeouts: u32,
    /// Congestion control.
    pub cc: AnyCc,
    /// Path selection.
    pub lb: AnyLb,
    /// This connection's random stream (entropy draws).
    pub rng: Rng,

    // --- receiver ---
    /// Every packet below this has arrived.
    pub rcv_cum: u32,
    /// Arrival flags for `rcv_cum..`.
    pub rcv_window: VecDeque<bool>,
    /// Distinct data packets received.
    pub rcv_pkts: u32,
    /// Distinct payload bytes delivered.
    pub rcv_bytes: u64,
    /// Data packets received more than once.
    pub rcv_duplicates: u32,
    /// Data packets received since the last ACK.
    pub rcv_unacked: u32,
    /// CE-marked data packets since the last ACK.
    pub rcv_unacked_ce: u32,

    // --- statistics ---
    /// Data packets sent again.
    pub retransmits: u32,
    /// NACKs (trimmed packets) seen by the sender.
    pub nacks: u32,
    /// Packets of this flow dropped anywhere (data or ACK).
    pub drops: u32,
    /// Data packets of this flow trimmed by switches.
    pub trims: u32,
    /// ACKs that echoed a CE mark.
    pub ecn_acks: u32,
    /// Retransmission timeouts.
    pub timeouts: u32,
}

impl Connection {
    /// A connection for a flow of `size` payload bytes split into `mss`-byte packets.
    pub fn new(src: NodeId, dst: NodeId, size: u64, mss: u32, cc: AnyCc, lb: AnyLb, rng: Rng) -> Self {
        let n_pkts = size.div_ceil(mss as u64).max(1) as u32;
        Connection {
            src,
            dst,
            size,
            n_pkts,
            start: 0,
            finish: None,
            started: false,
            next_seq: 0,
            snd_una: 0,
            board: VecDeque::new(),
            retx: VecDeque::new(),
            tx_log: VecDeque::new(),
            in_flight: 0,
            acked_pkts: 0,
            next_send: 0,
            in_ready: false,
            wake_pending: false,
            timer_pending: false,
            consecutive_timeouts: 0,
            cc,
            lb,
            rng,
            rcv_cum: 0,
            rcv_window: VecDeque::new(),
            rcv_pkts: 0,
            rcv_bytes: 0,
            rcv_duplicates: 0,
            rcv_unacked: 0,
            rcv_unacked_ce: 0,
            retransmits: 0,
            nacks: 0,
            drops: 0,
            trims: 0,
            ecn_acks: 0,
            timeouts: 0,
        }
    }

    /// Payload bytes of packet `seq`.
    #[inline]
    pub fn payload(&self, seq: u32, mss: u32) -> u32 {
        if seq + 1 == self.n_pkts {
            (self.size - (self.n_pkts as u64 - 1) * mss as u64) as u32
        } else {
            mss
        }
    }

    /// Scoreboard slot of `seq` (which must lie in `snd_una..next_seq`).
    #[inline]
    pub fn slot(&mut self, seq: u32) -> &mut Slot {
        &mut self.board[(seq - self.snd_una) as usize]
    }

    /// Whether the sender is done.
    pub fn complete(&self) -> bool {
        self.acked_pkts == self.n_pkts
    }

    /// Whether retransmission-timer entry (`seq`, sent at `t`) still describes a packet in
    /// flight (not acknowledged, not declared lost, not retransmitted since).
    #[inline]
    pub fn tx_entry_live(&self, seq: u32, t: Time) -> bool {
        seq >= self.snd_una && seq < self.next_seq && {
            let s = &self.board[(seq - self.snd_una) as usize];
            s.state == SeqState::InFlight && s.sent_at == t
        }
    }

    /// Drops acknowledged slots from the front of the scoreboard.
    #[inline]
    pub fn advance_una(&mut self) {
        while let Some(s) = self.board.front() {
            if s.state != SeqState::Acked {
                break;
            }
            self.board.pop_front();
            self.snd_una += 1;
        }
    }

    /// The sequence number the sender would transmit next, if it has one:
    /// the oldest packet awaiting retransmission, else the next new packet.
    #[inline]
    pub fn next_to_send(&mut self) -> Option<(u32, bool)> {
        while let Some(&seq) = self.retx.front() {
            if seq >= self.snd_una && self.board[(seq - self.snd_una) as usize].state == SeqState::Lost {
                return Some((seq, true));
            }
            self.retx.pop_front();
        }
        (self.next_seq < self.n_pkts).then_some((self.next_seq, false))
    }

    /// Records arrival of data packet `seq`; returns false for a duplicate.
    #[inline]
    pub fn receive(&mut self, seq: u32) -> bool {
        if seq < self.rcv_cum {
            return false;
        }
        let idx = (seq - self.rcv_cum) as usize;
        if idx >= self.rcv_window.len() {
            self.rcv_window.resize(idx + 1, false);
        }
        if self.rcv_window[idx] {
            return false;
        }
        self.rcv_window[idx] = true;
        while self.rcv_window.front() == Some(&true) {
            self.rcv_window.pop_front();
            self.rcv_cum += 1;
        }
        true
    }

    /// Selective-ACK bitmap: bit i set when packet `rcv_cum + 1 + i` has arrived.
    #[inline]
    pub fn sack_bits(&self) -> u64 {
        let mut bits = 0u64;
        for (i, &got) in self.rcv_window.iter().skip(1).take(64).enumerate() {
            if got {
                bits |= 1 << i;
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::{fixed, AnyCc};
    use crate::transport::lb::{spray, AnyLb};

    fn conn(size: u64) -> Connection {
        let cc = AnyCc::Fixed(fixed::Fixed::new(
            &fixed::FixedParams::default(),
            &crate::transport::cc::PathInfo { mtu_bytes: 4096, host_rate: crate::units::BitsPerSec(1), base_rtt: 1, bdp_bytes: 1, hops: 2 },
        ));
        Connection::new(0, 1, size, 4032, cc, AnyLb::Spray(spray::Spray), Rng::stream(0, "t", 0))
    }

    #[test]
    fn packetization() {
        let c = conn(2 << 20);
        // 2 MiB / 4032 B = 520.1 -> 521 packets, the last one 128 B (as in the bench README).
        assert_eq!(c.n_pkts, 521);
        assert_eq!(c.payload(520, 4032), 2_097_152 - 520 * 4032);
        assert_eq!(c.payload(0, 4032), 4032);
    }

    #[test]
    fn reorder_window_and_sack() {
        let mut c = conn(100 * 4032);
        assert!(c.receive(2));
        assert!(c.receive(4));
        assert!(!c.receive(4));
        assert_eq!(c.rcv_cum, 0);
        // bits relative to cum+1 = 1: packet 2 -> bit 1, packet 4 -> bit 3.
        assert_eq!(c.sack_bits(), 0b1010);
        assert!(c.receive(0));
        assert_eq!(c.rcv_cum, 1);
        assert!(c.receive(1));
        assert_eq!(c.rcv_cum, 3);
        assert!(!c.receive(0));
    }
}
