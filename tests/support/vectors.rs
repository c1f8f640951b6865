//! The shared vector checker: the same JSON cases, judged the same way,
//! natively (`tests/vectors.rs`) and in headless Chrome (`web-tests/web.rs`).

use std::collections::BTreeMap;

use dsh_allow::api::{DecideRequest, Decision};
use dsh_allow::host::FixtureHost;
use serde_json::{json, Value};

pub const CORE: &str = include_str!("../vectors/core.json");
pub const ANSWERS: &str = include_str!("../vectors/answers.json");
/// The managed policy's precedence cases (the fixtures and defaults are core.json's).
pub const MANAGED: &str = include_str!("../vectors/managed.json");

pub struct Case {
    pub name: String,
    pub request: DecideRequest,
    pub fixture: FixtureHost,
    pub expect: Value,
}

pub fn cases() -> Vec<Case> {
    let doc: Value = serde_json::from_str(CORE).expect("core.json is JSON");
    let managed: Value = serde_json::from_str(MANAGED).expect("managed.json is JSON");
    let mut out = Vec::new();
    for case in doc["cases"].as_array().expect("cases").iter().chain(managed["cases"].as_array().expect("managed cases")) {
        let fixture_name = case.get("fixture").and_then(Value::as_str).unwrap_or("linux");
        let fixture: FixtureHost = serde_json::from_value(doc["fixtures"][fixture_name].clone()).expect("fixture");
        let mut request = doc["defaults"][fixture_name].clone();
        for key in ["command", "cwd", "mode", "rules", "grants", "fence", "commands", "persistence", "sockets", "fenceLevel", "managed"] {
            if let Some(v) = case.get(key) {
                request[key] = v.clone();
            }
        }
        let request: DecideRequest = serde_json::from_value(request).expect("request");
        out.push(Case { name: case["name"].as_str().unwrap().to_string(), request, fixture, expect: case.clone() });
    }
    out
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
        .collect()
}

/// What is wrong with `d` for this case (empty when it passes).
pub fn judge(case: &Case, d: &Decision) -> Vec<String> {
    let mut wrong = Vec::new();
    let ex = &case.expect;
    let dj = serde_json::to_value(d).unwrap();
    if let Some(want) = ex.get("decision").and_then(Value::as_str) {
        if dj["decision"] != want {
            wrong.push(format!("decision {} (want {want}): {}", dj["decision"], d.reason));
        }
    }
    if let Some(want) = ex.get("fileEffects") {
        let mut got: Vec<(String, String)> = d
            .effects
            .iter()
            .filter(|e| e.capability.as_str() != "execute")
            .map(|e| (e.capability.as_str().to_string(), e.path.clone()))
            .collect();
        let mut want = pairs(want);
        got.sort();
        want.sort();
        if got != want {
            wrong.push(format!("file effects {got:?}, want {want:?}"));
        }
    }
    if let Some(want) = ex.get("executes") {
        let got: Vec<String> = d.effects.iter().filter(|e| e.capability.as_str() == "execute").map(|e| e.path.clone()).collect();
        let want: Vec<String> = want.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        if got != want {
            wrong.push(format!("executes {got:?}, want {want:?}"));
        }
    }
    if let Some(want) = ex.get("unknown") {
        let got: Vec<Value> = d.unknown.iter().filter(|u| u.capability.is_some()).map(|u| json!([u.capability.unwrap().as_str(), u.bounded])).collect();
        if &Value::Array(got.clone()) != want {
            wrong.push(format!("unknown {got:?}, want {want}"));
        }
    }
    for key in ["missing", "proposals"] {
        if let Some(want) = ex.get(key) {
            if &dj[key] != want {
                wrong.push(format!("{key} {}, want {want}", dj[key]));
            }
        }
    }
    if let Some(want) = ex.get("reasonContains").and_then(Value::as_str) {
        if !d.reason.contains(want) {
            wrong.push(format!("reason `{}` does not say `{want}`", d.reason));
        }
    }
    if let Some(want) = ex.get("fenceGrants") {
        // The paths whose delete the call's fence carries beyond the policy.
        let got: Vec<Value> = d.fence_grants.iter().map(|r| json!(r.path)).collect();
        if &Value::Array(got.clone()) != want {
            wrong.push(format!("fence grants {got:?}, want {want}"));
        }
    }
    if let Some(want) = ex.get("folders") {
        // The folders the line makes that the call's profile carries.
        if &json!(d.folders) != want {
            wrong.push(format!("folders {:?}, want {want}", d.folders));
        }
    }
    if let Some(want) = ex.get("kept") {
        if &json!(d.kept) != want {
            wrong.push(format!("kept {:?}, want {want}", d.kept));
        }
    }
    if let Some(want) = ex.get("widenedContains").and_then(Value::as_str) {
        if !d.widened.iter().any(|w| w.contains(want)) {
            wrong.push(format!("widened {:?} does not say `{want}`", d.widened));
        }
    }
    if ex.get("widened") == Some(&json!([])) && !d.widened.is_empty() {
        wrong.push(format!("widened {:?}, want none", d.widened));
    }
    if let Some(want) = ex.get("tiers") {
        for t in want.as_array().unwrap() {
            let found = d.effects.iter().any(|e| {
                e.capability.as_str() == t[0] && e.path == t[1] && serde_json::to_value(e.tier).unwrap() == t[2]
            });
            if !found {
                wrong.push(format!("no effect {t} in {:?}", d.effects));
            }
        }
    }
    if let Some(want) = ex.get("managedDecided").and_then(Value::as_bool) {
        if d.managed.as_ref().is_some_and(|m| m.decided) != want {
            wrong.push(format!("managed decided {:?}, want {want}: {}", d.managed, d.reason));
        }
    }
    if let Some(want) = ex.get("managedVerdict") {
        if &dj["managed"] != want {
            wrong.push(format!("managed {}, want {want}", dj["managed"]));
        }
    }
    if let Some(want) = ex.get("answers") {
        if &json!(d.answers()) != want {
            wrong.push(format!("answers {:?}, want {want}", d.answers()));
        }
    }
    if let Some(want) = ex.get("ruleIds") {
        for id in want.as_array().unwrap() {
            if !d.effects.iter().any(|e| e.rule_id.as_deref() == id.as_str()) {
                wrong.push(format!("rule {id} did not decide"));
            }
        }
    }
    wrong
}

/// Every case's full answer, keyed by name, as compact JSON.
pub fn answers(decide: impl Fn(&Case) -> Decision) -> BTreeMap<String, Value> {
    cases().iter().map(|c| (c.name.clone(), serde_json::to_value(decide(c)).unwrap())).collect()
}
