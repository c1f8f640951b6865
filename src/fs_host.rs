//! The real file system as a [`Host`], for the native CLI and runner.
//! (The JS plugin answers the same questions with node:fs.)

use std::path::{Path, PathBuf};

use crate::host::{Host, PathKind};
use crate::paths;

pub struct FsHost {
    path_var: Option<String>,
}

impl FsHost {
    pub fn from_env() -> FsHost {
        FsHost { path_var: std::env::var("PATH").ok() }
    }
}

impl Host for FsHost {
    /// One process decides once (CLI) or runs one fence: a generation per
    /// process is as fresh as the answers can be.
    fn generation(&self) -> Option<u64> {
        Some(0)
    }

    fn canonical(&self, path: &str) -> String {
        // Resolve the deepest existing ancestor; re-append what does not exist yet.
        let mut existing = PathBuf::from(paths::normalize(path));
        let mut tail: Vec<String> = Vec::new();
        loop {
            if let Ok(real) = std::fs::canonicalize(&existing) {
                let mut out = real;
                for seg in tail.iter().rev() {
                    out.push(seg);
                }
                return paths::normalize(&out.to_string_lossy());
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name.to_string_lossy().into_owned());
                    existing = parent.to_path_buf();
                }
                _ => return paths::normalize(path),
            }
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
