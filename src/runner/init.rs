//! The call's own process namespace (Linux): it sees only its processes.
//!
//! Other processes' command lines carry tokens (`mysql -pSECRET`, a
//! `--token` flag) and /proc shows them to every process of the user. So
//! the runner's child enters a PID namespace of its own, and its first
//! process there — the init, ours, not the command — mounts a fresh /proc
//! that lists only the call's processes, puts up the fence, starts the
//! hand and the command, and reaps what the command leaves behind.
//!
//! The init writes the command's status straight to the supervisor (a
//! pipe), so the call ends when the command does — not when the namespaces
//! are torn down, which happens later, off the host's path, as the last of
//! their processes leaves. What the command left running (a server in the
//! background) keeps running after the call: the init stays until the last
//! of it exits, then leaves, and the namespaces go with it. Killed, the
//! init takes the whole namespace with it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set in the runner's child when the supervisor made the call's process
/// namespace before forking it: the child is then the namespace's init
/// itself, and starts no other.
static FIRST: AtomicBool = AtomicBool::new(false);

/// In the supervisor, just before it forks the child (root with mount
/// fences, where the namespace's owner is the same either way): make the
/// call's process namespace now, so the child is its init and one process
/// less is forked and torn down per call. Returns this process's own
/// namespace, to go back to right after the fork ([`back_after_fork`]);
/// `None` when the kernel refuses (the child then makes it, as before).
pub fn before_fork() -> Option<OwnedFd> {
    // SAFETY: a NUL-terminated path; a plain system call.
    let own = unsafe { libc::open(c"/proc/self/ns/pid".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if own < 0 {
        return None;
    }
    // SAFETY: a descriptor just opened, owned here.
    let own = unsafe { OwnedFd::from_raw_fd(own) };
    // SAFETY: a plain system call on this single-threaded process.
    (unsafe { libc::unshare(libc::CLONE_NEWPID) } == 0).then_some(own)
}

/// In the supervisor, after the fork: its later children (a detached copy
/// of itself, below) are born in its own process namespace again, never
/// in the call's. False when that failed: the call must not go on.
pub fn back_after_fork(own: &OwnedFd) -> bool {
    // SAFETY: a namespace descriptor of ours.
    unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWPID) == 0 }
}

/// In the child the supervisor forked into the namespace it made.
pub fn child_is_first() {
    FIRST.store(true, Ordering::Relaxed);
}

/// Whether this process is already the init of the call's namespace.
pub fn is_first() -> bool {
    FIRST.load(Ordering::Relaxed)
}

/// The signals that end a process by default and that a namespace's first
/// process would drop: while it sets the call up they are noted instead, so
/// an interrupt or the host's timeout then still stops the call before its
/// command starts, as it stopped the runner's child before.
pub const ENDING: [i32; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM];
static NOTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(sig: libc::c_int) {
    NOTED.store(sig, Ordering::Relaxed);
}

/// Whether `sig` is ignored in this process: as the host started the
/// runner (`nohup`, a background job's interrupt), since the runner sets
/// no disposition of its own but these. Ignored, it ends no call, and the
/// command inherits it ignored.
pub fn ignored(sig: i32) -> bool {
    // SAFETY: a zeroed sigaction for sigaction to fill; nothing is set.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN }
}

/// Set once an init notes the ending signals (until its command starts).
static NOTING: AtomicBool = AtomicBool::new(false);

/// The ending signals this process takes: those it was not started
/// ignoring (ignored, they stay so for the command).
fn taken() -> impl Iterator<Item = i32> {
    ENDING.into_iter().filter(|&s| !ignored(s))
}

/// In an init, right after the fork that made it (its signals still
/// blocked).
pub fn note_signals() {
    for sig in taken() {
        // SAFETY: a handler that only stores a number.
        unsafe { libc::signal(sig, note as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    NOTING.store(true, Ordering::Relaxed);
}

/// Whether this process is an init that notes the ending signals while it
/// sets the call up ([`noted_signal`] says what came).
pub fn noting() -> bool {
    NOTING.load(Ordering::Relaxed)
}

/// The process the ending signals are passed on to while this one leaves
/// (the runner's child, once it started the init).
static PASS_TO: AtomicI32 = AtomicI32::new(0);

extern "C" fn pass_on(sig: libc::c_int) {
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: kill is async-signal-safe; errno is put back as it was.
    unsafe {
        libc::kill(PASS_TO.load(Ordering::Relaxed), sig);
        *libc::__errno_location() = errno;
    }
}

/// The non-ignored ending signals blocked in this thread; the mask before.
fn block_ending() -> libc::sigset_t {
    // SAFETY: sigset manipulation on zeroed sets we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in taken() {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

/// Before the command starts: the signal noted while the call was set up,
/// if any; from here on the init takes its signals as a namespace's init.
/// The ignored ones stay ignored, for the command to inherit.
pub fn noted_signal() -> Option<i32> {
    for sig in taken() {
        // SAFETY: default action back.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    Some(NOTED.load(Ordering::Relaxed)).filter(|&s| s != 0)
}

/// What the runner's child says to the init it started as it leaves.
const LEFT: u8 = b'L';

/// The init's end of the status pipe.
pub struct Init {
    status: OwnedFd,
    /// Where the runner's child started this init: the read end of a pipe
    /// whose other end goes with that child ([`Init::once_the_child_left`]).
    child: Option<OwnedFd>,
}

/// In the runner's child, its PID namespace entered: start the namespace's
/// init, which returns; the child, whose work is done, closes `close` and
/// leaves (the init is the supervisor's child from then on: it is the
/// tree's subreaper). `status` is the write end of the supervisor's status
/// pipe, which only the init keeps.
pub fn start(status: RawFd, close: &[RawFd]) -> Result<Init, String> {
    if is_first() {
        // SAFETY: the supervisor hears an init was started; the pipe's
        // write end is ours from here.
        unsafe { libc::write(status, b"I".as_ptr().cast(), 1) };
        return Ok(Init { status: unsafe { OwnedFd::from_raw_fd(status) }, child: None });
    }
    // A termination sent to the runner's child must not end with it while
    // the init goes on: held across the fork, the init notes what reaches
    // it (a namespace's init would drop it), and this process passes on to
    // the init what reaches it until it leaves. The init looks at what it
    // noted only once this process has left (the pipe's end closes), so
    // nothing passed on comes after that look.
    let mut left = [-1; 2];
    // SAFETY: an array of the size passed.
    if unsafe { libc::pipe2(left.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("cannot start the call's init: {}", std::io::Error::last_os_error()));
    }
    let old = block_ending();
    // SAFETY: fork in the single-threaded child.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: the mask this process had; our pipe.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::close(left[0]);
            libc::close(left[1]);
        }
        return Err(format!("cannot start the call's init: {e}"));
    }
    if pid == 0 {
        note_signals();
        // SAFETY: the mask the child had; the parent's end closed; the
        // pipe's read end and the status pipe's write end, ours from here.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::close(left[1]);
            return Ok(Init { status: OwnedFd::from_raw_fd(status), child: Some(OwnedFd::from_raw_fd(left[0])) });
        }
    }
    PASS_TO.store(pid, Ordering::Relaxed);
    // SAFETY: a handler that only passes the signal on; what was held is
    // passed on as the mask lets go of it; the supervisor hears an init was
    // started; the child's copies are closed; then it leaves.
    unsafe {
        for sig in taken() {
            libc::signal(sig, pass_on as extern "C" fn(libc::c_int) as libc::sighandler_t);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::close(left[0]);
        libc::write(status, b"I".as_ptr().cast(), 1);
        libc::close(status);
        for &fd in close {
            libc::close(fd);
        }
        libc::write(left[1], (&LEFT as *const u8).cast(), 1);
        libc::_exit(0)
    }
}

/// Tell the supervisor the command ended with wait status `st`.
fn send_status(fd: RawFd, st: i32) {
    let mut bytes = vec![b'S'];
    bytes.extend(st.to_ne_bytes());
    // SAFETY: a buffer of the length passed.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

/// In the init, when it failed before the command ran: say so to the
/// supervisor (`code` as an exit status), which the child's exit no longer
/// carries.
pub fn failed(init: &Init, code: u8) {
    send_status(init.status.as_raw_fd(), i32::from(code) << 8);
}

impl Init {
    /// Wait until the runner's child that started this init has left (at
    /// once, mostly: it left while the init set the call up), so that all
    /// it passed on has been noted. False when it did not leave as it
    /// meant to (killed on its way, it said nothing): the call ends.
    pub fn once_the_child_left(&mut self) -> bool {
        let Some(fd) = self.child.take() else { return true };
        let (mut b, mut said) = ([0u8; 8], false);
        loop {
            // SAFETY: a buffer of the length passed.
            let n = unsafe { libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
            said |= n > 0 && b[..n as usize].contains(&LEFT);
            // Read to the end; a noted signal that interrupts the read is
            // no end.
            if n == 0 || (n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)) {
                return said;
            }
        }
    }

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

    /// Reap every process of the namespace, send the command's status when
    /// it ends, and be the hand (`hand`: the channel the supervisor asks it
    /// on); leave when the command and all it left running are gone.
    pub fn serve(self, command: i32, mut hand: Option<super::hand::Serving>) -> ! {
        super::arena::start_up_done();
        // SAFETY: plain calls on the single-threaded init. The command runs:
        // the init no longer dies with the runner's child (which leaves as
        // soon as the command ends), nor can anything of the call trace it.
        let sigfd = unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0);
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK)
        };
        let mut sent = false;
        loop {
            // Reap whatever has ended (the command may have before the
            // signal was watched).
            loop {
                let mut st = 0;
                // SAFETY: waiting for any child of ours, without blocking.
                let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
                if pid == command && !sent {
                    if nothing_else_left() {
                        leave_the_callers_group();
                    }
                    send_status(self.status.as_raw_fd(), st);
                    sent = true;
                }
                if pid > 0 {
                    continue;
                }
                if pid < 0 && sent {
                    // No child left: the call and all it left running are over.
                    // SAFETY: the init ends here.
                    unsafe { libc::_exit(0) }
                }
                break;
            }
            let mut fds = vec![libc::pollfd { fd: sigfd, events: libc::POLLIN, revents: 0 }];
            if let Some(h) = &hand {
                fds.push(libc::pollfd { fd: h.fd(), events: libc::POLLIN, revents: 0 });
            }
            // SAFETY: a vector of pollfds of the length passed.
            if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) } < 0 {
                continue;
            }
            if fds[0].revents & libc::POLLIN != 0 {
                let mut info = [0u8; 128];
                // SAFETY: drain the signalfd into a buffer of its record size.
                while unsafe { libc::read(sigfd, info.as_mut_ptr().cast(), info.len()) } > 0 {}
            }
            if fds.len() == 2 && fds[1].revents != 0 && !hand.as_mut().is_some_and(|h| h.answer_one()) {
                // The supervisor is gone: nothing more to make.
                hand = None;
            }
        }
    }
}

/// Whether the init has no child left (none running, none to reap), without
/// reaping any.
fn nothing_else_left() -> bool {
    // SAFETY: a zeroed siginfo for waitid to fill; WNOWAIT reaps nothing.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid with a siginfo buffer of its type.
    let r = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
}

/// The command has ended and left nothing running: the init leaves the
/// process group the host started the call in, before the supervisor hears
/// the status. Its own exit (the namespaces torn down) comes after the
/// runner's, and no one of the call's group reaps it: still in that group,
/// its zombie made the group look alive to the host, which then scanned
/// every process on the machine (DSH does, ~1.8 ms a call). While anything
/// of the call runs, the init stays in the group: a kill of the group (the
/// host's timeout) ends it, and the whole namespace with it.
fn leave_the_callers_group() {
    // SAFETY: setpgid on this process, to a group of its own.
    unsafe { libc::setpgid(0, 0) };
}

/// Whether `pid` (as the supervisor numbers it) is a call's init.
pub fn is_init(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "dsh-allow-init")
}
