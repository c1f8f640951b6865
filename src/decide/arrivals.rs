//! What the kernel will carry for a path that does not exist yet, said
//! before anyone answers.
//!
//! Landlock attaches a rule to something that exists when the call starts.
//! The Linux runner (`runner/arrivals.rs`) therefore makes, before the fence,
//! the folders a line makes outside the workspace and an empty file where a
//! grant of create and write names a missing file in a folder that is (or
//! will be) there. Only a grant of create on a missing path it cannot make
//! (a `mv` or `ln` destination, a file in a folder nobody makes) is carried
//! wider: create — and only create — on the nearest folder that exists,
//! for this one call. This module says which, in the words the card and
//! the ledger use; it reads the same rule the runner applies.

use crate::api::{DecideRequest, Decision, Platform, Tier};
use crate::policy::resolve::{Policy, Spellings};
use crate::policy::rules::Rule;
use crate::host::{Host, PathKind};
use crate::paths;
use crate::policy::capability::{Access, Capability};

/// The widenings this decision's grants (its proposals, or the call's own
/// one-shot grants) would cost under the Linux fence, one sentence each.
pub fn widened(req: &DecideRequest, d: &Decision, host: &dyn Host) -> Vec<String> {
    if req.platform != Platform::Linux {
        return Vec::new();
    }
    let granted = d.proposals.iter().filter(|p| p.command.is_none()).map(|p| (p.path.clone(), p.access)).chain(req.grants.iter().map(|g| (g.path.clone(), g.access)));
    let mut out = Vec::new();
    for (path, access) in granted {
        if let Some(near) = carried_wider(&paths::normalize(&path), access, &d.folders, host) {
            let home = paths::normalize(&req.home);
            let sentence = format!(
                "`{}` does not exist yet and the kernel can only name what exists: this one command may also create other entries in `{}` (create only; nothing there can be changed or removed)",
                shown(&path, &req.workspace, &home),
                shown(&near, &req.workspace, &home)
            );
            if !out.contains(&sentence) {
                out.push(sentence);
            }
        }
    }
    out
}

/// A folder the line makes outside the workspace where the baseline grants
/// create but the folder that would hold it does not (a package cache under
/// home, `~/.cache/uv`): the runner makes only what a rule or grant of the
/// call lets it create, so the call carries create on exactly that folder.
/// (Where the folder around it grants create, `/tmp`, the call makes it.)
pub fn baseline_folders(req: &DecideRequest, folders: &[String], policy: &Policy, host: &dyn Host, grants: &mut Vec<Rule>) {
    let ws = paths::normalize(&req.workspace);
    for f in folders.iter().filter(|f| !paths::within(f, &ws)) {
        let r = policy.resolve(&Spellings::of(f, host), Capability::Create);
        let near = nearest_folder(paths::parent(f), host);
        let around = near.is_some_and(|n| policy.resolve(&Spellings::of(&n, host), Capability::Create).granted);
        if r.granted && r.tier == Tier::Baseline && !around && !grants.iter().any(|g| g.path == *f) {
            grants.push(Rule { id: String::new(), path: f.clone(), recursive: true, access: Access::of(&[Capability::Create]), hits: 0, created_at: String::new() });
        }
    }
}

/// The folder a grant of create on a missing `path` is carried on instead
/// of `path` itself, if it is: not when the runner makes `path` (a folder
/// the line makes) or an empty file there (create with write, in a folder
/// that is there or that the line makes).
fn carried_wider(path: &str, access: Access, folders: &[String], host: &dyn Host) -> Option<String> {
    if !access.grants(Capability::Create) || host.kind(path) != PathKind::Missing || folders.iter().any(|f| f == path) {
        return None;
    }
    let there = |p: &str| host.kind(p) == PathKind::Dir || folders.iter().any(|f| f == p);
    let parent = paths::parent(path);
    if access.grants(Capability::Write) && there(parent) {
        return None;
    }
    nearest_folder(parent, host)
}

/// The nearest folder at or above `p` that exists.
fn nearest_folder(p: &str, host: &dyn Host) -> Option<String> {
    let mut at = p.to_string();
    loop {
        if host.kind(&at) == PathKind::Dir {
            return Some(at);
        }
        if at == "/" {
            return None;
        }
        at = paths::parent(&at).to_string();
    }
}

/// A path as a person reads it: from the workspace or from home.
fn shown(path: &str, workspace: &str, home: &str) -> String {
    let ws = paths::normalize(workspace);
    if path == ws {
        return "./".into();
    }
    if let Some(rest) = path.strip_prefix(&format!("{ws}/")) {
        return rest.to_string();
    }
    if path == home {
        return "~".into();
    }
    match path.strip_prefix(&format!("{home}/")) {
        Some(rest) => format!("~/{rest}"),
        None => path.to_string(),
    }
}
