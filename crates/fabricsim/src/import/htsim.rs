//! `fabricsim from-htsim`: an htsim command line (`htsim_uec` or `htsim_eqds`; the binary's
//! name picks which) translated into a fabricsim scenario TOML in which every key says which
//! htsim flag, or which htsim default, it comes from.
//!
//! **Follows:** `experiments/htsim-parity/SPEC.md` §9 (flag table), §5 (queues), §6
//! (`-failed`), §3 (multipath modes), §8 (EQDS), written from htsim's argument parsers and
//! the values they derive (`ultraethernet/uet-htsim` @ 40ccb05: `sim/datacenter/main_uec.cpp`,
//! `main_eqds.cpp`, `fat_tree_topology.cpp`); read to understand, nothing copied.
//!
//! Derived values are computed the way htsim computes them, so that both simulators start from
//! the same numbers: the network RTT (`calculate_rtt`: twice the diameter latency plus one full
//! packet and one 64 B ACK serialisation per hop at the host rate), the BDP in whole packets
//! (rounded up), the default queue (`htsim_uec`: 1 BDP with trimming, 5 without;
//! `htsim_eqds`: 35 packets), the ECN thresholds (`htsim_uec`: 20 % / 80 % of the BDP, rounded
//! up to packets; `-ecn` gives packets) and the minimum RTO (15 µs, `htsim_eqds` 150 µs, plus
//! six drains of a full queue). They are written out as explicit keys, so the scenario does
//! not depend on fabricsim's own defaults matching htsim's.
//!
//! **Differences:** flags that only steer htsim's logging (`-o`, `-log`, `-logtime`,
//! `-logtime_us`, `-debug`) are accepted and listed as ignored. Flags of mechanisms fabricsim
//! does not model are refused with the reason; so is any unknown flag and any malformed value
//! (htsim's `atoi` reads `12abc` as 12 and a missing value as 0; here both are errors naming
//! the flag). `-strat` accepts only `ecmp_host` (htsim ignores an unknown strategy silently).
//! `htsim_eqds -use_reps 1` becomes one entropy per flow (`ecmp`): that is what `eqds.cpp`
//! runs after a flow's first window, its recycled entropy being a member nothing sets.
//! Every translation is validated as `fabricsim check` validates a scenario, so a command line
//! is never turned into a scenario fabricsim refuses: the refused key is traced back, through
//! its comment, to the flag that wrote it (flags with a known limit say it in htsim's terms).

pub use super::Context;
use super::{emit, line, quote, refusal, show, Doc};
use crate::excerpt::clip;
use crate::workload::flow_list::parse_htsim_cm;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

/// A flag, or its value, that cannot be translated: `flag` names it as the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagError {
    /// The flag (`-q`), or `command line` for a problem with the whole line.
    pub flag: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "htsim flag `{}`: {}", self.flag, self.message)
    }
}

impl std::error::Error for FlagError {}

type R<T> = std::result::Result<T, FlagError>;

fn err<T>(flag: &str, message: impl Into<String>) -> R<T> {
    Err(FlagError { flag: flag.to_string(), message: message.into() })
}

/// Which htsim binary the command line runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// `htsim_uec`: the Ultra Ethernet transport (NSCC, RCCC, UEC multipath).
    Uec,
    /// `htsim_eqds`: EQDS (receiver credits), optionally with SMaRTT at the sender.
    Eqds,
}

impl Flavour {
    fn binary(self) -> &'static str {
        match self {
            Flavour::Uec => "htsim_uec",
            Flavour::Eqds => "htsim_eqds",
        }
    }
}

/// Splits a command line as a POSIX shell would for plain words: blanks separate words,
/// single quotes keep everything, double quotes keep everything but `\"` and `\\`, a backslash
/// outside quotes escapes the next character. No variables, globs or redirections.
pub fn split_command_line(line: &str) -> R<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return err("command line", "a single quote is not closed"),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return err("command line", "a double quote is not closed"),
                        },
                        Some(c) => w.push(c),
                        None => return err("command line", "a double quote is not closed"),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.next());
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `htsim_uec`'s sender congestion control (`-sender_cc_algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SenderAlgo {
    Nscc,
    Dctcp,
    Constant,
}

/// `htsim_uec`'s `-load_balancing_algo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LbAlgo {
    Mixed,
    Bitmap,
    Reps,
    RepsLegacy,
    Oblivious,
}

/// The command line, parsed: htsim's variables with their defaults, and which flags set them.
#[derive(Clone, Debug)]
struct Opts {
    flavour: Flavour,
    tm: Option<String>,
    nodes: Option<u32>,
    tiers: u32,
    linkspeed_mbps: f64,
    mtu: u32,
    paths: u32,
    hop_latency_us: f64,
    switch_latency_us: f64,
    q: Option<u32>,
    q_bdp_factor: Option<u32>,
    ecn: Option<(u32, u32)>,
    disable_trim: bool,
    end_us: u32,
    seed: u32,
    cwnd: Option<u32>,
    sender: bool,
    receiver: bool,
    algo: SenderAlgo,
    lb: LbAlgo,
    target_q_delay_us: Option<f64>,
    qa_gate: Option<i32>,
    sack_threshold: Option<u32>,
    failed: u32,
    accurate_base_rtt: bool,
    topo: Option<String>,
    force_disable_os_cc: bool,
    use_reps: bool,
    exp_avg_ecn: bool,
    /// Flags given (without their values), for the comments.
    given: Vec<String>,
    /// Flags accepted without effect on the simulation.
    ignored: Vec<String>,
}

impl Opts {
    fn new(flavour: Flavour) -> Opts {
        Opts {
            flavour,
            tm: None,
            nodes: None,
            tiers: 3,
            // datacenter/main.h HOST_NIC: 100 000 Mb/s (htsim's runs at 400 G pass -linkspeed).
            linkspeed_mbps: 100_000.0,
            mtu: 4150,
            paths: 64,
            hop_latency_us: 1.0,
            switch_latency_us: 0.0,
            q: None,
            q_bdp_factor: None,
            ecn: None,
            disable_trim: false,
            end_us: 1000,
            seed: 13,
            cwnd: None,
            sender: flavour == Flavour::Uec,
            receiver: flavour == Flavour::Eqds,
            algo: SenderAlgo::Nscc,
            lb: LbAlgo::Mixed,
            target_q_delay_us: None,
            qa_gate: None,
            sack_threshold: None,
            failed: 0,
            accurate_base_rtt: false,
            topo: None,
            force_disable_os_cc: false,
            use_reps: false,
            exp_avg_ecn: false,
            given: Vec::new(),
            ignored: Vec::new(),
        }
    }

    fn has(&self, flag: &str) -> bool {
        self.given.iter().any(|g| g == flag)
    }

    /// `"-q 35"` when given, else `"-q absent: <default>"`, for a comment.
    fn src(&self, flag: &str, shown: impl fmt::Display, default: &str) -> String {
        if self.has(flag) {
            format!("{flag} {shown}")
        } else {
            format!("{flag} absent: {default}")
        }
    }
}

fn parse_int<T: std::str::FromStr>(flag: &str, s: &str, what: &str) -> R<T> {
    s.parse::<T>().or_else(|_| err(flag, format!("`{}` is not {what}", clip(s))))
}

fn parse_num(flag: &str, s: &str, what: &str) -> R<f64> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => err(flag, format!("`{}` is not {what} (a number ≥ 0)", clip(s))),
    }
}

/// Flags of mechanisms fabricsim does not model, with the reason (both flavours).
fn unsupported(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "-conn_reuse" => "connection reuse (several messages on one UEC connection) is not modelled: every matrix line is its own connection",
        "-oversubscribed_cc" | "-Ai" | "-Md" | "-alpha" | "-recv_oversub_cc" => "htsim's receiver oversubscription controller (OversubscribedCC) is not modelled",
        "-disable_base_rtt_update_on_nack" => "fabricsim's NSCC always lowers its base RTT on smaller samples, NACKs included (SPEC §9: not modelled)",
        "-sleek" => "SLEEK, htsim's sender-side fast loss recovery, is not modelled",
        "-pcie" => "the receiver PCIe model is not modelled",
        "-ar_sticky_delta" | "-ar_granularity" | "-ar_method" => "htsim's switch adaptive routing is not translated; pick a `switch.lb` scheme in the scenario by hand",
        "-use_exp_avg_rtt" => "htsim_eqds does not consume this flag's value (main_eqds.cpp never advances past it), so no htsim command line with it runs",
        _ => return None,
    })
}

const UEC_FLAGS: &[&str] = &[
    "-tm", "-nodes", "-tiers", "-linkspeed", "-mtu", "-q", "-queue_size_bdp_factor", "-ecn", "-disable_trim", "-trimsize", "-end", "-seed", "-paths", "-cwnd",
    "-sender_cc_only", "-receiver_cc_only", "-sender_cc", "-receiver_cc", "-sender_cc_algo", "-load_balancing_algo", "-target_q_delay", "-qa_gate", "-sack_threshold",
    "-failed", "-hop_latency", "-switch_latency", "-enable_accurate_base_rtt", "-strat", "-topo", "-planes", "-queue_type", "-host_queue_type",
    "-force_disable_oversubscribed_cc", "-o", "-log", "-logtime", "-logtime_us", "-debug",
];
const EQDS_FLAGS: &[&str] = &[
    "-tm", "-nodes", "-tiers", "-linkspeed", "-mtu", "-q", "-ecn", "-trimsize", "-end", "-seed", "-paths", "-cwnd", "-sender_cc_only", "-sender_cc",
    "-sender_cc_algo", "-use_reps", "-use_exp_avg_ecn", "-hop_latency", "-switch_latency", "-strat", "-topo", "-planes", "-queue_type", "-host_queue_type",
    "-o", "-log", "-logtime", "-debug",
];

/// Parses the words after the binary name into [`Opts`], flag by flag, in htsim's order (a
/// later flag wins, as in htsim).
fn parse(flavour: Flavour, args: &[String]) -> R<Opts> {
    let mut o = Opts::new(flavour);
    let known = if flavour == Flavour::Uec { UEC_FLAGS } else { EQDS_FLAGS };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        if let Some(why) = unsupported(flag) {
            return err(flag, format!("not supported: {why}"));
        }
        if !known.contains(&flag) {
            return err(flag, format!("unknown {} flag; it accepts {}", flavour.binary(), known.join(" ")));
        }
        let arity = match flag {
            "-ecn" => 2,
            "-disable_trim" | "-sender_cc_only" | "-receiver_cc_only" | "-sender_cc" | "-receiver_cc" | "-enable_accurate_base_rtt" | "-force_disable_oversubscribed_cc" | "-debug" => 0,
            _ => 1,
        };
        if i + arity >= args.len() {
            return err(flag, format!("needs {} value{}", arity, if arity > 1 { "s" } else { "" }));
        }
        let v: Vec<&str> = args[i + 1..i + 1 + arity].iter().map(String::as_str).collect();
        o.given.push(flag.to_string());
        match flag {
            "-tm" => o.tm = Some(v[0].to_string()),
            "-topo" => o.topo = Some(v[0].to_string()),
            "-nodes" => o.nodes = Some(parse_int(flag, v[0], "a host count")?),
            "-tiers" => {
                o.tiers = parse_int(flag, v[0], "a tier count")?;
                if o.tiers != 2 && o.tiers != 3 {
                    return err(flag, format!("{}: allowed 2 (leaf-spine) or 3 (fat tree)", o.tiers));
                }
            }
            "-planes" => {
                if parse_int::<u32>(flag, v[0], "a plane count")? != 1 {
                    return err(flag, format!("not supported: {}: multi-plane fabrics (several NIC ports) are not modelled; allowed 1", clip(v[0])));
                }
            }
            "-linkspeed" => {
                o.linkspeed_mbps = parse_num(flag, v[0], "a rate in Mb/s")?;
                if !(1.0..=1e9).contains(&o.linkspeed_mbps) {
                    return err(flag, format!("{}: allowed 1..=10^9 Mb/s", clip(v[0])));
                }
            }
            "-mtu" => {
                o.mtu = parse_int(flag, v[0], "a packet size in bytes")?;
                if !(65..=65_535).contains(&o.mtu) {
                    return err(flag, format!("{}: allowed 65..=65535 bytes (the wire size of a full packet, above its 64 B header)", o.mtu));
                }
            }
            "-paths" => {
                o.paths = parse_int(flag, v[0], "a number of entropies")?;
                if !(1..=65_536).contains(&o.paths) || !o.paths.is_power_of_two() {
                    return err(flag, format!("{}: allowed a power of two in 1..=65536 (htsim masks entropies with paths − 1)", o.paths));
                }
            }
            "-hop_latency" | "-switch_latency" => {
                let l = parse_num(flag, v[0], "a latency in µs")?;
                if l > 1e6 {
                    return err(flag, format!("{}: allowed 0..=10^6 µs", clip(v[0])));
                }
                if flag == "-hop_latency" {
                    o.hop_latency_us = l;
                } else {
                    o.switch_latency_us = l;
                }
            }
            "-q" => {
                let q = parse_int(flag, v[0], "a queue size in packets")?;
                if q == 0 {
                    return err(flag, "0: a queue holds at least one packet");
                }
                o.q = Some(q);
            }
            "-queue_size_bdp_factor" => {
                let f = parse_int(flag, v[0], "a whole number of BDPs")?;
                if f == 0 {
                    return err(flag, "0: allowed 1 or more BDPs");
                }
                o.q_bdp_factor = Some(f);
            }
            "-ecn" => {
                let lo: u32 = parse_int(flag, v[0], "a threshold in packets")?;
                let hi: u32 = parse_int(flag, v[1], "a threshold in packets")?;
                if lo > hi {
                    return err(flag, format!("{lo} {hi}: the low threshold must not exceed the high one"));
                }
                o.ecn = Some((lo, hi));
            }
            "-disable_trim" => o.disable_trim = true,
            "-trimsize" => {
                let t: u32 = parse_int(flag, v[0], "a size in bytes")?;
                if t != 64 {
                    return err(flag, format!("not supported: {t}: fabricsim's trimmed packet is the data packets' 64 B header (transport.header_bytes), so another trim size would also change every packet's payload; allowed 64"));
                }
            }
            "-end" => {
                o.end_us = parse_int(flag, v[0], "a time in whole µs")?;
                if o.end_us as f64 > crate::units::MAX_TIME_US {
                    return err(flag, format!("{}: allowed 0 (no end) or up to 10^9 µs (fabricsim's run.end_time_us)", o.end_us));
                }
            }
            "-seed" => o.seed = parse_int(flag, v[0], "a non-negative whole number")?,
            "-cwnd" => {
                let c: u32 = parse_int(flag, v[0], "a window in packets")?;
                match (c, flavour) {
                    // htsim_uec: 0 means "use the default" (1.5 BDP).
                    (0, Flavour::Uec) => o.cwnd = None,
                    (0, Flavour::Eqds) => return err(flag, "0: htsim_eqds's window would hold no packet; allowed 1 or more"),
                    _ => o.cwnd = Some(c),
                }
            }
            "-sender_cc_only" => {
                o.sender = true;
                o.receiver = false;
            }
            "-receiver_cc_only" => {
                o.sender = false;
                o.receiver = true;
            }
            "-sender_cc" => o.sender = true,
            "-receiver_cc" => o.receiver = true,
            "-sender_cc_algo" => {
                o.sender = true;
                o.algo = match (flavour, v[0]) {
                    (Flavour::Uec, "nscc") => SenderAlgo::Nscc,
                    (Flavour::Uec, "dctcp") => SenderAlgo::Dctcp,
                    (Flavour::Uec, "constant") => SenderAlgo::Constant,
                    (Flavour::Eqds, "dctcp") => return err(flag, "not supported: dctcp: htsim_eqds's DCTCP sender is not translated (its default sender CC, SMaRTT, is: use -sender_cc)"),
                    (Flavour::Uec, other) => return err(flag, format!("`{}`: allowed nscc, dctcp, constant", clip(other))),
                    (Flavour::Eqds, other) => return err(flag, format!("`{}`: allowed dctcp", clip(other))),
                };
            }
            "-load_balancing_algo" => {
                o.lb = match v[0] {
                    "mixed" => LbAlgo::Mixed,
                    "bitmap" => LbAlgo::Bitmap,
                    "reps" => LbAlgo::Reps,
                    "reps_legacy" => LbAlgo::RepsLegacy,
                    "oblivious" => LbAlgo::Oblivious,
                    other => return err(flag, format!("`{}`: allowed mixed, bitmap, reps, reps_legacy, oblivious", clip(other))),
                }
            }
            "-use_reps" => o.use_reps = parse_int::<u32>(flag, v[0], "0 or 1")? != 0,
            "-use_exp_avg_ecn" => o.exp_avg_ecn = parse_int::<u32>(flag, v[0], "0 or 1")? != 0,
            "-target_q_delay" => {
                let t = parse_num(flag, v[0], "a delay in µs")?;
                if t == 0.0 {
                    return err(flag, "0: allowed a delay above 0 µs (htsim takes 0 as \"use the default\")");
                }
                if !(0.001..=1e6).contains(&t) {
                    return err(flag, format!("{}: allowed 0.001..=10^6 µs (fabricsim's transport.cc.target_qdelay_us)", clip(v[0])));
                }
                o.target_q_delay_us = Some(t);
            }
            "-qa_gate" => {
                let g: i32 = parse_int(flag, v[0], "a whole number")?;
                if !(-1..=63).contains(&g) {
                    return err(flag, format!("{g}: allowed -1 (default 3) or 0..=63"));
                }
                o.qa_gate = Some(g);
            }
            "-sack_threshold" => o.sack_threshold = Some(parse_int(flag, v[0], "a byte count")?),
            "-failed" => o.failed = parse_int(flag, v[0], "a number of links")?,
            "-enable_accurate_base_rtt" => o.accurate_base_rtt = true,
            "-force_disable_oversubscribed_cc" => o.force_disable_os_cc = true,
            "-strat" => {
                if v[0] != "ecmp_host" {
                    return err(flag, format!("not supported: `{}`: only ecmp_host (host entropies over switch ECMP, htsim's default) is translated; htsim's switch adaptive routing, round robin and ECN-driven host routing differ from fabricsim's switch.lb schemes", clip(v[0])));
                }
            }
            "-queue_type" => {
                if v[0] != "composite" {
                    return err(flag, format!("not supported: `{}`: only composite (htsim's default trimming queue) is translated", clip(v[0])));
                }
            }
            "-host_queue_type" => {
                if v[0] != "fair_prio" {
                    return err(flag, format!("not supported: `{}`: only fair_prio (htsim's default NIC scheduler, round robin over connections) is translated", clip(v[0])));
                }
            }
            "-o" | "-log" | "-logtime" | "-logtime_us" | "-debug" => o.ignored.push(args[i..=i + arity].join(" ")),
            _ => unreachable!("every known flag has a branch"),
        }
        i += 1 + arity;
    }
    Ok(o)
}

/// One tier of a `.topo` file (tier 0: ToR, 1: aggregation or spine, 2: core).
#[derive(Clone, Copy, Debug, Default)]
struct TopoTier {
    speed_gbps: u64,
    radix_up: u32,
    radix_down: u32,
    oversub: u32,
    bundle: u32,
    switch_latency_ns: u64,
    latency_ns: u64,
}

/// The fields of htsim's `.topo` fabric description that fabricsim can build.
#[derive(Clone, Debug)]
struct TopoFile {
    nodes: u32,
    tiers: u32,
    podsize: u32,
    tier: [TopoTier; 3],
}

fn parse_topo(path: &str, text: &str) -> R<TopoFile> {
    let flag = "-topo";
    let mut t = TopoFile { nodes: 0, tiers: 0, podsize: 0, tier: [TopoTier { oversub: 1, bundle: 1, ..TopoTier::default() }; 3] };
    let mut current: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() || words[0].starts_with('#') {
            continue;
        }
        let key = words[0].to_ascii_lowercase();
        let at = |m: String| FlagError { flag: flag.into(), message: format!("{path} line {}: {m}", n + 1) };
        // Every count, rate (Gb/s) and latency (ns) stays below 10^9, so that products of two
        // of them (hosts × rate) cannot overflow.
        let value = || -> R<u64> { words.get(1).and_then(|w| w.parse::<u64>().ok()).filter(|&v| v <= 1_000_000_000).ok_or_else(|| at(format!("`{}` needs a whole number in 0..=10^9", clip(words[0])))) };
        let tier = |c: Option<usize>| c.ok_or_else(|| at(format!("`{}` comes before any `Tier N` line", clip(words[0]))));
        match key.as_str() {
            "nodes" => t.nodes = value()? as u32,
            "tiers" => t.tiers = value()? as u32,
            "podsize" => t.podsize = value()? as u32,
            "tier" => {
                let v = value()? as usize;
                if v > 2 {
                    return Err(at(format!("tier {v}: allowed 0, 1, 2")));
                }
                current = Some(v);
            }
            "downlink_speed_gbps" => t.tier[tier(current)?].speed_gbps = value()?,
            "radix_up" => t.tier[tier(current)?].radix_up = value()? as u32,
            "radix_down" => t.tier[tier(current)?].radix_down = value()? as u32,
            "oversubscribed" => t.tier[tier(current)?].oversub = value()? as u32,
            "bundle" => t.tier[tier(current)?].bundle = value()? as u32,
            "switch_latency_ns" => t.tier[tier(current)?].switch_latency_ns = value()?,
            "downlink_latency_ns" => t.tier[tier(current)?].latency_ns = value()?,
            "queue_up" | "queue_down" => {
                return Err(at(format!("`{}`: not supported: per-tier queue sizes are not translated (htsim_uec overrides them with -q or its BDP default anyway); set [switch.ports.*] buffer_bytes in the scenario", words[0])))
            }
            _ => return Err(at(format!("unknown attribute `{}`; allowed: nodes, tiers, podsize, tier, downlink_speed_gbps, radix_up, radix_down, oversubscribed, bundle, switch_latency_ns, downlink_latency_ns", clip(words[0])))),
        }
    }
    let whole = |m: &str| err::<TopoFile>(flag, format!("{path}: {m}"));
    if t.nodes == 0 || t.podsize == 0 || !(2..=3).contains(&t.tiers) {
        return whole("needs `Nodes`, `Tiers` (2 or 3) and `Podsize`");
    }
    for (i, tier) in t.tier.iter().take(t.tiers as usize).enumerate() {
        if tier.speed_gbps == 0 || tier.radix_down == 0 || tier.latency_ns == 0 || (i + 1 < t.tiers as usize && tier.radix_up == 0) || tier.oversub == 0 || tier.bundle == 0 {
            return whole(&format!("tier {i} needs downlink_speed_gbps, radix_down, downlink_latency_ns{} (all above 0)", if i + 1 < t.tiers as usize { ", radix_up" } else { "" }));
        }
    }
    Ok(t)
}

/// The fabric, as htsim builds it and as the scenario spells it.
struct Fabric {
    /// `[topology]` lines.
    lines: Vec<(String, String, String)>,
    /// htsim's diameter latency, ps (one way, links and switches).
    diameter_latency_ps: u64,
    /// Host link rate the NICs run at, Mb/s.
    host_mbps: f64,
    /// Aggregation switches per pod and core (or spine) switches, for `-failed`.
    aggs_per_pod: u32,
    cores: u32,
    tors: u32,
    aggs: u32,
    agg_uplinks: u32,
}

fn us_to_ps(us: f64) -> u64 {
    (us * 1e6).round() as u64
}

/// htsim's default fabric for `nodes` hosts: a k-ary fat tree (3 tiers, k³/4 hosts) or a
/// leaf-spine of radix k (2 tiers, k²/2 hosts).
fn default_fabric(o: &Opts, nodes: u32) -> R<Fabric> {
    let hosts_of = |k: u64| if o.tiers == 3 { k * k * k / 4 } else { k * k / 2 };
    let mut k = 0u64;
    while hosts_of(k) < nodes as u64 {
        k += 1;
    }
    if hosts_of(k) != nodes as u64 || k < 2 || k % 2 != 0 {
        let what = if o.tiers == 3 { "a 3-tier fat tree has k³/4 hosts (k even: 16, 128, 432, 1024, ...)" } else { "a 2-tier leaf-spine has k²/2 hosts (k even: 2, 8, 18, 32, ...)" };
        return err(if o.has("-nodes") { "-nodes" } else { "-tm" }, format!("{nodes} hosts: {what}; htsim refuses other counts too"));
    }
    let k = k as u32;
    let hop = us_to_ps(o.hop_latency_us);
    let sw = us_to_ps(o.switch_latency_us);
    let t = o.tiers as u64;
    let gbps = o.linkspeed_mbps / 1000.0;
    let lines = vec![
        line("kind", if o.tiers == 3 { "\"fat_tree\"" } else { "\"leaf_spine\"" }, format!("{}: htsim's {}, k = {k}", o.src("-tiers", o.tiers, "htsim default 3"), if o.tiers == 3 { "k-ary fat tree" } else { "2-tier fat tree (k ToRs of k/2 hosts, k/2 spines)" })),
        line("hosts", nodes, "the matrix's `Nodes` (-tm / -nodes)"),
        line("link_rate_gbps", show(gbps), o.src("-linkspeed", format!("{} Mb/s", show(o.linkspeed_mbps)), "htsim default HOST_NIC = 100000 Mb/s (datacenter/main.h)")),
        line("link_latency_ns", show(o.hop_latency_us * 1000.0), o.src("-hop_latency", format!("{} µs", show(o.hop_latency_us)), "htsim default 1 µs per link")),
        line("switch_latency_ns", show(o.switch_latency_us * 1000.0), o.src("-switch_latency", format!("{} µs", show(o.switch_latency_us)), "htsim default 0")),
    ];
    let (aggs_per_pod, cores, tors, aggs) = if o.tiers == 3 { (k / 2, k * k / 4, k * k / 2, k * k / 2) } else { (k / 2, k / 2, k, k / 2) };
    Ok(Fabric { lines, diameter_latency_ps: hop * 2 * t + sw * (2 * t - 1), host_mbps: o.linkspeed_mbps, aggs_per_pod, cores, tors, aggs, agg_uplinks: k / 2 })
}

/// The fabric a `.topo` file describes, as fabricsim's explicit shapes.
fn topo_fabric(o: &Opts, path: &str, t: &TopoFile) -> R<Fabric> {
    let flag = "-topo";
    let whole = |m: String| err::<Fabric>(flag, format!("{path}: {m}"));
    let [t0, t1, t2] = t.tier;
    if t.nodes % t.podsize != 0 || t.podsize % t0.radix_down != 0 {
        return whole(format!("Nodes {} must be a multiple of Podsize {}, and Podsize of tier 0's radix_down {}", t.nodes, t.podsize, t0.radix_down));
    }
    if t0.bundle != 1 {
        return whole("tier 0 bundle must be 1 (a host has one cable)".into());
    }
    let pods = t.nodes / t.podsize;
    let tor_uplinks = t.nodes as u64 * t0.speed_gbps / (t1.speed_gbps * t0.oversub as u64);
    let aggs_per_pod = (tor_uplinks / (pods as u64 * t1.radix_down as u64)) as u32;
    if aggs_per_pod == 0 || aggs_per_pod * t1.bundle != t0.radix_up {
        return whole(format!("tier 0 radix_up {} does not match the {aggs_per_pod} aggregation switches per pod the other counts give", t0.radix_up));
    }
    if (o.linkspeed_mbps - t0.speed_gbps as f64 * 1000.0).abs() > 1e-6 {
        return whole(format!(
            "tier 0 runs at {} Gb/s but the NICs run at -linkspeed ({} Mb/s{}): fabricsim's NIC runs at its host link's rate; pass -linkspeed {}",
            t0.speed_gbps,
            show(o.linkspeed_mbps),
            if o.has("-linkspeed") { "" } else { ", htsim's default" },
            t0.speed_gbps * 1000
        ));
    }
    let mut sw = vec![t0.switch_latency_ns, t1.switch_latency_ns];
    if t.tiers == 3 {
        sw.push(t2.switch_latency_ns);
    }
    if sw.iter().any(|&s| s != sw[0]) {
        return whole(format!("not supported: per-tier switch latencies {sw:?} ns: fabricsim has one switch latency"));
    }
    if t.tiers == 3 && t2.latency_ns != t1.latency_ns {
        return whole(format!("not supported: tier 1 and tier 2 downlink latencies differ ({} vs {} ns): fabricsim has one latency for switch-to-switch links (and one for host links)", t1.latency_ns, t2.latency_ns));
    }
    let mut lines = Vec::new();
    let (l0, l1) = (t0.latency_ns, t1.latency_ns);
    let s = sw[0];
    let mut diameter = 2 * (l0 + l1) + 2 * s + s;
    let (cores, tors, aggs, agg_uplinks);
    if t.tiers == 3 {
        if t1.bundle != 1 || t2.bundle != 1 {
            return whole("not supported: bundles (parallel cables) in a 3-tier fat tree; fabricsim's fat tree has one cable per switch pair".into());
        }
        let agg_links = tor_uplinks * t1.speed_gbps / (t2.speed_gbps * t1.oversub as u64);
        cores = (agg_links / t2.radix_down as u64) as u32;
        if cores == 0 || cores % aggs_per_pod != 0 || cores / aggs_per_pod != t1.radix_up {
            return whole(format!("tier 1 radix_up {} does not match the {cores} core switches the other counts give", t1.radix_up));
        }
        diameter += 2 * t2.latency_ns + 2 * s;
        tors = pods * (t.podsize / t0.radix_down);
        aggs = pods * aggs_per_pod;
        agg_uplinks = t1.radix_up;
        lines.push(line("kind", "\"fat_tree\"", "-topo: Tiers 3"));
        lines.push(line("pods", pods, "-topo: Nodes / Podsize"));
        lines.push(line("tors_per_pod", t.podsize / t0.radix_down, "-topo: Podsize / tier 0 radix_down"));
        lines.push(line("aggs_per_pod", aggs_per_pod, "-topo: ToR uplinks / (pods × tier 1 radix_down)"));
        lines.push(line("hosts_per_tor", t0.radix_down, "-topo: tier 0 radix_down"));
        lines.push(line("cores", cores, "-topo: aggregation uplinks / tier 2 radix_down"));
    } else {
        if pods != 1 {
            return whole(format!("a 2-tier fabric is one pod: Podsize must equal Nodes ({})", t.nodes));
        }
        cores = aggs_per_pod;
        tors = t.nodes / t0.radix_down;
        aggs = aggs_per_pod;
        agg_uplinks = 0;
        lines.push(line("kind", "\"leaf_spine\"", "-topo: Tiers 2"));
        lines.push(line("tors", tors, "-topo: Nodes / tier 0 radix_down"));
        lines.push(line("hosts_per_tor", t0.radix_down, "-topo: tier 0 radix_down"));
        lines.push(line("spines", aggs_per_pod, "-topo: ToR uplinks / tier 1 radix_down"));
        lines.push(line("links_per_spine", t1.bundle, "-topo: tier 1 bundle"));
    }
    lines.push(line("link_rate_gbps", t1.speed_gbps, "-topo: tier 1 downlink_speed_gbps"));
    lines.push(line("host_link_rate_gbps", t0.speed_gbps, "-topo: tier 0 downlink_speed_gbps"));
    lines.push(line("tor_uplink_rate_gbps", t1.speed_gbps, "-topo: tier 1 downlink_speed_gbps"));
    if t.tiers == 3 {
        lines.push(line("agg_uplink_rate_gbps", t2.speed_gbps, "-topo: tier 2 downlink_speed_gbps"));
    }
    lines.push(line("link_latency_ns", l1, "-topo: tier 1 downlink_latency_ns (htsim ignores -hop_latency with -topo)"));
    lines.push(line("host_link_latency_ns", l0, "-topo: tier 0 downlink_latency_ns"));
    lines.push(line("switch_latency_ns", s, "-topo: switch_latency_ns (htsim ignores -switch_latency with -topo)"));
    Ok(Fabric { lines, diameter_latency_ps: diameter * 1000, host_mbps: t0.speed_gbps as f64 * 1000.0, aggs_per_pod, cores, tors, aggs, agg_uplinks })
}

/// Translates `argv` (the binary first) into a scenario TOML.
pub fn translate(argv: &[String], ctx: &Context) -> R<String> {
    let binary = argv.first().ok_or_else(|| FlagError { flag: "command line".into(), message: "empty: give the htsim command line, e.g. 'htsim_uec -tm perm.cm'".into() })?;
    let base = Path::new(binary).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let flavour = match base.as_str() {
        "htsim_uec" => Flavour::Uec,
        "htsim_eqds" => Flavour::Eqds,
        _ => return err(binary, "the command line must start with the htsim binary, htsim_uec or htsim_eqds (any folder); its name picks which flags apply"),
    };
    let o = parse(flavour, &argv[1..])?;
    let doc = build(&o, argv, ctx)?;
    validate(&doc, &o, ctx)?;
    Ok(doc.text)
}

fn read(flag: &str, name: &str, ctx: &Context) -> R<(PathBuf, String)> {
    ctx.read(name).or_else(|m| err(flag, m))
}

/// Writes the scenario for the parsed flags.
fn build(o: &Opts, argv: &[String], ctx: &Context) -> R<Doc> {
    let uec = o.flavour == Flavour::Uec;
    let tm = o.tm.as_deref().ok_or_else(|| FlagError { flag: "-tm".into(), message: "missing: htsim reads the matrix from standard input without it; fabricsim needs the file (-tm FILE.cm)".into() })?;
    let (tm_path, text) = read("-tm", tm, ctx)?;
    let nodes = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Nodes").map(str::trim).and_then(|n| n.parse::<u32>().ok()))
        .ok_or_else(|| FlagError { flag: "-tm".into(), message: format!("{tm}: an htsim matrix starts with `Nodes N`") })?;
    if let Some(n) = o.nodes.filter(|&n| n != 0 && n != nodes) {
        return err("-nodes", format!("{n}: the matrix {tm} is for {nodes} nodes (htsim refuses the mismatch too)"));
    }
    parse_htsim_cm(&text, tm, nodes).map_err(|e| FlagError { flag: "-tm".into(), message: e.to_string() })?;
    let fabric = match &o.topo {
        Some(name) => {
            let (_, t) = read("-topo", name, ctx)?;
            let topo = parse_topo(name, &t)?;
            if topo.nodes != nodes {
                return err("-topo", format!("{name} has {} nodes but the matrix {tm} {nodes} (htsim refuses the mismatch too)", topo.nodes));
            }
            if topo.tier[0].oversub * if topo.tiers > 2 { topo.tier[1].oversub } else { 1 } > 1 && !o.sender && !o.force_disable_os_cc {
                return err("-topo", "not supported: on an oversubscribed fabric htsim runs its receiver oversubscription controller under receiver-only CC; add -force_disable_oversubscribed_cc to run without it");
            }
            topo_fabric(o, name, &topo)?
        }
        None => default_fabric(o, nodes)?,
    };

    // calculate_rtt: both the diameter latency and one data and one ACK serialisation per hop
    // at the host rate, in htsim's double arithmetic (truncated to ps as htsim stores it).
    let mtu = o.mtu as u64;
    let gbps = fabric.host_mbps / 1000.0;
    let diameter = 2.0 * o.tiers as f64;
    let rtt_ps = (2.0 * fabric.diameter_latency_ps as f64 + (mtu * 8) as f64 / gbps * diameter * 1000.0 + (64.0 * 8.0) / gbps * diameter * 1000.0) as u64;
    // htsim's linkspeed is an integer of b/s; the BDP multiplies by its bytes per second.
    let bytes_per_s = ((fabric.host_mbps * 1e6) as u64 / 8) as f64;
    let bdp_bytes = rtt_ps as f64 / 1e12 * bytes_per_s;
    let bdp_pkt = (bdp_bytes / mtu as f64).ceil() as u64;
    let trimming = !o.disable_trim;

    // Queue in packets (memFromPkt: packets × mtu bytes).
    let (queue_pkts, queue_src) = match (o.flavour, o.q) {
        (_, Some(q)) => (q as u64, format!("-q {q}")),
        (Flavour::Uec, None) => {
            let f = o.q_bdp_factor.unwrap_or(if trimming { 1 } else { 5 });
            let why = if o.q_bdp_factor.is_some() { format!("-queue_size_bdp_factor {f}") } else { format!("-q absent: htsim_uec's default {f} BDP {}", if trimming { "with trimming" } else { "without trimming" }) };
            (bdp_pkt * f as u64, format!("{why}; BDP = ceil({:.4} µs × {} Gb/s / {mtu} B) = {bdp_pkt} packets", rtt_ps as f64 / 1e6, show(gbps)))
        }
        (Flavour::Eqds, None) => (35, "-q absent: htsim_eqds's default 35 packets".to_string()),
    };
    let queue_bytes = queue_pkts * mtu;
    // fabricsim's limits on `switch.buffer_pkts` (2^20 packets) and on any buffer (1 TiB).
    if queue_pkts > 1 << 20 || queue_bytes > crate::units::MAX_BUFFER_BYTES {
        let flag = if o.q.is_some() { "-q" } else if o.q_bdp_factor.is_some() { "-queue_size_bdp_factor" } else { "-hop_latency" };
        return err(flag, format!("the queue comes to {queue_pkts} packets ({queue_bytes} B): fabricsim's switch.buffer_pkts allows at most 1048576 packets"));
    }
    // ECN thresholds in packets: htsim_uec marks by default at 20 % / 80 % of the BDP (not of
    // the queue); htsim_eqds only with -ecn.
    let ecn = match (o.ecn, uec) {
        (Some((lo, hi)), _) => Some((lo as u64, hi as u64, format!("-ecn {lo} {hi} (packets)"))),
        (None, true) => {
            let (lo, hi) = ((bdp_pkt as f64 * 0.2).ceil() as u64, (bdp_pkt as f64 * 0.8).ceil() as u64);
            Some((lo, hi, format!("-ecn absent: htsim_uec marks from ceil(0.2 × BDP) = {lo} to ceil(0.8 × BDP) = {hi} packets")))
        }
        (None, false) => None,
    };
    if let Some((_, hi, _)) = &ecn {
        if hi * mtu > queue_bytes {
            return err("-ecn", format!("the high threshold ({hi} packets) exceeds the queue ({queue_pkts} packets; htsim asserts on it)"));
        }
    }
    // Minimum RTO: 15 µs (htsim_eqds 150 µs) plus six drains of a full queue at the host rate.
    let rto_base = if uec { 15.0 } else { 150.0 };
    let rto_us = rto_base + queue_bytes as f64 * 6.0 * 8.0 * 1e6 / (fabric.host_mbps * 1e6);

    let mut out = Doc::default();
    let w = &mut out;
    let _ = writeln!(w, "# Scenario translated by `fabricsim from-htsim` from:");
    let _ = writeln!(w, "#   {}", argv.join(" "));
    let _ = writeln!(w, "# Each key names the htsim flag it comes from, or says which htsim default it makes explicit");
    let _ = writeln!(w, "# (uet-htsim @ 40ccb05, sim/datacenter/main_{}.cpp; experiments/htsim-parity/SPEC.md §9).", if uec { "uec" } else { "eqds" });
    let _ = writeln!(w, "# htsim's network RTT: {:.6} µs (calculate_rtt), BDP {} packets of {mtu} B.", rtt_ps as f64 / 1e6, bdp_pkt);
    if !o.ignored.is_empty() {
        let _ = writeln!(w, "# Ignored (htsim logging only): {}", o.ignored.join(", "));
    }
    let stem = Path::new(tm).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let _ = writeln!(w);
    emit(w, None, &[line("name", quote(&format!("{} {stem}", o.flavour.binary())), "copied into summary.json"), line("seed", o.seed, o.src("-seed", o.seed, "htsim default 13 (the random streams differ: the same seed does not give the same draws)"))]);
    emit(w, Some("topology"), &fabric.lines);

    let mut sw = vec![
        line("buffer_pkts", queue_pkts, queue_src),
        line("ecn", ecn.is_some(), if uec { "htsim_uec marks ECN on every switch port" } else if o.ecn.is_some() { "-ecn given" } else { "-ecn absent: htsim_eqds does not mark" }),
    ];
    if let Some((lo, hi, why)) = &ecn {
        sw.push(line("ecn_kmin_bytes", lo * mtu, format!("{why}; × {mtu} B")));
        sw.push(line("ecn_kmax_bytes", hi * mtu, "RED ramp to probability 1 at the high threshold"));
        sw.push(line("ecn_pmax", "1.0", "htsim's composite queue marks with certainty above the high threshold"));
        sw.push(line("ecn_mark_at", "\"dequeue\"", "htsim decides at dequeue on the bytes left behind"));
    }
    sw.push(line("trimming", trimming, if uec { o.src("-disable_trim", "", "htsim trims") } else { "htsim_eqds always trims".to_string() }));
    sw.push(line("control_wrr_weight", 0, "htsim's composite queue serves headers first (100000:1)"));
    sw.push(line("control_lane", "\"separate\"", "htsim's header queue is its own lane ..."));
    sw.push(line("control_lane_factor", 2, "... of 2 × the data queue; a full one drops"));
    sw.push(line("lb", "\"ecmp\"", o.src("-strat", "ecmp_host", "htsim default ecmp_host: switches hash the host's entropy")));
    emit(w, Some("switch"), &sw);
    // htsim_uec leaves ECN off ToR downlinks when the receiver paces them (RCCC);
    // htsim_eqds's -ecn never applies there.
    if ecn.is_some() && (o.receiver || !uec) {
        let why = if uec { "htsim_uec: no ECN on ToR downlinks when RCCC runs (set_ecn_parameters)" } else { "htsim_eqds: -ecn leaves ToR downlinks unmarked (set_ecn_parameters)" };
        emit(w, Some("switch.ports.tor_down"), &[line("ecn", false, why)]);
    }

    let mut tr = vec![
        line("mtu_bytes", mtu, o.src("-mtu", mtu, &format!("{} default 4150 B on the wire", o.flavour.binary()))),
        line("header_bytes", 64, "htsim's 64 B header (payload = mtu − 64); also the trimmed size (-trimsize 64)"),
        line("ack_bytes", 64, "htsim's ACK size (ACKSIZE)"),
        line("ack_every", 1, "no per-packet count: the byte threshold below decides"),
    ];
    let sack = match (o.sack_threshold, uec, o.sender) {
        (Some(s), _, _) => (s, format!("-sack_threshold {s}")),
        (None, true, _) => (16_384, "-sack_threshold absent: htsim_uec ACKs every 16384 B".to_string()),
        (None, false, true) => (4_000, "htsim_eqds with a sender CC ACKs every 4000 B".to_string()),
        (None, false, false) => (16_384, "htsim_eqds ACKs every 16384 B".to_string()),
    };
    if sack.0 as u64 > 64 * mtu {
        return err("-sack_threshold", format!("{} B{}: fabricsim's SACK bitmap covers 64 packets, so the threshold may be at most 64 × {mtu} B = {} (-mtu {mtu})", sack.0, if o.sack_threshold.is_none() { " (htsim's default)" } else { "" }, 64 * mtu));
    }
    tr.push(line("ack_coalesce_bytes", sack.0, sack.1));
    tr.push(line("ack_on_ce", true, "htsim ACKs a CE-marked packet at once"));
    tr.push(line("rto_us", format!("{rto_us:.6}"), format!("htsim's minimum RTO: {} µs + 6 × {queue_bytes} B queue drains at {} Gb/s", show(rto_base), show(gbps))));
    tr.push(line("reliability", "\"sack\"", "htsim's SACK bitmap + NACKs of trimmed packets + RTO"));
    emit(w, Some("transport"), &tr);

    // Congestion control.
    let cwnd_bdp = o.cwnd.map(|c| (c as f64 * mtu as f64 / bdp_bytes, c));
    if let Some((b, c)) = cwnd_bdp.filter(|(b, _)| uec && !(0.001..=1000.0).contains(b)) {
        return err("-cwnd", format!("{c} packets is {b:.4} BDPs of this fabric; allowed 0.001..=1000 BDPs"));
    }
    let cwnd_note = |c: Option<(f64, u32)>, d: &str| match c {
        Some((_, c)) => format!("-cwnd {c}: {c} × {mtu} B / BDP {:.0} B", bdp_bytes),
        None => format!("-cwnd absent: {d}"),
    };
    let mut cc = Vec::new();
    let mut credit = Vec::new();
    if uec {
        if o.sender {
            match o.algo {
                SenderAlgo::Nscc => {
                    cc.push(line("name", "\"nscc\"", if o.has("-sender_cc_algo") { "-sender_cc_algo nscc" } else { "NSCC: htsim_uec's default sender CC" }));
                    match o.target_q_delay_us {
                        Some(t) => cc.push(line("target_qdelay_us", show(t), format!("-target_q_delay {}", show(t)))),
                        None => cc.push(line("target_qdelay_rtt", if trimming { "0.75" } else { "1.0" }, format!("-target_q_delay absent: {} × network RTT {}", if trimming { "0.75" } else { "1" }, if trimming { "with trimming" } else { "without trimming" }))),
                    }
                    let g = o.qa_gate.filter(|&g| g >= 0).unwrap_or(3);
                    cc.push(line("qa_gate", g, o.src("-qa_gate", o.qa_gate.unwrap_or(-1), "htsim default 3")));
                    cc.push(line("max_window_bdp", "1.5", "initNscc: 1.5 × BDP"));
                    cc.push(line("initial_window_bdp", cwnd_bdp.map_or("1.5".to_string(), |(b, _)| format!("{b:.6}")), cwnd_note(cwnd_bdp, "the max window")));
                    cc.push(line("base_rtt", if o.accurate_base_rtt { "\"path\"" } else { "\"network\"" }, o.src("-enable_accurate_base_rtt", "", "the network RTT, lowered by smaller samples")));
                }
                SenderAlgo::Dctcp => {
                    cc.push(line("name", "\"dctcp\"", "-sender_cc_algo dctcp (fabricsim's DCTCP; htsim's UEC DCTCP is an approximation of it)"));
                    cc.push(line("init_window_bdp", cwnd_bdp.map_or("1.5".to_string(), |(b, _)| format!("{b:.6}")), cwnd_note(cwnd_bdp, "initNscc: 1.5 × BDP")));
                    cc.push(line("max_window_bdp", "1.5", "initNscc: 1.5 × BDP"));
                }
                SenderAlgo::Constant => {
                    cc.push(line("name", "\"fixed\"", "-sender_cc_algo constant: the window never moves"));
                    match o.cwnd {
                        Some(c) => cc.push(line("window_bytes", c as u64 * mtu, format!("-cwnd {c} × {mtu} B"))),
                        None => cc.push(line("window_bdp", "1.5", "-cwnd absent: initNscc's 1.5 × BDP")),
                    }
                }
            }
        } else {
            cc.push(line("name", "\"line_rate\"", "-receiver_cc_only: no sender window, the receiver's credits pace"));
            cc.push(line("fraction", "1.0", "the NIC's full rate"));
        }
        if o.receiver {
            credit.push(line("name", "\"rccc\"", if o.sender { "-receiver_cc: RCCC beside NSCC" } else { "-receiver_cc_only: RCCC" }));
            credit.push(line("unsolicited_bdp", "1.5", "initRccc: speculative credit = the configured max window, 1.5 × BDP"));
            credit.push(line("credit_per_pull", 4, "UecSink: 4 MTU per PULL"));
            credit.push(line("pull_rate", "0.99", "main_uec: UecPullPacer at 0.99 × line rate"));
            credit.push(line("stop_speculating", true, "unspent speculative credit is dropped at the first feedback"));
        }
    } else {
        if o.sender {
            // eqds.cpp's own SMaRTT constants (neither SPEC §7's spcl/HTSIM preset nor all of
            // the paper's): gains per ACK and unscaled, a 7 µs target queueing delay, the
            // window capped at -cwnd packets.
            let c = o.cwnd.unwrap_or(64);
            let wnd = c as u64 * mtu;
            cc.push(line("name", "\"smartt\"", "-sender_cc: htsim_eqds's SMaRTT sender (eqds.cpp updateCwndOnAck_SmaRTT)"));
            cc.push(line("fi", "0.25", "EqdsSrc::_beta: fair increase 0.25 × mtu × acked / cwnd"));
            cc.push(line("mi", "2.0", "EqdsSrc::_mi"));
            cc.push(line("fd", "0.8", "EqdsSrc::_gamma_g: fair decrease"));
            cc.push(line("md", "1.0", "EqdsSrc::_md"));
            cc.push(line("scale_gains", false, "eqds.cpp does not scale the gains by the BDP"));
            cc.push(line("md_cap_includes_fd", false, "the MD term is capped at the acked bytes, the FD term comes on top"));
            cc.push(line("qa_scaling", "1.0", "QuickAdapt to 1.0 × the bytes acked in the last epoch"));
            cc.push(line("target_qdelay_us", "7.0", "EqdsSrc::_target_Qdelay = 7 µs over each flow's base RTT"));
            cc.push(line("initial_window_bytes", wnd, format!("{}: _cwnd = _maxwnd = {c} × {mtu} B on every path", o.src("-cwnd", c, "htsim_eqds default 64 packets"))));
            cc.push(line("max_window_bytes", wnd, "the same cap"));
            cc.push(line("wtd", o.exp_avg_ecn, o.src("-use_exp_avg_ecn", u8::from(o.exp_avg_ecn), "htsim_eqds default 0: no Wait-To-Decrease average")));
        } else {
            cc.push(line("name", "\"line_rate\"", "EQDS: no sender window, the receiver's PULLs pace"));
            cc.push(line("fraction", "1.0", "the NIC's full rate"));
        }
        if o.receiver {
            let c = o.cwnd.unwrap_or(64);
            credit.push(line("name", "\"eqds\"", "htsim_eqds: receiver-driven by default"));
            credit.push(line("unsolicited_bytes", c as u64 * mtu, format!("{}: the unsolicited window is {c} × {mtu} B", o.src("-cwnd", c, "htsim_eqds default 64 packets"))));
            credit.push(line("pull_rate", "0.99", "main_eqds: EqdsPullPacer at 0.99 × line rate"));
        }
    }
    emit(w, Some("transport.cc"), &cc);
    if !credit.is_empty() {
        emit(w, Some("transport.credit"), &credit);
    }

    // Host path selection.
    let paths = o.paths;
    let psrc = o.src("-paths", paths, "htsim default 64 entropies");
    let lb = if uec {
        match o.lb {
            LbAlgo::Mixed => vec![line("name", "\"mixed\"", o.src("-load_balancing_algo", "mixed", "htsim default mixed")), line("entropies", paths, psrc)],
            LbAlgo::Bitmap => vec![line("name", "\"bitmap\"", "-load_balancing_algo bitmap"), line("entropies", paths, psrc)],
            LbAlgo::Oblivious => vec![
                line("name", "\"spray\"", "-load_balancing_algo oblivious"),
                line("order", "\"permutation\"", "every entropy once per pass (htsim walks i XOR x; SPEC §3)"),
                line("entropies", paths, psrc),
            ],
            LbAlgo::Reps => vec![
                line("name", "\"reps\"", "-load_balancing_algo reps (htsim's frozen mode after timeouts is not modelled)"),
                line("entropies", paths, psrc),
                line("cache_size", 8, "htsim's REPS buffer holds 8 entropies (repsBufferSize)"),
                line("explore_bdp", 0, "htsim's REPS draws at random while its buffer is empty, no exploration phase"),
                line("fallback", "\"random\"", "empty buffer: a uniformly random entropy"),
                line("cache", "\"fifo\"", "earliest fresh entropy first"),
            ],
            LbAlgo::RepsLegacy => vec![
                line("name", "\"reps\"", "-load_balancing_algo reps_legacy (approximation, SPEC §3)"),
                line("entropies", paths, psrc),
                line("cache_size", paths, "one slot per entropy"),
                line("explore_bdp", "1.5", "the first window explores"),
                line("fallback", "\"random\"", "empty FIFO: a random entropy"),
                line("cache", "\"fifo\"", "recycled clean entropies, oldest first"),
            ],
        }
    } else if o.use_reps {
        // eqds.cpp's REPS walks the entropies for the first window, then takes `_next_pathid`
        // for every packet: a member no code sets or initialises, so in practice one fixed
        // entropy per flow (measured: htsim's FCT tail matches fabricsim's ECMP, not spraying;
        // RESULTS.md). We translate what runs, not what was meant.
        vec![
            line("name", "\"ecmp\"", "-use_reps 1: eqds.cpp never sets _next_pathid, so after the first window every packet of a flow takes the same (uninitialised) entropy"),
        ]
    } else {
        vec![
            line("name", "\"bitmap\"", "htsim_eqds sprays with its skip bitmap (XOR walk, penalty 1)"),
            line("entropies", paths, psrc),
            line("ecn_penalty", 1, "penalizePath(ev, 1) on an ECN echo"),
            line("nack_penalty", 1, "penalizePath(ev, 1) on a NACK"),
            line("max_penalty", 1, "EqdsSrc::_max_penalty = 1"),
        ]
    };
    emit(w, Some("transport.lb"), &lb);

    // Workload: the matrix, named relative to where the scenario goes.
    let file = ctx.file_name(tm, &tm_path);
    emit(w, Some("workload"), &[line("kind", "\"flow_list\"", "-tm: an htsim connection matrix"), line("file", quote(&file), format!("-tm {tm}")), line("format", "\"htsim_cm\"", "htsim's .cm format")]);

    // -failed: links at a quarter of their rate, queue and ECN scaled alike (SPEC §6).
    if o.failed > 0 {
        // fabricsim's slowest link is 1 Mb/s, so a quarter of the failed links' rate must
        // reach it (a .topo file's switch links run at whole Gb/s).
        if o.topo.is_none() && fabric.host_mbps * 0.25 < 1.0 {
            return err("-failed", format!("{}: a failed link runs at a quarter of -linkspeed ({} Mb/s), below fabricsim's slowest link of 1 Mb/s; with -failed, allowed -linkspeed 4..=10^9 Mb/s", o.failed, show(fabric.host_mbps)));
        }
        let mut names = Vec::new();
        if o.tiers == 3 {
            // htsim fails core→agg of agg a's l-th uplink when l + a × aggs_per_pod < N;
            // fabricsim wires agg position p's l-th uplink to core p × (cores / aggs_per_pod) + l.
            let ups = fabric.cores / fabric.aggs_per_pod;
            for a in 0..fabric.aggs {
                for l in 0..fabric.agg_uplinks {
                    if l + a * fabric.aggs_per_pod < o.failed {
                        names.push(format!("agg{a}-core{}", (a % fabric.aggs_per_pod) * ups + l));
                    }
                }
            }
        } else {
            if o.failed > fabric.cores {
                return err("-failed", format!("{}: a ToR has {} uplinks; allowed 0..={}", o.failed, fabric.cores, fabric.cores));
            }
            for t in 0..fabric.tors {
                for s in 0..o.failed {
                    names.push(format!("tor{t}-spine{s}"));
                }
            }
        }
        if names.is_empty() || o.tiers == 3 && o.failed > fabric.aggs * fabric.aggs_per_pod {
            return err("-failed", format!("{}: allowed 0..={} on this fabric", o.failed, fabric.aggs * fabric.aggs_per_pod));
        }
        let list = names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(", ");
        emit(
            w,
            Some("topology.failures"),
            &[
                line("links", format!("[{list}]"), format!("-failed {}: htsim's first {} (fat_tree_topology.cpp)", o.failed, if o.tiers == 3 { "agg-core cables by global index" } else { "spines of every ToR" })),
                line("model", "\"degraded\"", "still routed, slower"),
                line("degraded_rate_factor", "0.25", "htsim's _failed_link_ratio"),
                line("direction", if o.tiers == 3 { "\"down\"" } else { "\"both\"" }, if o.tiers == 3 { "3 tiers: only the core→agg queue is slowed" } else { "2 tiers: both directions" }),
                line("scale_queue", true, "htsim scales the slowed queue and its ECN thresholds too"),
            ],
        );
    }
    if o.end_us == 0 {
        // htsim's EventList takes an end time of 0 as "no end".
        let _ = writeln!(w, "\n[run]\n# end_time_us unset: -end 0 (htsim runs until every flow is done)");
    } else {
        emit(w, Some("run"), &[line("end_time_us", o.end_us, o.src("-end", o.end_us, "htsim default 1000 µs: flows still running then are reported unfinished"))]);
    }
    Ok(out)
}

/// Runs on the translated scenario the validation `fabricsim check` runs, so that no command
/// line translates to a scenario `check` refuses. A refusal is reported under the htsim flag
/// that wrote the refused key, found in that key's comment (or the closest enclosing key's).
fn validate(doc: &Doc, o: &Opts, ctx: &Context) -> R<()> {
    let known = if o.flavour == Flavour::Uec { UEC_FLAGS } else { EQDS_FLAGS };
    match refusal(doc, ctx, |w| known.contains(&w), "command line") {
        None => Ok(()),
        Some((flag, message)) => err(&flag, message),
    }
}
