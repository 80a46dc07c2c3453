//! Links can be slowed down or taken down at a given time: a slower host link stretches a flow
//! in proportion, and a failed fabric link loses the packets sprayed onto it until the
//! retransmission timer recovers them (routing does not reconverge, as in the papers).
mod common;

fn one_flow(events: &str) -> fabricsim::Results {
    common::run(&format!(
        r#"
        [topology]
        k = 4
        [transport]
        rto_us = 50
        [workload]
        kind = "flow_list"
        file = "tests/data/one_flow_k4.csv"
        {events}
    "#
    ))
}

#[test]
fn degraded_host_link_halves_the_rate() {
    let base = one_flow("");
    let slow = one_flow("[[link_events]]\nat_us = 0\nlink = \"host0-tor0\"\naction = \"rate\"\nrate_gbps = 200\n");
    let (b, s) = (base.flows[0].fct().unwrap().0 as f64, slow.flows[0].fct().unwrap().0 as f64);
    // 4 MiB at 400 vs 200 Gb/s: serialization doubles (~84 us -> ~168 us), the RTT barely changes.
    assert!((s / b - 2.0).abs() < 0.1 * 2.0, "fct {b} ps at 400G, {s} ps at 200G");
}

#[test]
fn failed_link_drops_sprayed_packets_and_timeouts_recover_them() {
    // Host 0 -> host 15 crosses the core; take one of tor0's two uplinks down at 10 us.
    let r = one_flow("[[link_events]]\nat_us = 10\nlink = \"tor0-agg0\"\naction = \"down\"\n");
    let f = &r.flows[0];
    assert!(f.finish.is_some());
    assert!(f.drops > 0, "spraying must hit the dead link");
    // Every dropped data packet is retransmitted (per-flow drops also count lost ACKs).
    assert!(r.summary.packets.dropped > 0);
    assert!(f.timeouts > 0 && f.retransmits as u64 >= r.summary.packets.dropped);
    let base = one_flow("");
    assert!(f.fct().unwrap() > base.flows[0].fct().unwrap());
}
