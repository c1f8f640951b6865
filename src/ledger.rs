//! The audit ledger: the record shape the plugin appends (one NDJSON line per
//! event), secret redaction before writing, and folding many lines into one
//! row per tool call for the Approvals view — the same code in Node and in
//! the browser.

use serde::{Deserialize, Serialize};
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
    pub cwd: String,
    pub mode: String,
    /// `allowed`, `refused`, `denied`, `asked` (no answer yet), `cancelled`, `unavailable`.
    pub outcome: String,
    /// `rule`, `baseline`, `fence` (the kernel fence bounded what the text
    /// could not show), `auto-review`, `human`, `policy`.
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

/// One ledger line, read with only the fields the fold uses; the lists are
/// passed through as they were written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    #[serde(default)]
    dsh_allow: Option<u64>,
    #[serde(default, borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    session_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    call_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    rules: Option<Vec<Value>>,
    #[serde(default)]
    missing: Option<Vec<Value>>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    stored: Option<Vec<Value>>,
    #[serde(default)]
    verdict: Option<Value>,
    #[serde(default)]
    latency_ms: Option<Value>,
    #[serde(default)]
    route: Option<Value>,
    #[serde(default)]
    command_grant: Option<String>,
    #[serde(default)]
    denied: Option<Vec<Value>>,
}

/// Fold ledger text into rows in order of first appearance.
pub fn fold(text: &str, opts: &FoldOptions) -> Folded {
    let mut rows: Vec<LedgerRow> = Vec::new();
    // (session, call) → row index; a B-tree needs no random hash keys (wasm).
    let mut index: std::collections::BTreeMap<(String, String), usize> = Default::default();
    let mut skipped = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // Lines of other sessions are skipped before they are parsed.
        if let Some(s) = &opts.session_id {
            if !line.contains(s.as_str()) {
                continue;
            }
        }
        let Ok(v) = serde_json::from_str::<Record>(line) else {
            skipped += 1;
            continue;
        };
        if v.dsh_allow != Some(LEDGER_VERSION) {
            skipped += 1;
            continue;
        }
        let (Some(session), Some(call)) = (v.session_id.as_deref(), v.call_id.as_deref()) else {
            skipped += 1;
            continue;
        };
        if session.is_empty() || call.is_empty() {
            skipped += 1;
            continue;
        }
        if opts.session_id.as_deref().is_some_and(|s| s != session) {
            continue;
        }
        let key = (session.to_string(), call.to_string());
        let at = index.get(&key).copied();
        match v.kind.as_deref() {
            Some("decision") => {
                let outcome = match v.decision.as_deref() {
                    Some("allow") => "allowed",
                    Some("refuse") => "refused",
                    Some("prompt") => "asked",
                    _ => {
                        skipped += 1;
                        continue;
                    }
                };
                let source = v.source.as_deref().unwrap_or("policy");
                if !matches!(source, "rule" | "baseline" | "fence" | "policy") {
                    skipped += 1;
                    continue;
                }
                let row = LedgerRow {
                    time: v.time.unwrap_or_default(),
                    session_id: key.0.clone(),
                    call_id: key.1.clone(),
                    tool: v.tool.unwrap_or_else(|| "bash".into()),
                    command: v.command.unwrap_or_default(),
                    cwd: v.cwd.unwrap_or_default(),
                    mode: v.mode.unwrap_or_default(),
                    outcome: outcome.into(),
                    source: source.into(),
                    reason: v.reason.unwrap_or_default(),
                    rules: v.rules.unwrap_or_default(),
                    missing: v.missing.unwrap_or_default(),
                    action: None,
                    stored: Vec::new(),
                    review: None,
                    command_grant: v.command_grant,
                    kernel: Vec::new(),
                };
                match at {
                    // A call asked again (after a wait) keeps its first place.
                    Some(i) if rows[i].outcome == "asked" || rows[i].action.is_none() => {
                        let keep_time = std::mem::take(&mut rows[i].time);
                        let kernel = std::mem::take(&mut rows[i].kernel);
                        rows[i] = LedgerRow { time: keep_time, kernel, ..row };
                    }
                    Some(_) => {}
                    None => {
                        index.insert(key, rows.len());
                        rows.push(row);
                    }
                }
            }
            Some("answer") => {
                let Some(i) = at else {
                    skipped += 1;
                    continue;
                };
                let action = v.action.as_deref().unwrap_or("");
                let outcome = match action {
                    "allow-once" | "always-allow" => "allowed",
                    "deny" => "denied",
                    "cancelled" => "cancelled",
                    "unavailable" => "unavailable",
                    _ => {
                        skipped += 1;
                        continue;
                    }
                };
                let row = &mut rows[i];
                row.outcome = outcome.into();
                row.source = "human".into();
                row.action = Some(action.into());
                row.stored = v.stored.unwrap_or_default();
            }
            Some("review") => {
                let Some(i) = at else {
                    skipped += 1;
                    continue;
                };
                let row = &mut rows[i];
                let allow = v.verdict.as_ref().and_then(Value::as_str) == Some("ALLOW");
                row.review = Some(serde_json::json!({
                    "verdict": v.verdict.unwrap_or(Value::Null),
                    "reason": v.reason.map(Value::String).unwrap_or(Value::Null),
                    "latencyMs": v.latency_ms.unwrap_or(Value::Null),
                    "route": v.route.unwrap_or(Value::Null),
                }));
                if allow {
                    row.outcome = "allowed".into();
                    row.source = "auto-review".into();
                }
            }
            Some("kernel") => {
                // Written after the call ran: what its fence denied.
                let (Some(i), Some(denied)) = (at, v.denied) else {
                    skipped += 1;
                    continue;
                };
                let row = &mut rows[i];
                for d in denied {
                    let whole = d.get("path").and_then(Value::as_str).is_some_and(|p| !p.is_empty());
                    if whole && !row.kernel.contains(&d) {
                        row.kernel.push(d);
                    }
                }
            }
            _ => skipped += 1,
        }
    }
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
    Folded { rows, skipped, hidden_baseline }
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
