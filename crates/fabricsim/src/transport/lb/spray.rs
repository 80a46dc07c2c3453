//! `spray`: oblivious per-packet spraying, an entropy per packet chosen without any feedback
//! (smartt-reps spec §2.13 "oblivious packet spraying"; lb-ai-training spec LB-HSPRAY).
//!
//! Two orders:
//! - `random` (default): a fresh uniformly random 16-bit entropy for every packet (the spec's
//!   "acceptable alternative", and the LB study's host spraying);
//! - `increment`: the LB study's literal rule (LB-HSPRAY: "the host increments the flow label
//!   on every packet"): a random 16-bit start, then +1 per packet; switches hash the label with
//!   their own salt, so consecutive labels land on effectively random ports, as with `random`;
//! - `permutation`: cycle through a random permutation of `entropies` (N_ev = 256) entropies,
//!   re-shuffled after every pass (smartt-reps spec §2.13 ASSUMPTION), so that every entropy is
//!   used exactly once per N_ev packets;
//! - `random_n`: independent uniform draws from `0..entropies` (htsim users' "oblivious
//!   spraying over N paths" without the per-pass bookkeeping; uec-spec §3,
//!   `experiments/htsim-parity/SPEC.md`).

use super::{EntropyCtx, PathSelector};
use crate::error::{Error, Result};
use crate::ids::Entropy;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "spray";
/// Registry summary.
pub const SUMMARY: &str = "oblivious packet spraying: a random 16-bit entropy per packet, independent draws from N_ev, or a cycled random permutation of N_ev";

/// Order in which entropies are used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprayOrder {
    /// Independent uniform draws.
    #[default]
    Random,
    /// Passes over a re-shuffled permutation of `entropies`.
    Permutation,
    /// A random start, then the previous entropy + 1 (mod 2^16).
    Increment,
    /// Independent uniform draws from `0..entropies`.
    RandomN,
}

/// Parameters of `spray`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SprayParams {
    /// `random`, `permutation`, `increment` or `random_n`.
    pub order: SprayOrder,
    /// N_ev, the entropies a permutation cycles through and `random_n` draws from
    /// (smartt-reps spec §2.12: 256).
    pub entropies: u32,
}

impl Default for SprayParams {
    fn default() -> Self {
        SprayParams { order: SprayOrder::Random, entropies: 256 }
    }
}

impl SprayParams {
    pub(super) fn validate(&self) -> Result<()> {
        if self.entropies == 0 || self.entropies > 65_536 {
            return Err(Error::invalid("transport.lb.entropies", format!("{}: must be between 1 and 65536", self.entropies)));
        }
        Ok(())
    }
}

/// The selector: stateless for `random`; the current pass for `permutation`.
#[derive(Clone, Debug)]
pub struct Spray {
    /// The current pass's order (empty for `random`).
    perm: Box<[Entropy]>,
    /// Next position in `perm`.
    next: usize,
    /// `increment`: the last label sent (`None` before the first packet).
    label: Option<Entropy>,
    increment: bool,
    /// `random_n`: draw uniformly below this (0 = not this order).
    draw_below: u32,
}

impl Spray {
    /// A sprayer.
    pub fn new(p: &SprayParams) -> Self {
        let perm: Box<[Entropy]> = match p.order {
            SprayOrder::Random | SprayOrder::Increment | SprayOrder::RandomN => Box::new([]),
            SprayOrder::Permutation => (0..p.entropies).map(|e| e as Entropy).collect(),
        };
        // Start "at the end of a pass" so the first packet shuffles with the connection's rng.
        let next = perm.len();
        let draw_below = if p.order == SprayOrder::RandomN { p.entropies } else { 0 };
        Spray { perm, next, label: None, increment: p.order == SprayOrder::Increment, draw_below }
    }
}

impl PathSelector for Spray {
    fn next_entropy(&mut self, _ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        if self.increment {
            //= spec lb-ai-training.md LB-HSPRAY (p.flow_label := label; label := (label + 1) mod 2^16)
            let l = self.label.map_or_else(|| rng.next_u64() as Entropy, |l| l.wrapping_add(1));
            self.label = Some(l);
            return l;
        }
        if self.draw_below > 0 {
            //= uec-spec §3 (independent draws from N entropies)
            return rng.below(self.draw_below as u64) as Entropy;
        }
        if self.perm.is_empty() {
            return rng.next_u64() as Entropy;
        }
        if self.next == self.perm.len() {
            // Fisher-Yates: a fresh uniformly random order for the next pass.
            for i in (1..self.perm.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                self.perm.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.perm[self.next - 1]
    }
}

impl crate::scheme::Scheme<super::LbBuild> for Spray {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("entropies", 1.0, 65536.0)];
    type Params = SprayParams;
    fn check(p: &SprayParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &SprayParams, _ctx: &mut super::LbBuild) -> Self {
        Spray::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: None, in_flight: 0 };

    //= type=test; smartt-reps spec §2.13: every entropy once per pass, a new order each pass
    #[test]
    fn permutation_uses_every_entropy_once_per_pass() {
        let mut s = Spray::new(&SprayParams { order: SprayOrder::Permutation, entropies: 64 });
        let mut rng = Rng::stream(1, "spray-test", 0);
        let mut passes = Vec::new();
        for _ in 0..3 {
            let mut pass: Vec<Entropy> = (0..64).map(|_| s.next_entropy(&CTX, &mut rng)).collect();
            let order = pass.clone();
            pass.sort_unstable();
            assert_eq!(pass, (0..64).collect::<Vec<Entropy>>());
            passes.push(order);
        }
        assert!(passes[0] != passes[1] && passes[1] != passes[2]);
    }

    //= type=test; lb-ai-training LB-HSPRAY: a random start, then +1 per packet, wrapping at 2^16
    #[test]
    fn increment_adds_one_per_packet() {
        let mut s = Spray::new(&SprayParams { order: SprayOrder::Increment, ..Default::default() });
        let mut rng = Rng::stream(1, "spray-test", 2);
        let e: Vec<Entropy> = (0..70_000).map(|_| s.next_entropy(&CTX, &mut rng)).collect();
        assert!(e.windows(2).all(|w| w[1] == w[0].wrapping_add(1)));
        let mut other = Spray::new(&SprayParams { order: SprayOrder::Increment, ..Default::default() });
        assert_ne!(other.next_entropy(&CTX, &mut Rng::stream(1, "spray-test", 3)), e[0], "the start is random");
    }

    //= type=test; uec-spec §3: independent uniform draws from 0..N
    #[test]
    fn random_n_draws_independently_below_n() {
        let mut s = Spray::new(&SprayParams { order: SprayOrder::RandomN, entropies: 8 });
        let mut rng = Rng::stream(1, "spray-test", 4);
        let e: Vec<Entropy> = (0..800).map(|_| s.next_entropy(&CTX, &mut rng)).collect();
        assert!(e.iter().all(|&x| x < 8));
        let counts: Vec<usize> = (0..8).map(|v| e.iter().filter(|&&x| x == v).count()).collect();
        // 100 expected per entropy; independent draws, so not exactly 100 each (a permutation would be).
        assert!(counts.iter().all(|&c| (60..=140).contains(&c)), "{counts:?}");
        assert!(counts.iter().any(|&c| c != 100));
        assert!(e.windows(8).any(|w| { let mut v = w.to_vec(); v.sort_unstable(); v.dedup(); v.len() < 8 }), "repeats within 8 draws");
    }

    #[test]
    fn random_order_spreads_over_16_bits() {
        let mut s = Spray::new(&SprayParams::default());
        let mut rng = Rng::stream(1, "spray-test", 1);
        let e: Vec<Entropy> = (0..1000).map(|_| s.next_entropy(&CTX, &mut rng)).collect();
        assert!(e.iter().any(|&x| x > 255) && e.iter().any(|&x| x < 32768));
        assert!(SprayParams { entropies: 0, ..Default::default() }.validate().unwrap_err().to_string().contains("transport.lb.entropies"));
    }
}
