//! `timely`: TIMELY, RTT-gradient rate control of an RDMA NIC, in the per-packet-RTT form of the
//! HPCC ns-3 simulator (its `CC_MODE 7`) that the MCC paper's TIMELY+AR baseline uses.
//!
//! **Follows:** Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015, §4.2 Algorithm 1 (the gradient: an EWMA of successive RTT differences
//! normalised by `minRTT`; additive increase below `T_low`, multiplicative decrease above
//! `T_high`, gradient-proportional decrease in between, hyper-active increase after 5
//! consecutive increases), with the constants and the once-per-RTT cadence of the MCC paper's
//! baseline as the mcc spec gives them (§2.10.2, A-24: the HPCC ns-3 defaults scaled to the NIC
//! rate). The MCC paper (§2.2) calls TIMELY's signal per packet: every ACK echoes its data
//! packet's send time, so the sample is that packet's RTT.
//!
//! **Cadence** (spec §2.10.2): the rate changes at most once per round trip. An ACK may update
//! only once the bytes acknowledged exceed the bytes that had been sent at the previous update
//! (the byte form of HPCC's `ack_seq > last_update_seq`, then `last_update_seq = snd_nxt`);
//! other ACKs are ignored. The first such ACK only records its RTT.
//!
//! **Update** for an RTT sample `rtt` with the previous update's sample `prev`:
//! `diff = (1 − α)·diff + α·(rtt − prev)`, `g = diff / minRTT`; then
//! - `rtt < T_low`: increase;
//! - `rtt > T_high`: `rate × (1 − β·(1 − T_high/rtt))`;
//! - `g ≤ 0`: increase;
//! - else `rate × max(0, 1 − β·g)`;
//!
//! where an increase adds `R_AI`, or `R_HAI` once 5 increases came in a row (a decrease resets
//! the count). The rate stays within `[min_rate, line rate]` and starts at the line rate; the
//! sender paces every packet at the rate, with no window unless `window_bdp` sets one (the
//! HPCC ns-3 simulator's `HAS_WIN`, which caps every mode), scaled by rate / line rate with
//! `window_scales_with_rate` (its `VAR_WIN`). The window counts in BDPs of the connection's path
//! (`bdp_of = "path"`, the default) or of the network (`"network"`: host rate × the fabric's
//! longest-path base RTT for every connection, the simulator's `GLOBAL_T 1`).
//!
//! **Parameters** (`[transport.cc] name = "timely"`, spec §2.10.2): `alpha` 0.875 (the EWMA
//! weight of the newest difference), `beta` 0.8, `t_low_us` 50, `t_high_us` 500, `min_rtt_us`
//! 20, `rate_ai_mbps` (unset: 10 Mb/s per 10 Gb/s of NIC rate, 100 Mb/s at 100 G),
//! `rate_hai_mbps` (unset: 50 Mb/s per 10 Gb/s, 500 Mb/s at 100 G), `hai_after` 5,
//! `min_rate_mbps` 1000.
//!
//! **Differences** from the TIMELY paper: per-packet RTT rather than one per 16–64 KB
//! completion, and no RTT-based pacing of segments (the spec's choice: the MCC paper treats
//! TIMELY's signal as per packet, as the HPCC code does).

use super::{AckEvent, BdpOf, CongestionControl, PathInfo};
use crate::error::{Error, Result};
use crate::scheme::Limit;
use crate::units::{us_to_ps, BitsPerSec, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "timely";
/// Registry summary.
pub const SUMMARY: &str =
    "TIMELY (HPCC ns-3 form): per-packet RTT, one rate update per RTT on the RTT gradient; AI below T_low, cut above T_high, HAI after 5 increases";

/// Parameters of `timely`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimelyParams {
    /// EWMA weight of the newest RTT difference.
    pub alpha: f64,
    /// Multiplicative-decrease factor β.
    pub beta: f64,
    /// Below this RTT the rate always increases, µs.
    pub t_low_us: f64,
    /// Above this RTT the rate always decreases, µs.
    pub t_high_us: f64,
    /// The gradient's normaliser `minRTT`, µs.
    pub min_rtt_us: f64,
    /// Additive increase `R_AI`, Mb/s; unset = 10 Mb/s per 10 Gb/s of NIC rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ai_mbps: Option<f64>,
    /// Hyper-active increase `R_HAI`, Mb/s; unset = 50 Mb/s per 10 Gb/s of NIC rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_hai_mbps: Option<f64>,
    /// Consecutive increases after which each increase adds `R_HAI`.
    pub hai_after: u32,
    /// Smallest rate, Mb/s (at most the line rate).
    pub min_rate_mbps: f64,
    /// Optional window, in BDPs (of the path or the network: `bdp_of`); unset = none (HPCC ns-3
    /// `HAS_WIN 0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_bdp: Option<f64>,
    /// Which BDP `window_bdp` counts in: `"path"` (default, the connection's own path: host rate
    /// × its base RTT) or `"network"` (host rate × the fabric's longest-path base RTT, the same
    /// for every connection: the HPCC ns-3 simulator's `GLOBAL_T 1`).
    pub bdp_of: BdpOf,
    /// Whether the window scales with the rate (`window × rate / line`; HPCC ns-3 `VAR_WIN`).
    pub window_scales_with_rate: bool,
}

impl Default for TimelyParams {
    fn default() -> Self {
        //= spec mcc.md §2.10.2 (HPCC ns-3 CC_MODE 7 defaults, A-24)
        //# α 0.875, β 0.8, T_low 50 µs, T_high 500 µs, minRTT 20 µs, R_AI 10 Mb/s and R_HAI
        //# 50 Mb/s per 10 G of NIC rate, HAI after 5 increases, min rate 1000 Mb/s.
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low_us: 50.0,
            t_high_us: 500.0,
            min_rtt_us: 20.0,
            rate_ai_mbps: None,
            rate_hai_mbps: None,
            hai_after: 5,
            min_rate_mbps: 1000.0,
            window_bdp: None,
            bdp_of: BdpOf::Path,
            window_scales_with_rate: false,
        }
    }
}

fn key(field: &str) -> String {
    format!("transport.cc.{field}")
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Timely {
    alpha: f64,
    beta: f64,
    t_low: Time,
    t_high: Time,
    min_rtt: f64,
    rate_ai: f64,
    rate_hai: f64,
    hai_after: u32,
    min_rate: f64,
    line_rate: f64,
    /// Current rate, bit/s.
    rate: f64,
    /// EWMA of RTT differences, ps.
    rtt_diff: f64,
    /// RTT of the previous update (`None` before the first).
    prev_rtt: Option<Time>,
    /// Increases in a row.
    increases: u32,
    /// Wire bytes handed to the NIC so far.
    sent: u64,
    /// Wire bytes acknowledged so far.
    acked: u64,
    /// `sent` at the previous update: the next update needs `acked` beyond it.
    update_after: u64,
    /// The window before scaling, bytes (`None`: no window).
    window: Option<u64>,
    /// `window_scales_with_rate`.
    window_scales: bool,
}

impl Timely {
    /// A controller at line rate for a connection on `path`.
    pub fn new(p: &TimelyParams, path: &PathInfo) -> Self {
        let line = path.host_rate.0 as f64;
        //= spec mcc.md §2.10.2: R_AI = 10 Mb/s × bw/10G, R_HAI = 50 Mb/s × bw/10G
        let per_10g = line / 10e9;
        Timely {
            alpha: p.alpha,
            beta: p.beta,
            t_low: us_to_ps(p.t_low_us),
            t_high: us_to_ps(p.t_high_us),
            min_rtt: us_to_ps(p.min_rtt_us).0 as f64,
            rate_ai: p.rate_ai_mbps.map_or(10e6 * per_10g, |m| m * 1e6),
            rate_hai: p.rate_hai_mbps.map_or(50e6 * per_10g, |m| m * 1e6),
            hai_after: p.hai_after,
            min_rate: (p.min_rate_mbps * 1e6).min(line),
            line_rate: line,
            rate: line,
            rtt_diff: 0.0,
            prev_rtt: None,
            increases: 0,
            sent: 0,
            acked: 0,
            update_after: 0,
            window: super::window_of_bdps(p.window_bdp, p.bdp_of, path),
            window_scales: p.window_scales_with_rate,
        }
    }

    /// The current rate, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    /// One rate update for the RTT sample `rtt` (TIMELY Algorithm 1 as spec §2.10.2 gives it).
    fn update(&mut self, rtt: Time, prev: Time) {
        let new_diff = rtt.0 as f64 - prev.0 as f64;
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * new_diff;
        let gradient = self.rtt_diff / self.min_rtt;
        let cut = if rtt < self.t_low {
            None
        } else if rtt > self.t_high {
            //= TIMELY Alg. 1: rate ← rate·(1 − β·(1 − T_high/rtt))
            Some(1.0 - self.beta * (1.0 - self.t_high.0 as f64 / rtt.0 as f64))
        } else if gradient <= 0.0 {
            None
        } else {
            //= TIMELY Alg. 1: rate ← rate·(1 − β·normalized_gradient)
            Some((1.0 - self.beta * gradient).max(0.0))
        };
        match cut {
            None => {
                //= TIMELY Alg. 1: HAI mode after N = 5 completions of increase in a row
                let step = if self.increases < self.hai_after { self.rate_ai } else { self.rate_hai };
                self.rate = (self.rate + step).min(self.line_rate);
                self.increases += 1;
            }
            Some(factor) => {
                self.rate = (self.rate * factor).max(self.min_rate);
                self.increases = 0;
            }
        }
    }
}

impl CongestionControl for Timely {
    fn on_send(&mut self, _now: Time, bytes: u64) {
        self.sent += bytes;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.acked += ev.acked_bytes.0;
        //= spec mcc.md §2.10.2: "The rate is updated once per RTT"; other ACKs are ignored
        if self.acked <= self.update_after && self.prev_rtt.is_some() {
            return;
        }
        if let Some(prev) = self.prev_rtt {
            self.update(ev.rtt, prev);
        }
        self.prev_rtt = Some(ev.rtt);
        self.update_after = self.sent;
    }

    fn window(&self) -> Option<u64> {
        super::rate_window(self.window, self.window_scales, self.rate as u64, self.line_rate as u64)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(BitsPerSec((self.rate.round() as u64).max(1)))
    }
}

impl crate::scheme::Scheme<PathInfo> for Timely {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = TimelyParams;
    const LIMITS: &'static [Limit] = &[
        Limit::new("alpha", 0.0, 1.0),
        // 1 ns to 1 s: positive, far from overflowing picosecond arithmetic.
        Limit::new("t_low_us", 0.001, 1e6),
        Limit::new("t_high_us", 0.001, 1e6),
        Limit::new("min_rtt_us", 0.001, 1e6),
        Limit::new("rate_ai_mbps", 1e-3, 1e7),
        Limit::new("rate_hai_mbps", 1e-3, 1e7),
        Limit::new("hai_after", 0.0, 1e6),
        Limit::new("min_rate_mbps", 1e-3, 1e7),
        Limit::new("beta", 1e-6, 0.999999),
        Limit::new("window_bdp", 0.001, 1000.0),
    ];
    fn check(p: &TimelyParams, _key: &str) -> Result<()> {
        if !(p.beta > 0.0 && p.beta < 1.0) {
            return Err(Error::invalid(key("beta"), format!("{}: the decrease factor must lie strictly between 0 and 1", p.beta)));
        }
        if p.t_low_us >= p.t_high_us {
            return Err(Error::invalid(key("t_low_us"), format!("{} µs: must be below t_high_us ({} µs)", p.t_low_us, p.t_high_us)));
        }
        super::check_rate_window(p.window_bdp, p.window_scales_with_rate)
    }
    fn build(p: &TimelyParams, path: &mut PathInfo) -> Self {
        Timely::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{self, ACK, MTU};
    use crate::units::US;

    /// A 100 Gb/s NIC.
    const PATH: PathInfo = testing::path(100_000_000_000, 100 * MTU);

    fn cc() -> Timely {
        Timely::new(&TimelyParams::default(), &PATH)
    }

    /// Sends one packet, then delivers its ACK with RTT `rtt_us`: one round trip per call.
    fn round(c: &mut Timely, rtt_us: f64) {
        c.on_send(Time::ZERO, MTU);
        c.on_ack(&AckEvent { rtt: Time((rtt_us * US.0 as f64) as u64), ..ACK });
    }

    //= type=test
    //# HPCC ns-3 GLOBAL_T 1: every QP's window is the largest BDP of any host pair.
    #[test]
    fn a_window_of_network_bdps_counts_the_longest_path() {
        // PATH's own BDP is 100 packets over 10 µs; here the network's longest RTT is 3× that.
        let far = PathInfo { net_base_rtt: 30 * US, ..PATH };
        let w = |bdp_of| Timely::new(&TimelyParams { window_bdp: Some(1.0), bdp_of, ..TimelyParams::default() }, &far).window();
        assert_eq!(w(BdpOf::Path), Some(100 * MTU));
        assert_eq!(w(BdpOf::Network), Some(375_000), "100 Gb/s × 30 µs");
    }

    #[test]
    fn a_window_caps_it_when_asked_and_can_follow_the_rate() {
        // PATH: 100 Gb/s, a BDP of 100 packets.
        let with = |scales| Timely::new(&TimelyParams { window_bdp: Some(1.0), window_scales_with_rate: scales, ..TimelyParams::default() }, &PATH);
        assert_eq!(with(false).window(), Some(100 * MTU));
        let mut c = with(true);
        assert_eq!(c.window(), Some(100 * MTU), "at line rate the whole window");
        // An RTT above T_high cuts the rate; the window follows it (HPCC ns-3 VAR_WIN).
        round(&mut c, 30.0);
        round(&mut c, 1000.0);
        let expect = (100 * MTU) as f64 * c.rate_bps() / 100e9;
        assert!(c.rate_bps() < 100e9 && (c.window().unwrap() as f64 - expect).abs() <= 1.0, "{} vs {expect}", c.window().unwrap());
        let e = <Timely as crate::scheme::Scheme<PathInfo>>::check(&TimelyParams { window_scales_with_rate: true, ..TimelyParams::default() }, "transport.cc").unwrap_err().to_string();
        assert!(e.contains("transport.cc.window_scales_with_rate") && e.contains("window_bdp"), "{e}");
    }

    #[test]
    fn constants_scale_with_the_nic_rate() {
        let c = cc();
        assert_eq!(c.rate_bps(), 100e9, "starts at line rate");
        assert_eq!((c.rate_ai, c.rate_hai, c.min_rate), (100e6, 500e6, 1e9));
        assert_eq!(c.window(), None);
    }

    #[test]
    fn one_update_per_round_trip() {
        let mut c = cc();
        // Ten packets out, then their ACKs: the first records the RTT, the next nine are
        // within the same round trip (nothing sent since) and are ignored.
        for _ in 0..10 {
            c.on_send(Time::ZERO, MTU);
        }
        for i in 0..10 {
            c.on_ack(&AckEvent { rtt: (600 + 100 * i) * US, ..ACK });
        }
        assert_eq!(c.rate_bps(), 100e9, "no update in the first round trip");
        assert_eq!(c.prev_rtt, Some(600 * US));
        // Bytes acknowledged must pass what had been sent at the last update: the ACKs above
        // covered everything, so the next one (of a new packet) updates, against 600 µs.
        round(&mut c, 700.0);
        let want = 100e9 * (1.0 - 0.8 * (1.0 - 500.0 / 700.0));
        assert!((c.rate_bps() - want).abs() < 1.0, "{} vs {want}", c.rate_bps());
    }

    #[test]
    fn additive_then_hyper_increase_after_five() {
        let mut c = cc();
        round(&mut c, 100.0);
        // Cut first so there is room to grow: a rising RTT in (T_low, T_high) cuts by β·g.
        round(&mut c, 110.0);
        let diff = 0.875 * 10.0;
        let r0 = 100e9 * (1.0 - 0.8 * diff / 20.0);
        assert!((c.rate_bps() - r0).abs() < 1.0, "{} vs {r0}", c.rate_bps());
        // Below T_low: five additive increases of 100 Mb/s, then 500 Mb/s each.
        let mut want = r0;
        for i in 0..8 {
            round(&mut c, 30.0);
            want += if i < 5 { 100e6 } else { 500e6 };
            assert!((c.rate_bps() - want).abs() < 1.0, "step {i}: {} vs {want}", c.rate_bps());
        }
        // A cut resets the count: the next increase is additive again.
        round(&mut c, 600.0);
        let cut = c.rate_bps();
        assert!(cut < want);
        round(&mut c, 20.0);
        assert!((c.rate_bps() - (cut + 100e6)).abs() < 1.0);
    }

    #[test]
    fn gradient_decides_between_the_thresholds() {
        let mut c = cc();
        round(&mut c, 200.0);
        // Falling RTT inside (T_low, T_high): gradient < 0, increase (capped at line rate).
        round(&mut c, 150.0);
        assert_eq!(c.rate_bps(), 100e9);
        // The EWMA still remembers the fall: a small rise keeps the gradient ≤ 0.
        // diff = 0.125·(−43.75) + 0.875·5 = −1.09… µs
        round(&mut c, 155.0);
        assert_eq!(c.rate_bps(), 100e9);
        // A large rise: gradient > 0, cut by β·g (never below the minimum rate).
        round(&mut c, 255.0);
        let d: f64 = 0.125 * (0.125 * -43.75 + 0.875 * 5.0) + 0.875 * 100.0;
        let want = (100e9 * (1.0 - 0.8 * d / 20.0)).max(1e9);
        assert!((c.rate_bps() - want).abs() < 1.0, "{} vs {want}", c.rate_bps());
        // Far above T_high, repeatedly: the rate floors at min_rate.
        for _ in 0..50 {
            round(&mut c, 5000.0);
        }
        assert_eq!(c.rate_bps(), 1e9);
        assert_eq!(c.pacing_rate(), Some(BitsPerSec(1_000_000_000)));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let err = |t: &str| -> String {
            let c: crate::transport::cc::CcConfig = toml::from_str(&format!("name = \"timely\"\n{t}")).unwrap();
            c.validate().unwrap_err().to_string()
        };
        for (t, k) in [
            ("beta = 1.0", "transport.cc.beta"),
            ("beta = 0.0", "transport.cc.beta"),
            ("t_low_us = 500.0", "transport.cc.t_low_us"),
            ("t_low_us = 0.0", "transport.cc.t_low_us"),
            ("alpha = 1.5", "transport.cc.alpha"),
            ("min_rtt_us = 0.0", "transport.cc.min_rtt_us"),
        ] {
            let e = err(t);
            assert!(e.contains(k), "{t}: {e}");
        }
    }
}
