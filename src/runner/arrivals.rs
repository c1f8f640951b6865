//! What the call is approved to make, made ready before the fence (Linux).
//!
//! Landlock attaches a rule to something that exists when the call starts,
//! and the read-only tree keeps writable only roots that exist then. A
//! person who answers "Allow once" to `mkdir -p ~/notes2 && echo x >
//! ~/notes2/todo.txt` approved a folder and a file that are not there yet.
//! So before the fence goes up the runner makes exactly what was approved
//! and would otherwise have nothing to attach to:
//! - a folder the decision says the line makes (`folders`), so the grants
//!   inside it attach (`mkdir` of it later succeeds: the supervisor answers
//!   it, see supervise.rs);
//! - an empty file a grant of the call gives create and write on, in a
//!   folder that exists, so the command fills it;
//! - for a grant of create alone on a missing path (a `mv` or `ln`
//!   destination), create — and only create — on the nearest folder that
//!   exists, for this call (the card says so).
//! Nothing is made where the call may not create, through a symbolic link,
//! or in a repository's `.git`.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::fence::ProfileRequest;
use crate::paths;
use crate::policy::capability::{Access, Capability};
use crate::policy::rules::Rule;

/// What was made, for the supervisor (a later `mkdir` of one succeeds).
#[derive(Clone, Debug, Default)]
pub struct Made {
    pub folders: Vec<String>,
}

/// Make the approved arrivals and turn create-only grants on missing paths
/// into create on their nearest existing folder. `req.grants` changes.
pub fn prepare(req: &mut ProfileRequest) -> Made {
    let mut made = Made::default();
    let may_create = |p: &str, req: &ProfileRequest| {
        let inside = paths::within(p, &paths::normalize(&req.workspace))
            || req.grants.iter().chain(&req.rules).any(|r| r.access.grants(Capability::Create) && paths::within(p, &paths::normalize(&r.path)));
        inside && !p.split('/').any(|c| c == ".git") && !req.protected_files.iter().any(|f| paths::within(p, &paths::normalize(f)))
    };
    for f in req.folders.clone() {
        let f = paths::normalize(&f);
        if may_create(&f, req) {
            made.folders.extend(make_folders(&f));
        }
    }
    let mut extra = Vec::new();
    for g in &req.grants {
        let p = paths::normalize(&g.path);
        if std::fs::symlink_metadata(&p).is_ok() || !g.access.grants(Capability::Create) || !may_create(&p, req) {
            continue;
        }
        let parent = paths::parent(&p);
        if g.access.grants(Capability::Write) && real_folder(parent) {
            make_empty_file(&p);
        } else if let Some(near) = nearest_existing(parent) {
            extra.push(Rule { id: String::new(), path: near, recursive: true, access: Access::of(&[Capability::Create]), hits: 0, created_at: String::new() });
        }
    }
    req.grants.extend(extra);
    made
}

/// A folder that exists, reached with no symbolic link on the way.
fn real_folder(p: &str) -> bool {
    std::fs::canonicalize(p).is_ok_and(|c| c.to_string_lossy() == p) && std::path::Path::new(p).is_dir()
}

fn nearest_existing(p: &str) -> Option<String> {
    let mut at = p.to_string();
    loop {
        if real_folder(&at) {
            return Some(at);
        }
        if at == "/" {
            return None;
        }
        at = paths::parent(&at).to_string();
    }
}

/// `mkdir -p` one component at a time, each made in a folder opened with no
/// link followed; the folders made, outermost first.
fn make_folders(path: &str) -> Vec<String> {
    let mut made = Vec::new();
    let Some(base) = nearest_existing(path) else { return made };
    let Ok(c) = CString::new(base.clone()) else { return made };
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return made;
    }
    // SAFETY: a new descriptor.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut at = base.clone();
    for name in path[base.len()..].split('/').filter(|s| !s.is_empty()) {
        let Ok(n) = CString::new(name) else { break };
        // SAFETY: a directory descriptor and a NUL-terminated name.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), n.as_ptr(), 0o777) } != 0 {
            break;
        }
        at = if at == "/" { format!("/{name}") } else { format!("{at}/{name}") };
        made.push(at.clone());
        // SAFETY: as above; O_NOFOLLOW: the folder just made, not a link put there since.
        let next = unsafe { libc::openat(dir.as_raw_fd(), n.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if next < 0 {
            break;
        }
        // SAFETY: a new descriptor.
        dir = unsafe { OwnedFd::from_raw_fd(next) };
    }
    made
}

fn make_empty_file(p: &str) {
    let Ok(c) = CString::new(p) else { return };
    // SAFETY: a NUL-terminated path; O_EXCL|O_NOFOLLOW: only a new file, never through a link.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o666) };
    if fd >= 0 {
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
    }
}

/// A `mkdir` of a folder made here for the call, still empty: it succeeds.
pub fn mkdir_made(made: &Made, target: &str) -> bool {
    made.folders.iter().any(|f| f == target) && std::fs::read_dir(target).is_ok_and(|mut d| d.next().is_none())
}
