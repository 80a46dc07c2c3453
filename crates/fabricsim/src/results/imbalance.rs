//! Uplink throughput imbalance (SeqBalance paper §V-B Fig. 7 and Fig. 13, after CONGA): for each
//! ToR and each sampling interval, `(max − min) / mean` of the bytes its uplinks transmitted in
//! that interval. Computed from the port trace (`run.trace_ports`, e.g. `["tor_up"]`, every
//! `run.trace_interval_us`, 100 µs in the paper) for every ToR whose uplinks are all traced;
//! intervals in which the ToR sent nothing up are skipped (seqbalance spec §5.2 "Metrics",
//! an assumption).

use super::stats::Stats;
use crate::engine::trace::PortSample;
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

/// Every (ToR, interval) imbalance of `trace` (samples in time order, every traced port at each
/// sampling time), for ToRs whose uplinks are all in it.
pub fn samples(fabric: &Fabric, trace: &[PortSample]) -> (u32, Vec<f64>) {
    // Cumulative bytes per port at each sampling time.
    let mut series: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for s in trace {
        series.entry(s.port).or_default().push(s.tx_bytes);
    }
    let mut tors = 0;
    let mut out = Vec::new();
    for ports in uplinks(fabric).values() {
        let Some(cols) = ports.iter().map(|p| series.get(p)).collect::<Option<Vec<_>>>() else { continue };
        tors += 1;
        let len = cols.iter().map(|c| c.len()).min().unwrap_or(0);
        for t in 1..len {
            let sent = cols.iter().map(|c| c[t] - c[t - 1]);
            let (min, max, sum) = sent.fold((u64::MAX, 0, 0), |(lo, hi, s), b| (lo.min(b), hi.max(b), s + b));
            if sum > 0 {
                let mean = sum as f64 / cols.len() as f64;
                out.push((max - min) as f64 / mean);
            }
        }
    }
    (tors, out)
}

/// The figure, when some ToR's uplinks were all traced.
pub fn figure(fabric: &Fabric, trace: &[PortSample]) -> Option<UplinkImbalance> {
    let (tors, mut v) = samples(fabric, trace);
    (tors > 0).then(|| UplinkImbalance { tors, samples: v.len() as u64, imbalance: Stats::of(&mut v) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: u64, port: u32, tx_bytes: u64) -> PortSample {
        PortSample { at, port, data_bytes: 0, tx_bytes, paused: false, marks: 0 }
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
        let (a, b) = (tor0[0], tor0[1]);
        // Interval 1: 300 and 100 bytes → (300 − 100) / 200 = 1; interval 2: nothing (skipped);
        // interval 3: 50 and 50 → 0. The other ToR is not traced.
        let trace: Vec<PortSample> = [(0, 0, 0), (1, 300, 100), (2, 300, 100), (3, 350, 150)]
            .iter()
            .flat_map(|&(t, x, y)| [sample(t, a, x), sample(t, b, y)])
            .collect();
        assert_eq!(samples(&f, &trace), (1, vec![1.0, 0.0]));
        let fig = figure(&f, &trace).unwrap();
        assert_eq!((fig.tors, fig.samples, fig.imbalance.max, fig.imbalance.mean), (1, 2, 1.0, 0.5));
        // One uplink missing: no figure.
        let partial: Vec<PortSample> = trace.iter().copied().filter(|s| s.port == a).collect();
        assert!(figure(&f, &partial).is_none());
    }
}
