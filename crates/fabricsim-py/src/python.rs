//! The `fabricsim._native` extension module. The Python package (`python/fabricsim/`) wraps it;
//! nothing here is meant to be called directly.

use crate::columns::{self, Values};
use fabricsim::results::OutDir;
use fabricsim::{Error, Results, Scenario};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

create_exception!(
    fabricsim._native,
    ScenarioError,
    PyValueError,
    "Bad input: a scenario key with a wrong or unknown value (`.key` names it, the message the allowed values), \
     invalid TOML, an unreadable file, or an unusable results folder (`.key` is \"out\")."
);
create_exception!(
    fabricsim._native,
    SimulationError,
    PyRuntimeError,
    "The simulation failed: it broke one of its own invariants (`.result` then holds the results, \
     written to `out` if given), or the simulator itself failed (a bug: please report it)."
);

/// How often (wall time) a running simulation polls for Ctrl-C and reports progress.
const POLL: Duration = Duration::from_millis(100);

/// The Python exception for a library error: input errors become `ScenarioError` with `.key`
/// (the scenario key, `"out"` for the results folder, `None` when no key applies).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    if !e.is_input_error() {
        return SimulationError::new_err(e.to_string());
    }
    let key = match &e {
        Error::Invalid { key, .. } => Some(key.clone()),
        Error::OutDir { .. } => Some("out".to_string()),
        _ => None,
    };
    let err = ScenarioError::new_err(e.to_string());
    // Setting an attribute on a fresh exception instance cannot fail in practice; if it did,
    // the error would still carry its message.
    let _ = err.value(py).setattr("key", key);
    err
}

/// A panic (a simulator bug) as a `SimulationError`, never an abort of the interpreter.
fn panic_to_py(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    SimulationError::new_err(format!("fabricsim failed internally (a bug, please report it): {what}"))
}

/// The results of one run, as the Python `Result` reads them.
#[pyclass(module = "fabricsim._native", frozen)]
struct NativeResults {
    results: Results,
}

#[pymethods]
impl NativeResults {
    /// The table `name` ("flows", "ccts", "messages", "trace", "port_trace") as a list of
    /// `(column, kind, data, mask)`: kind "int" (data: little-endian int64 bytes), "optint"
    /// (int64 bytes and `mask` bytes, 1 where missing), "float" (float64 bytes, NaN missing),
    /// "bool" (one byte per row) or "text" (a list of str).
    fn table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        let t = columns::table(&self.results, name).ok_or_else(|| PyValueError::new_err(format!("no table `{name}`")))?;
        let none = py.None().into_bound(py);
        let cols = t.columns.iter().map(|(col, values)| -> PyResult<Bound<'py, PyTuple>> {
            let (kind, data, mask): (&str, Bound<'py, PyAny>, Bound<'py, PyAny>) = match values {
                Values::Int(v) => ("int", bytes(py, v.iter().flat_map(|x| x.to_le_bytes())), none.clone()),
                Values::OptInt(v) => (
                    "optint",
                    bytes(py, v.iter().flat_map(|x| x.unwrap_or(0).to_le_bytes())),
                    bytes(py, v.iter().map(|x| x.is_none() as u8)),
                ),
                Values::Float(v) => ("float", bytes(py, v.iter().flat_map(|x| x.to_le_bytes())), none.clone()),
                Values::Bool(v) => ("bool", bytes(py, v.iter().map(|&x| x as u8)), none.clone()),
                Values::Text(v) => ("text", PyList::new(py, v)?.into_any(), none.clone()),
            };
            PyTuple::new(py, [col.name.into_pyobject(py)?.into_any(), kind.into_pyobject(py)?.into_any(), data, mask])
        });
        PyList::new(py, cols.collect::<PyResult<Vec<_>>>()?)
    }

    /// `summary.json`'s text.
    fn summary_json(&self) -> String {
        self.results.summary_json()
    }

    /// `resolved_scenario.toml`'s text: the scenario file that reruns this run.
    fn resolved_scenario(&self) -> String {
        self.results.scenario_toml.clone()
    }

    /// Writes the result files into `dir` under the rules of a results folder, as the CLI does.
    fn save(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.allow_threads(|| self.results.write(&dir)).map_err(|e| to_py(py, e))
    }
}

fn bytes<'py>(py: Python<'py>, data: impl Iterator<Item = u8>) -> Bound<'py, PyAny> {
    PyBytes::new(py, &data.collect::<Vec<u8>>()).into_any()
}

/// Loads the scenario: a file (`.toml`, or an htsim `.cm` matrix) when `is_path`, else TOML text
/// whose relative file names resolve against the current folder.
fn load(source: &str, is_path: bool, overrides: &[String]) -> fabricsim::Result<fabricsim::Setup> {
    if is_path {
        fabricsim::scenario::load(Path::new(source), overrides)
    } else {
        Scenario::from_toml(source, overrides)?.setup(Path::new("."))
    }
}

/// Loads, checks the results folder, simulates (GIL released) and writes the results there.
/// `progress(fraction, simulated_us, events, messages_done, messages)` is called every 0.1 s of
/// wall time; Ctrl-C (or an exception from `progress`) stops the run, whose partial results
/// (`summary.interrupted`) are written to `out` if given, and is raised here.
#[pyfunction]
#[pyo3(signature = (source, is_path, overrides, out=None, progress=None, threads=1))]
fn run(py: Python<'_>, source: &str, is_path: bool, overrides: Vec<String>, out: Option<PathBuf>, progress: Option<PyObject>, threads: i64) -> PyResult<NativeResults> {
    if !(1..=1024).contains(&threads) {
        return Err(to_py(py, fabricsim::Error::invalid("threads", format!("{threads}: allowed 1..=1024 (1 = the serial engine)"))));
    }
    let setup = py
        .allow_threads(|| catch_unwind(AssertUnwindSafe(|| load(source, is_path, &overrides))))
        .map_err(panic_to_py)?
        .map_err(|e| to_py(py, e))?;
    let out_dir = out.map(|d| OutDir::prepare(&d, "out")).transpose().map_err(|e| to_py(py, e))?;
    let stop = AtomicBool::new(false);
    let pending: Mutex<Option<PyErr>> = Mutex::new(None);
    let mut last = Instant::now();
    let mut poll = |p: &fabricsim::Progress| {
        if last.elapsed() < POLL {
            return;
        }
        last = Instant::now();
        Python::with_gil(|py| {
            let outcome = py.check_signals().and_then(|()| match &progress {
                Some(cb) => cb
                    .call1(py, (p.fraction, p.now.0 as f64 / (fabricsim::units::US).0 as f64, p.events, p.messages_done, p.messages))
                    .map(drop),
                None => Ok(()),
            });
            if let Err(e) = outcome {
                *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                stop.store(true, Ordering::Relaxed);
            }
        });
    };
    let ran = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let results = fabricsim::run_threads(&setup, threads as usize, &mut poll, &stop)?;
            if let Some(dir) = &out_dir {
                results.write_to(dir)?;
            }
            Ok(results)
        }))
    });
    if let Some(e) = pending.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let results = ran.map_err(panic_to_py)?.map_err(|e| to_py(py, e))?;
    Ok(NativeResults { results })
}

/// The output schema of the tables: `{table: {"file", "written", "row", "columns": [(name,
/// unit, meaning), ...]}}`.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let all = PyDict::new(py);
    for (name, file) in columns::TABLES {
        let d = PyDict::new(py);
        d.set_item("file", file.name)?;
        d.set_item("written", file.written)?;
        d.set_item("row", file.row)?;
        d.set_item("columns", file.columns.iter().map(|c| (c.name, c.unit, c.meaning)).collect::<Vec<_>>())?;
        all.set_item(*name, d)?;
    }
    Ok(all)
}

/// `summary.json`'s keys as `[(key, unit, meaning), ...]` (dotted paths, `[]` marking the
/// elements of an array), for reports that label the summary's figures with their units.
#[pyfunction]
fn summary_schema() -> Vec<(&'static str, &'static str, &'static str)> {
    fabricsim::results::schema::SUMMARY.columns.iter().map(|c| (c.name, c.unit, c.meaning)).collect()
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    fabricsim::huge_pages::limit_retained_free_memory();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(summary_schema, m)?)?;
    m.add_class::<NativeResults>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
