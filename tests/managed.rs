//! The managed policy on the real kernel (`dsh-allow run`, Landlock): a
//! managed `deny` holds against hidden code the command line does not show
//! (`python3 -c`, a shell it starts) even where the user's own rule grants
//! the path; a managed `ask` opens to a card's one-shot grant and to nothing
//! else; a profile the policy lets no call run under runs nothing. Each
//! test shows its probe succeeding without the managed policy (so it can
//! fail), and runs as root and again as an unprivileged user (uid 65534,
//! through setpriv), whose runner takes the user-namespace path.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use dsh_allow::api::{DecideRequest, Outcome};
use dsh_allow::fs_host::FsHost;
use serde_json::{json, Value};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/users.rs"]
mod users;

use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };
const PATH: &str = "/usr/bin:/bin";
const MANAGED_FILE: &str = "/etc/dsh-allow/managed.json";

struct World {
    base: PathBuf,
    user: Option<u32>,
    runner: PathBuf,
}

impl World {
    fn new(name: &str, user: Option<u32>) -> Option<World> {
        if !users::usable(name, user) {
            return None;
        }
        let who = user.map_or("root".to_string(), |u| u.to_string());
        let base = scratch::root().join(format!("managed-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws/build", "home/.dsh", "home/secrets", "home/notes"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        fs::write(base.join("home/secrets/key"), "SECRET-KEY\n").unwrap();
        fs::write(base.join("home/notes/todo.txt"), "notes\n").unwrap();
        fs::write(base.join("ws/build/x"), "x").unwrap();
        let runner = base.join("dsh-allow");
        users::copy_runner(BIN, &runner);
        fs::set_permissions(&runner, fs::Permissions::from_mode(0o755)).unwrap();
        // The user must reach its world: every folder above it searchable.
        let mut up = base.parent();
        while let Some(d) = up {
            if user.is_some() && d.metadata().map(|m| m.permissions().mode() & 0o001 == 0).unwrap_or(false) {
                eprintln!("SKIP {name} as an unprivileged user: {} is not searchable by others", d.display());
                let _ = fs::remove_dir_all(&base);
                return None;
            }
            up = d.parent();
        }
        users::own(&base, user);
        Some(World { base, user, runner })
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    /// The managed policy an administrator's file would give, as the plugin
    /// passes it (`managedPolicy` of the file's text).
    fn managed(&self, text: Value) -> Value {
        let source = dsh_allow::policy::managed::Source { file: MANAGED_FILE.into(), text: Some(text.to_string()), error: None };
        serde_json::to_value(dsh_allow::policy::managed::merge(&[source])).unwrap()
    }

    /// A profile with the user's `rules`, this call's one-shot `grants` and,
    /// when given, the managed policy.
    fn profile(&self, rules: Value, grants: Value, managed: Option<&Value>) -> Value {
        let mut p = json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": rules, "grants": grants,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json"), MANAGED_FILE],
        });
        if let Some(m) = managed {
            p["managed"] = m.clone();
        }
        p
    }

    /// `bash -c script` as this world's user, in the workspace, under `profile`.
    fn run(&self, profile: &Value, script: &str) -> Output {
        let runner = self.runner.to_string_lossy().into_owned();
        let text = profile.to_string();
        let mut argv = users::become_user(self.user);
        argv.extend([runner, "run".into(), "--profile-json".into(), text, "--".into(), "/bin/bash".into(), "-c".into(), script.into()]);
        users::output(Command::new(&argv[0]).args(&argv[1..]).current_dir(self.base.join("ws")).env("HOME", self.base.join("home")).env("PATH", PATH).stdin(Stdio::null()))
    }

    fn decide(&self, command: &str, rules: Value, grants: Value, managed: &Value) -> dsh_allow::api::Decision {
        dsh_allow::decide::forget_reused();
        let req: DecideRequest = serde_json::from_value(json!({
            "command": command, "cwd": self.p("ws"), "workspace": self.p("ws"), "home": self.p("home"),
            "harnessHome": self.p("home/.dsh"), "platform": "linux", "mode": "workspace-write",
            "rules": rules, "grants": grants, "protectedFiles": [self.p("home/.dsh/dsh-allow.json"), MANAGED_FILE],
            "fence": ["read", "write", "create", "delete", "execute"], "fenceLevel": "full", "persistence": "shut",
            "managed": managed,
        }))
        .unwrap();
        dsh_allow::decide::decide(&req, &FsHost::with_path(PATH))
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn text(o: &Output) -> String {
    format!("exit {:?}\nstdout: {}\nstderr: {}", o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn rule(id: &str, path: &str, caps: &[&str]) -> Value {
    let access: serde_json::Map<String, Value> = caps.iter().map(|c| (c.to_string(), Value::Bool(true))).collect();
    json!({ "id": id, "path": path, "recursive": true, "access": access })
}

/// Hidden code reading, writing and moving the denied folder's key, and a
/// shell the line starts doing the same.
fn probes(w: &World) -> Vec<String> {
    let key = w.p("home/secrets/key");
    let out = w.p("ws/key-copy");
    vec![
        format!("python3 -c 'print(open(\"{key}\").read())'"),
        format!("python3 -c 'open(\"{key}\", \"a\").write(\"x\")'"),
        format!("python3 -c 'import os; os.rename(\"{key}\", \"{out}\")' && cat {out}"),
        format!("sh -c 'cat {key}'"),
        format!("python3 -c 'import subprocess; print(subprocess.run([\"cat\", \"{key}\"], capture_output=True, check=True).stdout)'"),
    ]
}

fn a_managed_deny_holds_against_hidden_code_where_a_user_rule_grants_the_path(user: Option<u32>) {
    let Some(w) = World::new("deny", user) else { return };
    let mine = json!([rule("mine", &w.p("home"), &["read", "write", "create", "delete"])]);
    let managed = w.managed(json!({ "version": 1, "deny": [{ "path": "~/secrets", "recursive": true, "access": { "read": true, "write": true } }] }));
    let fenced = w.profile(mine.clone(), json!([]), Some(&managed));
    let unmanaged = w.profile(mine.clone(), json!([]), None);
    for probe in probes(&w) {
        let o = w.run(&fenced, &probe);
        assert!(!o.status.success() && !String::from_utf8_lossy(&o.stdout).contains("SECRET"), "the managed deny did not hold against `{probe}`:\n{}", text(&o));
    }
    assert_eq!(fs::read_to_string(w.p("home/secrets/key")).unwrap(), "SECRET-KEY\n", "the key changed or moved");
    // Without the managed policy the user's rule opens it: the probes can fail.
    let o = w.run(&unmanaged, &probes(&w)[0]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("SECRET"), "the control read failed:\n{}", text(&o));
    // What the user's rule grants beside the denied folder still works.
    let o = w.run(&fenced, &format!("cat {} && echo more >> {}", w.p("home/notes/todo.txt"), w.p("home/notes/todo.txt")));
    assert!(o.status.success(), "the rest of the rule's folder was shut too:\n{}", text(&o));
    // The decision agrees: the line that shows the read is refused by it.
    let d = w.decide(&format!("cat {}", w.p("home/secrets/key")), mine, json!([]), &managed);
    assert_eq!(d.decision, Outcome::Refuse, "{}", d.reason);
    assert!(d.managed.is_some_and(|m| m.decided));
}

#[test]
fn a_managed_deny_holds_against_hidden_code_where_a_user_rule_grants_the_path_as_root() {
    a_managed_deny_holds_against_hidden_code_where_a_user_rule_grants_the_path(None);
}

#[test]
fn a_managed_deny_holds_against_hidden_code_where_a_user_rule_grants_the_path_as_an_unprivileged_user() {
    a_managed_deny_holds_against_hidden_code_where_a_user_rule_grants_the_path(Some(NOBODY));
}

fn a_managed_deny_holds_under_the_guarded_tier_too(user: Option<u32>) {
    let Some(w) = World::new("guarded", user) else { return };
    let mine = json!([rule("mine", &w.p("home"), &["read"])]);
    let managed = w.managed(json!({ "version": 1, "deny": [{ "path": "~/secrets", "access": { "read": true } }] }));
    let mut fenced = w.profile(mine.clone(), json!([]), Some(&managed));
    fenced["enforce"] = json!("guarded");
    let mut unmanaged = w.profile(mine, json!([]), None);
    unmanaged["enforce"] = json!("guarded");
    let probe = &probes(&w)[0];
    let o = w.run(&fenced, probe);
    assert!(!o.status.success() && !String::from_utf8_lossy(&o.stdout).contains("SECRET"), "guarded let the denied read through:\n{}", text(&o));
    assert!(w.run(&unmanaged, probe).status.success(), "the control read failed");
}

#[test]
fn a_managed_deny_holds_under_the_guarded_tier_too_as_root() {
    a_managed_deny_holds_under_the_guarded_tier_too(None);
}

#[test]
fn a_managed_deny_holds_under_the_guarded_tier_too_as_an_unprivileged_user() {
    a_managed_deny_holds_under_the_guarded_tier_too(Some(NOBODY));
}

/// A managed `ask` on delete in `build`: hidden code gets no delete there
/// from the user's rule, nor from a one-shot grant wider than the asked
/// folder; the card's Allow once (a grant written for the path it named)
/// opens exactly that.
fn a_managed_ask_opens_only_to_a_cards_grant(user: Option<u32>) {
    let Some(w) = World::new("ask", user) else { return };
    let mine = json!([rule("mine", &w.p("ws"), &["delete"])]);
    let managed = w.managed(json!({ "version": 1, "ask": [{ "path": w.p("ws/build"), "access": { "delete": true } }] }));
    let hidden = "python3 -c 'import os; os.remove(\"build/x\")'";
    let o = w.run(&w.profile(mine.clone(), json!([]), Some(&managed)), hidden);
    assert!(!o.status.success() && w.base.join("ws/build/x").exists(), "the user's rule opened an asked delete:\n{}", text(&o));
    let wide = json!([rule("once-wide", &w.p("ws"), &["delete"])]);
    let o = w.run(&w.profile(json!([]), wide, Some(&managed)), hidden);
    assert!(!o.status.success() && w.base.join("ws/build/x").exists(), "a grant wider than the asked folder opened it:\n{}", text(&o));

    // The card: the gate asks (and offers no Always allow), Allow once binds
    // the proposal as this call's grant, and the call runs under it.
    let command = "rm build/x";
    let gate = w.decide(command, mine.clone(), json!([]), &managed);
    assert_eq!(gate.decision, Outcome::Prompt, "{}", gate.reason);
    assert_eq!(gate.answers(), vec!["Deny", "Allow once"]);
    let once: Vec<Value> = gate.proposals.iter().enumerate().map(|(i, p)| json!({ "id": format!("once-{i}"), "path": p.path, "recursive": p.recursive, "access": p.access })).collect();
    let o = w.run(&w.profile(mine.clone(), json!(once), Some(&managed)), command);
    assert!(o.status.success() && !w.base.join("ws/build/x").exists(), "Allow once did not open the asked delete:\n{}", text(&o));

    // Control: without the managed policy the user's rule alone lets it go.
    fs::write(w.base.join("ws/build/x"), "x").unwrap();
    users::own(&w.base.join("ws/build"), w.user);
    let o = w.run(&w.profile(mine, json!([]), None), hidden);
    assert!(o.status.success() && !w.base.join("ws/build/x").exists(), "the control delete failed:\n{}", text(&o));
}

#[test]
fn a_managed_ask_opens_only_to_a_cards_grant_as_root() {
    a_managed_ask_opens_only_to_a_cards_grant(None);
}

#[test]
fn a_managed_ask_opens_only_to_a_cards_grant_as_an_unprivileged_user() {
    a_managed_ask_opens_only_to_a_cards_grant(Some(NOBODY));
}

/// A profile under a mode the policy does not list, a weaker fence than it
/// requires, or a managed file at fault: the runner runs nothing.
fn a_profile_the_managed_policy_refuses_runs_nothing(user: Option<u32>) {
    let Some(w) = World::new("refused", user) else { return };
    let marker = w.p("ws/ran");
    let script = format!("touch {marker}");
    let cases = [
        (w.managed(json!({ "version": 1, "modes": ["read-only"] })), "full", "allows only the sandbox modes read-only"),
        (w.managed(json!({ "version": 1, "requireFence": "full" })), "guarded", "requires the kernel fence at full"),
        (w.managed(json!({ "version": 2 })), "full", "version: 2"),
    ];
    for (managed, enforce, says) in cases {
        let mut profile = w.profile(json!([]), json!([]), Some(&managed));
        profile["enforce"] = json!(enforce);
        let o = w.run(&profile, &script);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && stderr.contains(says) && stderr.contains("nothing was run"), "{says}:\n{}", text(&o));
        assert!(!w.base.join("ws/ran").exists(), "{says}: the command ran");
    }
    let o = w.run(&w.profile(json!([]), json!([]), None), &script);
    assert!(o.status.success() && w.base.join("ws/ran").exists(), "the control did not run:\n{}", text(&o));
}

#[test]
fn a_profile_the_managed_policy_refuses_runs_nothing_as_root() {
    a_profile_the_managed_policy_refuses_runs_nothing(None);
}

#[test]
fn a_profile_the_managed_policy_refuses_runs_nothing_as_an_unprivileged_user() {
    a_profile_the_managed_policy_refuses_runs_nothing(Some(NOBODY));
}
