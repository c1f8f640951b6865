//! wit/dsh-allow.wit is the one contract: every record's fields must be
//! exactly the JSON fields the serde types produce, and every exported
//! function must be exactly the wasm-bindgen exports.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use dsh_allow::api::*;
use dsh_allow::policy::capability::{Access, Capability};
use dsh_allow::ledger::{FoldOptions, Folded, LedgerRow};
use dsh_allow::fence::sbpl::Sbpl;
use dsh_allow::fence::{Enforce, FenceGrant, FencePlan, ProfileRequest};
use dsh_allow::policy::rules::{CommandGrant, Rule, RulesLoad, Shape};
use dsh_allow::decide::review::{RequestedPermission, ReviewAnswer, ReviewInput, ReviewRequest};
use serde_json::{json, Value};
use wit_parser::{Resolve, TypeDefKind};

fn camel(kebab: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in kebab.trim_start_matches('%').chars() {
        if c == '-' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn wit() -> Resolve {
    let mut r = Resolve::default();
    r.push_path(concat!(env!("CARGO_MANIFEST_DIR"), "/wit/dsh-allow.wit")).expect("the WIT parses");
    r
}

fn wit_fields(r: &Resolve, record: &str) -> BTreeSet<String> {
    let (_, ty) = r
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(record))
        .unwrap_or_else(|| panic!("WIT has no record {record}"));
    match &ty.kind {
        TypeDefKind::Record(rec) => rec.fields.iter().map(|f| camel(&f.name)).collect(),
        other => panic!("{record} is not a record: {other:?}"),
    }
}

fn keys(v: Value) -> BTreeSet<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

fn rule() -> Rule {
    Rule { id: "r".into(), path: "/w".into(), recursive: true, access: Access::all(), hits: 1, created_at: "t".into() }
}

fn grant() -> CommandGrant {
    CommandGrant {
        id: "c".into(),
        name: "n".into(),
        command: "gh".into(),
        roots: vec!["$HOME".into()],
        shape: Shape::Strict,
        access: Some(Access::all()),
        allow_cd_prefix: true,
    }
}

fn managed() -> Managed {
    Managed {
        files: vec!["/etc/dsh-allow/managed.json".into()],
        deny: vec![rule()],
        ask: vec![rule()],
        always_allow: false,
        auto_review: false,
        modes: Some(vec![Mode::ReadOnly]),
        require_fence: Some(Enforce::Full),
        audit: dsh_allow::policy::managed::Audit::Required,
        errors: vec!["e".into()],
    }
}

/// Every field set (options Some), so serde emits every key it knows.
fn samples() -> Vec<(&'static str, Value)> {
    let req = DecideRequest {
        command: "c".into(),
        cwd: "/w".into(),
        workspace: "/w".into(),
        home: "/h".into(),
        harness_home: "/h/.dsh".into(),
        platform: Platform::Linux,
        mode: Mode::WorkspaceWrite,
        rules: vec![rule()],
        grants: vec![rule()],
        commands: vec![grant()],
        protected_files: vec!["/h/.dsh/dsh-allow.json".into()],
        fence: vec![Capability::Read],
        persistence: dsh_allow::api::Persistence::Shut,
        sockets: dsh_allow::api::Sockets { docker: Some("/run/docker.sock".into()), ssh_agent: Some("/tmp/a.sock".into()) },
        fence_level: Some(Enforce::Full),
        managed: Some(managed()),
    };
    let effect = EffectVerdict {
        path: "/w".into(),
        capability: Capability::Read,
        granted: true,
        refused: false,
        tier: Tier::Rule,
        rule_id: Some("r".into()),
    };
    let unknown = Unknown { capability: Some(Capability::Delete), reason: "r".into(), bounded: false };
    let proposal = Proposal { path: "/w".into(), recursive: true, access: Access::all(), command: Some("git".into()) };
    let pc = PathCapability { path: "/w".into(), capability: Capability::Read };
    let decision = Decision {
        decision: Outcome::Prompt,
        reason: "r".into(),
        effects: vec![effect.clone()],
        missing: vec![pc.clone()],
        unknown: vec![unknown.clone()],
        proposals: vec![proposal.clone()],
        command_grant: Some(GrantMatch { id: "c".into(), name: "n".into(), rules: vec![rule()] }),
        fence_grants: vec![rule()],
        folders: vec!["/w/new".into()],
        widened: vec!["w".into()],
        kept: vec!["/w/a.rs".into()],
        sockets: vec![SocketNeed { daemon: "docker".into(), path: Some("/run/docker.sock".into()), granted: true, sentence: "s".into() }],
        managed: Some(ManagedVerdict { decided: true, always_allow: false, auto_review: false, files: vec!["/etc/dsh-allow/managed.json".into()] }),
    };
    let load = RulesLoad { rules: vec![rule()], commands: vec![grant()], error: Some("e".into()), warnings: vec![] };
    let preq = ProfileRequest {
        workspace: "/w".into(),
        home: "/h".into(),
        harness_home: "/h/.dsh".into(),
        platform: Platform::Linux,
        mode: Mode::WorkspaceWrite,
        rules: vec![],
        grants: vec![],
        protected_files: vec![],
        enforce: Enforce::Full,
        persistence: dsh_allow::api::Persistence::Shut,
        host_pids: vec![1],
        host_ports: vec![3080],
        folders: vec!["/w/new".into()],
        kept: vec!["/w/a.rs".into()],
        managed: Some(managed()),
    };
    let fg = FenceGrant { path: "/w".into(), aliases: vec!["/x".into()], access: vec![Capability::Read], except: vec!["/w/x".into()] };
    let plan = FencePlan { enforce: Enforce::Full, handled: vec![], grants: vec![fg.clone()], notes: vec![] };
    let sbpl = Sbpl { text: "t".into(), params: vec![] };
    let row = LedgerRow {
        time: "t".into(),
        session_id: "s".into(),
        call_id: "c".into(),
        tool: "bash".into(),
        command: "c".into(),
        command_bytes: Some(70_000),
        cwd: "/w".into(),
        workspace: Some("/w".into()),
        home: Some("/h".into()),
        mode: "m".into(),
        outcome: "asked".into(),
        source: "human".into(),
        reason: "r".into(),
        rules: vec![],
        missing: vec![],
        action: Some("deny".into()),
        stored: vec![json!(1)],
        review: Some(json!({})),
        command_grant: Some("g".into()),
        kernel: vec![json!({ "path": "/h/.ssh/id_ed25519", "capability": "read" })],
        not_run: Some("the sandbox runner failed".into()),
        background: vec![4242],
    };
    let folded = Folded { rows: vec![row.clone()], skipped: 0, hidden_baseline: 0 };
    let fold = FoldOptions { session_id: Some("s".into()), limit: Some(1), baseline: true };
    let s = |v: &dyn erased::Ser| v.json();
    vec![
        ("decide-request", s(&req)),
        ("decision", s(&decision)),
        ("grant-match", s(decision.command_grant.as_ref().unwrap())),
        ("effect-verdict", s(&effect)),
        ("unknown", s(&unknown)),
        ("proposal", s(&proposal)),
        ("path-capability", s(&pc)),
        ("rule", s(&rule())),
        ("command-grant", s(&grant())),
        ("access", s(&Access::all())),
        ("rules-load", s(&load)),
        ("managed", s(&managed())),
        ("managed-source", s(&dsh_allow::policy::managed::Source { file: "/m.json".into(), text: Some("{}".into()), error: Some("e".into()) })),
        ("managed-verdict", s(decision.managed.as_ref().unwrap())),
        ("rule-check", s(&dsh_allow::policy::managed::RuleCheck { refused: Some("r".into()), notes: vec!["n".into()] })),
        ("profile-request", s(&preq)),
        ("fence-grant", s(&fg)),
        ("fence-plan", s(&plan)),
        ("sbpl", s(&sbpl)),
        ("compiled-profile", json!({"plan": plan, "sbpl": sbpl})),
        ("ledger-row", s(&row)),
        ("kernel-denial", json!({ "path": "/w/build/x", "capability": null, "withheld": ["delete", "execute"], "door": "socket", "operation": "unlink", "program": "rm" })),
        ("folded", s(&folded)),
        ("fold-options", s(&fold)),
        ("session-event", json!({"type": "sandbox/mode", "data": {}})),
        ("denial", s(&dsh_allow::fence::guidance::Denial { path: "/w".into(), capability: Some(Capability::Delete), door: Some("socket".into()), operation: Some("unlink".into()), program: Some("rm".into()), pid: Some(7), guidance: "g".into() })),
        ("review-request", review_request()),
        ("requested-permission", s(&review_input().requested_permissions[0])),
        ("review-input", s(&review_input())),
        ("review-answer", s(&ReviewAnswer::ask("r"))),
    ]
}

/// `ReviewRequest` is input only (no Serialize): a sample with every field,
/// which the core must accept although it denies unknown fields.
fn review_request() -> Value {
    let v = json!({
        "command": "c",
        "cwd": "/w",
        "workspace": "/w",
        "missing": [{"path": "/w", "capability": "read"}],
        "events": [{"type": "user/message", "data": {}}],
    });
    serde_json::from_value::<ReviewRequest>(v.clone()).expect("the core accepts the review-request sample");
    v
}

fn review_input() -> ReviewInput {
    ReviewInput {
        command: "c".into(),
        cwd: "/w".into(),
        workspace: "/w".into(),
        requested_permissions: vec![RequestedPermission { operation: Capability::Read, path: "/w".into() }],
        user_messages: vec!["m".into()],
    }
}

mod erased {
    pub trait Ser {
        fn json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap()
        }
    }
}

#[test]
fn every_wit_record_matches_the_json_the_core_speaks() {
    let r = wit();
    for (record, sample) in samples() {
        assert_eq!(wit_fields(&r, record), keys(sample), "record {record}: WIT fields vs serde fields");
    }
}

#[test]
fn every_wit_function_is_a_wasm_export_and_nothing_more() {
    let r = wit();
    let iface = r.interfaces.iter().find(|(_, i)| i.name.as_deref() == Some("core")).expect("interface core").1;
    let wit_fns: BTreeSet<String> = iface.functions.keys().map(|k| camel(k)).collect();
    // The adapter's exports, read from its source: `js_name = X` or the fn name.
    let src = include_str!("../src/wasm.rs");
    let mut exports = BTreeSet::new();
    let lines: Vec<&str> = src.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let l = line.trim();
        if !l.starts_with("#[wasm_bindgen") || l == "#[wasm_bindgen]" && lines.get(i + 1).is_some_and(|n| !n.trim().starts_with("pub fn")) {
            continue;
        }
        if let Some(name) = l.split("js_name = ").nth(1) {
            exports.insert(name.trim_end_matches(")]").to_string());
        } else if let Some(f) = lines.get(i + 1).and_then(|n| n.trim().strip_prefix("pub fn ")) {
            exports.insert(camel(&f[..f.find('(').unwrap()].replace('_', "-")));
        }
    }
    assert_eq!(wit_fns, exports, "WIT functions vs wasm-bindgen exports");
}
