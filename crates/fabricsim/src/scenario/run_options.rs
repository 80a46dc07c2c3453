//! `[run]` options: the stop time and stall guard, and what to trace and log (sampling period,
//! traced connections and ports, logged ACKs) and which packets to drop on purpose.

use super::{positive_time, RunConfig};
use crate::error::{Error, Result};
use crate::topo::Fabric;
use crate::units::Time;
use crate::workload::time_from_us;

/// When the run stops on its own.
pub(super) struct Limits {
    /// `run.end_time_us`.
    pub end_time: Option<Time>,
    /// `run.stall_limit_us` (default 10 ms); 0 = off.
    pub stall_limit: Time,
}

impl Limits {
    /// The limits of `run`.
    pub fn of(run: &RunConfig) -> Result<Limits> {
        let end_time = match run.end_time_us {
            Some(us) => Some(time_from_us("run.end_time_us", us)?),
            None => None,
        };
        let stall_limit = time_from_us("run.stall_limit_us", run.stall_limit_us.unwrap_or(10_000.0))?;
        Ok(Limits { end_time, stall_limit })
    }
}

/// What to sample.
pub(super) struct Tracing {
    /// Sampling period (0 = off).
    pub interval: Time,
    /// Traced connections.
    pub conns: Vec<u32>,
    /// Traced ports.
    pub ports: Vec<u32>,
    /// Flowlet gaps θ (empty: off).
    pub flowlet_gaps: Vec<Time>,
}

impl Tracing {
    /// The tracing of `run` on `fabric` with a workload of `n_conns` connections; also checks
    /// the flows of `ack_log_conns` and `drop_packets`.
    pub fn of(run: &RunConfig, fabric: &Fabric, n_conns: u32) -> Result<Tracing> {
        let interval = match run.trace_interval_us {
            Some(us) => positive_time("run.trace_interval_us", us, "the sampling period")?,
            None => 0,
        };
        let conns = match &run.trace_conns {
            Some(v) => {
                check_flows("run.trace_conns", v, n_conns)?;
                v.clone()
            }
            None => (0..n_conns.min(16)).collect(),
        };
        let mut ports = Vec::new();
        for (i, name) in run.trace_ports.iter().enumerate() {
            let key = format!("run.trace_ports[{i}]");
            match super::queues::PORT_CLASSES.iter().position(|c| c == name) {
                // A port class: every switch port of it, in port order.
                Some(class) => {
                    let before = ports.len();
                    ports.extend((0..fabric.ports.len()).filter(|&p| super::queues::port_class(fabric, p) == Some(class)).map(|p| p as u32));
                    if ports.len() == before {
                        return Err(Error::invalid(key, format!("`{name}`: this fabric has no such ports")));
                    }
                }
                None => ports.push(fabric.port_named(&key, name, name, "tor0-host3")?.0),
            }
        }
        // A port named twice (or by a class and by name) is sampled once.
        let mut seen = std::collections::HashSet::new();
        ports.retain(|p| seen.insert(*p));
        check_flows("run.ack_log_conns", &run.ack_log_conns, n_conns)?;
        for (i, d) in run.drop_packets.iter().enumerate() {
            check_flows(&format!("run.drop_packets[{i}].flow"), &[d.flow], n_conns)?;
            if d.transmission == 0 {
                return Err(Error::invalid(format!("run.drop_packets[{i}].transmission"), "0: transmissions count from 1 (the original)"));
            }
            if let Some(h) = d.hold_us {
                positive_time(&format!("run.drop_packets[{i}].hold_us"), h, "how long the first switch holds the packet")?;
            }
        }
        if !ports.is_empty() && interval == 0 {
            return Err(Error::invalid("run.trace_ports", "tracing ports needs run.trace_interval_us (the sampling period)"));
        }
        let flowlet_gaps = (run.flowlet_gaps_us.iter().enumerate())
            .map(|(i, &us)| positive_time(&format!("run.flowlet_gaps_us[{i}]"), us, "a flowlet gap θ"))
            .collect::<Result<Vec<_>>>()?;
        Ok(Tracing { interval, conns, ports, flowlet_gaps })
    }
}

/// Refuses the first of `flows` that the workload (`n_conns` connections) lacks.
fn check_flows(key: &str, flows: &[u32], n_conns: u32) -> Result<()> {
    match flows.iter().find(|&&c| c >= n_conns) {
        Some(&bad) => Err(Error::invalid(key, format!("flow {bad} does not exist: the workload has flows 0..{}", n_conns.saturating_sub(1)))),
        None => Ok(()),
    }
}
