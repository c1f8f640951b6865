//! The keeper's watch on a kept entry's folders (runner/folder_watch.rs):
//! it vouches only for folders watched before they were compared with
//! their stamps and untouched since; an event marks the folder and all
//! below the entry it names. Real folders, real inotify.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use dsh_allow::fence::landlock::Rules;
use dsh_allow::runner::folder_watch::Watch;
use dsh_allow::runner::kept::{render, Entry, Seen};

#[path = "support/scratch.rs"]
mod scratch;

/// A tree `a/b/c`, `d`, and a link `l` to `a`; the entry kept for it stamps
/// every folder from `/` down.
struct Tree {
    base: PathBuf,
    slot: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Tree {
        let base = scratch::root().join(format!("watch-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("a/b/c")).unwrap();
        fs::create_dir_all(base.join("d")).unwrap();
        std::os::unix::fs::symlink(base.join("a"), base.join("l")).unwrap();
        let slot = base.join("slot");
        Tree { base, slot }
    }

    fn p(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    /// Keep an entry stamping `folders` (and every folder above them) as
    /// they are now.
    fn keep(&self, folders: &[&str]) {
        let mut all: BTreeMap<String, Option<Seen>> = BTreeMap::new();
        for f in folders {
            let mut at = Some(Path::new(f));
            while let Some(p) = at {
                let s = p.to_string_lossy().into_owned();
                all.insert(s.clone(), Seen::now(&s));
                at = p.parent();
            }
        }
        let e = Entry { key: "k".into(), id: "i".into(), folders: all, found: BTreeMap::new(), listed: BTreeMap::new(), rules: Rules { handled: 0, rules: Vec::new() } };
        fs::write(&self.slot, render(&e).unwrap()).unwrap();
        fs::set_permissions(&self.slot, fs::Permissions::from_mode(0o600)).unwrap();
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn dirty(w: &mut Watch) -> Vec<String> {
    w.drain();
    w.dirty().map(str::to_string).collect()
}

#[test]
fn folders_unchanged_since_they_were_watched_are_vouched_for() {
    let t = Tree::new("quiet");
    t.keep(&[&t.p("a/b/c"), &t.p("d")]);
    let mut w = Watch::of(&t.slot).expect("a watch");
    let d = dirty(&mut w);
    for f in ["a", "a/b", "a/b/c", "d"] {
        assert!(!d.contains(&t.p(f)), "{f} not vouched for: {d:?}");
    }
}

#[test]
fn an_entry_made_in_a_folder_marks_that_folder_and_nothing_beside_it() {
    let t = Tree::new("made");
    t.keep(&[&t.p("a/b/c"), &t.p("d")]);
    let mut w = Watch::of(&t.slot).unwrap();
    fs::write(t.base.join("a/b/new.txt"), "x").unwrap();
    let d = dirty(&mut w);
    assert!(d.contains(&t.p("a/b")), "{d:?}");
    for f in ["a", "a/b/c", "d"] {
        assert!(!d.contains(&t.p(f)), "{f} marked by a file made beside it: {d:?}");
    }
    // Looked at again, the folder is not as stamped (its times moved).
    w.recheck();
    assert!(w.dirty().any(|p| p == t.p("a/b")));
}

#[test]
fn a_folder_renamed_away_and_back_marks_everything_below_it() {
    let t = Tree::new("renamed");
    t.keep(&[&t.p("a/b/c"), &t.p("d")]);
    let mut w = Watch::of(&t.slot).unwrap();
    fs::rename(t.base.join("a"), t.base.join("a-away")).unwrap();
    fs::rename(t.base.join("a-away"), t.base.join("a")).unwrap();
    let d = dirty(&mut w);
    for f in ["a", "a/b", "a/b/c"] {
        assert!(d.contains(&t.p(f)), "{f} vouched for after its parent's rename: {d:?}");
    }
    assert!(!d.contains(&t.p("d")), "{d:?}");
}

#[test]
fn a_changed_mode_marks_the_folder_and_what_lies_below_it() {
    let t = Tree::new("mode");
    t.keep(&[&t.p("a/b/c")]);
    let mut w = Watch::of(&t.slot).unwrap();
    fs::set_permissions(t.base.join("a/b"), fs::Permissions::from_mode(0o700)).unwrap();
    let d = dirty(&mut w);
    assert!(d.contains(&t.p("a/b")) && d.contains(&t.p("a/b/c")), "{d:?}");
}

#[test]
fn a_folder_reached_through_a_link_is_never_vouched_for() {
    let t = Tree::new("link");
    t.keep(&[&t.p("l/b")]);
    let mut w = Watch::of(&t.slot).unwrap();
    let d = dirty(&mut w);
    assert!(d.contains(&t.p("l")), "the link itself was vouched for: {d:?}");
    // What lies below an unwatched folder is not vouched for either: a
    // rename of the link's folder would make no event on it.
    assert!(d.contains(&t.p("l/b")), "a folder below an unwatched one was vouched for: {d:?}");
    // Changing where the link leads is an event in its folder.
    fs::remove_file(t.base.join("l")).unwrap();
    std::os::unix::fs::symlink(t.base.join("d"), t.base.join("l")).unwrap();
    let d = dirty(&mut w);
    assert!(d.contains(&t.p("l/b")), "a folder through a retargeted link was vouched for: {d:?}");
}

#[test]
fn an_unsettled_folder_is_watched_so_the_folders_below_it_are_vouched_for() {
    let t = Tree::new("unsettled");
    t.keep(&[&t.p("a/b/c")]);
    // The entry as kept right after a change: `a` unsettled (no stamp).
    let text = fs::read_to_string(&t.slot).unwrap();
    let a = t.p("a");
    let line = text.lines().find(|l| l.starts_with("folder ") && l.ends_with(&format!(" {a}"))).unwrap().to_string();
    fs::write(&t.slot, text.replace(&format!("{line}\n"), &format!("unsettled {a}\n"))).unwrap();
    let mut w = Watch::of(&t.slot).unwrap();
    let d = dirty(&mut w);
    assert!(d.contains(&a), "an unsettled folder was vouched for: {d:?}");
    assert!(!d.contains(&t.p("a/b")), "{d:?}");
    fs::rename(t.base.join("a/b"), t.base.join("a/b2")).unwrap();
    assert!(dirty(&mut w).contains(&t.p("a/b/c")));
}

#[test]
fn folders_without_their_parents_are_not_watched_at_all() {
    let t = Tree::new("orphan");
    let c = t.p("a/b/c");
    let e = Entry { key: "k".into(), id: "i".into(), folders: BTreeMap::from([("/".into(), Seen::now("/")), (c.clone(), Seen::now(&c))]), found: BTreeMap::new(), listed: BTreeMap::new(), rules: Rules { handled: 0, rules: Vec::new() } };
    fs::write(&t.slot, render(&e).unwrap()).unwrap();
    fs::set_permissions(&t.slot, fs::Permissions::from_mode(0o600)).unwrap();
    assert!(Watch::of(&t.slot).is_none());
}

#[test]
fn a_full_queue_marks_every_folder() {
    let t = Tree::new("overflow");
    t.keep(&[&t.p("a/b/c"), &t.p("d")]);
    let mut w = Watch::of(&t.slot).unwrap();
    // More events than the queue holds (fs.inotify.max_queued_events).
    let most: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(16384);
    if most > 200_000 {
        eprintln!("SKIP a_full_queue_marks_every_folder: the queue holds {most} events");
        return;
    }
    for i in 0..most + 10 {
        let f = t.base.join(format!("d/f{}", i % 64));
        let _ = fs::write(&f, "");
        let _ = fs::remove_file(&f);
    }
    let d = dirty(&mut w);
    assert!(d.contains(&t.p("a/b/c")), "a folder untouched was vouched for after the queue overflowed");
}
