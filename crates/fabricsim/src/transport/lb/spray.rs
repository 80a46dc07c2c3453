//! `spray`: oblivious per-packet spraying, a fresh uniformly random entropy for every packet
//! (smartt-reps spec §2.14, "oblivious packet spraying"; lb-ai-training spec LB-HSPRAY).

use super::{EntropyCtx, PathSelector};
use crate::ids::Entropy;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "spray";
/// Registry summary.
pub const SUMMARY: &str = "oblivious packet spraying: a random entropy for every packet";

/// Parameters of `spray` (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprayParams {}

/// The selector: stateless.
#[derive(Clone, Debug)]
pub struct Spray;

impl Spray {
    /// A sprayer.
    pub fn new(_p: &SprayParams) -> Self {
        Spray
    }
}

impl PathSelector for Spray {
    fn next_entropy(&mut self, _ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        rng.next_u64() as Entropy
    }
}
