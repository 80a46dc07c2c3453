//! Rail-optimized fabrics (issue 46): a ring on one rail stays under its leaf and meets the
//! bus-bandwidth bound; a ring across rails crosses the spines; a server's scale-up domain
//! carries the traffic between its GPUs; the server keys are refused by name where they do not
//! apply.
mod common;

/// 8 servers × 4 GPUs in one scalable unit (4 rail leaves, 8 spines, 1:1), 400 G, ample
/// buffers, spray with a 2-BDP window; one job of 8 ranks placed by `placement`, running a
/// 16 MiB ring AllReduce in 128 KiB chunks.
fn ring(placement: &str) -> String {
    format!(
        r#"
        seed = 3
        [topology]
        kind = "rail_optimized"
        servers = 8
        servers_per_su = 8
        [topology.server]
        gpus = 4
        [switch]
        buffer_bytes = "64MiB"
        [transport]
        lb = "spray"
        cc = {{ name = "fixed", window_bdp = 2.0 }}
        [run]
        port_stats = true
        [workload]
        kind = "collectives"
        chunk = "128KiB"
        [[workload.jobs]]
        ranks = 8
        {placement}
        collectives = [ {{ op = "allreduce", algorithm = "ring", bytes = "16MiB" }} ]
    "#
    )
}

/// Bytes sent on ports whose cable touches a spine.
fn spine_bytes(r: &fabricsim::Results) -> u64 {
    assert!(r.ports.iter().any(|p| p.link == "tor0-spine0"), "port statistics name the rail leaves and spines");
    r.ports.iter().filter(|p| p.link.contains("spine")).map(|p| p.tx_bytes).sum()
}

//= type=test
//# A ring over GPU 0 of every server of one unit stays on rail 0: every byte crosses leaf0
//# only, and the AllReduce finishes within 5 % of 2(N−1)/N · S at 400 G plus one chunk hop.
#[test]
fn rail_aligned_ring_stays_on_its_leaf_and_meets_the_bus_bandwidth_bound() {
    let r = common::run(&ring("placement = \"strided\"\nstride = 4"));
    assert_eq!(spine_bytes(&r), 0, "a rail-aligned ring crossed a spine");
    let hosts: std::collections::BTreeSet<u32> = r.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    assert_eq!(hosts.into_iter().collect::<Vec<_>>(), [0, 4, 8, 12, 16, 20, 24, 28]);
    let (n, s) = (8u64, 16u64 << 20);
    let bus = 2 * (n - 1) * s / n;
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(bus), 400) as f64 / 1e6;
    let chunk_us = common::tx_ps(wire(128 << 10), 400) as f64 / 1e6;
    let ideal_us = bare_us + chunk_us + r.summary.base_rtt_us / 2.0;
    let got = r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    assert!(got >= bare_us && got <= 1.05 * ideal_us, "CCT {got} us against the bound {bare_us} us and the ideal {ideal_us} us");
    // summary.json's rails: rail 0 carried it all (each of its 8 GPUs sent its 2(N−1)/N · S on
    // the wire, plus ACKs), no other rail and no uplink carried a byte.
    let rails = r.summary.rails.as_ref().expect("a fabric of servers reports its rails");
    assert_eq!(rails.len(), 4);
    assert!(rails[0].gpu_tx_bytes >= 8 * wire(bus) && rails[0].gpu_rx_bytes == rails[0].gpu_tx_bytes, "{:?}", rails[0]);
    assert!(rails[0].gpu_tx_utilisation > 0.0 && rails[0].gpu_tx_utilisation < 1.0);
    assert!(rails.iter().all(|x| x.uplink_tx_bytes == 0 && x.uplink_rx_bytes == 0));
    assert!(rails[1..].iter().all(|x| x.gpu_tx_bytes == 0 && x.gpu_rx_bytes == 0));
}

//= type=test
//# A ring over the 4 GPUs of server 0 and of server 1 (contiguous ranks) moves data between
//# rails: it crosses the spines, and its CCT is no better than the rail-aligned ring's.
#[test]
fn cross_rail_ring_crosses_the_spines() {
    let aligned = common::run(&ring("placement = \"strided\"\nstride = 4"));
    let across = common::run(&ring("placement = \"contiguous\""));
    assert!(spine_bytes(&across) > 0);
    // Ranks 0..8 are GPUs 0..8, two whole servers: every rail sends, and up the spines.
    let rails = across.summary.rails.as_ref().unwrap();
    assert!(rails.iter().all(|x| x.gpu_tx_bytes > 0 && x.uplink_tx_bytes > 0), "{rails:?}");
    let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0;
    assert!(cct(&across) >= cct(&aligned), "{} vs {}", cct(&across), cct(&aligned));
}

/// Each scenario is refused, the message naming its key and saying what.
fn assert_refused(cases: &[(String, &str, &str)]) {
    for (toml, key, what) in cases {
        let e = common::rejection(toml);
        assert!(e.contains(key) && e.contains(what), "expected {key} ({what}):\n{e}");
    }
}

#[test]
fn server_keys_are_refused_by_name() {
    let base = "[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n";
    let rail = |extra: &str| format!("[topology]\nkind = \"rail_optimized\"\n{extra}\n{base}");
    let cases = [
        (rail("servers_per_su = 4"), "topology.servers", "missing"),
        (rail("servers = 6\nservers_per_su = 4"), "topology.servers", "nearest valid: 4 or 8"),
        (rail("servers = 4\nservers_per_su = 4\n[topology.server]\ngpus = 0"), "topology.server.gpus", "at least 1"),
        (rail("servers = 4\nservers_per_su = 4\nk = 8"), "topology.k", "not a key of kind = \"rail_optimized\""),
        (rail("servers = 4\nservers_per_su = 4\noversubscription = \"3:1\""), "topology.oversubscription", "allowed: 1:1, 2:1, 4:1"),
        (rail("servers = 4\nservers_per_su = 4\nspines = 3"), "topology.spines", "allowed: 1, 2, 4"),
        (format!("[topology]\nkind = \"leaf_spine\"\nk = 4\nservers = 4\n{base}"), "topology.servers", "only for kind = \"rail_optimized\""),
        (format!("[topology]\nk = 4\n[topology.server]\ngpus = 8\n{base}"), "topology.server", "only for kind = \"rail_optimized\""),
        (format!("[topology]\nk = 4\ntiers = 3\n{base}"), "topology.tiers", "only for kind = \"rail_optimized\""),
        (rail("servers = 4\nservers_per_su = 4\ntiers = 4"), "topology.tiers", "allowed: 2, 3"),
        (rail("servers = 4\nservers_per_su = 4\ncores = 8"), "topology.cores", "only with tiers = 3"),
        (rail("servers = 4\nservers_per_su = 4\nagg_uplink_rate_gbps = 100"), "topology.agg_uplink_rate_gbps", "only with tiers = 3"),
        (rail("servers = 8\nservers_per_su = 4\ntiers = 3\ncores = 6"), "topology.cores", "multiple of the spines per unit (4)"),
    ];
    assert_refused(&cases);
}

//= type=test
//# 3 tiers: a permutation of 16 GPUs in 4 units finishes with its invariants held, and its
//# flows between units cross the cores.
#[test]
fn three_tier_permutation_crosses_the_cores() {
    let r = common::run(
        r#"
        [topology]
        kind = "rail_optimized"
        tiers = 3
        servers = 8
        servers_per_su = 2
        link_rate_gbps = 100
        [topology.server]
        gpus = 2
        [run]
        port_stats = true
        [workload]
        kind = "permutation"
        flow_bytes = "256KiB"
    "#,
    );
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    assert!(r.flows.iter().any(|f| f.src / 4 != f.dst / 4), "some flow leaves its unit");
    let core_bytes: u64 = r.ports.iter().filter(|p| p.link.contains("core")).map(|p| p.tx_bytes).sum();
    assert!(core_bytes > 0, "traffic between units crosses the cores");
    assert!(r.summary.base_rtt_us > 0.0);
}

/// `scenario` on the rail-only fabric of the same servers in units of 4 (so each rail is a
/// 2-tier network of its own: a leaf per unit and its own spines).
fn rail_only(scenario: &str) -> String {
    scenario.replace("kind = \"rail_optimized\"", "kind = \"rail_only\"").replace("servers_per_su = 8", "servers_per_su = 4")
}

//= type=test
//# Rail-only (each rail its own spines): a rail-aligned ring across both units finishes as on
//# shared spines, through its own rail's spines only; a job across rails is refused by name,
//# as no path joins two rails without the scale-up domain.
#[test]
fn rail_only_carries_rail_aligned_rings_and_refuses_cross_rail_jobs_without_scale_up() {
    let grouped = |placement: &str| rail_only(&ring(placement));
    let shared = common::run(&ring("placement = \"strided\"\nstride = 4").replace("servers_per_su = 8", "servers_per_su = 4"));
    let r = common::run(&grouped("placement = \"strided\"\nstride = 4"));
    let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0;
    // The same ring crosses from one unit to the other twice, on either fabric.
    assert_eq!(cct(&r), cct(&shared));
    // 4 uplinks per leaf: 16 spines in groups of 4, rail 0's are spine0..spine3.
    let spine_of = |link: &str| link.split('-').find_map(|n| n.strip_prefix("spine")).map(|i| i.parse::<u32>().unwrap());
    let (own, other): (Vec<_>, Vec<_>) = r.ports.iter().filter_map(|p| spine_of(&p.link).map(|s| (s, p.tx_bytes))).partition(|&(s, _)| s < 4);
    assert!(own.iter().map(|x| x.1).sum::<u64>() > 0);
    assert_eq!(other.iter().map(|x| x.1).sum::<u64>(), 0, "rail 0's ring stays on rail 0's spines");
    let e = common::rejection(&grouped("placement = \"contiguous\""));
    assert!(e.contains("`workload`") && e.contains("connection 0 from gpu0 to gpu1") && e.contains("rail 0") && e.contains("stride = 4"), "{e}");
}

/// [`ring`] on servers with a scale-up domain of `gbps` per GPU.
fn scaled_ring(placement: &str, gbps: u32) -> String {
    ring(placement).replace("gpus = 4", &format!("gpus = 4\n        scale_up_gbps = {gbps}"))
}

//= type=test
//# An AllReduce over the 4 GPUs of one server never touches the scale-out fabric: every byte
//# goes through the server's scale-up switch, and the ring meets 2(N−1)/N · S at the scale-up
//# rate (1600 G) within 5 % (plus one chunk hop and half the in-server RTT).
#[test]
fn allreduce_inside_a_server_stays_in_its_scale_up_domain() {
    let r = common::run(&scaled_ring("placement = \"contiguous\"", 1600).replace("ranks = 8", "ranks = 4"));
    let scale_out: u64 = r.ports.iter().filter(|p| !p.link.contains("nvs")).map(|p| p.tx_bytes).sum();
    assert_eq!(scale_out, 0, "a ring inside one server used the rails");
    // Connections run between the GPUs' scale-up ports: hosts 32.. (GPU count 32) are nvl0...
    let hosts: std::collections::BTreeSet<u32> = r.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    assert_eq!(hosts.into_iter().collect::<Vec<_>>(), [32, 33, 34, 35]);
    let (n, s) = (4u64, 16u64 << 20);
    let bus = 2 * (n - 1) * s / n;
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(bus), 1600) as f64 / 1e6;
    let chunk_us = common::tx_ps(wire(128 << 10), 1600) as f64 / 1e6;
    let got = r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    // In-server RTT: 2 links of 150 ns each way plus serialization, well under 2 µs.
    assert!(got >= bare_us && got <= 1.05 * (bare_us + chunk_us + 1.0), "CCT {got} us against the bound {bare_us} us");
    // The ideal is the bound at the scale-up rate (it stays below the CCT, and close).
    let ideal = r.ccts[0].ideal.0 as f64 / 1e6;
    assert!(ideal >= bare_us && ideal <= got, "ideal {ideal} us, bound {bare_us} us, CCT {got} us");
    let rails = r.summary.rails.as_ref().unwrap();
    assert!(rails.iter().all(|x| x.gpu_tx_bytes == 0 && x.scale_up_tx_bytes.unwrap() >= wire(bus)), "{rails:?}");
}

//= type=test
//# A ring over two servers (contiguous ranks): the hops inside a server use the scale-up
//# domain, the two hops between the servers their NICs; the NIC hops bound it, so the CCT is
//# within 5 % of the rail-aligned ring's bound at 400 G, and far below the same ring without a
//# scale-up domain, whose in-server hops cross the spines.
#[test]
fn ring_across_servers_uses_the_scale_up_domain_inside_them() {
    let with = common::run(&scaled_ring("placement = \"contiguous\"", 1600));
    let without = common::run(&ring("placement = \"contiguous\""));
    let scale_up: u64 = with.ports.iter().filter(|p| p.link.contains("nvs")).map(|p| p.tx_bytes).sum();
    assert!(scale_up > 0);
    // Rank 3 (gpu3, rail 3) sends to rank 4 (gpu4, rail 0 of server 1): the only NIC sends.
    let nic_senders: std::collections::BTreeSet<u32> = with.flows.iter().filter(|f| f.src < 32).map(|f| f.src).collect();
    assert_eq!(nic_senders.into_iter().collect::<Vec<_>>(), [3, 7]);
    let (n, s) = (8u64, 16u64 << 20);
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(2 * (n - 1) * s / n), 400) as f64 / 1e6;
    let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    assert!(cct(&with) >= bare_us && cct(&with) <= 1.05 * (bare_us + 2.0 * with.summary.base_rtt_us), "CCT {} us against {bare_us} us", cct(&with));
    assert!(cct(&with) < cct(&without), "{} vs {}", cct(&with), cct(&without));
}

/// 4 servers in one unit with `[topology.server]` keys `server`, running a 64 KiB permutation.
fn servers_with(server: &str) -> String {
    format!("[topology]\nkind = \"rail_optimized\"\nservers = 4\nservers_per_su = 4\n[topology.server]\n{server}\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n")
}

#[test]
fn scale_up_keys_are_refused_by_name() {
    let cases = [
        (servers_with("scale_up_gbps = 0"), "topology.server.scale_up_gbps", "must be a positive rate"),
        (servers_with("scale_up_gbps = -5"), "topology.server.scale_up_gbps", "must be a positive rate"),
        (servers_with("scale_up_latency_ns = 100"), "topology.server.scale_up_latency_ns", "only with `scale_up_gbps`"),
        (servers_with("scale_up_gbps = 3600\nscale_up_latency_ns = -1"), "topology.server.scale_up_latency_ns", "non-negative"),
        (servers_with("scale_up_gbps = 3600\nscale_up_rate = 1"), "scale_up_rate", "unknown field"),
    ];
    assert_refused(&cases);
}

//= type=test
//# Rail-only with a scale-up domain: a job inside one server runs through the scale-up switch;
//# `cross_rail = "spine"` is refused (there is none), and a flow workload whose connection joins
//# different rails of different servers is refused, naming it (forwarding is for collectives).
#[test]
fn rail_only_refuses_spine_crossing_and_cross_rail_flows() {
    let r = common::run(&rail_only(&scaled_ring("placement = \"contiguous\"", 1600).replace("ranks = 8", "ranks = 4")));
    assert!(r.ccts[0].cct().is_some());
    let flows = "[topology]\nkind = \"rail_only\"\nservers = 4\nservers_per_su = 4\n[topology.server]\nscale_up_gbps = 3600\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n";
    let e = common::rejection(flows);
    assert!(e.contains("`workload`") && e.contains("different rails of different servers") && e.contains("kind = \"collectives\""), "{e}");
    assert_refused(&[(flows.replace("scale_up_gbps = 3600", "scale_up_gbps = 3600\ncross_rail = \"spine\""), "topology.server.cross_rail", "no spine")]);
    assert_refused(&[
        (flows.replace("servers_per_su = 4", "servers_per_su = 4\ntiers = 2"), "topology.tiers", "not a key of kind = \"rail_only\""),
        (flows.replace("servers_per_su = 4", "servers_per_su = 4\nspines = 8"), "topology.spines", "allowed: unset"),
        (flows.replace("servers_per_su = 4", "servers_per_su = 4\nk = 8"), "topology.k", "not a key of kind = \"rail_only\""),
        (flows.replace("kind = \"rail_only\"", "kind = \"fat_tree\""), "topology.servers", "\"rail_only\""),
    ]);
}

//= type=test
//# Rail-only forwards a collective's cross-rail messages (Wang et al. 2023; NCCL's PXN): the
//# 8-GPU ring over two servers runs; its two server-crossing hops (GPU 3 → GPU 4, GPU 7 →
//# GPU 0) first cross the scale-up domain to the GPU on the destination's rail (GPU 0 of server
//# 0 for GPU 3's chunks, GPU 4 of server 1 for GPU 7's), then stay on that rail: rails 1..3
//# carry nothing, rail 0's spines carry the crossings; the CCT is within 5 % of the 400 G bound
//# plus the relay's chunk hops. A rail-optimized fabric with `cross_rail = "pxn"` does the same.
#[test]
fn rail_only_forwards_cross_rail_hops_through_the_scale_up_domain_onto_one_rail() {
    let r = common::run(&rail_only(&scaled_ring("placement = \"contiguous\"", 1600)));
    let pxn = common::run(&scaled_ring("placement = \"contiguous\"", 1600).replace("scale_up_gbps = 1600", "scale_up_gbps = 1600\n        cross_rail = \"pxn\""));
    let senders = |r: &fabricsim::Results| r.flows.iter().map(|f| (f.src, f.dst, f.bytes)).collect::<Vec<_>>();
    assert_eq!(senders(&r), senders(&pxn));
    // NIC senders: only the relays, GPU 0 (for GPU 3) and GPU 4 (for GPU 7).
    let nic_senders: std::collections::BTreeSet<u32> = r.flows.iter().filter(|f| f.src < 32).map(|f| f.src).collect();
    assert_eq!(nic_senders.into_iter().collect::<Vec<_>>(), [0, 4]);
    let rails = r.summary.rails.as_ref().unwrap();
    assert!(rails[0].gpu_tx_bytes > 0 && rails[1..].iter().all(|x| x.gpu_tx_bytes == 0), "{rails:?}");
    let (n, s) = (8u64, 16u64 << 20);
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(2 * (n - 1) * s / n), 400) as f64 / 1e6;
    let got = r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    assert!(got >= bare_us && got <= 1.05 * (bare_us + 2.0 * r.summary.base_rtt_us), "CCT {got} us against {bare_us} us");
}

#[test]
fn pxn_is_refused_without_a_scale_up_domain_or_for_flows() {
    assert_refused(&[
        (servers_with("cross_rail = \"pxn\""), "topology.server.cross_rail", "`scale_up_gbps`"),
        (servers_with("scale_up_gbps = 900\ncross_rail = \"pxn\""), "topology.server.cross_rail", "kind = \"collectives\""),
        (servers_with("cross_rail = \"nvlink\""), "cross_rail", "pxn"),
    ]);
}

//= type=test
//# A permutation on servers with a scale-up domain: the flows between GPUs of one server run
//# over it, each with its own path's ideal (the scale-up link's rate and delay, not a NIC
//# path's of the same hop count), so no flow beats its ideal; the others use the NICs.
#[test]
fn permutation_flows_inside_servers_get_their_own_ideal() {
    let r = common::run(
        r#"
        seed = 2
        [topology]
        kind = "rail_optimized"
        servers = 8
        servers_per_su = 4
        [topology.server]
        gpus = 8
        scale_up_gbps = 3600
        [switch]
        buffer_bytes = "64MiB"
        [workload]
        kind = "permutation"
        flow_bytes = "1MiB"
    "#,
    );
    let (inside, outside): (Vec<_>, Vec<_>) = r.flows.iter().partition(|f| f.src >= 64);
    assert!(!inside.is_empty() && !outside.is_empty());
    assert!(inside.iter().all(|f| f.dst >= 64 && (f.src - 64) / 8 == (f.dst - 64) / 8), "scale-up flows stay in their server");
    let wire = 1048576 + 1048576u64.div_ceil(4032) * 64;
    for f in &r.flows {
        let fct = f.fct().expect("finished");
        assert!(fct >= f.ideal_fct, "flow {} ({} -> {}): FCT {fct} below its ideal {}", f.id, f.src, f.dst, f.ideal_fct);
    }
    // A 1 MiB flow inside a server: its bytes at 3600 G plus well under 2 µs of path.
    let bound = common::tx_ps(wire, 3600);
    assert!(inside.iter().all(|f| f.ideal_fct.0 >= bound && f.ideal_fct.0 < bound + 2_000_000), "{:?}", inside.iter().map(|f| f.ideal_fct).collect::<Vec<_>>());
}

//= type=test
//# A scale-up link degraded by a link event (`nvl1-nvs0` to 400 G from the start): the ring
//# inside server 0 is as slow as its slowest hop, 2(N−1)/N · S at 400 G, within 5 %; the link
//# is named as `check` and ports.csv name it.
#[test]
fn a_degraded_scale_up_link_bounds_the_ring_inside_its_server() {
    let toml = scaled_ring("placement = \"contiguous\"", 1600).replace("ranks = 8", "ranks = 4")
        + "\n[[link_events]]\nat_us = 0\nlink = \"nvl1-nvs0\"\naction = \"rate\"\nrate_gbps = 400\n";
    let r = common::run(&toml);
    let (n, s) = (4u64, 16u64 << 20);
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(2 * (n - 1) * s / n), 400) as f64 / 1e6;
    let got = r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    assert!(got >= bare_us && got <= 1.05 * bare_us + 1.0, "CCT {got} us against {bare_us} us at 400 G");
    assert!(r.ports.iter().any(|p| p.link == "nvl1-nvs0" && p.tx_bytes > 0));
}

//= type=test
//# Ideal CCTs stay below the CCT where a collective's senders use links of different rates
//# (scale-up ports beside NICs): a ring over two servers, with and without PXN, and an
//# AllToAll (whose in-server share takes the scale-up ports, so its NICs carry less than the
//# bus bytes); the ring's ideal is the NIC bound, within 5 % of its CCT.
#[test]
fn ideals_stay_lower_bounds_with_scale_up_ports() {
    let ring_pxn = scaled_ring("placement = \"contiguous\"", 1600).replace("scale_up_gbps = 1600", "scale_up_gbps = 1600\n        cross_rail = \"pxn\"");
    let alltoall = scaled_ring("placement = \"contiguous\"", 1600).replace("op = \"allreduce\", algorithm = \"ring\"", "op = \"alltoall\"");
    for toml in [scaled_ring("placement = \"contiguous\"", 1600), ring_pxn, alltoall] {
        let r = common::run(&toml);
        let c = &r.ccts[0];
        let cct = c.cct().expect("finished");
        assert!(c.ideal <= cct, "{} {}: ideal {} above CCT {cct}", c.instance.op, c.instance.algorithm, c.ideal);
        if c.instance.op == "allreduce" {
            assert!(cct.0 as f64 <= 1.05 * c.ideal.0 as f64, "ideal {} far below CCT {cct}", c.ideal);
        }
    }
}

//= type=test
//# Hierarchical AllReduce (`algorithm = "hier"`, groups of a server's 4 GPUs) over two servers
//# with a scale-up domain: ReduceScatter and AllGather inside the servers, one ring per rail
//# across them, so every rail carries 2(m − 1)/m · S/4 per GPU (here S/4, plus headers and ACKs)
//# and no byte crosses a spine; the CCT is at least the NIC bound and the in-server phases, and
//# well under the flat ring's; its ideal is the phases' sum. Without a scale-up domain its ideal
//# still bounds it.
#[test]
fn hierarchical_allreduce_runs_one_ring_per_rail_across_servers() {
    let hier = |toml: String| toml.replace("algorithm = \"ring\"", "algorithm = \"hier\", group = 4");
    let r = common::run(&hier(scaled_ring("placement = \"contiguous\"", 1600)));
    let flat = common::run(&scaled_ring("placement = \"contiguous\"", 1600));
    let s = 16u64 << 20;
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let rails = r.summary.rails.as_ref().unwrap();
    for x in rails {
        // 2 GPUs per rail, each sending S/4 across.
        assert!(x.gpu_tx_bytes >= 2 * wire(s / 4) && x.gpu_tx_bytes < 2 * wire(s / 4) * 11 / 10, "{x:?}");
        assert_eq!(x.uplink_tx_bytes, 0, "rail-aligned rings stay under their leaf");
    }
    let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    let in_server_us = 2.0 * common::tx_ps(wire(3 * s / 4), 1600) as f64 / 1e6;
    let nic_us = common::tx_ps(wire(s / 4), 400) as f64 / 1e6;
    assert!(cct(&r) >= nic_us + in_server_us && cct(&r) < cct(&flat) / 2.0, "hier {} us, flat {} us, bound {} us", cct(&r), cct(&flat), nic_us + in_server_us);
    // Its ideal charges the phases one after another on each rank (they are, on every rank):
    // the in-server phases at the scale-up rate plus the ring across at the NIC rate.
    let ideal = r.ccts[0].ideal.0 as f64 / 1e6;
    assert!(ideal >= nic_us + in_server_us && ideal <= cct(&r), "ideal {ideal} us, phases {} us, CCT {} us", nic_us + in_server_us, cct(&r));
    let plain = common::run(&hier(ring("placement = \"contiguous\"")));
    assert!(plain.ccts[0].ideal <= plain.ccts[0].cct().unwrap(), "{:?}", plain.ccts[0]);
    let e = common::rejection(&hier(ring("placement = \"contiguous\"")).replace("group = 4", "group = 3"));
    assert!(e.contains("group") && e.contains("allowed: 1, 2, 4, 8"), "{e}");
}

//= type=test
//# `hier_tree` (NCCL's tree across servers): the same in-server phases, and across the servers a
//# double binary tree per rail instead of a ring. 32 servers × 4 GPUs, 1 MiB per GPU in 16 KiB
//# chunks: each rail carries the same bytes as under `hier` (2(m − 1)/m · S/4 per GPU, within
//# 2 % for the different chunking's headers), none up a spine; across 32 servers the ring's
//# chain is 2 · 31 steps where a tree's is 2 · log2 32 = 10 hops, so the latency-bound tree
//# finishes in well under 3/4 of the ring's time.
#[test]
fn hierarchical_tree_carries_the_rings_bytes_in_fewer_hops() {
    let wide = |alg: &str| {
        scaled_ring("placement = \"contiguous\"", 1600)
            .replace("servers = 8\n        servers_per_su = 8", "servers = 32\n        servers_per_su = 32")
            .replace("ranks = 8", "ranks = 128")
            .replace("chunk = \"128KiB\"", "chunk = \"16KiB\"")
            .replace("algorithm = \"ring\", bytes = \"16MiB\"", &format!("algorithm = \"{alg}\", group = 4, bytes = \"1MiB\""))
    };
    let (ring, tree) = (common::run(&wide("hier")), common::run(&wide("hier_tree")));
    let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    for (a, b) in ring.summary.rails.as_ref().unwrap().iter().zip(tree.summary.rails.as_ref().unwrap()) {
        assert!((b.gpu_tx_bytes as f64 / a.gpu_tx_bytes as f64 - 1.0).abs() < 0.02, "{a:?} {b:?}");
        assert_eq!(a.uplink_tx_bytes + b.uplink_tx_bytes, 0, "rail-aligned: no spine");
    }
    assert!(cct(&tree) < 0.75 * cct(&ring), "tree {} us, ring {} us", cct(&tree), cct(&ring));
    assert_eq!(tree.ccts[0].instance.algorithm, "hier_tree");
}

//= type=test
//# Hierarchical AllGather and ReduceScatter (`algorithm = "hier"`, the two halves of the
//# hierarchical AllReduce): 8 servers × 4 GPUs of one unit, 16 MiB, groups of 4. Each GPU
//# sends (m − 1)/m · S/4 = 7/8 · 4 MiB over its NIC, along its rail (no byte up a spine), and
//# 3/4 · S over the scale-up domain; the CCT is at least the two phases one after the other
//# and under half the flat ring's, whose every fourth hop crosses a NIC with S/32 per step.
#[test]
fn hierarchical_allgather_and_reducescatter_cross_each_rail_once() {
    let s = 16u64 << 20;
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    for op in ["allgather", "reducescatter"] {
        let job = |alg: &str| scaled_ring("placement = \"contiguous\"", 1600).replace("ranks = 8", "ranks = 32").replace("op = \"allreduce\", algorithm = \"ring\"", &format!("op = \"{op}\", {alg}"));
        let (hier, flat) = (common::run(&job("algorithm = \"hier\", group = 4")), common::run(&job("algorithm = \"ring\"")));
        let across = 7 * s / 32;
        for x in hier.summary.rails.as_ref().unwrap() {
            // 8 GPUs per rail.
            assert!(x.gpu_tx_bytes >= 8 * wire(across) && x.gpu_tx_bytes < 8 * wire(across) * 11 / 10, "{op}: {x:?}");
            assert_eq!(x.uplink_tx_bytes, 0, "{op}: rail rings stay under their leaf");
        }
        let cct = |r: &fabricsim::Results| r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
        let phases_us = (common::tx_ps(wire(across), 400) + common::tx_ps(wire(3 * s / 4), 1600)) as f64 / 1e6;
        assert!(cct(&hier) >= phases_us && cct(&hier) < cct(&flat) / 2.0, "{op}: hier {} us, flat {} us, phases {phases_us} us", cct(&hier), cct(&flat));
        assert_eq!(hier.ccts[0].instance.algorithm, "hier");
    }
}

//= type=test
//# On rail-only, cross-rail traffic crosses the scale-up domain exactly once: an AllToAll of
//# 1 MiB per rank over 16 GPUs (4 servers × 4, two units) sends P = 64 KiB to each peer. Of a
//# GPU's 15 peers, 3 share its server (scale-up only), 3 its rail on other servers (their rail
//# only) and 9 are on other rails of other servers (scale-up once to the GPU on the
//# destination's rail, then that rail once). So the scale-up ports send (3 + 9) · 16 · P, the
//# NICs (3 + 9) · 16 · P, every scale-up message stays in its server and every NIC message on
//# its rail.
#[test]
fn rail_only_alltoall_crosses_the_scale_up_domain_exactly_once() {
    let r = common::run(
        r#"
        seed = 1
        [topology]
        kind = "rail_only"
        servers = 4
        servers_per_su = 2
        [topology.server]
        gpus = 4
        scale_up_gbps = 1600
        [switch]
        buffer_bytes = "64MiB"
        [transport]
        lb = "spray"
        cc = { name = "fixed", window_bdp = 2.0 }
        [workload]
        kind = "collectives"
        chunk = "64KiB"
        [[workload.jobs]]
        ranks = 16
        collectives = [ { op = "alltoall", bytes = "1MiB" } ]
    "#,
    );
    assert!(r.ccts[0].cct().is_some());
    let (g, per_peer) = (16u32, 64u64 << 10);
    let server = |h: u32| h % g / 4;
    let (mut scale_up, mut nic) = (0u64, 0u64);
    for f in &r.flows {
        if f.src >= g {
            assert!(f.dst >= g && server(f.src) == server(f.dst), "a scale-up message left its server: {} -> {}", f.src, f.dst);
            scale_up += f.bytes;
        } else {
            assert!(f.dst < g && f.src % 4 == f.dst % 4 && server(f.src) != server(f.dst), "a NIC message left its rail: {} -> {}", f.src, f.dst);
            nic += f.bytes;
        }
    }
    assert_eq!(scale_up, 12 * 16 * per_peer);
    assert_eq!(nic, 12 * 16 * per_peer);
    // summary.json's rails agree: every rail's NICs sent, no byte crossed rails.
    let rails = r.summary.rails.as_ref().unwrap();
    assert!(rails.iter().all(|x| x.gpu_tx_bytes > 0 && x.scale_up_tx_bytes.unwrap() > 0), "{rails:?}");
}

//= type=test
//# Rack wiring (`kind = "racks"`): the same switches and cables, every GPU of a server on one
//# leaf, two servers per leaf here. The contiguous ring over servers 0 and 1, which crosses the
//# spines on rails, stays under leaf 0 and meets the 400 G bus bound within 5 %; the
//# rail-aligned ring (GPU 0 of every server) now crosses the spines. summary.json has no
//# per-rail breakdown, and PXN is refused.
#[test]
fn rack_wiring_keeps_a_racks_servers_under_one_leaf() {
    let racks = |placement: &str| ring(placement).replace("kind = \"rail_optimized\"", "kind = \"racks\"");
    let r = common::run(&racks("placement = \"contiguous\""));
    assert_eq!(spine_bytes(&r), 0, "a ring inside one rack crossed a spine");
    let (n, s) = (8u64, 16u64 << 20);
    let wire = |b: u64| b + b.div_ceil(4032) * 64;
    let bare_us = common::tx_ps(wire(2 * (n - 1) * s / n), 400) as f64 / 1e6;
    let got = r.ccts[0].cct().expect("finished").0 as f64 / 1e6;
    assert!(got >= bare_us && got <= 1.05 * (bare_us + r.summary.base_rtt_us), "CCT {got} us against {bare_us} us");
    assert!(r.summary.rails.is_none());
    assert!(spine_bytes(&common::run(&racks("placement = \"strided\"\nstride = 4"))) > 0);
    assert_refused(&[(servers_with("scale_up_gbps = 900\ncross_rail = \"pxn\"").replace("kind = \"rail_optimized\"", "kind = \"racks\""), "topology.server.cross_rail", "no rails")]);
    // A refusal of the shape names the wiring it was given.
    let shape = servers_with("gpus = 2").replace("kind = \"rail_optimized\"", "kind = \"racks\"").replace("servers = 4\n", "servers = 3\n");
    assert_refused(&[(shape, "topology.servers", "a rack-wired fabric is built of whole scalable units")]);
}

/// 8 servers × 4 GPUs in units of 4 on `planes` planes of 200 G links, a 4 MiB permutation
/// sprayed with a 2-BDP window, then `extra`.
fn planes(planes: u32, extra: &str) -> String {
    format!(
        r#"
        seed = 5
        [topology]
        kind = "rail_optimized"
        servers = 8
        servers_per_su = 4
        planes = {planes}
        link_rate_gbps = 200
        [topology.server]
        gpus = 4
        [switch]
        buffer_bytes = "16MiB"
        [transport]
        lb = "spray"
        cc = {{ name = "fixed", window_bdp = 2.0 }}
        [workload]
        kind = "permutation"
        flow_bytes = "4MiB"
        [run]
        port_stats = true
        {extra}
    "#
    )
}

//= type=test
//# Two planes: every connection between GPUs is striped over both (a part on each NIC port,
//# half the bytes), so a permutation finishes as fast as on one plane of 400 G links (its ideal
//# the same, its CCT within 3 %), both planes carrying the same bytes. Removing plane 1's leaf uplinks leaves GPUs under
//# different leaves one plane: its throughput bound halves (the ideal doubles) and the run
//# reaches it, with plane 1's uplinks idle. One NIC port down does the same to its GPU.
#[test]
fn planes_stripe_connections_and_losing_one_halves_the_bound() {
    let both = common::run(&planes(2, ""));
    assert_eq!(both.flows.len(), 64, "32 connections, each on 2 planes");
    let ps = both.summary.planes.as_ref().expect("planes in summary.json");
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].gpu_tx_bytes, ps[1].gpu_tx_bytes, "{ps:?}");
    let done = |r: &fabricsim::Results| r.summary.completion_time_us;
    let ideal = |r: &fabricsim::Results| r.summary.ideal_completion_time_us;
    // As fast as the same permutation on one plane of 400 G links (within 3 %), whose spray
    // finishes ~8 % above the ideal at this size.
    let fat = common::run(&planes(1, "").replace("link_rate_gbps = 200", "link_rate_gbps = 400"));
    assert!(done(&both) >= ideal(&both) && done(&both) <= 1.03 * done(&fat), "{} us against {} us on one plane of 400 G", done(&both), done(&fat));
    assert!((ideal(&both) / ideal(&fat) - 1.0).abs() < 1e-3, "ideals {} and {} us", ideal(&both), ideal(&fat));
    // One plane's worth: 4 MiB (+ headers) at 400 G, plus an RTT or so.
    let wire = (4u64 << 20) + (4u64 << 20).div_ceil(4032) * 64;
    let at_400 = common::tx_ps(wire, 400) as f64 / 1e6;
    assert!(ideal(&both) >= at_400 && ideal(&both) <= at_400 + 2.0 * both.summary.base_rtt_us, "ideal {} us, 4 MiB at 400 G {at_400} us", ideal(&both));
    let cut = "[topology.failures]\nkind = \"tor_uplinks\"\nlinks = [\"tor8-spine*\", \"tor9-spine*\", \"tor10-spine*\", \"tor11-spine*\", \"tor12-spine*\", \"tor13-spine*\", \"tor14-spine*\", \"tor15-spine*\"]";
    let one = common::run(&planes(2, cut));
    let ps = one.summary.planes.as_ref().unwrap();
    assert_eq!(ps[1].uplink_tx_bytes, 0);
    let ratio = ideal(&one) / ideal(&both);
    assert!((1.9..=2.05).contains(&ratio), "the ideal grew {ratio}x");
    // Within the same ~8 % of its ideal as the sprayed permutation on one plane of 400 G.
    assert!(done(&one) >= ideal(&one) && done(&one) <= 1.10 * ideal(&one), "{} us against {} us", done(&one), ideal(&one));
    // One NIC port down (GPU 5's on plane 1, under plane 1's leaf 1): GPU 5's two connections
    // (its send and its receive) stay on plane 0, at half the rate, and bound the run.
    let port = common::run(&planes(2, "[topology.failures]\nkind = \"tor_uplinks\"\nlinks = [\"gpu5.p1-tor9\"]"));
    assert_eq!(port.flows.len(), 62);
    assert!(port.flows.iter().filter(|f| f.src % 32 == 5 || f.dst % 32 == 5).all(|f| f.src < 32));
    assert!((ideal(&port) / ideal(&one) - 1.0).abs() < 0.01, "ideal {} us against {} us", ideal(&port), ideal(&one));
    assert!(done(&port) <= 1.10 * ideal(&port), "{} us against {} us", done(&port), ideal(&port));
}

#[test]
fn planes_are_refused_by_name() {
    assert_refused(&[
        (planes(0, ""), "topology.planes", "allowed 1..=8"),
        (planes(9, ""), "topology.planes", "allowed 1..=8"),
        (planes(2, "").replace("kind = \"rail_optimized\"", "kind = \"fat_tree\"").replace("servers = 8\n        servers_per_su = 4\n", ""), "topology.planes", "only for kind"),
    ]);
}

//= type=test
//# Dual-ToR (Alibaba HPN): each GPU's NIC has two 200 G ports on the two leaves of a pair, and
//# every connection is striped over them: the permutation finishes as on one 400 G port per GPU
//# (the same ideal, the CCT within 3 %). With one leaf of a pair down (every cable of tor1
//# removed), its GPUs keep their other port: their connections run on port 1 alone, at half
//# the rate, and bound the run (the ideal doubles; the run within 10 % of it).
#[test]
fn dual_tor_stripes_over_a_leaf_pair_and_survives_one_leaf() {
    let dual = |extra: &str| planes(1, extra).replace("planes = 1", "dual_tor = true");
    let both = common::run(&dual(""));
    let fat = common::run(&planes(1, "").replace("link_rate_gbps = 200", "link_rate_gbps = 400"));
    let done = |r: &fabricsim::Results| r.summary.completion_time_us;
    let ideal = |r: &fabricsim::Results| r.summary.ideal_completion_time_us;
    assert_eq!(both.flows.len(), 64);
    assert!((ideal(&both) / ideal(&fat) - 1.0).abs() < 1e-3 && done(&both) <= 1.03 * done(&fat), "{} / {} us against {} / {} us", done(&both), ideal(&both), done(&fat), ideal(&fat));
    let down = common::run(&dual("[topology.failures]\nkind = \"tor_uplinks\"\nlinks = [\"tor1-*\"]"));
    // tor1 is leaf 1 of unit 0 (port 0 of rail 1's GPUs 1, 5, 9, 13): their 8 connections go
    // to port 1 only.
    assert_eq!(down.flows.len(), 56);
    let under = |h: u32| [1, 5, 9, 13].contains(&(h % 32));
    assert!(down.flows.iter().filter(|f| under(f.src) || under(f.dst)).all(|f| f.src >= 32 && f.dst >= 32));
    let ratio = ideal(&down) / ideal(&both);
    assert!((1.9..=2.05).contains(&ratio), "the ideal grew {ratio}x");
    assert!(done(&down) <= 1.10 * ideal(&down), "{} us against {} us", done(&down), ideal(&down));
}

#[test]
fn dual_tor_is_refused_where_it_does_not_apply() {
    let dual = planes(1, "").replace("planes = 1", "dual_tor = true");
    assert_refused(&[
        (dual.replace("servers_per_su = 4", "servers_per_su = 4\n        tiers = 3"), "topology.dual_tor", "only with tiers = 2"),
        (dual.replace("dual_tor = true", "dual_tor = true\n        planes = 2"), "topology.dual_tor", "planes"),
        (dual.replace("kind = \"rail_optimized\"", "kind = \"fat_tree\"").replace("servers = 8\n        servers_per_su = 4\n", ""), "topology.dual_tor", "only for kind"),
    ]);
}

//= type=test
//# Per-packet port choice (`nic_port_choice = "packet"`, htsim's multi-port UEC NIC): one
//# connection per pair of GPUs whose packets leave on whichever NIC port is free next. On two
//# healthy planes of 200 G both carry the same bytes (within 2 %) and the permutation runs as
//# on one plane of 400 G (the same ideal within 1 %, the CCT within 3 %). With GPU 5's port on
//# plane 1 removed, GPU 5's two connections run on plane 0 alone: the ideal doubles and the run
//# stays within 10 % of it, GPU 5's plane-1 link idle.
#[test]
fn packets_spread_over_a_nics_ports_as_one_wider_port() {
    let packet = |extra: &str| planes(2, extra).replace("planes = 2", "planes = 2\n        nic_port_choice = \"packet\"");
    let both = common::run(&packet(""));
    assert_eq!(both.flows.len(), 32, "one connection per pair of GPUs");
    let ps = both.summary.planes.as_ref().expect("planes in summary.json");
    let (a, b) = (ps[0].gpu_tx_bytes as f64, ps[1].gpu_tx_bytes as f64);
    assert!((a / b - 1.0).abs() < 0.02, "plane bytes {a} and {b}");
    let fat = common::run(&planes(1, "").replace("link_rate_gbps = 200", "link_rate_gbps = 400"));
    let done = |r: &fabricsim::Results| r.summary.completion_time_us;
    let ideal = |r: &fabricsim::Results| r.summary.ideal_completion_time_us;
    assert!((ideal(&both) / ideal(&fat) - 1.0).abs() < 0.01, "ideals {} and {} us", ideal(&both), ideal(&fat));
    assert!(done(&both) >= ideal(&both) && done(&both) <= 1.03 * done(&fat), "{} us against {} us on one plane of 400 G", done(&both), done(&fat));
    let port = common::run(&packet("[topology.failures]\nkind = \"tor_uplinks\"\nlinks = [\"gpu5.p1-tor9\"]"));
    assert_eq!(port.flows.len(), 32);
    let ratio = ideal(&port) / ideal(&both);
    assert!((1.9..=2.05).contains(&ratio), "the ideal grew {ratio}x");
    assert!(done(&port) <= 1.10 * ideal(&port), "{} us against {} us", done(&port), ideal(&port));
    let gpu5_p1 = port.ports.iter().find(|p| p.link == "gpu5.p1-tor9").expect("GPU 5's plane-1 link in ports.csv");
    assert_eq!(gpu5_p1.tx_bytes, 0);
}

//= type=test
//# One plane slowed (plane 1's leaf uplinks at a quarter of their rate) under PFC with the NIC
//# sending at line rate, 32 MiB per GPU. Striped, half of every transfer must cross plane 1:
//# its bound is that half at plane 1's uplink rate. Sprayed per packet, plane 1's leaves pause
//# their NIC ports and the free port on plane 0 takes the packets: the bound is the bytes at the
//# two planes' uplinks together (0.4 of the striped one: 200 + 50 G against 100 G per GPU's
//# half), plane 0 carries more than twice plane 1's bytes, and the run finishes in under 55 %
//# of the striped run's time, above its own ideal.
#[test]
fn packets_move_off_a_slowed_plane_when_its_leaves_pause_the_nic() {
    let slowed = |choice: &str| {
        planes(2, "[topology.failures]\nkind = \"tor_uplinks\"\nmodel = \"degraded\"\ndegraded_rate_factor = 0.25\nlinks = [\"tor8-spine*\", \"tor9-spine*\", \"tor10-spine*\", \"tor11-spine*\", \"tor12-spine*\", \"tor13-spine*\", \"tor14-spine*\", \"tor15-spine*\"]")
            .replace("planes = 2", &format!("planes = 2\n        nic_port_choice = \"{choice}\""))
            .replace("buffer_bytes = \"16MiB\"", "trimming = false\n        [switch.pfc]\n        enabled = true")
            .replace("cc = { name = \"fixed\", window_bdp = 2.0 }", "cc = \"line_rate\"")
            .replace("flow_bytes = \"4MiB\"", "flow_bytes = \"32MiB\"")
    };
    let (striped, packet) = (common::run(&slowed("striped")), common::run(&slowed("packet")));
    let done = |r: &fabricsim::Results| r.summary.completion_time_us;
    let ideal = |r: &fabricsim::Results| r.summary.ideal_completion_time_us;
    let ratio = ideal(&packet) / ideal(&striped);
    assert!((0.38..=0.42).contains(&ratio), "ideal ratio {ratio}");
    let ps = packet.summary.planes.as_ref().unwrap();
    assert!(ps[0].gpu_tx_bytes > 2 * ps[1].gpu_tx_bytes, "{ps:?}");
    assert!(done(&packet) >= ideal(&packet) && done(&packet) <= 0.55 * done(&striped), "{} us against {} us striped", done(&packet), done(&striped));
}

//= type=test
//# The plane as a path choice (`nic_port_choice = "entropy"`: each packet on the port its
//# entropy selects). Healthy, spraying's random entropies split the bytes evenly over the two
//# planes (within 2 %) and the permutation runs within 10 % of one 400 G plane (8 % measured:
//# a packet for a busy port waits behind it). With plane 1's
//# leaf uplinks at a quarter of their rate, NSCC + REPS on 1-BDP trimming buffers, 16 MiB per
//# GPU: REPS keeps the entropies that came back unmarked, which are plane 0's, so plane 0
//# carries more than twice plane 1's bytes and the run finishes within 15 % of the ideal of
//# the two planes together (plane 0's 200 G plus plane 1's 50 G per leaf port) and in under
//# half the time of the same run with the NIC's next free port (which splits evenly and is
//# bound by plane 1, as striping is).
#[test]
fn the_entropy_chooses_the_plane_and_reps_steers_off_a_slowed_one() {
    let by = |choice: &str, extra: &str| planes(2, extra).replace("planes = 2", &format!("planes = 2\n        nic_port_choice = \"{choice}\""));
    let healthy = common::run(&by("entropy", ""));
    let ps = healthy.summary.planes.as_ref().unwrap();
    let (a, b) = (ps[0].gpu_tx_bytes as f64, ps[1].gpu_tx_bytes as f64);
    assert!((a / b - 1.0).abs() < 0.02, "plane bytes {a} and {b}");
    let fat = common::run(&planes(1, "").replace("link_rate_gbps = 200", "link_rate_gbps = 400"));
    let done = |r: &fabricsim::Results| r.summary.completion_time_us;
    let ideal = |r: &fabricsim::Results| r.summary.ideal_completion_time_us;
    assert!(done(&healthy) <= 1.10 * done(&fat), "{} us against {} us on one plane of 400 G", done(&healthy), done(&fat));
    let slowed = |choice: &str| {
        by(choice, "[topology.failures]\nkind = \"tor_uplinks\"\nmodel = \"degraded\"\ndegraded_rate_factor = 0.25\nlinks = [\"tor8-spine*\", \"tor9-spine*\", \"tor10-spine*\", \"tor11-spine*\", \"tor12-spine*\", \"tor13-spine*\", \"tor14-spine*\", \"tor15-spine*\"]")
            .replace("lb = \"spray\"", "lb = \"reps\"")
            .replace("cc = { name = \"fixed\", window_bdp = 2.0 }", "cc = \"nscc\"\n        reliability = \"sack\"")
            .replace("buffer_bytes = \"16MiB\"", "buffer_bdp = 1.0")
            .replace("flow_bytes = \"4MiB\"", "flow_bytes = \"16MiB\"")
    };
    let (steered, free) = (common::run(&slowed("entropy")), common::run(&slowed("packet")));
    let ps = steered.summary.planes.as_ref().unwrap();
    assert!(ps[0].gpu_tx_bytes > 2 * ps[1].gpu_tx_bytes, "{ps:?}");
    assert!(done(&steered) <= 1.15 * ideal(&steered), "{} us against its ideal {} us", done(&steered), ideal(&steered));
    assert!(done(&steered) < 0.5 * done(&free), "{} us against {} us with the next free port", done(&steered), done(&free));
}

#[test]
fn packet_port_choice_is_refused_where_it_does_not_apply() {
    let packet = planes(2, "").replace("planes = 2", "planes = 2\n        nic_port_choice = \"packet\"");
    assert_refused(&[
        (packet.replace("planes = 2", "planes = 1"), "topology.nic_port_choice", "planes > 1 or dual_tor"),
        (packet.replace("nic_port_choice = \"packet\"", "nic_port_choice = \"flowlet\""), "nic_port_choice", "packet"),
        (packet.replace("[transport]", "[transport]\n        credit = \"eqds\""), "topology.nic_port_choice", "credit"),
    ]);
}
