//! Flaky links (paper §5.4 failure scenarios and §6, Fig. 10 right): loss bursts on one
//! direction of a cable. Burst starts form a Poisson process (mean gap 100 µs in the paper),
//! each burst lasts an exponential time (mean 10 µs); every packet whose transmission starts
//! inside a burst is lost on the wire — it still occupies the link, is never trimmed and plays
//! no part in PFC.
//!
//! Overlapping bursts merge, so the lossy time is the union of the bursts: the busy periods of
//! an M/M/∞ system. Its long-run fraction is `1 − e^(−λ·L)` (λ the start rate, L the mean
//! length): the probability that at least one of a Poisson number (mean λ·L) of bursts covers
//! a given instant. For the paper's 100 µs / 10 µs that is `1 − e^(−0.1) ≈ 9.52 %`.
//!
//! The paper fixes the burst distributions and that "the link fails at transmitting packets
//! sent on the link" during a burst; that bursts are independent per direction and merge when
//! they overlap is our reading (the paper does not say), and it is what makes the loss
//! fraction `1 − e^(−λ·L)` rather than `λ·L`.
//!
//! Bursts are generated lazily, one merged interval at a time, from the port's own random
//! stream (`Rng::stream(seed, "flaky", port)`): nothing is allocated per packet, and the
//! draws do not depend on traffic.

pub use crate::topo::failures::Bursts;
use crate::rng::Rng;
use crate::units::Time;

/// The burst state of one flaky port direction: the current or next merged burst
/// `[start, end)` and the start of the first burst after it. The port's transmissions and wire
/// losses are counted by its [`super::wire_loss::WireLoss`].
#[derive(Clone, Debug)]
pub struct FlakyPort {
    bursts: Bursts,
    rng: Rng,
    start: Time,
    end: Time,
    next_start: Time,
}

impl FlakyPort {
    /// A port whose burst process begins at time 0 (the first start is one exponential gap in).
    pub fn new(bursts: Bursts, mut rng: Rng) -> Self {
        let first = exp(&mut rng, bursts.mean_gap);
        let mut f = FlakyPort { bursts, rng, start: Time::ZERO, end: Time::ZERO, next_start: first };
        f.advance();
        f
    }

    /// Moves to the next merged burst: starts at `next_start`, and absorbs every later start
    /// that falls before its end.
    fn advance(&mut self) {
        let b = self.bursts;
        self.start = self.next_start;
        self.end = self.start + exp(&mut self.rng, b.mean_len);
        self.next_start = self.start + exp(&mut self.rng, b.mean_gap);
        while self.next_start < self.end {
            let e = self.next_start + exp(&mut self.rng, b.mean_len);
            self.end = self.end.max(e);
            self.next_start += exp(&mut self.rng, b.mean_gap);
        }
    }

    /// Whether a transmission starting at `t` is lost. Calls must come with non-decreasing `t`.
    #[inline]
    pub fn lost_at(&mut self, t: Time) -> bool {
        while self.end <= t {
            self.advance();
        }
        t >= self.start
    }

    /// The current or next merged burst, `[start, end)`.
    pub fn burst(&self) -> (Time, Time) {
        (self.start, self.end)
    }

    /// Skips to the merged burst after the current one.
    pub fn next_burst(&mut self) -> (Time, Time) {
        self.advance();
        (self.start, self.end)
    }
}

/// An exponential sample of mean `mean` picoseconds, rounded to whole picoseconds.
#[inline]
fn exp(rng: &mut Rng, mean: Time) -> Time {
    // 1 − u lies in (0, 1], so the logarithm is finite.
    Time((-(1.0 - rng.unit()).ln() * mean.0 as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{SEC, US};

    const PAPER: Bursts = Bursts { mean_gap: Time::from_us(100), mean_len: Time::from_us(10) };

    //= paper §5.4 / §6 (flaky links): fraction of time lost is 1 − e^(−0.1) for merged bursts
    #[test]
    fn time_in_burst_matches_the_merged_burst_expectation() {
        let expect = PAPER.loss_fraction();
        assert!((expect - 0.095_162_581_964).abs() < 1e-9);
        // 20 s of simulated time (~200,000 bursts) in 200 batches of 100 ms; the tolerance is
        // 5 standard errors of the batch means (batches of ~1,000 bursts are nearly independent).
        let mut f = FlakyPort::new(PAPER, Rng::stream(1, "flaky", 0));
        let (batches, len) = (200u64, SEC / 10);
        let mut fracs = Vec::new();
        let mut b = f.burst();
        for i in 0..batches {
            let (lo, hi) = (i * len, (i + 1) * len);
            let mut covered: Time = Time::ZERO;
            loop {
                let (s, e) = b;
                if s >= hi {
                    break;
                }
                covered += e.min(hi) - s.max(lo);
                if e > hi {
                    break;
                }
                b = f.next_burst();
            }
            fracs.push(covered.0 as f64 / len.0 as f64);
        }
        let n = fracs.len() as f64;
        let mean = fracs.iter().sum::<f64>() / n;
        let var = fracs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        assert!(se > 0.0 && se < 0.002, "standard error {se}");
        println!("time in burst: {mean:.5} (standard error {se:.5}), expected {expect:.5}");
        assert!((mean - expect).abs() < 5.0 * se, "time in burst {mean}, expected {expect} ± {}", 5.0 * se);
        // Unmerged, the bursts would cover λ·L = 10 %: the test tells the two apart.
        assert!((mean - 0.1).abs() > 5.0 * se, "{mean} is not distinguishable from the unmerged 10 %");
    }

    //= paper §5.4 (flaky links): packets sent at uniform times are lost with the same fraction
    #[test]
    fn packet_loss_fraction_matches() {
        let mut f = FlakyPort::new(PAPER, Rng::stream(9, "flaky", 3));
        // One packet every 0.33 µs for 5 s (15 million packets, ~50,000 bursts).
        let gap = 330_000;
        let n = 5 * SEC.0 / gap;
        let lost = (0..n).filter(|&i| f.lost_at(Time(i * gap))).count() as f64 / n as f64;
        println!("packets lost: {lost:.5} of {n}");
        // Losses are correlated within a burst: the standard error is that of the ~50,000
        // burst/idle cycles, about p·sqrt(CV²/cycles) ≈ 0.0007; allow 0.004.
        assert!((lost - PAPER.loss_fraction()).abs() < 0.004, "lost {lost}");
    }

    #[test]
    fn bursts_are_merged_disjoint_and_ordered() {
        // Long bursts relative to the gap: nearly every burst overlaps the next one.
        let b = Bursts { mean_gap: 10 * US, mean_len: 30 * US };
        let mut f = FlakyPort::new(b, Rng::stream(3, "flaky", 1));
        let mut prev = f.burst();
        assert!(prev.0 < prev.1);
        let mut merged_any = false;
        for _ in 0..10_000 {
            let cur = f.next_burst();
            // Strictly after the previous burst's end: overlapping ones were merged into it.
            assert!(cur.0 > prev.1 && cur.1 > cur.0, "{prev:?} then {cur:?}");
            merged_any |= prev.1 - prev.0 > 200 * US;
            prev = cur;
        }
        assert!(merged_any);
        // lost_at agrees with the intervals: inside loses, at the end does not.
        let mut f = FlakyPort::new(PAPER, Rng::stream(3, "flaky", 2));
        let (s, e) = f.burst();
        assert!(!f.lost_at(s - Time(1)) && f.lost_at(s) && f.lost_at(e - Time(1)) && !f.lost_at(e));
    }
}
