//! `fabricsim-fuzz`: runs a fuzzing campaign (see the library) and prints its counts.
//!
//! ```text
//! cargo run --release -p fabricsim-fuzz -- --cases 100000 --seed 1 --mode both
//! ```
//!
//! Exit codes: 0 nothing found; 1 failures found (each printed with its case); 2 bad arguments;
//! 3 a case allocated beyond the bound; 4 a case ran past its time limit (both print the case).

use fabricsim_fuzz::{fuzz, guard, Config, Mode};
use std::process::ExitCode;
use std::time::Duration;

#[global_allocator]
static ALLOC: guard::CountingAlloc = guard::CountingAlloc;

const USAGE: &str = "usage: fabricsim-fuzz [--cases N] [--seed S] [--mode check|run|both] [--run-every N] [--case N]
                      [--budget-mb N] [--max-live-mb N] [--check-limit-s N] [--run-limit-s N] [--save DIR] [--print] [--quiet]
  --cases N          cases to generate (default 1000)
  --seed S           campaign seed (default 1); case i of seed S is always the same case
  --mode M           check: valid and hostile scenarios through the check path (default);
                     run: small valid scenarios, each run twice; both: one run case in --run-every
  --run-every N      with --mode both, one case in N is a run case (default 20)
  --case N           only case N (reproduces a reported case)
  --budget-mb N      setup's memory budget per case, MB (default 256)
  --max-live-mb N    live heap bound, MB: a case passing it ends the campaign (default 2048)
  --check-limit-s N  time limit of a check case (default 30)
  --run-limit-s N    time limit of a run case (default 120)
  --save DIR         write every failing case into DIR as a scenario file
  --print            print the cases (with --case: that one) as scenario files instead of running them
  --quiet            do not print failing cases as they are found";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = Config::new(1000, 1, Mode::Check);
    let mut max_live_mb: u64 = 2048;
    let mut save: Option<std::path::PathBuf> = None;
    let mut print = false;
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        if flag == "--quiet" || flag == "--print" {
            if flag == "--print" {
                print = true;
            } else {
                cfg.verbose = false;
            }
            i += 1;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        let Some(value) = args.get(i + 1) else {
            eprintln!("{flag}: missing value\n{USAGE}");
            return ExitCode::from(2);
        };
        let num = || value.parse::<u64>().map_err(|_| format!("{flag}: `{value}` is not a non-negative integer"));
        let set = match flag {
            "--cases" => num().map(|n| cfg.cases = n),
            "--seed" => num().map(|n| cfg.seed = n),
            "--run-every" => num().map(|n| cfg.run_every = n.max(1)),
            "--case" => num().map(|n| cfg.only = Some(n)),
            "--budget-mb" => num().map(|n| cfg.budget_bytes = n as f64 * (1 << 20) as f64),
            "--max-live-mb" => num().map(|n| max_live_mb = n),
            "--check-limit-s" => num().map(|n| cfg.check_limit = Duration::from_secs(n)),
            "--run-limit-s" => num().map(|n| cfg.run_limit = Duration::from_secs(n)),
            "--save" => {
                save = Some(value.into());
                Ok(())
            }
            "--mode" => match value.as_str() {
                "check" => Ok(cfg.mode = Mode::Check),
                "run" => Ok(cfg.mode = Mode::Run),
                "both" => Ok(cfg.mode = Mode::Both),
                other => Err(format!("--mode: `{other}`; allowed: check, run, both")),
            },
            other => Err(format!("unknown argument `{other}`")),
        };
        if let Err(e) = set {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
        i += 2;
    }
    if print {
        // The cases as scenario files, without running them.
        let indices: Vec<u64> = cfg.only.map_or_else(|| (0..cfg.cases).collect(), |c| vec![c]);
        for i in indices {
            println!("{}", fabricsim_fuzz::case(&cfg, i).as_file(cfg.seed));
        }
        return ExitCode::SUCCESS;
    }
    guard::set_alloc_limit((max_live_mb as usize).saturating_mul(1 << 20));
    let report = fuzz(&cfg);
    if let Some(dir) = &save {
        let _ = std::fs::create_dir_all(dir);
        for (n, f) in report.failures.iter().enumerate() {
            let _ = std::fs::write(dir.join(format!("seed{}-{n}-{}.toml", cfg.seed, f.kind.replace(' ', "_"))), &f.case);
        }
    }
    println!("fabricsim-fuzz seed {} mode {:?}, setup budget {:.0} MB, live heap bound {max_live_mb} MB", cfg.seed, cfg.mode, cfg.budget_bytes / 1e6);
    print!("{}", report.summary());
    if report.clean() {
        ExitCode::SUCCESS
    } else {
        println!("{} failures (printed above with their cases)", report.failures.len());
        ExitCode::from(1)
    }
}
