//! Kept fences (`dsh-allow run --fence-cache`): a fence is reused only while
//! nothing it was compiled from has changed, and stays out of the fenced
//! command's reach. Real processes under the real kernel, as in kernel.rs;
//! these tests run one at a time, since a tree made by another test changes
//! the folder every tree sits in (and so, rightly, every kept fence).
#![cfg(target_os = "linux")]

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/tree.rs"]
mod tree;

use serde_json::{json, Value};
use tree::{rule, Tree, BIN};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A tree whose folders have been still for over a second, with the fence
/// cache folder made up front (making it changes `home/.dsh`), and a profile
/// that protects it.
fn settled(name: &str) -> Option<(MutexGuard<'static, ()>, Tree, Value, String)> {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = Tree::new(name)?;
    let cache = t.p("home/.dsh/dsh-allow-fence");
    fs::create_dir(&cache).unwrap();
    let mut profile = t.profile(json!([]));
    profile["protectedFiles"].as_array_mut().unwrap().push(json!(cache));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    Some((turn, t, profile, cache))
}

trait Kept {
    fn run_kept(&self, profile: &Value, cache: &str, script: &str) -> (String, bool);
}

impl Kept for Tree {
    /// Like `run`, keeping fences in `cache`; returns the runner's report
    /// line ("reused", "compiled, kept", …) and whether the script succeeded.
    fn run_kept(&self, profile: &Value, cache: &str, script: &str) -> (String, bool) {
        let out = Command::new(BIN)
            .args(["run", "--profile-json", &profile.to_string(), "--fence-cache", cache, "--report-fence"])
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(self.base.join("ws"))
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.base.join("home"))
            .output()
            .expect("the runner starts");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = stderr.lines().find_map(|l| l.strip_prefix("dsh-allow fence: ")).unwrap_or("(no report)").to_string();
        (report, out.status.success())
    }
}

/// The kept fences (not the keeper's socket beside them).
fn kept_files(cache: &str) -> Vec<PathBuf> {
    fs::read_dir(cache).unwrap().map(|e| e.unwrap().path()).filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fence-"))).collect()
}

#[test]
fn a_kept_fence_is_reused_while_nothing_it_was_compiled_from_changes_and_fences_the_same() {
    let Some((_turn, t, profile, cache)) = settled("kept-reuse") else { return };
    let secret = t.p("home/secret.txt");
    let (first, _) = t.run_kept(&profile, &cache, "true");
    assert_eq!(first, "compiled, kept");
    assert_eq!(kept_files(&cache).len(), 1);
    for _ in 0..2 {
        let (how, ok) = t.run_kept(&profile, &cache, "echo more >> src/main.rs && : > src/new.rs");
        assert_eq!((how.as_str(), ok), ("reused", true), "writing and creating in the workspace");
        assert_eq!(t.run_kept(&profile, &cache, "rm src/main.rs"), ("reused".into(), false), "delete in the workspace");
        assert_eq!(t.run_kept(&profile, &cache, &format!("cat {secret}")), ("reused".into(), false), "a read under home");
        assert_eq!(t.run_kept(&profile, &cache, "python3 -c 'import os; os.remove(\"src/main.rs\")'"), ("reused".into(), false));
    }
    assert!(t.base.join("ws/src/main.rs").exists());
    // Another profile (a rule added) is another fence.
    let mut granted = profile.clone();
    granted["rules"] = json!([rule(&t.p("ws"), true, &["delete"])]);
    let (how, ok) = t.run_kept(&granted, &cache, "rm src/new.rs");
    assert_eq!((how.as_str(), ok), ("compiled, kept", true));
    assert!(!t.run_kept(&profile, &cache, "rm src/main.rs").1, "the first profile's fence still has no delete");
}

#[test]
fn a_name_the_fence_looked_up_changing_makes_it_compile_afresh() {
    let Some((_turn, t, profile, cache)) = settled("kept-change") else { return };
    fs::write(t.base.join("outside/build/keep.txt"), "keep\n").unwrap();
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // The workspace gains a `target` (tool state: delete inside it)…
    fs::create_dir(t.base.join("ws/target")).unwrap();
    fs::write(t.base.join("ws/target/old.o"), "o").unwrap();
    let (how, ok) = t.run_kept(&profile, &cache, "rm target/old.o");
    assert_eq!((how.as_str(), ok), ("compiled, kept", true), "the new `target` got its grant");
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "reused");
    // …which is then swapped for a link to a folder outside: the fence kept
    // for the real folder is not reused, and no delete reaches outside.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "reused");
    fs::remove_dir_all(t.base.join("ws/target")).unwrap();
    std::os::unix::fs::symlink(t.base.join("outside/build"), t.base.join("ws/target")).unwrap();
    let (how, ok) = t.run_kept(&profile, &cache, "rm target/keep.txt");
    assert!(how.starts_with("compiled"), "a fence kept before the swap was reused: {how}");
    assert!(!ok && t.base.join("outside/build/keep.txt").exists(), "delete reached outside through the swapped `target`");
}

#[test]
fn files_made_in_the_folders_the_fence_looked_in_leave_it_reused_and_fencing_the_same() {
    let Some((_turn, t, profile, cache)) = settled("kept-busy") else { return };
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // The workspace and home are looked in (their tool-state folders, the
    // shell's start-up files); new entries there change no lookup.
    for i in 0..3 {
        fs::write(t.base.join(format!("ws/new-{i}.txt")), "x").unwrap();
        fs::write(t.base.join(format!("home/.history-{i}")), "x").unwrap();
        let (how, ok) = t.run_kept(&profile, &cache, "echo more >> new-0.txt && : > made.txt");
        assert_eq!((how.as_str(), ok), ("reused", true), "round {i}");
        assert_eq!(t.run_kept(&profile, &cache, "rm src/main.rs"), ("reused".into(), false), "delete in the workspace");
        assert_eq!(t.run_kept(&profile, &cache, &format!("cat {}", t.p("home/secret.txt"))), ("reused".into(), false), "a read under home");
    }
    assert!(t.base.join("ws/src/main.rs").exists());
}

#[test]
fn a_fence_compiled_within_a_second_of_a_change_is_kept_and_a_change_in_that_tick_still_shows() {
    let Some((_turn, t, profile, cache)) = settled("kept-racy") else { return };
    fs::write(t.base.join("outside/build/keep.txt"), "keep\n").unwrap();
    fs::write(t.base.join("ws/just-made.txt"), "x").unwrap();
    let (how, ok) = t.run_kept(&profile, &cache, "true");
    assert_eq!((how.as_str(), ok), ("compiled, kept", true));
    assert_eq!(kept_files(&cache).len(), 1);
    // At once, perhaps within the same clock tick as the workspace's last
    // change (its times may not move): `target` becomes a link outside.
    std::os::unix::fs::symlink(t.base.join("outside/build"), t.base.join("ws/target")).unwrap();
    let (how, ok) = t.run_kept(&profile, &cache, "rm target/keep.txt");
    assert!(how.starts_with("compiled"), "a folder changed just before the compile vouched for its lookups: {how}");
    assert!(!ok && t.base.join("outside/build/keep.txt").exists());
}

#[test]
fn a_new_entry_beside_a_shut_path_makes_the_fence_compile_afresh_and_is_granted() {
    let Some((_turn, t, profile, cache)) = settled("kept-listing") else { return };
    // The harness home is granted read entry by entry around its
    // credentials: its listing is part of what the fence was compiled from.
    let note = t.p("home/.dsh/later.txt");
    let credentials = t.p("home/.dsh/.credentials.yaml");
    fs::write(&credentials, "token: x\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    fs::write(&note, "later\n").unwrap();
    let (how, ok) = t.run_kept(&profile, &cache, &format!("cat {note}"));
    assert_eq!((how.as_str(), ok), ("compiled, kept", true), "the new entry is read as a fresh compile grants it");
    assert_eq!(t.run_kept(&profile, &cache, &format!("cat {note}")), ("reused".into(), true));
    assert_eq!(t.run_kept(&profile, &cache, &format!("cat {credentials}")), ("reused".into(), false));
}

#[test]
fn what_the_compile_never_reads_does_not_make_another_fence() {
    let Some((_turn, t, profile, cache)) = settled("kept-meaning") else { return };
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // The host's processes, the call's folders and kept files, a rule's
    // id, hits and date: none is read by the compile.
    let mut other = profile.clone();
    other["hostPids"] = json!([1]);
    other["hostPorts"] = json!([8080]);
    assert_eq!(t.run_kept(&other, &cache, "true").0, "reused");
    let mut ruled = profile.clone();
    ruled["rules"] = json!([rule(&t.p("ws"), true, &["delete"])]);
    assert_eq!(t.run_kept(&ruled, &cache, "true").0, "compiled, kept");
    ruled["rules"][0]["id"] = json!("r-42");
    ruled["rules"][0]["hits"] = json!(7);
    ruled["rules"][0]["createdAt"] = json!("2026-12-04T00:00:00.000Z");
    assert_eq!(t.run_kept(&ruled, &cache, "rm src/main.rs"), ("reused".into(), true));
    // A rule removed is another fence: its grant is gone.
    fs::write(t.base.join("ws/src/main.rs"), "fn main() {}\n").unwrap();
    assert_eq!(t.run_kept(&profile, &cache, "rm src/main.rs"), ("reused".into(), false));
    assert!(t.base.join("ws/src/main.rs").exists());
}

#[test]
fn what_git_does_inside_its_own_folder_does_not_make_the_fence_compile_again() {
    let Some((_turn, t, mut profile, cache)) = settled("kept-git") else { return };
    // A line of git's own: the call carries delete in the repository.
    profile["grants"] = json!([rule(&t.p("ws/.git"), true, &["delete"])]);
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // Settle the workspace after the first run (its `.git`? none yet).
    let git = t.base.join("ws/.git");
    fs::create_dir(&git).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // A lock file made and renamed over the index, as `git add` does.
    let (how, ok) = t.run_kept(&profile, &cache, "echo x > .git/index.lock && mv .git/index.lock .git/index && rm .git/index");
    assert_eq!((how.as_str(), ok), ("reused", true));
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "reused", "a change inside .git made the fence compile again");
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "reused");
}

#[test]
fn a_fence_is_kept_where_a_path_it_walks_passes_through_a_file() {
    let Some((_turn, t, profile, cache)) = settled("kept-worktree") else { return };
    // A git worktree's `.git` is a file; `~/.config` holds credential stores.
    fs::write(t.base.join("ws/.git"), "gitdir: /elsewhere/.git/worktrees/ws\n").unwrap();
    fs::write(t.base.join("home/.config"), "").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "reused");
}

#[test]
fn a_kept_fence_reached_through_a_symlink_is_not_used() {
    let Some((_turn, t, profile, cache)) = settled("kept-link") else { return };
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    // The same folder by another spelling (protected as spelled, too).
    let link = t.p("home/fences-link");
    std::os::unix::fs::symlink(&cache, &link).unwrap();
    let mut by_link = profile.clone();
    by_link["protectedFiles"].as_array_mut().unwrap().push(json!(link));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let first = t.run_kept(&by_link, &link, "true").0;
    assert!(first.starts_with("compiled"), "{first}");
    let again = t.run_kept(&by_link, &link, "true").0;
    assert!(again.starts_with("compiled"), "a fence read through a symlink was used: {again}");
}

#[test]
fn a_damaged_kept_fence_is_compiled_afresh() {
    let Some((_turn, t, profile, cache)) = settled("kept-damaged") else { return };
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    let file = kept_files(&cache).remove(0);
    let text = fs::read_to_string(&file).unwrap();
    // Cut short (no `end`), then a rule line widened to everything: neither is used.
    fs::write(&file, &text[..text.len() / 2]).unwrap();
    assert_eq!(t.run_kept(&profile, &cache, "rm src/main.rs"), ("compiled, kept".into(), false));
    // The entry kept now (in the damaged one's slot or its second one).
    let file = kept_files(&cache).into_iter().max_by_key(|f| fs::metadata(f).unwrap().modified().unwrap()).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    let forged: String = text.lines().map(|l| if l.starts_with("rule ") { "rule 32767 /".to_string() } else { l.to_string() }).collect::<Vec<_>>().join("\n") + "\n";
    fs::write(&file, forged).unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    assert_eq!(t.run_kept(&profile, &cache, "rm src/main.rs"), ("compiled, kept".into(), false), "a fence others may write is not used");
    assert!(t.base.join("ws/src/main.rs").exists());
}

#[test]
fn the_kept_fences_are_out_of_reach_of_the_fenced_command() {
    let Some((_turn, t, mut profile, cache)) = settled("kept-reach") else { return };
    // Even with a rule opening everything in the folder that holds them.
    profile["rules"] = json!([rule(&t.p("home/.dsh"), true, &["write", "create", "delete"])]);
    assert_eq!(t.run_kept(&profile, &cache, "true").0, "compiled, kept");
    let file = kept_files(&cache).remove(0);
    let before = fs::read_to_string(&file).unwrap();
    let f = file.to_string_lossy();
    for script in [
        format!("echo 'rule 32767 /' >> {f}"),
        format!("echo x > {f}"),
        format!("rm -f {f}"),
        format!("mv {f} {f}.moved"),
        format!("echo x > {cache}/fence-99"),
        format!("ln -s /tmp {cache}/fence-98"),
        format!("mv {cache} {cache}.moved"),
        format!("rm -rf {cache}"),
        format!("python3 -c 'open(\"{f}\", \"a\").write(\"rule 32767 /\\n\")'"),
    ] {
        let (how, ok) = t.run_kept(&profile, &cache, &script);
        assert!(!ok, "the kept fence was writable with: {script} ({how})");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), before, "a kept fence changed");
    assert_eq!(kept_files(&cache), vec![file]);
}

#[test]
fn a_fence_cache_the_profile_does_not_protect_is_refused_and_nothing_runs() {
    let Some(t) = Tree::new("kept-unprotected") else { return };
    let marker = t.base.join("ws/marker");
    let cache = t.p("ws/.fences");
    let out = Command::new(BIN)
        .args(["run", "--profile-json", &t.profile(json!([])).to_string(), "--fence-cache", &cache])
        .args(["--", "/bin/sh", "-c", &format!("touch {}", marker.display())])
        .current_dir(t.base.join("ws"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not one of the profile's protected paths"));
    assert!(!marker.exists() && !t.base.join("ws/.fences").exists());
}

#[test]
fn a_kept_fence_keeps_metadata_outside_the_writable_roots_as_a_compiled_one_does() {
    let Some((_turn, t, profile, cache)) = settled("kept-metadata") else { return };
    let secret = t.p("home/secret.txt");
    let mode = || std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&secret).unwrap().permissions()) & 0o777;
    let before = mode();
    assert_eq!(t.run_kept(&profile, &cache, &format!("chmod 000 {secret}")), ("compiled, kept".into(), false));
    for _ in 0..2 {
        assert_eq!(t.run_kept(&profile, &cache, &format!("chmod 000 {secret}")), ("reused".into(), false), "chmod outside");
        assert_eq!(t.run_kept(&profile, &cache, &format!("touch -d 2000-01-01 {secret}")), ("reused".into(), false), "utimes outside");
        assert_eq!(t.run_kept(&profile, &cache, "chmod 755 src/main.rs && touch -d 2000-01-01 src/main.rs"), ("reused".into(), true), "in the workspace");
    }
    assert_eq!(mode(), before);
}

#[test]
fn a_managed_denial_added_since_is_fenced_and_no_kept_fence_carries_the_old_grant() {
    let Some((_turn, t, profile, cache)) = settled("kept-managed") else { return };
    fs::write(t.base.join("ws/src/secret.txt"), "SECRET\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(t.run_kept(&profile, &cache, "cat src/secret.txt"), ("compiled, kept".into(), true));
    assert_eq!(t.run_kept(&profile, &cache, "cat src/secret.txt"), ("reused".into(), true));
    // The administrator denies reading it: another fence, which shuts it.
    let mut managed = profile.clone();
    managed["managed"] = json!({ "files": ["/etc/dsh/managed.json"], "deny": [{ "id": "m1", "path": t.p("ws/src/secret.txt"), "recursive": false, "access": { "read": true } }] });
    let (how, ok) = t.run_kept(&managed, &cache, "cat src/secret.txt");
    assert!(how.starts_with("compiled") && !ok, "a fence kept before the managed denial was used: {how}");
    assert_eq!(t.run_kept(&managed, &cache, "cat src/secret.txt"), ("reused".into(), false));
}
