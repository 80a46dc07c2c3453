//! The CLI as a user runs it: exit codes, outputs, and no partial results on bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `fabricsim run --quiet ARGS --out OUT scenarios/example.toml`, OUT a fresh folder named
/// after `name`; the output and OUT.
fn run_example(name: &str, args: &[&str]) -> (std::process::Output, PathBuf) {
    let out = tmp(name);
    let o = bin().args(["run", "--quiet"]).args(args).arg("--out").arg(&out).arg(repo().join("scenarios/example.toml")).output().unwrap();
    (o, out)
}

#[test]
fn run_writes_flows_and_summary() {
    let (o, out) = run_example("run", &["--seed", "7", "--set", "topology.k=4"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16, "header + one row per host of a k=4 fat tree");
    assert!(csv.starts_with("flow,src,dst,bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown"));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 7);
    assert_eq!(summary["scenario"]["topology"]["k"], 4);
    assert_eq!(summary["flows_finished"], 16);
    assert!(summary["invariant_violations"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let (o, out) = run_example("bad", &["--set", "topology.oversubscription=8:1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("topology.oversubscription") && err.contains("allowed"), "{err}");
    assert!(!out.exists(), "no partial results on bad input");
    let o = bin().args(["run", "no/such/scenario.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn conga_on_a_fat_tree_exits_2_naming_switch_lb() {
    let (o, out) = run_example("conga", &["--set", "topology.k=4", "--set", "switch.lb=conga"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("switch.lb") && err.contains("2-tier leaf-spine only") && err.contains("allowed here: `ecmp`"), "{err}");
    assert!(!out.exists(), "no partial results on bad input");
}

#[test]
fn check_and_list_describe_the_simulator() {
    let o = bin().arg("check").arg(repo().join("scenarios/example.toml")).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("128 Host") && text.contains("base RTT") && text.contains("BDP"), "{text}");
    let o = bin().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for name in ["fat_tree", "leaf_spine", "fixed", "line_rate", "ecmp", "spray", "permutation", "incast", "all_to_all", "flow_list"] {
        assert!(text.contains(name), "list lacks {name}:\n{text}");
    }
}

//= paper §5.4, Eq. 2: `check` reports whether partial LAG loss makes the pod uplinks the
//= bottleneck (information), and an impossible (f, p) exits 2 naming the key.
#[test]
fn check_reports_eq2_for_partial_lag() {
    let check = |f: &str, p: &str| {
        bin()
            .args(["check", "--set", "topology.failures.kind=partial_lag", "--set", &format!("topology.failures.f={f}"), "--set", &format!("topology.failures.p={p}")])
            .arg(repo().join("scenarios/example.toml"))
            .output()
            .unwrap()
    };
    let o = check("2", "0.9");
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Eq. 2") && text.contains("are not the bottleneck") && text.contains("16 pod–core links degraded to 40 Gb/s"), "{text}");
    let o = check("3", "0.9");
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("ARE the bottleneck"));
    let o = check("17", "0.5");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("topology.failures.f") && err.contains("1..=16"), "{err}");
}
