//! Scenario checks of the load-balancing study's host framework (lb-ai-training §2.0, §5, T0)
//! with analytic answers: one paced flow on an idle fabric finishes at its ideal under every
//! load-balancing × loss-recovery pair; spraying beats ECMP on a permutation.
mod common;

use fabricsim::Results;

/// 100 Gb/s serialization of a full 4096 B packet, ps.
const P: fabricsim::units::Time = fabricsim::units::Time(327_680);

/// Load balancing of the study (paper §2.1): (name, `[transport] lb`, `[switch] lb`).
const LB: &[(&str, &str, &str)] = &[
    ("ecmp", "\"ecmp\"", "ecmp"),
    ("spray", "\"spray\"", "ecmp"),
    ("srr", "\"ecmp\"", "round_robin"),
    ("sar_pkt", "\"ecmp\"", "adaptive_packet"),
    ("sar_flowlet", "\"ecmp\"", "flowlet"),
    ("sar_ecmp", "\"ecmp\"", "adaptive_ecmp"),
    ("hflowlet", "\"host_flowlet\"", "ecmp"),
    ("ecmp_sub2", "{ name = \"ecmp_subflows\", subflows = 2 }", "ecmp"),
];

/// Loss recovery of the study (paper §2.3): (name, `[transport.reliability]`, extra `[switch]`
/// lines, `[switch.pfc]` lines).
const LR: &[(&str, &str, &str, &str)] = &[
    ("code0", "name = \"code\"", "trimming = false\ncontrol_lane = \"separate\"", ""),
    ("tcp", "name = \"tcp\"", "trimming = false\ncontrol_lane = \"separate\"", ""),
    ("tcp_dinf", "name = \"tcp\"\nfast_retransmit = false", "trimming = false\ncontrol_lane = \"separate\"", ""),
    (
        "roce",
        "name = \"go_back_n\"\nnack_repeat = \"base_rtt\"",
        "trimming = false\ncontrol_lane = \"separate\"",
        "enabled = true\nthreshold = \"static\"\nxoff_bytes = \"32KiB\"\nresume_offset_bytes = \"4KiB\"",
    ),
    ("subtcp3", "name = \"subflow_tcp\"", "trimming = false\ncontrol_lane = \"separate\"", ""),
    ("subtcp6", "name = \"subflow_tcp\"\nd = 6", "trimming = false\ncontrol_lane = \"separate\"", ""),
    ("trim", "name = \"trim\"", "trimming = true\ncontrol_lane = \"shared\"", ""),
    ("trim_rts", "name = \"trim\"", "trimming = true\ncontrol_lane = \"shared\"\ntrimmed_headers = \"to_sender\"", ""),
];

/// The study's fabric (k = 8, 100 Gb/s, 1 µs links, Q = 32 KiB, 4096 B packets, ECN step at
/// 0.6·Q) with the fixed-rate pacer at `c` and `workload`.
fn study(lb: &(&str, &str, &str), lr: &(&str, &str, &str, &str), c: f64, workload: &str, seed: u64) -> String {
    let pfc = if lr.3.is_empty() { String::new() } else { format!("[switch.pfc]\n{}\n", lr.3) };
    format!(
        "seed = {seed}\n[topology]\nk = 8\nlink_rate_gbps = 100\nlink_latency_ns = 1000\nswitch_latency_ns = 0\n\
         [switch]\nbuffer_bytes = \"32KiB\"\necn_kmin = 0.6\necn_kmax = 0.6\nlb = \"{}\"\n{}\n{pfc}\
         [transport]\nmtu_bytes = 4096\nheader_bytes = 64\nlb = {}\n[transport.reliability]\n{}\n\
         [transport.cc]\nname = \"pacer\"\nrate_coefficient = {c}\n[workload]\n{workload}\n",
        lb.2, lr.2, lb.1, lr.1
    )
}

/// One 500-packet message (2,016,000 B of payload) host 0 → host 127.
const ONE_FLOW: &str = "kind = \"incast\"\nsender_hosts = [0]\nreceiver = 127\nflow_bytes = 2016000";

//= spec lb-ai-training.md T0 (single flow on an idle network: norm. CCT → 1.0 with every LB/LR combination)
#[test]
fn a_single_paced_flow_finishes_at_its_ideal_under_every_lb_and_loss_recovery() {
    for lb in LB {
        for lr in LR {
            let r: Results = common::run(&study(lb, lr, 1.0, ONE_FLOW, 1));
            let f = &r.flows[0];
            let fct = f.fct().unwrap_or_else(|| panic!("{} × {}: unfinished", lb.0, lr.0));
            // Paced at exactly line rate (F = 1, c = 1): the ideal plus the start jitter
            // U(0, P/r) = one packet time at most; nothing lost, nothing resent.
            // Subflow TCP gives each of its S = 11 (d = 3) or 6 (d = 6) subflows ⌈500/S⌉
            // packets, and a finished subflow's pacing slots pass unused (LR-SUBTCP): S·⌈500/S⌉
            // − 500 slots (6 and 4) stay empty.
            let unused = match lr.0 {
                "subtcp3" => 11 * 500u64.div_ceil(11) - 500,
                "subtcp6" => 6 * 500u64.div_ceil(6) - 500,
                _ => 0,
            };
            assert!(fct >= f.ideal_fct && fct <= f.ideal_fct + (unused + 1) * P, "{} × {}: FCT {fct} ps, ideal {} ps + {unused} slots", lb.0, lr.0, f.ideal_fct);
            assert_eq!((f.data_lost, f.retransmits), (0, 0), "{} × {}", lb.0, lr.0);
            // Erasure coding sends new symbols until the final ACK is back (§2.3 LR-CODE): one
            // base RTT (14 µs ≈ 43 packet times) of them past the 500th.
            let sent = if lr.0.starts_with("code") { 500..=545 } else { 500..=500 };
            assert!(sent.contains(&f.data_sent), "{} × {}: {} data packets sent", lb.0, lr.0, f.data_sent);
            // Normalised by CCT_opt = 500 packets at line rate (§5.3), the base RTT is what is left.
            let norm = fct.0 as f64 / (500 * P).0 as f64;
            assert!((1.0..1.1).contains(&norm), "{} × {}: {norm}", lb.0, lr.0);
        }
    }
}

#[test]
fn with_five_percent_coding_overhead_a_single_flow_sends_five_percent_more() {
    // LR-CODE5: done at ⌈1.05 · 500⌉ = 525 distinct packets, paced at line rate.
    let code5 = ("code5", "name = \"code\"\nepsilon = 0.05", "trimming = false\ncontrol_lane = \"separate\"", "");
    let r = common::run(&study(&LB[1], &code5, 1.0, ONE_FLOW, 1));
    let f = &r.flows[0];
    assert!((525..=570).contains(&f.data_sent), "{}", f.data_sent);
    let extra = f.fct().unwrap() - f.ideal_fct;
    assert!((25 * P..=26 * P).contains(&extra), "{extra} ps past the 500-packet ideal");
}

//= spec lb-ai-training.md T7 (spraying is best for every m; ECMP dramatically worse at m = 1)
#[test]
fn spraying_beats_ecmp_on_a_paced_permutation() {
    // W-PERM(1) at full rate with ideal coding, 100-packet messages: ECMP flows that hash onto
    // one uplink share it and lose most of what they send; spraying spreads every flow.
    let perm = "kind = \"permutation\"\nmethod = \"shifts\"\npermutations = 1\nflow_bytes = 403200";
    let code0 = &LR[0];
    let mut worse = 0;
    for seed in 1..=3 {
        let cct = |lb| common::run(&study(lb, code0, 1.0, perm, seed)).summary.completion_time_us;
        let (ecmp, spray) = (cct(&LB[0]), cct(&LB[1]));
        // 100 packets at line rate are 32.8 µs; spraying stays within 2× of it.
        assert!(spray < 2.0 * 32.8 + 14.0, "seed {seed}: spray {spray} µs");
        assert!(spray < ecmp, "seed {seed}: spray {spray} µs vs ECMP {ecmp} µs");
        if spray < 0.6 * ecmp {
            worse += 1;
        }
    }
    assert!(worse >= 2, "ECMP should be far worse on most seeds");
}
