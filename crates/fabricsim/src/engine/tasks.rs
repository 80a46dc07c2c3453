//! Runs the traffic graph (`workload/graph.rs`): releases tasks whose dependencies fired, posts
//! ready messages to their connections through the connection's message gate, and turns
//! deliveries and completions reported by the transport into dependency firings.
//!
//! Firing is iterative (a work stack), never recursive, so a long chain of joins cannot grow
//! the call stack. A send over several queue pairs fires its delivery edges through that stack
//! too, when its last part arrives, as the join over its parts did when each was a task.

use super::queue::EventKind;
use super::Sim;
use crate::transport::cc::CongestionControl;
use crate::transport::gate::{GateState, MessageFeedback, MessageGate};
use crate::units::Time;
use crate::workload::graph::{Message, TaskKind, Traffic, Trigger};

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
}

/// The flag of [`TaskState::deps_left`] that says the task fired (a task waits for fewer than
/// 2^31 edges: `GraphSize::fits_ids`).
const FIRED: u32 = 1 << 31;

/// The flag of a [`TaskState::stack`] entry that fires a send's delivery edges (task ids stay
/// below the event queue's 2^28 entities: `Sim::unseeded_with_pool`).
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
            time: vec![0; tasks],
            delivered_at: vec![Time::MAX; tasks],
            completed_at: vec![Time::MAX; tasks],
            parts_undelivered: parts.clone(),
            parts_uncompleted: parts,
            message_log: MessageTimes { posted: vec![Time::MAX; per_message], delivered: vec![Time::MAX; per_message], completed: vec![Time::MAX; per_message] },
            instance_span: vec![(Time::MAX, Time::MAX); traffic.instances.len()],
            stack: Vec::new(),
            sends_completed: 0,
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

impl Sim {
    /// A `TaskReady` event: the task's dependencies fired and its time has come.
    pub(crate) fn on_task_ready(&mut self, t: u32) {
        self.fire_task(t);
        self.run_ready_tasks();
    }

    /// One of task `to`'s dependencies is satisfied at `at`.
    pub(crate) fn satisfy(&mut self, to: u32, at: Time) {
        let ts = &mut self.tasks;
        let i = to as usize;
        debug_assert!(ts.deps_left[i] & FIRED == 0 && ts.deps_left[i] > 0, "task {to} satisfied after it fired or beyond its dependencies");
        ts.time[i] = ts.time[i].max(at);
        ts.deps_left[i] -= 1;
        if ts.deps_left[i] == 0 {
            let when = ts.time[i].max(self.traffic.tasks[i].not_before());
            if when > self.k.now {
                self.k.q.push(when, EventKind::TaskReady, to);
            } else {
                ts.stack.push(to);
            }
        }
    }

    /// Fires the edges of task `t` that wait for `on` (joins fire all their edges).
    fn propagate(&mut self, t: u32, on: Option<Trigger>) {
        let traffic = std::sync::Arc::clone(&self.traffic);
        let now = self.k.now;
        for e in traffic.edges_of(t) {
            if on.is_none_or(|o| o == e.on) {
                let at = now + e.delay;
                if let Some(part) = self.part_mut() {
                    // A partitioned run: the edge may be another partition's or the coordinator's.
                    if !part.applies_here(t, e.to, at) {
                        continue;
                    }
                }
                self.satisfy(e.to, at);
            }
        }
    }

    fn run_ready_tasks(&mut self) {
        while let Some(t) = self.tasks.stack.pop() {
            if t & DELIVERED != 0 {
                self.propagate(t & !DELIVERED, Some(Trigger::Delivered));
            } else {
                self.fire_task(t);
            }
        }
    }

    fn fire_task(&mut self, t: u32) {
        let now = self.k.now;
        match self.traffic.tasks[t as usize].kind() {
            TaskKind::Send { .. } => {
                self.tasks.set_fired(t, now);
                // Last part first: the order the task stack released a chunk's parts in when
                // each was a task of its own (pushed in order, popped last first), so that
                // outputs did not change when they became one task.
                for m in self.traffic.messages_of(t).rev() {
                    let conn = self.traffic.message(m).conn;
                    self.outstanding_changed(1);
                    self.hosts.lanes[conn as usize].pending.push_back(m);
                    self.try_post(conn);
                }
                return;
            }
            kind => self.tasks.record_fire(kind, t, now),
        }
        self.propagate(t, None);
    }

    /// Posts the connection's pending messages as far as its gate allows.
    fn try_post(&mut self, c: u32) {
        let (now, mss) = (self.k.now, self.hosts.tp.mss);
        let mut posted = false;
        while let Some(&m) = self.hosts.lanes[c as usize].pending.front() {
            let bytes = self.traffic.message(m).bytes;
            let lane = &mut self.hosts.lanes[c as usize];
            let st = GateState { now, in_flight_msgs: lane.in_flight_msgs, in_flight_bytes: lane.in_flight_bytes, next_bytes: bytes };
            if !lane.gate.may_post(&st) {
                break;
            }
            lane.pending.pop_front();
            lane.in_flight_msgs += 1;
            lane.in_flight_bytes += bytes;
            log_time(&mut self.tasks.message_log.posted, m, now);
            let conn = &mut self.hosts.conns[c as usize];
            if conn.idle() {
                // A message on an idle connection starts a flow: its pacer may delay it.
                let j = conn.cc.start_jitter();
                if j > 0 {
                    let d = conn.rng.below(j + 1);
                    conn.next_send = conn.next_send.max(now + d);
                    conn.pace_idle = false;
                }
            }
            conn.post(m, bytes, mss, now);
            let dst = conn.dst;
            if let Some(part) = self.part_mut().filter(|p| p.remote(dst)) {
                // The receiver's half of the connection, in another partition, learns the
                // message's boundaries from this.
                part.send(dst, crate::engine::parallel::Message::Post { conn: c, msg: m, bytes, at: now });
            }
            if self.hosts.credits.on {
                self.hosts.credits.on_post(c, &self.hosts.conns[c as usize]);
            }
            posted = true;
        }
        if posted {
            self.conn_wake(c);
        }
    }

    /// The receiver of connection `c` has new messages complete in order.
    pub(crate) fn deliver_messages(&mut self, c: u32, end: u32) {
        let now = self.k.now;
        loop {
            let conn = &mut self.hosts.conns[c as usize];
            let r = &mut self.hosts.rx[c as usize];
            let i = r.next_msg(conn.msgs_retired);
            let Some(m) = conn.msgs.get_mut(i) else { break };
            if m.end_pkt > end {
                break;
            }
            m.delivered_at = now;
            let msg = m.msg;
            r.msgs_delivered += 1;
            log_time(&mut self.tasks.message_log.delivered, msg, now);
            let t = self.traffic.sends[msg as usize];
            if self.tasks.part_delivered(t, now) {
                match self.traffic.tasks[t as usize].kind() {
                    // Several parts: the stack, where the join over the parts once fired.
                    TaskKind::Send { parts, .. } if parts > 1 => self.tasks.stack.push(t | DELIVERED),
                    _ => self.propagate(t, Some(Trigger::Delivered)),
                }
            }
        }
        self.run_ready_tasks();
    }

    /// The sender of connection `c` has new messages fully acknowledged.
    pub(crate) fn complete_messages(&mut self, c: u32) {
        let now = self.k.now;
        loop {
            let conn = &mut self.hosts.conns[c as usize];
            let Some(&m) = conn.msgs.front() else { break };
            // Acknowledged (and, where the mode completes on settle, reported done) implies
            // sent and delivered.
            if m.end_pkt > conn.snd_una.min(conn.settled_end) {
                break;
            }
            conn.msgs.pop_front();
            conn.msgs_sent -= 1;
            conn.msgs_retired += 1;
            let Message { task, bytes, .. } = self.traffic.message(m.msg);
            let lane = &mut self.hosts.lanes[c as usize];
            lane.in_flight_msgs -= 1;
            lane.in_flight_bytes -= bytes;
            let fb = MessageFeedback {
                now,
                bytes,
                posted_at: m.posted_at,
                first_tx: m.first_tx,
                delivered_at: m.delivered_at,
                rtt_max: m.rtt_max,
                rtt_mean: m.rtt_sum.checked_div(m.rtt_samples as u64).unwrap_or(0),
                in_flight_msgs: lane.in_flight_msgs,
            };
            if let Some(u) = lane.gate.on_complete(&fb) {
                if self.tracer.log_gates {
                    self.tracer.gate_updates.push((now, c, u));
                }
            }
            log_time(&mut self.tasks.message_log.completed, m.msg, now);
            self.tasks.sends_completed += 1;
            self.outstanding_changed(-1);
            if self.tasks.part_completed(task, now) {
                self.propagate(task, Some(Trigger::Completed));
            }
        }
        self.try_post(c);
        self.run_ready_tasks();
    }
}
