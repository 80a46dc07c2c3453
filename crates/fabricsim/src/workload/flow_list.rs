//! `flow_list`: flows read from a file, in one of two formats.
//!
//! - CSV with a header naming the columns `src,dst,bytes,start_us` (`start_us` optional, any
//!   order; `#` starts a comment line).
//! - htsim's connection matrix (`.cm`): `Nodes N`, `Connections C`, then lines
//!   `SRC->DST id K start T size BYTES` (T in microseconds, as htsim reads it), the format of the
//!   shared benchmark matrices. Each word of a line at most once; ids unique. htsim's words for
//!   what fabricsim does not model are refused naming the word, not skipped: triggers
//!   (`trigger`, `send_done_trigger`, `recv_done_trigger`, `Triggers` and `trigger id ...`
//!   lines: a connection started by others finishing), `msg`, `prio` and `failure` lines.
//!   (htsim refuses unknown words too; it reads `start` through a cast to whole µs, fabricsim
//!   keeps the fraction.)
//! - The flow file of the HPCC ns-3 RDMA simulator (alibaba-edu/High-Precision-Congestion-Control,
//!   `simulation/mix/flow.txt`, read by its `scratch/third.cc`): a count N, then N lines
//!   `SRC DST PG DPORT SIZE START` — node ids, priority group, destination port, bytes, start in
//!   seconds. As there, only the first N lines are read and the starts must not decrease (it
//!   schedules the flows in file order). Node ids are host ids, or, with `ns3_topology` naming
//!   that simulator's topology file, a node's rank among the nodes its second line does not list
//!   as switches (its example star has switch 0 and hosts 1..=65). One priority group only:
//!   fabricsim models one data class, so a second `PG` is refused. `DPORT` steers only ns-3's
//!   ECMP hash; fabricsim draws its own entropy, so it is read and checked but not used.
//! - The flow file of ConWeave's ns-3 simulator (conweave-project/conweave-ns3 @ 236a801, read
//!   by its `scratch/network-load-balance.cc`, `ReadFlowInput`), `format = "conweave"`: the same
//!   but without `DPORT`, N lines `SRC DST PG SIZE START`. That simulator numbers ports itself
//!   (`ScheduleFlowInputs`): a flow's source port is 10000 + the earlier flows *from the same
//!   source*, its destination port 100 + the earlier flows *to the same destination* (the HPCC
//!   simulator counts per host pair and reads DPORT), which `ns3_ecmp` hashes.
//!
//! Errors quote at most ~100 characters of a bad token or line (`excerpt::clip`).

use crate::units::{Bytes, Time};
use super::{check_endpoints, FlowSpec};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use crate::excerpt::clip;
use crate::ids::NodeId;
use crate::net::switch_lb::ns3_ecmp::Ns3Naming;
use crate::workload::InputFiles;
use std::collections::HashMap;

/// Registry name.
pub const NAME: &str = "flow_list";
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &["workload={ kind = \"flow_list\", file = \"../data/flows/fan_in_out.csv\" }"];
/// Registry summary.
pub const SUMMARY: &str = "explicit flows from a CSV file (src,dst,bytes,start_us), an htsim .cm matrix or an HPCC ns-3 flow file";

/// File format of a flow list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowListFormat {
    /// Comma-separated with a header row.
    Csv,
    /// htsim connection matrix.
    HtsimCm,
    /// The HPCC ns-3 simulator's flow file.
    Ns3,
    /// ConWeave's ns-3 simulator's flow file (no `DPORT`).
    Conweave,
}

/// Parameters of `flow_list`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowListParams {
    /// Path of the file, relative to the scenario file.
    pub file: String,
    /// Format; by default `.cm` files are htsim matrices and anything else CSV.
    pub format: Option<FlowListFormat>,
    /// `format = "ns3"` or `"conweave"` only: the ns-3 topology file whose switch list maps
    /// node ids to hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns3_topology: Option<String>,
    /// Each flow starts up to this much later, uniformly at random.
    pub start_jitter_us: f64,
}

/// Reads the flows.
/// The flows of the list, with the ns-3 names of their nodes and ports when the list is the
/// HPCC ns-3 simulator's and names its topology (for `switch.lb = "ns3_ecmp"`).
pub fn generate(p: &FlowListParams, hosts: u32, files: &InputFiles) -> Result<(Vec<FlowSpec>, Option<Ns3Naming>)> {
    if p.file.is_empty() {
        return Err(Error::invalid("workload.file", "missing: name the flow-list file (CSV or htsim .cm)"));
    }
    let (path, text) = files.read(&p.file);
    let text = text
        .map_err(|e| Error::invalid("workload.file", format!("cannot read {}: {e}", path.display())))?;
    let format = p.format.unwrap_or(if p.file.ends_with(".cm") { FlowListFormat::HtsimCm } else { FlowListFormat::Csv });
    let name = path.display().to_string();
    let conweave = format == FlowListFormat::Conweave;
    if p.ns3_topology.is_some() && !matches!(format, FlowListFormat::Ns3 | FlowListFormat::Conweave) {
        return Err(Error::invalid("workload.ns3_topology", "only with format = \"ns3\" or \"conweave\""));
    }
    match format {
        FlowListFormat::Csv => Ok((parse_csv(&text, &name, hosts)?, None)),
        FlowListFormat::HtsimCm => Ok((parse_htsim_cm(&text, &name, hosts)?, None)),
        FlowListFormat::Ns3 | FlowListFormat::Conweave => {
            let topology = match &p.ns3_topology {
                Some(topo) => {
                    let (path, text) = files.read(topo);
                    let text = text.map_err(|e| Error::invalid("workload.ns3_topology", format!("cannot read {}: {e}", path.display())))?;
                    Some((path.display().to_string(), text))
                }
                None => None,
            };
            let host_of_node = topology.as_ref().map(|(file, text)| ns3_host_of_node(text, file)).transpose()?;
            let (flows, dports) = parse_ns3_with_ports(&text, &name, hosts, host_of_node.as_deref(), conweave)?;
            let naming = match (&topology, &host_of_node) {
                (Some((file, text)), Some(map)) => Some(ns3_naming(text, file, map, &flows, &dports, conweave)?),
                _ => None,
            };
            Ok((flows, naming))
        }
    }
}

/// The ns-3 names of the run (see [`Ns3Naming`]): node ids from the topology file (each host's
/// switch from its links; the ToRs in the order of their hosts, then the other switches in id
/// order), and each flow's ports as the simulator gives them: `third.cc`'s source port 10000 +
/// the flows of the same node pair before it in the file, destination port from the file; or,
/// `conweave`, `network-load-balance.cc`'s 10000 + the earlier flows of the same source and
/// 100 + the earlier flows to the same destination.
fn ns3_naming(topo: &str, file: &str, host_of_node: &[Option<u32>], flows: &[FlowSpec], dports: &[u16], conweave: bool) -> Result<Ns3Naming> {
    let bad_topo = |line: usize, msg: String| Error::invalid("workload.ns3_topology", format!("{file}:{line}: {msg}"));
    let mut host_node = vec![0u32; host_of_node.iter().flatten().count()];
    for (node, h) in host_of_node.iter().enumerate() {
        if let Some(h) = h {
            host_node[*h as usize] = node as u32;
        }
    }
    // The links, after the head and the switch list (`ns3_host_of_node` read those).
    let lines = topo.lines().skip(2);
    let mut host_switch = vec![u32::MAX; host_node.len()];
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let ends = (f.first().and_then(|s| s.parse::<u32>().ok()), f.get(1).and_then(|s| s.parse::<u32>().ok()));
        let (Some(a), Some(b)) = ends else {
            return Err(bad_topo(i + 3, format!("expected a link `NODE NODE RATE DELAY ERROR`, found `{}`", clip(line))));
        };
        for (x, y) in [(a, b), (b, a)] {
            if let (Some(Some(h)), Some(None)) = (host_of_node.get(x as usize), host_of_node.get(y as usize)) {
                if host_switch[*h as usize] == u32::MAX {
                    host_switch[*h as usize] = y;
                }
            }
        }
    }
    // fabricsim's switches: the ToRs in the order of their hosts, then the other switches in
    // id order (as `from-ns3` names them spine0, spine1, ...).
    let mut switch_node: Vec<u32> = Vec::new();
    for &s in &host_switch {
        if s != u32::MAX && !switch_node.contains(&s) {
            switch_node.push(s);
        }
    }
    let spines: Vec<u32> = (0..host_of_node.len() as u32).filter(|&n| host_of_node[n as usize].is_none() && !switch_node.contains(&n)).collect();
    switch_node.extend(spines);
    // Flows so far per key: the node pair (HPCC) or the source and the destination (ConWeave).
    let mut counts: HashMap<(u32, u32), u16> = HashMap::new();
    let mut next = |key: (u32, u32)| {
        let k = counts.entry(key).or_insert(0);
        *k = k.wrapping_add(1);
        k.wrapping_sub(1)
    };
    let conn_ports = flows
        .iter()
        .zip(dports)
        .map(|(f, &dport)| {
            let (s, d) = (host_node[f.src.idx()], host_node[f.dst.idx()]);
            if conweave {
                // Distinct key spaces: (node, MAX) counts a source's flows, (MAX, node) a
                // destination's.
                (f.src, 10000u16.wrapping_add(next((s, u32::MAX))), 100u16.wrapping_add(next((u32::MAX, d))))
            } else {
                (f.src, 10000u16.wrapping_add(next((s, d))), dport)
            }
        })
        .collect();
    Ok(Ns3Naming { host_node, host_switch, switch_node, conn_ports })
}

/// The host index of every node of an ns-3 topology file (`None` for a switch): its first line
/// `NODES SWITCHES LINKS`, its second the switches' node ids.
pub fn ns3_host_of_node(text: &str, file: &str) -> Result<Vec<Option<u32>>> {
    let bad_topo = |line: usize, msg: String| Error::invalid("workload.ns3_topology", format!("{file}:{line}: {msg}"));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let [nodes, switches, _links] = head[..] else {
        return Err(bad_topo(1, "expected `NODES SWITCHES LINKS`".into()));
    };
    let num = |s: &str, what: &str, line: usize| s.parse::<u32>().map_err(|_| bad_topo(line, format!("{what} `{}` is not a count", clip(s))));
    let (nodes, switches) = (num(nodes, "nodes", 1)?, num(switches, "switches", 1)?);
    if nodes > super::MAX_FLOWS as u32 || switches > nodes {
        return Err(bad_topo(1, format!("{switches} switches of {nodes} nodes: allowed at most as many switches as nodes, and at most {} nodes", super::MAX_FLOWS)));
    }
    let mut is_switch = vec![false; nodes as usize];
    let listed: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    if listed.len() != switches as usize {
        return Err(bad_topo(2, format!("{} switch ids listed, {switches} declared on line 1", listed.len())));
    }
    for s in listed {
        let id = num(s, "switch id", 2)?;
        let slot = is_switch.get_mut(id as usize).ok_or_else(|| bad_topo(2, format!("switch {id} is not a node (0..{nodes})")))?;
        *slot = true;
    }
    let mut next = 0u32;
    Ok(is_switch
        .iter()
        .map(|&sw| {
            (!sw).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect())
}

/// Parses the HPCC ns-3 simulator's flow file (see the module doc); `host_of_node` maps node
/// ids to hosts (identity when absent).
pub fn parse_ns3(text: &str, file: &str, hosts: u32, host_of_node: Option<&[Option<u32>]>) -> Result<Vec<FlowSpec>> {
    parse_ns3_with_ports(text, file, hosts, host_of_node, false).map(|(flows, _)| flows)
}

/// [`parse_ns3`], with each flow's `DPORT`; `conweave`: ConWeave's lines, without `DPORT`
/// (0 in its place: the ports come from [`ns3_naming`]).
fn parse_ns3_with_ports(text: &str, file: &str, hosts: u32, host_of_node: Option<&[Option<u32>]>, conweave: bool) -> Result<(Vec<FlowSpec>, Vec<u16>)> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (first, count) = lines.next().ok_or_else(|| bad(file, 1, "empty file: expected the flow count on the first line"))?;
    let count: u64 = parse_num(file, first + 1, "flow count", count)?;
    super::check_flow_count("workload.file", count, &format!("{file}: the declared count"))?;
    let host = |n: usize, what: &str, s: &str| -> Result<u64> {
        let node: u64 = parse_num(file, n, what, s)?;
        match host_of_node {
            None => Ok(node),
            Some(map) => match map.get(node as usize) {
                Some(Some(h)) => Ok(*h as u64),
                Some(None) => Err(bad(file, n, format!("{what} {node} is a switch in the topology file"))),
                None => Err(bad(file, n, format!("{what} {node} is not a node of the topology file (0..{})", map.len()))),
            },
        }
    };
    let mut flows = Vec::with_capacity(count as usize);
    let mut dports = Vec::with_capacity(count as usize);
    let (mut pg_seen, mut last_start) = (None::<(u64, usize)>, 0u64);
    for (i, line) in lines.take(count as usize) {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        let (src, dst, pg, dport, size, start) = match (conweave, &f[..]) {
            (false, &[src, dst, pg, dport, size, start]) => (src, dst, pg, Some(dport), size, start),
            (true, &[src, dst, pg, size, start]) => (src, dst, pg, None, size, start),
            (false, _) => return Err(bad(file, n, format!("expected 6 fields `SRC DST PG DPORT SIZE START`, found {}", f.len()))),
            (true, _) => return Err(bad(file, n, format!("expected 5 fields `SRC DST PG SIZE START` (ConWeave's format, without DPORT), found {}", f.len()))),
        };
        let (src, dst) = (host(n, "src", src)?, host(n, "dst", dst)?);
        let pg: u64 = parse_num(file, n, "pg", pg)?;
        match pg_seen {
            None => pg_seen = Some((pg, n)),
            Some((first, at)) if first != pg => {
                return Err(bad(file, n, format!("priority group {pg}, where line {at} has {first}: fabricsim models one data class, so every flow needs the same PG")));
            }
            Some(_) => {}
        }
        let dport: u16 = match dport {
            Some(d) => parse_num(file, n, "dport", d)?,
            None => 0,
        };
        let bytes: u64 = parse_num(file, n, "size", size)?;
        let secs: f64 = parse_num(file, n, "start", start)?;
        let start = crate::units::checked_us(secs * 1e6).ok_or_else(|| bad(file, n, format!("start `{}` must be a time in seconds, 0..={}", crate::units::show_num(secs), crate::units::show_num(crate::units::MAX_TIME_US / 1e6))))?;
        if start < Time(last_start) {
            return Err(bad(file, n, format!("start {} s is before the previous flow's: the ns-3 simulator schedules flows in file order, so starts must not decrease", crate::units::show_num(secs))));
        }
        last_start = start.0;
        check_endpoints(&format!("workload.file ({file}:{n})"), src, dst, hosts)?;
        if bytes == 0 {
            return Err(bad(file, n, "size must be at least 1 byte"));
        }
        flows.push(FlowSpec { src: NodeId(src as u32), dst: NodeId(dst as u32), bytes: Bytes(bytes), start, after: None });
        dports.push(dport);
    }
    if (flows.len() as u64) < count {
        return Err(bad(file, first + 1, format!("declares {count} flows, the file lists {}", flows.len())));
    }
    Ok((flows, dports))
}

fn bad(file: &str, line: usize, msg: impl std::fmt::Display) -> Error {
    Error::invalid("workload.file", format!("{file}:{line}: {msg}"))
}

fn parse_num<T: std::str::FromStr>(file: &str, line: usize, what: &str, s: &str) -> Result<T> {
    s.trim().parse().map_err(|_| bad(file, line, format!("{what} `{}` is not a valid number", clip(s.trim()))))
}

fn start_from_us(file: &str, line: usize, s: &str) -> Result<Time> {
    let us: f64 = parse_num(file, line, "start", s)?;
    crate::units::checked_us(us).ok_or_else(|| bad(file, line, format!("start `{}` must be a time in microseconds, 0..={}", crate::units::show_num(us), crate::units::show_num(crate::units::MAX_TIME_US))))
}

/// Parses the CSV form.
pub fn parse_csv(text: &str, file: &str, hosts: u32) -> Result<Vec<FlowSpec>> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (hline, header) = lines.next().ok_or_else(|| bad(file, 1, "empty file: expected a header `src,dst,bytes,start_us`"))?;
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
    let col = |name: &str| cols.iter().position(|c| c == name);
    let (Some(si), Some(di), Some(bi)) = (col("src"), col("dst"), col("bytes")) else {
        return Err(bad(file, hline + 1, format!("header `{}` must name the columns src, dst, bytes (and optionally start_us)", clip(header))));
    };
    let ti = col("start_us");
    let mut flows = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != cols.len() {
            return Err(bad(file, n, format!("expected {} fields, found {}", cols.len(), f.len())));
        }
        let src: u64 = parse_num(file, n, "src", f[si])?;
        let dst: u64 = parse_num(file, n, "dst", f[di])?;
        let bytes: u64 = parse_num(file, n, "bytes", f[bi])?;
        let start = match ti {
            Some(t) => start_from_us(file, n, f[t])?,
            None => Time::ZERO,
        };
        check_endpoints(&format!("workload.file ({file}:{n})"), src, dst, hosts)?;
        if bytes == 0 {
            return Err(bad(file, n, "bytes must be at least 1"));
        }
        flows.push(FlowSpec { src: NodeId(src as u32), dst: NodeId(dst as u32), bytes: Bytes(bytes), start, after: None });
    }
    Ok(flows)
}

/// The words a `.cm` connection line may carry, each followed by its value.
const CM_WORDS: &str = "id, start, size";

/// Why fabricsim refuses htsim's trigger words: it has no triggers (the ordering a trigger
/// gives cannot be dropped silently, nor mapped onto a finish dependency without htsim's
/// oneshot / multishot / barrier counting and its send-done versus receive-done moments).
const NO_TRIGGERS: &str = "fabricsim does not model htsim triggers (connections started when others finish or a barrier fills); give every connection a `start` time instead (traffic with dependencies: workload kind \"collectives\")";

/// htsim `.cm` words of mechanisms fabricsim does not model, with the reason.
fn cm_unsupported(word: &str) -> Option<&'static str> {
    Some(match word {
        "trigger" | "send_done_trigger" | "recv_done_trigger" | "Triggers" => NO_TRIGGERS,
        "msg" => "several messages on one connection (htsim's `msg`, with -conn_reuse) are not modelled: every line is its own connection",
        "prio" => "per-connection priorities are not modelled",
        "failure" | "Failures" => "htsim's matrix failures are not translated: fail links with [topology.failures] or [[link_events]] in the scenario",
        _ => return None,
    })
}

/// Parses htsim's connection-matrix form.
pub fn parse_htsim_cm(text: &str, file: &str, hosts: u32) -> Result<Vec<FlowSpec>> {
    let mut flows = Vec::new();
    let mut declared_nodes = None;
    let mut declared_conns = None;
    // Connection id -> the line that gave it, to name both lines of a duplicate.
    let mut ids: HashMap<u64, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if let Some(why) = cm_unsupported(words[0]) {
            return Err(bad(file, n, format!("`{}`: not supported: {why}", words[0])));
        }
        match words[0] {
            "Nodes" if words.len() == 2 => declared_nodes = Some(parse_num::<u64>(file, n, "Nodes", words[1])?),
            "Connections" if words.len() == 2 => declared_conns = Some(parse_num::<u64>(file, n, "Connections", words[1])?),
            w if w.contains("->") => {
                let (s, d) = w.split_once("->").unwrap_or_default();
                let src: u64 = parse_num(file, n, "source", s)?;
                let dst: u64 = parse_num(file, n, "destination", d)?;
                let (mut bytes, mut start, mut id) = (None, None, None);
                for pair in words[1..].chunks(2) {
                    let word = pair[0];
                    if let Some(why) = cm_unsupported(word) {
                        return Err(bad(file, n, format!("`{word}`: not supported: {why}")));
                    }
                    let slot_given = match word {
                        "size" => bytes.is_some(),
                        "start" => start.is_some(),
                        "id" => id.is_some(),
                        _ => return Err(bad(file, n, format!("unknown word `{}`; a connection line allows {CM_WORDS} (`SRC->DST id N start T size BYTES`)", clip(word)))),
                    };
                    if slot_given {
                        return Err(bad(file, n, format!("`{word}` given twice on one line; each of {CM_WORDS} at most once")));
                    }
                    let Some(&value) = pair.get(1) else {
                        return Err(bad(file, n, format!("`{word}` needs a value after it")));
                    };
                    match word {
                        "size" => bytes = Some(parse_num::<u64>(file, n, "size", value)?),
                        "start" => start = Some(start_from_us(file, n, value)?),
                        _ => id = Some(parse_num::<u64>(file, n, "id", value)?),
                    }
                }
                if let Some(id) = id {
                    // htsim refuses id 0 too; duplicates it would take, but a repeated id
                    // is a mistake in a matrix whose ids name its flows.
                    if id == 0 {
                        return Err(bad(file, n, "id 0: connection ids start at 1 (htsim refuses 0 too)"));
                    }
                    if let Some(first) = ids.insert(id, n) {
                        return Err(bad(file, n, format!("connection id {id} is also line {first}'s: ids must be unique")));
                    }
                }
                let bytes = bytes.ok_or_else(|| bad(file, n, "connection line has no `size BYTES`"))?;
                check_endpoints(&format!("workload.file ({file}:{n})"), src, dst, hosts)?;
                if bytes == 0 {
                    return Err(bad(file, n, "size must be at least 1"));
                }
                flows.push(FlowSpec { src: NodeId(src as u32), dst: NodeId(dst as u32), bytes: Bytes(bytes), start: Time((start.unwrap_or(Time::ZERO)).0), after: None });
            }
            _ => return Err(bad(file, n, format!("unrecognised line `{}` (expected `Nodes N`, `Connections C` or `SRC->DST ... size BYTES`)", clip(t)))),
        }
    }
    // htsim runs a matrix on a fabric of exactly its node count: a smaller matrix on a larger
    // fabric would run, silently, on another fabric than the one it was written for.
    if let Some(nodes) = declared_nodes {
        if nodes != hosts as u64 {
            return Err(bad(file, 1, format!("the matrix is for {nodes} nodes but the fabric has {hosts} hosts: set topology.hosts = {nodes} (or run the .cm file itself: `fabricsim run FILE.cm` runs it on the benchmark fabric of bench/perm_*.toml, sized for it)")));
        }
    }
    if let Some(c) = declared_conns {
        if c != flows.len() as u64 {
            return Err(bad(file, 2, format!("declares {c} connections but lists {}", flows.len())));
        }
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A star of ns-3 nodes as the HPCC simulator's example names them: switch 0, hosts 1..=4.
    const STAR: &str = "5 1 4\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n0 4 100Gbps 0.001ms 0\n";

    #[test]
    fn reads_the_ns3_flow_file_in_its_simulator_s_terms() {
        // Two flows declared, a third line not read (as ns-3 reads only the declared count);
        // 200 MB at 2 s and 5 MB at 2.5 s; pg 3 and the destination port as the example has.
        let flows = "2\n2 1 3 100 200000000 2\n4 1 3 100 5000000 2.5\n3 1 3 100 7 9\n";
        let map = ns3_host_of_node(STAR, "topo.txt").unwrap();
        assert_eq!(map, [None, Some(0), Some(1), Some(2), Some(3)]);
        let f = parse_ns3(flows, "flow.txt", 4, Some(&map)).unwrap();
        assert_eq!(f.iter().map(|f| (f.src.0, f.dst.0, f.bytes.0, f.start.0)).collect::<Vec<_>>(), [(1, 0, 200_000_000, 2_000_000_000_000), (3, 0, 5_000_000, 2_500_000_000_000)]);
        // Without a topology the node ids are host ids.
        let f = parse_ns3("1\n0 3 3 100 1000 0\n", "flow.txt", 4, None).unwrap();
        assert_eq!((f[0].src.0, f[0].dst.0, f[0].start.0), (0, 3, 0));
    }

    #[test]
    fn ns3_flow_files_the_simulator_would_misread_are_refused_naming_file_and_line() {
        let map = ns3_host_of_node(STAR, "topo.txt").unwrap();
        let e = |text: &str| parse_ns3(text, "flow.txt", 4, Some(&map)).unwrap_err().to_string();
        assert!(e("3\n1 2 3 100 10 0\n").contains("declares 3 flows, the file lists 1"));
        assert!(e("2\n1 2 3 100 10 1\n2 1 3 100 10 0.5\n").contains("flow.txt:3: start 0.5 s is before the previous flow's"));
        assert!(e("2\n1 2 3 100 10 0\n2 1 1 100 10 0\n").contains("flow.txt:3: priority group 1, where line 2 has 3"));
        assert!(e("1\n0 2 3 100 10 0\n").contains("src 0 is a switch"));
        assert!(e("1\n1 9 3 100 10 0\n").contains("dst 9 is not a node of the topology file (0..5)"));
        assert!(e("1\n1 2 3 100 0 0\n").contains("size must be at least 1 byte"));
        assert!(e("1\n1 2 3 100 10\n").contains("expected 6 fields"));
        assert!(e("1\n1 2 3 99999 10 0\n").contains("dport `99999` is not a valid number"));
        assert!(e("x\n").contains("flow count `x`"));
        let topo = |t: &str| ns3_host_of_node(t, "topo.txt").unwrap_err().to_string();
        assert!(topo("5 2 4\n0\n").contains("topo.txt:2: 1 switch ids listed, 2 declared"));
        assert!(topo("5 1 4\n7\n").contains("switch 7 is not a node"));
        assert!(topo("five\n").contains("topo.txt:1: expected `NODES SWITCHES LINKS`"));
    }

    #[test]
    fn reads_conweave_s_flow_file_and_numbers_its_ports_as_that_simulator_does() {
        // No DPORT; ports per source (10000 + k) and per destination (100 + k), where the HPCC
        // simulator counts per node pair and reads DPORT.
        let map = ns3_host_of_node(STAR, "topo.txt").unwrap();
        let text = "3\n1 2 3 1000 2\n1 3 3 1000 2\n4 2 3 1000 2.1\n";
        let (flows, dports) = parse_ns3_with_ports(text, "flow.txt", 4, Some(&map), true).unwrap();
        assert_eq!(flows.iter().map(|f| (f.src.0, f.dst.0, f.bytes.0)).collect::<Vec<_>>(), [(0, 1, 1000), (0, 2, 1000), (3, 1, 1000)]);
        let naming = ns3_naming(STAR, "topo.txt", &map, &flows, &dports, true).unwrap();
        assert_eq!(naming.conn_ports, [(NodeId(0), 10000, 100), (NodeId(0), 10001, 100), (NodeId(3), 10000, 101)]);
        // The same flows in the HPCC dialect: per pair, DPORT from the file.
        let hpcc = "3\n1 2 3 7 1000 2\n1 3 3 8 1000 2\n4 2 3 9 1000 2.1\n";
        let (flows, dports) = parse_ns3_with_ports(hpcc, "flow.txt", 4, Some(&map), false).unwrap();
        let naming = ns3_naming(STAR, "topo.txt", &map, &flows, &dports, false).unwrap();
        assert_eq!(naming.conn_ports, [(NodeId(0), 10000, 7), (NodeId(0), 10000, 8), (NodeId(3), 10000, 9)]);
        // A line with DPORT is one field too many for ConWeave's format, and the reverse.
        let e = parse_ns3_with_ports(hpcc, "flow.txt", 4, Some(&map), true).unwrap_err().to_string();
        assert!(e.contains("flow.txt:2: expected 5 fields `SRC DST PG SIZE START`"), "{e}");
        let e = parse_ns3_with_ports(text, "flow.txt", 4, Some(&map), false).unwrap_err().to_string();
        assert!(e.contains("flow.txt:2: expected 6 fields"), "{e}");
    }

    #[test]
    fn reads_htsim_matrix() {
        let cm = "Nodes 4\nConnections 2\n0->3 id 1 start 0 size 2097152\n2->1 id 2 start 1.5 size 100\n";
        let f = parse_htsim_cm(cm, "m.cm", 4).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[1].src.0, f[1].dst.0, f[1].bytes.0, f[1].start.0), (2, 1, 100, 1_500_000));
        let err = parse_htsim_cm("0->9 id 1 start 0 size 5\n", "m.cm", 4).unwrap_err().to_string();
        assert!(err.contains("host 9 does not exist"), "{err}");
        // The Nodes header must match the fabric, in either direction.
        for hosts in [5, 16] {
            let err = parse_htsim_cm(cm, "m.cm", hosts).unwrap_err().to_string();
            assert!(err.contains("workload.file") && err.contains("for 4 nodes") && err.contains("topology.hosts = 4"), "{err}");
        }
    }

    #[test]
    fn matrix_words_fabricsim_does_not_read_are_refused_naming_file_line_and_word() {
        let cm = |lines: &str| parse_htsim_cm(&format!("Nodes 4\n{lines}"), "m.cm", 4).unwrap_err().to_string();
        let e = cm("0->3 id 1 start 0 size 100 colour blue\n");
        assert!(e.contains("workload.file") && e.contains("m.cm:2:") && e.contains("unknown word `colour`") && e.contains("id, start, size"), "{e}");
        let e = cm("0->3 id 1 start 0 size 100\n1->2 id 1 start 0 size 100\n");
        assert!(e.contains("m.cm:3:") && e.contains("connection id 1 is also line 2's"), "{e}");
        let e = cm("0->3 id 1 size 100 start 0 size 200\n");
        assert!(e.contains("m.cm:2:") && e.contains("`size` given twice"), "{e}");
        let e = cm("0->3 id 1 start 0 size\n");
        assert!(e.contains("`size` needs a value"), "{e}");
        let e = cm("0->3 id 0 start 0 size 100\n");
        assert!(e.contains("id 0"), "{e}");
        // Triggers, in every spelling htsim has: a trigger cycle would otherwise start both
        // flows at t = 0.
        for (lines, word, at) in [
            ("0->3 id 1 trigger 2 size 100 send_done_trigger 1\n1->2 id 2 trigger 1 size 100 send_done_trigger 2\n", "trigger", "m.cm:2:"),
            ("0->3 id 1 start 0 size 100 send_done_trigger 1\n", "send_done_trigger", "m.cm:2:"),
            ("0->3 id 1 start 0 size 100 recv_done_trigger 1\n", "recv_done_trigger", "m.cm:2:"),
            ("Triggers 1\n0->3 id 1 start 0 size 100\n", "Triggers", "m.cm:2:"),
            ("0->3 id 1 start 0 size 100\ntrigger id 1 oneshot\n", "trigger", "m.cm:3:"),
        ] {
            let e = cm(lines);
            assert!(e.contains(at) && e.contains(&format!("`{word}`: not supported")) && e.contains("does not model htsim triggers") && e.contains("`start` time"), "{lines}: {e}");
        }
        for (word, why) in [("msg 3", "several messages"), ("prio 5", "priorities")] {
            let e = cm(&format!("0->3 id 1 start 0 size 100 {word}\n"));
            assert!(e.contains(why), "{e}");
        }
        assert!(cm("failure switch_type TOR\n").contains("[topology.failures]"));
    }

    #[test]
    fn reads_csv_with_any_column_order() {
        let csv = "# comment\nbytes,dst,src\n100,1,0\n";
        let f = parse_csv(csv, "f.csv", 2).unwrap();
        assert_eq!((f[0].src.0, f[0].dst.0, f[0].bytes.0), (0, 1, 100));
        assert!(parse_csv("src,dst\n0,1\n", "f.csv", 2).unwrap_err().to_string().contains("must name the columns"));
    }
}
