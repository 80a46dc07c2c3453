//! Training steps (`workload.kind = "training"`) against analytic answers: on a network far
//! faster than the compute the step takes its compute critical path, which for a pipeline
//! under 1F1B is (m + p − 1)·(t_f + t_b) (Narayanan et al., SC '21, §2.2.1); with the compute
//! made negligible a data-parallel step takes its gradient AllReduce, within the network
//! ideal's reach.
mod common;

/// A 16-host fat tree (k = 4) at 400 Gb/s with ample buffers, spraying, a 2-BDP window; the
/// rest of `[workload]` (kind `training`) from `workload`.
fn scenario(workload: &str) -> String {
    common::idle_fat_tree_16(1, &format!("kind = \"training\"\n{workload}"))
}

/// One iteration's figures.
fn iteration(r: &fabricsim::Results) -> &fabricsim::results::IterationFigures {
    &r.summary.training.as_ref().expect("training figures").iterations[0]
}

//= type=test
//# A 4-stage pipeline without TP or DP, 8 micro-batches, on GPUs slow enough (0.2 TFLOP/s)
//# that the 32 KiB activations cross the fabric in a few µs against ms of compute: the step
//# takes its compute critical path, and that is 1F1B's (m + p − 1)(t_f + t_b) with t_b = 2 t_f.
#[test]
fn a_pipeline_on_a_fast_network_takes_its_compute_critical_path() {
    let r = common::run(&scenario(
        "model = { layers = 8, hidden = 128, heads = 4, seq = 128, vocab = 1, global_batch = 8 }\n\
         parallelism = { pp = 4, dp = 1 }\ngpu = { tflops = 0.2, efficiency = 1.0 }",
    ));
    let it = iteration(&r);
    let (b, s, h) = (1.0, 128.0, 128.0);
    // Two layers per stage: 24bsh² + 4bs²h FLOPs each forward.
    let t_f = 2.0 * (24.0 * b * s * h * h + 4.0 * b * s * s * h) / 0.2e12 * 1e6;
    let analytic = (8.0 + 4.0 - 1.0) * 3.0 * t_f;
    // The logit layer (vocabulary 1) adds 2bsh·3 FLOPs per micro-batch: below 0.1 %.
    assert!((it.compute_ideal_us / analytic - 1.0).abs() < 1e-3, "compute ideal {} µs, 1F1B {analytic} µs", it.compute_ideal_us);
    let time = it.time_us.expect("finished");
    assert!(time >= it.network_ideal_us && it.network_ideal_us >= it.compute_ideal_us, "{it:?}");
    assert!(time < it.compute_ideal_us * 1.01, "{it:?}");
    // Its critical path is compute, but for the messages between stages on it.
    let path = it.critical_path.as_ref().expect("a critical path");
    assert!(path.compute_us > 0.99 * time && path.pp_us > 0.0, "{path:?}");
    assert!((path.compute_us + path.pp_us + path.wait_us - time).abs() < 1e-3, "{path:?} against {time}");
    // Every pass crossed between neighbouring stages: 2 × 3 boundaries × 8 micro-batches.
    let pp = r.summary.training.as_ref().unwrap().groups.iter().find(|g| g.group == "pp").expect("pp bytes");
    assert_eq!(pp.bytes, 2 * 3 * 8 * 128 * 128 * 2);
}

//= type=test
//# Eight data-parallel replicas of a model whose compute takes picoseconds: the step is its
//# one gradient bucket's ring AllReduce, at least the network ideal (the AllReduce's ideal
//# CCT) and within 15 % of it on an idle non-blocking fabric.
#[test]
fn data_parallel_without_compute_takes_its_allreduce() {
    let r = common::run(&scenario(
        "chunk = \"64KiB\"\nmodel = { layers = 2, hidden = 512, heads = 4, seq = 16, vocab = 64, global_batch = 8 }\n\
         parallelism = { dp = 8, bucket_params = 100000000 }\ngpu = { tflops = 1000000, efficiency = 1.0 }",
    ));
    let it = iteration(&r);
    assert!(it.compute_ideal_us < 0.01, "{it:?}");
    let dp: Vec<_> = r.ccts.iter().filter(|c| c.instance.group == "dp").collect();
    assert_eq!(dp.len(), 1);
    // 2 layers × 12h² + 2 × V·h weights, 2 bytes each.
    assert_eq!(dp[0].instance.bytes.0, (2 * 12 * 512 * 512 + 2 * 64 * 512) * 2);
    let time = it.time_us.expect("finished");
    assert!(time >= it.network_ideal_us && time < it.network_ideal_us * 1.15, "{it:?}");
    let ideal_us = dp[0].ideal.0 as f64 / 1e6;
    assert!((it.network_ideal_us - ideal_us).abs() < 0.01, "network ideal {} against the AllReduce's {ideal_us}", it.network_ideal_us);
    // Nothing hides the AllReduce: it is the critical path.
    let path = it.critical_path.as_ref().unwrap();
    assert!(path.dp_us > 0.99 * time && (path.compute_us + path.dp_us + path.wait_us - time).abs() < 1e-3, "{path:?}");
}

//= type=test
//# Tensor parallelism: 2 TP ranks AllReduce after attention and after the MLP, forward and
//# backward, plus the embedding's and the logit layer's: 4·l + 2 per micro-batch, each in
//# `ccts.csv` with its group; a second iteration repeats the first on an idle fabric.
#[test]
fn tensor_parallel_collectives_are_counted_and_iterations_repeat() {
    let r = common::run(&scenario(
        "iterations = 2\nmodel = { layers = 3, hidden = 256, heads = 4, seq = 64, vocab = 256, global_batch = 4 }\n\
         parallelism = { tp = 2, dp = 2 }",
    ));
    let t = r.summary.training.as_ref().unwrap();
    let tp = t.groups.iter().find(|g| g.group == "tp").unwrap();
    // 2 replicas × 2 micro-batches × (4·3 + 2) per iteration, 2 iterations.
    assert_eq!(tp.collectives, 2 * 2 * 2 * (4 * 3 + 2));
    assert!(r.ccts_csv().lines().next().unwrap().ends_with(",group"));
    let (a, b) = (t.iterations[0].time_us.unwrap(), t.iterations[1].time_us.unwrap());
    assert!((a / b - 1.0).abs() < 0.02, "iterations {a} and {b} µs");
    assert_eq!(t.iterations[0].compute_ideal_us, t.iterations[1].compute_ideal_us);
    // Each iteration's critical path adds up to its time, the second counted from the first's end.
    for it in &t.iterations {
        let p = it.critical_path.as_ref().unwrap();
        let sum = p.compute_us + p.tp_us + p.pp_us + p.dp_us + p.ep_us + p.wait_us;
        assert!((sum - it.time_us.unwrap()).abs() < 1e-3, "{it:?}");
        assert!(p.tp_us > 0.0 && p.compute_us > 0.0, "{p:?}");
    }
}

//= type=test
//# Expert parallelism: 8 replicas in two EP groups of 4, 4 experts (one per GPU), top-2. Each
//# MoE layer dispatches and combines its tokens by AllToAll in the forward pass and their
//# gradients in the backward (4 per layer and micro-batch, 6 with recomputation), each of
//# b·s·k·h values per GPU, (ep − 1)/ep of them crossing the fabric; the experts' gradients are
//# reduced across the two replicas holding the same experts. With compute at a negligible
//# cost the step is its AllToAlls one after another, then the reductions: at least its
//# network ideal, its exposed EP time the AllToAlls' CCTs of one group added up.
#[test]
fn expert_parallel_alltoalls_are_counted_and_exposed() {
    let r = common::run(&scenario(
        "chunk = \"64KiB\"\nmodel = { layers = 2, hidden = 256, heads = 4, seq = 128, vocab = 64, global_batch = 16, experts = 4, top_k = 2 }\n\
         parallelism = { dp = 8, ep = 4, recompute = true }\ngpu = { tflops = 1000000, efficiency = 1.0 }",
    ));
    let t = r.summary.training.as_ref().unwrap();
    let ep = t.groups.iter().find(|g| g.group == "ep").expect("EP figures");
    // 2 EP groups × 2 micro-batches × 2 layers × 6 AllToAlls.
    assert_eq!(ep.collectives, 2 * 2 * 2 * 6);
    let dispatch = 128 * 2 * 256 * 2;
    assert_eq!(ep.bytes, ep.collectives as u64 * 4 * 3 * (dispatch / 4));
    for c in r.ccts.iter().filter(|c| c.instance.group == "ep") {
        assert_eq!((c.instance.op, c.instance.ranks, c.instance.bytes.0), ("alltoall", 4, dispatch));
    }
    // Expert gradients: one expert per GPU, 2 × 256 × 1024 weights per layer, 2 layers in one
    // bucket, across the 2 replicas holding it (d and d + 4), for each of the 4 experts; the
    // dense weights across all 8.
    let dp: Vec<_> = r.ccts.iter().filter(|c| c.instance.group == "dp").map(|c| (c.instance.ranks, c.instance.bytes.0)).collect();
    assert_eq!(dp.iter().filter(|&&c| c == (2, 2 * 2 * 256 * 1024 * 2)).count(), 4, "{dp:?}");
    assert_eq!(dp.iter().filter(|c| c.0 == 8).count(), 1, "{dp:?}");
    let it = &t.iterations[0];
    let time = it.time_us.expect("finished");
    assert!(it.compute_ideal_us < 0.01, "{it:?}");
    assert!(time >= it.network_ideal_us, "{it:?}");
    let path = it.critical_path.as_ref().unwrap();
    // The two groups run alike: half of all the AllToAlls' time is one group's chain.
    let chain: f64 = r.ccts.iter().filter(|c| c.instance.group == "ep").map(|c| c.cct().unwrap().0 as f64 / 1e6).sum::<f64>() / 2.0;
    assert!((path.ep_us / chain - 1.0).abs() < 0.02 && path.ep_us > 0.5 * time, "{path:?} against a chain of {chain} µs");
    assert!((path.compute_us + path.tp_us + path.pp_us + path.dp_us + path.ep_us + path.other_us + path.wait_us - time).abs() < 1e-3, "{path:?}");
    // EP must divide the replicas and the experts.
    let e = common::rejection(&scenario("model = { layers = 2, hidden = 128, heads = 4, seq = 32, vocab = 64, global_batch = 8, experts = 6 }\nparallelism = { dp = 8, ep = 4 }"));
    assert!(e.contains("workload.parallelism.ep") && e.contains("must divide"), "{e}");
}

#[test]
fn bad_training_shapes_are_refused_naming_the_key() {
    let e = common::rejection(&scenario("model = { heads = 6, hidden = 96 }\nparallelism = { tp = 4 }"));
    assert!(e.contains("workload.parallelism.tp") && e.contains("must divide the model's 6 heads"), "{e}");
    let e = common::rejection(&scenario("parallelism = { tp = 2, pp = 2, dp = 5 }"));
    assert!(e.contains("workload.parallelism.dp") && e.contains("allowed 1..=4"), "{e}");
    let e = common::rejection(&scenario("model = { layers = 4, hidden = 64, heads = 4, seq = 16, vocab = 64, global_batch = 6 }\nparallelism = { dp = 4 }"));
    assert!(e.contains("workload.model.global_batch") && e.contains("multiple of micro_batch × dp = 4"), "{e}");
    let e = common::rejection(&scenario("model = { layers = 4, hidden = 64, heads = 4, seq = 16, vocab = 64, global_batch = 4 }\nparallelism = { dp = 4, tp_algorithm = \"hier\" }"));
    assert!(e.contains("workload.parallelism.tp_algorithm") && e.contains("`ring`"), "{e}");
    let e = common::rejection(&scenario("model = { hidden = 0 }"));
    assert!(e.contains("workload.model.hidden"), "{e}");
}

/// `scenarios/training.toml`'s fabric (4 servers of 8 GPUs, 3600 Gb/s scale-up) with a smaller
/// step of the same shape (tp 8 × pp 2 × dp 2), its TP collectives simulated as `tp_network`.
fn servers(tp_network: &str) -> fabricsim::Results {
    common::run(&format!(
        r#"
        [topology]
        kind = "rail_optimized"
        servers = 4
        servers_per_su = 2
        link_rate_gbps = 400
        [topology.server]
        gpus = 8
        scale_up_gbps = 3600
        [workload]
        kind = "training"
        model = {{ layers = 4, hidden = 1024, heads = 16, seq = 512, vocab = 8192, global_batch = 8 }}
        parallelism = {{ tp = 8, pp = 2, dp = 2, tp_network = "{tp_network}" }}
    "#
    ))
}

//= type=test
//# Analytic TP collectives (each a delay: its bus bytes at the scale-up rate plus its latency
//# terms) against the same collectives as packets over the scale-up switches, which nothing
//# else crosses: the same bytes, each analytic CCT its own ideal, TP's exposed time and the
//# step within 5 % of the packet run's, the rest of the step alike.
#[test]
fn analytic_scale_up_collectives_match_their_packets() {
    let (packets, analytic) = (servers("packets"), servers("analytic"));
    let figures = |r: &fabricsim::Results| r.summary.training.clone().unwrap();
    let (p, a) = (figures(&packets), figures(&analytic));
    let tp = |t: &fabricsim::results::TrainingSummary| t.groups.iter().find(|g| g.group == "tp").unwrap().clone();
    assert_eq!(tp(&p).bytes, tp(&a).bytes);
    assert_eq!(tp(&p).collectives, tp(&a).collectives);
    for c in analytic.ccts.iter().filter(|c| c.instance.group == "tp") {
        assert_eq!((c.instance.algorithm, c.cct()), ("analytic", Some(c.ideal)));
    }
    let (pi, ai) = (&p.iterations[0], &a.iterations[0]);
    let (pt, at) = (pi.time_us.unwrap(), ai.time_us.unwrap());
    assert!((at / pt - 1.0).abs() < 0.05, "analytic {at} µs, packets {pt} µs");
    let (pp, ap) = (pi.critical_path.as_ref().unwrap(), ai.critical_path.as_ref().unwrap());
    assert!((ap.tp_us / pp.tp_us - 1.0).abs() < 0.05 && ap.tp_us <= pp.tp_us, "{ap:?} against {pp:?}");
    assert_eq!(pi.compute_ideal_us, ai.compute_ideal_us);
    // Without a scale-up domain there is nothing to be analytic about.
    let e = common::rejection(&scenario("model = { layers = 2, hidden = 128, heads = 4, seq = 32, vocab = 256, global_batch = 4 }\nparallelism = { tp = 2, dp = 2, tp_network = \"analytic\" }"));
    assert!(e.contains("workload.parallelism.tp_network") && e.contains("scale-up"), "{e}");
}

//= type=test
//# `fabricsim check`'s lines of a step: its compute ideal, and per group the busiest GPU's
//# bytes per iteration at its link's rate, the same whether TP runs as packets or analytic.
#[test]
fn check_shows_the_compute_ideal_and_each_groups_bytes_at_their_link_rate() {
    let lines = |tp_network: &str| {
        let text = format!(
            "[topology]\nkind = \"rail_optimized\"\nservers = 4\nservers_per_su = 2\nlink_rate_gbps = 400\n[topology.server]\ngpus = 8\nscale_up_gbps = 3600\n\
             [workload]\nkind = \"training\"\nmodel = {{ layers = 4, hidden = 1024, heads = 16, seq = 512, vocab = 8192, global_batch = 8 }}\n\
             parallelism = {{ tp = 8, pp = 2, dp = 2, tp_network = \"{tp_network}\" }}\n"
        );
        let setup = fabricsim::Scenario::from_toml(&text, &[]).unwrap().setup(std::path::Path::new(".")).unwrap();
        fabricsim::results::step_check_lines(&setup.traffic, &setup.fabric)
    };
    let (p, a) = (lines("packets"), lines("analytic"));
    assert!(p[0].starts_with("compute ideal") && p[0] == a[0], "{p:?}");
    let tp = |l: &[String]| l.iter().find(|x| x.trim_start().starts_with("tp:")).cloned().unwrap();
    // 4 micro-batches × (4 per layer × 2 layers + 1) AllReduces of 1 MiB (7/8 of it sent
    // twice) and one AllGather of the arriving pass (7/8 once), on either stage.
    let per_gpu = 4 * (9 * 2 * 7 * (1 << 20) / 8 + 7 * (1 << 20) / 8);
    assert!(tp(&p).contains(&format!("up to {per_gpu} bytes")) && tp(&a).contains(&format!("up to {per_gpu} bytes")), "{} / {}", tp(&p), tp(&a));
}

//= type=test
//# Found by the fuzzer (seed 1, case 48, once it generated training steps on fabrics of
//# servers): tp 4 on the scale-up domain (analytic), 2 stages on 2 servers, no DP. The step
//# ends with stage 0's last backward, whose TP AllReduces run after the last message between
//# the stages: the run's completion (its flows' span) is shorter than the step, and the
//# invariant check and `ideal_completion_time_us` must not count the analytic instances, which
//# send no flow, against it.
#[test]
fn a_step_that_ends_in_analytic_collectives_keeps_its_completion_floors() {
    let r = common::run(
        "[topology]\nkind = \"rail_optimized\"\ntiers = 3\nservers = 2\nservers_per_su = 1\nlink_rate_gbps = 100\n\
         [topology.server]\ngpus = 4\nscale_up_gbps = 3600\n\
         [transport]\ncc = \"line_rate\"\nlb = \"spray\"\n\
         [workload]\nkind = \"training\"\nchunk = \"64KiB\"\n\
         model = { layers = 2, hidden = 256, heads = 8, seq = 128, vocab = 512, micro_batch = 1, global_batch = 3 }\n\
         parallelism = { tp = 4, pp = 2, dp = 1, tp_network = \"analytic\" }\n",
    );
    let s = &r.summary;
    let step = iteration(&r).time_us.expect("finished");
    assert!(step > s.completion_time_us, "the step ({step} µs) outlasts its flows ({} µs)", s.completion_time_us);
    assert!(s.ideal_completion_time_us <= s.completion_time_us, "ideal {} µs above the flows' span {} µs", s.ideal_completion_time_us, s.completion_time_us);
}
