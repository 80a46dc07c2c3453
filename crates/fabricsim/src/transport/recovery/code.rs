//! `code`: ideal rateless erasure coding with overhead ε (lb-ai-training spec §2.3 LR-CODE0,
//! ε = 0, and LR-CODE5, ε = 0.05; paper §4 "Loss Recovery Schemes: Erasure Coding", §5 on
//! the zero-overhead code, §6.1: "sources send packets until 105% of the message size has been
//! received").
//!
//! Sender: every packet is a new symbol. It sends new packets, past the message's own `n`
//! packets if need be (the glue extends the message, `Connection::extend_last_msg`), until the
//! receiver reports the message done; it never retransmits. A trimmed header's NACK and an
//! expiry of the shared RTO take the symbols out of flight and requeue nothing. (LR-CODE0 says
//! no RTO is needed because the paced sender never stops until done; the RTO only matters to a
//! window-based congestion control, whose window lost symbols would otherwise hold for good.)
//!
//! Receiver: counts the distinct packets that arrive for messages not yet delivered; the oldest
//! undelivered message is delivered once ⌈(1+ε)·n⌉ of them did (n = the packets it was posted
//! as), whatever their sequence numbers, and consumes that many of the count. Its ACKs carry
//! the end of the last delivered message as their cumulative point (the spec's `done` flag); the
//! sender then settles the whole message ([`Actions::settle`]), lost symbols included. Symbols
//! sent after the last needed one and before that ACK returns are wasted, as in the paper (§5
//! footnote 3), and so is a symbol of a message already delivered that arrives later.
//!
//! Modelling choices (ASSUMPTIONS, beyond spec and paper, which both model one message per
//! flow): a connection carrying several messages codes them as one stream, as a sliding-window
//! code would (a symbol combines the data posted and not yet acknowledged): a packet of a later
//! message also counts toward an earlier, still undelivered one, since extra symbols are
//! appended to the last posted message and an earlier message could otherwise never finish.
//! Each symbol counts once: a message consumes the ⌈(1+ε)·n⌉ symbols it needs, and only the
//! rest carry over to the next, so a receiver never delivers more packets than it received
//! (found by the fuzzer: counting what had arrived for a message afresh when it became the
//! oldest counted the symbols its predecessor had used a second time). Encoding and decoding
//! take no time (spec LR-CODE5, paper §6). Extra symbols are full-sized packets and count in the
//! acknowledged-bytes figures (progress, ACK traces). Spec and paper agree on everything this
//! file models.

use super::{Actions, AckInfo, LossReport, ReceiverRecovery, RxView, SenderCtx, SenderRecovery};
use crate::scheme::Limit;
use crate::transport::cc::PathInfo;
use crate::transport::connection::OpenMsg;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "code";
/// Registry summary.
pub const SUMMARY: &str =
    "ideal rateless erasure code: new symbols until (1+epsilon)*n distinct packets arrived; never retransmits, losses requeue nothing (lb-ai-training LR-CODE0/5)";

/// Parameters of `code`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodeParams {
    /// Decoding overhead ε: the receiver needs ⌈(1+ε)·n⌉ distinct packets of an n-packet
    /// message (LR-CODE0: 0; LR-CODE5: 0.05).
    pub epsilon: f64,
}

impl Default for CodeParams {
    fn default() -> Self {
        //= spec lb-ai-training.md LR-CODE0 (ε = 0)
        CodeParams { epsilon: 0.0 }
    }
}

/// Distinct packets the receiver needs to decode an `n`-packet message: ⌈(1+ε)·n⌉, where a
/// product within 1e-9 of a whole number counts as that number (1.05 · 500 is 525, not 526).
pub fn needed(n: u32, epsilon: f64) -> u32 {
    let x = n as f64 * (1.0 + epsilon);
    let r = x.round();
    if (x - r).abs() < 1e-9 {
        r as u32
    } else {
        x.ceil() as u32
    }
}

/// Sender half.
#[derive(Clone, Copy, Debug, Default)]
pub struct Code {
    /// Highest cumulative point the receiver reported: messages up to it are settled.
    settled: u32,
}

impl SenderRecovery for Code {
    //= spec lb-ai-training.md LR-CODE0 next_packet (new symbol until done)
    #[inline]
    fn next_to_send(&mut self, ctx: &mut SenderCtx) -> Option<(u32, bool)> {
        (!ctx.idle()).then_some((ctx.next_seq, false))
    }

    //= spec lb-ai-training.md LR-CODE0 sender.on_ack (a.done: flow complete)
    fn on_ack(&mut self, _ctx: &mut SenderCtx, ack: &AckInfo) -> Actions {
        if ack.cum_ack > self.settled {
            self.settled = ack.cum_ack;
            return Actions { settle: Some(ack.cum_ack - 1), ..Actions::NONE };
        }
        Actions::NONE
    }

    /// A trimmed symbol is simply lost: out of flight, never requeued.
    fn on_nack(&mut self, ctx: &mut SenderCtx, nack: &LossReport) -> Option<u64> {
        ctx.write_off_if_current(nack.seq, nack.sent_at)
    }

    /// The shared RTO declared symbols lost and queued them: write them off instead.
    fn on_timeout(&mut self, ctx: &mut SenderCtx) -> Actions {
        ctx.retx.clear();
        Actions::NONE
    }

    /// Every packet of a message may be acknowledged while its receiver still needs symbols:
    /// only its report (the cumulative point) settles the message.
    fn completes_on_settle(&self) -> bool {
        true
    }
}

/// Receiver half.
#[derive(Clone, Copy, Debug)]
pub struct CodeRx {
    epsilon: f64,
    /// Distinct symbols counted for undelivered messages and not yet consumed by one.
    unspent: u32,
    /// The arrival counted last (the glue asks again, with the same sequence number, for the
    /// next message after delivering one; `u32::MAX` = none yet).
    last_seq: u32,
    /// End of the last delivered message: the cumulative point ACKs carry.
    delivered: u32,
}

impl CodeRx {
    /// A receiver needing ⌈(1+ε)·n⌉ distinct packets per n-packet message.
    pub fn new(epsilon: f64) -> CodeRx {
        CodeRx { epsilon, unspent: 0, last_seq: u32::MAX, delivered: 0 }
    }
}

impl ReceiverRecovery for CodeRx {
    //= spec lb-ai-training.md LR-CODE0 receiver.on_data (done = rx ≥ (1+ε)·M)
    fn delivered_end(&mut self, _rx: &RxView, seq: u32, msg: &OpenMsg) -> u32 {
        if seq != self.last_seq {
            self.last_seq = seq;
            // A symbol of an already delivered message (sent before its ACK returned) is wasted.
            if seq >= msg.first_pkt {
                self.unspent += 1;
            }
        }
        let need = needed(msg.pkts, self.epsilon);
        if self.unspent >= need {
            self.unspent -= need;
            self.delivered = msg.end_pkt;
        }
        self.delivered
    }

    fn ack_cum(&self, _rx: &RxView) -> u32 {
        self.delivered
    }
}

impl crate::scheme::Scheme<PathInfo> for Code {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["switch.trimming=false", "switch.buffer_bdp=0.3"];
    type Params = CodeParams;
    const LIMITS: &'static [Limit] = &[Limit::new("epsilon", 0.0, 10.0)];
    fn build(_p: &CodeParams, _path: &mut PathInfo) -> Self {
        Code::default()
    }
}

impl crate::scheme::Companion<PathInfo> for Code {
    type Half = CodeRx;
    fn build_half(p: &CodeParams) -> CodeRx {
        CodeRx::new(p.epsilon)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Board;
    use super::super::*;
    use super::*;

    /// A receiver's reorder window (a fixture connection's).
    fn window() -> crate::transport::receiver::Receiver {
        crate::transport::receiver::Receiver::new(super::super::AnyReceiverRecovery::Sack(Default::default()), Time(1))
    }

    fn msg(first: u32, pkts: u32, end: u32) -> OpenMsg {
        OpenMsg { msg: 0, first_pkt: first, pkts, end_pkt: end, last_payload: 1000, posted_at: Time::ZERO, first_tx: Time::ZERO, delivered_at: Time::MAX, rtt_max: Time::ZERO, rtt_sum: Time::ZERO, rtt_samples: 0 }
    }

    /// Feeds `arrivals` (first copies only reach the hook, as in the glue) to a receiver for
    /// one n-packet message; returns the number of fresh arrivals when it was delivered.
    fn delivered_after(epsilon: f64, n: u32, arrivals: impl Iterator<Item = u32>) -> Option<u32> {
        let mut r = CodeRx::new(epsilon);
        let mut win = window();
        let mut fresh = 0;
        for seq in arrivals {
            if !win.receive(seq) {
                continue;
            }
            fresh += 1;
            // The sender may have extended the message past n by now.
            let m = msg(0, n, n.max(seq + 1));
            let rx = win.view();
            if r.delivered_end(&rx, seq, &m) >= m.end_pkt {
                assert_eq!(r.ack_cum(&rx), m.end_pkt);
                return Some(fresh);
            }
            assert_eq!(r.ack_cum(&rx), 0, "no message delivered yet");
        }
        None
    }

    //= type=test; LR-CODE0/5: delivered at exactly ⌈(1+ε)·n⌉ distinct packets
    #[test]
    fn delivered_at_exactly_the_needed_number_of_distinct_packets() {
        assert_eq!(needed(500, 0.0), 500);
        assert_eq!(needed(500, 0.05), 525);
        assert_eq!(needed(10, 0.05), 11);
        // Every third packet lost: symbols past n keep coming; sequence numbers do not matter.
        let lossy = || (0..2000).filter(|s| s % 3 != 1);
        assert_eq!(delivered_after(0.0, 500, lossy()), Some(500));
        assert_eq!(delivered_after(0.05, 500, lossy()), Some(525));
        // In order and lossless: ε = 0 needs exactly the message's own packets.
        assert_eq!(delivered_after(0.0, 500, 0..500), Some(500));
        assert_eq!(delivered_after(0.05, 500, 0..524), None);
    }

    #[test]
    fn duplicates_do_not_count() {
        // Each packet arrives twice: still 500 distinct ones are needed, i.e. packets 0..500.
        let twice = (0..600).flat_map(|s| [s, s]);
        let mut r = CodeRx::new(0.0);
        let mut win = window();
        let m = msg(0, 500, 600);
        let mut last = None;
        for seq in twice {
            let fresh = win.receive(seq);
            if fresh {
                let rx = win.view();
                if r.delivered_end(&rx, seq, &m) >= m.end_pkt {
                    last = Some(seq);
                    break;
                }
            }
        }
        assert_eq!(last, Some(499));
        assert_eq!(delivered_after(0.0, 500, (0..499).flat_map(|s| [s, s, s])), None);
    }

    #[test]
    fn messages_of_one_connection_share_the_stream_and_count_each_symbol_once() {
        // Message 0 is packets 0..10, message 1 packets 10..20 (n = 10 each, ε = 0).
        let (m0, m1) = (msg(0, 10, 10), msg(10, 10, 20));
        let mut r = CodeRx::new(0.0);
        let mut win = window();
        fn arrive_at(win: &mut crate::transport::receiver::Receiver, r: &mut CodeRx, s: u32, m: &OpenMsg) -> u32 {
            assert!(win.receive(s));
            r.delivered_end(&win.view(), s, m)
        }
        // Packets 0..6 and four of message 1 arrive: 10 symbols, message 0 is decoded with
        // the help of message 1's packets.
        for s in [0, 1, 2, 3, 4, 5] {
            assert_eq!(arrive_at(&mut win, &mut r, s, &m0), 0);
        }
        for s in [12, 13, 15] {
            assert_eq!(arrive_at(&mut win, &mut r, s, &m0), 0);
        }
        assert_eq!(arrive_at(&mut win, &mut r, 19, &m0), 10);
        // Asked again for message 1 with the same arrival: nothing is counted twice.
        assert_eq!(r.delivered_end(&win.view(), 19, &m1), 10);
        assert_eq!(r.unspent, 0, "message 0 consumed all ten symbols");
        // A late symbol of message 0 is wasted; message 1 needs ten of its own.
        assert_eq!(arrive_at(&mut win, &mut r, 7, &m1), 10);
        for s in [10, 11, 14, 16, 17, 18, 20, 21, 22] {
            assert_eq!(arrive_at(&mut win, &mut r, s, &m1), 10);
        }
        assert_eq!(arrive_at(&mut win, &mut r, 23, &m1), 20);
    }

    /// The symbols a receiver counts never fall short of what it delivers, however packets
    /// of several messages interleave (the property the fuzzer found broken).
    #[test]
    fn delivered_messages_never_outnumber_the_symbols_received() {
        for epsilon in [0.0, 0.05] {
            let sizes = [3u32, 7, 1, 12, 5];
            let mut msgs = Vec::new();
            let mut first = 0;
            for &n in &sizes {
                msgs.push(msg(first, n, first + n));
                first += n;
            }
            // The last message is extended with extra symbols, as the sender would.
            msgs.last_mut().unwrap().end_pkt += 40;
            let end = msgs.last().unwrap().end_pkt;
            let mut r = CodeRx::new(epsilon);
            let mut win = window();
            let mut next = 0;
            let (mut received, mut needed_total) = (0, 0);
            // A fixed scrambled order with every fifth packet lost.
            for k in 0..end {
                let s = (k * 7) % end;
                if s % 5 == 2 || !win.receive(s) {
                    continue;
                }
                received += 1;
                while let Some(m) = msgs.get(next) {
                    if r.delivered_end(&win.view(), s, m) < m.end_pkt {
                        break;
                    }
                    needed_total += needed(m.pkts, epsilon);
                    next += 1;
                }
                assert!(needed_total <= received, "ε = {epsilon}: {needed_total} symbols used of {received}");
            }
            assert_eq!(next, sizes.len(), "ε = {epsilon}: every message delivered");
        }
    }

    //= type=test; LR-CODE0: the sender never retransmits; losses requeue nothing
    #[test]
    fn sender_never_retransmits_and_sends_past_the_message() {
        // 4 packets in flight of a 104-packet posting (the fixture posts n + 100).
        let mut b = Board::new(4, 10);
        let mut m = Code::default();
        assert_eq!(m.on_nack(&mut b.ctx(Time(10)), &LossReport { seq: 2, sent_at: Time(2) }), Some(1000));
        assert!(b.lost().is_empty(), "a trimmed symbol is not requeued");
        assert_eq!(b.conn.board[2].state, SeqState::Lost);
        assert_eq!(b.conn.in_flight, 3000);
        assert_eq!(m.next_to_send(&mut b.ctx(Time(10))), Some((4, false)));
        // Past the posted data: still a new packet, never a retransmission.
        b.conn.next_seq = b.conn.n_pkts;
        assert_eq!(m.next_to_send(&mut b.ctx(Time(10))), Some((b.conn.n_pkts, false)));
        // Symbols the shared RTO declared lost are written off, not resent.
        let _ = b.ctx(Time(10)).declare_lost(0, 2);
        assert_eq!(b.lost(), [0, 1]);
        assert_eq!(m.on_timeout(&mut b.ctx(Time(10))), Actions::NONE);
        assert!(b.lost().is_empty());
        assert_eq!(m.next_to_send(&mut b.ctx(Time(10))), Some((b.conn.n_pkts, false)));
        // A duplicate ACK asks for nothing; a higher cumulative point settles its message once.
        let ack = AckInfo { cum_ack: 0, seq: 3, ..AckInfo::default() };
        assert_eq!(m.on_ack(&mut b.ctx(Time(11)), &ack), Actions::NONE);
        assert_eq!(m.on_ack(&mut b.ctx(Time(12)), &AckInfo { cum_ack: 104, ..ack }).settle, Some(103));
        assert_eq!(m.on_ack(&mut b.ctx(Time(13)), &AckInfo { cum_ack: 104, ..ack }), Actions::NONE);
        assert!(b.lost().is_empty());
        // Idle: nothing more to send.
        b.conn.acked_pkts = b.conn.n_pkts;
        assert_eq!(m.next_to_send(&mut b.ctx(Time(14))), None);
    }
}
