//! N:1 incast with fixed windows and ample buffers: the receiver's link is the bottleneck, so
//! the last flow finishes at N·size/rate (+ one base RTT), and fair FIFO sharing makes every
//! flow finish close to the end.
mod common;

#[test]
fn eight_to_one_incast_finishes_at_n_size_over_rate() {
    let r = common::run(
        r#"
        seed = 3
        [topology]
        k = 8
        [switch]
        buffer_bytes = "64MiB"
        [transport]
        cc = "fixed"
        lb = "spray"
        [workload]
        kind = "incast"
        senders = 8
        receiver = 5
        flow_bytes = "16MiB"
    "#,
    );
    let s = &r.summary;
    assert_eq!(s.flows_finished, 8);
    // N·size/rate on the wire: 8 × (16 MiB + 64 B per 4032 B packet) at 400 Gb/s ≈ 2.72 ms.
    let packets = (16u64 << 20).div_ceil(4032);
    let n_size_over_rate = common::tx_ps(8 * ((16u64 << 20) + 64 * packets), 400) as f64 / 1e6;
    assert!(
        (s.completion_time_us - n_size_over_rate).abs() <= 0.01 * n_size_over_rate,
        "completion {} us vs N·size/rate {n_size_over_rate} us",
        s.completion_time_us
    );
    assert!((s.completion_time_us / s.ideal_completion_time_us - 1.0).abs() < 0.01);
    assert_eq!(s.packets.dropped + s.packets.trimmed, 0);
    // Fair share: equal windows through one FIFO give equal rates.
    let first = (r.flows.iter().filter_map(|f| f.fct()).min().unwrap()).0 as f64;
    let last = (r.flows.iter().filter_map(|f| f.fct()).max().unwrap()).0 as f64;
    assert!(first >= 0.95 * last, "first flow done at {first}, last at {last}");
}
