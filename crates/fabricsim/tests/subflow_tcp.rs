//! Subflow TCP (lb-ai-training spec §2.3 LR-SUBTCP, §7 T13; paper §7, Fig. 11): on one
//! permutation (W-PERM(1), one flow per host at the full host rate) spraying reorders so much
//! that plain TCP's dupACK threshold of 3 fires spuriously all the time; split into S = 11
//! subflows (Eq. 1 with Q = 32 KiB, P = 4 KiB, F = 1, d = 3) each subflow sends at r/11 and
//! reordering can no longer produce 3 dupACKs within one subflow.
//!
//! Setting (spec §5 with 500-packet flows): k = 8 fat tree, 128 hosts, 100 Gb/s, 32 KiB
//! drop-tail switch buffers, MTU 4096 with 64 B headers, `pacer` at c = 1, `spray`.
//! Measured (seed 1 / 2): `tcp` completes in 1014 / 905 µs with 1713 / 2499 duplicate data
//! packets at the receivers (spurious retransmissions, 13 / 20 per flow; paper: 99), 152 / 134
//! timeouts and 5681 / 5925 other retransmissions (fast and partial-ACK); `subflow_tcp` (auto,
//! S = 11) completes in 311 / 304 µs (−69 % / −66 %; paper ≈ −55 %) with 12 / 12 duplicates
//! (0.1 per flow; paper ≈ 0), 370 / 316 timeouts and 3737 / 3208 other retransmissions. Both
//! lose 3500-4100 packets to the small buffers. (`d = 6`, S = 6: 362 µs on seed 1.)
mod common;

use fabricsim::Results;

/// W-PERM(1) of 500-packet flows on the spec's fabric with `[transport.reliability]` lines.
fn permutation(reliability: &str, seed: u64) -> Results {
    common::run(&format!(
        r#"
        seed = {seed}
        [topology]
        k = 8
        link_rate_gbps = 100
        {queues}
        [transport.cc]
        name = "pacer"
        [transport.reliability]
        {reliability}
        [workload]
        kind = "permutation"
        flow_bytes = 2016000
    "#,
        queues = common::LB_STUDY_QUEUES
    ))
}

//= type=test; spec T13: LR-SUBTCP ≈ 55 % better CCT than LR-TCP at m = 1, spurious ≈ 0
#[test]
fn subflows_stop_spurious_retransmits_and_finish_far_sooner() {
    for seed in [1, 2] {
        let tcp = permutation("name = \"tcp\"", seed);
        let sub = permutation("name = \"subflow_tcp\"", seed);
        assert_eq!((tcp.summary.flows_finished, sub.summary.flows_finished), (128, 128));
        let (t, s) = (&tcp.summary, &sub.summary);
        // The regime: real losses in both, and plain TCP's spurious retransmissions.
        assert!(t.packets.dropped > 1000 && s.packets.dropped > 1000, "seed {seed}: drops {} / {}", t.packets.dropped, s.packets.dropped);
        assert!(t.duplicate_data_packets >= 5 * 128, "seed {seed}: tcp spurious {}", t.duplicate_data_packets);
        // Spurious ≈ 0: under one per flow, and a twentieth of tcp's.
        assert!(s.duplicate_data_packets < 128 && s.duplicate_data_packets * 20 < t.duplicate_data_packets, "seed {seed}: {} vs {}", s.duplicate_data_packets, t.duplicate_data_packets);
        // CCT: at least 40 % better (measured ≈ 66-69 %).
        assert!(s.completion_time_us < 0.6 * t.completion_time_us, "seed {seed}: {} us vs {} us", s.completion_time_us, t.completion_time_us);
    }
}

//= type=test; spec T13 / R50: with S = 1 subflow TCP is identical to TCP
#[test]
fn one_subflow_is_exactly_tcp() {
    let tcp = permutation("name = \"tcp\"", 3);
    let one = permutation("name = \"subflow_tcp\"\nsubflows = 1", 3);
    assert_eq!(tcp.flows_csv(), one.flows_csv());
    assert_eq!((tcp.summary.events, tcp.summary.duplicate_data_packets), (one.summary.events, one.summary.duplicate_data_packets));
    assert!(tcp.summary.packets.retransmitted > 0, "a run with losses, or the comparison proves little");
    // d = 6 (S = 6 by Eq. 1) with one subflow forced is tcp with d = 6.
    let tcp6 = permutation("name = \"tcp\"\nd = 6", 3);
    let one6 = permutation("name = \"subflow_tcp\"\nsubflows = 1\nd = 6", 3);
    assert_eq!(tcp6.flows_csv(), one6.flows_csv());
}

//= type=test; LR-SUBTCP Eq. 1 on the scenario: Q = 32 KiB, P = 4 KiB, F = 1, d = 3 gives S = 11
#[test]
fn auto_takes_eq_1_from_the_scenario() {
    let auto = permutation("name = \"subflow_tcp\"", 4);
    assert_eq!(auto.flows_csv(), permutation("name = \"subflow_tcp\"\nsubflows = 11", 4).flows_csv());
    assert_ne!(auto.flows_csv(), permutation("name = \"subflow_tcp\"\nsubflows = 10", 4).flows_csv());
    // F from the pacer: 11 flows per host make S = 1, plain tcp (at a slower rate).
    let cc = "[transport.cc]\nname = \"pacer\"\nflows_per_host = 11\n";
    let sub = common::run(&permutation_toml_with("name = \"subflow_tcp\"", cc));
    let tcp = common::run(&permutation_toml_with("name = \"tcp\"", cc));
    assert_eq!(sub.flows_csv(), tcp.flows_csv());
}

/// A short W-PERM(1) (50-packet flows) with `[transport.reliability]` lines and a cc table.
fn permutation_toml_with(reliability: &str, cc: &str) -> String {
    format!(
        "[topology]\nk = 8\nlink_rate_gbps = 100\n[switch]\nbuffer_bytes = \"32KiB\"\ntrimming = false\n\
         [transport]\nmtu_bytes = 4096\nheader_bytes = 64\nlb = \"spray\"\n{cc}\n[transport.reliability]\n{reliability}\n\
         [workload]\nkind = \"permutation\"\nflow_bytes = 201600\n"
    )
}

#[test]
fn reusing_slots_also_works() {
    let r = permutation("name = \"subflow_tcp\"\nreuse_slots = true", 1);
    assert_eq!(r.summary.flows_finished, 128);
    assert!(r.summary.duplicate_data_packets < 128);
}

#[test]
fn bad_settings_are_rejected_naming_the_key() {
    let base = "[transport.reliability]\nname = \"subflow_tcp\"\n";
    for (extra, key) in [
        ("subflows = 0", "transport.reliability.subflows"),
        ("d = 0", "transport.reliability.d"),
        ("rto_min_us = 200\nrto_max_us = 100", "transport.reliability.rto_min_us"),
        ("subflows = \"many\"", "transport.reliability"),
    ] {
        let e = common::rejection(&format!("{base}{extra}\n"));
        assert!(e.contains(key), "{extra}: {e}");
    }
}

/// Collectives on a k = 4 fat tree with 3-packet drop-tail buffers: many messages per
/// connection, some open at once, under congestion control `cc` and `[transport.reliability]`
/// lines `reliability`.
fn collectives(cc: &str, reliability: &str) -> Results {
    common::run(&format!(
        r#"
        seed = 5
        [topology]
        k = 4
        [switch]
        buffer_bytes = "12KiB"
        trimming = false
        [transport]
        lb = "spray"
        cc = {cc}
        [transport.reliability]
        {reliability}
        {}
    "#,
        common::TWO_COLLECTIVES
    ))
}

#[test]
fn many_messages_per_connection_complete_and_one_subflow_stays_tcp() {
    for cc in ["{ name = \"pacer\", flows_per_host = 1 }", "{ name = \"fixed\", window_bdp = 2.0 }"] {
        let r = collectives(cc, "name = \"subflow_tcp\"\nsubflows = 4");
        assert!(r.ccts.iter().all(|c| c.cct().is_some()), "{cc}: unfinished collectives");
        // Measured: ≈ 400 drops, each repaired by one retransmission.
        assert!(r.summary.packets.dropped > 100, "{cc}: a run with losses");
        let one = collectives(cc, "name = \"subflow_tcp\"\nsubflows = 1");
        assert_eq!(one.flows_csv(), collectives(cc, "name = \"tcp\"").flows_csv(), "{cc}");
    }
}
