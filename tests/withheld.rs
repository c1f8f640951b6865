//! What a call's fence withheld on a path: when a program's error says only
//! "Permission denied", the ledger names the capability the kernel refused
//! from the fence plan itself.
#![cfg(not(target_arch = "wasm32"))]

use dsh_allow::api::{Mode, Platform};
use dsh_allow::fence::{compile, Enforce, ProfileRequest};
use dsh_allow::host::FixtureHost;
use dsh_allow::policy::capability::Capability;

fn host() -> FixtureHost {
    serde_json::from_value(serde_json::json!({
        "dirs": ["/w", "/w/build", "/h", "/h/.ssh", "/h/.dsh", "/tmp", "/usr", "/usr/bin", "/other"],
        "files": ["/w/build/x", "/h/.ssh/id_ed25519", "/h/.dsh/dsh-allow.json"]
    }))
    .unwrap()
}

fn request(enforce: Enforce, rules: serde_json::Value) -> ProfileRequest {
    serde_json::from_value(serde_json::json!({
        "workspace": "/w", "home": "/h", "harnessHome": "/h/.dsh", "platform": Platform::Linux,
        "mode": Mode::WorkspaceWrite, "rules": rules, "protectedFiles": ["/h/.dsh/dsh-allow.json"], "enforce": enforce,
    }))
    .unwrap()
}

fn withheld(enforce: Enforce, rules: serde_json::Value, path: &str) -> Vec<Capability> {
    compile(&request(enforce, rules), &host()).withheld_at(path)
}

#[test]
fn a_file_in_the_workspace_is_withheld_only_delete() {
    assert_eq!(withheld(Enforce::Full, serde_json::json!([]), "/w/build/x"), vec![Capability::Delete]);
}

#[test]
fn a_rule_that_grants_delete_takes_it_off_the_list() {
    let rule = serde_json::json!([{"id": "r", "path": "/w/build", "recursive": true, "access": {"delete": true}, "hits": 0, "createdAt": ""}]);
    assert!(!withheld(Enforce::Full, rule, "/w/build/x").contains(&Capability::Delete));
}

#[test]
fn a_credential_store_is_withheld_every_capability_the_tier_fences() {
    let w = withheld(Enforce::Full, serde_json::json!([]), "/h/.ssh/id_ed25519");
    assert_eq!(w, Capability::ALL.to_vec(), "{w:?}");
}

#[test]
fn a_tier_that_does_not_fence_a_capability_never_names_it() {
    let w = withheld(Enforce::Writes, serde_json::json!([]), "/other/o");
    assert!(!w.contains(&Capability::Read) && !w.contains(&Capability::Execute), "{w:?}");
    assert!(w.contains(&Capability::Write), "{w:?}");
    assert!(withheld(Enforce::Off, serde_json::json!([]), "/other/o").is_empty());
}
