//! The call's own entries (Linux): what the call itself created, known by
//! identity, not guessed from times or names.
//!
//! Our promise is that writing is not deleting: the workspace is writable,
//! but removing what is there asks. A call still has to remove and rename
//! what it made itself — SQLite's journal, a temp file renamed into place, a
//! cache folder renamed from a temp name — or everyday work fails with no
//! card. The runner creates every new entry the call asks for ([`super::hand`]
//! does it inside the fence) and keeps the identity of each here: the file
//! system's handle for the inode (inode number and generation, so a number
//! reused by a later file is not mistaken for it), with its device. An
//! entry is the call's own while the name points at one of these inodes.
//! What existed when the call began, a hard link the call made to it, a
//! file truncated and rewritten in place, one renamed in from elsewhere and
//! anything another process created keep inodes that are not here.

use std::collections::HashSet;
use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};

/// One inode, exactly: device, number, and a digest of the file system's
/// handle for it (which carries the generation), or of its birth time where
/// the file system gives no handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub fh: u64,
    /// The file type (`S_IFMT` bits), which an inode never changes.
    pub kind: u32,
}

impl Identity {
    pub fn is_dir(&self) -> bool {
        self.kind == libc::S_IFDIR
    }
}

/// `AT_HANDLE_FID` (Linux 6.5): a handle that identifies, for any file
/// system, even one that cannot reopen files by handle.
const AT_HANDLE_FID: libc::c_int = 0x200;
const MAX_HANDLE: usize = 128;

#[repr(C)]
struct FileHandle {
    bytes: u32,
    kind: i32,
    f: [u8; MAX_HANDLE],
}

/// The identity of the entry `name` in folder `dir` (its last component not
/// followed), or of `dir` itself when `name` is empty.
pub fn identity_at(dir: BorrowedFd, name: &CStr) -> Option<Identity> {
    entry_at(dir, name).map(|(id, _)| id)
}

/// [`identity_at`], and how many names the entry has (its link count).
pub fn entry_at(dir: BorrowedFd, name: &CStr) -> Option<(Identity, u64)> {
    let empty = name.to_bytes().is_empty();
    let flags = if empty { libc::AT_EMPTY_PATH } else { 0 } | libc::AT_SYMLINK_NOFOLLOW;
    // SAFETY: a zeroed statx buffer, a descriptor, a NUL-terminated name.
    // By its system call: musl before 1.2.5 (Debian 12's) has no wrapper.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let mask = libc::STATX_TYPE | libc::STATX_INO | libc::STATX_BTIME | libc::STATX_NLINK;
    let r = unsafe { libc::syscall(libc::SYS_statx, dir.as_raw_fd(), name.as_ptr(), flags, mask, &mut st as *mut libc::statx) };
    if r != 0 {
        return None;
    }
    let dev = libc::makedev(st.stx_dev_major, st.stx_dev_minor);
    let handle_flags = if empty { libc::AT_EMPTY_PATH } else { 0 };
    let fh = handle_digest(dir, name, handle_flags | AT_HANDLE_FID)
        .or_else(|| handle_digest(dir, name, handle_flags))
        .unwrap_or_else(|| if st.stx_mask & libc::STATX_BTIME != 0 { mix(st.stx_btime.tv_sec as u64, st.stx_btime.tv_nsec as u64) } else { 0 });
    Some((Identity { dev, ino: st.stx_ino, fh, kind: u32::from(st.stx_mode) & libc::S_IFMT }, u64::from(st.stx_nlink)))
}

/// The identity of what `fd` refers to.
pub fn identity_of(fd: BorrowedFd) -> Option<Identity> {
    identity_at(fd, c"")
}

fn handle_digest(dir: BorrowedFd, name: &CStr, flags: libc::c_int) -> Option<u64> {
    let mut h = FileHandle { bytes: MAX_HANDLE as u32, kind: 0, f: [0; MAX_HANDLE] };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: a handle buffer whose size field says its room, a descriptor,
    // a NUL-terminated name; name_to_handle_at never follows a last link
    // without AT_SYMLINK_FOLLOW.
    let r = unsafe { libc::syscall(libc::SYS_name_to_handle_at, dir.as_raw_fd(), name.as_ptr(), &mut h as *mut FileHandle, &mut mount_id, flags) };
    if r != 0 {
        return None;
    }
    let used = (h.bytes as usize).min(MAX_HANDLE);
    let mut d = mix(0, h.kind as u64);
    for chunk in h.f[..used].chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        d = mix(d, u64::from_ne_bytes(w));
    }
    Some(d)
}

/// A 64-bit mix (splitmix64's finaliser over the running value).
fn mix(acc: u64, word: u64) -> u64 {
    let mut z = acc ^ word.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The inodes the call created, for the call's lifetime (the supervisor
/// and, after the command, its detached copy hold one each).
#[derive(Clone, Debug, Default)]
pub struct Own {
    inodes: HashSet<Identity>,
    /// Folders the runner made before the fence for the line (outside the
    /// workspace, so grants inside them attach): the line's own `mkdir` of
    /// one, still empty, succeeds.
    premade: Vec<String>,
    /// Logs that stood before the call and that the call moved to a backup
    /// name ([`super::logs`]): the log made anew at that name keeps its
    /// backups.
    rotated: Vec<String>,
}

impl Own {
    pub fn insert(&mut self, id: Identity) {
        self.inodes.insert(id);
    }

    pub fn holds(&self, id: &Identity) -> bool {
        self.inodes.contains(id)
    }

    /// No longer the call's: removed, or now standing where the user's
    /// entry stood.
    pub fn forget(&mut self, id: &Identity) {
        self.inodes.remove(id);
    }

    pub fn len(&self) -> usize {
        self.inodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inodes.is_empty()
    }

    pub fn premade(&mut self, path: String) {
        self.premade.push(path);
    }

    pub fn was_premade(&self, path: &str) -> bool {
        self.premade.iter().any(|p| p == path)
    }

    pub fn rotate(&mut self, log: String) {
        if !self.rotated(&log) {
            self.rotated.push(log);
        }
    }

    pub fn rotated(&self, log: &str) -> bool {
        self.rotated.iter().any(|p| p == log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_file_is_known_again_by_its_identity_and_a_new_file_at_its_name_is_not() {
        let dir = std::env::temp_dir().join(format!("own-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x");
        std::fs::write(&f, "1").unwrap();
        let d = std::fs::File::open(&dir).unwrap();
        let first = identity_at(d.as_fd(), c"x").unwrap();
        let opened = std::fs::File::open(&f).unwrap();
        assert_eq!(identity_of(opened.as_fd()), Some(first), "by descriptor and by name alike");
        drop(opened);
        std::fs::remove_file(&f).unwrap();
        std::fs::write(&f, "2").unwrap();
        let second = identity_at(d.as_fd(), c"x").unwrap();
        assert_ne!(first, second, "a new file at the same name is another entry, even if its inode number came back");
        let mut own = Own::default();
        own.insert(first);
        assert!(own.holds(&first) && !own.holds(&second));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
