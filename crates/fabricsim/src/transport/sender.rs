//! The sending half of every connection (queue pair), as an element: when a connection may send
//! (window, credit, pacer), what it sends (the next new or retransmitted packet, its path and
//! flags), and what it does with what comes back — ACKs (cumulative + SACK bitmap + ECN echo),
//! NACKs of trimmed headers and headers a switch returned, RoCE's sequence NACKs, DCQCN's CNPs —
//! and with its retransmission timeout and its loss-recovery mode's timer. Congestion control,
//! path selection and loss recovery are consulted through their traits (`cc`, `lb`, `recovery`):
//! this file carries out what their hooks return, in a fixed order.
//!
//! The state is the senders' array ([`Hosts::conns`], indexed by connection id), the hosts'
//! ready rings and the credit state; the handlers are methods of [`Hosts`] that get the
//! [`Kernel`] (clock, event queue, packet pool, counters, packet log) and return what crosses
//! into another element as an outcome ([`SenderStep`], [`Wake`]): a probe to queue on the NIC,
//! a NIC port to kick, messages that may have completed (the workload's to settle). The engine
//! carries the outcome out as the handler returns; nothing here writes the network's or the
//! workload's state.

use super::cc::{window_holds_back, AckEvent, CongestionControl, LossCause, NackEvent, TimeoutEvent};
use super::connection::{SeqState, Slot};
use super::hosts::Hosts;
use crate::kernel::store::Layout;
use super::lb::{EntropyCtx, Feedback, PathSelector};
use super::recovery::{AckInfo, Actions, Episode, LossReport, Lost, SenderRecovery};
use crate::ids::{ConnId, PktId, PortId};
use crate::kernel::packet::{Packet, PktKind, F_ACK_NOW, F_DOOMED, F_ECE, F_ECT, F_HELD, F_LAST_HOP, F_MSG_FIRST, F_PROBE_ACK, F_RETX};
use crate::kernel::packet_log::{PacketEvent, NO_PORT};
use crate::kernel::queue::EventKind;
use crate::kernel::Kernel;
use crate::units::{Bytes, Time};

/// Longest a paced connection waits without re-reading its rate.
const RATE_RECHECK: Time = Time::from_us(10);

/// Width of an RTT histogram bin: 2^17 ps ≈ 131 ns.
pub const RTT_BIN_BITS: u32 = 17;
const RTT_BINS: usize = 1 << 14;

/// Histogram of ACK round-trip samples (bins of 2^17 ps, the last one open-ended).
#[derive(Debug)]
pub struct RttHistogram {
    /// Counts per bin.
    pub bins: Vec<u64>,
}

impl Default for RttHistogram {
    fn default() -> Self {
        RttHistogram { bins: vec![0; RTT_BINS] }
    }
}

impl RttHistogram {
    /// Counts one sample.
    #[inline]
    pub fn add(&mut self, rtt: Time) {
        let i = ((rtt.0 >> RTT_BIN_BITS) as usize).min(RTT_BINS - 1);
        self.bins[i] += 1;
    }

    /// Adds another histogram's counts.
    pub(crate) fn absorb(&mut self, o: &RttHistogram) {
        for (a, b) in self.bins.iter_mut().zip(&o.bins) {
            *a += b;
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.bins.iter().sum()
    }

    /// The value below which a fraction `q` of the samples lie, at bin resolution (bin centre).
    pub fn quantile(&self, q: f64) -> Option<Time> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let target = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += c;
            if seen >= target {
                return Some(Time(((i as u64) << RTT_BIN_BITS) + (1 << (RTT_BIN_BITS - 1))));
            }
        }
        None
    }
}

/// What every sender together has seen acknowledged: the run's progress (the livelock guard
/// reads when payload was last acknowledged) and its ACK round trips.
#[derive(Debug, Default)]
pub struct AckTotals {
    /// ACK round-trip samples.
    pub rtt: RttHistogram,
    /// Distinct payload bytes acknowledged.
    pub payload: u64,
    /// When payload was last acknowledged.
    pub last_at: Time,
}

/// What a connection's sender counted, in an array of its own beside the senders' records
/// ([`Hosts::stats`], indexed by connection id): written per loss or mark, read once at the end
/// (`flows.csv`), so it stays out of the record every packet reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    /// Data packets sent again.
    pub retransmits: u32,
    /// NACKs (trimmed packets) seen by the sender.
    pub nacks: u32,
    /// ACKs that echoed a CE mark.
    pub ecn_acks: u32,
    /// Retransmission timer expiries that declared packets lost (shared RTO or the mode's own).
    pub timeouts: u32,
    /// Data packets those expiries declared lost.
    pub timeout_lost: u32,
    /// Fast retransmits: recovery episodes a loss-recovery mode started from duplicate ACKs
    /// ([`Episode::FastRetransmit`]).
    pub fast_retransmits: u32,
    /// Receiver-to-sender signals received (`transport/signal/`: DCQCN's CNPs), packets or
    /// sequence NACK flags.
    pub signals: u32,
}

/// What follows a sender handler for its connection, after its probe (if any) is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// Nothing more.
    Stop,
    /// The connection may be able to send: [`Hosts::wake`] it.
    Wake,
    /// Acknowledgements moved it forward: its oldest messages may be complete (the workload
    /// settles them), then it is woken.
    Progress,
}

/// What a sender handler leaves for the engine, carried out in this order: queue `probe` on
/// the connection's NIC, then [`Then`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct SenderStep {
    /// The connection concerned.
    pub conn: ConnId,
    /// A header-only probe built for it (strack spec §2.5.9), to queue on its NIC.
    pub probe: Option<PktId>,
    /// What follows.
    pub then: Then,
}

impl SenderStep {
    fn stop(conn: ConnId) -> Self {
        SenderStep { conn, probe: None, then: Then::Stop }
    }
}

/// What an ACK told the engine besides its step: its round trip and ECN echo, for the ACK log
/// (`run.ack_log_conns`).
#[derive(Clone, Copy, Debug)]
pub struct AckSeen {
    /// Round trip of the packet it acknowledges.
    pub rtt: Time,
    /// Whether it echoed a congestion mark.
    pub ecn: bool,
}

/// Whether a connection may send now.
enum Readiness {
    Ready,
    /// Its pacer holds it back until then.
    Paced(Time),
    Blocked,
}

impl<L: Layout> Hosts<L> {
    /// Wire bytes of a full-sized data packet.
    #[inline]
    fn mtu(&self) -> u64 {
        (self.tp.mss + self.tp.header) as u64
    }

    fn readiness(&mut self, now: Time, c: ConnId) -> Readiness {
        let (header, mss, mtu) = (self.tp.header, self.tp.mss, self.mtu());
        let conn = &mut self.conns[c.idx()];
        if conn.idle() {
            conn.pace_idle = conn.pace_on_schedule;
            return Readiness::Blocked;
        }
        let Some((seq, retx)) = conn.next_to_send(now, mtu) else {
            conn.pace_idle = conn.pace_on_schedule;
            return Readiness::Blocked;
        };
        if conn.pace_idle {
            // A scheduled pacer that had nothing to send resumes now at the earliest (spec
            // lb-ai-training §2.0.2 `policy_wakeup`): no burst for the idle time.
            conn.pace_idle = false;
            conn.next_send = conn.next_send.max(now);
        }
        let wire = conn.wire_of(seq, retx, mss, header) as u64;
        if window_holds_back(conn.cc.window(), conn.in_flight, wire) {
            return Readiness::Blocked;
        }
        if self.credits.on && !self.credits.allows(c) && !self.credits.revive(c, &self.conns[c.idx()]) {
            return Readiness::Blocked;
        }
        let conn = &mut self.conns[c.idx()];
        if conn.next_send > now + RATE_RECHECK && !conn.pace_on_schedule {
            // A long gap (a slow rate): the rate may rise before the gap ends, as a NIC rate
            // limiter's would, so re-read it and wake at least every RATE_RECHECK.
            conn.cc.advance_to(now);
            conn.next_send = match conn.cc.pacing_rate() {
                Some(rate) => conn.last_tx + rate.tx_time(Bytes(conn.last_wire as u64)),
                // The controller stopped pacing (Swift leaves pacing once its window is a
                // packet again): the gap of its last slow rate no longer holds the packet.
                None => conn.last_tx,
            };
            if conn.next_send > now {
                return Readiness::Paced(conn.next_send.min(now + RATE_RECHECK));
            }
        } else if conn.next_send > now {
            return Readiness::Paced(conn.next_send);
        }
        Readiness::Ready
    }

    /// Whether connection `c` may send right now; if only its pacer holds it back, a wake-up
    /// is scheduled.
    #[inline]
    pub fn may_send(&mut self, k: &mut Kernel, c: ConnId) -> bool {
        match self.readiness(k.now, c) {
            Readiness::Ready => true,
            Readiness::Paced(t) => {
                let conn = &mut self.conns[c.idx()];
                if !conn.wake_pending {
                    conn.wake_pending = true;
                    k.q.push(t, EventKind::ConnWake, c.0);
                }
                false
            }
            Readiness::Blocked => false,
        }
    }

    /// Puts `c` in its host's ready ring if it may send; returns the NIC port that must look
    /// at it (the engine kicks it, and a spraying NIC's other ports).
    #[must_use]
    pub fn wake(&mut self, k: &mut Kernel, c: ConnId) -> Option<PortId> {
        if self.conns[c.idx()].in_ready || !self.may_send(k, c) {
            return None;
        }
        let conn = &mut self.conns[c.idx()];
        conn.in_ready = true;
        let ring = self.nics[conn.src.idx()].ring;
        let nic = &mut self.nics[ring.idx()];
        nic.ready.push_back(c);
        Some(nic.port)
    }

    /// `c`'s pacing wake-up fired: as [`Hosts::wake`].
    #[must_use]
    pub fn on_wake(&mut self, k: &mut Kernel, c: ConnId) -> Option<PortId> {
        self.conns[c.idx()].wake_pending = false;
        self.wake(k, c)
    }

    /// Builds and accounts the next data packet of `c`, if it may send one now.
    #[inline]
    pub fn emit(&mut self, k: &mut Kernel, c: ConnId) -> Option<PktId> {
        if !self.may_send(k, c) {
            return None;
        }
        let (now, mss, header, ect, coalescing) = (k.now, self.tp.mss, self.tp.header, self.tp.ect, self.tp.coalescing());
        let mtu = self.mtu();
        let conn = &mut self.conns[c.idx()];
        let (seq, retx) = conn.next_to_send(now, mtu)?;
        let mut msg_first = false;
        let mut ack_now = false;
        let wire = conn.wire_of(seq, retx, mss, header) as u64;
        let ctx = EntropyCtx {
            now,
            seq,
            retransmit: retx,
            window_pkts: conn.cc.window().map(|w| (w / (mss + header) as u64) as u32),
            in_flight: conn.in_flight,
        };
        let entropy = conn.lb.next_entropy(&ctx, &mut conn.rng);
        let slot = Slot { state: SeqState::InFlight, wire: wire as u32, sent_at: now, entropy };
        if retx {
            conn.retx.pop_front();
            *conn.slot(seq) = slot;
            self.stats[c.idx()].retransmits += 1;
            k.c.data_retransmitted += 1;
        } else {
            if conn.msgs_sent == conn.msgs.len() {
                // The mode sends past the posted data (an erasure code's extra symbol).
                conn.extend_last_msg(mss);
            }
            conn.board.push_back(slot);
            conn.next_seq += 1;
            let m = &mut conn.msgs[conn.msgs_sent];
            if m.first_tx == Time::MAX {
                m.first_tx = now;
                msg_first = true;
            }
            // MCC spec A-17: a packet the gate samples asks for its ACK at once.
            ack_now = coalescing && self.tp.rtt_sampled(seq, m);
            if conn.next_seq == m.end_pkt {
                conn.msgs_sent += 1;
            }
        }
        conn.in_flight += wire;
        let shared_rto = conn.recovery.uses_shared_rto();
        if shared_rto {
            conn.tx_log.push_back((seq, now));
        }
        conn.cc.on_send(now, wire);
        if let Some(rate) = conn.cc.pacing_rate() {
            // A scheduled pacer's gap runs from this packet's slot (which the NIC may have
            // reached late), any other pacer's from the departure.
            let slot = if conn.pace_on_schedule { conn.next_send.min(now) } else { now };
            let mut gap = rate.tx_time(Bytes(wire));
            let j = conn.cc.gap_jitter();
            if j > 0.0 {
                gap = Time((gap.0 as f64 * (1.0 + j * (2.0 * conn.rng.unit() - 1.0))).round() as u64);
            }
            conn.next_send = slot + gap;
            conn.last_tx = slot;
            conn.last_wire = wire as u32;
        }
        let mut flags = if ect { F_ECT } else { 0 } | if retx { F_RETX } else { 0 } | if msg_first { F_MSG_FIRST } else { 0 };
        if !self.drop_plan.is_empty() {
            for d in self.drop_plan.iter_mut().filter(|d| d.0 == c.0 && d.1 == seq) {
                d.3 += 1;
                if d.3 == d.2 {
                    flags |= if d.4 == Time::ZERO { F_DOOMED } else { F_HELD };
                }
            }
        }
        if coalescing {
            let full = conn.cc.window().is_some_and(|w| conn.in_flight + (mss + header) as u64 > w);
            //= uec-spec §4 (htsim UecSrc: the ACK-request flag also goes on every retransmission
            //= and on the packet that spends the last credit)
            //# Without it a receiver-paced sender that ran out of credit leaves up to a threshold
            //# of bytes un-ACKed, nothing comes back to release them, and the RTO has to.
            //= type=deviation reason=only with byte coalescing (htsim's ACK policy), so that
            //= runs with `ack_every` keep their results
            let by_bytes = self.tp.ack_coalesce_bytes > 0;
            let last_credit = by_bytes && self.credits.on && {
                let s = &self.credits.state[c.idx()];
                s.unsolicited_left + s.credits <= 1
            };
            if ack_now || full || (by_bytes && retx) || last_credit || conn.next_to_send(now, mtu).is_none() {
                flags |= F_ACK_NOW;
            }
        }
        let (src, dst) = (conn.src, conn.dst);
        if shared_rto && !conn.timer_pending {
            conn.timer_pending = true;
            k.q.push(now + self.tp.rto, EventKind::ConnTimer, c.0);
        }
        let (recovery, mut ctx) = self.conns[c.idx()].sender_parts(now, mtu);
        let a = recovery.on_send(&mut ctx, seq);
        // (No mode asks for a probe on a send: the probe is its timer's.)
        debug_assert!(!a.probe, "a probe asked for on a send");
        let _ = self.apply_recovery(k, c, a);
        if self.credits.on {
            self.credits.spend(c);
        }
        let event = if retx { PacketEvent::Resent } else { PacketEvent::Sent };
        k.log.packet(now, c.0, seq, event, NO_PORT);
        let port = self.nics[src.idx()].port;
        Some(k.pool.alloc(Packet {
            conn: c,
            src,
            dst,
            seq,
            size: wire as u32,
            entropy,
            kind: PktKind::Data,
            flags,
            sent_at: now,
            port,
            ..Packet::default()
        }))
    }

    /// Marks `seq` acknowledged; returns the newly acknowledged wire bytes.
    #[inline]
    fn ack_one(&mut self, now: Time, c: ConnId, seq: u32) -> u64 {
        let header = self.tp.header;
        let conn = &mut self.conns[c.idx()];
        if seq < conn.snd_una || seq >= conn.next_seq {
            return 0;
        }
        let slot = conn.slot(seq);
        let wire = slot.wire as u64;
        let payload = wire - header as u64;
        match slot.state {
            SeqState::Acked => return 0,
            SeqState::InFlight => {
                slot.state = SeqState::Acked;
                conn.in_flight -= wire;
            }
            SeqState::Lost => slot.state = SeqState::Acked,
        }
        conn.acked_pkts += 1;
        conn.acked_payload += payload;
        self.acked.payload += payload;
        self.acked.last_at = now;
        wire
    }

    /// Marks every packet from `snd_una` up to `cum` acknowledged; returns the newly
    /// acknowledged wire bytes.
    #[inline]
    fn ack_below(&mut self, now: Time, c: ConnId, cum: u32) -> u64 {
        let mut newly = 0;
        for seq in self.conns[c.idx()].snd_una..cum {
            newly += self.ack_one(now, c, seq);
        }
        newly
    }

    /// An ACK reached its sender. `None`: the connection had nothing outstanding.
    #[inline]
    pub fn on_ack(&mut self, k: &mut Kernel, pkt: PktId) -> Option<(SenderStep, AckSeen)> {
        let p = *k.pool.get(pkt);
        // The INT records the ACK echoes (HPCC), when packets carry them.
        let int = k.pool.telemetry(pkt).copied();
        k.pool.free(pkt);
        let c = p.conn;
        if self.conns[c.idx()].idle() {
            return None;
        }
        let (now, mtu) = (k.now, self.mtu());
        let una = self.conns[c.idx()].snd_una;
        let mut newly = self.ack_below(now, c, p.cum_ack);
        let mut bits = p.sack_bits;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            newly += self.ack_one(now, c, p.sack_base + i);
        }
        let probe_ack = p.flags & F_PROBE_ACK != 0;
        if !probe_ack {
            newly += self.ack_one(now, c, p.seq);
            k.log.packet(now, c.0, p.seq, PacketEvent::AckArrived, NO_PORT);
        }
        let rtt = now - p.sent_at;
        self.acked.rtt.add(rtt);
        let conn = &mut self.conns[c.idx()];
        conn.advance_una();
        // Forget timer entries of packets no longer in flight, so the log stays window-sized.
        while let Some(&(s, t)) = conn.tx_log.front() {
            if conn.tx_entry_live(s, t) {
                break;
            }
            conn.tx_log.pop_front();
        }
        let ecn = p.flags & F_ECE != 0;
        if ecn {
            self.stats[c.idx()].ecn_acks += 1;
        }
        conn.consecutive_timeouts = 0;
        let ev = AckEvent {
            now,
            acked_bytes: Bytes(newly),
            rtt,
            ecn,
            marked_pkts: p.ecn_count as u32,
            in_flight: conn.in_flight,
            entropy: p.entropy,
            retransmitted: p.flags & F_RETX != 0,
        };
        conn.cc.on_ack(&ev);
        if let Some(int) = &int {
            conn.cc.on_telemetry(now, int);
        }
        conn.lb.on_feedback(p.entropy, Feedback::Ack { ecn }, now);
        // The cheap test first: only a gate that reads RTT samples needs the message lookup.
        let tp = &self.tp;
        let wants_rtt = !probe_ack && tp.rtt_sample_stride > 0;
        if let Some(i) = wants_rtt.then(|| conn.msg_of(p.seq)).flatten().filter(|&i| tp.rtt_sampled(p.seq, &conn.msgs[i])) {
            let m = &mut conn.msgs[i];
            m.rtt_max = m.rtt_max.max(rtt);
            m.rtt_sum += rtt;
            m.rtt_samples += 1;
        }
        let ack = AckInfo {
            prev_una: una,
            newly_acked: newly,
            cum_ack: p.cum_ack,
            sack_base: p.sack_base,
            sack_bits: p.sack_bits,
            seq: p.seq,
            ooo_count: p.ooo_count,
            probe: probe_ack,
            retransmitted: p.flags & F_RETX != 0,
            rtt,
        };
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let a = recovery.on_ack(&mut ctx, &ack);
        let probe = self.apply_recovery(k, c, a);
        Some((SenderStep { conn: c, probe, then: Then::Progress }, AckSeen { rtt, ecn }))
    }

    /// Whether acknowledgements completed `c`'s oldest message (the workload settles it).
    #[inline]
    pub fn oldest_message_done(&self, c: ConnId) -> bool {
        let conn = &self.conns[c.idx()];
        conn.msgs.front().is_some_and(|m| m.end_pkt <= conn.snd_una.min(conn.settled_end))
    }

    /// After its messages were settled: an idle connection notes its finish time.
    #[inline]
    pub fn note_finish(&mut self, now: Time, c: ConnId) {
        let conn = &mut self.conns[c.idx()];
        if conn.idle() {
            conn.finish = Some(now);
        }
    }

    /// A NACK (trimmed packet) reached its sender: queue the packet for retransmission.
    pub fn on_nack(&mut self, k: &mut Kernel, pkt: PktId) -> SenderStep {
        self.on_loss_report(k, pkt, false)
    }

    /// A trimmed header a switch returned (return-to-sender, lb-ai-training spec LR-TRIM-RTS)
    /// reached its sender: as a NACK, through [`SenderRecovery::on_bounce`].
    pub fn on_bounce(&mut self, k: &mut Kernel, pkt: PktId) -> SenderStep {
        self.on_loss_report(k, pkt, true)
    }

    /// A NACK or a bounced header about one transmission: the mode requeues the packet (or
    /// finds the report stale), then the congestion controller and path selector hear of it.
    fn on_loss_report(&mut self, k: &mut Kernel, pkt: PktId, bounced: bool) -> SenderStep {
        let p = *k.pool.get(pkt);
        k.pool.free(pkt);
        let (now, mtu) = (k.now, self.mtu());
        let c = p.conn;
        k.log.packet(now, c.0, p.seq, PacketEvent::NackArrived, NO_PORT);
        let conn = &mut self.conns[c.idx()];
        if conn.idle() || p.seq < conn.snd_una || p.seq >= conn.next_seq {
            return SenderStep::stop(c);
        }
        // The mode requeues the packet, or finds the NACK stale (an older transmission).
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let report = LossReport { seq: p.seq, sent_at: p.sent_at };
        let requeued = if bounced { recovery.on_bounce(&mut ctx, &report) } else { recovery.on_nack(&mut ctx, &report) };
        let Some(wire) = requeued else { return SenderStep::stop(c) };
        let a = recovery.after_loss_report(&mut ctx);
        self.stats[c.idx()].nacks += 1;
        let ev = NackEvent {
            now,
            bytes: Bytes(wire),
            cause: LossCause::Trimmed,
            entropy: p.entropy,
            in_flight: conn.in_flight,
            sent_at: p.sent_at,
            last_hop_paced: self.credits.on && p.flags & F_LAST_HOP != 0,
        };
        conn.cc.on_nack(&ev);
        conn.lb.on_feedback(p.entropy, Feedback::Nack, now);
        if self.credits.on {
            self.credits.on_feedback(k, c, &self.conns[c.idx()]);
        }
        let probe = self.apply_recovery(k, c, a);
        SenderStep { conn: c, probe, then: Then::Wake }
    }

    /// The retransmission timer of `c`: declare lost every packet outstanding for one RTO.
    pub fn on_timer(&mut self, k: &mut Kernel, c: ConnId) -> SenderStep {
        let (now, rto, mtu) = (k.now, self.tp.rto, self.mtu());
        let conn = &mut self.conns[c.idx()];
        conn.timer_pending = false;
        if conn.idle() {
            return SenderStep::stop(c);
        }
        let mut lost = 0u64;
        let mut lost_pkts = 0u32;
        let mut latest_sent_at = Time::ZERO;
        while let Some(&(seq, t)) = conn.tx_log.front() {
            let live = conn.tx_entry_live(seq, t);
            if live && t + rto > now {
                break;
            }
            conn.tx_log.pop_front();
            if !live {
                continue;
            }
            k.log.packet(now, c.0, seq, PacketEvent::TimedOut, NO_PORT);
            let slot = conn.slot(seq);
            let wire = slot.wire as u64;
            slot.state = SeqState::Lost;
            let entropy = slot.entropy;
            conn.in_flight -= wire;
            conn.retx.push_back(seq);
            conn.lb.on_feedback(entropy, Feedback::Timeout, now);
            lost += wire;
            lost_pkts += 1;
            latest_sent_at = latest_sent_at.max(t);
        }
        let mut probe = None;
        if lost > 0 {
            let (recovery, mut ctx) = self.conns[c.idx()].sender_parts(now, mtu);
            let a = recovery.on_timeout(&mut ctx);
            probe = self.apply_recovery(k, c, a);
            self.account_timeout(k, c, Lost { pkts: lost_pkts, bytes: Bytes(lost), latest_sent_at });
        }
        let conn = &mut self.conns[c.idx()];
        if let Some(&(_, t)) = conn.tx_log.front() {
            conn.timer_pending = true;
            k.q.push(t + rto, EventKind::ConnTimer, c.0);
        }
        SenderStep { conn: c, probe, then: Then::Wake }
    }

    /// Counts a retransmission timeout of `c` that declared `lost` lost (shared RTO or a mode's
    /// own) and tells the credit scheme and the congestion controller.
    fn account_timeout(&mut self, k: &mut Kernel, c: ConnId, lost: Lost) {
        if self.credits.on {
            self.credits.on_timeout(c, lost.pkts);
        }
        let conn = &mut self.conns[c.idx()];
        let stats = &mut self.stats[c.idx()];
        stats.timeouts += 1;
        stats.timeout_lost += lost.pkts;
        conn.consecutive_timeouts += 1;
        k.c.timeouts += 1;
        k.c.timeout_lost += u64::from(lost.pkts);
        let ev = TimeoutEvent {
            now: k.now,
            lost_bytes: lost.bytes,
            in_flight: conn.in_flight,
            consecutive: conn.consecutive_timeouts,
            latest_sent_at: lost.latest_sent_at,
        };
        conn.cc.on_timeout(&ev);
    }

    /// A sequence NACK ("I expect `cum_ack`") reached its sender.
    pub fn on_seq_nack(&mut self, k: &mut Kernel, pkt: PktId) -> SenderStep {
        let p = *k.pool.get(pkt);
        k.pool.free(pkt);
        let c = p.conn;
        if self.conns[c.idx()].idle() {
            return SenderStep::stop(c);
        }
        let (e, now, mtu) = (p.cum_ack, k.now, self.mtu());
        // Everything below the expected PSN has arrived: the NACK is also a cumulative ACK.
        self.ack_below(now, c, e);
        let conn = &mut self.conns[c.idx()];
        conn.advance_una();
        // A NACK that ACKs overtook: ns-3's RecoverQueue still goes back, to snd_una (without
        // it a flow whose last packet was NACKed that way waited for the RTO).
        let e = if e < conn.snd_una && conn.recovery.stale_nack_goes_back() { conn.snd_una } else { e };
        let mut probe = None;
        if e >= conn.snd_una && e < conn.next_seq {
            self.stats[c.idx()].nacks += 1;
            let (recovery, mut ctx) = conn.sender_parts(now, mtu);
            let a = recovery.on_seq_nack(&mut ctx, e, p.sent_at);
            probe = self.apply_recovery(k, c, a);
        }
        if p.flags & F_ECE != 0 {
            // The NACK's CNP flag (under the mellanox RP: a CE-marked packet's, or every NACK's
            // with `ooo_triggers_cnp`; the receiver's `send_seq_nack`): ns-3's
            // RdmaHw::ReceiveAck goes back first, then takes the CNP.
            self.tp.signals.on_gap_nack_flag(now, &mut self.conns[c.idx()]);
            self.stats[c.idx()].signals += 1;
        }
        SenderStep { conn: c, probe, then: Then::Progress }
    }

    /// A signal's packet (`transport/signal/`, e.g. a CNP) reached its sender, which reacts
    /// as the signal says (a CNP: the congestion controller cuts its rate). A rate cut may push
    /// the next transmission later; a paced sender re-reads its rate when it is next woken, so
    /// nothing else follows.
    pub fn on_signal(&mut self, k: &mut Kernel, pkt: PktId) {
        let p = k.pool.get(pkt);
        let (c, kind) = (p.conn, p.kind);
        k.pool.free(pkt);
        let known = self.tp.signals.on_receipt(kind, k.now, &mut self.conns[c.idx()]);
        debug_assert!(known, "a {kind:?} packet handled as a signal");
        self.stats[c.idx()].signals += 1;
    }

    /// The loss-recovery mode's own timer of `c` fired.
    pub fn on_recovery_timer(&mut self, k: &mut Kernel, c: ConnId) -> SenderStep {
        let (now, mtu) = (k.now, self.mtu());
        let conn = &mut self.conns[c.idx()];
        let queued = conn.retx.len();
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let a = recovery.on_timer(&mut ctx);
        let probe = self.apply_recovery(k, c, a);
        // Packets the timer declared lost may go now.
        let then = if self.conns[c.idx()].retx.len() != queued { Then::Wake } else { Then::Stop };
        SenderStep { conn: c, probe, then }
    }

    /// Carries out what a loss-recovery hook asked for, in a fixed order: schedule its timer,
    /// build a probe (returned, for the NIC), count the episode, settle a delivered message.
    #[inline(always)]
    fn apply_recovery(&mut self, k: &mut Kernel, c: ConnId, a: Actions) -> Option<PktId> {
        if a == Actions::NONE {
            return None;
        }
        if let Some(t) = a.timer {
            k.q.push(t, EventKind::RecoveryTimer, c.0);
        }
        let probe = a.probe.then(|| self.probe(k, c));
        match a.episode {
            Some(Episode::OutOfOrder) => k.c.ooo_recoveries += 1,
            Some(Episode::Probe) => k.c.probe_recoveries += 1,
            Some(Episode::FastRetransmit) => {
                k.c.fast_retransmits += 1;
                self.stats[c.idx()].fast_retransmits += 1;
            }
            Some(Episode::Timeout(lost)) => self.account_timeout(k, c, lost),
            None => {}
        }
        if let Some(seq) = a.settle {
            self.settle(k.now, c, seq);
        }
        probe
    }

    /// The receiver holds the whole message containing packet `seq` and every earlier one:
    /// acknowledge all their packets, lost ones included ([`Actions::settle`]). The messages
    /// complete when the engine follows the step ([`Then::Progress`]).
    fn settle(&mut self, now: Time, c: ConnId, seq: u32) {
        let conn = &self.conns[c.idx()];
        // (The ACK's handler already acknowledged the packets below its cumulative point,
        // `seq` among them: the message holding it may still be open with packets above.)
        let Some(i) = conn.msg_of(seq).filter(|&i| conn.msgs[i].first_pkt <= seq) else { return };
        let end = conn.msgs[i].end_pkt;
        self.ack_below(now, c, end);
        let conn = &mut self.conns[c.idx()];
        conn.advance_una();
        conn.settled_end = conn.settled_end.max(end);
    }

    /// Builds a header-only probe for `c` (strack spec §2.5.9): its answer is an ACK whose
    /// bitmap starts at `snd_una`.
    fn probe(&mut self, k: &mut Kernel, c: ConnId) -> PktId {
        let (now, mtu) = (k.now, self.mtu());
        let conn = &mut self.conns[c.idx()];
        let ctx = EntropyCtx { now, seq: conn.snd_una, retransmit: false, window_pkts: conn.cc.window().map(|w| (w / mtu) as u32), in_flight: conn.in_flight };
        let entropy = conn.lb.next_entropy(&ctx, &mut conn.rng);
        let (src, dst) = (conn.src, conn.dst);
        k.pool.alloc(Packet {
            conn: c,
            src,
            dst,
            seq: u32::MAX,
            size: self.tp.header,
            entropy,
            kind: PktKind::Probe,
            flags: if self.tp.ect { F_ECT } else { 0 },
            sent_at: now,
            port: self.nics[src.idx()].port,
            sack_base: conn.snd_una,
            ..Packet::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_at_bin_resolution() {
        let mut h = RttHistogram::default();
        for us in 1..=100u64 {
            h.add(Time(us * 1_000_000));
        }
        let bin = 1u64 << RTT_BIN_BITS;
        let p50 = h.quantile(0.5).unwrap();
        assert!(p50.abs_diff(Time(50_000_000)) <= Time(bin), "{p50}");
        let p99 = h.quantile(0.99).unwrap();
        assert!(p99.abs_diff(Time(99_000_000)) <= Time(bin), "{p99}");
        assert_eq!(h.count(), 100);
        assert!(RttHistogram::default().quantile(0.5).is_none());
    }
}
