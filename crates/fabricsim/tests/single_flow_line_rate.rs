//! One flow on an idle fabric runs at line rate: it finishes in size/rate + base RTT.
mod common;

#[test]
fn single_flow_finishes_in_size_over_rate_plus_base_rtt() {
    // 2080 full packets (8,386,560 B of payload) from host 0 to host 127 of a k=8 fat tree:
    // 6 links each way at 400 Gb/s, 1 us. Whole packets keep the formula exact; a short last
    // packet would finish earlier by its shorter serialization on the 5 downstream hops.
    let r = common::run(&common::one_flow(""));
    let f = &r.flows[0];
    assert_eq!((f.src, f.dst), (0, 127));
    let wire = 2080 * 4096;
    // size/rate + base RTT, where the base RTT (12 us of propagation + 6 serializations of a
    // full packet and of an ACK) already includes the first hop's serialization of one packet.
    let base_rtt = 12_000_000 + 6 * (common::tx_ps(4096, 400) + common::tx_ps(64, 400));
    let expected = common::tx_ps(wire, 400) + base_rtt;
    let fct = f.fct().unwrap().0;
    let packet_time = common::tx_ps(4096, 400);
    assert!(fct.abs_diff(expected) <= packet_time, "fct {fct} ps, expected {expected} ps ± {packet_time}");
    // Our ideal-FCT column is exact: the base RTT counts the first hop's serialization of one
    // packet, which size/rate already counted, so the exact ideal is one packet time less.
    assert_eq!(f.ideal_fct.0, expected - packet_time);
    assert_eq!(fct, f.ideal_fct.0, "an idle fabric with a BDP window achieves the ideal exactly");
    assert_eq!(f.retransmits, 0);
}
