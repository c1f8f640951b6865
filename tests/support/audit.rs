//! The file-operand audit (`tests/audit/file_operands.json`), walked the
//! same way natively (`tests/audit.rs`) and in headless Chrome
//! (`web-tests/web.rs`). Each entry is one option or operand that names a
//! file a program creates, writes, deletes or executes, a command using it
//! on a path outside the workspace (linux fixture of `core.json`, no fence),
//! and what the core must report for it; a row whose table entry loses the
//! operand fails here.
#![allow(dead_code)]

use dsh_allow::api::DecideRequest;
use dsh_allow::decide::decide;
use dsh_allow::host::FixtureHost;
use serde_json::{json, Value};

pub const AUDIT: &str = include_str!("../audit/file_operands.json");
const CORE: &str = include_str!("../vectors/core.json");

pub struct Entry {
    pub programs: Vec<String>,
    pub what: String,
    pub command: String,
    pub expect: Vec<Value>,
}

/// Every audited entry, with the programs of its row.
pub fn entries() -> Vec<Entry> {
    let doc: Value = serde_json::from_str(AUDIT).expect("file_operands.json is JSON");
    let mut out = Vec::new();
    for row in doc["rows"].as_array().expect("rows") {
        let programs: Vec<String> = row["programs"].as_array().expect("programs").iter().map(|p| p.as_str().unwrap().to_string()).collect();
        for f in row.get("files").and_then(Value::as_array).into_iter().flatten() {
            out.push(Entry {
                programs: programs.clone(),
                what: f["what"].as_str().expect("what").to_string(),
                command: f["command"].as_str().expect("command").to_string(),
                expect: f["expect"].as_array().expect("expect").clone(),
            });
        }
    }
    out
}

/// The programs the audit covers, and those it lists as naming no file
/// they create, write, delete or execute (with why).
pub fn audited_programs() -> Vec<(String, bool)> {
    let doc: Value = serde_json::from_str(AUDIT).unwrap();
    let mut out = Vec::new();
    for row in doc["rows"].as_array().unwrap() {
        let has_files = row.get("files").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
        let has_reason = row.get("none").and_then(Value::as_str).is_some_and(|r| !r.is_empty());
        for p in row["programs"].as_array().unwrap() {
            out.push((p.as_str().unwrap().to_string(), has_files || has_reason));
        }
    }
    out
}

/// The linux fixture and request defaults of `core.json`.
pub struct Fixture {
    defaults: Value,
    host: FixtureHost,
}

pub fn fixture() -> Fixture {
    let doc: Value = serde_json::from_str(CORE).expect("core.json is JSON");
    let host: FixtureHost = serde_json::from_value(doc["fixtures"]["linux"].clone()).expect("fixture");
    Fixture { defaults: doc["defaults"]["linux"].clone(), host }
}

/// What is wrong with the core's answer for `entry` (empty when right).
pub fn judge(entry: &Entry, fixture: &Fixture) -> Vec<String> {
    let host = &fixture.host;
    let mut request = fixture.defaults.clone();
    request["command"] = json!(entry.command);
    let request: DecideRequest = serde_json::from_value(request).expect("request");
    let d = serde_json::to_value(decide(&request, host)).unwrap();
    let mut wrong = Vec::new();
    let pairs = |key: &str, path_key: &str| -> Vec<(String, String)> {
        d[key].as_array().into_iter().flatten().map(|e| (e["capability"].as_str().unwrap_or("").to_string(), e[path_key].as_str().unwrap_or("").to_string())).collect()
    };
    let effects = pairs("effects", "path");
    let missing = pairs("missing", "path");
    let opaque = d["unknown"].as_array().into_iter().flatten().any(|u| u["capability"].is_null());
    // A tool's own home granted for the call (rustup, go's module cache)
    // is allowed by design: the grant names the folder.
    let call_granted = |cap: &str, path: &str| {
        d["fenceGrants"].as_array().into_iter().flatten().any(|g| g["path"] == path && g["access"][cap] == true)
    };
    let all_call = !entry.expect.is_empty() && entry.expect.iter().all(|e| e.as_array().is_some_and(|a| a.len() == 3 && a[2] == "call"));
    if d["decision"] == "allow" && !all_call {
        wrong.push(format!("allowed: {}", d["reason"]));
    }
    for e in &entry.expect {
        let e: Vec<&str> = e.as_array().expect("an expectation is a list").iter().map(|v| v.as_str().unwrap()).collect();
        let ok = match e.as_slice() {
            ["opaque"] => opaque,
            ["refuse"] => d["decision"] == "refuse",
            [cap, path] => effects.contains(&(cap.to_string(), path.to_string())),
            [cap, path, "computed"] => missing.contains(&(cap.to_string(), path.to_string())),
            [cap, path, "call"] => call_granted(cap, path),
            other => panic!("unknown expectation {other:?}"),
        };
        if !ok {
            wrong.push(format!("no {e:?} in effects {effects:?}, missing {missing:?}, opaque {opaque}"));
        }
    }
    wrong
}

/// Every entry that fails, as `program: what: command: why`.
pub fn failures() -> Vec<String> {
    let mut out = Vec::new();
    let fixture = fixture();
    for entry in entries() {
        for w in judge(&entry, &fixture) {
            out.push(format!("{}: {}: `{}`: {w}", entry.programs[0], entry.what, entry.command));
        }
    }
    out
}
