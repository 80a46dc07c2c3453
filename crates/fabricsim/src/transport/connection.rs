//! The sending half of a connection (queue pair): its scoreboard, its schemes (congestion
//! control, path selection, loss recovery) and the messages posted on it. The receiving half is
//! [`Receiver`](super::receiver::Receiver), in an array of its own.
//!
//! Messages are appended to the connection's packet sequence in posting order (a message of
//! `b` bytes takes `⌈b / mss⌉` packets, the last one short), as work requests on an RDMA queue
//! pair; the connection goes idle when everything posted is acknowledged and wakes when the next
//! message is posted. A flow is a connection that carries one message.

use super::cc::{AnyCc, CongestionControl, PacingClock};
use super::lb::AnyLb;
use super::recovery::{AnyRecovery, SenderCtx};
use crate::hint::prefetch;
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
    /// Wire bytes of the packet (payload + header).
    pub wire: u32,
    /// Send time of the latest transmission (tells stale feedback from current).
    pub sent_at: Time,
    /// Entropy of the latest transmission.
    pub entropy: u16,
}

/// A message posted on a connection and not yet fully acknowledged.
#[derive(Clone, Copy, Debug)]
pub struct OpenMsg {
    /// Message id in the traffic graph.
    pub msg: u32,
    /// Its first packet's sequence number.
    pub first_pkt: u32,
    /// Packets its payload was split into when posted (`end_pkt - first_pkt` unless the
    /// loss-recovery mode sent past the posted data, see [`Connection::extend_last_msg`]).
    pub pkts: u32,
    /// One past its last packet's sequence number.
    pub end_pkt: u32,
    /// Payload bytes of its last packet.
    pub last_payload: u32,
    /// When it was posted.
    pub posted_at: Time,
    /// When its first packet left the sender (`Time::MAX` until then).
    pub first_tx: Time,
    /// When its last byte was delivered in order at the receiver (`Time::MAX` until then).
    pub delivered_at: Time,
    /// Largest round-trip sample of an ACK triggered by one of its packets.
    pub rtt_max: Time,
    /// Sum and count of those samples.
    pub rtt_sum: Time,
    /// Number of samples.
    pub rtt_samples: u32,
}

/// The sending half of a connection (queue pair).
///
/// Laid out in declaration order (`repr(C)`), hottest first: the fields that every packet sent
/// and every ACK reads sit together at the front, identity last, so a packet event touches as
/// few of the record's cache lines as it can (an all-to-all keeps thousands of connections busy
/// at once, more than the caches hold). What the sender counts is in an array of its own
/// ([`SenderStats`](super::sender::SenderStats)).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Connection {
    // --- sender, touched per packet sent and per ACK (first cache lines) ---
    /// Next never-sent sequence number.
    pub next_seq: u32,
    /// Lowest unacknowledged sequence number: the scoreboard's base.
    pub snd_una: u32,
    /// Data packets posted so far, plus any the loss-recovery mode sent past the posted data
    /// ([`Connection::extend_last_msg`]).
    pub n_pkts: u32,
    /// Packets acknowledged so far.
    pub acked_pkts: u32,
    /// Packets below this belong to messages the receiver reported done, in a mode that
    /// [completes on settle](super::recovery::SenderRecovery::completes_on_settle) (`u32::MAX`
    /// in the others, where acknowledged packets are enough).
    pub settled_end: u32,
    /// Wire bytes of that packet.
    pub last_wire: u32,
    /// Timeouts since the last ACK.
    pub consecutive_timeouts: u32,
    /// Of `n_pkts`, packets sent past the posted data (erasure-coding symbols).
    pub extra_pkts: u32,
    /// Wire bytes of packets in state InFlight.
    pub in_flight: u64,
    /// Earliest time the pacer lets the next packet go.
    pub next_send: Time,
    /// When the last data packet left, and its wire bytes (the pacing gap is recomputed from
    /// them when the rate changes during a long gap).
    pub last_tx: Time,
    /// Payload bytes acknowledged so far.
    pub acked_payload: u64,
    /// Of `msgs`, how many leading ones have had all their packets sent at least once.
    pub msgs_sent: usize,
    /// Messages the sender has retired from the front of `msgs` (fully acknowledged).
    pub msgs_retired: usize,
    /// Whether the connection sits in its host's ready ring.
    pub in_ready: bool,
    /// Whether a pacing wake-up is scheduled.
    pub wake_pending: bool,
    /// Whether a retransmission-timer event is scheduled.
    pub timer_pending: bool,
    /// Whether the pacer keeps a fixed schedule ([`PacingClock::Schedule`]; read once from the
    /// congestion control at creation).
    pub pace_on_schedule: bool,
    /// A scheduled pacer found nothing to send: its schedule resumes at `max(now, next_send)`
    /// when it has something again.
    pub pace_idle: bool,
    /// Whether a message was ever posted.
    pub started: bool,
    /// Slots for `snd_una..next_seq`.
    pub board: VecDeque<Slot>,
    /// Packets declared lost, oldest first (may hold entries acknowledged since: skipped).
    pub retx: VecDeque<u32>,
    /// Transmissions in time order, for the retransmission timer (stale entries skipped).
    pub tx_log: VecDeque<(u32, Time)>,
    /// Posted messages not yet fully acknowledged, oldest first.
    pub msgs: VecDeque<OpenMsg>,
    /// Congestion control.
    pub cc: AnyCc,
    /// Path selection.
    pub lb: AnyLb,
    /// Loss recovery, sender half (the mode's per-connection state).
    pub recovery: AnyRecovery,
    /// This connection's random stream (entropy draws).
    pub rng: Rng,


    // --- identity, touched per message ---
    /// Base RTT of the connection's path (full-sized packet and its ACK on an idle fabric):
    /// the ideal FCT's latency term.
    pub base_rtt: Time,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes posted so far.
    pub size: u64,
    /// When the first message was posted.
    pub start: Time,
    /// When the sender last saw everything posted acknowledged (`None` while busy or unused).
    pub finish: Option<Time>,
}

impl Connection {
    /// An idle connection from `src` to `dst`.
    pub fn new(src: NodeId, dst: NodeId, cc: AnyCc, lb: AnyLb, rng: Rng, recovery: AnyRecovery) -> Self {
        use super::recovery::SenderRecovery;
        let settled_end = if recovery.completes_on_settle() { 0 } else { u32::MAX };
        let pace_on_schedule = cc.pacing_clock() == PacingClock::Schedule;
        Connection {
            src,
            dst,
            size: 0,
            n_pkts: 0,
            extra_pkts: 0,
            start: Time::ZERO,
            finish: None,
            started: false,
            msgs: VecDeque::new(),
            msgs_sent: 0,
            msgs_retired: 0,
            next_seq: 0,
            snd_una: 0,
            board: VecDeque::new(),
            retx: VecDeque::new(),
            tx_log: VecDeque::new(),
            in_flight: 0,
            acked_pkts: 0,
            settled_end,
            acked_payload: 0,
            next_send: Time::ZERO,
            last_tx: Time::ZERO,
            last_wire: 0,
            in_ready: false,
            wake_pending: false,
            timer_pending: false,
            pace_on_schedule,
            pace_idle: pace_on_schedule,
            consecutive_timeouts: 0,
            recovery,
            cc,
            lb,
            rng,
            base_rtt: Time::ZERO,
        }
    }

    /// Appends message `msg` of `bytes` payload bytes, split into `mss`-byte packets.
    pub fn post(&mut self, msg: u32, bytes: u64, mss: u32, now: Time) {
        let pkts = bytes.div_ceil(mss as u64).max(1);
        let end = self.n_pkts as u64 + pkts;
        assert!(end < u32::MAX as u64, "connection {}->{}: more than 2^32 packets posted", self.src, self.dst);
        let last_payload = (bytes - (pkts - 1) * mss as u64) as u32;
        self.msgs.push_back(OpenMsg {
            msg,
            first_pkt: self.n_pkts,
            pkts: pkts as u32,
            end_pkt: end as u32,
            last_payload,
            posted_at: now,
            first_tx: Time::MAX,
            delivered_at: Time::MAX,
            rtt_max: Time::ZERO,
            rtt_sum: Time::ZERO,
            rtt_samples: 0,
        });
        self.n_pkts = end as u32;
        self.size += bytes;
        if !self.started {
            self.started = true;
            self.start = now;
        }
        self.finish = None;
    }

    /// Payload bytes of the next never-sent packet (`next_seq`): a full packet past the
    /// posted data (see [`Connection::extend_last_msg`]).
    #[inline]
    pub fn next_new_payload(&self, mss: u32) -> u32 {
        match self.msgs.get(self.msgs_sent) {
            Some(m) if self.next_seq + 1 == m.end_pkt => m.last_payload,
            _ => mss,
        }
    }

    /// Makes room for one new full-sized packet past the posted data (`next_seq == n_pkts`,
    /// everything posted already sent): it becomes the last packet of the last open message.
    /// A loss-recovery mode that sends more packets than the message has (an erasure code's
    /// extra symbols) gets them this way; a message posted later starts after them.
    pub fn extend_last_msg(&mut self, mss: u32) {
        debug_assert!(self.next_seq == self.n_pkts && self.msgs_sent == self.msgs.len());
        let m = self.msgs.back_mut().expect("a busy connection has an open message");
        m.end_pkt += 1;
        m.last_payload = mss;
        self.n_pkts += 1;
        self.extra_pkts += 1;
        self.msgs_sent -= 1;
    }

    /// Wire bytes of packet `seq` (a retransmission, or the next new packet).
    #[inline]
    pub fn wire_of(&self, seq: u32, retx: bool, mss: u32, header: u32) -> u32 {
        if retx {
            self.board[(seq - self.snd_una) as usize].wire
        } else {
            self.next_new_payload(mss) + header
        }
    }

    /// Index in `msgs` of the message holding packet `seq` (which must be open).
    #[inline]
    pub fn msg_of(&self, seq: u32) -> Option<usize> {
        // Open messages are in sequence order: binary search, as a collective may keep many open.
        let i = self.msgs.partition_point(|m| m.end_pkt <= seq);
        (i < self.msgs.len()).then_some(i)
    }

    /// Whether everything posted has been acknowledged (and, in a mode that
    /// [completes on settle](super::recovery::SenderRecovery::completes_on_settle), reported
    /// done by the receiver).
    #[inline]
    pub fn idle(&self) -> bool {
        self.acked_pkts == self.n_pkts && self.settled_end >= self.n_pkts
    }

    /// Hints the CPU to load the sender's fields that handling an ACK, a NACK or a wake of this
    /// connection reads first (a data arrival reads the [`Receiver`](super::receiver::Receiver)'s).
    /// The event loop's look-ahead calls it; then [`Connection::prefetch_entries`].
    #[inline]
    pub fn prefetch_fields(&self) {
        prefetch(self);
        prefetch(&self.board);
        prefetch(&self.tx_log);
        prefetch(&self.msgs);
    }

    /// Hints the CPU to load the whole record (eight cache lines): a packet's send reads fields
    /// all over it (the scoreboard's and the message ring's headers, the path selector, the
    /// congestion control, the counters).
    #[inline]
    pub fn prefetch_record(&self) {
        let base = self as *const Self as *const u8;
        for line in (0..std::mem::size_of::<Self>()).step_by(64) {
            crate::hint::prefetch_addr(base.wrapping_add(line));
        }
    }

    /// Hints the CPU to load what a data arrival at the receiver reads of this record: the posted
    /// messages' ring header, the count of retired ones and the packet count.
    #[inline]
    pub fn prefetch_messages(&self) {
        prefetch(&self.msgs);
        prefetch(&self.msgs_retired);
        prefetch(&self.n_pkts);
    }

    /// Hints the CPU to load what a pacing wake of this sender touches in its rings: the
    /// message its next new packet comes from, and the newest scoreboard and timer entries.
    /// Reads the fields [`Connection::prefetch_fields`] (sender side) requested. (A timer
    /// check touches the oldest ones: [`Connection::prefetch_entries`] at `snd_una`.)
    #[inline]
    pub fn prefetch_wake_entries(&self) {
        self.prefetch_next_msg();
        if let Some(s) = self.board.back() {
            prefetch(s);
        }
        if let Some(e) = self.tx_log.back() {
            prefetch(e);
        }
    }

    /// Hints the CPU to load what sending this connection's next packet writes and reads in its
    /// rings: the scoreboard's and the timer log's next slots (the ones after their newest
    /// entries) and the message the packet comes from. Reads the record's fields.
    #[inline]
    pub fn prefetch_send_entries(&self) {
        self.prefetch_next_msg();
        if let Some(s) = self.board.back() {
            crate::hint::prefetch_addr((s as *const Slot).wrapping_add(1));
        }
        if let Some(e) = self.tx_log.back() {
            crate::hint::prefetch_addr((e as *const (u32, Time)).wrapping_add(1));
        }
    }

    /// Hints the CPU to load the message the next new packet comes from.
    #[inline]
    fn prefetch_next_msg(&self) {
        if let Some(m) = self.msgs.get(self.msgs_sent) {
            prefetch(m);
        }
    }

    /// Hints the CPU to load the scoreboard entries an ACK or NACK of packet `seq` will touch:
    /// its scoreboard slot, the oldest retransmission-timer entry and the message the next new
    /// packet comes from. Reads the fields [`Connection::prefetch_fields`] requested.
    #[inline]
    pub fn prefetch_entries(&self, seq: u32) {
        if let Some(s) = seq.checked_sub(self.snd_una).and_then(|i| self.board.get(i as usize)) {
            prefetch(s);
        }
        if let Some(e) = self.tx_log.front() {
            prefetch(e);
        }
        // An ACK that opens the window sends the next packet at once.
        self.prefetch_next_msg();
    }

    /// Scoreboard slot of `seq` (which must lie in `snd_una..next_seq`).
    #[inline]
    pub fn slot(&mut self, seq: u32) -> &mut Slot {
        &mut self.board[(seq - self.snd_una) as usize]
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

    /// The sender's loss-recovery half and the narrow view of this connection its hooks see.
    #[inline(always)]
    pub fn sender_parts(&mut self, now: Time, mtu: u64) -> (&mut AnyRecovery, SenderCtx<'_>) {
        let ctx = SenderCtx {
            now,
            mtu,
            snd_una: self.snd_una,
            next_seq: self.next_seq,
            n_pkts: self.n_pkts,
            acked_pkts: self.acked_pkts,
            settled_end: self.settled_end,
            next_send: &mut self.next_send,
            board: &mut self.board,
            retx: &mut self.retx,
            in_flight: &mut self.in_flight,
            lb: &mut self.lb,
            cc: &self.cc,
            rng: &mut self.rng,
            msgs: &self.msgs,
        };
        (&mut self.recovery, ctx)
    }

    /// The sequence number the sender would transmit next, if it has one, as its loss-recovery
    /// mode chooses (by default the oldest packet awaiting retransmission, else the next new
    /// packet), with whether it is a retransmission.
    #[inline(always)]
    pub fn next_to_send(&mut self, now: Time, mtu: u64) -> Option<(u32, bool)> {
        use super::recovery::SenderRecovery;
        let (r, mut ctx) = self.sender_parts(now, mtu);
        r.next_to_send(&mut ctx)
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;
    use crate::transport::cc::{fixed, AnyCc};
    use crate::transport::lb::{spray, AnyLb};

    fn conn(size: u64) -> Connection {
        let cc = AnyCc::Fixed(fixed::Fixed::new(
            &fixed::FixedParams::default(),
            &crate::transport::cc::PathInfo { mtu_bytes: Bytes(4096), host_rate: crate::units::BitsPerSec(1), base_rtt: Time(1), bdp_bytes: Bytes(1), hops: 2, net_base_rtt: Time(1), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 },
        ));
        let tx = AnyRecovery::Sack(Default::default());
        let mut c = Connection::new(NodeId(0), NodeId(1), cc, AnyLb::Spray(spray::Spray::new(&Default::default())), Rng::stream(0, "t", 0), tx);
        c.post(0, size, 4032, Time::ZERO);
        c
    }

    #[test]
    fn packetization() {
        let mut c = conn(2 << 20);
        // 2 MiB / 4032 B = 520.1 -> 521 packets, the last one 128 B (as in the bench README).
        assert_eq!(c.n_pkts, 521);
        assert_eq!(c.next_new_payload(4032), 4032);
        c.next_seq = 520;
        assert_eq!(c.next_new_payload(4032), 2_097_152 - 520 * 4032);
        // A second message starts a new packet: it never shares one with the first.
        c.post(1, 5000, 4032, Time::ZERO);
        assert_eq!(c.n_pkts, 523);
        assert_eq!(c.msgs[1].last_payload, 5000 - 4032);
        assert_eq!(c.msg_of(520), Some(0));
        assert_eq!(c.msg_of(521), Some(1));
    }
}
