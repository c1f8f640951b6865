//! The fenced helper that makes the call's new entries (Linux).
//!
//! To know exactly what a call created, the runner must make it: a create
//! it only watched could have found the name already taken, or lost it to
//! another process a moment later. But the supervisor stands outside the
//! fence (it must see the host's sockets), and making files from there
//! would step past Landlock and the read-only mounts. So the runner's child,
//! once its fence is up and before the command starts, leaves behind a
//! helper — the hand — under the very same Landlock domain, mount namespace,
//! root and capabilities as the command. The supervisor sends it each
//! creating call the command makes (the path it read once from the
//! command's memory, the command's own folder object, its umask and file
//! ids); the hand makes only what does not exist yet (`O_EXCL`), under the
//! command's fence, and passes the new entry back, and the supervisor keeps
//! its identity ([`super::own`]) and hands the command its descriptor.
//!
//! The hand trusts nothing but the supervisor's channel: it is not
//! dumpable (no process of the call can trace it or read its memory), in a
//! session of its own (group signals miss it), ignores every signal it may,
//! holds no descriptor of the call's, and exits when the channel closes.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What the hand is asked to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    /// open/openat/openat2/creat with O_CREAT or O_TMPFILE.
    Open = 1,
    Mkdir = 2,
    Mknod = 3,
    Symlink = 4,
    /// bind of a unix socket to a path (the socket is passed along).
    Bind = 5,
}

/// One request: fixed fields, then the path and the extra bytes (a link's
/// target, a socket address).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Request {
    pub op: u32,
    pub flags: u32,
    pub mode: u32,
    pub umask: u32,
    pub dev: u64,
    pub resolve: u64,
    pub fsuid: u32,
    pub fsgid: u32,
    pub path_len: u32,
    pub extra_len: u32,
    /// Descriptors passed: bit 0 the caller's folder, bit 1 its socket.
    pub fds: u32,
    pub _pad: u32,
}

/// The answer: the call's result (a negative errno on failure), whether the
/// name already existed (an O_CREAT open without O_EXCL then runs as the
/// caller made it), and with a made entry its descriptor.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Answer {
    result: i64,
    exists: u32,
    _pad: u32,
}

/// What came back: made (the entry's descriptor: the opened file for an
/// open, an O_PATH one otherwise), already there, or failed.
pub enum Made {
    Entry(OwnedFd),
    /// Made, but gone or swapped before it could be known: the caller's
    /// call succeeded, and the entry is not known as its own.
    Unknown,
    Exists,
    Failed(i32),
}

const REQUEST: usize = std::mem::size_of::<Request>();
/// The hand's word, after an answer that carried a descriptor, that its
/// own copy is closed.
const CLOSED: u8 = 0xc1;
const MAX_MESSAGE: usize = REQUEST + 2 * 4096 + 256;
const __O_TMPFILE: i32 = 0o20000000;

/// In the runner's child, fence up, before the command: start the hand on
/// `channel` (reparented to the supervisor, the tree's subreaper, so the
/// command never sees it as a child of its own), and close this process's
/// copy. (In the call's own process namespace its init is the hand.)
pub fn spawn(channel: RawFd) -> Result<(), String> {
    // SAFETY: fork in the single-threaded child; the middle process only forks and exits.
    let first = unsafe { libc::fork() };
    if first < 0 {
        return Err(format!("cannot start the runner's helper: {}", std::io::Error::last_os_error()));
    }
    if first == 0 {
        // SAFETY: as above.
        if unsafe { libc::fork() } == 0 {
            super::affinity::unpin();
            serve(channel);
        }
        // SAFETY: leave without running anything of the parent's.
        unsafe { libc::_exit(0) }
    }
    // SAFETY: closing our copy of the channel; waiting for the middle process.
    unsafe {
        libc::close(channel);
        libc::waitpid(first, std::ptr::null_mut(), 0);
    }
    Ok(())
}

/// The hand's life: hide, say who it is, then make what it is asked until
/// the channel closes.
fn serve(channel: RawFd) -> ! {
    super::arena::start_up_done();
    // SAFETY: plain calls on this new single-threaded process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_NAME, c"dsh-allow-hand".as_ptr() as libc::c_ulong, 0, 0, 0);
        libc::setsid();
        for sig in 1..=64 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP && sig != libc::SIGCHLD {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
        // Nothing of the call's: not its standard streams (the host waits
        // for their end), not what it inherited.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..=2 {
            if null >= 0 {
                libc::dup2(null, fd);
            } else {
                libc::close(fd);
            }
        }
        if libc::dup2(channel, 3) < 0 {
            libc::_exit(1);
        }
        libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32);
    }
    let mut hand = Serving::greet(3).unwrap_or_else(|| unsafe { libc::_exit(1) });
    loop {
        if !hand.answer_one() {
            // SAFETY: the channel is closed: the call is over.
            unsafe { libc::_exit(0) }
        }
    }
}

/// The serving side of the hand's channel (the hand process, or the call's
/// init, which is the hand where the call has a process namespace).
pub struct Serving {
    chan: RawFd,
    uid: u32,
    gid: u32,
    buf: Vec<u8>,
}

impl Serving {
    /// Say who serves (its pid, as it numbers itself) on `chan`.
    pub fn greet(chan: RawFd) -> Option<Serving> {
        let pid = std::process::id().to_ne_bytes();
        // SAFETY: a buffer of the length passed.
        if unsafe { libc::send(chan, pid.as_ptr().cast(), pid.len(), 0) } < 0 {
            return None;
        }
        // SAFETY: setfsuid(-1) reads the current ids without changing them.
        let (uid, gid) = unsafe { (libc::setfsuid(u32::MAX) as u32, libc::setfsgid(u32::MAX) as u32) };
        Some(Serving { chan, uid, gid, buf: Vec::new() })
    }

    pub fn fd(&self) -> RawFd {
        self.chan
    }

    /// Answer one request; false when the channel is closed (the call and
    /// its supervisor are gone) or broken.
    pub fn answer_one(&mut self) -> bool {
        self.buf.clear();
        let Some(fds) = super::passing::receive_into(self.chan, &mut self.buf, MAX_MESSAGE, 2) else { return false };
        let n = self.buf.len();
        let answer = if n < REQUEST { (Answer { result: -(libc::EINVAL as i64), ..Default::default() }, None) } else { make(&self.buf[..n], fds, self.uid, self.gid) };
        let bytes = as_bytes(&answer.0);
        let fd = answer.1.as_ref().map_or(-1, |f| f.as_raw_fd());
        if send_with_fd(self.chan, bytes, fd).is_err() {
            return false;
        }
        // The entry is the caller's alone once this copy is closed: kept
        // open here while the call goes on, a file made for writing would
        // stay busy (an exec of it fails with ETXTBSY). Closed, then said.
        let sent_fd = answer.1.is_some();
        drop(answer);
        !sent_fd || send_with_fd(self.chan, &[CLOSED], -1).is_ok()
    }
}

/// Do one request in the caller's stead.
fn make(msg: &[u8], fds: Vec<OwnedFd>, my_uid: u32, my_gid: u32) -> (Answer, Option<OwnedFd>) {
    // SAFETY: `msg` holds at least a Request; read unaligned.
    let req: Request = unsafe { std::ptr::read_unaligned(msg.as_ptr().cast()) };
    let body = &msg[REQUEST..];
    let (path_len, extra_len) = (req.path_len as usize, req.extra_len as usize);
    if body.len() < path_len + extra_len {
        return (fail(libc::EINVAL), None);
    }
    let Ok(path) = std::ffi::CString::new(&body[..path_len]) else { return (fail(libc::EINVAL), None) };
    let extra = &body[path_len..path_len + extra_len];
    let mut fds = fds.into_iter();
    let base = if req.fds & 1 != 0 { fds.next() } else { None };
    let sock = if req.fds & 2 != 0 { fds.next() } else { None };
    let dirfd = base.as_ref().map_or(libc::AT_FDCWD, |b| b.as_raw_fd());
    // The caller's umask and file ids: what it makes is made as it would.
    // SAFETY: plain calls on this single-threaded process.
    unsafe {
        libc::umask(req.umask as libc::mode_t);
        if req.fsgid != my_gid {
            libc::setfsgid(req.fsgid);
        }
        if req.fsuid != my_uid {
            libc::setfsuid(req.fsuid);
        }
    }
    let out = match req.op {
        x if x == Op::Open as u32 => open(dirfd, &path, &req),
        x if x == Op::Mkdir as u32 => made_then_opened(dirfd, &path, unsafe { libc::mkdirat(dirfd, path.as_ptr(), req.mode as libc::mode_t) }),
        x if x == Op::Mknod as u32 => made_then_opened(dirfd, &path, unsafe { libc::mknodat(dirfd, path.as_ptr(), req.mode as libc::mode_t, req.dev as libc::dev_t) }),
        x if x == Op::Symlink as u32 => match std::ffi::CString::new(extra) {
            Ok(target) => made_then_opened(dirfd, &path, unsafe { libc::symlinkat(target.as_ptr(), dirfd, path.as_ptr()) }),
            Err(_) => (fail(libc::EINVAL), None),
        },
        x if x == Op::Bind as u32 => bind(dirfd, &path, sock.as_ref(), extra),
        _ => (fail(libc::ENOSYS), None),
    };
    // SAFETY: back to the hand's own ids.
    unsafe {
        if req.fsuid != my_uid {
            libc::setfsuid(my_uid);
        }
        if req.fsgid != my_gid {
            libc::setfsgid(my_gid);
        }
    }
    out
}

fn fail(errno: i32) -> Answer {
    Answer { result: -(errno as i64), ..Default::default() }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// An open that makes its file: only a new one (O_EXCL), so a name already
/// there is reported and the caller's own open runs for it.
fn open(dirfd: RawFd, path: &std::ffi::CStr, req: &Request) -> (Answer, Option<OwnedFd>) {
    let flags = req.flags as i32;
    let tmpfile = flags & __O_TMPFILE != 0;
    let asked_excl = flags & libc::O_EXCL != 0;
    let flags = if tmpfile { flags } else { flags | libc::O_EXCL } | libc::O_CLOEXEC;
    let fd = if req.resolve != 0 {
        // SAFETY: open_how is plain integers.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = flags as u64;
        how.mode = req.mode as u64;
        how.resolve = req.resolve;
        // SAFETY: a NUL-terminated path and an open_how of the size passed.
        unsafe { libc::syscall(libc::SYS_openat2, dirfd, path.as_ptr(), &how as *const libc::open_how, std::mem::size_of::<libc::open_how>()) as i32 }
    } else {
        // SAFETY: a NUL-terminated path.
        unsafe { libc::openat(dirfd, path.as_ptr(), flags, req.mode as libc::c_uint) }
    };
    if fd < 0 {
        let e = errno();
        if e == libc::EEXIST && !asked_excl && !tmpfile {
            return (Answer { result: 0, exists: 1, _pad: 0 }, None);
        }
        return (fail(e), None);
    }
    // SAFETY: a new descriptor.
    (Answer::default(), Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// After mkdir, mknod or symlink: the new entry, opened where it was made
/// (never through a link), for the supervisor to know it by.
fn made_then_opened(dirfd: RawFd, path: &std::ffi::CStr, r: libc::c_int) -> (Answer, Option<OwnedFd>) {
    if r != 0 {
        return (fail(errno()), None);
    }
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::openat(dirfd, path.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        // Made, but gone or swapped already: made, not known.
        return (Answer::default(), None);
    }
    // SAFETY: a new descriptor.
    (Answer::default(), Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// bind(2) of the caller's unix socket to a path, from the caller's folder.
fn bind(dirfd: RawFd, path: &std::ffi::CStr, sock: Option<&OwnedFd>, addr: &[u8]) -> (Answer, Option<OwnedFd>) {
    let Some(sock) = sock else { return (fail(libc::EBADF), None) };
    // bind has no folder argument: stand in the caller's folder for a relative path.
    // SAFETY: fchdir on a descriptor we hold, or to the root for an absolute path.
    unsafe {
        if dirfd != libc::AT_FDCWD {
            libc::fchdir(dirfd);
        } else {
            libc::chdir(c"/".as_ptr());
        }
    }
    // SAFETY: an address buffer of the length passed.
    let r = unsafe { libc::bind(sock.as_raw_fd(), addr.as_ptr().cast(), addr.len() as libc::socklen_t) };
    made_then_opened(dirfd, path, r)
}

fn as_bytes<T>(v: &T) -> &[u8] {
    // SAFETY: plain repr(C) data of its own size.
    unsafe { std::slice::from_raw_parts((v as *const T).cast(), std::mem::size_of::<T>()) }
}

/// Send `bytes`, with descriptor `fd` when it is one (SCM_RIGHTS).
fn send_with_fd(chan: RawFd, bytes: &[u8], fd: RawFd) -> Result<(), i32> {
    let one = [fd];
    send_with_fds(chan, bytes, if fd >= 0 { &one } else { &[] })
}

fn send_with_fds(chan: RawFd, bytes: &[u8], fds: &[RawFd]) -> Result<(), i32> {
    super::passing::send(chan, bytes, fds).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// One message and the descriptors it carried (two at most); None at the
/// channel's end.
fn receive(chan: RawFd, buf: &mut [u8]) -> Option<(usize, Vec<OwnedFd>)> {
    super::passing::receive(chan, buf, 2)
}

/// The supervisor's end of the hand.
pub struct Hand {
    chan: OwnedFd,
    /// Its pid as the supervisor numbers it (to end it).
    pub pid: i32,
    /// Its pid as the call numbers it (a signal to it is refused; 0: the
    /// call's init is the hand, which the kernel keeps from the call's
    /// signals itself).
    pub ns_pid: i32,
    alive: bool,
    /// The hand passed a descriptor and has not yet said its copy is closed.
    closing: bool,
}

/// How long the supervisor waits for one answer: the hand makes one entry,
/// which takes microseconds; past this it was stopped (a process of the
/// call can signal it), and the call's creates run as made from then on.
const PATIENCE_MS: i32 = 2000;

impl Hand {
    /// The hand on `chan`, once it has said who it is; None when it never
    /// started (the child failed before: its exit says why).
    pub fn greet(chan: OwnedFd) -> Option<Hand> {
        let mut pid = [0u8; 4];
        let (n, sender) = super::caller::receive_with_sender(chan.as_raw_fd(), &mut pid)?;
        // Known: the answers that follow carry descriptors, not credentials.
        super::caller::pass_credentials(chan.as_raw_fd(), false);
        (n == 4).then(|| Hand { chan, pid: sender, ns_pid: i32::from_ne_bytes(pid), alive: true, closing: false })
    }

    pub fn alive(&self) -> bool {
        self.alive
    }

    /// Ask for one entry. None: the hand is gone or stopped (the caller's
    /// own call then runs as made, judged by the kernel, and is not known
    /// as the call's own).
    pub fn make(&mut self, req: Request, path: &[u8], extra: &[u8], base: Option<&OwnedFd>, sock: Option<&OwnedFd>) -> Option<Made> {
        self.closed();
        if !self.alive {
            return None;
        }
        let mut req = req;
        req.path_len = path.len() as u32;
        req.extra_len = extra.len() as u32;
        req.fds = u32::from(base.is_some()) | (u32::from(sock.is_some()) << 1);
        let mut msg = Vec::with_capacity(REQUEST + path.len() + extra.len());
        msg.extend_from_slice(as_bytes(&req));
        msg.extend_from_slice(path);
        msg.extend_from_slice(extra);
        let fds: Vec<RawFd> = base.iter().chain(sock.iter()).map(|f| f.as_raw_fd()).collect();
        if send_with_fds(self.chan.as_raw_fd(), &msg, &fds).is_err() {
            return self.lost();
        }
        let mut p = libc::pollfd { fd: self.chan.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd.
        if unsafe { libc::poll(&mut p, 1, PATIENCE_MS) } != 1 {
            return self.lost();
        }
        let mut buf = [0u8; std::mem::size_of::<Answer>()];
        let Some((n, mut fds)) = receive(self.chan.as_raw_fd(), &mut buf) else { return self.lost() };
        if n < buf.len() {
            return self.lost();
        }
        // SAFETY: a full Answer, read unaligned.
        let a: Answer = unsafe { std::ptr::read_unaligned(buf.as_ptr().cast()) };
        Some(if a.result < 0 {
            Made::Failed((-a.result) as i32)
        } else if a.exists != 0 {
            Made::Exists
        } else {
            match fds.pop() {
                Some(fd) => {
                    // Its word that its copy is closed follows: awaited by
                    // [`Hand::closed`] before the caller goes on.
                    self.closing = true;
                    Made::Entry(fd)
                }
                None => Made::Unknown,
            }
        })
    }

    /// Wait for the hand's word that its copy of the descriptor it last
    /// passed is closed (see [`Serving::answer_one`]): called before the
    /// caller goes on, after the supervisor's own work on the entry (so the
    /// word has mostly come by then), and before the next request. A hand
    /// that never says so is lost; the entry it made is still the call's.
    pub fn closed(&mut self) {
        if !std::mem::take(&mut self.closing) || !self.alive {
            return;
        }
        let mut p = libc::pollfd { fd: self.chan.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let mut word = [0u8; 1];
        // SAFETY: one pollfd.
        let said = unsafe { libc::poll(&mut p, 1, PATIENCE_MS) } == 1
            && matches!(receive(self.chan.as_raw_fd(), &mut word), Some((1, fds)) if fds.is_empty() && word[0] == CLOSED);
        if !said {
            self.lost();
        }
    }

    /// The hand stopped answering: make nothing more, and end a hand of
    /// its own (a stopped one; the call's init is never stopped by the call
    /// and ends with what it reaps).
    fn lost(&mut self) -> Option<Made> {
        self.alive = false;
        if self.ns_pid != 0 {
            // SAFETY: kill with a pid and a signal number.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        None
    }

    /// End a hand of its own now (the call is over and nothing of it is
    /// left; the call's init ends by itself when nothing is).
    pub fn end(&mut self) {
        if self.alive && self.ns_pid != 0 {
            // SAFETY: as above.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        self.alive = false;
    }
}
