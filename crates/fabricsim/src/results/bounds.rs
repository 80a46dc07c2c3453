//! Lower bound of a run's completion time: the latest per-flow ideal finish, or the busiest
//! host link's (or ToR's or pod's uplinks') bytes at line rate plus the longest base RTT.

use super::flows::{ConnPlan, FlowResult};
use crate::engine::Sim;
use crate::scenario::Setup;
use crate::units::Time;

/// The ideal completion time of `flows` (planned as `flow_plan`; their connections as `plan`),
/// counted from `first_start`.
pub(super) fn ideal_completion(sim: &Sim, setup: &Setup, flows: &[FlowResult], flow_plan: &[ConnPlan], plan: &[ConnPlan], first_start: Time) -> Time {
    let tp = sim.hosts.tp;
    let flow_bound = flows.iter().map(|f| flow_plan[f.id as usize].due + f.ideal_fct).max().unwrap_or(0);
    let mut host_load = vec![(0u64, 0u64); sim.net.fabric.hosts as usize];
    for (c, p) in sim.hosts.conns.iter().zip(plan) {
        let wire = p.wire_bytes(tp.header);
        host_load[c.src as usize].0 += wire;
        host_load[c.dst as usize].1 += wire;
    }
    let busiest = host_load.iter().map(|&(o, i)| o.max(i)).max().unwrap_or(0);
    let host_rate = sim.net.ports[sim.net.fabric.host_port[0] as usize].rate;
    let cut = cut_bound(sim, plan);
    let link_bound = first_start + host_rate.tx_time(busiest).max(cut) + setup.base_rtt;
    flow_bound.max(link_bound) - first_start
}

/// Time to push the traffic that must leave (or enter) each ToR and each pod through its
/// uplinks at their full rate, for the busiest one: oversubscribed fabrics are bound by this
/// rather than by host links.
fn cut_bound(sim: &Sim, plan: &[ConnPlan]) -> Time {
    use crate::topo::Tier;
    let f = &sim.net.fabric;
    let pods = f.pod_of_host();
    let tp = sim.hosts.tp;
    let n = f.tier.len();
    // Uplink capacity (bits/s) of every ToR and of every pod (its aggregation switches' core
    // links); traffic out of / into every ToR and pod.
    let mut tor_cap = vec![0u64; n];
    let mut pod_cap = vec![0u64; pods.iter().max().map_or(0, |&p| p as usize + 1)];
    let mut pod_of_agg = vec![u32::MAX; n];
    for h in 0..f.hosts as usize {
        for &p in f.ports_of(f.tor_of_host[h]) {
            let peer = f.ports[p as usize].peer as usize;
            if f.tier[peer] == Tier::Agg {
                pod_of_agg[peer] = pods[h];
            }
        }
    }
    let removed = f.removed_ports();
    for (i, p) in f.ports.iter().enumerate() {
        let (o, q) = (p.owner as usize, p.peer as usize);
        let rate = if removed[i] { 0 } else { sim.net.ports[i].rate.0 };
        match (f.tier[o], f.tier[q]) {
            (Tier::Tor, Tier::Agg) => tor_cap[o] += rate,
            (Tier::Agg, Tier::Core) if pod_of_agg[o] != u32::MAX => pod_cap[pod_of_agg[o] as usize] += rate,
            _ => {}
        }
    }
    let mut tor_load = vec![(0u64, 0u64); n];
    let mut pod_load = vec![(0u64, 0u64); pod_cap.len()];
    for (c, p) in sim.hosts.conns.iter().zip(plan) {
        let wire = p.wire_bytes(tp.header);
        let (ts, td) = (f.tor_of_host[c.src as usize] as usize, f.tor_of_host[c.dst as usize] as usize);
        if ts != td {
            tor_load[ts].0 += wire;
            tor_load[td].1 += wire;
        }
        let (ps, pd) = (pods[c.src as usize] as usize, pods[c.dst as usize] as usize);
        if ps != pd {
            pod_load[ps].0 += wire;
            pod_load[pd].1 += wire;
        }
    }
    let time = |bytes: u64, bps: u64| if bps == 0 { 0 } else { crate::units::BitsPerSec(bps).tx_time(bytes) };
    let tors = tor_load.iter().zip(&tor_cap).map(|(&(o, i), &c)| time(o.max(i), c));
    let pods = pod_load.iter().zip(&pod_cap).map(|(&(o, i), &c)| time(o.max(i), c));
    tors.chain(pods).max().unwrap_or(0)
}
