//! Errors a user can cause or see. Bad input never panics: it becomes [`Error::Invalid`], naming
//! the scenario key, the value and what is allowed.

use thiserror::Error;

/// Everything that can go wrong between reading a scenario and writing results.
#[derive(Debug, Error)]
pub enum Error {
    /// A scenario value is missing, malformed or impossible.
    #[error("invalid scenario: `{key}`: {message}")]
    Invalid {
        /// Dotted path of the offending key (e.g. `topology.oversubscription`).
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// The scenario file is not valid TOML.
    #[error("invalid scenario: {0}")]
    Syntax(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's complaint.
        message: String,
    },
    /// The results folder cannot be used: refused (it holds result files fabricsim did not
    /// write), not a folder, or not writable.
    #[error("{name} `{dir}`: {message}")]
    OutDir {
        /// How the user gave the folder (`--out`, `results folder`).
        name: String,
        /// The folder.
        dir: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A result file could not be written (a full disk, a quota, a folder removed under the
    /// run): the run itself finished, but its results are not all in the folder. The file is
    /// left under its temporary name or not at all, never half-written under its own name.
    #[error("cannot write `{path}`: {message}; the run's results were not all written (free some space, or give another results folder, and run again)")]
    Write {
        /// The file, as its final name in the results folder.
        path: String,
        /// The operating system's complaint (e.g. "No space left on device (os error 28)").
        message: String,
    },
    /// The simulation broke one of its own invariants (a simulator bug or a scheme bug).
    #[error("invariant violated:\n  {}", .0.join("\n  "))]
    Invariant(Vec<String>),
    /// The caller stopped the run before it finished ([`crate::run_until_stopped`]).
    #[error("the run was stopped before it finished")]
    Stopped,
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { key: key.into(), message: message.into() }
    }

    /// The same error with a key under `from` (`transport.cc`) moved under `to`
    /// (`transport.cc_by_source[0].cc`): a table checked by code that names its usual place.
    pub fn moved(self, from: &str, to: &str) -> Self {
        match self {
            Error::Invalid { key, message } if key.starts_with(from) => Error::Invalid { key: format!("{to}{}", &key[from.len()..]), message },
            e => e,
        }
    }

    /// Whether the error is the user's input (exit code 2) rather than the run's.
    pub fn is_input_error(&self) -> bool {
        matches!(self, Error::Invalid { .. } | Error::Syntax(_) | Error::Io { .. } | Error::OutDir { .. })
    }

    /// Whether the run finished but writing its results failed ([`Error::Write`]; the CLI's
    /// exit code 3).
    pub fn is_write_error(&self) -> bool {
        matches!(self, Error::Write { .. })
    }
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
