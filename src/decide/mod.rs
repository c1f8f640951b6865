//! A request → one decision: parse, derive effects, resolve each through the
//! precedence, then allow / prompt / refuse with the narrowest proposals.
//! What reads a decision afterwards lives here too: the terminal rendering
//! ([`explain`]) and the auto-reviewer's request and answer ([`review`]).

pub mod arrivals;
pub mod explain;
mod managed;
pub mod review;
mod sockets;

use std::cell::RefCell;
use std::rc::Rc;

use crate::api::{DecideRequest, Decision, EffectVerdict, Mode, Outcome, PathCapability, Persistence, Proposal, Tier, Unknown};
use crate::policy::capability::{Access, Capability};
use crate::effects::{self, Context, Unseen};
use crate::host::{Host, Memo, PathKind};
use crate::shell::parse;
use crate::paths;
use crate::policy::resolve::{Policy, PolicyInput, Resolution, Spellings, Why};

/// What a prepared policy was built from, compared field by field (cheaper
/// than serialising the inputs into a key on every call).
struct PolicyKey {
    platform: crate::api::Platform,
    mode: Mode,
    home: String,
    workspace: String,
    harness_home: String,
    rules: Vec<crate::policy::rules::Rule>,
    grants: Vec<crate::policy::rules::Rule>,
    protected_files: Vec<String>,
    managed: Option<crate::api::Managed>,
}

impl PolicyKey {
    fn matches(&self, req: &DecideRequest, home: &str) -> bool {
        self.platform == req.platform
            && self.mode == req.mode
            && self.home == home
            && self.workspace == req.workspace
            && self.harness_home == req.harness_home
            && self.rules == req.rules
            && self.grants == req.grants
            && self.protected_files == req.protected_files
            && self.managed == req.managed
    }
}

/// Prepared policies kept: a call is decided twice (the gate, then the
/// guard with its own one-shot grants), and a git line's grants differ
/// from its gate's, so one slot would prepare every such call twice.
const PREPARED_SLOTS: usize = 2;

thread_local! {
    /// The last prepared policies, newest first, each reused while its
    /// inputs and the host's generation are unchanged (preparing one asks
    /// the host about ~80 roots).
    static PREPARED: RefCell<Vec<(PolicyKey, u64, Rc<Policy>)>> = const { RefCell::new(Vec::new()) };
}

#[inline(never)]
fn prepared_policy(req: &DecideRequest, home: &str, host: &dyn Host) -> Rc<Policy> {
    let input = PolicyInput {
        platform: req.platform,
        mode: req.mode,
        home,
        workspace: &req.workspace,
        harness_home: &req.harness_home,
        rules: &req.rules,
        grants: &req.grants,
        protected_files: &req.protected_files,
        for_fence: false,
        managed: req.managed.as_ref(),
    };
    let Some(generation) = host.generation() else { return Rc::new(Policy::new(&input, host)) };
    let hit = PREPARED.with(|cell| {
        cell.borrow().iter().find(|(k, g, _)| *g == generation && k.matches(req, home)).map(|(_, _, p)| p.clone())
    });
    if let Some(p) = hit {
        return p;
    }
    let p = Rc::new(Policy::new(&input, host));
    let key = PolicyKey {
        platform: req.platform,
        mode: req.mode,
        home: home.to_string(),
        workspace: req.workspace.clone(),
        harness_home: req.harness_home.clone(),
        rules: req.rules.clone(),
        grants: req.grants.clone(),
        protected_files: req.protected_files.clone(),
        managed: req.managed.clone(),
    };
    PREPARED.with(|cell| {
        let mut kept = cell.borrow_mut();
        // Another generation's are stale: the host vouches for one only.
        kept.retain(|(_, g, _)| *g == generation);
        kept.insert(0, (key, generation, p.clone()));
        kept.truncate(PREPARED_SLOTS);
    });
    p
}

/// Drop what was prepared and looked up for reuse: a host that failed a
/// question while it was made must not have its guesses kept.
pub fn forget_reused() {
    PREPARED.with(|cell| cell.borrow_mut().clear());
    PROGRAMS.with(|p| *p.borrow_mut() = Default::default());
}

thread_local! {
    /// Programs found on PATH and their real paths, for one host generation:
    /// nearly every command starts one, and asking the host twice per
    /// command (lookup, then realpath) is most of what a decision costs in
    /// wasm. Paths a command names are still asked afresh.
    static PROGRAMS: RefCell<ProgramCache> = RefCell::new(Default::default());
}

#[derive(Default)]
struct ProgramCache {
    generation: Option<u64>,
    /// Name → what PATH lookup found.
    found: std::collections::BTreeMap<String, Option<String>>,
    /// Everything `found` holds, for a quick "is this a program?".
    paths: std::collections::BTreeSet<String>,
    /// Found path → its real path.
    real: std::collections::BTreeMap<String, String>,
}

/// A host whose PATH answers (and the real paths of what they found) are
/// reused while its generation holds.
struct Programs<'a> {
    inner: &'a dyn Host,
    generation: Option<u64>,
}

impl<'a> Programs<'a> {
    fn over(inner: &'a dyn Host) -> Programs<'a> {
        let generation = inner.generation();
        PROGRAMS.with(|p| {
            let mut p = p.borrow_mut();
            if p.generation != generation || generation.is_none() {
                *p = ProgramCache { generation, ..Default::default() };
            }
        });
        Programs { inner, generation }
    }
}

impl Programs<'_> {
    /// `f` over the cache when it still holds this host's generation: a
    /// decide made from inside a host callback may have reset it for another.
    fn cache<R>(&self, f: impl FnOnce(&mut ProgramCache) -> R) -> Option<R> {
        self.generation?;
        PROGRAMS.with(|p| {
            let mut p = p.borrow_mut();
            (p.generation == self.generation).then(|| f(&mut p))
        })
    }
}

impl Host for Programs<'_> {
    fn canonical(&self, path: &str) -> String {
        if let Some(real) = self.cache(|p| p.real.get(path).cloned()).flatten() {
            return real;
        }
        // A program PATH found is kept for the generation, so its real path
        // is read as the policy's roots are: what the host's generation
        // vouches for (the node host keeps the folders on the way to named
        // paths apart, and may forget them while the generation holds).
        let found = self.cache(|p| p.paths.contains(path)).unwrap_or(false);
        if !found {
            return self.inner.canonical(path);
        }
        let real = self.inner.canonical_root(path);
        self.cache(|p| {
            p.real.insert(path.to_string(), real.clone());
        });
        real
    }
    fn canonical_root(&self, path: &str) -> String {
        self.inner.canonical_root(path)
    }
    fn kind(&self, path: &str) -> PathKind {
        self.inner.kind(path)
    }
    fn which(&self, program: &str) -> Option<String> {
        if let Some(found) = self.cache(|p| p.found.get(program).cloned()).flatten() {
            return found;
        }
        let found = self.inner.which(program);
        self.cache(|p| {
            if let Some(f) = &found {
                p.paths.insert(f.clone());
            }
            p.found.insert(program.to_string(), found.clone());
        });
        found
    }
    fn generation(&self) -> Option<u64> {
        self.generation
    }
}

/// One request → one decision. Its steps stay separate functions in the
/// wasm too (`#[inline(never)]`): merged by LLVM they were one 20 KB function,
/// and the memory V8's optimizing compiler takes for a function grows faster
/// than its size and stays with the host process (docs/performance.md).
pub fn decide(req: &DecideRequest, host: &dyn Host) -> Decision {
    // A managed policy that lets no call run here: nothing else is read.
    if let Some(refused) = managed::refusal(req) {
        return refused;
    }
    let programs = Programs::over(host);
    let host = Memo::new(&programs);
    let host: &dyn Host = &host;
    let home = paths::normalize(&req.home);
    let cwd = paths::absolute(&req.workspace, &req.cwd, &home);
    let items = match parse::parse(&req.command, &cwd, &home, host) {
        Ok(items) => items,
        Err(e) => return refuse_unreadable(e.0),
    };
    let cx = Context {
        fill_needs_write: req.platform == crate::api::Platform::Linux,
        cwd: &cwd,
        home: &home,
        workspace: &req.workspace,
        harness_home: &req.harness_home,
        protected_files: &req.protected_files,
        host,
    };
    let analysis = effects::analyse(&items, &cx, 0);
    let (with_roots, grant) = command_grant(req, &analysis, &cwd, &home, host);
    let req = with_roots.as_ref().unwrap_or(req);
    let policy = prepared_policy(req, &home, host);
    let (mut fence_grants, repository_ask) = repository_grants(req, &analysis, host);
    let mut judged = judge_effects(&analysis, &policy, host);
    fence_grants.extend(shown_launch_files(req, &analysis, &policy, host, &mut judged));
    fence_grants.extend(tool_state_removals(req, &judged, host));
    let trusted = trusted_programs(req, &grant);
    let mut unseen = judge_unseen(req, &analysis, &policy, &cwd, host, &mut judged, &trusted);
    if let Some(why) = repository_ask {
        unseen.unknown.push(Unknown { capability: Some(Capability::Delete), reason: why.clone(), bounded: false });
        unseen.asks.push(why);
    }
    fence_grants.append(&mut unseen.call_grants);
    let through = launch_files_in_grants(req, &analysis, &policy, host, &fence_grants);
    fence_grants.extend(through);
    // What the call is granted, made and kept is decided on real paths:
    // the runner acts on exactly those and follows no link then.
    for g in &mut fence_grants {
        let cap = if !g.recursive && g.access.grants(Capability::Delete) { Capability::Delete } else { Capability::Read };
        g.path = real_target(&g.path, cap, host);
    }
    let refused_by_managed = matches!(&judged.why_refused, Some((_, _, Why::ManagedDeny(..))));
    let mut d = conclude(req, &home, grant, judged, unseen, fence_grants, host);
    for k in &mut d.kept {
        *k = real_target(k, Capability::Delete, host);
    }
    if d.decision != Outcome::Refuse {
        d.folders = analysis.folders.iter().map(|f| host.canonical(f)).collect();
        // A folder the line makes and writes into (`git worktree add ../x`)
        // is granted as a folder: a rule on it alone would reach nothing
        // the line puts inside.
        for p in d.proposals.iter_mut().filter(|p| analysis.folders.contains(&p.path) && p.access.grants(Capability::Write)) {
            p.recursive = true;
        }
        arrivals::baseline_folders(req, &d.folders, &policy, host, &mut d.fence_grants);
        d.widened = arrivals::widened(req, &d, host);
    }
    managed::mark(req, &policy, refused_by_managed, host, &mut d);
    d
}

/// A matched command grant, or why one matched but could not be carried.
struct GrantOutcome {
    matched: Option<crate::api::GrantMatch>,
    note: Option<String>,
}

/// A command grant adds its roots to this call's one-shot grants. Not for a
/// line that sets configuration naming a command: that asks every time,
/// whatever program it runs. With a match, the request with those grants.
#[inline(never)]
fn command_grant(req: &DecideRequest, analysis: &effects::Analysis, cwd: &str, home: &str, host: &dyn Host) -> (Option<DecideRequest>, GrantOutcome) {
    let mut out = GrantOutcome { matched: None, note: None };
    if req.commands.is_empty() || analysis.configures_code {
        return (None, out);
    }
    let input = crate::policy::command_grant::MatchInput { command: &req.command, cwd, workspace: &req.workspace, home, platform: req.platform };
    match crate::policy::command_grant::find(&req.commands, &input, host) {
        Ok(m) => {
            let mut with_roots = req.clone();
            with_roots.grants.extend(m.rules.iter().cloned());
            out.matched = Some(m);
            return (Some(with_roots), out);
        }
        Err(why) if why.starts_with(crate::policy::command_grant::CANNOT_CARRY) => {
            out.note = Some(why.trim_start_matches(crate::policy::command_grant::CANNOT_CARRY).trim_start_matches(": ").to_string())
        }
        Err(_) => {}
    }
    (None, out)
}

/// The visible effects, each through the precedence.
struct Judged {
    verdicts: Vec<EffectVerdict>,
    /// The first refusal: (path, capability, why).
    why_refused: Option<(String, Capability, Why)>,
    persistence_note: Option<String>,
    last_grant: Option<Why>,
    /// Effects through a process's link in /proc: judged as unseen.
    linked: Vec<Unseen>,
}

#[inline(never)]
fn judge_effects(analysis: &effects::Analysis, policy: &Policy, host: &dyn Host) -> Judged {
    let mut j = Judged { verdicts: Vec::new(), why_refused: None, persistence_note: None, last_grant: None, linked: Vec::new() };
    for e in &analysis.effects {
        // A removal reaches the entry itself, a link never followed.
        let spellings = if e.capability == Capability::Delete { Spellings::of_entry(&e.path, host) } else { Spellings::of(&e.path, host) };
        if spellings.0.iter().any(|s| paths::through_process_link(s)) {
            j.linked.push(Unseen::ProcessLink { capability: e.capability, path: e.path.clone() });
            continue;
        }
        let r = policy.resolve(&spellings, e.capability);
        if r.refused && j.why_refused.is_none() {
            j.why_refused = Some((e.path.clone(), e.capability, r.why.clone()));
        }
        if let (Why::Persistence(surface), None) = (&r.why, &j.persistence_note) {
            j.persistence_note = Some(format!(
                "{surface} decides what runs later, outside any fence: only a rule naming it opens it"
            ));
        }
        if r.granted {
            j.last_grant = Some(r.why.clone());
        }
        j.verdicts.push(verdict(&e.path, e.capability, &r));
    }
    j
}

/// What the text could not show, each bounded (by the fence, the working
/// directory's grants) or not.
#[derive(Default)]
struct UnseenJudged {
    unknown: Vec<Unknown>,
    /// (folder, capability) to ask for.
    unbounded: Vec<(String, Capability)>,
    /// (folder, capability, program): asked for as a grant to that program.
    program_needs: Vec<(String, Capability, String)>,
    /// A prompt with nothing a rule could name (a /proc link, a program not on PATH).
    link_prompt: Option<String>,
    /// Handed outside the process tree: asked every time, or (the program
    /// named) until the user stores a command grant trusting that program.
    escape: Option<(String, Option<String>)>,
    /// A self-guarded program's need, granted for this call alone.
    call_grants: Vec<crate::policy::rules::Rule>,
    /// What the line would lose for good, for the card.
    discards: Vec<String>,
    /// Why the first self-guarded need granted for the call is safe.
    call_granted: Option<String>,
    /// The daemons' sockets the line reaches.
    sockets: Vec<crate::api::SocketNeed>,
    /// Files the runner keeps a copy of before the call replaces them.
    kept: Vec<String>,
    /// What the card asks every time although no path is missing (a
    /// removal the line does not name, git beside hidden code): Allow once
    /// carries the call's grants for it.
    asks: Vec<String>,
}

#[inline(never)]
fn judge_unseen(req: &DecideRequest, analysis: &effects::Analysis, policy: &Policy, cwd: &str, host: &dyn Host, judged: &mut Judged, trusted: &[String]) -> UnseenJudged {
    let fence_has = |c: Capability| req.mode == Mode::DangerFullAccess || req.fence.contains(&c);
    let mut out = UnseenJudged { discards: analysis.discards.clone(), ..Default::default() };
    let hides_nothing = hides_nothing(req, analysis);
    let why_refused = &mut judged.why_refused;
    for u in analysis.unseen.iter().chain(&judged.linked) {
        match u {
            Unseen::ProcessLink { capability, path } => {
                // Not bounded by a grant on the cwd: the link may lead anywhere.
                let bounded = fence_has(*capability);
                let reason = format!("`{path}` goes through a process's link in /proc, which leads wherever that process points when it runs");
                if !bounded && out.link_prompt.is_none() {
                    out.link_prompt = Some(format!("{} {path}: only the kernel fence can bound where it leads, and it does not cover {} now", capability.as_str(), capability.as_str()));
                }
                let u = Unknown { capability: Some(*capability), reason, bounded };
                if !out.unknown.contains(&u) {
                    out.unknown.push(u);
                }
            }
            Unseen::Computed { capability, scope, reason } => {
                let (bounded, open) = bound_in(policy, scope, cwd, *capability, fence_has(*capability), host, why_refused, false);
                out.unbounded.extend(open.into_iter().map(|dir| (dir, *capability)));
                out.unknown.push(Unknown { capability: Some(*capability), reason: reason.clone(), bounded });
            }
            Unseen::Opaque { reason } => {
                let fenced = Capability::ALL.iter().all(|&c| fence_has(c));
                let cwd_grants_all = Capability::ALL.iter().all(|&c| policy.resolve(&Spellings::of(cwd, host), c).granted);
                // Hooks and git config the kernel leaves writable would let
                // hidden code plant what git runs later, outside the fence.
                let hooks_open = req.mode != Mode::DangerFullAccess
                    && req.persistence != Persistence::Shut
                    && repository_of(cwd, host).is_some();
                let bounded = (fenced || cwd_grants_all) && !hooks_open;
                let reason = if hooks_open && (fenced || cwd_grants_all) {
                    format!("{reason}; this repository's hooks and config are not shut by the kernel here, so hidden code could plant what git runs later")
                } else {
                    reason.clone()
                };
                if !bounded {
                    for c in Capability::ALL {
                        out.unbounded.push((cwd.to_string(), c));
                    }
                }
                out.unknown.push(Unknown { capability: None, reason, bounded });
            }
            Unseen::ProgramState { program, capability, scope, reason } => {
                let (bounded, open) = bound_in(policy, scope, cwd, *capability, fence_has(*capability), host, why_refused, true);
                for dir in open {
                    out.program_needs.push((dir.clone(), *capability, program.clone()));
                    out.unbounded.push((dir, *capability));
                }
                out.unknown.push(Unknown { capability: Some(*capability), reason: reason.clone(), bounded });
            }
            Unseen::SelfGuarded { program, capabilities, scope, reason } | Unseen::Regenerable { program, capabilities, scope, reason } => {
                let regenerable = matches!(u, Unseen::Regenerable { .. });
                let grantable = (hides_nothing || regenerable)
                    && req.mode == Mode::WorkspaceWrite
                    && !scope.is_empty()
                    && crate::policy::resolve::workspace_refused(&req.workspace, &req.home, host).is_none()
                    && scope.iter().all(|d| inside_workspace(d, &req.workspace, host));
                for &cap in capabilities {
                    let (bounded, open) = bound_in(policy, scope, cwd, cap, fence_has(cap), host, why_refused, true);
                    let granted = !bounded && grantable && why_refused.is_none();
                    if granted {
                        out.call_granted.get_or_insert_with(|| reason.clone());
                        for dir in &open {
                            call_grant(&mut out.call_grants, dir, cap);
                        }
                    } else {
                        for dir in open {
                            out.program_needs.push((dir.clone(), cap, program.clone()));
                            out.unbounded.push((dir, cap));
                        }
                    }
                    out.unknown.push(Unknown { capability: Some(cap), reason: reason.clone(), bounded: bounded || granted });
                }
            }
            Unseen::Named { program, path } => named(req, policy, program, path, host, (why_refused, &mut judged.persistence_note), &mut out),
            Unseen::Escapes { program, reason } => {
                // Beyond any fence of this call: only the user can say yes,
                // each time, or once for good by trusting the program.
                let bounded = req.mode == Mode::DangerFullAccess || program.as_ref().is_some_and(|p| trusted.contains(p));
                if !bounded && out.escape.is_none() {
                    out.escape = Some((reason.clone(), program.clone()));
                }
                out.unknown.push(Unknown { capability: None, reason: reason.clone(), bounded });
            }
            Unseen::Socket { daemon, program, reads, asks, reason } => {
                let need = sockets::Need { daemon: *daemon, program, reads, asks: *asks, reason };
                socket(req, analysis, host, need, &mut out);
            }
            Unseen::OwnHome { program, capabilities, dir, reason } => {
                own_home(req, policy, (cwd, host), hides_nothing, (program, capabilities, dir, reason), why_refused, &mut out);
            }
            Unseen::Kept { program, files, reason } => kept(req, host, hides_nothing, (program, files, reason), &mut out),
            Unseen::CodeCache { program, dir, reason } => code_cache(req, analysis, (program, dir, reason), why_refused, &mut out),
            Unseen::AsksEachTime { capabilities, scope, reason, .. } => {
                asks_each_time(req, policy, (cwd, host), (capabilities, scope, reason), why_refused, &mut out);
            }
            Unseen::NotOnPath { program } => {
                // No rule can name a binary PATH cannot find: the card asks
                // and proposes nothing (the working directory is no binary).
                let bounded = fence_has(Capability::Execute);
                if !bounded && out.link_prompt.is_none() {
                    out.link_prompt = Some(format!("execute {program}: it is not on PATH now, so no rule can name what it starts, and the kernel fence does not cover execute"));
                }
                out.unknown.push(Unknown {
                    capability: Some(Capability::Execute),
                    reason: format!("`{program}` is not on PATH now; the kernel decides what it starts"),
                    bounded,
                });
            }
        }
    }
    out
}

/// A daemon's socket the line reaches (sockets.rs): granted for the call,
/// or asked every time with the grant carried by Allow once.
fn socket(req: &DecideRequest, analysis: &effects::Analysis, host: &dyn Host, need: sockets::Need, out: &mut UnseenJudged) {
    let reason = need.reason.to_string();
    let judged = sockets::judge(req, analysis, host, need, &mut out.call_grants);
    if judged.granted && !judged.asks {
        out.call_granted.get_or_insert(reason);
    }
    if judged.asks && out.escape.is_none() {
        out.escape = Some((judged.sentence.clone(), None));
    }
    out.unknown.push(Unknown { capability: None, reason: judged.sentence.clone(), bounded: judged.granted || req.mode == Mode::DangerFullAccess });
    out.sockets.push(judged.public);
}

/// A tool's own state under home (rustup's, go's module cache): granted
/// for the call when the line hides nothing, else asked as its need.
fn own_home(
    req: &DecideRequest,
    policy: &Policy,
    (cwd, host): (&str, &dyn Host),
    hides_nothing: bool,
    (program, capabilities, dir, reason): (&str, &[Capability], &String, &String),
    why_refused: &mut Option<(String, Capability, Why)>,
    out: &mut UnseenJudged,
) {
    let home = paths::normalize(&req.home);
    let grantable = hides_nothing && paths::within(dir, &home) && *dir != home;
    for &cap in capabilities {
        let (bounded, open) = bound_in(policy, std::slice::from_ref(dir), cwd, cap, false, host, why_refused, true);
        let granted = !bounded && grantable && why_refused.is_none();
        if granted {
            out.call_granted.get_or_insert_with(|| reason.clone());
            call_grant(&mut out.call_grants, dir, cap);
        } else if !bounded {
            for d in open {
                out.program_needs.push((d.clone(), cap, program.to_string()));
                out.unbounded.push((d, cap));
            }
        }
        out.unknown.push(Unknown { capability: Some(cap), reason: reason.clone(), bounded: bounded || granted });
    }
}

/// A package manager's cache of code it runs later (`~/.npm/_npx`): write,
/// create and delete there for the call when the only code the line hides
/// is what a package manager runs through its cache (every opaque part of
/// the line is one of those runs; no interpreter, script, unknown program
/// or code-loading variable rides along), else asked as that program's need.
fn code_cache(req: &DecideRequest, analysis: &effects::Analysis, (program, dir, reason): (&str, &String, &String), why_refused: &Option<(String, Capability, Why)>, out: &mut UnseenJudged) {
    let count = |f: fn(&Unseen) -> bool| analysis.unseen.iter().filter(|u| f(u)).count();
    let runs = count(|u| matches!(u, Unseen::CodeCache { .. }));
    let opaque = count(|u| matches!(u, Unseen::Opaque { .. }));
    let other = count(|u| matches!(u, Unseen::NotOnPath { .. } | Unseen::ProcessLink { .. } | Unseen::Escapes { .. }));
    // Every program of the line that runs hidden code is this cache's
    // package manager (npm and npx share `~/.npm/_npx`).
    let owners = crate::policy::baseline::CODE_CACHES.iter().find(|(_, programs)| programs.contains(&program)).map_or(&[][..], |(_, p)| *p);
    let own = analysis.code_starts.iter().all(|p| owners.contains(&p.as_str()));
    let home = paths::normalize(&req.home);
    let grantable = req.mode == Mode::WorkspaceWrite && own && other == 0 && opaque <= runs && paths::within(dir, &home);
    for cap in [Capability::Write, Capability::Create, Capability::Delete] {
        if grantable && why_refused.is_none() {
            call_grant(&mut out.call_grants, dir, cap);
        } else {
            out.program_needs.push((dir.clone(), cap, program.to_string()));
            out.unbounded.push((dir.clone(), cap));
        }
    }
    let u = Unknown { capability: Some(Capability::Write), reason: format!("{reason}, keeping it in {dir}, whose packages later runs of it start unchecked"), bounded: grantable };
    if !out.unknown.contains(&u) {
        out.unknown.push(u);
    }
}

/// A removal the line asks for without naming it (`make clean`): where the
/// policy does not grant it already, the card asks every time and says
/// what; Allow once carries the capability under the scope for the call
/// (a fence grant of the decision, bound only when the card is answered).
fn asks_each_time(
    req: &DecideRequest,
    policy: &Policy,
    (cwd, host): (&str, &dyn Host),
    (capabilities, scope, reason): (&[Capability], &[String], &String),
    why_refused: &mut Option<(String, Capability, Why)>,
    out: &mut UnseenJudged,
) {
    let full = req.mode == Mode::DangerFullAccess;
    for &cap in capabilities {
        let (bounded, open) = bound_in(policy, scope, cwd, cap, full || req.fence.contains(&cap), host, why_refused, true);
        if !bounded && !full {
            let once = format!("; Allow once lets this one call {} under {}", cap.as_str(), open.join(", "));
            let why = format!("{reason}{once}");
            if !out.asks.contains(&why) {
                out.asks.push(why);
            }
            // A read-only session is granted no removal, whatever is answered.
            if req.mode == Mode::WorkspaceWrite {
                for dir in &open {
                    call_grant(&mut out.call_grants, dir, cap);
                }
            }
        }
        out.unknown.push(Unknown { capability: Some(cap), reason: reason.clone(), bounded: bounded || full });
    }
}

/// Files the runner keeps before the call replaces them (`git restore
/// FILE`): delete of exactly those entries for the call when the line
/// hides nothing; else the card says what would be lost.
fn kept(req: &DecideRequest, host: &dyn Host, hides_nothing: bool, (program, files, reason): (&str, &[String], &String), out: &mut UnseenJudged) {
    let grantable = hides_nothing && files.iter().all(|f| inside_workspace(f, &req.workspace, host) && !f.split('/').any(|c| c == ".git"));
    for f in files {
        if grantable {
            out.call_granted.get_or_insert_with(|| reason.clone());
            out.call_grants.push(crate::policy::rules::Rule { id: String::new(), path: f.clone(), recursive: false, access: Access::of(&[Capability::Delete]), hits: 0, created_at: String::new() });
            out.kept.push(f.clone());
        } else {
            out.program_needs.push((f.clone(), Capability::Delete, program.to_string()));
            out.unbounded.push((f.clone(), Capability::Delete));
            let what = format!("`{program}` replaces {f}, whose uncommitted changes would be lost");
            if !out.discards.contains(&what) {
                out.discards.push(what);
            }
        }
    }
    out.unknown.push(Unknown { capability: Some(Capability::Delete), reason: reason.clone(), bounded: grantable });
}

/// A path a program outside the table names (issue 34, families 6 and 7):
/// bounded under a fence of every change; else refused where no one may
/// change it (the harness home, a credential store, the permission store),
/// allowed inside the workspace (but on a persistence surface) or where the
/// policy grants every change, and asked for otherwise. Reserved system
/// paths are left to the programs that read them (`ldd /usr/bin/x`): the
/// decision refuses no change there it could see.
fn named(req: &DecideRequest, policy: &Policy, program: &str, path: &str, host: &dyn Host, notes: (&mut Option<(String, Capability, Why)>, &mut Option<String>), out: &mut UnseenJudged) {
    let (why_refused, persistence_note) = notes;
    use Capability::{Create, Delete, Write};
    let fenced = req.mode == Mode::DangerFullAccess || [Write, Create, Delete].iter().all(|c| req.fence.contains(c));
    let reason = format!("`{program}` is outside the table: what it does to {path}, which it names, the line does not show");
    // Bounded, it says nothing a reader needs: every program outside the
    // table names the folder it runs in.
    if fenced {
        return;
    }
    let spelled = Spellings::of(path, host);
    let mut open = Vec::new();
    for cap in [Write, Create, Delete] {
        let r = policy.resolve(&spelled, cap);
        match &r.why {
            Why::Reserved(_) => {}
            _ if r.refused => {
                if why_refused.is_none() {
                    *why_refused = Some((path.to_string(), cap, r.why.clone()));
                }
            }
            Why::Persistence(surface) => {
                if persistence_note.is_none() {
                    *persistence_note = Some(format!("{surface} decides what runs later, outside any fence: only a rule naming it opens it"));
                }
                open.push(cap);
            }
            _ if !r.granted => open.push(cap),
            _ => {}
        }
    }
    let plain_workspace = policy.is_in_workspace(&spelled) && policy.persistence(&spelled, Write).is_none();
    if plain_workspace || open.is_empty() {
        return;
    }
    for cap in open {
        out.unbounded.push((path.to_string(), cap));
    }
    let u = Unknown { capability: Some(Write), reason, bounded: false };
    if !out.unknown.contains(&u) {
        out.unknown.push(u);
    }
}

/// Refuse, ask or allow, from what was judged.
#[inline(never)]
fn conclude(
    req: &DecideRequest,
    home: &str,
    grant: GrantOutcome,
    judged: Judged,
    unseen: UnseenJudged,
    fence_grants: Vec<crate::policy::rules::Rule>,
    host: &dyn Host,
) -> Decision {
    let Judged { verdicts, why_refused, persistence_note, last_grant, .. } = judged;
    let UnseenJudged { unknown, unbounded, program_needs, link_prompt, escape, discards, call_granted, sockets, kept, asks, .. } = unseen;
    let GrantOutcome { matched: command_grant, note: grant_note } = grant;
    let mut missing: Vec<PathCapability> = verdicts
        .iter()
        .filter(|v| !v.granted && !v.refused)
        .map(|v| PathCapability { path: v.path.clone(), capability: v.capability })
        .collect();
    for (path, capability) in unbounded {
        let pc = PathCapability { path, capability };
        if !missing.contains(&pc) {
            missing.push(pc);
        }
    }

    if let Some((path, cap, why)) = why_refused {
        return Decision {
            decision: Outcome::Refuse,
            reason: refusal_sentence(&path, cap, &why),
            effects: verdicts,
            missing: Vec::new(),
            unknown,
            proposals: Vec::new(),
            command_grant: None,
            fence_grants: Vec::new(),
            folders: Vec::new(),
            widened: Vec::new(),
            sockets: Vec::new(),
            kept: Vec::new(),
            managed: None,
        };
    }
    // A grant that matched but cannot be carried falls back to the prompt:
    // the program's writes are not visible effects, so ask for the roots.
    if grant_note.is_some() && missing.is_empty() {
        if let Some(g) = req.commands.iter().find(|g| grant_note.as_deref().is_some_and(|n| n.contains(&format!("command grant {}:", if g.name.is_empty() { &g.command } else { &g.name })))) {
            for root in &g.roots {
                let path = if let Some(rest) = root.strip_prefix("$HOME") { paths::normalize(&format!("{home}/{rest}")) } else { paths::absolute("/", root, home) };
                missing.push(PathCapability { path, capability: Capability::Create });
            }
        }
    }
    // Handed outside the process tree: asked every time, unless the user
    // trusts the program (a command grant, the only thing proposed).
    if let Some((why, program)) = escape {
        let (reason, proposals) = match program {
            None => (format!("asked every time: {why}"), Vec::new()),
            Some(p) => (
                format!("asked each time: {why}; \"Always allow\" stores your trust in {p} as a command grant"),
                vec![Proposal { path: paths::absolute(&req.workspace, &req.cwd, home), recursive: true, access: Access::of(&[Capability::Read]), command: Some(p) }],
            ),
        };
        return Decision { decision: Outcome::Prompt, reason, effects: verdicts, missing, unknown, proposals, command_grant, fence_grants, folders: Vec::new(), widened: Vec::new(), sockets: sockets.clone(), kept: kept.clone(), managed: None };
    }
    // Nothing a rule could name is missing, but a /proc link is unbounded:
    // the card asks, and proposes nothing to keep.
    if let (true, Some(why)) = (missing.is_empty(), &link_prompt) {
        return Decision { decision: Outcome::Prompt, reason: why.clone(), effects: verdicts, missing, unknown, proposals: Vec::new(), command_grant, fence_grants, folders: Vec::new(), widened: Vec::new(), sockets: sockets.clone(), kept: kept.clone(), managed: None };
    }
    // Asked although no path is missing: nothing to store, every time.
    if missing.is_empty() && !asks.is_empty() {
        let reason = format!("asked every time: {}", asks.join("; "));
        return Decision { decision: Outcome::Prompt, reason, effects: verdicts, missing, unknown, proposals: Vec::new(), command_grant, fence_grants, folders: Vec::new(), widened: Vec::new(), sockets: sockets.clone(), kept: kept.clone(), managed: None };
    }
    if missing.is_empty() {
        let reason = match (&last_grant, verdicts.is_empty()) {
            (_, true) if unknown.is_empty() => "allowed: the command touches no file that needs a grant".to_string(),
            (Some(w), _) => format!("allowed: {}", grant_phrase(w)),
            _ => "allowed: what the command line cannot show is bounded by the kernel fence".to_string(),
        };
        let reason = match call_granted {
            Some(why) => format!("allowed: {why}, so its need is granted for this call only"),
            None => reason,
        };
        let reason = match (&command_grant, &grant_note) {
            (Some(m), _) => format!("allowed: command grant {} covers what it writes", m.name),
            (None, Some(note)) => format!("{reason} ({note}; the grant was not applied)"),
            (None, None) => reason,
        };
        return Decision { decision: Outcome::Allow, reason, effects: verdicts, missing, unknown, proposals: Vec::new(), command_grant, fence_grants, folders: Vec::new(), widened: Vec::new(), sockets: sockets.clone(), kept: kept.clone(), managed: None };
    }
    let first = &missing[0];
    let reason = if missing.len() == 1 {
        format!("{} is not granted on {}", first.capability.as_str(), first.path)
    } else {
        format!("{} is not granted on {} (and {} more)", first.capability.as_str(), first.path, missing.len() - 1)
    };
    let reason = match grant_note {
        Some(note) => format!("{reason} ({note}; asking instead)"),
        None => reason,
    };
    let reason = match persistence_note {
        Some(note) => format!("{reason} ({note})"),
        None => reason,
    };
    let reason = if discards.is_empty() { reason } else { format!("{}: {reason}", discards.join("; ")) };
    let reason = if asks.is_empty() { reason } else { format!("{reason}; and {}", asks.join("; ")) };
    let proposals = proposals(&missing, &program_needs, host);
    // The card names, and a grant holds, what each path really is now.
    let (missing, proposals) = real_targets(req, missing, proposals, host);
    Decision { decision: Outcome::Prompt, reason, effects: verdicts, missing, unknown, proposals, command_grant, fence_grants, folders: Vec::new(), widened: Vec::new(), sockets: sockets.clone(), kept: kept.clone(), managed: None }
}

/// An operation whose paths lie somewhere under `scope` (the cwd when
/// empty) is bounded when every scope folder grants it and the kernel fences
/// it. Returns that, and the folders to ask for when it is not.
/// `program_bound`: a named program's own need inside each scope folder (its
/// temp files, its config), judged as inside the folder.
#[allow(clippy::too_many_arguments)]
fn bound_in(
    policy: &Policy,
    scope: &[String],
    cwd: &str,
    cap: Capability,
    fenced: bool,
    host: &dyn Host,
    why_refused: &mut Option<(String, Capability, Why)>,
    program_bound: bool,
) -> (bool, Vec<String>) {
    let scope: Vec<String> = if scope.is_empty() { vec![cwd.to_string()] } else { scope.to_vec() };
    let mut bounded = fenced;
    for dir in &scope {
        let spelled = Spellings::of(dir, host);
        let r = if program_bound { policy.resolve_inside(&spelled, cap) } else { policy.resolve(&spelled, cap) };
        if r.refused && why_refused.is_none() {
            *why_refused = Some((dir.clone(), cap, r.why.clone()));
        }
        if !r.granted {
            bounded = false;
        }
    }
    (bounded, if bounded { Vec::new() } else { scope })
}

/// Git's own lines get delete in the workspace's repository for the call:
/// git replaces its index, refs and objects through lock files and
/// renames. Only when the line starts git and nothing that runs code its
/// text does not show (an interpreter, a script, a program not in the
/// table, configuration given with `-c`), so hidden code never holds delete
/// over the history. A line that changes the repository through git and
/// also runs such code (`git commit && npm version`) would fail at git's
/// first lock file with no card: it is asked up front, every time (the
/// second value says why), and Allow once carries the grant.
fn repository_grants(req: &DecideRequest, analysis: &effects::Analysis, host: &dyn Host) -> (Vec<crate::policy::rules::Rule>, Option<String>) {
    let hidden = analysis.unseen.iter().any(|u| matches!(u, Unseen::Opaque { .. } | Unseen::NotOnPath { .. } | Unseen::ProcessLink { .. }));
    let mixed = analysis.runs_code || hidden;
    let asks = mixed && analysis.writes_repository;
    if req.mode != Mode::WorkspaceWrite || !(analysis.runs_git || asks) || (mixed && !asks) {
        return (Vec::new(), None);
    }
    let repo = paths::normalize(&format!("{}/{}", req.workspace, crate::policy::baseline::REPOSITORY));
    // Asked for only where there is a repository to change.
    if asks && host.kind(&repo) != PathKind::Dir {
        return (Vec::new(), None);
    }
    if crate::policy::resolve::workspace_refused(&req.workspace, &req.home, host).is_some() {
        return (Vec::new(), None);
    }
    // The workspace's own folder: a `.git` swapped for a link leads elsewhere.
    let ws_real = host.canonical_root(&paths::normalize(&req.workspace));
    if host.canonical(&repo) != paths::normalize(&format!("{ws_real}/{}", crate::policy::baseline::REPOSITORY)) {
        return (Vec::new(), None);
    }
    let grant = crate::policy::rules::Rule { id: String::new(), path: repo.clone(), recursive: true, access: Access::of(&[Capability::Delete]), hits: 0, created_at: String::new() };
    let why = asks.then(|| {
        format!("git changes the repository {repo} and the line also runs code its text does not show, for which the repository stays shut: Allow once lets this one call change it (its hooks and config stay shut)")
    });
    (vec![grant], why)
}

/// Removing a tool-state folder itself (`rm -rf node_modules`): the
/// baseline grants delete inside it, but the kernel puts the right to
/// remove the folder on the workspace around it. The decision names that
/// one entry for the call, and the runner removes it (runner/removals.rs).
fn tool_state_removals(req: &DecideRequest, judged: &Judged, host: &dyn Host) -> Vec<crate::policy::rules::Rule> {
    use crate::policy::baseline::{Root, TOOL_STATE};
    if req.mode != Mode::WorkspaceWrite {
        return Vec::new();
    }
    let ws = paths::normalize(&req.workspace);
    let names: Vec<&str> = TOOL_STATE.iter().filter_map(|e| if let Root::InWorkspace(name) = e.root { Some(name) } else { None }).collect();
    let mut out: Vec<crate::policy::rules::Rule> = Vec::new();
    for v in judged.verdicts.iter().filter(|v| v.capability == Capability::Delete && v.granted && v.tier == Tier::Baseline) {
        let path = paths::normalize(&v.path);
        let Some(name) = names.iter().find(|n| path == format!("{ws}/{n}")) else { continue };
        // The folder itself, really there: a link in its place leads elsewhere.
        let real = host.kind(&path) == PathKind::Dir && host.canonical(&path) == paths::normalize(&format!("{}/{name}", host.canonical_root(&ws)));
        if real && !out.iter().any(|r| r.path == path) {
            out.push(crate::policy::rules::Rule { id: String::new(), path, recursive: true, access: Access::of(&[Capability::Delete]), hits: 0, created_at: String::new() });
        }
    }
    out
}

/// The workspace's `.env` written where the line shows it (`cp .env.example
/// .env`, `echo PORT=4000 >> .env`) by a line that hides nothing: granted
/// for the call. The kernel keeps it shut from everything else (hidden code,
/// and any line that hides some), as a repository's hooks are.
fn shown_launch_files(req: &DecideRequest, analysis: &effects::Analysis, policy: &Policy, host: &dyn Host, judged: &mut Judged) -> Vec<crate::policy::rules::Rule> {
    let mut out: Vec<crate::policy::rules::Rule> = Vec::new();
    if !hides_nothing(req, analysis) {
        return out;
    }
    for v in judged.verdicts.iter_mut().filter(|v| !v.granted && !v.refused && matches!(v.capability, Capability::Write | Capability::Create)) {
        let Some(file) = policy.launch_file(&Spellings::of(&v.path, host)) else { continue };
        v.granted = true;
        v.tier = Tier::Grant;
        match out.iter_mut().find(|r| r.path == file) {
            Some(r) => r.access.set(v.capability, true),
            None => out.push(crate::policy::rules::Rule { id: String::new(), path: file, recursive: false, access: Access::of(&[v.capability]), hits: 0, created_at: String::new() }),
        }
    }
    if let (Some(note), false) = (&judged.persistence_note, out.is_empty()) {
        if out.iter().any(|r| note.starts_with(&r.path)) {
            judged.persistence_note = None;
        }
    }
    out
}

/// git's own line that hides nothing, granted changes across the worktree
/// (its self-guarded operations: `checkout`, `pull`, `stash` rewrite the
/// worktree, a tracked `.env` included): the same changes on the
/// workspace's `.env`, which the kernel otherwise keeps shut. (Another
/// program's folder grant, `sed -i`'s, is for the files its line names.)
fn launch_files_in_grants(req: &DecideRequest, analysis: &effects::Analysis, policy: &Policy, host: &dyn Host, grants: &[crate::policy::rules::Rule]) -> Vec<crate::policy::rules::Rule> {
    if !hides_nothing(req, analysis) || !analysis.runs_git {
        return Vec::new();
    }
    let ws = paths::normalize(&req.workspace);
    let mut out = Vec::new();
    for file in crate::policy::baseline::LAUNCH_FILES {
        let path = paths::normalize(&format!("{ws}/{file}"));
        let Some(file) = policy.launch_file(&Spellings::of(&path, host)) else { continue };
        let mut access = Access::default();
        for g in grants.iter().filter(|g| g.recursive && paths::within(&file, &g.path) && g.path != file) {
            for c in [Capability::Write, Capability::Create, Capability::Delete] {
                if g.access.grants(c) {
                    access.set(c, true);
                }
            }
        }
        if access != Access::default() {
            out.push(crate::policy::rules::Rule { id: String::new(), path: file, recursive: false, access, hits: 0, created_at: String::new() });
        }
    }
    out
}

/// A line that runs no code its text does not show: no interpreter, shell,
/// script, program outside the table, `git -c`, nothing opaque, nothing
/// handed to a daemon. Only such a line gets a self-guarded program's
/// need granted for the call, so nothing hidden rides on it.
fn hides_nothing(req: &DecideRequest, analysis: &effects::Analysis) -> bool {
    let hidden = analysis.unseen.iter().any(|u| matches!(u, Unseen::Opaque { .. } | Unseen::NotOnPath { .. } | Unseen::ProcessLink { .. } | Unseen::Escapes { .. }));
    req.mode == Mode::WorkspaceWrite && !analysis.runs_code && !hidden
}

/// `dir` lies in the workspace, as written and as it really is (a folder
/// swapped for a link to elsewhere gets no grant).
fn inside_workspace(dir: &str, workspace: &str, host: &dyn Host) -> bool {
    let ws = paths::normalize(workspace);
    paths::within(&paths::normalize(dir), &ws) && paths::within(&host.canonical(dir), &host.canonical_root(&ws))
}

/// Add `cap` on `dir` (recursive) to this call's grants.
fn call_grant(grants: &mut Vec<crate::policy::rules::Rule>, dir: &str, cap: Capability) {
    match grants.iter_mut().find(|r| r.path == dir) {
        Some(r) => r.access.set(cap, true),
        None => grants.push(crate::policy::rules::Rule { id: String::new(), path: dir.to_string(), recursive: true, access: Access::of(&[cap]), hits: 0, created_at: String::new() }),
    }
}

/// The programs a matched command grant trusts (their base names): what
/// they hand to a daemon is the user's stored answer.
fn trusted_programs(req: &DecideRequest, grant: &GrantOutcome) -> Vec<String> {
    let Some(m) = &grant.matched else { return Vec::new() };
    let names: Vec<&str> = m.name.split("; ").collect();
    req.commands
        .iter()
        .filter(|g| names.contains(&if g.name.is_empty() { g.command.as_str() } else { g.name.as_str() }))
        .map(|g| paths::file_name(&g.command).to_string())
        .collect()
}

/// The folder holding the nearest `.git` at or above `dir`, if any.
fn repository_of(dir: &str, host: &dyn Host) -> Option<String> {
    let mut at = paths::normalize(dir);
    loop {
        let git = if at == "/" { "/.git".to_string() } else { format!("{at}/.git") };
        if host.kind(&git) != PathKind::Missing {
            return Some(at);
        }
        if at == "/" {
            return None;
        }
        at = paths::parent(&at).to_string();
    }
}

fn verdict(path: &str, cap: Capability, r: &Resolution) -> EffectVerdict {
    EffectVerdict {
        path: path.to_string(),
        capability: cap,
        granted: r.granted,
        refused: r.refused,
        tier: r.tier,
        rule_id: r.rule_id.clone(),
    }
}

fn refuse_unreadable(why: String) -> Decision {
    Decision {
        decision: Outcome::Refuse,
        reason: format!("refused: {why}; a line this layer cannot read is never run"),
        effects: Vec::new(),
        missing: Vec::new(),
        unknown: vec![Unknown { capability: None, reason: why, bounded: false }],
        proposals: Vec::new(),
        command_grant: None,
        fence_grants: Vec::new(),
        folders: Vec::new(),
        widened: Vec::new(),
        sockets: Vec::new(),
        kept: Vec::new(),
        managed: None,
    }
}

fn refusal_sentence(path: &str, cap: Capability, why: &Why) -> String {
    let op = cap.as_str();
    match why {
        Why::PermissionStore(store) if !cap.mutates() => format!("refused: {path} is dsh-allow's own state ({store}: its rules, audit ledger or fences); no call reads it"),
        Why::PermissionStore(store) => format!("refused: {op} on {path} would change the permission store ({store}); nothing may write it"),
        Why::ManagedDeny(root, entry) => managed::denial_sentence(path, cap, root, entry),
        Why::Reserved(root) => format!("refused: {root} is a protected system path; {op} on {path} is not allowed for anyone"),
        Why::Credential(store) => format!("refused: {path} is in a credential store ({store}); only a rule added with /allow add opens it"),
        Why::HarnessHome(home) => format!("refused: {op} on {path} would change the harness home ({home}), where the plugin, its profile and its store live; only a rule added with /allow add opens it"),
        Why::HostTemp(folder) => format!("refused: {path} is in the DSH host's own temp folder ({folder}), where it keeps every session's spilled results and writes again later; no call reads or changes it"),
        Why::ReadOnly => format!("refused: this session is read-only; {op} on {path} cannot be granted"),
        _ => format!("refused: {op} on {path}"),
    }
}

fn grant_phrase(w: &Why) -> String {
    match w {
        Why::Rule(p) => format!("a stored rule on {p} covers it"),
        Why::Grant => "this call's one-shot grant covers it".into(),
        Why::Baseline(label) => format!("inside the {label} baseline"),
        Why::FullAccess => "the session runs with full access (protected paths still apply)".into(),
        _ => "every path is covered".into(),
    }
}

/// Where a path really leads now, as the capability reaches it: a removal
/// the entry itself (its folder resolved), anything else through every link.
/// A grant decided on `ws/old -> ~/thesis.tex` names the thesis, and a card
/// says so; the runner then acts on that path and follows no link.
pub fn real_target(path: &str, cap: Capability, host: &dyn Host) -> String {
    if cap == Capability::Delete {
        crate::policy::resolve::entry(&paths::normalize(path), &|p| host.canonical(p))
    } else {
        host.canonical(path)
    }
}

/// `missing` and `proposals` with each path written in a place where calls
/// make links (the workspace, the temp folders) its real target, merged
/// where two spellings lead to one place. Elsewhere the links are the
/// system's or the user's (`/opt/homebrew/bin/gh` into its versioned
/// Cellar): a rule on the name outlives an upgrade.
fn real_targets(req: &DecideRequest, missing: Vec<PathCapability>, proposals: Vec<Proposal>, host: &dyn Host) -> (Vec<PathCapability>, Vec<Proposal>) {
    let ws = paths::normalize(&req.workspace);
    let temps = crate::policy::baseline::temp_dirs(req.platform);
    let planted_here = |p: &str| paths::within(p, &ws) || temps.iter().any(|t| paths::within(p, t));
    let real_target = |path: &str, cap: Capability| if planted_here(path) { real_target(path, cap, host) } else { path.to_string() };
    let mut m: Vec<PathCapability> = Vec::new();
    for pc in missing {
        let pc = PathCapability { path: real_target(&pc.path, pc.capability), ..pc };
        if !m.contains(&pc) {
            m.push(pc);
        }
    }
    let mut p: Vec<Proposal> = Vec::new();
    for prop in proposals {
        // Each capability to where it reaches: on a link, delete stays with
        // the link and the rest goes to what it points to.
        for c in Capability::ALL.into_iter().filter(|&c| prop.access.grants(c)) {
            let path = real_target(&prop.path, c);
            match p.iter_mut().find(|q| q.path == path && q.command == prop.command) {
                Some(q) => q.access.set(c, true),
                None => p.push(Proposal { path, access: Access::of(&[c]), ..prop.clone() }),
            }
        }
    }
    (m, p)
}

/// The narrowest rules "Always allow" would store: one per path, recursive
/// only for an existing directory, never the parent folder; what a program
/// needs across a folder (git rewriting the worktree) becomes a grant for that
/// program, not for the folder.
fn proposals(missing: &[PathCapability], program_needs: &[(String, Capability, String)], host: &dyn Host) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = Vec::new();
    for m in missing {
        let program = program_needs.iter().find(|(p, c, _)| *p == m.path && *c == m.capability).map(|(_, _, prog)| prog.clone());
        if let Some(p) = out.iter_mut().find(|p| p.path == m.path && p.command == program) {
            p.access.set(m.capability, true);
            continue;
        }
        out.push(Proposal {
            path: m.path.clone(),
            recursive: host.kind(&m.path) == PathKind::Dir || program.is_some(),
            access: Access::of(&[m.capability]),
            command: program,
        });
    }
    out
}

impl Decision {
    /// Which tier finally decided, for the ledger: `policy` for refusals,
    /// `rule` when a stored rule or grant spoke, else `baseline`.
    pub fn deciding_tier(&self) -> Option<Tier> {
        if self.decision != Outcome::Allow {
            return None;
        }
        if self.effects.iter().any(|e| matches!(e.tier, Tier::Rule | Tier::Grant)) {
            Some(Tier::Rule)
        } else {
            Some(Tier::Baseline)
        }
    }
}
