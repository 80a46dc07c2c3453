//! The traffic graph every workload compiles to: connections (queue pairs), messages posted on
//! them, and the dependencies between messages.
//!
//! A *message* is one unit handed to the transport (a flow, or one chunk of a collective step,
//! posted as one work request). Messages on a connection are sent in posting order, like work
//! requests on an RDMA queue pair, so the transport state (window, rate, entropies) carries from
//! one message to the next. A *send* task posts one message, or a chunk split evenly over
//! several queue pairs as one message per pair (its *parts*), once all its dependencies have
//! fired and its earliest start time has come; it is delivered (completed) when all its parts
//! are. One task per chunk, not per part: a collective over 4 queue pairs has tens of millions
//! of parts.
//!
//! Dependencies are edges `from → to` that fire when `from` is *delivered* (its last byte reached
//! the receiver in order: the receiving rank may use it) or *completed* (the sender saw its last
//! byte acknowledged: the sender may reuse the buffer and the work request completes), each with
//! an optional delay (compute time). Joins are zero-cost nodes that fire when all their inputs
//! have; they turn `n × m` dependencies into `n + m` edges (e.g. "every part of a chunk sent over
//! 4 queue pairs has arrived") and mark where collective instances begin and end.

use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::{Bytes, Time};
use serde::Serialize;

/// A connection (queue pair) between two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnSpec {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
}

/// What a task of the graph is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    /// Post `bytes` payload bytes as `parts` messages of (nearly) equal size, one on each of
    /// its connections ([`Traffic::messages_of`]).
    Send {
        /// Messages (queue pairs), 1 to [`MAX_PARTS`].
        parts: u32,
        /// Payload bytes (at least one per part).
        bytes: u64,
    },
    /// Fires when all its inputs have.
    Join,
    /// Fires when collective instance `.0` starts (a join; its time is the instance's start).
    Begin(u32),
    /// Fires when collective instance `.0` has finished (a join over all its messages).
    End(u32),
}

/// One node of the graph, 24 bytes: a large collective holds tens of millions of them, so the
/// kind and its small operand share one word.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// The kind in the top two bits ([`KIND_SHIFT`]); a send's parts in the rest.
    head: u32,
    /// Number of incoming edges.
    deps: u32,
    /// A send's payload bytes; an instance marker's instance.
    operand: u64,
    /// It does not fire before this time.
    not_before: Time,
}

/// Where [`Task::head`] keeps the kind.
const KIND_SHIFT: u32 = 30;
/// The most parts (queue pairs) of one send.
pub const MAX_PARTS: u32 = 16;
const SEND: u32 = 0;
const JOIN: u32 = 1;
const BEGIN: u32 = 2;
const END: u32 = 3;

impl Task {
    fn new(kind: TaskKind, not_before: Time) -> Task {
        let (tag, parts, operand) = match kind {
            TaskKind::Send { parts, bytes } => {
                debug_assert!((1..=MAX_PARTS).contains(&parts), "a send of {parts} parts");
                (SEND, parts, bytes)
            }
            TaskKind::Join => (JOIN, 0, 0),
            TaskKind::Begin(i) => (BEGIN, 0, i as u64),
            TaskKind::End(i) => (END, 0, i as u64),
        };
        Task { head: tag << KIND_SHIFT | parts, deps: 0, operand, not_before }
    }

    /// What it is.
    #[inline]
    pub fn kind(&self) -> TaskKind {
        match self.head >> KIND_SHIFT {
            SEND => TaskKind::Send { parts: self.head & ((1 << KIND_SHIFT) - 1), bytes: self.operand },
            JOIN => TaskKind::Join,
            BEGIN => TaskKind::Begin(self.operand as u32),
            _ => TaskKind::End(self.operand as u32),
        }
    }

    /// Number of incoming edges.
    #[inline]
    pub fn deps(&self) -> u32 {
        self.deps
    }

    /// It does not fire before this time.
    #[inline]
    pub fn not_before(&self) -> Time {
        self.not_before
    }
}

/// When an edge fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Trigger {
    /// When the source message has been delivered to its receiver (joins: when they fire).
    Delivered,
    /// When the source message has been fully acknowledged at its sender (joins: when they fire).
    Completed,
}

/// A dependency edge, as [`Traffic::edges_of`] gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The dependent task.
    pub to: u32,
    /// What event of the source fires it.
    pub on: Trigger,
    /// Delay between that event and the dependency being satisfied (e.g. compute time).
    pub delay: Time,
}

/// An edge as stored, 8 bytes: a graph holds a few edges per message, and a collective with
/// 4 queue pairs tens of millions of them. The trigger is the top bit of `packed`; the rest
/// indexes the graph's table of distinct delays (a handful: 0 and the compute gaps).
#[derive(Clone, Copy, Debug, Default)]
struct PackedEdge {
    to: u32,
    packed: u32,
}

const COMPLETED_BIT: u32 = 1 << 31;

impl PackedEdge {
    /// `to`, fired on `on`, after the delay at `delay_index` of the graph's table.
    fn new(to: u32, on: Trigger, delay_index: u32) -> Self {
        // At most one distinct delay per edge, and `GraphSize::fits_ids` keeps edges below 2^31.
        debug_assert!(delay_index < COMPLETED_BIT);
        PackedEdge { to, packed: delay_index | if on == Trigger::Completed { COMPLETED_BIT } else { 0 } }
    }

    fn unpack(self, delays: &[Time]) -> Edge {
        let on = if self.packed & COMPLETED_BIT != 0 { Trigger::Completed } else { Trigger::Delivered };
        Edge { to: self.to, on, delay: delays[(self.packed & !COMPLETED_BIT) as usize] }
    }
}

/// One run of a collective by one job (one row of `ccts.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct Instance {
    /// Job index.
    pub job: u32,
    /// Iteration of the job's sequence.
    pub iteration: u32,
    /// Position of the collective in the job's sequence.
    pub step: u32,
    /// Operation name (e.g. `allreduce`).
    pub op: &'static str,
    /// Algorithm name (e.g. `ring`).
    pub algorithm: &'static str,
    /// Ranks taking part.
    pub ranks: u32,
    /// Data size per rank, bytes (the operation's `bytes`).
    pub bytes: Bytes,
    /// Bytes each rank sends over its NIC under the algorithm's bus-bandwidth formula.
    pub bus_bytes: Bytes,
    /// Chunk (message) size of the instance.
    pub chunk: u64,
    /// Pipeline-fill hops of the algorithm: chunk-sized store-and-forward hops on the critical
    /// path that do not overlap with the bulk transfer (ideal-time latency term), the last of
    /// them the busiest sender's own final chunk, whose serialization the bulk already counts.
    pub fill_hops: u32,
    /// Chunk hops of the longest dependency chain (a chunk crossing every step in turn): bounds
    /// the time from below when messages are too small to keep links busy.
    pub chain_hops: u32,
    /// Round trips on the critical path (rounds that wait for the previous round's completion).
    pub rtt_rounds: u32,
    /// Channels: independent copies of the algorithm, each on its share of the bytes (a
    /// chunk on a dependency chain carries at most a channel's step).
    pub channels: u32,
    /// The parallelism group it serves in a training step (`tp`, `pp`, `dp`, `ep`); empty
    /// elsewhere.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub group: &'static str,
    /// An analytic instance's duration: it moves no packets and takes this long from its start
    /// (a training step's scale-up collectives, `parallelism.tp_network = "analytic"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<Time>,
    /// The host of its first rank.
    #[serde(skip)]
    pub first_host: u32,
}

impl Instance {
    /// Whether it is analytic: a delay of its `fixed` duration (TP on a scale-up domain) that
    /// sends no packet.
    pub fn is_analytic(&self) -> bool {
        self.fixed.is_some()
    }

    /// The payload bytes of one chunk hop on the dependency chain: a chunk, but at most the
    /// data of one step of one channel (at least one byte).
    pub fn hop_chunk(&self) -> u64 {
        let steps = self.chain_hops.max(1) as u64 * self.channels.max(1) as u64;
        self.chunk.min((self.bus_bytes.0 / steps).max(1))
    }
}

/// The group kinds of a training step's communication, as `ccts.csv` and the summary name them:
/// tensor, pipeline, data and expert parallelism, and communication no kind labels (a trace's).
pub const GROUP_KINDS: [&str; 5] = ["tp", "pp", "dp", "ep", "other"];

/// The index in [`GROUP_KINDS`] of group kind `name`.
pub fn group_index(name: &str) -> Option<usize> {
    GROUP_KINDS.iter().position(|g| *g == name)
}

/// What a task of a training step is ([`StepMap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Part of the collective instance whose start marker came last before it.
    Collective,
    /// A compute kernel: a join whose incoming edges carry its duration.
    Compute,
    /// A point-to-point message of group kind [`GROUP_KINDS`]`[k]`.
    Message(u8),
    /// A zero-cost join (a stream's start, an arrival, an iteration's end).
    Marker,
}

/// What each task of a training step is, and where its iterations end (workloads with
/// compute and point-to-point messages beside collectives).
#[derive(Clone, Debug, Default)]
pub struct StepMap {
    /// Per task, its role.
    pub roles: Vec<Role>,
    /// Per iteration, the join that fires when every GPU has finished it.
    pub iteration_ends: Vec<u32>,
    /// What `fabricsim check` shows of the step (its shape, FLOPs and bytes).
    pub lines: Vec<String>,
}

/// What a workload's graph will hold, counted before it is generated (see [`crate::budget`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphSize {
    /// Flows listed before compiling (flow workloads).
    pub flows: u64,
    /// Connections.
    pub conns: u64,
    /// Tasks: messages, joins, instance markers.
    pub tasks: u64,
    /// Of the tasks, messages.
    pub messages: u64,
    /// Dependency edges.
    pub edges: u64,
}

impl GraphSize {
    /// The size of `n` graphs like this one (saturating).
    pub fn times(self, n: u64) -> GraphSize {
        GraphSize {
            flows: self.flows.saturating_mul(n),
            conns: self.conns.saturating_mul(n),
            tasks: self.tasks.saturating_mul(n),
            messages: self.messages.saturating_mul(n),
            edges: self.edges.saturating_mul(n),
        }
    }

    /// Both graphs together (saturating).
    pub fn plus(self, o: GraphSize) -> GraphSize {
        GraphSize {
            flows: self.flows.saturating_add(o.flows),
            conns: self.conns.saturating_add(o.conns),
            tasks: self.tasks.saturating_add(o.tasks),
            messages: self.messages.saturating_add(o.messages),
            edges: self.edges.saturating_add(o.edges),
        }
    }

    /// Bytes generating it takes at the peak ([`crate::budget`]'s costs).
    pub fn bytes(&self) -> f64 {
        use crate::budget::{BYTES_PER_CONN, BYTES_PER_EDGE, BYTES_PER_FLOW, BYTES_PER_MESSAGE, BYTES_PER_TASK};
        self.flows as f64 * BYTES_PER_FLOW
            + self.conns as f64 * BYTES_PER_CONN
            + self.tasks as f64 * BYTES_PER_TASK
            + self.messages as f64 * BYTES_PER_MESSAGE
            + self.edges as f64 * BYTES_PER_EDGE
    }

    /// Bytes its connections and tasks take while the run holds them, at the least
    /// ([`crate::budget`]'s costs; the packets in flight and the fabric come on top).
    pub fn run_bytes(&self) -> f64 {
        use crate::budget::{BYTES_PER_CONN_RUN, BYTES_PER_TASK_RUN};
        self.conns as f64 * BYTES_PER_CONN_RUN + self.tasks as f64 * BYTES_PER_TASK_RUN
    }

    /// Whether its ids fit the graph's 32-bit indices (tasks, connections, messages), and its
    /// edges the 31 bits that index their delays.
    pub fn fits_ids(&self) -> bool {
        [self.conns, self.tasks, self.messages].iter().all(|&n| n < u32::MAX as u64) && self.edges < (1 << 31)
    }

    /// The counts for a message.
    pub fn describe(&self) -> String {
        format!("{} messages ({} graph tasks, {} dependencies) on {} connections", self.messages, self.tasks, self.edges, self.conns)
    }

    /// The size of `traffic` as generated.
    pub fn of(t: &Traffic) -> GraphSize {
        GraphSize { flows: 0, conns: t.conns.len() as u64, tasks: t.tasks.len() as u64, messages: t.sends.len() as u64, edges: t.edge_count() as u64 }
    }
}

/// One message: a send task's part on one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its send task.
    pub task: u32,
    /// Its connection.
    pub conn: u32,
    /// Its payload bytes: the send's bytes split evenly, the first parts taking the remainder.
    pub bytes: Bytes,
}

/// A workload compiled to connections, tasks and edges.
#[derive(Clone, Debug, Default)]
pub struct Traffic {
    /// Connections, indexed by connection id.
    pub conns: Vec<ConnSpec>,
    /// Tasks, indexed by task id.
    pub tasks: Vec<Task>,
    /// Edges of task `t` are `edges[edge_start[t]..edge_start[t + 1]]`.
    edge_start: Vec<u32>,
    /// All edges, grouped by source task.
    edges: Vec<PackedEdge>,
    /// The distinct edge delays (index 0 holds 0).
    delays: Vec<Time>,
    /// Collective instances (empty for flow workloads).
    pub instances: Vec<Instance>,
    /// The send task of each message (its index is the message id: messages are numbered in
    /// creation order, a send's parts consecutively).
    pub sends: Vec<u32>,
    /// The connection of each message.
    message_conn: Vec<u32>,
    /// A send task's first message (`u32::MAX` for other tasks).
    first_message: Vec<u32>,
    /// Flow workloads under a message shaper (`[transport.shaper]`): application flow `f` is
    /// carried by connections `app_flows[f]..app_flows[f + 1]` (its sub-QPs, one sub-message
    /// each), so the list has one entry more than there are app flows. Empty without a shaper:
    /// every connection is then a flow of its own.
    pub app_flows: Vec<u32>,
    /// The HPCC ns-3 simulator's names of the nodes and of each connection's ports, when the
    /// workload read them from that simulator's files (`switch.lb = "ns3_ecmp"` hashes them).
    pub ns3: Option<std::sync::Arc<crate::net::switch_lb::ns3_ecmp::Ns3Naming>>,
    /// A training step's task roles and iteration ends (`None` for other workloads).
    pub step: Option<std::sync::Arc<StepMap>>,
}

impl Traffic {
    /// Edges leaving task `t`, in the order they were added.
    #[inline]
    pub fn edges_of(&self, t: u32) -> impl Iterator<Item = Edge> + '_ {
        let row = &self.edges[self.edge_start[t as usize] as usize..self.edge_start[t as usize + 1] as usize];
        row.iter().map(|e| e.unpack(&self.delays))
    }

    /// Number of dependency edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// When each task would fire if every task took `weight(t)` once its inputs had fired (an
    /// edge adding its delay, but for the edges out of collective start markers: an analytic
    /// instance's duration, which its end's weight stands for; both triggers alike) and none
    /// before its not-before time: the graph's longest paths, in topological order (Kahn's).
    /// With every weight zero this is the run on an infinitely fast network: what the compute
    /// delays alone take. Tasks on a cycle (none in a generated graph) stay at `Time::MAX`.
    pub fn longest_paths(&self, weight: impl Fn(u32) -> Time) -> Vec<Time> {
        let n = self.tasks.len();
        let mut left: Vec<u32> = self.tasks.iter().map(|t| t.deps).collect();
        let mut ready_at: Vec<Time> = self.tasks.iter().map(|t| t.not_before).collect();
        let mut done = vec![Time::MAX; n];
        let mut stack: Vec<u32> = (0..n as u32).filter(|&t| left[t as usize] == 0).collect();
        while let Some(t) = stack.pop() {
            let finish = ready_at[t as usize] + weight(t);
            done[t as usize] = finish;
            let starts_instance = matches!(self.tasks[t as usize].kind(), TaskKind::Begin(_));
            for e in self.edges_of(t) {
                let to = e.to as usize;
                let delay = if starts_instance { Time::ZERO } else { e.delay };
                ready_at[to] = ready_at[to].max(finish + delay);
                left[to] -= 1;
                if left[to] == 0 {
                    stack.push(e.to);
                }
            }
        }
        done
    }

    /// The start marker task of each collective instance, in instance order.
    pub fn instance_starts(&self) -> Vec<u32> {
        let mut starts = vec![u32::MAX; self.instances.len()];
        for (t, task) in self.tasks.iter().enumerate() {
            if let TaskKind::Begin(i) = task.kind() {
                starts[i as usize] = t as u32;
            }
        }
        starts
    }

    /// A training step's sends, each with the group kind it serves (an index into
    /// [`GROUP_KINDS`]): a point-to-point message its own, a collective's message its
    /// instance's; sends of no kind are left out, and every send without a step map.
    pub fn step_sends(&self) -> impl Iterator<Item = (u32, usize)> + '_ {
        let roles = self.step.as_ref().map_or(&[][..], |s| &s.roles[..]);
        let mut instance = None;
        roles.iter().enumerate().filter_map(move |(task, role)| {
            let kind = self.tasks[task].kind();
            if let TaskKind::Begin(i) = kind {
                instance = Some(i as usize);
            }
            if !matches!(kind, TaskKind::Send { .. }) {
                return None;
            }
            let k = match role {
                Role::Message(k) => Some(*k as usize),
                Role::Collective => instance.and_then(|i| group_index(self.instances[i].group)),
                _ => None,
            }?;
            Some((task as u32, k))
        })
    }

    /// Connections of app flow `f` (see [`Traffic::app_flows`]; only when it is not empty).
    pub fn conns_of_app_flow(&self, f: usize) -> std::ops::Range<usize> {
        self.app_flows[f] as usize..self.app_flows[f + 1] as usize
    }

    /// Total payload bytes of all messages (at most `u64::MAX`).
    pub fn total_bytes(&self) -> u64 {
        let total: u128 = self.tasks.iter().map(|t| if let TaskKind::Send { bytes, .. } = t.kind() { bytes as u128 } else { 0 }).sum();
        u64::try_from(total).unwrap_or(u64::MAX)
    }

    /// The messages (ids) send task `t` posts.
    #[inline]
    pub fn messages_of(&self, t: u32) -> std::ops::Range<u32> {
        let TaskKind::Send { parts, .. } = self.tasks[t as usize].kind() else { unreachable!("task {t} is no send") };
        let first = self.first_message[t as usize];
        first..first + parts
    }

    /// Message `m`.
    #[inline]
    pub fn message(&self, m: u32) -> Message {
        let task = self.sends[m as usize];
        let TaskKind::Send { parts, bytes } = self.tasks[task as usize].kind() else { unreachable!("message {m} of a task that is no send") };
        let k = (m - self.first_message[task as usize]) as u64;
        let parts = parts as u64;
        Message { task, conn: self.message_conn[m as usize], bytes: Bytes(bytes / parts + u64::from(k < bytes % parts)) }
    }

    /// Every message, in id order.
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        (0..self.sends.len() as u32).map(|m| self.message(m))
    }

    /// The connection of send task `t`'s first message (all its parts join the same two hosts).
    pub fn send_conn(&self, t: u32) -> u32 {
        self.message_conn[self.first_message[t as usize] as usize]
    }

    /// Checks that no connection carries more packets of `mss` payload bytes than a sequence
    /// number counts (2^32 − 1); the error names `key`, the workload key that sized them.
    pub fn check_packet_counts(&self, mss: u64, key: &str) -> Result<()> {
        let mut pkts = vec![0u64; self.conns.len()];
        for Message { conn, bytes, .. } in self.messages() {
            let p = &mut pkts[conn as usize];
            *p = p.saturating_add(bytes.div_ceil(Bytes(mss)).max(1));
            if *p >= u32::MAX as u64 {
                let c = &self.conns[conn as usize];
                return Err(Error::invalid(
                    key,
                    format!(
                        "the connection host {} -> host {} carries {} or more packets of {mss} payload bytes; allowed fewer than {} (2^32 − 1, about {} bytes) per connection",
                        c.src,
                        c.dst,
                        *p,
                        u32::MAX,
                        (u32::MAX as u64 - 1) * mss
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The size of this graph once striped over NIC ports as `planes_of` says
    /// ([`Traffic::striped`]): a connection per extra port pair of each connection, a message
    /// per extra port pair of each message.
    pub fn striped_size(&self, planes_of: &[Vec<(u32, u32)>]) -> GraphSize {
        let extra = |c: u32| planes_of[c as usize].len().saturating_sub(1) as u64;
        let conns = (0..self.conns.len() as u32).map(extra).sum();
        let messages = self.message_conn.iter().map(|&c| extra(c)).sum();
        GraphSize::of(self).plus(GraphSize { flows: 0, conns, tasks: 0, messages, edges: 0 })
    }

    /// This graph with every connection carried on the NIC port pairs `planes_of` lists for it
    /// (one list per connection, at least one pair; `[(0, 0)]` leaves it as it is): a
    /// connection between hosts s and d becomes one between s + p × `stride` and d + q ×
    /// `stride` for each listed pair (p, q) (GPU ports: one per plane, or the two of a dual-ToR
    /// NIC), and every part of a send on it a part on each, the send's bytes split evenly over
    /// all its parts (as NCCL stripes a transfer over a NIC's ports). A connection keeps its id
    /// on its first listed pair; the others come after every original connection. Tasks and
    /// edges are unchanged.
    pub fn striped(&self, planes_of: &[Vec<(u32, u32)>], stride: u32) -> Traffic {
        let mut g = GraphBuilder::new();
        g.reserve(self.striped_size(planes_of));
        let on = |c: &ConnSpec, (p, q): (u32, u32)| (NodeId(c.src.0 + p * stride), NodeId(c.dst.0 + q * stride));
        for (c, planes) in self.conns.iter().zip(planes_of) {
            let (s, d) = on(c, planes[0]);
            g.conn(s, d);
        }
        // Per connection, its connections on its other planes.
        let mut others: Vec<Vec<u32>> = vec![Vec::new(); self.conns.len()];
        for (i, (c, planes)) in self.conns.iter().zip(planes_of).enumerate() {
            for &p in &planes[1..] {
                let (s, d) = on(c, p);
                others[i].push(g.conn(s, d));
            }
        }
        let mut parts = Vec::with_capacity(MAX_PARTS as usize);
        self.rebuilt(g, |g, conns, bytes, not_before| {
            parts.clear();
            for &c in conns {
                parts.push(c);
                parts.extend_from_slice(&others[c as usize]);
            }
            let id = g.send_parts(&parts, bytes, not_before);
            (id, id)
        })
    }

    /// The size of this graph once its connections are relayed as `via` says (one entry per
    /// connection, see [`Traffic::relayed`]): a connection more per relayed connection, a send,
    /// a message and an edge more per relayed message at most.
    pub fn relayed_size(&self, via: &[Option<NodeId>]) -> GraphSize {
        let conns = via.iter().filter(|v| v.is_some()).count() as u64;
        let messages = self.message_conn.iter().filter(|&&c| via[c as usize].is_some()).count() as u64;
        GraphSize::of(self).plus(GraphSize { flows: 0, conns, tasks: messages, messages, edges: messages })
    }

    /// This graph with every connection for which `via` (one entry per connection) names a
    /// relay host carried in two hops, source → relay, then relay → destination: each of its messages is posted on the
    /// second hop when it has been delivered to the relay (store and forward per message; a
    /// collective's messages are its chunks, so a step's chunks pipeline over the two hops).
    /// A relayed connection's first hop keeps its id, second hops come after every original
    /// connection; a relayed send's dependents wait for its second hop, and its dependencies
    /// still release its first. Tasks keep their order (a relay send right after the send it
    /// relays), so every instance's messages stay between its markers.
    pub fn relayed(&self, via: &[Option<NodeId>]) -> Traffic {
        let mut g = GraphBuilder::new();
        g.reserve(self.relayed_size(via));
        for (c, v) in self.conns.iter().zip(via) {
            g.conn(c.src, v.unwrap_or(c.dst));
        }
        let mut second = vec![u32::MAX; self.conns.len()];
        for (i, (c, v)) in self.conns.iter().zip(via).enumerate() {
            if let Some(r) = v {
                second[i] = g.conn(*r, c.dst);
            }
        }
        let mut hops = Vec::with_capacity(MAX_PARTS as usize);
        self.rebuilt(g, |g, conns, bytes, not_before| {
            let first = g.send_parts(conns, bytes, not_before);
            if second[conns[0] as usize] == u32::MAX {
                return (first, first);
            }
            hops.clear();
            hops.extend(conns.iter().map(|&c| second[c as usize]));
            let hop = g.send_parts(&hops, bytes, Time::ZERO);
            g.edge(first, hop, Trigger::Delivered, Time::ZERO);
            // Its dependencies release the first hop; its dependents wait for the second.
            (first, hop)
        })
    }

    /// This graph's tasks and edges rebuilt into `g`, which holds the new connections: each
    /// send by `send` (given `g`, the connections of its parts here, its bytes and its
    /// not-before time), which returns the new task its dependencies release and the one its
    /// dependents wait for; every other task as it is, in order, so that every instance's
    /// messages stay between its markers. The application flows and ns-3 names carry over
    /// (they name connections, which keep their ids).
    fn rebuilt(&self, mut g: GraphBuilder, mut send: impl FnMut(&mut GraphBuilder, &[u32], u64, Time) -> (u32, u32)) -> Traffic {
        let mut ids: Vec<(u32, u32)> = Vec::with_capacity(self.tasks.len());
        let mut conns = Vec::with_capacity(MAX_PARTS as usize);
        // A step's roles follow their tasks (a relay's hop takes its send's).
        let mut roles = Vec::with_capacity(if self.step.is_some() { self.tasks.len() } else { 0 });
        for (t, task) in self.tasks.iter().enumerate() {
            let id = match task.kind() {
                TaskKind::Send { bytes, .. } => {
                    conns.clear();
                    conns.extend(self.messages_of(t as u32).map(|m| self.message_conn[m as usize]));
                    send(&mut g, &conns, bytes, task.not_before)
                }
                TaskKind::Join => {
                    let j = g.join();
                    (j, j)
                }
                TaskKind::Begin(i) => {
                    let (_, b) = g.begin(self.instances[i as usize].clone(), task.not_before);
                    (b, b)
                }
                TaskKind::End(i) => {
                    let e = g.end(i);
                    (e, e)
                }
            };
            ids.push(id);
            if let Some(step) = &self.step {
                roles.resize(g.tasks(), step.roles[t]);
            }
        }
        for t in 0..self.tasks.len() {
            for e in self.edges_of(t as u32) {
                g.edge(ids[t].1, ids[e.to as usize].0, e.on, e.delay);
            }
        }
        let mut out = g.finish();
        out.app_flows = self.app_flows.clone();
        out.ns3 = self.ns3.clone();
        out.step = self.step.as_ref().map(|s| std::sync::Arc::new(StepMap { roles, iteration_ends: s.iteration_ends.iter().map(|&t| ids[t as usize].1).collect(), lines: s.lines.clone() }));
        out
    }
}

/// Incremental construction of a [`Traffic`] graph.
pub struct GraphBuilder {
    t: Traffic,
    /// Edges as added, with their source task (sorted into rows by [`GraphBuilder::finish`]).
    raw_edges: Vec<(u32, PackedEdge)>,
    /// Index of each distinct delay in `t.delays`.
    delay_index: std::collections::HashMap<Time, u32>,
}

impl Default for GraphBuilder {
    fn default() -> Self {
        let t = Traffic { delays: vec![Time::ZERO], ..Traffic::default() };
        GraphBuilder { t, raw_edges: Vec::new(), delay_index: std::collections::HashMap::new() }
    }
}

impl GraphBuilder {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes room for `more` (counted before it is built, see [`GraphSize`]) in one allocation
    /// per table instead of the doubling growth's, whose slack and copies would otherwise set
    /// the setup's peak memory on a large collective.
    pub fn reserve(&mut self, more: GraphSize) {
        let n = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        self.t.conns.reserve_exact(n(more.conns));
        self.t.tasks.reserve_exact(n(more.tasks));
        self.t.first_message.reserve_exact(n(more.tasks));
        self.t.sends.reserve_exact(n(more.messages));
        self.t.message_conn.reserve_exact(n(more.messages));
        self.raw_edges.reserve_exact(n(more.edges));
    }

    /// Adds a connection and returns its id.
    pub fn conn(&mut self, src: NodeId, dst: NodeId) -> u32 {
        self.t.conns.push(ConnSpec { src, dst });
        (self.t.conns.len() - 1) as u32
    }

    /// Tasks so far (the id the next one gets).
    pub fn tasks(&self) -> usize {
        self.t.tasks.len()
    }

    /// What the graph holds so far.
    pub fn size(&self) -> GraphSize {
        GraphSize { flows: 0, conns: self.t.conns.len() as u64, tasks: self.t.tasks.len() as u64, messages: self.t.sends.len() as u64, edges: self.raw_edges.len() as u64 }
    }

    fn task(&mut self, kind: TaskKind, not_before: Time) -> u32 {
        self.t.tasks.push(Task::new(kind, not_before));
        self.t.first_message.push(u32::MAX);
        (self.t.tasks.len() - 1) as u32
    }

    /// Adds a message of `bytes` (≥ 1) on `conn`, not posted before `not_before`.
    pub fn send(&mut self, conn: u32, bytes: u64, not_before: Time) -> u32 {
        self.send_parts(&[conn], bytes, not_before)
    }

    /// Adds a send of `bytes` split evenly over `conns` (1 to [`MAX_PARTS`] connections between
    /// the same two hosts, or the same two GPUs' ports on several planes, at least a byte
    /// each), one message on each, not posted before
    /// `not_before`. Its parts are posted in reverse order, last connection first, as the
    /// engine's task stack once released separate messages; with several parts, its delivery
    /// edges fire through that stack when the last part arrives, as a join over the parts did.
    pub fn send_parts(&mut self, conns: &[u32], bytes: u64, not_before: Time) -> u32 {
        let parts = conns.len() as u32;
        // A plane's ports of two GPUs are as far apart as every other plane's.
        let apart = |c: u32| self.t.conns[c as usize].dst.0 as i64 - self.t.conns[c as usize].src.0 as i64;
        debug_assert!(conns.iter().all(|&c| apart(c) == apart(conns[0])), "a send's parts join one pair of hosts, or of GPUs on several planes");
        let id = self.task(TaskKind::Send { parts, bytes: bytes.max(parts as u64) }, not_before);
        self.t.first_message[id as usize] = self.t.sends.len() as u32;
        for &c in conns {
            self.t.sends.push(id);
            self.t.message_conn.push(c);
        }
        id
    }

    /// Adds a join.
    pub fn join(&mut self) -> u32 {
        self.task(TaskKind::Join, Time::ZERO)
    }

    /// Adds the start marker of a new collective instance and returns (instance id, task id).
    pub fn begin(&mut self, inst: Instance, not_before: Time) -> (u32, u32) {
        self.t.instances.push(inst);
        let i = (self.t.instances.len() - 1) as u32;
        (i, self.task(TaskKind::Begin(i), not_before))
    }

    /// Adds the end marker of instance `i`.
    pub fn end(&mut self, i: u32) -> u32 {
        self.task(TaskKind::End(i), Time::ZERO)
    }

    /// `to` waits for `from`'s `on` event, plus `delay`.
    pub fn edge(&mut self, from: u32, to: u32, on: Trigger, delay: Time) {
        self.t.tasks[to as usize].deps += 1;
        let index = if delay == Time::ZERO {
            0
        } else {
            let delays = &mut self.t.delays;
            *self.delay_index.entry(delay).or_insert_with(|| {
                delays.push(delay);
                (delays.len() - 1) as u32
            })
        };
        self.raw_edges.push((from, PackedEdge::new(to, on, index)));
    }

    /// The finished graph (edges sorted into rows by source, in insertion order).
    pub fn finish(mut self) -> Traffic {
        let n = self.t.tasks.len();
        let mut start = vec![0u32; n + 1];
        for (from, _) in &self.raw_edges {
            start[*from as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![PackedEdge::default(); self.raw_edges.len()];
        for &(from, e) in &self.raw_edges {
            edges[fill[from as usize] as usize] = e;
            fill[from as usize] += 1;
        }
        self.t.edge_start = start;
        self.t.edges = edges;
        self.t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    //= type=test
    //# Relaying one connection of two: its send becomes a first hop (keeping the connection
    //# id) and a second hop on a new connection, posted when the first is delivered; the
    //# dependent send now waits for the second hop, and the untouched connection is as it was.
    #[test]
    fn relayed_connections_become_two_hops_in_order() {
        let mut g = GraphBuilder::new();
        let (c0, c1) = (g.conn(NodeId(0), NodeId(1)), g.conn(NodeId(2), NodeId(3)));
        let a = g.send(c0, 1000, Time(7));
        let b = g.send(c1, 500, Time::ZERO);
        g.edge(a, b, Trigger::Delivered, Time(3));
        let t = g.finish().relayed(&[Some(NodeId(5)), None]);
        let pairs: Vec<(u32, u32)> = t.conns.iter().map(|c| (c.src.0, c.dst.0)).collect();
        assert_eq!(pairs, [(0, 5), (2, 3), (5, 1)]);
        // Tasks: the first hop, its relay, then b.
        let kinds: Vec<TaskKind> = t.tasks.iter().map(|x| x.kind()).collect();
        assert_eq!(kinds, [TaskKind::Send { parts: 1, bytes: 1000 }, TaskKind::Send { parts: 1, bytes: 1000 }, TaskKind::Send { parts: 1, bytes: 500 }]);
        assert_eq!((t.send_conn(0), t.send_conn(1), t.send_conn(2)), (0, 2, 1));
        assert_eq!(t.tasks[0].not_before(), Time(7));
        assert_eq!(t.edges_of(0).collect::<Vec<_>>(), [Edge { to: 1, on: Trigger::Delivered, delay: Time::ZERO }]);
        assert_eq!(t.edges_of(1).collect::<Vec<_>>(), [Edge { to: 2, on: Trigger::Delivered, delay: Time(3) }]);
        assert_eq!(t.tasks.iter().map(|x| x.deps()).collect::<Vec<_>>(), [0, 1, 1]);
        // Nothing relayed: the same graph.
        let same = t.relayed(&[None; 3]);
        assert_eq!(same.conns, t.conns);
        assert_eq!(same.edge_count(), t.edge_count());
    }

    #[test]
    fn edges_keep_their_trigger_delay_and_order_per_source() {
        let mut g = GraphBuilder::new();
        let c = g.conn(NodeId(0), NodeId(1));
        let t: Vec<u32> = (0..4).map(|_| g.send(c, 1000, Time::ZERO)).collect();
        let j = g.join();
        // Added out of source order, with repeated and distinct delays.
        g.edge(t[2], j, Trigger::Completed, Time::ZERO);
        g.edge(t[0], t[1], Trigger::Delivered, Time(5_000));
        g.edge(t[0], t[3], Trigger::Completed, Time(7_000));
        g.edge(t[2], t[3], Trigger::Delivered, Time(5_000));
        g.edge(t[0], j, Trigger::Delivered, Time::ZERO);
        let tr = g.finish();
        let row = |s: u32| tr.edges_of(s).map(|e| (e.to, e.on, e.delay)).collect::<Vec<_>>();
        assert_eq!(row(t[0]), vec![(t[1], Trigger::Delivered, Time(5_000)), (t[3], Trigger::Completed, Time(7_000)), (j, Trigger::Delivered, Time::ZERO)]);
        assert_eq!(row(t[1]), vec![]);
        assert_eq!(row(t[2]), vec![(j, Trigger::Completed, Time::ZERO), (t[3], Trigger::Delivered, Time(5_000))]);
        assert_eq!(tr.edge_count(), 5);
        // Three distinct delays, 0 included, in one table.
        assert_eq!(tr.delays, vec![Time::ZERO, Time(5_000), Time(7_000)]);
        assert_eq!((tr.tasks[j as usize].deps, tr.tasks[t[3] as usize].deps), (2, 2));
    }

    #[test]
    fn a_task_is_24_bytes_and_keeps_its_kind_operand_and_time() {
        assert_eq!(std::mem::size_of::<Task>(), 24);
        for kind in [
            TaskKind::Send { parts: 1, bytes: 1 },
            TaskKind::Send { parts: MAX_PARTS, bytes: u64::MAX },
            TaskKind::Join,
            TaskKind::Begin(0),
            TaskKind::Begin(u32::MAX),
            TaskKind::End(7),
            TaskKind::End(u32::MAX),
        ] {
            let t = Task::new(kind, Time(123_456));
            assert_eq!((t.kind(), t.deps(), t.not_before()), (kind, 0, Time(123_456)));
        }
    }

    #[test]
    fn a_send_splits_its_bytes_evenly_over_its_parts_in_order() {
        let mut g = GraphBuilder::new();
        let c: Vec<u32> = (0..3).map(|_| g.conn(NodeId(0), NodeId(1))).collect();
        let one = g.send(c[2], 0, Time::ZERO);
        let t = g.send_parts(&c, 10, Time(5));
        let tr = g.finish();
        assert_eq!((tr.messages_of(one), tr.messages_of(t)), (0..1, 1..4));
        assert_eq!(tr.message(0), Message { task: one, conn: c[2], bytes: Bytes(1) });
        let parts: Vec<_> = tr.messages_of(t).map(|m| tr.message(m)).collect();
        assert_eq!(parts.iter().map(|m| (m.task, m.conn, m.bytes.0)).collect::<Vec<_>>(), vec![(t, c[0], 4), (t, c[1], 3), (t, c[2], 3)]);
        assert_eq!((tr.send_conn(t), tr.total_bytes()), (c[0], 11));
        assert_eq!(tr.messages().count(), 4);
    }

    #[test]
    fn edges_past_31_bits_do_not_fit() {
        let size = |edges: u64| GraphSize { edges, ..GraphSize::default() };
        assert!(size((1 << 31) - 1).fits_ids());
        assert!(!size(1 << 31).fits_ids());
    }
}
