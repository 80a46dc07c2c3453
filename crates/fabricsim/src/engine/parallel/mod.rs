//! The partitioned engine (`--threads N`): one run spread over several cores, with outputs
//! byte-identical to the serial engine's.
//!
//! **Replicas, each running its own events.** Every partition is a [`Sim`] built from the
//! same scenario, with its own event queue and packet pool, that runs only the events of the
//! elements it owns (`plan.rs`: blocks of ToRs with their hosts and the switches above them).
//! It holds its own nodes' elements only (`engine/build.rs`, `Holding`: ports, switch
//! selectors, NICs; a connection's sender half, lane and counters where its sender runs, its
//! receiver half where its receiver runs, its record at both ends, as the receiver reads the
//! sender's posted messages). The fabric (with its per-port far ends and route-ToR table),
//! routes and traffic graph are shared read-only; what is still a full copy per partition is
//! small (a connection's path counts, the task states).
//! What one partition does to another's elements travels in a [`Mailbox`]: a packet crossing a
//! cable between them, a PFC frame, or the news that a sender posted a message (the receiver's
//! half of the connection learns message boundaries from it). Each partition fills one mailbox
//! per receiver, and the coordinator hands the mailboxes over whole at the barrier
//! (`mailbox.rs`). At the end the replicas are merged, each element taken from its owner
//! (`merge.rs`).
//!
//! **Conservative windows.** Anything crossing between partitions takes at least the lookahead
//! L (the least cable delay between them), so with W the earliest pending event anywhere, every
//! partition can run its events before W + L without hearing from the others: what they send
//! in that window arrives at W + L or later. At the barrier the messages are handed over and
//! the next window starts. The event order is (time, kind, entity) (`queue.rs`), which does not
//! depend on which queue holds an event, so each partition runs its events in the serial
//! order, and every event runs exactly as it did in the serial run.
//!
//! **The exact stop.** The serial run stops right after the first event after which every
//! message is complete and no packet is left anywhere. A partition is *quiet* when its own
//! senders' messages are all complete, its pool is empty and it has sent no packet in this
//! window; the run is done at the first point where all are quiet. A quiet partition may run
//! past that point only if it is known not to be done yet, so a quiet partition pauses before
//! an event that lies beyond what the coordinator has verified; at the barrier the coordinator
//! looks at every partition's quiet intervals up to the earliest point it knows all of them
//! to: it either finds the first point where all are quiet (the stop, exactly the serial one)
//! or verifies that stretch and lets the paused partitions go on. Busy partitions are never
//! quiet, so pauses only happen near the end of a run.
//!
//! The end time and the livelock guard ([`StopRule`]) are checked by the coordinator on the
//! merged state at window boundaries, with windows cut at the rule's horizon: the same
//! decisions at the same moments as the serial loop. A run whose features share state without
//! a packet (tracing, credits, cross-partition task dependencies, ...) runs serially and says
//! why (`plan.rs`).

mod joins;
mod mailbox;
mod merge;
pub mod plan;

use super::queue::EventKind;
use mailbox::Mailbox;
use plan::Place;
use super::build::Holding;
use super::{BusyClock, Progress, Sim, Stop, StopRule};
use crate::error::Result;
use crate::ids::{NodeId, PortId};
use crate::kernel::Boundary;
use crate::kernel::store::Parted;
use crate::net::packet::Packet;
use crate::net::telemetry::IntStack;
use crate::scenario::Setup;
use crate::units::Time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// A point of the run's total event order, packed so that it compares as one integer: an
/// event at time `t` with order key `k` is `t << 33 | k << 1 | 1` (odd); `t << 33` (even) lies
/// before every event at `t`; 0 lies before every event of the run.
pub(crate) type Point = u128;

/// The point of an event at `time` with order key `key`.
#[inline(always)]
fn event_point(time: Time, key: u32) -> Point {
    (time.0 as u128) << 33 | (key as u128) << 1 | 1
}

/// The point of event `e`.
#[inline(always)]
fn point_of(e: &super::queue::Event) -> Point {
    let (time, key) = e.point();
    event_point(time, key)
}

/// The earlier of `a` (None: none yet) and `t`.
fn sooner(a: Option<Time>, t: Time) -> Option<Time> {
    Some(a.map_or(t, |a| a.min(t)))
}

/// CPU seconds the calling thread has run, where the OS tells (Linux).
fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid timespec for the call to fill.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
        ok.then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// CPU seconds since `since` (a [`thread_cpu_seconds`] reading of this thread).
fn cpu_since(since: Option<f64>) -> Option<f64> {
    Some(thread_cpu_seconds()? - since?)
}

/// Receives from `rx`, first offering the core to other threads a bounded number of times
/// before sleeping. A round's answer often comes within microseconds, and a sleeping thread's
/// wake-up (a futex call and a reschedule) cost tens of microseconds per round on the 2-core
/// machine: most of a parallel run's time when windows hold little work (a collective's
/// 1621 windows in half a second). Yielding rather than spinning, so that an oversubscribed
/// machine runs the thread that is being waited for.
fn recv_soon<T>(rx: &mpsc::Receiver<T>) -> std::result::Result<T, mpsc::RecvError> {
    const YIELDS: u32 = 200;
    for _ in 0..YIELDS {
        match rx.try_recv() {
            Ok(v) => return Ok(v),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
            Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvError),
        }
    }
    rx.recv()
}

/// The point before every event at `time`.
fn time_point(time: Time) -> Point {
    (time.0 as u128) << 33
}

/// The time of a point.
fn point_time(p: Point) -> Time {
    Time((p >> 33) as u64)
}

/// What one partition does to another's elements, besides sending it a packet
/// ([`Mailbox::push_packet`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Message {
    /// A PFC frame (PAUSE if `pause`) for upstream port `port` arrives at `at`.
    Frame { at: Time, port: PortId, pause: bool },
    /// The sender of connection `conn` posted message `msg` of `bytes` at `at`: the
    /// receiver's copy of the connection appends it as the sender did.
    Post { conn: u32, msg: u32, bytes: u64, at: Time },
    /// A dependency of task `task` (this partition's) is satisfied at `at`.
    Satisfy { task: u32, at: Time },
    /// Join `task` (run at the coordinator) fires at `at`: in every partition, as a
    /// `TaskReady` event.
    Fire { task: u32, at: Time },
}

impl Message {
    /// When it takes effect, if it schedules an event.
    fn at(&self) -> Option<Time> {
        match *self {
            Message::Frame { at, .. } | Message::Satisfy { at, .. } | Message::Fire { at, .. } => Some(at),
            Message::Post { .. } => None,
        }
    }
}

/// The partition context a replica carries (`Sim::part`).
pub(crate) struct Partition {
    /// This partition.
    pub(crate) id: u16,
    /// The cut every partition shares (whose each node and task is).
    plan: Arc<plan::Plan>,
    /// Inputs of coordinator joins since the last report: (point, join, satisfied at).
    joins: Vec<(Point, u32, Time)>,
    /// Messages sent in the current round, by receiving partition (`out[id]` stays empty).
    out: Vec<Mailbox>,
    /// The earliest time at which one of them takes effect.
    out_first_at: Option<Time>,
    /// Packets sent in the current window.
    out_packets: u32,
    /// Emptied mailboxes, to send this round's messages in. A round first delivers the
    /// mailboxes it was handed, which become spares, and only then sends; a mailbox handed over
    /// leaves an empty place in `out` that takes a spare when something is sent there (see
    /// [`Partition::outbox`]). So the mailboxes of a run are one per pair of partitions that
    /// exchange messages, each sized to the most a pair sent in a round, not two (one filling
    /// while its predecessor waits to be delivered): on `bench/perm_8192.toml` with 16
    /// partitions, some 35 MB fewer.
    spare: Vec<Mailbox>,
    /// Messages whose completion this partition records (its hosts' sends).
    own_sends: u32,
    /// The point of the event being run.
    at: Point,
    /// Changes of the number of outstanding messages (+1 handed to a connection, -1
    /// completed), with the point they happened at, since the last report.
    outstanding: Vec<(Point, i32)>,
}

impl Partition {
    /// Whether node `node` belongs to another partition.
    #[inline(always)]
    pub(crate) fn remote(&self, node: NodeId) -> bool {
        self.plan.node_part[node.idx()] != self.id
    }

    /// Sends `msg` to the partition of node `node`.
    pub(crate) fn send(&mut self, node: NodeId, msg: Message) {
        self.send_to(self.plan.node_part[node.idx()], msg);
    }

    fn send_to(&mut self, to: u16, msg: Message) {
        if let Some(at) = msg.at() {
            self.out_first_at = sooner(self.out_first_at, at);
        }
        self.outbox(to).push(msg);
    }

    /// The mailbox to partition `to`, given a spare's buffers if it has none yet.
    #[inline(always)]
    fn outbox(&mut self, to: u16) -> &mut Mailbox {
        let m = &mut self.out[to as usize];
        if !m.has_buffers() {
            if let Some(spare) = self.spare.pop() {
                *m = spare;
            }
        }
        m
    }

    /// Sends packet `pkt`, which crossed a cable to node `node` (another partition's), to
    /// arrive at `at`.
    #[inline]
    pub(crate) fn send_packet(&mut self, node: NodeId, at: Time, pkt: &Packet, int: Option<&IntStack>) {
        self.out_packets += 1;
        self.out_first_at = sooner(self.out_first_at, at);
        self.outbox(self.plan.node_part[node.idx()]).push_packet(at, pkt, int);
    }

    /// The mailboxes filled in this round, by receiver, leaving empty places without buffers.
    fn take_out(&mut self) -> Vec<(u16, Mailbox)> {
        let mut full = Vec::new();
        for (to, m) in self.out.iter_mut().enumerate() {
            if !m.is_empty() {
                full.push((to as u16, std::mem::take(m)));
            }
        }
        full
    }

    /// Keeps a delivered mailbox's buffers for sending (as many as it can fill in a round).
    fn recycle(&mut self, mut m: Mailbox) {
        if self.spare.len() < self.out.len() {
            m.clear();
            self.spare.push(m);
        }
    }

    /// The edge from task `from` to task `to`, satisfied at `at`, fired in this partition:
    /// whether it acts here; if not, it has been sent where it acts (or is left to the
    /// partition that runs a replicated source too).
    pub(crate) fn applies_here(&mut self, from: u32, to: u32, at: Time) -> bool {
        // A join that ran everywhere fired in every partition: each applies its own edges.
        let replicated = !matches!(self.plan.task_place[from as usize], Place::Part(_));
        match self.plan.task_place[to as usize] {
            Place::Everywhere => true,
            Place::Part(q) if q == self.id => true,
            Place::Part(q) => {
                if !replicated {
                    self.send_to(q, Message::Satisfy { task: to, at });
                }
                false
            }
            Place::Coordinator => {
                if !replicated || self.id == 0 {
                    self.joins.push((self.at, to, at));
                }
                false
            }
        }
    }

    /// The number of outstanding messages changed by `delta` in the current event.
    pub(crate) fn log_outstanding(&mut self, delta: i32) {
        self.outstanding.push((self.at, delta));
    }
}

/// How a run was executed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Execution {
    /// Threads asked for.
    pub threads: usize,
    /// Partitions that ran (1 = serial).
    pub partitions: usize,
    /// Why a run asked to use several threads ran serially.
    pub serial_reason: Option<String>,
    /// Synchronisation windows (0 when serial).
    pub windows: u64,
    /// Wall-clock seconds of the simulation: the serial loop; a parallel run from starting its
    /// partitions (which build their replicas meanwhile) to the merged result.
    pub wall_seconds: f64,
    /// Parallel runs, where the OS reports thread CPU time: CPU seconds the partitions spent
    /// in rounds (running events, taking in messages), summed over partitions.
    pub partition_cpu_seconds: Option<f64>,
    /// Parallel runs, likewise: the rounds' critical path, i.e. per round the busiest
    /// partition's CPU seconds plus the coordinator's between the round's last report and the
    /// next round's start, summed. The wall time the rounds would take with a free core for
    /// every partition and the coordinator and free synchronisation: what bounds the speed-up
    /// apart from the machine (memory bandwidth, shared caches, wake-up latency).
    pub critical_path_seconds: Option<f64>,
}

/// How a run of `setup` on `threads` threads would be cut (`fabricsim check --threads`): the
/// plan, or why the run would stay serial (`Err` inside: the reason).
pub fn plan_for(setup: &Setup, threads: usize) -> Result<std::result::Result<plan::Plan, String>> {
    let sim = Sim::unseeded(setup)?;
    Ok(if threads > 1 { plan::plan(&sim, threads) } else { Err("one thread asked".into()) })
}

/// Runs `setup` on up to `threads` partitions (serially when it cannot be partitioned; see
/// [`Execution::serial_reason`]); returns the merged simulation (marked interrupted if `stop`
/// was set), or `None` if a partition's thread hung up.
/// With a `sink`, trace samples are written to it ([`crate::run_into`]): a traced
/// run is always serial (tracing keeps a run in one partition), so the samples leave in the
/// serial engine's order.
pub(crate) fn run(setup: &Setup, threads: usize, progress: &mut dyn FnMut(&Progress), stop: &AtomicBool, sink: Option<Box<dyn crate::engine::trace::SampleSink>>) -> Result<Option<(Sim, Execution)>> {
    let pool_packets = crate::estimate::Estimate::pool_packets(setup);
    let mut first = Sim::unseeded_with_pool(setup, pool_packets)?;
    // (Only a run that samples is given a sink.)
    first.tracer.files = sink;
    let mut exec = Execution { threads, partitions: 1, ..Execution::default() };
    let plan = if threads > 1 { plan::plan(&first, threads) } else { Err(String::new()) };
    let plan = match plan {
        Ok(p) => p,
        Err(reason) => {
            exec.serial_reason = (threads > 1).then_some(reason);
            first.seed(&|_| true);
            let t0 = std::time::Instant::now();
            first.run_until_stopped(progress, stop);
            exec.wall_seconds = t0.elapsed().as_secs_f64();
            return Ok(Some((first, exec)));
        }
    };
    exec.partitions = plan.parts;
    let plan = Arc::new(plan);
    let make = |mut sim: Sim<Parted>, id: u16| -> Sim<Parted> {
        let own_sends = sim.traffic.sends.iter().filter(|&&t| plan.task_place[t as usize] == Place::Part(id)).count() as u32;
        sim.k.boundary = Some(Box::new(Partition {
            id,
            plan: Arc::clone(&plan),
            joins: Vec::new(),
            out: (0..plan.parts).map(|_| Mailbox::default()).collect(),
            out_first_at: None,
            out_packets: 0,
            spare: Vec::new(),
            own_sends,
            at: 0,
            outstanding: Vec::new(),
        }));
        sim.seed(&|t| matches!(plan.task_place[t], Place::Part(q) if q == id) || plan.task_place[t] == Place::Everywhere);
        sim
    };
    let t0 = std::time::Instant::now();
    let sims = std::thread::scope(|scope| -> Result<Option<Vec<Sim>>> {
        let (report_tx, report_rx) = mpsc::channel::<Report>();
        let mut cmd_txs = Vec::new();
        let mut handles = Vec::new();
        let mut first = Some(first);
        for id in 0..plan.parts as u16 {
            let (cmd_tx, cmd_rx) = mpsc::channel::<Cmd>();
            cmd_txs.push(cmd_tx);
            let report_tx = report_tx.clone();
            let given = first.take();
            let make = &make;
            let plan = &plan;
            handles.push(scope.spawn(move || -> Result<Sim<Parted>> {
                // A partition holds its own nodes' elements only (`engine/build.rs`, Holding).
                let mine = |node: NodeId| plan.node_part[node.idx()] == id;
                let hold = Holding::new(setup, &mine);
                let sim = match given {
                    Some(s) => s.cut(&hold),
                    None => Sim::unseeded_in(setup, pool_packets, &hold)?,
                };
                Ok(serve(make(sim, id), cmd_rx, report_tx))
            }));
        }
        drop(report_tx);
        let mut joins = joins::Joins::new(&setup.traffic, &plan.task_place);
        let outcome = coordinate(&plan, setup, &cmd_txs, &report_rx, progress, stop, &mut exec, &mut joins);
        for tx in &cmd_txs {
            // A worker that failed to build has hung up already.
            let _ = tx.send(Cmd::Finish);
        }
        let mut sims = Vec::new();
        for h in handles {
            sims.push(h.join().expect("a partition's thread panicked")?);
        }
        match outcome {
            Some(end) => {
                let mut merged = merge::merge(sims, &plan);
                joins.apply_to(&mut merged.tasks, &setup.traffic);
                merged.finish_parallel(end);
                Ok(Some(vec![merged]))
            }
            None => Ok(None),
        }
    })?;
    exec.wall_seconds = t0.elapsed().as_secs_f64();
    Ok(sims.map(|mut v| (v.pop().expect("merged"), exec)))
}

/// A command to a partition's thread.
enum Cmd {
    /// Run events before `bound`, pausing when quiet before an event beyond `safe`. The first
    /// round of a window starts it: the window's mailboxes for this partition, and the point
    /// where the previous window ended (from there on, the packets in them are this
    /// partition's, no longer their sender's).
    Round { bound: Point, safe: Point, window: Option<(Point, Vec<Mailbox>)> },
    /// Hand the replica back.
    Finish,
}

/// A partition's answer to a round.
struct Report {
    id: u16,
    /// Its next event (None: its queue is empty).
    next: Option<Point>,
    /// It stopped before `next` because it is quiet and `next` lies beyond the safe point.
    paused: bool,
    /// Quiet intervals closed in this round ([start, end) in points), and the start of the
    /// open one if it is quiet now.
    closed: Vec<(Point, Point)>,
    quiet_since: Option<Point>,
    outstanding: Vec<(Point, i32)>,
    joins: Vec<(Point, u32, Time)>,
    /// Mailboxes filled in this round, by receiver.
    out: Vec<(u16, Mailbox)>,
    /// The earliest time at which one of their messages takes effect.
    out_first_at: Option<Time>,
    sends_completed: u32,
    last_acked_at: Time,
    events: u64,
    acked_bytes: u64,
    now: Time,
    /// CPU seconds the round took (None where the OS does not tell).
    cpu: Option<f64>,
}

/// How the coordinator ended the run: the simulated time of the stop, and whether the end
/// time or the livelock guard stopped it.
#[derive(Clone, Copy, Debug)]
struct End {
    now: Time,
    stop: Option<Stop>,
}

/// A partition's thread: answers rounds until told to finish.
fn serve(mut sim: Sim<Parted>, cmds: mpsc::Receiver<Cmd>, reports: mpsc::Sender<Report>) -> Sim<Parted> {
    let mut quiet_since = sim.quiet().then_some(0);
    while let Ok(Cmd::Round { bound, safe, window }) = recv_soon(&cmds) {
        let cpu_start = thread_cpu_seconds();
        let mut closed = Vec::new();
        if let Some((start, inbox)) = window {
            sim.part_mut().expect("a partition").out_packets = 0;
            for mailbox in inbox {
                sim.deliver(&mailbox);
                sim.part_mut().expect("a partition").recycle(mailbox);
            }
            match (sim.quiet(), quiet_since) {
                // Packets arrived for it: busy from the window's start on.
                (false, Some(s)) => {
                    closed.push((s, start));
                    quiet_since = None;
                }
                // What it sent is now the receivers' concern.
                (true, None) => quiet_since = Some(start),
                _ => {}
            }
        }
        let paused = sim.run_round(bound, safe, &mut quiet_since, &mut closed);
        let next = sim.k.q.peek().map(point_of);
        let part = sim.part_mut().expect("a partition");
        let report = Report {
            id: part.id,
            next,
            paused,
            closed,
            quiet_since,
            outstanding: std::mem::take(&mut part.outstanding),
            joins: std::mem::take(&mut part.joins),
            out: part.take_out(),
            out_first_at: part.out_first_at.take(),
            sends_completed: sim.tasks.sends_completed,
            last_acked_at: sim.hosts.acked.last_at,
            events: sim.k.c.events,
            acked_bytes: sim.hosts.acked.payload,
            now: sim.k.now,
            cpu: cpu_since(cpu_start),
        };
        if reports.send(report).is_err() {
            break;
        }
    }
    sim
}

impl Sim<Parted> {
    /// Whether this partition is quiet: its senders' messages all complete, no packet in its
    /// pool, none sent to another partition in this window.
    fn quiet(&self) -> bool {
        // The pool first: while packets are about (nearly every event), nothing else is read.
        self.k.pool.live() == 0 && {
            let part = self.part().expect("a partition");
            self.tasks.sends_completed == part.own_sends && part.out_packets == 0 && self.tasks.waiting == 0
        }
    }

    /// Applies the messages of a mailbox from another partition (or the coordinator).
    fn deliver(&mut self, mailbox: &Mailbox) {
        let (packets, other) = mailbox.contents();
        for (at, pkt, int) in packets {
            let id = self.k.pool.alloc(*pkt);
            if let (Some(int), Some(slot)) = (int, self.k.pool.telemetry_mut(id)) {
                *slot = *int;
            }
            self.k.q.push_for(at, EventKind::Arrive, pkt.port.0, id.0);
        }
        for &m in other {
            self.deliver_message(m);
        }
    }

    /// Applies one message that is not a packet.
    fn deliver_message(&mut self, m: Message) {
        match m {
            Message::Frame { at, port, pause } => {
                self.net.pfc.ingress[port.idx()].frame_sent(pause);
                self.k.q.push(at, EventKind::Pfc, port.0);
            }
            Message::Post { conn, msg, bytes, at } => {
                let mss = self.hosts.tp.mss;
                self.hosts.conns[conn as usize].post(msg, bytes, mss, at);
            }
            Message::Satisfy { task, at } => {
                // At or after the window's end, so the task, if ready, is an event to come.
                debug_assert!(at > self.k.now);
                self.with_tasks(|tasks, sim, traffic| tasks.satisfy(sim, traffic, task, at));
            }
            Message::Fire { task, at } => {
                self.tasks.waiting += 1;
                self.k.q.push(at, EventKind::TaskReady, task)
            }
        }
    }

    /// Runs this partition's events before `bound`; a quiet partition stops before an event
    /// beyond `safe` (returns true: paused). Tracks the quiet intervals.
    fn run_round(&mut self, bound: Point, safe: Point, quiet_since: &mut Option<Point>, closed: &mut Vec<(Point, Point)>) -> bool {
        let part = self.part().expect("a partition");
        // Events every partition runs (link changes, replicated joins) are counted by one.
        let counts_shared = part.id == 0;
        let plan = Arc::clone(&part.plan);
        // The bound is the point before every event of its time (`coordinate`), so an event
        // lies before it exactly when its time does.
        let bound_time = point_time(bound);
        debug_assert_eq!(bound, time_point(bound_time));
        loop {
            let quiet = quiet_since.is_some();
            let mut paused = false;
            let next = self.k.q.pop_if(|e| {
                if e.time >= bound_time {
                    return false;
                }
                paused = quiet && point_of(e) > safe;
                !paused
            });
            let Some(ev) = next else { return paused };
            let at = point_of(&ev);
            self.k.now = ev.time;
            let shared = match ev.kind() {
                EventKind::LinkChange => true,
                EventKind::TaskReady => !matches!(plan.task_place[ev.id as usize], Place::Part(_)),
                _ => false,
            };
            if !shared || counts_shared {
                self.k.c.events += 1;
            }
            self.part_mut().expect("a partition").at = at;
            self.prefetch_ahead();
            self.dispatch(ev);
            match (self.quiet(), *quiet_since) {
                (true, None) => *quiet_since = Some(at),
                (false, Some(s)) => {
                    closed.push((s, at));
                    *quiet_since = None;
                }
                _ => {}
            }
        }
    }

}

impl Sim {
    /// The merged simulation takes the coordinator's stop.
    fn finish_parallel(&mut self, end: End) {
        self.k.now = end.now;
        if let Some(stop) = end.stop {
            self.apply_stop(stop);
        }
    }
}

/// The coordinator: runs windows until the run is done or `stop` is set (returns how it
/// ended; an interrupt ends it at a window's end, where every partition has run everything
/// before the bound), or a partition hangs up (returns None).
fn coordinate(
    plan: &plan::Plan,
    setup: &Setup,
    cmds: &[mpsc::Sender<Cmd>],
    reports: &mpsc::Receiver<Report>,
    progress: &mut dyn FnMut(&Progress),
    stop: &AtomicBool,
    exec: &mut Execution,
    joins: &mut joins::Joins,
) -> Option<End> {
    let n = plan.parts;
    let mut rule = StopRule::new(setup.end_time, setup.stall_limit);
    let total_sends = setup.traffic.sends.len() as u32;
    let total_bytes = setup.traffic.total_bytes();
    // Mailboxes of the current window, by receiving partition; handed over when it ends.
    let mut inboxes: Vec<Vec<Mailbox>> = (0..n).map(|_| Vec::new()).collect();
    let mut window_start: Option<Point> = Some(0);
    let mut latest: Vec<Option<Report>> = (0..n).map(|_| None).collect();
    // Quiet intervals per partition ([start, end); end u128::MAX while open).
    let mut quiet: Vec<Vec<(Point, Point)>> = vec![Vec::new(); n];
    // Outstanding-message changes not yet folded in, and the livelock guard's global view.
    let mut pending_outstanding: Vec<(Point, u16, u32, i32)> = Vec::new();
    let mut busy = BusyClock::default();
    let mut shown_events = 0u64;
    let mut next_message: Option<Time> = None;
    // Everything before `safe` is known not to be the stop.
    let mut safe: Point = 0;
    // The first window starts at the earliest event: ask every partition where it stands.
    let mut bound: Point = 0;
    // The critical path and CPU sums (None once a reading is missing), and the coordinator's
    // CPU reading at the last report of the round before.
    let (mut critical, mut cpu_sum) = (Some(0.0f64), Some(0.0f64));
    let mut serial_since: Option<f64> = None;
    loop {
        // One window: rounds until every partition has run everything before `bound`.
        loop {
            let mut deliver: Vec<Vec<Mailbox>> = if window_start.is_some() { std::mem::replace(&mut inboxes, (0..n).map(|_| Vec::new()).collect()) } else { Vec::new() };
            for (id, tx) in cmds.iter().enumerate() {
                let window = window_start.map(|s| (s, std::mem::take(&mut deliver[id])));
                if tx.send(Cmd::Round { bound, safe, window }).is_err() {
                    return None;
                }
            }
            if serial_since.is_some() {
                critical = critical.zip(cpu_since(serial_since)).map(|(c, d)| c + d);
            }
            window_start = None;
            let mut busiest = Some(0.0f64);
            for k in 0..n {
                let mut r = recv_soon(reports).ok()?;
                if k + 1 == n {
                    serial_since = thread_cpu_seconds();
                }
                busiest = busiest.zip(r.cpu).map(|(b, c)| b.max(c));
                cpu_sum = cpu_sum.zip(r.cpu).map(|(s, c)| s + c);
                let id = r.id as usize;
                for &(s, e) in &r.closed {
                    close_or_push(&mut quiet[id], s, e);
                }
                if let Some(s) = r.quiet_since {
                    open_interval(&mut quiet[id], s);
                }
                for (seq, &(p, d)) in r.outstanding.iter().enumerate() {
                    pending_outstanding.push((p, r.id, seq as u32, d));
                }
                joins.report(r.id, &r.joins);
                if let Some(at) = r.out_first_at {
                    next_message = sooner(next_message, at);
                }
                for (to, m) in std::mem::take(&mut r.out) {
                    inboxes[to as usize].push(m);
                }
                latest[id] = Some(r);
            }
            // How far every partition's state is known: up to its next event if it paused,
            // else to the bound.
            let known = latest.iter().flatten().map(|r| if r.paused { r.next.expect("paused before an event") } else { bound }).min().unwrap_or(bound);
            critical = critical.zip(busiest).map(|(c, b)| c + b);
            exec.partition_cpu_seconds = cpu_sum;
            exec.critical_path_seconds = critical.zip(cpu_since(serial_since)).map(|(c, d)| c + d);
            if let Some(p) = first_all_quiet(&quiet, safe, known) {
                // Joins whose last input came before the stop fired in the serial run.
                joins.settle(&setup.traffic, &plan.task_place, None, &mut |_, _| {});
                return Some(End { now: point_time(p), stop: None });
            }
            safe = safe.max(known);
            for q in quiet.iter_mut() {
                q.retain(|&(_, e)| e > safe);
            }
            if known >= bound {
                break;
            }
        }
        // The window is complete: fold in the outstanding-message changes in event order.
        pending_outstanding.sort_unstable();
        for &(p, _, _, d) in &pending_outstanding {
            busy.change(point_time(p), d);
        }
        pending_outstanding.clear();
        // And the inputs of coordinator joins; what fires goes out with the window's messages.
        let mut fired: Vec<Mailbox> = (0..n).map(|_| Mailbox::default()).collect();
        joins.settle(&setup.traffic, &plan.task_place, Some(point_time(bound)), &mut |to, m| {
            if let Some(at) = m.at() {
                next_message = sooner(next_message, at);
            }
            match to {
                Some(k) => fired[k as usize].push(m),
                None => fired.iter_mut().for_each(|f| f.push(m)),
            }
        });
        for (k, f) in fired.into_iter().enumerate().filter(|(_, f)| !f.is_empty()) {
            inboxes[k].push(f);
        }
        // The next event anywhere: in a queue, or a message of the window.
        let mut next: Option<Time> = next_message.take();
        for p in latest.iter().flatten().filter_map(|r| r.next) {
            next = sooner(next, point_time(p));
        }
        let reps = latest.iter().flatten();
        let (events, acked, completed, last_acked, now) =
            reps.fold((0u64, 0u64, 0u32, Time::ZERO, Time::ZERO), |(e, a, c, l, t), r| (e + r.events, a + r.acked_bytes, c + r.sends_completed, l.max(r.last_acked_at), t.max(r.now)));
        exec.windows += 1;
        if events >> 16 != shown_events >> 16 {
            shown_events = events;
            progress(&Progress {
                now,
                events,
                messages_done: completed,
                messages: total_sends,
                fraction: if total_bytes == 0 { 1.0 } else { (acked as f64 / total_bytes as f64).min(1.0) },
            });
            if stop.load(Ordering::Relaxed) {
                // Messages of the next window stay undelivered: they are packets in flight.
                return Some(End { now, stop: Some(Stop::Interrupted(now)) });
            }
        }
        let Some(w) = next else {
            // Nothing left to do anywhere (the serial loop ends on an empty queue).
            return Some(End { now, stop: None });
        };
        if w > rule.horizon {
            if let Some(s) = rule.check(w, busy.idle(), Time(last_acked.max(Time(busy.since().0)).0)) {
                let at = match s {
                    Stop::Stalled(_, deadline) => deadline,
                    Stop::End(end) | Stop::Interrupted(end) => end,
                };
                return Some(End { now: at, stop: Some(s) });
            }
        }
        let end = w.saturating_add(plan.lookahead).min(rule.horizon.saturating_add(Time(1)));
        window_start = Some(bound);
        bound = time_point(end);
        safe = safe.max(time_point(w));
    }
}

/// Records the closed quiet interval [s, e): it may close the open one that started at `s`.
fn close_or_push(v: &mut Vec<(Point, Point)>, s: Point, e: Point) {
    match v.last_mut() {
        Some(last) if last.0 == s && last.1 == u128::MAX => last.1 = e,
        _ => v.push((s, e)),
    }
}

/// Records that the partition is quiet since `s` (and still is).
fn open_interval(v: &mut Vec<(Point, Point)>, s: Point) {
    if !v.last().is_some_and(|last| last.0 == s && last.1 == u128::MAX) {
        v.push((s, u128::MAX));
    }
}

/// The first event point in [safe, known) at which every partition is quiet. Such a point is
/// where the last partition became quiet, so only the starts of quiet intervals are candidates.
fn first_all_quiet(quiet: &[Vec<(Point, Point)>], safe: Point, known: Point) -> Option<Point> {
    let mut candidates: Vec<Point> = quiet.iter().flatten().map(|&(s, _)| s).filter(|&s| s >= safe && s < known && s & 1 == 1).collect();
    candidates.sort_unstable();
    candidates.into_iter().find(|&p| quiet.iter().all(|q| q.iter().any(|&(s, e)| s <= p && p < e)))
}

/// The partition is the kernel's boundary: what a network handler sends to another
/// partition's element goes through it.
impl Boundary for Partition {
    #[inline]
    fn remote(&self, node: NodeId) -> bool {
        Partition::remote(self, node)
    }

    fn send_packet(&mut self, node: NodeId, at: Time, pkt: &Packet, int: Option<&IntStack>) {
        Partition::send_packet(self, node, at, pkt, int)
    }

    fn send_pfc_frame(&mut self, node: NodeId, at: Time, port: PortId, pause: bool) {
        self.send(node, Message::Frame { at, port, pause })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_order_by_time_then_key_and_time_points_come_first() {
        assert!(event_point(Time(5), 7) < event_point(Time(5), 8));
        assert!(event_point(Time(5), u32::MAX) < time_point(Time(6)));
        assert!(time_point(Time(5)) < event_point(Time(5), 0));
        assert_eq!(point_time(event_point(Time(123_456), 99)), Time(123_456));
    }

    #[test]
    fn the_stop_is_where_the_last_partition_falls_quiet() {
        let p = |t| event_point(t, 1);
        // Partition 0 is quiet over [2, 5) and from 8; partition 1 from 4 on.
        let quiet = vec![vec![(p(Time(2)), p(Time(5))), (p(Time(8)), u128::MAX)], vec![(p(Time(4)), u128::MAX)]];
        assert_eq!(first_all_quiet(&quiet, 0, p(Time(100))), Some(p(Time(4))));
        // Beyond what is known, nothing is decided.
        assert_eq!(first_all_quiet(&quiet, 0, p(Time(4))), None);
        // Once [0, 5) is verified, the next candidate is 8.
        assert_eq!(first_all_quiet(&quiet, p(Time(5)), p(Time(100))), Some(p(Time(8))));
        // A partition never quiet keeps the run going.
        let busy = vec![vec![(p(Time(2)), u128::MAX)], vec![]];
        assert_eq!(first_all_quiet(&busy, 0, p(Time(100))), None);
    }
}
