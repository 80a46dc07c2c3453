//! `all_to_all`: every host sends one flow to every other host. With `max_concurrent = c > 0`
//! a host runs at most c of its flows at once: its i-th flow starts when its (i−c)-th finishes.
//! Host h visits destinations h+1, h+2, … (mod n), the usual staggered order that spreads load.

use super::{default_flow_bytes, time_from_us, FlowSpec};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::{ByteSize, Bytes};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "all_to_all";
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &["workload={ kind = \"all_to_all\", flow_bytes = \"16KiB\" }"];
/// Registry summary.
pub const SUMMARY: &str = "each host sends to all others, optionally at most c flows at a time per host";

/// Parameters of `all_to_all`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllToAllParams {
    /// Bytes per flow.
    #[serde(default = "default_flow_bytes")]
    pub flow_bytes: ByteSize,
    /// Concurrent flows per sending host; 0 = all at once.
    pub max_concurrent: u32,
    /// Use only hosts `0..hosts` (default: every host).
    pub hosts: Option<u32>,
    /// Start time.
    pub start_us: f64,
    /// Each flow starts up to this much later, uniformly at random.
    pub start_jitter_us: f64,
}

impl Default for AllToAllParams {
    fn default() -> Self {
        AllToAllParams { flow_bytes: default_flow_bytes(), max_concurrent: 0, hosts: None, start_us: 0.0, start_jitter_us: 0.0 }
    }
}

/// The flows.
pub fn generate(p: &AllToAllParams, fabric_hosts: u32, room: super::Room) -> Result<Vec<FlowSpec>> {
    let n = p.hosts.unwrap_or(fabric_hosts);
    if n < 2 || n > fabric_hosts {
        return Err(Error::invalid("workload.hosts", format!("{n}: must be between 2 and {fabric_hosts} (the fabric's hosts)")));
    }
    if p.flow_bytes.0 == 0 {
        return Err(Error::invalid("workload.flow_bytes", "0: flows must carry at least one byte"));
    }
    let start = time_from_us("workload.start_us", p.start_us)?;
    let c = p.max_concurrent;
    let per_host = n - 1;
    let key = if p.hosts.is_some() { "workload.hosts" } else { "topology" };
    room.admit_flows(key, n as u64 * per_host as u64, &format!("{n} hosts × {per_host} peers"))?;
    let mut flows = Vec::with_capacity(n as usize * per_host as usize);
    for h in 0..n {
        for i in 0..per_host {
            let after = (c > 0 && i >= c).then(|| h * per_host + i - c);
            flows.push(FlowSpec { src: NodeId(h), dst: NodeId((h + 1 + i) % n), bytes: Bytes(p.flow_bytes.0), start, after });
        }
    }
    Ok(flows)
}
