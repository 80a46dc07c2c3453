//! RoCEv2 on small fabrics: PFC keeps an incast lossless and pauses spread hop by hop, a pause
//! storm does not deadlock a tree, DCQCN shares a bottleneck fairly, go-back-N resends from
//! the lost packet and selective NACK resends only what was lost.
use fabricsim::units::Time;
mod common;

/// A 32-host leaf-spine (k = 8) at 100 Gb/s with PFC and the given transport lines.
fn roce(transport: &str, workload: &str, extra: &str) -> String {
    format!(
        r#"
        seed = 3
        [topology]
        kind = "leaf_spine"
        k = 8
        link_rate_gbps = 100
        {}
        [transport]
        {transport}
        [workload]
        {workload}
        {extra}
    "#,
        common::ROCE_SWITCH
    )
}

//= type=test; strack spec §4 (lossless PFC fabric), §5.4 (shared-buffer PFC)
#[test]
fn incast_on_pfc_fabric_is_lossless_and_pauses_spread_hop_by_hop() {
    // 16 senders on other ToRs, no congestion control: only PFC holds the incast back.
    let r = common::run(&roce(
        r#"cc = "line_rate"
        lb = "ecmp"
        reliability = "go_back_n""#,
        r#"kind = "incast"
        senders = 16
        receiver = 0
        flow_bytes = "1MiB""#,
        "[run]\nevent_log = true",
    ));
    let s = &r.summary;
    assert_eq!(s.packets.dropped + s.packets.buffer_drops, 0, "{:?}", s.packets);
    assert_eq!(s.packets.retransmitted, 0);
    let pfc = s.pfc.as_ref().expect("pfc summary");
    assert!(pfc.pause_frames > 0 && pfc.headroom_overflow_drops == 0, "{pfc:?}");
    // Per-port pause counters add up to the summary.
    let per_port: f64 = pfc.ports.iter().map(|p| p.2).sum();
    assert!((per_port - pfc.paused_time_us).abs() < 1e-3 && pfc.ports.iter().all(|p| p.1 > 0 && p.2 > 0.0), "{pfc:?}");
    // The receiver's link drains at line rate all along: the incast finishes at its ideal.
    assert!(s.completion_time_us <= 1.02 * s.ideal_completion_time_us, "{} vs {}", s.completion_time_us, s.ideal_completion_time_us);
    // Pauses travel upstream: the receiver's ToR pauses spines, spines pause the senders'
    // ToRs, those ToRs pause the sending NICs, in that order.
    let first = |pred: &dyn Fn(&str) -> bool| r.events.iter().filter(|e| e.kind == "pause" && pred(&e.link)).map(|e| e.at).min();
    let spine = first(&|l| l.starts_with("spine") && l.ends_with("-tor0")).expect("tor0 pauses a spine");
    let tor = first(&|l| l.starts_with("tor") && l.contains("-spine")).expect("a spine pauses a ToR");
    let host = first(&|l| l.starts_with("host") && !l.ends_with("-tor0")).expect("a remote ToR pauses a sending NIC");
    assert!(spine < tor && tor < host, "pause order {spine} {tor} {host}");
}

#[test]
fn pause_storm_on_a_tree_does_not_deadlock() {
    // Every host sends to every other at line rate through tiny static PFC thresholds: pauses
    // everywhere, but an up-down tree has no cyclic buffer dependency, so everything finishes.
    let r = common::run(
        &roce(
            r#"cc = "line_rate"
            lb = "ecmp"
            reliability = "go_back_n""#,
            r#"kind = "all_to_all"
            flow_bytes = "64KiB""#,
            "",
        )
        .replace("enabled = true", "enabled = true\nthreshold = \"static\"\nxoff_bytes = \"16KiB\"\nbuffer_bytes = \"4MB\""),
    );
    let s = &r.summary;
    assert_eq!(s.flows_finished, s.flows);
    assert_eq!(s.packets.buffer_drops, 0);
    assert!(s.pfc.as_ref().unwrap().pause_frames > 1000, "{:?}", s.pfc);
}

/// A PAUSE and a RESUME sent to one upstream port at the same instant (a packet crosses X_off
/// on arrival and X_on on departure at once) arrive at the same instant too. The port must end
/// in the state sent last: the frame event names only the port, and the frames it delivers are
/// taken oldest first. (When the frame's kind was part of the event, the RESUME could run before
/// the PAUSE and leave the port paused for good: this run deadlocked with 89 of 128 flows left.)
#[test]
fn simultaneous_pause_and_resume_leave_the_port_resumed() {
    let r = common::run(
        r#"
        seed = 1
        [topology]
        kind = "fat_tree"
        k = 8
        link_rate_gbps = 100
        link_latency_ns = 1000
        switch_latency_ns = 0
        [switch]
        buffer_bytes = "1MiB"
        trimming = false
        [switch.pfc]
        enabled = true
        threshold = "static"
        xoff_bytes = "32KiB"
        resume_offset_bytes = "4KiB"
        [transport]
        mtu_bytes = 4096
        header_bytes = 64
        ack_bytes = 64
        lb = "spray"
        reliability = { name = "go_back_n", nack_repeat = "base_rtt" }
        cc = { name = "pacer", rate_coefficient = 1.0 }
        [workload]
        kind = "permutation"
        method = "shifts"
        permutations = 1
        flow_bytes = 201600
    "#,
    );
    let s = &r.summary;
    assert_eq!(s.flows_finished, s.flows, "{:?}", s.invariant_violations);
    assert!(s.pfc.as_ref().unwrap().pause_frames > 100, "{:?}", s.pfc);
}

//= type=test; DCQCN (Zhu et al. 2015) §3: flows sharing a bottleneck converge to equal rates
#[test]
fn dcqcn_flows_converge_to_fair_share() {
    // Flow 0 starts alone; flow 1 joins at 300 us on the same receiver. Measure each flow's
    // goodput over a late window from the sampled acknowledged bytes.
    let flows = common::flow_file("dcqcn", "src,dst,bytes,start_us\n8,0,40000000,0\n16,0,40000000,300\n");
    let r = common::run(&roce(
        r#"cc = "dcqcn"
        lb = "ecmp"
        reliability = "go_back_n""#,
        &flows.workload,
        "[run]\ntrace_interval_us = 50\ntrace_conns = [0, 1]",
    ));
    assert!(r.summary.packets.cnps > 0, "DCQCN never saw congestion");
    let acked = |c: u32, t_us: u64| r.trace.iter().find(|s| s.conn == c && s.at >= Time(t_us * 1_000_000)).map(|s| s.acked_bytes).unwrap();
    let (a, b) = (1500, 2500);
    let r0 = (acked(0, b) - acked(0, a)) as f64;
    let r1 = (acked(1, b) - acked(1, a)) as f64;
    let gbps = (r0 + r1) * 8.0 / ((b - a) as f64 * 1e3);
    assert!(gbps > 85.0, "bottleneck underused: {gbps:.1} Gb/s");
    assert!((r0 / r1 - 1.0).abs() < 0.25, "unfair: {r0} vs {r1} bytes in {a}..{b} us");
}

/// One 1 MiB flow host0 → host8 whose 50th packet is lost once, with the `[transport]` lines.
fn lose_packet_50_with(transport: &str) -> fabricsim::Results {
    common::run(&roce(
        transport,
        r#"kind = "incast"
        sender_hosts = [8]
        receiver = 0
        flow_bytes = "1MiB""#,
        "[run]\ndrop_packets = [{ flow = 0, seq = 50 }]",
    ))
}

/// `lose_packet_50_with` at line rate, recovering with `reliability`.
fn lose_packet_50(reliability: &str) -> fabricsim::Results {
    lose_packet_50_with(&format!("cc = \"line_rate\"\nlb = \"ecmp\"\nreliability = \"{reliability}\""))
}

//= type=test; strack spec §3.3 / seqbalance spec §2.3.2: go-back-N resends from the NACKed PSN
#[test]
fn go_back_n_resends_everything_from_the_lost_packet() {
    let r = lose_packet_50("go_back_n");
    let s = &r.summary;
    assert_eq!(s.packets.dropped, 1);
    assert_eq!(s.packets.seq_nacks, 1, "one NACK per gap");
    // Everything sent after packet 50 before the NACK came back is discarded and sent again:
    // about one BDP of packets (12.5 KB/us x ~5 us RTT / 4160 B ≈ 15), and at least 10.
    let rtx = s.packets.retransmitted;
    assert!((10..60).contains(&rtx), "retransmitted {rtx}");
    assert_eq!(s.packets.discarded_out_of_order + 1, rtx, "each discarded packet and the lost one come again");
    assert_eq!(s.packets.timeouts, 0);
}

//= type=test; seqbalance spec §7 T1 (Table I's instrument): one packet held at the first switch
#[test]
fn a_held_packet_arrives_out_of_order_and_go_back_n_resends_what_overtook_it() {
    let run = |hold: &str| {
        common::run(&roce(
            "cc = \"line_rate\"\nlb = \"ecmp\"\nreliability = \"go_back_n\"",
            "kind = \"incast\"\nsender_hosts = [8]\nreceiver = 0\nflow_bytes = \"1MiB\"",
            &format!("[run]\ndrop_packets = [{{ flow = 0, seq = 50{hold} }}]"),
        ))
    };
    let base = common::run(&roce("cc = \"line_rate\"\nlb = \"ecmp\"\nreliability = \"go_back_n\"", "kind = \"incast\"\nsender_hosts = [8]\nreceiver = 0\nflow_bytes = \"1MiB\"", ""));
    let held = run(", hold_us = 20");
    let s = &held.summary;
    // Nothing is lost: packet 50 arrives 20 µs late, after its successors, which the receiver
    // discards (one NACK), so the sender goes back to 50 and resends them.
    assert_eq!((s.packets.dropped, s.packets.timeouts, s.flows_finished), (0, 0, 1));
    assert!(s.packets.seq_nacks >= 1);
    let rtx = s.packets.retransmitted;
    assert!((10..60).contains(&rtx), "retransmitted {rtx}");
    // The late original duplicates the resent copy, or the resent copy duplicates it.
    assert!(s.duplicate_data_packets <= 1, "{}", s.duplicate_data_packets);
    let (t0, t1) = (base.summary.completion_time_us, s.completion_time_us);
    assert!(t1 > t0 && t1 < t0 + 20.0 + 10.0, "held {t1} us vs {t0} us");
    let e = common::rejection(&format!("{}\n[run]\ndrop_packets = [{{ flow = 0, seq = 1, hold_us = 0 }}]", roce("cc = \"line_rate\"", "kind = \"incast\"\nsenders = 2", "")));
    assert!(e.contains("run.drop_packets[0].hold_us"), "{e}");
}

/// `lose_packet_50_with` under DCQCN and go-back-N, with extra `[transport.cc]` and
/// `[transport.reliability]` lines.
fn lose_packet_50_dcqcn(cc: &str, reliability: &str) -> fabricsim::Results {
    lose_packet_50_with(&format!("lb = \"ecmp\"\n[transport.cc]\nname = \"dcqcn\"\n{cc}\n[transport.reliability]\nname = \"go_back_n\"\n{reliability}"))
}

//= type=test
//= seqbalance spec §2.3.3; type=assumption
//# T_NACK: a gap is NACKed again only once the interval passed; the repeats ask for what the
//# sender already resends, so they change nothing else.
#[test]
fn nack_interval_repeats_a_gap_without_extra_retransmissions() {
    let once = lose_packet_50_dcqcn("", "");
    let every_us = lose_packet_50_dcqcn("", "nack_repeat = \"interval\"\nnack_interval_us = 1");
    let every_4us = lose_packet_50_dcqcn("", "nack_repeat = \"interval\"\nnack_interval_us = 4");
    let (a, b, c) = (&once.summary.packets, &every_us.summary.packets, &every_4us.summary.packets);
    assert_eq!(a.seq_nacks, 1);
    // Out-of-order packets arrive for about one RTT (≈ 8.5 µs here) after the gap: one NACK per
    // µs of it, or one per 4 µs.
    assert!((7..=10).contains(&b.seq_nacks), "{b:?}");
    assert!((2..=3).contains(&c.seq_nacks), "{c:?}");
    assert_eq!((a.retransmitted, a.cnps), (b.retransmitted, 0));
    assert_eq!(once.summary.completion_time_us, every_us.summary.completion_time_us);
}

//= type=test
//= seqbalance spec §2.3.3; type=assumption
//# ooo_triggers_cnp: the ConWeave NACK carries a CNP (one rate cut per NACK); default off.
#[test]
fn ooo_triggers_cnp_cuts_the_rate_once_per_nack() {
    let paper = "preset = \"seqbalance\"\nreaction_point = \"paper\"";
    let quiet = lose_packet_50_dcqcn(paper, "");
    let cut = lose_packet_50_dcqcn(&format!("{paper}\nooo_triggers_cnp = true"), "");
    assert_eq!((quiet.summary.packets.cnps, quiet.summary.packets.seq_nacks), (0, 1));
    assert_eq!((cut.summary.packets.cnps, cut.summary.packets.seq_nacks), (1, 1));
    // Half rate from the cut on (α = 1): the flow finishes later.
    assert!(cut.summary.completion_time_us > quiet.summary.completion_time_us + 10.0, "{} vs {}", cut.summary.completion_time_us, quiet.summary.completion_time_us);
    // The preset's mellanox reaction point: no CNP packet, the NACK's own flag is the CNP; the
    // first one arms the decrease check, which cuts 4 µs later.
    let quiet = lose_packet_50_dcqcn("preset = \"seqbalance\"", "");
    let cut = lose_packet_50_dcqcn("preset = \"seqbalance\"\nooo_triggers_cnp = true", "");
    assert_eq!((quiet.summary.packets.cnps, cut.summary.packets.cnps, cut.summary.packets.seq_nacks), (0, 0, 1));
    assert!(cut.summary.completion_time_us > quiet.summary.completion_time_us + 10.0, "{} vs {}", cut.summary.completion_time_us, quiet.summary.completion_time_us);
}

//= type=test; lb-ai-training spec LR-ROCE variant: NACK at the given packet number
#[test]
fn selective_nack_resends_only_the_lost_packet() {
    let r = lose_packet_50("selective_nack");
    let s = &r.summary;
    assert_eq!((s.packets.dropped, s.packets.seq_nacks, s.packets.retransmitted), (1, 1, 1));
    assert_eq!(s.packets.discarded_out_of_order, 0);
    assert_eq!(s.duplicate_data_packets, 0);
}

#[test]
fn bad_pfc_settings_are_rejected() {
    let base = roce("cc = \"line_rate\"", "kind = \"incast\"\nsenders = 2", "");
    let e = common::rejection(&base.replace("trimming = false", "trimming = true"));
    assert!(e.contains("switch.pfc.enabled") && e.contains("trimming"), "{e}");
    let e = common::rejection(&base.replace("enabled = true", "enabled = true\nalpha = 0"));
    assert!(e.contains("switch.pfc.alpha"), "{e}");
    let e = common::rejection(&base.replace("enabled = true", "enabled = true\nthreshold = \"static\""));
    assert!(e.contains("switch.pfc.xoff_bytes"), "{e}");
    let e = common::rejection(&base.replace("enabled = true", "enabled = true\nbuffer_bytes = 1000"));
    assert!(e.contains("switch.pfc.buffer_bytes"), "{e}");
    let e = common::rejection(&base.replace("cc = \"line_rate\"", "cc = \"line_rate\"\nreliability = \"go_back_m\""));
    assert!(e.contains("transport.reliability") && e.contains("go_back_n"), "{e}");
    let e = common::rejection(&format!("{base}\n[run]\ndrop_packets = [{{ flow = 9, seq = 1 }}]"));
    assert!(e.contains("run.drop_packets[0].flow"), "{e}");
}

//= type=test; strack spec §7 RT-8: a DCQCN incast on PFC finishes near N·S/rate
#[test]
fn dcqcn_incast_finishes_near_its_ideal() {
    // DCQCN cuts every sender hard while the first burst drains; senders paced at the minimum
    // rate must pick the rate back up as the rate timer raises it, not after their long gap.
    let r = common::run(&roce(
        r#"cc = "dcqcn"
        lb = "ecmp"
        reliability = "go_back_n""#,
        r#"kind = "incast"
        senders = 24
        receiver = 0
        flow_bytes = "4MiB""#,
        "",
    ));
    let s = &r.summary;
    assert!(s.packets.cnps > 0);
    assert!(s.completion_time_us <= 1.3 * s.ideal_completion_time_us, "{} vs ideal {}", s.completion_time_us, s.ideal_completion_time_us);
}

//= type=test; strack spec §5.4 headroom: after XOFF, whatever is on the cable and in flight fits
#[test]
fn headroom_absorbs_everything_sent_before_a_pause_lands() {
    // Four DBT AllReduces over 4 QPs on a 4:1 fabric with a small α: thousands of XOFF/XON
    // cycles at full rate. With a headroom of only 2 × delay × rate + 2 MTU (the spec's formula)
    // this overflowed by 32 bytes; the default adds the PAUSE frame's own serialization.
    let r = common::run(&format!(
        r#"
        seed = 1
        [topology]
        kind = "leaf_spine"
        k = 16
        oversubscription = "4:1"
        link_rate_gbps = 400
        {}
        alpha = 0.0078125
        {}
        [workload]
        kind = "collectives"
        chunk = "128KiB"
        [[workload.jobs]]
        count = 4
        ranks = 32
        placement = "random"
        qps = 4
        collectives = [ {{ op = "allreduce", algorithm = "dbt", bytes = "4MiB" }} ]
    "#,
        common::ROCE_SWITCH,
        common::ROCE_TRANSPORT
    ));
    let pfc = r.summary.pfc.as_ref().unwrap();
    assert!(pfc.pause_frames > 1000, "{pfc:?}");
    assert_eq!(pfc.headroom_overflow_drops, 0);
}

/// Found by the fuzzer (corpus `pfc-switch-latency-headroom.toml`): a packet reaching a switch
/// also spends the switch latency on the way, so data still arrives for that much longer after
/// XOFF leaves; the default headroom left it out and a lossless fabric with switch latency
/// dropped packets (25 in this incast). It now counts it, on the data's way in and on the
/// PAUSE frame's way to an upstream switch.
#[test]
fn default_headroom_covers_the_switch_latency() {
    let r = common::run(
        "[topology]\nk = 4\nlink_latency_ns = 100\nswitch_latency_ns = 1000\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\n\
         [transport]\ncc = \"line_rate\"\n[workload]\nkind = \"incast\"\nsenders = 15\nflow_bytes = \"256KiB\"\n",
    );
    let s = &r.summary;
    assert_eq!(s.flows_finished, 15);
    assert!(s.pfc.as_ref().is_some_and(|p| p.pause_frames > 0), "the incast must pause");
    assert_eq!(s.packets.buffer_drops, 0, "lossless");
}

//= type=test; HPCC ns-3 simulator (SwitchNode AckHighPrio 0, RdmaEgressQueue ack_q_idx 3): ACKs FIFO with data
#[test]
fn acks_in_the_data_class_wait_behind_data() {
    // Host 0 sends a short flow to host 1 while hosts 8..16 send to host 0: the ACKs of
    // 0 -> 1 return through the port to host 0, where the incast queues. In the control class
    // they pass that queue; in the data class they wait in it.
    let mut rows = String::from("src,dst,bytes,start_us\n0,1,262144,0\n");
    for s in 8..16 {
        rows += &format!("{s},0,2000000,0\n");
    }
    let flows = common::flow_file("ack-class", &rows);
    let run = |class: &str| {
        common::run(&roce(
            &format!("cc = \"line_rate\"\nlb = \"ecmp\"\nreliability = \"go_back_n\"\nack_class = \"{class}\""),
            &flows.workload,
            "[run]\nack_log_conns = [0]",
        ))
    };
    let rtt = |r: &fabricsim::Results| r.acks.iter().map(|a| a.2.0 as f64).sum::<f64>() / r.acks.len() as f64 / 1e6;
    let (control, data) = (run("control"), run("data"));
    for r in [&control, &data] {
        assert_eq!(r.summary.flows_finished, r.summary.flows);
        assert_eq!(r.summary.packets.buffer_drops, 0);
    }
    // The flow's unloaded RTT: its quickest ACK.
    let base = (control.acks.iter().map(|a| a.2).min().unwrap()).0 as f64 / 1e6;
    assert!(rtt(&control) < 1.5 * base, "control-class ACKs: mean RTT {} µs, unloaded {base}", rtt(&control));
    assert!(rtt(&data) > 3.0 * base, "data-class ACKs: mean RTT {} µs, unloaded {base}", rtt(&data));
    // With trimming, an ACK in the data class could be trimmed: refused, naming the key.
    let e = common::rejection(&roce("ack_class = \"data\"", "kind = \"all_to_all\"", "").replace("trimming = false", "trimming = true"));
    assert!(e.contains("transport.ack_class") && e.contains("switch.trimming"), "{e}");
}
