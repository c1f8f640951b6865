//! What the supervisor reads of a supervised caller (Linux): the address,
//! path or structure a system call names, read once from its memory so the
//! kernel never reads it a second time after the supervisor judged it; a
//! descriptor it holds; the umask and file ids it makes files with.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `len` bytes of thread `pid`'s memory at `at`.
pub fn read(pid: u32, at: u64, len: usize) -> Option<Vec<u8>> {
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

/// A NUL-terminated string of the caller's (a path: at most PATH_MAX), as bytes.
pub fn read_bytes(pid: u32, at: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut addr = at;
    while out.len() < 4096 {
        // Up to the end of the page, so an unmapped next page does not fail the read.
        let room = 4096 - (addr % 4096) as usize;
        let chunk = read(pid, addr, room)?;
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Some(out);
        }
        out.extend_from_slice(&chunk);
        addr += room as u64;
    }
    None
}

/// [`read_bytes`] as text (a path that is not UTF-8 is not judged here).
pub fn read_string(pid: u32, at: u64) -> Option<String> {
    String::from_utf8(read_bytes(pid, at)?).ok()
}

/// A copy of descriptor `fd` of thread `tid`, as one of ours (pidfd_getfd(2)).
pub fn take_fd(tid: u32, fd: i32) -> Result<OwnedFd, i32> {
    let pidfd = pidfd_of(tid)?;
    // SAFETY: pidfd_getfd with descriptors and flags.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(super::seccomp::errno());
    }
    // SAFETY: a new descriptor (close-on-exec, the kernel's default here).
    Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
}

/// The umask and file system ids a thread makes files with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Maker {
    pub umask: u32,
    pub fsuid: u32,
    pub fsgid: u32,
}

/// Read from /proc/TID/status (`Umask:`, the fourth field of `Uid:` and
/// `Gid:`); None when the thread is gone.
pub fn maker_of(tid: u32) -> Option<Maker> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let (mut umask, mut fsuid, mut fsgid) = (None, None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Umask:") {
            umask = u32::from_str_radix(v.trim(), 8).ok();
        } else if let Some(v) = line.strip_prefix("Uid:") {
            fsuid = v.split_whitespace().nth(3).and_then(|f| f.parse().ok());
        } else if let Some(v) = line.strip_prefix("Gid:") {
            fsgid = v.split_whitespace().nth(3).and_then(|f| f.parse().ok());
        }
    }
    Some(Maker { umask: umask?, fsuid: fsuid?, fsgid: fsgid? })
}

/// Read one message from `fd`, and which process sent it: the pid the
/// kernel puts in its credentials (SO_PASSCRED set on `fd`), as this
/// process's namespace numbers it.
pub fn receive_with_sender(fd: i32, buf: &mut [u8]) -> Option<(usize, i32)> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: CMSG_SPACE of one ucred.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::ucred>() as u32) } as usize;
    let mut control = super::passing::control_room(space);
    // SAFETY: a msghdr over buffers we own, read with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let n = libc::recvmsg(fd, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n <= 0 {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_CREDENTIALS {
            return None;
        }
        let cred: libc::ucred = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
        Some((n as usize, cred.pid))
    }
}

/// Ask the kernel to say (`on`) who sends each message read from `fd`, or
/// no longer.
pub fn pass_credentials(fd: i32, on: bool) -> bool {
    let on: libc::c_int = on.into();
    // SAFETY: an int option and its size.
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_PASSCRED, (&on as *const libc::c_int).cast(), std::mem::size_of::<libc::c_int>() as libc::socklen_t) == 0 }
}

/// What the supervisor remembers of each thread it has answered: a pidfd,
/// so taking one of its descriptors costs one call, and a thread id reused
/// by a new task is told apart (the old pidfd's task is gone). (How a
/// thread makes files — its umask — is read afresh each time: umask(2) by
/// another thread sharing it may land at any moment, and a stale one would
/// make a private file readable.)
#[derive(Default)]
pub struct Callers {
    known: std::collections::HashMap<u32, OwnedFd>,
}

/// At most this many threads are remembered (a long build's): past it the
/// memory starts again.
const REMEMBERED: usize = 4096;

impl Callers {
    /// A copy of descriptor `fd` of thread `tid`.
    pub fn take_fd(&mut self, tid: u32, fd: i32) -> Result<OwnedFd, i32> {
        let alive = self.known.get(&tid).is_some_and(|p| {
            // SAFETY: signal 0 through a pidfd we own: a check, nothing sent.
            unsafe { libc::syscall(libc::SYS_pidfd_send_signal, p.as_raw_fd(), 0, std::ptr::null::<libc::siginfo_t>(), 0) == 0 }
        });
        if !alive {
            if self.known.len() >= REMEMBERED {
                self.known.clear();
            }
            self.known.insert(tid, pidfd_of(tid)?);
        }
        let pidfd = &self.known[&tid];
        // SAFETY: pidfd_getfd with descriptors and flags.
        let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
        if got < 0 {
            return Err(super::seccomp::errno());
        }
        // SAFETY: a new descriptor (close-on-exec, the kernel's default here).
        Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
    }
}

/// A pidfd of thread `tid` (of its process, before Linux 6.9).
fn pidfd_of(tid: u32) -> Result<OwnedFd, i32> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    // SAFETY: pidfd_open with a pid and flags.
    let mut pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid as i32, PIDFD_THREAD) };
    if pidfd < 0 {
        let tgid = super::procs::thread_group_of(tid as i32).ok_or(libc::ESRCH)?;
        // SAFETY: as above.
        pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) };
    }
    if pidfd < 0 {
        return Err(super::seccomp::errno());
    }
    // SAFETY: a new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(pidfd as i32) })
}
