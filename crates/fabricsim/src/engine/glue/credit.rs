//! Credit handlers of EQDS and RCCC (state and policy: [`crate::transport::credit`]; EQDS:
//! Olteanu et al., NSDI'22, as in smartt-reps spec §2.14.1, §2.14.2; RCCC: uec-spec §2): the
//! sender spends credits, the receiver's pull pacer sends one PULL granting up to
//! `credit_per_pull` packets (EQDS: 1) per that many MTU serialization times at `pull_rate` ×
//! its line rate, round-robin over the connections owed credit.

use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::ids::{ConnId, NodeId, PktId};
use crate::net::packet::{Packet, PktKind};
use crate::units::Time;

impl Sim {
    /// Sender: whether credits allow `c` to send a packet now.
    #[inline]
    pub(crate) fn credit_allows(&self, c: ConnId) -> bool {
        let s = &self.hosts.credit[c as usize];
        s.unsolicited_left > 0 || s.credits > 0
    }

    /// Sender: `c` sends a packet; spend the allowance or a credit.
    #[inline]
    pub(crate) fn credit_spend(&mut self, c: ConnId) {
        let s = &mut self.hosts.credit[c as usize];
        if s.unsolicited_left > 0 {
            s.unsolicited_left -= 1;
        } else {
            debug_assert!(s.credits > 0, "sent without credit");
            s.credits -= 1;
        }
    }

    /// Sender: a message was just posted on `c`; an idle connection starts a fresh allowance.
    pub(crate) fn credit_on_post(&mut self, c: ConnId) {
        let idle = self.hosts.conns[c as usize].in_flight == 0;
        let s = &mut self.hosts.credit[c as usize];
        if idle && s.credits == 0 && s.unsolicited_left == 0 {
            s.start_allowance(s.allowance);
        }
    }

    /// Sender: the first ACK, NACK or PULL of `c` since its allowance was granted. With
    /// `stop_speculating` (RCCC) the unspent allowance is dropped, and the packets it would have
    /// covered join the pull target (uec-spec §2.1).
    pub(crate) fn credit_on_feedback(&mut self, c: ConnId) {
        let s = &mut self.hosts.credit[c as usize];
        if !(self.hosts.credit_policy.stop_speculating && s.speculating) {
            return;
        }
        s.speculating = false;
        s.granted -= s.unsolicited_left;
        s.unsolicited_left = 0;
        //= uec-spec §2.5; type=assumption
        //# With nothing in flight no data header will carry the larger pull target: the
        //# receiver learns it at once (only a connection that stopped sending can be stuck).
        if self.hosts.conns[c as usize].in_flight == 0 {
            self.credit_on_data(c, false);
        }
    }

    /// Sender: `c` has a packet to send and no credit for it. When nothing could still give it
    /// credit — nothing in flight (no ACK or timeout to come), no PULL owed by its receiver or
    /// on its way — it starts a fresh unsolicited allowance, as an idle connection does when a
    /// message is posted (see the module doc of [`crate::transport::credit`]); returns whether
    /// it may send now.
    pub(crate) fn credit_revive(&mut self, c: ConnId) -> bool {
        let idle = self.hosts.conns[c as usize].in_flight == 0;
        let s = &mut self.hosts.credit[c as usize];
        if !idle || s.queued || s.pulls_settled != s.pulls_sent {
            return false;
        }
        s.start_allowance(s.allowance.max(1));
        true
    }

    /// Sender: a timeout declared `n` packets lost; they are resent unsolicited.
    pub(crate) fn credit_on_timeout(&mut self, c: ConnId, n: u32) {
        self.hosts.credit[c as usize].unsolicited_left += n;
    }

    /// Receiver: a data packet (`trimmed`: a trimmed header) of `c` arrived.
    pub(crate) fn credit_on_data(&mut self, c: ConnId, trimmed: bool) {
        let conn = &self.hosts.conns[c as usize];
        let s = &mut self.hosts.credit[c as usize];
        // Credits needed = posted packets beyond the unsolicited allowance (+ trims below).
        s.target_seen = s.target_seen.max(conn.n_pkts.saturating_sub(s.granted));
        if trimmed {
            s.trims_seen += 1;
        }
        if s.owed() > 0 && !s.queued {
            s.queued = true;
            let host = conn.dst;
            self.hosts.pacers[host as usize].queue.push_back(c);
            self.pull_tick_schedule(host);
        }
    }

    fn pull_tick_schedule(&mut self, host: NodeId) {
        let p = &mut self.hosts.pacers[host as usize];
        if !p.pending && !p.queue.is_empty() {
            p.pending = true;
            let at = p.next_at.max(self.k.now);
            self.k.q.push(at, EventKind::PullTick, host);
        }
    }

    /// The pacer of `host` may send one PULL.
    pub(crate) fn on_pull_tick(&mut self, host: NodeId) {
        self.hosts.pacers[host as usize].pending = false;
        let Some(c) = self.hosts.pacers[host as usize].queue.pop_front() else { return };
        let policy = self.hosts.credit_policy;
        let s = &mut self.hosts.credit[c as usize];
        //= uec-spec §2.2 (htsim UecSink::pull: grant up to the target, never beyond)
        let grant = s.owed().min(policy.credit_per_pull);
        s.pulls_sent += grant;
        if s.owed() > 0 {
            self.hosts.pacers[host as usize].queue.push_back(c);
        } else {
            s.queued = false;
        }
        let port = self.hosts.nics[host as usize].port;
        let conn = &self.hosts.conns[c as usize];
        let pkt = self.k.pool.alloc(Packet {
            conn: c,
            src: conn.dst,
            dst: conn.src,
            size: self.hosts.tp.ack_bytes,
            kind: PktKind::Pull,
            // A PULL's sequence field carries the packets it grants.
            seq: grant,
            port,
            ..Packet::default()
        });
        let mut interval = self.net.ports[port as usize].rate.tx_time(grant as u64 * (self.hosts.tp.mss + self.hosts.tp.header) as u64);
        if policy.pull_rate != 1.0 {
            //= uec-spec §2.2, §8 (htsim pull_rate_modifier 0.99)
            interval = (interval as f64 / policy.pull_rate).round() as Time;
        }
        self.hosts.pacers[host as usize].next_at = self.k.now + interval;
        self.host_send(port, pkt);
        self.pull_tick_schedule(host);
    }

    /// Sender: a PULL arrived.
    pub(crate) fn on_pull(&mut self, pkt: PktId) {
        let (c, grant) = (self.k.pool.get(pkt).conn, self.k.pool.get(pkt).seq);
        self.k.pool.free(pkt);
        let s = &mut self.hosts.credit[c as usize];
        s.credits += grant;
        s.pulls_settled += grant;
        self.credit_on_feedback(c);
        self.conn_wake(c);
    }
}
