//! Shared helpers for scenario tests: tiny fabrics written as TOML, run in-process.
#![allow(dead_code)]

use fabricsim::{Results, Scenario};
use std::collections::BTreeMap;
use std::path::Path;

/// Runs a scenario given as TOML text and asserts its invariants held.
pub fn run(toml: &str) -> Results {
    let r = run_unchecked(toml);
    assert!(r.summary.invariant_violations.is_empty(), "invariants: {:?}", r.summary.invariant_violations);
    r
}

/// Runs a scenario given as TOML text; the caller inspects any invariant violations.
pub fn run_unchecked(toml: &str) -> Results {
    let setup = Scenario::from_toml(toml, &[]).expect("valid scenario").setup(Path::new(".")).expect("setup");
    fabricsim::run(&setup, &mut |_| {}).expect("run")
}

/// The error message of a scenario that must be rejected.
pub fn rejection(toml: &str) -> String {
    match Scenario::from_toml(toml, &[]).and_then(|s| s.setup(Path::new(".")).map(|_| ())) {
        Ok(()) => panic!("scenario was accepted:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

/// The lb-ai-training fabric's queues and packets (spec §4-5): 32 KiB drop-tail switch buffers,
/// 4096-byte packets with 64-byte headers, host spraying. `[switch]` and `[transport]` tables;
/// the caller adds the topology, the subtables of `[transport]` and the workload.
pub const LB_STUDY_QUEUES: &str = r#"
[switch]
buffer_bytes = "32KiB"
trimming = false
[transport]
mtu_bytes = 4096
header_bytes = 64
lb = "spray"
"#;

/// Lossless RoCEv2 switches (strack spec §4, §5.4): PFC on, no trimming, ECN step at 1 BDP.
pub const ROCE_SWITCH: &str = r#"
    [switch]
    trimming = false
    ecn_kmin = 1.0
    ecn_kmax = 1.0
    [switch.pfc]
    enabled = true
"#;

/// RoCEv2 1 QP: DCQCN, one ECMP path, go-back-N.
pub const ROCE_TRANSPORT: &str = r#"
    [transport]
    cc = "dcqcn"
    lb = "ecmp"
    reliability = "go_back_n"
"#;

/// A lossless RoCEv2 leaf-spine ([`ROCE_SWITCH`], [`ROCE_TRANSPORT`]) with master seed `seed`,
/// `tors` ToRs of `hosts_per_tor` hosts and `spines` spines, every link 100 Gb/s and 1 µs;
/// `switch` adds lines after the switch tables (e.g. a `[switch.lb]` table), `transport` lines
/// to `[transport]`. The caller appends `[workload]` and what follows.
pub fn roce_leaf_spine(seed: u64, (tors, hosts_per_tor, spines): (u32, u32, u32), switch: &str, transport: &str) -> String {
    format!(
        "seed = {seed}\n[topology]\nkind = \"leaf_spine\"\ntors = {tors}\nhosts_per_tor = {hosts_per_tor}\nspines = {spines}\n\
         link_rate_gbps = 100\nlink_latency_ns = 1000\n{ROCE_SWITCH}\n{switch}\n{ROCE_TRANSPORT}\n{transport}\n"
    )
}

/// Serialization time of `bytes` at `gbps`, in ps.
pub fn tx_ps(bytes: u64, gbps: u64) -> u64 {
    (bytes * 8 * 1000).div_ceil(gbps)
}

/// A k=8 fat-tree permutation of 2 MiB flows, fixed 2-BDP windows and ample buffers (nothing
/// trimmed), with switch path selection `switch_lb` and host path selection `host_lb`.
pub fn switch_lb_permutation(switch_lb: &str, host_lb: &str, seed: u64) -> Results {
    run(&format!(
        r#"
        seed = {seed}
        [topology]
        k = 8
        [switch]
        buffer_bytes = "64MiB"
        lb = "{switch_lb}"
        [transport]
        lb = "{host_lb}"
        [transport.cc]
        name = "fixed"
        window_bdp = 2.0
        [workload]
        kind = "permutation"
        flow_bytes = "2MiB"
    "#
    ))
}

/// A 16:1 incast of 1 MiB flows into half-BDP buffers of a k=8 fat tree, fixed 1-BDP windows,
/// with or without trimming; `extra` adds tables (a loss-recovery mode, say).
pub fn half_bdp_incast(trimming: bool, extra: &str) -> String {
    format!(
        r#"
        seed = 5
        [topology]
        k = 8
        [switch]
        buffer_bdp = 0.5
        trimming = {trimming}
        [transport.cc]
        name = "fixed"
        window_bdp = 1.0
        [workload]
        kind = "incast"
        senders = 16
        flow_bytes = "1MiB"
        {extra}
    "#
    )
}

/// One 2080-packet flow host 0 → host 127 of an idle k = 8 fat tree at 400 Gb/s
/// (`data/one_flow.csv`); `extra` adds tables.
pub fn one_flow(extra: &str) -> String {
    format!(
        r#"
        [topology]
        k = 8
        [workload]
        kind = "flow_list"
        file = "tests/data/one_flow.csv"
        {extra}
    "#
    )
}

/// Upward ports of host 0 -> host 15 on a k=4 fat tree: tor0's two uplinks, then each pod-0
/// aggregation switch's two core uplinks (agg0 -> core0/1, agg1 -> core2/3).
pub const K4_UP: [&str; 6] = ["tor0-agg0", "tor0-agg1", "agg0-core0", "agg0-core1", "agg1-core2", "agg1-core3"];

/// The bytes each traced port sent (`run.trace_ports`, in the order given) over a whole run,
/// as shares of what the first two sent together (a ToR's two uplinks, say).
pub fn port_shares(r: &Results, ports: usize) -> Vec<f64> {
    // Each sampling tick records the traced ports in the order given.
    let order: Vec<u32> = r.port_trace.iter().take(ports).map(|s| s.port).collect();
    let mut tx: BTreeMap<u32, u64> = BTreeMap::new();
    for s in &r.port_trace {
        let e = tx.entry(s.port).or_default();
        *e = (*e).max(s.tx_bytes);
    }
    let total = tx[&order[0]] + tx[&order[1]];
    order.iter().map(|p| tx[p] as f64 / total as f64).collect()
}

/// An 8-rank job (random placement) running a 4 MiB ring AllReduce and a 4 MiB AlltoAll in
/// 128 KiB chunks: many messages per connection, some open at once (a `[workload]` table).
pub const TWO_COLLECTIVES: &str = r#"
    [workload]
    kind = "collectives"
    chunk = "128KiB"
    [[workload.jobs]]
    ranks = 8
    placement = "random"
    collectives = [ { op = "allreduce", algorithm = "ring", bytes = "4MiB" }, { op = "alltoall", bytes = "4MiB" } ]
"#;

/// The 32 -> 1 RoCE incast of 1 MiB flows on a 128-host leaf-spine (DCQCN, ECMP, go-back-N,
/// PFC) that issue 21 reported; `run` holds `[run]` keys (a line each), if any.
pub fn roce_incast_128(run: &str) -> String {
    format!(
        "seed = 1\n[topology]\nkind = \"leaf_spine\"\nhosts = 128\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\n\
         [transport]\ncc = \"dcqcn\"\nlb = \"ecmp\"\nreliability = \"go_back_n\"\n\
         [workload]\nkind = \"incast\"\nsenders = 32\nreceiver = 0\nflow_bytes = \"1MiB\"\n[run]\n{run}\n"
    )
}

/// A `flow_list` CSV written to a fresh temporary folder for one test, removed when dropped.
pub struct FlowFile {
    dir: std::path::PathBuf,
    /// The `[workload]` lines that read it.
    pub workload: String,
}

/// Writes `csv` (a `flow_list` file: `src,dst,bytes,start_us` rows) for the test named `tag`.
pub fn flow_file(tag: &str, csv: &str) -> FlowFile {
    let dir = std::env::temp_dir().join(format!("fabricsim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flows.csv");
    std::fs::write(&file, csv).unwrap();
    FlowFile { workload: format!("kind = \"flow_list\"\nfile = {:?}", file.display().to_string()), dir }
}

impl Drop for FlowFile {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The families a scenario selects one scheme of by name (the others are settings of one
/// scheme: the queue discipline, PFC, the run options).
pub const SELECTED_FAMILIES: &[&str] = &[
    "topology.kind",
    "topology.failures.kind",
    "transport.cc",
    "transport.lb",
    "switch.lb",
    "workload.kind",
    "transport.gate",
    "transport.credit",
    "transport.reliability",
    "transport.shaper",
];

/// Every registered scheme of those families, with its family's key.
pub fn registered() -> Vec<(String, fabricsim::scheme::SchemeRow)> {
    fabricsim::registry::families()
        .into_iter()
        .filter(|f| SELECTED_FAMILIES.contains(&f.key))
        .flat_map(|f| f.schemes.iter().map(move |s| (f.key.to_string(), *s)))
        .collect()
}

/// The 16-host fat tree (k = 4) at 400 Gb/s with ample buffers, spraying and a 2-BDP fixed
/// window that the collective, training and trace tests run on; `workload` is the rest of
/// `[workload]`.
pub fn idle_fat_tree_16(seed: u64, workload: &str) -> String {
    format!(
        r#"
        seed = {seed}
        [topology]
        k = 4
        [switch]
        buffer_bytes = "64MiB"
        [transport]
        lb = "spray"
        cc = {{ name = "fixed", window_bdp = 2.0 }}
        [workload]
        {workload}
    "#
    )
}
