//! The audit ledger: the record shape the plugin appends (one NDJSON line per
//! event), secret redaction before writing, and folding many lines into one
//! row per tool call for the Approvals view — the same code in Node and in
//! the browser.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// Marks our lines among whatever else might share the file.
pub const LEDGER_VERSION: u64 = 1;
pub const MAX_ROWS: usize = 500;

/// One row of the Approvals view: one tool call, and who finally decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerRow {
    pub time: String,
    pub session_id: String,
    pub call_id: String,
    pub tool: String,
    pub command: String,
    /// The command's size in bytes when `command` holds only its start (a
    /// line past the core's limit, refused for its size, is kept cut short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_bytes: Option<u64>,
    pub cwd: String,
    /// The call's workspace and home, so a reader can show paths relative
    /// to them (absent in lines written before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    pub mode: String,
    /// `allowed`, `refused`, `denied`, `asked` (no answer yet), `cancelled`, `unavailable`.
    pub outcome: String,
    /// `rule`, `baseline`, `fence` (the kernel fence bounded what the text
    /// could not show), `auto-review`, `human`, `policy`, `managed` (the
    /// administrator's managed policy refused or asked).
    pub source: String,
    pub reason: String,
    #[serde(default)]
    pub rules: Vec<Value>,
    #[serde(default)]
    pub missing: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_grant: Option<String>,
    /// What the kernel denied once the call ran (`{path, capability}`, read
    /// from its stderr): an allowed row can still have been stopped there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel: Vec<Value>,
    /// Why a call that was allowed did not run after all (the host refused
    /// to run it unconfined when the sandbox runner failed, the floor
    /// refused it): its row must not read as run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// The call's processes still running when it ended (a server started
    /// in the background): fenced and supervised until they exit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldOptions {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Include the calls the baseline allowed (hidden by default).
    #[serde(default)]
    pub baseline: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    pub rows: Vec<LedgerRow>,
    /// Lines that were not ours or not whole: skipped, never fatal.
    pub skipped: usize,
    /// Baseline rows left out (for the "Show default allows" toggle).
    pub hidden_baseline: usize,
}

/// One ledger line, read with only the fields the fold uses. Texts are
/// borrowed from the line unless they hold escapes; the lists and the
/// review's values stay JSON text until a row is written out (most lines'
/// lists are passed through unread).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    #[serde(default)]
    dsh_allow: Option<u64>,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    time: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    command: Option<Cow<'a, str>>,
    #[serde(default)]
    command_bytes: Option<u64>,
    #[serde(default, borrow)]
    cwd: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    workspace: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    home: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    mode: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    decision: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    source: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    rules: Option<&'a RawValue>,
    #[serde(default, borrow)]
    missing: Option<&'a RawValue>,
    #[serde(default, borrow)]
    action: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    stored: Option<&'a RawValue>,
    #[serde(default, borrow)]
    verdict: Option<&'a RawValue>,
    #[serde(default, borrow)]
    latency_ms: Option<&'a RawValue>,
    #[serde(default, borrow)]
    route: Option<&'a RawValue>,
    #[serde(default, borrow)]
    command_grant: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    denied: Option<&'a RawValue>,
    #[serde(default, borrow)]
    why: Option<Cow<'a, str>>,
    #[serde(default)]
    pids: Option<Vec<u32>>,
}

impl Record<'_> {
    /// The lists are lists (or absent, or null): a line whose list is any
    /// other value is not one of ours.
    fn lists_are_lists(&self) -> bool {
        [self.rules, self.missing, self.stored, self.denied].into_iter().flatten().all(|raw| raw.get().trim_start().starts_with('['))
    }
}

/// A row being folded: what `LedgerRow` holds, still borrowed from the text.
struct Draft<'a> {
    time: Cow<'a, str>,
    session_id: Cow<'a, str>,
    call_id: Cow<'a, str>,
    tool: Cow<'a, str>,
    command: Cow<'a, str>,
    command_bytes: Option<u64>,
    cwd: Cow<'a, str>,
    workspace: Option<Cow<'a, str>>,
    home: Option<Cow<'a, str>>,
    mode: Cow<'a, str>,
    outcome: &'static str,
    source: &'static str,
    reason: Cow<'a, str>,
    rules: Option<&'a RawValue>,
    missing: Option<&'a RawValue>,
    action: Option<&'static str>,
    stored: Option<&'a RawValue>,
    review: Option<Value>,
    command_grant: Option<Cow<'a, str>>,
    kernel: Vec<Value>,
    not_run: Option<Cow<'a, str>>,
    background: Vec<u32>,
}

/// An FNV-1a hasher: the fold's index needs no random keys (which cost a
/// trip to JS in wasm) and its keys are short.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// The rows of `text` in order of first appearance, before the limit.
fn drafts<'a>(text: &'a str, opts: &FoldOptions) -> (Vec<Draft<'a>>, usize, usize) {
    let mut f = Folding { rows: Vec::new(), index: HashMap::default() };
    let mut skipped = 0;
    let session_filter = opts.session_id.as_deref();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // Lines of other sessions are skipped before they are parsed.
        if session_filter.is_some_and(|s| !line.contains(s)) {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Record>(line) else {
            skipped += 1;
            continue;
        };
        if v.dsh_allow != Some(LEDGER_VERSION) || !v.lists_are_lists() {
            skipped += 1;
            continue;
        }
        let (Some(session), Some(call)) = (v.session_id.clone(), v.call_id.clone()) else {
            skipped += 1;
            continue;
        };
        if session.is_empty() || call.is_empty() {
            skipped += 1;
            continue;
        }
        // A change to the rules file or the host's default preset is every
        // session's business ("*").
        if session_filter.is_some_and(|s| s != session && session != "*") {
            continue;
        }
        let key = (session, call);
        let at = f.index.get(&key).copied();
        let folded = match v.kind.as_deref() {
            Some("decision") => f.decision(key, at, v),
            Some("answer") => at.is_some_and(|i| f.answer(i, v)),
            Some("review") => at.is_some_and(|i| f.review(i, v)),
            Some("kernel") => at.is_some_and(|i| f.kernel(i, v)),
            Some("rules" | "mode") if at.is_none() => f.change(key, v),
            Some("not-run") => at.is_some_and(|i| f.not_run(i, v)),
            Some("background") => at.is_some_and(|i| f.background(i, v)),
            _ => false,
        };
        if !folded {
            skipped += 1;
        }
    }
    let mut rows = f.rows;
    let before = rows.len();
    if !opts.baseline {
        // A default allow the kernel then stopped is worth seeing.
        rows.retain(|r| r.source != "baseline" || !r.kernel.is_empty());
    }
    let hidden_baseline = before - rows.len();
    let limit = opts.limit.unwrap_or(MAX_ROWS).min(MAX_ROWS);
    if rows.len() > limit {
        rows.drain(..rows.len() - limit);
    }
    (rows, skipped, hidden_baseline)
}

/// The rows folded so far, and where each call's row is. Each record kind
/// folds into them; `false` means the line is not one to fold (skipped).
struct Folding<'a> {
    rows: Vec<Draft<'a>>,
    /// (session, call) → row index, keyed by the texts the rows hold.
    index: HashMap<(Cow<'a, str>, Cow<'a, str>), usize, BuildHasherDefault<Fnv>>,
}

impl<'a> Folding<'a> {
    /// The gate's decision: a new row, or a call asked again (after a wait),
    /// which keeps its first place.
    fn decision(&mut self, key: (Cow<'a, str>, Cow<'a, str>), at: Option<usize>, v: Record<'a>) -> bool {
        let outcome = match v.decision.as_deref() {
            Some("allow") => "allowed",
            Some("refuse") => "refused",
            Some("prompt") => "asked",
            _ => return false,
        };
        let source = match v.source.as_deref() {
            None | Some("policy") => "policy",
            Some("rule") => "rule",
            Some("baseline") => "baseline",
            Some("fence") => "fence",
            Some("managed") => "managed",
            Some(_) => return false,
        };
        match at {
            Some(i) if self.rows[i].outcome == "asked" || self.rows[i].action.is_none() => {
                let row = &mut self.rows[i];
                row.tool = v.tool.unwrap_or(Cow::Borrowed("bash"));
                row.command = v.command.unwrap_or_default();
                row.command_bytes = v.command_bytes;
                row.cwd = v.cwd.unwrap_or_default();
                row.workspace = v.workspace;
                row.home = v.home;
                row.mode = v.mode.unwrap_or_default();
                row.outcome = outcome;
                row.source = source;
                row.reason = v.reason.unwrap_or_default();
                row.rules = v.rules;
                row.missing = v.missing;
                row.action = None;
                row.stored = None;
                row.review = None;
                row.command_grant = v.command_grant;
                row.not_run = None;
                row.background = Vec::new();
            }
            Some(_) => {}
            None => {
                let (session_id, call_id) = key.clone();
                self.index.insert(key, self.rows.len());
                self.rows.push(Draft {
                    time: v.time.unwrap_or_default(),
                    session_id,
                    call_id,
                    tool: v.tool.unwrap_or(Cow::Borrowed("bash")),
                    command: v.command.unwrap_or_default(),
                    command_bytes: v.command_bytes,
                    cwd: v.cwd.unwrap_or_default(),
                    workspace: v.workspace,
                    home: v.home,
                    mode: v.mode.unwrap_or_default(),
                    outcome,
                    source,
                    reason: v.reason.unwrap_or_default(),
                    rules: v.rules,
                    missing: v.missing,
                    action: None,
                    stored: None,
                    review: None,
                    command_grant: v.command_grant,
                    kernel: Vec::new(),
                    not_run: None,
                    background: Vec::new(),
                });
            }
        }
        true
    }

    /// A change outside any tool call, a row of its own: the rules file
    /// (who changed it: the card, `/allow`, the page, or an edit of the file
    /// noticed at the next call; what it added and removed) or a session's
    /// mode / the default preset (danger-full-access: no fence of ours).
    fn change(&mut self, key: (Cow<'a, str>, Cow<'a, str>), v: Record<'a>) -> bool {
        let source = match v.source.as_deref() {
            Some("card") => "human",
            Some("command") => "command",
            Some("file") => "file",
            Some("managed") => "managed",
            Some("host") | None => "host",
            Some(_) => return false,
        };
        let tool = if v.kind.as_deref() == Some("rules") { "rules" } else { "mode" };
        let (session_id, call_id) = key.clone();
        self.index.insert(key, self.rows.len());
        self.rows.push(Draft {
            time: v.time.unwrap_or_default(),
            session_id,
            call_id,
            tool: Cow::Borrowed(tool),
            command: v.command.unwrap_or_default(),
            command_bytes: None,
            cwd: Cow::Borrowed(""),
            workspace: v.workspace,
            home: v.home,
            mode: v.mode.unwrap_or_default(),
            outcome: "changed",
            source,
            reason: v.reason.unwrap_or_default(),
            rules: v.rules,
            missing: None,
            action: None,
            stored: v.stored,
            review: None,
            command_grant: None,
            kernel: Vec::new(),
            not_run: None,
            background: Vec::new(),
        });
        true
    }

    /// A human's answer to the card: the row becomes theirs.
    fn answer(&mut self, i: usize, v: Record<'a>) -> bool {
        let (action, outcome) = match v.action.as_deref().unwrap_or("") {
            "allow-once" => ("allow-once", "allowed"),
            "always-allow" => ("always-allow", "allowed"),
            "deny" => ("deny", "denied"),
            "cancelled" => ("cancelled", "cancelled"),
            "unavailable" => ("unavailable", "unavailable"),
            _ => return false,
        };
        let row = &mut self.rows[i];
        row.outcome = outcome;
        row.source = "human";
        row.action = Some(action);
        row.stored = v.stored;
        true
    }

    /// The auto-reviewer's verdict: an ALLOW decides the row.
    fn review(&mut self, i: usize, v: Record<'a>) -> bool {
        let value = |raw: Option<&RawValue>| raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok()).unwrap_or(Value::Null);
        let verdict = value(v.verdict);
        let row = &mut self.rows[i];
        let allow = verdict.as_str() == Some("ALLOW");
        row.review = Some(serde_json::json!({
            "verdict": verdict,
            "reason": v.reason.map(|r| Value::String(r.into_owned())).unwrap_or(Value::Null),
            "latencyMs": value(v.latency_ms),
            "route": value(v.route),
        }));
        if allow {
            row.outcome = "allowed";
            row.source = "auto-review";
        }
        true
    }

    /// Written after the call ran: what its fence denied.
    fn kernel(&mut self, i: usize, v: Record<'a>) -> bool {
        let Some(denied) = v.denied.and_then(|r| serde_json::from_str::<Vec<Value>>(r.get()).ok()) else { return false };
        let row = &mut self.rows[i];
        for d in denied {
            let whole = d.get("path").and_then(Value::as_str).is_some_and(|p| !p.is_empty());
            if whole && !row.kernel.contains(&d) {
                row.kernel.push(d);
            }
        }
        true
    }
}

impl<'a> Folding<'a> {
    /// Written after an allowed call did not run: why.
    fn not_run(&mut self, i: usize, v: Record<'a>) -> bool {
        let Some(why) = v.why.filter(|w| !w.is_empty()) else { return false };
        self.rows[i].not_run = Some(why);
        true
    }

    /// Written after a call that left processes running: which.
    fn background(&mut self, i: usize, v: Record<'a>) -> bool {
        let Some(pids) = v.pids.filter(|p| !p.is_empty()) else { return false };
        self.rows[i].background = pids;
        true
    }
}

/// `[]`, however spaced.
fn empty_list(raw: &RawValue) -> bool {
    raw.get().trim().strip_prefix('[').is_some_and(|rest| rest.trim_start().starts_with(']'))
}

/// A list as written, or none.
fn list(raw: Option<&RawValue>) -> Vec<Value> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok()).unwrap_or_default()
}

/// Fold ledger text into rows in order of first appearance.
pub fn fold(text: &str, opts: &FoldOptions) -> Folded {
    let (rows, skipped, hidden_baseline) = drafts(text, opts);
    let rows = rows
        .into_iter()
        .map(|d| LedgerRow {
            time: d.time.into_owned(),
            session_id: d.session_id.into_owned(),
            call_id: d.call_id.into_owned(),
            tool: d.tool.into_owned(),
            command: d.command.into_owned(),
            command_bytes: d.command_bytes,
            cwd: d.cwd.into_owned(),
            workspace: d.workspace.map(Cow::into_owned),
            home: d.home.map(Cow::into_owned),
            mode: d.mode.into_owned(),
            outcome: d.outcome.into(),
            source: d.source.into(),
            reason: d.reason.into_owned(),
            rules: list(d.rules),
            missing: list(d.missing),
            action: d.action.map(Into::into),
            stored: list(d.stored),
            review: d.review,
            command_grant: d.command_grant.map(Cow::into_owned),
            kernel: d.kernel,
            not_run: d.not_run.map(Cow::into_owned),
            background: d.background,
        })
        .collect();
    Folded { rows, skipped, hidden_baseline }
}

/// `fold` written as the JSON of `Folded`, with each row's lists passed
/// through as the ledger line wrote them (objects keep their key order)
/// instead of being read and written again.
pub fn fold_json(text: &str, opts: &FoldOptions) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Row<'r> {
        time: &'r str,
        session_id: &'r str,
        call_id: &'r str,
        tool: &'r str,
        command: &'r str,
        #[serde(skip_serializing_if = "Option::is_none")]
        command_bytes: Option<u64>,
        cwd: &'r str,
        #[serde(skip_serializing_if = "Option::is_none")]
        workspace: Option<&'r str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        home: Option<&'r str>,
        mode: &'r str,
        outcome: &'r str,
        source: &'r str,
        reason: &'r str,
        rules: &'r RawValue,
        missing: &'r RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        action: Option<&'r str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        stored: Option<&'r RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        review: Option<&'r Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        command_grant: Option<&'r str>,
        #[serde(skip_serializing_if = "<[Value]>::is_empty")]
        kernel: &'r [Value],
        #[serde(skip_serializing_if = "Option::is_none")]
        not_run: Option<&'r str>,
        #[serde(skip_serializing_if = "<[u32]>::is_empty")]
        background: &'r [u32],
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Out<'r> {
        rows: Vec<Row<'r>>,
        skipped: usize,
        hidden_baseline: usize,
    }
    let empty: &RawValue = serde_json::from_str("[]").expect("an empty list");
    let (drafts, skipped, hidden_baseline) = drafts(text, opts);
    let rows = drafts
        .iter()
        .map(|d| Row {
            time: &d.time,
            session_id: &d.session_id,
            call_id: &d.call_id,
            tool: &d.tool,
            command: &d.command,
            command_bytes: d.command_bytes,
            cwd: &d.cwd,
            workspace: d.workspace.as_deref(),
            home: d.home.as_deref(),
            mode: &d.mode,
            outcome: d.outcome,
            source: d.source,
            reason: &d.reason,
            rules: d.rules.unwrap_or(empty),
            missing: d.missing.unwrap_or(empty),
            action: d.action,
            // Left out when empty, as `LedgerRow` leaves out an empty `stored`.
            stored: d.stored.filter(|r| !empty_list(r)),
            review: d.review.as_ref(),
            command_grant: d.command_grant.as_deref(),
            kernel: &d.kernel,
            not_run: d.not_run.as_deref(),
            background: &d.background,
        })
        .collect();
    serde_json::to_string(&Out { rows, skipped, hidden_baseline }).expect("rows serialize")
}

/// Replace secrets in a command line before it is written anywhere:
/// PEM blocks, bearer/basic credentials, `password=`/`token=` style values,
/// secret-named environment assignments and well-known token shapes.
pub fn redact(text: &str) -> String {
    let mut out = redact_pem(text);
    out = redact_after(&out, &["bearer ", "Bearer ", "BEARER ", "basic ", "Basic "], false);
    out = redact_keyed(&out);
    redact_token_shapes(&out)
}

const HIDDEN: &str = "[REDACTED]";

fn redact_pem(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match after.find("-----END ").and_then(|e| after[e + 9..].find("-----").map(|f| e + 9 + f + 5)) {
            Some(end) => {
                out.push_str(HIDDEN);
                rest = &after[end..];
            }
            None => {
                out.push_str(HIDDEN);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Hide the word that follows any of `markers`.
fn redact_after(text: &str, markers: &[&str], _keep: bool) -> String {
    let mut out = text.to_string();
    for m in markers {
        let mut from = 0;
        while let Some(i) = out[from..].find(m) {
            let start = from + i + m.len();
            let end = out[start..].find(|c: char| c.is_whitespace() || c == '"' || c == '\'').map(|e| start + e).unwrap_or(out.len());
            if end > start && &out[start..end] != HIDDEN {
                out.replace_range(start..end, HIDDEN);
            }
            from = start + HIDDEN.len().min(out.len() - start);
        }
    }
    out
}

fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "api-key", "access_key", "private_key", "auth", "credential"]
        .iter()
        .any(|k| n.contains(k))
}

/// `NAME=value`, `--name=value`, `--name value`, `-p value` where the name
/// says secret.
fn redact_keyed(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut hide_next = false;
    for w in words {
        if hide_next && !w.is_empty() {
            out.push(HIDDEN.into());
            hide_next = false;
            continue;
        }
        if let Some((k, v)) = w.split_once('=') {
            let name = k.trim_start_matches('-');
            if secret_name(name) && !v.is_empty() {
                out.push(format!("{k}={HIDDEN}"));
                continue;
            }
            // user:password@host in URLs
        }
        if (w.starts_with("--") && secret_name(&w[2..])) || w == "-p" && out.last().is_some_and(|p| p.contains("mysql")) {
            hide_next = true;
        }
        out.push(redact_url_password(w));
    }
    out.join(" ")
}

fn redact_url_password(w: &str) -> String {
    if let Some(scheme) = w.find("://") {
        let rest = &w[scheme + 3..];
        if let Some(at) = rest.find('@') {
            if let Some(colon) = rest[..at].find(':') {
                return format!("{}{}:{HIDDEN}{}", &w[..scheme + 3], &rest[..colon], &rest[at..]);
            }
        }
    }
    w.to_string()
}

/// Token shapes that are secrets wherever they appear.
fn redact_token_shapes(text: &str) -> String {
    const PREFIXES: &[&str] = &["ghp_", "gho_", "ghu_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "sk-", "AKIA", "AIza", "npm_"];
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let is_token = PREFIXES.iter().any(|p| word.starts_with(p) && word.len() >= p.len() + 16);
        out.push_str(if is_token { HIDDEN } else { word });
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_commands_are_redacted_before_writing() {
        let r = redact("curl -H 'Authorization: Bearer abc.def' https://u:pw@x.io --token=t0k PASSWORD=hunter2 ls");
        assert!(!r.contains("abc.def") && !r.contains("pw@") && !r.contains("t0k") && !r.contains("hunter2"), "{r}");
        let r = redact("echo ghp_0123456789abcdefghij0123 && cat <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nEOF");
        assert!(!r.contains("ghp_0123") && !r.contains("AAAA"), "{r}");
        assert_eq!(redact("cat README.md"), "cat README.md");
    }
}
