//! `smartt`: SMaRTT, a sender-only window controller for lossy Ethernet with packet trimming
//! that combines the ECN bit and the RTT of every acknowledged packet, plus QuickAdapt (jump to
//! the delivered rate on a trimmed packet), FastIncrease and Wait-To-Decrease.
//!
//! **Follows:** Bonato et al., "SMaRTT-REPS" (arXiv 2404.01630 v1) §3.1–§3.6.1; spec
//! `shared/specs/smartt-reps.md` §2.1–§2.11 (reconstruction of the paper's Algorithms 4, 5, 7)
//! and §2.14.6 (ablations).
//!
//! Per ACK (spec §2.6–§2.7, paper §3.2) the (ECN, RTT vs target) pair picks one of four cases:
//! MI + fair increase (clean, RTT ≤ target), fair increase (clean, RTT > target), fair decrease
//! (marked, RTT ≤ target), MD + fair decrease (marked, RTT > target). Increase gains `fi`, `mi`
//! are scaled by γ = BDP / `reference_bdp_bytes`; decrease gains are not (paper §3.5). The window
//! stays in [`min_window_mtu` MTU, `max_window_bdp` BDP].
//!
//! **Parameters** (all in [`SmarttParams`], TOML keys under `transport.cc`):
//! `trtt_ratio` 1.5, `fi` 0.25, `fd` 0.8, `mi` brtt/(trtt−brtt) = 2, `md` 2, `timeout_md` 4,
//! `reference_bdp_bytes` 150 000, `min_window_mtu` 1, `max_window_bdp` 1.25,
//! `initial_window_bdp` 1.25, `md_cap_includes_fd` false, `wtd` true, `wtd_alpha` 0.125,
//! `wtd_threshold` 0.25, `quick_adapt` true, `qa_scaling` 0.8, `qa_epoch_trtt` 1,
//! `qa_min_gap_trtt` 1, `qa_on_timeout` false, `nack_decrease_mtu` 1, `fast_increase` true,
//! `fast_k` 2, `fast_eps_mtus` 5, `react_every` 1, `signals` "both"; unset by default, the
//! absolute forms htsim_eqds's SMaRTT needs (uec-spec §9): `max_window_bytes`,
//! `initial_window_bytes` (instead of the BDP multiples) and `target_qdelay_us` (target RTT =
//! base RTT + this, instead of `trtt_ratio`). Each field's doc comment names its source.
//!
//! **Differences** (tagged `type=deviation` below):
//! - Sizes are wire bytes (payload + header): fabricsim's windows and in-flight counts are wire
//!   bytes, so `size` in the formulas is the ACK's newly acknowledged wire bytes and `mtu` the
//!   full packet's wire size. The spec writes payload bytes.
//! - QuickAdapt's ignore window is a send-time watermark, not the spec's byte counter
//!   (`qa_ignore = inflight`, §2.9): feedback about a packet whose (latest) transmission began
//!   before the QA moment is "pre-QA". With spraying, post-QA packets can be acknowledged before
//!   pre-QA ones; the watermark classifies each packet exactly, the counter only approximately.
//!   This is what the paper describes (§3.3: ignore the congestion information of all packets
//!   in flight when QA fires).
//! - Spec and paper disagree on timeouts: the spec (§2.11, U25) lets every RTO raise QuickAdapt
//!   even when switches trim (`rto_triggers_qa` = on); the paper (§3.3 "QuickAdapt without
//!   trimming") uses timeouts as QA trigger only as the fallback for switches that cannot trim,
//!   and then doubles `md`. The paper wins: `qa_on_timeout` defaults to off and, when on, also
//!   replaces `md` by `timeout_md` (4). Set it for fabrics with `switch.trimming = false`.
//! - The paper (§3.3) says the *receiver* ignores stale congestion information; in a
//!   sender-only scheme this must be the sender (spec Appendix B.5), as here.
//!
//! Where the paper is silent this module takes the spec's ASSUMPTION choices (spec §2.15):
//! WTD α = 0.125 (U2); FastIncrease tolerance of 5 MTU serialisation times (U3), exit on any
//! congested ACK / NACK / RTO / QA, replacing the four cases, `k` not γ-scaled (U4); QA epochs
//! back to back from the first feedback, lazily evaluated at feedback events and normalised if
//! they overran (U5); a 1-MTU cut per NACK outside the ignore window (U7); initial window
//! 1.25 BDP (U9, paper Fig. 2 caption: 1.42 MiB); RTT = target counts as below target (U10);
//! the MD cap covers the MD term only (U11); WTD gates FD and MD only, a NACK counts as a mark in
//! its EWMA (U27); the ECN-only / RTT-only ablations are the simple controllers of §2.14.6 (U28,
//! first reading) with no QA, FI/FD, FastIncrease or WTD, and (our choice, the spec is silent) a
//! NACK cutting half an MTU, the largest per-packet cut of those controllers.

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "smartt";
/// Registry summary.
pub const SUMMARY: &str = "SMaRTT: ECN + RTT window control with QuickAdapt on trims, FastIncrease, Wait-To-Decrease";

/// Which congestion signals drive the per-ACK window update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signals {
    /// Full SMaRTT: ECN and RTT select one of the four cases.
    Both,
    /// Ablation (paper §3.1, Fig. 2/3a; spec §2.14.6): a marked ACK cuts half an MTU, an
    /// unmarked one adds MTU·size/cwnd; the RTT is ignored.
    EcnOnly,
    /// Ablation (same sources): RTT above target cuts min(MTU/2, (rtt−trtt)/rtt·md·size),
    /// otherwise add MTU·size/cwnd; the ECN bit is ignored.
    RttOnly,
}

/// Named sets of defaults (`preset = "htsim"`); keys given beside the preset still win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmarttPreset {
    /// The paper's values (the defaults).
    Paper,
    /// The public SMaRTT implementation's values (uec-spec §7: `spcl/HTSIM` `sim/uec.cpp`
    /// @ 9bac3ae): fi 0.15 and mi 1 without BDP scaling, fd 1, md 1 with the one-packet cap over
    /// both decrease terms, WTD threshold 0.3, QA scaling 1, windows of 1 BDP, target 1.51 × base.
    Htsim,
}

impl SmarttParams {
    /// The defaults of `preset`.
    pub fn preset(preset: SmarttPreset) -> SmarttParams {
        let paper = SmarttParams::default();
        match preset {
            SmarttPreset::Paper => SmarttParams { preset: Some(SmarttPreset::Paper), ..paper },
            //= uec-spec §7 (spcl/HTSIM sim/uec.cpp @ 9bac3ae)
            //# x/y/z/w gains, the WTD EWMA, QA's bonus_drop, 1-BDP windows, target 1.51 × base.
            SmarttPreset::Htsim => SmarttParams {
                preset: Some(SmarttPreset::Htsim),
                trtt_ratio: 1.51,
                fi: 0.15,
                mi: Some(1.0),
                fd: 1.0,
                md: 1.0,
                scale_gains: false,
                md_cap_includes_fd: true,
                wtd_alpha: 0.125,
                wtd_threshold: 0.3,
                qa_scaling: 1.0,
                initial_window_bdp: 1.0,
                max_window_bdp: 1.0,
                ..paper
            },
        }
    }
}

/// Parameters of `smartt`, with the paper's defaults.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmarttParams {
    /// A named set of defaults for the keys not given: `"paper"` (the defaults below) or
    /// `"htsim"` (the public implementation's; uec-spec §7). Left out of resolved scenarios while
    /// unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<SmarttPreset>,
    /// Scale `fi` and `mi` by γ = BDP / `reference_bdp_bytes` (paper §3.5: on; the public
    /// implementation does not). Left out of resolved scenarios while on.
    #[serde(skip_serializing_if = "is_true")]
    pub scale_gains: bool,
    /// Target RTT as a multiple of the path's base RTT (paper §3 and §3.5: 1.5; spec §2.1).
    pub trtt_ratio: f64,
    /// Fair-increase gain `fi` at the 100 Gb/s reference, scaled by γ (paper §3.2.3, §3.5:
    /// 0.25; spec §2.2).
    pub fi: f64,
    /// Fair-decrease gain `fd`, not scaled (paper §3.2.1, §3.5: 0.8; spec §2.2).
    pub fd: f64,
    /// Multiplicative-increase gain `mi` at the reference, scaled by γ; `None` derives it as
    /// brtt/(trtt−brtt) = 1/(trtt_ratio−1), i.e. 2 for the default target (paper §3.2.4).
    pub mi: Option<f64>,
    /// Multiplicative-decrease gain `md`, not scaled: one packet per ACK at rtt = 2·trtt
    /// (paper §3.2.2: 2; spec §2.2).
    pub md: f64,
    /// `md` used instead of [`md`](Self::md) when `qa_on_timeout` is on: the paper doubles it
    /// without trimming (paper §3.3 "QuickAdapt without trimming": 4; spec §2.2, §2.9).
    pub timeout_md: f64,
    /// BDP of the reference network for which `fi` and `mi` were tuned, 100 Gb/s × 12 µs
    /// (paper §3.5: 150 000 B; spec §2.1). γ = path BDP / this.
    pub reference_bdp_bytes: Bytes,
    /// Smallest window, in full-size packets (paper §3.5: 1 MTU; spec §2.1).
    pub min_window_mtu: f64,
    /// Largest window, in path BDPs; above 1 to absorb transient bursts (paper §3.5: 1.25;
    /// spec §2.1).
    pub max_window_bdp: f64,
    /// Initial window, in path BDPs (spec §2.2 / U9: 1.25, from the paper's Fig. 2 caption, windows
    /// start at 1.42 MiB ≈ 1.25 BDP).
    pub initial_window_bdp: f64,
    /// Largest window in bytes, the same on every path, instead of `max_window_bdp` (htsim_eqds
    /// caps its SMaRTT window at `-cwnd` packets; uec-spec §9). Left out of resolved scenarios
    /// while unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_window_bytes: Option<u64>,
    /// Initial window in bytes instead of `initial_window_bdp`. Left out while unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window_bytes: Option<u64>,
    /// Target queueing delay in µs: target RTT = path base RTT + this, instead of `trtt_ratio` ×
    /// the base RTT (htsim_eqds: 7 µs on every path). Left out while unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_qdelay_us: Option<f64>,
    /// Whether the one-packet cap of the MD case also covers the fair decrease applied with it
    /// (spec §2.7 / U11: false, the paper's Eq. 1 caps the MD term; true is the reference
    /// implementation's variant).
    pub md_cap_includes_fd: bool,
    /// Wait-To-Decrease: skip ECN-driven decreases while the EWMA of marks is below
    /// `wtd_threshold` (paper §3.6.1: on; spec §2.8). Off reproduces Fig. 9b's baseline.
    pub wtd: bool,
    /// EWMA gain α of the WTD mark average (spec §2.8 / U2 ASSUMPTION: 0.125; the paper does not
    /// give it).
    pub wtd_alpha: f64,
    /// ECN decreases are allowed once the mark EWMA reaches this (paper §3.6.1: 0.25).
    pub wtd_threshold: f64,
    /// QuickAdapt on trimmed packets (paper §3.3; spec §2.9: on).
    pub quick_adapt: bool,
    /// QuickAdapt sets the window to this × the bytes acknowledged in the last epoch (paper §3.5:
    /// 0.8, so the RTT settles near 1.2·brtt, around Kmin).
    pub qa_scaling: f64,
    /// QuickAdapt measurement epoch, in target RTTs (paper §3.3: bytes over the last trtt: 1).
    pub qa_epoch_trtt: f64,
    /// Least time between two QuickAdapts, in target RTTs (paper §3.3: at most once per trtt: 1).
    pub qa_min_gap_trtt: f64,
    /// Whether retransmission timeouts trigger QuickAdapt (and `md` becomes `timeout_md`), the
    /// paper's mode for switches without trimming (paper §3.3; spec §2.9, §2.11). Default off:
    /// with trimming the paper reacts to trims only (the spec's U25 differs, see module doc).
    pub qa_on_timeout: bool,
    /// Extra window cut per NACK outside the QA ignore window, in MTUs; 0 = QA only (spec §2.2,
    /// §2.11 / U7 ASSUMPTION from the reference implementation: 1).
    pub nack_decrease_mtu: f64,
    /// FastIncrease after a full window of uncongested ACKs (paper §3.4; spec §2.10: on).
    pub fast_increase: bool,
    /// FastIncrease step `k`, in MTUs per ACK, not γ-scaled (paper §3.4: 2; spec §2.10 / U4).
    pub fast_k: f64,
    /// An ACK counts as "near base RTT" for FastIncrease if rtt ≤ brtt + this many full-packet
    /// serialisation times at the host rate (spec §2.2 / U3 ASSUMPTION: 5).
    pub fast_eps_mtus: f64,
    /// Apply the window update on every N-th ACK only, scaled by N (paper §3.1, Fig. 3b: 1 =
    /// per packet; spec §2.6, §2.14.6).
    pub react_every: u32,
    /// Signals used: "both" (SMaRTT), or the "ecn_only" / "rtt_only" ablations (paper §3.1,
    /// Fig. 2; spec §2.14.6).
    pub signals: Signals,
}

fn is_true(v: &bool) -> bool {
    *v
}

impl Default for SmarttParams {
    fn default() -> Self {
        SmarttParams {
            preset: None,
            scale_gains: true,
            trtt_ratio: 1.5,
            fi: 0.25,
            fd: 0.8,
            mi: None,
            md: 2.0,
            timeout_md: 4.0,
            reference_bdp_bytes: Bytes(150_000),
            min_window_mtu: 1.0,
            max_window_bdp: 1.25,
            initial_window_bdp: 1.25,
            max_window_bytes: None,
            initial_window_bytes: None,
            target_qdelay_us: None,
            md_cap_includes_fd: false,
            wtd: true,
            wtd_alpha: 0.125,
            wtd_threshold: 0.25,
            quick_adapt: true,
            qa_scaling: 0.8,
            qa_epoch_trtt: 1.0,
            qa_min_gap_trtt: 1.0,
            qa_on_timeout: false,
            nack_decrease_mtu: 1.0,
            fast_increase: true,
            fast_k: 2.0,
            fast_eps_mtus: 5.0,
            react_every: 1,
            signals: Signals::Both,
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

impl SmarttParams {
    pub(super) fn validate(&self) -> Result<()> {
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        require(self.trtt_ratio.is_finite() && self.trtt_ratio > 1.0, "trtt_ratio", self.trtt_ratio, "a number above 1")?;
        require(nonneg(self.fi), "fi", self.fi, "a non-negative number")?;
        require(nonneg(self.fd), "fd", self.fd, "a non-negative number")?;
        if let Some(mi) = self.mi {
            require(nonneg(mi), "mi", mi, "a non-negative number")?;
        }
        require(nonneg(self.md), "md", self.md, "a non-negative number")?;
        require(nonneg(self.timeout_md), "timeout_md", self.timeout_md, "a non-negative number")?;
        require(self.reference_bdp_bytes > Bytes::ZERO, "reference_bdp_bytes", self.reference_bdp_bytes, "at least 1 byte")?;
        require(positive(self.min_window_mtu), "min_window_mtu", self.min_window_mtu, "a positive number")?;
        require(positive(self.max_window_bdp), "max_window_bdp", self.max_window_bdp, "a positive number")?;
        require(positive(self.initial_window_bdp), "initial_window_bdp", self.initial_window_bdp, "a positive number")?;
        for (key, v) in [("max_window_bytes", self.max_window_bytes), ("initial_window_bytes", self.initial_window_bytes)] {
            if let Some(v) = v {
                require(v > 0, key, v, "at least 1 byte")?;
            }
        }
        if let Some(d) = self.target_qdelay_us {
            require(positive(d), "target_qdelay_us", d, "a positive number of µs")?;
        }
        require(self.wtd_alpha > 0.0 && self.wtd_alpha <= 1.0, "wtd_alpha", self.wtd_alpha, "in (0, 1]")?;
        require((0.0..=1.0).contains(&self.wtd_threshold), "wtd_threshold", self.wtd_threshold, "in [0, 1]")?;
        require(positive(self.qa_scaling), "qa_scaling", self.qa_scaling, "a positive number")?;
        require(positive(self.qa_epoch_trtt), "qa_epoch_trtt", self.qa_epoch_trtt, "a positive number")?;
        require(nonneg(self.qa_min_gap_trtt), "qa_min_gap_trtt", self.qa_min_gap_trtt, "a non-negative number")?;
        require(nonneg(self.nack_decrease_mtu), "nack_decrease_mtu", self.nack_decrease_mtu, "a non-negative number")?;
        require(nonneg(self.fast_k), "fast_k", self.fast_k, "a non-negative number")?;
        require(nonneg(self.fast_eps_mtus), "fast_eps_mtus", self.fast_eps_mtus, "a non-negative number")?;
        require(self.react_every >= 1, "react_every", self.react_every, "at least 1")?;
        Ok(())
    }
}

/// The controller of one connection. Plain fields only: nothing is allocated per ACK.
#[derive(Clone, Debug)]
pub struct Smartt {
    p: SmarttParams,

    // --- constants of the path, fixed at build time ---
    /// Full packet on the wire, bytes.
    mtu: f64,
    /// Path BDP, bytes.
    bdp: f64,
    target_rtt: Time,
    /// `fi`·γ.
    fi_scaled: f64,
    /// `mi`·γ.
    mi_scaled: f64,
    /// `md`, or `timeout_md` in timeout mode.
    md: f64,
    min_window: f64,
    max_window: f64,
    /// RTT at or below which an unmarked ACK counts as uncongested for FastIncrease.
    fast_rtt_limit: Time,
    qa_epoch: Time,
    qa_min_gap: Time,

    // --- state ---
    /// Congestion window, wire bytes.
    cwnd: f64,
    /// WTD: EWMA of ECN marks (NACKs count as marks).
    avg_wtd: f64,
    /// A severe signal (trim, or timeout in timeout mode) asks for QuickAdapt at the epoch end.
    qa_pending: bool,
    /// Start of the current QA measurement epoch; `None` until the first feedback.
    qa_epoch_start: Option<Time>,
    /// Wire bytes acknowledged in the current epoch.
    qa_acked: u64,
    /// When QuickAdapt last set the window. Feedback about transmissions that began before it
    /// is already accounted for by the new window and is ignored.
    qa_applied_at: Option<Time>,
    /// Consecutive uncongested bytes acknowledged (FastIncrease).
    fast_good_bytes: u64,
    /// FastIncrease is in force.
    fast_active: bool,
    /// ACKs since the last window update (`react_every`).
    acks_since_update: u32,
}

impl Smartt {
    /// A controller for a connection on `path`.
    pub fn new(p: &SmarttParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.0 as f64;
        let bdp = path.bdp_bytes.max(Bytes(1)).0 as f64;
        let target_rtt = match p.target_qdelay_us {
            // An absolute queueing delay on top of each path's base RTT (htsim_eqds).
            Some(d) => path.base_rtt + Time((d * 1e6).round() as u64),
            None => Time((path.base_rtt.0 as f64 * p.trtt_ratio).round() as u64),
        };
        //= smartt-reps §3.5; spec §2.1 (γ scaling)
        //# Increase gains were tuned at 100 Gb/s × 12 µs; bigger pipes may grow proportionally faster.
        let gamma = if p.scale_gains { bdp / p.reference_bdp_bytes.0 as f64 } else { 1.0 };
        //= smartt-reps §3.2.4
        //# mi = brtt/(trtt−brtt): at most one MTU per RTT of MI growth before γ scaling.
        let mi = p.mi.unwrap_or(1.0 / (p.trtt_ratio - 1.0));
        let min_window = p.min_window_mtu * mtu;
        // A BDP smaller than the minimum window (tiny fabrics) must not invert the bounds.
        let max_window = p.max_window_bytes.map_or(p.max_window_bdp * bdp, |b| b as f64).max(min_window);
        let serialisation = host_serialisation(path.host_rate, path.mtu_bytes.0);
        let trtt = target_rtt.0 as f64;
        Smartt {
            p: *p,
            mtu,
            bdp,
            target_rtt,
            fi_scaled: p.fi * gamma,
            mi_scaled: mi * gamma,
            //= smartt-reps §3.3 "QuickAdapt without trimming"
            //# Timeouts instead of trims: react harder to make drops rarer (md doubled).
            md: if p.qa_on_timeout { p.timeout_md } else { p.md },
            min_window,
            max_window,
            fast_rtt_limit: path.base_rtt + Time((p.fast_eps_mtus * serialisation.0 as f64).round() as u64),
            qa_epoch: (Time((trtt * p.qa_epoch_trtt).round() as u64)).max(Time(1)),
            qa_min_gap: Time((trtt * p.qa_min_gap_trtt).round() as u64),
            cwnd: p.initial_window_bytes.map_or(p.initial_window_bdp * bdp, |b| b as f64).clamp(min_window, max_window),
            avg_wtd: 0.0,
            qa_pending: false,
            qa_epoch_start: None,
            qa_acked: 0,
            qa_applied_at: None,
            fast_good_bytes: 0,
            fast_active: false,
            acks_since_update: 0,
        }
    }

    fn clamp_window(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_window, self.max_window);
    }

    /// Whether feedback about a transmission that began at `sent_at` predates the last
    /// QuickAdapt (and so is already reflected in the window it set).
    fn predates_quick_adapt(&self, sent_at: Time) -> bool {
        self.qa_applied_at.is_some_and(|t| sent_at < t)
    }

    /// Closes the QuickAdapt epoch if it has ended, applying a pending QuickAdapt. Called first
    /// in every feedback hook, so epochs are evaluated lazily at feedback events.
    //= smartt-reps §3.3, Alg. 5, Fig. 6; spec §2.9 qa_epoch_tick
    //# After a severe signal, at the epoch end set cwnd to qa_scaling × bytes acked in the epoch.
    fn quick_adapt_tick(&mut self, now: Time) {
        let Some(start) = self.qa_epoch_start else {
            //= spec §2.9 / U5; type=assumption
            //# The first epoch starts at the first feedback, so it always spans arriving ACKs.
            self.qa_epoch_start = Some(now);
            self.qa_acked = 0;
            return;
        };
        if now < start + self.qa_epoch {
            return;
        }
        if self.qa_pending {
            self.qa_pending = false;
            // Requests inside the minimum gap are dropped, not deferred (spec §2.9, REF-IMPL).
            let gap_ok = self.qa_applied_at.is_none_or(|t| now >= t + self.qa_min_gap);
            if gap_ok {
                //= spec §2.9 / U5; type=assumption
                //# Feedback is lazy: an epoch that overran is normalised back to one epoch's worth.
                let elapsed = ((now - start).max(self.qa_epoch)).0 as f64;
                let achieved = self.qa_acked as f64 * self.qa_epoch.0 as f64 / elapsed;
                self.cwnd = (self.p.qa_scaling * achieved).max(self.mtu);
                self.clamp_window();
                self.qa_applied_at = Some(now);
                self.fast_active = false;
                self.fast_good_bytes = 0;
            }
        }
        self.qa_epoch_start = Some(now);
        self.qa_acked = 0;
    }

    /// A trim (or a timeout in timeout mode) about a post-QuickAdapt transmission.
    fn on_severe_signal(&mut self) {
        if self.p.quick_adapt {
            self.qa_pending = true;
        }
        //= spec §2.11 / U7; type=assumption
        //# Besides QA, each fresh loss signal takes nack_decrease MTU off at once.
        self.cwnd -= self.p.nack_decrease_mtu * self.mtu;
        self.clamp_window();
    }

    fn wtd_allows_decrease(&self) -> bool {
        //= smartt-reps §3.6.1; spec §2.8
        //# Shrink on ECN only once a quarter of recent ACKs are marked; let REPS reroute first.
        !self.p.wtd || self.avg_wtd >= self.p.wtd_threshold
    }

    fn record_mark(&mut self, marked: bool) {
        let m = if marked { 1.0 } else { 0.0 };
        self.avg_wtd = self.p.wtd_alpha * m + (1.0 - self.p.wtd_alpha) * self.avg_wtd;
    }

    /// The four cases of SMaRTT's main loop, applied `batch` times over.
    fn four_cases(&mut self, size: f64, rtt: Time, marked: bool, batch: f64) {
        let rtt_f = rtt.max(Time(1)).0 as f64;
        let trtt = self.target_rtt.0 as f64;
        //= spec §2.7 / U10; type=assumption
        //# rtt == trtt counts as below target.
        let above_target = rtt > self.target_rtt;
        match (marked, above_target) {
            (false, false) => {
                //= smartt-reps §3.2.4, Eq. 2; spec §2.7 case 1 (MI + Fair Increase)
                //# Grow in proportion to the headroom below target, at most one packet per ACK.
                let inc_mi = (((trtt - rtt_f) / rtt_f) * (size / self.cwnd) * self.mtu * self.mi_scaled).min(size);
                self.cwnd += batch * inc_mi;
                self.cwnd += batch * (size / self.cwnd) * self.mtu * self.fi_scaled;
            }
            (false, true) => {
                //= smartt-reps §3.2.3; spec §2.7 case 2 (Fair Increase)
                //# No mark: the delay is likely stale, so grow gently, relatively faster for small windows.
                self.cwnd += batch * (size / self.cwnd) * self.mtu * self.fi_scaled;
            }
            (true, false) => {
                //= smartt-reps §3.2.1; spec §2.7 case 3 (Fair Decrease)
                //# Queue building but not yet felt: cut fd·size·cwnd/bdp, so big windows give back more.
                if self.wtd_allows_decrease() {
                    self.cwnd -= batch * (self.cwnd / self.bdp) * self.p.fd * size;
                }
            }
            (true, true) => {
                //= smartt-reps §3.2.2, Eq. 1; spec §2.7 case 4 (MD + Fair Decrease)
                //# Cut in proportion to the excess over target, the MD term at most one packet per ACK.
                if self.wtd_allows_decrease() {
                    let dec_md = (((rtt_f - trtt) / rtt_f) * self.md * size).min(size);
                    if self.p.md_cap_includes_fd {
                        let dec_fd = (self.cwnd / self.bdp) * self.p.fd * size;
                        self.cwnd -= batch * (dec_md + dec_fd).min(self.mtu);
                    } else {
                        self.cwnd -= batch * dec_md;
                        self.cwnd -= batch * (self.cwnd / self.bdp) * self.p.fd * size;
                    }
                }
            }
        }
    }

    /// The single-signal comparison controllers of the ablation (spec §2.14.6, first reading).
    fn single_signal_update(&mut self, size: f64, rtt: Time, marked: bool, batch: f64) {
        let half_mtu = self.mtu / 2.0;
        let congested_cut = match self.p.signals {
            Signals::EcnOnly => marked.then_some(half_mtu),
            Signals::RttOnly => (rtt > self.target_rtt).then(|| {
                let rtt_f = rtt.0 as f64;
                let trtt = self.target_rtt.0 as f64;
                (((rtt_f - trtt) / rtt_f) * self.md * size).min(half_mtu)
            }),
            Signals::Both => unreachable!("full SMaRTT does not use the ablation update"),
        };
        match congested_cut {
            Some(cut) => self.cwnd -= batch * cut,
            None => self.cwnd += batch * self.mtu * size / self.cwnd,
        }
    }
}

/// Serialisation time of `bytes` at `rate` (0 for a zero rate, which only test paths use).
fn host_serialisation(rate: BitsPerSec, bytes: u64) -> Time {
    if rate.0 == 0 {
        Time::ZERO
    } else {
        rate.tx_time(Bytes(bytes))
    }
}

impl CongestionControl for Smartt {
    //= smartt-reps §3.2, Alg. 4; spec §2.6 (ACK handler)
    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.acked_bytes == Bytes::ZERO {
            // Duplicate: its packet's feedback was already taken (spec §2.6).
            return;
        }
        let size = ev.acked_bytes.0 as f64;
        // With coalesced ACKs, a mark on any covered packet counts.
        let marked = ev.ecn || ev.marked_pkts > 0;
        let sent_at = ev.now.saturating_sub(ev.rtt);
        let batch = self.p.react_every as f64;

        if self.p.signals != Signals::Both {
            // The ablations have no QuickAdapt, hence no ignore window, WTD or FastIncrease.
            self.acks_since_update += 1;
            if self.acks_since_update < self.p.react_every {
                return;
            }
            self.acks_since_update = 0;
            self.single_signal_update(size, ev.rtt, marked, batch);
            self.clamp_window();
            return;
        }

        self.quick_adapt_tick(ev.now);
        self.qa_acked += ev.acked_bytes.0;
        self.record_mark(marked);

        //= smartt-reps §3.4, Alg. 7; spec §2.10
        //# Count consecutive bytes with no mark and RTT near base; any congested ACK resets.
        if !marked && ev.rtt <= self.fast_rtt_limit {
            self.fast_good_bytes += ev.acked_bytes.0;
        } else {
            self.fast_good_bytes = 0;
            self.fast_active = false;
        }

        //= smartt-reps §3.3; spec §2.9 (ignore window) / U6
        //# Congestion reported by pre-QA packets is already priced into the QA window.
        if self.predates_quick_adapt(sent_at) && marked {
            return;
        }

        //= smartt-reps §3.1, Fig. 3b; spec §2.6 (react_every, batch multiplier)
        self.acks_since_update += 1;
        if self.acks_since_update < self.p.react_every {
            return;
        }
        self.acks_since_update = 0;

        if self.p.fast_increase && (self.fast_active || self.fast_good_bytes as f64 >= self.cwnd) {
            //= smartt-reps §3.4; spec §2.10 / U4; type=assumption
            //# A full clean window: k MTU per ACK, in place of the four cases, until congestion.
            self.fast_active = true;
            self.cwnd += batch * self.p.fast_k * self.mtu;
        } else {
            self.four_cases(size, ev.rtt, marked, batch);
        }
        self.clamp_window();
    }

    //= smartt-reps §3.3; spec §2.11 (NACK handler)
    fn on_nack(&mut self, ev: &NackEvent) {
        if self.p.signals != Signals::Both {
            //= spec §2.14.6; type=assumption
            //# The single-signal controllers take a trim as their largest per-packet cut.
            self.cwnd -= self.mtu / 2.0;
            self.clamp_window();
            return;
        }
        self.quick_adapt_tick(ev.now);
        //= spec §2.8 / U27; type=assumption
        //# A trim is a mark for the WTD average.
        self.record_mark(true);
        self.fast_good_bytes = 0;
        self.fast_active = false;
        if !self.predates_quick_adapt(ev.sent_at) {
            self.on_severe_signal();
        }
    }

    //= smartt-reps §3.3 "QuickAdapt without trimming"; spec §2.11 (RTO handler)
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if self.p.signals != Signals::Both {
            return;
        }
        self.quick_adapt_tick(ev.now);
        self.fast_good_bytes = 0;
        self.fast_active = false;
        // Only when every lost packet predates the last QA is the timeout stale.
        if self.p.qa_on_timeout && !self.predates_quick_adapt(ev.latest_sent_at) {
            self.on_severe_signal();
        }
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd as u64)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

impl crate::scheme::Scheme<PathInfo> for Smartt {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("trtt_ratio", 1.001, 100.0), crate::scheme::Limit::new("fi", 0.0, 1000.0), crate::scheme::Limit::new("fd", 0.0, 1000.0), crate::scheme::Limit::new("mi", 0.0, 1000.0), crate::scheme::Limit::new("md", 0.0, 1000.0), crate::scheme::Limit::new("timeout_md", 0.0, 1000.0), crate::scheme::Limit::new("reference_bdp_bytes", 1.0, 1099511627776.0), crate::scheme::Limit::new("min_window_mtu", 0.001, 1000000.0), crate::scheme::Limit::new("max_window_bdp", 0.001, 1000.0), crate::scheme::Limit::new("initial_window_bdp", 0.001, 1000.0), crate::scheme::Limit::new("max_window_bytes", 1.0, 1099511627776.0), crate::scheme::Limit::new("initial_window_bytes", 1.0, 1099511627776.0), crate::scheme::Limit::new("target_qdelay_us", 0.001, 1000000.0), crate::scheme::Limit::new("wtd_alpha", 1e-6, 1.0), crate::scheme::Limit::new("wtd_threshold", 0.0, 1.0), crate::scheme::Limit::new("qa_scaling", 0.001, 100.0), crate::scheme::Limit::new("qa_epoch_trtt", 0.001, 1000.0), crate::scheme::Limit::new("qa_min_gap_trtt", 0.0, 1000.0), crate::scheme::Limit::new("nack_decrease_mtu", 0.0, 1000000.0), crate::scheme::Limit::new("fast_k", 0.0, 1000000.0), crate::scheme::Limit::new("fast_eps_mtus", 0.0, 1000000.0), crate::scheme::Limit::new("react_every", 1.0, 1000000.0)];
    type Params = SmarttParams;
    fn check(p: &SmarttParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &SmarttParams, path: &mut PathInfo) -> Self {
        Smartt::new(p, path)
    }
    //= uec-spec §7: the preset's values fill the keys the table leaves out
    fn fill_preset(table: &mut toml::Table) {
        let preset = match table.get("preset").and_then(|v| v.as_str()) {
            Some("htsim") => SmarttPreset::Htsim,
            Some("paper") => SmarttPreset::Paper,
            // Absent: the defaults; unknown: the field's parser names the allowed presets.
            _ => return,
        };
        if let Ok(toml::Value::Table(values)) = toml::Value::try_from(SmarttParams::preset(preset)) {
            for (k, v) in values {
                table.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Crafted ACK sequences on one path: 4096 B packets, 400 Gb/s, base RTT 10 µs, so
    //! BDP = 400e9/8 × 10e-6 = 500 000 B, γ = 500 000 / 150 000 = 10/3, target RTT 15 µs,
    //! window bounds [4096, 625 000] B. The four-case tests compare the window against the
    //! paper's formulas evaluated with these numbers.
    use super::*;
    use crate::units::{NS, US};

    const MTU: f64 = 4096.0;
    const BDP: f64 = 500_000.0;
    const GAMMA: f64 = BDP / 150_000.0;
    const TRTT_US: f64 = 15.0;

    fn path() -> PathInfo {
        PathInfo { mtu_bytes: Bytes(4096), host_rate: BitsPerSec::from_gbps(400.0), base_rtt: 10 * US, bdp_bytes: Bytes(500_000), hops: 6, net_base_rtt: 10 * US, src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 }
    }

    /// One full packet acknowledged, unmarked, RTT between base and target.
    const ACK: AckEvent = AckEvent {
        now: Time::from_us(100),
        acked_bytes: Bytes(4096),
        rtt: Time::from_us(12),
        ecn: false,
        marked_pkts: 0,
        in_flight: 0,
        entropy: 0,
        retransmitted: false,
    };

    const NACK: NackEvent =
        NackEvent { now: Time::from_us(100), bytes: Bytes(4096), cause: super::super::LossCause::Trimmed, entropy: 0, in_flight: 0, sent_at: Time::from_us(90), last_hop_paced: false };

    fn ack(now: Time, rtt: Time, ecn: bool) -> AckEvent {
        AckEvent { now, rtt, ecn, marked_pkts: ecn as u32, ..ACK }
    }

    /// A controller starting at half a BDP (250 000 B), away from both bounds.
    fn smartt(p: SmarttParams) -> Smartt {
        Smartt::new(&SmarttParams { initial_window_bdp: 0.5, ..p }, &path())
    }

    fn no_wtd() -> SmarttParams {
        SmarttParams { wtd: false, ..SmarttParams::default() }
    }

    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "window {got}, expected {want}");
    }

    //= spec §2.7 case 1; type=test
    #[test]
    fn clean_ack_below_target_is_multiplicative_plus_fair_increase() {
        let mut c = smartt(no_wtd());
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 12 * US, false));
        // inc_mi = min(size, (trtt−rtt)/rtt · size/cwnd · mtu · mi·γ), mi = 1/(1.5−1) = 2;
        // then fi·γ · size/cwnd · mtu on the grown window.
        let inc_mi = ((TRTT_US - 12.0) / 12.0 * (4096.0 / w) * MTU * 2.0 * GAMMA).min(4096.0);
        let w1 = w + inc_mi;
        let want = w1 + (4096.0 / w1) * MTU * 0.25 * GAMMA;
        assert!(want > w);
        assert_close(c.cwnd, want);
    }

    //= spec §2.7 case 2; type=test
    #[test]
    fn clean_ack_above_target_is_fair_increase_only() {
        let mut c = smartt(no_wtd());
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 20 * US, false));
        let want = w + (4096.0 / w) * MTU * 0.25 * GAMMA;
        assert!(want > w);
        assert_close(c.cwnd, want);
    }

    //= spec §2.7 case 3; type=test
    #[test]
    fn marked_ack_below_target_is_fair_decrease() {
        let mut c = smartt(no_wtd());
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 12 * US, true));
        // cwnd −= cwnd/bdp · fd · size = 250 000/500 000 · 0.8 · 4096 = 1638.4
        let want = w - (w / BDP) * 0.8 * 4096.0;
        assert_close(want, w - 1638.4);
        assert_close(c.cwnd, want);
    }

    //= spec §2.7 case 4; type=test
    #[test]
    fn marked_ack_above_target_is_multiplicative_plus_fair_decrease() {
        let mut c = smartt(no_wtd());
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 20 * US, true));
        // dec_md = min(size, (20−15)/20 · md 2 · 4096) = 2048, then the fair decrease.
        let w1 = w - 2048.0;
        let want = w1 - (w1 / BDP) * 0.8 * 4096.0;
        assert_close(c.cwnd, want);

        // At rtt = 60 µs the MD term (45/60 · 2 · 4096 = 6144) is capped at one packet.
        let w = c.cwnd;
        c.on_ack(&ack(101 * US, 60 * US, true));
        let w1 = w - 4096.0;
        assert_close(c.cwnd, w1 - (w1 / BDP) * 0.8 * 4096.0);
    }

    //= spec §2.7 / U11; type=test
    #[test]
    fn md_cap_can_cover_the_fair_decrease_too() {
        let mut c = smartt(SmarttParams { md_cap_includes_fd: true, ..no_wtd() });
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 60 * US, true));
        // MD 6144 + FD 1638.4 capped at one MTU.
        assert_close(c.cwnd, w - 4096.0);
    }

    //= smartt-reps §3.6.1; spec §2.8; type=test
    #[test]
    fn wait_to_decrease_holds_ecn_cuts_until_the_mark_average_reaches_threshold() {
        let mut c = smartt(SmarttParams::default());
        let w = c.cwnd;
        // EWMA after k marks from 0 with α = 1/8: 0.125, 0.234, 0.330.
        c.on_ack(&ack(100 * US, 12 * US, true));
        assert_close(c.avg_wtd, 0.125);
        assert_eq!(c.cwnd, w, "decrease while EWMA 0.125 < 0.25");
        c.on_ack(&ack(101 * US, 12 * US, true));
        assert_close(c.avg_wtd, 0.125 + 0.875 * 0.125);
        assert_eq!(c.cwnd, w, "decrease while EWMA 0.234 < 0.25");
        c.on_ack(&ack(102 * US, 12 * US, true));
        assert!(c.avg_wtd >= 0.25);
        assert_close(c.cwnd, w - (w / BDP) * 0.8 * 4096.0);
        // Increases were never gated: an unmarked ACK still grows the window.
        let w = c.cwnd;
        c.on_ack(&ack(103 * US, 20 * US, false));
        assert!(c.cwnd > w);
    }

    //= smartt-reps §3.3, Fig. 6; spec §2.9; type=test
    #[test]
    fn quick_adapt_sets_window_to_scaled_delivered_bytes_and_ignores_older_feedback() {
        let mut c = smartt(no_wtd());
        // 15 ACKs of 4096 B, one per µs from 1 µs: the first starts the 15 µs (1 trtt) epoch.
        for t in 1..=15 {
            c.on_ack(&ack(t * US, 12 * US - t * NS, false));
        }
        // A trim of a packet sent at 9 µs requests QuickAdapt (and cuts one MTU at once).
        let w = c.cwnd;
        c.on_nack(&NackEvent { now: 10 * US + 500 * NS, sent_at: 9 * US, ..NACK });
        assert!(c.qa_pending);
        assert_close(c.cwnd, w - MTU);
        // First feedback at the epoch end (16 µs) applies it: 0.8 × 15 × 4096 = 49 152 B.
        // That ACK itself is a marked report on a packet sent at 4 µs: ignored.
        c.on_ack(&ack(16 * US, 12 * US, true));
        let qa_window = 0.8 * 15.0 * 4096.0;
        assert_close(c.cwnd, qa_window);
        assert!(!c.qa_pending);
        // More congestion news about pre-QA packets changes nothing: an MD-case ACK...
        c.on_ack(&ack(17 * US, 13 * US, true));
        assert_close(c.cwnd, qa_window);
        // ...and a trim of a packet sent at 15 µs (no cut, no new request).
        c.on_nack(&NackEvent { now: 17 * US + 500 * NS, sent_at: 15 * US, ..NACK });
        assert_close(c.cwnd, qa_window);
        assert!(!c.qa_pending);
        // Feedback on packets sent after the QA moment counts again: fair decrease...
        let w = c.cwnd;
        c.on_ack(&ack(40 * US, 12 * US, true));
        assert_close(c.cwnd, w - (w / BDP) * 0.8 * 4096.0);
        // ...and a fresh trim cuts and requests QuickAdapt.
        let w = c.cwnd;
        c.on_nack(&NackEvent { now: 41 * US, sent_at: 30 * US, ..NACK });
        assert_close(c.cwnd, w - MTU);
        assert!(c.qa_pending);
    }

    //= spec §2.9 (normalisation, min gap); type=test
    #[test]
    fn quick_adapt_normalises_an_overrun_epoch() {
        let mut c = smartt(no_wtd());
        c.on_ack(&ack(US, 12 * US, false));
        c.on_nack(&NackEvent { now: 2 * US, sent_at: US, ..NACK });
        // Next feedback only at 31 µs: 4096 B over a 30 µs epoch is 2048 B per 15 µs, and the
        // QA window cannot go below one MTU.
        c.on_ack(&ack(31 * US, 12 * US, true));
        assert_close(c.cwnd, MTU);
    }

    //= smartt-reps §3.3 "without trimming"; spec §2.9, §2.11; type=test
    #[test]
    fn timeouts_trigger_quick_adapt_and_double_md_only_in_timeout_mode() {
        let to = TimeoutEvent { now: 50 * US, lost_bytes: Bytes(4096), in_flight: 0, consecutive: 1, latest_sent_at: 10 * US };
        let mut c = smartt(no_wtd());
        c.on_timeout(&to);
        assert!(!c.qa_pending, "trimming mode: a timeout is no QA trigger");

        let mut c = smartt(SmarttParams { qa_on_timeout: true, ..no_wtd() });
        c.on_timeout(&to);
        assert!(c.qa_pending);
        // md = 4: at rtt 20 µs the MD term is min(4096, 5/20 · 4 · 4096) = 4096.
        let w = c.cwnd;
        c.on_ack(&ack(51 * US, 20 * US, true));
        let w1 = w - 4096.0;
        assert_close(c.cwnd, w1 - (w1 / BDP) * 0.8 * 4096.0);
    }

    //= smartt-reps §3.4; spec §2.10; type=test
    #[test]
    fn fast_increase_after_a_clean_window_adds_k_mtu_per_ack() {
        let mut c = smartt(SmarttParams { initial_window_bdp: 0.1, ..SmarttParams::default() });
        let mut clean_bytes = 0.0;
        let mut t = 100 * US;
        let mut triggered = false;
        for _ in 0..200 {
            let w = c.cwnd;
            t += 100 * NS;
            // RTT at base: clean and "near base RTT".
            c.on_ack(&ack(t, 10 * US, false));
            clean_bytes += 4096.0;
            if clean_bytes >= w {
                assert!(c.fast_active);
                assert_close(c.cwnd, w + 2.0 * MTU);
                triggered = true;
                break;
            }
            assert!(!c.fast_active, "FastIncrease before a full window ({clean_bytes} < {w})");
            assert!(c.cwnd - w < 2.0 * MTU);
        }
        assert!(triggered);
        // Stays on while ACKs stay clean...
        let w = c.cwnd;
        c.on_ack(&ack(t + 100 * NS, 10 * US + 400 * NS, false));
        assert_close(c.cwnd, w + 2.0 * MTU);
        // ...and stops at the first ACK beyond base RTT + 5 MTU times (5 × 81.92 ns).
        let w = c.cwnd;
        c.on_ack(&ack(t + 200 * NS, 10 * US + 410 * NS, false));
        assert!(!c.fast_active);
        assert!(c.cwnd > w && c.cwnd - w < 2.0 * MTU);
    }

    //= spec §2.1 (bounds); type=test
    #[test]
    fn window_stays_within_bounds() {
        let mut c = Smartt::new(&SmarttParams::default(), &path());
        assert_eq!(c.window(), Some(625_000), "starts at 1.25 BDP");
        for i in 0..2000 {
            c.on_ack(&ack(100 * US + i * NS, 10 * US, false));
            assert!(c.cwnd <= 625_000.0);
        }
        assert_eq!(c.window(), Some(625_000));
        let mut c = Smartt::new(&no_wtd(), &path());
        for i in 0..2000 {
            c.on_ack(&ack(100 * US + i * NS, 80 * US, true));
            c.on_nack(&NackEvent { now: 100 * US + i * NS, sent_at: Time::ZERO, ..NACK });
            assert!(c.cwnd >= 4096.0);
        }
        assert_eq!(c.window(), Some(4096));
        // Configured bounds: 4 packets .. 0.5 BDP; the initial window is clamped into them.
        let p = SmarttParams { min_window_mtu: 4.0, max_window_bdp: 0.5, initial_window_bdp: 2.0, ..no_wtd() };
        let mut c = Smartt::new(&p, &path());
        assert_eq!(c.window(), Some(250_000));
        for i in 0..2000 {
            c.on_ack(&ack(100 * US + i * NS, 80 * US, true));
        }
        assert_eq!(c.window(), Some(4 * 4096));
    }

    //= smartt-reps §3.1, Fig. 3b; spec §2.6; type=test
    #[test]
    fn react_every_n_acks_applies_n_times_the_update() {
        let mut c = smartt(SmarttParams { react_every: 3, ..no_wtd() });
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 20 * US, false));
        c.on_ack(&ack(101 * US, 20 * US, false));
        assert_eq!(c.cwnd, w);
        c.on_ack(&ack(102 * US, 20 * US, false));
        assert_close(c.cwnd, w + 3.0 * (4096.0 / w) * MTU * 0.25 * GAMMA);
    }

    //= spec §2.14.6; type=test
    #[test]
    fn ecn_only_ablation_ignores_rtt() {
        let mut c = smartt(SmarttParams { signals: Signals::EcnOnly, ..SmarttParams::default() });
        let w = c.cwnd;
        // Marked at a low RTT: half an MTU off (no WTD in the ablation).
        c.on_ack(&ack(100 * US, 11 * US, true));
        assert_close(c.cwnd, w - MTU / 2.0);
        // Unmarked at a huge RTT: still the additive increase MTU·size/cwnd.
        let w = c.cwnd;
        c.on_ack(&ack(101 * US, 80 * US, false));
        assert_close(c.cwnd, w + MTU * 4096.0 / w);
        // A trim is a half-MTU cut, no QuickAdapt.
        let w = c.cwnd;
        c.on_nack(&NACK);
        assert_close(c.cwnd, w - MTU / 2.0);
        assert!(!c.qa_pending);
    }

    //= spec §2.14.6; type=test
    #[test]
    fn rtt_only_ablation_ignores_ecn() {
        let mut c = smartt(SmarttParams { signals: Signals::RttOnly, ..SmarttParams::default() });
        let w = c.cwnd;
        // Marked but below target: increase as if unmarked.
        c.on_ack(&ack(100 * US, 11 * US, true));
        assert_close(c.cwnd, w + MTU * 4096.0 / w);
        // Unmarked at 16 µs: (16−15)/16 · md 2 · 4096 = 512 off.
        let w = c.cwnd;
        c.on_ack(&ack(101 * US, 16 * US, false));
        assert_close(c.cwnd, w - 512.0);
        // Unmarked at 40 µs: 25/40 · 2 · 4096 = 5120, capped at half an MTU.
        let w = c.cwnd;
        c.on_ack(&ack(102 * US, 40 * US, false));
        assert_close(c.cwnd, w - MTU / 2.0);
    }

    #[test]
    fn bad_params_name_their_key() {
        let d = SmarttParams::default;
        let cases: [(&str, SmarttParams); 10] = [
            ("trtt_ratio", SmarttParams { trtt_ratio: 1.0, ..d() }),
            ("fi", SmarttParams { fi: -0.1, ..d() }),
            ("fd", SmarttParams { fd: f64::NAN, ..d() }),
            ("mi", SmarttParams { mi: Some(-2.0), ..d() }),
            ("md", SmarttParams { md: f64::INFINITY, ..d() }),
            ("max_window_bdp", SmarttParams { max_window_bdp: 0.0, ..d() }),
            ("wtd_alpha", SmarttParams { wtd_alpha: 1.5, ..d() }),
            ("wtd_threshold", SmarttParams { wtd_threshold: -0.5, ..d() }),
            ("qa_scaling", SmarttParams { qa_scaling: 0.0, ..d() }),
            ("react_every", SmarttParams { react_every: 0, ..d() }),
        ];
        for (field, p) in cases {
            match p.validate() {
                Err(Error::Invalid { key, .. }) => assert_eq!(key, format!("transport.cc.{field}")),
                other => panic!("{field}: expected Error::Invalid, got {other:?}"),
            }
        }
        assert!(SmarttParams::default().validate().is_ok());
    }

    //= uec-spec §9 (htsim_eqds's SMaRTT); type=test
    #[test]
    fn absolute_window_and_target_delay_replace_the_bdp_and_ratio_forms() {
        // path(): base RTT 10 µs, BDP 500 000 B. 64 packets of 4150 B = 265 600 B on any path.
        let p = SmarttParams { max_window_bytes: Some(265_600), initial_window_bytes: Some(265_600), target_qdelay_us: Some(7.0), ..SmarttParams::default() };
        let c = Smartt::new(&p, &path());
        assert_eq!(c.window(), Some(265_600));
        assert_eq!(c.max_window, 265_600.0);
        // Target RTT = 10 µs + 7 µs, not 1.5 × 10 µs.
        assert_eq!(c.target_rtt, 17 * US);
        // An initial window above the cap is clamped to it.
        let c = Smartt::new(&SmarttParams { initial_window_bytes: Some(1 << 30), ..p }, &path());
        assert_eq!(c.window(), Some(265_600));
        for (field, p) in [("max_window_bytes", SmarttParams { max_window_bytes: Some(0), ..p }), ("target_qdelay_us", SmarttParams { target_qdelay_us: Some(-1.0), ..p })] {
            assert!(matches!(p.validate(), Err(Error::Invalid { key, .. }) if key == format!("transport.cc.{field}")), "{field}");
        }
    }

    //= uec-spec §7; type=test
    #[test]
    fn htsim_preset_fills_unset_keys_and_explicit_keys_win() {
        let cfg: super::super::CcConfig = toml::from_str("name = \"smartt\"\npreset = \"htsim\"\nfd = 0.5").unwrap();
        let super::super::CcConfig::Smartt(p) = cfg else { panic!() };
        assert_eq!(p.preset, Some(SmarttPreset::Htsim));
        assert_eq!((p.fi, p.mi, p.md, p.fd), (0.15, Some(1.0), 1.0, 0.5));
        assert!(!p.scale_gains && p.md_cap_includes_fd);
        assert_eq!((p.wtd_threshold, p.qa_scaling, p.initial_window_bdp, p.max_window_bdp, p.trtt_ratio), (0.3, 1.0, 1.0, 1.0, 1.51));
        // Unscaled gains: a clean ACK below target adds mi·(trtt−rtt)/rtt·size/cwnd·mtu + fi·size/cwnd·mtu, no γ.
        let mut c = Smartt::new(&SmarttParams { initial_window_bdp: 0.5, wtd: false, ..p }, &path());
        let w = c.cwnd;
        c.on_ack(&ack(100 * US, 12 * US, false));
        let inc_mi = ((15.1 - 12.0) / 12.0 * (4096.0 / w) * MTU * 1.0).min(4096.0);
        let w1 = w + inc_mi;
        assert_close(c.cwnd, w1 + (4096.0 / w1) * MTU * 0.15);
        // The paper's values stay the default, and a bad preset is named.
        let cfg: super::super::CcConfig = toml::from_str("name = \"smartt\"").unwrap();
        let super::super::CcConfig::Smartt(d) = cfg else { panic!() };
        assert!(d.preset.is_none() && d.scale_gains && d.fi == 0.25);
        let err = toml::from_str::<super::super::CcConfig>("name = \"smartt\"\npreset = \"ns3\"").unwrap_err();
        assert!(err.to_string().contains("preset"), "{err}");
    }

    #[test]
    fn scenario_table_selects_smartt_and_rejects_unknown_keys() {
        let cfg: super::super::CcConfig = toml::from_str("name = \"smartt\"\nqa_scaling = 0.9\nsignals = \"ecn_only\"").unwrap();
        match cfg {
            super::super::CcConfig::Smartt(p) => {
                assert_eq!(p.qa_scaling, 0.9);
                assert_eq!(p.signals, Signals::EcnOnly);
            }
            other => panic!("{other:?}"),
        }
        let err = toml::from_str::<super::super::CcConfig>("name = \"smartt\"\nq_scaling = 0.9").unwrap_err();
        assert!(err.to_string().contains("q_scaling"), "{err}");
    }
}
