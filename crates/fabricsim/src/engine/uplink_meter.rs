//! The uplink meter behind `summary.json`'s `uplink_imbalance` (SeqBalance paper §V-B Fig. 7
//! and Fig. 13, after CONGA): at every sampling tick, for each ToR whose uplinks are all traced,
//! `(max − min) / mean` of the bytes its uplinks transmitted since the previous tick. It runs
//! in the engine, tick by tick, so that no port sample need be kept (they may be streamed to
//! their file); `results::imbalance` turns its values into the figure.

use crate::topo::{Fabric, Tier};
use std::collections::BTreeMap;

/// The uplinks (ports toward a switch) of every ToR of `fabric`, by ToR.
pub(crate) fn uplinks(fabric: &Fabric) -> BTreeMap<u32, Vec<u32>> {
    let mut by_tor: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, p) in fabric.ports.iter().enumerate() {
        if fabric.tier[p.owner.idx()] == Tier::Tor && !fabric.is_host(p.peer) {
            by_tor.entry(p.owner.0).or_default().push(i as u32);
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

    /// ToRs metered.
    pub fn tors(&self) -> usize {
        self.ends.len()
    }

    /// Ticks taken.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// (max − min) / mean of every (ToR, interval) with traffic, in tick order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
}
