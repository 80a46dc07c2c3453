//! `go_back_n`: RoCEv2's responder and requester. Only the expected packet (PSN) is accepted;
//! an out-of-order arrival is discarded and the first one of a gap is answered with one
//! sequence NACK carrying the expected PSN; the sender resends everything from it. An RTO also
//! goes back to the oldest unacknowledged packet.
//!
//! Follows: strack spec §1, §3.3; seqbalance spec §2.3.2–2.3.3; lb-ai-training spec LR-ROCE.
//!
//! How often the receiver NACKs one gap is the option `nack_repeat`: `"never"` (default, a
//! RoCEv2 responder: one NACK per expected PSN; a lost NACK is recovered by the RTO),
//! `"base_rtt"` (LR-ROCE's assumption: again for the same PSN once a base RTT passed since the
//! last NACK), `"interval"` (again for the same PSN once `nack_interval_us` passed since the
//! last NACK: the lineage's T_NACK = 4 µs of seqbalance spec §2.3.3) or `"every"` (htsim: a
//! NACK for every out-of-order arrival).
//!
//! How the sender goes back is the option `rewind`: `"fresh"` (default) ignores a NACK revealed
//! by a packet sent before the last rewind, and queues the in-flight packets from the NACKed
//! PSN behind those already awaiting retransmission; `"every_nack"` is the ns-3 RDMA NIC's
//! `RdmaHw::RecoverQueue` (HPCC's and ConWeave's simulators): every NACK sets the next packet
//! back to the NACKed PSN, so everything from it is resent in order. With NACKs repeated every
//! few µs (`nack_interval_us` = 4, ConWeave's) the default kept a stale tail of an earlier
//! rewind ahead of the NACKed packet: a DRILL flow cut to its minimum rate cycled through it
//! for 8 ms before resending the packet the receiver waited for.

use super::{Actions, Admit, NackOnce, ReceiverRecovery, Reply, RxView, SenderCtx, SenderRecovery};
use crate::error::{Error, Result};
use crate::units::{us_to_ps, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "go_back_n";
/// Registry summary.
pub const SUMMARY: &str = "RoCEv2: in-order receiver, one NACK per gap, sender resends from the NACKed PSN";

/// When the receiver NACKs a gap it already NACKed.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NackRepeat {
    /// Never: one NACK per expected PSN (RoCEv2 responders).
    #[default]
    Never,
    /// Once a base RTT passed since the last NACK (lb-ai-training LR-ROCE assumption).
    BaseRtt,
    /// Once `nack_interval_us` passed since the last NACK (seqbalance spec §2.3.3, T_NACK).
    Interval,
    /// On every out-of-order arrival (htsim).
    Every,
}

/// How the sender goes back on a NACK.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Rewind {
    /// Ignore NACKs revealed before the last rewind; queue the in-flight rest behind the
    /// queued retransmissions.
    #[default]
    Fresh,
    /// Every NACK: resend everything from the NACKed PSN, in order (ns-3's `RecoverQueue`).
    EveryNack,
}

/// Parameters of `go_back_n`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoBackNParams {
    /// How often one gap is NACKed.
    pub nack_repeat: NackRepeat,
    /// `fresh` (default) or `every_nack`: how the sender goes back.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub rewind: Rewind,
    /// `nack_repeat = "interval"` only: the time after which a gap is NACKed again, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nack_interval_us: Option<f64>,
}

/// Longest `nack_interval_us` (1000 s): keeps picosecond sums far from overflow.
const MAX_INTERVAL_US: f64 = 1e9;

/// Sender half.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoBackN {
    /// Time of the last rewind: a NACK revealed by a packet sent before it is stale.
    rewound_at: Time,
    /// `rewind = "every_nack"`.
    every_nack: bool,
}

impl GoBackN {
    /// Resends everything in flight from `from` on.
    fn rewind(&mut self, ctx: &mut SenderCtx, from: u32) {
        self.rewound_at = ctx.now;
        ctx.declare_lost(from, u32::MAX);
    }
}

impl SenderRecovery for GoBackN {
    //= spec lb-ai-training.md LR-ROCE sender.on_nack (go-back-N: snd_nxt := e)
    fn on_seq_nack(&mut self, ctx: &mut SenderCtx, expected: u32, sent_at: Time) -> Actions {
        // The packet that revealed the gap left before our last rewind: its NACK asks for what
        // we are already resending.
        if self.every_nack {
            self.rewound_at = ctx.now;
            ctx.go_back_to(expected);
        } else if sent_at >= self.rewound_at {
            self.rewind(ctx, expected);
        }
        Actions::NONE
    }

    fn stale_nack_goes_back(&self) -> bool {
        self.every_nack
    }

    //= spec lb-ai-training.md LR-ROCE on RTO (snd_nxt := snd_una)
    fn on_timeout(&mut self, ctx: &mut SenderCtx) -> Actions {
        // Everything after the oldest lost packet is sent again.
        self.rewind(ctx, 0);
        Actions::NONE
    }
}

/// Receiver half: in-order only.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoBackNRx {
    nack: NackOnce,
    repeat: NackRepeat,
    /// `NackRepeat::Interval`: the repeat interval.
    interval: Time,
    /// When the last NACK left.
    last_nack: Time,
}

impl ReceiverRecovery for GoBackNRx {
    //= spec lb-ai-training.md LR-ROCE receiver.on_data (s > e: discard; NACK(e) unless nack_sent_for == e and now - last_nack < base_RTT)
    fn admit(&mut self, rx: &RxView, seq: u32) -> Admit {
        if seq <= rx.cum {
            return Admit::Keep;
        }
        let again = match self.repeat {
            NackRepeat::Never => false,
            NackRepeat::BaseRtt => rx.now >= self.last_nack.saturating_add(rx.base_rtt),
            //= seqbalance §2.3.3; type=assumption
            //# NACK(epsn) if now − last_nack_time ≥ T_NACK or last_nacked ≠ epsn.
            NackRepeat::Interval => rx.now >= self.last_nack.saturating_add(self.interval),
            NackRepeat::Every => true,
        };
        let reply = if again { self.nack.nack_again(rx.cum) } else { self.nack.nack(rx.cum) };
        if reply == Reply::SeqNack {
            self.last_nack = rx.now;
        }
        Admit::Discard(reply)
    }
}

impl crate::scheme::Scheme<crate::transport::cc::PathInfo> for GoBackN {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = GoBackNParams;
    // From 1 ps (so that it rounds to a positive interval) to 1000 s.
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("nack_interval_us", 0.000001, MAX_INTERVAL_US)];
    fn check(p: &GoBackNParams, key: &str) -> Result<()> {
        let field = format!("{key}.nack_interval_us");
        match (p.nack_repeat, p.nack_interval_us) {
            (NackRepeat::Interval, None) => Err(Error::invalid(field, "missing: nack_repeat = \"interval\" needs nack_interval_us (µs, e.g. 4)")),
            (NackRepeat::Interval, Some(_)) => Ok(()),
            (_, Some(_)) => Err(Error::invalid(field, "only with nack_repeat = \"interval\"")),
            (_, None) => Ok(()),
        }
    }
    fn build(p: &GoBackNParams, _path: &mut crate::transport::cc::PathInfo) -> Self {
        GoBackN { every_nack: p.rewind == Rewind::EveryNack, ..GoBackN::default() }
    }
}

impl crate::scheme::Companion<crate::transport::cc::PathInfo> for GoBackN {
    type Half = GoBackNRx;
    fn build_half(p: &GoBackNParams) -> GoBackNRx {
        GoBackNRx { repeat: p.nack_repeat, interval: p.nack_interval_us.map_or(Time::ZERO, us_to_ps), ..GoBackNRx::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board};
    use super::super::*;
    use super::*;

    //= type=test; LR-ROCE: the sender goes back to the NACKed PSN, once per rewind
    #[test]
    fn rewinds_on_a_fresh_nack_and_ignores_a_stale_one() {
        let mut b = Board::new(6, 10);
        let mut m = GoBackN::default();
        // The NACK for 2 was revealed by packet 3 (sent at t = 3): rewind from 2 at t = 10.
        assert_eq!(m.on_seq_nack(&mut b.ctx(Time(10)), 2, Time(3)), Actions::NONE);
        assert_eq!(b.lost(), [2, 3, 4, 5]);
        assert_eq!(b.conn.in_flight, 2 * 1000);
        // Another NACK revealed by packet 4, sent (t = 4) before the rewind: stale.
        let _ = m.on_seq_nack(&mut b.ctx(Time(11)), 2, Time(4));
        assert_eq!(b.lost(), [2, 3, 4, 5]);
        assert_eq!(m.next_to_send(&mut b.ctx(Time(11))), Some((2, true)));
    }

    #[test]
    fn every_nack_resends_from_the_nacked_psn_in_order_as_ns3_does() {
        // A rewind from 2 queues 2..6; 2, 3 and 4 go out again (sent at 20..22), then a NACK
        // for 2, revealed by packet 2's resend, goes back again.
        let run = |m: &mut GoBackN| {
            let mut b = Board::new(6, 10);
            let _ = m.on_seq_nack(&mut b.ctx(Time(10)), 2, Time(3));
            for (seq, t) in [(2u32, 20u64), (3, 21), (4, 22)] {
                assert_eq!(m.next_to_send(&mut b.ctx(Time(t))), Some((seq, true)));
                b.conn.board[seq as usize] = Slot { state: SeqState::InFlight, wire: 1000, sent_at: Time(t), entropy: 0 };
                b.conn.in_flight += 1000;
            }
            let _ = m.on_seq_nack(&mut b.ctx(Time(30)), 2, Time(20));
            m.next_to_send(&mut b.ctx(Time(30)))
        };
        // The default queues 2, 3, 4 behind what was still queued (4's stale entry, 5): the
        // receiver, waiting for 2, gets 4 and 5 first.
        assert_eq!(run(&mut GoBackN::default()), Some((4, true)));
        // ns-3's RecoverQueue: from the NACKed PSN, in order.
        let mut ns3 = GoBackN { every_nack: true, ..GoBackN::default() };
        assert_eq!(run(&mut ns3), Some((2, true)));
        // A NACK revealed before the last rewind still goes back (ns-3 has no such filter),
        // and the queue is 1.. in order.
        let mut b = Board::new(6, 10);
        let _ = ns3.on_seq_nack(&mut b.ctx(Time(10)), 4, Time(9));
        let _ = ns3.on_seq_nack(&mut b.ctx(Time(11)), 1, Time(2));
        assert_eq!(b.lost(), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn timeout_goes_back_to_the_oldest_unacknowledged_packet() {
        let mut b = Board::new(3, 10);
        b.conn.board[1].state = SeqState::Acked;
        let _ = GoBackN::default().on_timeout(&mut b.ctx(Time(50)));
        assert_eq!(b.lost(), [0, 2]);
    }

    //= type=test; LR-ROCE receiver: out-of-order discarded, one NACK per gap
    #[test]
    fn receiver_discards_out_of_order_and_nacks_once_per_gap() {
        let w = window(4, &[]);
        let rx = RxView { cum: 4, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let mut r = GoBackNRx::default();
        assert_eq!(r.admit(&rx, 6), Admit::Discard(Reply::SeqNack));
        assert_eq!(r.admit(&rx, 7), Admit::Discard(Reply::None));
        assert_eq!(r.admit(&rx, 4), Admit::Keep);
        assert_eq!(r.admit(&rx, 2), Admit::Keep);
        // The next gap (expected 5) gets its own NACK.
        let rx5 = RxView { cum: 5, ..rx };
        assert_eq!(r.admit(&rx5, 7), Admit::Discard(Reply::SeqNack));
        // Kept packets are ACKed by the common rules.
        let a = Arrival { seq: 4, fresh: true, ce: false, cum_before: 4, ack_due: true };
        assert_eq!(r.on_data(&rx5, &a), Reply::Ack { sack_base: 6 });
    }

    //= type=test; LR-ROCE: a gap is NACKed again only after a base RTT (or always, htsim)
    #[test]
    fn repeats_follow_the_option() {
        let w = window(4, &[]);
        let at = |now| RxView { cum: 4, window: &w, lowest_unacked: u32::MAX, now, base_rtt: Time(10) };
        let nacks = |repeat, times: &[u64]| {
            let mut r = GoBackNRx { repeat, ..GoBackNRx::default() };
            times.iter().map(|&t| r.admit(&at(Time(t)), 6) == Admit::Discard(Reply::SeqNack)).collect::<Vec<_>>()
        };
        let times = [100, 105, 109, 110, 115, 121];
        assert_eq!(nacks(NackRepeat::Never, &times), [true, false, false, false, false, false]);
        // Again at 110 (100 + base RTT), then not before 120.
        assert_eq!(nacks(NackRepeat::BaseRtt, &times), [true, false, false, true, false, true]);
        assert_eq!(nacks(NackRepeat::Every, &times), [true; 6]);
    }

    //= type=test
    //= seqbalance §2.3.3; type=assumption
    //# T_NACK = 4 µs: a NACK for the same expected PSN is repeated only after 4 µs; a new
    //# expected PSN is NACKed at once (and restarts the interval).
    #[test]
    fn interval_repeats_a_gap_after_four_microseconds() {
        use crate::units::US;
        let p: GoBackNParams = toml::from_str("nack_repeat = \"interval\"\nnack_interval_us = 4").unwrap();
        let mut r = <GoBackN as crate::scheme::Companion<crate::transport::cc::PathInfo>>::build_half(&p);
        let w = window(4, &[]);
        let mut at = |cum, now, seq| r.admit(&RxView { cum, window: &w, lowest_unacked: u32::MAX, now, base_rtt: 100 * US }, seq) == Admit::Discard(Reply::SeqNack);
        // Expected 4: NACKed at 10 µs, not again at 11 and 13.999 µs, again at 14 µs.
        assert!(at(4, 10 * US, 6));
        assert!(!at(4, 11 * US, 7));
        assert!(!at(4, 14 * US - Time(1), 8));
        assert!(at(4, 14 * US, 9));
        // A new gap (expected 5) is NACKed at once, 1 µs later; its repeat waits 4 µs from there.
        assert!(at(5, 15 * US, 7));
        assert!(!at(5, 18 * US, 8));
        assert!(at(5, 19 * US, 9));
    }

    #[test]
    fn interval_needs_its_key_and_only_it() {
        let check = |t: &str| toml::from_str::<RecoveryConfig>(&format!("name = \"go_back_n\"\n{t}")).unwrap().validate().map_err(|e| e.to_string());
        assert!(check("nack_repeat = \"interval\"\nnack_interval_us = 4.0").is_ok());
        let e = check("nack_repeat = \"interval\"").unwrap_err();
        assert!(e.contains("transport.reliability.nack_interval_us") && e.contains("missing"), "{e}");
        let e = check("nack_repeat = \"interval\"\nnack_interval_us = 0").unwrap_err();
        assert!(e.contains("transport.reliability.nack_interval_us") && e.contains("0.000001"), "{e}");
        let e = check("nack_repeat = \"base_rtt\"\nnack_interval_us = 4").unwrap_err();
        assert!(e.contains("only with nack_repeat = \"interval\""), "{e}");
    }
}
