//! What the DSH host and later runs read, out of a fenced call's reach, on
//! the real kernel (`dsh-allow run`, full fence): the host's temp folders,
//! its session logs and the audit ledger, the workspace's `.env`, a grant
//! on a link, npx's cache of code, deployed applications' `.env` files and
//! cluster kubeconfigs. Each probe is hidden code (inline Python) doing what
//! the attack did; each runs unfenced too, as a control that must reach
//! what the fence keeps shut. As root and as an unprivileged user (uid
//! 65534), whose runner takes the user-namespace path.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{json, Value};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/users.rs"]
mod users;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };

/// A world for one test and one user: workspace, home (with a harness home
/// and a thesis), and a copy of the runner that user may start. Outside the
/// temp folders (the baseline opens those entirely), where uid 65534 can
/// reach it.
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
        let base = scratch::root().join(format!("host-state-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh", "home/Documents", "home/.bashrc.d"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/Documents/thesis.tex"), "\\chapter{Four years}\n").unwrap();
        let runner = base.join("dsh-allow");
        // DSH_ALLOW_TEST_RUNNER: another build to try the same probes on
        // (an earlier commit's, to see each test fail without its change).
        users::copy_runner(&std::env::var("DSH_ALLOW_TEST_RUNNER").unwrap_or_else(|_| BIN.to_string()), &runner);
        fs::set_permissions(&runner, fs::Permissions::from_mode(0o755)).unwrap();
        let w = World { base, user, runner };
        w.own(&w.base);
        Some(w)
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    /// Hand `path` and all below it to the test's user.
    fn own(&self, path: &Path) {
        users::own(path, self.user);
    }

    fn profile(&self, extra: Value) -> Value {
        let mut p = json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json"), self.p("home/.dsh/dsh-allow-audit.ndjson")],
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    /// `python3 -c code` under the fence (`profile`), or with no fence, as
    /// this world's user, in the workspace.
    /// With `opts`, more options to the runner.
    fn python_with(&self, profile: Option<&Value>, opts: &[&str], code: &str) -> Output {
        let runner = self.runner.to_string_lossy().into_owned();
        let text = profile.map(|p| p.to_string());
        // With options, the runner's parent is a shell started now (the
        // runner takes its parent for a host, as the plugin's host is).
        let wrap: &[&str] = if opts.is_empty() { &[] } else { &["/bin/sh", "-c", "\"$@\"; exit $?", "sh"] };
        let argv: Vec<&str> = match &text {
            Some(t) => [wrap, &[runner.as_str(), "run", "--profile-json", t], opts, &["--", "/usr/bin/python3", "-c", code]].concat(),
            None => vec!["/usr/bin/python3", "-c", code],
        };
        let mut c = users::command_as(self.user, &argv);
        c.current_dir(self.base.join("ws")).env("HOME", self.base.join("home")).env("PATH", "/usr/bin:/bin").stdin(Stdio::null());
        c.output().unwrap()
    }

    /// The probe's JSON line (its last line of output), and its stderr.
    fn probe(&self, profile: Option<&Value>, code: &str) -> (Value, String) {
        self.probe_with(profile, &[], code)
    }

    fn probe_with(&self, profile: Option<&Value>, opts: &[&str], code: &str) -> (Value, String) {
        let out = self.python_with(profile, opts, code);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let line = stdout.lines().last().unwrap_or_else(|| panic!("the probe printed nothing; stderr: {stderr}"));
        (serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}; stderr: {stderr}")), stderr)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn for_each_user(name: &str, f: impl Fn(&World)) {
    for user in [None, Some(users::NOBODY)] {
        if let Some(w) = World::new(name, user) {
            f(&w);
        }
    }
}

/// Python that tries each `(label, statement)` and prints one JSON object:
/// label → "ok" or the error.
fn attempts(steps: &[(&str, String)]) -> String {
    let mut code = String::from("import json, os\nout = {}\n");
    for (label, stmt) in steps {
        code.push_str(&format!("try:\n    {stmt}\n    out[{label:?}] = 'ok'\nexcept Exception as e:\n    out[{label:?}] = type(e).__name__ + ': ' + str(e)\n"));
    }
    code.push_str("print(json.dumps(out))\n");
    code
}

fn refused(v: &Value, label: &str) -> bool {
    v[label].as_str().is_some_and(|s| s != "ok")
}

/// A folder named as the DSH host names its temp folders, removed on drop.
struct HostFolder(PathBuf);

impl HostFolder {
    fn new(prefix: &str, tag: &str) -> HostFolder {
        // mkdtemp's six letters and digits, unique to this test run.
        let six: String = format!("{tag}{:05}", std::process::id() % 100_000).chars().take(6).collect();
        let dir = PathBuf::from(format!("/tmp/{prefix}{six}"));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        HostFolder(dir)
    }
    fn p(&self, rel: &str) -> String {
        self.0.join(rel).to_string_lossy().into_owned()
    }
}

impl Drop for HostFolder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// What dsh-spill-local does when a session's result is too long: `mkdir -p`
/// of the session folder, then an exclusive new file in it. Where it lands.
fn host_spills(session: &str, text: &str) -> PathBuf {
    fs::create_dir_all(session).unwrap();
    let file = Path::new(session).join("a1b2c3d4e5f6-bash.txt");
    fs::OpenOptions::new().write(true).create_new(true).open(&file).map(|_| ()).unwrap();
    fs::write(&file, text).unwrap();
    fs::canonicalize(&file).unwrap()
}

#[test]
fn the_hosts_spill_folder_cannot_be_swapped_for_a_link_read_or_written_by_a_call() {
    for_each_user("spill", |w| {
        let tag = if w.user.is_some() { "n" } else { "r" };
        let spill = HostFolder::new("dsh-spill-", tag);
        let session = spill.p("session-0123456789ab");
        fs::create_dir_all(&session).unwrap();
        fs::write(format!("{session}/f00d-bash.txt"), "API_KEY=sk-live-other-session\n").unwrap();
        let subprocess = HostFolder::new("dsh-subprocess-", tag);
        fs::write(subprocess.p("dsh-subprocess-1-1-ab-stdout.log"), "output\n").unwrap();
        w.own(&spill.0);
        w.own(&subprocess.0);
        // A user's own file in the temp folder, for the agent to read.
        let users_file = format!("/tmp/dsh-allow-users-report-{tag}{}.log", std::process::id());
        fs::write(&users_file, "report\n").unwrap();
        w.own(Path::new(&users_file));
        // Where the control moves the session folder (removed with the test).
        let moved = format!("{}-moved", spill.0.display());
        let _moved = HostFolder(PathBuf::from(&moved));
        let steps = [
            ("read", format!("open({:?}).read()", format!("{session}/f00d-bash.txt"))),
            ("readSubprocess", format!("open({:?}).read()", subprocess.p("dsh-subprocess-1-1-ab-stdout.log"))),
            ("write", format!("open({:?}, 'w').write('x')", format!("{session}/planted.txt"))),
            ("swap", format!("os.rename({session:?}, {moved:?}); os.symlink({:?}, {session:?})", w.p("home/.bashrc.d"))),
            ("usersFile", format!("open({users_file:?}).read()")),
            ("newInTemp", format!("open({:?}, 'w').write('x')", format!("{users_file}.new"))),
        ];
        let (fenced, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        for step in ["read", "readSubprocess", "write", "swap"] {
            assert!(refused(&fenced, step), "{step} in the host's temp folder was not refused: {fenced}");
        }
        assert_eq!(fenced["usersFile"], "ok", "a user's file in /tmp stays readable: {fenced}");
        assert_eq!(fenced["newInTemp"], "ok", "a new file in /tmp can still be made: {fenced}");
        // The host spills again: it writes where its session folder is.
        let landed = host_spills(&session, "echo pwned\n");
        assert!(landed.starts_with(&spill.0), "the host's spill landed outside its folder: {}", landed.display());
        fs::remove_file(&landed).unwrap();

        // Control: the same code with no fence swaps the folder, and the
        // host's next spill lands in ~/.bashrc.d, which the user's next shell runs.
        let (open, _) = w.probe(None, &attempts(&steps));
        for step in ["read", "readSubprocess", "write", "swap"] {
            assert_eq!(open[step], "ok", "control: {step} did not work unfenced: {open}");
        }
        let landed = host_spills(&session, "echo pwned\n");
        assert!(landed.starts_with(fs::canonicalize(w.p("home/.bashrc.d")).unwrap()), "control: the spill did not follow the link: {}", landed.display());
        let _ = fs::remove_file(&users_file);
        let _ = fs::remove_file(format!("{users_file}.new"));
    });
}

#[test]
fn session_logs_storages_the_harness_env_and_the_audit_ledger_are_not_read_by_a_call() {
    for_each_user("logs", |w| {
        let dsh = |rel: &str| w.p(&format!("home/.dsh/{rel}"));
        fs::create_dir_all(dsh("sessions/2026-12")).unwrap();
        fs::create_dir_all(dsh("storages")).unwrap();
        fs::write(dsh("sessions/2026-12/s1.jsonl"), "{\"text\":\"sk-live-printed-once\"}\n").unwrap();
        fs::write(dsh("storages/web.json"), "{}\n").unwrap();
        fs::write(dsh(".env"), "DEEPSEEK_API_KEY=sk-x\n").unwrap();
        fs::write(dsh("dsh-allow-audit.ndjson"), "{\"kind\":\"decision\"}\n").unwrap();
        fs::write(dsh("settings.yaml"), "permission: {}\n").unwrap();
        w.own(&w.base.join("home/.dsh"));
        let steps = [
            ("log", format!("open({:?}).read()", dsh("sessions/2026-12/s1.jsonl"))),
            ("storage", format!("open({:?}).read()", dsh("storages/web.json"))),
            ("env", format!("open({:?}).read()", dsh(".env"))),
            ("ledger", format!("open({:?}).read()", dsh("dsh-allow-audit.ndjson"))),
            ("settings", format!("open({:?}).read()", dsh("settings.yaml"))),
        ];
        let (fenced, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        // (Their names stay listable, as a credential store's do: Landlock's
        // listing right carries down from the harness home.)
        for step in ["log", "storage", "env", "ledger"] {
            assert!(refused(&fenced, step), "{step} was read by a fenced call: {fenced}");
        }
        assert_eq!(fenced["settings"], "ok", "the rest of the harness home stays readable: {fenced}");
        let (open, _) = w.probe(None, &attempts(&steps));
        for step in ["log", "storage", "env", "ledger"] {
            assert_eq!(open[step], "ok", "control: {step} unfenced: {open}");
        }
    });
}

#[test]
fn the_workspace_env_is_shut_for_hidden_code_and_open_to_a_grant_naming_it() {
    for_each_user("dotenv", |w| {
        let env = w.p("ws/.env");
        fs::write(&env, "PORT=3000\n").unwrap();
        w.own(Path::new(&env));
        let plant = "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch .git/pwned'\"\n";
        let steps = [
            ("append", format!("open({env:?}, 'a').write({plant:?})")),
            ("replace", format!("open({:?}, 'w').write({plant:?}); os.replace({:?}, {env:?})", w.p("ws/.env.tmp"), w.p("ws/.env.tmp"))),
        ];
        let (fenced, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        assert!(refused(&fenced, "append") && refused(&fenced, "replace"), "the workspace's .env was changed: {fenced}");
        assert_eq!(fs::read_to_string(&env).unwrap(), "PORT=3000\n");
        // A grant naming it (Allow once on a card that names it) opens it.
        let grant = json!({"grants": [{"path": env, "recursive": false, "access": {"write": true, "create": true}}]});
        let (granted, _) = w.probe(Some(&w.profile(grant)), &attempts(&steps[..1]));
        assert_eq!(granted["append"], "ok", "{granted}");

        // Missing: made by hidden code, taken back when the call ends.
        fs::remove_file(&env).unwrap();
        let _ = fs::remove_file(w.p("ws/.env.tmp"));
        let make = [("make", format!("open({env:?}, 'w').write({plant:?})"))];
        let (made, stderr) = w.probe(Some(&w.profile(json!({}))), &attempts(&make));
        assert_eq!(made["make"], "ok", "{made}");
        assert!(!Path::new(&env).exists(), "the .env the call made is still there");
        assert!(stderr.contains("dsh-allow: removed") && stderr.contains(".env"), "the call is told: {stderr}");
        // Control: unfenced, both stay.
        let (open, _) = w.probe(None, &attempts(&make));
        assert_eq!(open["make"], "ok");
        assert!(fs::read_to_string(&env).unwrap().contains("fsmonitor"), "control: the plant stays");
    });
}

#[test]
fn npxs_cache_is_read_only_to_every_call_but_the_package_managers_own() {
    for_each_user("npx", |w| {
        fs::create_dir_all(w.p("home/.npm/_cacache")).unwrap();
        w.own(&w.base.join("home/.npm"));
        let planted = w.p("home/.npm/_npx/0a1b2c3d/node_modules/cowsay/index.js");
        let steps = [
            ("plant", format!("os.makedirs(os.path.dirname({planted:?}), exist_ok=True); open({planted:?}, 'w').write('require(\"child_process\").execSync(\"touch ~/pwned\")')")),
            ("cache", format!("open({:?}, 'w').write('x')", w.p("home/.npm/_cacache/index-tmp"))),
        ];
        let (fenced, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        assert!(refused(&fenced, "plant"), "hidden code planted a package in npx's cache: {fenced}");
        assert_eq!(fenced["cache"], "ok", "npm's content-addressed cache stays writable: {fenced}");
        assert!(!Path::new(&planted).exists());
        // The cache was made empty to be shut, and stays so (as npx's
        // first run leaves it), with nothing of the call's in it.
        assert_eq!(fs::read_dir(w.p("home/.npm/_npx")).map(|d| d.count()).ok(), Some(0), "the shut cache is not an empty folder");
        // npx's own call (the decision grants it the cache for the call).
        // (The decision also names the cache among the folders the line
        // makes, when it is missing: the runner makes it first.)
        let own = json!({"grants": [{"path": w.p("home/.npm/_npx"), "recursive": true, "access": {"write": true, "create": true, "delete": true}}], "folders": [w.p("home/.npm/_npx")]});
        let (granted, _) = w.probe(Some(&w.profile(own)), &attempts(&steps[..1]));
        assert_eq!(granted["plant"], "ok", "{granted}");
        fs::remove_dir_all(w.p("home/.npm/_npx/0a1b2c3d")).unwrap();
        let (open, _) = w.probe(None, &attempts(&steps[..1]));
        assert_eq!(open["plant"], "ok", "control: {open}");
    });
}

#[test]
fn a_delete_grant_on_a_link_removes_the_link_and_never_what_it_points_to() {
    for_each_user("link", |w| {
        let thesis = w.p("home/Documents/thesis.tex");
        std::os::unix::fs::symlink(&thesis, w.p("ws/old")).unwrap();
        w.own(&w.base.join("ws"));
        // Allow once on the card for `rm old`: delete on the workspace entry.
        let profile = w.profile(json!({"grants": [{"path": w.p("ws/old"), "recursive": false, "access": {"delete": true}}]}));
        let steps = [("target", format!("os.unlink({thesis:?})")), ("link", "os.unlink('old')".to_string())];
        let (fenced, _) = w.probe(Some(&profile), &attempts(&steps));
        assert!(refused(&fenced, "target"), "the grant on the link removed its target: {fenced}");
        assert_eq!(fenced["link"], "ok", "the granted entry itself is removed: {fenced}");
        assert!(Path::new(&thesis).exists(), "the thesis is gone");
        assert!(fs::symlink_metadata(w.p("ws/old")).is_err(), "the link is still there");
        let (open, _) = w.probe(None, &attempts(&steps[..1]));
        assert_eq!(open["target"], "ok", "control: {open}");
    });
}

#[test]
fn compiling_a_linked_package_plants_no_bytecode_where_the_link_leads() {
    for_each_user("pycache", |w| {
        let lib = w.p("home/.local/lib/x");
        fs::create_dir_all(&lib).unwrap();
        fs::write(format!("{lib}/mod.py"), "VALUE = 1\n").unwrap();
        std::os::unix::fs::symlink(&lib, w.p("ws/lib")).unwrap();
        w.own(&w.base);
        // The grant an old card named by the workspace path.
        let grant = json!({"grants": [{"path": w.p("ws/lib/__pycache__"), "recursive": true, "access": {"write": true, "create": true, "delete": true}}]});
        let code = "import compileall, json\nprint(json.dumps({'ok': compileall.compile_dir('lib', quiet=1)}))";
        let _ = w.probe(Some(&w.profile(grant)), code);
        assert!(!Path::new(&format!("{lib}/__pycache__")).exists(), "bytecode was planted in ~/.local/lib/x");
        let (open, _) = w.probe(None, code);
        assert_eq!(open["ok"], true);
        assert!(Path::new(&format!("{lib}/__pycache__")).exists(), "control: unfenced, compileall writes there");
    });
}

/// A file in a system folder for the test's span (and the folders made for it).
struct SystemFile {
    made: Vec<PathBuf>,
}

impl SystemFile {
    fn new(path: &str, text: &str) -> SystemFile {
        let mut made = Vec::new();
        let mut at = Path::new(path).parent().unwrap().to_path_buf();
        let mut missing = Vec::new();
        while !at.exists() {
            missing.push(at.clone());
            at = at.parent().unwrap().to_path_buf();
        }
        for d in missing.iter().rev() {
            fs::create_dir(d).unwrap();
            fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
            made.push(d.clone());
        }
        fs::write(path, text).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o644)).unwrap();
        made.push(PathBuf::from(path));
        SystemFile { made }
    }
}

impl Drop for SystemFile {
    fn drop(&mut self) {
        // Folders this test made go with what is in them (another file of
        // the test's may share one).
        for p in self.made.iter().rev() {
            let _ = fs::remove_file(p).or_else(|_| fs::remove_dir_all(p));
        }
    }
}

#[test]
fn deployed_applications_env_files_and_the_cluster_kubeconfig_are_not_read() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP system credentials: needs root to put files in /opt, /var/www and /etc");
        return;
    }
    let id = std::process::id();
    let opt = format!("/opt/dsh-allow-test-{id}/.env");
    let www = format!("/var/www/dsh-allow-test-{id}/.env.production");
    let readme = format!("/opt/dsh-allow-test-{id}/README");
    let _files = [
        SystemFile::new(&opt, "DB_PASSWORD=hunter2\n"),
        SystemFile::new(&www, "STRIPE_KEY=sk_live_x\n"),
        SystemFile::new(&readme, "an app\n"),
    ];
    let k3s = "/etc/rancher/k3s/k3s.yaml";
    let _k3s = (!Path::new(k3s).exists()).then(|| SystemFile::new(k3s, "users: [{user: {client-key-data: x}}]\n"));
    for_each_user("system", |w| {
        let steps = [
            ("opt", format!("open({opt:?}).read()")),
            ("www", format!("open({www:?}).read()")),
            ("k3s", format!("open({k3s:?}).read()")),
            ("readme", format!("open({readme:?}).read()")),
            ("listOpt", "os.listdir('/opt')".to_string()),
        ];
        let (fenced, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        for step in ["opt", "www", "k3s"] {
            assert!(refused(&fenced, step), "{step} was read by a fenced call: {fenced}");
        }
        assert_eq!(fenced["readme"], "ok", "the application's other files stay readable: {fenced}");
        assert_eq!(fenced["listOpt"], "ok", "{fenced}");
        let (open, _) = w.probe(None, &attempts(&steps));
        for step in ["opt", "www", "k3s"] {
            assert_eq!(open[step], "ok", "control: {step} unfenced: {open}");
        }
    });
}

/// The DSH processes running now that started before `t` (any user's).
fn dsh_started_before(t: std::time::SystemTime) -> Vec<i32> {
    let boot: f64 = fs::read_to_string("/proc/stat").unwrap().lines().find_map(|l| l.strip_prefix("btime ")).unwrap().trim().parse().unwrap();
    let t = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    fs::read_dir("/proc").unwrap().flatten().filter_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = fs::read(e.path().join("cmdline")).ok()?;
        if !dsh_allow::runner::hosts::is_dsh_command(&cmdline) {
            return None;
        }
        let stat = fs::read_to_string(e.path().join("stat")).ok()?;
        let start: f64 = stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?.parse().ok()?;
        (boot + start / ticks < t + 1.0).then_some(pid)
    }).collect()
}

#[test]
fn with_a_fence_cache_only_an_empty_folder_or_one_the_user_cannot_enter_older_than_every_running_host_is_left_uncovered() {
    for_each_user("harmless", |w| {
        let tag = if w.user.is_some() { "m" } else { "q" };
        let made = std::time::SystemTime::now();
        let dead = HostFolder::new("dsh-spill-", &format!("{tag}d"));
        let full = HostFolder::new("dsh-spill-", &format!("{tag}f"));
        fs::create_dir_all(full.p("session-0123456789ab")).unwrap();
        fs::write(full.p("session-0123456789ab/f00d-bash.txt"), "API_KEY=sk-live-ended-session\n").unwrap();
        // Root's DSH ended long ago too, its session's output left: to root
        // the same as `full`; to another user a folder shut by its mode.
        let roots = HostFolder::new("dsh-spill-", &format!("{tag}r"));
        fs::create_dir_all(roots.p("session-0123456789ab")).unwrap();
        fs::write(roots.p("session-0123456789ab/f00d-bash.txt"), "API_KEY=sk-live-roots-session\n").unwrap();
        w.own(&dead.0);
        w.own(&full.0);
        std::thread::sleep(std::time::Duration::from_millis(3200));
        let older = dsh_started_before(made);
        if !older.is_empty() {
            eprintln!("SKIP with_a_fence_cache_only_an_empty_folder_or_one_the_user_cannot_enter_older_than_every_running_host_is_left_uncovered: DSH processes {older:?} started before this test's folders, which are theirs as far as the runner can tell");
            return;
        }
        // A host starts (a program called dsh), then makes its folder.
        let host_program = w.base.join("dsh");
        users::copy_runner("/bin/sleep", &host_program);
        let mut host = std::process::Command::new(&host_program).arg("60").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let live = HostFolder::new("dsh-spill-", &format!("{tag}l"));
        w.own(&live.0);
        // Older than a moment: only its host's running keeps it covered.
        std::thread::sleep(std::time::Duration::from_millis(3200));
        fs::create_dir_all(w.base.join("home/.dsh/dsh-allow-fence")).unwrap();
        w.own(&w.base.join("home/.dsh"));
        let cache = w.p("home/.dsh/dsh-allow-fence");
        let steps = [
            ("dead", format!("open({:?}, 'w').write('x')", dead.p("probe"))),
            ("full", format!("open({:?}).read()", full.p("session-0123456789ab/f00d-bash.txt"))),
            ("live", format!("open({:?}, 'w').write('x')", live.p("probe"))),
            ("roots", format!("open({:?}).read()", roots.p("session-0123456789ab/f00d-bash.txt"))),
            ("roots covered", format!("assert any(l.split()[4] == {:?} for l in open('/proc/self/mountinfo'))", roots.0.display())),
        ];
        let mut profile = w.profile(json!({}));
        profile["protectedFiles"].as_array_mut().unwrap().push(json!(cache));
        for round in 0..2 {
            let (fenced, err) = w.probe_with(Some(&profile), &["--fence-cache", &cache], &attempts(&steps));
            assert_eq!(fenced["dead"], "ok", "round {round}: an empty folder no running host made is left as it is: {fenced} {err}");
            assert!(refused(&fenced, "full"), "round {round}: an ended session's output is covered: {fenced}");
            assert!(refused(&fenced, "live"), "round {round}: a running host's empty folder is covered: {fenced}");
            assert!(refused(&fenced, "roots"), "round {round}: root's ended session's output is out of reach: {fenced}");
            // Covering a folder this user cannot enter anyway costs a mount a call for nothing.
            assert_eq!(fenced["roots covered"] == "ok", w.user.is_none(), "round {round}: root's folder is covered for root (its output is there) and for no other user (its mode shuts it): {fenced}");
            let _ = fs::remove_file(dead.p("probe"));
        }
        // With no fence cache, nothing is known harmless: every folder is covered.
        let (uncached, _) = w.probe(Some(&w.profile(json!({}))), &attempts(&steps));
        for step in ["dead", "full", "live", "roots"] {
            assert!(refused(&uncached, step), "{step} with no fence cache: {uncached}");
        }
        assert_eq!(uncached["roots covered"], "ok", "with no fence cache every folder is covered: {uncached}");
        let _ = host.kill();
        let _ = host.wait();
    });
}
