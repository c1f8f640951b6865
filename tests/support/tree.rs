//! A real tree for the kernel suites: workspace, home (with a permission
//! store and an SSH key), and folders outside, built where the baseline does
//! not open everything (see scratch.rs); removed when dropped. Each suite
//! uses a part of it.
#![allow(dead_code)]

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

// The runner under test: this build's, or the one DSH_ALLOW_TEST_RUNNER named at build time (scripts/test.sh: the shipped one).
pub const BIN: &str = match option_env!("DSH_ALLOW_TEST_RUNNER") { Some(b) => b, None => env!("CARGO_BIN_EXE_dsh-allow") };

pub struct Tree {
    pub base: PathBuf,
}

impl Tree {
    pub fn new(name: &str) -> Option<Tree> {
        if dsh_allow::runner::landlock_abi() == 0 {
            assert!(std::env::var("DSH_ALLOW_REQUIRE_LANDLOCK").is_err(), "Landlock is required but this kernel has none");
            eprintln!("SKIP {name}: this kernel has no Landlock; the kernel suite cannot run here");
            return None;
        }
        let base = super::scratch::root().join(format!("kernel-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        for d in ["ws/src", "ws/build", "home/.dsh", "home/.ssh", "home/bin", "outside/build", "outside/build-2"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join("ws/src/main.rs"), "fn main() {}\n").unwrap();
        fs::write(base.join("ws/build/x"), "x").unwrap();
        fs::write(base.join("home/.ssh/id_ed25519"), "SECRET-KEY\n").unwrap();
        fs::write(base.join("home/secret.txt"), "SECRET\n").unwrap();
        fs::write(base.join("home/.dsh/dsh-allow.json"), "{\"version\":3,\"rules\":[]}\n").unwrap();
        fs::write(base.join("home/.dsh/notes.txt"), "notes\n").unwrap();
        fs::write(base.join("outside/existing.txt"), "old\n").unwrap();
        Some(Tree { base })
    }

    pub fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    pub fn profile(&self, rules: Value) -> Value {
        json!({
            "workspace": self.p("ws"),
            "home": self.p("home"),
            "harnessHome": self.p("home/.dsh"),
            "platform": "linux",
            "mode": "workspace-write",
            "rules": rules,
            "protectedFiles": [self.p("home/.dsh/dsh-allow.json"), self.p("home/.dsh/dsh-allow-audit.ndjson")],
        })
    }

    /// `sh -c script` under the fence, in the workspace, with system tools only.
    pub fn run(&self, profile: &Value, script: &str) -> Output {
        Command::new(BIN)
            .args(["run", "--profile-json", &profile.to_string(), "--", "/bin/sh", "-c", script])
            .current_dir(self.base.join("ws"))
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.base.join("home"))
            .output()
            .expect("the runner starts")
    }

    pub fn ok(&self, profile: &Value, script: &str) -> bool {
        self.run(profile, script).status.success()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

pub fn rule(path: &str, recursive: bool, caps: &[&str]) -> Value {
    let access: serde_json::Map<String, Value> = caps.iter().map(|c| (c.to_string(), Value::Bool(true))).collect();
    json!({ "id": format!("t-{}", caps.join("-")), "path": path, "recursive": recursive, "access": access })
}

