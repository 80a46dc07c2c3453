//! `fabricsim from-ns3` as a user runs it: a config, topology and flow file shaped like the HPCC
//! ns-3 simulator's example (written here, not copied: a 65-host star at 100 Gb/s with 1 µs
//! links, two 2 MB flows into one host) translates to a scenario `check` accepts and `run`
//! runs from where it was written; bad inputs exit 2 naming the config key and write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

/// A folder laid out as the simulator's `simulation/`: `mix/config.txt`, `mix/topology.txt`,
/// `mix/flow.txt`, the config naming the files relative to the folder itself.
fn sim_dir(name: &str, cc_mode: u32) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-from-ns3-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("mix")).unwrap();
    let links: String = (1..=65).map(|h| format!("0 {h} 100Gbps 0.001ms 0\n")).collect();
    std::fs::write(d.join("mix/topology.txt"), format!("66 1 65\n0\n{links}")).unwrap();
    std::fs::write(d.join("mix/flow.txt"), "2\n2 1 3 100 2000000 2\n3 1 3 100 2000000 2\n").unwrap();
    std::fs::write(
        d.join("mix/config.txt"),
        format!(
            "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\n\nPACKET_PAYLOAD_SIZE 1000\n\nTOPOLOGY_FILE mix/topology.txt\nFLOW_FILE mix/flow.txt\nTRACE_FILE mix/trace.txt\n\
             TRACE_OUTPUT_FILE mix/mix.tr\nFCT_OUTPUT_FILE mix/fct.txt\nPFC_OUTPUT_FILE mix/pfc.txt\n\nSIMULATOR_STOP_TIME 4.00\n\nCC_MODE {cc_mode}\n\
             ALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 900\nEWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 50Mb/s\n\
             RATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\nDCTCP_RATE_AI 1000Mb/s\n\nERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\n\
             HAS_WIN 1\nGLOBAL_T 1\nVAR_WIN 1\nFAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nMULTI_RATE 0\nSAMPLE_FEEDBACK 0\nPINT_LOG_BASE 1.05\nPINT_PROB 1.0\n\n\
             RATE_BOUND 1\n\nACK_HIGH_PRIO 0\n\nLINK_DOWN 0 0 0\n\nENABLE_TRACE 1\n\n\
             KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600\nKMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400\n\
             PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2\nBUFFER_SIZE 32\nQLEN_MON_FILE mix/qlen.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 2010000000\n"
        ),
    )
    .unwrap();
    d
}

fn from_ns3(dir: &Path, args: &[&str]) -> Output {
    bin().arg("from-ns3").args(args).current_dir(dir).output().unwrap()
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn the_example_translates_checks_and_runs_from_where_it_is_written() {
    for (mode, cc, mtu) in [(1, "dcqcn", 1048), (3, "hpcc", 1090), (7, "timely", 1056), (8, "dctcp", 1048)] {
        let d = sim_dir(&format!("example{mode}"), mode);
        // Run from simulation/, written elsewhere: the file names follow the scenario.
        std::fs::create_dir_all(d.join("scenarios")).unwrap();
        let o = from_ns3(&d, &["mix/config.txt", "-o", "scenarios/example.toml"]);
        assert!(o.status.success(), "CC_MODE {mode}: {}", String::from_utf8_lossy(&o.stderr));
        let file = d.join("scenarios/example.toml");
        let toml = std::fs::read_to_string(&file).unwrap();
        assert!(toml.contains("file = \"../mix/flow.txt\"") && toml.contains("ns3_topology = \"../mix/topology.txt\""), "{toml}");
        assert!(toml.contains(&format!("name = \"{cc}\"")) && toml.contains(&format!("mtu_bytes = {mtu} ")), "{toml}");
        let o = bin().arg("check").arg(&file).output().unwrap();
        assert!(o.status.success(), "CC_MODE {mode}: {}", String::from_utf8_lossy(&o.stderr));
        let out = d.join("out");
        let o = bin().args(["run", "--quiet"]).arg(&file).arg("--out").arg(&out).current_dir(std::env::temp_dir()).output().unwrap();
        assert!(o.status.success(), "CC_MODE {mode}: {}", String::from_utf8_lossy(&o.stderr));
        let s = summary(&out);
        assert_eq!(s["hosts"], 65, "{s}");
        assert_eq!(s["flows_finished"], 2, "{s}");
        // Two 2 MB flows sharing host 0's 100 G link: 4000 packets of mtu bytes at line rate
        // (HPCC: at U_TARGET 0.95 of it), a few µs of RTT on top.
        let fct = s["fct_us"]["max"].as_f64().unwrap();
        let wire_us = 4000.0 * mtu as f64 * 8.0 / 100e3 / if mode == 3 { 0.95 } else { 1.0 };
        assert!(fct >= wire_us && fct < wire_us * 1.05, "CC_MODE {mode}: {fct} µs, the wire alone {wire_us} µs");
        // Nodes 2 and 3 send to node 1: hosts 1 and 2 to host 0.
        let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
        let pairs: Vec<(String, String)> = flows.lines().skip(1).map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[2].to_string())
        }).collect();
        assert_eq!(pairs, [("1".to_string(), "0".to_string()), ("2".to_string(), "0".to_string())]);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn sim_dir_resolves_the_config_s_files_and_the_printed_scenario_names_them_as_given() {
    let d = sim_dir("simdir", 1);
    let elsewhere = d.join("mix");
    let o = bin().args(["from-ns3", "config.txt", "--sim-dir", ".."]).current_dir(&elsewhere).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("file = \"mix/flow.txt\"") && out.contains("[transport.cc]"), "{out}");
    // Without it, mix/topology.txt is looked for below mix/.
    let o = bin().args(["from-ns3", "config.txt"]).current_dir(&elsewhere).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(2) && err.contains("`TOPOLOGY_FILE`") && err.contains("cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_inputs_exit_2_naming_the_key_and_write_nothing() {
    let d = sim_dir("bad", 1);
    let config = std::fs::read_to_string(d.join("mix/config.txt")).unwrap();
    // A 3-tier topology: two ToRs under one aggregation switch under a core.
    std::fs::write(d.join("mix/tiers.txt"), "8 4 7\n4 5 6 7\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 6 100Gbps 1us 0\n5 6 100Gbps 1us 0\n6 7 100Gbps 1us 0\n").unwrap();
    for (edit, key, what) in [
        (("", "FROBNICATE 1\n"), "`FROBNICATE`", "unknown key"),
        (("RP_TIMER 900", "RP_TIMER 9o0"), "`RP_TIMER`", "`9o0` is not"),
        (("CC_MODE 1", "CC_MODE 10"), "`CC_MODE`", "HPCC-PINT"),
        (("mix/flow.txt", "mix/nope.txt"), "`FLOW_FILE`", "cannot read"),
        (("mix/topology.txt", "mix/tiers.txt"), "`TOPOLOGY_FILE`", "3-tier"),
        (("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 5000"), "`SIMULATOR_STOP_TIME`", "refused by `fabricsim check`"),
    ] {
        let text = if edit.0.is_empty() { format!("{config}{}", edit.1) } else { config.replacen(edit.0, edit.1, 1) };
        std::fs::write(d.join("mix/bad.txt"), text).unwrap();
        let o = from_ns3(&d, &["mix/bad.txt", "-o", "s.toml"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(key) && err.contains(what), "{edit:?}: {err}");
        assert!(!d.join("s.toml").exists(), "{edit:?}: a refused translation wrote its scenario");
    }
    for (args, what) in [(&["mix/missing.txt"][..], "cannot read"), (&[][..], "missing the config"), (&["mix/config.txt", "-o"][..], "-o"), (&["mix/config.txt", "--sim-dir", "nowhere"][..], "--sim-dir")] {
        let o = from_ns3(&d, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(what), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A folder laid out as ConWeave's simulator's (conweave-project/conweave-ns3): `config/` with
/// a 2-tier leaf-spine (2 ToRs × 2 hosts, 2 spines, 100 Gb/s, 1000 ns as its files spell it)
/// and a flow file without DPORT; the config is shaped like the one its `run.py` writes for
/// DCQCN (written here, not copied), with `LB_MODE` `lb`.
fn conweave_dir(name: &str, lb: u32) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-from-conweave-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("config")).unwrap();
    std::fs::create_dir_all(d.join("mix/output/1")).unwrap();
    let mut links: Vec<String> = (0..4).map(|h| format!("{h} {} 100Gbps 1000ns 0", 4 + h / 2)).collect();
    links.extend(["4 6", "4 7", "5 6", "5 7"].map(|l| format!("{l} 100Gbps 1000ns 0")));
    std::fs::write(d.join("config/leaf_spine_4.txt"), format!("8 4 {}\n4 5 6 7\n{}\n", links.len(), links.join("\n"))).unwrap();
    // Two flows from node 0 (ports 10000, 10001), one to node 3 from node 1: cross-ToR.
    std::fs::write(d.join("config/flow.txt"), "3\n0 2 3 300000 2.000000100\n0 3 3 200000 2.000000200\n1 3 3 100000 2.000000300\n").unwrap();
    let out = "mix/output/1/1";
    let rates = "6 20000000000 {k} 50000000000 {k} 100000000000 {k} 200000000000 {k} 250000000000 {k} 400000000000 {k}";
    std::fs::write(
        d.join("config.txt"),
        format!(
            "TOPOLOGY_FILE config/leaf_spine_4.txt\nFLOW_FILE config/flow.txt\n\nFLOW_INPUT_FILE {out}_in.txt\nCNP_OUTPUT_FILE {out}_out_cnp.txt\n\
             FCT_OUTPUT_FILE {out}_out_fct.txt\nPFC_OUTPUT_FILE {out}_out_pfc.txt\nQLEN_MON_FILE {out}_out_qlen.txt\nVOQ_MON_FILE {out}_out_voq.txt\n\
             VOQ_MON_DETAIL_FILE {out}_out_voq_per_dst.txt\nUPLINK_MON_FILE {out}_out_uplink.txt\nCONN_MON_FILE {out}_out_conn.txt\nEST_ERROR_MON_FILE {out}_out_est_error.txt\n\n\
             QLEN_MON_START 2.0\nQLEN_MON_END 2.01\nSW_MONITORING_INTERVAL 10000\n\nFLOWGEN_START_TIME 2.0\nFLOWGEN_STOP_TIME 2.01\nBUFFER_SIZE 9\n\n\
             CC_MODE 1\nLB_MODE {lb}\nENABLE_PFC 1\nENABLE_IRN 0\n\nCONWEAVE_TX_EXPIRY_TIME 1000\nCONWEAVE_REPLY_TIMEOUT_EXTRA 4\nCONWEAVE_PATH_PAUSE_TIME 16\n\
             CONWEAVE_EXTRA_VOQ_FLUSH_TIME 64\nCONWEAVE_DEFAULT_VOQ_WAITING_TIME 400\n\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\n\
             RP_TIMER 300 \nFAST_RECOVERY_TIMES 1\nEWMA_GAIN 0.00390625\nRATE_AI 40.0Mb/s\nRATE_HAI 100.0Mb/s\nMIN_RATE 100Mb/s\nDCTCP_RATE_AI 1000Mb/s\n\n\
             ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\nRATE_BOUND 1\nHAS_WIN 0\nVAR_WIN 0\nFAST_REACT 0\nMI_THRESH 0\n\
             INT_MULTI 1\nGLOBAL_T 1\nU_TARGET 0.95\nMULTI_RATE 0\nSAMPLE_FEEDBACK 0\n\nENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\n\n\n\
             LINK_DOWN 0 0 0\nKMAX_MAP {}\nKMIN_MAP {}\nPMAX_MAP {}\nLOAD 50\nRANDOM_SEED 7\n",
            rates.replace("{k}", "400"),
            rates.replace("{k}", "100"),
            rates.replace("{k}", "0.20"),
        ),
    )
    .unwrap();
    d
}

#[test]
fn conweave_s_config_translates_each_load_balancer_checks_and_runs() {
    for (lb, name, keys) in [
        (0, "ns3_ecmp", &[][..]),
        (2, "drill", &["d = 2 ", "m = 1 ", "sample = \"distinct\"", "memory = \"host\"", "control = \"ns3_ecmp\"", "load = \"all_classes\""][..]),
        (3, "conga", &["ties = \"random\"", "control = \"bypass\"", "gap_us = 100 ", "dre_period_us = 50 ", "dre_alpha = 0.2 ", "quant_bits = 3 ", "age_us = 500 "][..]),
        (6, "letflow", &["gap_us = 100 "][..]),
    ] {
        let d = conweave_dir(&format!("lb{lb}"), lb);
        let o = from_ns3(&d, &["config.txt", "-o", "s.toml"]);
        assert!(o.status.success(), "LB_MODE {lb}: {}", String::from_utf8_lossy(&o.stderr));
        let toml = std::fs::read_to_string(d.join("s.toml")).unwrap();
        // ConWeave's own readings: its flow format, its seed, ACKs ahead of data, its MMU, its
        // NACK (4 µs, a CNP, RecoverQueue on every one), the end 10 s after FLOWGEN_STOP_TIME.
        for want in [
            "conweave-project/conweave-ns3 @ 236a801",
            "[switch.lb]",
            &format!("name = \"{name}\""),
            "format = \"conweave\"",
            "seed = 7 ",
            "ack_class = \"control\"",
            "alpha = 0.0625 ",
            "nack_interval_us = 4 ",
            "rewind = \"every_nack\"",
            "ooo_triggers_cnp = true ",
            "rate_timer_us = 300 ",
            "end_time_us = 12010000 ",
        ] {
            assert!(toml.contains(want), "LB_MODE {lb}: no `{want}` in\n{toml}");
        }
        for k in keys {
            assert!(toml.contains(k), "LB_MODE {lb}: no `{k}` in\n{toml}");
        }
        // HAS_WIN 0 (ConWeave's DCQCN runs without a window).
        assert!(!toml.contains("window_bdp"), "{toml}");
        let o = bin().arg("check").arg(d.join("s.toml")).output().unwrap();
        assert!(o.status.success(), "LB_MODE {lb}: {}", String::from_utf8_lossy(&o.stderr));
        let out = d.join("out");
        let o = bin().args(["run", "--quiet"]).arg(d.join("s.toml")).arg("--out").arg(&out).output().unwrap();
        assert!(o.status.success(), "LB_MODE {lb}: {}", String::from_utf8_lossy(&o.stderr));
        let s = summary(&out);
        assert_eq!((s["hosts"].as_u64(), s["flows_finished"].as_u64()), (Some(4), Some(3)), "LB_MODE {lb}: {s}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn conweave_s_unsupported_or_malformed_inputs_exit_2_naming_the_key() {
    let d = conweave_dir("bad", 0);
    let config = std::fs::read_to_string(d.join("config.txt")).unwrap();
    std::fs::write(d.join("config/flow_dport.txt"), "1\n0 2 3 100 300000 2.0\n").unwrap();
    for (edit, key, what) in [
        (("LB_MODE 0", "LB_MODE 9"), "`LB_MODE`", "allowed 0 (ECMP), 2 (DRILL), 3 (CONGA), 6 (LetFlow)"),
        (("LB_MODE 0", "LB_MODE 4"), "`LB_MODE`", "allowed 0 (ECMP), 2 (DRILL), 3 (CONGA), 6 (LetFlow)"),
        (("LB_MODE 0", "LB_MODE x"), "`LB_MODE`", "not a mode number"),
        (("ENABLE_IRN 0", "ENABLE_IRN 1"), "`ENABLE_IRN`", "allowed 0"),
        (("BUFFER_SIZE 9", "BUFFER_SIZE 0"), "`BUFFER_SIZE`", "give BUFFER_SIZE"),
        (("USE_DYNAMIC_PFC_THRESHOLD 1", "USE_DYNAMIC_PFC_THRESHOLD 0"), "`USE_DYNAMIC_PFC_THRESHOLD`", "allowed 1"),
        (("ENABLE_PFC 1", "ENABLE_PFC 2"), "`ENABLE_PFC`", "allowed 0 or 1"),
        (("RANDOM_SEED 7", "RANDOM_SEED -1"), "`RANDOM_SEED`", "not a whole number"),
        (("LOAD 50", "LOAD 50\nACK_HIGH_PRIO 1"), "`ACK_HIGH_PRIO`", "the HPCC simulator's key in ConWeave's config"),
        (("LOAD 50", "LOAD 50\nFROBNICATE 1"), "`FROBNICATE`", "network-load-balance.cc reads"),
        (("config/flow.txt", "config/flow_dport.txt"), "`FLOW_FILE`", "expected 5 fields"),
    ] {
        std::fs::write(d.join("bad.txt"), config.replacen(edit.0, edit.1, 1)).unwrap();
        let o = from_ns3(&d, &["bad.txt", "-o", "s.toml"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(key) && err.contains(what), "{edit:?}: {err}");
        assert!(!d.join("s.toml").exists(), "{edit:?}: a refused translation wrote its scenario");
    }
    let _ = std::fs::remove_dir_all(&d);
}
