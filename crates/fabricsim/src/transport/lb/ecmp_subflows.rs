//! `ecmp_subflows`: ECMP with subflows (lb-ai-training spec §2.1 LB-ECMP-SUB; paper §5 "we add
//! two subflows for every flow"): each flow draws `subflows` (S) fixed random entropies, one per
//! subflow, so its packets hash onto up to S paths instead of one; switches hash as for `ecmp`.
//!
//! **Which packet is on which subflow: striping**, `seq mod S`. The spec assumes contiguous
//! halves (subflow i carries the i-th ⌈n/S⌉ packets), each paced at `r/S` concurrently. A host
//! path selector cannot change the order packets leave in, and [`EntropyCtx`] names the packet
//! (`seq`) but not its message's size, so it cannot tell where a chunk ends. Striping gives each
//! subflow every S-th packet: `M/S` bytes paced at `r/S`, concurrently, as the spec's subflows
//! are; what differs is which bytes of the message a subflow carries, which no loss-recovery
//! mode here looks at. A retransmission keeps its packet's subflow (same `seq`), and so does an
//! erasure code's extra symbol (a new `seq`): under `code` recovery the symbols of all
//! subflows are pooled (the message completes on ⌈(1+ε)·n⌉ distinct symbols from any subflow),
//! whereas the spec's subflows would each finish their own half.
//!
//! **Parameters:** `subflows` (S, default 2: the spec's reading of "two subflows for every
//! flow"; spec §8 item 9 notes it may mean 3 in total: set `subflows = 3`). S = 1 is `ecmp`
//! exactly: the one entropy is the same first draw of the connection's stream.

use super::{EntropyCtx, PathSelector};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::scheme::Limit;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "ecmp_subflows";
/// Registry summary.
pub const SUMMARY: &str = "LB-ECMP-SUB: S fixed random entropies per connection (subflows), packet seq mod S picks one: ECMP over S hashed paths";

/// Parameters of `ecmp_subflows`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcmpSubflowsParams {
    /// S: subflows (entropies) per connection.
    pub subflows: u32,
}

impl Default for EcmpSubflowsParams {
    fn default() -> Self {
        //= spec lb-ai-training.md LB-ECMP-SUB ASSUMPTION (S = 2; §8 item 9: maybe 3 in total)
        EcmpSubflowsParams { subflows: 2 }
    }
}

/// The selector: the subflows' entropies.
#[derive(Clone, Debug)]
pub struct EcmpSubflows {
    entropies: Box<[Entropy]>,
}

impl EcmpSubflows {
    /// Draws the connection's `subflows` entropies (the first draw is `ecmp`'s).
    pub fn new(p: &EcmpSubflowsParams, rng: &mut Rng) -> Self {
        EcmpSubflows { entropies: (0..p.subflows.max(1)).map(|_| rng.next_u64() as Entropy).collect() }
    }

    /// The subflow packet `seq` belongs to (striping).
    #[inline]
    pub fn subflow_of(&self, seq: u32) -> usize {
        seq as usize % self.entropies.len()
    }
}

impl PathSelector for EcmpSubflows {
    //= spec lb-ai-training.md LB-ECMP-SUB (each subflow gets a different flow label)
    fn next_entropy(&mut self, ctx: &EntropyCtx, _rng: &mut Rng) -> Entropy {
        self.entropies[self.subflow_of(ctx.seq)]
    }
}

impl crate::scheme::Scheme<super::LbBuild> for EcmpSubflows {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = EcmpSubflowsParams;
    const LIMITS: &'static [Limit] = &[Limit::new("subflows", 1.0, 65_536.0)];
    fn build(p: &EcmpSubflowsParams, ctx: &mut super::LbBuild) -> Self {
        EcmpSubflows::new(p, &mut ctx.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ecmp::{Ecmp, EcmpParams};
    use super::*;
    use crate::units::Time;

    fn ctx(seq: u32, retransmit: bool) -> EntropyCtx {
        EntropyCtx { now: Time::ZERO, seq, retransmit, window_pkts: None, in_flight: 0 }
    }

    //= type=test; LB-ECMP-SUB: S entropies, packet seq mod S; retransmissions keep their subflow
    #[test]
    fn packets_are_striped_over_s_fixed_entropies() {
        let mut rng = Rng::stream(3, "ecmp-sub-test", 0);
        let mut m = EcmpSubflows::new(&EcmpSubflowsParams { subflows: 3 }, &mut rng);
        let e: Vec<Entropy> = (0..9).map(|s| m.next_entropy(&ctx(s, false), &mut rng)).collect();
        assert_eq!(&e[0..3], &e[3..6]);
        assert_eq!(&e[0..3], &e[6..9]);
        assert_eq!(&e[0..3], &*m.entropies);
        assert!(e[0] != e[1] || e[1] != e[2], "three 16-bit draws are not all equal");
        assert_eq!(m.next_entropy(&ctx(4, true), &mut rng), e[1], "a retransmission of packet 4 stays on subflow 1");
        assert_eq!((m.subflow_of(0), m.subflow_of(5), m.subflow_of(7)), (0, 2, 1));
    }

    #[test]
    fn one_subflow_is_ecmp() {
        let (mut a, mut b) = (Rng::stream(9, "conn", 4), Rng::stream(9, "conn", 4));
        let mut one = EcmpSubflows::new(&EcmpSubflowsParams { subflows: 1 }, &mut a);
        let mut ecmp = Ecmp::new(&EcmpParams::default(), &mut b);
        for s in 0..50 {
            assert_eq!(one.next_entropy(&ctx(s, s % 7 == 0), &mut a), ecmp.next_entropy(&ctx(s, false), &mut b));
        }
        assert_eq!(a.next_u64(), b.next_u64(), "the same draws from the connection's stream");
    }

    #[test]
    fn zero_subflows_are_refused_naming_the_key() {
        let e = crate::scheme::validate_params(&EcmpSubflowsParams { subflows: 0 }, <EcmpSubflows as crate::scheme::Scheme<super::super::LbBuild>>::LIMITS, "transport.lb").unwrap_err();
        assert!(e.to_string().contains("transport.lb.subflows"), "{e}");
    }
}
