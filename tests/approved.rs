//! Approved means it works (issue 33), on the real kernel: each line of the
//! issue's table is decided by the core, a card answered "Allow once" exactly
//! as the plugin binds it (the proposals as one-shot grants, the decision's
//! call grants and the folders its line makes), and run under `dsh-allow
//! run` — one command, exit 0, the chain after it running — and nothing
//! wider than approved: what the call was not granted stays refused in the
//! same call. Each runs as root and again as an unprivileged user (uid
//! 65534, through setpriv), whose runner takes the user-namespace path.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "support/scratch.rs"]
mod scratch;

use dsh_allow::api::{DecideRequest, Decision, Outcome};
use dsh_allow::fs_host::FsHost;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-allow");
const NOBODY: u32 = 65534;

/// A workspace and a home outside the temp folders (which the baseline opens
/// fully and would hide every refusal), and a copy of the runner the user
/// may start.
struct World {
    base: PathBuf,
    user: Option<u32>,
    runner: PathBuf,
}

impl World {
    fn new(name: &str, user: Option<u32>) -> Option<World> {
        if dsh_allow::runner::landlock_abi() == 0 {
            assert!(std::env::var("DSH_ALLOW_REQUIRE_LANDLOCK").is_err(), "Landlock is required but this kernel has none");
            eprintln!("SKIP {name}: this kernel has no Landlock");
            return None;
        }
        if user.is_some() && (unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists()) {
            eprintln!("SKIP {name} as an unprivileged user: needs root and setpriv to become one here");
            return None;
        }
        let who = user.map_or("root".to_string(), |u| u.to_string());
        let base = scratch::root().join(format!("approved-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        let runner = base.join("dsh-allow");
        fs::copy(BIN, &runner).unwrap();
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
        Some(World { base, user, runner })
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.base.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// Hand the world to the test's user (after its files are laid out).
    fn own(&self) {
        if let Some(u) = self.user {
            assert!(Command::new("chown").arg("-R").arg(format!("{u}:{u}")).arg(&self.base).status().unwrap().success());
        }
    }

    fn request(&self, command: &str, grants: &[Value]) -> DecideRequest {
        serde_json::from_value(json!({
            "command": command, "cwd": self.p("ws"), "workspace": self.p("ws"), "home": self.p("home"),
            "harnessHome": self.p("home/.dsh"), "platform": "linux", "mode": "workspace-write",
            "grants": grants, "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
            "fence": ["read", "write", "create", "delete", "execute"], "persistence": "shut",
        }))
        .unwrap()
    }

    /// The gate's decision, then "Allow once" as the plugin binds it
    /// (plugin/approval.js: the proposals as one-shot grants), then the
    /// guard's decision with them, which the call runs under. Returns the
    /// gate's decision and the profile.
    fn approve_once(&self, command: &str) -> (Decision, Value) {
        // The PATH the call runs with (run, below).
        let host = FsHost::with_path("/usr/bin:/bin");
        let gate = dsh_allow::decide::decide(&self.request(command, &[]), &host);
        let once: Vec<Value> = match gate.decision {
            Outcome::Allow => Vec::new(),
            Outcome::Prompt => gate
                .proposals
                .iter()
                .enumerate()
                .map(|(i, p)| json!({ "id": format!("once-{i}"), "path": p.path, "recursive": p.recursive, "access": p.access }))
                .collect(),
            Outcome::Refuse => panic!("`{command}` is refused: {}", gate.reason),
        };
        let guard = dsh_allow::decide::decide(&self.request(command, &once), &host);
        assert_eq!(guard.decision, Outcome::Allow, "`{command}` answered Allow once is still not allowed: {}", guard.reason);
        let mut grants = once;
        grants.extend(guard.fence_grants.iter().map(|r| serde_json::to_value(r).unwrap()));
        let profile = json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [], "grants": grants,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")], "folders": guard.folders,
        });
        (gate, profile)
    }

    /// `bash -c script` as this world's user, in the workspace, under `profile`.
    fn run(&self, profile: &Value, script: &str) -> Output {
        let text = profile.to_string();
        let runner = self.runner.to_string_lossy().into_owned();
        let argv = [runner.as_str(), "run", "--profile-json", &text, "--", "/bin/bash", "-c", script];
        let mut c = match self.user {
            Some(u) => {
                let mut c = Command::new("/usr/bin/setpriv");
                c.args([format!("--reuid={u}"), format!("--regid={u}"), "--clear-groups".into()]).args(argv);
                c
            }
            None => {
                let mut c = Command::new(argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        c.current_dir(self.base.join("ws"))
            .env("HOME", self.base.join("home"))
            .env("PATH", "/usr/bin:/bin")
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Decide, answer Allow once, run: the output.
    fn approved(&self, command: &str) -> (Decision, Output) {
        let (d, profile) = self.approve_once(command);
        (d, self.run(&profile, command))
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn for_each_user(name: &str, f: impl Fn(&World)) {
    for user in [None, Some(NOBODY)] {
        if let Some(w) = World::new(name, user) {
            f(&w);
        }
    }
}

#[test]
fn rm_rf_build_then_make_runs_to_the_end_and_removes_build_itself() {
    for_each_user("rm-build", |w| {
        w.write("ws/build/obj/main.o", "x");
        w.write("ws/Makefile", "all:\n\t@echo made\n");
        w.write("ws/keep.txt", "mine\n");
        w.own();
        let (d, out) = w.approved("rm -rf build && make");
        assert_eq!(d.decision, Outcome::Prompt, "delete build asks first");
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("made"), "the chain after rm ran: {}", text(&out));
        assert!(!w.base.join("ws/build").exists(), "build itself is gone");
        // Nothing wider: the same grant does not reach the folder around build.
        let (_, profile) = w.approve_once("rm -rf build");
        let out = w.run(&profile, "rm keep.txt");
        assert!(!out.status.success() && w.base.join("ws/keep.txt").exists(), "a sibling went: {}", text(&out));
    });
}

#[test]
fn rm_one_file_then_echo_runs_to_the_end() {
    for_each_user("rm-file", |w| {
        w.write("ws/out.md", "# out\n");
        w.write("ws/other.md", "# other\n");
        w.own();
        let (d, out) = w.approved("rm out.md && echo ok");
        assert_eq!(d.decision, Outcome::Prompt);
        assert!(out.status.success() && text(&out).contains("ok"), "{}", text(&out));
        assert!(!w.base.join("ws/out.md").exists());
        let (_, profile) = w.approve_once("rm out.md");
        let out = w.run(&profile, "rm other.md");
        assert!(!out.status.success() && w.base.join("ws/other.md").exists(), "the grant reached a sibling: {}", text(&out));
    });
}

#[test]
fn mv_with_the_source_approved_moves_it_and_never_replaces_an_entry_it_may_not_remove() {
    for_each_user("mv", |w| {
        w.write("ws/moved.txt", "moving\n");
        w.write("ws/docs/kept.txt", "kept\n");
        w.own();
        let (d, out) = w.approved("mv moved.txt docs/moved.txt && echo moved");
        assert_eq!(d.decision, Outcome::Prompt);
        assert!(out.status.success() && text(&out).contains("moved"), "{}", text(&out));
        assert_eq!(fs::read_to_string(w.base.join("ws/docs/moved.txt")).unwrap(), "moving\n");
        assert!(!w.base.join("ws/moved.txt").exists());
        // Approved: delete of the source. Not approved: replacing kept.txt.
        w.write("ws/again.txt", "again\n");
        w.own();
        let (_, profile) = w.approve_once("mv again.txt docs/fresh.txt");
        let out = w.run(&profile, "mv again.txt docs/kept.txt");
        assert!(!out.status.success(), "mv replaced an entry nobody approved removing: {}", text(&out));
        assert_eq!(fs::read_to_string(w.base.join("ws/docs/kept.txt")).unwrap(), "kept\n");
        assert!(w.base.join("ws/again.txt").exists());
    });
}

#[test]
fn a_new_folder_in_home_and_a_file_in_it_are_made_in_one_approved_command() {
    for_each_user("notes", |w| {
        w.write("home/notes-other/x", "x\n");
        w.own();
        let (d, out) = w.approved("mkdir -p ~/notes2 && echo x > ~/notes2/todo.txt && echo done");
        assert_eq!(d.decision, Outcome::Prompt);
        assert!(d.widened.is_empty(), "nothing is carried wider here: {:?}", d.widened);
        assert!(out.status.success() && text(&out).contains("done"), "{}", text(&out));
        assert_eq!(fs::read_to_string(w.base.join("home/notes2/todo.txt")).unwrap(), "x\n");
        // Nothing wider: home itself did not become writable.
        let (_, profile) = w.approve_once("mkdir -p ~/notes3 && echo x > ~/notes3/todo.txt");
        let out = w.run(&profile, "mkdir -p ~/notes3 && echo y > ~/elsewhere.txt");
        assert!(!out.status.success() && !w.base.join("home/elsewhere.txt").exists(), "{}", text(&out));
    });
}

#[test]
fn a_folder_the_line_makes_is_the_calls_own_and_only_that_one() {
    for_each_user("made", |w| {
        w.write("ws/user.txt", "mine\n");
        w.own();
        // libgit2's way in `cargo new`: hidden code renames a lock file into
        // place inside the new folder, and removes what it made there.
        let code = "import os; os.mkdir('proj/meta'); open('proj/meta/config.lock', 'w').write('cfg'); os.rename('proj/meta/config.lock', 'proj/meta/config'); os.remove('proj/meta/config'); os.rmdir('proj/meta')";
        let script = format!("mkdir proj && python3 -c \"{code}\" && echo made");
        let (d, out) = w.approved(&script);
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        assert!(out.status.success() && text(&out).contains("made"), "{}", text(&out));
        assert!(w.base.join("ws/proj").is_dir() && !w.base.join("ws/proj/meta").exists());
        // The same code on a file that was there before is refused.
        let (_, profile) = w.approve_once(&script);
        let out = w.run(&profile, "python3 -c \"import os; os.remove('user.txt')\"");
        assert!(!out.status.success() && w.base.join("ws/user.txt").exists(), "{}", text(&out));
        // What was there before is not the call's: neither removed nor moved in.
        let (_, profile) = w.approve_once("mkdir box");
        let out = w.run(&profile, "mkdir box && mv user.txt box/ ; rm -f user.txt ; rmdir box");
        assert!(w.base.join("ws/user.txt").exists(), "a user file went: {}", text(&out));
        assert!(!w.base.join("ws/box").exists(), "the call removes the folder it made");
    });
}

#[test]
fn python_venv_in_the_workspace_works_with_no_card() {
    for_each_user("venv", |w| {
        if !Command::new("/usr/bin/python3").args(["-c", "import venv, ensurepip"]).status().is_ok_and(|s| s.success()) {
            eprintln!("SKIP python_venv: /usr/bin/python3 has no venv or ensurepip here (apt install python3-venv)");
            return;
        }
        w.own();
        for dir in [".venv", "env"] {
            let line = format!("python3 -m venv {dir} && {dir}/bin/python -m pip --version");
            let (d, out) = w.approved(&line);
            assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
            assert!(out.status.success(), "`{line}`: {}", text(&out));
        }
    });
}
