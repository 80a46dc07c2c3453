//! The output schema (`results::schema`, `fabricsim list --outputs`) lists exactly what the
//! writers emit: over a handful of small runs that between them switch on every optional file
//! and key, the key paths of `summary.json` are exactly the schema's, every CSV file's header
//! is its schema's columns and every row has as many fields as its header.

use fabricsim::results::schema::{self, FileSchema};
use fabricsim::scenario::Scenario;
use fabricsim::Results;
use std::collections::BTreeSet;
use std::path::Path;

/// A k = 4 fat tree (16 hosts) running a 256 KiB permutation, plus `extra` settings.
fn run(extra: &[&str]) -> Results {
    let base = "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate_gbps = 100\n[switch]\nbuffer_bdp = 1.0\necn_kmin = 0.2\necn_kmax = 0.8\n\
                [transport]\ncc = \"fixed\"\nlb = \"spray\"\n[workload]\nkind = \"permutation\"\nflow_bytes = \"256KiB\"\n";
    let sets: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let setup = Scenario::from_toml(base, &sets).unwrap().setup(Path::new(".")).unwrap();
    fabricsim::run(&setup, &mut |_| {}).unwrap()
}

/// Runs that between them produce every optional file and key.
fn runs() -> Vec<Results> {
    vec![
        // Pod–core partial LAG loss with its own seed (failed links, Eq. 2, tier queues), a
        // stationary window with size buckets, flowlets, every ToR uplink traced (imbalance),
        // an incast under a re-routing switch scheme with return-to-sender trimming, every log on.
        run(&[
            "topology.failures.kind=\"partial_lag\"",
            "topology.failures.f=1",
            "topology.failures.p=0.5",
            "topology.failures.seed=3",
            "results.window_start_us=0",
            "results.size_buckets=[100000]",
            "run.flowlet_gaps_us=[1]",
            "run.trace_interval_us=1",
            "run.trace_ports=[\"tor_up\"]",
            "run.trace_conns=[0]",
            "run.event_log=true",
            "run.message_log=true",
            "run.ack_log_conns=[0]",
            "run.port_stats=true",
            "switch.lb=\"adaptive_packet\"",
            "switch.buffer_bdp=0.25",
            "workload={ kind = \"incast\", senders = 8, flow_bytes = \"256KiB\" }",
            "switch.trimmed_headers=\"to_sender\"",
            "switch.control_lane=\"shared\"",
        ]),
        // A trimming incast whose headers share the buffer with data (evictions, some for
        // headers), one flow's packets logged.
        run(&[
            "switch.control_lane=\"shared\"",
            "switch.buffer_bdp=0.25",
            "workload={ kind = \"incast\", senders = 15, flow_bytes = \"256KiB\" }",
            "run.packet_log_conns=[0]",
        ]),
        // Flaky links: wire losses, flaky ports, timeouts.
        run(&["topology.failures.kind=\"flaky\"", "topology.failures.f=1", "topology.failures.burst_gap_us=5", "topology.failures.burst_len_us=2"]),
        // A collective on a lossless fabric with two queue profiles: CCTs, PFC, profiles.
        run(&[
            "switch.trimming=false",
            "switch.pfc.enabled=true",
            "switch.ports.tor_up.buffer_bdp=2.0",
            "workload={ kind = \"collectives\", chunk = \"64KiB\", jobs = [{ ranks = 8, collectives = [{ op = \"allreduce\", algorithm = \"ring\", bytes = \"1MiB\" }] }] }",
            "transport.cc=\"dcqcn\"",
            "transport.reliability=\"go_back_n\"",
        ]),
        // A training step: its iterations and groups, ccts.csv's group column.
        run(&["workload={ kind = \"training\", model = { layers = 2, hidden = 128, heads = 4, seq = 32, vocab = 256, global_batch = 4 }, parallelism = { tp = 2, pp = 2, dp = 2 } }"]),
        // An MCC gate with its log.
        run(&["transport.cc=\"line_rate\"", "transport.gate=\"mcc\"", "run.gate_log=true"]),
        // A fabric of servers with a scale-up domain on two planes: summary.json's rails, with
        // their columns, and planes.
        run(&["topology={ kind = \"rail_optimized\", servers = 4, servers_per_su = 2, planes = 2, link_rate_gbps = 100, server = { gpus = 2, scale_up_gbps = 900 } }"]),
        // A lossless incast under a message shaper: pauses; flows.csv rows are application
        // flows with their sub-QPs.
        run(&["transport.shaper={ name = \"seqbalance\" }", "run.event_log=true", "workload={ kind = \"incast\", senders = 8, flow_bytes = \"1MiB\" }", "switch.trimming=false", "switch.pfc.enabled=true", "transport.cc=\"dcqcn\"", "transport.reliability=\"go_back_n\""]),
    ]
}

/// Key paths of a JSON value: objects joined with `.`, array-of-object elements as `[]`.
/// Statistics objects, the per-kind counters, string arrays and the scenario are leaves.
fn paths(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    use serde_json::Value::*;
    let leaf = prefix == "scenario" || prefix == "packets.by_kind" || is_stats(v);
    match v {
        Object(m) if !leaf => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                paths(x, &p, out);
            }
        }
        Array(a) if a.iter().any(|x| x.is_object()) => {
            for x in a {
                paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

fn is_stats(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|m| m.keys().map(String::as_str).eq(["max", "mean", "min", "p50", "p99"]))
}

fn column_names(f: &FileSchema) -> BTreeSet<String> {
    f.columns.iter().map(|c| c.name.to_string()).collect()
}

#[test]
fn the_schema_lists_exactly_what_the_writers_emit() {
    let runs = runs();
    let mut emitted = BTreeSet::new();
    for r in &runs {
        paths(&serde_json::from_str(&r.summary_json()).unwrap(), "", &mut emitted);
    }
    let listed = column_names(&schema::SUMMARY);
    assert_eq!(emitted.difference(&listed).collect::<Vec<_>>(), Vec::<&String>::new(), "summary.json keys missing from the schema");
    assert_eq!(listed.difference(&emitted).collect::<Vec<_>>(), Vec::<&String>::new(), "schema keys no run emitted");

    // Every CSV file: some run writes it, its header's columns are the schema's (in order;
    // flows.csv's optional ones where the run has them) and every row has as many fields.
    for f in schema::files().filter(|f| f.name.ends_with(".csv")) {
        let mut seen_columns = BTreeSet::new();
        let mut rows = 0;
        for r in &runs {
            let csv = r.output_text(f.name).unwrap();
            let mut lines = csv.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            let in_schema: Vec<&str> = f.columns.iter().map(|c| c.name).filter(|n| header.contains(n)).collect();
            assert_eq!(header, in_schema, "{}: header columns not in the schema or out of order", f.name);
            seen_columns.extend(header.iter().map(|s| s.to_string()));
            for l in lines {
                // No field holds a comma (names are NODE-NODE, numbers, words).
                assert_eq!(l.split(',').count(), header.len(), "{}: row {l:?}", f.name);
                rows += 1;
            }
        }
        assert!(rows > 0, "{}: no run wrote a row", f.name);
        assert_eq!(seen_columns, column_names(f), "{}: schema columns no run wrote", f.name);
    }
}

#[test]
fn every_column_has_a_unit_and_a_meaning_and_every_file_is_listed_once() {
    let text = schema::text();
    let mut names = BTreeSet::new();
    for f in schema::files() {
        assert!(names.insert(f.name), "{} twice", f.name);
        assert!(text.contains(&format!("\n{} (", f.name)), "{} not printed", f.name);
        let mut cols = BTreeSet::new();
        for c in f.columns {
            assert!(cols.insert(c.name), "{}: {} twice", f.name, c.name);
            assert!(!c.unit.is_empty() && c.meaning.len() > 3, "{}: {}", f.name, c.name);
        }
    }
}
