//! `strack`: STrack's congestion control, one window for all paths, sized by queuing delay
//! (RTT − base RTT) only. ECN never shrinks the window (it steers the path choice, see
//! `lb::strack`); the window is cut Swift-style when the *average* delay is above a target of one
//! network RTT, jumps to the achieved BDP under heavy incast, and grows by a small fairness term
//! once per base RTT.
//!
//! **Follows:** Le et al., "STrack: A Reliable Multipath Transport for AI/ML Clusters", §3.2,
//! Table 1, Algorithms 1, 2 and 4; spec `shared/specs/strack.md` §2.0–§2.2, §2.5.2 (ACK handler
//! order), §2.5.5 (achievedBDP), §2.5.6 (adjust_cwnd), §2.7 (E3, E5, E7, E9).
//!
//! Per ACK (spec §2.5.2): base_rtt ← min(base_rtt, rtt); d = rtt − base_rtt; the achievedBDP
//! window is updated once (E5); then Algorithm 4 picks one of four actions from (ECN, d):
//! quadrant 4 (clean, d > Q_high) adds k·β/cwnd; quadrant 1 (clean, d < T) adds
//! k·α·(T − d)/cwnd; otherwise, at most once per base RTT and only while the delay EWMA D̄ is
//! above T, either cwnd ← achievedBDP (d > Q_high and achievedBDP < max_cwnd/8, reachable only on
//! marked ACKs) or cwnd ← cwnd·max(1 − γ(D̄ − T)/D̄, ½) (d > T); quadrant 2 (marked, d < T) leaves
//! the window alone. η is added once per base RTT whatever the quadrant, then the window is
//! clamped to [min_cwnd, max_cwnd]. k is the number of packets newly acknowledged.
//!
//! **Units** (spec §2.2): the paper's formulas count the window in packets; this controller keeps
//! wire bytes (`cwnd_B`) and uses cwnd_pkts = cwnd_B / MTU in the formulas, so every packet
//! increment is multiplied by the MTU. α is in packets per µs of delay headroom, β and η in
//! packets.
//!
//! **Constants** come from the *network* base RTT (the fabric's longest unloaded RTT,
//! [`PathInfo::net_base_rtt`], or `net_base_rtt_us`) and the host rate (spec §2.1.1
//! ASSUMPTIONs): BDP = host_rate × net_base_rtt; bdp_sf = BDP / (100 Gb/s × 12 µs);
//! delay_sf = net_base_rtt / 12 µs; α = 4·bdp_sf·delay_sf / net_base_rtt; β = 5·bdp_sf;
//! η = 0.15·bdp_sf; T = target_Qdelay = net_base_rtt (E9); Q_high = 3·T. At 400 Gb/s and 8 µs:
//! BDP 400 000 B, bdp_sf 2.667, delay_sf 0.667, α 0.889 pkt/µs, β 13.33 pkt, η 0.40 pkt.
//! Only `base_rtt` (delay, once-per-RTT gates, achievedBDP window) is per connection.
//!
//! **Parameters** (all in [`StrackParams`], TOML keys under `transport.cc`):
//! `net_base_rtt_us` none (= PathInfo), `reference_bdp_bytes` 150 000, `reference_rtt_us` 12,
//! `max_cwnd_bdp` 1.0, `min_cwnd_pkts` 1, `initial_cwnd_bdp` none (= max_cwnd),
//! `target_qdelay_us` none (= net base RTT), `qhigh_factor` 3, `ewma` 0.125, `alpha_per_sf` 4,
//! `beta_per_sf` 5, `eta_per_sf` 0.15, `gamma` 0.8, `md_floor` 0.5,
//! `fast_convergence_fraction` 1/8, `rto_halves_window` false. Each field's doc names its source.
//!
//! **Differences** (tagged `type=deviation` / `type=assumption` below):
//! - Sizes are wire bytes: `acked_bytes` is the wire size newly acknowledged, so achievedBDP and
//!   k count wire bytes (the spec uses the receiver's payload counter `recv_bytes`). BDP and
//!   max_cwnd are wire bytes too, so the fast-convergence comparison is like for like.
//! - The ECN bit used is the echo of the packet that triggered the ACK (`AckEvent::ecn`), not
//!   the count of marks a coalesced ACK covers: Algorithm 1 consumes one (ecn, path, timestamp)
//!   triple per ACK (spec §2.5.11 ASSUMPTION).
//! - An ACK acknowledging nothing new (k = 0) still feeds the RTT sample to base_rtt, the EWMA,
//!   the MD / fast-convergence gate and η; only the k-scaled increases vanish. The controller
//!   is not told which ACKs answer probes; the engine must not report probe ACKs as data ACKs
//!   with bytes (spec §2.5.5: probe ACKs do not count towards achievedBDP).
//! - "Connection start" (initial `last_selfai_ts` and `rxcount_clear_ts`, spec §2.3) is the first
//!   transmission (`on_send`), or the first ACK if the controller never saw a send.
//! - NACKs do not exist in STrack (no trimming): `on_nack` does nothing. A timeout changes no
//!   window (spec §2.1.2) unless `rto_halves_window` is set.
//!
//! Spec vs paper: the paper's §3.2 prose puts the additive-increase trigger at 2× target and
//! describes achievedBDP as bytes acknowledged "in one base RTT"; Algorithms 2 and 4 use 3× target
//! and a base_rtt + target_Qdelay window. The spec follows the algorithms (E7) and so do we.
//! Algorithm 4's fast-convergence test has no guard for an achievedBDP of 0 (no window closed
//! yet); taken literally the window then falls to min_cwnd, as here.

use super::{AckEvent, CongestionControl, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes, Time, US};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "strack";
/// Registry summary.
pub const SUMMARY: &str =
    "STrack: one delay-driven window for all paths (ECN only steers paths), achieved-BDP fast convergence under incast";

/// Parameters of `strack`, with the paper's defaults (Table 1) or the spec's proposals (§2.1.2).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StrackParams {
    /// Network-wide base RTT in µs that the constants scale by; `None` takes
    /// [`PathInfo::net_base_rtt`], the fabric's longest unloaded RTT (paper §4.1: 8 µs network
    /// RTT; spec §2.1.1).
    pub net_base_rtt_us: Option<f64>,
    /// BDP of the reference network the gains were tuned on, 100 Gb/s × 12 µs (paper Table 1
    /// `bdp_sf`: 150 000 B).
    pub reference_bdp_bytes: Bytes,
    /// RTT of the reference network, µs (paper Table 1 `delay_sf`: 12 µs).
    pub reference_rtt_us: f64,
    /// Largest window in network BDPs (spec §2.1.2 ASSUMPTION: 1.0, "roughly the BDP", paper
    /// §3.2; sensitivity 1.5).
    pub max_cwnd_bdp: f64,
    /// Smallest window in full packets (spec §2.1.2 ASSUMPTION: 1).
    pub min_cwnd_pkts: f64,
    /// Initial window in network BDPs; `None` starts at `max_cwnd` (spec §2.1.2 ASSUMPTION:
    /// line-rate start).
    pub initial_cwnd_bdp: Option<f64>,
    /// Target queuing delay T in µs; `None` = the network base RTT (paper Table 1; spec E9).
    pub target_qdelay_us: Option<f64>,
    /// Q_high = this × T (paper Table 1, Algorithm 4: 3; spec E7 prefers it to the prose's 2).
    pub qhigh_factor: f64,
    /// Weight of a new sample in the queuing-delay EWMA (paper Table 1: 0.125).
    pub ewma: f64,
    /// α = this × bdp_sf × delay_sf / net_base_rtt, packets per µs (paper Table 1: 4.0).
    pub alpha_per_sf: f64,
    /// β = this × bdp_sf packets, additive increase of quadrant 4 (paper Table 1: 5).
    pub beta_per_sf: f64,
    /// η = this × bdp_sf packets, fairness increment once per base RTT (paper Table 1: 0.15).
    pub eta_per_sf: f64,
    /// Multiplicative-decrease gain γ (paper Table 1: 0.8).
    pub gamma: f64,
    /// Smallest factor one MD may apply (paper Algorithm 4 line 15: 0.5).
    pub md_floor: f64,
    /// Fast convergence only when achievedBDP < this × max_cwnd (paper Algorithm 4 line 11:
    /// 1/8). 0 disables fast convergence.
    pub fast_convergence_fraction: f64,
    /// On a retransmission timeout, cwnd ← max(cwnd/2, min_cwnd) (spec §2.1.2 optional variant;
    /// default off: the paper describes no loss-triggered cut).
    pub rto_halves_window: bool,
}

impl Default for StrackParams {
    fn default() -> Self {
        StrackParams {
            net_base_rtt_us: None,
            reference_bdp_bytes: Bytes(150_000),
            reference_rtt_us: 12.0,
            max_cwnd_bdp: 1.0,
            min_cwnd_pkts: 1.0,
            initial_cwnd_bdp: None,
            target_qdelay_us: None,
            qhigh_factor: 3.0,
            ewma: 0.125,
            alpha_per_sf: 4.0,
            beta_per_sf: 5.0,
            eta_per_sf: 0.15,
            gamma: 0.8,
            md_floor: 0.5,
            fast_convergence_fraction: 0.125,
            rto_halves_window: false,
        }
    }
}

/// `Err(Error::Invalid)` naming `transport.cc.<field>` unless `ok`.
fn require(ok: bool, field: &str, value: impl std::fmt::Display, allowed: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("transport.cc.{field}"), format!("{value}: must be {allowed}")))
    }
}

impl StrackParams {
    pub(super) fn validate(&self) -> Result<()> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        if let Some(v) = self.net_base_rtt_us {
            require(positive(v), "net_base_rtt_us", v, "a positive number of µs")?;
        }
        require(self.reference_bdp_bytes > Bytes::ZERO, "reference_bdp_bytes", self.reference_bdp_bytes, "at least 1 byte")?;
        require(positive(self.reference_rtt_us), "reference_rtt_us", self.reference_rtt_us, "a positive number of µs")?;
        require(positive(self.max_cwnd_bdp), "max_cwnd_bdp", self.max_cwnd_bdp, "a positive number")?;
        require(positive(self.min_cwnd_pkts), "min_cwnd_pkts", self.min_cwnd_pkts, "a positive number")?;
        if let Some(v) = self.initial_cwnd_bdp {
            require(positive(v), "initial_cwnd_bdp", v, "a positive number")?;
        }
        if let Some(v) = self.target_qdelay_us {
            require(positive(v), "target_qdelay_us", v, "a positive number of µs")?;
        }
        require(self.qhigh_factor.is_finite() && self.qhigh_factor >= 1.0, "qhigh_factor", self.qhigh_factor, "a number ≥ 1")?;
        require(self.ewma > 0.0 && self.ewma <= 1.0, "ewma", self.ewma, "in (0, 1]")?;
        require(nonneg(self.alpha_per_sf), "alpha_per_sf", self.alpha_per_sf, "a non-negative number")?;
        require(nonneg(self.beta_per_sf), "beta_per_sf", self.beta_per_sf, "a non-negative number")?;
        require(nonneg(self.eta_per_sf), "eta_per_sf", self.eta_per_sf, "a non-negative number")?;
        require((0.0..=1.0).contains(&self.gamma), "gamma", self.gamma, "in [0, 1]")?;
        require(self.md_floor > 0.0 && self.md_floor <= 1.0, "md_floor", self.md_floor, "in (0, 1]")?;
        require(
            (0.0..=1.0).contains(&self.fast_convergence_fraction),
            "fast_convergence_fraction",
            self.fast_convergence_fraction,
            "in [0, 1]",
        )?;
        Ok(())
    }
}

/// The controller of one connection. Plain fields only: nothing is allocated per ACK.
#[derive(Clone, Debug)]
pub struct Strack {
    // --- constants, fixed at build time ---
    /// Full packet on the wire, bytes (the packet unit of the paper's formulas).
    mtu: f64,
    /// Network BDP, host_rate × net_base_rtt, bytes.
    bdp: f64,
    /// bdp_sf = BDP / reference BDP.
    bdp_sf: f64,
    /// delay_sf = net_base_rtt / reference RTT.
    delay_sf: f64,
    /// α, packets per µs of delay headroom.
    alpha: f64,
    /// β, packets.
    beta: f64,
    /// η, packets.
    eta: f64,
    gamma: f64,
    md_floor: f64,
    ewma: f64,
    /// target_Qdelay T.
    target: Time,
    /// target_Qhigh.
    q_high: Time,
    /// Bytes.
    min_cwnd: f64,
    /// Bytes.
    max_cwnd: f64,
    /// achievedBDP below this (bytes) allows fast convergence.
    fast_limit: f64,
    rto_halves_window: bool,

    // --- state ---
    /// Congestion window, wire bytes.
    cwnd: f64,
    /// Smallest RTT seen (starts at min(net base RTT, path base RTT)).
    base_rtt: Time,
    /// EWMA of the queuing delay, ps.
    avg_delay: f64,
    /// Time of the last multiplicative cut or fast convergence (`None` = −∞).
    last_decrease: Option<Time>,
    /// Time of the last η increment (`last_selfai_ts`); starts at the connection start.
    last_fair: Time,
    /// Bytes acknowledged in the current achievedBDP window.
    rx_count: u64,
    /// Start of the current achievedBDP window.
    rx_clear: Time,
    /// Bytes acknowledged in the last closed window.
    achieved_bdp: u64,
    /// Whether the connection-start clocks (`last_fair`, `rx_clear`) have been set.
    started: bool,
}

impl Strack {
    /// A controller for a connection on `path`.
    pub fn new(p: &StrackParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.max(Bytes(1)).0 as f64;
        let net_rtt: Time = match p.net_base_rtt_us {
            Some(us) => Time((us * US.0 as f64).round() as u64),
            None => path.net_base_rtt,
        }
        .max(Time(1));
        let net_rtt_us = net_rtt.0 as f64 / US.0 as f64;
        //= strack §4.1; spec §2.1.1 (BDP); type=assumption
        //# BDP is the network BDP, host link rate × network-wide base RTT, not a per-path BDP.
        let bdp = path.host_rate.bytes_in(net_rtt).max(Bytes(1)).0 as f64;
        //= strack Table 1 (bdp_sf, delay_sf, α, β, η)
        //# Gains were tuned at 100 Gb/s × 12 µs and scale with the BDP and the RTT.
        let bdp_sf = bdp / p.reference_bdp_bytes.max(Bytes(1)).0 as f64;
        let delay_sf = net_rtt_us / p.reference_rtt_us;
        let alpha = p.alpha_per_sf * bdp_sf * delay_sf / net_rtt_us;
        //= strack Table 1 (target_Qdelay); spec §2.7 E9
        //# Target queuing delay = one network base RTT (8 µs in the evaluation, not 12).
        let target = match p.target_qdelay_us {
            Some(us) => Time((us * US.0 as f64).round() as u64),
            None => net_rtt,
        };
        let min_cwnd = p.min_cwnd_pkts * mtu;
        // A BDP below the minimum window (tiny fabrics) must not invert the bounds.
        let max_cwnd = (p.max_cwnd_bdp * bdp).max(min_cwnd);
        //= spec §2.1.2 (initial cwnd); type=assumption
        //# Start at the maximum window (line rate).
        let cwnd = p.initial_cwnd_bdp.map_or(max_cwnd, |b| b * bdp).clamp(min_cwnd, max_cwnd);
        Strack {
            mtu,
            bdp,
            bdp_sf,
            delay_sf,
            alpha,
            beta: p.beta_per_sf * bdp_sf,
            eta: p.eta_per_sf * bdp_sf,
            gamma: p.gamma,
            md_floor: p.md_floor,
            ewma: p.ewma,
            target,
            q_high: Time((target.0 as f64 * p.qhigh_factor).round() as u64),
            min_cwnd,
            max_cwnd,
            fast_limit: p.fast_convergence_fraction * max_cwnd,
            rto_halves_window: p.rto_halves_window,
            cwnd,
            //= spec §2.1.2 (initial base_rtt); type=assumption
            //# net_base_rtt, or the known unloaded path RTT if lower; then the minimum sample.
            base_rtt: net_rtt.min(path.base_rtt.max(Time(1))),
            avg_delay: 0.0,
            last_decrease: None,
            last_fair: Time::ZERO,
            rx_count: 0,
            rx_clear: Time::ZERO,
            achieved_bdp: 0,
            started: false,
        }
    }

    /// Congestion window in packets (wire bytes / full packet size).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd / self.mtu
    }

    /// EWMA of the queuing delay, in picoseconds (unrounded).
    pub fn avg_delay(&self) -> f64 {
        self.avg_delay
    }

    /// Wire bytes acknowledged over the last closed achievedBDP window (0 before the first closes).
    pub fn achieved_bdp(&self) -> u64 {
        self.achieved_bdp
    }

    /// Smallest RTT seen so far (the per-connection base RTT).
    pub fn base_rtt(&self) -> Time {
        self.base_rtt
    }

    /// Network BDP the constants are scaled by, wire bytes.
    pub fn network_bdp(&self) -> f64 {
        self.bdp
    }

    /// The scaling factors (bdp_sf, delay_sf) of paper Table 1 for this connection.
    pub fn scale_factors(&self) -> (f64, f64) {
        (self.bdp_sf, self.delay_sf)
    }

    /// Sets the connection-start clocks on the first event.
    //= spec §2.3 (last_selfai_ts, rxcount_clear_ts = connection start); type=assumption
    //# The connection starts with its first transmission (or first ACK if no send was seen).
    fn start(&mut self, now: Time) {
        if !self.started {
            self.started = true;
            self.last_fair = now;
            self.rx_clear = now;
        }
    }

    //= strack Algorithm 2; spec §2.5.5, §2.7 E5
    //# Once per ACK: count acked bytes; when the window has lasted longer than base_rtt + target,
    //# publish the count (this ACK included) as achievedBDP and start a new window.
    fn update_achieved_bdp(&mut self, now: Time, acked_bytes: u64) {
        let window_done = now.saturating_sub(self.rx_clear) > self.base_rtt + self.target;
        self.rx_count += acked_bytes;
        if window_done {
            self.achieved_bdp = self.rx_count;
            self.rx_count = 0;
            self.rx_clear = now;
        }
    }

    //= strack Algorithm 4; spec §2.5.6
    fn adjust_cwnd(&mut self, now: Time, ecn: bool, d: Time, k: f64) {
        let can_decrease = self.last_decrease.is_none_or(|t| now.saturating_sub(t) > self.base_rtt);
        let can_fair = now.saturating_sub(self.last_fair) > self.base_rtt;
        //# The delay EWMA takes every ACK, marked or not.
        self.avg_delay = (1.0 - self.ewma) * self.avg_delay + self.ewma * d.0 as f64;
        let cwnd_pkts = self.cwnd / self.mtu;
        if !ecn && d > self.q_high {
            //= strack §3.2, Algorithm 4 l.6–7; spec §2.0 quadrant 4, E7
            //# Long delay but no mark: the queue has drained behind this packet; add β/cwnd per
            //# packet acked so the link is not starved.
            self.cwnd += self.mtu * k * self.beta / cwnd_pkts;
        } else if !ecn && d < self.target {
            //= strack §3.2, Algorithm 4 l.8–9; spec §2.0 quadrant 1
            //# Uncongested: grow in proportion to the headroom below target, α·(T − d)/cwnd per packet.
            let headroom_us = (self.target - d).0 as f64 / US.0 as f64;
            self.cwnd += self.mtu * k * self.alpha * headroom_us / cwnd_pkts;
        } else if can_decrease && self.avg_delay > self.target.0 as f64 {
            if d > self.q_high && (self.achieved_bdp as f64) < self.fast_limit {
                //= strack §3.2, Algorithm 4 l.11–13; spec §2.5.6 (fast convergence)
                //# Heavy incast (marked, d > Q_high, small delivered rate): jump to the achieved BDP.
                self.cwnd = self.achieved_bdp as f64;
                self.last_decrease = Some(now);
            } else if d > self.target {
                //= strack §3.2, Algorithm 4 l.14–16; spec §2.5.6 (MD)
                //# Swift-like cut by how far the average delay is above target, at most halving.
                let avg = self.avg_delay;
                let factor = (1.0 - self.gamma * (avg - self.target.0 as f64) / avg).max(self.md_floor);
                self.cwnd *= factor;
                self.last_decrease = Some(now);
            }
        }
        //= spec §2.0 quadrant 2
        //# Marked below target: no window change; the path selector moves off the entropy.
        if can_fair {
            //= strack §3.2, Algorithm 4 l.19–21
            //# Once per base RTT add η packets: fairness, and a few more packets to explore paths.
            self.cwnd += self.eta * self.mtu;
            self.last_fair = now;
        }
        //= spec §2.5.6 (clamp); type=assumption
        //# Algorithm 4 states no bounds; keep the window in [min_cwnd, max_cwnd].
        self.cwnd = self.cwnd.clamp(self.min_cwnd, self.max_cwnd);
    }
}

impl CongestionControl for Strack {
    //= strack Algorithm 1; spec §2.5.2 (order: base_rtt, delay, achievedBDP, adjust_cwnd)
    fn on_ack(&mut self, ev: &AckEvent) {
        self.start(ev.now);
        //= strack Algorithm 1 l.5–6; spec §2.7 E3
        //# The base RTT is the smallest measured RTT (the paper's "measured_delay" is a typo).
        self.base_rtt = self.base_rtt.min(ev.rtt);
        let d = ev.rtt - self.base_rtt;
        //= spec §2.1.2 (per-ACK increment scaling); type=assumption
        //# Scale the per-ACK increases by the packets this ACK newly acknowledges (coalescing).
        let k = ev.acked_bytes.0 as f64 / self.mtu;
        self.update_achieved_bdp(ev.now, ev.acked_bytes.0);
        self.adjust_cwnd(ev.now, ev.ecn, d, k);
    }

    fn on_send(&mut self, now: Time, _bytes: u64) {
        self.start(now);
    }

    //= spec §2.1.2 (cwnd reaction to loss or RTO)
    //# Delay alone drives the window; the optional variant halves it on a timeout.
    fn on_timeout(&mut self, _ev: &TimeoutEvent) {
        if self.rto_halves_window {
            self.cwnd = (self.cwnd / 2.0).max(self.min_cwnd);
        }
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd as u64)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

impl crate::scheme::Scheme<PathInfo> for Strack {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("net_base_rtt_us", 0.001, 1e9), crate::scheme::Limit::new("reference_bdp_bytes", 1.0, 1099511627776.0), crate::scheme::Limit::new("reference_rtt_us", 0.001, 1e9), crate::scheme::Limit::new("max_cwnd_bdp", 0.001, 1000.0), crate::scheme::Limit::new("min_cwnd_pkts", 0.001, 1000000.0), crate::scheme::Limit::new("initial_cwnd_bdp", 0.001, 1000.0), crate::scheme::Limit::new("target_qdelay_us", 0.001, 1e9), crate::scheme::Limit::new("qhigh_factor", 0.001, 1000.0), crate::scheme::Limit::new("ewma", 1e-6, 1.0), crate::scheme::Limit::new("alpha_per_sf", 0.0, 1000000.0), crate::scheme::Limit::new("beta_per_sf", 0.0, 1000000.0), crate::scheme::Limit::new("eta_per_sf", 0.0, 1000000.0), crate::scheme::Limit::new("gamma", 0.0, 1.0), crate::scheme::Limit::new("md_floor", 0.0, 1.0), crate::scheme::Limit::new("fast_convergence_fraction", 0.0, 1.0)];
    type Params = StrackParams;
    fn check(p: &StrackParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &StrackParams, path: &mut PathInfo) -> Self {
        Strack::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    //! Crafted ACKs at the paper's operating point: 4096 B packets, 400 Gb/s, network and path
    //! base RTT 8 µs. So BDP = 400e9/8 × 8e-6 = 400 000 B (97.66 pkts), bdp_sf = 8/3,
    //! delay_sf = 2/3, α = 4 · 8/3 · 2/3 / 8 = 8/9 pkt/µs, β = 40/3 pkt, η = 0.4 pkt, T = 8 µs,
    //! Q_high = 24 µs, window in [4096, 400 000] B, fast convergence below 50 000 B.
    use super::*;
    use crate::units::NS;

    const MTU: f64 = 4096.0;
    const ALPHA: f64 = 8.0 / 9.0;
    const BETA: f64 = 40.0 / 3.0;
    const ETA: f64 = 0.4;

    fn path(gbps: f64) -> PathInfo {
        let host_rate = BitsPerSec::from_gbps(gbps);
        PathInfo { mtu_bytes: Bytes(4096), host_rate, base_rtt: 8 * US, bdp_bytes: host_rate.bytes_in(8 * US), hops: 4, net_base_rtt: 8 * US, src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 }
    }

    /// One full packet acknowledged, unmarked, at the base RTT.
    const ACK: AckEvent =
        AckEvent { now: Time::ZERO, acked_bytes: Bytes(4096), rtt: Time::from_us(8), ecn: false, marked_pkts: 0, in_flight: 0, entropy: 0, retransmitted: false };

    /// A full-packet ACK at `now` with queuing delay `d` (RTT = 8 µs + d).
    fn ack(now: Time, d: Time, ecn: bool) -> AckEvent {
        AckEvent { now, rtt: 8 * US + d, ecn, marked_pkts: ecn as u32, ..ACK }
    }

    /// A controller at 400 G starting at half the BDP (200 000 B, 48.83 pkts), its connection
    /// started (first send) at t = 0, so η first fires at an ACK after 8 µs.
    fn strack(p: StrackParams) -> Strack {
        let mut c = Strack::new(&StrackParams { initial_cwnd_bdp: Some(0.5), ..p }, &path(400.0));
        c.on_send(Time::ZERO, 4096);
        c
    }

    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, expected {want}");
    }

    //= strack Table 1; spec §2.1.1 table (200 / 400 / 800 G columns); type=test
    #[test]
    fn constants_match_the_spec_table() {
        let c = Strack::new(&StrackParams::default(), &path(400.0));
        assert_close(c.bdp, 400_000.0);
        let (bdp_sf, delay_sf) = c.scale_factors();
        assert_close(bdp_sf, 8.0 / 3.0);
        assert_close(delay_sf, 2.0 / 3.0);
        assert_close(c.alpha, ALPHA);
        assert_close(c.beta, BETA);
        assert_close(c.eta, ETA);
        assert!((c.alpha - 0.889).abs() < 5e-4 && (c.beta - 13.33).abs() < 5e-3 && (c.bdp_sf - 2.667).abs() < 5e-4);
        assert_eq!(c.target, 8 * US);
        assert_eq!(c.q_high, 24 * US);
        assert_close(c.max_cwnd, 400_000.0);
        assert_close(c.min_cwnd, 4096.0);
        assert_close(c.fast_limit, 50_000.0);
        assert_eq!(c.window(), Some(400_000), "starts at max_cwnd");
        assert_eq!(c.pacing_rate(), None);
        // 200 G: bdp_sf 1.333, α 0.444, β 6.67, η 0.20; 800 G: 5.333, 1.778, 26.67, 0.80.
        for (gbps, sf) in [(200.0, 4.0 / 3.0), (800.0, 16.0 / 3.0)] {
            let c = Strack::new(&StrackParams::default(), &path(gbps));
            assert_close(c.bdp_sf, sf);
            assert_close(c.alpha, 4.0 * sf * (2.0 / 3.0) / 8.0);
            assert_close(c.beta, 5.0 * sf);
            assert_close(c.eta, 0.15 * sf);
        }
    }

    //= spec §2.1.1 ASSUMPTION (constants from the network RTT), §2.1.2 (initial base_rtt); type=test
    #[test]
    fn constants_follow_the_network_rtt_and_base_rtt_starts_at_the_lower_one() {
        // An intra-ToR path (4 µs) on a fabric whose longest RTT is 8 µs: constants from 8 µs.
        let p = PathInfo { base_rtt: 4 * US, ..path(400.0) };
        let mut c = Strack::new(&StrackParams::default(), &p);
        assert_close(c.bdp_sf, 8.0 / 3.0);
        assert_eq!(c.target, 8 * US);
        assert_eq!(c.base_rtt(), 4 * US);
        c.on_ack(&AckEvent { now: US, rtt: 3 * US, ..ACK });
        assert_eq!(c.base_rtt(), 3 * US);
        // net_base_rtt_us overrides PathInfo::net_base_rtt (here 10 µs) for all constants.
        let p = PathInfo { net_base_rtt: 10 * US, base_rtt: 10 * US, ..path(400.0) };
        let c = Strack::new(&StrackParams { net_base_rtt_us: Some(8.0), ..StrackParams::default() }, &p);
        assert_close(c.bdp, 400_000.0);
        assert_close(c.alpha, ALPHA);
        assert_eq!(c.base_rtt(), 8 * US);
        // target_qdelay_us and qhigh_factor override T and Q_high.
        let c = Strack::new(&StrackParams { target_qdelay_us: Some(5.0), qhigh_factor: 2.0, ..StrackParams::default() }, &path(400.0));
        assert_eq!((c.target, c.q_high), (5 * US, 10 * US));
    }

    //= strack Algorithm 4 l.8–9; spec §2.5.6 quadrant 1; type=test
    #[test]
    fn quadrant_1_grows_by_alpha_times_headroom_over_cwnd() {
        let mut c = strack(StrackParams::default());
        let w = c.cwnd_pkts();
        c.on_ack(&ack(5 * US, 2 * US, false));
        // Δ = α · (8 − 2) µs / cwnd packets = (8/9 · 6 / 48.83) pkts.
        assert_close(c.cwnd_pkts(), w + ALPHA * 6.0 / w);
        assert_close(c.cwnd, 200_000.0 + MTU * ALPHA * 6.0 / w);
        // The largest per-ACK step is at d = 0.
        let w = c.cwnd_pkts();
        c.on_ack(&ack(6 * US, Time::ZERO, false));
        assert_close(c.cwnd_pkts(), w + ALPHA * 8.0 / w);
    }

    //= spec §2.5.6 quadrant 2; type=test
    #[test]
    fn quadrant_2_keeps_the_window_except_for_eta() {
        let mut c = strack(StrackParams::default());
        for t in 1..=7 {
            c.on_ack(&ack(t * US, 7 * US, true));
            assert_eq!(c.cwnd, 200_000.0, "marked below target moved the window at {t} µs");
        }
        // After one base RTT since the start, η alone: + 0.4 × 4096 B.
        c.on_ack(&ack(8 * US + NS, 7 * US, true));
        assert_close(c.cwnd, 200_000.0 + ETA * MTU);
    }

    //= strack Algorithm 4 l.14–16; spec §2.5.6 quadrant 3 (MD, once per base RTT); type=test
    #[test]
    fn quadrant_3_cuts_by_average_delay_once_per_base_rtt() {
        let mut c = strack(StrackParams::default());
        // Marked, d = 20 µs (between T and Q_high). D̄ after n ACKs = 20·(1 − 0.875^n) µs:
        // 2.5, 4.69, 6.60 (≤ T: no cut), then 8.2764 > T: cut on the 4th ACK.
        for t in 1..=3 {
            c.on_ack(&ack(t * US, 20 * US, true));
            assert_eq!(c.cwnd, 200_000.0);
        }
        c.on_ack(&ack(4 * US, 20 * US, true));
        let avg = 20.0 * (1.0 - 0.875f64.powi(4));
        assert_close(c.avg_delay() / US.0 as f64, avg);
        let factor = 1.0 - 0.8 * (avg - 8.0) / avg;
        assert!(factor > 0.5);
        assert_close(c.cwnd, 200_000.0 * factor);
        // No second cut within one base RTT (8 µs), even though D̄ keeps rising (η aside).
        let w = c.cwnd;
        c.on_ack(&ack(5 * US, 20 * US, true));
        c.on_ack(&ack(12 * US, 20 * US, true));
        assert_close(c.cwnd, w + ETA * MTU);
        // Strictly more than a base RTT later: cut again.
        let w = c.cwnd;
        c.on_ack(&ack(12 * US + NS, 20 * US, true));
        let avg = c.avg_delay() / US.0 as f64;
        assert_close(c.cwnd, w * (1.0 - 0.8 * (avg - 8.0) / avg));
    }

    //= strack Algorithm 4 l.15 (0.5 floor); type=test
    #[test]
    fn md_factor_is_floored_at_one_half() {
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        // D̄ = 0.875·40 + 0.125·20 = 37.5 µs; 1 − 0.8·29.5/37.5 = 0.371 → 0.5.
        c.on_ack(&ack(US, 20 * US, true));
        assert_close(c.cwnd, 100_000.0);
        // A marked ACK above Q_high with a large achievedBDP also takes the MD branch.
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 60_000;
        c.on_ack(&ack(US, 30 * US, true));
        assert_close(c.cwnd, 100_000.0);
    }

    //= spec §2.5.6 (MD also for unmarked target ≤ d ≤ Q_high); type=test
    #[test]
    fn unmarked_ack_between_target_and_qhigh_can_cut() {
        let mut c = strack(StrackParams::default());
        c.avg_delay = (16 * US).0 as f64;
        c.on_ack(&ack(US, 16 * US, false));
        // D̄ = 16 µs: factor 1 − 0.8·8/16 = 0.6.
        assert_close(c.cwnd, 120_000.0);
        // With D̄ ≤ T nothing happens.
        let mut c = strack(StrackParams::default());
        c.on_ack(&ack(US, 16 * US, false));
        assert_eq!(c.cwnd, 200_000.0);
    }

    //= strack Algorithm 4 l.6–7; spec §2.5.6 quadrant 4, E7; type=test
    #[test]
    fn quadrant_4_adds_beta_over_cwnd_and_never_fast_converges() {
        let mut c = strack(StrackParams::default());
        // Everything that would allow fast convergence, but the ACK is unmarked.
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 8192;
        let w = c.cwnd_pkts();
        c.on_ack(&ack(US, 30 * US, false));
        assert_close(c.cwnd_pkts(), w + BETA / w);
        // At exactly Q_high (24 µs) it is not quadrant 4 but the MD branch (D̄ > T, d > T).
        let w = c.cwnd;
        c.on_ack(&ack(2 * US, 24 * US, false));
        assert!(c.cwnd < w);
    }

    //= strack Algorithm 4 l.11–13; spec §2.5.6 (fast convergence); type=test
    #[test]
    fn fast_convergence_sets_window_to_achieved_bdp_only_when_gated() {
        let marked_30 = ack(US, 30 * US, true);
        // Marked, d = 30 µs > Q_high, D̄ > T, achievedBDP 20 000 < 50 000: cwnd ← 20 000 B.
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 20_000;
        c.on_ack(&marked_30);
        assert_close(c.cwnd, 20_000.0);
        assert_eq!(c.last_decrease, Some(US));
        // Gated once per base RTT like MD.
        c.achieved_bdp = 10_000;
        c.on_ack(&ack(2 * US, 30 * US, true));
        assert_close(c.cwnd, 20_000.0);
        // achievedBDP at max_cwnd/8 = 50 000 or above: MD instead.
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 50_000;
        c.on_ack(&marked_30);
        assert_close(c.cwnd, 100_000.0);
        // d ≤ Q_high: MD, not the jump.
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 20_000;
        c.on_ack(&ack(US, 24 * US, true));
        assert_close(c.cwnd, 100_000.0);
        // D̄ ≤ T: nothing.
        let mut c = strack(StrackParams::default());
        c.achieved_bdp = 20_000;
        c.on_ack(&marked_30);
        assert_eq!(c.cwnd, 200_000.0);
        // fast_convergence_fraction = 0 disables it.
        let mut c = strack(StrackParams { fast_convergence_fraction: 0.0, ..StrackParams::default() });
        c.avg_delay = (40 * US).0 as f64;
        c.achieved_bdp = 0;
        c.on_ack(&marked_30);
        assert_close(c.cwnd, 100_000.0);
    }

    //= strack Algorithm 4 l.19–21; spec §2.5.6 (η once per base RTT); type=test
    #[test]
    fn eta_is_added_once_per_base_rtt() {
        let mut c = strack(StrackParams::default());
        let step = ETA * MTU;
        // Quadrant-2 ACKs (no other change); start at 0, base RTT 8 µs, strict ">".
        let mut want = 200_000.0;
        for (t, fires) in [(4 * US, false), (8 * US, false), (9 * US, true), (10 * US, false), (17 * US, false), (17 * US + Time(1), true)] {
            c.on_ack(&ack(t, US, true));
            if fires {
                want += step;
            }
            assert_close(c.cwnd, want);
        }
    }

    //= strack Algorithm 2; spec §2.5.5, §2.7 E5; type=test
    #[test]
    fn achieved_bdp_closes_after_base_rtt_plus_target_counting_each_ack_once() {
        let mut c = strack(StrackParams::default());
        // Window: longer than base_rtt + T = 16 µs since the start (0). One packet every 2 µs.
        for t in (2..=16).step_by(2) {
            c.on_ack(&ack(t * US, Time::ZERO, false));
            assert_eq!(c.achieved_bdp(), 0, "window closed early at {t} µs");
        }
        // 18 µs closes it, counting this ACK: 9 × 4096.
        c.on_ack(&ack(18 * US, Time::ZERO, false));
        assert_eq!(c.achieved_bdp(), 9 * 4096);
        // Next window runs from 18 µs; at 34 µs (16 µs later) it is still open, 36 µs closes.
        for t in (20..=34).step_by(2) {
            c.on_ack(&AckEvent { acked_bytes: Bytes(2 * 4096), ..ack(t * US, Time::ZERO, false) });
        }
        assert_eq!(c.achieved_bdp(), 9 * 4096);
        c.on_ack(&ack(36 * US, Time::ZERO, false));
        assert_eq!(c.achieved_bdp(), 8 * 2 * 4096 + 4096);
        assert_eq!(c.rx_count, 0);
    }

    //= spec §2.1.2 (per-ACK increment scaling) ; type=test
    #[test]
    fn coalesced_acks_scale_the_increase_by_packets_acked() {
        for (bytes, k) in [(4 * 4096, 4.0), (2048, 0.5), (0, 0.0)] {
            let mut c = strack(StrackParams::default());
            let w = c.cwnd_pkts();
            c.on_ack(&AckEvent { acked_bytes: Bytes(bytes), ..ack(US, 2 * US, false) });
            assert_close(c.cwnd_pkts(), w + k * ALPHA * 6.0 / w);
            let mut c = strack(StrackParams::default());
            c.on_ack(&AckEvent { acked_bytes: Bytes(bytes), ..ack(US, 30 * US, false) });
            assert_close(c.cwnd_pkts(), w + k * BETA / w);
            // A zero-byte ACK still feeds the EWMA.
            assert_close(c.avg_delay(), 0.125 * (30 * US).0 as f64);
        }
    }

    //= spec §2.5.6 (clamp to [min_cwnd, max_cwnd]); type=test
    #[test]
    fn window_stays_within_bounds() {
        let mut c = Strack::new(&StrackParams::default(), &path(400.0));
        c.on_send(Time::ZERO, 4096);
        for i in 1..=200 {
            c.on_ack(&ack(i * US, Time::ZERO, false));
            assert!(c.cwnd <= 400_000.0);
        }
        assert_eq!(c.window(), Some(400_000));
        // Repeated halvings end at one packet.
        for i in 1..=200 {
            c.on_ack(&ack(200 * US + i * 10 * US, 20 * US, true));
            assert!(c.cwnd >= 4096.0);
        }
        assert_eq!(c.window(), Some(4096));
        // Fast convergence to an achievedBDP of 0 (no window closed yet) is clamped to one packet.
        let mut c = strack(StrackParams::default());
        c.avg_delay = (40 * US).0 as f64;
        c.on_ack(&ack(US, 30 * US, true));
        assert_eq!(c.window(), Some(4096));
        assert_close(c.cwnd_pkts(), 1.0);
        // Configured bounds, initial window clamped into them.
        let p = StrackParams { min_cwnd_pkts: 4.0, max_cwnd_bdp: 0.5, initial_cwnd_bdp: Some(2.0), ..StrackParams::default() };
        let c = Strack::new(&p, &path(400.0));
        assert_eq!(c.window(), Some(200_000));
        assert_close(c.min_cwnd, 4.0 * 4096.0);
    }

    //= spec §2.1.2 (no loss-triggered cut; optional RTO halving); type=test
    #[test]
    fn timeouts_leave_the_window_unless_configured() {
        let to = TimeoutEvent { now: 50 * US, lost_bytes: Bytes(4096), in_flight: 0, consecutive: 1, latest_sent_at: 10 * US };
        let mut c = strack(StrackParams::default());
        c.on_timeout(&to);
        assert_eq!(c.cwnd, 200_000.0);
        let mut c = strack(StrackParams { rto_halves_window: true, ..StrackParams::default() });
        c.on_timeout(&to);
        assert_eq!(c.cwnd, 100_000.0);
        for _ in 0..20 {
            c.on_timeout(&to);
        }
        assert_eq!(c.cwnd, 4096.0);
    }

    #[test]
    fn bad_params_name_their_key() {
        let d = StrackParams::default;
        let cases: [(&str, StrackParams); 11] = [
            ("net_base_rtt_us", StrackParams { net_base_rtt_us: Some(0.0), ..d() }),
            ("reference_bdp_bytes", StrackParams { reference_bdp_bytes: Bytes::ZERO, ..d() }),
            ("max_cwnd_bdp", StrackParams { max_cwnd_bdp: -1.0, ..d() }),
            ("min_cwnd_pkts", StrackParams { min_cwnd_pkts: f64::NAN, ..d() }),
            ("target_qdelay_us", StrackParams { target_qdelay_us: Some(f64::INFINITY), ..d() }),
            ("qhigh_factor", StrackParams { qhigh_factor: 0.5, ..d() }),
            ("ewma", StrackParams { ewma: 0.0, ..d() }),
            ("beta_per_sf", StrackParams { beta_per_sf: -5.0, ..d() }),
            ("gamma", StrackParams { gamma: 1.5, ..d() }),
            ("md_floor", StrackParams { md_floor: 0.0, ..d() }),
            ("fast_convergence_fraction", StrackParams { fast_convergence_fraction: 2.0, ..d() }),
        ];
        for (field, p) in cases {
            match p.validate() {
                Err(Error::Invalid { key, .. }) => assert_eq!(key, format!("transport.cc.{field}")),
                other => panic!("{field}: expected Error::Invalid, got {other:?}"),
            }
        }
        assert!(StrackParams::default().validate().is_ok());
    }

    #[test]
    fn scenario_table_selects_strack_and_rejects_unknown_keys() {
        let cfg: super::super::CcConfig = toml::from_str("name = \"strack\"\nmax_cwnd_bdp = 1.5\nnet_base_rtt_us = 8.0").unwrap();
        match &cfg {
            super::super::CcConfig::Strack(p) => {
                assert_eq!(p.max_cwnd_bdp, 1.5);
                assert_eq!(p.net_base_rtt_us, Some(8.0));
            }
            other => panic!("{other:?}"),
        }
        assert!(cfg.validate().is_ok());
        let built = cfg.build(&mut path(400.0));
        assert_eq!(built.window(), Some(600_000));
        let err = toml::from_str::<super::super::CcConfig>("name = \"strack\"\ngama = 0.8").unwrap_err();
        assert!(err.to_string().contains("gama"), "{err}");
    }
}
