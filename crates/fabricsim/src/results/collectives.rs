//! Per-collective-instance rows (`ccts.csv`): completion times against the ideal, and their
//! figures in `summary.json`.

use super::{known, us, Stats};
use crate::engine::Sim;
use crate::units::{Bytes, Time};
use crate::workload::graph::Instance;
use serde::Serialize;

/// Outcome of one collective instance (a row of `ccts.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct CctResult {
    /// What ran: job, iteration, operation, algorithm, ranks, bytes.
    #[serde(flatten)]
    pub instance: Instance,
    /// When it started (ps), if it did.
    pub start: Option<Time>,
    /// When its last message completed (ps), if it did.
    pub end: Option<Time>,
    /// Ideal completion time (ps): bus bytes per rank (with headers) at the host rate plus the
    /// algorithm's latency term (see `workload::collective`).
    pub ideal: Time,
}

impl CctResult {
    /// Collective completion time (ps).
    pub fn cct(&self) -> Option<Time> {
        Some(self.end? - self.start?)
    }
    /// CCT divided by the ideal.
    pub fn normalized(&self) -> Option<f64> {
        self.cct().map(|c| c.0 as f64 / self.ideal.max(Time(1)).0 as f64)
    }
}

/// Collective figures of `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveSummary {
    /// Jobs.
    pub jobs: u32,
    /// Collective instances (jobs × iterations × sequence length).
    pub instances: u32,
    /// Instances that finished.
    pub finished: u32,
    /// CCT distribution (µs).
    pub cct_us: Stats,
    /// Normalized CCT (CCT / ideal) distribution.
    pub normalized_cct: Stats,
}

/// One row per collective instance.
pub(super) fn rows(sim: &Sim) -> Vec<CctResult> {
    let tp = sim.hosts.tp;
    let host_rate = super::bounds::link_rate(sim, crate::ids::NodeId(0), false);
    // The shortest one-way trip of the instance's own connections, so that ranks in one rack
    // do not get the fabric's longest path charged (the ideal must stay a lower bound), and
    // another job's connections do not move it.
    let paths = super::bounds::instance_paths(sim);
    sim.traffic
        .instances
        .iter()
        .zip(&sim.tasks.instance_span)
        .zip(paths)
        .map(|((inst, &(start, end)), path)| {
            let one_way = path.one_way;
            // Every rank sends its share of the bus bytes: at the slowest link any sender
            // uses, or, where links differ (a server's scale-up port beside its NIC), each
            // sender's own bytes at its own link's rate. A chunk hop on the dependency chain
            // may take the fastest link.
            let (slowest, fastest) = path.rates.unwrap_or((host_rate, host_rate));
            let wire = |b: u64| b + b.div_ceil(tp.mss as u64) * tp.header as u64;
            let hop = fastest.tx_time(Bytes(wire(inst.hop_chunk()))) + one_way;
            // The busiest sender's bytes, then its last chunk's flight (one way) and the fill
            // hops after it: the last of the `fill_hops` is that chunk's own, whose
            // serialization the bytes already count (a ring's or a direct AllToAll's rank
            // starts sending at once, so they end one one-way trip after their bytes).
            let busiest = path.busiest_sender.unwrap_or_else(|| slowest.tx_time(Bytes(wire(inst.bus_bytes.0))));
            let bulk = busiest + inst.fill_hops.saturating_sub(1) as u64 * hop + one_way;
            // An analytic instance takes exactly its duration.
            let ideal = inst.fixed.unwrap_or_else(|| bulk.max(inst.chain_hops as u64 * hop) + inst.rtt_rounds as u64 * 2 * one_way);
            CctResult {
                instance: inst.clone(),
                start: known(start),
                end: known(end),
                ideal,
            }
        })
        .collect()
}


/// Figures of `ccts`; none for a workload without collectives.
pub(super) fn summary(ccts: &[CctResult]) -> Option<CollectiveSummary> {
    (!ccts.is_empty()).then(|| {
        let mut cct: Vec<f64> = ccts.iter().filter_map(CctResult::cct).map(us).collect();
        let mut norm: Vec<f64> = ccts.iter().filter_map(CctResult::normalized).collect();
        CollectiveSummary {
            jobs: ccts.iter().map(|c| c.instance.job + 1).max().unwrap_or(0),
            instances: ccts.len() as u32,
            finished: cct.len() as u32,
            cct_us: Stats::of(&mut cct),
            normalized_cct: Stats::of(&mut norm),
        }
    })
}
