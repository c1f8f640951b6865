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
//! which is the call's own.

use std::path::Path;

use crate::policy::baseline;
use crate::api::Platform;

/// The host temp folders now present: directories (not links) named as the
/// host names them, directly in a temp folder of the platform or in
/// `$TMPDIR` (which the call inherits from the host). Each one, whoever's
/// and however old: DSH never removes its folders, but telling a live
/// host's or a dead one's, an empty one or a full one, costs more per
/// folder (a stat, a listing: ~10 µs) than covering it (a bind: ~5 µs).
pub fn folders() -> Vec<String> {
    let mut temps: Vec<String> = baseline::temp_dirs(Platform::Linux).iter().map(|s| s.to_string()).collect();
    if let Some(t) = std::env::var_os("TMPDIR").map(|t| crate::paths::normalize(&t.to_string_lossy())) {
        if t.starts_with('/') && !temps.contains(&t) {
            temps.push(t);
        }
    }
    let mut out = Vec::new();
    for temp in temps {
        let Ok(entries) = std::fs::read_dir(&temp) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            // The entry's type comes with the listing: no stat per entry.
            if baseline::is_host_temp_name(&name) && e.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(Path::new(&temp).join(name.as_ref()).to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out.dedup();
    out
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
        let r = match &first {
            // SAFETY: NUL-terminated strings and flags.
            None => unsafe {
                let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                libc::mount(c"dsh-allow".as_ptr(), c.as_ptr(), c"tmpfs".as_ptr(), flags, c"size=4k,nr_inodes=1,mode=0555".as_ptr().cast())
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
