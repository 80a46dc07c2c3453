//! `letflow`: LetFlow flowlet switching: the source ToR keeps a flowlet table and gives each new
//! flowlet (a flow idle for more than the gap) a path drawn uniformly at random, blind to load.
//!
//! **Follows:** seqbalance §2.5.2: LetFlow (Vanini et al., NSDI '17) as the SeqBalance
//! paper evaluates it (§IV "Schemes compared"; flowlet gap 100 µs, the value the paper gives
//! for CONGA and the lineage simulator uses for LetFlow; 3-tier: the source ToR picks the path). **Parameters:** `gap_us` (100).
//!
//! **3-tier source routing:** the ToR chooses the whole path and writes it into the packet's
//! [`Packet::path_tag`]: bit 15 says "set", the low byte is the ToR's uplink index (uniform
//! over its candidates), bits 8..15 are 7 uniform random bits from which the aggregation
//! switch takes `bits mod fan-out` — so a flowlet keeps one (agg, core) path and only the ToR
//! keeps state; an aggregation switch's choice is a function of the header (it answers
//! `peek`). **Differences:** the agg index is uniform when its fan-out divides 128 (every power
//! of two), otherwise biased by less than fan-out/128. A packet without a tag (its ToR runs
//! another scheme) is hashed as by `ecmp`. Selecting `letflow` at the agg tier alone therefore
//! equals `ecmp` there.
//! **Re-routes:** a new flowlet of a live flow put on another uplink than its previous one.

use super::ecmp::{Ecmp, EcmpParams};
use super::flow_table::{flow_key, FlowTable};
use super::path_tag;
use crate::units::us_to_ps;
use super::{Candidates, SwitchCtx, SwitchLb};
use crate::ids::PortId;
use crate::net::packet::Packet;
use crate::scheme::Limit;
use crate::topo::Tier;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "letflow";
/// Registry summary.
pub const SUMMARY: &str = "LetFlow: source ToR flowlet table (gap 100 µs), random path per flowlet, source-routed via path_tag";

/// Parameters of `letflow`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LetflowParams {
    /// Flowlet gap (µs).
    pub gap_us: f64,
}

impl Default for LetflowParams {
    fn default() -> Self {
        //= seqbalance §2.5.2 (LetFlow); type=assumption
        //# Δ_LF = 100 µs, the lineage simulator's value.
        LetflowParams { gap_us: 100.0 }
    }
}

/// The selector: at a ToR the flowlet table, elsewhere the tag reader (with `ecmp`'s hash for
/// untagged packets).
#[derive(Clone, Debug)]
pub struct Letflow {
    source: bool,
    gap: Time,
    table: FlowTable,
    hash: Ecmp,
}

impl Letflow {
    /// The selector of switch number `switch` in tier `tier`.
    pub fn new(p: &LetflowParams, seed: u64, switch: u32, tier: Tier) -> Self {
        let gap = us_to_ps(p.gap_us);
        // Entries outlive a flowlet (10 gaps), so that a flow's next flowlet on another uplink
        // counts as a re-route; only the gap decides whether a flowlet continues.
        Letflow { source: matches!(tier, Tier::Tor | Tier::Host), gap, table: FlowTable::new(10 * gap), hash: Ecmp::new(&EcmpParams {}, seed, switch) }
    }

    /// A new tag with ToR uplink index `tor_index`.
    fn new_tag(tor_index: usize, rng: &mut crate::rng::Rng) -> u16 {
        path_tag::new(tor_index, rng.below(128) as usize)
    }
}

impl SwitchLb for Letflow {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let n = cands.len();
        if !self.source {
            return path_tag::follow(pkt, n, &self.hash);
        }
        let (now, key) = (ctx.now, flow_key(pkt));
        let prev = self.table.get(key, now);
        let tag = match prev {
            Some(e) if now - e.last_seen <= self.gap && path_tag::tor_uplink(e.choice as u16) < n => e.choice as u16,
            _ => {
                let t = Self::new_tag(ctx.rng.below(n as u64) as usize, ctx.rng);
                // A re-route: elsewhere than the flow's remembered uplink, or, for a flow this
                // ToR has not seen, than the one ECMP's hash would give it.
                let before = prev.map_or_else(|| self.hash.index(pkt, n), |e| path_tag::tor_uplink(e.choice as u16));
                ctx.rerouted = path_tag::tor_uplink(t) != before;
                t
            }
        };
        self.table.set(key, tag as u32, now);
        pkt.path_tag = tag;
        path_tag::tor_uplink(tag)
    }

    /// Upper tiers follow the tag (or the hash): a function of the header.
    #[inline]
    fn peek(&self, pkt: &Packet, cands: &[PortId]) -> Option<usize> {
        (!self.source).then(|| path_tag::follow(pkt, cands.len(), &self.hash))
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Letflow {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = LetflowParams;
    const LIMITS: &'static [Limit] = &[Limit::new("gap_us", 0.001, 1e6)];
    fn build(p: &LetflowParams, ctx: &mut super::SwitchBuild) -> Self {
        Letflow::new(p, ctx.seed, ctx.switch, ctx.tier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConnId, NodeId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;
    use crate::units::US;

    #[test]
    fn a_flowlet_keeps_its_path_and_a_gap_draws_a_new_one() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut tor = Letflow::new(&LetflowParams::default(), 1, 0, Tier::Tor);
        let agg = Letflow::new(&LetflowParams::default(), 1, 1, Tier::Agg);
        assert_eq!(tor.peek(&Packet::default(), &ports), None);
        let mut changes = 0;
        let mut agg_picks = [0u32; 4];
        for conn in 0..2000u32 {
            let mut first = Packet { conn: ConnId(conn), ..Default::default() };
            let i = tor.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0)), &mut first, &c);
            assert_ne!(first.path_tag & path_tag::SET, 0);
            agg_picks[agg.peek(&first, &ports).unwrap()] += 1;
            // Packets 100 µs apart (not more than the gap) keep the path and the tag.
            for t in 1..=3 {
                let mut p = Packet { conn: ConnId(conn), ..Default::default() };
                assert_eq!(tor.choose(&mut SwitchCtx::new(t * 100 * US, &mut rng, NodeId(0)), &mut p, &c), i);
                assert_eq!(p.path_tag, first.path_tag);
            }
            // A longer gap: a fresh uniform path (another uplink 3/4 of the time).
            let mut p = Packet { conn: ConnId(conn), ..Default::default() };
            let mut ctx = SwitchCtx::new(400 * US + Time(1), &mut rng, NodeId(0));
            let j = tor.choose(&mut ctx, &mut p, &c);
            assert_eq!(ctx.rerouted, i != j);
            changes += (i != j) as u32;
        }
        // 1 500 ± 19; the agg's reading of the tags is uniform (500 ± 19 each).
        assert!((1_400..1_600).contains(&changes), "{changes}");
        assert!(agg_picks.iter().all(|&n| (420..580).contains(&n)), "{agg_picks:?}");
        // An untagged packet is hashed as by `ecmp`.
        let p = Packet { conn: ConnId(9), ..Default::default() };
        assert_eq!(agg.peek(&p, &ports), Some(Ecmp::new(&EcmpParams {}, 1, 1).index(&p, 4)));
    }
}
