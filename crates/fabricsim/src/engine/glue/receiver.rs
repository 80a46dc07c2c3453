//! Receiver side: delivers data exactly once, answers with ACKs (cumulative + 64-packet SACK
//! bitmap + ECN echo + out-of-order count), NACKs trimmed headers, reports gaps with sequence
//! NACKs in the RoCE modes, answers probes, and sends DCQCN's CNPs. The arriving packet's pool
//! slot is reused for the answer, so a data packet and its ACK cost one allocation.

use crate::engine::trace::{PacketEvent, NO_PORT};
use crate::engine::Sim;
use crate::ids::{NodeId, PktId};
use crate::net::packet::{Packet, PktKind, F_ACK_NOW, F_BOUNCED, F_CE, F_ECE, F_PROBE_ACK, F_RETX, F_TRIMMED, F_LAST_HOP};
use crate::transport::cc::CongestionControl;
use crate::transport::recovery::{Admit, Arrival, ReceiverRecovery, Reply};
use crate::units::Time;

impl Sim {
    /// A packet reached host `host`.
    pub(crate) fn host_receive(&mut self, host: NodeId, pkt: PktId) {
        let kind = self.k.pool.get(pkt).kind;
        self.k.c.arrived[kind] += 1;
        // The one place a new packet kind must be named: which handler its host side runs.
        match kind {
            PktKind::Data => self.on_data(host, pkt),
            PktKind::Ack => self.on_ack(pkt),
            PktKind::Nack => self.on_nack(pkt),
            PktKind::Pull => self.on_pull(pkt),
            PktKind::Cnp => self.on_cnp(pkt),
            PktKind::SeqNack => self.on_seq_nack(pkt),
            PktKind::Probe => self.on_probe(host, pkt),
            // Addressed to switches only; a host never sees one.
            PktKind::Congestion => unreachable!("switch-made packet at host {host}"),
        }
    }

    fn on_data(&mut self, host: NodeId, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        debug_assert_eq!(p.dst, host);
        let tp = self.hosts.tp;
        let (header, ack_bytes) = (tp.header, tp.ack_bytes);
        let port = self.hosts.nics[host as usize].port;
        if p.flags & F_BOUNCED != 0 {
            // A header a switch returned: this host is its sender (spec LR-TRIM-RTS).
            self.k.c.bounces_returned += 1;
            return self.on_bounce(pkt);
        }
        if self.hosts.credit_on {
            self.credit_on_data(p.conn, p.flags & F_TRIMMED != 0);
        }
        if p.flags & F_TRIMMED != 0 {
            // Trimmed header: NACK it at once so the sender retransmits within one RTT.
            self.k.log.packet(self.k.now, p.conn, p.seq, PacketEvent::HeaderArrived, NO_PORT);
            let a = self.k.pool.get_mut(pkt);
            a.kind = PktKind::Nack;
            a.src = p.dst;
            a.dst = p.src;
            a.size = ack_bytes;
            a.flags = p.flags & (F_RETX | F_LAST_HOP);
            self.host_send(port, pkt);
            return;
        }
        let ce = p.flags & F_CE != 0;
        if ce {
            self.maybe_send_cnp(p.conn, &p);
        }
        let r = &mut self.hosts.rx[p.conn as usize];
        r.now = self.k.now;
        let (recovery, view) = r.parts();
        if let Admit::Discard(reply) = recovery.admit(&view, p.seq) {
            // E.g. go-back-N: an out-of-order packet is discarded; the first one of a gap asks
            // for the expected packet.
            r.discarded += 1;
            if reply != Reply::SeqNack {
                return self.reply(host, pkt, &p, reply);
            }
            //= seqbalance §2.3.3; type=assumption
            //# The ConWeave ns-3 NACK carries a CNP: `ooo_triggers_cnp` (default false).
            if tp.ooo_cnp && !ce {
                self.maybe_send_cnp(p.conn, &p);
            }
            //= ns-3 RdmaHw::ReceiveUdp: a NACK carries the CNP flag as an ACK does (the
            //# packet's CE mark; ConWeave's also for the gap itself): where no CNP packets
            //# exist (the mellanox reaction point), the flag is the notification.
            let echo = tp.cnp_interval.is_none() && (ce || tp.ooo_cnp);
            return self.send_seq_nack(host, pkt, if echo { F_ECE } else { 0 });
        }
        let cum_before = r.cum;
        let fresh = r.receive(p.seq);
        if fresh {
            r.pkts += 1;
            r.bytes += (p.size - header) as u64;
            // Messages complete in order; a mode that completes one message at a time (erasure
            // coding) is asked again for the next. (The messages' packet ranges are the
            // sender's posts, which the receiver knows as work requests.)
            loop {
                let sender = &self.hosts.conns[p.conn as usize];
                let Some(end) = self.hosts.rx[p.conn as usize].newly_delivered_end(p.seq, &sender.msgs, sender.msgs_retired) else { break };
                self.deliver_messages(p.conn, end);
            }
        } else {
            r.duplicates += 1;
        }
        let n_pkts = self.hosts.conns[p.conn as usize].n_pkts;
        let r = &mut self.hosts.rx[p.conn as usize];
        //= uec-spec §4 (htsim UecSink::processData)
        //# ACK by bytes, on the flow's first packet, at once on CE, and on the sender's request.
        let by_bytes = tp.ack_coalesce_bytes > 0 && (r.unacked_bytes + p.size >= tp.ack_coalesce_bytes || r.pkts == 1);
        let by_packets = if tp.ack_coalesce_bytes > 0 { tp.ack_every > 1 && r.unacked + 1 >= tp.ack_every } else { r.unacked + 1 >= tp.ack_every };
        let ack_due = !tp.coalescing()
            || !fresh
            || p.flags & F_ACK_NOW != 0
            || by_packets
            || by_bytes
            || (tp.ack_on_ce && ce)
            || r.pkts == n_pkts;
        let arrival = Arrival { seq: p.seq, fresh, ce, cum_before, ack_due };
        let (recovery, view) = r.parts();
        let reply = recovery.on_data(&view, &arrival);
        if reply != Reply::SeqNack {
            // The packet is covered by this ACK or the next one.
            r.unacked += 1;
            r.unacked_bytes += p.size;
            r.lowest_unacked = r.lowest_unacked.min(p.seq);
            if ce {
                r.unacked_ce += 1;
            }
        }
        self.reply(host, pkt, &p, reply);
    }

    /// Answers the arrived data packet `pkt` (a copy of which is `p`) as the loss-recovery
    /// mode decided, reusing its pool slot (or freeing it when there is nothing to say).
    #[inline(always)]
    fn reply(&mut self, host: NodeId, pkt: PktId, p: &Packet, reply: Reply) {
        match reply {
            Reply::None => self.k.pool.free(pkt),
            Reply::Ack { sack_base } => {
                let ce = if p.flags & F_CE != 0 { F_ECE } else { 0 };
                self.answer_with_ack(pkt, p, sack_base, (p.flags & F_RETX) | ce);
            }
            Reply::SeqNack => self.send_seq_nack(host, pkt, 0),
        }
    }

    /// Turns the arrived packet `pkt` (a copy of which is `p`) into this receiver's ACK, with a
    /// selective bitmap starting at `sack_base`, and sends it.
    fn answer_with_ack(&mut self, pkt: PktId, p: &Packet, sack_base: u32, flags: u16) {
        let ack_bytes = self.hosts.tp.ack_bytes;
        let port = self.hosts.nics[p.dst as usize].port;
        let r = &mut self.hosts.rx[p.conn as usize];
        let (cum, sack, ecn_count) = (r.ack_cum(), r.sack_bits_from(sack_base), r.unacked_ce.min(u16::MAX as u32) as u16);
        let ooo = (r.pkts - r.cum).min(u16::MAX as u32) as u16;
        r.unacked = 0;
        r.unacked_bytes = 0;
        r.unacked_ce = 0;
        r.lowest_unacked = u32::MAX;
        let a = self.k.pool.get_mut(pkt);
        a.kind = PktKind::Ack;
        a.src = p.dst;
        a.dst = p.src;
        a.size = ack_bytes;
        a.flags = flags;
        a.cum_ack = cum;
        a.sack_base = sack_base;
        a.sack_bits = sack;
        a.ecn_count = ecn_count;
        a.ooo_count = ooo;
        self.host_send(port, pkt);
    }

    /// Turns the arrived packet `pkt` into a sequence NACK for the expected packet, with
    /// `flags` (`F_ECE`: it echoes congestion).
    fn send_seq_nack(&mut self, host: NodeId, pkt: PktId, flags: u16) {
        let (ack_bytes, port) = (self.hosts.tp.ack_bytes, self.hosts.nics[host as usize].port);
        let a = self.k.pool.get_mut(pkt);
        let r = &self.hosts.rx[a.conn as usize];
        a.kind = PktKind::SeqNack;
        std::mem::swap(&mut a.src, &mut a.dst);
        a.size = ack_bytes;
        a.flags = flags;
        a.cum_ack = r.cum;
        self.host_send(port, pkt);
    }

    /// A probe reached its receiver: answer at once with an ACK whose bitmap starts where the
    /// probe asks (strack spec §2.5.11–2.5.12). A probe carries no payload.
    fn on_probe(&mut self, host: NodeId, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        debug_assert_eq!(p.dst, host);
        let base = p.sack_base.max(self.hosts.rx[p.conn as usize].cum);
        let ce = if p.flags & F_CE != 0 { F_ECE } else { 0 };
        self.answer_with_ack(pkt, &p, base, F_PROBE_ACK | ce);
    }

    /// DCQCN notification point: a CE-marked packet of connection `conn` arrived; send a CNP to
    /// the sender unless one went out less than `cnp_interval` ago (DCQCN §3.2: at most one per
    /// QP per 50 µs).
    fn maybe_send_cnp(&mut self, conn: u32, p: &Packet) {
        let Some(interval) = self.hosts.tp.cnp_interval else { return };
        let now = self.k.now;
        let r = &mut self.hosts.rx[conn as usize];
        if r.last_cnp != Time::MAX && now < r.last_cnp + interval {
            return;
        }
        r.last_cnp = now;
        let port = self.hosts.nics[p.dst as usize].port;
        let cnp = self.k.pool.alloc(Packet {
            conn,
            src: p.dst,
            dst: p.src,
            seq: p.seq,
            size: self.hosts.tp.ack_bytes,
            entropy: p.entropy,
            kind: PktKind::Cnp,
            sent_at: p.sent_at,
            port,
            ..Packet::default()
        });
        self.host_send(port, cnp);
    }

    /// A CNP reached its sender: the congestion controller reacts (DCQCN reaction point).
    fn on_cnp(&mut self, pkt: PktId) {
        let c = self.k.pool.get(pkt).conn;
        self.k.pool.free(pkt);
        let now = self.k.now;
        self.hosts.conns[c as usize].cc.on_cnp(now);
        self.hosts.conns[c as usize].cnps += 1;
        // A rate cut may push the next transmission later; a paced sender re-reads its rate
        // when it is next woken, so nothing else to do here.
    }
}
