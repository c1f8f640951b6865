//! The runner as its command's supervisor (Linux).
//!
//! Landlock fences paths and, since ABI 6, abstract unix sockets and
//! signals; it has nothing for a TCP port of the host's web server or a
//! unix socket some daemon listens on by path. So the runner forks: the
//! child puts up the fence (Landlock, a seccomp filter whose listener it
//! hands back, no capabilities beyond root's everyday ones, no inherited
//! descriptors) and execs the command; the parent stays, answers every
//! `connect(2)` and addressed `sendto(2)` of the command's whole tree by
//! user notification ([`super::sockets`] judges), and exits as its child
//! did. It is the tree's subreaper, so a daemon the command starts stays
//! in view. When the command ends with processes of it still running (a
//! dev server started in the background), a copy of the supervisor stays
//! behind for them, detached from the host's pipes, until the last one
//! exits: their connections keep being judged, not cut off.
//!
//! In a workspace-write session it also stands between the call and its
//! files: every creating call goes to the hand, a helper inside the fence
//! that makes the entry so the supervisor knows it as the call's own
//! ([`super::creates`]), and every removal and rename is judged
//! ([`super::removals`]): delete means what existed before the call.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::caller::{read as read_memory, read_string, take_fd as take_socket};
use super::hand::Hand;
use super::init::ENDING;
use super::own::Own;
use super::refusals::Refusals;
use super::removals::Removals;
use super::seccomp::{self, Action, Line, Notif, When};
use super::procs::Proc;
use super::sockets::{judge_address, unix_address, Judge};

/// What the supervisor keeps about the call's files.
pub struct Files {
    pub removals: Removals,
    pub own: Own,
    pub model: super::rights::Lazy,
    /// The call runs in a process namespace of its own (init.rs): it can
    /// name no process outside, and its pids are not the supervisor's.
    pub own_pids: bool,
    pub hand: Option<Hand>,
    pub refusals: Refusals,
}

/// How a refusal starts on the call's standard error: the plugin reads
/// these lines back into the ledger (a socket, not a path, was refused).
pub const REFUSED: &str = super::refusals::PREFIX;
/// How the runner says the call left processes running (background
/// servers): they stay fenced, under a detached copy of the supervisor.
pub const LEFT_RUNNING: &str = "dsh-allow: left running: ";

/// The filter: what goes to the supervisor, and what is refused outright
/// from registers alone.
pub fn filter_lines(files: bool) -> Vec<Line> {
    let eperm = Action::Errno(libc::EPERM as u16);
    let mut lines = vec![
        Line { nr: libc::SYS_connect, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_sendto, when: When::NotNull { arg: 4 }, action: Action::Notify },
        // TCP Fast Open connects inside sendmsg, whose address lies in a
        // header the filter cannot read: refused (a plain connect works).
        Line { nr: libc::SYS_sendmsg, when: When::AnyBit { arg: 2, mask: libc::MSG_FASTOPEN as u32 }, action: Action::Errno(libc::EOPNOTSUPP as u16) },
        Line { nr: libc::SYS_sendmmsg, when: When::AnyBit { arg: 3, mask: libc::MSG_FASTOPEN as u32 }, action: Action::Errno(libc::EOPNOTSUPP as u16) },
        // A message may carry its own address (datagrams.rs).
        Line { nr: libc::SYS_sendmsg, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_sendmmsg, when: When::Always, action: Action::Notify },
        // Signals: Landlock's scope refuses those to processes outside the
        // call (ABI 6); the supervisor sees them first to name a refusal.
        Line { nr: libc::SYS_kill, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_tkill, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_tgkill, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_rt_sigqueueinfo, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_rt_tgsigqueueinfo, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_pidfd_send_signal, when: When::Always, action: Action::Notify },
        // A line pushed into a terminal's input, or the console's.
        Line { nr: libc::SYS_ioctl, when: When::Equals { arg: 1, value: libc::TIOCSTI as u32 }, action: eperm },
        Line { nr: libc::SYS_ioctl, when: When::Equals { arg: 1, value: libc::TIOCLINUX as u32 }, action: eperm },
    ];
    // In a session that may change files: every removal and rename is
    // judged (removals.rs), every creating call made by the hand
    // (creates.rs). An open creates only with O_CREAT or O_TMPFILE, which
    // the filter reads from its flags; openat2's flags are in memory.
    if files {
        for nr in [
            libc::SYS_unlink,
            libc::SYS_unlinkat,
            libc::SYS_rmdir,
            libc::SYS_rename,
            libc::SYS_renameat,
            libc::SYS_renameat2,
            libc::SYS_mkdir,
            libc::SYS_mkdirat,
            libc::SYS_mknod,
            libc::SYS_mknodat,
            libc::SYS_symlink,
            libc::SYS_symlinkat,
            libc::SYS_creat,
            libc::SYS_openat2,
            libc::SYS_bind,
        ] {
            lines.push(Line { nr, when: When::Always, action: Action::Notify });
        }
        let creating = (libc::O_CREAT | 0o20000000) as u32;
        lines.push(Line { nr: libc::SYS_open, when: When::AnyBit { arg: 1, mask: creating }, action: Action::Notify });
        lines.push(Line { nr: libc::SYS_openat, when: When::AnyBit { arg: 2, mask: creating }, action: Action::Notify });
    }
    // io_uring connects and opens with no system call this filter sees:
    // ENOSYS, which every user of it takes as "not here" and falls back.
    for nr in [libc::SYS_io_uring_setup, libc::SYS_io_uring_enter, libc::SYS_io_uring_register] {
        lines.push(Line { nr, when: When::Always, action: Action::Errno(libc::ENOSYS as u16) });
    }
    // The mount calls Landlock has no hook for, and opening a file by its
    // handle (no path to fence). Root has lost the capabilities they need;
    // the filter refuses them for everyone anyway. The kernel's key
    // rings hold secrets no path names.
    for nr in [
        libc::SYS_mount_setattr,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_open_by_handle_at,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        lines.push(Line { nr, when: When::Always, action: eperm });
    }
    lines
}

/// Between the mounts and Landlock: given whether the call's own process
/// namespace was entered (or why not), start its init there; says what the
/// call's processes see, for `--report-fence`.
pub type Between<'b> = dyn FnMut(Result<(), String>) -> Result<String, (u8, String)> + 'b;
/// Make the mounts, call `between`, apply Landlock; the lines
/// `--report-fence` prints.
pub type Fence<'a> = Box<dyn FnOnce(&mut Between) -> Result<Vec<String>, (u8, String)> + 'a>;

/// What the child does before exec, in order; each may fail the call
/// (exit code, message), and then nothing of the command ran.
pub struct Child<'a> {
    pub argv: &'a [String],
    /// Leave the user's terminal (a session of its own).
    pub own_session: bool,
    /// Pipes in place of a terminal at 1 and 2 (see isolate.rs).
    pub relay: Option<super::isolate::Relay>,
    /// Make the mounts and apply Landlock; the lines `--report-fence` prints.
    pub fence: Fence<'a>,
    /// Whether a socket path is named by the call's grants (its variable is kept).
    pub granted: Box<dyn Fn(&str) -> bool + 'a>,
    /// Whether to report the fence on standard error once it is up.
    pub report: bool,
    /// Whether the call's file changes go to the supervisor (and the hand).
    pub files: bool,
    /// The hand's end of its channel (made and passed when `files`).
    pub hand: Option<RawFd>,
    /// The write end of the supervisor's status pipe (init.rs).
    pub status: RawFd,
    /// Make the call's process namespace before the fork, so the child is
    /// its init (init.rs: root, with mount fences).
    pub pids_first: bool,
    /// Run by the supervisor once the command has ended, before it leaves
    /// (launch_files.rs: what the call made where the host reads at start).
    pub settle: Box<dyn FnOnce() + 'a>,
}

/// In the parent after the fork: the fence is the child's to put up, so
/// what it holds (the keeper's ruleset, which other calls of the fence take
/// too, and the held namespaces) is let go of, not kept for the whole call.
fn let_go_of_fence(child: &mut Child) {
    drop(std::mem::replace(&mut child.fence, Box::new(|_: &mut Between| Ok(Vec::new()))));
}

/// The supervisor's channel with the child, and the hand's when the call's
/// files are watched (its end passed in `child.hand`), both passing who
/// sends (the listener and the hand's requests are read by their sender);
/// the supervisor becomes the subreaper of what the call leaves.
fn channels(child: &mut Child) -> Result<([i32; 2], [i32; 2]), String> {
    let mut pair = [0; 2];
    let mut hand_pair = [-1; 2];
    if child.files {
        // SAFETY: an array of the size passed.
        if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, hand_pair.as_mut_ptr()) } != 0 {
            return Err(format!("cannot make the helper's channel: {}", std::io::Error::last_os_error()));
        }
        child.hand = Some(hand_pair[1]);
        super::caller::pass_credentials(hand_pair[0], true);
    }
    // SAFETY: plain calls before the fork; arrays of the sizes passed.
    unsafe {
        if libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) != 0 {
            return Err(format!("cannot make the supervisor's channel: {}", std::io::Error::last_os_error()));
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    // Who hands the listener over is read from the message (the command's
    // process, in a namespace of its own or not).
    super::caller::pass_credentials(pair[0], true);
    Ok((pair, hand_pair))
}

/// Run `child` under supervision; returns the exit code to leave with
/// (when the child died of a signal this process dies of it too).
pub fn run(mut child: Child, judge: Judge, mut files: Files) -> u8 {
    let settle = std::mem::replace(&mut child.settle, Box::new(|| ()));
    let (pair, hand_pair) = match channels(&mut child) {
        Ok(c) => c,
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run")),
    };
    // The command's status, from the call's init (init.rs); without one
    // the pipe closes when the child execs, and its own exit says it.
    let mut status_pipe = [-1; 2];
    // SAFETY: an array of the size passed.
    if unsafe { libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return super::fail(super::EXIT_FAILED, &format!("cannot make the status pipe: {}; nothing was run", std::io::Error::last_os_error()));
    }
    child.status = status_pipe[1];
    let (old_mask, sigfd) = match watch_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run")),
    };
    let me = std::process::id() as i32;
    let own_session = child.own_session;
    let relay = child.relay.take();
    let own_pids_ns = if child.pids_first { super::init::before_fork() } else { None };
    // From here the call's processes hand over to each other (affinity.rs).
    super::affinity::pin_here();
    // SAFETY: this process is single-threaded here; the child only makes
    // system calls and execs or exits.
    let pid = unsafe { libc::fork() };
    if let Some(own) = &own_pids_ns {
        if pid != 0 && !super::init::back_after_fork(own) {
            let why = std::io::Error::last_os_error();
            if pid > 0 {
                // SAFETY: our own child, killed and reaped before we leave.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
            }
            return super::fail(super::EXIT_FAILED, &format!("cannot return to the runner's own process namespace: {why}; nothing was run"));
        }
    }
    if pid < 0 {
        return super::fail(super::EXIT_FAILED, &format!("cannot fork: {}; nothing was run", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        if own_pids_ns.is_some() {
            super::init::child_is_first();
            super::init::note_signals();
        }
        drop(own_pids_ns);
        // SAFETY: restoring the mask we saved; closing our copies.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
            libc::close(pair[0]);
            libc::close(sigfd);
            if hand_pair[0] >= 0 {
                libc::close(hand_pair[0]);
            }
            libc::close(status_pipe[0]);
        }
        let mut init = None;
        let code = become_command(Child { relay, ..child }, pair[1], me, &mut init);
        // The call's init that failed says so itself (its parent has left).
        if let Some(i) = &init {
            super::init::failed(i, code);
        }
        // SAFETY: leave without running anything of the parent's.
        unsafe { libc::_exit(code as i32) }
    }
    let_go_of_fence(&mut child);
    // SAFETY: our copy of the write end; the read end, owned here.
    unsafe { libc::close(status_pipe[1]) };
    let mut ending = Ending::new(pid, unsafe { OwnedFd::from_raw_fd(status_pipe[0]) });
    ending.child_is_init = own_pids_ns.is_some();
    // SAFETY: our copy of the child's end.
    unsafe { libc::close(pair[1]) };
    // SAFETY: our end of the channel, owned here.
    let channel = unsafe { OwnedFd::from_raw_fd(pair[0]) };
    let taken = take_listener(channel.as_raw_fd());
    drop(channel);
    if hand_pair[0] >= 0 {
        // SAFETY: our copy of the hand's end; ours, owned here.
        unsafe { libc::close(hand_pair[1]) };
        let ours = unsafe { OwnedFd::from_raw_fd(hand_pair[0]) };
        // The init greets once the command has execed (it waits for that);
        // a child that failed first closed its end, and the greeting reads
        // the end of it.
        files.hand = if taken.is_some() { Hand::greet(ours) } else { None };
    }
    let own_pids = taken.as_ref().is_some_and(|t| t.own_pids);
    if let (Some(h), Some(t)) = (files.hand.as_mut(), &taken) {
        if t.own_pids {
            h.ns_pid = 0;
        }
    }
    files.own_pids = own_pids;
    // The set-up is over: the supervisor serves the call on any CPU.
    super::affinity::unpin();
    let listener = taken.map(|t| t.fd);
    if let Some(l) = &listener {
        seccomp::wake_synchronously(l.as_raw_fd());
    }
    // Ours: the read ends; the write ends are the child's.
    let relay = relay.map(|mut r| {
        r.ends.clear();
        r
    });
    supervise(ending, own_session, listener, sigfd, judge, files, relay, settle)
}

/// How the supervisor learns the command ended: from the call's init over
/// the status pipe (`I` when the child started one, then `S` and the wait
/// status), or, with no init, from the child's own exit (the pipe closed at
/// its exec, unsaid). An init that ended unsaid took the call with it.
struct Ending {
    child: i32,
    pipe: Option<OwnedFd>,
    heard: Vec<u8>,
    child_status: Option<i32>,
    /// The child is the call's init itself (else, with an init, it started
    /// one and left).
    child_is_init: bool,
}

impl Ending {
    fn new(child: i32, pipe: OwnedFd) -> Ending {
        Ending { child, pipe: Some(pipe), heard: Vec::new(), child_status: None, child_is_init: false }
    }

    /// The status pipe, while it is open.
    fn fd(&self) -> RawFd {
        self.pipe.as_ref().map_or(-1, |p| p.as_raw_fd())
    }

    /// Read what the pipe has (it was ready); its end closes it.
    fn read(&mut self) {
        let mut buf = [0u8; 16];
        // SAFETY: a buffer of the length passed.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            self.heard.extend_from_slice(&buf[..n as usize]);
        } else {
            self.pipe = None;
        }
    }

    /// The command's wait status, once known.
    fn status(&self) -> Option<i32> {
        let init = self.heard.first() == Some(&b'I');
        if let Some(at) = self.heard.iter().position(|&b| b == b'S') {
            if let Some(st) = self.heard.get(at + 1..at + 5) {
                return Some(i32::from_ne_bytes(st.try_into().unwrap()));
            }
        }
        match (&self.pipe, init) {
            (Some(_), _) => None,
            // The init ended without a word: killed, and the call with it.
            (None, true) => Some(libc::SIGKILL),
            (None, false) => self.child_status,
        }
    }
}

/// The child: fence, filter, capabilities, descriptors, exec.
fn become_command(mut child: Child, channel: RawFd, supervisor: i32, init: &mut Option<super::init::Init>) -> u8 {
    // SAFETY: prctl with integers; the check after it closes the race with
    // a supervisor that died before the call.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The init of a namespace of its own sees no parent (0): the
        // supervisor's end of the channel says whether it is still there.
        let gone = if super::init::is_first() {
            let mut p = libc::pollfd { fd: channel, events: libc::POLLIN, revents: 0 };
            libc::poll(&mut p, 1, 0) < 0 || p.revents & (libc::POLLHUP | libc::POLLERR) != 0
        } else {
            libc::getppid() != supervisor
        };
        if gone {
            return super::EXIT_FAILED;
        }
    }
    if let Some(r) = child.relay.as_mut() {
        if let Err(e) = r.take_ends() {
            return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
        }
    }
    if child.own_session {
        if let Err(e) = super::isolate::leave_terminal() {
            return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
        }
    }
    let cleared = super::isolate::scrub_environment(&*child.granted);
    // In the call's own process namespace this process stays behind as
    // the relay of the command's status, and its init goes on (init.rs).
    let keep = [channel, child.hand.unwrap_or(-1)];
    let status_fd = child.status;
    let mut between = |pids: Result<(), String>| -> Result<String, (u8, String)> {
        if let Err(why) = pids {
            return Ok(format!("visible ({why})"));
        }
        let i = super::init::start(status_fd, &keep).map_err(|e| (super::EXIT_FAILED, format!("{e}; nothing was run")))?;
        let seen = match i.mount_proc() {
            Ok(()) => "its own only (a process namespace of the call's, with its own /proc)".to_string(),
            Err(e) => format!("visible ({e})"),
        };
        *init = Some(i);
        Ok(seen)
    };
    let lines = match (child.fence)(&mut between) {
        Ok(lines) => lines,
        Err((code, e)) => return super::fail(code, &e),
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        if let Err(e) = super::isolate::drop_capabilities() {
            return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
        }
    }
    // The hand: under this same fence, before the filter (its own calls
    // are the supervisor's, not the command's). In the call's own process
    // namespace the init is the hand (no process of the call can signal or
    // trace it); else a process of its own, reparented to the supervisor.
    if init.is_none() {
        if let Some(chan) = child.hand {
            if let Err(e) = super::hand::spawn(chan) {
                return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
            }
        }
    }
    // A signal that would have ended the runner's child before it became
    // the namespace's init, or that reached the init while it set the call
    // up, ends the call here, before the command.
    if let Some(i) = init.as_mut() {
        if !i.once_the_child_left() {
            return 128 + libc::SIGKILL as u8;
        }
    }
    if super::init::noting() {
        if let Some(sig) = super::init::noted_signal() {
            return 128u8.wrapping_add(sig as u8);
        }
    }
    // The init starts the command and stays to reap.
    let own_pids = init.is_some();
    let (argv, watched, report) = (child.argv, child.files, child.report);
    if let Some(i) = init.take() {
        let hand = child.hand;
        let mut command = || {
            // The command: the hand's channel is the init's alone.
            if let Some(chan) = hand {
                // SAFETY: our copy of the init's channel.
                unsafe { libc::close(chan) };
            }
            filter_and_exec((argv, watched, report), channel, own_pids, lines.clone(), &cleared)
        };
        let pid = match start_sharing_memory(&mut command, argv.len()) {
            Ok(pid) => pid,
            Err(e) => {
                let code = super::fail(super::EXIT_FAILED, &format!("cannot start the command: {e}; nothing was run"));
                // The init says so itself (its parent has left).
                super::init::failed(&i, code);
                return code;
            }
        };
        super::isolate::quiet_init(channel);
        let hand = child.hand.and_then(super::hand::Serving::greet);
        // The set-up is over: the init waits on any CPU.
        super::affinity::unpin();
        i.serve(pid, hand);
    }
    filter_and_exec((argv, watched, report), channel, own_pids, lines, &cleared)
}

/// Start `part` in a child that shares this process's memory until it
/// execs or leaves (clone with `CLONE_VM | CLONE_VFORK`, as `posix_spawn`
/// does): neither the page tables are copied nor a page on either side's
/// first write, which a fork of the init costs every call. This process
/// waits meanwhile; `part` never returns into it (the child leaves with
/// its code). Only for a single-threaded process: nothing else can hold a
/// lock the child takes. What the child leaves in the shared memory stays
/// (std's `exec` holds its environment lock for reading across the exec:
/// this process must not set the environment afterwards; it does not).
///
/// The child's stack: 512 KiB and room for glibc's `execvp`, which copies
/// the `argc` pointers onto it when a script has no `#!` line, above a
/// guard page (an overflow faults instead of writing the init's memory).
fn start_sharing_memory(part: &mut dyn FnMut() -> u8, argc: usize) -> std::io::Result<i32> {
    const PAGE: usize = 4096;
    let stack_len = (512 * 1024 + (argc + 2) * std::mem::size_of::<usize>()).next_multiple_of(PAGE);
    let mapped = stack_len + PAGE;
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `&mut dyn FnMut` below, alive while the
        // parent waits for this child's exec or exit.
        let part = unsafe { &mut *arg.cast::<&mut dyn FnMut() -> u8>() };
        let code = part();
        // SAFETY: leave without returning into the parent's frames.
        unsafe { libc::_exit(i32::from(code)) }
    }
    // SAFETY: a fresh anonymous mapping, only its pages touched are
    // faulted in; its lowest page is the guard.
    let stack = unsafe { libc::mmap(std::ptr::null_mut(), mapped, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK, -1, 0) };
    if stack == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the first page of the mapping just made.
    if unsafe { libc::mprotect(stack, PAGE, libc::PROT_NONE) } != 0 {
        let err = std::io::Error::last_os_error();
        // SAFETY: the mapping just made, not used.
        unsafe { libc::munmap(stack, mapped) };
        return Err(err);
    }
    let mut part = part;
    // SAFETY: the stack's top (it grows down); the parent is suspended
    // until the child execs or exits, so `part` and the stack outlive it.
    let pid = unsafe { libc::clone(entry, stack.cast::<u8>().add(mapped).cast(), libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, (&mut part as *mut &mut dyn FnMut() -> u8).cast()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: the child no longer runs on it.
    unsafe { libc::munmap(stack, mapped) };
    if pid < 0 {
        return Err(err);
    }
    Ok(pid)
}

/// The command's last steps: the filter, its listener handed over, the
/// descriptors, the report, exec. Returns only when one failed.
fn filter_and_exec((argv, files, report): (&[String], bool, bool), channel: RawFd, own_pids: bool, lines: Vec<String>, cleared: &[String]) -> u8 {
    let listener = match seccomp::install(&seccomp::program(&filter_lines(files))) {
        Ok(l) => l,
        Err(libc::EBUSY) => {
            return super::fail(super::EXIT_FAILED, "cannot supervise sockets: this process already runs under another seccomp supervisor (EBUSY); nothing was run")
        }
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("cannot install the socket filter: errno {e}; nothing was run")),
    };
    // The filter is up: a sendmsg of this process would now wait on the
    // supervisor it is addressed to. The supervisor takes the descriptor
    // by its number (pidfd_getfd) and says so.
    if let Err(e) = hand_over_listener(channel, listener.as_raw_fd(), own_pids) {
        return super::fail(super::EXIT_FAILED, &format!("cannot hand the socket filter to the supervisor: {e}; nothing was run"));
    }
    // Started by the call's init, this process still shares the init's
    // memory, and being dumpable is the memory's: the init (outside the
    // filter, the hand) is shut to tracing before the command's first
    // instruction runs, not once it resumes after the exec. The supervisor
    // has taken the listener (which needed this process dumpable); the
    // exec gives the command memory of its own, dumpable as usual.
    if own_pids {
        // SAFETY: prctl with integers.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    }
    drop(listener);
    // SAFETY: our end of the channel.
    unsafe { libc::close(channel) };
    if let Err(e) = super::isolate::close_inherited() {
        return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
    }
    if report {
        for l in lines {
            eprintln!("{l}");
        }
        let cleared = if cleared.is_empty() { "none".to_string() } else { cleared.join(", ") };
        eprintln!("dsh-allow sockets: supervised (environment cleared: {cleared})");
    }
    // The command runs on the CPUs the runner was started with.
    super::affinity::unpin();
    super::exec(argv)
}

/// An ending signal sent to this process and not yet read, if any. One the
/// runner was started ignoring (`nohup`, a background job's interrupt)
/// ends nothing: the kernel queues a blocked signal even when ignored.
fn ending_pending() -> Option<i32> {
    // SAFETY: a zeroed set for sigpending to fill.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: sigpending and sigismember on that set.
    unsafe { libc::sigpending(&mut set) };
    ENDING.into_iter().find(|&s| unsafe { libc::sigismember(&set, s) } == 1 && !super::init::ignored(s))
}

/// Block the signals the supervisor reads from a signalfd (the child
/// unblocks them again); returns the old mask and the signalfd.
fn watch_signals() -> Result<(libc::sigset_t, RawFd), String> {
    // SAFETY: sigset manipulation on zeroed sets we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in ENDING.into_iter().chain([libc::SIGCHLD]) {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if fd < 0 {
            return Err(format!("cannot watch signals: {}", std::io::Error::last_os_error()));
        }
        Ok((old, fd))
    }
}

/// Serve until the child is gone; then leave with its status, leaving a
/// detached copy behind for what it left running. A signal from a
/// terminal or the host reaches the child's group directly, unless the
/// child left the session (`own_session`): then it is passed on.
///
/// It blocks in poll and never spins: once no process uses the filter any
/// more (POLLHUP, which stays), the listener leaves the poll set and only
/// the child's end is awaited.
#[allow(clippy::too_many_arguments)]
fn supervise(mut ending: Ending, own_session: bool, listener: Option<OwnedFd>, sigfd: RawFd, judge: Judge, mut files: Files, relay: Option<super::isolate::Relay>, settle: Box<dyn FnOnce() + '_>) -> u8 {
    // The supervisor's loop lasts as long as the call: its memory is malloc's.
    super::arena::start_up_done();
    let inflight = Arc::new(AtomicUsize::new(0));
    let child = ending.child;
    let mut idle = listener.is_none();
    // The terminal's pipes still open (see isolate.rs).
    let mut open: Vec<usize> = relay.as_ref().map_or(Vec::new(), |r| (0..r.copies.len()).collect());
    loop {
        let lfd = listener.as_ref().map_or(-1, |l| l.as_raw_fd());
        let mut fds = vec![
            libc::pollfd { fd: sigfd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: if idle { -1 } else { lfd }, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: ending.fd(), events: libc::POLLIN, revents: 0 },
        ];
        if let Some(r) = &relay {
            fds.extend(open.iter().map(|&i| libc::pollfd { fd: r.copies[i].0.as_raw_fd(), events: libc::POLLIN, revents: 0 }));
        }
        // SAFETY: a vector of pollfds of the length passed (a negative fd is skipped).
        if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) } < 0 {
            continue;
        }
        if fds[2].revents != 0 {
            ending.read();
        }
        if let Some(r) = &relay {
            let ready: Vec<(usize, i16)> = open.iter().zip(&fds[3..]).map(|(&i, p)| (i, p.revents)).collect();
            for (i, revents) in ready {
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && !r.copy(i) {
                    open.retain(|&o| o != i);
                }
            }
        }
        let n = if idle { 1 } else { 2 };
        if fds[0].revents & libc::POLLIN != 0 {
            for sig in read_signals(sigfd) {
                if sig == libc::SIGCHLD {
                    reap(child, &mut ending.child_status);
                } else if own_session && !super::init::ignored(sig) {
                    // SAFETY: kill with a pid and a signal number.
                    unsafe { libc::kill(-child, sig) };
                }
            }
        }
        if n == 2 && fds[1].revents & libc::POLLIN != 0 {
            if let Some(note) = seccomp::receive(lfd) {
                handle(lfd, note, &judge, &mut files, &inflight);
            }
        } else if n == 2 && fds[1].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
            idle = true;
        }
        let Some(st) = ending.status() else { continue };
        // The child is gone: what it wrote to the terminal's pipes is copied
        // out (processes it left behind lose the terminal, as at a hang-up).
        if let Some(r) = &relay {
            for &i in &open {
                let mut p = libc::pollfd { fd: r.copies[i].0.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                // SAFETY: one pollfd, no wait.
                while unsafe { libc::poll(&mut p, 1, 0) } == 1 && p.revents & libc::POLLIN != 0 && r.copy(i) {}
            }
        }
        // Processes it left behind may still use the filter (POLLHUP when
        // none does).
        if let Some(l) = &listener {
            if !hung_up(l.as_raw_fd()) {
                detach(l.as_raw_fd(), &judge, &mut files);
            }
            wait_inflight(&inflight);
        }
        if let Some(h) = files.hand.as_mut() {
            h.end();
        }
        // A child that started the init has left before the command ran
        // (the init waited for that): reaped here, its zombie is not left
        // in the caller's process group after the call.
        if ending.heard.first() == Some(&b'I') && !ending.child_is_init {
            // SAFETY: our own child, which has left or is leaving.
            unsafe { libc::waitpid(child, std::ptr::null_mut(), 0) };
        }
        settle();
        // The process leaves now, and its memory with it: freeing the
        // model and the judge first would be work for nothing.
        std::mem::forget(files);
        std::mem::forget(judge);
        return leave_as(st);
    }
}

fn hung_up(fd: RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd, no wait.
    unsafe { libc::poll(&mut p, 1, 0) };
    p.revents & libc::POLLHUP != 0
}

fn read_signals(sigfd: RawFd) -> Vec<i32> {
    let mut out = Vec::new();
    loop {
        // SAFETY: a zeroed siginfo buffer of the size read.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        let r = unsafe { libc::read(sigfd, (&mut info as *mut libc::signalfd_siginfo).cast(), size) };
        if r != size as isize {
            return out;
        }
        out.push(info.ssi_signo as i32);
    }
}

/// Reap every child that has ended (the command, and as subreaper the
/// orphans of its tree); note the command's status.
fn reap(child: i32, status: &mut Option<i32>) {
    loop {
        let mut st = 0;
        // SAFETY: waitpid on any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if pid == child {
            *status = Some(st);
        }
    }
}

/// Leave with the command's status: its exit code, or death by its signal
/// (a signal that would dump core: 128 + its number, as a shell reports).
fn leave_as(st: i32) -> u8 {
    if libc::WIFEXITED(st) {
        return libc::WEXITSTATUS(st) as u8;
    }
    let sig = libc::WTERMSIG(st);
    if !matches!(sig, libc::SIGQUIT | libc::SIGILL | libc::SIGABRT | libc::SIGFPE | libc::SIGSEGV | libc::SIGBUS | libc::SIGSYS | libc::SIGTRAP) {
        // SAFETY: default action, unblocked, then raised at ourselves.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
    (128 + sig) as u8
}

/// Wait a little for answers still being worked on (a blocking connect),
/// so a caller is not left waiting on a supervisor that went away.
fn wait_inflight(inflight: &AtomicUsize) {
    for _ in 0..300 {
        if inflight.load(Ordering::SeqCst) == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Leave a copy of the supervisor for the processes the command left
/// running: in a session of its own, off the host's pipes, serving until
/// the last process under the filter has exited.
fn detach(listener: RawFd, judge: &Judge, files: &mut Files) {
    let me = std::process::id() as i32;
    let tree: Vec<Proc> = super::procs::children_of(me).into_iter().filter_map(Proc::of).collect();
    // Said on the call's standard error, which the plugin records in the
    // ledger: what of the call keeps running, fenced and supervised.
    let hand = files.hand.as_ref().map(|h| h.pid);
    // The call's init (init.rs) is ours: what it reaps is what was left.
    let left: Vec<String> = tree
        .iter()
        .flat_map(|p| if super::init::is_init(p.pid) { super::procs::children_of(p.pid) } else { vec![p.pid] })
        .filter(|&p| Some(p) != hand)
        .map(|p| p.to_string())
        .collect();
    if !left.is_empty() {
        eprintln!("{LEFT_RUNNING}{} process{} of this call (pids {}), still fenced and supervised", left.len(), if left.len() == 1 { "" } else { "es" }, left.join(" "));
    }
    // SAFETY: the copy only makes system calls and serves; it never returns.
    let pid = unsafe { libc::fork() };
    if pid != 0 {
        // The copy keeps the hand; this process leaves it be.
        files.hand = None;
        return;
    }
    // SAFETY: plain calls in the detached copy.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..=2 {
            libc::dup2(null, fd);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let judge = Judge { tree: Some(tree), ..judge.clone() };
    let inflight = Arc::new(AtomicUsize::new(0));
    loop {
        let mut p = libc::pollfd { fd: listener, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd.
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            continue;
        }
        if p.revents & libc::POLLIN != 0 {
            if let Some(note) = seccomp::receive(listener) {
                handle(listener, note, &judge, files, &inflight);
            }
        } else if p.revents & libc::POLLHUP != 0 {
            if let Some(h) = files.hand.as_mut() {
                h.end();
            }
            // SAFETY: the copy ends here.
            unsafe { libc::_exit(0) }
        }
    }
}

/// One notification: read the address once, judge it, and either refuse
/// or do the call on the caller's socket with that address.
fn handle(listener: RawFd, n: Notif, judge: &Judge, files: &mut Files, inflight: &Arc<AtomicUsize>) {
    let a = n.data.args;
    let (addr_at, addr_len) = match n.data.nr as i64 {
        libc::SYS_connect => (a[1], a[2] as u32 as usize),
        libc::SYS_sendto => (a[4], a[5] as u32 as usize),
        libc::SYS_unlink | libc::SYS_unlinkat | libc::SYS_rmdir | libc::SYS_rename | libc::SYS_renameat | libc::SYS_renameat2 => {
            return removal(listener, &n, files);
        }
        libc::SYS_sendmsg | libc::SYS_sendmmsg => return datagram(listener, &n, judge, inflight),
        libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat | libc::SYS_mkdir | libc::SYS_mkdirat | libc::SYS_mknod | libc::SYS_mknodat | libc::SYS_symlink | libc::SYS_symlinkat | libc::SYS_bind => {
            let mut maker = super::creates::Maker { hand: &mut files.hand, own: &mut files.own, model: &files.model, refusals: &mut files.refusals };
            return super::creates::create(listener, &n, &mut maker);
        }
        _ => return signal(listener, &n, judge, files.hand.as_ref().map(|h| h.ns_pid), files.own_pids),
    };
    if addr_len > std::mem::size_of::<libc::sockaddr_storage>() {
        return seccomp::answer(listener, n.id, Err(libc::EINVAL));
    }
    let Some(bytes) = read_memory(n.pid, addr_at, addr_len) else {
        return seccomp::answer(listener, n.id, Err(libc::EFAULT));
    };
    let (verdict, opened) = judge_address(n.pid, &bytes, judge);
    if !seccomp::still_waiting(listener, n.id) {
        return;
    }
    if let Err(r) = verdict {
        if !r.why.is_empty() {
            eprintln!("{REFUSED}{} ({})", r.why, program_of(n.pid));
        }
        return seccomp::answer(listener, n.id, Err(r.errno));
    }
    let target = match take_socket(n.pid, a[0] as i32) {
        Ok(fd) => fd,
        Err(e) => return seccomp::answer(listener, n.id, Err(e)),
    };
    // The address used is the one read: a path goes as the file opened
    // while judging it (/proc/self/fd/N), so no second lookup lands elsewhere.
    let addr = match &opened {
        Some(o) => unix_address(&format!("/proc/self/fd/{}", o.fd.as_raw_fd())),
        None => bytes,
    };
    let is_sendto = n.data.nr as i64 == libc::SYS_sendto;
    let data = if is_sendto {
        match read_memory(n.pid, a[1], (a[2] as usize).min(MAX_SEND)) {
            Some(d) => Some(d),
            None => return seccomp::answer(listener, n.id, Err(libc::EFAULT)),
        }
    } else {
        None
    };
    let flags = a[3] as i32;
    let blocking = !nonblocking(&target) && !(is_sendto && flags & libc::MSG_DONTWAIT != 0);
    let (pid, id) = (n.pid, n.id);
    let work = move || {
        let result = match &data {
            Some(d) => send_to(&target, d, flags, &addr, pid),
            None => connect(&target, &addr),
        };
        drop(opened);
        seccomp::answer(listener, id, result);
    };
    if blocking {
        inflight.fetch_add(1, Ordering::SeqCst);
        let counter = inflight.clone();
        std::thread::spawn(move || {
            work();
            counter.fetch_sub(1, Ordering::SeqCst);
        });
    } else {
        work();
    }
}

/// sendmsg or sendmmsg: on a datagram socket every message is read once,
/// its address judged as a connect, and sent by the supervisor on the
/// caller's socket (datagrams.rs); on any other socket the call runs.
fn datagram(listener: RawFd, n: &Notif, judge: &Judge, inflight: &Arc<AtomicUsize>) {
    use super::datagrams::{datagram_socket, mmsg_at, read_message, send, write_len};
    let a = n.data.args;
    let sock = match datagram_socket(n.pid, a[0] as i32) {
        Ok(Some(s)) => s,
        Ok(None) => return seccomp::let_run(listener, n.id),
        Err(e) => return seccomp::answer(listener, n.id, Err(e)),
    };
    let many = n.data.nr as i64 == libc::SYS_sendmmsg;
    let (count, flags) = if many { ((a[2] as u32 as usize).min(1024), a[3] as i32) } else { (1, a[2] as i32) };
    let mut msgs = Vec::new();
    for i in 0..count {
        let at = if many { mmsg_at(a[1], i).0 } else { a[1] };
        match read_message(n.pid, at, judge) {
            Ok(m) => msgs.push(m),
            Err(r) => {
                if !r.why.is_empty() {
                    eprintln!("{REFUSED}{} ({})", r.why, program_of(n.pid));
                }
                // sendmmsg sends what came before the first it cannot.
                if msgs.is_empty() {
                    return seccomp::answer(listener, n.id, Err(r.errno));
                }
                break;
            }
        }
    }
    if !seccomp::still_waiting(listener, n.id) {
        return;
    }
    let blocking = !nonblocking(&sock) && flags & libc::MSG_DONTWAIT == 0;
    let (pid, id, vector) = (n.pid, n.id, a[1]);
    let work = move || {
        let mut sent = 0i64;
        let mut last = Ok(0);
        for (i, m) in msgs.iter().enumerate() {
            last = send(&sock, m, flags, pid);
            match last {
                Ok(bytes) => {
                    if many {
                        write_len(pid, mmsg_at(vector, i).1, bytes as u32);
                    }
                    sent += 1;
                }
                Err(_) => break,
            }
        }
        let result = if many && sent > 0 { Ok(sent) } else { last };
        seccomp::answer(listener, id, result);
    };
    if blocking {
        inflight.fetch_add(1, Ordering::SeqCst);
        let counter = inflight.clone();
        std::thread::spawn(move || {
            work();
            counter.fetch_sub(1, Ordering::SeqCst);
        });
    } else {
        work();
    }
}

/// An unlink, rmdir or rename, judged (removals.rs). A quick way out
/// first: where Landlock itself grants removal (a temp folder, tool state),
/// by the path's text, the call runs as made (the kernel judges it anyway).
fn removal(listener: RawFd, n: &Notif, files: &mut Files) {
    use super::removals::{self, Act, Scope};
    use super::target::{folder_text, resolve, textual, textual_in};
    let a = n.data.args;
    let cwd = libc::AT_FDCWD;
    let (from, to, flags, op, rmdir) = match n.data.nr as i64 {
        libc::SYS_unlink => ((cwd, a[0]), None, 0, "unlink", false),
        libc::SYS_rmdir => ((cwd, a[0]), None, 0, "rmdir", true),
        libc::SYS_unlinkat => {
            let rmdir = a[2] as i32 & libc::AT_REMOVEDIR != 0;
            ((a[0] as i32, a[1]), None, 0, if rmdir { "rmdir" } else { "unlink" }, rmdir)
        }
        libc::SYS_rename => ((cwd, a[0]), Some((cwd, a[1])), 0, "rename", false),
        libc::SYS_renameat => ((a[0] as i32, a[1]), Some((a[2] as i32, a[3])), 0, "rename", false),
        _ => ((a[0] as i32, a[1]), Some((a[2] as i32, a[3])), a[4] as u32, "rename", false),
    };
    let Some(from_path) = read_string(n.pid, from.1) else { return seccomp::let_run(listener, n.id) };
    let to_path = match to {
        Some((_, at)) => match read_string(n.pid, at) {
            Some(p) => Some(p),
            None => return seccomp::let_run(listener, n.id),
        },
        None => None,
    };
    // (Landlock judges a removal on the folder that holds the entry.)
    // The caller's folder, read once for the quick look and the resolve.
    let folder = (!from_path.starts_with('/')).then(|| folder_text(n.pid, from.0)).flatten();
    let quick_in = |t: Option<String>| t.is_some_and(|t| files.model.quick.iter().any(|q| crate::paths::within(crate::paths::parent(&t), q)));
    let dest = to.map(|(d, _)| d).zip(to_path.as_deref());
    if quick_in(textual_in(&from_path, || folder.clone())) && dest.is_none_or(|(d, p)| quick_in(textual(n.pid, d, p))) {
        return seccomp::let_run(listener, n.id);
    }
    let mut scope = Scope { removals: &files.removals, own: &mut files.own, rights: &files.model.rights };
    let Some(source) = resolve(n.pid, from.0, &from_path, folder.as_deref()) else { return seccomp::let_run(listener, n.id) };
    let judged = match dest {
        Some((dirfd, p)) => match resolve(n.pid, dirfd, p, None) {
            Some(target) => removals::rename(&mut scope, &source, &target, flags),
            None => return seccomp::let_run(listener, n.id),
        },
        None => removals::unlink(&mut scope, &source, rmdir),
    };
    if !seccomp::still_waiting(listener, n.id) {
        return;
    }
    if let Some((capability, path)) = &judged.refused {
        files.refusals.report(capability, path, op, n.pid);
    }
    match judged.act {
        Act::Done(result) => seccomp::answer(listener, n.id, result),
        Act::Continue => seccomp::let_run(listener, n.id),
    }
}

/// A signal: to a process of this call (or a group, or everyone: the
/// kernel sends only to those it may) it runs, and Landlock's scope judges
/// it again; to one process outside the call it is refused here, EPERM as
/// Landlock's own refusal, with a line that names it.
fn signal(listener: RawFd, n: &Notif, judge: &Judge, hand: Option<i32>, own_pids: bool) {
    let a = n.data.args;
    let (target, sig) = match n.data.nr as i64 {
        libc::SYS_kill | libc::SYS_rt_sigqueueinfo => (a[0] as i32, a[1] as i32),
        libc::SYS_tkill => (super::procs::thread_group_of(a[0] as i32).unwrap_or(a[0] as i32), a[1] as i32),
        libc::SYS_tgkill | libc::SYS_rt_tgsigqueueinfo => (a[0] as i32, a[2] as i32),
        libc::SYS_pidfd_send_signal => (pidfd_target(n.pid, a[0] as i32).unwrap_or(0), a[1] as i32),
        _ => return seccomp::answer(listener, n.id, Err(libc::ENOSYS)),
    };
    // The hand is the supervisor's, not the call's (a stopped hand makes
    // nothing more for the call, which then knows nothing as its own).
    // In a process namespace of its own a pid names only the call's own
    // processes (and the supervisor reads none of them by it).
    let to_hand = hand.is_some_and(|h| h == target || (!own_pids && super::procs::thread_group_of(target) == Some(h)));
    if !to_hand && (target <= 0 || own_pids || judge.in_call(target)) {
        return seccomp::let_run(listener, n.id);
    }
    if !seccomp::still_waiting(listener, n.id) {
        return;
    }
    if sig != 0 {
        eprintln!("{REFUSED}signal {sig} to pid {target} ({}): a process outside this call ({})", comm_of(target), program_of(n.pid));
    }
    seccomp::answer(listener, n.id, Err(libc::EPERM));
}

/// The process a caller's pidfd names (its fdinfo's `Pid:` line).
fn pidfd_target(tid: u32, fd: i32) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
    info.lines().find_map(|l| l.strip_prefix("Pid:")).and_then(|v| v.trim().parse().ok())
}

fn comm_of(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|c| c.trim().to_string()).unwrap_or_else(|_| "gone".into())
}

/// Datagrams and a Fast Open's first bytes fit well under this.
const MAX_SEND: usize = 16 << 20;

fn thread_group(tid: u32) -> Option<i32> {
    super::procs::thread_group_of(tid as i32)
}

fn nonblocking(fd: &OwnedFd) -> bool {
    // SAFETY: F_GETFL on a descriptor we own.
    let fl = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK != 0
}

fn connect(fd: &OwnedFd, addr: &[u8]) -> Result<i64, i32> {
    // SAFETY: an address buffer of the length passed.
    let r = unsafe { libc::connect(fd.as_raw_fd(), addr.as_ptr().cast(), addr.len() as libc::socklen_t) };
    if r == 0 {
        Ok(0)
    } else {
        Err(seccomp::errno())
    }
}

/// sendto on the caller's behalf. A broken pipe signals the caller, as its
/// own sendto would have (ours never takes SIGPIPE).
fn send_to(fd: &OwnedFd, data: &[u8], flags: i32, addr: &[u8], tid: u32) -> Result<i64, i32> {
    // SAFETY: buffers of the lengths passed.
    let r = unsafe {
        libc::sendto(fd.as_raw_fd(), data.as_ptr().cast(), data.len(), flags | libc::MSG_NOSIGNAL, addr.as_ptr().cast(), addr.len() as libc::socklen_t)
    };
    if r >= 0 {
        return Ok(r as i64);
    }
    let e = seccomp::errno();
    if e == libc::EPIPE && flags & libc::MSG_NOSIGNAL == 0 {
        if let Some(tgid) = thread_group(tid) {
            // SAFETY: tgkill with ids and a signal number.
            unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid as i32, libc::SIGPIPE) };
        }
    }
    Err(e)
}

/// The program a process runs, for a refusal's line.
fn program_of(tid: u32) -> String {
    let comm = std::fs::read_to_string(format!("/proc/{tid}/comm")).unwrap_or_default();
    format!("{}, pid {tid}", comm.trim())
}

/// The supervisor's answers to the listener's hand-over: go on to the exec,
/// or end (followed by the signal the call was ended with).
const GO: u8 = 1;
const END: u8 = 0;

/// In the child: say the listener's number (and whether the call has its
/// own process namespace) and wait until the supervisor has taken its copy.
/// The supervisor reads who wrote it from the message's credentials
/// (SO_PASSCRED).
fn hand_over_listener(channel: RawFd, fd: RawFd, own_pids: bool) -> Result<(), String> {
    let mut n = fd.to_ne_bytes().to_vec();
    n.extend(i32::from(own_pids).to_ne_bytes());
    // SAFETY: buffers of the lengths passed.
    unsafe {
        if libc::write(channel, n.as_ptr().cast(), n.len()) != n.len() as isize {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let mut ack = [0u8; 2];
        match libc::read(channel, ack.as_mut_ptr().cast(), 2) {
            1 if ack[0] == GO => {}
            // The call was ended before this process could get the signal:
            // it ends here, before its exec, as 128 + the signal (as the
            // init ends a call it noted the signal for). Not by raising it:
            // its own filter would hand that `kill` to a supervisor that no
            // longer listens.
            2 if ack[0] == END => libc::_exit(128 + i32::from(ack[1])),
            _ => return Err("the supervisor did not take it".into()),
        }
    }
    Ok(())
}

/// The listener of the child `pid`, taken by the number it says, or None
/// when it failed before (its exit status says why).
fn take_listener(channel: RawFd) -> Option<Listener> {
    let mut n = [0u8; 8];
    let (got, sender) = super::caller::receive_with_sender(channel, &mut n)?;
    if got != n.len() {
        return None;
    }
    // The host ends a call by signalling its process group. One that came
    // before the command was forked reached the supervisor (it is held
    // here, unread) but not the command, and a call's init drops it: the
    // command, held before its exec until this answer, ends with it now.
    if let Some(sig) = ending_pending() {
        // SAFETY: a two-byte buffer: the end, and the signal to end with.
        unsafe { libc::write(channel, [END, sig as u8].as_ptr().cast(), 2) };
        return None;
    }
    let word = |i: usize| i32::from_ne_bytes(n[i..i + 4].try_into().unwrap());
    let fd = super::caller::take_fd(sender as u32, word(0)).ok()?;
    // SAFETY: a one-byte buffer.
    unsafe { libc::write(channel, [GO].as_ptr().cast(), 1) };
    Some(Listener { fd, own_pids: word(4) != 0 })
}

/// The filter's listener, as the command's process handed it over.
struct Listener {
    fd: OwnedFd,
    /// The call runs in a process namespace of its own.
    own_pids: bool,
}

#[cfg(test)]
mod tests {
    use super::filter_lines;
    use crate::runner::seccomp::tests::{most_steps_for_an_unnamed_call, program_says_what_the_lines_say};

    #[test]
    fn the_runners_filter_decides_every_call_number_as_its_lines_say() {
        for files in [true, false] {
            program_says_what_the_lines_say(&filter_lines(files));
        }
    }

    #[test]
    fn a_call_the_filter_does_not_name_is_decided_in_a_few_steps() {
        // The kernel runs the filter once per number when it is installed
        // (the action cache): a search, not one comparison per line.
        let lines = filter_lines(true);
        let most = most_steps_for_an_unnamed_call(&lines);
        assert!(lines.len() > 30 && most <= 16, "{most} steps for {} lines", lines.len());
    }
}
