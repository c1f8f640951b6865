//! A log's numbered backups are the log (Linux).
//!
//! A rotating log handler (Python's `RotatingFileHandler` and
//! `TimedRotatingFileHandler`, and the many modelled on them) moves
//! `app.log` to `app.log.1`, each `app.log.N` one further, and removes the
//! oldest, in code the line does not show. Each backup is the state of the
//! log `app.log`: removing one, or moving it to another backup name, is a
//! write of the log, allowed where the call may write both; moving the log
//! itself to one of its backup names keeps its content and is a write too.
//! Refused, logging stops with an error in the middle of the program's work.
//!
//! Only plain files (never a folder, never through a link), only a log
//! whose name ends in `.log`, only backups that name it with a number or a
//! date (`app.log.3`, `app.log.2026-12-05`), in the same folder, and only
//! beside a log that existed before the call (not one the call made, nor a
//! hard link it made) or that this call rotated: a call must not make
//! `notes.log` beside the user's `notes.log.1` to take that file for a
//! backup (as a database the call makes takes no file of the user's for
//! its journal). Files of another user are never treated so (the call
//! could not write them). What this can lose is at most what writing the
//! backup could: the rule needs write on it.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd};

use super::own::Own;
use super::target::Target;

/// The log a backup's name names: `app.log` for `app.log.3`.
fn log_named_by(backup: &str) -> Option<&str> {
    let (log, suffix) = backup.rsplit_once('.')?;
    let dated = suffix.len() <= 19 && suffix.starts_with(|c: char| c.is_ascii_digit()) && suffix.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '_');
    (dated && is_log(log)).then_some(log)
}

fn is_log(name: &str) -> bool {
    name.len() > ".log".len() && name.ends_with(".log")
}

/// The real path of the log `t` is a backup of, when the call may treat
/// it as that log's state: `t` a plain file, its log a plain file beside
/// it that existed before the call or that the call rotated.
pub fn log_of(t: &Target, own: &Own) -> Option<String> {
    let name = t.name.to_str().ok()?;
    let log = log_named_by(name)?;
    let path = beside(t, log);
    // A log this call rotated may be missing for a moment (a timed handler
    // prunes old backups before it opens the log anew).
    (plain_file(t, name) && (own.rotated(&path) || plain_file(t, log) && standing(t, log, &path, own))).then_some(path)
}

/// Whether renaming `from` to `to` moves a log to one of its backups, or
/// a backup to another: the real path of the log, when it is one the call
/// may treat as such.
pub fn rotation(from: &Target, to: &Target, own: &Own) -> Option<String> {
    if crate::paths::parent(from.real()) != crate::paths::parent(to.real()) {
        return None;
    }
    let (from_name, to_name) = (from.name.to_str().ok()?, to.name.to_str().ok()?);
    let log = log_named_by(to_name)?;
    if from_name == log {
        // The log itself goes to a backup name: it stood before the call.
        return (plain_file(from, log) && standing(from, log, from.real(), own)).then(|| from.real().to_string());
    }
    log_of(from, own).filter(|_| log_named_by(from_name) == Some(log))
}

/// The log existed before the call (not the call's own, and not a second
/// name of another file: a hard link the call made is no log of the
/// user's), or this call moved the one that did to a backup and made it
/// anew.
fn standing(t: &Target, log: &str, path: &str, own: &Own) -> bool {
    own.rotated(path) || CString::new(log).ok().and_then(|c| super::own::entry_at(t.dir.as_fd(), &c)).is_some_and(|(id, links)| links == 1 && !own.holds(&id))
}

fn beside(t: &Target, name: &str) -> String {
    let dir = crate::paths::parent(t.real());
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn plain_file(t: &Target, name: &str) -> bool {
    let Ok(c) = CString::new(name) else { return false };
    // SAFETY: zeroed plain data filled by fstatat, the last name not followed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let found = unsafe { libc::fstatat(t.dir.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0;
    // The supervisor runs as the call's user: a file of another user in a
    // folder the call may write could be unlinked, though not written.
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    found && st.st_mode & libc::S_IFMT == libc::S_IFREG && (euid == 0 || st.st_uid == euid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_names_its_log_with_a_number_or_a_date() {
        assert_eq!(log_named_by("app.log.1"), Some("app.log"));
        assert_eq!(log_named_by("app.log.12"), Some("app.log"));
        assert_eq!(log_named_by("app.log.2026-12-05"), Some("app.log"));
        assert_eq!(log_named_by("app.log.2026-12-05_13-04-59"), Some("app.log"));
    }

    #[test]
    fn a_numbered_name_of_anything_but_a_log_names_no_log() {
        for name in ["notes.1", "thesis.tex.2", ".log.1", "app.log", "app.log.old", "app.log.1.gz", "app.log.x1", "app.log.", "libfoo.so.1", "app.log.12345678901234567890"] {
            assert_eq!(log_named_by(name), None, "{name}");
        }
    }
}
