//! `hpcc`: HPCC, High Precision Congestion Control: the sender sets its window from the exact
//! load that in-band telemetry reports for every link of its path.
//!
//! **Follows:** Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.2–3.3
//! and Algorithm 1, in the rate form of the HPCC ns-3 simulator (alibaba-edu/
//! High-Precision-Congestion-Control, `CC_MODE 3`, `RdmaHw::UpdateRateHp`; read to understand,
//! nothing copied), the reference that the MCC and SeqBalance papers' RoCE semantics come from.
//!
//! **Signal.** Every switch egress port stamps data packets with its queue length, transmitted
//! bytes, a timestamp and its rate (`kernel/telemetry.rs`); the ACK echoes them. For each hop `j`,
//! against the records of the previous ACK (HPCC Alg. 1 `MeasureInflight`):
//! `u_j = min(qlen, qlen') / (B_j·T) + txRate_j / B_j`, with `txRate_j` = the bytes the port
//! sent between the two records over the time between them, `τ_j`. The most loaded hop gives
//! `u` and its `τ`; `τ = min(τ, T)`; then `U = (1 − τ/T)·U + (τ/T)·u`.
//!
//! **Reaction** (Alg. 1 `ComputeWind`, as a rate `R = W/T`): with `Rc` the reference rate,
//! - `U ≥ η` or `incStage ≥ maxStage`: `R = Rc / (U/η) + R_AI`, and a per-RTT update sets
//!   `incStage = 0`;
//! - otherwise `R = Rc + R_AI`, and a per-RTT update adds one to `incStage`.
//!
//! An ACK that acknowledges data beyond what had been sent at the last per-RTT update is a
//! per-RTT update: it also moves `Rc` to `R` (the paper's `updateWc`). Every other ACK reacts
//! at once from the unchanged `Rc` (the paper's per-ACK reaction; ns-3 `FAST_REACT`), so a
//! burst is answered within one ACK while the reference moves once per round trip. The first
//! ACK only records the telemetry. `R` stays within `[min_rate, line rate]`; packets are paced
//! at `R`, and the window is `R·T` (ns-3 `HAS_WIN 1`, `VAR_WIN 1`: the line-rate BDP scaled by
//! `R / line`).
//!
//! **Parameters** (`[transport.cc] name = "hpcc"`): `eta` 0.95 and `max_stage` 5 (the paper's
//! §5 settings); `rate_ai_mbps` unset = 50 Mb/s per 100 Gb/s of NIC rate (the ns-3 simulator's
//! `RATE_AI 50Mb/s` at 100 G; the paper's `W_AI = W_init·(1 − η)/N` with N = 100 concurrent
//! flows gives the same rate); `min_rate_mbps` 100 (ns-3 `MIN_RATE`); `fast_react` true;
//! `base_rtt_of = "network"`: `T` is the fabric's longest base RTT, one constant for every
//! connection as in the paper and ns-3's `GLOBAL_T 1` (`"path"`: the connection's own);
//! `window_bdp` 1 (the window at line rate is `B·T`).
//!
//! **Differences:** the telemetry is exact (ns-3 quantises it: `kernel/telemetry.rs`); a hop whose
//! record is not newer than the previous one, or whose rate differs (the path changed under a
//! spraying load balancer), is skipped for that ACK. The per-hop-rate variant (ns-3
//! `MULTI_RATE`) and sampled feedback (`SAMPLE_FEEDBACK`) are not modelled. INT makes packets
//! larger: in ns-3 each data packet and ACK carries 42 bytes of INT (5 hops × 8 + 2), which
//! belong in `transport.header_bytes` / `ack_bytes`; fabricsim does not add them on its own.

use super::{CongestionControl, PathInfo};
use crate::error::{Error, Result};
use crate::net::telemetry::IntStack;
use crate::scheme::Limit;
use crate::units::{BitsPerSec, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "hpcc";
/// Registry summary.
pub const SUMMARY: &str =
    "HPCC (SIGCOMM 2019, ns-3 rate form): per-hop INT (qlen, txBytes, ts, rate) echoed by ACKs; rate = Rc/(U/η) + R_AI per ACK, reference once per RTT";

/// Which base RTT is `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseRttOf {
    /// The fabric's longest base RTT, the same for every connection (HPCC paper; ns-3
    /// `GLOBAL_T 1`).
    Network,
    /// The connection's own path (ns-3 `GLOBAL_T 0`).
    Path,
}

/// Parameters of `hpcc`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HpccParams {
    /// Target utilisation η.
    pub eta: f64,
    /// Additive-increase stages before a multiplicative step, `maxStage`.
    pub max_stage: u32,
    /// Additive increase `R_AI` (the paper's `W_AI / T`), Mb/s; unset = 50 Mb/s per 100 Gb/s of
    /// NIC rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ai_mbps: Option<f64>,
    /// Smallest rate, Mb/s (at most the line rate).
    pub min_rate_mbps: f64,
    /// React to every ACK from the reference rate (paper, ns-3 `FAST_REACT 1`); false: only
    /// once per RTT.
    pub fast_react: bool,
    /// Which base RTT is `T`: `network` (the fabric's longest) or `path` (the connection's).
    pub base_rtt_of: BaseRttOf,
    /// The window at line rate, in `B·T`s (the paper's `W_init = B·T`: 1). The ns-3 simulator
    /// counts its window in payload bytes, so `from-ns3` writes its wire equivalent, mtu / payload.
    pub window_bdp: f64,
}

impl Default for HpccParams {
    fn default() -> Self {
        //= HPCC (SIGCOMM 2019) §5: η = 95 %, maxStage = 5; ns-3 example config: RATE_AI
        //# 50Mb/s, MIN_RATE 100Mb/s at 100 G, FAST_REACT 1, GLOBAL_T 1
        HpccParams { eta: 0.95, max_stage: 5, rate_ai_mbps: None, min_rate_mbps: 100.0, fast_react: true, base_rtt_of: BaseRttOf::Network, window_bdp: 1.0 }
    }
}

/// The controller of one connection.
#[derive(Clone, Debug)]
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    rate_ai: f64,
    min_rate: f64,
    fast_react: bool,
    line: f64,
    /// `T`, ps.
    t: Time,
    /// Current rate `R`, bit/s.
    rate: f64,
    /// Reference rate `Rc = Wc / T`, bit/s.
    rate_ref: f64,
    /// Additive-increase stages since the last multiplicative step.
    stage: u32,
    /// The normalised inflight estimate `U`.
    u: f64,
    /// The records of the previous ACK (`None` before the first).
    last: Option<IntStack>,
    /// Wire bytes handed to the NIC so far.
    sent: u64,
    /// Wire bytes acknowledged so far.
    acked: u64,
    /// `sent` at the last per-RTT update: an ACK beyond it is the next one.
    update_after: u64,
    /// The window at line rate, `window_bdp · B·T`, bytes.
    bdp: u64,
}

impl Hpcc {
    /// A controller at line rate for a connection on `path`.
    pub fn new(p: &HpccParams, path: &PathInfo) -> Self {
        let line = path.host_rate.0 as f64;
        let t = match p.base_rtt_of {
            BaseRttOf::Network => path.net_base_rtt.max(path.base_rtt),
            BaseRttOf::Path => path.base_rtt,
        }
        .max(Time(1));
        Hpcc {
            eta: p.eta,
            max_stage: p.max_stage,
            rate_ai: p.rate_ai_mbps.map_or(line * 5e-4, |m| m * 1e6),
            min_rate: (p.min_rate_mbps * 1e6).min(line),
            fast_react: p.fast_react,
            line,
            t,
            rate: line,
            rate_ref: line,
            stage: 0,
            u: 0.0,
            last: None,
            sent: 0,
            acked: 0,
            update_after: 0,
            bdp: (path.host_rate.bytes_in(t).0 as f64 * p.window_bdp).ceil() as u64,
        }
    }

    /// The current rate, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    /// The inflight estimate `U`.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// The most loaded hop's `u` and its `τ` (ps) against the previous records, or `None` when
    /// no hop can be compared (HPCC Alg. 1 `MeasureInflight`, its loop).
    fn most_loaded_hop(&self, now: &IntStack, before: &IntStack) -> Option<(f64, Time)> {
        let (hops, prev) = (now.hops()?, before.hops()?);
        let t_s = self.t.0 as f64 * 1e-12;
        // ns-3 starts from U = 0, τ = 0: an idle path leaves τ at 0, so U stays.
        let (mut most, mut most_tau, mut compared) = (0.0, Time::ZERO, false);
        for (h, p) in hops.iter().zip(prev) {
            if h.ts <= p.ts || h.rate != p.rate || h.rate.0 == 0 {
                continue;
            }
            let tau = h.ts - p.ts;
            let b = h.rate.0 as f64;
            let tx_rate = h.tx_bytes.saturating_sub(p.tx_bytes).0 as f64 * 8.0 / (tau.0 as f64 * 1e-12);
            //= HPCC Alg. 1 line 5: u' = min(qlen, qlen')/(B·T) + txRate/B
            let u = h.qlen.min(p.qlen) as f64 * 8.0 / (b * t_s) + tx_rate / b;
            compared = true;
            if u > most {
                (most, most_tau) = (u, tau);
            }
        }
        compared.then_some((most, most_tau))
    }
}

impl CongestionControl for Hpcc {
    fn on_send(&mut self, _now: Time, bytes: u64) {
        self.sent += bytes;
    }

    fn on_ack(&mut self, ev: &super::AckEvent) {
        self.acked += ev.acked_bytes.0;
    }

    fn on_telemetry(&mut self, _now: Time, int: &IntStack) {
        let Some(before) = self.last else {
            // The first ACK only records (ns-3: `m_lastUpdateSeq == 0`).
            self.last = Some(*int);
            self.update_after = self.sent;
            return;
        };
        //= HPCC Alg. 1 NewAck: ack.seq > lastUpdateSeq → a per-RTT update (updateWc)
        let per_rtt = self.acked > self.update_after;
        if !per_rtt && !self.fast_react {
            return;
        }
        if let Some((u, tau)) = self.most_loaded_hop(int, &before) {
            //= HPCC Alg. 1 lines 8–10: τ = min(τ, T); U = (1 − τ/T)·U + τ/T·u
            let tau = tau.min(self.t).0 as f64;
            let t = self.t.0 as f64;
            self.u = (self.u * (t - tau) + u * tau) / t;
            let c = self.u / self.eta;
            //= HPCC Alg. 1 ComputeWind: W = Wc/(U/η) + W_AI at or above η (or after maxStage
            //# additive steps), else W = Wc + W_AI
            let (rate, stage) = if c >= 1.0 || self.stage >= self.max_stage {
                // U = 0 (an idle path): Rc / 0 is unbounded, so the line rate.
                (if c > 0.0 { self.rate_ref / c + self.rate_ai } else { self.line }, 0)
            } else {
                (self.rate_ref + self.rate_ai, self.stage + 1)
            };
            self.rate = rate.clamp(self.min_rate, self.line);
            if per_rtt {
                self.rate_ref = self.rate;
                self.stage = stage;
            }
        }
        if int.hops().is_some() {
            self.last = Some(*int);
        }
        if per_rtt {
            self.update_after = self.update_after.max(self.sent);
        }
    }

    fn window(&self) -> Option<u64> {
        //= ns-3 RdmaQueuePair::GetWin with VAR_WIN: the line-rate window scaled by R / line
        super::rate_window(Some(self.bdp.max(1)), true, self.rate as u64, self.line as u64)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(BitsPerSec((self.rate.round() as u64).max(1)))
    }
}

impl crate::scheme::Scheme<PathInfo> for Hpcc {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = HpccParams;
    const LIMITS: &'static [Limit] = &[
        Limit::new("eta", 0.01, 1.0),
        Limit::new("max_stage", 0.0, 1e6),
        Limit::new("rate_ai_mbps", 1e-3, 1e7),
        Limit::new("min_rate_mbps", 1e-3, 1e7),
        Limit::new("window_bdp", 0.001, 1000.0),
    ];
    fn check(p: &HpccParams, _key: &str) -> Result<()> {
        if !(p.eta > 0.0 && p.eta <= 1.0) {
            return Err(Error::invalid("transport.cc.eta", format!("{}: the target utilisation must lie in (0, 1]", p.eta)));
        }
        Ok(())
    }
    fn build(p: &HpccParams, path: &mut PathInfo) -> Self {
        Hpcc::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::telemetry::IntHop;
    use crate::transport::cc::testing::{self, ACK, MTU};
    use crate::units::{Bytes, US};

    const G100: u64 = 100_000_000_000;
    /// A 100 Gb/s NIC, base RTT 10 µs (the fixtures' network RTT too): T = 10 µs, B·T = 125 kB.
    const PATH: PathInfo = testing::path(G100, 125_000);

    fn cc(p: HpccParams) -> Hpcc {
        Hpcc::new(&p, &PATH)
    }

    /// One hop's records at `ts_us` after `tx` bytes with `q` bytes queued.
    fn stack(hops: &[(f64, u64, u64)]) -> IntStack {
        let mut s = IntStack::default();
        for &(ts_us, tx, q) in hops {
            s.push(IntHop { ts: Time((ts_us * US.0 as f64) as u64), tx_bytes: Bytes(tx), qlen: q, rate: BitsPerSec(G100) });
        }
        s
    }

    /// Sends `bytes`, then an ACK of them echoing `int`.
    fn ack(c: &mut Hpcc, bytes: u64, int: &IntStack) {
        c.on_send(Time::ZERO, bytes);
        c.on_ack(&crate::transport::cc::AckEvent { acked_bytes: Bytes(bytes), ..ACK });
        c.on_telemetry(Time::ZERO, int);
    }

    /// Bytes a 100 Gb/s port sends in `us` µs.
    fn line_bytes(us: f64) -> u64 {
        (us * 12_500.0).round() as u64
    }

    #[test]
    fn defaults_and_window_follow_the_line_rate() {
        let c = cc(HpccParams::default());
        assert_eq!((c.rate, c.rate_ref, c.rate_ai, c.min_rate), (100e9, 100e9, 50e6, 100e6));
        assert_eq!(c.t, 10 * US);
        assert_eq!(c.window(), Some(125_000), "B·T at line rate");
        let wider = cc(HpccParams { window_bdp: 1.048, ..HpccParams::default() });
        assert_eq!(wider.window(), Some(131_000));
    }

    #[test]
    fn the_first_ack_only_records() {
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(0.0, 0, 500_000)]));
        assert_eq!((c.rate, c.u), (100e9, 0.0));
        assert!(c.last.is_some());
    }

    #[test]
    fn one_update_brings_an_overloaded_link_to_eta() {
        // Over a whole T the port sent at line rate and kept a BDP queued: u = 1 + 1 = 2, so
        // U = 2 and R = Rc / (2 / 0.95) + R_AI: HPCC's one-step convergence (§3.2).
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(0.0, 0, 125_000)]));
        ack(&mut c, MTU, &stack(&[(10.0, line_bytes(10.0), 125_000)]));
        assert!((c.u - 2.0).abs() < 1e-9, "U {}", c.u);
        let want = 100e9 / (2.0 / 0.95) + 50e6;
        assert!((c.rate - want).abs() < 1.0, "{} vs {want}", c.rate);
        assert_eq!(c.rate_ref, c.rate, "a per-RTT ACK moves the reference");
        assert_eq!(c.stage, 0);
        let w = c.window().unwrap() as f64;
        assert!((w - 125_000.0 * want / 100e9).abs() <= 1.0, "window R·T: {w}");
    }

    #[test]
    fn the_queue_term_takes_the_smaller_of_two_samples_and_the_busiest_hop_wins() {
        let mut c = cc(HpccParams::default());
        // Hop 0 idle; hop 1 at half rate with its queue shrinking 250 kB → 62.5 kB over T:
        // u1 = 62 500 / 125 000 + 0.5 = 1.0.
        ack(&mut c, MTU, &stack(&[(0.0, 0, 0), (0.0, 0, 250_000)]));
        ack(&mut c, MTU, &stack(&[(10.0, 0, 0), (10.0, line_bytes(5.0), 62_500)]));
        assert!((c.u - 1.0).abs() < 1e-9, "U {}", c.u);
    }

    #[test]
    fn a_short_sample_moves_the_estimate_by_its_share_of_t() {
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(0.0, 0, 0)]));
        // τ = 2.5 µs = T/4 at line rate, no queue: u = 1, U = 0·3/4 + 1·1/4.
        ack(&mut c, MTU, &stack(&[(2.5, line_bytes(2.5), 0)]));
        assert!((c.u - 0.25).abs() < 1e-9, "U {}", c.u);
        // Below η: additive increase (capped at line rate).
        assert_eq!(c.rate, 100e9);
        assert_eq!(c.stage, 1);
        // τ above T counts as T: the estimate becomes the new sample outright.
        ack(&mut c, MTU, &stack(&[(100.0, line_bytes(2.5) + line_bytes(97.5) / 2, 0)]));
        assert!((c.u - 0.5).abs() < 1e-9, "U {}", c.u);
    }

    #[test]
    fn additive_steps_then_a_multiplicative_one_after_max_stage() {
        let mut c = cc(HpccParams { max_stage: 2, ..HpccParams::default() });
        ack(&mut c, MTU, &stack(&[(0.0, 0, 125_000)]));
        // First cut the rate to have room: U = 2 → R = Rc·0.475 + AI.
        ack(&mut c, MTU, &stack(&[(10.0, line_bytes(10.0), 125_000)]));
        let r0 = c.rate;
        assert!((r0 - (100e9 / (2.0 / 0.95) + 50e6)).abs() < 1.0, "{r0}");
        // Then a half-loaded link (u = 0.5 over a whole T): U = 0.5 < η.
        let mut t = 10.0;
        let mut tx = line_bytes(10.0);
        let mut half = |c: &mut Hpcc| {
            t += 10.0;
            tx += line_bytes(5.0);
            ack(c, MTU, &stack(&[(t, tx, 0)]));
        };
        half(&mut c);
        assert!((c.rate - (r0 + 50e6)).abs() < 1.0 && c.stage == 1);
        half(&mut c);
        assert!((c.rate - (r0 + 100e6)).abs() < 1.0 && c.stage == 2);
        // maxStage reached: R = Rc / (0.5 / 0.95) + AI, a multiplicative increase.
        half(&mut c);
        let want = (r0 + 100e6) / (0.5 / 0.95) + 50e6;
        assert!((c.rate - want).abs() < 1.0 && c.stage == 0, "{} vs {want}", c.rate);
    }

    #[test]
    fn acks_within_a_round_trip_react_from_the_unchanged_reference() {
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(0.0, 0, 0)]));
        // Ten packets out at once; their ACKs arrive within this round trip.
        for _ in 0..10 {
            c.on_send(Time::ZERO, MTU);
        }
        let ack_only = |c: &mut Hpcc, int: &IntStack| {
            c.on_ack(&crate::transport::cc::AckEvent { acked_bytes: Bytes(MTU), ..ACK });
            c.on_telemetry(Time::ZERO, int);
        };
        // The first of them passes the last update's mark: a per-RTT update (U = 2).
        ack_only(&mut c, &stack(&[(10.0, line_bytes(10.0), 125_000)]));
        let rc = c.rate_ref;
        assert_eq!(c.rate, rc);
        // The next ones are fast reactions: the rate follows U, the reference stays.
        ack_only(&mut c, &stack(&[(20.0, line_bytes(20.0), 250_000)]));
        assert_eq!(c.rate_ref, rc);
        let want = rc / (c.u / 0.95) + 50e6;
        assert!((c.rate - want).abs() < 1.0 && c.rate < rc, "{} vs {want}", c.rate);
        // Without fast reaction they change nothing.
        let mut slow = cc(HpccParams { fast_react: false, ..HpccParams::default() });
        ack(&mut slow, MTU, &stack(&[(0.0, 0, 0)]));
        for _ in 0..10 {
            slow.on_send(Time::ZERO, MTU);
        }
        ack_only(&mut slow, &stack(&[(10.0, line_bytes(10.0), 125_000)]));
        let r = slow.rate;
        ack_only(&mut slow, &stack(&[(20.0, line_bytes(20.0), 250_000)]));
        assert_eq!(slow.rate, r);
    }

    #[test]
    fn records_not_newer_or_of_another_path_are_skipped() {
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(10.0, line_bytes(10.0), 0)]));
        // An older timestamp (another path under spraying): nothing to compare, nothing moves.
        ack(&mut c, MTU, &stack(&[(5.0, 0, 500_000)]));
        assert_eq!((c.u, c.rate), (0.0, 100e9));
        // A path of more hops than the stack holds is ignored and not remembered.
        let mut long = stack(&[(30.0, 0, 0); 5]);
        long.push(IntHop { ts: 30 * US, ..IntHop::default() });
        let before = c.last;
        ack(&mut c, MTU, &long);
        assert_eq!(c.last, before);
    }

    #[test]
    fn the_rate_stays_within_its_bounds_and_t_can_be_the_path_rtt() {
        let mut c = cc(HpccParams::default());
        ack(&mut c, MTU, &stack(&[(0.0, 0, 0)]));
        // A huge queue: U ≫ η; the rate floors at min_rate.
        ack(&mut c, MTU, &stack(&[(10.0, line_bytes(10.0), 1_000_000_000)]));
        ack(&mut c, MTU, &stack(&[(20.0, line_bytes(20.0), 1_000_000_000)]));
        assert_eq!(c.rate, 100e6);
        assert_eq!(c.pacing_rate(), Some(BitsPerSec(100_000_000)));
        let path = PathInfo { base_rtt: 4 * US, net_base_rtt: 10 * US, ..PATH };
        assert_eq!(Hpcc::new(&HpccParams::default(), &path).t, 10 * US);
        assert_eq!(Hpcc::new(&HpccParams { base_rtt_of: BaseRttOf::Path, ..HpccParams::default() }, &path).t, 4 * US);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let err = |t: &str| -> String {
            let c: crate::transport::cc::CcConfig = match toml::from_str(&format!("name = \"hpcc\"\n{t}")) {
                Ok(c) => c,
                Err(e) => return e.to_string(),
            };
            c.validate().unwrap_err().to_string()
        };
        for (t, k) in [
            ("eta = 0.0", "transport.cc.eta"),
            ("eta = 1.5", "transport.cc.eta"),
            ("min_rate_mbps = 0.0", "transport.cc.min_rate_mbps"),
            ("rate_ai_mbps = -1.0", "transport.cc.rate_ai_mbps"),
            ("base_rtt_of = \"fabric\"", "network"),
        ] {
            let e = err(t);
            assert!(e.contains(k), "{t}: {e}");
        }
    }
}
