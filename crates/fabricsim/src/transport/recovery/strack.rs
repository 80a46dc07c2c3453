//! `strack`: STrack's reliability for lossy multipath fabrics (strack spec §2.5.7–2.5.11).
//!
//! Receiver: in-order arrivals are ACKed at once, the SACK bitmap covers the 64-packet segment
//! of the lowest packet that arrived since the previous ACK, and every ACK carries the count of
//! packets held above the cumulative point. Sender: loss is detected on three time scales:
//! out-of-order count above max(cwnd, 5) packets (≈ 1–2 RTTs), an unanswered-looking probe
//! after 3 network RTTs without ACKs, and the RTO; recovery declares the holes up to the
//! highest received packet lost and resends them within the window.
//!
//! Parameters (strack spec §2.1.2): `min_ooo_threshold` 5, `probe_interval_rtts` 3,
//! `probe_small_delay_rtts` 2, `probe_range` extended, `ack_on_ce` false.

use super::{Actions, AckInfo, Arrival, Episode, ReceiverRecovery, Reply, RxView, SenderCtx, SenderRecovery};
use crate::error::{Error, Result};
use crate::transport::cc::PathInfo;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "strack";
/// Registry summary.
pub const SUMMARY: &str = "STrack: SACK segments, out-of-order count, probe after 3 RTTs, RTO (strack spec §2.5.7-2.5.11)";

/// Parameters of `strack` loss detection (strack spec §2.1.2).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StrackLossParams {
    /// Floor of the out-of-order threshold, in packets (paper: "say 5").
    pub min_ooo_threshold: u32,
    /// A probe goes out after this many network base RTTs without an ACK (paper: n = 3).
    pub probe_interval_rtts: f64,
    /// A probe answer whose queueing delay is below this many network RTTs, with no other ACK
    /// since the probe, means the outstanding packets were lost (Algorithm 1 line 10: 2).
    pub probe_small_delay_rtts: f64,
    /// Probe-triggered recovery covers packets up to the highest sent before the probe
    /// (`extended`, our reading of the intent; spec §2.5.9) or only up to the highest received
    /// (`literal`, the paper's "same way as OOO-based").
    pub probe_range: ProbeRange,
    /// Also ACK at once every CE-marked arrival, so coalescing never hides an ECN mark from the
    /// path selector (spec §2.5.11 optional variant).
    pub ack_on_ce: bool,
}

/// How far probe-triggered recovery reaches.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProbeRange {
    /// Up to the highest packet sent before the probe.
    Extended,
    /// Up to the highest packet known received.
    Literal,
}

impl Default for StrackLossParams {
    fn default() -> Self {
        //= spec strack.md §2.1.2 (min_ooo_threshold 5, probe n = 3, small RTT 2 × net RTT)
        StrackLossParams { min_ooo_threshold: 5, probe_interval_rtts: 3.0, probe_small_delay_rtts: 2.0, probe_range: ProbeRange::Extended, ack_on_ce: false }
    }
}

impl StrackLossParams {
    /// Checks parameter values; errors name the key under `transport.reliability`.
    pub fn validate(&self) -> Result<()> {
        if self.min_ooo_threshold == 0 {
            return Err(Error::invalid("transport.reliability.min_ooo_threshold", "0: must be at least 1 packet"));
        }
        for (key, v) in [("probe_interval_rtts", self.probe_interval_rtts), ("probe_small_delay_rtts", self.probe_small_delay_rtts)] {
            if !(v.is_finite() && v > 0.0 && v <= 1000.0) {
                return Err(Error::invalid(format!("transport.reliability.{key}"), format!("{v}: must be a positive number of RTTs up to 1000")));
            }
        }
        Ok(())
    }
}

/// Sender-side state of STrack's loss detection (strack spec §2.3).
#[derive(Clone, Copy, Debug, Default)]
pub struct LossDetect {
    /// In a recovery episode.
    pub in_recovery: bool,
    /// Highest packet covered by the current episode.
    pub recovery_end: u32,
    /// One past the highest packet known received.
    pub highest_rcvd_end: u32,
    /// When the next probe is due (re-armed by every ACK).
    pub probe_deadline: Time,
    /// Whether a probe-timer event is scheduled.
    pub probe_pending: bool,
    /// ACKs (other than probe answers) since the last probe left.
    pub acks_since_probe: u32,
    /// One past the highest packet sent when the last probe left.
    pub sent_end_at_probe: u32,
}

/// Sender half: resolved parameters and the connection's [`LossDetect`].
#[derive(Clone, Copy, Debug)]
pub struct Strack {
    /// Probe after this long without an ACK.
    probe_interval: Time,
    /// A probe answer below this queueing delay counts as "fast".
    probe_small_delay: Time,
    /// The connection path's base RTT (queueing delay = RTT sample − this).
    base_rtt: Time,
    /// Floor of the out-of-order threshold (packets).
    min_ooo: u32,
    /// Probe recovery reaches the highest packet sent before the probe.
    extended_probe_range: bool,
    /// Loss-detection state.
    pub ld: LossDetect,
}

impl Strack {
    /// The sender half of a connection on `path`; probe times scale with the network base RTT.
    pub fn new(p: &StrackLossParams, path: &PathInfo) -> Self {
        let net = path.net_base_rtt.0 as f64;
        Strack {
            probe_interval: (Time((p.probe_interval_rtts * net).round() as u64)).max(Time(1)),
            probe_small_delay: Time((p.probe_small_delay_rtts * net).round() as u64),
            base_rtt: path.base_rtt,
            min_ooo: p.min_ooo_threshold,
            extended_probe_range: p.probe_range == ProbeRange::Extended,
            ld: LossDetect::default(),
        }
    }
}

impl SenderRecovery for Strack {
    /// Arms the probe timer if it is not already armed (a packet left an empty pipe).
    fn on_send(&mut self, ctx: &mut SenderCtx, _seq: u32) -> Actions {
        let ld = &mut self.ld;
        if ld.probe_pending {
            return Actions::NONE;
        }
        ld.probe_pending = true;
        ld.probe_deadline = ctx.now + self.probe_interval;
        Actions { timer: Some(ld.probe_deadline), ..Actions::NONE }
    }

    //= spec strack.md §2.5.7 process_sack, §2.5.9 handle_probe_ack
    fn on_ack(&mut self, ctx: &mut SenderCtx, ack: &AckInfo) -> Actions {
        let ld = &mut self.ld;
        let mut hi = ld.highest_rcvd_end.max(ack.cum_ack);
        if ack.sack_bits != 0 {
            hi = hi.max(ack.sack_base + 64 - ack.sack_bits.leading_zeros());
        }
        if !ack.probe && ack.seq != u32::MAX {
            hi = hi.max(ack.seq + 1);
        }
        ld.highest_rcvd_end = hi;
        ld.probe_deadline = ctx.now + self.probe_interval;
        if ld.in_recovery && ctx.snd_una > ld.recovery_end {
            ld.in_recovery = false;
        }
        let mut enter = None;
        if ack.probe {
            let fast = ack.rtt.saturating_sub(self.base_rtt) < self.probe_small_delay;
            if fast && ld.acks_since_probe == 0 && !ld.in_recovery {
                let end = if self.extended_probe_range { hi.max(ld.sent_end_at_probe) } else { hi };
                enter = Some((end, Episode::Probe));
            }
        } else {
            ld.acks_since_probe += 1;
            //= spec strack.md §2.5.8 (out-of-order count above max(cwnd, min_ooo_threshold))
            if !ld.in_recovery && ack.ooo_count as u32 > ctx.cwnd_pkts().max(self.min_ooo) {
                enter = Some((hi, Episode::OutOfOrder));
            }
        }
        let Some((end, episode)) = enter else { return Actions::NONE };
        ld.in_recovery = true;
        ld.recovery_end = end.saturating_sub(1);
        ctx.declare_lost(0, end);
        Actions { episode: Some(episode), ..Actions::NONE }
    }

    /// The probe timer: send a probe if no ACK came for a probe interval (spec §2.5.9).
    fn on_timer(&mut self, ctx: &mut SenderCtx) -> Actions {
        let ld = &mut self.ld;
        ld.probe_pending = false;
        if ctx.idle() || ctx.acked_pkts == ctx.next_seq {
            // Nothing unacknowledged: the next transmission re-arms the timer.
            return Actions::NONE;
        }
        ld.probe_pending = true;
        if ld.probe_deadline > ctx.now {
            return Actions { timer: Some(ld.probe_deadline), ..Actions::NONE };
        }
        ld.acks_since_probe = 0;
        ld.sent_end_at_probe = ctx.next_seq;
        ld.probe_deadline = ctx.now + self.probe_interval;
        Actions { timer: Some(ld.probe_deadline), probe: true, ..Actions::NONE }
    }

    fn own_timers(&self) -> Vec<String> {
        use crate::units::ShowTime;
        vec![format!(
            "probe after {} without an ACK (probe_interval_rtts × network base RTT); a probe answer under {} of queueing is fast",
            ShowTime(self.probe_interval),
            ShowTime(self.probe_small_delay)
        )]
    }
}

/// Receiver half.
#[derive(Clone, Copy, Debug, Default)]
pub struct StrackRx {
    /// ACK every CE-marked arrival at once.
    pub ack_on_ce: bool,
}

impl ReceiverRecovery for StrackRx {
    //= spec strack.md §2.5.11 (ACK in-order arrivals at once; bitmap of the lowest's segment)
    fn on_data(&mut self, rx: &RxView, a: &Arrival) -> Reply {
        if a.ack_due || rx.cum > a.cum_before || (self.ack_on_ce && a.ce) {
            Reply::Ack { sack_base: rx.segment_base(rx.lowest_unacked.min(a.seq)) }
        } else {
            Reply::None
        }
    }
}

impl crate::scheme::Scheme<crate::transport::cc::PathInfo> for Strack {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("min_ooo_threshold", 1.0, 1000000.0), crate::scheme::Limit::new("probe_interval_rtts", 0.001, 1000000.0), crate::scheme::Limit::new("probe_small_delay_rtts", 0.0, 1000000.0)];
    type Params = StrackLossParams;
    fn check(p: &StrackLossParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &StrackLossParams, path: &mut crate::transport::cc::PathInfo) -> Self {
        Strack::new(p, path)
    }
}

impl crate::scheme::Companion<crate::transport::cc::PathInfo> for Strack {
    type Half = StrackRx;
    fn build_half(p: &StrackLossParams) -> StrackRx {
        StrackRx { ack_on_ce: p.ack_on_ce }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board, MTU};
    use super::super::*;
    use super::*;

    fn strack() -> Strack {
        let path = PathInfo { mtu_bytes: Bytes(MTU), host_rate: crate::units::BitsPerSec(1), base_rtt: Time(100), bdp_bytes: Bytes::ZERO, hops: 2, net_base_rtt: Time(100), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 };
        Strack::new(&StrackLossParams::default(), &path)
    }

    const ACK: AckInfo = AckInfo { prev_una: 0, newly_acked: 1000, cum_ack: 0, sack_base: 1, sack_bits: 0, seq: 20, ooo_count: 0, probe: false, retransmitted: false, rtt: Time(100) };

    //= type=test; strack spec §2.5.8: recovery when OOO count > max(cwnd, 5)
    #[test]
    fn enters_recovery_when_the_out_of_order_count_exceeds_max_cwnd_5() {
        // Window 8 packets: threshold max(8, 5) = 8.
        let mut b = Board::new(30, 8);
        let mut m = strack();
        assert_eq!(m.on_ack(&mut b.ctx(Time(1000)), &AckInfo { ooo_count: 8, ..ACK }), Actions::NONE);
        assert!(b.lost().is_empty());
        let a = m.on_ack(&mut b.ctx(Time(1001)), &AckInfo { ooo_count: 9, ..ACK });
        assert_eq!(a.episode, Some(Episode::OutOfOrder));
        // Holes up to the highest received (seq 20) are lost; 20 itself is acked by the glue
        // in real runs, here still in flight so it is counted too.
        assert_eq!(b.lost(), (0..21).collect::<Vec<_>>());
        // One episode at a time.
        assert_eq!(m.on_ack(&mut b.ctx(Time(1002)), &AckInfo { ooo_count: 30, ..ACK }).episode, None);
        // Small window: the floor of 5 applies.
        let mut b = Board::new(30, 2);
        let mut m = strack();
        assert_eq!(m.on_ack(&mut b.ctx(Time(1000)), &AckInfo { ooo_count: 5, ..ACK }).episode, None);
        assert_eq!(m.on_ack(&mut b.ctx(Time(1000)), &AckInfo { ooo_count: 6, ..ACK }).episode, Some(Episode::OutOfOrder));
    }

    //= type=test; strack spec §2.5.9: probe after n RTTs; fast answer, no ACK since → loss
    #[test]
    fn probe_timer_and_fast_probe_answer() {
        let mut b = Board::new(10, 20);
        let mut m = strack();
        // First send arms the timer 3 × 100 later, only once.
        assert_eq!(m.on_send(&mut b.ctx(Time::ZERO), 0).timer, Some(Time(300)));
        assert_eq!(m.on_send(&mut b.ctx(Time(1)), 1), Actions::NONE);
        let a = m.on_timer(&mut b.ctx(Time(300)));
        assert_eq!(a, Actions { timer: Some(Time(600)), probe: true, ..Actions::NONE });
        // Probe answer with 150 of queueing (< 2 × 100): fast; extended range covers all 10.
        let a = m.on_ack(&mut b.ctx(Time(450)), &AckInfo { probe: true, rtt: Time(250), seq: u32::MAX, ..ACK });
        assert_eq!(a.episode, Some(Episode::Probe));
        assert_eq!(b.lost(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn receiver_acks_cumulative_progress_at_once_with_segment_bitmap() {
        let w = window(64, &[130]);
        let rx = RxView { cum: 64, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let mut r = StrackRx { ack_on_ce: true };
        let a = Arrival { seq: 130, fresh: true, ce: false, cum_before: 64, ack_due: false };
        assert_eq!(r.on_data(&rx, &a), Reply::None);
        // CE mark with ack_on_ce: ACK now, bitmap of 130's segment (64 + 64 = 128).
        assert_eq!(r.on_data(&rx, &Arrival { ce: true, ..a }), Reply::Ack { sack_base: 128 });
        // Cumulative point advanced (63 -> 64): ACK now.
        assert_eq!(r.on_data(&rx, &Arrival { seq: 63, cum_before: 63, ..a }), Reply::Ack { sack_base: 64 });
    }
}
