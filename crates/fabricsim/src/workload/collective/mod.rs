//! `collectives`: training jobs whose ranks run sequences of collective operations.
//!
//! A job places its ranks on hosts (contiguous, strided, random or an explicit list; several
//! jobs share the fabric without sharing hosts unless lists say so), then runs its sequence of
//! collectives for a number of iterations, one collective after another with an optional compute
//! gap. Each collective instance is compiled to messages (chunks of `chunk` bytes, each split
//! evenly over `qps` queue pairs per rank pair) and dependencies: a step's chunk is posted when
//! the chunks it needs have been delivered (strack spec §5.3.4: "a message of a later step is
//! sent only after the messages it depends on from earlier steps have been received"). The
//! next collective of a job starts when every message of the previous one has completed.
//!
//! Algorithms, one file each: [`ring`] (AllReduce, AllGather, ReduceScatter), [`hierarchical`]
//! (AllReduce: rings inside groups of consecutive ranks around rings across them), [`halving_doubling`]
//! and [`double_binary_tree`] (AllReduce), [`alltoall`] (direct with a window of concurrent
//! peers, or pairwise exchange rounds), [`broadcast`] (pipelined chain). Connections are
//! persistent per (job, source rank, destination rank, queue pair), so congestion-control state
//! carries across chunks, steps, collectives and iterations as on real queue pairs.
//!
//! Ideal completion (for normalized CCT): the algorithm's bus-bandwidth bytes per rank
//! (2(N−1)/N·S for AllReduce, (N−1)/N·S for AllGather, ReduceScatter and AlltoAll, S for
//! Broadcast; the NCCL performance-guide formulas) at the host link rate, with packet headers,
//! plus the algorithm's latency. A *hop* is one chunk's serialization plus the one-way base
//! latency; the latency term is its pipeline-fill hops (1 for ring, halving-doubling and direct
//! AlltoAll, N−1 for the broadcast chain, 2·⌈log2 N⌉ for the double binary tree) less the
//! serialization of the last one, which the bytes already count (so a ring ends one one-way
//! trip after its busiest rank's bytes, a chain N−2 hops and one way after them), and the whole
//! is at least the longest dependency chain in hops (2(N−1) for a ring AllReduce, N−1 for
//! AllGather/ReduceScatter, 2·log2 N for halving-doubling): small messages are latency-bound.
//! Rounds that wait for the previous round's completion add a base RTT each (N−2 for pairwise
//! AlltoAll). Double-binary-tree ranks actually send about 2·S, not 2(N−1)/N·S, so its
//! normalized CCT shows that overhead.

use crate::units::Bytes;
pub mod alltoall;
pub mod broadcast;
pub mod double_binary_tree;
pub mod halving_doubling;
pub mod hierarchical;
pub mod ring;

use super::graph::{GraphBuilder, GraphSize, Instance, Trigger, MAX_PARTS};
use super::Room;
use super::time_from_us;
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::rng::Rng;
use crate::units::ByteSize;
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use crate::workload::InputFiles;

/// Registry name.
pub const NAME: &str = "collectives";
/// Ranks per group of AllReduce `hier` when `group` is not given: an 8-GPU server's.
pub const DEFAULT_GROUP: u32 = 8;
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &["workload={ kind = \"collectives\", chunk = \"64KiB\", jobs = [{ ranks = 8, collectives = [{ op = \"allreduce\", algorithm = \"ring\", bytes = \"1MiB\" }] }] }"];
/// Registry summary.
pub const SUMMARY: &str = "jobs of ranks running AllReduce (ring/hd/dbt/hier/hier_tree), AllGather, ReduceScatter, AlltoAll, Broadcast";

/// Operations and their algorithms, as `fabricsim list` shows them: (op, algorithms, default).
pub const OPERATIONS: &[(&str, &[&str], &str)] = &[
    ("allreduce", &["ring", "hd", "dbt", "hier", "hier_tree"], "ring"),
    ("allgather", &["ring", "hier"], "ring"),
    ("reducescatter", &["ring", "hier"], "ring"),
    ("alltoall", &["direct", "pairwise"], "direct"),
    ("broadcast", &["ring"], "ring"),
];

/// `[workload]` of kind `collectives`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CollectivesParams {
    /// Chunk (message) size for every job that does not set its own.
    pub chunk: ByteSize,
    /// Queue pairs per rank pair for every job that does not set its own.
    pub qps: u32,
    /// The jobs.
    pub jobs: Vec<JobConfig>,
}

impl Default for CollectivesParams {
    fn default() -> Self {
        CollectivesParams { chunk: ByteSize(128 << 10), qps: 1, jobs: Vec::new() }
    }
}

/// How a job's ranks are put on hosts.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The lowest-numbered free hosts, in order.
    Contiguous,
    /// From the lowest free host h: h, h + stride, h + 2·stride, …
    Strided,
    /// A seeded uniform sample of the free hosts, in random rank order.
    Random,
    /// Random aligned blocks of `block` free hosts (ranks contiguous within a block).
    RandomBlocks,
    /// Exactly `hosts` (may overlap other jobs).
    List,
}

/// One `[[workload.jobs]]` entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// Number of identical jobs this entry stands for (each placed separately).
    #[serde(default = "one")]
    pub count: u32,
    /// Ranks per job (not needed with an explicit host list).
    pub ranks: Option<u32>,
    /// Placement of ranks on hosts.
    #[serde(default = "default_placement")]
    pub placement: Placement,
    /// Step between hosts for `strided`.
    #[serde(default = "one")]
    pub stride: u32,
    /// Block size for `random_blocks`.
    #[serde(default = "default_block")]
    pub block: u32,
    /// Hosts of the ranks for `list` (rank i on hosts[i]).
    pub hosts: Option<Vec<u32>>,
    /// Times the sequence of collectives runs.
    #[serde(default = "one")]
    pub iterations: u32,
    /// Compute time between consecutive collectives (and iterations).
    #[serde(default)]
    pub compute_gap_us: f64,
    /// When the job starts.
    #[serde(default)]
    pub start_us: f64,
    /// Chunk size (default: the workload's).
    pub chunk: Option<ByteSize>,
    /// Queue pairs per rank pair (default: the workload's).
    pub qps: Option<u32>,
    /// The sequence of collectives.
    #[serde(default)]
    pub collectives: Vec<CollectiveSpec>,
    /// A JSON trace file with the sequence instead (a list of collective objects).
    pub trace: Option<String>,
}

/// One collective of a job's sequence (also the element of a trace file).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSpec {
    /// `allreduce`, `allgather`, `reducescatter`, `alltoall` or `broadcast`.
    pub op: String,
    /// Algorithm (default per operation; see [`OPERATIONS`]).
    pub algorithm: Option<String>,
    /// Data size per rank: the buffer reduced/gathered/exchanged/broadcast.
    pub bytes: ByteSize,
    /// AlltoAll `direct`: most peers a rank sends to at once (default: all).
    pub parallelism: Option<u32>,
    /// Broadcast root rank (default 0).
    pub root: Option<u32>,
    /// Compute time after this collective before the next (default: the job's gap).
    pub gap_us: Option<f64>,
    /// AllReduce `hier` and `hier_tree`: ranks per group (consecutive ranks; a server's GPUs when the job is
    /// placed contiguously), default 8. Divides the job's ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Channels (NCCL's): the collective runs as this many independent copies of its algorithm
    /// at once, channel k on `bytes` / channels of the data (the first ones a byte more where
    /// it does not divide) over its own queue pairs; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
}

impl CollectiveSpec {
    /// AllReduce `hier`'s ranks per group (`group`, default [`DEFAULT_GROUP`]).
    pub fn group(&self) -> u32 {
        self.group.unwrap_or(DEFAULT_GROUP)
    }

    /// Channels (`channels`, default 1).
    pub fn channels(&self) -> u32 {
        self.channels.unwrap_or(1)
    }

    /// The bytes of each channel: `bytes` split as evenly as whole bytes allow, the larger
    /// shares first.
    pub fn channel_bytes(&self) -> impl Iterator<Item = u64> {
        let (c, s) = (self.channels() as u64, self.bytes.0);
        (0..c).map(move |k| s / c + u64::from(k < s % c))
    }
}

/// Most channels a collective may run (NCCL's MAXCHANNELS is 32).
pub const MAX_CHANNELS: u32 = 32;

fn one() -> u32 {
    1
}
fn default_block() -> u32 {
    8
}
fn default_placement() -> Placement {
    Placement::Contiguous
}

/// A dependency on another task's event.
#[derive(Clone, Copy, Debug)]
pub struct Dep {
    /// The task.
    pub task: u32,
    /// Which of its events.
    pub on: Trigger,
}

/// A logical message between two ranks: its send task (and, for AlltoAll over several queue
/// pairs, a join over its completion).
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    delivered: u32,
    /// Only where the instance builds completion joins (`waits_for_completions`).
    completed: Option<u32>,
}

impl Sent {
    /// Fires when the message has arrived at its receiver.
    pub fn delivered(&self) -> Dep {
        Dep { task: self.delivered, on: Trigger::Delivered }
    }
    /// Fires when the sender saw the whole message acknowledged (only for algorithms that
    /// `waits_for_completions` names: the builder makes the join for them alone).
    pub fn completed(&self) -> Dep {
        let task = self.completed.expect("completion joins are built for the algorithms that wait for completions");
        Dep { task, on: Trigger::Completed }
    }
}

/// What an algorithm uses to emit one collective instance's messages.
pub struct InstanceBuilder<'a> {
    g: &'a mut GraphBuilder,
    conns: &'a mut HashMap<(u32, u32, u32), u32>,
    hosts: &'a [NodeId],
    qps: u32,
    /// The first queue pair of each rank pair this builder uses: the channel's (channel k of
    /// a collective has queue pairs k·qps .. (k + 1)·qps).
    qp_base: u32,
    /// Chunk size in bytes.
    pub chunk: u64,
    begin: u32,
    end: u32,
    /// Whether a message over several queue pairs gets a join over its parts' completions.
    completions: bool,
}

impl InstanceBuilder<'_> {
    /// Ranks taking part.
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    fn conn(&mut self, src: u32, dst: u32, qp: u32) -> u32 {
        let (g, hosts) = (&mut *self.g, self.hosts);
        *self.conns.entry((src, dst, qp)).or_insert_with(|| g.conn(hosts[src as usize], hosts[dst as usize]))
    }

    /// A join that fires when all of `deps` have.
    pub fn join(&mut self, deps: &[Dep]) -> u32 {
        let j = self.g.join();
        for d in deps {
            self.g.edge(d.task, j, d.on, Time::ZERO);
        }
        if deps.is_empty() {
            self.g.edge(self.begin, j, Trigger::Delivered, Time::ZERO);
        }
        j
    }

    /// A message of `bytes` from rank `src` to rank `dst`, posted when all of `deps` have fired
    /// (at the instance start if there are none), split evenly over the queue pairs: one send
    /// task, one message (part) per queue pair.
    pub fn send(&mut self, src: u32, dst: u32, bytes: u64, deps: &[Dep]) -> Sent {
        // In u64: a chunk of 2^32 bytes or more must not wrap to a few bytes.
        let q = (self.qps as u64).min(bytes.max(1)) as u32;
        let mut conns = [0u32; MAX_PARTS as usize];
        let n = q as usize;
        for (k, slot) in conns.iter_mut().enumerate().take(n) {
            *slot = self.conn(src, dst, self.qp_base + k as u32);
        }
        let t = self.g.send_parts(&conns[..n], bytes, Time::ZERO);
        if deps.is_empty() {
            self.g.edge(self.begin, t, Trigger::Delivered, Time::ZERO);
        }
        for d in deps {
            self.g.edge(d.task, t, d.on, Time::ZERO);
        }
        self.g.edge(t, self.end, Trigger::Completed, Time::ZERO);
        if n == 1 {
            return Sent { delivered: t, completed: Some(t) };
        }
        // Over several queue pairs, where the algorithm waits for a message's completion at its
        // sender (only AlltoAll), a join over it: the instance end waits for the send at once,
        // the join's dependents through the task stack, as when each part was a task of its own.
        let c = self.completions.then(|| self.g.join());
        if let Some(c) = c {
            self.g.edge(t, c, Trigger::Completed, Time::ZERO);
        }
        Sent { delivered: t, completed: c }
    }

    /// `bytes` from `src` to `dst` as consecutive chunks; chunk i waits for `deps(i)`.
    pub fn send_chunked(&mut self, src: u32, dst: u32, bytes: u64, mut deps: impl FnMut(usize) -> Vec<Dep>) -> Vec<Sent> {
        chunk_sizes(bytes, self.chunk).enumerate().map(|(i, b)| self.send(src, dst, b, &deps(i))).collect()
    }
}

/// Sizes of the chunks of a `bytes`-byte message (at least one chunk).
pub fn chunk_sizes(bytes: u64, chunk: u64) -> impl Iterator<Item = u64> {
    let n = bytes.div_ceil(chunk).max(1);
    (0..n).map(move |i| if i + 1 < n { chunk } else { bytes - (n - 1) * chunk }.max(1))
}

/// Number of chunks of a `bytes`-byte message.
pub fn chunk_count(bytes: u64, chunk: u64) -> usize {
    bytes.div_ceil(chunk).max(1) as usize
}

/// The chunk of the previous step (of `prev` chunks) that chunk `j` (of `cur` chunks) waits for
/// when steps carry different amounts: the one that completes the same fraction of the data.
pub fn matching_chunk(j: usize, cur: usize, prev: usize) -> usize {
    (((j + 1) * prev).div_ceil(cur)).clamp(1, prev) - 1
}

/// What [`InstanceBuilder::send`] emits for one message over `q` queue pairs whose posting
/// waits for `deps` dependencies: the send, its completion join, and the edges (from the
/// dependencies or the instance start, to the instance end, into the join).
fn send_size(q: u64, deps: u64, completions: bool) -> GraphSize {
    let joins = u64::from(q > 1 && completions);
    GraphSize { tasks: 1 + joins, messages: q, edges: deps.max(1) + 1 + joins, ..GraphSize::default() }
}

/// Whether the messages of `op`/`alg` get completion joins ([`Sent::completed`]): AlltoAll
/// starts a peer's (or a round's) messages once earlier ones completed at their sender.
fn waits_for_completions(op: &str) -> bool {
    op == "alltoall"
}

/// What [`InstanceBuilder::send_chunked`] emits for `bytes` in chunks of `chunk` over up to `qps`
/// queue pairs, each chunk waiting for `deps` dependencies; counted, not built.
fn chunked_size(bytes: u64, chunk: u64, qps: u32, deps: u64, completions: bool) -> GraphSize {
    let n = bytes.div_ceil(chunk).max(1);
    let last = bytes.saturating_sub((n - 1).saturating_mul(chunk)).max(1);
    let one = |size: u64| send_size((qps as u64).min(size.max(1)), deps, completions);
    one(chunk).times(n - 1).plus(one(last))
}

/// A join over `deps` dependencies ([`InstanceBuilder::join`]).
fn join_size(deps: u64) -> GraphSize {
    GraphSize { tasks: 1, edges: deps.max(1), ..GraphSize::default() }
}

/// The joins over what each of `k` members received last in a double binary tree over `bytes`
/// ([`double_binary_tree::among`]): per tree, its parent's chunks, or for the root its
/// children's.
fn tree_joins(k: u32, bytes: u64, chunk: u64) -> GraphSize {
    let mut last = vec![0u64; k as usize];
    for (t, half) in [bytes.div_ceil(2), bytes / 2].into_iter().enumerate().filter(|&(_, h)| h > 0) {
        let parent = double_binary_tree::parents(k, t as u32);
        let chunks = chunk_count(half, chunk) as u64;
        for (r, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                last[r] += chunks;
                if parent[*p as usize].is_none() {
                    last[*p as usize] += chunks;
                }
            }
        }
    }
    last.into_iter().fold(GraphSize::default(), |acc, l| acc.plus(join_size(l)))
}

/// What one instance of `op`/`alg` over `n` ranks emits ([`generate`]'s builders, counted
/// without building them; a test keeps the two equal): its messages, joins and edges, its
/// start and end markers. `c` is the collective (its bytes, parallelism and root).
pub(crate) fn instance_size(op: &str, alg: &str, n: u32, c: &CollectiveSpec, chunk: u64, qps: u32) -> GraphSize {
    let body = c.channel_bytes().map(|s| channel_size(op, alg, n, c, s, chunk, qps)).fold(GraphSize::default(), GraphSize::plus);
    body.plus(GraphSize { tasks: 2, edges: 1, ..GraphSize::default() })
}

/// What one channel of an instance of `op`/`alg` over `n` ranks emits for `s` bytes per rank
/// (see [`instance_size`]).
fn channel_size(op: &str, alg: &str, n: u32, c: &CollectiveSpec, s: u64, chunk: u64, qps: u32) -> GraphSize {
    let n64 = n as u64;
    let chunked = |bytes: u64, deps: u64| chunked_size(bytes, chunk, qps, deps, waits_for_completions(op));
    // A ring of `steps` steps among `k` members over `bytes` each ([`ring::among`]), its first
    // step's chunks waiting for one dependency (`start`) or none.
    let phase = |k: u64, bytes: u64, steps: u64, start: bool| {
        let seg = bytes.div_ceil(k);
        if steps == 0 {
            return GraphSize::default();
        }
        chunked(seg, u64::from(start)).times(k).plus(chunked(seg, 1).times(k * (steps - 1)))
    };
    let ring = |steps: u64| phase(n64, s, steps, false);
    // A double binary tree among `k` members over `bytes` each ([`double_binary_tree::among`]),
    // every up-send and the roots' down-sends waiting for one dependency more (`start`) or not.
    let tree = |k: u32, bytes: u64, start: bool| {
        let mut size = GraphSize::default();
        for (t, half) in [bytes.div_ceil(2), bytes / 2].into_iter().enumerate().filter(|&(_, h)| h > 0) {
            let parent = double_binary_tree::parents(k, t as u32);
            let mut kids = vec![0u64; k as usize];
            for p in parent.iter().flatten() {
                kids[*p as usize] += 1;
            }
            for (r, p) in parent.iter().enumerate() {
                let (c, own) = (kids[r], u64::from(start));
                // Up to the parent once the children's chunks arrived; down to each child
                // once the chunk is here (the root: once its children's arrived).
                size = size.plus(match p {
                    Some(_) => chunked(half, c + own).plus(chunked(half, 1).times(c)),
                    None => chunked(half, c + own).times(c),
                });
            }
        }
        size
    };
    match (op, alg) {
        ("allreduce", "ring") => ring(2 * (n64 - 1)),
        ("allreduce", "hier" | "hier_tree") | ("allgather" | "reducescatter", "hier") => {
            let g = c.group();
            let m = n / g;
            // Each phase after the first waits for a join per rank over what it received last:
            // a ring's last step's chunks, or a tree's (`tree_joins`).
            let mut size = GraphSize::default();
            let mut after: Option<GraphSize> = None;
            for p in hierarchical::phases(op, alg, n, g, s) {
                let (k, sets) = if p.among == hierarchical::Among::Groups { (g, m) } else { (m, g) };
                let (body, joins) = match p.shape {
                    hierarchical::Shape::Ring(steps) => (phase(k as u64, p.bytes, steps as u64, after.is_some()), join_size(chunk_count(p.bytes.div_ceil(k as u64), chunk) as u64).times(n64)),
                    hierarchical::Shape::Tree => (tree(k, p.bytes, after.is_some()), tree_joins(k, p.bytes, chunk).times(sets as u64)),
                };
                size = size.plus(after.unwrap_or_default()).plus(body.times(sets as u64));
                after = Some(joins);
            }
            size
        }
        ("allgather" | "reducescatter", _) => ring(n64 - 1),
        ("allreduce", "hd") => {
            let levels = n.trailing_zeros();
            let steps: Vec<u64> = (0..levels).chain((0..levels).rev()).map(|i| s.div_ceil(2u64 << i)).collect();
            steps.iter().enumerate().fold(GraphSize::default(), |acc, (t, &b)| acc.plus(chunked(b, u64::from(t > 0)).times(n64)))
        }
        ("allreduce", "dbt") => tree(n, s, false),
        ("alltoall", "direct") => {
            let per_peer = s.div_ceil(n64);
            let p = c.parallelism.unwrap_or(n - 1).min(n - 1) as u64;
            let m = chunk_count(per_peer, chunk) as u64;
            let per_rank = chunked(per_peer, 0).times(p).plus(chunked(per_peer, 1).times(n64 - 1 - p)).plus(join_size(m).times(n64 - 1));
            per_rank.times(n64)
        }
        ("alltoall", "pairwise") => {
            let per_peer = s.div_ceil(n64);
            let m = chunk_count(per_peer, chunk) as u64;
            let round = |deps: u64| chunked(per_peer, deps).plus(join_size(2 * m)).times(n64);
            round(0).plus(round(1).times(n64 - 2))
        }
        // broadcast: a chain of n − 1 hops, each but the first waiting for the previous.
        _ => chunked(s, 0).plus(chunked(s, 1).times(n64 - 2)),
    }
}

/// Connections one job of `n` ranks opens for the collectives `seq` with `qps` queue pairs per
/// rank pair, at most (pairs of ranks that exchange data, shared between collectives where
/// they coincide).
fn job_conns(n: u32, seq: &[(&str, &str)], qps: u32) -> u64 {
    let n64 = n as u64;
    let all = n64 * (n64 - 1);
    let has = |f: &dyn Fn(&str, &str) -> bool| seq.iter().any(|&(o, a)| f(o, a));
    let pairs = if has(&|o, _| o == "alltoall") {
        all
    } else {
        // Rings and broadcast chains (from any root) use the pairs rank r → r + 1.
        let ring = if has(&|_, a| a == "ring") { n64 } else { 0 };
        // Rings inside the groups and across them: two successors per rank at most, for each
        // hierarchical collective (each may group the ranks its own way).
        let hier = 2 * n64 * seq.iter().filter(|&&(_, a)| a == "hier").count() as u64;
        // A ring inside each group, two trees across (four pairs per member at most).
        let hier_tree = 5 * n64 * seq.iter().filter(|&&(_, a)| a == "hier_tree").count() as u64;
        let hd = if has(&|_, a| a == "hd") { n64 * n.trailing_zeros() as u64 } else { 0 };
        let dbt = if has(&|_, a| a == "dbt") { 4 * (n64 - 1) } else { 0 };
        (ring + hier + hier_tree + hd + dbt).min(all)
    };
    pairs * qps as u64
}

/// What one iteration of the collectives `seq` over `n` ranks emits (collectives that
/// validation will refuse count nothing).
fn iteration_size(chunk: u64, qps: u32, n: u32, seq: &[CollectiveSpec]) -> GraphSize {
    seq.iter().filter_map(|c| validate_spec("", c, n).ok().map(|(o, a)| instance_size(o, a, n, c, chunk, qps))).fold(GraphSize::default(), GraphSize::plus)
}

/// What `count` copies of a job of `n` ranks running `seq` `iterations` times emit: instances,
/// and the connections at most.
fn job_size(job: &JobConfig, chunk: u64, qps: u32, n: u32, seq: &[CollectiveSpec]) -> GraphSize {
    let pairs: Vec<(&str, &str)> = seq.iter().filter_map(|c| validate_spec("", c, n).ok()).collect();
    // Each channel has its own queue pairs.
    let channels = seq.iter().map(CollectiveSpec::channels).max().unwrap_or(1);
    let mut one = GraphSize { conns: job_conns(n, &pairs, qps) * channels as u64, ..GraphSize::default() }.plus(iteration_size(chunk, qps, n, seq).times(job.iterations as u64));
    // Every instance but the first waits for the one before it.
    one.edges = one.edges.saturating_sub(1);
    one.times(job.count as u64)
}

/// The size of `count` copies of a job of `n` ranks running `seq` `iterations` times, refused
/// through `room` (on top of `so_far`, what earlier jobs generated) before it is built. The
/// error names the key that makes it large: the iteration count, the job count, the chunk (or
/// a collective's bytes, when the chunk is not below the default), or the ranks.
fn admit_job(key: &str, job: &JobConfig, chunk: u64, qps: u32, n: u32, seq: &[CollectiveSpec], so_far: GraphSize, room: Room) -> Result<()> {
    let size = so_far.plus(job_size(job, chunk, qps, n, seq));
    // Messages as chunked, and as they would be with one chunk per message.
    let per_iteration = |chunk: u64| iteration_size(chunk, qps, n, seq);
    let (chunked, whole) = (per_iteration(chunk).messages.max(1), per_iteration(u64::MAX).messages.max(1));
    let chunk_key = match (chunk < CollectivesParams::default().chunk.0, job.chunk.is_some()) {
        (true, true) => format!("{key}.chunk"),
        (true, false) => "workload.chunk".to_string(),
        (false, _) => {
            let biggest = (0..seq.len()).max_by_key(|&i| seq[i].bytes.0).unwrap_or(0);
            format!("{key}.collectives[{biggest}].bytes")
        }
    };
    let ranks_key = format!("{key}.{}", if job.placement == Placement::List { "hosts" } else { "ranks" });
    let factors = [(format!("{key}.iterations"), job.iterations as f64), (format!("{key}.count"), job.count as f64), (chunk_key, chunked as f64 / whole as f64), (ranks_key, whole as f64)];
    let blame = factors.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map_or(key.to_string(), |f| f.0.clone());
    room.admit(&blame, size, || {
        format!("{} job(s) × {} iterations of {} collective(s) over {n} ranks, {chunked} messages per iteration in {chunk}-byte chunks", job.count, job.iterations, seq.len())
    })
}

/// Bus bytes, pipeline-fill hops, dependency-chain hops and round trips of one collective (see
/// the module doc).
pub fn cost(op: &str, algorithm: &str, n: u64, s: u64, group: u64) -> (u64, u32, u32, u32) {
    let n32 = n as u32;
    let log2 = 32 - (n32.max(1) - 1).leading_zeros();
    match (op, algorithm) {
        // Rings inside the groups (2(g − 1)/g · S) and across them (2(m − 1)/m · S/g); on one
        // kind of link, every rank sends both; a chunk crosses g − 1, 2(m − 1), g − 1 hops.
        ("allreduce", "hier") => {
            let m = n / group;
            (2 * (group - 1) * s / group + 2 * (m - 1) * s.div_ceil(group) / m, 1, (2 * (group - 1) + 2 * (m - 1)) as u32, 0)
        }
        // The same bytes; across the groups a chunk climbs and descends a tree of m ranks.
        ("allreduce", "hier_tree") => {
            let m = n / group;
            let depth = 32 - ((m as u32).max(1) - 1).leading_zeros();
            (2 * (group - 1) * s / group + 2 * (m - 1) * s.div_ceil(group) / m, 1, 2 * (group as u32 - 1) + 2 * depth, 0)
        }
        ("allreduce", "dbt") => (2 * (n - 1) * s / n, 2 * log2, 2 * log2, 0),
        // One ring inside the groups ((g − 1)/g · S) and one across them ((m − 1)/m · S/g).
        ("allgather" | "reducescatter", "hier") => {
            let m = n / group;
            ((group - 1) * s / group + (m - 1) * s.div_ceil(group) / m, 1, (group - 1 + m - 1) as u32, 0)
        }
        ("allreduce", "hd") => (2 * (n - 1) * s / n, 1, 2 * log2, 0),
        ("allreduce", _) => (2 * (n - 1) * s / n, 1, 2 * (n32 - 1), 0),
        ("allgather" | "reducescatter", _) => ((n - 1) * s / n, 1, n32 - 1, 0),
        ("alltoall", "pairwise") => ((n - 1) * s / n, 1, 1, n32 - 2),
        ("alltoall", _) => ((n - 1) * s / n, 1, 1, 0),
        _ => (s, n32 - 1, n32 - 1, 0),
    }
}

pub(crate) fn validate_spec(key: &str, c: &CollectiveSpec, ranks: u32) -> Result<(&'static str, &'static str)> {
    let Some(&(op, algs, default)) = OPERATIONS.iter().find(|(o, _, _)| *o == c.op) else {
        let allowed: Vec<String> = OPERATIONS.iter().map(|(o, _, _)| format!("`{o}`")).collect();
        return Err(Error::invalid(format!("{key}.op"), format!("unknown collective `{}`; allowed: {}", crate::excerpt::clip(&c.op), allowed.join(", "))));
    };
    let alg = c.algorithm.as_deref().unwrap_or(default);
    let Some(&alg) = algs.iter().find(|a| **a == alg) else {
        let allowed: Vec<String> = algs.iter().map(|a| format!("`{a}`")).collect();
        return Err(Error::invalid(format!("{key}.algorithm"), format!("unknown algorithm `{}` for {op}; allowed: {}", crate::excerpt::clip(alg), allowed.join(", "))));
    };
    if c.bytes.0 == 0 {
        return Err(Error::invalid(format!("{key}.bytes"), "0: a collective must move at least one byte"));
    }
    if let Some(ch) = c.channels {
        if !(1..=MAX_CHANNELS).contains(&ch) {
            return Err(Error::invalid(format!("{key}.channels"), format!("{ch}: allowed 1..={MAX_CHANNELS}")));
        }
        if ch as u64 > c.bytes.0 {
            return Err(Error::invalid(format!("{key}.channels"), format!("{ch} channels for {} bytes: each channel must move at least one byte", c.bytes.0)));
        }
    }
    if op == "allreduce" && alg == "hd" && !ranks.is_power_of_two() {
        return Err(Error::invalid(format!("{key}.algorithm"), format!("`hd` needs a power-of-two number of ranks, the job has {ranks}")));
    }
    if let Some(p) = c.parallelism {
        if op != "alltoall" || alg != "direct" {
            return Err(Error::invalid(format!("{key}.parallelism"), "only allowed for op = \"alltoall\" with algorithm = \"direct\""));
        }
        if p == 0 {
            return Err(Error::invalid(format!("{key}.parallelism"), "0: must be at least 1"));
        }
    }
    if alg.starts_with("hier") {
        let g = c.group();
        if g == 0 || ranks % g != 0 {
            let allowed: Vec<String> = (1..=ranks).filter(|d| ranks % d == 0).map(|d| d.to_string()).collect();
            return Err(Error::invalid(format!("{key}.group"), format!("{g}: `{alg}` needs groups of equal size, a divisor of the job's {ranks} ranks; allowed: {}", allowed.join(", "))));
        }
    } else if c.group.is_some() {
        return Err(Error::invalid(format!("{key}.group"), "only allowed with algorithm = \"hier\" (allreduce, allgather, reducescatter) or \"hier_tree\" (allreduce)"));
    }
    if let Some(r) = c.root {
        if op != "broadcast" {
            return Err(Error::invalid(format!("{key}.root"), "only allowed for op = \"broadcast\""));
        }
        if r >= ranks {
            return Err(Error::invalid(format!("{key}.root"), format!("rank {r} does not exist: the job has ranks 0..{}", ranks - 1)));
        }
    }
    Ok((op, alg))
}

/// Chooses the hosts of one job.
fn place(key: &str, job: &JobConfig, hosts: u32, used: &mut [bool], rng: &mut Rng) -> Result<Vec<NodeId>> {
    if job.placement == Placement::List {
        let list = job.hosts.clone().ok_or_else(|| Error::invalid(format!("{key}.hosts"), "missing: placement = \"list\" needs hosts = [...]"))?;
        if let Some(r) = job.ranks {
            if r as usize != list.len() {
                return Err(Error::invalid(format!("{key}.ranks"), format!("{r} ranks but {} hosts listed", list.len())));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for &h in &list {
            if h >= hosts {
                return Err(Error::invalid(format!("{key}.hosts"), format!("host {h} does not exist: the fabric has hosts 0..{}", hosts - 1)));
            }
            if !seen.insert(h) {
                return Err(Error::invalid(format!("{key}.hosts"), format!("host {h} listed twice")));
            }
            used[h as usize] = true;
        }
        if list.len() < 2 {
            return Err(Error::invalid(format!("{key}.hosts"), format!("{} hosts: a job needs at least 2 ranks", list.len())));
        }
        return Ok(list.into_iter().map(NodeId).collect());
    }
    if job.hosts.is_some() {
        return Err(Error::invalid(format!("{key}.hosts"), "only allowed with placement = \"list\""));
    }
    let n = job.ranks.ok_or_else(|| Error::invalid(format!("{key}.ranks"), "missing: how many ranks the job has"))?;
    if n < 2 {
        return Err(Error::invalid(format!("{key}.ranks"), format!("{n}: a job needs at least 2 ranks")));
    }
    let free: Vec<u32> = (0..hosts).filter(|&h| !used[h as usize]).collect();
    let short = |what: &str| Error::invalid(format!("{key}.ranks"), format!("{n} ranks do not fit: {what} ({} of {hosts} hosts are free)", free.len()));
    let chosen: Vec<u32> = match job.placement {
        Placement::Contiguous => free.iter().copied().take(n as usize).collect(),
        Placement::Strided => {
            if job.stride == 0 {
                return Err(Error::invalid(format!("{key}.stride"), "0: must be at least 1"));
            }
            let h0 = *free.first().ok_or_else(|| short("no host is free"))?;
            let v: Vec<u32> = (0..n).map(|i| h0 as u64 + i as u64 * job.stride as u64).take_while(|&h| h < hosts as u64 && !used[h as usize]).map(|h| h as u32).collect();
            if v.len() < n as usize {
                return Err(short(&format!("stride {} from host {h0} leaves the fabric or meets a used host", job.stride)));
            }
            v
        }
        Placement::Random => {
            let mut f = free.clone();
            rng.shuffle(&mut f);
            f.truncate(n as usize);
            f
        }
        Placement::RandomBlocks => {
            let b = job.block;
            if b == 0 || n % b != 0 {
                return Err(Error::invalid(format!("{key}.block"), format!("{b}: must be at least 1 and divide the {n} ranks")));
            }
            let mut blocks: Vec<u32> = (0..hosts / b).filter(|&k| (k * b..(k + 1) * b).all(|h| !used[h as usize])).collect();
            rng.shuffle(&mut blocks);
            blocks.truncate((n / b) as usize);
            blocks.iter().flat_map(|&k| k * b..(k + 1) * b).collect()
        }
        Placement::List => unreachable!(),
    };
    if chosen.len() < n as usize {
        return Err(short("not enough free hosts"));
    }
    for &h in &chosen {
        used[h as usize] = true;
    }
    Ok(chosen.into_iter().map(NodeId).collect())
}

fn load_trace(key: &str, path: &str, files: &InputFiles) -> Result<Vec<CollectiveSpec>> {
    let (full, text) = files.read(path);
    let text = text.map_err(|e| Error::invalid(format!("{key}.trace"), format!("cannot read {}: {e}", full.display())))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| Error::invalid(format!("{key}.trace"), format!("{}: at `{}`: {}", full.display(), crate::excerpt::clip(&e.path().to_string()), crate::excerpt::clip_quoted(&e.inner().to_string()))))
}

/// The row of one instance of collective `c` (validated as `op`/`alg`) over `n` ranks in
/// `chunk`-byte chunks: what it moves and its ideal's terms ([`cost`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn instance(job: u32, iteration: u32, step: u32, op: &'static str, algorithm: &'static str, n: u32, c: &CollectiveSpec, chunk: u64) -> Instance {
    let (bus_bytes, fill_hops, chain_hops, rtt_rounds) = cost(op, algorithm, n as u64, c.bytes.0, c.group() as u64);
    Instance {
        job,
        iteration,
        step,
        op,
        algorithm,
        ranks: n,
        bytes: Bytes(c.bytes.0),
        bus_bytes: Bytes(bus_bytes),
        chunk,
        fill_hops,
        chain_hops,
        rtt_rounds,
        channels: c.channels(),
        group: "",
        fixed: None,
        first_host: 0,
    }
}

/// Emits instance `inst` of collective `c` over the hosts `ranks` (rank i on `ranks[i]`) into
/// `g`: its start marker (not before `start`; the caller adds the edges that release it), its
/// messages in `chunk`-byte chunks over `qps` queue pairs per rank pair (on the connections of
/// `conns`, keyed by rank pair and queue pair, opened where missing), and its end marker.
/// Returns (start marker, end marker).
#[allow(clippy::too_many_arguments)]
pub(crate) fn emit(g: &mut GraphBuilder, conns: &mut HashMap<(u32, u32, u32), u32>, ranks: &[NodeId], c: &CollectiveSpec, inst: Instance, chunk: u64, qps: u32, start: Time) -> (u32, u32) {
    let (op, alg, n) = (inst.op, inst.algorithm, inst.ranks);
    let inst = Instance { first_host: ranks[0].0, ..inst };
    let (i, begin) = g.begin(inst, start);
    let end = g.end(i);
    // The channels side by side, each its own copy of the algorithm on its share of the bytes
    // over its own queue pairs.
    for (k, bytes) in c.channel_bytes().enumerate() {
        let mut b = InstanceBuilder { g: &mut *g, conns: &mut *conns, hosts: ranks, qps, qp_base: k as u32 * qps, chunk, begin, end, completions: waits_for_completions(op) };
        match (op, alg) {
            ("allreduce", "ring") => ring::build(&mut b, bytes, 2 * (n - 1)),
            (_, "hier" | "hier_tree") => hierarchical::build(&mut b, op, alg, bytes, c.group()),
            ("allgather" | "reducescatter", _) => ring::build(&mut b, bytes, n - 1),
            ("allreduce", "hd") => halving_doubling::build(&mut b, bytes),
            ("allreduce", "dbt") => double_binary_tree::build(&mut b, bytes),
            ("alltoall", "direct") => alltoall::build_direct(&mut b, bytes, c.parallelism.unwrap_or(n - 1)),
            ("alltoall", "pairwise") => alltoall::build_pairwise(&mut b, bytes),
            ("broadcast", _) => broadcast::build(&mut b, bytes, c.root.unwrap_or(0)),
            _ => unreachable!("validated"),
        }
    }
    (begin, end)
}

/// Compiles the jobs into a traffic graph; each job is counted and admitted by `room` before it
/// is built.
pub fn generate(p: &CollectivesParams, hosts: u32, rng: &mut Rng, files: &InputFiles, room: Room) -> Result<super::graph::Traffic> {
    if p.jobs.is_empty() {
        return Err(Error::invalid("workload.jobs", "no jobs: add at least one [[workload.jobs]]"));
    }
    let mut g = GraphBuilder::new();
    let mut used = vec![false; hosts as usize];
    let mut job_id = 0u32;
    for (ji, job) in p.jobs.iter().enumerate() {
        let key = format!("workload.jobs[{ji}]");
        let chunk = job.chunk.unwrap_or(p.chunk).0;
        if chunk == 0 {
            return Err(Error::invalid(format!("{key}.chunk"), "0: chunks must hold at least one byte"));
        }
        let qps = job.qps.unwrap_or(p.qps);
        if !(1..=16).contains(&qps) {
            return Err(Error::invalid(format!("{key}.qps"), format!("{qps}: must be between 1 and 16")));
        }
        if job.count == 0 || job.iterations == 0 {
            let k = if job.count == 0 { "count" } else { "iterations" };
            return Err(Error::invalid(format!("{key}.{k}"), "0: must be at least 1"));
        }
        let seq = match (&job.trace, job.collectives.is_empty()) {
            (Some(t), true) => load_trace(&key, t, files)?,
            (None, false) => job.collectives.clone(),
            (Some(_), false) => return Err(Error::invalid(format!("{key}.trace"), "give either collectives or trace, not both")),
            (None, true) => return Err(Error::invalid(format!("{key}.collectives"), "missing: a job needs collectives = [...] or trace = \"file.json\"")),
        };
        if seq.is_empty() {
            return Err(Error::invalid(format!("{key}.trace"), "the trace lists no collectives"));
        }
        let start = time_from_us(&format!("{key}.start_us"), job.start_us)?;
        let gap = time_from_us(&format!("{key}.compute_gap_us"), job.compute_gap_us)?;
        // Ranks as placement will give them; a count that cannot be placed is refused there.
        let n = if job.placement == Placement::List { job.hosts.as_ref().map_or(0, |h| h.len() as u64) } else { job.ranks.unwrap_or(0) as u64 };
        if (2..=hosts as u64).contains(&n) {
            admit_job(&key, job, chunk, qps, n as u32, &seq, g.size(), room)?;
            // Counted exactly (a test keeps count and build equal), so the tables are allocated
            // once at their size.
            g.reserve(job_size(job, chunk, qps, n as u32, &seq));
        }
        for _ in 0..job.count {
            let ranks = place(&key, job, hosts, &mut used, rng)?;
            let n = ranks.len() as u32;
            let mut checked = Vec::with_capacity(seq.len());
            for (ci, c) in seq.iter().enumerate() {
                let ck = format!("{key}.collectives[{ci}]");
                let (op, alg) = validate_spec(&ck, c, n)?;
                let gap_after = match c.gap_us {
                    Some(us) => time_from_us(&format!("{ck}.gap_us"), us)?,
                    None => gap,
                };
                checked.push((op, alg, gap_after));
            }
            let mut conns = HashMap::new();
            let mut prev_end: Option<(u32, Time)> = None;
            for it in 0..job.iterations {
                for (ci, (c, &(op, alg, gap_after))) in seq.iter().zip(&checked).enumerate() {
                    let inst = instance(job_id, it, ci as u32, op, alg, n, c, chunk);
                    let (begin, end) = emit(&mut g, &mut conns, &ranks, c, inst, chunk, qps, start);
                    if let Some((e, d)) = prev_end {
                        g.edge(e, begin, Trigger::Completed, d);
                    }
                    prev_end = Some((end, gap_after));
                }
            }
            job_id += 1;
        }
    }
    Ok(g.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunking() {
        assert_eq!(chunk_sizes(300, 128).collect::<Vec<_>>(), vec![128, 128, 44]);
        assert_eq!(chunk_sizes(256, 128).collect::<Vec<_>>(), vec![128, 128]);
        assert_eq!(chunk_sizes(5, 128).collect::<Vec<_>>(), vec![5]);
        assert_eq!(chunk_count(300, 128), 3);
    }

    /// The size of `job`'s graph as counted, and as built (on 64 hosts).
    fn counted_and_built(p: &CollectivesParams) -> (GraphSize, GraphSize) {
        let job = &p.jobs[0];
        let (chunk, qps) = (job.chunk.unwrap_or(p.chunk).0, job.qps.unwrap_or(p.qps));
        let counted = job_size(job, chunk, qps, job.ranks.unwrap(), &job.collectives);
        let t = generate(p, 64, &mut Rng::stream(1, "t", 0), &InputFiles::new(std::path::Path::new(".")), Room::UNLIMITED).unwrap();
        (counted, GraphSize::of(&t))
    }

    #[test]
    fn counted_sizes_are_the_built_graphs() {
        // Every operation and algorithm, odd and even rank counts, chunks below and above the
        // queue-pair count, parallelism, roots, several collectives and iterations.
        let mut rng = Rng::stream(7, "sizes", 0);
        let ops = [("allreduce", "ring"), ("allreduce", "hd"), ("allreduce", "dbt"), ("allgather", "ring"), ("reducescatter", "ring"), ("alltoall", "direct"), ("alltoall", "pairwise"), ("broadcast", "ring"), ("allreduce", "hier"), ("allreduce", "hier_tree"), ("allgather", "hier"), ("reducescatter", "hier")];
        for case in 0..400 {
            let (op, alg) = ops[case % ops.len()];
            let n = if alg == "hd" { 1 << (1 + rng.below(4)) } else { 2 + rng.below(11) as u32 };
            let chunk = [1, 3, 1000, 4096, 65_536, 1 << 20][rng.below(6) as usize];
            let spec = |rng: &mut Rng| CollectiveSpec {
                op: op.into(),
                algorithm: Some(alg.into()),
                bytes: ByteSize(1 + rng.below(if chunk < 100 { 5_000 } else { 200_000 })),
                parallelism: (alg == "direct" && rng.below(2) == 0).then(|| 1 + rng.below(n as u64) as u32),
                root: (op == "broadcast").then(|| rng.below(n as u64) as u32),
                gap_us: None,
                // A divisor of the ranks, 1 and n included.
                group: alg.starts_with("hier").then(|| {
                    let divisors: Vec<u32> = (1..=n).filter(|d| n % d == 0).collect();
                    divisors[rng.below(divisors.len() as u64) as usize]
                }),
                channels: (rng.below(3) == 0).then(|| 1 + rng.below(4) as u32),
            };
            let collectives = (0..1 + rng.below(2)).map(|_| spec(&mut rng)).collect();
            let job = JobConfig { count: 1, ranks: Some(n), placement: Placement::Contiguous, stride: 1, block: 8, hosts: None, iterations: 1 + rng.below(3) as u32, compute_gap_us: 0.0, start_us: 0.0, chunk: None, qps: None, collectives, trace: None };
            let p = CollectivesParams { chunk: ByteSize(chunk), qps: 1 + rng.below(4) as u32, jobs: vec![job] };
            let (counted, built) = counted_and_built(&p);
            let what = format!("case {case}: {op}/{alg}, {n} ranks, chunk {chunk}, qps {}: counted {counted:?}, built {built:?}", p.qps);
            assert_eq!((counted.tasks, counted.messages, counted.edges), (built.tasks, built.messages, built.edges), "{what}");
            assert!(built.conns <= counted.conns, "{what}");
        }
    }

    #[test]
    fn a_job_too_large_for_the_budget_is_refused_naming_what_makes_it_large() {
        let job = |chunk: Option<u64>, iterations: u32, bytes: u64| JobConfig {
            count: 1,
            ranks: Some(8),
            placement: Placement::Contiguous,
            stride: 1,
            block: 8,
            hosts: None,
            iterations,
            compute_gap_us: 0.0,
            start_us: 0.0,
            chunk: chunk.map(ByteSize),
            qps: None,
            collectives: vec![CollectiveSpec { op: "allreduce".into(), algorithm: None, bytes: ByteSize(bytes), parallelism: None, root: None, gap_us: None, group: None, channels: None }],
            trace: None,
        };
        let room = Room { budget: crate::budget::Budget { bytes: 1e9 }, pieces: 1 };
        let refused = |j: JobConfig| {
            let p = CollectivesParams { jobs: vec![j], ..Default::default() };
            match generate(&p, 64, &mut Rng::stream(1, "t", 0), &InputFiles::new(std::path::Path::new(".")), room) {
                Err(crate::error::Error::Invalid { key, .. }) => key,
                other => panic!("not refused: {:?}", other.map(|t| t.tasks.len())),
            }
        };
        assert_eq!(refused(job(Some(1), 1, 8 << 20)), "workload.jobs[0].chunk");
        assert_eq!(refused(job(None, 100_000, 8 << 20)), "workload.jobs[0].iterations");
        assert_eq!(refused(job(None, 1, 1 << 40)), "workload.jobs[0].collectives[0].bytes");
        // Within the budget: generated.
        let p = CollectivesParams { jobs: vec![job(Some(4096), 10, 1 << 20)], ..Default::default() };
        assert!(generate(&p, 64, &mut Rng::stream(1, "t", 0), &InputFiles::new(std::path::Path::new(".")), room).is_ok());
    }

    #[test]
    fn matching_chunks() {
        // Same sizes: one to one.
        assert_eq!((0..4).map(|j| matching_chunk(j, 4, 4)).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        // Halving data: chunk j needs the two previous chunks 2j, 2j+1.
        assert_eq!((0..2).map(|j| matching_chunk(j, 2, 4)).collect::<Vec<_>>(), vec![1, 3]);
        // Doubling data: chunk j needs previous chunk j/2.
        assert_eq!((0..4).map(|j| matching_chunk(j, 4, 2)).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
    }
}
