//! The Seatbelt profile text, for every tier and mode: structure and order
//! (it runs everywhere), and the Seatbelt kernel suite (macOS only; SKIPs
//! loudly elsewhere, fails instead with DSH_ALLOW_REQUIRE_SEATBELT=1).
#![cfg(not(target_arch = "wasm32"))]

use dsh_allow::api::{Mode, Platform};
use dsh_allow::host::FixtureHost;
use dsh_allow::profile::sbpl::{render_for, Sbpl};
use dsh_allow::profile::{compile, Enforce, ProfileRequest};
use dsh_allow::rules::Rule;

fn host() -> FixtureHost {
    serde_json::from_value(serde_json::json!({
        "dirs": ["/Users/me/project", "/Users/me/.dsh", "/private/tmp", "/Users/me/other"],
        "files": ["/Users/me/.dsh/dsh-allow.json", "/Users/me/.ssh/id_ed25519"],
        "symlinks": {"/tmp": "private/tmp", "/var": "private/var", "/etc": "private/etc"}
    }))
    .unwrap()
}

fn request(enforce: Enforce, mode: Mode, rules: Vec<Rule>) -> ProfileRequest {
    ProfileRequest {
        workspace: "/Users/me/project".into(),
        home: "/Users/me".into(),
        harness_home: "/Users/me/.dsh".into(),
        platform: Platform::Macos,
        mode,
        rules,
        grants: vec![],
        protected_files: vec!["/Users/me/.dsh/dsh-allow.json".into(), "/Users/me/.dsh/dsh-allow-audit.ndjson".into()],
        enforce,
        persistence: dsh_allow::api::Persistence::Shut,
    }
}

fn profile(enforce: Enforce, mode: Mode, rules: Vec<Rule>) -> Sbpl {
    let req = request(enforce, mode, rules);
    let h = host();
    let plan = compile(&req, &h);
    render_for(&req, &plan, &h)
}

/// The line numbers of lines containing `needle`.
fn lines_with(s: &Sbpl, needle: &str) -> Vec<usize> {
    s.text.lines().enumerate().filter(|(_, l)| !l.starts_with(';') && l.contains(needle)).map(|(i, _)| i).collect()
}

fn param_of(s: &Sbpl, path: &str) -> String {
    let (k, _) = s.params.iter().find(|(_, v)| v == path).unwrap_or_else(|| panic!("no parameter for {path}: {:?}", s.params));
    format!("(param \"{k}\")")
}

fn rule(path: &str, caps: &[&str]) -> Rule {
    let access: serde_json::Map<String, serde_json::Value> = caps.iter().map(|c| (c.to_string(), true.into())).collect();
    serde_json::from_value(serde_json::json!({"id": "r", "path": path, "recursive": true, "access": access})).unwrap()
}

#[test]
fn every_profile_starts_from_the_fixed_part_and_splices_no_path() {
    for enforce in Enforce::ORDER {
        for mode in [Mode::WorkspaceWrite, Mode::ReadOnly] {
            let s = profile(enforce, mode, vec![]);
            assert!(s.text.contains("(version 1)\n(allow default)\n"), "{enforce:?}");
            assert!(!s.text.contains("/Users/me"), "a path was spliced into the text ({enforce:?}, {mode:?})");
            if mode == Mode::WorkspaceWrite {
                assert!(s.params.iter().any(|(_, v)| v == "/Users/me/project"), "{enforce:?}");
            }
        }
    }
}

#[test]
fn the_full_tier_denies_every_read_before_rules_reopen_them() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let deny = lines_with(&s, "(deny file-read-data)");
    let allow = lines_with(&s, "(allow file-read-data");
    assert_eq!(deny.len(), 1);
    assert!(!allow.is_empty() && allow.iter().all(|a| *a > deny[0]));
}

#[test]
fn the_guarded_tier_fences_reads_of_users_and_volumes_only() {
    let s = profile(Enforce::Guarded, Mode::WorkspaceWrite, vec![]);
    assert!(lines_with(&s, "(deny file-read-data)").is_empty(), "guarded must not deny every read");
    let users = format!("(deny file-read-data (subpath {}))", param_of(&s, "/Users"));
    let volumes = format!("(deny file-read-data (subpath {}))", param_of(&s, "/Volumes"));
    let first_allow = lines_with(&s, "(allow file-read-data")[0];
    for d in [users, volumes] {
        let at = lines_with(&s, &d);
        assert!(at.len() == 1 && at[0] < first_allow, "{d} must come before the rules re-open reads");
    }
    assert!(!lines_with(&s, "(deny process-exec)").is_empty());
}

#[test]
fn the_process_tier_fences_exec_but_not_reads_and_the_writes_tier_neither() {
    let p = profile(Enforce::Process, Mode::WorkspaceWrite, vec![]);
    assert!(!lines_with(&p, "(deny process-exec)").is_empty());
    assert!(lines_with(&p, "(deny file-read-data").is_empty());
    let w = profile(Enforce::Writes, Mode::WorkspaceWrite, vec![]);
    assert!(lines_with(&w, "process-exec").is_empty());
    assert!(!lines_with(&w, "(deny file-write-data file-write-xattr file-write-mode file-write-flags file-write-owner file-write-times)").is_empty());
    assert!(!lines_with(&w, "(deny file-write-create)").is_empty());
    assert!(!lines_with(&w, "(deny file-write-unlink)").is_empty());
}

#[test]
fn the_permission_store_is_denied_operation_by_operation_after_every_grant() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![rule("/Users/me/.dsh", &["write", "create", "delete"])]);
    let store = param_of(&s, "/Users/me/.dsh/dsh-allow.json");
    let denials = lines_with(&s, &format!("(literal {store})"));
    assert_eq!(denials.len(), 3, "write, create and delete each named");
    let last_allow = *lines_with(&s, "(allow ").last().unwrap();
    assert!(denials.iter().all(|d| *d > last_allow), "the store denials come after every grant");
    assert!(!s.text.contains("file-write*"), "a wildcard deny loses to a specific allow: never use one");
    let dir = param_of(&s, "/Users/me/.dsh");
    assert!(!lines_with(&s, &format!("(deny file-write-unlink (literal {dir}))")).is_empty(), "its folder cannot be removed");
}

#[test]
fn the_workspace_grants_write_create_and_execute_but_not_unlink() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let ws = format!("(subpath {})", param_of(&s, "/Users/me/project"));
    let grants: Vec<&str> = s.text.lines().filter(|l| l.starts_with("(allow") && l.contains(&ws)).collect();
    let all = grants.join("\n");
    for op in ["file-read-data", "file-write-data", "file-write-create", "process-exec"] {
        assert!(all.contains(op), "{op} missing from the workspace grant:\n{all}");
    }
    assert!(!all.contains("file-write-unlink"), "delete is not granted in the workspace");
}

#[test]
fn read_only_grants_no_write_anywhere_in_the_workspace() {
    let s = profile(Enforce::Full, Mode::ReadOnly, vec![rule("/Users/me/project", &["write", "create", "delete"])]);
    let ws = format!("(subpath {})", param_of(&s, "/Users/me/project"));
    for l in s.text.lines().filter(|l| l.starts_with("(allow") && l.contains(&ws)) {
        assert!(!l.contains("file-write"), "read-only wrote: {l}");
    }
}

#[test]
fn both_spellings_of_a_symlinked_root_are_emitted() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let tmp = param_of(&s, "/tmp");
    let private = param_of(&s, "/private/tmp");
    assert!(s.text.lines().any(|l| l.contains(&tmp) && l.contains(&private)), "one grant line names both /tmp and /private/tmp");
}

#[test]
fn credential_stores_inside_an_opened_home_stay_shut() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![rule("/Users/me", &["read"])]);
    let ssh = format!("(subpath {})", param_of(&s, "/Users/me/.ssh"));
    let home_allow = lines_with(&s, &format!("(allow file-read-data (subpath {}))", param_of(&s, "/Users/me")));
    let ssh_deny = lines_with(&s, &format!("(deny file-read-data {ssh})"));
    assert!(!home_allow.is_empty() && !ssh_deny.is_empty() && ssh_deny[0] > home_allow[0]);
}

#[test]
fn the_seatbelt_kernel_suite_runs_only_on_macos() {
    if !cfg!(target_os = "macos") || !std::path::Path::new("/usr/bin/sandbox-exec").exists() {
        assert!(
            std::env::var("DSH_ALLOW_REQUIRE_SEATBELT").is_err(),
            "DSH_ALLOW_REQUIRE_SEATBELT=1 but /usr/bin/sandbox-exec is not here: the Seatbelt kernel suite did not run"
        );
        eprintln!("SKIP seatbelt kernel suite: /usr/bin/sandbox-exec exists only on macOS; the profile text tests above ran instead");
        return;
    }
    // On macOS: the store is refused to a writer under the generated profile.
    let dir = std::env::temp_dir().join(format!("dsh-allow-sb-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    std::fs::create_dir_all(dir.join("home/.dsh")).unwrap();
    let store = dir.join("home/.dsh/dsh-allow.json");
    std::fs::write(&store, "{}").unwrap();
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap().to_string_lossy().into_owned();
    let req = ProfileRequest {
        workspace: real(&dir.join("ws")),
        home: real(&dir.join("home")),
        harness_home: real(&dir.join("home/.dsh")),
        platform: Platform::Macos,
        mode: Mode::WorkspaceWrite,
        rules: vec![rule(&real(&dir.join("home/.dsh")), &["write", "create", "delete"])],
        grants: vec![],
        protected_files: vec![real(&store)],
        enforce: Enforce::Guarded,
        persistence: dsh_allow::api::Persistence::Shut,
    };
    let fs = dsh_allow::fs_host::FsHost::from_env();
    let plan = compile(&req, &fs);
    let sbpl = render_for(&req, &plan, &fs);
    let argv = sbpl.argv(&["/bin/sh".into(), "-c".into(), format!("echo x > {}", real(&store))]);
    let out = std::process::Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(!out.status.success(), "the store was writable under Seatbelt");
    assert_eq!(std::fs::read_to_string(&store).unwrap(), "{}");
}

#[test]
fn tool_state_folders_get_unlink_and_the_workspace_build_folder_does_not() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let unlinks = |path: &str| -> usize {
        let at = format!("(subpath {})", param_of(&s, path));
        s.text.lines().filter(|l| l.starts_with("(allow") && l.contains("file-write-unlink") && l.contains(&at)).count()
    };
    for dir in [".git", "target", "node_modules", ".venv", ".pytest_cache"] {
        assert!(unlinks(&format!("/Users/me/project/{dir}")) > 0, "{dir} gets no unlink:\n{}", s.text);
    }
    // `rm -rf build` asks: build/ is not tool state.
    assert!(s.params.iter().all(|(_, v)| v != "/Users/me/project/build"), "build/ was granted something");
}

#[test]
fn a_tool_state_folder_swapped_for_a_symlink_gets_no_unlink_in_the_profile() {
    let mut h = host();
    h.symlinks.insert("/Users/me/project/target".into(), "/Users/me/other".into());
    let req = request(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let plan = compile(&req, &h);
    let s = render_for(&req, &plan, &h);
    let other: Vec<&(String, String)> = s.params.iter().filter(|(_, v)| v == "/Users/me/other" || v == "/Users/me/project/target").collect();
    for (k, v) in other {
        let granted = s.text.lines().any(|l| l.starts_with("(allow") && l.contains("file-write-unlink") && l.contains(&format!("(param \"{k}\")")));
        assert!(!granted, "{v} got unlink through the target symlink:\n{}", s.text);
    }
}
