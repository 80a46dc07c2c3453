//! The files a scenario names (a flow list, a flow-size CDF, a collective trace): every one is
//! read through [`InputFiles`], which resolves it against one folder and remembers that a file
//! was read. A run's `resolved_scenario.toml` then records that folder as `files_dir`, so the run can be
//! repeated from its own output folder wherever that is.

use std::cell::Cell;
use std::path::{Path, PathBuf};

/// Reads the files a scenario names, relative to one folder.
pub struct InputFiles {
    dir: PathBuf,
    read_any: Cell<bool>,
}

impl InputFiles {
    /// Files resolved against `dir` (relative names) or as written (absolute ones).
    pub fn new(dir: &Path) -> InputFiles {
        InputFiles { dir: dir.to_path_buf(), read_any: Cell::new(false) }
    }

    /// The path `name` stands for.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Reads `name`: its path (for messages) and its text, or the I/O error.
    pub fn read(&self, name: &str) -> (PathBuf, std::io::Result<String>) {
        let path = self.path(name);
        let text = crate::budget::read_input_file(&path);
        if text.is_ok() {
            self.read_any.set(true);
        }
        (path, text)
    }

    /// Reads `name` as bytes (a binary input): its path and its bytes, or the I/O error.
    pub fn read_bytes(&self, name: &str) -> (PathBuf, std::io::Result<Vec<u8>>) {
        let path = self.path(name);
        let bytes = crate::budget::read_input_bytes(&path);
        if bytes.is_ok() {
            self.read_any.set(true);
        }
        (path, bytes)
    }

    /// The folder, absolute, if any file was read through it (`None`: the scenario reads no
    /// file, and its resolved form is complete without one).
    pub fn used_dir(&self) -> Option<PathBuf> {
        // An empty folder is the working directory (a scenario given as text, or a file name
        // without a folder).
        let dir = if self.dir.as_os_str().is_empty() { Path::new(".") } else { &self.dir };
        self.read_any.get().then(|| std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()))
    }
}
