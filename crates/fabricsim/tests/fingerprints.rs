//! Output fingerprints: a hash of every result file (minus wall-time fields) of a fixed set of
//! runs, stored in `tests/fingerprints.txt` and checked on every test run, as OMNeT++/INET do.
//!
//! Any change that alters a simulated result fails here until its commit updates the stored
//! fingerprints and says why. To update after an intended change:
//!
//! ```text
//! FABRICSIM_BLESS=1 cargo test --release --test fingerprints
//! ```
//!
//! The set covers the bundled examples, both benchmark scenarios and one small run of every
//! congestion control, host path selection, loss-recovery mode, credit scheme and gate, plus
//! PFC, failures (ToR uplinks, partial LAG loss, flaky links), link events and ACK coalescing.

mod common;

use common::{registered, SELECTED_FAMILIES};
use fabricsim::{Results, Scenario};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A small congested run: the bundled example's 128-host fat tree thinned 4:1 at the ToRs,
/// 1 MiB per flow (above one BDP, so the congestion control and loss recovery matter).
const SMALL: &[&str] = &["workload.flow_bytes=\"1MiB\"", "topology.oversubscription=\"4:1\""];
const STRACK_SWITCH: &[&str] = &["switch.trimming=false", "switch.buffer_bdp=5"];
const ROCE: &[&str] = &[
    "switch.trimming=false",
    "switch.ecn_kmin=1.0",
    "switch.ecn_kmax=1.0",
    "switch.pfc.enabled=true",
    "transport.cc=dcqcn",
    "transport.lb=ecmp",
    "transport.reliability=go_back_n",
];

/// (case name, scenario file relative to the repo root, overrides).
fn cases() -> Vec<(String, &'static str, Vec<String>)> {
    let mut v: Vec<(String, &'static str, Vec<String>)> = Vec::new();
    let mut add = |name: &str, file: &'static str, sets: &[&[&str]]| {
        v.push((name.to_string(), file, sets.iter().flat_map(|s| s.iter().map(|x| x.to_string())).collect()));
    };
    const EX: &str = "scenarios/example.toml";
    add("example", EX, &[]);
    add("collectives", "scenarios/collectives.toml", &[]);
    add("bench_perm_1024", "bench/perm_1024.toml", &[]);
    add("bench_perm_8192", "bench/perm_8192.toml", &[]);
    for cc in ["fixed", "line_rate", "smartt", "mprdma", "swift", "bbr", "dcqcn", "strack", "dctcp"] {
        add(&format!("cc_{cc}"), EX, &[SMALL, &[&format!("transport.cc={cc}")]]);
    }
    for lb in ["ecmp", "spray", "reps", "plb", "strack"] {
        add(&format!("lb_{lb}"), EX, &[SMALL, &[&format!("transport.lb={lb}")]]);
    }
    for lb in ["round_robin", "adaptive_packet", "adaptive_ecmp", "flowlet", "letflow", "drill"] {
        add(&format!("switch_lb_{lb}"), EX, &[SMALL, &[&format!("switch.lb={lb}")]]);
    }
    add("switch_lb_adaptive_ecmp_strict_sticky_bytes", EX, &[SMALL, &["switch.lb.name=adaptive_ecmp", "switch.lb.variant=\"strict\"", "switch.lb.sticky=true", "switch.lb.compare=\"bytes\""]]);
    add("lb_spray_permutation", EX, &[SMALL, &["transport.lb.name=spray", "transport.lb.order=permutation"]]);
    for rel in ["sack", "go_back_n", "selective_nack"] {
        // Trimming off and shallow buffers, so that losses exercise the recovery path.
        add(&format!("rel_{rel}"), EX, &[SMALL, &["switch.trimming=false", "switch.buffer_bdp=0.3", &format!("transport.reliability={rel}")]]);
    }
    add("rel_strack", EX, &[SMALL, STRACK_SWITCH, &["transport.cc=strack", "transport.lb=strack", "transport.reliability=strack"]]);
    add("rel_strack_lossy", EX, &[SMALL, &["switch.trimming=false", "switch.buffer_bdp=0.3", "transport.cc=strack", "transport.lb=strack", "transport.reliability=strack"]]);
    add("roce_pfc", EX, &[SMALL, ROCE]);
    // INT through every tier of the fat tree (five switch hops across pods), on 2-4 threads too.
    add("roce_hpcc", EX, &[SMALL, ROCE, &["transport.cc=hpcc"]]);
    add("roce_collectives_4qp", "scenarios/collectives.toml", &[ROCE, &["workload.qps=4"]]);
    add("credit_eqds", EX, &[SMALL, &["transport.cc=line_rate", "transport.credit=eqds"]]);
    add("credit_eqds_smartt", EX, &[SMALL, &["transport.cc=smartt", "transport.credit=eqds"]]);
    add("gate_max_outstanding", "scenarios/collectives.toml", &[&["transport.gate.name=max_outstanding", "transport.gate.messages=2"]]);
    add("ack_every_4", EX, &[SMALL, &["transport.ack_every=4", "transport.cc=smartt", "transport.lb=reps"]]);
    add("incast_smartt", EX, &[&["workload.kind=incast", "workload.senders=16", "workload.flow_bytes=\"256KiB\"", "transport.cc=smartt"]]);
    add("leaf_spine_4to1", EX, &[SMALL, &["topology.kind=leaf_spine", "topology.k=16", "topology.oversubscription=\"4:1\"", "transport.cc=smartt", "transport.lb=reps"]]);
    add("failures_degraded", EX, &[SMALL, &["topology.failures.tors=4", "topology.failures.uplinks_per_tor=2", "topology.oversubscription=\"1:1\"", "topology.failures.model=degraded", "transport.lb=reps"]]);
    add("failures_removed_strack", EX, &[SMALL, STRACK_SWITCH, &["topology.failures.tors=4", "topology.failures.uplinks_per_tor=1", "topology.oversubscription=\"1:1\"", "transport.cc=strack", "transport.lb=strack", "transport.reliability=strack"]]);
    add(
        "link_down_reroute",
        EX,
        &[SMALL, &["link_events=[{ at_us = 5.0, link = \"agg0-core0\", action = \"down\", reroute_after_us = 10 }, { at_us = 20.0, link = \"tor1-agg1\", action = \"rate\", rate_gbps = 100 }]", "topology.oversubscription=\"1:1\"", "transport.lb=reps"]],
    );
    const MIB: &str = "workload.flow_bytes=\"1MiB\"";
    add("faults_partial_lag", EX, &[&[MIB, "topology.failures.kind=partial_lag", "topology.failures.f=2", "topology.failures.p=0.9", "transport.lb=ecmp"]]);
    add(
        "faults_partial_lag_down_scaled",
        EX,
        &[&[MIB, "topology.failures.kind=partial_lag", "topology.failures.f=3", "topology.failures.p=0.9", "topology.failures.placement=spread", "topology.failures.direction=down", "topology.failures.scale_queue=true"]],
    );
    add("faults_flaky", EX, &[&[MIB, "topology.failures.kind=flaky", "topology.failures.placement=random"]]);
    add("link_event_one_way_scaled", EX, &[SMALL, &["link_events=[{ at_us = 5.0, link = \"core0-agg0\", action = \"rate\", rate_gbps = 40, direction = \"forward\", scale_queue = true }]", "run.tier_queue_stats=true"]]);
    add("enqueue_marking_ecn_only", EX, &[SMALL, &["switch.ecn_mark_at=enqueue", "transport.cc.name=smartt", "transport.cc.signals=ecn_only"]]);
    add("wrr_control", EX, &[SMALL, &["switch.control_wrr_weight=20", "transport.cc=mprdma"]]);
    add("traced", EX, &[SMALL, &["run.trace_interval_us=2", "run.trace_ports=[\"tor0-host0\"]", "run.event_log=true", "run.ack_log_conns=[0]", "run.message_log=true", "switch.buffer_bdp=0.3"]]);
    // Every registered scheme that no case above selects gets one from the registry: the small
    // congested run with the scheme selected and its row's example overrides (adding a scheme
    // adds its case).
    let covered: Vec<(String, String)> = v.iter().flat_map(|(_, file, sets)| selections(file, sets)).collect();
    let mut generated = Vec::new();
    for (key, scheme) in registered() {
        if covered.iter().any(|(k, n)| *k == key && *n == scheme.name) {
            continue;
        }
        // Workloads and topologies bring their own size; the transport and switch families run
        // on SMALL.
        let base: &[&str] = if key.starts_with("workload") || key.starts_with("topology") { &[] } else { SMALL };
        let sets = base.iter().map(|x| x.to_string()).chain([format!("{key}={}", scheme.name)]).chain(scheme.example.iter().map(|x| x.to_string()));
        generated.push((format!("registry_{}_{}", key.replace('.', "_"), scheme.name), EX, sets.collect()));
    }
    v.extend(generated);
    v
}

/// (family key, scheme name) of every selected family of the scenario `file` with `sets`: as
/// the resolved scenario spells it, or as a `key=name` override selects it (a resolved scenario
/// leaves some families' defaults out).
fn selections(file: &str, sets: &[String]) -> Vec<(String, String)> {
    let scenario = Scenario::from_file(&root().join(file), sets).unwrap_or_else(|e| panic!("{file} {sets:?}: {e}"));
    let resolved = toml::Value::try_from(&scenario).expect("a scenario serialises");
    let set_by_name = sets.iter().filter_map(|s| s.split_once('=')).filter(|(k, _)| SELECTED_FAMILIES.contains(k)).map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()));
    SELECTED_FAMILIES
        .iter()
        .filter_map(|key| {
            let mut v = &resolved;
            for part in key.split('.') {
                v = v.get(part)?;
            }
            let name = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Table(t) => t.get("name").or_else(|| t.get("kind"))?.as_str()?.to_string(),
                _ => return None,
            };
            Some((key.to_string(), name))
        })
        .chain(set_by_name)
        .collect()
}

/// Every registered scheme of a selected family is run by some case.
#[test]
fn every_registered_scheme_has_a_case() {
    let all = cases();
    let covered: Vec<(String, String)> = all.iter().flat_map(|(_, file, sets)| selections(file, sets)).collect();
    let missing: Vec<String> =
        registered().into_iter().filter(|(k, s)| !covered.iter().any(|(ck, cn)| ck == k && cn == s.name)).map(|(k, s)| format!("{k} = {}", s.name)).collect();
    assert!(missing.is_empty(), "registered schemes that no fingerprint case runs (give the scheme an EXAMPLE that selects it): {missing:?}");
}

/// 64-bit FNV-1a: enough to notice any change of an output file (not a security hash).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Every output of a run, wall-time fields removed, as (file, hash) in a stable order.
fn fingerprint(r: &Results) -> BTreeMap<&'static str, u64> {
    let mut summary: serde_json::Value = serde_json::from_str(&r.summary_json()).expect("summary.json parses");
    let fields = summary.as_object_mut().expect("summary is an object");
    fields.remove("performance");
    // The engine's commit names the build, not a simulated result.
    fields.remove("engine");
    // The estimate is a model of the run's cost, not a simulated result: hashed apart, so that a
    // change of the model (or of what setup allocates) shows as `estimate` alone.
    let estimate = fields.remove("estimate").expect("summary has an estimate");
    let mut m = BTreeMap::new();
    m.insert("summary", fnv1a(serde_json::to_string(&summary).unwrap().as_bytes()));
    m.insert("estimate", fnv1a(serde_json::to_string(&estimate).unwrap().as_bytes()));
    m.insert("flows", fnv1a(r.flows_csv().as_bytes()));
    for (name, text) in [
        ("ccts", r.ccts_csv()),
        ("messages", r.messages_csv()),
        ("trace", r.trace_csv()),
        ("port_trace", r.port_trace_csv()),
        ("acks", r.acks_csv()),
        ("events", r.events_csv()),
    ] {
        if text.lines().count() > 1 {
            m.insert(name, fnv1a(text.as_bytes()));
        }
    }
    m
}

fn line(name: &str, fp: &BTreeMap<&'static str, u64>) -> String {
    let mut s = name.to_string();
    for (k, v) in fp {
        s += &format!(" {k}={v:016x}");
    }
    s
}

/// Runs one case on `threads` threads: its fingerprint line and the run's results.
fn run_case(name: &str, file: &str, sets: &[String], threads: usize) -> (String, Results) {
    let scenario = Scenario::from_file(&root().join(file), sets).unwrap_or_else(|e| panic!("{name}: {e}"));
    let setup = scenario.setup(&root().join(file).parent().unwrap().to_path_buf()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = fabricsim::run_threads(&setup, threads, &mut |_| {}, &Default::default()).expect("run");
    assert!(r.summary.invariant_violations.is_empty(), "{name}: invariants: {:?}", r.summary.invariant_violations);
    (line(name, &fingerprint(&r)), r)
}

fn stored_fingerprints() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprints.txt")).unwrap_or_default()
}

fn by_name(stored: &str) -> BTreeMap<&str, &str> {
    stored.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).filter_map(|l| l.split_once(' ').map(|(n, _)| (n, l))).collect()
}

/// The cases that a parallel run must keep serial, and a word of the reason it gives.
const SERIAL_CASES: &[(&str, &str)] = &[
    ("credit_eqds", "credits"),
    ("credit_eqds_smartt", "credits"),
    ("link_down_reroute", "reroute"),
    ("traced", "tracing"),
];

/// The partitioned engine (`--threads`) gives every case's stored fingerprints on 2, 3 and 4
/// threads, and really runs partitions where it should (the largest benchmark on 2 only).
#[test]
fn parallel_runs_give_the_serial_fingerprints() {
    let stored = stored_fingerprints();
    let stored = by_name(&stored);
    let mut mismatches = Vec::new();
    for (name, file, sets) in cases() {
        let threads: &[usize] = if name == "bench_perm_8192" { &[2] } else { &[2, 3, 4] };
        for &n in threads {
            let (l, r) = run_case(&name, file, &sets, n);
            let perf = &r.summary.performance;
            match SERIAL_CASES.iter().find(|(c, _)| *c == name) {
                Some((_, why)) => {
                    assert_eq!(perf.partitions, 1, "{name}: expected to stay serial");
                    let reason = perf.serial_reason.as_deref().unwrap_or_default();
                    assert!(reason.contains(why), "{name}: serial for {reason:?}, expected a reason naming {why:?}");
                }
                // A registry case may stay serial, but must say why.
                None if name.starts_with("registry_") && perf.partitions == 1 => {
                    assert!(perf.serial_reason.as_deref().is_some_and(|r| !r.is_empty()), "{name}: serial without a reason")
                }
                // Two scalable units, whose servers stay whole: a message between rails is
                // relayed over a server's scale-up domain the moment it arrives there.
                None if name == "registry_topology_kind_rail_only" => assert_eq!(perf.partitions, n.min(2), "{name} on {n} threads"),
                None => assert_eq!(perf.partitions, n, "{name} on {n} threads ran {} partitions ({:?})", perf.partitions, perf.serial_reason),
            }
            if stored.get(name.as_str()) != Some(&l.as_str()) {
                mismatches.push(format!("  {n} threads: {l}\n  serial:     {}", stored.get(name.as_str()).unwrap_or(&"(none)")));
            }
        }
    }
    assert!(mismatches.is_empty(), "parallel runs differ from the serial fingerprints:\n{}", mismatches.join("\n"));
}

#[test]
fn outputs_match_stored_fingerprints() {
    let stored_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprints.txt");
    let bless = std::env::var("FABRICSIM_BLESS").is_ok_and(|v| v == "1");
    let stored = stored_fingerprints();
    let stored = by_name(&stored);
    let mut lines = Vec::new();
    let mut mismatches = Vec::new();
    for (name, file, sets) in cases() {
        let (l, r) = run_case(&name, file, &sets, 1);
        assert_eq!(r.summary.performance.partitions, 1);
        match stored.get(name.as_str()) {
            Some(&s) if s == l => {}
            Some(&s) => mismatches.push(format!("  stored:  {s}\n  now:     {l}")),
            None => mismatches.push(format!("  (no stored fingerprint)\n  now:     {l}")),
        }
        lines.push(l);
    }
    if bless {
        let mut text = String::from(
            "# Output fingerprints (FNV-1a 64 of each result file; summary.json without `performance`, its\n\
             # `estimate` hashed apart).\n\
             # Checked by tests/fingerprints.rs; regenerate with FABRICSIM_BLESS=1 only for an intended change,\n\
             # and say in the commit message why the results changed.\n",
        );
        for l in &lines {
            text += l;
            text.push('\n');
        }
        std::fs::write(&stored_path, text).expect("write fingerprints");
        return;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} runs changed their outputs:\n{}\nIf the change is intended, rerun with FABRICSIM_BLESS=1 and say why in the commit.",
        mismatches.len(),
        lines.len(),
        mismatches.join("\n")
    );
}
