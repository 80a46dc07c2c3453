//! A run's tables as typed columns, ready to become pandas columns without passing through CSV
//! text: the same columns, in the same order, as the CSV files [`Results::write`] writes (their
//! headers come from [`fabricsim::results::schema`], and so do these names), with the same
//! values (times in µs, empty cells as missing values). Only the rounding of the CSV text is
//! left out: `slowdown`, `fair_slowdown`, `normalized_cct` and `pacing_gbps` keep every digit of the double.

use fabricsim::results::schema::{self, Column, FileSchema};
use fabricsim::results::{CctResult, FlowResult, MessageRow};
use fabricsim::units::{ps_to_us, Time};
use fabricsim::Results;

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Integers (ids, bytes, packets, counts).
    Int(Vec<i64>),
    /// Integers, `None` where the CSV cell is empty.
    OptInt(Vec<Option<i64>>),
    /// Floats (µs, ratios, Gb/s), NaN where the CSV cell is empty.
    Float(Vec<f64>),
    /// Text.
    Text(Vec<String>),
    /// Flags (written `0` / `1` in CSV).
    Bool(Vec<bool>),
}

impl Values {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::OptInt(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One table: its file's schema and its columns in CSV order.
#[derive(Debug)]
pub struct Table {
    /// The CSV file the table mirrors.
    pub schema: &'static FileSchema,
    /// Each column with its schema entry (unit, meaning), in the CSV file's order.
    pub columns: Vec<(&'static Column, Values)>,
}

/// The tables the Python `Result` exposes: attribute name and the file it mirrors.
pub const TABLES: &[(&str, &FileSchema)] = &[
    ("flows", &schema::FLOWS),
    ("ccts", &schema::CCTS),
    ("messages", &schema::MESSAGES),
    ("trace", &schema::TRACE),
    ("port_trace", &schema::PORT_TRACE),
];

/// The table `name` (one of [`TABLES`]) of `results`; `None` for another name.
pub fn table(results: &Results, name: &str) -> Option<Table> {
    let (columns, schema) = match name {
        "flows" => (flows(results), &schema::FLOWS),
        "ccts" => (ccts(results), &schema::CCTS),
        "messages" => (messages(&results.messages), &schema::MESSAGES),
        "trace" => (trace(results), &schema::TRACE),
        "port_trace" => (port_trace(results), &schema::PORT_TRACE),
        _ => return None,
    };
    Some(in_schema_order(schema, columns))
}

/// Orders `columns` as `schema` lists them; columns the schema lists and `columns` lacks are the
/// ones a run leaves out (as the CSV writer does).
///
/// # Panics
/// On a column the schema does not list: a bug here, caught by the tests.
fn in_schema_order(schema: &'static FileSchema, mut columns: Vec<(&'static str, Values)>) -> Table {
    let mut ordered = Vec::with_capacity(columns.len());
    for col in schema.columns {
        if let Some(i) = columns.iter().position(|(n, _)| *n == col.name) {
            ordered.push((col, columns.swap_remove(i).1));
        }
    }
    assert!(columns.is_empty(), "{}: columns outside the schema: {:?}", schema.name, columns.iter().map(|c| c.0).collect::<Vec<_>>());
    Table { schema, columns: ordered }
}

fn ints<T>(rows: &[T], f: impl Fn(&T) -> u64) -> Values {
    Values::Int(rows.iter().map(|r| f(r) as i64).collect())
}

fn times<T>(rows: &[T], f: impl Fn(&T) -> Option<Time>) -> Values {
    Values::Float(rows.iter().map(|r| f(r).map_or(f64::NAN, ps_to_us)).collect())
}

fn floats<T>(rows: &[T], f: impl Fn(&T) -> Option<f64>) -> Values {
    Values::Float(rows.iter().map(|r| f(r).unwrap_or(f64::NAN)).collect())
}

fn flows(r: &Results) -> Vec<(&'static str, Values)> {
    let f: &[FlowResult] = &r.flows;
    let mut cols = vec![
        ("flow", ints(f, |x| x.id.into())),
        ("src", ints(f, |x| x.src.into())),
        ("dst", ints(f, |x| x.dst.into())),
        ("bytes", ints(f, |x| x.bytes)),
        ("start_us", times(f, |x| Some(x.start))),
        ("finish_us", times(f, |x| x.finish)),
        ("fct_us", times(f, FlowResult::fct)),
        ("ideal_fct_us", times(f, |x| Some(x.ideal_fct))),
        ("slowdown", floats(f, FlowResult::slowdown)),
        ("retransmits", ints(f, |x| x.retransmits.into())),
        ("trims", ints(f, |x| x.trims.into())),
        ("drops", ints(f, |x| x.drops.into())),
        ("ecn_acks", ints(f, |x| x.ecn_acks.into())),
        ("timeouts", ints(f, |x| x.timeouts.into())),
        ("data_sent", ints(f, |x| x.data_sent.into())),
        ("data_lost", ints(f, |x| x.data_lost.into())),
        ("duplicates", ints(f, |x| x.duplicates.into())),
        ("fast_retransmits", ints(f, |x| x.fast_retransmits.into())),
        ("timeout_lost", ints(f, |x| x.timeout_lost.into())),
    ];
    // As flows.csv: `reroutes`, `subflows` and the fair-share columns only in runs that have them.
    if r.has_flow_column("reroutes") {
        cols.push(("reroutes", ints(f, |x| x.reroutes.unwrap_or(0).into())));
    }
    if r.has_flow_column("subflows") {
        cols.push(("subflows", ints(f, |x| x.subflows.unwrap_or(0).into())));
    }
    if r.has_flow_column("fair_ideal_fct_us") {
        cols.push(("fair_ideal_fct_us", times(f, |x| x.fair_ideal_fct)));
        cols.push(("fair_slowdown", floats(f, FlowResult::fair_slowdown)));
    }
    cols
}

fn ccts(results: &Results) -> Vec<(&'static str, Values)> {
    let c = &results.ccts[..];
    let mut cols = vec![
        ("job", ints(c, |x| x.instance.job.into())),
        ("iteration", ints(c, |x| x.instance.iteration.into())),
        ("step", ints(c, |x| x.instance.step.into())),
        ("op", Values::Text(c.iter().map(|x| x.instance.op.to_string()).collect())),
        ("algorithm", Values::Text(c.iter().map(|x| x.instance.algorithm.to_string()).collect())),
        ("ranks", ints(c, |x| x.instance.ranks.into())),
        ("bytes", ints(c, |x| x.instance.bytes.0)),
        ("start_us", times(c, |x| x.start)),
        ("end_us", times(c, |x| x.end)),
        ("cct_us", times(c, CctResult::cct)),
        ("ideal_cct_us", times(c, |x| Some(x.ideal))),
        ("normalized_cct", floats(c, CctResult::normalized)),
    ];
    // As ccts.csv: the group a collective serves, for training steps.
    if results.summary.training.is_some() {
        cols.push(("group", Values::Text(c.iter().map(|x| x.instance.group.to_string()).collect())));
    }
    cols
}

fn messages(m: &[MessageRow]) -> Vec<(&'static str, Values)> {
    vec![
        ("message", ints(m, |x| x.id.into())),
        ("conn", ints(m, |x| x.conn.into())),
        ("src", ints(m, |x| x.src.into())),
        ("dst", ints(m, |x| x.dst.into())),
        ("bytes", ints(m, |x| x.bytes)),
        ("posted_us", times(m, |x| x.posted)),
        ("delivered_us", times(m, |x| x.delivered)),
        ("completed_us", times(m, |x| x.completed)),
    ]
}

fn trace(r: &Results) -> Vec<(&'static str, Values)> {
    let t = &r.trace;
    vec![
        ("time_us", times(t, |x| Some(x.at))),
        ("flow", ints(t, |x| x.conn.into())),
        ("cwnd_bytes", Values::OptInt(t.iter().map(|x| x.window.map(|w| w as i64)).collect())),
        ("in_flight_bytes", ints(t, |x| x.in_flight)),
        ("pacing_gbps", floats(t, |x| x.rate_bps.map(|b| b as f64 / 1e9))),
        ("acked_bytes", ints(t, |x| x.acked_bytes)),
    ]
}

fn port_trace(r: &Results) -> Vec<(&'static str, Values)> {
    let t = &r.port_trace;
    let link = |port: u32| r.port_names.get(&port).cloned().unwrap_or_default();
    vec![
        ("time_us", times(t, |x| Some(x.at))),
        ("port", ints(t, |x| x.port.into())),
        ("link", Values::Text(t.iter().map(|x| link(x.port)).collect())),
        ("queue_bytes", ints(t, |x| x.data_bytes)),
        ("tx_bytes", ints(t, |x| x.tx_bytes)),
        ("paused", Values::Bool(t.iter().map(|x| x.paused).collect())),
        ("ecn_marks", ints(t, |x| x.marks)),
    ]
}

#[cfg(test)]
mod tests {
    use super::{table, Values, TABLES};
    use fabricsim::{Results, Scenario};
    use std::path::Path;

    fn run(text: &str) -> Results {
        let setup = Scenario::from_toml(text, &[]).unwrap().setup(Path::new(".")).unwrap();
        fabricsim::run(&setup, &mut |_| {}).unwrap()
    }

    /// The CSV text `results` writes for the table `name`.
    fn csv(results: &Results, name: &str) -> String {
        match name {
            "flows" => results.flows_csv(),
            "ccts" => results.ccts_csv(),
            "messages" => results.messages_csv(),
            "trace" => results.trace_csv(),
            "port_trace" => results.port_trace_csv(),
            _ => unreachable!(),
        }
    }

    /// A cell as the CSV writer prints it, for the columns whose text is exact (every column
    /// but the rounded floats, which are compared by value).
    fn cell(v: &Values, i: usize) -> String {
        match v {
            Values::Int(x) => x[i].to_string(),
            Values::OptInt(x) => x[i].map_or(String::new(), |y| y.to_string()),
            Values::Float(x) if x[i].is_nan() => String::new(),
            Values::Float(x) => format!("{:.6}", x[i]),
            Values::Text(x) => x[i].clone(),
            Values::Bool(x) => (x[i] as u8).to_string(),
        }
    }

    /// Every table of `results` has the CSV file's header, row count and values.
    fn matches_csv(results: &Results) {
        for (name, _) in TABLES {
            let t = table(results, name).unwrap();
            let text = csv(results, name);
            let mut lines = text.lines();
            let names: Vec<&str> = t.columns.iter().map(|(c, _)| c.name).collect();
            assert_eq!(names.join(","), lines.next().unwrap(), "{name}");
            let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
            for (j, (col, values)) in t.columns.iter().enumerate() {
                assert_eq!(values.len(), rows.len(), "{name}.{}", col.name);
                for (i, row) in rows.iter().enumerate() {
                    match (values, col.name) {
                        (Values::Float(x), "slowdown" | "fair_slowdown" | "normalized_cct" | "pacing_gbps") => {
                            let want: f64 = if row[j].is_empty() { f64::NAN } else { row[j].parse().unwrap() };
                            assert!(x[i].is_nan() == want.is_nan() && (x[i].is_nan() || (x[i] - want).abs() <= 5e-4), "{name}.{} row {i}", col.name);
                        }
                        _ => assert_eq!(cell(values, i), row[j], "{name}.{} row {i}", col.name),
                    }
                }
            }
        }
    }

    #[test]
    fn flows_trace_and_port_trace_match_their_csv() {
        let r = run("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 2\nlink_rate_gbps = 100\n\
                     [workload]\nkind = \"permutation\"\nflow_bytes = \"256KiB\"\n\
                     [run]\ntrace_interval_us = 1.0\ntrace_conns = [0, 1]\ntrace_ports = [\"tor_up\", \"tor_down\"]\nmessage_log = true\n");
        assert!(!r.flows.is_empty() && !r.trace.is_empty() && !r.port_trace.is_empty() && !r.messages.is_empty());
        matches_csv(&r);
    }

    #[test]
    fn ccts_match_their_csv() {
        let r = run("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 1\nlink_rate_gbps = 100\n\
                     [workload]\nkind = \"collectives\"\n[[workload.jobs]]\nranks = 4\ncollectives = [{ op = \"allreduce\", algorithm = \"ring\", bytes = \"64KiB\" }]\n");
        assert!(!r.ccts.is_empty());
        matches_csv(&r);
    }

    #[test]
    fn a_training_steps_ccts_match_their_csv_with_their_group() {
        let r = run("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 4\nspines = 1\nlink_rate_gbps = 100\n\
                     [workload]\nkind = \"training\"\nmodel = { layers = 2, hidden = 64, heads = 4, seq = 16, vocab = 64, global_batch = 2 }\nparallelism = { tp = 2, pp = 2, dp = 2 }\n");
        let t = table(&r, "ccts").unwrap();
        assert_eq!(t.columns.last().unwrap().0.name, "group");
        matches_csv(&r);
    }

    #[test]
    fn unknown_table_is_none() {
        let r = run("[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 1\nspines = 1\n[workload]\nkind = \"permutation\"\nflow_bytes = \"8KiB\"\n");
        assert!(table(&r, "summary").is_none());
    }
}
