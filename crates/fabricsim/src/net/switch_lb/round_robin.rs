//! `round_robin`: in-switch round-robin spraying (LB-SRR). Each switch walks its candidate
//! ports in order with one counter shared by all flows and destinations; after `5·n` packets
//! it reshuffles the order from its seeded stream and restarts the counter.
//!
//! **Follows:** lb-ai-training §2.1, LB-SRR (paper §4 "Per-Packet LB": in-switch
//! round-robin placement; htsim's RR strategy for the counter and the reshuffle).
//! **Parameters:** `reshuffle_every` (5: reshuffle after `reshuffle_every · n` packets).
//! **Reading:** the paper's switch has one up-port set; here a switch keeps one (order,
//! counter) per *distinct candidate set* it meets, so in a fat tree or leaf-spine (one up-port
//! set per switch) it is exactly the paper's single shared counter, and where failures make the
//! sets differ per destination each set is still walked evenly.

use super::{Candidates, SwitchCtx, SwitchLb};
use crate::ids::PortId;
use crate::net::packet::Packet;
use crate::scheme::Limit;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "round_robin";
/// Registry summary.
pub const SUMMARY: &str = "LB-SRR: one counter per switch over its candidates, order reshuffled every 5·n packets";

/// Parameters of `round_robin`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct RoundRobinParams {
    /// Reshuffle the order after this many rounds (`reshuffle_every · n` packets).
    pub reshuffle_every: u32,
}

impl Default for RoundRobinParams {
    fn default() -> Self {
        //= lb-ai-training §2.1 (LB-SRR); type=assumption (htsim RR strategy)
        //# After 5·n packets the candidate order is shuffled and the counter reset.
        RoundRobinParams { reshuffle_every: 5 }
    }
}

/// The walk over one candidate set.
#[derive(Clone, Debug)]
struct Walk {
    /// The candidate set (routing-table order).
    ports: Vec<PortId>,
    /// Current order, as indices into `ports`.
    order: Vec<u16>,
    /// Packets sent since the last reshuffle.
    crt: u32,
}

/// The selector: one walk per distinct candidate set.
#[derive(Clone, Debug)]
pub struct RoundRobin {
    every: u32,
    walks: Vec<Walk>,
}

impl RoundRobin {
    /// A selector.
    pub fn new(p: &RoundRobinParams) -> Self {
        RoundRobin { every: p.reshuffle_every, walks: Vec::new() }
    }

    fn walk(&mut self, ports: &[PortId]) -> &mut Walk {
        let i = match self.walks.iter().position(|w| w.ports == ports) {
            Some(i) => i,
            None => {
                self.walks.push(Walk { ports: ports.to_vec(), order: (0..ports.len() as u16).collect(), crt: 0 });
                self.walks.len() - 1
            }
        };
        &mut self.walks[i]
    }
}

impl SwitchLb for RoundRobin {
    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, _pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let n = cands.len() as u32;
        let every = self.every;
        let w = self.walk(cands.ports());
        if w.crt >= every * n {
            ctx.rng.shuffle(&mut w.order);
            w.crt = 0;
        }
        let i = w.order[(w.crt % n) as usize];
        w.crt += 1;
        i as usize
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for RoundRobin {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = RoundRobinParams;
    const LIMITS: &'static [Limit] = &[Limit::new("reshuffle_every", 1.0, 1e6)];
    fn build(p: &RoundRobinParams, _ctx: &mut super::SwitchBuild) -> Self {
        RoundRobin::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::ids::{ConnId, NodeId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;

    #[test]
    fn one_counter_shared_by_all_flows_and_reshuffled_after_five_rounds() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[1 << 20]);
        let mut rng = Rng::stream(2, "switch_lb", 0);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        let mut lb = RoundRobin::new(&RoundRobinParams::default());
        // Packets of different flows and destinations share the one counter.
        let picks: Vec<usize> = (0..200u32)
            .map(|i| {
                let mut p = Packet { conn: ConnId(i % 7), dst: NodeId(i % 5), ..Default::default() };
                lb.choose(&mut ctx, &mut p, &c)
            })
            .collect();
        // The first 5·n = 20 packets cycle in table order.
        assert_eq!(&picks[..8], &[0, 1, 2, 3, 0, 1, 2, 3]);
        assert!(picks[..20].chunks(4).all(|r| r == [0, 1, 2, 3]));
        // Every block of 20 is five rounds of one order, a permutation of the candidates.
        let mut orders = Vec::new();
        for block in picks.chunks(20) {
            let first = &block[..4];
            let mut sorted = first.to_vec();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3]);
            assert!(block.chunks(4).all(|r| r == first), "{block:?}");
            orders.push(first.to_vec());
        }
        // The order is reshuffled: ten blocks do not all keep the table order.
        assert!(orders.iter().any(|o| o != &[0, 1, 2, 3]), "{orders:?}");
        // Another candidate set gets its own walk, starting in its table order.
        let d = Candidates::new(&ports[1..3], &state, &[1 << 20]);
        assert_eq!(lb.choose(&mut ctx, &mut Packet::default(), &d), 0);
        assert_eq!(lb.choose(&mut ctx, &mut Packet::default(), &d), 1);
        assert_eq!(RoundRobin::new(&RoundRobinParams::default()).peek(&Packet::default(), &ports), None);
    }
}
