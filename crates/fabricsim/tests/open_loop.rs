//! Open-loop datacenter traffic and backlogged RDMA WRITEs on RoCEv2 fabrics (seqbalance spec
//! §5.1, §5.2; issue 17 §1): an almost idle fabric gives every flow its ideal FCT, the trace
//! does not depend on the schemes, a user's CDF file is read relative to the scenario, bad
//! input is refused naming the key or the file and line, and a backlogged WRITE stream keeps
//! its NIC at line rate until the run ends.
mod common;

/// A 4 × 4-host leaf-spine with 4 spines at 100 Gb/s, lossless RoCEv2 (DCQCN, ECMP, go-back-N,
/// PFC), 1000 B payload + 48 B header packets, and the given workload lines.
fn roce_leaf_spine(workload: &str, extra: &str) -> String {
    let fabric = common::roce_leaf_spine(4, (4, 4, 4), "", "mtu_bytes = 1048\nheader_bytes = 48");
    format!("{fabric}[workload]\n{workload}\n{extra}\n")
}

//= seqbalance §5.2 (Flow generation); type=test
//# Issue 17 "Done when": at 5 % load every scheme's median slowdown is ≈ 1.
#[test]
fn at_five_percent_load_the_median_flow_runs_at_its_ideal() {
    let r = common::run(&roce_leaf_spine("kind = \"open_loop\"\ncdf = \"alistorage2019\"\nload = 0.05\nduration_us = 3000", ""));
    let s = &r.summary;
    // 16 hosts × 3 ms / (40.87 kB · 8 / 5 Gb/s = 65.4 µs) ≈ 734 flows.
    assert!((650..820).contains(&s.flows), "{} flows", s.flows);
    assert_eq!(s.flows_finished, s.flows);
    assert_eq!(s.packets.dropped + s.packets.buffer_drops, 0, "PFC: lossless");
    assert!(s.slowdown.p50 < 1.05, "median slowdown {}", s.slowdown.p50);
}

#[test]
fn the_trace_is_the_same_under_every_scheme_and_a_user_cdf_is_read_from_the_scenario_dir() {
    let workload = "kind = \"open_loop\"\ncdf = \"tests/data/fixed_1000.cdf\"\nload = 0.3\nflows = 300\nexclude_intra_rack = true";
    let trace = |r: &fabricsim::Results| r.flows.iter().map(|f| (f.src, f.dst, f.bytes, f.start)).collect::<Vec<_>>();
    let ecmp = common::run(&roce_leaf_spine(workload, ""));
    let drill = common::run(&roce_leaf_spine(workload, "").replace("[switch]", "[switch]\nlb = \"drill\""));
    let a = trace(&ecmp);
    assert_eq!(a.len(), 300);
    assert_eq!(a, trace(&drill));
    assert!(a.iter().all(|&(src, dst, bytes, _)| bytes == 1000 && src / 4 != dst / 4), "fixed size, other racks only");
    let other_seed = common::run(&roce_leaf_spine(workload, "").replace("seed = 4", "seed = 5"));
    assert_ne!(a, trace(&other_seed));
}

#[test]
fn bad_loads_lengths_and_cdf_files_are_refused_naming_the_key_or_the_line() {
    for load in ["0", "1", "-0.5", "1.5", "nan"] {
        let e = common::rejection(&roce_leaf_spine(&format!("kind = \"open_loop\"\ncdf = \"websearch\"\nload = {load}\nflows = 10"), ""));
        assert!(e.contains("workload.load") && e.contains("between 0 and 1"), "{load}: {e}");
    }
    let e = common::rejection(&roce_leaf_spine("kind = \"open_loop\"\ncdf = \"websearch\"\nflows = 10\nduration_us = 10", ""));
    assert!(e.contains("workload.duration_us") && e.contains("exactly one"), "{e}");
    let e = common::rejection(&roce_leaf_spine("kind = \"open_loop\"\ncdf = \"tests/data/bad_order.cdf\"\nflows = 10", ""));
    assert!(e.contains("workload.cdf") && e.contains("bad_order.cdf:4:") && e.contains("sizes must not decrease"), "{e}");
    let e = common::rejection(&roce_leaf_spine("kind = \"rdma_writes\"\npairs = [[0, 3], [7, 7]]", ""));
    assert!(e.contains("workload.pairs[1]") && e.contains("to itself"), "{e}");
}

//= seqbalance §5.1 (Traffic); type=test
//# Each QP keeps 128 outstanding 2 MB RDMA WRITEs, which saturates the NIC.
#[test]
fn backlogged_writes_keep_the_nic_at_line_rate_until_the_end_and_clients_start_staggered() {
    // One client: its 4 QPs share the 100 Gb/s NIC and nothing else in the fabric is loaded,
    // so the NIC sends full packets back to back: 100 Gb/s × 1 ms / 1048 B = 11 927 packets.
    let one = common::run(&roce_leaf_spine("kind = \"rdma_writes\"\nclients = 1\nduration_us = 1000", "[run]\nend_time_us = 1000"));
    let s = &one.summary;
    assert!(s.stopped_at_end_time && s.flows_finished == 0 && s.flows == 4, "{s:?}");
    let line_rate_packets = 100e9 * 1e-3 / 8.0 / 1048.0;
    let sent = s.packets.data_sent as f64;
    // A few more fit: each connection crosses one WRITE boundary, whose last packet carries
    // 2 MiB mod 1000 = 152 B only (4 short packets), and one may be on the wire at the end.
    assert!(sent > 0.99 * line_rate_packets && sent <= line_rate_packets + 5.0, "{sent} vs {line_rate_packets}");
    // flows.csv: one row per connection, its bytes all its WRITEs (100 Gb/s × 1 ms = 12.5 MB:
    // six 2 MiB WRITEs per connection).
    assert!(one.flows.iter().all(|f| (f.src, f.dst, f.bytes, f.finish) == (0, 12, 6 * (2 << 20), None)), "{:?}", one.flows);
    // Three clients 200 µs apart: each connection's first WRITE is posted at its client's start.
    let three = common::run(&roce_leaf_spine(
        "kind = \"rdma_writes\"\nclients = 3\nstagger_us = 200\nduration_us = 600",
        "[run]\nend_time_us = 600\nmessage_log = true",
    ));
    for (conn, f) in three.flows.iter().enumerate() {
        let client = conn as u32 / 4;
        assert_eq!((f.src, f.dst), (client, 12 + client));
        let first_post = three.messages.iter().filter(|m| m.conn == conn as u32).filter_map(|m| m.posted).min();
        assert_eq!(first_post.map(|t| t.0), Some(client as u64 * 200 * 1_000_000), "connection {conn}");
    }
}

//= seqbalance §2.1 (Fig. 1: flowlet sizes); type=test
//# RDMA traffic is rate-paced by the NIC, so flowlets are huge even at small gaps.
#[test]
fn a_backlogged_qp_at_line_rate_is_one_flowlet_at_every_gap() {
    // One QP alone at 100 Gb/s for 1 ms never pauses: one flowlet of everything it sent
    // (12.5 MB on the wire) at θ = 10 and 100 µs; flowlets.csv holds both CDFs.
    let r = common::run(&roce_leaf_spine(
        "kind = \"rdma_writes\"\nclients = 1\nqps_per_client = 1\nduration_us = 1000",
        "[run]\nend_time_us = 1000\nflowlet_gaps_us = [10, 100]",
    ));
    let f = r.summary.flowlets.as_ref().expect("flowlets in the summary");
    assert_eq!(f.iter().map(|g| (g.gap_us, g.flowlets)).collect::<Vec<_>>(), [(10.0, 1), (100.0, 1)]);
    let bytes = f[0].max_bytes.unwrap() as f64;
    assert!(bytes > 0.99 * 12.5e6 && bytes <= 12.5e6 + 1048.0, "{bytes}");
    assert_eq!(r.flowlets_csv().lines().count(), 1 + 2 * 100);
    let e = common::rejection(&roce_leaf_spine("kind = \"rdma_writes\"\nclients = 1\nduration_us = 100", "[run]\nend_time_us = 100\nflowlet_gaps_us = [10, 0]"));
    assert!(e.contains("run.flowlet_gaps_us[1]") && e.contains("allowed 0.000001..="), "{e}");
}

#[test]
fn the_bundled_seqbalance_scenarios_load_with_the_traffic_they_describe() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seqbalance");
    let ali = fabricsim::scenario::load(&dir.join("alistorage_2tier.toml"), &[]).expect("alistorage_2tier.toml");
    // 128 hosts × 2 ms / 6.54 µs (spec §5.2: AliStorage at 100 Gb/s and 50 % load) ≈ 39 150 flows.
    assert_eq!(ali.fabric.hosts, 128);
    let flows = ali.traffic.conns.len() as f64;
    assert!((flows / 39_150.0 - 1.0).abs() < 0.02, "{flows}");
    let testbed = fabricsim::scenario::load(&dir.join("testbed_writes.toml"), &[]).expect("testbed_writes.toml");
    assert_eq!((testbed.fabric.hosts, testbed.traffic.conns.len(), testbed.end_time.map(|t| t.0)), (6, 12, Some(60_000_000_000)));
}
