//! Pod–core link faults of the LB-for-AI-training paper (§5.4): partial LAG loss
//! (`[topology.failures] kind = "partial_lag"`) with its Eq. 2 verdict, flaky links with loss
//! bursts (`kind = "flaky"`), one-direction rate changes with scaled queues, and the per-tier
//! queue figures of `summary.json`.
use fabricsim::units::Bytes;
use fabricsim::ids::PortId;
mod common;

use fabricsim::engine::Sim;
use fabricsim::topo::Tier;
use fabricsim::units::BitsPerSec;
use fabricsim::{Scenario, Setup};
use std::path::Path;

fn setup(toml: &str) -> Setup {
    Scenario::from_toml(toml, &[]).expect("valid scenario").setup(Path::new(".")).expect("setup")
}

/// k = 4 fat tree at 400 Gb/s: 16 hosts, 4 pods, 2 aggregation switches × 2 core uplinks per pod.
const K4: &str = "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate_gbps = 400\n";
const ALL_TO_ALL: &str = "[workload]\nkind = \"all_to_all\"\nflow_bytes = \"64KiB\"\n";

fn json(r: &fabricsim::Results) -> serde_json::Value {
    serde_json::to_value(&r.summary).unwrap()
}

//= paper §5.4 (partial bandwidth loss, packed placement) and Appendix A, Eq. 2
//# k = 4: U = 4 uplinks per pod, N = 16, H = 4, so the uplinks stay off the bottleneck iff
//# f·p ≤ 4 − 4·12/15 = 0.8. f = 1, p = 0.5 passes; f = 2, p = 0.5 does not. The failed links
//# run at 200 Gb/s in both directions, every other link at 400 Gb/s.
#[test]
fn partial_lag_slows_the_packed_links_and_reports_eq2() {
    for (f, p, bottleneck) in [(1, 0.5, false), (2, 0.5, true)] {
        let toml = format!("{K4}[topology.failures]\nkind = \"partial_lag\"\nf = {f}\np = {p}\n{ALL_TO_ALL}");
        let s = setup(&toml);
        let fab = &s.fabric;
        assert_eq!(fab.failures.len(), 4 * f);
        // Packed: the first f uplinks of the pod's first aggregation switch.
        let names: Vec<String> = fab.failures.iter().map(|l| fab.link_name(l.up)).collect();
        let want: Vec<String> = [(0, 0), (2, 0), (4, 0), (6, 0)]
            .iter()
            .flat_map(|&(agg, _)| (0..f).map(move |u| format!("agg{agg}-core{u}")))
            .collect();
        assert_eq!(names, want);
        let sim = Sim::new(&s).unwrap();
        let failed: Vec<PortId> = fab.failures.iter().flat_map(|l| [l.up, l.down]).collect();
        for (i, spec) in fab.ports.iter().enumerate() {
            let want = if failed.contains(&PortId::at(i)) { BitsPerSec::from_gbps(200.0) } else { BitsPerSec::from_gbps(400.0) };
            assert_eq!(sim.port_rate(PortId::at(i)), want, "{}", fab.link_name(PortId::at(i)));
            // Queues kept by default (paper §4.2: one Q per port).
            assert_eq!(sim.port_profile(PortId::at(i)), s.qdisc.port_profile[i]);
            let _ = spec;
        }
        let r = common::run(&toml);
        assert_eq!(r.summary.flows_finished, r.summary.flows);
        let v = json(&r);
        let b = &v["pod_uplink_bottleneck"];
        assert_eq!(b["bottleneck"], serde_json::json!(bottleneck), "{b}");
        assert_eq!(b["pod_uplinks"], 4);
        assert!((b["max_fp"].as_f64().unwrap() - 0.8).abs() < 1e-12, "{b}");
        assert!(r.summary.fabric.contains("pod–core links degraded to 200 Gb/s"), "{}", r.summary.fabric);
        // Diagnostics: every port class of the fat tree, in tier order.
        let tiers: Vec<&str> = v["queues_by_tier"].as_array().unwrap().iter().map(|t| t["class"].as_str().unwrap()).collect();
        assert_eq!(tiers, ["tor_up", "agg_up", "agg_down", "core_down", "tor_down"]);
        for t in v["queues_by_tier"].as_array().unwrap() {
            let (mean, max) = (t["mean_bytes"].as_f64().unwrap(), t["max_bytes"].as_f64().unwrap());
            assert!(mean >= 0.0 && mean <= t["max_port_mean_bytes"].as_f64().unwrap() + 1e-9 && t["max_port_mean_bytes"].as_f64().unwrap() <= max, "{t}");
        }
        // No flaky links: no wire-loss figure.
        assert!(v["packets"].get("wire_losses").is_none());
    }
}

//= htsim `-failed` (one direction, queue scaled with the rate), as an option of partial_lag
#[test]
fn one_direction_with_scaled_queue() {
    let s = setup(&format!("{K4}[topology.failures]\nkind = \"partial_lag\"\nf = 2\np = 0.75\ndirection = \"down\"\nscale_queue = true\n{ALL_TO_ALL}"));
    let sim = Sim::new(&s).unwrap();
    for l in &s.fabric.failures {
        assert_eq!(sim.port_rate(l.up), BitsPerSec::from_gbps(400.0));
        assert_eq!(sim.port_rate(l.down), BitsPerSec::from_gbps(100.0));
        assert_eq!(s.fabric.tier[s.fabric.ports[l.down.idx()].owner.idx()], Tier::Core);
        let (full, scaled) = (&s.qdisc.profiles[s.qdisc.port_profile[l.up.idx()] as usize], &s.qdisc.profiles[sim.port_profile(l.down) as usize]);
        assert_eq!(scaled.buffer_bytes, Bytes(((full.buffer_bytes.0 as f64 * 0.25).round() as u64).max(4096)));
        assert_eq!(scaled.kmax_bytes, Bytes((full.kmax_bytes.0 as f64 * 0.25).round() as u64));
    }
    common::run(&format!("{K4}[topology.failures]\nkind = \"partial_lag\"\nf = 2\np = 0.75\ndirection = \"down\"\nscale_queue = true\n{ALL_TO_ALL}"));
}

//= paper §5.4 / §6 (flaky links: bursts every 100 µs for 10 µs, lost on the wire)
//# Every packet transmitted in a burst is lost; the flows still complete (timeouts and
//# retransmissions), wire losses are counted apart from buffer drops and trims, and every
//# packet kind is conserved with wire-lost packets counted as dropped.
#[test]
fn flaky_links_lose_packets_on_the_wire_and_flows_recover() {
    let toml = format!("{K4}[topology.failures]\nkind = \"flaky\"\n[workload]\nkind = \"all_to_all\"\nflow_bytes = \"1MiB\"\n");
    let r = common::run(&toml);
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    let v = json(&r);
    let lost = v["packets"]["wire_losses"].as_u64().unwrap();
    assert!(lost > 0, "no wire losses in {} µs", r.summary.completion_time_us);
    // Counted among the drops of their kinds, not as buffer drops.
    let dropped: u64 = v["packets"]["by_kind"].as_object().unwrap().values().map(|k| k["dropped"].as_u64().unwrap()).sum();
    assert!(dropped >= lost && r.summary.packets.buffer_drops + lost <= dropped, "{dropped} dropped, {lost} on the wire");
    for (kind, k) in v["packets"]["by_kind"].as_object().unwrap() {
        assert_eq!(k["sent"].as_u64(), Some(k["arrived"].as_u64().unwrap() + k["dropped"].as_u64().unwrap()), "{kind}");
    }
    // Only the flaky pod–core ports lose on the wire: agg_up and core_down.
    let by_tier: u64 = v["queues_by_tier"].as_array().unwrap().iter().map(|t| t["wire_losses"].as_u64().unwrap()).sum();
    assert_eq!(by_tier, lost);
    for t in v["queues_by_tier"].as_array().unwrap() {
        if !matches!(t["class"].as_str(), Some("agg_up" | "core_down")) {
            assert_eq!(t["wire_losses"], 0, "{t}");
        }
    }
    assert!(r.summary.fabric.contains("flaky"), "{}", r.summary.fabric);
    // Per port: 2 links × 2 directions × 4 pods, their losses summing to the total.
    let ports = v["flaky_ports"].as_array().unwrap();
    assert_eq!(ports.len(), 16);
    assert_eq!(ports.iter().map(|p| p["wire_losses"].as_u64().unwrap()).sum::<u64>(), lost);
    let (tx, wl): (u64, u64) = ports.iter().fold((0, 0), |(a, b), p| (a + p["transmitted"].as_u64().unwrap(), b + p["wire_losses"].as_u64().unwrap()));
    println!("flaky ports: {wl} of {tx} packets lost ({:.4})", wl as f64 / tx as f64);
    // The same seed loses the same packets.
    assert_eq!(json(&common::run(&toml))["packets"]["wire_losses"].as_u64(), Some(lost));
}

#[test]
fn bad_fault_keys_are_named() {
    let bad = |failures: &str| common::rejection(&format!("{K4}[topology.failures]\n{failures}\n{ALL_TO_ALL}"));
    for (failures, key, allowed) in [
        ("kind = \"partial_lag\"\nf = 5\np = 0.5", "topology.failures.f", "1..=4"),
        ("kind = \"partial_lag\"\nf = 0\np = 0.5", "topology.failures.f", "1..=4"),
        ("kind = \"partial_lag\"\nf = 2\np = 1.0", "topology.failures.p", "strictly between 0 and 1"),
        ("kind = \"partial_lag\"\nf = 2\np = 0", "topology.failures.p", "strictly between 0 and 1"),
        ("kind = \"partial_lag\"\nf = 4\np = 1.0", "topology.failures.p", "whole uplink capacity"),
        ("kind = \"partial_lag\"\nf = 2", "topology.failures.p", "missing"),
        ("kind = \"partial_lag\"\np = 0.5", "topology.failures.f", "missing"),
        ("kind = \"flaky\"\nburst_gap_us = 0", "topology.failures.burst_gap_us", "positive"),
        ("kind = \"flaky\"\nburst_len_us = -1", "topology.failures.burst_len_us", "positive"),
        ("kind = \"flaky\"\np = 0.5", "topology.failures.p", "partial_lag"),
        ("kind = \"flaky\"\nscale_queue = true", "topology.failures.scale_queue", "partial_lag"),
        ("kind = \"partial_lag\"\nf = 1\np = 0.5\ntors = 1", "topology.failures.tors", "tor_uplinks"),
        ("kind = \"partial_lag\"\nf = 1\np = 0.5\nplacement = \"diagonal\"", "placement", "packed"),
        ("tors = 1\nuplinks_per_tor = 1\nscale_queue = true", "topology.failures.scale_queue", "degraded"),
    ] {
        let e = bad(failures);
        assert!(e.contains(key) && e.contains(allowed), "{failures}: {e}");
    }
    let e = common::rejection(&format!("[topology]\nkind = \"leaf_spine\"\nk = 8\n[topology.failures]\nkind = \"flaky\"\n{ALL_TO_ALL}"));
    assert!(e.contains("topology.failures.kind") && e.contains("fat tree"), "{e}");
}

//= htsim `-failed` as a link event: one direction slowed, its queue scaled
#[test]
fn link_event_slows_one_direction_with_a_scaled_queue() {
    let toml = format!(
        "{K4}{ALL_TO_ALL}[[link_events]]\nat_us = 1\nlink = \"core0-agg0\"\naction = \"rate\"\nrate_gbps = 40\ndirection = \"forward\"\nscale_queue = true\n"
    );
    let s = setup(&toml);
    let ev = s.link_events[0];
    assert!(ev.one_way);
    assert_eq!(s.fabric.link_name(ev.ports[0]), "core0-agg0");
    let q = ev.profiles.unwrap();
    let nominal = &s.qdisc.profiles[s.qdisc.port_profile[ev.ports[0].idx()] as usize];
    assert_eq!(s.qdisc.profiles[q[0] as usize].buffer_bytes, Bytes(((nominal.buffer_bytes.0 as f64 * 0.1).round() as u64).max(4096)));
    // The reverse port (agg0 towards core0) keeps its queue, and no profile is made for it.
    assert_eq!(q[1], s.qdisc.port_profile[ev.ports[1].idx()]);
    assert!(!s.qdisc.labels.iter().any(|l| l.contains("agg_up@400G slowed")), "{:?}", s.qdisc.labels);
    let r = common::run(&toml);
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    let e = common::rejection(&format!("{K4}{ALL_TO_ALL}[[link_events]]\nlink = \"core0-agg0\"\naction = \"down\"\ndirection = \"forward\"\n"));
    assert!(e.contains("link_events[0].direction"), "{e}");
}
