//! The call's creating system calls, made by the hand (Linux).
//!
//! open with O_CREAT or O_TMPFILE, creat, openat2, mkdir, mknod, symlink
//! and bind to a unix path come here. The supervisor reads the path once,
//! and the hand ([`super::hand`]) makes the entry inside the fence, exactly
//! where and as the caller would have (its folder object, umask and file
//! ids); the new entry's identity is kept as the call's own
//! ([`super::own`]) and an open's descriptor is handed to the caller. A
//! name already there is not made: the caller's own call runs as made (an
//! open of an existing file creates nothing). Where Landlock itself lets
//! the call remove what it makes (temp folders, tool state) nothing needs
//! knowing, and the call runs as made. A create the fence refuses is named.

use std::os::fd::{AsFd, OwnedFd, RawFd};

use super::caller;
use super::hand::{Hand, Made, Op, Request};
use super::own::{identity_of, Own};
use super::refusals::Refusals;
use super::seccomp::{self, Notif};

const __O_TMPFILE: u64 = 0o20000000;

/// What the supervisor keeps to make entries for the call.
pub struct Maker<'a> {
    pub hand: &'a mut Option<Hand>,
    pub own: &'a mut Own,
    /// Folders where Landlock grants removal: made there, an entry is the
    /// kernel's business.
    /// The supervisor's model of the fence, made here only when a call
    /// gets as far as asking where Landlock grants removal itself.
    pub model: &'a super::rights::Lazy,
    pub refusals: &'a mut Refusals,
}

/// One creating call, as decoded from its registers.
struct Call {
    op: Op,
    dirfd: i32,
    path_at: u64,
    flags: u64,
    mode: u32,
    dev: u64,
    resolve: u64,
    /// A link's target, or a socket address.
    extra: Vec<u8>,
    sock: Option<i32>,
    name: &'static str,
}

/// Decode, or None: not a creating call after all (the caller's call runs).
fn decode(n: &Notif) -> Result<Option<Call>, i32> {
    let a = n.data.args;
    let call = |op, dirfd: u64, path_at, flags, mode: u64, name| Call { op, dirfd: dirfd as i32, path_at, flags, mode: mode as u32, dev: 0, resolve: 0, extra: Vec::new(), sock: None, name };
    let cwd = libc::AT_FDCWD as u64;
    Ok(Some(match n.data.nr as i64 {
        libc::SYS_open => call(Op::Open, cwd, a[0], a[1], a[2], "open"),
        libc::SYS_openat => call(Op::Open, a[0], a[1], a[2], a[3], "open"),
        libc::SYS_creat => call(Op::Open, cwd, a[0], (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64, a[1], "open"),
        libc::SYS_openat2 => {
            // struct open_how { flags, mode, resolve }: read once.
            if (a[3] as usize) < 24 {
                return Err(libc::EINVAL);
            }
            let how = caller::read(n.pid, a[2], 24).ok_or(libc::EFAULT)?;
            let word = |i: usize| u64::from_ne_bytes(how[i * 8..i * 8 + 8].try_into().unwrap());
            let mut c = call(Op::Open, a[0], a[1], word(0), word(1), "open");
            c.resolve = word(2);
            c
        }
        libc::SYS_mkdir => call(Op::Mkdir, cwd, a[0], 0, a[1], "mkdir"),
        libc::SYS_mkdirat => call(Op::Mkdir, a[0], a[1], 0, a[2], "mkdir"),
        libc::SYS_mknod => Call { dev: a[2], ..call(Op::Mknod, cwd, a[0], 0, a[1], "mknod") },
        libc::SYS_mknodat => Call { dev: a[3], ..call(Op::Mknod, a[0], a[1], 0, a[2], "mknod") },
        libc::SYS_symlink | libc::SYS_symlinkat => {
            let target = caller::read_bytes(n.pid, a[0]).ok_or(libc::EFAULT)?;
            let (dirfd, at) = if n.data.nr as i64 == libc::SYS_symlink { (cwd, a[1]) } else { (a[1], a[2]) };
            Call { extra: target, ..call(Op::Symlink, dirfd, at, 0, 0, "symlink") }
        }
        libc::SYS_bind => {
            let len = a[2] as u32 as usize;
            if len <= 2 || len > std::mem::size_of::<libc::sockaddr_un>() {
                return Ok(None);
            }
            let addr = caller::read(n.pid, a[1], len).ok_or(libc::EFAULT)?;
            // Only a unix socket bound to a path makes an entry.
            if u16::from_ne_bytes([addr[0], addr[1]]) as i32 != libc::AF_UNIX || addr[2] == 0 {
                return Ok(None);
            }
            Call { extra: addr, sock: Some(a[0] as i32), ..call(Op::Bind, cwd, 0, 0, 0, "bind") }
        }
        _ => return Ok(None),
    }))
}

/// Handle one creating call.
pub fn create(listener: RawFd, n: &Notif, m: &mut Maker) {
    let call = match decode(n) {
        Ok(Some(c)) => c,
        Ok(None) => return seccomp::let_run(listener, n.id),
        Err(e) => return seccomp::answer(listener, n.id, Err(e)),
    };
    if call.op == Op::Open && call.flags & (libc::O_CREAT as u64 | __O_TMPFILE) == 0 {
        return seccomp::let_run(listener, n.id);
    }
    // The path, read once: a bind's is in its address.
    let path = if call.op == Op::Bind {
        let p = &call.extra[2..];
        p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())].to_vec()
    } else {
        match caller::read_bytes(n.pid, call.path_at) {
            Some(p) => p,
            None => return seccomp::answer(listener, n.id, Err(libc::EFAULT)),
        }
    };
    if path.is_empty() || !m.hand.as_ref().is_some_and(|h| h.alive()) {
        return seccomp::let_run(listener, n.id);
    }
    let text = std::str::from_utf8(&path).ok().and_then(|p| super::target::textual(n.pid, call.dirfd, p));
    if let Some(t) = &text {
        if m.model.quick.iter().any(|q| crate::paths::within(crate::paths::parent(t), q)) {
            return seccomp::let_run(listener, n.id);
        }
        // A folder the runner made before the fence for the line: the
        // line's own mkdir of it, still empty, succeeds.
        if call.op == Op::Mkdir && m.own.was_premade(t) && std::fs::read_dir(t).is_ok_and(|mut d| d.next().is_none()) {
            return seccomp::answer(listener, n.id, Ok(0));
        }
    }
    let Some(ids) = caller::maker_of(n.pid) else { return seccomp::answer(listener, n.id, Err(libc::ESRCH)) };
    let base = match super::target::caller_base(n.pid, call.dirfd, &path) {
        Ok(b) => b,
        Err(e) => return seccomp::answer(listener, n.id, Err(e)),
    };
    let sock = match call.sock.map(|fd| caller::take_fd(n.pid, fd)).transpose() {
        Ok(s) => s,
        Err(e) => return seccomp::answer(listener, n.id, Err(e)),
    };
    let req = Request {
        op: call.op as u32,
        flags: call.flags as u32,
        mode: call.mode,
        umask: ids.umask,
        dev: call.dev,
        resolve: call.resolve,
        fsuid: ids.fsuid,
        fsgid: ids.fsgid,
        ..Default::default()
    };
    let hand = m.hand.as_mut().expect("checked alive above");
    let extra: &[u8] = &call.extra;
    let made = hand.make(req, &path, extra, base.as_ref(), sock.as_ref());
    match made {
        None | Some(Made::Exists) => seccomp::let_run(listener, n.id),
        // An open answers with a descriptor: without one it failed (never
        // 0, which the caller would take for its standard input).
        Some(Made::Unknown) if call.op == Op::Open => seccomp::answer(listener, n.id, Err(libc::EIO)),
        Some(Made::Unknown) => seccomp::answer(listener, n.id, Ok(0)),
        Some(Made::Failed(e)) => {
            if e == libc::EACCES || e == libc::EROFS {
                let shown = text.clone().unwrap_or_else(|| String::from_utf8_lossy(&path).into_owned());
                m.refusals.report("create", &shown, call.name, n.pid);
            }
            seccomp::answer(listener, n.id, Err(e))
        }
        Some(Made::Entry(fd)) => {
            if let Some(id) = identity_of(fd.as_fd()) {
                m.own.insert(id);
            }
            hand_over(listener, n, &call, fd, hand)
        }
    }
}

/// The caller's result: an open gets the descriptor, the rest succeed;
/// either once the hand's copy is closed, as the supervisor's is.
fn hand_over(listener: RawFd, n: &Notif, call: &Call, fd: OwnedFd, hand: &mut Hand) {
    if call.op != Op::Open {
        drop(fd);
        hand.closed();
        return seccomp::answer(listener, n.id, Ok(0));
    }
    let cloexec = call.flags & libc::O_CLOEXEC as u64 != 0;
    let added = seccomp::add_fd(listener, n.id, fd, cloexec);
    hand.closed();
    match added {
        Ok(number) => seccomp::answer(listener, n.id, Ok(number)),
        // The caller is gone (ENOENT), or has no room for another
        // descriptor (EMFILE): say so, as its open would have.
        Err(e) if e != libc::ENOENT => seccomp::answer(listener, n.id, Err(e)),
        Err(_) => {}
    }
}
