//! Uplink throughput imbalance (SeqBalance paper §V-B Fig. 7 and Fig. 13, after CONGA): for each
//! ToR and each sampling interval, `(max − min) / mean` of the bytes its uplinks transmitted in
//! that interval. Computed from the port trace (`run.trace_ports`, e.g. `["tor_up"]`, every
//! `run.trace_interval_us`, 100 µs in the paper) for every ToR whose uplinks are all traced;
//! intervals in which the ToR sent nothing up are skipped (seqbalance spec §5.2 "Metrics",
//! an assumption). Computed while the run samples ([`UplinkMeter`]), from the same counters
//! the port trace records.

use super::stats::Stats;
use crate::topo::{Fabric, Tier};
use serde::Serialize;
use std::collections::BTreeMap;

/// The imbalance figure of `summary.json` (`uplink_imbalance`).
#[derive(Clone, Debug, Serialize)]
pub struct UplinkImbalance {
    /// ToRs whose every uplink was traced.
    pub tors: u32,
    /// (ToR, interval) samples with traffic.
    pub samples: u64,
    /// Distribution of (max − min) / mean over those samples (a ratio: 0 = even).
    pub imbalance: Stats,
}

/// The uplinks (ports toward a switch) of every ToR of `fabric`, by ToR.
fn uplinks(fabric: &Fabric) -> BTreeMap<u32, Vec<u32>> {
    let mut by_tor: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, p) in fabric.ports.iter().enumerate() {
        if fabric.tier[p.owner as usize] == Tier::Tor && p.peer >= fabric.hosts {
            by_tor.entry(p.owner).or_default().push(i as u32);
        }
    }
    by_tor
}

/// The imbalance of the ToRs whose uplinks are all traced, computed tick by tick while the run
/// samples (so that it needs no port samples kept: they may be streamed to their file). Keeps
/// one value per (ToR, interval) with traffic, for the figure's quantiles.
#[derive(Clone, Debug)]
pub struct UplinkMeter {
    /// The uplinks of each such ToR, ToR after ToR (in ToR order).
    ports: Vec<u32>,
    /// Where each ToR's uplinks end in `ports`.
    ends: Vec<usize>,
    /// Each uplink's bytes transmitted at the previous tick.
    last: Vec<u64>,
    /// Ticks so far.
    ticks: u64,
    /// (max − min) / mean of every (ToR, interval) with traffic.
    values: Vec<f64>,
}

impl UplinkMeter {
    /// The meter of the ToRs of `fabric` whose uplinks are all among `traced` (ports), `None`
    /// when there is none.
    pub fn new(fabric: &Fabric, traced: &[u32]) -> Option<UplinkMeter> {
        let traced: std::collections::BTreeSet<u32> = traced.iter().copied().collect();
        let mut m = UplinkMeter { ports: Vec::new(), ends: Vec::new(), last: Vec::new(), ticks: 0, values: Vec::new() };
        for ups in uplinks(fabric).values().filter(|ups| ups.iter().all(|p| traced.contains(p))) {
            m.ports.extend_from_slice(ups);
            m.ends.push(m.ports.len());
        }
        m.last = vec![0; m.ports.len()];
        (!m.ends.is_empty()).then_some(m)
    }

    /// ToRs whose uplinks are all among `traced` (for the estimate).
    pub fn tors(fabric: &Fabric, traced: &[u32]) -> usize {
        Self::new(fabric, traced).map_or(0, |m| m.ends.len())
    }

    /// One sampling tick: `tx_bytes(port)` is each uplink's bytes transmitted so far.
    pub fn tick(&mut self, tx_bytes: impl Fn(u32) -> u64) {
        let mut start = 0;
        for &end in &self.ends {
            let (mut lo, mut hi, mut sum) = (u64::MAX, 0, 0);
            for i in start..end {
                let now = tx_bytes(self.ports[i]);
                let sent = now - self.last[i];
                self.last[i] = now;
                (lo, hi, sum) = (lo.min(sent), hi.max(sent), sum + sent);
            }
            if self.ticks > 0 && sum > 0 {
                let mean = sum as f64 / (end - start) as f64;
                self.values.push((hi - lo) as f64 / mean);
            }
            start = end;
        }
        self.ticks += 1;
    }

    /// The figure, once a tick was taken.
    pub fn figure(&self) -> Option<UplinkImbalance> {
        let mut v = self.values.clone();
        (self.ticks > 0).then(|| UplinkImbalance { tors: self.ends.len() as u32, samples: v.len() as u64, imbalance: Stats::of(&mut v) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The meter fed with `trace` (every traced port at each sampling time, in time order).
    fn meter(f: &Fabric, ports: &[u32], trace: &[(u64, u64, u64)]) -> Option<UplinkMeter> {
        let mut m = UplinkMeter::new(f, ports)?;
        for &(_, x, y) in trace {
            m.tick(|p| if p == ports[0] { x } else { y });
        }
        Some(m)
    }

    #[test]
    fn imbalance_of_crafted_intervals() {
        // A leaf-spine with 2 ToRs and 2 spines: each ToR has two uplinks.
        let f = crate::topo::leaf_spine::build_shape(
            crate::topo::leaf_spine::Shape { tors: 2, hosts_per_tor: 2, spines: 2, links_per_spine: 1 },
            {
                let l = (crate::units::BitsPerSec::from_gbps(100.0), 1_000_000);
                crate::topo::TierLinks { host: l, tor_up: l, agg_up: l }
            },
            &[],
            0,
        )
        .unwrap();
        let ups = uplinks(&f);
        assert_eq!(ups.len(), 2);
        let tor0 = ups.values().next().unwrap().clone();
        assert_eq!(tor0.len(), 2);
        // Interval 1: 300 and 100 bytes → (300 − 100) / 200 = 1; interval 2: nothing (skipped);
        // interval 3: 50 and 50 → 0. The other ToR is not traced.
        let trace = [(0, 0, 0), (1, 300, 100), (2, 300, 100), (3, 350, 150)];
        let m = meter(&f, &tor0, &trace).unwrap();
        assert_eq!(m.values, vec![1.0, 0.0]);
        let fig = m.figure().unwrap();
        assert_eq!((fig.tors, fig.samples, fig.imbalance.max, fig.imbalance.mean), (1, 2, 1.0, 0.5));
        assert_eq!(UplinkMeter::tors(&f, &tor0), 1);
        // One uplink missing: no figure; no tick yet: none either.
        assert!(UplinkMeter::new(&f, &tor0[..1]).is_none());
        assert!(UplinkMeter::new(&f, &tor0).unwrap().figure().is_none());
    }
}
