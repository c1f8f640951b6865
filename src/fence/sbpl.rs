//! The fence plan as Seatbelt profile text (applied with
//! `/usr/bin/sandbox-exec -p <text> -D P0=/path … -- argv`).
//!
//! Paths go in as parameters, never spliced into the text. Two Seatbelt facts
//! shape the order (spec, measured by its authors): a wildcard deny loses to
//! a specific allow, so every deny names its operations; and for the same
//! operation the later rule wins, so grants go from shallow to deep, each
//! followed by the denials inside it, and the permission store comes last.

use serde::{Deserialize, Serialize};

use super::{Enforce, FencePlan};
use crate::policy::baseline;
use crate::policy::capability::Capability;
use crate::paths;

const FIXED: &str = include_str!("seatbelt-base.sbpl");

/// The names SQLite gives a database's rollback journal, write-ahead log
/// and shared-memory index (`X-journal`, `X-wal`, `X-shm`), as a Seatbelt
/// regex over the whole path.
pub const SIDECARS: &str = "-(journal|wal|shm)$";

/// The SBPL operations a capability maps to.
pub fn operations(cap: Capability) -> &'static [&'static str] {
    match cap {
        // file-read-metadata stays allowed, or no path could be resolved.
        Capability::Read => &["file-read-data"],
        Capability::Write => &[
            "file-write-data",
            "file-write-xattr",
            "file-write-mode",
            "file-write-flags",
            "file-write-owner",
            "file-write-times",
        ],
        Capability::Create => &["file-write-create"],
        Capability::Delete => &["file-write-unlink"],
        Capability::Execute => &["process-exec"],
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sbpl {
    pub text: String,
    /// `-D NAME=value` pairs, in order.
    pub params: Vec<(String, String)>,
}

/// The longest `-D` value (and string in the text), in bytes: macOS's
/// PATH_MAX is 1024 with the NUL (XNU bsd/sys/syslimits.h), and Seatbelt is
/// reported to cap each string near 1 KiB; the stricter of the two.
pub const MAX_STRING_BYTES: usize = 1023;

/// What `sandbox-exec -p TEXT -D K=V …` may take of the exec argument area:
/// a quarter of macOS's 1 MiB ARG_MAX (argv and environment together), so the
/// command and the environment keep the rest.
pub const MAX_ARGV_BYTES: usize = 256 * 1024;

impl Sbpl {
    /// Whether sandbox-exec can be handed this profile. A path Seatbelt
    /// cannot hold fails the compile (the call does not run) rather than
    /// being dropped: dropping a denial would widen the fence.
    pub fn within_limits(&self) -> Result<(), String> {
        for (k, v) in &self.params {
            if v.len() > MAX_STRING_BYTES {
                return Err(format!(
                    "the Seatbelt profile cannot name a {}-byte path (macOS takes at most {MAX_STRING_BYTES}): {}…",
                    v.len(),
                    v.chars().take(80).collect::<String>()
                ));
            }
            if v.contains('\0') || k.contains('\0') {
                return Err(format!("the Seatbelt profile cannot pass a path holding a NUL byte: {v:?}"));
            }
        }
        let each = |n: usize| n + 1 + std::mem::size_of::<usize>();
        let bytes = self.params.iter().map(|(k, v)| each(2) + each(k.len() + 1 + v.len())).sum::<usize>()
            + each("/usr/bin/sandbox-exec".len())
            + each(2)
            + each(self.text.len());
        if bytes > MAX_ARGV_BYTES {
            return Err(format!(
                "the Seatbelt profile and its parameters take {bytes} bytes of arguments (at most {MAX_ARGV_BYTES}): too many rules or paths for one call"
            ));
        }
        Ok(())
    }

    /// The argv that runs `argv` under this profile.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = vec!["/usr/bin/sandbox-exec".to_string(), "-p".into(), self.text.clone()];
        for (k, v) in &self.params {
            out.push("-D".into());
            out.push(format!("{k}={v}"));
        }
        out.extend(argv.iter().cloned());
        out
    }
}

struct Params(Vec<(String, String)>);

impl Params {
    fn of(&mut self, path: &str) -> String {
        let i = match self.0.iter().position(|(_, v)| v == path) {
            Some(i) => i,
            None => {
                self.0.push((format!("P{}", self.0.len()), path.to_string()));
                self.0.len() - 1
            }
        };
        format!("(param \"P{i}\")")
    }
}

/// `written` is every spelling of each plan path (real first, as written second),
/// so a rule matches whichever name the kernel resolved.
/// The side doors Seatbelt can shut: unix sockets reached outside the
/// workspace and the roots a rule or grant opens for write, the DSH host's
/// own loopback ports, signals and process information beyond this call.
pub struct Doors {
    pub socket_roots: Vec<String>,
    pub host_ports: Vec<u16>,
}

/// One managed `deny` entry as the profile shuts it: its path, whether its
/// contents too, and the capabilities denied.
pub struct Denial {
    pub path: String,
    pub recursive: bool,
    pub access: Vec<Capability>,
}

pub fn render(plan: &FencePlan, spellings: &dyn Fn(&str) -> Vec<String>, protected_files: &[String], surfaces: &[String], denials: &[Denial], doors: &Doors, workspace: &str) -> Sbpl {
    let mut params = Params(Vec::new());
    let mut t = String::from(FIXED);
    if plan.enforce == Enforce::Off {
        t.push_str("; enforce: off — nothing is fenced\n");
        return Sbpl { text: t, params: params.0 };
    }
    t.push_str(&format!("; enforce: {:?}\n", plan.enforce).to_lowercase());
    t.push_str("; 1. fence: every fenced operation is denied first\n");
    for &cap in &plan.handled {
        if cap == Capability::Read && plan.enforce == Enforce::Guarded {
            // The guarded read fence: user data areas first, rules re-open.
            for root in baseline::read_fence_roots(crate::api::Platform::Macos) {
                t.push_str(&format!("(deny file-read-data (subpath {}))\n", params.of(root)));
            }
            continue;
        }
        t.push_str(&format!("(deny {})\n", operations(cap).join(" ")));
    }

    t.push_str("; 2. grants, shallow to deep, each followed by what stays shut inside it\n");
    let mut grants = plan.grants.clone();
    grants.sort_by_key(|g| (paths::depth(&g.path), g.path.clone()));
    for g in &grants {
        // Guarded leaves reads outside the user data areas to `allow default`,
        // but for the credential stores out there, denied here, before any
        // deeper grant can open one again.
        if plan.enforce == Enforce::Guarded && g.path == "/" {
            let fenced = baseline::read_fence_roots(crate::api::Platform::Macos);
            for x in g.except.iter().filter(|x| !fenced.contains(&x.as_str())) {
                let filters: Vec<String> = spellings(x).iter().map(|p| format!("(subpath {})", params.of(p))).collect();
                t.push_str(&format!("(deny {} {})\n", operations(Capability::Read).join(" "), filters.join(" ")));
            }
            continue;
        }
        let ops: Vec<&str> = g.access.iter().flat_map(|c| operations(*c).iter().copied()).collect();
        let mut names = spellings(&g.path);
        for a in &g.aliases {
            if !names.contains(a) {
                names.push(a.clone());
            }
        }
        let filters: Vec<String> = names.iter().map(|p| format!("(subpath {})", params.of(p))).collect();
        t.push_str(&format!("(allow {} {})\n", ops.join(" "), filters.join(" ")));
        // SQLite's journal, WAL and shm beside a database the call may
        // write are that database's state. Seatbelt cannot tell a database
        // from a file, nor the call's own files from the user's: it lets the
        // call remove any entry so named where it may write.
        let sidecars = g.access.contains(&Capability::Write) && !g.access.contains(&Capability::Delete);
        if sidecars {
            for f in &filters {
                t.push_str(&format!("(allow file-write-unlink (require-all {f} (regex #\"{SIDECARS}\")))\n"));
            }
        }
        let shut: Vec<&str> = if sidecars { ops.iter().copied().chain(["file-write-unlink"]).collect() } else { ops.clone() };
        for x in &g.except {
            let filters: Vec<String> = spellings(x).iter().map(|p| format!("(subpath {})", params.of(p))).collect();
            t.push_str(&format!("(deny {} {})\n", shut.join(" "), filters.join(" ")));
        }
    }

    host_state(&mut t, &mut params, &spellings(workspace), &plan.handled);

    // Seatbelt matches paths, so unlike Landlock it can shut a name inside
    // `.git` without taking create and delete from `.git` itself, and a
    // surface that does not exist yet is shut too.
    t.push_str("; 4. the repository's hooks and config, operation by operation, after every grant\n");
    for s in surfaces {
        for p in spellings(s) {
            let at = params.of(&p);
            for cap in [Capability::Write, Capability::Create, Capability::Delete] {
                t.push_str(&format!("(deny {} (subpath {at}))\n", operations(cap).join(" ")));
            }
        }
    }

    t.push_str("; 5. the permission store, operation by operation, after every grant\n");
    let mut folders: Vec<String> = Vec::new();
    for f in protected_files {
        for p in spellings(f) {
            let file = params.of(&p);
            for cap in [Capability::Write, Capability::Create, Capability::Delete] {
                t.push_str(&format!("(deny {} (literal {file}))\n", operations(cap).join(" ")));
            }
            // The folder holding it may not be removed or renamed away (once
            // per folder: the store and the audit log often share one).
            let dir = params.of(paths::parent(&p));
            if !folders.contains(&dir) {
                t.push_str(&format!("(deny file-write-unlink (literal {dir}))\n"));
                folders.push(dir);
            }
        }
    }
    managed(&mut t, &mut params, spellings, denials);
    side_doors(&mut t, &mut params, spellings, doors);
    Sbpl { text: t, params: params.0 }
}

/// Section 3, after every grant (no rule on a temp or system folder opens
/// these): the DSH host's own temp folders, every operation this tier
/// fences; then, where reads are fenced, deployed applications' `.env`
/// files in system folders (the workspace's own excepted). Fixed patterns,
/// not paths: the host makes a new folder for each process, under the
/// per-user temp folder below `/var/folders` as well as `/tmp`, and a `.env`
/// may be anywhere below a system folder.
fn host_state(t: &mut String, params: &mut Params, workspace: &[String], handled: &[Capability]) {
    t.push_str("; 3. the DSH host's temp folders (spilled results, overflowing output), and .env files in system folders\n");
    let ops: Vec<&str> = handled.iter().flat_map(|&c| operations(c).iter().copied()).collect();
    let names = baseline::HOST_TEMP_PREFIXES.iter().map(|p| p.trim_end_matches('-')).collect::<Vec<_>>().join("|");
    t.push_str(&format!("(deny {} (regex #\"^(/private)?/(tmp|var/tmp|var/folders)(/[^/]+)*/({names})-[A-Za-z0-9]{{6}}(/|$)\"))\n", ops.join(" ")));
    if !handled.contains(&Capability::Read) {
        return;
    }
    let roots: Vec<&str> = baseline::dotenv_roots(crate::api::Platform::Macos).iter().filter_map(|r| r.strip_prefix('/')).filter(|r| !r.starts_with("private/")).collect();
    let read = operations(Capability::Read).join(" ");
    t.push_str(&format!("(deny {read} (regex #\"^(/private)?/({})(/[^/]+)*/\\.env(\\.[^/]+)?$\"))\n", roots.join("|")));
    for w in workspace {
        t.push_str(&format!("(allow {read} (require-all (subpath {}) (regex #\"/\\.env(\\.[^/]+)?$\")))\n", params.of(w)));
    }
}

/// Section 5b. The managed policy's denials come after every grant, so no
/// later rule reopens them, and name every capability they deny whatever
/// the tier fences (Seatbelt can say it; a tier only bounds what the
/// decision counts on). No folder above one may be renamed or removed:
/// that would carry what it holds out from under the denial.
fn managed(t: &mut String, params: &mut Params, spellings: &dyn Fn(&str) -> Vec<String>, denials: &[Denial]) {
    if denials.is_empty() {
        return;
    }
    t.push_str("; 5b. the managed policy's denials, operation by operation, after every grant\n");
    let mut above: Vec<String> = Vec::new();
    for d in denials {
        for p in spellings(&d.path) {
            let at = params.of(&p);
            let filter = if d.recursive { format!("(subpath {at})") } else { format!("(literal {at})") };
            for &cap in &d.access {
                t.push_str(&format!("(deny {} {filter})\n", operations(cap).join(" ")));
            }
            let mut dir = p.as_str();
            while dir != "/" && !dir.is_empty() {
                dir = paths::parent(dir);
                let at = params.of(dir);
                if !above.contains(&at) {
                    t.push_str(&format!("(deny file-write-unlink (literal {at}))\n"));
                    above.push(at);
                }
            }
        }
    }
}

/// Section 6. Seatbelt judges a unix socket by its path and cannot tell
/// whose it is, so the call reaches those in the workspace (its own test
/// servers) and under a root a rule or grant of the call opens for write
/// (`docker.sock` granted): not the temp folders, where launchd's ssh-agent
/// and other daemons listen. A path filter does not match an IP
/// connection; the host's own ports are named by `remote ip`.
fn side_doors(t: &mut String, params: &mut Params, spellings: &dyn Fn(&str) -> Vec<String>, doors: &Doors) {
    t.push_str("; 6. side doors: unix sockets, the DSH host's ports, signals and process information beyond this call\n");
    t.push_str("(deny network-outbound (subpath \"/\"))\n");
    for root in &doors.socket_roots {
        let filters: Vec<String> = spellings(root).iter().map(|p| format!("(subpath {})", params.of(p))).collect();
        t.push_str(&format!("(allow network-outbound {})\n", filters.join(" ")));
    }
    for port in &doors.host_ports {
        t.push_str(&format!("(deny network-outbound (remote ip \"localhost:{port}\"))\n"));
    }
    t.push_str("(deny signal)\n(allow signal (target same-sandbox))\n");
    t.push_str("(deny process-info*)\n(allow process-info* (target same-sandbox))\n");
}

/// Render with both spellings of every path from `host`.
pub fn render_for(req: &super::ProfileRequest, plan: &FencePlan, host: &dyn crate::host::Host) -> Sbpl {
    let home = paths::normalize(&req.home);
    let spell = |p: &str| -> Vec<String> {
        let written = paths::normalize(p);
        let real = host.canonical(&written);
        if real == written {
            vec![written]
        } else {
            vec![real, written]
        }
    };
    let protected: Vec<String> = req.protected_files.iter().map(|p| paths::absolute("/", p, &home)).collect();
    let surfaces = if plan.enforce == Enforce::Off { Vec::new() } else { req.repository_surfaces(&req.opened()) };
    let mut socket_roots = vec![paths::normalize(&req.workspace)];
    socket_roots.extend(req.socket_roots().into_iter().map(|(p, _)| p));
    let doors = Doors { socket_roots, host_ports: req.host_ports.clone() };
    let denials: Vec<Denial> = if plan.enforce == Enforce::Off {
        Vec::new()
    } else {
        req.managed.iter().flat_map(|m| &m.deny).map(|r| {
            let access = crate::policy::managed::effective(r, req.platform, true);
            Denial { path: paths::absolute("/", &r.path, &home), recursive: r.recursive, access: Capability::ALL.into_iter().filter(|&c| access.grants(c)).collect() }
        }).collect()
    };
    render(plan, &spell, &protected, &surfaces, &denials, &doors, &paths::normalize(&req.workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_param(value: String) -> Sbpl {
        Sbpl { text: "(version 1)\n(allow default)\n(deny file-write-data (subpath (param \"P0\")))\n".into(), params: vec![("P0".into(), value)] }
    }

    #[test]
    fn a_path_longer_than_macos_can_name_is_refused_and_one_that_fits_is_not() {
        let fits = format!("/{}", "a".repeat(MAX_STRING_BYTES - 1));
        assert!(with_param(fits.clone()).within_limits().is_ok());
        let err = with_param(format!("{fits}b")).within_limits().unwrap_err();
        assert!(err.contains("1024-byte path"), "{err}");
        assert!(with_param("/a\0b".into()).within_limits().is_err());
    }

    #[test]
    fn a_profile_past_the_argument_budget_is_refused() {
        let mut s = with_param("/w".into());
        for i in 1..400 {
            s.params.push((format!("P{i}"), format!("/{}", "x".repeat(900))));
        }
        assert!(s.within_limits().unwrap_err().contains("bytes of arguments"));
    }
}
