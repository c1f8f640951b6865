//! Held fences (runner/keeper.rs): the second call of a kept fence joins
//! the namespaces and the Landlock ruleset the first one built, and is
//! fenced exactly as a call that builds them; nothing held outlives the
//! files it was bound to, and no fenced process reaches the keeper. Real
//! processes under the real kernel, as root and as an unprivileged user
//! (uid 65534, whose runner takes the user-namespace path).
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/users.rs"]
mod users;

use serde_json::{json, Value};
use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };
/// A long-lived store's rules: the fences held in these tests are large ones.
const MANY: usize = 600;

/// One at a time: a tree made by another test changes the folder every tree
/// sits in, which a held fence has to prove again.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A workspace (a git repository), a home with a harness home holding the
/// fence cache, a folder outside with a writable root, and a copy of the
/// runner the user may start; its folders settled for over a second.
struct World {
    base: PathBuf,
    user: Option<u32>,
    runner: PathBuf,
    _turn: MutexGuard<'static, ()>,
}

impl World {
    fn new(name: &str, user: Option<u32>) -> Option<World> {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        if !users::usable(name, user) {
            return None;
        }
        let who = user.map_or("root".to_string(), |u| u.to_string());
        let base = scratch::root().join(format!("held-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws/src", "home/.dsh/dsh-allow-fence", "outside/build", "outside/other"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        // A long-lived store's rules: the keeper holds only fences this large.
        for i in 0..MANY {
            fs::create_dir_all(base.join(format!("outside/many/m{i}"))).unwrap();
        }
        fs::write(base.join("ws/src/main.rs"), "fn main() {}\n").unwrap();
        fs::write(base.join("home/secret.txt"), "SECRET\n").unwrap();
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        fs::write(base.join("outside/kept.txt"), "kept\n").unwrap();
        let git = |args: &[&str]| Command::new("git").args(args).current_dir(base.join("ws")).env("GIT_CONFIG_GLOBAL", "/dev/null").output().unwrap();
        git(&["init", "-q"]);
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
        std::thread::sleep(Duration::from_millis(1100));
        Some(World { base, user, runner, _turn: turn })
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    fn cache(&self) -> String {
        self.p("home/.dsh/dsh-allow-fence")
    }

    /// The workspace profile, the fence cache protected, with `rules` and
    /// a read rule on each of the many folders.
    fn profile(&self, rules: Value) -> Value {
        let mut all = rules.as_array().cloned().unwrap_or_default();
        all.extend((0..MANY).map(|i| json!({ "path": self.p(&format!("outside/many/m{i}")), "recursive": true, "access": { "read": true } })));
        self.small(Value::Array(all))
    }

    /// The workspace profile with `rules` alone.
    fn small(&self, rules: Value) -> Value {
        json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": rules,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json"), self.cache()],
        })
    }

    /// `sh -c script` under `profile` with kept (and held) fences; the
    /// runner's `fence` and `held` report lines, and whether it succeeded.
    fn run(&self, profile: &Value, script: &str) -> (String, String, bool) {
        let out = self.call(profile, script).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = |p: &str| stderr.lines().find_map(|l| l.strip_prefix(p)).unwrap_or("(no report)").to_string();
        (line("dsh-allow fence: "), line("dsh-allow held: "), out.status.success())
    }

    /// The runner's command for `sh -c script` under `profile`, reporting.
    fn call(&self, profile: &Value, script: &str) -> Command {
        let runner = self.runner.to_string_lossy().into_owned();
        let mut argv = users::become_user(self.user);
        argv.extend([runner, "run".into(), "--profile-json".into(), profile.to_string(), "--fence-cache".into(), self.cache(), "--report-fence".into()]);
        argv.extend(["--".into(), "/bin/sh".into(), "-c".into(), script.into()]);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(self.base.join("ws")).env("PATH", "/usr/bin:/bin").env("HOME", self.base.join("home")).stdin(Stdio::null());
        cmd
    }

    /// What the runner says of the kept entry's folders (`--report-fence`)
    /// on a call of `true`.
    fn folders(&self, profile: &Value) -> String {
        let runner = self.runner.to_string_lossy().into_owned();
        let mut argv = users::become_user(self.user);
        argv.extend([runner, "run".into(), "--profile-json".into(), profile.to_string(), "--fence-cache".into(), self.cache(), "--report-fence".into(), "--".into(), "/bin/true".into()]);
        let out = Command::new(&argv[0]).args(&argv[1..]).current_dir(self.base.join("ws")).env("PATH", "/usr/bin:/bin").stdin(Stdio::null()).output().unwrap();
        String::from_utf8_lossy(&out.stderr).lines().find_map(|l| l.strip_prefix("dsh-allow folders: ")).unwrap_or("(no report)").to_string()
    }

    /// Run `script` until the fence is joined from the keeper (the first
    /// call builds and hands it over); panics if it never is.
    fn until_joined(&self, profile: &Value) {
        // A loaded machine may keep the keeper from answering in time: the
        // call then builds, and a later one joins.
        for _ in 0..6 {
            if self.run(profile, "true").1 == "joined" {
                return;
            }
        }
        panic!("the fence was never joined: {:?}", self.run(profile, "true"));
    }

    /// The keeper serving this world's fence cache, by its command line.
    fn keeper(&self) -> Option<i32> {
        let want = format!("{}\0keep\0{}\0", self.runner.display(), self.cache());
        fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            (fs::read(e.path().join("cmdline")).ok()? == want.as_bytes()).then_some(pid)
        })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // The keeper leaves once its socket is gone (within its poll).
        let _ = fs::remove_dir_all(&self.base);
    }
}

/// A runner binary as the keeper knows it (kept.rs `this_binary`).
fn identity(path: &std::path::Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    format!("{}:{}:{}.{}:{}.{}:{}", m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.size())
}

fn each_user(f: impl Fn(Option<u32>)) {
    for user in [None, Some(NOBODY)] {
        f(user);
    }
}

const SHARED: u32 = dsh_allow::runner::keeper::SHARED_CALLS;

/// One ruleset the keeper builds serves 32 calls of a fence (each adds
/// the rules on its own /proc and terminals), then a fresh one is built;
/// a call still sees only its own processes and terminals while another
/// runs.
#[test]
fn one_ruleset_serves_32_calls_of_a_held_fence_and_each_keeps_its_own_processes() {
    each_user(|user| {
        let Some(w) = World::new("shared", user) else { return };
        assert!(Command::new("python3").arg("-c").arg("import pty").status().is_ok_and(|s| s.success()), "python3 with pty is needed here");
        let profile = w.profile(json!([]));
        w.until_joined(&profile);
        // A call left running, with a process and a terminal of its own.
        let mut other = w.call(&profile, "exec python3 -c 'import os,pty,time\npty.openpty()\nwhile not os.path.exists(\"stop\"): time.sleep(0.05)'").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let mut calls = Vec::new();
        for _ in 0..SHARED + 8 {
            let script = "for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null; echo; done | grep -c 'pty[.]openpty'; ls /dev/pts | grep -c '^[0-9]'";
            let out = w.call(&profile, script).output().unwrap();
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
            assert_eq!(stdout.split_whitespace().collect::<Vec<_>>(), ["0", "0"], "another call's process or terminal was seen: {stderr}");
            let said = stderr.lines().find_map(|l| l.strip_prefix("dsh-allow ruleset: the keeper's, this fence's call ")).map(str::to_string);
            calls.extend(said.and_then(|s| s.strip_suffix(&format!(" of {SHARED}"))?.parse::<u32>().ok()));
        }
        assert!(other.try_wait().unwrap().is_none(), "the other call ended before the last look");
        fs::write(w.base.join("ws/stop"), "").unwrap();
        assert!(other.wait().unwrap().success(), "the other call failed");
        assert!(calls.len() as u32 >= SHARED, "the keeper's ruleset was taken by only {} of {} calls: {calls:?}", calls.len(), SHARED + 8);
        assert!(calls.iter().all(|&n| (1..=SHARED).contains(&n)), "{calls:?}");
        // Counting up, and from 1 again once SHARED calls had it.
        let fresh = calls.windows(2).filter(|p| p[1] < p[0]).count();
        assert!(fresh >= 1, "no fresh ruleset was built in {} calls: {calls:?}", SHARED + 8);
        assert!(calls.windows(2).any(|p| p[1] == p[0] + 1), "no ruleset served two calls: {calls:?}");
    });
}

#[test]
fn a_small_fence_is_built_by_each_call_with_no_keeper() {
    let Some(w) = World::new("small", None) else { return };
    // Writes only: a dozen rules, built faster than the keeper is asked.
    let mut profile = w.small(json!([]));
    profile["enforce"] = json!("writes");
    for _ in 0..3 {
        let (_, held, ok) = w.run(&profile, "true");
        assert_eq!((held.as_str(), ok), ("built", true));
    }
    assert_eq!(w.keeper(), None, "a keeper was started for a fence it would not hold");
    assert!(!w.base.join("home/.dsh/dsh-allow-fence/keeper").exists());
}

#[test]
fn a_second_call_of_a_kept_fence_joins_what_the_first_built_and_is_fenced_the_same() {
    each_user(|user| {
        let Some(w) = World::new("joined", user) else { return };
        let profile = w.profile(json!([]));
        let (fence, held, ok) = w.run(&profile, "true");
        assert_eq!((fence.as_str(), ok), ("compiled, kept", true));
        assert!(held.ends_with("handed to the keeper"), "{held}");
        for _ in 0..2 {
            let (_, held, ok) = w.run(&profile, "echo more >> src/main.rs && : > src/new.rs && mkdir -p made/deep");
            assert_eq!((held.as_str(), ok), ("joined", true), "write and create in the workspace");
            let refused = [
                ("rm src/main.rs", "delete in the workspace"),
                (&format!("cat {}", w.p("home/secret.txt")) as &str, "a read under home"),
                (&format!("echo x > {}", w.p("outside/new.txt")), "a create outside"),
                (&format!("chmod 600 {}", w.p("home/secret.txt")), "a mode outside the writable roots"),
                ("echo '[core]' >> .git/config", "the repository's config"),
                (&format!("echo x > {}/fence-99", w.cache()), "the fence cache"),
            ];
            for (script, what) in refused {
                assert_eq!(w.run(&profile, script), ("reused".into(), "joined".into(), false), "{what}");
            }
            // Its own terminals only: a fresh instance, nobody's shell in it.
            let (_, held, ok) = w.run(&profile, "test \"$(ls /dev/pts)\" = ptmx");
            assert_eq!((held.as_str(), ok), ("joined", true), "/dev/pts holds no other terminal");
        }
        assert!(w.base.join("ws/src/main.rs").exists() && w.base.join("ws/made/deep").is_dir());
    });
}

#[test]
fn a_writable_root_moved_away_is_not_carried_by_a_held_fence() {
    each_user(|user| {
        let Some(w) = World::new("moved", user) else { return };
        let build = w.p("outside/build");
        let profile = w.profile(json!([{ "path": build, "recursive": true, "access": { "read": true, "write": true, "create": true } }]));
        w.until_joined(&profile);
        assert!(w.run(&profile, &format!("echo x > {build}/a.txt")).2);
        // The granted folder goes elsewhere and a new one takes its name:
        // the grant is the path's, not the old folder's.
        let old = w.p("outside/build-old");
        fs::rename(&build, &old).unwrap();
        fs::create_dir(&build).unwrap();
        users::own(&w.base.join("outside/build"), user);
        let (fence, held, ok) = w.run(&profile, &format!("echo x > {old}/b.txt"));
        assert!(!ok, "a write reached the folder moved away ({fence}; {held})");
        assert!(!w.base.join("outside/build-old/b.txt").exists());
        assert_ne!(held, "joined", "a fence held for the old folder was joined");
        let (_, _, ok) = w.run(&profile, &format!("echo x > {build}/c.txt && chmod 600 {build}/c.txt"));
        assert!(ok, "the new folder at the granted path is written");
        let (_, _, ok) = w.run(&profile, &format!("chmod 600 {old}/a.txt"));
        assert!(!ok, "the mode of a file in the folder moved away changed");
        // Held again once rebuilt: now for the new folder.
        w.until_joined(&profile);
        assert!(!w.run(&profile, &format!("echo x > {old}/d.txt")).2);
    });
}

#[test]
fn the_keeper_vouches_for_the_folders_it_watched_unchanged_and_a_folder_made_since_is_found_by_the_next_call() {
    each_user(|user| {
        let Some(w) = World::new("made-later", user) else { return };
        let later = w.p("outside/later");
        let profile = w.profile(json!([{ "path": later, "recursive": true, "access": { "read": true, "write": true, "create": true } }]));
        w.until_joined(&profile);
        // Nothing changed since the keeper took the fence: it vouches for
        // (nearly) every folder, and the call looks none of those up.
        let said = w.folders(&profile);
        let counts: Vec<usize> = said.split(' ').filter_map(|t| t.parse().ok()).collect();
        assert!(said.ends_with("vouched for by the keeper, the rest looked up") && counts.len() == 2, "{said}");
        assert!(counts[0] > 0 && counts[0] * 2 > counts[1], "{said}");
        // The granted folder appears in a folder the keeper watches: the
        // next call is not vouched past it, finds it, and may write there.
        fs::create_dir(&later).unwrap();
        users::own(&w.base.join("outside/later"), user);
        let (fence, _, ok) = w.run(&profile, &format!("echo x > {later}/a.txt"));
        assert!(ok && w.base.join("outside/later/a.txt").exists(), "the folder made since was not granted ({fence})");
        assert_eq!(fence, "compiled, kept", "the fence compiled without the folder was reused");
    });
}

#[test]
fn a_rule_taken_away_is_not_carried_by_a_held_fence() {
    each_user(|user| {
        let Some(w) = World::new("rule-gone", user) else { return };
        let other = w.p("outside/other");
        let wide = w.profile(json!([{ "path": other, "recursive": true, "access": { "read": true, "write": true, "create": true } }]));
        w.until_joined(&wide);
        assert!(w.run(&wide, &format!("echo x > {other}/a.txt")).2);
        let narrow = w.profile(json!([]));
        let (_, held, ok) = w.run(&narrow, &format!("echo x > {other}/b.txt"));
        assert!(!ok && !w.base.join("outside/other/b.txt").exists(), "the rule taken away still granted ({held})");
        w.until_joined(&narrow);
        assert!(!w.run(&narrow, &format!("echo x > {other}/c.txt")).2);
    });
}

#[test]
fn a_surface_replaced_since_is_shut_again() {
    each_user(|user| {
        let Some(w) = World::new("surface", user) else { return };
        // A line of git's own: `.git` is open for its lock files, its hooks
        // and config are shut one by one.
        let git = w.p("ws/.git");
        let mut profile = w.profile(json!([]));
        profile["grants"] = json!([{ "path": git, "recursive": true, "access": { "delete": true } }]);
        w.until_joined(&profile);
        assert!(!w.run(&profile, "echo '[x]' >> .git/config").2);
        // git config writes a lock file and renames it over the config.
        let config = w.base.join("ws/.git/config");
        let text = fs::read_to_string(&config).unwrap();
        fs::write(w.base.join("ws/.git/config.lock"), &text).unwrap();
        fs::rename(w.base.join("ws/.git/config.lock"), &config).unwrap();
        users::own(&config, user);
        for _ in 0..2 {
            let (fence, held, ok) = w.run(&profile, "echo '[x]' >> .git/config");
            assert!(!ok, "the replaced config was writable ({fence}; {held})");
        }
        assert_eq!(fs::read_to_string(&config).unwrap(), text);
    });
}

#[test]
fn no_fenced_process_reaches_the_keeper() {
    each_user(|user| {
        let Some(w) = World::new("reach", user) else { return };
        // Even with a rule giving write on the folder that holds the cache.
        let profile = w.profile(json!([{ "path": w.p("home/.dsh"), "recursive": true, "access": { "read": true, "write": true, "create": true, "delete": true } }]));
        w.until_joined(&profile);
        let socket = format!("{}/keeper", w.cache());
        let connect = format!("python3 -c 'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(\"{socket}\"); s.send(b\"get\\nx\"); print(s.recv(64))'");
        let (_, held, ok) = w.run(&profile, &connect);
        assert!(!ok, "a fenced call reached the keeper ({held})");
        assert!(!w.run(&profile, &format!("rm -f {socket}")).2, "the keeper's socket was removed");
        // Outside any fence, a process with no_new_privs (as every fenced
        // one has) gets no answer either; one without it does.
        let binary = identity(&w.runner);
        let ask = |nnp: bool| {
            let mut argv = users::become_user(w.user);
            if nnp {
                argv.extend(["/usr/bin/setpriv".into(), "--no-new-privs".into()]);
            }
            argv.extend(["python3".into(), "-c".into(), format!("import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.settimeout(2); s.connect(\"{socket}\"); s.send(b\"get\\n{binary}\\nnothing held here\"); print(s.recv(64))")]);
            let out = Command::new(&argv[0]).args(&argv[1..]).env("PATH", "/usr/bin:/bin").output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(ask(false), "b'none'");
        assert_ne!(ask(true), "b'none'", "the keeper answered a process with no_new_privs");
    });
}

#[test]
fn a_keeper_of_another_runner_leaves_for_the_one_that_asks() {
    let Some(mut w) = World::new("upgraded", None) else { return };
    let profile = w.profile(json!([]));
    w.until_joined(&profile);
    let old = w.keeper().expect("a keeper serves the fence cache");
    // The runner is updated: another binary at another path.
    let newer = w.base.join("dsh-allow-newer");
    users::copy_runner(&w.runner.to_string_lossy(), &newer);
    w.runner = newer;
    let (_, held, ok) = w.run(&profile, "true");
    assert!(ok && held != "joined", "a fence held by another binary's keeper was joined: {held}");
    let began = Instant::now();
    while PathBuf::from(format!("/proc/{old}/cmdline")).exists() && fs::read(format!("/proc/{old}/cmdline")).is_ok_and(|c| !c.is_empty()) && began.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(fs::read(format!("/proc/{old}/cmdline")).map_or(true, |c| c.is_empty()), "the other binary's keeper stayed");
    w.until_joined(&profile);
    assert_ne!(w.keeper(), Some(old));
}

#[test]
fn a_mount_made_on_the_host_ends_what_the_keeper_holds() {
    // Mounting needs root.
    let Some(w) = World::new("mounts", None) else { return };
    let profile = w.profile(json!([]));
    w.until_joined(&profile);
    let at = w.p("outside/other");
    assert!(Command::new("mount").args(["-t", "tmpfs", "tmpfs", &at]).status().unwrap().success());
    let (_, held, _) = w.run(&profile, "true");
    assert!(Command::new("umount").arg(&at).status().unwrap().success());
    assert_ne!(held, "joined", "a namespace copied before the mount was joined after it");
}

#[test]
fn the_keeper_leaves_when_its_fence_cache_is_gone() {
    let Some(w) = World::new("leaves", None) else { return };
    let profile = w.profile(json!([]));
    w.until_joined(&profile);
    let pid = w.keeper().expect("a keeper serves the fence cache");
    fs::remove_dir_all(w.cache()).unwrap();
    let began = Instant::now();
    while PathBuf::from(format!("/proc/{pid}")).exists() && began.elapsed() < Duration::from_secs(12) {
        std::thread::sleep(Duration::from_millis(200));
    }
    // Reaped by whoever adopted it (a zombie has no command line left).
    let gone = fs::read(format!("/proc/{pid}/cmdline")).map_or(true, |c| c.is_empty());
    assert!(gone, "the keeper {pid} outlived its fence cache by {:?}", began.elapsed());
}

#[test]
fn a_joined_call_finds_what_changes_between_calls_shut_as_a_built_one_does() {
    each_user(|user| {
        let Some(w) = World::new("per-call", user) else { return };
        let profile = w.profile(json!([]));
        w.until_joined(&profile);
        // Made after the keeper took the fence: a new DSH host's spill
        // folder (its name as DSH makes it) and the workspace's `.env`.
        let who = if user.is_some() { 'U' } else { 'R' };
        let spill = PathBuf::from(format!("/tmp/dsh-spill-{who}{:05}", std::process::id() % 100_000));
        let _ = fs::remove_dir_all(&spill);
        fs::create_dir_all(spill.join("session-x")).unwrap();
        fs::write(spill.join("session-x/out.txt"), "SECRET OUTPUT\n").unwrap();
        users::own(&spill, user);
        fs::write(w.base.join("ws/.env"), "A=1\n").unwrap();
        users::own(&w.base.join("ws/.env"), user);
        let s = spill.display();
        let cases = [
            (format!("cat {s}/session-x/out.txt"), "another session's spilled output"),
            (format!("mv {s} {s}.moved"), "the spill folder moved away"),
            (format!("rm -rf {s}/session-x && ln -s /tmp {s}/session-x"), "the session folder swapped for a link"),
            ("echo GIT_CONFIG_PARAMETERS=x >> .env".to_string(), "the workspace's .env"),
        ];
        for (script, what) in &cases {
            let (_, held, ok) = w.run(&profile, script);
            assert_eq!((held.as_str(), ok), ("joined", false), "{what}");
        }
        let (_, held, ok) = w.run(&profile, "echo mine > /tmp/dsh-allow-held-own-$$ && rm /tmp/dsh-allow-held-own-$$");
        assert_eq!((held.as_str(), ok), ("joined", true), "control: a file of its own in the temp folder");
        assert_eq!(fs::read_to_string(spill.join("session-x/out.txt")).unwrap(), "SECRET OUTPUT\n");
        assert_eq!(fs::read_to_string(w.base.join("ws/.env")).unwrap(), "A=1\n");
        let _ = fs::remove_dir_all(&spill);
    });
}

/// A DSH host's temp folder holding an ended session's output, removed
/// when dropped.
struct SpillFolder(PathBuf);

impl Drop for SpillFolder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_host_temp_folder_the_held_namespace_covers_is_covered_once_in_a_joined_call_and_stays_hidden() {
    each_user(|user| {
        let Some(w) = World::new("covers", user) else { return };
        // Named as DSH names them (six letters or digits), not empty: covered.
        let tag = if user.is_some() { 'u' } else { 'r' };
        let spill = SpillFolder(PathBuf::from(format!("/tmp/dsh-spill-h{tag}{:04}", std::process::id() % 10_000)));
        let _ = fs::remove_dir_all(&spill.0);
        fs::create_dir_all(spill.0.join("session-0")).unwrap();
        fs::write(spill.0.join("session-0/out.txt"), "ENDED-SESSION-OUTPUT\n").unwrap();
        let profile = w.profile(json!([]));
        // The call that builds the fence covers the folder in the namespace
        // the keeper holds from then on.
        w.until_joined(&profile);
        let path = spill.0.display();
        let script = format!("grep -c ' {path} ' /proc/self/mountinfo > seen.txt; cat {path}/session-0/out.txt >> seen.txt 2>&1; true");
        let (_, held, ok) = w.run(&profile, &script);
        assert_eq!((held.as_str(), ok), ("joined", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert_eq!(seen.lines().next(), Some("1"), "one cover on the folder, the held one: {seen}");
        assert!(!seen.contains("ENDED-SESSION-OUTPUT"), "the ended session's output was read: {seen}");
    });
}

#[test]
fn a_host_temp_folder_made_again_after_the_fence_was_held_is_covered_by_the_joined_call() {
    each_user(|user| {
        let Some(w) = World::new("covers-again", user) else { return };
        let tag = if user.is_some() { 'u' } else { 'r' };
        let spill = SpillFolder(PathBuf::from(format!("/tmp/dsh-spill-a{tag}{:04}", std::process::id() % 10_000)));
        let _ = fs::remove_dir_all(&spill.0);
        fs::create_dir_all(spill.0.join("session-0")).unwrap();
        fs::write(spill.0.join("session-0/out.txt"), "FIRST-SESSION\n").unwrap();
        let profile = w.profile(json!([]));
        w.until_joined(&profile);
        // The held cover sat on the folder that is gone; a new one at the
        // same path is not covered in the held namespace.
        fs::remove_dir_all(&spill.0).unwrap();
        fs::create_dir_all(spill.0.join("session-1")).unwrap();
        fs::write(spill.0.join("session-1/out.txt"), "SECOND-SESSION\n").unwrap();
        let path = spill.0.display();
        let script = format!("ls -A {path} > seen.txt 2>&1; cat {path}/session-1/out.txt >> seen.txt 2>&1; echo x > {path}/planted 2>>seen.txt; true");
        let (_, held, ok) = w.run(&profile, &script);
        assert_eq!((held.as_str(), ok), ("joined", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert!(!seen.contains("SECOND-SESSION") && !seen.lines().any(|l| l == "session-1"), "the folder made again was read: {seen}");
        assert!(!spill.0.join("planted").exists(), "a file was planted in the host's folder: {seen}");
    });
}

#[test]
fn npxs_cache_is_bound_read_only_once_in_a_joined_call_and_again_when_made_anew() {
    each_user(|user| {
        let Some(w) = World::new("code-cache", user) else { return };
        // ~/.npm is the package manager's: the runner shuts `_npx` in it.
        let npx = w.base.join("home/.npm/_npx");
        fs::create_dir_all(&npx).unwrap();
        users::own(&w.base.join("home/.npm"), user);
        let profile = w.profile(json!([]));
        w.until_joined(&profile);
        let path = npx.display();
        let script = format!("grep -c ' {path} ' /proc/self/mountinfo > seen.txt; echo x > {path}/planted 2>>seen.txt; true");
        let (_, held, ok) = w.run(&profile, &script);
        assert_eq!((held.as_str(), ok), ("joined", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert_eq!(seen.lines().next(), Some("1"), "one bind on the cache, the held one: {seen}");
        assert!(!npx.join("planted").exists(), "code was planted in npx's cache: {seen}");
        // Made again after the fence was held: the held bind went with the
        // folder it sat on, and the joined call binds the new one itself.
        fs::remove_dir_all(&npx).unwrap();
        fs::create_dir(&npx).unwrap();
        users::own(&npx, user);
        let (_, held, ok) = w.run(&profile, &script);
        assert_eq!((held.as_str(), ok), ("joined", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert_eq!(seen.lines().next(), Some("1"), "the new folder is bound once: {seen}");
        assert!(!npx.join("planted").exists(), "code was planted in npx's cache made anew: {seen}");
        // Control: the rest of ~/.npm stays open to the call.
        let (_, _, ok) = w.run(&profile, &format!("echo x > {}/open.txt", w.p("home/.npm")));
        assert!(ok, "~/.npm itself is open to a call");
    });
}

/// What the runner says of how it found the host's temp folders, and
/// whether the call succeeded: `sh -c script` under `profile`.
fn temp_report(w: &World, profile: &Value, script: &str) -> (String, bool) {
    let out = w.call(profile, script).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let how = stderr.lines().find_map(|l| l.strip_prefix("dsh-allow host temp folders: ")).unwrap_or("(no report)").to_string();
    (how, out.status.success())
}

#[test]
fn a_change_in_the_temp_folder_that_brings_no_host_folder_is_vouched_for_by_the_keeper_and_one_that_does_is_listed_and_covered() {
    each_user(|user| {
        let Some(w) = World::new("temp-watch", user) else { return };
        let profile = w.profile(json!([]));
        w.until_joined(&profile);
        let tag = if user.is_some() { 'u' } else { 'r' };
        let plain = PathBuf::from(format!("/tmp/dsh-allow-temp-watch-{tag}{}", std::process::id()));
        // A file comes: listed once, under the keeper's token.
        fs::write(&plain, "x").unwrap();
        let (first, _) = temp_report(&w, &profile, "true");
        assert_eq!(first, "listed");
        // It goes again: the temp folder changed, but no host folder came or went.
        fs::remove_file(&plain).unwrap();
        let (second, ok) = temp_report(&w, &profile, "true");
        assert_eq!((second.as_str(), ok), ("as last listed (the keeper saw no host folder come or go)", true));
        // A host's folder comes, holding a session's output: the next call lists and covers it.
        let spill = SpillFolder(PathBuf::from(format!("/tmp/dsh-spill-w{tag}{:04}", std::process::id() % 10_000)));
        let _ = fs::remove_dir_all(&spill.0);
        fs::create_dir_all(spill.0.join("session-0")).unwrap();
        fs::write(spill.0.join("session-0/out.txt"), "LIVE-SESSION-OUTPUT\n").unwrap();
        let path = spill.0.display();
        let (third, ok) = temp_report(&w, &profile, &format!("cat {path}/session-0/out.txt > seen.txt 2>&1; true"));
        assert_eq!((third.as_str(), ok), ("listed", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert!(!seen.contains("LIVE-SESSION-OUTPUT"), "the host folder made since was read: {seen}");
        // And it stays covered while the keeper vouches again.
        fs::write(&plain, "x").unwrap();
        temp_report(&w, &profile, "true");
        fs::remove_file(&plain).unwrap();
        let (fourth, ok) = temp_report(&w, &profile, &format!("cat {path}/session-0/out.txt > seen.txt 2>&1; true"));
        assert_eq!((fourth.as_str(), ok), ("as last listed (the keeper saw no host folder come or go)", true));
        let seen = fs::read_to_string(w.base.join("ws/seen.txt")).unwrap();
        assert!(!seen.contains("LIVE-SESSION-OUTPUT"), "the host folder was read once vouched for: {seen}");
    });
}
