//! The text `fabricsim` prints: the one-screen summary after `run` and the switch-buffer lines
//! of `check`. Built as lines from the library's figures (not printed directly) so that tests
//! can read them.
//!
//! The summary shows what each setup's users look for and nothing that is zero: drops (by
//! packet kind and cause), trims and timeouts only when they happened, so a lossless run stays
//! short; PFC runs always get their pause line. A run cut short says so and never shows a
//! completion, FCT or slowdown figure of 0.000 for flows that did not finish.

use fabricsim::net::pfc::{PfcModel, XoffRule};
use fabricsim::results::{Stats, Summary};
use fabricsim::scenario::Setup;

/// Label column width: every line is `label` padded to this, then the figures.
const LABEL: usize = 12;

fn line(label: &str, text: impl std::fmt::Display) -> String {
    format!("{label:<LABEL$}{text}")
}

/// `text` if `n` is not zero.
fn nonzero(n: u64, text: String) -> Option<String> {
    (n > 0).then_some(text)
}

/// The summary printed after a run (without the trailing `results DIR` line).
pub fn summary_lines(s: &Summary) -> Vec<String> {
    let mut out = vec![line("fabric", &s.fabric)];
    let all_finished = s.flows_finished == s.flows;
    out.push(line(
        "flows",
        if s.stopped_at_end_time {
            format!("stopped at end_time: {} of {} flows finished (run.end_time_us)", s.flows_finished, s.flows)
        } else if s.interrupted {
            format!("interrupted: {} of {} flows finished", s.flows_finished, s.flows)
        } else {
            format!("{} finished of {}", s.flows_finished, s.flows)
        },
    ));
    if let Some(since) = s.stalled_since_us {
        out.push(line("stalled", format!("nothing acknowledged since {since:.3} us: the livelock guard stopped the run (run.stall_limit_us)")));
    }
    // The completion time runs to the last finish, which is not the run's end when flows are
    // left over; the ideal stays meaningful either way.
    let ideal = format!("ideal {:.3} us", s.ideal_completion_time_us);
    out.push(line(
        "completion",
        if all_finished {
            format!("{:.3} us ({ideal})", s.completion_time_us)
        } else {
            format!("– ({} of {} flows unfinished; {ideal})", s.flows - s.flows_finished, s.flows)
        },
    ));
    // FCT and slowdown count the finished flows (of the stationary window, if one is set).
    let counted = s.stationary_window.as_ref().map_or(s.flows_finished, |w| w.flows_finished);
    let of = if all_finished { String::new() } else { format!("  (over the {counted} finished flows)") };
    let figures = |unit: &str, st: &Stats| {
        if counted == 0 {
            "– (no flow finished)".to_string()
        } else {
            format!("p50 {:.3}{unit}  p99 {:.3}{unit}  max {:.3}{unit}{of}", st.p50, st.p99, st.max)
        }
    };
    out.push(line("fct", figures(" us", &s.fct_us)));
    out.push(line("slowdown", figures("", &s.slowdown)));
    if let Some(fair) = &s.fair_slowdown {
        // Only where sharing is what the idle ideal leaves out: the two differ.
        if fair.max != s.slowdown.max || fair.p50 != s.slowdown.p50 {
            out.push(line("fair share", format!("{}  (slowdown against each flow's max-min share of its host links)", figures("", fair))));
        }
    }
    if let Some(c) = &s.collectives {
        let cct = if c.finished == 0 {
            "CCT – (none finished)".to_string()
        } else {
            format!("CCT p50 {:.3} us  max {:.3} us; normalized p50 {:.3}  max {:.3}", c.cct_us.p50, c.cct_us.max, c.normalized_cct.p50, c.normalized_cct.max)
        };
        out.push(line("collectives", format!("{} of {} finished ({} jobs); {cct}", c.finished, c.instances, c.jobs)));
    }
    let p = &s.packets;
    let marks = if p.ecn_mark_events > p.ecn_marked { format!(" ({} markings over all hops)", p.ecn_mark_events) } else { String::new() };
    out.push(line("packets", format!("{} data sent, {} retransmitted, {} ECN-marked{marks}", p.data_sent, p.retransmitted, p.ecn_marked)));
    out.extend(drops_line(s));
    out.extend(nonzero(p.trimmed, line("trims", trims_text(s))));
    out.extend(nonzero(p.timeouts, line("timeouts", format!("{} retransmission timer expiries declared {} data packets lost", p.timeouts, p.timeout_lost))));
    if let Some(pfc) = &s.pfc {
        let worst = if pfc.max_paused_port.is_empty() {
            String::new()
        } else {
            format!("; worst port {} paused {:.3} us", pfc.max_paused_port, pfc.max_port_paused_us)
        };
        out.push(line(
            "pfc",
            format!(
                "{} pause frames, {} ports paused for {:.3} us in total{worst}; deepest switch buffer {} B",
                pfc.pause_frames, pfc.ports_paused, pfc.paused_time_us, pfc.max_switch_buffer_bytes
            ),
        ));
    }
    let perf = &s.performance;
    out.push(line(
        "speed",
        format!(
            "{:.3} s wall, {} events ({:.2} M/s), {} packet-hops ({:.2} M/s), peak RSS {}",
            perf.wall_seconds,
            s.events,
            perf.events_per_second / 1e6,
            p.packet_hops,
            perf.packet_hops_per_second / 1e6,
            perf.peak_rss_bytes.map(|b| format!("{:.1} MB", b as f64 / 1e6)).unwrap_or_else(|| "n/a".into())
        ),
    ));
    out
}

/// Drops by packet kind, then by the causes the summary tells apart; None when nothing was
/// dropped. Wire losses are of any kind and already among the kinds' drops.
fn drops_line(s: &Summary) -> Option<String> {
    let p = &s.packets;
    let overflow = s.pfc.as_ref().map_or(0, |f| f.headroom_overflow_drops);
    let wire = p.wire_losses.unwrap_or(0);
    let kinds: Vec<String> = [(p.dropped, "data"), (p.control_dropped, "control (ACKs, NACKs, headers, ...)")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if kinds.is_empty() {
        return None;
    }
    let buffer = match overflow {
        0 => format!("{} data for lack of buffer", p.buffer_drops),
        h => format!("{} data for lack of buffer ({h} of them PFC headroom overflow)", p.buffer_drops),
    };
    let causes: Vec<String> = [nonzero(p.buffer_drops, buffer), nonzero(wire, format!("{wire} lost on the wire (flaky or lossy links)"))].into_iter().flatten().collect();
    let causes = if causes.is_empty() { String::new() } else { format!("; {}", causes.join(", ")) };
    Some(line("drops", format!("{}{causes}", kinds.join(", "))))
}

fn trims_text(s: &Summary) -> String {
    let p = &s.packets;
    let bounced = if p.bounced > 0 { format!(", {} headers returned to their sender ({} arrived)", p.bounced, p.bounces_returned) } else { String::new() };
    format!("{} data packets trimmed{bounced}", p.trimmed)
}

/// `lo` or `lo..hi` bytes.
fn bytes_range((lo, hi): (u64, u64)) -> String {
    if lo == hi {
        format!("{lo} B")
    } else {
        format!("{lo}..{hi} B")
    }
}

/// The PFC buffer model for `check`; empty when PFC is off.
pub fn pfc_lines(setup: &Setup) -> Vec<String> {
    let Some(m): Option<PfcModel> = setup.pfc.model() else { return Vec::new() };
    let cfg = &setup.scenario.switch.pfc;
    let label = |first: bool| if first { "PFC" } else { "" };
    let buffer_from = match &cfg.buffer_bytes {
        Some(_) => "switch.pfc.buffer_bytes".to_string(),
        None => format!("{} MB per Tb/s of switch capacity", cfg.buffer_mb_per_tbps),
    };
    let threshold = match m.xoff {
        XoffRule::Dynamic { alpha } => format!("alpha = {alpha} × the free shared pool (dynamic threshold)"),
        XoffRule::Static { xoff_bytes } => format!("{xoff_bytes} B (static threshold)"),
    };
    let headroom_from = if cfg.headroom_bytes.is_some() { "switch.pfc.headroom_bytes" } else { "2 × link delay × rate + 2 MTU + 2 PFC frames" };
    [
        format!("lossless data class; shared buffer per switch {} ({buffer_from}), shared pool {} after headroom", bytes_range(m.switch_buffer), bytes_range(m.shared_pool)),
        format!("XOFF when an ingress port's shared bytes reach {threshold}, or it spills into its headroom"),
        format!("XON when its headroom is empty and its shared bytes are {} B (resume offset) below the threshold", m.resume_offset),
        format!("headroom {} per ingress port ({headroom_from})", bytes_range(m.headroom)),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, t)| format!("{:<14}{t}", label(i == 0)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The bundled example on a k = 4 fat tree (16 hosts, one 2 MiB flow each, lossless), with
    /// `sets` as `--set` overrides.
    fn setup(sets: &[&str]) -> Setup {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/example.toml");
        let sets: Vec<String> = ["topology.k=4"].iter().chain(sets).map(|s| s.to_string()).collect();
        fabricsim::scenario::load(&example, &sets).unwrap()
    }

    fn summary(sets: &[&str]) -> Summary {
        fabricsim::run(&setup(sets), &mut |_| {}).unwrap().summary
    }

    /// PFC on (trimming off, as PFC requires).
    const PFC: [&str; 2] = ["switch.trimming=false", "switch.pfc.enabled=true"];

    fn find<'a>(lines: &'a [String], label: &str) -> Option<&'a String> {
        lines.iter().find(|l| l.split_whitespace().next() == Some(label))
    }

    #[test]
    fn a_lossless_run_prints_no_drop_trim_timeout_or_pfc_lines() {
        let lines = summary_lines(&summary(&[]));
        for label in ["drops", "trims", "timeouts", "pfc", "stalled"] {
            assert!(find(&lines, label).is_none(), "{label}: {lines:#?}");
        }
        assert_eq!(find(&lines, "flows").unwrap(), "flows       16 finished of 16");
        assert!(find(&lines, "completion").unwrap().contains(" us (ideal "), "{lines:#?}");
        assert!(find(&lines, "packets").unwrap().ends_with("0 retransmitted, 0 ECN-marked"), "{lines:#?}");
    }

    #[test]
    fn losses_print_by_kind_and_cause_only_when_nonzero() {
        let mut s = summary(&[]);
        let p = &mut s.packets;
        (p.dropped, p.buffer_drops, p.control_dropped, p.wire_losses, p.trimmed, p.timeouts, p.timeout_lost) = (12, 9, 4, Some(5), 7, 3, 40);
        (p.bounced, p.bounces_returned) = (2, 1);
        let lines = summary_lines(&s);
        assert_eq!(
            find(&lines, "drops").unwrap(),
            "drops       12 data, 4 control (ACKs, NACKs, headers, ...); 9 data for lack of buffer, 5 lost on the wire (flaky or lossy links)"
        );
        assert_eq!(find(&lines, "trims").unwrap(), "trims       7 data packets trimmed, 2 headers returned to their sender (1 arrived)");
        assert_eq!(find(&lines, "timeouts").unwrap(), "timeouts    3 retransmission timer expiries declared 40 data packets lost");
        // Only control drops: no cause clause.
        let p = &mut s.packets;
        (p.dropped, p.buffer_drops, p.wire_losses, p.trimmed, p.timeouts) = (0, 0, None, 0, 0);
        let lines = summary_lines(&s);
        assert_eq!(find(&lines, "drops").unwrap(), "drops       4 control (ACKs, NACKs, headers, ...)");
        assert!(find(&lines, "trims").is_none() && find(&lines, "timeouts").is_none());
    }

    #[test]
    fn pfc_runs_print_pauses_the_worst_port_and_headroom_overflows() {
        let mut s = summary(&PFC);
        let pfc = s.pfc.as_mut().expect("a PFC summary");
        // A permutation on a full-bisection fabric: nothing pauses.
        assert_eq!(pfc.pause_frames, 0);
        let lines = summary_lines(&s);
        assert!(find(&lines, "pfc").unwrap().starts_with("pfc         0 pause frames, 0 ports paused for 0.000 us in total; deepest switch buffer "), "{lines:#?}");
        let pfc = s.pfc.as_mut().unwrap();
        (pfc.pause_frames, pfc.ports_paused, pfc.paused_time_us, pfc.max_paused_port, pfc.max_port_paused_us) = (17, 3, 45.5, "tor0-spine0".into(), 20.25);
        pfc.headroom_overflow_drops = 2;
        (s.packets.dropped, s.packets.buffer_drops) = (2, 2);
        let lines = summary_lines(&s);
        let l = find(&lines, "pfc").unwrap();
        assert!(l.starts_with("pfc         17 pause frames, 3 ports paused for 45.500 us in total; worst port tor0-spine0 paused 20.250 us;"), "{l}");
        assert_eq!(find(&lines, "drops").unwrap(), "drops       2 data; 2 data for lack of buffer (2 of them PFC headroom overflow)");
    }

    #[test]
    fn a_run_stopped_at_end_time_says_so_and_shows_no_zero_figures() {
        // 2 MiB at 400 Gb/s take over 40 µs: at 1 µs nothing has finished.
        let s = summary(&["run.end_time_us=1"]);
        assert!(s.stopped_at_end_time && s.flows_finished == 0);
        let lines = summary_lines(&s);
        assert_eq!(find(&lines, "flows").unwrap(), "flows       stopped at end_time: 0 of 16 flows finished (run.end_time_us)");
        let completion = find(&lines, "completion").unwrap();
        assert!(completion.starts_with("completion  – (16 of 16 flows unfinished; ideal "), "{completion}");
        assert_eq!(find(&lines, "fct").unwrap(), "fct         – (no flow finished)");
        assert_eq!(find(&lines, "slowdown").unwrap(), "slowdown    – (no flow finished)");
        assert!(!lines[..5].iter().any(|l| l.contains("0.000")), "{lines:#?}");
        // One finished: figures over that one, said so.
        let mut s = s;
        s.flows_finished = 1;
        let lines = summary_lines(&s);
        assert!(find(&lines, "fct").unwrap().ends_with("(over the 1 finished flows)"), "{lines:#?}");
        assert!(find(&lines, "completion").unwrap().contains("15 of 16 flows unfinished"), "{lines:#?}");
    }

    #[test]
    fn check_prints_the_pfc_buffer_model() {
        assert!(pfc_lines(&setup(&[])).is_empty());
        let lines = pfc_lines(&setup(&[PFC.as_slice(), &["switch.pfc.buffer_bytes=1000000", "switch.pfc.headroom_bytes=20000", "switch.pfc.resume_offset_bytes=4096"]].concat()));
        assert_eq!(
            lines,
            [
                "PFC           lossless data class; shared buffer per switch 1000000 B (switch.pfc.buffer_bytes), shared pool 920000 B after headroom",
                "              XOFF when an ingress port's shared bytes reach alpha = 0.125 × the free shared pool (dynamic threshold), or it spills into its headroom",
                "              XON when its headroom is empty and its shared bytes are 4096 B (resume offset) below the threshold",
                "              headroom 20000 B per ingress port (switch.pfc.headroom_bytes)",
            ]
        );
        let lines = pfc_lines(&setup(&[PFC.as_slice(), &["switch.pfc.threshold=static", "switch.pfc.xoff_bytes=50000"]].concat()));
        assert!(lines[0].contains("(5 MB per Tb/s of switch capacity)"), "{lines:#?}");
        assert!(lines[1].contains("reach 50000 B (static threshold)"), "{lines:#?}");
        assert!(lines[3].contains("(2 × link delay × rate + 2 MTU + 2 PFC frames)"), "{lines:#?}");
    }
}
