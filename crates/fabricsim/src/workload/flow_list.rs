//! `flow_list`: flows read from a file, in one of two formats.
//!
//! - CSV with a header naming the columns `src,dst,bytes,start_us` (`start_us` optional, any
//!   order; `#` starts a comment line).
//! - htsim's connection matrix (`.cm`): `Nodes N`, `Connections C`, then lines
//!   `SRC->DST id K start T size BYTES` (T in microseconds, as htsim reads it), the format of the
//!   shared benchmark matrices.
//!
//! Errors quote at most ~100 characters of a bad token or line (`scenario::clip`).

use super::{check_endpoints, FlowSpec};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use crate::scenario::clip;
use crate::workload::InputFiles;

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

/// Parses htsim's connection-matrix form.
pub fn parse_htsim_cm(text: &str, file: &str, hosts: u32) -> Result<Vec<FlowSpec>> {
    let mut flows = Vec::new();
    let mut declared_nodes = None;
    let mut declared_conns = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        match words[0] {
            "Nodes" if words.len() == 2 => declared_nodes = Some(parse_num::<u64>(file, n, "Nodes", words[1])?),
            "Connections" if words.len() == 2 => declared_conns = Some(parse_num::<u64>(file, n, "Connections", words[1])?),
            w if w.contains("->") => {
                let (s, d) = w.split_once("->").unwrap_or_default();
                let src: u64 = parse_num(file, n, "source", s)?;
                let dst: u64 = parse_num(file, n, "destination", d)?;
                let mut bytes = None;
                let mut start = 0;
                let mut k = 1;
                while k + 1 < words.len() {
                    match words[k] {
                        "size" => bytes = Some(parse_num::<u64>(file, n, "size", words[k + 1])?),
                        "start" => start = start_from_us(file, n, words[k + 1])?,
                        _ => {}
                    }
                    k += 2;
                }
                let bytes = bytes.ok_or_else(|| bad(file, n, "connection line has no `size BYTES`"))?;
                check_endpoints(&format!("workload.file ({file}:{n})"), src, dst, hosts)?;
                if bytes == 0 {
                    return Err(bad(file, n, "size must be at least 1"));
                }
                flows.push(FlowSpec { src: src as u32, dst: dst as u32, bytes, start, after: None });
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
    fn reads_csv_with_any_column_order() {
        let csv = "# comment\nbytes,dst,src\n100,1,0\n";
        let f = parse_csv(csv, "f.csv", 2).unwrap();
        assert_eq!((f[0].src, f[0].dst, f[0].bytes), (0, 1, 100));
        assert!(parse_csv("src,dst\n0,1\n", "f.csv", 2).unwrap_err().to_string().contains("must name the columns"));
    }
}
