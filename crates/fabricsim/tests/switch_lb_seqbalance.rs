//! SeqBalance's switch side on small RoCE fabrics (seqbalance spec §2.4.9 properties, §7 T0):
//! every Congestion Packet answers one CE mark made upstream of the destination ToR, a
//! lossless run never reorders (no sequence NACK), and on a cross-rack permutation that ECMP
//! hashes unevenly the congestion-aware pinning finishes sooner; fat trees are source-routed.
mod common;

use fabricsim::net::packet::PktKind;

/// A RoCE fabric (DCQCN, go-back-N, PFC, the paper's ECN thresholds at 100 G and its 1000 B
/// payloads) running a cross-rack permutation of 4 MB flows with switch scheme `lb`.
fn roce(topology: &str, lb: &str) -> String {
    format!(
        r#"
        seed = 1
        [topology]
        {topology}
        link_rate_gbps = 100
        link_latency_ns = 1000
        [switch]
        trimming = false
        ecn_kmin_bytes = "400KB"
        ecn_kmax_bytes = "1600KB"
        ecn_pmax = 0.2
        [switch.pfc]
        enabled = true
        [switch.lb]
        name = "{lb}"
        [transport]
        mtu_bytes = 1048
        header_bytes = 48
        cc = "dcqcn"
        lb = "ecmp"
        reliability = "go_back_n"
        [workload]
        kind = "permutation"
        flow_bytes = "4MB"
        locality = "cross_tor"
        [run]
        trace_interval_us = 100
        trace_ports = ["tor_up"]
    "#
    )
}

const LEAF_SPINE: &str = "kind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 8\nspines = 4";

fn congestion_packets(r: &fabricsim::Results) -> (u64, u64, u64) {
    let row = r.summary.packets.by_kind.0.iter().find(|(n, _)| *n == PktKind::Congestion.name());
    row.map_or((0, 0, 0), |(_, k)| (k.sent, k.arrived, k.dropped))
}

#[test]
fn pinning_avoids_marked_paths_without_reordering() {
    // Measured (seed 1): ECMP 5571.3 µs, seqbalance 2169.3 µs, its ECN marks each answered
    // by one Congestion Packet (a permutation has no last-hop incast, so every mark is made
    // upstream of the destination ToR).
    let ecmp = common::run(&roce(LEAF_SPINE, "ecmp"));
    let sb = common::run(&roce(LEAF_SPINE, "seqbalance"));
    for r in [&ecmp, &sb] {
        assert_eq!(r.summary.flows_finished, 16);
        assert_eq!(r.summary.packets.dropped + r.summary.packets.retransmitted, 0);
        assert_eq!(r.summary.packets.seq_nacks, 0, "a QP pinned to one path never reorders");
    }
    assert_eq!(congestion_packets(&ecmp), (0, 0, 0));
    assert!(!serde_json::to_string(&ecmp.summary).unwrap().contains("congestion"), "ECMP runs keep their outputs");
    let marks = sb.summary.packets.ecn_marked;
    assert!(marks > 0);
    assert_eq!(congestion_packets(&sb), (marks, marks, 0));
    let (t_sb, t_ecmp) = (sb.summary.completion_time_us, ecmp.summary.completion_time_us);
    println!("seqbalance {t_sb:.1} us, ecmp {t_ecmp:.1} us");
    assert!(t_sb < 0.6 * t_ecmp, "seqbalance {t_sb} us vs ecmp {t_ecmp} us");
    // Uplink imbalance per (ToR, 100 µs), the paper's Fig. 13 measure: pinning around marked
    // paths evens the uplinks out.
    let imb = |r: &fabricsim::Results| r.summary.uplink_imbalance.as_ref().expect("every uplink traced").imbalance.p50;
    println!("median uplink imbalance: seqbalance {:.3}, ecmp {:.3}", imb(&sb), imb(&ecmp));
    assert!(imb(&sb) < imb(&ecmp));
    // Deterministic.
    assert_eq!(common::run(&roce(LEAF_SPINE, "seqbalance")).flows_csv(), sb.flows_csv());
}

//= seqbalance §2.5.4 (DRILL); type=test
//# Issue 17 "Done when": a single elephant under DRILL reorders and go-back-N retransmits,
//# under SeqBalance it does not.
#[test]
fn drill_reorders_an_elephant_and_go_back_n_resends_it_seqbalance_does_not() {
    // Every 4 MB flow of the cross-rack permutation is an elephant. DRILL picks a port per
    // packet by queue length, so a flow's packets overtake each other across spines: the
    // receiver NACKs the gaps and the sender goes back. SeqBalance keeps each QP on one path.
    let drill = common::run(&roce(LEAF_SPINE, "drill"));
    let sb = common::run(&roce(LEAF_SPINE, "seqbalance"));
    let (d, q) = (&drill.flows[0], &sb.flows[0]);
    println!("flow 0: drill {} NACKs, {} retransmitted; seqbalance {} / {}", d.nacks, d.retransmits, q.nacks, q.retransmits);
    assert!(d.nacks > 0 && d.retransmits > 0, "{d:?}");
    assert_eq!((q.nacks, q.retransmits), (0, 0));
    assert!(drill.summary.packets.seq_nacks > 0 && drill.summary.packets.dropped == 0, "reordering, not loss");
    assert_eq!(drill.summary.flows_finished, 16);
}

#[test]
fn a_fat_tree_is_source_routed_and_stays_in_order() {
    // k = 4 fat tree: between pods 2 aggs × 2 cores = 4 paths chosen at the source ToR; the
    // aggregation switches follow the tag, so a sub-flow never splits.
    let topo = "kind = \"fat_tree\"\nk = 4";
    let sb = common::run(&roce(topo, "seqbalance"));
    assert_eq!(sb.summary.flows_finished, sb.summary.flows);
    assert_eq!(sb.summary.packets.dropped + sb.summary.packets.retransmitted + sb.summary.packets.seq_nacks, 0);
    let (sent, arrived, dropped) = congestion_packets(&sb);
    assert_eq!((sent, arrived, dropped), (sb.summary.packets.ecn_marked, sent, 0));
}

#[test]
fn bad_seqbalance_parameters_are_refused_naming_the_key() {
    for (bad, key) in [
        ("phi_us = -1", "switch.lb.phi_us"),
        ("idle_us = 0", "switch.lb.idle_us"),
        ("probes = 5000", "switch.lb.probes"),
        ("cp_bytes = 0", "switch.lb.cp_bytes"),
        ("pinning = \"flowlet\"", "qp"),
    ] {
        let e = common::rejection(&roce(LEAF_SPINE, "seqbalance").replace("name = \"seqbalance\"", &format!("name = \"seqbalance\"\n{bad}")));
        assert!(e.contains(key), "{bad}: {e}");
    }
    let e = common::rejection(&roce(LEAF_SPINE, "ecmp").replace("trace_ports = [\"tor_up\"]", "trace_ports = [\"tor_upp\"]"));
    assert!(e.contains("run.trace_ports[0]"), "{e}");
}
