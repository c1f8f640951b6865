//! Removing exactly what a delete grant names (Linux).
//!
//! Landlock puts the right to remove an entry on the folder that holds it,
//! so a grant of delete on `build` (Allow once on `rm -rf build`, a rule on
//! one file) empties `build` but cannot remove `build` itself, nor rename
//! `moved.txt` away, without delete on the whole workspace. The decision
//! means the entry itself, so the supervisor does that one removal: the
//! filter sends the call's unlink, rmdir and rename calls to it while the
//! call holds such a grant, and it resolves each as the caller would. One
//! whose target is exactly a granted entry it performs itself, through a
//! descriptor of the entry's folder and the entry's name (nothing is looked
//! up twice); a rename also needs its destination to be one the call may
//! create and no repository surface or protected path, and never replaces
//! an entry the call may not remove. Entries inside a folder made for the
//! call are the call's own and are removed and renamed the same way
//! (arrivals.rs). Every other call runs as made, and Landlock judges it.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::arrivals::Made;
use crate::fence::ProfileRequest;
use crate::paths;

const RENAME_NOREPLACE: u32 = 1;
const RENAME_EXCHANGE: u32 = 2;
const RENAME_WHITEOUT: u32 = 4;

/// What the supervisor may remove itself, and where a moved entry may go.
#[derive(Clone, Debug, Default)]
pub struct Removals {
    /// Entries a rule or grant of the call gives delete on, as real paths.
    pub entries: Vec<String>,
    /// Folders where the call's fence lets it create (a rename's destination).
    pub create_roots: Vec<String>,
    /// Paths no removal or rename may touch: protected files, repositories.
    pub shut: Vec<String>,
    /// When the call began (a file born since is the call's own).
    pub started: (i64, u32),
}

impl Removals {
    /// From the profile: explicit rules and grants with delete (not the
    /// baseline's tool state, whose folders a tool empties but rarely
    /// removes, so ordinary calls pay nothing), less `.git` folders, the
    /// workspace itself and protected paths. None in a session that is not
    /// workspace-write.
    pub fn of(req: &ProfileRequest) -> Removals {
        use crate::policy::capability::Capability::{Create, Delete};
        // A read-only session changes nothing, whatever its rules say (the
        // fence drops their writes too).
        if req.mode != crate::api::Mode::WorkspaceWrite {
            return Removals::default();
        }
        let ws = paths::normalize(&req.workspace);
        let mut shut: Vec<String> = req.protected_files.iter().map(|p| paths::normalize(p)).collect();
        shut.extend(req.repository_surfaces());
        let entries = req
            .rules
            .iter()
            .chain(&req.grants)
            .filter(|r| r.access.grants(Delete))
            .map(|r| paths::normalize(&r.path))
            .filter(|p| p != "/" && *p != ws && !p.split('/').any(|c| c == ".git") && !shut.iter().any(|s| paths::within(p, s) || paths::within(s, p)))
            .filter_map(|p| real_entry(&p))
            .collect();
        let mut create_roots = vec![ws];
        create_roots.extend(req.rules.iter().chain(&req.grants).filter(|r| r.access.grants(Create)).map(|r| paths::normalize(&r.path)));
        Removals { entries, create_roots, shut, started: now() }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn granted(&self, path: &str) -> bool {
        self.entries.iter().any(|e| e == path)
    }

    fn may_arrive(&self, path: &str) -> bool {
        self.create_roots.iter().any(|r| paths::within(path, r))
            && !self.shut.iter().any(|s| paths::within(path, s))
            && !path.split('/').any(|c| c == ".git")
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

fn now() -> (i64, u32) {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as i64, d.subsec_nanos())
}

/// The entry `name` in `dir` is a regular file with one link, born since
/// `started` (statx's birth time, which no process can set): the call made
/// it. Unknown birth times (a file system without them) say no.
fn born_since(dir: &OwnedFd, name: &CString, started: (i64, u32)) -> bool {
    // SAFETY: a zeroed statx buffer, a directory descriptor, a NUL-terminated name.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statx(dir.as_raw_fd(), name.as_ptr(), libc::AT_SYMLINK_NOFOLLOW, libc::STATX_BTIME | libc::STATX_TYPE | libc::STATX_NLINK, &mut st) };
    if r != 0 || st.stx_mask & libc::STATX_BTIME == 0 {
        return false;
    }
    let regular = u32::from(st.stx_mode) & libc::S_IFMT == libc::S_IFREG;
    regular && st.stx_nlink == 1 && (st.stx_btime.tv_sec, st.stx_btime.tv_nsec) >= started
}

/// A caller's path, resolved as the kernel would for it: the folder it
/// names (opened, following links as a lookup does), and the last name.
pub struct Target {
    pub dir: OwnedFd,
    pub name: CString,
    /// The folder's real path joined with the name.
    pub real: String,
}

/// Resolve `path` (relative to `dirfd` of thread `tid`, or its working
/// directory) without following a link in its last component.
pub fn resolve(tid: u32, dirfd: i32, path: &str) -> Option<Target> {
    let trimmed = path.trim_end_matches('/');
    let (parent, name) = match trimmed.rfind('/') {
        Some(0) => ("/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (".", trimmed),
    };
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    // Resolved in the supervisor's own mount namespace, by the caller's
    // folder's path: the same paths, one mount for all of them (in the
    // caller's namespace each writable root is a mount of its own, and a
    // rename between two fails with EXDEV).
    let base = if parent.starts_with('/') {
        parent.to_string()
    } else {
        let from = if dirfd == libc::AT_FDCWD { format!("/proc/{tid}/cwd") } else { format!("/proc/{tid}/fd/{dirfd}") };
        let dir = std::fs::read_link(from).ok()?.to_string_lossy().into_owned();
        format!("{dir}/{parent}")
    };
    let c = CString::new(base).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a new descriptor.
    let dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let real_dir = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).ok()?.to_string_lossy().into_owned();
    let real = if real_dir == "/" { format!("/{name}") } else { format!("{real_dir}/{name}") };
    Some(Target { dir, name: CString::new(name).ok()?, real })
}

/// What the supervisor does with one unlink, rmdir or rename.
pub enum Act {
    /// Not a granted entry: the call runs as made, Landlock judges it.
    Continue,
    /// Done here, with this result.
    Done(Result<i64, i32>),
}

/// `unlink`, `unlinkat`, `rmdir` of a granted entry, or of one inside a
/// folder made for the call: removed here.
pub fn unlink(removals: &Removals, made: &Made, target: Option<Target>, rmdir: bool) -> Act {
    let Some(t) = target else { return Act::Continue };
    if !removals.granted(&t.real) && !made.holds(&t.real) {
        return Act::Continue;
    }
    let flags = if rmdir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: a directory descriptor we own and a NUL-terminated name.
    let r = unsafe { libc::unlinkat(reopen(&t.dir).as_raw_fd(), t.name.as_ptr(), flags) };
    Act::Done(if r == 0 { Ok(0) } else { Err(super::seccomp::errno()) })
}

/// A rename whose source is a granted entry, or lies inside a folder made
/// for the call, or is a file the call wrote going in place of a granted
/// entry: done here when its destination is one the call may create
/// and touches no repository or protected path. It replaces an entry there
/// only when that entry may be removed too (granted, or the call's own):
/// otherwise it is done with RENAME_NOREPLACE, and an exchange is left to
/// Landlock.
pub fn rename(removals: &Removals, made: &Made, from: Option<Target>, to: Option<Target>, flags: u32) -> Act {
    let (Some(from), Some(to)) = (from, to) else { return Act::Continue };
    // A file the call wrote put in place of a granted entry (a tool's own
    // lock file replaced through a temp file) is that entry's removal.
    let puts_in_place = removals.granted(&to.real) && born_since(&from.dir, &from.name, removals.started);
    if !removals.granted(&from.real) && !made.holds(&from.real) && !puts_in_place {
        return Act::Continue;
    }
    let replaceable = removals.granted(&to.real) || made.holds(&to.real);
    if !replaceable && !removals.may_arrive(&to.real) {
        return Act::Continue;
    }
    let flags = if replaceable {
        flags
    } else if flags & (RENAME_EXCHANGE | RENAME_WHITEOUT) != 0 {
        return Act::Continue;
    } else {
        flags | RENAME_NOREPLACE
    };
    // SAFETY: directory descriptors we own, NUL-terminated names, flags.
    let r = unsafe { libc::syscall(libc::SYS_renameat2, reopen(&from.dir).as_raw_fd(), from.name.as_ptr(), reopen(&to.dir).as_raw_fd(), to.name.as_ptr(), flags) };
    Act::Done(if r == 0 { Ok(0) } else { Err(super::seccomp::errno()) })
}

/// An O_PATH descriptor of a folder as one `*at` calls can change entries
/// through (the same folder, reopened by its /proc link).
fn reopen(dir: &OwnedFd) -> OwnedFd {
    let c = CString::new(format!("/proc/self/fd/{}", dir.as_raw_fd())).unwrap();
    // SAFETY: a NUL-terminated path.
    let fd: RawFd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        // SAFETY: dup of a descriptor we own (the *at call will fail plainly).
        return unsafe { OwnedFd::from_raw_fd(libc::dup(dir.as_raw_fd())) };
    }
    // SAFETY: a new descriptor.
    unsafe { OwnedFd::from_raw_fd(fd) }
}
