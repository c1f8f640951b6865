//! Where a supervised call's path leads (Linux): the folder it names and
//! the last name in it, resolved as the kernel resolves it for the caller.
//!
//! Two ways, for two uses. [`resolve`] opens the folder in the supervisor's
//! own mount namespace by the caller's path text (the same paths: the
//! caller's namespace is a copy with some mounts made read-only), so a
//! rename the supervisor does between two writable roots is one mount and
//! no EXDEV; its real path is what grants and rules are matched against.
//! [`caller_base`] hands the fenced helper the caller's own folder object
//! (its working directory or the descriptor it passed), so what the helper
//! makes lands exactly where the caller's call would have, mounts and all.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A caller's path, resolved: the folder it names (opened, following links
/// as a lookup does), and the last name.
pub struct Target {
    pub dir: OwnedFd,
    pub name: CString,
    /// The folder's real path joined with the name, read when first asked
    /// for (a removal of the call's own entry never needs it).
    real: std::cell::OnceCell<String>,
}

impl Target {
    /// The folder's real path joined with the name.
    pub fn real(&self) -> &str {
        self.real.get_or_init(|| {
            let dir = std::fs::read_link(format!("/proc/self/fd/{}", self.dir.as_raw_fd())).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
            join(&dir, &self.name.to_string_lossy())
        })
    }
}

/// Resolve `path` (relative to `dirfd` of thread `tid`, or its working
/// directory, whose text `folder` gives when already read) without
/// following a link in its last component.
pub fn resolve(tid: u32, dirfd: i32, path: &str, folder: Option<&str>) -> Option<Target> {
    let (parent, name) = split(path)?;
    let base = if parent.starts_with('/') {
        parent.to_string()
    } else {
        match folder {
            Some(f) => format!("{f}/{parent}"),
            None => format!("{}/{parent}", folder_text(tid, dirfd)?),
        }
    };
    let c = CString::new(base).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a new descriptor.
    let dir = unsafe { OwnedFd::from_raw_fd(fd) };
    Some(Target { dir, name: CString::new(name).ok()?, real: Default::default() })
}

/// The path as text, made absolute against the caller's folder and
/// normalised, without touching the file system beyond reading that
/// folder's link: cheap, and exact unless a link lies on the way (callers
/// use it only where a wrong answer costs nothing but a slower path).
pub fn textual(tid: u32, dirfd: i32, path: &str) -> Option<String> {
    textual_in(path, || folder_text(tid, dirfd))
}

/// [`textual`], the caller's folder read by `folder` only when needed.
pub fn textual_in(path: &str, folder: impl FnOnce() -> Option<String>) -> Option<String> {
    if path.starts_with('/') {
        return Some(crate::paths::normalize(path));
    }
    Some(crate::paths::normalize(&format!("{}/{path}", folder()?)))
}

/// The caller's folder a relative path starts from (its working directory,
/// or the folder `dirfd` names), as an object of the caller's own mount
/// namespace; None for an absolute path (the helper starts from its root,
/// which is the caller's).
pub fn caller_base(tid: u32, dirfd: i32, path: &[u8]) -> Result<Option<OwnedFd>, i32> {
    if path.first() == Some(&b'/') {
        return Ok(None);
    }
    let link = if dirfd == libc::AT_FDCWD { format!("/proc/{tid}/cwd") } else { format!("/proc/{tid}/fd/{dirfd}") };
    let c = CString::new(link).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = super::seccomp::errno();
        // A descriptor number the caller does not have.
        return Err(if e == libc::ENOENT { libc::EBADF } else { e });
    }
    // SAFETY: a new descriptor.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// The text of the caller's working directory, or of the folder `dirfd` names.
pub fn folder_text(tid: u32, dirfd: i32) -> Option<String> {
    let from = if dirfd == libc::AT_FDCWD { format!("/proc/{tid}/cwd") } else { format!("/proc/{tid}/fd/{dirfd}") };
    Some(std::fs::read_link(from).ok()?.to_string_lossy().into_owned())
}

/// A path's folder part and last name (trailing slashes dropped); None for
/// a last name that names no entry (`.`, `..`, nothing).
fn split(path: &str) -> Option<(&str, &str)> {
    let trimmed = path.trim_end_matches('/');
    let (parent, name) = match trimmed.rfind('/') {
        Some(0) => ("/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (".", trimmed),
    };
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    Some((parent, name))
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}
