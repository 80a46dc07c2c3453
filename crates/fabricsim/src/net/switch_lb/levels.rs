//! Queue comparison shared by the adaptive switch-side schemes (`adaptive_packet`,
//! `adaptive_ecmp`, `flowlet`): which candidates have the "shortest queue".
//!
//! **Models:** the common queue-comparison primitive of the in-switch adaptive schemes of
//! the AI-training load-balancing study (lb-ai-training §2.1; paper §4, adaptive
//! in-switch schemes of §5, Fig. 3), htsim-faithful: a
//! port's egress occupancy quantised to a level ([`super::quantised_level`]: 0/1/2/3 below
//! 5/10/20 % of the port's buffer / above), each port's level refreshed at most every
//! `level_refresh_us` (0.1 µs) so the values a switch compares are slightly stale; the
//! shortest queue is the lowest level, ties broken uniformly with the switch's random stream.
//! Option `compare = "bytes"`: exact queued bytes, read fresh at every decision (MCC's adaptive
//! routing), with the same uniform tie-breaking.
//!
//! The cache is per switch (one [`Levels`] inside each switch's selector) and keyed by port id:
//! a small vector of `(port, level, refreshed_at)` searched linearly (a switch has a few dozen
//! ports at most), filled on first sight and never reallocated afterwards.

use super::{Candidates, PortView};
use crate::ids::PortId;
use crate::rng::Rng;
use crate::scheme::Limit;
use crate::units::{us_to_ps, Time};
use serde::{Deserialize, Serialize};

/// What the adaptive schemes compare.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    /// Quantised level (0..=3), refreshed at most every `level_refresh_us`.
    #[default]
    Level,
    /// Exact queued data bytes, always fresh.
    Bytes,
}

//= lb-ai-training §2.1 (queue comparison); type=assumption (htsim-faithful)
//# A port's level is refreshed at most once every 0.1 µs.
/// Default refresh period of a cached level (µs).
pub const DEFAULT_REFRESH_US: f64 = 0.1;

/// Range of `level_refresh_us` (0 = always fresh; at most 1 s).
pub const REFRESH_LIMIT: Limit = Limit::new("level_refresh_us", 0.0, 1e6);

/// The queue comparison of one switch: the rule and the cached levels of its ports.
#[derive(Clone, Debug)]
pub struct Levels {
    compare: Compare,
    refresh: Time,
    /// `(port, level, refreshed_at)` of every port seen so far.
    cache: Vec<(PortId, u8, Time)>,
    /// The metrics of the current decision's candidates (reused, no allocation per packet).
    scratch: Vec<u64>,
}

impl Levels {
    /// A comparison by `compare`, levels refreshed every `refresh_us` µs.
    pub fn new(compare: Compare, refresh_us: f64) -> Self {
        Levels { compare, refresh: us_to_ps(refresh_us), cache: Vec::with_capacity(16), scratch: Vec::with_capacity(16) }
    }

    /// The rule in use.
    pub fn compare(&self) -> Compare {
        self.compare
    }

    /// The compared value of port `v` at `now`: its level as last refreshed (re-read when the
    /// cached one is `refresh` old or more), or its exact queued bytes.
    pub fn metric(&mut self, now: Time, v: PortView<'_>) -> u64 {
        if self.compare == Compare::Bytes {
            return v.queued_bytes();
        }
        let refresh = self.refresh;
        match self.cache.iter_mut().find(|e| e.0 == v.id()) {
            Some(e) => {
                if now.saturating_sub(e.2) >= refresh {
                    *e = (v.id(), v.level(), now);
                }
                e.1 as u64
            }
            None => {
                let l = v.level();
                self.cache.push((v.id(), l, now));
                l as u64
            }
        }
    }

    /// The metric of every candidate, in candidate order (valid until the next call).
    pub fn metrics(&mut self, now: Time, cands: &Candidates<'_>) -> &[u64] {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        s.extend(cands.iter().map(|v| self.metric(now, v)));
        self.scratch = s;
        &self.scratch
    }

    /// Index of a lowest-metric candidate, uniform among ties, and its metric.
    pub fn lowest(&mut self, now: Time, cands: &Candidates<'_>, rng: &mut Rng) -> (usize, u64) {
        let m = self.metrics(now, cands);
        let i = lowest_of(m, rng);
        (i, m[i])
    }
}

/// Index of the smallest of `m` (non-empty), uniformly random among equal smallest values
/// (reservoir sampling: one draw per tie met, none without ties).
pub fn lowest_of(m: &[u64], rng: &mut Rng) -> usize {
    let (mut best, mut ties) = (0, 1u64);
    for (i, &x) in m.iter().enumerate().skip(1) {
        if x < m[best] {
            best = i;
            ties = 1;
        } else if x == m[best] {
            ties += 1;
            if rng.below(ties) == 0 {
                best = i;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;
    use crate::net::switch_lb::tests::idle_ports;

    #[test]
    fn levels_are_stale_within_the_refresh_period_and_refreshed_after() {
        let (ports, mut state) = idle_ports(2);
        let buf = [100_000u64];
        let mut l = Levels::new(Compare::Level, 0.1);
        let c = Candidates::new(&ports, &state, &buf);
        assert_eq!(l.metric(Time::ZERO, c.view(0)), 0);
        // The queue grows to level 3; within 0.1 µs (100 000 ps) the switch still sees 0.
        state[0].data_bytes = Bytes(50_000);
        let c = Candidates::new(&ports, &state, &buf);
        assert_eq!(l.metric(Time(99_999), c.view(0)), 0);
        // At 0.1 µs after the last refresh it is read again.
        assert_eq!(l.metric(Time(100_000), c.view(0)), 3);
        // Port 1 has its own entry, first read now.
        assert_eq!(l.metric(Time(100_001), c.view(1)), 0);
        state[0].data_bytes = Bytes(6_000);
        let c = Candidates::new(&ports, &state, &buf);
        assert_eq!(l.metric(Time(150_000), c.view(0)), 3);
        assert_eq!(l.metric(Time(200_000), c.view(0)), 1);
        // Bytes: exact and always fresh.
        let mut b = Levels::new(Compare::Bytes, 0.1);
        assert_eq!(b.metric(Time(200_000), c.view(0)), 6_000);
        state[0].data_bytes = Bytes(7_000);
        let c = Candidates::new(&ports, &state, &buf);
        assert_eq!(b.metric(Time(200_001), c.view(0)), 7_000);
        // Refresh 0: always fresh levels.
        let mut f = Levels::new(Compare::Level, 0.0);
        assert_eq!(f.metric(Time(5), c.view(0)), 1);
    }

    #[test]
    fn lowest_is_uniform_over_the_tied_set_and_seeded() {
        let mut rng = Rng::stream(3, "switch_lb", 0);
        // Candidates 1, 2 and 4 tie at the lowest metric.
        let m = [2, 0, 0, 1, 0];
        let mut counts = [0u32; 5];
        for _ in 0..30_000 {
            counts[lowest_of(&m, &mut rng)] += 1;
        }
        assert_eq!((counts[0], counts[3]), (0, 0));
        // 10 000 each, sd ≈ 82: ±5 sd.
        assert!([1, 2, 4].iter().all(|&i| (9_590..10_410).contains(&counts[i])), "{counts:?}");
        // A unique minimum needs no draw.
        let mut a = Rng::stream(3, "switch_lb", 0);
        let before = a.clone().next_u64();
        assert_eq!(lowest_of(&[3, 1, 2], &mut a), 1);
        assert_eq!(a.next_u64(), before);
        // Same seed, same picks.
        let picks = |seed| {
            let mut r = Rng::stream(seed, "switch_lb", 0);
            (0..50).map(|_| lowest_of(&m, &mut r)).collect::<Vec<_>>()
        };
        assert_eq!(picks(1), picks(1));
        assert_ne!(picks(1), picks(2));
    }
}
