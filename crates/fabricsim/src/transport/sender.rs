//! Sender side of a connection: when it may send, what it sends, and what it does with ACKs,
//! NACKs and timeouts. Congestion control and path selection are consulted through their traits.

use super::cc::{AckEvent, CongestionControl, LossCause, NackEvent, TimeoutEvent};
use super::connection::{SeqState, Slot};
use super::gate::MessageGate;
use super::lb::{EntropyCtx, Feedback, PathSelector};
use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::ids::{ConnId, PktId};
use crate::net::packet::{Packet, PktKind, F_ACK_NOW, F_ECE, F_DOOMED, F_ECT, F_PROBE_ACK, F_RETX};
use super::reliability::Reliability;
use crate::units::Time;

/// Longest a paced connection waits without re-reading its rate.
const RATE_RECHECK: Time = 10 * crate::units::US;

enum Readiness {
    Ready,
    Paced(Time),
    Blocked,
}

impl Sim {
    fn readiness(&mut self, c: ConnId) -> Readiness {
        let header = self.tp.header;
        let mss = self.tp.mss;
        let conn = &mut self.conns[c as usize];
        if conn.idle() {
            return Readiness::Blocked;
        }
        let Some((seq, retx)) = conn.next_to_send() else { return Readiness::Blocked };
        let wire = conn.wire_of(seq, retx, mss, header) as u64;
        if let Some(w) = conn.cc.window() {
            // An empty pipe may always send one packet, whatever the window.
            if conn.in_flight > 0 && conn.in_flight + wire > w {
                return Readiness::Blocked;
            }
        }
        if self.credit_on && !self.credit_allows(c) {
            return Readiness::Blocked;
        }
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        if conn.next_send > now + RATE_RECHECK {
            // A long gap (a slow rate): the rate may rise before the gap ends, as a NIC rate
            // limiter's would, so re-read it and wake at least every RATE_RECHECK.
            conn.cc.advance_to(now);
            if let Some(rate) = conn.cc.pacing_rate() {
                conn.next_send = conn.last_tx + rate.tx_time(conn.last_wire as u64);
            }
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
                let conn = &mut self.conns[c as usize];
                if !conn.wake_pending {
                    conn.wake_pending = true;
                    self.q.push(t, EventKind::ConnWake, c);
                }
                false
            }
            Readiness::Blocked => false,
        }
    }

    /// Puts `c` in its host's ready ring if it may send, and makes sure the NIC looks at it.
    pub(crate) fn conn_wake(&mut self, c: ConnId) {
        if self.conns[c as usize].in_ready || !self.conn_may_send(c) {
            return;
        }
        let conn = &mut self.conns[c as usize];
        conn.in_ready = true;
        let host = conn.src as usize;
        self.hosts[host].ready.push_back(c);
        let port = self.hosts[host].port;
        self.port_kick(port);
    }

    pub(crate) fn on_conn_wake(&mut self, c: ConnId) {
        self.conns[c as usize].wake_pending = false;
        self.conn_wake(c);
    }

    /// Builds and accounts the next data packet of `c`, if it may send one now.
    pub(crate) fn conn_emit(&mut self, c: ConnId) -> Option<PktId> {
        if !self.conn_may_send(c) {
            return None;
        }
        let (now, mss, header, ect, ack_every) = (self.now, self.tp.mss, self.tp.header, self.tp.ect, self.tp.ack_every);
        let conn = &mut self.conns[c as usize];
        let (seq, retx) = conn.next_to_send()?;
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
            self.c.data_retransmitted += 1;
        } else {
            conn.board.push_back(slot);
            conn.next_seq += 1;
            let m = &mut conn.msgs[conn.msgs_sent];
            if m.first_tx == Time::MAX {
                m.first_tx = now;
            }
            if conn.next_seq == m.end_pkt {
                conn.msgs_sent += 1;
            }
        }
        conn.in_flight += wire;
        conn.tx_log.push_back((seq, now));
        conn.cc.on_send(now, wire);
        if let Some(rate) = conn.cc.pacing_rate() {
            conn.next_send = now + rate.tx_time(wire);
            conn.last_tx = now;
            conn.last_wire = wire as u32;
        }
        let mut flags = if ect { F_ECT } else { 0 } | if retx { F_RETX } else { 0 };
        if !self.drop_plan.is_empty() {
            for d in self.drop_plan.iter_mut().filter(|d| d.0 == c && d.1 == seq) {
                d.3 += 1;
                if d.3 == d.2 {
                    flags |= F_DOOMED;
                }
            }
        }
        if ack_every > 1 {
            let full = conn.cc.window().is_some_and(|w| conn.in_flight + (mss + header) as u64 > w);
            if full || conn.next_to_send().is_none() {
                flags |= F_ACK_NOW;
            }
        }
        let (src, dst) = (conn.src, conn.dst);
        if !conn.timer_pending {
            conn.timer_pending = true;
            self.q.push(now + self.tp.rto, EventKind::ConnTimer, c);
        }
        self.c.data_sent += 1;
        if matches!(self.reliability, Reliability::Strack { .. }) {
            self.strack_arm_probe(c);
        }
        if self.credit_on {
            self.credit_spend(c);
        }
        let port = self.hosts[src as usize].port;
        Some(self.pool.alloc(Packet {
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
        let header = self.tp.header;
        let conn = &mut self.conns[c as usize];
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
        wire
    }

    /// An ACK reached its sender.
    pub(crate) fn on_ack(&mut self, pkt: PktId) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
        self.c.acks_arrived += 1;
        let c = p.conn;
        if self.conns[c as usize].idle() {
            return;
        }
        let mut newly = 0;
        let una = self.conns[c as usize].snd_una;
        for seq in una..p.cum_ack {
            newly += self.ack_one(c, seq);
        }
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
        let now = self.now;
        self.rtt_hist.add(now - p.sent_at);
        let conn = &mut self.conns[c as usize];
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
        conn.lb.on_feedback(p.entropy, Feedback::Ack { ecn }, now);
        if let Some(i) = conn.msg_of(p.seq).filter(|_| !probe_ack && self.lanes[c as usize].gate.wants_rtt_samples()) {
            let m = &mut conn.msgs[i];
            let rtt = now - p.sent_at;
            m.rtt_max = m.rtt_max.max(rtt);
            m.rtt_sum += rtt;
            m.rtt_samples += 1;
        }
        if self.reliability != Reliability::Sack {
            self.strack_on_ack(c, &p, now - p.sent_at, probe_ack);
        }
        self.after_ack_progress(c);
    }

    /// After acknowledgements moved `snd_una`: completes messages, notes an idle connection's
    /// finish time and lets the connection send again.
    pub(crate) fn after_ack_progress(&mut self, c: ConnId) {
        let conn = &mut self.conns[c as usize];
        if conn.msgs.front().is_some_and(|m| m.end_pkt <= conn.snd_una) {
            self.complete_messages(c);
        }
        let conn = &mut self.conns[c as usize];
        if conn.idle() {
            conn.finish = Some(self.now);
        }
        self.conn_wake(c);
    }

    /// A NACK (trimmed packet) reached its sender: queue the packet for retransmission.
    pub(crate) fn on_nack(&mut self, pkt: PktId) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
        self.c.nacks_arrived += 1;
        let now = self.now;
        let c = p.conn;
        let conn = &mut self.conns[c as usize];
        if conn.idle() || p.seq < conn.snd_una || p.seq >= conn.next_seq {
            return;
        }
        let slot = conn.slot(p.seq);
        let wire = slot.wire as u64;
        // A NACK for an older transmission than the one in flight is stale.
        if slot.state != SeqState::InFlight || slot.sent_at != p.sent_at {
            return;
        }
        slot.state = SeqState::Lost;
        conn.in_flight -= wire;
        conn.retx.push_back(p.seq);
        conn.nacks += 1;
        let ev = NackEvent {
            now,
            bytes: wire,
            cause: LossCause::Trimmed,
            entropy: p.entropy,
            in_flight: conn.in_flight,
            sent_at: p.sent_at,
        };
        conn.cc.on_nack(&ev);
        conn.lb.on_feedback(p.entropy, Feedback::Nack, now);
        self.conn_wake(c);
    }

    /// The retransmission timer of `c`: declare lost every packet outstanding for one RTO.
    pub(crate) fn on_conn_timer(&mut self, c: ConnId) {
        let (now, rto) = (self.now, self.tp.rto);
        let conn = &mut self.conns[c as usize];
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
        if lost > 0 && self.reliability == Reliability::GoBackN {
            // Go-back-N: everything after the oldest lost packet is sent again.
            self.conns[c as usize].rewound_at = now;
            self.declare_lost_range(c, 0, u32::MAX);
        }
        if lost > 0 && self.credit_on {
            self.credit_on_timeout(c, lost_pkts);
        }
        let conn = &mut self.conns[c as usize];
        if lost > 0 {
            conn.timeouts += 1;
            conn.consecutive_timeouts += 1;
            self.c.timeouts += 1;
            let ev = TimeoutEvent {
                now,
                lost_bytes: lost,
                in_flight: conn.in_flight,
                consecutive: conn.consecutive_timeouts,
                latest_sent_at,
            };
            conn.cc.on_timeout(&ev);
        }
        if let Some(&(_, t)) = conn.tx_log.front() {
            conn.timer_pending = true;
            self.q.push(t + rto, EventKind::ConnTimer, c);
        }
        self.conn_wake(c);
    }
}
