//! `random`: the switch sends each packet to a uniformly random candidate, drawn from its own
//! seeded stream (per-packet switch spraying, oblivious to load).
//!
//! **Follows:** mcc spec §2.9 (optional per-packet LB variants: "random packet spraying:
//! uniform random choice per packet"); the oblivious counterpart of lb-ai-training §2.1's
//! LB-SRR (round robin) and LB-SAR-PKT. **Parameters:** none. **Differences:** none.

use super::{Candidates, SwitchCtx, SwitchLb};
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "random";
/// Registry summary.
pub const SUMMARY: &str = "uniformly random candidate per packet from the switch's own stream (switch spraying)";

/// Parameters of `random` (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RandomParams {}

/// The selector (stateless; the draws come from the switch's stream in [`SwitchCtx`]).
#[derive(Clone, Debug)]
pub struct Random;

impl Random {
    /// A selector.
    pub fn new(_p: &RandomParams) -> Self {
        Random
    }
}

impl SwitchLb for Random {
    /// Draws in event order, so no `peek`: the look-ahead must not draw early.
    #[inline]
    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, _pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        ctx.rng.below(cands.len() as u64) as usize
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Random {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = RandomParams;
    fn build(p: &RandomParams, _ctx: &mut super::SwitchBuild) -> Self {
        Random::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::ids::{NodeId, PortId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;

    fn draws(seed: u64, n: usize) -> Vec<usize> {
        let (ports, state) = idle_ports(3);
        let c = Candidates::new(&ports, &state, &[1 << 20]);
        let mut rng = Rng::stream(seed, "switch_lb", 0);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        let mut lb = Random::new(&RandomParams {});
        let mut p = Packet::default();
        (0..n).map(|_| lb.choose(&mut ctx, &mut p, &c)).collect()
    }

    #[test]
    fn roughly_uniform_over_candidates() {
        // 30 000 draws over 3 ports: 10 000 each, binomial sd ≈ 82; allow ±5 sd.
        let mut counts = [0u32; 3];
        for i in draws(5, 30_000) {
            counts[i] += 1;
        }
        assert!(counts.iter().all(|&c| (9_590..10_410).contains(&c)), "{counts:?}");
    }

    #[test]
    fn deterministic_per_seed_and_never_precomputed() {
        assert_eq!(draws(5, 200), draws(5, 200));
        assert_ne!(draws(5, 200), draws(6, 200));
        assert_eq!(Random.peek(&Packet::default(), &[PortId(0), PortId(1), PortId(2)]), None);
    }
}
