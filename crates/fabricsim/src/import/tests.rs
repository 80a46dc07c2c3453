//! `from-htsim` on crafted command lines, one test per flag group: each translated scenario
//! must also load and set up (what `fabricsim check` does), and each refusal name its flag.

use crate::units::{Bytes, Time};
use super::htsim::{split_command_line, translate, Context, FlagError};
use crate::scenario::{Scenario, Setup};
use std::path::PathBuf;

/// A folder with a 128-host matrix (`m.cm`: 8 flows into host 0), a 1024-host one (`big.cm`)
/// and two `.topo` files; unique per test so that tests run in parallel.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-import-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let flows: String = (120..128).enumerate().map(|(i, h)| format!("{h}->0 id {} start 0 size 4194304\n", i + 1)).collect();
    std::fs::write(d.join("m.cm"), format!("Nodes 128\nConnections 8\n{flows}")).unwrap();
    std::fs::write(d.join("big.cm"), "Nodes 1024\nConnections 1\n0->1023 id 1 start 0 size 65536\n").unwrap();
    // A 4:1 oversubscribed 3-tier fabric of 128 hosts at 200 G: 8 pods of 16 hosts, 4 ToRs of
    // 4 hosts and 1 uplink, 1 agg per pod with 4 uplinks, 4 cores of 8 ports.
    std::fs::write(
        d.join("os.topo"),
        "# test\nNodes 128\nTiers 3\nPodsize 16\n\nTier 0\nOversubscribed 4\nDownlink_speed_Gbps 200\nRadix_Down 4\nRadix_Up 1\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\n\
         Tier 1\nDownlink_speed_Gbps 200\nRadix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\nTier 2\nDownlink_speed_Gbps 200\nRadix_Down 8\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n",
    )
    .unwrap();
    std::fs::write(d.join("ls.topo"), "Nodes 128\nTiers 2\nPodsize 128\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\nRadix_Up 8\nDownlink_Latency_ns 500\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 32\nDownlink_Latency_ns 800\nBundle 2\n").unwrap();
    d
}

fn ok(test: &str, line: &str) -> (String, Setup) {
    let d = dir(test);
    let argv = split_command_line(line).unwrap();
    let toml = translate(&argv, &Context { cwd: d.clone(), out_dir: None }).unwrap_or_else(|e| panic!("{line}: {e}"));
    let setup = Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(&d)).unwrap_or_else(|e| panic!("{line}: {e}\n{toml}"));
    (toml, setup)
}

fn refused(line: &str) -> FlagError {
    // Tests run in parallel: each refusal gets a folder of its own.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let d = dir(&format!("refused{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let argv = split_command_line(line).unwrap();
    translate(&argv, &Context { cwd: d, out_dir: None }).expect_err(line)
}

/// The value of `key` in `[table]` of a translated scenario, as written.
fn value(toml: &str, table: &str, key: &str) -> String {
    let t: toml::Table = toml.parse().unwrap();
    let mut v = toml::Value::Table(t);
    for part in table.split('.').filter(|p| !p.is_empty()) {
        v = v.get(part).unwrap_or_else(|| panic!("no [{table}] in\n{toml}")).clone();
    }
    v.get(key).unwrap_or_else(|| panic!("no {table}.{key} in\n{toml}")).to_string()
}

#[test]
fn splits_command_lines_like_a_shell() {
    assert_eq!(split_command_line(" a  'b c' \"d \\\"e\\\"\" f\\ g ").unwrap(), ["a", "b c", "d \"e\"", "f g"]);
    assert_eq!(split_command_line("''").unwrap(), [""]);
    assert!(split_command_line("a 'b").unwrap_err().message.contains("single quote"));
    assert!(split_command_line("a \"b").unwrap_err().message.contains("double quote"));
}

#[test]
fn the_binary_picks_the_flavour_and_unknown_flags_are_named() {
    let e = refused("htsim_tcp -tm m.cm");
    assert_eq!(e.flag, "htsim_tcp");
    assert!(e.message.contains("htsim_uec or htsim_eqds"), "{e}");
    let e = refused("/opt/htsim/htsim_uec -tm m.cm -bogus 3");
    assert_eq!(e.flag, "-bogus");
    assert!(e.message.contains("unknown htsim_uec flag") && e.message.contains("-load_balancing_algo"), "{e}");
    // A flag of the other binary is unknown here.
    assert_eq!(refused("htsim_eqds -tm m.cm -receiver_cc_only").flag, "-receiver_cc_only");
    assert_eq!(refused("htsim_uec -tm m.cm -use_reps 1").flag, "-use_reps");
    // Unsupported flags say why.
    for (line, flag, why) in [
        ("htsim_uec -tm m.cm -sleek", "-sleek", "SLEEK"),
        ("htsim_uec -tm m.cm -conn_reuse", "-conn_reuse", "connection reuse"),
        ("htsim_uec -tm m.cm -strat ecmp_ar", "-strat", "only ecmp_host"),
        ("htsim_uec -tm m.cm -planes 2", "-planes", "multi-plane"),
        ("htsim_uec -tm m.cm -trimsize 96", "-trimsize", "allowed 64"),
        ("htsim_uec -tm m.cm -oversubscribed_cc", "-oversubscribed_cc", "OversubscribedCC"),
        ("htsim_eqds -tm m.cm -use_exp_avg_rtt 1", "-use_exp_avg_rtt", "does not consume"),
    ] {
        let e = refused(line);
        assert_eq!(e.flag, flag, "{line}");
        assert!(e.message.contains("not supported") && e.message.contains(why), "{line}: {e}");
    }
    // Logging flags are accepted and listed as ignored.
    let (toml, _) = ok("ignored", "htsim_uec -tm m.cm -o log.dat -log sink -logtime 0.1 -debug");
    assert!(toml.contains("# Ignored (htsim logging only): -o log.dat, -log sink, -logtime 0.1, -debug"), "{toml}");
}

#[test]
fn malformed_or_missing_values_are_named() {
    for (line, flag, what) in [
        ("htsim_uec -tm m.cm -q 12abc", "-q", "`12abc` is not a queue size"),
        ("htsim_uec -tm m.cm -linkspeed fast", "-linkspeed", "not a rate"),
        ("htsim_uec -tm m.cm -paths 48", "-paths", "power of two"),
        ("htsim_uec -tm m.cm -tiers 4", "-tiers", "allowed 2"),
        ("htsim_uec -tm m.cm -ecn 20", "-ecn", "needs 2 values"),
        ("htsim_uec -tm m.cm -ecn 80 20", "-ecn", "must not exceed"),
        ("htsim_uec -tm m.cm -sender_cc_algo cubic", "-sender_cc_algo", "allowed nscc, dctcp, constant"),
        ("htsim_uec -tm m.cm -load_balancing_algo ecmp", "-load_balancing_algo", "allowed mixed, bitmap"),
        ("htsim_uec -tm m.cm -qa_gate 99", "-qa_gate", "allowed -1"),
        ("htsim_uec -tm m.cm -seed -3", "-seed", "not a non-negative"),
        ("htsim_uec -tm", "-tm", "needs 1 value"),
        ("htsim_uec -nodes 128", "-tm", "standard input"),
        ("htsim_uec -tm nope.cm", "-tm", "cannot read"),
        ("htsim_uec -tm m.cm -nodes 64", "-nodes", "128 nodes"),
        ("htsim_uec -tm big.cm -tiers 2", "-tm", "k²/2 hosts"),
        ("htsim_uec -tm m.cm -q 10", "-ecn", "exceeds the queue"),
        ("htsim_uec -tm m.cm -q 2000000", "-q", "at most 1048576 packets"),
        ("htsim_uec -tm m.cm -hop_latency 100000", "-hop_latency", "at most 1048576 packets"),
        ("htsim_uec -tm m.cm -switch_latency 1e7", "-switch_latency", "allowed 0..=10^6"),
        ("htsim_uec -tm m.cm -mtu 65", "-sack_threshold", "htsim's default"),
        ("htsim_uec -tm m.cm -sack_threshold 300000", "-sack_threshold", "at most 64 × 4150"),
        ("htsim_uec -tm m.cm -linkspeed 400000 -cwnd 1000000", "-cwnd", "allowed 0.001..=1000 BDPs"),
        ("htsim_eqds -tm m.cm -cwnd 0", "-cwnd", "no packet"),
    ] {
        let e = refused(line);
        assert_eq!(e.flag, flag, "{line}: {e}");
        assert!(e.message.contains(what), "{line}: {e}");
    }
}

#[test]
fn fabric_flags_and_htsim_defaults() {
    // htsim's defaults: 3 tiers, 100 Gb/s (HOST_NIC), 1 µs links, no switch latency, 4150 B.
    let (toml, s) = ok("fabric0", "htsim_uec -tm m.cm");
    assert_eq!(value(&toml, "topology", "link_rate_gbps"), "100");
    assert_eq!(value(&toml, "transport", "mtu_bytes"), "4150");
    assert_eq!(value(&toml, "run", "end_time_us"), "1000");
    assert_eq!(value(&toml, "", "seed"), "13");
    assert_eq!(s.fabric.hosts, 128);
    // htsim's network RTT at 100 G: 12 µs + 6 × (332 + 5.12) ns = 14.02272 µs, fabricsim's too.
    assert!(toml.contains("htsim's network RTT: 14.022720 µs"), "{toml}");
    assert_eq!(s.base_rtt, Time(14_022_720));
    let (toml, s) = ok("fabric1", "htsim_uec -tm m.cm -linkspeed 400000 -hop_latency 0.5 -switch_latency 0.1 -mtu 4096 -seed 7 -end 500");
    assert_eq!(value(&toml, "topology", "link_latency_ns"), "500");
    assert_eq!(value(&toml, "topology", "switch_latency_ns"), "100");
    assert_eq!(value(&toml, "", "seed"), "7");
    assert_eq!(value(&toml, "run", "end_time_us"), "500");
    // -end 0 is htsim's "no end"; -cwnd 0 its default window.
    let (toml0, s0) = ok("fabric-end0", "htsim_uec -tm m.cm -end 0 -cwnd 0");
    assert!(!toml0.contains("end_time_us ="), "{toml0}");
    assert!(s0.scenario.run.end_time_us.is_none());
    assert_eq!(value(&toml0, "transport.cc", "initial_window_bdp"), "1.5");
    // 2 × (6 × 0.5 + 5 × 0.1) µs + 6 × (81.92 + 1.28) ns = 7.4992 µs.
    assert_eq!(s.base_rtt, Time(7_499_200));
    // 2 tiers: htsim's leaf-spine of radix 16 for 128 hosts.
    let (toml, s) = ok("fabric2", "htsim_uec -tm m.cm -tiers 2 -linkspeed 400000");
    assert_eq!(value(&toml, "topology", "kind"), "\"leaf_spine\"");
    assert!(s.fabric.description.contains("K=16"), "{}", s.fabric.description);
}

#[test]
fn topo_files_become_explicit_shapes() {
    let (toml, s) = ok("topo3", "htsim_uec -tm m.cm -topo os.topo -linkspeed 200000");
    assert_eq!(value(&toml, "topology", "pods"), "8");
    assert_eq!(value(&toml, "topology", "aggs_per_pod"), "1");
    assert_eq!(value(&toml, "topology", "cores"), "4");
    assert_eq!(s.fabric.hosts, 128);
    let (toml, s) = ok("topo2", "htsim_uec -tm m.cm -topo ls.topo -linkspeed 100000");
    assert_eq!(value(&toml, "topology", "spines"), "4");
    assert_eq!(value(&toml, "topology", "links_per_spine"), "2");
    // 2 × (2 × 0.5 + 2 × 0.8) µs + 4 × (332 + 5.12) ns.
    assert_eq!(s.base_rtt, Time(6_548_480));
    // The NICs run at -linkspeed in htsim: a .topo host tier at another rate is refused.
    let e = refused("htsim_uec -tm m.cm -topo os.topo");
    assert!(e.flag == "-topo" && e.message.contains("-linkspeed 200000"), "{e}");
    // Receiver-only CC on an oversubscribed fabric would run htsim's oversubscription controller.
    let e = refused("htsim_uec -tm m.cm -topo os.topo -linkspeed 200000 -receiver_cc_only");
    assert!(e.message.contains("-force_disable_oversubscribed_cc"), "{e}");
    ok("topo4", "htsim_uec -tm m.cm -topo os.topo -linkspeed 200000 -receiver_cc_only -force_disable_oversubscribed_cc");
}

#[test]
fn queue_and_ecn_flags() {
    // Trimming: 1 BDP = ceil(12.50568 µs × 50 GB/s / 4150 B) = 151 packets; ECN from 31 to 121.
    let (toml, s) = ok("queue0", "htsim_uec -tm m.cm -linkspeed 400000");
    assert_eq!(value(&toml, "switch", "buffer_pkts"), "151");
    assert_eq!(value(&toml, "switch", "ecn_kmin_bytes"), (31 * 4150).to_string());
    assert_eq!(value(&toml, "switch", "ecn_kmax_bytes"), (121 * 4150).to_string());
    assert_eq!(s.qdisc.profiles[0].kmax_bytes, Bytes(121 * 4150));
    // Without trimming 5 BDP, ECN still at 20 / 80 % of one BDP; the NSCC target is 1 RTT.
    let (toml, _) = ok("queue1", "htsim_uec -tm m.cm -linkspeed 400000 -disable_trim");
    assert_eq!(value(&toml, "switch", "buffer_pkts"), "755");
    assert_eq!(value(&toml, "switch", "trimming"), "false");
    assert_eq!(value(&toml, "transport.cc", "target_qdelay_rtt"), "1.0");
    let (toml, _) = ok("queue2", "htsim_uec -tm m.cm -linkspeed 400000 -queue_size_bdp_factor 2 -ecn 10 20");
    assert_eq!(value(&toml, "switch", "buffer_pkts"), "302");
    assert_eq!(value(&toml, "switch", "ecn_kmin_bytes"), "41500");
    // -q wins; the RTO is 15 µs + 6 drains of the queue: 15 + 6 × 50 × 4150 × 8 / 400e3 µs.
    let (toml, _) = ok("queue3", "htsim_uec -tm m.cm -linkspeed 400000 -q 50 -ecn 5 40");
    assert_eq!(value(&toml, "switch", "buffer_pkts"), "50");
    assert_eq!(value(&toml, "transport", "rto_us"), "39.9");
    // htsim_eqds: 35 packets, no ECN unless asked, and then not on ToR downlinks.
    let (toml, _) = ok("queue4", "htsim_eqds -tm m.cm");
    assert_eq!(value(&toml, "switch", "buffer_pkts"), "35");
    assert_eq!(value(&toml, "switch", "ecn"), "false");
    let (toml, s) = ok("queue5", "htsim_eqds -tm m.cm -ecn 7 28");
    assert_eq!(value(&toml, "switch.ports.tor_down", "ecn"), "false");
    assert!(s.qdisc.profiles.iter().any(|p| !p.ecn) && s.qdisc.profiles.iter().any(|p| p.ecn));
}

#[test]
fn congestion_control_and_credit_flags() {
    let (toml, _) = ok("cc0", "htsim_uec -tm m.cm");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"nscc\"");
    assert!(!toml.contains("[transport.credit]"));
    assert_eq!(value(&toml, "transport", "ack_coalesce_bytes"), "16384");
    let (toml, s) = ok("cc1", "htsim_uec -tm m.cm -receiver_cc_only");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"line_rate\"");
    assert_eq!(value(&toml, "transport.credit", "name"), "\"rccc\"");
    // RCCC leaves ToR downlinks unmarked.
    assert_eq!(value(&toml, "switch.ports.tor_down", "ecn"), "false");
    assert_eq!(s.scenario.transport.credit.name(), "rccc");
    let (toml, _) = ok("cc2", "htsim_uec -tm m.cm -receiver_cc_only -sender_cc -target_q_delay 6 -qa_gate 2 -sack_threshold 4096 -enable_accurate_base_rtt");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"nscc\"");
    assert_eq!(value(&toml, "transport.credit", "name"), "\"rccc\"");
    assert_eq!(value(&toml, "transport.cc", "target_qdelay_us"), "6");
    assert_eq!(value(&toml, "transport.cc", "qa_gate"), "2");
    assert_eq!(value(&toml, "transport.cc", "base_rtt"), "\"path\"");
    assert_eq!(value(&toml, "transport", "ack_coalesce_bytes"), "4096");
    // -cwnd 50 at 400 G: 50 × 4150 B over a BDP of 12.50568 µs × 50 GB/s = 625 284 B.
    let (toml, _) = ok("cc3", "htsim_uec -tm m.cm -linkspeed 400000 -cwnd 50");
    assert_eq!(value(&toml, "transport.cc", "initial_window_bdp"), "0.331849");
    let (toml, _) = ok("cc4", "htsim_uec -tm m.cm -sender_cc_algo constant -cwnd 10");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"fixed\"");
    assert_eq!(value(&toml, "transport.cc", "window_bytes"), "41500");
    let (toml, _) = ok("cc5", "htsim_uec -tm m.cm -sender_cc_algo dctcp");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"dctcp\"");
    // htsim_eqds: EQDS credits with a 64-packet unsolicited window, or SMaRTT at the sender.
    let (toml, _) = ok("cc6", "htsim_eqds -tm m.cm -cwnd 32");
    assert_eq!(value(&toml, "transport.credit", "name"), "\"eqds\"");
    assert_eq!(value(&toml, "transport.credit", "unsolicited_bytes"), (32 * 4150).to_string());
    let (toml, _) = ok("cc7", "htsim_eqds -tm m.cm -sender_cc_only -use_exp_avg_ecn 1");
    assert_eq!(value(&toml, "transport.cc", "name"), "\"smartt\"");
    // eqds.cpp's window cap: 64 packets of 4150 B, whatever the path.
    assert_eq!(value(&toml, "transport.cc", "max_window_bytes"), "265600");
    assert_eq!(value(&toml, "transport.cc", "md"), "1.0");
    assert_eq!(value(&toml, "transport.cc", "wtd"), "true");
    assert_eq!(value(&toml, "transport", "ack_coalesce_bytes"), "4000");
    assert!(!toml.contains("[transport.credit]"));
}

#[test]
fn load_balancing_flags() {
    for (algo, name) in [("mixed", "mixed"), ("bitmap", "bitmap"), ("reps", "reps"), ("reps_legacy", "reps"), ("oblivious", "spray")] {
        let (toml, s) = ok(&format!("lb-{algo}"), &format!("htsim_uec -tm m.cm -load_balancing_algo {algo} -paths 128"));
        assert_eq!(value(&toml, "transport.lb", "name"), format!("\"{name}\""), "{algo}");
        assert_eq!(value(&toml, "transport.lb", "entropies"), "128", "{algo}");
        assert_eq!(s.scenario.transport.lb.name(), name);
    }
    let (toml, _) = ok("lb-eqds", "htsim_eqds -tm m.cm");
    assert_eq!(value(&toml, "transport.lb", "max_penalty"), "1");
    let (toml, _) = ok("lb-eqds-reps", "htsim_eqds -tm m.cm -use_reps 1");
    // eqds.cpp's REPS ends up on one entropy per flow (its _next_pathid is never set).
    assert_eq!(value(&toml, "transport.lb", "name"), "\"ecmp\"");
}

#[test]
fn failed_links_are_named_as_htsim_picks_them() {
    // 3 tiers, k = 8: the first 5 agg–core cables by global index, core→agg slowed: agg0's 4
    // uplinks (cores 0..3 in fabricsim's wiring) and agg1's first (agg1 is pod position 1:
    // cores 4..7).
    let (toml, s) = ok("failed3", "htsim_uec -tm m.cm -failed 5");
    assert_eq!(value(&toml, "topology.failures", "links"), r#"["agg0-core0", "agg0-core1", "agg0-core2", "agg0-core3", "agg1-core4"]"#);
    assert_eq!(value(&toml, "topology.failures", "direction"), "\"down\"");
    assert_eq!(s.fabric.failures.len(), 5);
    // 2 tiers: every ToR's links to the first N spines, both ways.
    let (toml, s) = ok("failed2", "htsim_uec -tm m.cm -tiers 2 -failed 1");
    assert_eq!(value(&toml, "topology.failures", "direction"), "\"both\"");
    assert_eq!(s.fabric.failures.len(), 16);
    assert_eq!(refused("htsim_uec -tm m.cm -tiers 2 -failed 9").flag, "-failed");
}

#[test]
fn file_names_are_made_relative_to_the_output_folder() {
    let d = dir("relative");
    let out = d.join("sub/deeper");
    std::fs::create_dir_all(&out).unwrap();
    let argv = split_command_line("htsim_uec -tm m.cm").unwrap();
    let toml = translate(&argv, &Context { cwd: d.clone(), out_dir: Some(out.canonicalize().unwrap()) }).unwrap();
    assert_eq!(value(&toml, "workload", "file"), "\"../../m.cm\"");
    let setup = Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(&out));
    assert!(setup.is_ok(), "{:?}", setup.err());
}

#[test]
fn command_lines_whose_scenario_check_would_refuse_are_refused_naming_the_flag() {
    // Each translated to a scenario `fabricsim check` refused (issue 49): a quarter of a
    // 1 Mb/s link is below fabricsim's slowest rate; run and target-delay limits.
    for (line, flag, allowed) in [
        ("htsim_uec -tm m.cm -failed 8 -linkspeed 1 -q 35", "-failed", "allowed -linkspeed 4..=10^9 Mb/s"),
        ("htsim_uec -tm m.cm -end 4294967295", "-end", "up to 10^9 µs"),
        ("htsim_uec -tm m.cm -target_q_delay 100000000", "-target_q_delay", "allowed 0.001..=10^6 µs"),
        ("htsim_uec -tm m.cm -target_q_delay 0.0000001", "-target_q_delay", "allowed 0.001..=10^6 µs"),
    ] {
        let e = refused(line);
        assert!(e.flag == flag && e.message.contains(allowed), "{line}: {e}");
    }
    // What no flag check catches is caught by check's own validation, run on the result and
    // traced back to the flag through the refused key's comment.
    let e = refused("htsim_eqds -tm m.cm -cwnd 4000000000");
    assert_eq!(e.flag, "-cwnd", "{e}");
    assert!(e.message.contains("refused by `fabricsim check`") && e.message.contains("transport.credit.unsolicited_bytes") && e.message.contains("allowed 1..="), "{e}");
    // The edges still translate.
    ok("failed_edge", "htsim_uec -tm m.cm -failed 8 -linkspeed 4");
    ok("end_edge", "htsim_uec -tm m.cm -end 1000000000");
}
