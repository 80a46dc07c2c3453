//! `selective_nack`: "RoCE NACK at the given packet number" (lb-ai-training spec LR-ROCE
//! variant): the receiver keeps out-of-order packets and NACKs the expected PSN once; the
//! sender resends only that packet.

use super::{ack_if_due, Actions, Arrival, NackOnce, ReceiverRecovery, Reply, RxView, SenderCtx, SenderRecovery};
use crate::transport::connection::SeqState;
use crate::units::Time;

/// Registry name.
pub const NAME: &str = "selective_nack";
/// Registry summary.
pub const SUMMARY: &str = "RoCE selective repeat: receiver keeps out-of-order data, NACKs the expected PSN once; sender resends it";

/// Sender half (stateless).
#[derive(Clone, Copy, Debug, Default)]
pub struct SelectiveNack;

impl SenderRecovery for SelectiveNack {
    fn on_seq_nack(&mut self, ctx: &mut SenderCtx, expected: u32, sent_at: Time) -> Actions {
        // Resend the expected packet only if the packet that revealed the gap left after its
        // current transmission (otherwise that transmission may still arrive).
        let slot = ctx.slot(expected);
        if slot.state == SeqState::InFlight && slot.sent_at <= sent_at {
            ctx.declare_lost(expected, expected + 1);
        }
        Actions::NONE
    }
}

/// Receiver half: keeps out-of-order data, NACKs each gap once.
#[derive(Clone, Copy, Debug, Default)]
pub struct SelectiveNackRx {
    nack: NackOnce,
}

impl ReceiverRecovery for SelectiveNackRx {
    fn on_data(&mut self, rx: &RxView, a: &Arrival) -> Reply {
        // The first arrival beyond a gap reports the expected packet (instead of an ACK).
        if a.fresh && a.seq > rx.cum && self.nack.pending(rx.cum) {
            return self.nack.nack(rx.cum);
        }
        ack_if_due(rx, a)
    }
}

impl crate::scheme::Scheme<crate::transport::cc::PathInfo> for SelectiveNack {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = crate::scheme::NoParams;
    fn build(_p: &crate::scheme::NoParams, _path: &mut crate::transport::cc::PathInfo) -> Self {
        SelectiveNack
    }
}

impl crate::scheme::Companion<crate::transport::cc::PathInfo> for SelectiveNack {
    type Half = SelectiveNackRx;
    fn build_half(_p: &crate::scheme::NoParams) -> SelectiveNackRx {
        SelectiveNackRx::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board};
    use super::super::*;
    use super::*;

    #[test]
    fn resends_only_the_expected_packet_and_not_a_newer_transmission() {
        let mut b = Board::new(6, 10);
        let mut m = SelectiveNack;
        // Packet 4 (sent at t = 4) revealed that 2 is missing: resend 2 only.
        let _ = m.on_seq_nack(&mut b.ctx(Time(10)), 2, Time(4));
        assert_eq!(b.lost(), [2]);
        assert_eq!(b.conn.in_flight, 5 * 1000);
        // 3 was resent at t = 20; a NACK revealed by a packet sent at t = 5 is older.
        b.conn.board[3].sent_at = Time(20);
        let _ = m.on_seq_nack(&mut b.ctx(Time(21)), 3, Time(5));
        assert_eq!(b.lost(), [2]);
    }

    #[test]
    fn receiver_keeps_out_of_order_data_and_nacks_once() {
        let w = window(2, &[4, 5]);
        let rx = RxView { cum: 2, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let mut r = SelectiveNackRx::default();
        assert_eq!(r.admit(&rx, 4), Admit::Keep);
        let a = Arrival { seq: 4, fresh: true, ce: false, cum_before: 2, ack_due: true };
        assert_eq!(r.on_data(&rx, &a), Reply::SeqNack);
        // Same gap: ACK by the common rules; a duplicate never NACKs.
        assert_eq!(r.on_data(&rx, &Arrival { seq: 5, ..a }), Reply::Ack { sack_base: 3 });
        assert_eq!(r.on_data(&rx, &Arrival { seq: 5, fresh: false, ack_due: false, ..a }), Reply::None);
    }
}
