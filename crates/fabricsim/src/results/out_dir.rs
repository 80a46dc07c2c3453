//! The results folder a run owns: checked and cleared before the simulation starts, so that
//! an unusable folder fails at once and files of an earlier run never sit beside this one's.
//!
//! Rules (the book's `docs/src/reference/outputs.md`, "The results folder"):
//! - Every run writes [`MANIFEST`] into its folder: the fabricsim version and the files it
//!   wrote. The manifest is what makes a folder "ours".
//! - A previous run's results stay, whole, until the new run has results to replace them
//!   with: the new files are written aside, and only then are the files the previous
//!   manifest lists (only those, so inputs kept in the folder — the `scenario.toml` that
//!   `experiments/runner.py` writes there, CDF or trace files — survive) replaced or
//!   removed. A run that fails or is killed before it has results leaves the folder as it
//!   was; an interrupted run (Ctrl-C) writes its partial results, marked as such.
//! - A folder holding any file with a fabricsim output name ([`is_output_file`], or the
//!   manifest name) but no readable fabricsim manifest was not written by a run of ours (or by a version
//!   before manifests): it is refused, untouched, with an input error naming the folder.
//!   Files with other names never cause a refusal.
//!
//! [`OutDir::prepare`] applies the rules and claims the folder (a new one gets a manifest that
//! lists no files; one with a manifest keeps it and its files); [`crate::Results::write_to`]
//! writes every file aside, under its name with [`PARTIAL`] appended, then writes a manifest
//! listing both runs' files, removes the previous run's files the new run does not write,
//! renames the new ones into place, and writes the manifest of the new run alone. A reader
//! never sees a half-written `flows.csv`, and a run cut off at any step leaves a manifest that
//! covers every result file in the folder. A `NAME.partial` of an output name is a leftover of
//! a run cut short: it never causes a refusal, and is removed when a run claims the folder.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the manifest file in a results folder.
pub const MANIFEST: &str = "manifest.json";

/// Whether `name` is a file a run may write (the manifest aside): a row of the output table in
/// `csv.rs`, so that a new output file is recognised here without a second list.
pub fn is_output_file(name: &str) -> bool {
    super::csv::OUTPUT_FILES.iter().any(|f| f.schema.name == name)
}

/// Appended to a file's name while it is being written.
pub const PARTIAL: &str = ".partial";

/// The name `file` has while it is being written.
pub(crate) fn partial_name(file: &str) -> String {
    format!("{file}{PARTIAL}")
}

/// Whether `name` is a leftover of a run cut short while writing: the name of an output file
/// or of the manifest with [`PARTIAL`] appended.
fn is_partial(name: &str) -> bool {
    name.strip_suffix(PARTIAL).is_some_and(|base| base == MANIFEST || is_output_file(base))
}

/// Written into [`Manifest::written_by`]; a manifest without it is not ours.
const WRITER: &str = "fabricsim";

/// `manifest.json`: who wrote the folder and which of its files are results.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always `"fabricsim"`.
    pub written_by: String,
    /// The version of the fabricsim library that wrote the folder.
    pub version: String,
    /// The result files of the run, in the order written (empty while the run is simulating).
    pub files: Vec<String>,
}

impl Manifest {
    /// A manifest of this version listing `files`.
    pub fn of(files: &[&str]) -> Manifest {
        Manifest { written_by: WRITER.into(), version: env!("CARGO_PKG_VERSION").into(), files: files.iter().map(|f| f.to_string()).collect() }
    }

    /// The manifest as written: pretty JSON, newline-terminated, no time stamps (so two identical
    /// runs leave identical folders).
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Parses a manifest; `None` when the text is not a fabricsim manifest, or lists anything but
    /// plain file names (a manifest must never make us delete outside its folder).
    pub fn parse(text: &str) -> Option<Manifest> {
        let m: Manifest = serde_json::from_str(text).ok()?;
        let plain = |f: &String| !f.is_empty() && f != "." && f != ".." && !f.contains(['/', '\\']) && f != MANIFEST;
        (m.written_by == WRITER && m.files.iter().all(plain)).then_some(m)
    }
}

/// A results folder that passed the rules and is claimed for one run.
#[derive(Clone, Debug)]
pub struct OutDir {
    path: PathBuf,
    /// How the user named the folder (`--out` for the CLI), for error messages.
    name: String,
    /// The result files of the run that wrote the folder before, replaced when this run's
    /// results are written ([`OutDir::replace_with`]).
    previous: Vec<String>,
}

impl OutDir {
    /// Checks `dir` (creating it if needed) and claims it: a folder without a manifest gets an
    /// empty one, a folder with one keeps it and the results it lists until
    /// [`OutDir::replace_with`]. `name` says how the user gave the folder (`"--out"`, `"results
    /// folder"`) and starts every error message. Refusals and I/O failures (an unwritable
    /// folder fails here, before a long run) are input errors ([`Error::OutDir`]) and leave a
    /// refused folder as it was.
    pub fn prepare(dir: &Path, name: &str) -> Result<OutDir> {
        let mut out = OutDir { path: dir.to_path_buf(), name: name.to_string(), previous: Vec::new() };
        if dir.exists() && !dir.is_dir() {
            return Err(out.error("exists and is not a folder; give a folder (new, or one an earlier run wrote)"));
        }
        std::fs::create_dir_all(dir).map_err(|e| out.error(format!("cannot be created: {e}")))?;
        out.previous = out.previous()?.files;
        out.remove_partial_files()?;
        // Writing the manifest (the one there, unchanged) is the proof that the folder takes files.
        let manifest = Manifest::of(&out.previous.iter().map(String::as_str).collect::<Vec<_>>()).text();
        out.write_io(MANIFEST, manifest.as_bytes()).map_err(|e| out.error(format!("cannot write `{MANIFEST}` into it: {e}")))?;
        Ok(out)
    }

    /// Puts this run's result files, already written under their temporary names, in place of
    /// the previous run's: a manifest listing both, the previous files this run does not write
    /// removed, the new ones renamed into place, then the manifest of this run alone.
    pub(crate) fn replace_with(&self, files: &[&str]) -> Result<()> {
        let gone: Vec<&str> = self.previous.iter().map(String::as_str).filter(|f| !files.contains(f)).collect();
        self.write_manifest(&[&gone[..], files].concat())?;
        for f in gone {
            match std::fs::remove_file(self.path.join(f)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.write_error(f, e)),
            }
        }
        for f in files {
            std::fs::rename(self.partial_path(f), self.path.join(f)).map_err(|e| self.write_error(f, e))?;
        }
        self.write_manifest(files)
    }

    /// Writes `text` under `file`'s temporary name (to be put in place by
    /// [`OutDir::replace_with`]); a failure is an [`Error::Write`] naming the file, and leaves
    /// no temporary file.
    pub(crate) fn write_aside(&self, file: &str, text: &str) -> Result<()> {
        self.write_aside_io(file, text.as_bytes()).map_err(|e| self.write_error(file, e))
    }

    /// Writes `bytes` to `file`'s temporary name; on failure the temporary file is removed.
    fn write_aside_io(&self, file: &str, bytes: &[u8]) -> std::io::Result<()> {
        let temp = self.partial_path(file);
        std::fs::write(&temp, bytes).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    /// Removes the temporary files of `files` (a write of the results that failed half-way).
    pub(crate) fn discard_aside(&self, files: &[&str]) {
        for f in files {
            let _ = std::fs::remove_file(self.partial_path(f));
        }
    }

    /// Removes the files a run cut short left under their temporary names.
    fn remove_partial_files(&self) -> Result<()> {
        let entries = std::fs::read_dir(&self.path).map_err(|e| self.error(format!("cannot be read: {e}")))?;
        for name in entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| is_partial(n)) {
            match std::fs::remove_file(self.path.join(&name)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.error(format!("cannot remove `{name}`, left by a run cut short: {e}"))),
            }
        }
        Ok(())
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the manifest listing `files`.
    pub(crate) fn write_manifest(&self, files: &[&str]) -> Result<()> {
        self.write(MANIFEST, &Manifest::of(files).text())
    }

    /// Writes one file of the folder, aside and then renamed into place; a failure is an
    /// [`Error::Write`] naming the file.
    pub(crate) fn write(&self, file: &str, text: &str) -> Result<()> {
        self.write_io(file, text.as_bytes()).map_err(|e| self.write_error(file, e))
    }

    /// Writes `bytes` to `file`'s temporary name, then renames it to `file`; on failure the
    /// temporary file is removed and `file` is as it was.
    fn write_io(&self, file: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.write_aside_io(file, bytes)?;
        let temp = self.partial_path(file);
        std::fs::rename(&temp, self.path.join(file)).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    /// Where `file` is written until it is complete.
    pub(crate) fn partial_path(&self, file: &str) -> PathBuf {
        self.path.join(partial_name(file))
    }

    /// The error of a failed write of `file`.
    pub(crate) fn write_error(&self, file: &str, e: std::io::Error) -> Error {
        Error::Write { path: self.path.join(file).display().to_string(), message: e.to_string() }
    }

    /// The manifest of the run that wrote the folder before (an empty one for a folder without
    /// fabricsim files); an error when the folder holds fabricsim file names we did not write.
    fn previous(&self) -> Result<Manifest> {
        let manifest = self.path.join(MANIFEST);
        if manifest.exists() {
            let text = std::fs::read_to_string(&manifest).map_err(|e| self.error(format!("cannot read `{MANIFEST}`: {e}")))?;
            return Manifest::parse(&text).ok_or_else(|| {
                self.error(format!(
                    "`{MANIFEST}` is not a fabricsim manifest (or is damaged), so the folder was not written by fabricsim; \
                     give a new or empty folder, or remove `{MANIFEST}` and the result files beside it"
                ))
            });
        }
        let entries = std::fs::read_dir(&self.path).map_err(|e| self.error(format!("cannot be read: {e}")))?;
        let mut ours: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| is_output_file(n))
            .collect();
        if ours.is_empty() {
            return Ok(Manifest::of(&[]));
        }
        ours.sort();
        Err(self.error(format!(
            "holds {} but no `{MANIFEST}`, so fabricsim did not write it (or an older version did) and will not overwrite it; \
             give a new or empty folder, or remove those files (files with other names may stay)",
            ours.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        )))
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::OutDir { name: self.name.clone(), dir: self.path.display().to_string(), message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A fresh, empty-to-be directory under the system's temporary folder.
    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fabricsim-outdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A fresh folder holding `files` as (name, text).
    fn folder_with(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = temp_dir(name);
        std::fs::create_dir_all(&d).unwrap();
        for (f, text) in files {
            std::fs::write(d.join(f), text).unwrap();
        }
        d
    }

    fn files_in(d: &Path) -> BTreeSet<String> {
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn manifest_round_trips_and_rejects_paths() {
        let m = Manifest::of(&["flows.csv", "summary.json"]);
        assert_eq!(Manifest::parse(&m.text()), Some(m));
        assert!(Manifest::parse("{}").is_none());
        assert!(Manifest::parse(r#"{"written_by":"other","version":"1","files":[]}"#).is_none());
        for bad in ["../x", "a/b", "..", "", "manifest.json", "a\\b"] {
            let text = format!(r#"{{"written_by":"fabricsim","version":"0","files":["{}"]}}"#, bad.replace('\\', "\\\\"));
            assert!(Manifest::parse(&text).is_none(), "{bad}");
        }
    }

    #[test]
    fn prepare_claims_a_new_folder_and_the_previous_results_stay_until_replaced() {
        let d = temp_dir("claim");
        OutDir::prepare(&d, "--out").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST]));
        assert_eq!(Manifest::parse(&std::fs::read_to_string(d.join(MANIFEST)).unwrap()), Some(Manifest::of(&[])));
        // An earlier run's files, an input beside them, and an output name the manifest misses.
        for f in ["flows.csv", "trace.csv", "scenario.toml", "notes.txt"] {
            std::fs::write(d.join(f), "old").unwrap();
        }
        let earlier = Manifest::of(&["flows.csv", "trace.csv", "events.csv"]);
        std::fs::write(d.join(MANIFEST), earlier.text()).unwrap();
        // Claimed for a new run: nothing is removed yet, the manifest still covers the old files.
        let out = OutDir::prepare(&d, "--out").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "flows.csv", "trace.csv", "scenario.toml", "notes.txt"]));
        assert_eq!(Manifest::parse(&std::fs::read_to_string(d.join(MANIFEST)).unwrap()), Some(earlier));
        // The new results, written aside, replace the listed files only.
        out.write_aside("flows.csv", "new").unwrap();
        out.write_aside("summary.json", "{}").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), "old");
        out.replace_with(&["flows.csv", "summary.json"]).unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "flows.csv", "summary.json", "scenario.toml", "notes.txt"]));
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), "new");
        assert_eq!(Manifest::parse(&std::fs::read_to_string(d.join(MANIFEST)).unwrap()), Some(Manifest::of(&["flows.csv", "summary.json"])));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn results_that_fail_to_be_written_leave_the_previous_ones_whole() {
        let d = folder_with("swap-fails", &[("flows.csv", "old"), ("summary.json", "old")]);
        std::fs::write(d.join(MANIFEST), Manifest::of(&["flows.csv", "summary.json"]).text()).unwrap();
        let out = OutDir::prepare(&d, "--out").unwrap();
        out.write_aside("flows.csv", "new").unwrap();
        // A full disk (writes to /dev/full fail) for the second file.
        std::os::unix::fs::symlink("/dev/full", out.partial_path("summary.json")).unwrap();
        let e = out.write_aside("summary.json", "new").unwrap_err();
        assert!(e.is_write_error() && e.to_string().contains("summary.json"), "{e}");
        out.discard_aside(&["flows.csv", "summary.json"]);
        assert_eq!(files_in(&d), set(&[MANIFEST, "flows.csv", "summary.json"]));
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), "old");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_folder_with_foreign_results_is_refused_untouched() {
        let d = folder_with("foreign", &[("flows.csv", "theirs"), ("scenario.toml", "x")]);
        let e = OutDir::prepare(&d, "--out").unwrap_err();
        let msg = e.to_string();
        assert!(e.is_input_error());
        assert!(msg.starts_with("--out `") && msg.contains(&d.display().to_string()) && msg.contains("`flows.csv`") && msg.contains("no `manifest.json`"), "{msg}");
        assert_eq!(files_in(&d), set(&["flows.csv", "scenario.toml"]));
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), "theirs");
        // A manifest that is not ours is refused too, and kept.
        std::fs::remove_file(d.join("flows.csv")).unwrap();
        std::fs::write(d.join(MANIFEST), "{\"files\": [\"scenario.toml\"]}").unwrap();
        let msg = OutDir::prepare(&d, "results folder").unwrap_err().to_string();
        assert!(msg.starts_with("results folder `") && msg.contains("not a fabricsim manifest"), "{msg}");
        assert_eq!(files_in(&d), set(&[MANIFEST, "scenario.toml"]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unrelated_files_alone_are_no_reason_to_refuse() {
        let d = folder_with("inputs", &[("scenario.toml", "x"), ("cdf.txt", "x")]);
        OutDir::prepare(&d, "--out").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "scenario.toml", "cdf.txt"]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn leftovers_of_a_run_cut_short_are_removed_and_never_a_reason_to_refuse() {
        // Temporary names of a run cut short, in a folder without a manifest: not refused (they
        // are not result names), removed; other `.partial` files stay.
        let d = folder_with("partial", &[("port_trace.csv.partial", "half"), ("manifest.json.partial", "{"), ("notes.partial", "mine")]);
        OutDir::prepare(&d, "--out").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "notes.partial"]));
        // Beside the manifest of the run that left them.
        std::fs::write(d.join(MANIFEST), Manifest::of(&["flows.csv"]).text()).unwrap();
        std::fs::write(d.join("flows.csv.partial"), "half").unwrap();
        OutDir::prepare(&d, "--out").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "notes.partial"]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_failed_write_names_the_file_and_the_error_and_leaves_the_old_file_whole() {
        let d = temp_dir("full");
        let out = OutDir::prepare(&d, "--out").unwrap();
        out.write("flows.csv", "old\n").unwrap();
        assert_eq!(files_in(&d), set(&[MANIFEST, "flows.csv"]));
        // Writes to /dev/full fail with ENOSPC: the temporary file, made a link to it, stands
        // for a full disk.
        std::os::unix::fs::symlink("/dev/full", out.partial_path("flows.csv")).unwrap();
        let e = out.write("flows.csv", "new\n").unwrap_err();
        assert!(e.is_write_error() && !e.is_input_error(), "{e:?}");
        let msg = e.to_string();
        let path = d.join("flows.csv").display().to_string();
        assert!(msg.contains(&path) && msg.contains("No space left on device") && msg.contains("results were not all written"), "{msg}");
        // The reader sees the old file, whole; the temporary one is gone.
        assert_eq!(std::fs::read_to_string(d.join("flows.csv")).unwrap(), "old\n");
        assert_eq!(files_in(&d), set(&[MANIFEST, "flows.csv"]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_or_an_uncreatable_path_is_refused() {
        let d = temp_dir("file");
        std::fs::write(&d, "x").unwrap();
        let msg = OutDir::prepare(&d, "--out").unwrap_err().to_string();
        assert!(msg.contains("is not a folder"), "{msg}");
        let msg = OutDir::prepare(&d.join("sub"), "--out").unwrap_err().to_string();
        assert!(msg.contains("cannot be created"), "{msg}");
        let _ = std::fs::remove_file(&d);
    }
}
