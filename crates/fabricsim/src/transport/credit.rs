//! Receiver-driven credits: EQDS (Olteanu et al., NSDI'22) as the SMaRTT-REPS paper compares
//! against it (smartt-reps spec §2.14.1, §2.14.2; paper §4, §5.1).
//!
//! A sender may send the first `unsolicited_bdp` × BDP of a connection unsolicited; after that
//! every packet, new or retransmitted, spends one credit. The receiver's NIC runs one *pull
//! pacer*: at most one PULL (a 64-byte control packet granting one MTU) per MTU serialization
//! time at its line rate, round-robin over the connections that still want credit. What a
//! sender wants is the backlog field of its data headers, kept here as a cumulative *pull
//! target* (packets posted beyond the unsolicited allowance); the receiver adds one to it for
//! every trimmed header it NACKs, since the retransmission needs a credit (spec §2.14.1). With
//! cumulative counters a late or reordered header can never make the receiver pull twice.
//!
//! Modelling choices (the spec is silent): the header's backlog is read when the packet
//! arrives, i.e. it reports the sender's backlog up to that moment rather than at send time —
//! at most one one-way delay fresher; a connection that is idle (nothing in flight, no credit,
//! no allowance left) when a new message is posted gets a fresh unsolicited allowance, as a new
//! EQDS flow would; and retransmissions after a timeout go unsolicited (the timeout acts as the
//! probe), so a connection whose every packet was lost cannot wait forever for credit.
//!
//! The connection's congestion control still applies on top (`inflight + size ≤ cwnd`): with
//! `cc = "line_rate"` this is vanilla EQDS (no sender CC); with `smartt` or `mprdma` it is the
//! paper's EQDS + SMaRTT / EQDS + MPRDMA of Fig. 17. Paths come from the connection's path
//! selector as for every other scheme (REPS in the paper).
//!
//! Deviation (documented): the pull pacer spaces PULLs by the serialization time of a full
//! data packet at the receiver's link rate and does not account for PULLs queued behind ACKs on
//! the NIC's control queue; EQDS's pacer works the same way at the granularity the spec gives.

use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::error::{Error, Result};
use crate::ids::{ConnId, NodeId, PktId};
use crate::net::packet::{Packet, PktKind};
use crate::scenario::NoParams;
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

crate::scheme_family! {
    /// Scenario selection (`[transport.credit]`, `name = "none" | "eqds"`).
    config CreditConfig;
    /// A connection's credit policy, built from its path.
    any AnyCredit;
    ctx CreditBuild; what "credit scheme"; key "transport.credit"; default None;
    dispatch dispatch;
    schemes {
        /// Senders need no credit.
        None => NoCredit,
        /// EQDS pull credits.
        Eqds => Eqds,
    }
}

/// What a credit policy is built from: the connection's path BDP and full packet size.
#[derive(Clone, Copy, Debug)]
pub struct CreditBuild {
    /// Path BDP in bytes.
    pub bdp_bytes: u64,
    /// Wire bytes of a full packet.
    pub mtu_bytes: u64,
}

/// `none`: sender-based schemes need no credit.
#[derive(Clone, Copy, Debug)]
pub struct NoCredit;

impl crate::scheme::Scheme<CreditBuild> for NoCredit {
    const NAME: &'static str = "none";
    const SUMMARY: &'static str = "senders need no credit (sender-based schemes)";
    type Params = NoParams;
    fn build(_p: &NoParams, _ctx: &mut CreditBuild) -> Self {
        NoCredit
    }
}

/// Parameters of `eqds`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EqdsParams {
    /// Unsolicited allowance per connection, in BDPs of its path (spec §2.14.1: 1 BDP).
    pub unsolicited_bdp: f64,
}

impl Default for EqdsParams {
    fn default() -> Self {
        EqdsParams { unsolicited_bdp: 1.0 }
    }
}

/// `eqds`: a connection's unsolicited allowance, in packets.
#[derive(Clone, Copy, Debug)]
pub struct Eqds {
    unsolicited_packets: u32,
}

impl crate::scheme::Scheme<CreditBuild> for Eqds {
    const NAME: &'static str = "eqds";
    const SUMMARY: &'static str = "EQDS: 1 BDP unsolicited, then one receiver-paced PULL credit per packet";
    type Params = EqdsParams;
    fn check(p: &EqdsParams, key: &str) -> Result<()> {
        if !(p.unsolicited_bdp.is_finite() && p.unsolicited_bdp >= 0.0) {
            return Err(Error::invalid(format!("{key}.unsolicited_bdp"), format!("{}: must be a non-negative number of BDPs", p.unsolicited_bdp)));
        }
        Ok(())
    }
    fn build(p: &EqdsParams, ctx: &mut CreditBuild) -> Self {
        Eqds { unsolicited_packets: ((p.unsolicited_bdp * ctx.bdp_bytes as f64) / ctx.mtu_bytes as f64).ceil() as u32 }
    }
}

impl CreditConfig {
    /// Whether senders need credits.
    pub fn enabled(&self) -> bool {
        !matches!(self, CreditConfig::None(_))
    }
}

impl AnyCredit {
    /// Packets a fresh connection may send before it needs credit (`u32::MAX`: no limit).
    pub fn unsolicited_packets(&self) -> u32 {
        match self {
            AnyCredit::None(_) => u32::MAX,
            AnyCredit::Eqds(e) => e.unsolicited_packets,
        }
    }
}

/// Credit state of one connection (both ends).
#[derive(Clone, Copy, Debug, Default)]
pub struct CreditState {
    /// Sender: the allowance of a fresh connection, in packets.
    pub allowance: u32,
    /// Sender: unsolicited packets left.
    pub unsolicited_left: u32,
    /// Sender: unsolicited allowance granted for new data so far (initial + refills of an
    /// idle connection; timeout retransmissions are not counted: they need no credit).
    pub granted: u32,
    /// Sender: credits (PULLs) received and not spent.
    pub credits: u32,
    /// Receiver: highest pull target seen.
    pub target_seen: u32,
    /// Receiver: trimmed headers seen (each adds one to the target).
    pub trims_seen: u32,
    /// Receiver: PULLs sent.
    pub pulls_sent: u32,
    /// Receiver: whether the connection is in its host's pull queue.
    pub queued: bool,
}

impl CreditState {
    /// A connection with an allowance of `allowance` packets.
    pub fn new(allowance: u32) -> Self {
        CreditState { allowance, unsolicited_left: allowance, granted: allowance, ..Default::default() }
    }

    /// Receiver side: credits still owed.
    fn owed(&self) -> bool {
        self.pulls_sent < self.target_seen + self.trims_seen
    }
}

/// One receiver NIC's pull pacer.
#[derive(Debug, Default)]
pub struct PullPacer {
    /// Connections owed credit, round-robin.
    pub queue: VecDeque<ConnId>,
    /// Earliest time of the next PULL.
    pub next_at: Time,
    /// Whether a tick is scheduled.
    pub pending: bool,
}

impl Sim {
    /// Sender: whether credits allow `c` to send a packet now.
    #[inline]
    pub(crate) fn credit_allows(&self, c: ConnId) -> bool {
        let s = &self.credit[c as usize];
        s.unsolicited_left > 0 || s.credits > 0
    }

    /// Sender: `c` sends a packet; spend the allowance or a credit.
    #[inline]
    pub(crate) fn credit_spend(&mut self, c: ConnId) {
        let s = &mut self.credit[c as usize];
        if s.unsolicited_left > 0 {
            s.unsolicited_left -= 1;
        } else {
            debug_assert!(s.credits > 0, "sent without credit");
            s.credits -= 1;
        }
    }

    /// Sender: a message was just posted on `c`; an idle connection starts a fresh allowance.
    pub(crate) fn credit_on_post(&mut self, c: ConnId) {
        let idle = self.conns[c as usize].in_flight == 0;
        let s = &mut self.credit[c as usize];
        if idle && s.credits == 0 && s.unsolicited_left == 0 {
            s.unsolicited_left = s.allowance;
            s.granted += s.allowance;
        }
    }

    /// Sender: a timeout declared `n` packets lost; they are resent unsolicited.
    pub(crate) fn credit_on_timeout(&mut self, c: ConnId, n: u32) {
        self.credit[c as usize].unsolicited_left += n;
    }

    /// Receiver: a data packet (`trimmed`: a trimmed header) of `c` arrived.
    pub(crate) fn credit_on_data(&mut self, c: ConnId, trimmed: bool) {
        let conn = &self.conns[c as usize];
        let s = &mut self.credit[c as usize];
        // Credits needed = posted packets beyond the unsolicited allowance (+ trims below).
        s.target_seen = s.target_seen.max(conn.n_pkts.saturating_sub(s.granted));
        if trimmed {
            s.trims_seen += 1;
        }
        if s.owed() && !s.queued {
            s.queued = true;
            let host = conn.dst;
            self.pacers[host as usize].queue.push_back(c);
            self.pull_tick_schedule(host);
        }
    }

    fn pull_tick_schedule(&mut self, host: NodeId) {
        let p = &mut self.pacers[host as usize];
        if !p.pending && !p.queue.is_empty() {
            p.pending = true;
            let at = p.next_at.max(self.now);
            self.q.push(at, EventKind::PullTick, host);
        }
    }

    /// The pacer of `host` may send one PULL.
    pub(crate) fn on_pull_tick(&mut self, host: NodeId) {
        self.pacers[host as usize].pending = false;
        let Some(c) = self.pacers[host as usize].queue.pop_front() else { return };
        let s = &mut self.credit[c as usize];
        s.pulls_sent += 1;
        if s.owed() {
            self.pacers[host as usize].queue.push_back(c);
        } else {
            s.queued = false;
        }
        let port = self.hosts[host as usize].port;
        let conn = &self.conns[c as usize];
        let pkt = self.pool.alloc(Packet {
            conn: c,
            src: conn.dst,
            dst: conn.src,
            size: self.tp.ack_bytes,
            kind: PktKind::Pull,
            port,
            ..Packet::default()
        });
        self.c.pulls_sent += 1;
        let interval = self.ports[port as usize].rate.tx_time((self.tp.mss + self.tp.header) as u64);
        self.pacers[host as usize].next_at = self.now + interval;
        self.enqueue_ctrl(port, pkt);
        self.pull_tick_schedule(host);
    }

    /// Sender: a PULL arrived.
    pub(crate) fn on_pull(&mut self, pkt: PktId) {
        let c = self.pool.get(pkt).conn;
        self.pool.free(pkt);
        self.c.pulls_arrived += 1;
        self.credit[c as usize].credits += 1;
        self.conn_wake(c);
    }
}
