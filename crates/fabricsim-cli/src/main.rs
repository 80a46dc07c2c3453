//! `fabricsim`: command-line front end. `run` simulates a scenario and writes results,
//! `check` validates one and prints the derived fabric, `list` names every available scheme.
//! `sweep`, `plot` and `report` are the Python package's commands (`python3 -m fabricsim ...`),
//! forwarded to it so that a user has one command name.
//!
//! Exit codes: 0 success; 1 the run broke an invariant (results are still written, with the
//! violations in summary.json); 2 bad input (nothing is written); 3 the run finished but its
//! results could not all be written (a full disk: the message names the file and the system's
//! error; no file is left half-written under its own name); 128 + the signal's number (130 for
//! Ctrl-C, 143 for SIGTERM) when an interrupt stopped `run`, after it wrote the partial results
//! (see `interrupt.rs`).

use clap::{Parser, Subcommand};
use fabricsim::results::OutDir;
use fabricsim::budget::{show_bytes, Budget};
use fabricsim::estimate::{physical_memory_bytes, Estimate};
use fabricsim::scenario;
use fabricsim::units::ShowTime;
use fabricsim::{Error, Progress};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod interrupt;
mod report;

#[derive(Parser)]
#[command(name = "fabricsim", version, about = "Packet-level simulator of AI/ML training cluster networks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a scenario and write flows.csv and summary.json.
    Run {
        /// Scenario file (TOML, or an htsim .cm matrix); or a previous run's output folder or
        /// its summary.json, which reruns that run (from the resolved_scenario.toml it wrote).
        scenario: PathBuf,
        /// Output folder (default: out/<scenario file name>; for a rerun out/<run folder>-rerun). In a folder an earlier run wrote,
        /// that run's files (listed in its manifest.json) are replaced once this run has results
        /// (a run that fails or is killed first leaves them); one holding result files fabricsim
        /// did not write is refused. Other files stay. Ctrl-C or SIGTERM stops the run and writes
        /// its partial results, marked "interrupted"; a second Ctrl-C quits at once.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Master seed (overrides the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a scenario key, e.g. --set topology.k=16 --set transport.cc=line_rate.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Run even when the estimated peak memory exceeds this machine's physical memory.
        #[arg(long)]
        force: bool,
        /// Cores to use: the fabric is cut into up to N partitions that run in parallel, with
        /// results identical to a serial run (summary.json's `performance` says how many ran,
        /// or why the run stayed serial).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
    },
    /// Validate a scenario and print the derived fabric.
    Check {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Override a scenario key.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also say how `run --threads N` would cut the fabric (or why it would run serially).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Option<u32>,
    },
    /// List every scheme by family: topologies, congestion controls, host and switch path
    /// selections, workloads, queue disciplines, gates, credits, loss recovery.
    List {
        /// Also list each scheme's parameters with their defaults and allowed ranges.
        #[arg(long)]
        params: bool,
        /// Print the catalogue as the Markdown tables of the book's scheme catalogue
        /// (docs/src/reference/schemes.md; with --outputs: the tables of
        /// docs/src/reference/outputs.md).
        #[arg(long, conflicts_with = "params")]
        markdown: bool,
        /// List the output files instead: every column of every file and every key of
        /// summary.json, with its unit and meaning.
        #[arg(long, conflicts_with = "params")]
        outputs: bool,
    },
    /// Translate an htsim command line (`htsim_uec ...` or `htsim_eqds ...`, quoted as one
    /// argument) into a scenario TOML, htsim's defaults made explicit, each key commented with
    /// the flag it came from. Prints it, or writes it with -o FILE (before or after the line).
    #[command(name = "from-htsim", disable_help_flag = true)]
    FromHtsim {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "'COMMAND LINE' [-o FILE]")]
        args: Vec<String>,
    },
    /// Translate a config file of the HPCC ns-3 RDMA simulator (with the topology and flow files
    /// it names, read relative to the folder the simulator runs in: the current one, or
    /// --sim-dir DIR) into a scenario TOML, each key commented with the config key it came
    /// from. Prints it, or writes it with -o FILE.
    #[command(name = "from-ns3", disable_help_flag = true)]
    FromNs3 {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CONFIG [-o FILE] [--sim-dir DIR]")]
        args: Vec<String>,
    },
    /// Run a sweep file (a base scenario, a grid of overrides, seeds) in parallel on every local
    /// core or a Ray cluster; resumable. Forwarded to the Python package (`sweep --help`).
    #[command(disable_help_flag = true)]
    Sweep {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Plot a run's outputs (FCT CDF, slowdown by size, CCTs, traced windows and queues) to
    /// image files. Forwarded to the Python package (`plot --help`).
    #[command(disable_help_flag = true)]
    Plot {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write one self-contained HTML page about a run (summary, fabric, plots, resolved
    /// scenario). Forwarded to the Python package (`report --help`).
    #[command(disable_help_flag = true)]
    Report {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Large arrays on transparent huge pages: fewer TLB misses at thousands of hosts (see the
/// module's doc); outputs are unaffected.
#[global_allocator]
static ALLOC: fabricsim::huge_pages::HugePageAlloc = fabricsim::huge_pages::HugePageAlloc;

fn main() -> ExitCode {
    fabricsim::huge_pages::restart_with_huge_page_heap();
    fabricsim::huge_pages::limit_retained_free_memory();
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run { scenario, out, seed, mut set, quiet, force, threads } => match seed {
            // The seed travels as a scenario key, and TOML integers stop at i64::MAX.
            Some(s) if s > i64::MAX as u64 => Err(Error::invalid("--seed", format!("{s}: allowed 0..={}", i64::MAX))),
            _ => {
                set.extend(seed.map(|s| format!("seed={s}")));
                match run(&scenario, out, &set, quiet, force, threads as usize) {
                    Ok(code) => return code,
                    Err(e) => Err(e),
                }
            }
        },
        Cmd::Check { scenario, set, threads } => check(&scenario, &set, threads.map(|t| t as usize)),
        Cmd::List { outputs: true, markdown, .. } => emit(&if markdown { fabricsim::results::schema::markdown() } else { fabricsim::results::schema::text() }),
        Cmd::List { markdown: true, .. } => emit(&fabricsim::registry::markdown()),
        Cmd::List { params, .. } => list(params),
        Cmd::FromHtsim { args } => return from_htsim(&args),
        Cmd::FromNs3 { args } => return from_ns3(&args),
        Cmd::Sweep { args } => return python_command("sweep", &args),
        Cmd::Plot { args } => return python_command("plot", &args),
        Cmd::Report { args } => return python_command("report", &args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(if e.is_input_error() {
                2
            } else if e.is_write_error() {
                3
            } else {
                1
            })
        }
    }
}

/// Runs `python -m fabricsim COMMAND ARGS` with this process's standard streams and returns its
/// exit code. The interpreter is `$FABRICSIM_PYTHON`, else `python3`; one that cannot import the
/// package gets an install hint and exit 2 rather than Python's traceback.
fn python_command(command: &str, args: &[String]) -> ExitCode {
    let python = std::env::var("FABRICSIM_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let hint = "install it with `pip install ./python` from the repository (or set FABRICSIM_PYTHON to an interpreter that has it)";
    match std::process::Command::new(&python).args(["-c", "import fabricsim"]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status() {
        Ok(s) if s.success() => {}
        Ok(_) => {
            eprintln!("error: `fabricsim {command}` needs the Python package fabricsim, which `{python}` cannot import; {hint}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: `fabricsim {command}` needs Python with the fabricsim package, and `{python}` could not be started ({e}); {hint}");
            return ExitCode::from(2);
        }
    }
    match std::process::Command::new(&python).args(["-m", "fabricsim", command]).args(args).status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: could not start `{python}`: {e}");
            ExitCode::from(2)
        }
    }
}

/// `fabricsim from-htsim 'COMMAND LINE' [-o FILE]`: prints the scenario or writes it to FILE
/// (whose folder the matrix's name is made relative to). Every refusal exits 2 naming the
/// htsim flag (or `-o`).
fn from_htsim(args: &[String]) -> ExitCode {
    use fabricsim::import::htsim::{split_command_line, translate, Context};
    let fail = |what: &str, message: String| {
        eprintln!("error: {what}: {message}");
        ExitCode::from(2)
    };
    let usage = "usage: fabricsim from-htsim 'htsim_uec -tm FILE.cm ...' [-o FILE]";
    let mut line = Vec::new();
    let mut out: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--out" => match it.next() {
                Some(f) => out = Some(PathBuf::from(f)),
                None => return fail("-o", format!("needs a file name; {usage}")),
            },
            "-h" | "--help" => {
                println!("Translate an htsim command line into a fabricsim scenario TOML.\n{usage}\nThe binary's name (htsim_uec or htsim_eqds) picks the flags; -tm and -topo are read relative to the current folder.");
                return ExitCode::SUCCESS;
            }
            _ => line.push(a.clone()),
        }
    }
    let line = match line.as_slice() {
        [one] => one,
        [] => return fail("command line", format!("missing; {usage}")),
        _ => return fail("command line", format!("give the htsim command line as one quoted argument (so that its own flags, -o among them, stay htsim's); {usage}")),
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let out_dir = match out_folder(&out, &cwd) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let toml = split_command_line(line).and_then(|argv| translate(&argv, &Context { cwd, out_dir }));
    write_translation(toml, out)
}

/// The folder of `-o FILE` (relative to `cwd`), made if it does not exist yet (as `run --out`
/// makes its folder), canonical, for the file names in the scenario; `None` when the scenario
/// is printed. A folder that cannot be used exits 2.
fn out_folder(out: &Option<PathBuf>, cwd: &Path) -> Result<Option<PathBuf>, ExitCode> {
    let Some(f) = out else { return Ok(None) };
    let parent = f.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| cwd.to_path_buf(), |p| cwd.join(p));
    std::fs::create_dir_all(&parent).and_then(|()| parent.canonicalize()).map(Some).map_err(|e| {
        eprintln!("error: -o: {}: the folder {} cannot be used: {e}", f.display(), parent.display());
        ExitCode::from(2)
    })
}

/// Writes a translated scenario to `out` (or prints it); a refused translation exits 2 with
/// its message and writes nothing.
fn write_translation<E: std::fmt::Display>(toml: Result<String, E>, out: Option<PathBuf>) -> ExitCode {
    let fail = |what: &str, message: String| {
        eprintln!("error: {what}: {message}");
        ExitCode::from(2)
    };
    let toml = match toml {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match out {
        Some(f) => match std::fs::write(&f, toml) {
            Ok(()) => {
                println!("wrote {} (run it: fabricsim run {})", f.display(), f.display());
                ExitCode::SUCCESS
            }
            Err(e) => fail("-o", format!("cannot write {}: {e}", f.display())),
        },
        None => match emit(&toml) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail("stdout", e.to_string()),
        },
    }
}

/// `fabricsim from-ns3 CONFIG [-o FILE] [--sim-dir DIR]`: prints the scenario or writes it to
/// FILE (whose folder the topology and flow files' names are made relative to). The config's
/// TOPOLOGY_FILE and FLOW_FILE are read relative to DIR (default: the current folder), as the
/// simulator reads them relative to the folder it runs in. Every refusal exits 2 naming the
/// config key (or `-o`, `--sim-dir`).
fn from_ns3(args: &[String]) -> ExitCode {
    use fabricsim::import::ns3::{translate, Context};
    let fail = |what: &str, message: String| {
        eprintln!("error: {what}: {message}");
        ExitCode::from(2)
    };
    let usage = "usage: fabricsim from-ns3 CONFIG [-o FILE] [--sim-dir DIR]";
    let (mut config, mut out, mut sim_dir) = (None::<&String>, None::<PathBuf>, None::<PathBuf>);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--out" | "--sim-dir" => match it.next() {
                Some(f) if a == "--sim-dir" => sim_dir = Some(PathBuf::from(f)),
                Some(f) => out = Some(PathBuf::from(f)),
                None => return fail(a, format!("needs a {}; {usage}", if a == "--sim-dir" { "folder" } else { "file name" })),
            },
            "-h" | "--help" => {
                println!("Translate a config file of the HPCC ns-3 RDMA simulator (scratch/third.cc), or of ConWeave's fork of it (scratch/network-load-balance.cc: recognised by its keys, e.g. LB_MODE), into a fabricsim scenario TOML.\n{usage}\nTOPOLOGY_FILE and FLOW_FILE are read relative to the folder the simulator runs in: --sim-dir DIR, default the current folder (its example runs from simulation/: fabricsim from-ns3 mix/config.txt).");
                return ExitCode::SUCCESS;
            }
            _ if config.is_none() => config = Some(a),
            _ => return fail("command line", format!("`{a}`: one config file only; {usage}")),
        }
    }
    let Some(config) = config else { return fail("command line", format!("missing the config file; {usage}")) };
    let here = std::env::current_dir().unwrap_or_default();
    let cwd = match sim_dir {
        Some(d) => match here.join(&d).canonicalize() {
            Ok(p) => p,
            Err(e) => return fail("--sim-dir", format!("{}: {e}", d.display())),
        },
        None => here.clone(),
    };
    let text = match fabricsim::budget::read_input_file(&here.join(config)) {
        Ok(t) => t,
        Err(e) => return fail("config", format!("cannot read {config}: {e}")),
    };
    let out_dir = match out_folder(&out, &here) {
        Ok(d) => d,
        Err(code) => return code,
    };
    write_translation(translate(config, &text, &Context { cwd, out_dir }), out)
}

/// Appends one formatted line to a `String`.
macro_rules! say {
    ($o:ident, $($arg:tt)*) => {{
        $o.push_str(&format!($($arg)*));
        $o.push('\n');
    }};
}

/// Writes `text` to stdout. A reader that went away (`fabricsim check X | head`) is no error:
/// the rest is dropped quietly.
fn emit(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io { path: "stdout".into(), message: e.to_string() }),
        _ => Ok(()),
    }
}

struct ProgressBar {
    start: Instant,
    last: Instant,
    shown: bool,
    quiet: bool,
}

impl ProgressBar {
    fn update(&mut self, p: &Progress) {
        let now = Instant::now();
        if self.quiet || now.duration_since(self.start) < Duration::from_secs(1) || now.duration_since(self.last) < Duration::from_millis(250) {
            return;
        }
        self.last = now;
        self.shown = true;
        let width = 30;
        let filled = ((p.fraction * width as f64) as usize).min(width);
        let rate = p.events as f64 / now.duration_since(self.start).as_secs_f64();
        eprint!(
            "\r[{}{}] {:5.1}%  sim {}  messages {}/{}  {:.2} M events/s   ",
            "#".repeat(filled),
            " ".repeat(width - filled),
            100.0 * p.fraction,
            ShowTime(p.now),
            p.messages_done,
            p.messages,
            rate / 1e6
        );
        let _ = std::io::stderr().flush();
    }
}

/// `fabricsim run`; the exit code when it ran (success, or an interrupt's), the error otherwise.
fn run(path: &Path, out: Option<PathBuf>, set: &[String], quiet: bool, force: bool, threads: usize) -> Result<ExitCode, Error> {
    // --force also lifts setup's own budget (the fabric's and the workload's tables).
    let setup = scenario::load_within(path, set, if force { Budget::UNLIMITED } else { Budget::of_machine() })?;
    let estimate = Estimate::of(&setup);
    // Each partition past the first copies the run's per-task state: count the most the
    // threads can make (the plan itself needs the simulation built).
    let parts = fabricsim::engine::parallel::plan::partitions_at_most(&setup.fabric, threads);
    let needed = estimate.peak_memory_on(parts);
    if let Some(physical) = physical_memory_bytes().filter(|&m| needed > m && !force) {
        let on = if parts > 1 { format!(" on {parts} partitions ({} each past the first)", show_bytes(estimate.bytes_per_partition)) } else { String::new() };
        return Err(Error::invalid(
            "--force",
            format!("the scenario needs about {:.1} GB of memory{on} ({}), more than this machine's {:.1} GB; make it smaller, or pass --force to try anyway", needed / 1e9, estimate.describe(), physical / 1e9),
        ));
    }
    if let Some(w) = estimate.timeline_warning() {
        eprintln!("{w}");
    }
    // A rerun of a run folder does not overwrite that folder unless told to.
    let default_out = match scenario::scenario_file(path)? {
        (file, true) => {
            let folder = file.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Path::new("out").join(format!("{folder}-rerun"))
        }
        _ => Path::new("out").join(path.file_stem().unwrap_or_default()),
    };
    let out = out.unwrap_or(default_out);
    interrupt::install();
    let results = claim_then_simulate(&out, |out_dir| {
        let start = Instant::now();
        let mut bar = ProgressBar { start, last: start, shown: false, quiet };
        // Trace samples go to their files as they are taken, not into memory.
        let results = fabricsim::run_into(&setup, threads, &mut |p| bar.update(p), interrupt::flag(), out_dir)?;
        if bar.shown {
            eprintln!();
        }
        results.write_to(out_dir)?;
        Ok(results)
    })?;
    let mut o = String::new();
    for l in report::summary_lines(&results.summary) {
        say!(o, "{l}");
    }
    say!(o, "results     {}", out.display());
    let s = &results.summary;
    let signal = interrupt::received().filter(|_| s.interrupted);
    if let Some(signal) = signal {
        say!(
            o,
            "interrupted by {} at simulated {:.3} us after {} events: the results above and in {} are partial (summary.json: \"interrupted\": true)",
            interrupt::name(signal),
            s.interrupted_at_us.unwrap_or_default(),
            s.events,
            out.display()
        );
    }
    emit(&o)?;
    fabricsim::check_invariants(&results)?;
    Ok(signal.map_or(ExitCode::SUCCESS, |sig| ExitCode::from(interrupt::exit_code(sig))))
}

/// The results folder `out` checked, cleared of the previous run's files and claimed, then
/// `simulate` run into it: a refused or unwritable folder fails at once, before a long run
/// (the unit test below holds this order).
fn claim_then_simulate<T>(out: &Path, simulate: impl FnOnce(&OutDir) -> Result<T, Error>) -> Result<T, Error> {
    let out_dir = OutDir::prepare(out, "--out")?;
    simulate(&out_dir)
}

fn check(path: &Path, set: &[String], threads: Option<usize>) -> Result<(), Error> {
    let setup = scenario::load(path, set)?;
    let mut o = String::new();
    let f = &setup.fabric;
    say!(o, "fabric        {}", f.description);
    let mut tiers: Vec<String> = Vec::new();
    for &(t, n) in &f.tier_counts() {
        // A GPU's NIC ports on planes 1.. (gpu<i>.p<p>) and its scale-up port (nvl<i>) are
        // hosts of their own, counted apart from the GPUs.
        let ports = if t == fabricsim::topo::Tier::Host { n - f.ranks() } else { 0 };
        tiers.push(format!("{} {}", n - ports, f.tier_name(t)));
        let plane_ports = (f.nic_ports() - 1) * f.ranks();
        if ports > 0 && plane_ports > 0 {
            tiers.push(format!("{plane_ports} gpu<i>.p<p> (NIC ports 1..)"));
        }
        if ports > plane_ports {
            tiers.push(format!("{} nvl", ports - plane_ports));
        }
    }
    say!(o, "nodes         {} ({})", f.tier.len(), tiers.join(", "));
    say!(o, "links         {}", f.ports.len() / 2);
    for l in fabricsim::topo::rail_optimized::check_lines(f) {
        say!(o, "{l}");
    }
    let hp = &f.ports[f.host_port[0].idx()];
    say!(o, "host link     {} Gb/s, {}", hp.rate.gbps(), ShowTime(hp.latency));
    say!(o, "switch delay  {}", ShowTime(f.switch_latency));
    say!(o, "base RTT      {} (longest path, full packet + ACK)", ShowTime(setup.base_rtt));
    say!(o, "BDP           {} bytes", setup.bdp_bytes);
    let table = &setup.qdisc;
    for (i, q) in table.profiles.iter().enumerate() {
        let head = if i == 0 { "switch port  " } else { "             " };
        // Under PFC a port's queue has no limit of its own (the switch's shared buffer, below,
        // bounds it): say so.
        let buffer = q.bounded_buffer().map_or_else(|| "unbounded (PFC shared buffer)".to_string(), |b| format!("{b} B"));
        say!(o, 
            "{head} #{i} buffer {buffer}, ECN {} (Kmin {} B, Kmax {} B, Pmax {}, at {:?}), trimming {}: {} ports{}",
            if q.ecn { "on" } else { "off" },
            q.kmin_bytes,
            q.kmax_bytes,
            q.pmax,
            q.mark_at,
            if q.trimming { "on" } else { "off" },
            table.switch_ports[i],
            if table.labels[i].is_empty() { String::new() } else { format!(" ({})", table.labels[i]) }
        );
    }
    for l in report::pfc_lines(&setup) {
        say!(o, "{l}");
    }
    let reliability = setup.scenario.transport.reliability.name();
    for l in fabricsim::engine::recovery_timers(&setup) {
        say!(o, "recovery      {reliability}: {l}");
    }
    let t = &setup.traffic;
    say!(o, "workload      {} connections, {} messages, {} bytes", t.conns.len(), t.sends.len(), t.total_bytes());
    let estimate = Estimate::of(&setup);
    say!(o, "estimate      {}", estimate.describe());
    if let Some(w) = estimate.timeline_warning() {
        say!(o, "              {w}");
    }
    if let Some(n) = threads {
        match fabricsim::engine::parallel::plan_for(&setup, n)? {
            Ok(p) => {
                let mut hosts = vec![0u32; p.parts];
                for &k in &p.node_part[..f.ranks() as usize] {
                    hosts[k as usize] += 1;
                }
                let (lo, hi) = (hosts.iter().min().copied().unwrap_or(0), hosts.iter().max().copied().unwrap_or(0));
                let each = if lo == hi { format!("{lo}") } else { format!("{lo}-{hi}") };
                use fabricsim::engine::parallel::plan::Cut;
                let by_rail = if p.cut == Cut::ByRail { " (by rail: each a rail's leaves, servers cut)" } else { "" };
                say!(o, "threads       {n}: {} partitions of {each} hosts{by_rail}, windows of {} (the shortest cable between them)", p.parts, ShowTime(p.lookahead));
                if let Cut::WholeServers(why) = &p.cut {
                    say!(o, "              servers kept whole (scalable units), not cut by rail: {why}");
                }
                say!(o, "              peak memory ~{} on {} partitions: each past the first copies the per-task state ({})", show_bytes(estimate.peak_memory_on(p.parts)), p.parts, show_bytes(estimate.bytes_per_partition));
            }
            Err(why) => say!(o, "threads       {n}: runs serially: {why}"),
        }
    }
    for l in t.step.iter().flat_map(|s| &s.lines) {
        say!(o, "{l}");
    }
    for l in fabricsim::results::step_check_lines(t, f) {
        say!(o, "{l}");
    }
    if !t.instances.is_empty() {
        let jobs = t.instances.iter().map(|i| i.job + 1).max().unwrap_or(0);
        say!(o, "collectives   {} jobs, {} collective instances, {} graph tasks", jobs, t.instances.len(), t.tasks.len());
    }
    say!(o, "link events   {}", setup.scenario.link_events.len());
    if !f.failures.is_empty() {
        let seed = match setup.scenario.topology.first_failure_seed() {
            Some(s) => format!(" (failure seed {s})"),
            None => String::new(),
        };
        // One line per run of cables failed alike (each entry of [[topology.failures]] is one).
        for group in f.failures.chunk_by(|a, b| a.describe() == b.describe()) {
            let names: Vec<String> = group.iter().map(|l| f.link_name(l.up)).collect();
            say!(o, "failed links  {} {}{seed}: {}", names.len(), group[0].describe(), names.join(" "));
        }
    }
    if let Some(b) = &f.pod_bottleneck {
        say!(o, "Eq. 2         {}", b.describe());
    }
    say!(o, "\nresolved scenario:\n{}", setup.scenario.to_toml());
    emit(&o)
}

fn list(with_params: bool) -> Result<(), Error> {
    let mut o = String::new();
    for family in fabricsim::registry::families() {
        say!(o, "{} ({}):", family.title, family.key);
        for s in family.schemes {
            say!(o, "  {:<16} {}", s.name, s.summary);
            if with_params {
                for p in (s.params)() {
                    let allowed = p.allowed.map(|a| format!("  [{a}]")).unwrap_or_default();
                    say!(o, "  {:<16}   {} = {}{allowed}", "", p.key, p.default);
                }
            }
        }
        o.push('\n');
        if family.key == "workload.kind" {
            say!(o, "collectives (workload.jobs[].collectives[].op / algorithm):");
            for (op, algs, default) in fabricsim::workload::collective::OPERATIONS {
                say!(o, "  {op:<16} {} (default {default})", algs.join(", "));
            }
            o.push('\n');
        }
    }
    emit(&o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_folder_is_claimed_before_anything_is_simulated() {
        let file = std::env::temp_dir().join(format!("fabricsim-cli-claim-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let mut simulated = false;
        let e = claim_then_simulate(&file.join("sub"), |_| {
            simulated = true;
            Ok(())
        })
        .unwrap_err();
        assert!(!simulated, "simulated before the folder was refused");
        assert!(e.to_string().contains("--out"), "{e}");
        let out = std::env::temp_dir().join(format!("fabricsim-cli-claim-ok-{}", std::process::id()));
        claim_then_simulate(&out, |dir| {
            simulated = true;
            assert!(out.join("manifest.json").exists(), "claimed before simulating: {}", dir.path().display());
            Ok(())
        })
        .unwrap();
        assert!(simulated);
        let _ = (std::fs::remove_file(&file), std::fs::remove_dir_all(&out));
    }
}
