//! The fuzzer's own random source: SplitMix64, seeded per case from (seed, case index), so that
//! any case can be generated again alone (`--seed S --case N`) and the generator does not move
//! when the simulator's own streams change.

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct Prng(u64);

impl Prng {
    /// The stream of case `case` of a campaign seeded `seed`.
    pub fn new(seed: u64, case: u64) -> Prng {
        let mut p = Prng(seed ^ case.wrapping_mul(0xA24B_AED4_963E_E407));
        p.next();
        p
    }

    /// The next 64 random bits: SplitMix64's step, whose output is the simulator's own
    /// finaliser ([`fabricsim::rng::mix64`] adds the step's increment itself).
    pub fn next(&mut self) -> u64 {
        let z = fabricsim::rng::mix64(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z
    }

    /// Uniform in `0..n` (`n` > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo).saturating_add(1))
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Prng::new(1, 7).next()).collect();
        assert!(a.iter().all(|&x| x == a[0]));
        assert_ne!(Prng::new(1, 7).next(), Prng::new(1, 8).next());
        assert_ne!(Prng::new(1, 7).next(), Prng::new(2, 7).next());
        let mut p = Prng::new(3, 0);
        assert!((0..1000).all(|_| p.range(5, 9) >= 5 && p.range(5, 9) <= 9));
    }
}
