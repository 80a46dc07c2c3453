//! Uplinks failed at build time (`[topology.failures]`, strack spec §4 and §5.2.2), routing
//! re-convergence after a mid-run link failure (`reroute_after_us`), and leaf-spines given by
//! explicit counts (`tors`, `hosts_per_tor`, `spines`, `links_per_spine`: the smartt-reps
//! testbeds TB16 and TB128).
use fabricsim::units::Time;
mod common;

use fabricsim::engine::Sim;
use fabricsim::ids::NodeId;
use fabricsim::topo::{Fabric, Tier};
use fabricsim::{Scenario, Setup};
use std::path::Path;

fn setup(toml: &str) -> Setup {
    Scenario::from_toml(toml, &[]).expect("valid scenario").setup(Path::new(".")).expect("setup")
}

fn tors(f: &Fabric) -> Vec<NodeId> {
    (0..f.tier.len()).map(NodeId::at).filter(|&n| f.tier[n] == Tier::Tor).collect()
}

fn drops(r: &fabricsim::Results) -> u64 {
    r.summary.packets.dropped + r.summary.packets.control_dropped
}

const LEAF_SPINE_K8: &str = "[topology]\nkind = \"leaf_spine\"\nk = 8\n";
const PERMUTATION: &str = "[workload]\nkind = \"permutation\"\nflow_bytes = \"1MiB\"\nlocality = \"cross_tor\"\n";

//= type=test
//= strack spec §4 (link failure model: removed, ECMP rebuilt per destination ToR)
//# No removed cable is in any next-hop set, a spine that lost its cable to ToR X is a next hop
//# towards X from no ToR, and a sprayed permutation over the damaged fabric loses nothing.
#[test]
fn removed_uplinks_leave_every_route_and_a_permutation_loses_nothing() {
    for topo in [
        LEAF_SPINE_K8.to_string(),
        // Fat tree k = 4: "uplinks" are ToR-to-aggregation cables (2 per ToR).
        "[topology]\nkind = \"fat_tree\"\nk = 4\n".to_string(),
    ] {
        let failures = if topo.contains("fat_tree") { "tors = 3\nuplinks_per_tor = 1" } else { "tors = 3\nuplinks_per_tor = 2" };
        let toml = format!("{topo}[topology.failures]\n{failures}\n{PERMUTATION}");
        let s = setup(&toml);
        let f = &s.fabric;
        let removed = f.removed_ports();
        let per_tor: u32 = if topo.contains("fat_tree") { 1 } else { 2 };
        assert_eq!(f.failures.len() as u32, 3 * per_tor);
        assert_eq!(removed.iter().filter(|&&r| r).count() as u32, 2 * 3 * per_tor);
        for x in tors(f) {
            for sw in (f.hosts..f.tier.len() as u32).map(NodeId) {
                if sw == x {
                    continue;
                }
                let hops = f.routes.next_hops(f, sw, x);
                assert!(!hops.is_empty(), "{} has no route to {}", f.node_name(sw), f.node_name(x));
                assert!(hops.iter().all(|&p| !removed[p.idx()]), "{} routes to {} over a removed cable", f.node_name(sw), f.node_name(x));
            }
            // Upper switches that lost their cable to x.
            let cut: Vec<NodeId> = f.failures.iter().filter(|l| f.ports[l.up.idx()].owner == x).map(|l| f.ports[l.up.idx()].peer).collect();
            for y in tors(f).into_iter().filter(|&y| y != x) {
                for &p in f.routes.next_hops(f, y, x) {
                    assert!(!cut.contains(&f.ports[p.idx()].peer), "{} still sends towards {} via a switch cut off from it", f.node_name(y), f.node_name(x));
                }
            }
        }
        let r = common::run(&toml);
        assert_eq!(r.summary.flows_finished, r.summary.flows);
        assert_eq!(drops(&r), 0, "{}", r.summary.fabric);
        assert_eq!(r.summary.failed_links.len() as u32, 3 * per_tor);
        assert!(r.summary.fabric.contains("removed"), "{}", r.summary.fabric);
    }
}

//= type=test
//= strack spec §5.2.2 (degraded-link alternative)
//# A degraded cable keeps its place in every ECMP set and runs at factor × rate.
#[test]
fn degraded_uplinks_stay_in_ecmp_and_run_at_the_reduced_rate() {
    let healthy = setup(&format!("{LEAF_SPINE_K8}{PERMUTATION}"));
    let degraded = setup(&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 3\nuplinks_per_tor = 4\nmodel = \"degraded\"\n{PERMUTATION}"));
    let (h, d) = (&healthy.fabric, &degraded.fabric);
    assert_eq!(d.failures.len(), 12);
    for x in tors(h) {
        for sw in (h.hosts..h.tier.len() as u32).map(NodeId) {
            if sw != x {
                assert_eq!(h.routes.next_hops(h, sw, x), d.routes.next_hops(d, sw, x));
            }
        }
    }
    // The nominal rates (base RTT, buffers) are those of the healthy fabric.
    assert_eq!(healthy.base_rtt, degraded.base_rtt);

    // Two ToRs with one host and one uplink each: both flows of the permutation cross the one
    // degraded cable (one in each direction), at 400 × 0.25 = 100 Gb/s.
    let one_link = |failures: &str| {
        common::run(&format!(
            "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 1\nspines = 1\n{failures}\n[transport.cc]\nname = \"fixed\"\nwindow_bdp = 1.0\n{PERMUTATION}"
        ))
    };
    let slow = one_link("[topology.failures]\ntors = 1\nuplinks_per_tor = 1\nmodel = \"degraded\"\ndegraded_rate_factor = 0.25\n");
    let fast = one_link("");
    // 1 MiB of payload in 4032-byte packets: 261 packets of 4096 B = 1,069,056 B on the wire.
    let wire_100g = common::tx_ps(1_069_056, 100);
    for (s, f) in slow.flows.iter().zip(&fast.flows) {
        let (s, f) = (s.fct().unwrap(), f.fct().unwrap());
        // At least the serialization at 100 Gb/s; at most that plus the healthy FCT (the RTT and
        // the ramp).
        assert!(s >= Time(wire_100g) && s <= Time(wire_100g) + f, "fct {s} ps degraded, {f} ps healthy, {wire_100g} ps on the wire at 100G");
    }
}

#[test]
fn failure_choice_is_deterministic_per_seed_and_differs_across_seeds() {
    let failed = |seed: u64| {
        let s = setup(&format!("seed = {seed}\n[topology]\nkind = \"leaf_spine\"\nk = 16\n[topology.failures]\ntors = 4\nuplinks_per_tor = 3\n{PERMUTATION}"));
        s.fabric.failures.iter().map(|l| s.fabric.link_name(l.up)).collect::<Vec<_>>()
    };
    let a = failed(1);
    assert_eq!(a.len(), 12);
    assert_eq!(a, failed(1));
    assert_ne!(a, failed(2));
    assert_ne!(failed(2), failed(3));
}

/// Two ToRs of 4 hosts, 4 spines, 400 Gb/s; every host sprays 4 MiB to a host under the other
/// ToR; tor0's cable to spine0 dies at 20 µs.
fn link_down(reroute: &str, end: &str, extra: &str) -> fabricsim::Results {
    common::run(&format!(
        "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 4\nspines = 4\n\
         [workload]\nkind = \"permutation\"\nflow_bytes = \"4MiB\"\nlocality = \"cross_tor\"\n\
         [[link_events]]\nat_us = 20\nlink = \"tor0-spine0\"\naction = \"down\"\n{reroute}\n{extra}\n[run]\n{end}\n"
    ))
}

//= type=test
//# With `reroute_after_us` the dead cable leaves the routes at 25 µs and losses stop once its
//# queue has drained; without it, ECMP keeps spraying onto it until the flows end.
#[test]
fn reroute_after_a_failure_stops_the_drops_and_without_it_they_continue() {
    // Runs are deterministic, so a run stopped at 60 µs is the prefix of the full run.
    let early = link_down("reroute_after_us = 5", "end_time_us = 60", "");
    let full = link_down("reroute_after_us = 5", "", "");
    assert!(drops(&early) > 0, "the failure must cost something before the reroute");
    assert_eq!(drops(&full), drops(&early), "no drops after the reroute");
    assert_eq!(full.summary.flows_finished, full.summary.flows);

    let early_stuck = link_down("", "end_time_us = 60", "");
    let full_stuck = link_down("", "", "");
    assert_eq!(full_stuck.summary.flows_finished, full_stuck.summary.flows);
    assert!(drops(&full_stuck) > drops(&early_stuck), "without reroute, drops continue after 60 us");
    assert!(drops(&full_stuck) > 2 * drops(&full), "{} vs {}", drops(&full_stuck), drops(&full));
    assert!(full.summary.completion_time_us < full_stuck.summary.completion_time_us);
}

#[test]
fn a_link_coming_back_up_rejoins_the_routes_after_the_delay() {
    let toml = "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 4\nspines = 4\n\
         [workload]\nkind = \"permutation\"\nflow_bytes = \"4MiB\"\nlocality = \"cross_tor\"\n\
         [[link_events]]\nat_us = 20\nlink = \"tor0-spine0\"\naction = \"down\"\nreroute_after_us = 5\n\
         [[link_events]]\nat_us = 40\nlink = \"tor0-spine0\"\naction = \"up\"\nreroute_after_us = 5\n";
    let s = setup(toml);
    let f = &s.fabric;
    let (tor0, tor1) = (f.node_by_name("tor0").unwrap(), f.node_by_name("tor1").unwrap());
    let spines_towards = |f: &Fabric, from: NodeId, to: NodeId| f.routes.next_hops(f, from, to).len();
    let mut sim = Sim::new(&s).unwrap();
    sim.run(&mut |_| {});
    assert_eq!(spines_towards(sim.fabric(), tor1, tor0), 4);
    // Stopped between the reroutes: spine0 is gone from both directions.
    let s2 = setup(&format!("{toml}[run]\nend_time_us = 30\n"));
    let mut sim = Sim::new(&s2).unwrap();
    sim.run(&mut |_| {});
    assert_eq!(spines_towards(sim.fabric(), tor1, tor0), 3);
    assert_eq!(spines_towards(sim.fabric(), tor0, tor1), 3);
    let r = common::run(toml);
    assert_eq!(r.summary.flows_finished, r.summary.flows);
}

//= smartt-reps spec §5.1 (TB16, TB128)
#[test]
fn explicit_leaf_spine_counts() {
    let tb16 = setup("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\nspines = 2\nhost_link_rate_gbps = 100\ntor_uplink_rate_gbps = 400\n");
    let f = &tb16.fabric;
    assert_eq!(f.tier_counts(), vec![(Tier::Host, 16), (Tier::Tor, 2), (Tier::Agg, 2)]);
    assert_eq!(f.ports.len(), 2 * (16 + 4));
    // 8 × 100G under each ToR, 2 × 400G above: 1:1.
    assert!(f.description.contains("1:1"), "{}", f.description);
    let tb128 = setup("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 64\nspines = 8\nlinks_per_spine = 2\nhost_link_rate_gbps = 100\ntor_uplink_rate_gbps = 400\n");
    let f = &tb128.fabric;
    assert_eq!(f.tier_counts(), vec![(Tier::Host, 128), (Tier::Tor, 2), (Tier::Agg, 8)]);
    assert_eq!(f.ports.len(), 2 * (128 + 32));
    let (t0, t1) = (f.tor_of_host[0], f.tor_of_host[64]);
    assert_ne!(t0, t1);
    assert_eq!(f.routes.next_hops(f, t0, t1).len(), 16);
    // Parallel cables are named `#i`, in link events as in `check`.
    let second = setup("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 1\nlinks_per_spine = 2\n[[link_events]]\nlink = \"tor0-spine0#1\"\naction = \"down\"\n");
    let (f, p) = (&second.fabric, second.link_events[0].ports[0]);
    assert_eq!(f.link_name(p), "tor0-spine0#1");
    assert_eq!(f.routes.next_hops(f, f.tor_of_host[0], f.tor_of_host[2])[1], p);
    // The experiment scenarios stay valid.
    for file in ["t7_tb16.toml", "t8_tb128.toml"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/smartt-reps/scenarios").join(file);
        let s = fabricsim::scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(s.fabric.tier_counts()[1].1 == 2, "{file}: {}", s.fabric.description);
    }
}

#[test]
fn bad_topology_inputs_name_the_field() {
    let cases: &[(&str, &[&str])] = &[
        ("[topology]\nkind = \"leaf_spine\"\nk = 8\ntors = 2\n", &["topology.k", "not both"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\n", &["topology.spines", "missing"]),
        ("[topology]\nkind = \"fat_tree\"\nspines = 2\n", &["topology.spines", "leaf_spine"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\nspines = 2\noversubscription = \"2:1\"\n", &["topology.oversubscription"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\nspines = 0\n", &["topology.spines", "at least 1"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 9\nuplinks_per_tor = 1\n"), &["topology.failures.tors", "1..=8"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\nuplinks_per_tor = 4\n"), &["topology.failures.uplinks_per_tor", "partition", "1..=3"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\nuplinks_per_tor = 5\nmodel = \"degraded\"\n"), &["topology.failures.uplinks_per_tor", "1..=4"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\nuplinks_per_tor = 1\ndegraded_rate_factor = 0.5\n"), &["topology.failures.degraded_rate_factor", "degraded"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\nuplinks_per_tor = 1\nmodel = \"degraded\"\ndegraded_rate_factor = 0\n"), &["degraded_rate_factor", "between 0 and 1"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\nuplinks_per_tor = 1\nmodel = \"gone\"\n"), &["topology.failures", "`removed`", "`degraded`"]),
        (&format!("{LEAF_SPINE_K8}[topology.failures]\ntors = 1\n"), &["topology.failures", "uplinks_per_tor"]),
        (
            &format!("{LEAF_SPINE_K8}[[link_events]]\nlink = \"tor0-spine0\"\naction = \"rate\"\nrate_gbps = 100\nreroute_after_us = 5\n"),
            &["link_events[0].reroute_after_us", "\"down\""],
        ),
        (&format!("{LEAF_SPINE_K8}[[link_events]]\nlink = \"tor0-spine0\"\naction = \"down\"\nreroute_after_us = -1\n"), &["link_events[0].reroute_after_us"]),
        (&format!("{LEAF_SPINE_K8}[[link_events]]\nlink = \"tor0-spine0\"\naction = \"reroute\"\n"), &["link_events", "`down`"]),
        (&format!("{LEAF_SPINE_K8}[[link_events]]\nlink = \"tor0-spine0#1\"\naction = \"down\"\n"), &["link_events[0].link", "no cable #1"]),
        (&format!("{LEAF_SPINE_K8}[[link_events]]\nlink = \"tor0-spine0#x\"\naction = \"down\"\n"), &["link_events[0].link", "cable index"]),
    ];
    for (toml, needles) in cases {
        let e = common::rejection(toml);
        for n in *needles {
            assert!(e.contains(n), "{toml}\n=> {e}\n(missing {n:?})");
        }
    }
}

#[test]
fn failures_survive_the_resolved_scenario() {
    // `summary.json` and `check` show the resolved scenario as TOML; rerunning it must give the
    // same fabric.
    let s = setup(&format!("seed = 4\n{LEAF_SPINE_K8}[topology.failures]\ntors = 2\nuplinks_per_tor = 1\nmodel = \"degraded\"\n{PERMUTATION}"));
    let text = s.scenario.to_toml();
    assert!(text.contains("[topology.failures]") && text.contains("model = \"degraded\""), "{text}");
    let again = setup(&text);
    assert_eq!(again.fabric.failures, s.fabric.failures);
}

/// The fabric's description names the tier whose uplinks failed: named aggregation–core links
/// (what `from-htsim` writes for htsim's `-failed`) were described as "ToR uplinks".
#[test]
fn failed_links_are_described_by_their_tier() {
    let fabric = |links: &str| {
        setup(&format!("[topology]\nk = 8\n[topology.failures]\nlinks = [{links}]\nmodel = \"degraded\"\ndegraded_rate_factor = 0.25\n")).fabric.description.clone()
    };
    let agg = fabric("\"agg0-core0\", \"agg0-core1\", \"agg0-core2\"");
    assert!(agg.contains("3 agg uplinks degraded to 100 Gb/s (1 aggs × 3)"), "{agg}");
    let tor = fabric("\"tor0-agg0\", \"tor1-agg1\"");
    assert!(tor.contains("2 ToR uplinks degraded to 100 Gb/s (2 ToRs × 1)"), "{tor}");
    let mixed = fabric("\"tor0-agg0\", \"agg0-core0\"");
    assert!(mixed.contains("; 2 links degraded to 100 Gb/s") && !mixed.contains(" × "), "{mixed}");
}
