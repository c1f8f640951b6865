//! Kernel denials turned into guidance: name the capability that was
//! missing and where, and the narrowest `/allow add` that would grant it,
//! instead of leaving the model a bare error to work around.
//!
//! Two sources. The Linux runner's supervisor names every create, delete,
//! rename or write it refuses on the call's standard error, one line per
//! (capability, path): `dsh-allow: refused delete "/w/app.db-journal"
//! (unlink; sqlite3, pid 4242)`. That is the runner's own knowledge, and it
//! wins: a guess from a program's message about the same entry is dropped.
//! What the supervisor does not see (Landlock's EACCES on a read, the
//! read-only tree's EROFS, Seatbelt's EPERM on macOS) is read from the
//! program's message: "Permission denied" / "Operation not permitted" /
//! "Read-only file system" and the path it quotes.

use serde::{Deserialize, Serialize};

use crate::policy::capability::Capability;
use crate::paths;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    pub path: String,
    /// `None` when the message does not say which operation failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
    /// Not a file: the runner refused a `socket` (the path or address it
    /// names) or a `signal` (to the process `path` names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub door: Option<String>,
    /// The system call the runner refused (`unlink`, `rename`, `open`,
    /// `mkdir`…): set only when the runner named the refusal itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The program that made it, and its process id (the runner's line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The sentence for the model.
    pub guidance: String,
}

/// How a refusal reads: Landlock's EACCES, Seatbelt's EPERM, and the EROFS
/// of the Linux runner's read-only tree (outside the writable roots a write,
/// create, delete or metadata change fails so before Landlock is asked).
const REFUSALS: &[&str] = &["permission denied", "operation not permitted", READ_ONLY];
const READ_ONLY: &str = "read-only file system";

/// Words in a denial line that tell the operation (tool messages as measured:
/// coreutils, git, sed, perl, python, bash).
const OPERATIONS: &[(&[&str], Capability)] = &[
    // Metadata first: `touch: setting times of 'f'` changes, not makes, f.
    (&["changing permissions", "changing ownership", "changing group", "setting times", "xattr", "utime"], Capability::Write),
    (&["unlink", "remove", "rename", "move", "rmdir", "delete"], Capability::Delete),
    (&["cannot create", "create", "touch", "mkdir", "make"], Capability::Create),
    (&["exec", "execute", "run"], Capability::Execute),
    (&["write", "truncate", "modify", "chmod", "chown"], Capability::Write),
    (&["read", "open", "cat", "head", "tail", "stat"], Capability::Read),
];

/// BSD tools (macOS) name neither the operation nor quote the path:
/// `rm: build/x: Operation not permitted`. There the program says it.
const PROGRAMS: &[(&str, Capability)] =
    &[("rm", Capability::Delete), ("rmdir", Capability::Delete), ("unlink", Capability::Delete), ("mv", Capability::Delete)];

fn operation_of(line: &str, lower: &str) -> Option<Capability> {
    let program = line.split_once(": ").map(|(p, _)| p.rsplit('/').next().unwrap_or(p));
    if let Some(&(_, cap)) = PROGRAMS.iter().find(|(p, _)| Some(*p) == program) {
        return Some(cap);
    }
    OPERATIONS.iter().find(|(words, _)| words.iter().any(|w| lower.contains(w))).map(|(_, c)| *c)
}

pub fn explain_denials(stderr: &str, cwd: &str, home: &str) -> Vec<Denial> {
    let mut out: Vec<Denial> = Vec::new();
    for line in stderr.lines() {
        if let Some(d) = entry_refused(line) {
            if !out.iter().any(|o| o.path == d.path && o.capability == d.capability && o.operation.is_some()) {
                out.push(d);
            }
            continue;
        }
        if let Some(d) = door_refused(line) {
            if !out.iter().any(|o| o.path == d.path && o.door == d.door) {
                out.push(d);
            }
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if !REFUSALS.iter().any(|r| lower.contains(r)) {
            continue;
        }
        let Some(spelled) = path_in(line) else { continue };
        let path = paths::absolute(cwd, &spelled, home);
        // A read never meets a read-only mount: what failed there changes
        // something (node's `open` is an open for writing), and the
        // refusal's own "read" is no operation.
        let read_only = lower.contains(READ_ONLY);
        let capability = match operation_of(line, &lower.replace(READ_ONLY, "")) {
            Some(Capability::Read) if read_only => Some(Capability::Write),
            c => c,
        };
        // A rename or an unlink is decided on the folder holding the entry.
        let target = if capability == Some(Capability::Delete) || capability == Some(Capability::Create) {
            paths::parent(&path).to_string()
        } else {
            path.clone()
        };
        let what = capability.map(|c| c.as_str()).unwrap_or("an operation");
        let grant = capability
            .map(|c| format!("`/allow add {} {} {}`", c.as_str(), target, if target == path { "file" } else { "folder" }))
            .unwrap_or_else(|| format!("`/allow add <capability> {target}`"));
        let guidance = format!(
            "dsh-allow: the kernel fence refused {what} on {path} — the file-system permissions the user set for this session. Do not work around it with another command; if it is needed, ask the user, who can grant it with {grant}."
        );
        if !out.iter().any(|d| d.path == path && d.capability == capability) {
            out.push(Denial { path, capability, door: None, operation: None, program: None, pid: None, guidance });
        }
    }
    prefer_the_runner(out)
}

/// The runner's own lines win: a guess from a message about an entry the
/// runner named (the same path, or the same name and capability where the
/// message spelled it through a link) says nothing more, and may say less.
fn prefer_the_runner(denials: Vec<Denial>) -> Vec<Denial> {
    let named: Vec<(String, Option<Capability>)> = denials.iter().filter(|d| d.operation.is_some()).map(|d| (d.path.clone(), d.capability)).collect();
    if named.is_empty() {
        return denials;
    }
    let said = |d: &Denial| {
        named.iter().any(|(p, c)| *p == d.path || (paths::file_name(p) == paths::file_name(&d.path) && (d.capability.is_none() || *c == d.capability)))
    };
    denials.into_iter().filter(|d| d.operation.is_some() || d.door.is_some() || !said(d)).collect()
}

/// One entry the runner's supervisor refused: `dsh-allow: refused
/// <capability> "<path>" (<operation>; <program>, pid <n>)`, the path
/// JSON-quoted. Not a socket's or a signal's line (those name no capability).
fn entry_refused(line: &str) -> Option<Denial> {
    let rest = line.split_once(REFUSED)?.1;
    let (word, rest) = rest.split_once(' ')?;
    let capability = Capability::ALL.into_iter().find(|c| c.as_str() == word)?;
    let (path, rest) = json_string(rest)?;
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (before, pid) = inner.rsplit_once(", pid ")?;
    let (operation, program) = before.split_once("; ")?;
    let pid = pid.trim().parse().ok();
    let guidance = runner_guidance(capability, &path, operation, program);
    Some(Denial { path, capability: Some(capability), door: None, operation: Some(operation.to_string()), program: Some(program.to_string()), pid, guidance })
}

/// A JSON string at the start of `text`, and what follows it.
fn json_string(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let value: String = serde_json::from_str(&text[..i + 2]).ok()?;
                return Some((value, &body[i + 1..]));
            }
            _ => {}
        }
    }
    None
}

/// SQLite's files beside a database `X`: `X-journal`, `X-wal`, `X-shm`.
const SIDECARS: &[(&str, &str)] = &[("-journal", "rollback journal"), ("-wal", "write-ahead log"), ("-shm", "shared-memory index")];

/// The sentence for a refusal the runner named. The narrowest grant names
/// the entry itself (the runner removes, renames or makes exactly what a
/// rule names); SQLite's files beside a database are that database's state,
/// which the call may change once it may write the database.
fn runner_guidance(capability: Capability, path: &str, operation: &str, program: &str) -> String {
    let cap = capability.as_str();
    let dont = "Do not work around it with another command";
    if let Some((database, what)) = SIDECARS.iter().find_map(|(suffix, what)| path.strip_suffix(suffix).filter(|db| !db.ends_with('/')).map(|db| (db, *what))) {
        let left = if what == "rollback journal" && capability == Capability::Delete {
            format!(" The journal stays behind, and until it is removed every later use of {database} fails the same way.")
        } else {
            String::new()
        };
        return format!(
            "dsh-allow: the kernel fence refused {cap} on {path} ({operation} by {program}): it is SQLite's {what} for the database {database}, so the database could not be written (SQLite says \"disk I/O error\").{left} {dont}; if the database is to be written, ask the user, who can grant it with `/allow add write {database} file` (a database the call may write brings its journal and WAL files with it)."
        );
    }
    let kind = if operation == "mkdir" || operation == "rmdir" { "folder" } else { "file" };
    format!(
        "dsh-allow: the kernel fence refused {cap} on {path} ({operation} by {program}) — the file-system permissions the user set for this session. {dont}; if it is needed, ask the user, who can grant it with `/allow add {cap} {path} {kind}`."
    )
}

/// How the Linux runner's supervisor names a door it shut (runner/supervise.rs).
const REFUSED: &str = "dsh-allow: refused ";

/// A socket or signal the runner refused: `connect to unix socket P: why`,
/// `connect to ADDR:PORT: why`, `signal N to pid P (name): why`.
fn door_refused(line: &str) -> Option<Denial> {
    let rest = line.split_once(REFUSED)?.1;
    let dont = "Do not work around it with another command";
    if let Some(what) = rest.strip_prefix("connect to ") {
        let target = what.strip_prefix("unix socket ").unwrap_or(what);
        let (target, why) = target.split_once(": ")?;
        let guidance = if why.contains("DSH host") {
            format!("dsh-allow: the fence refused a connection to {target}, the DSH host's own control plane, which no fenced call may reach. {dont}; nothing grants it.")
        } else {
            format!("dsh-allow: the fence refused a connection to the unix socket {target}: {why}. {dont}; if the program needs it, ask the user, who can grant it with `/allow add write {target} file`.")
        };
        return Some(Denial { path: target.to_string(), capability: None, door: Some("socket".into()), operation: None, program: None, pid: None, guidance });
    }
    let what = rest.strip_prefix("signal ")?;
    let target = what.split_once(" to ")?.1.split(": ").next()?;
    let guidance = format!("dsh-allow: the fence refused a signal to {target}: signals reach only this call's own processes (not the host, not a process an earlier call started). {dont}.");
    Some(Denial { path: target.to_string(), capability: None, door: Some("signal".into()), operation: None, program: None, pid: None, guidance })
}

/// The path a denial line names: the first quoted one, else the word before
/// the final ": Permission denied".
fn path_in(line: &str) -> Option<String> {
    for q in ['\'', '"', '`'] {
        if let Some(start) = line.find(q) {
            if let Some(len) = line[start + 1..].find(q) {
                let p = &line[start + 1..start + 1 + len];
                if !p.is_empty() && !p.contains(' ') || p.starts_with('/') {
                    return Some(p.to_string());
                }
            }
        }
    }
    let lower = line.to_ascii_lowercase();
    let at = REFUSALS.iter().filter_map(|r| lower.rfind(&format!(": {r}"))).max()?;
    let before = line[..at].trim_end();
    let word = before.rsplit([' ', ':']).find(|w| !w.is_empty())?;
    (word.contains('/') || word.contains('.')).then(|| word.trim_end_matches(',').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> (String, Option<Capability>) {
        let d = explain_denials(line, "/w", "/h");
        assert_eq!(d.len(), 1, "{line}: {d:?}");
        (d[0].path.clone(), d[0].capability)
    }

    #[test]
    fn denial_messages_name_the_missing_capability_and_path() {
        use Capability::*;
        assert_eq!(one("rm: cannot remove 'src/main.rs': Permission denied"), ("/w/src/main.rs".into(), Some(Delete)));
        assert_eq!(one("sed: cannot rename ./sedX1a2b3: Permission denied"), ("/w/sedX1a2b3".into(), Some(Delete)));
        assert_eq!(one("warning: unable to unlink '/w/.git/index.lock': Permission denied"), ("/w/.git/index.lock".into(), Some(Delete)));
        assert_eq!(one("touch: cannot touch '/other/x': Permission denied"), ("/other/x".into(), Some(Create)));
        assert_eq!(one("cat: /h/secret.txt: Permission denied"), ("/h/secret.txt".into(), Some(Read)));
        assert_eq!(one("PermissionError: [Errno 13] Permission denied: 'build/x'").0, "/w/build/x");
        assert!(explain_denials("all fine\nno denial here", "/w", "/h").is_empty());
        // Seatbelt's EPERM as macOS tools print it.
        assert_eq!(one("rm: build/main.o: Operation not permitted"), ("/w/build/main.o".into(), Some(Delete)));
        assert_eq!(one("rmdir: /w/build: Operation not permitted"), ("/w/build".into(), Some(Delete)));
        assert_eq!(one("cat: /h/.ssh/id_ed25519: Operation not permitted"), ("/h/.ssh/id_ed25519".into(), Some(Read)));
        assert_eq!(one("touch: /other/x: Operation not permitted"), ("/other/x".into(), Some(Create)));
        assert_eq!(one("PermissionError: [Errno 1] Operation not permitted: '/h/.aws/credentials'").0, "/h/.aws/credentials");
        assert_eq!(one("Error: EPERM: operation not permitted, unlink '/w/src/a.rs'"), ("/w/src/a.rs".into(), Some(Delete)));
        // The Linux runner's read-only tree, outside the writable roots.
        assert_eq!(one("chmod: changing permissions of '/h/.aws': Read-only file system"), ("/h/.aws".into(), Some(Write)));
        assert_eq!(one("touch: setting times of '/h/.bashrc': Read-only file system"), ("/h/.bashrc".into(), Some(Write)));
        assert_eq!(one("touch: cannot touch '/other/x': Read-only file system"), ("/other/x".into(), Some(Create)));
        assert_eq!(one("rm: cannot remove '/other/x': Read-only file system"), ("/other/x".into(), Some(Delete)));
        assert_eq!(one("sh: 1: cannot create /other/x: Read-only file system"), ("/other/x".into(), Some(Create)));
        assert_eq!(one("bash: /other/existing.txt: Read-only file system"), ("/other/existing.txt".into(), None));
        assert_eq!(one("Error: EROFS: read-only file system, open '/other/x'"), ("/other/x".into(), Some(Write)));
        assert_eq!(one("OSError: [Errno 30] Read-only file system: '/h/.ssh/id_rsa'"), ("/h/.ssh/id_rsa".into(), None));
        // The runner's own lines for a socket or a signal.
        let d = explain_denials("x\ndsh-allow: refused connect to unix socket /run/user/0/bus: a process outside this call listens there and no rule or grant of the call names it (write) (python3, pid 7)\ndsh-allow: refused connect to 127.0.0.1:3080: a listener of the DSH host (pid 9), which no fenced call may reach (curl, pid 8)\ndsh-allow: refused signal 10 to pid 9 (node): a process outside this call (bash, pid 8)", "/w", "/h");
        let doors: Vec<(&str, Option<&str>)> = d.iter().map(|d| (d.path.as_str(), d.door.as_deref())).collect();
        assert_eq!(doors, vec![("/run/user/0/bus", Some("socket")), ("127.0.0.1:3080", Some("socket")), ("pid 9 (node)", Some("signal"))]);
        assert!(d[0].guidance.contains("/allow add write /run/user/0/bus file") && d[1].guidance.contains("nothing grants it"), "{d:?}");
        let d = explain_denials("rm: cannot remove 'a': Permission denied", "/w", "/h");
        assert!(d[0].guidance.contains("/allow add delete /w folder") && d[0].guidance.contains("Do not work around it"), "{}", d[0].guidance);
    }

    #[test]
    fn a_refusal_the_runner_names_is_read_from_its_own_line() {
        let d = explain_denials("dsh-allow: refused delete \"/w/out/old.txt\" (unlink; rm, pid 4242)", "/elsewhere", "/h");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].path.as_str(), d[0].capability), ("/w/out/old.txt", Some(Capability::Delete)));
        assert_eq!((d[0].operation.as_deref(), d[0].program.as_deref(), d[0].pid), (Some("unlink"), Some("rm"), Some(4242)));
        // The narrowest grant names the entry itself: the runner removes exactly what a rule names.
        assert!(d[0].guidance.contains("`/allow add delete /w/out/old.txt file`") && d[0].guidance.contains("unlink by rm"), "{}", d[0].guidance);
        // A folder made or removed is granted as a folder; the path is JSON, quotes and all.
        let d = explain_denials("dsh-allow: refused create \"/h/.cache/a \\\"b\\\"\" (mkdir; node, pid 7)", "/w", "/h");
        assert_eq!(d[0].path, "/h/.cache/a \"b\"");
        assert!(d[0].guidance.contains("/allow add create /h/.cache/a \"b\" folder"), "{}", d[0].guidance);
        // Every capability the runner can name, and nothing else.
        for cap in ["read", "write", "create", "delete", "execute"] {
            let line = format!("dsh-allow: refused {cap} \"/w/x\" (open; sh, pid 1)");
            assert_eq!(explain_denials(&line, "/w", "/h")[0].capability.map(|c| c.as_str()), Some(cap), "{line}");
        }
        assert!(explain_denials("dsh-allow: refused delete /w/x (unlink; rm, pid 1)", "/w", "/h").is_empty(), "an unquoted path is no runner line");
    }

    #[test]
    fn the_runner_line_wins_over_a_guess_from_the_program_message_about_the_same_entry() {
        let stderr = "rm: cannot remove 'old.txt': Permission denied\ndsh-allow: refused delete \"/w/old.txt\" (unlink; rm, pid 9)\ncat: /h/secret: Permission denied";
        let d = explain_denials(stderr, "/w", "/h");
        let seen: Vec<(&str, bool)> = d.iter().map(|d| (d.path.as_str(), d.operation.is_some())).collect();
        // The guess about old.txt goes; the read the runner cannot see stays a guess.
        assert_eq!(seen, vec![("/w/old.txt", true), ("/h/secret", false)]);
        // The same entry spelled through a link in the working directory: the name and capability tell.
        let d = explain_denials("sed: cannot rename ./sedAb12: Permission denied\ndsh-allow: refused delete \"/real/w/sedAb12\" (rename; sed, pid 3)", "/w", "/h");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].path, "/real/w/sedAb12");
        // The runner's socket and signal lines are read as before, beside its entry lines.
        let d = explain_denials("dsh-allow: refused connect to unix socket /run/x.sock: no rule names it (curl, pid 5)\ndsh-allow: refused write \"/w/a\" (open; sh, pid 5)", "/w", "/h");
        assert_eq!(d.iter().map(|d| d.door.is_some()).collect::<Vec<_>>(), vec![true, false]);
    }

    #[test]
    fn sqlite_disk_io_error_comes_with_the_journal_it_could_not_remove_and_the_database_to_grant() {
        let stderr = "Error: stepping, disk I/O error (10)\ndsh-allow: refused delete \"/w/app.db-journal\" (unlink; sqlite3, pid 4242)";
        let d = explain_denials(stderr, "/w", "/h");
        assert_eq!(d.len(), 1, "{d:?}");
        let g = &d[0].guidance;
        assert!(g.contains("/w/app.db-journal") && g.contains("rollback journal for the database /w/app.db"), "{g}");
        assert!(g.contains("disk I/O error") && g.contains("every later use of /w/app.db fails"), "{g}");
        assert!(g.contains("`/allow add write /w/app.db file`") && !g.contains("/allow add delete"), "{g}");
        for (sidecar, what) in [("/w/db.sqlite3-wal", "write-ahead log"), ("/w/db.sqlite3-shm", "shared-memory index")] {
            let d = explain_denials(&format!("dsh-allow: refused delete \"{sidecar}\" (unlink; python3, pid 1)"), "/w", "/h");
            assert!(d[0].guidance.contains(what) && d[0].guidance.contains("`/allow add write /w/db.sqlite3 file`"), "{}", d[0].guidance);
        }
        // A name that only ends like one, with nothing before it, is a plain file.
        let d = explain_denials("dsh-allow: refused delete \"/w/-wal\" (unlink; rm, pid 1)", "/w", "/h");
        assert!(d[0].guidance.contains("/allow add delete /w/-wal file"), "{}", d[0].guidance);
    }
}
