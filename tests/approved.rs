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

#[path = "support/users.rs"]
mod users;

use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };
/// The PATH calls run with (docker's client lives in /usr/local/bin here).
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

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
        if !users::usable(name, user) {
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
        users::own(&self.base, self.user);
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
    /// (plugin/approval.js: the decision's call grants, carried, and its
    /// proposals as one-shot grants), the guard's decision with them (which
    /// refuses only a refusal), and the profile the call runs under
    /// (plugin/index.js `profileFor`). Returns the gate's decision and the
    /// profile.
    fn approve_once(&self, command: &str) -> (Decision, Value) {
        self.approve_once_with(command, &json!({}))
    }

    fn approve_once_with(&self, command: &str, sockets: &Value) -> (Decision, Value) {
        self.approve_once_on(command, sockets, PATH)
    }

    /// `approve_once_with`, deciding with `path` as the call's PATH.
    fn approve_once_on(&self, command: &str, sockets: &Value, path: &str) -> (Decision, Value) {
        // FsHost vouches for one generation forever: what an earlier decide
        // of this thread prepared predates the files this test just made.
        dsh_allow::decide::forget_reused();
        let host = FsHost::with_path(path);
        let mut req = self.request(command, &[]);
        req.sockets = serde_json::from_value(sockets.clone()).unwrap();
        let gate = dsh_allow::decide::decide(&req, &host);
        assert_ne!(gate.decision, Outcome::Refuse, "`{command}` is refused: {}", gate.reason);
        let mut grants: Vec<Value> = gate.fence_grants.iter().map(|r| serde_json::to_value(r).unwrap()).collect();
        if gate.decision == Outcome::Prompt {
            grants.extend(gate.proposals.iter().enumerate().map(|(i, p)| json!({ "id": format!("once-{i}"), "path": p.path, "recursive": p.recursive, "access": p.access })));
        }
        let mut guarded = self.request(command, &grants);
        guarded.sockets = req.sockets.clone();
        let guard = dsh_allow::decide::decide(&guarded, &host);
        assert_ne!(guard.decision, Outcome::Refuse, "`{command}` answered Allow once is refused: {}", guard.reason);
        if gate.decision == Outcome::Prompt && !gate.proposals.is_empty() && gate.proposals.iter().all(|p| p.command.is_none()) {
            assert_eq!(guard.decision, Outcome::Allow, "`{command}` answered Allow once still asks: {}", guard.reason);
        }
        let profile = json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [], "grants": grants,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")], "folders": gate.folders,
        });
        (gate, profile)
    }

    /// A profile with no grant of the call's: what runs without the decision.
    fn plain(&self) -> Value {
        json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
        })
    }

    /// `bash -c script` as this world's user, in the workspace, under `profile`.
    fn run(&self, profile: &Value, script: &str) -> Output {
        self.run_with(profile, script, &[], None)
    }

    /// `run` with variables set, and (`passwd`) in a mount namespace whose
    /// /etc/passwd is that file: ssh finds `~` through the user database,
    /// not $HOME, so its tests give every user the world's home there.
    fn run_with(&self, profile: &Value, script: &str, env: &[(&str, String)], passwd: Option<&Path>) -> Output {
        let text = profile.to_string();
        let runner = self.runner.to_string_lossy().into_owned();
        let mut argv: Vec<String> = Vec::new();
        if let Some(p) = passwd {
            argv.extend(["/usr/bin/unshare".into(), "-m".into(), "/bin/sh".into(), "-c".into(), "mount --bind \"$0\" /etc/passwd && exec \"$@\"".into(), p.to_string_lossy().into_owned()]);
        }
        argv.extend(users::become_user(self.user));
        argv.extend([runner, "run".into(), "--profile-json".into(), text, "--".into(), "/bin/bash".into(), "-c".into(), script.into()]);
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..])
            .current_dir(self.base.join("ws"))
            .env("HOME", self.base.join("home"))
            .env("PATH", PATH)
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("DOCKER_HOST")
            .stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// A command run unfenced as this world's user (the scene).
    fn as_user(&self, argv: &[&str], env: &[(&str, String)]) -> Output {
        let mut c = users::command_as(self.user, argv);
        c.current_dir(self.base.join("ws")).env("HOME", self.base.join("home")).env("PATH", PATH).stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// A background process of this world's user, until the test ends.
    fn daemon(&self, argv: &[&str]) -> Background {
        let mut c = users::command_as(self.user, argv);
        c.current_dir(self.base.join("ws")).env("HOME", self.base.join("home")).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        Background(c.spawn().unwrap())
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

struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Wait for a path to appear (a daemon's socket).
fn wait_for(p: &Path) {
    for _ in 0..200 {
        if p.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} never appeared", p.display());
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

/// A stand-in docker daemon on a unix socket: every request gets an empty
/// JSON list with the headers the client looks for (no daemon runs here).
const FAKE_DOCKERD: &str = r#"
import socketserver, sys, os
class H(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            line = self.rfile.readline()
            if not line:
                return
            length = 0
            while True:
                h = self.rfile.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                if h.lower().startswith(b"content-length:"):
                    length = int(h.split(b":")[1])
            self.rfile.read(length)
            body = b"OK" if b"/_ping" in line else b"[]"
            # A HEAD answer carries no body: the client pings with HEAD and
            # would read a body as the start of its next answer.
            sent = b"" if line.startswith(b"HEAD ") else body
            self.wfile.write(b"HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), sent))
class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
S(sys.argv[1], H).serve_forever()
"#;

#[test]
fn docker_ps_reaches_its_daemon_with_no_card_and_only_for_that_call() {
    for_each_user("docker", |w| {
        if !Command::new("docker").arg("--version").env("PATH", PATH).output().is_ok_and(|o| o.status.success()) {
            eprintln!("SKIP docker_ps: no docker client here");
            return;
        }
        fs::create_dir_all(w.base.join("run")).unwrap();
        w.own();
        let sock = w.base.join("run/docker.sock");
        let sock_s = sock.to_string_lossy().into_owned();
        let _daemon = w.daemon(&["/usr/bin/python3", "-c", FAKE_DOCKERD, &sock_s]);
        wait_for(&sock);
        let host = format!("unix://{sock_s}");
        let env = [("DOCKER_HOST", host.clone())];
        for line in ["docker ps", "docker images", "docker inspect web", "docker logs web"] {
            let (d, profile) = w.approve_once_with(line, &json!({ "docker": host }));
            assert_eq!(d.decision, Outcome::Allow, "`{line}`: {}", d.reason);
            assert!(d.sockets.iter().any(|s| s.granted && s.path.as_deref() == Some(sock_s.as_str())), "{:?}", d.sockets);
            let out = w.run_with(&profile, line, &env, None);
            // inspect and logs of a container the stand-in does not know
            // fail in the client; what matters is that the daemon answered.
            let said = text(&out);
            assert!(!said.contains("dsh-allow: refused") && !said.contains("Cannot connect"), "`{line}`: {said}");
            if line == "docker ps" {
                assert!(out.status.success(), "{said}");
            }
        }
        // Without the decision's grant the socket is refused, and named.
        let out = w.run_with(&w.plain(), "docker ps", &env, None);
        assert!(!out.status.success(), "{}", text(&out));
        // Code the line does not show beside it: asked every time.
        let (d, _) = w.approve_once_with("docker ps; python3 -c 'import os'", &json!({ "docker": host }));
        assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
        assert!(d.proposals.is_empty(), "nothing to store: {:?}", d.proposals);
        // A subcommand that hands the daemon something to run keeps asking.
        let (d, _) = w.approve_once_with("docker run alpine true", &json!({ "docker": host }));
        assert_eq!(d.decision, Outcome::Prompt);
    });
}

/// An ssh agent of the world's user holding a new key, and its socket.
fn agent_with_key(w: &World) -> (Background, String, String) {
    let sock = w.p("agent.sock");
    let agent = w.daemon(&["/usr/bin/ssh-agent", "-D", "-a", &sock]);
    wait_for(Path::new(&sock));
    let key = w.p("home/.ssh/id_test");
    assert!(w.as_user(&["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", &key], &[]).status.success());
    (agent, sock, key)
}

#[test]
fn ssh_add_lists_the_agents_keys_with_no_card_and_adds_a_named_key_after_allow_once() {
    for_each_user("ssh-add", |w| {
        if !Path::new("/usr/bin/ssh-agent").exists() {
            eprintln!("SKIP ssh_add: no ssh-agent here");
            return;
        }
        fs::create_dir_all(w.base.join("home/.ssh")).unwrap();
        w.own();
        let (_agent, sock, key) = agent_with_key(w);
        let env = [("SSH_AUTH_SOCK", sock.clone())];
        let sockets = json!({ "sshAgent": sock });
        // A key the user names: a card, asked every time, never a refusal.
        let line = "ssh-add ~/.ssh/id_test";
        let (d, profile) = w.approve_once_with(line, &sockets);
        assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
        assert!(d.proposals.is_empty(), "Always allow stores nothing on a credential store: {:?}", d.proposals);
        let out = w.run_with(&profile, line, &env, None);
        assert!(out.status.success(), "{}", text(&out));
        // Listing needs no card; the key is in the agent.
        let (d, profile) = w.approve_once_with("ssh-add -l", &sockets);
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        let out = w.run_with(&profile, "ssh-add -l", &env, None);
        assert!(out.status.success() && text(&out).contains("ED25519"), "{}", text(&out));
        // Without the call's grant: neither the key nor the agent.
        let out = w.run_with(&w.plain(), &format!("ssh-add {key}"), &env, None);
        assert!(!out.status.success(), "{}", text(&out));
        let out = w.run_with(&w.plain(), "ssh-add -l", &env, None);
        assert!(!out.status.success(), "{}", text(&out));
    });
}

#[test]
fn ssh_t_to_a_git_host_authenticates_through_the_agent_with_no_card() {
    for_each_user("ssh-t", |w| {
        if !Path::new("/usr/sbin/sshd").exists() || !Path::new("/usr/bin/unshare").exists() || unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIP ssh_t: needs root, /usr/sbin/sshd (apt install openssh-server) and unshare for a stand-in git host");
            return;
        }
        for d in ["home/.ssh", "sshd", "git"] {
            fs::create_dir_all(w.base.join(d)).unwrap();
        }
        w.own();
        let (_agent, sock, key) = agent_with_key(w);
        assert!(w.as_user(&["/usr/bin/ssh-add", "-q", &key], &[("SSH_AUTH_SOCK", sock.clone())]).status.success());
        // The key lives only in the agent from here on.
        fs::remove_file(&key).unwrap();
        // A stand-in git host on a loopback port: a user `git` (only in its
        // own mount namespace's /etc/passwd) whose every login prints the
        // greeting and runs nothing.
        let host_key = w.p("sshd/host_key");
        assert!(Command::new("/usr/bin/ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f", &host_key]).status().unwrap().success());
        fs::copy(format!("{key}.pub"), w.base.join("sshd/authorized_keys")).unwrap();
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nAuthorizedKeysFile {}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nPidFile none\nForceCommand echo \"Hi git! You've successfully authenticated, but this host does not provide shell access.\"\n",
            w.p("sshd/authorized_keys")
        );
        fs::write(w.base.join("sshd/config"), config).unwrap();
        let passwd = fs::read_to_string("/etc/passwd").unwrap();
        let uid = w.user.unwrap_or(0);
        let home = w.p("home");
        // Every user's home is the world's for ssh (it reads ~ from here).
        let mut faked: String = passwd
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split(':').collect();
                if f.len() == 7 && (f[2] == "0" || f[2] == NOBODY.to_string()) {
                    f[5] = &home;
                }
                f.join(":")
            })
            .collect::<Vec<_>>()
            .join("\n");
        faked.push_str(&format!("\ngit:x:{uid}:{uid}::{}:/bin/sh\n", w.p("git")));
        let fake = w.base.join("sshd/passwd");
        fs::write(&fake, faked).unwrap();
        let _ = fs::create_dir_all("/run/sshd");
        let sshd = Background(
            Command::new("/usr/bin/unshare")
                .args(["-m", "/bin/sh", "-c", "mount --bind \"$0\" /etc/passwd && exec /usr/sbin/sshd -D -e -f \"$1\""])
                .arg(&fake)
                .arg(w.p("sshd/config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        wait_port(port);
        let public = fs::read_to_string(format!("{host_key}.pub")).unwrap();
        let mut parts = public.split_whitespace();
        let known = format!("[127.0.0.1]:{port} {} {}\n", parts.next().unwrap(), parts.next().unwrap());
        fs::write(w.base.join("home/.ssh/known_hosts"), known).unwrap();
        w.own();
        let env = [("SSH_AUTH_SOCK", sock.clone())];
        let line = format!("ssh -T -p {port} git@127.0.0.1");
        let (d, profile) = w.approve_once_with(&line, &json!({ "sshAgent": sock }));
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        let out = w.run_with(&profile, &line, &env, Some(&fake));
        assert!(out.status.success() && text(&out).contains("successfully authenticated"), "{}", text(&out));
        // With no grant of the call: no agent, no known host.
        let out = w.run_with(&w.plain(), &line, &env, Some(&fake));
        assert!(!text(&out).contains("successfully authenticated"), "{}", text(&out));
        // A remote command is still asked every time.
        let (d, _) = w.approve_once_with(&format!("ssh -p {port} git@127.0.0.1 id"), &json!({ "sshAgent": sock }));
        assert_eq!(d.decision, Outcome::Prompt);
        drop(sshd);
    });
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn wait_port(port: u16) {
    for _ in 0..250 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("sshd did not listen on {port}");
}

fn git_repo(w: &World, files: &[(&str, &str)]) {
    for (rel, text) in files {
        w.write(&format!("ws/{rel}"), text);
    }
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(w.base.join("ws"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one"]);
}

#[test]
fn git_restore_of_a_tracked_file_runs_with_no_card_and_keeps_what_it_replaced() {
    for_each_user("restore", |w| {
        git_repo(w, &[("src/a.rs", "fn a() {}\n"), ("b.txt", "bee\n"), ("c.txt", "sea\n")]);
        w.write("ws/src/a.rs", "fn a() { broken }\n");
        fs::remove_file(w.base.join("ws/b.txt")).unwrap();
        w.write("ws/c.txt", "sea, changed\n");
        w.own();
        let env = [("GIT_CONFIG_GLOBAL", "/dev/null".to_string())];
        let line = "git restore src/a.rs b.txt && echo restored";
        let (d, profile) = w.approve_once(line);
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        assert_eq!(d.kept.len(), 2, "{:?}", d.kept);
        let mut profile = profile;
        profile["kept"] = json!(d.kept);
        let out = w.run_with(&profile, line, &env, None);
        assert!(out.status.success() && text(&out).contains("restored"), "{}", text(&out));
        assert_eq!(fs::read_to_string(w.base.join("ws/src/a.rs")).unwrap(), "fn a() {}\n");
        assert_eq!(fs::read_to_string(w.base.join("ws/b.txt")).unwrap(), "bee\n");
        // What git replaced is kept, and the call said where.
        let said = text(&out);
        let kept = said.lines().find_map(|l| l.strip_prefix("dsh-allow: kept src/a.rs as it was before this command, at ")).expect(&said);
        assert_eq!(fs::read_to_string(kept).unwrap(), "fn a() { broken }\n");
        assert!(kept.starts_with(&w.p("home/.dsh/dsh-allow-kept/")));
        // The grant is that file's: the other changed file is untouched by
        // code in the same call, and the kept copy is out of the call's reach.
        let out = w.run_with(&profile, &format!("rm -f c.txt; rm -f {kept}"), &env, None);
        assert!(w.base.join("ws/c.txt").exists() && Path::new(kept).exists(), "{}", text(&out));
        // A folder or `.` still discards what nothing keeps: asked.
        let (d, _) = w.approve_once("git restore .");
        assert_eq!(d.decision, Outcome::Prompt);
    });
}

#[test]
fn perl_in_place_substitution_in_the_workspace_runs_with_no_card() {
    for_each_user("perl", |w| {
        w.write("ws/a.txt", "old\nold\n");
        w.write("ws/src/b.txt", "x=old\n");
        w.write("ws/keep.txt", "mine\n");
        w.own();
        for line in ["perl -0pi -e 's/old\\nold/new/' a.txt", "perl -pi -e 's/old/new/g' src/b.txt"] {
            let (d, out) = w.approved(line);
            assert_eq!(d.decision, Outcome::Allow, "`{line}`: {}", d.reason);
            assert!(out.status.success(), "`{line}`: {}", text(&out));
        }
        assert_eq!(fs::read_to_string(w.base.join("ws/a.txt")).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(w.base.join("ws/src/b.txt")).unwrap(), "x=new\n");
        // Code in the substitution is not plain: asked, as before.
        let (d, _) = w.approve_once("perl -pi -e 's/old/`id`/e' a.txt");
        assert_eq!(d.decision, Outcome::Prompt);
        // Beside code the line does not show, the folder's delete is not
        // granted for the call: the card asks for it.
        let line = "perl -pi -e 's/old/new/' a.txt; python3 -c \"import os; os.remove('keep.txt')\"";
        let d = dsh_allow::decide::decide(&w.request(line, &[]), &FsHost::with_path(PATH));
        assert_eq!(d.decision, Outcome::Prompt, "{}", d.reason);
        assert!(d.fence_grants.iter().all(|g| !g.access.grants(dsh_allow::policy::capability::Capability::Delete)), "{:?}", d.fence_grants);
        let out = w.run(&w.plain(), line);
        assert!(w.base.join("ws/keep.txt").exists(), "a file beside the edited one went: {}", text(&out));
    });
}

#[test]
fn patch_p1_from_a_diff_in_the_workspace_runs_with_no_card() {
    for_each_user("patch", |w| {
        w.write("ws/src/main.c", "int main(void) {\n    return 1;\n}\n");
        w.write("ws/old.txt", "gone\n");
        w.write(
            "ws/x.diff",
            "--- a/src/main.c\n+++ b/src/main.c\n@@ -1,3 +1,3 @@\n int main(void) {\n-    return 1;\n+    return 0;\n }\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n--- /dev/null\n+++ b/docs/new.txt\n@@ -0,0 +1 @@\n+new\n",
        );
        w.own();
        let (d, out) = w.approved("patch -p1 < x.diff && echo patched");
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        assert!(out.status.success() && text(&out).contains("patched"), "{}", text(&out));
        assert!(fs::read_to_string(w.base.join("ws/src/main.c")).unwrap().contains("return 0;"));
        assert!(!w.base.join("ws/old.txt").exists(), "the diff removes old.txt");
        assert_eq!(fs::read_to_string(w.base.join("ws/docs/new.txt")).unwrap(), "new\n");
        // And back: what it removed was in the diff.
        let (d, out) = w.approved("patch -R -p1 < x.diff");
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(fs::read_to_string(w.base.join("ws/old.txt")).unwrap(), "gone\n");
    });
}

#[test]
fn rustup_changes_its_own_home_with_no_card() {
    for_each_user("rustup", |w| {
        let rustup = std::env::var("HOME").map(|h| format!("{h}/.cargo/bin/rustup")).unwrap_or_default();
        if !Path::new(&rustup).exists() {
            eprintln!("SKIP rustup: no rustup at {rustup}");
            return;
        }
        // rustup as the world's home has it (a toolchain under home runs).
        fs::create_dir_all(w.base.join("home/.rustup")).unwrap();
        fs::create_dir_all(w.base.join("home/.cargo/bin")).unwrap();
        fs::copy(&rustup, w.base.join("home/.cargo/bin/rustup")).unwrap();
        w.own();
        let path = format!("{}:{PATH}", w.p("home/.cargo/bin"));
        let line = "rustup set profile minimal && echo set";
        let (d, profile) = w.approve_once_on(line, &json!({}), &path);
        assert_eq!(d.decision, Outcome::Allow, "{}", d.reason);
        let out = w.run_with(&profile, line, &[("RUSTUP_HOME", w.p("home/.rustup")), ("PATH", path.clone())], None);
        assert!(out.status.success() && text(&out).contains("set"), "{}", text(&out));
        assert!(fs::read_to_string(w.base.join("home/.rustup/settings.toml")).unwrap().contains("minimal"));
        // Beside it, the rest of home stays shut.
        let out = w.run_with(&profile, "echo x > ~/notes.txt", &[], None);
        assert!(!out.status.success() && !w.base.join("home/notes.txt").exists());
    });
}

#[test]
fn a_read_only_session_gets_no_folder_made_for_it() {
    for_each_user("read-only", |w| {
        w.own();
        let mut profile = w.plain();
        profile["mode"] = json!("read-only");
        profile["folders"] = json!([w.p("ws/made")]);
        let out = w.run(&profile, "mkdir made");
        assert!(!out.status.success() && !w.base.join("ws/made").exists(), "{}", text(&out));
    });
}

#[test]
fn a_read_only_session_removes_nothing_whatever_its_profile_grants() {
    for_each_user("read-only-rm", |w| {
        w.write("ws/out.md", "# out\n");
        w.own();
        let mut profile = w.plain();
        profile["mode"] = json!("read-only");
        profile["grants"] = json!([{ "id": "g", "path": w.p("ws/out.md"), "recursive": false, "access": { "delete": true } }]);
        let out = w.run(&profile, "rm out.md");
        assert!(!out.status.success() && w.base.join("ws/out.md").exists(), "{}", text(&out));
    });
}
