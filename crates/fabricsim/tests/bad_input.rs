//! Every class of bad input gets one clear error naming the key and what is allowed.
mod common;
use common::rejection;

#[test]
fn unknown_key_names_the_key_and_the_allowed_ones() {
    let e = rejection("[topology]\nradix = 8\n");
    assert!(e.contains("topology") && e.contains("unknown field `radix`") && e.contains("`k`"), "{e}");
    let e = rejection("colour = 1\n");
    assert!(e.contains("unknown field `colour`") && e.contains("`topology`"), "{e}");
}

#[test]
fn unknown_scheme_lists_the_registered_ones() {
    let e = rejection("[transport]\ncc = \"cubic\"\n");
    assert!(e.contains("transport.cc") && e.contains("unknown congestion control `cubic`") && e.contains("`fixed`") && e.contains("`line_rate`"), "{e}");
    let e = rejection("[transport]\nlb = \"magic\"\n");
    assert!(e.contains("`ecmp`") && e.contains("`spray`"), "{e}");
    let e = rejection("[workload]\nkind = \"storm\"\n");
    assert!(e.contains("workload") && e.contains("`permutation`") && e.contains("`incast`"), "{e}");
    let e = rejection("[transport.cc]\nname = \"fixed\"\nwindow = 3\n");
    assert!(e.contains("unknown field `window`") && e.contains("window_bdp"), "{e}");
}

#[test]
fn a_misspelt_key_or_value_gets_a_suggestion_and_a_negative_size_is_called_negative() {
    let e = rejection("[transport]\nmtu_byte = 4096\n");
    assert!(e.contains("transport.mtu_byte") && e.contains("did you mean `mtu_bytes`?"), "{e}");
    let e = rejection("[transport]\ncc = \"smarrt\"\n");
    assert!(e.contains("did you mean `smartt`?"), "{e}");
    let e = rejection("[transport.cc]\nname = \"smartt\"\nqa_scalling = 1.0\n");
    assert!(e.contains("did you mean `qa_scaling`?"), "{e}");
    let e = rejection("[switch]\necn_mark_at = \"dequeu\"\n");
    assert!(e.contains("did you mean `dequeue`?"), "{e}");
    let e = rejection("[workload]\nkind = \"permutation\"\nflow_bytes = \"-5MiB\"\n");
    assert!(e.contains("`-5MiB` is negative"), "{e}");
    let e = rejection("[topology]\nlink_rate_gbps = \"-400G\"\n");
    assert!(e.contains("is negative"), "{e}");
    let e = rejection("[results]\nfair_share = \"offf\"\n");
    assert!(e.contains("results.fair_share") && e.contains("`auto`, `on`, `off`") && e.contains("did you mean `off`?"), "{e}");
}

#[test]
fn a_packet_log_of_a_missing_flow_is_refused() {
    let e = rejection("[topology]\nk = 4\n[run]\npacket_log_conns = [99]\n");
    assert!(e.contains("run.packet_log_conns") && e.contains("flow 99 does not exist"), "{e}");
}

#[test]
fn a_setting_of_switched_off_pfc_is_refused() {
    let e = rejection("[switch.pfc]\nalpha = 0.5\n");
    assert!(e.contains("switch.pfc.alpha") && e.contains("PFC is off") && e.contains("enabled = true"), "{e}");
    // Its defaults written out (as a resolved scenario does) are fine, and so is the key with PFC on.
    let ok = |t: &str| fabricsim::scenario::Scenario::from_toml(t, &[]).and_then(|s| s.setup(std::path::Path::new(".")).map(|_| ()));
    ok("[switch.pfc]\nenabled = false\nalpha = 0.125\n").unwrap();
    ok("[switch]\ntrimming = false\n[switch.pfc]\nenabled = true\nalpha = 0.5\n").unwrap();
}

#[test]
fn wrong_type_names_the_key() {
    let e = rejection("[topology]\nk = \"eight\"\n");
    assert!(e.contains("topology.k") && e.contains("invalid type"), "{e}");
    let e = rejection("[switch]\ntrimming = 1\n");
    assert!(e.contains("switch.trimming") && e.contains("boolean"), "{e}");
    let e = rejection("[workload]\nkind = \"permutation\"\nflow_bytes = \"lots\"\n");
    assert!(e.contains("workload") && e.contains("`flow_bytes`") && e.contains("2MiB"), "{e}");
}

#[test]
fn negative_or_zero_rates_and_times_are_refused() {
    let e = rejection("[topology]\nlink_rate_gbps = -400\n");
    assert!(e.contains("topology.link_rate_gbps") && e.contains("positive"), "{e}");
    let e = rejection("[topology]\nhost_link_rate_gbps = 0\n");
    assert!(e.contains("topology.host_link_rate_gbps"), "{e}");
    let e = rejection("[topology]\nlink_latency_ns = -1\n");
    assert!(e.contains("topology.link_latency_ns") && e.contains("non-negative"), "{e}");
    let e = rejection("[transport]\nmtu_bytes = 64\n");
    assert!(e.contains("transport.mtu_bytes") && e.contains("header_bytes"), "{e}");
    let e = rejection("[switch]\necn_kmin = 1.5\n");
    assert!(e.contains("switch.ecn_kmin") && e.contains("allowed 0..=1"), "{e}");
}

#[test]
fn unbuildable_fabrics_say_what_can_be_built() {
    let e = rejection("[topology]\nk = 8\noversubscription = \"8:1\"\n");
    assert!(e.contains("topology.oversubscription") && e.contains("allowed: 1:1, 2:1, 4:1"), "{e}");
    let e = rejection("[topology]\nk = 7\n");
    assert!(e.contains("topology.k") && e.contains("even"), "{e}");
    let e = rejection("[topology]\nhosts = 1000\n");
    assert!(e.contains("topology.hosts") && e.contains("1024 (k=16)"), "{e}");
    let e = rejection("[topology]\nkind = \"leaf_spine\"\nhosts = 100\n");
    assert!(e.contains("topology.hosts") && e.contains("K²/2"), "{e}");
    let e = rejection("[topology]\noversubscription = \"3:2\"\n");
    assert!(e.contains("topology.oversubscription") && e.contains("\"4:1\""), "{e}");
}

#[test]
fn flows_to_missing_hosts_are_refused() {
    let e = rejection("[topology]\nk = 4\n[workload]\nkind = \"flow_list\"\nfile = \"tests/data/bad_host.csv\"\n");
    assert!(e.contains("workload.file") && e.contains("host 99 does not exist") && e.contains("0..15"), "{e}");
    let e = rejection("[topology]\nk = 4\n[workload]\nkind = \"incast\"\nreceiver = 16\n");
    assert!(e.contains("workload.receiver") && e.contains("host 16 does not exist"), "{e}");
    let e = rejection("[workload]\nkind = \"flow_list\"\nfile = \"tests/data/no_such_file.cm\"\n");
    assert!(e.contains("workload.file") && e.contains("cannot read"), "{e}");
}

#[test]
fn bad_link_events_name_the_entry() {
    let e = rejection("[[link_events]]\nlink = \"tor0-core3\"\naction = \"down\"\n");
    assert!(e.contains("link_events[0].link") && e.contains("not linked"), "{e}");
    let e = rejection("[[link_events]]\nlink = \"tor0-agg0\"\naction = \"rate\"\n");
    assert!(e.contains("link_events[0].rate_gbps") && e.contains("missing"), "{e}");
    let e = rejection("[[link_events]]\nlink = \"tor0-agg0\"\naction = \"explode\"\n");
    assert!(e.contains("link_events") && e.contains("`down`"), "{e}");
}

#[test]
fn toml_syntax_errors_are_reported() {
    let e = rejection("[topology\nk = 8\n");
    assert!(e.contains("invalid scenario") && e.contains("line 1"), "{e}");
}

#[test]
fn scheme_parameters_out_of_range_name_their_key() {
    let e = rejection("[transport.lb]\nname = \"reps\"\ncache_size = 0\n");
    assert!(e.contains("transport.lb.cache_size"), "{e}");
    let e = rejection("[transport.gate]\nname = \"max_outstanding\"\nmessages = 0\n");
    assert!(e.contains("transport.gate.messages"), "{e}");
    let e = rejection("[transport]\ngate = \"valve\"\n");
    assert!(e.contains("`none`") && e.contains("`max_outstanding`"), "{e}");
    for cc in ["dcqcn", "timely"] {
        let e = rejection(&format!("[transport.cc]\nname = \"{cc}\"\nwindow_bdp = 1.0\nbdp_of = \"fabric\"\n"));
        assert!(e.contains("`transport.cc`: `bdp_of`: \"fabric\"") && e.contains("`path`") && e.contains("`network`"), "{e}");
    }
    // The ns-3 parity options: enum values name the allowed ones.
    let e = rejection("[transport]\nack_class = \"bogus\"\n");
    assert!(e.contains("transport.ack_class") && e.contains("`control`") && e.contains("`data`"), "{e}");
    let e = rejection("[transport.cc]\nname = \"dcqcn\"\nreaction_point = \"x\"\n");
    assert!(e.contains("reaction_point") && e.contains("`paper`") && e.contains("`mellanox`"), "{e}");
    let e = rejection("[transport.cc]\nname = \"hpcc\"\nbase_rtt_of = \"fabric\"\n");
    assert!(e.contains("base_rtt_of") && e.contains("`network`") && e.contains("`path`"), "{e}");
    let e = rejection("[switch.lb]\nname = \"ns3_ecmp\"\nnext_hops = \"up\"\n");
    assert!(e.contains("switch.lb") && e.contains("next_hops") && e.contains("`descending`"), "{e}");
    // ConWeave's options.
    for (table, key, allowed) in [
        ("[switch.lb]\nname = \"drill\"", "sample", ["`replacement`", "`distinct`"]),
        ("[switch.lb]\nname = \"drill\"", "memory", ["`tor`", "`host`"]),
        ("[switch.lb]\nname = \"drill\"", "control", ["`drill`", "`ns3_ecmp`"]),
        ("[switch.lb]\nname = \"drill\"", "load", ["`data`", "`all_classes`"]),
        ("[switch.lb]\nname = \"conga\"", "ties", ["`keep`", "`random`"]),
        ("[switch.lb]\nname = \"conga\"", "control", ["`conga`", "`bypass`"]),
        ("[transport.reliability]\nname = \"go_back_n\"", "rewind", ["`fresh`", "`every_nack`"]),
        ("[transport.reliability]\nname = \"trim\"", "resend", ["`next_slot`", "`at_once`"]),
    ] {
        let e = rejection(&format!("{table}\n{key} = \"x\"\n"));
        assert!(e.contains(&format!("`{key}`")) && allowed.iter().all(|a| e.contains(a)), "{key}: {e}");
    }
}

/// The bad values of one listed parameter: above its declared range, a word that is no
/// allowed value (or not a number), a word where a switch is expected. Parameters without a
/// declared range or a word default (free numbers, lists, tables) have none.
fn bad_values(p: &fabricsim::scheme::ParamRow) -> Vec<String> {
    let mut v = Vec::new();
    if let Some((_, hi)) = p.allowed.as_deref().and_then(|a| a.split_once("..=")) {
        if let Ok(hi) = hi.parse::<f64>() {
            v.push(format!("{}", hi * 2.0 + 1.0));
        }
    }
    if p.default.starts_with('"') || p.default == "true" || p.default == "false" {
        v.push("\"bogus_value\"".to_string());
    }
    v
}

/// Every registered scheme of every family a scenario selects by name refuses a bad value of
/// each of its parameters at once, with an error that names the parameter: generated from the
/// registry, so a new scheme or parameter brings its cases. Each case starts from the scheme's
/// registry example on the bundled example scenario.
#[test]
fn every_registered_scheme_refuses_bad_parameter_values() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/example.toml");
    let (mut checked, mut accepted) = (0, Vec::new());
    for f in fabricsim::registry::families() {
        // The families selected by name; their table is the key without its last part for
        // `kind` selections (`workload.kind` -> `workload`).
        let table = match f.key {
            "transport.cc" | "transport.lb" | "switch.lb" | "transport.gate" | "transport.credit" | "transport.reliability" | "transport.shaper" => f.key,
            "workload.kind" => "workload",
            "topology.failures.kind" => "topology.failures",
            _ => continue,
        };
        let select = if table == f.key { format!("{}.name", f.key) } else { f.key.to_string() };
        for s in f.schemes {
            for p in (s.params)() {
                for bad in bad_values(&p) {
                    let mut sets: Vec<String> = vec![format!("{select}={}", s.name)];
                    sets.extend(s.example.iter().map(|x| x.to_string()));
                    sets.push(format!("{table}.{}={bad}", p.key));
                    let verdict = fabricsim::scenario::Scenario::from_file(&example, &sets).and_then(|sc| sc.setup(example.parent().unwrap()).map(|_| ()));
                    checked += 1;
                    match verdict {
                        Ok(()) => accepted.push(format!("{sets:?}")),
                        Err(e) => {
                            let e = e.to_string();
                            assert!(e.contains(&p.key), "{} {}: `{}` = {bad} refused without naming it: {e}", f.key, s.name, p.key);
                        }
                    }
                }
            }
        }
    }
    assert!(accepted.is_empty(), "accepted bad values:\n{}", accepted.join("\n"));
    assert!(checked > 100, "only {checked} cases");
}
