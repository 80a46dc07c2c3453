//! `rc_ooo`: a RoCE reliable connection whose receiver places out-of-order packets (direct data
//! placement and a PSN bitmap, as RoCE NICs do under adaptive routing) and never NACKs a gap;
//! a message completes once all its packets arrived. Every ACK carries the cumulative PSN and
//! echoes the PSN of the packet that triggered it (no selective bitmap); the requester
//! retransmits on its timeout only, going back to the oldest unacknowledged packet and resending
//! every packet not yet acknowledged.
//!
//! **Follows:** MCC paper §2.2 (per-packet adaptive routing under every scheme) with the MCC
//! spec's A-20: the receiver must tolerate the reordering AR causes, since a go-back-N receiver
//! ([`super::go_back_n`]) would NACK every reordering and resend spurious data; spec §2.11: ACKs
//! are cumulative, one per data packet for DCQCN and TIMELY (`transport.ack_every = 1`), and
//! out-of-order arrival never triggers a NACK or go-back-N. Unlike [`super::sack`], the sender
//! learns nothing of a gap's far side until the timeout.

use super::tcp::TcpRx;
use super::{Actions, SenderCtx, SenderRecovery};
use crate::scheme::NoParams;
use crate::transport::cc::PathInfo;

/// Sender half: the shared RTO, then everything unacknowledged again.
#[derive(Clone, Copy, Debug, Default)]
pub struct RcOoo;

impl SenderRecovery for RcOoo {
    //= spec mcc.md §2.11: no drops are expected under PFC; a loss is found by the timeout
    fn on_timeout(&mut self, ctx: &mut SenderCtx) -> Actions {
        ctx.declare_lost(0, u32::MAX);
        Actions::NONE
    }
}

impl crate::scheme::Scheme<PathInfo> for RcOoo {
    const NAME: &'static str = "rc_ooo";
    const SUMMARY: &'static str = "RoCE with out-of-order placement: receiver keeps reordered packets, never NACKs; cumulative ACKs echo each PSN; RTO resends all unacknowledged";
    const EXAMPLE: &'static [&'static str] = &["switch.trimming=false", "switch.buffer_bdp=0.3"];
    type Params = NoParams;
    fn build(_p: &NoParams, _path: &mut PathInfo) -> Self {
        RcOoo
    }
}

/// The receiver half is TCP's: every packet kept (the default admission), ACKs by the common
/// rules with the cumulative point only; spec mcc.md A-20: out-of-order arrivals are placed,
/// never NACKed.
impl crate::scheme::Companion<PathInfo> for RcOoo {
    type Half = TcpRx;
    fn build_half(_p: &NoParams) -> TcpRx {
        TcpRx
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{window, Board};
    use super::super::*;
    use super::*;

    #[test]
    fn out_of_order_arrivals_are_kept_and_never_nacked() {
        // Expected 3; 5 and 7 arrive first.
        let w = window(3, &[5]);
        let rx = RxView { cum: 3, window: &w, lowest_unacked: u32::MAX, now: Time::ZERO, base_rtt: Time::ZERO };
        let mut r = TcpRx;
        for seq in [5, 7, 9, 3] {
            assert_eq!(r.admit(&rx, seq), Admit::Keep, "{seq}");
            let a = Arrival { seq, fresh: true, ce: false, cum_before: 3, ack_due: true };
            assert_eq!(r.on_data(&rx, &a), Reply::Ack { sack_base: u32::MAX }, "a cumulative ACK, no NACK");
        }
        let a = Arrival { seq: 5, fresh: true, ce: false, cum_before: 3, ack_due: false };
        assert_eq!(r.on_data(&rx, &a), Reply::None, "coalesced");
    }

    #[test]
    fn timeout_resends_every_unacknowledged_packet() {
        let mut b = Board::new(5, 10);
        b.conn.board[2].state = SeqState::Acked;
        assert_eq!(RcOoo.on_timeout(&mut b.ctx(Time(50))), Actions::NONE);
        assert_eq!(b.lost(), [0, 1, 3, 4]);
    }
}
