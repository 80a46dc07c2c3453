//! `bitmap`: Ultra Ethernet's bitmap multipath — an oblivious walk over `entropies` entropies
//! that skips entropies recently reported congested. Each entropy has a small penalty counter:
//! an ECN-marked ACK adds 1, a trim (NACK) 4, a timeout the maximum (15). When the walk lands on
//! a penalised entropy, that entropy's counter drops by one and the walk moves on to the next
//! unpenalised one, so a penalty of `k` keeps an entropy out of about `k` passes.
//!
//! **Follows:** `experiments/htsim-parity/SPEC.md` §3 (uec-spec §3), from htsim's `UecMpBitmap`
//! (`ultraethernet/uet-htsim` @ 40ccb05, `sim/uec_mp.cpp`).
//!
//! The walk: pass `k` visits `i XOR x_k` for `i = 0..N`, with `x_k` drawn uniformly in `0..N`
//! at the start of each pass, so each pass uses every entropy once in a fresh order (N a power
//! of two, htsim's `-paths`, default 64).
//!
//! **Parameters** (`[transport.lb] name = "bitmap"`): `entropies` 64, `ecn_penalty` 1,
//! `nack_penalty` 4, `max_penalty` 15 (the timeout penalty), all htsim's.
//!
//! **Differences:** htsim ORs fixed random upper bits into every entropy (one value per
//! connection); a switch hashes the entropy with the flow's addresses, so that changes nothing
//! here and is left out. A trim at the last hop is reported by htsim as an ACK (by its mark);
//! fabricsim reports every trim as a NACK (uec-spec §3). The state is `entropies` bytes, allocated
//! once when the connection is built.

use super::{EntropyCtx, Feedback, PathSelector};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::scheme::Limit;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Parameters of `bitmap`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BitmapParams {
    /// Entropies walked, a power of two (htsim `-paths`: 64).
    pub entropies: u32,
    /// Penalty of an ECN-marked ACK (htsim: 1).
    pub ecn_penalty: u8,
    /// Penalty of a trim (htsim: 4).
    pub nack_penalty: u8,
    /// Cap of a penalty and the penalty of a timeout (htsim: 15).
    pub max_penalty: u8,
}

impl Default for BitmapParams {
    fn default() -> Self {
        //= uec-spec §3 (htsim UecMpBitmap: 64 paths, penalties 1 / 4 / 15)
        BitmapParams { entropies: 64, ecn_penalty: 1, nack_penalty: 4, max_penalty: 15 }
    }
}

/// The oblivious XOR walk both `bitmap` and `mixed` use: pass after pass over `0..n`, each pass
/// in the order `i XOR x` with a fresh random `x`.
#[derive(Clone, Debug)]
pub struct XorWalk {
    mask: u32,
    index: u32,
    xor: u32,
}

impl XorWalk {
    /// A walk over `n` entropies (a power of two); the first pass's mask is drawn at the first step.
    pub fn new(n: u32) -> Self {
        XorWalk { mask: n - 1, index: n, xor: 0 }
    }

    /// The next entropy of the walk.
    pub fn step(&mut self, rng: &mut Rng) -> u32 {
        if self.index > self.mask {
            self.index = 0;
            self.xor = rng.below(self.mask as u64 + 1) as u32;
        }
        let e = self.index ^ self.xor;
        self.index += 1;
        e
    }
}

/// The selector of one connection.
#[derive(Clone, Debug)]
pub struct Bitmap {
    walk: XorWalk,
    /// Penalty per entropy.
    penalty: Box<[u8]>,
    ecn_penalty: u8,
    nack_penalty: u8,
    max_penalty: u8,
}

impl Bitmap {
    /// A selector with every entropy unpenalised.
    pub fn new(p: &BitmapParams) -> Self {
        Bitmap {
            walk: XorWalk::new(p.entropies),
            penalty: vec![0; p.entropies as usize].into_boxed_slice(),
            ecn_penalty: p.ecn_penalty,
            nack_penalty: p.nack_penalty,
            max_penalty: p.max_penalty,
        }
    }
}

impl PathSelector for Bitmap {
    //= uec-spec §3 bitmap (htsim UecMpBitmap::nextEntropy)
    //# Skip penalised entropies (at most one pass), paying one unit of the first one's penalty.
    fn next_entropy(&mut self, _ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        let mut e = self.walk.step(rng);
        let mut first = true;
        let mut steps = 0;
        while self.penalty[e as usize] > 0 && steps <= self.walk.mask {
            if first {
                self.penalty[e as usize] -= 1;
                first = false;
            }
            steps += 1;
            e = self.walk.step(rng);
        }
        e as Entropy
    }

    //= uec-spec §3 bitmap (htsim UecMpBitmap::processEv)
    fn on_feedback(&mut self, entropy: Entropy, fb: Feedback, _now: Time) {
        let add = match fb {
            Feedback::Ack { ecn: false } => return,
            Feedback::Ack { ecn: true } => self.ecn_penalty,
            Feedback::Nack => self.nack_penalty,
            Feedback::Timeout => self.max_penalty,
        };
        let slot = &mut self.penalty[(entropy as u32 & self.walk.mask) as usize];
        *slot = slot.saturating_add(add).min(self.max_penalty);
    }
}

/// `entropies` must be a power of two (the XOR walk needs it); errors name `key.entropies`.
pub(super) fn check_power_of_two(entropies: u32, key: &str) -> crate::error::Result<()> {
    if !entropies.is_power_of_two() {
        return Err(crate::error::Error::invalid(format!("{key}.entropies"), format!("{entropies}: must be a power of two (the XOR walk of uec-spec §3)")));
    }
    Ok(())
}

/// Ranges shared by `bitmap` and `mixed`.
pub(super) const LIMITS: &[Limit] =
    &[Limit::new("entropies", 1.0, 65536.0), Limit::new("ecn_penalty", 0.0, 255.0), Limit::new("nack_penalty", 0.0, 255.0), Limit::new("max_penalty", 1.0, 255.0)];

impl crate::scheme::Scheme<super::LbBuild> for Bitmap {
    const NAME: &'static str = "bitmap";
    const SUMMARY: &'static str = "UEC bitmap spraying: an oblivious XOR walk over N entropies that skips entropies penalised by marks (1), trims (4), timeouts (15)";
    const LIMITS: &'static [Limit] = LIMITS;
    type Params = BitmapParams;
    fn check(p: &BitmapParams, key: &str) -> crate::error::Result<()> {
        check_power_of_two(p.entropies, key)
    }
    fn build(p: &BitmapParams, _ctx: &mut super::LbBuild) -> Self {
        Bitmap::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: None, in_flight: 0 };

    //= uec-spec §3 (oblivious walk); type=test
    #[test]
    fn unpenalised_walk_uses_every_entropy_once_per_pass() {
        let mut b = Bitmap::new(&BitmapParams { entropies: 16, ..Default::default() });
        let mut rng = Rng::stream(1, "bitmap-test", 0);
        let mut orders = Vec::new();
        for _ in 0..4 {
            let mut pass: Vec<Entropy> = (0..16).map(|_| b.next_entropy(&CTX, &mut rng)).collect();
            orders.push(pass.clone());
            pass.sort_unstable();
            assert_eq!(pass, (0..16).collect::<Vec<Entropy>>());
        }
        assert!(orders.windows(2).any(|w| w[0] != w[1]), "passes use fresh XOR masks");
    }

    //= uec-spec §3 (penalties: ECN 1, NACK 4, timeout 15, skipped while penalised); type=test
    #[test]
    fn penalised_entropies_are_skipped_for_about_penalty_passes() {
        let mut b = Bitmap::new(&BitmapParams { entropies: 8, ..Default::default() });
        let mut rng = Rng::stream(1, "bitmap-test", 1);
        b.on_feedback(3, Feedback::Nack, Time::ZERO);
        b.on_feedback(5, Feedback::Ack { ecn: true }, Time::ZERO);
        b.on_feedback(6, Feedback::Timeout, Time::ZERO);
        b.on_feedback(6, Feedback::Timeout, Time::ZERO);
        b.on_feedback(1, Feedback::Ack { ecn: false }, Time::ZERO);
        assert_eq!(&b.penalty[..], &[0, 0, 0, 4, 0, 1, 15, 0]);
        // 16 packets take at most 4 passes (5 free entropies per pass): entropy 3 (penalty 4)
        // and 6 (15) pay down at most one unit per pass, so neither is used.
        let picks: Vec<Entropy> = (0..16).map(|_| b.next_entropy(&CTX, &mut rng)).collect();
        assert!(!picks.contains(&6) && !picks.contains(&3), "{picks:?}");
        assert!(b.penalty[3] < 4 && b.penalty[6] < 15, "landing on a penalised entropy pays it down");
        // Entropy 5 (penalty 1) is back in use once it was paid down.
        let later: Vec<Entropy> = (0..40).map(|_| b.next_entropy(&CTX, &mut rng)).collect();
        assert!(later.contains(&5), "{later:?}");
    }

    //= uec-spec §3 (every entropy penalised: one pass, then take what the walk gives); type=test
    #[test]
    fn all_penalised_still_returns_an_entropy() {
        let mut b = Bitmap::new(&BitmapParams { entropies: 4, ..Default::default() });
        let mut rng = Rng::stream(1, "bitmap-test", 2);
        for e in 0..4 {
            b.on_feedback(e, Feedback::Timeout, Time::ZERO);
        }
        let e = b.next_entropy(&CTX, &mut rng);
        assert!(e < 4);
        assert!(check_power_of_two(48, "transport.lb").unwrap_err().to_string().contains("transport.lb.entropies"));
    }
}
