//! Chakra execution traces (`workload.kind = "chakra"`): traces written by the project's own
//! writer, run against the collectives workload and analytic answers, and bad traces refused
//! naming the node.
mod common;

use fabricsim::workload::chakra::et::{self, Node, Trace, Value};
use std::path::PathBuf;

/// A fresh folder for one test's traces.
fn folder(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabricsim-chakra-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `traces` as `<dir>/t.<rank>.et` and returns the `traces` value naming them.
fn write(dir: &std::path::Path, traces: &[Trace]) -> String {
    for (r, t) in traces.iter().enumerate() {
        std::fs::write(dir.join(format!("t.{r}.et")), et::write(t)).unwrap();
    }
    dir.join("t").display().to_string()
}

fn node(id: u64, kind: u32, deps: &[u64], attrs: &[(&str, Value)]) -> Node {
    Node { id, name: format!("n{id}"), kind, data_deps: deps.to_vec(), attrs: attrs.iter().map(|(n, v)| (n.to_string(), v.clone())).collect(), ..Node::default() }
}

fn allreduce(id: u64, deps: &[u64], bytes: i128) -> Node {
    node(id, et::COMM_COLL_NODE, deps, &[("comm_type", Value::Int(0)), ("comm_size", Value::Int(bytes))])
}

/// The 16-host fat tree (k = 4) of the collectives tests, `workload` the rest of `[workload]`.
fn scenario(workload: &str) -> String {
    common::idle_fat_tree_16(1, workload)
}

//= type=test
//# An AllReduce of 1 MiB as ASTRA-sim's microbenchmark traces give it (one collective node per
//# rank, no process group: every rank) is the collectives workload's AllReduce: the same
//# messages, the same completion to the picosecond.
#[test]
fn a_traced_allreduce_is_the_collectives_workloads() {
    let dir = folder("allreduce");
    let traces: Vec<Trace> = (0..8).map(|_| Trace { version: "0.0.4".into(), nodes: vec![allreduce(0, &[], 1 << 20)] }).collect();
    let path = write(&dir, &traces);
    let traced = common::run(&scenario(&format!("kind = \"chakra\"\ntraces = \"{path}\"\nchunk = \"128KiB\"")));
    let jobs = common::run(&scenario("kind = \"collectives\"\nchunk = \"128KiB\"\n[[workload.jobs]]\nranks = 8\ncollectives = [{ op = \"allreduce\", bytes = \"1MiB\" }]"));
    let (a, b) = (&traced.ccts[0], &jobs.ccts[0]);
    assert_eq!((a.start, a.end, a.ideal), (b.start, b.end, b.ideal));
    assert_eq!(a.instance.group, "other");
    let it = &traced.summary.training.as_ref().unwrap().iterations[0];
    assert_eq!(it.time_us, b.cct().map(|t| t.0 as f64 / 1e6));
    std::fs::remove_dir_all(dir).unwrap();
}

//= type=test
//# The bundled example: 20 µs of compute, a pair's AllReduce, a message to the second pair,
//# 20 µs of compute there (its recorded duration, taken before its 10^10 FLOPs), an AllReduce of
//# all four. Its compute critical path is 20 µs + 20 µs, and its critical path adds up to its
//# time.
#[test]
fn the_bundled_example_runs_to_its_compute_and_network_ideals() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/chakra");
    let r = common::run(&scenario(&format!("kind = \"chakra\"\ntraces = \"{root}/step\"\ngroups = \"{root}/groups.json\"")));
    let it = &r.summary.training.as_ref().unwrap().iterations[0];
    let compute = 40.0;
    assert!((it.compute_ideal_us - compute).abs() < 1e-5, "{it:?}");
    let time = it.time_us.unwrap();
    assert!(time >= it.network_ideal_us && it.network_ideal_us > it.compute_ideal_us, "{it:?}");
    let p = it.critical_path.as_ref().unwrap();
    assert!((p.compute_us + p.other_us + p.wait_us - time).abs() < 1e-3 && (p.compute_us - compute).abs() < 1e-5, "{p:?}");
    // Three collectives: the two pairs' and everyone's; the pairs' start together at 20 µs.
    assert_eq!(r.ccts.len(), 3);
    assert_eq!(r.ccts[0].start, r.ccts[2].start);
    assert_eq!((r.ccts[0].instance.ranks, r.ccts[1].instance.ranks), (2, 4));
}

//= type=test
//# Compute-only traces: each rank's kernels run one after another in file order (one stream per
//# GPU), whatever their dependencies say, so two independent 5 µs kernels take 10 µs; a rank
//# waits for another only through messages.
//= type=test
//# A compute node without a duration takes its `num_ops` at the GPU's rate: 10^10 FLOPs at
//# 989 TFLOP/s × 0.5 is 20.22 µs. A traced AllGather's `comm_size` is each rank's input (as
//# ASTRA-sim reads it): 256 KiB over 4 ranks gathers the collectives workload's 1 MiB.
#[test]
fn flops_take_the_gpu_rate_and_an_allgather_gathers_its_ranks_inputs() {
    let dir = folder("flops");
    let gather = |id: u64, deps: &[u64]| node(id, et::COMM_COLL_NODE, deps, &[("comm_type", Value::Int(et::ALL_GATHER as i128)), ("comm_size", Value::Int(256 << 10))]);
    let traces: Vec<Trace> = (0..4).map(|_| Trace { version: "0.0.4".into(), nodes: vec![node(1, et::COMP_NODE, &[], &[("num_ops", Value::Int(10_000_000_000))]), gather(2, &[1])] }).collect();
    let path = write(&dir, &traces);
    let traced = common::run(&scenario(&format!("kind = \"chakra\"\ntraces = \"{path}\"\nchunk = \"128KiB\"")));
    let it = &traced.summary.training.as_ref().unwrap().iterations[0];
    assert!((it.compute_ideal_us - 1e10 / (989e12 * 0.5) * 1e6).abs() < 1e-5, "{it:?}");
    let jobs = common::run(&scenario("kind = \"collectives\"\nchunk = \"128KiB\"\n[[workload.jobs]]\nranks = 4\ncollectives = [{ op = \"allgather\", bytes = \"1MiB\" }]"));
    let (a, b) = (&traced.ccts[0], &jobs.ccts[0]);
    assert_eq!((a.instance.op, a.instance.bytes, a.cct(), a.ideal), (b.instance.op, b.instance.bytes, b.cct(), b.ideal));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_ranks_kernels_share_one_stream_and_messages_order_ranks() {
    let dir = folder("stream");
    let comp = |id: u64, us: u64, deps: &[u64]| Node { duration_micros: us, ..node(id, et::COMP_NODE, deps, &[]) };
    let r0 = Trace { version: "0.0.4".into(), nodes: vec![comp(1, 5, &[]), comp(2, 5, &[]), node(3, et::COMM_SEND_NODE, &[2], &[("comm_dst", Value::Int(1)), ("comm_size", Value::Int(4096))])] };
    let r1 = Trace { version: "0.0.4".into(), nodes: vec![node(1, et::COMM_RECV_NODE, &[], &[("comm_src", Value::Int(0))]), comp(2, 3, &[1])] };
    let path = write(&dir, &[r0, r1]);
    let r = common::run(&scenario(&format!("kind = \"chakra\"\ntraces = \"{path}\"")));
    let it = &r.summary.training.as_ref().unwrap().iterations[0];
    assert!((it.compute_ideal_us - 13.0).abs() < 1e-6, "{it:?}");
    let time = it.time_us.unwrap();
    // The 4 KiB message: a few µs on the wire and the fabric.
    assert!(time > 13.0 && time < 20.0, "{it:?}");
    let p = it.critical_path.as_ref().unwrap();
    assert!((p.compute_us - 13.0).abs() < 1e-6 && p.other_us > 0.0, "{p:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_traces_are_refused_naming_the_node() {
    let dir = folder("bad");
    let refuse = |name: &str, traces: &[Trace], extra: &str| -> String {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let path = write(&d, traces);
        common::rejection(&scenario(&format!("kind = \"chakra\"\ntraces = \"{path}\"\n{extra}")))
    };
    let one = |nodes: Vec<Node>| vec![Trace { version: "0.0.4".into(), nodes: nodes.clone() }, Trace { version: "0.0.4".into(), nodes }];
    let e = refuse("self", &one(vec![allreduce(4, &[4], 1024)]), "");
    assert!(e.contains("workload.traces") && e.contains("node 4") && e.contains("depends on itself"), "{e}");
    let e = refuse("missing", &one(vec![allreduce(4, &[7], 1024)]), "");
    assert!(e.contains("node 4") && e.contains("node 7, which the trace does not have"), "{e}");
    let e = refuse("cycle", &one(vec![allreduce(1, &[2], 1024), allreduce(2, &[1], 1024)]), "");
    assert!(e.contains("form a cycle"), "{e}");
    let e = refuse("huge", &one(vec![allreduce(1, &[], 1 << 60)]), "");
    assert!(e.contains("node 1") && e.contains("comm_size") && e.contains("1099511627776"), "{e}");
    let e = refuse("pg", &one(vec![node(1, et::COMM_COLL_NODE, &[], &[("comm_type", Value::Int(0)), ("comm_size", Value::Int(64)), ("pg_name", Value::Text("tp".into()))])]), "");
    assert!(e.contains("process group `tp` is not in workload.groups"), "{e}");
    std::fs::write(dir.join("groups.json"), r#"{"tp": [0, 9]}"#).unwrap();
    let e = refuse("pg9", &one(vec![allreduce(1, &[], 64)]), &format!("groups = \"{}\"", dir.join("groups.json").display()));
    assert!(e.contains("workload.groups") && e.contains("names rank 9") && e.contains("ranks 0..1"), "{e}");
    let lonely = vec![Trace { version: "0.0.4".into(), nodes: vec![node(1, et::COMM_RECV_NODE, &[], &[("comm_src", Value::Int(1))])] }, Trace { version: "0.0.4".into(), nodes: vec![] }];
    let e = refuse("recv", &lonely, "");
    assert!(e.contains("rank 0, node 1") && e.contains("no send matches"), "{e}");
    // A truncated file: where it stops.
    let d = dir.join("cut");
    std::fs::create_dir_all(&d).unwrap();
    let path = write(&d, &one(vec![allreduce(1, &[], 64)]));
    let bytes = std::fs::read(d.join("t.1.et")).unwrap();
    std::fs::write(d.join("t.1.et"), &bytes[..bytes.len() - 3]).unwrap();
    let e = common::rejection(&scenario(&format!("kind = \"chakra\"\ntraces = \"{path}\"")));
    assert!(e.contains("workload.traces") && e.contains("t.1.et") && e.contains("truncated at byte"), "{e}");
    let e = common::rejection(&scenario(&format!("kind = \"chakra\"\ntraces = \"{}\"", dir.join("none").display())));
    assert!(e.contains("no trace") && e.contains("none.0.et does not exist"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
