//! `/` is not a workspace, nor is a folder above the user's home: such a
//! session gets no workspace grant, in the decision or the fence, while
//! rules and one-shot grants work as anywhere else.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod request;

use dsh_allow::api::{Outcome, Platform};
use dsh_allow::decide::decide;
use dsh_allow::fence::{compile, Enforce, ProfileRequest};
use dsh_allow::host::LexicalHost;
use dsh_allow::policy::baseline::workspace_refusal;
use dsh_allow::policy::capability::{Access, Capability};
use dsh_allow::policy::rules::Rule;

fn in_workspace(workspace: &str, command: &str) -> dsh_allow::api::DecideRequest {
    let mut req = request::request(command);
    req.workspace = workspace.into();
    req.cwd = workspace.into();
    req
}

#[test]
fn the_root_and_the_folders_above_home_are_not_workspaces() {
    assert!(workspace_refusal("/", "/h").unwrap().contains("/ is not a workspace"));
    assert!(workspace_refusal("//", "/home/me").is_some());
    assert!(workspace_refusal("/home", "/home/me").unwrap().contains("holds the home folder /home/me"));
    assert!(workspace_refusal("/home/", "/home/me").is_some());
    assert_eq!(workspace_refusal("/home/me", "/home/me"), None, "home itself is a workspace (credential stores stay shut)");
    assert_eq!(workspace_refusal("/home/me/project", "/home/me"), None);
    assert_eq!(workspace_refusal("/home/me2", "/home/me"), None, "a sibling with the same prefix is not above home");
    assert_eq!(workspace_refusal("/srv/work", "/home/me"), None);
}

#[test]
fn a_write_anywhere_asks_when_dsh_started_in_the_root() {
    for (ws, target) in [("/", "/srv/x.txt"), ("/", "/w/x.txt"), ("/h", "/h/notes.txt")] {
        let mut req = in_workspace(ws, &format!("echo hi > {target}"));
        req.home = "/h/me".into();
        let d = decide(&req, &LexicalHost);
        assert_eq!(d.decision, Outcome::Prompt, "{ws}: {target}: {}", d.reason);
    }
    // The same write with the workspace where the file is: the baseline allows it.
    let d = decide(&in_workspace("/srv", "echo hi > /srv/x.txt"), &LexicalHost);
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
}

#[test]
fn rules_and_temp_folders_still_work_without_a_workspace() {
    let mut req = in_workspace("/", "echo hi > /srv/x.txt && echo t > /tmp/t");
    req.rules.push(Rule { id: "r".into(), path: "/srv".into(), recursive: true, access: Access::of(&[Capability::Write, Capability::Create]), hits: 0, created_at: String::new() });
    let d = decide(&req, &LexicalHost);
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
}

#[test]
fn git_gets_no_call_grant_in_a_root_workspace() {
    let req = in_workspace("/", "git checkout main");
    let d = decide(&req, &LexicalHost);
    assert!(d.fence_grants.is_empty(), "a call grant in / would open the whole tree: {:?}", d.fence_grants);
}

#[test]
fn the_fence_grants_nothing_for_a_root_workspace() {
    let profile = ProfileRequest {
        workspace: "/".into(),
        home: "/h".into(),
        harness_home: "/h/.dsh".into(),
        platform: Platform::Linux,
        mode: dsh_allow::api::Mode::WorkspaceWrite,
        rules: vec![],
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
    let plan = compile(&profile, &LexicalHost);
    let root = plan.grants.iter().find(|g| g.path == "/");
    assert!(root.is_none_or(|g| !g.access.iter().any(|c| c.mutates())), "the fence opens / for changes: {root:?}");
    assert!(plan.withheld_at("/srv/x").contains(&Capability::Write));
}
