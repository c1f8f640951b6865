//! The keeper's proof of a held fence's folders (Linux).
//!
//! A call reuses a kept fence only while every folder its compile looked in
//! is as the entry stamps it (kept.rs): one `lstat` per folder, ~160 for the
//! default profile, every call. The keeper holds the fence between calls,
//! so it can watch those folders instead: an inotify watch on each, set
//! *before* the folder is compared with its stamp, so a change after the
//! comparison is an event and one before it a mismatch. Answering a call,
//! it first reads every event queued (the kernel queues them inside the
//! system call that made the change, so a change made before the call asked
//! is there) and vouches for every folder neither changed nor touched since;
//! the call looks up the rest itself.
//!
//! What an event on folder P marks, conservatively: P itself (its times
//! moved), and when the event names an entry N, every folder at or below
//! P/N (the entry may have been a folder, or a link on the way to one, now
//! renamed, removed or replaced). An event on P itself (its attributes, its
//! removal or move, the watch dropped) marks P and everything below it. A
//! queue that overflowed marks all. So a rename of an ancestor reaches
//! every folder reached through it — only if that ancestor is watched: a
//! folder is vouched for only when it and every folder above it hold a live
//! watch (a compile's walk looks up every component, so each one's parent is
//! in the set; a set that lacks one is not watched at all). Every folder is
//! watched, stamped or not, but only on a file system whose changes all pass
//! through this kernel (ext4, xfs, btrfs, tmpfs, overlay…): on a network or
//! FUSE file system a change made elsewhere makes no event, and such a folder,
//! and all below it, is never vouched for. Nor is a folder whose last
//! component is a link (`IN_DONT_FOLLOW`), that cannot be watched, that is
//! not stamped or that does not show changes (`/proc`, `/sys`, `/dev/pts`).
//! Mounts make no events: the keeper drops everything it holds when the
//! host's mount table changes (keeper.rs).

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use super::kept::{self, Seen};

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_ATTRIB
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW;

/// File systems whose every change passes through this kernel, so makes an
/// inotify event (`statfs` magic numbers): ext2/3/4, xfs, btrfs, tmpfs,
/// ramfs, f2fs, zfs, overlay.
const LOCAL: &[i64] = &[0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x8584_58f6, 0xF2F5_2010, 0x2FC1_2FC1, 0x794C_7630];

/// The watched folders of one kept entry's version.
pub struct Watch {
    inotify: OwnedFd,
    version: String,
    folders: Vec<(String, Option<Seen>)>,
    /// Each folder's parent in `folders` (`None` for `/`).
    parents: Vec<Option<usize>>,
    /// Which folders each watch descriptor stands for.
    by_wd: HashMap<i32, Vec<usize>>,
    /// Whether each folder holds a live watch on a local file system.
    watched: Vec<bool>,
    dirty: Vec<bool>,
}

impl Watch {
    /// Watch the folders the entry in `slot` stamps, and compare each with
    /// its stamp. `None`: no entry, no inotify, or folders without their
    /// parents.
    pub fn of(slot: &Path) -> Option<Watch> {
        let (version, folders) = kept::stamped_folders(slot)?;
        let at: HashMap<&str, usize> = folders.iter().enumerate().map(|(i, (p, _))| (p.as_str(), i)).collect();
        let mut parents = Vec::with_capacity(folders.len());
        for (p, _) in &folders {
            parents.push(if p == "/" { None } else { Some(*at.get(crate::paths::parent(p))?) });
        }
        // SAFETY: plain flags; a new descriptor, owned below.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let n = folders.len();
        let mut w = Watch { inotify: unsafe { OwnedFd::from_raw_fd(fd) }, version, folders, parents, by_wd: HashMap::new(), watched: vec![false; n], dirty: vec![true; n] };
        for i in 0..n {
            w.check(i);
        }
        Some(w)
    }

    /// The version of the entry whose stamps this proves.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Watch folder `i` (again), then compare it with its stamp: clean
    /// only when watched and as stamped.
    fn check(&mut self, i: usize) {
        let (path, stamp) = &self.folders[i];
        if !kept::shows_changes(path) {
            return;
        }
        let Ok(c) = CString::new(path.as_str()) else { return };
        // SAFETY: our inotify descriptor, a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.inotify.as_raw_fd(), c.as_ptr(), MASK) };
        if wd < 0 {
            return;
        }
        let at = self.by_wd.entry(wd).or_default();
        if !at.contains(&i) {
            at.push(i);
        }
        // Watched, the folder is as stamped or not; on a file system that
        // could change behind the kernel's back it is watched for nothing.
        self.watched[i] = local(&c);
        self.dirty[i] = stamp.is_none() || Seen::now(path).as_ref() != stamp.as_ref();
    }

    /// Read every event queued and mark what each may have changed.
    pub fn drain(&mut self) {
        let fd = self.inotify.as_raw_fd();
        // A failed read (not EAGAIN): nothing is vouched.
        if !read_events(fd, |wd, mask, name| self.mark(wd, mask, name)) {
            self.dirty.iter_mut().for_each(|d| *d = true);
        }
    }

    fn mark(&mut self, wd: i32, mask: u32, name: &[u8]) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            self.dirty.iter_mut().for_each(|d| *d = true);
            return;
        }
        let Some(at) = self.by_wd.get(&wd).cloned() else { return };
        if mask & libc::IN_IGNORED != 0 {
            self.by_wd.remove(&wd);
            for &i in &at {
                self.watched[i] = false;
            }
        }
        let name = std::str::from_utf8(name).ok().filter(|n| !n.is_empty());
        for i in at {
            let folder = self.folders[i].0.clone();
            self.dirty[i] = true;
            let below = match name {
                Some(n) if folder == "/" => format!("/{n}"),
                Some(n) => format!("{folder}/{n}"),
                // Not UTF-8, or the folder itself: all below it.
                None => folder,
            };
            for (j, (p, _)) in self.folders.iter().enumerate() {
                if crate::paths::within(p, &below) {
                    self.dirty[j] = true;
                }
            }
        }
    }

    /// Compare the folders marked with their stamps again (after reading
    /// the events queued): those as stamped are clean once more.
    pub fn recheck(&mut self) {
        self.drain();
        for i in 0..self.folders.len() {
            if self.dirty[i] {
                self.check(i);
            }
        }
    }

    /// Whether folder `i` is vouched for: as stamped since it was watched,
    /// and it and every folder above it watched (a rename anywhere above
    /// makes an event).
    fn vouched(&self, i: usize) -> bool {
        let mut at = Some(i);
        while let Some(j) = at {
            if !self.watched[j] {
                return false;
            }
            at = self.parents[j];
        }
        !self.dirty[i]
    }

    /// The folders not vouched for.
    pub fn dirty(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.folders.len()).filter(|&i| !self.vouched(i)).map(|i| self.folders[i].0.as_str())
    }
}

/// Hand every event queued on the inotify descriptor `fd` to `each` (its
/// watch, mask and the entry it names, if any). False when reading failed
/// for another reason than an empty queue.
pub(super) fn read_events(fd: i32, mut each: impl FnMut(i32, u32, &[u8])) -> bool {
    let mut buf = [0u8; 16 * 1024];
    loop {
        // SAFETY: a buffer of the length passed.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return n == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN);
        }
        let mut at = 0;
        let head = std::mem::size_of::<libc::inotify_event>();
        while at + head <= n as usize {
            // SAFETY: the kernel wrote whole events; read unaligned.
            let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
            let name = &buf[at + head..at + head + ev.len as usize];
            each(ev.wd, ev.mask, &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())]);
            at += head + ev.len as usize;
        }
    }
}

/// Whether the folder at `path` is on a file system whose every change
/// passes through this kernel.
pub(super) fn local(path: &CString) -> bool {
    // SAFETY: a zeroed statfs for the kernel to fill, a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(path.as_ptr(), &mut st) } != 0 {
        return false;
    }
    LOCAL.contains(&(st.f_type as i64))
}
