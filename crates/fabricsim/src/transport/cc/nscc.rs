//! `nscc`: NSCC, the Ultra Ethernet network-signal congestion control — a sender window driven
//! by each ACK's ECN bit and queueing delay, with increases accumulated and applied once per
//! adjustment period, a multiplicative decrease on the averaged delay, fast increase near an
//! empty queue, and QuickAdapt (jump to the bytes delivered in the last epoch) on trims or very
//! high delay.
//!
//! **Follows:** `experiments/htsim-parity/SPEC.md` §1 (uec-spec §1), written from htsim's UEC
//! transport (`ultraethernet/uet-htsim` @ 40ccb05, `sim/uec.cpp`: `initNsccParams`,
//! `updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`, `quick_adapt`, `update_delay`). SMaRTT
//! (`smartt.rs`) is its ancestor; uec-spec §10 lists where the two differ.
//!
//! Per ACK (uec-spec §1.2): QuickAdapt check; then on (ECN, delay vs target queueing delay):
//! clean & high → fair increase, clean & low → fast or proportional increase, marked & high →
//! multiplicative decrease, marked & low → nothing. Increases accumulate in `inc` and are
//! applied as `inc / cwnd` when 8 MTU were received or a network RTT passed (plus the `eta`
//! bump once per period).
//!
//! **Parameters** (all in [`NsccParams`], keys under `transport.cc`; defaults are htsim_uec's):
//! `target_qdelay_rtt` 0.75 (× network RTT; htsim uses 1.0 without trimming),
//! `target_qdelay_us` unset, `fi_mss` 5, `alpha_mss` 4, `eta_mss` 0.15, `fast_increase_scale`
//! 0.25, `fast_delay_us` 1, `gamma` 0.8, `md_floor` 0.5, `delay_alpha` 0.0125, `quick_adapt`
//! true, `qa_gate` 3, `qa_threshold_target` 4, `qa_scaling` 1, `adjust_bytes_mtu` 8,
//! `adjust_period_rtt` 1, `min_window_mtu` 1, `max_window_bdp` 1.5, `initial_window_bdp` 1.5,
//! `base_rtt` "network", `reference_bdp_bytes` 150 000, `reference_rtt_us` 12.
//!
//! **Differences** (`type=deviation`):
//! - Sizes are wire bytes, as everywhere in fabricsim; htsim's `mss` in the gains (`fi`, `alpha`,
//!   `eta` are multiples of it) is the payload of a full packet, here `mtu − header` is not
//!   known, so the gains use the full packet's wire size (1.6 % larger at 4096 + 64 B).
//! - (Closed: a trim at the last hop under receiver credits no longer cuts the window; the
//!   switch marks such trims and the NACK carries the mark, uec-spec §2.4.)
//! - On timeouts htsim cuts the window by each lost packet; here by the bytes the timeout
//!   declared lost, the same sum.

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::scheme::Limit;
use crate::units::{BitsPerSec, Bytes, Time, US};
use serde::{Deserialize, Serialize};

/// Which base RTT a connection starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseRtt {
    /// The fabric's largest unloaded RTT, lowered by smaller samples (htsim's default).
    Network,
    /// This connection's own unloaded RTT (htsim's `-enable_accurate_base_rtt`).
    Path,
}

/// Parameters of `nscc`, with htsim_uec's defaults (uec-spec §1.1).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsccParams {
    /// Target queueing delay as a multiple of the network RTT (htsim: 0.75 with trimming, 1
    /// without).
    pub target_qdelay_rtt: f64,
    /// Target queueing delay in µs; overrides `target_qdelay_rtt` (htsim `-target_q_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_qdelay_us: Option<f64>,
    /// Fair increase per RTT, in MTU × a (a = network BDP / reference BDP) (htsim: 5).
    pub fi_mss: f64,
    /// Proportional-increase gain, in MTU × a × b per target delay (htsim: 4).
    pub alpha_mss: f64,
    /// Additive bump per adjustment period, in MTU × a (htsim: 0.15).
    pub eta_mss: f64,
    /// Fast increase: window bytes per acked byte, × a (htsim: 0.25).
    pub fast_increase_scale: f64,
    /// Fast increase only while the queueing delay is below this, µs (htsim: 1, hard-coded).
    pub fast_delay_us: f64,
    /// Multiplicative-decrease gain γ (htsim: 0.8).
    pub gamma: f64,
    /// Least factor of one multiplicative decrease (htsim: 0.5, hard-coded).
    pub md_floor: f64,
    /// EWMA gain of the queueing-delay average (htsim: 0.0125).
    pub delay_alpha: f64,
    /// QuickAdapt on (htsim: on).
    pub quick_adapt: bool,
    /// QuickAdapt only while the epoch's delivered bytes are below max window / 2^qa_gate
    /// (htsim `-qa_gate`: 3).
    pub qa_gate: u32,
    /// A queueing delay above this many target delays triggers QuickAdapt (htsim: 4).
    pub qa_threshold_target: f64,
    /// QuickAdapt sets the window to this × the bytes delivered in the last epoch (htsim: 1).
    pub qa_scaling: f64,
    /// Apply the accumulated increase after this many MTU were received (htsim: 8).
    pub adjust_bytes_mtu: f64,
    /// ... or after this many network RTTs (htsim: 1).
    pub adjust_period_rtt: f64,
    /// Smallest window, in full packets (htsim: 1).
    pub min_window_mtu: f64,
    /// Largest window, in BDPs of the base RTT (htsim: 1.5).
    pub max_window_bdp: f64,
    /// Initial window, in BDPs of the base RTT (htsim: the max window; `-cwnd` overrides).
    pub initial_window_bdp: f64,
    /// The base RTT a connection starts from (htsim: the network's).
    pub base_rtt: BaseRtt,
    /// BDP of the reference network the gains were tuned for, 100 Gb/s × 12 µs (htsim: 150 000 B).
    pub reference_bdp_bytes: Bytes,
    /// RTT of the reference network, µs (htsim: 12).
    pub reference_rtt_us: f64,
}

impl Default for NsccParams {
    fn default() -> Self {
        //= uec-spec §1.1 (htsim initNsccParams, initNscc)
        NsccParams {
            target_qdelay_rtt: 0.75,
            target_qdelay_us: None,
            fi_mss: 5.0,
            alpha_mss: 4.0,
            eta_mss: 0.15,
            fast_increase_scale: 0.25,
            fast_delay_us: 1.0,
            gamma: 0.8,
            md_floor: 0.5,
            delay_alpha: 0.0125,
            quick_adapt: true,
            qa_gate: 3,
            qa_threshold_target: 4.0,
            qa_scaling: 1.0,
            adjust_bytes_mtu: 8.0,
            adjust_period_rtt: 1.0,
            min_window_mtu: 1.0,
            max_window_bdp: 1.5,
            initial_window_bdp: 1.5,
            base_rtt: BaseRtt::Network,
            reference_bdp_bytes: Bytes(150_000),
            reference_rtt_us: 12.0,
        }
    }
}

/// The controller of one connection. Plain fields only: nothing is allocated per ACK.
#[derive(Clone, Debug)]
pub struct Nscc {
    p: NsccParams,
    // --- constants, fixed at build time ---
    mtu: f64,
    host_rate: BitsPerSec,
    /// The network RTT (adjustment period, NACK delay sample).
    network_rtt: Time,
    target: Time,
    /// Fair-increase bytes per acked byte (accumulated).
    fi: f64,
    /// Proportional-increase bytes per acked byte per ps below target (accumulated).
    alpha: f64,
    eta: f64,
    fast_scale: f64,
    fast_delay: Time,
    qa_threshold: Time,
    adjust_bytes: u64,
    adjust_period: Time,
    min_window: f64,
    // --- state ---
    base_rtt: Time,
    max_window: f64,
    cwnd: f64,
    /// Accumulated increase, applied as `inc / cwnd` at the next fulfilment.
    inc: f64,
    /// Bytes received since the last fulfilment.
    received: u64,
    last_adjust: Time,
    last_decrease: Time,
    avg_delay: f64,
    /// Fast increase: consecutive near-empty-queue bytes, and whether it is in force.
    fast_count: u64,
    fast_active: bool,
    /// QuickAdapt: bytes delivered in the epoch, its end (0 = no epoch yet), a NACK's request,
    /// and the ignore window (feedback on bytes in flight when QA fired).
    achieved: u64,
    qa_end: Time,
    qa_trigger: bool,
    to_ignore: u64,
    ignored: u64,
}

impl Nscc {
    /// A controller for a connection on `path`.
    pub fn new(p: &NsccParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.0 as f64;
        let network_rtt = path.net_base_rtt.max(Time(1));
        //= uec-spec §1.1 (target_qdelay)
        let target = match p.target_qdelay_us {
            Some(us) => Time((us * US.0 as f64).round() as u64),
            None => Time((network_rtt.0 as f64 * p.target_qdelay_rtt).round() as u64),
        }
        .max(Time(1));
        //= uec-spec §1.1: a = network BDP / reference BDP, b = target delay / reference RTT
        //# Gains tuned at 100 Gb/s × 12 µs grow with the pipe and with the allowed queue.
        let network_bdp = path.host_rate.0 as f64 / 8.0 * network_rtt.0 as f64 * 1e-12;
        let a = network_bdp / p.reference_bdp_bytes.0 as f64;
        let b = target.0 as f64 / (p.reference_rtt_us * US.0 as f64);
        let base_rtt = match p.base_rtt {
            BaseRtt::Network => network_rtt,
            BaseRtt::Path => path.base_rtt.max(Time(1)),
        };
        let min_window = p.min_window_mtu * mtu;
        let max_window = Self::max_window_for(p, path.host_rate, base_rtt, min_window);
        Nscc {
            p: *p,
            mtu,
            host_rate: path.host_rate,
            network_rtt,
            target,
            fi: p.fi_mss * mtu * a,
            alpha: p.alpha_mss * mtu * a * b / target.0 as f64,
            eta: p.eta_mss * mtu * a,
            fast_scale: p.fast_increase_scale * a,
            fast_delay: Time((p.fast_delay_us * US.0 as f64).round() as u64),
            qa_threshold: Time((p.qa_threshold_target * target.0 as f64).round() as u64),
            adjust_bytes: (p.adjust_bytes_mtu * mtu).round() as u64,
            adjust_period: Time((p.adjust_period_rtt * network_rtt.0 as f64).round() as u64),
            min_window,
            base_rtt,
            max_window,
            cwnd: (p.initial_window_bdp / p.max_window_bdp * max_window).clamp(min_window, max_window),
            inc: 0.0,
            received: 0,
            last_adjust: Time::ZERO,
            last_decrease: Time::ZERO,
            avg_delay: 0.0,
            fast_count: 0,
            fast_active: false,
            achieved: 0,
            qa_end: Time::ZERO,
            qa_trigger: false,
            to_ignore: 0,
            ignored: 0,
        }
    }

    fn max_window_for(p: &NsccParams, rate: BitsPerSec, base_rtt: Time, min_window: f64) -> f64 {
        let bdp = rate.0 as f64 / 8.0 * base_rtt.0 as f64 * 1e-12;
        (p.max_window_bdp * bdp).max(min_window)
    }

    fn clamp_window(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_window, self.max_window);
    }

    //= uec-spec §1.2 step 2 (htsim update_base_rtt)
    //# A smaller RTT sample lowers the base RTT, and the max window follows it.
    fn sample_base_rtt(&mut self, rtt: Time) {
        if rtt > Time::ZERO && rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.max_window = Self::max_window_for(&self.p, self.host_rate, rtt, self.min_window);
        }
    }

    //= uec-spec §1.5 (htsim update_delay)
    //# An unmarked sample above target is stale: pull the average towards base_rtt/4 instead.
    fn update_delay_average(&mut self, delay: Time, marked: bool) {
        let sample = if !marked && delay > self.target { self.base_rtt.0 as f64 * 0.25 } else { delay.0 as f64 };
        self.avg_delay = self.p.delay_alpha * sample + (1.0 - self.p.delay_alpha) * self.avg_delay;
    }

    /// QuickAdapt check at a feedback event; returns whether the event is consumed (QA fired,
    /// or the event lies in the ignore window), in which case the accumulated increase is
    /// dropped.
    //= uec-spec §1.6 (htsim quick_adapt)
    //# Once per epoch of base_rtt + target: on a trim or very high delay, if the epoch delivered
    //# less than max_window/2^gate, set cwnd to what was delivered and ignore what is in flight.
    fn quick_adapt(&mut self, now: Time, loss: bool, skip: bool, delay: Time, in_flight: u64) -> bool {
        if !self.p.quick_adapt {
            return false;
        }
        let mut consumed = false;
        if skip && self.ignored < self.to_ignore {
            consumed = true;
        } else if now > self.qa_end {
            let gate = self.max_window / (1u64 << self.p.qa_gate.min(63)) as f64;
            if self.qa_end != Time::ZERO && (self.qa_trigger || loss || delay > self.qa_threshold) && (self.achieved as f64) < gate {
                self.cwnd = (self.p.qa_scaling * self.achieved as f64).max(self.min_window);
                self.to_ignore = in_flight;
                self.ignored = 0;
                self.qa_trigger = false;
                consumed = true;
            }
            self.achieved = 0;
            self.qa_end = now + self.base_rtt + self.target;
        }
        if consumed {
            self.inc = 0.0;
            self.received = 0;
        }
        consumed
    }

    //= uec-spec §1.3 (htsim fast_increase); returns whether it applied
    //# A full window of ACKs with under 1 µs of queueing: grow by fi_scale per acked byte.
    fn fast_increase(&mut self, acked: u64, delay: Time) -> bool {
        if delay < self.fast_delay {
            self.fast_count += acked;
            if self.fast_count as f64 > self.cwnd || self.fast_active {
                self.cwnd += acked as f64 * self.fast_scale;
                self.fast_active = true;
                return true;
            }
        } else {
            self.fast_count = 0;
        }
        self.fast_active = false;
        false
    }

    //= uec-spec §1.4 (htsim multiplicative_decrease)
    //# At most once per base RTT, scale by 1 − γ(avg − target)/avg, never below md_floor.
    fn multiplicative_decrease(&mut self, now: Time) {
        self.fast_active = false;
        self.fast_count = 0;
        let avg = self.avg_delay;
        if avg > self.target.0 as f64 && now.saturating_sub(self.last_decrease) > self.base_rtt {
            self.cwnd *= (1.0 - self.p.gamma * (avg - self.target.0 as f64) / avg).max(self.p.md_floor);
            self.cwnd = self.cwnd.max(self.min_window);
            self.last_decrease = now;
        }
    }

    //= uec-spec §1.2 step 6 (htsim fulfill_adjustment)
    //# Apply inc/cwnd, and the eta bump once per adjustment period.
    fn fulfil(&mut self, now: Time) {
        self.cwnd += self.inc / self.cwnd;
        if now.saturating_sub(self.last_adjust) >= self.adjust_period {
            self.cwnd += self.eta;
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received = 0;
    }
}

impl CongestionControl for Nscc {
    //= uec-spec §1.2 (htsim processAck, updateCwndOnAck_NSCC)
    fn on_ack(&mut self, ev: &AckEvent) {
        let acked = ev.acked_bytes;
        self.achieved += acked.0;
        self.received += acked.0;
        self.ignored += acked.0;
        let marked = ev.ecn || ev.marked_pkts > 0;
        self.sample_base_rtt(ev.rtt);
        let delay = if ev.rtt >= self.base_rtt {
            let d = ev.rtt - self.base_rtt;
            self.update_delay_average(d, marked);
            d
        } else {
            Time(self.avg_delay as u64)
        };
        if self.quick_adapt(ev.now, false, marked, delay, ev.in_flight) {
            return;
        }
        match (marked, delay >= self.target) {
            //= uec-spec §1.2 case clean/high: fair increase
            (false, true) => self.inc += self.fi * acked.0 as f64,
            //= uec-spec §1.2 case clean/low: fast increase, else proportional increase
            (false, false) => {
                if !self.fast_increase(acked.0, delay) {
                    self.inc += self.alpha * acked.0 as f64 * (self.target - delay).0 as f64;
                }
            }
            (true, true) => self.multiplicative_decrease(ev.now),
            //= uec-spec §1.2 case marked/low: no window change (only the path selector reacts)
            (true, false) => {}
        }
        self.clamp_window();
        if self.received > self.adjust_bytes || ev.now.saturating_sub(self.last_adjust) > self.adjust_period {
            self.fulfil(ev.now);
        }
        self.clamp_window();
    }

    //= uec-spec §1.7 (htsim processNack, updateCwndOnNack_NSCC)
    //# A trim: the queue is full (delay sample = network RTT), request QuickAdapt, else cut by the packet.
    fn on_nack(&mut self, ev: &NackEvent) {
        self.sample_base_rtt(ev.now.saturating_sub(ev.sent_at));
        self.ignored += ev.bytes.0;
        self.update_delay_average(self.network_rtt, true);
        self.qa_trigger = true;
        //= uec-spec §2.4 (htsim updateCwndOnNack_NSCC: no cut for a last-hop trim under RCCC)
        //# The receiver's credits pace its own downlink; the window answers for the fabric.
        if !self.quick_adapt(ev.now, true, true, Time::ZERO, ev.in_flight) && !ev.last_hop_paced {
            self.cwnd -= ev.bytes.0 as f64;
            self.clamp_window();
        }
    }

    //= uec-spec §1.7 (htsim mark_packet_for_retransmission)
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.cwnd = (self.cwnd - ev.lost_bytes.0 as f64).max(self.mtu);
        self.clamp_window();
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd as u64)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

impl crate::scheme::Scheme<PathInfo> for Nscc {
    const NAME: &'static str = "nscc";
    const SUMMARY: &'static str = "NSCC (Ultra Ethernet): ECN + queueing-delay window, accumulated fair/proportional increase, MD on the delay average, QuickAdapt";
    const LIMITS: &'static [Limit] = &[
        Limit::new("target_qdelay_rtt", 0.01, 100.0),
        Limit::new("target_qdelay_us", 0.001, 1e6),
        Limit::new("fi_mss", 0.0, 1e6),
        Limit::new("alpha_mss", 0.0, 1e6),
        Limit::new("eta_mss", 0.0, 1e6),
        Limit::new("fast_increase_scale", 0.0, 1e3),
        Limit::new("fast_delay_us", 0.0, 1e6),
        Limit::new("gamma", 0.0, 1.0),
        Limit::new("md_floor", 0.0, 1.0),
        Limit::new("delay_alpha", 1e-6, 1.0),
        Limit::new("qa_gate", 0.0, 63.0),
        Limit::new("qa_threshold_target", 0.0, 1e6),
        Limit::new("qa_scaling", 0.001, 100.0),
        Limit::new("adjust_bytes_mtu", 0.0, 1e6),
        Limit::new("adjust_period_rtt", 0.001, 1e6),
        Limit::new("min_window_mtu", 0.001, 1e6),
        Limit::new("max_window_bdp", 0.001, 1e3),
        Limit::new("initial_window_bdp", 0.001, 1e3),
        Limit::new("reference_bdp_bytes", 1.0, 1099511627776.0),
        Limit::new("reference_rtt_us", 0.001, 1e6),
    ];
    type Params = NsccParams;
    fn build(p: &NsccParams, path: &mut PathInfo) -> Self {
        Nscc::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    //! Crafted signals on one path: 4096 B packets at 400 Gb/s, network RTT 10 µs, so the
    //! network BDP is 500 000 B, a = 500 000 / 150 000 = 10/3, target delay 7.5 µs,
    //! b = 7.5 / 12 = 0.625, max window 750 000 B.
    use super::*;
    use crate::transport::cc::testing::{path, ACK, MTU};
    use crate::transport::cc::LossCause;
    use crate::units::NS;

    const A: f64 = 10.0 / 3.0;
    const TARGET: Time = Time(7_500_000);

    fn nscc(p: NsccParams) -> Nscc {
        Nscc::new(&p, &path(400_000_000_000, 500_000))
    }

    /// A controller at half its max window with its first QA epoch started and no pending
    /// adjustment, so one ACK's effect can be read off.
    fn settled(p: NsccParams) -> Nscc {
        let mut c = nscc(NsccParams { initial_window_bdp: 0.75, ..p });
        c.qa_end = 1_000 * US;
        c.last_adjust = 100 * US;
        c.last_decrease = 100 * US;
        c
    }

    fn ack(now: Time, rtt: Time, ecn: bool) -> AckEvent {
        AckEvent { now, rtt, ecn, marked_pkts: ecn as u32, in_flight: 100_000, ..ACK }
    }

    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "got {got}, expected {want}");
    }

    //= uec-spec §1.1; type=test
    #[test]
    fn constants_scale_with_the_network() {
        let c = nscc(NsccParams::default());
        assert_eq!(c.target, TARGET);
        assert_close(c.fi, 5.0 * MTU as f64 * A);
        assert_close(c.alpha, 4.0 * MTU as f64 * A * 0.625 / TARGET.0 as f64);
        assert_close(c.eta, 0.15 * MTU as f64 * A);
        assert_close(c.max_window, 750_000.0);
        assert_close(c.cwnd, 750_000.0);
        assert_eq!(c.qa_threshold, 4 * TARGET);
        assert_eq!(c.adjust_bytes, 8 * MTU);
    }

    //= uec-spec §1.2 case clean/high (fair increase); type=test
    #[test]
    fn fair_increase_accumulates_fi_per_byte_and_applies_inc_over_cwnd() {
        let mut c = settled(NsccParams::default());
        let w = c.cwnd;
        // Delay 8 µs ≥ target: inc += fi · 4096; not yet 8 MTU received, no fulfilment.
        c.on_ack(&ack(101 * US, 18 * US, false));
        assert_eq!(c.cwnd, w);
        assert_close(c.inc, c.fi * 4096.0);
        // Eight more ACKs: the ninth passes 8 MTU and applies inc / cwnd (no eta: the period
        // has not elapsed).
        for i in 0..8 {
            c.on_ack(&ack(101 * US + i * NS, 18 * US, false));
        }
        assert_close(c.cwnd, w + 9.0 * c.fi * 4096.0 / w);
        assert_eq!(c.inc, 0.0);
    }

    //= uec-spec §1.2 case clean/low (proportional increase); type=test
    #[test]
    fn proportional_increase_grows_with_the_distance_below_target() {
        let mut c = settled(NsccParams::default());
        // Delay 3 µs (< target, ≥ 1 µs so no fast increase): inc = α · 4096 · 4.5 µs.
        c.on_ack(&ack(101 * US, 13 * US, false));
        assert_close(c.inc, c.alpha * 4096.0 * 4_500_000.0);
        let mut d = settled(NsccParams::default());
        d.on_ack(&ack(101 * US, 16 * US, false));
        assert!(d.inc < c.inc, "closer to target, smaller increase");
    }

    //= uec-spec §1.3 (fast increase); type=test
    #[test]
    fn fast_increase_after_a_window_of_near_empty_queue_acks() {
        let mut c = settled(NsccParams { initial_window_bdp: 0.01, ..NsccParams::default() });
        c.cwnd = 8_192.0;
        // Delay 0.5 µs: the first two ACKs fill fast_count up to the window (8192, not above).
        c.on_ack(&ack(101 * US, 10 * US + 500 * NS, false));
        c.on_ack(&ack(101 * US, 10 * US + 500 * NS, false));
        assert!(!c.fast_active);
        // The third exceeds it: cwnd += 4096 · 0.25 · a.
        let w = c.cwnd;
        c.on_ack(&ack(101 * US, 10 * US + 500 * NS, false));
        assert!(c.fast_active);
        assert_close(c.cwnd, w + 4096.0 * 0.25 * A);
        // A delay of 2 µs leaves fast mode.
        c.on_ack(&ack(101 * US, 12 * US, false));
        assert!(!c.fast_active);
        assert_eq!(c.fast_count, 0);
    }

    //= uec-spec §1.4 (multiplicative decrease); type=test
    #[test]
    fn multiplicative_decrease_uses_the_delay_average_once_per_base_rtt() {
        // No eta bump, so that the fulfilment these late ACKs trigger adds nothing.
        let mut c = settled(NsccParams { eta_mss: 0.0, ..NsccParams::default() });
        c.avg_delay = 15_000_000.0; // 15 µs average, target 7.5 µs
        let w = c.cwnd;
        // Marked at 20 µs of delay: the average moves to 0.0125·20 + 0.9875·15 µs first.
        c.on_ack(&ack(200 * US, 30 * US, true));
        let avg = 0.0125 * 20e6 + 0.9875 * 15e6;
        assert_close(c.cwnd, w * (1.0 - 0.8 * (avg - 7.5e6) / avg));
        // A second marked ACK within one base RTT (10 µs) changes nothing.
        let w = c.cwnd;
        c.on_ack(&ack(205 * US, 30 * US, true));
        assert_close(c.cwnd, w);
        // A huge average is floored at ×0.5.
        c.avg_delay = 1e12;
        let w = c.cwnd;
        c.on_ack(&ack(300 * US, 30 * US, true));
        assert_close(c.cwnd, w * 0.5);
        // Marked below target: nothing.
        let w = c.cwnd;
        c.avg_delay = 0.0;
        c.on_ack(&ack(400 * US, 12 * US, true));
        assert_close(c.cwnd, w);
    }

    //= uec-spec §2.4 (no window cut for a last-hop trim under RCCC); type=test
    #[test]
    fn a_last_hop_trim_under_receiver_credits_leaves_the_window_but_arms_quick_adapt() {
        let mut c = nscc(NsccParams::default());
        c.on_ack(&ack(100 * US, 12 * US, false));
        let w = c.cwnd;
        let nack = NackEvent { now: 101 * US, bytes: Bytes(4096), cause: LossCause::Trimmed, entropy: 0, in_flight: 200_000, sent_at: 95 * US, last_hop_paced: true };
        c.on_nack(&nack);
        // Inside the first epoch QA cannot fire; the last-hop trim is the credits' to answer.
        assert_close(c.cwnd, w);
        assert!(c.qa_trigger, "the trim still arms QuickAdapt for the next epoch");
        // The same trim before the last hop cuts the window by the packet (then clamps it to
        // the max window, which the initial one may exceed).
        c.on_nack(&NackEvent { last_hop_paced: false, ..nack });
        assert!(c.cwnd <= w - 4096.0, "{} vs {w}", c.cwnd);
    }

    //= uec-spec §1.6 (QuickAdapt on a trim); type=test
    #[test]
    fn quick_adapt_sets_the_window_to_the_delivered_bytes_after_a_trim() {
        let mut c = nscc(NsccParams::default());
        // First feedback opens the epoch (ends at 100 + 10 + 7.5 µs).
        c.on_ack(&ack(100 * US, 12 * US, false));
        for i in 1..10 {
            c.on_ack(&ack(100 * US + i * US, 12 * US, false));
        }
        // A trim inside the epoch: no QA yet (epoch not over), cut by one packet.
        let w = c.cwnd;
        c.on_nack(&NackEvent { now: 110 * US, bytes: Bytes(4096), cause: LossCause::Trimmed, entropy: 0, in_flight: 200_000, sent_at: 100 * US, last_hop_paced: false });
        assert_close(c.cwnd, w - 4096.0);
        assert!(c.qa_trigger);
        // The first feedback after the epoch end: it and the 9 ACKs before delivered
        // 40 960 B < 750 000 / 8, so cwnd = 40 960 and the ACKs on the 150 000 B in flight are
        // ignored.
        c.on_ack(&AckEvent { in_flight: 150_000, ..ack(118 * US, 12 * US, false) });
        assert_close(c.cwnd, 10.0 * 4096.0);
        assert_eq!(c.to_ignore, 150_000);
        // A marked ACK in the ignore window is skipped.
        c.on_ack(&ack(119 * US, 40 * US, true));
        assert_close(c.cwnd, 10.0 * 4096.0);
    }

    //= uec-spec §1.6 (QuickAdapt gate and delay trigger); type=test
    #[test]
    fn quick_adapt_on_high_delay_only_below_the_gate() {
        let mut c = nscc(NsccParams::default());
        c.on_ack(&ack(100 * US, 12 * US, false));
        // 40 µs of delay > 4 × 7.5 µs after an epoch in which this ACK alone delivered 4096 B: QA.
        c.on_ack(&ack(120 * US, 50 * US, false));
        assert_close(c.cwnd, 4096.0);
        // Delivering more than max_window/8 in an epoch blocks QA.
        let mut c = nscc(NsccParams::default());
        c.on_ack(&ack(100 * US, 12 * US, false));
        for i in 0..30 {
            c.on_ack(&AckEvent { acked_bytes: Bytes(4096), ..ack(101 * US + i * 10 * NS, 12 * US, false) });
        }
        let w = c.cwnd;
        c.on_ack(&ack(120 * US, 50 * US, false));
        assert!(c.cwnd >= w, "no QA: 31 × 4096 B > 750 000 / 8 B");
        // And it can be switched off.
        let mut c = nscc(NsccParams { quick_adapt: false, ..NsccParams::default() });
        c.on_ack(&ack(100 * US, 12 * US, false));
        c.on_ack(&ack(120 * US, 50 * US, false));
        assert!(c.cwnd > 700_000.0);
    }

    //= uec-spec §1.7 (NACK reaction); type=test
    #[test]
    fn nack_feeds_the_delay_average_and_lowers_the_base_rtt() {
        let mut c = settled(NsccParams::default());
        c.on_nack(&NackEvent { now: 200 * US, bytes: Bytes(4096), cause: LossCause::Trimmed, entropy: 0, in_flight: 0, sent_at: 192 * US, last_hop_paced: false });
        // RTT 8 µs < 10 µs network RTT: base RTT 8 µs, max window 1.5 × 400 000.
        assert_eq!(c.base_rtt, 8 * US);
        assert_close(c.max_window, 600_000.0);
        assert_close(c.avg_delay, 0.0125 * 10e6);
        // The window was 375 000 B: cut by one packet (no QA: the epoch has not ended).
        assert_close(c.cwnd, 375_000.0 - 4096.0);
    }

    //= uec-spec §1.7 (timeout); type=test
    #[test]
    fn timeout_cuts_the_lost_bytes_and_window_stays_in_bounds() {
        let mut c = settled(NsccParams::default());
        c.on_timeout(&TimeoutEvent { now: Time::ZERO, lost_bytes: Bytes(8192), in_flight: 0, consecutive: 1, latest_sent_at: Time::ZERO });
        assert_close(c.cwnd, 375_000.0 - 8192.0);
        c.on_timeout(&TimeoutEvent { now: Time::ZERO, lost_bytes: Bytes(10_000_000), in_flight: 0, consecutive: 1, latest_sent_at: Time::ZERO });
        assert_close(c.cwnd, 4096.0);
        let mut c = settled(NsccParams::default());
        for i in 0..10_000 {
            c.on_ack(&ack(101 * US + i * 100 * NS, 10 * US + 500 * NS, false));
            assert!(c.cwnd <= 750_000.0);
        }
    }
}
