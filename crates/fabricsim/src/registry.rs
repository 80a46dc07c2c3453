//! The catalogue of every pluggable scheme, by family: what `fabricsim list` prints, what the
//! book's scheme catalogue (`docs/src/reference/schemes.md`) is checked against, and where a
//! user learns the names, parameters, defaults and allowed ranges of every scheme. Each family's rows come from the family's own
//! declaration (`scheme_family!` in its `mod.rs`, see [`crate::scheme`]), so this file changes
//! only when a new *family* appears, never for a new scheme.

use crate::scheme::{Family, ParamRow, SchemeRow};
use crate::topo::failures as f;

/// Topologies (`topology.kind`); their parameters are the `[topology]` keys that apply to each.
const TOPOLOGIES: &[SchemeRow] = &[
    SchemeRow {
        name: "fat_tree",
        summary: "3-tier k-ary fat tree: k³/4 hosts; oversubscription at the ToR or aggregation tier; or explicit pods/tors_per_pod/aggs_per_pod/hosts_per_tor/cores (HPCC's 5-pod wiring)",
        params: || topology_params(&["k", "hosts", "oversubscription", "oversubscribed_tier", "pods", "tors_per_pod", "aggs_per_pod", "hosts_per_tor", "cores", "agg_uplink_rate_gbps"]),
        example: &[],
    },
    SchemeRow {
        name: "leaf_spine",
        summary: "2-tier leaf-spine of radix K: K ToRs × K/2 hosts, K/(2r) spines; or explicit tors/hosts_per_tor/spines, optionally a cable rate per spine",
        params: || topology_params(&["k", "hosts", "oversubscription", "tors", "hosts_per_tor", "spines", "links_per_spine", "spine_link_rates_gbps"]),
        example: &["topology.k=16", "topology.oversubscription=\"4:1\""],
    },
    SchemeRow {
        name: "rail_optimized",
        summary: "rail-optimized fabric of servers with a NIC per GPU: GPU r of every server of a scalable unit on that unit's leaf r; 2 tiers (every leaf to every spine) or 3 (spines per unit, cores); r:1 at the leaves; optionally a scale-up switch per server",
        params: rail_optimized_params,
        // A whole table: the bundled example's `k` belongs to the other families.
        example: &["topology={ kind = \"rail_optimized\", servers = 16, servers_per_su = 8, link_rate_gbps = 400, link_latency_ns = 1000, server = { gpus = 8 } }"],
    },
    SchemeRow {
        name: "rail_only",
        summary: "rail-only fabric (Wang et al. 2023): the rails of a rail-optimized fabric without the spines that join them; each rail one switch (one scalable unit) or a 2-tier network of its own; GPUs on different rails of different servers meet by forwarding over a server's scale-up domain (collectives)",
        params: rail_only_params,
        // An AllToAll, so that forwarding runs: a permutation's flows across rails are refused.
        example: &[
            "topology={ kind = \"rail_only\", servers = 4, servers_per_su = 2, link_rate_gbps = 400, link_latency_ns = 1000, server = { gpus = 4, scale_up_gbps = 3600 } }",
            "workload={ kind = \"collectives\", chunk = \"64KiB\", jobs = [ { ranks = 16, collectives = [ { op = \"alltoall\", bytes = \"1MiB\" } ] } ] }",
        ],
    },
    SchemeRow {
        name: "racks",
        summary: "rack-wired fabric of servers with a NIC per GPU: every NIC of a server on one leaf (a top-of-rack switch, as Meta's RoCE clusters), consecutive servers filling it; the switches and cables of rail_optimized (2 or 3 tiers), for comparing the wirings; optionally a scale-up switch per server",
        params: racks_params,
        example: &["topology={ kind = \"racks\", servers = 16, servers_per_su = 8, link_rate_gbps = 400, link_latency_ns = 1000, server = { gpus = 8 } }"],
    },
];

/// `[topology]` keys of `rail_optimized`: the server counts (whose defaults the plan applies,
/// not the config), then its own and the common keys.
fn rail_optimized_params() -> Vec<ParamRow> {
    let mut rows = server_rows(&[("server.cross_rail", "\"spine\"", "\"spine\" or \"pxn\" (relay over the scale-up domain onto the destination's rail; collectives, with scale_up_gbps)")]);
    rows.push(ParamRow { key: "tiers".into(), default: "2".into(), allowed: Some("2 or 3".into()) });
    rows.extend(topology_params(&["oversubscription", "spines", "cores", "agg_uplink_rate_gbps"]));
    rows
}

/// The keys sizing a fabric of servers and `[topology.server]`'s, then `own` (key, default,
/// allowed).
fn server_rows(own: &[(&str, &str, &str)]) -> Vec<ParamRow> {
    let mut rows = vec![
        ParamRow { key: "servers".into(), default: "-".into(), allowed: Some("required; a multiple of servers_per_su".into()) },
        ParamRow { key: "servers_per_su".into(), default: "32".into(), allowed: Some("≥ 1".into()) },
        ParamRow { key: "server.gpus".into(), default: crate::scenario::ServerConfig::default().gpus.to_string(), allowed: Some("≥ 1 (GPUs per server = NICs = rails)".into()) },
        ParamRow { key: "server.scale_up_gbps".into(), default: "unset (no scale-up domain)".into(), allowed: Some("0.001..=1000000 Gb/s per GPU each way (NVLink 4: 3600)".into()) },
        ParamRow { key: "server.scale_up_latency_ns".into(), default: "150".into(), allowed: Some("≥ 0 ns per GPU–switch link; only with scale_up_gbps".into()) },
        ParamRow { key: "planes".into(), default: "1".into(), allowed: Some("1..=8 copies of the scale-out fabric, a NIC port on each; planes × qps ≤ 16".into()) },
        ParamRow { key: "dual_tor".into(), default: "false".into(), allowed: Some("true: each NIC's 2 ports on a leaf pair (2 tiers, planes = 1)".into()) },
        ParamRow { key: "nic_port_choice".into(), default: "\"striped\"".into(), allowed: Some("\"striped\" (a queue pair per port pair), \"packet\" (one queue pair, each packet on the NIC's next free port) or \"entropy\" (one queue pair, each packet on the port its entropy selects); with planes > 1 or dual_tor".into()) },
    ];
    rows.extend(own.iter().map(|&(key, default, allowed)| ParamRow { key: key.into(), default: default.into(), allowed: Some(allowed.into()) }));
    rows
}

/// `[topology]` keys of `racks`: a rail-optimized fabric's, with no rails to relay onto.
fn racks_params() -> Vec<ParamRow> {
    let mut rows = server_rows(&[("server.cross_rail", "\"spine\"", "\"spine\" only (no rails to relay onto)")]);
    rows.push(ParamRow { key: "tiers".into(), default: "2".into(), allowed: Some("2 or 3".into()) });
    rows.extend(topology_params(&["oversubscription", "spines", "cores", "agg_uplink_rate_gbps"]));
    rows
}

/// `[topology]` keys of `rail_only`: a rail-optimized fabric's, less the tiers above the rails.
fn rail_only_params() -> Vec<ParamRow> {
    let mut rows = server_rows(&[("server.cross_rail", "\"pxn\"", "\"pxn\" only (forwarding over the scale-up domain is the way across rails; collectives)")]);
    rows.extend(topology_params(&["oversubscription", "spines"]));
    rows
}

/// Keys of `[topology]` shared by every topology.
const TOPOLOGY_COMMON: &[&str] =
    &["link_rate_gbps", "host_link_rate_gbps", "tor_uplink_rate_gbps", "link_latency_ns", "host_link_latency_ns", "switch_latency_ns"];

/// `[topology]` keys of one topology (its own, then the common ones), with their defaults.
fn topology_params(own: &[&str]) -> Vec<ParamRow> {
    keyed_rows::<crate::scenario::TopologyConfig>(own.iter().chain(TOPOLOGY_COMMON), &[])
}

/// Static link faults (`[topology.failures] kind`), lb-ai-training §4.2/§5.4 for the pod–core
/// kinds; link events (`[[link_events]]`) change links mid-run and are described in the book
/// (`docs/src/howto/faults.md`).
const LINK_FAULTS: &[SchemeRow] = &[
    SchemeRow {
        name: "tor_uplinks",
        summary: "`tors` ToRs lose `uplinks_per_tor` uplinks each: removed (routes avoid them) or degraded to a fraction of their rate (routes keep them)",
        params: || {
            fault_rows(&[
                ("tors", "-", None),
                ("uplinks_per_tor", "-", None),
                ("links", "-", Some("cable names or patterns, instead of tors and uplinks_per_tor")),
                ("model", "\"removed\"", Some("removed | degraded")),
                ("degraded_rate_factor", &f::DEFAULT_DEGRADED_RATE_FACTOR.to_string(), Some("(0, 1)")),
                ("scale_queue", "false", None),
                ("direction", "\"both\"", Some("both | up | down")),
            ])
        },
        example: &["topology.failures.tors=4", "topology.failures.uplinks_per_tor=2", "topology.oversubscription=\"1:1\""],
    },
    SchemeRow {
        name: "partial_lag",
        summary: "in every pod, `f` pod–core links (or the cables of `links`, on any topology) run at (1 − p) of their rate for the whole run; Eq. 2 says whether the pod uplinks become the bottleneck (check, summary.json)",
        params: || {
            fault_rows(&[
                ("f", "-", Some("1..=pod uplinks")),
                ("p", "-", Some("(0, 1)")),
                ("links", "-", Some("cable names or patterns, instead of f and placement")),
                ("placement", "\"packed\"", Some("packed | spread | random")),
                ("scale_queue", "false", None),
                ("direction", "\"both\"", Some("both | up | down")),
            ])
        },
        example: &["topology.failures.f=2", "topology.failures.p=0.9"],
    },
    SchemeRow {
        name: "flaky",
        summary: "in every pod, `f` pod–core links (or the cables of `links`, on any topology) lose every packet started in a loss burst: Poisson starts, exponential lengths, per direction; counted as wire losses",
        params: || {
            fault_rows(&[
                ("f", &f::DEFAULT_FLAKY_LINKS.to_string(), Some("1..=pod uplinks")),
                ("placement", "\"packed\"", Some("packed | spread | random")),
                ("links", "-", Some("cable names or patterns, instead of f and placement")),
                ("burst_gap_us", &f::DEFAULT_BURST_GAP_US.to_string(), Some("> 0")),
                ("burst_len_us", &f::DEFAULT_BURST_LEN_US.to_string(), Some("> 0")),
                ("direction", "\"both\"", Some("both | up | down")),
            ])
        },
        example: &[],
    },
    SchemeRow {
        name: "loss",
        summary: "the cables of `links` (names or patterns, any topology) lose every packet they start sending with probability `loss_rate`, independently (Bernoulli), per direction; counted as wire losses",
        params: || {
            fault_rows(&[
                ("links", "-", Some("cable names or patterns, e.g. \"tor0-spine1\", \"tor*-spine1\"")),
                ("loss_rate", "-", Some("(0, 1)")),
                ("direction", "\"both\"", Some("both | up | down")),
            ])
        },
        example: &["topology.failures.links=[\"tor0-*\"]", "topology.failures.loss_rate=0.01"],
    },
    SchemeRow {
        name: "bursty_loss",
        summary: "the cables of `links` lose packets in bursts: a Gilbert–Elliott chain per direction, stepped per packet, bad periods of mean `mean_burst_pkts` packets losing `loss_rate`, good ones of mean `mean_gap_pkts` losing `good_loss_rate`; counted as wire losses",
        params: || {
            fault_rows(&[
                ("links", "-", Some("cable names or patterns")),
                ("mean_burst_pkts", "-", Some("1..=1e12")),
                ("mean_gap_pkts", "-", Some("1..=1e12")),
                ("loss_rate", "1", Some("0..=1, above good_loss_rate")),
                ("good_loss_rate", "0", Some("0..=1")),
                ("direction", "\"both\"", Some("both | up | down")),
            ])
        },
        example: &["topology.failures.links=[\"tor1-*\"]", "topology.failures.mean_burst_pkts=4", "topology.failures.mean_gap_pkts=200"],
    },
];

/// Keys of `[topology.failures]` that every kind takes (its own seed, the switch).
const FAULT_COMMON: &[(&str, &str, Option<&str>)] = &[("seed", "master seed", None), ("enabled", "true", None)];

/// Rows of `[topology.failures]` keys: (key, default, allowed values), the kind's own then the
/// common ones.
fn fault_rows(keys: &[(&str, &str, Option<&str>)]) -> Vec<ParamRow> {
    keys.iter().chain(FAULT_COMMON).map(|&(k, d, a)| ParamRow { key: k.to_string(), default: d.to_string(), allowed: a.map(str::to_string) }).collect()
}

/// Queue disciplines of switch ports (`[switch]`, per-port overrides in `[switch.ports.*]` and
/// `[[switch.by_link_rate]]`). One discipline exists so far; its behaviour is set by the keys.
const QUEUE_DISCIPLINES: &[SchemeRow] = &[SchemeRow {
    name: "red_ecn",
    summary: "drop-tail data queue with RED/ECN marking between Kmin and Kmax (at enqueue or dequeue), optional trimming to headers; control class first (strict or WRR), unbounded (default), in a lane of its own, or sharing the buffer (headers evict the newest data); trimmed headers on to the receiver (default) or back to the sender (return-to-sender: always, or when the control lane is full)",
    params: || {
        keyed_rows::<crate::scenario::SwitchConfig>(
            [
                "buffer_bytes",
                "buffer_bdp",
                "ecn",
                "ecn_kmin",
                "ecn_kmax",
                "ecn_kmin_bytes",
                "ecn_kmax_bytes",
                "ecn_pmax",
                "ecn_mark_at",
                "trimming",
                "control_wrr_weight",
                "control_lane",
                "control_lane_factor",
                "trimmed_headers",
            ]
            .iter(),
            crate::scenario::SWITCH_LIMITS,
        )
    },
    example: &["switch.trimming=true", "switch.control_lane=\"shared\"", "switch.buffer_bdp=0.3"],
}];

/// Priority flow control (`[switch.pfc]`): one scheme, its behaviour set by the keys.
const LOSSLESS: &[SchemeRow] = &[SchemeRow {
    name: "pfc",
    summary: "priority flow control on a shared switch buffer: PAUSE an ingress port's upstream when its bytes pass the XOFF threshold (dynamic: α × free shared buffer; static: xoff_bytes), RESUME below it by resume_offset_bytes; headroom absorbs what is in flight meanwhile",
    params: || crate::scheme::param_rows::<crate::net::pfc::PfcConfig>(crate::net::pfc::PFC_LIMITS),
    example: &["switch.pfc.enabled=true", "switch.trimming=false"],
}];

/// Run options (`[run]`): when a run stops and what it records.
const RUN: &[SchemeRow] = &[SchemeRow {
    name: "run",
    summary: "stop time, livelock guard (no payload acknowledged for stall_limit_us while messages are outstanding), sampled traces of connections and ports, logs of messages, events, ACKs and gate decisions, packets dropped on purpose (drop_packets entries: transmission, hold_us)",
    params: || {
        let mut rows = crate::scheme::param_rows::<crate::scenario::RunConfig>(crate::scenario::RUN_LIMITS);
        // The guard's default is applied at validation (the key stays unset in the scenario).
        if let Some(r) = rows.iter_mut().find(|r| r.key == "stall_limit_us") {
            r.default = crate::scenario::DEFAULT_STALL_LIMIT_US.to_string();
        }
        rows.extend(crate::scenario::DROP_LIMITS.iter().map(|l| ParamRow { key: format!("drop_packets[].{}", l.key), default: "-".into(), allowed: Some(l.range()) }));
        rows
    },
    example: &[],
}];

/// The rows of the named keys of a scenario table `T`, in the order given, with the default
/// of each (`-` for keys unset by default) and the range `limits` declare for it.
fn keyed_rows<'a, T: Default + serde::Serialize>(keys: impl Iterator<Item = &'a &'a str>, limits: &'static [crate::scheme::Limit]) -> Vec<ParamRow> {
    let defaults = crate::scheme::param_rows::<T>(limits);
    keys.map(|k| defaults.iter().find(|p| p.key == *k).cloned().unwrap_or(ParamRow { key: k.to_string(), default: "-".into(), allowed: None }))
        .collect()
}

/// Every family, in the order `fabricsim list` prints them.
pub fn families() -> Vec<Family> {
    use crate::transport::{cc, credit, gate, lb, recovery, shaper};
    vec![
        Family { title: "topologies", key: "topology.kind", schemes: TOPOLOGIES },
        Family { title: "link faults", key: "topology.failures.kind", schemes: LINK_FAULTS },
        Family { title: "congestion control", key: "transport.cc", schemes: cc::CcConfig::REGISTRY },
        Family { title: "path selection", key: "transport.lb", schemes: lb::LbConfig::REGISTRY },
        Family { title: "switch path selection", key: "switch.lb", schemes: crate::net::switch_lb::SwitchLbConfig::REGISTRY },
        Family { title: "workloads", key: "workload.kind", schemes: crate::workload::REGISTRY },
        Family { title: "queue disciplines", key: "switch", schemes: QUEUE_DISCIPLINES },
        Family { title: "lossless switches", key: "switch.pfc", schemes: LOSSLESS },
        Family { title: "message gates", key: "transport.gate", schemes: gate::GateConfig::REGISTRY },
        Family { title: "receiver credits", key: "transport.credit", schemes: credit::CreditConfig::REGISTRY },
        Family { title: "loss recovery", key: "transport.reliability", schemes: recovery::RecoveryConfig::REGISTRY },
        Family { title: "message shapers", key: "transport.shaper", schemes: shaper::ShaperConfig::REGISTRY },
        Family { title: "run options", key: "run", schemes: RUN },
    ]
}

/// The catalogue as Markdown tables, one per family: what the book's catalogue
/// (`docs/src/reference/schemes.md`) holds (a test keeps the two equal).
pub fn markdown() -> String {
    let mut out = String::new();
    for f in families() {
        out += &format!("**{}** (`{}`)\n\n| name | what it is | parameters (default) |\n|---|---|---|\n", f.title, f.key);
        for s in f.schemes {
            let params: Vec<String> = (s.params)()
                .into_iter()
                .map(|p| {
                    let allowed = p.allowed.map(|a| format!(", {a}")).unwrap_or_default();
                    format!("`{}` ({}{allowed})", p.key, p.default.replace('|', "\\|"))
                })
                .collect();
            let params = if params.is_empty() { "–".to_string() } else { params.join(", ") };
            out += &format!("| `{}` | {} | {} |\n", s.name, s.summary.replace('|', "\\|"), params);
        }
        out += "\n";
    }
    out
}

/// The family selected by scenario key `key` (`transport.cc`), if any.
pub fn family(key: &str) -> Option<Family> {
    families().into_iter().find(|f| f.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_family_and_parameters_list() {
        for f in families() {
            let mut names: Vec<_> = f.schemes.iter().map(|s| s.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), f.schemes.len(), "duplicate name in {}", f.key);
            for s in f.schemes {
                assert!(!s.summary.is_empty(), "{}: {} has no summary", f.key, s.name);
                // Parameter listing must not fail for any scheme.
                let _ = (s.params)();
            }
        }
    }

    #[test]
    fn topology_and_queue_rows_list_their_own_keys() {
        let topo = family("topology.kind").unwrap();
        let keys = |name: &str| -> Vec<String> { (topo.schemes.iter().find(|s| s.name == name).unwrap().params)().into_iter().map(|p| p.key).collect() };
        assert!(keys("leaf_spine").contains(&"spines".to_string()) && !keys("fat_tree").contains(&"spines".to_string()));
        let rate = (topo.schemes[0].params)().into_iter().find(|p| p.key == "link_rate_gbps").unwrap();
        assert_eq!(rate.default, "400.0");
        let q = family("switch").unwrap();
        let kmin = (q.schemes[0].params)().into_iter().find(|p| p.key == "ecn_kmin").unwrap();
        assert_eq!(kmin.default, "0.2");
        assert!(markdown().contains("| `red_ecn` |"));
    }

    #[test]
    fn listed_parameters_carry_their_defaults() {
        let cc = family("transport.cc").unwrap();
        let fixed = cc.schemes.iter().find(|s| s.name == "fixed").unwrap();
        let params = (fixed.params)();
        assert!(params.iter().any(|p| p.key == "window_bdp" && p.default == "1.0"), "{params:?}");
        let gate = family("transport.gate").unwrap();
        let mo = gate.schemes.iter().find(|s| s.name == "max_outstanding").unwrap();
        let params = (mo.params)();
        assert_eq!(params, vec![crate::scheme::ParamRow { key: "messages".into(), default: "8".into(), allowed: Some("1..=1000000".into()) }]);
    }

    #[test]
    fn link_fault_rows_name_real_kinds_and_keys() {
        // Every listed key of every kind parses as a `[topology.failures]` table of that kind.
        let faults = family("topology.failures.kind").unwrap();
        for s in faults.schemes {
            for p in (s.params)() {
                let v = match (p.default.as_str(), p.key.as_str()) {
                    ("-", "p" | "loss_rate") => "0.5",
                    ("-", "links") => "[\"tor0-spine0\"]",
                    ("-", _) | ("master seed", _) => "1",
                    (d, _) => d,
                };
                let t = format!("kind = \"{}\"\n{} = {v}", s.name, p.key);
                toml::from_str::<f::FailuresConfig>(&t).unwrap_or_else(|e| panic!("{t}: {e}"));
            }
        }
        assert!(markdown().contains("| `partial_lag` |"));
    }

    #[test]
    fn declared_limits_are_enforced_with_the_key_and_range() {
        let g: crate::transport::gate::GateConfig = toml::from_str("name = \"max_outstanding\"\nmessages = 0").unwrap();
        let e = g.validate().unwrap_err().to_string();
        assert!(e.contains("transport.gate.messages") && e.contains("1..=1000000"), "{e}");
    }
}
