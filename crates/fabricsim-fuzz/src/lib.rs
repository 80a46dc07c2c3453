//! A structured fuzzer of fabricsim on stable Rust: random scenarios ([`gen`]) through the real
//! parser and `check` path — loading, validation, setup, the resource estimate, the recovery
//! timers and the resolved scenario — and small valid ones through whole runs.
//!
//! What fails a campaign:
//! - a panic anywhere (caught per case; the message and the case are reported);
//! - a rejection that is not an [`Error::Invalid`] naming a key (or a TOML syntax error naming
//!   the line), so every refusal says which key is wrong;
//! - an accepted scenario whose resolved form does not load back to itself;
//! - a run that breaks an invariant (the livelock guard stopping it is the scenario's and counted
//!   apart; a deadlock, nothing left to do with messages unfinished, is a fault), or gives
//!   different output files on the same seed;
//! - a case running past its time limit, or live heap bytes passing the bound ([`guard`]: the
//!   process ends there, printing the case).
//!
//! Every failing case is printed as a scenario file with the seed and index that reproduce it
//! (`fabricsim-fuzz --seed S --case N`); `corpus/` keeps the ones found so far, and a test runs
//! them all.

pub mod gen;
pub mod guard;
pub mod prng;

use fabricsim::budget::Budget;
use fabricsim::{Error, Scenario};
use gen::{Case, Gen};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which cases a campaign generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Valid and hostile scenarios through the check path only.
    Check,
    /// Small valid scenarios, each run twice.
    Run,
    /// Both: every `run_every`-th case is a run case.
    Both,
}

/// A campaign's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Cases to generate.
    pub cases: u64,
    /// Seed of the campaign: case i of seed s is always the same case.
    pub seed: u64,
    /// What to generate.
    pub mode: Mode,
    /// With [`Mode::Both`], one case in this many is a run case.
    pub run_every: u64,
    /// Only this case (reproducing a reported one).
    pub only: Option<u64>,
    /// Setup's memory budget per case (what the library refuses beyond).
    pub budget_bytes: f64,
    /// Time limit of a check case.
    pub check_limit: Duration,
    /// Time limit of a run case (both runs).
    pub run_limit: Duration,
    /// Folder of the data files scenarios may name.
    pub data_dir: PathBuf,
    /// Print each failing case as it is found.
    pub verbose: bool,
}

impl Config {
    /// Defaults: 1000 check cases of seed 1, a 256 MiB setup budget, 30 s per check case and
    /// 120 s per run case, data files in a temporary folder of this process.
    pub fn new(cases: u64, seed: u64, mode: Mode) -> Config {
        Config {
            cases,
            seed,
            mode,
            run_every: 20,
            only: None,
            budget_bytes: 256.0 * (1 << 20) as f64,
            check_limit: Duration::from_secs(30),
            run_limit: Duration::from_secs(120),
            data_dir: std::env::temp_dir().join(format!("fabricsim-fuzz-{}", std::process::id())),
            verbose: true,
        }
    }
}

/// A failure found by a campaign.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What kind (`panic`, `unnamed rejection`, `round trip`, `invariant`, `nondeterminism`).
    pub kind: &'static str,
    /// What happened.
    pub detail: String,
    /// The case as a scenario file that reproduces it.
    pub case: String,
}

/// What a campaign counted.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Cases generated.
    pub cases: u64,
    /// Of them, run cases.
    pub run_cases: u64,
    /// Scenarios accepted by the check path.
    pub accepted: u64,
    /// Rejections by key (the error's key with list indices dropped).
    pub rejected: BTreeMap<String, u64>,
    /// TOML syntax errors (counted apart: they name a line, not a key).
    pub syntax_errors: u64,
    /// Run cases simulated (accepted), each twice.
    pub runs: u64,
    /// Of them, stopped by the livelock guard (the scenario's livelock: a link down for good,
    /// headers starving data), and stopped at their end time.
    pub stalled: u64,
    /// See [`Report::stalled`].
    pub stopped_at_end_time: u64,
    /// Runs whose second run was partitioned (the others stayed serial, with a reason).
    pub partitioned: u64,
    /// The first few stalled runs: case index and the guard's message.
    pub stall_examples: Vec<(u64, String)>,
    /// Panics.
    pub panics: u64,
    /// Outputs that differed between two runs of one seed.
    pub determinism_failures: u64,
    /// Runs that broke an invariant.
    pub invariant_failures: u64,
    /// Rejections naming no key.
    pub unnamed_rejections: u64,
    /// Accepted scenarios whose resolved form did not load back to itself.
    pub round_trip_failures: u64,
    /// Most live heap bytes of one case (0 without the counting allocator), and that case.
    pub peak_case_bytes: usize,
    /// See [`Report::peak_case_bytes`].
    pub peak_case: u64,
    /// The failures, in case order.
    pub failures: Vec<Failure>,
    /// Wall time.
    pub seconds: f64,
}

impl Report {
    /// Whether the campaign found nothing.
    pub fn clean(&self) -> bool {
        self.failures.is_empty()
    }

    /// The counts as text (hangs and allocation aborts end the process before a report, so
    /// a report always has zero of each).
    pub fn summary(&self) -> String {
        let rejected: u64 = self.rejected.values().sum();
        let mut s = format!(
            "cases {} ({} check, {} run) in {:.1} s\naccepted {}, rejected {} (by {} distinct keys), TOML syntax errors {}\nruns {} (each twice, the second on 2-4 threads: {} partitioned): {} stopped by the livelock guard, {} at their end time\npanics {}, hangs 0, allocation aborts 0, unnamed rejections {}, round-trip failures {}, invariant failures {}, determinism failures {}\npeak live heap of one case: {:.1} MB (case {})\n",
            self.cases,
            self.cases - self.run_cases,
            self.run_cases,
            self.seconds,
            self.accepted,
            rejected,
            self.rejected.len(),
            self.syntax_errors,
            self.runs,
            self.partitioned,
            self.stalled,
            self.stopped_at_end_time,
            self.panics,
            self.unnamed_rejections,
            self.round_trip_failures,
            self.invariant_failures,
            self.determinism_failures,
            self.peak_case_bytes as f64 / 1e6,
            self.peak_case
        );
        for (i, m) in &self.stall_examples {
            s += &format!("stalled run, case {i}: {}\n", m.chars().take(240).collect::<String>());
        }
        let mut by_count: Vec<(&String, &u64)> = self.rejected.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        s += "rejections by key:\n";
        for (k, n) in by_count {
            s += &format!("  {n:>7}  {k}\n");
        }
        s
    }
}

/// The key of a rejection as counted: list indices dropped (`workload.jobs[].chunk`).
fn key_class(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut skip = false;
    for c in key.chars() {
        match c {
            '[' => {
                skip = true;
                out.push('[');
            }
            ']' => {
                skip = false;
                out.push(']');
            }
            _ if skip => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether a rejection names a key: an `Invalid` error with a scenario path (a table and its
/// keys, `--set`, or `(top level)`), or a TOML syntax error quoting its line.
fn names_its_key(e: &Error) -> Option<String> {
    match e {
        Error::Invalid { key, .. } if !key.trim().is_empty() => Some(key_class(key)),
        Error::Syntax(m) if m.contains("line") || m.contains('|') => Some("(TOML syntax)".to_string()),
        _ => None,
    }
}

/// How one case of the check path ended.
enum Checked {
    Accepted,
    Rejected(String),
    Unnamed(String),
    RoundTrip(String),
}

/// The check path on one case, as `fabricsim check` takes it: parse with overrides, validate and
/// set up within the budget, estimate, describe the recovery timers, resolve; and the resolved
/// scenario must load back to itself.
fn check_path(case: &Case, cfg: &Config) -> Checked {
    let outcome = Scenario::from_toml(&case.toml, &case.overrides).and_then(|s| s.setup_within(&cfg.data_dir, Budget { bytes: cfg.budget_bytes }));
    let setup = match outcome {
        Ok(s) => s,
        Err(e) => {
            return match names_its_key(&e) {
                Some(k) => Checked::Rejected(k),
                None => Checked::Unnamed(e.to_string()),
            }
        }
    };
    let estimate = fabricsim::estimate::Estimate::of(&setup);
    let _ = estimate.describe();
    let _ = fabricsim::engine::recovery_timers(&setup);
    let resolved = setup.scenario.to_toml();
    match Scenario::from_toml(&resolved, &[]) {
        Ok(again) if again.to_toml() == resolved => Checked::Accepted,
        Ok(again) => Checked::RoundTrip(format!("the resolved scenario loads back differently:\n--- resolved\n{resolved}\n--- loaded back\n{}", again.to_toml())),
        Err(e) => Checked::RoundTrip(format!("the resolved scenario does not load back: {e}\n--- resolved\n{resolved}")),
    }
}

/// Every output file's text of a run, summary.json without its wall-clock block.
fn outputs(r: &fabricsim::Results) -> Vec<(&'static str, String)> {
    fabricsim::results::schema::files()
        .map(|f| {
            let mut text = r.output_text(f.name).unwrap_or_default();
            if f.name == "summary.json" {
                if let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str::<serde_json::Value>(&text) {
                    m.remove("performance");
                    text = serde_json::to_string_pretty(&m).unwrap_or_default();
                }
            }
            (f.name, text)
        })
        .collect()
}

/// How one run case ended.
enum Ran {
    Rejected(Checked),
    Ran { stalled: Option<String>, at_end_time: bool, partitioned: bool },
    Invariant(String),
    Nondeterministic(String),
}

/// A run case: the check path, then two runs from two setups of the same text, the second on 2
/// to 4 threads (the partitioned engine must give the serial run's outputs, or stay serial),
/// their invariants, and every output file compared.
fn run_path(case: &Case, cfg: &Config) -> Ran {
    match check_path(case, cfg) {
        Checked::Accepted => {}
        other => return Ran::Rejected(other),
    }
    let once = |threads: usize| -> fabricsim::Result<fabricsim::Results> {
        let setup = Scenario::from_toml(&case.toml, &case.overrides)?.setup_within(&cfg.data_dir, Budget { bytes: cfg.budget_bytes })?;
        fabricsim::run_threads(&setup, threads, &mut |_| {}, &Default::default())
    };
    let threads = 2 + case.toml.len() % 3;
    let (a, b) = match (once(1), once(threads)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Ran::Invariant(format!("the run failed: {e}")),
    };
    let v = &a.summary.invariant_violations;
    // The livelock guard stopping a run is the scenario's (a link down for good, headers
    // starving data); a run left with nothing to do and messages unfinished is a fault.
    let stalled = !v.is_empty() && v.iter().all(|x| x.starts_with("livelock"));
    if !v.is_empty() && !stalled {
        return Ran::Invariant(v.join("\n"));
    }
    let stalled = stalled.then(|| v[0].clone());
    for ((name, x), (_, y)) in outputs(&a).into_iter().zip(outputs(&b)) {
        if x != y {
            let line = x.lines().zip(y.lines()).position(|(p, q)| p != q).unwrap_or(0);
            let how = match b.summary.performance.partitions {
                1 => "two runs of the same seed".to_string(),
                n => format!("the serial run and a run on {n} partitions"),
            };
            return Ran::Nondeterministic(format!("{name} differs between {how} (first at line {})", line + 1));
        }
    }
    Ran::Ran { stalled, at_end_time: a.summary.stopped_at_end_time, partitioned: b.summary.performance.partitions > 1 }
}

/// The message of the panic being unwound, recorded by [`install_panic_hook`].
static LAST_PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Records panic messages (with their location) instead of printing them as they happen: a
/// panicking case is reported with its scenario.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned()).unwrap_or_default();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        if let Ok(mut m) = LAST_PANIC.lock() {
            *m = format!("{msg}{at}");
        }
    }));
}

/// Generates case `index` of the campaign.
pub fn case(cfg: &Config, index: u64) -> Case {
    let run = match cfg.mode {
        Mode::Check => false,
        Mode::Run => true,
        Mode::Both => index % cfg.run_every.max(1) == cfg.run_every.max(1) - 1,
    };
    Gen::new(cfg.seed, index, run).case(index)
}

/// Runs a campaign. Hangs and allocations beyond the bound end the process from [`guard`];
/// everything else is counted in the report.
pub fn fuzz(cfg: &Config) -> Report {
    let t0 = Instant::now();
    let mut report = Report::default();
    if let Err(e) = gen::write_data_files(&cfg.data_dir) {
        report.failures.push(Failure { kind: "setup", detail: format!("cannot write the data files into {}: {e}", cfg.data_dir.display()), case: String::new() });
        return report;
    }
    guard::start_watchdog();
    let previous_hook = std::panic::take_hook();
    install_panic_hook();
    let indices: Box<dyn Iterator<Item = u64>> = match cfg.only {
        Some(i) => Box::new(std::iter::once(i)),
        None => Box::new(0..cfg.cases),
    };
    for i in indices {
        let c = case(cfg, i);
        let file = c.as_file(cfg.seed);
        let limit = if c.run { cfg.run_limit } else { cfg.check_limit };
        guard::begin_case(cfg.seed, i, &file, limit);
        report.cases += 1;
        report.run_cases += u64::from(c.run);
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| if c.run { run_path(&c, cfg) } else { Ran::Rejected(check_path(&c, cfg)) }));
        guard::end_case();
        let peak = guard::peak_bytes().saturating_sub(guard::live_bytes());
        if peak > report.peak_case_bytes {
            (report.peak_case_bytes, report.peak_case) = (peak, i);
        }
        let mut fail = |kind: &'static str, detail: String| {
            if cfg.verbose {
                eprintln!("\nfabricsim-fuzz: {kind}: {detail}\n{file}");
            }
            report.failures.push(Failure { kind, detail, case: file.clone() });
        };
        match outcome {
            Err(_) => {
                let msg = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
                fail("panic", msg);
                report.panics += 1;
            }
            Ok(Ran::Rejected(Checked::Accepted)) => report.accepted += 1,
            Ok(Ran::Rejected(Checked::Rejected(k))) => {
                if k == "(TOML syntax)" {
                    report.syntax_errors += 1;
                } else {
                    *report.rejected.entry(k).or_default() += 1;
                }
            }
            Ok(Ran::Rejected(Checked::Unnamed(e))) => {
                fail("unnamed rejection", e);
                report.unnamed_rejections += 1;
            }
            Ok(Ran::Rejected(Checked::RoundTrip(e))) => {
                fail("round trip", e);
                report.round_trip_failures += 1;
            }
            Ok(Ran::Ran { stalled, at_end_time, partitioned }) => {
                report.accepted += 1;
                report.runs += 1;
                report.partitioned += u64::from(partitioned);
                if let Some(m) = stalled {
                    report.stalled += 1;
                    if report.stall_examples.len() < 10 {
                        report.stall_examples.push((i, m));
                    }
                }
                report.stopped_at_end_time += u64::from(at_end_time);
            }
            Ok(Ran::Invariant(v)) => {
                report.accepted += 1;
                report.runs += 1;
                fail("invariant", v);
                report.invariant_failures += 1;
            }
            Ok(Ran::Nondeterministic(d)) => {
                report.accepted += 1;
                report.runs += 1;
                fail("nondeterminism", d);
                report.determinism_failures += 1;
            }
        }
    }
    std::panic::set_hook(previous_hook);
    let _ = std::fs::remove_dir_all(&cfg.data_dir);
    report.seconds = t0.elapsed().as_secs_f64();
    report
}

/// Runs the check path (and, for a file whose first line says `(run case)`, the run path) on a
/// saved case; `Err` describes a failure.
pub fn replay(text: &str, data_dir: &Path) -> Result<(), String> {
    let overrides: Vec<String> = text.lines().filter_map(|l| l.strip_prefix("# --set ")).map(str::to_string).collect();
    let run = text.lines().next().is_some_and(|l| l.contains("(run case)"));
    let case = Case { index: 0, toml: text.to_string(), overrides, mutations: Vec::new(), run };
    let cfg = Config { data_dir: data_dir.to_path_buf(), verbose: false, ..Config::new(1, 0, Mode::Check) };
    gen::write_data_files(data_dir).map_err(|e| e.to_string())?;
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| if run { run_path(&case, &cfg) } else { Ran::Rejected(check_path(&case, &cfg)) }));
    match outcome {
        Err(_) => Err("panic".into()),
        Ok(Ran::Rejected(Checked::Unnamed(e))) => Err(format!("rejection naming no key: {e}")),
        Ok(Ran::Rejected(Checked::RoundTrip(e)) | Ran::Invariant(e) | Ran::Nondeterministic(e)) => Err(e),
        Ok(_) => Ok(()),
    }
}
