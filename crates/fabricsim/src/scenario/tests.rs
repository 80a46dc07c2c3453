//! Unit tests of scenario parsing and [`Scenario::setup`] on crafted inputs.

use super::{LinkAction, Scenario, Setup};
use crate::error::Error;
use crate::ids::PortId;
use crate::units::{Bytes, MS, Time, US};
use std::path::Path;

/// A 2-ToR, 1-spine leaf-spine with one host per ToR: 100 G links of 1 µs, no switch latency,
/// 100 kB buffers, one 64 KiB flow each way.
const TINY: &str = "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 1\nspines = 1\nlink_rate_gbps = 100\nlink_latency_ns = 1000\n\
                    [switch]\nbuffer_bytes = 100000\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n";

/// [`TINY`] with `extra` TOML appended and `overrides` as `--set`s (other modules' tests use it
/// too).
pub(crate) fn setup(extra: &str, overrides: &[&str]) -> Result<Setup, Error> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml(&format!("{TINY}{extra}"), &overrides)?.setup(Path::new("."))
}

/// The key and message of a rejected input.
fn rejected(extra: &str, overrides: &[&str]) -> (String, String) {
    match setup(extra, overrides) {
        Ok(_) => panic!("accepted: {extra} {overrides:?}"),
        Err(Error::Invalid { key, message }) => (key, message),
        Err(other) => panic!("expected an invalid key, got {other}"),
    }
}

#[test]
fn unknown_key_is_rejected_naming_the_key() {
    let (key, message) = rejected("[run]\nend_time = 5\n", &[]);
    assert_eq!(key, "run.end_time");
    assert!(message.contains("unknown field `end_time`") && message.contains("`end_time_us`"), "{message}");
}

#[test]
fn set_overrides_reach_nested_tables() {
    let s = setup("", &["switch.pfc.enabled=true", "switch.trimming=false", "switch.ports.tor_down.buffer_bytes=\"64KiB\"", "run.stall_limit_us=50"]).unwrap();
    assert!(s.scenario.switch.pfc.enabled);
    let rule = s.scenario.switch.ports.tor_down.as_ref().expect("tor_down rule created by --set");
    assert_eq!(rule.buffer_bytes.map(|b| b.0), Some(65_536));
    assert_eq!(s.stall_limit, 50 * US);
    // An override also wins over the file.
    assert_eq!(setup("", &["topology.link_latency_ns=2000"]).unwrap().scenario.topology.link_latency_ns, 2000.0);
}

#[test]
fn set_of_a_new_workload_kind_replaces_the_workload_table() {
    // TINY's permutation has flow_bytes; an incast takes its own keys after the kind.
    let s = setup("", &["workload.kind=incast", "workload.senders=1", "workload.flow_bytes=\"8KiB\""]).unwrap();
    assert!(matches!(s.scenario.workload, crate::workload::WorkloadConfig::Incast(_)), "{:?}", s.scenario.workload);
    // The same kind keeps the table's other keys.
    let s = setup("", &["workload.kind=permutation"]).unwrap();
    assert!(matches!(&s.scenario.workload, crate::workload::WorkloadConfig::Permutation(p) if p.flow_bytes.0 == 65_536), "{:?}", s.scenario.workload);
    // A new kind without its required keys is refused for what it lacks, not for the old keys.
    let (key, message) = rejected("", &["workload.kind=flow_list"]);
    assert!(!message.contains("flow_bytes"), "{key}: {message}");
}

#[test]
fn default_rto_is_base_rtt_plus_twice_the_longest_paths_queueing() {
    // The longest path host0 -> tor0 -> spine0 -> tor1 -> host1 crosses 4 ports, all 100 Gb/s
    // (1 bit = 10 ps) with 1 µs of propagation. Per port: 2 × 1 µs + a 4096 B packet
    // (327 680 ps) + a 64 B ACK (5 120 ps) = 2 332 800 ps; base RTT = 4 × that = 9 331 200 ps.
    // Draining one 100 000 B buffer takes 8 000 000 ps, so 4 ports queue 32 000 000 ps at worst:
    // RTO = 9 331 200 + 2 × 32 000 000 = 73 331 200 ps.
    let s = setup("", &[]).unwrap();
    assert_eq!(s.base_rtt, Time(9_331_200));
    assert_eq!(s.bdp_bytes, Bytes(116_640));
    assert_eq!(s.rto, Time(73_331_200));
    // Given explicitly, or lossless (PFC): no derivation.
    assert_eq!(setup("[transport]\nrto_us = 50\n", &[]).unwrap().rto, 50 * US);
    assert_eq!(setup("", &["switch.pfc.enabled=true", "switch.trimming=false"]).unwrap().rto, 4 * MS);
    assert_eq!(rejected("[transport]\nrto_us = 0\n", &[]).0, "transport.rto_us");
}

#[test]
fn link_events_resolve_to_ports_in_time_order() {
    let s = setup(
        "[[link_events]]\nat_us = 20\nlink = \"tor1-spine0\"\naction = \"rate\"\nrate_gbps = 50\n\
         [[link_events]]\nat_us = 10\nlink = \"tor0-spine0\"\naction = \"down\"\nreroute_after_us = 30\n",
        &[],
    )
    .unwrap();
    let got: Vec<_> = s.link_events.iter().map(|e| (e.at, e.action, s.fabric.link_name(e.ports[0]), s.fabric.link_name(e.ports[1]))).collect();
    let name = |a: &str, b: &str| (a.to_string(), b.to_string());
    let (down, rate) = (name("tor0-spine0", "spine0-tor0"), name("tor1-spine0", "spine0-tor1"));
    assert_eq!(
        got,
        [(10 * US, LinkAction::Down, down.0.clone(), down.1.clone()), (20 * US, LinkAction::Rate, rate.0, rate.1), (40 * US, LinkAction::Reroute, down.0, down.1)]
    );
    assert_eq!(s.link_events[1].rate.0, 50_000_000_000);
}

#[test]
fn link_event_on_a_missing_link_names_the_key() {
    let ev = |link: &str| rejected(&format!("[[link_events]]\nat_us = 1\nlink = \"tor0-spine0\"\naction = \"up\"\n[[link_events]]\nlink = \"{link}\"\naction = \"down\"\n"), &[]);
    let (key, message) = ev("tor0-spine9");
    assert_eq!(key, "link_events[1].link");
    assert!(message.contains("no node named `spine9`"), "{message}");
    let (key, message) = ev("host0-host1");
    assert_eq!((key.as_str(), message.as_str()), ("link_events[1].link", "`host0` and `host1` are not linked"));
    assert_eq!(ev("tor0-spine0#1").1, "`tor0-spine0#1`: no cable #1 between `tor0` and `spine0`");
    assert_eq!(ev("tor0").1, "`tor0`: expected NODE-NODE, e.g. \"tor0-agg1\"");
}

#[test]
fn run_options_are_checked_against_the_fabric_and_workload() {
    let s = setup("[run]\ntrace_interval_us = 2\ntrace_ports = [\"tor1-host1\"]\nend_time_us = 7\n", &[]).unwrap();
    assert_eq!((s.trace_interval, s.end_time, s.stall_limit), (2 * US, Some(7 * US), 10 * MS));
    assert_eq!(s.trace_ports.iter().map(|&p| s.fabric.link_name(PortId(p))).collect::<Vec<_>>(), ["tor1-host1"]);
    assert_eq!(s.trace_conns, [0, 1]);
    assert_eq!(rejected("[run]\ntrace_ports = [\"tor0-host1\"]\ntrace_interval_us = 1\n", &[]), ("run.trace_ports[0]".into(), "`tor0` and `host1` are not linked".into()));
    assert_eq!(rejected("[run]\ntrace_ports = [\"tor1-host1\"]\n", &[]).0, "run.trace_ports");
    assert_eq!(rejected("[run]\nack_log_conns = [2]\n", &[]), ("run.ack_log_conns".into(), "flow 2 does not exist: the workload has flows 0..1".into()));
    assert_eq!(rejected("[run]\ntrace_interval_us = 0\n", &[]).1, "0: allowed 0.001..=1000000000");
    // A period of 1 ps would take a sample per picosecond: refused by the declared range.
    assert_eq!(rejected("[run]\ntrace_interval_us = 1e-6\n", &[]).0, "run.trace_interval_us");
}

#[test]
fn the_first_error_in_pipeline_order_is_reported() {
    // Transport sizes come before the fabric, the fabric's numbers before run limits (both
    // checked from the scenario alone, before anything is built), those before the workload's
    // counts, link events (which need the built fabric) and tracing.
    let bad_link = "[[link_events]]\nlink = \"tor0-core0\"\naction = \"down\"\n";
    let bad_end = "[run]\nend_time_us = -1\ntrace_conns = [5]\n";
    let bad_flows = ["workload.permutations=4294967295"];
    assert_eq!(rejected(&format!("[transport]\nmtu_bytes = 64\n{bad_link}{bad_end}"), &[]).0, "transport.mtu_bytes");
    assert_eq!(rejected(&format!("{bad_link}{bad_end}"), &["topology.link_latency_ns=-1"]).0, "topology.link_latency_ns");
    assert_eq!(rejected(&format!("{bad_link}{bad_end}"), &bad_flows).0, "run.end_time_us");
    assert_eq!(rejected(bad_link, &bad_flows).0, "workload.permutations");
    assert_eq!(rejected(bad_link, &[]).0, "link_events[0].link");
    assert_eq!(rejected("[run]\ntrace_conns = [5]\nack_log_conns = [6]\n", &[]).0, "run.trace_conns");
}
