//! The precedence: which tier speaks for one (path, capability).
//!
//! [`Policy::resolve`] is the one function a reader needs: protected >
//! the managed policy's denials > explicit rules and one-shot grants >
//! baseline > default, the most specific path winning inside a tier, and
//! the managed policy's asks over whatever of that would grant. Paths compare as canonical absolute
//! paths; both the written and the real spelling are tried.

use crate::policy::{Mode, Platform, Tier};
use crate::policy::baseline::{self, Root};
use crate::policy::capability::{Access, Capability};
use crate::host::Host;
use crate::paths;
use crate::policy::managed::{self, Managed};
use crate::policy::rules::Rule;
use std::collections::HashMap;

/// A root in both spellings (as written, and with symlinked ancestors resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spellings(pub Vec<String>);

impl Spellings {
    pub fn of(path: &str, host: &dyn Host) -> Spellings {
        let written = paths::normalize(path);
        let real = host.canonical(&written);
        if real == written {
            Spellings(vec![written])
        } else {
            Spellings(vec![written, real])
        }
    }
    /// `of` for a root of the policy (see `Host::canonical_root`).
    pub fn of_root(path: &str, host: &dyn Host) -> Spellings {
        let written = paths::normalize(path);
        let real = host.canonical_root(&written);
        if real == written {
            Spellings(vec![written])
        } else {
            Spellings(vec![written, real])
        }
    }
    pub fn written(&self) -> &str {
        &self.0[0]
    }
    pub fn real(&self) -> &str {
        self.0.last().unwrap()
    }
}

/// One entry of a tier, prepared for matching.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub roots: Spellings,
    /// Segments of the real root: a longer root is a more specific one.
    pub depth: usize,
    pub recursive: bool,
    pub access: Access,
    pub tier: Tier,
    pub rule_id: Option<String>,
}

impl Prepared {
    /// How specific this entry is for `path` (segments of the matching root),
    /// or `None` when it does not cover it.
    ///
    /// Real path against real path only: a grant reaches where the kernel
    /// lands. A symlink inside a granted folder pointing out of it
    /// (`ws/link -> ~/`) must not carry the folder's grant to its target; a
    /// link at or above the root resolves on both sides alike.
    fn covers(&self, path: &Spellings) -> Option<usize> {
        let (root, p) = (self.roots.real(), path.real());
        let hit = if self.recursive { paths::within(p, root) } else { p == root };
        hit.then_some(self.depth)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub granted: bool,
    /// Not grantable by a card click.
    pub refused: bool,
    pub tier: Tier,
    pub rule_id: Option<String>,
    pub why: Why,
}

/// Why a tier spoke, for the sentence a user reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Reserved(String),
    PermissionStore(String),
    /// A managed `deny` entry (its root as written, the entry's id naming
    /// the file): refused for everyone.
    ManagedDeny(String, String),
    /// A managed `ask` entry: a card every time.
    ManagedAsk(String, String),
    Rule(String),
    Grant,
    Baseline(&'static str),
    Credential(String),
    /// The harness home: the plugin, its profile and its store live there.
    HarnessHome(String),
    /// A file whose contents decide what runs later (hooks, git config,
    /// shell start-up files): only a rule or grant naming it opens it.
    Persistence(String),
    ReadOnly,
    FullAccess,
    NotGranted,
}

/// Why the workspace is not taken as one (`/`, or above home), as written
/// or as it really is ([`baseline::workspace_refusal`]).
pub fn workspace_refused(workspace: &str, home: &str, host: &dyn Host) -> Option<String> {
    let ws = paths::normalize(workspace);
    baseline::workspace_refusal(&ws, home)
        .or_else(|| baseline::workspace_refusal(&host.canonical_root(&ws), &host.canonical_root(&paths::normalize(home))))
}

/// The request's rule set, prepared once per decision.
pub struct Policy {
    pub platform: Platform,
    pub mode: Mode,
    pub home: String,
    pub workspace: Spellings,
    pub reserved: Vec<Spellings>,
    pub reserved_exceptions: Vec<String>,
    pub protected_files: Vec<Spellings>,
    pub explicit: Vec<Prepared>,
    /// `explicit` by the real path of each root: finding the entries over a
    /// path walks its ancestors (a dozen lookups) instead of every rule, so
    /// a store of 10,000 rules does not cost 10,000 comparisons per effect
    /// (nor 10,000² to compile a fence).
    explicit_at: HashMap<String, Vec<usize>>,
    pub baseline: Vec<(Prepared, &'static str)>,
    /// Compiling the fence: a repository's hooks and config are the
    /// runner's read-only mounts, not paths to compile around.
    for_fence: bool,
    pub credentials: Vec<Spellings>,
    /// The harness home, when there is one (see [`Policy::harness`]).
    pub harness_home: Option<Spellings>,
    /// The shell's start-up files and git's global configuration under home.
    pub startup: Vec<Spellings>,
    /// The managed policy's `deny` and `ask` entries (capabilities named
    /// `true` are the ones denied or asked for).
    pub managed_deny: Vec<Prepared>,
    pub managed_ask: Vec<Prepared>,
}

pub struct PolicyInput<'a> {
    pub platform: Platform,
    pub mode: Mode,
    pub home: &'a str,
    pub workspace: &'a str,
    pub harness_home: &'a str,
    pub rules: &'a [Rule],
    pub grants: &'a [Rule],
    pub protected_files: &'a [String],
    /// Compiling the fence rather than deciding: a repository's hooks and
    /// config are then left to the runner's read-only bind mounts. Shut by
    /// path they would be compiled around, which takes from `.git` itself
    /// the create and delete git's lock files need.
    pub for_fence: bool,
    pub managed: Option<&'a Managed>,
}

impl Policy {
    pub fn new(input: &PolicyInput, host: &dyn Host) -> Policy {
        let home = paths::normalize(input.home);
        let abs = |p: &str| paths::absolute("/", p, &home);
        let linux = input.platform == Platform::Linux;
        let prepare = |r: &Rule, tier: Tier| {
            let mut access = r.access;
            // Landlock lets a program start only where it may also be read
            // (the kernel reads it to map it): on Linux execute brings read.
            if linux && access.grants(Capability::Execute) && access.read.is_none() {
                access.read = Some(true);
            }
            let roots = Spellings::of_root(&abs(&r.path), host);
            Prepared {
                depth: paths::depth(roots.real()),
                roots,
                recursive: r.recursive,
                access,
                tier,
                rule_id: Some(r.id.clone()).filter(|id| !id.is_empty()),
            }
        };
        let mut explicit: Vec<Prepared> = input.rules.iter().map(|r| prepare(r, Tier::Rule)).collect();
        explicit.extend(input.grants.iter().map(|r| prepare(r, Tier::Grant)));
        let mut explicit_at: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, e) in explicit.iter().enumerate() {
            explicit_at.entry(e.roots.real().to_string()).or_default().push(i);
        }

        let floor = |rules: fn(&Managed) -> &Vec<Rule>, denial: bool| -> Vec<Prepared> {
            input.managed.map(rules).into_iter().flatten().map(|r| {
                let mut p = prepare(r, Tier::Managed);
                p.access = managed::effective(r, input.platform, denial);
                p
            }).collect()
        };
        let managed_deny = floor(|m| &m.deny, true);
        let managed_ask = floor(|m| &m.ask, false);

        let read_only = input.mode == Mode::ReadOnly;
        let no_workspace = workspace_refused(input.workspace, &home, host).is_some();
        let mut base = Vec::new();
        for entry in baseline::baseline(input.platform) {
            if no_workspace && matches!(entry.root, Root::Workspace | Root::InWorkspace(_)) {
                continue;
            }
            let (root, label) = match entry.root {
                Root::Abs(p) => (p.to_string(), if baseline::temp_dirs(input.platform).contains(&p) { "temp directory" } else { "system path" }),
                Root::Home(p) => (format!("{home}/{p}"), "user toolchain or config"),
                Root::Workspace => (paths::normalize(input.workspace), "workspace"),
                Root::InWorkspace(rel) => (paths::normalize(&format!("{}/{rel}", input.workspace)), "workspace tool state"),
                Root::HarnessHome => (paths::normalize(input.harness_home), "harness home"),
            };
            let mut access = Access::default();
            if entry.speaks_for_all {
                for c in Capability::ALL {
                    access.set(c, false);
                }
            }
            for &c in entry.grants {
                // A read-only session keeps only read and execute anywhere.
                access.set(c, !(read_only && c.mutates()));
            }
            let roots = Spellings::of_root(&root, host);
            // Tool state must be the workspace's own folder: a `target` the
            // agent swapped for a symlink to ~ would carry delete there.
            if let Root::InWorkspace(rel) = entry.root {
                let ws_real = host.canonical_root(&paths::normalize(input.workspace));
                if roots.real() != paths::normalize(&format!("{ws_real}/{rel}")) {
                    continue;
                }
            }
            base.push((
                Prepared { depth: paths::depth(roots.real()), roots, recursive: entry.recursive, access, tier: Tier::Baseline, rule_id: None },
                label,
            ));
        }
        Policy {
            platform: input.platform,
            mode: input.mode,
            workspace: Spellings::of_root(input.workspace, host),
            reserved: baseline::reserved(input.platform).iter().map(|p| Spellings::of_root(p, host)).collect(),
            reserved_exceptions: baseline::reserved_exceptions(input.platform).iter().map(|s| s.to_string()).collect(),
            protected_files: input.protected_files.iter().map(|p| Spellings::of_root(&abs(p), host)).collect(),
            explicit,
            explicit_at,
            baseline: base,
            for_fence: input.for_fence,
            credentials: baseline::credential_paths(&home, &if input.harness_home.is_empty() { String::new() } else { abs(input.harness_home) }).iter().map(|p| Spellings::of_root(p, host)).collect(),
            startup: baseline::STARTUP_FILES.iter().map(|p| Spellings::of_root(&format!("{home}/{p}"), host)).collect(),
            harness_home: (!input.harness_home.is_empty()).then(|| Spellings::of_root(&abs(input.harness_home), host)),
            home,
            managed_deny,
            managed_ask,
        }
    }

    /// The precedence, top to bottom; the first tier that speaks decides.
    pub fn resolve(&self, path: &Spellings, cap: Capability) -> Resolution {
        self.resolve_over(path, cap, &self.over(path))
    }

    /// `resolve` for what a named program does to entries inside the folder
    /// `dir` (sed -i replacing a file beside its temp copy): a delete there
    /// is not a delete of `dir` itself, so a folder holding the permission
    /// store is not refused for it (the store itself still is).
    pub fn resolve_inside(&self, dir: &Spellings, cap: Capability) -> Resolution {
        if cap == Capability::Delete && self.protected(dir, cap).is_some() && self.protected(dir, Capability::Write).is_none() {
            return self.resolve_over_with(dir, cap, &self.over(dir), false);
        }
        self.resolve(dir, cap)
    }

    /// All five capabilities of one path, the entries over it found once
    /// (the fence compile asks this for every root).
    pub fn resolve_all(&self, path: &Spellings) -> [Resolution; 5] {
        let over = self.over(path);
        Capability::ALL.map(|cap| self.resolve_over(path, cap, &over))
    }

    /// What of the policy lies over `path`, whatever the capability.
    fn over<'a>(&'a self, path: &Spellings) -> Over<'a> {
        // The rules and grants rooted at the path or one of its ancestors,
        // in their own order (a tie between them keeps the first).
        let mut at = Vec::new();
        let mut dir = path.real();
        loop {
            if let Some(found) = self.explicit_at.get(dir) {
                at.extend_from_slice(found);
            }
            if dir == "/" || dir.is_empty() {
                break;
            }
            dir = match dir.rfind('/') {
                Some(0) => "/",
                Some(i) => &dir[..i],
                None => "",
            };
        }
        at.sort_unstable();
        let mut explicit = Vec::new();
        for i in at {
            let e = &self.explicit[i];
            if let Some(d) = e.covers(path) {
                explicit.push((d, e));
            }
        }
        // A plain loop: ~80 baseline roots, and few of them cover any one path.
        let mut baseline = Vec::new();
        for (e, _) in &self.baseline {
            if let Some(d) = e.covers(path) {
                baseline.push((d, e));
            }
        }
        let reaching = |list: &'a [Prepared]| list.iter().filter(|e| reaches(e, path)).collect();
        Over {
            store: self.credential(path),
            harness: self.harness(path),
            explicit,
            baseline,
            managed_deny: reaching(&self.managed_deny),
            managed_ask: reaching(&self.managed_ask),
        }
    }

    fn resolve_over(&self, path: &Spellings, cap: Capability, over: &Over) -> Resolution {
        self.resolve_over_with(path, cap, over, true)
    }

    fn resolve_over_with(&self, path: &Spellings, cap: Capability, over: &Over, check_protected: bool) -> Resolution {
        // 1. Protected: reserved platform paths and the permission store.
        if cap.mutates() && check_protected {
            if let Some(why) = self.protected(path, cap) {
                return Resolution { granted: false, refused: true, tier: Tier::Protected, rule_id: None, why };
            }
        }
        // 2. The managed policy's denials: for everyone, in every mode.
        if let Some(denied) = self.managed_denial(path, cap, over) {
            return denied;
        }
        // 3-5. The user's tiers: explicit rules and grants, baseline, default.
        let local = self.resolve_local(path, cap, over);
        // 6. The managed policy's asks: what those tiers grant is a card.
        self.managed_ask(cap, over, local)
    }

    /// The tiers the user's rules, this call's grants and the platform's
    /// baseline make, below the managed policy's denials.
    fn resolve_local(&self, path: &Spellings, cap: Capability, over: &Over) -> Resolution {
        if self.mode == Mode::DangerFullAccess {
            return Resolution { granted: true, refused: false, tier: Tier::Baseline, rule_id: None, why: Why::FullAccess };
        }
        // A read-only session: no rule, grant or baseline adds a write back.
        if self.mode == Mode::ReadOnly && cap.mutates() {
            return Resolution { granted: false, refused: true, tier: Tier::Default, rule_id: None, why: Why::ReadOnly };
        }
        // A credential store opens only to a rule written for it (or inside
        // it): a rule on an ancestor, or one whose path was swapped for a
        // symlink into the store, does not reach it.
        let store = &over.store;
        // A persistence surface opens only to a rule or grant written for it
        // (or inside it), like a credential store, but asks rather than
        // refuses: editing ~/.bashrc is a thing users do.
        if cap.mutates() {
            if let Some(surface) = self.persistence(path, cap) {
                let named = most_specific(&over.explicit, cap)
                    .filter(|p| p.roots.0.iter().any(|r| paths::within(r, &surface)));
                let Some(p) = named else {
                    return Resolution { granted: false, refused: false, tier: Tier::Default, rule_id: None, why: Why::Persistence(surface) };
                };
                let granted = p.access.grants(cap);
                let why = match (granted, p.tier) {
                    (false, _) => Why::NotGranted,
                    (true, Tier::Grant) => Why::Grant,
                    (true, _) => Why::Rule(p.roots.written().to_string()),
                };
                return Resolution { granted, refused: false, tier: p.tier, rule_id: p.rule_id.clone(), why };
            }
        }
        // The harness home holds the plugin, its profile and its store: no
        // command changes it, the card never offers to, and only a rule the
        // user wrote for it (or inside it) opens it, like a credential store.
        if let (true, Some(harness)) = (cap.mutates(), &over.harness) {
            let written_for_it = most_specific(&over.explicit, cap).filter(|p| paths::within(p.roots.written(), harness));
            match written_for_it {
                Some(p) => {
                    let granted = p.access.grants(cap);
                    let why = match (granted, p.tier) {
                        (false, _) => Why::NotGranted,
                        (true, Tier::Grant) => Why::Grant,
                        (true, _) => Why::Rule(p.roots.written().to_string()),
                    };
                    return Resolution { granted, refused: false, tier: p.tier, rule_id: p.rule_id.clone(), why };
                }
                None => return Resolution { granted: false, refused: true, tier: Tier::Default, rule_id: None, why: Why::HarnessHome(harness.clone()) },
            }
        }
        // Explicit: stored rules and this call's one-shot grants.
        if let Some(p) = most_specific(&over.explicit, cap) {
            if let Some(store) = store {
                let written_for_it = paths::within(p.roots.written(), store);
                if !written_for_it {
                    return Resolution { granted: false, refused: true, tier: Tier::Default, rule_id: None, why: Why::Credential(store.clone()) };
                }
            }
            let granted = p.access.grants(cap);
            let why = match p.tier {
                Tier::Grant => Why::Grant,
                _ => Why::Rule(p.roots.written().to_string()),
            };
            let why = if granted { why } else { Why::NotGranted };
            return Resolution { granted, refused: false, tier: p.tier, rule_id: p.rule_id.clone(), why };
        }
        // Credential stores stay shut even where a baseline root (a workspace
        // at $HOME, ~/.cargo) would contain them.
        if let Some(store) = store {
            return Resolution { granted: false, refused: true, tier: Tier::Default, rule_id: None, why: Why::Credential(store.clone()) };
        }
        // Baseline.
        if let Some(p) = most_specific(&over.baseline, cap) {
            let label = self.baseline.iter().find(|(q, _)| std::ptr::eq(q, p)).map(|(_, l)| *l).unwrap_or("baseline");
            let granted = p.access.grants(cap);
            let why = if granted { Why::Baseline(label) } else { Why::NotGranted };
            return Resolution { granted, refused: false, tier: Tier::Baseline, rule_id: None, why };
        }
        // Default: not granted.
        Resolution { granted: false, refused: false, tier: Tier::Default, rule_id: None, why: Why::NotGranted }
    }

    /// A managed `deny` over the path (any spelling), or, for a delete, one
    /// inside it: removing a folder removes what it holds.
    fn managed_denial(&self, path: &Spellings, cap: Capability, over: &Over) -> Option<Resolution> {
        let holds = || {
            self.managed_deny.iter().find(|e| e.roots.0.iter().any(|root| path.0.iter().any(|p| paths::within(root, p))))
        };
        let entry = over.managed_deny.iter().copied().find(|e| e.access.grants(cap)).or_else(|| {
            (cap == Capability::Delete).then(holds).flatten().filter(|e| e.access.grants(cap))
        })?;
        let id = entry.rule_id.clone().unwrap_or_default();
        Some(Resolution {
            granted: false,
            refused: true,
            tier: Tier::Managed,
            rule_id: entry.rule_id.clone(),
            why: Why::ManagedDeny(entry.roots.written().to_string(), id),
        })
    }

    /// A managed `ask` turns a grant into a card; a refusal stays one. The
    /// fence opens an asked path only to this call's one-shot grant written
    /// for it (or inside it), which a card's Allow once is: the decision has
    /// asked before any such grant exists.
    fn managed_ask(&self, cap: Capability, over: &Over, local: Resolution) -> Resolution {
        let Some(entry) = over.managed_ask.iter().copied().find(|e| e.access.grants(cap)) else { return local };
        if local.refused {
            return local;
        }
        let answered = self.for_fence
            && local.granted
            && local.tier == Tier::Grant
            && most_specific(&over.explicit, cap).is_some_and(|p| entry.roots.0.iter().any(|root| paths::within(p.roots.real(), root)));
        if answered {
            return local;
        }
        let id = entry.rule_id.clone().unwrap_or_default();
        Resolution {
            granted: false,
            refused: false,
            tier: Tier::Managed,
            rule_id: entry.rule_id.clone(),
            why: Why::ManagedAsk(entry.roots.written().to_string(), id),
        }
    }

    fn protected(&self, path: &Spellings, cap: Capability) -> Option<Why> {
        for f in &self.protected_files {
            for p in &path.0 {
                for fp in &f.0 {
                    // The store itself, or a directory holding it being removed.
                    if paths::within(p, fp) || (cap == Capability::Delete && paths::within(fp, p)) {
                        return Some(Why::PermissionStore(f.written().to_string()));
                    }
                    // Its directory may not be replaced (renamed away or over).
                    if cap == Capability::Create && p == paths::parent(fp) {
                        return Some(Why::PermissionStore(f.written().to_string()));
                    }
                }
            }
        }
        for r in &self.reserved {
            for p in &path.0 {
                if r.0.iter().any(|root| paths::within(p, root))
                    && !self.reserved_exceptions.iter().any(|x| paths::within(p, x))
                {
                    return Some(Why::Reserved(r.written().to_string()));
                }
            }
        }
        None
    }

    /// The persistence surface `path` is (or is inside), as spelled.
    pub fn persistence(&self, path: &Spellings, cap: Capability) -> Option<String> {
        for p in path.0.iter().filter(|_| !self.for_fence) {
            if let Some(s) = baseline::repository_surface(p) {
                return Some(s);
            }
            // Content written into a `.git` is a repository pointer: only a
            // gitlink file takes any, and its `gitdir:` line moves the
            // repository (its config, its hooks) wherever it says. (The
            // effects add this write to any `.git` a command makes but git.)
            if paths::file_name(p) == ".git" && cap == Capability::Write {
                return Some(p.clone());
            }
        }
        self.startup
            .iter()
            .find(|c| path.0.iter().any(|p| c.0.iter().any(|root| paths::within(p, root))))
            .map(|c| c.written().to_string())
    }

    fn credential(&self, path: &Spellings) -> Option<String> {
        self.credentials
            .iter()
            .find(|c| path.0.iter().any(|p| c.0.iter().any(|root| paths::within(p, root))))
            .map(|c| c.written().to_string())
    }

    /// The harness home `path` lies in, as spelled; not a path inside a
    /// workspace that lies inside the harness home.
    fn harness(&self, path: &Spellings) -> Option<String> {
        let harness = self.harness_home.as_ref()?;
        let inside = |roots: &Spellings| path.0.iter().any(|p| roots.0.iter().any(|root| paths::within(p, root)));
        let ws_inside = self.workspace.0.iter().any(|w| harness.0.iter().any(|h| paths::within(w, h) && w != h));
        (inside(harness) && !(ws_inside && inside(&self.workspace))).then(|| harness.written().to_string())
    }

    /// The capabilities the workspace baseline grants in this mode.
    pub fn is_in_workspace(&self, path: &Spellings) -> bool {
        path.0.iter().any(|p| self.workspace.0.iter().any(|w| paths::within(p, w)))
    }
}

/// The entries of each tier that cover one path, with their depth.
struct Over<'a> {
    store: Option<String>,
    harness: Option<String>,
    explicit: Vec<(usize, &'a Prepared)>,
    baseline: Vec<(usize, &'a Prepared)>,
    managed_deny: Vec<&'a Prepared>,
    managed_ask: Vec<&'a Prepared>,
}

/// Whether a managed entry reaches `path` in any spelling of either: a
/// denial holds where the path is written through a link as well as where
/// it really is.
fn reaches(e: &Prepared, path: &Spellings) -> bool {
    e.roots.0.iter().any(|root| path.0.iter().any(|p| if e.recursive { paths::within(p, root) } else { p == root }))
}

/// Among entries covering a path that speak for `cap`, the most specific;
/// on a tie a denial wins (fail closed).
fn most_specific<'a>(covering: &[(usize, &'a Prepared)], cap: Capability) -> Option<&'a Prepared> {
    let mut best: Option<(usize, &Prepared)> = None;
    for &(depth, e) in covering {
        let Some(speaks) = e.access.get(cap) else { continue };
        best = match best {
            None => Some((depth, e)),
            Some((d, _)) if depth > d => Some((depth, e)),
            Some((d, b)) if depth == d && !speaks && b.access.grants(cap) => Some((depth, e)),
            keep => keep,
        };
    }
    best.map(|(_, e)| e)
}
