//! Inputs as people write them (issue 21): sizes and rates with units, glob patterns in
//! `run.trace_ports`, and `[topology.failures]` held fixed by a seed of their own or switched off
//! with `--set`.
mod common;

use common::{rejection, run};
use fabricsim::Scenario;
use std::path::Path;

/// A 32-host leaf-spine (8 ToRs × 4 hosts, 4 spines) running a permutation; `extra` is appended.
fn leaf_spine(seed: u64, rate: &str, flow_bytes: &str, extra: &str) -> String {
    format!(
        "seed = {seed}\n[topology]\nkind = \"leaf_spine\"\nk = 8\nlink_rate_gbps = {rate}\n\
         [workload]\nkind = \"permutation\"\nflow_bytes = {flow_bytes}\n{extra}\n"
    )
}

fn resolved(toml: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml(toml, &o).expect("valid scenario").to_toml()
}

fn setup_error(toml: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Scenario::from_toml(toml, &o).and_then(|s| s.setup(Path::new(".")).map(|_| ())) {
        Ok(()) => panic!("accepted:\n{toml}\n{overrides:?}"),
        Err(e) => e.to_string(),
    }
}

// ---- sizes and rates ----

#[test]
fn spelled_sizes_and_rates_run_exactly_as_plain_numbers() {
    let plain = leaf_spine(1, "100", "64000", "");
    for (rate, bytes) in [("\"100G\"", "\"64kb\""), ("\"100 Gb/s\"", "\"64 KB\""), ("\"100gbps\"", "\"64K\""), ("100.0", "\"0.064M\"")] {
        let spelled = leaf_spine(1, rate, bytes, "");
        assert_eq!(resolved(&spelled, &[]), resolved(&plain, &[]), "{rate} {bytes}");
        assert_eq!(run(&spelled).flows_csv(), run(&plain).flows_csv(), "{rate} {bytes}");
    }
    // Binary units and overrides on the command line.
    let r = resolved(&plain, &["workload.flow_bytes=2mib", "topology.host_link_rate_gbps=25g", "topology.tor_uplink_rate_gbps=800M"]);
    assert!(r.contains("flow_bytes = 2097152") && r.contains("host_link_rate_gbps = 25.0") && r.contains("tor_uplink_rate_gbps = 0.8"), "{r}");
    // Rate lists and the other rate keys take the same spellings.
    let explicit = "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 3\nspine_link_rates_gbps = [\"80G\", 40, \"40 Gb/s\"]\n\
                    [[link_events]]\nat_us = 1\nlink = \"tor0-spine0\"\naction = \"rate\"\nrate_gbps = \"50Gbps\"\n";
    let r = resolved(explicit, &[]);
    assert!(r.contains("spine_link_rates_gbps = [80.0, 40.0, 40.0]") && r.contains("rate_gbps = 50.0"), "{r}");
}

#[test]
fn bad_sizes_and_rates_name_the_key_and_the_spellings() {
    let e = rejection("[topology]\nlink_rate_gbps = true\n");
    assert!(e.contains("topology.link_rate_gbps") && e.contains("a number in Gb/s, or a string such as \"400G\""), "{e}");
    let e = rejection("[topology]\nlink_rate_gbps = \"400GB/s\"\n");
    assert!(e.contains("topology.link_rate_gbps") && e.contains("bytes"), "{e}");
    let e = rejection("[topology]\nhost_link_rate_gbps = \"0G\"\n");
    assert!(e.contains("topology.host_link_rate_gbps") && e.contains("positive"), "{e}");
    let e = rejection("[switch]\nbuffer_bytes = \"2 parsecs\"\n");
    assert!(e.contains("switch.buffer_bytes") && e.contains("unknown unit `parsecs`") && e.contains("Mi/MiB") && e.contains("case"), "{e}");
    let e = rejection("[switch]\nbuffer_bytes = \"1.5B\"\n");
    assert!(e.contains("switch.buffer_bytes") && e.contains("whole number of bytes"), "{e}");
    let e = rejection("[switch]\nbuffer_bytes = -5\n");
    assert!(e.contains("switch.buffer_bytes") && e.contains("KiB"), "{e}");
}

// ---- glob patterns in run.trace_ports ----

#[test]
fn trace_port_patterns_select_every_matching_port_once() {
    let toml = leaf_spine(1, "100", "\"64KiB\"", "[run]\ntrace_interval_us = 2\ntrace_ports = [\"tor0-*\", \"tor0-spine1\", \"*-spine1\"]");
    let r = run(&toml);
    let names: Vec<&str> = r.port_names.values().map(String::as_str).collect();
    let mut want: Vec<String> = (0..4).map(|h| format!("tor0-host{h}")).chain((0..4).map(|s| format!("tor0-spine{s}"))).collect();
    want.extend((1..8).map(|t| format!("tor{t}-spine1")));
    let mut got = names.clone();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "tor0-spine1 is named three times and traced once");
    // Every traced port is sampled once per tick.
    let first_tick = r.port_trace[0].at;
    assert_eq!(r.port_trace.iter().filter(|s| s.at == first_tick).count(), 15);
}

#[test]
fn a_pattern_matching_nothing_names_its_entry_and_a_valid_name() {
    let toml = leaf_spine(1, "100", "\"64KiB\"", "[run]\ntrace_interval_us = 2\ntrace_ports = [\"tor0-*\", \"agg*-*\"]");
    let e = rejection(&toml);
    assert!(e.contains("run.trace_ports[1]") && e.contains("`agg*-*`") && e.contains("matches no port") && e.contains("\"tor0-spine0\""), "{e}");
}

// ---- failures held fixed, switched off ----

const FAILURES: &str = "[topology.failures]\ntors = 3\nuplinks_per_tor = 1";

fn pairs(r: &fabricsim::Results) -> Vec<(u32, u32)> {
    r.flows.iter().map(|f| (f.src, f.dst)).collect()
}

#[test]
fn a_failure_seed_holds_the_failed_links_while_the_master_seed_moves_the_workload() {
    let with_seed = |master: u64| run(&leaf_spine(master, "100", "\"64KiB\"", &format!("{FAILURES}\nseed = 11")));
    let (a, b) = (with_seed(1), with_seed(2));
    assert_eq!(a.summary.failed_links, b.summary.failed_links);
    assert_eq!(a.summary.failed_links.len(), 3);
    assert_ne!(pairs(&a), pairs(&b), "the workload follows the master seed");
    assert_eq!((a.summary.failure_seed, b.summary.failure_seed), (Some(11), Some(11)));
    // Without it the failures follow the master seed, as before the key existed...
    let without = |master: u64| run(&leaf_spine(master, "100", "\"64KiB\"", FAILURES));
    let (c, d) = (without(1), without(2));
    assert_ne!(c.summary.failed_links, d.summary.failed_links);
    assert_eq!(c.summary.failure_seed, None);
    // ... and giving the master seed as the failure seed changes nothing at all.
    let same = run(&leaf_spine(2, "100", "\"64KiB\"", &format!("{FAILURES}\nseed = 2")));
    assert_eq!(same.flows_csv(), d.flows_csv());
    assert_eq!(same.summary.failed_links, d.summary.failed_links);
}

#[test]
fn a_failure_seed_holds_pod_faults_too() {
    let flaky = |master: u64| {
        format!(
            "seed = {master}\n[topology]\nk = 4\n[topology.failures]\nkind = \"flaky\"\nf = 1\nplacement = \"random\"\nseed = 3\n\
             [workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n"
        )
    };
    let links = |toml: &str| Scenario::from_toml(toml, &[]).unwrap().setup(Path::new(".")).unwrap().fabric.failures.iter().map(|l| l.up).collect::<Vec<_>>();
    assert_eq!(links(&flaky(1)), links(&flaky(2)));
    assert_eq!(links(&flaky(1)), links(&flaky(9)));
}

#[test]
fn switched_off_failures_run_exactly_as_absent_ones() {
    let absent = leaf_spine(1, "100", "\"64KiB\"", "");
    let present = leaf_spine(1, "100", "\"64KiB\"", &format!("{FAILURES}\nseed = 4\nmodel = \"degraded\""));
    let off = ["topology.failures.enabled=false"];
    assert_eq!(resolved(&present, &off), resolved(&absent, &[]));
    let r = Scenario::from_toml(&present, &off.map(String::from)).unwrap().setup(Path::new(".")).unwrap();
    assert!(r.fabric.failures.is_empty());
    let switched_off = fabricsim::run(&r, &mut |_| {}).unwrap();
    assert_eq!(switched_off.flows_csv(), run(&absent).flows_csv());
    assert!(switched_off.summary.failed_links.is_empty() && switched_off.summary.failure_seed.is_none());
    // Switched off, the section's other keys are not checked (they may be for another fabric).
    assert!(Scenario::from_toml(&present, &["topology.failures.tors=99".into(), off[0].into()]).unwrap().setup(Path::new(".")).is_ok());
}

#[test]
fn failure_errors_name_their_keys_and_the_switch() {
    let present = leaf_spine(1, "100", "\"64KiB\"", FAILURES);
    let e = setup_error(&present, &["topology.failures.tors=0"]);
    assert!(e.contains("topology.failures.tors") && e.contains("1..=8") && e.contains("topology.failures.enabled = false"), "{e}");
    let e = setup_error(&present, &["topology.failures.enabled=no"]);
    assert!(e.contains("topology.failures.enabled"), "{e}");
    let e = setup_error(&present, &["topology.failures.seed=-1"]);
    assert!(e.contains("topology.failures.seed"), "{e}");
}

// ---- input files with a bad token (issue 49) ----

#[test]
fn a_megabyte_bad_token_in_an_input_file_is_quoted_in_at_most_an_excerpt() {
    let dir = std::env::temp_dir().join(format!("fabricsim-inputs-long-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = "7".repeat(1 << 20) + "x";
    let fabric = "[topology]\nkind = \"leaf_spine\"\nk = 4\n";
    // (file, its text, the workload table naming it, the key the error names, where in the file)
    let cases = [
        ("flows.csv", format!("src,dst,bytes\n0,1,100\n0,1,{token}\n"), "kind = \"flow_list\"\nfile = \"flows.csv\"", "workload.file", Some(":3:")),
        ("flows.csv", format!("{token},dst,bytes\n"), "kind = \"flow_list\"\nfile = \"flows.csv\"", "workload.file", Some(":1:")),
        ("m.cm", format!("Nodes 8\n0->1 id 1 start 0 size {token}\n"), "kind = \"flow_list\"\nfile = \"m.cm\"", "workload.file", Some(":2:")),
        ("m.cm", format!("Nodes 8\n0->1 id 1 start 0 size 5 {token} 1\n"), "kind = \"flow_list\"\nfile = \"m.cm\"", "workload.file", Some(":2:")),
        ("m.cm", format!("Nodes 8\n{token}\n"), "kind = \"flow_list\"\nfile = \"m.cm\"", "workload.file", Some(":2:")),
        ("s.cdf", format!("100 0.5\n{token} 1\n"), "kind = \"open_loop\"\ncdf = \"s.cdf\"\nload = 0.5\nflows = 10", "workload.cdf", Some(":2:")),
        ("t.json", format!("[{{\"op\": \"allreduce\", \"bytes\": \"{token}\"}}]"), "kind = \"collectives\"\n[[workload.jobs]]\nranks = 4\ntrace = \"t.json\"", "workload.jobs[0].trace", Some(": at `[0].bytes`")),
        // A trace's collectives are checked as the job's own, by their key.
        ("t.json", format!("[{{\"op\": \"{token}\", \"bytes\": 1000}}]"), "kind = \"collectives\"\n[[workload.jobs]]\nranks = 4\ntrace = \"t.json\"", "workload.jobs[0].collectives[0].op", None),
    ];
    for (file, text, workload, key, at) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        let toml = format!("{fabric}[workload]\n{workload}\n");
        let e = match Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(&dir).map(|_| ())) {
            Ok(()) => panic!("accepted: {file}"),
            Err(e) => e.to_string(),
        };
        // A flow list's errors are short; a byte count's carries its spellings (~400 bytes).
        let most = if key == "workload.file" { 500 } else { 800 };
        assert!(e.len() < most && e.contains(key) && at.is_none_or(|at| e.contains(&format!("{file}{at}"))) && e.contains("7777…"), "{} bytes: {}", e.len(), &e[..e.len().min(600)]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_ns3_flow_file_runs_as_its_simulator_declares_it() {
    // The HPCC ns-3 simulator's own formats, written here: a star topology (switch 0, hosts
    // 1..=4) and two flows to node 1 at 0 and 10 µs. Nodes 1..=4 are fabricsim's hosts 0..=3.
    let dir = std::env::temp_dir().join(format!("fabricsim-ns3-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("topology.txt"), "5 1 4\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n0 4 100Gbps 0.001ms 0\n").unwrap();
    std::fs::write(dir.join("flow.txt"), "2\n2 1 3 100 100000 0\n4 1 3 100 50000 0.00001\n").unwrap();
    let toml = "[topology]\nkind = \"leaf_spine\"\ntors = 1\nhosts_per_tor = 4\nspines = 1\nlink_rate_gbps = 100\n\
                [workload]\nkind = \"flow_list\"\nfile = \"flow.txt\"\nformat = \"ns3\"\nns3_topology = \"topology.txt\"\n";
    let setup = Scenario::from_toml(toml, &[]).unwrap().setup(&dir).unwrap();
    let r = fabricsim::run(&setup, &mut |_| {}).unwrap();
    assert!(r.summary.invariant_violations.is_empty(), "{:?}", r.summary.invariant_violations);
    let f: Vec<(u32, u32, u64, u64)> = r.flows.iter().map(|f| (f.src, f.dst, f.bytes, f.start.0)).collect();
    assert_eq!(f, [(1, 0, 100_000, 0), (3, 0, 50_000, 10_000_000)]);
    // The topology file belongs to the ns-3 format only.
    let e = Scenario::from_toml(&toml.replace("format = \"ns3\"\n", "format = \"csv\"\n"), &[]).unwrap().setup(&dir).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("`workload.ns3_topology`") && e.contains("only with format = \"ns3\""), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

//= type=test; HPCC ns-3 simulator SwitchNode::GetOutDev / EcmpHash (experiments/ns3-parity)
#[test]
fn ns3_ecmp_puts_flows_on_the_uplinks_the_simulator_puts_them_on() {
    // The parity experiment's seed-2 permutation: 32 hosts on 4 ToRs (nodes 32..35), 4 spines
    // (36..39), 10 MB per flow; (src, dst, DPORT) per line. ns-3's packet trace of the four ToRs
    // counted, per ToR, the flows on the uplinks to spines 36, 37, 38, 39 (0: unused).
    const FLOWS: &str = "0 16 27861\n1 25 58544\n2 18 58038\n3 31 34555\n4 29 10879\n5 20 36833\n6 0 11728\n7 4 15574\n8 10 15212\n9 7 1663\n10 14 11681\n11 17 21408\n12 22 11476\n13 28 9058\n14 15 33534\n15 12 33538\n16 13 23672\n17 27 33768\n18 1 44302\n19 24 36792\n20 6 12017\n21 19 58661\n22 8 29305\n23 9 52316\n24 21 27275\n25 23 48229\n26 5 34530\n27 26 59514\n28 11 59638\n29 30 50096\n30 2 23971\n31 3 51856\n";
    const NS3_FLOWS_PER_UPLINK: [[u64; 4]; 4] = [[1, 2, 3, 0], [1, 2, 0, 1], [1, 1, 3, 2], [1, 2, 2, 1]];
    let dir = std::env::temp_dir().join(format!("fabricsim-ns3-ecmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut links: Vec<String> = (0..32).map(|h| format!("{h} {} 100Gbps 0.001ms 0", 32 + h / 8)).collect();
    links.extend((0..4).flat_map(|t| (0..4).map(move |s| format!("{} {} 100Gbps 0.001ms 0", 32 + t, 36 + s))));
    std::fs::write(dir.join("topology.txt"), format!("40 8 {}\n32 33 34 35 36 37 38 39\n{}\n", links.len(), links.join("\n"))).unwrap();
    let lines: Vec<String> = FLOWS.lines().map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        format!("{} {} 3 {} 10000000 0", f[0], f[1], f[2])
    }).collect();
    std::fs::write(dir.join("flow.txt"), format!("{}\n{}\n", lines.len(), lines.join("\n"))).unwrap();
    let toml = "[topology]\nkind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 8\nspines = 4\nlink_rate_gbps = 100\n\
                [switch]\nlb = \"ns3_ecmp\"\ntrimming = false\n[switch.pfc]\nenabled = true\n[transport]\ncc = \"line_rate\"\nlb = \"ecmp\"\nreliability = \"go_back_n\"\nack_bytes = 1\n\
                [workload]\nkind = \"flow_list\"\nfile = \"flow.txt\"\nformat = \"ns3\"\nns3_topology = \"topology.txt\"\n[run]\nport_stats = true\n";
    let setup = Scenario::from_toml(toml, &[]).unwrap().setup(&dir).unwrap();
    let r = fabricsim::run(&setup, &mut |_| {}).unwrap();
    assert!(r.summary.invariant_violations.is_empty(), "{:?}", r.summary.invariant_violations);
    // Flows per uplink: its bytes in 10 MB flows of 4096 B packets (64 B of headers); the ACKs
    // of the flows coming the other way, 1 B each here, add 0.1 %.
    let mut ours = [[0u64; 4]; 4];
    for p in r.ports.iter().filter(|p| p.class == "tor_up") {
        let (tor, spine) = p.link.strip_prefix("tor").and_then(|l| l.split_once("-spine")).unwrap();
        ours[tor.parse::<usize>().unwrap()][spine.parse::<usize>().unwrap()] = (p.tx_bytes as f64 / (10e6 * 4096.0 / 4032.0)).round() as u64;
    }
    assert_eq!(r.summary.packets.retransmitted, 0, "lossless: every byte counted once");
    assert_eq!(ours, NS3_FLOWS_PER_UPLINK);
    // Without the simulator's names there is nothing to hash: refused, naming the key.
    let e = Scenario::from_toml(&toml.replace("ns3_topology = \"topology.txt\"\n", ""), &[]).unwrap().setup(&dir).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("switch.lb") && e.contains("ns3_ecmp"), "{e}");
    // DRILL hashing its ACKs as ConWeave's simulator does needs the names too.
    let drill = toml.replace("lb = \"ns3_ecmp\"\ntrimming", "trimming").replace("[switch.pfc]", "[switch.lb]\nname = \"drill\"\ncontrol = \"ns3_ecmp\"\n[switch.pfc]");
    assert!(Scenario::from_toml(&drill, &[]).unwrap().setup(&dir).is_ok());
    let e = Scenario::from_toml(&drill.replace("ns3_topology = \"topology.txt\"\n", ""), &[]).unwrap().setup(&dir).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("switch.lb") && e.contains("control = \"ns3_ecmp\""), "{e}");
    // Parallel ToR-spine cables have no counterpart in the simulator: refused.
    let e = Scenario::from_toml(&toml.replace("spines = 4\n", "spines = 4\nlinks_per_spine = 2\n"), &[]).unwrap().setup(&dir).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("switch.lb") && e.contains("parallel links"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
