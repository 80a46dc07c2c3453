//! FCT slowdown by flow-size bucket (`summary.json` `slowdown_by_size`), as the datacenter
//! load-balancing papers plot it (seqbalance §5.2 "Metrics": "size-binned slowdowns"), and the
//! count of flows a stationary window keeps (`stationary_window`; issue 17 §1: warm-up and
//! drain excluded). Both count a flow when its start lies in the window and, for slowdowns,
//! when it finished.

use super::flows::FlowResult;
use super::stats::{mean, nearest_rank};
use super::us;
use crate::scenario::StationaryWindow;
use serde::Serialize;

/// Slowdown figures of the finished flows of one size bucket.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SizeBucket {
    /// The byte range, `"0 < bytes <= 10000"` (the last bucket: `"bytes > 10000"`).
    pub label: String,
    /// Flows in the bucket have more payload bytes than this.
    pub bytes_above: u64,
    /// ... and at most this many (`null` for the last bucket: no bound).
    pub bytes_at_most: Option<u64>,
    /// Finished flows in the bucket (started in the window).
    pub count: u32,
    /// Mean slowdown (`null` when `count` is 0).
    pub mean: Option<f64>,
    /// Median slowdown, nearest rank.
    pub p50: Option<f64>,
    /// 95th percentile slowdown, nearest rank.
    pub p95: Option<f64>,
    /// 99th percentile slowdown, nearest rank.
    pub p99: Option<f64>,
}

/// The stationary window of `[results]` and the flows it keeps.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WindowFigures {
    /// Earliest counted start (µs).
    pub start_us: f64,
    /// Starts from here on are not counted (µs); `null`: no end.
    pub end_us: Option<f64>,
    /// Flows that started in the window.
    pub flows: u32,
    /// Of those, the finished ones: what the FCT and slowdown figures count.
    pub flows_finished: u32,
}

impl WindowFigures {
    /// The figures of `window` over `flows`.
    pub fn of(window: &StationaryWindow, flows: &[FlowResult]) -> WindowFigures {
        let kept = flows.iter().filter(|f| window.contains(f.start));
        let (n, finished) = kept.fold((0, 0), |(n, d), f| (n + 1, d + u32::from(f.finish.is_some())));
        WindowFigures { start_us: us(window.start), end_us: window.end.map(us), flows: n, flows_finished: finished }
    }
}

/// Per bucket of upper bounds `bounds` (increasing; one more bucket above the last), the
/// slowdown figures of the finished `flows` that started in `window` (every flow when `None`).
pub(super) fn buckets(bounds: &[u64], window: Option<StationaryWindow>, flows: &[FlowResult]) -> Vec<SizeBucket> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); bounds.len() + 1];
    for f in flows.iter().filter(|f| window.is_none_or(|w| w.contains(f.start))) {
        if let Some(s) = f.slowdown() {
            // The first bucket whose bound the flow does not exceed (bounds are increasing).
            samples[bounds.partition_point(|&b| b < f.bytes)].push(s);
        }
    }
    samples
        .iter_mut()
        .enumerate()
        .map(|(i, v)| {
            v.sort_by(|a, b| a.total_cmp(b));
            let above = if i == 0 { 0 } else { bounds[i - 1] };
            let at_most = bounds.get(i).copied();
            let q = |q: f64| (!v.is_empty()).then(|| nearest_rank(v, q));
            SizeBucket {
                label: match at_most {
                    Some(b) => format!("{above} < bytes <= {b}"),
                    None => format!("bytes > {above}"),
                },
                bytes_above: above,
                bytes_at_most: at_most,
                count: v.len() as u32,
                mean: (!v.is_empty()).then(|| mean(v)),
                p50: q(0.5),
                p95: q(0.95),
                p99: q(0.99),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::results::flows::tests::row;

    /// A finished flow of `bytes` started at `start` µs with slowdown `slowdown` (ideal 1 µs).
    fn flow(bytes: u64, start: u64, slowdown: u64) -> FlowResult {
        let mut f = row(0, start * 1_000_000, Some(start * 1_000_000 + slowdown * 1_000_000), 1_000_000);
        f.bytes = bytes;
        f
    }

    #[test]
    fn flows_fall_in_the_bucket_of_the_first_bound_they_do_not_exceed() {
        // Bounds 1000 and 10 000: 1000 B is in the first bucket, 1001 B in the second,
        // 20 000 B above the last bound.
        let flows = [flow(1, 0, 1), flow(1000, 0, 3), flow(1001, 0, 5), flow(10_000, 0, 7), flow(20_000, 0, 2)];
        let b = buckets(&[1000, 10_000], None, &flows);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].label.as_str(), b[0].bytes_above, b[0].bytes_at_most, b[0].count), ("0 < bytes <= 1000", 0, Some(1000), 2));
        assert_eq!((b[0].mean, b[0].p50, b[0].p99), (Some(2.0), Some(1.0), Some(3.0)));
        assert_eq!((b[1].label.as_str(), b[1].count, b[1].mean, b[1].p95), ("1000 < bytes <= 10000", 2, Some(6.0), Some(7.0)));
        assert_eq!((b[2].label.as_str(), b[2].bytes_at_most, b[2].count, b[2].p50), ("bytes > 10000", None, 1, Some(2.0)));
    }

    #[test]
    fn nearest_rank_quantiles_of_a_hundred_flows() {
        // Slowdowns 1..=100 in one bucket: mean 50.5, p50 = 50th, p95 = 95th, p99 = 99th value.
        let flows: Vec<FlowResult> = (1..=100).rev().map(|s| flow(500, 0, s)).collect();
        let b = buckets(&[1000], None, &flows);
        assert_eq!((b[0].count, b[0].mean, b[0].p50, b[0].p95, b[0].p99), (100, Some(50.5), Some(50.0), Some(95.0), Some(99.0)));
        // The empty bucket above has a count of 0 and no figures.
        assert_eq!((b[1].count, b[1].mean, b[1].p99), (0, None, None));
    }

    #[test]
    fn the_window_keeps_flows_that_start_in_it_and_unfinished_ones_are_not_slowdowns() {
        // Starts at 0, 10, 20, 30 µs; window [10, 30): the flows started at 10 and 20.
        let mut flows = vec![flow(500, 0, 9), flow(500, 10, 2), flow(500, 20, 4), flow(500, 30, 9)];
        let w = StationaryWindow { start: Time(10_000_000), end: Some(Time(30_000_000)) };
        let b = buckets(&[1000], Some(w), &flows);
        assert_eq!((b[0].count, b[0].mean), (2, Some(3.0)));
        flows[2].finish = None;
        let b = buckets(&[1000], Some(w), &flows);
        assert_eq!((b[0].count, b[0].mean), (1, Some(2.0)));
        let fig = WindowFigures::of(&w, &flows);
        assert_eq!(fig, WindowFigures { start_us: 10.0, end_us: Some(30.0), flows: 2, flows_finished: 1 });
        // An open end keeps everything from the start on.
        let open = StationaryWindow { start: Time(10_000_000), end: None };
        assert_eq!((WindowFigures::of(&open, &flows).flows, WindowFigures::of(&open, &flows).end_us), (3, None));
    }
}
