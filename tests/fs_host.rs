//! The native host answers "where does this path really land" on real files:
//! the deepest existing ancestor resolved through symlinks, the missing tail
//! appended as spelled. The runner and the CLI decide with it.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use dsh_allow::fs_host::FsHost;
use dsh_allow::host::Host;

#[path = "support/scratch.rs"]
mod scratch;

struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let base = scratch::root().join(format!("fs-host-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("real/sub")).unwrap();
        fs::write(base.join("real/sub/file"), "x").unwrap();
        // The tree's own path may pass through a link (a home on another disk).
        Tree(fs::canonicalize(&base).unwrap())
    }
    fn p(&self, rel: &str) -> String {
        self.0.join(rel).to_string_lossy().into_owned()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn an_existing_path_is_its_own_real_path() {
    let t = Tree::new("plain");
    assert_eq!(FsHost::from_env().canonical(&t.p("real/sub/file")), t.p("real/sub/file"));
}

#[test]
fn a_missing_tail_is_appended_as_spelled() {
    let t = Tree::new("missing");
    assert_eq!(FsHost::from_env().canonical(&t.p("real/new/deeper/x")), t.p("real/new/deeper/x"));
}

#[test]
fn a_symlinked_ancestor_is_resolved_and_the_tail_kept() {
    let t = Tree::new("ancestor");
    symlink(t.p("real"), t.p("link")).unwrap();
    let host = FsHost::from_env();
    assert_eq!(host.canonical(&t.p("link/sub/file")), t.p("real/sub/file"));
    assert_eq!(host.canonical(&t.p("link/sub/not-yet")), t.p("real/sub/not-yet"));
}

#[test]
fn a_relative_link_climbs_from_where_it_lives() {
    let t = Tree::new("relative");
    symlink("../real/sub", t.p("real/up")).unwrap();
    assert_eq!(FsHost::from_env().canonical(&t.p("real/up/file")), t.p("real/sub/file"));
}

#[test]
fn a_dangling_link_resolves_to_the_path_it_would_create() {
    // `echo x > ws/out` with `out -> /elsewhere/new` writes /elsewhere/new:
    // that is where the decision must look.
    let t = Tree::new("dangling");
    symlink(t.p("elsewhere/new"), t.p("real/out")).unwrap();
    assert_eq!(FsHost::from_env().canonical(&t.p("real/out")), t.p("elsewhere/new"));
}

#[test]
fn a_link_chain_and_a_loop_both_end() {
    let t = Tree::new("chain");
    symlink(t.p("real"), t.p("a")).unwrap();
    symlink(t.p("a"), t.p("b")).unwrap();
    symlink(t.p("loop2"), t.p("loop1")).unwrap();
    symlink(t.p("loop1"), t.p("loop2")).unwrap();
    let host = FsHost::from_env();
    assert_eq!(host.canonical(&t.p("b/sub/file")), t.p("real/sub/file"));
    // A loop gives some answer inside the tree and does not hang.
    assert!(host.canonical(&t.p("loop1/x")).starts_with(&t.p("")));
}

#[test]
fn the_answer_matches_the_c_library_for_existing_paths() {
    let t = Tree::new("libc");
    symlink(t.p("real/sub"), t.p("s")).unwrap();
    for rel in ["real", "real/sub/file", "s", "s/file"] {
        let want = fs::canonicalize(t.p(rel)).unwrap().to_string_lossy().into_owned();
        assert_eq!(FsHost::from_env().canonical(&t.p(rel)), want, "{rel}");
    }
}

#[test]
fn kind_follows_links_and_tells_folders_files_and_nothing() {
    use dsh_allow::host::PathKind;
    let t = Tree::new("kind");
    symlink(t.p("real/sub"), t.p("to-dir")).unwrap();
    symlink(t.p("real/sub/file"), t.p("to-file")).unwrap();
    symlink(t.p("nowhere"), t.p("dangling")).unwrap();
    let host = FsHost::from_env();
    assert_eq!(host.kind(&t.p("real/sub")), PathKind::Dir);
    assert_eq!(host.kind(&t.p("real/sub/file")), PathKind::File);
    assert_eq!(host.kind(&t.p("real/none")), PathKind::Missing);
    assert_eq!(host.kind(&t.p("to-dir")), PathKind::Dir);
    assert_eq!(host.kind(&t.p("to-file")), PathKind::File);
    assert_eq!(host.kind(&t.p("dangling")), PathKind::Missing);
    assert_eq!(host.kind("/"), PathKind::Dir);
}

#[test]
fn links_in_proc_are_kept_as_spelled_since_they_point_for_the_process_reading_them() {
    let t = Tree::new("proc");
    symlink("/proc/self/cwd", t.p("here")).unwrap();
    let host = FsHost::from_env();
    // This process's cwd is not the shell's: the path stays as written.
    assert_eq!(host.canonical("/proc/self/cwd/.ssh/id_rsa"), "/proc/self/cwd/.ssh/id_rsa");
    assert_eq!(host.canonical(&t.p("here/.ssh/id_rsa")), "/proc/self/cwd/.ssh/id_rsa");
    // What is not a link in /proc is looked up as anywhere else.
    assert_eq!(host.canonical("/proc/cpuinfo"), "/proc/cpuinfo");
}
