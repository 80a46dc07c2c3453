//! Workloads: what the hosts exchange and when. Every workload compiles to a [`graph::Traffic`]:
//! connections, messages posted on them, and dependencies between messages. Flow workloads
//! produce a list of [`FlowSpec`]s first (one connection and one message per flow; a flow may wait
//! for another flow to finish, `after`, which is how all-to-all limits concurrent flows per host);
//! collective workloads ([`collective`]) build the graph directly.
//!
//! Adding a workload: one file with a params struct and a `generate` function, one variant in
//! [`WorkloadConfig`], one row in [`REGISTRY`].

pub mod all_to_all;
pub mod collective;
pub mod flow_list;
pub mod graph;
pub mod incast;
pub mod open_loop;
pub mod permutation;
pub mod rdma_writes;
pub mod size_cdf;

use crate::error::{Error, Result};
use graph::{GraphBuilder, Traffic, Trigger};
use crate::ids::NodeId;
use crate::topo::Fabric;
use crate::rng::Rng;
use crate::units::{Time, US};
use serde::Serialize;
use std::path::Path;

/// One flow to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes.
    pub bytes: u64,
    /// Earliest start time.
    pub start: Time,
    /// If set, the flow starts only when this flow (an index into the list) has finished, and
    /// at the later of that finish and `start`.
    pub after: Option<u32>,
}

/// Scenario selection of a workload (`[workload]`, `kind = ...`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// See [`permutation`].
    Permutation(permutation::PermutationParams),
    /// See [`incast`].
    Incast(incast::IncastParams),
    /// See [`all_to_all`].
    AllToAll(all_to_all::AllToAllParams),
    /// See [`flow_list`].
    FlowList(flow_list::FlowListParams),
    /// See [`collective`].
    Collectives(collective::CollectivesParams),
    /// See [`open_loop`].
    OpenLoop(open_loop::OpenLoopParams),
    /// See [`rdma_writes`].
    RdmaWrites(rdma_writes::RdmaWritesParams),
}

crate::tagged_config!(WorkloadConfig, "kind", "workload", {
    "permutation" => Permutation(permutation::PermutationParams),
    "incast" => Incast(incast::IncastParams),
    "all_to_all" => AllToAll(all_to_all::AllToAllParams),
    "flow_list" => FlowList(flow_list::FlowListParams),
    "collectives" => Collectives(collective::CollectivesParams),
    "open_loop" => OpenLoop(open_loop::OpenLoopParams),
    "rdma_writes" => RdmaWrites(rdma_writes::RdmaWritesParams),
});

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Permutation(permutation::PermutationParams::default())
    }
}

/// Registry rows: name, one-line summary and parameters of each workload.
pub const REGISTRY: &[crate::scheme::SchemeRow] = &[
    crate::scheme::plain_row::<permutation::PermutationParams>(permutation::NAME, permutation::SUMMARY),
    crate::scheme::plain_row::<incast::IncastParams>(incast::NAME, incast::SUMMARY),
    crate::scheme::plain_row::<all_to_all::AllToAllParams>(all_to_all::NAME, all_to_all::SUMMARY),
    crate::scheme::plain_row::<flow_list::FlowListParams>(flow_list::NAME, flow_list::SUMMARY),
    crate::scheme::plain_row::<collective::CollectivesParams>(collective::NAME, collective::SUMMARY),
    open_loop::ROW,
    crate::scheme::plain_row::<rdma_writes::RdmaWritesParams>(rdma_writes::NAME, rdma_writes::SUMMARY),
];

impl WorkloadConfig {
    /// Generates the traffic for `fabric`. `base_dir` resolves relative file names; `seed` is
    /// the scenario's master seed.
    pub fn generate(&self, fabric: &Fabric, seed: u64, base_dir: &Path) -> Result<Traffic> {
        let hosts = fabric.hosts;
        let mut rng = Rng::stream(seed, "workload", 0);
        let (mut flows, jitter_us) = match self {
            WorkloadConfig::Collectives(p) => return collective::generate(p, hosts, &mut rng, base_dir),
            WorkloadConfig::RdmaWrites(p) => return rdma_writes::generate(p, fabric),
            WorkloadConfig::OpenLoop(p) => (open_loop::generate(p, fabric, &mut rng, base_dir)?, 0.0),
            WorkloadConfig::Permutation(p) => (permutation::generate(p, &fabric.pod_of_host(), &fabric.tor_of_host, &mut rng)?, p.start_jitter_us),
            WorkloadConfig::Incast(p) => (incast::generate(p, hosts, &mut rng)?, p.start_jitter_us),
            WorkloadConfig::AllToAll(p) => (all_to_all::generate(p, hosts)?, p.start_jitter_us),
            WorkloadConfig::FlowList(p) => (flow_list::generate(p, hosts, base_dir)?, p.start_jitter_us),
        };
        let jitter = time_from_us("workload.start_jitter_us", jitter_us)?;
        if jitter > 0 {
            let mut jrng = Rng::stream(seed, "workload-jitter", 0);
            for f in &mut flows {
                f.start += jrng.below(jitter + 1);
            }
        }
        if flows.is_empty() {
            return Err(Error::invalid("workload", "the workload generates no flows"));
        }
        Ok(flows_to_traffic(&flows))
    }
}

/// One connection and one message per flow; `after` becomes a completion dependency.
pub fn flows_to_traffic(flows: &[FlowSpec]) -> Traffic {
    let mut g = GraphBuilder::new();
    for f in flows {
        let c = g.conn(f.src, f.dst);
        g.send(c, f.bytes, f.start);
    }
    for (j, f) in flows.iter().enumerate() {
        if let Some(a) = f.after {
            g.edge(a, j as u32, Trigger::Completed, 0);
        }
    }
    g.finish()
}

/// Converts a non-negative microsecond value of scenario key `key` to picoseconds.
pub fn time_from_us(key: &str, us: f64) -> Result<Time> {
    if !(us.is_finite() && us >= 0.0) {
        return Err(Error::invalid(key, format!("{us}: must be a non-negative number of microseconds")));
    }
    Ok((us * US as f64).round() as Time)
}

/// Checks that a flow's endpoints exist and differ. `key` names where the flow came from.
pub fn check_endpoints(key: &str, src: u64, dst: u64, hosts: u32) -> Result<()> {
    if src >= hosts as u64 || dst >= hosts as u64 {
        let bad = if src >= hosts as u64 { src } else { dst };
        return Err(Error::invalid(key, format!("host {bad} does not exist: the fabric has hosts 0..{}", hosts - 1)));
    }
    if src == dst {
        return Err(Error::invalid(key, format!("flow from host {src} to itself")));
    }
    Ok(())
}

fn default_flow_bytes() -> crate::units::ByteSize {
    crate::units::ByteSize(2 << 20)
}
