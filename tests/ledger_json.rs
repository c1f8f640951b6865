//! The ledger fold written as JSON (`fold_json`, what the Approvals tab and
//! the plugin's tail read) says what the typed fold says, line kind by line
//! kind, however the lines were spelled; and both fold this ledger exactly
//! as the fold did before it borrowed from the text
//! (tests/vectors/ledger_fold.json was written by that fold).

use dsh_allow::ledger::{fold, fold_json, FoldOptions};
use serde_json::{json, Value};

fn line(v: Value) -> String {
    format!("{v}\n")
}

fn decision(call: &str, decision: &str, source: &str) -> Value {
    json!({"dshAllow": 1, "kind": "decision", "time": format!("t-{call}"), "sessionId": "s1", "callId": call, "tool": "bash",
        "command": format!("rm -rf \"build {call}\" \u{e9}\\n"), "cwd": "/w", "mode": "workspace-write", "decision": decision,
        "source": source, "reason": "delete is not granted", "rules": [{"path": "/w/b", "recursive": true, "access": {"read": true, "delete": true}}],
        "missing": [{"path": "/w/build", "capability": "delete"}]})
}

/// Every kind of line, the odd spellings included.
fn ledger() -> String {
    let mut text = String::new();
    for i in 0..40 {
        let call = format!("c{i}");
        let (d, s) = [("prompt", "policy"), ("allow", "rule"), ("allow", "baseline"), ("refuse", "policy"), ("allow", "fence")][i % 5];
        text += &line(decision(&call, d, s));
        if i % 5 == 0 {
            let stored = if i % 10 == 0 { json!([{"path": "/w/build", "access": {"delete": true}}]) } else { json!([]) };
            let action = ["always-allow", "deny", "allow-once"][i % 3];
            text += &line(json!({"dshAllow": 1, "kind": "answer", "sessionId": "s1", "callId": call, "action": action, "stored": stored}));
        }
    }
    // Asked again after an answer, reviewed, denied by the kernel (twice the same).
    text += &line(decision("c5", "prompt", "policy"));
    text += &line(json!({"dshAllow": 1, "kind": "review", "sessionId": "s1", "callId": "c5", "verdict": "ALLOW", "reason": "asked", "latencyMs": 12.5, "route": {"provider": "p"}}));
    text += &line(json!({"dshAllow": 1, "kind": "review", "sessionId": "s1", "callId": "c10", "verdict": null}));
    let denied = json!([{"path": "/h/.ssh/k", "capability": "read"}, {"path": ""}, {"path": "/h/.ssh/k", "capability": "read"}]);
    text += &line(json!({"dshAllow": 1, "kind": "kernel", "sessionId": "s1", "callId": "c2", "denied": denied}));
    // Spelled by hand: spaces inside lists, an empty stored list with room in
    // it, null lists, escapes in the keys' values, fields in another order.
    text += "{ \"callId\" : \"c\\u0031\" , \"sessionId\":\"s1\",\"dshAllow\":1,\"kind\":\"answer\",\"action\":\"allow-once\",\"stored\" : [ ] }\n";
    text += "{\"dshAllow\":1,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"n1\",\"decision\":\"allow\",\"rules\":null,\"missing\":[ ]}\n";
    text += "{\"dshAllow\":1,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"n2\",\"decision\":\"prompt\",\"rules\":[[]],\"missing\":[{\"b\":1,\"a\":[2, 3]}]}\n";
    // Not ours, or not whole: skipped.
    text += "{\"dshAllow\":1,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"x1\",\"decision\":\"allow\",\"rules\":{\"not\":\"a list\"}}\n";
    text += "{\"dshAllow\":1,\"kind\":\"kernel\",\"sessionId\":\"s1\",\"callId\":\"c3\",\"denied\":\"not a list\"}\n";
    text += "{\"dshAllow\":1,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"x2\",\"decision\":\"allow\",\"time\":5}\n";
    text += "{\"dshAllow\":2,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"x3\",\"decision\":\"allow\"}\n";
    text += "{\"dshAllow\":1,\"kind\":\"decision\",\"sessionId\":\"s1\",\"callId\":\"x4\",\"decision\":\"maybe\"}\n";
    text += &line(json!({"dshAllow": 1, "kind": "decision", "sessionId": "s2", "callId": "other", "decision": "allow"}));
    text += "not json\n{\"dshAllow\":1,\"kind\":\"decis";
    text
}

#[test]
fn the_json_fold_says_what_the_typed_fold_says() {
    let text = ledger();
    for session_id in [Some("s1".to_string()), None] {
        for baseline in [true, false] {
            for limit in [None, Some(7)] {
                let opts = FoldOptions { session_id: session_id.clone(), limit, baseline };
                let typed = serde_json::to_value(fold(&text, &opts)).unwrap();
                let written: Value = serde_json::from_str(&fold_json(&text, &opts)).unwrap();
                assert_eq!(written, typed, "session {session_id:?}, baseline {baseline}, limit {limit:?}");
            }
        }
    }
}

#[test]
fn the_json_fold_leaves_out_what_the_typed_rows_leave_out() {
    let text = ledger();
    let written: Value = serde_json::from_str(&fold_json(&text, &FoldOptions { session_id: Some("s1".into()), limit: None, baseline: true })).unwrap();
    let rows = written["rows"].as_array().unwrap();
    let row = |call: &str| rows.iter().find(|r| r["callId"] == call).unwrap_or_else(|| panic!("no row {call}"));
    // An empty stored list, no review, no kernel denial: no such key.
    assert!(row("c1").get("stored").is_none(), "{}", row("c1"));
    assert!(row("c1").get("review").is_none() && row("c1").get("kernel").is_none(), "{}", row("c1"));
    assert_eq!(row("c0")["stored"], json!([{"path": "/w/build", "access": {"delete": true}}]));
    // A list with an empty list in it is not empty.
    assert_eq!(row("n2")["rules"], json!([[]]));
    assert_eq!(row("n1")["rules"], json!([]));
    assert_eq!(row("c2")["kernel"], json!([{"path": "/h/.ssh/k", "capability": "read"}]));
}

#[test]
fn the_fold_folds_as_it_did_before_it_borrowed_from_the_text() {
    let text = ledger();
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/ledger_fold.json")).unwrap()).unwrap();
    let cases = [
        ("s1 baseline", FoldOptions { session_id: Some("s1".into()), limit: None, baseline: true }),
        ("all baseline", FoldOptions { session_id: None, limit: None, baseline: true }),
        ("s1 limit 7 no baseline", FoldOptions { session_id: Some("s1".into()), limit: Some(7), baseline: false }),
    ];
    for (name, opts) in cases {
        assert_eq!(serde_json::to_value(fold(&text, &opts)).unwrap(), golden[name], "{name}");
    }
}
