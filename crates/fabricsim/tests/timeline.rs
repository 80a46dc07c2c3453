//! `timeline.json` (`run.timeline`): a Chrome trace-event file whose events are the run's flows,
//! messages, collective instances and traced-port samples, each at the times the CSV files give
//! them — checked event by event against the results, and for the format's rules Perfetto's
//! JSON importer relies on (every event has a phase and a process, every async begin an end with
//! the same category and id, no end before its begin, processes and threads named).

use fabricsim::results::OutDir;
use fabricsim::units::Time;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// µs as the file writes them, back to ps.
fn ps(v: &Value) -> Time {
    Time((v.as_f64().expect("a number") * 1e6).round() as u64)
}

#[test]
fn the_timeline_holds_every_flow_message_instance_and_port_sample_at_its_time() {
    let sets: Vec<String> = ["run.timeline=true", "run.message_log=true", "run.trace_interval_us=1", "run.trace_ports=[\"tor0-host0\"]"].iter().map(|s| s.to_string()).collect();
    let setup = fabricsim::scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/collectives.toml"), &sets).expect("scenario");
    // Through the results folder, as `fabricsim run` writes it (trace samples kept, not streamed).
    let dir = std::env::temp_dir().join(format!("fabricsim-timeline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = OutDir::prepare(&dir, "results folder").unwrap();
    let r = fabricsim::run_into(&setup, 1, &mut |_| {}, &Default::default(), &out).expect("run");
    r.write_to(&out).unwrap();
    assert!(std::fs::read_to_string(dir.join("port_trace.csv")).unwrap() == r.port_trace_csv());
    let text = std::fs::read_to_string(dir.join("timeline.json")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let doc: Value = serde_json::from_str(&text).expect("timeline.json is JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");

    // The format's rules.
    let mut open: HashMap<(String, String), Time> = HashMap::new();
    let (mut begins, mut named_processes) = (HashMap::new(), Vec::new());
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert!(e["pid"].is_u64(), "{e}");
        match ph {
            "M" => named_processes.push((e["pid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap().to_string())),
            "b" | "e" => {
                let key = (e["cat"].as_str().unwrap().to_string(), e["id"].as_str().unwrap().to_string());
                if ph == "b" {
                    assert!(open.insert(key.clone(), ps(&e["ts"])).is_none(), "{key:?} begun twice");
                    begins.insert(key, e.clone());
                } else {
                    let from = open.remove(&key).expect("an end after its begin");
                    assert!(ps(&e["ts"]) >= from, "{key:?} ends before it begins");
                }
            }
            "X" => assert!(e["dur"].as_f64().unwrap() >= 0.0 && e["ts"].is_number()),
            "C" => assert!(e["ts"].is_number() && e["args"].is_object()),
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(open.is_empty(), "unclosed slices: {open:?}");

    // Every flow on its sender's process, from its start to its finish.
    for f in &r.flows {
        let b = &begins[&("flow".to_string(), format!("f{}", f.id))];
        assert_eq!((b["pid"].as_u64().unwrap(), ps(&b["ts"])), (1 + f.src as u64, f.start));
        assert_eq!(b["args"]["dst"], f.dst);
        assert!(named_processes.contains(&(1 + f.src as u64, format!("host {}", f.src))));
    }
    let ends: HashMap<String, Time> = events.iter().filter(|e| e["ph"] == "e" && e["cat"] == "flow").map(|e| (e["id"].as_str().unwrap().to_string(), ps(&e["ts"]))).collect();
    assert!(r.flows.iter().all(|f| Some(ends[&format!("f{}", f.id)]) == f.finish));
    // Every message, from posting to completion.
    assert_eq!(begins.keys().filter(|k| k.0 == "message").count(), r.messages.len());
    for m in r.messages.iter().step_by(97) {
        let b = &begins[&("message".to_string(), format!("m{}", m.id))];
        assert_eq!((ps(&b["ts"]), b["args"]["flow"].as_u64().unwrap()), (m.posted.unwrap(), m.conn as u64));
    }
    // Every collective instance on its job's thread.
    let instances: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(instances.len(), r.ccts.len());
    for (e, c) in instances.iter().zip(&r.ccts) {
        assert_eq!((e["tid"].as_u64().unwrap(), ps(&e["ts"]), ps(&e["dur"])), (c.instance.job as u64, c.start.unwrap(), c.cct().unwrap()));
    }
    // Every port sample: its queue and its pause state.
    let queue: Vec<u64> = events.iter().filter(|e| e["ph"] == "C" && e["name"] == "queue tor0-host0").map(|e| e["args"]["bytes"].as_u64().unwrap()).collect();
    assert!(!r.port_trace.is_empty() && queue == r.port_trace.iter().map(|s| s.data_bytes).collect::<Vec<_>>());
    assert_eq!(events.iter().filter(|e| e["ph"] == "C" && e["name"] == "paused tor0-host0").count(), r.port_trace.len());
    // `check`'s count of the events is the file's, bar the naming events.
    let estimated = fabricsim::estimate::Estimate::of(&setup).timeline_events.unwrap();
    let counted = events.iter().filter(|e| e["ph"] != "M").count() as f64;
    assert!((estimated / counted - 1.0).abs() < 0.1, "estimated {estimated}, written {counted}");
}

#[test]
fn no_timeline_unless_asked() {
    let setup = fabricsim::scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/example.toml"), &["topology.k=4".to_string()]).unwrap();
    let r = fabricsim::run(&setup, &mut |_| {}).unwrap();
    assert!(!r.timeline && fabricsim::estimate::Estimate::of(&setup).timeline_events.is_none());
}
