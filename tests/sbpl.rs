//! The Seatbelt profile text, for every tier and mode: structure and order
//! (it runs everywhere), and the Seatbelt kernel suite: under Apple's
//! sandbox-exec on macOS, under the Seatbelt model on Linux (labelled so in
//! every line it prints). It SKIPs loudly where neither can run, and fails
//! instead with DSH_ALLOW_REQUIRE_SEATBELT=1.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/macos_links.rs"]
mod macos_links;
#[path = "support/seatbelt_model.rs"]
mod seatbelt_model;
#[path = "support/random_rules.rs"]
mod random_rules;

use dsh_allow::api::{Mode, Platform};
use dsh_allow::policy::capability::Capability;
use dsh_allow::host::FixtureHost;
use dsh_allow::fence::sbpl::{operations, render_for, Sbpl};
use dsh_allow::fence::{compile, Enforce, ProfileRequest};
use dsh_allow::policy::rules::Rule;

fn host() -> FixtureHost {
    serde_json::from_value(serde_json::json!({
        "dirs": ["/Users/me/project", "/Users/me/.dsh", "/private/tmp", "/Users/me/other"],
        "files": ["/Users/me/.dsh/dsh-allow.json", "/Users/me/.ssh/id_ed25519"],
        "symlinks": {"/tmp": "private/tmp", "/var": "private/var", "/etc": "private/etc"}
    }))
    .unwrap()
}

fn request(enforce: Enforce, mode: Mode, rules: Vec<Rule>) -> ProfileRequest {
    request_with(enforce, mode, rules, vec![])
}

/// Built from JSON as the plugin sends it: fields the request gains later
/// keep their defaults here.
fn request_with(enforce: Enforce, mode: Mode, rules: Vec<Rule>, grants: Vec<Rule>) -> ProfileRequest {
    serde_json::from_value(serde_json::json!({
        "workspace": "/Users/me/project",
        "home": "/Users/me",
        "harnessHome": "/Users/me/.dsh",
        "platform": Platform::Macos,
        "mode": mode,
        "rules": rules,
        "grants": grants,
        "protectedFiles": ["/Users/me/.dsh/dsh-allow.json", "/Users/me/.dsh/dsh-allow-audit.ndjson"],
        "enforce": enforce,
    }))
    .unwrap()
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
    let last_allow = last_file_allow(&s);
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
    // Unlink only of SQLite's files beside a database (a name the regex
    // ends in), never of the workspace's entries at large.
    let unlinks: Vec<&&str> = grants.iter().filter(|l| l.contains("file-write-unlink")).collect();
    let sidecar = format!("(allow file-write-unlink (require-all {ws} (regex #\"{}\")))", dsh_allow::fence::sbpl::SIDECARS);
    assert!(unlinks.iter().all(|l| **l == sidecar), "delete is not granted in the workspace: {unlinks:?}");
    assert_eq!(unlinks.len(), 1, "the workspace's SQLite sidecars may be removed:\n{}", s.text);
}

#[test]
fn sqlite_sidecars_may_be_removed_where_the_call_may_write_and_stay_shut_inside_what_is_excepted() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![rule("/Users/me", &["read", "write"])]);
    let home = param_of(&s, "/Users/me");
    let ssh = param_of(&s, "/Users/me/.ssh");
    let lines: Vec<&str> = s.text.lines().collect();
    let allow = lines.iter().position(|l| l.starts_with("(allow file-write-unlink (require-all") && l.contains(&format!("(subpath {home})"))).expect("sidecars beside what home's rule lets the call write");
    // The credential store inside home is denied the same unlink after it.
    let deny = lines.iter().rposition(|l| l.starts_with("(deny") && l.contains("file-write-unlink") && l.contains(&format!("(subpath {ssh})"))).expect("unlink stays shut in ~/.ssh");
    assert!(deny > allow, "{}", s.text);
    // A rule that grants delete already needs no pattern; read-only grants none.
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![rule("/Users/me/other", &["read"])]);
    let other = format!("(subpath {})", param_of(&s, "/Users/me/other"));
    assert!(!s.text.lines().any(|l| l.contains("require-all") && l.contains(&other)), "{}", s.text);
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
fn tool_state_folders_get_unlink_and_neither_build_nor_the_repository_does() {
    let s = profile(Enforce::Full, Mode::WorkspaceWrite, vec![]);
    let unlinks = |path: &str| -> usize {
        let at = format!("(subpath {})", param_of(&s, path));
        s.text.lines().filter(|l| l.starts_with("(allow") && l.contains("file-write-unlink") && l.contains(&at)).count()
    };
    for dir in ["target", "node_modules", ".venv", ".pytest_cache"] {
        assert!(unlinks(&format!("/Users/me/project/{dir}")) > 0, "{dir} gets no unlink:\n{}", s.text);
    }
    // The repository is not tool state: git's own calls carry delete in .git as a grant.
    assert!(s.params.iter().all(|(_, v)| v != "/Users/me/project/.git"), ".git was granted something:\n{}", s.text);
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

// --- every tier, line by line ----------------------------------------------------

/// The operations a profile denies everywhere (a deny with no filter).
/// The line of the last grant on files (section 2): the side doors come
/// after it and allow other things.
fn last_file_allow(s: &Sbpl) -> usize {
    *lines_with(s, "(allow ").iter().filter(|&&i| !s.text.lines().nth(i).unwrap().contains("network-outbound") && !s.text.lines().nth(i).unwrap().contains("(target ")).last().unwrap()
}

/// The operations denied everywhere (no filter), side doors aside.
fn global_denials(s: &Sbpl) -> Vec<String> {
    s.text
        .lines()
        .filter(|l| l.starts_with("(deny ") && !l.contains("(param") && !l.contains("(regex") && !l.contains("network-outbound") && *l != "(deny signal)" && *l != "(deny process-info*)")
        .flat_map(|l| l.trim_start_matches("(deny ").trim_end_matches(')').split(' ').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn ops(caps: &[Capability]) -> Vec<String> {
    caps.iter().flat_map(|c| operations(*c).iter().map(|o| o.to_string())).collect()
}

#[test]
fn every_tier_denies_exactly_the_operations_it_fences() {
    use Capability::*;
    let table: [(Enforce, &[Capability]); 4] = [
        (Enforce::Full, &[Read, Write, Create, Delete, Execute]),
        // Guarded fences reads only under the user data areas (below).
        (Enforce::Guarded, &[Write, Create, Delete, Execute]),
        (Enforce::Process, &[Write, Create, Delete, Execute]),
        (Enforce::Writes, &[Write, Create, Delete]),
    ];
    for (enforce, caps) in table {
        for mode in [Mode::WorkspaceWrite, Mode::ReadOnly] {
            let s = profile(enforce, mode, vec![]);
            let mut got = global_denials(&s);
            let mut want = ops(caps);
            got.sort();
            want.sort();
            assert_eq!(got, want, "{enforce:?} {mode:?}:\n{}", s.text);
            let read_denials = lines_with(&s, "(deny file-read-data");
            match enforce {
                Enforce::Guarded => {
                    let areas = [param_of(&s, "/Users"), param_of(&s, "/Volumes")].map(|p| format!("(deny file-read-data (subpath {p}))"));
                    assert!(areas.iter().all(|a| lines_with(&s, a).len() == 1), "{mode:?}: the user data areas:\n{}", s.text);
                }
                Enforce::Process | Enforce::Writes => assert!(read_denials.is_empty(), "{enforce:?} fences reads:\n{}", s.text),
                _ => {}
            }
        }
    }
}

#[test]
fn the_off_tier_and_full_access_fence_nothing() {
    let s = profile(Enforce::Off, Mode::WorkspaceWrite, vec![]);
    assert!(s.text.lines().all(|l| !l.starts_with("(deny") && !l.starts_with("(allow file") && !l.starts_with("(allow process")), "{}", s.text);
    assert!(s.params.is_empty());
    let danger = profile(Enforce::Full, Mode::DangerFullAccess, vec![]);
    assert!(global_denials(&danger).is_empty() && danger.params.is_empty(), "{}", danger.text);
}

#[test]
fn every_tier_shuts_the_repositorys_hooks_and_config_after_every_grant() {
    for enforce in Enforce::ORDER {
        let s = profile(enforce, Mode::WorkspaceWrite, vec![rule("/Users/me/project", &["write", "create", "delete"])]);
        let last_allow = last_file_allow(&s);
        for surface in ["/Users/me/project/.git/hooks", "/Users/me/project/.git/config", "/Users/me/project/.gitmodules"] {
            let at = param_of(&s, surface);
            for cap in [Capability::Write, Capability::Create, Capability::Delete] {
                let line = format!("(deny {} (subpath {at}))", operations(cap).join(" "));
                let found = lines_with(&s, &line);
                assert!(found.len() == 1 && found[0] > last_allow, "{enforce:?}: {line} missing or before a grant:\n{}", s.text);
            }
        }
        // `.git` itself keeps what git's lock files need: no deny names it.
        assert!(s.params.iter().all(|(_, v)| v != "/Users/me/project/.git"), "{enforce:?}: .git itself was named");
    }
}

#[test]
fn a_rule_naming_a_surface_opens_it_and_only_it() {
    let s = profile(Enforce::Guarded, Mode::WorkspaceWrite, vec![rule("/Users/me/project/.git/hooks/pre-commit", &["write", "create"])]);
    assert!(s.params.iter().all(|(_, v)| v != "/Users/me/project/.git/hooks"), "the named hooks folder is still shut:\n{}", s.text);
    let config = param_of(&s, "/Users/me/project/.git/config");
    assert_eq!(lines_with(&s, &format!("(subpath {config})")).len(), 3);
    // The off tier and full access fence nothing, surfaces included.
    let off = profile(Enforce::Off, Mode::WorkspaceWrite, vec![]);
    assert!(!off.text.contains("(deny "), "{}", off.text);
}

#[test]
fn only_a_mutating_rule_at_or_inside_a_surface_opens_it_among_thousands() {
    let opens = |rules: Vec<Rule>, surface: &str| request(Enforce::Guarded, Mode::WorkspaceWrite, rules).opened().names(surface);
    let hooks = "/Users/me/project/.git/hooks";
    // Thousands of rules beside it open nothing of it.
    let many = |extra: Rule| {
        let mut rules: Vec<Rule> = (0..3000).map(|i| rule(&format!("/Users/me/project/src/f{i}"), &["write", "delete"])).collect();
        rules.push(extra);
        rules
    };
    assert!(opens(many(rule("/Users/me/project/.git/hooks/pre-commit", &["write"])), hooks));
    assert!(opens(many(rule("/Users/me/project/.git/hooks", &["delete"])), hooks));
    assert!(opens(many(rule("/Users/me/project/.git/./hooks/x/../pre-push", &["create"])), hooks), "a path is read as it resolves");
    assert!(!opens(many(rule("/Users/me/project/.git/hooks-old/x", &["write"])), hooks), "a sibling sharing the name's start");
    assert!(!opens(many(rule("/Users/me/project/.git/hooks.d", &["write"])), hooks));
    assert!(!opens(many(rule("/Users/me/project/.git/hooksmith", &["write"])), hooks), "a sibling sorting after `hooks/`");
    assert!(!opens(many(rule("/Users/me/project/.git", &["write", "create", "delete"])), hooks), "a rule above the surface");
    assert!(!opens(many(rule("/Users/me/project/.git/hooks/pre-commit", &["read", "execute"])), hooks), "read and execute change nothing");
}

#[test]
fn every_tier_denies_the_store_after_every_grant_and_keeps_its_folder() {
    for enforce in Enforce::ORDER {
        let s = profile(enforce, Mode::WorkspaceWrite, vec![rule("/Users/me/.dsh", &["write", "create", "delete"])]);
        let store = param_of(&s, "/Users/me/.dsh/dsh-allow.json");
        let last_allow = last_file_allow(&s);
        for cap in [Capability::Write, Capability::Create, Capability::Delete] {
            let line = format!("(deny {} (literal {store}))", operations(cap).join(" "));
            let at = lines_with(&s, &line);
            assert!(at.len() == 1 && at[0] > last_allow, "{enforce:?}: {line} missing or before a grant:\n{}", s.text);
        }
        let dir = param_of(&s, "/Users/me/.dsh");
        let kept = lines_with(&s, &format!("(deny file-write-unlink (literal {dir}))"));
        assert!(kept.len() == 1 && kept[0] > last_allow, "{enforce:?}: the store's folder can be removed or is named twice:\n{}", s.text);
    }
}

#[test]
fn every_parameter_is_a_normal_absolute_path_named_in_order_and_used() {
    for enforce in Enforce::ORDER {
        for mode in [Mode::WorkspaceWrite, Mode::ReadOnly] {
            let s = profile(enforce, mode, vec![rule("/Users/me/other", &["read", "write"])]);
            for (i, (name, value)) in s.params.iter().enumerate() {
                assert_eq!(name, &format!("P{i}"));
                assert!(value.starts_with('/') && !value.contains("//") && (value == "/" || !value.ends_with('/')), "{value}");
                assert!(!value.split('/').any(|c| c == "." || c == ".."), "{value}");
                assert!(s.text.contains(&format!("(param \"{name}\")")), "{name}={value} is never used");
            }
            for used in s.text.split("(param \"").skip(1) {
                let name = &used[..used.find('"').unwrap()];
                assert!(s.params.iter().any(|(n, _)| n == name), "{name} is used but not given");
            }
            let argv = s.argv(&["/bin/sh".into(), "-c".into(), "true".into()]);
            assert_eq!(&argv[..2], &["/usr/bin/sandbox-exec".to_string(), "-p".into()]);
            assert_eq!(argv.len(), 3 + 2 * s.params.len() + 3);
            assert!(argv[3..argv.len() - 3].chunks(2).all(|d| d[0] == "-D" && d[1].starts_with('P')));
        }
    }
}

#[test]
fn the_terminals_stay_open_wherever_writes_or_reads_are_fenced() {
    for enforce in Enforce::ORDER {
        let s = profile(enforce, Mode::ReadOnly, vec![]);
        let null = format!("(subpath {})", param_of(&s, "/dev/null"));
        let line = s.text.lines().find(|l| l.starts_with("(allow") && l.contains(&null)).unwrap_or_else(|| panic!("{enforce:?}: /dev/null shut"));
        assert!(line.contains("file-write-data"), "{enforce:?}: {line}");
    }
}

#[test]
fn the_workspace_is_reopened_for_reads_in_both_read_fencing_tiers_and_guarded_leaves_the_root_alone() {
    for enforce in [Enforce::Full, Enforce::Guarded] {
        let s = profile(enforce, Mode::WorkspaceWrite, vec![]);
        let ws = format!("(subpath {})", param_of(&s, "/Users/me/project"));
        let reopened = s.text.lines().position(|l| l.starts_with("(allow file-read-data") && l.contains(&ws));
        let fenced = s.text.lines().position(|l| l.starts_with("(deny file-read-data"));
        assert!(reopened.is_some() && fenced.is_some() && reopened > fenced, "{enforce:?}:\n{}", s.text);
    }
    let s = profile(Enforce::Guarded, Mode::WorkspaceWrite, vec![]);
    assert!(s.params.iter().all(|(_, v)| v != "/"), "guarded reopens / for reads, undoing its own fence:\n{}", s.text);
}

#[test]
fn a_one_shot_grant_is_compiled_like_a_rule() {
    let req = request_with(Enforce::Guarded, Mode::WorkspaceWrite, vec![], vec![rule("/Users/me/project/build", &["delete"])]);
    let h = host();
    let s = render_for(&req, &compile(&req, &h), &h);
    let build = format!("(subpath {})", param_of(&s, "/Users/me/project/build"));
    assert_eq!(s.text.lines().filter(|l| l.starts_with("(allow") && l.contains("file-write-unlink") && l.contains(&build)).count(), 1, "{}", s.text);
    let without = profile(Enforce::Guarded, Mode::WorkspaceWrite, vec![]);
    assert!(without.params.iter().all(|(_, v)| v != "/Users/me/project/build"), "the grant is this call's alone");
}

#[test]
fn an_execute_rule_on_a_symlinked_binary_grants_the_link_and_its_target() {
    let mut h = host();
    h.symlinks.insert("/opt/homebrew/bin/gh".into(), "../Cellar/gh/2.0/bin/gh".into());
    h.files.insert("/opt/homebrew/Cellar/gh/2.0/bin/gh".into());
    let mut gh = rule("/opt/homebrew/bin/gh", &["execute"]);
    gh.recursive = false;
    let req = request(Enforce::Guarded, Mode::WorkspaceWrite, vec![gh]);
    let s = render_for(&req, &compile(&req, &h), &h);
    let link = format!("(subpath {})", param_of(&s, "/opt/homebrew/bin/gh"));
    let real = format!("(subpath {})", param_of(&s, "/opt/homebrew/Cellar/gh/2.0/bin/gh"));
    assert!(s.text.lines().any(|l| l.starts_with("(allow") && l.contains("process-exec") && l.contains(&link) && l.contains(&real)), "{}", s.text);
}

/// The request the plugin's Seatbelt probe compiles (plugin/fence.js
/// probeSeatbelt): nothing of `home` may be granted in any tier, or the
/// probe would report a fence the kernel does not hold.
#[test]
fn the_probe_profile_grants_none_of_the_paths_it_probes() {
    let root = "/Users/me/.dsh/.dsh-allow-probe-x";
    for enforce in Enforce::ORDER {
        let req: ProfileRequest = serde_json::from_value(serde_json::json!({
            "workspace": format!("{root}/ws"), "home": format!("{root}/home"), "harnessHome": format!("{root}/harness"),
            "platform": "macos", "mode": "workspace-write", "rules": [], "grants": [], "protectedFiles": [], "enforce": enforce,
        }))
        .unwrap();
        let h = host();
        let s = render_for(&req, &compile(&req, &h), &h);
        for probed in [format!("{root}/home/secret"), format!("{root}/home/tool"), format!("{root}/home/new"), format!("{root}/ws/victim")] {
            for (name, value) in &s.params {
                let covers = probed == *value || probed.starts_with(&format!("{value}/"));
                if !covers || value == "/" {
                    continue;
                }
                for l in s.text.lines().filter(|l| l.starts_with("(allow") && l.contains(&format!("(param \"{name}\")"))) {
                    // The SQLite sidecar pattern reaches no name the probe tries.
                    if l.contains(&format!("(regex #\"{}\")", dsh_allow::fence::sbpl::SIDECARS)) {
                        continue;
                    }
                    let wrong: &[&str] = if probed.ends_with("/victim") { &["file-write-unlink"] } else { &["file-read-data", "file-write", "process-exec"] };
                    assert!(!wrong.iter().any(|w| l.contains(w)), "{enforce:?}: {probed} is granted by {l} ({value})");
                }
            }
        }
    }
}

// --- the Seatbelt kernel suite -----------------------------------------------------
//
// Real commands under sandbox-exec with profiles the sbpl module compiles
// from the real file system (FsHost): the spec's list. On macOS Apple's
// /usr/bin/sandbox-exec; on Linux the Seatbelt model (tests/seatbelt_model),
// in a world under /Users as on a Mac. Where neither runs the gate test
// below prints SKIP (or fails when DSH_ALLOW_REQUIRE_SEATBELT=1) and each
// kernel test returns early after its own SKIP line.

/// A line past the test harness's capture (it takes only print!/eprint!):
/// a SKIP must show in a passing run.
/// The managed policy as the plugin passes it: one file's text, merged.
fn managed(text: serde_json::Value) -> dsh_allow::policy::managed::Managed {
    let source = dsh_allow::policy::managed::Source { file: "/Library/Application Support/dsh-allow/managed.json".into(), text: Some(text.to_string()), error: None };
    dsh_allow::policy::managed::merge(&[source])
}

#[test]
fn a_managed_deny_is_denied_after_every_grant_operation_by_operation_even_where_a_rule_grants_it() {
    for enforce in Enforce::ORDER {
        let mut req = request(enforce, Mode::WorkspaceWrite, vec![rule("/Users/me/other", &["read", "write", "create", "delete"])]);
        req.managed = Some(managed(serde_json::json!({ "version": 1, "deny": [{ "path": "~/other", "access": { "read": true, "write": true } }] })));
        let h = host();
        let plan = compile(&req, &h);
        let s = render_for(&req, &plan, &h);
        let other = param_of(&s, "/Users/me/other");
        // No grant opens what the managed policy denies…
        for l in s.text.lines().filter(|l| l.starts_with("(allow") && l.contains(&other)) {
            for op in ops(&[Capability::Read, Capability::Write, Capability::Delete]) {
                assert!(!l.contains(&op), "{enforce:?}: a grant opens the denied folder: {l}");
            }
        }
        // …and its denials come after the last grant on files, for every
        // capability it denies (a denied read denies moving entries out too).
        let last = last_file_allow(&s);
        for cap in [Capability::Read, Capability::Write, Capability::Delete] {
            let line = format!("(deny {} (subpath {other}))", operations(cap).join(" "));
            let at = lines_with(&s, &line);
            assert!(at.iter().any(|&i| i > last), "{enforce:?}: no `{line}` after every grant:\n{}", s.text);
        }
        // The folders above it may not be renamed away with it inside.
        let home = format!("(deny file-write-unlink (literal {}))", param_of(&s, "/Users/me"));
        assert!(!lines_with(&s, &home).is_empty(), "{enforce:?}: home may be renamed away:\n{}", s.text);
        // Without the managed policy the rule's grant is in the profile (the test can fail).
        let plain = profile(enforce, Mode::WorkspaceWrite, vec![rule("/Users/me/other", &["read", "write", "create", "delete"])]);
        assert!(plain.text.lines().any(|l| l.starts_with("(allow") && l.contains("file-write-unlink") && l.contains(&param_of(&plain, "/Users/me/other"))));
    }
}

fn loud(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{line}");
}

fn seatbelt_required() -> bool {
    std::env::var("DSH_ALLOW_REQUIRE_SEATBELT").is_ok_and(|v| v == "1")
}

/// Says what runs the kernel suite here, or why nothing does (a failure
/// when the suite is required: CI's macOS job, and `make test` on Linux).
#[test]
fn the_seatbelt_kernel_suite_runs_under_apples_kernel_or_the_model() {
    match kernel::World::usable() {
        Ok(seatbelt) => loud(&format!("tests/sbpl.rs kernel::* run under the {}: {}", seatbelt.label(), seatbelt.program())),
        Err(why) => {
            assert!(!seatbelt_required(), "DSH_ALLOW_REQUIRE_SEATBELT=1 but the Seatbelt kernel suite cannot run: {why}");
            loud(&format!("SKIP seatbelt kernel suite (tests/sbpl.rs kernel::*): {why}"));
        }
    }
}

mod kernel {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    use super::macos_links::{linux_spelling, macos_spelling};
    use super::seatbelt_model::{seatbelt, Seatbelt};
    use super::{rule, seatbelt_required};
    use dsh_allow::fs_host::FsHost;
    use dsh_allow::host::{Host, PathKind};
    use dsh_allow::fence::sbpl::{render_for, Sbpl};
    use dsh_allow::fence::{compile, Enforce, ProfileRequest};
    use dsh_allow::policy::rules::Rule;

    const SECRET: &str = "dsh-allow-seatbelt-secret";

    /// A tree outside the temp folders (the baseline opens those fully) and
    /// under /Users (the guarded read fence): $HOME/.dsh-allow-seatbelt/<test>
    /// on a Mac, /Users/dsh-allow-model/<test> under the model.
    pub struct World {
        pub root: PathBuf,
        pub seatbelt: Seatbelt,
    }

    impl Drop for World {
        fn drop(&mut self) {
            let _ = Command::new("/bin/chmod").args(["-R", "u+rwx"]).arg(&self.root).status();
            let _ = std::fs::remove_dir_all(&self.root);
            if self.seatbelt.is_model() {
                remove_model_parents();
            }
        }
    }

    /// Where the model's worlds live: a Mac's user data area, made real here.
    const MODEL_PARENT: &str = "/Users/dsh-allow-model";

    /// Make `dir` and its parents while other tests remove the model's
    /// parents once their worlds are gone (an empty parent can vanish
    /// between two of create_dir_all's steps): tried again then. Once a
    /// world is in them, they stay.
    fn make_dir_beside_removals(dir: &Path) -> std::io::Result<()> {
        let mut tries = 0;
        loop {
            match std::fs::create_dir_all(dir) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 100 => tries += 1,
                done => return done,
            }
        }
    }

    /// The model's parents, once no world is left in them.
    fn remove_model_parents() {
        let _ = std::fs::remove_dir(MODEL_PARENT);
        let _ = std::fs::remove_dir("/Users");
    }

    /// The worlds (`<test>-<pid>`) of a run that was killed before its
    /// worlds were dropped: they go with the next run, not with the machine.
    fn remove_worlds_of_runs_gone() {
        let Ok(entries) = std::fs::read_dir(MODEL_PARENT) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.rsplit_once('-').and_then(|(_, p)| p.parse::<u32>().ok()) else { continue };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("/bin/chmod").args(["-R", "u+rwx"]).arg(e.path()).status();
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// The file system as macOS names it: `/tmp`, `/var` and `/etc` resolve
    /// into `/private` (the model's table), so a rule written `/var/x` gets
    /// both spellings in the profile, as FsHost gives them on a Mac.
    pub struct MacHost(pub FsHost);

    impl Host for MacHost {
        fn canonical(&self, path: &str) -> String {
            macos_spelling(&self.0.canonical(&linux_spelling(path)))
        }
        fn kind(&self, path: &str) -> PathKind {
            self.0.kind(&linux_spelling(path))
        }
        fn which(&self, program: &str) -> Option<String> {
            self.0.which(program).map(|p| macos_spelling(&p))
        }
    }

    impl World {
        /// What applies profiles here, or why nothing can: Apple's
        /// sandbox-exec (not inside another sandbox, e.g. an agent's
        /// terminal) or the model (built, and /Users can be made).
        pub fn usable() -> Result<Seatbelt, String> {
            let seatbelt = seatbelt()?;
            let probe = Command::new(seatbelt.program())
                .args(["-p", "(version 1)\n(allow default)\n(deny file-write-data (literal \"/dsh-allow-probe\"))", "/bin/sh", "-c", "exit 0"])
                .output()
                .map_err(|e| format!("{} did not start: {e}", seatbelt.program()))?;
            if !probe.status.success() {
                return Err(format!(
                    "{} cannot apply a profile here (inside another sandbox?): {}",
                    seatbelt.label(),
                    String::from_utf8_lossy(&probe.stderr).trim()
                ));
            }
            if seatbelt.is_model() {
                make_dir_beside_removals(Path::new(MODEL_PARENT)).map_err(|e| format!("the Seatbelt model's worlds live under {MODEL_PARENT}, which cannot be made here: {e}"))?;
                remove_worlds_of_runs_gone();
                // Made again by each world (World::new): asked alone, none stays.
                remove_model_parents();
            }
            Ok(seatbelt)
        }

        /// The test's world, or None after a loud SKIP (a failure when required).
        pub fn new(test: &str) -> Option<World> {
            let seatbelt = match World::usable() {
                Ok(s) => s,
                Err(why) => {
                    assert!(!seatbelt_required(), "DSH_ALLOW_REQUIRE_SEATBELT=1 but the Seatbelt kernel suite cannot run ({test}): {why}");
                    super::loud(&format!("SKIP {test}: {why}"));
                    return None;
                }
            };
            let parent = if seatbelt.is_model() {
                PathBuf::from(MODEL_PARENT)
            } else {
                PathBuf::from(std::env::var("HOME").expect("HOME")).join(".dsh-allow-seatbelt")
            };
            let root = parent.join(format!("{test}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            make_dir_beside_removals(&root).unwrap();
            let root = std::fs::canonicalize(&root).unwrap();
            assert!(root.starts_with("/Users") || root.starts_with("/Volumes"), "{} is outside the user data areas: reads there are not fenced", root.display());
            eprintln!("{test}: under the {}", seatbelt.label());
            let w = World { root, seatbelt };
            for d in ["ws/emptydir", "home/.dsh", "home/.ssh", "home/docs", "elsewhere"] {
                std::fs::create_dir_all(w.path(d)).unwrap();
            }
            w.write("ws/a", "a");
            w.write("ws/existing", "old");
            w.write("home/.dsh/dsh-allow.json", "{}");
            w.write("home/.dsh/other", "other");
            w.write("home/.ssh/id_ed25519", SECRET);
            w.write("home/notes.txt", SECRET);
            w.write("home/docs/readme", SECRET);
            w.write("elsewhere/existing", "old");
            Some(w)
        }

        pub fn path(&self, rel: &str) -> String {
            self.root.join(rel).to_string_lossy().into_owned()
        }

        pub fn write(&self, rel: &str, text: &str) {
            std::fs::write(self.root.join(rel), text).unwrap();
        }

        pub fn read(&self, rel: &str) -> Option<String> {
            std::fs::read_to_string(self.root.join(rel)).ok()
        }

        pub fn exists(&self, rel: &str) -> bool {
            self.root.join(rel).symlink_metadata().is_ok()
        }

        /// The profile request the plugin would send for this world.
        pub fn request(&self, enforce: Enforce, rules: Vec<Rule>) -> ProfileRequest {
            let rules = [rules, toolchains()].concat();
            serde_json::from_value(serde_json::json!({
                "workspace": self.path("ws"),
                "home": self.path("home"),
                "harnessHome": self.path("home/.dsh"),
                "platform": "macos",
                "mode": "workspace-write",
                "rules": rules,
                "grants": [],
                "protectedFiles": [self.path("home/.dsh/dsh-allow.json")],
                "enforce": enforce,
            }))
            .unwrap()
        }

        pub fn profile(&self, req: &ProfileRequest) -> Sbpl {
            let fs = MacHost(FsHost::from_env());
            let plan = compile(req, &fs);
            render_for(req, &plan, &fs)
        }

        /// `argv` under the profile, from the workspace, with the world's home.
        pub fn run(&self, req: &ProfileRequest, argv: &[&str]) -> Output {
            self.run_profile(&self.profile(req), argv)
        }

        /// `argv` under a given profile, as `run` does.
        pub fn run_profile(&self, sbpl: &Sbpl, argv: &[&str]) -> Output {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            let full = sbpl.argv(&argv);
            Command::new(self.seatbelt.program())
                .args(&full[1..])
                .current_dir(self.path("ws"))
                .env("HOME", self.path("home"))
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .unwrap()
        }

        pub fn sh(&self, req: &ProfileRequest, script: &str) -> Output {
            self.run(req, &["/bin/sh", "-c", script])
        }
    }

    fn shown(o: &Output) -> String {
        format!("exit {:?}\nstdout: {}\nstderr: {}", o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    }

    pub fn ok(o: &Output, what: &str) {
        assert!(o.status.success(), "{what} should work under the fence:\n{}", shown(o));
    }

    pub fn refused(o: &Output, what: &str) {
        assert!(!o.status.success(), "{what} should be refused by the kernel:\n{}", shown(o));
        assert!(!String::from_utf8_lossy(&o.stdout).contains(SECRET), "{what} printed the secret");
    }

    /// A program on PATH, or None (a failure when the suite is required).
    fn program(name: &str) -> Option<String> {
        let out = Command::new("/bin/sh").args(["-c", &format!("command -v {name}")]).output().ok()?;
        let found = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if found.is_empty() {
            assert!(!seatbelt_required(), "{name} is not on PATH: the suite needs it");
            eprintln!("NOTE: {name} is not on PATH; its cases are left out");
            return None;
        }
        Some(found)
    }

    /// What a user opens for their tools (`/allow add read,execute …`): the
    /// install prefix of python3, node and git as found on PATH, and the
    /// active developer dir the /usr/bin shims exec into (the spec's
    /// Xcode limit). Outside the baseline they would run in no tier.
    fn toolchains() -> Vec<Rule> {
        let mut roots: Vec<String> = Vec::new();
        for name in ["python3", "node", "git"] {
            let Ok(out) = Command::new("/bin/sh").args(["-c", &format!("command -v {name}")]).output() else { continue };
            let found = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if let Ok(real) = std::fs::canonicalize(&found) {
                if let Some(prefix) = real.parent().and_then(Path::parent) {
                    roots.push(prefix.to_string_lossy().into_owned());
                }
            }
        }
        if let Ok(out) = Command::new("/usr/bin/xcode-select").arg("-p").output() {
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !dir.is_empty() {
                roots.push(dir);
            }
        }
        roots.sort();
        roots.dedup();
        roots.retain(|r| r != "/");
        roots.iter().map(|r| rule(r, &["read", "execute"])).collect()
    }

    fn file_rule(path: &str, caps: &[&str]) -> Rule {
        let mut r = rule(path, caps);
        r.recursive = false;
        r
    }

    pub fn quoted(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }

    #[test]
    fn a_managed_deny_holds_against_hidden_code_even_where_a_rule_grants_it() {
        let Some(w) = World::new("managed") else { return };
        let docs = quoted(&w.path("home/docs/readme"));
        let out = quoted(&w.path("ws/readme-copy"));
        let text = serde_json::json!({ "version": 1, "deny": [{ "path": w.path("home/docs"), "access": { "read": true, "write": true } }] });
        let managed = super::managed(text);
        for enforce in [Enforce::Full, Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let mine = vec![rule(&w.path("home"), &["read", "write", "create", "delete"])];
            let mut req = w.request(enforce, mine.clone());
            req.managed = Some(managed.clone());
            let mut probes = vec![
                format!("cat {docs}"),
                format!("echo x >> {docs}"),
                format!("sh -c 'cat {}'", w.path("home/docs/readme")),
                format!("mv {docs} {out} && cat {out}"),
                format!("mv {} {}", quoted(&w.path("home/docs")), quoted(&w.path("home/docs-moved"))),
            ];
            if program("python3").is_some() {
                probes.push(format!("python3 -c \"print(open({docs}).read())\""));
                probes.push(format!("python3 -c \"import os; os.rename({docs}, {out})\""));
            }
            for probe in &probes {
                refused(&w.sh(&req, probe), &format!("{enforce:?}: `{probe}` under a managed deny"));
                assert_eq!(w.read("home/docs/readme").as_deref(), Some(SECRET), "{enforce:?}: `{probe}` changed or moved the denied file");
            }
            // The rule's grant beside it still works, and without the
            // managed policy the same rule opens the file (the test can fail).
            ok(&w.sh(&req, &format!("cat {}", quoted(&w.path("home/notes.txt")))), "reading beside the denied folder");
            ok(&w.sh(&w.request(enforce, mine), &format!("cat {docs}")), "the control read");
        }
    }

    #[test]
    fn a_repositorys_hooks_and_config_are_refused_to_every_writer_while_git_keeps_its_lock_files() {
        let Some(w) = World::new("hooks") else { return };
        std::fs::create_dir_all(w.path("ws/.git/hooks")).unwrap();
        w.write("ws/.git/config", "[core]\n");
        w.write("ws/.git/index", "i");
        let hook = quoted(&w.path("ws/.git/hooks/pre-commit"));
        let config = quoted(&w.path("ws/.git/config"));
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            // What a line of git's own carries: delete in the repository.
            let mut req = w.request(enforce, vec![]);
            req.grants = vec![rule(&w.path("ws/.git"), &["delete"])];
            // git's lock-file dance inside `.git` still works…
            ok(&w.sh(&req, "echo j > .git/index.lock && mv .git/index.lock .git/index"), "a lock file renamed over the index");
            // …while every writer of a surface is refused.
            let mut writers = vec![
                format!("echo x > {hook}"),
                format!("mkdir {}", quoted(&w.path("ws/.git/hooks/x"))),
                format!("echo x >> {config}"),
                format!("cp {config} .git/config.new && mv .git/config.new {config}"),
                format!("rm -f {config}"),
                "mv .git/hooks .git/hooks-old".to_string(),
                "echo x > .gitmodules".to_string(),
            ];
            if program("python3").is_some() {
                writers.push(format!("python3 -c \"open({hook}, 'w').write('x')\""));
            }
            for writer in &writers {
                let _ = w.sh(&req, writer);
                assert!(!w.exists("ws/.git/hooks/pre-commit") && !w.exists("ws/.git/hooks/x"), "{enforce:?}: `{writer}` planted a hook");
                assert!(w.exists("ws/.git/hooks"), "{enforce:?}: `{writer}` moved the hooks folder");
                assert_eq!(w.read("ws/.git/config").as_deref(), Some("[core]\n"), "{enforce:?}: `{writer}` changed the git config");
                assert!(!w.exists("ws/.gitmodules"), "{enforce:?}: `{writer}` made .gitmodules");
            }
            // A rule naming the config opens it (`git config`, once allowed).
            let mut named = w.request(enforce, vec![rule(&w.path("ws/.git/config"), &["write"])]);
            named.grants = req.grants.clone();
            ok(&w.sh(&named, &format!("echo '[user]' >> {config}")), "writing a config a rule names");
            w.write("ws/.git/config", "[core]\n");
        }
    }

    #[test]
    fn the_hosts_temp_folders_and_a_deployed_applications_env_are_shut_by_pattern_while_the_temp_folder_stays_open() {
        let Some(w) = World::new("host-state") else { return };
        let id = std::process::id() % 10_000;
        let spill = format!("/tmp/dsh-spill-sb{id:04}");
        let _ = std::fs::remove_dir_all(&spill);
        std::fs::create_dir_all(format!("{spill}/session-0123456789ab")).unwrap();
        std::fs::write(format!("{spill}/session-0123456789ab/a-bash.txt"), SECRET).unwrap();
        // Under /var, which the macOS baseline opens for reading; removed
        // with the test, pass or fail.
        let www_made = !std::path::Path::new("/var/www").exists();
        let app = format!("/var/www/dsh-allow-sb-{id}");
        std::fs::create_dir_all(&app).unwrap();
        let users = format!("/tmp/dsh-allow-sb-report-{id}.log");
        let _cleanup = Cleanup(vec![spill.clone(), app.clone(), users.clone(), format!("{users}.new")], www_made);
        std::fs::write(format!("{app}/.env"), SECRET).unwrap();
        std::fs::write(format!("{app}/README"), "an app\n").unwrap();
        std::fs::write(&users, "report\n").unwrap();
        let session = quoted(&format!("{spill}/session-0123456789ab"));
        for enforce in [Enforce::Full, Enforce::Guarded] {
            let req = w.request(enforce, vec![]);
            refused(&w.sh(&req, &format!("cat {session}/a-bash.txt")), "reading the host's spilled result");
            refused(&w.sh(&req, &format!("echo x > {session}/planted")), "writing into the host's spill folder");
            refused(&w.sh(&req, &format!("mv {session} {session}-gone")), "moving the host's session folder away");
            refused(&w.sh(&req, &format!("cat {}", quoted(&format!("{app}/.env")))), "reading an application's .env");
            ok(&w.sh(&req, &format!("cat {}", quoted(&format!("{app}/README")))), "reading the application's other files");
            ok(&w.sh(&req, &format!("cat {} && echo y > {}", quoted(&users), quoted(&format!("{users}.new")))), "a user's file in /tmp, and a new one");
            assert!(std::path::Path::new(&format!("{spill}/session-0123456789ab/a-bash.txt")).exists(), "{enforce:?}: the session folder moved");
        }
    }

    /// Paths a test put outside its world, removed when it ends (and
    /// `/var/www` when the test made it).
    struct Cleanup(Vec<String>, bool);

    impl Drop for Cleanup {
        fn drop(&mut self) {
            for p in &self.0 {
                let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
            }
            if self.1 {
                let _ = std::fs::remove_dir("/var/www");
            }
        }
    }

    #[test]
    fn the_permission_store_is_refused_to_every_writer_even_under_a_granted_parent() {
        let Some(w) = World::new("store") else { return };
        let store = quoted(&w.path("home/.dsh/dsh-allow.json"));
        let dir = quoted(&w.path("home/.dsh"));
        let other = quoted(&w.path("home/.dsh/other"));
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = w.request(enforce, vec![rule(&w.path("home/.dsh"), &["read", "write", "create", "delete"])]);
            // The parent's rule is in force: its other entries change.
            ok(&w.sh(&req, &format!("echo changed > {other}")), "writing beside the store");
            let mut writers = vec![
                format!("echo x > {store}"),
                format!("echo x >> {store}"),
                format!(": > {store}"),
                format!("cp {other} {store}"),
                format!("mv {other} {store}"),
                format!("ln -sf {other} {store}"),
                format!("rm -f {store}"),
                format!("touch {store}"),
                format!("chmod 600 {store}"),
                format!("/usr/bin/xattr -w dsh.test x {store}"),
                format!("perl -pi -e s/./x/ {store}"),
                format!("sh -c 'sh -c \"echo x > {}\"'", w.path("home/.dsh/dsh-allow.json")),
                format!("mv {dir} {dir}-moved"),
            ];
            if program("python3").is_some() {
                writers.push(format!("python3 -c \"open({store}, 'w').write('x')\""));
                writers.push(format!("python3 -c \"import os; os.truncate({store}, 0)\""));
                writers.push(format!("python3 -c \"import os; os.replace({other}, {store})\""));
                writers.push(format!("python3 -c \"import os; os.setxattr({store}, 'user.dsh', b'x')\""));
                writers.push(format!("python3 -c \"import os; os.utime({store}, (0, 0))\""));
            }
            if program("node").is_some() {
                writers.push(format!("node -e \"require('fs').writeFileSync({store}, 'x')\""));
                writers.push(format!("node -e \"require('fs').rmSync({store})\""));
            }
            writers.push(format!("rm -rf {dir}"));
            let stamp = std::fs::metadata(w.root.join("home/.dsh/dsh-allow.json")).unwrap().modified().unwrap();
            for writer in &writers {
                let _ = w.sh(&req, writer);
                assert_eq!(w.read("home/.dsh/dsh-allow.json").as_deref(), Some("{}"), "{enforce:?}: `{writer}` changed the store");
                assert!(w.exists("home/.dsh"), "{enforce:?}: `{writer}` removed the store's folder");
                let meta = std::fs::symlink_metadata(w.root.join("home/.dsh/dsh-allow.json")).unwrap();
                assert!(meta.file_type().is_file(), "{enforce:?}: `{writer}` replaced the store");
                assert_eq!(meta.modified().unwrap(), stamp, "{enforce:?}: `{writer}` changed the store's times");
                if !w.exists("home/.dsh/other") {
                    w.write("home/.dsh/other", "other");
                }
            }
        }
    }

    #[test]
    fn sqlite_writes_in_the_workspace_remove_their_journal_and_other_removals_stay_refused() {
        let Some(w) = World::new("sqlite") else { return };
        if program("sqlite3").is_none() {
            return;
        }
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = w.request(enforce, vec![]);
            // Unfenced, a database with a row: the fenced calls find it there.
            let _ = std::fs::remove_file(w.root.join("ws/app.db"));
            let made = Command::new("sqlite3").arg(w.path("ws/app.db")).arg("create table t(x); insert into t values (1)").status().unwrap();
            assert!(made.success());
            // Each commit makes the rollback journal and removes it again;
            // WAL mode's -wal and -shm go when the last connection closes.
            ok(&w.sh(&req, "sqlite3 app.db 'insert into t values (2)'"), &format!("{enforce:?}: a write to a database in the workspace"));
            ok(&w.sh(&req, "sqlite3 app.db 'pragma journal_mode=wal; insert into t values (3)'"), &format!("{enforce:?}: a write in WAL mode"));
            for sidecar in ["ws/app.db-journal", "ws/app.db-wal", "ws/app.db-shm"] {
                assert!(!w.exists(sidecar), "{enforce:?}: {sidecar} was left behind");
            }
            let count = Command::new("sqlite3").arg(w.path("ws/app.db")).arg("select count(*) from t").output().unwrap();
            assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), "3", "{enforce:?}");
            // The pattern reaches only those names: the workspace's other entries stay.
            refused(&w.sh(&req, "rm a"), &format!("{enforce:?}: rm beside the database"));
            refused(&w.sh(&req, "rm app.db"), &format!("{enforce:?}: rm of the database itself"));
            assert!(w.exists("ws/a") && w.exists("ws/app.db"));
        }
    }

    #[test]
    fn removals_are_refused_while_write_and_create_work_and_a_delete_grant_allows_them() {
        let Some(w) = World::new("delete") else { return };
        let python = program("python3").is_some();
        let node = program("node").is_some();
        let removals = |w: &World| {
            let mut v = vec![
                ("rm", "rm a".to_string(), "ws/a"),
                ("rmdir", "rmdir emptydir".to_string(), "ws/emptydir"),
                ("rename", "mv existing renamed".to_string(), "ws/existing"),
                ("a grandchild's rm", "sh -c 'sh -c \"rm a\"'".to_string(), "ws/a"),
            ];
            if python {
                v.push(("python os.remove", "python3 -c \"import os; os.remove('a')\"".into(), "ws/a"));
                v.push(("python -> rm", "python3 -c \"import subprocess, sys; sys.exit(subprocess.call(['rm', 'a']))\"".into(), "ws/a"));
            }
            if node {
                v.push(("node fs.rmSync", "node -e \"require('fs').rmSync('a')\"".into(), "ws/a"));
            }
            let _ = w;
            v
        };
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = w.request(enforce, vec![]);
            for (what, cmd, target) in removals(&w) {
                refused(&w.sh(&req, &cmd), what);
                assert!(w.exists(target), "{enforce:?}: {what} removed {target}");
            }
            ok(&w.sh(&req, "echo more >> existing"), "writing an existing file in the workspace");
            ok(&w.sh(&req, "echo new > made && mkdir made-dir"), "creating in the workspace");
            assert_eq!(w.read("ws/made").as_deref(), Some("new\n"));
            std::fs::remove_file(w.root.join("ws/made")).unwrap();
            std::fs::remove_dir(w.root.join("ws/made-dir")).unwrap();
        }
        let req = w.request(Enforce::Guarded, vec![rule(&w.path("ws"), &["delete"])]);
        for (what, cmd, target) in removals(&w) {
            ok(&w.sh(&req, &cmd), &format!("{what} after a delete grant"));
            assert!(!w.exists(target), "{what} left {target}");
            // Put back what the next removal needs.
            if !w.exists("ws/a") {
                w.write("ws/a", "a");
            }
            if !w.exists("ws/emptydir") {
                std::fs::create_dir(w.root.join("ws/emptydir")).unwrap();
            }
            if !w.exists("ws/existing") {
                std::fs::rename(w.root.join("ws/renamed"), w.root.join("ws/existing")).unwrap();
            }
        }
    }

    #[test]
    fn write_and_create_are_closed_separately_and_create_alone_makes_and_fills_a_file() {
        let Some(w) = World::new("write-create") else { return };
        let out = w.path("elsewhere");
        let existing = quoted(&w.path("elsewhere/existing"));
        let fresh = quoted(&w.path("elsewhere/new"));

        let write_only = w.request(Enforce::Guarded, vec![rule(&out, &["read", "write"])]);
        ok(&w.sh(&write_only, &format!("echo changed > {existing}")), "changing an existing file under a write rule");
        assert_eq!(w.read("elsewhere/existing").as_deref(), Some("changed\n"));
        refused(&w.sh(&write_only, &format!("echo x > {fresh}")), "making a file under a write-only rule");
        assert!(!w.exists("elsewhere/new"));

        let create_only = w.request(Enforce::Guarded, vec![rule(&out, &["read", "create"])]);
        ok(&w.sh(&create_only, &format!("echo filled > {fresh}")), "making and filling a file under a create-only rule");
        assert_eq!(w.read("elsewhere/new").as_deref(), Some("filled\n"), "create alone makes and fills a file");
        refused(&w.sh(&create_only, &format!("echo more >> {existing}")), "changing an existing file under a create-only rule");
        assert_eq!(w.read("elsewhere/existing").as_deref(), Some("changed\n"));
    }

    #[test]
    fn reads_are_refused_for_every_reader_and_grandchild_and_a_read_rule_reopens_them() {
        let Some(w) = World::new("read") else { return };
        let python = program("python3").is_some();
        let node = program("node").is_some();
        for file in ["home/.ssh/id_ed25519", "home/notes.txt", "home/docs/readme"] {
            let f = quoted(&w.path(file));
            let mut readers = vec![
                ("cat", format!("cat {f}")),
                ("bash -c", format!("/bin/bash -c {}", quoted(&format!("cat {f}")))),
                ("sh -> sh -> cat", format!("sh -c 'sh -c \"cat {}\"'", w.path(file))),
            ];
            if python {
                readers.push(("python open().read()", format!("python3 -c \"print(open({f}).read())\"")));
                readers.push(("python -> sh", format!("python3 -c \"import subprocess, sys; sys.exit(subprocess.call('cat {}', shell=True))\"", w.path(file))));
                readers.push(("python -> cat", format!("python3 -c \"import subprocess, sys; sys.exit(subprocess.call(['cat', {f}]))\"")));
            }
            if node {
                readers.push(("node readFileSync", format!("node -e \"console.log(require('fs').readFileSync({f}, 'utf8'))\"")));
                readers.push(("node -> sh", format!("node -e \"require('child_process').execSync('cat {}', {{stdio: 'inherit'}})\"", w.path(file))));
            }
            for enforce in [Enforce::Guarded, Enforce::Full] {
                let req = w.request(enforce, vec![]);
                for (what, cmd) in &readers {
                    refused(&w.sh(&req, cmd), &format!("{enforce:?}: {what} of {file}"));
                }
            }
        }
        // A read rule reopens exactly what it names.
        let req = w.request(Enforce::Guarded, vec![rule(&w.path("home/docs"), &["read"])]);
        let o = w.sh(&req, &format!("cat {}", quoted(&w.path("home/docs/readme"))));
        ok(&o, "cat under a read rule");
        assert!(String::from_utf8_lossy(&o.stdout).contains(SECRET));
        refused(&w.sh(&req, &format!("cat {}", quoted(&w.path("home/notes.txt")))), "cat beside the read rule");
        // Outside the user data areas guarded reads stay open: the platform reads there.
        // (/private is macOS's; the model's machine has /usr there.)
        let system = if w.seatbelt.is_model() { "/usr" } else { "/private" };
        ok(&w.sh(&req, &format!("cat /etc/hosts >/dev/null && ls {system} >/dev/null")), "reads outside /Users and /Volumes under guarded");
    }

    #[test]
    fn sh_python_node_and_git_run_under_the_read_fence() {
        let Some(w) = World::new("tools") else { return };
        let req = w.request(Enforce::Guarded, vec![]);
        let o = w.sh(&req, "echo started");
        ok(&o, "/bin/sh");
        assert_eq!(String::from_utf8_lossy(&o.stdout), "started\n");
        if program("python3").is_some() {
            ok(&w.run(&req, &["python3", "-c", "import json, os, subprocess; print(json.dumps(os.listdir('.')))"]), "python3");
        }
        if program("node").is_some() {
            ok(&w.run(&req, &["node", "-e", "console.log(require('os').platform())"]), "node");
        }
        if program("git").is_some() {
            let o = w.run(&req, &["git", "--version"]);
            ok(&o, "git --version");
            assert!(String::from_utf8_lossy(&o.stdout).starts_with("git version"), "{}", shown(&o));
        }
    }

    #[test]
    fn the_execute_fence_refuses_an_ungranted_binary_and_a_symlink_grant_starts_its_target() {
        let Some(w) = World::new("execute") else { return };
        for d in ["home/bin", "home/opt", "home/links"] {
            std::fs::create_dir_all(w.root.join(d)).unwrap();
        }
        for f in ["home/bin/tool", "home/opt/real-tool"] {
            std::fs::copy("/usr/bin/true", w.root.join(f)).unwrap();
        }
        std::os::unix::fs::symlink(w.root.join("home/opt/real-tool"), w.root.join("home/links/tool")).unwrap();
        let (tool, link) = (w.path("home/bin/tool"), w.path("home/links/tool"));

        for enforce in [Enforce::Guarded, Enforce::Process] {
            let req = w.request(enforce, vec![]);
            refused(&w.run(&req, &[&tool]), &format!("{enforce:?}: an ungranted binary"));
            refused(&w.run(&req, &["/bin/sh", "-c", &quoted(&link)]), &format!("{enforce:?}: an ungranted link"));
            let granted = w.request(enforce, vec![file_rule(&link, &["read", "execute"])]);
            ok(&w.run(&granted, &["/bin/sh", "-c", &quoted(&link)]), &format!("{enforce:?}: the target of a granted link"));
            refused(&w.run(&granted, &[&tool]), &format!("{enforce:?}: a binary beside the granted link"));
        }
        // The writes tier leaves exec to the decision.
        ok(&w.run(&w.request(Enforce::Writes, vec![]), &[&tool]), "writes: exec is not fenced");
    }

    #[test]
    fn a_profile_the_kernel_rejects_runs_nothing() {
        let Some(w) = World::new("rejected") else { return };
        let req = w.request(Enforce::Guarded, vec![]);
        let mut sbpl = w.profile(&req);
        sbpl.text.push_str("(allow file-write-data (subpath (param \"P0\"))\n"); // one paren short
        let marker = w.path("ws/ran");
        let argv = sbpl.argv(&["/bin/sh".into(), "-c".into(), format!("echo ran > {}", quoted(&marker))]);
        let o = Command::new(w.seatbelt.program()).args(&argv[1..]).current_dir(w.path("ws")).output().unwrap();
        assert!(!o.status.success(), "a broken profile ran:\n{}", shown(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("sandbox-exec"), "sandbox-exec names itself:\n{}", shown(&o));
        assert!(!w.exists("ws/ran"), "the command ran under a profile the kernel rejected");
    }

    #[test]
    fn writes_outside_the_workspace_are_refused_unless_granted() {
        let Some(w) = World::new("outside") else { return };
        let targets = [w.path("elsewhere/new"), w.path("home/new"), w.path("new-at-root")];
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = w.request(enforce, vec![]);
            for t in &targets {
                refused(&w.sh(&req, &format!("echo x > {}", quoted(t))), &format!("{enforce:?}: creating {t}"));
            }
            refused(&w.sh(&req, &format!("echo x >> {}", quoted(&w.path("elsewhere/existing")))), &format!("{enforce:?}: changing a file outside"));
            ok(&w.sh(&req, "echo x > inside"), "creating in the workspace");
            ok(&w.sh(&req, "echo x > \"${TMPDIR:-/tmp}/dsh-allow-seatbelt-$$\" && rm \"${TMPDIR:-/tmp}/dsh-allow-seatbelt-$$\""), "the temp folders");
            ok(&w.sh(&req, "echo x > /dev/null"), "/dev/null");
        }
        let req = w.request(Enforce::Guarded, vec![rule(&w.path("elsewhere"), &["write", "create"])]);
        ok(&w.sh(&req, &format!("echo x > {}", quoted(&targets[0]))), "creating under a write, create rule");
        refused(&w.sh(&req, &format!("echo x > {}", quoted(&targets[1]))), "creating beside the rule");
    }

    /// Side doors (issue 32): a unix socket outside the workspace — a
    /// daemon's, an agent's — is refused unless a rule with write names
    /// it; one in the workspace (the call's own test server) is reached.
    #[test]
    fn a_unix_socket_outside_the_workspace_is_refused_unless_a_write_rule_names_it() {
        let Some(w) = World::new("sockets") else { return };
        let Some(python) = program("python3") else { return };
        let daemon = w.path("elsewhere/daemon.sock");
        let serve = format!("import socket,time\ns=socket.socket(socket.AF_UNIX); s.bind({daemon:?}); s.listen(); print('ready', flush=True); time.sleep(30)");
        let mut d = Command::new(&python).args(["-c", &serve]).stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(d.stdout.as_mut().unwrap()), &mut line).unwrap();
        let reach = |target: &str| format!("import socket,sys\nc=socket.socket(socket.AF_UNIX)\ntry: c.connect({target:?}); print('reached')\nexcept OSError as e: print('refused', e.errno); sys.exit(1)");
        let own = "import socket,threading\ns=socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen()\nc=socket.socket(socket.AF_UNIX); c.connect('own.sock'); print('reached')";
        for enforce in [Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = w.request(enforce, vec![]);
            refused(&w.run(&req, &[&python, "-c", &reach(&daemon)]), &format!("{enforce:?}: a daemon's socket outside the workspace"));
            ok(&w.run(&req, &[&python, "-c", own]), &format!("{enforce:?}: the call's own socket in the workspace"));
            let _ = std::fs::remove_file(w.path("ws/own.sock"));
        }
        let granted = w.request(Enforce::Guarded, vec![file_rule(&daemon, &["write"])]);
        ok(&w.run(&granted, &[&python, "-c", &reach(&daemon)]), "a socket a write rule names");
        let _ = d.kill();
        let _ = d.wait();
    }

    #[test]
    fn under_full_nothing_leaks_whether_or_not_the_shell_survives_it() {
        let Some(w) = World::new("full") else { return };
        let req = w.request(Enforce::Full, vec![]);
        let o = w.sh(&req, &format!("cat {}; ls /private", quoted(&w.path("home/notes.txt"))));
        assert!(!String::from_utf8_lossy(&o.stdout).contains(SECRET), "{}", shown(&o));
        // The spec: macOS aborts /bin/sh under full, which is why auto lands on guarded.
        eprintln!("full tier here: {}", shown(&o));
    }

    #[test]
    fn a_rule_written_through_a_macos_link_holds_in_both_spellings() {
        let Some(w) = World::new("spellings") else { return };
        // /var/tmp: under /var, a link into /private on a Mac, and outside the temp baseline.
        let dir = format!("/var/tmp/dsh-allow-seatbelt-spell-{}", std::process::id());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = quoted(&format!("{dir}/made"));
        let req = w.request(Enforce::Guarded, vec![rule(&dir, &["write", "create"])]);
        let sbpl = w.profile(&req);
        let spelt: Vec<&str> = sbpl.params.iter().map(|(_, v)| v.as_str()).filter(|v| v.ends_with(&dir[8..])).collect();
        assert!(spelt.contains(&format!("/private{dir}").as_str()) && spelt.contains(&dir.as_str()), "both spellings of {dir}: {spelt:?}");
        ok(&w.run_profile(&sbpl, &["/bin/sh", "-c", &format!("echo x > {target}")]), "creating under a rule written /var/…");
        std::fs::remove_file(format!("{dir}/made")).unwrap();
        if w.seatbelt.is_model() {
            // The same rule with only the spelling as written: the kernel
            // checks the resolved /private name, and nothing matches it.
            let fs = FsHost::from_env();
            let written_only = render_for(&req, &compile(&req, &fs), &fs);
            assert!(!written_only.params.iter().any(|(_, v)| *v == format!("/private{dir}")), "FsHost knows no macOS links here");
            refused(&w.run_profile(&written_only, &["/bin/sh", "-c", &format!("echo x > {target}")]), "creating under a rule spelt only /var/…");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn seatbelt_refuses_a_nested_sandbox_exec_under_any_deny_and_allows_it_under_allow_default_alone() {
        let Some(w) = World::new("nesting") else { return };
        let inner = w.seatbelt.program();
        let nested = |profile: &str| vec!["/bin/sh".to_string(), "-c".into(), format!("{} -p {} /bin/sh -c 'echo inner ran'", quoted(&inner), quoted(profile))];
        // The writes tier leaves exec open, so the inner sandbox-exec starts.
        let req = w.request(Enforce::Writes, vec![]);
        let argv = nested("(version 1)\n(allow default)\n(deny file-write-data (literal \"/x\"))");
        let o = w.run(&req, &argv.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(71), "{}", shown(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("sandbox-exec: sandbox_apply: Operation not permitted"), "{}", shown(&o));
        assert!(!String::from_utf8_lossy(&o.stdout).contains("inner ran"), "{}", shown(&o));
        // However little the inner profile denies (stim#469: `(allow default)` alone is refused too)…
        let argv_allow_all = nested("(version 1)\n(allow default)");
        let o = w.run(&req, &argv_allow_all.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(71), "an (allow default) profile nested under a deny: {}", shown(&o));
        // …while under an outer profile that denies nothing, nesting works (stim#469).
        let outer = Sbpl { text: "(version 1)\n(allow default)\n".into(), params: vec![] };
        let o = w.run_profile(&outer, &argv.iter().map(String::as_str).collect::<Vec<_>>());
        ok(&o, "a sandbox-exec under an (allow default) profile");
        assert!(String::from_utf8_lossy(&o.stdout).contains("inner ran"), "{}", shown(&o));
    }

    /// Random rule sets and (operation, path) probes: the core's verdict
    /// against what Seatbelt (or the model) lets a real process do, under
    /// guarded, the tier macOS users get (the world lies under /Users, so
    /// all five capabilities are fenced there). 400 probes by default;
    /// DSH_ALLOW_DIFFERENTIAL_PROBES=10000 for the long run.
    #[test]
    fn seatbelt_agrees_with_the_core_on_random_probes() {
        use dsh_allow::api::{Mode, Platform};
        use dsh_allow::policy::capability::Capability;
        use dsh_allow::policy::resolve::{Policy, PolicyInput, Spellings};
        use super::random_rules::{rule_set, Xorshift};

        let Some(w) = World::new("differential") else { return };
        let probes: usize = std::env::var("DSH_ALLOW_DIFFERENTIAL_PROBES").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
        // `home/.config/git` is a folder the baseline opens for reading that
        // holds a credential store (`credentials`), probed like any file.
        let dirs = ["ws", "ws/p", "ws/p/q", "elsewhere", "elsewhere/c", "home/d", "home/.config/git"];
        let mut rng = Xorshift::new(0x2545_f491_4f6c_dd1d ^ probes as u64);
        let host = MacHost(FsHost::from_env());
        let (mut mismatches, mut checked, mut metadata) = (0, 0, 0);
        let per_set = 20;
        for set in 0..probes.div_ceil(per_set) {
            for d in dirs {
                std::fs::create_dir_all(w.root.join(d)).unwrap();
                std::fs::copy("/bin/true", w.root.join(d).join("run")).unwrap();
            }
            w.write("home/.config/git/credentials", "https://u:token@example.com\n");
            // Seatbelt attaches every capability to a file as to a folder.
            let rules: Vec<Rule> = rule_set(&mut rng, dirs.len())
                .into_iter()
                .map(|pick| {
                    let d = dirs[pick.dir];
                    if pick.file {
                        file_rule(&w.path(&format!("{d}/f1")), &pick.caps)
                    } else {
                        rule(&w.path(d), &pick.caps)
                    }
                })
                .collect();
            let req = w.request(Enforce::Guarded, rules);
            let sbpl = w.profile(&req);
            let policy = Policy::new(
                &PolicyInput {
                    platform: Platform::Macos,
                    mode: Mode::WorkspaceWrite,
                    home: &req.home,
                    workspace: &req.workspace,
                    harness_home: &req.harness_home,
                    rules: &req.rules,
                    grants: &[],
                    protected_files: &req.protected_files,
                    for_fence: false,
                    managed: None,
                },
                &host,
            );
            for n in 0..per_set.min(probes - set * per_set) {
                let d = dirs[rng.below(dirs.len())];
                for f in ["f1", "f2"] {
                    w.write(&format!("{d}/{f}"), "data\n");
                }
                let (cap, rel, script) = if rng.below(6) == 5 {
                    // Metadata (mode, times, an xattr): Seatbelt's
                    // file-write-mode/-times/-xattr, which `write` carries.
                    metadata += 1;
                    let rel = format!("{d}/f{}", 1 + rng.below(2));
                    let p = quoted(&w.path(&rel));
                    let script = match rng.below(3) {
                        0 => format!("chmod 600 {p}"),
                        1 => format!("touch -d 2000-01-01 {p}"),
                        _ => format!("python3 -c \"import os, sys; os.setxattr(sys.argv[1], 'user.probe', b'1')\" {p}"),
                    };
                    (Capability::Write, rel, script)
                } else {
                    let cap = Capability::ALL[rng.below(5)];
                    let read = if d == "home/.config/git" && rng.below(2) == 0 { "credentials" } else { "f1" };
                    let (rel, script) = match cap {
                        Capability::Read => (format!("{d}/{read}"), format!("cat {}", quoted(&w.path(&format!("{d}/{read}"))))),
                        Capability::Write => (format!("{d}/f2"), format!("echo w >> {}", quoted(&w.path(&format!("{d}/f2"))))),
                        // A redirection makes the file and nothing else (touch would also set its times).
                        Capability::Create => (format!("{d}/new{set}-{n}"), format!(": > {}", quoted(&w.path(&format!("{d}/new{set}-{n}"))))),
                        Capability::Delete => (format!("{d}/f1"), format!("rm {}", quoted(&w.path(&format!("{d}/f1"))))),
                        Capability::Execute => (format!("{d}/run"), quoted(&w.path(&format!("{d}/run")))),
                    };
                    (cap, rel, script)
                };
                let core = policy.resolve(&Spellings::of(&w.path(&rel), &host), cap).granted;
                let kernel = w.run_profile(&sbpl, &["/bin/sh", "-c", &format!("{script} 2>/dev/null")]).status.success();
                checked += 1;
                if core != kernel {
                    mismatches += 1;
                    eprintln!("MISMATCH {} {rel} (`{script}`): core {core}, {} {kernel}; rules {:?}", cap.as_str(), w.seatbelt.label(), req.rules.iter().map(|r| (&r.path, &r.access)).collect::<Vec<_>>());
                }
            }
        }
        super::loud(&format!("differential under the {}: {checked} probes ({metadata} of metadata), {mismatches} mismatches", w.seatbelt.label()));
        assert!(checked >= probes.min(400), "only {checked} probes ran");
        assert_eq!(mismatches, 0, "the {} and the core disagreed {mismatches} times in {checked} probes", w.seatbelt.label());
    }
}
