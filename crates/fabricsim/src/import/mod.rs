//! Translators from other simulators' inputs into fabricsim scenarios: [`htsim`] turns an
//! `htsim_uec` / `htsim_eqds` command line into a scenario TOML (`fabricsim from-htsim`),
//! [`ns3`] the config file of the HPCC ns-3 RDMA simulator (`fabricsim from-ns3`).
//!
//! What they share lives here: the scenario as it is written ([`Doc`], one commented key a
//! line, each key's comment kept as its source), the file names made relative to where the
//! scenario goes, and the validation `fabricsim check` runs, whose refusal is traced back
//! through the refused key's comment to the flag or config key that wrote it.

pub mod htsim;
pub mod ns3;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod ns3_tests;

use crate::error::Error;
use crate::scenario::Scenario;
use std::fmt::{self, Write as _};
use std::path::{Component, Path, PathBuf};

/// Where the translator reads its inputs and where the scenario is written, for the relative
/// file names in it.
#[derive(Clone, Debug)]
pub struct Context {
    /// The folder the other simulator would run in: the input files it names are relative to it.
    pub cwd: PathBuf,
    /// The folder the scenario file goes to (`-o`), whose file names must be relative to it;
    /// `None` when it is printed (the names stay as given, relative to `cwd`).
    pub out_dir: Option<PathBuf>,
}

impl Context {
    /// Reads the input file `name` (relative to [`Context::cwd`]) within the input-file budget.
    pub(crate) fn read(&self, name: &str) -> Result<(PathBuf, String), String> {
        let path = self.cwd.join(name);
        match crate::budget::read_input_file(&path) {
            Ok(t) => Ok((path, t)),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// How the scenario names the input file `name` read from `path`: relative to the output
    /// folder when there is one, else as given.
    pub(crate) fn file_name(&self, name: &str, path: &Path) -> String {
        match &self.out_dir {
            Some(dir) => relative(&path.canonicalize().unwrap_or_else(|_| path.to_path_buf()), dir).to_string_lossy().into_owned(),
            None => name.to_string(),
        }
    }
}

/// One scenario key as written: key, value (TOML), comment naming its source.
pub(crate) type Line = (String, String, String);

pub(crate) fn line(key: &str, value: impl fmt::Display, comment: impl Into<String>) -> Line {
    (key.to_string(), value.to_string(), comment.into())
}

/// The scenario as it is written, and for each key (dotted) the comment saying which flag,
/// config key or default it comes from: what a refusal of the scenario is traced back through.
#[derive(Default)]
pub(crate) struct Doc {
    pub text: String,
    pub sources: Vec<(String, String)>,
}

impl fmt::Write for Doc {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

/// Writes one TOML table (`[t]`, or `[[t]]` when `table` starts with `[`): `key = value  #
/// comment`, comments aligned. An array-of-tables entry's keys are recorded as
/// `t[i].key`, `i` counting the entries written so far, as the scenario's errors name them.
pub(crate) fn emit(w: &mut Doc, table: Option<&str>, lines: &[Line]) {
    let prefix = match table {
        Some(t) => match t.strip_prefix('[') {
            Some(array) => {
                let _ = writeln!(w, "\n[[{array}]]");
                let i = w.text.matches(&format!("\n[[{array}]]\n")).count() - 1;
                Some(format!("{array}[{i}]"))
            }
            None => {
                let _ = writeln!(w, "\n[{t}]");
                Some(t.to_string())
            }
        },
        None => None,
    };
    let width = lines.iter().map(|(k, v, _)| k.len() + v.len() + 3).max().unwrap_or(0).min(40);
    for (k, v, c) in lines {
        let kv = format!("{k} = {v}");
        let _ = writeln!(w, "{kv:<width$}  # {c}");
        w.sources.push((prefix.as_ref().map_or_else(|| k.clone(), |t| format!("{t}.{k}")), c.clone()));
    }
}

/// Runs on the translated scenario the validation `fabricsim check` runs (parse, then set up
/// the fabric and the workload, the files read as the scenario names them), so that no input
/// translates to a scenario `check` refuses. `None` when it is accepted; else the origin of
/// the refused key, found in that key's comment (or the closest enclosing key's) as the first
/// word `is_origin` accepts (`whole` when none), and the message, which names the other
/// origins in that comment, the refusal and the comment.
pub(crate) fn refusal(doc: &Doc, ctx: &Context, is_origin: impl Fn(&str) -> bool, whole: &str) -> Option<(String, String)> {
    let base = ctx.out_dir.as_ref().unwrap_or(&ctx.cwd);
    let refusal = Scenario::from_toml(&doc.text, &[]).and_then(|s| s.setup(base)).err()?;
    let (key, why) = match &refusal {
        Error::Invalid { key, message } => (key.as_str(), format!("`{key}`: {message}")),
        e => ("", e.to_string()),
    };
    // The written key the refused one is, or lies under (`topology.failures.links[0]`,
    // `workload.file (m.cm:3)`), else the first written under it (`topology.failures`), else
    // the first written form of it (`switch.ecn_kmin_bytes` for `switch.ecn_kmin`).
    let under = |k: &str, of: &str| k.strip_prefix(of).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[', ' ']));
    let form = |k: &str| !key.is_empty() && k.strip_prefix(key).is_some_and(|rest| rest.starts_with('_'));
    let source = doc
        .sources
        .iter()
        .filter(|(k, _)| under(key, k))
        .max_by_key(|(k, _)| k.len())
        .or_else(|| doc.sources.iter().find(|(k, _)| !key.is_empty() && under(k, key)))
        .or_else(|| doc.sources.iter().find(|(k, _)| form(k)));
    let origins: Vec<&str> = source.map_or_else(Vec::new, |(_, c)| c.split(|ch: char| ch.is_whitespace() || ",:;()".contains(ch)).filter(|w| is_origin(w)).collect());
    let mut origins = origins.into_iter();
    let origin = origins.next().unwrap_or(whole);
    let also: Vec<&str> = origins.filter(|f| *f != origin).collect();
    let from = source.map_or_else(String::new, |(k, c)| format!(" (`{k}` comes from: {c})"));
    let with = if also.is_empty() { String::new() } else { format!("with {}, ", also.join(" ")) };
    Some((origin.to_string(), format!("{with}the scenario it translates to is refused by `fabricsim check`: {why}{from}")))
}

/// A number as TOML writes it: integers without a fraction, others with as many digits as
/// they need.
pub(crate) fn show(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

pub(crate) fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `to`, relative to the folder `from` when both are absolute (`../shared/x.cm`), else `to`.
pub(crate) fn relative(to: &Path, from: &Path) -> PathBuf {
    let a: Vec<Component> = to.components().collect();
    let b: Vec<Component> = from.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return to.to_path_buf();
    }
    let mut p = PathBuf::new();
    for _ in common..b.len() {
        p.push("..");
    }
    for c in &a[common..] {
        p.push(c.as_os_str());
    }
    p
}
