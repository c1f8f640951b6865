//! Removals and renames the supervisor judges (Linux): delete means what
//! existed before the call.
//!
//! Landlock puts the right to remove an entry on the folder that holds it,
//! and the workspace grants none: writing is not deleting. The filter sends
//! every unlink, rmdir and rename of the call here, and the supervisor does
//! itself, through a descriptor of the entry's folder and the entry's name
//! (nothing is looked up twice), the ones the call may do:
//! - an entry a delete grant names (`rm -rf build` answered Allow once, a
//!   rule on one file);
//! - the call's own entries ([`super::own`]: made by this call), removed or
//!   renamed anywhere the call may make them;
//! - a sidecar of an SQLite database the call may write ([`super::sidecars`]);
//! - a numbered backup of a log the call may write, and a log moved to one
//!   of its backup names ([`super::logs`]);
//! - a rename that puts an own file in place of a file the call may
//!   write: replacing is writing (the old content goes exactly as with
//!   `>`), and the entry then stands where the user's stood and is the
//!   user's;
//! - an exchange of two entries it could each remove.
//!
//! Where Landlock itself grants the removal (temp folders, tool state) the
//! call runs as made. Everything else is refused here and named
//! ([`super::refusals`]): EACCES, or EROFS off the writable mounts, as the
//! kernel would have answered. Nothing of a repository's `.git` but what
//! the call made itself, no shut surface and no protected file is ever
//! changed by the supervisor.

use std::os::fd::{AsFd, AsRawFd};

use landlock::AccessFs;

use super::own::{entry_at, identity_at, identity_of, Identity, Own};
use super::rights::{bit, Rights};
use super::target::Target;
use crate::fence::ProfileRequest;
use crate::paths;

const RENAME_NOREPLACE: u32 = 1;
const RENAME_EXCHANGE: u32 = 2;
const RENAME_WHITEOUT: u32 = 4;

/// The entries a rule or grant of the call gives delete on, as real paths.
#[derive(Clone, Debug, Default)]
pub struct Removals {
    entries: Vec<String>,
}

impl Removals {
    /// From the profile: explicit rules and grants with delete, less `.git`
    /// folders, the workspace itself and what is `shut` (the protected
    /// paths and the repository's surfaces), within or around it. None in a
    /// session that is not workspace-write (the fence drops its writes too).
    pub fn of(req: &ProfileRequest, shut: &[String]) -> Removals {
        use crate::policy::capability::Capability::Delete;
        if req.mode != crate::api::Mode::WorkspaceWrite {
            return Removals::default();
        }
        let ws = paths::normalize(&req.workspace);
        let entries = req
            .rules
            .iter()
            .chain(&req.grants)
            .filter(|r| r.access.grants(Delete))
            .map(|r| paths::normalize(&r.path))
            .filter(|p| p != "/" && *p != ws && !p.split('/').any(|c| c == ".git") && !shut.iter().any(|s| paths::within(p, s) || paths::within(s, p)))
            .filter_map(|p| real_entry(&p))
            .collect();
        Removals { entries }
    }

    pub fn granted(&self, path: &str) -> bool {
        self.entries.iter().any(|e| e == path)
    }
}

/// An entry's real path: its folder resolved and its own name, never
/// followed (a grant on a link removes the link, not what it points to).
fn real_entry(p: &str) -> Option<String> {
    let dir = std::fs::canonicalize(paths::parent(p)).ok()?;
    let dir = dir.to_string_lossy();
    let name = paths::file_name(p);
    Some(if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") })
}

/// What the supervisor knows to judge a removal or rename.
pub struct Scope<'a> {
    pub removals: &'a Removals,
    pub own: &'a mut Own,
    pub rights: &'a Rights,
}

/// What the supervisor does with one unlink, rmdir or rename.
pub enum Act {
    /// The kernel judges it (Landlock grants it, or it fails by itself).
    Continue,
    /// Done here, with this result.
    Done(Result<i64, i32>),
}

/// An act, and the (capability, path) it refused, to be named.
pub struct Judged {
    pub act: Act,
    pub refused: Option<(&'static str, String)>,
}

impl Judged {
    fn go() -> Judged {
        Judged { act: Act::Continue, refused: None }
    }
    fn done(r: Result<i64, i32>) -> Judged {
        Judged { act: Act::Done(r), refused: None }
    }
    fn refuse(scope: &Scope, capability: &'static str, path: &str) -> Judged {
        Judged { act: Act::Done(Err(scope.rights.refusal_errno(path))), refused: Some((capability, path.to_string())) }
    }
}

/// `unlink`, `unlinkat` or `rmdir` of the entry `t`.
pub fn unlink(scope: &mut Scope, t: &Target, rmdir: bool) -> Judged {
    // Nothing there, or not reachable: the kernel gives its own answer.
    let Some((id, links)) = entry_at(t.dir.as_fd(), &t.name) else { return Judged::go() };
    // The call's own entry (made where the call may make it, so never in a
    // shut surface): removed with no more asked (the quick way: no path).
    let own = scope.own.holds(&id);
    if !own {
        // Landlock grants it itself (rmdir of a file, unlink of a folder: the
        // kernel answers ENOTDIR, EISDIR).
        if scope.rights.removes(t.real(), rmdir) {
            return Judged::go();
        }
        let sidecar = || !id.is_dir() && super::sidecars::database_of(t).is_some_and(|(db, made)| !scope.own.holds(&made) && scope.rights.may_write(&db));
        let theirs = !Rights::in_repository(t.real()) && (scope.removals.granted(t.real()) || sidecar() || backup(scope, t, &id));
        if !scope.rights.changeable(t.real()) || !theirs {
            return Judged::refuse(scope, "delete", t.real());
        }
    }
    let flags = if rmdir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: a folder descriptor we own and a NUL-terminated name.
    let r = unsafe { libc::unlinkat(t.dir.as_raw_fd(), t.name.as_ptr(), flags) };
    if r != 0 {
        return Judged::done(Err(super::seccomp::errno()));
    }
    // A file of the call's with another name still (a hard link of its
    // own) stays its own.
    if own && links <= 1 {
        scope.own.forget(&id);
    }
    Judged::done(Ok(0))
}

/// A rename of `from` to `to` with renameat2's `flags`.
pub fn rename(scope: &mut Scope, from: &Target, to: &Target, flags: u32) -> Judged {
    let Some(src) = identity_at(from.dir.as_fd(), &from.name) else { return Judged::go() };
    if flags & RENAME_WHITEOUT != 0 || scope.rights.removes(from.real(), src.is_dir()) {
        return Judged::go();
    }
    let src_own = scope.own.holds(&src);
    let granted = !Rights::in_repository(from.real()) && scope.removals.granted(from.real());
    // A log moved to one of its backup names, or a backup to another: a
    // write of the log (nothing of it is gone).
    let rotated = (!src_own && !granted && !src.is_dir() && !Rights::in_repository(from.real()))
        .then(|| super::logs::rotation(from, to, scope.own))
        .flatten()
        .filter(|log| scope.rights.may_write(log) && scope.rights.may_write(from.real()));
    if !scope.rights.changeable(from.real()) || !(src_own || granted || rotated.is_some()) {
        return Judged::refuse(scope, "delete", from.real());
    }
    if let Some(log) = rotated.filter(|log| log == from.real()) {
        // The log that stood before the call is made anew at its name by
        // the program: its backups stay the log's. (Kept even if the
        // rename then fails: it only widens what already was the log's.)
        scope.own.rotate(log);
    }
    // Into a repository's `.git` only within one the call made itself.
    let repository_ok = !Rights::in_repository(to.real()) || identity_of(to.dir.as_fd()).is_some_and(|d| scope.own.holds(&d));
    if !scope.rights.changeable(to.real()) || !repository_ok {
        return Judged::refuse(scope, "create", to.real());
    }
    let Some(dst) = identity_at(to.dir.as_fd(), &to.name) else {
        // Nothing at the destination: a place the call may make such an entry.
        if flags & RENAME_EXCHANGE != 0 {
            return Judged::done(Err(libc::ENOENT));
        }
        if !scope.rights.may_make(to.real(), make_right(&src)) {
            return Judged::refuse(scope, "create", to.real());
        }
        return perform(from, to, flags | RENAME_NOREPLACE, scope.own, None, None);
    };
    if flags & RENAME_NOREPLACE != 0 {
        return Judged::done(Err(libc::EEXIST));
    }
    let dst_removable = scope.own.holds(&dst) || scope.removals.granted(to.real()) || (!Rights::in_repository(to.real()) && backup(scope, to, &dst));
    if flags & RENAME_EXCHANGE != 0 {
        // Each goes where the other was: both must be the call's to move.
        if !dst_removable {
            return Judged::refuse(scope, "delete", to.real());
        }
        return perform(from, to, flags, scope.own, None, None);
    }
    if dst_removable {
        let gone = scope.own.holds(&dst).then_some(dst);
        return perform(from, to, flags, scope.own, gone, None);
    }
    // Replacing is writing: a file of the call's own put in place of a
    // file the call may write, which then is the user's. (A granted entry
    // moved away replaces nothing it was not granted to: a granted delete
    // is of that entry, not of what its move lands on.)
    if src_own && !src.is_dir() && !dst.is_dir() && scope.rights.may_write(to.real()) {
        let gone = Some(dst);
        return perform(from, to, flags, scope.own, gone, Some(src));
    }
    Judged::refuse(scope, "delete", to.real())
}

/// A numbered backup of a log the call may write, itself writable: the
/// log's state ([`super::logs`]).
fn backup(scope: &Scope, t: &Target, id: &Identity) -> bool {
    !id.is_dir() && scope.rights.may_write(t.real()) && super::logs::log_of(t, scope.own).is_some_and(|log| scope.rights.may_write(&log))
}

/// Rename in the call's stead; on success forget what left the call's
/// hands (the replaced entry, or the own file now standing as the user's).
fn perform(from: &Target, to: &Target, flags: u32, own: &mut Own, replaced: Option<Identity>, becomes_users: Option<Identity>) -> Judged {
    // SAFETY: folder descriptors we own, NUL-terminated names, flags.
    let r = unsafe { libc::syscall(libc::SYS_renameat2, from.dir.as_raw_fd(), from.name.as_ptr(), to.dir.as_raw_fd(), to.name.as_ptr(), flags) };
    if r != 0 {
        return Judged::done(Err(super::seccomp::errno()));
    }
    for id in replaced.iter().chain(becomes_users.iter()) {
        own.forget(id);
    }
    Judged::done(Ok(0))
}

/// The Landlock right that makes an entry like `id`.
fn make_right(id: &Identity) -> u64 {
    bit(match id.kind {
        libc::S_IFDIR => AccessFs::MakeDir,
        libc::S_IFLNK => AccessFs::MakeSym,
        libc::S_IFIFO => AccessFs::MakeFifo,
        libc::S_IFSOCK => AccessFs::MakeSock,
        _ => AccessFs::MakeReg,
    })
}
