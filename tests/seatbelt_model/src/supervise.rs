//! Enforcement on the real process tree: a seccomp filter sends every
//! watched call (syscalls.rs) to a supervisor by user notification
//! (seccomp_unotify(2)); the supervisor resolves the call's paths, asks the
//! profile, and answers "continue" or EPERM (Seatbelt's refusals are EPERM,
//! "Operation not permitted").
//!
//! Known limit of user notification, which a test instrument accepts and
//! the README names: "continue" lets the kernel re-read the path from the
//! process's memory, so another thread of the process could change it in
//! between (seccomp_unotify(2), "Design goals; use of
//! SECCOMP_USER_NOTIF_FLAG_CONTINUE").

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;

use crate::profile::Profile;
use crate::macos_links::macos_spelling;
use crate::resolve::Resolved;
use crate::syscalls::{self, Memory, Plan};

// include/uapi/linux/seccomp.h, include/uapi/linux/filter.h, audit.h.
const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_USER_NOTIF_FLAG_CONTINUE: u32 = 1;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
/// x86_64's x32 calls carry this bit; the filter refuses them all.
const X32_BIT: u32 = 0x4000_0000;

#[repr(C)]
#[derive(Clone, Copy)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

#[repr(C)]
#[derive(Default)]
struct SeccompData {
    nr: i32,
    arch: u32,
    instruction_pointer: u64,
    args: [u64; 6],
}

#[repr(C)]
#[derive(Default)]
struct Notif {
    id: u64,
    pid: u32,
    flags: u32,
    data: SeccompData,
}

#[repr(C)]
struct NotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

// _IOWR('!', 0, struct seccomp_notif), _IOWR('!', 1, struct seccomp_notif_resp),
// _IOW('!', 2, __u64).
const IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const IOCTL_NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102;

const fn stmt(code: u16, k: u32) -> SockFilter {
    SockFilter { code, jt: 0, jf: 0, k }
}

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;

/// The filter: another architecture's or x32's calls kill the process (no
/// way around the table), a watched call goes to the supervisor, the rest
/// run.
fn program() -> Vec<SockFilter> {
    let watched: Vec<u32> = syscalls::WATCHED.iter().filter(|&&n| n >= 0).map(|&n| n as u32).collect();
    let mut p = vec![
        stmt(LD_W_ABS, 4), // seccomp_data.arch
        SockFilter { code: JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH },
        stmt(RET_K, SECCOMP_RET_KILL_PROCESS),
        stmt(LD_W_ABS, 0), // seccomp_data.nr
        SockFilter { code: JGE_K, jt: 0, jf: 1, k: X32_BIT },
        stmt(RET_K, SECCOMP_RET_KILL_PROCESS),
    ];
    let n = watched.len();
    for (i, nr) in watched.iter().enumerate() {
        // Jump over the rest of the list and the ALLOW to the USER_NOTIF.
        p.push(SockFilter { code: JEQ_K, jt: (n - i) as u8, jf: 0, k: *nr });
    }
    p.push(stmt(RET_K, SECCOMP_RET_ALLOW));
    p.push(stmt(RET_K, SECCOMP_RET_USER_NOTIF));
    p
}

/// Install the filter on this process; the listener, or the errno (EBUSY:
/// a filter above us already has a listener, i.e. we run under the model).
pub fn install() -> Result<OwnedFd, i32> {
    install_program(program())
}

/// Whether this process already runs under a profile of the model's that
/// denies something, without fencing anything itself: a filter that allows
/// every call, with a listener the kernel refuses (EBUSY) under another
/// listener. Closing it at once frees the listener (the kernel drops a
/// filter's notification state when its fd is released), so a later
/// `sandbox-exec` below is judged by the real profiles alone.
pub fn nested() -> bool {
    matches!(install_program(vec![stmt(RET_K, SECCOMP_RET_ALLOW)]), Err(libc::EBUSY))
}

fn install_program(prog: Vec<SockFilter>) -> Result<OwnedFd, i32> {
    let fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    let call = || unsafe { libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog as *const SockFprog) };
    let mut fd = call();
    if fd < 0 && errno() == libc::EACCES {
        // Without CAP_SYS_ADMIN a filter needs no_new_privs (seccomp(2)).
        unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        fd = call();
    }
    if fd < 0 {
        return Err(errno());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

struct ProcMem(File);

impl Memory for ProcMem {
    fn string(&self, addr: u64) -> Option<String> {
        let mut out = Vec::new();
        let mut at = addr;
        // PATH_MAX, read a page at a time so an unmapped next page does not fail the read.
        while out.len() < 4096 {
            let room = 4096 - (at % 4096) as usize;
            let mut buf = vec![0u8; room];
            let n = self.0.read_at(&mut buf, at).ok()?;
            if n == 0 {
                return None;
            }
            if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&buf[..end]);
                return Some(String::from_utf8_lossy(&out).into_owned());
            }
            out.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        None
    }

    fn u64_at(&self, addr: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        self.0.read_exact_at(&mut b, addr).ok()?;
        Some(u64::from_ne_bytes(b))
    }
}

/// Serve notifications until no process is left under the filter.
pub fn serve(listener: OwnedFd, profile: &Profile, mut log: Option<File>) {
    let fd = listener.as_raw_fd();
    loop {
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP: every process under the filter has exited (Linux 5.8+).
            return;
        }
        let mut n = Notif::default();
        if unsafe { libc::ioctl(fd, IOCTL_NOTIF_RECV as _, &mut n as *mut Notif) } < 0 {
            continue; // ENOENT: the caller died before we read it.
        }
        let (allowed, why) = decide(&n, profile);
        // The memory we read was the caller's only if it is still waiting.
        let mut id = n.id;
        if unsafe { libc::ioctl(fd, IOCTL_NOTIF_ID_VALID as _, &mut id as *mut u64) } < 0 {
            continue;
        }
        if let (Some(f), false) = (log.as_mut(), allowed) {
            let _ = writeln!(f, "deny {why} (pid {}, syscall {})", n.pid, n.data.nr);
        }
        let resp = NotifResp {
            id: n.id,
            val: 0,
            error: if allowed { 0 } else { -libc::EPERM },
            flags: if allowed { SECCOMP_USER_NOTIF_FLAG_CONTINUE } else { 0 },
        };
        unsafe { libc::ioctl(fd, IOCTL_NOTIF_SEND as _, &resp as *const NotifResp) };
    }
}

/// Whether the call may go on, and what was refused.
fn decide(n: &Notif, profile: &Profile) -> (bool, String) {
    let Ok(mem) = File::open(format!("/proc/{}/mem", n.pid)) else { return (false, "a process whose memory cannot be read".into()) };
    match syscalls::plan(n.data.nr as i64, n.data.args, n.pid, &ProcMem(mem)) {
        Plan::Pass => (true, String::new()),
        Plan::Refuse(why) => (false, why.to_string()),
        Plan::Check(pairs) => {
            for (op, path) in pairs {
                match path {
                    Resolved::NoFile => {}
                    Resolved::Unknown => return (false, format!("{op} on a path that could not be resolved")),
                    // Seatbelt's hooks run on a looked-up vnode: a name that
                    // does not exist fails with ENOENT before any check
                    // (XNU: namei, then mac_vnode_check_*), except where
                    // the operation makes it. PATH search relies on that.
                    Resolved::Path(p) if op != "file-write-create" && !crate::resolve::exists(&p) => {}
                    Resolved::Path(p) => {
                        let mac = macos_spelling(&p);
                        let v = profile.verdict(op, &mac);
                        if !v.allowed {
                            let by: Vec<String> = v.refused_by.iter().map(|(r, l)| format!("{r} line {l}")).collect();
                            return (false, format!("{op} {mac} ({})", by.join(", ")));
                        }
                    }
                }
            }
            (true, String::new())
        }
    }
}
