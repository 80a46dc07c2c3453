//! Runs the traffic graph ([`super::graph`]) as an element: releases tasks whose dependencies
//! fired, offers ready messages to their connections, and turns the messages the hosts report
//! delivered (at the receiver) and completed (at the sender) into dependency firings.
//!
//! Its state is [`TaskState`]; its handlers are methods that get a [`Driver`]: what the workload
//! may ask of the rest of the simulation (the clock, a task's ready event, offering a message to
//! a connection, the next message a connection delivered or completed, and in a partitioned run
//! whether an edge is this partition's). The engine implements it (`engine/dispatch.rs`): the
//! connection's message gate and the NIC are the hosts' business, the workload only sees
//! messages.
//!
//! Firing is iterative (a work stack), never recursive, so a long chain of joins cannot grow
//! the call stack. A send over several queue pairs fires its delivery edges through that stack
//! too, when its last part arrives, as the join over its parts did when each was a task.

use super::graph::{Message, TaskKind, Traffic, Trigger};
use crate::units::Time;

/// What the workload asks of the simulation running it.
pub trait Driver {
    /// The clock.
    fn now(&self) -> Time;
    /// Task `t`'s dependencies are met and it may fire at `at` (later than now): an event.
    fn schedule_task(&mut self, at: Time, t: u32);
    /// Whether the edge from task `from` to task `to`, firing at `at`, is this simulation's to
    /// apply (a partition applies only its own; a serial run all).
    fn applies_here(&mut self, from: u32, to: u32, at: Time) -> bool;
    /// Messages handed to connections and not yet completed changed by `delta`.
    fn outstanding_changed(&mut self, delta: i32);
    /// Connection `conn` gets message `msg` (`None`: nothing new, its gate may let more
    /// through now) and posts as many as its gate lets through; the ids of those posted are
    /// appended to `posted`.
    fn offer(&mut self, conn: u32, msg: Option<u32>, posted: &mut Vec<u32>);
    /// The next message of `conn` delivered in order at the receiver now, if its packets up to
    /// `end` hold one that was not reported yet.
    fn next_delivered(&mut self, conn: u32, end: u32) -> Option<u32>;
    /// The next message of `conn` its sender now holds fully acknowledged, if any.
    fn next_completed(&mut self, conn: u32) -> Option<u32>;
}

/// Run-time state of the graph.
///
/// A task's wait and its firing share one time ([`TaskState::time`]): a large collective has
/// tens of millions of tasks, and the time it may fire is not needed once it has fired. Times
/// per message (per part of a send) are kept only for `messages.csv` (`run.message_log`).
#[derive(Debug, Default)]
pub struct TaskState {
    /// Unfired incoming edges per task, with [`FIRED`] set once the task fired.
    deps_left: Vec<u32>,
    /// Until the task fires, the latest (trigger time + delay) over its fired edges; then when it
    /// fired (a send: when it handed its parts to their connections' gates).
    time: Vec<Time>,
    /// Sends: when the last part was delivered at the receiver; `Time::MAX` if not yet.
    pub delivered_at: Vec<Time>,
    /// Sends: when the last part completed at the sender; `Time::MAX` if not yet.
    pub completed_at: Vec<Time>,
    /// Sends: parts not yet delivered (changed at the receiver).
    parts_undelivered: Vec<u8>,
    /// Sends: parts not yet completed (changed at the sender).
    parts_uncompleted: Vec<u8>,
    /// Per message when the message log is on (else empty): posted, delivered, completed.
    pub message_log: MessageTimes,
    /// Collective instances: (start, end), `Time::MAX` while unknown.
    pub instance_span: Vec<(Time, Time)>,
    /// Tasks ready to fire now, and sends (flagged [`DELIVERED`]) whose delivery edges fire now.
    stack: Vec<u32>,
    /// Messages completed so far.
    pub sends_completed: u32,
    /// Tasks scheduled to fire later (a compute delay, a not-before time) that have not yet:
    /// a run is not over while one is (a step's last kernels run after its last message).
    pub waiting: u32,
    /// Scratch: the messages a gate let through on one offer (kept to reuse its buffer).
    posted: Vec<u32>,
}

/// The flag of [`TaskState::deps_left`] that says the task fired (a task waits for fewer than
/// 2^31 edges: `GraphSize::fits_ids`).
const FIRED: u32 = 1 << 31;

/// The flag of a [`TaskState::stack`] entry that fires a send's delivery edges (task ids stay
/// below the event queue's 2^28 entities, checked when a run is built).
const DELIVERED: u32 = 1 << 31;

/// Counts a send's part done at `now` against its parts `left`; at the last, sets the send's
/// time `at` and returns true.
#[inline]
fn count_part(left: &mut u8, at: &mut Time, now: Time) -> bool {
    *left -= 1;
    if *left == 0 {
        *at = now;
    }
    *left == 0
}

/// Times of each message (`messages.csv`), `Time::MAX` while unknown; every list is empty when
/// the message log is off.
#[derive(Debug, Default, Clone)]
pub struct MessageTimes {
    /// When its gate let it through.
    pub posted: Vec<Time>,
    /// When its last byte was delivered in order at the receiver.
    pub delivered: Vec<Time>,
    /// When the sender saw it fully acknowledged.
    pub completed: Vec<Time>,
}

/// Message `m`'s entry of `times` is `now`, where the message log keeps times.
#[inline]
fn log_time(times: &mut [Time], m: u32, now: Time) {
    if let Some(at) = times.get_mut(m as usize) {
        *at = now;
    }
}

impl TaskState {
    /// Initial state for `traffic`, with per-message times if `log_messages`.
    pub fn new(traffic: &Traffic, log_messages: bool) -> Self {
        let tasks = traffic.tasks.len();
        let parts: Vec<u8> = traffic.tasks.iter().map(|t| if let TaskKind::Send { parts, .. } = t.kind() { parts as u8 } else { 0 }).collect();
        let per_message = if log_messages { traffic.sends.len() } else { 0 };
        TaskState {
            deps_left: traffic.tasks.iter().map(|t| t.deps()).collect(),
            time: vec![Time::ZERO; tasks],
            delivered_at: vec![Time::MAX; tasks],
            completed_at: vec![Time::MAX; tasks],
            parts_undelivered: parts.clone(),
            parts_uncompleted: parts,
            message_log: MessageTimes { posted: vec![Time::MAX; per_message], delivered: vec![Time::MAX; per_message], completed: vec![Time::MAX; per_message] },
            instance_span: vec![(Time::MAX, Time::MAX); traffic.instances.len()],
            stack: Vec::new(),
            sends_completed: 0,
            waiting: 0,
            posted: Vec::new(),
        }
    }

    /// When task `t` fired (for a send: posted its parts to their connections' gates);
    /// `Time::MAX` if not yet.
    #[inline]
    pub fn fired_at(&self, t: usize) -> Time {
        if self.deps_left[t] & FIRED != 0 {
            self.time[t]
        } else {
            Time::MAX
        }
    }

    /// Task `t` fired at `now`.
    #[inline]
    fn set_fired(&mut self, t: u32, now: Time) {
        self.deps_left[t as usize] |= FIRED;
        self.time[t as usize] = now;
    }

    /// Whether the message log is on.
    pub fn logs_messages(&self) -> bool {
        !self.message_log.posted.is_empty()
    }

    /// A part of send `t` was delivered at `now`; true when it was the last.
    #[inline]
    fn part_delivered(&mut self, t: u32, now: Time) -> bool {
        count_part(&mut self.parts_undelivered[t as usize], &mut self.delivered_at[t as usize], now)
    }

    /// A part of send `t` completed at `now`; true when it was the last.
    #[inline]
    fn part_completed(&mut self, t: u32, now: Time) -> bool {
        count_part(&mut self.parts_uncompleted[t as usize], &mut self.completed_at[t as usize], now)
    }

    /// Sets task `t`'s wait, `deps_left` edges left and ready at `ready_at` so far, unless it
    /// fired (the coordinator's joins, whose inputs it counted itself).
    pub(crate) fn set_wait(&mut self, t: usize, deps_left: u32, ready_at: Time) {
        if self.fired_at(t) == Time::MAX {
            self.deps_left[t] = deps_left;
            self.time[t] = ready_at;
        }
    }
}

impl TaskState {
    /// Join `t` (of kind `kind`) fires at `now`: its firing time, and an instance marker's
    /// start or end.
    pub(crate) fn record_fire(&mut self, kind: TaskKind, t: u32, now: Time) {
        match kind {
            TaskKind::Begin(i) => self.instance_span[i as usize].0 = now,
            TaskKind::End(i) => self.instance_span[i as usize].1 = now,
            TaskKind::Join | TaskKind::Send { .. } => {}
        }
        self.set_fired(t, now);
    }

    /// Takes the entries another partition changed from their initial values `init` (each
    /// task's entries change in one partition only: the one that runs the task, or for a send's
    /// deliveries the receiver's), and adds its completed messages.
    pub(crate) fn absorb(&mut self, o: &TaskState, init: &TaskState) {
        fn take<T: Copy + PartialEq>(mine: &mut [T], theirs: &[T], init: &[T]) {
            for ((m, &t), &i) in mine.iter_mut().zip(theirs).zip(init) {
                if t != i {
                    *m = t;
                }
            }
        }
        take(&mut self.deps_left, &o.deps_left, &init.deps_left);
        take(&mut self.time, &o.time, &init.time);
        take(&mut self.delivered_at, &o.delivered_at, &init.delivered_at);
        take(&mut self.completed_at, &o.completed_at, &init.completed_at);
        take(&mut self.parts_undelivered, &o.parts_undelivered, &init.parts_undelivered);
        take(&mut self.parts_uncompleted, &o.parts_uncompleted, &init.parts_uncompleted);
        take(&mut self.message_log.posted, &o.message_log.posted, &init.message_log.posted);
        take(&mut self.message_log.delivered, &o.message_log.delivered, &init.message_log.delivered);
        take(&mut self.message_log.completed, &o.message_log.completed, &init.message_log.completed);
        // An instance's start and end can be set in different partitions (a start marker that
        // runs everywhere, an end marker that runs in one): each half on its own.
        for ((m, t), i) in self.instance_span.iter_mut().zip(&o.instance_span).zip(&init.instance_span) {
            if t.0 != i.0 {
                m.0 = t.0;
            }
            if t.1 != i.1 {
                m.1 = t.1;
            }
        }
        self.sends_completed += o.sends_completed;
    }
}

impl TaskState {
    /// A `TaskReady` event: the task's dependencies fired and its time has come.
    pub fn on_task_ready(&mut self, d: &mut impl Driver, traffic: &Traffic, t: u32) {
        self.waiting = self.waiting.saturating_sub(1);
        self.fire_task(d, traffic, t);
        self.run_ready_tasks(d, traffic);
    }

    /// One of task `to`'s dependencies is satisfied at `at`.
    pub fn satisfy(&mut self, d: &mut impl Driver, traffic: &Traffic, to: u32, at: Time) {
        let i = to as usize;
        debug_assert!(self.deps_left[i] & FIRED == 0 && self.deps_left[i] > 0, "task {to} satisfied after it fired or beyond its dependencies");
        self.time[i] = self.time[i].max(at);
        self.deps_left[i] -= 1;
        if self.deps_left[i] == 0 {
            let when = self.time[i].max(traffic.tasks[i].not_before());
            if when > d.now() {
                self.waiting += 1;
                d.schedule_task(when, to);
            } else {
                self.stack.push(to);
            }
        }
    }

    /// Fires the edges of task `t` that wait for `on` (joins fire all their edges).
    fn propagate(&mut self, d: &mut impl Driver, traffic: &Traffic, t: u32, on: Option<Trigger>) {
        let now = d.now();
        for e in traffic.edges_of(t) {
            if on.is_none_or(|o| o == e.on) {
                let at = now + e.delay;
                // A partitioned run: the edge may be another partition's or the coordinator's.
                if d.applies_here(t, e.to, at) {
                    self.satisfy(d, traffic, e.to, at);
                }
            }
        }
    }

    fn run_ready_tasks(&mut self, d: &mut impl Driver, traffic: &Traffic) {
        while let Some(t) = self.stack.pop() {
            if t & DELIVERED != 0 {
                self.propagate(d, traffic, t & !DELIVERED, Some(Trigger::Delivered));
            } else {
                self.fire_task(d, traffic, t);
            }
        }
    }

    fn fire_task(&mut self, d: &mut impl Driver, traffic: &Traffic, t: u32) {
        let now = d.now();
        match traffic.tasks[t as usize].kind() {
            TaskKind::Send { .. } => {
                self.set_fired(t, now);
                // Last part first: the order the task stack released a chunk's parts in when
                // each was a task of its own (pushed in order, popped last first), so that
                // outputs did not change when they became one task.
                for m in traffic.messages_of(t).rev() {
                    d.outstanding_changed(1);
                    self.offer(d, traffic.message(m).conn, Some(m));
                }
                return;
            }
            kind => self.record_fire(kind, t, now),
        }
        self.propagate(d, traffic, t, None);
    }

    /// Offers connection `c` message `m` (or nothing new) and logs what its gate let through.
    fn offer(&mut self, d: &mut impl Driver, c: u32, m: Option<u32>) {
        let mut posted = std::mem::take(&mut self.posted);
        d.offer(c, m, &mut posted);
        let now = d.now();
        for &m in &posted {
            log_time(&mut self.message_log.posted, m, now);
        }
        posted.clear();
        self.posted = posted;
    }

    /// The receiver of connection `c` holds its packets below `end` in order: the messages
    /// among them not yet reported are delivered.
    pub fn on_delivered(&mut self, d: &mut impl Driver, traffic: &Traffic, c: u32, end: u32) {
        let now = d.now();
        while let Some(msg) = d.next_delivered(c, end) {
            log_time(&mut self.message_log.delivered, msg, now);
            let t = traffic.sends[msg as usize];
            if self.part_delivered(t, now) {
                match traffic.tasks[t as usize].kind() {
                    // Several parts: the stack, where the join over the parts once fired.
                    TaskKind::Send { parts, .. } if parts > 1 => self.stack.push(t | DELIVERED),
                    _ => self.propagate(d, traffic, t, Some(Trigger::Delivered)),
                }
            }
        }
        self.run_ready_tasks(d, traffic);
    }

    /// The sender of connection `c` holds new messages fully acknowledged: they complete, and
    /// its gate may let more through.
    pub fn on_completed(&mut self, d: &mut impl Driver, traffic: &Traffic, c: u32) {
        let now = d.now();
        while let Some(msg) = d.next_completed(c) {
            let Message { task, .. } = traffic.message(msg);
            log_time(&mut self.message_log.completed, msg, now);
            self.sends_completed += 1;
            d.outstanding_changed(-1);
            if self.part_completed(task, now) {
                self.propagate(d, traffic, task, Some(Trigger::Completed));
            }
        }
        self.offer(d, c, None);
        self.run_ready_tasks(d, traffic);
    }
}
