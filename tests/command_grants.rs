//! Command grants: the spec's table of accepted and rejected spellings, the
//! shadowing rules, and what a match adds to the decision.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod base;

use dsh_allow::api::{DecideRequest, Outcome};
use dsh_allow::decide::decide;
use dsh_allow::host::FixtureHost;
use dsh_allow::policy::rules::parse_rules_file;

fn host() -> FixtureHost {
    serde_json::from_value(serde_json::json!({
        "dirs": ["/w", "/repo", "/h/.lark-cli", "/h/Library/Application Support/lark-cli", "/h/.ssh", "/tmp/x"],
        "files": ["/opt/lark/bin/lark-cli", "/opt/other/lark-cli", "/w/lark-cli", "/tmp/x/lark-cli", "/w/bin/evil", "/usr/bin/tail", "/usr/bin/head", "/usr/bin/wc", "/usr/bin/tee", "/usr/bin/sh", "/usr/bin/echo"],
        "symlinks": {"/usr/local/bin/lark-cli": "/opt/lark/bin/lark-cli"},
        "path": ["/usr/local/bin", "/usr/bin"]
    }))
    .unwrap()
}

fn request(command: &str, rules_file: &str) -> DecideRequest {
    let load = parse_rules_file(rules_file);
    assert!(load.error.is_none(), "{:?}", load.error);
    DecideRequest { rules: load.rules, commands: load.commands, ..base::request(command) }
}

const LARK: &str = r#"{"version": 3, "rules": [], "commands": [
    {"id": "lark", "name": "lark-cli", "command": "lark-cli", "roots": ["~/.lark-cli", "~/Library/Application Support/lark-cli"]}]}"#;

fn matched(command: &str) -> bool {
    decide(&request(command, LARK), &host()).command_grant.is_some()
}

#[test]
fn the_spellings_the_spec_accepts_match() {
    for c in [
        "lark-cli docs +update --doc abc",
        "cd /repo && lark-cli docs +update --doc abc",
        "cd /repo && lark-cli docs +update --doc abc 2>&1",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | tail -12",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | head -n 20",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | wc -l",
        "lark-cli docs +update --text \"a; b && c\"",
        "lark-cli auth refresh >/dev/null 2>&1",
    ] {
        assert!(matched(c), "should match: {c}");
    }
}

#[test]
fn the_spellings_the_spec_rejects_do_not_match() {
    for c in [
        "cd /repo && lark-cli docs +update --doc abc > out.log",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | tee out.log",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | sh",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | tail -f",
        "cd /repo && lark-cli docs +update --doc abc; echo done",
        "cd /repo && lark-cli docs +update --doc abc && echo done",
        "cd /repo && lark-cli docs +update --doc abc 2>&1 | tail $(echo 3)",
        "lark-cli docs $(cat ~/.ssh/id_ed25519)",
        "lark-cli docs `id`",
        "cd a && cd b && lark-cli docs",
        "lark-cli docs <<EOF\nx\nEOF",
        "echo hi | lark-cli docs",
        "X=1 lark-cli docs",
        "lark-cli docs &",
        "lark-cli docs 'unclosed",
        "lark-cli docs | sh",
        "lark-cli docs | cat",
        "lark-cli docs | tail -n 5 out.txt",
    ] {
        assert!(!matched(c), "should not match: {c}");
    }
}

#[test]
fn a_path_the_command_chose_never_matches() {
    assert!(!matched("./lark-cli docs"), "a workspace copy");
    assert!(!matched("/tmp/x/lark-cli docs"), "a temp copy");
}

#[test]
fn an_executable_in_the_workspace_shadowing_the_name_never_matches() {
    let mut h = host();
    h.path.insert(0, "/w".into());
    assert!(decide(&request("lark-cli docs", LARK), &h).command_grant.is_none());
}

#[test]
fn a_fixed_absolute_path_matches_itself_and_the_bare_name_that_resolves_to_it() {
    let file = r#"{"version": 3, "rules": [], "commands": [{"command": "/opt/lark/bin/lark-cli", "roots": ["~/.lark-cli"]}]}"#;
    assert!(decide(&request("/opt/lark/bin/lark-cli docs", file), &host()).command_grant.is_some());
    assert!(decide(&request("lark-cli docs", file), &host()).command_grant.is_some(), "PATH + realpath reach the configured program");
    assert!(decide(&request("/usr/local/bin/lark-cli docs", file), &host()).command_grant.is_none(), "another spelling of a path");
    let elsewhere = r#"{"version": 3, "rules": [], "commands": [{"command": "/opt/other/lark-cli", "roots": ["~/.lark-cli"]}]}"#;
    assert!(decide(&request("lark-cli docs", elsewhere), &host()).command_grant.is_none(), "a program of the same name elsewhere");
}

#[test]
fn lines_over_8_kib_never_match() {
    let long = format!("lark-cli docs --text {}", "a".repeat(8 * 1024));
    assert!(!matched(&long));
}

#[test]
fn a_match_adds_its_roots_as_write_and_create_for_that_call_only() {
    let d = decide(&request("lark-cli auth login 2>&1 | tail -3", LARK), &host());
    let m = d.command_grant.expect("matched");
    let paths: Vec<&str> = m.rules.iter().filter(|r| r.recursive).map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/h/.lark-cli", "/h/Library/Application Support/lark-cli"]);
    let roots: Vec<_> = m.rules.iter().filter(|r| r.recursive).collect();
    assert!(roots.iter().all(|r| r.access.describe() == "write,create"), "not delete unless listed");
    assert!(m.rules.iter().any(|r| r.path == "/opt/lark/bin/lark-cli" && r.access.describe() == "read,execute"), "the program itself may run");
    assert_eq!(d.decision, Outcome::Allow);
    // The same roots are not granted to another program.
    let other = decide(&request("touch ~/.lark-cli/token", LARK), &host());
    assert!(other.command_grant.is_none());
    assert_eq!(other.decision, Outcome::Prompt);
}

#[test]
fn a_root_the_fence_cannot_carry_falls_back_to_the_prompt_and_says_so() {
    let file = r#"{"version": 3, "rules": [], "commands": [{"command": "lark-cli", "roots": ["~/.not-yet"]}]}"#;
    let d = decide(&request("lark-cli docs", file), &host());
    assert!(d.command_grant.is_none(), "not applied");
    assert_eq!(d.decision, Outcome::Prompt, "falls back to the prompt");
    assert!(d.reason.contains("cannot carry"), "the ledger row says so: {}", d.reason);
}

#[test]
fn the_prompt_section_names_the_programs_and_the_shapes() {
    let load = parse_rules_file(LARK);
    let s = dsh_allow::policy::command_grant::prompt_section(&load.commands);
    assert!(s.contains("`lark-cli`") && s.contains("tail -N") && s.contains("approval prompt"), "{s}");
    assert_eq!(dsh_allow::policy::command_grant::prompt_section(&[]), "");
}



#[test]
fn two_grants_for_one_program_each_apply_where_they_say() {
    // "Always allow" in two repositories stores git in each; a call in the
    // second must not stop at the first grant.
    let mut h = host();
    for d in ["/w/g1", "/w/g2", "/w/g1/.git", "/w/g2/.git"] {
        h.dirs.insert(d.to_string());
    }
    h.files.insert("/usr/bin/git".to_string());
    let file = r#"{"version": 3, "rules": [], "commands": [
        {"id": "g1", "name": "git in g1", "command": "git", "roots": ["/w/g1"], "access": {"delete": true}},
        {"id": "g2", "name": "git in g2", "command": "git", "roots": ["/w/g2"], "access": {"delete": true}}]}"#;
    let mut req = request("cd /w/g2 && git checkout -q main", file);
    req.fence = dsh_allow::policy::capability::Capability::ALL.to_vec();
    let d = decide(&req, &h);
    let grant = d.command_grant.as_ref().expect("a grant matched");
    assert!(grant.rules.iter().any(|r| r.path == "/w/g2"), "the second repository's grant was not carried: {grant:?}");
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
}
