//! `adaptive_packet`: in-switch adaptive packet spraying (LB-SAR-PKT, the paper's "packet AR"):
//! every packet goes to a candidate with the shortest queue, uniformly among the tied ones.
//!
//! **Follows:** lb-ai-training §2.1, LB-SAR-PKT (paper §4 "Per-Packet LB", adaptive
//! in-switch spraying; the best scheme of §5, Fig. 3), with the paper's queue comparison
//! ([`super::levels`]: quantised levels refreshed every 0.1 µs, or exact bytes).
//! **Parameters:** `compare` (`"level"` | `"bytes"`), `level_refresh_us` (0.1).
//! **Differences:** none. A packet counts as re-routed (`packets.reroutes`, the per-flow
//! `reroutes` column) when its port differs from the one ECMP would hash it to: the scheme has
//! no port of the flow's own, so the hash is the reference a re-route departs from.

use super::levels::{Compare, Levels, DEFAULT_REFRESH_US, REFRESH_LIMIT};
use super::ecmp::{Ecmp, EcmpParams};
use super::{Candidates, SwitchCtx, SwitchLb};
use crate::net::packet::Packet;
use crate::scheme::Limit;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "adaptive_packet";
/// Registry summary.
pub const SUMMARY: &str = "LB-SAR-PKT: every packet to a lowest-level (or fewest-bytes) candidate, ties at random";

/// Parameters of `adaptive_packet`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AdaptivePacketParams {
    /// Queue comparison: quantised `level` or exact `bytes`.
    pub compare: Compare,
    /// Refresh period of a port's cached level (µs).
    pub level_refresh_us: f64,
}

impl Default for AdaptivePacketParams {
    fn default() -> Self {
        AdaptivePacketParams { compare: Compare::Level, level_refresh_us: DEFAULT_REFRESH_US }
    }
}

/// The selector: the switch's queue comparison, and its ECMP hash as the reference of re-routes.
#[derive(Clone, Debug)]
pub struct AdaptivePacket {
    levels: Levels,
    hash: Ecmp,
}

impl AdaptivePacket {
    /// A selector for switch `switch` of a run seeded `seed`.
    pub fn new(p: &AdaptivePacketParams, seed: u64, switch: u32) -> Self {
        AdaptivePacket { levels: Levels::new(p.compare, p.level_refresh_us), hash: Ecmp::new(&EcmpParams {}, seed, switch) }
    }
}

impl SwitchLb for AdaptivePacket {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let out = self.levels.lowest(ctx.now, cands, ctx.rng).0;
        ctx.rerouted = out != self.hash.index(pkt, cands.len());
        out
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for AdaptivePacket {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = AdaptivePacketParams;
    const LIMITS: &'static [Limit] = &[REFRESH_LIMIT];
    fn build(p: &AdaptivePacketParams, ctx: &mut super::SwitchBuild) -> Self {
        AdaptivePacket::new(p, ctx.seed, ctx.switch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, Time};
    use crate::ids::NodeId;
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;

    #[test]
    fn shortest_level_with_seeded_uniform_ties() {
        let (ports, mut state) = idle_ports(4);
        // Buffer 100 000 B: levels 2, 0, 1, 0.
        for (s, b) in state.iter_mut().zip([15_000, 1_000, 7_000, 4_000]) {
            s.data_bytes = Bytes(b);
        }
        let c = Candidates::new(&ports, &state, &[100_000]);
        let run = |seed, compare| {
            let mut rng = Rng::stream(seed, "switch_lb", 0);
            let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
            let mut lb = AdaptivePacket::new(&AdaptivePacketParams { compare, ..Default::default() }, 1, 0);
            (0..4000).map(|_| lb.choose(&mut ctx, &mut Packet::default(), &c)).collect::<Vec<_>>()
        };
        let picks = run(1, Compare::Level);
        let ones = picks.iter().filter(|&&i| i == 1).count();
        // Only the level-0 ports 1 and 3, each ≈ 2 000 ± 32.
        assert!(picks.iter().all(|&i| i == 1 || i == 3));
        assert!((1_840..2_160).contains(&ones), "{ones}");
        assert_eq!(picks, run(1, Compare::Level));
        assert_ne!(picks, run(2, Compare::Level));
        // Bytes: the one fewest-bytes port.
        assert!(run(1, Compare::Bytes).iter().all(|&i| i == 1));
    }

    #[test]
    fn a_reroute_is_a_port_other_than_the_hash() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(3, "switch_lb", 0);
        let mut lb = AdaptivePacket::new(&AdaptivePacketParams::default(), 3, 0);
        let (mut rerouted, mut n) = (0, 0);
        for entropy in 0..2000u16 {
            let mut pkt = Packet { entropy, ..Packet::default() };
            let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
            let out = lb.choose(&mut ctx, &mut pkt, &c);
            assert_eq!(ctx.rerouted, out != lb.hash.index(&pkt, 4));
            rerouted += ctx.rerouted as u32;
            n += 1;
        }
        // All ports idle: a uniform pick misses the hashed port 3 times in 4 (1 500 ± 60).
        assert!((1_380..1_620).contains(&rerouted), "{rerouted} of {n}");
    }
}
