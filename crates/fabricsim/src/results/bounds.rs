//! Lower bounds of a run's completion time and of its collectives' CCTs, and the check that
//! no flow, collective or run finished below its own.
//!
//! A run cannot finish before (i) any flow's ideal finish (its planned start plus its ideal
//! FCT, exact on an idle fabric), (ii) any collective instance's start plus its ideal CCT, or
//! (iii) the busiest host link's (or ToR's or pod's uplinks') wire bytes at their rate plus the
//! shortest one-way propagation of the connections crossing it ([`propagation`]: after the last byte
//! crosses the busy link, its ACK still has at least that far to travel back, wherever on the
//! path the busy link lies).

use super::flows::{ConnPlan, FlowResult};
use crate::engine::Sim;
use crate::ids::NodeId;
use crate::transport::Connection;
use crate::units::{BitsPerSec, Bytes, Time};

/// The ideal completion time of `flows` (planned as `flow_plan`; their connections as `plan`),
/// counted from `first_start`.
pub(super) fn ideal_completion(
    sim: &Sim,
    flows: &[FlowResult],
    flow_plan: &[ConnPlan],
    plan: &[ConnPlan],
    ccts: &[super::collectives::CctResult],
    first_start: Time,
) -> Time {
    let flow_bound = flows.iter().map(|f| flow_plan[f.id as usize].due + f.ideal_fct).max().unwrap_or(Time::ZERO);
    // Each host's bytes at its own link's rate (a GPU's scale-up port is faster than its NIC).
    let busiest = host_loads(sim, plan).iter().enumerate().map(|(h, &(o, i))| link_rate(sim, NodeId(h as u32), false).tx_time(Bytes(o.max(i)))).max().unwrap_or(Time::ZERO);
    let (f, pods) = (&sim.net.fabric, sim.net.fabric.pod_of_host());
    let removed = f.removed_ports();
    let (tor_cut, pod_cut) = cut_bound(sim, plan, &pods, |i| if removed[i] { 0 } else { sim.net.ports[i].rate.0 });
    // After the last byte crosses a bottleneck its ACK still has a connection's one-way
    // propagation to travel; for a ToR's or pod's uplinks only connections leaving it count.
    let (mut any, mut cross_tor, mut cross_pod) = (Time::MAX, Time::MAX, Time::MAX);
    for c in &sim.hosts.conns {
        let t = propagation(sim, c);
        any = any.min(t);
        if f.tor_of_host[c.src.idx()] != f.tor_of_host[c.dst.idx()] {
            cross_tor = cross_tor.min(t);
        }
        if pods[c.src.idx()] != pods[c.dst.idx()] {
            cross_pod = cross_pod.min(t);
        }
    }
    let after = |t: Time| if t == Time::MAX { Time::ZERO } else { t };
    let link_bound = first_start
        + (busiest + after(any)).max(tor_cut + after(cross_tor)).max(pod_cut + after(cross_pod));
    // Analytic instances (delays on a scale-up domain) send no packet, and completion_time_us
    // spans the flows only: a step's last TP collective may outlast them (`floors.rs` alike).
    let collective_bound = ccts.iter().filter(|c| !c.instance.is_analytic()).filter_map(|c| c.start.map(|s| s + c.ideal)).max().unwrap_or(Time::ZERO);
    flow_bound.max(link_bound).max(collective_bound) - first_start
}

/// The rate of the link(s) host `h` sends on (`downlink`: receives on): its NIC's port, or
/// where its GPU's NIC sprays packets over its ports all of them whose cable is in place.
pub(super) fn link_rate(sim: &Sim, h: NodeId, downlink: bool) -> BitsPerSec {
    sim.net.fabric.nic_rate(h, downlink, |p| sim.net.ports[p.idx()].rate)
}

/// Wire bytes every host sends and receives under `plan` (the connections' plans).
pub(super) fn host_loads(sim: &Sim, plan: &[ConnPlan]) -> Vec<(u64, u64)> {
    let mut load = vec![(0u64, 0u64); sim.net.fabric.hosts as usize];
    for (c, p) in sim.hosts.conns.iter().zip(plan) {
        let wire = p.wire_bytes(sim.hosts.tp.header);
        load[c.src.idx()].0 += wire;
        load[c.dst.idx()].1 += wire;
    }
    load
}

/// The one-way propagation (switch latencies included) of connection `c`: half of (base RTT −
/// hops × (a full packet's and an ACK's host-rate serialization)). Links faster than the host
/// rate serialize in less than what is subtracted, so this only errs low: every packet of the
/// connection, and every ACK, spends at least this long on the wire.
pub(super) fn propagation(sim: &Sim, c: &Connection) -> Time {
    let tp = sim.hosts.tp;
    let (mtu, ack) = ((tp.mss + tp.header) as u64, tp.ack_bytes as u64);
    let f = &sim.net.fabric;
    let hops = crate::engine::hop_count(f, c.src, c.dst) as u64;
    let rate = sim.net.ports[f.host_port[c.src.idx()].idx()].rate;
    c.base_rtt.saturating_sub(hops * (rate.tx_time(Bytes(mtu)) + rate.tx_time(Bytes(ack)))) / 2
}

/// What bounds one collective instance's completion, from the connections its own messages use
/// (so that its ideal depends on where its ranks are and on nothing else in the run).
#[derive(Clone, Copy, Debug)]
pub(super) struct InstancePaths {
    /// The shortest [`propagation`] of its connections (0 without messages).
    pub one_way: Time,
    /// The slowest and the fastest link its messages leave their senders by (`None` without
    /// messages).
    pub rates: Option<(BitsPerSec, BitsPerSec)>,
    /// Where its senders' links differ in rate (a server's scale-up port beside its NIC): the
    /// longest any sender's link takes to put its share of the messages on the wire, headers
    /// included; for an algorithm whose phases follow one another on every rank (the
    /// hierarchical AllReduce), the longest any rank takes over all its ports, one phase after
    /// the other. `None` where they are all alike, and the bus-bandwidth bytes at that rate
    /// bound it (every rank sends its share of them over its one link).
    pub busiest_sender: Option<Time>,
}

impl InstancePaths {
    /// Whether its senders' links differ in rate.
    fn mixed(&self) -> bool {
        self.rates.is_some_and(|(lo, hi)| lo != hi)
    }
}

/// [`InstancePaths`] of every collective instance. An instance's messages are the sends between
/// its begin marker and the next instance's: the collective builder adds an instance's markers,
/// then all its messages, before the next instance.
pub(super) fn instance_paths(sim: &Sim) -> Vec<InstancePaths> {
    let t = &sim.traffic;
    let begins = t.instance_starts();
    debug_assert!(begins.len() == t.instances.len());
    let conn_prop: Vec<Time> = sim.hosts.conns.iter().map(|c| propagation(sim, c)).collect();
    let f = &sim.net.fabric;
    let sender = |conn: u32| sim.hosts.conns[conn as usize].src;
    let rate_of = |host: NodeId| link_rate(sim, host, false);
    let mut out = vec![InstancePaths { one_way: Time::MAX, rates: None, busiest_sender: None }; t.instances.len()];
    // A training step's point-to-point messages and compute belong to no instance.
    let in_instance = |task: u32| t.step.as_ref().is_none_or(|s| s.roles[task as usize] == crate::workload::graph::Role::Collective);
    let instance_of = |task: u32| if in_instance(task) { begins.partition_point(|&b| b < task).checked_sub(1) } else { None };
    for m in t.messages() {
        // The last begin marker before the message's send task.
        let Some(i) = instance_of(m.task) else { continue };
        let rate = rate_of(sender(m.conn));
        let o = &mut out[i];
        o.one_way = o.one_way.min(conn_prop[m.conn as usize]);
        o.rates = Some(o.rates.map_or((rate, rate), |(lo, hi)| (lo.min(rate), hi.max(rate))));
    }
    // Per sender link, where an instance's links differ: its wire bytes at its rate.
    if out.iter().any(InstancePaths::mixed) {
        let tp = sim.hosts.tp;
        let mut per_sender: std::collections::HashMap<(usize, NodeId), u64> = std::collections::HashMap::new();
        for m in t.messages() {
            let Some(i) = instance_of(m.task).filter(|&i| out[i].mixed()) else { continue };
            let wire = m.bytes.0 + m.bytes.0.div_ceil(tp.mss as u64).max(1) * tp.header as u64;
            *per_sender.entry((i, sender(m.conn))).or_default() += wire;
        }
        // A hierarchical AllReduce's rank sends each phase's ring over one port (the scale-up
        // port inside its group, its NIC across) and starts a phase when it has received the
        // last one's chunks: its ports' times add up. Elsewhere a rank's ports may send at once.
        let phased = |i: usize| t.instances[i].algorithm.starts_with("hier");
        let mut per_rank: std::collections::HashMap<(usize, u32), Time> = std::collections::HashMap::new();
        for ((i, src), bytes) in per_sender {
            let time = rate_of(src).tx_time(Bytes(bytes));
            let time = if phased(i) {
                let sum = per_rank.entry((i, f.rank_of(src))).or_insert(Time::ZERO);
                *sum = *sum + time;
                *sum
            } else {
                time
            };
            out[i].busiest_sender = Some(out[i].busiest_sender.map_or(time, |b| b.max(time)));
        }
    }
    for o in &mut out {
        if o.one_way == Time::MAX {
            o.one_way = Time::ZERO;
        }
    }
    out
}

/// Every flow, collective instance and the run itself that finished faster than physically
/// possible ([`super::floors`]): one message each (at most 20 flows named), for the invariant
/// check. `flow_plan` and `plan` plan the flows and the connections.
#[allow(clippy::too_many_arguments)]
pub(super) fn below_floor(
    fastest: &super::floors::Fastest,
    sim: &Sim,
    flows: &[FlowResult],
    flow_plan: &[ConnPlan],
    plan: &[ConnPlan],
    ccts: &[super::collectives::CctResult],
    first_start: Time,
    completion: Time,
    all_finished: bool,
) -> Vec<String> {
    let mut v = Vec::new();
    let one_way = fastest.min_one_way(sim);
    for f in flows {
        let Some(fct) = f.fct() else { continue };
        let floor = fastest.fct(NodeId(f.src), NodeId(f.dst), &flow_plan[f.id as usize]);
        if fct < floor && v.len() < 20 {
            v.push(format!("flow {} finished in {fct} ps, below the least it can take, {floor} ps (ideal FCT {} ps)", f.id, f.ideal_fct));
        }
    }
    for (i, c) in ccts.iter().enumerate() {
        let floor = fastest.cct(&c.instance, one_way);
        if let Some(cct) = c.cct().filter(|&t| t < floor) {
            v.push(format!("collective instance {i} completed in {cct} ps, below the least it can take, {floor} ps (ideal CCT {} ps)", c.ideal));
        }
    }
    let floor = fastest.completion(sim, flows, flow_plan, plan, ccts, one_way, first_start);
    if all_finished && completion < floor {
        v.push(format!("the run completed in {completion} ps, below the least it can take, {floor} ps"));
    }
    v
}

/// Time to push the traffic that must leave (or enter) each ToR and each pod through its
/// uplinks at their full rate, for the busiest ToR and the busiest pod: oversubscribed fabrics are bound by this
/// rather than by host links.
/// `rate(p)` is the rate port `p` counts with (bits per second; 0 for none).
pub(super) fn cut_bound(sim: &Sim, plan: &[ConnPlan], pods: &[u32], rate: impl Fn(usize) -> u64) -> (Time, Time) {
    use crate::topo::Tier;
    let f = &sim.net.fabric;
    let tp = sim.hosts.tp;
    let n = f.tier.len();
    // Uplink capacity (bits/s) of every ToR and of every pod (its aggregation switches' core
    // links); traffic out of / into every ToR and pod.
    let mut tor_cap = vec![0u64; n];
    let mut pod_cap = vec![0u64; pods.iter().max().map_or(0, |&p| p as usize + 1)];
    let mut pod_of_agg = vec![u32::MAX; n];
    for h in 0..f.hosts as usize {
        for &p in f.ports_of(f.tor_of_host[h]) {
            let peer = f.ports[p.idx()].peer.idx();
            if f.tier[peer] == Tier::Agg {
                pod_of_agg[peer] = pods[h];
            }
        }
    }
    for (i, p) in f.ports.iter().enumerate() {
        let (o, q) = (p.owner.idx(), p.peer.idx());
        let rate = rate(i);
        match (f.tier[o], f.tier[q]) {
            (Tier::Tor, Tier::Agg) => tor_cap[o] += rate,
            (Tier::Agg, Tier::Core) if pod_of_agg[o] != u32::MAX => pod_cap[pod_of_agg[o] as usize] += rate,
            _ => {}
        }
    }
    // A spraying NIC's connection leaves by any of its ports' leaves: those count as one ToR
    // (their uplinks together), their pods as one pod; elsewhere each is its own.
    let mut tor_rep: Vec<usize> = (0..n).collect();
    let mut pod_rep: Vec<usize> = (0..pod_cap.len()).collect();
    if f.sprayed_ports().is_some() {
        for h in 0..f.hosts {
            let first = f.nic_siblings(NodeId(h)).next().unwrap_or(NodeId(h));
            tor_rep[f.tor_of_host[h as usize].idx()] = f.tor_of_host[first.idx()].idx();
            pod_rep[pods[h as usize] as usize] = pods[first.idx()] as usize;
        }
        for (caps, reps) in [(&mut tor_cap, &tor_rep), (&mut pod_cap, &pod_rep)] {
            for (i, &r) in reps.iter().enumerate().filter(|&(i, &r)| i != r) {
                caps[r] += std::mem::take(&mut caps[i]);
            }
        }
    }
    let mut tor_load = vec![(0u64, 0u64); n];
    let mut pod_load = vec![(0u64, 0u64); pod_cap.len()];
    for (c, p) in sim.hosts.conns.iter().zip(plan) {
        let wire = p.wire_bytes(tp.header);
        let (ts, td) = (tor_rep[f.tor_of_host[c.src.idx()].idx()], tor_rep[f.tor_of_host[c.dst.idx()].idx()]);
        if ts != td {
            tor_load[ts].0 += wire;
            tor_load[td].1 += wire;
        }
        let (ps, pd) = (pod_rep[pods[c.src.idx()] as usize], pod_rep[pods[c.dst.idx()] as usize]);
        if ps != pd {
            pod_load[ps].0 += wire;
            pod_load[pd].1 += wire;
        }
    }
    let time = |bytes: u64, bps: u64| if bps == 0 { Time::ZERO } else { crate::units::BitsPerSec(bps).tx_time(Bytes(bytes)) };
    let tors = tor_load.iter().zip(&tor_cap).map(|(&(o, i), &c)| time(o.max(i), c)).max().unwrap_or(Time::ZERO);
    let pods = pod_load.iter().zip(&pod_cap).map(|(&(o, i), &c)| time(o.max(i), c)).max().unwrap_or(Time::ZERO);
    (tors, pods)
}
