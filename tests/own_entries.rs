//! Delete means what existed before the call, on the real kernel: what the
//! call itself made (files, folders, links, fifos, sockets) it may remove
//! and rename with no card; replacing a file it may write is writing;
//! SQLite's sidecars beside a database it may write are the database; and
//! hidden code still cannot remove or rename away anything that existed
//! before the call — directly, through a hard link, a rename-exchange, a
//! truncate-then-replace, or a file another process rewrote during the
//! call. Each runs as root and again as an unprivileged user (uid 65534),
//! each fenced step beside an unfenced control where the claim is that the
//! fence changes nothing.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/users.rs"]
mod users;

use serde_json::{json, Value};
use users::NOBODY;

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A workspace and a home outside the temp folders (which the baseline
/// opens fully), and a copy of the runner the user may start.
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
        let base = scratch::root().join(format!("own-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh", "control"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        let runner = base.join("dsh-allow");
        users::copy_runner(BIN, &runner);
        fs::set_permissions(&runner, fs::Permissions::from_mode(0o755)).unwrap();
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

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.base.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.base.join(rel)).unwrap_or_default()
    }

    fn own(&self) {
        users::own(&self.base, self.user);
    }

    /// The default profile of a workspace-write session, no rule, no grant.
    fn profile(&self) -> Value {
        json!({
            "workspace": self.p("ws"), "home": self.p("home"), "harnessHome": self.p("home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [],
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
        })
    }

    /// `bash -c script` as this world's user in `dir` (under `ws`), fenced.
    fn fenced(&self, script: &str) -> Output {
        self.fenced_in("ws", script)
    }

    fn fenced_in(&self, dir: &str, script: &str) -> Output {
        let runner = self.runner.to_string_lossy().into_owned();
        let mut argv: Vec<String> = users::become_user(self.user);
        argv.extend([runner, "run".into(), "--profile-json".into(), self.profile().to_string(), "--".into(), "/bin/bash".into(), "-c".into(), script.into()]);
        users::output(&mut self.command(&argv, dir))
    }

    /// The same script unfenced, as the same user, in `dir`.
    fn unfenced_in(&self, dir: &str, script: &str) -> Output {
        let mut argv: Vec<String> = users::become_user(self.user);
        argv.extend(["/bin/bash".into(), "-c".into(), script.into()]);
        self.command(&argv, dir).output().unwrap()
    }

    fn command(&self, argv: &[String], dir: &str) -> Command {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..])
            .current_dir(self.base.join(dir))
            .env("HOME", self.base.join("home"))
            .env("PATH", PATH)
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .stdin(Stdio::null());
        c
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

/// The script in the fence and, on a copy of the same files, without it:
/// both succeed, and leave the same entries behind.
fn same_as_unfenced(w: &World, files: &[(&str, &str)], script: &str) -> Output {
    for (rel, body) in files {
        w.write(&format!("ws/{rel}"), body);
        w.write(&format!("control/{rel}"), body);
    }
    w.own();
    let control = w.unfenced_in("control", script);
    assert!(control.status.success(), "the unfenced control fails, so the test proves nothing: {}", text(&control));
    let out = w.fenced(script);
    assert!(out.status.success(), "`{script}` fails under the fence: {}", text(&out));
    assert_eq!(listing(&w.path("ws")), listing(&w.path("control")), "the fence left other entries behind than the unfenced run");
    out
}

/// Every entry under `root`, relative, sorted (a link as `name -> target`).
fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.push(format!("{rel} -> {}", fs::read_link(&p).unwrap().display()));
            } else {
                if t.is_dir() {
                    todo.push(p);
                }
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn what_the_call_made_it_removes_and_renames_with_no_card() {
    for_each_user("made", |w| {
        let script = "echo x > new.txt && mv new.txt moved.txt && rm moved.txt \
            && mkdir -p d/e && echo y > d/e/f && mv d d2 && rm -rf d2 \
            && ln -s nowhere link && rm link && mkfifo pipe && rm pipe \
            && python3 -c 'import socket,os; s=socket.socket(socket.AF_UNIX); s.bind(\"sock\"); s.close(); os.remove(\"sock\")' \
            && echo kept > result.txt";
        same_as_unfenced(w, &[("keep.txt", "mine\n")], script);
        assert_eq!(w.read("ws/result.txt"), "kept\n");
    });
}

#[test]
fn what_existed_before_the_call_cannot_be_removed_or_renamed_away() {
    for_each_user("existed", |w| {
        w.write("ws/keep.txt", "mine\n");
        w.write("ws/dir/inner.txt", "mine too\n");
        w.own();
        for script in ["rm keep.txt", "mv keep.txt gone.txt", "rm -rf dir", "python3 -c 'import os; os.rename(\"keep.txt\", \"dir/x\")'", "unlink dir/inner.txt"] {
            let out = w.fenced(script);
            assert!(!out.status.success(), "`{script}` removed what existed: {}", text(&out));
        }
        assert_eq!(w.read("ws/keep.txt"), "mine\n");
        assert_eq!(w.read("ws/dir/inner.txt"), "mine too\n");
        let out = w.fenced("rm keep.txt");
        let line = format!("dsh-allow: refused delete \"{}\" (unlink; rm, pid ", w.p("ws/keep.txt"));
        assert!(text(&out).contains(&line), "the refusal is named with its path and capability: {}", text(&out));
    });
}

#[test]
fn a_hard_link_the_call_made_to_an_existing_file_is_not_its_own() {
    for_each_user("hardlink", |w| {
        w.write("ws/keep.txt", "mine\n");
        w.own();
        let out = w.fenced("ln keep.txt alias && rm alias");
        assert!(!out.status.success(), "a link to the user's file went as if the call's own: {}", text(&out));
        let out = w.fenced("ln keep.txt alias2; rm -f keep.txt; mv alias2 elsewhere.txt");
        assert!(w.path("ws/keep.txt").exists(), "the user's file went through a hard link: {}", text(&out));
        assert_eq!(w.read("ws/keep.txt"), "mine\n");
    });
}

#[test]
fn a_rename_exchange_cannot_move_an_existing_file() {
    for_each_user("exchange", |w| {
        w.write("ws/keep.txt", "mine\n");
        w.own();
        let script = r#"echo theirs > own.txt && python3 - <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
r = libc.renameat2(AT_FDCWD, b"own.txt", AT_FDCWD, b"keep.txt", 2)
sys.exit(0 if r == 0 else 3)
EOF"#;
        let out = w.fenced(script);
        assert_eq!(out.status.code(), Some(3), "the exchange ran: {}", text(&out));
        assert_eq!(w.read("ws/keep.txt"), "mine\n");
        let control = w.unfenced_in("ws", script);
        assert!(control.status.success(), "renameat2 exchange does not work unfenced here: {}", text(&control));
    });
}

#[test]
fn replacing_a_file_the_call_may_write_is_writing_and_the_result_is_the_users() {
    for_each_user("replace", |w| {
        let mut script = "python3 -c 'import tempfile, os\nfd, tmp = tempfile.mkstemp(dir=\".\")\nos.write(fd, b\"new\\n\"); os.close(fd)\nos.replace(tmp, \"config.json\")' && ln -sfn b current".to_string();
        if Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) {
            script.push_str(" && node -e 'const fs=require(\"fs\"); fs.writeFileSync(\"pkg.json.tmp\", \"{}\\n\"); fs.renameSync(\"pkg.json.tmp\", \"pkg.json\")'");
        }
        for dir in ["ws", "control"] {
            std::os::unix::fs::symlink("a", w.path(&format!("{dir}/current"))).unwrap();
        }
        same_as_unfenced(w, &[("config.json", "old\n"), ("pkg.json", "{\"old\":1}\n")], &script);
        assert_eq!(w.read("ws/config.json"), "new\n");
        assert_eq!(fs::read_link(w.path("ws/current")).unwrap(), Path::new("b"));
        // The replaced entry stands where the user's stood, and is the user's.
        let out = w.fenced("rm config.json");
        assert!(!out.status.success() && w.path("ws/config.json").exists(), "the replaced file went as the call's own: {}", text(&out));
    });
}

#[test]
fn a_truncated_and_rewritten_file_is_still_the_users() {
    for_each_user("truncate", |w| {
        w.write("ws/keep.txt", "mine\n");
        w.own();
        let out = w.fenced(": > keep.txt && echo over > keep.txt && echo tmp > t && mv -f t keep.txt && rm keep.txt");
        assert!(!out.status.success(), "{}", text(&out));
        assert_eq!(w.read("ws/keep.txt"), "tmp\n", "written, twice, and still there");
    });
}

#[test]
fn a_file_another_process_rewrote_during_the_call_is_not_the_calls() {
    for_each_user("rewritten", |w| {
        w.write("ws/credentials", "key-1\n");
        w.own();
        // The call waits while another process rotates the file (temp +
        // rename, a new inode born during the call), then tries to move it.
        let script = "echo > started; for i in $(seq 200); do [ -e rotated ] && break; sleep 0.05; done; mv credentials stolen; cat stolen 2>/dev/null; exit 0";
        let runner = w.runner.to_string_lossy().into_owned();
        let mut argv: Vec<String> = users::become_user(w.user);
        argv.extend([runner, "run".into(), "--profile-json".into(), w.profile().to_string(), "--".into(), "/bin/bash".into(), "-c".into(), script.into()]);
        let child = w.command(&argv, "ws").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        for _ in 0..200 {
            if w.path("ws/started").exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let rotate = users::command_as(w.user, &["/bin/sh", "-c", "printf 'key-2\\n' > .credentials.new && mv .credentials.new credentials && : > rotated"])
            .current_dir(w.path("ws"))
            .status()
            .unwrap();
        assert!(rotate.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(w.read("ws/credentials"), "key-2\n", "the rotated file was moved away by the call: {}", text(&out));
        assert!(!w.path("ws/stolen").exists());
    });
}

#[test]
fn ownership_lasts_for_the_call_only() {
    for_each_user("lifetime", |w| {
        w.own();
        let out = w.fenced("echo x > made.txt");
        assert!(out.status.success(), "{}", text(&out));
        let out = w.fenced("rm made.txt");
        assert!(!out.status.success() && w.path("ws/made.txt").exists(), "what an earlier call made is the user's now: {}", text(&out));
    });
}

#[test]
fn an_existing_file_opened_to_append_is_not_made_by_the_call() {
    for_each_user("append", |w| {
        w.write("ws/log.txt", "one\n");
        w.own();
        let out = w.fenced("echo two >> log.txt && rm log.txt");
        assert!(!out.status.success(), "{}", text(&out));
        assert_eq!(w.read("ws/log.txt"), "one\ntwo\n");
    });
}

#[test]
fn what_the_call_makes_has_its_umask_and_mode() {
    for_each_user("umask", |w| {
        let script = "umask 077 && touch private && mkdir privdir && umask 022 && touch public && mkdir pubdir && install -m 640 /dev/null grouped && stat -c '%n %a' private privdir public pubdir grouped";
        let out = same_as_unfenced(w, &[], script);
        let shown = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(shown, "private 600\nprivdir 700\npublic 644\npubdir 755\ngrouped 640\n");
        let control = w.unfenced_in("control", &format!("rm -rf private privdir public pubdir grouped; {script}"));
        assert_eq!(String::from_utf8_lossy(&control.stdout), shown, "same modes unfenced");
    });
}

/// Nothing of the runner keeps a copy of what the call opened: once the
/// call closes a file it made, no other process holds it open for writing
/// (a read lease is granted at once, every time), so a script written and
/// run straight away starts (a copy held elsewhere made it "Text file busy").
#[test]
fn a_file_the_call_made_and_closed_is_open_nowhere_else() {
    for_each_user("closed", |w| {
        let script = r##"python3 - <<'EOF'
import fcntl, os, subprocess
F_SETLEASE = 1024
busy = 0
for i in range(500):
    name = f"run{i}.sh"
    fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o755)
    os.write(fd, b"#!/bin/sh\nexit 0\n")
    os.close(fd)
    r = os.open(name, os.O_RDONLY)
    try:
        fcntl.fcntl(r, F_SETLEASE, fcntl.F_RDLCK)
        fcntl.fcntl(r, F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        busy += 1
    os.close(r)
    if i % 50 == 0:
        subprocess.run([f"./{name}"], check=True)
    os.remove(name)
assert busy == 0, f"{busy} of 500 files were still open for writing elsewhere"
EOF
printf '#!/bin/sh\necho ran\n' > run.sh && chmod +x run.sh && ./run.sh && rm run.sh"##;
        let out = same_as_unfenced(w, &[], script);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    });
}

#[test]
fn an_unnamed_file_linked_into_place_is_the_calls_own() {
    for_each_user("tmpfile", |w| {
        // linkat(…, AT_SYMLINK_FOLLOW) through /proc/self/fd, as glibc's
        // users do (Python's os.link does not follow).
        let script = r#"python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
os.write(fd, b"x")
assert libc.linkat(-100, f"/proc/self/fd/{fd}".encode(), -100, b"linked", 0x400) == 0, ctypes.get_errno()
os.close(fd)
os.remove("linked")
EOF"#;
        same_as_unfenced(w, &[], script);
    });
}

#[test]
fn a_create_the_fence_refuses_is_named() {
    for_each_user("create-refused", |w| {
        w.own();
        let out = w.fenced("touch ~/outside.txt");
        assert!(!out.status.success(), "{}", text(&out));
        let line = format!("dsh-allow: refused create \"{}\" (open; touch, pid ", w.p("home/outside.txt"));
        assert!(text(&out).contains(&line), "{}", text(&out));
        assert!(!w.path("home/outside.txt").exists());
    });
}

/// A python3 script run against `app.db` (DELETE journal mode unless it
/// says otherwise).
fn sqlite(code: &str) -> String {
    format!("python3 - <<'EOF'\nimport sqlite3, os\n{code}\nEOF")
}

#[test]
fn sqlite_commits_in_a_new_and_an_existing_database() {
    for_each_user("sqlite", |w| {
        let first = sqlite("c = sqlite3.connect('app.db'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit(); c.close()");
        same_as_unfenced(w, &[], &first);
        let again = sqlite("c = sqlite3.connect('app.db'); c.execute('insert into t values (2)'); c.commit(); print(c.execute('select count(*) from t').fetchone()[0])");
        let out = w.fenced(&again);
        assert!(out.status.success(), "a commit in a database an earlier call made fails: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2");
        assert!(!w.path("ws/app.db-journal").exists(), "no journal left behind");
    });
}

#[test]
fn sqlite_wal_files_left_by_an_earlier_call_are_the_databases() {
    for_each_user("sqlite-wal", |w| {
        w.own();
        // An earlier process left -wal and -shm behind (it did not close).
        let leave = sqlite("c = sqlite3.connect('app.db'); c.execute('pragma journal_mode=wal'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit(); os._exit(0)");
        let out = w.fenced(&leave);
        assert!(out.status.success(), "{}", text(&out));
        assert!(w.path("ws/app.db-wal").exists(), "the scene: a WAL left behind");
        let read = sqlite("c = sqlite3.connect('app.db'); print(c.execute('select count(*) from t').fetchone()[0]); c.close()");
        let out = w.fenced(&read);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
        assert!(!w.path("ws/app.db-wal").exists() && !w.path("ws/app.db-shm").exists(), "the last connection removes the WAL files: {}", text(&out));
    });
}

#[test]
fn a_hot_journal_left_by_a_failed_call_is_rolled_back_and_removed() {
    for_each_user("sqlite-hot", |w| {
        w.own();
        let setup = sqlite("c = sqlite3.connect('app.db'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit(); c.close()");
        assert!(w.fenced(&setup).status.success());
        // Dies in the middle of a transaction that spilled to the file.
        let die = sqlite("c = sqlite3.connect('app.db'); c.execute('pragma cache_size=1'); c.execute('begin'); c.executemany('insert into t values (?)', [(b'x'*4000,) for _ in range(200)]); os._exit(0)");
        let out = w.fenced(&die);
        assert!(out.status.success(), "{}", text(&out));
        assert!(w.path("ws/app.db-journal").exists(), "the scene: a hot journal");
        let read = sqlite("c = sqlite3.connect('app.db'); print(c.execute('select count(*) from t').fetchone()[0])");
        let out = w.fenced(&read);
        assert!(out.status.success(), "reading past a hot journal fails: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1", "rolled back");
        assert!(!w.path("ws/app.db-journal").exists());
    });
}

#[test]
fn a_sidecar_name_beside_something_that_is_no_writable_database_stays() {
    for_each_user("sidecar-not-db", |w| {
        w.write("ws/notes", "plain text\n");
        w.write("ws/notes-journal", "my journal\n");
        w.write("home/app.db", "SQLite format 3\0rest");
        w.write("home/app.db-journal", "hot\n");
        w.own();
        let out = w.fenced(&format!("rm -f notes-journal; rm -f {}", w.p("home/app.db-journal")));
        assert!(w.path("ws/notes-journal").exists(), "a -journal beside a file that is no database went: {}", text(&out));
        assert!(w.path("home/app.db-journal").exists(), "the journal of a database the call may not write went: {}", text(&out));
        // A database the call makes beside a file of the user's does not
        // make that file its journal.
        w.write("ws/thesis-journal", "my thesis\n");
        w.own();
        let out = w.fenced(&format!("{} && rm -f thesis-journal", sqlite("c = sqlite3.connect('thesis'); c.execute('create table t(x)'); c.commit(); c.close()")));
        assert!(w.path("ws/thesis-journal").exists(), "a database made in the call took a user's file for its journal: {}", text(&out));
    });
}

/// Python's rotating log handler on `app.log` with two backups, writing
/// `lines` lines of a log that rotates every ~200 bytes.
fn rotate(lines: u32) -> String {
    format!("python3 -c \"import logging, logging.handlers as h; l = logging.getLogger('app'); l.addHandler(h.RotatingFileHandler('app.log', maxBytes=200, backupCount=2)); l.setLevel(logging.INFO); l.handlers[0].handleError = lambda r: (_ for _ in ()).throw(SystemExit(7)); [l.info('line %d of a log that rotates', i) for i in range({lines})]\"")
}

#[test]
fn a_log_that_stood_before_the_call_rotates_its_numbered_backups() {
    for_each_user("rotate", |w| {
        let files = [("app.log", "line from an earlier call\n"), ("app.log.1", "older\n"), ("app.log.2", "oldest\n")];
        same_as_unfenced(w, &files, &rotate(40));
        assert!(!w.read("ws/app.log.2").contains("oldest"), "the oldest backup was rotated out");
        assert!(w.read("ws/app.log").contains("line 39 "));
        // A later call rotates again what this one made.
        let out = w.fenced(&rotate(40));
        assert!(out.status.success(), "{}", text(&out));
    });
}

#[test]
fn a_timed_log_prunes_its_dated_backups_while_the_log_is_made_anew() {
    for_each_user("rotate-timed", |w| {
        let files = [("app.log", "from an earlier call\n"), ("app.log.2020-01-01_00-00-00", "old\n"), ("app.log.2020-01-02_00-00-00", "older\n")];
        // The log's time decides when it rolls over: long ago, so at once.
        let script = "touch -d 2021-06-01 app.log && python3 -c \"import logging, logging.handlers as h; hd = h.TimedRotatingFileHandler('app.log', when='S', backupCount=1); hd.handleError = lambda r: (_ for _ in ()).throw(SystemExit(7)); l = logging.getLogger('app'); l.addHandler(hd); l.setLevel(logging.INFO); l.info('after the rollover')\"";
        same_as_unfenced(w, &files, script);
        assert!(!w.path("ws/app.log.2020-01-01_00-00-00").exists() && !w.path("ws/app.log.2020-01-02_00-00-00").exists(), "the old dated backups were pruned");
        assert!(w.read("ws/app.log").contains("after the rollover"));
    });
}

#[test]
fn a_numbered_name_beside_no_log_of_the_users_stays() {
    for_each_user("rotate-not", |w| {
        w.write("ws/notes", "plain\n");
        w.write("ws/notes.1", "my first draft\n");
        w.write("ws/thesis.log.1", "a file named like a backup of a log that is not there\n");
        w.write("ws/dir.log", "a log\n");
        w.write("ws/dir.log.1/inner", "a folder named like a backup\n");
        w.write("home/app.log", "a log the call may not write\n");
        w.write("home/app.log.1", "its backup\n");
        w.write("ws/other.log.1", "a backup of no log\n");
        w.own();
        for script in [
            "rm notes.1".to_string(),
            "echo made > thesis.log && rm thesis.log.1".to_string(),
            "ln notes other.log && rm other.log.1".to_string(),
            "rm -rf dir.log.1".to_string(),
            "mv dir.log dir.log.bak".to_string(),
            format!("rm {}", w.p("home/app.log.1")),
        ] {
            let out = w.fenced(&script);
            assert!(!out.status.success(), "`{script}` removed what is no log's backup: {}", text(&out));
        }
        assert_eq!(w.read("ws/notes.1"), "my first draft\n");
        assert!(w.read("ws/thesis.log.1").starts_with("a file"), "a log the call made took the user's file for its backup");
        assert_eq!(w.read("ws/other.log.1"), "a backup of no log\n", "a hard link the call made took the user's file for a log's backup");
        // A backup of another user's in a folder the call may write: the
        // call could not write it, so it is no state of a log of its own.
        if w.user.is_some() {
            w.write("ws/shared.log", "a log\n");
            w.write("ws/shared.log.1", "root's backup\n");
            w.own();
            std::os::unix::fs::chown(w.path("ws/shared.log.1"), Some(0), Some(0)).unwrap();
            let out = w.fenced("rm -f shared.log.1");
            assert_eq!(w.read("ws/shared.log.1"), "root's backup\n", "another user's backup went: {}", text(&out));
        }
        assert!(w.path("ws/dir.log.1/inner").exists() && w.path("ws/dir.log").exists());
        assert_eq!(w.read("home/app.log.1"), "its backup\n");
    });
}
