//! The fence's side doors, on the real kernel: what hidden code inside a
//! fenced call (`dsh-allow run`, full fence, default rules) can reach
//! without naming a path — a daemon's unix socket, the DSH host's own
//! listeners, an agent, the terminal, another process's signals, root's
//! capabilities, a descriptor left open, git's indirections, a cache a later
//! call reads. Each test runs its probe under the fence and, as a control,
//! shows the same probe reaching the door with the fence off, so a test
//! that passes means the fence shut it. Each runs as root and again as an
//! unprivileged user (uid 65534, through setpriv), whose runner takes the
//! user-namespace path.
#![cfg(target_os = "linux")]

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

#[path = "support/users.rs"]
mod users;

use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };

/// A world for one test and one user: workspace, home, an outside folder,
/// and a copy of the runner that user may start. Under /tmp for the
/// unprivileged user (it cannot reach root's scratch folders); the doors
/// tested here do not depend on the temp folders being open.
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
        let base = std::env::temp_dir().join(format!("dsh-allow-side-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh", "home/.ssh", "outside"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/.bashrc"), "# rc\n").unwrap();
        let runner = base.join("dsh-allow");
        users::copy_runner(BIN, &runner);
        fs::set_permissions(&runner, fs::Permissions::from_mode(0o755)).unwrap();
        let w = World { base, user, runner };
        w.own();
        Some(w)
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    /// Hand the world to the test's user.
    fn own(&self) {
        users::own(&self.base, self.user);
    }

    fn profile(&self, extra: Value) -> Value {
        let mut p = json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    /// A command as this world's user, in the workspace.
    fn command(&self, argv: &[&str]) -> Command {
        let mut c = users::command_as(self.user, argv);
        c.current_dir(self.base.join("ws")).env("HOME", self.base.join("home")).env("PATH", "/usr/bin:/bin").stdin(Stdio::null());
        c
    }

    /// `python3 -c code` under the fence (`profile`), or with no fence.
    fn python(&self, profile: Option<&Value>, code: &str) -> Output {
        let runner = self.runner.to_string_lossy().into_owned();
        let text = profile.map(|p| p.to_string());
        let argv: Vec<&str> = match &text {
            Some(t) => vec![&runner, "run", "--profile-json", t, "--", "/usr/bin/python3", "-c", code],
            None => vec!["/usr/bin/python3", "-c", code],
        };
        self.command(&argv).output().unwrap()
    }

    /// The same probe fenced and unfenced: (fenced, control).
    fn both(&self, profile: &Value, code: &str) -> (String, String) {
        let fenced = self.python(Some(profile), code);
        let open = self.python(None, code);
        (text(&fenced), text(&open))
    }

    /// A background process of this world's user (a daemon outside any fence).
    fn daemon(&self, code: &str) -> Daemon {
        let mut child = self.command(&["/usr/bin/python3", "-u", "-c", code]).stdout(Stdio::piped()).spawn().unwrap();
        // It says "ready" once it listens.
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the daemon did not start");
        Daemon(child)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

struct Daemon(Child);

impl Daemon {
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Each test, as root and as an unprivileged user.
fn for_each_user(name: &str, f: impl Fn(&World)) {
    for user in [None, Some(NOBODY)] {
        if let Some(w) = World::new(name, user) {
            f(&w);
        }
    }
}

/// A daemon of the user's that appends whatever it is sent to `~/.bashrc`,
/// on a socket path and an abstract name: the shape of a session bus, a
/// container engine, a terminal or editor server.
fn bashrc_daemon(w: &World) -> Daemon {
    let code = format!(
        r#"
import os, socket, threading
rc = {rc:?}
def serve(s):
    while True:
        c, _ = s.accept()
        data = c.recv(4096)
        open(rc, "a").write(data.decode())
        c.close()
p = socket.socket(socket.AF_UNIX); p.bind({path:?}); p.listen()
a = socket.socket(socket.AF_UNIX); a.bind("\0{name}"); a.listen()
for s in (p, a):
    threading.Thread(target=serve, args=(s,), daemon=True).start()
print("ready")
threading.Event().wait()
"#,
        rc = w.p("home/.bashrc"),
        path = w.p("outside/daemon.sock"),
        name = abstract_name(w),
    );
    w.daemon(&code)
}

/// The daemon's abstract name, one per world (tests run side by side).
fn abstract_name(w: &World) -> String {
    w.base.file_name().unwrap().to_string_lossy().into_owned()
}

fn ask_daemon(target: &str) -> String {
    format!(
        r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({target:?}); s.sendall(b"echo PWNED\n"); s.close(); print("reached")
except OSError as e:
    print("refused:", e)
"#
    )
}

#[test]
fn a_daemon_outside_the_call_is_refused_on_its_socket_path_and_its_abstract_name() {
    for_each_user("daemon", |w| {
        let _d = bashrc_daemon(w);
        let profile = w.profile(json!({}));
        for target in [w.p("outside/daemon.sock"), format!("\0{}", abstract_name(w))] {
            let (fenced, open) = w.both(&profile, &ask_daemon(&target));
            assert!(fenced.contains("refused: [Errno 13]"), "{target:?}: {fenced}");
            assert!(fenced.contains("dsh-allow: refused connect to unix socket"), "the refusal is named: {fenced}");
            assert!(open.contains("reached"), "control: unfenced, the daemon is reached: {open}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        let rc = fs::read_to_string(w.p("home/.bashrc")).unwrap();
        assert_eq!(rc.matches("PWNED").count(), 2, "only the two unfenced controls reached ~/.bashrc: {rc}");
    });
}

/// A broker outside the call on a unix datagram socket: what it is sent
/// goes into ~/.bashrc, and it answers with a descriptor of the key.
fn broker(w: &World) -> Daemon {
    let code = format!(
        r#"
import os, socket
rc, key = {rc:?}, {key:?}
open(key, "w").write("the-private-key")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind({path:?})
print("ready", flush=True)
while True:
    data, addr = s.recvfrom(4096)
    open(rc, "a").write(data.decode())
    if addr:
        fd = os.open(key, os.O_RDONLY)
        s.sendmsg([b"key"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd.to_bytes(4, "little"))], 0, addr)
        os.close(fd)
"#,
        rc = w.p("home/.bashrc"),
        key = w.p("outside/key"),
        path = w.p("outside/broker.sock"),
    );
    w.daemon(&code)
}

#[test]
fn a_datagram_to_a_daemon_outside_the_call_is_judged_as_a_connect() {
    for_each_user("datagram", |w| {
        let _b = broker(w);
        // sendmsg with the daemon's address on an unconnected socket (the
        // header the filter cannot read), then sendmmsg and sendto.
        let code = format!(
            r#"
import array, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind("")
s.settimeout(2)
for how in ("sendmsg", "sendto"):
    try:
        if how == "sendmsg": s.sendmsg([b"echo PWNED\n"], [], 0, {path:?})
        else: s.sendto(b"echo PWNED\n", {path:?})
        msg, anc, _, _ = s.recvmsg(16, socket.CMSG_SPACE(4))
        fds = array.array("i", anc[0][2]) if anc else []
        print(how, "reached", open(fds[0]).read() if fds else "no key")
    except OSError as e:
        print(how, "refused:", e)
"#,
            path = w.p("outside/broker.sock")
        );
        let (fenced, open) = w.both(&w.profile(json!({})), &code);
        assert!(open.contains("sendmsg reached the-private-key"), "control: unfenced, the broker answers with the key: {open}");
        assert!(fenced.contains("sendmsg refused: [Errno 13]") && fenced.contains("sendto refused: [Errno 13]"), "{fenced}");
        assert!(fenced.contains("dsh-allow: refused connect to unix socket"), "the refusal is named: {fenced}");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let rc = fs::read_to_string(w.p("home/.bashrc")).unwrap_or_default();
        assert_eq!(rc.matches("PWNED").count(), 2, "only the unfenced controls reached ~/.bashrc: {rc}");
    });
}

#[test]
fn datagrams_between_the_calls_own_sockets_carry_data_and_descriptors() {
    for_each_user("datagram-own", |w| {
        let code = r#"
import array, os, socket
a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); a.bind("a.sock")
b = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); b.bind("b.sock")
open("note", "w").write("passed along")
fd = os.open("note", os.O_RDONLY)
b.sendmsg([b"one", b"-two"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))], 0, "a.sock")
msg, anc, _, _ = a.recvmsg(16, socket.CMSG_SPACE(4))
print("got", msg, os.read(array.array("i", anc[0][2])[0], 20))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendmsg([b"udp"], [], 0, u.getsockname())
print("udp", u.recv(8))
"#;
        let out = text(&w.python(Some(&w.profile(json!({}))), code));
        assert!(out.contains("got b'one-two' b'passed along'") && out.contains("udp b'udp'"), "{out}");
    });
}

#[test]
fn a_socket_a_rule_of_the_call_names_may_be_reached() {
    for_each_user("granted", |w| {
        let _d = bashrc_daemon(w);
        let sock = w.p("outside/daemon.sock");
        let granted = w.profile(json!({ "grants": [{ "path": sock, "recursive": false, "access": { "write": true } }] }));
        let out = text(&w.python(Some(&granted), &ask_daemon(&sock)));
        assert!(out.contains("reached"), "a grant naming the socket (write) opens it: {out}");
        // The abstract name is no path: no grant names it.
        let out = text(&w.python(Some(&granted), &ask_daemon(&format!("\0{}", abstract_name(w)))));
        assert!(out.contains("refused"), "{out}");
    });
}

#[test]
fn sockets_the_call_makes_for_itself_keep_working() {
    for_each_user("own", |w| {
        let code = r#"
import os, socket, threading
def echo(s):
    c, _ = s.accept(); c.sendall(c.recv(10)); c.close()
for addr in ["own.sock", "\0dsh-allow-own-%d" % os.getpid()]:
    s = socket.socket(socket.AF_UNIX); s.bind(addr); s.listen()
    threading.Thread(target=echo, args=(s,)).start()
    c = socket.socket(socket.AF_UNIX); c.connect(addr); c.sendall(b"hi"); print("echo", c.recv(10))
x, y = socket.socketpair(); x.sendall(b"pair"); print("pair", y.recv(10))
# A child's server, reached by its parent (a test harness's shape).
import subprocess, time
srv = subprocess.Popen(["/usr/bin/python3", "-c", "import socket;s=socket.socket(socket.AF_UNIX);s.bind('child.sock');s.listen();print('up',flush=True);c,_=s.accept();c.sendall(b'from-child')"], stdout=subprocess.PIPE)
srv.stdout.readline()
c = socket.socket(socket.AF_UNIX); c.connect("child.sock"); print("child", c.recv(20))
"#;
        let out = text(&w.python(Some(&w.profile(json!({}))), code));
        assert_eq!(out.matches("echo b'hi'").count(), 2, "{out}");
        assert!(out.contains("pair b'pair'") && out.contains("child b'from-child'"), "{out}");
    });
}

#[test]
fn the_hosts_listeners_are_out_of_reach_over_ipv4_ipv6_and_unix_while_other_local_servers_are_not() {
    for_each_user("host", |w| {
        // The "host": a process listening on loopback v4, v6, every
        // address (reached at this machine's own address too), and a unix
        // socket, as `dsh web` does.
        let host = w.daemon(&format!(
            r#"
import socket
s4 = socket.socket(); s4.bind(("127.0.0.1", 0)); s4.listen()
s6 = socket.socket(socket.AF_INET6); s6.bind(("::1", 0)); s6.listen()
sa = socket.socket(); sa.bind(("0.0.0.0", 0)); sa.listen()
su = socket.socket(socket.AF_UNIX); su.bind({sock:?}); su.listen()
open({ports:?}, "w").write("%d %d %d" % (s4.getsockname()[1], s6.getsockname()[1], sa.getsockname()[1]))
print("ready")
import time; time.sleep(600)
"#,
            sock = w.p("home/.dsh/host.sock"),
            ports = w.p("outside/ports"),
        ));
        let other = w.daemon(
            r#"
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open("dev-server-port", "w").write(str(s.getsockname()[1]))
print("ready")
import time; time.sleep(600)
"#,
        );
        let ports = fs::read_to_string(w.p("outside/ports")).unwrap();
        let p: Vec<&str> = ports.split(' ').collect();
        let dev = fs::read_to_string(w.p("ws/dev-server-port")).unwrap();
        let profile = w.profile(json!({ "hostPids": [host.pid()], "grants": [{ "path": w.p("home/.dsh"), "recursive": true, "access": { "write": true } }] }));
        let code = format!(
            r#"
import socket
def go(fam, addr):
    s = socket.socket(fam)
    try: s.connect(addr); return "reached"
    except OSError as e: return "refused %s" % e.errno
me = socket.gethostbyname(socket.gethostname())
print("v4", go(socket.AF_INET, ("127.0.0.1", {v4})))
print("v6", go(socket.AF_INET6, ("::1", {v6})))
print("mapped", go(socket.AF_INET6, ("::ffff:127.0.0.1", {v4})))
print("any", go(socket.AF_INET, ("127.0.0.1", {any})))
print("own-address", go(socket.AF_INET, (me, {any})))
print("unix", go(socket.AF_UNIX, {sock:?}))
print("dev", go(socket.AF_INET, ("127.0.0.1", {dev})))
"#,
            v4 = p[0],
            v6 = p[1],
            any = p[2],
            sock = w.p("home/.dsh/host.sock"),
            dev = dev,
        );
        let (fenced, open) = w.both(&profile, &code);
        for door in ["v4", "v6", "mapped", "any", "own-address", "unix"] {
            assert!(fenced.contains(&format!("{door} refused 13")), "{door}: {fenced}");
            assert!(open.contains(&format!("{door} reached")), "control {door}: {open}");
        }
        assert!(fenced.contains("dev reached"), "a loopback server that is not the host's stays reachable: {fenced}");
        assert!(fenced.contains("a listener of the DSH host"), "{fenced}");
        drop(other);
    });
}

#[test]
fn the_runners_parent_counts_as_the_host_when_the_profile_names_none() {
    let Some(w) = World::new("parent", None) else { return };
    // This test process spawns the runner, as DSH does: its listener is the host's.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!("import socket\ntry:\n  socket.create_connection(('127.0.0.1', {port}), 2); print('reached')\nexcept OSError as e: print('refused', e.errno)");
    let (fenced, open) = w.both(&w.profile(json!({})), &code);
    assert!(fenced.contains("refused 13"), "{fenced}");
    assert!(open.contains("reached"), "{open}");
}

#[test]
fn an_agents_variables_are_cleared_and_its_socket_refused() {
    if !Path::new("/usr/bin/ssh-agent").exists() {
        assert!(std::env::var("DSH_ALLOW_REQUIRE_SSH").is_err(), "ssh-agent is required");
        eprintln!("SKIP ssh-agent: not installed (openssh-client)");
        return;
    }
    for_each_user("agent", |w| {
        let sock = w.p("outside/agent.sock");
        // Not in ~/.ssh: the point is the agent, not the key file (the
        // credential store is refused by the fence anyway).
        let key = w.p("outside/id_ed25519");
        let mut agent = w.command(&["/usr/bin/ssh-agent", "-D", "-a", &sock]).stdout(Stdio::null()).spawn().unwrap();
        for _ in 0..100 {
            if Path::new(&sock).exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(w.command(&["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", &key]).status().unwrap().success());
        assert!(w.command(&["/usr/bin/ssh-add", "-q", &key]).env("SSH_AUTH_SOCK", &sock).status().unwrap().success());
        // Only the agent holds the key now: a signature needs it.
        fs::remove_file(&key).unwrap();
        fs::write(w.p("ws/msg"), "hello").unwrap();
        w.own();
        let script = format!("echo SOCK=${{SSH_AUTH_SOCK:-unset}}; SSH_AUTH_SOCK={sock} ssh-keygen -Y sign -f {key}.pub -n file msg && echo SIGNED");
        let run = |fenced: bool| {
            let runner = w.runner.to_string_lossy().into_owned();
            let profile = w.profile(json!({})).to_string();
            let mut argv = vec![];
            if fenced {
                argv.extend([runner.as_str(), "run", "--profile-json", profile.as_str(), "--"]);
            }
            argv.extend(["/bin/sh", "-c", script.as_str()]);
            text(&w.command(&argv).env("SSH_AUTH_SOCK", &sock).output().unwrap())
        };
        let (fenced, open) = (run(true), run(false));
        let _ = agent.kill();
        let _ = agent.wait();
        assert!(fenced.contains("SOCK=unset"), "the agent's variable is cleared: {fenced}");
        assert!(!fenced.contains("SIGNED") && fenced.contains("dsh-allow: refused connect to unix socket"), "{fenced}");
        assert!(open.contains("SIGNED"), "control: unfenced, the agent signs: {open}");
    });
}

#[test]
fn the_call_has_no_terminal_even_when_the_runner_has_one() {
    for_each_user("tty", |w| {
        // The runner started on a pseudo-terminal of its own, as from a shell.
        let profile = w.profile(json!({})).to_string();
        let probe = r#"
import fcntl, os, sys, termios
try: os.open("/dev/tty", os.O_RDWR); print("tty opened")
except OSError as e: print("no tty", e.errno)
print("stdin tty", os.isatty(0))
for fd in (1, 2):
    try: fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("sti", fd, "pushed")
    except OSError as e: print("sti", fd, "refused", e.errno)
print("sid is mine", os.getsid(0) == os.getpid() or os.getsid(0) != os.getsid(os.getppid()))
"#;
        let runner = w.runner.to_string_lossy().into_owned();
        let inner = format!("import os, pty, sys\npid, fd = pty.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\nout = b''\nwhile True:\n    try:\n        b = os.read(fd, 4096)\n    except OSError:\n        break\n    if not b: break\n    out += b\nos.waitpid(pid, 0)\nsys.stdout.write(out.decode())");
        let fenced = text(&w.command(&["/usr/bin/python3", "-c", &inner, &runner, "run", "--profile-json", &profile, "--", "/usr/bin/python3", "-c", probe]).output().unwrap());
        let open = text(&w.command(&["/usr/bin/python3", "-c", &inner, "/usr/bin/python3", "-c", probe]).output().unwrap());
        assert!(fenced.contains("no tty 6"), "/dev/tty fails with ENXIO: {fenced}");
        assert!(fenced.contains("stdin tty False"), "{fenced}");
        assert!(fenced.contains("sti 1 refused 1") && fenced.contains("sti 2 refused 1"), "{fenced}");
        assert!(open.contains("tty opened") && open.contains("stdin tty True"), "control: unfenced, the terminal is there: {open}");
    });
}

#[test]
fn what_the_user_types_at_the_terminal_never_reaches_the_call() {
    for_each_user("tty-read", |w| {
        // The call says it is ready, then tries every way back to the
        // terminal its output goes to: the descriptors themselves, and the
        // same files reopened for reading through /proc/self/fd.
        let probe = r#"
import os, select, sys
print("ready", flush=True)
got = []
for fd in (1, 2):
    r, _, _ = select.select([fd], [], [], 1.5)
    if r:
        try: got.append(os.read(fd, 100))
        except OSError: pass
    try:
        again = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        r, _, _ = select.select([again], [], [], 0.2)
        if r: got.append(os.read(again, 100))
    except OSError: pass
print("typed:", b"".join(got).decode(errors="replace").strip() or "nothing", flush=True)
"#;
        // On a terminal of its own, with no echo: what the "user" types
        // shows only if a process reads it and prints it.
        let outer = r#"
import os, pty, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
attrs = termios.tcgetattr(fd)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(fd, termios.TCSANOW, attrs)
out = b""
typed = False
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b: break
    out += b
    if b"ready" in out and not typed:
        os.write(fd, b"secret-keys\n")
        typed = True
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
        let profile = w.profile(json!({})).to_string();
        let runner = w.runner.to_string_lossy().into_owned();
        let fenced = text(&w.command(&["/usr/bin/python3", "-c", outer, &runner, "run", "--profile-json", &profile, "--", "/usr/bin/python3", "-c", probe]).output().unwrap());
        let open = text(&w.command(&["/usr/bin/python3", "-c", outer, "/usr/bin/python3", "-c", probe]).output().unwrap());
        assert!(open.contains("typed: secret-keys"), "control: unfenced, the program reads what is typed: {open}");
        assert!(fenced.contains("ready") && fenced.contains("typed: nothing"), "the call read the terminal, or its output did not reach it: {fenced}");
    });
}

#[test]
fn other_processes_command_lines_are_hidden_from_the_call() {
    for_each_user("cmdline", |w| {
        // A process of the user's outside the call, with a token on its
        // command line (a client started with --password=…).
        let token = format!("sekrit-{}", std::process::id());
        let mut outside = w.command(&["/bin/sh", "-c", "sleep 30", &format!("--token={token}")]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let code = r#"
import os
seen, mine = [], 0
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    try: seen.append(open(f"/proc/{p}/cmdline", "rb").read())
    except OSError: pass
print("processes", len(seen))
# The token, put together here so this command line does not hold it.
token = b"sekrit-" + b"PID"
print("token" if any(token in c for c in seen) else "no token")
"#
        .replace("PID", &std::process::id().to_string());
        let (fenced, open) = w.both(&w.profile(json!({})), &code);
        let _ = outside.kill();
        let _ = outside.wait();
        assert!(open.lines().any(|l| l == "token"), "control: unfenced, the token is on /proc: {open}");
        assert!(fenced.contains("no token"), "the call read another process's command line: {fenced}");
    });
}

#[test]
fn signals_reach_the_calls_own_processes_only() {
    for_each_user("signals", |w| {
        // Outside the call: a daemon that notes every SIGUSR1 it gets, and
        // the runner's own parent (this test, standing for the host).
        let log = w.p("outside/signals");
        let outside = w.daemon(&format!("import signal, time\nsignal.signal(signal.SIGUSR1, lambda *a: open({log:?}, 'a').write('got\\n'))\nprint('ready', flush=True)\nwhile True: time.sleep(1)"));
        let code = format!(
            r#"
import os, signal, subprocess
child = subprocess.Popen(["/usr/bin/sleep", "30"])
os.kill(child.pid, signal.SIGTERM); child.wait(); print("own", child.returncode)
for name, pid in (("outside", {outside}), ("host", {host})):
    try: os.kill(pid, signal.SIGUSR1); print(name, "sent")
    except OSError as e: print(name, "refused", e.errno)
try:
    fd = os.pidfd_open({outside}); signal.pidfd_send_signal(fd, signal.SIGUSR1); print("pidfd sent")
except OSError as e: print("pidfd refused", e.errno)
"#,
            outside = outside.pid(),
            host = std::process::id(),
        );
        let fenced = text(&w.python(Some(&w.profile(json!({}))), &code));
        assert!(fenced.contains("own -15"), "the call's own child takes its signal: {fenced}");
        // In the call's own process namespace an outside pid names nothing
        // (ESRCH); where it names something, Landlock's scope and the
        // supervisor refuse it (EPERM, named).
        for what in ["outside", "host", "pidfd"] {
            assert!(fenced.contains(&format!("{what} refused 3")) || fenced.contains(&format!("{what} refused 1")), "{what}: {fenced}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!Path::new(&log).exists(), "a signal reached the process outside the call: {fenced}");
        let open = text(&w.python(None, &format!("import os, signal\nos.kill({}, signal.SIGUSR1); print('outside delivered')", outside.pid())));
        assert!(open.contains("outside delivered"), "{open}");
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(fs::read_to_string(&log).is_ok_and(|l| l.contains("got")), "control: unfenced, the daemon notes the signal");
    });
}

#[test]
fn root_keeps_no_capability_that_undoes_the_fence() {
    let Some(w) = World::new("caps", None) else { return };
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP root capabilities: not root");
        return;
    }
    let code = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    r = libc.syscall(*args)
    print(name, "refused" if r < 0 else "worked", ctypes.get_errno() if r < 0 else "")
AT_RECURSIVE = 0x8000
attr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)   # clear MOUNT_ATTR_RDONLY
call("mount_setattr", 442, -100, b"/", AT_RECURSIVE, attr, 32)
call("open_tree", 428, -100, b".", 1 | AT_RECURSIVE)
handle = ctypes.create_string_buffer(136); ctypes.memmove(handle, (ctypes.c_uint32 * 2)(128, 0), 8)
call("open_by_handle_at", 304, -100, handle, 0)
call("unshare(newns) then mount", 272, 0x20000)
try: open("/proc/HOST/environ").read(); print("host environ read")
except OSError as e: print("host environ refused", e.errno)
print("CapEff", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
print("CapBnd", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapBnd")][0])
"#;
    // The runner's parent (this test) stands for the host.
    let code = code.replace("HOST", &std::process::id().to_string());
    let (fenced, open) = w.both(&w.profile(json!({})), &code);
    for call in ["mount_setattr", "open_tree", "open_by_handle_at"] {
        assert!(fenced.contains(&format!("{call} refused 1")), "{call}: {fenced}");
    }
    assert!(fenced.contains("host environ refused"), "{fenced}");
    // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID NET_BIND_SERVICE AUDIT_WRITE
    assert!(fenced.contains("CapEff 00000000200004fb") && fenced.contains("CapBnd 00000000200004fb"), "{fenced}");
    assert!(open.contains("open_tree worked"), "control: root unfenced clones a mount: {open}");
}

#[test]
fn the_command_runs_on_every_cpu_the_runner_was_started_with_and_on_no_more() {
    // The runner pins the call's set-up to one CPU (affinity.rs); what the
    // user runs, and the call's init once the set-up is over, never keep that.
    // SAFETY: a zeroed set for the kernel to fill, of the size passed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }, 0);
    let cpus = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).count();
    if cpus < 2 {
        eprintln!("SKIP cpu affinity: this test may use one CPU, so a pinned call looks like any other");
        return;
    }
    for_each_user("cpus", |w| {
        let code = r#"
import os, time
print("command", sorted(os.sched_getaffinity(0)))
# In the call's own process namespace its init is pid 1: it lets go of the
# set-up's CPU once it has greeted the supervisor, just after this exec.
for _ in range(100):
    try: init = sorted(os.sched_getaffinity(1))
    except OSError: init = None; break
    if init == sorted(os.sched_getaffinity(0)): break
    time.sleep(0.01)
print("init", init)
"#;
        let (fenced, open) = w.both(&w.profile(json!({})), code);
        let line = |out: &str, what: &str| out.lines().find(|l| l.starts_with(what)).map(|l| l[what.len()..].trim().to_string());
        let all = line(&open, "command").expect("control: the probe prints its CPUs");
        assert_eq!(line(&fenced, "command"), Some(all.clone()), "{fenced}");
        assert!(all.contains(','), "control: more than one CPU: {all}");
        let init = line(&fenced, "init").unwrap_or_default();
        assert!(init == all || init == "None", "the call's init: {fenced}");
        // Started on one CPU (the last this test may use), the call gets
        // that one CPU: nothing is widened.
        let last: usize = all.trim_matches(|c| c == '[' || c == ']').rsplit(',').next().unwrap().trim().parse().unwrap();
        let mut c = w.command(&[&w.runner.to_string_lossy(), "run", "--profile-json", &w.profile(json!({})).to_string(), "--", "/usr/bin/python3", "-c", code]);
        // SAFETY: sched_setaffinity in the child before its exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, move || {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(last, &mut one);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let narrowed = text(&c.output().unwrap());
        assert_eq!(line(&narrowed, "command"), Some(format!("[{last}]")), "{narrowed}");
    });
}

#[test]
fn descriptors_the_parent_left_open_do_not_reach_the_command() {
    for_each_user("fds", |w| {
        let outside = w.p("outside/log");
        fs::write(&outside, "").unwrap();
        w.own();
        let profile = w.profile(json!({})).to_string();
        let runner = w.runner.to_string_lossy().into_owned();
        // fd 7: the outside file opened for appending; fd 8: home, a folder.
        let script = format!("exec 7>>{outside} 8<{home}; exec \"$@\"", home = w.p("home"));
        let probe = "import os\nprint('fds', sorted(int(f) for f in os.listdir('/proc/self/fd')))\nfor fd in (7, 8):\n    try: os.fstat(fd); print(fd, 'open')\n    except OSError: print(fd, 'closed')\ntry: os.write(7, b'PWNED'); print('written')\nexcept OSError as e: print('write refused', e.errno)";
        let fenced = text(&w.command(&["/bin/sh", "-c", &script, "sh", &runner, "run", "--profile-json", &profile, "--", "/usr/bin/python3", "-c", probe]).output().unwrap());
        let open = text(&w.command(&["/bin/sh", "-c", &script, "sh", "/usr/bin/python3", "-c", probe]).output().unwrap());
        assert!(fenced.contains("7 closed") && fenced.contains("8 closed") && !fenced.contains("written"), "{fenced}");
        assert!(open.contains("7 open") && open.contains("written"), "control: {open}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "PWNED", "only the unfenced control wrote");
    });
}

/// A repository in the workspace, with a submodule's `.git` file.
fn repository(w: &World) {
    let git = |args: &[&str]| {
        let out = w.command(&[&["/usr/bin/git"][..], args].concat()).env("GIT_CONFIG_GLOBAL", "/dev/null").output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    };
    git(&["init", "-q", "-b", "main"]);
    fs::create_dir_all(w.p("ws/sub")).unwrap();
    fs::create_dir_all(w.p("ws/.git/modules/sub/hooks")).unwrap();
    fs::write(w.p("ws/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    fs::write(w.p("ws/.gitmodules"), "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n").unwrap();
    w.own();
}

#[test]
fn hidden_code_cannot_redirect_gits_other_doors() {
    for_each_user("git", |w| {
        repository(w);
        let doors = [
            ".git/commondir",
            ".git/modules/sub/hooks/post-checkout",
            ".git/modules/sub/config",
            ".git/info/attributes",
            ".git/objects/info/alternates",
            ".git/worktrees/x/gitdir",
            "sub/.git",
            ".gitmodules",
        ];
        let code = format!(
            "import os\nfor d in {doors:?}:\n    try:\n        os.path.dirname(d) and os.makedirs(os.path.dirname(d), exist_ok=True); open(d, 'a').write('x'); print(d, 'written')\n    except OSError as e: print(d, 'refused', e.errno)"
        );
        let fenced = text(&w.python(Some(&w.profile(json!({}))), &code));
        for d in doors {
            assert!(fenced.contains(&format!("{d} refused 30")), "{d} (EROFS): {fenced}");
        }
        // Everyday work beside it is untouched.
        let out = text(&w.python(Some(&w.profile(json!({}))), "open('notes.txt', 'w').write('ok'); print('made')"));
        assert!(out.contains("made"), "{out}");
        let open = text(&w.python(None, &code));
        assert!(open.contains(".git/commondir written"), "control: {open}");
    });
}

#[test]
fn no_bytecode_cache_is_shared_between_calls() {
    for_each_user("pycache", |w| {
        fs::write(w.p("ws/mod.py"), "X = 1\n").unwrap();
        w.own();
        let code = "import os, sys\nprint('prefix', os.environ.get('PYTHONPYCACHEPREFIX'), 'dont', sys.dont_write_bytecode)\nimport mod\nprint('cached', os.path.exists('__pycache__'))";
        let mut c = w.command(&[&w.runner.to_string_lossy(), "run", "--profile-json", &w.profile(json!({})).to_string(), "--", "/usr/bin/python3", "-c", code]);
        // As on a machine that set a shared prefix, and writes bytecode.
        c.env("PYTHONPYCACHEPREFIX", "/tmp/dsh-allow-pycache").env_remove("PYTHONDONTWRITEBYTECODE");
        let fenced = text(&c.output().unwrap());
        assert!(fenced.contains("prefix None dont True") && fenced.contains("cached False"), "{fenced}");
    });
}

#[test]
fn other_terminals_are_not_in_the_calls_dev_pts() {
    for_each_user("pts", |w| {
        // A terminal of the user's, open outside the call.
        let (master, slave) = {
            let mut m = 0;
            let mut s = 0;
            assert_eq!(unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) }, 0);
            (m, s)
        };
        let name = fs::read_link(format!("/proc/self/fd/{slave}")).unwrap().to_string_lossy().into_owned();
        let code = format!("import os\ntry: os.open({name:?}, os.O_RDONLY | os.O_NOCTTY); print('opened')\nexcept OSError as e: print('refused', e.errno)\nimport pty; m, s = pty.openpty(); print('own pty', os.ttyname(s))");
        let fenced = text(&w.python(Some(&w.profile(json!({}))), &code));
        unsafe {
            libc::close(master);
            libc::close(slave);
        }
        assert!(fenced.contains("refused 2"), "{name} is not there: {fenced}");
        assert!(fenced.contains("own pty /dev/pts/"), "{fenced}");
    });
}
