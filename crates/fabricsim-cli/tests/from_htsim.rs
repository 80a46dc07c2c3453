//! `fabricsim from-htsim` as a user runs it: every command line of the htsim validation set
//! (experiments/htsim-parity/cases.txt) translates to a scenario `check` accepts; a converted
//! 1024-host permutation has htsim's base RTT; a lone flow finishes when htsim's does; bad
//! command lines exit 2 naming the flag.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-from-htsim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A matrix of the validation set: the benchmark's (`bench/matrices/`) or the parity
/// experiment's; one the checkout lacks (the parity incasts, which its `run.py` writes) is
/// replaced by a permutation of the same size written into `dir`.
fn matrix(name: &str, dir: &Path) -> PathBuf {
    let p = match name.strip_prefix("bench/") {
        Some(f) => repo().join("bench/matrices").join(f),
        None => repo().join("experiments/htsim-parity").join(name),
    };
    if p.is_file() {
        return p;
    }
    let nodes: usize = name.split('_').find_map(|w| w.strip_suffix('n')?.parse().ok()).expect("matrix names carry their node count");
    let lines: String = (0..nodes).map(|i| format!("{i}->{} id {} start 0 size 2097152\n", (i + nodes / 2) % nodes, i + 1)).collect();
    let p = dir.join(name.replace('/', "_"));
    std::fs::write(&p, format!("Nodes {nodes}\nConnections {nodes}\n{lines}")).unwrap();
    p
}

/// `fabricsim from-htsim LINE -o FILE`, which must succeed.
fn translate(line: &str, file: &Path) {
    let o = bin().arg("from-htsim").arg(line).arg("-o").arg(file).output().unwrap();
    assert!(o.status.success(), "{line}: {}", String::from_utf8_lossy(&o.stderr));
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn every_command_line_of_the_validation_set_translates_to_a_scenario_check_accepts() {
    let dir = tmp("cases");
    let text = std::fs::read_to_string(repo().join("experiments/htsim-parity/cases.txt")).unwrap();
    let (mut schemes, mut matrices, mut section) = (Vec::new(), Vec::new(), "");
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        match l {
            "[schemes]" | "[matrices]" => section = l,
            _ if section == "[schemes]" => schemes.push(l.split_once(char::is_whitespace).map(|(n, c)| (n, c.trim())).unwrap()),
            _ => matrices.push(l),
        }
    }
    assert!(schemes.len() >= 5 && matrices.len() >= 4, "{schemes:?} {matrices:?}");
    for m in &matrices {
        let cm = matrix(m, &dir);
        for (name, line) in &schemes {
            let file = dir.join(format!("{name}.toml"));
            translate(&format!("{line} -tm {}", cm.display()), &file);
            let o = bin().arg("check").arg(&file).output().unwrap();
            assert!(o.status.success(), "{name} on {m}: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_converted_1024_host_permutation_has_htsims_base_rtt() {
    // htsim_uec @ 40ccb05 prints `network_max_unloaded_rtt 12.5057` for this fabric: 400 G,
    // 1 µs links, 3 tiers: 2 × 6 µs + 6 × (4150 + 64) B × 8 / 400 Gb/s = 12.50568 µs.
    let dir = tmp("perm1024");
    let cm = matrix("bench/perm_1024n_2MiB.cm", &dir);
    let file = dir.join("perm.toml");
    translate(&format!("htsim_uec -tm {} -linkspeed 400000", cm.display()), &file);
    let out = dir.join("out");
    let o = bin().args(["run", "--quiet"]).arg(&file).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["hosts"], 1024);
    assert_eq!(s["base_rtt_us"].as_f64().unwrap(), 12.50568);
    assert_eq!(s["flows_finished"], 1024);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lone_flow_finishes_when_htsims_does() {
    // htsim_uec @ 40ccb05, `-tm lone.cm -linkspeed 400000 -end 2000` (NSCC, mixed spraying):
    // "Flow Uec_0_127 ... finished at 353.224" (16 MiB: 4107 packets of 4150 B, the last of 164 B).
    const HTSIM_FCT_US: f64 = 353.224;
    let dir = tmp("lone");
    std::fs::write(dir.join("lone.cm"), "Nodes 128\nConnections 1\n0->127 id 1 start 0 size 16777216\n").unwrap();
    let file = dir.join("lone.toml");
    translate(&format!("htsim_uec -tm {} -linkspeed 400000 -end 2000", dir.join("lone.cm").display()), &file);
    let out = dir.join("out");
    let o = bin().args(["run", "--quiet"]).arg(&file).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    let fct = s["fct_us"]["max"].as_f64().unwrap();
    assert!((fct / HTSIM_FCT_US - 1.0).abs() < 0.01, "fabricsim {fct} µs, htsim {HTSIM_FCT_US} µs");
    assert_eq!(s["packets"]["data_sent"], 4107);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_command_lines_exit_2_naming_the_flag() {
    let dir = tmp("bad");
    std::fs::write(dir.join("m.cm"), "Nodes 16\nConnections 1\n0->15 id 1 start 0 size 1000\n").unwrap();
    let run = |args: &[&str]| {
        let o = bin().arg("from-htsim").args(args).current_dir(&dir).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (code, err, _) = run(&["htsim_uec -tm m.cm -frobnicate"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`-frobnicate`") && err.contains("unknown htsim_uec flag"), "{err}");
    let (code, err, _) = run(&["htsim_uec -tm m.cm -sleek"]);
    assert!(code == Some(2) && err.contains("`-sleek`") && err.contains("not supported"), "{err}");
    let (code, err, _) = run(&["htsim_uec -tm m.cm -q lots"]);
    assert!(code == Some(2) && err.contains("`-q`") && err.contains("`lots`"), "{err}");
    // Unquoted, htsim's own flags would be fabricsim's: refused with the fix.
    let (code, err, _) = run(&["htsim_uec", "-tm", "m.cm"]);
    assert!(code == Some(2) && err.contains("one quoted argument"), "{err}");
    let (code, err, _) = run(&["htsim_uec -tm m.cm", "-o"]);
    assert!(code == Some(2) && err.contains("-o"), "{err}");
    // Printed, the scenario names the matrix as given.
    let (code, _, out) = run(&["htsim_uec -tm m.cm"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("file = \"m.cm\"") && out.contains("[transport.cc]"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_lines_whose_scenario_check_would_refuse_exit_2_naming_the_flag_and_write_nothing() {
    let dir = tmp("refused-by-check");
    std::fs::write(dir.join("m.cm"), "Nodes 16\nConnections 1\n0->15 id 1 start 0 size 1000\n").unwrap();
    // Each of these once wrote a scenario that `fabricsim check` refused (issue 49).
    for (line, flag, allowed) in [
        ("htsim_uec -tm m.cm -failed 8 -linkspeed 1 -q 35", "`-failed`", "allowed -linkspeed 4..=10^9 Mb/s"),
        ("htsim_uec -tm m.cm -end 4294967295", "`-end`", "up to 10^9 µs"),
        ("htsim_uec -tm m.cm -target_q_delay 100000000", "`-target_q_delay`", "allowed 0.001..=10^6 µs"),
        ("htsim_eqds -tm m.cm -cwnd 4000000000", "`-cwnd`", "allowed 1..="),
    ] {
        let o = bin().arg("from-htsim").arg(line).args(["-o", "s.toml"]).current_dir(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(flag) && err.contains(allowed), "{line}: {err}");
        assert!(!dir.join("s.toml").exists(), "{line}: a refused translation wrote its scenario");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_output_file_may_name_a_folder_that_does_not_exist_yet() {
    let dir = tmp("new-folder");
    let cm = matrix("bench/perm_128n_2MiB.cm", &dir);
    let file = dir.join("out/htsim/perm.toml");
    translate(&format!("htsim_uec -tm {} -nodes 128 -end 100", cm.display()), &file);
    let o = bin().arg("check").arg(&file).output().unwrap();
    assert!(o.status.success() && file.is_file(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
