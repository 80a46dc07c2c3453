//! `sack` (default): the receiver keeps out-of-order packets and acknowledges with a cumulative
//! ACK plus a 64-packet bitmap; trimmed headers are NACKed at once; anything else is found by
//! the retransmission timeout (RTO). The SMaRTT-REPS and EQDS model.
//!
//! Both halves are the trait defaults: NACKed and timed-out packets are resent oldest first,
//! then new data; the receiver ACKs by the common rules with the bitmap just above the
//! cumulative point.

use super::{ReceiverRecovery, SenderRecovery};

/// Registry name.
pub const NAME: &str = "sack";
/// Registry summary.
pub const SUMMARY: &str = "cumulative ACK + 64-packet SACK bitmap; NACK per trimmed header; RTO";

/// Sender half: every hook at its default.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sack;

impl SenderRecovery for Sack {}

/// Receiver half: every hook at its default.
#[derive(Clone, Copy, Debug, Default)]
pub struct SackRx;

impl ReceiverRecovery for SackRx {}

impl crate::scheme::Scheme<crate::transport::cc::PathInfo> for Sack {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = crate::scheme::NoParams;
    fn build(_p: &crate::scheme::NoParams, _path: &mut crate::transport::cc::PathInfo) -> Self {
        Sack
    }
}

impl crate::scheme::Companion<crate::transport::cc::PathInfo> for Sack {
    type Half = SackRx;
    fn build_half(_p: &crate::scheme::NoParams) -> SackRx {
        SackRx
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board};
    use super::super::*;
    use super::*;

    #[test]
    fn trimming_nack_requeues_only_the_current_transmission() {
        let mut b = Board::new(4, 10);
        // Packet 2 was sent at t = 2: a NACK about a transmission at t = 1 is stale.
        assert_eq!(Sack.on_nack(&mut b.ctx(Time(10)), &LossReport { seq: 2, sent_at: Time(1) }), None);
        assert_eq!(Sack.on_nack(&mut b.ctx(Time(10)), &LossReport { seq: 2, sent_at: Time(2) }), Some(1000));
        assert_eq!(b.lost(), [2]);
        // Resent before new data.
        assert_eq!(Sack.next_to_send(&mut b.ctx(Time(10))), Some((2, true)));
        assert_eq!(Sack.on_timeout(&mut b.ctx(Time(10))), Actions::NONE);
    }

    #[test]
    fn receiver_acks_when_due_with_the_bitmap_above_the_cumulative_point() {
        let w = window(3, &[5]);
        let rx = RxView { cum: 3, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let mut r = SackRx;
        assert_eq!(r.admit(&rx, 5), Admit::Keep);
        let a = Arrival { seq: 5, fresh: true, ce: false, cum_before: 3, ack_due: true };
        assert_eq!(r.on_data(&rx, &a), Reply::Ack { sack_base: 4 });
        assert_eq!(r.on_data(&rx, &Arrival { ack_due: false, ..a }), Reply::None);
    }
}
