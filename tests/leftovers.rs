//! Processes that outlive their call, on the real kernel: they are kept
//! (a server started in the background is everyday work), said on the
//! call's standard error for the ledger, stay fenced, and are judged
//! against the DSH control planes running *now*: a `dsh` that starts after
//! the call ended — a restart, a second one, one with another DSH_HOME —
//! is refused to them as to any fenced call, while an ordinary local
//! server stays reachable. A termination that arrives while the call is
//! still being set up ends it before its command starts, and a kill of the
//! call's group at any moment leaves no command running. Each runs as root
//! and as uid 65534, each probe beside an unfenced control.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/users.rs"]
mod users;

use serde_json::json;
use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

struct World {
    base: PathBuf,
    user: Option<u32>,
    children: Vec<Child>,
}

impl World {
    fn new(name: &str, user: Option<u32>) -> Option<World> {
        if !users::usable(name, user) {
            return None;
        }
        let who = user.map_or("root".to_string(), |u| u.to_string());
        let base = scratch::root().join(format!("left-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh", "bin"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        // By `cp`, not in this process: a test thread forking meanwhile would
        // hold the copy open for writing, and its exec fail (ETXTBSY).
        users::copy_runner(BIN, &base.join("bin/dsh-allow"));
        // A stand-in DSH: DSH's command name, listening on a loopback port
        // it writes down (what `dsh web` does, as far as a socket goes).
        let server = "#!/usr/bin/python3\nimport socket, sys\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen(8)\nopen(sys.argv[1], 'w').write(str(s.getsockname()[1]))\nwhile True:\n    c, _ = s.accept()\n    c.close()\n";
        for name in ["dsh", "devserver"] {
            fs::write(base.join("bin").join(name), server).unwrap();
            fs::set_permissions(base.join("bin").join(name), fs::Permissions::from_mode(0o755)).unwrap();
        }
        users::own(&base, user);
        Some(World { base, user, children: Vec::new() })
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    /// `bash -c script` under the runner (after `before`, e.g. `nohup`), in
    /// a process group of its own as the host starts it; the profile's
    /// `persistence` decides whether the call has a process namespace and
    /// an init of its own (`shut`) or neither (`open`).
    fn group_call(&self, persistence: &str, before: &[&str], script: &str) -> Child {
        use std::os::unix::process::CommandExt;
        let profile = json!({
            "workspace": self.path("ws"), "home": self.path("home"), "harnessHome": self.path("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [], "persistence": persistence,
        })
        .to_string();
        let runner = self.path("bin/dsh-allow").to_string_lossy().into_owned();
        let mut argv: Vec<&str> = before.to_vec();
        argv.extend([runner.as_str(), "run", "--profile-json", &profile, "--", "/bin/bash", "-c", script]);
        users::command_as(self.user, &argv).current_dir(self.path("ws")).env("HOME", self.path("home")).env("PATH", PATH).process_group(0).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
    }

    /// How long the set-up of such a call takes: the second of two calls
    /// left alone, each of which must run its command.
    fn set_up_time(&self, persistence: &str) -> Duration {
        let mut set_up = Duration::ZERO;
        for _ in 0..2 {
            let _ = fs::remove_file(self.path("ws/control"));
            let started = Instant::now();
            assert!(self.group_call(persistence, &[], "touch control").wait().unwrap().success(), "the call fails even when left alone");
            set_up = started.elapsed();
            assert!(self.path("ws/control").exists(), "the control call never ran its command");
        }
        set_up
    }

    /// A listener of this user, started now (unfenced), and its port.
    fn listen(&mut self, program: &str) -> u16 {
        let port_file = self.path(&format!("home/{program}.port"));
        let prog = self.path(&format!("bin/{program}")).to_string_lossy().into_owned();
        let child = users::command_as(self.user, &[&prog, &port_file.to_string_lossy()]).env("PATH", PATH).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        self.children.push(child);
        wait_for(&port_file);
        std::thread::sleep(Duration::from_millis(50));
        fs::read_to_string(&port_file).unwrap().trim().parse().unwrap()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn wait_for(p: &Path) {
    let start = Instant::now();
    while !p.exists() || fs::read_to_string(p).map(|t| t.trim().is_empty()).unwrap_or(true) {
        assert!(start.elapsed() < Duration::from_secs(20), "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The probe a leftover runs once told to: connect to each port in
/// `ports`, write what each connect did.
const PROBE: &str = r#"
import os, socket, sys, time
ws = sys.argv[1]
for _ in range(800):
    if os.path.exists(os.path.join(ws, "go")):
        break
    time.sleep(0.025)
out = []
for p in open(os.path.join(ws, "go")).read().split():
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", int(p)))
        out.append(p + " connected")
    except OSError as e:
        out.append(p + " " + (e.strerror or str(e)))
    s.close()
open(os.path.join(ws, "result.txt"), "w").write("\n".join(out) + "\n")
"#;

#[test]
fn a_process_left_running_is_reported_kept_fenced_and_judged_against_the_hosts_running_now() {
    for user in [None, Some(NOBODY)] {
        let Some(mut w) = World::new("live", user) else { continue };
        fs::write(w.path("ws/probe.py"), PROBE).unwrap();
        users::own(&w.base, user);
        let ws = w.path("ws").to_string_lossy().into_owned();
        let profile = json!({
            "workspace": ws, "home": w.path("home"), "harnessHome": w.path("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
        });
        let script = "setsid python3 probe.py \"$PWD\" </dev/null >/dev/null 2>&1 & echo started";
        let runner = w.path("bin/dsh-allow").to_string_lossy().into_owned();
        let mut argv = users::become_user(user);
        argv.extend([runner, "run".into(), "--profile-json".into(), profile.to_string(), "--".into(), "/bin/bash".into(), "-c".into(), script.into()]);
        let out = Command::new(&argv[0]).args(&argv[1..]).current_dir(w.path("ws")).env("HOME", w.path("home")).env("PATH", PATH).stdin(Stdio::null()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("dsh-allow: left running: 1 process of this call (pids "), "the call says what it left running: {stderr}");
        // Only now, with the call over, do a DSH and a dev server start.
        let dsh = w.listen("dsh");
        let dev = w.listen("devserver");
        fs::write(w.path("ws/go"), format!("{dsh} {dev}")).unwrap();
        wait_for(&w.path("ws/result.txt"));
        let result = fs::read_to_string(w.path("ws/result.txt")).unwrap();
        assert!(result.contains(&format!("{dsh} Permission denied")), "a DSH started after the call was reached by what the call left running: {result}");
        assert!(result.contains(&format!("{dev} connected")), "an ordinary local server is cut off: {result}");
        // The control: the same probe unfenced reaches both.
        let _ = fs::remove_file(w.path("ws/result.txt"));
        let probe = w.path("ws/probe.py").to_string_lossy().into_owned();
        let control = users::command_as(user, &["/usr/bin/python3", &probe, &ws]).current_dir(w.path("ws")).env("PATH", PATH).output().unwrap();
        assert!(control.status.success(), "{}", String::from_utf8_lossy(&control.stderr));
        let result = fs::read_to_string(w.path("ws/result.txt")).unwrap();
        assert!(result.contains(&format!("{dsh} connected")), "the stand-in DSH cannot be reached even unfenced: {result}");
    }
}

/// The host starts each call in a process group of its own and, once the
/// call has ended, looks for anything of that group still there (DSH then
/// reads every process on the machine, ~1.8 ms a call). A call that leaves
/// nothing running leaves nothing in its group — not even the call's init,
/// whose own exit (the namespaces torn down) comes after the runner's. One
/// that leaves a process running keeps it in the group, where a kill of the
/// group (the host's timeout) reaches it.
#[test]
fn a_call_that_leaves_nothing_running_leaves_nothing_in_its_process_group() {
    use std::os::unix::process::CommandExt;
    for user in [None, Some(NOBODY)] {
        let Some(w) = World::new("group", user) else { continue };
        let ws = w.path("ws").to_string_lossy().into_owned();
        let profile = json!({
            "workspace": ws, "home": w.path("home"), "harnessHome": w.path("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
        });
        let runner = w.path("bin/dsh-allow").to_string_lossy().into_owned();
        for (script, left) in [("echo done", false), ("sleep 60 >/dev/null 2>&1 & echo started", true)] {
            let argv = [runner.as_str(), "run", "--profile-json", &profile.to_string(), "--", "/bin/bash", "-c", script];
            let mut c = users::command_as(user, &argv).current_dir(w.path("ws")).env("HOME", w.path("home")).env("PATH", PATH).process_group(0).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            let group = c.id() as i32;
            assert!(c.wait().unwrap().success(), "`{script}` failed");
            // SAFETY: kill with signal 0 only asks whether the group has a member.
            let alive = unsafe { libc::kill(-group, 0) } == 0;
            if alive {
                // SAFETY: the group this test started.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
            assert_eq!(alive, left, "`{script}`: something of the call {} in its process group once it ended", if alive { "was still" } else { "was no longer" });
        }
    }
}

/// A termination sent to the runner's child while it sets the call up
/// ends the call before its command starts — whenever in the set-up it
/// lands: each round waits a little longer after the child appears. Once
/// the command runs, the child of a call with its own process namespace is
/// that namespace's init, which takes no default action for a signal (a
/// kill of the call's group reaches the command itself); so where the
/// termination landed decides what a round may ask. It is looked up right
/// after the kill: the note the set-up keeps of a termination still in
/// place, or the child not yet turned into the command.
#[test]
fn a_termination_sent_while_the_call_is_set_up_ends_it_before_its_command_starts() {
    for user in [None, Some(NOBODY)] {
        let (mut landed, mut skipped) = (Vec::new(), false);
        for round in 0..20u32 {
            let Some(w) = World::new(&format!("term{round}"), user) else {
                skipped = true;
                break;
            };
            let ws = w.path("ws").to_string_lossy().into_owned();
            // No fence cache: the child builds the whole fence, milliseconds
            // in which the termination lands.
            let profile = json!({
                "workspace": ws, "home": w.path("home"), "harnessHome": w.path("home/.dsh"),
                "platform": "linux", "mode": "workspace-write", "rules": [],
            });
            let runner = w.path("bin/dsh-allow").to_string_lossy().into_owned();
            let marker = w.path("ws/ran");
            let script = format!("touch {} && sleep 0.2", marker.display());
            // At the lowest priority: on a busy machine this test, spinning
            // for the child, comes first, and the set-up takes longer.
            let argv = ["/usr/bin/nice", "-n", "19", runner.as_str(), "run", "--profile-json", &profile.to_string(), "--", "/bin/bash", "-c", &script];
            let started = Instant::now();
            let mut c = users::command_as(user, &argv).current_dir(w.path("ws")).env("HOME", w.path("home")).env("PATH", PATH).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            // The runner (`setpriv` and `nice` exec it in place) and the
            // child it forks to set the call up, `round` × 150 µs after it
            // appears.
            let runner_pid = c.id() as i32;
            let mut in_set_up = None;
            while in_set_up.is_none() && started.elapsed() < Duration::from_secs(5) {
                if let Some(&child) = children(runner_pid).first() {
                    let seen = Instant::now();
                    while seen.elapsed() < Duration::from_micros(150) * round {}
                    // SAFETY: a pid this test's call started.
                    unsafe { libc::kill(child, libc::SIGTERM) };
                    in_set_up = Some(still_setting_up(child));
                }
            }
            let status = c.wait().unwrap();
            if in_set_up.expect("the runner's child never appeared") != Some(true) {
                continue;
            }
            landed.push(round);
            assert!(!status.success(), "{user:?}, round {round}: the call went on after a termination during its set-up");
            assert!(!marker.exists(), "{user:?}, round {round}: the command started after a termination during the call's set-up");
        }
        assert!(skipped || landed.len() > 1, "{user:?}: in 20 calls fewer than two terminations landed while the call was set up ({landed:?})");
    }
}

/// Whether `pid`, the runner's child, was still setting the call up when a
/// termination just sent to it arrived (`None`: it is gone, no telling).
/// As the namespace's init it notes the termination in a handler of its
/// own until its command starts, or holds it blocked until it installs
/// that handler; as a plain process it is the runner until it execs the
/// command or leaves the call to the init it started, and the termination
/// either ends it first or is passed on to that init. A process already
/// on its way out (its own exit, or the termination's) takes no signal:
/// no telling.
fn still_setting_up(pid: i32) -> Option<bool> {
    const TERM: u64 = 1 << (libc::SIGTERM - 1);
    const PF_EXITING: u64 = 0x4;
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let flags: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(6)?.parse().ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    if flags & PF_EXITING != 0 {
        return None;
    }
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).map(str::trim).unwrap_or_default();
    let mask = |name: &str| u64::from_str_radix(field(name), 16).unwrap_or(0);
    let init = field("NSpid:").split_whitespace().last() == Some("1");
    Some(if init {
        mask("SigCgt:") & TERM != 0 || (mask("SigBlk:") & TERM != 0 && (mask("SigPnd:") | mask("ShdPnd:")) & TERM != 0)
    } else {
        field("Name:") == "dsh-allow"
    })
}

/// The host ends a call by killing its process group (a timeout, the user's
/// interrupt). Whenever that lands — before the fence is up, while it goes
/// up, in the instant the command is forked, once it runs — the command
/// either never starts or is ended with the rest: nothing of the call goes
/// on after the host asked it to end. With the repository's surfaces shut
/// (as the plugin runs it) the call has a process namespace and an init of
/// its own; without, it has neither.
#[test]
fn a_termination_of_the_callers_group_at_any_moment_of_the_set_up_leaves_no_command_running() {
    each_world("groupterm", |w, persistence, set_up| {
        let rounds = 60u32;
        for i in 0..rounds {
            // A command that outlived the kill makes its mark a second
            // later; one the kill reached makes none.
            let mut c = w.group_call(persistence, &[], &format!("sleep 1; touch ran-{i}"));
            std::thread::sleep(set_up * 3 / 2 * i / rounds);
            // SAFETY: the group this test started.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGTERM) };
            let status = wait_within(&mut c, Duration::from_secs(20)).unwrap_or_else(|| panic!("{persistence}, round {i}: the call hung after its group was terminated"));
            assert!(!status.success(), "{persistence}, round {i}: the call succeeded after its group was terminated");
        }
        std::thread::sleep(Duration::from_millis(1500));
        let ran: Vec<u32> = (0..rounds).filter(|i| w.path(&format!("ws/ran-{i}")).exists()).collect();
        assert!(ran.is_empty(), "{persistence}: commands ran on after their call's group was terminated (rounds {ran:?}, set-up {set_up:?})");
    });
}

/// `f` in a world of each user (root and uid 65534) and each persistence
/// (the call with its own process namespace and init, and without), with
/// how long that call's set-up takes.
fn each_world(name: &str, f: impl Fn(&World, &str, Duration)) {
    for user in [None, Some(NOBODY)] {
        for persistence in ["shut", "open"] {
            let Some(w) = World::new(&format!("{name}-{persistence}"), user) else { continue };
            let set_up = w.set_up_time(persistence);
            f(&w, persistence, set_up);
        }
    }
}

/// A hang-up the host started the runner ignoring (`nohup`) ends nothing:
/// sent to the call's group at any moment of its set-up, the call goes on
/// and its command runs, with the hang-up still ignored.
#[test]
fn a_hang_up_the_runner_was_started_ignoring_ends_no_call() {
    each_world("nohup", |w, persistence, set_up| {
        let rounds = 24u32;
        for i in 0..rounds {
            // The command is hung up on too, after its start: ignoring it,
            // it goes on to make its mark.
            let started = Instant::now();
            let mut c = w.group_call(persistence, &["/usr/bin/nohup"], &format!("sleep 0.3; touch ran-{i}"));
            // From the moment `nohup` has made way for the runner (before
            // that, the hang-up is nohup's to ignore or die of).
            let comm = format!("/proc/{}/comm", c.id());
            while fs::read_to_string(&comm).is_ok_and(|n| n.trim() != "dsh-allow") && started.elapsed() < Duration::from_secs(5) {
                std::thread::yield_now();
            }
            std::thread::sleep(set_up * 3 / 2 * i / rounds);
            // SAFETY: the group this test started.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGHUP) };
            let status = wait_within(&mut c, Duration::from_secs(20)).unwrap_or_else(|| panic!("{persistence}, round {i}: the call hung"));
            assert!(status.success(), "{persistence}, round {i}: a hang-up the runner ignores ended the call ({status:?}, after {:?})", started.elapsed());
            assert!(w.path(&format!("ws/ran-{i}")).exists(), "{persistence}, round {i}: the command did not run to its end");
        }
    });
}

/// The call's status if it ends within `limit`; else its group is killed.
fn wait_within(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(st) = c.try_wait().unwrap() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: the group this test started.
    unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
    let _ = c.wait();
    None
}

/// The children of `pid`, over all its threads.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks.flatten().flat_map(|t| fs::read_to_string(t.path().join("children")).unwrap_or_default().split_whitespace().filter_map(|c| c.parse().ok()).collect::<Vec<i32>>()).collect()
}
