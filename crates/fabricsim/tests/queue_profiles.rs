//! Per-port queue profiles act where their rule says and nowhere else.
//!
//! A 15:1 incast into host 0 of a k=4 fat tree (2 hosts per ToR) with fixed 1-BDP windows:
//! every sender starts a full window at line rate, so queues build on the receiver's ToR
//! downlink (15 × the link rate offered) and, upstream, on the two aggregation ports into its
//! ToR (14 senders outside tor0 share them: 7 × each) and on the core ports into its pod.
//! A fixed window ignores ECN echoes and spraying ignores them too, so switching marking off on
//! some ports changes no packet's timing: each port then marks exactly the packets it marked
//! before, or none. Marks of "ToR-down off" plus marks of "everything else off" must therefore
//! add up to the marks of the default run, each part non-zero.
mod common;

fn incast(switch_extra: &str) -> String {
    format!(
        r#"
        seed = 3
        [topology]
        k = 4
        [switch]
        {switch_extra}
        [transport.cc]
        name = "fixed"
        window_bdp = 1.0
        [workload]
        kind = "incast"
        senders = 15
        receiver = 0
        flow_bytes = "256KiB"
        [run]
        trace_interval_us = 0.5
        trace_ports = ["tor0-host0"]
    "#
    )
}

const NOT_TOR_DOWN: &str = r#"
        [switch.ports.tor_up]
        ecn = false
        [switch.ports.agg_down]
        ecn = false
        [switch.ports.agg_up]
        ecn = false
        [switch.ports.core_down]
        ecn = false
"#;

#[test]
fn marking_off_per_tier_partitions_the_marks() {
    let all = common::run(&incast(""));
    let no_tor_down = common::run(&incast("[switch.ports.tor_down]\necn = false"));
    let only_tor_down = common::run(&incast(NOT_TOR_DOWN));
    // Markings (not marked packets: a packet may be marked at both tiers) partition by tier.
    let marks = |r: &fabricsim::Results| r.summary.packets.ecn_mark_events;
    assert!(marks(&no_tor_down) > 0 && marks(&only_tor_down) > 0, "both tiers mark: {} / {}", marks(&no_tor_down), marks(&only_tor_down));
    assert_eq!(marks(&no_tor_down) + marks(&only_tor_down), marks(&all));
    // Same packets, same timing: only the CE bits differ.
    for r in [&no_tor_down, &only_tor_down] {
        assert_eq!(r.summary.packets.trimmed, all.summary.packets.trimmed);
        assert_eq!(r.summary.events, all.summary.events);
    }
    assert!(all.summary.queue_profiles.is_none(), "one profile: no listing");
    let p = no_tor_down.summary.queue_profiles.as_ref().expect("two profiles listed");
    assert_eq!((p.len(), p[1].ports.as_str(), p[1].port_count, p[1].ecn), (2, "tor_down@400G", 16, false));
}

#[test]
fn a_smaller_tor_down_buffer_bounds_that_queue_only() {
    let base = common::run(&incast(""));
    let small = common::run(&incast("[switch.ports.tor_down]\nbuffer_bytes = \"32KiB\""));
    let (b, s) = (&base.summary, &small.summary);
    assert_eq!(s.flows_finished, 15);
    // The receiver's downlink never holds more than its own 32 KiB (sampled, and checked for
    // every port against its own buffer by the run's invariants) ...
    let peak = small.port_trace.iter().map(|x| x.data_bytes).max().unwrap_or(0);
    assert!(peak > 0 && peak <= 32 << 10, "tor0-host0 peak {peak}");
    // ... while the aggregation ports upstream, on the default 1-BDP buffer, hold more.
    assert!(s.max_queue_bytes > 32 << 10, "deepest queue {}", s.max_queue_bytes);
    assert_eq!(s.buffer_bytes, b.buffer_bytes, "summary keeps the [switch] buffer");
    // Less room at the bottleneck: more packets trimmed there.
    assert!(s.packets.trimmed > b.packets.trimmed, "trimmed {} vs {}", s.packets.trimmed, b.packets.trimmed);
}
