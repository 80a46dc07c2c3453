//! Flowlet-size figures (SeqBalance paper §II-B, Fig. 1; `run.flowlet_gaps_us`): per gap θ, how
//! many flowlets the connections' packets formed and their size distribution in wire bytes,
//! in `summary.json` (`flowlets`) and as a CDF in `flowlets.csv` (one row per percentile).

use crate::units::Time;
use serde::Serialize;

/// The flowlets of one gap θ.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowletSizes {
    /// The gap θ (µs): a pause longer than this starts a new flowlet.
    pub gap_us: f64,
    /// Flowlets (of every connection that sent data).
    pub flowlets: u64,
    /// Mean flowlet size (wire bytes; `null` without flowlets).
    pub mean_bytes: Option<f64>,
    /// Median flowlet size, nearest rank.
    pub p50_bytes: Option<u64>,
    /// 90th percentile, nearest rank.
    pub p90_bytes: Option<u64>,
    /// 99th percentile, nearest rank.
    pub p99_bytes: Option<u64>,
    /// Largest flowlet.
    pub max_bytes: Option<u64>,
    /// Fraction of the bytes carried in flowlets above 10 MB (Fig. 1's RDMA claim).
    pub bytes_in_flowlets_above_10mb: Option<f64>,
}

use super::stats::nearest_rank as rank;

/// The figures of each gap's sorted flowlet sizes.
pub(super) fn figures(per_gap: &[(Time, Vec<u64>)]) -> Vec<FlowletSizes> {
    per_gap
        .iter()
        .map(|(gap, v)| {
            let total: u64 = v.iter().sum();
            let quantile = |q: f64| (!v.is_empty()).then(|| rank(v, q));
            FlowletSizes {
                gap_us: super::us(*gap),
                flowlets: v.len() as u64,
                mean_bytes: (!v.is_empty()).then(|| total as f64 / v.len() as f64),
                p50_bytes: quantile(0.5),
                p90_bytes: quantile(0.9),
                p99_bytes: quantile(0.99),
                max_bytes: v.last().copied(),
                bytes_in_flowlets_above_10mb: (total > 0).then(|| v.iter().filter(|&&b| b > 10_000_000).sum::<u64>() as f64 / total as f64),
            }
        })
        .collect()
}

/// `flowlets.csv` text: per gap, the flowlet size at every percentile 1..=100 (nearest rank).
pub(super) fn cdf_csv(per_gap: &[(Time, Vec<u64>)]) -> String {
    use std::fmt::Write;
    let mut s = super::schema::FLOWLETS.header();
    for (gap, v) in per_gap.iter().filter(|(_, v)| !v.is_empty()) {
        for pct in 1..=100 {
            let _ = writeln!(s, "{},{pct},{}", super::us(*gap), rank(v, pct as f64 / 100.0));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn quantiles_and_the_share_of_bytes_in_large_flowlets() {
        let v: Vec<u64> = (1..=100).map(|i| i * 1_000).chain([20_000_000]).collect();
        let f = &figures(&[(10 * US, v.clone()), (50 * US, vec![])]);
        assert_eq!((f[0].gap_us, f[0].flowlets, f[0].p50_bytes, f[0].p99_bytes, f[0].max_bytes), (10.0, 101, Some(51_000), Some(100_000), Some(20_000_000)));
        let total = 5_050_000.0 + 20e6;
        assert!((f[0].bytes_in_flowlets_above_10mb.unwrap() - 20e6 / total).abs() < 1e-12);
        assert_eq!((f[1].flowlets, f[1].mean_bytes, f[1].p50_bytes), (0, None, None));
        let csv = cdf_csv(&[(10 * US, v)]);
        assert_eq!(csv.lines().count(), 101);
        assert!(csv.ends_with("10,100,20000000\n"), "{csv}");
    }
}
