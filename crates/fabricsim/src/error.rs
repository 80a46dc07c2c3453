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
    /// The parallel engine lost a partition's thread before the run finished (an interrupt
    /// is not this error: it gives partial results, [`crate::run_until_stopped`]).
    #[error("the run stopped before it finished: a partition of the parallel engine hung up")]
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

/// `message` with a "did you mean" for a misspelt key or value: when it reports an unknown
/// field, variant or scheme `x` and lists the expected ones (serde's "unknown field `x`,
/// expected one of `a`, `b`", "expected `a` or `b`", the registry's "unknown congestion control
/// `x`; allowed: `a`, `b`"), the expected name nearest to `x` is suggested if it is near enough
/// (edit distance at most a third of its length, and at least 1 for short names).
pub fn with_suggestion(message: &str) -> String {
    // The first backticked name after "unknown" (serde's field / variant, our scheme names).
    let Some(start) = message.find("unknown ").and_then(|u| message[u..].find('`').map(|i| u + i + 1)) else {
        return message.to_string();
    };
    let Some(len) = message[start..].find('`') else { return message.to_string() };
    let given = &message[start..start + len];
    let after = &message[start + len..];
    let Some(expected) = after.find("expected").or_else(|| after.find("allowed")).map(|i| &after[i..]) else {
        return message.to_string();
    };
    let candidates = expected.split('`').skip(1).step_by(2);
    let best = candidates.map(|c| (edit_distance(given, c), c)).min_by_key(|&(d, c)| (d, c.len()));
    match best {
        Some((d, c)) if d > 0 && d <= (c.len() / 3).max(1) => format!("{message}; did you mean `{c}`?"),
        _ => message.to_string(),
    }
}

/// Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_name_the_nearest_expected_name_only_when_near() {
        let m = "unknown field `mtu_byte`, expected one of `mtu_bytes`, `header_bytes`, `ack_bytes`";
        assert!(with_suggestion(m).ends_with("; did you mean `mtu_bytes`?"), "{}", with_suggestion(m));
        let v = "unknown variant `dequeu`, expected `enqueue` or `dequeue`";
        assert!(with_suggestion(v).ends_with("did you mean `dequeue`?"));
        // Far from every name: no suggestion; an exact name (another error) neither.
        assert_eq!(with_suggestion("unknown field `zzzzzz`, expected one of `mtu_bytes`, `ack_bytes`"), "unknown field `zzzzzz`, expected one of `mtu_bytes`, `ack_bytes`");
        assert_eq!(with_suggestion("invalid type: string"), "invalid type: string");
        let c = "unknown congestion control `smarrt`; allowed: `fixed`, `smartt`, `swift`";
        assert!(with_suggestion(c).ends_with("did you mean `smartt`?"), "{}", with_suggestion(c));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
