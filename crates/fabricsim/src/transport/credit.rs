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
//! This file holds the policy and the per-connection and per-NIC state; the handlers that
//! spend credits and pace PULLs are in `engine/glue/credit.rs`.

use crate::error::{Error, Result};
use crate::ids::ConnId;
use crate::scheme::NoParams;
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
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("unsolicited_bdp", 0.001, 1000.0)];
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
    /// PULLs that arrived or were lost on the way (with `pulls_sent`: whether one is still
    /// on its way).
    pub pulls_settled: u32,
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
    pub(crate) fn owed(&self) -> bool {
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

