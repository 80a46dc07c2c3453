//! Sender side of a connection: when it may send, what it sends, and what it does with ACKs,
//! NACKs and timeouts. Congestion control and path selection are consulted through their traits.

use crate::transport::cc::{AckEvent, CongestionControl, LossCause, NackEvent, TimeoutEvent};
use crate::transport::connection::{SeqState, Slot};
use crate::transport::lb::{EntropyCtx, Feedback, PathSelector};
use crate::engine::queue::EventKind;
use crate::engine::trace::{PacketEvent, NO_PORT};
use crate::engine::Sim;
use crate::ids::{ConnId, PktId};
use crate::net::packet::{Packet, PktKind, F_ACK_NOW, F_DOOMED, F_HELD, F_MSG_FIRST, F_ECE, F_ECT, F_LAST_HOP, F_PROBE_ACK, F_RETX};
use crate::transport::recovery::{AckInfo, Actions, Episode, Lost, LossReport, SenderRecovery};
use crate::units::Time;

/// Longest a paced connection waits without re-reading its rate.
const RATE_RECHECK: Time = 10 * crate::units::US;

enum Readiness {
    Ready,
    Paced(Time),
    Blocked,
}

impl Sim {
    /// Wire bytes of a full-sized data packet.
    #[inline]
    fn mtu(&self) -> u64 {
        (self.hosts.tp.mss + self.hosts.tp.header) as u64
    }

    fn readiness(&mut self, c: ConnId) -> Readiness {
        let (header, mss, now, mtu) = (self.hosts.tp.header, self.hosts.tp.mss, self.k.now, self.mtu());
        let conn = &mut self.hosts.conns[c as usize];
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
        if crate::transport::cc::window_holds_back(conn.cc.window(), conn.in_flight, wire) {
            return Readiness::Blocked;
        }
        if self.hosts.credits.on && !self.hosts.credits.allows(c) && !self.hosts.credits.revive(c, &self.hosts.conns[c as usize]) {
            return Readiness::Blocked;
        }
        let conn = &mut self.hosts.conns[c as usize];
        if conn.next_send > now + RATE_RECHECK && !conn.pace_on_schedule {
            // A long gap (a slow rate): the rate may rise before the gap ends, as a NIC rate
            // limiter's would, so re-read it and wake at least every RATE_RECHECK.
            conn.cc.advance_to(now);
            conn.next_send = match conn.cc.pacing_rate() {
                Some(rate) => conn.last_tx + rate.tx_time(conn.last_wire as u64),
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
    pub(crate) fn conn_may_send(&mut self, c: ConnId) -> bool {
        match self.readiness(c) {
            Readiness::Ready => true,
            Readiness::Paced(t) => {
                let conn = &mut self.hosts.conns[c as usize];
                if !conn.wake_pending {
                    conn.wake_pending = true;
                    self.k.q.push(t, EventKind::ConnWake, c);
                }
                false
            }
            Readiness::Blocked => false,
        }
    }

    /// Puts `c` in its host's ready ring if it may send, and makes sure the NIC looks at it.
    pub(crate) fn conn_wake(&mut self, c: ConnId) {
        if self.hosts.conns[c as usize].in_ready || !self.conn_may_send(c) {
            return;
        }
        let conn = &mut self.hosts.conns[c as usize];
        conn.in_ready = true;
        let host = conn.src as usize;
        self.hosts.nics[host].ready.push_back(c);
        let port = self.hosts.nics[host].port;
        self.port_kick(port);
    }

    pub(crate) fn on_conn_wake(&mut self, c: ConnId) {
        self.hosts.conns[c as usize].wake_pending = false;
        self.conn_wake(c);
    }

    /// Builds and accounts the next data packet of `c`, if it may send one now.
    pub(crate) fn conn_emit(&mut self, c: ConnId) -> Option<PktId> {
        if !self.conn_may_send(c) {
            return None;
        }
        let (now, mss, header, ect, coalescing) = (self.k.now, self.hosts.tp.mss, self.hosts.tp.header, self.hosts.tp.ect, self.hosts.tp.coalescing());
        let mtu = self.mtu();
        let conn = &mut self.hosts.conns[c as usize];
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
            conn.retransmits += 1;
            self.k.c.data_retransmitted += 1;
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
            ack_now = coalescing && self.hosts.tp.rtt_sampled(seq, m);
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
            let mut gap = rate.tx_time(wire);
            let j = conn.cc.gap_jitter();
            if j > 0.0 {
                gap = (gap as f64 * (1.0 + j * (2.0 * conn.rng.unit() - 1.0))).round() as Time;
            }
            conn.next_send = slot + gap;
            conn.last_tx = slot;
            conn.last_wire = wire as u32;
        }
        let mut flags = if ect { F_ECT } else { 0 } | if retx { F_RETX } else { 0 } | if msg_first { F_MSG_FIRST } else { 0 };
        if !self.hosts.drop_plan.is_empty() {
            for d in self.hosts.drop_plan.iter_mut().filter(|d| d.0 == c && d.1 == seq) {
                d.3 += 1;
                if d.3 == d.2 {
                    flags |= if d.4 == 0 { F_DOOMED } else { F_HELD };
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
            let by_bytes = self.hosts.tp.ack_coalesce_bytes > 0;
            let last_credit = by_bytes && self.hosts.credits.on && {
                let s = &self.hosts.credits.state[c as usize];
                s.unsolicited_left + s.credits <= 1
            };
            if ack_now || full || (by_bytes && retx) || last_credit || conn.next_to_send(now, mtu).is_none() {
                flags |= F_ACK_NOW;
            }
        }
        let (src, dst) = (conn.src, conn.dst);
        if shared_rto && !conn.timer_pending {
            conn.timer_pending = true;
            self.k.q.push(now + self.hosts.tp.rto, EventKind::ConnTimer, c);
        }
        let (recovery, mut ctx) = self.hosts.conns[c as usize].sender_parts(now, mtu);
        let a = recovery.on_send(&mut ctx, seq);
        self.apply_recovery(c, a);
        if self.hosts.credits.on {
            self.hosts.credits.spend(c);
        }
        let event = if retx { PacketEvent::Resent } else { PacketEvent::Sent };
        self.k.log.packet(now, c, seq, event, NO_PORT);
        let port = self.hosts.nics[src as usize].port;
        Some(self.k.pool.alloc(Packet {
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
    pub(crate) fn ack_one(&mut self, c: ConnId, seq: u32) -> u64 {
        let header = self.hosts.tp.header;
        let conn = &mut self.hosts.conns[c as usize];
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
        self.acked_bytes_total += payload;
        self.last_acked_at = self.k.now;
        wire
    }

    /// Marks every packet from `snd_una` up to `cum` acknowledged; returns the newly
    /// acknowledged wire bytes.
    #[inline]
    fn ack_below(&mut self, c: ConnId, cum: u32) -> u64 {
        let mut newly = 0;
        for seq in self.hosts.conns[c as usize].snd_una..cum {
            newly += self.ack_one(c, seq);
        }
        newly
    }

    /// An ACK reached its sender.
    pub(crate) fn on_ack(&mut self, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        // The INT records the ACK echoes (HPCC), when packets carry them.
        let int = self.k.pool.telemetry(pkt).copied();
        self.k.pool.free(pkt);
        let c = p.conn;
        if self.hosts.conns[c as usize].idle() {
            return;
        }
        let una = self.hosts.conns[c as usize].snd_una;
        let mut newly = self.ack_below(c, p.cum_ack);
        let mut bits = p.sack_bits;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            newly += self.ack_one(c, p.sack_base + i);
        }
        let probe_ack = p.flags & F_PROBE_ACK != 0;
        if !probe_ack {
            newly += self.ack_one(c, p.seq);
        }
        let (now, mtu) = (self.k.now, self.mtu());
        if !probe_ack {
            self.k.log.packet(now, c, p.seq, PacketEvent::AckArrived, NO_PORT);
        }
        self.rtt_hist.add(now - p.sent_at);
        let conn = &mut self.hosts.conns[c as usize];
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
            conn.ecn_acks += 1;
        }
        if !self.tracer.ack_conns.is_empty() && self.tracer.ack_conns.binary_search(&c).is_ok() {
            self.tracer.acks.push((now, c, now - p.sent_at, ecn));
        }
        conn.consecutive_timeouts = 0;
        let ev = AckEvent {
            now,
            acked_bytes: newly,
            rtt: now - p.sent_at,
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
        let tp = &self.hosts.tp;
        let wants_rtt = !probe_ack && tp.rtt_sample_stride > 0;
        if let Some(i) = wants_rtt.then(|| conn.msg_of(p.seq)).flatten().filter(|&i| tp.rtt_sampled(p.seq, &conn.msgs[i])) {
            let m = &mut conn.msgs[i];
            let rtt = now - p.sent_at;
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
            rtt: now - p.sent_at,
        };
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let a = recovery.on_ack(&mut ctx, &ack);
        self.apply_recovery(c, a);
        self.after_ack_progress(c);
    }

    /// After acknowledgements moved `snd_una`: completes messages, notes an idle connection's
    /// finish time and lets the connection send again.
    pub(crate) fn after_ack_progress(&mut self, c: ConnId) {
        let conn = &mut self.hosts.conns[c as usize];
        if conn.msgs.front().is_some_and(|m| m.end_pkt <= conn.snd_una.min(conn.settled_end)) {
            self.complete_messages(c);
        }
        let conn = &mut self.hosts.conns[c as usize];
        if conn.idle() {
            conn.finish = Some(self.k.now);
        }
        self.conn_wake(c);
    }

    /// A NACK (trimmed packet) reached its sender: queue the packet for retransmission.
    pub(crate) fn on_nack(&mut self, pkt: PktId) {
        self.on_loss_report(pkt, false)
    }

    /// A trimmed header a switch returned (return-to-sender, lb-ai-training spec LR-TRIM-RTS)
    /// reached its sender: as a NACK, through [`SenderRecovery::on_bounce`].
    pub(crate) fn on_bounce(&mut self, pkt: PktId) {
        self.on_loss_report(pkt, true)
    }

    /// A NACK or a bounced header about one transmission: the mode requeues the packet (or
    /// finds the report stale), then the congestion controller and path selector hear of it.
    fn on_loss_report(&mut self, pkt: PktId, bounced: bool) {
        let p = *self.k.pool.get(pkt);
        self.k.pool.free(pkt);
        let (now, mtu) = (self.k.now, self.mtu());
        let c = p.conn;
        self.k.log.packet(now, c, p.seq, PacketEvent::NackArrived, NO_PORT);
        let conn = &mut self.hosts.conns[c as usize];
        if conn.idle() || p.seq < conn.snd_una || p.seq >= conn.next_seq {
            return;
        }
        // The mode requeues the packet, or finds the NACK stale (an older transmission).
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let report = LossReport { seq: p.seq, sent_at: p.sent_at };
        let requeued = if bounced { recovery.on_bounce(&mut ctx, &report) } else { recovery.on_nack(&mut ctx, &report) };
        let Some(wire) = requeued else { return };
        let a = recovery.after_loss_report(&mut ctx);
        conn.nacks += 1;
        let ev = NackEvent {
            now,
            bytes: wire,
            cause: LossCause::Trimmed,
            entropy: p.entropy,
            in_flight: conn.in_flight,
            sent_at: p.sent_at,
            last_hop_paced: self.hosts.credits.on && p.flags & F_LAST_HOP != 0,
        };
        conn.cc.on_nack(&ev);
        conn.lb.on_feedback(p.entropy, Feedback::Nack, now);
        if self.hosts.credits.on {
            let h = &mut self.hosts;
            h.credits.on_feedback(&mut self.k, c, &h.conns[c as usize]);
        }
        self.apply_recovery(c, a);
        self.conn_wake(c);
    }

    /// The retransmission timer of `c`: declare lost every packet outstanding for one RTO.
    pub(crate) fn on_conn_timer(&mut self, c: ConnId) {
        let (now, rto, mtu) = (self.k.now, self.hosts.tp.rto, self.mtu());
        let conn = &mut self.hosts.conns[c as usize];
        conn.timer_pending = false;
        if conn.idle() {
            return;
        }
        let mut lost = 0u64;
        let mut lost_pkts = 0u32;
        let mut latest_sent_at = 0;
        while let Some(&(seq, t)) = conn.tx_log.front() {
            let live = conn.tx_entry_live(seq, t);
            if live && t + rto > now {
                break;
            }
            conn.tx_log.pop_front();
            if !live {
                continue;
            }
            self.k.log.packet(now, c, seq, PacketEvent::TimedOut, NO_PORT);
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
        if lost > 0 {
            let (recovery, mut ctx) = self.hosts.conns[c as usize].sender_parts(now, mtu);
            let a = recovery.on_timeout(&mut ctx);
            self.apply_recovery(c, a);
        }
        if lost > 0 {
            self.account_timeout(c, Lost { pkts: lost_pkts, bytes: lost, latest_sent_at });
        }
        let conn = &mut self.hosts.conns[c as usize];
        if let Some(&(_, t)) = conn.tx_log.front() {
            conn.timer_pending = true;
            self.k.q.push(t + rto, EventKind::ConnTimer, c);
        }
        self.conn_wake(c);
    }

    /// Counts a retransmission timeout of `c` that declared `lost` lost (shared RTO or a mode's
    /// own) and tells the credit scheme and the congestion controller.
    fn account_timeout(&mut self, c: ConnId, lost: Lost) {
        if self.hosts.credits.on {
            self.hosts.credits.on_timeout(c, lost.pkts);
        }
        let conn = &mut self.hosts.conns[c as usize];
        conn.timeouts += 1;
        conn.timeout_lost += lost.pkts;
        conn.consecutive_timeouts += 1;
        self.k.c.timeouts += 1;
        self.k.c.timeout_lost += u64::from(lost.pkts);
        let ev = TimeoutEvent {
            now: self.k.now,
            lost_bytes: lost.bytes,
            in_flight: conn.in_flight,
            consecutive: conn.consecutive_timeouts,
            latest_sent_at: lost.latest_sent_at,
        };
        conn.cc.on_timeout(&ev);
    }

    /// A sequence NACK ("I expect `cum_ack`") reached its sender.
    pub(crate) fn on_seq_nack(&mut self, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        self.k.pool.free(pkt);
        let c = p.conn;
        if self.hosts.conns[c as usize].idle() {
            return;
        }
        // Everything below the expected PSN has arrived: the NACK is also a cumulative ACK.
        self.ack_below(c, p.cum_ack);
        self.hosts.conns[c as usize].advance_una();
        let (e, now, mtu) = (p.cum_ack, self.k.now, self.mtu());
        let conn = &mut self.hosts.conns[c as usize];
        // A NACK that ACKs overtook: ns-3's RecoverQueue still goes back, to snd_una (without
        // it a flow whose last packet was NACKed that way waited for the RTO).
        let e = if e < conn.snd_una && conn.recovery.stale_nack_goes_back() { conn.snd_una } else { e };
        if e >= conn.snd_una && e < conn.next_seq {
            conn.nacks += 1;
            let (recovery, mut ctx) = conn.sender_parts(now, mtu);
            let a = recovery.on_seq_nack(&mut ctx, e, p.sent_at);
            self.apply_recovery(c, a);
        }
        if p.flags & F_ECE != 0 {
            // The NACK's CNP flag (under the mellanox RP: a CE-marked packet's, or every NACK's
            // with `ooo_triggers_cnp`; the receiver's `send_seq_nack`): ns-3's
            // RdmaHw::ReceiveAck goes back first, then takes the CNP.
            self.hosts.conns[c as usize].cc.on_cnp(now);
            self.hosts.conns[c as usize].cnps += 1;
        }
        self.after_ack_progress(c);
    }

    /// The loss-recovery mode's own timer of `c` fired.
    pub(crate) fn on_recovery_timer(&mut self, c: ConnId) {
        let (now, mtu) = (self.k.now, self.mtu());
        let conn = &mut self.hosts.conns[c as usize];
        let queued = conn.retx.len();
        let (recovery, mut ctx) = conn.sender_parts(now, mtu);
        let a = recovery.on_timer(&mut ctx);
        self.apply_recovery(c, a);
        if self.hosts.conns[c as usize].retx.len() != queued {
            // The timer declared packets lost: they may go now.
            self.conn_wake(c);
        }
    }

    /// Carries out what a loss-recovery hook asked for, in a fixed order: schedule its timer,
    /// send a probe, count the episode, settle a delivered message.
    #[inline(always)]
    fn apply_recovery(&mut self, c: ConnId, a: Actions) {
        if a == Actions::NONE {
            return;
        }
        if let Some(t) = a.timer {
            self.k.q.push(t, EventKind::RecoveryTimer, c);
        }
        if a.probe {
            self.send_probe(c);
        }
        match a.episode {
            Some(Episode::OutOfOrder) => self.k.c.ooo_recoveries += 1,
            Some(Episode::Probe) => self.k.c.probe_recoveries += 1,
            Some(Episode::FastRetransmit) => {
                self.k.c.fast_retransmits += 1;
                self.hosts.conns[c as usize].fast_retransmits += 1;
            }
            Some(Episode::Timeout(lost)) => self.account_timeout(c, lost),
            None => {}
        }
        if let Some(seq) = a.settle {
            self.settle(c, seq);
        }
    }

    /// The receiver holds the whole message containing packet `seq` and every earlier one:
    /// acknowledge all their packets, lost ones included ([`Actions::settle`]). Message
    /// completion follows in `after_ack_progress`.
    fn settle(&mut self, c: ConnId, seq: u32) {
        let conn = &self.hosts.conns[c as usize];
        // (The glue already acknowledged the packets below the ACK's cumulative point, `seq`
        // among them: the message holding it may still be open with packets above.)
        let Some(i) = conn.msg_of(seq).filter(|&i| conn.msgs[i].first_pkt <= seq) else { return };
        let end = conn.msgs[i].end_pkt;
        self.ack_below(c, end);
        let conn = &mut self.hosts.conns[c as usize];
        conn.advance_una();
        conn.settled_end = conn.settled_end.max(end);
    }

    /// Sends a header-only probe for `c` (strack spec §2.5.9): its answer is an ACK whose bitmap
    /// starts at `snd_una`.
    fn send_probe(&mut self, c: ConnId) {
        let (now, mtu) = (self.k.now, self.mtu());
        let conn = &mut self.hosts.conns[c as usize];
        let ctx = EntropyCtx { now, seq: conn.snd_una, retransmit: false, window_pkts: conn.cc.window().map(|w| (w / mtu) as u32), in_flight: conn.in_flight };
        let entropy = conn.lb.next_entropy(&ctx, &mut conn.rng);
        let (src, dst) = (conn.src, conn.dst);
        let port = self.hosts.nics[src as usize].port;
        let pkt = self.k.pool.alloc(Packet {
            conn: c,
            src,
            dst,
            seq: u32::MAX,
            size: self.hosts.tp.header,
            entropy,
            kind: PktKind::Probe,
            flags: if self.hosts.tp.ect { F_ECT } else { 0 },
            sent_at: now,
            port,
            sack_base: conn.snd_una,
            ..Packet::default()
        });
        self.host_send(port, pkt);
    }
}
