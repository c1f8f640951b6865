//! A store of 10,000 rules decides as a small one does: the rules over a
//! path are found by its ancestors, the most specific still wins, a tie
//! still goes to the denial, and the fence holds each rule.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod request;

use dsh_allow::api::{Outcome, Tier};
use dsh_allow::decide::decide;
use dsh_allow::fence::{compile, Enforce, ProfileRequest};
use dsh_allow::host::{FixtureHost, LexicalHost};
use dsh_allow::policy::capability::{Access, Capability::*};
use dsh_allow::policy::rules::Rule;

fn rule(id: &str, path: &str, recursive: bool, access: Access) -> Rule {
    Rule { id: id.into(), path: path.into(), recursive, access, hits: 0, created_at: String::new() }
}

fn many() -> Vec<Rule> {
    let mut rules: Vec<Rule> = (0..10_000).map(|i| rule(&format!("r{i}"), &format!("/srv/rules/r{i}"), true, Access::of(&[Read]))).collect();
    rules.push(rule("srv", "/srv", true, Access::of(&[Read, Write, Create])));
    let mut deny = Access::default();
    deny.set(Read, false);
    rules.push(rule("deny", "/srv/rules/r5000/secret", true, deny));
    rules.push(rule("file", "/srv/rules/r7/one.txt", false, Access::of(&[Write])));
    rules
}

fn decided(command: &str) -> dsh_allow::api::Decision {
    let mut req = request::request(command);
    req.rules = many();
    decide(&req, &LexicalHost)
}

#[test]
fn the_most_specific_of_ten_thousand_rules_decides() {
    let d = decided("cat /srv/rules/r4321/notes.txt");
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
    let read = d.effects.iter().find(|e| e.capability == Read).unwrap();
    assert_eq!((read.tier, read.rule_id.as_deref()), (Tier::Rule, Some("r4321")));
    // A write there: the nearest rule says nothing of write, the one on /srv grants it.
    let d = decided("echo x >> /srv/rules/r4321/notes.txt");
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
}

#[test]
fn a_deny_among_ten_thousand_rules_still_holds_and_a_file_rule_covers_only_its_file() {
    assert_ne!(decided("cat /srv/rules/r5000/secret/token").decision, Outcome::Allow);
    assert_eq!(decided("cat /srv/rules/r5000/other").decision, Outcome::Allow);
    let one = decided("echo x >> /srv/rules/r7/one.txt");
    let write = one.effects.iter().find(|e| e.capability == Write).unwrap();
    assert_eq!(write.rule_id.as_deref(), Some("file"));
    let sibling = decided("echo x >> /srv/rules/r7/one.txt.bak");
    let write = sibling.effects.iter().find(|e| e.capability == Write).unwrap();
    assert_eq!(write.rule_id.as_deref(), Some("srv"));
}

#[test]
fn a_rule_on_the_root_is_found_from_any_path() {
    let mut req = request::request("cat /opt/x/y");
    req.rules = many();
    req.rules.push(rule("root", "/", true, Access::of(&[Read])));
    let d = decide(&req, &LexicalHost);
    let read = d.effects.iter().find(|e| e.capability == Read).unwrap();
    assert_eq!(read.rule_id.as_deref(), Some("root"));
}

#[test]
fn the_fence_of_ten_thousand_rules_grants_each_and_withholds_the_deny() {
    let profile = ProfileRequest {
        workspace: "/w".into(),
        home: "/h".into(),
        harness_home: "/h/.dsh".into(),
        platform: dsh_allow::api::Platform::Linux,
        mode: dsh_allow::api::Mode::WorkspaceWrite,
        rules: many(),
        grants: vec![],
        protected_files: vec![],
        enforce: Enforce::Full,
        persistence: dsh_allow::api::Persistence::Shut,
        host_pids: vec![],
        host_ports: vec![],
        folders: vec![],
        kept: vec![],
        managed: None,
    };
    // The fence carries folders that exist.
    let mut host = FixtureHost::default();
    for d in ["/srv", "/srv/rules", "/srv/rules/r5000/secret", "/w", "/h"] {
        host.dirs.insert(d.into());
    }
    host.dirs.extend((0..10_000).map(|i| format!("/srv/rules/r{i}")));
    let plan = compile(&profile, &host);
    assert!(!plan.withheld_at("/srv/rules/r9999/x").contains(&Read));
    assert!(plan.withheld_at("/srv/rules/r5000/secret/x").contains(&Read));
    assert!(plan.withheld_at("/opt/elsewhere").contains(&Write));
}
