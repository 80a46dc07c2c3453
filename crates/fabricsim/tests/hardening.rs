//! Issue 20's classes of bad input, one test each: every one is refused at validation with a
//! message naming its key and what is allowed — never a panic, a hang, a wrapped value or a
//! silently clamped one.
mod common;

use common::rejection;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting what each thread holds and the most it has held since
/// [`peak_reset`]: a refusal that must come "at once" is checked by what it allocated first
/// (nothing large), which a busy machine cannot change, instead of by how long it took.
struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: a thread being torn down has no counters left; its frees go uncounted.
    let _ = HELD.try_with(|h| {
        let now = h.get() + delta;
        h.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes this thread allocated at its peak while `f` ran, beyond what it held before.
fn peak_allocated_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    (out, (PEAK.with(Cell::get) - before).max(0) as usize)
}

/// What a refusal "at once" may allocate: the scenario, its messages and small tables. Building
/// the smallest fabric these tests name (k = 32, 8192 hosts) takes about 40 MB; a k = 64 one
/// 200 MB.
const AT_ONCE_BYTES: usize = 16 << 20;

/// `rejection` of `toml`, asserting the message names `key` and contains every one of `words`.
fn refused(toml: &str, key: &str, words: &[&str]) {
    let e = rejection(toml);
    assert!(e.contains(&format!("`{key}`")), "expected key {key}: {e}");
    for w in words {
        assert!(e.contains(w), "expected {w:?}: {e}");
    }
}

#[test]
fn rates_that_would_round_to_zero_bits_per_second_are_refused() {
    refused("[topology]\nk = 4\nlink_rate_gbps = 1e-12\n", "topology.link_rate_gbps", &["0.001..=1000000"]);
    refused("[topology]\nk = 4\nhost_link_rate_gbps = \"1e-300\"\n", "topology.host_link_rate_gbps", &[]);
    refused(
        "[topology]\nk = 4\n[[link_events]]\nat_us = 1\nlink = \"tor0-agg0\"\naction = \"rate\"\nrate_gbps = 1e-12\n",
        "link_events[0].rate_gbps",
        &["0.001..=1000000"],
    );
    // A degraded link of (factor × rate) below 1 Mb/s: refused, not clamped to 1 b/s.
    refused(
        "[topology]\nk = 4\n[topology.failures]\ntors = 1\nuplinks_per_tor = 1\nmodel = \"degraded\"\ndegraded_rate_factor = 1e-300\n",
        "topology.failures.degraded_rate_factor",
        &["allowed rates"],
    );
}

#[test]
fn flows_beyond_the_packet_count_are_refused_naming_the_size_key() {
    refused("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nsenders = 2\nflow_bytes = 9223372036854775807\n", "workload.flow_bytes", &["4294967295"]);
    // 2^32 packets exactly: one too many.
    refused("[topology]\nk = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = 17317308137472\n", "workload.flow_bytes", &["per connection"]);
}

#[test]
fn huge_host_counts_are_refused_at_once() {
    // (The radix search is bounded by the largest radix: a loop would hang this test.)
    for kind in ["fat_tree", "leaf_spine"] {
        refused_at_once(&format!("[topology]\nkind = \"{kind}\"\nhosts = 4294967295\n"), "topology.hosts", &["524288"]);
    }
}

#[test]
fn times_and_sizes_that_would_overflow_are_refused_with_their_range() {
    refused("[topology]\nk = 4\nlink_latency_ns = 1e18\n", "topology.link_latency_ns", &["1e18", "0..=1000000000000"]);
    refused("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nsenders = 2\nstart_us = 1e300\n", "workload.start_us", &["1e300", "0..=1000000000"]);
    refused("[topology]\nk = 4\n[switch]\nbuffer_bytes = \"100000GiB\"\n", "switch.buffer_bytes", &["1099511627776"]);
    refused("[topology]\nk = 4\n[switch]\nbuffer_bytes = \"10000000000GiB\"\n", "switch.buffer_bytes", &["9223372036854775807"]);
    refused("[topology]\nk = 4\n[switch]\nbuffer_bdp = 1e12\n", "switch.buffer_bdp", &["0.0001..=1000000"]);
    // Within its range, a multiple of a long path's BDP can still give more than 1 TiB.
    refused("[topology]\nk = 4\nlink_latency_ns = 1e9\n[switch]\nbuffer_bdp = 1e5\n", "switch.buffer_bdp", &["1099511627776"]);
    refused("[topology]\nk = 4\n[transport]\nrto_us = 1e300\n", "transport.rto_us", &["1e300", "0..=1000000000"]);
    // Slow links behind deep buffers: the derived RTO would exceed any run, not wrap.
    refused("[topology]\nk = 4\nlink_rate_gbps = 0.001\n[switch]\nbuffer_bytes = \"1024GiB\"\n", "transport.rto_us", &["derived"]);
    refused("[topology]\nk = 4\n[run]\nend_time_us = 1e300\n", "run.end_time_us", &["0..=1000000000"]);
    refused("[topology]\nk = 8\n[topology.failures]\nkind = \"flaky\"\nburst_gap_us = 1e300\n", "topology.failures.burst_gap_us", &["1e300"]);
}

#[test]
fn deadlocks_livelocks_and_lossy_lossless_fabrics_are_refused() {
    refused("[topology]\nk = 4\n[transport]\ncredit = { name = \"eqds\", unsolicited_bdp = 0 }\n", "transport.credit.unsolicited_bdp", &["allowed"]);
    refused("[topology]\nk = 4\n[transport]\ncc = { name = \"line_rate\", fraction = 1e-300 }\n", "transport.cc.fraction", &["1e-300", "allowed"]);
    refused(
        "[topology]\nk = 4\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\nheadroom_bytes = 0\n",
        "switch.pfc.headroom_bytes",
        &["8192"],
    );
}

#[test]
fn incast_with_both_a_count_and_a_list_of_senders_is_refused() {
    refused("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nsenders = 2\nsender_hosts = [1, 2, 3]\n", "workload.senders", &["not both"]);
}

#[test]
fn a_missing_collective_trace_names_its_key() {
    refused("[topology]\nk = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 4\ntrace = \"no-such-trace.json\"\n", "workload.jobs[0].trace", &["cannot read"]);
}

#[test]
fn mixed_congestion_controls_are_checked_under_their_own_key() {
    let base = "[topology]\nk = 4\n[transport]\ncc = \"swift\"\n";
    refused(&format!("{base}[[transport.cc_by_source]]\nhosts = [16]\ncc = \"bbr\"\n"), "transport.cc_by_source[0].hosts", &["does not exist"]);
    refused(&format!("{base}[[transport.cc_by_source]]\nhosts = [1, 1]\ncc = \"bbr\"\n"), "transport.cc_by_source[0].hosts", &["twice"]);
    refused(&format!("{base}[[transport.cc_by_source]]\nhosts = [1]\ncc = {{ name = \"line_rate\", fraction = 0 }}\n"), "transport.cc_by_source[0].cc.fraction", &[]);
    refused(&format!("{base}[[transport.cc_by_source]]\nhosts = [1]\ncc = \"dcqcn\"\n"), "transport.cc_by_source[0].cc", &["dcqcn"]);
}

/// Whether a listed default is a number (not a boolean, a name or unset).
fn numeric(default: &str) -> bool {
    default.parse::<f64>().is_ok()
}

#[test]
fn every_numeric_scheme_parameter_declares_a_range_that_validation_enforces() {
    for family in fabricsim::registry::families().into_iter().filter(|f| f.key.starts_with("transport.") || f.key == "switch.lb") {
        for s in family.schemes {
            for p in (s.params)() {
                if !numeric(&p.default) && p.allowed.is_none() {
                    continue;
                }
                let allowed = p.allowed.unwrap_or_else(|| panic!("{}.{}: `{}` (default {}) declares no range", family.key, s.name, p.key, p.default));
                if !family.key.starts_with("transport.") {
                    continue;
                }
                // Far outside any range: refused, naming the key (as a range, or as a value its
                // type cannot hold); a float parameter also names its range.
                let toml = format!("[topology]\nk = 4\n[{}]\nname = \"{}\"\n{} = 1e300\n", family.key, s.name, p.key);
                let e = rejection(&toml);
                let key = format!("{}.{}", family.key, p.key);
                assert!(e.contains(&key) || e.contains(&format!("`{}`", p.key)), "{toml}\n{e}");
                if p.default.contains('.') {
                    assert!(e.contains(&allowed), "{key}: {e} (allowed {allowed})");
                }
            }
        }
    }
}

#[test]
fn zero_tiny_huge_and_two_to_the_40_are_refused_where_meaningless() {
    for (table, name, key, v) in [
        ("transport.credit", "eqds", "transport.credit.unsolicited_bdp", "0"),
        ("transport.cc", "line_rate", "transport.cc.fraction", "1e-300"),
        ("transport.cc", "smartt", "transport.cc.trtt_ratio", "1e300"),
        ("transport.cc", "bbr", "transport.cc.min_rtt_window_us", "1e300"),
        ("transport.cc", "fixed", "transport.cc.window_bdp", "1099511627776.0"),
        ("transport.lb", "reps", "transport.lb.entropies", "1099511627776"),
        ("transport.lb", "plb", "transport.lb.rounds", "0"),
        ("transport.cc", "dcqcn", "transport.cc.rate_timer_us", "0"),
    ] {
        let param = key.rsplit('.').next().unwrap();
        let e = rejection(&format!("[topology]\nk = 4\n[{table}]\nname = \"{name}\"\n{param} = {v}\n"));
        assert!(e.contains(key) || e.contains(&format!("`{param}`")), "{key} = {v}: {e}");
    }
}

#[test]
fn workloads_of_more_flows_than_memory_holds_are_refused_before_generating_them() {
    refused_at_once("[topology]\nk = 8\n[workload]\nkind = \"permutation\"\npermutations = 4294967295\n", "workload.permutations", &["50000000"]);
    refused_at_once("[topology]\nk = 32\n[workload]\nkind = \"all_to_all\"\nhosts = 8000\n", "workload.hosts", &["8000 hosts × 7999 peers"]);
    // Within the flow limit but not within memory: 390,625 permutations of 128 hosts are
    // 5·10⁷ connections, whose run state alone (about 1.2 KB each) is 60 GB; refused from the
    // counts, before 5·10⁷ flows are drawn (which took 10 s and 4.5 GB).
    let small = fabricsim::budget::Budget { bytes: 12e9 };
    let s = fabricsim::Scenario::from_toml("[topology]\nk = 8\n[workload]\nkind = \"permutation\"\npermutations = 390625\n", &[]).unwrap();
    let (e, peak) = peak_allocated_by(|| s.setup_within(std::path::Path::new("."), small).map(|_| ()).unwrap_err().to_string());
    assert!(e.contains("`workload.permutations`") && e.contains("to set up and run") && e.contains("50000000 flows"), "{e}");
    assert!(peak < AT_ONCE_BYTES, "{peak} bytes allocated before the refusal");
}

/// One 4 MiB flow host 0 → host 15 of a k = 4 fat tree whose last hop goes down for good at
/// 20 µs (no re-routing): the sender keeps retransmitting into a dead link, acknowledged never
/// again. `extra` adds to `[run]`.
fn dead_last_hop(extra: &str) -> String {
    format!(
        "[topology]\nk = 4\nlink_rate_gbps = 100\n[transport]\nlb = \"ecmp\"\n[workload]\nkind = \"incast\"\nreceiver = 15\nsender_hosts = [0]\nflow_bytes = \"4MiB\"\n\
         [[link_events]]\nat_us = 20\nlink = \"tor7-host15\"\naction = \"down\"\n[run]\nstall_limit_us = 300\nend_time_us = 5000\nack_log_conns = [0]\n{extra}"
    )
}

#[test]
fn the_livelock_guard_stops_exactly_one_limit_after_the_last_acknowledgement() {
    let r = common::run_unchecked(&dead_last_hop(""));
    let s = &r.summary;
    let since = s.stalled_since_us.expect("the guard must fire");
    // The last ACK the sender received (every ACK of this lone flow acknowledges new data).
    let last_ack = r.acks.iter().map(|a| a.0).max().expect("some ACKs arrived");
    assert_eq!(since, last_ack.0 as f64 / 1e6, "stalled since the last acknowledgement, to the picosecond");
    assert!(since > 20.0 && since < 40.0, "the link went down at 20 µs (ACKs then in flight still arrive): {since}");
    let v = s.invariant_violations.iter().find(|v| v.starts_with("livelock")).expect("a livelock violation");
    assert!(v.contains(&format!("from {since:.3} to {:.3} µs", since + 300.0)), "stopped exactly 300 µs later: {v}");
    assert!(!s.stopped_at_end_time);
}

/// Found by the fuzzer: on a lossless fabric the RTO defaults to 4 ms, so a packet dropped on
/// purpose (`run.drop_packets`; `sack` finds such a loss by the timeout alone) is not resent
/// before a 500 µs stall limit stops the run. The violation says so, naming the RTO.
#[test]
fn a_stall_within_the_retransmission_timeout_names_it() {
    let r = common::run_unchecked(
        "[topology]\nk = 4\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\n[transport]\ncc = \"line_rate\"\n\
         [workload]\nkind = \"incast\"\nreceiver = 15\nsender_hosts = [0]\nflow_bytes = \"256KiB\"\n\
         [run]\nstall_limit_us = 500\n[[run.drop_packets]]\nflow = 0\nseq = 1\n",
    );
    let v = r.summary.invariant_violations.iter().find(|v| v.starts_with("livelock")).expect("a livelock violation");
    assert!(v.contains("retransmission timeout, 4000.000 µs, is not shorter"), "{v}");
    // Without a stall limit below it, the timeout resends the packet and the flow finishes.
    let r = common::run(
        "[topology]\nk = 4\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\n[transport]\ncc = \"line_rate\"\n\
         [workload]\nkind = \"incast\"\nreceiver = 15\nsender_hosts = [0]\nflow_bytes = \"256KiB\"\n\
         [[run.drop_packets]]\nflow = 0\nseq = 1\n",
    );
    assert_eq!(r.summary.flows_finished, 1);
    // A stall that is not the timeout's says nothing of it.
    let dead = common::run_unchecked(&dead_last_hop(""));
    assert!(dead.summary.invariant_violations.iter().any(|v| v.starts_with("livelock") && !v.contains("retransmission timeout")));
}

#[test]
fn idle_gaps_longer_than_the_stall_limit_are_no_livelock() {
    // Flows that start long after the limit, and a compute gap longer than it: nothing is
    // outstanding meanwhile, so the guard's clock does not run.
    let late = common::run("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nsenders = 2\nflow_bytes = \"64KiB\"\nstart_us = 1000\n[run]\nstall_limit_us = 50\n");
    assert!(late.summary.stalled_since_us.is_none());
    let gaps = common::run(
        "[topology]\nk = 4\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 4\niterations = 3\ncompute_gap_us = 200\n\
         collectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]\n[run]\nstall_limit_us = 50\n",
    );
    assert!(gaps.summary.stalled_since_us.is_none());
}

/// `rejection` of `toml` naming `key`, which must come at once: before anything large (a
/// fabric, a workload's flows) is allocated.
fn refused_at_once(toml: &str, key: &str, words: &[&str]) {
    let ((), peak) = peak_allocated_by(|| refused(toml, key, words));
    assert!(peak < AT_ONCE_BYTES, "{key}: {peak} bytes allocated before the refusal");
}

/// A collectives workload of one `ranks`-rank job, `extra` lines in its `[[workload.jobs]]`.
fn collective_job(ranks: u32, extra: &str) -> String {
    format!("[topology]\nk = 8\n[workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = {ranks}\n{extra}\n")
}

#[test]
fn collectives_too_large_to_build_are_refused_before_building_them() {
    // Each would need terabytes of task graph; each is refused from its counts, naming the key
    // that makes it large (the chunk, the bytes, the iterations).
    let chunk = collective_job(8, "chunk = 1\ncollectives = [{ op = \"allreduce\", bytes = \"1GiB\" }]");
    refused_at_once(&chunk, "workload.jobs[0].chunk", &["to set up", "messages"]);
    let default_chunk = collective_job(8, "collectives = [{ op = \"allreduce\", bytes = \"1GiB\" }]").replace("kind = \"collectives\"", "kind = \"collectives\"\nchunk = 1");
    refused_at_once(&default_chunk, "workload.chunk", &["to set up"]);
    let huge = collective_job(8, "collectives = [{ op = \"allreduce\", bytes = 1152921504606846976 }]");
    refused_at_once(&huge, "workload.jobs[0].collectives[0].bytes", &["to set up"]);
    let iterations = collective_job(64, "iterations = 100000\ncollectives = [{ op = \"allreduce\", bytes = \"1GiB\" }]");
    refused_at_once(&iterations, "workload.jobs[0].iterations", &["100000 iterations"]);
    let a2a = collective_job(128, "collectives = [{ op = \"alltoall\", bytes = \"1000GiB\" }]");
    refused_at_once(&a2a, "workload.jobs[0].collectives[0].bytes", &["to set up"]);
}

#[test]
fn fabrics_whose_route_tables_exceed_memory_are_refused_before_building_them() {
    // Valid shapes (under 2^20 hosts and cables) whose switch × ToR route table takes terabytes.
    refused_at_once("[topology]\nkind = \"leaf_spine\"\ntors = 1000000\nhosts_per_tor = 1\nspines = 1\n", "topology.tors", &["route entries"]);
    refused_at_once("[topology]\npods = 1024\ntors_per_pod = 1000\naggs_per_pod = 1\nhosts_per_tor = 1\ncores = 1\n", "topology.pods", &["route entries"]);
    // The largest fat tree within a 1 GB budget: its 168 million route entries need 1.5 GB.
    let small = fabricsim::budget::Budget { bytes: 1e9 };
    let e = fabricsim::Scenario::from_toml("[topology]\nk = 128\n", &[]).unwrap().setup_within(std::path::Path::new("."), small).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("`topology.k`") && e.contains("167772160 route entries"), "{e}");
}

#[test]
fn tracing_every_picosecond_and_the_largest_all_to_all_are_refused() {
    refused_at_once("[topology]\nk = 4\n[run]\ntrace_interval_us = 1e-6\n", "run.trace_interval_us", &["0.001..="]);
    refused_at_once("[topology]\nk = 64\n[workload]\nkind = \"all_to_all\"\n", "topology", &["65536 hosts × 65535 peers"]);
}

#[test]
fn input_files_that_never_end_are_refused_without_reading_them() {
    // /dev/zero would be read until memory runs out, a pipe until someone writes to it.
    refused_at_once("[topology]\nk = 4\n[workload]\nkind = \"open_loop\"\ncdf = \"/dev/zero\"\nflows = 10\n", "workload.cdf", &["not a regular file"]);
    refused_at_once("[topology]\nk = 4\n[workload]\nkind = \"flow_list\"\nfile = \"/dev/urandom\"\n", "workload.file", &["not a regular file"]);
    refused_at_once(&collective_job(4, "trace = \"/dev/zero\""), "workload.jobs[0].trace", &["not a regular file"]);
    refused_at_once("[topology]\nk = 4\n[workload]\nkind = \"flow_list\"\nfile = \"/\"\n", "workload.file", &["not a regular file"]);
    let e = fabricsim::Scenario::from_file(std::path::Path::new("/dev/zero"), &[]).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn byte_counts_a_resolved_scenario_cannot_write_back_are_refused() {
    // Found by the fuzzer: a chunk of 2^63 bytes (a string; TOML integers stop at 2^63 − 1) was
    // accepted, and the resolved scenario `check` prints and summary.json echoes came out empty.
    refused_at_once(&collective_job(4, "collectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]").replace("kind = \"collectives\"", "kind = \"collectives\"\nchunk = \"9223372036854775808\""), "workload", &["9223372036854775807"]);
    let s = fabricsim::Scenario::from_toml(&collective_job(4, "chunk = \"9223372036854775807\"\ncollectives = [{ op = \"allreduce\", bytes = \"64KiB\" }]"), &[]).unwrap();
    let resolved = s.to_toml();
    assert!(resolved.contains("chunk = 9223372036854775807"), "{resolved}");
    assert_eq!(fabricsim::Scenario::from_toml(&resolved, &[]).unwrap().to_toml(), resolved);
}

#[test]
fn the_allocation_counter_sees_a_fabric_being_built() {
    // The instrument of the "at once" checks: a k = 16 fat tree's setup allocates megabytes.
    let s = fabricsim::Scenario::from_toml("[topology]\nk = 16\n", &[]).unwrap();
    let (setup, peak) = peak_allocated_by(|| s.setup(std::path::Path::new(".")).unwrap());
    assert_eq!(setup.fabric.hosts, 1024);
    assert!(peak > 1 << 20, "{peak} bytes");
}

#[test]
fn oversized_workloads_on_large_fabrics_are_refused_before_the_fabric_is_built() {
    // Issue 49: a k = 64 all-to-all (4.3·10⁹ flows) took 15 s, building 65,536 hosts' routes
    // first. A flow list naming a host the fabric lacks, an oversized permutation and collective
    // likewise come before the fabric.
    refused_at_once("[topology]\nk = 64\n[workload]\nkind = \"all_to_all\"\n", "topology", &["65536 hosts × 65535 peers"]);
    refused_at_once("[topology]\nk = 64\n[workload]\nkind = \"permutation\"\npermutations = 1000\n", "workload.permutations", &["65536 hosts × 1000 permutations"]);
    refused_at_once(
        "[topology]\nk = 64\n[workload]\nkind = \"collectives\"\nchunk = 1\n[[workload.jobs]]\nranks = 8\ncollectives = [{ op = \"allreduce\", bytes = \"1GiB\" }]\n",
        "workload.chunk",
        &["to set up"],
    );
    let dir = std::env::temp_dir().join(format!("fabricsim-hardening-early-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("flows.csv"), "src,dst,bytes,start_us\n0,70000,1000,0\n").unwrap();
    let s = fabricsim::Scenario::from_toml("[topology]\nk = 64\n[workload]\nkind = \"flow_list\"\nfile = \"flows.csv\"\n", &[]).unwrap();
    let (e, peak) = peak_allocated_by(|| s.setup(&dir).map(|_| ()).unwrap_err().to_string());
    assert!(e.contains("host 70000 does not exist"), "{e}");
    assert!(peak < AT_ONCE_BYTES, "{peak} bytes allocated before the refusal");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flaky_bursts_too_long_to_ever_end_are_refused() {
    // Issue 49: burst_len_us / burst_gap_us = 20 hung setup drawing one merged burst of ~e^20.
    refused("[topology]\nk = 8\n[topology.failures]\nkind = \"flaky\"\nburst_len_us = 2000\n", "topology.failures.burst_len_us", &["20 times", "at most 10"]);
    // At the limit it runs.
    let r = common::run_unchecked("[topology]\nk = 8\n[topology.failures]\nkind = \"flaky\"\nburst_len_us = 1000\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n[run]\nend_time_us = 200\n");
    assert!(r.summary.stopped_at_end_time || r.summary.flows_finished > 0);
}

#[test]
fn an_open_loop_load_that_spreads_arrivals_past_any_run_is_refused() {
    // Issue 49: load 1e-9 started flows at 1.3·10¹¹ µs; 1e-300 wrapped start and FCT.
    for load in ["1e-9", "1e-300"] {
        refused(&format!("[topology]\nk = 4\n[workload]\nkind = \"open_loop\"\ncdf = \"websearch\"\nflows = 100\nload = {load}\n"), "workload.load", &["past the 1000000000 µs"]);
    }
    // A small load that stays within the horizon still runs its flows.
    let s = fabricsim::Scenario::from_toml("[topology]\nk = 4\n[workload]\nkind = \"open_loop\"\ncdf = \"websearch\"\nflows = 10\nload = 0.01\n", &[]).unwrap().setup(std::path::Path::new(".")).unwrap();
    assert_eq!(s.traffic.conns.len(), 10);
}

#[test]
fn settings_below_their_physical_floor_are_refused_naming_the_key() {
    // Issue 49's "accepted nonsense": each names its key and the floor or relation it breaks.
    refused("[topology]\nk = 4\n[switch]\ncontrol_lane = \"separate\"\ncontrol_lane_factor = 0.000001\n", "switch.control_lane_factor", &["cannot hold one ACK"]);
    refused("[topology]\nk = 4\n[transport]\nrto_us = 0.000001\n", "transport.rto_us", &["nearest pair of hosts"]);
    refused("[topology]\nk = 4\n[switch]\necn_kmin_bytes = \"1GiB\"\necn_kmax_bytes = \"2GiB\"\n", "switch.ecn_kmin_bytes", &["exceeds the port's"]);
    let pfc = "[topology]\nk = 4\n[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\n";
    refused(&format!("{pfc}resume_offset_bytes = \"1GiB\"\n"), "switch.pfc.resume_offset_bytes", &["below the largest XOFF threshold"]);
    refused(&format!("{pfc}[transport]\ncc = {{ name = \"dcqcn\", min_rate_mbps = 1e9 }}\n"), "transport.cc.min_rate_mbps", &["above the host link rate"]);
    refused("[topology]\nk = 4\n[run]\nstall_limit_us = 0.000001\n", "run.stall_limit_us", &["nearest pair of hosts"]);
    // 0 still switches the guard off.
    assert!(common::run("[topology]\nk = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n[run]\nstall_limit_us = 0\n").summary.stalled_since_us.is_none());
}

#[test]
fn the_slowest_documented_link_rate_runs_without_tripping_the_stall_guard() {
    // Issue 49: at 1 Mb/s a 4 KB packet takes 33 ms a hop, past the 10 ms default stall limit:
    // every run ended in a livelock. The default now covers a timeout and a round trip.
    let r = common::run("[topology]\nk = 4\nlink_rate_gbps = 0.001\n[switch]\nbuffer_bytes = \"64KiB\"\n[workload]\nkind = \"incast\"\nsenders = 2\nflow_bytes = \"8KiB\"\n");
    assert_eq!(r.summary.flows_finished, 2);
    assert!(r.summary.stalled_since_us.is_none());
}
