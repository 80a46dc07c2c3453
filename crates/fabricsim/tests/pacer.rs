//! The LB study's fixed-rate pacer (`cc = "pacer"`, lb-ai-training spec §2.0.2, CC-FIXED):
//! each flow at c · B_link / F on its own schedule, so the rate coefficient c scales a host's
//! offered load, unlike `line_rate`.
use fabricsim::units::Time;
mod common;

use fabricsim::Results;

/// One full packet's wire time at 100 Gb/s, in ps.
const T: u64 = 327_680;
/// Packets per flow of tests/data/fan_out_4.csv (258,048 B = 64 × 4032 B of payload).
const N: u64 = 64;

/// The flows of `file` under `pacer` with the extra `[transport.cc]` lines `cc` on a k=`k` fat
/// tree at `gbps`.
fn flows(seed: u64, k: u32, gbps: u32, cc: &str, file: &str) -> Results {
    common::run(&format!(
        "seed = {seed}\n[topology]\nk = {k}\nlink_rate_gbps = {gbps}\n[transport.cc]\nname = \"pacer\"\n{cc}\n\
         [workload]\nkind = \"flow_list\"\nfile = \"tests/data/{file}\"\n"
    ))
}

/// Host 0 of a k=4 fat tree sends 64 full packets to each of four hosts (F = 4), 100 Gb/s.
fn fan_out(c: f64, jitter: bool, seed: u64) -> Results {
    flows(seed, 4, 100, &format!("rate_coefficient = {c}\nstart_jitter = {jitter}"), "fan_out_4.csv")
}

/// FCT minus the flow's ideal FCT minus the pacing stretch of its N−1 gaps at rate c·B/F.
fn extra(r: &Results, c: f64) -> Vec<u64> {
    let gap = (4.0 / c) as u64 * T;
    let mut v: Vec<u64> = r.flows.iter().map(|f| (f.fct().expect("finished") - f.ideal_fct).0 - (N - 1) * (gap - T)).collect();
    v.sort_unstable();
    v
}

#[test]
fn without_jitter_a_hosts_flows_leave_exactly_on_their_schedule() {
    // Every flow's slots are k · 4T/c; the NIC serialises the four packets of one slot back
    // to back, so the i-th flow in NIC order finishes i packet times after its paced ideal.
    for c in [1.0, 0.5] {
        let r = fan_out(c, false, 1);
        assert_eq!(r.flows.len(), 4);
        assert_eq!(extra(&r, c), vec![0, T, 2 * T, 3 * T], "c = {c}");
        assert!(r.flows.iter().all(|f| f.retransmits == 0 && f.drops == 0));
    }
}

#[test]
fn half_the_coefficient_halves_the_hosts_offered_load() {
    // FCT ≈ F·M_wire/(c·B): the last flow ends at 4·64·T/c plus the path latency, within one
    // pacing gap of start jitter (4T/c) and three packets of NIC queueing.
    for seed in 1..=3 {
        let mut last = Vec::new();
        for c in [1.0, 0.5] {
            let r = fan_out(c, true, seed);
            for (f, x) in r.flows.iter().zip(extra(&r, c)) {
                assert!(x <= (4.0 / c) as u64 * T + 3 * T, "seed {seed}, c = {c}, flow {}: {x} ps over the paced ideal", f.id);
            }
            let host_busy = r.flows.iter().map(|f| f.fct().unwrap() - (f.ideal_fct - Time(N * T))).max().unwrap();
            let want = (4.0 * N as f64 * T as f64 / c) as u64;
            assert!(host_busy.abs_diff(Time(want)) <= Time((4.0 / c) as u64 * T + 3 * T), "seed {seed}, c = {c}: {host_busy} ps, want {want} ps");
            last.push(host_busy.0 as f64);
        }
        let ratio = last[1] / last[0];
        assert!((1.9..=2.1).contains(&ratio), "seed {seed}: c = 0.5 took {ratio:.3}x as long as c = 1");
    }
}

#[test]
fn a_single_flow_at_full_coefficient_finishes_at_its_ideal_fct_plus_jitter() {
    // 2080 full packets host 0 -> 127 on a k=8 fat tree at 400 Gb/s: F = 1, r = B_link.
    let run = |jitter: bool, seed: u64| flows(seed, 8, 400, &format!("start_jitter = {jitter}"), "one_flow.csv");
    let f = &run(false, 1).flows[0];
    assert_eq!(f.fct(), Some(f.ideal_fct), "unjittered, a flow paced at its host rate is ideal");
    let packet = common::tx_ps(4096, 400);
    let mut delays = Vec::new();
    for seed in 1..=8 {
        let f = &run(true, seed).flows[0];
        let d = f.fct().unwrap() - f.ideal_fct;
        assert!(d <= Time(packet), "seed {seed}: {d} ps late, jitter bound {packet} ps");
        delays.push(d);
    }
    delays.dedup();
    assert!(delays.len() > 1, "the start jitter is drawn per seed: {delays:?}");
}

/// Completion time of an all-to-all of 128-packet flows on a k=4 fat tree at 100 Gb/s with
/// sprayed packets and ample buffers, as a multiple of CCT_opt = F·M_wire/B_link (F = 15).
fn all_to_all(cc: &str) -> f64 {
    let r = common::run(&format!(
        r#"
        seed = 7
        [topology]
        k = 4
        link_rate_gbps = 100
        [switch]
        buffer_bytes = "16MiB"
        [transport]
        lb = "spray"
        [transport.cc]
        {cc}
        [workload]
        kind = "all_to_all"
        flow_bytes = 516096
    "#
    ));
    assert_eq!(r.flows.len(), 16 * 15);
    let start = r.flows.iter().map(|f| f.start).min().unwrap();
    let end = r.flows.iter().map(|f| f.finish.expect("finished")).max().unwrap();
    (end - start).0 as f64 / (15 * 128 * T) as f64
}

#[test]
fn on_an_all_to_all_half_the_coefficient_doubles_the_completion_time_unlike_line_rate() {
    let full = all_to_all("name = \"pacer\"\nrate_coefficient = 1.0");
    let half = all_to_all("name = \"pacer\"\nrate_coefficient = 0.5");
    // c = 1 runs the host links full: CCT_opt plus the ACKs sharing the host links (64/4096),
    // one pacing gap of start jitter (1/128) and the path's base RTT (~2 %); measured 1.050.
    // c = 0.5 takes twice the optimum plus the same RTT; measured 2.023.
    assert!((1.0..1.08).contains(&full), "c = 1: CCT {full:.3} x CCT_opt");
    assert!((2.0..2.06).contains(&half), "c = 0.5: CCT {half:.3} x CCT_opt");
    assert!((1.85..2.0).contains(&(half / full)), "pacer c = 0.5 vs 1: {:.3}", half / full);
    // line_rate paces each connection at a fraction of the host rate: the NIC's round-robin over
    // 15 connections keeps the host link full, so halving the fraction changes little.
    let lr_full = all_to_all("name = \"line_rate\"\nfraction = 1.0");
    let lr_half = all_to_all("name = \"line_rate\"\nfraction = 0.5");
    assert!(lr_half / lr_full < 1.05, "line_rate 0.5 vs 1: {lr_half:.3} vs {lr_full:.3}");
}

#[test]
fn bad_pacer_values_are_input_errors_naming_the_key() {
    for bad in ["0", "-0.5", "1.5"] {
        let toml = format!("[transport.cc]\nname = \"pacer\"\nrate_coefficient = {bad}\n");
        let e = common::rejection(&toml);
        assert!(e.contains("transport.cc.rate_coefficient") && e.contains("0.0001..=1"), "{bad}: {e}");
        let err = fabricsim::Scenario::from_toml(&toml, &[]).and_then(|s| s.setup(std::path::Path::new(".")).map(|_| ())).unwrap_err();
        assert!(err.is_input_error(), "{bad}: exit code 2 expected");
    }
    let e = common::rejection("[transport.cc]\nname = \"pacer\"\nflows_per_host = 0\n");
    assert!(e.contains("transport.cc.flows_per_host"), "{e}");
    let e = common::rejection("[transport.cc]\nname = \"pacer\"\ngap_jitter = 1.0\n");
    assert!(e.contains("transport.cc.gap_jitter"), "{e}");
    let e = common::rejection("[transport.cc]\nname = \"pacer\"\nrate = 3\n");
    assert!(e.contains("unknown field `rate`") && e.contains("rate_coefficient"), "{e}");
}

#[test]
fn flows_per_host_sets_the_rate_and_the_jitter_spans_a_whole_gap() {
    // One flow told F = 64: paced at 100/64 Gb/s, a gap of 64 T = 21 us. Its FCT is its ideal
    // stretched by 63 T per gap, plus a start jitter anywhere in [0, 64 T]: beyond the
    // engine's 10 us rate re-check, which must not cut a scheduled pacer's start short.
    let run = |seed: u64| flows(seed, 4, 100, "flows_per_host = 64", "one_flow_100pkt_k4.csv");
    let mut jitters = Vec::new();
    for seed in 1..=12 {
        let f = &run(seed).flows[0];
        let pkts = f.bytes.div_ceil(4032);
        assert_eq!(pkts * 4032, f.bytes, "whole packets keep the formula exact");
        let stretched = f.ideal_fct + Time((pkts - 1) * 63 * T);
        let j = f.fct().unwrap().checked_sub(stretched).unwrap_or_else(|| panic!("seed {seed}: earlier than paced"));
        assert!(j <= Time(64 * T), "seed {seed}: start jitter {j} ps beyond one gap");
        jitters.push(j);
    }
    assert!(jitters.iter().any(|&j| j > Time(10_000_000)), "no start later than 10 us in 12 seeds: {jitters:?}");
}

#[test]
fn after_an_idle_spell_the_schedule_resumes_without_a_burst() {
    // Two ranks on hosts 0 and 15 run two all-to-alls of one 100-packet message each way,
    // 100 us apart, paced at B/4 (flows_per_host = 4, no jitter). The second message is posted
    // on a connection idle since the first: its pacer resumes at the posting time (spec §2.0.2
    // `policy_wakeup`: max(now, next tick)) instead of sending at line rate until its stale
    // schedule catches up, so both messages take exactly as long.
    let r = common::run(
        "seed = 3\n[topology]\nk = 4\nlink_rate_gbps = 100\n[transport.cc]\nname = \"pacer\"\nflows_per_host = 4\n\
         start_jitter = false\n[run]\nmessage_log = true\n[workload]\nkind = \"collectives\"\nchunk = 403200\n\
         [[workload.jobs]]\nranks = 2\nplacement = \"strided\"\nstride = 15\ncollectives = [\
         { op = \"alltoall\", bytes = 806400, gap_us = 100 }, { op = \"alltoall\", bytes = 806400 } ]\n",
    );
    let from0: Vec<_> = r.messages.iter().filter(|m| m.src == 0).collect();
    assert_eq!(from0.len(), 2, "{:?}", r.messages);
    assert_eq!(from0[0].conn, from0[1].conn, "both messages on one connection");
    let took: Vec<u64> = from0.iter().map(|m| (m.completed.unwrap() - m.posted.unwrap()).0).collect();
    assert!(from0[1].posted.unwrap() > from0[0].completed.unwrap() + Time(50 * 1_000_000), "an idle spell between them");
    assert_eq!(took[0], took[1], "the second message is paced like the first");
    // 99 gaps of 4 T: the paced part dominates the time.
    assert!(took[0] > 99 * 4 * T && took[0] < 100 * 4 * T + 20_000_000, "{took:?}");
}

#[test]
fn gap_jitter_moves_each_departure_but_keeps_the_rate() {
    // Four flows of 64 packets from one host, no start jitter: exact gaps finish each flow on
    // its schedule (`extra` = 0, T, 2T, 3T). With every gap scaled by 1 + U(-0.5, 0.5) the
    // 63 gaps of a flow still sum to about 63 exact ones: within 8 % (≈ 5 gaps, 2.3 of them
    // being one standard deviation), yet no flow ends exactly on schedule.
    let exact = fan_out(1.0, false, 1);
    let jittered = flows(1, 4, 100, "rate_coefficient = 1.0\nstart_jitter = false\ngap_jitter = 0.5", "fan_out_4.csv");
    let gap = 4 * T;
    for (e, j) in exact.flows.iter().zip(&jittered.flows) {
        let (e, j) = (e.fct().unwrap(), j.fct().unwrap());
        assert_ne!(e, j, "a jittered flow leaves off its exact schedule");
        assert!(e.abs_diff(j) < Time(5 * gap + 4 * T), "{e} ps exact vs {j} ps jittered");
    }
    // Same seed, same draws.
    let again = flows(1, 4, 100, "rate_coefficient = 1.0\nstart_jitter = false\ngap_jitter = 0.5", "fan_out_4.csv");
    assert_eq!(jittered.flows_csv(), again.flows_csv());
}
