//! The output files: `flows.csv`, `ccts.csv`, `messages.csv`, `trace.csv`, `port_trace.csv`,
//! `acks.csv`, `events.csv`, `pfc_ports.csv` and `summary.json` as text, the table of them, and
//! [`Results::write`].

use super::schema::{self, FileSchema};
use super::Results;
use super::out_dir::OutDir;
use crate::error::Result;
use crate::engine::trace::{ConnSample, PortSample};
use crate::units::{Time, US};
use std::fmt::Write as _;
use std::path::Path;

/// Appends each time (µs, empty when unknown) followed by a comma.
fn push_times(out: &mut String, times: &[Option<Time>]) {
    for &t in times {
        fmt_us(out, t);
        out.push(',');
    }
}

fn fmt_us(out: &mut String, t: Option<Time>) {
    if let Some(t) = t {
        let _ = write!(out, "{}.{:06}", t / US, t % US);
    }
}

/// Appends the `trace.csv` row of sample `t`.
pub(super) fn trace_row(s: &mut String, t: &ConnSample) {
    fmt_us(s, Some(t.at));
    let _ = write!(s, ",{},", t.conn);
    if let Some(w) = t.window {
        let _ = write!(s, "{w}");
    }
    let _ = write!(s, ",{},", t.in_flight);
    if let Some(r) = t.rate_bps {
        let _ = write!(s, "{:.3}", r as f64 / 1e9);
    }
    let _ = writeln!(s, ",{}", t.acked_bytes);
}

/// Appends the `port_trace.csv` row of sample `t` of the port named `link`.
pub(super) fn port_trace_row(s: &mut String, t: &PortSample, link: &str) {
    fmt_us(s, Some(t.at));
    let _ = writeln!(s, ",{},{link},{},{},{},{}", t.port, t.data_bytes, t.tx_bytes, t.paused as u8, t.marks);
}

impl Results {
    /// The rows of `file` written during the run ([`super::stream`]), if it was streamed.
    fn streamed(&self, file: &str) -> Option<&super::stream::Streamed> {
        self.streamed.iter().find(|s| s.name == file)
    }

    /// Whether this run's `flows.csv` has column `name`: the `reroutes` column only in runs
    /// whose switches count re-routes (adaptive schemes), so ECMP runs keep their columns;
    /// `subflows` only under a message shaper, whose rows are application flows; every other
    /// column always.
    pub fn has_flow_column(&self, name: &str) -> bool {
        match name {
            "reroutes" => self.flows.first().is_some_and(|f| f.reroutes.is_some()),
            "subflows" => self.flows.first().is_some_and(|f| f.subflows.is_some()),
            "fair_ideal_fct_us" | "fair_slowdown" => self.flows.first().is_some_and(|f| f.fair_ideal_fct.is_some()),
            _ => true,
        }
    }

    /// `flows.csv` text: times in µs with picosecond precision.
    pub fn flows_csv(&self) -> String {
        let mut s = schema::FLOWS.header_where(|c| self.has_flow_column(c));
        for f in &self.flows {
            let _ = write!(s, "{},{},{},{},", f.id, f.src, f.dst, f.bytes);
            push_times(&mut s, &[Some(f.start), f.finish, f.fct(), Some(f.ideal_fct)]);
            if let Some(x) = f.slowdown() {
                let _ = write!(s, "{x:.6}");
            }
            let _ = write!(s, ",{},{},{},{},{}", f.retransmits, f.trims, f.drops, f.ecn_acks, f.timeouts);
            let _ = write!(s, ",{},{},{},{},{}", f.data_sent, f.data_lost, f.duplicates, f.fast_retransmits, f.timeout_lost);
            for extra in [f.reroutes, f.subflows].into_iter().flatten() {
                let _ = write!(s, ",{extra}");
            }
            if let Some(ideal) = f.fair_ideal_fct {
                s.push(',');
                push_times(&mut s, &[Some(ideal)]);
                if let Some(x) = f.fair_slowdown() {
                    let _ = write!(s, "{x:.6}");
                }
            }
            s.push('\n');
        }
        s
    }

    /// `ccts.csv` text: one row per collective instance.
    pub fn ccts_csv(&self) -> String {
        // The group column only for training steps, whose collectives serve one.
        let groups = self.summary.training.is_some();
        let mut s = schema::CCTS.header_where(|c| groups || c != "group");
        for c in &self.ccts {
            let i = &c.instance;
            let _ = write!(s, "{},{},{},{},{},{},{},", i.job, i.iteration, i.step, i.op, i.algorithm, i.ranks, i.bytes);
            push_times(&mut s, &[c.start, c.end, c.cct(), Some(c.ideal)]);
            if let Some(x) = c.normalized() {
                let _ = write!(s, "{x:.6}");
            }
            if groups {
                let _ = write!(s, ",{}", i.group);
            }
            s.push('\n');
        }
        s
    }

    /// `messages.csv` text: one row per message.
    pub fn messages_csv(&self) -> String {
        let mut s = schema::MESSAGES.header();
        for m in &self.messages {
            let _ = write!(s, "{},{},{},{},{},", m.id, m.conn, m.src, m.dst, m.bytes);
            push_times(&mut s, &[m.posted, m.delivered]);
            fmt_us(&mut s, m.completed);
            s.push('\n');
        }
        s
    }

    /// `trace.csv` text: one row per sample of a traced connection.
    pub fn trace_csv(&self) -> String {
        let mut s = schema::TRACE.header();
        for t in &self.trace {
            trace_row(&mut s, t);
        }
        s
    }

    /// `port_trace.csv` text: one row per sample of a traced port.
    pub fn port_trace_csv(&self) -> String {
        let mut s = schema::PORT_TRACE.header();
        for t in &self.port_trace {
            port_trace_row(&mut s, t, self.port_names.get(&t.port).map_or("", String::as_str));
        }
        s
    }

    /// `acks.csv` text: every ACK of the logged flows.
    pub fn acks_csv(&self) -> String {
        let mut s = schema::ACKS.header();
        for &(at, c, rtt, ecn) in &self.acks {
            fmt_us(&mut s, Some(at));
            let _ = write!(s, ",{c},");
            fmt_us(&mut s, Some(rtt));
            let _ = writeln!(s, ",{}", ecn as u8);
        }
        s
    }

    /// `packet_log.csv` text: every event of every data packet of the logged flows.
    pub fn packet_log_csv(&self) -> String {
        let mut s = schema::PACKET_LOG.header();
        for r in &self.packet_log {
            fmt_us(&mut s, Some(r.at));
            let link = self.packet_log_links.get(&r.port).map_or("", String::as_str);
            let _ = writeln!(s, ",{},{},{},{link}", r.conn, r.seq, r.event.name());
        }
        s
    }

    /// `ports.csv` text: one row per port (`run.port_stats`).
    pub fn ports_csv(&self) -> String {
        super::ports::csv(&self.ports)
    }

    /// `gate_log.csv` text: every window decision of the message gates, in time order.
    pub fn gate_log_csv(&self) -> String {
        let mut s = schema::GATE_LOG.header();
        for (at, c, u) in &self.gate_log {
            fmt_us(&mut s, Some(*at));
            let _ = writeln!(s, ",{c},{},{}", u.state, u.window_bytes);
        }
        s
    }

    /// `events.csv` text: drops and PFC pauses in time order.
    pub fn events_csv(&self) -> String {
        let mut s = schema::EVENTS.header();
        for e in &self.events {
            fmt_us(&mut s, Some(e.at));
            let _ = write!(s, ",{},{},", e.kind, e.link);
            if let Some(c) = e.conn {
                let _ = write!(s, "{c}");
            }
            s.push('\n');
        }
        s
    }

    /// `flowlets.csv` text: the flowlet-size CDF per gap (`run.flowlet_gaps_us`).
    pub fn flowlets_csv(&self) -> String {
        super::flowlets::cdf_csv(&self.flowlets)
    }

    /// `summary.json` text.
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).unwrap_or_default() + "\n"
    }

    /// `pfc_ports.csv` text: every port that was paused (empty without PFC).
    pub fn pfc_ports_csv(&self) -> String {
        let mut s = schema::PFC_PORTS.header();
        for (link, n, t) in self.summary.pfc.iter().flat_map(|p| &p.ports) {
            let _ = writeln!(s, "{link},{n},{t:.6}");
        }
        s
    }

    /// The text of output file `name` (whether or not this run has rows for it), `None` for a
    /// name that is not an output file.
    pub fn output_text(&self, name: &str) -> Option<String> {
        OUTPUT_FILES.iter().find(|f| f.schema.name == name).map(|f| (f.text)(self))
    }

    /// Writes the results into `dir` (created if needed) under the rules of a results folder
    /// ([`super::out_dir`]): a folder with result files fabricsim did not write is refused, the
    /// files of the run that wrote it before are replaced, and a manifest lists the new ones.
    /// The files: `flows.csv`, `summary.json` and, where they have rows, `ccts.csv` (collective
    /// workloads), `trace.csv`, `port_trace.csv`, `pfc_ports.csv`, `acks.csv`, `gate_log.csv`, `ports.csv`,
    /// `events.csv`, `messages.csv` and `flowlets.csv`; and `resolved_scenario.toml`, which reruns the run.
    ///
    /// A caller that simulates for long should call [`OutDir::prepare`] before the run and
    /// [`Results::write_to`] after it, so that an unusable folder fails at once.
    pub fn write(&self, dir: &Path) -> Result<()> {
        self.write_to(&OutDir::prepare(dir, "results folder")?)
    }

    /// Writes the results into a prepared folder: every file aside under its temporary name
    /// (the trace files a run streamed into the folder, [`crate::run_into`], are there
    /// already), then in place of the previous run's files ([`OutDir::replace_with`]: at
    /// every step a manifest covers every result file in the folder). A failed write is an
    /// [`crate::Error::Write`] naming the file; if it fails before the swap, the previous
    /// run's results are left as they were.
    pub fn write_to(&self, out: &OutDir) -> Result<()> {
        let files: Vec<&OutputFile> = OUTPUT_FILES.iter().filter(|f| (f.has_rows)(self)).collect();
        let names: Vec<&str> = files.iter().map(|f| f.schema.name).collect();
        // A streamed file without rows is not a result.
        for s in self.streamed.iter().filter(|s| s.rows == 0) {
            let _ = std::fs::remove_file(s.path());
        }
        // Streamed files are already aside, under their temporary names.
        let written = files.iter().filter(|f| self.streamed(f.schema.name).is_none()).try_for_each(|f| out.write_aside(f.schema.name, &(f.text)(self)));
        if let Err(e) = written {
            out.discard_aside(&names);
            return Err(e);
        }
        out.replace_with(&names)
    }
}

/// One output file: its schema (name, columns), whether a run has rows for it, its text.
pub(super) struct OutputFile {
    pub schema: &'static FileSchema,
    has_rows: fn(&Results) -> bool,
    text: fn(&Results) -> String,
}

/// Every file a run may write besides the manifest, in the order written; the only list of
/// output files (the results-folder rules recognise them from here).
pub(super) const OUTPUT_FILES: &[OutputFile] = &[
    OutputFile { schema: &schema::FLOWS, has_rows: |_| true, text: Results::flows_csv },
    OutputFile { schema: &schema::CCTS, has_rows: |r| !r.ccts.is_empty(), text: Results::ccts_csv },
    OutputFile { schema: &schema::TRACE, has_rows: |r| !r.trace.is_empty() || r.streamed(schema::TRACE.name).is_some_and(|s| s.rows > 0), text: Results::trace_csv },
    OutputFile { schema: &schema::PORT_TRACE, has_rows: |r| !r.port_trace.is_empty() || r.streamed(schema::PORT_TRACE.name).is_some_and(|s| s.rows > 0), text: Results::port_trace_csv },
    OutputFile { schema: &schema::PFC_PORTS, has_rows: |r| r.summary.pfc.as_ref().is_some_and(|p| !p.ports.is_empty()), text: Results::pfc_ports_csv },
    OutputFile { schema: &schema::ACKS, has_rows: |r| !r.acks.is_empty(), text: Results::acks_csv },
    OutputFile { schema: &schema::PACKET_LOG, has_rows: |r| !r.packet_log.is_empty(), text: Results::packet_log_csv },
    OutputFile { schema: &schema::GATE_LOG, has_rows: |r| !r.gate_log.is_empty(), text: Results::gate_log_csv },
    OutputFile { schema: &schema::PORTS, has_rows: |r| !r.ports.is_empty(), text: Results::ports_csv },
    OutputFile { schema: &schema::EVENTS, has_rows: |r| !r.events.is_empty(), text: Results::events_csv },
    OutputFile { schema: &schema::MESSAGES, has_rows: |r| !r.messages.is_empty(), text: Results::messages_csv },
    OutputFile { schema: &schema::FLOWLETS, has_rows: |r| !r.flowlets.is_empty(), text: Results::flowlets_csv },
    OutputFile { schema: &schema::TIMELINE, has_rows: |r| r.timeline, text: Results::timeline_json },
    OutputFile { schema: &schema::SUMMARY, has_rows: |_| true, text: Results::summary_json },
    OutputFile { schema: &schema::SCENARIO, has_rows: |_| true, text: |r| r.scenario_toml.clone() },
];

#[cfg(test)]
mod tests {
    use super::OUTPUT_FILES;
    use crate::results::flows::tests::row;
    use crate::results::out_dir::{is_output_file, Manifest, MANIFEST};
    use crate::results::Results;
    use crate::scenario::Scenario;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// Results of one 64 KiB flow each way between the two hosts of a 2-ToR leaf-spine.
    fn run(extra: &str) -> Results {
        let text = format!(
            "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 1\nspines = 1\nlink_rate_gbps = 100\n\
             [workload]\nkind = \"permutation\"\nflow_bytes = \"64KiB\"\n{extra}"
        );
        let setup = Scenario::from_toml(&text, &[]).unwrap().setup(Path::new(".")).unwrap();
        crate::run(&setup, &mut |_| {}).unwrap()
    }

    /// A fresh, empty directory under the system's temporary folder.
    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fabricsim-results-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn files_in(d: &Path) -> BTreeSet<String> {
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn flows_csv_header_and_rows() {
        let mut r = run("");
        r.flows = vec![row(7, 1_000_000, Some(4_000_001), 1_500_000), row(8, 0, None, 1)];
        let csv = r.flows_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "flow,src,dst,bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,retransmits,trims,drops,ecn_acks,timeouts,data_sent,data_lost,duplicates,fast_retransmits,timeout_lost");
        // FCT 3 000 001 ps; slowdown 3 000 001 / 1 500 000 = 2.0000007 -> 6 decimals.
        assert_eq!(lines[1], "7,0,1,10000,1.000000,4.000001,3.000001,1.500000,2.000001,1,2,3,4,5,6,7,8,9,10");
        // Unfinished: finish, FCT and slowdown empty.
        assert_eq!(lines[2], "8,0,1,10000,0.000000,,,0.000001,,1,2,3,4,5,6,7,8,9,10");
        assert_eq!(lines.len(), 3);
        assert!(csv.ends_with('\n'));
        // A run whose switches count re-routes gains the last column.
        for f in &mut r.flows {
            f.reroutes = Some(9);
        }
        let csv = r.flows_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",fast_retransmits,timeout_lost,reroutes"));
        assert_eq!(lines[2], "8,0,1,10000,0.000000,,,0.000001,,1,2,3,4,5,6,7,8,9,10,9");
    }

    #[test]
    fn write_produces_exactly_the_expected_files() {
        let d = temp_dir("plain");
        let r = run("");
        r.write(&d).unwrap();
        assert_eq!(files_in(&d), names(&["flows.csv", "manifest.json", "resolved_scenario.toml", "summary.json"]));
        assert_eq!(std::fs::read_to_string(d.join("resolved_scenario.toml")).unwrap(), r.scenario_toml);
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), r.flows_csv());
        assert_eq!(std::fs::read_to_string(d.join("summary.json")).unwrap(), r.summary_json());
        let _ = std::fs::remove_dir_all(&d);

        let d = temp_dir("logs");
        let r = run("[run]\nmessage_log = true\nevent_log = true\ntrace_interval_us = 1\ntrace_ports = [\"tor1-host1\"]\nack_log_conns = [0]\n");
        r.write(&d).unwrap();
        let want = ["acks.csv", "flows.csv", "manifest.json", "messages.csv", "port_trace.csv", "resolved_scenario.toml", "summary.json", "trace.csv"];
        assert_eq!(files_in(&d), names(&want));
        assert_eq!(std::fs::read_to_string(d.join("messages.csv")).unwrap(), r.messages_csv());
        // The manifest lists the files in the order written, without itself.
        let m = Manifest::parse(&std::fs::read_to_string(d.join(MANIFEST)).unwrap()).unwrap();
        assert_eq!(m.files, ["flows.csv", "trace.csv", "port_trace.csv", "acks.csv", "messages.csv", "summary.json", "resolved_scenario.toml"]);
        assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_second_run_into_the_same_folder_leaves_only_its_files() {
        let d = temp_dir("twice");
        run("[run]\nmessage_log = true\ntrace_interval_us = 1\ntrace_ports = [\"tor1-host1\"]\n").write(&d).unwrap();
        assert_eq!(files_in(&d), names(&["flows.csv", "manifest.json", "messages.csv", "port_trace.csv", "resolved_scenario.toml", "summary.json", "trace.csv"]));
        std::fs::write(d.join("scenario.toml"), "kept").unwrap();
        let second = run("");
        second.write(&d).unwrap();
        assert_eq!(files_in(&d), names(&["flows.csv", "manifest.json", "resolved_scenario.toml", "scenario.toml", "summary.json"]));
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), second.flows_csv());
        assert_eq!(std::fs::read_to_string(d.join("scenario.toml")).unwrap(), "kept");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn every_output_file_is_recognised_by_the_folder_rules() {
        for f in OUTPUT_FILES {
            assert!(is_output_file(f.schema.name), "{}", f.schema.name);
        }
        assert!(!is_output_file("scenario.toml") && !is_output_file(MANIFEST));
    }
}
