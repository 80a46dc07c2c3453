//! `mprdma`: MP-RDMA's congestion control, a per-ACK ECN AIMD window (DCTCP-like signal, but
//! reacting on every ACK instead of once per RTT): +1/cwnd packet per unmarked ACK, −½ packet
//! per marked one.
//!
//! **Follows:** Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI 2018 (§3.2, the
//! per-ACK window update of its congestion control); spec `smartt-reps.md` §2.14.5 (MPRDMA as a
//! SMaRTT-REPS baseline, ASSUMPTIONS) and §2.14 (bounds and initial window common to all
//! window-based baselines). MP-RDMA's own virtual-path selection and out-of-order window are not
//! modelled: as in the spec, the path selector (`transport.lb`, REPS in the paper's comparisons)
//! chooses the paths.
//!
//! Window update, in bytes with `mtu` = full data packet on the wire:
//! - unmarked ACK of `b` newly acknowledged bytes: `cwnd += mtu · b / cwnd` (for a full packet
//!   `mtu²/cwnd`, i.e. +1/cwnd packet; spec §2.14.5);
//! - ECN-marked ACK: `cwnd −= decrease_pkts · mtu` (½ packet; spec §2.14.5);
//! - NACK (trimmed packet): treated as a marked ACK (spec §2.14.5);
//! - retransmission timeout: treated as one marked ACK per packet it declares lost (spec
//!   §2.14.5 "RTO → same"; counting per lost packet is our reading, `type=assumption`: it makes a
//!   timeout cost what the same losses would have cost as NACKs with trimming on);
//! - then clamp to `[cwnd_min_pkts · mtu, cwnd_max_bdp · bdp]`.
//!
//! With coalesced ACKs (`ack_every` > 1) one ACK stands for several packets: the marked ones
//! (`AckEvent::marked_pkts`) each take the decrease, and the unmarked share of the newly acked
//! bytes takes the increase, so the window moves as if every packet had been ACKed.
//!
//! **Parameters** (`[transport.cc] name = "mprdma"`):
//! - `cwnd_init_bdp` = 1.25: initial window in path BDPs (spec §2.14 ASSUMPTION for all window
//!   baselines, §2.15 U9).
//! - `cwnd_max_bdp` = 1.25: upper bound in BDPs (spec §2.14 "clamped to [1 MTU, 1.25·BDP]", §2.1).
//! - `cwnd_min_pkts` = 1: lower bound in full packets (spec §2.14, §2.1 `cwnd_min = 1 MTU`).
//! - `decrease_pkts` = 0.5: window cut per marked ACK, in packets (MP-RDMA §3.2; spec §2.14.5).
//!
//! The increase has no parameter: +1/cwnd packet per ACK is the algorithm (one packet per RTT).
//!
//! The window is kept in fixed point (1/65536 byte) so that it stays integer state (STYLE §1.1)
//! while the tiny per-ACK increments (≈ 27 B on a 150-packet window) accumulate exactly.

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "mprdma";
/// Registry summary.
pub const SUMMARY: &str = "MP-RDMA per-ACK ECN AIMD: +1/cwnd packet per clean ACK, -1/2 packet per marked ACK or NACK";

/// Fractional bits of the fixed-point window.
const FRAC: u32 = 16;

/// Parameters of `mprdma`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MprdmaParams {
    /// Initial window, in BDPs of the connection's path.
    pub cwnd_init_bdp: f64,
    /// Largest window, in BDPs.
    pub cwnd_max_bdp: f64,
    /// Smallest window, in full packets.
    pub cwnd_min_pkts: u32,
    /// Window decrease per ECN-marked ACK (or NACK), in packets.
    pub decrease_pkts: f64,
}

impl Default for MprdmaParams {
    fn default() -> Self {
        //= spec smartt-reps.md §2.14 (common baseline window), §2.14.5 (MPRDMA)
        //# Start at 1.25 BDP, stay within [1 MTU, 1.25 BDP], lose half a packet per mark.
        MprdmaParams { cwnd_init_bdp: 1.25, cwnd_max_bdp: 1.25, cwnd_min_pkts: 1, decrease_pkts: 0.5 }
    }
}

impl MprdmaParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.cwnd_init_bdp.is_finite() && self.cwnd_init_bdp > 0.0) {
            return Err(Error::invalid(
                "transport.cc.cwnd_init_bdp",
                format!("{}: must be a positive multiple of the BDP", self.cwnd_init_bdp),
            ));
        }
        if !(self.cwnd_max_bdp.is_finite() && self.cwnd_max_bdp > 0.0) {
            return Err(Error::invalid(
                "transport.cc.cwnd_max_bdp",
                format!("{}: must be a positive multiple of the BDP", self.cwnd_max_bdp),
            ));
        }
        if self.cwnd_min_pkts == 0 {
            return Err(Error::invalid("transport.cc.cwnd_min_pkts", "0: the window must hold at least one packet"));
        }
        if !(self.decrease_pkts.is_finite() && self.decrease_pkts > 0.0) {
            return Err(Error::invalid(
                "transport.cc.decrease_pkts",
                format!("{}: must be a positive number of packets", self.decrease_pkts),
            ));
        }
        if self.cwnd_init_bdp > self.cwnd_max_bdp {
            return Err(Error::invalid(
                "transport.cc.cwnd_init_bdp",
                format!("{}: must not exceed cwnd_max_bdp ({})", self.cwnd_init_bdp, self.cwnd_max_bdp),
            ));
        }
        Ok(())
    }
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Mprdma {
    /// Window in 1/2^16 bytes.
    cwnd: u64,
    min: u64,
    max: u64,
    /// Per-mark decrease in 1/2^16 bytes.
    decrease: u64,
    mtu: u64,
}

impl Mprdma {
    /// A controller for a connection on `path`.
    pub fn new(p: &MprdmaParams, path: &PathInfo) -> Self {
        let mtu = path.mtu_bytes.max(Bytes(1));
        let min = (p.cwnd_min_pkts.max(1) as u64 * mtu).0 << FRAC;
        // A BDP bound below the minimum (tiny fabrics) gives way to the minimum.
        let max = (((p.cwnd_max_bdp * path.bdp_bytes.0 as f64).ceil() as u64) << FRAC).max(min);
        let init = (((p.cwnd_init_bdp * path.bdp_bytes.0 as f64).ceil() as u64) << FRAC).clamp(min, max);
        let decrease = (p.decrease_pkts * mtu.0 as f64 * (1u64 << FRAC) as f64).round() as u64;
        Mprdma { cwnd: init, min, max, decrease, mtu: mtu.0 }
    }

    /// The window in bytes, with its fraction (for tests and traces).
    pub fn cwnd_bytes(&self) -> f64 {
        self.cwnd as f64 / (1u64 << FRAC) as f64
    }

    /// `n` congestion signals: −decrease each, floored at the minimum.
    fn cut(&mut self, n: u64) {
        //= MP-RDMA §3.2; spec smartt-reps.md §2.14.5
        //# Each marked ACK (or NACK, or lost packet) takes half a packet off the window.
        self.cwnd = self.cwnd.saturating_sub(self.decrease.saturating_mul(n)).max(self.min);
    }
}

impl CongestionControl for Mprdma {
    fn on_ack(&mut self, ev: &AckEvent) {
        // Packets this ACK stands for, and how many of them were marked: at least the one that
        // triggered it if its own CE echo is set.
        let covered = ev.acked_bytes.div_ceil(Bytes(self.mtu)).max(1);
        let marked = (ev.marked_pkts as u64).max(ev.ecn as u64).min(covered);
        if marked > 0 {
            self.cut(marked);
        }
        let clean_bytes = ev.acked_bytes * (covered - marked) / covered;
        if clean_bytes > Bytes::ZERO {
            //= MP-RDMA §3.2; spec smartt-reps.md §2.14.5
            //# A clean ACK grows the window by 1/cwnd packet: mtu·bytes/cwnd, computed in fixed point
            //# as (mtu·bytes·2^32)/cwnd_fp.
            let inc = ((self.mtu as u128 * clean_bytes.0 as u128) << (2 * FRAC)) / self.cwnd as u128;
            self.cwnd = (self.cwnd as u128 + inc).min(self.max as u128) as u64;
        }
    }

    fn on_nack(&mut self, _ev: &NackEvent) {
        //= spec smartt-reps.md §2.14.5
        //# A trimmed packet is a congestion signal like a mark.
        self.cut(1);
    }

    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        //= spec smartt-reps.md §2.14.5 ("RTO → same"); type=assumption (one cut per lost packet)
        self.cut(ev.lost_bytes.div_ceil(Bytes(self.mtu)).max(1));
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd >> FRAC)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

impl crate::scheme::Scheme<PathInfo> for Mprdma {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("cwnd_init_bdp", 0.001, 1000.0), crate::scheme::Limit::new("cwnd_max_bdp", 0.001, 1000.0), crate::scheme::Limit::new("cwnd_min_pkts", 1.0, 1000000.0), crate::scheme::Limit::new("decrease_pkts", 0.001, 1000.0)];
    type Params = MprdmaParams;
    fn check(p: &MprdmaParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &MprdmaParams, path: &mut PathInfo) -> Self {
        Mprdma::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    use crate::transport::cc::testing::{self, MTU};
    /// 100 full packets of BDP: the window starts at 1.25 × 100 = 125 packets = 512,000 B.
    const PATH: PathInfo = testing::path(400_000_000_000, 100 * MTU);
    use crate::transport::cc::testing::ACK;

    fn cc() -> Mprdma {
        Mprdma::new(&MprdmaParams::default(), &PATH)
    }

    #[test]
    fn starts_at_one_and_a_quarter_bdp() {
        assert_eq!(cc().window(), Some(512_000));
    }

    //= type=test
    //# Unmarked ACK: +mtu²/cwnd bytes = +1/cwnd packet.
    #[test]
    fn clean_ack_adds_one_over_cwnd_packet() {
        let mut c = Mprdma::new(&MprdmaParams { cwnd_init_bdp: 1.0, ..MprdmaParams::default() }, &PATH);
        // cwnd = 100 packets = 409,600 B; one clean full-packet ACK adds 4096²/409,600 = 40.96 B
        // (1/100 packet).
        let before = c.cwnd_bytes();
        c.on_ack(&ACK);
        assert!((c.cwnd_bytes() - before - 40.96).abs() < 1e-3, "increase {}", c.cwnd_bytes() - before);
        // A cwnd's worth of clean ACKs (100) adds about one packet (a little less, as cwnd grows).
        for _ in 0..99 {
            c.on_ack(&ACK);
        }
        let grown = (c.cwnd_bytes() - before) / MTU as f64;
        assert!((0.99..1.0).contains(&grown), "grew {grown} packets in one window of ACKs");
        // A short last packet counts for its bytes: 1,024 B on a ~101-packet window.
        let w = c.cwnd_bytes();
        c.on_ack(&AckEvent { acked_bytes: Bytes(1024), ..ACK });
        assert!((c.cwnd_bytes() - w - MTU as f64 * 1024.0 / w).abs() < 1e-3);
    }

    //= type=test
    //# Marked ACK: −½ packet = −2048 B; a NACK likewise; a timeout per lost packet.
    #[test]
    fn marked_ack_nack_and_timeout_remove_half_a_packet_each() {
        let mut c = cc();
        c.on_ack(&AckEvent { ecn: true, marked_pkts: 1, ..ACK });
        assert_eq!(c.window(), Some(512_000 - 2048));
        c.on_nack(&NackEvent { now: Time::ZERO, bytes: Bytes(MTU), cause: super::super::LossCause::Trimmed, entropy: 0, in_flight: 0, sent_at: Time::ZERO, last_hop_paced: false });
        assert_eq!(c.window(), Some(512_000 - 2 * 2048));
        c.on_timeout(&TimeoutEvent { now: Time::ZERO, lost_bytes: Bytes(3 * MTU), in_flight: 0, consecutive: 1, latest_sent_at: Time::ZERO });
        assert_eq!(c.window(), Some(512_000 - 5 * 2048));
        // An ACK without new bytes still carries its mark.
        c.on_ack(&AckEvent { acked_bytes: Bytes::ZERO, ecn: true, marked_pkts: 1, ..ACK });
        assert_eq!(c.window(), Some(512_000 - 6 * 2048));
    }

    #[test]
    fn coalesced_ack_splits_marked_and_clean_packets() {
        // One ACK for 4 packets, 1 marked: −2048 B, then +mtu·(3·4096)/cwnd.
        let mut c = Mprdma::new(&MprdmaParams { cwnd_init_bdp: 1.0, ..MprdmaParams::default() }, &PATH);
        c.on_ack(&AckEvent { acked_bytes: Bytes(4 * MTU), ecn: false, marked_pkts: 1, ..ACK });
        let after_cut = 409_600.0 - 2048.0;
        let expect = after_cut + (MTU * 3 * MTU) as f64 / after_cut;
        assert!((c.cwnd_bytes() - expect).abs() < 1e-3, "{} vs {expect}", c.cwnd_bytes());
    }

    //= type=test
    //# The window stays within [1 MTU, 1.25 BDP].
    #[test]
    fn window_bounds_hold() {
        let mut c = cc();
        for _ in 0..10_000 {
            c.on_ack(&ACK);
            assert!(c.window().unwrap() <= 512_000);
        }
        assert_eq!(c.window(), Some(512_000), "many clean ACKs reach the cap");
        for _ in 0..10_000 {
            c.on_ack(&AckEvent { ecn: true, marked_pkts: 1, ..ACK });
            assert!(c.window().unwrap() >= MTU);
        }
        assert_eq!(c.window(), Some(MTU), "many marks reach one packet");
        c.on_timeout(&TimeoutEvent { now: Time::ZERO, lost_bytes: Bytes(1 << 30), in_flight: 0, consecutive: 9, latest_sent_at: Time::ZERO });
        assert_eq!(c.window(), Some(MTU));
        // From the floor, one clean ACK adds a whole packet (cwnd = 1 packet).
        c.on_ack(&ACK);
        assert_eq!(c.window(), Some(2 * MTU));
    }

    #[test]
    fn custom_bounds_and_tiny_bdp() {
        let p = MprdmaParams { cwnd_init_bdp: 0.5, cwnd_max_bdp: 2.0, cwnd_min_pkts: 4, decrease_pkts: 1.0 };
        let mut c = Mprdma::new(&p, &PATH);
        assert_eq!(c.window(), Some(50 * MTU));
        c.on_ack(&AckEvent { ecn: true, marked_pkts: 1, ..ACK });
        assert_eq!(c.window(), Some(49 * MTU));
        // A BDP smaller than the minimum window: the minimum wins.
        let tiny = PathInfo { bdp_bytes: Bytes(MTU), ..PATH };
        assert_eq!(Mprdma::new(&p, &tiny).window(), Some(4 * MTU));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: MprdmaParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        let d = MprdmaParams::default;
        assert_eq!(key(MprdmaParams { cwnd_init_bdp: 0.0, ..d() }), "transport.cc.cwnd_init_bdp");
        assert_eq!(key(MprdmaParams { cwnd_init_bdp: 2.0, ..d() }), "transport.cc.cwnd_init_bdp");
        assert_eq!(key(MprdmaParams { cwnd_max_bdp: f64::NAN, ..d() }), "transport.cc.cwnd_max_bdp");
        assert_eq!(key(MprdmaParams { cwnd_min_pkts: 0, ..d() }), "transport.cc.cwnd_min_pkts");
        assert_eq!(key(MprdmaParams { decrease_pkts: -0.5, ..d() }), "transport.cc.decrease_pkts");
        assert!(d().validate().is_ok());
    }
}
