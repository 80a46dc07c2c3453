//! `mixed`: Ultra Ethernet's default multipath (htsim_uec `-load_balancing_algo mixed`) — reuse
//! an entropy whose ACK came back clean when one is waiting (REPS-style recycling), otherwise
//! take the next entropy of the bitmap walk, which skips entropies penalised by marks, trims and
//! timeouts.
//!
//! **Follows:** `experiments/htsim-parity/SPEC.md` §3 (uec-spec §3), from htsim's `UecMpMixed`,
//! which composes `UecMpRepsLegacy` (its recycle queue only) and `UecMpBitmap`
//! (`ultraethernet/uet-htsim` @ 40ccb05, `sim/uec_mp.cpp`). Every feedback goes to both halves.
//!
//! **Parameters** (`[transport.lb] name = "mixed"`): `entropies` 64, `ecn_penalty` 1,
//! `nack_penalty` 4, `max_penalty` 15 (the bitmap half's), `cache_size` 64 (recycle queue).
//!
//! **Differences:** htsim's recycle queue is an unbounded list; here it is REPS's ring of
//! `cache_size` entries (default = `entropies`) that drops its oldest entry when full, so that
//! nothing is allocated per ACK. An unbounded queue only grows past N when clean ACKs arrive
//! faster than packets are sent, i.e. when the sender is window- or credit-limited; then the
//! oldest evidence is the least useful.

use super::bitmap::{check_power_of_two, Bitmap, BitmapParams};
use super::reps::Ring;
use super::{EntropyCtx, Feedback, PathSelector};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::scheme::Limit;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Parameters of `mixed`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MixedParams {
    /// Entropies walked, a power of two (htsim `-paths`: 64).
    pub entropies: u32,
    /// Bitmap half: penalty of an ECN-marked ACK (htsim: 1).
    pub ecn_penalty: u8,
    /// Bitmap half: penalty of a trim (htsim: 4).
    pub nack_penalty: u8,
    /// Bitmap half: cap of a penalty and penalty of a timeout (htsim: 15).
    pub max_penalty: u8,
    /// Capacity of the recycle queue of clean entropies (htsim: unbounded; see module doc).
    pub cache_size: u32,
}

impl Default for MixedParams {
    fn default() -> Self {
        let b = BitmapParams::default();
        MixedParams { entropies: b.entropies, ecn_penalty: b.ecn_penalty, nack_penalty: b.nack_penalty, max_penalty: b.max_penalty, cache_size: 64 }
    }
}

/// The selector of one connection.
#[derive(Clone, Debug)]
pub struct Mixed {
    bitmap: Bitmap,
    /// Clean entropies, oldest first (REPS's bounded FIFO).
    recycled: Ring,
}

impl Mixed {
    /// A selector with an empty recycle queue and no penalties.
    pub fn new(p: &MixedParams) -> Self {
        let bitmap = Bitmap::new(&BitmapParams { entropies: p.entropies, ecn_penalty: p.ecn_penalty, nack_penalty: p.nack_penalty, max_penalty: p.max_penalty });
        Mixed { bitmap, recycled: Ring::new(p.cache_size.max(1)) }
    }
}

impl PathSelector for Mixed {
    //= uec-spec §3 mixed (htsim UecMpMixed::nextEntropy)
    //# A recycled clean entropy if one waits, else the bitmap walk.
    fn next_entropy(&mut self, ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        match self.recycled.pop() {
            Some(e) => e,
            None => self.bitmap.next_entropy(ctx, rng),
        }
    }

    //= uec-spec §3 mixed (htsim UecMpMixed::processEv): both halves learn of every packet
    fn on_feedback(&mut self, entropy: Entropy, fb: Feedback, now: Time) {
        self.bitmap.on_feedback(entropy, fb, now);
        if fb == (Feedback::Ack { ecn: false }) {
            self.recycled.push(entropy);
        }
    }
}

impl crate::scheme::Scheme<super::LbBuild> for Mixed {
    const NAME: &'static str = "mixed";
    const SUMMARY: &'static str = "UEC mixed spraying (htsim's default): reuse entropies whose ACKs came back clean, else the bitmap walk";
    const LIMITS: &'static [Limit] = &[
        Limit::new("entropies", 1.0, 65536.0),
        Limit::new("ecn_penalty", 0.0, 255.0),
        Limit::new("nack_penalty", 0.0, 255.0),
        Limit::new("max_penalty", 1.0, 255.0),
        Limit::new("cache_size", 1.0, 65536.0),
    ];
    type Params = MixedParams;
    fn check(p: &MixedParams, key: &str) -> crate::error::Result<()> {
        check_power_of_two(p.entropies, key)
    }
    fn build(p: &MixedParams, _ctx: &mut super::LbBuild) -> Self {
        Mixed::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: None, in_flight: 0 };

    //= uec-spec §3 mixed; type=test
    #[test]
    fn clean_entropies_are_reused_in_order_then_the_bitmap_walk_takes_over() {
        let mut m = Mixed::new(&MixedParams { entropies: 8, ..Default::default() });
        let mut rng = Rng::stream(1, "mixed-test", 0);
        m.on_feedback(6, Feedback::Ack { ecn: false }, Time::ZERO);
        m.on_feedback(2, Feedback::Ack { ecn: true }, Time::ZERO);
        m.on_feedback(4, Feedback::Ack { ecn: false }, Time::ZERO);
        m.on_feedback(1, Feedback::Nack, Time::ZERO);
        assert_eq!(m.next_entropy(&CTX, &mut rng), 6);
        assert_eq!(m.next_entropy(&CTX, &mut rng), 4);
        // Queue empty: the walk, which skips the marked (2) and trimmed (1) entropies this pass.
        let pass: Vec<Entropy> = (0..6).map(|_| m.next_entropy(&CTX, &mut rng)).collect();
        assert!(!pass.contains(&1) && !pass.contains(&2), "{pass:?}");
    }

    //= uec-spec §3 mixed (bounded recycle queue, see module doc); type=test
    #[test]
    fn a_full_recycle_queue_drops_its_oldest_entry() {
        let mut m = Mixed::new(&MixedParams { entropies: 8, cache_size: 2, ..Default::default() });
        let mut rng = Rng::stream(1, "mixed-test", 1);
        for e in [1, 2, 3] {
            m.on_feedback(e, Feedback::Ack { ecn: false }, Time::ZERO);
        }
        assert_eq!(m.next_entropy(&CTX, &mut rng), 2);
        assert_eq!(m.next_entropy(&CTX, &mut rng), 3);
    }
}
