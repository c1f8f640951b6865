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
//! every folder reached through it, which is why the folders must include
//! each one's parent (a compile's walk looks up every component; a set that
//! does not is not watched at all). A folder whose last component is a link
//! (`IN_DONT_FOLLOW`), that cannot be watched, that is not stamped or that
//! does not show changes (`/proc`, `/sys`, `/dev/pts`) is never vouched for.
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

/// The watched folders of one kept entry's version.
pub struct Watch {
    inotify: OwnedFd,
    version: String,
    folders: Vec<(String, Option<Seen>)>,
    /// Which folders each watch descriptor stands for.
    by_wd: HashMap<i32, Vec<usize>>,
    dirty: Vec<bool>,
}

impl Watch {
    /// Watch the folders the entry in `slot` stamps, and compare each with
    /// its stamp. `None`: no entry, no inotify, or folders without their
    /// parents.
    pub fn of(slot: &Path) -> Option<Watch> {
        let (version, folders) = kept::stamped_folders(slot)?;
        let names: std::collections::HashSet<&str> = folders.iter().map(|(p, _)| p.as_str()).collect();
        if !folders.iter().all(|(p, _)| p == "/" || names.contains(crate::paths::parent(p))) {
            return None;
        }
        // SAFETY: plain flags; a new descriptor, owned below.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let n = folders.len();
        let mut w = Watch { inotify: unsafe { OwnedFd::from_raw_fd(fd) }, version, folders, by_wd: HashMap::new(), dirty: vec![true; n] };
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
        let Some(stamp) = stamp.as_ref().filter(|_| kept::shows_changes(path)) else { return };
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
        self.dirty[i] = Seen::now(path).as_ref() != Some(stamp);
    }

    /// Read every event queued and mark what each may have changed.
    pub fn drain(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        loop {
            // SAFETY: a buffer of the length passed.
            let n = unsafe { libc::read(self.inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                // EAGAIN: nothing more. Any other failure: nothing is vouched.
                if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
                    self.dirty.iter_mut().for_each(|d| *d = true);
                }
                return;
            }
            let mut at = 0;
            let head = std::mem::size_of::<libc::inotify_event>();
            while at + head <= n as usize {
                // SAFETY: the kernel wrote whole events; read unaligned.
                let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                let name = &buf[at + head..at + head + ev.len as usize];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                self.mark(ev.wd, ev.mask, name);
                at += head + ev.len as usize;
            }
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

    /// The folders not vouched for.
    pub fn dirty(&self) -> impl Iterator<Item = &str> {
        self.folders.iter().zip(&self.dirty).filter(|(_, d)| **d).map(|((p, _), _)| p.as_str())
    }
}
