//! `bbr`: BBR v1, a model-based controller: it estimates the bottleneck bandwidth (windowed
//! maximum of delivery-rate samples) and the round-trip propagation time (windowed minimum RTT),
//! paces at a gain times the bandwidth and caps in-flight bytes at a gain times their product.
//!
//! **Follows:** Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! 2016 / CACM 60(2), 2017 (the model, the two filters, the STARTUP → DRAIN → PROBE_BW state
//! machine and its gains); the state-machine details (full-pipe test, phase-advance conditions,
//! cwnd growth) as in the BBR v1 Internet-Draft (draft-cardwell-iccrg-bbr-congestion-control-00,
//! §4); spec `smartt-reps.md` §2.14.4 (BBR as a SMaRTT-REPS baseline).
//!
//! Model and control, per ACK:
//! - **Delivery rate**: bytes delivered between the ACK state just before the acknowledged packet
//!   left (looked up by its send time, `now − rtt`) and now, over that interval — the draft's
//!   delivery-rate estimate without per-packet state. The controller keeps a fixed ring of
//!   `(time, delivered)` checkpoints taken at ACKs at least base RTT/32 apart (64 of them, two
//!   base RTTs of history); the interval starts at the newest checkpoint not after the send time.
//!   Intervals always begin and end at ACK instants, so a steady ACK stream gives its exact rate.
//! - **BtlBw**: maximum sample over the last `bw_window_rounds` round trips (a ring of one slot
//!   per round). A round ends when an ACK arrives for a packet sent after the round began.
//! - **RTprop**: minimum RTT over `min_rtt_window_us` (a ring of 8 buckets, so the window is the
//!   last 7/8 to 8/8 of it); the path's base RTT until the first sample.
//! - **STARTUP**: pacing and cwnd gain `high_gain` (2/ln 2); the pacing rate never decreases.
//!   Once BtlBw grew by less than `full_bw_growth` (25 %) for `full_bw_rounds` (3) rounds in a
//!   row, the pipe is full: **DRAIN** at pacing gain `drain_gain` (ln 2/2) until in-flight ≤
//!   BtlBw·RTprop, then **PROBE_BW**: cwnd gain `cwnd_gain` (2) and pacing gains cycling
//!   1.25, 0.75, 1 ×6, one phase per RTprop (the 1.25 phase lasts until in-flight reaches
//!   1.25 BDP or a loss, the 0.75 phase ends early once in-flight is down to one BDP).
//! - **Pacing rate** = pacing gain × BtlBw. **cwnd** target = cwnd gain × BtlBw × RTprop, at least
//!   `min_cwnd_pkts` packets; before the pipe is full cwnd grows by the acknowledged bytes
//!   (while below the target or the initial window), afterwards it is min(cwnd + acked, target).
//! - Trims (NACKs) and timeouts: no rate reaction, the sender just retransmits (spec §2.14.4).
//!
//! **Parameters** (`[transport.cc] name = "bbr"`):
//! - `high_gain` = 2/ln 2 ≈ 2.885: STARTUP pacing and cwnd gain (Cardwell 2016; spec §2.14.4).
//! - `drain_gain` = ln 2/2 ≈ 0.347: DRAIN pacing gain, 1/high_gain (same sources).
//! - `cwnd_gain` = 2: PROBE_BW cwnd gain (same sources).
//! - `bw_window_rounds` = 10: BtlBw filter window in round trips, at most 16 (same sources).
//! - `min_rtt_window_us` = 10 000 000 (10 s): RTprop filter window (Cardwell 2016; the spec
//!   notes it is effectively the base RTT in short simulations).
//! - `full_bw_growth` = 1.25 and `full_bw_rounds` = 3: the full-pipe test (same sources).
//! - `init_cwnd_bdp` = 1: initial window in path BDPs; the initial pacing rate is this window per
//!   base RTT, i.e. line rate by default (spec §2.14.4 ASSUMPTION: a datacenter BBR should not be
//!   penalised by a slow start). Linux starts at 10 packets and 2.885 × 10 packets per RTT.
//! - `min_cwnd_pkts` = 4: smallest window (the draft's BBRMinPipeCwnd, 4 packets).
//!
//! The PROBE_BW gain cycle (1.25, 0.75, 1, 1, 1, 1, 1, 1) is BBR's definition, not a parameter.
//!
//! **Differences:**
//! - No PROBE_RTT: the spec (§2.14.4) deems it irrelevant at simulated time scales (it would
//!   first run after 10 s); the RTprop filter simply forgets samples older than its window.
//! - No app-limited marking of samples and no send-rate (`send_elapsed`) guard against ACK
//!   compression: flows are bulk, and fabricsim returns ACKs at high priority.
//! - No quanta added to the cwnd target (the draft adds 3 send quanta for TSO batching;
//!   fabricsim sends and paces single packets). No packet-conservation or recovery cwnd on loss
//!   (spec §2.14.4: losses only trigger retransmission).
//! - The draft enters PROBE_BW at a random phase other than 0.75 to desynchronise flows; the
//!   controller has no random stream of its own, so the phase is taken from the path entropy of
//!   the ACK that ends DRAIN (random per packet under spraying, per connection under ECMP):
//!   one of {1.25, 1, 1, 1, 1, 1, 1} (indices 0, 2..7).
//! - The spec writes `cwnd = cwnd_gain·BtlBw·RTprop`; that is the target the window converges to
//!   here, as in the draft (it jumps down to it at once and grows up to it by acknowledged bytes).

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes, SEC, Time, US};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "bbr";
/// Registry summary.
pub const SUMMARY: &str = "BBR v1: paced at gain x max delivery rate, cwnd 2 x BDP estimate (STARTUP, DRAIN, PROBE_BW)";

//= Cardwell et al. 2016 (PROBE_BW); spec smartt-reps.md §2.14.4
//# Probe with 1.25 for one RTprop, drain the probe's queue with 0.75, then cruise for six.
const PROBE_BW_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Index of the 0.75 phase, never the first one after DRAIN.
const PROBE_DOWN_PHASE: usize = 1;
/// Slots of the bandwidth filter: the largest allowed `bw_window_rounds`.
const BW_SLOTS: usize = 16;
/// Buckets of the min-RTT filter.
const RTT_BUCKETS: usize = 8;
/// Delivery checkpoints kept; with a spacing of base RTT / 32 they reach two base RTTs back.
const CHECKPOINTS: usize = 64;
/// Checkpoints per base RTT.
const CHECKPOINTS_PER_RTT: u64 = 32;

/// Parameters of `bbr`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrParams {
    /// STARTUP pacing and cwnd gain (> 1).
    pub high_gain: f64,
    /// DRAIN pacing gain (in (0, 1)).
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain (≥ 1).
    pub cwnd_gain: f64,
    /// Bandwidth filter window, round trips (1..=16).
    pub bw_window_rounds: u32,
    /// Min-RTT filter window, µs.
    pub min_rtt_window_us: f64,
    /// STARTUP ends once the bandwidth grew by less than this factor...
    pub full_bw_growth: f64,
    /// ...for this many rounds in a row.
    pub full_bw_rounds: u32,
    /// Initial window in path BDPs; the initial pacing rate is this window per base RTT.
    pub init_cwnd_bdp: f64,
    /// Smallest window, full packets.
    pub min_cwnd_pkts: u32,
}

impl Default for BbrParams {
    fn default() -> Self {
        //= Cardwell et al. 2016; spec smartt-reps.md §2.14.4
        //# 2/ln2 doubles the delivery rate each round in STARTUP; its inverse drains the queue.
        let high_gain = 2.0 / std::f64::consts::LN_2;
        BbrParams {
            high_gain,
            drain_gain: 1.0 / high_gain,
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window_us: 10e6,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            //= spec smartt-reps.md §2.14.4 ASSUMPTION
            //# Start at one BDP and line rate: no slow start inside a datacenter.
            init_cwnd_bdp: 1.0,
            min_cwnd_pkts: 4,
        }
    }
}

impl BbrParams {
    pub(super) fn validate(&self) -> Result<()> {
        let bad = |key: &str, msg: String| Err(Error::invalid(format!("transport.cc.{key}"), msg));
        if !(self.high_gain.is_finite() && self.high_gain > 1.0) {
            return bad("high_gain", format!("{}: must be a number above 1", self.high_gain));
        }
        if !(self.drain_gain > 0.0 && self.drain_gain < 1.0) {
            return bad("drain_gain", format!("{}: must be in (0, 1)", self.drain_gain));
        }
        if !(self.cwnd_gain.is_finite() && self.cwnd_gain >= 1.0) {
            return bad("cwnd_gain", format!("{}: must be a number ≥ 1", self.cwnd_gain));
        }
        if !(1..=BW_SLOTS as u32).contains(&self.bw_window_rounds) {
            return bad("bw_window_rounds", format!("{}: must be in 1..={BW_SLOTS} round trips", self.bw_window_rounds));
        }
        if !(self.min_rtt_window_us.is_finite() && self.min_rtt_window_us > 0.0) {
            return bad("min_rtt_window_us", format!("{}: must be a positive time in µs", self.min_rtt_window_us));
        }
        if !(self.full_bw_growth.is_finite() && self.full_bw_growth > 1.0) {
            return bad("full_bw_growth", format!("{}: must be a growth factor above 1", self.full_bw_growth));
        }
        if self.full_bw_rounds == 0 {
            return bad("full_bw_rounds", "0: must be at least 1 round".into());
        }
        if !(self.init_cwnd_bdp.is_finite() && self.init_cwnd_bdp > 0.0) {
            return bad("init_cwnd_bdp", format!("{}: must be a positive multiple of the BDP", self.init_cwnd_bdp));
        }
        if self.min_cwnd_pkts == 0 {
            return bad("min_cwnd_pkts", "0: the window must hold at least one packet".into());
        }
        Ok(())
    }
}

/// BBR's operating state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Pacing at `high_gain` × BtlBw to find the bottleneck rate.
    Startup,
    /// Pacing below BtlBw to empty the queue STARTUP built.
    Drain,
    /// Cycling the pacing gain around 1 to probe for more bandwidth and drain again.
    ProbeBw,
}

/// A windowed maximum or minimum over integer epochs (round trips, or time buckets): one slot
/// per epoch in a fixed ring, so an update costs O(1) and a query O(N), with no allocation.
#[derive(Clone, Copy, Debug)]
struct WindowedFilter<const N: usize> {
    /// `(epoch, best value seen in that epoch)`; `epoch == u64::MAX` marks an unused slot.
    slots: [(u64, u64); N],
    keep_max: bool,
}

impl<const N: usize> WindowedFilter<N> {
    fn new(keep_max: bool) -> Self {
        WindowedFilter { slots: [(u64::MAX, 0); N], keep_max }
    }

    fn better(&self, a: u64, b: u64) -> bool {
        if self.keep_max {
            a > b
        } else {
            a < b
        }
    }

    fn update(&mut self, epoch: u64, value: u64) {
        let i = (epoch % N as u64) as usize;
        let (slot_epoch, slot_value) = self.slots[i];
        if slot_epoch != epoch {
            self.slots[i] = (epoch, value);
        } else if self.better(value, slot_value) {
            self.slots[i].1 = value;
        }
    }

    /// Best value over epochs `now − window + 1 ..= now` (`window ≤ N`).
    fn best(&self, now: u64, window: u64) -> Option<u64> {
        let mut best: Option<u64> = None;
        for &(epoch, value) in &self.slots {
            if epoch != u64::MAX && epoch <= now && epoch + window > now && best.is_none_or(|b| self.better(value, b)) {
                best = Some(value);
            }
        }
        best
    }
}

/// `(time, delivered bytes)` at ACK instants, oldest first, in a fixed ring.
#[derive(Clone, Copy, Debug)]
struct Checkpoints {
    entries: [(Time, u64); CHECKPOINTS],
    /// Ring index of the oldest entry.
    head: usize,
    len: usize,
}

impl Checkpoints {
    fn get(&self, i: usize) -> (Time, u64) {
        self.entries[(self.head + i) % CHECKPOINTS]
    }

    fn last(&self) -> Option<(Time, u64)> {
        (self.len > 0).then(|| self.get(self.len - 1))
    }

    fn push(&mut self, t: Time, delivered: u64) {
        if self.len == CHECKPOINTS {
            self.entries[self.head] = (t, delivered);
            self.head = (self.head + 1) % CHECKPOINTS;
        } else {
            self.entries[(self.head + self.len) % CHECKPOINTS] = (t, delivered);
            self.len += 1;
        }
    }

    /// The newest checkpoint at or before `t`, or the oldest one if all are later.
    fn at_or_before(&self, t: Time) -> Option<(Time, u64)> {
        if self.len == 0 {
            return None;
        }
        // Binary search for the number of entries with time ≤ t (times are non-decreasing).
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(mid).0 <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Some(self.get(lo.saturating_sub(1)))
    }
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    init_cwnd: u64,
    min_cwnd: u64,
    /// Prior for RTprop until the first RTT sample.
    base_rtt: Time,
    rtt_bucket: Time,
    checkpoint_spacing: Time,

    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Wire bytes acknowledged so far.
    delivered: u64,
    /// Wire bytes in flight, as of the last event plus later sends.
    in_flight: u64,
    /// A NACK or timeout since the last ACK (ends a 1.25 probe phase).
    lost_since_ack: bool,
    checkpoints: Checkpoints,
    /// Round trips counted so far.
    round: u64,
    /// When the current round began (an ACK for a packet sent at or after it ends the round).
    round_start: Time,
    bw: WindowedFilter<BW_SLOTS>,
    min_rtt: WindowedFilter<RTT_BUCKETS>,
    /// Bucket of the latest RTT sample (the min-RTT filter's "now").
    rtt_epoch: u64,
    /// BtlBw at the last round in which it grew by `full_bw_growth`.
    full_bw: u64,
    /// Rounds since then.
    full_bw_count: u32,
    filled_pipe: bool,
    cycle_index: usize,
    cycle_stamp: Time,

    pacing: BitsPerSec,
    cwnd: u64,
}

impl Bbr {
    /// A controller for a connection on `path`.
    pub fn new(p: &BbrParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.max(Bytes(1));
        let min_cwnd = p.min_cwnd_pkts.max(1) as u64 * mtu;
        let init_cwnd = ((p.init_cwnd_bdp * path.bdp_bytes.0 as f64).ceil() as u64).max(min_cwnd.0);
        let base_rtt = path.base_rtt.max(Time(1));
        // The initial window spread over one base RTT: line rate for a 1-BDP window.
        let init_rate = (init_cwnd as u128 * 8 * SEC.0 as u128 / base_rtt.0 as u128) as u64;
        let rtt_window = Time((p.min_rtt_window_us * US.0 as f64).round().max(1.0) as u64);
        Bbr {
            p: *p,
            init_cwnd,
            min_cwnd: min_cwnd.0,
            base_rtt,
            rtt_bucket: Time(rtt_window.div_ceil(Time(RTT_BUCKETS as u64)).max(1)),
            checkpoint_spacing: (base_rtt / CHECKPOINTS_PER_RTT).max(Time(1)),
            mode: Mode::Startup,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            delivered: 0,
            in_flight: 0,
            lost_since_ack: false,
            checkpoints: Checkpoints { entries: [(Time::ZERO, 0); CHECKPOINTS], head: 0, len: 0 },
            round: 0,
            round_start: Time::ZERO,
            bw: WindowedFilter::new(true),
            min_rtt: WindowedFilter::new(false),
            rtt_epoch: 0,
            full_bw: 0,
            full_bw_count: 0,
            filled_pipe: false,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            pacing: BitsPerSec(init_rate.max(1)),
            cwnd: init_cwnd,
        }
    }

    /// Current state.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// BtlBw, the windowed maximum delivery rate (0 before the first sample).
    pub fn bandwidth_estimate(&self) -> BitsPerSec {
        BitsPerSec(self.bw.best(self.round, self.p.bw_window_rounds as u64).unwrap_or(0))
    }

    /// RTprop, the windowed minimum RTT (the path's base RTT before the first sample).
    pub fn min_rtt_estimate(&self) -> Time {
        Time(self.min_rtt.best(self.rtt_epoch, RTT_BUCKETS as u64).unwrap_or(self.base_rtt.0))
    }

    /// In-flight bytes that `gain` × the estimated BDP allows (the initial window before the
    /// first bandwidth sample).
    fn inflight_for(&self, gain: f64) -> u64 {
        let bw = self.bandwidth_estimate();
        if bw.0 == 0 {
            return self.init_cwnd;
        }
        (gain * bw.bytes_in(self.min_rtt_estimate()).0 as f64).ceil() as u64
    }

    /// One delivery-rate sample for an ACK at `now` of a packet sent at `sent_at`.
    fn sample_delivery_rate(&mut self, now: Time, sent_at: Time) {
        if let Some((t0, d0)) = self.checkpoints.at_or_before(sent_at) {
            let interval = now.saturating_sub(t0);
            if interval > Time::ZERO && self.delivered > d0 {
                let bps = (self.delivered - d0) as u128 * 8 * SEC.0 as u128 / interval.0 as u128;
                self.bw.update(self.round, bps.min(u64::MAX as u128) as u64);
            }
        }
        if self.checkpoints.last().is_none_or(|(t, _)| now - t >= self.checkpoint_spacing) {
            self.checkpoints.push(now, self.delivered);
        }
    }

    //= Cardwell et al. 2016 (STARTUP); draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.2.2
    //# The pipe is full once three rounds in a row failed to raise BtlBw by 25 %.
    fn check_full_pipe(&mut self) {
        if self.filled_pipe {
            return;
        }
        let bw = self.bandwidth_estimate().0;
        if bw as f64 >= self.full_bw as f64 * self.p.full_bw_growth {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.filled_pipe = self.full_bw_count >= self.p.full_bw_rounds;
    }

    fn enter_probe_bw(&mut self, now: Time, entropy: u16) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = self.p.cwnd_gain;
        //= draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.4.4; type=deviation
        //= reason=no random stream in the controller: the ACK's path entropy picks the phase
        //# Start anywhere but the 0.75 phase, so that flows do not probe in lockstep.
        let r = entropy as usize % (PROBE_BW_GAINS.len() - 1);
        self.cycle_index = if r < PROBE_DOWN_PHASE { r } else { r + 1 };
        self.cycle_stamp = now;
        self.pacing_gain = PROBE_BW_GAINS[self.cycle_index];
    }

    //= draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.4.3 (BBRIsNextCyclePhase)
    //# Each phase lasts one RTprop; the probe also needs its extra in-flight (or a loss), and the
    //# drain phase may end as soon as in-flight is back to one BDP.
    fn phase_done(&self, now: Time, prior_in_flight: u64, lost: bool) -> bool {
        let full_length = now.saturating_sub(self.cycle_stamp) > self.min_rtt_estimate();
        let gain = self.pacing_gain;
        if gain > 1.0 {
            full_length && (lost || prior_in_flight >= self.inflight_for(gain))
        } else if gain < 1.0 {
            full_length || prior_in_flight <= self.inflight_for(1.0)
        } else {
            full_length
        }
    }

    fn set_pacing_rate(&mut self) {
        let bw = self.bandwidth_estimate().0;
        if bw == 0 {
            return;
        }
        let rate = (self.pacing_gain * bw as f64).round() as u64;
        //= draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.1
        //# Until the pipe is known to be full, never pace slower than before (early samples
        //# are low only because the flow has just started).
        if self.filled_pipe || rate > self.pacing.0 {
            self.pacing = BitsPerSec(rate.max(1));
        }
    }

    fn set_cwnd(&mut self, acked: u64) {
        //= Cardwell et al. 2016; spec smartt-reps.md §2.14.4; draft §4.2.3.6
        //# cwnd target = cwnd_gain × BtlBw × RTprop; grow towards it by the bytes just delivered.
        let target = self.inflight_for(self.cwnd_gain).max(self.min_cwnd);
        if self.filled_pipe {
            self.cwnd = (self.cwnd + acked).min(target);
        } else if self.cwnd < target || self.delivered < self.init_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(self.min_cwnd);
    }
}

impl CongestionControl for Bbr {
    fn on_send(&mut self, now: Time, bytes: u64) {
        // Leaving idle: a delivery interval must not span the idle time, so start one here.
        if self.in_flight == 0 && self.checkpoints.last().is_none_or(|(t, _)| t < now) {
            self.checkpoints.push(now, self.delivered);
        }
        self.in_flight += bytes;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        let now = ev.now;
        self.in_flight = ev.in_flight;
        let prior_in_flight = ev.in_flight + ev.acked_bytes.0;
        let lost = std::mem::take(&mut self.lost_since_ack);
        let sent_at = now.saturating_sub(ev.rtt);

        let round_start = sent_at >= self.round_start;
        if round_start {
            self.round += 1;
            self.round_start = now;
        }
        if ev.acked_bytes > Bytes::ZERO {
            self.delivered += ev.acked_bytes.0;
            self.sample_delivery_rate(now, sent_at);
        }
        self.rtt_epoch = now / self.rtt_bucket;
        self.min_rtt.update(self.rtt_epoch, ev.rtt.0);

        if self.mode == Mode::ProbeBw && self.phase_done(now, prior_in_flight, lost) {
            self.cycle_index = (self.cycle_index + 1) % PROBE_BW_GAINS.len();
            self.cycle_stamp = now;
            self.pacing_gain = PROBE_BW_GAINS[self.cycle_index];
        }
        if round_start {
            self.check_full_pipe();
        }
        if self.mode == Mode::Startup && self.filled_pipe {
            //= Cardwell et al. 2016 (DRAIN); spec smartt-reps.md §2.14.4
            //# Pace at the inverse of the STARTUP gain to empty the queue it built.
            self.mode = Mode::Drain;
            self.pacing_gain = self.p.drain_gain;
            self.cwnd_gain = self.p.high_gain;
        }
        if self.mode == Mode::Drain && self.in_flight <= self.inflight_for(1.0) {
            self.enter_probe_bw(now, ev.entropy);
        }
        self.set_pacing_rate();
        self.set_cwnd(ev.acked_bytes.0);
    }

    fn on_nack(&mut self, ev: &NackEvent) {
        //= spec smartt-reps.md §2.14.4
        //# A trimmed packet is retransmitted; BBR's model is not changed by it.
        self.in_flight = ev.in_flight;
        self.lost_since_ack = true;
    }

    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.in_flight = ev.in_flight;
        self.lost_since_ack = true;
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(self.pacing)
    }
}

impl crate::scheme::Scheme<PathInfo> for Bbr {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("high_gain", 1.001, 100.0), crate::scheme::Limit::new("drain_gain", 0.001, 0.999), crate::scheme::Limit::new("cwnd_gain", 1.0, 100.0), crate::scheme::Limit::new("bw_window_rounds", 1.0, 16.0), crate::scheme::Limit::new("min_rtt_window_us", 0.001, 1e9), crate::scheme::Limit::new("full_bw_growth", 1.001, 100.0), crate::scheme::Limit::new("full_bw_rounds", 1.0, 1000000.0), crate::scheme::Limit::new("init_cwnd_bdp", 0.001, 1000.0), crate::scheme::Limit::new("min_cwnd_pkts", 1.0, 1000000.0)];
    type Params = BbrParams;
    fn check(p: &BbrParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &BbrParams, path: &mut PathInfo) -> Self {
        Bbr::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transport::cc::testing::{self, MTU};
    /// 400 Gb/s host, 10 µs base RTT: BDP 500,000 B.
    const PATH: PathInfo = testing::path(400_000_000_000, 500_000);
    use crate::transport::cc::testing::ACK;
    const GBPS: u64 = 1_000_000_000;

    /// A connection driven by a synthetic ACK stream.
    struct Driver {
        cc: Bbr,
        now: Time,
        in_flight: u64,
    }

    impl Driver {
        fn new(p: BbrParams) -> Self {
            let mut cc = Bbr::new(&p, &PATH);
            cc.on_send(Time::ZERO, MTU);
            Driver { cc, now: Time::ZERO, in_flight: (4 * PATH.bdp_bytes).0 }
        }

        /// Full-packet ACKs for `dur` ps, spaced to deliver `rate` (the last one at exactly
        /// `now + dur`), each with RTT sample `rtt`.
        fn feed(&mut self, rate: u64, rtt: Time, dur: Time) {
            let n = (rate as u128 * dur.0 as u128 / (8 * MTU as u128 * SEC.0 as u128)).max(1) as u64;
            let start = self.now;
            for k in 1..=n {
                self.now = start + dur * k / n;
                self.cc.on_ack(&AckEvent { now: self.now, rtt, in_flight: self.in_flight, ..ACK });
            }
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a / b - 1.0).abs() <= tol
    }

    #[test]
    fn starts_at_one_bdp_and_line_rate() {
        let c = Bbr::new(&BbrParams::default(), &PATH);
        assert_eq!(c.window(), Some(500_000));
        assert_eq!(c.pacing_rate(), Some(BitsPerSec(400 * GBPS)));
        assert_eq!(c.mode(), Mode::Startup);
    }

    //= type=test
    //# A steady ACK stream at a known rate gives that bandwidth estimate; the max filter forgets
    //# it after bw_window_rounds round trips; the min-RTT filter keeps the minimum over its window.
    #[test]
    fn bandwidth_and_min_rtt_filters() {
        let mut d = Driver::new(BbrParams::default());
        d.feed(100 * GBPS, 10 * US, 200 * US);
        let bw = d.cc.bandwidth_estimate().0 as f64;
        assert!(close(bw, 100e9, 0.02), "estimate {bw} vs 100 Gb/s");
        // A queue-inflated 14 µs RTT does not raise RTprop.
        d.feed(100 * GBPS, 14 * US, 50 * US);
        assert_eq!(d.cc.min_rtt_estimate(), 10 * US);
        // Half the rate (with 14 µs RTTs, so a round lasts 14 µs): the old maximum holds for
        // at most 10 rounds, then the estimate falls to the new rate.
        d.feed(50 * GBPS, 14 * US, 5 * 14 * US);
        assert!(close(d.cc.bandwidth_estimate().0 as f64, 100e9, 0.02), "forgot the maximum too early");
        d.feed(50 * GBPS, 14 * US, 12 * 14 * US);
        let bw = d.cc.bandwidth_estimate().0 as f64;
        assert!(close(bw, 50e9, 0.02), "estimate {bw} vs 50 Gb/s");
        // A shorter window (3 rounds) forgets sooner.
        let mut d = Driver::new(BbrParams { bw_window_rounds: 3, ..BbrParams::default() });
        d.feed(100 * GBPS, 10 * US, 100 * US);
        d.feed(50 * GBPS, 10 * US, 5 * 10 * US);
        assert!(close(d.cc.bandwidth_estimate().0 as f64, 50e9, 0.02));

        // Min-RTT window of 80 µs (10 µs buckets): 10 µs samples are forgotten 70–80 µs after
        // the last one; the default 10 s window keeps them.
        let mut d = Driver::new(BbrParams { min_rtt_window_us: 80.0, ..BbrParams::default() });
        d.feed(100 * GBPS, 10 * US, 30 * US);
        d.feed(100 * GBPS, 20 * US, 60 * US);
        assert_eq!(d.cc.min_rtt_estimate(), 10 * US);
        d.feed(100 * GBPS, 20 * US, 30 * US);
        assert_eq!(d.cc.min_rtt_estimate(), 20 * US);
        // Without samples in between, an old bucket still in the ring is out of the window too:
        // 10 µs samples, 200 µs of silence, then one 20 µs sample.
        let mut d = Driver::new(BbrParams { min_rtt_window_us: 80.0, ..BbrParams::default() });
        d.feed(100 * GBPS, 10 * US, 30 * US);
        d.now += 200 * US;
        d.feed(100 * GBPS, 20 * US, US);
        assert_eq!(d.cc.min_rtt_estimate(), 20 * US);
        let mut d = Driver::new(BbrParams::default());
        d.feed(100 * GBPS, 10 * US, 30 * US);
        d.feed(100 * GBPS, 20 * US, 1000 * US);
        assert_eq!(d.cc.min_rtt_estimate(), 10 * US);
    }

    //= type=test
    //# STARTUP multiplies the pacing rate by 2/ln2 per round until the bandwidth stops growing,
    //# then DRAIN paces at ln2/2 of it until in-flight is down to one BDP.
    #[test]
    fn startup_grows_by_high_gain_until_the_bandwidth_plateaus_then_drains() {
        // Start slow (a 4-packet window per 10 µs: 13.1 Gb/s) behind a 100 Gb/s bottleneck;
        // each round the network delivers what the sender paced, capped at the bottleneck.
        let p = BbrParams { init_cwnd_bdp: 0.01, ..BbrParams::default() };
        let mut d = Driver::new(p);
        let high_gain = p.high_gain;
        let bottleneck = 100 * GBPS;
        let mut rates = vec![d.cc.pacing_rate().unwrap().0];
        let mut rounds = 0;
        while d.cc.mode() == Mode::Startup {
            let rate = (*rates.last().unwrap()).min(bottleneck);
            d.feed(rate, 10 * US, 10 * US);
            rates.push(d.cc.pacing_rate().unwrap().0);
            rounds += 1;
            assert!(rounds < 20, "STARTUP never ended: {rates:?}");
        }
        // 13.1 → 37.8 → 104 Gb/s: while the sender's rate is below the bottleneck, each round
        // multiplies it by about high_gain (a little less: a round's samples begin with a few
        // ACKs of the slower previous round).
        assert!(close(rates[1] as f64 / rates[0] as f64, high_gain, 0.02), "{rates:?}");
        assert!(close(rates[2] as f64 / rates[1] as f64, high_gain, 0.06), "{rates:?}");
        // Then the delivery rate is capped at 100 Gb/s; three rounds without 25 % growth later
        // (plus one for the partly-capped round) the pipe is full.
        assert!((5..=7).contains(&rounds), "STARTUP lasted {rounds} rounds: {rates:?}");
        assert_eq!(d.cc.mode(), Mode::Drain);
        let bw = d.cc.bandwidth_estimate().0 as f64;
        assert!(close(bw, 100e9, 0.02), "BtlBw {bw}");
        assert!(close(d.cc.pacing_rate().unwrap().0 as f64, bw / high_gain, 1e-6));
        // DRAIN holds while in-flight exceeds the BDP estimate (100 Gb/s × 10 µs = 125,000 B)...
        d.feed(100 * GBPS, 10 * US, 10 * US);
        assert_eq!(d.cc.mode(), Mode::Drain);
        // ...and ends on the first ACK that finds it at or below.
        d.in_flight = 120_000;
        d.feed(100 * GBPS, 10 * US, US);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
    }

    fn probe_bw(entropy: u16) -> Driver {
        let mut d = Driver::new(BbrParams::default());
        d.feed(100 * GBPS, 10 * US, 100 * US);
        assert_eq!(d.cc.mode(), Mode::Drain, "400 Gb/s start against 100 Gb/s delivery plateaus at once");
        // One more ACK in the same stream (one packet time at 100 Gb/s later) finds in-flight
        // below the BDP estimate.
        d.now += BitsPerSec(100 * GBPS).tx_time(Bytes(MTU));
        d.cc.on_ack(&AckEvent { now: d.now, in_flight: 100_000, entropy, ..ACK });
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        d
    }

    //= type=test
    //# PROBE_BW cycles 1.25, 0.75, 1 ×6, one phase per RTprop.
    #[test]
    fn probe_bw_cycles_its_pacing_gains_in_order() {
        let mut d = probe_bw(0);
        // In-flight above 1.25 BDP, so the probe phase may end and the drain phase lasts a full RTprop.
        d.in_flight = 200_000;
        let mut gains = vec![d.cc.pacing_gain()];
        let mut phase = d.cc.cycle_index;
        let mut started_at = vec![d.cc.cycle_stamp];
        while gains.len() < 11 {
            // One ACK per packet time at 100 Gb/s.
            d.feed(100 * GBPS, 10 * US, BitsPerSec(100 * GBPS).tx_time(Bytes(MTU)));
            if d.cc.cycle_index != phase {
                phase = d.cc.cycle_index;
                gains.push(d.cc.pacing_gain());
                started_at.push(d.cc.cycle_stamp);
            }
            let bw = d.cc.bandwidth_estimate().0 as f64;
            assert!(close(d.cc.pacing_rate().unwrap().0 as f64, d.cc.pacing_gain() * bw, 1e-6));
        }
        assert_eq!(gains, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25, 0.75, 1.0]);
        // Each phase lasts one RTprop (10 µs): it ends on the first ACK after that.
        for w in started_at.windows(2) {
            let len = w[1] - w[0];
            assert!((10 * US..10 * US + 400 * crate::units::NS).contains(&len), "phase lasted {len} ps");
        }
        // The 0.75 phase ends early once in-flight is down to one BDP.
        let mut d = probe_bw(0);
        d.in_flight = 200_000;
        d.feed(100 * GBPS, 10 * US, 11 * US);
        assert_eq!(d.cc.pacing_gain(), 0.75);
        d.in_flight = 120_000;
        d.feed(100 * GBPS, 10 * US, US);
        assert_eq!(d.cc.pacing_gain(), 1.0);
        // The first phase is never the 0.75 one.
        for e in 0..64 {
            assert_ne!(probe_bw(e).cc.pacing_gain(), 0.75, "entropy {e}");
        }
    }

    //= type=test
    //# cwnd = cwnd_gain (2) × BtlBw × RTprop in PROBE_BW.
    #[test]
    fn cwnd_is_twice_the_bdp_estimate() {
        let mut d = probe_bw(3);
        d.feed(100 * GBPS, 10 * US, 30 * US);
        let bdp = d.cc.bandwidth_estimate().bytes_in(d.cc.min_rtt_estimate());
        assert!(close(bdp.0 as f64, 125_000.0, 0.02), "BDP estimate {bdp}");
        assert_eq!(d.cc.window(), Some((2 * bdp).0));
        // cwnd_gain 3: three BDPs.
        let mut d = Driver::new(BbrParams { cwnd_gain: 3.0, ..BbrParams::default() });
        d.feed(100 * GBPS, 10 * US, 100 * US);
        d.in_flight = 100_000;
        d.feed(100 * GBPS, 10 * US, 30 * US);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        let bdp = d.cc.bandwidth_estimate().bytes_in(d.cc.min_rtt_estimate());
        assert_eq!(d.cc.window(), Some((3 * bdp).0));
        // Never below 4 packets.
        let mut d = Driver::new(BbrParams::default());
        d.feed(GBPS, 10 * US, 500 * US);
        d.in_flight = 0;
        d.feed(GBPS, 10 * US, 50 * US);
        assert_eq!(d.cc.window(), Some(4 * MTU));
    }

    #[test]
    fn losses_do_not_change_rate_or_window() {
        let mut d = probe_bw(2);
        d.feed(100 * GBPS, 10 * US, 30 * US);
        let (w, r) = (d.cc.window(), d.cc.pacing_rate());
        d.cc.on_nack(&NackEvent {
            now: d.now,
            bytes: Bytes(MTU),
            cause: super::super::LossCause::Trimmed,
            entropy: 0,
            in_flight: 0,
            sent_at: Time::ZERO,
            last_hop_paced: false,
        });
        d.cc.on_timeout(&TimeoutEvent { now: d.now, lost_bytes: Bytes(MTU), in_flight: 0, consecutive: 1, latest_sent_at: Time::ZERO });
        assert_eq!((d.cc.window(), d.cc.pacing_rate()), (w, r));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: BbrParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        let d = BbrParams::default;
        assert_eq!(key(BbrParams { high_gain: 1.0, ..d() }), "transport.cc.high_gain");
        assert_eq!(key(BbrParams { drain_gain: 1.0, ..d() }), "transport.cc.drain_gain");
        assert_eq!(key(BbrParams { cwnd_gain: 0.5, ..d() }), "transport.cc.cwnd_gain");
        assert_eq!(key(BbrParams { bw_window_rounds: 0, ..d() }), "transport.cc.bw_window_rounds");
        assert_eq!(key(BbrParams { bw_window_rounds: 17, ..d() }), "transport.cc.bw_window_rounds");
        assert_eq!(key(BbrParams { min_rtt_window_us: -1.0, ..d() }), "transport.cc.min_rtt_window_us");
        assert_eq!(key(BbrParams { full_bw_growth: 1.0, ..d() }), "transport.cc.full_bw_growth");
        assert_eq!(key(BbrParams { full_bw_rounds: 0, ..d() }), "transport.cc.full_bw_rounds");
        assert_eq!(key(BbrParams { init_cwnd_bdp: 0.0, ..d() }), "transport.cc.init_cwnd_bdp");
        assert_eq!(key(BbrParams { min_cwnd_pkts: 0, ..d() }), "transport.cc.min_cwnd_pkts");
        assert!(d().validate().is_ok());
    }
}
