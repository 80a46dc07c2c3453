//! The SeqBalance paper's fabrics from scenario files: the 320-host 3-tier "FatTree" given by
//! per-tier counts (seqbalance spec §5.3, HPCC's 5-pod wiring), and the testbed's asymmetric
//! leaf-spine with one 80 G spine (§5.1, Fig. 8b), with their per-rate queue settings.
use fabricsim::units::{Bytes, Time};
mod common;

use fabricsim::topo::Tier;
use std::path::Path;

/// The 5-pod fabric: 100 G hosts, 400 G ToR–agg and agg–core, 1 µs links.
const FIVE_POD: &str = r#"
    [topology]
    kind = "fat_tree"
    pods = 5
    tors_per_pod = 4
    aggs_per_pod = 4
    hosts_per_tor = 16
    cores = 16
    host_link_rate_gbps = 100
    tor_uplink_rate_gbps = 400
    agg_uplink_rate_gbps = 400
"#;

fn setup(toml: &str) -> fabricsim::scenario::Setup {
    fabricsim::Scenario::from_toml(toml, &[]).expect("valid scenario").setup(Path::new(".")).expect("setup")
}

//= type=test
//= seqbalance spec §5.3; type=paper
//# 16 core, 20 Agg and 20 ToR switches, 16 servers per ToR, 320 servers; 400 G ToR–Agg.
#[test]
fn five_pod_fabric_counts_rates_and_base_rtt() {
    let s = setup(FIVE_POD);
    let f = &s.fabric;
    assert_eq!(f.tier_counts(), vec![(Tier::Host, 320), (Tier::Tor, 20), (Tier::Agg, 20), (Tier::Core, 16)]);
    let rates = |a: Tier, b: Tier| {
        let mut r: Vec<f64> = f.ports.iter().filter(|p| f.tier[p.owner.idx()] == a && f.tier[p.peer.idx()] == b).map(|p| p.rate.gbps()).collect();
        r.dedup();
        r
    };
    assert_eq!(rates(Tier::Host, Tier::Tor), [100.0]);
    assert_eq!(rates(Tier::Tor, Tier::Agg), [400.0]);
    assert_eq!(rates(Tier::Core, Tier::Agg), [400.0]);
    // The longest path crosses 6 links of 1 µs each way: 4096 B data, 64 B ACK at 100 G on the
    // two host links and 400 G on the four others.
    let ser = 2 * (common::tx_ps(4096, 100) + common::tx_ps(64, 100)) + 4 * (common::tx_ps(4096, 400) + common::tx_ps(64, 400));
    assert_eq!(s.base_rtt, Time(12_000_000 + ser));
    assert_eq!(s.bdp_bytes, Bytes(100 * (12_000_000 + ser) / 8000));
}

/// A permutation of 1 MiB flows on the 5-pod fabric with host path selection `lb`, fixed
/// 2-BDP windows and ample buffers.
fn five_pod_permutation(lb: &str) -> fabricsim::Results {
    common::run(&format!(
        r#"
        seed = 7
        {FIVE_POD}
        [switch]
        buffer_bytes = "16MiB"
        [transport]
        lb = "{lb}"
        [transport.cc]
        name = "fixed"
        window_bdp = 2.0
        [workload]
        kind = "permutation"
        flow_bytes = "1MiB"
    "#
    ))
}

//= type=test
//# A permutation on the 5-pod fabric (1:1 at both tiers), sprayed, finishes near its ideal.
//# Not exactly at it: a ToR's uplinks carry 304/319 of its hosts' traffic (≈ 95 % load) and the
//# aggregation uplinks 256/319 (80 %), so randomly sprayed packets queue as a near-zero-drift
//# random walk, whose backlog costs ~1/√n for n-packet flows (see permutation_spray_vs_ecmp.rs;
//# measured 1.08 at 1 MiB, 1.05 at 8 MiB). Flow-level ECMP puts 5 or more of a ToR's 16 flows
//# on one 400 G uplink and roughly doubles the completion time.
#[test]
fn permutation_on_the_five_pod_fabric_finishes_near_its_ideal() {
    let spray = five_pod_permutation("spray");
    let s = &spray.summary;
    assert_eq!(s.flows_finished, 320);
    assert_eq!(s.packets.trimmed + s.packets.dropped, 0);
    // (The ideal, a lower bound, adds only the shortest cross-ToR propagation to the ToR
    // uplinks' busy time: 1.103 measured.)
    assert!(s.completion_time_us <= 1.12 * s.ideal_completion_time_us, "{} vs ideal {}", s.completion_time_us, s.ideal_completion_time_us);
    let ecmp = five_pod_permutation("ecmp");
    assert!(ecmp.summary.completion_time_us >= 1.5 * s.completion_time_us, "ECMP {} vs spray {}", ecmp.summary.completion_time_us, s.completion_time_us);
}

#[test]
fn bad_explicit_shapes_name_the_key() {
    let cases: &[(&str, &[&str])] = &[
        ("[topology]\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\n", &["topology.cores", "missing", "`pods`, `tors_per_pod`, `aggs_per_pod`, `hosts_per_tor`, `cores`"]),
        ("[topology]\nhosts_per_tor = 16\n", &["topology.pods", "missing"]),
        ("[topology]\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\ncores = 10\n", &["topology.cores", "multiple of aggs_per_pod (4)"]),
        ("[topology]\nk = 8\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\ncores = 16\n", &["topology.k", "not both"]),
        ("[topology]\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\ncores = 16\noversubscription = 2\n", &["topology.oversubscription"]),
        ("[topology]\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\ncores = 16\noversubscribed_tier = \"agg\"\n", &["topology.oversubscribed_tier"]),
        ("[topology]\nkind = \"leaf_spine\"\npods = 5\n", &["topology.pods", "only for kind = \"fat_tree\""]),
        ("[topology]\nkind = \"fat_tree\"\ntors = 2\n", &["topology.tors", "only for kind = \"leaf_spine\""]),
        ("[topology]\nspine_link_rates_gbps = [80, 40]\n", &["topology.spine_link_rates_gbps", "leaf_spine"]),
        ("[topology]\nkind = \"leaf_spine\"\nk = 8\nspine_link_rates_gbps = [80, 40]\n", &["topology.spine_link_rates_gbps", "explicit"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 3\nspines = 3\nspine_link_rates_gbps = [80, 40]\n", &["topology.spine_link_rates_gbps", "2 rates for 3 spines"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 3\nspines = 2\nspine_link_rates_gbps = [80, -1]\n", &["topology.spine_link_rates_gbps[1]", "positive"]),
        ("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 3\nspines = 2\ntor_uplink_rate_gbps = 40\nspine_link_rates_gbps = [80, 40]\n", &["topology.spine_link_rates_gbps", "not both"]),
    ];
    for (toml, needles) in cases {
        let e = common::rejection(toml);
        for n in *needles {
            assert!(e.contains(n), "{toml}\n=> {e}\n(missing {n:?})");
        }
    }
}

/// The testbed: 2 leaves × 3 hosts, 40 G links, spines at `spines` (Gb/s), DCQCN thresholds
/// of 160 / 520 KB at 40 G and twice that on 80 G ports.
fn testbed(spines: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "leaf_spine"
        tors = 2
        hosts_per_tor = 3
        spines = 3
        link_rate_gbps = 40
        spine_link_rates_gbps = {spines}
        [switch]
        trimming = false
        ecn_kmin_bytes = "160KB"
        ecn_kmax_bytes = "520KB"
        ecn_pmax = 0.2
        [[switch.by_link_rate]]
        rate_gbps = 80
        ecn_kmin_bytes = "320KB"
        ecn_kmax_bytes = "1040KB"
        [switch.pfc]
        enabled = true
        [transport]
        lb = "ecmp"
        cc = "dcqcn"
        reliability = "go_back_n"
        [workload]
        kind = "incast"
        sender_hosts = [0]
        receiver = 5
        flow_bytes = "256KiB"
    "#
    )
}

//= type=test
//= seqbalance spec §5.1 (Fig. 8b); type=paper
//# The asymmetric testbed: each ToR has one 80 G and two 40 G uplinks, ECMP has 3 next hops;
//# a queue rule for 80 G ports applies to exactly the doubled spine's cables.
#[test]
fn asymmetric_testbed_gets_its_80g_queue_rule_and_three_next_hops() {
    let s = setup(&testbed("[80, 40, 40]"));
    let f = &s.fabric;
    let (t0, t1) = (f.tor_of_host[0], f.tor_of_host[5]);
    assert_eq!(f.routes.next_hops(f, t0, t1).len(), 3);
    let q = &s.qdisc;
    let kmin = |p: usize| q.profiles[q.port_profile[p] as usize].kmin_bytes.0;
    let mut by_rate: Vec<(u64, u64)> = (0..f.ports.len()).filter(|&p| f.tier[f.ports[p].owner.idx()] != Tier::Host).map(|p| (f.ports[p].rate.0 / 1_000_000_000, kmin(p))).collect();
    by_rate.sort_unstable();
    by_rate.dedup();
    assert_eq!(by_rate, [(40, 160_000), (80, 320_000)]);
    // 2 ToRs × 1 cable, both directions, at 80 G.
    assert_eq!((0..f.ports.len()).filter(|&p| f.ports[p].rate.gbps() == 80.0).count(), 4);
    // The base RTT (and so the BDP) is the slowest path's: as in the symmetric testbed.
    let sym = setup(&testbed("[40, 40, 40]").replace("[[switch.by_link_rate]]\n        rate_gbps = 80\n        ecn_kmin_bytes = \"320KB\"\n        ecn_kmax_bytes = \"1040KB\"\n", ""));
    assert_eq!((s.base_rtt, s.bdp_bytes), (sym.base_rtt, sym.bdp_bytes));
    // One flow runs through either kind of spine at its host link's rate.
    let r = common::run(&testbed("[80, 40, 40]"));
    assert_eq!(r.summary.flows_finished, 1);
    assert!(r.summary.slowdown.max < 1.05, "{}", r.summary.slowdown.max);
}

//= type=test
//# The shipped 3-tier scenario loads: the 5-pod fabric, DCQCN with the lineage preset,
//# go-back-N with a 4 µs NACK interval, and per-rate ECN profiles on 100 G and 400 G ports.
#[test]
fn websearch_3tier_scenario_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seqbalance/websearch_3tier.toml");
    let s = fabricsim::scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.fabric.hosts, 320);
    let q = &s.qdisc;
    let mut thresholds: Vec<(u64, u64, u64)> = (0..s.fabric.ports.len())
        .filter(|&p| s.fabric.tier[s.fabric.ports[p].owner.idx()] != Tier::Host)
        .map(|p| {
            let c = &q.profiles[q.port_profile[p] as usize];
            (s.fabric.ports[p].rate.0 / 1_000_000_000, c.kmin_bytes.0, c.kmax_bytes.0)
        })
        .collect();
    thresholds.sort_unstable();
    thresholds.dedup();
    assert_eq!(thresholds, [(100, 400_000, 1_600_000), (400, 1_600_000, 6_400_000)]);
    let resolved = s.scenario.to_toml();
    for needle in ["preset = \"seqbalance\"", "nack_repeat = \"interval\"", "nack_interval_us = 4.0", "cnp_interval_us = 4.0", "mtu_bytes = 1048"] {
        assert!(resolved.contains(needle), "{needle} not in\n{resolved}");
    }
}
