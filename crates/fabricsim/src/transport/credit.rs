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
//! EQDS flow would, and so does one left with data to send and nothing that could still give it
//! credit — nothing in flight, no PULL owed by its receiver or on its way (retransmissions that
//! no trimmed header or timeout accounted for spend credits meant for new data, which the
//! receiver never pulls again: without this, such a connection waited forever with no event
//! left, found by the fuzzer); and retransmissions after a timeout go unsolicited (the timeout
//! acts as the probe), so a connection whose every packet was lost cannot wait forever for
//! credit.
//!
//! The connection's congestion control still applies on top (`inflight + size ≤ cwnd`): with
//! `cc = "line_rate"` this is vanilla EQDS (no sender CC); with `smartt` or `mprdma` it is the
//! paper's EQDS + SMaRTT / EQDS + MPRDMA of Fig. 17. Paths come from the connection's path
//! selector as for every other scheme (REPS in the paper).
//!
//! Deviation (documented): the pull pacer spaces PULLs by the serialization time of a full
//! data packet at the receiver's link rate and does not account for PULLs queued behind ACKs on
//! the NIC's control queue; EQDS's pacer works the same way at the granularity the spec gives.
//!
//! `rccc` is Ultra Ethernet's receiver credit congestion control as htsim_uec runs it
//! (`experiments/htsim-parity/SPEC.md` §2, uec-spec §2), on the same machinery: a speculative
//! allowance of 1.5 BDP (the configured max window), dropped unspent at the connection's first
//! ACK, NACK or PULL ("stop speculating"); PULLs that grant 4 packets each, paced at 0.99 of the
//! receiver's line rate (one PULL per 4 packet times / 0.99). Deviations (uec-spec §2.5): credit
//! in whole packets, no "slow pulls" to connections without demand, pull targets as EQDS's.
//!
//! EQDS takes htsim_eqds's two knobs too (uec-spec §8): `unsolicited_bytes`, an absolute allowance
//! (htsim: its window, 64 packets), and `pull_rate`, the pacer's fraction of line rate (htsim
//! 0.99; default 1 keeps earlier results).
//!
//! This file holds the policy, the per-connection and per-NIC state and their handlers
//! ([`Credits`]), which spend credits and pace PULLs.

use super::connection::Connection;
use super::hosts::TransportParams;
use crate::error::{Error, Result};
use crate::ids::{ConnId, NodeId, PktId, PortId};
use crate::kernel::packet::{Packet, PktKind};
use crate::kernel::queue::EventKind;
use crate::kernel::Kernel;
use crate::scheme::NoParams;
use crate::units::{BitsPerSec, Bytes, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

crate::scheme_family! {
    /// Scenario selection (`[transport.credit]`, `name = "none" | "eqds" | "rccc"`).
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
        /// Ultra Ethernet RCCC (uec-spec §2).
        Rccc => Rccc,
    }
}

/// What a credit policy is built from: the connection's path BDP and full packet size.
#[derive(Clone, Copy, Debug)]
pub struct CreditBuild {
    /// Path BDP in bytes.
    pub bdp_bytes: Bytes,
    /// Wire bytes of a full packet.
    pub mtu_bytes: Bytes,
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
    /// Unsolicited allowance in bytes, rounded up to whole packets; wins over `unsolicited_bdp`
    /// (htsim_eqds: the window, `-cwnd` 64 packets; uec-spec §8). Unset by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsolicited_bytes: Option<u64>,
    /// The pull pacer's rate as a fraction of the receiver's line rate (htsim_eqds: 0.99;
    /// uec-spec §8). Default 1 (left out of resolved scenarios while 1).
    #[serde(skip_serializing_if = "is_one")]
    pub pull_rate: f64,
}

fn is_one(v: &f64) -> bool {
    *v == 1.0
}

impl Default for EqdsParams {
    fn default() -> Self {
        EqdsParams { unsolicited_bdp: 1.0, unsolicited_bytes: None, pull_rate: 1.0 }
    }
}

/// Packets of an allowance of `bdps` path BDPs, or of `bytes` when given.
fn allowance_packets(bdps: f64, bytes: Option<u64>, ctx: &CreditBuild) -> u32 {
    let bytes = bytes.map_or(bdps * ctx.bdp_bytes.0 as f64, |b| b as f64);
    (bytes / ctx.mtu_bytes.0 as f64).ceil() as u32
}

/// `eqds`: a connection's unsolicited allowance, in packets (the pacer's rate is run-wide:
/// [`CreditConfig::policy`]).
#[derive(Clone, Copy, Debug)]
pub struct Eqds {
    unsolicited_packets: u32,
}

impl crate::scheme::Scheme<CreditBuild> for Eqds {
    const NAME: &'static str = "eqds";
    const SUMMARY: &'static str = "EQDS: 1 BDP unsolicited, then one receiver-paced PULL credit per packet";
    const LIMITS: &'static [crate::scheme::Limit] = &[
        crate::scheme::Limit::new("unsolicited_bdp", 0.001, 1000.0),
        crate::scheme::Limit::new("unsolicited_bytes", 1.0, 1099511627776.0),
        crate::scheme::Limit::new("pull_rate", 0.01, 1.0),
    ];
    type Params = EqdsParams;
    fn check(p: &EqdsParams, key: &str) -> Result<()> {
        if !(p.unsolicited_bdp.is_finite() && p.unsolicited_bdp >= 0.0) {
            return Err(Error::invalid(format!("{key}.unsolicited_bdp"), format!("{}: must be a non-negative number of BDPs", p.unsolicited_bdp)));
        }
        Ok(())
    }
    fn build(p: &EqdsParams, ctx: &mut CreditBuild) -> Self {
        Eqds { unsolicited_packets: allowance_packets(p.unsolicited_bdp, p.unsolicited_bytes, ctx) }
    }
}

/// Parameters of `rccc` (uec-spec §2, htsim_uec's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RcccParams {
    /// Speculative allowance per connection, in BDPs of its path (htsim: the configured max
    /// window, 1.5 BDP).
    pub unsolicited_bdp: f64,
    /// Speculative allowance in bytes (rounded up to packets); wins over `unsolicited_bdp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsolicited_bytes: Option<u64>,
    /// Packets one PULL grants (htsim `_mtus_per_pull`: 4).
    pub credit_per_pull: u32,
    /// The pull pacer's rate as a fraction of the receiver's line rate (htsim: 0.99).
    pub pull_rate: f64,
    /// Drop the unspent speculative allowance at the connection's first ACK, NACK or PULL
    /// (htsim `stopSpeculating`: on).
    pub stop_speculating: bool,
}

impl Default for RcccParams {
    fn default() -> Self {
        //= uec-spec §2.1–§2.2 (htsim initRccc, UecSink::_mtus_per_pull, main_uec pull rate 0.99)
        RcccParams { unsolicited_bdp: 1.5, unsolicited_bytes: None, credit_per_pull: 4, pull_rate: 0.99, stop_speculating: true }
    }
}

/// `rccc`: a connection's speculative allowance, in packets.
#[derive(Clone, Copy, Debug)]
pub struct Rccc {
    unsolicited_packets: u32,
}

impl crate::scheme::Scheme<CreditBuild> for Rccc {
    const NAME: &'static str = "rccc";
    const SUMMARY: &'static str = "RCCC (Ultra Ethernet): 1.5 BDP speculative, then receiver-paced PULLs of 4 packets at 0.99 line rate";
    const LIMITS: &'static [crate::scheme::Limit] = &[
        crate::scheme::Limit::new("unsolicited_bdp", 0.0, 1000.0),
        crate::scheme::Limit::new("unsolicited_bytes", 1.0, 1099511627776.0),
        crate::scheme::Limit::new("credit_per_pull", 1.0, 1024.0),
        crate::scheme::Limit::new("pull_rate", 0.01, 1.0),
    ];
    type Params = RcccParams;
    fn build(p: &RcccParams, ctx: &mut CreditBuild) -> Self {
        Rccc { unsolicited_packets: allowance_packets(p.unsolicited_bdp, p.unsolicited_bytes, ctx) }
    }
}

/// How the receivers' pull pacers and the senders treat credit, the same for every connection.
#[derive(Clone, Copy, Debug)]
pub struct CreditPolicy {
    /// Packets one PULL grants (at most what is owed).
    pub credit_per_pull: u32,
    /// The pacer's rate as a fraction of the receiver's line rate.
    pub pull_rate: f64,
    /// Drop the unspent unsolicited allowance at the first feedback.
    pub stop_speculating: bool,
}

impl CreditConfig {
    /// Whether senders need credits.
    pub fn enabled(&self) -> bool {
        !matches!(self, CreditConfig::None(_))
    }

    /// The run-wide part of the policy.
    pub fn policy(&self) -> CreditPolicy {
        match self {
            CreditConfig::None(_) => CreditPolicy { credit_per_pull: 1, pull_rate: 1.0, stop_speculating: false },
            CreditConfig::Eqds(p) => CreditPolicy { credit_per_pull: 1, pull_rate: p.pull_rate, stop_speculating: false },
            CreditConfig::Rccc(p) => CreditPolicy { credit_per_pull: p.credit_per_pull, pull_rate: p.pull_rate, stop_speculating: p.stop_speculating },
        }
    }
}

impl AnyCredit {
    /// Packets a fresh connection may send before it needs credit (`u32::MAX`: no limit).
    pub fn unsolicited_packets(&self) -> u32 {
        match self {
            AnyCredit::None(_) => u32::MAX,
            AnyCredit::Eqds(e) => e.unsolicited_packets,
            AnyCredit::Rccc(r) => r.unsolicited_packets,
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
    /// Sender: credits (packets granted by PULLs) received and not spent.
    pub credits: u32,
    /// Sender: the unsolicited allowance is speculative and not yet stopped (uec-spec §2.1).
    pub speculating: bool,
    /// Sender: credits of the PULLs that arrived or were lost on the way, in packets (with
    /// `pulls_sent`: whether a PULL is still on its way).
    pub pulls_settled: u32,
    /// Receiver: highest pull target seen.
    pub target_seen: u32,
    /// Receiver: trimmed headers seen (each adds one to the target).
    pub trims_seen: u32,
    /// Receiver: credits granted by the PULLs sent, in packets.
    pub pulls_sent: u32,
    /// Receiver: whether the connection is in its host's pull queue.
    pub queued: bool,
}

impl CreditState {
    /// A connection with an allowance of `allowance` packets.
    pub fn new(allowance: u32) -> Self {
        CreditState { allowance, unsolicited_left: allowance, granted: allowance, speculating: true, ..Default::default() }
    }

    /// Sender: starts a fresh unsolicited allowance of `packets` (a message posted on an idle
    /// connection, or one left with nothing that could still give it credit).
    pub(crate) fn start_allowance(&mut self, packets: u32) {
        self.unsolicited_left = packets;
        self.granted += packets;
        self.speculating = true;
    }

    /// Receiver side: credits still owed, in packets.
    pub(crate) fn owed(&self) -> u32 {
        (self.target_seen + self.trims_seen).saturating_sub(self.pulls_sent)
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

/// The hosts' credit machinery: each connection's credit state, the run's policy and each
/// receiver NIC's pull pacer, with the handlers of both sides (EQDS: Olteanu et al., NSDI'22,
/// as in smartt-reps spec §2.14.1, §2.14.2; RCCC: uec-spec §2). The sender spends credits; the
/// receiver's pull pacer sends one PULL granting up to `credit_per_pull` packets (EQDS: 1) per
/// that many MTU serialization times at `pull_rate` × its line rate, round-robin over the
/// connections owed credit. The handlers get the [`Kernel`] and read the connections' sending
/// halves; a PULL to send or a connection to wake goes back to the engine.
#[derive(Debug)]
pub struct Credits {
    /// Whether senders need receiver credits (EQDS, RCCC).
    pub on: bool,
    /// Per-connection credit state (empty when credits are off: nothing reads it then).
    pub state: Vec<CreditState>,
    /// How PULLs grant credit and whether allowances are speculative (run-wide).
    pub policy: CreditPolicy,
    /// Per-host pull pacers (empty when credits are off).
    pub pacers: Vec<PullPacer>,
}

impl Credits {
    /// Sender: whether credits allow `c` to send a packet now.
    #[inline]
    pub fn allows(&self, c: ConnId) -> bool {
        let s = &self.state[c.idx()];
        s.unsolicited_left > 0 || s.credits > 0
    }

    /// Sender: `c` sends a packet; spend the allowance or a credit.
    #[inline]
    pub fn spend(&mut self, c: ConnId) {
        let s = &mut self.state[c.idx()];
        if s.unsolicited_left > 0 {
            s.unsolicited_left -= 1;
        } else {
            debug_assert!(s.credits > 0, "sent without credit");
            s.credits -= 1;
        }
    }

    /// Sender: a message was just posted on `sender` (connection `c`); an idle connection
    /// starts a fresh allowance.
    pub fn on_post(&mut self, c: ConnId, sender: &Connection) {
        let s = &mut self.state[c.idx()];
        if sender.in_flight == 0 && s.credits == 0 && s.unsolicited_left == 0 {
            s.start_allowance(s.allowance);
        }
    }

    /// Sender: the first ACK, NACK or PULL of `c` (whose sending half is `sender`) since its
    /// allowance was granted. With `stop_speculating` (RCCC) the unspent allowance is dropped,
    /// and the packets it would have covered join the pull target (uec-spec §2.1).
    pub fn on_feedback(&mut self, k: &mut Kernel, c: ConnId, sender: &Connection) {
        let s = &mut self.state[c.idx()];
        if !(self.policy.stop_speculating && s.speculating) {
            return;
        }
        s.speculating = false;
        s.granted -= s.unsolicited_left;
        s.unsolicited_left = 0;
        //= uec-spec §2.5; type=assumption
        //# With nothing in flight no data header will carry the larger pull target: the
        //# receiver learns it at once (only a connection that stopped sending can be stuck).
        if sender.in_flight == 0 {
            self.on_data(k, c, sender, false);
        }
    }

    /// Sender: `c` (whose sending half is `sender`) has a packet to send and no credit for it.
    /// When nothing could still give it credit — nothing in flight (no ACK or timeout to come),
    /// no PULL owed by its receiver or on its way — it starts a fresh unsolicited allowance, as
    /// an idle connection does when a message is posted (see the module doc); returns whether
    /// it may send now.
    pub fn revive(&mut self, c: ConnId, sender: &Connection) -> bool {
        let s = &mut self.state[c.idx()];
        if sender.in_flight != 0 || s.queued || s.pulls_settled != s.pulls_sent {
            return false;
        }
        s.start_allowance(s.allowance.max(1));
        true
    }

    /// Sender: a timeout declared `n` packets of `c` lost; they are resent unsolicited.
    pub fn on_timeout(&mut self, c: ConnId, n: u32) {
        self.state[c.idx()].unsolicited_left += n;
    }

    /// The network lost a PULL of `c` granting `credits`: they are settled, so the sender may
    /// start afresh ([`Credits::revive`]).
    pub fn pull_lost(&mut self, c: ConnId, credits: u32) {
        self.state[c.idx()].pulls_settled += credits;
    }

    /// Receiver: a data packet (`trimmed`: a trimmed header) of `c`, whose sending half is
    /// `sender`, arrived.
    pub fn on_data(&mut self, k: &mut Kernel, c: ConnId, sender: &Connection, trimmed: bool) {
        let s = &mut self.state[c.idx()];
        // Credits needed = posted packets beyond the unsolicited allowance (+ trims below).
        s.target_seen = s.target_seen.max(sender.n_pkts.saturating_sub(s.granted));
        if trimmed {
            s.trims_seen += 1;
        }
        if s.owed() > 0 && !s.queued {
            s.queued = true;
            let host = sender.dst;
            self.pacers[host.idx()].queue.push_back(c);
            self.schedule_tick(k, host);
        }
    }

    /// Schedules `host`'s pacer to send its next PULL, if it has a connection owed credit and
    /// no tick pending.
    pub fn schedule_tick(&mut self, k: &mut Kernel, host: NodeId) {
        let p = &mut self.pacers[host.idx()];
        if !p.pending && !p.queue.is_empty() {
            p.pending = true;
            let at = p.next_at.max(k.now);
            k.q.push(at, EventKind::PullTick, host.0);
        }
    }

    /// The pacer of `host`, whose NIC port is `port` at `rate`, may send one PULL: returns it
    /// (the engine sends it, then calls [`Credits::schedule_tick`]). `conns` are the
    /// connections' sending halves, `tp` the transport's constants.
    pub fn on_pull_tick(&mut self, k: &mut Kernel, host: NodeId, conns: &impl crate::kernel::store::Store<super::Connection>, tp: &TransportParams, port: PortId, rate: BitsPerSec) -> Option<PktId> {
        self.pacers[host.idx()].pending = false;
        let c = self.pacers[host.idx()].queue.pop_front()?;
        let policy = self.policy;
        let s = &mut self.state[c.idx()];
        //= uec-spec §2.2 (htsim UecSink::pull: grant up to the target, never beyond)
        let grant = s.owed().min(policy.credit_per_pull);
        s.pulls_sent += grant;
        if s.owed() > 0 {
            self.pacers[host.idx()].queue.push_back(c);
        } else {
            s.queued = false;
        }
        let conn = &conns[c.idx()];
        let pkt = k.pool.alloc(Packet {
            conn: c,
            src: conn.dst,
            dst: conn.src,
            size: tp.ack_bytes,
            kind: PktKind::Pull,
            // A PULL's sequence field carries the packets it grants.
            seq: grant,
            port,
            ..Packet::default()
        });
        let mut interval = rate.tx_time(Bytes(grant as u64 * (tp.mss + tp.header) as u64));
        if policy.pull_rate != 1.0 {
            //= uec-spec §2.2, §8 (htsim pull_rate_modifier 0.99)
            interval = Time((interval.0 as f64 / policy.pull_rate).round() as u64);
        }
        self.pacers[host.idx()].next_at = k.now + interval;
        Some(pkt)
    }

    /// Sender: PULL `pkt` arrived; returns its connection, which the engine wakes. `conns` are
    /// the connections' sending halves.
    pub fn on_pull(&mut self, k: &mut Kernel, pkt: PktId, conns: &impl crate::kernel::store::Store<super::Connection>) -> ConnId {
        let (c, grant) = (k.pool.get(pkt).conn, k.pool.get(pkt).seq);
        k.pool.free(pkt);
        let s = &mut self.state[c.idx()];
        s.credits += grant;
        s.pulls_settled += grant;
        self.on_feedback(k, c, &conns[c.idx()]);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILD: CreditBuild = CreditBuild { bdp_bytes: Bytes(500_000), mtu_bytes: Bytes(4096) };

    /// One connection from host 0 to host 1 with `posted` packets and `in_flight` bytes, its
    /// credit state granted an unsolicited allowance of `allowance` packets, under `policy`.
    fn one_connection(posted: u32, in_flight: u64, allowance: u32, policy: CreditPolicy) -> (Credits, Vec<Connection>, Kernel) {
        let mut conn = crate::transport::recovery::testing::Board::new(0, 1).conn;
        conn.n_pkts = posted;
        conn.in_flight = in_flight;
        let credits = Credits { on: true, state: vec![CreditState::new(allowance)], policy, pacers: (0..2).map(|_| PullPacer::default()).collect() };
        let k = Kernel::new(crate::kernel::queue::EventQueue::new(), crate::kernel::packet::PacketPool::with_capacity(4), Default::default());
        (credits, vec![conn], k)
    }

    const EQDS: CreditPolicy = CreditPolicy { credit_per_pull: 1, pull_rate: 1.0, stop_speculating: false };

    fn tp() -> TransportParams {
        TransportParams { mss: 936, header: 64, ack_bytes: 64, ack_every: 1, ack_coalesce_bytes: 0, ack_on_ce: false, rto: Time(1), ect: true, signals: Default::default(), rtt_sample_stride: 0 }
    }

    //= type=test; smartt-reps spec §2.14.1: the receiver pulls the backlog beyond the allowance,
    //# plus one per trimmed header, one PULL per MTU time at line rate
    #[test]
    fn the_receiver_pulls_what_is_posted_beyond_the_allowance_one_mtu_time_apart() {
        let (mut cr, conns, mut k) = one_connection(5, 1000, 3, EQDS);
        cr.on_data(&mut k, ConnId(0), &conns[0], false);
        assert_eq!(cr.state[0].owed(), 2, "5 posted, 3 unsolicited");
        cr.on_data(&mut k, ConnId(0), &conns[0], true);
        assert_eq!(cr.state[0].owed(), 3, "a trimmed header's retransmission needs a credit");
        assert_eq!(cr.pacers[1].queue, [ConnId(0)], "queued once at the receiver's (host 1's) pacer");
        let rate = crate::units::BitsPerSec(8_000_000_000); // 1 byte per ns
        let pull = cr.on_pull_tick(&mut k, NodeId(1), &conns, &tp(), PortId(9), rate).expect("a PULL");
        let p = *k.pool.get(pull);
        assert_eq!((p.kind, p.src, p.dst, p.seq, p.port, p.size), (PktKind::Pull, NodeId(1), NodeId(0), 1, PortId(9), 64));
        assert_eq!(cr.pacers[1].next_at, Time(1000 * 1000), "one 1000-byte MTU at 1 B/ns, in ps");
        assert_eq!(cr.state[0].pulls_sent, 1);
        // The PULL reaches the sender: one credit; a lost one is settled without a credit.
        assert_eq!(cr.on_pull(&mut k, pull, &conns), ConnId(0));
        assert_eq!((cr.state[0].credits, cr.state[0].pulls_settled), (1, 1));
        cr.pull_lost(ConnId(0), 1);
        assert_eq!((cr.state[0].credits, cr.state[0].pulls_settled), (1, 2));
    }

    #[test]
    fn spending_takes_the_allowance_first_and_a_stuck_sender_revives_only_when_nothing_can_credit_it() {
        let (mut cr, conns, _k) = one_connection(5, 0, 1, EQDS);
        assert!(cr.allows(ConnId(0)));
        cr.spend(ConnId(0));
        assert!(!cr.allows(ConnId(0)));
        assert!(cr.revive(ConnId(0), &conns[0]), "nothing in flight, no PULL owed or on its way");
        let (mut cr, conns, _k) = one_connection(5, 1000, 1, EQDS);
        cr.spend(ConnId(0));
        assert!(!cr.revive(ConnId(0), &conns[0]), "an ACK is still to come");
    }

    //= uec-spec §2.5, §8; type=test
    #[test]
    fn allowances_in_bdps_or_bytes_and_policies() {
        let e = CreditConfig::Eqds(EqdsParams::default()).build(&mut BUILD.clone());
        assert_eq!(e.unsolicited_packets(), 123, "⌈500 000 / 4096⌉");
        let e = CreditConfig::Eqds(EqdsParams { unsolicited_bytes: Some(64 * 4096), ..Default::default() }).build(&mut BUILD.clone());
        assert_eq!(e.unsolicited_packets(), 64, "htsim_eqds's 64-packet window");
        let r = CreditConfig::Rccc(RcccParams::default());
        assert_eq!(r.build(&mut BUILD.clone()).unsolicited_packets(), 184, "⌈1.5 × 500 000 / 4096⌉");
        let p = r.policy();
        assert_eq!((p.credit_per_pull, p.pull_rate, p.stop_speculating), (4, 0.99, true));
        let p = CreditConfig::Eqds(EqdsParams::default()).policy();
        assert_eq!((p.credit_per_pull, p.pull_rate, p.stop_speculating), (1, 1.0, false));
        let err = toml::from_str::<CreditConfig>("name = \"rccc\"\npull_rate = 2.0").unwrap().validate().unwrap_err();
        assert!(err.to_string().contains("transport.credit.pull_rate"), "{err}");
    }
}

