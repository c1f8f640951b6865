//! Which Seatbelt operations a Linux system call performs, on which paths.
//!
//! The operation for each call follows the kernel functions the Apple
//! Sandbox Guide (fG!, 2011) lists under each operation, and XNU's MAC hooks
//! (bsd/kern/vfs_syscalls.c: mac_vnode_check_open / _create / _unlink /
//! _rename / _setmode / _setowner / _setutimes / _setextattr / _truncate,
//! bsd/kern/kern_exec.c: mac_vnode_check_exec):
//! - open by its flags: read-only is `file-read-data`, write-only
//!   `file-write-data`, both both; with O_CREAT on a name that does not
//!   exist, `file-write-create` alone (the spec's measurement: a create-only
//!   rule makes and fills a file). O_TRUNC counts as a write even on a
//!   read-only open (the stricter reading). O_PATH touches no data and is
//!   `file-read-metadata`, which no profile of ours fences.
//! - unlink, rmdir: `file-write-unlink`. rename: `file-write-unlink` on the
//!   source, `file-write-create` on the destination and, when the
//!   destination exists (it is replaced, so removed), `file-write-unlink` on
//!   it too: the guide lists only the first two; the model adds the third as
//!   the stricter reading.
//! - mkdir, mknod, symlink, link: `file-write-create` on the new name.
//! - chmod `-mode`, chown `-owner`, utimes `-times`, set/remove xattr
//!   `-xattr`, truncate `file-write-data`.
//! - execve: `process-exec` on the program and, for a `#!` script,
//!   `process-exec-interpreter` on its interpreter (the optable has both;
//!   `process-exec` in a profile is `process-exec*`, sbpl1.scm).
//!
//! Two calls have no path to check and are refused outright, the stricter
//! reading: open_by_handle_at (opens by file handle) and io_uring_setup
//! (io_uring's own opens and renames bypass seccomp).

use crate::resolve::{self, Resolved};

/// What the model does with one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Check each (operation, path) pair; all must be allowed.
    Check(Vec<(&'static str, Resolved)>),
    /// Refuse with EPERM whatever the profile says.
    Refuse(&'static str),
    /// Not a file operation the model checks.
    Pass,
}

/// Reads the calling process's memory.
pub trait Memory {
    fn string(&self, addr: u64) -> Option<String>;
    fn u64_at(&self, addr: u64) -> Option<u64>;
}

macro_rules! nr {
    ($($name:ident = $x86:expr, $arm:expr;)*) => {
        $(
            #[cfg(target_arch = "x86_64")]
            pub const $name: i64 = $x86;
            #[cfg(target_arch = "aarch64")]
            pub const $name: i64 = $arm;
        )*
        /// Every call the filter sends to the model.
        pub const WATCHED: &[i64] = &[$($name),*];
    };
}

// System call numbers (x86_64: arch/x86/entry/syscalls/syscall_64.tbl;
// aarch64: the generic table, include/uapi/asm-generic/unistd.h). -1: the
// call does not exist on that architecture.
nr! {
    OPEN = 2, -1;
    OPENAT = 257, 56;
    OPENAT2 = 437, 437;
    CREAT = 85, -1;
    UNLINK = 87, -1;
    UNLINKAT = 263, 35;
    RMDIR = 84, -1;
    RENAME = 82, -1;
    RENAMEAT = 264, 38;
    RENAMEAT2 = 316, 276;
    MKDIR = 83, -1;
    MKDIRAT = 258, 34;
    MKNOD = 133, -1;
    MKNODAT = 259, 33;
    SYMLINK = 88, -1;
    SYMLINKAT = 266, 36;
    LINK = 86, -1;
    LINKAT = 265, 37;
    CHMOD = 90, -1;
    FCHMOD = 91, 52;
    FCHMODAT = 268, 53;
    FCHMODAT2 = 452, 452;
    CHOWN = 92, -1;
    FCHOWN = 93, 55;
    LCHOWN = 94, -1;
    FCHOWNAT = 260, 54;
    UTIME = 132, -1;
    UTIMES = 235, -1;
    FUTIMESAT = 261, -1;
    UTIMENSAT = 280, 88;
    SETXATTR = 188, 5;
    LSETXATTR = 189, 6;
    FSETXATTR = 190, 7;
    REMOVEXATTR = 197, 14;
    LREMOVEXATTR = 198, 15;
    FREMOVEXATTR = 199, 16;
    SETXATTRAT = 463, 463;
    REMOVEXATTRAT = 466, 466;
    TRUNCATE = 76, 45;
    FTRUNCATE = 77, 46;
    EXECVE = 59, 221;
    EXECVEAT = 322, 281;
    OPEN_BY_HANDLE_AT = 304, 265;
    IO_URING_SETUP = 425, 425;
    CONNECT = 42, 203;
}

const AT_FDCWD: i32 = libc::AT_FDCWD;

/// The plan for call `nr` with `args`, made by thread `tid`.
pub fn plan(nr: i64, args: [u64; 6], tid: u32, mem: &dyn Memory) -> Plan {
    let fd = |i: usize| args[i] as i32;
    let s = |i: usize| mem.string(args[i]);
    let at = |dirfd: i32, name: Option<String>, follow: bool| match name {
        Some(n) => resolve::resolve(tid, dirfd, &n, follow),
        None => Resolved::Unknown,
    };
    let of_fd = |i: usize| resolve::fd_path(tid, fd(i));
    // The `*at` calls with a flags word: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH.
    let at_flags = |dirfd: i32, name: Option<String>, flags: u64| -> Resolved {
        match name {
            Some(n) if n.is_empty() && flags & libc::AT_EMPTY_PATH as u64 != 0 => {
                if dirfd == AT_FDCWD {
                    resolve::resolve(tid, AT_FDCWD, ".", true)
                } else {
                    resolve::fd_path(tid, dirfd)
                }
            }
            n => at(dirfd, n, flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0),
        }
    };
    let one = |op: &'static str, r: Resolved| Plan::Check(vec![(op, r)]);
    match nr {
        n if n == OPEN => open(at(AT_FDCWD, s(0), args[1] & libc::O_NOFOLLOW as u64 == 0), args[1]),
        n if n == OPENAT => open(at(fd(0), s(1), args[2] & libc::O_NOFOLLOW as u64 == 0), args[2]),
        n if n == OPENAT2 => {
            // struct open_how { u64 flags; u64 mode; u64 resolve; }
            let Some(flags) = mem.u64_at(args[2]) else { return Plan::Check(vec![("file-read-data", Resolved::Unknown)]) };
            open(at(fd(0), s(1), flags & libc::O_NOFOLLOW as u64 == 0), flags)
        }
        n if n == CREAT => open(at(AT_FDCWD, s(0), true), (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64),
        n if n == UNLINK || n == RMDIR => one("file-write-unlink", at(AT_FDCWD, s(0), false)),
        n if n == UNLINKAT => one("file-write-unlink", at(fd(0), s(1), false)),
        n if n == RENAME => rename(at(AT_FDCWD, s(0), false), at(AT_FDCWD, s(1), false), 0),
        n if n == RENAMEAT => rename(at(fd(0), s(1), false), at(fd(2), s(3), false), 0),
        n if n == RENAMEAT2 => rename(at(fd(0), s(1), false), at(fd(2), s(3), false), args[4]),
        n if n == MKDIR || n == MKNOD => one("file-write-create", at(AT_FDCWD, s(0), false)),
        n if n == MKDIRAT || n == MKNODAT => one("file-write-create", at(fd(0), s(1), false)),
        n if n == SYMLINK => one("file-write-create", at(AT_FDCWD, s(1), false)),
        n if n == SYMLINKAT => one("file-write-create", at(fd(1), s(2), false)),
        n if n == LINK => one("file-write-create", at(AT_FDCWD, s(1), false)),
        n if n == LINKAT => one("file-write-create", at(fd(2), s(3), false)),
        n if n == CHMOD => one("file-write-mode", at(AT_FDCWD, s(0), true)),
        n if n == FCHMOD => one("file-write-mode", of_fd(0)),
        // fchmodat(2) has no flags argument; fchmodat2 does.
        n if n == FCHMODAT => one("file-write-mode", at(fd(0), s(1), true)),
        n if n == FCHMODAT2 => one("file-write-mode", at_flags(fd(0), s(1), args[3])),
        n if n == CHOWN => one("file-write-owner", at(AT_FDCWD, s(0), true)),
        n if n == LCHOWN => one("file-write-owner", at(AT_FDCWD, s(0), false)),
        n if n == FCHOWN => one("file-write-owner", of_fd(0)),
        n if n == FCHOWNAT => one("file-write-owner", at_flags(fd(0), s(1), args[4])),
        n if n == UTIME || n == UTIMES => one("file-write-times", at(AT_FDCWD, s(0), true)),
        n if n == FUTIMESAT => match args[1] {
            0 => one("file-write-times", of_fd(0)),
            _ => one("file-write-times", at(fd(0), s(1), true)),
        },
        // utimensat(dirfd, NULL, …) sets the times of dirfd itself.
        n if n == UTIMENSAT => match args[1] {
            0 => one("file-write-times", of_fd(0)),
            _ => one("file-write-times", at_flags(fd(0), s(1), args[3])),
        },
        n if n == SETXATTR || n == REMOVEXATTR => one("file-write-xattr", at(AT_FDCWD, s(0), true)),
        n if n == LSETXATTR || n == LREMOVEXATTR => one("file-write-xattr", at(AT_FDCWD, s(0), false)),
        n if n == FSETXATTR || n == FREMOVEXATTR => one("file-write-xattr", of_fd(0)),
        n if n == SETXATTRAT || n == REMOVEXATTRAT => one("file-write-xattr", at_flags(fd(0), s(1), args[2])),
        n if n == TRUNCATE => one("file-write-data", at(AT_FDCWD, s(0), true)),
        n if n == FTRUNCATE => one("file-write-data", of_fd(0)),
        n if n == EXECVE => exec(at(AT_FDCWD, s(0), true)),
        n if n == EXECVEAT => exec(at_flags(fd(0), s(1), args[4])),
        n if n == OPEN_BY_HANDLE_AT => Plan::Refuse("open_by_handle_at names no path"),
        n if n == IO_URING_SETUP => Plan::Refuse("io_uring's operations would bypass the model"),
        n if n == CONNECT => connect(args, tid, mem),
        _ => Plan::Pass,
    }
}

/// connect(2) to a unix socket by path is `network-outbound` on that path
/// (the optable: the operation takes path filters for unix sockets). An IP
/// address has no path: the model does not judge `remote` filters, and
/// passes it (docs/testing.md: the Seatbelt model).
fn connect(args: [u64; 6], tid: u32, mem: &dyn Memory) -> Plan {
    let Some(head) = mem.u64_at(args[1]) else { return Plan::Check(vec![("network-outbound", Resolved::Unknown)]) };
    if (head & 0xffff) as i32 != libc::AF_UNIX {
        return Plan::Pass;
    }
    match mem.string(args[1] + 2) {
        // An abstract name (leading NUL) is no path; macOS has none.
        Some(p) if p.is_empty() => Plan::Pass,
        Some(p) => Plan::Check(vec![("network-outbound", resolve::resolve(tid, AT_FDCWD, &p, true))]),
        None => Plan::Check(vec![("network-outbound", Resolved::Unknown)]),
    }
}

fn open(path: Resolved, flags: u64) -> Plan {
    let flags = flags as i32;
    if flags & libc::O_PATH != 0 {
        return Plan::Pass;
    }
    let creating = flags & libc::O_CREAT != 0 && matches!(&path, Resolved::Path(p) if !resolve::exists(p));
    if creating {
        return Plan::Check(vec![("file-write-create", path)]);
    }
    let mut ops = Vec::new();
    match flags & libc::O_ACCMODE {
        libc::O_WRONLY => ops.push("file-write-data"),
        libc::O_RDWR => ops.extend(["file-read-data", "file-write-data"]),
        _ => ops.push("file-read-data"),
    }
    if flags & libc::O_TRUNC != 0 && !ops.contains(&"file-write-data") {
        ops.push("file-write-data");
    }
    Plan::Check(ops.into_iter().map(|op| (op, path.clone())).collect())
}

fn rename(from: Resolved, to: Resolved, flags: u64) -> Plan {
    let mut v = vec![("file-write-unlink", from.clone()), ("file-write-create", to.clone())];
    let exchange = flags & libc::RENAME_EXCHANGE as u64 != 0;
    if exchange || matches!(&to, Resolved::Path(p) if resolve::exists(p)) {
        v.push(("file-write-unlink", to));
    }
    if exchange {
        v.push(("file-write-create", from));
    }
    Plan::Check(v)
}

fn exec(program: Resolved) -> Plan {
    let mut v = vec![("process-exec", program.clone())];
    if let Resolved::Path(p) = &program {
        if let Some(interp) = interpreter(p) {
            v.push(("process-exec-interpreter", resolve::resolve(std::process::id(), AT_FDCWD, &interp, true)));
        }
    }
    Plan::Check(v)
}

/// The interpreter a `#!` line names (the kernel reads up to 256 bytes:
/// BINPRM_BUF_SIZE, include/uapi/linux/binfmts.h).
fn interpreter(path: &str) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let text = String::from_utf8_lossy(line);
    let first = text.split_whitespace().next()?;
    first.starts_with('/').then(|| first.to_string())
}
