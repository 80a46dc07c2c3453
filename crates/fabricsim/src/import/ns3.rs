//! `fabricsim from-ns3`: the config file of the HPCC ns-3 RDMA simulator, with the topology and
//! flow files it names, translated into a fabricsim scenario TOML in which every key says which
//! config key, or which simulator default, it comes from.
//!
//! **Follows:** the simulator's config parser and setup, `simulation/scratch/third.cc` of
//! `alibaba-edu/High-Precision-Congestion-Control` @ 9f4be2a (which keys exist, their defaults,
//! the per-rate ECN maps, the PFC headroom and α, the window of the largest BDP), with the
//! models it configures (`src/point-to-point/model/rdma-hw.cc`, `switch-mmu.cc`,
//! `switch-node.cc`, `qbb-net-device.cc`, `network/utils/custom-header.cc`); and
//! `experiments/ns3-parity/RESULTS.md` for the mapping checked against that simulator. Read to
//! understand, nothing copied.
//!
//! **What it models:** `CC_MODE` 1 (the simulator's Mellanox DCQCN) as `dcqcn`, 7 (TIMELY) as
//! `timely`, 8 (DCTCP) as `dctcp`; its go-back-N RoCE receiver (`go_back_n`, a NACK repeated
//! after the 500 µs of `RdmaHw`'s NACK interval); its lossless switches (`[switch.pfc]`: the
//! `BUFFER_SIZE` MiB shared buffer, the dynamic threshold α = 1/8, headroom 3 × rate × delay
//! per port, a 3 KiB resume offset); ECN at dequeue from `KMIN_MAP` / `KMAX_MAP` / `PMAX_MAP`
//! (KB of 1000 B), per link rate as `[[switch.by_link_rate]]` where rates differ; the packet
//! as `PACKET_PAYLOAD_SIZE` + 48 B of headers (`CustomHeader`: Ethernet 14, IPv4 20, UDP 8,
//! PG 2, sequence 4; TIMELY's INT timestamp adds 8) and 60 B ACKs; the window of `HAS_WIN` /
//! `VAR_WIN` (1 BDP, scaled by rate / line rate); the topology file as a one-switch star or a
//! 2-tier leaf-spine (below); the flow file read by `flow_list` (`format = "ns3"`), node ids
//! mapped to hosts through the topology file as the simulator numbers them.
//!
//! **Topologies.** fabricsim builds fixed shapes; the topology file must be one of them: every
//! host (a node the second line does not list) has one cable, to a switch; the switches with
//! hosts (ToRs) have as many each, every other switch (spine) has one cable (or the same number
//! of parallel cables) to every ToR and none to another spine; one rate and one delay on host
//! cables, one on ToR–spine cables; no per-link error rate. One ToR and no spine is the
//! simulator's example star (fabricsim adds an idle spine: its leaf-spine has one). The hosts
//! must be numbered ToR by ToR, as fabricsim numbers them, because `flow_list` maps a node id
//! to the host of its rank among the hosts. Anything else is refused naming `TOPOLOGY_FILE`.
//!
//! **Paths:** `TOPOLOGY_FILE` and `FLOW_FILE` are relative to the folder the simulator runs in
//! ([`Context::cwd`]; the simulator's example runs from `simulation/`); the scenario names them
//! relative to the folder it is written to.
//!
//! **Differences:** keys that only steer the simulator's output (`TRACE_FILE`,
//! `TRACE_OUTPUT_FILE`, `FCT_OUTPUT_FILE`, `PFC_OUTPUT_FILE`, `QLEN_MON_*`, `ENABLE_TRACE`) are
//! accepted and listed as ignored; so are keys the simulator reads but nothing uses
//! (`USE_DYNAMIC_PFC_THRESHOLD`, `DATA_RATE`, `LINK_DELAY`, `PAUSE_TIME` above 0) and keys of
//! controllers the mode does not run (HPCC's under DCQCN, ...). What fabricsim models
//! differently is listed in the scenario's head (ns-3's DCQCN cuts on a timer, fabricsim's on
//! each CNP; ns-3's DCTCP is rate-based; ns-3's switches queue ACKs with the data). Unknown
//! keys (the simulator skips them silently), malformed values, absent keys whose simulator
//! default is broken (`EWMA_GAIN`'s `1 / 16` is 0 in integer arithmetic; `RP_TIMER`,
//! `RATE_AI`, `RATE_HAI` are unset) and values fabricsim cannot express exit with an error
//! naming the key and what is allowed. Every translation is validated as `fabricsim check`
//! validates a scenario, a refusal traced back through the refused key's comment to the
//! config key that wrote it.
//!
//! **ConWeave's dialect.** The config of ConWeave's simulator (conweave-project/conweave-ns3 @
//! 236a801, `scratch/network-load-balance.cc`, an ns-3.19 fork of this one) is recognised by
//! any key only that simulator reads (`LB_MODE`, `ENABLE_PFC`, `FLOWGEN_START_TIME`,
//! `RANDOM_SEED`, ...; [`CONWEAVE_ONLY`]); a key only the HPCC simulator reads is then refused.
//! What changes: `LB_MODE` picks `switch.lb` (0 ECMP as `ns3_ecmp`, the same hash; 2 DRILL,
//! 3 CONGA, 6 LetFlow with the constants the scratch file hard-codes; 9, ConWeave itself, is
//! refused); the flow file has no `DPORT` (`format = "conweave"`, ports numbered per source
//! and per destination); its switches queue ACKs ahead of data (it sets `AckHighPrio` 1);
//! its Broadcom-style `SwitchMmu` pauses at α = 1/16 of the free buffer with 2 × rate ×
//! delay + 2 MTU of headroom, and `ENABLE_PFC 0` runs lossy; the run ends 10 s after
//! `FLOWGEN_STOP_TIME`; `RANDOM_SEED` is the seed; `ENABLE_IRN 1` is refused. Its defaults
//! differ where the scratch file's globals do (`RP_TIMER` 300, `FAST_RECOVERY_TIMES` 1).

pub use super::Context;
use super::{emit, line, quote, refusal, show, Doc, Line};
use crate::excerpt::clip;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::Path;

/// A config key, or its value, that cannot be translated: `key` names it as the config spells
/// it (`TOPOLOGY_FILE` for a problem of the topology file, `config` for the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError {
    /// The config key (`CC_MODE`), or `config`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ns-3 config key `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for KeyError {}

type R<T> = std::result::Result<T, KeyError>;

fn err<T>(key: &str, message: impl Into<String>) -> R<T> {
    Err(KeyError { key: key.to_string(), message: message.into() })
}

/// Every key both simulators read (`third.cc` and ConWeave's `network-load-balance.cc`), with
/// the number of values after it (`None`: a map, a count and that many pairs).
const KEYS: &[(&str, Option<usize>)] = &[
    ("ENABLE_QCN", Some(1)),
    ("USE_DYNAMIC_PFC_THRESHOLD", Some(1)),
    ("CLAMP_TARGET_RATE", Some(1)),
    ("PAUSE_TIME", Some(1)),
    ("DATA_RATE", Some(1)),
    ("LINK_DELAY", Some(1)),
    ("PACKET_PAYLOAD_SIZE", Some(1)),
    ("L2_CHUNK_SIZE", Some(1)),
    ("L2_ACK_INTERVAL", Some(1)),
    ("L2_BACK_TO_ZERO", Some(1)),
    ("TOPOLOGY_FILE", Some(1)),
    ("FLOW_FILE", Some(1)),
    ("ALPHA_RESUME_INTERVAL", Some(1)),
    ("RP_TIMER", Some(1)),
    ("EWMA_GAIN", Some(1)),
    ("FAST_RECOVERY_TIMES", Some(1)),
    ("RATE_AI", Some(1)),
    ("RATE_HAI", Some(1)),
    ("ERROR_RATE_PER_LINK", Some(1)),
    ("CC_MODE", Some(1)),
    ("RATE_DECREASE_INTERVAL", Some(1)),
    ("MIN_RATE", Some(1)),
    ("FCT_OUTPUT_FILE", Some(1)),
    ("HAS_WIN", Some(1)),
    ("GLOBAL_T", Some(1)),
    ("MI_THRESH", Some(1)),
    ("VAR_WIN", Some(1)),
    ("FAST_REACT", Some(1)),
    ("U_TARGET", Some(1)),
    ("INT_MULTI", Some(1)),
    ("RATE_BOUND", Some(1)),
    ("DCTCP_RATE_AI", Some(1)),
    ("PFC_OUTPUT_FILE", Some(1)),
    ("LINK_DOWN", Some(3)),
    ("KMAX_MAP", None),
    ("KMIN_MAP", None),
    ("PMAX_MAP", None),
    ("BUFFER_SIZE", Some(1)),
    ("QLEN_MON_FILE", Some(1)),
    ("QLEN_MON_START", Some(1)),
    ("QLEN_MON_END", Some(1)),
    ("MULTI_RATE", Some(1)),
    ("SAMPLE_FEEDBACK", Some(1)),
];

/// Keys only the HPCC simulator's `third.cc` reads.
const HPCC_KEYS: &[(&str, Option<usize>)] = &[
    ("TRACE_FILE", Some(1)),
    ("TRACE_OUTPUT_FILE", Some(1)),
    ("SIMULATOR_STOP_TIME", Some(1)),
    ("ACK_HIGH_PRIO", Some(1)),
    ("ENABLE_TRACE", Some(1)),
    ("PINT_LOG_BASE", Some(1)),
    ("PINT_PROB", Some(1)),
];

/// Keys only ConWeave's `network-load-balance.cc` reads: any of them makes the config
/// ConWeave's.
pub const CONWEAVE_ONLY: &[(&str, Option<usize>)] = &[
    ("FLOW_INPUT_FILE", Some(1)),
    ("CNP_OUTPUT_FILE", Some(1)),
    ("EST_ERROR_MON_FILE", Some(1)),
    ("LB_MODE", Some(1)),
    ("SW_MONITORING_INTERVAL", Some(1)),
    ("CONWEAVE_TX_EXPIRY_TIME", Some(1)),
    ("CONWEAVE_REPLY_TIMEOUT_EXTRA", Some(1)),
    ("CONWEAVE_EXTRA_VOQ_FLUSH_TIME", Some(1)),
    ("CONWEAVE_PATH_PAUSE_TIME", Some(1)),
    ("CONWEAVE_DEFAULT_VOQ_WAITING_TIME", Some(1)),
    ("ENABLE_PFC", Some(1)),
    ("FLOWGEN_START_TIME", Some(1)),
    ("FLOWGEN_STOP_TIME", Some(1)),
    ("VOQ_MON_FILE", Some(1)),
    ("VOQ_MON_DETAIL_FILE", Some(1)),
    ("UPLINK_MON_FILE", Some(1)),
    ("CONN_MON_FILE", Some(1)),
    ("LOAD", Some(1)),
    ("ENABLE_IRN", Some(1)),
    ("RANDOM_SEED", Some(1)),
];

/// Which simulator's config: the HPCC simulator's `third.cc` or ConWeave's fork.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Dialect {
    #[default]
    Hpcc,
    Conweave,
}

impl Dialect {
    /// The keys this dialect's simulator reads beyond the shared ones.
    fn own(self) -> &'static [(&'static str, Option<usize>)] {
        match self {
            Dialect::Hpcc => HPCC_KEYS,
            Dialect::Conweave => CONWEAVE_ONLY,
        }
    }

    fn program(self) -> &'static str {
        match self {
            Dialect::Hpcc => "third.cc",
            Dialect::Conweave => "network-load-balance.cc",
        }
    }
}

/// Whether `word` is a key of either simulator (a refused scenario key's comment names one).
fn is_key(word: &str) -> bool {
    [KEYS, HPCC_KEYS, CONWEAVE_ONLY].iter().any(|t| t.iter().any(|(k, _)| *k == word))
}

/// Keys that only name the simulator's output files or steer its tracing and monitors.
const OUTPUT_ONLY: &[&str] = &[
    "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END", "ENABLE_TRACE",
    "FLOW_INPUT_FILE", "CNP_OUTPUT_FILE", "EST_ERROR_MON_FILE", "SW_MONITORING_INTERVAL", "VOQ_MON_FILE", "VOQ_MON_DETAIL_FILE", "UPLINK_MON_FILE", "CONN_MON_FILE",
];

/// Keys of HPCC (`CC_MODE` 3) and HPCC-PINT (10) only.
const HPCC_ONLY: &[&str] = &["U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK", "FAST_REACT"];

/// One key's values as the config gives them, and the line of the key.
#[derive(Clone, Debug)]
struct Entry {
    words: Vec<String>,
    line: usize,
}

/// The config file, parsed into its keys (a later occurrence wins, as in the simulator).
#[derive(Clone, Debug, Default)]
struct Config {
    keys: BTreeMap<&'static str, Entry>,
    /// Keys and values, in the file's order, for the ignored-key notes.
    order: Vec<&'static str>,
    /// Whose config it is.
    dialect: Dialect,
}

/// Splits the config into keys and values as `third.cc` reads it (words separated by white
/// space, lines do not matter), refusing an unknown key or a missing value.
fn parse_config(text: &str) -> R<Config> {
    let words: Vec<(usize, &str)> = text.lines().enumerate().flat_map(|(n, l)| l.split_whitespace().map(move |w| (n + 1, w))).collect();
    let mut c = Config::default();
    // A key only ConWeave's simulator reads makes it ConWeave's config (a value never spells
    // one of these upper-case keys).
    let marker = words.iter().find(|(_, w)| CONWEAVE_ONLY.iter().any(|(k, _)| k == w));
    if marker.is_some() {
        c.dialect = Dialect::Conweave;
    }
    let own = c.dialect.own();
    let mut i = 0;
    while i < words.len() {
        let (n, word) = words[i];
        let Some(&(key, arity)) = KEYS.iter().chain(own).find(|(k, _)| *k == word) else {
            if let (Some((m, by)), true) = (marker, HPCC_KEYS.iter().any(|(k, _)| *k == word)) {
                return err(word, format!("line {n}: the HPCC simulator's key in ConWeave's config (`{by}` on line {m} is ConWeave's): network-load-balance.cc does not read it (it would skip it silently, and read its value as a key); remove it"));
            }
            let names: Vec<&str> = KEYS.iter().chain(own).map(|(k, _)| *k).collect();
            return err(clip(word).as_ref(), format!("line {n}: unknown key (the simulator would skip it silently, and read its value as a key); {} reads {}", c.dialect.program(), names.join(" ")));
        };
        let arity = match arity {
            Some(a) => a,
            None => {
                let count = words.get(i + 1).map(|w| w.1).unwrap_or("");
                match count.parse::<usize>() {
                    Ok(k) if k <= 64 => 1 + 2 * k,
                    _ => return err(key, format!("line {n}: `{}` is not a count of rate entries (0..=64): the map is `{key} N RATE VALUE ...`", clip(count))),
                }
            }
        };
        if i + arity >= words.len() {
            return err(key, format!("line {n}: needs {arity} value{}", if arity > 1 { "s" } else { "" }));
        }
        let values = words[i + 1..=i + arity].iter().map(|w| w.1.to_string()).collect();
        c.keys.insert(key, Entry { words: values, line: n });
        c.order.retain(|k| *k != key);
        c.order.push(key);
        i += 1 + arity;
    }
    Ok(c)
}

impl Config {
    fn has(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.keys.get(key).map(|e| e.words[0].as_str())
    }

    /// `"KEY v"` when given, else `"KEY absent: <default>"`, for a comment.
    fn src(&self, key: &str, default: &str) -> String {
        match self.keys.get(key) {
            Some(e) => format!("{key} {}", e.words.join(" ")),
            None => format!("{key} absent: {default}"),
        }
    }

    fn whole<T: std::str::FromStr>(&self, key: &str, default: T, what: &str) -> R<T> {
        match self.value(key) {
            None => Ok(default),
            Some(v) => v.parse::<T>().or_else(|_| err(key, format!("`{}` is not {what}", clip(v)))),
        }
    }

    fn flag(&self, key: &str, default: bool) -> R<bool> {
        match self.value(key) {
            None => Ok(default),
            Some("0") => Ok(false),
            Some("1") => Ok(true),
            Some(v) => err(key, format!("`{}`: allowed 0 or 1", clip(v))),
        }
    }

    fn num(&self, key: &str, default: f64, what: &str) -> R<f64> {
        match self.value(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => err(key, format!("`{}` is not {what} (a number ≥ 0)", clip(v))),
            },
        }
    }

    /// A rate in b/s (ns-3's `DataRate` syntax); `default` when absent, an error naming `why`
    /// when absent without one.
    fn rate(&self, key: &str, default: Option<&str>, why: &str) -> R<u64> {
        match self.value(key).or(default) {
            Some(v) => data_rate(v).ok_or_else(|| KeyError { key: key.into(), message: format!("`{}` is not an ns-3 rate (e.g. 50Mb/s, 100Gbps)", clip(v)) }),
            None => err(key, format!("absent: {why}")),
        }
    }
}

/// ns-3's `DataRate` string (`data-rate.cc`): a number and one of its units, or a bare number
/// of b/s; in b/s, truncated as ns-3 truncates.
fn data_rate(s: &str) -> Option<u64> {
    let n = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(n);
    let v: f64 = num.parse().ok()?;
    let mult = match unit {
        "" | "bps" | "b/s" => 1.0,
        "Bps" | "B/s" => 8.0,
        "kbps" | "kb/s" | "Kbps" | "Kb/s" => 1e3,
        "kBps" | "kB/s" | "KBps" | "KB/s" => 8e3,
        "Kib/s" => 1024.0,
        "KiB/s" => 8192.0,
        "Mbps" | "Mb/s" => 1e6,
        "MBps" | "MB/s" => 8e6,
        "Mib/s" => 1_048_576.0,
        "MiB/s" => 8.0 * 1_048_576.0,
        "Gbps" | "Gb/s" => 1e9,
        "GBps" | "GB/s" => 8e9,
        "Gib/s" => 1_073_741_824.0,
        "GiB/s" => 8.0 * 1_073_741_824.0,
        _ => return None,
    };
    let bps = v * mult;
    (bps.is_finite() && bps < 1.8e19).then_some(bps as u64)
}

/// ns-3's `Time` string (`time.cc`): a number and s, ms, us, ns, ps or fs, or bare seconds; in
/// ns, the simulator's resolution (rounded).
fn time_ns(s: &str) -> Option<f64> {
    let n = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(s.len());
    let (num, unit) = s.split_at(n);
    let v: f64 = num.parse().ok()?;
    let mult = match unit {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        "ps" => 1e-3,
        "fs" => 1e-6,
        _ => return None,
    };
    let ns = (v * mult).round();
    (0.0..=1e12).contains(&ns).then_some(ns)
}

fn gbps(bps: u64) -> String {
    show(bps as f64 / 1e9)
}

/// One cable of the topology file.
#[derive(Clone, Copy, Debug)]
struct Cable {
    a: u32,
    b: u32,
    bps: u64,
    delay_ns: f64,
}

/// The topology file as fabricsim's leaf-spine spells it.
#[derive(Clone, Debug)]
struct Fabric {
    lines: Vec<Line>,
    /// fabricsim's name of every node id (`host3`, `tor0`, `spine1`).
    names: Vec<String>,
    host_bps: u64,
    /// ToR–spine rate, when the file has spines.
    up_bps: Option<u64>,
    /// Whether every pair of hosts has the same path (one ToR): ns-3's `GLOBAL_T` window is
    /// then every pair's own.
    one_tor: bool,
    /// rate × delay in bytes (whole, as the simulators compute it) on host cables and on
    /// uplinks: the PFC headroom's unit.
    in_flight: (u64, Option<u64>),
    /// ns-3's largest base RTT (ns) and BDP (bytes) over host pairs (its `maxRtt`, `maxBdp`).
    max_rtt_ns: u64,
    max_bdp: u64,
}

/// Reads the topology file as `third.cc` does (`NODES SWITCHES LINKS`, the switch ids, then
/// `A B RATE DELAY ERROR` per cable) and recognises a shape fabricsim builds.
fn topology(name: &str, text: &str, payload: u64) -> R<Fabric> {
    const K: &str = "TOPOLOGY_FILE";
    let words: Vec<(usize, &str)> = text.lines().enumerate().flat_map(|(n, l)| l.split_whitespace().map(move |w| (n + 1, w))).collect();
    let mut it = words.iter().copied();
    let mut next = |what: &str| it.next().ok_or_else(|| KeyError { key: K.into(), message: format!("{name}: ends before {what}") });
    let count = |(n, w): (usize, &str), what: &str| w.parse::<u32>().map_err(|_| KeyError { key: K.into(), message: format!("{name}:{n}: {what} `{}` is not a count", clip(w)) });
    let nodes = count(next("the node count")?, "node count")?;
    let switches = count(next("the switch count")?, "switch count")?;
    let cables = count(next("the link count")?, "link count")?;
    if nodes > 1_000_000 || switches > nodes || cables > 10_000_000 {
        return err(K, format!("{name}: {nodes} nodes, {switches} switches, {cables} links: allowed at most 10^6 nodes, 10^7 links, no more switches than nodes"));
    }
    let mut is_switch = vec![false; nodes as usize];
    for _ in 0..switches {
        let (n, w) = next("the switch ids")?;
        let id = count((n, w), "switch id")?;
        match is_switch.get_mut(id as usize) {
            Some(s) => *s = true,
            None => return err(K, format!("{name}:{n}: switch {id} is not a node (0..{nodes})")),
        }
    }
    let mut list = Vec::with_capacity(cables as usize);
    for _ in 0..cables {
        let (n, a) = next("the links")?;
        let a = count((n, a), "node")?;
        let b = count(next("a link's second node")?, "node")?;
        let (_, r) = next("a link's rate")?;
        let bps = data_rate(r).filter(|&b| b > 0).ok_or_else(|| KeyError { key: K.into(), message: format!("{name}:{n}: rate `{}` is not an ns-3 rate (e.g. 100Gbps)", clip(r)) })?;
        let (_, d) = next("a link's delay")?;
        let delay_ns = time_ns(d).ok_or_else(|| KeyError { key: K.into(), message: format!("{name}:{n}: delay `{}` is not an ns-3 time (e.g. 0.001ms, 1000ns)", clip(d)) })?;
        let (_, e) = next("a link's error rate")?;
        match e.parse::<f64>() {
            Ok(0.0) => {}
            Ok(_) => return err(K, format!("{name}:{n}: not supported: error rate {}: fabricsim has no random per-packet loss; allowed 0", clip(e))),
            Err(_) => return err(K, format!("{name}:{n}: error rate `{}` is not a number", clip(e))),
        }
        if a >= nodes || b >= nodes || a == b {
            return err(K, format!("{name}:{n}: link {a}–{b}: both ends must be distinct nodes (0..{nodes})"));
        }
        list.push(Cable { a, b, bps, delay_ns });
    }
    shape(name, &is_switch, &list, payload)
}

/// The leaf-spine (or star) the cables form, or why fabricsim cannot build it.
fn shape(name: &str, is_switch: &[bool], cables: &[Cable], payload: u64) -> R<Fabric> {
    const K: &str = "TOPOLOGY_FILE";
    let nodes = is_switch.len();
    let refuse = |what: String| err::<Fabric>(K, format!("{name}: not supported: {what}; fabricsim builds a one-switch star or a 2-tier leaf-spine from it (every host on one ToR, every ToR linked to every spine alike, one rate and delay per tier, hosts numbered ToR by ToR)"));
    let mut host_link: Vec<Option<&Cable>> = vec![None; nodes];
    // ToR–spine cables per (tor, spine) pair.
    let mut up: BTreeMap<(u32, u32), Vec<&Cable>> = BTreeMap::new();
    let mut switch_links = Vec::new();
    for c in cables {
        match (is_switch[c.a as usize], is_switch[c.b as usize]) {
            (false, false) => return refuse(format!("hosts {} and {} are linked to each other", c.a, c.b)),
            (false, true) | (true, false) => {
                let (h, _) = if is_switch[c.a as usize] { (c.b, c.a) } else { (c.a, c.b) };
                if host_link[h as usize].replace(c).is_some() {
                    return refuse(format!("host {h} has more than one link (multi-homed hosts)"));
                }
            }
            (true, true) => switch_links.push(c),
        }
    }
    let hosts: Vec<u32> = (0..nodes as u32).filter(|&n| !is_switch[n as usize]).collect();
    if hosts.len() < 2 {
        return refuse(format!("{} hosts; a flow needs two", hosts.len()));
    }
    let mut tor_hosts: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &h in &hosts {
        let c = host_link[h as usize].ok_or_else(|| KeyError { key: K.into(), message: format!("{name}: host {h} has no link") })?;
        tor_hosts.entry(if c.a == h { c.b } else { c.a }).or_default().push(h);
    }
    let spines: Vec<u32> = (0..nodes as u32).filter(|&n| is_switch[n as usize] && !tor_hosts.contains_key(&n)).collect();
    for c in &switch_links {
        let (ta, tb) = (tor_hosts.contains_key(&c.a), tor_hosts.contains_key(&c.b));
        if ta == tb {
            let what = if ta { "ToRs (switches with hosts)" } else { "spines (switches without hosts)" };
            return refuse(format!("switches {} and {} are both {what} and linked: a 3-tier or irregular fabric", c.a, c.b));
        }
        let key = if ta { (c.a, c.b) } else { (c.b, c.a) };
        up.entry(key).or_default().push(c);
    }
    // Hosts per ToR, and their numbering: host rank r must sit on ToR r / hosts_per_tor.
    let per_tor: Vec<usize> = tor_hosts.values().map(Vec::len).collect();
    let hpt = per_tor[0];
    if per_tor.iter().any(|&n| n != hpt) {
        return refuse(format!("the ToRs (switches with hosts) have {per_tor:?} hosts: fabricsim's leaf-spine has the same number on every ToR"));
    }
    let rank: BTreeMap<u32, usize> = hosts.iter().enumerate().map(|(r, &h)| (h, r)).collect();
    let mut tor_index: BTreeMap<u32, usize> = BTreeMap::new();
    for (&tor, hs) in &tor_hosts {
        let t = rank[&hs[0]] / hpt;
        if let Some(h) = hs.iter().find(|h| rank[h] / hpt != t) {
            return refuse(format!(
                "hosts are not numbered ToR by ToR: node {} (host {}) and node {h} (host {}) share switch {tor}, but fabricsim puts hosts {}..{} on one ToR, and FLOW_FILE's node ids map to hosts by rank",
                hs[0],
                rank[&hs[0]],
                rank[h],
                t * hpt,
                (t + 1) * hpt
            ));
        }
        tor_index.insert(tor, t);
    }
    let tors = tor_hosts.len();
    // Every ToR to every spine, the same number of cables.
    let mut cables_per_pair = None;
    for &tor in tor_hosts.keys() {
        for &s in &spines {
            let n = up.get(&(tor, s)).map_or(0, Vec::len);
            if n == 0 || *cables_per_pair.get_or_insert(n) != n {
                return refuse(format!("{tors} ToRs and {} spines, but ToR switch {tor} has {n} link(s) to spine switch {s} (another pair {}): every ToR must link to every spine alike", spines.len(), cables_per_pair.map_or("none".into(), |c| format!("has {c}"))));
            }
        }
    }
    if tors > 1 && spines.is_empty() {
        return refuse(format!("{tors} ToRs (switches with hosts) and no spine to join them"));
    }
    // One rate and one delay per tier.
    let uniform = |list: &[&Cable], tier: &str| -> R<(u64, f64)> {
        let (r, d) = (list[0].bps, list[0].delay_ns);
        match list.iter().find(|c| c.bps != r || c.delay_ns != d) {
            Some(c) => err(K, format!("{name}: not supported: {tier} links differ: {}–{} runs at {} Gb/s with {} ns, {}–{} at {} Gb/s with {} ns; fabricsim has one rate and one latency per tier", list[0].a, list[0].b, gbps(r), show(d), c.a, c.b, gbps(c.bps), show(c.delay_ns))),
            None => Ok((r, d)),
        }
    };
    let host_cables: Vec<&Cable> = host_link.iter().flatten().copied().collect();
    let (host_bps, host_delay) = uniform(&host_cables, "host")?;
    let up_cables: Vec<&Cable> = up.values().flatten().copied().collect();
    let upl = if up_cables.is_empty() { None } else { Some(uniform(&up_cables, "ToR–spine")?) };

    // Names: hosts by rank, ToRs by their hosts' block, spines in id order.
    let mut names = vec![String::new(); nodes];
    for (r, &h) in hosts.iter().enumerate() {
        names[h as usize] = format!("host{r}");
    }
    for (&tor, &t) in &tor_index {
        names[tor as usize] = format!("tor{t}");
    }
    for (j, &s) in spines.iter().enumerate() {
        names[s as usize] = format!("spine{j}");
    }

    // third.cc's routes: the longest host pair's delay, payload serialisation (one way, whole
    // ns per hop) and bottleneck rate give maxRtt and maxBdp.
    let tx = |bps: u64| payload * 1_000_000_000 * 8 / bps;
    let (hd, ht) = (host_delay.round() as u64, tx(host_bps));
    let (delay, txd, bw) = match upl.filter(|_| tors > 1) {
        Some((ub, ud)) => (2 * hd + 2 * ud.round() as u64, 2 * ht + 2 * tx(ub), host_bps.min(ub)),
        None => (2 * hd, 2 * ht, host_bps),
    };
    let max_rtt_ns = 2 * delay + txd;
    let max_bdp = (max_rtt_ns as u128 * bw as u128 / 1_000_000_000 / 8) as u64;
    let in_flight = |bps: u64, d: f64| (bps as u128 * d.round() as u128 / 8 / 1_000_000_000) as u64;

    let src = |what: &str| format!("TOPOLOGY_FILE {name}: {what}");
    let mut lines = vec![line("kind", "\"leaf_spine\"", src(if tors == 1 { "a one-switch star" } else { "a 2-tier leaf-spine" }))];
    lines.push(line("tors", tors, src("switches with hosts")));
    lines.push(line("hosts_per_tor", hpt, src("hosts on each")));
    let (spine_count, spine_note) = if spines.is_empty() { (1, "no spine; fabricsim's leaf-spine has one, linked to the ToR and idle".to_string()) } else { (spines.len(), "switches without hosts, each linked to every ToR".to_string()) };
    lines.push(line("spines", spine_count, src(&spine_note)));
    if let Some(c) = cables_per_pair.filter(|&c| c > 1) {
        lines.push(line("links_per_spine", c, src("parallel links per ToR–spine pair")));
    }
    let (ub, ud) = upl.unwrap_or((host_bps, host_delay));
    lines.push(line("link_rate_gbps", gbps(ub), src(if upl.is_some() { "the rate of every ToR–spine link" } else { "the host links' rate (for the idle spine link)" })));
    lines.push(line("host_link_rate_gbps", gbps(host_bps), src("the rate of every host link (the NICs run at it)")));
    lines.push(line("link_latency_ns", show(ud), src(if upl.is_some() { "the delay of every ToR–spine link" } else { "the host links' delay" })));
    lines.push(line("host_link_latency_ns", show(host_delay), src("the delay of every host link")));
    lines.push(line("switch_latency_ns", 0, "the simulator's switches forward without delay"));
    Ok(Fabric {
        lines,
        names,
        host_bps,
        up_bps: upl.map(|u| u.0),
        one_tor: tors == 1,
        in_flight: (in_flight(host_bps, host_delay), upl.map(|(b, d)| in_flight(b, d))),
        max_rtt_ns,
        max_bdp,
    })
}

/// The congestion control `CC_MODE` selects, as fabricsim names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Dcqcn,
    Hpcc,
    Timely,
    Dctcp,
}

impl Mode {
    fn of(c: &Config) -> R<Mode> {
        let v = c.whole::<u32>("CC_MODE", 1, "a mode number")?;
        match v {
            1 => Ok(Mode::Dcqcn),
            3 => Ok(Mode::Hpcc),
            7 => Ok(Mode::Timely),
            8 => Ok(Mode::Dctcp),
            10 => err("CC_MODE", "not supported: 10: HPCC-PINT is not in fabricsim; allowed 1 (DCQCN), 3 (HPCC), 7 (TIMELY), 8 (DCTCP)"),
            _ => err("CC_MODE", format!("{v}: the simulator's modes are 1 (DCQCN), 3 (HPCC), 7 (TIMELY), 8 (DCTCP), 10 (HPCC-PINT); fabricsim translates 1, 3, 7, 8")),
        }
    }

    /// Bytes the mode's INT header adds to every data packet (`IntHeader::GetStaticSize`).
    fn int_bytes(self) -> u64 {
        match self {
            Mode::Dcqcn | Mode::Dctcp => 0,
            // IntHeader in NORMAL mode: 5 hops of 8 B and a 2 B hop count.
            Mode::Hpcc => 42,
            Mode::Timely => 8,
        }
    }

    fn number(self) -> u32 {
        match self {
            Mode::Dcqcn => 1,
            Mode::Hpcc => 3,
            Mode::Timely => 7,
            Mode::Dctcp => 8,
        }
    }

    /// Whether the mode reads `key` (else it is listed as without effect).
    fn reads(self, key: &str) -> bool {
        let dcqcn = ["ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "RP_TIMER", "FAST_RECOVERY_TIMES", "CLAMP_TARGET_RATE"];
        match self {
            Mode::Dcqcn => !HPCC_ONLY.contains(&key) && !key.starts_with("PINT_") && key != "DCTCP_RATE_AI",
            Mode::Hpcc => !key.starts_with("PINT_") && !["DCTCP_RATE_AI", "RATE_HAI", "EWMA_GAIN"].contains(&key) && !dcqcn.contains(&key),
            Mode::Timely => !HPCC_ONLY.contains(&key) && !key.starts_with("PINT_") && key != "DCTCP_RATE_AI" && key != "EWMA_GAIN" && !dcqcn.contains(&key),
            Mode::Dctcp => !HPCC_ONLY.contains(&key) && !key.starts_with("PINT_") && !["RATE_AI", "RATE_HAI"].contains(&key) && !dcqcn.contains(&key),
        }
    }
}

/// The load balancer ConWeave's `LB_MODE` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lb {
    Ecmp,
    Drill,
    Conga,
    Letflow,
}

impl Lb {
    fn of(c: &Config) -> R<Lb> {
        const ALLOWED: &str = "allowed 0 (ECMP), 2 (DRILL), 3 (CONGA), 6 (LetFlow)";
        match c.whole::<u32>("LB_MODE", 0, "a mode number")? {
            0 => Ok(Lb::Ecmp),
            2 => Ok(Lb::Drill),
            3 => Ok(Lb::Conga),
            6 => Ok(Lb::Letflow),
            9 => err("LB_MODE", format!("not supported: 9 (ConWeave's own rerouting and reordering queues) is not in fabricsim; {ALLOWED}")),
            v => err("LB_MODE", format!("{v}: ConWeave's simulator knows 0 (ECMP), 2 (DRILL), 3 (CONGA), 6 (LetFlow), 9 (ConWeave); {ALLOWED}")),
        }
    }

    /// `[switch.lb]` for the mode: the scheme and the constants `network-load-balance.cc`
    /// hard-codes (no config key sets them), each named; what fabricsim does otherwise goes
    /// to `notes`.
    fn lines(self, c: &Config, notes: &mut Vec<String>) -> Vec<Line> {
        let mode = c.src("LB_MODE", "the simulator's default 0");
        let acks = "SwitchNode::GetOutDev hashes control packets (ACK, NACK) by ECMP whatever LB_MODE is; fabricsim's scheme routes them as flowlets of their own (in order, and ahead of data, so their path hardly delays them)";
        match self {
            Lb::Ecmp => vec![
                line("name", "\"ns3_ecmp\"", format!("{mode}: SwitchNode::DoLbFlowECMP, the HPCC simulator's hash: MurmurHash3 of (sip, dip, sport|dport<<16) seeded by the switch's node id")),
            ],
            Lb::Drill => {
                vec![
                    line("name", "\"drill\"", format!("{mode}: SwitchNode::DoLbDrill, per packet, at every switch with a choice")),
                    line("d", 2, "SwitchNode's m_drill_candidate = 2 (network-load-balance.cc has no key for it)"),
                    line("m", 1, "SwitchNode::DoLbDrill remembers one port, the last best"),
                    line("sample", "\"distinct\"", "SwitchNode::DoLbDrill shuffles the next hops (random_shuffle) and samples the first d"),
                    line("memory", "\"host\"", "SwitchNode's m_previousBestInterfaceMap is keyed by destination IP"),
                    line("control", "\"ns3_ecmp\"", "SwitchNode::GetOutDev hashes control packets (ACK, NACK) by ECMP under every LB_MODE"),
                    line("load", "\"all_classes\"", "SwitchNode::CalculateInterfaceLoad: the egress queue's GetNBytesTotal, every class"),
                ]
            }
            Lb::Conga => {
                notes.push(format!("{mode} (CONGA): the simulator compares 4 consecutive paths from a random start (GetBestPath), fabricsim every uplink (the same with 4 or fewer)"));
                vec![
                    line("name", "\"conga\"", format!("{mode}: CongaRouting, source-leaf flowlets on the least congested path")),
                    line("ties", "\"random\"", "CongaRouting::GetBestPath picks at random among the least congested paths"),
                    line("control", "\"bypass\"", "CongaRouting::RouteInput lets only UDP data through: ACKs and NACKs are ECMP-hashed, carry no feedback, and the DRE counts data only"),
                    line("gap_us", 100, "network-load-balance.cc's conga_flowletTimeout, 100 µs (no key)"),
                    line("dre_period_us", 50, "network-load-balance.cc's conga_dreTime, 50 µs (no key)"),
                    line("dre_alpha", "0.2", "network-load-balance.cc's conga_alpha (no key)"),
                    line("quant_bits", 3, "network-load-balance.cc's conga_quantizeBit (no key)"),
                    line("age_us", 500, "network-load-balance.cc's conga_agingTime, 500 µs (no key)"),
                ]
            }
            Lb::Letflow => {
                notes.push(format!("{mode} (LetFlow): {acks}"));
                vec![
                    line("name", "\"letflow\"", format!("{mode}: LetflowRouting, a random path per flowlet at the source ToR")),
                    line("gap_us", 100, "network-load-balance.cc's letflow_flowletTimeout, 100 µs (no key)"),
                ]
            }
        }
    }
}

/// The PFC headroom of a port whose rate × delay is `f` bytes, `per_port(f)`, on host ports and
/// on ToR–spine ports: `(fabricsim's one headroom (the larger), host ports', ToR–spine ports'
/// when they differ)`.
fn headroom(fabric: &Fabric, per_port: impl Fn(u64) -> u64) -> (u64, u64, Option<u64>) {
    let host = per_port(fabric.in_flight.0);
    let up = fabric.in_flight.1.map(per_port);
    (up.map_or(host, |u| u.max(host)), host, up.filter(|&u| u != host))
}

/// `[switch.pfc]` for the HPCC simulator's `SwitchMmu`: the shared buffer, α × the free
/// shared buffer, 3 × rate × delay of headroom per port, a 3 KiB resume offset.
fn hpcc_pfc(c: &Config, fabric: &Fabric, buffer_mib: u64, latency: &str) -> Vec<Line> {
    let (hr, hr_host, hr_up) = headroom(fabric, |f| 3 * f);
    let hr_note = match hr_up {
        Some(u) => format!("TOPOLOGY_FILE: third.cc reserves 3 × rate × delay per port: {hr_host} B on host ports, {u} B on ToR–spine ports; fabricsim has one headroom, the larger"),
        None => format!("TOPOLOGY_FILE: third.cc reserves 3 × rate × delay per port ({} Gb/s × {latency} ns × 3)", gbps(fabric.host_bps)),
    };
    let alpha_note = match fabric.up_bps.filter(|&u| u > fabric.host_bps) {
        Some(u) => {
            let (mut shift, mut r) = (3u32, u);
            while r > fabric.host_bps && shift > 0 {
                shift -= 1;
                r /= 2;
            }
            format!("pfc_a_shift 3: α = 1/8 on ports at the NIC rate; third.cc gives the {} Gb/s ports 1/{} (fabricsim has one α)", gbps(u), 1u32 << shift)
        }
        None => "pfc_a_shift 3: the free shared buffer >> 3 (every port runs at the NIC rate)".into(),
    };
    vec![
        line("enabled", true, "QbbNetDevice's QbbEnabled default: lossless"),
        line("buffer_bytes", buffer_mib * 1_048_576, c.src("BUFFER_SIZE", "the simulator's default 16") + " (MiB: × 1024 × 1024, SwitchMmu::ConfigBufferSize)"),
        line("threshold", "\"dynamic\"", "SwitchMmu::GetPfcThreshold: α × the free shared buffer"),
        line("alpha", "0.125", alpha_note),
        line("headroom_bytes", hr, hr_note),
        line("resume_offset_bytes", 3072, "SwitchMmu's resume_offset (3 KiB); its 4 KiB reserve per port is not modelled"),
    ]
}

/// The MTU ConWeave's `SwitchMmu` counts its guarantees and headroom in (`switch-mmu.h`: 1000 B
/// + headers, whatever PACKET_PAYLOAD_SIZE is).
const CONWEAVE_MMU_MTU: u64 = 1048;

/// `[switch.pfc]` for ConWeave's Broadcom-style `SwitchMmu`: `ENABLE_PFC`, the `BUFFER_SIZE`
/// MiB buffer, XOFF when an ingress priority group holds more than its 2-MTU guarantee plus
/// IngressAlpha (1/16) × the free shared pool, headroom 2 × rate × delay + 2 MTU per port
/// (`network-load-balance.cc`, `ConfigHdrm`), resume 16 B × α below the threshold.
fn conweave_pfc(c: &Config, fabric: &Fabric, buffer_mib: u64, latency: &str, notes: &mut Vec<String>) -> R<Vec<Line>> {
    let enabled = c.flag("ENABLE_PFC", true)?;
    if !c.flag("USE_DYNAMIC_PFC_THRESHOLD", true)? {
        return err("USE_DYNAMIC_PFC_THRESHOLD", "not supported: 0 (ConWeave's SwitchMmu then pauses at static per-port and per-PG limits of 4800 and 20 MTU): fabricsim's [switch.pfc] has one static threshold per ingress port; allowed 1");
    }
    // fabricsim's lossless accounting also needs the PAUSE frame's own serialisation (two
    // 64 B frames, `pfc.rs`): without it a port overflowed its ConfigHdrm headroom in a DRILL
    // run here, where ConWeave's MMU would have dropped ("ingress headroom full").
    let (hr, hr_host, hr_up) = headroom(fabric, |f| 2 * f + 2 * CONWEAVE_MMU_MTU + 2 * 64);
    let hr_note = match hr_up {
        Some(u) => format!("TOPOLOGY_FILE: ConfigHdrm reserves 2 × rate × delay + 2 × 1048 B per port, fabricsim adds 2 PAUSE frames of 64 B: {hr_host} B on host ports, {u} B on ToR–spine ports; fabricsim has one headroom, the larger"),
        None => format!("TOPOLOGY_FILE: ConfigHdrm reserves 2 × rate × delay + 2 × 1048 B per port ({} Gb/s × {latency} ns × 2 + 2096 B), + 2 PAUSE frames of 64 B that fabricsim's lossless accounting needs", gbps(fabric.host_bps)),
    };
    if enabled {
        notes.push("ConWeave's SwitchMmu grants each ingress priority group 2 × 1048 B before the α threshold applies, keeps 8 × 1048 B per port out of the shared pool, and marks ECN on the egress queue's shared bytes (the queue less 1049 B); fabricsim's pool is the buffer less the headroom, its threshold and marking on the whole".into());
    }
    Ok(vec![
        line("enabled", enabled, c.src("ENABLE_PFC", "the simulator's default 1") + if enabled { ": lossless" } else { ": lossy, the MMU drops" }),
        line("buffer_bytes", buffer_mib * 1_048_576, c.src("BUFFER_SIZE", "") + " (MiB: × 1024 × 1024, SwitchMmu::ConfigBufferSize)"),
        line("threshold", "\"dynamic\"", "SwitchMmu::GetPauseClasses (USE_DYNAMIC_PFC_THRESHOLD): α × the free shared pool"),
        line("alpha", "0.0625", "SwitchMmu's IngressAlpha default, 1/16 (network-load-balance.cc sets no other)"),
        line("headroom_bytes", hr, hr_note),
        line("resume_offset_bytes", 1, "SwitchMmu::GetResumeClasses: resume at α × (free pool − 16 B), 1 B under the threshold"),
    ])
}

/// Translates the config `config` (its text; `name` as the user gave it, for the scenario's
/// head) into a scenario TOML.
pub fn translate(name: &str, config: &str, ctx: &Context) -> R<String> {
    let c = parse_config(config)?;
    let doc = build(&c, name, ctx)?;
    match refusal(&doc, ctx, is_key, "config") {
        None => Ok(doc.text),
        Some((key, message)) => err(&key, message),
    }
}

fn read(key: &str, c: &Config, ctx: &Context) -> R<(String, std::path::PathBuf, String)> {
    let name = c.value(key).ok_or_else(|| KeyError { key: key.into(), message: "missing: the simulator reads nothing without it; name the file (relative to the folder the simulator runs in)".into() })?;
    let (path, text) = ctx.read(name).or_else(|m| err(key, m))?;
    Ok((name.to_string(), path, text))
}

/// Writes the scenario for the parsed config.
fn build(c: &Config, config_name: &str, ctx: &Context) -> R<Doc> {
    let mode = Mode::of(c)?;
    let cw = c.dialect == Dialect::Conweave;
    let lb = if cw { Some(Lb::of(c)?) } else { None };
    if cw && c.flag("ENABLE_IRN", false)? {
        return err("ENABLE_IRN", "not supported: 1 (IRN's selective repeat, without PFC in ConWeave's runs): fabricsim's RoCE receiver is go-back-N; allowed 0");
    }
    let payload: u64 = c.whole("PACKET_PAYLOAD_SIZE", 1000, "a payload size in bytes")?;
    if !(1..=65_535).contains(&payload) {
        return err("PACKET_PAYLOAD_SIZE", format!("{payload}: allowed 1..=65535 bytes"));
    }
    let header = 48 + mode.int_bytes();
    let (topo_name, topo_path, topo_text) = read("TOPOLOGY_FILE", c, ctx)?;
    let fabric = topology(&topo_name, &topo_text, payload)?;
    let (flow_name, flow_path, _) = read("FLOW_FILE", c, ctx)?;
    let mut notes: Vec<String> = Vec::new();
    let mut no_effect: Vec<String> = Vec::new();

    // Keys refused or checked before anything is written.
    let error_rate = c.num("ERROR_RATE_PER_LINK", 0.0, "a loss probability")?;
    if error_rate != 0.0 {
        return err("ERROR_RATE_PER_LINK", format!("not supported: {}: fabricsim has no random per-packet loss (its `flaky` faults are loss bursts on pod–core links); allowed 0", show(error_rate)));
    }
    if !c.flag("RATE_BOUND", true)? {
        return err("RATE_BOUND", "not supported: 0 (no rate limiter, \"for test only\" in RdmaHw): fabricsim's controllers always pace at their rate; allowed 1");
    }
    if c.flag("L2_BACK_TO_ZERO", false)? {
        return err("L2_BACK_TO_ZERO", "not supported: 1 (resend from the start of the L2_CHUNK_SIZE chunk): fabricsim's go-back-N resends from the NACKed packet; allowed 0");
    }
    let ack_interval: u64 = c.whole("L2_ACK_INTERVAL", 0, "a byte count")?;
    if ack_interval == 0 {
        return err("L2_ACK_INTERVAL", format!("{}: with 0 the simulator's senders ignore every ACK (\"shouldn't receive ack\"), so no flow completes; allowed 1 or more", if c.has("L2_ACK_INTERVAL") { "0" } else { "absent, the simulator's default 0" }));
    }
    let chunk: u64 = c.whole("L2_CHUNK_SIZE", 0, "a byte count")?;
    let pause = c.num("PAUSE_TIME", 5.0, "a pause time")?;
    if pause == 0.0 {
        return err("PAUSE_TIME", "0: a pause frame with time 0 is read as a resume, so the simulator would never pause; allowed a number above 0 (pauses last until the resume)");
    }
    let has_win = c.whole::<u32>("HAS_WIN", 1, "0 or 1")?;
    let has_win = match has_win {
        0 => false,
        1 => true,
        v => return err("HAS_WIN", format!("{v}: allowed 0 or 1")),
    };
    let var_win = c.flag("VAR_WIN", false)?;
    let global_t = c.whole::<u32>("GLOBAL_T", 1, "0 or 1")?;
    if global_t > 1 {
        return err("GLOBAL_T", format!("{global_t}: allowed 0 or 1"));
    }
    if has_win && global_t == 1 && !fabric.one_tor && mode == Mode::Dctcp {
        return err("GLOBAL_T", format!("not supported: 1 with HAS_WIN 1 under CC_MODE 8 on this topology: every flow's window would be the largest BDP ({} B), but fabricsim's dctcp sizes each flow's window by its own path's BDP, smaller within a ToR; allowed 0 (or HAS_WIN 0)", fabric.max_bdp));
    }
    if mode == Mode::Hpcc && !(has_win && var_win) {
        return err(if has_win { "VAR_WIN" } else { "HAS_WIN" }, "not supported: 0 under CC_MODE 3: fabricsim's hpcc always keeps the window R·T (HAS_WIN 1 with VAR_WIN 1); allowed 1");
    }
    if mode == Mode::Dctcp && !has_win {
        return err("HAS_WIN", "not supported: 0 under CC_MODE 8: fabricsim's dctcp is a window (ns-3's a rate); allowed 1");
    }
    let ack_high = if cw { 0 } else { c.whole::<u32>("ACK_HIGH_PRIO", 0, "0 or 1")? };
    if ack_high > 1 {
        return err("ACK_HIGH_PRIO", format!("{ack_high}: allowed 0 or 1"));
    }
    if ack_high == 1 {
        notes.push(format!("{}: the simulator's NICs never pause ACKs; fabricsim's pause them with the data (its switches queue them with the data either way)", c.src("ACK_HIGH_PRIO", "")));
    }
    let ecn = c.flag("ENABLE_QCN", true)?;
    let buffer_mib: u64 = c.whole("BUFFER_SIZE", if cw { 0 } else { 16 }, "a size in MiB")?;
    if cw && buffer_mib == 0 {
        return err("BUFFER_SIZE", format!("{}: ConWeave's SwitchMmu then sizes the buffer as 375 KB × its default 12 ports, whatever the switch's ports; give BUFFER_SIZE in MiB (its run.py writes 9); allowed 1..=4095", if c.has("BUFFER_SIZE") { "0" } else { "absent, the simulator's default 0" }));
    }
    if buffer_mib == 0 || buffer_mib * 1_048_576 > u32::MAX as u64 {
        return err("BUFFER_SIZE", format!("{buffer_mib}: allowed 1..=4095 MiB (the simulator keeps the buffer in 32 bits)"));
    }
    // ConWeave's run ends once every flow has finished, at the latest 10 s after
    // FLOWGEN_STOP_TIME (`Simulator::Stop(flowgen_stop_time + 10.0)`).
    let stop_s = if cw { c.num("FLOWGEN_STOP_TIME", 2.5, "a time in seconds")? + 10.0 } else { c.num("SIMULATOR_STOP_TIME", 3.01, "a time in seconds")? };
    let stop_src = if cw { format!("{} + 10 s (Simulator::Stop)", c.src("FLOWGEN_STOP_TIME", "the simulator's default 2.5 s")) } else { c.src("SIMULATOR_STOP_TIME", "the simulator's default 3.01 s") };
    let flowgen_start_s = if cw { c.num("FLOWGEN_START_TIME", 2.0, "a time in seconds")? } else { 2.0 };
    let seed: u64 = if cw { c.whole("RANDOM_SEED", 1, "a whole number")? } else { 1 };
    let link_down: Vec<u64> = match c.keys.get("LINK_DOWN") {
        Some(e) => e.words.iter().map(|w| w.parse::<u64>().or_else(|_| err("LINK_DOWN", format!("`{}` is not a whole number: the key is `LINK_DOWN TIME_US NODE NODE`", clip(w))))).collect::<R<_>>()?,
        None => vec![0, 0, 0],
    };
    for key in ["USE_DYNAMIC_PFC_THRESHOLD", "CLAMP_TARGET_RATE", "VAR_WIN", "FAST_REACT", "MULTI_RATE", "SAMPLE_FEEDBACK", "ENABLE_TRACE", "ENABLE_PFC"] {
        c.flag(key, false)?;
    }

    // The maps from link rate to ECN thresholds: one entry for every switch port's rate.
    let map = |key: &str| -> R<BTreeMap<u64, String>> {
        let Some(e) = c.keys.get(key) else { return Ok(BTreeMap::new()) };
        let mut m = BTreeMap::new();
        for pair in e.words[1..].chunks(2) {
            let rate = pair[0].parse::<u64>().or_else(|_| err(key, format!("line {}: rate `{}` is not a whole number of b/s", e.line, clip(&pair[0]))))?;
            let ok = if key == "PMAX_MAP" { pair[1].parse::<f64>().is_ok_and(|p| p.is_finite()) } else { pair[1].parse::<u32>().is_ok_and(|k| (k as u64) * 1000 <= u32::MAX as u64) };
            if !ok {
                return err(key, format!("line {}: `{}` is not {}", e.line, clip(&pair[1]), if key == "PMAX_MAP" { "a probability" } else { "a threshold in KB (0..=4294967; the simulator keeps bytes in 32 bits)" }));
            }
            m.insert(rate, pair[1].clone());
        }
        Ok(m)
    };
    let (kmin, kmax, pmax) = (map("KMIN_MAP")?, map("KMAX_MAP")?, map("PMAX_MAP")?);
    let mut rates = vec![(fabric.host_bps, "host links")];
    if let Some(u) = fabric.up_bps.filter(|&u| u != fabric.host_bps) {
        rates.push((u, "ToR–spine links"));
    }
    let mut ecn_at = Vec::new();
    for &(bps, what) in &rates {
        let get = |m: &BTreeMap<u64, String>, key: &str| {
            m.get(&bps).cloned().ok_or_else(|| KeyError {
                key: key.into(),
                message: format!(
                    "no entry for {bps} ({} Gb/s, the rate of the {what} in {topo_name}): the simulator needs one for every switch port's rate (\"must set {} for each link speed\"); give `{key} N {bps} VALUE ...`",
                    gbps(bps),
                    &key[..4].to_ascii_lowercase()
                ),
            })
        };
        let (lo, hi, p) = (get(&kmin, "KMIN_MAP")?, get(&kmax, "KMAX_MAP")?, get(&pmax, "PMAX_MAP")?);
        let lo_b = lo.parse::<u64>().unwrap_or(0) * 1000;
        let hi_b = hi.parse::<u64>().unwrap_or(0) * 1000;
        ecn_at.push((bps, vec![
            line("ecn_kmin_bytes", lo_b, format!("KMIN_MAP {bps} {lo} (KB × 1000, SwitchMmu::ConfigEcn)")),
            line("ecn_kmax_bytes", hi_b, format!("KMAX_MAP {bps} {hi} (KB × 1000)")),
            line("ecn_pmax", show(p.parse::<f64>().unwrap_or(0.0)), format!("PMAX_MAP {bps} {p}")),
        ]));
    }

    // Output-only and ineffective keys.
    let (mut ignored, mut unread) = (Vec::new(), Vec::new());
    for &key in &c.order {
        let shown = c.src(key, "");
        if OUTPUT_ONLY.contains(&key) {
            ignored.push(shown);
        } else if key.starts_with("CONWEAVE_") {
            no_effect.push(format!("{shown} (ConWeave's own timers: LB_MODE 9 only)"));
        } else if key == "LOAD" {
            no_effect.push(format!("{shown} (network-load-balance.cc reads it, nothing uses it: the flow file is the load)"));
        } else if key == "FLOWGEN_START_TIME" && link_down[0] == 0 {
            no_effect.push(format!("{shown} (starts the simulator's monitors and LINK_DOWN's clock; the flow file gives the starts)"));
        } else if ["LB_MODE", "ENABLE_PFC", "FLOWGEN_STOP_TIME", "RANDOM_SEED", "ENABLE_IRN"].contains(&key) {
            // Translated below.
        } else if key == "USE_DYNAMIC_PFC_THRESHOLD" && cw {
            // Translated with [switch.pfc] (1 only).
        } else if ["USE_DYNAMIC_PFC_THRESHOLD", "DATA_RATE", "LINK_DELAY"].contains(&key) {
            no_effect.push(format!("{shown} ({} reads it, nothing uses it{})", c.dialect.program(), if key == "USE_DYNAMIC_PFC_THRESHOLD" { ": SwitchMmu always runs the dynamic threshold" } else { ": the topology file gives rates and delays" }));
        } else if key == "PAUSE_TIME" {
            no_effect.push(format!("{shown} (a pause lasts until the resume, as in fabricsim)"));
        } else if !mode.reads(key) {
            unread.push(shown);
        }
    }
    if link_down[0] == 0 && c.has("LINK_DOWN") {
        no_effect.push(format!("{} (time 0: no link goes down)", c.src("LINK_DOWN", "")));
    }

    // The head (written last, when every note is known, and put first).
    let mut head = Doc::default();
    let mut out = Doc::default();
    let w = &mut head;
    let _ = writeln!(w, "# Scenario translated by `fabricsim from-ns3` from {config_name}.");
    if cw {
        let _ = writeln!(w, "# Each key names the config key it comes from, or the default of ConWeave's ns-3 simulator it makes");
        let _ = writeln!(w, "# explicit (conweave-project/conweave-ns3 @ 236a801, scratch/network-load-balance.cc; read as ConWeave's for its keys).");
    } else {
        let _ = writeln!(w, "# Each key names the config key it comes from, or the HPCC ns-3 simulator's default it makes");
        let _ = writeln!(w, "# explicit (alibaba-edu/High-Precision-Congestion-Control @ 9f4be2a, simulation/scratch/third.cc).");
    }
    let _ = writeln!(w, "# The simulator's largest base RTT {} ns and BDP {} B (maxRtt, maxBdp: payload serialisation only).", fabric.max_rtt_ns, fabric.max_bdp);
    if !ignored.is_empty() {
        let _ = writeln!(w, "# Ignored (ns-3 output only): {}", ignored.join(", "));
    }
    for n in &no_effect {
        let _ = writeln!(w, "# Without effect: {n}");
    }
    if !unread.is_empty() {
        let _ = writeln!(w, "# Not read under CC_MODE {}: {}", mode.number(), unread.join(", "));
    }
    let w = &mut out;
    let stem = Path::new(config_name).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let _ = writeln!(w);
    let seed_line = if cw {
        line("seed", seed, c.src("RANDOM_SEED", "the simulator's default 1") + " (srand and ns-3's seed there; fabricsim's random streams differ all the same)")
    } else {
        line("seed", 1, "ns-3's default seed (third.cc sets none; the random streams differ all the same)")
    };
    emit(w, None, &[line("name", quote(&format!("ns-3 {stem}")), "copied into summary.json"), seed_line]);
    emit(w, Some("topology"), &fabric.lines);

    let mut sw = vec![
        line("trimming", false, "the simulator's switches never trim (and PFC needs it off)"),
        line("ecn", ecn, c.src("ENABLE_QCN", "the simulator's default 1: switches mark")),
    ];
    sw.extend(ecn_at[0].1.iter().cloned());
    sw.push(line("ecn_mark_at", "\"dequeue\"", "SwitchNode::SwitchNotifyDequeue marks on the bytes left behind"));
    let lb_table = match lb {
        None => {
            sw.push(line("lb", "\"ns3_ecmp\"", "SwitchNode::GetOutDev: MurmurHash3 of (sip, dip, sport|dport<<16) seeded by the switch's node id, so every flow and ACK takes the simulator's path"));
            Vec::new()
        }
        Some(lb) => lb.lines(c, &mut notes),
    };
    emit(w, Some("switch"), &sw);
    if !lb_table.is_empty() {
        emit(w, Some("switch.lb"), &lb_table);
    }
    for (bps, lines) in &ecn_at[1..] {
        let mut l = vec![line("rate_gbps", gbps(*bps), format!("KMIN_MAP / KMAX_MAP / PMAX_MAP at {bps} b/s, the ToR–spine rate in TOPOLOGY_FILE"))];
        l.extend(lines.iter().cloned());
        emit(w, Some("[switch.by_link_rate"), &l);
    }

    // PFC: SwitchMmu's shared buffer, dynamic threshold and per-port headroom.
    let latency = show(fabric.lines.iter().find(|l| l.0 == "host_link_latency_ns").map_or(0.0, |l| l.1.parse().unwrap_or(0.0)));
    let pfc = if cw { conweave_pfc(c, &fabric, buffer_mib, &latency, &mut notes)? } else { hpcc_pfc(c, &fabric, buffer_mib, &latency) };
    emit(w, Some("switch.pfc"), &pfc);

    let int_note = match mode {
        Mode::Hpcc => format!(" + {} B INT: 5 hops of 8 B and a hop count (CC_MODE 3)", mode.int_bytes()),
        _ if mode.int_bytes() > 0 => format!(" + {} B INT timestamp (CC_MODE {})", mode.int_bytes(), mode.number()),
        _ => String::new(),
    };
    let tr = vec![
        line("mtu_bytes", payload + header, format!("{} + {header} B of headers", c.src("PACKET_PAYLOAD_SIZE", "the simulator's default 1000"))),
        line("header_bytes", header, format!("CustomHeader: Ethernet 14, IPv4 20, UDP 8, PG 2, sequence 4{int_note}")),
        if mode == Mode::Hpcc {
            line("ack_bytes", 88, "RdmaHw::ReceiveUdp: Ethernet 14, IPv4 20, the ACK header 12 and its INT 42 B (no padding)")
        } else {
            line("ack_bytes", 60, "RdmaHw::ReceiveUdp pads ACKs and NACKs to 60 B")
        },
        line("ack_every", 1, format!("{}: ReceiveUdp resets the milestone to it on every packet, so every packet {} is ACKed", c.src("L2_ACK_INTERVAL", ""), if ack_interval <= payload { "".to_string() } else { format!("past the first {ack_interval} B") }).replace("packet  is", "packet is")),
        line("lb", "\"ecmp\"", "one entropy per flow (the switches' ns3_ecmp reads the flow's ports, not the entropy)"),
        if cw {
            line("ack_class", "\"control\"", "network-load-balance.cc sets every switch's AckHighPrio 1: ACKs and NACKs go ahead of data (queue 0), as NICs send them")
        } else {
            line("ack_class", "\"data\"", "SwitchNode's AckHighPrio (never set by third.cc, 0): ACKs and NACKs wait in the data's queue at switches, FIFO with it; NICs send them ahead of data")
        },
        if cw {
            line("rto_us", 4000, "ConWeave's RdmaQueuePair goes back after 4 ms without an ACK (m_timeout)")
        } else {
            // A finite RTO would fire where ns-3 waits: behind a deep paused queue (over 4 ms
            // of queueing at 400 G with a 256 MiB buffer), turning a delay into a go-back-N resend.
            line("rto_us", show(stop_s * 1e6), format!("RdmaHw has no retransmission timer (NACKs only): one as long as the run ({stop_src}) never fires"))
        },
    ];
    if chunk > 0 {
        notes.push(format!("{} asks for an ACK at every chunk boundary too; every packet is ACKed already", c.src("L2_CHUNK_SIZE", "")));
    }
    emit(w, Some("transport"), &tr);
    let mut rel = vec![
        line("name", "\"go_back_n\"", c.src("L2_BACK_TO_ZERO", "the simulator's default 0: go-back-N from the NACKed packet")),
        line("nack_repeat", "\"interval\"", "RdmaHw NACKs a gap once, again once its NACK interval passed"),
    ];
    if cw {
        rel.push(line("nack_interval_us", 4, "ConWeave's RdmaHw NACKGenerationInterval default, 4 µs"));
        // (The HPCC dialect keeps the default rewind: its parity cases never reorder, and its
        // scenarios stay as they were.)
        rel.push(line("rewind", "\"every_nack\"", "RdmaHw::ReceiveAck calls RecoverQueue on every NACK: snd_nxt = snd_una, everything from the NACKed PSN is resent in order"));
    } else {
        rel.push(line("nack_interval_us", 500, "RdmaHw's \"NACK Generation Interval\" default, 500 µs"));
    }
    emit(w, Some("transport.reliability"), &rel);

    // Congestion control: one arm per CC_MODE. The simulator counts a window in payload bytes
    // (`RdmaQueuePair::IsWinBound`: snd_nxt - snd_una against maxBdp), fabricsim in wire bytes:
    // one of its BDPs is mtu / payload of fabricsim's.
    let wire_per_payload = show(((payload + header) as f64 / payload as f64 * 1e6).round() / 1e6);
    let window_why = format!("the simulator counts the window in payload bytes: 1 BDP of payload is (PACKET_PAYLOAD_SIZE + {header} B) / PACKET_PAYLOAD_SIZE BDPs on the wire");
    let win = |cc: &mut Vec<Line>| {
        if has_win {
            cc.push(line("window_bdp", &wire_per_payload, format!("{}: a window of one BDP ({} B at most, counting payload serialisation only); {window_why}", c.src("HAS_WIN", "the simulator's default 1"), fabric.max_bdp)));
            cc.push(line("bdp_of", if global_t == 1 { "\"network\"" } else { "\"path\"" }, format!("{}: {}", c.src("GLOBAL_T", "the simulator's default 1"), if global_t == 1 { "the largest BDP of any pair, for every flow (fabricsim's counts a data packet and an ACK per hop, ns-3's the payload one way)" } else { "the pair's own BDP" })));
            cc.push(line("window_scales_with_rate", var_win, c.src("VAR_WIN", "the simulator's default 0: the window stays at its size")));
        }
    };
    let mbps = |bps: u64| show(bps as f64 / 1e6);
    let min_rate = c.rate("MIN_RATE", Some("100Mb/s"), "")?;
    let mut cc = Vec::new();
    match mode {
        Mode::Dcqcn => {
            let g = c.num("EWMA_GAIN", 0.0, "a gain")?;
            if !c.has("EWMA_GAIN") {
                return err("EWMA_GAIN", "absent: third.cc's default is `1 / 16` in integer arithmetic, 0, so α would never move; give EWMA_GAIN (e.g. 0.00390625)");
            }
            if !c.has("RP_TIMER") && !cw {
                return err("RP_TIMER", "absent: third.cc leaves it 0 µs, a rate-increase timer that fires without end; give RP_TIMER (µs, e.g. 900)");
            }
            let why = "third.cc passes an empty rate string; give it (e.g. 50Mb/s)";
            let (ai, hai) = (c.rate("RATE_AI", None, why)?, c.rate("RATE_HAI", None, why)?);
            cc.push(line("name", "\"dcqcn\"", "CC_MODE 1: the simulator's Mellanox DCQCN"));
            cc.push(line("g", show(g), c.src("EWMA_GAIN", "")));
            cc.push(line("alpha_init", "1.0", "RdmaQueuePair: α = 1 (the first CNP sets it to 1 too)"));
            cc.push(line("alpha_timer_us", show(c.num("ALPHA_RESUME_INTERVAL", 55.0, "a time in µs")?), c.src("ALPHA_RESUME_INTERVAL", "the simulator's default 55 µs")));
            cc.push(line("rate_timer_us", show(c.num("RP_TIMER", 300.0, "a time in µs")?), c.src("RP_TIMER", "the simulator's default 300 µs")));
            cc.push(line("byte_counter_bytes", 0, "the simulator's Mellanox DCQCN has no byte counter"));
            let frt = if cw { 1 } else { 5 };
            cc.push(line("fast_recovery_steps", c.whole::<u32>("FAST_RECOVERY_TIMES", frt, "a whole number")?, c.src("FAST_RECOVERY_TIMES", &format!("the simulator's default {frt}"))));
            cc.push(line("rate_ai_mbps", mbps(ai), c.src("RATE_AI", "")));
            cc.push(line("rate_hai_mbps", mbps(hai), c.src("RATE_HAI", "")));
            cc.push(line("min_rate_mbps", mbps(min_rate), c.src("MIN_RATE", "the simulator's default 100Mb/s")));
            cc.push(line("clamp_target_rate", c.flag("CLAMP_TARGET_RATE", false)?, c.src("CLAMP_TARGET_RATE", "the simulator's default 0")));
            cc.push(line("reaction_point", "\"mellanox\"", "CC_MODE 1: RdmaHw's Mellanox RP: the ACKs' ECN echo is the CNP, the first one only arms the timers, cuts on the decrease timer"));
            cc.push(line("rate_decrease_interval_us", show(c.num("RATE_DECREASE_INTERVAL", 4.0, "a time in µs")?), c.src("RATE_DECREASE_INTERVAL", "the simulator's default 4 µs")));
            cc.push(line("rate_on_first_cnp", "1.0", "RdmaHw's RateOnFirstCnp default: no cut on the first CNP"));
            if cw {
                cc.push(line("ooo_triggers_cnp", true, "ConWeave's RdmaHw::ReceiveUdp sets the CNP flag on every NACK of an out-of-order packet (cnp_check)"));
            }
            win(&mut cc);
        }
        Mode::Hpcc => {
            if c.flag("MULTI_RATE", false)? {
                return err("MULTI_RATE", "not supported: 1 (a rate per hop): fabricsim's hpcc keeps one rate from the most loaded hop (HPCC Alg. 1); allowed 0");
            }
            if c.flag("SAMPLE_FEEDBACK", false)? {
                return err("SAMPLE_FEEDBACK", "not supported: 1 (skip hops with an empty queue on fast reactions): allowed 0");
            }
            let eta = c.num("U_TARGET", 0.95, "a utilisation")?;
            let ai = c.rate("RATE_AI", None, "third.cc passes an empty rate string; give it (e.g. 50Mb/s)")?;
            cc.push(line("name", "\"hpcc\"", "CC_MODE 3: HPCC"));
            cc.push(line("eta", show(eta), c.src("U_TARGET", "the simulator's default 0.95")));
            cc.push(line("max_stage", c.whole::<u32>("MI_THRESH", 5, "a whole number")?, c.src("MI_THRESH", "the simulator's default 5")));
            cc.push(line("rate_ai_mbps", mbps(ai), c.src("RATE_AI", "")));
            cc.push(line("min_rate_mbps", mbps(min_rate), c.src("MIN_RATE", "the simulator's default 100Mb/s")));
            cc.push(line("fast_react", c.flag("FAST_REACT", true)?, c.src("FAST_REACT", "the simulator's default 1")));
            cc.push(line("base_rtt_of", if global_t == 1 { "\"network\"" } else { "\"path\"" }, format!("{}: T, and the window R·T (HAS_WIN 1, VAR_WIN 1)", c.src("GLOBAL_T", "the simulator's default 1"))));
            cc.push(line("window_bdp", &wire_per_payload, format!("HAS_WIN 1: the window at line rate, B·T; {window_why}")));
            if c.has("INT_MULTI") {
                notes.push(format!("{}: the simulator's INT counts queues in units of 80 B × INT_MULTI and bytes in 128 B × INT_MULTI; fabricsim's are exact", c.src("INT_MULTI", "")));
            }
        }
        Mode::Timely => {
            let why = "third.cc passes an empty rate string; give it (e.g. 50Mb/s)";
            let (ai, hai) = (c.rate("RATE_AI", None, why)?, c.rate("RATE_HAI", None, why)?);
            cc.push(line("name", "\"timely\"", "CC_MODE 7: the simulator's TIMELY"));
            cc.push(line("alpha", "0.875", "RdmaHw's TimelyAlpha default"));
            cc.push(line("beta", "0.8", "RdmaHw's TimelyBeta default"));
            cc.push(line("t_low_us", 50, "RdmaHw's TimelyTLow default, 50000 ns"));
            cc.push(line("t_high_us", 500, "RdmaHw's TimelyTHigh default, 500000 ns"));
            cc.push(line("min_rtt_us", 20, "RdmaHw's TimelyMinRtt default, 20000 ns"));
            cc.push(line("hai_after", 5, "UpdateRateTimely: hyper increase after 5 increases"));
            cc.push(line("rate_ai_mbps", mbps(ai), c.src("RATE_AI", "")));
            cc.push(line("rate_hai_mbps", mbps(hai), c.src("RATE_HAI", "")));
            cc.push(line("min_rate_mbps", mbps(min_rate), c.src("MIN_RATE", "the simulator's default 100Mb/s")));
            win(&mut cc);
        }
        Mode::Dctcp => {
            if !c.has("EWMA_GAIN") {
                return err("EWMA_GAIN", "absent: third.cc's default is `1 / 16` in integer arithmetic, 0, so α would never move; give EWMA_GAIN (e.g. 0.0625)");
            }
            let g = c.num("EWMA_GAIN", 0.0, "a gain")?;
            let dctcp_ai = c.rate("DCTCP_RATE_AI", Some("1000Mb/s"), "")?;
            cc.push(line("name", "\"dctcp\"", "CC_MODE 8: DCTCP (fabricsim's is a window, the simulator's a rate)"));
            cc.push(line("g", show(g), c.src("EWMA_GAIN", "")));
            cc.push(line("alpha_init", "1.0", "RdmaQueuePair: dctcp α = 1"));
            cc.push(line("init_window_bdp", &wire_per_payload, format!("{}: flows start at line rate, 1 BDP in flight; {window_why}", c.src("HAS_WIN", "the simulator's default 1"))));
            cc.push(line("max_window_bdp", &wire_per_payload, "HAS_WIN: the window never exceeds 1 BDP (of payload)"));
            notes.push(format!("CC_MODE 8: the simulator's DCTCP adds {} Mb/s per RTT (DCTCP_RATE_AI) down to {} Mb/s (MIN_RATE); fabricsim's adds one packet per window, down to min_window_pkts", mbps(dctcp_ai), mbps(min_rate)));
        }
    }
    emit(w, Some("transport.cc"), &cc);

    // The flows, named relative to where the scenario goes.
    emit(
        w,
        Some("workload"),
        &[
            line("kind", "\"flow_list\"", "FLOW_FILE: the simulator's flow file"),
            line("file", quote(&ctx.file_name(&flow_name, &flow_path)), format!("FLOW_FILE {flow_name}")),
            if cw { line("format", "\"conweave\"", "SRC DST PG SIZE START lines; ports numbered per source and per destination") } else { line("format", "\"ns3\"", "SRC DST PG DPORT SIZE START lines") },
            line("ns3_topology", quote(&ctx.file_name(&topo_name, &topo_path)), format!("TOPOLOGY_FILE {topo_name}: node ids map to hosts by rank, as fabricsim numbers them")),
        ],
    );

    // LINK_DOWN TIME A B: at 2 s + TIME µs the link goes down and routes are recomputed.
    if link_down[0] > 0 {
        let (a, b) = (link_down[1] as usize, link_down[2] as usize);
        let name = |n: usize| fabric.names.get(n).filter(|s| !s.is_empty()).cloned();
        let (Some(x), Some(y)) = (name(a), name(b)) else {
            return err("LINK_DOWN", format!("{a} {b}: not nodes of {topo_name}"));
        };
        emit(
            w,
            Some("[link_events"),
            &[
                line("at_us", show(link_down[0] as f64 + flowgen_start_s * 1e6), format!("{}: {} takes the link down at {} s + {} µs", c.src("LINK_DOWN", ""), c.dialect.program(), show(flowgen_start_s), link_down[0])),
                line("link", quote(&format!("{x}-{y}")), format!("LINK_DOWN nodes {a} and {b} of TOPOLOGY_FILE")),
                line("action", "\"down\"", "LINK_DOWN: TakeDownLink"),
                line("reroute_after_us", 0, "LINK_DOWN: TakeDownLink recomputes the routes at once"),
            ],
        );
    }

    emit(w, Some("run"), &[line("end_time_us", show(stop_s * 1e6), format!("{stop_src}: flows still running then are reported unfinished"))]);
    for n in &notes {
        let _ = writeln!(head, "# Modelled differently: {n}");
    }
    out.text.insert_str(0, &head.text);
    Ok(out)
}
