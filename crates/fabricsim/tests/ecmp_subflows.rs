//! ECMP with subflows (lb-ai-training spec §2.1 LB-ECMP-SUB; paper §5): S fixed entropies per
//! flow, packet `seq mod S` picks one, so a flow hashes onto up to S paths, each carrying an
//! equal share; S = 1 is `ecmp`.
mod common;

use common::K4_UP as UP;

/// One 4 MiB flow host 0 -> host 15 under host path selection `lb` (a `[transport.lb]` body);
/// the results and the share of the flow's bytes each of [`UP`] carried.
fn one_flow(lb: &str, seed: u64) -> (fabricsim::Results, Vec<f64>) {
    let r = common::run(&format!(
        r#"
        seed = {seed}
        [topology]
        k = 4
        [transport.lb]
        {lb}
        [workload]
        kind = "flow_list"
        file = "tests/data/one_flow_k4.csv"
        [run]
        trace_interval_us = 1.0
        trace_ports = {UP:?}
    "#
    ));
    assert_eq!(r.summary.flows_finished, 1);
    let shares = common::port_shares(&r, UP.len());
    (r, shares)
}

//= type=test; LB-ECMP-SUB: a flow spreads over its S subflows' paths in equal shares
#[test]
fn a_flow_spreads_over_its_subflows_paths_in_equal_shares() {
    let mut spread = 0;
    for seed in 1..=4 {
        let (_, s) = one_flow("name = \"ecmp_subflows\"\nsubflows = 8", seed);
        // Each subflow carries exactly 1/8 of the packets (striping): every uplink's share is
        // a whole number of eighths (measured: within 0.03 % of one).
        for x in &s {
            assert!(((x * 8.0).round() - x * 8.0).abs() < 0.01, "seed {seed}: {s:?}");
        }
        let tor_used = s[..2].iter().filter(|&&x| x > 0.0).count();
        let core_used = s[2..].iter().filter(|&&x| x > 0.0).count();
        if tor_used == 2 && core_used >= 3 {
            spread += 1;
        }
        // Plain ECMP: one ToR uplink, one core uplink.
        let (_, e) = one_flow("name = \"ecmp\"", seed);
        assert_eq!(e[..2].iter().filter(|&&x| x > 0.0).count(), 1, "{e:?}");
        assert_eq!(e[2..].iter().filter(|&&x| x > 0.0).count(), 1, "{e:?}");
    }
    // Eight hashed entropies: both ToR uplinks and at least three of the four core uplinks are
    // likely (P ≈ 0.99 and 0.9 per seed).
    assert!(spread >= 3, "only {spread} of 4 seeds spread the flow");
    // Two subflows: halves.
    let (_, s) = one_flow("name = \"ecmp_subflows\"", 1);
    assert!(s[..2].iter().all(|x| [0.0, 0.5, 1.0].iter().any(|h| (x - h).abs() < 0.01)), "{s:?}");
}

//= type=test; LB-ECMP-SUB with S = 1 is LB-ECMP
#[test]
fn one_subflow_is_ecmp() {
    for seed in 1..=3 {
        let (a, _) = one_flow("name = \"ecmp_subflows\"\nsubflows = 1", seed);
        let (b, _) = one_flow("name = \"ecmp\"", seed);
        assert_eq!(a.flows_csv(), b.flows_csv());
        assert_eq!(a.port_trace_csv(), b.port_trace_csv());
    }
}

#[test]
fn zero_subflows_are_rejected_naming_the_key() {
    let e = common::rejection("[transport.lb]\nname = \"ecmp_subflows\"\nsubflows = 0\n");
    assert!(e.contains("transport.lb.subflows"), "{e}");
}
