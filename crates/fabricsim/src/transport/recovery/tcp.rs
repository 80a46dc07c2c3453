//! `tcp`: TCP-style loss recovery with the rate left alone (lb-ai-training spec §2.3 LR-TCP;
//! paper §4 "Loss Recovery Schemes: TCP (dupACKs and RTOs)", §6.1 on the dupACK threshold and
//! §6.2 on spurious retransmits and "TCP without fast recovery").
//!
//! Loss decisions use the cumulative ACK only (no SACK, as in htsim's TCP): the receiver keeps
//! out-of-order packets and ACKs with its cumulative point and an empty selective bitmap.
//! - **Fast retransmit**: the `d`-th duplicate ACK (same cumulative point, data outstanding,
//!   not in recovery) resends `snd_una` once and enters recovery until `recover` (the highest
//!   sequence sent then) is acknowledged; with `fast_retransmit = false` duplicate ACKs are
//!   ignored (the paper's "TCP without fast recovery", the spec's `d = ∞`).
//! - **NewReno partial ACKs**: in recovery, an ACK that advances `snd_una` but not past
//!   `recover` resends the new `snd_una` (the next hole).
//! - **RTO** (its own, on the mode timer; the shared `transport.rto_us` timer is off for this
//!   mode): `clamp(srtt + 4·rttvar, rto_min_us, rto_max_us)` from RFC 6298 estimators, 100 µs
//!   before the first sample (`rto_initial_us`, clamped too), doubled on each expiry up to
//!   `rto_max_us`, back to the estimate on every ACK of new data. Karn's rule: no RTT sample
//!   from an ACK triggered by a retransmission. On expiry: `recover_guard := snd_nxt` (no fast
//!   retransmit until `snd_una` passes it, RFC 3782 §11 style), then by default resend
//!   `snd_una` and enter recovery so later partial ACKs repair further holes
//!   (`on_rto = "recovery"`); or go back N (`on_rto = "go_back_n"`): every unacknowledged
//!   packet from `snd_una` on is resent. Each expiry counts as a timeout and reaches the
//!   congestion controller exactly as an expiry of the shared RTO would.
//! - **Under a congestion window** (Swift, say; the spec's pacer has none): an expiry that finds
//!   `snd_una`'s resend still queued behind a full window declares every packet in flight lost
//!   as well, so that the resend can leave (otherwise packets dropped in flight would hold the
//!   window for ever).
//!
//! Loss never changes the rate here: what reaches the congestion controller is what every
//! mode reports (ACKs, trimming NACKs, timeouts). Trimming NACKs keep the default behaviour
//! (resend the trimmed packet).
//!
//! TOML: `[transport.reliability] name = "tcp"`, `d = 3`, `fast_retransmit = true`,
//! `rto_min_us = 50`, `rto_max_us = 10000`, `rto_initial_us = 100`, `on_rto = "recovery"`.
//! `d = 0` and `rto_min_us > rto_max_us` are rejected with the key named.
//!
//! Deviations (spec vs paper: none found; these are ours): RTT samples come from every ACK
//! triggered by an original transmission (each ACK echoes its packet's send time, so samples
//! are unambiguous; Karn's rule still skips retransmissions); go-back-N skips packets the
//! scoreboard already knows arrived (each ACK acknowledges the packet that triggered it).

use super::{Actions, AckInfo, Arrival, Episode, Lost, ModeTimer, ReceiverRecovery, Reply, RxView, SenderCtx, SenderRecovery};
use crate::error::{Error, Result};
use crate::scheme::Limit;
use crate::transport::cc::PathInfo;
use crate::units::{us_to_ps, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "tcp";
/// Registry summary.
pub const SUMMARY: &str =
    "TCP loss recovery, rate untouched: dupACK fast retransmit, NewReno partial ACKs, own RTO with backoff and Karn's rule; cumulative ACKs only (lb-ai-training LR-TCP)";

/// What an RTO expiry resends.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnRto {
    /// `snd_una` only, entering recovery: partial ACKs repair the next holes (spec default).
    Recovery,
    /// Every unacknowledged packet from `snd_una` on (htsim / classic TCP).
    GoBackN,
}

/// Parameters of `tcp` (lb-ai-training spec LR-TCP table).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpParams {
    /// Duplicate-ACK threshold of fast retransmit (paper: 3).
    pub d: u32,
    /// React to duplicate ACKs at all; `false` is the spec's `d = ∞` ("TCP without fast
    /// recovery").
    pub fast_retransmit: bool,
    /// Lower clamp of the RTO, µs (spec ASSUMPTION: 50; sweep 25, 50, 100, 200).
    pub rto_min_us: f64,
    /// Upper clamp of the RTO and of its backoff, µs (spec ASSUMPTION: 10 ms).
    pub rto_max_us: f64,
    /// RTO before the first RTT sample, µs (spec ASSUMPTION: 100), clamped like the others.
    pub rto_initial_us: f64,
    /// What an expiry resends.
    pub on_rto: OnRto,
}

impl Default for TcpParams {
    fn default() -> Self {
        //= spec lb-ai-training.md LR-TCP parameters (d = 3, RTO 50 µs..10 ms, initial 100 µs)
        TcpParams { d: 3, fast_retransmit: true, rto_min_us: 50.0, rto_max_us: 10_000.0, rto_initial_us: 100.0, on_rto: OnRto::Recovery }
    }
}


/// One TCP sender's sequence space as the per-flow state machine ([`TcpFlow`]) sees it, in its
/// own numbering: the whole connection's for `tcp`, one subflow's for `subflow_tcp`.
pub(super) trait Seqs {
    /// Lowest unacknowledged sequence number.
    fn una(&self) -> u32;
    /// Next never-sent sequence number.
    fn nxt(&self) -> u32;
    /// Whether everything posted on it has been acknowledged.
    fn done(&self) -> bool;
    /// Declares its in-flight packets in `[from, end)` (clipped to `una..nxt`) lost and queues
    /// them for retransmission, oldest first.
    fn lose(&mut self, from: u32, end: u32) -> Lost;
    /// Whether the congestion window holds back the next full-sized packet (never for a
    /// window-less sender such as the fixed-rate pacer).
    fn window_full(&self) -> bool;
}

impl Seqs for SenderCtx<'_> {
    fn una(&self) -> u32 {
        self.snd_una
    }
    fn nxt(&self) -> u32 {
        self.next_seq
    }
    fn done(&self) -> bool {
        self.idle()
    }
    fn lose(&mut self, from: u32, end: u32) -> Lost {
        self.declare_lost_detail(from, end)
    }
    fn window_full(&self) -> bool {
        self.window_full()
    }
}

/// The LR-TCP state machine of one sequence space (a connection, or one subflow of
/// `subflow_tcp`): dupACK counter, NewReno recovery, RTT estimator and RTO deadline. The
/// owner keeps the mode timer's schedule ([`ModeTimer`]).
#[derive(Clone, Debug)]
pub(super) struct TcpFlow {
    /// Fast retransmits so far (recoveries entered on the `d`-th duplicate ACK).
    pub(super) fast_retransmits: u32,
    /// Duplicate-ACK threshold (`None` = never).
    d: Option<u32>,
    go_back_n: bool,
    rto_min: Time,
    rto_max: Time,
    /// Duplicate ACKs in a row.
    pub(super) dupacks: u32,
    pub(super) in_recovery: bool,
    /// Recovery ends when `snd_una` reaches this.
    pub(super) recover: u32,
    /// No fast retransmit below this (`snd_nxt` at the last RTO).
    recover_guard: u32,
    /// Smoothed RTT and its variation (`None` before the first sample).
    pub(super) srtt: Option<Time>,
    pub(super) rttvar: Time,
    /// RTO before backoff.
    base_rto: Time,
    /// Expiries since the last ACK of new data.
    pub(super) backoff: u32,
    /// When the RTO expires (`None` = stopped).
    pub(super) deadline: Option<Time>,
}

impl TcpFlow {
    /// A sender with nothing sent yet.
    pub(super) fn new(p: &TcpParams) -> TcpFlow {
        let (rto_min, rto_max) = (us_to_ps(p.rto_min_us), us_to_ps(p.rto_max_us));
        TcpFlow {
            d: p.fast_retransmit.then_some(p.d),
            go_back_n: p.on_rto == OnRto::GoBackN,
            rto_min,
            rto_max,
            fast_retransmits: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            recover_guard: 0,
            srtt: None,
            rttvar: Time::ZERO,
            base_rto: us_to_ps(p.rto_initial_us).clamp(rto_min, rto_max),
            backoff: 0,
            deadline: None,
        }
    }

    /// The RTO as `fabricsim check` shows it.
    pub(super) fn describe_rto(&self) -> String {
        use crate::units::ShowTime;
        let then = if self.go_back_n { "every unacknowledged packet resent" } else { "snd_una resent" };
        format!(
            "own RTO clamp(srtt + 4·rttvar, {}, {}); {} before the first RTT sample; doubled per expiry up to the maximum; {then}",
            ShowTime(self.rto_min),
            ShowTime(self.rto_max),
            ShowTime(self.base_rto)
        )
    }

    /// The current RTO: the estimate doubled per expiry since the last new ACK, at most
    /// `rto_max`.
    pub(super) fn rto(&self) -> Time {
        self.base_rto.saturating_mul(1 << self.backoff.min(40)).min(self.rto_max)
    }

    //= spec lb-ai-training.md LR-TCP RTO (clamp(srtt + 4·rttvar, RTO_min, RTO_max))
    /// RFC 6298 §2: first sample R: srtt = R, rttvar = R/2; then rttvar = ¾·rttvar + ¼·|srtt −
    /// R|, srtt = ⅞·srtt + ⅛·R.
    pub(super) fn sample(&mut self, r: Time) {
        let srtt = match self.srtt {
            None => {
                self.rttvar = r / 2;
                r
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                (7 * s + r) / 8
            }
        };
        self.srtt = Some(srtt);
        self.base_rto = (srtt + 4 * self.rttvar).clamp(self.rto_min, self.rto_max);
    }

    /// Runs the RTO from `now` (or stops it when nothing is outstanding).
    fn restart(&mut self, v: &impl Seqs, now: Time) {
        self.deadline = (v.una() < v.nxt()).then(|| now + self.rto());
    }

    /// Resends `snd_una` (if it is in flight).
    fn retransmit_una(v: &mut impl Seqs) -> Lost {
        let una = v.una();
        v.lose(una, una + 1)
    }

    /// Resends `snd_una` and enters recovery up to `snd_nxt`.
    fn enter_recovery(&mut self, v: &mut impl Seqs) -> Lost {
        self.in_recovery = true;
        self.recover = v.nxt();
        Self::retransmit_una(v)
    }

    //= spec lb-ai-training.md LR-TCP next_packet (arm RTO timer if not armed)
    /// A packet left: arms the RTO if it is stopped; returns whether it did.
    pub(super) fn on_send(&mut self, now: Time) -> bool {
        if self.deadline.is_some() {
            return false;
        }
        self.deadline = Some(now + self.rto());
        true
    }

    //= spec lb-ai-training.md LR-TCP sender.on_ack
    /// An ACK (no probe answer) arrived; `prev_una` is `snd_una` before it (`v.una()` after),
    /// `may_dup` whether it can count as a duplicate (its cumulative point is not stale).
    /// Returns whether the RTO was restarted.
    pub(super) fn on_ack(&mut self, v: &mut impl Seqs, now: Time, ack: &AckInfo, prev_una: u32, may_dup: bool) -> bool {
        if !ack.retransmitted && ack.seq != u32::MAX {
            // Karn's rule: only original transmissions give RTT samples.
            self.sample(ack.rtt);
        }
        let una = v.una();
        if una > prev_una {
            if self.in_recovery {
                if una >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // NewReno partial ACK: the next hole (`recover` stays).
                    Self::retransmit_una(v);
                }
            } else {
                self.dupacks = 0;
            }
            self.backoff = 0;
            self.restart(v, now);
            return true;
        }
        if may_dup && una < v.nxt() && !self.in_recovery {
            self.dupacks += 1;
            if Some(self.dupacks) == self.d && una >= self.recover_guard {
                self.enter_recovery(v);
                self.fast_retransmits += 1;
            }
        }
        false
    }

    //= spec lb-ai-training.md LR-TCP on RTO
    /// The mode timer fired at `now`: stops the RTO when everything is acknowledged, else
    /// expires it if due; returns what an expiry declared lost.
    pub(super) fn on_timer(&mut self, v: &mut impl Seqs, now: Time) -> Option<Lost> {
        if v.done() {
            self.deadline = None;
            return None;
        }
        if !matches!(self.deadline, Some(d) if d <= now) {
            return None;
        }
        self.backoff += 1;
        self.recover_guard = v.nxt();
        self.dupacks = 0;
        let lost = if self.go_back_n {
            self.in_recovery = false;
            v.lose(v.una(), u32::MAX)
        } else {
            match self.enter_recovery(v) {
                // `snd_una`'s resend is already queued, and a congestion window (Swift's, say)
                // is held by packets that were in flight when the timer expired: without more,
                // nothing could ever leave again. A timeout says they are gone (RFC 5681 §3.1:
                // after an RTO the sender starts again from one segment, and classic TCP goes
                // back N, as htsim's Swift does): declare them lost too. Never happens to a
                // window-less sender, so the spec's default is unchanged for the pacer.
                l if l.pkts == 0 && v.window_full() => v.lose(v.una(), u32::MAX),
                l => l,
            }
        };
        self.deadline = Some(now + self.rto());
        Some(lost)
    }
}

/// Ranges of LR-TCP's numeric parameters (also `subflow_tcp`'s).
pub(super) const TCP_LIMITS: [Limit; 4] =
    [Limit::new("d", 1.0, 1e6), Limit::new("rto_min_us", 0.001, 1e7), Limit::new("rto_max_us", 0.001, 1e7), Limit::new("rto_initial_us", 0.001, 1e7)];

/// Sender half: one [`TcpFlow`] over the whole connection.
#[derive(Clone, Debug)]
pub struct Tcp {
    flow: TcpFlow,
    /// Earliest mode-timer event scheduled and not yet fired.
    wake: ModeTimer,
}

impl Tcp {
    /// A sender with nothing sent yet.
    pub fn new(p: &TcpParams) -> Tcp {
        Tcp { flow: TcpFlow::new(p), wake: ModeTimer::default() }
    }

    /// The current RTO.
    pub fn rto(&self) -> Time {
        self.flow.rto()
    }
}

impl SenderRecovery for Tcp {
    fn on_send(&mut self, ctx: &mut SenderCtx, _seq: u32) -> Actions {
        if !self.flow.on_send(ctx.now) {
            return Actions::NONE;
        }
        Actions { timer: self.wake.arm(self.flow.deadline), ..Actions::NONE }
    }

    fn on_ack(&mut self, ctx: &mut SenderCtx, ack: &AckInfo) -> Actions {
        if ack.probe {
            return Actions::NONE;
        }
        // The glue acknowledged everything below the cumulative point, so `snd_una` moved iff
        // the cumulative point passed the old one; one below it is stale, no duplicate.
        let now = ctx.now;
        let fast = self.flow.fast_retransmits;
        let restarted = self.flow.on_ack(ctx, now, ack, ack.prev_una, ack.cum_ack == ack.prev_una);
        let episode = (self.flow.fast_retransmits > fast).then_some(Episode::FastRetransmit);
        let timer = if restarted { self.wake.arm(self.flow.deadline) } else { None };
        Actions { timer, episode, ..Actions::NONE }
    }

    fn on_timer(&mut self, ctx: &mut SenderCtx) -> Actions {
        self.wake.fired(ctx.now);
        let now = ctx.now;
        let lost = self.flow.on_timer(ctx, now);
        if self.flow.deadline.is_none() {
            return Actions::NONE;
        }
        let episode = lost.filter(|l| l.pkts > 0).map(Episode::Timeout);
        Actions { timer: self.wake.arm(self.flow.deadline), episode, ..Actions::NONE }
    }

    fn uses_shared_rto(&self) -> bool {
        false
    }

    fn own_timers(&self) -> Vec<String> {
        vec![self.flow.describe_rto()]
    }
}

/// Receiver half: keeps out-of-order data, ACKs by the common rules with the cumulative point
/// only (empty selective bitmap).
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpRx;

impl ReceiverRecovery for TcpRx {
    //= spec lb-ai-training.md LR-TCP receiver.on_data (send ACK(cum = rcv_nxt))
    fn on_data(&mut self, _rx: &RxView, a: &Arrival) -> Reply {
        if a.ack_due {
            // A bitmap base past every sequence number: no selective bits.
            Reply::Ack { sack_base: u32::MAX }
        } else {
            Reply::None
        }
    }
}

impl crate::scheme::Scheme<PathInfo> for Tcp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["switch.trimming=false", "switch.buffer_bdp=0.3"];
    type Params = TcpParams;
    const LIMITS: &'static [Limit] = &TCP_LIMITS;
    fn check(p: &TcpParams, key: &str) -> Result<()> {
        if p.rto_min_us > p.rto_max_us {
            return Err(Error::invalid(format!("{key}.rto_min_us"), format!("{} µs: above rto_max_us ({} µs)", p.rto_min_us, p.rto_max_us)));
        }
        Ok(())
    }
    fn build(p: &TcpParams, _path: &mut PathInfo) -> Self {
        Tcp::new(p)
    }
}

impl crate::scheme::Companion<PathInfo> for Tcp {
    type Half = TcpRx;
    fn build_half(_p: &TcpParams) -> TcpRx {
        TcpRx
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board};
    use super::super::*;
    use super::*;
    use crate::units::US;

    fn tcp(p: TcpParams) -> Tcp {
        Tcp::new(&p)
    }

    /// A duplicate ACK at cumulative point 0, triggered by packet `seq`.
    fn dup(seq: u32) -> AckInfo {
        AckInfo { prev_una: 0, cum_ack: 0, seq, rtt: 10 * US, ..AckInfo::default() }
    }

    //= type=test; LR-TCP: the d-th duplicate ACK resends snd_una once; d−1 do not; d = ∞ never
    #[test]
    fn dth_duplicate_ack_fast_retransmits_snd_una_once() {
        for d in [1, 3, 5] {
            let mut b = Board::new(20, 100);
            let mut m = tcp(TcpParams { d, ..TcpParams::default() });
            for i in 1..d {
                let _ = m.on_ack(&mut b.ctx(Time(100)), &dup(i));
                assert!(b.lost().is_empty(), "d = {d}: {i} duplicates");
            }
            let _ = m.on_ack(&mut b.ctx(Time(100)), &dup(d));
            assert_eq!(b.lost(), [0], "d = {d}");
            assert_eq!(m.next_to_send(&mut b.ctx(Time(100))), Some((0, true)));
            // More duplicates during recovery resend nothing more.
            for i in d + 1..d + 10 {
                let _ = m.on_ack(&mut b.ctx(Time(100)), &dup(i));
            }
            assert_eq!(b.lost(), [0]);
        }
        let mut b = Board::new(20, 100);
        let mut m = tcp(TcpParams { fast_retransmit: false, ..TcpParams::default() });
        for i in 1..20 {
            let _ = m.on_ack(&mut b.ctx(Time(100)), &dup(i));
        }
        assert!(b.lost().is_empty());
        // A stale ACK (cumulative point below snd_una) is no duplicate.
        let mut b = Board::new(20, 100);
        b.conn.board.pop_front();
        b.conn.snd_una = 1;
        let mut m = tcp(TcpParams { d: 1, ..TcpParams::default() });
        let _ = m.on_ack(&mut b.ctx(Time(100)), &AckInfo { prev_una: 1, ..dup(5) });
        assert!(b.lost().is_empty());
    }

    /// Acknowledges packets below `cum` as the glue would and returns the ACK the mode sees.
    fn ack_to(b: &mut Board, cum: u32, seq: u32) -> AckInfo {
        let prev = b.conn.snd_una;
        for s in prev..cum {
            let i = (s - prev) as usize;
            if b.conn.board[i].state == SeqState::InFlight {
                b.conn.in_flight -= MTU_BYTES;
            }
            b.conn.board[i].state = SeqState::Acked;
            b.conn.acked_pkts += 1;
        }
        b.conn.advance_una();
        AckInfo { prev_una: prev, cum_ack: cum, seq, rtt: 10 * US, ..AckInfo::default() }
    }

    const MTU_BYTES: u64 = super::super::testing::MTU;

    //= type=test; LR-TCP: NewReno partial ACK resends the next hole; full ACK ends recovery
    #[test]
    fn partial_ack_retransmits_the_next_hole() {
        let mut b = Board::new(10, 100);
        let mut m = tcp(TcpParams::default());
        for i in 1..=3 {
            let _ = m.on_ack(&mut b.ctx(Time(100)), &dup(i));
        }
        assert_eq!(b.lost(), [0]);
        b.conn.retx.clear();
        b.conn.board[0].state = SeqState::InFlight;
        b.conn.in_flight += MTU_BYTES;
        // The resent 0 arrives; 4 is the next hole: cumulative point 4 < recover (10).
        let a = ack_to(&mut b, 4, 0);
        // New data sent meanwhile (10..15) does not move `recover`.
        for _ in 0..5 {
            b.conn.board.push_back(Slot { state: SeqState::InFlight, wire: MTU_BYTES as u32, sent_at: Time(150), entropy: 0 });
        }
        b.conn.next_seq = 15;
        let _ = m.on_ack(&mut b.ctx(Time(200)), &a);
        assert_eq!(b.lost(), [4]);
        assert!(m.flow.in_recovery && m.flow.recover == 10);
        // An ACK at recover ends recovery; later duplicates count from zero again.
        let a = ack_to(&mut b, 10, 4);
        let _ = m.on_ack(&mut b.ctx(Time(300)), &a);
        assert!(!m.flow.in_recovery && m.flow.dupacks == 0);
        assert_eq!(b.lost(), [4], "a full ACK resends nothing");
    }

    //= type=test; LR-TCP RTO: clamp(srtt + 4·rttvar, min, max), ×2 backoff, reset on new ACK
    #[test]
    fn rto_follows_the_clamp_doubles_on_expiry_and_resets_on_new_ack() {
        let mut m = tcp(TcpParams::default());
        assert_eq!(m.flow.rto(), 100 * US);
        // First sample 8 µs: srtt 8, rttvar 4 → 24 µs, clamped up to 50.
        m.flow.sample(8 * US);
        assert_eq!((m.flow.srtt, m.flow.rttvar, m.flow.rto()), (Some(8 * US), 4 * US, 50 * US));
        // 40 µs: rttvar = (3·4 + 32)/4 = 11, srtt = (7·8 + 40)/8 = 12 → 12 + 44 = 56 µs.
        m.flow.sample(40 * US);
        assert_eq!((m.flow.srtt, m.flow.rttvar, m.flow.rto()), (Some(12 * US), 11 * US, 56 * US));
        // A huge sample is clamped at the maximum.
        let mut big = tcp(TcpParams::default());
        big.flow.sample(9_000 * US);
        assert_eq!(big.flow.rto(), 10_000 * US);
        // Expiries: 56 → 112 → 224 µs, at most rto_max; the first expiry resends snd_una.
        let mut b = Board::new(5, 100);
        let a = m.on_send(&mut b.ctx(Time::ZERO), 0);
        assert_eq!(a.timer, Some(56 * US));
        assert_eq!(m.on_timer(&mut b.ctx(30 * US)), Actions::NONE, "early events re-arm nothing new");
        let a = m.on_timer(&mut b.ctx(56 * US));
        assert_eq!(b.lost(), [0]);
        assert_eq!(a.episode, Some(Episode::Timeout(Lost { pkts: 1, bytes: Bytes(MTU_BYTES), latest_sent_at: Time::ZERO })));
        assert_eq!(a.timer, Some(56 * US + 112 * US));
        let a = m.on_timer(&mut b.ctx(168 * US));
        assert_eq!(a.timer, Some(168 * US + 224 * US));
        assert_eq!(a.episode, None, "snd_una is already queued: nothing new is lost");
        let mut small = tcp(TcpParams { rto_max_us: 150.0, ..TcpParams::default() });
        small.flow.backoff = 5;
        assert_eq!(small.flow.rto(), 150 * US);
        // A new ACK resets the backoff and restarts the timer from now with the estimate.
        let a = ack_to(&mut b, 1, 0);
        let act = m.on_ack(&mut b.ctx(400 * US), &AckInfo { retransmitted: true, ..a });
        assert_eq!(m.flow.backoff, 0);
        assert_eq!(m.flow.deadline, Some(456 * US));
        assert_eq!(act.timer, None, "the event at 392 µs re-arms for 456 µs when it fires");
        assert_eq!(m.on_timer(&mut b.ctx(392 * US)).timer, Some(456 * US));
        // Everything acknowledged: the timer stops.
        let a = ack_to(&mut b, 5, 4);
        let _ = m.on_ack(&mut b.ctx(500 * US), &a);
        assert_eq!(m.flow.deadline, None);
    }

    //= type=test; LR-TCP: Karn's rule — no RTT sample from a retransmission's ACK
    #[test]
    fn karns_rule_skips_samples_from_retransmissions() {
        let mut b = Board::new(5, 100);
        let mut m = tcp(TcpParams::default());
        let _ = m.on_ack(&mut b.ctx(Time(100)), &AckInfo { retransmitted: true, rtt: 30 * US, ..dup(1) });
        assert_eq!(m.flow.srtt, None);
        let _ = m.on_ack(&mut b.ctx(Time(100)), &AckInfo { rtt: 30 * US, ..dup(1) });
        assert_eq!(m.flow.srtt, Some(30 * US));
        // Probe answers are no samples either (and never duplicates).
        let _ = m.on_ack(&mut b.ctx(Time(100)), &AckInfo { probe: true, rtt: Time(1), ..dup(u32::MAX) });
        assert_eq!(m.flow.srtt, Some(30 * US));
    }

    #[test]
    fn rto_guard_and_go_back_n() {
        // Go-back-N resends every unacknowledged packet; no fast retransmit below the guard.
        let mut b = Board::new(6, 100);
        b.conn.board[2].state = SeqState::Acked;
        let mut m = tcp(TcpParams { on_rto: OnRto::GoBackN, d: 1, ..TcpParams::default() });
        let _ = m.on_send(&mut b.ctx(Time::ZERO), 5);
        let a = m.on_timer(&mut b.ctx(100 * US));
        assert_eq!(b.lost(), [0, 1, 3, 4, 5]);
        assert_eq!(a.episode.map(|e| matches!(e, Episode::Timeout(l) if l.pkts == 5)), Some(true));
        assert!(!m.flow.in_recovery);
        b.conn.retx.clear();
        for s in [0, 1] {
            b.conn.board[s].state = SeqState::InFlight;
        }
        let _ = m.on_ack(&mut b.ctx(101 * US), &dup(3));
        assert!(b.lost().is_empty(), "snd_una 0 is below the guard (6)");
    }

    //= type=test; LR-TCP RTO with a window: a resend held back by packets in flight at the expiry cannot hang the flow
    #[test]
    fn rto_frees_a_window_held_by_packets_in_flight_at_expiry() {
        // Packet 0 was declared lost and waits in the queue; 1 and 2 hold the 2-packet window,
        // so the resend cannot leave. The second expiry finds nothing new in flight at
        // `snd_una`: it declares 1 and 2 lost, which frees the window (a Swift run of the
        // lb-ai-training all-to-all hung this way, with one phantom packet in flight).
        let mut b = Board::new(3, 2);
        let mut m = tcp(TcpParams::default());
        let _ = m.on_send(&mut b.ctx(Time::ZERO), 2);
        let _ = m.on_timer(&mut b.ctx(100 * US));
        assert_eq!((b.lost(), b.conn.in_flight), (vec![0], 2 * MTU_BYTES));
        assert!(b.ctx(Time::ZERO).window_full());
        let a = m.on_timer(&mut b.ctx(300 * US));
        assert_eq!((b.lost(), b.conn.in_flight), (vec![0, 1, 2], 0));
        assert_eq!(a.episode, Some(Episode::Timeout(Lost { pkts: 2, bytes: Bytes(2 * MTU_BYTES), latest_sent_at: Time(2) })));
        // With room in the window (or no window at all) the default resends `snd_una` only.
        let mut b = Board::new(3, 100);
        let mut m = tcp(TcpParams::default());
        let _ = m.on_send(&mut b.ctx(Time::ZERO), 2);
        let _ = m.on_timer(&mut b.ctx(100 * US));
        let a = m.on_timer(&mut b.ctx(300 * US));
        assert!(!b.ctx(Time::ZERO).window_full());
        assert_eq!((b.lost(), a.episode), (vec![0], None));
    }

    #[test]
    fn rejects_bad_parameters_naming_the_key() {
        let key = "transport.reliability";
        let e = crate::scheme::validate_params(&TcpParams { d: 0, ..TcpParams::default() }, <Tcp as crate::scheme::Scheme<PathInfo>>::LIMITS, key).unwrap_err();
        assert!(e.to_string().contains("transport.reliability.d"), "{e}");
        let e = <Tcp as crate::scheme::Scheme<PathInfo>>::check(&TcpParams { rto_min_us: 200.0, rto_max_us: 100.0, ..TcpParams::default() }, key).unwrap_err();
        assert!(e.to_string().contains("transport.reliability.rto_min_us"), "{e}");
        // The initial RTO is clamped into the range.
        assert_eq!(tcp(TcpParams { rto_min_us: 200.0, ..TcpParams::default() }).rto(), 200 * US);
    }

    #[test]
    fn receiver_acks_the_cumulative_point_without_selective_bits() {
        let w = window(3, &[5]);
        let rx = RxView { cum: 3, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let a = Arrival { seq: 5, fresh: true, ce: false, cum_before: 3, ack_due: true };
        assert_eq!(TcpRx.on_data(&rx, &a), Reply::Ack { sack_base: u32::MAX });
        assert_eq!(TcpRx.on_data(&rx, &Arrival { ack_due: false, ..a }), Reply::None);
    }
}
