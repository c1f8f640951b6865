//! Putting a call's fence up (Linux): built in the child as always, or
//! joined as the keeper holds it ([`super::keeper`]).
//!
//! The parent asks the keeper before it forks (it stays outside every
//! namespace); the child either joins the held namespaces and restricts
//! itself with the held ruleset, or builds both and, when every rule, root
//! and surface it bound is the very file the kept entry names, hands them to
//! the keeper before restricting itself.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

use super::keeper::{self, Asked, Held};
use super::kept::Reused;
use super::linux::{self, Rules, SameFile};
use super::{persistence, readonly, EXIT_FAILED};
use crate::api::Persistence;
use crate::fence::ProfileRequest;
use crate::paths;

/// What the parent found out for the child.
pub struct Plan {
    here: Option<String>,
    surfaces: Vec<String>,
    /// The fence cache and the name this fence is held under, when it may
    /// be held at all (kept, and every file found is the one recorded).
    hold: Option<(String, String)>,
    held: Option<Held>,
    /// The identity each path the compile looked up had.
    ids: BTreeMap<String, (u64, u64)>,
    /// The keeper's pid, when one answers: a host process to the judge.
    pub keeper: Option<i32>,
    asked: &'static str,
}

impl Plan {
    /// In the parent: the persistence surfaces to shut, and what the keeper
    /// holds for this fence (a keeper is started when none answers).
    pub fn of(req: &ProfileRequest, cache: Option<&str>, entry: Option<&Reused>) -> Plan {
        let here = std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned());
        let shut = req.persistence == Persistence::Shut;
        let surfaces = if shut { persistence::surfaces(req, here.as_deref().unwrap_or(&req.workspace)) } else { Vec::new() };
        let mut plan = Plan { here, surfaces, hold: None, held: None, ids: BTreeMap::new(), keeper: None, asked: "not kept" };
        let (Some(dir), Some(entry)) = (cache, entry) else { return plan };
        let Some(name) = keeper::name(&entry.id, shut, &plan.surfaces) else {
            plan.asked = "a surface changed while it was looked at";
            return plan;
        };
        match keeper::get(dir, &name) {
            Asked::Answered(pid, held) => {
                plan.keeper = Some(pid);
                plan.asked = if held.is_some() { "joined" } else { "built" };
                plan.held = held;
            }
            Asked::Nobody => {
                plan.keeper = std::env::current_exe().ok().and_then(|exe| keeper::start(dir, &exe));
                plan.asked = if plan.keeper.is_some() { "built (keeper started)" } else { "built (no keeper could start)" };
            }
            Asked::Silent => plan.asked = "built (the keeper did not answer)",
        }
        if plan.held.is_none() {
            plan.ids = entry.ids();
        }
        plan.hold = Some((dir.to_string(), name));
        plan
    }

    /// Whether the keeper holds this fence (its rules are then not read).
    pub fn holds(&self) -> bool {
        self.held.is_some()
    }
}

/// In the child: the fence up, as [`Plan`] says; the lines
/// `--report-fence` prints after the fence line.
pub fn put_up(req: &ProfileRequest, rules: &Rules, abi: u32, plan: Plan) -> Result<Vec<String>, (u8, String)> {
    let failed = |e: String| (EXIT_FAILED, format!("{e}; nothing was run"));
    let shut = req.persistence == Persistence::Shut;
    if let Some(held) = &plan.held {
        if let Some(ns) = &held.namespaces {
            keeper::enter(ns, plan.here.as_deref()).map_err(failed)?;
        }
        linux::restrict(&held.ruleset)?;
        let (persistence, metadata) = if shut {
            (shut_line(req, &plan.surfaces), "fenced (held)".to_string())
        } else {
            open_lines()
        };
        return Ok(vec![format!("dsh-allow persistence: {persistence}"), format!("dsh-allow metadata: {metadata}"), "dsh-allow held: joined".into()]);
    }
    let ids = &plan.ids;
    // The private terminal instance is the namespace's own: not a file the
    // compile found.
    let same_file = |path: &str, fd: &OwnedFd| {
        paths::within(path, "/dev/pts") || path == "/dev/ptmx" || (ids.get(path).is_some() && ids.get(path).copied() == linux::identity(fd))
    };
    let check: Option<SameFile> = plan.hold.as_ref().map(|_| &same_file as SameFile);
    // Before Landlock: once it applies, no mount may change.
    let (persistence, metadata, mounts_same) = if shut { mount_fences(req, rules, &plan, check).map_err(failed)? } else { open_lines_same() };
    let built = linux::build(rules, abi, check)?;
    let held = match &plan.hold {
        Some((dir, name)) if built.same && mounts_same => hand_over(dir, name, &built.ruleset, shut),
        Some(_) => "built (not held: a path was another file than the kept fence names)",
        None => plan.asked,
    };
    linux::restrict(&built.ruleset)?;
    let held = if held == "handed to the keeper" { format!("{}, handed to the keeper", plan.asked) } else { held.to_string() };
    Ok(vec![format!("dsh-allow persistence: {persistence}"), format!("dsh-allow metadata: {metadata}"), format!("dsh-allow held: {held}")])
}

fn hand_over(dir: &str, name: &str, ruleset: &OwnedFd, shut: bool) -> &'static str {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let Ok(ruleset) = ruleset.try_clone() else { return "built (not held: no descriptor)" };
    let namespaces = if shut {
        match keeper::own_namespaces(!root) {
            Some(ns) => Some(ns),
            None => return "built (not held: its namespaces cannot be opened)",
        }
    } else {
        None
    };
    if keeper::put(dir, name, &Held { ruleset, namespaces }) {
        "handed to the keeper"
    } else {
        "built (not held: the keeper did not take it)"
    }
}

fn open_lines() -> (String, String) {
    ("open (the profile asks not to shut them)".into(), "open (the profile asks for no mount namespace)".into())
}

fn open_lines_same() -> (String, String, bool) {
    let (p, m) = open_lines();
    (p, m, true)
}

fn shut_line(req: &ProfileRequest, surfaces: &[String]) -> String {
    let named: Vec<String> = surfaces.iter().map(|s| s.strip_prefix(&format!("{}/", req.workspace)).unwrap_or(s).to_string()).collect();
    format!("shut ({} surfaces: {})", surfaces.len(), named.join(", "))
}

/// The runner's mount namespace: the tree read-only outside the writable
/// roots ([`readonly`]), then the repository's persistence surfaces
/// ([`persistence`]) and a terminal instance of its own. Says, for
/// `--report-fence`, what each did, and whether every root and surface was
/// the file `check` expects.
fn mount_fences(req: &ProfileRequest, rules: &Rules, plan: &Plan, check: Option<SameFile>) -> Result<(String, String, bool), String> {
    persistence::enter_namespace()?;
    let (metadata, roots_same) = match readonly::fence_tree(&readonly::writable_roots(rules), check)? {
        Some(tree) => (format!("fenced ({} writable roots)", tree.roots), tree.same),
        None => (format!("open ({})", readonly::NO_SETATTR), false),
    };
    persistence::shut(&plan.surfaces)?;
    let surfaces_same = match &plan.hold {
        Some((_, name)) => plan.surfaces.iter().all(|s| keeper::surface_is(name, s)),
        None => false,
    };
    // Other terminals' devices are the user's shells: a fresh instance of
    // /dev/pts shows the call only the terminals it opens itself (and the
    // calls that join this namespace later, under the same fence).
    if let Err(e) = persistence::private_terminals() {
        eprintln!("{}note: other terminals stay visible: {e}", super::PREFIX);
    }
    // The working directory still leads into the mount it was opened on,
    // now read-only: reach it again through the roots put back.
    if let Some(dir) = &plan.here {
        let _ = std::env::set_current_dir(dir);
    }
    Ok((shut_line(req, &plan.surfaces), metadata, roots_same && surfaces_same))
}
