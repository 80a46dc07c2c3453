//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019) against the
//! paper's claims, on the HPCC ns-3 simulator's example star (100 Gb/s, 1 µs links, PFC, its
//! ECN thresholds, 1000 B payloads with 48 B of headers and 42 B of INT): near-zero queues at
//! high utilisation under incast (§1, §5.2), a new flow brought to its share within a few
//! round trips (§3.2), and a fair share between flows (§3.3).
use fabricsim::units::Time;
mod common;

/// A star of 17 hosts on one switch, as the HPCC ns-3 simulator's example builds it, under `cc`.
fn star(cc: &str, workload: &str, run: &str) -> String {
    format!(
        r#"
        seed = 1
        [topology]
        kind = "leaf_spine"
        tors = 1
        hosts_per_tor = 17
        spines = 1
        link_rate_gbps = 100
        link_latency_ns = 1000
        [switch]
        trimming = false
        ecn_kmin_bytes = "400KB"
        ecn_kmax_bytes = "1600KB"
        ecn_pmax = 0.2
        [switch.pfc]
        enabled = true
        buffer_bytes = "32MB"
        [transport]
        mtu_bytes = 1090
        header_bytes = 90
        reliability = "go_back_n"
        cc = {cc}
        [workload]
        {workload}
        [run]
        {run}
    "#
    )
}

/// Jain's fairness index of `x`.
fn jain(x: &[f64]) -> f64 {
    let (s, s2) = x.iter().fold((0.0, 0.0), |(s, s2), v| (s + v, s2 + v * v));
    s * s / (x.len() as f64 * s2)
}

//= type=test; HPCC §5.2 (Fig. 9/10): incast with near-zero queues, at high utilisation
#[test]
fn an_incast_runs_near_line_rate_over_a_near_empty_queue() {
    let incast = "kind = \"incast\"\nsenders = 16\nreceiver = 0\nflow_bytes = \"2MB\"";
    let r = common::run(&star("\"hpcc\"", incast, ""));
    let s = &r.summary;
    let base = s.base_rtt_us;
    // The first round trip sends a window each (16 × 52 kB queue up); after it, HPCC holds
    // the bottleneck just under η: ACKs see the base RTT.
    assert!(s.ack_rtt_us.p50 <= 1.05 * base && s.ack_rtt_us.mean <= 1.5 * base, "ACK RTT {:?} against base {base} µs", s.ack_rtt_us);
    // η = 0.95: the incast ends within 10 % of the time the bottleneck needs at line rate.
    assert!(s.completion_time_us <= 1.10 * s.ideal_completion_time_us, "{} vs ideal {}", s.completion_time_us, s.ideal_completion_time_us);
    // Every sender got the same share.
    let fct = |f: &fabricsim::results::FlowResult| (f.finish.expect("finished") - f.start).0 as f64;
    let rates: Vec<f64> = r.flows.iter().map(|f| 1.0 / fct(f)).collect();
    assert!(jain(&rates) >= 0.99, "Jain {:.4} of {:?}", jain(&rates), r.flows.iter().map(fct).collect::<Vec<_>>());
    assert_eq!(s.packets.dropped + s.packets.buffer_drops, 0);
    // DCQCN on the same incast (its own defaults) reacts to ECN past Kmin: its queue stands.
    let d = common::run(&star("\"dcqcn\"", incast, ""));
    assert!(d.summary.ack_rtt_us.mean >= 5.0 * s.ack_rtt_us.mean, "DCQCN {:?} vs HPCC {:?}", d.summary.ack_rtt_us, s.ack_rtt_us);
}

//= type=test; HPCC §3.2: one update reaches the target rate; §3.3: AI brings fairness
#[test]
fn a_joining_flow_gets_its_share_within_a_few_round_trips() {
    // Flow 0 alone from 0; flow 1 joins at 200 µs on the same receiver.
    let flows = common::flow_file("hpcc-join", "src,dst,bytes,start_us\n1,0,8000000,0\n2,0,8000000,200\n");
    let r = common::run(&star("\"hpcc\"", &flows.workload, "trace_interval_us = 2\ntrace_conns = [0, 1]"));
    let rate = |c: u32, t_us: u64| r.trace.iter().find(|s| s.conn == c && s.at >= Time(t_us * 1_000_000)).and_then(|s| s.rate_bps).unwrap() as f64 / 1e9;
    let acked = |c: u32, t_us: u64| r.trace.iter().find(|s| s.conn == c && s.at >= Time(t_us * 1_000_000)).map(|s| s.acked_bytes).unwrap() as f64;
    // Alone, flow 0 runs at η of the line, give or take the additive steps.
    for t in [100, 150, 198] {
        assert!((90.0..=100.0).contains(&rate(0, t)), "alone at {t} µs: {} Gb/s", rate(0, t));
    }
    // About 8 base RTTs (4.2 µs) after the join both run near half the line, and stay there.
    for t in (235..1200).step_by(25) {
        for c in [0, 1] {
            assert!((40.0..=60.0).contains(&rate(c, t)), "flow {c} at {t} µs: {} Gb/s", rate(c, t));
        }
    }
    // Their goodputs over the shared stretch are within 10 % and fill the link.
    let (g0, g1) = (acked(0, 1200) - acked(0, 300), acked(1, 1200) - acked(1, 300));
    assert!((g0 / g1 - 1.0).abs() <= 0.10, "{g0} vs {g1} bytes");
    let wire_gbps = (g0 + g1) * 1090.0 / 1000.0 * 8.0 / 900e3;
    assert!(wire_gbps >= 90.0, "the link carried {wire_gbps:.1} Gb/s");
    assert!(r.summary.ack_rtt_us.p99 <= 1.1 * r.summary.base_rtt_us, "{:?}", r.summary.ack_rtt_us);
}

//= type=test; HPCC §3.1: switches stamp INT whenever some connection's scheme reads it
#[test]
fn hpcc_hosts_get_their_telemetry_beside_dctcp_hosts() {
    // Host 1 runs DCTCP, host 2 HPCC (`cc_by_source`), both to host 0: the HPCC sender sees
    // the shared port's load in its INT records and leaves the link to the other at ≈ η.
    let flows = common::flow_file("hpcc-mixed", "src,dst,bytes,start_us\n1,0,4000000,0\n2,0,4000000,0\n");
    let toml = star("\"dctcp\"", &flows.workload, "trace_interval_us = 5\ntrace_conns = [0, 1]")
        .replace("[workload]", "[[transport.cc_by_source]]\nhosts = [2]\ncc = \"hpcc\"\n[workload]");
    let r = common::run(&toml);
    assert_eq!(r.summary.flows_finished, 2);
    let slowest = |c: u32| r.trace.iter().filter(|s| s.conn == c).filter_map(|s| s.rate_bps).min().unwrap() as f64 / 1e9;
    assert!(slowest(1) < 60.0, "HPCC never slowed: {} Gb/s", slowest(1));
}

//= type=test; HPCC §3.1: INT from every hop of the path (five switch egress ports across pods)
#[test]
fn telemetry_spans_every_tier_of_a_fat_tree() {
    // Six senders in three other pods to host 0 of a k = 4 fat tree: each path crosses ToR,
    // aggregation, core, aggregation and ToR, the five records a stack holds. The bottleneck is
    // the last hop; HPCC sees it in the fifth record and keeps its queue near empty.
    let toml = star("\"hpcc\"", "kind = \"incast\"\nsender_hosts = [4, 8, 12, 5, 9, 13]\nreceiver = 0\nflow_bytes = \"2MB\"", "")
        .replace("kind = \"leaf_spine\"\n        tors = 1\n        hosts_per_tor = 17\n        spines = 1", "kind = \"fat_tree\"\n        k = 4")
        .replace("[transport]", "[transport]\n        lb = \"ecmp\"");
    let r = common::run(&toml);
    let s = &r.summary;
    assert!(s.fabric.contains("fat tree"), "{}", s.fabric);
    assert_eq!(s.packets.retransmitted, 0);
    assert!(s.ack_rtt_us.p50 <= 1.05 * s.base_rtt_us && s.ack_rtt_us.mean <= 1.5 * s.base_rtt_us, "ACK RTT {:?}, base {} µs", s.ack_rtt_us, s.base_rtt_us);
    assert!(s.completion_time_us <= 1.2 * s.ideal_completion_time_us, "{} vs ideal {}", s.completion_time_us, s.ideal_completion_time_us);
}
