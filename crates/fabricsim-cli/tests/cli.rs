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

/// A run folder's flows.csv and its summary.json without the `performance` block (the one
/// part that may differ between runs that compute the same).
fn run_outputs(dir: &Path) -> (String, serde_json::Value) {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let mut summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    summary.as_object_mut().unwrap().remove("performance");
    (read("flows.csv"), summary)
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

/// The binary restarts itself once with glibc's heap on huge pages (`huge_pages.rs`): the
/// restarted run gets the same arguments and computes the same as a run told not to restart.
#[test]
fn the_huge_page_heap_restart_keeps_arguments_and_results() {
    let args = ["--seed", "3", "--set", "topology.k=4"];
    let (restarted, a) = run_example("restart", &args);
    let out = tmp("norestart");
    let plain = bin().env("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0").args(["run", "--quiet"]).args(args).arg("--out").arg(&out).arg(repo().join("scenarios/example.toml")).output().unwrap();
    assert!(restarted.status.success() && plain.status.success(), "{}", String::from_utf8_lossy(&restarted.stderr));
    let (sa, sb) = (run_outputs(&a), run_outputs(&out));
    assert_eq!((&sa.1["seed"], &sa.1["scenario"]["topology"]["k"]), (&serde_json::json!(3), &serde_json::json!(4)));
    assert_eq!(sa, sb);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn threads_cut_the_run_and_change_nothing_but_the_performance_block() {
    let (serial, a) = run_example("threads1", &["--set", "topology.k=4"]);
    let (parallel, b) = run_example("threads3", &["--set", "topology.k=4", "--threads", "3"]);
    assert!(serial.status.success() && parallel.status.success(), "{}", String::from_utf8_lossy(&parallel.stderr));
    let partitions: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(b.join("summary.json")).unwrap()).unwrap();
    assert_eq!(partitions["performance"]["partitions"], 3);
    assert_eq!(run_outputs(&a), run_outputs(&b));
    // `check --threads` says how a run would be cut, or why it would not be.
    let o = bin().args(["check", "--threads", "3", "--set", "topology.k=4"]).arg(repo().join("scenarios/example.toml")).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("threads       3: 3 partitions of 4-6 hosts, windows of 1.000 us"), "{text}");
    // A rail-optimized fabric whose TP collectives run as packets on the scale-up domain is
    // cut into its scalable units (a unit's leaves share its servers), whatever the threads;
    // its hosts are the GPUs (not their scale-up ports). With analytic TP, by rail.
    let o = bin().args(["check", "--threads", "4"]).arg(repo().join("scenarios/training.toml")).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("threads       4: 2 partitions of 16 hosts, windows of 1.000 us"), "{text}");
    assert!(text.contains("on 2 partitions: each past the first copies the per-task state"), "{text}");
    assert!(text.contains("servers kept whole (scalable units), not cut by rail: the traffic graph has a dependency between partitions shorter than the lookahead"), "{text}");
    let o = bin().args(["check", "--threads", "4", "--set", "workload.parallelism.tp_network=\"analytic\""]).arg(repo().join("scenarios/training.toml")).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("threads       4: 4 partitions of 8 hosts (by rail: each a rail's leaves, servers cut), windows of 1.000 us"), "{text}");
    let o = bin().args(["check", "--threads", "2", "--set", "run.trace_interval_us=1", "--set", "run.trace_ports=[\"tor0-host0\"]"]).arg(repo().join("scenarios/example.toml")).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("threads       2: runs serially: tracing"));
    // 0 threads: exit 2 naming the option.
    let (zero, c) = run_example("threads0", &["--threads", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("threads"));
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(&d);
    }
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
    assert!(text.contains("128 host, 32 tor, 32 agg, 16 core") && text.contains("base RTT") && text.contains("BDP"), "{text}");
    // A leaf-spine's upper tier is named as its nodes are: spines.
    let o = bin().arg("check").arg(repo().join("scenarios/mcc/asymmetric_mode_f.toml")).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("(8 host, 2 tor, 2 spine)"));
    let o = bin().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for name in ["fat_tree", "leaf_spine", "fixed", "line_rate", "ecmp", "spray", "permutation", "incast", "all_to_all", "flow_list"] {
        assert!(text.contains(name), "list lacks {name}:\n{text}");
    }
    // The output schema: every file, and each column with its unit.
    let o = bin().args(["list", "--outputs"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for want in ["flows.csv (always)", "[packets] data packets declared lost by the `timeouts` expiries", "ports.csv (with `run.port_stats`)", "packets.ecn_mark_events", "[µs stats]"] {
        assert!(text.contains(want), "list --outputs lacks {want}:\n{text}");
    }
}

#[test]
fn check_prints_the_timers_of_the_selected_loss_recovery() {
    let check = |mode: &str| {
        let o = bin().arg("check").args(["--set", &format!("transport.reliability={mode}")]).arg(repo().join("scenarios/example.toml")).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.starts_with("recovery")).map(str::to_string).collect::<Vec<_>>()
    };
    // sack runs the shared per-packet RTO (1 BDP queues: base RTT + twice the path's queueing).
    assert_eq!(check("sack"), ["recovery      sack: RTO 162.904 us (transport.rto_us, shared): a packet unacknowledged this long is declared lost; each expiry that declares packets lost counts as a timeout"]);
    // tcp turns it off and runs its own, which check shows with its clamp.
    let tcp = check("tcp");
    assert_eq!(tcp[0], "recovery      tcp: shared RTO off (transport.rto_us unused)");
    assert!(tcp[1].contains("own RTO clamp(srtt + 4·rttvar, 50.000 us, 10.000 ms); 100.000 us before the first RTT sample"), "{tcp:?}");
    // strack adds its probe timer: 3 network base RTTs.
    let strack = check("strack");
    assert!(strack[0].contains("RTO 162.904 us") && strack[1].contains("probe after 37.498 us without an ACK"), "{strack:?}");
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

/// The files in `d`, sorted.
fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// `fabricsim run --quiet --out OUT ARGS scenarios/example.toml` on a k = 4 fat tree.
fn run_into(out: &Path, args: &[&str]) -> std::process::Output {
    bin().args(["run", "--quiet", "--set", "topology.k=4"]).args(args).arg("--out").arg(out).arg(repo().join("scenarios/example.toml")).output().unwrap()
}

#[test]
fn a_second_scenario_into_the_same_folder_leaves_only_its_files() {
    let out = tmp("twice");
    // The first traces ports and connections and logs events (drops: shallow buffers, no trims).
    let traced = ["--set", "run.trace_interval_us=2", "--set", "run.trace_ports=[\"tor0-host0\"]", "--set", "run.event_log=true", "--set", "switch.buffer_bdp=0.3", "--set", "switch.trimming=false", "--set", "topology.oversubscription=\"2:1\""];
    let o = run_into(&out, &traced);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files_in(&out), ["events.csv", "flows.csv", "manifest.json", "port_trace.csv", "resolved_scenario.toml", "summary.json", "trace.csv"]);
    // An input kept in the folder, as experiments/runner.py keeps scenario.toml.
    std::fs::write(out.join("scenario.toml"), "# input").unwrap();
    let o = run_into(&out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files_in(&out), ["flows.csv", "manifest.json", "resolved_scenario.toml", "scenario.toml", "summary.json"]);
    assert_eq!(std::fs::read_to_string(out.join("scenario.toml")).unwrap(), "# input");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["files"], serde_json::json!(["flows.csv", "summary.json", "resolved_scenario.toml"]));
    assert_eq!(manifest["written_by"], "fabricsim");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_folder_with_foreign_results_is_refused_with_exit_2_and_untouched() {
    let out = tmp("foreign");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("flows.csv"), "not ours").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run_into(&out, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--out") && err.contains(&out.display().to_string()) && err.contains("`flows.csv`") && err.contains("give a new or empty folder"), "{err}");
    assert!(o.stdout.is_empty(), "nothing simulated");
    assert_eq!(files_in(&out), ["flows.csv", "notes.txt"]);
    assert_eq!(std::fs::read_to_string(out.join("flows.csv")).unwrap(), "not ours");
    let _ = std::fs::remove_dir_all(&out);
}

/// A run whose results cannot be written exits 3 (not 2, bad input), names the file and the
/// system's error and says the results were not all written; no file is left half-written
/// under its own name. The file size limit (`ulimit -f`, with SIGXFSZ ignored so that the write
/// fails rather than the process) stands for a full disk without root: a 11 KB `flows.csv`
/// cannot be written, the 177-byte manifest can.
#[test]
#[cfg(target_os = "linux")]
fn a_failed_write_exits_3_naming_the_file_and_leaves_no_partial_file() {
    let out = tmp("full");
    let o = Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 4; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_fabricsim"))
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(repo().join("scenarios/example.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let path = out.join("flows.csv").display().to_string();
    assert!(err.contains(&path) && err.contains("File too large") && err.contains("the run's results were not all written"), "{err}");
    assert!(o.stdout.is_empty(), "no summary for results not written");
    // The new folder's claim (an empty manifest) is all there is: no result file, whole or
    // partial.
    assert_eq!(files_in(&out), ["manifest.json"]);
    let _ = std::fs::remove_dir_all(&out);
}

/// A traced run streams its samples to their files: the same bytes with `--threads 2` (which
/// runs serially: tracing keeps a run in one partition), and a crashed run's temporary files
/// in the folder neither stop the next run nor survive it.
#[test]
fn a_traced_run_streams_the_same_files_with_threads_and_clears_leftovers() {
    let (a, b) = (tmp("trace1"), tmp("trace2"));
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("port_trace.csv.partial"), "left by a crashed run").unwrap();
    std::fs::write(b.join("flows.csv.partial"), "left by a crashed run").unwrap();
    let traced = ["--set", "run.trace_interval_us=0.01", "--set", "run.trace_ports=[\"*-*\"]", "--set", "run.trace_conns=[0, 3]"];
    let o = run_into(&a, &traced);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run_into(&b, &[&traced[..], &["--threads", "2"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = ["flows.csv", "manifest.json", "port_trace.csv", "resolved_scenario.toml", "summary.json", "trace.csv"];
    assert_eq!(files_in(&a), want);
    assert_eq!(files_in(&b), want);
    for f in ["port_trace.csv", "trace.csv", "flows.csv", "manifest.json"] {
        assert!(std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(), "{f} differs");
    }
    let ports = std::fs::read_to_string(a.join("port_trace.csv")).unwrap();
    assert!(ports.lines().count() > 100_000, "{} rows", ports.lines().count());
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// Ctrl-C (SIGINT) and SIGTERM stop a run at its next progress check: it prints where it
/// stopped, writes the partial results marked `"interrupted": true` in place of the previous
/// run's (which stay whole while it runs) and exits 128 + the signal. The signal is sent once
/// the progress bar shows, so the handler is installed (no timing involved); the run would
/// otherwise take minutes (1 GiB per flow). SIGINT is sent twice in a row, as `timeout -s INT`
/// does (to the command, then to its process group): the same interrupt, not a second one; on
/// Linux the second is sent once the first has been delivered (no longer pending), which is
/// when a handler that treated it as a second interrupt ended the process.
#[test]
#[cfg(unix)]
fn an_interrupted_run_writes_partial_results_and_keeps_the_previous_ones_until_then() {
    use std::io::Read;
    let out = tmp("interrupted");
    let o = run_into(&out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (signal, code, threads) in [("INT", 130, "1"), ("TERM", 143, "2")] {
        let earlier = std::fs::read_to_string(out.join("flows.csv")).unwrap();
        let mut child = bin()
            .args(["run", "--set", "topology.k=4", "--set", "workload.flow_bytes=\"1GiB\"", "--threads", threads, "--out"])
            .arg(&out)
            .arg(repo().join("scenarios/example.toml"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("messages") {
            let n = err.read(&mut buf).unwrap();
            assert!(n > 0, "the run ended before its progress bar showed: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
        // Running: the previous results are there, whole.
        assert_eq!(std::fs::read_to_string(out.join("flows.csv")).unwrap(), earlier);
        let number = if signal == "INT" { libc::SIGINT } else { libc::SIGTERM };
        for k in 0..if signal == "INT" { 2 } else { 1 } {
            if k > 0 {
                wait_until_delivered(child.id(), number);
            }
            // SAFETY: signals a child this test spawned and has not yet waited for (a zombie
            // at worst).
            assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, number) }, 0);
        }
        let mut rest = String::new();
        err.read_to_string(&mut rest).unwrap();
        let o = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(code), "{text}{rest}");
        assert!(text.contains("flows       interrupted: 0 of 16 flows finished") && text.contains("interrupted by SIG") && text.contains("are partial"), "{text}");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["interrupted"], true);
        assert!(summary["interrupted_at_us"].as_f64().unwrap() > 0.0);
        assert!(summary["invariant_violations"].as_array().unwrap().is_empty(), "{}", summary["invariant_violations"]);
        let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
        assert_ne!(flows, earlier);
        assert_eq!(flows.lines().count(), 1 + 16, "every flow, unfinished ones as such");
        assert_eq!(files_in(&out), ["flows.csv", "manifest.json", "resolved_scenario.toml", "summary.json"]);
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Waits until `signal` is no longer pending for process `pid` (Linux: `/proc/<pid>/status`),
/// or the process has ended.
#[cfg(unix)]
fn wait_until_delivered(pid: u32, signal: i32) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let bit = 1u64 << (signal - 1);
    for _ in 0..60_000 {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return };
        let pending = |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).map_or(0, |v| u64::from_str_radix(v.trim(), 16).unwrap_or(0));
        if (pending("SigPnd:") | pending("ShdPnd:")) & bit == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("signal {signal} still pending for process {pid} after a minute");
}

#[test]
fn an_unwritable_out_fails_before_simulating() {
    // A folder below a plain file cannot be created. The run would take tens of seconds
    // (1 GiB per flow); that the folder is claimed before simulating is held by the binary's
    // unit test (`claim_then_simulate`), not timed here.
    let file = tmp("plain-file");
    std::fs::write(&file, "x").unwrap();
    let o = run_into(&file.join("sub"), &["--set", "workload.flow_bytes=\"1GiB\""]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--out") && err.contains("cannot be created"), "{err}");
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_run_stopped_at_end_time_says_so_and_prints_no_zero_figures() {
    let out = tmp("stopped");
    let o = run_into(&out, &["--set", "run.end_time_us=5"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("stopped at end_time: 0 of 16 flows finished"), "{text}");
    assert!(text.contains("fct         – (no flow finished)") && text.contains("completion  – (16 of 16 flows unfinished"), "{text}");
    assert!(!text.contains("0.000 us"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}

const PFC: &[&str] = &["--set", "switch.trimming=false", "--set", "switch.pfc.enabled=true", "--set", "transport.cc=dcqcn", "--set", "transport.reliability=go_back_n"];

#[test]
fn pfc_runs_print_pauses_and_check_prints_the_buffer_model() {
    let out = tmp("pfc");
    let o = run_into(&out, &[PFC, &["--set", "workload.kind=incast", "--set", "workload.senders=8"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let pfc = text.lines().find(|l| l.starts_with("pfc ")).unwrap_or_else(|| panic!("no pfc line:\n{text}"));
    assert!(pfc.contains("pause frames") && pfc.contains("worst port") && pfc.contains("paused"), "{pfc}");
    assert!(!text.lines().any(|l| l.starts_with("drops ") || l.starts_with("trims ")), "lossless: {text}");
    let _ = std::fs::remove_dir_all(&out);

    let o = bin().arg("check").args(PFC).arg(repo().join("scenarios/example.toml")).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains(&(u64::MAX / 4).to_string()) && text.contains("buffer unbounded (PFC shared buffer)"), "{text}");
    for want in ["shared buffer per switch", "alpha = 0.125", "XON when its headroom is empty", "headroom 108320 B per ingress port"] {
        assert!(text.contains(want), "check lacks {want}:\n{text}");
    }
}

#[test]
fn an_htsim_matrix_runs_on_htsim_default_fabric_for_its_node_count() {
    // `fabricsim run X.cm`: a 3-tier fat tree of the matrix's `Nodes` hosts (16: k = 4) with
    // the benchmark scenarios' htsim defaults; `check` shows the same fabric.
    let dir = tmp("cm");
    std::fs::create_dir_all(&dir).unwrap();
    let cm = dir.join("perm_16n.cm");
    let lines: String = (0..16).map(|i| format!("{i}->{} id {} start 0 size 65536\n", (i + 5) % 16, i + 1)).collect();
    std::fs::write(&cm, format!("Nodes 16\nConnections 16\n{lines}")).unwrap();
    let out = dir.join("out");
    let o = bin().args(["run", "--quiet"]).arg(&cm).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["hosts"], 16);
    assert_eq!(summary["flows_finished"], 16);
    assert_eq!(summary["scenario"]["transport"]["mtu_bytes"], 4096);
    let o = bin().arg("check").arg(&cm).output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("fat tree"));
    // The same matrix on a fabric of another size is refused, naming the key and the fix.
    let o = bin().args(["run", "--quiet"]).arg(&cm).arg("--set").arg("topology.hosts=128").arg("--out").arg(dir.join("o2")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("workload.file") && e.contains("16 nodes") && e.contains("128 hosts"), "{e}");
    // A matrix without its Nodes header cannot say which fabric it needs.
    std::fs::write(&cm, lines).unwrap();
    let o = bin().arg("check").arg(&cm).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Nodes N"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_folder_reruns_into_its_own_rerun_folder_with_the_same_results() {
    let (o, out) = run_example("rerun", &["--seed", "9", "--set", "topology.k=4", "--set", "transport.cc=smartt"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Without --out the rerun lands in out/<run folder>-rerun, relative to the working folder.
    let cwd = tmp("rerun-cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let o = bin().current_dir(&cwd).args(["run", "--quiet"]).arg(out.join("summary.json")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again = cwd.join("out").join(format!("{}-rerun", out.file_name().unwrap().to_string_lossy()));
    assert_eq!(std::fs::read(out.join("flows.csv")).unwrap(), std::fs::read(again.join("flows.csv")).unwrap());
    assert_eq!(std::fs::read(out.join("resolved_scenario.toml")).unwrap(), std::fs::read(again.join("resolved_scenario.toml")).unwrap());
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(again.join("summary.json")).unwrap()).unwrap();
    assert_eq!((summary["seed"].as_u64(), summary["scenario"]["topology"]["k"].as_u64()), (Some(9), Some(4)));
    // `check` takes a run folder too.
    let o = bin().arg("check").arg(&out).output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("16 hosts"), "{}", String::from_utf8_lossy(&o.stdout));
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&cwd);
}
