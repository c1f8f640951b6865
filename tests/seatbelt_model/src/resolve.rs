//! A path named by a sandboxed process, resolved as the kernel would for
//! that process (its cwd, its dirfd, `/proc/self`), then spelt as macOS
//! would spell it.
//!
//! Seatbelt matches the path after resolution, and on macOS `/tmp`, `/var`
//! and `/etc` are links into `/private` (tests/support/macos_links.rs). This
//! machine has real folders there, so the caller spells every resolved path
//! through that table: a rule naming only `/tmp` matches nothing, as on a Mac.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// What a name resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// An absolute path on this machine, resolved.
    Path(String),
    /// A descriptor that names no file (a pipe, a socket, anonymous memory):
    /// Seatbelt's file operations do not apply.
    NoFile,
    /// Could not be resolved (a loop, a vanished process): the caller refuses.
    Unknown,
}

fn readlink(path: &str) -> Option<String> {
    std::fs::read_link(path).ok().map(|p| String::from_utf8_lossy(p.as_os_str().as_bytes()).into_owned())
}

/// The descriptor `fd` of process `pid`, as a path.
pub fn fd_path(pid: u32, fd: i32) -> Resolved {
    match readlink(&format!("/proc/{pid}/fd/{fd}")) {
        Some(t) => link_target(t),
        None => Resolved::Unknown,
    }
}

/// What a `/proc` magic link says: a file's path (the one it was opened by,
/// even when deleted since), or the kind of object that is not a file.
fn link_target(t: String) -> Resolved {
    if !t.starts_with('/') || (t.starts_with("/memfd:") && t.ends_with(" (deleted)")) {
        return Resolved::NoFile;
    }
    match t.strip_suffix(" (deleted)") {
        Some(p) => Resolved::Path(p.to_string()),
        None => Resolved::Path(t),
    }
}

/// The thread group of thread `tid` (what `/proc/self` means to it).
fn tgid(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

/// Resolve `name` for thread `tid`, relative to its `dirfd` (`AT_FDCWD` for
/// the cwd), following a symbolic link in the last component only when
/// `follow_last` (open without O_NOFOLLOW, exec, chmod; not unlink, rename,
/// mkdir, lchown).
pub fn resolve(tid: u32, dirfd: i32, name: &str, follow_last: bool) -> Resolved {
    let start = if name.starts_with('/') {
        String::new()
    } else {
        let base = if dirfd == libc::AT_FDCWD { readlink(&format!("/proc/{tid}/cwd")).map(link_target) } else { Some(fd_path(tid, dirfd)) };
        match base {
            Some(Resolved::Path(b)) => b,
            _ => return Resolved::Unknown,
        }
    };
    let Some(pid) = tgid(tid) else { return Resolved::Unknown };
    let mut pending: Vec<String> = Vec::new();
    push_components(&mut pending, name);
    let mut done: Vec<String> = Vec::new();
    push_components(&mut done, &start);
    // `pending` is consumed from the end: reverse so the first name is last.
    pending.reverse();
    let mut links = 0;
    while let Some(c) = pending.pop() {
        match c.as_str() {
            "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        // /proc/self and /proc/thread-self mean the asking process, not us.
        let c = if done.len() == 1 && done[0] == "proc" && c == "self" {
            pid.to_string()
        } else if done.len() == 1 && done[0] == "proc" && c == "thread-self" {
            pending.push(tid.to_string());
            pending.push("task".into());
            pid.to_string()
        } else {
            c
        };
        let here = format!("/{}", [done.clone(), vec![c.clone()]].concat().join("/"));
        let last = pending.is_empty();
        if last && !follow_last {
            done.push(c);
            break;
        }
        match readlink(&here) {
            Some(t) => {
                links += 1;
                // ELOOP in the kernel (40 links, namei.h MAXSYMLINKS).
                if links > 40 {
                    return Resolved::Unknown;
                }
                // A /proc magic link (fd/N, cwd, root, exe) names its object directly.
                let magic = here.starts_with("/proc/");
                let t = if magic {
                    match link_target(t) {
                        Resolved::Path(p) => p,
                        other => return if last { other } else { Resolved::Unknown },
                    }
                } else {
                    t
                };
                if t.starts_with('/') {
                    done.clear();
                }
                let mut inner = Vec::new();
                push_components(&mut inner, &t);
                for x in inner.into_iter().rev() {
                    pending.push(x);
                }
            }
            None => done.push(c),
        }
    }
    Resolved::Path(format!("/{}", done.join("/")))
}

fn push_components(into: &mut Vec<String>, path: &str) {
    into.extend(path.split('/').filter(|c| !c.is_empty()).map(str::to_string));
}

/// Whether `path` exists (without following a last symbolic link).
pub fn exists(path: &str) -> bool {
    let Ok(c) = CString::new(path) else { return false };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe { libc::lstat(c.as_ptr(), &mut st) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_name_resolves_against_the_cwd_and_follows_links_as_asked() {
        let me = std::process::id();
        let dir = std::env::temp_dir().join(format!("seatbelt-model-resolve-{me}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink("real/f", dir.join("flink")).unwrap();
        let d = std::fs::canonicalize(&dir).unwrap().to_string_lossy().into_owned();
        let cwd = std::env::current_dir().unwrap();
        std::env::set_current_dir(&d).unwrap();
        assert_eq!(resolve(me, libc::AT_FDCWD, "link/x", true), Resolved::Path(format!("{d}/real/x")));
        assert_eq!(resolve(me, libc::AT_FDCWD, "link/../real/./y", false), Resolved::Path(format!("{d}/real/y")));
        assert_eq!(resolve(me, libc::AT_FDCWD, "flink", true), Resolved::Path(format!("{d}/real/f")));
        assert_eq!(resolve(me, libc::AT_FDCWD, "flink", false), Resolved::Path(format!("{d}/flink")));
        assert_eq!(resolve(me, libc::AT_FDCWD, "/proc/self/cwd/link", true), Resolved::Path(format!("{d}/real")));
        std::env::set_current_dir(cwd).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
