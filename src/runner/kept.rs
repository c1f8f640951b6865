//! The runner's compiled fences, kept between calls (Linux).
//!
//! Compiling a fence walks about a hundred paths and is most of what the
//! runner costs at start-up, yet one session asks for the same fence call
//! after call. A compiled fence depends on the profile, on this binary and
//! kernel, and on what the walk saw; the walk only ever looks at entries of
//! folders, and a folder whose entries change (created, removed, renamed,
//! swapped for a link) gets a new mtime and ctime. So a fence is kept with
//! the identity and timestamps of every folder its compile looked in, and is
//! used again only while all of them are unchanged.
//!
//! Timestamps are coarse: a change in the same clock tick as an earlier one
//! may leave them equal. A fence is therefore kept only when every folder it
//! depends on was last changed more than a second before the compile began,
//! so any later change shows. ctime cannot be set by a process, so a folder
//! changed and then given its old mtime back still shows.
//!
//! The cache folder must be one of the profile's protected paths: the fence
//! it holds is applied without being recompiled, so whatever the fenced
//! command may write must never reach it.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::paths;
use crate::fence::ProfileRequest;
use crate::fence::landlock::Rules;

const HEADER: &str = "dsh-allow fence 1";
/// Fences kept at once (one file each, by the hash of their key): sessions
/// with one-shot grants make a new profile per call, and the folder must not
/// grow without bound.
const SLOTS: u64 = 64;
/// How long before the compile a folder must have last changed (ns).
const SETTLED_NS: i128 = 1_000_000_000;

/// What a folder looked like: identity and both change times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl Seen {
    fn of(m: &std::fs::Metadata) -> Seen {
        Seen {
            dev: m.dev(),
            ino: m.ino(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
        }
    }

    /// The folder at `path` now (not following a link there).
    pub fn now(path: &str) -> Option<Seen> {
        let m = std::fs::symlink_metadata(path).ok()?;
        m.is_dir().then(|| Seen::of(&m))
    }
}

/// A kept fence: the key it was compiled for, the folders it depends on and
/// the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub folders: BTreeMap<String, Seen>,
    pub rules: Rules,
}

/// The text of an entry, or `None` when a path cannot be written on one
/// line (such a fence is simply not kept).
pub fn render(e: &Entry) -> Option<String> {
    let plain = |s: &str| !s.contains('\n') && !s.is_empty();
    if !plain(&e.key) || !e.folders.keys().all(|p| plain(p)) || !e.rules.rules.iter().all(|(p, _)| plain(p)) {
        return None;
    }
    let mut out = format!("{HEADER}\nkey {}\nhandled {}\n", e.key, e.rules.handled);
    for (path, s) in &e.folders {
        out.push_str(&format!("folder {} {} {} {} {path}\n", s.dev, s.ino, s.mtime_ns, s.ctime_ns));
    }
    for (path, access) in &e.rules.rules {
        out.push_str(&format!("rule {access} {path}\n"));
    }
    out.push_str("end\n");
    Some(out)
}

/// Read an entry back; anything malformed or cut short is no entry.
pub fn parse(text: &str) -> Option<Entry> {
    let mut lines = text.split('\n');
    if lines.next()? != HEADER {
        return None;
    }
    let key = lines.next()?.strip_prefix("key ")?.to_string();
    let handled = lines.next()?.strip_prefix("handled ")?.parse().ok()?;
    let mut folders = BTreeMap::new();
    let mut rules = Vec::new();
    for line in lines {
        if line == "end" {
            return Some(Entry { key, folders, rules: Rules { handled, rules } });
        }
        if let Some(rest) = line.strip_prefix("folder ") {
            let mut f = rest.splitn(5, ' ');
            let seen = Seen {
                dev: f.next()?.parse().ok()?,
                ino: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                ctime_ns: f.next()?.parse().ok()?,
            };
            folders.insert(f.next()?.to_string(), seen);
        } else if let Some(rest) = line.strip_prefix("rule ") {
            let (access, path) = rest.split_once(' ')?;
            rules.push((path.to_string(), access.parse().ok()?));
        } else {
            return None;
        }
    }
    None
}

/// What a fence is compiled from besides the file system: the profile, the
/// kernel's Landlock ABI and this very binary (a rebuilt runner compiles
/// afresh).
/// The binary is known by version and by file identity with its ctime
/// (npm packs every file with one fixed mtime, and a process cannot set a
/// ctime); `None` when that identity cannot be read (nothing is then kept).
pub fn key(req: &ProfileRequest, abi: u32) -> Option<String> {
    let m = std::fs::metadata("/proc/self/exe").ok()?;
    let exe = format!("{}:{}:{}.{}:{}.{}:{}", m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.size());
    let profile = serde_json::to_string(req).expect("a profile serializes");
    Some(format!("version={} abi={abi} exe={exe} {profile}", env!("CARGO_PKG_VERSION")))
}

/// Whether a compiled fence was kept, and why not (for `--report-fence`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Kept,
    NotKept(String),
}

pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir`, which the profile must protect: otherwise the
    /// fenced command could write the fence its next call runs under.
    pub fn new(dir: &str, req: &ProfileRequest) -> Result<Cache, String> {
        if !dir.starts_with('/') {
            return Err(format!("--fence-cache needs an absolute folder, got {dir:?}"));
        }
        let dir = paths::normalize(dir);
        if !req.protected_files.iter().any(|p| paths::normalize(p) == dir) {
            return Err(format!(
                "--fence-cache {dir} is not one of the profile's protected paths; a fence kept where the command may write could be forged"
            ));
        }
        Ok(Cache { dir: PathBuf::from(dir) })
    }

    fn slot(&self, key: &str) -> PathBuf {
        // FNV-1a: stable across builds and platforms, and enough to spread keys.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in key.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        self.dir.join(format!("fence-{:02}", h % SLOTS))
    }

    /// The fence kept for `key`, if every folder it depends on is unchanged.
    pub fn reuse(&self, key: &str) -> Option<Rules> {
        // No symlink anywhere on the way: the profile protects the folder
        // by its real path, so a link in the spelling could lead elsewhere.
        let mut f = std::fs::File::from(open_no_symlinks(&self.slot(key)).ok()?);
        let m = f.metadata().ok()?;
        // Ours alone: owned by us and written by nobody else.
        // SAFETY: geteuid has no preconditions.
        if !m.is_file() || m.uid() != unsafe { libc::geteuid() } || m.mode() & 0o022 != 0 {
            return None;
        }
        // Plain reads into room for the whole file (read_to_string would
        // ask for the size and position first: two more system calls).
        let mut buf = vec![0u8; m.len() as usize + 1];
        let mut n = 0;
        loop {
            match f.read(&mut buf[n..]).ok()? {
                0 => break,
                k => n += k,
            }
            if n == buf.len() {
                return None;
            }
        }
        let e = parse(std::str::from_utf8(&buf[..n]).ok()?)?;
        // Every walk looks in `/`: an entry without it was not written by a
        // compile, and would never go stale.
        if e.key != key || !e.folders.contains_key("/") {
            return None;
        }
        e.folders.iter().all(|(path, seen)| Seen::now(path).as_ref() == Some(seen)).then_some(e.rules)
    }

    /// Keep a fence compiled from `key` after looking in `folders`, the
    /// compile having begun at `began`.
    pub fn keep(&self, key: &str, rules: &Rules, folders: &[String], began: SystemTime) -> Outcome {
        let began_ns = match began.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return Outcome::NotKept("the clock is before 1970".into()),
        };
        let mut seen = BTreeMap::new();
        for path in folders {
            // These change entries without changing their folders' times.
            if ["/proc", "/sys", "/dev/pts"].iter().any(|v| paths::within(path, v)) {
                return Outcome::NotKept(format!("{path} does not show changes in its times"));
            }
            let Some(s) = Seen::now(path) else {
                return Outcome::NotKept(format!("{path} is no longer a folder"));
            };
            if s.mtime_ns.max(s.ctime_ns) > began_ns - SETTLED_NS {
                return Outcome::NotKept(format!("{path} changed less than a second before the compile"));
            }
            seen.insert(path.clone(), s);
        }
        let entry = Entry { key: key.to_string(), folders: seen, rules: rules.clone() };
        let Some(text) = render(&entry) else {
            return Outcome::NotKept("a path holds a line break".into());
        };
        match self.write(&self.slot(key), &text) {
            Ok(()) => Outcome::Kept,
            Err(e) => Outcome::NotKept(format!("cannot write to {}: {e}", self.dir.display())),
        }
    }

    /// Write beside, then rename over: a reader sees a whole entry or none.
    fn write(&self, slot: &Path, text: &str) -> std::io::Result<()> {
        match std::fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let tmp = slot.with_extension(format!("{}.tmp", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        let written = f.write_all(text.as_bytes()).and_then(|_| std::fs::rename(&tmp, slot));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// Open `path` read-only with no symlink followed on the way (openat2
/// `RESOLVE_NO_SYMLINKS`; where openat2 is filtered out, nothing is opened).
fn open_no_symlinks(path: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: open_how is plain integers; all-zero is its empty value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: a NUL-terminated path and an open_how of the size passed.
    let fd = unsafe {
        libc::syscall(libc::SYS_openat2, libc::AT_FDCWD, c.as_ptr(), &how as *const libc::open_how, std::mem::size_of::<libc::open_how>())
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, owned here.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}
