//! Package managers' caches of code they run later, read-only for every
//! call but the package manager's own (Linux).
//!
//! `npx` runs what it finds in `~/.npm/_npx` (and `pnpm dlx` what is in its
//! dlx cache) with no integrity check, so a package planted there by hidden
//! code runs at the user's next `npx`, outside any fence. The baseline
//! opens `~/.npm` and `~/.cache/pnpm` to every call (installs write there,
//! content-addressed and checked); these folders inside them the runner
//! binds read-only onto themselves in its mount namespace, unless a grant
//! of the call names them — the decision gives that to the package
//! manager's own line (`baseline::CODE_CACHES`). A cache not there yet is
//! made empty first, so it can be shut (as a repository's hooks are), and
//! stays: the package manager makes the same folder on its first run.

use crate::fence::{Opened, ProfileRequest};
use crate::paths;
use crate::policy::baseline::CODE_CACHES;

/// The caches under home no grant or rule of the call names: shut to the
/// call, and to the supervisor acting for it.
pub fn shut_for(req: &ProfileRequest, opened: &Opened) -> Vec<String> {
    let home = paths::normalize(&req.home);
    CODE_CACHES.iter().map(|(rel, _)| paths::normalize(&format!("{home}/{rel}"))).filter(|c| !opened.names(c)).collect()
}

/// The caches to shut for this call ([`shut_for`]) whose folder exists.
/// One missing is made, empty, and left there: it is the folder the package
/// manager itself makes on its first run, and making and removing it on
/// every call cost ~0.2 ms of each (two directory operations on the home's
/// file system, and its journal).
pub fn prepare(req: &ProfileRequest, opened: &Opened) -> Vec<String> {
    let mut shut = Vec::new();
    for cache in shut_for(req, opened) {
        let parent = std::path::Path::new(paths::parent(&cache));
        // Only in a real folder of the package manager's (no link followed there).
        let real_parent = std::fs::symlink_metadata(parent).is_ok_and(|m| m.is_dir()) && std::fs::canonicalize(parent).is_ok_and(|c| c == parent);
        if !real_parent {
            continue;
        }
        if std::fs::symlink_metadata(&cache).is_err() && std::fs::create_dir(&cache).is_err() {
            continue;
        }
        shut.push(cache);
    }
    shut
}

/// Bind each read-only onto itself, in the namespace the runner entered.
pub fn shut(caches: &[String]) -> Result<(), String> {
    for c in caches {
        if std::fs::metadata(c).is_ok() {
            super::persistence::make_read_only(c)?;
        }
    }
    Ok(())
}
