//! The SeqBalance Shaper (seqbalance §2.2) end to end: a split flow runs on its own sub-QPs,
//! finishes at the unsplit flow's ideal on an idle fabric, is reported as one flows.csv row
//! whose finish is its last sub-WQE's ACK, and flows waiting on it wait for every sub-WQE; plus
//! the `[results]` window and size buckets, and the inputs both refuse.
mod common;
use common::rejection;

/// Two ToRs of two hosts and two spines at 100 Gb/s, 1 µs links, the spec's packets (1000 B
/// payload + 48 B header, §2.6), RoCEv2 (DCQCN, ECMP, go-back-N, PFC); `extra` adds tables.
fn roce_pair(workload: &str, extra: &str) -> String {
    let fabric = common::roce_leaf_spine(2, (2, 2, 2), "", "mtu_bytes = 1048\nheader_bytes = 48");
    format!("{fabric}[workload]\n{workload}\n{extra}\n")
}

/// One flow of `bytes` from host 0 to host 3 (the other ToR).
fn one_flow(bytes: u64) -> String {
    format!("kind = \"incast\"\nsender_hosts = [0]\nreceiver = 3\nflow_bytes = {bytes}")
}

//= type=test; seqbalance §7 T0 (Completion, Ideal FCT), §2.2.2, §2.2.3
#[test]
fn a_split_flow_on_an_idle_fabric_finishes_at_the_unsplit_ideal() {
    // 999 500 B = 1000 packets, the last of 500 B: sub-WQEs of 250, 250, 250 and 250 packets.
    let shaped = common::run(&roce_pair(&one_flow(999_500), "[transport.shaper]\nname = \"seqbalance\"\n[run]\nmessage_log = true"));
    let plain = common::run(&roce_pair(&one_flow(999_500), ""));
    // Four sub-connections in the engine, one sub-WQE each, posted together.
    let m = &shaped.messages;
    assert_eq!(m.iter().map(|m| (m.conn, m.bytes)).collect::<Vec<_>>(), vec![(0, 250_000), (1, 250_000), (2, 250_000), (3, 249_500)]);
    assert!(m.iter().all(|x| x.posted == m[0].posted && (x.src, x.dst) == (0, 3)));
    // One row for the app flow, with the unsplit flow's ideal.
    assert_eq!(shaped.flows.len(), 1);
    let (f, p) = (&shaped.flows[0], &plain.flows[0]);
    assert_eq!((f.bytes, f.subflows, p.subflows), (999_500, Some(4), None));
    assert_eq!(f.ideal_fct, p.ideal_fct);
    // The four sub-QPs share the host link: the flow still ends at about its ideal.
    let s = f.slowdown().unwrap();
    assert!((s - 1.0).abs() < 0.03, "slowdown {s}, fct {:?} ps, ideal {} ps", f.fct(), f.ideal_fct);
    assert_eq!((f.retransmits, f.data_sent), (0, 1000));
    // flows.csv carries the sub-QP count only when a shaper is active.
    let csv = shaped.flows_csv();
    let (header, row): (Vec<&str>, Vec<&str>) = (csv.lines().next().unwrap().split(',').collect(), csv.lines().nth(1).unwrap().split(',').collect());
    let at = header.iter().position(|&c| c == "subflows").expect("a subflows column");
    assert_eq!((header[at - 1], row[at]), ("timeout_lost", "4"));
    assert!(!plain.flows_csv().lines().next().unwrap().contains("subflows"));
    assert_eq!(shaped.summary.flows, 1);
}

//= type=test; seqbalance §2.2.4 (FCT to the last sub-WQE ACK)
#[test]
fn the_flow_finishes_with_its_slowest_sub_wqe() {
    // The first packet of sub-QP 2 is lost: go-back-N resends that sub-WQE from its start, so
    // it completes well after the other three.
    let r = common::run(&roce_pair(
        &one_flow(400_000),
        "[transport.shaper]\nname = \"seqbalance\"\n[run]\nmessage_log = true\ndrop_packets = [{ flow = 2, seq = 0 }]",
    ));
    let done: Vec<fabricsim::units::Time> = r.messages.iter().map(|m| m.completed.unwrap()).collect();
    let slowest = *done.iter().max().unwrap();
    assert_eq!(done.iter().position(|&t| t == slowest), Some(2), "{done:?}");
    assert!(done.iter().enumerate().all(|(i, &t)| i == 2 || t < slowest), "{done:?}");
    let f = &r.flows[0];
    assert_eq!(f.finish, Some(slowest));
    assert_eq!(f.start, r.messages[0].posted.unwrap());
    // Counters add up over the sub-QPs: the lost packet and at least its resend.
    assert!(f.retransmits >= 1 && f.data_lost == 1, "{f:?}");
    assert_eq!(f.data_sent as u64, r.summary.packets.data_sent);
}

//= type=test; seqbalance §2.2.4 (the app CQE when all sub-WQEs are acknowledged)
#[test]
fn a_flow_waiting_on_a_split_flow_starts_after_its_last_sub_wqe() {
    // All-to-all among 4 hosts, one flow at a time per host: each host's flows form a chain.
    let r = common::run(&roce_pair(
        "kind = \"all_to_all\"\nflow_bytes = 60000\nmax_concurrent = 1",
        "[transport.shaper]\nname = \"seqbalance\"\nqps = 3\nsplit = \"bytes\"",
    ));
    assert_eq!(r.flows.len(), 12);
    assert!(r.flows.iter().all(|f| f.subflows == Some(3) && f.finish.is_some()));
    for h in 0..4 {
        let mut chain: Vec<_> = r.flows.iter().filter(|f| f.src == h).collect();
        chain.sort_by_key(|f| f.start);
        for w in chain.windows(2) {
            assert!(w[1].start >= w[0].finish.unwrap(), "host {h}: {:?} starts before {:?} finished", w[1], w[0]);
        }
    }
}

//= type=test; issue 17 §1 (FCT slowdown by flow-size bucket, stationary window)
#[test]
fn the_window_and_size_buckets_count_the_flows_that_start_in_the_window() {
    let results = "[results]\nsize_buckets = [10000, \"100KB\"]\nwindow_start_us = 0.0\nwindow_end_us = 1000";
    let r = common::run(&roce_pair("kind = \"permutation\"\nflow_bytes = 50000", results));
    let s = &r.summary;
    let w = s.stationary_window.as_ref().expect("window figures");
    assert_eq!((w.start_us, w.end_us, w.flows, w.flows_finished), (0.0, Some(1000.0), 4, 4));
    let b = s.slowdown_by_size.as_ref().expect("buckets");
    assert_eq!(b.iter().map(|b| (b.label.as_str(), b.count)).collect::<Vec<_>>(), vec![("0 < bytes <= 10000", 0), ("10000 < bytes <= 100000", 4), ("bytes > 100000", 0)]);
    assert!((b[1].mean.unwrap() - s.slowdown.mean).abs() < 1e-12 && b[1].p99 == Some(s.slowdown.p99));
    // A window that starts after every flow keeps none; the flows stay in flows.csv.
    let r = common::run(&roce_pair("kind = \"permutation\"\nflow_bytes = 50000", "[results]\nwindow_start_us = 1\nsize_buckets = [10000]"));
    let s = &r.summary;
    assert_eq!((s.stationary_window.as_ref().unwrap().flows, s.slowdown.mean, s.flows), (0, 0.0, 4));
    assert_eq!(s.slowdown_by_size.as_ref().unwrap().iter().map(|b| b.count).sum::<u32>(), 0);
    assert_eq!(r.flows_csv().lines().count(), 5);
    // Without [results] neither section is written.
    let r = common::run(&roce_pair("kind = \"permutation\"\nflow_bytes = 50000", ""));
    let json = serde_json::to_string(&r.summary).unwrap();
    assert!(!json.contains("stationary_window") && !json.contains("slowdown_by_size") && !json.contains("shaper"), "{json}");
}

#[test]
fn bad_shaper_and_results_values_name_the_key() {
    let shaper = |t: &str| rejection(&roce_pair(&one_flow(10_000), &format!("[transport.shaper]\nname = \"seqbalance\"\n{t}")));
    for qps in [0, 65] {
        let e = shaper(&format!("qps = {qps}"));
        assert!(e.contains("transport.shaper.qps") && e.contains("1..=64"), "{e}");
    }
    let e = shaper("split = \"halves\"");
    assert!(e.contains("transport.shaper") && e.contains("split") && e.contains("packets") && e.contains("bytes"), "{e}");
    let e = rejection(&roce_pair(&one_flow(10_000), "[transport.shaper]\nname = \"conga\""));
    assert!(e.contains("transport.shaper") && e.contains("`none`") && e.contains("`seqbalance`"), "{e}");
    let e = rejection(&format!("[topology]\nk = 4\n[transport.shaper]\nname = \"seqbalance\"\n{}", common::TWO_COLLECTIVES));
    assert!(e.contains("transport.shaper") && e.contains("workload.qps"), "{e}");
    let results = |t: &str| rejection(&roce_pair(&one_flow(10_000), &format!("[results]\n{t}")));
    for t in ["window_start_us = 10\nwindow_end_us = 10", "window_start_us = 10\nwindow_end_us = 5", "window_end_us = 0"] {
        let e = results(t);
        assert!(e.contains("results.window_end_us") && e.contains("later than window_start_us"), "{t}: {e}");
    }
    let e = results("window_start_us = -1");
    assert!(e.contains("results.window_start_us") && e.contains("non-negative"), "{e}");
    let e = results("size_buckets = [1000, 1000]");
    assert!(e.contains("results.size_buckets[1]") && e.contains("increase"), "{e}");
    let e = results("size_buckets = [0]");
    assert!(e.contains("results.size_buckets[0]"), "{e}");
    let e = results("buckets = [1]");
    assert!(e.contains("unknown field `buckets`") && e.contains("size_buckets"), "{e}");
}

//= type=test; seqbalance §2.1 (sub-QP: a distinct 5-tuple), §2.7 item 3
#[test]
fn sub_qps_hash_onto_paths_of_their_own() {
    // ECMP pins a connection to one spine; the flow's four sub-QPs use both uplinks of tor0.
    let trace = "[run]\ntrace_interval_us = 5\ntrace_ports = [\"tor0-spine0\", \"tor0-spine1\"]";
    let shaped = common::run(&roce_pair(&one_flow(999_500), &format!("[transport.shaper]\nname = \"seqbalance\"\n{trace}")));
    let plain = common::run(&roce_pair(&one_flow(999_500), trace));
    let (s, p) = (common::port_shares(&shaped, 2), common::port_shares(&plain, 2));
    assert!(s.iter().all(|&x| x > 0.2), "shaped shares {s:?}");
    assert!(p.contains(&0.0), "unsplit shares {p:?}");
}

#[test]
fn same_scenario_and_seed_give_identical_shaped_outputs() {
    let scenario = roce_pair("kind = \"permutation\"\nflow_bytes = 33333", "[transport.shaper]\nname = \"seqbalance\"\nqps = 5\n[results]\nsize_buckets = [20000]");
    let (a, b) = (common::run(&scenario), common::run(&scenario));
    assert_eq!(a.flows_csv(), b.flows_csv());
    let strip = |r: &fabricsim::Results| {
        let mut v = serde_json::to_value(&r.summary).unwrap();
        v.as_object_mut().unwrap().remove("performance");
        v
    };
    assert_eq!(strip(&a), strip(&b));
}
