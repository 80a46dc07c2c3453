//! Random scenarios, structured like real ones: a base drawn from valid values (a topology and
//! its shape, fabrics of servers among them, switch queues, every registered congestion
//! control, path selection, loss recovery, gate, credit, shaper and switch path selection with
//! parameters drawn from their declared ranges, every workload (training steps on fabrics of
//! servers), link events, failures, `[run]` tracing and logs), then, for check cases, a few
//! hostile mutations of any key: values at and beyond the ranges (0, negatives, 1e-300, 1e300,
//! 2^40, 2^63, u64::MAX, NaN and infinities as numbers and strings),
//! wrong types, empty strings and lists, very long strings, unknown keys, removed keys,
//! contradictory keys, `--set` overrides (also malformed ones), TOML text with duplicate keys,
//! and a workload reading a bad input file ([`BAD_INPUTS`]: 1 MB tokens, unknown or repeated
//! `.cm` words, duplicate ids, htsim triggers).
//!
//! Scheme parameters come from the registry (`fabricsim::registry::families`), so a new scheme
//! or parameter is fuzzed without an edit here; non-scheme keys come from the default scenario
//! serialized (every key with a default) plus the tables and lists it leaves empty.
//!
//! Run cases stay small (at most 128 hosts, flows and chunks of kilobytes, an end time) so
//! that one runs in well under a second; they still draw every scheme.

use crate::prng::Prng;
use fabricsim::scheme::ParamRow;
use toml::{Table, Value};

/// One generated case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its index in the campaign (with the seed, it reproduces the case).
    pub index: u64,
    /// The scenario text.
    pub toml: String,
    /// `--set` overrides applied on top.
    pub overrides: Vec<String>,
    /// What was done to the base, for reports.
    pub mutations: Vec<String>,
    /// Whether it is meant to be run (small, no hostile mutation).
    pub run: bool,
}

impl Case {
    /// The case as a scenario file that reproduces it: the overrides as comments first.
    pub fn as_file(&self, seed: u64) -> String {
        let mut s = format!("# fabricsim-fuzz --seed {seed} --case {}{}\n", self.index, if self.run { " (run case)" } else { "" });
        for m in &self.mutations {
            s += &format!("# mutation: {}\n", m.replace('\n', "\\n").chars().take(200).collect::<String>());
        }
        for o in &self.overrides {
            s += &format!("# --set {}\n", o.replace('\n', "\\n"));
        }
        s + &self.toml
    }
}

/// Names of the data files a scenario may refer to, written into the base folder by
/// [`write_data_files`] (flow list, CDF, collective trace).
pub const FLOW_LIST: &str = "flows.csv";
/// See [`FLOW_LIST`].
pub const CDF: &str = "sizes.cdf";
/// See [`FLOW_LIST`].
pub const TRACE: &str = "trace.json";

/// Writes the data files into `dir`: valid ones, so that scenarios naming them can be accepted.
pub fn write_data_files(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(FLOW_LIST), "src,dst,bytes,start_us\n0,1,8192,0\n1,0,4096,1.5\n2,1,65536,0\n")?;
    std::fs::write(dir.join(CDF), "1000 0\n4000 50\n64000 90\n1000000 100\n")?;
    std::fs::write(dir.join(TRACE), r#"[{"op": "allreduce", "bytes": 65536}, {"op": "alltoall", "bytes": 32768, "parallelism": 1}]"#)?;
    for name in BAD_INPUTS {
        std::fs::write(dir.join(name), bad_input_text(name))?;
    }
    Ok(())
}

/// Input files with what an outside campaign found accepted or echoed (issue 49): 1 MB bad
/// tokens in CSV and `.cm` lines and in a CDF (the error must quote an excerpt), and `.cm`
/// lines with an unknown word, a duplicate id, a repeated word, htsim triggers (a cycle; a
/// `Triggers` section) and a 1 MB unknown word. Each must be refused naming `workload.file`
/// (or `workload.cdf`). Written by [`write_data_files`]; the suffix gives the format.
pub const BAD_INPUTS: &[&str] = &[
    "bad_long_token.csv",
    "bad_long_header.csv",
    "bad_long_token.cm",
    "bad_long_word.cm",
    "bad_long_line.cm",
    "bad_unknown_word.cm",
    "bad_duplicate_id.cm",
    "bad_repeated_size.cm",
    "bad_trigger_cycle.cm",
    "bad_triggers.cm",
    "bad_long_token.cdf",
];

/// The text of the [`BAD_INPUTS`] file `name`.
fn bad_input_text(name: &str) -> String {
    let long = "9".repeat(1 << 20) + "x";
    match name {
        "bad_long_token.csv" => format!("src,dst,bytes\n0,1,100\n0,1,{long}\n"),
        "bad_long_header.csv" => format!("{long},dst,bytes\n0,1,100\n"),
        "bad_long_token.cm" => format!("Nodes 16\n0->1 id 1 start 0 size {long}\n"),
        "bad_long_word.cm" => format!("0->1 id 1 start 0 size 100 {long} 1\n"),
        "bad_long_line.cm" => format!("{long}\n"),
        "bad_unknown_word.cm" => "0->1 id 1 start 0 size 100 colour blue\n".into(),
        "bad_duplicate_id.cm" => "0->1 id 1 start 0 size 100\n1->0 id 1 start 0 size 100\n".into(),
        "bad_repeated_size.cm" => "0->1 id 1 start 0 size 100 size 200\n".into(),
        "bad_trigger_cycle.cm" => "0->1 id 1 trigger 2 size 100 send_done_trigger 1\n1->0 id 2 trigger 1 size 100 send_done_trigger 2\n".into(),
        "bad_triggers.cm" => "Triggers 1\n0->1 id 1 start 0 size 100 send_done_trigger 1\ntrigger id 1 oneshot\n".into(),
        _ => format!("100 0.5\n{long} 1\n"),
    }
}

/// What the topology generator built, for keys that must agree with it.
#[derive(Clone, Copy, Debug)]
struct Fab {
    hosts: u32,
    three_tier: bool,
    /// A switch-to-switch cable that exists (`tor0-agg0` or `tor0-spine0`).
    up_link: &'static str,
    /// ToRs (rdma_writes needs two).
    tors: u32,
    /// GPUs per server on a fabric of servers (rail-optimized or rack-wired), else 0.
    gpus: u32,
    /// Whether the servers have a scale-up domain.
    scale_up: bool,
}

/// The generator of one case.
pub struct Gen {
    rng: Prng,
    /// Small, valid, runnable.
    run: bool,
}

/// A scheme family as the generator uses it: the table, the key naming the scheme in it
/// (`name`, `kind`, none for a table of plain keys), and the schemes.
struct FamilyTable {
    table: String,
    tag: Option<&'static str>,
    schemes: Vec<(&'static str, Vec<ParamRow>)>,
}

fn families() -> Vec<FamilyTable> {
    fabricsim::registry::families()
        .into_iter()
        .map(|f| {
            let (table, tag) = match f.key.strip_suffix(".kind") {
                Some(t) => (t.to_string(), Some("kind")),
                None if matches!(f.key, "switch" | "switch.pfc" | "run") => (f.key.to_string(), None),
                None => (f.key.to_string(), Some("name")),
            };
            FamilyTable { table, tag, schemes: f.schemes.iter().map(|s| (s.name, (s.params)())).collect() }
        })
        .collect()
}

/// Sets `path` (dotted; `[i]` selects a list element, created as a table when missing) in `t`.
fn put(t: &mut Table, path: &str, v: Value) {
    let parts: Vec<&str> = path.split('.').collect();
    let mut node = t;
    for (i, part) in parts.iter().enumerate() {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        let last = i + 1 == parts.len();
        match index {
            None if last => {
                node.insert(name.to_string(), v);
                return;
            }
            None => {
                let e = node.entry(name.to_string()).or_insert_with(|| Value::Table(Table::new()));
                if !e.is_table() {
                    *e = Value::Table(Table::new());
                }
                node = e.as_table_mut().expect("a table");
            }
            Some(ix) => {
                let e = node.entry(name.to_string()).or_insert_with(|| Value::Array(Vec::new()));
                if !e.is_array() {
                    *e = Value::Array(Vec::new());
                }
                let a = e.as_array_mut().expect("a list");
                while a.len() <= ix {
                    a.push(Value::Table(Table::new()));
                }
                if last {
                    a[ix] = v;
                    return;
                }
                if !a[ix].is_table() {
                    a[ix] = Value::Table(Table::new());
                }
                node = a[ix].as_table_mut().expect("a table");
            }
        }
    }
}

/// Every path of `t` to a value that is not a table (list elements that are tables included).
fn leaf_paths(t: &Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(sub) => {
                out.push(p.clone());
                leaf_paths(sub, &p, out);
            }
            Value::Array(a) if a.iter().all(Value::is_table) && !a.is_empty() => {
                out.push(p.clone());
                for (i, e) in a.iter().enumerate() {
                    leaf_paths(e.as_table().expect("a table"), &format!("{p}[{i}]"), out);
                }
            }
            _ => out.push(p),
        }
    }
}

/// The value at `path` in `t`, if any.
fn get(t: &Table, path: &str) -> Option<Value> {
    let mut node = Value::Table(t.clone());
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        node = node.get(name)?.clone();
        if let Some(i) = index {
            node = node.get(i)?.clone();
        }
    }
    Some(node)
}

/// Removes `path` from `t` (no-op when absent).
fn remove(t: &mut Table, path: &str) {
    let (parent, last) = match path.rsplit_once('.') {
        Some((a, b)) => (Some(a), b),
        None => (None, path),
    };
    let mut node = t;
    if let Some(parent) = parent {
        for part in parent.split('.') {
            let (name, index) = match part.split_once('[') {
                Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
                None => (part, None),
            };
            let next = match (node.get_mut(name), index) {
                (Some(Value::Table(s)), None) => s,
                (Some(Value::Array(a)), Some(i)) => match a.get_mut(i) {
                    Some(Value::Table(s)) => s,
                    _ => return,
                },
                _ => return,
            };
            node = next;
        }
    }
    node.remove(last.split('[').next().unwrap_or(last));
}

/// An allowed range `min..=max` as the registry prints it.
fn parse_range(allowed: &str) -> Option<(f64, f64)> {
    let (a, b) = allowed.split_once("..=")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn s<S: AsRef<str> + ?Sized>(v: &S) -> Value {
    Value::String(v.as_ref().to_string())
}

fn int(v: i64) -> Value {
    Value::Integer(v)
}

fn float(v: f64) -> Value {
    Value::Float(v)
}

impl Gen {
    /// The generator of case `index` of a campaign seeded `seed`; `run`: a small valid
    /// scenario to simulate.
    pub fn new(seed: u64, index: u64, run: bool) -> Gen {
        Gen { rng: Prng::new(seed, index), run }
    }

    /// Generates the case.
    pub fn case(mut self, index: u64) -> Case {
        let mut t = Table::new();
        let fab = self.topology(&mut t);
        self.switch(&mut t);
        self.transport(&mut t, fab);
        self.workload(&mut t, fab);
        if self.run || self.rng.chance(0.5) {
            self.run_table(&mut t, fab);
        }
        if self.rng.chance(if self.run { 0.15 } else { 0.2 }) {
            self.link_events(&mut t, fab);
        }
        if self.rng.chance(0.1) {
            self.results(&mut t);
        }
        if self.rng.chance(0.3) {
            put(&mut t, "seed", int(self.rng.below(1 << 20) as i64));
        }
        if self.rng.chance(0.2) {
            put(&mut t, "name", s("fuzzed"));
        }
        let mut case = Case { index, toml: String::new(), overrides: Vec::new(), mutations: Vec::new(), run: self.run };
        if !self.run {
            let n = *self.rng.pick(&[0, 1, 1, 1, 2, 2, 3]);
            for _ in 0..n {
                self.mutate(&mut t, &mut case);
            }
        }
        if !self.run && self.rng.chance(0.03) {
            self.bad_input_file(&mut t, &mut case);
        }
        case.toml = toml::to_string(&t).unwrap_or_default();
        if !self.run && self.rng.chance(0.04) {
            self.mutate_text(&mut case);
        }
        case
    }

    // ----- valid bases -----

    fn topology(&mut self, t: &mut Table) -> Fab {
        let r = &mut self.rng;
        let fab = match r.below(5) {
            0 => {
                let k: u32 = *r.pick(if self.run { &[4, 4, 6, 8][..] } else { &[2, 4, 4, 6, 8, 8, 12, 16][..] });
                if r.chance(0.2) {
                    put(t, "topology.hosts", int((k * k * k / 4) as i64));
                } else {
                    put(t, "topology.k", int(k as i64));
                }
                let half = k / 2;
                if half % 2 == 0 && r.chance(0.2) {
                    put(t, "topology.oversubscription", s("2:1"));
                    if r.chance(0.5) {
                        put(t, "topology.oversubscribed_tier", s("agg"));
                    }
                }
                Fab { hosts: k * k * k / 4, three_tier: true, up_link: "tor0-agg0", tors: k * half, gpus: 0, scale_up: false }
            }
            1 => {
                let k: u32 = *r.pick(if self.run { &[4, 8, 8][..] } else { &[2, 4, 8, 16, 32][..] });
                put(t, "topology.kind", s("leaf_spine"));
                if r.chance(0.2) {
                    put(t, "topology.hosts", int((k * k / 2) as i64));
                } else {
                    put(t, "topology.k", int(k as i64));
                }
                if k >= 8 && r.chance(0.2) {
                    put(t, "topology.oversubscription", s("2:1"));
                }
                Fab { hosts: k * k / 2, three_tier: false, up_link: "tor0-spine0", tors: k, gpus: 0, scale_up: false }
            }
            2 => {
                let (tors, hpt, spines) = (r.range(2, 6) as u32, r.range(1, 6) as u32, r.range(1, 4) as u32);
                put(t, "topology.kind", s("leaf_spine"));
                put(t, "topology.tors", int(tors as i64));
                put(t, "topology.hosts_per_tor", int(hpt as i64));
                put(t, "topology.spines", int(spines as i64));
                if r.chance(0.3) {
                    put(t, "topology.links_per_spine", int(2));
                }
                if r.chance(0.15) {
                    let rates: Vec<Value> = (0..spines).map(|i| float(if i == 0 { 80.0 } else { 40.0 })).collect();
                    put(t, "topology.spine_link_rates_gbps", Value::Array(rates));
                }
                Fab { hosts: tors * hpt, three_tier: false, up_link: "tor0-spine0", tors, gpus: 0, scale_up: false }
            }
            // A fabric of servers with a NIC per GPU: rail-optimized (a unit's leaf r holds GPU
            // r of each of its servers) or rack-wired, 2 or 3 tiers, with or without a scale-up
            // domain (a partitioned run keeps a unit's leaves together).
            3 => {
                let (units, gpus) = (r.range(2, 3) as u32, *r.pick(&[2u32, 4]));
                let tiers = if r.chance(0.3) { 3 } else { 2 };
                let rails = r.chance(0.75);
                // Rack wiring: servers_per_su is a leaf's GPU ports, whole servers of `gpus`.
                let per_su = if rails { r.range(1, 2) as u32 } else { gpus };
                put(t, "topology.kind", s(if rails { "rail_optimized" } else { "racks" }));
                put(t, "topology.servers", int((units * per_su) as i64));
                put(t, "topology.servers_per_su", int(per_su as i64));
                put(t, "topology.server.gpus", int(gpus as i64));
                if tiers == 3 {
                    put(t, "topology.tiers", int(3));
                }
                let scale_up = r.chance(0.7);
                if scale_up {
                    put(t, "topology.server.scale_up_gbps", float(*r.pick(&[900.0, 3600.0])));
                }
                let up_link = if tiers == 3 { "tor0-agg0" } else { "tor0-spine0" };
                let tors = if rails { units * gpus } else { units * per_su };
                Fab { hosts: units * per_su * gpus, three_tier: false, up_link, tors, gpus, scale_up }
            }
            _ => {
                let (pods, tpp, app, hpt) = (r.range(2, 4) as u32, r.range(1, 3) as u32, r.range(1, 2) as u32, r.range(1, 4) as u32);
                for (k, v) in [("pods", pods), ("tors_per_pod", tpp), ("aggs_per_pod", app), ("hosts_per_tor", hpt), ("cores", app * r.range(1, 2) as u32)] {
                    put(t, &format!("topology.{k}"), int(v as i64));
                }
                Fab { hosts: pods * tpp * hpt, three_tier: true, up_link: "tor0-agg0", tors: pods * tpp, gpus: 0, scale_up: false }
            }
        };
        let r = &mut self.rng;
        if r.chance(0.5) {
            put(t, "topology.link_rate_gbps", float(*r.pick(&[100.0, 200.0, 400.0, 800.0])));
        }
        if r.chance(0.15) {
            put(t, "topology.host_link_rate_gbps", s(r.pick(&["100G", "200Gbps", "400 Gb/s"])));
        }
        if r.chance(0.1) {
            put(t, "topology.tor_uplink_rate_gbps", float(*r.pick(&[100.0, 400.0])));
        }
        if r.chance(0.4) {
            put(t, "topology.link_latency_ns", float(*r.pick(&[100.0, 500.0, 1000.0, 2000.0])));
        }
        if r.chance(0.2) {
            put(t, "topology.switch_latency_ns", float(*r.pick(&[0.0, 100.0, 400.0])));
        }
        if r.chance(0.1) {
            put(t, "topology.host_link_latency_ns", float(200.0));
        }
        if r.chance(0.12) {
            match (fab.three_tier, r.below(3)) {
                (true, 1) => {
                    put(t, "topology.failures.kind", s("partial_lag"));
                    put(t, "topology.failures.f", int(1));
                    put(t, "topology.failures.p", float(0.5));
                }
                (true, 2) => {
                    put(t, "topology.failures.kind", s("flaky"));
                    put(t, "topology.failures.f", int(1));
                    put(t, "topology.failures.burst_gap_us", float(50.0));
                    put(t, "topology.failures.burst_len_us", float(2.0));
                }
                _ => {
                    put(t, "topology.failures.tors", int(1));
                    put(t, "topology.failures.uplinks_per_tor", int(1));
                    if r.chance(0.5) {
                        put(t, "topology.failures.model", s("degraded"));
                        put(t, "topology.failures.degraded_rate_factor", float(0.5));
                    }
                }
            }
            if r.chance(0.3) {
                put(t, "topology.failures.seed", int(7));
            }
        }
        fab
    }

    fn switch(&mut self, t: &mut Table) {
        let r = &mut self.rng;
        if r.chance(0.3) {
            put(t, "switch.buffer_bdp", float(*r.pick(&[0.5, 1.0, 2.0, 4.0])));
        } else if r.chance(0.1) {
            put(t, "switch.buffer_bytes", s(r.pick(&["512KiB", "1MiB", "4MB"])));
        }
        if r.chance(0.2) {
            put(t, "switch.ecn_kmin", float(0.1));
            put(t, "switch.ecn_kmax", float(*r.pick(&[0.5, 0.9])));
        }
        if r.chance(0.1) {
            put(t, "switch.ecn", Value::Boolean(false));
        }
        if r.chance(0.1) {
            put(t, "switch.ecn_mark_at", s("enqueue"));
        }
        let pfc = r.chance(0.15);
        if pfc {
            put(t, "switch.trimming", Value::Boolean(false));
            put(t, "switch.pfc.enabled", Value::Boolean(true));
        } else if r.chance(0.2) {
            put(t, "switch.trimming", Value::Boolean(false));
        }
        if r.chance(0.15) {
            put(t, "switch.control_wrr_weight", int(*r.pick(&[1, 20])));
        }
        if !pfc && r.chance(0.1) {
            put(t, "switch.control_lane", s(r.pick(&["separate", "shared"])));
        }
        if r.chance(0.1) {
            put(t, "switch.ports.tor_down.buffer_bdp", float(2.0));
        }
        if r.chance(0.05) {
            put(t, "switch.by_link_rate[0].rate_gbps", float(400.0));
            put(t, "switch.by_link_rate[0].ecn_kmin", float(0.3));
        }
        if r.chance(0.3) {
            self.scheme(t, "switch.lb");
        }
    }

    /// Selects a random scheme of the family at `table` (`transport.cc`) and sets some of its
    /// parameters to values drawn from their declared ranges.
    fn scheme(&mut self, t: &mut Table, table: &str) -> &'static str {
        let fams = families();
        let Some(f) = fams.iter().find(|f| f.table == table) else { return "" };
        let (name, params) = self.rng.pick(&f.schemes).clone();
        if let Some(tag) = f.tag {
            put(t, &format!("{table}.{tag}"), s(name));
        }
        for p in &params {
            if self.rng.chance(0.3) {
                if let Some(v) = self.valid_value(p) {
                    put(t, &format!("{table}.{}", p.key), v);
                }
            }
        }
        name
    }

    /// A value a parameter row allows: within its declared range (anywhere for a check case,
    /// near the default for a run case), one of its listed alternatives, or its default.
    fn valid_value(&mut self, p: &ParamRow) -> Option<Value> {
        let default: Option<Value> = toml::from_str::<Table>(&format!("v = {}", p.default)).ok().and_then(|mut t| t.remove("v"));
        if let Some((lo, hi)) = p.allowed.as_deref().and_then(parse_range) {
            let integral = !p.default.contains('.') && lo.fract() == 0.0 && hi.fract() == 0.0;
            let d = default.as_ref().and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)));
            let x = if self.run {
                match d {
                    Some(d) => (d * *self.rng.pick(&[0.5, 1.0, 1.0, 2.0])).clamp(lo, hi),
                    None => lo.max(hi.min(1.0)),
                }
            } else {
                match self.rng.below(5) {
                    0 => lo,
                    1 => hi,
                    2 if lo > 0.0 => (lo.ln() + self.rng.unit() * (hi.ln() - lo.ln())).exp(),
                    _ => d.unwrap_or(lo).clamp(lo, hi),
                }
            };
            return Some(if integral { int(x.round() as i64) } else { float(x) });
        }
        if let Some(alts) = p.allowed.as_deref().filter(|a| a.contains(" | ")) {
            let alts: Vec<&str> = alts.split(" | ").collect();
            return Some(s(self.rng.pick(&alts).trim()));
        }
        match default {
            Some(Value::Boolean(_)) => Some(Value::Boolean(self.rng.chance(0.5))),
            other => other,
        }
    }

    fn transport(&mut self, t: &mut Table, fab: Fab) {
        let cc = self.scheme(t, "transport.cc");
        if self.rng.chance(0.7) {
            self.scheme(t, "transport.lb");
        }
        if self.rng.chance(0.4) {
            self.scheme(t, "transport.reliability");
        }
        if self.rng.chance(0.2) {
            let gate = self.scheme(t, "transport.gate");
            if gate == "mcc" {
                put(t, "transport.cc", s("line_rate"));
            }
        }
        if self.rng.chance(0.15) {
            self.scheme(t, "transport.credit");
        }
        let r = &mut self.rng;
        if r.chance(0.1) {
            put(t, "transport.ack_every", int(*r.pick(&[2, 4])));
        }
        if r.chance(0.1) {
            put(t, "transport.mtu_bytes", int(*r.pick(&[1500, 2048, 9000])));
        }
        if r.chance(0.1) {
            put(t, "transport.rto_us", float(*r.pick(&[50.0, 500.0])));
        }
        if r.chance(0.05) && fab.hosts > 2 && cc != "dcqcn" {
            put(t, "transport.cc_by_source[0].hosts", Value::Array(vec![int(1)]));
            put(t, "transport.cc_by_source[0].cc", s(r.pick(&["bbr", "swift", "fixed"])));
        }
    }

    fn workload(&mut self, t: &mut Table, fab: Fab) {
        let kinds: &[&str] = if self.run {
            &["permutation", "permutation", "incast", "incast", "all_to_all", "collectives", "collectives", "open_loop", "rdma_writes", "flow_list"]
        } else {
            &["permutation", "incast", "all_to_all", "collectives", "collectives", "open_loop", "rdma_writes", "flow_list"]
        };
        let kind = if fab.gpus > 0 && self.rng.chance(0.5) { "training" } else { *self.rng.pick(kinds) };
        put(t, "workload.kind", s(kind));
        let small_bytes = |r: &mut Prng, run: bool| -> Value {
            if run {
                s(r.pick(&["4KiB", "16KiB", "64KiB", "100KB", "256KiB", "1MiB"]))
            } else {
                s(r.pick(&["4KiB", "64KiB", "1MiB", "2MiB", "1", "4097"]))
            }
        };
        let flows_workload = matches!(kind, "permutation" | "incast" | "all_to_all" | "open_loop" | "flow_list");
        let r = &mut self.rng;
        match kind {
            "permutation" => {
                put(t, "workload.flow_bytes", small_bytes(r, self.run));
                if r.chance(0.2) {
                    put(t, "workload.permutations", int(2));
                }
                if r.chance(0.2) {
                    put(t, "workload.locality", s(r.pick(&["cross_tor", "cross_pod"])));
                }
                if r.chance(0.1) {
                    put(t, "workload.start_jitter_us", float(5.0));
                }
                if r.chance(0.1) {
                    put(t, "workload.large_flows", int(1));
                    put(t, "workload.large_flow_bytes", s("128KiB"));
                }
            }
            "incast" => {
                put(t, "workload.flow_bytes", small_bytes(r, self.run));
                let most = fab.hosts.saturating_sub(1).clamp(1, 8) as u64;
                if r.chance(0.2) && fab.hosts > 2 {
                    put(t, "workload.receiver", int(0));
                    put(t, "workload.sender_hosts", Value::Array((1..fab.hosts.min(4)).map(|h| int(h as i64)).collect()));
                } else {
                    put(t, "workload.senders", int(r.range(1, most) as i64));
                }
                if r.chance(0.1) {
                    put(t, "workload.start_us", float(3.0));
                }
            }
            "all_to_all" => {
                put(t, "workload.flow_bytes", s(r.pick(&["4KiB", "16KiB"])));
                if r.chance(0.4) {
                    put(t, "workload.max_concurrent", int(r.range(1, 3) as i64));
                }
                if fab.hosts > 16 || r.chance(0.3) {
                    put(t, "workload.hosts", int(fab.hosts.clamp(2, 12) as i64));
                }
            }
            "collectives" => self.collectives(t, fab),
            "training" => self.training(t, fab),
            "open_loop" => {
                put(t, "workload.cdf", s(r.pick(&["websearch", "alistorage2019", CDF])));
                put(t, "workload.load", float(*r.pick(&[0.1, 0.3, 0.6])));
                if r.chance(0.7) {
                    put(t, "workload.flows", int(r.range(5, 60) as i64));
                } else {
                    put(t, "workload.duration_us", float(*r.pick(&[5.0, 20.0])));
                }
                if fab.tors > 1 && r.chance(0.2) {
                    put(t, "workload.exclude_intra_rack", Value::Boolean(true));
                }
            }
            "rdma_writes" => {
                put(t, "workload.clients", int(1));
                put(t, "workload.qps_per_client", int(r.range(1, 2) as i64));
                put(t, "workload.message_bytes", s("64KiB"));
                put(t, "workload.stagger_us", float(0.0));
                put(t, "workload.duration_us", float(*r.pick(&[10.0, 30.0])));
            }
            _ => put(t, "workload.file", s(FLOW_LIST)),
        }
        if flows_workload && self.rng.chance(0.1) {
            self.scheme(t, "transport.shaper");
        }
    }

    /// A small valid training step on a fabric of servers: TP inside a server, a pipeline,
    /// data parallelism over what is left, sometimes a mixture of experts, either rank order.
    fn training(&mut self, t: &mut Table, fab: Fab) {
        let r = &mut self.rng;
        let tp = *r.pick(&[1, 2, fab.gpus]);
        let pp = r.range(1, 2) as u32;
        let dp = (fab.hosts / (tp * pp)).max(1);
        let dp = if dp > 1 && r.chance(0.2) { dp / 2 } else { dp };
        let layers = pp * r.range(1, 2) as u32;
        let micro_batches = r.range(1, 3);
        let mut model = format!("{{ layers = {layers}, hidden = 256, heads = 8, seq = 128, vocab = 512, micro_batch = 1, global_batch = {}", dp as u64 * micro_batches);
        let mut par = format!("{{ tp = {tp}, pp = {pp}, dp = {dp}");
        if dp % 2 == 0 && r.chance(0.25) {
            model.push_str(", experts = 2, top_k = 1");
            par.push_str(", ep = 2");
        }
        if fab.scale_up && r.chance(0.6) {
            par.push_str(", tp_network = \"analytic\"");
        }
        if r.chance(0.3) {
            par.push_str(", order = \"tp-pp-dp\"");
        }
        if r.chance(0.2) {
            par.push_str(", recompute = true");
        }
        let inline = |text: String| -> Value { toml::from_str::<Table>(&format!("v = {text} }}")).ok().and_then(|mut v| v.remove("v")).expect("an inline table") };
        put(t, "workload.model", inline(model));
        put(t, "workload.parallelism", inline(par));
        put(t, "workload.chunk", s(r.pick(&["16KiB", "64KiB"])));
    }

    fn collectives(&mut self, t: &mut Table, fab: Fab) {
        let r = &mut self.rng;
        put(t, "workload.chunk", s(r.pick(if self.run { &["4KiB", "16KiB", "64KiB"][..] } else { &["1", "3", "4KiB", "128KiB", "1MiB"][..] })));
        if r.chance(0.3) {
            put(t, "workload.qps", int(r.range(1, 4) as i64));
        }
        let jobs = if fab.hosts >= 8 && r.chance(0.3) { 2 } else { 1 };
        let per_job = (fab.hosts / jobs).clamp(2, 8) as u64;
        for j in 0..jobs {
            let key = format!("workload.jobs[{j}]");
            let ops = [("allreduce", "ring"), ("allreduce", "hd"), ("allreduce", "dbt"), ("allgather", "ring"), ("reducescatter", "ring"), ("alltoall", "direct"), ("alltoall", "pairwise"), ("broadcast", "ring")];
            let mut ranks = r.range(2, per_job);
            let (op, alg) = *r.pick(&ops);
            if alg == "hd" {
                ranks = 1 << (63 - ranks.leading_zeros());
            }
            if fab.hosts < 2 {
                ranks = 2;
            }
            put(t, &format!("{key}.ranks"), int(ranks as i64));
            match r.below(6) {
                0 => put(t, &format!("{key}.placement"), s("random")),
                1 if ranks % 2 == 0 => {
                    put(t, &format!("{key}.placement"), s("random_blocks"));
                    put(t, &format!("{key}.block"), int(2));
                }
                _ => {}
            }
            if r.chance(0.3) {
                put(t, &format!("{key}.iterations"), int(2));
                put(t, &format!("{key}.compute_gap_us"), float(2.0));
            }
            if !self.run && r.chance(0.1) {
                put(t, &format!("{key}.trace"), s(TRACE));
                continue;
            }
            let n = if r.chance(0.3) { 2 } else { 1 };
            for c in 0..n {
                let ck = format!("{key}.collectives[{c}]");
                let (op, alg) = if c == 0 { (op, alg) } else { *r.pick(&ops) };
                put(t, &format!("{ck}.op"), s(op));
                if r.chance(0.7) {
                    put(t, &format!("{ck}.algorithm"), s(alg));
                }
                put(t, &format!("{ck}.bytes"), s(r.pick(if self.run { &["16KiB", "64KiB", "256KiB", "1MiB"][..] } else { &["1", "64KiB", "8MiB"][..] })));
                if alg == "direct" && r.chance(0.5) {
                    put(t, &format!("{ck}.parallelism"), int(r.range(1, 3) as i64));
                }
                if op == "broadcast" && r.chance(0.5) {
                    put(t, &format!("{ck}.root"), int(r.below(ranks) as i64));
                }
            }
        }
    }

    fn run_table(&mut self, t: &mut Table, fab: Fab) {
        let r = &mut self.rng;
        if self.run {
            // A bound on every run: flows left then are reported unfinished.
            put(t, "run.end_time_us", float(*r.pick(&[2_000.0, 20_000.0])));
        } else if r.chance(0.2) {
            put(t, "run.end_time_us", float(*r.pick(&[0.0, 100.0, 1e6])));
        }
        if r.chance(0.15) {
            put(t, "run.stall_limit_us", float(*r.pick(&[0.0, 500.0, 10_000.0])));
        }
        if r.chance(0.2) {
            put(t, "run.trace_interval_us", float(*r.pick(&[1.0, 5.0])));
            if r.chance(0.5) {
                put(t, "run.trace_ports", Value::Array(vec![s(r.pick(&["tor_up", "tor_down", "tor0-host0", "tor*-*"]))]));
            }
            if r.chance(0.3) {
                put(t, "run.trace_conns", Value::Array(vec![int(0)]));
            }
        }
        for key in ["event_log", "message_log", "port_stats", "tier_queue_stats", "gate_log"] {
            if r.chance(0.1) {
                put(t, &format!("run.{key}"), Value::Boolean(true));
            }
        }
        if r.chance(0.1) {
            put(t, "run.ack_log_conns", Value::Array(vec![int(0)]));
        }
        if r.chance(0.1) {
            put(t, "run.drop_packets[0].flow", int(0));
            put(t, "run.drop_packets[0].seq", int(r.below(3) as i64));
            if r.chance(0.3) {
                put(t, "run.drop_packets[0].hold_us", float(2.0));
            }
        }
        if r.chance(0.08) {
            put(t, "run.flowlet_gaps_us", Value::Array(vec![float(10.0), float(50.0)]));
        }
        let _ = fab;
    }

    fn link_events(&mut self, t: &mut Table, fab: Fab) {
        let r = &mut self.rng;
        let link = if r.chance(0.8) { fab.up_link } else { "tor0-host0" };
        match r.below(3) {
            0 => {
                put(t, "link_events[0].at_us", float(5.0));
                put(t, "link_events[0].link", s(link));
                put(t, "link_events[0].action", s("down"));
                if r.chance(0.6) {
                    put(t, "link_events[0].reroute_after_us", float(5.0));
                }
                put(t, "link_events[1].at_us", float(40.0));
                put(t, "link_events[1].link", s(link));
                put(t, "link_events[1].action", s("up"));
            }
            1 => {
                put(t, "link_events[0].at_us", float(3.0));
                put(t, "link_events[0].link", s(link));
                put(t, "link_events[0].action", s("rate"));
                put(t, "link_events[0].rate_gbps", float(*r.pick(&[10.0, 100.0])));
                if r.chance(0.3) {
                    put(t, "link_events[0].direction", s("forward"));
                    put(t, "link_events[0].scale_queue", Value::Boolean(true));
                }
            }
            _ => {
                put(t, "link_events[0].at_us", float(0.0));
                put(t, "link_events[0].link", s(link));
                put(t, "link_events[0].action", s("down"));
            }
        }
    }

    fn results(&mut self, t: &mut Table) {
        put(t, "results.size_buckets", Value::Array(vec![s("8KB"), s("1MB")]));
        if self.rng.chance(0.5) {
            put(t, "results.window_start_us", float(1.0));
            put(t, "results.window_end_us", float(100.0));
        }
    }

    // ----- hostile mutations -----

    /// A hostile value for a key now holding `now`: a number for a number most of the time
    /// (so that it passes the type check and meets the range checks), else anything.
    fn hostile_like(&mut self, now: Option<&Value>) -> Value {
        let numeric = matches!(now, Some(Value::Integer(_) | Value::Float(_)));
        match (numeric, self.rng.below(10)) {
            (true, 0..=3) => self.hostile_of(0),
            (true, 4..=7) => self.hostile_of(2),
            _ => self.hostile_value(),
        }
    }

    /// A hostile value: out of every plausible range, of another type, empty or enormous.
    fn hostile_value(&mut self) -> Value {
        let kind = self.rng.below(8);
        self.hostile_of(kind)
    }

    /// A hostile value of kind `kind` (0–1 integers, 2–3 floats, 4–5 strings, 6 other types,
    /// 7 a table).
    fn hostile_of(&mut self, kind: u64) -> Value {
        let r = &mut self.rng;
        match kind {
            0 | 1 => int(*r.pick(&[0, -1, 1, 2, 3, 1 << 31, 1 << 32, 1 << 40, (1 << 53) + 1, i64::MAX, i64::MIN, 4_294_967_295, 100_000])),
            2 | 3 => float(*r.pick(&[0.0, -0.0, -1.0, 1e-300, 5e-324, 1e-7, 1e300, f64::MAX, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5, 1_099_511_627_776.0, 1e18])),
            4 | 5 => {
                let long = "x".repeat(*r.pick(&[300, 100_000]));
                let v = *r.pick(&[
                    "", "nan", "inf", "-inf", "1e300", "1e-300", "18446744073709551615", "9223372036854775808", "-1", "0x10", "2MiB", "1e-300GiB", "16EiB", "-1KB", "1.5B", "∞",
                    "\u{0}", "400GB/s", "1e300G", "4:0", "0:1", "1:0", "/dev/zero", "/", "no-such-file.csv", "../../etc/passwd", "tor0-", "-", "*", "tor999-host0", "LONG",
                ]);
                s(if v == "LONG" { long.as_str() } else { v })
            }
            6 => match r.below(4) {
                0 => Value::Boolean(r.chance(0.5)),
                1 => Value::Array(Vec::new()),
                2 => Value::Array(vec![int(-1), float(f64::NAN), int(1 << 40)]),
                _ => Value::Table(Table::new()),
            },
            _ => {
                let mut sub = Table::new();
                sub.insert("name".into(), s(r.pick(&["", "fixed", "nonexistent"])));
                sub.insert("bogus".into(), int(1));
                Value::Table(sub)
            }
        }
    }

    /// Candidate paths for a hostile value: the case's own keys, and every key the registry or
    /// the default scenario knows of.
    fn target_path(&mut self, t: &Table) -> String {
        if self.rng.chance(0.5) {
            let mut own = Vec::new();
            leaf_paths(t, "", &mut own);
            if !own.is_empty() {
                return self.rng.pick(&own).clone();
            }
        }
        if self.rng.chance(0.4) {
            let mut defaults = Vec::new();
            if let Ok(Value::Table(d)) = toml::Value::try_from(fabricsim::Scenario::default()) {
                leaf_paths(&d, "", &mut defaults);
            }
            let extra = [
                "topology.k", "topology.hosts", "topology.tors", "topology.spines", "topology.hosts_per_tor", "topology.links_per_spine", "topology.pods", "topology.tors_per_pod",
                "topology.aggs_per_pod", "topology.cores", "topology.spine_link_rates_gbps", "topology.agg_uplink_rate_gbps", "topology.failures.tors", "topology.failures.links",
                "topology.failures.f", "topology.failures.p", "topology.failures.degraded_rate_factor", "transport.rto_us", "transport.cc_by_source", "transport.cc_by_source[0].hosts",
                "workload.jobs[0].ranks", "workload.jobs[0].count", "workload.jobs[0].iterations", "workload.jobs[0].chunk", "workload.jobs[0].qps", "workload.jobs[0].hosts",
                "workload.jobs[0].stride", "workload.jobs[0].block", "workload.jobs[0].start_us", "workload.jobs[0].compute_gap_us", "workload.jobs[0].trace",
                "workload.jobs[0].collectives[0].bytes", "workload.jobs[0].collectives[0].parallelism", "workload.jobs[0].collectives[0].root", "workload.jobs[0].collectives[0].gap_us",
                "workload.jobs[0].collectives[0].op", "workload.jobs[0].collectives[0].algorithm", "link_events[0].at_us", "link_events[0].rate_gbps", "link_events[0].link",
                "link_events[0].reroute_after_us", "run.end_time_us", "run.stall_limit_us", "run.trace_interval_us", "run.trace_conns", "run.trace_ports", "run.flowlet_gaps_us",
                "run.drop_packets[0].seq", "run.drop_packets[0].transmission", "run.drop_packets[0].hold_us", "results.size_buckets", "results.window_start_us", "results.window_end_us",
                "switch.ports.tor_up.buffer_bytes", "switch.by_link_rate[0].rate_gbps", "switch.control_lane_factor", "switch.pfc.xoff_bytes", "switch.pfc.headroom_bytes",
                "switch.pfc.buffer_bytes", "switch.pfc.resume_offset_bytes", "seed", "name", "workload.flows", "workload.duration_us", "workload.cdf", "workload.file",
            ];
            defaults.extend(extra.iter().map(|e| e.to_string()));
            return self.rng.pick(&defaults).clone();
        }
        // A registered scheme's parameter, the scheme selected alongside.
        let fams = families();
        let f = self.rng.pick(&fams);
        let (name, params) = self.rng.pick(&f.schemes);
        if params.is_empty() {
            return format!("{}.{}", f.table, f.tag.unwrap_or("name"));
        }
        let p = self.rng.pick(params);
        format!("{}|{}|{}|{}", f.table, f.tag.unwrap_or(""), name, p.key)
    }

    fn mutate(&mut self, t: &mut Table, case: &mut Case) {
        let target = self.target_path(t);
        // A scheme's parameter: select the scheme, then set the parameter.
        let path = match target.split('|').collect::<Vec<_>>()[..] {
            [table, tag, name, key] => {
                if !tag.is_empty() {
                    // A `kind`/`name` table keeps only keys of the selected scheme valid.
                    put(t, &format!("{table}.{tag}"), s(name));
                }
                format!("{table}.{}", key.trim_start_matches("drop_packets[]."))
            }
            _ => target,
        };
        match self.rng.below(12) {
            0 => {
                remove(t, &path);
                case.mutations.push(format!("removed {path}"));
            }
            1 => {
                let bogus = format!("{}.{}", path, self.rng.pick(&["bogus_key", "k", "name", "kind", "link_rate_gpbs"]));
                put(t, &bogus, int(1));
                case.mutations.push(format!("set unknown {bogus} = 1"));
            }
            2 => self.contradiction(t, case),
            3 => {
                // The same value as a --set override (TOML value syntax, or a bare string).
                let v = self.hostile_value();
                let raw = match &v {
                    Value::String(x) if self.rng.chance(0.5) => x.clone(),
                    other => other.to_string(),
                };
                case.overrides.push(format!("{path}={raw}"));
                case.mutations.push(format!("--set {path}=..."));
            }
            4 => {
                let bad = self.rng.pick(&["x", "=1", "a..b=1", ".a=1", "topology.k=99999999999999999999", "topology..k=4", "transport.cc.=1", "workload=", "topology.k.x=1", "run=1"]);
                case.overrides.push(bad.to_string());
                case.mutations.push(format!("malformed --set {bad}"));
            }
            _ => {
                let now = get(t, &path);
                let v = self.hostile_like(now.as_ref());
                case.mutations.push(format!("{path} = {}", v.to_string().chars().take(60).collect::<String>()));
                put(t, &path, v);
            }
        }
    }

    /// Keys that contradict each other, set together.
    fn contradiction(&mut self, t: &mut Table, case: &mut Case) {
        let pairs: &[(&str, Value, &str, Value)] = &[
            ("topology.k", int(4), "topology.hosts", int(16)),
            ("topology.k", int(4), "topology.tors", int(2)),
            ("workload.senders", int(2), "workload.sender_hosts", Value::Array(vec![int(1), int(2)])),
            ("workload.duration_us", float(10.0), "workload.flows", int(10)),
            ("switch.pfc.enabled", Value::Boolean(true), "switch.trimming", Value::Boolean(true)),
            ("switch.control_lane", s("shared"), "switch.trimming", Value::Boolean(false)),
            ("switch.ecn_kmin", float(0.9), "switch.ecn_kmax", float(0.1)),
            ("run.trace_ports", Value::Array(vec![s("tor_up")]), "run.end_time_us", float(1.0)),
            ("transport.gate.name", s("mcc"), "transport.cc.name", s("dcqcn")),
            ("results.window_start_us", float(10.0), "results.window_end_us", float(1.0)),
            ("workload.jobs[0].trace", s(TRACE), "workload.jobs[0].collectives", Value::Array(vec![])),
            ("topology.kind", s("leaf_spine"), "topology.pods", int(2)),
            // Issue 49's outside campaign: values valid alone, absurd beside another.
            ("topology.failures.kind", s("flaky"), "topology.failures.burst_len_us", float(2000.0)),
            ("workload.kind", s("open_loop"), "workload.load", float(1e-9)),
            ("workload.flows", int(100), "workload.load", float(1e-300)),
            ("switch.control_lane", s("separate"), "switch.control_lane_factor", float(1e-6)),
            ("transport.rto_us", float(1e-6), "run.end_time_us", float(100.0)),
            ("switch.ecn_kmin_bytes", s("1GiB"), "switch.ecn_kmax_bytes", s("2GiB")),
            ("switch.pfc.enabled", Value::Boolean(true), "switch.pfc.resume_offset_bytes", s("1GiB")),
            ("transport.cc.name", s("dcqcn"), "transport.cc.min_rate_mbps", float(1e9)),
            ("run.stall_limit_us", float(1e-6), "run.end_time_us", float(100.0)),
            ("topology.link_rate_gbps", float(0.001), "switch.buffer_bytes", s("64KiB")),
            ("workload.kind", s("all_to_all"), "topology.k", int(64)),
            ("workload.permutations", int(390_625), "workload.flow_bytes", int(1)),
        ];
        let (a, va, b, vb) = self.rng.pick(pairs).clone();
        put(t, a, va);
        put(t, b, vb);
        case.mutations.push(format!("contradiction {a} / {b}"));
    }

    /// The workload made to read one of [`BAD_INPUTS`]: a flow list, or an open-loop
    /// workload's CDF.
    fn bad_input_file(&mut self, t: &mut Table, case: &mut Case) {
        let name = *self.rng.pick(BAD_INPUTS);
        // The workload table replaced whole: another kind's keys would be refused first.
        remove(t, "workload");
        if name.ends_with(".cdf") {
            put(t, "workload.kind", s("open_loop"));
            put(t, "workload.cdf", s(name));
            put(t, "workload.load", float(0.3));
            put(t, "workload.flows", int(10));
        } else {
            put(t, "workload.kind", s("flow_list"));
            put(t, "workload.file", s(name));
        }
        case.mutations.push(format!("bad input file {name}"));
    }

    /// A TOML-level mutation of the text: a duplicate key, an unterminated string, garbage.
    fn mutate_text(&mut self, case: &mut Case) {
        let m = *self.rng.pick(&["duplicate", "unterminated", "garbage", "long line"]);
        match m {
            "duplicate" => case.toml = format!("seed = 1\nseed = 2\n{}", case.toml),
            "unterminated" => case.toml += "\nname = \"never closed\n",
            "garbage" => case.toml += "\n[[[\u{0}\n",
            _ => case.toml = format!("name = \"{}\n{}", "y".repeat(50_000), case.toml),
        }
        case.mutations.push(format!("text: {m}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_list_elements_are_set_and_removed() {
        let mut t = Table::new();
        put(&mut t, "workload.jobs[1].collectives[0].op", s("allreduce"));
        put(&mut t, "topology.k", int(4));
        let text = toml::to_string(&t).unwrap();
        assert!(text.contains("op = \"allreduce\""), "{text}");
        let mut paths = Vec::new();
        leaf_paths(&t, "", &mut paths);
        assert!(paths.contains(&"workload.jobs[1].collectives[0].op".to_string()), "{paths:?}");
        remove(&mut t, "workload.jobs[1].collectives[0].op");
        remove(&mut t, "topology.k");
        assert!(!toml::to_string(&t).unwrap().contains("op ="));
        assert_eq!(parse_range("0.001..=1000000"), Some((0.001, 1e6)));
    }

    #[test]
    fn every_bad_input_file_is_refused_naming_its_key_in_a_short_message() {
        let dir = std::env::temp_dir().join(format!("fabricsim-fuzz-bad-inputs-{}", std::process::id()));
        write_data_files(&dir).unwrap();
        let mut drawn = std::collections::BTreeSet::new();
        let mut g = Gen::new(3, 0, false);
        for _ in 0..400 {
            let mut t = Table::new();
            put(&mut t, "topology.kind", s("leaf_spine"));
            put(&mut t, "topology.k", int(4));
            let mut case = Case { index: 0, toml: String::new(), overrides: Vec::new(), mutations: Vec::new(), run: false };
            g.bad_input_file(&mut t, &mut case);
            let name = case.mutations[0].trim_start_matches("bad input file ").to_string();
            if !drawn.insert(name.clone()) {
                continue;
            }
            let e = match fabricsim::Scenario::from_toml(&toml::to_string(&t).unwrap(), &[]).and_then(|sc| sc.setup(&dir)) {
                Ok(_) => panic!("{name} accepted"),
                Err(e) => e,
            };
            let key = if name.ends_with(".cdf") { "workload.cdf" } else { "workload.file" };
            let m = e.to_string();
            assert!(matches!(&e, fabricsim::Error::Invalid { key: k, .. } if k == key) && m.len() < 500 && m.contains(&name), "{name}: {} bytes: {}", m.len(), &m[..m.len().min(600)]);
        }
        assert_eq!(drawn.len(), BAD_INPUTS.len(), "every bad file is drawn");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_family_is_reachable() {
        let f = families();
        for table in ["transport.cc", "transport.lb", "switch.lb", "transport.reliability", "transport.gate", "transport.credit", "transport.shaper", "workload", "topology", "switch", "run"] {
            assert!(f.iter().any(|x| x.table == table), "{table}");
        }
    }
}
