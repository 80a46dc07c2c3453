//! Receiver side: delivers data exactly once, answers with ACKs (cumulative + 64-packet SACK
//! bitmap + ECN echo) and NACKs trimmed headers. The arriving packet's pool slot is reused for
//! the answer, so a data packet and its ACK cost one allocation.

use crate::engine::Sim;
use crate::ids::{NodeId, PktId};
use crate::net::packet::{PktKind, F_ACK_NOW, F_CE, F_ECE, F_RETX, F_TRIMMED};

impl Sim {
    /// A packet reached host `host`.
    pub(crate) fn host_receive(&mut self, host: NodeId, pkt: PktId) {
        match self.pool.get(pkt).kind {
            PktKind::Data => self.on_data(host, pkt),
            PktKind::Ack => self.on_ack(pkt),
            PktKind::Nack => self.on_nack(pkt),
            PktKind::Pull => self.on_pull(pkt),
        }
    }

    fn on_data(&mut self, host: NodeId, pkt: PktId) {
        let p = *self.pool.get(pkt);
        debug_assert_eq!(p.dst, host);
        let (header, ack_bytes, ack_every) = (self.tp.header, self.tp.ack_bytes, self.tp.ack_every);
        let port = self.hosts[host as usize].port;
        if self.credit_on {
            self.credit_on_data(p.conn, p.flags & F_TRIMMED != 0);
        }
        let conn = &mut self.conns[p.conn as usize];
        if p.flags & F_TRIMMED != 0 {
            // Trimmed header: NACK it at once so the sender retransmits within one RTT.
            let a = self.pool.get_mut(pkt);
            a.kind = PktKind::Nack;
            a.src = p.dst;
            a.dst = p.src;
            a.size = ack_bytes;
            a.flags = p.flags & F_RETX;
            self.c.nacks_sent += 1;
            self.enqueue_ctrl(port, pkt);
            return;
        }
        self.c.data_arrived += 1;
        let fresh = conn.receive(p.seq);
        if fresh {
            conn.rcv_pkts += 1;
            conn.rcv_bytes += (p.size - header) as u64;
            if conn.msgs.get(conn.msgs_delivered).is_some_and(|m| m.end_pkt <= conn.rcv_cum) {
                self.deliver_messages(p.conn);
            }
        } else {
            conn.rcv_duplicates += 1;
        }
        let conn = &mut self.conns[p.conn as usize];
        conn.rcv_unacked += 1;
        let ce = p.flags & F_CE != 0;
        if ce {
            conn.rcv_unacked_ce += 1;
        }
        let ack_now = ack_every == 1
            || !fresh
            || p.flags & F_ACK_NOW != 0
            || conn.rcv_unacked >= ack_every
            || conn.rcv_pkts == conn.n_pkts;
        if !ack_now {
            self.pool.free(pkt);
            return;
        }
        let (cum, sack, ecn_count) = (conn.rcv_cum, conn.sack_bits(), conn.rcv_unacked_ce.min(u16::MAX as u32) as u16);
        conn.rcv_unacked = 0;
        conn.rcv_unacked_ce = 0;
        let a = self.pool.get_mut(pkt);
        a.kind = PktKind::Ack;
        a.src = p.dst;
        a.dst = p.src;
        a.size = ack_bytes;
        a.flags = (p.flags & F_RETX) | if ce { F_ECE } else { 0 };
        a.cum_ack = cum;
        a.sack_bits = sack;
        a.ecn_count = ecn_count;
        self.c.acks_sent += 1;
        self.enqueue_ctrl(port, pkt);
    }
}
