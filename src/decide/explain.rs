//! A decision rendered for people (`dsh-allow explain`).

use std::fmt::Write;

use crate::api::{DecideRequest, Decision, Outcome};

pub fn render(req: &DecideRequest, d: &Decision) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "command:   {}", req.command);
    let _ = writeln!(s, "cwd:       {}   (workspace {}, {} on {:?})", req.cwd, req.workspace, req.mode.as_str(), req.platform);
    if d.effects.is_empty() && d.unknown.is_empty() {
        let _ = writeln!(s, "effects:   none");
    }
    for e in &d.effects {
        let verdict = if e.granted { "granted" } else if e.refused { "REFUSED" } else { "not granted" };
        let rule = e.rule_id.as_deref().map(|r| format!(" (rule {r})")).unwrap_or_default();
        let _ = writeln!(s, "  {:<8} {:<50} {:<12} by {:?}{}", e.capability.as_str(), e.path, verdict, e.tier, rule);
    }
    for u in &d.unknown {
        let cap = u.capability.map(|c| c.as_str()).unwrap_or("any");
        let how = if u.bounded { "bounded by the fence" } else { "NOT bounded" };
        let _ = writeln!(s, "  {:<8} {:<50} {}", cap, format!("? {}", u.reason), how);
    }
    let outcome = match d.decision {
        Outcome::Allow => "ALLOW",
        Outcome::Prompt => "PROMPT",
        Outcome::Refuse => "REFUSE",
    };
    let _ = writeln!(s, "outcome:   {outcome} — {}", d.reason);
    for n in &d.sockets {
        let state = match (&n.path, n.granted, d.decision) {
            (None, _, _) => "no socket known here".to_string(),
            (Some(p), true, Outcome::Allow) => format!("{p} granted to this call"),
            (Some(p), true, _) => format!("{p} granted to this call if allowed"),
            (Some(p), false, _) => format!("{p} not granted"),
        };
        let _ = writeln!(s, "  socket   {:<50} {}", n.daemon, state);
    }
    for w in &d.widened {
        let _ = writeln!(s, "  carried wider: {w}");
    }
    if let Some(m) = d.managed.as_ref().filter(|m| m.decided) {
        let _ = writeln!(s, "decided by: Managed ({})", m.files.join(", "));
    }
    let answers = d.answers();
    if !answers.is_empty() {
        let _ = writeln!(s, "answers:   {}", answers.join(" / "));
    }
    let stores = answers.contains(&"Always allow");
    for p in &d.proposals {
        let what = if stores { "always allow would store" } else { "allow once grants" };
        let _ = writeln!(s, "  {what}: {} {} {}", p.access.describe(), p.path, if p.recursive { "(folder)" } else { "(file)" });
    }
    s
}
