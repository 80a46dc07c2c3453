//! The simulation context and its event loop.
//!
//! [`Sim`] holds the [`Kernel`] (clock, event queue, packet pool, counters, packet log) and the
//! state of the two layers, each in flat arrays indexed by dense ids: [`Network`] (ports,
//! queues, switch selectors, PFC) and [`Hosts`] (NICs, connections' senders and receivers with
//! their schemes, credits, gates); `build.rs` builds them from a scenario. The loop pops the
//! earliest event and dispatches on its kind with a `match`. Every element owns its handlers and
//! gets the narrow [`Kernel`]: the switch, port and PFC (`net/switch.rs`, `net/port.rs`,
//! `net/pfc.rs`: methods of [`Network`]), the senders (`transport/sender.rs`), the receivers
//! (`transport/receiver.rs`) and the credit schemes (`transport/credit.rs`); `dispatch.rs` lends
//! the kernel and carries out what a handler returns (and holds the NIC's round robin, which
//! sits between the network's port and the sender). The workload graph is an element too
//! (`workload/run.rs`), for which the simulation is the driver. There
//! is no global state: two `Sim`s can run side by side.

mod dispatch;
mod build;
pub use build::recovery_timers;
pub use crate::kernel::queue;
pub use crate::kernel::{Counters, Kernel};
pub mod parallel;
pub mod flowlets;
pub mod trace;
pub mod uplink_meter;

pub use crate::hint::prefetch;

use crate::error::Result;
use crate::ids::{ConnId, NodeId, PktId, PortId};
use crate::net::packet::{PacketPool, PktKind};
use crate::net::switch::Forwarded;
use crate::kernel::store::{Layout, Parted, Store, Whole};
use crate::net::Network;
use crate::scenario::{LinkAction, LinkEvent, Setup};
use crate::topo::Fabric;
use crate::transport::hosts::Hosts;
use crate::units::{Bytes, Time};
use crate::workload::graph::Traffic;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use crate::workload::run::TaskState;
use trace::Tracer;
use queue::{EventKind, EventQueue};

/// Progress of a running simulation, handed to the progress callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time.
    pub now: Time,
    /// Events so far.
    pub events: u64,
    /// Messages completed (a flow is one message; under a message shaper, one per sub-QP).
    pub messages_done: u32,
    /// All messages.
    pub messages: u32,
    /// Fraction of all payload acknowledged.
    pub fraction: f64,
}

/// The simulation: the clock, the event queue and the packet pool, the network layer's state
/// ([`Network`]), the host layer's state ([`Hosts`]), the workload graph and run bookkeeping.
/// The layout `L` (`kernel/store.rs`) says whether its element arrays are every element's (a
/// serial run, and a parallel run once merged) or one partition's; the engine's code is
/// compiled for each, so a serial run's per-packet path indexes plain arrays.
pub struct Sim<L: Layout = Whole> {
    /// The clock, the event queue, the packet pool, the counters and the packet log: what an
    /// element's handler is lent ([`Kernel`]).
    pub k: Kernel,
    /// Ports, queues, switches, PFC.
    pub(crate) net: Network<L>,
    /// NICs and connections.
    pub(crate) hosts: Hosts<L>,
    /// The workload's graph of messages and dependencies (read-only).
    pub(crate) traffic: Arc<Traffic>,
    /// Run-time state of that graph.
    pub(crate) tasks: TaskState,
    total_sends: u32,
    /// Sampled time series (`run.trace_interval_us`).
    pub(crate) tracer: Tracer,
    pub(crate) link_events: Vec<LinkEvent>,
    total_bytes: u64,
    /// When the run stops short of completion: the end time and the livelock guard.
    stop_rule: StopRule,
    /// Livelock guard (`run.stall_limit_us`; 0 = off): the messages outstanding and since when
    /// (when payload was last acknowledged is the senders' `hosts.acked.last_at`), and the
    /// stalled interval once the guard fired.
    busy: BusyClock,
    pub(crate) stalled: Option<(Time, Time)>,
    pub(crate) stopped_early: bool,
    /// The caller's stop flag (an interrupt: Ctrl-C, SIGTERM) cut the run short.
    pub(crate) interrupted: bool,
}

/// Why a run stops short of completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The livelock guard fired: nothing was acknowledged over (since, deadline).
    Stalled(Time, Time),
    /// The scenario's end time came.
    End(Time),
    /// The caller's stop flag was set (an interrupt), at this simulated time.
    Interrupted(Time),
}

/// The end time and the livelock guard, as one rule the serial loop and the parallel engine's
/// coordinator both apply to the global state.
///
/// The guard fires when messages have been outstanding (handed to their connections and not
/// yet completed) without a payload byte acknowledged for `stall_limit`: its deadline is
/// `stall_limit` after the later of the last acknowledgement and the moment messages became
/// outstanding on an idle network, so a compute gap or a late start never counts. Both
/// moments are recorded as they happen (one store each); the deadline is recomputed only
/// when an event passes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StopRule {
    end: Time,
    stall_limit: Time,
    stall_deadline: Time,
    /// Events later than this are looked at before they run: the end time, or the guard's
    /// deadline as last computed.
    pub(crate) horizon: Time,
}

/// The livelock guard's count of outstanding messages (handed to their connections, not yet
/// completed) and when they last became outstanding on an idle network. The serial loop keeps
/// one as messages come and go; the parallel coordinator rebuilds one from its partitions'
/// logs, in event order.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BusyClock {
    outstanding: u64,
    since: Time,
}

impl BusyClock {
    /// `delta` messages became outstanding (or, negative, completed) at `now`.
    #[inline]
    pub(crate) fn change(&mut self, now: Time, delta: i32) {
        if delta > 0 && self.outstanding == 0 {
            self.since = now;
        }
        self.outstanding = self.outstanding.wrapping_add_signed(delta as i64);
    }

    /// Whether no message is outstanding.
    pub(crate) fn idle(&self) -> bool {
        self.outstanding == 0
    }

    /// When messages last became outstanding on an idle network.
    pub(crate) fn since(&self) -> Time {
        self.since
    }
}

impl StopRule {
    fn new(end: Option<Time>, stall_limit: Time) -> Self {
        let stall_deadline = if stall_limit > Time::ZERO { stall_limit } else { Time::MAX };
        let end = end.unwrap_or(Time::MAX);
        StopRule { end, stall_limit, stall_deadline, horizon: end.min(stall_deadline) }
    }

    /// Whether the run stops before an event at `t`, which lies beyond the horizon; `idle` says
    /// whether no message is outstanding, `since` is the later of the last acknowledgement and
    /// the moment messages last became outstanding. Otherwise the horizon moves to the next
    /// moment either could fall.
    pub(crate) fn check(&mut self, t: Time, idle: bool, since: Time) -> Option<Stop> {
        if self.stall_limit > Time::ZERO && t > self.stall_deadline {
            if idle {
                // Messages become outstanding at `t` at the earliest.
                self.stall_deadline = t.saturating_add(self.stall_limit);
            } else {
                self.stall_deadline = since.saturating_add(self.stall_limit);
                if t > self.stall_deadline && self.stall_deadline < self.end {
                    return Some(Stop::Stalled(since, self.stall_deadline));
                }
            }
        }
        if t > self.end {
            return Some(Stop::End(self.end));
        }
        self.horizon = self.end.min(self.stall_deadline);
        None
    }
}

impl Sim {
    /// This whole simulation cut down to the elements `hold` names (a partition's).
    pub(crate) fn cut(self, hold: &build::Holding) -> Sim<Parted> {
        self.map_layers(|net, hosts| (build::cut_network(net, hold), build::cut_hosts(hosts, hold)))
    }

    /// Builds the simulation of a validated scenario, with nothing scheduled yet.
    pub(crate) fn unseeded(setup: &Setup) -> Result<Sim> {
        Self::unseeded_with_pool(setup, crate::estimate::Estimate::pool_packets(setup))
    }

    /// [`Sim::unseeded`] with the packet pool's reservation given (a parallel run reckons it
    /// once for all its replicas: it scans the whole traffic graph).
    pub(crate) fn unseeded_with_pool(setup: &Setup, pool_packets: usize) -> Result<Sim> {
        Sim::unseeded_in(setup, pool_packets, &build::Holding::all(setup))
    }

    /// Builds the simulation of a validated scenario, ready to run.
    pub fn new(setup: &Setup) -> Result<Sim> {
        let mut sim = Sim::unseeded(setup)?;
        sim.seed(&|_| true);
        Ok(sim)
    }

    /// Runs to completion (every flow finished and every packet drained), to the scenario's
    /// end time, or until nothing is left to do. `progress` is called every 65,536 events.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        self.run_until_stopped(progress, &AtomicBool::new(false));
    }

    /// [`Sim::run`], also stopping when `stop` is set (read right after each periodic
    /// `progress` call, which may set it); returns whether it stopped for that reason. A
    /// stopped simulation is marked interrupted: its results are partial (unfinished flows
    /// as such) and the end-of-run checks that need a drained network are skipped.
    pub fn run_until_stopped(&mut self, progress: &mut dyn FnMut(&Progress), stop: &AtomicBool) -> bool {
        let total = self.total_sends;
        while let Some(ev) = self.k.q.pop() {
            if ev.time > self.stop_rule.horizon && self.past_horizon(ev.time) {
                break;
            }
            debug_assert!(ev.time >= self.k.now);
            self.k.now = ev.time;
            self.k.c.events += 1;
            self.prefetch_ahead();
            self.dispatch(ev);
            if self.tasks.sends_completed == total && self.k.pool.live() == 0 && self.tasks.waiting == 0 {
                break;
            }
            if self.k.c.events & 0xFFFF == 0 {
                progress(&self.progress());
                if stop.load(Ordering::Relaxed) {
                    self.apply_stop(Stop::Interrupted(self.k.now));
                    return true;
                }
            }
        }
        progress(&self.progress());
        false
    }
}

impl<L: Layout> Sim<L> {
    /// [`Sim::unseeded_with_pool`] holding the elements `hold` names: all of them, or a
    /// partition's.
    pub(crate) fn unseeded_in(setup: &Setup, pool_packets: usize, hold: &build::Holding) -> Result<Sim<L>> {
        let mut net = build::network::<L>(setup, hold)?;
        let hosts = build::hosts::<L>(setup, &net.fabric, hold);
        net.path_counts = vec![Default::default(); hosts.conns.len()];
        let traffic = Arc::clone(&setup.traffic);
        // Every element an event names must fit the order key's entity field (queue.rs).
        for (what, n) in [
            ("ports", net.ports.len() as u64),
            ("connections", hosts.conns.len() as u64),
            ("tasks", traffic.tasks.len() as u64),
            ("hosts", net.fabric.hosts as u64),
            ("link events", setup.link_events.len() as u64),
        ] {
            if n >= queue::MAX_ENTITIES {
                return Err(crate::error::Error::invalid("topology", format!("the run has {n} {what}: the event queue orders at most {} of each", queue::MAX_ENTITIES - 1)));
            }
        }
        let tasks = TaskState::new(&traffic, setup.scenario.run.message_log);
        let mtu = setup.scenario.transport.mtu_bytes as u64;
        let horizon = net.ports.held().map(|p| p.arrival_delay + p.rate.tx_time(Bytes(mtu))).max().unwrap_or(Time::ZERO);
        // When every port is busy: two events (a departure, an arrival) per MTU-sized packet. (A
        // partition counts its own ports: it runs their events only.)
        let events_per_ns: f64 = net.ports.held().map(|p| 2.0 * p.rate.0 as f64 / 8e9 / mtu.max(1) as f64).sum();
        let mut pool = PacketPool::with_capacity(pool_packets);
        // Switches stamp INT only for a scheme that reads it (`kernel/telemetry.rs`).
        if setup.scenario.transport.carries_telemetry() {
            pool.enable_telemetry();
        }
        let sim = Sim {
            k: Kernel::new(EventQueue::with_horizon(horizon, events_per_ns), pool, build::packet_log(setup)),
            net,
            hosts,
            total_sends: traffic.sends.len() as u32,
            total_bytes: traffic.total_bytes(),
            traffic: Arc::clone(&traffic),
            tasks,
            tracer: build::tracer(setup),
            link_events: setup.link_events.clone(),
            stop_rule: StopRule::new(setup.end_time, setup.stall_limit),
            busy: BusyClock::default(),
            stalled: None,
            stopped_early: false,
            interrupted: false,
        };
        Ok(sim)
    }

    /// This simulation with its network and hosts replaced by what `f` makes of them, of
    /// layout `M` (the merged elements of a parallel run's partitions).
    pub(crate) fn map_layers<M: Layout>(self, f: impl FnOnce(Network<L>, Hosts<L>) -> (Network<M>, Hosts<M>)) -> Sim<M> {
        let Sim { k, net, hosts, traffic, tasks, total_sends, tracer, link_events, total_bytes, stop_rule, busy, stalled, stopped_early, interrupted } = self;
        let (net, hosts) = f(net, hosts);
        Sim { k, net, hosts, traffic, tasks, total_sends, tracer, link_events, total_bytes, stop_rule, busy, stalled, stopped_early, interrupted }
    }

    /// Schedules the run's first events: the tasks without dependencies for which `own_task`
    /// holds (a partition starts its own), every link change, the first sample.
    pub(crate) fn seed(&mut self, own_task: &dyn Fn(usize) -> bool) {
        let traffic = Arc::clone(&self.traffic);
        for (i, t) in traffic.tasks.iter().enumerate() {
            if t.deps() == 0 && own_task(i) {
                self.tasks.waiting += 1;
                self.k.q.push(t.not_before(), EventKind::TaskReady, i as u32);
            }
        }
        for (i, ev) in self.link_events.iter().enumerate() {
            self.k.q.push(ev.at, EventKind::LinkChange, i as u32);
        }
        if self.tracer.samples_anything() {
            self.k.q.push(Time::ZERO, EventKind::Sample, 0);
        }
    }

    /// Runs one event's handler.
    #[inline(always)]
    fn dispatch(&mut self, ev: queue::Event) {
        match ev.kind() {
            EventKind::Arrive | EventKind::HeldArrive => self.on_arrive(ev.id),
            EventKind::PortFree => self.on_port_free(PortId(ev.id)),
            EventKind::TaskReady => self.on_task_ready(ev.id),
            EventKind::ConnWake => self.on_conn_wake(ConnId(ev.id)),
            EventKind::ConnTimer => self.on_conn_timer(ConnId(ev.id)),
            EventKind::LinkChange => self.on_link_change(ev.id),
            EventKind::Sample => self.tracer.on_sample(&mut self.k, &self.hosts.conns, &self.net.ports),
            EventKind::PullTick => self.on_pull_tick(NodeId(ev.id)),
            EventKind::Pfc => self.on_pfc_frame(PortId(ev.id)),
            EventKind::RecoveryTimer => self.on_recovery_timer(ConnId(ev.id)),
        }
    }

    /// Whether the run stops before an event at `t`, which lies beyond the horizon
    /// ([`StopRule::check`]). Stopping sets the clock to that moment, so the reported stop is
    /// exact.
    fn past_horizon(&mut self, t: Time) -> bool {
        let idle = self.busy.idle();
        let since = self.hosts.acked.last_at.max(self.busy.since());
        let Some(stop) = self.stop_rule.check(t, idle, since) else { return false };
        self.apply_stop(stop);
        true
    }

    /// Records why and when the run stopped short.
    pub(crate) fn apply_stop(&mut self, stop: Stop) {
        match stop {
            Stop::Stalled(since, deadline) => {
                self.stalled = Some((since, deadline));
                self.k.now = deadline;
            }
            Stop::End(end) => {
                self.stopped_early = true;
                self.k.now = end;
            }
            Stop::Interrupted(at) => {
                self.interrupted = true;
                self.k.now = at;
            }
        }
    }

    /// Whether the run ended before the network drained for a reason other than a fault of the
    /// scenario: the end time, or an interrupt.
    pub(crate) fn cut_short(&self) -> bool {
        self.stopped_early || self.interrupted
    }

    /// Current progress figures.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.k.now,
            events: self.k.c.events,
            messages_done: self.tasks.sends_completed,
            messages: self.total_sends,
            // (Erasure coding's extra symbols count as acknowledged bytes too: at most 1.)
            fraction: if self.total_bytes == 0 { 1.0 } else { (self.hosts.acked.payload as f64 / self.total_bytes as f64).min(1.0) },
        }
    }

    /// Software pipelining over the sorted bucket of upcoming events: state scattered over
    /// large arrays (packets, ports, routes) is requested from memory a few events before it is
    /// needed, in stages, because each stage's address depends on the previous stage's data.
    /// Pure hints: results do not depend on them.
    #[inline]
    fn prefetch_ahead(&mut self) {
        // Distances in events. FAR and MID were 8 and 5 until the 8192-host profile showed MID
        // stalling on the packet FAR had requested. 12 and 7 gained 0-8 % there (the benchmark's
        // A/B saw no change; 16 and 10 no more) and nothing at 1024.
        const FARTHEST: usize = 16;
        const FAR: usize = 12;
        const MID: usize = 7;
        const NEAR: usize = 3;
        // A NIC's next data packet is a chain of four dependent loads (the port, the host's
        // record with its ready ring's head, the sender's record, the record's rings), one
        // stage each.
        if let Some(e) = self.k.q.peek_ahead(FARTHEST) {
            if e.kind() == EventKind::PortFree {
                self.net.ports[e.id as usize].prefetch();
            }
        }
        if let Some(e) = self.k.q.peek_ahead(FAR) {
            match e.kind() {
                EventKind::Arrive => self.k.pool.prefetch(PktId(e.id)),
                EventKind::PortFree => {
                    if let Some(nic) = self.nic_host(e.id) {
                        crate::hint::prefetch(nic);
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = self.k.q.peek_ahead(MID) {
            match e.kind() {
                EventKind::PortFree => {
                    // The queue heads are in the port (prefetched at FARTHEST).
                    let ps = &self.net.ports[e.id as usize];
                    if let Some(p) = ps.ctrl.front().or(ps.data.front()) {
                        self.k.pool.prefetch(p);
                    }
                    if self.net.qdisc.profiles[ps.qdisc as usize].may_draw_at_departure(ps.data_bytes.0) {
                        ps.prefetch_marking();
                    }
                    if let Some(c) = self.nic_next_sender(e.id) {
                        c.prefetch_record();
                    }
                }
                EventKind::Arrive => {
                    let p = self.k.pool.get(PktId(e.id));
                    let node = self.net.port_peer[p.port.idx()];
                    if !self.net.is_host(node) {
                        self.net.routes.prefetch_next_hops(self.net.hosts.0, node, self.net.route_tor[p.dst.idx()]);
                    } else if p.kind == PktKind::Data {
                        if let Some(r) = self.hosts.rx.get(p.conn.0) {
                            r.prefetch();
                        }
                        // A fresh packet's receiver reads its sender's posted messages (where each
                        // message ends) and packet count.
                        if let Some(c) = self.hosts.conns.get(p.conn.0) {
                            c.prefetch_messages();
                        }
                    } else if let Some(c) = self.hosts.conns.get(p.conn.0) {
                        c.prefetch_fields();
                    }
                }
                // Paced senders and their timers (a large share of the events of paced
                // workloads such as lb-ai-training's) read the sender's fields, then its rings.
                EventKind::ConnWake | EventKind::ConnTimer => self.hosts.conns[e.id as usize].prefetch_fields(),
                _ => {}
            }
        }
        if let Some(e) = self.k.q.peek_ahead(NEAR) {
            let id = e.id;
            match e.kind() {
                EventKind::ConnWake => self.hosts.conns[id as usize].prefetch_wake_entries(),
                EventKind::PortFree => {
                    // What the NIC's next packet writes in its sender's rings.
                    if let Some(c) = self.nic_next_sender(id) {
                        c.prefetch_send_entries();
                    }
                }
                EventKind::ConnTimer => {
                    let c = &self.hosts.conns[id as usize];
                    c.prefetch_entries(c.snd_una);
                }
                EventKind::Arrive => {
                    let p = self.k.pool.get(PktId(id));
                    let node = self.net.port_peer[p.port.idx()];
                    if self.net.is_host(node) {
                        if p.kind == PktKind::Data {
                            if let Some(r) = self.hosts.rx.get(p.conn.0) {
                                r.prefetch_entry(p.seq);
                                if let Some(c) = self.hosts.conns.get(p.conn.0) {
                                    r.prefetch_current_message(&c.msgs, c.msgs_retired);
                                }
                            }
                        } else if let Some(c) = self.hosts.conns.get(p.conn.0) {
                            c.prefetch_entries(p.seq);
                        }
                    } else if let Some(out) = self.net.route_peek(node, p) {
                        // Only choices that follow from the header may be made early (`SwitchLb::peek`).
                        self.net.ports[out.idx()].prefetch();
                        self.k.pool.get_mut(PktId(id)).link = out.0 + 1;
                    }
                }
                _ => {}
            }
        }
    }

    /// The scheduler state of the host whose NIC port is `port`; `None` for a switch port.
    #[inline(always)]
    pub(crate) fn nic_host(&self, port: u32) -> Option<&crate::net::nic::HostState> {
        let ps = &self.net.ports[port as usize];
        // (A spraying NIC's ports share the first's ring.)
        ps.is_nic.then(|| &self.hosts.nics[self.hosts.nics[ps.owner.idx()].ring.idx()])
    }

    /// The sender whose packet NIC port `port` makes next when it has nothing queued (the first
    /// connection of its host's ready ring); `None` for a switch port or an idle host.
    #[inline(always)]
    fn nic_next_sender(&self, port: u32) -> Option<&crate::transport::connection::Connection> {
        let c = self.nic_host(port)?.ready.front()?;
        Some(&self.hosts.conns[c.idx()])
    }

    /// A packet finished crossing a link: hand it to the node at the far end.
    #[inline(always)]
    fn on_arrive(&mut self, pkt: u32) {
        let port = self.k.pool.get(PktId(pkt)).port;
        let node = self.net.port_peer[port.idx()];
        if self.net.is_host(node) {
            self.host_receive(node, PktId(pkt));
        } else if let Forwarded::Held(pkt) = self.with_net(|net, k| net.switch_receive(k, node, PktId(pkt))) {
            self.hold(pkt);
        }
    }

    fn on_link_change(&mut self, i: u32) {
        let ev = self.link_events[i as usize];
        if ev.action == LinkAction::Reroute {
            return self.with_net(|net, k| net.reroute(k));
        }
        let n = if ev.one_way { 1 } else { 2 };
        for (i, &p) in ev.ports[..n].iter().enumerate() {
            // (A partition holds only its own ports: another's changes there.)
            let Some(ps) = self.net.ports.get_mut(p.0) else { continue };
            match ev.action {
                LinkAction::Down => ps.up = false,
                LinkAction::Up => ps.up = true,
                LinkAction::Rate => ps.rate = ev.rate,
                LinkAction::Reroute => {}
            }
            if let Some(q) = ev.profiles {
                ps.qdisc = q[i];
            }
        }
        if ev.action == LinkAction::Up {
            for p in ev.ports {
                if self.net.ports.holds(p.0) {
                    self.port_kick(p);
                }
            }
        }
    }

    /// This partition's context, when this `Sim` is one partition of a parallel run
    /// (`parallel.rs`): the kernel's boundary.
    #[inline]
    pub(crate) fn part(&self) -> Option<&parallel::Partition> {
        self.k.boundary.as_deref().map(|b| b.as_any().downcast_ref().expect("the boundary is a partition"))
    }

    /// [`Sim::part`], mutably.
    #[inline]
    pub(crate) fn part_mut(&mut self) -> Option<&mut parallel::Partition> {
        self.k.boundary.as_deref_mut().map(|b| b.as_any_mut().downcast_mut().expect("the boundary is a partition"))
    }

    /// The built fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.net.fabric
    }

    /// Current serialization rate of port `p` (static failures and link events applied).
    pub fn port_rate(&self, p: crate::ids::PortId) -> crate::units::BitsPerSec {
        self.net.ports[p.idx()].rate
    }

    /// Index of port `p`'s current queue profile in the setup's `qdisc` table.
    pub fn port_profile(&self, p: crate::ids::PortId) -> u8 {
        self.net.ports[p.idx()].qdisc
    }
}

/// Links on the path from host `src` to host `dst`.
pub fn hop_count(fabric: &Fabric, src: NodeId, dst: NodeId) -> usize {
    let (ts, td) = (fabric.tor_of_host[src.idx()], fabric.tor_of_host[dst.idx()]);
    if ts == td {
        2
    } else {
        2 + fabric.routes.distance(fabric, ts, td) as usize
    }
}
