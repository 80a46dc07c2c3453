//! A run is reproducible from its own output folder (hardening issue, item 4): every run writes
//! `resolved_scenario.toml`, and `scenario::load` on that folder, its `summary.json` or that file repeats
//! the run byte for byte (summary.json's wall-clock `performance` block aside), also after the
//! folder was moved away from the files the scenario reads.

use fabricsim::results::schema;
use fabricsim::{scenario, Results, Scenario};
use std::path::{Path, PathBuf};

/// A fresh empty folder under the system's temporary folder.
fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-rerun-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Loads `path` (a scenario, a run folder or a summary.json), runs it and writes it to `out`.
fn run_into(path: &Path, sets: &[&str], out: &Path) -> Results {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let setup = scenario::load(path, &sets).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let r = fabricsim::run(&setup, &mut |_| {}).unwrap();
    assert!(r.summary.invariant_violations.is_empty(), "{:?}", r.summary.invariant_violations);
    r.write(out).unwrap();
    r
}

/// Every output file of `a` and `b` has the same text; summary.json without `performance`.
fn assert_same_outputs(a: &Results, b: &Results) {
    let mut files = 0;
    for f in schema::files() {
        let (x, y) = (a.output_text(f.name).unwrap(), b.output_text(f.name).unwrap());
        if f.name == "summary.json" {
            let strip = |t: &str| {
                let mut v: serde_json::Value = serde_json::from_str(t).unwrap();
                v.as_object_mut().unwrap().remove("performance");
                v
            };
            assert_eq!(strip(&x), strip(&y), "summary.json differs");
        } else {
            assert!(x == y, "{} differs", f.name);
        }
        files += 1;
    }
    assert!(files >= 3);
}

#[test]
fn a_run_repeats_from_its_folder_its_summary_and_its_scenario_toml() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = temp("example");
    // Overrides and a seed that are not the file's: the rerun must carry them.
    let sets = ["workload.flow_bytes=\"256KiB\"", "topology.oversubscription=\"4:1\"", "transport.cc=smartt", "transport.lb=reps", "seed=7"];
    let first = run_into(&root.join("scenarios/example.toml"), &sets, &dir.join("first"));
    assert!(first.scenario_toml.starts_with("# The resolved scenario"));
    assert!(!first.scenario_toml.contains("files_dir"), "a scenario that reads no file gets no files_dir");
    for (i, again) in [dir.join("first"), dir.join("first/summary.json"), dir.join("first/resolved_scenario.toml")].iter().enumerate() {
        let second = run_into(again, &[], &dir.join(format!("again{i}")));
        assert_eq!(second.summary.seed, 7);
        assert_same_outputs(&first, &second);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_that_reads_files_repeats_after_its_folder_moved() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // One workload per kind of input file: a collective trace, a flow-size CDF, a flow list.
    let workloads = [
        ("trace", "kind = \"collectives\"\n[[workload.jobs]]\nranks = 4\nplacement = \"strided\"\nstride = 4\niterations = 1\ntrace = \"in/training_step.json\"", "training_step.json"),
        ("cdf", "kind = \"open_loop\"\ncdf = \"in/fixed_1000.cdf\"\nload = 0.3\nflows = 100", "fixed_1000.cdf"),
        ("flow_list", "kind = \"flow_list\"\nfile = \"in/fan_out_4.csv\"", "fan_out_4.csv"),
    ];
    for (name, workload, file) in workloads {
        let dir = temp(name);
        std::fs::create_dir_all(dir.join("scenario/in")).unwrap();
        std::fs::copy(data.join(file), dir.join("scenario/in").join(file)).unwrap();
        let toml = format!("name = \"{name}\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\n{workload}\n");
        std::fs::write(dir.join("scenario/s.toml"), toml).unwrap();
        let first = run_into(&dir.join("scenario/s.toml"), &[], &dir.join("scenario/out"));
        let files_dir = std::path::absolute(dir.join("scenario")).unwrap();
        assert!(first.scenario_toml.contains(&format!("files_dir = {}", toml::Value::String(files_dir.display().to_string()))), "{name}: {}", first.scenario_toml);
        // Moved two levels away from the scenario: the file names resolve through files_dir.
        std::fs::create_dir_all(dir.join("elsewhere/deeper")).unwrap();
        std::fs::rename(dir.join("scenario/out"), dir.join("elsewhere/deeper/run")).unwrap();
        let second = run_into(&dir.join("elsewhere/deeper/run"), &[], &dir.join("elsewhere/again"));
        assert_same_outputs(&first, &second);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_folder_without_scenario_toml_is_refused_naming_the_file() {
    let dir = temp("missing");
    std::fs::write(dir.join("summary.json"), "{}").unwrap();
    for p in [dir.clone(), dir.join("summary.json")] {
        let e = scenario::load(&p, &[]).err().expect("refused").to_string();
        assert!(e.contains("resolved_scenario.toml") && e.contains("not found"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The resolved TOML of every scheme of every family parses back to the same scenario, so a
/// rerun starts from exactly what the first run resolved.
#[test]
fn every_schemes_resolved_toml_reads_back_unchanged() {
    let base = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/example.toml")).unwrap();
    let mut checked = 0;
    for family in fabricsim::registry::families() {
        for s in family.schemes {
            let Ok(sc) = Scenario::from_toml(&base, &[format!("{}={}", family.key, toml::Value::String(s.name.to_string()))]) else { continue };
            let resolved = sc.to_toml();
            let back = Scenario::from_toml(&resolved, &[]).unwrap_or_else(|e| panic!("{} = {}: resolved TOML does not parse: {e}\n{resolved}", family.key, s.name));
            assert_eq!(back.to_toml(), resolved, "{} = {}", family.key, s.name);
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} schemes parsed with the example");
}
