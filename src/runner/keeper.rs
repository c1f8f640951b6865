//! Held fences: a process that keeps what putting a kept fence up builds,
//! for the next calls of that fence (Linux).
//!
//! Putting a fence up opens each rule's path and adds it to a Landlock
//! ruleset (two system calls a rule), and in the runner's mount namespace
//! copies back every writable root (three a root): the same work call
//! after call, growing with the rules. The first call of a kept fence
//! builds it as always and hands the keeper its mount namespace (with its
//! user namespace when not root) as it stands with the tree read-only and
//! the persistence surfaces shut, before anything of its own is mounted.
//! The keeper then opens every rule's path itself, once, and from those
//! descriptors builds a ruleset ahead of the calls. A call of the same
//! kept fence and the same surfaces joins the held namespaces in a copy of
//! its own (its terminals and its /proc are its own mounts), takes the
//! ruleset, adds the rules on its own mounts (`/proc`, `/dev/pts`: Landlock
//! ignores the folder a mount hides, so these rules are the mount's) and
//! restricts itself: no path walked for a rule, no writable root copied.
//!
//! One ruleset serves [`SHARED_CALLS`] calls of a fence, then a fresh one
//! is built (building costs ~1 µs a rule, 0.5 ms for the default
//! profile). What the calls add to it are the
//! same rules, with the same fence's access, on each call's own mounts:
//! its /proc and terminals, in its own copy of the held namespace, which
//! no other call reaches by path. Nor through a process: `/proc/PID/root`
//! and `/fd`, `pidfd_getfd` and `setns` need ptrace access, which Landlock
//! scopes to a process's own domain, and each call restricts itself into
//! a domain of its own. (A call whose process namespace or terminals could
//! not be made adds the rules on the instance it sees, which it could
//! reach anyway.) Only a call that hands another a descriptor of its own
//! lends it what it may reach itself. A ruleset is copied into the
//! process's domain when it restricts itself, so what a later call adds
//! never reaches one already running.
//!
//! What is held may only stand for the fence it was built from, so:
//! - it is found by the kept entry's name ([`super::kept`]), which changes
//!   whenever a file the compile found is another one, and by each
//!   persistence surface's path and identity;
//! - a namespace is handed over only when every writable root and surface
//!   it holds was bound on the very file the entry names, and the keeper
//!   keeps a rule's descriptor only when it is that file (`fstat`): no path
//!   swapped in between is held;
//! - a call uses them only after proving the entry again (the same files at
//!   the same paths: a held rule or mount cannot follow a file moved away,
//!   and a file held open cannot be another with its number), and the
//!   keeper drops everything when the host's mount table changes (a held
//!   namespace is a copy of it);
//! - the keeper answers only processes of its own user with no
//!   `no_new_privs` (never a fenced one: the runner sets it before
//!   Landlock), its socket lies in the fence cache (a protected path), and
//!   the runner counts the keeper among the host's processes, whose
//!   sockets no fenced call may reach. A ruleset can be added to by
//!   whoever holds it, so it goes only to runners of the same fence, and
//!   none may ever reach a fenced process (close-on-exec, closed before
//!   the command).
//!
//! The keeper leaves after ten minutes without a request, or when its socket
//! is no longer in the cache folder.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::{Duration, Instant};

use super::temp_watch::TempWatch;

/// The socket's name in the fence cache folder.
const SOCKET: &str = "keeper";
/// The descriptor the keeper gets its listening socket on.
const LISTENER_FD: RawFd = 3;
/// Fences held at once; the least recently used goes first.
const HELD: usize = 16;
/// How long the keeper stays without a request.
const IDLE: Duration = Duration::from_secs(600);
/// How long a call waits for the keeper's answer before building itself
/// (it answers in ~0.1 ms; a keeper not woken in time on a busy machine
/// costs the call no more than this).
const ANSWER_MS: i64 = 20;
/// The most descriptors a message carries: ruleset, mount and user namespace.
const MAX_FDS: usize = 3;
/// How many calls one ruleset serves before a fresh one is built: each
/// adds its own mounts' few rules, so the last of them restricts itself
/// with ~3 × this many more rules than the first.
pub const SHARED_CALLS: u32 = 32;
const MAX_MESSAGE: usize = 64 * 1024;

/// What a call gets for its fence: the ruleset built from the rules not
/// on its own mounts, with which of its [`SHARED_CALLS`] calls this is,
/// and the held namespaces (mount, and user when not root) to join in a
/// copy.
pub struct Held {
    pub ruleset: Option<(OwnedFd, u32)>,
    pub namespaces: Option<Namespaces>,
}

/// A mount namespace and, when it was made in one, its user namespace.
pub type Namespaces = (OwnedFd, Option<OwnedFd>);

fn fds_of(ns: &Option<Namespaces>) -> Vec<RawFd> {
    let mut out = Vec::new();
    if let Some((mnt, user)) = ns {
        out.push(mnt.as_raw_fd());
        out.extend(user.as_ref().map(|u| u.as_raw_fd()));
    }
    out
}

fn namespaces_of(mut fds: Vec<OwnedFd>) -> Option<Namespaces> {
    match fds.len() {
        1 => Some((fds.remove(0), None)),
        2 => {
            let user = fds.pop();
            Some((fds.remove(0), user))
        }
        _ => None,
    }
}

/// Whether a rule's path lies on a mount each call makes for itself in its
/// own namespace (its /proc, its terminals): such a rule is the call's.
pub fn on_own_mount(path: &str) -> bool {
    crate::paths::within(path, "/proc") || crate::paths::within(path, "/dev/pts") || path == "/dev/ptmx"
}

/// How a call found the keeper.
pub enum Asked {
    /// The keeper answered (pid), holding the fence or not.
    Answered(i32, Option<Held>),
    /// No keeper listens.
    Nobody,
    /// One may listen but did not answer in time.
    Silent,
}

/// The folder, opened without following a link anywhere on the way (the
/// profile protects it by its real path), so its socket can be named
/// through `/proc/self/fd` whatever the folder's length.
fn open_dir(dir: &str) -> std::io::Result<OwnedFd> {
    super::linux::open_real(dir)
}

fn socket_name(dir_fd: &OwnedFd) -> CString {
    CString::new(format!("/proc/self/fd/{}/{SOCKET}", dir_fd.as_raw_fd())).expect("no NUL in a number")
}

fn address(name: &CString) -> Option<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain data; all-zero is its empty value.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = name.as_bytes();
    if bytes.len() >= a.sun_path.len() {
        return None;
    }
    for (d, &s) in a.sun_path.iter_mut().zip(bytes) {
        *d = s as libc::c_char;
    }
    Some((a, (std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t))
}

fn seqpacket() -> std::io::Result<OwnedFd> {
    // SAFETY: plain arguments.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn connect(dir: &str) -> Result<OwnedFd, Asked> {
    let dir_fd = open_dir(dir).map_err(|_| Asked::Nobody)?;
    let (addr, len) = address(&socket_name(&dir_fd)).ok_or(Asked::Nobody)?;
    let s = seqpacket().map_err(|_| Asked::Nobody)?;
    // SAFETY: an address of the length passed.
    if unsafe { libc::connect(s.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) } != 0 {
        return Err(Asked::Nobody);
    }
    let tv = libc::timeval { tv_sec: 0, tv_usec: (ANSWER_MS * 1000) as _ };
    for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: a timeval of the size passed.
        unsafe { libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, opt, (&tv as *const libc::timeval).cast(), std::mem::size_of::<libc::timeval>() as u32) };
    }
    Ok(s)
}

/// Send `text` with `fds` as one message.
fn send(s: RawFd, text: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    super::passing::send(s, text, fds)
}

/// One message and the descriptors that came with it (close-on-exec).
fn receive(s: RawFd) -> Option<(Vec<u8>, Vec<OwnedFd>)> {
    let mut buf = Vec::new();
    let fds = super::passing::receive_into(s, &mut buf, MAX_MESSAGE, MAX_FDS)?;
    Some((buf, fds))
}

/// The pid and uid at the other end of a unix socket.
fn peer(s: RawFd) -> Option<(i32, u32)> {
    // SAFETY: a ucred of the size passed.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(s, libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len) };
    (r == 0).then_some((cred.pid, cred.uid))
}

/// Ask the keeper of the fence cache `dir` for the fence held as `name`.
pub fn get(dir: &str, name: &str) -> Asked {
    get_proven(dir, name, None, &[]).asked
}

/// The keeper's answer to [`get_proven`].
pub struct Proven {
    pub asked: Asked,
    /// What it vouches for of the entry's folders.
    pub vouched: Option<super::kept::Vouched>,
    /// The token for the temp folders `temps` as they are now
    /// ([`super::temp_watch`]).
    pub temp: Option<String>,
}

/// [`get`], and with `version` (of the kept entry the fence was built
/// from) what the keeper vouches for of that entry's folders
/// ([`super::folder_watch`]) and its token for the temp folders `temps`.
pub fn get_proven(dir: &str, name: &str, version: Option<&str>, temps: &[String]) -> Proven {
    let silent = |asked| Proven { asked, vouched: None, temp: None };
    let s = match connect(dir) {
        Ok(s) => s,
        Err(asked) => return silent(asked),
    };
    let Some((pid, _)) = peer(s.as_raw_fd()) else { return silent(Asked::Silent) };
    let Some(binary) = super::kept::this_binary() else { return silent(Asked::Silent) };
    // Temp folders are named on one line, a tab between two.
    let temps = (!temps.is_empty() && temps.iter().all(|t| t.starts_with('/') && !t.contains(['\t', '\n']))).then(|| temps.join("\t"));
    let request = match (version, temps) {
        (Some(v), Some(t)) => format!("prove-temps\n{binary}\n{t}\n{v}\n{name}"),
        (Some(v), None) => format!("prove\n{binary}\n{v}\n{name}"),
        (None, _) => format!("get\n{binary}\n{name}"),
    };
    if send(s.as_raw_fd(), request.as_bytes(), &[]).is_err() {
        return silent(Asked::Silent);
    }
    let Some((text, fds)) = receive(s.as_raw_fd()) else { return silent(Asked::Silent) };
    // The temp folders' token, `vouched` and the folders not vouched for
    // follow the first line.
    let (first, mut rest) = match text.iter().position(|&b| b == b'\n') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (&text[..], &[][..]),
    };
    let mut temp = None;
    if let Some(line) = rest.strip_prefix(b"temp ") {
        let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
        temp = std::str::from_utf8(&line[..end]).ok().map(str::to_string);
        rest = line.get(end + 1..).unwrap_or_default();
    }
    let vouched = vouched_of(rest);
    Proven { asked: answered(pid, name, first, fds), vouched, temp }
}

fn vouched_of(rest: &[u8]) -> Option<super::kept::Vouched> {
    let rest = std::str::from_utf8(rest).ok()?;
    let mut lines = rest.split('\n');
    (lines.next()? == "vouched").then(|| super::kept::Vouched { dirty: lines.filter(|l| !l.is_empty()).map(str::to_string).collect() })
}

/// The keeper's answer's first line, with the descriptors that came.
fn answered(pid: i32, name: &str, text: &[u8], mut fds: Vec<OwnedFd>) -> Asked {
    match text {
        // The ruleset first when there is one, then the namespaces.
        _ if text.starts_with(b"held") => {
            let call = text.strip_prefix(b"held ruleset ").and_then(|n| std::str::from_utf8(n).ok()?.parse::<u32>().ok());
            let ruleset = call.filter(|_| !fds.is_empty()).map(|n| (fds.remove(0), n));
            let namespaces = if name.starts_with("shut ") { namespaces_of(fds) } else { None };
            if name.starts_with("shut ") && namespaces.is_none() {
                return Asked::Answered(pid, None);
            }
            Asked::Answered(pid, Some(Held { ruleset, namespaces }))
        }
        b"none" => Asked::Answered(pid, None),
        _ => Asked::Silent,
    }
}

/// Hand the keeper the fence of the kept entry `slot` (named `id`) as
/// `name`, with the namespaces it was put up in (none when it has none).
/// Best effort: a call that could not is built again next time. Waits for
/// the keeper's word: it looks at the caller while the caller is still as
/// it was when it connected.
pub fn put(dir: &str, name: &str, slot: &Path, id: &str, namespaces: &Option<Namespaces>) -> bool {
    let Ok(s) = connect(dir) else { return false };
    let Some(binary) = super::kept::this_binary() else { return false };
    let text = format!("put\n{binary}\n{}\n{id}\n{name}", slot.display());
    send(s.as_raw_fd(), text.as_bytes(), &fds_of(namespaces)).is_ok() && matches!(receive(s.as_raw_fd()), Some((text, _)) if text == b"kept")
}

/// Start a keeper for the fence cache `dir`: the socket is bound here (so a
/// call may hand it a fence at once), and `exe keep` serves it, in a session
/// of its own, off the call's pipes. Returns its pid.
pub fn start(dir: &str, exe: &Path) -> Option<i32> {
    use std::os::unix::process::CommandExt;
    let dir_fd = open_dir(dir).ok()?;
    let name = socket_name(&dir_fd);
    let (addr, len) = address(&name)?;
    let s = seqpacket().ok()?;
    // A keeper that died leaves its socket file: nobody answers there.
    // SAFETY: a NUL-terminated path.
    unsafe { libc::unlink(name.as_ptr()) };
    // SAFETY: an address of the length passed; plain arguments.
    unsafe {
        let mask = libc::umask(0o077);
        let bound = libc::bind(s.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len);
        libc::umask(mask);
        if bound != 0 || libc::listen(s.as_raw_fd(), 64) != 0 {
            return None;
        }
    }
    let listener = s.as_raw_fd();
    // Off the call's pipes (the host waits for them to close). Read-only:
    // the keeper writes nothing, and /dev/null is not everyone's to write
    // in every container.
    let null = || std::fs::File::open("/dev/null").map(std::process::Stdio::from);
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("keep").arg(dir).stdin(null().ok()?).stdout(null().ok()?).stderr(null().ok()?);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            // dup2 onto itself would leave it close-on-exec.
            let moved = if listener == LISTENER_FD { libc::fcntl(listener, libc::F_SETFD, 0) } else { libc::dup2(listener, LISTENER_FD) };
            if moved < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().ok()?;
    Some(child.id() as i32)
}

/// A fenced process runs with `no_new_privs` (the runner sets it before
/// Landlock); the keeper answers none. `proc` is the asker's /proc folder.
fn unfenced(proc: &OwnedFd) -> bool {
    // SAFETY: a NUL-terminated name below a folder we hold.
    let fd = unsafe { libc::openat(proc.as_raw_fd(), c"status".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut status = String::with_capacity(4096);
    // SAFETY: a new descriptor, owned here.
    let read = std::io::Read::read_to_string(&mut std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) }), &mut status);
    read.is_ok() && status.lines().any(|l| l.strip_prefix("NoNewPrivs:").is_some_and(|v| v.trim() == "0"))
}

/// The device and inode `name` below the folder `dir` leads to.
fn id_at(dir: RawFd, name: &std::ffi::CStr) -> Option<(u64, u64)> {
    // SAFETY: a zeroed stat for the kernel to fill, a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, 0) } == 0).then_some((st.st_dev, st.st_ino))
}

/// One fence the keeper holds.
struct Kept {
    name: String,
    namespaces: Option<Namespaces>,
    /// Each rule not on a call's own mounts, open on the file the entry
    /// names, with its rights; the rights handled.
    rules: Vec<(OwnedFd, u64)>,
    handled: u64,
    /// The ruleset built from `rules` that calls take now, and how many
    /// have taken it.
    next: Option<OwnedFd>,
    given: u32,
    /// The last one retired, let go of at the next: the calls that took
    /// it then do not free its rules on their own way to the command.
    handed: Option<OwnedFd>,
    used: Instant,
    /// The kept entry it was built from, and the watch on the folders that
    /// entry stamps (folder_watch.rs).
    slot: std::path::PathBuf,
    watch: Option<super::folder_watch::Watch>,
}

/// `dsh-allow keep DIR`: serve the listening socket on descriptor 3 until
/// idle, or until the socket in `dir` is another one.
pub fn serve(dir: &str) -> u8 {
    // The keeper lives on: its memory is malloc's to reuse.
    super::arena::start_up_done();
    // SAFETY: the descriptor the runner passed; close-on-exec from here.
    let listener = unsafe { OwnedFd::from_raw_fd(LISTENER_FD) };
    // SAFETY: plain calls on our own descriptors and limits.
    unsafe {
        libc::fcntl(LISTENER_FD, libc::F_SETFD, libc::FD_CLOEXEC);
        // What else was inherited is not ours to hold.
        libc::syscall(libc::SYS_close_range, (LISTENER_FD + 1) as u32, u32::MAX, 0u32);
        // Callers now see this process at the other end.
        libc::listen(LISTENER_FD, 64);
        // A descriptor per rule held: as many as this user may have.
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
    let Some(ours) = socket_identity(dir) else { return 1 };
    let abi = super::landlock_abi();
    // The host's mount table: any change there ends every held namespace.
    let mounts = std::fs::File::open("/proc/self/mountinfo").ok();
    let mut held: Vec<Kept> = Vec::new();
    let mut temps: Option<TempWatch> = None;
    // Each request is read into the same room: a fresh 64 KiB a request
    // was mapped and unmapped by malloc, and each unmap flushed the other
    // CPU's TLB.
    let mut inbox: Vec<u8> = Vec::with_capacity(MAX_MESSAGE);
    let mut last = Instant::now();
    loop {
        let mut fds = [libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 }, libc::pollfd {
            fd: mounts.as_ref().map_or(-1, |m| m.as_raw_fd()),
            events: libc::POLLPRI,
            revents: 0,
        }];
        // SAFETY: an array of two pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, 5_000) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 1;
        }
        if fds[1].revents & (libc::POLLPRI | libc::POLLERR) != 0 {
            held.clear();
            temps = None;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            // SAFETY: accept on our listener; a new descriptor, owned here.
            let c = unsafe { libc::accept4(listener.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) };
            if c >= 0 {
                let c = unsafe { OwnedFd::from_raw_fd(c) };
                if !answer(&c, &mut held, &mut temps, abi, mounts.as_ref(), &mut inbox) {
                    return 0;
                }
                last = Instant::now();
            }
        }
        // Ahead of the next call: a ruleset for each fence that has none.
        for k in held.iter_mut().filter(|k| k.next.is_none() && !k.rules.is_empty()) {
            k.next = ruleset_of(k, abi);
        }
        held.retain(|k| k.used.elapsed() < IDLE);
        // A keeper whose socket another took over gets no more requests
        // (they go to the new socket): a wake with none is where it notices.
        if last.elapsed() >= IDLE || (fds[0].revents & libc::POLLIN == 0 && socket_identity(dir) != Some(ours)) {
            return 0;
        }
    }
}

/// A fresh ruleset from a held fence's descriptors.
fn ruleset_of(k: &Kept, abi: u32) -> Option<OwnedFd> {
    let ruleset = super::linux::create(k.handled, abi).ok()?;
    for (fd, access) in &k.rules {
        super::linux::add(&ruleset, fd, *access, k.handled, "").ok()?;
    }
    Some(ruleset)
}

fn socket_identity(dir: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(Path::new(dir).join(SOCKET)).ok()?;
    Some((m.dev(), m.ino()))
}

/// One request: `get BINARY NAME` (answered `held` — with `ruleset` when
/// one is ready — and the descriptors, or `none`) or `put BINARY SLOT ID
/// NAME` with the namespaces (answered `kept`). A request from another
/// binary (the runner was updated) is answered `leaving`, and the keeper
/// leaves (returns false) for one of that binary to take its place.
fn answer(c: &OwnedFd, held: &mut Vec<Kept>, temps: &mut Option<TempWatch>, abi: u32, mounts: Option<&std::fs::File>, inbox: &mut Vec<u8>) -> bool {
    let tv = libc::timeval { tv_sec: 0, tv_usec: (ANSWER_MS * 1000) as _ };
    // SAFETY: a timeval of the size passed.
    unsafe { libc::setsockopt(c.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVTIMEO, (&tv as *const libc::timeval).cast(), std::mem::size_of::<libc::timeval>() as u32) };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    // The asker's /proc folder, opened once for all that is read there.
    let asker = match peer(c.as_raw_fd()) {
        Some((pid, uid)) if uid == me => match open_dir(&format!("/proc/{pid}")) {
            Ok(proc) if unfenced(&proc) => proc,
            _ => return true,
        },
        _ => return true,
    };
    inbox.clear();
    let Some(fds) = super::passing::receive_into(c.as_raw_fd(), inbox, MAX_MESSAGE, MAX_FDS) else { return true };
    let Ok(text) = std::str::from_utf8(inbox) else { return true };
    let Some((verb, rest)) = text.split_once('\n') else { return true };
    let Some((binary, rest)) = rest.split_once('\n') else { return true };
    if Some(binary) != super::kept::this_binary().as_deref() {
        let _ = send(c.as_raw_fd(), b"leaving", &[]);
        return false;
    }
    // `prove-temps TEMPS VERSION NAME`: a `prove` that also asks for the
    // temp folders' token (temp_watch.rs).
    let (verb, rest, temp_folders) = match (verb, rest.split_once('\n')) {
        ("prove-temps", Some((t, rest))) => ("prove", rest, Some(t)),
        _ => (verb, rest, None),
    };
    // `prove VERSION NAME`: a `get` that also asks what the keeper vouches
    // for of the entry's folders at that version.
    let (verb, rest, version) = match (verb, rest.split_once('\n')) {
        ("prove", Some((version, name))) => ("get", name, Some(version)),
        _ => (verb, rest, None),
    };
    match (verb, rest) {
        ("get", name) => {
            // A change in the host's mount table since the last look ends
            // everything held (and no folder is vouched for across it).
            if mounts.is_some_and(mount_table_changed) {
                held.clear();
                *temps = None;
            }
            let mut same = SameMounts { asker: &asker, known: None };
            // With no view of the mount table, no token either.
            let temp = match (temp_folders, mounts) {
                (Some(t), Some(_)) => temp_line(temps, t, &mut same),
                _ => String::new(),
            };
            let Some(k) = held.iter_mut().find(|k| k.name == name) else {
                let _ = send(c.as_raw_fd(), format!("none{temp}").as_bytes(), &[]);
                return true;
            };
            k.used = Instant::now();
            // A ruleset serves SHARED_CALLS calls of this fence (each adds
            // its own mounts' rules to it), then is retired.
            let mut out: Vec<RawFd> = k.next.iter().map(|r| r.as_raw_fd()).collect();
            out.extend(fds_of(&k.namespaces));
            let mut text = if k.next.is_some() { format!("held ruleset {}", k.given + 1) } else { "held".to_string() };
            text.push_str(&temp);
            // With no view of the mount table, nothing is vouched for.
            if let (Some(v), Some(_)) = (version, mounts) {
                text.push_str(&vouch(k, v, &mut same));
            }
            let _ = send(c.as_raw_fd(), text.as_bytes(), &out);
            if k.next.is_some() {
                k.given += 1;
                if k.given >= SHARED_CALLS {
                    k.handed = k.next.take();
                    k.given = 0;
                }
            }
            // After the answer, off the call's way: watch the entry the call
            // read, or look again at the folders marked since.
            match &mut k.watch {
                Some(w) if version.is_none_or(|v| w.version() == v) => w.recheck(),
                _ => k.watch = super::folder_watch::Watch::of(&k.slot),
            }
        }
        ("put", rest) => {
            let mut parts = rest.splitn(3, '\n');
            let (Some(slot), Some(id), Some(name)) = (parts.next(), parts.next(), parts.next()) else { return true };
            let namespaces = namespaces_of(fds);
            if name.starts_with("shut ") && namespaces.is_none() {
                return true;
            }
            held.retain(|h| h.name != name);
            if held.len() >= HELD {
                // The least recently used makes room.
                if let Some(i) = held.iter().enumerate().min_by_key(|(_, h)| h.used).map(|(i, _)| i) {
                    held.remove(i);
                }
            }
            // The caller goes on; its rules are opened here after it.
            let _ = send(c.as_raw_fd(), b"kept", &[]);
            let mut k = Kept {
                name: name.to_string(),
                namespaces,
                rules: Vec::new(),
                handled: 0,
                next: None,
                given: 0,
                handed: None,
                used: Instant::now(),
                slot: Path::new(slot).to_path_buf(),
                watch: None,
            };
            hold_rules(&mut k, Path::new(slot), id, name.starts_with("shut "), held);
            k.next = ruleset_of(&k, abi).filter(|_| !k.rules.is_empty());
            k.watch = super::folder_watch::Watch::of(&k.slot);
            held.push(k);
        }
        _ => {}
    }
    true
}

/// The temp folders' token as the answer's next line, when the asker sees
/// the mounts the keeper sees (the temp folders watched here are its own);
/// the watch is set again for other temp folders, or once it ended.
fn temp_line(watch: &mut Option<TempWatch>, temp_folders: &str, same: &mut SameMounts) -> String {
    let wanted: Vec<String> = temp_folders.split('\t').map(str::to_string).collect();
    if wanted.iter().any(|t| !t.starts_with('/')) || !same.get() {
        return String::new();
    }
    if watch.as_ref().is_none_or(|w| w.ended() || w.temps() != wanted.as_slice()) {
        *watch = TempWatch::of(&wanted);
    }
    watch.as_mut().and_then(TempWatch::token).map_or(String::new(), |t| format!("\ntemp {t}"))
}

/// What the keeper vouches for, as the answer's lines after the first:
/// `vouched` and each folder it does not vouch for, when its watch is of
/// `version` and the asker sees the mounts the keeper sees; else nothing.
fn vouch(k: &mut Kept, version: &str, same: &mut SameMounts) -> String {
    let Some(w) = k.watch.as_mut().filter(|w| w.version() == version) else { return String::new() };
    if !same.get() {
        return String::new();
    }
    // Every change made before the call asked is queued by now.
    w.drain();
    let mut out = "\nvouched".to_string();
    for d in w.dirty() {
        out.push('\n');
        out.push_str(d);
    }
    if out.len() > MAX_MESSAGE / 2 {
        return String::new();
    }
    out
}

/// [`same_mounts`] of one asker, looked up once for the whole answer (the
/// temp folders' token and what is vouched for both ask it).
struct SameMounts<'a> {
    asker: &'a OwnedFd,
    known: Option<bool>,
}

impl SameMounts<'_> {
    fn get(&mut self) -> bool {
        *self.known.get_or_insert_with(|| same_mounts(self.asker))
    }
}

/// Whether the process whose /proc folder is `proc` is in this process's
/// mount namespace, with the same root (the folders it looks up are the
/// ones watched here). The keeper's own are looked up once: it never
/// changes either.
fn same_mounts(proc: &OwnedFd) -> bool {
    static MINE: std::sync::OnceLock<Option<[(u64, u64); 2]>> = std::sync::OnceLock::new();
    let of = |dir: RawFd| Some([id_at(dir, c"ns/mnt")?, id_at(dir, c"root")?]);
    // `/proc/self` is a link, which open_dir does not follow.
    let mine = MINE.get_or_init(|| open_dir(&format!("/proc/{}", std::process::id())).ok().and_then(|d| of(d.as_raw_fd())));
    mine.is_some() && *mine == of(proc.as_raw_fd())
}

/// Whether the mount table behind `mounts` (`/proc/self/mountinfo`)
/// changed since it was last asked (each look takes the change in).
fn mount_table_changed(mounts: &std::fs::File) -> bool {
    let mut p = libc::pollfd { fd: mounts.as_raw_fd(), events: libc::POLLPRI, revents: 0 };
    // SAFETY: one pollfd, no wait.
    unsafe { libc::poll(&mut p, 1, 0) };
    p.revents & (libc::POLLPRI | libc::POLLERR) != 0
}

/// Open each rule of the kept entry in `slot` (if it is still the entry
/// named `id`) that is not on a call's own mounts, keeping it only if it is
/// the very file the entry names; all or none (then calls build their
/// rulesets themselves). Room is made first among the descriptors this
/// process may hold, the least recently used fences `others` holds going.
fn hold_rules(k: &mut Kept, slot: &Path, id: &str, own_mounts: bool, others: &mut Vec<Kept>) {
    let Some(entry) = super::kept::Reused::at(slot).filter(|e| e.id == id) else { return };
    let (Some(rules), ids) = (entry.rules(), entry.ids()) else { return };
    let room = descriptors_allowed().saturating_sub(256);
    while !others.is_empty() && others.iter().map(|h| h.rules.len() + 2).sum::<usize>() + rules.rules.len() > room {
        if let Some(i) = others.iter().enumerate().min_by_key(|(_, h)| h.used).map(|(i, _)| i) {
            others.remove(i);
        }
    }
    if rules.rules.len() > room {
        return;
    }
    let mut out = Vec::with_capacity(rules.rules.len());
    for (path, access) in &rules.rules {
        if own_mounts && on_own_mount(path) {
            continue;
        }
        let Ok(Some(fd)) = super::linux::open_rule(path) else { return };
        if !ids.contains_key(path) || ids.get(path).copied() != super::linux::identity(&fd) {
            return;
        }
        out.push((fd, *access));
    }
    k.rules = out;
    k.handled = rules.handled;
}

/// How many descriptors this process may have open.
fn descriptors_allowed() -> usize {
    // SAFETY: a plain call filling a struct we own.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    lim.rlim_cur as usize
}

/// Join a held fence's namespaces, in a copy of the mount namespace of
/// this call's own (the mounts it makes for itself stay its own), back in
/// `cwd`.
pub fn enter(namespaces: &Namespaces, cwd: Option<&str>) -> Result<(), String> {
    let (mnt, user) = namespaces;
    // SAFETY: setns and unshare on descriptors we hold, in this
    // single-threaded child.
    unsafe {
        if let Some(u) = user {
            if libc::setns(u.as_raw_fd(), libc::CLONE_NEWUSER) != 0 {
                return Err(format!("cannot join the held user namespace: {}", std::io::Error::last_os_error()));
            }
        }
        if libc::setns(mnt.as_raw_fd(), libc::CLONE_NEWNS) != 0 {
            return Err(format!("cannot join the held mount namespace: {}", std::io::Error::last_os_error()));
        }
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(format!("cannot copy the held mount namespace: {}", std::io::Error::last_os_error()));
        }
    }
    // Joining a mount namespace starts at its root.
    if let Some(dir) = cwd {
        std::env::set_current_dir(dir).map_err(|e| format!("cannot return to {dir} in the held namespace: {e}"))?;
    }
    Ok(())
}

/// This process's own namespaces, to hand to the keeper: the mount
/// namespace, and the user namespace when it made one (not root).
pub fn own_namespaces(with_user: bool) -> Option<Namespaces> {
    let open = |p: &str| std::fs::File::open(p).ok().map(OwnedFd::from);
    let mnt = open("/proc/self/ns/mnt")?;
    let user = if with_user { Some(open("/proc/self/ns/user")?) } else { None };
    Some((mnt, user))
}

/// The name a fence is held under: the kept entry's name, whether the call
/// has a mount namespace of its own, and each persistence surface shut in
/// it with the file it is (a surface replaced since is another fence).
pub fn name(entry_id: &str, shut: bool, surfaces: &[String]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = format!("{} {entry_id}", if shut { "shut" } else { "open" });
    for s in surfaces {
        let m = std::fs::symlink_metadata(s).ok()?;
        out.push_str(&format!("\n{}:{} {s}", m.dev(), m.ino()));
    }
    Some(out)
}

/// Whether the surface at `path` is still the file `name` holds it as.
pub fn surface_is(name: &str, path: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::symlink_metadata(path) else { return false };
    let want = format!("{}:{} {path}", m.dev(), m.ino());
    name.lines().skip(1).any(|l| l == want)
}
