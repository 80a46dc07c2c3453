//! The simulation context and its event loop.
//!
//! [`Sim`] owns every piece of state in flat arrays (ports, hosts, connections, the packet
//! pool) and one event queue. The loop pops the earliest event and dispatches on its kind with
//! a `match`; each element's handlers are `impl Sim` blocks under `glue` (`glue/port.rs`,
//! `glue/switch.rs`, `glue/nic.rs`, `glue/pfc.rs`, `glue/sender.rs`, `glue/receiver.rs`,
//! `glue/credit.rs`), while the elements' state and pure logic live in [`crate::net`] and
//! [`crate::transport`], which know nothing of `Sim`. There is no global state: two `Sim`s can
//! run side by side.

mod glue;
pub mod queue;
mod reroute;
pub mod tasks;
pub mod trace;

use crate::error::Result;
pub use crate::hint::prefetch;
use crate::ids::NodeId;
use crate::net::nic::HostState;
use crate::net::packet::{PacketPool, PerKind};
use crate::net::port::PortState;
use crate::net::qdisc::QdiscTable;
use crate::rng::Rng;
use crate::scenario::{LinkAction, LinkEvent, Setup};
use crate::topo::Fabric;
use crate::transport::cc::PathInfo;
use crate::transport::Connection;
use crate::units::Time;
use crate::workload::graph::Traffic;
use std::sync::Arc;
use tasks::{Lane, TaskState};
use trace::{RttHistogram, Tracer};
use queue::{EventKind, EventQueue};
use std::collections::HashMap;

/// Transport constants shared by every connection of a run.
#[derive(Clone, Copy, Debug)]
pub struct TransportParams {
    /// Payload bytes of a full packet.
    pub mss: u32,
    /// Header bytes.
    pub header: u32,
    /// ACK/NACK wire size.
    pub ack_bytes: u32,
    /// ACK coalescing factor.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto: Time,
    /// Whether data packets are ECN-capable.
    pub ect: bool,
    /// DCQCN notification point: at most one CNP per connection per this interval (`None` =
    /// receivers send no CNPs).
    pub cnp_interval: Option<Time>,
}

/// Packet and event counters of a run. Per-kind counts come from the kind table
/// (`net/packet.rs`): a new packet kind is counted, reported and checked without an edit here.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Events processed.
    pub events: u64,
    /// Packets put on a link (every packet, every hop).
    pub packet_hops: u64,
    /// Packets a host put on its link, per kind (data: first transmissions and retransmissions).
    pub sent: PerKind,
    /// Packets that reached the host they were addressed to, per kind (data: including trimmed
    /// headers).
    pub arrived: PerKind,
    /// Packets discarded anywhere, per kind (a dead link, a full buffer, a planned drop; data:
    /// including trimmed headers).
    pub dropped: PerKind,
    /// Data packets that were retransmissions.
    pub data_retransmitted: u64,
    /// Data packets trimmed to headers.
    pub data_trimmed: u64,
    /// Of the dropped data packets, those that were trimmed headers.
    pub headers_dropped: u64,
    /// Data packets marked CE.
    pub ecn_marked: u64,
    /// Retransmission timeouts that declared packets lost.
    pub timeouts: u64,
    /// Data packets dropped for lack of buffer (tail drop; PFC headroom overflow).
    pub buffer_drops: u64,
    /// Recoveries started by the out-of-order count (STrack).
    pub ooo_recoveries: u64,
    /// Recoveries started by a probe answer (STrack).
    pub probe_recoveries: u64,
}

/// Progress of a running simulation, handed to the progress callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time.
    pub now: Time,
    /// Events so far.
    pub events: u64,
    /// Messages completed (a flow is one message).
    pub messages_done: u32,
    /// All messages.
    pub messages: u32,
    /// Fraction of all payload acknowledged.
    pub fraction: f64,
}

/// The simulation.
pub struct Sim {
    /// Current simulated time.
    pub now: Time,
    pub(crate) q: EventQueue,
    pub(crate) pool: PacketPool,
    pub(crate) fabric: Fabric,
    pub(crate) ports: Vec<PortState>,
    /// Far-end node of each port (a compact copy of `fabric.ports[p].peer` for the hot path).
    pub(crate) port_peer: Vec<NodeId>,
    /// Path selector of each switch (switch `s` is node `hosts + s`).
    pub(crate) switch_lb: Vec<crate::net::switch_lb::AnySwitchLb>,
    /// Random stream of each switch's selector (`"switch_lb"`).
    pub(crate) switch_rng: Vec<Rng>,
    pub(crate) hosts: Vec<HostState>,
    pub(crate) conns: Vec<Connection>,
    /// The workload's graph of messages and dependencies (read-only).
    pub(crate) traffic: Arc<Traffic>,
    /// Run-time state of that graph.
    pub(crate) tasks: TaskState,
    /// Per-connection pending messages and gates.
    pub(crate) lanes: Vec<Lane>,
    total_sends: u32,
    /// Whether senders need receiver credits (EQDS).
    pub(crate) credit_on: bool,
    /// Per-connection credit state.
    pub(crate) credit: Vec<crate::transport::credit::CreditState>,
    /// Per-host pull pacers.
    pub(crate) pacers: Vec<crate::transport::credit::PullPacer>,
    /// Sampled time series (`run.trace_interval_us`).
    pub(crate) tracer: Tracer,
    /// ACK round-trip samples.
    pub(crate) rtt_hist: RttHistogram,
    pub(crate) tp: TransportParams,
    /// PFC buffer accounting (off unless `switch.pfc.enabled`).
    pub(crate) pfc: crate::net::pfc::PfcState,
    /// Queue profiles; each port holds its index (`PortState::qdisc`).
    pub(crate) qdisc: QdiscTable,
    pub(crate) c: Counters,
    pub(crate) link_events: Vec<LinkEvent>,
    pub(crate) acked_bytes_total: u64,
    total_bytes: u64,
    end_time: Option<Time>,
    /// Livelock guard: payload acknowledged at the last check, when that figure last grew,
    /// the limit, and the stalled interval once the guard fired.
    stall_acked: u64,
    stall_since: Time,
    stall_limit: Time,
    pub(crate) stalled: Option<(Time, Time)>,
    pub(crate) path_rtt: Vec<Time>,
    pub(crate) stopped_early: bool,
    /// `run.drop_packets`: (flow, seq, transmission to lose, transmissions seen so far).
    pub(crate) drop_plan: Vec<(u32, u32, u32, u32)>,
}

impl Sim {
    /// Builds the simulation of a validated scenario.
    pub fn new(setup: &Setup) -> Result<Sim> {
        let fabric = setup.fabric.clone();
        let seed = setup.scenario.seed;
        let tr = &setup.scenario.transport;
        let tp = TransportParams {
            mss: tr.mtu_bytes - tr.header_bytes,
            header: tr.header_bytes,
            ack_bytes: tr.ack_bytes,
            ack_every: tr.ack_every,
            rto: setup.rto,
            ect: tr.ecn_capable,
            cnp_interval: tr.cc.cnp_interval(),
        };
        let mut ports: Vec<PortState> = fabric
            .ports
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let to_switch = spec.peer >= fabric.hosts;
                let is_nic = spec.owner < fabric.hosts;
                PortState::new(spec, is_nic, to_switch, fabric.switch_latency, Rng::stream(seed, "port", i as u64))
            })
            .collect();
        crate::net::port::apply_failures(&fabric, &mut ports);
        for (ps, &q) in ports.iter_mut().zip(&setup.qdisc.port_profile) {
            ps.qdisc = q;
        }
        let fabric_peers: Vec<NodeId> = fabric.ports.iter().map(|p| p.peer).collect();
        let switch_lb = setup.scenario.switch.lb.build(&fabric, seed)?;
        let switch_rng = (0..fabric.switches()).map(|s| Rng::stream(seed, "switch_lb", s as u64)).collect();
        let hosts = (0..fabric.hosts).map(|h| HostState::new(fabric.host_port[h as usize])).collect();

        // Base RTT per (hop count, last-packet size) is the same for every path of a tier-
        // symmetric fabric: compute once per hop count.
        let mut rtt_by_hops: HashMap<usize, Time> = HashMap::new();
        let traffic = Arc::clone(&setup.traffic);
        let mut conns = Vec::with_capacity(traffic.conns.len());
        let mut path_rtt = Vec::with_capacity(traffic.conns.len());
        let mut credit = Vec::with_capacity(traffic.conns.len());
        let mtu = (tp.mss + tp.header) as u64;
        for (i, f) in traffic.conns.iter().enumerate() {
            let hops = hop_count(&fabric, f.src, f.dst);
            let rtt = *rtt_by_hops.entry(hops).or_insert_with(|| fabric.base_rtt(f.src, f.dst, mtu, tp.ack_bytes as u64));
            let host_rate = fabric.ports[fabric.host_port[f.src as usize] as usize].rate;
            let path = PathInfo { mtu_bytes: mtu, host_rate, base_rtt: rtt, bdp_bytes: host_rate.bytes_in(rtt), hops: hops as u32, net_base_rtt: setup.base_rtt };
            let cc = tr.cc.build(&mut path.clone());
            let mut lb_ctx = crate::transport::lb::LbBuild { path, rng: Rng::stream(seed, "conn", i as u64) };
            let lb = tr.lb.build(&mut lb_ctx);
            let (tx_recovery, rx_recovery) = (tr.reliability.build(&mut path.clone()), tr.reliability.build_receiver());
            conns.push(Connection::new(f.src, f.dst, cc, lb, lb_ctx.rng, tx_recovery, rx_recovery));
            let credit_policy = tr.credit.build(&mut crate::transport::credit::CreditBuild { bdp_bytes: path.bdp_bytes, mtu_bytes: mtu });
            credit.push(crate::transport::credit::CreditState::new(credit_policy.unsolicited_packets()));
            path_rtt.push(rtt);
        }
        let lanes = (0..traffic.conns.len())
            .map(|_| Lane { pending: Default::default(), gate: tr.gate.build(&mut ()), in_flight_msgs: 0, in_flight_bytes: 0 })
            .collect();
        let tasks = TaskState::new(traffic.tasks.iter().map(|t| t.deps), traffic.tasks.len(), traffic.instances.len());
        let horizon = ports.iter().map(|p| p.arrival_delay + p.rate.tx_time(tr.mtu_bytes as u64)).max().unwrap_or(0);
        let mut sim = Sim {
            now: 0,
            q: EventQueue::with_horizon(horizon),
            pool: PacketPool::default(),
            fabric,
            port_peer: fabric_peers,
            ports,
            switch_lb,
            switch_rng,
            hosts,
            conns,
            total_sends: traffic.sends.len() as u32,
            total_bytes: traffic.total_bytes(),
            traffic: Arc::clone(&traffic),
            tasks,
            lanes,
            credit_on: tr.credit.enabled(),
            credit,
            pacers: (0..setup.fabric.hosts).map(|_| Default::default()).collect(),
            tracer: Tracer {
                interval: setup.trace_interval,
                conns: setup.trace_conns.clone(),
                ports: setup.trace_ports.clone(),
                log_drops: setup.scenario.run.event_log,
                ack_conns: {
                    let mut v = setup.scenario.run.ack_log_conns.clone();
                    v.sort_unstable();
                    v
                },
                ..Default::default()
            },
            rtt_hist: RttHistogram::default(),
            tp,
            pfc: setup.pfc.clone(),
            qdisc: setup.qdisc.clone(),
            c: Counters::default(),
            link_events: setup.link_events.clone(),
            acked_bytes_total: 0,
            end_time: setup.end_time,
            stall_acked: 0,
            stall_since: 0,
            stall_limit: setup.stall_limit,
            stalled: None,
            path_rtt,
            stopped_early: false,
            drop_plan: setup.scenario.run.drop_packets.iter().map(|d| (d.flow, d.seq, d.transmission, 0)).collect(),
        };
        for (i, t) in traffic.tasks.iter().enumerate() {
            if t.deps == 0 {
                sim.q.push(t.not_before, EventKind::TaskReady, i as u32);
            }
        }
        for (i, ev) in setup.link_events.iter().enumerate() {
            sim.q.push(ev.at, EventKind::LinkChange, i as u32);
        }
        if sim.tracer.interval > 0 && !(sim.tracer.conns.is_empty() && sim.tracer.ports.is_empty()) {
            sim.q.push(0, EventKind::Sample, 0);
        }
        Ok(sim)
    }

    /// Runs to completion (every flow finished and every packet drained), to the scenario's
    /// end time, or until nothing is left to do. `progress` is called every 65,536 events.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        let total = self.total_sends;
        while let Some(ev) = self.q.pop() {
            if let Some(end) = self.end_time {
                if ev.time > end {
                    self.stopped_early = true;
                    self.now = end;
                    break;
                }
            }
            debug_assert!(ev.time >= self.now);
            self.now = ev.time;
            self.c.events += 1;
            self.prefetch_ahead();
            match ev.kind {
                EventKind::Arrive => self.on_arrive(ev.id),
                EventKind::PortFree => self.on_port_free(ev.id),
                EventKind::TaskReady => self.on_task_ready(ev.id),
                EventKind::ConnWake => self.on_conn_wake(ev.id),
                EventKind::ConnTimer => self.on_conn_timer(ev.id),
                EventKind::LinkChange => self.on_link_change(ev.id),
                EventKind::Sample => self.on_sample(),
                EventKind::PullTick => self.on_pull_tick(ev.id),
                EventKind::Pfc => self.on_pfc_frame(ev.id),
                EventKind::RecoveryTimer => self.on_recovery_timer(ev.id),
            }
            if self.tasks.sends_completed == total && self.pool.live() == 0 {
                break;
            }
            if self.c.events & 0xFFFF == 0 {
                if self.stall_detected() {
                    break;
                }
                progress(&self.progress());
            }
        }
        progress(&self.progress());
    }

    /// Whether the network has kept busy without acknowledging a payload byte for longer than
    /// the stall limit (checked every 65,536 events, so the interval is exact to one check).
    fn stall_detected(&mut self) -> bool {
        if self.acked_bytes_total != self.stall_acked {
            self.stall_acked = self.acked_bytes_total;
            self.stall_since = self.now;
            return false;
        }
        if self.stall_limit > 0 && self.now - self.stall_since > self.stall_limit {
            self.stalled = Some((self.stall_since, self.now));
            return true;
        }
        false
    }

    /// Current progress figures.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            events: self.c.events,
            messages_done: self.tasks.sends_completed,
            messages: self.total_sends,
            fraction: if self.total_bytes == 0 { 1.0 } else { self.acked_bytes_total as f64 / self.total_bytes as f64 },
        }
    }

    /// Software pipelining over the sorted bucket of upcoming events: state scattered over
    /// large arrays (packets, ports, routes) is requested from memory a few events before it is
    /// needed, in stages, because each stage's address depends on the previous stage's data.
    /// Pure hints: results do not depend on them.
    #[inline]
    fn prefetch_ahead(&mut self) {
        const FAR: usize = 8;
        const MID: usize = 5;
        const NEAR: usize = 3;
        if let Some(e) = self.q.peek_ahead(FAR) {
            match e.kind {
                EventKind::Arrive => self.pool.prefetch(e.id),
                EventKind::PortFree => {
                    let ps = &self.ports[e.id as usize];
                    prefetch(ps);
                    prefetch(&ps.ctrl);
                }
                _ => {}
            }
        }
        if let Some(e) = self.q.peek_ahead(MID) {
            match e.kind {
                EventKind::PortFree => {
                    // The address of the queue head needs only the port (prefetched at FAR).
                    let ps = &self.ports[e.id as usize];
                    if let Some(slot) = ps.ctrl.front().or(ps.data.front()) {
                        prefetch(slot);
                    }
                }
                EventKind::Arrive => {
                    let p = self.pool.get(e.id);
                    let node = self.port_peer[p.port as usize];
                    if node >= self.fabric.hosts {
                        self.fabric.routes.prefetch_next_hops(&self.fabric, node, self.fabric.tor_of_host[p.dst as usize]);
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = self.q.peek_ahead(NEAR) {
            if e.kind == EventKind::PortFree {
                let ps = &self.ports[e.id as usize];
                if let Some(&p) = ps.ctrl.front().or(ps.data.front()) {
                    self.pool.prefetch(p);
                }
            }
            if e.kind == EventKind::Arrive {
                let id = e.id;
                let p = self.pool.get(id);
                let node = self.port_peer[p.port as usize];
                // Only choices that follow from the header may be made early (`SwitchLb::peek`).
                if node >= self.fabric.hosts {
                    if let Some(out) = self.route_peek(node, p) {
                        let ps = &self.ports[out as usize];
                        prefetch(ps);
                        prefetch(&ps.ctrl);
                        self.pool.get_mut(id).route_hint = out + 1;
                    }
                }
            }
        }
    }

    /// A packet finished crossing a link: hand it to the node at the far end.
    fn on_arrive(&mut self, pkt: u32) {
        let port = self.pool.get(pkt).port;
        let node = self.port_peer[port as usize];
        if node < self.fabric.hosts {
            self.host_receive(node, pkt);
        } else {
            self.switch_receive(node, pkt);
        }
    }

    fn on_link_change(&mut self, i: u32) {
        let ev = self.link_events[i as usize];
        if ev.action == LinkAction::Reroute {
            return self.reroute();
        }
        for p in ev.ports {
            let ps = &mut self.ports[p as usize];
            match ev.action {
                LinkAction::Down => ps.up = false,
                LinkAction::Up => ps.up = true,
                LinkAction::Rate => ps.rate = ev.rate,
                LinkAction::Reroute => {}
            }
        }
        if ev.action == LinkAction::Up {
            for p in ev.ports {
                self.port_kick(p);
            }
        }
    }

    /// The built fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }
}

/// Links on the path from host `src` to host `dst`.
pub fn hop_count(fabric: &Fabric, src: NodeId, dst: NodeId) -> usize {
    let (ts, td) = (fabric.tor_of_host[src as usize], fabric.tor_of_host[dst as usize]);
    if ts == td {
        2
    } else {
        2 + fabric.routes.distance(fabric, ts, td) as usize
    }
}
