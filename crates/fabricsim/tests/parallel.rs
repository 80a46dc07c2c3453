//! The partitioned engine (`--threads N`, `engine::parallel`): how a fabric is cut, and runs
//! that end early (the end time, the livelock guard), wait (late starts, compute gaps) or
//! cannot be cut, each compared with the serial run byte for byte. (Every fingerprint case on
//! 2, 3 and 4 threads: `fingerprints.rs`.)
use fabricsim::units::Time;
mod common;

use fabricsim::engine::parallel::plan::{partitions_at_most, plan, Place};
use fabricsim::engine::Sim;
use fabricsim::workload::graph::TaskKind;
use fabricsim::{Results, Scenario, Setup};
use std::path::Path;

fn setup(toml: &str) -> Setup {
    Scenario::from_toml(toml, &[]).expect("valid scenario").setup(Path::new(".")).expect("setup")
}

fn run_on(toml: &str, threads: usize) -> Results {
    fabricsim::run_threads(&setup(toml), threads, &mut |_| {}, &Default::default()).expect("run")
}

/// Every output of a run but the wall-clock `performance` block.
fn outputs(r: &Results) -> Vec<String> {
    let mut summary: serde_json::Value = serde_json::from_str(&r.summary_json()).expect("summary.json parses");
    summary.as_object_mut().expect("an object").remove("performance");
    vec![summary.to_string(), r.flows_csv(), r.ccts_csv(), r.messages_csv()]
}

/// Runs `toml` serially and on each of `threads`, asserting that each ran that many partitions
/// and wrote the serial run's outputs; returns the serial results.
fn same_as_serial(toml: &str, threads: &[usize]) -> Results {
    let serial = run_on(toml, 1);
    assert_eq!(serial.summary.performance.partitions, 1);
    for &n in threads {
        let r = run_on(toml, n);
        assert_eq!(r.summary.performance.partitions, n, "{:?}", r.summary.performance.serial_reason);
        assert!(r.summary.performance.sync_windows > 0);
        check_cpu_figures(&r.summary.performance, n);
        let (a, b) = (outputs(&serial), outputs(&r));
        for (i, name) in ["summary.json", "flows.csv", "ccts.csv", "messages.csv"].iter().enumerate() {
            assert!(a[i] == b[i], "{name} differs on {n} threads:\nserial:   {}\nparallel: {}", &a[i][..a[i].len().min(600)], &b[i][..b[i].len().min(600)]);
        }
    }
    serial
}

/// A parallel run's CPU figures (Linux, where a thread's CPU time is reported): the critical
/// path takes the busiest partition of every round, so it is at least the mean partition's
/// share, and no more than the partitions' sum plus the coordinator's rounds (nothing else
/// runs in a round).
fn check_cpu_figures(perf: &fabricsim::results::Performance, n: usize) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let (Some(cpu), Some(critical)) = (perf.partition_cpu_seconds, perf.critical_path_seconds) else {
        panic!("a parallel run on Linux reports its CPU figures: {perf:?}");
    };
    assert!(cpu > 0.0 && critical > 0.0, "{perf:?}");
    assert!(critical >= cpu / n as f64 * (1.0 - 1e-9), "critical path {critical} s below the mean partition's {} s", cpu / n as f64);
    assert!(critical <= cpu + perf.wall_seconds, "critical path {critical} s beyond the partitions' {cpu} s and the run's wall time");
}

#[test]
fn a_fat_tree_is_cut_into_blocks_of_pods_with_cores_dealt_round_robin() {
    // k = 4: 16 hosts, 8 ToRs and 8 aggregation switches in 4 pods, 4 cores.
    let sim = Sim::new(&setup("[topology]\nk = 4\n")).expect("build");
    let f = sim.fabric();
    let p = plan(&sim, 2).expect("partitioned");
    assert_eq!(p.parts, 2);
    for h in 0..16 {
        // Hosts 0-7 hang from the ToRs of pods 0-1.
        assert_eq!(p.node_part[h], (h / 8) as u16, "host {h}");
    }
    let of_tier = |name: &str| -> Vec<u16> { (16..f.tier.len()).filter(|&n| f.tier_name(f.tier[n]) == name).map(|n| p.node_part[n]).collect() };
    assert_eq!(of_tier("tor"), [0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(of_tier("agg"), [0, 0, 0, 0, 1, 1, 1, 1], "an aggregation switch goes with its pod");
    assert_eq!(of_tier("core"), [0, 1, 0, 1], "cores see every pod alike: round-robin");
    // The lookahead is the cable delay (1 µs by default).
    assert_eq!(p.lookahead, Time(1_000_000));
    // More threads than ToRs: one partition per ToR.
    assert_eq!(plan(&sim, 64).expect("partitioned").parts, 8);
    assert_eq!(partitions_at_most(f, 64), 8, "what `run` counts memory for, before building");
    // A flow workload: every message runs at its sender.
    for (t, place) in p.task_place.iter().enumerate() {
        assert!(matches!(place, Place::Part(_)), "task {t}: {place:?}");
    }
}

#[test]
fn a_collective_sequence_gathers_its_end_at_the_coordinator() {
    let toml = "[topology]\nk = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 16\niterations = 2\ncompute_gap_us = 10\n\
                collectives = [{ op = \"allreduce\", bytes = \"256KiB\" }]\n";
    let sim = Sim::new(&setup(toml)).expect("build");
    let p = plan(&sim, 2).expect("partitioned");
    let count = |want: Place| p.task_place.iter().filter(|&&x| x == want).count();
    // The first instance's start fires everywhere; its end, and the second instance's start
    // (10 µs later, beyond the lookahead), at the coordinator.
    assert!(count(Place::Everywhere) >= 1);
    assert!(count(Place::Coordinator) >= 2);
    let r = same_as_serial(toml, &[2, 4]);
    assert_eq!(r.summary.collectives.as_ref().map(|c| c.finished), Some(2));
}

/// Found by the fuzzer (seed 7, case 5): a 2-rank job inside one partition beside an 8-rank
/// job across all of them. Its instances start in every partition (a start marker without
/// dependencies) and end in one: the merge must take the start and the end of an instance each
/// from where it was set.
#[test]
fn an_instance_that_ends_inside_one_partition_keeps_its_end() {
    let toml = "[topology]\nkind = \"leaf_spine\"\nk = 8\n[workload]\nkind = \"collectives\"\nchunk = \"4KiB\"\n\
                [[workload.jobs]]\nranks = 8\nplacement = \"random\"\niterations = 2\ncompute_gap_us = 2.0\n\
                collectives = [{ op = \"allgather\", algorithm = \"ring\", bytes = \"1MiB\" }]\n\
                [[workload.jobs]]\nranks = 2\niterations = 2\ncompute_gap_us = 2.0\n\
                collectives = [{ op = \"broadcast\", algorithm = \"ring\", bytes = \"256KiB\" }]\n";
    let r = same_as_serial(toml, &[2, 4]);
    assert_eq!(r.summary.collectives.as_ref().map(|c| c.finished), Some(4));
}

#[test]
fn the_livelock_guard_stops_a_parallel_run_at_the_serial_moment() {
    // The last hop of a lone flow dies at 20 µs (no re-routing): the guard fires 300 µs after
    // the last acknowledgement.
    let toml = "[topology]\nk = 4\nlink_rate_gbps = 100\n[transport]\nlb = \"ecmp\"\n[workload]\nkind = \"incast\"\nreceiver = 15\nsender_hosts = [0]\nflow_bytes = \"4MiB\"\n\
                [[link_events]]\nat_us = 20\nlink = \"tor7-host15\"\naction = \"down\"\n[run]\nstall_limit_us = 300\nend_time_us = 5000\n";
    let r = same_as_serial(toml, &[2, 3]);
    assert!(r.summary.stalled_since_us.is_some(), "the guard must fire");
}

#[test]
fn an_end_time_stops_a_parallel_run_at_the_same_event() {
    let toml = "[topology]\nk = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = \"1MiB\"\n[run]\nend_time_us = 15\n";
    let r = same_as_serial(toml, &[2, 4]);
    assert!(r.summary.stopped_at_end_time);
}

/// A stop asked through the flag (what Ctrl-C does to `fabricsim run`) ends a serial and a
/// partitioned run alike with partial results that say so, unfinished flows as such, and no
/// invariant reported broken for the packets still in flight.
#[test]
fn an_interrupt_gives_partial_results_marked_as_such_serial_or_partitioned() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let s = setup("[topology]\nk = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64MiB\"\n");
    for threads in [1, 2] {
        let stop = AtomicBool::new(false);
        let mut calls = 0;
        let r = fabricsim::run_threads(&s, threads, &mut |_| {
            calls += 1;
            if calls == 2 {
                stop.store(true, Ordering::Relaxed);
            }
        }, &stop)
        .expect("partial results");
        let sum = &r.summary;
        assert_eq!(sum.performance.partitions, threads, "{:?}", sum.performance.serial_reason);
        assert!(sum.interrupted && !sum.stopped_at_end_time && sum.stalled_since_us.is_none());
        assert!(sum.interrupted_at_us.is_some_and(|t| t > 0.0), "{:?}", sum.interrupted_at_us);
        assert_eq!((sum.flows, sum.flows_finished), (16, 0));
        assert!(sum.invariant_violations.is_empty(), "{:?}", sum.invariant_violations);
        assert!(sum.packets.data_sent > 0);
    }
}

#[test]
fn late_starts_and_compute_gaps_longer_than_the_stall_limit_are_waited_out() {
    same_as_serial("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nsenders = 6\nflow_bytes = \"64KiB\"\nstart_us = 1000\n[run]\nstall_limit_us = 50\n", &[2]);
    same_as_serial(
        "[topology]\nk = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 16\niterations = 3\ncompute_gap_us = 200\n\
         collectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]\n[run]\nstall_limit_us = 50\n",
        &[2, 3],
    );
}

#[test]
fn a_lossless_fabric_passes_pause_frames_between_partitions() {
    // RoCE, a 12-to-1 incast: pauses spread up from the receiver's ToR into other partitions.
    let toml = format!(
        "[topology]\nk = 4\n{}{}[workload]\nkind = \"incast\"\nreceiver = 15\nsenders = 12\nflow_bytes = \"256KiB\"\n",
        common::ROCE_SWITCH,
        common::ROCE_TRANSPORT
    );
    let r = same_as_serial(&toml, &[2, 4]);
    assert!(r.summary.pfc.as_ref().is_some_and(|p| p.pause_frames > 0), "the case must pause");
}

#[test]
fn runs_whose_state_is_shared_without_a_packet_stay_serial_and_say_why() {
    const BASE: &str = "[topology]\nk = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n";
    for (extra, why) in [
        ("[transport]\ncc = \"line_rate\"\ncredit = \"eqds\"\n", "credits"),
        ("[transport]\nreliability = \"code\"\n", "receiver's word"),
        ("[run]\ntrace_interval_us = 1\ntrace_ports = [\"tor0-host0\"]\n", "tracing"),
        ("[[run.drop_packets]]\nflow = 0\nseq = 3\nhold_us = 5\n", "drop_packets"),
    ] {
        let toml = format!("{BASE}{extra}");
        let r = run_on(&toml, 2);
        let perf = &r.summary.performance;
        assert_eq!((perf.partitions, perf.sync_windows), (1, 0), "{extra}");
        assert_eq!((perf.partition_cpu_seconds, perf.critical_path_seconds), (None, None), "{extra}: a serial run has no parallel rounds");
        assert!(perf.serial_reason.as_deref().is_some_and(|s| s.contains(why)), "{extra}: {:?}", perf.serial_reason);
        assert_eq!(outputs(&r), outputs(&run_on(&toml, 1)));
    }
    // Collectives back to back (no compute gap): an instance's end starts the next at once in
    // every partition, closer than any lookahead.
    let back_to_back = "[topology]\nk = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 16\niterations = 2\n\
                        collectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]\n";
    let r = run_on(back_to_back, 2);
    assert!(r.summary.performance.serial_reason.as_deref().is_some_and(|s| s.contains("lookahead")), "{:?}", r.summary.performance.serial_reason);
    // Found by the fuzzer (seed 1, cases 299 and 407): with coalesced ACKs a receiver
    // acknowledges at once when it holds all its sender has posted, read from the sender's
    // state. One message per connection: partitioned; several: serial.
    let coalesced = format!("{BASE}[transport]\nack_every = 4\n");
    assert_eq!(run_on(&coalesced, 2).summary.performance.partitions, 2);
    let several = "[topology]\nk = 4\n[transport]\nack_every = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 16\niterations = 2\ncompute_gap_us = 10\n\
                   collectives = [{ op = \"allreduce\", bytes = \"256KiB\" }]\n";
    let r = run_on(several, 2);
    assert!(r.summary.performance.serial_reason.as_deref().is_some_and(|s| s.contains("coalescing")), "{:?}", r.summary.performance.serial_reason);
    assert_eq!(outputs(&r), outputs(&run_on(several, 1)));
    // One thread asked: serial, no reason needed.
    assert_eq!(run_on(BASE, 1).summary.performance.serial_reason, None);
}

#[test]
fn zero_threads_is_refused_naming_the_key() {
    let e = fabricsim::run_threads(&setup("[topology]\nk = 4\n"), 0, &mut |_| {}, &Default::default()).err().expect("refused");
    assert!(e.to_string().contains("threads"), "{e}");
}

#[test]
fn switch_selectors_that_feed_back_in_packets_run_partitioned() {
    // CONGA's leaf-to-leaf feedback and SeqBalance's Congestion Packets ride on packets, so
    // they cross partitions as packets do (on a RoCE leaf-spine of 4 leaves and 4 spines).
    for lb in ["conga", "seqbalance"] {
        let fabric = common::roce_leaf_spine(3, (4, 4, 4), &format!("[switch.lb]\nname = \"{lb}\""), "");
        let toml = format!("{fabric}[workload]\nkind = \"permutation\"\nflow_bytes = \"1MiB\"\nlocality = \"cross_tor\"\n");
        same_as_serial(&toml, &[2, 4]);
    }
}

#[test]
fn a_training_step_runs_partitioned_by_rails() {
    // Megatron's default order on a rail-optimized fabric of 4 units of 2 servers × 2 GPUs
    // (tp 2 × pp 4 × dp 2): each stage's servers fill one unit, its DP rings stay under a rail
    // leaf and the pipeline's messages cross between units on their rail. The run is cut by
    // rail (on 4 threads a rail's leaves dealt over 2 partitions, every other unit in one),
    // servers and all: the
    // analytic TP collectives join a server's GPUs at the coordinator and end a collective's
    // time later, beyond the lookahead, so a pipeline's message keeps both rails' partitions
    // busy where a cut into units would leave the other units idle.
    let toml = "[topology]\nkind = \"rail_optimized\"\ntiers = 3\nservers_per_su = 2\nservers = 8\n\
                [topology.server]\ngpus = 2\nscale_up_gbps = 3600\n\
                [workload]\nkind = \"training\"\nchunk = \"64KiB\"\n\
                model = { layers = 4, hidden = 512, heads = 8, seq = 256, vocab = 1024, micro_batch = 1, global_batch = 8 }\n\
                parallelism = { tp = 2, pp = 4, dp = 2, tp_network = \"analytic\" }\n";
    let s = setup(toml);
    let sim = Sim::new(&s).expect("build");
    let p = plan(&sim, 4).expect("a training step in the default order can be cut");
    for h in 0..16u32 {
        // GPU h is on rail h % 2 of unit h / 4: rail 0 in partitions 0-1, rail 1 in 2-3.
        let (rail, unit) = (h % 2, h / 4);
        assert_eq!(p.node_part[h as usize], (rail * 2 + unit % 2) as u16, "gpu{h}");
    }
    // A TP collective's start that waits for the pipeline's messages (one per rail) joins
    // its server's GPUs at the coordinator; its end, a collective's time later, fires in every
    // partition, and the compute steps after it do too, until the next message: the GPUs'
    // streams do not go to the coordinator.
    let kinds_at = |place: Place| -> Vec<TaskKind> { (0..p.task_place.len()).filter(|&t| p.task_place[t] == place).map(|t| s.traffic.tasks[t].kind()).collect() };
    assert!(kinds_at(Place::Coordinator).iter().any(|k| matches!(k, TaskKind::Begin(_))));
    assert!(kinds_at(Place::Coordinator).len() < p.task_place.len() / 8, "{} of {} tasks at the coordinator", kinds_at(Place::Coordinator).len(), p.task_place.len());
    // A unit's spines see its rails' partitions alike: dealt over them, not piled on the first
    // (which gave rail 0's partitions four times the events of the others on a 2048-GPU step).
    let f = sim.fabric();
    let mut spines = vec![0; p.parts];
    for n in 0..f.tier.len() {
        if f.tier_name(f.tier[n]) == "agg" {
            spines[p.node_part[n] as usize] += 1;
        }
    }
    assert_eq!(spines, [2, 2, 2, 2]);
    // More threads: one partition per leaf.
    assert_eq!(plan(&sim, 16).expect("cut by leaf").parts, 8);
    assert_eq!(partitions_at_most(sim.fabric(), 16), 8);
    let serial = same_as_serial(toml, &[2, 4, 8]);
    let it = &serial.summary.training.as_ref().expect("a training block").iterations[0];
    assert!(it.time_us.is_some(), "the step finished");
    // In the tp-pp-dp order a replica's stages share a unit and its DP rings cross the
    // units; this step is cut too, and gives the serial outputs. (At 8192 GPUs a 64-GPU
    // ring's first messages follow a join of every replica without delay: that one stays
    // serial, experiments/training/RESULTS.md.)
    let order = toml.replace("tp_network = \"analytic\" }", "tp_network = \"analytic\", order = \"tp-pp-dp\" }");
    same_as_serial(&order, &[2, 4, 8]);
    // With TP as packets on the scale-up domain, a compute step is followed at once by a
    // message there: the cut by rail is refused, and the servers are kept whole (the units).
    let packets = toml.replace("tp_network = \"analytic\"", "tp_network = \"packets\"");
    let sim = Sim::new(&setup(&packets)).expect("build");
    let p = plan(&sim, 16).expect("cut into the units");
    assert_eq!(p.parts, 4);
    for h in 0..16u32 {
        assert_eq!(p.node_part[h as usize], (h / 4) as u16, "gpu{h}");
    }
    same_as_serial(&packets, &[4]);
}
