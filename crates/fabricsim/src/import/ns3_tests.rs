//! `from-ns3` on configs, topologies and flow files written by the tests: each translated
//! scenario must also load and set up (what `fabricsim check` does), each refusal name its key.

use super::ns3::{translate, Context, KeyError};
use crate::scenario::{Scenario, Setup};
use std::path::PathBuf;

/// A star of 8 hosts (nodes 1..=8) on switch 0 at 100 Gb/s, 1 µs: the simulator's example
/// shape, smaller.
const STAR: &str = "9 1 8\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n0 4 100Gbps 0.001ms 0\n0 5 100Gbps 0.001ms 0\n0 6 100Gbps 0.001ms 0\n0 7 100Gbps 0.001ms 0\n0 8 100Gbps 0.001ms 0\n";

/// A leaf-spine as the simulator numbers one: hosts 0..=7 (4 per ToR), ToRs 8 and 9, spines 10
/// and 11; 100 G host links of 1 µs, 400 G uplinks of 2 µs.
fn leaf_spine() -> String {
    let mut links: Vec<String> = (0..8).map(|h| format!("{h} {} 100Gbps 1000ns 0", 8 + h / 4)).collect();
    for t in [8, 9] {
        for s in [10, 11] {
            links.push(format!("{t} {s} 400Gbps 2us 0"));
        }
    }
    format!("12 4 {}\n8 9 10 11\n{}\n", links.len(), links.join("\n"))
}

/// The example config's keys, for `CC_MODE` `mode`, with `extra` lines appended (a later key
/// wins, as in the simulator).
fn config(mode: u32, extra: &str) -> String {
    format!(
        "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\nTOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nTRACE_FILE trace.txt\nTRACE_OUTPUT_FILE mix.tr\n\
         FCT_OUTPUT_FILE fct.txt\nPFC_OUTPUT_FILE pfc.txt\nSIMULATOR_STOP_TIME 4.00\nCC_MODE {mode}\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\n\
         RP_TIMER 900 \nEWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\nDCTCP_RATE_AI 1000Mb/s\nERROR_RATE_PER_LINK 0.0000\n\
         L2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\nHAS_WIN 1\nGLOBAL_T 1\nVAR_WIN 1\nFAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nMULTI_RATE 0\n\
         SAMPLE_FEEDBACK 0\nPINT_LOG_BASE 1.05\nPINT_PROB 1.0\nRATE_BOUND 1\nACK_HIGH_PRIO 0\nLINK_DOWN 0 0 0\nENABLE_TRACE 1\n\
         KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600\nKMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400\n\
         PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2\nBUFFER_SIZE 32\nQLEN_MON_FILE qlen.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 2010000000\n{extra}\n"
    )
}

/// A folder with `topo.txt` (the star), `ls.txt` (the leaf-spine) and flow files; unique per
/// test so that tests run in parallel.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-import-ns3-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("topo.txt"), STAR).unwrap();
    std::fs::write(d.join("ls.txt"), leaf_spine()).unwrap();
    // Star: nodes 2 and 3 to node 1 at 2 s (the example's first two flows, smaller).
    std::fs::write(d.join("flow.txt"), "2\n2 1 3 100 2000000 2\n3 1 3 100 2000000 2\n").unwrap();
    // Leaf-spine: node 0 (ToR 8) to node 5 (ToR 9), node 6 to node 7 (both ToR 9).
    std::fs::write(d.join("lsflow.txt"), "2\n0 5 3 100 100000 0\n6 7 3 100 100000 0\n").unwrap();
    d
}

fn ok(test: &str, cfg: &str) -> (String, Setup) {
    let d = dir(test);
    let toml = translate("config.txt", cfg, &Context { cwd: d.clone(), out_dir: None }).unwrap_or_else(|e| panic!("{e}\n{cfg}"));
    let setup = Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(&d)).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    (toml, setup)
}

fn refused(cfg: &str) -> KeyError {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let d = dir(&format!("refused{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    match translate("config.txt", cfg, &Context { cwd: d, out_dir: None }) {
        Ok(t) => panic!("translated:\n{t}"),
        Err(e) => e,
    }
}

/// The line `key = ...` of `[table]` as written, comment included.
fn written<'a>(toml: &'a str, table: &str, key: &str) -> &'a str {
    let start = toml.find(&format!("\n[{table}]\n")).unwrap_or_else(|| panic!("no [{table}] in\n{toml}"));
    let body = &toml[start + table.len() + 4..];
    let body = &body[..body.find("\n[").unwrap_or(body.len())];
    body.lines().find(|l| l.starts_with(&format!("{key} ="))).unwrap_or_else(|| panic!("no {table}.{key} in\n{toml}"))
}

/// Asserts that `[table]` has `key = value` with a comment naming `source`.
fn assert_written(toml: &str, table: &str, key: &str, value: &str, source: &str) {
    let l = written(toml, table, key);
    let (kv, comment) = l.split_once("  # ").unwrap_or_else(|| panic!("no comment: {l}"));
    assert_eq!(kv.split_once(" = ").unwrap().1.trim(), value, "{l}");
    assert!(comment.contains(source), "{table}.{key}: `{comment}` does not name {source}");
}

#[test]
fn the_example_config_becomes_dcqcn_on_a_star_every_key_named() {
    let (toml, setup) = ok("dcqcn", &config(1, ""));
    for (table, key, value, source) in [
        ("topology", "kind", "\"leaf_spine\"", "one-switch star"),
        ("topology", "hosts_per_tor", "8", "TOPOLOGY_FILE topo.txt"),
        ("topology", "host_link_latency_ns", "1000", "TOPOLOGY_FILE"),
        ("switch", "ecn_kmin_bytes", "400000", "KMIN_MAP 100000000000 400"),
        ("switch", "ecn_kmax_bytes", "1600000", "KMAX_MAP"),
        ("switch", "ecn_pmax", "0.2", "PMAX_MAP"),
        ("switch.pfc", "buffer_bytes", "33554432", "BUFFER_SIZE 32 (MiB"),
        ("switch.pfc", "headroom_bytes", "37500", "3 × rate × delay"),
        ("transport", "mtu_bytes", "1048", "PACKET_PAYLOAD_SIZE 1000 + 48 B"),
        ("transport", "header_bytes", "48", "CustomHeader"),
        ("transport", "ack_every", "1", "L2_ACK_INTERVAL 1"),
        ("transport.reliability", "name", "\"go_back_n\"", "L2_BACK_TO_ZERO 0"),
        ("transport.cc", "name", "\"dcqcn\"", "CC_MODE 1"),
        ("transport.cc", "g", "0.00390625", "EWMA_GAIN"),
        ("transport.cc", "alpha_timer_us", "1", "ALPHA_RESUME_INTERVAL 1"),
        ("transport.cc", "rate_timer_us", "900", "RP_TIMER 900"),
        ("transport.cc", "rate_ai_mbps", "50", "RATE_AI 50Mb/s"),
        ("transport.cc", "rate_hai_mbps", "100", "RATE_HAI 100Mb/s"),
        ("transport.cc", "min_rate_mbps", "100", "MIN_RATE"),
        ("transport.cc", "reaction_point", "\"mellanox\"", "CC_MODE 1"),
        ("transport.cc", "rate_decrease_interval_us", "4", "RATE_DECREASE_INTERVAL 4"),
        ("transport.cc", "window_bdp", "1.048", "payload bytes"),
        ("transport.cc", "bdp_of", "\"network\"", "GLOBAL_T 1"),
        ("transport.cc", "window_scales_with_rate", "true", "VAR_WIN 1"),
        ("workload", "file", "\"flow.txt\"", "FLOW_FILE flow.txt"),
        ("workload", "ns3_topology", "\"topo.txt\"", "TOPOLOGY_FILE topo.txt"),
        ("run", "end_time_us", "4000000", "SIMULATOR_STOP_TIME 4.00"),
    ] {
        assert_written(&toml, table, key, value, source);
    }
    assert!(toml.contains("# Ignored (ns-3 output only): TRACE_FILE trace.txt, TRACE_OUTPUT_FILE mix.tr, FCT_OUTPUT_FILE fct.txt, PFC_OUTPUT_FILE pfc.txt"), "{toml}");
    assert!(toml.contains("# Not read under CC_MODE 1: DCTCP_RATE_AI 1000Mb/s, FAST_REACT 1, U_TARGET 0.95"), "{toml}");
    assert!(toml.contains("# Without effect: USE_DYNAMIC_PFC_THRESHOLD 1"), "{toml}");
    assert_eq!(setup.fabric.hosts, 8);
    // Nodes 2 and 3 to node 1 are hosts 1 and 2 to host 0 (switch 0 comes first).
    let pairs: Vec<(u32, u32)> = setup.traffic.conns.iter().map(|c| (c.src.0, c.dst.0)).collect();
    assert_eq!(pairs, [(1, 0), (2, 0)]);
}

#[test]
fn timely_and_dctcp_take_their_headers_and_constants() {
    let (toml, _) = ok("timely", &config(7, ""));
    assert!(written(&toml, "transport", "mtu_bytes").starts_with("mtu_bytes = 1056"), "{toml}");
    assert!(written(&toml, "transport", "header_bytes").contains("8 B INT timestamp (CC_MODE 7)"), "{toml}");
    assert!(written(&toml, "transport.cc", "name").contains("\"timely\""), "{toml}");
    assert!(written(&toml, "transport.cc", "t_low_us").contains("TimelyTLow"), "{toml}");
    assert!(toml.contains("# Not read under CC_MODE 7:") && toml.contains("RP_TIMER 900"), "{toml}");
    let (toml, _) = ok("dctcp", &config(8, ""));
    assert!(written(&toml, "transport", "mtu_bytes").starts_with("mtu_bytes = 1048"), "{toml}");
    assert!(written(&toml, "transport.cc", "name").contains("\"dctcp\""), "{toml}");
    assert!(written(&toml, "transport.cc", "g").contains("EWMA_GAIN 0.00390625"), "{toml}");
    assert!(toml.contains("# Modelled differently: CC_MODE 8: the simulator's DCTCP adds 1000 Mb/s per RTT"), "{toml}");
}

#[test]
fn a_leaf_spine_keeps_every_flow_between_the_same_hosts() {
    let extra = "TOPOLOGY_FILE ls.txt\nFLOW_FILE lsflow.txt\nGLOBAL_T 0\nKMIN_MAP 2 100000000000 400 400000000000 1600\nKMAX_MAP 2 100000000000 1600 400000000000 6400\nPMAX_MAP 2 100000000000 0.2 400000000000 0.2\nLINK_DOWN 10 9 11";
    let (toml, setup) = ok("leafspine", &config(1, extra));
    for (key, value) in [("tors", "2"), ("hosts_per_tor", "4"), ("spines", "2"), ("link_rate_gbps", "400"), ("host_link_rate_gbps", "100"), ("link_latency_ns", "2000"), ("host_link_latency_ns", "1000")] {
        assert!(written(&toml, "topology", key).starts_with(&format!("{key} = {value} ")), "{key}: {toml}");
    }
    assert!(toml.contains("[[switch.by_link_rate]]\nrate_gbps = 400"), "{toml}");
    assert!(toml.contains("ecn_kmin_bytes = 1600000") && toml.contains("KMIN_MAP 400000000000 1600"), "{toml}");
    // Headroom: 3 × 400 G × 2 µs = 300 kB on the uplinks, the larger.
    assert!(written(&toml, "switch.pfc", "headroom_bytes").starts_with("headroom_bytes = 300000 "), "{toml}");
    // LINK_DOWN 10 9 11: ToR node 9 (hosts 4..=7) and spine node 11, at 2 s + 10 µs.
    assert!(toml.contains("[[link_events]]") && toml.contains("link = \"tor1-spine1\"") && toml.contains("at_us = 2000010"), "{toml}");
    // Node 0 -> node 5 crosses ToRs, node 6 -> node 7 stays on one, as in the simulator.
    let f = &setup.fabric;
    let pairs: Vec<(u32, u32)> = setup.traffic.conns.iter().map(|c| (c.src.0, c.dst.0)).collect();
    assert_eq!(pairs, [(0, 5), (6, 7)]);
    assert_ne!(f.tor_of_host[0], f.tor_of_host[5]);
    assert_eq!(f.tor_of_host[6], f.tor_of_host[7]);
    assert_eq!(f.tor_of_host[4], f.tor_of_host[7]);
    assert_eq!(setup.scenario.link_events.len(), 1);
}

#[test]
fn unknown_keys_bad_values_and_unsupported_modes_are_named() {
    for (extra, key, what) in [
        ("FROBNICATE 3", "FROBNICATE", "unknown key"),
        ("CC_MODE 3\nMULTI_RATE 1", "MULTI_RATE", "allowed 0"),
        ("CC_MODE 3\nSAMPLE_FEEDBACK 1", "SAMPLE_FEEDBACK", "allowed 0"),
        ("CC_MODE 3\nVAR_WIN 0", "VAR_WIN", "R·T"),
        ("CC_MODE 10", "CC_MODE", "HPCC-PINT"),
        ("CC_MODE 5", "CC_MODE", "1 (DCQCN), 3 (HPCC)"),
        ("CC_MODE x", "CC_MODE", "`x` is not a mode number"),
        ("PACKET_PAYLOAD_SIZE 12abc", "PACKET_PAYLOAD_SIZE", "`12abc` is not"),
        ("ENABLE_QCN 2", "ENABLE_QCN", "allowed 0 or 1"),
        ("RATE_AI fast", "RATE_AI", "not an ns-3 rate"),
        ("ERROR_RATE_PER_LINK 0.01", "ERROR_RATE_PER_LINK", "allowed 0"),
        ("RATE_BOUND 0", "RATE_BOUND", "allowed 1"),
        ("L2_BACK_TO_ZERO 1", "L2_BACK_TO_ZERO", "allowed 0"),
        ("L2_ACK_INTERVAL 0", "L2_ACK_INTERVAL", "no flow completes"),
        ("PAUSE_TIME 0", "PAUSE_TIME", "never pause"),
        ("BUFFER_SIZE 5000", "BUFFER_SIZE", "1..=4095 MiB"),
        ("KMIN_MAP 1 25000000000 100", "KMIN_MAP", "no entry for 100000000000"),
        ("KMAX_MAP 2 100000000000", "KMAX_MAP", "needs 5 values"),
        ("LINK_DOWN 5 1 x", "LINK_DOWN", "not a whole number"),
        ("LINK_DOWN 5 1 99", "LINK_DOWN", "not nodes"),
        ("TOPOLOGY_FILE nope.txt", "TOPOLOGY_FILE", "cannot read"),
        ("FLOW_FILE nope.txt", "FLOW_FILE", "cannot read"),
        ("CC_MODE 8\nHAS_WIN 0", "HAS_WIN", "fabricsim's dctcp is a window"),
    ] {
        let e = refused(&config(1, extra));
        assert_eq!(e.key, key, "{extra}: {e}");
        assert!(e.message.contains(what), "{extra}: {e}");
    }
    // Absent keys whose simulator default is broken.
    for (drop, key, what) in [("EWMA_GAIN", "EWMA_GAIN", "integer arithmetic"), ("RP_TIMER", "RP_TIMER", "fires without end"), ("RATE_AI", "RATE_AI", "empty rate"), ("L2_ACK_INTERVAL", "L2_ACK_INTERVAL", "default 0"), ("TOPOLOGY_FILE", "TOPOLOGY_FILE", "missing")] {
        let cfg: String = config(1, "").lines().filter(|l| !l.starts_with(&format!("{drop} "))).map(|l| format!("{l}\n")).collect();
        let e = refused(&cfg);
        assert_eq!(e.key, key, "without {drop}: {e}");
        assert!(e.message.contains(what), "without {drop}: {e}");
    }
}

#[test]
fn topologies_fabricsim_cannot_build_are_refused_naming_the_topology_file() {
    let three_tier = "7 3 6\n4 5 6\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 6 100Gbps 1us 0\n5 6 100Gbps 1us 0\n";
    for (topo, what) in [
        ("3 0 1\n\n0 1 100Gbps 1us 0\n", "linked to each other"),
        ("5 1 3\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n", "host 4 has no link"),
        ("5 1 4\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n0 4 25Gbps 1us 0\n", "host links differ"),
        ("3 1 2\n0\n0 1 100Gbps 1us 0.01\n0 2 100Gbps 1us 0\n", "error rate"),
        ("3 1 2\n0\n0 1 100Gbps 1parsec 0\n0 2 100Gbps 1us 0\n", "not an ns-3 time"),
        ("3 1 3\n0\n0 1 100Gbps 1us 0\n", "ends before"),
        // Hosts of ToR 4 are nodes 0 and 2: not numbered ToR by ToR.
        ("7 3 6\n4 5 6\n0 4 100Gbps 1us 0\n2 4 100Gbps 1us 0\n1 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 6 100Gbps 1us 0\n5 6 100Gbps 1us 0\n", "not numbered ToR by ToR"),
        // ToRs 4 and 5 under an aggregation switch 6 under a core 7: three tiers.
        (&format!("{}", three_tier.replacen("7 3 6\n4 5 6", "8 4 7\n4 5 6 7", 1) + "6 7 100Gbps 1us 0\n"), "both spines"),
        ("7 3 5\n4 5 6\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 6 100Gbps 1us 0\n", "every ToR must link to every spine"),
        ("6 2 4\n4 5\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 4 100Gbps 1us 0\n3 5 100Gbps 1us 0\n", "[3, 1] hosts"),
    ] {
        let d = dir(&format!("topo{}", what.len()));
        std::fs::write(d.join("bad.txt"), topo).unwrap();
        let e = translate("config.txt", &config(1, "TOPOLOGY_FILE bad.txt"), &Context { cwd: d, out_dir: None }).expect_err(topo);
        assert_eq!(e.key, "TOPOLOGY_FILE", "{topo}: {e}");
        assert!(e.message.contains(what), "{topo}: {e}");
    }
    // GLOBAL_T 1 with a window needs every pair's BDP alike under DCTCP (no `bdp_of`): not so
    // across ToRs.
    let e = refused(&config(8, "TOPOLOGY_FILE ls.txt\nFLOW_FILE lsflow.txt\nKMIN_MAP 1 100000000000 400\nKMAX_MAP 1 100000000000 1600\nPMAX_MAP 1 100000000000 0.2"));
    assert_eq!(e.key, "GLOBAL_T", "{e}");
}

#[test]
fn configs_whose_scenario_check_would_refuse_are_refused_naming_the_key() {
    for (extra, key, what) in [
        ("SIMULATOR_STOP_TIME 5000", "SIMULATOR_STOP_TIME", "run.end_time_us"),
        ("MIN_RATE 500Kbps", "MIN_RATE", "transport.cc.min_rate_mbps"),
        ("EWMA_GAIN 0", "EWMA_GAIN", "transport.cc.g"),
        ("KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 2000", "KMIN_MAP", "ecn_kmin"),
    ] {
        let e = refused(&config(1, extra));
        assert_eq!(e.key, key, "{extra}: {e}");
        assert!(e.message.contains("refused by `fabricsim check`") && e.message.contains(what), "{extra}: {e}");
    }
    // A flow file the workload refuses is traced to FLOW_FILE.
    let d = dir("badflow");
    std::fs::write(d.join("flow.txt"), "1\n0 1 3 100 1000 0\n").unwrap();
    let e = translate("config.txt", &config(1, ""), &Context { cwd: d, out_dir: None }).unwrap_err();
    assert_eq!(e.key, "FLOW_FILE", "{e}");
    assert!(e.message.contains("switch"), "{e}");
}

#[test]
fn file_names_are_made_relative_to_the_output_folder() {
    let d = dir("relative");
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let toml = translate("config.txt", &config(1, ""), &Context { cwd: d.clone(), out_dir: Some(out.canonicalize().unwrap()) }).unwrap();
    assert!(toml.contains("file = \"../flow.txt\"") && toml.contains("ns3_topology = \"../topo.txt\""), "{toml}");
    Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(&out)).unwrap();
}

#[test]
fn hpcc_takes_its_int_headers_and_constants() {
    let (toml, setup) = ok("hpcc", &config(3, ""));
    for (table, key, value, source) in [
        ("transport", "mtu_bytes", "1090", "PACKET_PAYLOAD_SIZE 1000 + 90 B"),
        ("transport", "header_bytes", "90", "42 B INT"),
        ("transport", "ack_bytes", "88", "INT 42"),
        ("transport.cc", "name", "\"hpcc\"", "CC_MODE 3"),
        ("transport.cc", "eta", "0.95", "U_TARGET 0.95"),
        ("transport.cc", "max_stage", "0", "MI_THRESH 0"),
        ("transport.cc", "rate_ai_mbps", "50", "RATE_AI 50Mb/s"),
        ("transport.cc", "min_rate_mbps", "100", "MIN_RATE 100Mb/s"),
        ("transport.cc", "fast_react", "true", "FAST_REACT 1"),
        ("transport.cc", "base_rtt_of", "\"network\"", "GLOBAL_T 1"),
    ] {
        assert_written(&toml, table, key, value, source);
    }
    assert!(setup.scenario.transport.cc.carries_telemetry());
    // DCQCN's keys mean nothing to HPCC: listed, not translated.
    assert!(toml.contains("RP_TIMER") && !toml.contains("rate_timer_us"), "{toml}");
}
