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
        [run]
        port_stats = true
    "#
    ))
}

/// The unsolicited allowance of a flow between two hosts of the k = 8 fat tree (4 hosts per
/// ToR, 16 per pod, 400 Gb/s and 1 µs links): one BDP of its own path, h × 104,160 B
/// (h × 2.0832 µs of RTT per link each way), in whole 4096 B packets.
fn allowance_pkts(a: u32, b: u32) -> u64 {
    let hops = if a / 4 == b / 4 {
        2
    } else if a / 16 == b / 16 {
        4
    } else {
        6
    };
    (hops * 104_160u64).div_ceil(4096)
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
    // One PULL per packet beyond the allowances, plus one per trim. The receiver sends nothing
    // but 64 B ACKs, NACKs and PULLs, so its uplink's bytes count the PULLs.
    let pkts = (2u64 << 20).div_ceil(4032);
    let owed: u64 = r.flows.iter().map(|f| pkts - allowance_pkts(f.src, f.dst)).sum::<u64>() + s.packets.trimmed;
    let up = r.ports.iter().find(|p| p.link == "host5-tor1").unwrap();
    let pulls = up.tx_bytes / 64 - s.packets.acks - s.packets.nacks;
    assert_eq!(pulls, owed, "{pulls} PULLs for {owed} packets beyond the allowances and trims");
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

/// Found by the fuzzer: a connection whose retransmissions (here `rc_ooo` resending after a
/// link went down) spent the credits the receiver had pulled for new data was left with data to
/// send, nothing in flight and no PULL to come — no event left, a deadlock. It now starts a
/// fresh unsolicited allowance, as an idle connection does when a message is posted.
#[test]
fn a_connection_left_without_credit_and_nothing_in_flight_starts_afresh() {
    let r = common::run(
        "[topology]\nk = 8\nkind = \"leaf_spine\"\noversubscription = \"2:1\"\n[switch]\ntrimming = false\n\
         [transport]\nmtu_bytes = 1500\ncc = \"dcqcn\"\ncredit = \"eqds\"\nreliability = \"rc_ooo\"\nlb = \"ecmp\"\n\
         [workload]\nkind = \"collectives\"\nchunk = \"64KiB\"\n\
         [[workload.jobs]]\nranks = 2\ncollectives = [{ op = \"reducescatter\", bytes = \"16KiB\" }]\n\
         [[workload.jobs]]\nranks = 8\ncollectives = [{ op = \"allreduce\", algorithm = \"hd\", bytes = \"256KiB\" }, { op = \"alltoall\", bytes = \"1MiB\", parallelism = 3 }]\n\
         [[link_events]]\nat_us = 5\nlink = \"tor0-spine0\"\naction = \"down\"\n[[link_events]]\nat_us = 40\nlink = \"tor0-spine0\"\naction = \"up\"\n",
    );
    assert_eq!(r.summary.flows_finished, r.summary.flows);
}
