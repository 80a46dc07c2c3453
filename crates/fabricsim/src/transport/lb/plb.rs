//! `plb`: Protective Load Balancing. One entropy per connection, as ECMP, but a connection that
//! sees persistent congestion on its path, or a retransmission timeout, moves to a new random
//! entropy (a new hashed path).
//!
//! **Follows:** Qureshi et al., "PLB: Congestion Signals are Simple and Effective for Network
//! Load Balancing", SIGCOMM 2022 (§3, the repath rule), and spec `smartt-reps.md` §2.13 (the
//! PLB baseline of the SMaRTT-REPS comparisons, whose constants are ASSUMPTIONS in PLB's style).
//!
//! Rule: feedback is grouped into rounds of `round_rtts` base RTTs (the path's idle RTT from
//! [`PathInfo`]). When a round ends, it is *congested* if at least `congested_fraction` of the
//! packets acknowledged in it carried an ECN mark. After `rounds` congested rounds in a row the
//! connection repaths and the count restarts; an uncongested round resets the count. A
//! retransmission timeout repaths at once (PLB's RTO repath) when `repath_on_timeout` is set.
//!
//! **Parameters** (`[transport.lb] name = "plb"`):
//! - `congested_fraction` = 0.5: the PLB paper's K, threshold on the fraction of marked packets
//!   per round (spec §2.13 "≥ 0.5"; the same 50 % is Linux's `tcp_plb_cong_thresh` = 128/256).
//!   A round is congested when the fraction is *at least* K, as in the spec and Linux.
//! - `rounds` = 3: consecutive congested rounds before a repath, the PLB paper's M (spec §2.13;
//!   Linux's `tcp_plb_idle_rehash_rounds` default is also 3).
//! - `round_rtts` = 1.0: round length in base RTTs (spec §2.13 "per RTT round"; PLB counts rounds
//!   of one RTT).
//! - `repath_on_timeout` = true: repath on every retransmission timeout (spec §2.13 "also pick a
//!   new entropy on RTO"; PLB paper's RTO-triggered repathing).
//!
//! **Differences** from PLB as deployed (all deliberate, for the simulated time scales):
//! - `type=deviation`: rounds are fixed-length windows of base RTTs, not TCP's "until the first
//!   packet sent in this round is ACKed". A round ends lazily at the first feedback at or after
//!   its end, and that feedback opens the next round, so a round is never empty.
//! - `type=deviation`: PLB repaths after M rounds only when the connection is idle (nothing in
//!   flight) and forces a repath after a larger N (Linux: 12); like the spec we repath after M
//!   rounds whatever is in flight, since AI flows are never idle.
//! - `type=deviation`: Linux suspends congestion-triggered repaths for 60–120 s after an RTO to
//!   avoid hopping onto black holes; that would disable PLB for the whole of any simulated run,
//!   so there is no suspension.
//! - `type=assumption`: a NACK (trimmed packet) counts as a marked packet in its round: a trim
//!   means a full queue, which would have marked the packet had there been room. Timed-out
//!   packets do not count in a round (they trigger the RTO repath instead).
//! - `type=assumption`: late feedback from the previous path still counts in the current round,
//!   as in PLB (a host cannot tell paths apart); needing M congested rounds in a row absorbs it.
//! - The repath itself happens at the next packet sent, because only `next_entropy` has the
//!   random stream; several timeouts before that packet therefore cause one repath. The new
//!   entropy is redrawn until it differs from the old one.

use super::{EntropyCtx, Feedback, PathSelector};
use crate::error::{Error, Result};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::transport::cc::PathInfo;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "plb";
/// Registry summary.
pub const SUMMARY: &str =
    "protective load balancing: one entropy per connection, a new random one after 3 congested RTT rounds or a timeout";

/// Parameters of `plb`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlbParams {
    /// K: a round is congested when at least this fraction of its packets were ECN-marked.
    pub congested_fraction: f64,
    /// M: consecutive congested rounds that trigger a repath.
    pub rounds: u32,
    /// Round length, in base RTTs of the path.
    pub round_rtts: f64,
    /// Repath on every retransmission timeout.
    pub repath_on_timeout: bool,
}

impl Default for PlbParams {
    fn default() -> Self {
        //= spec smartt-reps.md §2.13 (PLB, ASSUMPTION in the PLB paper's style)
        //# Congested round: ≥ 50 % marked; repath after 3 such rounds in a row, and on RTO.
        PlbParams { congested_fraction: 0.5, rounds: 3, round_rtts: 1.0, repath_on_timeout: true }
    }
}

impl PlbParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.congested_fraction.is_finite() && self.congested_fraction > 0.0 && self.congested_fraction <= 1.0) {
            return Err(Error::invalid(
                "transport.lb.congested_fraction",
                format!("{}: must be a fraction in (0, 1]", self.congested_fraction),
            ));
        }
        if self.rounds == 0 {
            return Err(Error::invalid("transport.lb.rounds", "0: must be at least one round"));
        }
        if !(self.round_rtts.is_finite() && self.round_rtts > 0.0) {
            return Err(Error::invalid(
                "transport.lb.round_rtts",
                format!("{}: must be a positive multiple of the base RTT", self.round_rtts),
            ));
        }
        Ok(())
    }
}

/// The selector of one connection.
#[derive(Clone, Debug)]
pub struct Plb {
    entropy: Entropy,
    k: f64,
    m: u32,
    round_len: Time,
    repath_on_timeout: bool,
    /// Start of the current round; None before the first feedback or right after a repath.
    round_start: Option<Time>,
    /// Packets acknowledged (or NACKed) in the current round.
    round_pkts: u32,
    /// Of which marked (or NACKed).
    round_marked: u32,
    /// Congested rounds in a row.
    congested_rounds: u32,
    /// A repath is due at the next packet.
    repath_pending: bool,
    /// Repaths so far (diagnostics and tests).
    repaths: u32,
}

impl Plb {
    /// A selector for a connection on `path`, with its first entropy drawn from `rng`.
    pub fn new(p: &PlbParams, path: &PathInfo, rng: &mut Rng) -> Self {
        let round_len = (Time((p.round_rtts * path.base_rtt.0 as f64).round() as u64)).max(Time(1));
        Plb {
            entropy: rng.next_u64() as Entropy,
            k: p.congested_fraction,
            m: p.rounds.max(1),
            round_len,
            repath_on_timeout: p.repath_on_timeout,
            round_start: None,
            round_pkts: 0,
            round_marked: 0,
            congested_rounds: 0,
            repath_pending: false,
            repaths: 0,
        }
    }

    /// The entropy in use.
    pub fn entropy(&self) -> Entropy {
        self.entropy
    }

    /// Repaths so far.
    pub fn repaths(&self) -> u32 {
        self.repaths
    }

    /// Closes the current round and applies PLB's rule to it.
    fn end_round(&mut self) {
        //= PLB paper §3; spec §2.13
        //# A round is congested when the marked fraction reaches K; M in a row call for a new path,
        //# one calm round starts the count again.
        let congested = self.round_pkts > 0 && self.round_marked as f64 >= self.k * self.round_pkts as f64;
        if congested {
            self.congested_rounds += 1;
            if self.congested_rounds >= self.m {
                self.repath_pending = true;
                self.congested_rounds = 0;
            }
        } else {
            self.congested_rounds = 0;
        }
        self.round_pkts = 0;
        self.round_marked = 0;
    }

    /// Counts one packet's feedback, first closing the round if its time is up.
    fn count(&mut self, marked: bool, now: Time) {
        match self.round_start {
            None => self.round_start = Some(now),
            Some(start) if now >= start + self.round_len => {
                self.end_round();
                self.round_start = Some(now);
            }
            Some(_) => {}
        }
        self.round_pkts += 1;
        self.round_marked += marked as u32;
    }
}

impl PathSelector for Plb {
    fn next_entropy(&mut self, _ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        if self.repath_pending {
            self.repath_pending = false;
            self.repaths += 1;
            // A fresh flow label that differs from the old one; it may still hash onto the same
            // links, as in PLB, which relies on the next congested rounds to try again.
            let old = self.entropy;
            while self.entropy == old {
                self.entropy = rng.next_u64() as Entropy;
            }
        }
        self.entropy
    }

    fn on_feedback(&mut self, _entropy: Entropy, fb: Feedback, now: Time) {
        match fb {
            Feedback::Ack { ecn } => self.count(ecn, now),
            Feedback::Nack => self.count(true, now),
            Feedback::Timeout => {
                //= PLB paper (RTO-triggered repath); spec §2.13 "also pick a new entropy on RTO"
                //# The path may be broken: leave it now, and judge the new one from scratch.
                if self.repath_on_timeout {
                    self.repath_pending = true;
                    self.congested_rounds = 0;
                    self.round_start = None;
                    self.round_pkts = 0;
                    self.round_marked = 0;
                }
            }
        }
    }
}

impl crate::scheme::Scheme<super::LbBuild> for Plb {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("congested_fraction", 0.0, 1.0), crate::scheme::Limit::new("rounds", 1.0, 1000000.0), crate::scheme::Limit::new("round_rtts", 0.001, 1000.0)];
    type Params = PlbParams;
    fn check(p: &PlbParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &PlbParams, ctx: &mut super::LbBuild) -> Self {
        Plb::new(p, &ctx.path, &mut ctx.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, Bytes};

    const RTT: Time = Time::from_us(10);
    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: None, in_flight: 0 };

    fn plb(p: PlbParams) -> (Plb, Rng) {
        let path = PathInfo { mtu_bytes: Bytes(4096), host_rate: BitsPerSec::from_gbps(400.0), base_rtt: RTT, bdp_bytes: Bytes(500_000), hops: 6, net_base_rtt: RTT, src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 };
        let mut rng = Rng::stream(5, "test", 0);
        let s = Plb::new(&p, &path, &mut rng);
        (s, rng)
    }

    /// Feeds one round starting at `round × RTT`: `pkts` ACKs of which `marked` carry ECN.
    fn feed_round(s: &mut Plb, round: u64, pkts: u32, marked: u32) {
        for i in 0..pkts {
            let t = round * RTT + i as u64 * (RTT / pkts as u64 / 2);
            s.on_feedback(s.entropy, Feedback::Ack { ecn: i < marked }, t);
        }
    }

    /// Sends one packet and reports whether its entropy changed.
    fn repathed(s: &mut Plb, rng: &mut Rng) -> bool {
        let before = s.entropy;
        let e = s.next_entropy(&CTX, rng);
        e != before
    }

    //= type=test
    //# Exactly M congested rounds repath: not after M−1, and the M-th round is judged when it ends.
    #[test]
    fn repaths_after_exactly_m_congested_rounds() {
        let (mut s, mut rng) = plb(PlbParams::default());
        let e0 = s.next_entropy(&CTX, &mut rng);
        assert_eq!(s.next_entropy(&CTX, &mut rng), e0, "one entropy per connection");
        // Rounds 0, 1, 2 all 60 % marked. Round r is judged at the first ACK of round r+1.
        for r in 0..3 {
            feed_round(&mut s, r, 10, 6);
            assert!(!repathed(&mut s, &mut rng), "repathed during round {r}, before 3 congested rounds were complete");
        }
        // The first ACK of round 3 closes round 2, the third congested one.
        s.on_feedback(s.entropy, Feedback::Ack { ecn: false }, 3 * RTT);
        assert!(repathed(&mut s, &mut rng));
        assert_eq!(s.repaths(), 1);
        // The count restarted: the next two congested rounds do not repath again.
        feed_round(&mut s, 3, 10, 10);
        feed_round(&mut s, 4, 10, 10);
        s.on_feedback(s.entropy, Feedback::Ack { ecn: false }, 5 * RTT);
        assert!(!repathed(&mut s, &mut rng));
        assert_eq!(s.repaths(), 1);
    }

    #[test]
    fn exactly_half_marked_is_congested_and_less_is_not() {
        // K = 0.5 is inclusive (spec "≥ 0.5"): 5 of 10 is congested, 4 of 10 is not.
        let (mut s, mut rng) = plb(PlbParams { rounds: 1, ..PlbParams::default() });
        feed_round(&mut s, 0, 10, 4);
        feed_round(&mut s, 1, 10, 5);
        assert!(!repathed(&mut s, &mut rng), "round 0 (40 %) must not repath");
        feed_round(&mut s, 2, 10, 0);
        assert!(repathed(&mut s, &mut rng), "round 1 (50 %) must repath");
    }

    //= type=test
    //# An uncongested round resets the count of congested rounds.
    #[test]
    fn an_uncongested_round_resets_the_count() {
        let (mut s, mut rng) = plb(PlbParams::default());
        let marks = [8, 8, 1, 8, 8, 0];
        for (r, &m) in marks.iter().enumerate() {
            feed_round(&mut s, r as u64, 10, m);
        }
        // Rounds 0–1 congested, 2 calm, 3–4 congested, 5 calm: four congested rounds but never
        // three in a row (without the reset, round 3 would have been the third).
        assert!(!repathed(&mut s, &mut rng));
        assert_eq!(s.repaths(), 0);
        // Rounds 6–8 congested; the first ACK of round 9 closes round 8, the third in a row.
        feed_round(&mut s, 6, 10, 9);
        feed_round(&mut s, 7, 10, 9);
        feed_round(&mut s, 8, 10, 9);
        feed_round(&mut s, 9, 10, 0);
        assert!(repathed(&mut s, &mut rng));
    }

    #[test]
    fn nacks_count_as_marked_packets() {
        let (mut s, mut rng) = plb(PlbParams { rounds: 1, ..PlbParams::default() });
        for i in 0..10 {
            let fb = if i < 6 { Feedback::Nack } else { Feedback::Ack { ecn: false } };
            s.on_feedback(s.entropy, fb, Time(i));
        }
        s.on_feedback(s.entropy, Feedback::Ack { ecn: false }, RTT);
        assert!(repathed(&mut s, &mut rng));
    }

    //= type=test
    //# A timeout repaths at the next packet, once however many packets it declared lost.
    #[test]
    fn repaths_on_timeout() {
        let (mut s, mut rng) = plb(PlbParams::default());
        let e0 = s.next_entropy(&CTX, &mut rng);
        feed_round(&mut s, 0, 10, 9);
        feed_round(&mut s, 1, 10, 9);
        for _ in 0..5 {
            s.on_feedback(e0, Feedback::Timeout, 2 * RTT);
        }
        let e1 = s.next_entropy(&CTX, &mut rng);
        assert_ne!(e1, e0);
        assert_eq!(s.next_entropy(&CTX, &mut rng), e1);
        assert_eq!(s.repaths(), 1);
        // The two congested rounds before the timeout were forgotten: two more do not repath.
        feed_round(&mut s, 3, 10, 9);
        feed_round(&mut s, 4, 10, 9);
        s.on_feedback(e1, Feedback::Ack { ecn: false }, 5 * RTT);
        assert!(!repathed(&mut s, &mut rng));

        let (mut quiet, mut rng) = plb(PlbParams { repath_on_timeout: false, ..PlbParams::default() });
        let e = quiet.next_entropy(&CTX, &mut rng);
        quiet.on_feedback(e, Feedback::Timeout, Time::ZERO);
        assert_eq!(quiet.next_entropy(&CTX, &mut rng), e);
    }

    #[test]
    fn rounds_last_round_rtts_base_rtts() {
        // With 2-RTT rounds and M = 1, a congested first RTT followed by a calm second RTT is
        // one round at 50 % marked: congested.
        let (mut s, mut rng) = plb(PlbParams { rounds: 1, round_rtts: 2.0, ..PlbParams::default() });
        feed_round(&mut s, 0, 10, 10);
        feed_round(&mut s, 1, 10, 0);
        assert!(!repathed(&mut s, &mut rng), "the 2-RTT round is not over yet");
        s.on_feedback(s.entropy, Feedback::Ack { ecn: false }, 2 * RTT);
        assert!(repathed(&mut s, &mut rng));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: PlbParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        assert_eq!(key(PlbParams { congested_fraction: 0.0, ..PlbParams::default() }), "transport.lb.congested_fraction");
        assert_eq!(key(PlbParams { congested_fraction: 1.5, ..PlbParams::default() }), "transport.lb.congested_fraction");
        assert_eq!(key(PlbParams { rounds: 0, ..PlbParams::default() }), "transport.lb.rounds");
        assert_eq!(key(PlbParams { round_rtts: 0.0, ..PlbParams::default() }), "transport.lb.round_rtts");
        assert_eq!(key(PlbParams { round_rtts: f64::INFINITY, ..PlbParams::default() }), "transport.lb.round_rtts");
        assert!(PlbParams::default().validate().is_ok());
    }
}
