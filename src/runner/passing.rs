//! A message and the descriptors passed with it over a unix socket
//! (SCM_RIGHTS): between the supervisor and the hand, and between a call
//! and the keeper (Linux).

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// Room for `space` bytes of control messages, aligned as a `cmsghdr`
/// (the CMSG macros read and write it in place; bytes alone may lie at
/// any address).
pub fn control_room(space: usize) -> Vec<u64> {
    vec![0u64; space.div_ceil(std::mem::size_of::<u64>())]
}

/// Send `bytes` with `fds` as one message.
pub fn send(chan: RawFd, bytes: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
    // SAFETY: CMSG_SPACE of the descriptors passed.
    let space = if fds.is_empty() { 0 } else { (unsafe { libc::CMSG_SPACE(std::mem::size_of_val(fds) as u32) }) as usize };
    let mut control = control_room(space);
    // SAFETY: a msghdr over buffers we own, built with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as _;
            let data = libc::CMSG_DATA(cmsg) as *mut RawFd;
            for (i, fd) in fds.iter().enumerate() {
                std::ptr::write_unaligned(data.add(i), *fd);
            }
        }
        if libc::sendmsg(chan, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One message into `buf` and up to `most` descriptors that came with it
/// (close-on-exec, owned from here on), retried when interrupted; None at
/// the channel's end, on an error, or when the message or its descriptors
/// did not fit (what came is closed).
pub fn receive(chan: RawFd, buf: &mut [u8], most: usize) -> Option<(usize, Vec<OwnedFd>)> {
    // SAFETY: the whole of `buf`, ours to write.
    unsafe { receive_at(chan, buf.as_mut_ptr(), buf.len(), most) }
}

/// [`receive`] into `buf`'s spare room (up to `room` bytes), which grows by
/// what came. Nothing is zeroed first: a large buffer costs only the pages
/// the message touches (a zeroed 64 KiB is 16 page faults per call).
pub fn receive_into(chan: RawFd, buf: &mut Vec<u8>, room: usize, most: usize) -> Option<Vec<OwnedFd>> {
    buf.reserve(room);
    let at = buf.len();
    // SAFETY: `room` bytes of the spare capacity just reserved.
    let (n, fds) = unsafe { receive_at(chan, buf.as_mut_ptr().add(at), room, most) }?;
    // SAFETY: the kernel wrote those `n` bytes.
    unsafe { buf.set_len(at + n) };
    Some(fds)
}

/// [`receive`] into the `len` bytes at `at`.
///
/// # Safety
/// `at` must be valid for writes of `len` bytes.
unsafe fn receive_at(chan: RawFd, at: *mut u8, len: usize, most: usize) -> Option<(usize, Vec<OwnedFd>)> {
    let mut iov = libc::iovec { iov_base: at.cast(), iov_len: len };
    // SAFETY: CMSG_SPACE of `most` descriptors.
    let space = unsafe { libc::CMSG_SPACE((most * std::mem::size_of::<RawFd>()) as u32) } as usize;
    let mut control = control_room(space);
    let mut fds = Vec::new();
    // SAFETY: a msghdr over buffers we own, read with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let n = loop {
            let n = libc::recvmsg(chan, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break n;
        };
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while n > 0 && !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                let data = libc::CMSG_DATA(cmsg) as *const RawFd;
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        if n <= 0 || msg.msg_flags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0 {
            return None;
        }
        Some((n as usize, fds))
    }
}
