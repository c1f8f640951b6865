//! What the fenced command inherits besides paths, cut down before exec
//! (Linux): its terminal, its environment, root's capabilities, and the
//! descriptors its parent left open.
//!
//! Each is a way for code inside the fence to reach something outside it
//! without naming a path: a line pushed into the user's shell (`TIOCSTI`),
//! the address of the host's web server or of an agent, a capability that
//! undoes the runner's own mounts (`mount_setattr`, `open_tree`,
//! `open_by_handle_at`), a descriptor of the audit log or of a folder in
//! home opened before the fence went up.

use crate::policy::environment::{socket_path, AGENT_COMPANIONS, AGENT_SOCKETS, CONTROL_PLANE};

/// Whether this process has a controlling terminal. Under DSH it has none
/// (the host starts every call in a session of its own); from a shell it
/// has the user's, which the command must not get.
pub fn has_terminal() -> bool {
    // SAFETY: a NUL-terminated path; the descriptor is closed at once.
    let fd = unsafe { libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd >= 0 {
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
    }
    fd >= 0
}

/// Leave the terminal: a session of its own (no controlling terminal, so
/// `/dev/tty` fails with ENXIO and `TIOCSTI` would need CAP_SYS_ADMIN), and
/// standard input from /dev/null when it was the terminal, so an
/// interactive program fails at once ("not a terminal", end of input)
/// instead of reading what the user types.
pub fn leave_terminal() -> Result<(), String> {
    // SAFETY: plain calls on this single-threaded child.
    unsafe {
        if libc::setsid() < 0 {
            return Err(format!("cannot start a session of its own: {}", std::io::Error::last_os_error()));
        }
        if libc::isatty(0) == 1 {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
            if null < 0 || libc::dup2(null, 0) < 0 {
                return Err(format!("cannot take standard input off the terminal: {}", std::io::Error::last_os_error()));
            }
            libc::close(null);
        }
    }
    Ok(())
}

/// Clear the variables that name a door out (policy/environment.rs): the
/// host's control plane always, an agent's socket unless `granted` says a
/// rule or grant of the call names it. Returns the names cleared.
pub fn scrub_environment(granted: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut cleared = Vec::new();
    for &name in CONTROL_PLANE {
        if std::env::var_os(name).is_some() {
            std::env::remove_var(name);
            cleared.push(name.to_string());
        }
    }
    for &name in AGENT_SOCKETS {
        let Some(value) = std::env::var_os(name) else { continue };
        let keep = socket_path(&value.to_string_lossy()).is_some_and(granted);
        if !keep {
            std::env::remove_var(name);
            cleared.push(name.to_string());
        }
    }
    for &(name, with) in AGENT_COMPANIONS {
        if cleared.iter().any(|c| c == with) && std::env::var_os(name).is_some() {
            std::env::remove_var(name);
            cleared.push(name.to_string());
        }
    }
    cleared
}

/// The capabilities root keeps: the file-owner powers root's everyday
/// commands use (chown in `tar -x`, writing a file another user owns,
/// setuid in `runuser`), none of which reaches past Landlock or the
/// runner's mounts. It is Docker's default set less MKNOD, NET_RAW,
/// SETFCAP, SETPCAP and SYS_CHROOT. Everything else — SYS_ADMIN (mounts,
/// `mount_setattr`, `open_tree`, namespaces of others), DAC_READ_SEARCH
/// (`open_by_handle_at`), SYS_PTRACE, NET_ADMIN, NET_RAW (a raw packet to
/// the host's port), MKNOD, SYS_MODULE, SYS_RAWIO… — leaves the bounding
/// set, so no program the command starts can hold it.
pub const ROOT_KEEPS: &[u32] = &[
    0,  // CAP_CHOWN
    1,  // CAP_DAC_OVERRIDE
    3,  // CAP_FOWNER
    4,  // CAP_FSETID
    5,  // CAP_KILL (signals stay scoped to the fence by Landlock)
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    10, // CAP_NET_BIND_SERVICE
    29, // CAP_AUDIT_WRITE
];

/// Drop every capability outside [`ROOT_KEEPS`] from the bounding set (so
/// exec as root yields at most those) and from this process's sets, and
/// clear the ambient set. Needed only as root; in the user namespace an
/// ordinary user's runner enters, exec already leaves the command none.
pub fn drop_capabilities() -> Result<(), String> {
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        // Up to the first number this kernel does not know (EINVAL), which
        // /proc/sys/kernel/cap_last_cap would say at the price of a file
        // read; a drop (new credentials each time) only for what is there.
        for cap in 0..64u32 {
            let there = libc::prctl(libc::PR_CAPBSET_READ, cap as libc::c_ulong, 0, 0, 0);
            if there < 0 {
                let e = std::io::Error::last_os_error();
                // Every kernel with Landlock (5.13) knows 0 to
                // CAP_CHECKPOINT_RESTORE (40): an EINVAL before that is a
                // filter's answer, not the end of the list.
                if e.raw_os_error() == Some(libc::EINVAL) && cap > KNOWN_SINCE_LANDLOCK {
                    break;
                }
                return Err(format!("cannot read capability {cap} of the bounding set: {e}"));
            }
            if there == 1 && !ROOT_KEEPS.contains(&cap) && libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(format!("cannot drop capability {cap}: {}", std::io::Error::last_os_error()));
            }
        }
    }
    let keep = ROOT_KEEPS.iter().fold(0u64, |m, &c| m | (1 << c));
    let header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let get = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut now = [CapData::default(); 2];
    // SAFETY: version-3 header and two data words, as capget(2) wants.
    if unsafe { libc::syscall(libc::SYS_capget, &get as *const CapHeader, now.as_mut_ptr()) } != 0 {
        return Err(format!("cannot read this process's capabilities: {}", std::io::Error::last_os_error()));
    }
    let mut data = now;
    for (i, d) in data.iter_mut().enumerate() {
        let mask = (keep >> (32 * i)) as u32;
        d.effective &= mask;
        d.permitted &= mask;
        d.inheritable &= mask;
    }
    // SAFETY: as above, for capset(2).
    if unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) } != 0 {
        return Err(format!("cannot drop this process's capabilities: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// CAP_CHECKPOINT_RESTORE, the last capability of Linux 5.9.
const KNOWN_SINCE_LANDLOCK: u32 = 40;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Mark every descriptor above standard error close-on-exec: what the host
/// left open (a log, a folder in home, a socket) does not reach the
/// command. DSH passes nothing above 2.
pub fn close_inherited() -> Result<(), String> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with plain integers.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if r == 0 {
        return Ok(());
    }
    // Before Linux 5.11: each open descriptor, one by one.
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("cannot list this process's descriptors: {e}"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number; a closed one just fails.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// The call's standard output and error when they are a terminal: pipes
/// the supervisor copies onto the terminal. A terminal opened read-write
/// (as a shell opens it) would let the call read what the user types, and
/// reopening it through /proc/self/fd would too: the call never holds it.
pub struct Relay {
    /// (the pipe's read end, the terminal descriptor it is copied to).
    pub copies: Vec<(std::os::fd::OwnedFd, i32)>,
    /// The write ends, which the child puts at 1 and 2.
    pub ends: Vec<(std::os::fd::OwnedFd, i32)>,
}

impl Relay {
    /// A pipe for each of 1 and 2 that is a terminal; None when neither is.
    pub fn for_terminals() -> Result<Option<Relay>, String> {
        use std::os::fd::FromRawFd;
        let mut relay = Relay { copies: Vec::new(), ends: Vec::new() };
        for fd in [1, 2] {
            // SAFETY: isatty on a descriptor number.
            if unsafe { libc::isatty(fd) } != 1 {
                continue;
            }
            let mut p = [0; 2];
            // SAFETY: an array of the size passed.
            if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(format!("cannot make a pipe for the terminal: {}", std::io::Error::last_os_error()));
            }
            // SAFETY: two new descriptors, owned here.
            let (read, write) = unsafe { (std::os::fd::OwnedFd::from_raw_fd(p[0]), std::os::fd::OwnedFd::from_raw_fd(p[1])) };
            relay.copies.push((read, fd));
            relay.ends.push((write, fd));
        }
        Ok((!relay.copies.is_empty()).then_some(relay))
    }

    /// In the child: the pipes in place of the terminal.
    pub fn take_ends(&mut self) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        for (end, fd) in self.ends.drain(..) {
            // SAFETY: dup2 onto a standard descriptor (dup2 clears close-on-exec).
            if unsafe { libc::dup2(end.as_raw_fd(), fd) } < 0 {
                return Err(format!("cannot put the terminal's pipe in place: {}", std::io::Error::last_os_error()));
            }
        }
        self.copies.clear();
        Ok(())
    }

    /// Copy what is waiting in the pipe of `index` to its terminal; false
    /// at the pipe's end.
    pub fn copy(&self, index: usize) -> bool {
        use std::os::fd::AsRawFd;
        let (read, out) = &self.copies[index];
        let mut buf = [0u8; 16 * 1024];
        // SAFETY: a buffer of the length passed.
        let n = unsafe { libc::read(read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        }
        let mut at = 0;
        while at < n as usize {
            // SAFETY: the rest of the buffer read.
            let w = unsafe { libc::write(*out, buf[at..].as_ptr().cast(), n as usize - at) };
            if w <= 0 {
                break;
            }
            at += w as usize;
        }
        true
    }
}

/// The call's init, once the command runs: holds nothing of the call's
/// (the host waits for the end of the streams it passed, and the init may
/// outlive the command), and says what it is.
pub fn quiet_init(channel: i32) {
    // SAFETY: plain calls on the single-threaded init.
    unsafe {
        libc::close(channel);
        libc::prctl(libc::PR_SET_NAME, c"dsh-allow-init".as_ptr() as libc::c_ulong, 0, 0, 0);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..=2 {
            if null >= 0 {
                libc::dup2(null, fd);
            } else {
                libc::close(fd);
            }
        }
        if null > 2 {
            libc::close(null);
        }
    }
}
