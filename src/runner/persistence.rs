//! The runner's second fence: a repository's persistence surfaces
//! (`.git/hooks`, `.git/config`, `.gitmodules`) made read-only for the
//! fenced process tree.
//!
//! Landlock only grants, and git needs create and delete directly in `.git`
//! for its lock files, so the hooks and config inside it cannot be shut by
//! path. Instead the runner enters a mount namespace of its own (inside a
//! user namespace when it is not root), bind-mounts each surface read-only
//! onto itself, and only then applies Landlock, which forbids every later
//! mount change to the fenced processes. Writes there fail with EROFS,
//! renames over them with EBUSY; nothing outside this process tree sees the
//! mounts. A surface a rule or grant names is left open (the user opened
//! it: `git config` once allowed, a hook the user asked for).

use std::path::Path;

use crate::policy::capability::Capability;
use crate::fence::{Opened, ProfileRequest};

/// The surfaces to shut for this call: those of the workspace's repository
/// and of the repository the command starts in, when they exist.
pub fn surfaces(req: &ProfileRequest, opened: &Opened, cwd: &str) -> Vec<String> {
    let mut roots = vec![crate::paths::normalize(&req.workspace)];
    if let Some(r) = repository_above(cwd) {
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    let mut out = Vec::new();
    for root in roots {
        let git = format!("{root}/.git");
        let Ok(meta) = std::fs::symlink_metadata(&git) else { continue };
        // A worktree's or submodule's `.git` is a file naming the real
        // folder (`gitdir: …`): rewritten, it sends the user's next git
        // run to a folder of the writer's choosing.
        if meta.is_file() {
            out.push(git.clone());
        }
        if !meta.is_dir() {
            continue;
        }
        // A `.git` with no HEAD is not a repository yet: `git init` is about
        // to fill it, and is given it whole when the line is git's own.
        let initialised = Path::new(&git).join("HEAD").exists();
        if !initialised && gits_own(req, &git) {
            continue;
        }
        // Submodules' `.git` files, wherever .gitmodules puts them.
        out.extend(submodule_gitdirs(&root));
        if !gits_own(req, &git) && !opened.names(&git) {
            // Not git's own call, and no rule or grant names the repository
            // (one on the workspace does not): nothing in it is this call's
            // to change. Shutting all of `.git` closes every door git
            // reads through (config, hooks, `commondir`, `modules/*`,
            // `worktrees/*`, `info/`, `objects/info/alternates`) with one
            // mount — an allow-list of nothing, where git's own calls keep
            // the grant that lets them write (below).
            out.push(git.clone());
            if Path::new(&format!("{root}/.gitmodules")).exists() && !opened.names(&format!("{root}/.gitmodules")) {
                out.push(format!("{root}/.gitmodules"));
            }
            continue;
        }
        // A hooks folder that is not there could be made and filled:
        // make it empty first so it can be shut.
        let hooks = format!("{git}/hooks");
        if !Path::new(&hooks).exists() {
            let _ = std::fs::create_dir(&hooks);
        }
        for rel in crate::policy::baseline::REPOSITORY_SURFACES.iter().chain(GITS_OWN_SHUT) {
            let p = format!("{root}/{rel}");
            if Path::new(&p).exists() && !opened.names(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `ST_RELATIME` (linux/statfs.h), which the libc crate leaves out on musl.
const ST_RELATIME: libc::c_ulong = 0x1000;

/// Under git's own call, besides hooks and config: where git looks for
/// its shared folder (a linked worktree's `commondir`) and an object store
/// elsewhere. git writes neither in a line that hides nothing.
const GITS_OWN_SHUT: &[&str] = &[".git/commondir", ".git/objects/info/alternates"];

/// The `.git` files of the submodules `.gitmodules` lists (`path = …`).
fn submodule_gitdirs(root: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(format!("{root}/.gitmodules")) else { return Vec::new() };
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "path").then(|| v.trim().trim_matches('"').to_string())
        })
        .filter(|p| !p.is_empty() && !p.split('/').any(|c| c == ".."))
        .map(|p| format!("{root}/{p}/.git"))
        .filter(|g| std::fs::symlink_metadata(g).is_ok_and(|m| m.is_file()))
        .collect()
}

/// The folder holding the nearest `.git` at or above `dir`.
fn repository_above(dir: &str) -> Option<String> {
    let mut at = crate::paths::normalize(dir);
    loop {
        if Path::new(&at).join(".git").exists() {
            return Some(at);
        }
        if at == "/" {
            return None;
        }
        at = crate::paths::parent(&at).to_string();
    }
}

/// The call carries delete on this `.git` (git's own line, or a command
/// grant for git in a repository below the workspace).
fn gits_own(req: &ProfileRequest, git: &str) -> bool {
    req.grants.iter().any(|g| g.path == git && g.access.grants(Capability::Delete))
}

/// Make `surfaces` read-only, in the mount namespace [`enter_namespace`]
/// made.
#[cfg(target_os = "linux")]
pub fn shut(surfaces: &[String]) -> Result<(), String> {
    for s in surfaces {
        make_read_only(s)?;
    }
    Ok(())
}

/// Whether this process could shut surfaces (for `status`): tried in a
/// child, which leaves this process as it was.
#[cfg(target_os = "linux")]
pub fn available() -> Result<(), String> {
    // SAFETY: the child only makes system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot fork to probe: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match enter_namespace().and_then(|_| read_only_bind("/")) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        };
        // SAFETY: leave the child without running anything of the parent's.
        unsafe { libc::_exit(code) }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err("this kernel or its settings refuse the user and mount namespaces the runner needs (e.g. kernel.unprivileged_userns_clone=0, or an AppArmor restriction)".into())
    }
}

/// Enter a private mount namespace (and a user namespace when not root):
/// every mount fence of the runner is made in it.
#[cfg(target_os = "linux")]
pub fn enter_namespace() -> Result<(), String> {
    let err = |what: &str| format!("{NAMESPACE_FAILURE}: {what}: {}", std::io::Error::last_os_error());
    // SAFETY: plain system calls on this single-threaded process.
    unsafe {
        let uid = libc::geteuid();
        let gid = libc::getegid();
        if uid == 0 {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(err("unshare(CLONE_NEWNS)"));
            }
        } else {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return Err(err("unshare(CLONE_NEWUSER|CLONE_NEWNS)"));
            }
            // The same ids inside: files keep their owners; after exec the
            // program holds no capability in the namespace.
            write_proc("/proc/self/setgroups", "deny")?;
            write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
            write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
        }
        // Nothing mounted here may reach the namespace we came from.
        let root = c"/";
        if libc::mount(std::ptr::null(), root.as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) != 0 {
            return Err(err("making the mount namespace private"));
        }
    }
    Ok(())
}

/// Enter a PID namespace of the call's own (after [`enter_namespace`]):
/// this process's next child is its init (init.rs). Err: why not (a
/// kernel or container that refuses it), and the call's processes share
/// the host's view of the others.
#[cfg(target_os = "linux")]
pub fn enter_process_namespace() -> Result<(), String> {
    // Made by the supervisor before the fork: this process is its init.
    if super::init::is_first() {
        return Ok(());
    }
    // SAFETY: a plain system call on this single-threaded process.
    if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
        return Err(format!("unshare(CLONE_NEWPID): {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Mount a new instance of devpts over /dev/pts (and its `ptmx` over
/// /dev/ptmx), in the namespace [`enter_namespace`] made: a process of the
/// call then finds no other terminal there to read keystrokes from or
/// write into, while `script`, `expect` or a test's pty still get their
/// own.
#[cfg(target_os = "linux")]
pub fn private_terminals() -> Result<(), String> {
    let err = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: NUL-terminated strings and flags.
    unsafe {
        if libc::mount(c"devpts".as_ptr(), c"/dev/pts".as_ptr(), c"devpts".as_ptr(), libc::MS_NOSUID | libc::MS_NOEXEC, c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast()) != 0 {
            return Err(err("mounting a private /dev/pts"));
        }
    }
    // Where /dev/ptmx is a link to pts/ptmx (containers), it already leads there.
    if std::fs::symlink_metadata("/dev/ptmx").is_ok_and(|m| !m.file_type().is_symlink()) {
        // SAFETY: as above.
        if unsafe { libc::mount(c"/dev/pts/ptmx".as_ptr(), c"/dev/ptmx".as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) } != 0 {
            return Err(err("binding the private ptmx"));
        }
    }
    Ok(())
}

/// How the runner says it could not make its mount namespace (the plugin
/// then runs with persistence open).
pub const NAMESPACE_FAILURE: &str = "cannot shut the repository's hooks and config";

#[cfg(target_os = "linux")]
fn write_proc(file: &str, text: &str) -> Result<(), String> {
    std::fs::write(file, text).map_err(|e| format!("{NAMESPACE_FAILURE}: writing {file}: {e}"))
}

/// Make `path` read-only in this mount namespace. Where it is a mount's
/// root already, that mount is remounted read-only in place: a call joining
/// a held fence copies the namespace of the call that built it, with that
/// call's binds (a code cache, a launch file), and a second bind on each
/// would be made, copied and torn down for nothing. Elsewhere (a folder
/// made again since sits on no bind) it is bound onto itself first. Never
/// skipped because the path reads as read-only already: a file system the
/// host made read-only may be made writable again during the call, and
/// only a read-only mount of the call's own stays so.
#[cfg(target_os = "linux")]
pub(super) fn make_read_only(path: &str) -> Result<(), String> {
    let c = std::ffi::CString::new(path).map_err(|_| format!("{path}: a path with a NUL byte"))?;
    if is_mount_root(&c) {
        return remount_read_only(path, &c);
    }
    read_only_bind(path)
}

/// Bind `path` onto itself, then remount that bind read-only.
#[cfg(target_os = "linux")]
fn read_only_bind(path: &str) -> Result<(), String> {
    let c = std::ffi::CString::new(path).map_err(|_| format!("{path}: a path with a NUL byte"))?;
    // SAFETY: a NUL-terminated path; the other arguments are null or flags.
    if unsafe { libc::mount(c.as_ptr(), c.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) } != 0 {
        return Err(format!("cannot make {path} read-only: bind mount: {}", std::io::Error::last_os_error()));
    }
    remount_read_only(path, &c)
}

/// Remount the mount at `c` read-only, keeping the flags it already has (a
/// user namespace may not drop nosuid, nodev or noexec from a mount it did
/// not make).
#[cfg(target_os = "linux")]
fn remount_read_only(path: &str, c: &std::ffi::CStr) -> Result<(), String> {
    let err = |what: &str| format!("cannot make {path} read-only: {what}: {}", std::io::Error::last_os_error());
    // SAFETY: a NUL-terminated path; the other arguments are null or flags.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return Err(err("statvfs"));
        }
        let keep = st.f_flag
            & (libc::ST_NOSUID | libc::ST_NODEV | libc::ST_NOEXEC | libc::ST_NOATIME | libc::ST_NODIRATIME | ST_RELATIME);
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep as libc::c_ulong;
        if libc::mount(std::ptr::null(), c.as_ptr(), std::ptr::null(), flags, std::ptr::null()) != 0 {
            return Err(err("read-only remount"));
        }
    }
    Ok(())
}

/// `STATX_ATTR_MOUNT_ROOT` (linux/stat.h, Linux 5.8).
const STATX_ATTR_MOUNT_ROOT: u64 = 0x2000;

/// Whether `c` (followed, as `mount` follows it) is the root of a mount.
/// No when the kernel cannot say: the path is then bound, as always.
#[cfg(target_os = "linux")]
fn is_mount_root(c: &std::ffi::CStr) -> bool {
    // SAFETY: a zeroed statx buffer, a NUL-terminated path.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::syscall(libc::SYS_statx, libc::AT_FDCWD, c.as_ptr(), 0, 0, &mut st as *mut libc::statx) };
    r == 0 && st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT != 0 && st.stx_attributes & STATX_ATTR_MOUNT_ROOT != 0
}
