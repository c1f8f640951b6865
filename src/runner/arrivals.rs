//! What the call is approved to make, made ready before the fence (Linux).
//!
//! Landlock attaches a rule to something that exists when the call starts,
//! and the read-only tree keeps writable only roots that exist then. A
//! person who answers "Allow once" to `mkdir -p ~/notes2 && echo x >
//! ~/notes2/todo.txt` approved a folder and a file that are not there yet.
//! So the runner makes exactly what was approved and would otherwise have
//! nothing to attach to:
//! - a folder the decision says the line makes (`folders`) outside the
//!   workspace, before the fence, so the grants inside it attach (`mkdir`
//!   of it later succeeds: the supervisor answers it, see creates.rs); one
//!   inside the workspace (a writable root already) is made when the line
//!   asks, like every entry the call makes, so a program that refuses an
//!   existing folder (`cargo new x`) still finds none;
//! - an empty file a grant of the call gives create and write on, in a
//!   folder that exists, so the command fills it;
//! - for a grant of create alone on a missing path (a `mv` or `ln`
//!   destination), create — and only create — on the nearest folder that
//!   exists, for this call (the card says so: decide/arrivals.rs).
//!
//! Nothing is made where the call may not create, through a symbolic link,
//! or in a repository's `.git`.
//!
//! What is made here is the call's own ([`super::own`]), as everything the
//! call makes itself: it may remove and rename it.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use super::own::{identity_at, Own};

use crate::fence::ProfileRequest;
use crate::paths;
use crate::policy::capability::{Access, Capability};
use crate::policy::rules::Rule;

/// Make the approved arrivals and turn create-only grants on missing paths
/// into create on their nearest existing folder. `req.grants` changes.
/// Returns what was made, as the call's own.
pub fn prepare(req: &mut ProfileRequest) -> Own {
    let mut made = Own::default();
    // A read-only session is made nothing, whatever its rules say.
    if req.mode != crate::api::Mode::WorkspaceWrite {
        return made;
    }
    let may_create = |p: &str, req: &ProfileRequest| {
        // The workspace grants create only in a workspace-write session.
        let in_workspace = req.mode == crate::api::Mode::WorkspaceWrite && paths::within(p, &paths::normalize(&req.workspace));
        let inside = in_workspace || req.grants.iter().chain(&req.rules).any(|r| r.access.grants(Capability::Create) && paths::within(p, &paths::normalize(&r.path)));
        inside && !p.split('/').any(|c| c == ".git") && !req.protected_files.iter().any(|f| paths::within(p, &paths::normalize(f)))
    };
    let ws = paths::normalize(&req.workspace);
    for f in req.folders.clone() {
        let f = paths::normalize(&f);
        if !may_create(&f, req) {
            continue;
        }
        if paths::within(&f, &ws) {
            continue;
        }
        for m in make_folders(&f, &mut made) {
            made.premade(m);
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
            make_empty_file(&p, &mut made);
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
/// link followed; the folders made, outermost first, each known in `own`.
fn make_folders(path: &str, own: &mut Own) -> Vec<String> {
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
        if let Some(id) = identity_at(dir.as_fd(), &n) {
            own.insert(id);
        }
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

fn make_empty_file(p: &str, own: &mut Own) {
    let Ok(c) = CString::new(p) else { return };
    // SAFETY: a NUL-terminated path; O_EXCL|O_NOFOLLOW: only a new file, never through a link.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o666) };
    if fd >= 0 {
        // SAFETY: a new descriptor, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if let Some(id) = super::own::identity_of(fd.as_fd()) {
            own.insert(id);
        }
    }
}

/// At most this many calls' kept copies stay (the oldest go first).
const KEPT_CALLS: usize = 32;
/// A file past this size is not copied, and the call is told so.
const KEPT_MAX_BYTES: u64 = 64 << 20;

/// Copy each file the call will replace (`kept`: `git restore FILE`) into
/// `$harness_home/dsh-allow-kept/<time>-<pid>/`, which no fenced call may
/// write, before the fence goes up. Only regular files inside the
/// workspace, reached with no symbolic link. Returns the lines the call's
/// standard error gets (where each copy is, or why there is none), and the
/// files that could not be kept, whose removal the call is then not granted.
pub fn keep(req: &ProfileRequest) -> (Vec<String>, Vec<String>) {
    let ws = paths::normalize(&req.workspace);
    let files: Vec<String> = req.kept.iter().map(|k| paths::normalize(k)).filter(|k| paths::within(k, &ws) && *k != ws).collect();
    if files.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut not_kept = Vec::new();
    let root = format!("{}/dsh-allow-kept", paths::normalize(&req.harness_home));
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let dir = format!("{root}/{stamp}-{}", std::process::id());
    let mut lines = Vec::new();
    for f in files {
        let rel = f[ws.len()..].trim_start_matches('/').to_string();
        let meta = match std::fs::symlink_metadata(&f) {
            Ok(m) => m,
            // Nothing there (a deleted file restored): nothing to keep.
            Err(_) => continue,
        };
        if !meta.is_file() || !real_folder(paths::parent(&f)) {
            lines.push(format!("dsh-allow: {rel} is not a plain file: it was not kept, and the call may not replace it"));
            not_kept.push(f);
            continue;
        }
        if meta.len() > KEPT_MAX_BYTES {
            lines.push(format!("dsh-allow: {rel} is larger than {} MiB: it was not kept, and the call may not replace it", KEPT_MAX_BYTES >> 20));
            not_kept.push(f);
            continue;
        }
        let dest = format!("{dir}/{rel}");
        let copied = std::fs::create_dir_all(paths::parent(&dest)).and_then(|_| copy_no_follow(&f, &dest));
        match copied {
            Ok(()) => lines.push(format!("dsh-allow: kept {rel} as it was before this command, at {dest}")),
            Err(e) => {
                lines.push(format!("dsh-allow: could not keep {rel} ({e}): the call may not replace it"));
                not_kept.push(f);
            }
        }
    }
    prune_kept(&root);
    (lines, not_kept)
}

/// The file at `from` (opened with no link followed) copied to a new `to`.
fn copy_no_follow(from: &str, to: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut src = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(from)?;
    let mut dst = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(to)?;
    std::io::copy(&mut src, &mut dst).map(|_| ())
}

fn prune_kept(root: &str) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut calls: Vec<(std::time::SystemTime, std::path::PathBuf)> =
        entries.flatten().filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path()))).collect();
    if calls.len() <= KEPT_CALLS {
        return;
    }
    calls.sort();
    for (_, p) in &calls[..calls.len() - KEPT_CALLS] {
        let _ = std::fs::remove_dir_all(p);
    }
}
