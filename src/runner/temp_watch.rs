//! The keeper's watch on the temp folders, for the host's folders in them
//! (Linux).
//!
//! A call covers the DSH host's temp folders ([`super::host_temp`]), which
//! it finds by listing the temp folders whenever they changed since the
//! last listing. `/tmp` changes between most calls (compilers, test runs,
//! the calls themselves), and on a machine where it holds thousands of
//! entries a listing costs ~1.5 ms of CPU. Only the host's folders coming
//! or going matter. So the keeper watches each temp folder (inotify: an
//! entry made, removed or renamed there) and counts the events that name a
//! host temp folder; a *token* names the watch and that count. A call takes
//! the token before it lists and records it with what it covered; a later
//! call handed the same token knows no host folder came or went since that
//! listing began, and covers the same. Whatever the watch cannot follow
//! ends it, and no token is handed out until a new watch is set, whose
//! tokens match nothing recorded before: the queue overflowed, a temp folder
//! was removed, moved or unmounted, one is on a file system whose changes
//! need not pass through this kernel, or the host's mount table changed.
//!
//! A watch follows a folder, not its path: a folder above a temp folder
//! renamed, or a link on the way retargeted (`$TMPDIR` may lie below
//! `/tmp`, where calls may rename), makes the path name another folder
//! with no event on the watched one. So each token is handed out only
//! after every temp folder's path is looked up again and still names the
//! folder watched (its device and inode); else the watch ends.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::folder_watch::{local, read_events};

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;

/// What ends a watch: the queue overflowed, or a watched folder is gone,
/// moved or unmounted (its watch dropped).
const ENDS: u32 = libc::IN_Q_OVERFLOW | libc::IN_IGNORED | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_UNMOUNT;

pub struct TempWatch {
    inotify: OwnedFd,
    temps: Vec<String>,
    /// The folder each path named when it was watched (device, inode).
    folders: Vec<(u64, u64)>,
    /// This watch among every one ever set, on any boot (random).
    serial: String,
    /// Events that named a host temp folder.
    named: u64,
    ended: bool,
}

impl TempWatch {
    /// Watch every folder of `temps` (each path followed, as the call
    /// follows it to list); `None` when one cannot be watched (missing,
    /// not on a local file system).
    pub fn of(temps: &[String]) -> Option<TempWatch> {
        // SAFETY: plain flags; a new descriptor, owned below.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a descriptor just made, ours.
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut folders = Vec::with_capacity(temps.len());
        for t in temps {
            // The folder opened once, and the watch set on that very folder
            // (through its descriptor) with the identity recorded from it:
            // a path swapped meanwhile cannot put the watch on another.
            let c = CString::new(t.as_str()).ok()?;
            // SAFETY: a NUL-terminated path; the descriptor is owned below.
            let at = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
            if at < 0 {
                return None;
            }
            // SAFETY: a descriptor just opened, ours.
            let at = unsafe { OwnedFd::from_raw_fd(at) };
            // SAFETY: a zeroed stat for the kernel to fill, our descriptor.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(at.as_raw_fd(), &mut st) } != 0 {
                return None;
            }
            let through = CString::new(format!("/proc/self/fd/{}", at.as_raw_fd())).ok()?;
            // SAFETY: our inotify descriptor, a NUL-terminated path.
            if unsafe { libc::inotify_add_watch(fd, through.as_ptr(), MASK) } < 0 || !local(&through) {
                return None;
            }
            folders.push((st.st_dev, st.st_ino));
        }
        let mut random = [0u8; 16];
        // SAFETY: a buffer of the length passed.
        if unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) } != random.len() as isize {
            return None;
        }
        let serial = random.iter().map(|b| format!("{b:02x}")).collect();
        Some(TempWatch { inotify, temps: temps.to_vec(), folders, serial, named: 0, ended: false })
    }

    /// The temp folders watched.
    pub fn temps(&self) -> &[String] {
        &self.temps
    }

    /// The token for the state of the temp folders now (every change made
    /// before this was asked is queued by now); `None` once the watch ended.
    pub fn token(&mut self) -> Option<String> {
        let (named, ended) = (&mut self.named, &mut self.ended);
        let read = read_events(self.inotify.as_raw_fd(), |_, mask, name| {
            if mask & ENDS != 0 {
                *ended = true;
            } else if std::str::from_utf8(name).is_ok_and(crate::policy::baseline::is_host_temp_name) {
                *named += 1;
            }
        });
        self.ended |= !read;
        // Each path still names the folder watched (after the events: a
        // swap made before this was asked is seen here, one made later by
        // the next call's look).
        self.ended |= self.temps.iter().zip(&self.folders).any(|(t, f)| identity(t).as_ref() != Some(f));
        (!self.ended).then(|| format!("{}.{}", self.serial, self.named))
    }

    /// Whether this watch can hand out tokens no more.
    pub fn ended(&self) -> bool {
        self.ended
    }
}

/// The folder `path` names now (followed, as the call lists it): device
/// and inode.
fn identity(path: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok().filter(|m| m.is_dir())?;
    Some((m.dev(), m.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_moves_when_a_host_folder_comes_or_goes_not_for_other_entries_and_ends_with_its_folder() {
        let dir = std::env::temp_dir().join(format!("dsh-allow-temp-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let temps = vec![dir.to_string_lossy().into_owned()];
        let mut w = TempWatch::of(&temps).expect("a local folder is watched");
        let first = w.token().unwrap();
        std::fs::write(dir.join("build.log"), "x").unwrap();
        std::fs::create_dir(dir.join("dsh-spill-seven77")).unwrap();
        std::fs::remove_file(dir.join("build.log")).unwrap();
        assert_eq!(w.token().as_deref(), Some(first.as_str()), "entries no host makes moved the token");
        std::fs::create_dir(dir.join("dsh-spill-Ab12cd")).unwrap();
        let made = w.token().unwrap();
        assert_ne!(made, first);
        std::fs::rename(dir.join("dsh-spill-Ab12cd"), dir.join("elsewhere")).unwrap();
        let moved = w.token().unwrap();
        assert_ne!(moved, made, "a host folder renamed away kept the token");
        // Another watch of the same folders never hands out an earlier token.
        let mut again = TempWatch::of(&temps).unwrap();
        assert_ne!(again.token().unwrap(), first);
        // The path made to name another folder: no event on the watched
        // one, but no token either.
        let inner = dir.join("up/inner");
        std::fs::create_dir_all(&inner).unwrap();
        let mut deep = TempWatch::of(&[inner.to_string_lossy().into_owned()]).unwrap();
        assert!(deep.token().is_some());
        std::fs::rename(dir.join("up"), dir.join("up.old")).unwrap();
        std::fs::create_dir_all(&inner).unwrap();
        assert_eq!(deep.token(), None, "a path now naming another folder was vouched for");
        // The folder itself gone: no token any more.
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(w.token(), None);
        assert!(w.ended());
        assert!(TempWatch::of(&temps).is_none(), "a missing folder was watched");
    }
}
