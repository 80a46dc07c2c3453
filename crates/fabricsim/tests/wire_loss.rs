//! Faults anywhere (`[topology.failures]` with `links`): random loss on named or patterned
//! cables of any topology, checked against the analytic loss rates of their channels — a
//! Bernoulli channel loses `loss_rate` of the packets, a Gilbert–Elliott chain
//! `(burst·loss_rate + gap·good_loss_rate) / (burst + gap)`, a flaky cable the merged-burst time
//! fraction `1 − e^(−len/gap)` — and every loss counted as a wire loss of its port.
mod common;

/// A 4-ToR leaf-spine (4 hosts each, 2 spines, 100 G) running a cross-rack permutation of
/// `bytes` per flow, with `failures` as its `[topology.failures]` table.
fn leaf_spine(failures: &str, bytes: &str) -> fabricsim::Results {
    common::run(&format!(
        "seed = 5\n[topology]\nkind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 4\nspines = 2\nlink_rate_gbps = 100\n\
         [switch]\ntrimming = true\n[transport]\nlb = \"spray\"\n\
         [workload]\nkind = \"permutation\"\nflow_bytes = \"{bytes}\"\nlocality = \"cross_tor\"\n\
         [topology.failures]\n{failures}\n"
    ))
}

/// Wire losses over transmissions of the lossy ports, and the names of those ports.
fn measured(r: &fabricsim::Results) -> (f64, u64, Vec<String>) {
    let ports = &r.summary.flaky_ports;
    let (sent, lost) = ports.iter().fold((0u64, 0u64), |(s, l), p| (s + p.transmitted, l + p.wire_losses));
    assert_eq!(r.summary.packets.wire_losses, Some(lost), "every loss counted in packets.wire_losses");
    (lost as f64 / sent.max(1) as f64, sent, ports.iter().map(|p| p.port.clone()).collect())
}

#[test]
fn a_named_leaf_spine_cable_loses_its_bernoulli_rate_in_both_directions() {
    let r = leaf_spine("kind = \"loss\"\nlinks = [\"tor0-spine1\"]\nloss_rate = 0.02", "4MiB");
    assert_eq!(r.summary.flows_finished, r.summary.flows, "loss recovery brings every flow home");
    let (rate, sent, ports) = measured(&r);
    assert_eq!(ports, ["tor0-spine1", "spine1-tor0"]);
    // Binomial: 5 standard errors of the measured fraction.
    let tolerance = 5.0 * (0.02 * 0.98 / sent as f64).sqrt();
    assert!(sent > 5_000 && (rate - 0.02).abs() < tolerance, "{rate} over {sent} packets (± {tolerance})");
    assert_eq!(r.summary.failed_links, ["tor0-spine1"]);
    assert!(r.summary.fabric.contains("lossy (2 % of packets lost on the wire)"), "{}", r.summary.fabric);
}

#[test]
fn a_pattern_of_bursty_cables_loses_the_gilbert_elliott_rate() {
    // Bursts of 4 packets every 200 on average: 4 / 204 of the packets, in runs.
    let r = leaf_spine("kind = \"bursty_loss\"\nlinks = [\"tor*-spine0\"]\nmean_burst_pkts = 4\nmean_gap_pkts = 200", "4MiB");
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    let (rate, sent, ports) = measured(&r);
    assert_eq!(ports.len(), 8, "four cables, both directions: {ports:?}");
    assert!(ports.iter().all(|p| p.contains("spine0")));
    // Correlated losses: about sent / 204 bursts; the rate's relative error is about
    // sqrt(2 / bursts). Allow 5 of those.
    let expected = 4.0 / 204.0;
    let bursts = sent as f64 / 204.0;
    assert!((rate / expected - 1.0).abs() < 5.0 * (2.0 / bursts).sqrt(), "{rate} vs {expected} over {sent} packets");
}

#[test]
fn one_flaky_leaf_spine_cable_needs_one_line() {
    // The case: one flaky leaf–spine cable, which took 122 hand-written link events.
    let r = leaf_spine("kind = \"flaky\"\nlinks = [\"tor2-spine1\"]\ndirection = \"up\"", "8MiB");
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    let (rate, sent, ports) = measured(&r);
    assert_eq!(ports, ["tor2-spine1"], "the upward direction only");
    // Packets start at times unrelated to the bursts: they see the merged bursts' time
    // fraction, 1 − e^(−10/100) = 9.5 %, with an error set by the ~sent × 100 µs-scale bursts.
    let expected = 1.0 - (-0.1f64).exp();
    assert!(sent > 5_000 && (rate - expected).abs() < 0.04, "{rate} vs {expected} over {sent} packets");
}

#[test]
fn bad_lossy_links_are_refused_naming_the_key() {
    let bad = |failures: &str, key: &str, words: &str| {
        let e = common::rejection(&format!("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 2\n[topology.failures]\n{failures}\n"));
        assert!(e.contains(key) && e.contains(words), "{failures}: {e}");
    };
    bad("kind = \"loss\"\nloss_rate = 0.1", "topology.failures.links", "missing");
    bad("kind = \"loss\"\nlinks = [\"tor0-spine0\"]\nloss_rate = 0", "topology.failures.loss_rate", "loses nothing");
    bad("kind = \"loss\"\nlinks = [\"tor0-spine0\"]\nloss_rate = 1.5", "topology.failures.loss_rate", "allowed 0..=1");
    bad("kind = \"loss\"\nlinks = [\"agg*-core0\"]\nloss_rate = 0.1", "topology.failures.links[0]", "matches no cable");
    bad("kind = \"loss\"\nlinks = [\"tor0-*\", \"tor0-spine1\"]\nloss_rate = 0.1", "topology.failures.links[1]", "listed twice");
    bad("kind = \"bursty_loss\"\nlinks = [\"tor0-spine0\"]\nmean_burst_pkts = 4", "topology.failures.mean_gap_pkts", "missing");
    bad("kind = \"bursty_loss\"\nlinks = [\"tor0-spine0\"]\nmean_burst_pkts = 0.5\nmean_gap_pkts = 10", "topology.failures.mean_burst_pkts", "at least one packet");
    bad("kind = \"bursty_loss\"\nlinks = [\"tor0-spine0\"]\nmean_burst_pkts = 4\nmean_gap_pkts = 10\nloss_rate = 0.1\ngood_loss_rate = 0.2", "topology.failures.loss_rate", "must lose more");
    bad("kind = \"tor_uplinks\"\nlinks = [\"tor0-spine0\"]\nloss_rate = 0.1", "topology.failures.loss_rate", "only allowed with kind = \"loss\" or \"bursty_loss\"");
    bad("kind = \"flaky\"\nlinks = [\"tor0-spine0\"]\nf = 1", "topology.failures.f", "not with `links`");
    bad("kind = \"partial_lag\"\nlinks = [\"tor0-spine0\"]\np = 1", "topology.failures.p", "strictly between 0 and 1");
}

#[test]
fn a_partial_lag_on_named_leaf_spine_cables_slows_them_by_p() {
    let r = leaf_spine("kind = \"partial_lag\"\nlinks = [\"tor*-spine1\"]\np = 0.75", "1MiB");
    assert_eq!(r.summary.failed_links, ["tor0-spine1", "tor1-spine1", "tor2-spine1", "tor3-spine1"]);
    assert!(r.summary.fabric.contains("4 ToR uplinks degraded to 25 Gb/s"), "{}", r.summary.fabric);
    assert!(r.summary.pod_uplink_bottleneck.is_none());
}

#[test]
fn several_fault_sets_apply_in_turn_each_with_its_own_key_and_seed() {
    // A lossy cable and a degraded one in one run, as an array of tables.
    let two = "[[topology.failures]]\nkind = \"loss\"\nlinks = [\"tor0-spine1\"]\nloss_rate = 0.02\n\
               [[topology.failures]]\nkind = \"tor_uplinks\"\nmodel = \"degraded\"\nlinks = [\"tor3-spine0\"]\ndegraded_rate_factor = 0.5\n";
    let text = |failures: &str| {
        format!(
            "seed = 5\n[topology]\nkind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 4\nspines = 2\nlink_rate_gbps = 100\n\
             [switch]\ntrimming = true\n[transport]\nlb = \"spray\"\n[workload]\nkind = \"permutation\"\nflow_bytes = \"4MiB\"\nlocality = \"cross_tor\"\n{failures}"
        )
    };
    let r = common::run(&text(two));
    assert_eq!(r.summary.failed_links, ["tor0-spine1", "tor3-spine0"]);
    assert!(r.summary.fabric.contains("lossy (2 %") && r.summary.fabric.contains("degraded to 50 Gb/s"), "{}", r.summary.fabric);
    // Only the lossy cable loses packets on the wire, at its rate.
    let (rate, _, ports) = measured(&r);
    assert_eq!(ports, ["tor0-spine1", "spine1-tor0"]);
    assert!((rate - 0.02).abs() < 0.01, "{rate}");
    // The resolved scenario keeps the array and reruns the same run.
    let again = common::run(&r.scenario_toml);
    assert_eq!(again.flows_csv(), r.flows_csv());
    assert!(r.scenario_toml.contains("[[topology.failures]]"), "{}", r.scenario_toml);
    // Errors name the entry; a cable may be in one entry only.
    let e = common::rejection(&text(&two.replace("loss_rate = 0.02", "loss_rate = 2")));
    assert!(e.contains("topology.failures[0].loss_rate"), "{e}");
    let e = common::rejection(&text(&two.replace("tor3-spine0", "spine1-tor0")));
    assert!(e.contains("topology.failures[1]") && e.contains("one entry only"), "{e}");
    // A switched-off entry is left out; the other runs.
    let off = common::run(&text(&two.replace("[[topology.failures]]\nkind = \"tor_uplinks\"", "[[topology.failures]]\nenabled = false\nkind = \"tor_uplinks\"")));
    assert_eq!(off.summary.failed_links, ["tor0-spine1"]);
}
