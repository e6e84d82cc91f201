//! The two kinds of failure: the user's input (exit 2) and everything else (exit 1).

use std::fmt;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// Invalid input: the dotted key (or file) at fault and why. Exit status 2.
    Invalid { key: String, reason: String },
    /// Reading or writing a file failed.
    Io { path: String, reason: String },
    /// A bug or an impossible state. Exit status 1.
    Internal(String),
    /// The progress callback stopped the run (Ctrl-C). Exit status 130.
    Interrupted,
}

impl Error {
    pub fn invalid(key: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Invalid { key: key.into(), reason: reason.into() }
    }
    pub fn io(path: &Path, e: std::io::Error) -> Error {
        Error::Io { path: path.display().to_string(), reason: e.to_string() }
    }
    /// The process exit status this error maps to.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Invalid { .. } => 2,
            Error::Io { .. } | Error::Internal(_) => 1,
            Error::Interrupted => 130,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid { key, reason } => write!(f, "invalid scenario: {key}: {reason}"),
            Error::Io { path, reason } => write!(f, "{path}: {reason}"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}
