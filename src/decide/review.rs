//! The optional auto-reviewer (the spec's 自动复核), its pure half: what the
//! session's own model is shown about a prompt, the fixed instructions it is
//! given, and how its answer is read.
//!
//! The reviewer sees only the analysed request and the user's own words —
//! never plugin-injected messages, tool output, repository content or the
//! agent's claims — and has two answers. Anything but a clear ALLOW is ASK.
//! The plugin makes the call; on ALLOW it binds the same one-shot grant the
//! card's "Allow once" binds, on everything else it shows the card.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::api::PathCapability;
use crate::policy::capability::Capability;
use crate::policy::mode::SessionEvent;

/// The fixed system prompt. It is data, kept in a text file of its own.
pub const SYSTEM_PROMPT: &str = include_str!("review-prompt.txt");

/// At most this many of the user's messages are sent, the latest last.
pub const MAX_USER_MESSAGES: usize = 3;
/// Each user message is cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 2_000;
/// The command line is cut to this many characters.
pub const MAX_COMMAND_CHARS: usize = 4_000;
/// The reason kept from an answer, for the card and the audit ledger.
pub const MAX_REASON_CHARS: usize = 300;
/// An answer is read no further than this: a verdict is one short line.
pub const MAX_ANSWER_CHARS: usize = 8_000;

const CUT: char = '…';

/// What the plugin knows about one prompt: the decision's analysis of the
/// call and the session's events.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewRequest {
    pub command: String,
    pub cwd: String,
    pub workspace: String,
    /// The decision's `missing`: exactly what "Allow once" would grant.
    pub missing: Vec<PathCapability>,
    /// The session's events; only the user's own `user/message`s are read.
    #[serde(default)]
    pub events: Vec<SessionEvent>,
}

/// One permission the call needs, as the reviewer reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedPermission {
    pub operation: Capability,
    pub path: String,
}

/// Everything the reviewer is shown, as the spec's example.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewInput {
    pub command: String,
    pub cwd: String,
    pub workspace: String,
    pub requested_permissions: Vec<RequestedPermission>,
    pub user_messages: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "ALLOW")]
    Allow,
    #[serde(rename = "ASK")]
    Ask,
}

/// The reviewer's answer as read: a verdict and a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewAnswer {
    pub verdict: Verdict,
    pub reason: String,
}

impl ReviewAnswer {
    pub fn ask(reason: impl Into<String>) -> ReviewAnswer {
        ReviewAnswer { verdict: Verdict::Ask, reason: reason.into() }
    }
}

/// The reviewer's input, or `None` when there is nothing it could allow: no
/// permission the one-shot grant would name, or no word from the user.
pub fn review_input(request: &ReviewRequest) -> Option<ReviewInput> {
    let mut requested: Vec<RequestedPermission> = Vec::new();
    for m in &request.missing {
        let p = RequestedPermission { operation: m.capability, path: m.path.clone() };
        if !requested.contains(&p) {
            requested.push(p);
        }
    }
    let user_messages = user_words(&request.events);
    if requested.is_empty() || user_messages.is_empty() {
        return None;
    }
    Some(ReviewInput {
        command: cut(&request.command, MAX_COMMAND_CHARS),
        cwd: request.cwd.clone(),
        workspace: request.workspace.clone(),
        requested_permissions: requested,
        user_messages,
    })
}

/// The text of the last [`MAX_USER_MESSAGES`] messages the user typed, oldest
/// first. A `user/message` counts only when its source is the user: plugins
/// inject user-role messages too (system-prompt snapshots, notices), and tool
/// results ride user-role messages with a `tool` source.
pub fn user_words(events: &[SessionEvent]) -> Vec<String> {
    let mut words: Vec<String> = events
        .iter()
        .filter(|e| e.kind == "user/message" && from_the_user(&e.data))
        .map(|e| cut(&message_text(&e.data), MAX_MESSAGE_CHARS))
        .collect();
    words.drain(..words.len().saturating_sub(MAX_USER_MESSAGES));
    words
}

fn from_the_user(message: &Value) -> bool {
    message.pointer("/source/kind").and_then(Value::as_str) == Some("user")
}

/// The message's text blocks (images and any other block carry no words).
fn message_text(message: &Value) -> String {
    let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Read the reviewer's answer. ALLOW only when the text holds a JSON object
/// whose `verdict` is exactly `"ALLOW"` and no object that says otherwise;
/// prose, a bare word, an unknown or conflicting verdict, or nothing at all
/// is ASK.
pub fn parse_answer(text: &str) -> ReviewAnswer {
    let text = text.trim();
    if text.is_empty() {
        return ReviewAnswer::ask("the reviewer gave no answer");
    }
    let text = match text.char_indices().nth(MAX_ANSWER_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    };
    let objects = json_objects(text);
    let verdicts: Vec<&Map<String, Value>> = objects.iter().filter(|o| o.contains_key("verdict")).collect();
    let Some(first) = verdicts.first() else {
        return ReviewAnswer::ask(if objects.is_empty() {
            "the reviewer's answer is not JSON"
        } else {
            "the reviewer's answer has no verdict"
        });
    };
    let said = |o: &Map<String, Value>| o.get("verdict").and_then(Value::as_str).map(str::to_string);
    let reason_of = |o: &Map<String, Value>| {
        let r = o.get("reason").and_then(Value::as_str).map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "));
        cut(r.as_deref().filter(|r| !r.is_empty()).unwrap_or("(no reason given)"), MAX_REASON_CHARS)
    };
    let all = |v: &str| verdicts.iter().all(|o| said(o).as_deref() == Some(v));
    if all("ALLOW") {
        return ReviewAnswer { verdict: Verdict::Allow, reason: reason_of(first) };
    }
    if all("ASK") {
        return ReviewAnswer::ask(reason_of(first));
    }
    match verdicts.iter().map(|o| said(o)).find(|v| !matches!(v.as_deref(), Some("ALLOW" | "ASK"))) {
        Some(Some(v)) => ReviewAnswer::ask(cut(&format!("the reviewer answered an unknown verdict {v:?}"), MAX_REASON_CHARS)),
        Some(None) => ReviewAnswer::ask("the reviewer's verdict is not a string"),
        None => ReviewAnswer::ask("the reviewer's answer holds both ALLOW and ASK"),
    }
}

/// Every top-level JSON object in the text, wherever it sits: alone, in a
/// ``` fence, or inside prose. An object nested in another is part of it.
fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) => {
                out.push(object);
                at = start + values.byte_offset();
            }
            _ => at = start + 1,
        }
    }
    out
}

/// At most `max` characters, the last of them `…` when something was cut.
fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some(_) => {
            let keep: String = text.chars().take(max.saturating_sub(1)).collect();
            format!("{keep}{CUT}")
        }
    }
}
