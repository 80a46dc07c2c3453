//! Uplink throughput imbalance (SeqBalance paper §V-B Fig. 7 and Fig. 13, after CONGA): for each
//! ToR and each sampling interval, `(max − min) / mean` of the bytes its uplinks transmitted in
//! that interval. Computed from the port trace (`run.trace_ports`, e.g. `["tor_up"]`, every
//! `run.trace_interval_us`, 100 µs in the paper) for every ToR whose uplinks are all traced;
//! intervals in which the ToR sent nothing up are skipped (seqbalance spec §5.2 "Metrics",
//! an assumption). Computed while the run samples ([`UplinkMeter`], in the engine), from the
//! same counters the port trace records.

use super::stats::Stats;
pub use crate::engine::uplink_meter::UplinkMeter;
use serde::Serialize;

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

/// The figure of `meter`, once it took a tick.
pub fn figure(meter: &UplinkMeter) -> Option<UplinkImbalance> {
    let mut v = meter.values().to_vec();
    (meter.ticks() > 0).then(|| UplinkImbalance { tors: meter.tors() as u32, samples: v.len() as u64, imbalance: Stats::of(&mut v) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::engine::uplink_meter::uplinks;
    use crate::topo::Fabric;

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
                let l = (crate::units::BitsPerSec::from_gbps(100.0), crate::units::US);
                crate::topo::TierLinks { host: l, tor_up: l, agg_up: l }
            },
            &[],
            Time::ZERO,
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
        assert_eq!(m.values(), [1.0, 0.0]);
        let fig = figure(&m).unwrap();
        assert_eq!((fig.tors, fig.samples, fig.imbalance.max, fig.imbalance.mean), (1, 2, 1.0, 0.5));
        assert_eq!(UplinkMeter::new(&f, &tor0).map_or(0, |m| m.tors()), 1);
        // One uplink missing: no figure; no tick yet: none either.
        assert!(UplinkMeter::new(&f, &tor0[..1]).is_none());
        assert!(figure(&UplinkMeter::new(&f, &tor0).unwrap()).is_none());
    }
}
