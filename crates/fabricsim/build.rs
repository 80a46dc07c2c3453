//! Build script: records which commit of the project the engine is built from, so that every
//! run can say it (`summary.json`'s `engine.commit`, a sweep row's `commit`). A tree with
//! uncommitted changes to the tracked files the programs are built from (`crates/`, the
//! workspace's `Cargo.toml` and `Cargo.lock`) gets `-dirty`; a build outside a git checkout (a
//! source archive) gets `unknown`. Other files (an experiment's results being written, a
//! RESULTS.md) do not make the engine dirty.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            let sources = [":(top)crates", ":(top)Cargo.toml", ":(top)Cargo.lock"];
            let dirty = git(&[&["status", "--porcelain", "--untracked-files=no", "--"][..], &sources[..]].concat()).is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=FABRICSIM_COMMIT={commit}");
    // Run again when HEAD moves (a commit, a checkout) or the sources change (dirty or not).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = std::path::Path::new(&dir);
        for f in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={}", dir.join(f).display());
        }
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(head_ref).display());
        }
    }
    println!("cargo:rerun-if-changed=src");
}
