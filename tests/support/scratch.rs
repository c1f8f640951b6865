//! Where real-kernel tests build their trees: the cargo target dir, unless
//! that sits in a temp folder (the baseline opens temp folders fully, which
//! would hide every denial, and a home inside one is compiled around so
//! nothing new can be made in it): then under $HOME/.cache/dsh-allow-tests,
//! or under /home when $HOME is not searchable by others (root's is not,
//! and the suites also run as an unprivileged user).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let real = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
    let under_temp = ["/tmp", "/var/tmp", "/dev/shm"].iter().any(|t| real.starts_with(t));
    if !under_temp {
        return target;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
    let dir = if searchable(&home) { home.join(".cache").join("dsh-allow-tests") } else { PathBuf::from("/home/.dsh-allow-tests") };
    std::fs::create_dir_all(&dir).expect("a scratch folder outside the temp dirs");
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
    dir
}

/// Whether every folder down to `dir` lets others through.
fn searchable(dir: &Path) -> bool {
    dir.ancestors().all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}
