//! Who a fenced call may talk to: the socket half of the fence (Linux).
//!
//! Landlock fences paths, but a process can ask another one to act for it
//! through a socket: the DSH host's own web server (which answers cards,
//! stores rules, switches a session to danger-full-access), a user's daemon
//! on a unix socket (systemd's bus, docker, ssh-agent, an editor server).
//! The supervisor ([`super::supervise`]) gets every `connect(2)` and every
//! `sendto(2)` that names an address, reads the address once, and judges it
//! here:
//!
//! - a TCP or UDP port some DSH host process of this user listens on
//!   (found at that moment: [`super::hosts`]), reached at an address of
//!   this machine, is refused;
//! - a unix socket (a path or an abstract name) is refused unless a process
//!   of this very call listens on it, or a rule or grant of the call with
//!   write names its path (connecting to a socket is a write to it);
//! - everything else — outbound network, a dev server the agent started in
//!   an earlier call, a local database — goes through as before.
//!
//! What is allowed the supervisor then does itself, on the caller's own
//! socket, with the address it read: the kernel never reads the caller's
//! memory a second time, so a thread cannot swap the address in between.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::procs::{children_of, thread_group_of, Proc};

/// What a socket address names, read from the caller's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    Ip(IpAddr, u16),
    /// A path, as written (relative to the caller's working directory when
    /// not absolute).
    UnixPath(Vec<u8>),
    /// An abstract name, the leading NUL included (as the kernel lists it).
    UnixAbstract(Vec<u8>),
    /// Another family (netlink, AF_UNSPEC to disconnect…): not a door of
    /// this fence.
    Other(u16),
}

/// Decode a `struct sockaddr` of `bytes` (as many as the caller's length).
pub fn decode(bytes: &[u8]) -> Option<Peer> {
    let family = u16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?);
    let port = || bytes.get(2..4).map(|p| u16::from_be_bytes([p[0], p[1]]));
    match family as i32 {
        libc::AF_INET => {
            let a: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some(Peer::Ip(IpAddr::V4(Ipv4Addr::from(a)), port()?))
        }
        libc::AF_INET6 => {
            let a: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            let v6 = Ipv6Addr::from(a);
            // A v4-mapped address reaches the v4 listener.
            let ip = v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6));
            Some(Peer::Ip(ip, port()?))
        }
        libc::AF_UNIX => {
            let path = bytes.get(2..).unwrap_or(&[]);
            match path.first() {
                None => Some(Peer::Other(family)),
                Some(0) => Some(Peer::UnixAbstract(path.to_vec())),
                Some(_) => Some(Peer::UnixPath(path.split(|&b| b == 0).next().unwrap_or(&[]).to_vec())),
            }
        }
        _ => Some(Peer::Other(family)),
    }
}

/// A refusal: the errno the caller gets and the line the call's stderr gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub errno: i32,
    pub why: String,
}

/// How the caller's unix path was resolved: the file opened without a
/// second lookup (O_PATH), its real path.
pub struct Opened {
    pub fd: OwnedFd,
    pub real: String,
}

/// What the judge knows about this call.
#[derive(Clone)]
pub struct Judge {
    /// The DSH hosts (their listeners are the control plane), found live.
    pub hosts: super::hosts::Hosts,
    /// The roots a rule or grant of the call opens for write: a unix
    /// socket at or under one may be reached.
    pub socket_roots: Vec<(String, bool)>,
    /// The processes of this call, with their descendants; None: the
    /// supervisor's own children (it is their subreaper).
    pub tree: Option<Vec<Proc>>,
}

impl Judge {
    /// Judge a TCP/UDP peer.
    pub fn ip(&self, ip: IpAddr, port: u16) -> Result<(), Refusal> {
        let listening = listeners_on(port);
        if listening.is_empty() || !is_local(ip) {
            return Ok(());
        }
        if let Some(pid) = self.host_holding(&listening) {
            return Err(Refusal {
                errno: libc::EACCES,
                why: format!("connect to {}: a listener of the DSH host (pid {pid}), which no fenced call may reach", show_ip(ip, port)),
            });
        }
        Ok(())
    }

    /// Judge a unix socket the caller named by path, already opened.
    pub fn unix_path(&self, opened: &Opened) -> Result<(), Refusal> {
        let st = fstat(&opened.fd).map_err(|e| Refusal { errno: e, why: String::new() })?;
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            // The kernel's own answer for a path that is not a socket.
            return Err(Refusal { errno: libc::ECONNREFUSED, why: String::new() });
        }
        let sockets = unix_sockets().map_err(unlisted)?;
        let bound = sockets.iter().filter(|s| s.vfs == Some((dev_major_minor(st.st_dev), st.st_ino as u32))).map(|s| s.ino).collect();
        self.unix(&opened.real, &bound, true)
    }

    /// Judge an abstract unix name.
    pub fn unix_abstract(&self, name: &[u8]) -> Result<(), Refusal> {
        let sockets = unix_sockets().map_err(unlisted)?;
        let bound = sockets.iter().filter(|s| s.name.as_deref() == Some(name)).map(|s| s.ino).collect();
        let shown = format!("@{}", String::from_utf8_lossy(&name[1..]).replace('\0', "@"));
        self.unix(&shown, &bound, false)
    }

    fn unix(&self, shown: &str, bound: &BTreeSet<u64>, named_by_path: bool) -> Result<(), Refusal> {
        if let Some(pid) = self.host_holding(bound) {
            return Err(Refusal { errno: libc::EACCES, why: format!("connect to unix socket {shown}: a socket of the DSH host (pid {pid})") });
        }
        // Nothing listens: the kernel refuses it by itself.
        if bound.is_empty() {
            return Ok(());
        }
        if self.tree_holds(bound) {
            return Ok(());
        }
        if named_by_path && self.names_socket(shown) {
            return Ok(());
        }
        Err(Refusal {
            errno: libc::EACCES,
            why: format!("connect to unix socket {shown}: a process outside this call listens there and no rule or grant of the call names it (write)"),
        })
    }

    /// Whether a rule or grant of the call with write names this socket path.
    pub fn names_socket(&self, path: &str) -> bool {
        self.socket_roots.iter().any(|(root, recursive)| path == root || (*recursive && crate::paths::within(path, root)))
    }

    fn host_holding(&self, inodes: &BTreeSet<u64>) -> Option<i32> {
        if inodes.is_empty() {
            return None;
        }
        self.hosts.live().into_iter().find(|&pid| socket_inodes(pid).iter().any(|i| inodes.contains(i)))
    }

    fn tree_holds(&self, inodes: &BTreeSet<u64>) -> bool {
        self.tree_any(|pid| socket_inodes(pid).iter().any(|i| inodes.contains(i)))
    }

    /// Whether a process belongs to this call (a thread: its process).
    pub fn in_call(&self, pid: i32) -> bool {
        let pid = thread_group_of(pid).unwrap_or(pid);
        self.tree_any(|p| p == pid)
    }

    /// Whether any process of this call satisfies `f`.
    fn tree_any(&self, f: impl Fn(i32) -> bool) -> bool {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<i32> = match &self.tree {
            Some(listed) => listed.iter().filter(|p| p.alive()).map(|p| p.pid).collect(),
            None => children_of(std::process::id() as i32),
        };
        while let Some(pid) = todo.pop() {
            if !seen.insert(pid) {
                continue;
            }
            if f(pid) {
                return true;
            }
            todo.extend(children_of(pid));
        }
        false
    }
}

/// Who listens cannot be told: refused (fail closed).
fn unlisted(errno: i32) -> Refusal {
    Refusal { errno: libc::EACCES, why: format!("connect to a unix socket: its listeners could not be listed (sock_diag: errno {errno})") }
}

fn show_ip(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    }
}

/// An address of this machine: loopback, unspecified, or one of its
/// interfaces' (a listener on 0.0.0.0 answers at all of them).
fn is_local(ip: IpAddr) -> bool {
    if ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    interface_addresses().contains(&ip)
}

fn interface_addresses() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills a list we free below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return out;
    }
    let mut at = list;
    while !at.is_null() {
        // SAFETY: a node of the list getifaddrs made.
        let ifa = unsafe { &*at };
        if !ifa.ifa_addr.is_null() {
            // SAFETY: ifa_addr points at a sockaddr of its family's size.
            let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
            let len = match family {
                libc::AF_INET => std::mem::size_of::<libc::sockaddr_in>(),
                libc::AF_INET6 => std::mem::size_of::<libc::sockaddr_in6>(),
                _ => 0,
            };
            if len > 0 {
                // SAFETY: as above, `len` bytes of it.
                let bytes = unsafe { std::slice::from_raw_parts(ifa.ifa_addr as *const u8, len) };
                if let Some(Peer::Ip(ip, _)) = decode(bytes) {
                    out.push(ip);
                }
            }
        }
        at = ifa.ifa_next;
    }
    // SAFETY: the list getifaddrs returned.
    unsafe { libc::freeifaddrs(list) };
    out
}

/// The inodes of the TCP sockets listening on `port`, and the UDP sockets
/// bound to it, in this network namespace (/proc/net/{tcp,tcp6,udp,udp6}).
fn listeners_on(port: u16) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for (file, listen_only) in [("tcp", true), ("tcp6", true), ("udp", false), ("udp6", false)] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/net/{file}")) else { continue };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) = (cols.get(1), cols.get(3), cols.get(9)) else { continue };
            let Some(p) = local.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok()) else { continue };
            // 0A is TCP_LISTEN.
            if p == port && (!listen_only || *state == "0A") {
                if let Ok(i) = inode.parse::<u64>() {
                    out.insert(i);
                }
            }
        }
    }
    out
}

/// The socket inodes a process holds open (`socket:[N]` links in its fd folder).
fn socket_inodes(pid: i32) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let s = l.to_string_lossy().into_owned();
            s.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

fn fstat(fd: &OwnedFd) -> Result<libc::stat, i32> {
    // SAFETY: zeroed plain data, filled by fstat on a descriptor we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(super::seccomp::errno());
    }
    Ok(st)
}

/// A device number as (major, minor): unix_diag reports the kernel's
/// internal encoding, stat(2) the userspace one.
fn dev_major_minor(dev: libc::dev_t) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// One unix socket as sock_diag(7) lists it.
struct UnixSocket {
    ino: u64,
    name: Option<Vec<u8>>,
    /// The (major, minor) device and inode of the file it is bound to.
    vfs: Option<((u32, u32), u32)>,
}

// include/uapi/linux/{netlink,sock_diag,unix_diag}.h.
const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const UDIAG_SHOW_NAME: u32 = 1;
const UDIAG_SHOW_VFS: u32 = 2;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
/// Listening stream sockets and bound datagram ones can be reached.
const TCP_LISTEN: u8 = 10;

/// Every unix socket of this network namespace that can be reached: the
/// listening ones and the datagram ones, with name and bound file.
fn unix_sockets() -> Result<Vec<UnixSocket>, i32> {
    // SAFETY: a plain socket call; the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, NETLINK_SOCK_DIAG) };
    if fd < 0 {
        return Err(super::seccomp::errno());
    }
    // SAFETY: a new descriptor, owned here.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = [0u8; 16 + 24];
    let total = req.len() as u32;
    req[0..4].copy_from_slice(&total.to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req[16] = libc::AF_UNIX as u8;
    req[20..24].copy_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req[28..32].copy_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS).to_ne_bytes());
    req[32..40].copy_from_slice(&[0xff; 8]); // no cookie
    // SAFETY: a buffer of the length passed.
    if unsafe { libc::send(sock.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } < 0 {
        return Err(super::seccomp::errno());
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: a buffer of the length passed.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            return Err(super::seccomp::errno());
        }
        if parse_diag(&buf[..n as usize], &mut out) {
            return Ok(out);
        }
    }
}

/// Parse one datagram of the dump into `out`; true at its end.
fn parse_diag(mut buf: &[u8], out: &mut Vec<UnixSocket>) -> bool {
    let word = |b: &[u8], at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap());
    while buf.len() >= 16 {
        let len = (word(buf, 0) as usize).min(buf.len());
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        if kind == NLMSG_DONE || kind == NLMSG_ERROR || len < 16 {
            return true;
        }
        let msg = &buf[16..len];
        // struct unix_diag_msg: family, type, state, pad, ino, cookie[2].
        if msg.len() >= 16 {
            let (kind, state) = (msg[1] as i32, msg[2]);
            let mut s = UnixSocket { ino: word(msg, 4) as u64, name: None, vfs: None };
            let mut attrs = &msg[16..];
            while attrs.len() >= 4 {
                let alen = (u16::from_ne_bytes([attrs[0], attrs[1]]) as usize).clamp(4, attrs.len());
                let atype = u16::from_ne_bytes([attrs[2], attrs[3]]);
                let data = &attrs[4..alen];
                if atype == UNIX_DIAG_NAME {
                    s.name = Some(data.to_vec());
                } else if atype == UNIX_DIAG_VFS && data.len() >= 8 {
                    let dev = word(data, 4);
                    // The kernel's dev_t: major in the high 12 bits of 32.
                    s.vfs = Some(((dev >> 20, dev & 0xfffff), word(data, 0)));
                }
                attrs = &attrs[((alen + 3) & !3).min(attrs.len())..];
            }
            if state == TCP_LISTEN || kind == libc::SOCK_DGRAM {
                out.push(s);
            }
        }
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
    false
}

/// Read a socket address once and judge it: the verdict, and for a unix
/// path the socket file opened while judging (what the send goes to).
pub fn judge_address(pid: u32, bytes: &[u8], judge: &Judge) -> (Result<(), Refusal>, Option<Opened>) {
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
pub fn open_for(pid: u32, path: &[u8]) -> Result<Opened, i32> {
    let base = if path.first() == Some(&b'/') { format!("/proc/{pid}/root") } else { format!("/proc/{pid}/cwd/") };
    let mut full = base.into_bytes();
    full.extend_from_slice(path);
    let c = std::ffi::CString::new(full).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(super::seccomp::errno());
    }
    // SAFETY: a new descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Opened { fd, real })
}

pub fn unix_address(path: &str) -> Vec<u8> {
    let mut b = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    b.extend_from_slice(path.as_bytes());
    b.push(0);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr_in(a: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        b.extend(port.to_be_bytes());
        b.extend(a);
        b.extend([0u8; 8]);
        b
    }

    #[test]
    fn addresses_decode_as_the_kernel_reads_them() {
        assert_eq!(decode(&sockaddr_in([127, 0, 0, 1], 8080)), Some(Peer::Ip("127.0.0.1".parse().unwrap(), 8080)));
        let mut v6 = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        v6.extend(443u16.to_be_bytes());
        v6.extend([0u8; 4]);
        v6.extend("::ffff:127.0.0.1".parse::<Ipv6Addr>().unwrap().octets());
        v6.extend([0u8; 4]);
        assert_eq!(decode(&v6), Some(Peer::Ip("127.0.0.1".parse().unwrap(), 443)), "a v4-mapped address is the v4 one");
        let mut un = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        un.extend(b"/run/x.sock\0garbage");
        assert_eq!(decode(&un), Some(Peer::UnixPath(b"/run/x.sock".to_vec())));
        let mut ab = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        ab.extend(b"\0name\0x");
        assert_eq!(decode(&ab), Some(Peer::UnixAbstract(b"\0name\0x".to_vec())), "an abstract name keeps every byte");
        assert_eq!(decode(&[1]), None);
        assert_eq!(decode(&(libc::AF_NETLINK as u16).to_ne_bytes()), Some(Peer::Other(libc::AF_NETLINK as u16)));
    }
}
