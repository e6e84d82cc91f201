//! Names the exact engine a binary was built from: `DCFAIR_ENGINE_BUILD`, read by
//! [`ENGINE_BUILD`](crate::ENGINE_BUILD) and written into every `summary.json`.
//!
//! The engine is everything a run's results depend on: the sources of `dcfair-core`,
//! `dcfair-sim` and the Python binding `dcfair-py`, the workspace manifest and `Cargo.lock`.
//!
//! - In a git checkout whose engine files are as committed: `g` and the short hash of the last
//!   commit that changed them (`ge8e94c1`, as `git describe` names a commit; the `g` also keeps
//!   a hash such as `753e346` from being read as a number by CSV readers). Commits that touch
//!   only Python, docs or scenarios keep it.
//! - In a checkout with uncommitted engine changes (or untracked engine files): that name,
//!   `+dirty` and the first 8 hex digits of the SHA-256 of the engine's sources
//!   (`ge8e94c1+dirty.3fa9c0d2`), so two different dirty trees never share a name.
//! - Outside git (an sdist, a copied tree) or without a `git` command: `src.` and the first
//!   12 hex digits of that hash (`src.3fa9c0d2b1e4`).
//!
//! The label is fixed when the engine is compiled: the script reruns whenever an engine file
//! changes, not when a commit is made, so a binary built from a dirty tree keeps its `+dirty`
//! name after the changes are committed (it was built from uncommitted sources).

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// Engine inputs, relative to the workspace root.
const ENGINE_PATHS: [&str; 5] = ["crates/core", "crates/sim", "crates/py", "Cargo.toml", "Cargo.lock"];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.parent().and_then(Path::parent).expect("crates/sim sits two levels below the workspace root");
    let mut files = Vec::new();
    for p in ENGINE_PATHS {
        let path = root.join(p);
        println!("cargo:rerun-if-changed={}", path.display());
        collect(&path, &mut files);
    }
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(f).unwrap_or_default());
        h.update([0]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let build = match git_label(root) {
        Some((commit, false)) => commit,
        Some((commit, true)) => format!("{commit}+dirty.{}", &hex[..8]),
        None => format!("src.{}", &hex[..12]),
    };
    println!("cargo:rustc-env=DCFAIR_ENGINE_BUILD={build}");
}

/// Every file under `path` (or `path` itself), skipping build outputs and hidden entries.
fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::metadata(path) else { return };
    if meta.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        collect(&e.path(), out);
    }
}

/// `(last commit that changed the engine, whether the engine differs from it)`, or `None`
/// outside a git checkout or without git.
fn git_label(root: &Path) -> Option<(String, bool)> {
    let git = |args: &[&str]| -> Option<String> {
        let o = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
        o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let inside = git(&["rev-parse", "--show-toplevel"])?;
    if Path::new(&inside).canonicalize().ok()? != root.canonicalize().ok()? {
        return None; // a tree copied into another repository is not that repository's engine
    }
    let mut log = vec!["log", "-1", "--format=%h", "--"];
    log.extend(ENGINE_PATHS);
    let commit = git(&log).filter(|c| !c.is_empty()).map(|c| format!("g{c}"))?;
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(ENGINE_PATHS);
    let dirty = !git(&status)?.is_empty();
    Some((commit, dirty))
}
