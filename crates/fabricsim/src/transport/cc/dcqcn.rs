//! `dcqcn`: DCQCN's reaction point (RP), the per-QP rate controller of a RoCEv2 sender NIC: a
//! multiplicative cut on every congestion notification packet (CNP), scaled by an estimate `α`
//! of how congested the path is, and a QCN-style recovery driven by a timer and a byte counter.
//!
//! **Follows:** Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
//! §3.1 (the RP algorithm, its Fig. 6 state machine: cut, α update, fast recovery, additive
//! and hyper increase) and §3.2 (the notification point's CNP interval); spec `strack.md` §5.4
//! row "RoCEv2, 1 QP" (the DCQCN values STrack's RoCEv2 baseline is proposed to use) and §2.8
//! item 15 (every DCQCN parameter is an assumption of that spec). The equations and the
//! counter semantics were checked against the htsim DCQCN model (`dcqcn.cpp`, which STrack's
//! authors extended) and against Zhu's ns-3 code (`qbb-net-device.cc`).
//!
//! The notification point (NP) is not here: the receiver side of the engine turns CE-marked data
//! into at most one CNP per connection per [`DcqcnParams::cnp_interval`] (read through
//! `CcConfig::cnp_interval`) and calls [`CongestionControl::on_cnp`] when one reaches the sender.
//! The sender NIC paces every packet at [`CongestionControl::pacing_rate`] = `Rc`.
//!
//! State: current rate `Rc`, target rate `Rt`, `α`, the bytes sent since the last byte-counter
//! event, and the iteration counts `T` (rate-timer expiries) and `BC` (byte-counter events)
//! since the last cut. Rates are integer bit/s; `α` is fixed point (1 = 2^32).
//!
//! - **CNP** (DCQCN §3.1): `Rt = Rc`; `Rc = Rc·(1 − α/2)`; `α = (1 − g)·α + g`; the byte counter,
//!   `T` and `BC` reset to 0 and both timers restart.
//! - **α timer** (period `alpha_timer_us`): one expiry means a whole period without a CNP (a CNP
//!   restarts the timer), so `α = (1 − g)·α`.
//! - **Rate timer** (period `rate_timer_us`) and **byte counter** (every `byte_counter_bytes`
//!   sent): each increments its own count (`T` or `BC`) and then triggers one increase, chosen by
//!   the counts including this event, with `F = fast_recovery_steps`:
//!   - `max(T, BC) ≤ F`: fast recovery, `Rc = (Rt + Rc)/2`;
//!   - `min(T, BC) > F`: hyper increase, `Rt += i·R_HAI` with `i = min(T, BC) − F`, then
//!     `Rc = (Rt + Rc)/2`;
//!   - otherwise (one count past `F`): additive increase, `Rt += R_AI`, `Rc = (Rt + Rc)/2`.
//!
//!   So after a cut, either counter alone gives exactly `F` fast-recovery steps.
//! - `Rc` and `Rt` stay within `[min_rate, line rate]` (line rate = the host link rate, which
//!   is also the start rate); averages round up so that `Rc` reaches `Rt` exactly.
//!
//! The timers run only after the first CNP (until then the flow sends at line rate and has
//! nothing to recover; as in Zhu's ns-3 code, where both timers are first armed by a CNP). They
//! are not engine events: every hook that gets the time (`on_cnp`, `on_send`, `on_ack`,
//! `on_nack`, `on_timeout`) first replays, in time order, the expiries due at or before `now`,
//! giving the same state as exact timer events. Expiries at the same instant as a CNP or a send
//! are applied before it. The replay is bounded: a timer stops once its expiries can change
//! nothing (`α` = 0; `Rc` = `Rt` = line rate) until the next CNP restarts it, and runs of
//! increases that only shift `Rc` and `Rt` by the same amount are applied in one step.
//!
//! **Parameters** (`[transport.cc] name = "dcqcn"`):
//! - `g` = 1/256: α gain (DCQCN §3.1/§5; strack §5.4; HPCC ns-3 `EWMA_GAIN` 1/256).
//! - `alpha_init` = 1: α before the first CNP, so the first CNP halves the rate (htsim's DCQCN;
//!   HPCC ns-3 also sets α = 1 at the first CNP; Zhu's ns-3 code starts at 0.5).
//! - `alpha_timer_us` = 55: α update period (DCQCN §5 via strack §5.4; HPCC `dcqcn_paper`: 50,
//!   HPCC `dcqcn` and spec `seqbalance.md` §2.3.5: 1).
//! - `rate_timer_us` = 55: rate-increase timer (DCQCN via strack §5.4; HPCC `dcqcn_paper`: 55;
//!   HPCC `dcqcn`, spec `mcc.md` §2.10.1 and `seqbalance.md` §2.3.5: 300).
//! - `byte_counter_bytes` = 10,000,000: bytes sent per byte-counter event (DCQCN "10 MB" via
//!   strack §5.4; htsim: 10^7; HPCC and the mcc/seqbalance specs run without a byte counter).
//!   0 disables the byte counter. Hyper increase, which needs both counts past `F`, could then
//!   never happen, so the timer count alone picks the step, as the ns-3 Mellanox RP's stage
//!   does (seqbalance spec §2.3.5): `T ≤ F` fast recovery, `T = F + 1` additive increase by
//!   `R_AI`, `T > F + 1` hyper increase by a fixed `R_HAI`.
//! - `fast_recovery_steps` = 5: `F` (DCQCN §3.1, strack §5.4; HPCC, mcc, seqbalance: 1).
//! - `rate_ai_mbps` = unset: `R_AI` in Mb/s; unset means 40 Mb/s at 40 Gb/s scaled linearly by
//!   the host link rate (host rate / 1000: 400 Mb/s at 400 G; DCQCN's 40 Mb/s at 40 G, scaled per
//!   strack §5.4; HPCC ns-3: 5 Mb/s × rate/25 G, 20 Mb/s at 100 G; htsim's model: rate/20).
//! - `rate_hai_mbps` = unset: `R_HAI` in Mb/s; unset means 10 × the `R_AI` in effect (strack
//!   §5.4 ASSUMPTION; HPCC ns-3: 50 Mb/s × rate/25 G, 200 Mb/s at 100 G; htsim: rate/10).
//! - `min_rate_mbps` = 1: floor of `Rc` and `Rt` (strack §5.4; HPCC: 1000, ConWeave lineage in
//!   seqbalance §2.3.5: 100). Capped at the line rate.
//! - `clamp_target_rate` = true: a CNP always sets `Rt = Rc` (DCQCN §3.1). `false` is ns-3's
//!   `ClampTargetRate = 0` (HPCC and the mcc/seqbalance specs): `Rt = Rc` only if an increase
//!   happened since the last cut, so back-to-back CNPs recover toward the rate before the first.
//! - `cnp_interval_us` = 50: the NP sends at most one CNP per connection per interval (DCQCN
//!   §3.2 and strack §5.4; mcc §2.10.1 and seqbalance §2.3.4 give it as the alternative to
//!   HPCC's per-ACK CNP flag, which `cnp_interval_us = 0` approximates: one CNP per marked
//!   packet).
//! - `window_bdp` = unset: no window (purely rate-based, HPCC `HAS_WIN 0`); set, a fixed window
//!   of that many BDPs caps the bytes in flight. `bdp_of` = `"path"`: the BDP is the
//!   connection's own path's (host rate × its base RTT); `"network"` takes host rate × the
//!   fabric's longest-path base RTT for every connection, as the HPCC ns-3 simulator's
//!   `GLOBAL_T 1` gives every QP the largest BDP of any host pair (`scratch/third.cc`, `maxBdp`).
//!   `window_scales_with_rate` = false; true
//!   scales that window by `Rc` / line rate, as the HPCC ns-3 simulator's `VAR_WIN 1` does
//!   (`RdmaQueuePair::GetWin`; its example config sets both).
//! - `ooo_triggers_cnp` = false: the receiver NIC also sends a CNP (through the same
//!   `cnp_interval_us` limit) with every go-back-N sequence NACK, as the ConWeave ns-3 code's
//!   NACK carries one (seqbalance spec §2.3.3; real RoCE NICs do not: default off). Under the
//!   mellanox reaction point the NACK itself carries the CNP flag, as there (`RdmaHw::ReceiveUdp`
//!   sets it for the gap; without this option only for a CE-marked packet, as in both ns-3
//!   simulators).
//!
//! **Presets** (`preset = "..."`): the lineage constants of seqbalance spec §2.3.5 as a starting
//! point; keys given next to `preset` override it, and the resolved scenario lists every value.
//! - `"seqbalance"` (the spec's default column, the ConWeave ns-3 DCQCN config): `g` = 1/256,
//!   `alpha_timer_us` = 1, `rate_timer_us` = 300, `fast_recovery_steps` = 1, `R_AI` = 10 Mb/s
//!   and `R_HAI` = 25 Mb/s per 25 Gb/s of host link rate (40 / 100 Mb/s at 100 G, 16 / 40 at
//!   40 G) when `rate_ai_mbps` / `rate_hai_mbps` are not given, `min_rate_mbps` = 100,
//!   `clamp_target_rate` = false, no byte counter, and the Mellanox reaction point
//!   (`reaction_point = "mellanox"`, below) whose `rate_decrease_interval_us` = 4 is the spec's
//!   4 µs rate-decrease check period `T_dec` (seqbalance spec §2.3.5 takes its DCQCN from the
//!   ConWeave simulator, whose `CC_MODE 1` this is; the paper itself only names DCQCN).
//!   `cnp_interval_us` = 4 is kept for `reaction_point = "paper"`, the nearest mechanism there
//!   (at most one cut per QP per `T_dec`).
//! - `"hpcc"` (the spec's alternative column, HPCC ns-3; the MCC paper's DCQCN, mcc spec
//!   §2.10.1): as `"seqbalance"` but `R_AI` = 5 and `R_HAI` = 50 Mb/s per 25 G (20 / 200 Mb/s at
//!   100 G) and `min_rate_mbps` = 1000.
//!
//! **The Mellanox reaction point** (`reaction_point = "mellanox"`): the RP of the HPCC and
//! ConWeave ns-3 simulators (`CC_MODE 1`, `RdmaHw`'s `*Mlx` functions), which specs `mcc.md`
//! §2.10.1 and `seqbalance.md` §2.3.5 describe. There are no CNP packets
//! ([`DcqcnParams::cnp_interval`] is `None`): an ACK echoing a CE mark is the CNP. A CNP only
//! sets two flags; the first one also sets α = 1, starts the α timer (`alpha_timer_us`) and the
//! rate-decrease check (`rate_decrease_interval_us` + 1 ns, after the α expiry of the same
//! instant), and multiplies the rate and target by `rate_on_first_cnp` (1.0: no cut). An α
//! expiry sets `α = (1 − g)·α`, plus `g` if a CNP came since the last one; a decrease check with
//! a CNP since the last one sets `Rt = Rc` (unless unclamped before any increase), cuts
//! `Rc = Rc·(1 − α/2)`, resets the stage and restarts the rate timer. Rate-timer expiries step
//! through the stage as without a byte counter (which this RP has none of). Both timers run
//! for good once started (their no-op expiries are skipped in one step).
//!
//! **Not modelled:**
//! - A rate change between two packets applies from the next packet: the gap already scheduled
//!   after a send is not shortened or stretched.
//! - Loss (NACK, timeout) does not change the rate: RoCEv2 recovers with go-back-N and
//!   DCQCN reacts only to CNPs.
//!
//! **Differences** from the reference codes (none from the paper as we read it):
//! - The cut uses the `α` from before the CNP's own α update (DCQCN §3.1's order, as htsim);
//!   Zhu's ns-3 code updates `α` first.
//! - The counts that choose the increase include the event being handled, and fast recovery
//!   holds while both are ≤ `F`, giving the "F = 5 fast-recovery steps" of strack §5.4 (htsim's
//!   convention; Zhu's ns-3 code compares the incremented timer count with `< F`).
//! - `Rt` is capped at the line rate (strack §5.4); htsim caps only `Rc`.

use super::{AckEvent, BdpOf, CongestionControl, NackEvent, PathInfo, TimeoutEvent};
use crate::error::{Error, Result};
use crate::units::{BitsPerSec, Bytes, Time, US, us_to_ps};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Registry name.
pub const NAME: &str = "dcqcn";
/// Registry summary.
pub const SUMMARY: &str =
    "DCQCN reaction point: rate cut by alpha/2 per CNP, fast recovery / additive / hyper increase on timer and byte counter";

/// Fixed-point one for `α` (and `g`).
const ONE: u64 = 1 << 32;

/// Largest time parameter, µs (1000 s): keeps picosecond arithmetic far from overflow.
const MAX_US: f64 = 1e9;

/// Parameters of `dcqcn`. (De)serialized through [`DcqcnParams::with_preset`]: the derive
/// below (`remote = "Self"`) gives the plain field-by-field form it builds on.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct DcqcnParams {
    /// Lineage constants the other keys start from (`"seqbalance"`, `"hpcc"`); unset = the
    /// DCQCN paper's defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<DcqcnPreset>,
    /// α gain `g`.
    pub g: f64,
    /// α before the first CNP.
    pub alpha_init: f64,
    /// α update period, µs.
    pub alpha_timer_us: f64,
    /// Rate-increase timer period, µs.
    pub rate_timer_us: f64,
    /// Bytes sent per byte-counter event; 0 = no byte counter.
    pub byte_counter_bytes: Bytes,
    /// `F`: fast-recovery steps after a cut.
    pub fast_recovery_steps: u32,
    /// Additive increase `R_AI`, Mb/s; unset = 40 Mb/s per 40 Gb/s of host link rate.
    pub rate_ai_mbps: Option<f64>,
    /// Hyper increase `R_HAI`, Mb/s; unset = 10 × `R_AI`.
    pub rate_hai_mbps: Option<f64>,
    /// Smallest rate, Mb/s.
    pub min_rate_mbps: f64,
    /// Whether every CNP sets `Rt = Rc` (else only after an increase since the last cut).
    pub clamp_target_rate: bool,
    /// Notification point: at most one CNP per connection per this interval, µs.
    pub cnp_interval_us: f64,
    /// Optional fixed window, in BDPs (of the path or the network: `bdp_of`); unset = no window.
    pub window_bdp: Option<f64>,
    /// Which BDP `window_bdp` counts in: `"path"` (default, the connection's own path: host rate
    /// × its base RTT) or `"network"` (host rate × the fabric's longest-path base RTT, the same
    /// for every connection: the HPCC ns-3 simulator's `GLOBAL_T 1`).
    pub bdp_of: BdpOf,
    /// Whether the window scales with the rate (`window × Rc / line`; HPCC ns-3 `VAR_WIN`).
    pub window_scales_with_rate: bool,
    /// Notification point: a go-back-N sequence NACK also sends a CNP (ConWeave ns-3).
    pub ooo_triggers_cnp: bool,
    /// Which reaction point: `paper` (DCQCN §3.1) or `mellanox` (the HPCC / ConWeave ns-3
    /// simulators' `CC_MODE 1`; see the module doc).
    pub reaction_point: ReactionPoint,
    /// `mellanox`: the rate-decrease check period `T_dec`, µs (ns-3 `RATE_DECREASE_INTERVAL`).
    pub rate_decrease_interval_us: f64,
    /// `mellanox`: the share of the rate kept at the first CNP (ns-3 `RateOnFirstCnp`).
    pub rate_on_first_cnp: f64,
}

/// The reaction point `dcqcn` runs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReactionPoint {
    /// DCQCN §3.1: the notification point sends CNP packets (at most one per
    /// `cnp_interval_us`); each one cuts at once and raises α.
    Paper,
    /// The Mellanox RP of the HPCC and ConWeave ns-3 simulators: every ACK of a CE-marked packet
    /// is a CNP (no CNP packets); CNPs only set flags, which an α timer and a rate-decrease
    /// timer (`rate_decrease_interval_us`) sample.
    Mellanox,
}

/// Named lineage constants for `dcqcn` (seqbalance spec §2.3.5).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnPreset {
    /// The ConWeave ns-3 DCQCN config (the spec's default column).
    Seqbalance,
    /// The HPCC ns-3 DCQCN config (the spec's alternative column).
    Hpcc,
}

impl DcqcnPreset {
    /// The preset's parameters.
    pub fn params(self) -> DcqcnParams {
        //= seqbalance §2.3.5; type=assumption
        //# g 1/256, T_α 1 µs, T_dec 4 µs, T_inc 300 µs, F = 1, R_min 100 Mb/s (HPCC: 1000), no
        //# target clamp, byte counter disabled.
        let min_rate_mbps = match self {
            DcqcnPreset::Seqbalance => 100.0,
            DcqcnPreset::Hpcc => 1000.0,
        };
        DcqcnParams {
            preset: Some(self),
            g: 1.0 / 256.0,
            alpha_init: 1.0,
            alpha_timer_us: 1.0,
            rate_timer_us: 300.0,
            byte_counter_bytes: Bytes::ZERO,
            fast_recovery_steps: 1,
            rate_ai_mbps: None,
            rate_hai_mbps: None,
            min_rate_mbps,
            clamp_target_rate: false,
            // T_dec under reaction_point = "paper": at most one cut per QP per 4 µs (module doc).
            cnp_interval_us: 4.0,
            window_bdp: None,
            bdp_of: BdpOf::Path,
            window_scales_with_rate: false,
            ooo_triggers_cnp: false,
            //= mcc spec §2.10.1, seqbalance spec §2.3.5: their DCQCN is the HPCC / ConWeave
            //# ns-3 code's Mellanox reaction point.
            reaction_point: ReactionPoint::Mellanox,
            rate_decrease_interval_us: 4.0,
            rate_on_first_cnp: 1.0,
        }
    }

    /// `(R_AI, R_HAI)` when not given: the line rate divided by these.
    fn increase_divisors(self) -> (u64, u64) {
        //= seqbalance §2.3.5; type=assumption
        //# R_AI scales as 10·C/25G Mb/s, R_HAI as 25·C/25G (HPCC ns-3: 5·C/25G and 50·C/25G).
        match self {
            DcqcnPreset::Seqbalance => (2500, 1000),
            DcqcnPreset::Hpcc => (5000, 500),
        }
    }
}

/// The derived field-by-field deserializer of [`DcqcnParams`], as a type.
struct PlainParams(DcqcnParams);

impl<'de> Deserialize<'de> for PlainParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        DcqcnParams::deserialize(d).map(PlainParams)
    }
}

impl Serialize for DcqcnParams {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        DcqcnParams::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for DcqcnParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let table = toml::Table::deserialize(d)?;
        Self::with_preset(table)
    }
}

impl DcqcnParams {
    /// The parameters of a `[transport.cc]` table: those of its `preset` (or the defaults)
    /// with every key given in the table overriding them.
    fn with_preset<E: serde::de::Error>(table: toml::Table) -> std::result::Result<Self, E> {
        let Some(preset) = table.get("preset") else {
            return crate::scheme::deserialize_params::<PlainParams, E>(table).map(|p| p.0);
        };
        let preset: DcqcnPreset = preset
            .clone()
            .try_into()
            .map_err(|_| E::custom(format!("`preset`: unknown preset {preset}; allowed: \"seqbalance\", \"hpcc\"")))?;
        let mut merged = match toml::Value::try_from(preset.params()) {
            Ok(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        };
        merged.extend(table);
        crate::scheme::deserialize_params::<PlainParams, E>(merged).map(|p| p.0)
    }
}

impl Default for DcqcnParams {
    fn default() -> Self {
        //= DCQCN §3.1, §5; spec strack.md §5.4 (RoCEv2 baseline: DCQCN paper values)
        //# g 1/256, α and rate timers 55 µs, byte counter 10 MB, F = 5, R_AI 40 Mb/s per 40 G,
        //# R_HAI = 10 R_AI, min rate 1 Mb/s, one CNP per 50 µs.
        DcqcnParams {
            preset: None,
            g: 1.0 / 256.0,
            alpha_init: 1.0,
            alpha_timer_us: 55.0,
            rate_timer_us: 55.0,
            byte_counter_bytes: Bytes(10_000_000),
            fast_recovery_steps: 5,
            rate_ai_mbps: None,
            rate_hai_mbps: None,
            min_rate_mbps: 1.0,
            clamp_target_rate: true,
            cnp_interval_us: 50.0,
            window_bdp: None,
            bdp_of: BdpOf::Path,
            window_scales_with_rate: false,
            ooo_triggers_cnp: false,
            reaction_point: ReactionPoint::Paper,
            //= HPCC ns-3 config RATE_DECREASE_INTERVAL 4 (µs); RdmaHw's RateOnFirstCnp default 1.0
            rate_decrease_interval_us: 4.0,
            rate_on_first_cnp: 1.0,
        }
    }
}

fn key(field: &str) -> String {
    format!("transport.cc.{field}")
}

/// A period in µs: finite, at least 1 ps once rounded, at most [`MAX_US`].
fn period(field: &str, us: f64) -> Result<()> {
    if us.is_finite() && (us * US.0 as f64).round() >= 1.0 && us <= MAX_US {
        Ok(())
    } else {
        Err(Error::invalid(key(field), format!("{us}: must be a period in µs, from 0.000001 (1 ps) to {MAX_US}")))
    }
}

/// A rate in Mb/s: finite, at least 1 b/s once rounded.
fn rate(field: &str, mbps: f64) -> Result<()> {
    if mbps.is_finite() && (mbps * 1e6).round() >= 1.0 && mbps <= 1e9 {
        Ok(())
    } else {
        Err(Error::invalid(key(field), format!("{mbps}: must be a rate in Mb/s, from 0.000001 (1 b/s) to 1e9")))
    }
}

fn mbps_to_bps(mbps: f64) -> u64 {
    (mbps * 1e6).round() as u64
}


impl DcqcnParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.g > 0.0 && self.g <= 1.0 && (self.g * ONE as f64).round() >= 1.0) {
            return Err(Error::invalid(key("g"), format!("{}: must be in (0, 1]", self.g)));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(Error::invalid(key("alpha_init"), format!("{}: must be in [0, 1]", self.alpha_init)));
        }
        period("alpha_timer_us", self.alpha_timer_us)?;
        period("rate_timer_us", self.rate_timer_us)?;
        if let Some(r) = self.rate_ai_mbps {
            rate("rate_ai_mbps", r)?;
        }
        if let Some(r) = self.rate_hai_mbps {
            rate("rate_hai_mbps", r)?;
        }
        rate("min_rate_mbps", self.min_rate_mbps)?;
        if !(self.cnp_interval_us.is_finite() && self.cnp_interval_us >= 0.0 && self.cnp_interval_us <= MAX_US) {
            return Err(Error::invalid(
                key("cnp_interval_us"),
                format!("{}: must be an interval in µs, from 0 (a CNP per marked packet) to {MAX_US}", self.cnp_interval_us),
            ));
        }
        period("rate_decrease_interval_us", self.rate_decrease_interval_us)?;
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(Error::invalid(key("rate_on_first_cnp"), format!("{}: must be a share of the rate in (0, 1]", self.rate_on_first_cnp)));
        }
        if self.reaction_point == ReactionPoint::Mellanox {
            if self.byte_counter_bytes != Bytes::ZERO {
                return Err(Error::invalid(key("byte_counter_bytes"), format!("{}: the mellanox reaction point has no byte counter; set 0 (or reaction_point = \"paper\")", self.byte_counter_bytes)));
            }
        }
        super::check_rate_window(self.window_bdp, self.window_scales_with_rate)
    }

    /// The notification point's CNP interval (at most one CNP per connection per interval);
    /// `None` under the mellanox reaction point, whose CNPs ride on the ACKs.
    pub fn cnp_interval(&self) -> Option<Time> {
        (self.reaction_point == ReactionPoint::Paper).then(|| us_to_ps(self.cnp_interval_us))
    }
}

/// The controller of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dcqcn {
    /// Line rate = host link rate, bit/s.
    line: u64,
    /// Rate floor, bit/s.
    min_rate: u64,
    /// `R_AI`, bit/s.
    r_ai: u64,
    /// `R_HAI`, bit/s.
    r_hai: u64,
    /// `g` in 1/2^32.
    g: u64,
    alpha_period: Time,
    rate_period: Time,
    /// Byte-counter threshold `B`; 0 = no byte counter.
    b: u64,
    /// `F`.
    f: u64,
    clamp_target_rate: bool,
    window: Option<u64>,
    /// `window_scales_with_rate`.
    window_scales: bool,

    /// Current rate `Rc`, bit/s.
    rc: u64,
    /// Target rate `Rt`, bit/s.
    rt: u64,
    /// `α` in 1/2^32.
    alpha: u64,
    /// Bytes sent since the last byte-counter event (or cut).
    sent: u64,
    /// `T`: rate-timer expiries since the last cut.
    t: u64,
    /// `BC`: byte-counter events since the last cut.
    bc: u64,
    /// Next α-timer expiry; `None` while stopped.
    alpha_due: Option<Time>,
    /// Next rate-timer expiry; `None` while stopped.
    rate_due: Option<Time>,
    /// Whether a CNP has arrived yet (the byte counter only counts after one).
    active: bool,
    /// The mellanox reaction point's state (`None`: the paper's).
    mlx: Option<Mellanox>,
}

/// What the mellanox reaction point keeps beside the rates, α and the stage (`T`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mellanox {
    /// `T_dec`.
    dec_period: Time,
    /// Next rate-decrease check; `None` before the first CNP.
    dec_due: Option<Time>,
    /// A CNP arrived since the last α expiry.
    alpha_cnp: bool,
    /// A CNP arrived since the last rate-decrease check.
    dec_cnp: bool,
    /// The share of the rate kept at the first CNP, in 1/2^32.
    first_keep: u64,
}

/// `ceil((a + b)/2)`: the midpoint, rounded up so that repeated averaging reaches `a` exactly.
fn mid_up(a: u64, b: u64) -> u64 {
    ((a as u128 + b as u128).div_ceil(2)) as u64
}

impl Dcqcn {
    /// A controller for a connection on `path`, at line rate.
    pub fn new(p: &DcqcnParams, path: &PathInfo) -> Self {
        let line = path.host_rate.0.max(1);
        //= DCQCN §5 (R_AI = 40 Mb/s at 40 Gb/s); spec strack.md §5.4 (scaled by link speed/40 G)
        //# 40 Mb/s per 40 Gb/s is one thousandth of the line rate.
        //= spec strack.md §5.4 type=assumption
        //# R_HAI = 10 × R_AI.
        let divisors = p.preset.map(DcqcnPreset::increase_divisors);
        let r_ai = p.rate_ai_mbps.map_or(line / divisors.map_or(1000, |d| d.0), mbps_to_bps).max(1);
        let r_hai = p.rate_hai_mbps.map_or(divisors.map_or(r_ai.saturating_mul(10), |d| line / d.1), mbps_to_bps).max(1);
        let window = super::window_of_bdps(p.window_bdp, p.bdp_of, path);
        Dcqcn {
            line,
            min_rate: mbps_to_bps(p.min_rate_mbps).clamp(1, line),
            r_ai,
            r_hai,
            g: ((p.g * ONE as f64).round() as u64).clamp(1, ONE),
            alpha_period: us_to_ps(p.alpha_timer_us).max(Time(1)),
            rate_period: us_to_ps(p.rate_timer_us).max(Time(1)),
            b: p.byte_counter_bytes.0,
            f: p.fast_recovery_steps as u64,
            clamp_target_rate: p.clamp_target_rate,
            window,
            window_scales: p.window_scales_with_rate,
            rc: line,
            rt: line,
            alpha: ((p.alpha_init * ONE as f64).round() as u64).min(ONE),
            sent: 0,
            t: 0,
            bc: 0,
            alpha_due: None,
            rate_due: None,
            active: false,
            mlx: (p.reaction_point == ReactionPoint::Mellanox).then(|| Mellanox {
                dec_period: us_to_ps(p.rate_decrease_interval_us).max(Time(1)),
                dec_due: None,
                alpha_cnp: false,
                dec_cnp: false,
                first_keep: ((p.rate_on_first_cnp * ONE as f64).round() as u64).clamp(1, ONE),
            }),
        }
    }

    /// Current rate `Rc`.
    pub fn rc(&self) -> BitsPerSec {
        BitsPerSec(self.rc)
    }

    /// Target rate `Rt`.
    pub fn rt(&self) -> BitsPerSec {
        BitsPerSec(self.rt)
    }

    /// `α`, for tests and traces.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ONE as f64
    }

    /// `(T, BC)`: rate-timer and byte-counter events since the last cut.
    pub fn counters(&self) -> (u64, u64) {
        (self.t, self.bc)
    }

    /// Replays the timer expiries due at or before `now`, in time order. The two timers touch
    /// disjoint state (α; `Rc`, `Rt`, `T`), so each is replayed on its own.
    fn advance(&mut self, now: Time) {
        if self.mlx.is_some() {
            return self.advance_mellanox(now);
        }
        while let Some(due) = self.alpha_due.filter(|&d| d <= now) {
            //= DCQCN §3.1 (α update)
            //# A whole α period without a CNP: α = (1 − g)·α.
            self.alpha = mul_frac(self.alpha, ONE - self.g);
            // At 0 further expiries change nothing: stop until the next CNP restarts the timer.
            // Reaching 0 takes about (ln(2^32·g) + 1)/g expiries (≈ 4,500 at g = 1/256).
            self.alpha_due = (self.alpha > 0).then_some(due + self.alpha_period);
        }
        while let Some(due) = self.rate_due.filter(|&d| d <= now) {
            self.t += 1;
            let gap = self.rt - self.rc;
            let inc = self.increase();
            let mut next = due + self.rate_period;
            if self.rc == self.line {
                // Rc = Rt = line rate: every later increase is a no-op until the next cut.
                self.rate_due = None;
                break;
            }
            if self.rt - self.rc == gap {
                // The step moved Rc and Rt by the same `inc` (0 in fast recovery once Rc = Rt).
                // Averaging commutes with shifting both rates by `inc`, so the next steps that
                // add the same `inc` and stay below the line rate just repeat that shift.
                let pending = if next <= now { (now - next) / self.rate_period + 1 } else { 0 };
                let room = (self.line - self.rt).checked_div(inc).unwrap_or(u64::MAX);
                let k = pending.min(room).min(self.same_inc_steps());
                if k > 0 {
                    self.rt += k * inc;
                    self.rc += k * inc;
                    self.t += k;
                    next += k * self.rate_period;
                }
            }
            self.rate_due = Some(next);
        }
    }

    /// One rate increase (timer or byte counter), after that counter was incremented; returns
    /// the amount added to `Rt` before the line-rate clamp.
    fn increase(&mut self) -> u64 {
        let inc = self.inc_for(self.t, self.bc);
        //= DCQCN §3.1 (rate increase, Fig. 6)
        //# Fast recovery keeps Rt; additive and hyper increase raise it; Rc moves halfway to Rt.
        self.rt = self.rt.saturating_add(inc).min(self.line);
        self.rc = mid_up(self.rt, self.rc);
        debug_assert!(self.min_rate <= self.rc && self.rc <= self.rt && self.rt <= self.line);
        inc
    }

    /// What an increase with counts `t`, `bc` (this event included) adds to `Rt`.
    fn inc_for(&self, t: u64, bc: u64) -> u64 {
        //= DCQCN §3.1 (rate increase); spec strack.md §5.4 (F = 5 fast-recovery steps)
        //# Both counts ≤ F: fast recovery. Both > F: hyper increase by (min − F)·R_HAI. Else
        //# additive increase by R_AI.
        //= type=assumption (counts include this event, so ≤ F gives exactly F fast-recovery steps, as htsim)
        if self.b == 0 {
            //= seqbalance §2.3.5 (rate increase); type=assumption
            //# Without a byte counter the stage alone decides: stage < F fast recovery, stage = F
            //# additive (R_AI), stage > F hyper (R_HAI); our T is the stage + 1.
            return if t <= self.f {
                0
            } else if t == self.f + 1 {
                self.r_ai
            } else {
                self.r_hai
            };
        }
        if t.max(bc) <= self.f {
            0
        } else if t.min(bc) > self.f {
            (t.min(bc) - self.f).saturating_mul(self.r_hai)
        } else {
            self.r_ai
        }
    }

    /// How many of the next rate-timer steps (counts `T + 1, T + 2, …`, `BC` fixed) add the same
    /// amount as the step just taken (count `T`).
    fn same_inc_steps(&self) -> u64 {
        let (t, bc, f) = (self.t, self.bc, self.f);
        if self.b == 0 {
            // The stage rule of `inc_for`: fast recovery until T = F, one additive step, then
            // hyper increase by the same R_HAI for good.
            return if t <= f {
                f - t
            } else if t == f + 1 {
                0
            } else {
                u64::MAX
            };
        }
        if t.max(bc) <= f {
            f - t // fast recovery until T = F
        } else if t.min(bc) > f {
            if t >= bc {
                u64::MAX // hyper increase with i = BC − F from now on
            } else {
                0 // i = T − F grows every step
            }
        } else if t > f {
            u64::MAX // BC ≤ F: additive increase from now on
        } else {
            f - t // BC > F: additive until T = F, hyper after
        }
    }

    /// The mellanox reaction point's timers, replayed in time order up to `now` (ns-3
    /// `RdmaHw::UpdateAlphaMlx`, `CheckRateDecreaseMlx`, `RateIncEventTimerMlx`). Their
    /// expiries never coincide there but a rate-timer expiry and a decrease check can: the
    /// rate timer, scheduled earlier, goes first, as ns-3 orders same-time events.
    fn advance_mellanox(&mut self, now: Time) {
        // Taken out while the timers run, so that the rate steps can borrow the controller.
        let Some(mut m) = self.mlx.take() else { return };
        loop {
            let rate = self.rate_due.filter(|&d| d <= now);
            let alpha = self.alpha_due.filter(|&d| d <= now);
            let dec = m.dec_due.filter(|&d| d <= now);
            let first = [rate, alpha, dec].into_iter().flatten().min();
            let Some(at) = first else { break };
            if rate == Some(at) {
                //= ns-3 RateIncEventTimerMlx: reschedule, increase by the stage, stage + 1
                self.rate_due = Some(at + self.rate_period);
                self.t += 1;
                self.increase();
                if self.rc == self.line {
                    // Every later increase is a no-op until the next cut restarts the timer.
                    self.rate_due = None;
                }
            } else if alpha == Some(at) {
                //= ns-3 UpdateAlphaMlx: α = (1 − g)·α, + g if a CNP came in the period
                self.alpha = mul_frac(self.alpha, ONE - self.g) + if m.alpha_cnp { self.g } else { 0 };
                m.alpha_cnp = false;
                self.alpha_due = Some(at + self.alpha_period);
                if self.alpha == 0 {
                    // α stays 0 until a CNP, which replays up to its own time first.
                    self.alpha_due = Some(next_tick(at, self.alpha_period, now));
                }
            } else if m.dec_cnp {
                //= ns-3 CheckRateDecreaseMlx: with a CNP in the period, Rt = Rc (unless unclamped
                //# before any increase), Rc = Rc·(1 − α/2), stage 0, rate timer restarted
                self.cut_rate();
                self.t = 0;
                m.dec_cnp = false;
                self.rate_due = Some(at + self.rate_period);
                m.dec_due = Some(at + m.dec_period);
            } else {
                // No CNP in the period: checks change nothing until one arrives.
                m.dec_due = Some(next_tick(at, m.dec_period, now));
            }
        }
        self.mlx = Some(m);
    }

    /// A CNP reached the mellanox reaction point (an ACK echoing a CE mark): flags for the
    /// timers; the first one also arms them (ns-3 `RdmaHw::cnp_received_mlx`).
    fn cnp_mellanox(&mut self, now: Time) {
        let Some(m) = self.mlx.as_mut() else { return };
        m.alpha_cnp = true;
        m.dec_cnp = true;
        if !self.active {
            //= ns-3 cnp_received_mlx: on the first CNP α = 1, the α timer starts, the decrease
            //# check starts 1 ns after a period (after the α expiry at the same µs), and the
            //# rate and target become RateOnFirstCnp × the rate
            self.active = true;
            self.alpha = ONE;
            m.alpha_cnp = false;
            self.alpha_due = Some(now + self.alpha_period);
            m.dec_due = Some(now + m.dec_period + crate::units::NS);
            self.rc = mul_frac(self.rc, m.first_keep).max(self.min_rate);
            self.rt = self.rc;
        }
    }

    /// The rate cut both reaction points share: `Rt = Rc` (unclamped, only if an increase
    /// happened since the last cut: ns-3's `ClampTargetRate = 0`), then `Rc = Rc·(1 − α/2)`.
    fn cut_rate(&mut self) {
        if self.clamp_target_rate || self.t + self.bc > 0 {
            self.rt = self.rc;
        }
        let keep = 2 * ONE - self.alpha;
        self.rc = ((self.rc as u128 * keep as u128 / (2 * ONE) as u128) as u64).max(self.min_rate);
    }

    /// A CNP arrived: cut the rate.
    fn cut(&mut self, now: Time) {
        //= DCQCN §3.1 (rate decrease)
        //# Remember the rate before the cut as the target, cut by α/2, then raise α.
        self.cut_rate();
        self.alpha = mul_frac(self.alpha, ONE - self.g) + self.g;
        debug_assert!(self.alpha <= ONE);
        //= DCQCN §3.1
        //# A cut restarts recovery: counters and byte counter to zero, both timers restarted.
        self.t = 0;
        self.bc = 0;
        self.sent = 0;
        self.alpha_due = Some(now + self.alpha_period);
        self.rate_due = Some(now + self.rate_period);
        self.active = true;
    }
}

/// The first expiry of a timer of `period` that last expired at `at` that lies after `now`.
fn next_tick(at: Time, period: Time, now: Time) -> Time {
    at + ((now - at) / period + 1) * period
}

/// `floor(x · frac / 2^32)`.
fn mul_frac(x: u64, frac: u64) -> u64 {
    ((x as u128 * frac as u128) >> 32) as u64
}

impl CongestionControl for Dcqcn {
    fn on_ack(&mut self, ev: &AckEvent) {
        self.advance(ev.now);
        //= ns-3 RdmaHw::ReceiveAck: the ACK's CNP flag (set when its data packet was CE-marked)
        if self.mlx.is_some() && (ev.ecn || ev.marked_pkts > 0) {
            self.cnp_mellanox(ev.now);
        }
    }

    fn on_nack(&mut self, ev: &NackEvent) {
        self.advance(ev.now);
    }

    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.advance(ev.now);
    }

    fn on_send(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        if !self.active || self.b == 0 {
            return;
        }
        //= DCQCN §3.1 (byte counter)
        //# Every B bytes sent since the last cut is one byte-counter event and one increase.
        self.sent += bytes;
        while self.sent >= self.b {
            self.sent -= self.b;
            self.bc += 1;
            self.increase();
        }
    }

    fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        // The mellanox reaction point hears of congestion through flags (an ACK's, above, or a
        // NACK's, which arrives here): it notes them for its timers instead of cutting.
        if self.mlx.is_some() {
            self.cnp_mellanox(now);
        } else {
            self.cut(now);
        }
    }

    fn advance_to(&mut self, now: Time) {
        self.advance(now);
    }

    fn window(&self) -> Option<u64> {
        super::rate_window(self.window, self.window_scales, self.rc, self.line)
    }

    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(BitsPerSec(self.rc))
    }
}

impl crate::scheme::Scheme<PathInfo> for Dcqcn {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("g", 1e-9, 1.0), crate::scheme::Limit::new("alpha_init", 0.0, 1.0), crate::scheme::Limit::new("alpha_timer_us", 0.001, 1e9), crate::scheme::Limit::new("rate_timer_us", 0.001, 1e9), crate::scheme::Limit::new("byte_counter_bytes", 0.0, 1099511627776.0), crate::scheme::Limit::new("fast_recovery_steps", 0.0, 1000000.0), crate::scheme::Limit::new("rate_ai_mbps", 0.001, 1000000000.0), crate::scheme::Limit::new("rate_hai_mbps", 0.001, 1000000000.0), crate::scheme::Limit::new("min_rate_mbps", 1.0, 1000000000.0), crate::scheme::Limit::new("cnp_interval_us", 0.0, 1e9), crate::scheme::Limit::new("window_bdp", 0.001, 1000.0), crate::scheme::Limit::new("rate_decrease_interval_us", 0.001, 1e9), crate::scheme::Limit::new("rate_on_first_cnp", 1e-6, 1.0)];
    type Params = DcqcnParams;
    fn check(p: &DcqcnParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &DcqcnParams, path: &mut PathInfo) -> Self {
        Dcqcn::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{self, ACK, MTU};

    const G400: u64 = 400_000_000_000;
    /// 400 Gb/s host link: R_AI = 400 Mb/s, R_HAI = 4 Gb/s.
    const PATH: PathInfo = testing::path(G400, 100 * MTU);
    /// Default timer period, 55 µs.
    const P: Time = Time::from_us(55);

    fn cc(p: DcqcnParams) -> Dcqcn {
        Dcqcn::new(&p, &PATH)
    }

    fn at(c: &mut Dcqcn, now: Time) {
        c.on_ack(&AckEvent { now, ..ACK });
    }

    #[test]
    fn starts_at_line_rate_without_a_window() {
        let c = cc(DcqcnParams::default());
        assert_eq!(c.pacing_rate(), Some(BitsPerSec(G400)));
        assert_eq!(c.window(), None);
        assert_eq!((c.r_ai, c.r_hai), (400_000_000, 4_000_000_000));
        assert_eq!(c.alpha(), 1.0);
        // A window only if asked: 2 BDPs = 819,200 B.
        assert_eq!(cc(DcqcnParams { window_bdp: Some(2.0), ..DcqcnParams::default() }).window(), Some(819_200));
    }

    //= type=test
    //# HPCC ns-3 VAR_WIN (RdmaQueuePair::GetWin): window × rate / max rate.
    #[test]
    fn a_window_that_scales_with_the_rate_halves_with_it() {
        let mut c = cc(DcqcnParams { window_bdp: Some(2.0), window_scales_with_rate: true, ..DcqcnParams::default() });
        assert_eq!(c.window(), Some(819_200));
        c.on_cnp(Time::ZERO);
        assert_eq!((c.rc().0, c.window()), (200_000_000_000, Some(409_600)));
        let e = DcqcnParams { window_scales_with_rate: true, ..DcqcnParams::default() }.validate().unwrap_err().to_string();
        assert!(e.contains("transport.cc.window_scales_with_rate"), "{e}");
    }

    //= type=test
    //# HPCC ns-3 GLOBAL_T 1 (scratch/third.cc): every QP's window is maxBdp, the largest BDP of
    //# any host pair, not its own pair's.
    #[test]
    fn a_window_of_network_bdps_counts_the_longest_path_not_its_own() {
        // A short path inside a fabric whose longest path is twice as long: 400 Gb/s × 5 µs =
        // 250,000 B on its own path, 400 Gb/s × 10 µs = 500,000 B across the network.
        let short = PathInfo { base_rtt: 5 * US, bdp_bytes: Bytes(250_000), net_base_rtt: 10 * US, ..PATH };
        let w = |bdp_of| Dcqcn::new(&DcqcnParams { window_bdp: Some(1.0), bdp_of, ..DcqcnParams::default() }, &short).window();
        assert_eq!(w(BdpOf::Path), Some(250_000));
        assert_eq!(w(BdpOf::Network), Some(500_000));
        // Read from a scenario's table; the default is left out of a resolved one.
        let p: DcqcnParams = toml::from_str("bdp_of = \"network\"\nwindow_bdp = 1.0").unwrap();
        assert_eq!(p.bdp_of, BdpOf::Network);
        assert!(toml::to_string(&p).unwrap().contains("bdp_of = \"network\""));
        assert!(toml::to_string(&DcqcnParams::default()).unwrap().contains("bdp_of = \"path\""));
    }

    //= type=test
    //# CNP: Rt = Rc, Rc = Rc·(1 − α/2), α = (1 − g)α + g.
    #[test]
    fn cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut c = cc(DcqcnParams::default());
        c.on_cnp(Time::ZERO);
        // α = 1: Rc = 400·(1 − 1/2) = 200 G; Rt = 400 G; α = (255/256)·1 + 1/256 = 1.
        assert_eq!((c.rc(), c.rt(), c.alpha()), (BitsPerSec(200_000_000_000), BitsPerSec(G400), 1.0));
        assert_eq!(c.pacing_rate(), Some(BitsPerSec(200_000_000_000)));
        c.on_cnp(US);
        assert_eq!((c.rc().0, c.rt().0), (100_000_000_000, 200_000_000_000));

        // α = 0.5: Rc = 400·(1 − 0.25) = 300 G; α = 0.5·255/256 + 1/256 = 0.501953125.
        let mut c = cc(DcqcnParams { alpha_init: 0.5, ..DcqcnParams::default() });
        c.on_cnp(Time::ZERO);
        assert_eq!((c.rc().0, c.rt().0), (300_000_000_000, G400));
        assert_eq!(c.alpha(), 0.501953125);
        // Second cut uses α = 0.501953125: 300 G × (1 − 0.2509765625) = 224,707,031,250 b/s.
        c.on_cnp(US);
        assert_eq!((c.rc().0, c.rt().0), (224_707_031_250, 300_000_000_000));
    }

    //= type=test
    //# Each quiet α period: α = (1 − g)α; a CNP restarts the α timer; no decay before the first CNP.
    #[test]
    fn alpha_decays_once_per_quiet_period() {
        let mut c = cc(DcqcnParams::default());
        at(&mut c, 1000 * P);
        assert_eq!(c.alpha(), 1.0, "timers start at the first CNP");
        let mut c = cc(DcqcnParams::default());
        c.on_cnp(Time::ZERO);
        at(&mut c, 10 * P - Time(1));
        let nine = (255.0f64 / 256.0).powi(9);
        assert!((c.alpha() - nine).abs() < 1e-8, "{} vs {nine}", c.alpha());
        at(&mut c, 10 * P);
        let ten = (255.0f64 / 256.0).powi(10);
        assert!((c.alpha() - ten).abs() < 1e-8, "{} vs {ten}", c.alpha());
        // A CNP at 30 µs restarts the period: α back to (1 − g)α + g, next decay at 85 µs.
        let mut c = cc(DcqcnParams { alpha_init: 0.5, ..DcqcnParams::default() });
        c.on_cnp(Time::ZERO);
        c.on_cnp(30 * US);
        let a = (0.5f64 * 255.0 / 256.0 + 1.0 / 256.0) * 255.0 / 256.0 + 1.0 / 256.0;
        assert!((c.alpha() - a).abs() < 1e-8);
        at(&mut c, 84 * US);
        assert!((c.alpha() - a).abs() < 1e-8, "no decay 54 µs after the CNP");
        at(&mut c, 85 * US);
        assert!((c.alpha() - a * 255.0 / 256.0).abs() < 1e-8);
        // g = 1: one quiet period takes α to 0, and the timer stops.
        let mut c = cc(DcqcnParams { g: 1.0, ..DcqcnParams::default() });
        c.on_cnp(Time::ZERO);
        at(&mut c, P);
        assert_eq!((c.alpha(), c.alpha_due), (0.0, None));
    }

    //= type=test
    //# Fast recovery: F timer events each halve the distance to Rt, which stays put.
    #[test]
    fn fast_recovery_halves_the_distance_to_the_target_for_f_steps() {
        let mut c = cc(DcqcnParams::default());
        c.on_cnp(Time::ZERO);
        // 200 G below Rt = 400 G: after k events 400 − 200/2^k G.
        for (k, want) in [300_000_000_000, 350_000_000_000, 375_000_000_000, 387_500_000_000, 393_750_000_000].into_iter().enumerate() {
            let k = k as u64 + 1;
            at(&mut c, k * P - Time(1));
            assert_eq!(c.counters(), (k - 1, 0));
            at(&mut c, k * P);
            assert_eq!((c.rc().0, c.rt().0, c.counters()), (want, G400, (k, 0)), "event {k}");
        }
    }

    //= type=test
    //# After F timer events (BC ≤ F): additive increase, Rt += R_AI, Rc = (Rt + Rc)/2.
    #[test]
    fn additive_increase_after_f_timer_events() {
        let mut c = cc(DcqcnParams::default());
        // Two cuts at once: Rc = 100 G, Rt = 200 G (timers from the second CNP at 1 µs).
        c.on_cnp(Time::ZERO);
        c.on_cnp(US);
        at(&mut c, US + 5 * P);
        // Five fast-recovery steps: 200 − 100/32 = 196.875 G.
        assert_eq!((c.rc().0, c.rt().0), (196_875_000_000, 200_000_000_000));
        at(&mut c, US + 6 * P);
        // T = 6 > F, BC = 0: Rt = 200.4 G, Rc = (200.4 + 196.875)/2 = 198.6375 G.
        assert_eq!((c.rc().0, c.rt().0), (198_637_500_000, 200_400_000_000));
        at(&mut c, US + 7 * P);
        // Rt = 200.8 G, Rc = (200.8 + 198.6375)/2 = 199.71875 G.
        assert_eq!((c.rc().0, c.rt().0), (199_718_750_000, 200_800_000_000));
    }

    //= type=test
    //# Hyper increase once both counts exceed F: Rt += (min(T, BC) − F)·R_HAI.
    #[test]
    fn hyper_increase_when_both_counters_exceed_f() {
        // 40 G link (R_AI = 40 Mb/s, R_HAI = 400 Mb/s), F = 1, one byte-counter event per packet.
        let p = DcqcnParams { fast_recovery_steps: 1, byte_counter_bytes: Bytes(MTU), ..DcqcnParams::default() };
        let mut c = Dcqcn::new(&p, &testing::path(40_000_000_000, 100 * MTU));
        c.on_cnp(Time::ZERO);
        c.on_cnp(Time::ZERO);
        assert_eq!((c.rc().0, c.rt().0), (10_000_000_000, 20_000_000_000));
        // BC = 1, T = 0: fast recovery, Rc = 15 G.
        c.on_send(US, MTU);
        assert_eq!(c.rc().0, 15_000_000_000);
        // BC = 2 > F, T = 0: additive, Rt = 20.04 G, Rc = (20.04 + 15)/2 = 17.52 G.
        c.on_send(US, MTU);
        assert_eq!((c.rc().0, c.rt().0), (17_520_000_000, 20_040_000_000));
        // Timer, T = 1 ≤ F: additive, Rt = 20.08 G, Rc = (20.08 + 17.52)/2 = 18.8 G.
        at(&mut c, P);
        assert_eq!((c.rc().0, c.rt().0), (18_800_000_000, 20_080_000_000));
        // Timer, T = 2, BC = 2: hyper with i = 1: Rt = 20.48 G, Rc = (20.48 + 18.8)/2 = 19.64 G.
        at(&mut c, 2 * P);
        assert_eq!((c.rc().0, c.rt().0), (19_640_000_000, 20_480_000_000));
        // BC = 3, T = 2: i = 1: Rt = 20.88 G, Rc = (20.88 + 19.64)/2 = 20.26 G.
        c.on_send(2 * P + US, MTU);
        assert_eq!((c.rc().0, c.rt().0), (20_260_000_000, 20_880_000_000));
        // T = 3, BC = 3: i = 2: Rt = 20.88 + 0.8 = 21.68 G, Rc = (21.68 + 20.26)/2 = 20.97 G.
        at(&mut c, 3 * P);
        assert_eq!((c.rc().0, c.rt().0, c.counters()), (20_970_000_000, 21_680_000_000, (3, 3)));
    }

    //= type=test
    //# Byte counter: every B bytes sent is an increase event, with no timer involved.
    #[test]
    fn byte_counter_triggers_increases_from_sent_bytes_alone() {
        let mut c = cc(DcqcnParams::default());
        // Before the first CNP bytes do not count.
        c.on_send(Time::ZERO, 50_000_000);
        assert_eq!(c.counters(), (0, 0));
        c.on_cnp(Time::ZERO);
        c.on_send(US, 9_999_999);
        assert_eq!((c.rc().0, c.counters()), (200_000_000_000, (0, 0)));
        // The 10,000,000th byte: fast recovery, Rc = (400 + 200)/2 = 300 G.
        c.on_send(US, 1);
        assert_eq!((c.rc().0, c.counters()), (300_000_000_000, (0, 1)));
        // 25 MB: two events (350 G, 375 G), 5 MB carried over; 5 MB more is the fourth event.
        c.on_send(2 * US, 25_000_000);
        assert_eq!((c.rc().0, c.counters()), (375_000_000_000, (0, 3)));
        c.on_send(3 * US, 5_000_000);
        assert_eq!((c.rc().0, c.rt().0, c.counters()), (387_500_000_000, G400, (0, 4)));
        // A CNP resets the count and the carried bytes.
        c.on_send(4 * US, 9_000_000);
        c.on_cnp(5 * US);
        c.on_send(6 * US, 9_000_000);
        assert_eq!(c.counters(), (0, 0));
    }

    //= type=test
    //# Rc never falls below min_rate, however many CNPs arrive.
    #[test]
    fn cnp_storm_stops_at_the_minimum_rate() {
        let mut c = cc(DcqcnParams::default());
        // CNPs 1 µs apart never let a timer expire; α stays 1, so each halves Rc.
        for i in 0..18 {
            c.on_cnp(i * US);
        }
        // 400 G / 2^18 = 1,525,878.906 b/s, rounded down.
        assert_eq!(c.rc().0, 1_525_878);
        c.on_cnp(18 * US);
        // 762,939 b/s would be below 1 Mb/s: clamped.
        assert_eq!((c.rc().0, c.rt().0), (1_000_000, 1_525_878));
        for i in 19..1000 {
            c.on_cnp(i * US);
            assert_eq!(c.pacing_rate(), Some(BitsPerSec(1_000_000)));
        }
        assert_eq!(c.rt().0, 1_000_000);
        // A higher floor: 1 Gb/s.
        let mut c = cc(DcqcnParams { min_rate_mbps: 1000.0, ..DcqcnParams::default() });
        for i in 0..100 {
            c.on_cnp(i * US);
        }
        assert_eq!(c.rc().0, 1_000_000_000);
    }

    //= type=test
    //# Rc and Rt never exceed the line rate; recovery reaches it exactly and then stops the timer.
    #[test]
    fn recovery_is_capped_at_line_rate() {
        let p = DcqcnParams { byte_counter_bytes: Bytes(100_000), ..DcqcnParams::default() };
        let mut c = cc(p);
        for i in 0..30 {
            c.on_cnp(i * US);
        }
        let mut now = 30 * US;
        for _ in 0..20_000 {
            now += US;
            // Sends push BC up too, so hyper increase (with i growing) is reached.
            c.on_send(now, 1_000_000);
            assert!(c.rt().0 <= G400 && c.rc() <= c.rt(), "{:?} {:?}", c.rc(), c.rt());
        }
        assert_eq!((c.rc().0, c.rt().0), (G400, G400));
        assert_eq!(c.rate_due, None, "no more rate-timer work at line rate");
        // The clamp_target_rate = false variant is capped as well.
        let mut c = cc(DcqcnParams { clamp_target_rate: false, ..DcqcnParams::default() });
        c.on_cnp(Time::ZERO);
        at(&mut c, 1_000_000 * US);
        assert_eq!((c.rc().0, c.rt().0), (G400, G400));
    }

    //= type=test
    //# clamp_target_rate = false: a CNP sets Rt = Rc only after an increase since the last cut.
    #[test]
    fn unclamped_target_survives_back_to_back_cnps() {
        let mut c = cc(DcqcnParams { clamp_target_rate: false, ..DcqcnParams::default() });
        c.on_cnp(Time::ZERO);
        c.on_cnp(US);
        // No increase between the cuts: Rt stays 400 G (clamped: 200 G), Rc = 100 G.
        assert_eq!((c.rc().0, c.rt().0), (100_000_000_000, G400));
        // One fast-recovery step (Rc = 250 G), then a CNP: now Rt = Rc = 250 G. The α timer
        // expired with the rate timer (α = 255/256), so Rc = 250 G × (1 − 255/512)
        // = 250 G × 257/512 = 125,488,281,250 b/s.
        at(&mut c, US + P);
        assert_eq!(c.rc().0, 250_000_000_000);
        c.on_cnp(US + P + Time(1));
        assert_eq!((c.rc().0, c.rt().0), (125_488_281_250, 250_000_000_000));
    }

    /// Runs `script` (CNPs and sends at given times) on two controllers: one told the time at
    /// every timer expiry and in between, the other only at the scripted events and at `end`.
    fn catch_up_matches_step_by_step(p: DcqcnParams, script: &[(Time, Option<u64>)], end: Time) {
        let mut fine = cc(p.clone());
        let mut coarse = cc(p);
        let mut now = Time::ZERO;
        for &(t, send) in script.iter().chain(std::iter::once(&(end, None))) {
            // Every 1 µs (the periods are whole µs, so every expiry is hit exactly).
            while now + US <= t {
                now += US;
                at(&mut fine, now);
            }
            for c in [&mut fine, &mut coarse] {
                match send {
                    Some(0) => c.on_cnp(t),
                    Some(b) => c.on_send(t, b),
                    None => at(c, t),
                }
            }
            now = t;
            assert_eq!(fine, coarse, "diverged at {t}");
        }
    }

    //= type=test
    //# Catching up over a gap gives exactly what calls at every timer expiry give.
    #[test]
    fn catch_up_over_a_long_gap_equals_step_by_step() {
        let cnp = Some(0);
        let d = DcqcnParams::default;
        // Plain recovery from a deep cut: fast recovery, then additive increase to line rate.
        let deep: Vec<_> = (0..12).map(|i| (i * US, cnp)).collect();
        catch_up_matches_step_by_step(d(), &deep, 200 * 1000 * US);
        // A tiny R_AI (a long additive run, taken in jumps) and a large F (long fast recovery).
        let slow = DcqcnParams { rate_ai_mbps: Some(0.37), fast_recovery_steps: 40, ..d() };
        catch_up_matches_step_by_step(slow, &deep, 100 * 1000 * US);
        // Byte counter past F before the gap: additive then hyper increase with i = BC − F, an
        // uneven R_HAI, an unclamped target; a second episode after the first recovery.
        let mut script = vec![(Time::ZERO, cnp), (US, cnp), (2 * US, cnp)];
        for i in 0..9 {
            script.push((3 * US + i * US, Some(1_000_000)));
        }
        script.push((40_000 * US, cnp));
        script.push((40_001 * US, Some(123_456)));
        let bc = DcqcnParams { byte_counter_bytes: Bytes(1_000_000), rate_hai_mbps: Some(777.7), g: 0.01, clamp_target_rate: false, ..d() };
        catch_up_matches_step_by_step(bc, &script, 80_000 * US);
        // BC far above F with T below it: hyper increase with growing i, then constant i.
        let mut script = vec![(Time::ZERO, cnp); 4];
        for _ in 0..40 {
            script.push((US, Some(1_000)));
        }
        let hyper = DcqcnParams { byte_counter_bytes: Bytes(1_000), rate_hai_mbps: Some(1.0), rate_timer_us: 3.0, ..d() };
        catch_up_matches_step_by_step(hyper, &script, 10_000 * US);
    }

    #[test]
    fn catch_up_is_bounded() {
        // An hour of idle after a deep cut with a 1 b/s R_AI: the replay still finishes at once
        // (a single additive jump), and lands where the arithmetic says.
        let p = DcqcnParams { rate_ai_mbps: Some(0.000001), ..DcqcnParams::default() };
        let mut c = cc(p);
        for i in 0..20 {
            c.on_cnp(i * US);
        }
        let (rc0, rt0) = (c.rc().0, c.rt().0);
        assert_eq!(rc0, 1_000_000);
        let hour = 3_600_000_000 * US;
        at(&mut c, 19 * US + hour);
        // Expiries: floor(hour / 55 µs) = 65,454,545.
        let n = hour / P;
        assert_eq!(n, 65_454_545);
        // Rt rose by 1 b/s per additive step: n − 5 of them (the first 5 are fast recovery).
        assert_eq!(c.rt().0, rt0 + (n - 5));
        assert!(c.rt().0 - c.rc().0 <= 1, "Rc tracks Rt within rounding: {} vs {}", c.rc().0, c.rt().0);
        assert_eq!(c.counters().0, n);
        assert_eq!(c.alpha_due, None, "α decayed to 0 and its timer stopped");
    }

    //= type=test
    //# The NP interval: 50 µs by default, only for dcqcn.
    #[test]
    fn cnp_interval_is_fifty_us_by_default_and_only_for_dcqcn() {
        use super::super::CcConfig;
        assert_eq!(CcConfig::Dcqcn(DcqcnParams::default()).cnp_interval(), Some(50 * US));
        assert_eq!(CcConfig::default().cnp_interval(), None);
        let p = DcqcnParams { cnp_interval_us: 0.0, ..DcqcnParams::default() };
        assert_eq!(CcConfig::Dcqcn(p).cnp_interval(), Some(Time::ZERO));
    }

    #[test]
    fn scenario_table_selects_dcqcn_and_rejects_unknown_keys() {
        use super::super::CcConfig;
        let cfg: CcConfig = toml::from_str("name = \"dcqcn\"\nrate_timer_us = 300.0\nfast_recovery_steps = 1\nrate_ai_mbps = 20.0").unwrap();
        assert!(cfg.validate().is_ok());
        match &cfg {
            CcConfig::Dcqcn(p) => assert_eq!((p.rate_timer_us, p.fast_recovery_steps, p.rate_ai_mbps), (300.0, 1, Some(20.0))),
            other => panic!("{other:?}"),
        }
        let built = cfg.build(&mut PATH.clone());
        assert_eq!(built.pacing_rate(), Some(BitsPerSec(G400)));
        assert_eq!(built.window(), None);
        let err = toml::from_str::<CcConfig>("name = \"dcqcn\"\nrai_mbps = 5.0").unwrap_err();
        assert!(err.to_string().contains("rai_mbps"), "{err}");
    }

    /// The `[transport.cc]` table `text` as `dcqcn` parameters (or the error message).
    fn parse(text: &str) -> std::result::Result<DcqcnParams, String> {
        use super::super::CcConfig;
        match toml::from_str::<CcConfig>(&format!("name = \"dcqcn\"\n{text}")) {
            Ok(CcConfig::Dcqcn(p)) => Ok(p),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    //= type=test
    //= seqbalance §2.3.5; type=assumption
    //# The lineage preset: g 1/256, T_α 1 µs, T_dec 4 µs (the mellanox decrease check), T_inc 300 µs,
    //# F = 1, R_AI 40 / R_HAI 100 Mb/s at 100 G (16 / 40 at 40 G), R_min 100 Mb/s, no clamp,
    //# no byte counter; explicit keys override it.
    #[test]
    fn seqbalance_preset_resolves_to_the_lineage_constants() {
        use super::super::CcConfig;
        let p = parse("preset = \"seqbalance\"").unwrap();
        assert!(p.validate().is_ok());
        assert_eq!(p.preset, Some(DcqcnPreset::Seqbalance));
        assert_eq!((p.g, p.alpha_timer_us, p.cnp_interval_us, p.rate_timer_us), (1.0 / 256.0, 1.0, 4.0, 300.0));
        assert_eq!((p.fast_recovery_steps, p.min_rate_mbps, p.clamp_target_rate, p.byte_counter_bytes), (1, 100.0, false, Bytes::ZERO));
        assert_eq!((p.rate_ai_mbps, p.rate_hai_mbps, p.window_bdp, p.ooo_triggers_cnp), (None, None, None, false));
        let rates = |p: &DcqcnParams, gbps: u64| {
            let c = Dcqcn::new(p, &testing::path(gbps * 1_000_000_000, 100 * MTU));
            (c.r_ai, c.r_hai, c.min_rate, c.alpha_period, c.rate_period)
        };
        assert_eq!(rates(&p, 100), (40_000_000, 100_000_000, 100_000_000, US, 300 * US));
        assert_eq!(rates(&p, 40), (16_000_000, 40_000_000, 100_000_000, US, 300 * US));
        assert_eq!((p.reaction_point, p.rate_decrease_interval_us), (ReactionPoint::Mellanox, 4.0));
        assert_eq!(CcConfig::Dcqcn(p.clone()).cnp_interval(), None, "the ACKs' and NACKs' flags are the CNPs");
        // The HPCC column: 20 / 200 Mb/s at 100 G, 8 / 80 at 40 G, R_min 1 Gb/s.
        let h = parse("preset = \"hpcc\"").unwrap();
        assert_eq!(rates(&h, 100), (20_000_000, 200_000_000, 1_000_000_000, US, 300 * US));
        assert_eq!(rates(&h, 40).0, 8_000_000);
        // Explicit keys win; the rest stays the preset's. The resolved table lists every value
        // and reads back to the same parameters.
        let o = parse("preset = \"seqbalance\"\nrate_ai_mbps = 20.0\nfast_recovery_steps = 5\nooo_triggers_cnp = true").unwrap();
        assert_eq!((o.rate_ai_mbps, o.fast_recovery_steps, o.rate_timer_us, o.ooo_triggers_cnp), (Some(20.0), 5, 300.0, true));
        assert_eq!(rates(&o, 100).0..rates(&o, 100).2, 20_000_000..100_000_000);
        assert!(CcConfig::Dcqcn(o.clone()).ooo_triggers_cnp());
        let resolved = toml::to_string(&o).unwrap();
        assert!(resolved.contains("preset = \"seqbalance\"") && resolved.contains("byte_counter_bytes = 0"), "{resolved}");
        assert_eq!(format!("{:?}", parse(&resolved).unwrap()), format!("{o:?}"));
        // Without a preset nothing changes; the resolved table spells every key out.
        let plain = toml::to_string(&DcqcnParams::default()).unwrap();
        assert!(!plain.contains("preset") && plain.contains("ooo_triggers_cnp = false"), "{plain}");
        let e = parse("preset = \"mellanox\"").unwrap_err();
        assert!(e.contains("preset") && e.contains("\"seqbalance\", \"hpcc\""), "{e}");
        let e = parse("preset = \"seqbalance\"\nrai_mbps = 5.0").unwrap_err();
        assert!(e.contains("rai_mbps"), "{e}");
        let e = parse("preset = \"seqbalance\"\ng = \"x\"").unwrap_err();
        assert!(e.contains("`g`"), "{e}");
    }

    //= type=test
    //= seqbalance §2.3.5; type=assumption
    //# No byte counter (F = 1): one fast-recovery step, one additive step (Rt += R_AI), then
    //# hyper increase by a fixed R_HAI per timer event.
    #[test]
    fn without_a_byte_counter_the_timer_count_is_the_stage() {
        let p = DcqcnParams { byte_counter_bytes: Bytes::ZERO, fast_recovery_steps: 1, clamp_target_rate: true, ..DcqcnParams::default() };
        let mut c = cc(p.clone());
        // Two cuts at once: Rc = 100 G, Rt = 200 G. R_AI = 400 Mb/s, R_HAI = 4 Gb/s at 400 G.
        c.on_cnp(Time::ZERO);
        c.on_cnp(Time::ZERO);
        assert_eq!((c.rc().0, c.rt().0), (100_000_000_000, 200_000_000_000));
        // Sends never count.
        c.on_send(US, 1 << 40);
        assert_eq!(c.counters(), (0, 0));
        at(&mut c, P);
        assert_eq!((c.rc().0, c.rt().0), (150_000_000_000, 200_000_000_000));
        at(&mut c, 2 * P);
        assert_eq!((c.rc().0, c.rt().0), (175_200_000_000, 200_400_000_000));
        at(&mut c, 3 * P);
        assert_eq!((c.rc().0, c.rt().0), (189_800_000_000, 204_400_000_000));
        at(&mut c, 4 * P);
        assert_eq!((c.rc().0, c.rt().0), (199_100_000_000, 208_400_000_000));
        // A long quiet stretch replays to what step-by-step calls give.
        let cnp = Some(0);
        let deep: Vec<_> = (0..12).map(|i| (i * US, cnp)).collect();
        catch_up_matches_step_by_step(p, &deep, 100 * 1000 * US);
        let lineage = DcqcnParams { rate_timer_us: 3.0, alpha_timer_us: 1.0, ..DcqcnPreset::Seqbalance.params() };
        catch_up_matches_step_by_step(lineage, &deep, 50 * 1000 * US);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: DcqcnParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        let d = DcqcnParams::default;
        assert_eq!(key(DcqcnParams { g: 0.0, ..d() }), "transport.cc.g");
        assert_eq!(key(DcqcnParams { g: 1.5, ..d() }), "transport.cc.g");
        assert_eq!(key(DcqcnParams { g: f64::NAN, ..d() }), "transport.cc.g");
        assert_eq!(key(DcqcnParams { alpha_init: -0.1, ..d() }), "transport.cc.alpha_init");
        assert_eq!(key(DcqcnParams { alpha_timer_us: 0.0, ..d() }), "transport.cc.alpha_timer_us");
        assert_eq!(key(DcqcnParams { rate_timer_us: f64::INFINITY, ..d() }), "transport.cc.rate_timer_us");
        assert_eq!(key(DcqcnParams { rate_ai_mbps: Some(0.0), ..d() }), "transport.cc.rate_ai_mbps");
        assert_eq!(key(DcqcnParams { rate_hai_mbps: Some(-1.0), ..d() }), "transport.cc.rate_hai_mbps");
        assert_eq!(key(DcqcnParams { min_rate_mbps: 0.0, ..d() }), "transport.cc.min_rate_mbps");
        assert_eq!(key(DcqcnParams { cnp_interval_us: -1.0, ..d() }), "transport.cc.cnp_interval_us");
        assert_eq!(key(DcqcnParams { window_bdp: Some(0.0), ..d() }), "transport.cc.window_bdp");
        match (DcqcnParams { rate_timer_us: -3.0, ..d() }).validate() {
            Err(Error::Invalid { message, .. }) => assert!(message.contains("-3") && message.contains("µs"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(d().validate().is_ok());
        assert!(DcqcnParams { fast_recovery_steps: 0, g: 1.0, alpha_init: 0.0, cnp_interval_us: 0.0, ..d() }.validate().is_ok());
        let mlx = || DcqcnParams { reaction_point: ReactionPoint::Mellanox, byte_counter_bytes: Bytes::ZERO, ..d() };
        assert!(mlx().validate().is_ok());
        assert_eq!(key(DcqcnParams { byte_counter_bytes: Bytes(1), ..mlx() }), "transport.cc.byte_counter_bytes");
        assert!(DcqcnParams { ooo_triggers_cnp: true, ..mlx() }.validate().is_ok(), "the NACK carries the CNP flag");
        assert_eq!(key(DcqcnParams { rate_decrease_interval_us: 0.0, ..mlx() }), "transport.cc.rate_decrease_interval_us");
        assert_eq!(key(DcqcnParams { rate_on_first_cnp: 0.0, ..mlx() }), "transport.cc.rate_on_first_cnp");
    }

    /// The HPCC ns-3 example's Mellanox DCQCN at 400 G: α timer 1 µs, decrease check 4 µs, rate
    /// timer 300 µs, F = 1, unclamped target, no byte counter.
    fn mellanox() -> Dcqcn {
        cc(DcqcnParams {
            reaction_point: ReactionPoint::Mellanox,
            byte_counter_bytes: Bytes::ZERO,
            alpha_timer_us: 1.0,
            rate_timer_us: 300.0,
            fast_recovery_steps: 1,
            clamp_target_rate: false,
            ..DcqcnParams::default()
        })
    }

    /// An ACK at `now` echoing a CE mark: the mellanox reaction point's CNP.
    fn marked_ack(c: &mut Dcqcn, now: Time) {
        c.on_ack(&AckEvent { now, ecn: true, ..ACK });
    }

    //= type=test; HPCC ns-3 RdmaHw::cnp_received_mlx / CheckRateDecreaseMlx / UpdateAlphaMlx
    #[test]
    fn mellanox_takes_cnps_from_acks_and_cuts_on_its_decrease_timer() {
        let mut c = mellanox();
        assert_eq!(crate::transport::cc::CcConfig::Dcqcn(DcqcnParams { reaction_point: ReactionPoint::Mellanox, byte_counter_bytes: Bytes::ZERO, ..DcqcnParams::default() }).cnp_interval(), None, "no CNP packets");
        // The first marked ACK at 10 µs: α = 1, no cut (RateOnFirstCnp = 1).
        marked_ack(&mut c, 10 * US);
        assert_eq!((c.rc().0, c.alpha()), (G400, 1.0));
        // More marks in the same period only set the flags.
        marked_ack(&mut c, 11 * US + 500 * crate::units::NS);
        assert_eq!(c.rc().0, G400);
        // The check at 14 µs + 1 ns follows the α expiries at 11, 12, 13, 14 µs: the one at
        // 12 µs saw the CNP of 11.5 µs (+ g), the others decayed.
        at(&mut c, 14 * US + crate::units::NS);
        let g = 1.0 / 256.0;
        let alpha = ((1.0 - g) * (1.0 - g) + g) * (1.0 - g) * (1.0 - g);
        assert!((c.alpha() - alpha).abs() < 1e-6, "α {} vs {alpha}", c.alpha());
        let want = G400 as f64 * (1.0 - alpha / 2.0);
        assert!((c.rc().0 as f64 - want).abs() < 1e3, "{} vs {want}", c.rc().0);
        assert_eq!(c.rt().0, G400, "unclamped: the target stays at the rate before the first cut");
        // A quiet period: the next check (18 µs) does not cut.
        let cut = c.rc().0;
        at(&mut c, 30 * US);
        assert_eq!(c.rc().0, cut);
        // Two marked ACKs in one period: one cut, at the period's check.
        marked_ack(&mut c, 31 * US);
        marked_ack(&mut c, 32 * US);
        at(&mut c, 34 * US);
        assert_eq!(c.rc().0, cut, "not before the check at 34 µs + 1 ns");
        at(&mut c, 34 * US + crate::units::NS);
        let second = c.rc().0;
        assert!(second < cut);
        at(&mut c, 40 * US);
        assert_eq!(c.rc().0, second, "one cut per period");
        // 300 µs after that cut the rate timer recovers halfway to the target (F = 1: fast
        // recovery first), then adds R_AI.
        at(&mut c, 334 * US + crate::units::NS);
        assert_eq!(c.rc().0, mid_up(G400, second));
        assert_eq!(c.counters().0, 1);
    }

    //= type=test; ConWeave ns-3 RdmaHw::ReceiveAck: a NACK's CNP flag goes to cnp_received_mlx
    #[test]
    fn mellanox_takes_a_nack_s_cnp_as_it_takes_an_ack_s() {
        // The same two CNPs, one pair as marked ACKs, the other as on_cnp (the NACK's flag):
        // the same rate at every check, and no cut at once (the paper RP would cut at 10 µs).
        let (mut acks, mut nacks) = (mellanox(), mellanox());
        for t in [10 * US, 11 * US + 500 * crate::units::NS] {
            marked_ack(&mut acks, t);
            nacks.on_cnp(t);
        }
        assert_eq!(nacks.rc().0, G400, "the first CNP only arms the timers");
        for t in [14 * US + crate::units::NS, 30 * US, 334 * US + crate::units::NS] {
            at(&mut acks, t);
            at(&mut nacks, t);
            assert_eq!((nacks.rc().0, nacks.alpha()), (acks.rc().0, acks.alpha()), "at {t} ps");
        }
        assert!(nacks.rc().0 < G400);
    }

    #[test]
    fn mellanox_without_marks_stays_at_line_rate() {
        let mut c = mellanox();
        for t in 1..100 {
            at(&mut c, t * 10 * US);
        }
        assert_eq!((c.rc().0, c.alpha_due, c.rate_due), (G400, None, None));
    }
}
