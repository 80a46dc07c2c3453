//! `subflow_tcp`: subflow TCP, the LB study's proposal (lb-ai-training spec §2.3 LR-SUBTCP;
//! paper §7 and Eq. 1): one connection whose packets are split into `S` subflows that are
//! units of accounting only. Each subflow is an LR-TCP sender of its own ([`super::tcp`]'s
//! per-flow state machine, shared, not copied): its own sequence space and cumulative point,
//! dupACK counter with threshold `d`, NewReno partial ACKs, RTT estimator and RTO with backoff
//! and Karn's rule. Packets are still sprayed per packet by the host path selector (`lb =
//! "spray"`). A slowly sending subflow spaces its packets far enough apart that spraying's
//! reordering cannot produce `d` dupACKs (Eq. 1, [`crate::transport::subflows`]).
//!
//! - **Split.** Each posted message of `n` packets is cut into `S` chunks of `⌈n/S⌉` packets
//!   (the last ones shorter or empty); subflow `i` gets the `i`-th chunk. A chunk is a number
//!   of packets, bound to sequence numbers when they are first sent: the glue sends new
//!   packets in sequence order only, so the `k`-th new packet a subflow sends is the next
//!   unsent one of the connection. Packets are interchangeable (all full-sized but a message's
//!   last), so this is the spec's contiguous chunk in every respect the simulation sees; the
//!   subflow's own sequence numbers (its sent packets in order) are contiguous.
//! - **Sending order.** Pacing slots of the connection's rate `r` go to the subflows round
//!   robin: subflow `i`'s `k`-th packet follows subflow `i−1`'s `k`-th, which equals `S`
//!   pacers at `r/S` with phase offsets `i·P/r` (spec ASSUMPTION). In its slot a subflow sends
//!   its oldest lost packet, else its next new one. A subflow with nothing to send (finished,
//!   or waiting for ACKs) lets its slot pass unused, one full-packet gap at `r`, once the
//!   slot's time has come (spec: "when a subflow finishes early its slots are not reused");
//!   `reuse_slots = true` gives the slot to the next subflow that has something. When no
//!   subflow has anything the connection idles like any paced one and resumes at `max(now,
//!   next slot)` with the subflow whose turn it was. Without a pacing rate (a window-based
//!   controller) slots cannot be timed: subflows then take turns as with `reuse_slots`.
//! - **ACKs.** The receiver is LR-TCP's (cumulative ACKs, no selective bits). An ACK counts
//!   for the subflow of the packet that triggered it; that subflow's cumulative point is its
//!   lowest packet the sender does not know arrived (every ACK acknowledges its own packet).
//!   It moved → new data (partial ACK in recovery, RTO restart); it did not, with data
//!   outstanding and the ACK not stale (its connection cumulative point not below the
//!   sender's) → a dupACK *of that subflow*. ACKs of other subflows never count.
//! - **RTO.** Each subflow's own deadline on the mode timer; subflows expiring at the same
//!   instant count as one timeout.
//!
//! TOML: `[transport.reliability] name = "subflow_tcp"`, `subflows = "auto"` (or an integer ≥ 1),
//! `reuse_slots = false`, and LR-TCP's `d = 3`, `fast_retransmit = true`, `rto_min_us = 50`,
//! `rto_max_us = 10000`, `rto_initial_us = 100`, `on_rto = "recovery"`. `subflows = "auto"` is
//! Eq. 1's `S = max(1, ⌊4·Q/(d·P·F)⌋ + 1)` with `Q` the switch ports' data buffer
//! ([`PathInfo::queue_bytes`]), `P` the full packet's wire bytes, `F` the source host's flows
//! ([`PathInfo::flows_per_host`]: the pacer's `flows_per_host`, else the workload's); S = 1
//! without fast retransmit. `subflows = 1` behaves exactly as `tcp`. `subflows = 0`, `d = 0`
//! and `rto_min_us > rto_max_us` are rejected with the key named.
//!
//! Deviations (ours; the paper gives no more detail): chunks bind to sequence numbers at
//! first transmission (above); the subflow's cumulative point is reconstructed at the sender
//! from the ACKs received, which equals the receiver's per-subflow point whenever ACKs arrive
//! in order (ACKs are sprayed too, so rarely not); a subflow waiting for its turn sends a
//! packet that became ready while it idled at its next slot, not at once (at most `S` slots,
//! the subflow's own pacing gap, later), so the connection never exceeds `r`. It assumes an
//! ACK per data packet (`transport.ack_every = 1`, the spec's): with coalesced ACKs the
//! sender learns of a packet's arrival only once the connection's cumulative point passes
//! it, and subflows stall into timeouts. Under a pacer not on a fixed schedule a long gap is
//! re-read from the rate by the glue, which may hand an unused slot's time back.

use super::tcp::{OnRto, Seqs, Tcp, TcpFlow, TcpParams, TcpRx, TCP_LIMITS};
use super::{Actions, AckInfo, Episode, LossReport, Lost, ModeTimer, SenderCtx, SenderRecovery};
use crate::error::Result;
use crate::scheme::Limit;
use crate::transport::cc::{CongestionControl, PathInfo};
use crate::transport::connection::SeqState;
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Registry name.
pub const NAME: &str = "subflow_tcp";
/// Registry summary.
pub const SUMMARY: &str =
    "subflow TCP: S subflows (Eq. 1 or set), each an LR-TCP sender (own cum. point, dupACKs, NewReno, RTO), round-robin pacing slots (lb-ai-training LR-SUBTCP)";

/// The word `"auto"`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AutoWord {
    /// Derive the value.
    Auto,
}

/// How many subflows: `"auto"` (Eq. 1) or a number.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum SubflowCount {
    /// Eq. 1 from the path ([`crate::transport::subflows::subflow_count`]).
    Auto(AutoWord),
    /// This many.
    Count(u32),
}

/// Largest subflow count (explicit or derived).
pub const MAX_SUBFLOWS: u32 = 65_536;

/// Parameters of `subflow_tcp`: LR-SUBTCP's plus LR-TCP's.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubflowTcpParams {
    /// S: `"auto"` (Eq. 1) or a number ≥ 1.
    pub subflows: SubflowCount,
    /// Give a slot its subflow cannot use to the next one that has something (spec option).
    pub reuse_slots: bool,
    /// Duplicate-ACK threshold of each subflow (paper: 3; also 6).
    pub d: u32,
    /// React to duplicate ACKs at all (`false`: the spec's `d = ∞`).
    pub fast_retransmit: bool,
    /// Lower clamp of each subflow's RTO, µs.
    pub rto_min_us: f64,
    /// Upper clamp of the RTO and its backoff, µs.
    pub rto_max_us: f64,
    /// RTO before a subflow's first RTT sample, µs.
    pub rto_initial_us: f64,
    /// What an expiry resends (of the expired subflow).
    pub on_rto: OnRto,
}

impl Default for SubflowTcpParams {
    fn default() -> Self {
        let t = TcpParams::default();
        //= spec lb-ai-training.md LR-SUBTCP (d = 3 with its Eq. 1 S; slots not reused)
        SubflowTcpParams {
            subflows: SubflowCount::Auto(AutoWord::Auto),
            reuse_slots: false,
            d: t.d,
            fast_retransmit: t.fast_retransmit,
            rto_min_us: t.rto_min_us,
            rto_max_us: t.rto_max_us,
            rto_initial_us: t.rto_initial_us,
            on_rto: t.on_rto,
        }
    }
}

impl SubflowTcpParams {
    /// Each subflow's LR-TCP parameters.
    pub fn tcp(&self) -> TcpParams {
        TcpParams { d: self.d, fast_retransmit: self.fast_retransmit, rto_min_us: self.rto_min_us, rto_max_us: self.rto_max_us, rto_initial_us: self.rto_initial_us, on_rto: self.on_rto }
    }

    /// S for a connection on `path`.
    pub fn subflows_on(&self, path: &PathInfo) -> u32 {
        match self.subflows {
            SubflowCount::Count(s) => s.clamp(1, MAX_SUBFLOWS),
            // d = ∞ (no fast retransmit): reordering can trigger nothing, one subflow.
            SubflowCount::Auto(_) if !self.fast_retransmit => 1,
            //= spec lb-ai-training.md LR-SUBTCP Eq. 1 (S = max(1, floor(4Q/(dPF)) + 1))
            SubflowCount::Auto(_) => crate::transport::subflows::subflow_count(NAME, path.queue_bytes.0, path.mtu_bytes.0, self.d, path.flows_per_host.max(1))
                .unwrap_or(1)
                .min(MAX_SUBFLOWS),
        }
    }
}

/// One subflow: its LR-TCP state, its sent packets and its unsent share.
#[derive(Clone, Debug)]
struct Sub {
    flow: TcpFlow,
    /// Own sequence number of `sent.front()`: the subflow's cumulative point.
    una: u32,
    /// Connection sequence numbers of its sent, not yet known acknowledged packets, from `una`.
    sent: VecDeque<u32>,
    /// Packets posted to it and never sent.
    quota: u32,
}

impl Sub {
    /// Moves the cumulative point past packets known to have arrived.
    fn advance(&mut self, ctx: &SenderCtx) {
        while let Some(&g) = self.sent.front() {
            if g >= ctx.snd_una && ctx.slot(g).state != SeqState::Acked {
                break;
            }
            self.sent.pop_front();
            self.una += 1;
        }
    }
}

/// A subflow's sequence space as [`TcpFlow`] sees it.
struct SubView<'s, 'c> {
    ctx: &'s mut SenderCtx<'c>,
    una: u32,
    sent: &'s VecDeque<u32>,
    quota: u32,
}

impl Seqs for SubView<'_, '_> {
    fn una(&self) -> u32 {
        self.una
    }
    fn nxt(&self) -> u32 {
        self.una + self.sent.len() as u32
    }
    fn done(&self) -> bool {
        self.sent.is_empty() && self.quota == 0
    }
    fn lose(&mut self, from: u32, end: u32) -> Lost {
        let (from, end) = (from.max(self.una), end.min(self.nxt()));
        let mut lost = Lost::default();
        for own in from..end {
            let g = self.sent[(own - self.una) as usize];
            let l = self.ctx.declare_lost_detail(g, g + 1);
            lost.pkts += l.pkts;
            lost.bytes += l.bytes;
            lost.latest_sent_at = lost.latest_sent_at.max(l.latest_sent_at);
        }
        lost
    }
    fn window_full(&self) -> bool {
        self.ctx.window_full()
    }
}

/// The packet the last [`SenderRecovery::next_to_send`] chose.
#[derive(Clone, Copy, Debug)]
struct Pick {
    seq: u32,
    retx: bool,
    sub: u32,
}

/// Sender half.
#[derive(Clone, Debug)]
pub struct SubflowTcp {
    subs: Vec<Sub>,
    reuse_slots: bool,
    /// Subflow whose pacing slot is next.
    turn: u32,
    /// Subflow of every packet sent so far, by sequence number.
    owner: Vec<u32>,
    /// Posted packets already shared out among the subflows.
    posted_end: u32,
    /// Last choice, committed once the glue sent it.
    pick: Option<Pick>,
    /// Earliest mode-timer event scheduled and not yet fired.
    wake: ModeTimer,
}

impl SubflowTcp {
    /// A sender of `s` subflows with nothing posted yet.
    pub fn new(p: &SubflowTcpParams, s: u32) -> SubflowTcp {
        let tcp = p.tcp();
        let sub = Sub { flow: TcpFlow::new(&tcp), una: 0, sent: VecDeque::new(), quota: 0 };
        SubflowTcp { subs: vec![sub; s.max(1) as usize], reuse_slots: p.reuse_slots, turn: 0, owner: Vec::new(), posted_end: 0, pick: None, wake: ModeTimer::default() }
    }

    /// Number of subflows.
    pub fn subflows(&self) -> u32 {
        self.subs.len() as u32
    }

    /// The subflow packet `seq` was sent on, if it was sent.
    pub fn subflow_of(&self, seq: u32) -> Option<u32> {
        self.owner.get(seq as usize).copied()
    }

    //= spec lb-ai-training.md LR-SUBTCP ASSUMPTION (S contiguous chunks of ceil(M_pkts/S))
    /// Shares newly posted messages out: `⌈n/S⌉` packets per subflow, the last ones fewer.
    fn sync(&mut self, ctx: &SenderCtx) {
        if ctx.n_pkts == self.posted_end {
            return;
        }
        let s = self.subs.len() as u32;
        for m in ctx.msgs.iter() {
            if m.end_pkt <= self.posted_end {
                continue;
            }
            let n = m.end_pkt - m.first_pkt.max(self.posted_end);
            let chunk = n.div_ceil(s);
            for (i, sub) in self.subs.iter_mut().enumerate() {
                sub.quota += chunk.min(n.saturating_sub(i as u32 * chunk));
            }
            self.posted_end = m.end_pkt;
        }
    }

    /// Commits the last choice if the glue sent it: the new packet joins its subflow, and the
    /// next slot is the next subflow's.
    fn settle(&mut self, ctx: &SenderCtx) {
        let Some(p) = self.pick else { return };
        let sent = if p.retx {
            p.seq >= ctx.snd_una && p.seq < ctx.next_seq && {
                let s = ctx.slot(p.seq);
                s.state == SeqState::InFlight && s.sent_at == ctx.now
            }
        } else {
            ctx.next_seq > p.seq
        };
        if !sent {
            return;
        }
        self.pick = None;
        if !p.retx {
            debug_assert_eq!(p.seq as usize, self.owner.len());
            self.owner.push(p.sub);
            let sub = &mut self.subs[p.sub as usize];
            sub.sent.push_back(p.seq);
            sub.quota -= 1;
        }
        self.turn = (p.sub + 1) % self.subs.len() as u32;
    }

    /// Whether a retransmission-queue entry is still wanted.
    fn live_lost(ctx: &SenderCtx, g: u32) -> bool {
        g >= ctx.snd_una && g < ctx.next_seq && ctx.slot(g).state == SeqState::Lost
    }

    /// Position in the retransmission queue of subflow `i`'s oldest lost packet.
    fn lost_of(&self, ctx: &SenderCtx, i: u32) -> Option<usize> {
        ctx.retx.iter().position(|&g| self.subflow_of(g) == Some(i) && Self::live_lost(ctx, g))
    }

    /// What subflow `i` would send in its slot: its oldest lost packet (moved to the front of
    /// the retransmission queue, where the glue takes it from), else its next new one.
    fn candidate(&self, ctx: &mut SenderCtx, i: u32) -> Option<(u32, bool)> {
        if let Some(k) = self.lost_of(ctx, i) {
            let g = ctx.retx.remove(k).expect("position found");
            ctx.retx.push_front(g);
            return Some((g, true));
        }
        (self.subs[i as usize].quota > 0 && ctx.next_seq < ctx.n_pkts).then_some((ctx.next_seq, false))
    }

    /// Whether subflow `i` has something to send.
    fn ready(&self, ctx: &SenderCtx, i: u32) -> bool {
        self.subs[i as usize].quota > 0 || self.lost_of(ctx, i).is_some()
    }

    /// The hooks' common start: share out new messages, commit a sent choice.
    fn catch_up(&mut self, ctx: &SenderCtx) {
        self.sync(ctx);
        self.settle(ctx);
    }

    /// A view of subflow `i` and its state machine.
    fn view<'s, 'c>(sub: &'s mut Sub, ctx: &'s mut SenderCtx<'c>) -> (&'s mut TcpFlow, SubView<'s, 'c>) {
        let Sub { flow, una, sent, quota } = sub;
        (flow, SubView { ctx, una: *una, sent, quota: *quota })
    }
}

impl SenderRecovery for SubflowTcp {
    //= spec lb-ai-training.md LR-SUBTCP ASSUMPTION (S pacers at r/S, phase offsets i·P/r; slots not reused)
    fn next_to_send(&mut self, ctx: &mut SenderCtx) -> Option<(u32, bool)> {
        self.catch_up(ctx);
        while let Some(&g) = ctx.retx.front() {
            if Self::live_lost(ctx, g) {
                break;
            }
            ctx.retx.pop_front();
        }
        let s = self.subs.len() as u32;
        let first = (0..s).map(|k| (self.turn + k) % s).find(|&i| self.ready(ctx, i))?;
        // A slot passes unused once its time has come: one full-packet gap at r.
        let gap = if self.reuse_slots { None } else { ctx.cc.pacing_rate().map(|r| r.tx_time(Bytes(ctx.mtu))) };
        if let Some(gap) = gap {
            while self.turn != first && *ctx.next_send <= ctx.now {
                self.turn = (self.turn + 1) % s;
                *ctx.next_send += gap;
            }
            if self.ready(ctx, self.turn) {
                let (seq, retx) = self.candidate(ctx, self.turn)?;
                self.pick = Some(Pick { seq, retx, sub: self.turn });
                return Some((seq, retx));
            }
        }
        // The slot is still ahead (this answer only sizes the packet while the connection
        // waits for it), or slots are reused: the first subflow that has something.
        let (seq, retx) = self.candidate(ctx, first)?;
        self.pick = Some(Pick { seq, retx, sub: first });
        Some((seq, retx))
    }

    fn on_send(&mut self, ctx: &mut SenderCtx, seq: u32) -> Actions {
        self.catch_up(ctx);
        let Some(i) = self.subflow_of(seq) else { return Actions::NONE };
        let flow = &mut self.subs[i as usize].flow;
        if !flow.on_send(ctx.now) {
            return Actions::NONE;
        }
        Actions { timer: self.wake.arm(flow.deadline), ..Actions::NONE }
    }

    //= spec lb-ai-training.md LR-SUBTCP (each subflow: own cumulative ACKs, dupACK counter and RTO, as LR-TCP)
    fn on_ack(&mut self, ctx: &mut SenderCtx, ack: &AckInfo) -> Actions {
        if ack.probe {
            return Actions::NONE;
        }
        self.catch_up(ctx);
        let Some(i) = self.subflow_of(ack.seq) else { return Actions::NONE };
        let now = ctx.now;
        let sub = &mut self.subs[i as usize];
        let prev = sub.una;
        sub.advance(ctx);
        let (flow, mut v) = Self::view(sub, ctx);
        // An ACK whose connection cumulative point is below the sender's is stale (overtaken):
        // no duplicate, as in `tcp`.
        let fast = flow.fast_retransmits;
        let restarted = flow.on_ack(&mut v, now, ack, prev, ack.cum_ack >= ack.prev_una);
        let episode = (flow.fast_retransmits > fast).then_some(Episode::FastRetransmit);
        let timer = if restarted { self.wake.arm(flow.deadline) } else { None };
        Actions { timer, episode, ..Actions::NONE }
    }

    fn on_nack(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        self.catch_up(ctx);
        ctx.requeue_if_current(nack.seq, nack.sent_at)
    }

    fn on_timer(&mut self, ctx: &mut SenderCtx) -> Actions {
        self.wake.fired(ctx.now);
        self.catch_up(ctx);
        let now = ctx.now;
        let mut lost = Lost::default();
        let mut next: Option<Time> = None;
        for sub in &mut self.subs {
            sub.advance(ctx);
            let (flow, mut v) = Self::view(sub, ctx);
            if let Some(l) = flow.on_timer(&mut v, now) {
                lost.pkts += l.pkts;
                lost.bytes += l.bytes;
                lost.latest_sent_at = lost.latest_sent_at.max(l.latest_sent_at);
            }
            next = match (next, flow.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if next.is_none() {
            return Actions::NONE;
        }
        let episode = (lost.pkts > 0).then_some(Episode::Timeout(lost));
        Actions { timer: self.wake.arm(next), episode, ..Actions::NONE }
    }

    fn uses_shared_rto(&self) -> bool {
        false
    }

    fn own_timers(&self) -> Vec<String> {
        let rto = self.subs.first().map_or_else(String::new, |s| s.flow.describe_rto());
        let n = self.subs.len();
        vec![format!("{n} subflow{}, each with its {rto}", if n == 1 { "" } else { "s" })]
    }
}

impl crate::scheme::Scheme<PathInfo> for SubflowTcp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["switch.trimming=false", "switch.buffer_bdp=0.3"];
    type Params = SubflowTcpParams;
    const LIMITS: &'static [Limit] = &[Limit::new("subflows", 1.0, MAX_SUBFLOWS as f64), TCP_LIMITS[0], TCP_LIMITS[1], TCP_LIMITS[2], TCP_LIMITS[3]];
    fn check(p: &SubflowTcpParams, key: &str) -> Result<()> {
        <Tcp as crate::scheme::Scheme<PathInfo>>::check(&p.tcp(), key)
    }
    fn build(p: &SubflowTcpParams, path: &mut PathInfo) -> Self {
        SubflowTcp::new(p, p.subflows_on(path))
    }
}

impl crate::scheme::Companion<PathInfo> for SubflowTcp {
    type Half = TcpRx;
    fn build_half(_p: &SubflowTcpParams) -> TcpRx {
        TcpRx
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{Board, MTU};
    use super::super::*;
    use super::*;
    use crate::transport::cc::{pacer, AnyCc};
    use crate::transport::connection::Slot;
    use crate::units::{BitsPerSec, US};

    /// A board with nothing sent and one message of `n` packets posted.
    fn posted(n: u32) -> Board {
        let mut b = Board::new(0, 1000);
        b.conn.msgs.clear();
        (b.conn.n_pkts, b.conn.size) = (0, 0);
        b.conn.post(0, n as u64 * MTU, MTU as u32, Time::ZERO);
        b
    }

    fn sub(s: u32, p: SubflowTcpParams) -> SubflowTcp {
        SubflowTcp::new(&p, s)
    }

    /// Sends what the mode picks at `now` as the glue would; returns it.
    fn send(b: &mut Board, m: &mut impl SenderRecovery, now: Time) -> (u32, bool) {
        let (seq, retx) = m.next_to_send(&mut b.ctx(now)).expect("something to send");
        let slot = Slot { state: SeqState::InFlight, wire: MTU as u32, sent_at: now, entropy: 0 };
        if retx {
            assert_eq!(b.conn.retx.pop_front(), Some(seq), "the pick is at the queue's front");
            *b.conn.slot(seq) = slot;
        } else {
            assert_eq!(seq, b.conn.next_seq);
            b.conn.board.push_back(slot);
            b.conn.next_seq += 1;
        }
        b.conn.in_flight += MTU;
        let _ = m.on_send(&mut b.ctx(now), seq);
        (seq, retx)
    }

    /// The receiver's ACK of `seq` with cumulative point `cum`, applied as the glue would.
    fn ack(b: &mut Board, m: &mut impl SenderRecovery, now: Time, seq: u32, cum: u32) -> Actions {
        let prev = b.conn.snd_una;
        for s in (prev..cum).chain([seq]) {
            if s < b.conn.snd_una {
                continue;
            }
            let slot = b.conn.slot(s);
            if slot.state == SeqState::Acked {
                continue;
            }
            if slot.state == SeqState::InFlight {
                b.conn.in_flight -= MTU;
            }
            b.conn.slot(s).state = SeqState::Acked;
            b.conn.acked_pkts += 1;
        }
        b.conn.advance_una();
        let info = AckInfo { prev_una: prev, cum_ack: cum, seq, rtt: 10 * US, ..AckInfo::default() };
        m.on_ack(&mut b.ctx(now), &info)
    }

    //= type=test; LR-SUBTCP Eq. 1: auto S = 11 (Q = 32 KiB, P = 4 KiB, F = 1, d = 3), 6 for d = 6
    #[test]
    fn auto_subflow_count_is_eq_1_of_the_path() {
        let path = PathInfo { mtu_bytes: Bytes(4096), host_rate: BitsPerSec(1), base_rtt: Time(1), bdp_bytes: Bytes(1), hops: 6, net_base_rtt: Time(1), src_conns: 1, queue_bytes: Bytes(32 << 10), flows_per_host: 1 };
        let p = SubflowTcpParams::default();
        assert_eq!(p.subflows_on(&path), 11);
        assert_eq!(SubflowTcpParams { d: 6, ..p.clone() }.subflows_on(&path), 6);
        assert_eq!(p.subflows_on(&PathInfo { flows_per_host: 11, ..path }), 1);
        assert_eq!(SubflowTcpParams { fast_retransmit: false, ..p.clone() }.subflows_on(&path), 1);
        assert_eq!(SubflowTcpParams { subflows: SubflowCount::Count(4), ..p }.subflows_on(&path), 4);
    }

    //= type=test; LR-SUBTCP split: S chunks of ceil(n/S), sent interleaved round robin
    #[test]
    fn a_message_is_shared_in_chunks_and_sent_round_robin() {
        // 10 packets, S = 3: chunks of 4, 4, 2; slots taken in turn, reused by the window-based
        // fixture (no pacing rate to time an unused slot by).
        let mut b = posted(10);
        let mut m = sub(3, SubflowTcpParams::default());
        let seqs: Vec<u32> = (0..10).map(|_| send(&mut b, &mut m, Time::ZERO).0).collect();
        assert_eq!(seqs, (0..10).collect::<Vec<_>>());
        let owners: Vec<u32> = (0..10).map(|s| m.subflow_of(s).unwrap()).collect();
        assert_eq!(owners, [0, 1, 2, 0, 1, 2, 0, 1, 0, 1]);
        assert_eq!(m.subs.iter().map(|s| s.sent.len()).collect::<Vec<_>>(), [4, 4, 2]);
        assert!(m.next_to_send(&mut b.ctx(Time::ZERO)).is_none());
        // A second message is shared out again: 3 packets, chunks of 1.
        b.conn.post(1, 3 * MTU, MTU as u32, Time::ZERO);
        let more: Vec<u32> = (0..3).map(|_| send(&mut b, &mut m, Time::ZERO).0).collect();
        assert_eq!(more, [10, 11, 12]);
        assert_eq!(m.subs.iter().map(|s| s.sent.len()).collect::<Vec<_>>(), [5, 5, 3]);
    }

    /// Sends all of `b`'s posted packets as a scheduled pacer would (slot after slot, the gap of
    /// the packet sent); returns each packet's send time in gaps.
    fn paced_times(reuse_slots: bool) -> Vec<(u64, u32)> {
        let mut b = posted(10);
        let path = PathInfo { mtu_bytes: Bytes(MTU), host_rate: BitsPerSec::from_gbps(1.0), base_rtt: Time(1), bdp_bytes: Bytes(1), hops: 2, net_base_rtt: Time(1), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 };
        b.conn.cc = AnyCc::Pacer(pacer::Pacer::new(&pacer::PacerParams { start_jitter: false, ..Default::default() }, &path));
        let gap = BitsPerSec::from_gbps(1.0).tx_time(Bytes(MTU));
        let mut m = sub(3, SubflowTcpParams { reuse_slots, ..SubflowTcpParams::default() });
        let mut out = Vec::new();
        while b.conn.next_seq < 10 {
            let mut now = b.conn.next_send;
            // The pick may move the pacer past unused slots: the glue then waits for them.
            let _ = m.next_to_send(&mut b.ctx(now));
            now = now.max(b.conn.next_send);
            let (seq, _) = send(&mut b, &mut m, now);
            b.conn.next_send = now + gap;
            out.push((now / gap, m.subflow_of(seq).unwrap()));
        }
        out
    }

    //= type=test; LR-SUBTCP: S pacers at r/S with phase offsets; a finished subflow's slots pass unused
    #[test]
    fn unused_slots_pass_unless_reused() {
        // Chunks 4, 4, 2: subflow 2 has nothing from its third slot on (slots 8 and 11).
        let t = paced_times(false);
        assert_eq!(t, [(0, 0), (1, 1), (2, 2), (3, 0), (4, 1), (5, 2), (6, 0), (7, 1), (9, 0), (10, 1)]);
        let t = paced_times(true);
        assert_eq!(t.iter().map(|x| x.0).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        assert_eq!(t.iter().map(|x| x.1).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2, 0, 1, 0, 1]);
    }

    //= type=test; LR-SUBTCP: a hole is fast-retransmitted after d dupACKs of its own subflow only
    #[test]
    fn only_dupacks_of_the_holes_subflow_count() {
        // S = 2 over 20 packets: subflow 0 sent the even ones, subflow 1 the odd ones. Packet 1
        // (subflow 1's first) is lost; the receiver's cumulative point stays at 1.
        let mut b = posted(20);
        let mut m = sub(2, SubflowTcpParams::default());
        for _ in 0..20 {
            send(&mut b, &mut m, Time::ZERO);
        }
        let _ = ack(&mut b, &mut m, Time(10), 0, 1);
        // Subflow 0's packets keep arriving: new data for subflow 0, no duplicate for anyone
        // (plain `tcp` would count every one of them: see below).
        for s in [2, 4, 6, 8, 10] {
            let _ = ack(&mut b, &mut m, Time(10), s, 1);
        }
        assert!(b.lost().is_empty());
        assert_eq!(m.subs[0].una, 6, "subflow 0 has its first 6 packets acknowledged");
        // Subflow 1's own: the third duplicate resends packet 1, once.
        let _ = ack(&mut b, &mut m, Time(20), 3, 1);
        let _ = ack(&mut b, &mut m, Time(20), 5, 1);
        assert!(b.lost().is_empty());
        let _ = ack(&mut b, &mut m, Time(20), 7, 1);
        assert_eq!(b.lost(), [1]);
        assert!(m.subs[1].flow.in_recovery && !m.subs[0].flow.in_recovery);
        let _ = ack(&mut b, &mut m, Time(20), 9, 1);
        assert_eq!(b.lost(), [1]);
        assert_eq!(m.next_to_send(&mut b.ctx(Time(21))), Some((1, true)));

        // The same arrivals under `tcp`: the ACKs of 2, 4 and 6 are its 3 duplicates.
        let mut b = posted(20);
        let mut t = Tcp::new(&TcpParams::default());
        for _ in 0..20 {
            send(&mut b, &mut t, Time::ZERO);
        }
        let mut seen = Vec::new();
        for (s, cum) in [(0, 1), (2, 1), (4, 1), (6, 1)] {
            let _ = ack(&mut b, &mut t, Time(10), s, cum);
            seen.push(b.lost().len());
        }
        assert_eq!(seen, [0, 0, 0, 1]);
    }

    //= type=test; LR-SUBTCP: each subflow runs its own RTO
    #[test]
    fn each_subflow_times_out_on_its_own() {
        // S = 2 over 4 packets sent at 0 (subflow 0: 0, 2; subflow 1: 1, 3); packet 1 is lost.
        let mut b = posted(4);
        let mut m = sub(2, SubflowTcpParams::default());
        for _ in 0..4 {
            send(&mut b, &mut m, Time::ZERO);
        }
        assert_eq!(m.subs.iter().map(|s| s.flow.deadline).collect::<Vec<_>>(), [Some(100 * US), Some(100 * US)]);
        // Subflow 0 completes at 20 µs: its timer stops; subflow 1 sees one duplicate.
        let a = ack(&mut b, &mut m, 10 * US, 0, 1);
        assert_eq!(a.timer, Some(60 * US), "10 µs sample: RTO clamped to 50 µs, from 10 µs");
        let _ = ack(&mut b, &mut m, 20 * US, 2, 1);
        let _ = ack(&mut b, &mut m, 25 * US, 3, 1);
        assert_eq!(m.subs[0].flow.deadline, None);
        assert_eq!(m.subs[1].flow.deadline, Some(100 * US));
        // The event at 60 µs finds nothing due and re-arms for subflow 1's deadline.
        let a = m.on_timer(&mut b.ctx(60 * US));
        assert_eq!((a.timer, a.episode), (Some(100 * US), None));
        assert!(b.lost().is_empty());
        // At 100 µs subflow 1 expires: its snd_una (packet 1) is resent, its RTO doubles.
        let a = m.on_timer(&mut b.ctx(100 * US));
        assert_eq!(b.lost(), [1]);
        assert_eq!(a.episode, Some(Episode::Timeout(Lost { pkts: 1, bytes: Bytes(MTU), latest_sent_at: Time::ZERO })));
        // Its estimate is its own (one 10 µs sample, from the ACK of packet 3: 50 µs after the
        // clamp), doubled once: the next expiry is 100 µs later. Subflow 0 is untouched.
        assert_eq!((m.subs[1].flow.srtt, m.subs[1].flow.backoff), (Some(10 * US), 1));
        assert_eq!(a.timer, Some(200 * US));
        assert_eq!((m.subs[0].flow.backoff, m.subs[0].flow.deadline), (0, None));
    }

    #[test]
    fn rejects_bad_parameters_naming_the_key() {
        use crate::scheme::Scheme;
        let key = "transport.reliability";
        let bad = [
            (SubflowTcpParams { subflows: SubflowCount::Count(0), ..Default::default() }, "transport.reliability.subflows"),
            (SubflowTcpParams { d: 0, ..Default::default() }, "transport.reliability.d"),
        ];
        for (p, want) in bad {
            let e = crate::scheme::validate_params(&p, SubflowTcp::LIMITS, key).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        let e = SubflowTcp::check(&SubflowTcpParams { rto_min_us: 200.0, rto_max_us: 100.0, ..Default::default() }, key).unwrap_err().to_string();
        assert!(e.contains("transport.reliability.rto_min_us"), "{e}");
    }
}
