//! The runner's compiled fences, kept between calls (Linux).
//!
//! Compiling a fence walks a few hundred paths and is most of what the
//! runner costs at start-up, yet one session asks for the same fence call
//! after call. A compiled fence depends on what the profile means (not on
//! the host's pids or the call's folders, which it never reads), on this
//! binary and kernel, and on what its walk found: each name it looked up in
//! a folder (missing, a folder, a file, a link and its text) and the
//! entries of each folder it listed to compile around a shut path. A fence
//! is kept with all of those, and used again only while each would be found
//! the same: then compiling afresh would give the very same rules, each
//! opened again by its path when the fence goes up.
//!
//! Proving every lookup again costs one `lstat` each, so a folder vouches
//! for the lookups in it while its identity and times are those recorded: a
//! folder whose entries are created, removed, renamed or swapped for a link
//! gets a new mtime and ctime. Timestamps are coarse, so a folder vouches
//! only when it was last changed more than a second before its lookups were
//! made; a folder changed since, or too recently, has its own lookups proven
//! one by one instead. A file written in the workspace (the workspace's
//! times move) therefore costs a handful of `lstat`s, not a compile.
//! `/proc`, `/sys` and `/dev/pts` do not show changes in their times and
//! never vouch. ctime cannot be set by a process, so a folder changed and
//! given its old mtime back still shows.
//!
//! The cache folder must be one of the profile's protected paths: the fence
//! it holds is applied without being recompiled, so whatever the fenced
//! command may write must never reach it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::api::{Mode, Platform};
use crate::fence::landlock::Rules;
use crate::fence::{Enforce, ProfileRequest};
use crate::fs_host::{Found, Looked};
use crate::paths;
use crate::policy::capability::Access;

const HEADER: &str = "dsh-allow fence 4";
/// Fences kept at once (one file each, by the hash of their key): sessions
/// with one-shot grants make a new profile per call, and the folder must not
/// grow without bound.
const SLOTS: u64 = 64;
/// How long before its lookups a folder must have last changed (ns).
const SETTLED_NS: i128 = 1_000_000_000;
/// Re-proving at least this many lookups (a listing counts as
/// [`LISTING_WEIGHT`]) rewrites the entry with the folders' new times, so
/// the next call has a stamp to trust instead.
const REFRESH_AT: usize = 32;
const LISTING_WEIGHT: usize = 16;

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

    /// Whether these times may vouch for lookups made at `at_ns`: last
    /// changed more than a second before, in a folder that shows changes.
    fn settled(&self, path: &str, at_ns: i128) -> bool {
        shows_changes(path) && self.mtime_ns.max(self.ctime_ns) <= at_ns - SETTLED_NS
    }
}

/// Whether a folder's times (and the events on it) show changes: not in
/// `/proc`, `/sys` or `/dev/pts`.
pub fn shows_changes(path: &str) -> bool {
    !["/proc", "/sys", "/dev/pts"].iter().any(|v| paths::within(path, v))
}

/// A kept fence: the key it was compiled for, what its walk found, and the
/// rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    /// Names this entry's lookups as they stand: a new one whenever a file
    /// found is another one than before (what a held fence was built from).
    pub id: String,
    /// Every folder a lookup or a listing was made in; `Some` where its
    /// times vouch for those (settled when they were made).
    pub folders: BTreeMap<String, Option<Seen>>,
    /// Each name looked up, by path, and what was found.
    pub found: BTreeMap<String, Looked>,
    /// Each folder listed, with the hash of its entries ([`names_hash`]).
    pub listed: BTreeMap<String, u64>,
    pub rules: Rules,
}

/// The text of an entry, or `None` when a path cannot be written on one
/// line (such a fence is simply not kept).
pub fn render(e: &Entry) -> Option<String> {
    let plain = |s: &str| !s.contains('\n') && !s.is_empty();
    let links_plain = e.found.values().all(|l| !matches!(&l.found, Found::Link(t) if t.contains('\n')));
    let paths_plain = e.folders.keys().chain(e.found.keys()).chain(e.listed.keys()).all(|p| plain(p));
    let id_plain = !e.id.is_empty() && !e.id.contains(char::is_whitespace);
    if !plain(&e.key) || !id_plain || !links_plain || !paths_plain || !e.rules.rules.iter().all(|(p, _)| plain(p)) {
        return None;
    }
    // The key's length comes first: with thousands of rules the key is a
    // megabyte, and each read of the head then skips it instead of
    // searching it for its end.
    let mut out = format!("{HEADER}\nkey {} {}\nid {}\nhandled {}\n", e.key.len(), e.key, e.id, e.rules.handled);
    for (path, s) in &e.folders {
        match s {
            Some(s) => out.push_str(&format!("folder {} {} {} {} {path}\n", s.dev, s.ino, s.mtime_ns, s.ctime_ns)),
            None => out.push_str(&format!("unsettled {path}\n")),
        }
    }
    for (path, l) in &e.found {
        let id = l.id.map_or("-".to_string(), |(dev, ino)| format!("{dev}:{ino}"));
        match &l.found {
            Found::Missing => out.push_str(&format!("found - {id} {path}\n")),
            Found::Dir => out.push_str(&format!("found d {id} {path}\n")),
            Found::File => out.push_str(&format!("found f {id} {path}\n")),
            // The path's length in bytes says where the link's text begins.
            Found::Link(target) => out.push_str(&format!("link {} {path}{target}\n", path.len())),
        }
    }
    for (path, hash) in &e.listed {
        out.push_str(&format!("list {hash} {path}\n"));
    }
    for (path, access) in &e.rules.rules {
        out.push_str(&format!("rule {access} {path}\n"));
    }
    out.push_str("end\n");
    Some(out)
}

/// Read an entry back; anything malformed or cut short is no entry.
pub fn parse(text: &str) -> Option<Entry> {
    let head = head(text)?;
    let mut e = Entry {
        key: head.key.to_string(),
        id: head.id.to_string(),
        folders: BTreeMap::new(),
        found: BTreeMap::new(),
        listed: BTreeMap::new(),
        rules: Rules { handled: head.handled, rules: Vec::new() },
    };
    for folder in folder_lines(head.folders) {
        let (path, stamp) = folder?;
        let seen = match stamp {
            Some(stamp) => Some(Seen::parse(stamp)?),
            None => None,
        };
        e.folders.insert(path.to_string(), seen);
    }
    for line in head.body.split('\n') {
        if line == "end" {
            return Some(e);
        }
        let (kind, rest) = line.split_once(' ')?;
        match kind {
            "found" | "link" => {
                let (path, looked) = found_line(kind, rest)?;
                e.found.insert(path.to_string(), looked);
            }
            "list" => {
                let (hash, path) = rest.split_once(' ')?;
                e.listed.insert(path.to_string(), hash.parse().ok()?);
            }
            "rule" => e.rules.rules.push(rule_line(rest)?),
            _ => return None,
        }
    }
    None
}

/// An entry's first lines: its key, name and rights, and where its folders
/// and the rest (lookups, listings, rules) are; each part is read only
/// when needed (every call reads the head: parsing all of it cost more
/// than the rest of the runner's own work).
struct Head<'t> {
    key: &'t str,
    id: &'t str,
    handled: u64,
    /// The `folder` and `unsettled` lines.
    folders: &'t str,
    body: &'t str,
}

fn head(text: &str) -> Option<Head<'_>> {
    let (key, mut rest) = key_of(text)?;
    let id = line(&mut rest)?.strip_prefix("id ")?;
    let handled = line(&mut rest)?.strip_prefix("handled ")?.parse().ok()?;
    let folders = rest;
    let mut end = 0;
    loop {
        let (l, r) = rest.split_once('\n')?;
        if !l.starts_with("folder ") && !l.starts_with("unsettled ") {
            return Some(Head { key, id, handled, folders: &folders[..end], body: rest });
        }
        end += l.len() + 1;
        rest = r;
    }
}

/// An entry's key and the text after its line. `key LEN KEY`: the key
/// taken by its length, not searched through.
fn key_of(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(HEADER)?.strip_prefix('\n')?;
    let (len, after) = rest.strip_prefix("key ")?.split_once(' ')?;
    let len: usize = len.parse().ok()?;
    let key = after.get(..len)?;
    Some((key, after[len..].strip_prefix('\n')?))
}

/// The next line of `at`, and `at` moved past it.
fn line<'t>(at: &mut &'t str) -> Option<&'t str> {
    let (l, r) = at.split_once('\n')?;
    *at = r;
    Some(l)
}

/// Each folder line: the path, and its stamp's text when settled (`None`
/// for the whole item when the line is malformed).
fn folder_lines(block: &str) -> impl Iterator<Item = Option<(&str, Option<&str>)>> {
    block.split_terminator('\n').map(|l| {
        if let Some(path) = l.strip_prefix("unsettled ") {
            return Some((path, None));
        }
        let f = l.strip_prefix("folder ")?;
        // Four numbers, then the path (which may hold spaces).
        let path = after_fields(f, 4)?;
        Some((path, Some(&f[..f.len() - path.len() - 1])))
    })
}

impl Seen {
    /// A folder line's stamp: device, inode, mtime and ctime.
    fn parse(stamp: &str) -> Option<Seen> {
        let mut f = stamp.split(' ');
        let seen = Seen { dev: f.next()?.parse().ok()?, ino: f.next()?.parse().ok()?, mtime_ns: f.next()?.parse().ok()?, ctime_ns: f.next()?.parse().ok()? };
        f.next().is_none().then_some(seen)
    }
}

fn found_line<'t>(kind: &str, rest: &'t str) -> Option<(&'t str, Looked)> {
    if kind == "link" {
        let (len, both) = rest.split_once(' ')?;
        let len: usize = len.parse().ok()?;
        if !both.is_char_boundary(len) {
            return None;
        }
        let (path, target) = both.split_at(len);
        return Some((path, Looked { found: Found::Link(target.to_string()), id: None }));
    }
    let (what, rest) = rest.split_once(' ')?;
    let (id, path) = rest.split_once(' ')?;
    let found = match what {
        "-" => Found::Missing,
        "d" => Found::Dir,
        "f" => Found::File,
        _ => return None,
    };
    let id = match id {
        "-" => None,
        id => {
            let (dev, ino) = id.split_once(':')?;
            Some((dev.parse().ok()?, ino.parse().ok()?))
        }
    };
    Some((path, Looked { found, id }))
}

fn rule_line(rest: &str) -> Option<(String, u64)> {
    let space = rest.bytes().position(|c| c == b' ')?;
    // A space is one byte: both sides are whole characters.
    Some((rest[space + 1..].to_string(), rest[..space].parse().ok()?))
}

/// The entries of a folder as compiling around a shut path reads them: each
/// name, and whether it is a link (passed over there), by name. `None` when
/// the folder cannot be read.
pub fn entries(dir: &str) -> Option<Vec<(OsString, bool)>> {
    // A kind that cannot be told (gone meanwhile) counts as a link.
    let mut out: Vec<(OsString, bool)> = super::listing::list(std::path::Path::new(dir))?
        .into_iter()
        .map(|e| (e.is_link() || e.kind == libc::DT_UNKNOWN, e.name))
        .map(|(link, name)| (name, link))
        .collect();
    out.sort();
    Some(out)
}

/// FNV-1a over a listing: equal for equal listings. Two listings that
/// differ yet hash alike could only hide an entry added since (which the
/// kept fence then does not grant), never grant one taken away: a rule is
/// opened again by its path, and a path gone gets none.
pub fn names_hash(entries: Option<&[(OsString, bool)]>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut eat = |b: u8| h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    let Some(entries) = entries else { return 0 };
    eat(1);
    for (name, link) in entries {
        for &b in name.as_bytes() {
            eat(b);
        }
        eat(0);
        eat(*link as u8);
    }
    h
}

/// What a fence is compiled from, in what it means: the fields of the
/// profile the compile reads, each rule by its path and access alone (not
/// its id, hits or date). A field the compile reads and the key lacks would
/// let a fence compiled without it be reused with it: every field of the
/// profile is either here or in [`NOT_COMPILED`] (tests/fence_cache.rs).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meaning<'a> {
    workspace: &'a str,
    home: &'a str,
    harness_home: &'a str,
    platform: Platform,
    mode: Mode,
    enforce: Enforce,
    rules: Vec<RuleMeaning<'a>>,
    grants: Vec<RuleMeaning<'a>>,
    protected_files: &'a [String],
    managed: Option<&'a crate::policy::managed::Managed>,
}

/// The fields of the profile the compile never reads (the runner uses them
/// around the fence): the host's pids and ports, the call's folders and
/// kept files, and whether persistence is shut (the held fence's name says).
pub const NOT_COMPILED: &[&str] = &["hostPids", "hostPorts", "folders", "kept", "persistence"];

#[derive(Serialize)]
struct RuleMeaning<'a>(&'a str, bool, &'a Access);

impl<'a> RuleMeaning<'a> {
    fn of(r: &'a crate::policy::rules::Rule) -> RuleMeaning<'a> {
        RuleMeaning(&r.path, r.recursive, &r.access)
    }
}

/// The key of a fence: what the profile means (the compile reads nothing
/// else of it), the kernel's Landlock ABI and this very binary (a rebuilt
/// runner compiles afresh). The binary is known by version and by file
/// identity with its ctime (npm packs every file with one fixed mtime, and
/// a process cannot set a ctime); `None` when that identity cannot be read
/// (nothing is then kept).
pub fn key(req: &ProfileRequest, abi: u32) -> Option<String> {
    let exe = this_binary()?;
    Some(format!("version={} abi={abi} exe={exe} {}", env!("CARGO_PKG_VERSION"), meaning(req)))
}

/// What `req` means to the compile, as JSON text (the key's last part).
pub fn meaning(req: &ProfileRequest) -> String {
    let meaning = Meaning {
        workspace: &req.workspace,
        home: &req.home,
        harness_home: &req.harness_home,
        platform: req.platform,
        mode: req.mode,
        enforce: req.enforce,
        rules: req.rules.iter().map(RuleMeaning::of).collect(),
        grants: req.grants.iter().map(RuleMeaning::of).collect(),
        protected_files: &req.protected_files,
        managed: req.managed.as_ref(),
    };
    serde_json::to_string(&meaning).expect("a profile serializes")
}

/// This very binary: device, inode, times and size of `/proc/self/exe`,
/// as it was when first asked (a call asks three times; a running binary
/// cannot be written, only renamed over, which makes it another inode).
pub fn this_binary() -> Option<String> {
    static SEEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let m = std::fs::metadata("/proc/self/exe").ok()?;
        Some(format!("{}:{}:{}.{}:{}.{}:{}", m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.size()))
    })
    .clone()
}

/// Whether a compiled fence was kept, and why not (for `--report-fence`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Kept,
    NotKept(String),
}

/// What the compile found, to keep beside its rules.
pub struct Walk {
    pub found: BTreeMap<String, Looked>,
    pub listed: Vec<(String, u64)>,
}

/// A kept fence found to hold: the entry's text as it stands now (every
/// file it names is the one found), read further only when needed.
pub struct Reused {
    text: String,
    /// Where the body starts and the head's `handled` (the head read once).
    body_at: usize,
    handled: u64,
    /// The entry's name (a held fence built from it is found by it).
    pub id: String,
    /// The file it is kept in (the keeper reads its rules from there).
    pub slot: PathBuf,
    /// How many of its folders the keeper vouched for, of how many, when
    /// it was asked and answered for this version (`--report-fence`).
    pub vouched: Option<(usize, usize)>,
}

impl Reused {
    fn of(text: String, slot: PathBuf) -> Option<Reused> {
        let at = HeadAt::of(&text, &head(&text)?);
        Some(Reused::with(text, slot, at))
    }

    /// From `text`, whose head was read as `at`.
    fn with(text: String, slot: PathBuf, at: HeadAt) -> Reused {
        Reused { text, body_at: at.body_at, handled: at.handled, id: at.id, slot, vouched: None }
    }

    fn body(&self) -> &str {
        &self.text[self.body_at..]
    }

    /// The entry kept in `slot`, as [`Cache::reuse`] would read it (ours,
    /// whole), without proving anything: for the keeper, which uses it
    /// only for the name the call proved.
    pub fn at(slot: &Path) -> Option<Reused> {
        Reused::of(read_slot(slot)?.0, slot.to_path_buf())
    }

    /// The rules (`None`: the entry is damaged past its head).
    pub fn rules(&self) -> Option<Rules> {
        // The rules come last, after the lookups and listings and before
        // `end` (an entry is whole): read back from there, not through
        // the lookups, then parsed in order into room made for them all.
        let mut lines = Vec::new();
        for line in self.body().strip_suffix("end\n")?.rsplit_terminator('\n') {
            let Some(rest) = line.strip_prefix("rule ") else { break };
            lines.push(rest);
        }
        let mut rules = Vec::with_capacity(lines.len());
        for rest in lines.into_iter().rev() {
            rules.push(rule_line(rest)?);
        }
        Some(Rules { handled: self.handled, rules })
    }

    /// The file each looked-up path was, where it was a folder or a file.
    pub fn ids(&self) -> BTreeMap<String, (u64, u64)> {
        self.body()
            .split_terminator('\n')
            .filter_map(|l| l.strip_prefix("found ").and_then(|rest| found_line("found", rest)))
            .filter_map(|(path, l)| Some((path.to_string(), l.id?)))
            .collect()
    }
}

/// What a [`Reused`] keeps of its text's head, read once.
struct HeadAt {
    id: String,
    handled: u64,
    body_at: usize,
}

impl HeadAt {
    fn of(text: &str, h: &Head) -> HeadAt {
        HeadAt { id: h.id.to_string(), handled: h.handled, body_at: text.len() - h.body.len() }
    }
}

/// A new name for an entry: 128 random bits, so that no two entries ever
/// share one (a held fence is found by it).
fn new_id() -> String {
    let mut b = [0u8; 16];
    // SAFETY: a buffer of the length passed.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        // No randomness: the time and this process stand in, still unique here.
        let t = now_ns().unwrap_or(0) as u128 ^ ((std::process::id() as u128) << 64);
        b = t.to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub struct Cache {
    dir: PathBuf,
}

fn now_ns() -> Option<i128> {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).ok().map(|d| d.as_nanos() as i128)
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

    /// The two slots `key`'s entry may be kept in: two profiles a session
    /// alternates between (the gate's and git's own, a card's grant) that
    /// share one slot still both stay kept.
    fn slots(&self, key: &str) -> [PathBuf; 2] {
        // FNV-1a: stable across builds and platforms, and enough to spread
        // keys. Over the key's length and its two ends only: thousands of
        // rules make it large, and two keys in one slot only take turns
        // (the whole key is compared when an entry is read).
        let mut h: u64 = 0xcbf29ce484222325;
        let b = key.as_bytes();
        let ends = if b.len() <= 8192 { [b, &b[..0]] } else { [&b[..4096], &b[b.len() - 4096..]] };
        for byte in b.len().to_le_bytes().iter().chain(ends[0]).chain(ends[1]) {
            h = (h ^ *byte as u64).wrapping_mul(0x100000001b3);
        }
        let first = h % SLOTS;
        let mut second = (h / SLOTS) % SLOTS;
        if second == first {
            second = (first + 1) % SLOTS;
        }
        [first, second].map(|n| self.dir.join(format!("fence-{n:02}")))
    }

    /// The slot holding `key`'s entry, its text (ours and whole) and the
    /// version of the file read.
    fn find(&self, key: &str) -> Option<(PathBuf, String, String)> {
        self.slots(key).into_iter().find_map(|slot| {
            let (text, version) = read_slot(&slot)?;
            (key_of(&text)?.0 == key).then_some((slot, text, version))
        })
    }

    /// Where to keep `key`'s entry: the slot it is in, else an empty one,
    /// else the one written longer ago.
    fn slot_for(&self, key: &str) -> PathBuf {
        if let Some((slot, _, _)) = self.find(key) {
            return slot;
        }
        let [a, b] = self.slots(key);
        let written = |p: &Path| std::fs::symlink_metadata(p).ok().and_then(|m| m.modified().ok());
        match (written(&a), written(&b)) {
            (None, _) => a,
            (_, None) => b,
            (Some(x), Some(y)) if y < x => b,
            _ => a,
        }
    }

    /// The fence kept for `key`, if everything its walk found would be
    /// found the same now. `ask` is given the entry's name and the version
    /// of its file, and may answer for the keeper ([`super::folder_watch`]):
    /// the folders it cannot vouch for, all others being as this version
    /// stamps them.
    pub fn reuse(&self, key: &str, ask: &mut dyn FnMut(&str, &str) -> Option<Vouched>) -> Option<Reused> {
        let (slot, text, version) = self.find(key)?;
        let began = now_ns()?;
        let h = head(&text)?;
        if h.key != key {
            return None;
        }
        // The file's identity and its folder lines' hash: a later entry in
        // a reused inode with the same size and time is still another one.
        let version = format!("{version}:{:016x}", block_hash(h.folders));
        let vouched = ask(h.id, &version);
        // Kept for the entry returned as read (below), which needs no second parse.
        let at = HeadAt::of(&text, &h);
        // Each folder as it is now, against its stamp (one lstat each,
        // unless the keeper vouches for it; a stamp is parsed only where
        // the folder is looked at).
        let mut rooted = false;
        let mut doubted: Vec<(&str, Option<Seen>, bool)> = Vec::new();
        let (mut folders, mut by_keeper) = (0, 0);
        for folder in folder_lines(h.folders) {
            let (path, stamp) = folder?;
            rooted |= path == "/";
            folders += 1;
            if stamp.is_some() && vouched.as_ref().is_some_and(|v| !v.dirty.contains(path)) {
                by_keeper += 1;
                continue;
            }
            let now = Seen::now(path);
            let vouches = match (stamp, &now) {
                (Some(stamp), Some(now)) => Seen::parse(stamp)? == *now,
                _ => false,
            };
            if !vouches {
                doubted.push((path, now, stamp.is_none()));
            }
        }
        // Every walk looks in `/`: an entry without it was not written by a
        // compile, and would never go stale.
        if !rooted {
            return None;
        }
        let said = vouched.is_some().then_some((by_keeper, folders));
        if doubted.is_empty() {
            return Some(Reused { vouched: said, ..Reused::with(text, slot, at) });
        }
        // Some folder does not vouch (the workspace, after a file was made
        // there): what was found there is proven again, read from the text;
        // the entry is parsed whole only to be rewritten.
        let names: std::collections::BTreeSet<&str> = doubted.iter().map(|(f, _, _)| *f).collect();
        let (proven, moved) = prove_text(h.body, &names)?;
        // Unsettled when kept, and still since: a compile right after a change.
        let settled_since = doubted.iter().any(|(folder, seen, unsettled)| seen.as_ref().is_some_and(|s| s.settled(folder, began)) && (proven >= REFRESH_AT || *unsettled));
        if !moved && !settled_since {
            return Some(Reused { vouched: said, ..Reused::with(text, slot, at) });
        }
        // Another file where one was found (the same kind: the rules hold):
        // the entry names the files as they are now, under a new name. Or
        // lookups proven one by one in folders that have settled since
        // (many of them, or none vouched when kept): their times vouch from
        // now on.
        let mut e = parse(&text)?;
        let found = e.found.clone();
        prove(&mut e, &names)?;
        for (folder, seen, _) in &doubted {
            e.folders.insert(folder.to_string(), seen.clone().filter(|s| s.settled(folder, began)));
        }
        if e.found != found {
            e.id = new_id();
        }
        let text = render(&e)?;
        let _ = self.write(&slot, &text);
        Reused::of(text, slot).map(|r| Reused { vouched: said, ..r })
    }

    /// Keep a fence compiled from `key`, its walk having found `walk`, the
    /// compile having begun at `began`. The entry kept is returned with it.
    pub fn keep(&self, key: &str, rules: &Rules, walk: Walk, began: SystemTime) -> (Outcome, Option<Reused>) {
        let began_ns = match began.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return (Outcome::NotKept("the clock is before 1970".into()), None),
        };
        let listed: BTreeMap<String, u64> = walk.listed.into_iter().collect();
        let mut folders = BTreeMap::new();
        folders.insert("/".to_string(), None);
        for folder in walk.found.keys().map(|p| paths::parent(p)).chain(listed.keys().map(|p| p.as_str())) {
            folders.insert(folder.to_string(), None);
        }
        for (folder, vouched) in folders.iter_mut() {
            *vouched = Seen::now(folder).filter(|s| s.settled(folder, began_ns));
        }
        let entry = Entry { key: key.to_string(), id: new_id(), folders, found: walk.found, listed, rules: rules.clone() };
        let Some(text) = render(&entry) else {
            return (Outcome::NotKept("a path holds a line break".into()), None);
        };
        let slot = self.slot_for(key);
        match self.write(&slot, &text) {
            Ok(()) => (Outcome::Kept, Reused::of(text, slot)),
            Err(e) => (Outcome::NotKept(format!("cannot write to {}: {e}", self.dir.display())), None),
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

/// Prove what the walk found in the `doubted` folders against the file
/// system now: each name it looked up there, and their entries where it
/// listed them. The number of lookups made (a listing weighs more), or
/// `None` at the first that finds something else. A lookup that finds the
/// same kind of thing but another file is recorded in `e` as found now.
fn prove(e: &mut Entry, doubted: &std::collections::BTreeSet<&str>) -> Option<usize> {
    let mut made = 0;
    for (path, looked) in e.found.iter_mut() {
        if path == "/" || !doubted.contains(paths::parent(path)) {
            continue;
        }
        made += 1;
        *looked = looked_again(path, looked)?;
    }
    for folder in doubted {
        if let Some(&hash) = e.listed.get(*folder) {
            made += LISTING_WEIGHT;
            listing_holds(folder, hash)?;
        }
    }
    Some(made)
}

/// The lookup of `path` made again: what it finds now if that is the same
/// kind of thing the walk found. A lookup in what is no longer a folder
/// finds nothing; what the walk records there was found in a folder.
fn looked_again(path: &str, looked: &Looked) -> Option<Looked> {
    Looked::at(path).filter(|now| now.found == looked.found)
}

/// `Some` when the folder's names hash as they did when it was listed.
fn listing_holds(folder: &str, hash: u64) -> Option<()> {
    (names_hash(entries(folder).as_deref()) == hash).then_some(())
}

/// [`prove`], read from an entry's text (its lookups, listings and rules):
/// the number of lookups made, and whether one found another file of the
/// same kind; `None` at the first that finds something else.
fn prove_text(body: &str, doubted: &std::collections::BTreeSet<&str>) -> Option<(usize, bool)> {
    let (mut made, mut moved) = (0, false);
    // Most lines lie in folders not doubted: a line's path is found first
    // (after its fixed fields, a byte scan) and the line parsed only when
    // its folder is doubted.
    let doubted_parent = |path: &str| path != "/" && doubted.contains(paths::parent(path));
    for line in body.split('\n') {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "found" | "link" => {
                if kind == "found" && !doubted_parent(after_fields(rest, 2)?) {
                    continue;
                }
                let (path, looked) = found_line(kind, rest)?;
                if !doubted_parent(path) {
                    continue;
                }
                made += 1;
                moved |= looked_again(path, &looked)? != looked;
            }
            "list" => {
                let path = after_fields(rest, 1)?;
                if doubted.contains(path) {
                    let (hash, _) = rest.split_once(' ')?;
                    made += LISTING_WEIGHT;
                    listing_holds(path, hash.parse().ok()?)?;
                }
            }
            // The rules come last: nothing more to prove.
            "rule" | "end" => return Some((made, moved)),
            _ => return None,
        }
    }
    None
}

/// What follows the first `n` space-ended fields of `line`.
fn after_fields(line: &str, n: usize) -> Option<&str> {
    let b = line.as_bytes();
    let mut at = 0;
    for _ in 0..n {
        at += b[at..].iter().position(|&c| c == b' ')? + 1;
    }
    // A space is one byte: `at` is a character boundary.
    Some(&line[at..])
}

/// The text of a kept entry, if it is ours and whole, and the version of
/// the file it was read from (each write renames a new file into place).
fn read_slot(slot: &Path) -> Option<(String, String)> {
    // No symlink anywhere on the way: the profile protects the folder by
    // its real path, so a link in the spelling could lead elsewhere.
    let f = std::fs::File::from(open_no_symlinks(slot).ok()?);
    let m = f.metadata().ok()?;
    // Ours alone: owned by us and written by nobody else.
    // SAFETY: geteuid has no preconditions.
    if !m.is_file() || m.uid() != unsafe { libc::geteuid() } || m.mode() & 0o022 != 0 {
        return None;
    }
    // Plain reads into room for the whole file (read_to_string would ask
    // for the size and position first: two more system calls), room the
    // kernel fills without it being zeroed first.
    let room = m.len() as usize + 1;
    let mut buf: Vec<u8> = Vec::with_capacity(room);
    loop {
        let spare = buf.spare_capacity_mut();
        if spare.is_empty() {
            return None;
        }
        // SAFETY: read(2) into the spare room, of the length passed; it
        // writes at most that many bytes, which are then initialized.
        let k = unsafe { libc::read(std::os::fd::AsRawFd::as_raw_fd(&f), spare.as_mut_ptr().cast(), spare.len()) };
        match k {
            0 => break,
            k if k < 0 => {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return None;
            }
            // SAFETY: the kernel wrote `k` bytes just past the length.
            k => unsafe { buf.set_len(buf.len() + k as usize) },
        }
    }
    let text = String::from_utf8(buf).ok()?;
    let version = format!("{}:{}:{}:{}", m.dev(), m.ino(), m.len(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128);
    // Whole: written at once and renamed into place, it ends so.
    text.ends_with("\nend\n").then_some((text, version))
}

/// A hash of an entry's folder lines, eight bytes at a time (the entry is
/// ours, in a protected folder: only chance collisions matter).
fn block_hash(block: &str) -> u64 {
    let b = block.as_bytes();
    let mut h = 0x9E37_79B9_7F4A_7C15u64 ^ b.len() as u64;
    let mut eat = |w: u64| h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        eat(u64::from_le_bytes(w.try_into().expect("eight bytes")));
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    eat(u64::from_le_bytes(tail));
    h
}

/// What the keeper vouches for a kept entry's version: every folder it
/// stamps is as stamped, but these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vouched {
    pub dirty: std::collections::BTreeSet<String>,
}

/// The folders a kept entry's version stamps, read for the keeper: each
/// path with its stamp (`None`: unsettled when kept), and the version.
pub fn stamped_folders(slot: &Path) -> Option<(String, Vec<(String, Option<Seen>)>)> {
    let (text, version) = read_slot(slot)?;
    let h = head(&text)?;
    let version = format!("{version}:{:016x}", block_hash(h.folders));
    let mut out = Vec::new();
    for folder in folder_lines(h.folders) {
        let (path, stamp) = folder?;
        let seen = match stamp {
            Some(s) => Some(Seen::parse(s)?),
            None => None,
        };
        out.push((path.to_string(), seen));
    }
    Some((version, out))
}

/// Open `path` read-only with no symlink followed on the way (openat2
/// `RESOLVE_NO_SYMLINKS`; where openat2 is filtered out, nothing is opened).
fn open_no_symlinks(path: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        let seen = |n: u64| Some(Seen { dev: 1, ino: n, mtime_ns: 1_700_000_000_123_456_789, ctime_ns: -5 });
        let folders = BTreeMap::from([("/".to_string(), seen(2)), ("/etc".to_string(), seen(3)), ("/home/me/My Files".to_string(), seen(4)), ("/tmp".to_string(), None)]);
        let looked = |found, id| Looked { found, id };
        let found = BTreeMap::from([
            ("/etc/hosts".to_string(), looked(Found::File, Some((1, 9)))),
            ("/home/me/My Files/a b".to_string(), looked(Found::Dir, Some((1, 10)))),
            ("/tmp/gone".to_string(), looked(Found::Missing, None)),
            ("/etc/rule x".to_string(), looked(Found::Link("../elsewhere rule 3".to_string()), None)),
        ]);
        let listed = BTreeMap::from([("/etc".to_string(), 77u64)]);
        let rules = Rules { handled: 32767, rules: vec![("/etc/hosts".to_string(), 1), ("/home/me/My Files".to_string(), 3)] };
        Entry { key: "version=1 {\"x\":1}".to_string(), id: "abc".to_string(), folders, found, listed, rules }
    }

    #[test]
    fn an_entry_reads_back_as_it_was_written_folders_with_spaces_and_unsettled_ones_included() {
        let e = entry();
        let text = render(&e).unwrap();
        assert_eq!(parse(&text), Some(e.clone()));
        let r = Reused::of(text, PathBuf::from("/nowhere")).unwrap();
        assert_eq!(r.id, "abc");
        assert_eq!(r.rules(), Some(e.rules.clone()));
        assert_eq!(r.ids().get("/etc/hosts"), Some(&(1, 9)));
    }

    #[test]
    fn only_the_lookups_in_a_doubted_folder_are_proven_again() {
        let dir = std::env::temp_dir().join(format!("dsh-allow-prove-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a"), "").unwrap();
        let d = dir.to_string_lossy().into_owned();
        let mut e = entry();
        e.found.insert(format!("{d}/a"), Looked::at(&format!("{d}/a")).unwrap());
        e.found.insert(format!("{d}/gone"), Looked { found: Found::Missing, id: None });
        let text = render(&e).unwrap();
        let body = &text[text.find("\nfound ").unwrap() + 1..];
        // The entry's /etc and /tmp lookups name files this machine lacks:
        // proving them would fail.
        assert_eq!(prove_text(body, &[d.as_str()].into()), Some((2, false)));
        assert_eq!(prove_text(body, &["/nowhere"].into()), Some((0, false)));
        assert_eq!(prove_text(body, &["/etc"].into()), None);
        std::fs::write(dir.join("b"), "").unwrap();
        e.found.insert(format!("{d}/b"), Looked { found: Found::File, id: Some((1, 9)) });
        let text = render(&e).unwrap();
        let body = &text[text.find("\nfound ").unwrap() + 1..];
        assert_eq!(prove_text(body, &[d.as_str()].into()), Some((3, true)), "another file at a name");
        std::fs::write(dir.join("gone"), "").unwrap();
        assert_eq!(prove_text(body, &[d.as_str()].into()), None, "a name made since was not seen");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(after_fields("d 1:2 /a b", 2), Some("/a b"));
        assert_eq!(after_fields("d", 1), None);
    }

    #[test]
    fn a_damaged_stamp_or_an_entry_cut_short_is_no_entry() {
        let text = render(&entry()).unwrap();
        assert_eq!(parse(&text.replace("folder 1 3 ", "folder 1 x3 ")), None);
        assert_eq!(parse(&text.replace("folder 1 3 1700000000123456789 -5 /etc\n", "folder 1 3 1700000000123456789 /etc\n")), None);
        assert_eq!(parse(&text[..text.len() - 4]), None);
        let rules_only = text.find("\nrule ").unwrap();
        assert_eq!(parse(&text[..rules_only + 1]), None);
    }
}
