//! The DSH host's own temp folders, out of the call's reach (Linux).
//!
//! DSH makes, in the system temp folder, a folder per host process for the
//! tool results it spills (`dsh-spill-*/session-<hash of the session id>`)
//! and one for command output that overflows (`dsh-subprocess-*`), writes
//! into them during and after calls (following whatever the folder has
//! become: `mkdir -p` of a session folder swapped for a link to
//! `~/.bashrc.d` writes there), and hands the files back to the model. The
//! baseline opens the temp folders entirely and Landlock only grants, so
//! the runner covers each such folder, in its own mount namespace, with an
//! empty read-only tmpfs: the call finds an empty folder it cannot write
//! in, rename or remove (EBUSY), and no other session's results. Every other
//! path in the temp folder means what it means outside — a user's file
//! there stays readable, and the supervisor, which resolves the call's paths
//! in its own namespace, sees the same tree.
//!
//! Both folders exist before any call of their host runs: the spill folder
//! is made when the host starts, the subprocess folder at its first spawn,
//! which is the call's own. So a folder made before every DSH process
//! running now started is no live host's: once it is also empty, no host
//! writes there again and nothing there can be read, and with a fence
//! cache it is remembered as harmless and left uncovered (a machine
//! gathers such folders by the hundred, and covering costs per folder).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use crate::policy::baseline;
use crate::api::Platform;

/// The temp folders DSH makes its own in: the platform's, and `$TMPDIR`
/// (which the call inherits from the host).
pub fn temps() -> Vec<String> {
    let mut temps: Vec<String> = baseline::temp_dirs(Platform::Linux).iter().map(|s| s.to_string()).collect();
    if let Some(t) = std::env::var_os("TMPDIR").map(|t| crate::paths::normalize(&t.to_string_lossy())) {
        if t.starts_with('/') && !temps.contains(&t) {
            temps.push(t);
        }
    }
    temps
}

/// Each temp folder opened once: its stamp and its listing are then of
/// the same folder, whatever its path names meanwhile.
enum Temp {
    Folder(OwnedFd),
    Missing,
    /// There, but it could not be opened.
    Failed,
}

fn opened(temps: &[String]) -> Vec<Temp> {
    temps
        .iter()
        .map(|t| match super::listing::open(Path::new(t)) {
            Ok(fd) => Temp::Folder(fd),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Temp::Missing,
            Err(_) => Temp::Failed,
        })
        .collect()
}

/// The host temp folders now present in `temps`, with the inode each listing gave:
/// directories (not links) named as the host names them, directly in a
/// temp folder of the platform or in `$TMPDIR` (which the call inherits
/// from the host). Each one, whoever's and however old. Also whether
/// every temp folder there was listed whole (none unreadable, no
/// host-named entry of a kind unknown).
fn present(temps: &[String], opened: &[Temp]) -> (Vec<(String, u64)>, bool) {
    let mut out = Vec::new();
    let mut whole = true;
    for (temp, at) in temps.iter().zip(opened) {
        let entries = match at {
            Temp::Folder(fd) => super::listing::entries(fd),
            Temp::Missing => continue,
            Temp::Failed => None,
        };
        let Some(entries) = entries else {
            whole = false;
            continue;
        };
        for e in entries {
            let name = e.name.to_string_lossy();
            // The entry's type and inode come with the listing: no stat per entry.
            if baseline::is_host_temp_name(&name) {
                if e.is_dir() {
                    out.push((joined(temp, &name), e.ino));
                } else if e.kind == libc::DT_UNKNOWN {
                    whole = false;
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    (out, whole)
}

/// `dir/name` in one allocation (a machine lists its host folders by the
/// thousand).
fn joined(dir: &str, name: &str) -> String {
    let mut p = String::with_capacity(dir.len() + 1 + name.len());
    p.push_str(dir);
    if !dir.ends_with('/') {
        p.push('/');
    }
    p.push_str(name);
    p
}

/// The host temp folders a call must not reach. Without a fence cache,
/// every one present. With one, every one but those it has found
/// harmless: empty, and made before any DSH process running now started —
/// no host will write there again, and nothing is there to read. DSH never
/// removes its folders, so a machine gathers them by the hundred; covering
/// each costs ~7 µs a call, judging one ~10 µs once.
///
/// `token` is the keeper's for `temps` as they were before this call looked
/// ([`super::temp_watch`]): the same token as the last listing's means no
/// host folder came or went since, however else the temp folders changed.
/// Also says how the folders were found, for the report.
pub fn folders(cache: Option<&str>, hosts: &[i32], temps: &[String], token: Option<&str>) -> (Vec<String>, &'static str) {
    let Some(cache) = cache else { return (present(temps, &opened(temps)).0.into_iter().map(|(p, _)| p).collect(), "listed") };
    let (now_file, harmless_file) = (Path::new(cache).join(NOW), Path::new(cache).join(HARMLESS));
    // What the paths name now, against the record.
    let now_stamps = path_stamps(temps);
    let now = now_secs();
    // The temp folders unchanged since the last listing, or no host folder
    // come or gone by the keeper's watch: the same host folders are there,
    // and what covered them then covers them now until it is time to judge
    // them again.
    if let Some((judged, covered, how)) = read_now(&now_file, &now_stamps, token) {
        if covered.is_empty() || now - judged < JUDGE_EVERY_SECS {
            return (covered, how);
        }
    }
    // Both sorted: each listed folder is looked up in the harmless list
    // read in place, with no set built.
    // Each temp folder opened once: the stamps recorded are of the folders
    // listed, taken before they are read (a change while it lists is seen
    // next time).
    let opened = opened(temps);
    let stamps = stamps(temps, &opened);
    let (all, whole) = present(temps, &opened);
    let text = std::fs::read_to_string(&harmless_file).unwrap_or_default();
    let (mut judged, harmless) = read_harmless(&text);
    let listed_harmless = |(p, ino): &(String, u64)| harmless.binary_search(&(p.as_str(), *ino)).is_ok();
    let mut left: Vec<(String, u64)> = all.iter().filter(|f| !listed_harmless(f)).cloned().collect();
    if !left.is_empty() && now - judged >= JUDGE_EVERY_SECS {
        let before = earliest_host_start(hosts) - START_SLACK_SECS;
        let mut dead = Vec::new();
        left.retain(|(p, ino)| {
            let harmless_now = is_harmless(p, *ino, before);
            if harmless_now {
                dead.push((p.clone(), *ino));
            }
            !harmless_now
        });
        // Only what is still there is remembered.
        let still = |h: &(&str, u64)| all.binary_search_by(|(q, i)| (q.as_str(), *i).cmp(h)).is_ok();
        let mut kept: Vec<(&str, u64)> = harmless.iter().copied().filter(|h| still(h)).collect();
        kept.extend(dead.iter().map(|(p, ino)| (p.as_str(), *ino)));
        kept.sort_unstable();
        kept.dedup();
        judged = now;
        write_list(&harmless_file, &format!("judged {judged}\n"), kept.iter().map(|(p, ino)| format!("{ino} {p}")));
    }
    let left: Vec<String> = left.into_iter().map(|(p, _)| p).collect();
    let mut text = format!("judged {judged}\n");
    // The token (no spaces in it) and how long the stamps are that follow.
    if let Some(t) = token.filter(|t| whole && !t.contains([' ', '\n'])) {
        text.push_str(&format!("keeper {t} {}\n", stamps.len()));
    }
    text.push_str(&stamps);
    for p in left.iter().filter(|p| !p.contains('\n')) {
        text.push_str(&format!("cover {p}\n"));
    }
    // A listing not whole answers for no later call: the next lists again.
    if whole {
        write_now(&now_file, &text);
    } else {
        let _ = std::fs::remove_file(&now_file);
    }
    (left, "listed")
}

/// Rewrite the record in place, its checksum last: it changes with every
/// change in the temp folder, and making a new file each time costs more
/// than the listing it saves (ext4). Written over from the start and cut
/// only when it shrinks: emptying it first cost 0.2-0.3 ms (ext4 frees and
/// journals its block), and a new record mostly has the old one's length.
/// A reader that meets a record cut short or interleaved by two writers
/// finds the checksum wrong and lists.
fn write_now(file: &Path, text: &str) {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let whole = format!("{text}sum {}\n", checksum(text));
    let opened = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(file);
    match opened {
        Ok(f) => {
            let len = whole.len() as u64;
            let longer = f.metadata().map_or(true, |m| m.len() > len);
            if f.write_all_at(whole.as_bytes(), 0).is_err() || (longer && f.set_len(len).is_err()) {
                let _ = std::fs::remove_file(file);
            }
        }
        Err(_) => write_list(file, &whole, std::iter::empty()),
    }
}

/// FNV-1a of a record's text.
fn checksum(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

/// The cache's record of the last listing: the temp folders' stamps, when
/// the folders were last judged, and the ones it covered.
const NOW: &str = "host-temp-now";

/// Each temp folder's device, inode and change time (its entries added,
/// removed or renamed change it), one line each.
/// The stamps of the folders the paths name now (followed, as a listing
/// follows them): what a record is checked against, one `stat` each.
fn path_stamps(temps: &[String]) -> String {
    use std::os::unix::fs::MetadataExt;
    temps
        .iter()
        .map(|t| match std::fs::metadata(t).ok().filter(|m| m.is_dir()) {
            Some(m) => format!("stamp {} {} {}.{:09} {t}\n", m.dev(), m.ino(), m.mtime(), m.mtime_nsec()),
            None => format!("stamp - {t}\n"),
        })
        .collect()
}

/// The same of the folders opened to be listed.
fn stamps(temps: &[String], opened: &[Temp]) -> String {
    temps
        .iter()
        .zip(opened)
        .map(|(t, at)| {
            let Temp::Folder(fd) = at else { return format!("stamp - {t}\n") };
            // SAFETY: a zeroed stat for the kernel to fill, our descriptor.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                return format!("stamp - {t}\n");
            }
            format!("stamp {} {} {}.{:09} {t}\n", st.st_dev, st.st_ino, st.st_mtime, st.st_mtime_nsec)
        })
        .collect()
}

/// The last listing's covered folders and when they were judged, if the
/// temp folders' stamps are still `stamps` (`"unchanged"`), or else the
/// keeper's token is still the one that listing took (`"vouched"`).
fn read_now(file: &Path, stamps: &str, token: Option<&str>) -> Option<(f64, Vec<String>, &'static str)> {
    let whole = std::fs::read_to_string(file).ok()?;
    let body = whole.strip_suffix('\n')?;
    let (text, sum) = body.rsplit_once('\n').map(|(t, s)| (&whole[..t.len() + 1], s))?;
    if sum.strip_prefix("sum ")?.parse::<u64>().ok()? != checksum(text) {
        return None;
    }
    let (first, mut rest) = text.split_once('\n')?;
    let judged = first.strip_prefix("judged ")?.parse().ok()?;
    let mut listed_with = None;
    if let Some(line) = rest.strip_prefix("keeper ") {
        let (line, after) = line.split_once('\n')?;
        let (t, len) = line.split_once(' ')?;
        listed_with = Some((t, len.parse::<usize>().ok()?));
        rest = after;
    }
    // Vouched for, the temp folders must still be the folders listed (the
    // keeper checks that too): only their times may differ.
    let (covers, how) = match (rest.strip_prefix(stamps), listed_with) {
        (Some(covers), _) => (covers, "unchanged"),
        (None, Some((t, len))) if Some(t) == token && untimed(rest.get(..len)?) == untimed(stamps) => (rest.get(len..)?, "vouched"),
        _ => return None,
    };
    let covered = covers.lines().map(|l| l.strip_prefix("cover ").map(str::to_string)).collect::<Option<Vec<_>>>()?;
    Some((judged, covered, how))
}

/// Stamps without their times: which folders the temp folders were.
fn untimed(stamps: &str) -> String {
    stamps
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.splitn(5, ' ').collect();
            if f.len() == 5 && f[0] == "stamp" && f[1] != "-" {
                f.remove(3);
            }
            f.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fence cache's list of harmless host temp folders.
const HARMLESS: &str = "host-temp-harmless";
/// Folders not yet harmless are judged again at most this often: a host
/// that ended has its folders uncovered within it.
const JUDGE_EVERY_SECS: f64 = 60.0;
/// A process's start is known to the second (the boot time's precision):
/// a folder made up to this long before it still counts as its own.
const START_SLACK_SECS: f64 = 2.0;

fn now_secs() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Whether the folder at `path`, still the inode listed, was last changed
/// before `before` (its ctime: the kernel sets it, nobody can set it back)
/// and holds nothing the call could reach: it is empty, or it is another
/// user's that this one cannot enter ([`shut_to_us`]).
fn is_harmless(path: &str, ino: u64, before: f64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::symlink_metadata(path) else { return false };
    let changed = m.ctime() as f64 + m.ctime_nsec() as f64 / 1e9;
    m.is_dir() && m.ino() == ino && changed < before && (std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()) || shut_to_us(path, m.uid()))
}

/// Whether a folder of owner `owner` is another user's that this process,
/// not root, may not enter. The call cannot either: its user namespace maps
/// only this user, so it holds no right over another's files (a machine's
/// stale folders of root's DSH, 0700, by the hundred, which this user
/// cannot list to see they are empty).
fn shut_to_us(path: &str, owner: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: a NUL-terminated path; plain arguments.
    me != 0 && owner != me && unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
}

/// When the earliest DSH process running now started (wall clock,
/// seconds): any user's process running DSH's command line, and the hosts
/// the profile named; now when there is none.
fn earliest_host_start(hosts: &[i32]) -> f64 {
    let now = now_secs();
    let Some(boot) = boot_time() else { return f64::NEG_INFINITY };
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(dir) = std::fs::read_dir("/proc") else { return f64::NEG_INFINITY };
    let mut earliest = now;
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let dsh = hosts.contains(&pid) || std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| super::hosts::is_dsh_command(&c));
        if let Some(start) = dsh.then(|| super::procs::start_time(pid)).flatten() {
            earliest = earliest.min(boot + start as f64 / ticks);
        }
    }
    earliest
}

/// The boot time in wall-clock seconds (`btime` in /proc/stat).
fn boot_time() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()
}

/// The harmless folders the cache lists (inode and path per line, after a
/// first line with when they were last judged), read in place and sorted
/// by path and inode (as they are written); none when malformed.
fn read_harmless(text: &str) -> (f64, Vec<(&str, u64)>) {
    let mut lines = text.lines();
    let Some(judged) = lines.next().and_then(|l| l.strip_prefix("judged ")).and_then(|t| t.parse().ok()) else { return (0.0, Vec::new()) };
    let mut out = Vec::new();
    for line in lines {
        let Some((ino, path)) = line.split_once(' ') else { return (0.0, Vec::new()) };
        let Ok(ino) = ino.parse() else { return (0.0, Vec::new()) };
        out.push((path, ino));
    }
    if !out.is_sorted() {
        out.sort_unstable();
    }
    (judged, out)
}

/// Write `head` and one line per item beside `file`, then rename over:
/// a reader sees all or none. An item with a line break is left out (a
/// folder then stays covered); a cache that cannot be written only costs
/// the next call a listing.
fn write_list(file: &Path, head: &str, items: impl Iterator<Item = String>) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = head.to_string();
    for item in items.filter(|i| !i.contains('\n')) {
        text.push_str(&item);
        text.push('\n');
    }
    let tmp = file.with_extension(format!("{}.tmp", std::process::id()));
    let Ok(mut f) = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&tmp) else { return };
    if f.write_all(text.as_bytes()).is_err() || std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Cover each folder with an empty read-only tmpfs, in the mount namespace
/// the runner entered: one instance, on the first folder, bound onto the
/// others (a bind keeps the read-only flag, and costs a third of a new
/// instance). A folder gone since it was listed is skipped.
pub fn hide(folders: &[String]) -> Result<usize, String> {
    let mut first: Option<std::ffi::CString> = None;
    let mut hidden = 0;
    for f in folders {
        let c = std::ffi::CString::new(f.as_str()).map_err(|_| format!("{f}: a path with a NUL byte"))?;
        // A joined call copies the namespace of the call that built its
        // fence, with that call's covers: a folder covered there already is
        // not covered twice (each cover is a mount made, copied and torn
        // down with the call).
        if is_cover(&c) {
            first.get_or_insert(c);
            hidden += 1;
            continue;
        }
        let r = match &first {
            // SAFETY: NUL-terminated strings and flags.
            None => unsafe {
                let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                libc::mount(c"dsh-allow".as_ptr(), c.as_ptr(), c"tmpfs".as_ptr(), flags, COVER_OPTIONS.as_ptr().cast())
            },
            // SAFETY: as above.
            Some(src) => unsafe { libc::mount(src.as_ptr(), c.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) },
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOENT) {
                continue;
            }
            return Err(format!("cannot cover the DSH host's temp folder {f}: {e}"));
        }
        first.get_or_insert(c);
        hidden += 1;
    }
    Ok(hidden)
}

/// What a cover is: an empty read-only tmpfs of one page and one inode.
const COVER_OPTIONS: &std::ffi::CStr = c"size=4k,nr_inodes=1,mode=0555";

/// Whether `path` is such a cover: a read-only tmpfs with room for one
/// inode, its root (the only inode it can hold), which nothing in it can
/// change. Only a mount can put one there; the call's command has not run.
fn is_cover(path: &std::ffi::CStr) -> bool {
    // SAFETY: a zeroed struct is a valid out-parameter; a NUL-terminated path.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(path.as_ptr(), &mut fs) } != 0 {
        return false;
    }
    fs.f_type as u64 == libc::TMPFS_MAGIC as u64 && read_only(path, &fs) && fs.f_files == 1 && fs.f_blocks == 1
}

/// Whether the mount `fs` was read from is read-only. musl's `statfs`
/// shows the mount's flags (`f_flags`, Linux 2.6.36); the libc crate hides
/// them for glibc, where `statvfs` reads them with a second `statfs`.
#[cfg(target_env = "musl")]
fn read_only(_path: &std::ffi::CStr, fs: &libc::statfs) -> bool {
    fs.f_flags as u64 & libc::ST_RDONLY as u64 != 0
}

#[cfg(not(target_env = "musl"))]
fn read_only(path: &std::ffi::CStr, _fs: &libc::statfs) -> bool {
    // SAFETY: a zeroed struct is a valid out-parameter; a NUL-terminated path.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(path.as_ptr(), &mut vfs) }) == 0 && vfs.f_flag & libc::ST_RDONLY != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(stamps: &str, covered: &[&str]) -> String {
        let mut text = format!("judged 100\n{stamps}");
        for c in covered {
            text.push_str(&format!("cover {c}\n"));
        }
        text
    }

    #[test]
    fn a_record_rewritten_in_place_reads_back_as_the_last_one_written_whatever_its_length() {
        let dir = std::env::temp_dir().join(format!("dsh-allow-host-temp-now-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(NOW);
        let stamps = "stamp 1 2 3.000000004 /tmp\n";
        write_now(&file, &record(stamps, &["/tmp/dsh-spill-a", "/tmp/dsh-spill-bb", "/tmp/dsh-subprocess-c"]));
        assert_eq!(read_now(&file, stamps, None).map(|(_, c, _)| c.len()), Some(3));
        // Shorter: what was beyond it is cut.
        write_now(&file, &record(stamps, &["/tmp/dsh-spill-a"]));
        assert_eq!(read_now(&file, stamps, None), Some((100.0, vec!["/tmp/dsh-spill-a".to_string()], "unchanged")));
        // Longer again, and other stamps: the old record no longer answers.
        write_now(&file, &record(stamps, &["/tmp/dsh-spill-a", "/tmp/dsh-spill-zz"]));
        assert_eq!(read_now(&file, stamps, None).map(|(_, c, _)| c), Some(vec!["/tmp/dsh-spill-a".to_string(), "/tmp/dsh-spill-zz".to_string()]));
        assert_eq!(read_now(&file, "stamp 1 2 9.000000004 /tmp\n", None), None);
        // A record changed behind the checksum's back is not believed.
        let text = std::fs::read_to_string(&file).unwrap().replace("spill-zz", "spill-yy");
        std::fs::write(&file, text).unwrap();
        assert_eq!(read_now(&file, stamps, None), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_temp_folder_is_stamped_and_listed_as_the_folder_its_path_leads_to_and_a_missing_one_is_stamped_missing() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("dsh-allow-host-temp-opened-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real/dsh-spill-Ab12cd")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let temps = vec![dir.join("link").to_string_lossy().into_owned(), dir.join("gone").to_string_lossy().into_owned()];
        let opened = opened(&temps);
        let real = std::fs::metadata(dir.join("real")).unwrap();
        let stamped = stamps(&temps, &opened);
        assert!(stamped.starts_with(&format!("stamp {} {} ", real.dev(), real.ino())), "{stamped}");
        assert!(stamped.ends_with(&format!("stamp - {}\n", temps[1])), "{stamped}");
        assert_eq!(path_stamps(&temps), stamped, "a record's stamps and the check's differ");
        let (found, whole) = present(&temps, &opened);
        assert!(whole);
        assert_eq!(found.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(), vec![format!("{}/dsh-spill-Ab12cd", temps[0])]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_listing_taken_under_a_keeper_token_answers_for_changed_temp_folders_only_while_the_token_holds() {
        let dir = std::env::temp_dir().join(format!("dsh-allow-host-temp-token-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(NOW);
        // Stamps that hold `cover ` in a path: the token's line says how long they are.
        let stamps = "stamp 1 2 3.000000004 /tmp\nstamp 1 5 3.000000004 /x/cover /y\n";
        let mut text = format!("judged 100\nkeeper 41.7.9.3 {}\n{stamps}", stamps.len());
        text.push_str("cover /tmp/dsh-spill-a\n");
        write_now(&file, &text);
        let later = "stamp 1 2 8.000000004 /tmp\nstamp 1 5 3.000000004 /x/cover /y\n";
        let covered = vec!["/tmp/dsh-spill-a".to_string()];
        assert_eq!(read_now(&file, stamps, None), Some((100.0, covered.clone(), "unchanged")));
        assert_eq!(read_now(&file, later, Some("41.7.9.3")), Some((100.0, covered, "vouched")));
        // Another count, another watch, or no keeper: the temp folders are listed again.
        for token in [Some("41.7.9.4"), Some("41.8.9.3"), None] {
            assert_eq!(read_now(&file, later, token), None, "{token:?}");
        }
        // A temp folder that is another folder now (its inode), whatever the token says.
        let swapped = "stamp 1 2 8.000000004 /tmp\nstamp 1 6 3.000000004 /x/cover /y\n";
        assert_eq!(read_now(&file, swapped, Some("41.7.9.3")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_harmless_list_reads_sorted_in_place_and_a_damaged_one_lists_nothing() {
        let text = "judged 100.5\n7 /tmp/dsh-spill-b\n9 /tmp/dsh-spill a\n3 /tmp/dsh-spill-b\n";
        let (judged, listed) = read_harmless(text);
        assert_eq!(judged, 100.5);
        assert_eq!(listed, vec![("/tmp/dsh-spill a", 9), ("/tmp/dsh-spill-b", 3), ("/tmp/dsh-spill-b", 7)]);
        // The same folder under another inode is another folder.
        assert!(listed.binary_search(&("/tmp/dsh-spill-b", 7)).is_ok());
        assert!(listed.binary_search(&("/tmp/dsh-spill-b", 8)).is_err());
        for damaged in ["", "judged x\n1 /tmp/a\n", "judged 1\n1/tmp/a\n", "judged 1\nx /tmp/a\n"] {
            assert_eq!(read_harmless(damaged), (0.0, Vec::new()), "{damaged:?}");
        }
        assert_eq!(joined("/", "dsh-spill-a"), "/dsh-spill-a");
        assert_eq!(joined("/tmp", "dsh-spill-a"), "/tmp/dsh-spill-a");
    }
}
