//! The fair-share ideal (`flows.csv` `fair_ideal_fct_us`, `summary.json` `fair_slowdown`): the
//! analytic answer of an incast, no change where no host link is shared, and the reading it
//! exists for — in an all-to-all the idle-fabric slowdown ranks ECMP level with REPS (each
//! flow's idle ideal assumes it runs alone) although ECMP finishes the exchange later; against
//! each flow's fair share the order is the completion's.
use fabricsim::units::Time;
mod common;

use std::path::Path;

fn example(sets: &[&str]) -> fabricsim::Results {
    bundled("example.toml", sets)
}

/// A bundled scenario (`scenarios/NAME`) with `sets` applied, run with its invariants checked.
fn bundled(name: &str, sets: &[&str]) -> fabricsim::Results {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let setup = fabricsim::scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name), &sets).expect("scenario");
    let r = fabricsim::run(&setup, &mut |_| {}).expect("run");
    fabricsim::check_invariants(&r).expect("invariants");
    r
}

#[test]
fn an_incasts_fair_ideal_adds_the_other_senders_bytes_at_line_rate() {
    // 8 × 1 MiB into one host at 400 Gb/s: in the fluid model the receiver's link carries all
    // 8 flows' wire bytes, so each flow's fair ideal is its idle ideal plus 7 flows' bytes.
    let r = example(&["workload.kind=\"incast\"", "workload.senders=8", "workload.receiver=5", "workload.flow_bytes=\"1MiB\""]);
    let packets = (1u64 << 20).div_ceil(4032);
    let others = common::tx_ps(7 * ((1u64 << 20) + 64 * packets), 400);
    for f in &r.flows {
        let fair = f.fair_ideal_fct.expect("a batch workload has a fair-share ideal");
        assert!(fair.abs_diff(f.ideal_fct + Time(others)) <= Time(2), "flow {}: fair {fair} ps, ideal {} + {others}", f.id, f.ideal_fct);
        // Fixed windows into ample buffers share the link about fairly.
        let s = f.fair_slowdown().unwrap();
        assert!((0.95..1.15).contains(&s), "flow {}: fair slowdown {s}", f.id);
    }
    let fair = r.summary.fair_slowdown.as_ref().expect("summary figure");
    assert!(fair.max < r.summary.slowdown.p50, "{fair:?} vs {:?}", r.summary.slowdown);
}

#[test]
fn a_permutation_shares_no_host_link_and_keeps_its_idle_ideal() {
    let r = example(&[]);
    assert!(r.flows.iter().all(|f| f.fair_ideal_fct == Some(f.ideal_fct)));
    // A run that turns it off has none, and neither has a collective workload, even when
    // asked (its messages wait for one another: no fluid start-to-end model fits).
    let coll = bundled("collectives.toml", &["results.fair_share=\"on\""]);
    assert!(coll.flows.iter().all(|f| f.fair_ideal_fct.is_none()) && coll.summary.fair_slowdown.is_none());
    let off = example(&["results.fair_share=\"off\""]);
    assert!(off.flows.iter().all(|f| f.fair_ideal_fct.is_none()) && off.summary.fair_slowdown.is_none());
    assert!(!off.flows_csv().lines().next().unwrap().contains("fair_"));
    assert!(r.flows_csv().lines().next().unwrap().ends_with(",fair_ideal_fct_us,fair_slowdown"));
}

#[test]
fn in_an_all_to_all_the_fair_share_slowdown_orders_schemes_as_completion_does() {
    let run = |lb: &str| example(&["workload.kind=\"all_to_all\"", "workload.flow_bytes=\"64KiB\"", &format!("transport.lb=\"{lb}\"")]);
    let (ecmp, reps) = (run("ecmp"), run("reps"));
    let (e, r) = (&ecmp.summary, &reps.summary);
    // ECMP's collisions make the exchange clearly later ...
    assert!(e.completion_time_us > 1.05 * r.completion_time_us, "{} vs {} us", e.completion_time_us, r.completion_time_us);
    // ... which the idle-fabric p99 slowdown does not show (within 1 % either way) ...
    assert!((e.slowdown.p99 / r.slowdown.p99 - 1.0).abs() < 0.01, "{} vs {}", e.slowdown.p99, r.slowdown.p99);
    // ... and the fair-share one does.
    let (ef, rf) = (e.fair_slowdown.as_ref().unwrap(), r.fair_slowdown.as_ref().unwrap());
    assert!(ef.p99 > 1.05 * rf.p99, "fair p99 {} vs {}", ef.p99, rf.p99);
}
