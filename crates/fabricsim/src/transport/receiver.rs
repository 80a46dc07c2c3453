//! The receiving half of a connection (queue pair): its reorder window, what it has yet to
//! acknowledge, its loss-recovery half and its statistics, in an array of its own beside the
//! senders' ([`Hosts::rx`](super::hosts::Hosts::rx), indexed by connection id), and its
//! handlers: it delivers data exactly once, answers with ACKs (cumulative + 64-packet SACK
//! bitmap + ECN echo + out-of-order count), NACKs trimmed headers, reports gaps with sequence
//! NACKs in the RoCE modes, answers probes, and sends DCQCN's CNPs. The handlers get the
//! [`Kernel`] and return the packets to send ([`Sends`]); the engine queues them on the host's
//! NIC and hands completed messages to the workload.
//!
//! Kept apart from the sender's record ([`Connection`](super::connection::Connection)) because
//! the two run at different hosts: a data arrival touches only this record (one or two cache
//! lines instead of the far end of a large sender record), and a partitioned run moves the
//! receiver's half from the partition that ran it without picking fields out of a shared
//! record. What the receiver knows of the sender's messages (their packet ranges, which reach
//! it as work requests would on an RDMA queue pair) it reads from the sender's record.

use super::connection::OpenMsg;
use super::hosts::TransportParams;
use super::signal::{self, Arrival as SignalArrival};
use super::recovery::{Admit, AnyReceiverRecovery, Arrival, ReceiverRecovery, Reply, RxView};
use crate::hint::prefetch;
use crate::ids::{PktId, PortId};
use crate::kernel::packet::{Packet, PktKind, F_ACK_NOW, F_CE, F_ECE, F_LAST_HOP, F_PROBE_ACK, F_RETX, F_TRIMMED};
use crate::kernel::packet_log::{PacketEvent, NO_PORT};
use crate::kernel::Kernel;
use crate::units::{Bytes, Time};
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
    pub bytes: Bytes,
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
    /// When each signal (`transport/signal/`, in its table's order) last left (`Time::MAX` =
    /// never).
    pub signal_sent_at: [Time; signal::COUNT],
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
            bytes: Bytes::ZERO,
            msgs_delivered: 0,
            now: Time::ZERO,
            base_rtt,
            signal_sent_at: [Time::MAX; signal::COUNT],
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
        if seq == self.cum && self.window.is_empty() {
            // In order with nothing held: the common case, which need not touch the window's
            // buffer (a separate allocation per receiver, cold at 8192 hosts).
            self.cum += 1;
            return true;
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
        let (recovery, view) = self.parts();
        let end = recovery.delivered_end(&view, seq, m);
        (m.end_pkt <= end).then_some(end)
    }

    /// Hints the CPU to load what a data arrival reads first (the event loop's look-ahead; then
    /// [`Receiver::prefetch_entry`]).
    #[inline]
    pub fn prefetch(&self) {
        prefetch(self);
        prefetch(&self.window);
    }

    /// Hints the CPU to load the posted message a fresh packet may complete (the one after the
    /// messages delivered so far, in the sender's ring `msgs`). Reads the fields
    /// [`Receiver::prefetch`] requested and the ring's header.
    #[inline]
    pub fn prefetch_current_message(&self, msgs: &VecDeque<OpenMsg>, msgs_retired: usize) {
        if let Some(m) = self.msgs_delivered.checked_sub(msgs_retired).and_then(|i| msgs.get(i)) {
            prefetch(m);
        }
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

/// Up to two packets a receiver's handler asks the engine to queue on the host's NIC, in this
/// order: a CNP (for a CE mark, or for an out-of-order arrival of an unmarked packet: never
/// both), then the answer proper.
#[must_use]
#[derive(Clone, Copy, Debug, Default)]
pub struct Sends {
    pkts: [PktId; 2],
    n: u8,
}

impl Sends {
    fn push(&mut self, pkt: PktId) {
        self.pkts[self.n as usize] = pkt;
        self.n += 1;
    }

    /// The packets, in sending order.
    pub fn iter(&self) -> impl Iterator<Item = PktId> + '_ {
        self.pkts[..self.n as usize].iter().copied()
    }
}

/// Where a data arrival leaves the receiver: answered already, or accepted and to be answered
/// once the engine has delivered the messages it completed ([`Receiver::answer_data`]).
#[must_use]
#[derive(Clone, Copy, Debug)]
pub enum DataStep {
    /// Nothing more to do for this packet.
    Done,
    /// Accepted: after delivering (if `fresh`), call [`Receiver::answer_data`] with this.
    Answer(Accepted),
}

/// A data packet the receiver accepted, as [`Receiver::answer_data`] needs it.
#[derive(Clone, Copy, Debug)]
pub struct Accepted {
    /// Whether it was the packet's first arrival.
    pub fresh: bool,
    /// The cumulative point before it arrived.
    pub cum_before: u32,
    /// Whether it arrived CE-marked.
    pub ce: bool,
}

// The receiver's handlers. Each gets the kernel and the transport's parameters, works on this
// record alone, and hands back the packets to send (the arriving packet's pool slot is reused
// for its answer, so a data packet and its ACK cost one allocation); the engine queues them on
// the host's NIC and delivers completed messages to the workload.
impl Receiver {
    /// Data packet `pkt` (a copy of which is `p`), not a bounced header, reached this receiver,
    /// whose host's NIC port is `port`: a trimmed header is NACKed at once, a CE mark may cost
    /// a CNP, the loss-recovery mode admits or discards it, and a first arrival is recorded.
    // Inlined into the engine's arrival handler, its one caller.
    #[inline(always)]
    pub fn on_data(&mut self, k: &mut Kernel, tp: &TransportParams, pkt: PktId, p: &Packet, port: PortId, sends: &mut Sends) -> DataStep {
        if p.flags & F_TRIMMED != 0 {
            // Trimmed header: NACK it at once so the sender retransmits within one RTT.
            k.log.packet(k.now, p.conn.0, p.seq, PacketEvent::HeaderArrived, NO_PORT);
            let a = k.pool.get_mut(pkt);
            a.kind = PktKind::Nack;
            a.src = p.dst;
            a.dst = p.src;
            a.size = tp.ack_bytes;
            a.flags = p.flags & (F_RETX | F_LAST_HOP);
            sends.push(pkt);
            return DataStep::Done;
        }
        let ce = p.flags & F_CE != 0;
        self.signal(k, tp, p, port, sends, SignalArrival::Data { ce });
        self.now = k.now;
        let (recovery, view) = self.parts();
        if let Admit::Discard(reply) = recovery.admit(&view, p.seq) {
            // E.g. go-back-N: an out-of-order packet is discarded; the first one of a gap asks
            // for the expected packet.
            self.discarded += 1;
            if reply != Reply::SeqNack {
                if let Some(answer) = self.reply(k, tp, pkt, p, reply) {
                    sends.push(answer);
                }
                return DataStep::Done;
            }
            //= seqbalance §2.3.3; type=assumption
            //# The ConWeave ns-3 NACK carries a CNP: `ooo_triggers_cnp` (default false).
            self.signal(k, tp, p, port, sends, SignalArrival::Gap { ce });
            //= ns-3 RdmaHw::ReceiveUdp: a NACK carries the CNP flag as an ACK does (the
            //# packet's CE mark; ConWeave's also for the gap itself): where no CNP packets
            //# exist (the mellanox reaction point), the flag is the notification.
            let echo = tp.signals.flags_gap_nack(ce);
            sends.push(self.seq_nack(k, tp, pkt, if echo { F_ECE } else { 0 }));
            return DataStep::Done;
        }
        let cum_before = self.cum;
        let fresh = self.receive(p.seq);
        if fresh {
            self.pkts += 1;
            self.bytes += Bytes((p.size - tp.header) as u64);
        } else {
            self.duplicates += 1;
        }
        DataStep::Answer(Accepted { fresh, cum_before, ce })
    }

    /// Answers accepted data packet `pkt` (a copy of which is `p`; [`DataStep::Answer`] gave
    /// `accepted`) as the loss-recovery mode decides, given the `n_pkts`
    /// packets the sender has posted so far: the packet the engine sends, if any.
    #[inline(always)]
    pub fn answer_data(&mut self, k: &mut Kernel, tp: &TransportParams, pkt: PktId, p: &Packet, n_pkts: u32, accepted: Accepted) -> Option<PktId> {
        let Accepted { fresh, cum_before, ce } = accepted;
        //= uec-spec §4 (htsim UecSink::processData)
        //# ACK by bytes, on the flow's first packet, at once on CE, and on the sender's request.
        let by_bytes = tp.ack_coalesce_bytes > 0 && (self.unacked_bytes + p.size >= tp.ack_coalesce_bytes || self.pkts == 1);
        let by_packets = if tp.ack_coalesce_bytes > 0 { tp.ack_every > 1 && self.unacked + 1 >= tp.ack_every } else { self.unacked + 1 >= tp.ack_every };
        let ack_due = !tp.coalescing()
            || !fresh
            || p.flags & F_ACK_NOW != 0
            || by_packets
            || by_bytes
            || (tp.ack_on_ce && ce)
            || self.pkts == n_pkts;
        let arrival = Arrival { seq: p.seq, fresh, ce, cum_before, ack_due };
        let (recovery, view) = self.parts();
        let reply = recovery.on_data(&view, &arrival);
        if reply != Reply::SeqNack {
            // The packet is covered by this ACK or the next one.
            self.unacked += 1;
            self.unacked_bytes += p.size;
            self.lowest_unacked = self.lowest_unacked.min(p.seq);
            if ce {
                self.unacked_ce += 1;
            }
        }
        self.reply(k, tp, pkt, p, reply)
    }

    /// Answers the arrived data packet `pkt` (a copy of which is `p`) as the loss-recovery
    /// mode decided, reusing its pool slot (or freeing it when there is nothing to say).
    #[inline(always)]
    fn reply(&mut self, k: &mut Kernel, tp: &TransportParams, pkt: PktId, p: &Packet, reply: Reply) -> Option<PktId> {
        match reply {
            Reply::None => {
                k.pool.free(pkt);
                None
            }
            Reply::Ack { sack_base } => {
                let ce = if p.flags & F_CE != 0 { F_ECE } else { 0 };
                Some(self.ack(k, tp, pkt, p, sack_base, (p.flags & F_RETX) | ce))
            }
            Reply::SeqNack => Some(self.seq_nack(k, tp, pkt, 0)),
        }
    }

    /// Turns the arrived packet `pkt` (a copy of which is `p`) into this receiver's ACK, with a
    /// selective bitmap starting at `sack_base`.
    fn ack(&mut self, k: &mut Kernel, tp: &TransportParams, pkt: PktId, p: &Packet, sack_base: u32, flags: u16) -> PktId {
        let (cum, sack, ecn_count) = (self.ack_cum(), self.sack_bits_from(sack_base), self.unacked_ce.min(u16::MAX as u32) as u16);
        let ooo = (self.pkts - self.cum).min(u16::MAX as u32) as u16;
        self.unacked = 0;
        self.unacked_bytes = 0;
        self.unacked_ce = 0;
        self.lowest_unacked = u32::MAX;
        let a = k.pool.get_mut(pkt);
        a.kind = PktKind::Ack;
        a.src = p.dst;
        a.dst = p.src;
        a.size = tp.ack_bytes;
        a.flags = flags;
        a.cum_ack = cum;
        a.sack_base = sack_base;
        a.sack_bits = sack;
        a.ecn_count = ecn_count;
        a.ooo_count = ooo;
        pkt
    }

    /// Turns the arrived packet `pkt` into a sequence NACK for the expected packet, with
    /// `flags` (`F_ECE`: it echoes congestion).
    fn seq_nack(&self, k: &mut Kernel, tp: &TransportParams, pkt: PktId, flags: u16) -> PktId {
        let a = k.pool.get_mut(pkt);
        a.kind = PktKind::SeqNack;
        std::mem::swap(&mut a.src, &mut a.dst);
        a.size = tp.ack_bytes;
        a.flags = flags;
        a.cum_ack = self.cum;
        pkt
    }

    /// A probe reached this receiver: answered at once with an ACK whose bitmap starts where
    /// the probe asks (strack spec §2.5.11–2.5.12). A probe carries no payload.
    pub fn on_probe(&mut self, k: &mut Kernel, tp: &TransportParams, pkt: PktId) -> PktId {
        let p = *k.pool.get(pkt);
        let base = p.sack_base.max(self.cum);
        let ce = if p.flags & F_CE != 0 { F_ECE } else { 0 };
        self.ack(k, tp, pkt, &p, base, F_PROBE_ACK | ce)
    }

    /// Data packet `p` arrived as `arrival`: each signal it calls for (`transport/signal/`)
    /// goes to the sender, in the signal table's order, before the packet's own answer.
    #[inline(always)]
    fn signal(&mut self, k: &mut Kernel, tp: &TransportParams, p: &Packet, port: PortId, sends: &mut Sends, arrival: SignalArrival) {
        tp.signals.on_arrival(k.now, arrival, &mut self.signal_sent_at, |kind| {
            sends.push(k.pool.alloc(Packet {
                conn: p.conn,
                src: p.dst,
                dst: p.src,
                seq: p.seq,
                size: tp.ack_bytes,
                entropy: p.entropy,
                kind,
                sent_at: p.sent_at,
                port,
                ..Packet::default()
            }));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConnId, NodeId};
    use crate::kernel::packet::PacketPool;
    use crate::kernel::queue::EventQueue;

    fn receiver() -> Receiver {
        Receiver::new(AnyReceiverRecovery::Sack(Default::default()), Time(1))
    }

    fn kernel() -> Kernel {
        Kernel::new(EventQueue::new(), PacketPool::with_capacity(8), Default::default())
    }

    fn params(ack_every: u32, cnp_interval: Option<Time>) -> TransportParams {
        TransportParams { mss: 1000, header: 64, ack_bytes: 64, ack_every, ack_coalesce_bytes: 0, ack_on_ce: false, rto: Time(1), ect: true, signals: signal::Signals { Cnp: signal::cnp::CnpSignal { interval: cnp_interval, on_gap: false } }, rtt_sample_stride: 0 }
    }

    /// A data packet `seq` of connection 0 from host 0 to host 1, with `flags`.
    fn data(k: &mut Kernel, seq: u32, flags: u16) -> (PktId, Packet) {
        let p = Packet { conn: ConnId(0), src: NodeId(0), dst: NodeId(1), seq, size: 1064, kind: PktKind::Data, flags, ..Packet::default() };
        (k.pool.alloc(p), p)
    }

    /// Runs a data arrival through both steps, as the engine does, with `n_pkts` posted.
    fn arrive(r: &mut Receiver, k: &mut Kernel, tp: &TransportParams, seq: u32, flags: u16, n_pkts: u32) -> Vec<Packet> {
        let (pkt, p) = data(k, seq, flags);
        let mut sends = Sends::default();
        let step = r.on_data(k, tp, pkt, &p, PortId(7), &mut sends);
        let mut out: Vec<PktId> = sends.iter().collect();
        if let DataStep::Answer(accepted) = step {
            out.extend(r.answer_data(k, tp, pkt, &p, n_pkts, accepted));
        }
        out.into_iter().map(|id| *k.pool.get(id)).collect()
    }

    #[test]
    fn a_trimmed_header_is_nacked_at_once_in_its_own_slot() {
        let (mut r, mut k, tp) = (receiver(), kernel(), params(1, None));
        let (pkt, p) = data(&mut k, 3, F_TRIMMED | F_RETX);
        let mut sends = Sends::default();
        assert!(matches!(r.on_data(&mut k, &tp, pkt, &p, PortId(7), &mut sends), DataStep::Done));
        let out: Vec<PktId> = sends.iter().collect();
        assert_eq!(out, vec![pkt], "the header's slot carries the NACK");
        let n = k.pool.get(pkt);
        assert_eq!((n.kind, n.src, n.dst, n.size, n.flags), (PktKind::Nack, NodeId(1), NodeId(0), 64, F_RETX));
        assert_eq!(r.pkts, 0, "a header delivers nothing");
    }

    #[test]
    fn acks_carry_the_cumulative_point_the_bitmap_and_the_duplicates_are_counted() {
        let (mut r, mut k, tp) = (receiver(), kernel(), params(1, None));
        let a = arrive(&mut r, &mut k, &tp, 1, 0, 10);
        assert_eq!((a.len(), a[0].kind, a[0].cum_ack, a[0].ooo_count), (1, PktKind::Ack, 0, 1));
        let a = arrive(&mut r, &mut k, &tp, 0, 0, 10);
        assert_eq!(a[0].cum_ack, 2);
        arrive(&mut r, &mut k, &tp, 0, 0, 10);
        assert_eq!((r.pkts, r.duplicates, r.bytes.0), (2, 1, 2000));
    }

    #[test]
    fn ce_costs_one_cnp_per_interval_sent_before_the_ack() {
        let (mut r, mut k, tp) = (receiver(), kernel(), params(1, Some(Time(50))));
        let a = arrive(&mut r, &mut k, &tp, 0, F_CE, 10);
        assert_eq!(a.iter().map(|p| p.kind).collect::<Vec<_>>(), vec![PktKind::Cnp, PktKind::Ack]);
        assert_eq!((a[0].src, a[0].dst, a[0].port), (NodeId(1), NodeId(0), PortId(7)));
        assert!(a[1].flags & F_ECE != 0, "the ACK echoes the mark");
        k.now = Time(49);
        let a = arrive(&mut r, &mut k, &tp, 1, F_CE, 10);
        assert_eq!(a.len(), 1, "within 50 ps of the last CNP: none");
        k.now = Time(50);
        assert_eq!(arrive(&mut r, &mut k, &tp, 2, F_CE, 10).len(), 2);
    }

    #[test]
    fn with_ack_every_two_the_first_packet_waits_and_the_last_is_acked_at_once() {
        let (mut r, mut k, tp) = (receiver(), kernel(), params(2, None));
        assert!(arrive(&mut r, &mut k, &tp, 0, 0, 3).is_empty(), "the slot is freed");
        assert_eq!(k.pool.live(), 0);
        assert_eq!(arrive(&mut r, &mut k, &tp, 1, 0, 3).len(), 1);
        assert_eq!(arrive(&mut r, &mut k, &tp, 2, 0, 3).len(), 1, "the flow's last packet");
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

    /// In-order arrivals with nothing held take the fast path (no window entry); it agrees with
    /// the window on duplicates, holes and the SACK bitmap.
    #[test]
    fn in_order_arrivals_skip_the_window() {
        let mut r = receiver();
        assert!(r.receive(0) && r.receive(1));
        assert_eq!((r.cum, r.window.len()), (2, 0));
        assert!(!r.receive(1), "a duplicate of a fast-path packet");
        assert!(r.receive(3));
        assert_eq!((r.cum, r.sack_bits()), (2, 0b1));
        assert!(r.receive(2));
        assert_eq!((r.cum, r.window.len()), (4, 0));
        assert!(r.receive(4) && !r.receive(3));
        assert_eq!((r.cum, r.sack_bits()), (5, 0));
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
