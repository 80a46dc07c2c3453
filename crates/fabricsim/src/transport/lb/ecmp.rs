//! `ecmp`: one entropy for the whole connection, so every packet follows the same path (flow-
//! level ECMP, the baseline of every load-balancing paper; lb-ai-training spec LB-ECMP).

use super::{EntropyCtx, PathSelector};
use crate::ids::Entropy;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "ecmp";
/// Registry summary.
pub const SUMMARY: &str = "one random entropy per connection: all packets on one hashed path";

/// Parameters of `ecmp` (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcmpParams {}

/// The selector: a constant.
#[derive(Clone, Debug)]
pub struct Ecmp {
    entropy: Entropy,
}

impl Ecmp {
    /// Draws the connection's entropy.
    pub fn new(_p: &EcmpParams, rng: &mut Rng) -> Self {
        Ecmp { entropy: rng.next_u64() as Entropy }
    }
}

impl PathSelector for Ecmp {
    fn next_entropy(&mut self, _ctx: &EntropyCtx, _rng: &mut Rng) -> Entropy {
        self.entropy
    }
}

impl crate::scheme::Scheme<super::LbBuild> for Ecmp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = EcmpParams;
    fn build(p: &EcmpParams, ctx: &mut super::LbBuild) -> Self {
        Ecmp::new(p, &mut ctx.rng)
    }
}
