//! Rules → the fence the kernel enforces.
//!
//! The same [`Policy`] the decision reads is compiled into a [`FencePlan`]:
//! per capability, the roots the kernel opens, each with the paths inside it
//! that must stay shut (Landlock only grants, so a shut path inside an open
//! root is compiled around by the runner). [`sbpl`] renders the plan for
//! Seatbelt, [`landlock`] maps it to Landlock access rights, and
//! [`guidance`] reads what the kernel then denied. Pure: applying a fence
//! is the runner's (`crate::runner`, an adapter).

pub mod guidance;
pub mod landlock;
pub mod sbpl;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api::{Mode, Persistence, Platform};
/// The fence tiers live with the policy: a managed policy names the one it requires.
pub use crate::policy::Enforce;
use crate::policy::baseline;
use crate::policy::capability::Capability;
use crate::host::{Host, Memo, PathKind};
use crate::paths;
use crate::policy::resolve::{Policy, PolicyInput, Spellings};
use crate::policy::rules::Rule;

/// Everything the profile of one call is compiled from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileRequest {
    pub workspace: String,
    pub home: String,
    pub harness_home: String,
    pub platform: Platform,
    pub mode: Mode,
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// This call's one-shot grants (and a matched command grant's roots).
    #[serde(default)]
    pub grants: Vec<Rule>,
    #[serde(default)]
    pub protected_files: Vec<String>,
    #[serde(default = "full")]
    pub enforce: Enforce,
    /// Whether the runner shuts the repository's hooks and config (Linux:
    /// read-only bind mounts in a namespace of its own; in the same
    /// namespace it makes the tree read-only outside the writable roots,
    /// which fences metadata). Absent means shut, and a runner that cannot
    /// runs nothing; the plugin sends `open` only after its probe found
    /// namespaces unavailable, and then the decision asks for hidden code in
    /// a repository.
    #[serde(default = "shut")]
    pub persistence: Persistence,
    /// The DSH host's processes: whatever they listen on (the web server
    /// that answers cards and switches modes) no fenced call may reach. The
    /// runner adds its own parent, which under DSH is the host.
    #[serde(default)]
    pub host_pids: Vec<i32>,
    /// The loopback ports the DSH host listens on, for Seatbelt (which
    /// names ports, not processes).
    #[serde(default)]
    pub host_ports: Vec<u16>,
    /// Folders the call's line makes that its grants need to exist when the
    /// fence goes up (the decision's `folders`; Linux: made before it).
    #[serde(default)]
    pub folders: Vec<String>,
    /// Files the call replaces whose content is kept first (the decision's
    /// `kept`; Linux: copied into the harness home before the fence).
    #[serde(default)]
    pub kept: Vec<String>,
    /// The administrator's managed policy: its denials are compiled like
    /// the protected paths, its asks open only to a card's grant, and a
    /// profile it lets no call run under runs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<crate::policy::managed::Managed>,
}

fn full() -> Enforce {
    Enforce::Full
}

fn shut() -> Persistence {
    Persistence::Shut
}

impl ProfileRequest {
    /// Whether this profile puts up any fence at all.
    pub fn fences(&self) -> bool {
        self.mode != Mode::DangerFullAccess && self.enforce != Enforce::Off
    }

    /// The paths a rule or grant of this profile opens to a mutating
    /// capability, normalized and sorted once per call: the surfaces the
    /// fence shuts are then looked up, not checked against every rule each
    /// (a year of Always allow is thousands of rules).
    pub fn opened(&self) -> Opened {
        let mut paths: Vec<String> = self
            .rules
            .iter()
            .chain(&self.grants)
            .filter(|r| Capability::ALL.iter().any(|&c| c.mutates() && r.access.grants(c)))
            .map(|r| paths::normalize(&r.path))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        Opened(paths)
    }

    /// The roots where a rule or grant of this profile gives write: a unix
    /// socket there may be connected to (connecting is writing to it). The
    /// baseline opens none: `/tmp` is all five, and ssh-agent, tmux and X
    /// keep their sockets there.
    pub fn socket_roots(&self) -> Vec<(String, bool)> {
        self.rules
            .iter()
            .chain(&self.grants)
            .filter(|r| r.access.grants(Capability::Write))
            .map(|r| (paths::normalize(&r.path), r.recursive))
            .collect()
    }

    /// The workspace repository's persistence surfaces the fence shuts
    /// (whether or not they exist yet), less those a rule names.
    pub fn repository_surfaces(&self, opened: &Opened) -> Vec<String> {
        let ws = paths::normalize(&self.workspace);
        baseline::REPOSITORY_SURFACES.iter().map(|rel| format!("{ws}/{rel}")).filter(|s| !opened.names(s)).collect()
    }
}

/// What [`ProfileRequest::opened`] found, sorted.
#[derive(Debug, Clone, Default)]
pub struct Opened(Vec<String>);

impl Opened {
    /// Whether a rule or grant names the persistence surface (its path, or
    /// one inside it) with a mutating capability: the user opened it (`git
    /// config` allowed for git, a hook asked for). The paths inside a
    /// surface sort together right after `surface/`.
    pub fn names(&self, surface: &str) -> bool {
        if surface == "/" {
            return !self.0.is_empty();
        }
        if self.0.binary_search_by(|p| p.as_str().cmp(surface)).is_ok() {
            return true;
        }
        let below = format!("{surface}/");
        let first = self.0.partition_point(|p| p.as_str() < below.as_str());
        self.0.get(first).is_some_and(|p| p.starts_with(&below))
    }
}

/// One root the kernel opens for some capabilities, minus what must stay shut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FenceGrant {
    pub path: String,
    /// Other spellings of `path` (as written in a rule or the baseline);
    /// Seatbelt matches what the kernel resolved, so both are emitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub access: Vec<Capability>,
    /// Paths strictly inside `path` that these capabilities must not reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FencePlan {
    pub enforce: Enforce,
    /// The capabilities the kernel refuses unless a grant opens them.
    pub handled: Vec<Capability>,
    pub grants: Vec<FenceGrant>,
    /// What the kernel cannot carry as precisely as the decision, in words.
    pub notes: Vec<String>,
}

impl FencePlan {
    /// The capabilities this plan refuses at `path` (a real path): handled,
    /// and no grant opens them there. What the ledger names when a program's
    /// error says only "Permission denied" — the kernel refused one of these.
    pub fn withheld_at(&self, path: &str) -> Vec<Capability> {
        let path = paths::normalize(path);
        let opens = |g: &FenceGrant, cap: Capability| {
            g.access.contains(&cap)
                && std::iter::once(&g.path).chain(&g.aliases).any(|root| paths::within(&path, root))
                && !g.except.iter().any(|e| paths::within(&path, e))
        };
        self.handled.iter().copied().filter(|&cap| !self.grants.iter().any(|g| opens(g, cap))).collect()
    }
}

pub fn compile(req: &ProfileRequest, host: &dyn Host) -> FencePlan {
    compile_with(req, host, &[])
}

/// [`compile`], with the `.env` files an adapter found in system folders
/// (`baseline::dotenv_roots`; Linux: runner/dotenv.rs) shut as credential
/// stores are: Landlock cannot match a name, so each is compiled around.
pub fn compile_with(req: &ProfileRequest, host: &dyn Host, found_dotenv: &[String]) -> FencePlan {
    let memo = Memo::new(host);
    let host: &dyn Host = &memo;
    if !req.fences() {
        return FencePlan { enforce: Enforce::Off, handled: Vec::new(), grants: Vec::new(), notes: Vec::new() };
    }
    let mut policy = Policy::new(
        &PolicyInput {
            platform: req.platform,
            mode: req.mode,
            home: &req.home,
            workspace: &req.workspace,
            harness_home: &req.harness_home,
            rules: &req.rules,
            grants: &req.grants,
            protected_files: &req.protected_files,
            for_fence: true,
            managed: req.managed.as_ref(),
        },
        host,
    );
    for f in found_dotenv {
        let spelled = Spellings::of_root(f, host);
        if !policy.is_in_workspace(&spelled) && !policy.credentials.contains(&spelled) {
            policy.credentials.push(spelled);
        }
    }
    let handled = handled(req.enforce);
    let roots = Roots::of(&policy, host);
    let mut plan = FencePlan { enforce: req.enforce, handled, grants: Vec::new(), notes: Vec::new() };
    grant_roots(req, &policy, &roots, host, &mut plan);

    // Guarded: reads stay open outside the user data areas, and outside
    // the credential stores that lie elsewhere (`/etc/shadow`, `/run/secrets`)
    // and dsh-allow's own state (a harness home outside home).
    if req.enforce == Enforce::Guarded {
        let mut shut: Vec<String> = baseline::read_fence_roots(req.platform).iter().map(|s| s.to_string()).collect();
        let managed = policy.managed_deny.iter().chain(&policy.managed_ask).filter(|e| e.access.grants(Capability::Read)).map(|e| &e.roots);
        for store in policy.credentials.iter().chain(managed).chain(&policy.protected_files) {
            let real = store.real().to_string();
            if !shut.iter().any(|s| paths::within(&real, s)) && !policy.resolve(store, Capability::Read).granted {
                shut.push(real);
            }
        }
        push(&mut plan.grants, &roots.aliases, "/".into(), Capability::Read, shut);
    }

    // Devices every program writes to; reserved for rules, fixed here.
    // Landlock rules are opened by real path with no symlink followed
    // (`/dev/ptmx` is a link into `/dev/pts` in some containers).
    let linux = req.platform == Platform::Linux;
    for d in baseline::DEVICE_STREAMS {
        let d = if linux { host.canonical(d) } else { d.to_string() };
        for cap in [Capability::Read, Capability::Write] {
            if plan.handled.contains(&cap) {
                push(&mut plan.grants, &roots.aliases, d.clone(), cap, Vec::new());
            }
        }
    }

    let denied: Vec<Spellings> = policy.managed_deny.iter().map(|e| e.roots.clone()).collect();
    let kept: [(&[Spellings], &str); 3] =
        [(&policy.protected_files, "the permission store"), (&policy.credentials, "a credential store"), (&denied, "what the managed policy denies")];
    for (shut, what) in kept {
        for f in shut {
            let dir = paths::parent(f.real());
            if plan.grants.iter().any(|g| g.except.iter().any(|e| e == f.real()) && g.access.iter().any(|c| matches!(c, Capability::Create | Capability::Delete))) {
                plan.notes.push(format!(
                    "{dir} holds {what}: its other entries stay open, but nothing can be made or removed directly in it"
                ));
            }
        }
    }
    if linux {
        plan.notes.extend(landlock::degrade_notes());
    }
    plan.notes.dedup();
    plan
}

/// Every root any tier names, in its real spelling: these are the only
/// places where the answer can change.
struct Roots {
    /// (real path, recursive), in the order met.
    list: Vec<(String, bool)>,
    /// Real path → its place in `list`, sorted.
    index: BTreeMap<String, usize>,
    /// (real, written) where a root was written another way.
    aliases: Vec<(String, String)>,
}

impl Roots {
    fn of(policy: &Policy, host: &dyn Host) -> Roots {
        let mut r = Roots { list: Vec::new(), index: BTreeMap::new(), aliases: Vec::new() };
        for p in &policy.explicit {
            r.add(&p.roots, p.recursive);
        }
        for (p, _) in &policy.baseline {
            r.add(&p.roots, p.recursive);
        }
        // The managed policy's entries: shut inside any root that opens
        // them, like the protected paths (an ask opens to a card's grant).
        for p in policy.managed_deny.iter().chain(&policy.managed_ask) {
            r.add(&p.roots, p.recursive);
        }
        // Shut inside any open root: a rule on home compiles around the shell's
        // start-up files as it does around the credential stores. (A
        // repository's hooks and config are shut by the runner's read-only
        // bind mounts instead: compiling around them would take from `.git`
        // itself the create and delete git's lock files need.)
        for s in policy.protected_files.iter().chain(&policy.reserved).chain(&policy.credentials).chain(&policy.startup) {
            r.add(s, true);
        }
        for f in &policy.protected_files {
            r.add(&Spellings::of(paths::parent(f.real()), host), true);
        }
        r
    }

    fn add(&mut self, s: &Spellings, recursive: bool) {
        let real = s.real().to_string();
        if s.written() != real && !self.aliases.iter().any(|(r, w)| r == &real && w == s.written()) {
            self.aliases.push((real.clone(), s.written().to_string()));
        }
        if !self.index.contains_key(&real) {
            self.index.insert(real.clone(), self.list.len());
            self.list.push((real, recursive));
        }
    }

    /// The roots strictly inside each root: a prefix range of the sorted index.
    fn inside(&self) -> Vec<Vec<usize>> {
        self.list
            .iter()
            .map(|(root, _)| {
                self.index
                    .range::<str, _>((std::ops::Bound::Excluded(root.as_str()), std::ops::Bound::Unbounded))
                    .take_while(|(d, _)| d.starts_with(root.as_str()))
                    .filter(|(d, _)| paths::within(d, root))
                    .map(|(_, &j)| j)
                    .collect()
            })
            .collect()
    }
}

/// Add `cap` on `path` (minus `except`) to the grants, merging with a grant
/// of the same path and exceptions.
fn push(grants: &mut Vec<FenceGrant>, aliases: &[(String, String)], path: String, cap: Capability, except: Vec<String>) {
    match grants.iter_mut().find(|g| g.path == path && g.except == except) {
        Some(g) if !g.access.contains(&cap) => g.access.push(cap),
        Some(_) => {}
        None => {
            let also = aliases.iter().filter(|(r, _)| r == &path).map(|(_, w)| w.clone()).collect();
            grants.push(FenceGrant { path, aliases: also, access: vec![cap], except })
        }
    }
}

/// For each fenced capability, the roots that grant it, each minus the
/// roots inside it that do not.
fn grant_roots(req: &ProfileRequest, policy: &Policy, roots: &Roots, host: &dyn Host, plan: &mut FencePlan) {
    let inside = roots.inside();
    // Each (root, capability) is resolved once: a root is asked about as a
    // grant and again as a shut path inside every root that holds it.
    let mut answers: Vec<Option<[bool; 5]>> = vec![None; roots.list.len()];
    let mut granted = |i: usize, cap: Capability| -> bool {
        let all = answers[i].get_or_insert_with(|| policy.resolve_all(&Spellings(vec![roots.list[i].0.clone()])).map(|r| r.granted));
        all[cap as usize]
    };
    // Landlock fences only what exists: a missing root cannot be a rule
    // (it still counts as a shut path, which keeps its folder compiled
    // around). Seatbelt matches patterns, so macOS keeps every root.
    let linux = req.platform == Platform::Linux;
    // Asked once per root, and only where the answer is used.
    let kinds: Vec<Option<PathKind>> =
        roots.list.iter().map(|(root, recursive)| (linux || !recursive).then(|| host.kind(root))).collect();
    for &cap in &plan.handled {
        for (i, (root, recursive)) in roots.list.iter().enumerate() {
            if linux && kinds[i] == Some(PathKind::Missing) {
                continue;
            }
            if !granted(i, cap) {
                continue;
            }
            if !recursive && kinds[i] == Some(PathKind::Dir) && cap != Capability::Execute {
                plan.notes.push(format!(
                    "{} on the folder {root} alone (not its contents) cannot be fenced by path: the kernel leaves it shut",
                    cap.as_str()
                ));
                continue;
            }
            let except = shut_inside(&inside[i], &roots.list, |j| !granted(j, cap));
            push(&mut plan.grants, &roots.aliases, root.clone(), cap, except);
        }
    }
}

/// The roots strictly inside a root (`inside`) that a capability must not reach.
fn shut_inside(inside: &[usize], roots: &[(String, bool)], mut shut_at: impl FnMut(usize) -> bool) -> Vec<String> {
    let mut shut: Vec<String> = Vec::new();
    for &j in inside {
        if shut_at(j) {
            shut.push(roots[j].0.clone());
        }
    }
    shut.sort();
    // Keep only the outermost: a shut folder already shuts what it holds.
    let mut outer: Vec<String> = Vec::new();
    for d in shut {
        if !outer.iter().any(|o| paths::within(&d, o)) {
            outer.push(d);
        }
    }
    outer
}

fn handled(enforce: Enforce) -> Vec<Capability> {
    use Capability::*;
    match enforce {
        Enforce::Full | Enforce::Guarded => Capability::ALL.to_vec(),
        Enforce::Process => vec![Write, Create, Delete, Execute],
        Enforce::Writes => vec![Write, Create, Delete],
        Enforce::Off => Vec::new(),
    }
}
