//! Loss recovery: how a receiver reports gaps and how a sender decides what to resend.
//!
//! Every mode shares the sender's scoreboard and reorder window (`connection.rs`) and the
//! retransmission timer (RTO, `sender.rs`); a mode is two small halves, one file per mode:
//!
//! - a **sender half** ([`SenderRecovery`], built into [`AnyRecovery`], held in
//!   `Connection::recovery`): it sees ACKs, trimming NACKs, sequence NACKs, RTO expiries and its
//!   own timer through a [`SenderCtx`] (now, the scoreboard, the window in packets, a
//!   [`SenderCtx::declare_lost`] helper) and answers with [`Actions`] (arm its timer, send a
//!   probe, count a recovery episode);
//! - a **receiver half** ([`ReceiverRecovery`], built into [`AnyReceiverRecovery`], held in
//!   `Receiver::recovery`, `transport/receiver.rs`): it sees each arriving data packet through an [`RxView`] of the
//!   reorder window and answers whether to keep it ([`Admit`]) and how to reply ([`Reply`]).
//!
//! The halves share no state, so a sender and its receiver may live in different partitions of
//! a parallel engine. The glue (`sender.rs`, `receiver.rs`) never tests which mode runs: it
//! allocates packets, schedules events and updates counters from what the hooks return.
//!
//! Modes: [`sack`] (default), [`go_back_n`], [`selective_nack`], [`rc_ooo`], [`strack`],
//! [`code`], [`tcp`], [`trim`], [`subflow_tcp`].
//! A sequence NACK is
//! a gap report, not a congestion signal: it is not passed to the congestion controller
//! (trimming NACKs are).
//!
//! # Adding a loss-recovery mode
//! 1. Write `mymode.rs`: a params struct (serde, paper defaults), a sender struct implementing
//!    [`SenderRecovery`] and [`crate::scheme::Scheme`]`<PathInfo>` (name, summary, parameter
//!    ranges, constructor), a receiver struct implementing [`ReceiverRecovery`], built by
//!    [`crate::scheme::Companion`] on the sender struct (hooks default to today's SACK
//!    behaviour), and unit tests.
//! 2. Add one row to the `scheme_family!` list below. Parsing, validation, both enums, their
//!    dispatch and the `fabricsim list` row follow from it.
//!
//! General mechanisms a mode may use (the defaults keep today's behaviour):
//! - *Sending past the posted data*: [`SenderRecovery::next_to_send`] may return a new packet
//!   `next_seq ≥ n_pkts` while the connection is busy; the glue then extends the last open
//!   message by one full-sized packet (`Connection::extend_last_msg`). Erasure coding
//!   ([`code`]) sends its extra symbols this way.
//! - *Message-level delivery*: [`ReceiverRecovery::delivered_end`] sees each fresh arrival and
//!   the oldest undelivered message; [`ReceiverRecovery::ack_cum`] chooses the cumulative point
//!   ACKs carry; [`Actions::settle`] tells the glue the receiver holds a whole message, so every
//!   packet of it counts as acknowledged (lost ones included).
//! - *Own retransmission timer*: a mode that runs its own RTO on the mode timer
//!   ([`Actions::timer`], [`SenderRecovery::on_timer`]) or needs none turns the shared one off
//!   with [`SenderRecovery::uses_shared_rto`]; it reports a timeout with
//!   [`Episode::Timeout`], which the glue accounts exactly as a shared-RTO expiry (counters,
//!   credit, congestion controller). [`tcp`] does this.
//!
//! How the modes of lb-ai-training spec §2.3 fit:
//! - *Erasure coding* (LR-CODE0/5, [`code`]): [`SenderRecovery::next_to_send`] hands out new
//!   symbols until the receiver reports the message done and never requeues lost ones;
//!   [`ReceiverRecovery::delivered_end`] reports the message delivered once ⌈(1+ε)·n⌉ distinct
//!   packets arrived, whatever their sequence numbers.
//! - *TCP dupACK + NewReno* (LR-TCP, [`tcp`]): [`SenderRecovery::on_ack`] sees every ACK,
//!   duplicates included ([`AckInfo::prev_una`], [`AckInfo::newly_acked`]), counts dupACKs,
//!   requeues `snd_una` with [`SenderCtx::declare_lost`] on the 3rd and on partial ACKs, and
//!   runs its own RTO on the mode timer ([`Actions::timer`]).
//! - *Trimming* (LR-TRIM, [`trim`]): `sack`'s NACK recovery plus a desync rule: on each NACK
//!   the pacer's phase moves back by U(0, gap) through [`SenderCtx::next_send`] (gap:
//!   [`SenderCtx::pacing_gap`], random draws from [`SenderCtx::rng`]), or the packet waits
//!   U(0, base RTT) on the mode timer before it may be resent.
//! - *Trimming with return-to-sender* (LR-TRIM-RTS, `[switch] trimmed_headers`): a header a
//!   switch returns reaches [`SenderRecovery::on_bounce`] (default: treat as a receiver's
//!   NACK); every mode handles it, [`trim`] with its desync rule.
//! - *Subflow TCP* (LR-SUBTCP, [`subflow_tcp`]): the sender half gives each subflow a share
//!   of every message (contiguous chunks, bound to sequence numbers when first sent, as the
//!   glue sends new packets in order), keeps S [`tcp`] state machines (cumulative points,
//!   dupACK counters, RTOs) fed by [`AckInfo::seq`]; `next_to_send` hands the pacing slots to
//!   the subflows round robin and moves [`SenderCtx::next_send`] past unused ones.
//! - *Mode-chosen pacing*: [`SenderRecovery::next_to_send`] picks the next packet (default:
//!   oldest lost first, then the next new one) and may move [`SenderCtx::next_send`].

use crate::units::Bytes;
pub mod code;
pub mod go_back_n;
pub mod rc_ooo;
pub mod sack;
pub mod selective_nack;
pub mod strack;
pub mod subflow_tcp;
pub mod tcp;
pub mod trim;

use super::cc::{AnyCc, CongestionControl, PathInfo};
use super::connection::{OpenMsg, SeqState, Slot};
use super::lb::{AnyLb, Feedback, PathSelector};
use crate::rng::Rng;
use crate::units::Time;
use std::collections::VecDeque;

pub use strack::{ProbeRange, StrackLossParams};

crate::scheme_family! {
    /// Scenario selection of the loss-recovery mode (`[transport.reliability]`, `name = ...`).
    config RecoveryConfig;
    /// A built sender half (static dispatch).
    any AnyRecovery;
    /// A built receiver half (static dispatch).
    half AnyReceiverRecovery built by build_receiver;
    ctx PathInfo; what "reliability mode"; key "transport.reliability"; default Sack;
    dispatch dispatch_tx, dispatch_rx;
    schemes {
        /// Cumulative + selective ACKs, NACKs for trimmed headers, RTO. See [`sack`].
        Sack => sack::Sack,
        /// RoCEv2 go-back-N. See [`go_back_n`].
        GoBackN => go_back_n::GoBackN,
        /// RoCE selective-repeat NACK at the expected packet number. See [`selective_nack`].
        SelectiveNack => selective_nack::SelectiveNack,
        /// RoCE with out-of-order placement: no NACKs, cumulative ACKs, RTO resends all
        /// unacknowledged. See [`rc_ooo`].
        RcOoo => rc_ooo::RcOoo,
        /// STrack's SACK with out-of-order, probe and timeout loss detection. See [`strack`].
        Strack => strack::Strack,
        /// Ideal rateless erasure coding with overhead ε (LR-CODE0/5). See [`code`].
        Code => code::Code,
        /// TCP dupACK + NewReno + own RTO, cumulative ACKs only (LR-TCP). See [`tcp`].
        Tcp => Box<tcp::Tcp>,
        /// `sack` plus a desynchronisation rule for NACKed / bounced packets (LR-TRIM,
        /// LR-TRIM-RTS). See [`trim`].
        Trim => Box<trim::Trim>,
        /// S subflows, each an LR-TCP sender; round-robin pacing slots (LR-SUBTCP). See
        /// [`subflow_tcp`].
        SubflowTcp => Box<subflow_tcp::SubflowTcp>,
    }
}

// ------------------------------------------------------------------------------------------
// Sender half
// ------------------------------------------------------------------------------------------

/// The schedule of a mode's own timer ([`Actions::timer`], [`SenderRecovery::on_timer`]):
/// the earliest timer event scheduled and not yet fired, so that a mode asks for a new event
/// only when the ones already scheduled fire too late. Used by [`tcp`], [`subflow_tcp`] and
/// [`trim`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ModeTimer(Option<Time>);

impl ModeTimer {
    /// The event to schedule so that a timer fires at or before `deadline` (`None` when one
    /// already will, or there is no deadline).
    #[inline]
    pub fn arm(&mut self, deadline: Option<Time>) -> Option<Time> {
        let d = deadline?;
        if self.0.is_some_and(|w| w <= d) {
            return None;
        }
        self.0 = Some(d);
        Some(d)
    }

    /// A timer event fired at `now`: the earliest one scheduled is gone if it was this one.
    #[inline]
    pub fn fired(&mut self, now: Time) {
        if self.0.is_some_and(|w| w <= now) {
            self.0 = None;
        }
    }
}

/// What the sender glue should do after a hook (all fields default to "nothing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Actions {
    /// Schedule the mode's timer (`EventKind::RecoveryTimer`) at this time.
    pub timer: Option<Time>,
    /// Send a probe now (after scheduling the timer).
    pub probe: bool,
    /// Count one recovery episode of this kind.
    pub episode: Option<Episode>,
    /// The receiver holds the whole message containing this packet (and every earlier one):
    /// the glue acknowledges all their packets, lost ones included. For modes whose receiver
    /// completes messages without every packet (erasure coding).
    pub settle: Option<u32>,
}

impl Actions {
    /// Nothing to do.
    pub const NONE: Actions = Actions { timer: None, probe: false, episode: None, settle: None };
}

/// Why a recovery episode started (each kind has its own run counter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Episode {
    /// More packets held out of order at the receiver than the threshold.
    OutOfOrder,
    /// A probe came back fast with no other ACK since.
    Probe,
    /// Duplicate ACKs reached the mode's threshold and it resent the hole (TCP's fast
    /// retransmit, lb-ai-training §2.3 LR-TCP): counted per flow and in the summary beside the
    /// timeouts.
    FastRetransmit,
    /// The mode's own retransmission timer expired and declared these packets lost: counted
    /// and reported to the congestion controller as an expiry of the shared RTO is.
    Timeout(Lost),
}

/// Packets declared lost at once ([`SenderCtx::declare_lost_detail`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// How many.
    pub pkts: u32,
    /// Their wire bytes.
    pub bytes: Bytes,
    /// Latest send time among them.
    pub latest_sent_at: Time,
}

/// An ACK as the sender half sees it (after the glue applied its cumulative and selective
/// parts to the scoreboard).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo {
    /// `snd_una` before this ACK (a cumulative ACK equal to it with nothing newly acked is a
    /// duplicate).
    pub prev_una: u32,
    /// Wire bytes this ACK newly acknowledged.
    pub newly_acked: u64,
    /// Cumulative point: every packet below it has arrived.
    pub cum_ack: u32,
    /// First packet of the selective bitmap.
    pub sack_base: u32,
    /// Selective bitmap: bit i = packet `sack_base + i` arrived.
    pub sack_bits: u64,
    /// Packet that triggered the ACK (`u32::MAX` = none).
    pub seq: u32,
    /// Packets the receiver holds above the cumulative point.
    pub ooo_count: u16,
    /// Answer to a probe (does not acknowledge `seq`).
    pub probe: bool,
    /// The packet that triggered the ACK was a retransmission (Karn's rule).
    pub retransmitted: bool,
    /// Round-trip sample.
    pub rtt: Time,
}

/// Narrow view of one connection's sender given to the sender half: the clock, the scoreboard
/// (read, plus loss declarations) and the congestion window. Built by
/// `Connection::sender_parts`.
pub struct SenderCtx<'a> {
    /// Current time.
    pub now: Time,
    /// Wire size of a full-sized packet (window → packets).
    pub mtu: u64,
    /// Lowest unacknowledged sequence number.
    pub snd_una: u32,
    /// Next never-sent sequence number.
    pub next_seq: u32,
    /// Packets posted so far.
    pub n_pkts: u32,
    /// Packets acknowledged so far.
    pub acked_pkts: u32,
    /// Earliest time the pacer lets the next packet go (a mode may move the phase).
    pub next_send: &'a mut Time,
    pub(crate) board: &'a mut VecDeque<Slot>,
    pub(crate) retx: &'a mut VecDeque<u32>,
    pub(crate) in_flight: &'a mut u64,
    pub(crate) lb: &'a mut AnyLb,
    pub(crate) cc: &'a AnyCc,
    /// The connection's random stream (the one its path selector draws entropies from), for
    /// modes that randomise timing (the desync rules of [`trim`]): seeded, so runs repeat.
    pub rng: &'a mut Rng,
    /// Posted messages not yet fully acknowledged, oldest first.
    pub(crate) msgs: &'a VecDeque<OpenMsg>,
    /// Packets below this belong to messages the receiver reported done
    /// ([`SenderRecovery::completes_on_settle`]; `u32::MAX` for the other modes).
    pub settled_end: u32,
}

impl SenderCtx<'_> {
    /// Whether everything posted has been acknowledged (and, in a mode that
    /// [completes on settle](SenderRecovery::completes_on_settle), reported done).
    #[inline]
    pub fn idle(&self) -> bool {
        self.acked_pkts == self.n_pkts && self.settled_end >= self.n_pkts
    }

    /// Wire bytes in flight.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        *self.in_flight
    }

    /// Whether the congestion window holds back the next full-sized packet (the sender glue's
    /// rule, [`crate::transport::cc::window_holds_back`]); never for a window-less sender.
    #[inline]
    pub fn window_full(&self) -> bool {
        crate::transport::cc::window_holds_back(self.cc.window(), *self.in_flight, self.mtu)
    }

    /// The pacer's gap after a full-sized packet at the current pacing rate (`None` for a
    /// congestion control that does not pace, e.g. a pure window).
    #[inline]
    pub fn pacing_gap(&self) -> Option<Time> {
        self.cc.pacing_rate().map(|r| r.tx_time(Bytes(self.mtu)))
    }

    /// Congestion window in full-sized packets (`u32::MAX` for window-less senders).
    #[inline]
    pub fn cwnd_pkts(&self) -> u32 {
        self.cc.window().map_or(u32::MAX as u64, |w| w / self.mtu) as u32
    }

    /// Scoreboard slot of `seq` (in `snd_una..next_seq`).
    #[inline]
    pub fn slot(&self, seq: u32) -> &Slot {
        &self.board[(seq - self.snd_una) as usize]
    }

    /// Marks in-flight packet `seq` lost and, if `requeue`, queues it for retransmission;
    /// returns its wire bytes. No path feedback (the caller chooses which).
    #[inline]
    fn mark_lost(&mut self, seq: u32, requeue: bool) -> u64 {
        let slot = &mut self.board[(seq - self.snd_una) as usize];
        slot.state = SeqState::Lost;
        let wire = slot.wire as u64;
        *self.in_flight -= wire;
        if requeue {
            self.retx.push_back(seq);
        }
        wire
    }

    /// Declares every in-flight packet in `[from, end)` (clipped to `snd_una..next_seq`) lost
    /// and queues it for retransmission, oldest first, telling the path selector each one
    /// timed out. Returns the number of packets declared lost.
    pub fn declare_lost(&mut self, from: u32, end: u32) -> u32 {
        self.declare_lost_detail(from, end).pkts
    }

    /// [`SenderCtx::declare_lost`], returning the packets' count, wire bytes and latest send
    /// time (what a timeout reports).
    pub fn declare_lost_detail(&mut self, from: u32, end: u32) -> Lost {
        let from = from.max(self.snd_una);
        let end = end.min(self.next_seq);
        let mut lost = Lost::default();
        for seq in from..end {
            let Slot { state, entropy, sent_at, .. } = *self.slot(seq);
            if state != SeqState::InFlight {
                continue;
            }
            lost.bytes += Bytes(self.mark_lost(seq, true));
            self.lb.on_feedback(entropy, Feedback::Timeout, self.now);
            lost.pkts += 1;
            lost.latest_sent_at = lost.latest_sent_at.max(sent_at);
        }
        lost
    }

    /// Goes back to `from` as the ns-3 RoCE NIC does (`RdmaHw::RecoverQueue`: `snd_nxt =
    /// snd_una`): every in-flight packet from it on is declared lost, and the retransmission
    /// queue resends everything from `from` in order before what was queued after it.
    /// Returns the number of packets newly declared lost.
    pub fn go_back_to(&mut self, from: u32) -> u32 {
        let n = self.declare_lost(from, u32::MAX);
        let from = from.max(self.snd_una);
        self.retx.retain(|&s| s < from);
        for seq in from..self.next_seq {
            if self.slot(seq).state == SeqState::Lost {
                self.retx.push_back(seq);
            }
        }
        n
    }

    /// Requeues `seq` if its current transmission (sent at `sent_at`) is in flight; returns
    /// its wire bytes, or `None` for stale feedback about an older transmission.
    pub fn requeue_if_current(&mut self, seq: u32, sent_at: Time) -> Option<u64> {
        self.lost_if_current(seq, sent_at, true)
    }

    /// Takes `seq` out of flight without queueing it for retransmission, if its current
    /// transmission (sent at `sent_at`) is in flight; returns its wire bytes, or `None` for
    /// stale feedback. For modes that never resend (erasure coding) or queue it later
    /// themselves (`trim`'s eligibility delay).
    pub fn write_off_if_current(&mut self, seq: u32, sent_at: Time) -> Option<u64> {
        self.lost_if_current(seq, sent_at, false)
    }

    fn lost_if_current(&mut self, seq: u32, sent_at: Time, requeue: bool) -> Option<u64> {
        let slot = self.slot(seq);
        if slot.state != SeqState::InFlight || slot.sent_at != sent_at {
            return None;
        }
        Some(self.mark_lost(seq, requeue))
    }

    /// Today's transmission order: the oldest packet awaiting retransmission, else the next
    /// new packet (`(seq, is_retransmission)`). Skips stale retransmission-queue entries.
    #[inline(always)]
    pub fn oldest_lost_then_new(&mut self) -> Option<(u32, bool)> {
        while let Some(&seq) = self.retx.front() {
            if seq >= self.snd_una && self.slot(seq).state == SeqState::Lost {
                return Some((seq, true));
            }
            self.retx.pop_front();
        }
        (self.next_seq < self.n_pkts).then_some((self.next_seq, false))
    }
}

/// A trimming NACK (or a bounced header) about packet `seq`, in `snd_una..next_seq`.
#[derive(Clone, Copy, Debug)]
pub struct LossReport {
    /// The packet.
    pub seq: u32,
    /// Send time of the transmission that was trimmed.
    pub sent_at: Time,
}

/// The sender half of a loss-recovery mode. Every hook defaults to the `sack` behaviour.
pub trait SenderRecovery {
    /// The next packet to transmit, `(seq, is_retransmission)`, or `None` when nothing is
    /// waiting. Called when the connection checks whether it may send and when it sends.
    #[inline]
    fn next_to_send(&mut self, ctx: &mut SenderCtx) -> Option<(u32, bool)> {
        ctx.oldest_lost_then_new()
    }
    /// A data packet `seq` just left (its slot and `next_seq` already updated).
    #[inline]
    fn on_send(&mut self, _ctx: &mut SenderCtx, _seq: u32) -> Actions {
        Actions::NONE
    }
    /// An ACK arrived and was applied to the scoreboard.
    #[inline]
    fn on_ack(&mut self, _ctx: &mut SenderCtx, _ack: &AckInfo) -> Actions {
        Actions::NONE
    }
    /// A trimmed header's NACK arrived: returns the wire bytes requeued, or `None` to ignore it
    /// (then the congestion controller and path selector are not told either).
    #[inline]
    fn on_nack(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        ctx.requeue_if_current(nack.seq, nack.sent_at)
    }
    /// A trimmed header returned by a switch (return-to-sender) arrived; default: as a NACK.
    #[inline]
    fn on_bounce(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        self.on_nack(ctx, nack)
    }
    /// After [`SenderRecovery::on_nack`] or [`SenderRecovery::on_bounce`] took a packet out of
    /// flight: what the glue should do, e.g. arm the mode's timer for a delayed resend.
    #[inline]
    fn after_loss_report(&mut self, _ctx: &mut SenderCtx) -> Actions {
        Actions::NONE
    }
    /// A sequence NACK asks for `expected` (in `snd_una..next_seq`; everything below is
    /// already acknowledged). `sent_at` is the send time of the packet that revealed the gap.
    #[inline]
    fn on_seq_nack(&mut self, _ctx: &mut SenderCtx, _expected: u32, _sent_at: Time) -> Actions {
        Actions::NONE
    }
    /// The RTO just declared at least one packet lost.
    #[inline]
    fn on_timeout(&mut self, _ctx: &mut SenderCtx) -> Actions {
        Actions::NONE
    }
    /// The mode's own timer fired.
    #[inline]
    fn on_timer(&mut self, _ctx: &mut SenderCtx) -> Actions {
        Actions::NONE
    }
    /// Whether the shared retransmission timer (`transport.rto_us`, `sender.rs`) runs for this
    /// connection. A mode with its own RTO on the mode timer, or one that needs none, says no.
    #[inline]
    fn uses_shared_rto(&self) -> bool {
        true
    }
    /// Whether a sequence NACK for a packet acknowledged since (ACKs overtook it) still goes
    /// back, to `snd_una` ([`SenderRecovery::on_seq_nack`] is then asked for `snd_una`): the
    /// ns-3 RDMA NIC's `RecoverQueue` does (go-back-N's `rewind = "every_nack"`).
    #[inline]
    fn stale_nack_goes_back(&self) -> bool {
        false
    }
    /// Whether a message is done only when the receiver says so ([`Actions::settle`]) rather
    /// than once every packet posted for it was acknowledged: an erasure code's receiver may
    /// need more symbols than the message's packets, so acknowledged packets prove nothing
    /// until it reports the message decoded. Such a connection is not idle, and keeps sending,
    /// while a message is unsettled.
    #[inline]
    fn completes_on_settle(&self) -> bool {
        false
    }
    /// The mode's own timers with their effective values on this connection's path, one line
    /// each, for `fabricsim check` (which adds the shared RTO when [`Self::uses_shared_rto`]).
    fn own_timers(&self) -> Vec<String> {
        Vec::new()
    }
}

impl SenderRecovery for AnyRecovery {
    // Asked twice per packet sent (may it send? what?): keep the dispatch inlined into the
    // sender's hot path.
    #[inline(always)]
    fn next_to_send(&mut self, ctx: &mut SenderCtx) -> Option<(u32, bool)> {
        dispatch_tx!(self, m => m.next_to_send(ctx))
    }
    #[inline]
    fn on_send(&mut self, ctx: &mut SenderCtx, seq: u32) -> Actions {
        dispatch_tx!(self, m => m.on_send(ctx, seq))
    }
    #[inline]
    fn on_ack(&mut self, ctx: &mut SenderCtx, ack: &AckInfo) -> Actions {
        dispatch_tx!(self, m => m.on_ack(ctx, ack))
    }
    #[inline]
    fn on_nack(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        dispatch_tx!(self, m => m.on_nack(ctx, nack))
    }
    #[inline]
    fn on_bounce(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        dispatch_tx!(self, m => m.on_bounce(ctx, nack))
    }
    #[inline]
    fn after_loss_report(&mut self, ctx: &mut SenderCtx) -> Actions {
        dispatch_tx!(self, m => m.after_loss_report(ctx))
    }
    #[inline]
    fn on_seq_nack(&mut self, ctx: &mut SenderCtx, expected: u32, sent_at: Time) -> Actions {
        dispatch_tx!(self, m => m.on_seq_nack(ctx, expected, sent_at))
    }
    #[inline]
    fn on_timeout(&mut self, ctx: &mut SenderCtx) -> Actions {
        dispatch_tx!(self, m => m.on_timeout(ctx))
    }
    #[inline]
    fn on_timer(&mut self, ctx: &mut SenderCtx) -> Actions {
        dispatch_tx!(self, m => m.on_timer(ctx))
    }
    #[inline]
    fn uses_shared_rto(&self) -> bool {
        dispatch_tx!(self, m => m.uses_shared_rto())
    }
    #[inline]
    fn stale_nack_goes_back(&self) -> bool {
        dispatch_tx!(self, m => m.stale_nack_goes_back())
    }
    #[inline]
    fn completes_on_settle(&self) -> bool {
        dispatch_tx!(self, m => m.completes_on_settle())
    }

    fn own_timers(&self) -> Vec<String> {
        dispatch_tx!(self, m => m.own_timers())
    }
}

// ------------------------------------------------------------------------------------------
// Receiver half
// ------------------------------------------------------------------------------------------

/// Narrow view of one connection's receiver: the reorder window and pending-ACK state.
#[derive(Clone, Copy, Debug)]
pub struct RxView<'a> {
    /// Every packet below this has arrived.
    pub cum: u32,
    /// Arrival flags for `cum..`.
    pub window: &'a VecDeque<bool>,
    /// Lowest sequence number that arrived since the last ACK (`u32::MAX` = none), not
    /// counting the arriving packet.
    pub lowest_unacked: u32,
    /// Arrival time of the latest data packet (the current one in `admit` and `on_data`).
    pub now: Time,
    /// Base RTT of the connection's path (idle fabric, full-sized packet and its ACK).
    pub base_rtt: Time,
}

impl RxView<'_> {
    /// Base of the 64-packet SACK segment holding packet `lowest`, segments aligned to the
    /// cumulative point (strack spec §2.5.11 `segment_base`).
    #[inline]
    pub fn segment_base(&self, lowest: u32) -> u32 {
        if lowest == u32::MAX || lowest <= self.cum {
            self.cum
        } else {
            self.cum + 64 * ((lowest - self.cum) / 64)
        }
    }
}

/// A data packet after it was recorded in the reorder window (and any messages it completed
/// were delivered).
#[derive(Clone, Copy, Debug, Default)]
pub struct Arrival {
    /// Its sequence number.
    pub seq: u32,
    /// First copy to arrive.
    pub fresh: bool,
    /// It carried a CE mark.
    pub ce: bool,
    /// Cumulative point before it arrived.
    pub cum_before: u32,
    /// The common ACK rules ask for an ACK now (every `ack_every` packets, a duplicate, the
    /// sender's ACK-now flag, the last posted packet).
    pub ack_due: bool,
}

/// Whether an arriving data packet enters the reorder window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Record it.
    Keep,
    /// Discard it (counted as discarded out of order) and answer with this.
    Discard(Reply),
}

/// The receiver's answer to a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Nothing now (the packet is covered by a later ACK).
    None,
    /// An ACK with a selective bitmap starting at `sack_base`.
    Ack {
        /// First packet of the bitmap.
        sack_base: u32,
    },
    /// A sequence NACK asking for the expected packet (`cum`).
    SeqNack,
}

/// The default reply: ACK when the common rules say so, bitmap just above the cumulative point.
#[inline]
pub fn ack_if_due(rx: &RxView, a: &Arrival) -> Reply {
    if a.ack_due {
        Reply::Ack { sack_base: rx.cum + 1 }
    } else {
        Reply::None
    }
}

/// The receiver half of a loss-recovery mode. Every hook defaults to the `sack` behaviour.
pub trait ReceiverRecovery {
    /// Before packet `seq` touches the reorder window: keep it, or discard it with a reply.
    #[inline]
    fn admit(&mut self, _rx: &RxView, _seq: u32) -> Admit {
        Admit::Keep
    }
    /// After the packet was recorded: how to answer.
    #[inline]
    fn on_data(&mut self, rx: &RxView, a: &Arrival) -> Reply {
        ack_if_due(rx, a)
    }
    /// One past the last packet delivered to the application: messages ending at or below it
    /// are complete (default: the cumulative point). Asked after each first arrival (`seq`,
    /// already recorded) while message `msg`, the oldest undelivered one, is open.
    #[inline]
    fn delivered_end(&mut self, rx: &RxView, _seq: u32, _msg: &OpenMsg) -> u32 {
        rx.cum
    }
    /// The cumulative point ACKs carry: every packet below it counts as received (default:
    /// the reorder window's).
    #[inline]
    fn ack_cum(&self, rx: &RxView) -> u32 {
        rx.cum
    }
}

/// Sequence-NACK suppression shared by the RoCE receivers: one NACK per expected packet.
#[derive(Clone, Copy, Debug)]
pub struct NackOnce {
    /// Expected packet the last sequence NACK asked for (`u32::MAX` = none yet).
    nacked_for: u32,
}

impl Default for NackOnce {
    fn default() -> Self {
        NackOnce { nacked_for: u32::MAX }
    }
}

impl NackOnce {
    /// Whether the gap at `cum` has not been NACKed yet.
    #[inline]
    pub fn pending(&self, cum: u32) -> bool {
        self.nacked_for != cum
    }
    /// A NACK for the gap at `cum` if none went out yet (and remembers it).
    #[inline]
    pub fn nack(&mut self, cum: u32) -> Reply {
        if self.pending(cum) {
            self.nack_again(cum)
        } else {
            Reply::None
        }
    }
    /// A NACK for the gap at `cum` whether or not one went out (and remembers it).
    #[inline]
    pub fn nack_again(&mut self, cum: u32) -> Reply {
        self.nacked_for = cum;
        Reply::SeqNack
    }
}

impl ReceiverRecovery for AnyReceiverRecovery {
    #[inline]
    fn admit(&mut self, rx: &RxView, seq: u32) -> Admit {
        dispatch_rx!(self, m => m.admit(rx, seq))
    }
    #[inline]
    fn on_data(&mut self, rx: &RxView, a: &Arrival) -> Reply {
        dispatch_rx!(self, m => m.on_data(rx, a))
    }
    #[inline]
    fn delivered_end(&mut self, rx: &RxView, seq: u32, msg: &OpenMsg) -> u32 {
        dispatch_rx!(self, m => m.delivered_end(rx, seq, msg))
    }
    #[inline]
    fn ack_cum(&self, rx: &RxView) -> u32 {
        dispatch_rx!(self, m => m.ack_cum(rx))
    }
}

/// Test fixtures shared by the modes' unit tests: a connection with packets in flight and a
/// fixed window, driven without a `Sim`.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::ids::NodeId;
    use crate::rng::Rng;
    use crate::transport::cc::fixed;
    use crate::transport::lb::spray;
    use crate::transport::Connection;

    /// Wire size of every packet of the fixture.
    pub const MTU: u64 = 1000;

    /// A connection with packets `0..n` in flight, packet i sent at time i, all of `MTU` bytes.
    pub struct Board {
        /// The connection (its own recovery half is unused: tests drive a mode directly).
        pub conn: Connection,
    }

    impl Board {
        /// `n` packets in flight; the controller's fixed window is `cwnd_pkts` packets.
        pub fn new(n: u32, cwnd_pkts: u64) -> Board {
            let path = PathInfo { mtu_bytes: Bytes(MTU), host_rate: crate::units::BitsPerSec(1), base_rtt: Time(1), bdp_bytes: Bytes(cwnd_pkts * MTU), hops: 2, net_base_rtt: Time(1), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 };
            let cc = AnyCc::Fixed(fixed::Fixed::new(&fixed::FixedParams::default(), &path));
            let lb = AnyLb::Spray(spray::Spray::new(&Default::default()));
            let mut conn = Connection::new(NodeId(0), NodeId(1), cc, lb, Rng::stream(0, "t", 0), AnyRecovery::Sack(sack::Sack));
            conn.post(0, (n as u64 + 100) * MTU, MTU as u32, Time::ZERO);
            conn.board = (0..n).map(|i| Slot { state: SeqState::InFlight, wire: MTU as u32, sent_at: Time(i as u64), entropy: 0 }).collect();
            conn.next_seq = n;
            conn.in_flight = n as u64 * MTU;
            Board { conn }
        }

        /// The sender view at time `now`.
        pub fn ctx(&mut self, now: Time) -> SenderCtx<'_> {
            self.conn.sender_parts(now, MTU).1
        }

        /// The retransmission queue.
        pub fn lost(&self) -> Vec<u32> {
            self.conn.retx.iter().copied().collect()
        }
    }

    /// A reorder window with packets `got` arrived above cumulative point `cum`.
    pub fn window(cum: u32, got: &[u32]) -> VecDeque<bool> {
        let mut w = VecDeque::new();
        for &s in got {
            let i = (s - cum) as usize;
            if i >= w.len() {
                w.resize(i + 1, false);
            }
            w[i] = true;
        }
        w
    }
}
