//! The call's own process namespace (Linux): it sees only its processes.
//!
//! Other processes' command lines carry tokens (`mysql -pSECRET`, a
//! `--token` flag) and /proc shows them to every process of the user. So
//! the runner's child enters a PID namespace of its own, and its first
//! process there — the init, ours, not the command — mounts a fresh /proc
//! that lists only the call's processes, puts up the fence, starts the
//! hand and the command, and reaps what the command leaves behind.
//!
//! The command's status reaches the supervisor through the runner's child,
//! which waits for it and leaves with it, so the call ends when the command
//! does. What the command left running (a server in the background) keeps
//! running after the call: the init stays until the last of it exits, then
//! ends the hand and leaves, and the namespace goes with it. Killed, the
//! init takes the whole namespace with it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The init's end of the status pipe.
pub struct Init {
    status: OwnedFd,
}

/// In the runner's child, its PID namespace entered: start the namespace's
/// init. The child stays behind as the relay of the command's status and
/// never returns; the init returns, with `close` closed in the relay.
pub fn start(close: &[RawFd]) -> Result<Init, String> {
    let mut p = [0; 2];
    // SAFETY: an array of the size passed.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("cannot make the status pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: two new descriptors, owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
    // SAFETY: fork in the single-threaded child.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot start the call's init: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // The init dies with the child until the command runs (a runner
        // killed while setting up leaves nothing behind).
        // SAFETY: prctl with integers.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        drop(read);
        return Ok(Init { status: write });
    }
    drop(write);
    for &fd in close {
        // SAFETY: the relay's copies of descriptors the init carries on.
        unsafe { libc::close(fd) };
    }
    relay_status(read, pid)
}

/// The child: wait for the command's status and leave with it (a death by
/// signal by the same signal), or with the init's own if it died first.
fn relay_status(read: OwnedFd, init: i32) -> ! {
    let mut st = [0u8; 4];
    // SAFETY: a buffer of the length passed.
    let n = unsafe { libc::read(read.as_raw_fd(), st.as_mut_ptr().cast(), st.len()) };
    let status = if n == 4 {
        i32::from_ne_bytes(st)
    } else {
        let mut s = 0;
        // SAFETY: the init is our child.
        unsafe { libc::waitpid(init, &mut s, 0) };
        s
    };
    leave_with(status)
}

/// Exit as a process that ended with wait status `st` did.
pub fn leave_with(st: i32) -> ! {
    if libc::WIFSIGNALED(st) {
        let sig = libc::WTERMSIG(st);
        // SAFETY: default action, unblocked, then raised at ourselves.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
            libc::_exit(128 + sig)
        }
    }
    // SAFETY: leave without running anything of the parent's.
    unsafe { libc::_exit(libc::WEXITSTATUS(st)) }
}

impl Init {
    /// A fresh /proc for this namespace: only the call's processes, and
    /// read-only like the tree around it.
    pub fn mount_proc(&self) -> Result<(), String> {
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
        // SAFETY: NUL-terminated strings and flags.
        if unsafe { libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, std::ptr::null()) } != 0 {
            return Err(format!("mounting the call's own /proc: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Reap every process of the namespace; send the command's status when
    /// it ends; leave when nothing but the hand is left (ending it).
    pub fn serve(self, command: i32, hand: Option<i32>) -> ! {
        // SAFETY: the command runs: the init no longer dies with the runner's
        // child (the relay leaves as soon as the command ends).
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0) };
        let mut sent = false;
        loop {
            let mut st = 0;
            // SAFETY: waiting for any child of ours.
            let pid = unsafe { libc::waitpid(-1, &mut st, 0) };
            if pid < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // SAFETY: no child left.
                unsafe { libc::_exit(0) }
            }
            if pid == command && !sent {
                let bytes = st.to_ne_bytes();
                // SAFETY: a buffer of the length passed.
                unsafe { libc::write(self.status.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
                sent = true;
            }
            if sent && only_the_hand_left(hand) {
                if let Some(h) = hand {
                    // SAFETY: kill and wait for our own child.
                    unsafe {
                        libc::kill(h, libc::SIGKILL);
                        libc::waitpid(h, std::ptr::null_mut(), 0);
                    }
                }
                // SAFETY: the call is over.
                unsafe { libc::_exit(0) }
            }
        }
    }
}

/// Whether the init's children are the hand alone (or none). The list is
/// in the pids of whichever /proc is mounted (the host's, where a fresh one
/// could not be mounted): each is read back as a pid of this namespace.
fn only_the_hand_left(hand: Option<i32>) -> bool {
    let children = std::fs::read_to_string("/proc/thread-self/children").unwrap_or_default();
    children.split_whitespace().all(|c| hand.is_some() && ns_pid(c) == hand)
}

/// A process's pid in its own namespace (the last of its `NSpid:` line).
fn ns_pid(pid: &str) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("NSpid:"))?.split_whitespace().last()?.parse().ok()
}

/// Whether `pid` (as the supervisor numbers it) is a call's init.
pub fn is_init(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "dsh-allow-init")
}
