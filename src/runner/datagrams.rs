//! Datagrams the call sends with sendmsg(2) and sendmmsg(2) (Linux).
//!
//! A datagram socket need not connect: each message may carry its own
//! address (`msg_name`), and a unix datagram to a daemon outside the call —
//! one that writes `.bashrc` on request, or hands back a descriptor of a
//! key — is as much a door as a connect. The address sits in memory the
//! filter cannot read, and another thread could change it after the
//! supervisor read it, so on a datagram socket the supervisor does the
//! whole send itself: it reads each message once (address, data, control),
//! judges the address as a connect is judged ([`super::sockets`]), passes
//! the descriptors a message carries (SCM_RIGHTS) as its own copies of the
//! caller's, and sends on the caller's socket. A stream socket ignores or
//! refuses an address, so its sends run as made.

use std::os::fd::{AsRawFd, OwnedFd};

use super::caller::{read, take_fd};
use super::sockets::{judge_address, unix_address, Judge, Opened, Refusal};

/// At most this many bytes of data, iovecs and control in one message.
const MAX_DATA: usize = 16 << 20;
const MAX_IOV: usize = 1024;
const MAX_CONTROL: usize = 64 << 10;
/// `struct msghdr` and `struct mmsghdr` on 64-bit Linux.
const MSGHDR: usize = 56;
const MMSGHDR: usize = 64;

/// Whether `sock` of thread `tid` is a datagram socket (the kind a message
/// may address), and our copy of it.
pub fn datagram_socket(tid: u32, sock: i32) -> Result<Option<OwnedFd>, i32> {
    let fd = take_fd(tid, sock)?;
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int-sized buffer and its length.
    let r = unsafe { libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TYPE, (&mut kind as *mut libc::c_int).cast(), &mut len) };
    if r != 0 {
        // Not a socket: the kernel answers ENOTSOCK itself.
        return Ok(None);
    }
    Ok(matches!(kind, libc::SOCK_DGRAM | libc::SOCK_RAW).then_some(fd))
}

/// One message read from the caller, ready to send.
pub struct Message {
    /// The address as read (None: the socket's connected peer), and for a
    /// unix path the socket file it was judged by.
    name: Option<Vec<u8>>,
    opened: Option<Opened>,
    data: Vec<u8>,
    control: Vec<u8>,
    /// Our copies of the descriptors it passes, kept open until it is sent.
    passed: Vec<OwnedFd>,
}

/// Read the message at `at` in thread `tid`'s memory and judge its address.
pub fn read_message(tid: u32, at: u64, judge: &Judge) -> Result<Message, Refusal> {
    let plain = |errno| Refusal { errno, why: String::new() };
    let hdr = read(tid, at, MSGHDR).ok_or(plain(libc::EFAULT))?;
    let word = |i: usize| u64::from_ne_bytes(hdr[i..i + 8].try_into().unwrap());
    let (name_at, name_len) = (word(0), u32::from_ne_bytes(hdr[8..12].try_into().unwrap()) as usize);
    let (iov_at, iov_len, control_at, control_len) = (word(16), word(24) as usize, word(32), word(40) as usize);
    if iov_len > MAX_IOV || control_len > MAX_CONTROL || name_len > std::mem::size_of::<libc::sockaddr_storage>() {
        return Err(plain(if iov_len > MAX_IOV { libc::EMSGSIZE } else { libc::EINVAL }));
    }
    let mut msg = Message { name: None, opened: None, data: Vec::new(), control: Vec::new(), passed: Vec::new() };
    if name_at != 0 && name_len > 0 {
        let bytes = read(tid, name_at, name_len).ok_or(plain(libc::EFAULT))?;
        let (verdict, opened) = judge_address(tid, &bytes, judge);
        verdict?;
        msg.name = Some(bytes);
        msg.opened = opened;
    }
    let iovs = read(tid, iov_at, iov_len * 16).ok_or(plain(libc::EFAULT))?;
    for v in iovs.chunks(16) {
        let (base, len) = (u64::from_ne_bytes(v[..8].try_into().unwrap()), u64::from_ne_bytes(v[8..].try_into().unwrap()) as usize);
        if msg.data.len() + len > MAX_DATA {
            return Err(plain(libc::EMSGSIZE));
        }
        msg.data.extend(read(tid, base, len).ok_or(plain(libc::EFAULT))?);
    }
    if control_at != 0 && control_len > 0 {
        let control = read(tid, control_at, control_len).ok_or(plain(libc::EFAULT))?;
        (msg.control, msg.passed) = own_copies(tid, control).map_err(plain)?;
    }
    Ok(msg)
}

/// The control messages with each SCM_RIGHTS descriptor of the caller's
/// replaced by a copy of ours (the rest passed as they are).
fn own_copies(tid: u32, mut control: Vec<u8>) -> Result<(Vec<u8>, Vec<OwnedFd>), i32> {
    const HDR: usize = 16;
    let mut passed = Vec::new();
    let mut at = 0;
    while at + HDR <= control.len() {
        let len = u64::from_ne_bytes(control[at..at + 8].try_into().unwrap()) as usize;
        let (level, kind) = (i32::from_ne_bytes(control[at + 8..at + 12].try_into().unwrap()), i32::from_ne_bytes(control[at + 12..at + 16].try_into().unwrap()));
        if len < HDR || at + len > control.len() {
            return Err(libc::EINVAL);
        }
        if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
            for off in (at + HDR..at + len).step_by(4) {
                if off + 4 > at + len {
                    break;
                }
                let theirs = i32::from_ne_bytes(control[off..off + 4].try_into().unwrap());
                let ours = take_fd(tid, theirs).map_err(|_| libc::EBADF)?;
                control[off..off + 4].copy_from_slice(&ours.as_raw_fd().to_ne_bytes());
                passed.push(ours);
            }
        }
        at += (len + 7) & !7;
    }
    Ok((control, passed))
}

/// Send `msg` on `sock` as the caller asked (`flags`); a broken pipe
/// signals the caller, as its own send would have.
pub fn send(sock: &OwnedFd, msg: &Message, flags: i32, tid: u32) -> Result<i64, i32> {
    let name = match (&msg.opened, &msg.name) {
        // A path goes as the socket file judged, never looked up again.
        (Some(o), _) => Some(unix_address(&format!("/proc/self/fd/{}", o.fd.as_raw_fd()))),
        (None, n) => n.clone(),
    };
    let mut iov = libc::iovec { iov_base: msg.data.as_ptr() as *mut libc::c_void, iov_len: msg.data.len() };
    // SAFETY: a msghdr over buffers that live for the call.
    let r = unsafe {
        let mut h: libc::msghdr = std::mem::zeroed();
        if let Some(n) = &name {
            h.msg_name = n.as_ptr() as *mut libc::c_void;
            h.msg_namelen = n.len() as libc::socklen_t;
        }
        h.msg_iov = &mut iov;
        h.msg_iovlen = 1;
        if !msg.control.is_empty() {
            h.msg_control = msg.control.as_ptr() as *mut libc::c_void;
            h.msg_controllen = msg.control.len() as _;
        }
        libc::sendmsg(sock.as_raw_fd(), &h, flags | libc::MSG_NOSIGNAL)
    };
    if r >= 0 {
        return Ok(r as i64);
    }
    let e = super::seccomp::errno();
    if e == libc::EPIPE && flags & libc::MSG_NOSIGNAL == 0 {
        if let Some(tgid) = super::procs::thread_group_of(tid as i32) {
            // SAFETY: tgkill with ids and a signal number.
            unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid as i32, libc::SIGPIPE) };
        }
    }
    Err(e)
}

/// Where message `i` of a sendmmsg vector starts, and where its `msg_len`
/// is written back.
pub fn mmsg_at(vector: u64, i: usize) -> (u64, u64) {
    let at = vector + (i * MMSGHDR) as u64;
    (at, at + MSGHDR as u64)
}

/// Write `len` into the caller's memory at `at` (sendmmsg's `msg_len`).
pub fn write_len(tid: u32, at: u64, len: u32) -> bool {
    let bytes = len.to_ne_bytes();
    let local = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: 4 };
    let remote = libc::iovec { iov_base: at as *mut libc::c_void, iov_len: 4 };
    // SAFETY: four local bytes; the remote range is the kernel's to check.
    unsafe { libc::process_vm_writev(tid as i32, &local, 1, &remote, 1, 0) == 4 }
}
