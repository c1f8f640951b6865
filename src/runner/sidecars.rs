//! SQLite's sidecars are the database (Linux).
//!
//! Every SQLite commit removes its rollback journal (`X-journal`); in WAL
//! mode the last connection removes `X-wal` and `X-shm`, in this call or a
//! later one; a journal left by a call that failed is rolled back and
//! removed by the next reader. Each is the state of database `X`: removing
//! it is a write of `X`, allowed where the call may write `X`. Refused, the
//! write fails with "disk I/O error" and the hot journal breaks every later
//! read. Only beside a file that is an SQLite database (its header), and
//! only a plain file; and not beside a database this very call made, whose
//! sidecars are its own anyway (a call must not make a database next to a
//! file of the user's to take that file for its journal).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::target::Target;

const SUFFIXES: &[&str] = &["-journal", "-wal", "-shm"];
const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The real path of the database `t` is a sidecar of, when it is one, and
/// which file it is.
pub fn database_of(t: &Target) -> Option<(String, super::own::Identity)> {
    let name = t.name.to_str().ok()?;
    let base = SUFFIXES.iter().find_map(|s| name.strip_suffix(s)).filter(|b| !b.is_empty())?;
    if !plain_file(t, &t.name) {
        return None;
    }
    let c = std::ffi::CString::new(base).ok()?;
    // SAFETY: a folder descriptor and a NUL-terminated name; never through a link.
    let fd = unsafe { libc::openat(t.dir.as_raw_fd(), c.as_ptr(), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a new descriptor.
    let db = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: zeroed plain data filled by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(db.as_raw_fd(), &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    let mut head = [0u8; 16];
    // SAFETY: a buffer of the length passed.
    let n = unsafe { libc::pread(db.as_raw_fd(), head.as_mut_ptr().cast(), head.len(), 0) };
    if n != 16 || &head != HEADER {
        return None;
    }
    let id = super::own::identity_of(std::os::fd::AsFd::as_fd(&db))?;
    let dir = crate::paths::parent(t.real());
    Some((if dir == "/" { format!("/{base}") } else { format!("{dir}/{base}") }, id))
}

fn plain_file(t: &Target, name: &std::ffi::CStr) -> bool {
    // SAFETY: zeroed plain data filled by fstatat, the last name not followed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe { libc::fstatat(t.dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG }
}
