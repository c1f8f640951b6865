//! The workflow suite (issue 9): everyday tool sequences — git, cargo, npm,
//! python, in-place editors, make — run for real in a fresh workspace under
//! the compiled default profile, one fenced `dsh-allow run` per step as an
//! agent would issue them.
//!
//! Two parts. The measurement: every workflow is run under four profiles and
//! a table reports, per profile, pass or fail, the step that failed, the
//! first operation the kernel denied and the temp files the denial left
//! behind. The gate: each workflow decided by the core step by step, a
//! prompt answered Always allow as the plugin stores it, run under the
//! profile the plugin builds — at most one prompt per workflow, and deleting
//! user files in the workspace stays refused by the kernel.
//!
//! Without Landlock every test prints SKIP; DSH_ALLOW_REQUIRE_LANDLOCK=1
//! turns that into a failure.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "support/scratch.rs"]
mod scratch;

use dsh_allow::api::{DecideRequest, Outcome as Verdict};
use dsh_allow::fs_host::FsHost;
use serde_json::{json, Value};

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };

/// One step of a workflow: a shell command line, and what an honest effects
/// table would ask for up front, once, before this step runs.
struct Step {
    run: &'static str,
    asks: &'static [Ask],
}

/// What the decision would do up front for a step, in workspace-relative paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// Delete inside this folder ("" is the workspace root) the step needs
    /// in the kernel: asked up front and granted for the call once answered,
    /// or granted for the call with no prompt (git's self-guarded
    /// operations, a plain `sed -i`: the decision test below counts prompts).
    Delete(&'static str),
    /// No prompt: a tool-state folder the step will fill does not exist yet,
    /// so the kernel has nothing to attach the baseline's delete to. Make it
    /// before the ruleset is applied (create is granted there already).
    Prepare(&'static str),
}

const fn step(run: &'static str) -> Step {
    Step { run, asks: &[] }
}

const fn ask(run: &'static str, asks: &'static [Ask]) -> Step {
    Step { run, asks }
}

struct Workflow {
    name: &'static str,
    /// A probe run unfenced; when it fails the row is reported as SKIP.
    requires: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// Run unfenced before the measured steps: the scene, not the measurement.
    scene: &'static [&'static str],
    steps: &'static [Step],
}

const CRATE: &[(&str, &str)] = &[
    ("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n\n[workspace]\n"),
    ("src/main.rs", "fn main() {\n    println!(\"{}\", tiny::answer());\n}\n"),
    ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n\n#[test]\nfn the_answer_holds() {\n    assert_eq!(answer(), 42);\n}\n"),
];

const REPO: &[(&str, &str)] = &[("a.txt", "alpha\n"), ("b.txt", "beta\n"), ("src/main.rs", "fn main() {}\n")];

const GIT_BASE: &str = "git init -q -b main && git add . && git commit -q -m one";
/// main and feature each change a different tracked file.
const GIT_DIVERGED: &str = "git checkout -q -b feature && echo 'alpha 2' > a.txt && git commit -q -am feature \
    && git checkout -q main && echo 'beta 2' > b.txt && git commit -q -am main";

const NPM_APP: &[(&str, &str)] = &[
    ("lib/package.json", "{\"name\": \"tiny-lib\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n"),
    ("lib/index.js", "module.exports = 42;\n"),
    ("package.json", "{\"name\": \"app\", \"version\": \"1.0.0\", \"private\": true}\n"),
];

const PY_PKG: &[(&str, &str)] = &[
    ("pkg/__init__.py", ""),
    ("pkg/mod.py", "X = 1\n"),
    ("app.py", "import pkg.mod\nprint(pkg.mod.X)\n"),
    ("tests/test_mod.py", "import pkg.mod\n\ndef test_x():\n    assert pkg.mod.X == 1\n"),
];

const MAKEFILE: &[(&str, &str)] = &[
    ("Makefile", "all: hello out/data.txt\n\nhello: hello.c\n\tcc -o hello hello.c\n\nout/data.txt: input.txt\n\tmkdir -p out\n\tsed s/a/b/ input.txt > out/data.txt\n"),
    ("hello.c", "int main(void) { return 0; }\n"),
    ("input.txt", "banana\n"),
];

const WORKFLOWS: &[Workflow] = &[
    Workflow {
        name: "git init/add/commit/branch",
        requires: "git --version",
        files: REPO,
        scene: &[],
        steps: &[ask("git init -q -b main", &[Ask::Prepare(".git")]), step("git add ."), step("git commit -q -m one"), step("git branch feature"), step("git status --short")],
    },
    Workflow {
        name: "git, repository in a subfolder",
        requires: "git --version",
        files: &[("sub/a.txt", "alpha\n")],
        scene: &[],
        steps: &[
            ask("git init -q -b main sub", &[Ask::Prepare("sub/.git"), Ask::Delete("sub/.git")]),
            ask("cd sub && git add .", &[Ask::Delete("sub/.git")]),
            ask("cd sub && git commit -q -m one", &[Ask::Delete("sub/.git")]),
            ask("cd sub && git status --short", &[Ask::Delete("sub/.git")]),
        ],
    },
    Workflow {
        name: "git checkout",
        requires: "git --version",
        files: REPO,
        scene: &[GIT_BASE, GIT_DIVERGED],
        steps: &[ask("git checkout -q feature", &[Ask::Delete("")]), ask("git checkout -q main", &[Ask::Delete("")])],
    },
    Workflow {
        name: "git merge",
        requires: "git --version",
        files: REPO,
        scene: &[GIT_BASE, GIT_DIVERGED],
        steps: &[ask("git merge -q --no-edit feature", &[Ask::Delete("")])],
    },
    Workflow {
        name: "git stash",
        requires: "git --version",
        files: REPO,
        scene: &[GIT_BASE, "echo 'alpha wip' > a.txt"],
        steps: &[ask("git stash -q", &[Ask::Delete("")]), ask("git stash pop -q", &[Ask::Delete("")])],
    },
    Workflow {
        name: "git rebase",
        requires: "git --version",
        files: REPO,
        scene: &[GIT_BASE, GIT_DIVERGED, "git checkout -q feature"],
        steps: &[ask("git rebase -q main", &[Ask::Delete("")])],
    },
    Workflow {
        name: "cargo build (incremental)",
        requires: "cargo --version",
        files: CRATE,
        scene: &[],
        steps: &[
            ask("cargo build -q --offline", &[Ask::Prepare("target")]),
            step("echo '// edit' >> src/lib.rs"),
            step("cargo build -q --offline"),
        ],
    },
    Workflow {
        name: "cargo test (incremental)",
        requires: "cargo --version",
        files: CRATE,
        scene: &[],
        steps: &[
            ask("cargo test -q --offline", &[Ask::Prepare("target")]),
            step("echo '// edit' >> src/lib.rs"),
            step("cargo test -q --offline"),
        ],
    },
    Workflow {
        name: "npm install (local tarball)",
        requires: "npm --version",
        files: NPM_APP,
        scene: &[],
        steps: &[
            step("cd lib && npm pack --loglevel=error >/dev/null"),
            step("npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.0.tgz"),
            step("node -e 'process.exit(require(\"tiny-lib\") === 42 ? 0 : 1)'"),
            step("printf '{\"name\": \"tiny-lib\", \"version\": \"1.0.1\", \"main\": \"index.js\"}' > lib/package.json && echo 'module.exports = 43;' > lib/index.js"),
            step("cd lib && npm pack --loglevel=error >/dev/null"),
            step("npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.1.tgz"),
            step("node -e 'process.exit(require(\"tiny-lib\") === 43 ? 0 : 1)'"),
        ],
    },
    Workflow {
        name: "npm install, cache ungranted",
        requires: "npm --version",
        files: NPM_APP,
        scene: &[],
        steps: &[
            step("cd lib && npm_config_cache=\"$WF_UNGRANTED\"/npm-cache npm pack --loglevel=error >/dev/null"),
            step("npm_config_cache=\"$WF_UNGRANTED\"/npm-cache npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.0.tgz"),
        ],
    },
    Workflow {
        name: "npm ci",
        requires: "npm --version",
        files: NPM_APP,
        scene: &["cd lib && npm pack --loglevel=error >/dev/null", "npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.0.tgz"],
        steps: &[step("npm ci --offline --no-audit --no-fund --loglevel=error"), step("node -e 'process.exit(require(\"tiny-lib\") === 42 ? 0 : 1)'")],
    },
    Workflow {
        name: "python -m venv",
        requires: "python3 -m venv --help",
        files: PY_PKG,
        scene: &[],
        steps: &[step("python3 -m venv .venv"), step(".venv/bin/python -c 'import pip'"), step("python3 -m venv env"), step("env/bin/python -m pip --version")],
    },
    Workflow {
        name: "uv venv",
        requires: "uv --version",
        files: PY_PKG,
        scene: &[],
        steps: &[step("uv venv -q"), step(".venv/bin/python -c 'import sys'"), step("uv venv -q env"), step("env/bin/python -c 'import sys'")],
    },
    Workflow {
        name: "virtualenv",
        requires: "virtualenv --version",
        files: PY_PKG,
        scene: &[],
        steps: &[step("virtualenv -q venv"), step("venv/bin/python -m pip --version")],
    },
    Workflow {
        name: "pnpm install",
        requires: "pnpm --version",
        files: NPM_APP,
        scene: &["cd lib && npm pack --loglevel=error >/dev/null", "printf '{\"name\": \"app\", \"version\": \"1.0.0\", \"private\": true, \"dependencies\": {\"tiny-lib\": \"file:lib/tiny-lib-1.0.0.tgz\"}}' > package.json"],
        steps: &[step("pnpm install --offline --reporter=silent"), step("node -e 'process.exit(require(\"tiny-lib\") === 42 ? 0 : 1)'")],
    },
    Workflow {
        name: "cargo new",
        requires: "cargo --version",
        // A workspace of its own: cargo looks upwards for one, and the scratch
        // folder lies inside this repository, whose Cargo.toml the fence does
        // not let the call read (where none exists, the lookup finds nothing).
        files: &[("Cargo.toml", "[workspace]\nresolver = \"2\"\nmembers = []\n")],
        scene: &[],
        steps: &[step("cargo new -q tiny"), step("test -d tiny/.git && test -f tiny/src/main.rs"), step("cargo new -q --lib tiny-lib --vcs none")],
    },
    Workflow {
        name: "python compileall",
        requires: "python3 --version",
        files: PY_PKG,
        scene: &[],
        steps: &[
            ask("python3 -m compileall -q pkg", &[Ask::Prepare("pkg/__pycache__")]),
            step("echo 'Y = 2' >> pkg/mod.py"),
            step("python3 -m compileall -q pkg"),
        ],
    },
    Workflow {
        name: "python import (bytecode cache)",
        requires: "python3 --version",
        files: PY_PKG,
        scene: &[],
        steps: &[step("python3 app.py"), step("echo 'Y = 2' >> pkg/mod.py"), step("python3 app.py")],
    },
    Workflow {
        name: "python import, cache prefix",
        requires: "python3 --version",
        files: PY_PKG,
        scene: &[],
        steps: &[
            step("PYTHONPYCACHEPREFIX=\"$WF_TMP\"/pycache python3 app.py"),
            step("echo 'Y = 2' >> pkg/mod.py"),
            step("PYTHONPYCACHEPREFIX=\"$WF_TMP\"/pycache python3 app.py"),
        ],
    },
    Workflow {
        name: "pytest",
        requires: "python3 -c 'import pytest'",
        files: PY_PKG,
        scene: &[],
        steps: &[step("python3 -m pytest -q")],
    },
    Workflow {
        name: "sed -i",
        requires: "sed --version",
        files: &[("a.txt", "old\n"), ("src/b.txt", "old\n")],
        scene: &[],
        steps: &[ask("sed -i s/old/new/ a.txt", &[Ask::Delete("")]), ask("sed -i s/old/new/ src/b.txt", &[Ask::Delete("src")]), step("grep -q new a.txt && grep -q new src/b.txt")],
    },
    Workflow {
        name: "perl -pi",
        requires: "perl -v",
        files: &[("a.txt", "old\n"), ("src/b.txt", "old\n")],
        scene: &[],
        steps: &[ask("perl -pi -e s/old/new/ a.txt", &[Ask::Delete("")]), ask("perl -pi -e s/old/new/ src/b.txt", &[Ask::Delete("src")]), step("grep -q new a.txt && grep -q new src/b.txt")],
    },
    Workflow {
        name: "editor atomic save (vim)",
        requires: "vim --version",
        files: &[("a.txt", "old\n"), ("src/b.txt", "old\n")],
        scene: &[],
        steps: &[
            ask("vim -u NONE -i NONE -Es -c '%s/old/new/' -c wq a.txt", &[Ask::Delete("")]),
            ask("vim -u NONE -i NONE -Es -c '%s/old/new/' -c wq src/b.txt", &[Ask::Delete("src")]),
            step("grep -q new a.txt && grep -q new src/b.txt"),
        ],
    },
    Workflow {
        name: "scripted atomic replace",
        requires: "python3 --version",
        files: &[("a.txt", "old\n"), ("src/b.txt", "old\n")],
        scene: &[],
        steps: &[
            ask("python3 -c \"import os; open('a.txt.swp', 'w').write('saved\\n'); os.replace('a.txt.swp', 'a.txt')\"", &[Ask::Delete("")]),
            ask("python3 -c \"import os; open('src/b.txt.swp', 'w').write('saved\\n'); os.replace('src/b.txt.swp', 'src/b.txt')\"", &[Ask::Delete("src")]),
            step("grep -q saved a.txt && grep -q saved src/b.txt"),
        ],
    },
    Workflow {
        name: "make (incremental)",
        requires: "make --version && cc --version",
        files: MAKEFILE,
        scene: &[],
        steps: &[step("make -s"), step("echo '/* edit */' >> hello.c && echo apple >> input.txt"), step("make -s")],
    },
];

/// The candidate tool-state baseline: folders inside the workspace whose
/// contents are regenerable, opened for delete. `__pycache__` is a name, not
/// a place, so it is found by walking the workspace when a call starts.
const TOOL_STATE: &[&str] = &["target", "node_modules", ".venv", ".pytest_cache", ".git"];
/// Inside a tool-state folder, what a stricter table would keep shut.
const TOOL_STATE_SHUT: &[&str] = &[".git/hooks"];
const PYCACHE: &str = "__pycache__";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fence {
    /// The control: the same steps with the fence off.
    Off,
    /// The compiled default profile, no rules.
    Default,
    /// The default plus the tool-state table, simulated as rules.
    ToolState,
    /// The same with `.git/hooks` kept shut inside `.git`.
    HooksShut,
    /// Tool state plus each step's up-front asks, answered yes.
    Asked,
}

impl Fence {
    const MEASURED: [Fence; 4] = [Fence::Default, Fence::ToolState, Fence::HooksShut, Fence::Asked];

    fn label(self) -> &'static str {
        match self {
            Fence::Off => "off",
            Fence::Default => "default",
            Fence::ToolState => "tool-state",
            Fence::HooksShut => "tool-state, hooks shut",
            Fence::Asked => "tool-state+asks",
        }
    }
}

struct Tree {
    base: PathBuf,
    /// Under /tmp, which the baseline opens fully: where a tool's own cache
    /// goes when it is granted (npm's cache, Python's bytecode prefix).
    tmp: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Option<Tree> {
        if dsh_allow::runner::landlock_abi() == 0 {
            assert!(std::env::var("DSH_ALLOW_REQUIRE_LANDLOCK").is_err(), "Landlock is required but this kernel has none");
            eprintln!("SKIP {name}: this kernel has no Landlock; the workflow suite cannot run here");
            return None;
        }
        let base = scratch::root().join(format!("workflows-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws", "home/.dsh", "npm-cache"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        let tmp = PathBuf::from(format!("/tmp/dsh-allow-workflows-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        Some(Tree { base, tmp })
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    fn fresh<S: AsRef<str>>(&self, files: &[(S, S)]) {
        let _ = fs::remove_dir_all(self.ws());
        fs::create_dir_all(self.ws()).unwrap();
        for (rel, text) in files {
            let path = self.ws().join(rel.as_ref());
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text.as_ref()).unwrap();
        }
    }

    /// The toolchains live in the real home (~/.cargo, ~/.rustup, ~/.pyenv),
    /// which the baseline opens for read and execute, so the profile names
    /// the real home. Everything a tool would keep there is pointed away
    /// from it: git ignores the user's config; npm's cache sits in a temp
    /// dir, as if a command grant opened ~/.npm (the ungranted case, a
    /// folder of the tree outside the workspace, is measured on its own).
    fn profile(&self, rules: Vec<Value>) -> Value {
        json!({
            "workspace": self.p("ws"),
            "home": std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
            "harnessHome": self.p("home/.dsh"),
            "platform": "linux",
            "mode": "workspace-write",
            "rules": rules,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.ws())
            .stdin(Stdio::null())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Work Flow")
            .env("GIT_AUTHOR_EMAIL", "wf@example.invalid")
            .env("GIT_COMMITTER_NAME", "Work Flow")
            .env("GIT_COMMITTER_EMAIL", "wf@example.invalid")
            // Fixed dates: the control run and the fenced runs make the same objects.
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_EDITOR", "true")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("WF_TMP", &self.tmp)
            .env("WF_UNGRANTED", &self.base)
            .env("npm_config_cache", self.tmp.join("npm-cache"))
            .env("npm_config_update_notifier", "false")
            .env("CARGO_BUILD_JOBS", "2")
            .env("CARGO_TERM_COLOR", "never")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("PYTHONPYCACHEPREFIX")
            // The environment this runs in may turn bytecode caching off;
            // the workflows measure it on.
            .env_remove("PYTHONDONTWRITEBYTECODE");
        c
    }

    fn unfenced(&self, script: &str) -> Output {
        self.command("/bin/sh").args(["-c", script]).output().expect("sh starts")
    }

    fn fenced(&self, fence: Fence, rules: Vec<Value>, script: &str) -> Output {
        let profile = self.profile(rules).to_string();
        let mut args = vec!["600", BIN, "run", "--profile-json", &profile];
        if fence == Fence::Off {
            args.extend(["--enforce", "off"]);
        }
        args.extend(["--", "/bin/sh", "-c", script]);
        self.command("timeout").args(args).output().expect("the runner starts")
    }

    /// Every file (not folder) under the workspace, relative to it.
    fn files(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        walk(&self.ws(), &mut |p, is_dir| {
            if !is_dir {
                out.insert(p.strip_prefix(self.ws()).unwrap().to_string_lossy().into_owned());
            }
            true
        });
        out
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
        let _ = fs::remove_dir_all(&self.tmp);
    }
}

/// Depth-first; `visit` returns false to keep out of a folder.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path, bool) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if visit(&path, is_dir) && is_dir {
            walk(&path, visit);
        }
    }
}

fn rule(path: &str, access: Value) -> Value {
    json!({ "id": format!("wf-{path}"), "path": path, "recursive": true, "access": access })
}

/// The tool-state table as rules, for the folders present when the call starts
/// (Landlock can only attach to what exists).
fn tool_state_rules(ws: &Path, shut: &[&str]) -> Vec<Value> {
    let mut rules = Vec::new();
    for rel in TOOL_STATE {
        let p = ws.join(rel);
        if p.exists() {
            rules.push(rule(&p.to_string_lossy(), json!({ "delete": true })));
        }
    }
    for rel in shut {
        let p = ws.join(rel);
        if p.exists() {
            rules.push(rule(&p.to_string_lossy(), json!({ "delete": false })));
        }
    }
    walk(ws, &mut |p, is_dir| {
        if !is_dir {
            return false;
        }
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if name == PYCACHE {
            rules.push(rule(&p.to_string_lossy(), json!({ "delete": true })));
            return false;
        }
        !matches!(name.as_ref(), ".git" | "target" | "node_modules")
    });
    rules
}

fn rules_for(fence: Fence, ws: &Path, step: &Step) -> Vec<Value> {
    let mut rules = Vec::new();
    match fence {
        Fence::ToolState | Fence::Asked => rules.extend(tool_state_rules(ws, &[])),
        Fence::HooksShut => rules.extend(tool_state_rules(ws, TOOL_STATE_SHUT)),
        Fence::Off | Fence::Default => {}
    }
    if fence == Fence::Asked {
        for a in step.asks {
            let (Ask::Delete(rel) | Ask::Prepare(rel)) = *a;
            let p = if rel.is_empty() { ws.to_path_buf() } else { ws.join(rel) };
            if let Ask::Prepare(_) = a {
                fs::create_dir_all(&p).unwrap();
            }
            rules.push(rule(&p.to_string_lossy(), json!({ "delete": true })));
        }
    }
    rules
}

/// EROFS too: outside the writable roots the runner's read-only tree
/// refuses a change before Landlock is asked.
const DENIALS: &[&str] =
    &["Permission denied", "Operation not permitted", "Read-only file system", "EACCES", "EPERM", "EROFS", "os error 13", "os error 1)", "os error 30"];

/// The first line of `text` carrying a denial signature, and the path it
/// names (looking back a few lines: cargo puts the path above its cause).
fn first_denial(text: &str, ws: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| DENIALS.iter().any(|d| l.contains(d)))?;
    let near = (0..=at.min(4)).map(|back| lines[at - back]).chain(lines.iter().skip(at + 1).take(3).copied());
    let path = near.filter_map(path_in).next().unwrap_or_default();
    let path = path.strip_prefix(ws).map(|p| p.trim_start_matches('/').to_string()).unwrap_or(path);
    let mut line = lines[at].trim().to_string();
    if line.len() > 110 {
        let cut = (0..=110).rev().find(|&i| line.is_char_boundary(i)).unwrap();
        line.truncate(cut);
        line.push('…');
    }
    Some((path, line.replace(ws, "$WS")))
}

/// A quoted path, else the first word that looks like one.
fn path_in(line: &str) -> Option<String> {
    for (open, close) in [('\'', '\''), ('"', '"'), ('`', '`'), ('‘', '’')] {
        let mut rest = line;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            let Some(j) = after.find(close) else { break };
            let q = &after[..j];
            if q.contains('/') || q.contains('.') {
                return Some(q.to_string());
            }
            rest = &after[j + close.len_utf8()..];
        }
    }
    line.split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ':' | ',' | '(' | ')' | ';')))
        .find(|w| w.contains('/') && !w.starts_with("http"))
        .map(str::to_string)
}

struct Outcome {
    passed: bool,
    /// 1-based index of the step that failed.
    failed_step: Option<usize>,
    denial: Option<(String, String)>,
    /// 1-based index of the step whose output carried the first denial.
    denied_step: Option<usize>,
    litter: Vec<String>,
    asks: Vec<Ask>,
    detail: String,
}

fn run_workflow(t: &Tree, w: &Workflow, fence: Fence, control: Option<&BTreeSet<String>>) -> Outcome {
    t.fresh(w.files);
    for s in w.scene {
        let out = t.unfenced(s);
        assert!(out.status.success(), "{}: the scene failed at `{s}`: {}", w.name, String::from_utf8_lossy(&out.stderr));
    }
    let ws = t.p("ws");
    let mut outcome = Outcome { passed: true, failed_step: None, denial: None, denied_step: None, litter: Vec::new(), asks: Vec::new(), detail: String::new() };
    for (i, s) in w.steps.iter().enumerate() {
        // Answered "Always allow", an ask is not asked again.
        if fence == Fence::Asked {
            for a in s.asks.iter().filter(|a| matches!(a, Ask::Delete(_))) {
                if !outcome.asks.contains(a) {
                    outcome.asks.push(*a);
                }
            }
        }
        let out = t.fenced(fence, rules_for(fence, &t.ws(), s), s.run);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        if outcome.denial.is_none() {
            outcome.denial = first_denial(&text, &ws);
            outcome.denied_step = outcome.denial.as_ref().map(|_| i + 1);
        }
        if !out.status.success() {
            outcome.passed = false;
            outcome.failed_step = Some(i + 1);
            let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).take(6).collect();
            outcome.detail = format!("`{}` exited {:?}:\n      {}", s.run, out.status.code(), tail.join("\n      ").replace(&ws, "$WS"));
            break;
        }
    }
    if let Some(control) = control {
        // Incremental session folders are named by time: not litter.
        outcome.litter = t.files().difference(control).filter(|f| !f.contains("/incremental/")).cloned().collect();
    }
    outcome
}

fn cell(o: &Outcome) -> String {
    let mut c = match o.failed_step {
        None => "pass".to_string(),
        Some(n) => format!("FAIL@{n}"),
    };
    // A step that exits 0 through a denial: the tool swallowed it.
    if let Some(d) = o.denied_step.filter(|&d| o.failed_step.map_or(true, |f| d < f)) {
        c.push_str(&format!(" (denied@{d}, exit 0)"));
    }
    if !o.litter.is_empty() {
        c.push_str(&format!(" +{} litter", o.litter.len()));
    }
    c
}

#[test]
fn every_workflow_is_measured_under_the_default_fence() {
    let Some(t) = Tree::new("suite") else { return };
    let widths = [30, 16, 20, 30, 20, 20, 20];
    let mut table = vec![
        row(&widths, &["workflow", "off (control)", "default", "first denied (default)", "tool-state", "tool-state, hooks shut", "+ prepare + asks"]),
        widths.iter().map(|w| format!("|{}", "-".repeat(w + 2))).collect::<String>() + "|",
    ];
    let mut details = Vec::new();
    for w in WORKFLOWS {
        if !t.unfenced(w.requires).status.success() {
            eprintln!("SKIP {}: `{}` failed, the tool is not installed here", w.name, w.requires);
            table.push(row(&widths, &[w.name, "SKIP (not installed)", "-", "-", "-", "-", "-"]));
            continue;
        }
        let control = run_workflow(&t, w, Fence::Off, None);
        if !control.passed {
            details.push(format!("{} [off]: the control run failed, the workflow itself is broken here\n    step {}", w.name, control.detail));
        }
        let control_files = t.files();
        let mut cells = vec![w.name.to_string(), cell(&control)];
        let mut first = String::from("-");
        for fence in Fence::MEASURED {
            let o = run_workflow(&t, w, fence, Some(&control_files));
            if fence == Fence::Default {
                if let Some((path, _)) = &o.denial {
                    first = if path.is_empty() { "(no path named)".into() } else { truncate(path, widths[3]) };
                }
            }
            let mut c = cell(&o);
            if fence == Fence::Asked {
                c.push_str(&format!(", {} ask", o.asks.len()));
            }
            cells.push(c);
            if fence == Fence::Default {
                cells.push(first.clone());
            }
            if !o.passed || o.denial.is_some() || !o.litter.is_empty() {
                let mut d = format!("{} [{}]:", w.name, fence.label());
                if fence == Fence::Asked {
                    d.push_str(&format!(" asks {:?}", o.asks));
                }
                if let Some((path, line)) = &o.denial {
                    d.push_str(&format!("\n    first denial: {path}\n      {line}"));
                }
                if !o.passed {
                    d.push_str(&format!("\n    step {} {}", o.failed_step.unwrap(), o.detail));
                }
                if !o.litter.is_empty() {
                    let shown: Vec<&String> = o.litter.iter().take(4).collect();
                    d.push_str(&format!("\n    litter ({}): {shown:?}", o.litter.len()));
                }
                details.push(d);
            }
        }
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        table.push(row(&widths, &cells));
    }
    eprintln!(
        "\nworkflow suite: one fenced `dsh-allow run` per step; FAIL@n = step n failed; (denied@n, exit 0) = step n exited 0 through a denial; \
         litter = files the control run does not leave; asks = distinct up-front prompts, each answered Always allow\n{}\n\ndetails:\n{}",
        table.join("\n"),
        details.join("\n")
    );
    assert_eq!(table.len(), WORKFLOWS.len() + 2, "a workflow was left out of the report");
}

fn row(widths: &[usize], cells: &[&str]) -> String {
    let mut r = String::new();
    for (w, c) in widths.iter().zip(cells) {
        r.push_str(&format!("| {c:<w$} "));
    }
    r + "|"
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let keep: String = s.chars().rev().take(n - 1).collect::<Vec<_>>().into_iter().rev().collect();
        format!("…{keep}")
    }
}

/// The promise the tool-state design must keep: user files in the workspace
/// cannot be deleted while delete is not granted, under the default profile
/// and with the whole tool-state table open.
#[test]
fn deleting_user_files_stays_refused_by_the_kernel_with_the_tool_state_table_open() {
    let Some(t) = Tree::new("promise") else { return };
    let mut files: Vec<(String, String)> = CRATE.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    for (p, t) in [("a.txt", "alpha\n"), ("pkg/mod.py", "X = 1\n"), ("pkg/__pycache__/mod.cpython-311.pyc", "")] {
        files.push((p.into(), t.into()));
    }
    for dir in ["target/debug", "node_modules/x", ".git/objects", ".git/hooks", ".venv/lib", ".pytest_cache/v"] {
        files.push((format!("{dir}/keep"), "x".into()));
    }
    t.fresh(&files);
    let step = Step { run: "", asks: &[] };
    for fence in [Fence::Default, Fence::ToolState] {
        for script in ["rm -rf src", "rm src/main.rs", "python3 -c 'import os; os.remove(\"src/main.rs\")'", "rm a.txt", "rm pkg/mod.py"] {
            let out = t.fenced(fence, rules_for(fence, &t.ws(), &step), script);
            assert!(!out.status.success(), "[{}] delete was not refused: {script}", fence.label());
        }
        assert!(t.ws().join("src/main.rs").exists() && t.ws().join("src/lib.rs").exists(), "[{}] a user file went", fence.label());
        assert!(t.ws().join("a.txt").exists() && t.ws().join("pkg/mod.py").exists(), "[{}] a user file went", fence.label());
    }
    // What the table opens, it opens.
    let tool = rules_for(Fence::ToolState, &t.ws(), &step);
    for script in ["rm -rf target/debug", "rm -rf node_modules/x", "rm .git/objects/keep", "rm -rf pkg/__pycache__/*"] {
        let out = t.fenced(Fence::ToolState, tool.clone(), script);
        assert!(out.status.success(), "tool state was not deletable: {script}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// What the suite leaves out of the gate below, and why.
const NOT_GATED: &[(&str, &str)] = &[
    // A measurement: the cache outside every grant fails by design.
    ("npm install, cache ungranted", "measures the ungranted cache"),
    // Opaque code is never judged by its text; the kernel bounds it, and a
    // rename over a file needs delete in its folder, which Landlock can only
    // grant for the whole folder. The denial guidance names the folder.
    ("scripted atomic replace", "opaque code: the kernel refuses its rename (see docs/threat-model.md)"),
];

/// One session's stored answers, as the plugin keeps them: "Always allow"
/// stores the decision's proposals — a proposal naming a program becomes a
/// command grant for that program (plugin/index.js `alwaysAllow`).
#[derive(Default)]
struct Answers {
    rules: Vec<Value>,
    commands: Vec<Value>,
}

impl Answers {
    fn always_allow(&mut self, proposals: &[dsh_allow::api::Proposal]) {
        for p in proposals {
            let access = serde_json::to_value(p.access).unwrap();
            match &p.command {
                Some(program) => self.commands.push(json!({
                    "id": format!("cg-{}", self.commands.len()), "name": format!("{program} in {}", p.path),
                    "command": program, "roots": [p.path], "shape": "strict", "access": access, "allowCdPrefix": true,
                })),
                None => self.rules.push(json!({
                    "id": format!("r-{}", self.rules.len()), "path": p.path, "recursive": p.recursive, "access": access,
                })),
            }
        }
    }
}

impl Tree {
    fn decide(&self, answers: &Answers, command: &str) -> dsh_allow::api::Decision {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let req: DecideRequest = serde_json::from_value(json!({
            "command": command, "cwd": self.p("ws"), "workspace": self.p("ws"), "home": home,
            "harnessHome": self.p("home/.dsh"), "platform": "linux", "mode": "workspace-write",
            "rules": answers.rules, "commands": answers.commands,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json")],
            "fence": ["read", "write", "create", "delete", "execute"],
            "persistence": "shut",
        }))
        .unwrap();
        dsh_allow::decide::decide(&req, &FsHost::from_env())
    }

    /// Run a step the way the plugin does once it is allowed: the stored
    /// rules, plus a matched command grant's roots as this call's grants.
    /// `once`: the call's own one-shot grants (an answered prompt's proposals).
    fn run_decided(&self, answers: &Answers, d: &dsh_allow::api::Decision, once: &[Value], script: &str) -> Output {
        let mut profile = self.profile(answers.rules.clone());
        let mut grants: Vec<Value> = d.command_grant.as_ref().map(|g| g.rules.iter().map(|r| serde_json::to_value(r).unwrap()).collect()).unwrap_or_default();
        grants.extend(d.fence_grants.iter().map(|r| serde_json::to_value(r).unwrap()));
        grants.extend(once.iter().cloned());
        profile["grants"] = Value::Array(grants);
        // The folders the line makes, as the plugin carries them (runner/arrivals.rs).
        profile["folders"] = json!(d.folders);
        let profile = profile.to_string();
        self.command("timeout")
            .args(["600", BIN, "run", "--profile-json", &profile, "--", "/bin/sh", "-c", script])
            .output()
            .expect("the runner starts")
    }
}

/// Issue 9's gate: each workflow, decided by the core step by step, passes
/// under the default fence with at most one prompt, answered Always allow;
/// what that stores is program-bound, so afterwards `rm -rf src`, `rm
/// src/main.rs` and opaque `os.remove` are still refused by the kernel.
#[test]
fn every_workflow_passes_through_the_decision_with_at_most_one_answered_prompt() {
    let Some(t) = Tree::new("gate") else { return };
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for w in WORKFLOWS {
        if let Some((_, why)) = NOT_GATED.iter().find(|(n, _)| *n == w.name) {
            report.push(format!("{:<32} not gated: {why}", w.name));
            continue;
        }
        if !t.unfenced(w.requires).status.success() {
            eprintln!("SKIP {}: `{}` failed, the tool is not installed here", w.name, w.requires);
            report.push(format!("{:<32} SKIP (not installed)", w.name));
            continue;
        }
        t.fresh(w.files);
        // The user file the promise below is about.
        if !t.ws().join("src/main.rs").exists() {
            fs::create_dir_all(t.ws().join("src")).unwrap();
            fs::write(t.ws().join("src/main.rs"), "fn main() {}\n").unwrap();
        }
        for s in w.scene {
            let out = t.unfenced(s);
            assert!(out.status.success(), "{}: the scene failed at `{s}`", w.name);
        }
        let mut answers = Answers::default();
        let mut prompts = Vec::new();
        let mut failed = None;
        for s in w.steps {
            let d = t.decide(&answers, s.run);
            // Answered "Always allow": the proposals are stored, and this call
            // runs with them as its one-shot grants (plugin/approval.js).
            let mut once = Vec::new();
            match d.decision {
                Verdict::Allow => {}
                Verdict::Prompt => {
                    prompts.push(s.run);
                    answers.always_allow(&d.proposals);
                    once = d.proposals.iter().map(|p| json!({ "id": "once", "path": p.path, "recursive": p.recursive, "access": p.access })).collect();
                }
                Verdict::Refuse => {
                    failed = Some(format!("`{}` is refused: {}", s.run, d.reason));
                    break;
                }
            }
            let out = t.run_decided(&answers, &d, &once, s.run);
            if !out.status.success() {
                let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
                failed = Some(format!("`{}` exited {:?}: {}", s.run, out.status.code(), text.lines().take(4).collect::<Vec<_>>().join(" / ")));
                break;
            }
        }
        // The stored answers are as narrow as the spec asks: no folder rule
        // hands out delete; program needs are command grants.
        let wide: Vec<&Value> = answers.rules.iter().filter(|r| r["access"]["delete"] == json!(true)).collect();
        let programs: Vec<String> = answers.commands.iter().map(|g| format!("{} in {}", g["command"].as_str().unwrap(), g["roots"][0].as_str().unwrap().replace(&t.p("ws"), "$WS"))).collect();
        // The promise, with whatever this workflow stored.
        let mut kept = Vec::new();
        for script in ["rm -rf src", "rm src/main.rs", "python3 -c 'import os; os.remove(\"src/main.rs\")'"] {
            let d = t.decide(&answers, script);
            let out = t.run_decided(&answers, &d, &[], script);
            if out.status.success() || !t.ws().join("src/main.rs").exists() {
                kept.push(format!("`{script}` was not refused by the kernel"));
                fs::create_dir_all(t.ws().join("src")).unwrap();
                fs::write(t.ws().join("src/main.rs"), "fn main() {}\n").unwrap();
            }
        }
        let line = format!("{:<32} {} prompt(s) {prompts:?}; stored: {programs:?}", w.name, prompts.len());
        report.push(line.clone());
        if let Some(f) = failed {
            failures.push(format!("{}: {f}", w.name));
        }
        if prompts.len() > 1 {
            failures.push(format!("{}: {} prompts, at most one allowed: {prompts:?}", w.name, prompts.len()));
        }
        if !wide.is_empty() {
            failures.push(format!("{}: Always allow stored a folder rule with delete: {wide:?}", w.name));
        }
        failures.extend(kept.into_iter().map(|k| format!("{}: {k}", w.name)));
    }
    eprintln!("\nworkflow gate (decision → Always allow → dsh-allow run):\n{}", report.join("\n"));
    assert!(failures.is_empty(), "workflows that broke the gate:\n{}", failures.join("\n"));
}

// --- The everyday families (issue 38) -----------------------------------------
//
// Real tools, one call per line, each decided as the plugin decides it (the
// default rules, a card answered Allow once: its carried grants and its
// proposals as the call's one-shot grants) and run by `dsh-allow run` under
// the profile the plugin hands it, as root and as an unprivileged user
// (uid 65534). Every line runs a second time, unfenced, in a twin world:
// the fenced line must exit as the control did, pass its check and leave
// the same entries behind. The tools come from scripts/setup.sh (a venv
// with pytest, ruff, black, django and flask, and vite, in
// $DSH_ALLOW_TOOLS); a family whose tool is missing is a loud SKIP.

#[path = "support/users.rs"]
mod users;

use dsh_allow::api::Decision;

/// What a line should come to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// Runs with no card and works as the control does.
    Works,
    /// A card first (answered Allow once), then it works as the control does.
    WorksAfterCard,
}

struct Line {
    run: &'static str,
    expect: Expect,
    /// Run unfenced in the fenced world afterwards: exit 0 = it did its work.
    check: &'static str,
}

const fn works(run: &'static str, check: &'static str) -> Line {
    Line { run, expect: Expect::Works, check }
}

const fn carded(run: &'static str, check: &'static str) -> Line {
    Line { run, expect: Expect::WorksAfterCard, check }
}

struct Family<'a> {
    name: &'static str,
    /// Programs the family runs (on the tools PATH), else a loud SKIP.
    needs: &'a [&'static str],
    files: &'a [(&'static str, &'static str)],
    /// Run unfenced on both sides first: the project as the lines find it.
    scene: &'a [&'static str],
    lines: &'a [Line],
    /// Entries whose names differ between the worlds by design (a hash of
    /// the project's path): left out of the comparison.
    ignore: &'a [&'static str],
}

fn tools_path() -> String {
    let t = std::env::var("DSH_ALLOW_TOOLS").unwrap_or_else(|_| "/usr/local/lib/dsh-allow-tools".into());
    format!("{t}/venv/bin:{t}/node/node_modules/.bin:/usr/local/bin:/usr/bin:/bin")
}

/// Twin worlds (`fenced/` and `control/`, each with ws/, home/, home/.dsh)
/// under the scratch root, owned by the user they run as.
struct Twins {
    base: PathBuf,
    user: Option<u32>,
    runner: PathBuf,
}

impl Twins {
    fn new(name: &str, user: Option<u32>) -> Option<Twins> {
        if !users::usable(name, user) {
            return None;
        }
        let who = user.map_or("root".to_string(), |u| u.to_string());
        let base = scratch::root().join(format!("everyday-{name}-{who}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for side in ["fenced", "control"] {
            for d in ["ws", "home/.dsh"] {
                fs::create_dir_all(base.join(side).join(d)).unwrap();
            }
            fs::write(base.join(side).join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
            fs::write(base.join(side).join("home/.gitconfig"), "[user]\n\tname = Every Day\n\temail = everyday@example.invalid\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n").unwrap();
        }
        // A runner the user may start, wherever this build's target lies.
        let runner = base.join("dsh-allow");
        users::copy_runner(BIN, &runner);
        Some(Twins { base, user, runner })
    }

    fn ws(&self, side: &str) -> PathBuf {
        self.base.join(side).join("ws")
    }

    fn p(&self, side: &str, rel: &str) -> String {
        self.base.join(side).join(rel).to_string_lossy().into_owned()
    }

    fn argv(&self, argv: &[String], side: &str) -> Command {
        let full: Vec<String> = users::become_user(self.user).into_iter().chain(argv.iter().cloned()).collect();
        let mut c = Command::new(&full[0]);
        c.args(&full[1..])
            .current_dir(self.ws(side))
            .stdin(Stdio::null())
            .env_clear()
            .env("PATH", tools_path())
            .env("HOME", self.base.join(side).join("home"))
            .env("LANG", "C.UTF-8")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env("npm_config_update_notifier", "false")
            .env("CARGO_TERM_COLOR", "never")
            // What the runner sets in every fenced call: the control sees the same.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("NODE_DISABLE_COMPILE_CACHE", "1");
        c
    }

    fn unfenced(&self, side: &str, script: &str) -> Output {
        self.argv(&["/bin/bash".into(), "-c".into(), script.into()], side).output().expect("bash starts")
    }

    /// The plugin's request for one call (plugin/gate.js makeDecider).
    fn decide(&self, line: &str) -> Decision {
        let req: DecideRequest = serde_json::from_value(json!({
            "command": line, "cwd": self.p("fenced", "ws"), "workspace": self.p("fenced", "ws"), "home": self.p("fenced", "home"),
            "harnessHome": self.p("fenced", "home/.dsh"), "platform": "linux", "mode": "workspace-write",
            "protectedFiles": [self.p("fenced", "home/.dsh/dsh-allow.json")],
            "fence": ["read", "write", "create", "delete", "execute"], "persistence": "shut",
        }))
        .unwrap();
        dsh_allow::decide::decide(&req, &FsHost::with_path(&tools_path()))
    }

    /// The call as the plugin runs it: Allow once on a card binds the
    /// decision's carried grants and its proposals (plugin/approval.js).
    fn fenced(&self, line: &str, d: &Decision) -> Output {
        let mut grants: Vec<Value> = d.command_grant.iter().flat_map(|g| g.rules.iter()).chain(&d.fence_grants).map(|r| serde_json::to_value(r).unwrap()).collect();
        if d.decision == Verdict::Prompt {
            grants.extend(d.proposals.iter().map(|p| json!({ "id": "once", "path": p.path, "recursive": p.recursive, "access": p.access })));
        }
        let profile = json!({
            "workspace": self.p("fenced", "ws"), "home": self.p("fenced", "home"), "harnessHome": self.p("fenced", "home/.dsh"),
            "platform": "linux", "mode": "workspace-write", "rules": [], "grants": grants,
            "protectedFiles": [self.p("fenced", "home/.dsh/dsh-allow.json")], "folders": d.folders, "kept": d.kept,
        });
        let argv = [self.runner.to_string_lossy().into_owned(), "run".into(), "--profile-json".into(), profile.to_string(), "--".into(), "/bin/bash".into(), "-c".into(), line.into()];
        self.argv(&argv, "fenced").output().expect("the runner starts")
    }

    /// Every entry under a side's folder (ws and what lies beside it), relative.
    fn entries(&self, side: &str, ignore: &[&str]) -> BTreeSet<String> {
        let root = self.base.join(side);
        let mut out = BTreeSet::new();
        walk(&root, &mut |p, _| {
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            // The fence makes a package manager's missing code cache, empty,
            // to shut it, and leaves it (as the manager's first run would):
            // only what is in it counts.
            let empty_cache = ["home/.npm/_npx", "home/.cache/pnpm/dlx"].contains(&rel.as_str()) && fs::read_dir(p).is_ok_and(|mut d| d.next().is_none());
            let keep = !rel.starts_with("home/.dsh") && !empty_cache && !ignore.iter().any(|i| rel.contains(i));
            if keep {
                out.insert(rel);
            }
            keep
        });
        out
    }
}

impl Drop for Twins {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

/// Run `family` as `user`; every way a line went other than expected.
fn run_family(family: &Family<'_>, user: Option<u32>) -> Vec<String> {
    let who = user.map_or("root".to_string(), |u| format!("uid {u}"));
    let Some(t) = Twins::new(family.name, user) else { return Vec::new() };
    let missing: Vec<&str> = family.needs.iter().copied().filter(|p| !t.unfenced("control", &format!("command -v {p}")).status.success()).collect();
    if !missing.is_empty() {
        eprintln!("SKIP {} ({who}): {} not on {} (scripts/setup.sh installs them)", family.name, missing.join(", "), tools_path());
        return Vec::new();
    }
    for side in ["fenced", "control"] {
        for (rel, text) in family.files {
            let p = t.ws(side).join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
    }
    users::own(&t.base, user);
    for side in ["fenced", "control"] {
        for s in family.scene {
            let out = t.unfenced(side, s);
            assert!(out.status.success(), "{}: the scene failed at `{s}`: {}", family.name, String::from_utf8_lossy(&out.stderr));
        }
    }
    let mut wrong = Vec::new();
    for (i, line) in family.lines.iter().enumerate() {
        let control = t.unfenced("control", line.run);
        let d = t.decide(line.run);
        let card = d.decision == Verdict::Prompt;
        let out = if d.decision == Verdict::Refuse { None } else { Some(t.fenced(line.run, &d)) };
        let stderr = out.as_ref().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_else(|| d.reason.clone());
        let check = t.unfenced("fenced", line.check).status.success();
        let same = t.entries("fenced", family.ignore) == t.entries("control", family.ignore);
        let ran_as_control = out.as_ref().is_some_and(|o| o.status.code() == control.status.code());
        let what = format!("{} ({who}) line {} `{}`", family.name, i + 1, line.run);
        if !control.status.success() {
            wrong.push(format!("{what}: the control failed: {}", String::from_utf8_lossy(&control.stderr)));
            break;
        }
        if card != (line.expect == Expect::WorksAfterCard) {
            wrong.push(format!("{what}: {} a card ({})", if card { "asked" } else { "did not ask" }, d.reason));
        }
        if !(ran_as_control && check && same) {
            let diff: Vec<String> = t.entries("fenced", family.ignore).symmetric_difference(&t.entries("control", family.ignore)).take(4).cloned().collect();
            wrong.push(format!("{what}: exit as the control {ran_as_control}, check {check}, same entries {same} {diff:?}: {}", stderr.lines().take(4).collect::<Vec<_>>().join(" / ")));
        }
        // The next line starts from the same world on both sides.
        if !same {
            let _ = fs::remove_dir_all(t.base.join("fenced"));
            copy_tree(&t.base.join("control"), &t.base.join("fenced"));
            users::own(&t.base, user);
        }
    }
    wrong
}

/// `cp -a`: the control's world becomes the fenced one's again.
fn copy_tree(from: &Path, to: &Path) {
    let ok = Command::new("cp").arg("-a").arg(from).arg(to).status().is_ok_and(|s| s.success());
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

/// Every family as root and as uid 65534; the test fails with every line
/// that went otherwise.
fn every_line_of(family: &Family<'_>) {
    let mut wrong = run_family(family, None);
    wrong.extend(run_family(family, Some(users::NOBODY)));
    assert!(wrong.is_empty(), "{}:\n{}", family.name, wrong.join("\n"));
}

const NO_SIDECARS: &str = "test ! -e app.db-journal && test ! -e app.db-wal && test ! -e app.db-shm";

#[test]
fn sqlite_writes_commit_and_leave_no_journal_in_this_call_or_a_later_one() {
    every_line_of(&Family {
        name: "sqlite",
        needs: &["sqlite3", "python3"],
        files: &[],
        scene: &[],
        ignore: &[],
        lines: &[
            works("sqlite3 app.db 'create table t(x); insert into t values (1)'", NO_SIDECARS),
            works("sqlite3 app.db 'insert into t values (2)'", NO_SIDECARS),
            works("sqlite3 app.db 'begin; insert into t values (3); update t set x = x + 1; commit'", NO_SIDECARS),
            works("python3 -c \"import sqlite3; c = sqlite3.connect('app.db'); c.execute('insert into t values (4)'); c.commit()\"", NO_SIDECARS),
            // WAL: a writer that dies leaves -wal and -shm; a later call's sqlite3 takes them in and removes them.
            works("python3 -c \"import sqlite3, os; c = sqlite3.connect('app.db'); c.execute('pragma journal_mode=wal'); c.execute('insert into t values (5)'); c.commit(); os._exit(0)\"", "test -e app.db-wal"),
            works("sqlite3 app.db 'insert into t values (6)'", NO_SIDECARS),
            works("sqlite3 app.db 'pragma journal_mode=delete; delete from t where x = 2; vacuum'", "test \"$(sqlite3 app.db 'select count(*) from t')\" = 5"),
        ],
    });
}

const FLASK_APP: &str = "import sqlite3\nfrom flask import Flask, request\nimport click\n\napp = Flask(__name__)\n\n@app.cli.command(\"init-db\")\ndef init_db():\n    with sqlite3.connect(\"app.db\") as c:\n        c.execute(\"create table if not exists notes(body text)\")\n    click.echo(\"initialised\")\n\n@app.post(\"/notes\")\ndef add():\n    with sqlite3.connect(\"app.db\") as c:\n        c.execute(\"insert into notes values (?)\", (request.form[\"body\"],))\n    return \"ok\"\n";

#[test]
fn flask_init_db_and_a_post_that_writes_work_with_no_card() {
    every_line_of(&Family {
        name: "flask",
        needs: &["flask", "sqlite3"],
        files: &[("app.py", FLASK_APP)],
        scene: &[],
        ignore: &["__pycache__"],
        lines: &[
            works("flask --app app init-db", "sqlite3 app.db .tables | grep -q notes"),
            works("python3 -c \"from app import app; r = app.test_client().post('/notes', data={'body': 'hi'}); assert r.status_code == 200\"", "test \"$(sqlite3 app.db 'select body from notes')\" = hi && test ! -e app.db-journal"),
        ],
    });
}

const DJANGO: &str = "django-admin startproject mysite . && printf '\\nSTATIC_ROOT = BASE_DIR / \"staticfiles\"\\nSTATICFILES_DIRS = [BASE_DIR / \"assets\"]\\n' >> mysite/settings.py && mkdir -p assets && echo 'body { color: red }' > assets/site.css";

#[test]
fn django_migrates_and_collectstatic_asks_once_each_time_it_may_replace() {
    every_line_of(&Family {
        name: "django",
        needs: &["django-admin", "sqlite3"],
        files: &[],
        // startproject formats what it writes with black when black is there.
        scene: &[DJANGO],
        ignore: &["__pycache__", "home/.cache"],
        lines: &[
            works("python3 manage.py migrate -v 0", "test ! -e db.sqlite3-journal && test \"$(sqlite3 db.sqlite3 'select count(*) from django_migrations')\" -gt 10"),
            works("python3 manage.py shell -c \"from django.contrib.auth.models import User; User.objects.create_user('ada')\"", "test \"$(sqlite3 db.sqlite3 'select username from auth_user')\" = ada"),
            carded("python3 manage.py collectstatic --noinput -v 0", "test -f staticfiles/site.css"),
            works("sleep 1 && echo 'body { color: blue }' > assets/site.css", "true"),
            carded("python3 manage.py collectstatic --noinput -v 0", "grep -q blue staticfiles/site.css"),
            carded("python3 manage.py collectstatic --noinput --clear -v 0", "test -f staticfiles/site.css"),
        ],
    });
}

#[test]
fn atomic_replaces_rename_what_the_call_made_over_what_it_may_write() {
    every_line_of(&Family {
        name: "atomic",
        needs: &["python3", "node", "zip"],
        files: &[("config.json", "{\"v\": 1}"), ("data.json", "{\"v\": 1}"), ("site/index.html", "<p>v1</p>\n")],
        scene: &[],
        ignore: &[],
        lines: &[
            works("python3 -c \"import os, tempfile; fd, p = tempfile.mkstemp(dir='.'); os.write(fd, b'{\\\"v\\\": 2}'); os.close(fd); os.replace(p, 'config.json')\"", "grep -q 2 config.json"),
            works("node -e \"const fs = require('fs'); fs.writeFileSync('data.json.tmp', '{\\\"v\\\": 2}'); fs.renameSync('data.json.tmp', 'data.json')\"", "grep -q 2 data.json"),
            works("mkdir -p v1 v2 && ln -sfn v1 current", "test \"$(readlink current)\" = v1"),
            works("ln -sfn v2 current", "test \"$(readlink current)\" = v2"),
            works("zip -qr site.zip site", "unzip -l site.zip | grep -q index.html"),
            works("echo more > site/more.txt && zip -qr site.zip site", "unzip -l site.zip | grep -q more.txt"),
            works("python3 -c \"import dbm.dumb as d; s = d.open('cache', 'c'); s['a'] = b'1'; s.close()\"", "test -f cache.dat"),
            works("python3 -c \"import shelve; s = shelve.open('store'); s['a'] = 1; s.close()\" && python3 -c \"import shelve; s = shelve.open('store'); s['b'] = 2; s.close()\"", "python3 -c \"import shelve; assert shelve.open('store', 'r')['b'] == 2\""),
        ],
    });
}

const SETUP_PY: &str = "from setuptools import setup\nsetup(name='tinypkg', version='0.1', py_modules=['tinypkg'])\n";
const PY_TESTS: &[(&str, &str)] = &[
    ("conftest.py", ""),
    ("pyproject.toml", "[tool.ruff]\n"),
    ("setup.py", SETUP_PY),
    ("tinypkg.py", "X = 1\n"),
    ("tests/test_x.py", "import tinypkg\n\n\ndef test_x():\n    assert tinypkg.X == 1\n"),
];

#[test]
fn python_tool_state_made_in_the_call_is_renamed_into_place_and_kept_up_later() {
    every_line_of(&Family {
        name: "python-tools",
        needs: &["python3", "pytest", "ruff"],
        files: PY_TESTS,
        scene: &[],
        // ruff names its cache files after a hash of the project's path.
        ignore: &["__pycache__", ".ruff_cache/0", ".ruff_cache/"],
        lines: &[
            works("pytest -q", "test -d .pytest_cache/v"),
            works("pytest -q", "test -d .pytest_cache/v"),
            works("ruff check -q --exit-zero .", "test -d .ruff_cache"),
            works("echo 'import os' >> tinypkg.py && ruff check -q --exit-zero .", "test -d .ruff_cache"),
            works("python3 setup.py -q egg_info", "test -f tinypkg.egg-info/PKG-INFO"),
            works("sed -i s/0.1/0.2/ setup.py", "grep -q 0.2 setup.py"),
            works("python3 setup.py -q egg_info", "grep -q 'Version: 0.2' tinypkg.egg-info/PKG-INFO"),
        ],
    });
}

const SITE_V2: &str = "mkdir -p /tmp/.everyday-$$ && cp -r site /tmp/.everyday-$$/ && sed -i s/v1/v2/ /tmp/.everyday-$$/site/index.html && tar -czf site.tgz -C /tmp/.everyday-$$ site && (cd /tmp/.everyday-$$ && zip -qr - site) > site.zip; rm -rf /tmp/.everyday-$$";

#[test]
fn archives_extracted_over_existing_files_replace_them_with_no_card() {
    every_line_of(&Family {
        name: "archives",
        needs: &["tar", "zip", "unzip"],
        files: &[("site/index.html", "<p>v1</p>\n"), ("site/css/a.css", "p {}\n")],
        // The archives hold v2 of the files the workspace holds v1 of.
        scene: &[SITE_V2],
        ignore: &[],
        lines: &[
            works("tar -xzf site.tgz", "grep -q v2 site/index.html"),
            works("echo v1 > site/index.html && unzip -oq site.zip", "grep -q v2 site/index.html"),
            works("mkdir -p out && tar -xzf site.tgz -C out", "grep -q v2 out/site/index.html"),
            works("echo v1 > out/site/index.html && tar -xzf site.tgz -C out", "grep -q v2 out/site/index.html"),
            works("echo v1 > out/site/index.html && unzip -oq site.zip -d out", "grep -q v2 out/site/index.html"),
        ],
    });
}

#[test]
fn vite_build_empties_its_own_output_folder_with_no_card() {
    every_line_of(&Family {
        name: "vite",
        needs: &["vite"],
        scene: &[],
        files: &[("index.html", "<!doctype html>\n<html><body><script type=\"module\" src=\"/main.js\"></script></body></html>\n"), ("main.js", "document.body.append('hi')\n")],
        ignore: &[],
        lines: &[
            works("vite build --logLevel error", "test -f dist/index.html"),
            works("echo \"document.body.append('again')\" >> main.js && vite build --logLevel error", "grep -rq again dist/assets"),
            works("vite build --logLevel error --outDir build && echo '//' >> main.js && vite build --logLevel error --outDir build", "test -f build/index.html"),
        ],
    });
}

const CLEANING_MAKEFILE: &str = "all: hello out/data.txt\n\nhello: hello.o\n\tcc -o hello hello.o\n\nhello.o: hello.c\n\tcc -c hello.c\n\nout/data.txt: input.txt\n\tmkdir -p out\n\tsed s/a/b/ input.txt > out/data.txt\n\nclean:\n\trm -rf hello hello.o out\n\n.PHONY: all clean\n";

#[test]
fn make_builds_with_no_card_and_make_clean_says_what_it_removes_first() {
    every_line_of(&Family {
        name: "make",
        needs: &["make", "cc"],
        files: &[("Makefile", CLEANING_MAKEFILE), ("hello.c", "int main(void) { return 0; }\n"), ("input.txt", "banana\n")],
        scene: &[],
        ignore: &[],
        lines: &[
            works("make -s", "test -x hello && grep -q bbnana out/data.txt"),
            works("sleep 1 && echo '/* edit */' >> hello.c && make -s", "test -x hello"),
            carded("make -s clean", "test ! -e hello && test ! -e out"),
            works("make -s", "test -x hello"),
        ],
    });
}

const ROTATE: &str = "python3 -c \"import logging, logging.handlers as h; l = logging.getLogger('app'); l.addHandler(h.RotatingFileHandler('app.log', maxBytes=200, backupCount=2)); l.setLevel(logging.INFO); [l.info('line %d of a log that rotates', i) for i in range(40)]\"";

#[test]
fn a_log_rotates_in_its_own_call_and_in_a_later_one() {
    every_line_of(&Family {
        name: "log-rotation",
        needs: &["python3"],
        files: &[],
        scene: &[],
        ignore: &[],
        lines: &[
            works(ROTATE, "test -f app.log.1 && test -f app.log.2"),
            // app.log and its backups existed before this call: the backups
            // are the log's state, moved and removed as writes of the log.
            works(ROTATE, "test -f app.log.1 && test -f app.log.2 && ! grep -q 'line 0 ' app.log.2 && grep -q 'line 39 ' app.log"),
        ],
    });
}

const FRESH_HOME_APP: &[(&str, &str)] = &[
    ("lib/package.json", "{\"name\": \"tiny-lib\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n"),
    ("lib/index.js", "module.exports = 42;\n"),
    ("package.json", "{\"name\": \"app\", \"version\": \"1.0.0\", \"private\": true}\n"),
    ("a.py", "x  =  1\n"),
    ("pyproject.toml", "[tool.black]\n"),
];

#[test]
fn state_folders_a_fresh_home_lacks_are_made_or_done_without() {
    every_line_of(&Family {
        name: "state",
        needs: &["npm", "node", "black"],
        files: FRESH_HOME_APP,
        scene: &[],
        // npm names its logs by time and its cache's index by keys that hold
        // the project's path; black's cache is read, never written, under
        // the fence (so neither is ~/.cache made).
        ignore: &["home/.npm/_logs", "home/.npm/_cacache/index-v5", "home/.cache"],
        lines: &[
            works("cd lib && npm pack --loglevel=error >/dev/null", "test -f lib/tiny-lib-1.0.0.tgz && test -d ~/.npm"),
            works("npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.0.tgz", "node -e 'process.exit(require(\"tiny-lib\") === 42 ? 0 : 1)'"),
            works("rm -rf node_modules && npm ci --offline --no-audit --no-fund --loglevel=error", "test -d node_modules/tiny-lib"),
            works("black -q a.py", "grep -qx 'x = 1' a.py"),
            works("echo 'y  =  2' >> a.py && black -q a.py", "grep -qx 'y = 2' a.py"),
        ],
    });
}

#[test]
fn git_beside_other_programs_asks_once_up_front_and_leaves_no_lock() {
    every_line_of(&Family {
        name: "git-mixed",
        needs: &["git", "npm", "python3"],
        files: &[("package.json", "{\"name\": \"app\", \"version\": \"1.0.0\"}\n"), ("t.py", "print('ok')\n")],
        scene: &[],
        ignore: &["home/.npm/_logs"],
        lines: &[
            works("git init -q && git add -A && git commit -qm one", "test \"$(git log --format=%s)\" = one"),
            carded("echo x > b.txt && git add -A && git commit -qm two && npm version patch -m 'v%s'", "grep -q 1.0.1 package.json && test \"$(git log --format=%s -1)\" = v1.0.1 && test ! -e .git/index.lock"),
            carded("npm version minor -m 'v%s'", "git tag | grep -qx v1.1.0 && test ! -e .git/index.lock"),
            works("echo y >> b.txt && git -c user.name=Ada -c user.email=ada@example.invalid commit -qam three", "test \"$(git log --format=%an -1)\" = Ada && test ! -e .git/index.lock"),
            works("git status --short && python3 t.py", "test ! -e .git/index.lock"),
        ],
    });
}

#[test]
fn git_worktree_add_and_submodule_add_work_after_allow_once() {
    every_line_of(&Family {
        name: "git-cards",
        needs: &["git"],
        files: &[("a.txt", "a\n")],
        // A repository beside the workspace to take in as a submodule.
        scene: &["git init -q ../libfoo && echo foo > ../libfoo/foo.c && git -C ../libfoo add -A && git -C ../libfoo commit -qm foo"],
        ignore: &[],
        lines: &[
            works("git init -q && git add -A && git commit -qm one", "test -d .git"),
            carded("git worktree add -q ../x", "test -f ../x/a.txt && git worktree list | grep -q /x"),
            carded("git submodule add -q ../libfoo libfoo", "test -f libfoo/foo.c && grep -q libfoo .gitmodules && test ! -e .git/index.lock"),
        ],
    });
}
