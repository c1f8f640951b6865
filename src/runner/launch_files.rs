//! What the DSH host reads from the workspace when it starts, shut for the
//! call (Linux): the workspace's `.env` (`baseline::LAUNCH_FILES`).
//!
//! DSH puts the variables of that file into its own environment at start,
//! and so into every call after (a planted `GIT_CONFIG_PARAMETERS` runs its
//! fsmonitor at the next `git status`, with git's own grant). Like a
//! repository's hooks it is a persistence surface: a call that no rule or
//! grant names it for cannot change it. One that exists is bound read-only
//! onto itself in the runner's mount namespace (EROFS; a rename over it or
//! its removal, EBUSY). One that does not exist cannot be shut by a mount,
//! and Landlock cannot keep one name from being made in a folder where the
//! call may create; making it first would put a file in the user's
//! workspace on every call (and restart a dev server watching it). So the
//! supervisor looks again when the command ends, and removes a `.env` the
//! call made there, saying so on the call's standard error.

use crate::fence::{Opened, ProfileRequest};
use crate::paths;
use crate::policy::baseline::LAUNCH_FILES;

/// The workspace's launch files no rule or grant of the call names, split
/// into those there now and those missing.
pub fn surfaces(req: &ProfileRequest, opened: &Opened) -> (Vec<String>, Vec<String>) {
    let ws = paths::normalize(&req.workspace);
    let (mut present, mut missing) = (Vec::new(), Vec::new());
    for f in LAUNCH_FILES {
        let p = paths::normalize(&format!("{ws}/{f}"));
        if opened.names(&p) {
            continue;
        }
        match std::fs::symlink_metadata(&p) {
            Ok(_) => present.push(p),
            Err(_) => missing.push(p),
        }
    }
    (present, missing)
}

/// Make the present ones read-only, in the namespace the runner entered (a
/// link is followed to the file the host reads).
pub fn shut(present: &[String]) -> Result<(), String> {
    for p in present {
        // A link to nowhere cannot be mounted on: the host reads nothing there.
        if std::fs::metadata(p).is_err() {
            continue;
        }
        super::persistence::make_read_only(p)?;
    }
    Ok(())
}

/// Once the command has ended: remove what the call made at a launch file
/// that was missing when it started (a file or a link; never a folder's
/// contents), and say so. A call with a grant naming it had it left open.
pub fn settle(missing: &[String]) {
    for p in missing {
        let Ok(meta) = std::fs::symlink_metadata(p) else { continue };
        let name = paths::file_name(p);
        if meta.is_dir() {
            eprintln!("dsh-allow: this call made a folder at {p}; DSH reads a {name} file there when it starts (it cannot load a folder)");
            continue;
        }
        match std::fs::remove_file(p) {
            Ok(()) => eprintln!(
                "dsh-allow: removed {p}, which this call made without a grant: DSH loads it into its own environment, and so into every later call, when it starts (a line that writes it visibly asks; /allow add write,create {p} file opens it)"
            ),
            Err(e) => eprintln!("dsh-allow: could not remove {p}, which this call made without a grant: {e}"),
        }
    }
}
