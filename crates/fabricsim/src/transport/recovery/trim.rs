//! `trim`: trimming loss recovery with desynchronised retransmissions (lb-ai-training spec §2.3
//! LR-TRIM and LR-TRIM-RTS; paper §6.2: senders "had to have desynchronization mechanisms when
//! receiving NACKs or trimmed packets as bursts of loss could continually occur, causing the
//! collective to never complete").
//!
//! Recovery itself is [`sack`]'s, by delegation: the receiver ACKs each data packet (cumulative
//! and selective) and NACKs each trimmed header; a NACK, or a header a switch returned to the
//! sender (`[switch] trimmed_headers`, reaching [`SenderRecovery::on_bounce`]), requeues the
//! current transmission; the shared RTO finds anything else; lost packets go before new data.
//! What this mode adds is the desynchronisation rule `desync`, applied on every trimming NACK
//! and every bounce:
//!
//! - `"phase"` (default, spec's pseudo-code `next_tick := next_tick + U(0, T_pace)`): the
//!   connection's next pacing slot moves back by U(0, T_pace), T_pace being the pacing gap of a
//!   full-sized packet at the current rate ([`SenderCtx::pacing_gap`]). A congestion control
//!   that does not pace (a pure window) has no gap: T_pace is then one full packet's
//!   serialisation time on the host link. A slot already in the past (an idle pacer, whose
//!   `policy_wakeup` would otherwise send at once, or a NIC running late) is first brought to
//!   now, so the push always delays the next transmission (ASSUMPTION: the spec leaves the
//!   idle case open).
//! - `"eligibility"` (spec's alternative): a NACKed packet may be resent only after a random
//!   delay U(0, base RTT) (the connection's base round trip); until then it is out of flight
//!   and new data may go. The mode's own timer releases it.
//! - `"none"`: plain [`sack`] (the regression baseline of spec §7 T9: "without desync,
//!   trimming runs can fail to finish").
//!
//! Where the resend goes is the second rule, `resend`:
//!
//! - `"next_slot"` (default): in the connection's next pacing slot, in place of new data, so
//!   the flow never offers more than its pacing rate. This is the paper's description of its
//!   loss recovery (§4, "Packet Trimming": "once loss is detected, this merely determines the
//!   next packet to be sent and does not change the rate").
//! - `"at_once"`: as soon as the NACK arrives (with `eligibility`, as soon as its delay ends),
//!   outside the pacing schedule, whose slots stay where they were: each resend is load on top
//!   of the pacing rate. The paper's explanation of Fig. 8 (§6.2: "as the rate increases, the
//!   overhead of queueing and sending the trimmed packets only makes the congestion worse")
//!   needs resends that add load; with `next_slot` they cannot (lb-ai-training RESULTS.md,
//!   T9's trimming investigation, measures both).
//!
//! Every draw comes from the connection's seeded random stream ([`SenderCtx::rng`]), so runs
//! repeat exactly. The pacing rate never changes (spec §2.3: detecting a loss never changes
//! it); `phase` moves the schedule, so each NACK costs the flow U(0, T_pace) of sending time.

use super::{sack, Actions, LossReport, ModeTimer, SenderCtx, SenderRecovery};
use crate::transport::cc::PathInfo;
use crate::transport::connection::SeqState;
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Registry name.
pub const NAME: &str = "trim";
/// Registry summary.
pub const SUMMARY: &str =
    "sack's NACK recovery (trimmed headers NACKed by the receiver or returned by the switch) + desync: each NACK pushes the pacing phase back U(0, gap), or delays the resend U(0, base RTT) (lb-ai-training LR-TRIM, LR-TRIM-RTS)";

/// The desynchronisation rule.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Desync {
    /// Push the next pacing slot back by U(0, T_pace) on each NACK or bounce.
    Phase,
    /// A NACKed packet becomes eligible for retransmission after U(0, base RTT).
    Eligibility,
    /// No desynchronisation (plain `sack`).
    None,
}

/// When a NACKed packet goes out again.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Resend {
    /// In the connection's next pacing slot, in place of new data.
    #[default]
    NextSlot,
    /// At once (after the eligibility delay, if any), outside the pacing schedule.
    AtOnce,
}

/// Parameters of `trim`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrimParams {
    /// The desynchronisation rule: `"phase"`, `"eligibility"` or `"none"`.
    pub desync: Desync,
    /// Where the resend goes: `"next_slot"` or `"at_once"`.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub resend: Resend,
}

impl Default for TrimParams {
    fn default() -> Self {
        //= spec lb-ai-training.md LR-TRIM (ASSUMPTION desync: push the pacing phase back)
        TrimParams { desync: Desync::Phase, resend: Resend::NextSlot }
    }
}

/// Sender half.
#[derive(Clone, Debug)]
pub struct Trim {
    desync: Desync,
    /// T_pace of a sender that does not pace: a full packet's serialisation time on the host
    /// link.
    host_gap: Time,
    /// Upper bound of the eligibility delay: the connection's base RTT.
    base_rtt: Time,
    /// `eligibility`: NACKed packets and the time each may be resent, earliest first.
    waiting: BinaryHeap<Reverse<(Time, u32)>>,
    /// The mode timer's schedule.
    wake: ModeTimer,
    resend: Resend,
    /// `at_once`: resends owed outside the pacing schedule ...
    owed: u32,
    /// ... and the schedule's next slot, restored after the last of them.
    schedule: Time,
}

impl Trim {
    /// A sender on a path with full-packet host serialisation time `host_gap` and base round
    /// trip `base_rtt`.
    pub fn new(p: &TrimParams, host_gap: Time, base_rtt: Time) -> Trim {
        Trim { desync: p.desync, host_gap, base_rtt, waiting: BinaryHeap::new(), wake: ModeTimer::default(), resend: p.resend, owed: 0, schedule: Time::ZERO }
    }

    /// `at_once`: lets one resend go now, ahead of the pacing schedule, which [`Trim::on_send`]
    /// puts back after it.
    fn resend_now(&mut self, ctx: &mut SenderCtx) {
        if self.resend != Resend::AtOnce {
            return;
        }
        if self.owed == 0 {
            self.schedule = *ctx.next_send;
        }
        self.owed += 1;
        *ctx.next_send = (*ctx.next_send).min(ctx.now);
    }

    /// The timer the mode needs: the earliest waiting packet's time, unless an event at or
    /// before it is already scheduled.
    fn arm(&mut self) -> Actions {
        Actions { timer: self.wake.arm(self.waiting.peek().map(|&Reverse((t, _))| t)), ..Actions::NONE }
    }
}

impl SenderRecovery for Trim {
    //= spec lb-ai-training.md LR-TRIM sender.on_nack / on_bounce
    fn on_nack(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        match self.desync {
            Desync::Eligibility => {
                //= spec lb-ai-training.md LR-TRIM (alternative desync: U(0, base_RTT) before
                //= a NACKed packet becomes eligible)
                let wire = ctx.write_off_if_current(nack.seq, nack.sent_at)?;
                let at = ctx.now + Time(ctx.rng.below(self.base_rtt.0));
                self.waiting.push(Reverse((at, nack.seq)));
                return Some(wire);
            }
            Desync::Phase => {
                // next_tick := next_tick + U(0, T_pace), on every NACK (stale ones too).
                let gap = ctx.pacing_gap().unwrap_or(self.host_gap);
                let push = ctx.rng.below(gap.0);
                // With resends owed ahead of the schedule, the schedule is the saved slot.
                let slot = if self.owed > 0 { &mut self.schedule } else { &mut *ctx.next_send };
                *slot = (*slot).max(ctx.now) + Time(push);
            }
            Desync::None => {}
        }
        let requeued = sack::Sack.on_nack(ctx, nack);
        if requeued.is_some() {
            self.resend_now(ctx);
        }
        requeued
    }

    fn after_loss_report(&mut self, _ctx: &mut SenderCtx) -> Actions {
        self.arm()
    }

    /// `at_once`: after a resend ahead of the schedule, the next one owed goes at once too
    /// (while resends are queued), and after the last the schedule's slot is back.
    fn on_send(&mut self, ctx: &mut SenderCtx, _seq: u32) -> Actions {
        if self.owed > 0 {
            self.owed -= 1;
            if self.owed > 0 && !ctx.retx.is_empty() {
                *ctx.next_send = ctx.now;
            } else {
                self.owed = 0;
                *ctx.next_send = self.schedule;
            }
        }
        Actions::NONE
    }

    /// Releases the packets whose delay is over into the retransmission queue.
    fn on_timer(&mut self, ctx: &mut SenderCtx) -> Actions {
        self.wake.fired(ctx.now);
        while let Some(&Reverse((t, seq))) = self.waiting.peek() {
            if t > ctx.now {
                break;
            }
            self.waiting.pop();
            // Skip packets acknowledged since (a late copy arrived) or already resent.
            if seq >= ctx.snd_una && ctx.slot(seq).state == SeqState::Lost {
                ctx.retx.push_back(seq);
                self.resend_now(ctx);
            }
        }
        self.arm()
    }

    fn own_timers(&self) -> Vec<String> {
        let mut lines = self.desync_timers();
        if self.resend == Resend::AtOnce {
            lines.push("a NACKed packet is resent as soon as it may be, outside the pacing schedule".to_string());
        }
        lines
    }
}

impl Trim {
    fn desync_timers(&self) -> Vec<String> {
        use crate::units::ShowTime;
        match self.desync {
            Desync::Eligibility => vec![format!("a NACKed packet waits U(0, {}) (the path's base RTT) before it may be resent", ShowTime(self.base_rtt))],
            Desync::Phase => vec![format!("each NACK pushes the next send back by U(0, pacing gap); {} when not pacing", ShowTime(self.host_gap))],
            Desync::None => Vec::new(),
        }
    }
}

impl crate::scheme::Scheme<PathInfo> for Trim {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["transport.cc=pacer", "switch.control_lane=\"shared\"", "switch.buffer_bdp=0.3"];
    type Params = TrimParams;
    fn build(p: &TrimParams, path: &mut PathInfo) -> Self {
        Trim::new(p, path.host_rate.tx_time(path.mtu_bytes), path.base_rtt)
    }
}

impl crate::scheme::Companion<PathInfo> for Trim {
    type Half = sack::SackRx;
    fn build_half(_p: &TrimParams) -> sack::SackRx {
        sack::SackRx
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{Board, MTU};
    use super::super::*;
    use super::*;
    use crate::rng::Rng;
    use crate::transport::cc::{pacer, AnyCc};

    const HOST_GAP: Time = Time(80);
    const BASE_RTT: Time = Time(10_000);

    fn trim(desync: Desync) -> Trim {
        Trim::new(&TrimParams { desync, resend: Resend::NextSlot }, HOST_GAP, BASE_RTT)
    }

    /// NACKs packet `seq` (sent at `seq`, the fixture's time) at `now` with `next_send` set
    /// before; returns `next_send` after.
    fn nack_moves_phase(m: &mut Trim, b: &mut Board, now: Time, next_send: Time, seq: u32) -> Time {
        b.conn.next_send = next_send;
        let _ = m.on_nack(&mut b.ctx(now), &LossReport { seq, sent_at: Time(seq as u64) });
        b.conn.next_send
    }

    //= type=test; LR-TRIM desync phase: next_tick + U(0, T_pace)
    #[test]
    fn phase_push_is_below_one_gap_and_spans_it() {
        // A window-based sender (the fixture's fixed window) has no pacing gap: T_pace is one
        // packet's host serialisation time.
        let mut m = trim(Desync::Phase);
        let mut b = Board::new(400, 1000);
        let (mut lo, mut hi) = (Time::MAX, Time::ZERO);
        for seq in 0..400 {
            let push = nack_moves_phase(&mut m, &mut b, Time(50), Time(100), seq) - Time(100);
            assert!(push < HOST_GAP, "push {push} >= T_pace {HOST_GAP}");
            (lo, hi) = (lo.min(push), hi.max(push));
        }
        assert!(lo < HOST_GAP / 10 && hi >= HOST_GAP * 9 / 10, "pushes span [{lo}, {hi}] of [0, {HOST_GAP})");
        // Every NACK still requeued its packet, as sack does.
        assert_eq!(b.lost(), (0..400).collect::<Vec<_>>());
        assert_eq!(b.conn.in_flight, 0);
        // A slot in the past (idle pacer, late NIC) is brought to now first.
        let mut b = Board::new(4, 10);
        let after = nack_moves_phase(&mut m, &mut b, Time(500), Time(100), 1);
        assert!((Time(500)..Time(500) + HOST_GAP).contains(&after), "{after}");
    }

    #[test]
    fn phase_gap_of_a_pacer_is_its_packet_gap() {
        // A pacer at 1000 bit/s: T_pace = MTU · 8 / 1000 s.
        let mut m = trim(Desync::Phase);
        let mut b = Board::new(300, 10);
        let path = PathInfo { mtu_bytes: Bytes(MTU), host_rate: crate::units::BitsPerSec(1000), base_rtt: Time(1), bdp_bytes: Bytes(MTU), hops: 2, net_base_rtt: Time(1), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 };
        b.conn.cc = AnyCc::Pacer(pacer::Pacer::new(&pacer::PacerParams::default(), &path));
        let gap = b.ctx(Time::ZERO).pacing_gap().unwrap();
        assert_eq!(gap, crate::units::BitsPerSec(1000).tx_time(Bytes(MTU)));
        let pushes: Vec<Time> = (0..300).map(|s| nack_moves_phase(&mut m, &mut b, Time::ZERO, Time(7), s) - Time(7)).collect();
        assert!(pushes.iter().all(|&p| p < gap));
        assert!(pushes.iter().any(|&p| p >= HOST_GAP), "the pacer's gap, not the host's, bounds the push");
    }

    //= type=test; LR-TRIM desync none: timing untouched (sack)
    #[test]
    fn none_leaves_timing_unchanged_and_matches_sack() {
        let mut m = trim(Desync::None);
        let mut b = Board::new(4, 10);
        let rng_before = format!("{:?}", b.conn.rng);
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(50), Time(100), 2), Time(100));
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(500), Time(100), 3), Time(100));
        assert_eq!(format!("{:?}", b.conn.rng), rng_before, "no random draw");
        assert_eq!(b.lost(), [2, 3]);
        assert_eq!(m.after_loss_report(&mut b.ctx(Time(500))), Actions::NONE);
        assert_eq!(m.next_to_send(&mut b.ctx(Time(500))), Some((2, true)));
        // A stale NACK (older transmission) is ignored, as in sack.
        assert_eq!(m.on_nack(&mut b.ctx(Time(500)), &LossReport { seq: 1, sent_at: Time::ZERO }), None);
    }

    //= type=test; LR-TRIM desync eligibility: resend after U(0, base_RTT)
    #[test]
    fn eligibility_delays_the_resend_below_one_base_rtt() {
        let mut m = trim(Desync::Eligibility);
        let mut b = Board::new(6, 10);
        let now = 1_000;
        assert_eq!(m.on_nack(&mut b.ctx(Time(now)), &LossReport { seq: 2, sent_at: Time(2) }), Some(MTU));
        // Out of flight, not yet eligible: new data goes first.
        assert_eq!(b.conn.board[2].state, SeqState::Lost);
        assert!(b.lost().is_empty());
        assert_eq!(m.next_to_send(&mut b.ctx(Time(now))), Some((6, false)));
        let at = m.after_loss_report(&mut b.ctx(Time(now))).timer.expect("a timer for the release");
        assert!((Time(now)..Time(now) + BASE_RTT).contains(&at), "eligible at {at}");
        // A second NACK eligible later needs no earlier timer.
        assert_eq!(m.on_nack(&mut b.ctx(Time(now)), &LossReport { seq: 4, sent_at: Time(4) }), Some(MTU));
        let a2 = m.after_loss_report(&mut b.ctx(Time(now)));
        let second = m.waiting.iter().map(|r| r.0).find(|&(_, s)| s == 4).unwrap().0;
        assert_eq!(a2.timer, (second < at).then_some(second));
        // Before its time nothing is released; at its time it is resent before new data.
        if at > Time(now) {
            let _ = m.on_timer(&mut b.ctx(at - Time(1)));
            assert!(!b.lost().contains(&2));
        }
        let again = m.on_timer(&mut b.ctx(at.max(second)));
        assert_eq!(again, Actions::NONE, "nothing left waiting");
        let mut lost = b.lost();
        lost.sort_unstable();
        assert_eq!(lost, [2, 4]);
        assert!(matches!(m.next_to_send(&mut b.ctx(at.max(second))), Some((2 | 4, true))));
        // Timing of the pacer is untouched.
        assert_eq!(b.conn.next_send, Time::ZERO);
    }

    #[test]
    fn eligibility_delays_span_the_base_rtt() {
        let mut m = trim(Desync::Eligibility);
        let mut b = Board::new(500, 1000);
        for seq in 0..500 {
            let _ = m.on_nack(&mut b.ctx(Time::ZERO), &LossReport { seq, sent_at: Time(seq as u64) });
        }
        let ts: Vec<Time> = m.waiting.iter().map(|r| r.0 .0).collect();
        assert!(ts.iter().all(|&t| t < BASE_RTT));
        assert!(*ts.iter().min().unwrap() < BASE_RTT / 10 && *ts.iter().max().unwrap() >= BASE_RTT * 9 / 10);
    }

    /// Sends the head of the retransmission queue at `now` as the glue does: the pacer's next
    /// slot becomes `now + gap`, then the mode hears of the send. Returns `next_send` after.
    fn resend_head(m: &mut Trim, b: &mut Board, now: Time, gap: Time) -> Time {
        let seq = b.conn.retx.pop_front().expect("a queued resend");
        b.conn.next_send = now + gap;
        let _ = m.on_send(&mut b.ctx(now), seq);
        b.conn.next_send
    }

    //= type=test; lb-ai-training §6.2 Fig. 8: resends that add load (`resend = "at_once"`)
    #[test]
    fn at_once_resends_ahead_of_the_schedule_and_puts_it_back() {
        let mut m = Trim::new(&TrimParams { desync: Desync::None, resend: Resend::AtOnce }, HOST_GAP, BASE_RTT);
        let mut b = Board::new(8, 100);
        // The schedule's next slot is at 5000; a NACK at 1000 lets the resend go now ...
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(1_000), Time(5_000), 2), Time(1_000));
        // ... and a second NACK before it went owes a second one.
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(1_000), Time(1_000), 3), Time(1_000));
        assert_eq!(b.lost(), [2, 3]);
        // The first resend leaves the second due at once; after the second, the slot at 5000
        // is back, where the pacer would have put 1000 + gap.
        assert_eq!(resend_head(&mut m, &mut b, Time(1_000), Time(300)), Time(1_000));
        assert_eq!(resend_head(&mut m, &mut b, Time(1_080), Time(300)), Time(5_000));
        // Nothing owed: an ordinary send keeps the pacer's slot.
        b.conn.retx.push_back(4);
        assert_eq!(resend_head(&mut m, &mut b, Time(5_000), Time(300)), Time(5_300));
        // `next_slot` (the default) never moves the schedule.
        let mut m = trim(Desync::None);
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(6_000), Time(9_000), 5), Time(9_000));
    }

    #[test]
    fn at_once_with_phase_pushes_the_saved_slot_and_with_eligibility_waits_first() {
        let mut m = Trim::new(&TrimParams { desync: Desync::Phase, resend: Resend::AtOnce }, HOST_GAP, BASE_RTT);
        let mut b = Board::new(8, 100);
        assert_eq!(nack_moves_phase(&mut m, &mut b, Time(1_000), Time(5_000), 2), Time(1_000));
        // The phase rule moved the schedule (the saved slot), not the resend.
        let back = resend_head(&mut m, &mut b, Time(1_000), Time(300));
        assert!((Time(5_000)..Time(5_000) + HOST_GAP).contains(&back), "{back}");
        let mut m = Trim::new(&TrimParams { desync: Desync::Eligibility, resend: Resend::AtOnce }, HOST_GAP, BASE_RTT);
        let mut b = Board::new(8, 100);
        b.conn.next_send = Time(50_000);
        let _ = m.on_nack(&mut b.ctx(Time(1_000)), &LossReport { seq: 2, sent_at: Time(2) });
        let at = m.after_loss_report(&mut b.ctx(Time(1_000))).timer.unwrap();
        assert_eq!(b.conn.next_send, Time(50_000), "not before its delay");
        let _ = m.on_timer(&mut b.ctx(at));
        assert_eq!((b.lost(), b.conn.next_send), (vec![2], at));
        assert_eq!(resend_head(&mut m, &mut b, at, Time(300)), Time(50_000));
    }

    #[test]
    fn draws_repeat_for_a_fixed_seed() {
        let run = |seed: u64| {
            let mut m = trim(Desync::Phase);
            let mut b = Board::new(50, 100);
            b.conn.rng = Rng::stream(seed, "conn", 3);
            (0..50).map(|s| nack_moves_phase(&mut m, &mut b, Time::ZERO, Time::ZERO, s)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
