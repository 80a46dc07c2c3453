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
//!
//! Errors quote at most ~100 characters of a bad token or line (`excerpt::clip`).

use super::{check_endpoints, FlowSpec};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use crate::excerpt::clip;
use crate::workload::InputFiles;
use std::collections::HashMap;

/// Registry name.
pub const NAME: &str = "flow_list";
/// Registry summary.
pub const SUMMARY: &str = "explicit flows from a CSV file (src,dst,bytes,start_us) or an htsim .cm matrix";

/// File format of a flow list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowListFormat {
    /// Comma-separated with a header row.
    Csv,
    /// htsim connection matrix.
    HtsimCm,
}

/// Parameters of `flow_list`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowListParams {
    /// Path of the file, relative to the scenario file.
    pub file: String,
    /// Format; by default `.cm` files are htsim matrices and anything else CSV.
    pub format: Option<FlowListFormat>,
    /// Each flow starts up to this much later, uniformly at random.
    pub start_jitter_us: f64,
}

/// Reads the flows.
pub fn generate(p: &FlowListParams, hosts: u32, files: &InputFiles) -> Result<Vec<FlowSpec>> {
    if p.file.is_empty() {
        return Err(Error::invalid("workload.file", "missing: name the flow-list file (CSV or htsim .cm)"));
    }
    let (path, text) = files.read(&p.file);
    let text = text
        .map_err(|e| Error::invalid("workload.file", format!("cannot read {}: {e}", path.display())))?;
    let format = p.format.unwrap_or(if p.file.ends_with(".cm") { FlowListFormat::HtsimCm } else { FlowListFormat::Csv });
    let name = path.display().to_string();
    match format {
        FlowListFormat::Csv => parse_csv(&text, &name, hosts),
        FlowListFormat::HtsimCm => parse_htsim_cm(&text, &name, hosts),
    }
}

fn bad(file: &str, line: usize, msg: impl std::fmt::Display) -> Error {
    Error::invalid("workload.file", format!("{file}:{line}: {msg}"))
}

fn parse_num<T: std::str::FromStr>(file: &str, line: usize, what: &str, s: &str) -> Result<T> {
    s.trim().parse().map_err(|_| bad(file, line, format!("{what} `{}` is not a valid number", clip(s.trim()))))
}

fn start_from_us(file: &str, line: usize, s: &str) -> Result<u64> {
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
            None => 0,
        };
        check_endpoints(&format!("workload.file ({file}:{n})"), src, dst, hosts)?;
        if bytes == 0 {
            return Err(bad(file, n, "bytes must be at least 1"));
        }
        flows.push(FlowSpec { src: src as u32, dst: dst as u32, bytes, start, after: None });
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
                flows.push(FlowSpec { src: src as u32, dst: dst as u32, bytes, start: start.unwrap_or(0), after: None });
            }
            _ => return Err(bad(file, n, format!("unrecognised line `{}` (expected `Nodes N`, `Connections C` or `SRC->DST ... size BYTES`)", clip(t)))),
        }
    }
    // htsim runs a matrix on a fabric of exactly its node count: a smaller matrix on a larger
    // fabric would run, silently, on another fabric than the one it was written for.
    if let Some(nodes) = declared_nodes {
        if nodes != hosts as u64 {
            return Err(bad(file, 1, format!("the matrix is for {nodes} nodes but the fabric has {hosts} hosts: set topology.hosts = {nodes} (or run the .cm file itself: `fabricsim run FILE.cm` uses htsim's default fabric for it)")));
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

    #[test]
    fn reads_htsim_matrix() {
        let cm = "Nodes 4\nConnections 2\n0->3 id 1 start 0 size 2097152\n2->1 id 2 start 1.5 size 100\n";
        let f = parse_htsim_cm(cm, "m.cm", 4).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[1].src, f[1].dst, f[1].bytes, f[1].start), (2, 1, 100, 1_500_000));
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
        assert_eq!((f[0].src, f[0].dst, f[0].bytes), (0, 1, 100));
        assert!(parse_csv("src,dst\n0,1\n", "f.csv", 2).unwrap_err().to_string().contains("must name the columns"));
    }
}
