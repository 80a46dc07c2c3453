//! `adaptive_ecmp`: in-switch adaptive ECMP (LB-SAR-ECMP, the paper's "ECMP AR",
//! Tomahawk-3-style dynamic load balancing): the packet takes its ECMP-hashed port unless that
//! port's queue is (one of) the longest, in which case, on a fair coin, it goes to a
//! shortest-queue port.
//!
//! **Follows:** lb-ai-training §2.1, LB-SAR-ECMP (paper §4 "Per-Flow LB": the in-network
//! load-aware option; §5, Fig. 3–4), htsim's `ECMP_ADAPTIVE` reading: checked on every packet, not sticky; the
//! hash is `ecmp`'s ([`super::ecmp::Ecmp::index`], same per-switch salt), the comparison is
//! [`super::levels`]. When all candidates have the same level the test passes, so about half
//! the packets go to a random port: spray-like under light load (the paper's ECMP AR within
//! 3 % of the best without failures).
//! **Parameters:** `compare`, `level_refresh_us` (as `adaptive_packet`); `variant`
//! (`"coin"`: the rule above; `"strict"`: move, without a coin, only when the hashed port's
//! level is above the lowest and at least `theta_level`, default 2 — with `compare = "bytes"`
//! the threshold applies to the hashed port's current level); `sticky` (false): record a
//! moved flow's new port in a per-flow table, so later packets of the flow start from it
//! instead of the hash, until the flow is idle for more than `gap_us` (10 µs, flowlet ageing).
//! **Re-routes:** a packet sent elsewhere than its flow's hashed (or, sticky, recorded) port.

use super::ecmp::{Ecmp, EcmpParams};
use super::flow_table::{flow_key, FlowTable};
use crate::units::us_to_ps;
use super::levels::{lowest_of, Compare, Levels, DEFAULT_REFRESH_US, REFRESH_LIMIT};
use super::{Candidates, SwitchCtx, SwitchLb};
use crate::error::{Error, Result};
use crate::net::packet::Packet;
use crate::scheme::Limit;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "adaptive_ecmp";
/// Registry summary.
pub const SUMMARY: &str = "LB-SAR-ECMP: hashed port unless it is the fullest and a coin lands (or strict threshold); optional sticky flows";

/// When a packet leaves its hashed port.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// On a 50 % coin, when the hashed port's level is the maximum among the candidates.
    #[default]
    Coin,
    /// When the hashed port's level is above the minimum and at least `theta_level`.
    Strict,
}

/// Parameters of `adaptive_ecmp`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AdaptiveEcmpParams {
    /// Queue comparison: quantised `level` or exact `bytes`.
    pub compare: Compare,
    /// Refresh period of a port's cached level (µs).
    pub level_refresh_us: f64,
    /// `coin` (htsim's rule) or `strict`.
    pub variant: Variant,
    /// Strict variant: the hashed port's smallest level that moves a packet.
    pub theta_level: u8,
    /// Record moved flows (per-flow table with flowlet ageing).
    pub sticky: bool,
    /// Sticky: idle gap (µs) after which a flow returns to its hashed port.
    pub gap_us: f64,
}

impl Default for AdaptiveEcmpParams {
    fn default() -> Self {
        //= lb-ai-training §2.1 (LB-SAR-ECMP); type=assumption
        //# strict variant: θ_level = 2; sticky entries age like flowlets (δ = 10 µs).
        AdaptiveEcmpParams { compare: Compare::Level, level_refresh_us: DEFAULT_REFRESH_US, variant: Variant::Coin, theta_level: 2, sticky: false, gap_us: 10.0 }
    }
}

/// The selector: ECMP's hash, the queue comparison and (sticky) the flow table.
#[derive(Clone, Debug)]
pub struct AdaptiveEcmp {
    hash: Ecmp,
    levels: Levels,
    variant: Variant,
    theta: u8,
    table: Option<FlowTable>,
}

impl AdaptiveEcmp {
    /// The selector of switch number `switch` for master seed `seed` (the hash salt is
    /// `ecmp`'s, so unmoved packets take exactly the port `ecmp` would give them).
    pub fn new(p: &AdaptiveEcmpParams, seed: u64, switch: u32) -> Self {
        AdaptiveEcmp {
            hash: Ecmp::new(&EcmpParams {}, seed, switch),
            levels: Levels::new(p.compare, p.level_refresh_us),
            variant: p.variant,
            theta: p.theta_level,
            table: p.sticky.then(|| FlowTable::new(us_to_ps(p.gap_us))),
        }
    }
}

impl SwitchLb for AdaptiveEcmp {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let n = cands.len();
        let now = ctx.now;
        let key = flow_key(pkt);
        let recorded = self.table.as_ref().and_then(|t| t.get(key, now)).map(|e| e.choice as usize).filter(|&i| i < n);
        let h = recorded.unwrap_or_else(|| self.hash.index(pkt, n));
        let (compare, theta) = (self.levels.compare(), self.theta);
        let m = self.levels.metrics(now, cands);
        let (min, max) = m.iter().fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let move_it = match self.variant {
            Variant::Coin => ctx.rng.below(2) == 0 && m[h] == max,
            Variant::Strict => {
                let level_h = if compare == Compare::Level { m[h] as u8 } else { cands.view(h).level() };
                m[h] > min && level_h >= theta
            }
        };
        let out = if move_it { lowest_of(m, ctx.rng) } else { h };
        ctx.rerouted = out != h;
        if let Some(t) = &mut self.table {
            if move_it || recorded.is_some() {
                t.set(key, out as u32, now);
            }
        }
        out
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for AdaptiveEcmp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = AdaptiveEcmpParams;
    const LIMITS: &'static [Limit] = &[REFRESH_LIMIT, Limit::new("theta_level", 0.0, 3.0), Limit::new("gap_us", 0.001, 1e6)];
    fn check(p: &AdaptiveEcmpParams, key: &str) -> Result<()> {
        if p.variant == Variant::Coin && p.theta_level != AdaptiveEcmpParams::default().theta_level {
            return Err(Error::invalid(format!("{key}.theta_level"), "applies only to `variant = \"strict\"`"));
        }
        Ok(())
    }
    fn build(p: &AdaptiveEcmpParams, ctx: &mut super::SwitchBuild) -> Self {
        AdaptiveEcmp::new(p, ctx.seed, ctx.switch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, Time};
    use crate::ids::{ConnId, NodeId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;

    fn params(variant: Variant, sticky: bool) -> AdaptiveEcmpParams {
        AdaptiveEcmpParams { variant, sticky, ..Default::default() }
    }

    #[test]
    fn coin_moves_about_half_the_packets_when_all_levels_are_equal() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        let mut lb = AdaptiveEcmp::new(&params(Variant::Coin, false), 1, 0);
        let ecmp = Ecmp::new(&EcmpParams {}, 1, 0);
        let (mut moved, mut rerouted) = (0, 0);
        for conn in 0..8000u32 {
            let mut p = Packet { conn: ConnId(conn), ..Default::default() };
            let h = ecmp.index(&p, 4);
            let out = lb.choose(&mut ctx, &mut p, &c);
            rerouted += ctx.rerouted as u32;
            moved += (out != h) as u32;
        }
        // Half the packets pass the coin and go to a uniformly random port (which is the hashed
        // one a quarter of the time): 8000 · ½ · ¾ = 3000 move, sd ≈ 39.
        assert!((2_800..3_200).contains(&moved), "{moved}");
        assert_eq!(moved, rerouted);
        // Strict: equal levels never move.
        let mut s = AdaptiveEcmp::new(&params(Variant::Strict, false), 1, 0);
        assert!((0..1000u32).all(|conn| {
            let mut p = Packet { conn: ConnId(conn), ..Default::default() };
            s.choose(&mut ctx, &mut p, &c) == ecmp.index(&p, 4)
        }));
    }

    #[test]
    fn moves_only_off_the_fullest_port_and_strict_needs_the_threshold() {
        let (ports, mut state) = idle_ports(3);
        let ecmp = Ecmp::new(&EcmpParams {}, 1, 0);
        let p = (0..).map(|conn| Packet { conn: ConnId(conn), ..Default::default() }).find(|p| ecmp.index(p, 3) == 0).unwrap();
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        // Hashed port 0 at level 1, the others 0 and 2: not the maximum, never moves.
        for (s, b) in state.iter_mut().zip([6_000, 0, 15_000]) {
            s.data_bytes = Bytes(b);
        }
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut lb = AdaptiveEcmp::new(&params(Variant::Coin, false), 1, 0);
        assert!((0..200).all(|_| lb.choose(&mut ctx, &mut p.clone(), &c) == 0));
        // Hashed port at level 3 (the maximum): about half go to port 1 (level 0).
        state[0].data_bytes = Bytes(50_000);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut lb = AdaptiveEcmp::new(&params(Variant::Coin, false), 1, 0);
        let picks: Vec<usize> = (0..2000).map(|_| lb.choose(&mut ctx, &mut p.clone(), &c)).collect();
        let to1 = picks.iter().filter(|&&i| i == 1).count();
        assert!(picks.iter().all(|&i| i == 0 || i == 1) && (900..1100).contains(&to1), "{to1}");
        // Strict: level 3 > min and ≥ 2: always moves; level 1 (< θ = 2) never.
        let mut st = AdaptiveEcmp::new(&params(Variant::Strict, false), 1, 0);
        assert_eq!(st.choose(&mut ctx, &mut p.clone(), &c), 1);
        state[0].data_bytes = Bytes(6_000);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut st = AdaptiveEcmp::new(&params(Variant::Strict, false), 1, 0);
        assert_eq!(st.choose(&mut ctx, &mut p.clone(), &c), 0);
    }

    #[test]
    fn sticky_flows_keep_the_new_port_until_idle_longer_than_the_gap() {
        let (ports, mut state) = idle_ports(2);
        let ecmp = Ecmp::new(&EcmpParams {}, 1, 0);
        let p = (0..).map(|conn| Packet { conn: ConnId(conn), ..Default::default() }).find(|p| ecmp.index(p, 2) == 0).unwrap();
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut lb = AdaptiveEcmp::new(&params(Variant::Strict, true), 1, 0);
        state[0].data_bytes = Bytes(50_000);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        assert_eq!(lb.choose(&mut ctx, &mut p.clone(), &c), 1);
        assert!(ctx.rerouted);
        // The queue drains; the flow stays on port 1 (its recorded port), not re-routed.
        state[0].data_bytes = Bytes::ZERO;
        let c = Candidates::new(&ports, &state, &[100_000]);
        for t in 1..=5u64 {
            let mut ctx = SwitchCtx::new(Time(t * 9_000_000), &mut rng, NodeId(0));
            assert_eq!(lb.choose(&mut ctx, &mut p.clone(), &c), 1);
            assert!(!ctx.rerouted);
        }
        // Idle for more than 10 µs: back to the hash.
        let mut ctx = SwitchCtx::new(Time(45_000_000 + 10_000_001), &mut rng, NodeId(0));
        assert_eq!(lb.choose(&mut ctx, &mut p.clone(), &c), 0);
    }
}
