//! `ecmp`: the switch hashes (src, dst, flow, entropy) with its own seed onto the equal-cost
//! next hops, so a packet's port depends only on its header (flow-level ECMP, or per-packet
//! spraying when hosts vary the entropy). The default of every switch.
//!
//! **Follows:** lb-ai-training spec §2.1 (ECMP hash, LB-ECMP); smartt-reps spec §4.3a (each
//! tier decides independently). **Parameters:** none. **Differences:** `H` is two SplitMix64
//! rounds rather than htsim's FreeBSD-style mix; the choice is a multiply-shift of the hash
//! onto the candidate count rather than `mod n` (both uniform).

use crate::net::packet::Packet;
use crate::rng::{mix64, Rng};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "ecmp";
/// Registry summary.
pub const SUMMARY: &str = "seeded hash of (src, dst, flow, entropy) per switch: one path per header (default)";

/// Parameters of `ecmp` (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EcmpParams {}

/// The selector: the switch's hash salt.
#[derive(Clone, Debug)]
pub struct Ecmp {
    seed: u64,
}

impl Ecmp {
    //= lb-ai-training §2.1 (ECMP hash)
    //# The salt is drawn per switch per run, so tiers do not make correlated (polarised) choices.
    /// The selector of switch number `switch` for master seed `seed` (stream `"ecmp"`).
    pub fn new(_p: &EcmpParams, seed: u64, switch: u32) -> Self {
        Ecmp { seed: Rng::stream(seed, "ecmp", switch as u64).next_u64() }
    }

    /// Index among `n` candidates of the packet's hash (the port every hash-based scheme,
    /// e.g. `adaptive_ecmp`, starts from).
    #[inline]
    pub fn index(&self, p: &Packet, n: usize) -> usize {
        let h = mix64(self.seed ^ ((p.src.0 as u64) << 32 | p.dst.0 as u64));
        let h = mix64(h ^ ((p.conn.0 as u64) << 16 | p.entropy as u64));
        ((h as u128 * n as u128) >> 64) as usize
    }
}

super::header_hash_selector!(Ecmp);

impl crate::scheme::Scheme<super::SwitchBuild> for Ecmp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = EcmpParams;
    fn build(p: &EcmpParams, ctx: &mut super::SwitchBuild) -> Self {
        Ecmp::new(p, ctx.seed, ctx.switch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::ids::{ConnId, NodeId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::net::switch_lb::{Candidates, SwitchCtx, SwitchLb};

    /// A data packet of flow 7 from host 3 to host 12.
    fn pkt() -> Packet {
        Packet { conn: ConnId(7), src: NodeId(3), dst: NodeId(12), size: 4096, ..Default::default() }
    }

    #[test]
    fn same_header_same_port_every_time() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[1 << 20]);
        let mut lb = Ecmp::new(&EcmpParams {}, 1, 0);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0));
        let mut p = pkt();
        let first = lb.choose(&mut ctx, &mut p, &c);
        for now in 1..100 {
            ctx.now = Time(now);
            // Neither time nor other packets nor queue state change the choice.
            let mut other = Packet { seq: now as u32, entropy: now as u16, ..pkt() };
            lb.choose(&mut ctx, &mut other, &c);
            assert_eq!(lb.choose(&mut ctx, &mut p, &c), first);
        }
        assert_eq!(lb.peek(&p, &ports), Some(first));
        // The header is left as it was.
        assert_eq!((p.entropy, p.seq, p.link), (0, 0, 0));
    }

    #[test]
    fn entropies_spread_and_switch_seeds_decorrelate() {
        // 4 000 entropies over 4 ports: about 1 000 each (binomial sd ≈ 27).
        let a = Ecmp::new(&EcmpParams {}, 1, 0);
        let b = Ecmp::new(&EcmpParams {}, 1, 1);
        let mut counts = [0u32; 4];
        let mut same = 0;
        for e in 0..4000u16 {
            let p = Packet { entropy: e, ..pkt() };
            let (ia, ib) = (a.index(&p, 4), b.index(&p, 4));
            counts[ia] += 1;
            same += (ia == ib) as u32;
        }
        assert!(counts.iter().all(|&c| (880..1120).contains(&c)), "{counts:?}");
        // Independent switches agree on 1/4 of headers (1 000 ± 27), not on all of them.
        assert!((880..1120).contains(&same), "switches agree on {same} of 4000 headers");
    }
}
