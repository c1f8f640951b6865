//! The runner's third fence: the file system read-only outside the roots
//! where the fence lets the call change something (Linux).
//!
//! Landlock has no access right for chmod, chown, utimes or extended
//! attributes, so under Landlock alone a process changes them on every file
//! its user owns. A read-only mount refuses all of them (EROFS), whoever
//! asks. In the runner's own mount namespace the whole tree is made
//! read-only and each root where a rule grants write, create or delete is
//! put back as it was, before Landlock forbids any later mount change.
//!
//! The unit is the mount, not the operation: a root where the fence grants
//! create or delete but not write is writable here too (making or removing
//! an entry needs a writable mount), so there metadata is Landlock's
//! business and stays open. Device nodes are written through a read-only
//! mount, so the device streams stay where they are, read-only.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::fence::landlock::Rules;
use crate::paths;
use crate::policy::baseline::DEVICE_STREAMS;

/// The roots to keep writable for these rules: each rule path with a
/// mutating right, the outermost only, less the device streams.
pub fn writable_roots(rules: &Rules) -> Vec<String> {
    let mutating = super::linux::mutating_rights();
    let mut roots: Vec<String> = rules
        .rules
        .iter()
        .filter(|(path, access)| access & rules.handled & mutating != 0 && !DEVICE_STREAMS.iter().any(|d| paths::within(path, d)))
        .map(|(path, _)| path.clone())
        .collect();
    roots.sort();
    roots.dedup();
    // Outermost only: a root inside another is found by walking up its own
    // folders (not by comparing it with every root kept: thousands of rules
    // that grant write made that quadratic).
    let kept: std::collections::BTreeSet<String> = roots.iter().cloned().collect();
    roots
        .into_iter()
        .filter(|r| {
            let mut up = r.as_str();
            while up != "/" {
                up = paths::parent(up);
                if kept.contains(up) {
                    return false;
                }
            }
            true
        })
        .collect()
}

/// `struct mount_attr` of the kernel's UAPI (mount_setattr(2)).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const OPEN_TREE_CLONE: u32 = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;

/// The tree made read-only: how many writable roots were put back, and
/// whether each was copied from the very file the caller expected there.
pub struct Tree {
    pub roots: usize,
    pub same: bool,
}

/// In the mount namespace the caller entered: copy each writable root as it
/// is now, make every mount read-only, then put the copies back in place.
/// Returns how many roots were put back, or `None` when this kernel lacks
/// the calls (before Linux 5.12): then nothing was changed. A root that is
/// gone, is a link now or cannot be reached is left read-only (Landlock
/// gives it no rule either). `same_file` is shown each root as opened.
pub fn fence_tree(roots: &[String], same_file: Option<super::linux::SameFile>) -> Result<Option<Tree>, String> {
    let mut copies: Vec<(OwnedFd, OwnedFd)> = Vec::with_capacity(roots.len());
    let mut kept: Vec<&str> = Vec::with_capacity(roots.len());
    let mut same = true;
    for root in roots {
        let at = match super::linux::open_real(root) {
            Ok(fd) => fd,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR | libc::EACCES)) => {
                same = false;
                continue;
            }
            Err(e) => return Err(format!("{FAILURE}: opening {root}: {e}")),
        };
        if let Some(check) = same_file {
            same = same && check(root, &at);
        }
        // The copy takes the mounts below the root along (a locked child
        // could not be left out in a user namespace anyway).
        let flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as u32 | libc::AT_RECURSIVE as u32 | libc::AT_EMPTY_PATH as u32;
        // SAFETY: a descriptor we own, an empty NUL-terminated path, flags.
        let copy = unsafe { libc::syscall(libc::SYS_open_tree, at.as_raw_fd(), c"".as_ptr(), flags) };
        if copy < 0 {
            return missing_or(&format!("copying the mount at {root}"));
        }
        // SAFETY: a new descriptor, owned here.
        copies.push((at, unsafe { OwnedFd::from_raw_fd(copy as i32) }));
        kept.push(root.as_str());
    }
    let attr = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: a NUL-terminated path and an attribute struct of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::AT_RECURSIVE as u32,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return missing_or("mount_setattr(/, read-only, recursive)");
    }
    // The roots are disjoint, so each one's descriptor still names the
    // place to put its copy back.
    for ((at, copy), root) in copies.iter().zip(&kept) {
        // SAFETY: two descriptors we own and empty NUL-terminated paths.
        let r = unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                copy.as_raw_fd(),
                c"".as_ptr(),
                at.as_raw_fd(),
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            // Removed since it was opened (another process cleaning a temp
            // folder whose entries are roots): nothing to put back.
            if e.raw_os_error() == Some(libc::ENOENT) {
                continue;
            }
            return Err(format!("{FAILURE}: putting the writable root {root} back: {e}"));
        }
    }
    Ok(Some(Tree { roots: copies.len(), same }))
}

/// How the runner says the read-only tree failed (the plugin matches it and
/// then runs with no mount namespace, reporting metadata open).
const FAILURE: &str = "cannot make the file system read-only outside the writable roots";

/// A failed call: the kernel lacks it (`None`), or a failure.
fn missing_or<T>(what: &str) -> Result<Option<T>, String> {
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOSYS) {
        return Ok(None);
    }
    Err(format!("{FAILURE}: {what}: {e}"))
}

/// Whether this process could fence metadata (for `status`): tried in a
/// child, which leaves this process as it was.
pub fn available() -> Result<(), String> {
    // SAFETY: the child only makes system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot fork to probe: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match super::persistence::enter_namespace().and_then(|_| fence_tree(&[], None)) {
            Ok(Some(_)) => 0,
            Ok(None) => 2,
            Err(_) => 1,
        };
        // SAFETY: leave the child without running anything of the parent's.
        unsafe { libc::_exit(code) }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, 2) => Err(NO_SETATTR.into()),
        _ => Err("the runner cannot make its mount namespace here (user namespaces refused?), so nothing is read-only".into()),
    }
}

/// Why metadata stays open on a kernel without the new mount API.
pub const NO_SETATTR: &str = "this kernel has no mount_setattr(2) (Linux 5.12 or later): nothing is made read-only";
