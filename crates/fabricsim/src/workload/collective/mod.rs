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
//! Algorithms, one file each: [`ring`] (AllReduce, AllGather, ReduceScatter), [`halving_doubling`]
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
//! AlltoAll, N−1 for the broadcast chain, 2·⌈log2 N⌉ for the double binary tree), and the whole
//! is at least the longest dependency chain in hops (2(N−1) for a ring AllReduce, N−1 for
//! AllGather/ReduceScatter, 2·log2 N for halving-doubling): small messages are latency-bound.
//! Rounds that wait for the previous round's completion add a base RTT each (N−2 for pairwise
//! AlltoAll). Double-binary-tree ranks actually send about 2·S, not 2(N−1)/N·S, so its
//! normalized CCT shows that overhead.

pub mod alltoall;
pub mod broadcast;
pub mod double_binary_tree;
pub mod halving_doubling;
pub mod ring;

use super::graph::{GraphBuilder, Instance, Trigger};
use super::time_from_us;
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::rng::Rng;
use crate::units::ByteSize;
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use crate::scenario::InputFiles;

/// Registry name.
pub const NAME: &str = "collectives";
/// Registry summary.
pub const SUMMARY: &str = "jobs of ranks running AllReduce (ring/hd/dbt), AllGather, ReduceScatter, AlltoAll, Broadcast";

/// Operations and their algorithms, as `fabricsim list` shows them: (op, algorithms, default).
pub const OPERATIONS: &[(&str, &[&str], &str)] = &[
    ("allreduce", &["ring", "hd", "dbt"], "ring"),
    ("allgather", &["ring"], "ring"),
    ("reducescatter", &["ring"], "ring"),
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
}

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

/// A logical message between two ranks: one task, or a join over its queue-pair parts.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    delivered: u32,
    completed: u32,
}

impl Sent {
    /// Fires when the message has arrived at its receiver.
    pub fn delivered(&self) -> Dep {
        Dep { task: self.delivered, on: Trigger::Delivered }
    }
    /// Fires when the sender saw the whole message acknowledged.
    pub fn completed(&self) -> Dep {
        Dep { task: self.completed, on: Trigger::Completed }
    }
}

/// What an algorithm uses to emit one collective instance's messages.
pub struct InstanceBuilder<'a> {
    g: &'a mut GraphBuilder,
    conns: &'a mut HashMap<(u32, u32, u32), u32>,
    hosts: &'a [NodeId],
    qps: u32,
    /// Chunk size in bytes.
    pub chunk: u64,
    begin: u32,
    end: u32,
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
            self.g.edge(d.task, j, d.on, 0);
        }
        if deps.is_empty() {
            self.g.edge(self.begin, j, Trigger::Delivered, 0);
        }
        j
    }

    /// A message of `bytes` from rank `src` to rank `dst`, posted when all of `deps` have fired
    /// (at the instance start if there are none), split evenly over the queue pairs.
    pub fn send(&mut self, src: u32, dst: u32, bytes: u64, deps: &[Dep]) -> Sent {
        let q = self.qps.min(bytes.max(1) as u32);
        let mut parts = [0u32; 16];
        let n = q as usize;
        debug_assert!(n <= parts.len());
        // With several parts, the dependencies go through one join instead of to every part.
        let gate = if n > 1 && deps.len() > 1 { Some(self.join(deps)) } else { None };
        for (k, slot) in parts.iter_mut().enumerate().take(n) {
            let share = bytes / q as u64 + u64::from((k as u64) < bytes % q as u64);
            let c = self.conn(src, dst, k as u32);
            let t = self.g.send(c, share, 0);
            match gate {
                Some(j) => self.g.edge(j, t, Trigger::Delivered, 0),
                None if deps.is_empty() => self.g.edge(self.begin, t, Trigger::Delivered, 0),
                None => {
                    for d in deps {
                        self.g.edge(d.task, t, d.on, 0);
                    }
                }
            }
            self.g.edge(t, self.end, Trigger::Completed, 0);
            *slot = t;
        }
        if n == 1 {
            return Sent { delivered: parts[0], completed: parts[0] };
        }
        let (d, c) = (self.g.join(), self.g.join());
        for &t in &parts[..n] {
            self.g.edge(t, d, Trigger::Delivered, 0);
            self.g.edge(t, c, Trigger::Completed, 0);
        }
        Sent { delivered: d, completed: c }
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

/// Bus bytes, pipeline-fill hops, dependency-chain hops and round trips of one collective (see
/// the module doc).
pub fn cost(op: &str, algorithm: &str, n: u64, s: u64) -> (u64, u32, u32, u32) {
    let n32 = n as u32;
    let log2 = 32 - (n32.max(1) - 1).leading_zeros();
    match (op, algorithm) {
        ("allreduce", "dbt") => (2 * (n - 1) * s / n, 2 * log2, 2 * log2, 0),
        ("allreduce", "hd") => (2 * (n - 1) * s / n, 1, 2 * log2, 0),
        ("allreduce", _) => (2 * (n - 1) * s / n, 1, 2 * (n32 - 1), 0),
        ("allgather" | "reducescatter", _) => ((n - 1) * s / n, 1, n32 - 1, 0),
        ("alltoall", "pairwise") => ((n - 1) * s / n, 1, 1, n32 - 2),
        ("alltoall", _) => ((n - 1) * s / n, 1, 1, 0),
        _ => (s, n32 - 1, n32 - 1, 0),
    }
}

fn validate_spec(key: &str, c: &CollectiveSpec, ranks: u32) -> Result<(&'static str, &'static str)> {
    let Some(&(op, algs, default)) = OPERATIONS.iter().find(|(o, _, _)| *o == c.op) else {
        let allowed: Vec<String> = OPERATIONS.iter().map(|(o, _, _)| format!("`{o}`")).collect();
        return Err(Error::invalid(format!("{key}.op"), format!("unknown collective `{}`; allowed: {}", c.op, allowed.join(", "))));
    };
    let alg = c.algorithm.as_deref().unwrap_or(default);
    let Some(&alg) = algs.iter().find(|a| **a == alg) else {
        let allowed: Vec<String> = algs.iter().map(|a| format!("`{a}`")).collect();
        return Err(Error::invalid(format!("{key}.algorithm"), format!("unknown algorithm `{alg}` for {op}; allowed: {}", allowed.join(", "))));
    };
    if c.bytes.0 == 0 {
        return Err(Error::invalid(format!("{key}.bytes"), "0: a collective must move at least one byte"));
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
        return Ok(list);
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
    Ok(chosen)
}

fn load_trace(key: &str, path: &str, files: &InputFiles) -> Result<Vec<CollectiveSpec>> {
    let (full, text) = files.read(path);
    let text = text.map_err(|e| Error::invalid(format!("{key}.trace"), format!("cannot read {}: {e}", full.display())))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| Error::invalid(format!("{key}.trace"), format!("{}: at `{}`: {}", full.display(), e.path(), e.inner())))
}

/// Compiles the jobs into a traffic graph.
pub fn generate(p: &CollectivesParams, hosts: u32, rng: &mut Rng, files: &InputFiles) -> Result<super::graph::Traffic> {
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
                    let (bus_bytes, fill_hops, chain_hops, rtt_rounds) = cost(op, alg, n as u64, c.bytes.0);
                    let inst = Instance {
                        job: job_id,
                        iteration: it,
                        step: ci as u32,
                        op,
                        algorithm: alg,
                        ranks: n,
                        bytes: c.bytes.0,
                        bus_bytes,
                        chunk,
                        fill_hops,
                        chain_hops,
                        rtt_rounds,
                    };
                    let (i, begin) = g.begin(inst, start);
                    if let Some((e, d)) = prev_end {
                        g.edge(e, begin, Trigger::Completed, d);
                    }
                    let end = g.end(i);
                    let mut b = InstanceBuilder { g: &mut g, conns: &mut conns, hosts: &ranks, qps, chunk, begin, end };
                    match (op, alg) {
                        ("allreduce", "ring") => ring::build(&mut b, c.bytes.0, 2 * (n - 1)),
                        ("allgather" | "reducescatter", _) => ring::build(&mut b, c.bytes.0, n - 1),
                        ("allreduce", "hd") => halving_doubling::build(&mut b, c.bytes.0),
                        ("allreduce", "dbt") => double_binary_tree::build(&mut b, c.bytes.0),
                        ("alltoall", "direct") => alltoall::build_direct(&mut b, c.bytes.0, c.parallelism.unwrap_or(n - 1)),
                        ("alltoall", "pairwise") => alltoall::build_pairwise(&mut b, c.bytes.0),
                        ("broadcast", _) => broadcast::build(&mut b, c.bytes.0, c.root.unwrap_or(0)),
                        _ => unreachable!("validated"),
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
