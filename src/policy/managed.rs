//! The managed policy: a floor an administrator sets for a team, which the
//! user's rules, cards and modes cannot lower.
//!
//! It lives in a file the administrator owns at a fixed system path
//! ([`system_file`]); the host's config may name more files, never this one
//! away. Each file is parsed here ([`parse_managed_file`]), so every adapter
//! reports the same errors, naming the field at fault, and the files are
//! merged into one [`Managed`] ([`merge`]) that the decide and profile
//! requests carry. Every field only tightens: `deny` is refused above every
//! rule, grant and the baseline (and compiled into the fence), `ask` is a
//! card no stored rule answers, `alwaysAllow: false` keeps cards to Deny and
//! Allow once, `autoReview: false` silences the reviewer, `modes` closes the
//! list of sandbox modes, `requireFence` puts a floor under the kernel
//! fence, and `audit: "required"` makes a lost ledger record stop its call.
//! A file that exists but cannot be used is a fault that refuses every call
//! ([`Managed::refusal`]): nothing falls back to the user's rules alone.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::paths;
use crate::policy::capability::{Access, Capability};
use crate::policy::rules::{self, Rule};
use crate::policy::{Enforce, Mode, Platform};

pub const MANAGED_VERSION: u64 = 1;

/// The administrator's file on each platform. Root-owned in practice; the
/// plugin also makes it a protected path, so no call, rule or card writes it.
pub fn system_file(platform: Platform) -> &'static str {
    match platform {
        Platform::Linux => "/etc/dsh-allow/managed.json",
        Platform::Macos => "/Library/Application Support/dsh-allow/managed.json",
    }
}

/// Whether the audit ledger must take every record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Audit {
    #[default]
    Optional,
    Required,
}

/// The managed policy of one host, its files merged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Managed {
    /// The files it was read from, named by every sentence it causes.
    #[serde(default)]
    pub files: Vec<String>,
    /// Refused for everyone. Each rule's `id` names its file and entry.
    #[serde(default)]
    pub deny: Vec<Rule>,
    /// Always a card, whatever rule, grant or baseline would allow.
    #[serde(default)]
    pub ask: Vec<Rule>,
    #[serde(default = "yes")]
    pub always_allow: bool,
    #[serde(default = "yes")]
    pub auto_review: bool,
    /// The only sandbox modes a session may run under; absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<Vec<Mode>>,
    /// The weakest kernel fence a call may run under; absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_fence: Option<Enforce>,
    #[serde(default)]
    pub audit: Audit,
    /// Files that exist but could not be used, each with why: while any is
    /// here every call is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

fn yes() -> bool {
    true
}

impl Default for Managed {
    fn default() -> Managed {
        Managed {
            files: Vec::new(),
            deny: Vec::new(),
            ask: Vec::new(),
            always_allow: true,
            auto_review: true,
            modes: None,
            require_fence: None,
            audit: Audit::Optional,
            errors: Vec::new(),
        }
    }
}

/// The managed policy's answer to a rule about to be stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleCheck {
    /// Why the rule may not be stored, if it may not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Entries inside the rule that it does not reach.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One managed file as the adapter found it: its text, or why it could not
/// be read (a file that is not there is no source at all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Source {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The keys a version-1 file may hold.
const FILE_KEYS: &[&str] = &["version", "deny", "ask", "alwaysAllow", "autoReview", "modes", "requireFence", "audit"];

/// Parse one managed file. Any shape but version 1, well formed, is an error
/// naming the field, never a looser policy: a field this version does not
/// know may be one that tightens.
pub fn parse_managed_file(text: &str) -> Result<Managed, String> {
    if text.trim().is_empty() {
        return Err(format!("the file is empty; write {{\"version\": {MANAGED_VERSION}}} for a policy that adds nothing"));
    }
    let value = match rules::distinct_json(text) {
        Ok(v) => v,
        Err(e) if e.is_data() => return Err(format!("the file {e}")),
        Err(e) => return Err(format!("the file is not JSON: {e}")),
    };
    let Some(obj) = value.as_object() else {
        return Err(format!("expected a JSON object with \"version\": {MANAGED_VERSION}"));
    };
    match obj.get("version") {
        Some(v) if v.as_u64() == Some(MANAGED_VERSION) => {}
        None => return Err(format!("version: missing (this dsh-allow reads managed policy version {MANAGED_VERSION})")),
        Some(v) => return Err(format!("version: {v} is not a version this dsh-allow reads (it reads {MANAGED_VERSION})")),
    }
    if let Some(k) = obj.keys().find(|k| !FILE_KEYS.contains(&k.as_str())) {
        return Err(format!("{k}: unknown field (version {MANAGED_VERSION} holds {})", FILE_KEYS.join(", ")));
    }
    Ok(Managed {
        files: Vec::new(),
        deny: rule_list(obj, "deny")?,
        ask: rule_list(obj, "ask")?,
        always_allow: flag(obj, "alwaysAllow")?,
        auto_review: flag(obj, "autoReview")?,
        modes: modes(obj)?,
        require_fence: require_fence(obj)?,
        audit: match obj.get("audit") {
            None => Audit::Optional,
            Some(Value::String(s)) if s == "required" => Audit::Required,
            Some(Value::String(s)) if s == "optional" => Audit::Optional,
            Some(_) => return Err("audit: expected \"required\" or \"optional\"".into()),
        },
        errors: Vec::new(),
    })
}

/// `deny` or `ask`: rules in the rules file's shape, each capability named
/// `true` (a `false` there would deny or ask nothing, and reads like a grant).
fn rule_list(obj: &Map<String, Value>, key: &str) -> Result<Vec<Rule>, String> {
    let items = match obj.get(key) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("{key}: expected an array of rules")),
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{key}[{i}]");
        let rule = rules::parse_rule(item, &at)?;
        if let Some(c) = Capability::ALL.into_iter().find(|&c| rule.access.get(c) == Some(false)) {
            let verb = if key == "deny" { "denies" } else { "asks for" };
            return Err(format!("{at}.access.{}: false {verb} nothing; name only the capabilities to {key}, each true", c.as_str()));
        }
        out.push(rule);
    }
    Ok(out)
}

fn flag(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match obj.get(key) {
        None => Ok(true),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{key}: expected true or false")),
    }
}

fn modes(obj: &Map<String, Value>) -> Result<Option<Vec<Mode>>, String> {
    let items = match obj.get("modes") {
        None => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("modes: expected an array of sandbox modes".into()),
    };
    if items.is_empty() {
        return Err("modes: names no mode, so no call could run; leave the field out to allow every mode".into());
    }
    let mut out = Vec::new();
    for (i, m) in items.iter().enumerate() {
        let mode = serde_json::from_value::<Mode>(m.clone())
            .map_err(|_| format!("modes[{i}]: {m} is not a sandbox mode (read-only, workspace-write, danger-full-access)"))?;
        if !out.contains(&mode) {
            out.push(mode);
        }
    }
    Ok(Some(out))
}

fn require_fence(obj: &Map<String, Value>) -> Result<Option<Enforce>, String> {
    match obj.get("requireFence") {
        None => Ok(None),
        Some(Value::String(s)) => Enforce::ORDER
            .into_iter()
            .find(|e| e.as_str() == s)
            .map(Some)
            .ok_or(format!("requireFence: {s:?} is not a fence level (full, guarded, process or writes)")),
        Some(_) => Err("requireFence: expected full, guarded, process or writes".into()),
    }
}

/// The files as one policy: denials and asks add up, a `false` anywhere
/// wins, the modes are those every file allows, the strongest fence any
/// file requires is required, and a file at fault is an error of the whole.
pub fn merge(sources: &[Source]) -> Managed {
    let mut m = Managed::default();
    for s in sources {
        m.files.push(s.file.clone());
        let part = match (&s.error, &s.text) {
            (Some(e), _) => Err(format!("cannot be read: {e}")),
            (None, Some(text)) => parse_managed_file(text),
            (None, None) => Err("cannot be read".into()),
        };
        let part = match part {
            Ok(p) => p,
            Err(e) => {
                m.errors.push(format!("{}: {e}", s.file));
                continue;
            }
        };
        let named = |key: &str, rules: Vec<Rule>| -> Vec<Rule> {
            rules.into_iter().enumerate().map(|(i, r)| Rule { id: format!("{} {key}[{i}]", s.file), ..r }).collect()
        };
        m.deny.extend(named("deny", part.deny));
        m.ask.extend(named("ask", part.ask));
        m.always_allow &= part.always_allow;
        m.auto_review &= part.auto_review;
        m.modes = match (m.modes.take(), part.modes) {
            (None, theirs) => theirs,
            (ours, None) => ours,
            (Some(ours), Some(theirs)) => Some(ours.into_iter().filter(|o| theirs.contains(o)).collect()),
        };
        m.require_fence = match (m.require_fence, part.require_fence) {
            (Some(a), Some(b)) => Some(if a.at_least(b) { a } else { b }),
            (a, b) => a.or(b),
        };
        if part.audit == Audit::Required {
            m.audit = Audit::Required;
        }
    }
    m
}

impl Managed {
    /// "the managed policy (/etc/dsh-allow/managed.json)", for sentences.
    pub fn named(&self) -> String {
        format!("the managed policy ({})", self.files.join(", "))
    }

    /// Why no call may run at all, if none may: a file at fault, a mode the
    /// policy does not list, a kernel fence weaker than it requires
    /// (`level`: what the kernel enforces for this call; off for a session
    /// with full access, where DSH confines nothing).
    pub fn refusal(&self, mode: Mode, level: Enforce) -> Option<String> {
        if !self.errors.is_empty() {
            return Some(format!(
                "the managed policy cannot be used ({}); every call is refused until an administrator fixes it",
                self.errors.join("; ")
            ));
        }
        if let Some(modes) = self.modes.as_ref().filter(|m| !m.contains(&mode)) {
            let listed: Vec<&str> = modes.iter().map(|m| m.as_str()).collect();
            return Some(format!(
                "{} allows only the sandbox modes {}; no call runs under {} (switch the session back to one of those)",
                self.named(),
                if listed.is_empty() { "(none: its files list no mode in common)".to_string() } else { listed.join(", ") },
                mode.as_str()
            ));
        }
        if let Some(need) = self.require_fence.filter(|&need| !level.at_least(need)) {
            return Some(format!(
                "{} requires the kernel fence at {} or stronger, and here it enforces {}; no call runs under a weaker fence",
                self.named(),
                need.as_str(),
                level.as_str()
            ));
        }
        None
    }

    /// Whether a card may offer Always allow (and `/allow add` store a rule).
    pub fn stores(&self) -> bool {
        self.always_allow && self.errors.is_empty()
    }

    /// What the policy says to a rule the user is about to store (`/allow
    /// add`): why it is refused, when the rule lies at or inside an entry
    /// that denies or asks for a capability it grants (it could never grant
    /// that there); else notes for entries inside it that it does not reach.
    pub fn check_rule(&self, rule: &Rule, home: &str, platform: Platform) -> RuleCheck {
        let home = paths::normalize(home);
        let abs = |p: &str| paths::absolute("/", p, &home);
        let root = abs(&rule.path);
        let mut check = RuleCheck::default();
        let entries = self.deny.iter().map(|r| (r, true)).chain(self.ask.iter().map(|r| (r, false)));
        for (entry, denial) in entries {
            let access = effective(entry, platform, denial);
            let caps: Vec<&str> = Capability::ALL.into_iter().filter(|&c| rule.access.grants(c) && access.grants(c)).map(|c| c.as_str()).collect();
            if caps.is_empty() {
                continue;
            }
            let at = abs(&entry.path);
            let what = if denial { "denies" } else { "asks every time before" };
            let inside = if entry.recursive { paths::within(&root, &at) } else { root == at };
            if inside && (entry.recursive || !rule.recursive) {
                check.refused.get_or_insert(format!(
                    "{} {what} {} on {} ({}); a rule there could never grant it",
                    self.named(),
                    caps.join(","),
                    entry.path,
                    entry.id
                ));
            } else if rule.recursive && paths::within(&at, &root) {
                check.notes.push(format!("{} still {what} {} on {} ({})", self.named(), caps.join(","), entry.path, entry.id));
            }
        }
        if check.refused.is_none() && !self.stores() {
            check.refused = Some(format!("{} turns Always allow off: no rule is stored, by a card or by /allow add", self.named()));
        }
        check
    }

    /// What the policy enforces, one line each, for `/allow status` and
    /// `dsh-allow managed check`.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self.errors.iter().map(|e| format!("FAULT: {e}: every call is refused")).collect();
        let entry = |verb: &str, r: &Rule| format!("{verb} {} on {}{} ({})", r.access.describe(), r.path, if r.recursive { " and everything in it" } else { "" }, r.id);
        out.extend(self.deny.iter().map(|r| entry("denies", r)));
        out.extend(self.ask.iter().map(|r| entry("asks every time before", r)));
        if !self.always_allow {
            out.push("Always allow is off: cards offer Deny and Allow once, /allow add is refused".into());
        }
        if !self.auto_review {
            out.push("auto-review is off: only a person answers a card".into());
        }
        if let Some(modes) = &self.modes {
            out.push(format!("sandbox modes allowed: {}", modes.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")));
        }
        if let Some(level) = self.require_fence {
            out.push(format!("requires the kernel fence at {} or stronger", level.as_str()));
        }
        if self.audit == Audit::Required {
            out.push("audit required: a call whose ledger record cannot be written does not run".into());
        }
        if out.is_empty() {
            out.push("adds nothing".into());
        }
        out
    }
}

/// A `deny` or `ask` entry as the tier tables read it. A denied read denies
/// delete too, since moving an entry out of the folder would carry its
/// content past the denial (Landlock refuses such a move across folders,
/// Seatbelt does not); and on Linux execute, since the kernel maps a program
/// only where it may also be read, so an execute grant would open the read.
pub fn effective(rule: &Rule, platform: Platform, denial: bool) -> Access {
    let mut access = rule.access;
    if access.grants(Capability::Read) {
        if denial {
            access.delete = Some(true);
        }
        if platform == Platform::Linux {
            access.execute = Some(true);
        }
    }
    access
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(file: &str, text: &str) -> Source {
        Source { file: file.into(), text: Some(text.into()), error: None }
    }

    #[test]
    fn a_file_names_the_field_at_fault() {
        let cases = [
            ("", "empty"),
            ("{", "not JSON"),
            ("[]", "JSON object"),
            ("{}", "version: missing"),
            ("{\"version\": 2}", "version: 2"),
            ("{\"version\": 1, \"allow\": []}", "allow: unknown field"),
            ("{\"version\": 1, \"deny\": [{\"path\": \"rel\", \"access\": {\"read\": true}}]}", "deny[0].path"),
            ("{\"version\": 1, \"deny\": [{\"path\": \"/s\", \"access\": {\"read\": false}}]}", "deny[0].access.read"),
            ("{\"version\": 1, \"ask\": [{\"path\": \"/s\", \"access\": {\"fly\": true}}]}", "ask[0].access.fly"),
            ("{\"version\": 1, \"alwaysAllow\": \"no\"}", "alwaysAllow"),
            ("{\"version\": 1, \"modes\": []}", "modes: names no mode"),
            ("{\"version\": 1, \"modes\": [\"sideways\"]}", "modes[0]"),
            ("{\"version\": 1, \"requireFence\": \"off\"}", "requireFence"),
            ("{\"version\": 1, \"audit\": true}", "audit"),
            ("{\"version\": 1, \"version\": 1}", "twice"),
        ];
        for (text, says) in cases {
            let e = parse_managed_file(text).expect_err(text);
            assert!(e.contains(says), "{text}: {e} does not say {says}");
        }
    }

    #[test]
    fn files_merge_to_the_tighter_of_each_field() {
        let a = src("/etc/a.json", r#"{"version": 1, "deny": [{"path": "~/s", "access": {"read": true}}], "modes": ["read-only", "workspace-write"], "requireFence": "process"}"#);
        let b = src("/etc/b.json", r#"{"version": 1, "alwaysAllow": false, "modes": ["workspace-write", "danger-full-access"], "requireFence": "full", "audit": "required"}"#);
        let m = merge(&[a, b]);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.deny[0].id, "/etc/a.json deny[0]");
        assert!(!m.always_allow && m.auto_review);
        assert_eq!(m.modes, Some(vec![Mode::WorkspaceWrite]));
        assert_eq!(m.require_fence, Some(Enforce::Full));
        assert_eq!(m.audit, Audit::Required);
    }

    #[test]
    fn a_file_at_fault_refuses_every_call_naming_the_file_and_the_problem() {
        let m = merge(&[Source { file: "/etc/x.json".into(), text: None, error: Some("EACCES: permission denied".into()) }]);
        let why = m.refusal(Mode::WorkspaceWrite, Enforce::Full).expect("refused");
        assert!(why.contains("/etc/x.json") && why.contains("EACCES"), "{why}");
        let m = merge(&[src("/etc/y.json", "{\"version\": 9}")]);
        assert!(m.refusal(Mode::ReadOnly, Enforce::Full).unwrap().contains("/etc/y.json: version: 9"));
    }

    #[test]
    fn a_rule_inside_a_denial_is_refused_and_one_around_it_is_told() {
        let m = merge(&[src("/m.json", r#"{"version": 1, "deny": [{"path": "~/secrets", "access": {"read": true}}]}"#)]);
        let rule = |path: &str, caps: &[Capability]| Rule { id: String::new(), path: path.into(), recursive: true, access: Access::of(caps), hits: 0, created_at: String::new() };
        let inside = m.check_rule(&rule("/h/secrets/sub", &[Capability::Read]), "/h", Platform::Linux);
        assert!(inside.refused.unwrap().contains("denies read on ~/secrets (/m.json deny[0])"));
        let other_cap = m.check_rule(&rule("/h/secrets", &[Capability::Create]), "/h", Platform::Linux);
        assert_eq!(other_cap, RuleCheck::default());
        let around = m.check_rule(&rule("~", &[Capability::Read, Capability::Write]), "/h", Platform::Linux);
        assert!(around.refused.is_none() && around.notes[0].contains("still denies read on ~/secrets"), "{around:?}");
        let off = merge(&[src("/m.json", r#"{"version": 1, "alwaysAllow": false}"#)]);
        assert!(off.check_rule(&rule("/h/x", &[Capability::Read]), "/h", Platform::Linux).refused.unwrap().contains("Always allow off"));
    }

    #[test]
    fn a_mode_not_listed_and_a_weaker_fence_refuse() {
        let m = merge(&[src("/m.json", r#"{"version": 1, "modes": ["read-only"], "requireFence": "guarded"}"#)]);
        assert!(m.refusal(Mode::ReadOnly, Enforce::Full).is_none());
        assert!(m.refusal(Mode::ReadOnly, Enforce::Guarded).is_none());
        assert!(m.refusal(Mode::WorkspaceWrite, Enforce::Full).unwrap().contains("no call runs under workspace-write"));
        assert!(m.refusal(Mode::ReadOnly, Enforce::Process).unwrap().contains("requires the kernel fence at guarded"));
    }
}
