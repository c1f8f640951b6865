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

use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::seccomp::{self, Action, Line, Notif, When};
use super::sockets::{decode, Judge, Opened, Peer, Proc, Refusal};

/// How a refusal starts on the call's standard error: the plugin reads
/// these lines back into the ledger (a socket, not a path, was refused).
pub const REFUSED: &str = "dsh-allow: refused ";

/// The filter: what goes to the supervisor, and what is refused outright
/// from registers alone.
pub fn filter_lines(removals: bool) -> Vec<Line> {
    let eperm = Action::Errno(libc::EPERM as u16);
    let mut lines = vec![
        Line { nr: libc::SYS_connect, when: When::Always, action: Action::Notify },
        Line { nr: libc::SYS_sendto, when: When::NotNull { arg: 4 }, action: Action::Notify },
        // TCP Fast Open connects inside sendmsg, whose address lies in a
        // header the filter cannot read: refused (a plain connect works).
        Line { nr: libc::SYS_sendmsg, when: When::AnyBit { arg: 2, mask: libc::MSG_FASTOPEN as u32 }, action: Action::Errno(libc::EOPNOTSUPP as u16) },
        Line { nr: libc::SYS_sendmmsg, when: When::AnyBit { arg: 3, mask: libc::MSG_FASTOPEN as u32 }, action: Action::Errno(libc::EOPNOTSUPP as u16) },
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
    // Removals and renames, while the call holds a delete grant on an entry
    // (removals.rs): the supervisor does exactly that one.
    if removals {
        for nr in [libc::SYS_unlink, libc::SYS_unlinkat, libc::SYS_rmdir, libc::SYS_rename, libc::SYS_renameat, libc::SYS_renameat2, libc::SYS_mkdir, libc::SYS_mkdirat] {
            lines.push(Line { nr, when: When::Always, action: Action::Notify });
        }
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

/// What the child does before exec, in order; each may fail the call
/// (exit code, message), and then nothing of the command ran.
pub struct Child<'a> {
    pub argv: &'a [String],
    /// Leave the user's terminal (a session of its own).
    pub own_session: bool,
    /// Make the mounts and apply Landlock; the lines `--report-fence` prints.
    pub fence: Box<dyn FnOnce() -> Result<Vec<String>, (u8, String)> + 'a>,
    /// Whether a socket path is named by the call's grants (its variable is kept).
    pub granted: Box<dyn Fn(&str) -> bool + 'a>,
    /// Whether to report the fence on standard error once it is up.
    pub report: bool,
    /// Whether removals and renames go to the supervisor.
    pub removals: bool,
    /// Run by the supervisor once the command has ended, before it leaves
    /// (launch_files.rs: what the call made where the host reads at start).
    pub settle: Box<dyn FnOnce() + 'a>,
}

/// Run `child` under supervision; returns the exit code to leave with
/// (when the child died of a signal this process dies of it too).
pub fn run(mut child: Child, judge: Judge) -> u8 {
    let settle = std::mem::replace(&mut child.settle, Box::new(|| ()));
    let mut pair = [0; 2];
    // SAFETY: plain calls before the fork; arrays of the sizes passed.
    unsafe {
        if libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) != 0 {
            return super::fail(super::EXIT_FAILED, &format!("cannot make the supervisor's channel: {}; nothing was run", std::io::Error::last_os_error()));
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    let (old_mask, sigfd) = match watch_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run")),
    };
    let me = std::process::id() as i32;
    let own_session = child.own_session;
    // SAFETY: this process is single-threaded here; the child only makes
    // system calls and execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return super::fail(super::EXIT_FAILED, &format!("cannot fork: {}; nothing was run", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: restoring the mask we saved; closing our copies.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
            libc::close(pair[0]);
            libc::close(sigfd);
        }
        let code = become_command(child, pair[1], me);
        // SAFETY: leave without running anything of the parent's.
        unsafe { libc::_exit(code as i32) }
    }
    // SAFETY: our copy of the child's end.
    unsafe { libc::close(pair[1]) };
    // SAFETY: our end of the channel, owned here.
    let channel = unsafe { OwnedFd::from_raw_fd(pair[0]) };
    let listener = receive_fd(channel.as_raw_fd());
    drop(channel);
    supervise(pid, own_session, listener, sigfd, judge, settle)
}

/// The child: fence, filter, capabilities, descriptors, exec.
fn become_command(child: Child, channel: RawFd, supervisor: i32) -> u8 {
    // SAFETY: prctl with integers; the check after it closes the race with
    // a supervisor that died before the call.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != supervisor {
            return super::EXIT_FAILED;
        }
    }
    if child.own_session {
        if let Err(e) = super::isolate::leave_terminal() {
            return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
        }
    }
    let cleared = super::isolate::scrub_environment(&*child.granted);
    let lines = match (child.fence)() {
        Ok(lines) => lines,
        Err((code, e)) => return super::fail(code, &e),
    };
    let listener = match seccomp::install(&seccomp::program(&filter_lines(child.removals))) {
        Ok(l) => l,
        Err(libc::EBUSY) => {
            return super::fail(super::EXIT_FAILED, "cannot supervise sockets: this process already runs under another seccomp supervisor (EBUSY); nothing was run")
        }
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("cannot install the socket filter: errno {e}; nothing was run")),
    };
    if let Err(e) = send_fd(channel, listener.as_raw_fd()) {
        return super::fail(super::EXIT_FAILED, &format!("cannot hand the socket filter to the supervisor: {e}; nothing was run"));
    }
    drop(listener);
    // SAFETY: our end of the channel.
    unsafe { libc::close(channel) };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        if let Err(e) = super::isolate::drop_capabilities() {
            return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
        }
    }
    if let Err(e) = super::isolate::close_inherited() {
        return super::fail(super::EXIT_FAILED, &format!("{e}; nothing was run"));
    }
    if child.report {
        for l in lines {
            eprintln!("{l}");
        }
        let cleared = if cleared.is_empty() { "none".to_string() } else { cleared.join(", ") };
        eprintln!("dsh-allow sockets: supervised (environment cleared: {cleared})");
    }
    super::exec(child.argv)
}

/// Block the signals the supervisor reads from a signalfd (the child
/// unblocks them again); returns the old mask and the signalfd.
fn watch_signals() -> Result<(libc::sigset_t, RawFd), String> {
    // SAFETY: sigset manipulation on zeroed sets we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
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
fn supervise(child: i32, own_session: bool, listener: Option<OwnedFd>, sigfd: RawFd, judge: Judge, settle: Box<dyn FnOnce() + '_>) -> u8 {
    let inflight = Arc::new(AtomicUsize::new(0));
    let mut status: Option<i32> = None;
    loop {
        let lfd = listener.as_ref().map_or(-1, |l| l.as_raw_fd());
        let mut fds = [libc::pollfd { fd: sigfd, events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: lfd, events: libc::POLLIN, revents: 0 }];
        let n = if lfd < 0 { 1 } else { 2 };
        // SAFETY: an array of `n` pollfds.
        if unsafe { libc::poll(fds.as_mut_ptr(), n as libc::nfds_t, -1) } < 0 {
            continue;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            for sig in read_signals(sigfd) {
                if sig == libc::SIGCHLD {
                    reap(child, &mut status);
                } else if own_session {
                    // SAFETY: kill with a pid and a signal number.
                    unsafe { libc::kill(-child, sig) };
                }
            }
        }
        if n == 2 && fds[1].revents & libc::POLLIN != 0 {
            if let Some(note) = seccomp::receive(lfd) {
                handle(lfd, note, &judge, &inflight);
            }
        }
        let Some(st) = status else { continue };
        // The child is gone. Processes it left behind may still use the
        // filter (POLLHUP when none does).
        if let Some(l) = &listener {
            if !hung_up(l.as_raw_fd()) {
                detach(l.as_raw_fd(), &judge);
            }
            wait_inflight(&inflight);
        }
        settle();
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
fn detach(listener: RawFd, judge: &Judge) {
    let me = std::process::id() as i32;
    let tree: Vec<Proc> = super::sockets::children_of(me).into_iter().filter_map(Proc::of).collect();
    // SAFETY: the copy only makes system calls and serves; it never returns.
    let pid = unsafe { libc::fork() };
    if pid != 0 {
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
                handle(listener, note, &judge, &inflight);
            }
        } else if p.revents & libc::POLLHUP != 0 {
            // SAFETY: the copy ends here.
            unsafe { libc::_exit(0) }
        }
    }
}

/// One notification: read the address once, judge it, and either refuse
/// or do the call on the caller's socket with that address.
fn handle(listener: RawFd, n: Notif, judge: &Judge, inflight: &Arc<AtomicUsize>) {
    let a = n.data.args;
    let (addr_at, addr_len) = match n.data.nr as i64 {
        libc::SYS_connect => (a[1], a[2] as u32 as usize),
        libc::SYS_sendto => (a[4], a[5] as u32 as usize),
        libc::SYS_unlink | libc::SYS_unlinkat | libc::SYS_rmdir | libc::SYS_rename | libc::SYS_renameat | libc::SYS_renameat2 | libc::SYS_mkdir | libc::SYS_mkdirat => {
            return removal(listener, &n, judge);
        }
        _ => return signal(listener, &n, judge),
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

/// An unlink, rmdir or rename: a granted entry's, or one inside a folder
/// made for the call, is done here; any other runs as made (removals.rs).
fn removal(listener: RawFd, n: &Notif, judge: &Judge) {
    use super::removals::{self, Act};
    let a = n.data.args;
    let path = |at: u64| read_string(n.pid, at);
    let target = |dirfd: i32, at: u64| path(at).and_then(|p| removals::resolve(n.pid, dirfd, &p));
    let cwd = libc::AT_FDCWD;
    let act = match n.data.nr as i64 {
        // A folder made for the call: the line's own mkdir of it succeeds; a
        // folder the line makes inside the workspace is made here, and its
        // contents are the call's (arrivals.rs).
        libc::SYS_mkdir | libc::SYS_mkdirat => {
            let (t, mode) = if n.data.nr as i64 == libc::SYS_mkdir { (target(cwd, a[0]), a[1]) } else { (target(a[0] as i32, a[1]), a[2]) };
            match t {
                Some(t) if super::arrivals::mkdir_made(&judge.made, &t.real) => Act::Done(Ok(0)),
                Some(t) => match super::arrivals::mkdir_wanted(&judge.made, &t, mode as u32, n.pid) {
                    Some(result) => Act::Done(result),
                    None => Act::Continue,
                },
                None => Act::Continue,
            }
        }
        libc::SYS_unlink => removals::unlink(&judge.removals, &judge.made, target(cwd, a[0]), false),
        libc::SYS_rmdir => removals::unlink(&judge.removals, &judge.made, target(cwd, a[0]), true),
        libc::SYS_unlinkat => removals::unlink(&judge.removals, &judge.made, target(a[0] as i32, a[1]), a[2] as i32 & libc::AT_REMOVEDIR != 0),
        libc::SYS_rename => removals::rename(&judge.removals, &judge.made, target(cwd, a[0]), target(cwd, a[1]), 0),
        libc::SYS_renameat => removals::rename(&judge.removals, &judge.made, target(a[0] as i32, a[1]), target(a[2] as i32, a[3]), 0),
        _ => removals::rename(&judge.removals, &judge.made, target(a[0] as i32, a[1]), target(a[2] as i32, a[3]), a[4] as u32),
    };
    match act {
        Act::Done(result) if seccomp::still_waiting(listener, n.id) => seccomp::answer(listener, n.id, result),
        Act::Done(_) => {}
        Act::Continue => seccomp::let_run(listener, n.id),
    }
}

/// A NUL-terminated string of the caller's (a path: at most PATH_MAX).
fn read_string(pid: u32, at: u64) -> Option<String> {
    let mut out = Vec::new();
    let mut addr = at;
    while out.len() < 4096 {
        // Up to the end of the page, so an unmapped next page does not fail the read.
        let room = 4096 - (addr % 4096) as usize;
        let chunk = read_memory(pid, addr, room)?;
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return String::from_utf8(out).ok();
        }
        out.extend_from_slice(&chunk);
        addr += room as u64;
    }
    None
}

/// A signal: to a process of this call (or a group, or everyone: the
/// kernel sends only to those it may) it runs, and Landlock's scope judges
/// it again; to one process outside the call it is refused here, EPERM as
/// Landlock's own refusal, with a line that names it.
fn signal(listener: RawFd, n: &Notif, judge: &Judge) {
    let a = n.data.args;
    let (target, sig) = match n.data.nr as i64 {
        libc::SYS_kill | libc::SYS_rt_sigqueueinfo => (a[0] as i32, a[1] as i32),
        libc::SYS_tkill => (super::sockets::thread_group_of(a[0] as i32).unwrap_or(a[0] as i32), a[1] as i32),
        libc::SYS_tgkill | libc::SYS_rt_tgsigqueueinfo => (a[0] as i32, a[2] as i32),
        libc::SYS_pidfd_send_signal => (pidfd_target(n.pid, a[0] as i32).unwrap_or(0), a[1] as i32),
        _ => return seccomp::answer(listener, n.id, Err(libc::ENOSYS)),
    };
    if target <= 0 || judge.in_call(target) {
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

fn judge_address(pid: u32, bytes: &[u8], judge: &Judge) -> (Result<(), Refusal>, Option<Opened>) {
    match decode(bytes) {
        Some(Peer::Ip(ip, port)) => (judge.ip(ip, port), None),
        Some(Peer::UnixAbstract(name)) => (judge.unix_abstract(&name), None),
        Some(Peer::UnixPath(path)) => match open_for(pid, &path) {
            Ok(o) => (judge.unix_path(&o), Some(o)),
            Err(e) => (Err(Refusal { errno: e, why: String::new() }), None),
        },
        Some(Peer::Other(_)) | None => (Ok(()), None),
    }
}

/// Open a unix socket's path as the caller would reach it (relative to its
/// working directory, from its root), without reading it, following links
/// as connect does.
fn open_for(pid: u32, path: &[u8]) -> Result<Opened, i32> {
    let base = if path.first() == Some(&b'/') { format!("/proc/{pid}/root") } else { format!("/proc/{pid}/cwd/") };
    let mut full = base.into_bytes();
    full.extend_from_slice(path);
    let c = std::ffi::CString::new(full).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(seccomp::errno());
    }
    // SAFETY: a new descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Opened { fd, real })
}

fn unix_address(path: &str) -> Vec<u8> {
    let mut b = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    b.extend_from_slice(path.as_bytes());
    b.push(0);
    b
}

fn read_memory(pid: u32, at: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Some(buf);
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: len };
    let remote = libc::iovec { iov_base: at as *mut libc::c_void, iov_len: len };
    // SAFETY: one local buffer of `len` bytes; the remote range is the kernel's to check.
    let n = unsafe { libc::process_vm_readv(pid as i32, &local, 1, &remote, 1, 0) };
    (n == len as isize).then_some(buf)
}

/// The caller's socket, as a descriptor of ours (pidfd_getfd(2)).
fn take_socket(tid: u32, fd: i32) -> Result<OwnedFd, i32> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    // SAFETY: pidfd_open with a pid and flags.
    let mut pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid as i32, PIDFD_THREAD) };
    if pidfd < 0 {
        // Before Linux 6.9 a pidfd names a process: the thread's group.
        let tgid = thread_group(tid).ok_or(libc::ESRCH)?;
        // SAFETY: as above.
        pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) };
    }
    if pidfd < 0 {
        return Err(seccomp::errno());
    }
    // SAFETY: a new descriptor.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    // SAFETY: pidfd_getfd with descriptors and flags.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(seccomp::errno());
    }
    // SAFETY: a new descriptor (close-on-exec, the kernel's default here).
    Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
}

fn thread_group(tid: u32) -> Option<i32> {
    super::sockets::thread_group_of(tid as i32)
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

fn send_fd(channel: RawFd, fd: RawFd) -> Result<(), String> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: CMSG_SPACE of one descriptor.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a msghdr over buffers we own, built with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
        if libc::sendmsg(channel, &msg, 0) < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

/// The listener the child sends, or None when it failed before sending
/// (its exit status says why).
fn receive_fd(channel: RawFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut bufs = [IoSliceMut::new(&mut byte)];
    // SAFETY: CMSG_SPACE of one descriptor.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a msghdr over buffers we own, read with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = bufs.as_mut_ptr().cast();
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space;
        if libc::recvmsg(channel, &mut msg, libc::MSG_CMSG_CLOEXEC) <= 0 {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const RawFd);
        Some(OwnedFd::from_raw_fd(fd))
    }
}
