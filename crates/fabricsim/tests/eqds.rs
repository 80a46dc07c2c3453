//! EQDS receiver credits (smartt-reps spec §2.14.1): incast-optimal at the last hop, blind to
//! fabric congestion.
mod common;

fn incast(cc: &str) -> fabricsim::Results {
    common::run(&format!(
        r#"
        seed = 3
        [topology]
        k = 8
        [transport]
        cc = "{cc}"
        lb = "reps"
        credit = "eqds"
        [workload]
        kind = "incast"
        senders = 16
        receiver = 5
        flow_bytes = "2MiB"
    "#
    ))
}

#[test]
fn incast_is_paced_by_the_receiver_at_line_rate() {
    let r = incast("line_rate");
    let s = &r.summary;
    // The pull pacer keeps the last hop exactly busy: completion at the ideal (N·size/rate plus
    // the shortest one-way propagation) but for the first packets' trip to the receiver's ToR
    // and the last ACK's serializations, which the lower bound leaves out (+1.3 %).
    assert!(s.completion_time_us <= 1.015 * s.ideal_completion_time_us, "{} vs {}", s.completion_time_us, s.ideal_completion_time_us);
    // Fair: everybody is pulled round-robin, so all finish close together (flows whose
    // unsolicited packets were trimmed less get a head start of a few percent).
    let (lo, hi) = (s.fct_us.min, s.fct_us.max);
    assert!(lo >= 0.9 * hi, "fastest {lo} us, slowest {hi} us");
    // Only the unsolicited first BDP can overflow the receiver's queue: after it, no trims.
    let bdp_pkts = (s.bdp_bytes as f64 / 4096.0).ceil() as u64;
    assert!(s.packets.trimmed > 0 && s.packets.trimmed <= 16 * bdp_pkts, "{} trims", s.packets.trimmed);
    // One PULL per packet sent beyond the allowances (plus one per trim).
    assert!(s.packets.data_sent > 16 * 521);
    // EQDS + SMaRTT also completes near the ideal (the window rarely binds at the last hop).
    let combined = incast("smartt");
    assert!(combined.summary.completion_time_us <= 1.06 * s.ideal_completion_time_us);
}

fn permutation(cc: &str, credit: &str) -> fabricsim::Results {
    common::run(&format!(
        r#"
        seed = 7
        [topology]
        k = 8
        oversubscription = "4:1"
        oversubscribed_tier = "agg"
        [transport]
        cc = "{cc}"
        lb = "reps"
        credit = "{credit}"
        [workload]
        kind = "permutation"
        locality = "cross_pod"
        flow_bytes = "2MiB"
    "#
    ))
}

#[test]
fn eqds_trims_far_more_than_smartt_when_the_core_is_the_bottleneck() {
    let eqds = permutation("line_rate", "eqds");
    let smartt = permutation("smartt", "none");
    let (te, ts) = (eqds.summary.packets.trimmed, smartt.summary.packets.trimmed);
    assert!(te > 5 * ts.max(1), "EQDS {te} trims vs SMaRTT {ts}");
}

#[test]
fn collectives_on_persistent_connections_get_credit_for_every_message() {
    let r = common::run(
        r#"
        seed = 1
        [topology]
        k = 4
        [transport]
        cc = "line_rate"
        lb = "spray"
        credit = "eqds"
        [workload]
        kind = "collectives"
        chunk = "64KiB"
        [[workload.jobs]]
        ranks = 8
        placement = "random"
        iterations = 2
        compute_gap_us = 30
        collectives = [ { op = "allreduce", bytes = "2MiB" }, { op = "alltoall", bytes = "1MiB" } ]
    "#,
    );
    assert_eq!(r.summary.collectives.as_ref().unwrap().finished, 4);
}
