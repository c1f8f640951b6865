//! Putting a call's fence up (Linux): built in the child as always, or
//! joined as the keeper holds it ([`super::keeper`]).
//!
//! The parent asks the keeper before it forks (it stays outside every
//! namespace). The child either joins the held namespaces in a copy of its
//! own and takes the ruleset built for it, or builds both; building, it
//! hands its namespace to the keeper as soon as the tree is read-only and
//! the surfaces are shut — when every writable root and surface it bound is
//! the very file the kept entry names — and before it mounts anything of
//! its own (its terminals, its /proc), which stay the call's.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use super::keeper::{self, Asked, Held};
use super::kept::Reused;
use super::linux::{self, Rules, SameFile};
use super::supervise::Between;
use super::{persistence, readonly, EXIT_FAILED};
use crate::api::Persistence;
use crate::fence::ProfileRequest;

/// Below this many rules a call builds its fence faster than it asks the
/// keeper for it (a round trip to another process that must be woken, and
/// a copy of the held mount namespace). Measured side by side
/// (`benches/runner.mjs`): the default profile's ~190 rules joined cost
/// 0.2-0.8 ms less per call than built, and ~0.2 ms less CPU in all (the
/// call 0.57 ms less, the keeper ~0.36 ms more), so it is held.
const HOLD_FROM: usize = 64;

/// Whether a fence is large enough for the keeper to hold.
pub fn worth_holding(rules: &Rules) -> bool {
    rules.rules.len() >= HOLD_FROM
}

/// Where a fence may be held: the fence cache, the kept entry (its file and
/// name), and the name the keeper holds it under.
struct Hold {
    dir: String,
    slot: PathBuf,
    id: String,
    name: String,
}

/// What the parent found out for the child.
pub struct Plan {
    here: Option<String>,
    surfaces: Vec<String>,
    hold: Option<Hold>,
    held: Option<Held>,
    /// Hand the fence over once built (the keeper lacks it).
    hand_over: bool,
    /// The identity each path the compile looked up had.
    ids: BTreeMap<String, (u64, u64)>,
    /// The keeper's pid, when one answers: a host process to the judge.
    pub keeper: Option<i32>,
    asked: &'static str,
    /// What every call mounts for itself, never held.
    pub per_call: PerCall,
}

/// What changes between calls, so no keeper holds it: mounted by each call
/// after any held namespace is joined, before Landlock.
#[derive(Default)]
pub struct PerCall {
    /// The workspace's `.env` files there now (launch_files.rs).
    pub launch: Vec<String>,
    /// The package managers' code caches (code_caches.rs).
    pub caches: Vec<String>,
    /// The DSH host's temp folders present now (host_temp.rs).
    pub host_folders: Vec<String>,
}

/// In the parent: the folder the call runs in, and the persistence
/// surfaces to shut there (with mount fences).
pub fn surfaces(req: &ProfileRequest, opened: &crate::fence::Opened) -> (Option<String>, Vec<String>) {
    let here = std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned());
    let shut = req.persistence == Persistence::Shut;
    let surfaces = if shut { persistence::surfaces(req, opened, here.as_deref().unwrap_or(&req.workspace)) } else { Vec::new() };
    (here, surfaces)
}

impl Plan {
    /// In the parent: what the keeper holds for this fence (a keeper is
    /// started when none answers), given `here` and the surfaces
    /// ([`surfaces`]); `asked` is the keeper's answer for a name when it was
    /// asked already (while the entry was proven).
    pub fn of(req: &ProfileRequest, (here, surfaces): (Option<String>, Vec<String>), cache: Option<&str>, entry: Option<&Reused>, asked: Option<(String, Asked)>) -> Plan {
        let shut = req.persistence == Persistence::Shut;
        let mut plan = Plan { here, surfaces, hold: None, held: None, hand_over: false, ids: BTreeMap::new(), keeper: None, asked: "built", per_call: PerCall::default() };
        let (Some(dir), Some(entry)) = (cache, entry) else { return plan };
        let Some(name) = keeper::name(&entry.id, shut, &plan.surfaces) else {
            plan.asked = "built (a surface changed while it was looked at)";
            return plan;
        };
        let answer = match asked {
            Some((asked_as, answer)) if asked_as == name => answer,
            _ => keeper::get(dir, &name),
        };
        match answer {
            Asked::Answered(pid, held) => {
                plan.keeper = Some(pid);
                plan.hand_over = held.is_none();
                plan.asked = "built";
                plan.held = held;
            }
            Asked::Nobody => {
                plan.keeper = std::env::current_exe().ok().and_then(|exe| keeper::start(dir, &exe));
                plan.hand_over = plan.keeper.is_some();
                plan.asked = if plan.hand_over { "built (keeper started)" } else { "built (no keeper could start)" };
            }
            Asked::Silent => plan.asked = "built (the keeper did not answer)",
        }
        if plan.hand_over {
            plan.ids = entry.ids();
        }
        plan.hold = Some(Hold { dir: dir.to_string(), slot: entry.slot.clone(), id: entry.id.clone(), name });
        plan
    }
}

/// In the child: the fence up, as [`Plan`] says; `between` starts the
/// call's own process namespace between its mounts and Landlock. The lines
/// `--report-fence` prints after the fence line.
pub fn put_up(req: &ProfileRequest, rules: &Rules, abi: u32, mut plan: Plan, between: &mut Between) -> Result<Vec<String>, (u8, String)> {
    let failed = |e: String| (EXIT_FAILED, format!("{e}; nothing was run"));
    let shut = req.persistence == Persistence::Shut;
    let held = plan.held.take();
    let joined = held.as_ref().and_then(|h| h.namespaces.as_ref());
    // Before Landlock: once it applies, no mount may change.
    let (persistence, metadata, pids, mut said) = match (shut, joined) {
        (true, Some(ns)) => {
            keeper::enter(ns, plan.here.as_deref()).map_err(failed)?;
            let (pids, covered) = own_mounts(&plan).map_err(failed)?;
            (shut_line(req, &plan.surfaces, covered), "fenced (held)".to_string(), pids, "joined")
        }
        (true, None) => mount_fences(req, rules, &plan).map_err(failed)?,
        (false, _) => {
            let said = if plan.hand_over { hand_over(&plan, None) } else { plan.asked };
            let (p, m) = open_lines();
            (p, m, Err("the profile asks for no namespaces".to_string()), said)
        }
    };
    let processes = between(pids)?;
    // The ruleset built for this call alone, with the rules on its own
    // mounts added; or all of them, opened now.
    let own = |p: &str| shut && keeper::on_own_mount(p);
    let (ruleset, whose) = match held.and_then(|h| h.ruleset) {
        Some((r, call)) => {
            linux::add_rules(&r, rules, &own, None)?;
            (r, format!("the keeper's, this fence's call {call} of {}", keeper::SHARED_CALLS))
        }
        None => {
            if said == "joined" {
                said = "joined its namespaces (no ruleset was ready)";
            }
            (linux::build(rules, abi, &|_| true, None)?.ruleset, "built by this call".to_string())
        }
    };
    linux::restrict(&ruleset)?;
    Ok(vec![
        format!("dsh-allow persistence: {persistence}"),
        format!("dsh-allow metadata: {metadata}"),
        format!("dsh-allow processes: {processes}"),
        format!("dsh-allow held: {said}"),
        format!("dsh-allow ruleset: {whose}"),
    ])
}

/// Hand the keeper this call's fence (its namespaces when it has them):
/// what the report says of it.
fn hand_over(plan: &Plan, namespaces: Option<keeper::Namespaces>) -> &'static str {
    let Some(hold) = &plan.hold else { return plan.asked };
    if keeper::put(&hold.dir, &hold.name, &hold.slot, &hold.id, &namespaces) {
        "built, handed to the keeper"
    } else {
        "built (the keeper did not take it)"
    }
}

fn open_lines() -> (String, String) {
    ("open (the profile asks not to shut them)".into(), "open (the profile asks for no mount namespace)".into())
}

fn shut_line(req: &ProfileRequest, surfaces: &[String], covered: usize) -> String {
    let named: Vec<String> = surfaces.iter().map(|s| s.strip_prefix(&format!("{}/", req.workspace)).unwrap_or(s).to_string()).collect();
    format!("shut ({} surfaces: {}); the host's temp folders covered: {covered}", surfaces.len(), named.join(", "))
}

/// The call's own mounts and processes, in the mount namespace it entered
/// or joined: what changes between calls ([`PerCall`]: the workspace's
/// `.env`, the code caches, the host's temp folders), its own process
/// namespace (its init mounts its /proc), and a terminal instance of its
/// own; then back to its working folder. The process namespace's outcome
/// and how many host temp folders were covered.
fn own_mounts(plan: &Plan) -> Result<(Result<(), String>, usize), String> {
    use super::{code_caches, host_temp, launch_files};
    launch_files::shut(&plan.per_call.launch)?;
    code_caches::shut(&plan.per_call.caches)?;
    let covered = host_temp::hide(&plan.per_call.host_folders)?;
    // Its own processes only (init.rs); where the kernel refuses, the
    // call runs as before, seeing the user's other processes.
    let pids = persistence::enter_process_namespace();
    // Other terminals' devices are the user's shells: a fresh instance of
    // /dev/pts shows the call only the terminals it opens itself.
    if let Err(e) = persistence::private_terminals() {
        eprintln!("{}note: other terminals stay visible: {e}", super::PREFIX);
    }
    // The working directory still leads into the mount it was opened on,
    // now read-only: reach it again through the roots put back.
    if let Some(dir) = &plan.here {
        let _ = std::env::set_current_dir(dir);
    }
    Ok((pids, covered))
}

/// What the mounts did, for `--report-fence`: persistence, metadata, the
/// process namespace (or why not), and what became of holding the fence.
type Mounted = (String, String, Result<(), String>, &'static str);

/// The runner's mount namespace: the tree read-only outside the writable
/// roots ([`readonly`]), then the repository's persistence surfaces
/// ([`persistence`]); handed to the keeper at that point when it may hold
/// it; then the call's own mounts. Says, for `--report-fence`, what each
/// did.
fn mount_fences(req: &ProfileRequest, rules: &Rules, plan: &Plan) -> Result<Mounted, String> {
    persistence::enter_namespace()?;
    let ids = &plan.ids;
    let same_file = |path: &str, fd: &OwnedFd| ids.contains_key(path) && ids.get(path).copied() == linux::identity(fd);
    let check: Option<SameFile> = plan.hand_over.then_some(&same_file as SameFile);
    let (metadata, roots_same) = match readonly::fence_tree(&readonly::writable_roots(rules), check)? {
        Some(tree) => (format!("fenced ({} writable roots)", tree.roots), tree.same),
        None => (format!("open ({})", readonly::NO_SETATTR), false),
    };
    persistence::shut(&plan.surfaces)?;
    let said = match &plan.hold {
        Some(hold) if plan.hand_over => {
            let surfaces_same = plan.surfaces.iter().all(|s| keeper::surface_is(&hold.name, s));
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            match keeper::own_namespaces(!root) {
                Some(ns) if roots_same && surfaces_same => hand_over(plan, Some(ns)),
                _ => "built (not held: a path was another file than the kept fence names)",
            }
        }
        _ => plan.asked,
    };
    let (pids, covered) = own_mounts(plan)?;
    Ok((shut_line(req, &plan.surfaces, covered), metadata, pids, said))
}
