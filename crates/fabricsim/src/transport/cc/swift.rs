//! `swift`: Swift, a delay-based window controller: additive increase while the RTT is below a
//! target delay, a multiplicative decrease proportional to how far above the target it is (at
//! most one per RTT), and pacing once the window falls below one packet.
//!
//! **Follows:** Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in
//! the Datacenter", SIGCOMM 2020: Alg. 1 (§3.1, window update on ACK, fast recovery and
//! retransmission timeout), §3.3 (a window below one packet becomes a pacing delay of rtt/cwnd),
//! §3.5 (target delay scaled by path length and by flow count through the window); spec
//! `smartt-reps.md` §2.14.3 (Swift as a SMaRTT-REPS baseline) and §2.14 (bounds and initial window
//! common to the window baselines); spec `lb-ai-training.md` §2.2 CC-SWIFT (htsim's Swift model,
//! the load-balancing study's comparison point), whose constants are available as parameters.
//! Swift's split of fabric and endpoint delay is not modelled: hosts add no delay, so the whole
//! RTT is fabric delay. Swift ignores ECN (spec §2.14.3); the path selector may still use it.
//!
//! Per event, with `mtu` = a full packet's wire bytes and `size` the newly acknowledged wire
//! bytes (fabricsim windows count wire bytes):
//! - ACK with delay `d` = RTT sample below the target `T`: `cwnd += ai·mtu·size/cwnd` (`+ai`
//!   packets per RTT), or `cwnd += ai·size` while the window is below one packet;
//! - ACK with `d > T`, if no decrease happened within the last smoothed RTT:
//!   `cwnd ×= max(1 − beta·(d − T)/d, 1 − max_mdf)`;
//! - NACK (a trimmed packet, Swift's fast recovery): `cwnd ×= 1 − max_mdf` if a decrease is allowed;
//! - retransmission timeout: the same, or the minimum window once `retx_reset_threshold`
//!   timeouts came in a row (no ACK or NACK in between);
//! - then clamp to `[min_cwnd_pkts·mtu, max_cwnd]`; below one packet the sender is paced at
//!   `cwnd/srtt`, i.e. one full packet every `srtt·mtu/cwnd`.
//!
//! Target delay `T = base_target + hops·h + fs(cwnd)` (Swift §3.5), where
//! `fs(cwnd) = clamp(α/√cwnd_pkts + β_fs, 0, fs_range)`, `α = fs_range/(1/√fs_min − 1/√fs_max)`,
//! `β_fs = −α/√fs_max`: a flow with a small window (many competitors) tolerates more queueing.
//!
//! **Parameters** (`[transport.cc] name = "swift"`); the defaults reproduce the SMaRTT-REPS
//! configuration, the load-balancing study's values are given beside them:
//! - `target_brtt` = 1.5: base target as a multiple of the connection's base RTT, used unless
//!   `base_target_us` is set (spec smartt-reps §2.14.3 ASSUMPTION: the same 1.5·brtt(H) target as
//!   SMaRTT, as the authors' reference implementation ran Swift). The base RTT is per path, so
//!   this target already grows with the hop count.
//! - `base_target_us` = unset: an absolute base target in µs (lb-ai-training §2.2 / htsim: 20).
//! - `h_us` = 0: per-hop target in µs (lb-ai-training §2.2 / htsim: base target / 6.55 ≈ 3.05 with
//!   a 20 µs base target). 0 by default because `target_brtt` already scales with the path.
//! - `flow_scaling` = false: add the flow-scaling term `fs` (spec smartt-reps §2.14.3: disabled
//!   by default; Swift §3.5 and htsim enable it).
//! - `fs_range_base_target` = 5: `fs_range` as a multiple of the base target (spec smartt-reps
//!   §2.14.3 option, lb-ai-training §2.2, htsim).
//! - `fs_min_cwnd_pkts` = 0.1, `fs_max_cwnd_pkts` = 100: windows (packets) at which `fs` reaches
//!   `fs_range` and 0 (Swift §3.5; same in both specs and htsim).
//! - `ai` = 1: additive increase, packets per RTT (Swift Alg. 1; both specs).
//! - `beta` = 0.8: multiplicative-decrease gain (both specs; htsim marks it a guess).
//! - `max_mdf` = 0.5: largest fraction cut in one decrease (both specs; htsim).
//! - `retx_reset_threshold` = 5: consecutive timeouts that reset the window to its minimum
//!   (Swift Alg. 1 RETX_RESET_THRESHOLD; value from lb-ai-training §2.2 / htsim).
//! - `min_cwnd_pkts` = 1: smallest window in packets (spec smartt-reps §2.14: window baselines
//!   clamped to [1 MTU, 1.25 BDP], hence "no pacing needed"; lb-ai-training §2.2: 0.001, which
//!   lets the window fall below a packet and pacing take over as in Swift §3.3).
//! - `max_cwnd_bdp` = 1.25: largest window in path BDPs (spec smartt-reps §2.14).
//! - `max_cwnd_pkts` = unset: largest window in packets, overriding `max_cwnd_bdp`
//!   (lb-ai-training §2.2 / htsim: 1000).
//! - `init_cwnd_bdp` = 1.25: initial window in path BDPs (spec smartt-reps §2.14, §2.15 U9;
//!   lb-ai-training §2.2 starts at the fair share, 1/F of a BDP for F flows per link).
//!
//! The smoothed RTT (`srtt`) that paces windows below one packet and spaces decreases is an
//! EWMA with gain 1/8 (RFC 6298, as htsim's Swift), seeded with the path's base RTT.
//!
//! **Differences:**
//! - Timeouts decrease only if a decrease is allowed this RTT, as in Swift Alg. 1; spec
//!   smartt-reps §2.14.3 writes the cut without that gate (the spec restates the algorithm
//!   briefly; the paper's rule is kept, `type=deviation`).
//! - Swift Alg. 1 restarts the decrease timer whenever an event leaves the window no larger
//!   than before (including an increase clamped at the maximum); here only actual decreases
//!   restart it (lb-ai-training §2.2's pseudo-code), so a window pinned at its cap can still
//!   react at once when the delay first exceeds the target.
//! - A delay exactly equal to the target neither grows nor shrinks the window (Swift's decrease
//!   factor is exactly 1 there) and does not restart the decrease timer.
//! - The SMaRTT-REPS paper configured Swift only as "target 50 % over base RTT" with trimming and
//!   REPS (paper §4, §5; spec §5.3); nothing else it says about Swift contradicts the spec.

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes, SEC, Time, US};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "swift";
/// Registry summary.
pub const SUMMARY: &str =
    "Swift: delay-based AIMD toward a hop/flow-scaled target delay, one decrease per RTT, pacing below one packet";

/// Parameters of `swift`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwiftParams {
    /// Base target delay as a multiple of the path's base RTT (used unless `base_target_us`).
    pub target_brtt: f64,
    /// Absolute base target delay in µs; overrides `target_brtt`.
    pub base_target_us: Option<f64>,
    /// Target delay added per hop (link, one way), µs.
    pub h_us: f64,
    /// Whether the flow-scaling term is added to the target.
    pub flow_scaling: bool,
    /// `fs_range`, the largest flow-scaling term, as a multiple of the base target.
    pub fs_range_base_target: f64,
    /// Window (packets) at or below which the flow-scaling term is `fs_range`.
    pub fs_min_cwnd_pkts: f64,
    /// Window (packets) at or above which the flow-scaling term is 0.
    pub fs_max_cwnd_pkts: f64,
    /// Additive increase, packets per RTT.
    pub ai: f64,
    /// Multiplicative-decrease gain β.
    pub beta: f64,
    /// Largest fraction of the window one decrease removes.
    pub max_mdf: f64,
    /// Consecutive timeouts after which the window drops to its minimum.
    pub retx_reset_threshold: u32,
    /// Smallest window, in full packets (may be below 1: then the sender is paced).
    pub min_cwnd_pkts: f64,
    /// Largest window, in path BDPs.
    pub max_cwnd_bdp: f64,
    /// Largest window in packets; overrides `max_cwnd_bdp`.
    pub max_cwnd_pkts: Option<f64>,
    /// Initial window, in path BDPs.
    pub init_cwnd_bdp: f64,
}

impl Default for SwiftParams {
    fn default() -> Self {
        //= spec smartt-reps.md §2.14.3 (Swift), §2.14 (common window bounds and start)
        //# Target 1.5 base RTTs, no flow scaling; ai 1, β 0.8, max_mdf 0.5; window in [1 MTU, 1.25 BDP].
        SwiftParams {
            target_brtt: 1.5,
            base_target_us: None,
            h_us: 0.0,
            flow_scaling: false,
            fs_range_base_target: 5.0,
            fs_min_cwnd_pkts: 0.1,
            fs_max_cwnd_pkts: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            retx_reset_threshold: 5,
            min_cwnd_pkts: 1.0,
            max_cwnd_bdp: 1.25,
            max_cwnd_pkts: None,
            init_cwnd_bdp: 1.25,
        }
    }
}

fn positive(key: &str, v: f64, what: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!("transport.cc.{key}"), format!("{v}: must be a positive {what}")))
    }
}

impl SwiftParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.target_brtt.is_finite() && self.target_brtt >= 1.0) {
            return Err(Error::invalid(
                "transport.cc.target_brtt",
                format!("{}: must be at least 1 (a target below the base RTT can never be met)", self.target_brtt),
            ));
        }
        if let Some(t) = self.base_target_us {
            positive("base_target_us", t, "delay in µs")?;
        }
        if !(self.h_us.is_finite() && self.h_us >= 0.0) {
            return Err(Error::invalid("transport.cc.h_us", format!("{}: must be a delay ≥ 0 µs", self.h_us)));
        }
        if !(self.fs_range_base_target.is_finite() && self.fs_range_base_target >= 0.0) {
            return Err(Error::invalid(
                "transport.cc.fs_range_base_target",
                format!("{}: must be ≥ 0 (a multiple of the base target)", self.fs_range_base_target),
            ));
        }
        positive("fs_min_cwnd_pkts", self.fs_min_cwnd_pkts, "number of packets")?;
        positive("fs_max_cwnd_pkts", self.fs_max_cwnd_pkts, "number of packets")?;
        if self.fs_max_cwnd_pkts <= self.fs_min_cwnd_pkts {
            return Err(Error::invalid(
                "transport.cc.fs_max_cwnd_pkts",
                format!("{}: must exceed fs_min_cwnd_pkts ({})", self.fs_max_cwnd_pkts, self.fs_min_cwnd_pkts),
            ));
        }
        positive("ai", self.ai, "number of packets per RTT")?;
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(Error::invalid("transport.cc.beta", format!("{}: must be in (0, 1]", self.beta)));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err(Error::invalid("transport.cc.max_mdf", format!("{}: must be in (0, 1)", self.max_mdf)));
        }
        if self.retx_reset_threshold == 0 {
            return Err(Error::invalid("transport.cc.retx_reset_threshold", "0: must be at least 1 timeout"));
        }
        positive("min_cwnd_pkts", self.min_cwnd_pkts, "number of packets")?;
        positive("max_cwnd_bdp", self.max_cwnd_bdp, "multiple of the BDP")?;
        if let Some(m) = self.max_cwnd_pkts {
            positive("max_cwnd_pkts", m, "number of packets")?;
            if m < self.min_cwnd_pkts {
                return Err(Error::invalid(
                    "transport.cc.max_cwnd_pkts",
                    format!("{m}: must not be below min_cwnd_pkts ({})", self.min_cwnd_pkts),
                ));
            }
        }
        positive("init_cwnd_bdp", self.init_cwnd_bdp, "multiple of the BDP")?;
        Ok(())
    }
}

/// Swift §3.5 flow scaling: `fs(cwnd) = clamp(alpha/√cwnd_pkts + beta, 0, range)`, in ps.
#[derive(Clone, Copy, Debug)]
struct FlowScaling {
    alpha: f64,
    beta: f64,
    range: f64,
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Swift {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    retx_reset_threshold: u32,
    /// Full packet, wire bytes.
    mtu: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    /// `base_target + hops·h`, ps.
    fixed_target: f64,
    flow_scaling: Option<FlowScaling>,

    /// Congestion window, wire bytes.
    cwnd: f64,
    /// Smoothed RTT, ps.
    srtt: Time,
    /// When the window last decreased; `None` before the first decrease.
    last_decrease: Option<Time>,
    /// Timeouts in a row without an ACK or NACK in between.
    retransmits: u32,
}

impl Swift {
    /// A controller for a connection on `path`.
    pub fn new(p: &SwiftParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.max(Bytes(1)).0 as f64;
        let bdp = path.bdp_bytes.0 as f64;
        let base_target = match p.base_target_us {
            Some(us) => us * US.0 as f64,
            None => p.target_brtt * path.base_rtt.0 as f64,
        };
        //= Swift §3.5 (topology-based scaling); spec lb-ai-training.md §2.2
        //# Longer paths queue at more hops, so each hop adds h to the target.
        let fixed_target = base_target + path.hops as f64 * p.h_us * US.0 as f64;
        let flow_scaling = p.flow_scaling.then(|| {
            //= Swift §3.5 (flow-based scaling); spec smartt-reps.md §2.14.3
            //# α, β chosen so that fs = fs_range at fs_min_cwnd packets and 0 at fs_max_cwnd.
            let range = p.fs_range_base_target * base_target;
            let alpha = range / (1.0 / p.fs_min_cwnd_pkts.sqrt() - 1.0 / p.fs_max_cwnd_pkts.sqrt());
            FlowScaling { alpha, beta: -alpha / p.fs_max_cwnd_pkts.sqrt(), range }
        });
        let min_cwnd = p.min_cwnd_pkts * mtu;
        // A BDP bound below the minimum (tiny fabrics) gives way to the minimum.
        let max_cwnd = p.max_cwnd_pkts.map_or(p.max_cwnd_bdp * bdp, |pkts| pkts * mtu).max(min_cwnd);
        Swift {
            ai: p.ai,
            beta: p.beta,
            max_mdf: p.max_mdf,
            retx_reset_threshold: p.retx_reset_threshold,
            mtu,
            min_cwnd,
            max_cwnd,
            fixed_target,
            flow_scaling,
            cwnd: (p.init_cwnd_bdp * bdp).clamp(min_cwnd, max_cwnd),
            srtt: path.base_rtt.max(Time(1)),
            last_decrease: None,
            retransmits: 0,
        }
    }

    /// The window in bytes, with its fraction (for tests and traces).
    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd
    }

    /// The target delay for the current window, ps.
    pub fn target_delay(&self) -> Time {
        let fs = self.flow_scaling.map_or(0.0, |f| {
            let pkts = self.cwnd / self.mtu;
            (f.alpha / pkts.sqrt() + f.beta).clamp(0.0, f.range)
        });
        Time((self.fixed_target + fs).round() as u64)
    }

    /// Swift Alg. 1 `can_decrease`: no decrease within the last smoothed RTT.
    fn can_decrease(&self, now: Time) -> bool {
        self.last_decrease.is_none_or(|t| now.saturating_sub(t) >= self.srtt)
    }

    /// Multiplies the window by `factor` (< 1) and restarts the once-per-RTT timer.
    fn decrease(&mut self, now: Time, factor: f64) {
        self.cwnd = (self.cwnd * factor).max(self.min_cwnd);
        self.last_decrease = Some(now);
    }
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, ev: &AckEvent) {
        self.retransmits = 0;
        // RFC 6298 smoothing (gain 1/8), in signed arithmetic since samples may lie either side.
        self.srtt = Time((self.srtt.0 as i128 + (ev.rtt.0 as i128 - self.srtt.0 as i128) / 8).max(1) as u64);
        let delay = ev.rtt;
        let target = self.target_delay();
        if delay < target {
            let size = ev.acked_bytes.0 as f64;
            //= Swift Alg. 1 (additive increase); spec smartt-reps.md §2.14.3
            //# ai packets per window of ACKs; below one packet, ai packets per packet ACKed.
            if self.cwnd >= self.mtu {
                self.cwnd += self.ai * self.mtu * size / self.cwnd;
            } else {
                self.cwnd += self.ai * size;
            }
            self.cwnd = self.cwnd.min(self.max_cwnd);
        } else if delay > target && self.can_decrease(ev.now) {
            //= Swift Alg. 1 (multiplicative decrease); spec smartt-reps.md §2.14.3
            //# Cut in proportion to the excess delay, never more than max_mdf, once per RTT.
            let excess = (delay - target).0 as f64 / delay.0 as f64;
            self.decrease(ev.now, (1.0 - self.beta * excess).max(1.0 - self.max_mdf));
        }
    }

    fn on_nack(&mut self, ev: &NackEvent) {
        //= Swift Alg. 1 (fast recovery); spec smartt-reps.md §2.14.3 (NACK as fast-recovery loss)
        //# A loss signal short of a timeout: cut by max_mdf if this RTT has not cut yet.
        self.retransmits = 0;
        if self.can_decrease(ev.now) {
            self.decrease(ev.now, 1.0 - self.max_mdf);
        }
    }

    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        //= Swift Alg. 1 (retransmission timeout); spec smartt-reps.md §2.14.3
        //# Repeated timeouts mean the window is far too large: reset it to the minimum.
        self.retransmits += 1;
        if self.retransmits >= self.retx_reset_threshold {
            self.cwnd = self.min_cwnd;
            self.last_decrease = Some(ev.now);
        } else if self.can_decrease(ev.now) {
            //= type=deviation reason=Swift Alg. 1 gates the timeout cut on can_decrease; the spec omits the gate
            self.decrease(ev.now, 1.0 - self.max_mdf);
        }
    }

    fn window(&self) -> Option<u64> {
        Some((self.cwnd as u64).max(1))
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        //= Swift §3.3 (large-scale incast)
        //# Below one packet the window alone cannot slow a sender down: send one packet every
        //# srtt/cwnd instead, i.e. pace at cwnd bytes per srtt.
        (self.cwnd < self.mtu).then(|| {
            let bps = (self.cwnd * 8.0 * SEC.0 as f64 / self.srtt.0 as f64).round() as u64;
            BitsPerSec(bps.max(1))
        })
    }
}

impl crate::scheme::Scheme<PathInfo> for Swift {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("target_brtt", 1.0, 100.0), crate::scheme::Limit::new("base_target_us", 0.001, 1e9), crate::scheme::Limit::new("h_us", 0.0, 1e9), crate::scheme::Limit::new("fs_range_base_target", 0.0, 1000000.0), crate::scheme::Limit::new("fs_min_cwnd_pkts", 1e-6, 1000000.0), crate::scheme::Limit::new("fs_max_cwnd_pkts", 1e-6, 1000000000.0), crate::scheme::Limit::new("ai", 1e-6, 1000000.0), crate::scheme::Limit::new("beta", 1e-6, 1.0), crate::scheme::Limit::new("max_mdf", 1e-6, 0.999999), crate::scheme::Limit::new("retx_reset_threshold", 1.0, 1000000.0), crate::scheme::Limit::new("min_cwnd_pkts", 1e-6, 1000000.0), crate::scheme::Limit::new("max_cwnd_bdp", 0.001, 1000.0), crate::scheme::Limit::new("max_cwnd_pkts", 1e-6, 1000000000.0), crate::scheme::Limit::new("init_cwnd_bdp", 0.001, 1000.0)];
    type Params = SwiftParams;
    fn check(p: &SwiftParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &SwiftParams, path: &mut PathInfo) -> Self {
        Swift::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::LossCause;

    use crate::transport::cc::testing::{self, MTU};
    /// 100 full packets of BDP over a 10 µs base RTT: the window starts at 125 packets, the
    /// target is 15 µs.
    const PATH: PathInfo = testing::path(327_680_000_000, 100 * MTU);
    use crate::transport::cc::testing::ACK;

    fn cc(p: SwiftParams) -> Swift {
        Swift::new(&p, &PATH)
    }

    fn nack(now: Time) -> NackEvent {
        NackEvent { now, bytes: Bytes(MTU), cause: LossCause::Trimmed, entropy: 0, in_flight: 0, sent_at: Time::ZERO, last_hop_paced: false }
    }

    fn timeout(now: Time) -> TimeoutEvent {
        TimeoutEvent { now, lost_bytes: Bytes(MTU), in_flight: 0, consecutive: 1, latest_sent_at: Time::ZERO }
    }

    #[test]
    fn defaults_start_at_one_and_a_quarter_bdp_with_a_target_of_one_and_a_half_base_rtts() {
        let c = cc(SwiftParams::default());
        assert_eq!(c.window(), Some(125 * MTU));
        assert_eq!(c.target_delay(), 15 * US);
        assert_eq!(c.pacing_rate(), None);
    }

    //= type=test
    //# Below the target: +ai·mtu·size/cwnd; at the target: no change; never above the cap.
    #[test]
    fn below_target_adds_ai_over_cwnd_packets_and_at_target_nothing_changes() {
        let mut c = cc(SwiftParams { init_cwnd_bdp: 1.0, ..SwiftParams::default() });
        // cwnd = 100 packets = 409,600 B: one clean full-packet ACK adds 4096²/409,600 = 40.96 B.
        c.on_ack(&AckEvent { rtt: 12 * US, ..ACK });
        assert!((c.cwnd_bytes() - 409_640.96).abs() < 1e-6, "{}", c.cwnd_bytes());
        // ai = 2 doubles the step.
        let mut c2 = cc(SwiftParams { init_cwnd_bdp: 1.0, ai: 2.0, ..SwiftParams::default() });
        c2.on_ack(&AckEvent { rtt: 12 * US, ..ACK });
        assert!((c2.cwnd_bytes() - 409_681.92).abs() < 1e-6);
        // Exactly at the target (15 µs): neither grows nor shrinks.
        let w = c.cwnd_bytes();
        c.on_ack(&AckEvent { now: US, rtt: 15 * US, ..ACK });
        assert_eq!(c.cwnd_bytes(), w);
        // Many clean ACKs stop at 1.25 BDP.
        for i in 0..100_000 {
            c.on_ack(&AckEvent { now: i * US, ..ACK });
        }
        assert_eq!(c.window(), Some(125 * MTU));
    }

    //= type=test
    //# Above the target: cwnd × max(1 − β(d−T)/d, 1 − max_mdf).
    #[test]
    fn decrease_is_proportional_to_the_excess_delay_and_capped_by_max_mdf() {
        let mut c = cc(SwiftParams::default());
        // d = 20 µs, T = 15 µs: factor 1 − 0.8·5/20 = 0.8, so 512,000 B → 409,600 B.
        c.on_ack(&AckEvent { now: 100 * US, rtt: 20 * US, ..ACK });
        assert!((c.cwnd_bytes() - 409_600.0).abs() < 1e-6, "{}", c.cwnd_bytes());
        // d = 150 µs: 1 − 0.8·135/150 = 0.28 < 1 − max_mdf, so the cut stops at one half.
        let mut c = cc(SwiftParams::default());
        c.on_ack(&AckEvent { now: 100 * US, rtt: 150 * US, ..ACK });
        assert!((c.cwnd_bytes() - 256_000.0).abs() < 1e-6, "{}", c.cwnd_bytes());
    }

    //= type=test
    //# At most one decrease per (smoothed) RTT.
    #[test]
    fn at_most_one_decrease_per_rtt() {
        let mut c = cc(SwiftParams::default());
        c.on_ack(&AckEvent { now: 100 * US, rtt: 20 * US, ..ACK });
        let after_first = c.cwnd_bytes();
        // srtt after one 20 µs sample on a 10 µs seed: 10 + 10/8 = 11.25 µs. Within it, further
        // delayed ACKs (and a NACK) leave the window alone.
        for t in [101, 105, 111] {
            c.on_ack(&AckEvent { now: t * US, rtt: 20 * US, ..ACK });
            assert_eq!(c.cwnd_bytes(), after_first, "second decrease at {t} µs");
        }
        c.on_nack(&nack(111 * US));
        assert_eq!(c.cwnd_bytes(), after_first);
        // srtt is now ≈ 14.2 µs; 15 µs after the first cut another is allowed.
        c.on_ack(&AckEvent { now: 115 * US, rtt: 20 * US, ..ACK });
        assert!((c.cwnd_bytes() - 0.8 * after_first).abs() < 1e-6, "{} vs {}", c.cwnd_bytes(), 0.8 * after_first);
    }

    //= type=test
    //# NACK: cut by max_mdf (if allowed); timeouts: the same, and the minimum after 5 in a row.
    #[test]
    fn nack_halves_and_repeated_timeouts_reset_to_the_minimum() {
        let mut c = cc(SwiftParams::default());
        c.on_nack(&nack(Time::ZERO));
        assert_eq!(c.window(), Some(256_000));
        // A timeout one RTT later halves again; four more in a row reach the threshold.
        c.on_timeout(&timeout(20 * US));
        assert_eq!(c.window(), Some(128_000));
        for i in 0..3 {
            c.on_timeout(&timeout((40 + 20 * i) * US));
        }
        assert_eq!(c.window(), Some(16_000));
        c.on_timeout(&timeout(100 * US));
        assert_eq!(c.window(), Some(MTU), "fifth timeout in a row resets to the minimum");
        // An ACK in between restarts the count: four more timeouts do not reset.
        let mut c = cc(SwiftParams::default());
        for i in 0..4 {
            c.on_timeout(&timeout(i * 20 * US));
        }
        c.on_ack(&AckEvent { now: 81 * US, ..ACK });
        c.on_timeout(&timeout(100 * US));
        assert!(c.window().unwrap() > MTU);
    }

    //= type=test
    //# The window floor holds; below one packet the window becomes a pacing rate of cwnd/srtt.
    #[test]
    fn window_floor_and_pacing_below_one_packet() {
        // Default floor: one packet, never paced.
        let mut c = cc(SwiftParams::default());
        for i in 0..20 {
            c.on_nack(&nack(i * 100 * US));
        }
        assert_eq!(c.window(), Some(MTU));
        assert_eq!(c.pacing_rate(), None);

        // With a floor of 0.001 packets (the LB study's), the window keeps halving: 125 packets
        // take 17 halvings to go below 0.001 packets (125/2^17 ≈ 0.00095), so 20 stop at the floor.
        let mut c = cc(SwiftParams { min_cwnd_pkts: 0.001, ..SwiftParams::default() });
        for i in 0..20 {
            c.on_nack(&nack(i * 100 * US));
        }
        assert!((c.cwnd_bytes() - 4.096).abs() < 1e-9, "{}", c.cwnd_bytes());
        // srtt stayed 10 µs: pace 4.096 B per 10 µs, i.e. one 4096 B packet every 10 ms.
        let rate = c.pacing_rate().expect("paced below one packet");
        assert_eq!(rate.tx_time(Bytes(MTU)), 10_000 * US);
        assert_eq!(c.window(), Some(4));

        // Growing back: below a packet, each ACKed packet adds ai packets; above, ai per window.
        c.on_ack(&AckEvent { now: 3000 * US, ..ACK });
        assert!((c.cwnd_bytes() - (4.096 + 4096.0)).abs() < 1e-9);
        assert_eq!(c.pacing_rate(), None);
    }

    //= type=test
    //# T = base_target + hops·h (+ fs(cwnd)): longer paths get larger targets.
    #[test]
    fn target_scales_with_hops_and_window() {
        // LB-study constants: 20 µs base target, h = 20/6.55 µs per hop.
        let p = SwiftParams { base_target_us: Some(20.0), h_us: 20.0 / 6.55, ..SwiftParams::default() };
        let two = Swift::new(&p, &PathInfo { hops: 2, ..PATH }).target_delay();
        let six = Swift::new(&p, &PathInfo { hops: 6, ..PATH }).target_delay();
        let h_ps = 20.0f64 / 6.55 * 1e6;
        assert_eq!(two, Time((20e6 + 2.0 * h_ps).round() as u64));
        assert_eq!(six, Time((20e6 + 6.0 * h_ps).round() as u64));
        assert!(six > two + 12 * US, "four more hops add 4 × 3.05 µs");
        // Default: 1.5 × each path's own base RTT, so a 4-link path with 7 µs base RTT gets
        // 10.5 µs and the 6-link one 15 µs.
        let d = SwiftParams::default();
        assert_eq!(Swift::new(&d, &PathInfo { hops: 4, base_rtt: 7 * US, ..PATH }).target_delay(), Time(10_500_000));
        assert_eq!(Swift::new(&d, &PathInfo { hops: 6, ..PATH }).target_delay(), 15 * US);

        // Flow scaling: fs_range (5 × 15 µs) at 0.1 packet, 0 at ≥ 100 packets.
        let fs = SwiftParams { flow_scaling: true, min_cwnd_pkts: 0.01, ..SwiftParams::default() };
        let mut c = Swift::new(&fs, &PATH);
        assert_eq!(c.target_delay(), 15 * US, "125 packets: no flow scaling");
        c.cwnd = 0.1 * MTU as f64;
        assert_eq!(c.target_delay(), 15 * US + 75 * US);
        c.cwnd = 0.01 * MTU as f64;
        assert_eq!(c.target_delay(), 15 * US + 75 * US, "clamped at fs_range");
        // 10 packets: α/√10 + β with α = 75/(1/√0.1 − 1/√100) µs, β = −α/10.
        c.cwnd = 10.0 * MTU as f64;
        let alpha = 75.0 / (1.0 / 0.1f64.sqrt() - 0.1);
        let want = 15.0 + alpha / 10f64.sqrt() - alpha / 10.0;
        assert!((c.target_delay().0 as f64 / 1e6 - want).abs() < 1e-5, "{} vs {want}", c.target_delay());
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: SwiftParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        let d = SwiftParams::default;
        assert_eq!(key(SwiftParams { target_brtt: 0.9, ..d() }), "transport.cc.target_brtt");
        assert_eq!(key(SwiftParams { base_target_us: Some(0.0), ..d() }), "transport.cc.base_target_us");
        assert_eq!(key(SwiftParams { h_us: -1.0, ..d() }), "transport.cc.h_us");
        assert_eq!(key(SwiftParams { fs_range_base_target: f64::NAN, ..d() }), "transport.cc.fs_range_base_target");
        assert_eq!(key(SwiftParams { fs_min_cwnd_pkts: 0.0, ..d() }), "transport.cc.fs_min_cwnd_pkts");
        assert_eq!(key(SwiftParams { fs_max_cwnd_pkts: 0.05, ..d() }), "transport.cc.fs_max_cwnd_pkts");
        assert_eq!(key(SwiftParams { ai: 0.0, ..d() }), "transport.cc.ai");
        assert_eq!(key(SwiftParams { beta: 1.5, ..d() }), "transport.cc.beta");
        assert_eq!(key(SwiftParams { max_mdf: 1.0, ..d() }), "transport.cc.max_mdf");
        assert_eq!(key(SwiftParams { retx_reset_threshold: 0, ..d() }), "transport.cc.retx_reset_threshold");
        assert_eq!(key(SwiftParams { min_cwnd_pkts: -1.0, ..d() }), "transport.cc.min_cwnd_pkts");
        assert_eq!(key(SwiftParams { max_cwnd_bdp: 0.0, ..d() }), "transport.cc.max_cwnd_bdp");
        assert_eq!(key(SwiftParams { max_cwnd_pkts: Some(0.5), ..d() }), "transport.cc.max_cwnd_pkts");
        assert_eq!(key(SwiftParams { init_cwnd_bdp: f64::INFINITY, ..d() }), "transport.cc.init_cwnd_bdp");
        assert!(d().validate().is_ok());
    }
}
