//! The real file system as a [`Host`], for the native CLI and runner.
//! (The JS plugin answers the same questions with node:fs.)

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
    /// Folders asked about more than once (home, `/`) are listed once
    /// instead of one `lstat` per child: name → file type, or `None` for a
    /// folder that could not or should not be listed.
    listings: std::cell::RefCell<std::collections::HashMap<String, Option<Listing>>>,
    asked: std::cell::RefCell<std::collections::HashMap<String, u32>>,
}

type Listing = std::collections::HashMap<String, Entry>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Dir,
    File,
    /// A symlink, or a type the listing did not say: ask with `lstat`.
    Ask,
}

/// Past this many entries a listing costs more than the `lstat`s it saves.
const MAX_LISTING: usize = 512;

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
            listings: Default::default(),
            asked: Default::default(),
        }
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
        match self.listed(dir, name) {
            Some(None) => {
                self.resolved.borrow_mut().insert(here.clone(), None);
                return Err(here);
            }
            Some(Some(kind @ (Entry::Dir | Entry::File))) => {
                self.is_dir.borrow_mut().insert(here.clone(), kind == Entry::Dir);
                self.resolved.borrow_mut().insert(here.clone(), Some(here.clone()));
                return Ok(here);
            }
            Some(Some(Entry::Ask)) | None => {}
        }
        let real = match std::fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() && *links < MAX_LINKS => {
                *links += 1;
                match std::fs::read_link(&here) {
                    Ok(target) => {
                        let target = target.to_string_lossy().into_owned();
                        let base = if target.starts_with('/') { "/" } else { dir };
                        Some(self.walk(base, &target, links))
                    }
                    Err(_) => None,
                }
            }
            Ok(m) => {
                self.is_dir.borrow_mut().insert(here.clone(), m.is_dir());
                Some(here.clone())
            }
            // Missing, not a folder, or not ours to stat: as spelled below.
            Err(_) => None,
        };
        self.resolved.borrow_mut().insert(here.clone(), real.clone());
        real.ok_or(here)
    }

    /// What the listing of the real folder `dir` says about `name`:
    /// `None` when there is no listing (first question, too big, unreadable),
    /// `Some(None)` when the name is not there.
    fn listed(&self, dir: &str, name: &str) -> Option<Option<Entry>> {
        if !self.listings.borrow().contains_key(dir) {
            let mut asked = self.asked.borrow_mut();
            let n = asked.entry(dir.to_string()).or_insert(0);
            *n += 1;
            if *n < 2 {
                return None;
            }
            drop(asked);
            let listing = list(dir);
            self.listings.borrow_mut().insert(dir.to_string(), listing);
        }
        let listings = self.listings.borrow();
        let listing = listings.get(dir)?.as_ref()?;
        Some(listing.get(name).copied())
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

fn list(dir: &str) -> Option<Listing> {
    let mut out = Listing::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        if out.len() >= MAX_LISTING {
            return None;
        }
        // The type comes with the listing on most file systems (no stat).
        let kind = match entry.file_type() {
            Ok(t) if t.is_dir() => Entry::Dir,
            Ok(t) if t.is_symlink() => Entry::Ask,
            Ok(_) => Entry::File,
            Err(_) => Entry::Ask,
        };
        out.insert(entry.file_name().into_string().ok()?, kind);
    }
    Some(out)
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
