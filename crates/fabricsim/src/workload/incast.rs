//! `incast`: N senders each send one flow to a single receiver at the same time, the N:1
//! pattern of the STrack (strack spec §5.3.2) and SMaRTT-REPS incast experiments. The last
//! flow cannot finish before N·size/rate at the receiver's link.

use super::{default_flow_bytes, time_from_us, FlowSpec};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::rng::Rng;
use crate::units::{ByteSize, Bytes};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "incast";
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &["workload={ kind = \"incast\", senders = 16, flow_bytes = \"256KiB\" }"];
/// Registry summary.
pub const SUMMARY: &str = "N senders (random or listed) send one flow each to one receiver";

/// Senders when neither `senders` nor `sender_hosts` is given.
const DEFAULT_SENDERS: u32 = 8;

/// Parameters of `incast`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IncastParams {
    /// Number of senders (default 8); not together with `sender_hosts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// The receiving host.
    pub receiver: u32,
    /// Explicit sender hosts; otherwise `senders` distinct random hosts other than the receiver.
    pub sender_hosts: Option<Vec<u32>>,
    /// Bytes per flow.
    #[serde(default = "default_flow_bytes")]
    pub flow_bytes: ByteSize,
    /// Start time of every flow.
    pub start_us: f64,
    /// Each flow starts up to this much later, uniformly at random.
    pub start_jitter_us: f64,
}

impl Default for IncastParams {
    fn default() -> Self {
        IncastParams {
            senders: None,
            receiver: 0,
            sender_hosts: None,
            flow_bytes: default_flow_bytes(),
            start_us: 0.0,
            start_jitter_us: 0.0,
        }
    }
}

/// The flows.
pub fn generate(p: &IncastParams, hosts: u32, rng: &mut Rng) -> Result<Vec<FlowSpec>> {
    if p.receiver >= hosts {
        return Err(Error::invalid("workload.receiver", format!("host {} does not exist: the fabric has hosts 0..{}", p.receiver, hosts - 1)));
    }
    if p.flow_bytes.0 == 0 {
        return Err(Error::invalid("workload.flow_bytes", "0: flows must carry at least one byte"));
    }
    let start = time_from_us("workload.start_us", p.start_us)?;
    let senders: Vec<u32> = match &p.sender_hosts {
        Some(_) if p.senders.is_some() => {
            return Err(Error::invalid("workload.senders", "give either `senders` (a count of random hosts) or `sender_hosts` (the hosts), not both"))
        }
        Some(list) => {
            for &s in list {
                super::check_endpoints("workload.sender_hosts", s as u64, p.receiver as u64, hosts)?;
            }
            list.clone()
        }
        None => {
            let n = p.senders.unwrap_or(DEFAULT_SENDERS);
            if n == 0 || n >= hosts {
                return Err(Error::invalid("workload.senders", format!("{n}: must be between 1 and {} (hosts other than the receiver)", hosts - 1)));
            }
            let mut others: Vec<u32> = (0..hosts).filter(|&h| h != p.receiver).collect();
            rng.shuffle(&mut others);
            others.truncate(n as usize);
            others.sort_unstable();
            others
        }
    };
    Ok(senders.into_iter().map(|s| FlowSpec { src: NodeId(s), dst: NodeId(p.receiver), bytes: Bytes(p.flow_bytes.0), start, after: None }).collect())
}
