//! Time series and distributions: sampled windows, the ACK RTT distribution and the count of
//! duplicate deliveries.
use fabricsim::units::Time;
mod common;

/// A 4:1 incast on a 16-host fat tree with fixed windows and spraying, plus the `[run]` lines.
fn incast4(flow_bytes: &str, run: &str) -> String {
    format!(
        r#"
        seed = 4
        [topology]
        k = 4
        [transport]
        cc = "fixed"
        lb = "spray"
        [workload]
        kind = "incast"
        senders = 4
        receiver = 0
        flow_bytes = "{flow_bytes}"
        [run]
        {run}
    "#
    )
}

/// Half the width of the summary's RTT histogram bins (2^17 ps), in µs.
const HALF_RTT_BIN_US: f64 = 65_536e-6;

/// Links one way between two hosts of a k = 4 fat tree (2 hosts per ToR, 4 per pod).
fn k4_hops(a: u32, b: u32) -> u32 {
    if a / 2 == b / 2 {
        2
    } else if a / 4 == b / 4 {
        4
    } else {
        6
    }
}

/// Unloaded RTT over `hops` links each way of 1 µs at 400 Gb/s: a 4096 B packet out
/// (81.92 ns per hop) and a 64 B ACK back (1.28 ns per hop), in µs.
fn unloaded_rtt_us(hops: u32) -> f64 {
    hops as f64 * (2.0 * 1.0 + 0.08192 + 0.00128)
}

#[test]
fn samples_windows_and_rtts() {
    let r = common::run(&incast4("1MiB", "trace_interval_us = 2.0\ntrace_conns = [0, 2]"));
    let t = &r.trace;
    assert!(t.len() > 20);
    assert!(t.iter().all(|s| s.conn == 0 || s.conn == 2));
    // Samples every 2 us, two connections per tick.
    assert_eq!(t[2].at - t[0].at, Time(2_000_000));
    // A fixed window (one BDP of the flow's own path) never changes; in-flight bytes never
    // exceed it.
    for c in [0, 2] {
        let w = t.iter().find(|s| s.conn == c).unwrap().window.unwrap();
        for s in t.iter().filter(|s| s.conn == c) {
            assert!(s.window == Some(w) && s.in_flight <= w, "{s:?} vs window {w}");
        }
    }
    // The acknowledged bytes of a flow only grow, up to the flow size.
    let acked: Vec<u64> = t.iter().filter(|s| s.conn == 0).map(|s| s.acked_bytes).collect();
    assert!(acked.windows(2).all(|p| p[0] <= p[1]) && *acked.last().unwrap() <= 1 << 20);
    // The first packet of the nearest sender finds every queue empty: the smallest RTT is
    // that path's unloaded RTT (seed 4 draws senders 2, 3, 7, 14: hosts 2 and 3 share host
    // 0's pod, 4 hops). The summary reports the middle of its 2^17 ps histogram bin, so it
    // lies within half a bin of the true value.
    let rtt = &r.summary.ack_rtt_us;
    let nearest = r.flows.iter().map(|f| unloaded_rtt_us(k4_hops(f.src, f.dst))).fold(f64::MAX, f64::min);
    assert_eq!(nearest, unloaded_rtt_us(4));
    assert!((rtt.min - nearest).abs() <= HALF_RTT_BIN_US, "min RTT {} us vs the nearest sender's unloaded RTT {nearest} us", rtt.min);
    // 4:1 onto one port: queueing makes RTTs exceed the base RTT.
    assert!(rtt.p99 > r.summary.base_rtt_us, "{rtt:?}");
    assert_eq!(r.summary.duplicate_data_packets, 0);
    assert!(r.trace_csv().starts_with("time_us,flow,cwnd_bytes"));
}

#[test]
fn bad_trace_settings_are_rejected() {
    let e = common::rejection("[run]\ntrace_interval_us = 0\n");
    assert!(e.contains("run.trace_interval_us"), "{e}");
    let e = common::rejection("[topology]\nk = 4\n[run]\ntrace_interval_us = 1\ntrace_conns = [99]\n");
    assert!(e.contains("run.trace_conns") && e.contains("flow 99 does not exist"), "{e}");
}

#[test]
fn ack_log_records_every_ack_of_chosen_flows() {
    let r = common::run(&incast4("256KiB", "ack_log_conns = [1]"));
    // One ACK per data packet (ack_every = 1), all of flow 1, in time order, RTT ≥ 0.
    let pkts = (256 * 1024u64).div_ceil(4032);
    assert_eq!(r.acks.len() as u64, pkts);
    assert!(r.acks.iter().all(|a| a.1 == 1));
    assert!(r.acks.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(r.acks_csv().starts_with("time_us,flow,rtt_us,ecn\n"));
}

#[test]
fn port_stats_add_up_to_the_run_and_find_the_hot_link() {
    // 32 -> 1 RoCE incast with PFC on a 128-host leaf-spine: the receiver's downlink is the
    // bottleneck (busy almost all the run), the spines' downlinks into tor0 are the paused
    // ports, and the per-port counters add up to the run's.
    let toml = common::roce_incast_128("port_stats = true");
    let r = common::run(&toml);
    assert_eq!(r.ports.len(), 2 * (128 + 16 * 8), "both directions of every link (16 ToRs × 8 spines)");
    let hot = r.ports.iter().max_by(|a, b| a.utilisation.total_cmp(&b.utilisation)).unwrap();
    assert_eq!((hot.link.as_str(), hot.class), ("tor0-host0", "tor_down"));
    assert!(hot.utilisation > 0.95 && hot.utilisation <= 1.0, "{}", hot.utilisation);
    let s = &r.summary;
    assert_eq!(r.ports.iter().map(|p| p.ecn_marks).sum::<u64>(), s.packets.ecn_mark_events);
    assert_eq!(r.ports.iter().map(|p| p.drops).sum::<u64>(), s.packets.dropped);
    let pfc = s.pfc.as_ref().unwrap();
    assert_eq!(r.ports.iter().map(|p| p.pauses as u64).sum::<u64>(), pfc.ports.iter().map(|p| p.1 as u64).sum::<u64>());
    let worst = r.ports.iter().max_by(|a, b| a.paused_us.total_cmp(&b.paused_us)).unwrap();
    assert_eq!(worst.link, pfc.max_paused_port);
    assert!((worst.paused_us - pfc.max_port_paused_us).abs() < 1e-6);
    // Off by default: no rows, no file.
    let off = common::run(&toml.replace("port_stats = true", ""));
    assert!(off.ports.is_empty());
    let csv = r.ports_csv();
    assert!(csv.starts_with("port,link,class,rate_gbps,tx_bytes,utilisation,max_queue_bytes,mean_queue_bytes,drops,wire_losses,trims,ecn_marks,pauses,paused_us\n"));
    assert_eq!(csv.lines().count(), 1 + r.ports.len());
}

/// Trace samples streamed to their files while the run takes them (`fabricsim run`, through
/// `run_into`) are the rows the kept samples give, byte for byte: every port of the fabric every
/// 10 ns, a port file many times the stream's buffer, and nothing kept in memory.
#[test]
fn a_streamed_trace_is_the_kept_trace_row_for_row() {
    use fabricsim::results::{stream::BUFFER_BYTES, OutDir};
    let text = incast4("64KiB", "trace_interval_us = 0.01\ntrace_conns = [0, 1, 2, 3]\ntrace_ports = [\"*-*\"]");
    let setup = fabricsim::Scenario::from_toml(&text, &[]).unwrap().setup(std::path::Path::new(".")).unwrap();
    let kept = fabricsim::run(&setup, &mut |_| {}).unwrap();
    let dir = std::env::temp_dir().join(format!("fabricsim-tracing-streamed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = OutDir::prepare(&dir, "results folder").unwrap();
    let r = fabricsim::run_into(&setup, 1, &mut |_| {}, &std::sync::atomic::AtomicBool::new(false), &out).unwrap();
    assert!(r.trace.is_empty() && r.port_trace.is_empty(), "streamed samples are not kept");
    // Every port of the k = 4 fat tree (48 links) at every tick; the four connections likewise.
    let ports = kept.port_names.len();
    assert_eq!(ports, 96);
    let ticks = kept.port_trace.len() / ports;
    assert!(ticks > 500 && kept.port_trace.len() == ticks * ports && kept.trace.len() == 4 * ticks, "{ticks}");
    let rows: Vec<(&str, u64)> = r.streamed.iter().map(|s| (s.name, s.rows)).collect();
    assert_eq!(rows, [("trace.csv", 4 * ticks as u64), ("port_trace.csv", (ticks * ports) as u64)]);
    // Until the results are written the files have their temporary names only.
    assert!(!dir.join("port_trace.csv").exists() && dir.join("port_trace.csv.partial").exists());
    r.write_to(&out).unwrap();
    let port_csv = std::fs::read_to_string(dir.join("port_trace.csv")).unwrap();
    assert_eq!(port_csv.lines().count(), 1 + ticks * ports);
    assert!(port_csv.len() > 20 * BUFFER_BYTES, "{} bytes", port_csv.len());
    assert!(port_csv == kept.port_trace_csv(), "port_trace.csv differs from the kept samples' text");
    assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), kept.trace_csv());
    // The uplink imbalance, computed while sampling, is the kept run's.
    let fig = |r: &fabricsim::Results| serde_json::to_string(&r.summary.uplink_imbalance).unwrap();
    assert!(kept.summary.uplink_imbalance.is_some());
    assert_eq!(fig(&r), fig(&kept));
    let mut files: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files, ["flows.csv", "manifest.json", "port_trace.csv", "resolved_scenario.toml", "summary.json", "trace.csv"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 4:1 trimming incast of 256 KiB flows with a shared control lane and small buffers, so
/// that packets of the logged flow are trimmed on arrival and evicted for control packets.
fn trimming_incast(run: &str) -> String {
    incast4("256KiB", run).replace(
        "[transport]",
        "[switch]\nbuffer_bytes = \"32KiB\"\ntrimming = true\ncontrol_lane = \"shared\"\n[transport.reliability]\nname = \"trim\"\n[transport]",
    )
}

#[test]
fn packet_log_tells_each_packet_of_a_flow_its_story() {
    use fabricsim::engine::trace::PacketEvent as E;
    let r = common::run(&trimming_incast("packet_log_conns = [1]"));
    let log = &r.packet_log;
    assert!(log.iter().all(|e| e.conn == 1) && log.windows(2).all(|w| w[0].at <= w[1].at));
    let f = &r.flows[1];
    let count = |ev: E| log.iter().filter(|e| e.event == ev).count() as u32;
    // Every event the flow's counters count is in the log, once.
    assert_eq!(count(E::Sent) + count(E::Resent), f.data_sent);
    assert_eq!(count(E::Resent), f.retransmits);
    assert_eq!(count(E::Trimmed) + count(E::Evicted), f.trims);
    assert!(f.trims > 0, "the case must trim the logged flow");
    // No timeouts here: each trimmed transmission's header reaches the receiver, its NACK the
    // sender, and the packet is sent again after that NACK; each packet is ACKed once in the end.
    assert_eq!(count(E::HeaderArrived), f.trims);
    assert_eq!(count(E::NackArrived), f.trims);
    assert_eq!(count(E::AckArrived), (256 * 1024u32).div_ceil(4032));
    for cut in log.iter().filter(|e| matches!(e.event, E::Trimmed | E::Evicted)) {
        assert!(cut.port != fabricsim::engine::trace::NO_PORT);
        let later = |ev: E| log.iter().find(|e| e.seq == cut.seq && e.at >= cut.at && e.event == ev).map(|e| e.at);
        let (header, nack, resend) = (later(E::HeaderArrived).unwrap(), later(E::NackArrived).unwrap(), later(E::Resent).unwrap());
        assert!(cut.at <= header && header <= nack && nack <= resend, "{cut:?}: header {header}, NACK {nack}, resent {resend}");
    }
    let csv = r.packet_log_csv();
    assert!(csv.starts_with("time_us,flow,seq,event,link\n"), "{csv}");
    // A cut names its switch port; an event at a host has no link.
    assert!(csv.lines().filter(|l| l.contains(",trimmed,")).all(|l| !l.ends_with(',')), "{csv}");
    assert!(csv.lines().filter(|l| l.contains(",sent,")).all(|l| l.ends_with(',')), "{csv}");
    // Off by default: nothing logged.
    assert!(common::run(&trimming_incast("")).packet_log.is_empty());
}
