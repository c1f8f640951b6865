//! Enforcement on the real process tree: a seccomp filter sends every
//! watched call (syscalls.rs) to a supervisor by user notification
//! (seccomp_unotify(2)); the supervisor resolves the call's paths, asks the
//! profile, and answers "continue" or EPERM (Seatbelt's refusals are EPERM,
//! "Operation not permitted").
//!
//! Known limit of user notification, which a test instrument accepts and
//! docs/testing.md names: "continue" lets the kernel re-read the path from the
//! process's memory, so another thread of the process could change it in
//! between (seccomp_unotify(2), "Design goals; use of
//! SECCOMP_USER_NOTIF_FLAG_CONTINUE").

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use crate::profile::Profile;
use crate::macos_links::macos_spelling;
use crate::resolve::Resolved;
use crate::syscalls::{self, Memory, Plan};

use crate::seccomp::{self, Action, Line, When};

/// The filter: another architecture's or x32's calls kill the process (no
/// way around the table), a watched call goes to the supervisor, the rest
/// run (the runner's own program builder, src/runner/seccomp.rs).
fn program() -> Vec<seccomp::SockFilter> {
    let lines: Vec<Line> = syscalls::WATCHED.iter().filter(|&&n| n >= 0).map(|&nr| Line { nr, when: When::Always, action: Action::Notify }).collect();
    seccomp::program(&lines)
}

/// Install the filter on this process; the listener, or the errno (EBUSY:
/// a filter above us already has a listener, i.e. we run under the model).
pub fn install() -> Result<OwnedFd, i32> {
    install_program(&program())
}

/// Whether this process already runs under a profile of the model's that
/// denies something, without fencing anything itself: a filter that allows
/// every call, with a listener the kernel refuses (EBUSY) under another
/// listener. Closing it at once frees the listener (the kernel drops a
/// filter's notification state when its fd is released), so a later
/// `sandbox-exec` below is judged by the real profiles alone.
pub fn nested() -> bool {
    matches!(install_program(&seccomp::program(&[])), Err(libc::EBUSY))
}

fn install_program(prog: &[seccomp::SockFilter]) -> Result<OwnedFd, i32> {
    match seccomp::install(prog) {
        // Without CAP_SYS_ADMIN a filter needs no_new_privs (seccomp(2)).
        Err(libc::EACCES) => {
            unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
            seccomp::install(prog)
        }
        r => r,
    }
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
            if seccomp::errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP: every process under the filter has exited (Linux 5.8+).
            return;
        }
        let Some(n) = seccomp::receive(fd) else { continue }; // ENOENT: the caller died before we read it.
        let (allowed, why) = decide(&n, profile);
        // The memory we read was the caller's only if it is still waiting.
        if !seccomp::still_waiting(fd, n.id) {
            continue;
        }
        if let (Some(f), false) = (log.as_mut(), allowed) {
            let _ = writeln!(f, "deny {why} (pid {}, syscall {})", n.pid, n.data.nr);
        }
        if allowed {
            seccomp::let_run(fd, n.id);
        } else {
            seccomp::answer(fd, n.id, Err(libc::EPERM));
        }
    }
}

/// Whether the call may go on, and what was refused.
fn decide(n: &seccomp::Notif, profile: &Profile) -> (bool, String) {
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
