//! Trimming turns would-be drops into headers that the receiver NACKs; the sender retransmits
//! and every flow completes with every byte delivered once. Without trimming the same overload
//! drops packets and the retransmission timer recovers them.
mod common;

fn incast(trimming: bool) -> String {
    format!(
        r#"
        seed = 5
        [topology]
        k = 8
        [switch]
        buffer_bdp = 0.5
        trimming = {trimming}
        [transport.cc]
        name = "fixed"
        window_bdp = 1.0
        [workload]
        kind = "incast"
        senders = 16
        flow_bytes = "1MiB"
    "#
    )
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
    assert!(s.max_queue_bytes <= s.buffer_bytes);
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
