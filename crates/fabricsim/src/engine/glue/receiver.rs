//! A packet reached a host: the dispatch on its kind, and the engine's side of the receiver
//! (`transport/receiver.rs` holds its handlers): a data packet's answer is queued on the NIC,
//! and the messages it completed go to the workload before the receiver answers.

use crate::engine::Sim;
use crate::ids::{NodeId, PktId};
use crate::net::packet::{PktKind, F_BOUNCED, F_TRIMMED};
use crate::transport::cc::CongestionControl;
use crate::transport::receiver::{DataStep, Sends};

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

    /// Data packet `pkt` reached host `host`: a header a switch bounced goes to its sender, the
    /// credit scheme hears of it, then the connection's [`Receiver`](crate::transport::receiver::Receiver)
    /// takes it; completed messages go to the workload before the receiver answers.
    fn on_data(&mut self, host: NodeId, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        debug_assert_eq!(p.dst, host);
        if p.flags & F_BOUNCED != 0 {
            // A header a switch returned: this host is its sender (spec LR-TRIM-RTS).
            self.k.c.bounces_returned += 1;
            return self.on_bounce(pkt);
        }
        if self.hosts.credits.on {
            let h = &mut self.hosts;
            h.credits.on_data(&mut self.k, p.conn, &h.conns[p.conn as usize], p.flags & F_TRIMMED != 0);
        }
        let tp = self.hosts.tp;
        let port = self.hosts.nics[host as usize].port;
        let mut sends = Sends::default();
        let step = self.hosts.rx[p.conn as usize].on_data(&mut self.k, &tp, pkt, &p, port, &mut sends);
        for s in sends.iter() {
            self.host_send(port, s);
        }
        let DataStep::Answer(accepted) = step else { return };
        if accepted.fresh {
            // Messages complete in order; a mode that completes one message at a time (erasure
            // coding) is asked again for the next. (The messages' packet ranges are the
            // sender's posts, which the receiver knows as work requests.)
            loop {
                let sender = &self.hosts.conns[p.conn as usize];
                let Some(end) = self.hosts.rx[p.conn as usize].newly_delivered_end(p.seq, &sender.msgs, sender.msgs_retired) else { break };
                self.deliver_messages(p.conn, end);
            }
        }
        // (Read after delivering: the workload may have posted more on this connection.)
        let n_pkts = self.hosts.conns[p.conn as usize].n_pkts;
        if let Some(answer) = self.hosts.rx[p.conn as usize].answer_data(&mut self.k, &tp, pkt, &p, n_pkts, accepted) {
            self.host_send(port, answer);
        }
    }

    /// A probe reached its receiver, which answers at once.
    fn on_probe(&mut self, host: NodeId, pkt: PktId) {
        let (tp, port, conn) = (self.hosts.tp, self.hosts.nics[host as usize].port, self.k.pool.get(pkt).conn);
        let answer = self.hosts.rx[conn as usize].on_probe(&mut self.k, &tp, pkt);
        self.host_send(port, answer);
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
