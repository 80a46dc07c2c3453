//! `timeline.json` (`run.timeline = true`): the run as a Chrome trace-event file, the JSON
//! format that Perfetto (ui.perfetto.dev, "Open trace file") and chrome://tracing open, so that
//! a user can scroll through what happened when instead of reading it out of CSV files.
//!
//! What it holds (times in µs, as the format wants; the simulator's picoseconds keep six
//! decimals):
//! - a process per host (`host H`): each flow it sends is an asynchronous slice from its start
//!   to its finish (unfinished flows run to the end of the timeline, marked so), and with
//!   `run.message_log` each message too, from posting to completion; asynchronous slices may
//!   overlap, and Perfetto lays overlapping ones on separate rows;
//! - a process `collectives` with a thread per job: each collective instance a slice from its
//!   start to its end, in the job's order, with its CCT, ideal and normalized CCT;
//! - a process `ports` with a counter per traced port (`run.trace_ports`): its data queue
//!   (bytes) and whether PFC holds it (0/1), at every sample.
//!
//! Its size grows with flows, messages and samples; [`crate::estimate::Estimate`] counts its
//! events before the run, `fabricsim check` prints the count, and `fabricsim run` warns when it
//! is large ([`crate::estimate::TIMELINE_WARN_EVENTS`]).

use super::Results;
use crate::units::{Time, US};
use std::fmt::Write;

/// Process ids: collectives first, then one per host, then the traced ports (`host_pid(hosts)`).
const COLLECTIVES_PID: u64 = 0;

fn host_pid(h: u32) -> u64 {
    1 + h as u64
}

/// `t` (ps) as the format's µs, with every picosecond kept.
fn ts(t: Time) -> String {
    format!("{}.{:06}", t / US, t % US)
}

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

impl Results {
    /// `timeline.json` text ([`super::timeline`]).
    pub fn timeline_json(&self) -> String {
        let mut ev: Vec<String> = Vec::new();
        let meta = |pid: u64, tid: Option<u64>, name: &str| match tid {
            None => format!("{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}", quoted(name)),
            Some(tid) => format!("{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}", quoted(name)),
        };
        // Where an unfinished slice ends: the latest moment the timeline knows of.
        let end = self
            .flows
            .iter()
            .flat_map(|f| [Some(f.start), f.finish])
            .chain(self.messages.iter().flat_map(|m| [m.posted, m.completed]))
            .chain(self.ccts.iter().flat_map(|c| [c.start, c.end]))
            .chain(self.port_trace.iter().map(|s| Some(s.at)))
            .flatten()
            .chain(self.summary.interrupted_at_us.map(|t| Time((t * US.0 as f64).round() as u64)))
            .max()
            .unwrap_or(Time::ZERO);
        let mut senders: Vec<u32> = self.flows.iter().map(|f| f.src).collect();
        senders.sort_unstable();
        senders.dedup();
        for &h in &senders {
            ev.push(meta(host_pid(h), None, &format!("host {h}")));
        }
        let slice = |ev: &mut Vec<String>, cat: &str, id: String, pid: u64, name: String, from: Time, to: Option<Time>, args: String| {
            let unfinished = if to.is_none() { ",\"unfinished\":true" } else { "" };
            ev.push(format!("{{\"ph\":\"b\",\"cat\":\"{cat}\",\"id\":\"{id}\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"name\":{},\"args\":{{{args}{unfinished}}}}}", ts(from), quoted(&name)));
            ev.push(format!("{{\"ph\":\"e\",\"cat\":\"{cat}\",\"id\":\"{id}\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"name\":{}}}", ts(to.unwrap_or(end).max(from)), quoted(&name)));
        };
        for f in &self.flows {
            let mut args = format!("\"flow\":{},\"dst\":{},\"bytes\":{},\"ideal_fct_us\":{}", f.id, f.dst, f.bytes, ts(f.ideal_fct));
            if let Some(s) = f.slowdown() {
                let _ = write!(args, ",\"slowdown\":{s:.6}");
            }
            slice(&mut ev, "flow", format!("f{}", f.id), host_pid(f.src), format!("flow {} → host {}", f.id, f.dst), f.start, f.finish, args);
        }
        for m in &self.messages {
            let Some(posted) = m.posted else { continue };
            let mut args = format!("\"message\":{},\"flow\":{},\"dst\":{},\"bytes\":{}", m.id, m.conn, m.dst, m.bytes);
            if let Some(d) = m.delivered {
                let _ = write!(args, ",\"delivered_us\":{}", ts(d));
            }
            slice(&mut ev, "message", format!("m{}", m.id), host_pid(m.src), format!("message {} → host {}", m.id, m.dst), posted, m.completed, args);
        }
        if !self.ccts.is_empty() {
            ev.push(meta(COLLECTIVES_PID, None, "collectives"));
            let mut jobs: Vec<u32> = self.ccts.iter().map(|c| c.instance.job).collect();
            jobs.sort_unstable();
            jobs.dedup();
            for &j in &jobs {
                ev.push(meta(COLLECTIVES_PID, Some(j as u64), &format!("job {j}")));
            }
            for c in &self.ccts {
                let Some(start) = c.start else { continue };
                let i = &c.instance;
                let name = format!("{} {} {} B (iteration {}, step {})", i.op, i.algorithm, i.bytes, i.iteration, i.step);
                let mut args = format!("\"ranks\":{},\"ideal_cct_us\":{}", i.ranks, ts(c.ideal));
                if let Some(n) = c.normalized() {
                    let _ = write!(args, ",\"cct_us\":{},\"normalized_cct\":{n:.6}", ts(c.cct().unwrap_or(Time::ZERO)));
                } else {
                    args += ",\"unfinished\":true";
                }
                ev.push(format!(
                    "{{\"ph\":\"X\",\"cat\":\"collective\",\"pid\":{COLLECTIVES_PID},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"args\":{{{args}}}}}",
                    i.job,
                    ts(start),
                    ts(c.end.unwrap_or(end).max(start) - start),
                    quoted(&name)
                ));
            }
        }
        if !self.port_trace.is_empty() {
            // After every host's process.
            let pid = host_pid(self.summary.hosts);
            ev.push(meta(pid, None, "ports"));
            for s in &self.port_trace {
                let link = self.port_names.get(&s.port).map_or_else(|| format!("port {}", s.port), String::clone);
                ev.push(format!("{{\"ph\":\"C\",\"pid\":{pid},\"ts\":{},\"name\":{},\"args\":{{\"bytes\":{}}}}}", ts(s.at), quoted(&format!("queue {link}")), s.data_bytes));
                ev.push(format!("{{\"ph\":\"C\",\"pid\":{pid},\"ts\":{},\"name\":{},\"args\":{{\"paused\":{}}}}}", ts(s.at), quoted(&format!("paused {link}")), u8::from(s.paused)));
            }
        }
        let mut out = String::with_capacity(ev.iter().map(|e| e.len() + 2).sum::<usize>() + 256);
        out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"written_by\":\"fabricsim\",\"scenario\":";
        out += &quoted(&self.summary.name);
        out += "},\"traceEvents\":[\n";
        for (k, e) in ev.iter().enumerate() {
            out += e;
            out += if k + 1 < ev.len() { ",\n" } else { "\n" };
        }
        out += "]}\n";
        out
    }
}
