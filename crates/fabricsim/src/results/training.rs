//! The figures of a training step (`summary.json`'s `training`): each iteration's time beside
//! two lower bounds computed on the step's own dependency graph, and the bytes and collective
//! completion times of each parallelism group kind.
//!
//! Both bounds are longest paths through the graph ([`Traffic::longest_paths`]): the *compute
//! ideal* with every message and collective free (an infinitely fast network: what the GPUs'
//! kernels alone take along the schedule's critical path, pipeline bubbles included), the
//! *network ideal* with each collective taking its ideal CCT (`ccts.csv`'s `ideal_cct_us`) and
//! each point-to-point message its wire bytes at its sender's NIC rate plus the one-way
//! propagation of its connection. Neither moves with other traffic; the network ideal holds
//! each transfer to its own lower bound, so a step slower than it lost time to contention,
//! congestion control or loss recovery.

use super::{us, CctResult};
use crate::engine::Sim;
use crate::units::{Bytes, Time};
use crate::workload::graph::{group_index, Role, StepMap, TaskKind, Traffic, Trigger, GROUP_KINDS};
use serde::Serialize;

/// `summary.json`'s `training`.
#[derive(Clone, Debug, Serialize)]
pub struct TrainingSummary {
    /// One row per iteration.
    pub iterations: Vec<IterationFigures>,
    /// Per group kind that communicated: its bytes and collectives.
    pub groups: Vec<GroupFigures>,
}

/// One iteration of the step.
#[derive(Clone, Debug, Serialize)]
pub struct IterationFigures {
    /// Iteration index.
    pub iteration: u32,
    /// From the previous iteration's end (or the start) to the last GPU finishing this one
    /// (µs); `None` if it did not finish.
    pub time_us: Option<f64>,
    /// The same with an infinitely fast network (µs): the compute critical path.
    pub compute_ideal_us: f64,
    /// The same with every collective at its ideal CCT and every message at its NIC rate (µs).
    pub network_ideal_us: f64,
    /// `time_us` / `network_ideal_us`.
    pub slowdown: Option<f64>,
    /// Where the iteration's time went along its critical path (`None` if it did not finish).
    pub critical_path: Option<CriticalPath>,
}

/// An iteration's critical path, walked back from its last GPU's end through the dependency
/// that came last at each task: its time split into compute, each group kind's communication
/// (collectives from start to end, point-to-point messages from posting to arrival) and waits
/// (a task held to a not-before time). The parts add up to the iteration's time; a group
/// kind's part is its *exposed* communication: what no compute hid.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CriticalPath {
    /// Compute kernels on the path (µs).
    pub compute_us: f64,
    /// TP communication on the path (µs).
    pub tp_us: f64,
    /// PP communication on the path (µs).
    pub pp_us: f64,
    /// DP communication on the path (µs).
    pub dp_us: f64,
    /// EP communication on the path (µs).
    pub ep_us: f64,
    /// Communication no group kind labels (a Chakra trace's) on the path (µs).
    pub other_us: f64,
    /// Other waits on the path (µs).
    pub wait_us: f64,
}

impl CriticalPath {
    fn add(&mut self, group: &str, t: Time) {
        let x = us(t);
        match group {
            "compute" => self.compute_us += x,
            "tp" => self.tp_us += x,
            "pp" => self.pp_us += x,
            "dp" => self.dp_us += x,
            "ep" => self.ep_us += x,
            "other" => self.other_us += x,
            _ => self.wait_us += x,
        }
    }
}

/// When task `t`'s edges that wait for `on` fired in the run: a send's delivery or completion,
/// any other task's firing.
fn event(sim: &Sim, t: u32, on: Trigger) -> Time {
    match (sim.traffic.tasks[t as usize].kind(), on) {
        (TaskKind::Send { .. }, Trigger::Delivered) => sim.tasks.delivered_at[t as usize],
        (TaskKind::Send { .. }, Trigger::Completed) => sim.tasks.completed_at[t as usize],
        _ => sim.tasks.fired_at(t as usize),
    }
}

/// Per task, the input that readied it last in the run (source task and that input's time,
/// its event plus the edge's delay); `u32::MAX` for tasks without inputs. One pass over the
/// edges, first input kept on ties.
fn binding_inputs(sim: &Sim) -> Vec<(u32, Time)> {
    let t = &sim.traffic;
    let mut best = vec![(u32::MAX, Time::ZERO); t.tasks.len()];
    for s in 0..t.tasks.len() as u32 {
        for e in t.edges_of(s) {
            let at = event(sim, s, e.on);
            if at == Time::MAX {
                continue;
            }
            let b = &mut best[e.to as usize];
            if b.0 == u32::MAX || at + e.delay > b.1 {
                *b = (s, at + e.delay);
            }
        }
    }
    best
}

/// The critical path of the iteration ending at task `end`, back to time `floor` (the previous
/// iteration's end; zero for the first): each span on it counts above `floor` only.
fn critical_path(sim: &Sim, step: &StepMap, best: &[(u32, Time)], begin_of: &[u32], end: u32, floor: Time) -> CriticalPath {
    let t = &sim.traffic;
    let mut out = CriticalPath::default();
    // Spans from `lo` to `hi`, clipped at the floor.
    let mut span = |group: &str, lo: Time, hi: Time| out.add(group, hi.saturating_sub(lo.max(floor)));
    let mut cur = end;
    let mut at = sim.tasks.fired_at(end as usize);
    while at > floor {
        let task = cur as usize;
        // A collective: its whole span, then on from its start marker.
        if let (Role::Collective, TaskKind::End(i)) = (step.roles[task], t.tasks[task].kind()) {
            let begin = begin_of[i as usize];
            let start = sim.tasks.fired_at(begin as usize);
            span(t.instances[i as usize].group, start, at);
            (cur, at) = (begin, start);
            continue;
        }
        let (src, ready) = best[task];
        if src == u32::MAX {
            // A task without inputs: it waited for its not-before time from the start.
            span("", Time::ZERO, at);
            break;
        }
        // From the input's time to this task firing: held to a not-before time.
        span("", ready, at);
        // The edge's delay: a compute kernel's duration.
        let edge = t.edges_of(src).filter(|e| e.to == cur).map(|e| (event(sim, src, e.on), e)).max_by_key(|(x, e)| *x + e.delay).expect("the binding edge");
        span(if step.roles[task] == Role::Compute { "compute" } else { "" }, edge.0, ready);
        at = edge.0;
        // A point-to-point message: from its posting to the event its dependant waited for.
        let s = src as usize;
        if let (Role::Message(k), TaskKind::Send { .. }) = (step.roles[s], t.tasks[s].kind()) {
            let posted = sim.tasks.fired_at(s);
            span(GROUP_KINDS[k as usize], posted, at);
            at = posted;
        }
        cur = src;
    }
    out
}

/// The communication of one group kind over the whole run.
#[derive(Clone, Debug, Serialize)]
pub struct GroupFigures {
    /// `tp`, `pp`, `dp`, `ep` or `other`.
    pub group: &'static str,
    /// Payload bytes its messages carried, collectives' and point-to-point.
    pub bytes: u64,
    /// Its collective instances.
    pub collectives: u32,
    /// Their summed CCT (µs).
    pub cct_sum_us: f64,
    /// Their summed ideal CCT (µs).
    pub ideal_sum_us: f64,
}

/// The figures of `sim`'s training step, if its workload is one.
pub(super) fn summary(sim: &Sim, ccts: &[CctResult]) -> Option<TrainingSummary> {
    let t: &Traffic = &sim.traffic;
    let step = t.step.as_ref()?;
    let compute = t.longest_paths(|_| Time::ZERO);
    let tp = sim.hosts.tp;
    let wire = |b: u64| b + b.div_ceil(tp.mss as u64).max(1) * tp.header as u64;
    let network = t.longest_paths(|task| match (step.roles[task as usize], t.tasks[task as usize].kind()) {
        (Role::Collective, TaskKind::End(i)) => ccts[i as usize].ideal,
        (Role::Message(_), TaskKind::Send { bytes, .. }) => {
            let conn = t.send_conn(task);
            let c = &sim.hosts.conns[conn as usize];
            super::bounds::link_rate(sim, c.src, false).tx_time(Bytes(wire(bytes))) + super::bounds::propagation(sim, c)
        }
        _ => Time::ZERO,
    });
    let best = binding_inputs(sim);
    let begin_of = t.instance_starts();
    let mut iterations = Vec::with_capacity(step.iteration_ends.len());
    let (mut run_prev, mut compute_prev, mut network_prev) = (Some(Time::ZERO), Time::ZERO, Time::ZERO);
    for (i, &end) in step.iteration_ends.iter().enumerate() {
        let fired = sim.tasks.fired_at(end as usize);
        let run = (fired != Time::MAX).then_some(fired);
        let time = run.zip(run_prev).map(|(e, s)| e - s);
        let (c, n) = (compute[end as usize], network[end as usize]);
        let network_ideal = n - network_prev;
        iterations.push(IterationFigures {
            iteration: i as u32,
            time_us: time.map(us),
            compute_ideal_us: us(c - compute_prev),
            network_ideal_us: us(network_ideal),
            slowdown: time.map(|x| x.0 as f64 / network_ideal.max(Time(1)).0 as f64),
            critical_path: run.zip(run_prev).map(|(_, floor)| critical_path(sim, step, &best, &begin_of, end, floor)),
        });
        (run_prev, compute_prev, network_prev) = (run, c, n);
    }
    let mut groups: Vec<GroupFigures> = GROUP_KINDS.iter().map(|&group| GroupFigures { group, bytes: 0, collectives: 0, cct_sum_us: 0.0, ideal_sum_us: 0.0 }).collect();
    for c in ccts {
        if let Some(g) = group_index(c.instance.group).map(|k| &mut groups[k]) {
            // An analytic instance moves no packets: its ranks' bus bytes count.
            if c.instance.is_analytic() {
                g.bytes += c.instance.bus_bytes.0 * c.instance.ranks as u64;
            }
            g.collectives += 1;
            g.cct_sum_us += c.cct().map_or(0.0, us);
            g.ideal_sum_us += us(c.ideal);
        }
    }
    // Bytes: a collective's messages count for its instance's group, a message for its own.
    for (task, k) in t.step_sends() {
        if let TaskKind::Send { bytes, .. } = t.tasks[task as usize].kind() {
            groups[k].bytes += bytes;
        }
    }
    groups.retain(|g| g.bytes > 0 || g.collectives > 0);
    Some(TrainingSummary { iterations, groups })
}

/// What `fabricsim check` shows of a step beyond its shape: per iteration its compute ideal
/// (the longest path of compute delays through the step's graph), and per group kind the
/// payload bytes its busiest port sends per iteration and the time they take at that port's
/// rate (a GPU's NIC, or its scale-up port for traffic inside its server; an analytic
/// collective's bytes at the scale-up rate): what the group's communication costs at the least.
pub fn check_lines(t: &Traffic, fabric: &crate::topo::Fabric) -> Vec<String> {
    let Some(step) = t.step.as_ref() else { return Vec::new() };
    let compute = t.longest_paths(|_| Time::ZERO);
    let mut out = Vec::new();
    let mut prev = Time::ZERO;
    let mut ideals = Vec::new();
    for &e in &step.iteration_ends {
        ideals.push(format!("{:.3}", us(compute[e as usize] - prev)));
        prev = compute[e as usize];
    }
    out.push(format!("compute ideal {} µs per iteration (the compute critical path: what an infinitely fast network leaves)", ideals.join(", ")));
    let iterations = step.iteration_ends.len().max(1) as u64;
    let rate_of = |host: crate::ids::NodeId| fabric.ports[fabric.host_port[host.idx()].idx()].rate;
    // Per group kind, per sending port: bytes and their time at its rate.
    let mut sent: Vec<std::collections::HashMap<u64, (u64, Time)>> = vec![Default::default(); GROUP_KINDS.len()];
    if let Some(up) = fabric.servers.and_then(|s| s.scale_up) {
        for inst in t.instances.iter().filter(|i| i.is_analytic()) {
            let Some(k) = group_index(inst.group) else { continue };
            // Analytic: every rank sends its bus bytes over its scale-up port (counted for the
            // group's first GPU: its ranks all send alike).
            let e = sent[k].entry(u64::MAX - inst.first_host as u64).or_default();
            e.0 += inst.bus_bytes.0;
            e.1 += up.rate.tx_time(inst.bus_bytes);
        }
    }
    for (task, k) in t.step_sends() {
        for m in t.messages_of(task) {
            let msg = t.message(m);
            // (The setup's graph names the sending port: a GPU's NIC, or its scale-up port.)
            let port = t.conns[msg.conn as usize].src;
            let e = sent[k].entry(port.0 as u64).or_default();
            e.0 += msg.bytes.0;
            e.1 += rate_of(port).tx_time(msg.bytes);
        }
    }
    for (k, per_port) in sent.iter().enumerate() {
        let Some(&(bytes, time)) = per_port.values().max_by_key(|v| v.1) else { continue };
        out.push(format!("              {}: up to {} bytes per GPU per iteration, {:.3} µs at its link's rate", GROUP_KINDS[k], bytes / iterations, us(time) / iterations as f64));
    }
    out
}
