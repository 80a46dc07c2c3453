//! `[results]`: which flows the summary's FCT figures count (a stationary window that leaves out
//! the warm-up and the drain) and the flow-size buckets of the slowdown-by-size figures
//! (seqbalance §5.2 "Metrics": size-binned slowdowns; issue 17 §1).

use super::{FairShare, ResultsConfig};
use crate::error::{Error, Result};
use crate::units::Time;
use crate::workload::time_from_us;

/// The flows a summary counts: those whose start lies in `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationaryWindow {
    /// Earliest counted start (0 when unset).
    pub start: Time,
    /// Starts from here on are not counted; `None`: no end.
    pub end: Option<Time>,
}

impl StationaryWindow {
    /// Whether a flow started at `t` counts.
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && self.end.is_none_or(|e| t < e)
    }
}

/// `[results]` resolved.
#[derive(Clone, Debug, Default)]
pub struct ResultsOptions {
    /// The stationary window; `None` (neither key given): every flow counts.
    pub window: Option<StationaryWindow>,
    /// Upper bounds (bytes, increasing) of the size buckets; empty: no slowdown-by-size figures.
    pub size_buckets: Vec<u64>,
    /// When flows get a fair-share ideal.
    pub fair_share: FairShare,
}

impl ResultsOptions {
    /// Checks and resolves `r`.
    pub fn of(r: &ResultsConfig) -> Result<ResultsOptions> {
        let start = match r.window_start_us {
            Some(us) => time_from_us("results.window_start_us", us)?,
            None => Time::ZERO,
        };
        let end = match r.window_end_us {
            Some(us) => Some(time_from_us("results.window_end_us", us)?),
            None => None,
        };
        if let Some(e) = end.filter(|&e| e <= start) {
            return Err(Error::invalid(
                "results.window_end_us",
                format!("{}: must be later than window_start_us ({} µs)", e.0 as f64 / (crate::units::US).0 as f64, start.0 as f64 / (crate::units::US).0 as f64),
            ));
        }
        let given = r.window_start_us.is_some() || r.window_end_us.is_some();
        let window = given.then_some(StationaryWindow { start, end });
        let size_buckets: Vec<u64> = r.size_buckets.iter().map(|b| b.0).collect();
        for (i, pair) in size_buckets.windows(2).enumerate() {
            if pair[1] <= pair[0] {
                return Err(Error::invalid(
                    format!("results.size_buckets[{}]", i + 1),
                    format!("{}: the upper bounds must increase ({} before it)", pair[1], pair[0]),
                ));
            }
        }
        if size_buckets.first() == Some(&0) {
            return Err(Error::invalid("results.size_buckets[0]", "0: an upper bound must be at least 1 byte"));
        }
        Ok(ResultsOptions { window, size_buckets, fair_share: r.fair_share.unwrap_or_default() })
    }
}
