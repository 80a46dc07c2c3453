//! `chakra`: a training step given as MLCommons Chakra execution traces, one file per rank, the
//! workload format ASTRA-sim runs ([`et`] reads it). Each rank's nodes become tasks of the
//! traffic graph, their control and data dependencies its edges:
//! - a compute node (`COMP_NODE`) takes its recorded `duration_micros`, or, without one, its
//!   `num_ops` FLOPs at the GPU's rate (`gpu.tflops` × `gpu.efficiency`); a rank's compute
//!   nodes run one at a time in file order (one compute stream per GPU: ASTRA-sim likewise
//!   runs one GPU compute node at a time);
//! - a collective node (`COMM_COLL_NODE`, `comm_type`, `comm_size` bytes per rank, `pg_name`)
//!   is one instance of a collective over its process group (every rank without a `pg_name`);
//!   `comm_size` is the rank's buffer as ASTRA-sim reads it, which for an AllGather is the
//!   rank's input, so the gathered buffer is `comm_size` × the group's ranks (ASTRA-sim's ring
//!   likewise multiplies it by the ranks); for the other operations it is the whole buffer:
//!   the k-th collective of a group on each of its ranks is the same instance, which starts when
//!   every member has reached it and ends when its last message completed (AllReduce,
//!   AllGather, ReduceScatter, AllToAll, Broadcast with the `collectives` workload's
//!   algorithms; a barrier is a join of its members);
//! - a send node (`COMM_SEND_NODE`, `comm_dst`, `comm_size`, `comm_tag`) is a message to that
//!   rank, matched in order with the receive node (`COMM_RECV_NODE`, `comm_src`, `comm_tag`)
//!   the destination posts for it; the receive is done when the message has arrived and its
//!   own dependencies are;
//! - any other node (metadata, memory) takes no time.
//! Process groups come from `groups`, a JSON object of group name → ranks (ASTRA-sim's
//! communicator-group file, whose names ASTRA-sim requires to be numbers; any name is accepted
//! here). Rank r runs on host r, or on `hosts[r]`.

pub mod et;

use super::collective;
use super::graph::{group_index, GraphBuilder, GraphSize, Role, StepMap, Traffic, Trigger};
use super::training::GpuConfig;
use super::{InputFiles, Room};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::{ByteSize, Time};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Registry name.
pub const NAME: &str = "chakra";
/// Registry summary.
pub const SUMMARY: &str = "a training step from Chakra execution traces (one .et file per rank, as ASTRA-sim reads them)";
/// Overrides for a small run: two ranks' traces bundled with the tests.
pub const EXAMPLE: &[&str] = &["workload={ kind = \"chakra\", traces = \"../data/chakra/step\", groups = \"../data/chakra/groups.json\" }"];

/// Most bytes one message or collective may move per rank (2^40, 1 TiB).
pub const MAX_COMM_BYTES: u64 = 1 << 40;

/// `[workload]` of kind `chakra`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChakraParams {
    /// The traces: files `<traces>.<rank>.et` (ASTRA-sim's naming), relative to the scenario.
    pub traces: String,
    /// Ranks (default: the files found, from rank 0 on).
    pub ranks: Option<u32>,
    /// A JSON file naming each process group's ranks (`{"1": [0, 1, 2, 3]}`).
    pub groups: Option<String>,
    /// Host of each rank (default: rank r on host r).
    pub hosts: Option<Vec<u32>>,
    /// The GPUs' rate, for compute nodes given in FLOPs.
    pub gpu: GpuConfig,
    /// Chunk (message) size of the collectives.
    pub chunk: ByteSize,
    /// Queue pairs per rank pair.
    pub qps: u32,
}

impl Default for ChakraParams {
    fn default() -> Self {
        ChakraParams { traces: String::new(), ranks: None, groups: None, hosts: None, gpu: GpuConfig::default(), chunk: ByteSize(512 << 10), qps: 1 }
    }
}

/// Most ranks read when `ranks` is not given.
const MAX_RANKS: u32 = 1 << 20;

/// What one node of a rank becomes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A compute kernel of this duration.
    Compute(Time),
    /// Instance `.0` of the collectives.
    Collective(usize),
    /// Message `.0` of the point-to-point messages (its sender's node).
    Send(usize),
    /// The receive of message `.0`.
    Recv(usize),
    /// No time.
    Other,
}

/// One collective instance: its operation, bytes, members and their nodes.
struct Coll {
    op: &'static str,
    bytes: u64,
    ranks: Vec<u32>,
    /// (rank, node index) of each member that reached it.
    nodes: Vec<(u32, usize)>,
}

/// A message: sender and receiver rank, bytes.
struct P2p {
    src: u32,
    dst: u32,
    bytes: u64,
    recv: Option<(u32, usize)>,
}

fn bad(rank: u32, n: &et::Node, what: String) -> Error {
    Error::invalid("workload.traces", format!("rank {rank}, node {} (`{}`): {what}", n.id, crate::excerpt::clip(&n.name)))
}

/// An integer attribute within 0..=max, or the error naming the node.
fn attr_in(rank: u32, n: &et::Node, name: &str, max: u64) -> Result<Option<u64>> {
    match n.int(name).map_err(|e| bad(rank, n, e))? {
        None => Ok(None),
        Some(x) if (0..=max as i128).contains(&x) => Ok(Some(x as u64)),
        Some(x) => Err(bad(rank, n, format!("`{name}` = {x}; allowed 0..={max}"))),
    }
}

fn read_groups(p: &ChakraParams, files: &InputFiles, ranks: u32) -> Result<BTreeMap<String, Vec<u32>>> {
    let Some(name) = &p.groups else { return Ok(BTreeMap::new()) };
    let (path, text) = files.read(name);
    let text = text.map_err(|e| Error::invalid("workload.groups", format!("cannot read {}: {e}", path.display())))?;
    let groups: BTreeMap<String, Vec<u32>> = serde_json::from_str(&text).map_err(|e| Error::invalid("workload.groups", format!("{}: {e}; expected an object of group name → list of ranks", path.display())))?;
    for (g, members) in &groups {
        if let Some(r) = members.iter().find(|&&r| r >= ranks) {
            return Err(Error::invalid("workload.groups", format!("process group `{}` names rank {r}; the traces have ranks 0..{}", crate::excerpt::clip(g), ranks - 1)));
        }
        let mut sorted = members.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) || sorted.is_empty() {
            return Err(Error::invalid("workload.groups", format!("process group `{}`: its ranks must be distinct and at least one", crate::excerpt::clip(g))));
        }
    }
    Ok(groups)
}

/// The traces' files: `<traces>.<rank>.et` for each rank.
fn trace_path(p: &ChakraParams, rank: u32) -> String {
    format!("{}.{rank}.et", p.traces)
}

/// Reads every rank's trace.
fn read_traces(p: &ChakraParams, files: &InputFiles) -> Result<Vec<et::Trace>> {
    if p.traces.is_empty() {
        return Err(Error::invalid("workload.traces", "missing: the traces' path without `.<rank>.et` (files `<traces>.0.et`, `<traces>.1.et`, ...)"));
    }
    let ranks = match p.ranks {
        Some(0) => return Err(Error::invalid("workload.ranks", "0: at least one rank")),
        Some(n) => n,
        None => (0..MAX_RANKS).take_while(|&r| files.path(&trace_path(p, r)).is_file()).count() as u32,
    };
    if ranks == 0 {
        return Err(Error::invalid("workload.traces", format!("no trace: {} does not exist", files.path(&trace_path(p, 0)).display())));
    }
    (0..ranks)
        .map(|r| {
            let (path, bytes) = files.read_bytes(&trace_path(p, r));
            let bytes = bytes.map_err(|e| Error::invalid("workload.traces", format!("cannot read {}: {e}", path.display())))?;
            et::read(&bytes).map_err(|e| Error::invalid("workload.traces", format!("{}: {e}", path.display())))
        })
        .collect()
}

/// Each rank's node index by id, checking that ids are unique, that every dependency names a
/// node of the trace other than itself, and that the dependencies have no cycle.
fn index_nodes(rank: u32, t: &et::Trace) -> Result<HashMap<u64, usize>> {
    let mut by_id = HashMap::with_capacity(t.nodes.len());
    for (i, n) in t.nodes.iter().enumerate() {
        if by_id.insert(n.id, i).is_some() {
            return Err(bad(rank, n, "its id appears twice in the trace".into()));
        }
    }
    let mut left = vec![0u32; t.nodes.len()];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); t.nodes.len()];
    for (i, n) in t.nodes.iter().enumerate() {
        for d in n.deps() {
            if d == n.id {
                return Err(bad(rank, n, "it depends on itself".into()));
            }
            let Some(&j) = by_id.get(&d) else { return Err(bad(rank, n, format!("it depends on node {d}, which the trace does not have"))) };
            left[i] += 1;
            after[j].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..t.nodes.len()).filter(|&i| left[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = ready.pop() {
        seen += 1;
        for &j in &after[i] {
            left[j] -= 1;
            if left[j] == 0 {
                ready.push(j);
            }
        }
    }
    if seen < t.nodes.len() {
        let stuck = (0..t.nodes.len()).find(|&i| left[i] > 0).expect("a node on a cycle");
        return Err(bad(rank, &t.nodes[stuck], "its dependencies form a cycle".into()));
    }
    Ok(by_id)
}

/// The collective operation of a `comm_type`, or `None` for a barrier.
fn operation(rank: u32, n: &et::Node) -> Result<Option<&'static str>> {
    let t = n.int("comm_type").map_err(|e| bad(rank, n, e))?.ok_or_else(|| bad(rank, n, "a collective without `comm_type`".into()))?;
    Ok(Some(match t as i64 {
        et::ALL_REDUCE => "allreduce",
        et::ALL_GATHER => "allgather",
        et::REDUCE_SCATTER | et::REDUCE_SCATTER_BLOCK => "reducescatter",
        et::ALL_TO_ALL => "alltoall",
        et::BROADCAST => "broadcast",
        et::BARRIER => return Ok(None),
        other => return Err(bad(rank, n, format!("`comm_type` = {other}; allowed 0 (ALL_REDUCE), 2 (ALL_GATHER), 5 (BROADCAST), 6 (ALL_TO_ALL), 7 and 8 (REDUCE_SCATTER), 9 (BARRIER)"))),
    }))
}

/// Generates the traffic graph of the traces on `hosts` hosts.
pub fn generate(p: &ChakraParams, hosts: u32, files: &InputFiles, room: Room) -> Result<Traffic> {
    if !(1..=16).contains(&p.qps) {
        return Err(Error::invalid("workload.qps", format!("{}: allowed 1..=16", p.qps)));
    }
    if p.chunk.0 == 0 {
        return Err(Error::invalid("workload.chunk", "0: chunks must hold at least one byte"));
    }
    let rate = p.gpu.check()?;
    let traces = read_traces(p, files)?;
    let ranks = traces.len() as u32;
    let host_of: Vec<u32> = match &p.hosts {
        Some(list) => {
            if list.len() != ranks as usize {
                return Err(Error::invalid("workload.hosts", format!("{} hosts for {ranks} ranks", list.len())));
            }
            let mut seen = vec![false; hosts as usize];
            for &h in list {
                if h >= hosts || std::mem::replace(&mut seen[h as usize], true) {
                    return Err(Error::invalid("workload.hosts", format!("host {h}: each rank needs its own host among 0..{}", hosts - 1)));
                }
            }
            list.clone()
        }
        None if ranks > hosts => return Err(Error::invalid("workload.traces", format!("{ranks} ranks; the fabric has {hosts} hosts"))),
        None => (0..ranks).collect(),
    };
    let groups = read_groups(p, files, ranks)?;
    let everyone: Vec<u32> = (0..ranks).collect();
    let mut colls: Vec<Coll> = Vec::new();
    let mut coll_key: HashMap<(String, u32), usize> = HashMap::new();
    let mut msgs: Vec<P2p> = Vec::new();
    // Sends not yet matched with a receive, and receives not yet with a send, per (src, dst, tag).
    let mut unmatched_sends: HashMap<(u32, u32, u64), std::collections::VecDeque<usize>> = HashMap::new();
    let mut early_recvs: HashMap<(u32, u32, u64), std::collections::VecDeque<(u32, usize)>> = HashMap::new();
    let mut kinds: Vec<Vec<Kind>> = Vec::with_capacity(traces.len());
    let mut indices = Vec::with_capacity(traces.len());
    for (r, t) in traces.iter().enumerate() {
        let r = r as u32;
        indices.push(index_nodes(r, t)?);
        let mut per_group: HashMap<String, u32> = HashMap::new();
        let mut k = Vec::with_capacity(t.nodes.len());
        for (i, n) in t.nodes.iter().enumerate() {
            k.push(match n.kind {
                et::COMP_NODE => {
                    let time = if n.duration_micros > 0 {
                        super::time_from_us(&format!("workload.traces (rank {r}, node {})", n.id), n.duration_micros as f64)?
                    } else {
                        let ops = attr_in(r, n, "num_ops", 1 << 62)?.unwrap_or(0);
                        Time((ops as f64 / rate).round() as u64)
                    };
                    Kind::Compute(time)
                }
                et::COMM_COLL_NODE => {
                    let op = operation(r, n)?;
                    let comm_size = attr_in(r, n, "comm_size", MAX_COMM_BYTES)?.unwrap_or(0);
                    if op.is_some() && comm_size == 0 {
                        return Err(bad(r, n, "a collective of 0 bytes (`comm_size` missing or 0)".into()));
                    }
                    let group = n.text("pg_name").unwrap_or_default();
                    let members = if group.is_empty() {
                        &everyone
                    } else {
                        groups.get(&group).ok_or_else(|| bad(r, n, format!("process group `{}` is not in workload.groups", crate::excerpt::clip(&group))))?
                    };
                    if !members.contains(&r) {
                        return Err(bad(r, n, format!("rank {r} is not in its process group `{}`", crate::excerpt::clip(&group))));
                    }
                    // An AllGather's `comm_size` is each rank's share of the gathered buffer.
                    let bytes = if op == Some("allgather") { comm_size * members.len() as u64 } else { comm_size };
                    if bytes > MAX_COMM_BYTES {
                        return Err(bad(r, n, format!("an AllGather of {comm_size} bytes per rank over {} ranks: {bytes} bytes gathered; allowed up to 2^40", members.len())));
                    }
                    let ordinal = per_group.entry(group.clone()).or_insert(0);
                    let key = (group, *ordinal);
                    *ordinal += 1;
                    let c = *coll_key.entry(key).or_insert_with(|| {
                        colls.push(Coll { op: op.unwrap_or("barrier"), bytes, ranks: members.clone(), nodes: Vec::new() });
                        colls.len() - 1
                    });
                    let coll = &mut colls[c];
                    if coll.op != op.unwrap_or("barrier") || coll.bytes != bytes {
                        return Err(bad(r, n, format!("collective {} of its group is {} of {} bytes on its first rank, {} of {bytes} here", coll_key.len(), coll.op, coll.bytes, op.unwrap_or("barrier"))));
                    }
                    coll.nodes.push((r, i));
                    Kind::Collective(c)
                }
                et::COMM_SEND_NODE => {
                    let dst = attr_in(r, n, "comm_dst", ranks as u64 - 1)?.ok_or_else(|| bad(r, n, "a send without `comm_dst`".into()))? as u32;
                    if dst == r {
                        return Err(bad(r, n, "a send to its own rank".into()));
                    }
                    let bytes = attr_in(r, n, "comm_size", MAX_COMM_BYTES)?.unwrap_or(0).max(1);
                    let tag = attr_in(r, n, "comm_tag", u64::MAX >> 1)?.unwrap_or(0);
                    msgs.push(P2p { src: r, dst, bytes, recv: None });
                    let m = msgs.len() - 1;
                    match early_recvs.get_mut(&(r, dst, tag)).and_then(|q| q.pop_front()) {
                        Some(recv) => msgs[m].recv = Some(recv),
                        None => unmatched_sends.entry((r, dst, tag)).or_default().push_back(m),
                    }
                    Kind::Send(m)
                }
                et::COMM_RECV_NODE => {
                    let src = attr_in(r, n, "comm_src", ranks as u64 - 1)?.ok_or_else(|| bad(r, n, "a receive without `comm_src`".into()))? as u32;
                    let tag = attr_in(r, n, "comm_tag", u64::MAX >> 1)?.unwrap_or(0);
                    match unmatched_sends.get_mut(&(src, r, tag)).and_then(|q| q.pop_front()) {
                        Some(m) => {
                            msgs[m].recv = Some((r, i));
                            Kind::Recv(m)
                        }
                        None => {
                            early_recvs.entry((src, r, tag)).or_default().push_back((r, i));
                            // Matched when the sender's trace is read.
                            Kind::Recv(usize::MAX)
                        }
                    }
                }
                _ => Kind::Other,
            });
        }
        kinds.push(k);
    }
    // Receives matched after their rank was read.
    for m in 0..msgs.len() {
        if let Some((r, i)) = msgs[m].recv {
            kinds[r as usize][i] = Kind::Recv(m);
        }
    }
    for (r, k) in kinds.iter().enumerate() {
        for (i, kind) in k.iter().enumerate() {
            if matches!(kind, Kind::Recv(usize::MAX)) {
                return Err(bad(r as u32, &traces[r].nodes[i], "a receive no send matches (by source, destination and `comm_tag`, in order)".into()));
            }
        }
    }
    if let Some(m) = msgs.iter().position(|m| m.recv.is_none()) {
        let src = msgs[m].src;
        let i = kinds[src as usize].iter().position(|k| matches!(k, Kind::Send(x) if *x == m)).expect("its node");
        return Err(bad(src, &traces[src as usize].nodes[i], format!("a send to rank {} that no receive matches", msgs[m].dst)));
    }
    for c in &colls {
        if c.nodes.len() != c.ranks.len() {
            let (r, i) = c.nodes[0];
            let missing: Vec<String> = c.ranks.iter().filter(|m| !c.nodes.iter().any(|(x, _)| x == *m)).map(|m| m.to_string()).collect();
            return Err(bad(r, &traces[r as usize].nodes[i], format!("a collective that ranks {} of its group never reach", missing.join(", "))));
        }
    }
    // Counted before building (an upper bound: every node a task with its dependencies and
    // two edges more, every collective its instance).
    let nodes: u64 = traces.iter().map(|t| t.nodes.len() as u64).sum();
    let deps: u64 = traces.iter().flat_map(|t| &t.nodes).map(|n| n.deps().count() as u64).sum();
    let spec = |c: &Coll| collective::CollectiveSpec { op: c.op.into(), algorithm: None, bytes: ByteSize(c.bytes), parallelism: None, root: None, gap_us: None, group: None, channels: None };
    let mut size = GraphSize { conns: msgs.len() as u64, tasks: nodes + ranks as u64 + 1, messages: msgs.len() as u64, edges: deps + 3 * nodes, flows: 0 };
    for c in colls.iter().filter(|c| c.op != "barrier" && c.ranks.len() > 1) {
        let (op, alg) = collective::validate_spec("workload.traces", &spec(c), c.ranks.len() as u32)?;
        size = size.plus(collective::instance_size(op, alg, c.ranks.len() as u32, &spec(c), p.chunk.0, p.qps));
    }
    room.admit("workload.traces", size, || format!("{ranks} ranks' traces: {nodes} nodes, {} collectives, {} messages", colls.len(), msgs.len()))?;

    // Tasks: every node's, then every collective's instance.
    let mut g = GraphBuilder::new();
    let mut roles: Vec<Role> = Vec::new();
    let tag = |g: &GraphBuilder, roles: &mut Vec<Role>, role: Role| roles.resize(g.tasks(), role);
    let starts: Vec<u32> = (0..ranks)
        .map(|_| {
            let s = g.join();
            tag(&g, &mut roles, Role::Marker);
            s
        })
        .collect();
    let mut p2p_conns: HashMap<(u32, u32), u32> = HashMap::new();
    let other = group_index("other").expect("the kind of unlabelled communication") as u8;
    // Per message its send task; per (rank, node) its task (a collective's: none yet).
    let mut send_task = vec![u32::MAX; msgs.len()];
    let mut task: Vec<Vec<u32>> = Vec::with_capacity(traces.len());
    for k in &kinds {
        let mut row = Vec::with_capacity(k.len());
        for kind in k {
            row.push(match *kind {
                Kind::Compute(_) => {
                    let j = g.join();
                    tag(&g, &mut roles, Role::Compute);
                    j
                }
                Kind::Send(m) => {
                    let (src, dst) = (host_of[msgs[m].src as usize], host_of[msgs[m].dst as usize]);
                    let c = *p2p_conns.entry((src, dst)).or_insert_with(|| g.conn(NodeId(src), NodeId(dst)));
                    let s = g.send(c, msgs[m].bytes, Time::ZERO);
                    tag(&g, &mut roles, Role::Message(other));
                    send_task[m] = s;
                    s
                }
                Kind::Collective(_) => u32::MAX,
                Kind::Recv(_) | Kind::Other => {
                    let j = g.join();
                    tag(&g, &mut roles, Role::Marker);
                    j
                }
            });
        }
        task.push(row);
    }
    // Collectives: (start, end) tasks.
    let mut conns_of_group: HashMap<Vec<u32>, HashMap<(u32, u32, u32), u32>> = HashMap::new();
    let mut span: Vec<(u32, u32)> = Vec::with_capacity(colls.len());
    for (ci, c) in colls.iter().enumerate() {
        if c.op == "barrier" || c.ranks.len() == 1 {
            let j = g.join();
            tag(&g, &mut roles, Role::Marker);
            span.push((j, j));
            continue;
        }
        let s = spec(c);
        let n = c.ranks.len() as u32;
        let (op, alg) = collective::validate_spec("workload.traces", &s, n)?;
        let mut inst = collective::instance(0, 0, ci as u32, op, alg, n, &s, p.chunk.0);
        inst.group = "other";
        let hosts: Vec<NodeId> = c.ranks.iter().map(|&r| NodeId(host_of[r as usize])).collect();
        let conns = conns_of_group.entry(c.ranks.clone()).or_default();
        span.push(collective::emit(&mut g, conns, &hosts, &s, inst, p.chunk.0, p.qps, Time::ZERO));
        tag(&g, &mut roles, Role::Collective);
    }
    // Edges. Where a node starts, and what fires when it is done.
    let start_of = |r: usize, i: usize| match kinds[r][i] {
        Kind::Collective(c) => span[c].0,
        _ => task[r][i],
    };
    let done_of = |r: usize, i: usize| match kinds[r][i] {
        Kind::Collective(c) => (span[c].1, Trigger::Delivered),
        // A send is done when its sender holds it acknowledged.
        Kind::Send(_) => (task[r][i], Trigger::Completed),
        _ => (task[r][i], Trigger::Delivered),
    };
    let end = g.join();
    tag(&g, &mut roles, Role::Marker);
    for (r, t) in traces.iter().enumerate() {
        let mut prev_compute: Option<u32> = None;
        let mut has_dependants = vec![false; t.nodes.len()];
        for n in &t.nodes {
            for d in n.deps() {
                has_dependants[indices[r][&d]] = true;
            }
        }
        for (i, n) in t.nodes.iter().enumerate() {
            let to = start_of(r, i);
            let delay = if let Kind::Compute(d) = kinds[r][i] { d } else { Time::ZERO };
            let mut inputs = 0;
            for d in n.deps() {
                let (from, on) = done_of(r, indices[r][&d]);
                g.edge(from, to, on, delay);
                inputs += 1;
            }
            if let Kind::Compute(_) = kinds[r][i] {
                // One compute stream per GPU, in file order.
                g.edge(prev_compute.unwrap_or(starts[r]), to, Trigger::Delivered, delay);
                prev_compute = Some(to);
                inputs += 1;
            }
            if let Kind::Recv(m) = kinds[r][i] {
                g.edge(send_task[m], to, Trigger::Delivered, Time::ZERO);
                inputs += 1;
            }
            if inputs == 0 {
                g.edge(starts[r], to, Trigger::Delivered, Time::ZERO);
            }
            if !has_dependants[i] {
                let (from, on) = done_of(r, i);
                g.edge(from, end, on, Time::ZERO);
            }
        }
    }
    let mut t = g.finish();
    roles.resize(t.tasks.len(), Role::Marker);
    let lines = vec![format!(
        "chakra        {ranks} ranks' traces: {nodes} nodes ({} compute), {} collectives, {} point-to-point messages",
        kinds.iter().flatten().filter(|k| matches!(k, Kind::Compute(_))).count(),
        colls.len(),
        msgs.len()
    )];
    t.step = Some(std::sync::Arc::new(StepMap { roles, iteration_ends: vec![end], lines }));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::et::{Node, Trace, Value};
    use super::*;

    fn node(id: u64, name: &str, kind: u32, deps: &[u64], attrs: &[(&str, Value)]) -> Node {
        Node { id, name: name.into(), kind, data_deps: deps.to_vec(), attrs: attrs.iter().map(|(n, v)| (n.to_string(), v.clone())).collect(), ..Node::default() }
    }

    /// The bundled example (`data/chakra/step.<rank>.et`, groups in `data/chakra/groups.json`):
    /// four ranks; each computes 20 µs, AllReduces 256 KiB with its pair (group `1`: ranks 0 and
    /// 1, `2`: 2 and 3; numbers, as ASTRA-sim requires); ranks 0 and 1 send 128 KiB to ranks 2
    /// and 3, which compute on what they received (10^10 FLOPs, recorded as 20 µs, which this
    /// reader and ASTRA-sim's take); then all four AllReduce 1 MiB.
    pub(crate) fn example_traces() -> Vec<Trace> {
        (0..4u64)
            .map(|r| {
                let pair = if r < 2 { "1" } else { "2" };
                let mut nodes = vec![
                    Node { duration_micros: 20, ..node(1, "forward", et::COMP_NODE, &[], &[]) },
                    node(2, "tp_allreduce", et::COMM_COLL_NODE, &[1], &[("comm_type", Value::Int(0)), ("comm_size", Value::Int(256 << 10)), ("pg_name", Value::Text(pair.into()))]),
                ];
                if r < 2 {
                    nodes.push(node(3, "send_activations", et::COMM_SEND_NODE, &[2], &[("comm_dst", Value::Int(r as i128 + 2)), ("comm_size", Value::Int(128 << 10)), ("comm_tag", Value::Int(7))]));
                } else {
                    nodes.push(node(3, "recv_activations", et::COMM_RECV_NODE, &[2], &[("comm_src", Value::Int(r as i128 - 2)), ("comm_size", Value::Int(128 << 10)), ("comm_tag", Value::Int(7))]));
                    nodes.push(Node { duration_micros: 20, ..node(4, "stage_compute", et::COMP_NODE, &[3], &[("num_ops", Value::Int(10_000_000_000))]) });
                }
                let last = nodes.last().unwrap().id;
                nodes.push(node(9, "dp_allreduce", et::COMM_COLL_NODE, &[last], &[("comm_type", Value::Int(0)), ("comm_size", Value::Int(1 << 20))]));
                Trace { version: "0.0.4".into(), nodes }
            })
            .collect()
    }

    /// The bundled example's files are what the writer makes of [`example_traces`]
    /// (`FABRICSIM_BLESS=1` writes them).
    #[test]
    fn the_bundled_example_traces_are_the_writers() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/chakra");
        for (r, t) in example_traces().iter().enumerate() {
            let path = dir.join(format!("step.{r}.et"));
            let bytes = et::write(t);
            if std::env::var_os("FABRICSIM_BLESS").is_some() {
                std::fs::write(&path, &bytes).unwrap();
            }
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{}", path.display());
            assert_eq!(&et::read(&bytes).unwrap(), t);
        }
    }
}
