//! Distribution figures (min, mean, nearest-rank p50 and p99, max) of a sample, and of the ACK
//! RTT histogram; the nearest-rank rule itself (also used by the size buckets).

use crate::units::Time;
use super::us;
use serde::Serialize;

/// Distribution figures of a sample.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Smallest value.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// Figures of `v` (sorted in place); zeros for an empty sample.
    pub fn of(v: &mut [f64]) -> Stats {
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = |q: f64| nearest_rank(v, q);
        Stats { min: v[0], mean: mean(v), p50: rank(0.5), p99: rank(0.99), max: v[v.len() - 1] }
    }
}

/// The nearest-rank `q` quantile of the sorted, non-empty `v`: its ⌈q·n⌉-th smallest value.
pub(super) fn nearest_rank<T: Copy>(v: &[T], q: f64) -> T {
    v[(((q * v.len() as f64).ceil() as usize).max(1) - 1).min(v.len() - 1)]
}

/// The mean of the non-empty `v`.
pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Figures of the ACK RTT histogram.
pub(super) fn rtt_stats(h: &crate::transport::sender::RttHistogram) -> Stats {
    let q = |x: f64| h.quantile(x).map(us).unwrap_or(0.0);
    let n = h.count();
    if n == 0 {
        return Stats::default();
    }
    let bin = 1u64 << crate::transport::sender::RTT_BIN_BITS;
    let mean = h.bins.iter().enumerate().map(|(i, &c)| c as f64 * us(Time(i as u64 * bin + bin / 2))).sum::<f64>() / n as f64;
    Stats { min: q(0.0), mean, p50: q(0.5), p99: q(0.99), max: q(1.0) }
}


#[cfg(test)]
mod tests {
    use super::Stats;

    #[test]
    fn figures_of_a_crafted_sample() {
        // 200, 199, ..., 1: mean = 201 / 2 = 100.5; nearest rank p50 = the ceil(0.5 × 200) =
        // 100th smallest = 100; p99 = the ceil(0.99 × 200) = 198th smallest = 198.
        let mut v: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        let s = Stats::of(&mut v);
        assert_eq!((s.min, s.mean, s.p50, s.p99, s.max), (1.0, 100.5, 100.0, 198.0, 200.0));
        assert_eq!(v[0], 1.0, "sorted in place");
    }

    #[test]
    fn small_and_empty_samples() {
        // Three values: p50 = the 2nd smallest (ceil 1.5), p99 = the 3rd (ceil 2.97).
        let s = Stats::of(&mut [2.5, -1.0, 7.0]);
        assert_eq!((s.min, s.mean, s.p50, s.p99, s.max), (-1.0, 8.5 / 3.0, 2.5, 7.0, 7.0));
        let s = Stats::of(&mut []);
        assert_eq!((s.min, s.mean, s.p50, s.p99, s.max), (0.0, 0.0, 0.0, 0.0, 0.0));
    }
}
