//! A folder's entries, read by `getdents64` into a buffer on the stack.
//!
//! std's `read_dir` goes through the C library's `opendir`. musl's (the
//! runner's C library on x86_64, scripts/build.sh) reads 2 KiB at a time
//! into a buffer it allocates with `mmap` and frees with `munmap`: three
//! system calls and two page faults more for every folder listed, ~160 of
//! them when a fence is compiled. Here a listing is one `openat`, one
//! `getdents64` per 16 KiB of entries, and one `close`, with either libc.

use std::ffi::{CStr, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// One entry of a listing (never `.` or `..`).
pub struct Entry {
    pub name: OsString,
    pub ino: u64,
    /// The kind as the file system reports it with the listing (`DT_*`),
    /// or as `lstat` found it where the file system does not (`DT_UNKNOWN`).
    pub kind: u8,
}

impl Entry {
    pub fn is_dir(&self) -> bool {
        self.kind == libc::DT_DIR
    }
    pub fn is_link(&self) -> bool {
        self.kind == libc::DT_LNK
    }
}

#[repr(C, align(8))]
struct Buffer([u8; 16 << 10]);

/// The entries of `dir`, in the order the file system lists them; `None`
/// when it cannot be opened or read as a folder.
pub fn list(dir: &Path) -> Option<Vec<Entry>> {
    entries(&open(dir).ok()?)
}

/// `dir` opened to be listed (its last component followed, as `list` does).
pub fn open(dir: &Path) -> std::io::Result<OwnedFd> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // By the system call: musl's `open` follows O_CLOEXEC with an fcntl
    // setting it again (for kernels before 2.6.23).
    // SAFETY: a NUL-terminated path; the descriptor is owned from here on.
    let fd = unsafe { libc::syscall(libc::SYS_openat, libc::AT_FDCWD, c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) } as libc::c_int;
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The entries of the folder open as `fd` (from its start: a descriptor
/// listed once), in the order the file system lists them; `None` when it
/// cannot be read. An entry's kind the listing does not give is looked up
/// in that same folder, never by a path that may name another by then.
pub fn entries(fd: &OwnedFd) -> Option<Vec<Entry>> {
    let mut buf = Buffer([0; 16 << 10]);
    let mut out = Vec::new();
    loop {
        // SAFETY: a buffer of the length passed, owned here.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd.as_raw_fd(), buf.0.as_mut_ptr(), buf.0.len()) };
        if n < 0 {
            return None;
        }
        if n == 0 {
            break;
        }
        let filled = &buf.0[..n as usize];
        let mut at = 0;
        // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
        while at + 19 < filled.len() {
            let ino = u64::from_ne_bytes(filled[at..at + 8].try_into().ok()?);
            let reclen = usize::from(u16::from_ne_bytes(filled[at + 16..at + 18].try_into().ok()?));
            let kind = filled[at + 18];
            let record = filled.get(at..at + reclen).filter(|_| reclen > 19)?;
            let name = CStr::from_bytes_until_nul(&record[19..]).ok()?;
            at += reclen;
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            let kind = if kind == libc::DT_UNKNOWN { kind_at(fd, name) } else { kind };
            out.push(Entry { name: OsStr::from_bytes(name.to_bytes()).to_os_string(), ino, kind });
        }
    }
    Some(out)
}

/// The `DT_*` kind of `name` in the folder `dir` (not followed),
/// `DT_UNKNOWN` if it is gone.
fn kind_at(dir: &OwnedFd, name: &CStr) -> u8 {
    // SAFETY: a zeroed stat for the kernel to fill; our descriptor and a
    // NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return libc::DT_UNKNOWN;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => libc::DT_DIR,
        libc::S_IFLNK => libc::DT_LNK,
        libc::S_IFREG => libc::DT_REG,
        libc::S_IFIFO => libc::DT_FIFO,
        libc::S_IFSOCK => libc::DT_SOCK,
        libc::S_IFCHR => libc::DT_CHR,
        libc::S_IFBLK => libc::DT_BLK,
        _ => libc::DT_UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::fs::DirEntryExt;

    #[test]
    fn lists_what_read_dir_lists_with_the_same_kinds_and_inodes() {
        let dir = std::env::temp_dir().join(format!("dsh-allow-listing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        // More names than one buffer holds, and every kind a test can make.
        for i in 0..1500 {
            std::fs::write(dir.join(format!("file-with-a-long-name-{i:05}")), b"").unwrap();
        }
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", dir.join("link")).unwrap();
        std::os::unix::fs::symlink("nowhere", dir.join("dangling")).unwrap();
        let want: BTreeMap<OsString, (u64, bool, bool)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let t = e.file_type().unwrap();
                (e.file_name(), (e.ino(), t.is_dir(), t.is_symlink()))
            })
            .collect();
        let got: BTreeMap<OsString, (u64, bool, bool)> =
            list(&dir).unwrap().into_iter().map(|e| (e.name.clone(), (e.ino, e.is_dir(), e.is_link()))).collect();
        let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
        assert_eq!(got.len(), 1503, "missing {missing:?}");
        assert_eq!(got, want);
        assert!(got[OsStr::new("sub")].1 && got[OsStr::new("link")].2 && got[OsStr::new("dangling")].2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_or_a_missing_folder_is_no_listing() {
        assert!(list(Path::new("/nonexistent/dsh-allow")).is_none());
        assert!(list(Path::new("/proc/self/status")).is_none());
    }
}
