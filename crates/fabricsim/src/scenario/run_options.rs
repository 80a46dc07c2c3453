//! `[run]` options: the stop time and stall guard, and what to trace and log (sampling period,
//! traced connections and ports, logged ACKs) and which packets to drop on purpose.
//!
//! Traced ports are named as links, `"NODE-NODE"` (the first node's port towards the second), by
//! port class (`"tor_up"`), or by a glob pattern on either node name (`"tor0-*"`, `"*-spine1"`,
//! `"tor?-agg*"`: `*` any run of characters, `?` one character).

use super::{positive_time, RunConfig};
use crate::error::{Error, Result};
use crate::scheme::{validate_params, Limit};
use crate::topo::names::{example_link, is_glob, ports_matching};
use crate::topo::Fabric;
use crate::units::{Time, MAX_TIME_US};
use crate::workload::time_from_us;

/// Ranges of the numeric `[run]` keys (what `fabricsim list --params` shows). A sampling
/// period under 1 ns would take more samples than packets; flow indices are checked against
/// the workload.
pub const RUN_LIMITS: &[Limit] = &[
    Limit::new("end_time_us", 0.0, MAX_TIME_US),
    Limit::new("stall_limit_us", 0.0, MAX_TIME_US),
    Limit::new("trace_interval_us", 0.001, MAX_TIME_US),
    Limit::new("flowlet_gaps_us", 1e-6, MAX_TIME_US),
];

/// `run.stall_limit_us` when unset: 10 ms of simulated time, or more on fabrics so slow that a
/// timeout and a round trip take longer ([`super::timing::stall_limit`]).
pub const DEFAULT_STALL_LIMIT_US: f64 = 10_000.0;

/// Ranges of the numeric keys of each `run.drop_packets` entry.
pub const DROP_LIMITS: &[Limit] = &[Limit::new("transmission", 1.0, 1e6), Limit::new("hold_us", 1e-6, MAX_TIME_US)];

/// When the run stops on its own.
pub(super) struct Limits {
    /// `run.end_time_us`.
    pub end_time: Option<Time>,
    /// `run.stall_limit_us` as given (0 = off); unset, [`super::timing::stall_limit`] derives it.
    pub stall_limit: Option<Time>,
}

impl Limits {
    /// The limits of `run`.
    pub fn of(run: &RunConfig) -> Result<Limits> {
        validate_params(run, RUN_LIMITS, "run")?;
        for (i, d) in run.drop_packets.iter().enumerate() {
            validate_params(d, DROP_LIMITS, &format!("run.drop_packets[{i}]"))?;
        }
        let end_time = match run.end_time_us {
            Some(us) => Some(time_from_us("run.end_time_us", us)?),
            None => None,
        };
        let stall_limit = run.stall_limit_us.map(|us| time_from_us("run.stall_limit_us", us)).transpose()?;
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
            None => Time::ZERO,
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
            let class = super::queues::PORT_CLASSES.iter().position(|c| c == name);
            // A class or a pattern names a set of ports, in port order, which must not be empty.
            let (set, none): (Vec<u32>, _) = match class {
                Some(class) => {
                    let set = (0..fabric.ports.len()).filter(|&p| super::queues::port_class(fabric, p) == Some(class)).map(|p| p as u32).collect();
                    (set, "this fabric has no such ports".to_string())
                }
                None if is_glob(name) => {
                    (ports_matching(fabric, name).collect(), format!("the pattern matches no port of this fabric (links are named NODE-NODE, e.g. \"{}\")", example_link(fabric)))
                }
                None => (vec![(fabric.port_named(&key, name, name, "tor0-host3")?.0).0], String::new()),
            };
            if set.is_empty() {
                return Err(Error::invalid(key, format!("`{name}`: {none}")));
            }
            ports.extend(set);
        }
        // A port named twice (or by a class and by name) is sampled once.
        let mut seen = std::collections::HashSet::new();
        ports.retain(|p| seen.insert(*p));
        check_flows("run.ack_log_conns", &run.ack_log_conns, n_conns)?;
        check_flows("run.packet_log_conns", &run.packet_log_conns, n_conns)?;
        for (i, d) in run.drop_packets.iter().enumerate() {
            check_flows(&format!("run.drop_packets[{i}].flow"), &[d.flow], n_conns)?;
            if let Some(h) = d.hold_us {
                positive_time(&format!("run.drop_packets[{i}].hold_us"), h, "how long the first switch holds the packet")?;
            }
        }
        if !ports.is_empty() && interval == Time::ZERO {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PortId;
    use crate::topo::names::ports_matching;
    use crate::topo::{leaf_spine, TierLinks};
    use crate::units::{BitsPerSec, US};

    /// 2 ToRs × 2 hosts, 2 spines.
    fn fabric() -> Fabric {
        let l = (BitsPerSec::from_gbps(100.0), US);
        let shape = leaf_spine::Shape { tors: 2, hosts_per_tor: 2, spines: 2, links_per_spine: 1 };
        leaf_spine::build_shape(shape, TierLinks { host: l, tor_up: l, agg_up: l }, &[], Time::ZERO).unwrap()
    }

    fn names(f: &Fabric, pattern: &str) -> Vec<String> {
        ports_matching(f, pattern).map(|p| f.link_name(PortId(p))).collect()
    }

    #[test]
    fn patterns_select_ports_node_by_node() {
        let f = fabric();
        assert_eq!(names(&f, "tor0-*"), ["tor0-host0", "tor0-host1", "tor0-spine0", "tor0-spine1"]);
        assert_eq!(names(&f, "*-spine1"), ["tor0-spine1", "tor1-spine1"]);
        assert_eq!(names(&f, "tor?-spine*"), ["tor0-spine0", "tor0-spine1", "tor1-spine0", "tor1-spine1"]);
        assert_eq!(names(&f, "spine*-tor1"), ["spine0-tor1", "spine1-tor1"]);
        assert!(names(&f, "tor9-*").is_empty());
        assert!(names(&f, "tor*").is_empty(), "no dash: not a link");
        assert_eq!(example_link(&f), "tor0-spine0");
    }
}
