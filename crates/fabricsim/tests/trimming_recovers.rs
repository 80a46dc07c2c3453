//! Trimming turns would-be drops into headers that the receiver NACKs; the sender retransmits
//! and every flow completes with every byte delivered once. Without trimming the same overload
//! drops packets and the retransmission timer recovers them.
mod common;

fn incast(trimming: bool) -> String {
    common::half_bdp_incast(trimming, "")
}

#[test]
fn trimmed_packets_are_nacked_and_retransmitted() {
    let r = common::run(&incast(true));
    let s = &r.summary;
    assert_eq!(s.flows_finished, 16);
    assert!(s.packets.trimmed > 100, "a 16:1 incast into half-BDP buffers must trim (trimmed {})", s.packets.trimmed);
    assert_eq!(s.packets.dropped, 0);
    assert_eq!(s.packets.nacks, s.packets.trimmed, "every trimmed header reaches its receiver and is NACKed");
    assert_eq!(s.packets.retransmitted, s.packets.trimmed, "every trim is repaired by exactly one retransmission");
    assert_eq!(s.packets.timeouts, 0);
    let per_flow_trims: u64 = r.flows.iter().map(|f| f.trims as u64).sum();
    assert_eq!(per_flow_trims, s.packets.trimmed);
    assert!(s.max_queue_bytes <= s.buffer_bytes.expect("a lossy fabric bounds its ports"));
}

#[test]
fn without_trimming_drops_are_recovered_by_timeout() {
    let r = common::run(&incast(false));
    let s = &r.summary;
    assert_eq!(s.flows_finished, 16);
    assert!(s.packets.dropped > 0);
    assert_eq!(s.packets.trimmed, 0);
    assert!(s.packets.timeouts > 0);
    assert!(s.packets.retransmitted >= s.packets.dropped);
}

/// A 100:1 incast of 1 MiB flows on an 800 G fat tree with fixed 1-BDP windows: every sender's
/// trimmed packets come back as headers, about 100 × 64/4160 ≈ 1.5 times the receiver link's
/// rate, all converging on the receiver's downlink.
fn header_flood(control_wrr_weight: u32, end_time_us: u32, stall_limit_us: u32) -> String {
    format!(
        r#"
        seed = 5
        [topology]
        k = 8
        link_rate_gbps = 800
        link_latency_ns = 600
        switch_latency_ns = 400
        [switch]
        control_wrr_weight = {control_wrr_weight}
        [transport]
        lb = "reps"
        [transport.cc]
        name = "fixed"
        window_bdp = 1.0
        [workload]
        kind = "incast"
        senders = 100
        flow_bytes = "1MiB"
        [run]
        end_time_us = {end_time_us}
        stall_limit_us = {stall_limit_us}
    "#
    )
}

#[test]
fn strict_priority_headers_starve_data_and_round_robin_bounds_it() {
    // Strict priority: once the header queue never empties, data stops and the livelock guard
    // ends the run with an error instead of simulating forever.
    let strict = common::run_unchecked(&header_flood(0, 5_000, 300));
    let s = &strict.summary;
    assert_eq!(s.flows_finished, 0);
    let since = s.stalled_since_us.expect("the livelock guard must fire");
    assert!(since < 100.0, "data should stop within the first RTTs, stalled since {since} µs");
    assert!(s.invariant_violations.iter().any(|v| v.starts_with("livelock")), "{:?}", s.invariant_violations);
    // 20 headers per data packet leave data 4160 / (4160 + 20·64) ≈ 76 % of the link, so the
    // incast completes within about 1/0.76 of its ideal.
    let wrr = common::run(&header_flood(20, 10_000, 300));
    let s = &wrr.summary;
    assert_eq!(s.flows_finished, 100);
    assert!(s.stalled_since_us.is_none());
    assert!(s.packets.trimmed > 10_000, "the flood must still trim (trimmed {})", s.packets.trimmed);
    let ratio = s.completion_time_us / s.ideal_completion_time_us;
    assert!(ratio < 1.4, "completion {ratio:.2} × ideal with WRR 20:1");
}

/// The 16:1 incast with the control class bounded as `lane` (`[switch] control_lane`).
fn incast_with_lane(lane: &str) -> String {
    incast(true).replace("trimming = true", &format!("trimming = true\n{lane}"))
}

//= lb-ai-training spec §4.2: trimmed headers share the port's buffer with data
#[test]
fn shared_lane_headers_take_buffer_and_evict_data() {
    let unbounded = common::run(&incast(true)).summary;
    let r = common::run(&incast_with_lane("control_lane = \"shared\""));
    let s = &r.summary;
    assert_eq!(s.flows_finished, 16);
    // Headers now take room that data had: more of the same incast is trimmed, and a header
    // finding the buffer full evicts data instead of being lost.
    assert!(s.packets.trimmed > unbounded.packets.trimmed, "shared {} vs unbounded {}", s.packets.trimmed, unbounded.packets.trimmed);
    assert_eq!(s.packets.dropped + s.packets.control_dropped, 0);
    assert_eq!(s.packets.nacks, s.packets.trimmed, "every header, evicted ones included, is NACKed");
    assert_eq!(s.packets.retransmitted, s.packets.trimmed);
    assert!(s.max_queue_bytes <= s.buffer_bytes.expect("a lossy fabric bounds its ports"));
    println!("16:1 incast trims: unbounded {}, shared {}", unbounded.packets.trimmed, s.packets.trimmed);
}

#[test]
fn separate_lane_drops_headers_that_do_not_fit_and_timeouts_recover() {
    // A lane of 0.03 % of a half-BDP buffer (≈ 94 B) holds one header.
    let r = common::run(&incast_with_lane("control_lane = \"separate\"\ncontrol_lane_factor = 0.0003"));
    let s = &r.summary;
    assert_eq!(s.flows_finished, 16);
    assert!(s.packets.control_dropped > 0, "a tiny header lane must overflow");
    assert!(s.packets.timeouts > 0, "lost headers are recovered by the timer");
    // A lane as large as the data buffer (the study's non-trimming default) loses none here.
    let r = common::run(&incast_with_lane("control_lane = \"separate\""));
    assert_eq!(r.summary.packets.control_dropped, 0);
    assert_eq!(r.summary.flows_finished, 16);
}

#[test]
fn control_lane_keys_are_checked() {
    for (lane, key, words) in [
        ("control_lane_factor = 2.0", "switch.control_lane_factor", "separate"),
        ("control_lane = \"separate\"\ncontrol_lane_factor = 0", "switch.control_lane_factor", "allowed 0.000001..=1000"),
        ("control_lane = \"shared\"\ntrimming = false", "switch.control_lane", "trimming"),
        ("control_lane = \"bounded\"", "control_lane", "shared"),
    ] {
        let e = common::rejection(&incast(true).replace("trimming = true", lane));
        assert!(e.contains(key) && e.contains(words), "{lane}: {e}");
    }
}
