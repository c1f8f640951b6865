//! The real file system as a [`Host`], for the native CLI and runner.
//! (The JS plugin answers the same questions with node:fs, pkg-template/core.)

use std::path::Path;

use crate::host::{Host, PathKind};
use crate::paths;

pub struct FsHost {
    path_var: Option<String>,
    /// Real paths of the prefixes walked so far (`None`: nothing is there,
    /// so what lies below is appended as spelled). Most roots share a few
    /// ancestors (home, /usr), so each new path costs one `lstat`.
    resolved: std::cell::RefCell<std::collections::BTreeMap<String, Option<String>>>,
    /// For each real path met that is not a symlink: is it a folder.
    is_dir: std::cell::RefCell<std::collections::BTreeMap<String, bool>>,
    /// Every name looked up in a real folder and what was found there:
    /// while each would be found the same, every `canonical` and `kind`
    /// answer stays true (the runner keeps a compiled fence on that
    /// condition). PATH lookups are not covered.
    looked: std::cell::RefCell<std::collections::BTreeMap<String, Looked>>,
}

/// What one lookup of a name in a real folder found, in the terms the walk
/// acts on: two lookups that find the same lead every walk through them the
/// same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing there, or nothing this process may see.
    Missing,
    Dir,
    /// Anything else that is not followed: a file, a device, a socket, and
    /// under `/proc` a link too (its target is the reader's own).
    File,
    /// A symbolic link and the text it holds.
    Link(String),
}

/// One lookup: what was found, and for a folder or a file which one (device
/// and inode). Lookups that found the same lead every walk the same way;
/// the identity says whether it is still the very file something was bound
/// to (a held fence's rules and mounts are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    pub found: Found,
    pub id: Option<(u64, u64)>,
}

impl Looked {
    /// Look `path` (a real folder and a name in it) up now, without
    /// following a link there. `None` when the folder is not a folder (a
    /// worktree's `.git` file): nothing can be found in it, and its turning
    /// into one changes the lookup of the folder itself.
    pub fn at(path: &str) -> Option<Looked> {
        use std::os::unix::fs::MetadataExt;
        let (found, id) = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() && !paths::within(path, "/proc") => match std::fs::read_link(path) {
                Ok(target) => (Found::Link(target.to_string_lossy().into_owned()), None),
                Err(_) => (Found::Missing, None),
            },
            Ok(m) if m.is_dir() => (Found::Dir, Some((m.dev(), m.ino()))),
            Ok(m) => (Found::File, Some((m.dev(), m.ino()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return None,
            Err(_) => (Found::Missing, None),
        };
        Some(Looked { found, id })
    }
}

/// The kernel's limit on symlinks followed in one lookup.
const MAX_LINKS: usize = 40;

impl FsHost {
    /// A host for one process's answers: the CLI decides once and the runner
    /// compiles one fence, so walked prefixes are remembered for its life.
    pub fn from_env() -> FsHost {
        FsHost {
            path_var: std::env::var("PATH").ok(),
            resolved: Default::default(),
            is_dir: Default::default(),
            looked: Default::default(),
        }
    }

    /// `from_env`, looking programs up on `path` (the PATH the call will
    /// run with, when it is not this process's).
    pub fn with_path(path: &str) -> FsHost {
        FsHost { path_var: Some(path.to_string()), ..FsHost::from_env() }
    }

    /// Every lookup made so far, by path, with what it found (see `looked`).
    pub fn looked(&self) -> std::collections::BTreeMap<String, Looked> {
        self.looked.borrow().clone()
    }

    /// The real path of `dir/name` where `dir` is already real, following a
    /// symlink there (its target resolved component by component, so a `..`
    /// after a link climbs from where the link landed, as the kernel does).
    /// `Err(spelled)` when nothing exists there: the caller appends the rest.
    fn step(&self, dir: &str, name: &str, links: &mut usize) -> Result<String, String> {
        let here = if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") };
        if let Some(known) = self.resolved.borrow().get(&here) {
            return known.clone().ok_or(here);
        }
        let looked = Looked::at(&here);
        if let Some(l) = &looked {
            self.looked.borrow_mut().insert(here.clone(), l.clone());
        }
        let real = match looked.map_or(Found::Missing, |l| l.found) {
            Found::Link(target) if *links < MAX_LINKS => {
                *links += 1;
                let base = if target.starts_with('/') { "/" } else { dir };
                Some(self.walk(base, &target, links))
            }
            Found::Missing => None,
            other => {
                self.is_dir.borrow_mut().insert(here.clone(), other == Found::Dir);
                Some(here.clone())
            }
        };
        self.resolved.borrow_mut().insert(here.clone(), real.clone());
        real.ok_or(here)
    }

    /// Resolve `rel` against the real folder `base`; past the first missing
    /// component the rest is appended as spelled.
    fn walk(&self, base: &str, rel: &str, links: &mut usize) -> String {
        let mut cur = base.to_string();
        let mut missing = false;
        for seg in rel.split('/') {
            match seg {
                "" | "." => {}
                ".." => cur = paths::parent(&cur).to_string(),
                name if missing => cur = if cur == "/" { format!("/{name}") } else { format!("{cur}/{name}") },
                name => match self.step(&cur, name, links) {
                    Ok(real) => cur = real,
                    Err(spelled) => {
                        cur = spelled;
                        missing = true;
                    }
                },
            }
        }
        cur
    }
}

impl Host for FsHost {
    /// One process decides once (CLI) or runs one fence: a generation per
    /// process is as fresh as the answers can be.
    fn generation(&self) -> Option<u64> {
        Some(0)
    }

    fn canonical(&self, path: &str) -> String {
        // The spelling is normalised first (`a/../b` is `b`, as everywhere in
        // the core); then each component is looked up once, links followed
        // to where they land (a dangling link resolves to its target path).
        let full = paths::normalize(path);
        if let Some(Some(real)) = self.resolved.borrow().get(&full) {
            return real.clone();
        }
        paths::normalize(&self.walk("/", &full, &mut 0))
    }

    fn kind(&self, path: &str) -> PathKind {
        // Answered from the walk that found the real path: no second stat.
        let real = self.canonical(path);
        if real == "/" {
            return PathKind::Dir;
        }
        match self.is_dir.borrow().get(&real) {
            Some(true) => PathKind::Dir,
            Some(false) => PathKind::File,
            None => PathKind::Missing,
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
