//! Where the Seatbelt suites find `sandbox-exec`: Apple's on macOS; on
//! Linux the Seatbelt model (tests/seatbelt_model), a test instrument that
//! evaluates the profile with Seatbelt's documented semantics and enforces
//! it on the real process tree by seccomp user notification. Every line a
//! suite prints about it says "Seatbelt model", never Apple's kernel.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Apple's sandbox-exec.
pub const APPLE: &str = "/usr/bin/sandbox-exec";

/// What runs the suites here.
#[derive(Debug, Clone)]
pub enum Seatbelt {
    Apple,
    Model(PathBuf),
}

impl Seatbelt {
    pub fn program(&self) -> String {
        match self {
            Seatbelt::Apple => APPLE.to_string(),
            Seatbelt::Model(p) => p.to_string_lossy().into_owned(),
        }
    }

    /// The label every test line carries.
    pub fn label(&self) -> &'static str {
        match self {
            Seatbelt::Apple => "Seatbelt (Apple's kernel)",
            Seatbelt::Model(_) => "Seatbelt model (seccomp user notification; not Apple's kernel)",
        }
    }

    pub fn is_model(&self) -> bool {
        matches!(self, Seatbelt::Model(_))
    }
}

/// Apple's on macOS; on Linux the model, built once per test binary
/// (`DSH_ALLOW_SEATBELT_MODEL` names a built one, as scripts/test.sh does).
/// Err: why neither can run.
pub fn seatbelt() -> Result<Seatbelt, String> {
    static FOUND: OnceLock<Result<Seatbelt, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            if cfg!(target_os = "macos") {
                return Ok(Seatbelt::Apple);
            }
            if !cfg!(target_os = "linux") {
                return Err("the Seatbelt model runs on Linux only".into());
            }
            if let Some(p) = std::env::var_os("DSH_ALLOW_SEATBELT_MODEL") {
                let p = PathBuf::from(p);
                return if p.is_file() { Ok(Seatbelt::Model(p)) } else { Err(format!("DSH_ALLOW_SEATBELT_MODEL={} is not a file", p.display())) };
            }
            build().map(Seatbelt::Model)
        })
        .clone()
}

/// `cargo build --release` of the model into target/seatbelt-model (its own
/// target folder: the cargo running this test holds the lock on target/).
fn build() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target/seatbelt-model");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--release", "--manifest-path"])
        .arg(root.join("tests/seatbelt_model/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| format!("cargo could not start to build the Seatbelt model: {e}"))?;
    if !out.status.success() {
        return Err(format!("the Seatbelt model did not build:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(target.join("release/sandbox-exec"))
}
