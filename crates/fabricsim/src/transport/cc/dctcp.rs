//! `dctcp`: Data Center TCP's window control: an additive-increase window whose multiplicative
//! decrease is scaled by α, a moving average of the fraction of ECN-marked data.
//!
//! **Follows:** Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1: once per window
//! of data α ← (1 − g)·α + g·F, F the fraction of the window's bytes that came back marked
//! (Eq. 1, g = 1/16); a window with marks cuts cwnd ← cwnd·(1 − α/2) once (Eq. 2); otherwise
//! the window grows as TCP's congestion avoidance, one full packet per window of ACKs.
//!
//! Modelling choices (`type=assumption`; the paper leaves them to TCP): no slow start — the window
//! starts at `init_window_bdp` of the path, like every other window scheme here; the cut uses the
//! α of the window in progress and happens on its first marked ACK (as Linux's `tcp_dctcp` enters
//! CWR once per window); α starts at `alpha_init` = 1 (Linux's default); a NACK of a trimmed packet
//! counts as a marked packet; a retransmission timeout resets the window to its minimum.
//!
//! **Parameters** (`[transport.cc] name = "dctcp"`): `g` = 1/16 (paper §3.1), `alpha_init` = 1,
//! `init_window_bdp` = 1, `max_window_bdp` = 1.25, `min_window_pkts` = 1.
//!
//! The window is integer state in 1/65536 byte, so that per-ACK increments of a few bytes add up
//! exactly.

use super::{AckEvent, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::scheme::{Limit, Scheme};
use crate::units::{BitsPerSec, Bytes};
use serde::{Deserialize, Serialize};

/// Fractional bits of the fixed-point window.
const FRAC: u32 = 16;

/// Parameters of `dctcp`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpParams {
    /// Weight of the newest window's marked fraction in α (paper §3.1: g = 1/16).
    pub g: f64,
    /// α before the first window ends (Linux `tcp_dctcp`: 1, i.e. the first marks halve cwnd).
    pub alpha_init: f64,
    /// Initial window in path BDPs.
    pub init_window_bdp: f64,
    /// Largest window in path BDPs.
    pub max_window_bdp: f64,
    /// Smallest window in full packets.
    pub min_window_pkts: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        //= DCTCP (SIGCOMM 2010) §3.1: g = 1/16
        DctcpParams { g: 1.0 / 16.0, alpha_init: 1.0, init_window_bdp: 1.0, max_window_bdp: 1.25, min_window_pkts: 1 }
    }
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Window in 1/2^16 bytes.
    cwnd: u64,
    min: u64,
    max: u64,
    mtu: u64,
    g: f64,
    alpha: f64,
    /// Bytes acknowledged and marked in the window in progress.
    win_acked: u64,
    win_marked: u64,
    /// The window in progress ends once this many bytes are acknowledged in it.
    win_len: u64,
    /// Whether the window in progress already took its cut.
    cut_done: bool,
}

impl Scheme<PathInfo> for Dctcp {
    const NAME: &'static str = "dctcp";
    const SUMMARY: &'static str = "DCTCP: +1 packet per window, cwnd x (1 - alpha/2) once per marked window, alpha = EWMA of the marked fraction";
    type Params = DctcpParams;
    const LIMITS: &'static [Limit] = &[
        Limit::new("g", 1e-6, 1.0),
        Limit::new("alpha_init", 0.0, 1.0),
        Limit::new("init_window_bdp", 1e-3, 1000.0),
        Limit::new("max_window_bdp", 1e-3, 1000.0),
        Limit::new("min_window_pkts", 1.0, 1e6),
    ];
    fn check(p: &DctcpParams, key: &str) -> Result<()> {
        if p.init_window_bdp > p.max_window_bdp {
            return Err(Error::invalid(format!("{key}.init_window_bdp"), format!("{}: must not exceed max_window_bdp ({})", p.init_window_bdp, p.max_window_bdp)));
        }
        Ok(())
    }
    fn build(p: &DctcpParams, path: &mut PathInfo) -> Self {
        let mtu = path.mtu_bytes.max(Bytes(1));
        let min = (p.min_window_pkts.max(1) as u64 * mtu).0 << FRAC;
        let max = (((p.max_window_bdp * path.bdp_bytes.0 as f64).ceil() as u64) << FRAC).max(min);
        let cwnd = (((p.init_window_bdp * path.bdp_bytes.0 as f64).ceil() as u64) << FRAC).clamp(min, max);
        Dctcp { cwnd, min, max, mtu: mtu.0, g: p.g, alpha: p.alpha_init, win_acked: 0, win_marked: 0, win_len: cwnd >> FRAC, cut_done: false }
    }
}

impl Dctcp {
    /// α now.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Bytes `acked` of which `marked` came back with CE; closes the window when it is full.
    fn account(&mut self, acked: u64, marked: u64) {
        if marked > 0 && !self.cut_done {
            //= DCTCP §3.1 Eq. 2: cwnd ← cwnd × (1 − α/2), once per window of data
            self.cwnd = ((self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(self.min);
            self.cut_done = true;
        }
        self.win_acked += acked;
        self.win_marked += marked;
        if self.win_acked >= self.win_len {
            //= DCTCP §3.1 Eq. 1: α ← (1 − g)·α + g·F, F = marked fraction of the last window
            let f = self.win_marked as f64 / self.win_acked.max(1) as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.win_acked = 0;
            self.win_marked = 0;
            self.win_len = (self.cwnd >> FRAC).max(self.mtu);
            self.cut_done = false;
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, ev: &AckEvent) {
        let marked = if ev.marked_pkts > 0 { (ev.marked_pkts as u64 * self.mtu).min(ev.acked_bytes.0) } else if ev.ecn { ev.acked_bytes.0 } else { 0 };
        let clean = ev.acked_bytes - Bytes(marked);
        if clean > Bytes::ZERO {
            // Congestion avoidance: mtu · b / cwnd per ACK of b bytes, one packet per window.
            let inc = ((self.mtu as u128 * clean.0 as u128) << (2 * FRAC)) / self.cwnd.max(1) as u128;
            self.cwnd = (self.cwnd + inc as u64).min(self.max);
        }
        self.account(ev.acked_bytes.0, marked);
    }

    fn on_nack(&mut self, ev: &NackEvent) {
        self.account(ev.bytes.0, ev.bytes.0);
    }

    fn on_timeout(&mut self, _ev: &TimeoutEvent) {
        self.cwnd = self.min;
        self.win_len = (self.cwnd >> FRAC).max(self.mtu);
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd >> FRAC)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{path, ACK, MTU};
    use super::*;

    /// A 100-packet BDP, window capped well above it.
    fn dctcp(alpha_init: f64) -> Dctcp {
        let p = DctcpParams { alpha_init, max_window_bdp: 4.0, ..Default::default() };
        Dctcp::build(&p, &mut path(400_000_000_000, 100 * MTU))
    }

    fn ack(ecn: bool) -> AckEvent {
        AckEvent { ecn, marked_pkts: ecn as u32, ..ACK }
    }

    //= type=test; DCTCP §3.1 Eq. 1: after n fully marked windows, α = 1 − (1 − g)^n from α = 0
    #[test]
    fn alpha_follows_the_marked_fraction() {
        let mut c = dctcp(0.0);
        for n in 1..=5 {
            // One window's worth of marked ACKs (the window shrinks after the first cut, so
            // feed until α moves).
            let before = c.alpha();
            while c.alpha() == before {
                c.on_ack(&ack(true));
            }
            let expect = 1.0 - (1.0f64 - 1.0 / 16.0).powi(n);
            assert!((c.alpha() - expect).abs() < 1e-12, "window {n}: α {} vs {expect}", c.alpha());
        }
    }

    //= type=test; DCTCP §3.1 Eq. 2: a marked window cuts cwnd by α/2, once
    #[test]
    fn one_cut_per_marked_window() {
        let mut c = dctcp(1.0);
        let w0 = c.window().unwrap();
        c.on_ack(&ack(true));
        // α = 1 halves the window (the marked ACK adds nothing).
        assert_eq!(c.window().unwrap(), w0 / 2);
        for _ in 0..10 {
            c.on_ack(&ack(true));
        }
        assert_eq!(c.window().unwrap(), w0 / 2, "further marks in the same window do not cut again");
    }

    //= type=test; congestion avoidance: one full packet per window of clean ACKs
    #[test]
    fn clean_window_adds_one_packet() {
        let mut c = dctcp(0.0);
        let w0 = c.window().unwrap();
        for _ in 0..(w0 / MTU) {
            c.on_ack(&ack(false));
        }
        // Σ mtu²/cwnd over cwnd/mtu ACKs = mtu, less the growth of cwnd during the window.
        let grown = c.window().unwrap() - w0;
        assert!((MTU - 50..=MTU).contains(&grown), "grew {grown} B over one window");
        assert_eq!(c.alpha(), 0.0);
    }

    #[test]
    fn limits_and_cross_checks_name_the_key() {
        let bad: super::super::CcConfig = toml::from_str("name = \"dctcp\"\ng = 2.0").unwrap();
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("transport.cc.g") && e.contains("1..=1") || e.contains("0.000001..=1"), "{e}");
        let bad: super::super::CcConfig = toml::from_str("name = \"dctcp\"\ninit_window_bdp = 2.0\nmax_window_bdp = 1.0").unwrap();
        assert!(bad.validate().unwrap_err().to_string().contains("transport.cc.init_window_bdp"));
    }
}
