//! The managed policy's part in a decision: the refusals that stop every
//! call (a file at fault, a mode it does not list, a fence weaker than it
//! requires), the cards it asks for, and what it leaves a card to offer.
//! Its per-path tiers (`deny`, `ask`) are in the precedence itself
//! (`policy::resolve`); this reads what they said.

use crate::api::{DecideRequest, Decision, ManagedVerdict, Outcome, PathCapability, Unknown};
use crate::host::Host;
use crate::paths;
use crate::policy::capability::Capability;
use crate::policy::resolve::{Policy, Spellings, Why};
use crate::policy::rules::Rule;

/// The refusal of every call, before anything is read from the line, when
/// the managed policy lets none run here.
pub fn refusal(req: &DecideRequest) -> Option<Decision> {
    let m = req.managed.as_ref()?;
    let why = m.refusal(req.mode, req.fence_tier())?;
    Some(Decision {
        decision: Outcome::Refuse,
        reason: format!("refused: {why}"),
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
        managed: Some(ManagedVerdict { decided: true, always_allow: false, auto_review: false, files: m.files.clone() }),
    })
}

/// The sentence of a refusal by a managed `deny` (`entry` names its file).
pub fn denial_sentence(path: &str, cap: Capability, root: &str, entry: &str) -> String {
    let op = cap.as_str();
    format!("refused: the managed policy denies {op} on {root} for everyone ({entry}); no rule, card or mode can allow {op} on {path}")
}

/// Marks the decision with the managed policy's part: whether it decided,
/// and whether the card may offer Always allow or be answered by the
/// auto-reviewer. What the call would be granted without a card in a place
/// the policy asks about (a git line's delete in the repository, a command
/// grant's roots) turns the allow into that card.
pub fn mark(req: &DecideRequest, policy: &Policy, refused_by_it: bool, host: &dyn Host, d: &mut Decision) {
    let Some(m) = &req.managed else { return };
    let mut carried_asks = false;
    if d.decision == Outcome::Allow {
        let carried: Vec<&Rule> = d.fence_grants.iter().chain(d.command_grant.iter().flat_map(|g| &g.rules)).collect();
        if let Some((pc, sentence)) = carried_into_ask(&carried, policy, req, host) {
            d.decision = Outcome::Prompt;
            d.reason = format!("{} is not granted on {} without a card: {sentence}", pc.capability.as_str(), pc.path);
            d.missing = vec![pc];
            d.proposals = Vec::new();
            carried_asks = true;
        }
    }
    let mut asked: Vec<String> = Vec::new();
    if d.decision == Outcome::Prompt && !carried_asks {
        for pc in &d.missing {
            if let Why::ManagedAsk(root, entry) = policy.resolve(&Spellings::of(&pc.path, host), pc.capability).why {
                let said = format!("{} in {root} ({entry})", pc.capability.as_str());
                if !asked.contains(&said) {
                    asked.push(said);
                }
            }
        }
        if !asked.is_empty() {
            // Each entry's id names its file.
            d.reason = format!("{} — the managed policy asks every time before {}; Allow once answers this call alone", d.reason, asked.join(", "));
        } else if !m.always_allow && !d.proposals.is_empty() {
            d.reason = format!("{} — Always allow is off under {}", d.reason, m.named());
        }
    }
    // Asked by the managed policy: no rule may be stored for it, and only a
    // person answers.
    let quiet = asked.is_empty() && !carried_asks;
    d.managed = Some(ManagedVerdict {
        decided: refused_by_it || !quiet,
        always_allow: m.stores() && quiet,
        auto_review: m.auto_review && quiet,
        files: m.files.clone(),
    });
}

/// The first grant this call would carry without a card into a place a
/// managed `ask` names for that capability (the grant inside the asked
/// root, or the root inside the grant), with why, in words.
fn carried_into_ask(carried: &[&Rule], policy: &Policy, req: &DecideRequest, host: &dyn Host) -> Option<(PathCapability, String)> {
    let home = paths::normalize(&req.home);
    for g in carried {
        let root = Spellings::of_root(&paths::absolute("/", &g.path, &home), host);
        for cap in Capability::ALL.into_iter().filter(|&c| g.access.grants(c)) {
            let asked = policy.managed_ask.iter().find(|a| {
                a.access.grants(cap)
                    && a.roots.0.iter().any(|ar| root.0.iter().any(|gr| paths::within(gr, ar) || (g.recursive && paths::within(ar, gr))))
            });
            if let Some(a) = asked {
                let entry = a.rule_id.clone().unwrap_or_default();
                let sentence = format!(
                    "the managed policy asks every time before {} in {} ({entry}), and this call would carry it there",
                    cap.as_str(),
                    a.roots.written()
                );
                return Some((PathCapability { path: g.path.clone(), capability: cap }, sentence));
            }
        }
    }
    None
}
