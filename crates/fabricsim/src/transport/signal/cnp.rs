//! DCQCN's congestion notification packet (CNP; DCQCN, Zhu et al., SIGCOMM 2015, §3.2): the
//! notification point at the receiver answers CE-marked data with a CNP, at most one per
//! connection per `cnp_interval` (50 µs in the paper); the reaction point at the sender cuts
//! its rate (`CongestionControl::on_cnp`, `transport/cc/dcqcn.rs`).
//!
//! Two variants follow the ns-3 RDMA simulators: with `ooo_triggers_cnp` (ConWeave's ns-3), a
//! go-back-N gap also costs a CNP under the same interval; and where the reaction point takes
//! no CNP packets (the Mellanox model, `cnp_interval` unset), a sequence NACK carries the
//! notification as its congestion-echo flag (ns-3 `RdmaHw::ReceiveUdp` sets the NACK's CNP
//! flag as an ACK's), which the sender takes after going back.

use super::{Arrival, Signal};
use crate::transport::cc::CcConfig;
use crate::transport::cc::CongestionControl;
use crate::transport::Connection;
use crate::units::Time;

/// The notification point's parameters for one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct CnpSignal {
    /// At most one CNP per connection per this interval (`None`: receivers send no CNPs).
    pub interval: Option<Time>,
    /// A go-back-N gap also costs a CNP (`ooo_triggers_cnp`).
    pub on_gap: bool,
}

impl Signal for CnpSignal {
    const ON_GAP_NACK_FLAG: bool = true;

    fn build(cc: &CcConfig) -> Self {
        CnpSignal { interval: cc.cnp_interval(), on_gap: cc.ooo_triggers_cnp() }
    }

    #[inline(always)]
    fn on_arrival(&self, now: Time, arrival: Arrival, last_sent: &mut Time) -> bool {
        let Some(interval) = self.interval else { return false };
        // A gap's mark was answered on arrival already.
        let called = match arrival {
            Arrival::Data { ce } => ce,
            Arrival::Gap { ce } => self.on_gap && !ce,
        };
        if !called || (*last_sent != Time::MAX && now < *last_sent + interval) {
            return false;
        }
        *last_sent = now;
        true
    }

    fn flags_gap_nack(&self, ce: bool) -> bool {
        self.interval.is_none() && (ce || self.on_gap)
    }

    fn on_receipt(&self, now: Time, conn: &mut Connection) {
        conn.cc.on_cnp(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cnp_per_interval_for_marked_data_and_gaps_only_when_asked() {
        let s = CnpSignal { interval: Some(Time(50)), on_gap: false };
        let mut last = Time::MAX;
        assert!(!s.on_arrival(Time::ZERO, Arrival::Data { ce: false }, &mut last));
        assert!(s.on_arrival(Time(10), Arrival::Data { ce: true }, &mut last));
        assert!(!s.on_arrival(Time(59), Arrival::Data { ce: true }, &mut last), "within the interval");
        assert!(s.on_arrival(Time(60), Arrival::Data { ce: true }, &mut last));
        assert!(!s.on_arrival(Time(200), Arrival::Gap { ce: false }, &mut last), "gaps cost none by default");
        let g = CnpSignal { interval: Some(Time(50)), on_gap: true };
        let mut last = Time::MAX;
        assert!(g.on_arrival(Time::ZERO, Arrival::Gap { ce: false }, &mut last));
        assert!(!g.on_arrival(Time(100), Arrival::Gap { ce: true }, &mut last), "a marked gap was answered on arrival");
        assert!(!CnpSignal::default().on_arrival(Time::ZERO, Arrival::Data { ce: true }, &mut Time::MAX.clone()));
    }

    #[test]
    fn without_cnp_packets_a_gap_nack_carries_the_flag() {
        let mellanox = CnpSignal { interval: None, on_gap: false };
        assert!(mellanox.flags_gap_nack(true) && !mellanox.flags_gap_nack(false));
        assert!(CnpSignal { interval: None, on_gap: true }.flags_gap_nack(false));
        assert!(!CnpSignal { interval: Some(Time(50)), on_gap: true }.flags_gap_nack(true));
    }
}
