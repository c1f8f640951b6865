//! The real file system as a [`Host`], for the native CLI and runner.
//! (The JS plugin answers the same questions with node:fs.)

use std::path::{Path, PathBuf};

use crate::host::{Host, PathKind};
use crate::paths;

pub struct FsHost {
    path_var: Option<String>,
    /// Resolved existing ancestors: most roots share a few (home, /usr).
    resolved: std::cell::RefCell<std::collections::HashMap<PathBuf, Option<PathBuf>>>,
}

impl FsHost {
    pub fn from_env() -> FsHost {
        FsHost { path_var: std::env::var("PATH").ok(), resolved: Default::default() }
    }

    fn resolve_existing(&self, p: &Path) -> Option<PathBuf> {
        if let Some(r) = self.resolved.borrow().get(p) {
            return r.clone();
        }
        let r = std::fs::canonicalize(p).ok();
        self.resolved.borrow_mut().insert(p.to_path_buf(), r.clone());
        r
    }
}

impl Host for FsHost {
    /// One process decides once (CLI) or runs one fence: a generation per
    /// process is as fresh as the answers can be.
    fn generation(&self) -> Option<u64> {
        Some(0)
    }

    fn canonical(&self, path: &str) -> String {
        // Find the deepest existing ancestor with lstat (cheap), then resolve
        // it once; what does not exist yet is re-appended as spelled.
        let full = PathBuf::from(paths::normalize(path));
        let mut existing = full.as_path();
        let mut tail: Vec<&std::ffi::OsStr> = Vec::new();
        while std::fs::symlink_metadata(existing).is_err() {
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name);
                    existing = parent;
                }
                _ => return paths::normalize(path),
            }
        }
        match self.resolve_existing(existing) {
            Some(mut out) => {
                for seg in tail.iter().rev() {
                    out.push(seg);
                }
                paths::normalize(&out.to_string_lossy())
            }
            // A dangling link or an unreadable component: as spelled.
            None => paths::normalize(path),
        }
    }

    fn kind(&self, path: &str) -> PathKind {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => PathKind::Dir,
            Ok(_) => PathKind::File,
            Err(_) => PathKind::Missing,
        }
    }

    fn which(&self, program: &str) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let var = self.path_var.as_deref()?;
        var.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(program)).find_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            (m.is_file() && m.permissions().mode() & 0o111 != 0).then(|| p.to_string_lossy().into_owned())
        })
    }
}
