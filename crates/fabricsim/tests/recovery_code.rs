//! Erasure-coding loss recovery (lb-ai-training spec §2.3 LR-CODE0/5): a lossless flow finishes
//! at its ideal FCT, ε = 0.05 makes the receiver wait for 5 % more packets, and losses (trims,
//! drops, timeouts) are repaired by new symbols, never by retransmissions.
use fabricsim::units::Time;
mod common;

/// One 2080-packet flow host 0 → host 127 of an idle k = 8 fat tree (as in
/// `single_flow_line_rate.rs`), with erasure coding of overhead `epsilon`.
fn one_flow(epsilon: f64, extra: &str) -> fabricsim::Results {
    common::run(&common::one_flow(&format!("[transport.reliability]\nname = \"code\"\nepsilon = {epsilon}\n{extra}")))
}

//= type=test; LR-CODE0: ideal coding adds nothing on a lossless path
#[test]
fn lossless_flow_finishes_at_its_ideal_fct_and_never_retransmits() {
    let r = one_flow(0.0, "");
    let f = &r.flows[0];
    assert_eq!(f.fct(), Some(f.ideal_fct));
    assert_eq!((f.retransmits, f.timeouts), (0, 0));
    // The sender keeps sending symbols until the receiver's final ACK is back: a window's worth
    // more than the 2080 the receiver needed are wasted (paper §5, footnote 3).
    let sent = r.summary.packets.data_sent;
    assert!(sent > 2080 && sent < 2080 + 400, "sent {sent}");
}

//= type=test; LR-CODE5: the receiver needs ⌈1.05 · 2080⌉ = 2184 packets
#[test]
fn five_percent_overhead_sends_five_percent_more() {
    let (r0, r5) = (one_flow(0.0, ""), one_flow(0.05, ""));
    let (f0, f5) = (&r0.flows[0], &r5.flows[0]);
    // 104 more packets at line rate, to within one packet time.
    let extra = 104 * common::tx_ps(4096, 400);
    let fct5 = f5.fct().unwrap();
    assert!(fct5.abs_diff(f0.fct().unwrap() + Time(extra)) <= Time(common::tx_ps(4096, 400)), "{fct5} vs {} + {extra}", f0.fct().unwrap());
    let (s0, s5) = (r0.summary.packets.data_sent, r5.summary.packets.data_sent);
    assert_eq!(s5 - s0, 104, "the wasted tail is the same window in both runs");
    let ratio = s5 as f64 / s0 as f64;
    assert!((1.03..1.06).contains(&ratio), "sent {s5} vs {s0}");
    assert_eq!(r5.summary.packets.retransmitted, 0);
}

//= type=test; LR-CODE0: a lost packet is replaced by a new symbol, not retransmitted
#[test]
fn dropped_packets_are_replaced_not_retransmitted() {
    // At line rate without a window (a lost symbol would otherwise hold a window slot until
    // the RTO), as the study's paced senders run.
    let cc = "[transport.cc]\nname = \"line_rate\"";
    let clean = one_flow(0.0, cc);
    let r = one_flow(0.0, &format!("{cc}\n[run]\ndrop_packets = [{{ flow = 0, seq = 100 }}, {{ flow = 0, seq = 2079 }}]"));
    let s = &r.summary;
    assert_eq!(s.packets.dropped, 2);
    assert_eq!(s.packets.retransmitted, 0);
    // Two more symbols: the flow finishes two packet times later.
    let f = &r.flows[0];
    assert_eq!(f.fct().unwrap(), clean.flows[0].fct().unwrap() + Time(2 * common::tx_ps(4096, 400)));
}

/// A 16:1 incast into half-BDP buffers (as in `trimming_recovers.rs`) with coding.
fn incast(trimming: bool) -> fabricsim::Results {
    common::run(&common::half_bdp_incast(trimming, "[transport.reliability]\nname = \"code\"\nepsilon = 0.05"))
}

#[test]
fn lossy_incast_completes_without_retransmissions() {
    for trimming in [true, false] {
        let r = incast(trimming);
        let s = &r.summary;
        assert_eq!(s.flows_finished, 16);
        let lost = if trimming { s.packets.trimmed } else { s.packets.dropped };
        assert!(lost > 100, "trimming {trimming}: lost {lost}");
        assert_eq!(s.packets.retransmitted, 0, "trimming {trimming}");
        if trimming {
            assert_eq!(s.packets.timeouts, 0);
        }
        assert!(r.flows.iter().all(|f| f.retransmits == 0));
    }
}

#[test]
fn bad_epsilon_is_rejected_naming_the_key() {
    let e = common::rejection("[transport.reliability]\nname = \"code\"\nepsilon = -0.1\n");
    assert!(e.contains("transport.reliability.epsilon"), "{e}");
}

/// Collectives put many messages on one connection, several open at once: each is delivered
/// after ⌈1.05·n⌉ of its packets (or later ones, see `code.rs`), extra symbols never collide
/// with a later message's packets, and everything completes without a retransmission, also
/// when shallow buffers trim.
#[test]
fn many_messages_per_connection_complete_with_coding() {
    for trimming in [false, true] {
        let r = common::run(&format!(
            r#"
            seed = 5
            [topology]
            k = 4
            [switch]
            buffer_bdp = 0.5
            trimming = {trimming}
            [transport]
            lb = "spray"
            cc = {{ name = "fixed", window_bdp = 2.0 }}
            reliability = {{ name = "code", epsilon = 0.05 }}
            {}
        "#,
            common::TWO_COLLECTIVES
        ));
        let s = &r.summary;
        assert!(r.ccts.iter().all(|c| c.cct().is_some()), "trimming {trimming}: unfinished collectives");
        assert_eq!(s.packets.retransmitted, 0, "trimming {trimming}");
        // Every 128 KiB chunk (33 packets) needs 35 distinct ones: at least 6 % more sent.
        let posted: u64 = r.flows.iter().map(|f| f.bytes.div_ceil(4032)).sum();
        assert!(s.packets.data_sent as f64 >= 1.06 * posted as f64, "trimming {trimming}: sent {} for {posted}", s.packets.data_sent);
        if trimming {
            assert!(s.packets.trimmed > 0);
        }
    }
}
