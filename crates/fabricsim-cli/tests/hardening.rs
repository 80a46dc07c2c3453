//! Issue 20's command-line classes: a closed pipe, a seed TOML cannot hold, a syntax error on
//! a long line.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/example.toml")
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    for args in [vec!["check".into(), example().display().to_string()], vec!["list".into(), "--params".into()]] {
        let mut child = bin().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // Read one byte, then close the pipe, as `| head -c 1` does.
        let mut stdout = child.stdout.take().unwrap();
        let _ = stdout.read(&mut [0u8; 1]);
        drop(stdout);
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success() && err.is_empty(), "{args:?}: {status}, stderr: {err}");
    }
}

#[test]
fn a_seed_beyond_toml_integers_is_refused_with_the_range() {
    let o = bin().args(["run", "--seed", &u64::MAX.to_string(), "--out", "/nonexistent/never-written"]).arg(example()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--seed") && err.contains("0..=9223372036854775807"), "{err}");
    let o = bin().args(["check", "--set", &format!("seed={}", u64::MAX)]).arg(example()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(2) && err.contains("`seed`") && err.contains("9223372036854775807"), "{err}");
}

#[test]
fn a_syntax_error_on_a_long_line_quotes_only_part_of_it() {
    let dir = std::env::temp_dir().join(format!("fabricsim-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.toml");
    std::fs::write(&file, format!("[topology]\nk = [{} oops]\n", "1, ".repeat(5000))).unwrap();
    let o = bin().arg("check").arg(&file).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("line 2") && err.contains("oops") && err.len() < 600, "{} bytes: {err}", err.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_prints_an_estimate_and_run_refuses_one_beyond_physical_memory() {
    let o = bin().arg("check").arg(example()).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().any(|l| l.starts_with("estimate") && l.contains("66688 data packets") && l.contains("peak memory")), "{text}");
    // 1 s links: 1.25 BDP per connection is about 750 GB in flight for 16 flows of 1 TB.
    let out = std::env::temp_dir().join(format!("fabricsim-hardening-force-{}", std::process::id()));
    let sets = ["topology.k=4", "topology.link_latency_ns=1e9", "workload.flow_bytes=1000000000000"];
    let o = bin().args(["run", "--quiet", "--out"]).arg(&out).args(sets.iter().flat_map(|s| ["--set", s])).arg(example()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--force") && err.contains("GB of memory"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
