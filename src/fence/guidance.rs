//! Kernel denials turned into guidance: when a fenced command fails with
//! "Permission denied" / "Operation not permitted" / "Read-only file
//! system", name the capability that was missing and where, and the
//! narrowest `/allow add` that would grant it, instead of leaving the model
//! a bare error to work around.

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
            out.push(Denial { path, capability, door: None, guidance });
        }
    }
    out
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
        return Some(Denial { path: target.to_string(), capability: None, door: Some("socket".into()), guidance });
    }
    let what = rest.strip_prefix("signal ")?;
    let target = what.split_once(" to ")?.1.split(": ").next()?;
    let guidance = format!("dsh-allow: the fence refused a signal to {target}: signals reach only this call's own processes (not the host, not a process an earlier call started). {dont}.");
    Some(Denial { path: target.to_string(), capability: None, door: Some("signal".into()), guidance })
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
}
