//! Files git makes or writes that its subcommands' operands and options
//! name: a new repository (`init`, `clone`, `worktree add`, `submodule
//! add`), an archive, a bundle, patches, a file merged in place, and a
//! repository or worktree named by `--git-dir` / `--work-tree`. Git's own
//! state inside the workspace's `.git` is tool state (`src/baseline.rs`).

use super::sink::{create_or_write, Sink, Unseen};
use super::split::split;
use super::writers::{self, folder_of};
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;
use crate::paths;

/// Options of `git init` that take a value.
const INIT_VALUES: &[&str] = &["-b", "--initial-branch", "--template", "--separate-git-dir", "--object-format", "--ref-format"];
/// Options of `git clone` that take a value.
const CLONE_VALUES: &[&str] = &[
    "-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able", "--separate-git-dir", "--depth",
    "--shallow-since", "--shallow-exclude", "-c", "--config", "--template", "-j", "--jobs", "--filter", "--server-option", "--bundle-uri",
    "--ref-format", "--revision",
];
/// Options of `git format-patch` that take a value.
const FORMAT_PATCH_VALUES: &[&str] = &[
    "-o", "--output-directory", "-v", "--reroll-count", "--subject-prefix", "--in-reply-to", "--to", "--cc", "--signature", "--signature-file",
    "--base", "--suffix", "--start-number", "--interdiff", "--range-diff", "--creation-factor", "--description-file", "--filename-max-length",
    "--add-header", "--cover-from-description", "-U", "--unified",
];
/// Subcommands that only read the worktree (a `--work-tree` elsewhere is
/// not written by them).
const READS_WORKTREE: &[&str] = &[
    "status", "diff", "log", "show", "ls-files", "grep", "blame", "describe", "rev-parse", "rev-list", "shortlog", "cat-file", "ls-tree",
    "for-each-ref", "show-ref", "branch", "tag", "config", "remote", "fetch", "push", "reflog", "help", "version", "check-ignore", "check-attr",
    "name-rev", "var", "count-objects", "fsck", "verify-commit", "verify-tag", "whatchanged", "diff-files", "diff-index", "diff-tree",
    "merge-base", "cherry", "range-diff", "archive", "bundle", "format-patch",
];

/// What `git [globals] SUB REST` makes or writes outside git's own state.
/// `sink` runs where git runs (after `-C`).
pub(super) fn git_files(globals: &[Arg], sub: &str, rest: &[Arg], sink: &mut Sink) {
    let git_dir = global_value(globals, "--git-dir");
    match sub {
        "init" | "init-db" => init(rest, git_dir.as_ref(), sink),
        "clone" => clone(rest, sink),
        "worktree" => worktree(rest, sink),
        "bundle" => bundle(rest, sink),
        "format-patch" => {
            let s = split(rest, FORMAT_PATCH_VALUES);
            for v in s.values(&["--signature-file", "--description-file"]) {
                sink.path(&v, Read);
            }
            if !s.has(&["--stdout"]) {
                let dir = s.values(&["-o", "--output-directory"]).into_iter().next();
                sink.unknown_names_in(dir.as_ref(), &[Create, Write], "git format-patch names each patch after its commit");
            }
        }
        "archive" => {
            let s = split(rest, &["-o", "--output", "--format", "--prefix", "--remote", "--exec", "--add-file", "--add-virtual-file", "--mtime"]);
            for v in s.values(&["-o", "--output"]) {
                sink.fill(&v);
            }
            for v in s.values(&["--add-file"]) {
                sink.path(&v, Read);
            }
        }
        "checkout-index" => {
            let s = split(rest, &["--prefix", "--stage"]);
            for p in s.values(&["--prefix"]) {
                match p.literal() {
                    Some(p) => sink.unknown_names_in(Some(&Arg::Literal(folder_of(p))), &[Create, Write], "git checkout-index writes the index's files under the prefix"),
                    None => sink.computed(Create, format!("`{}` is computed", p.text())),
                }
            }
        }
        "merge-file" => {
            let s = split(rest, &["-L", "--marker-size"]);
            if !(s.short('p') || s.has(&["--stdout"])) {
                if let Some(current) = s.operands.first() {
                    sink.path(current, Read);
                    sink.fill(current);
                }
            }
        }
        "fast-export" | "fast-import" => {
            for a in rest {
                if let Some(f) = a.literal().and_then(|t| t.strip_prefix("--export-marks=")) {
                    sink.fill(&Arg::Literal(f.to_string()));
                }
            }
        }
        "bugreport" | "diagnose" => {
            let s = split(rest, &["-o", "--output-directory", "-s", "--suffix", "--mode"]);
            let dir = s.values(&["-o", "--output-directory"]).into_iter().next();
            sink.unknown_names_in(dir.as_ref(), &[Create, Write], &format!("git {sub} names its report itself"));
        }
        "submodule" if rest.iter().map(Arg::text).find(|t| !t.starts_with('-')) == Some("add") => {
            let at = rest.iter().position(|a| a.text() == "add").unwrap_or(0);
            let s = split(&rest[at + 1..], &["-b", "--branch", "--name", "--reference", "--depth"]);
            // A local repository is cloned: read where it lies (a relative
            // URL is taken from the superproject's folder, where git runs).
            if let Some(local) = s.operands.first().and_then(|u| u.literal()).and_then(local_repository) {
                sink.path(&Arg::Literal(local.to_string()), Read);
            }
            for v in s.values(&["--reference"]) {
                sink.path(&v, Read);
            }
            let path = match (s.operands.get(1), s.operands.first().and_then(|u| u.literal()).and_then(humanish)) {
                (Some(p), _) => Some((*p).clone()),
                (None, Some(h)) => Some(Arg::Literal(h)),
                (None, None) => None,
            };
            match path {
                Some(p) => sink.path_with(&p, create_or_write),
                None => sink.computed(Create, "git submodule add names the folder after the URL".into()),
            }
            // The submodule is registered in the superproject's .gitmodules
            // (written through .gitmodules.lock), in the folder git runs in.
            sink.fill(&Arg::Literal(".gitmodules".into()));
        }
        _ => {}
    }
    elsewhere(globals, sub, git_dir, sink);
}

/// `--git-dir D` / `--work-tree W` naming a repository or worktree other
/// than the workspace's: git's state is written in D (its lock files come
/// and go there), and a subcommand that writes the worktree writes W.
fn elsewhere(globals: &[Arg], sub: &str, git_dir: Option<Arg>, sink: &mut Sink) {
    let own_git = paths::normalize(&format!("{}/.git", sink.cx.workspace));
    if let Some(d) = git_dir.filter(|_| !matches!(sub, "init" | "init-db" | "clone")) {
        let inside_own = d.literal().is_some_and(|t| {
            sink.dirs().is_some_and(|ds| ds.iter().all(|c| paths::within(&paths::absolute(c, t, sink.cx.home), &own_git)))
        });
        if !inside_own {
            program_writes(sink, &d, &format!("git keeps its state in `{}`", d.text()));
        }
    }
    if let Some(w) = global_value(globals, "--work-tree").filter(|_| !READS_WORKTREE.contains(&sub)) {
        program_writes(sink, &w, &format!("git {sub} writes the worktree `{}`", w.text()));
    }
}

/// Create and write under `dir` with names git chooses, and delete there
/// bound to git (its lock files, the files it replaces).
fn program_writes(sink: &mut Sink, dir: &Arg, why: &str) {
    sink.unknown_names_in(Some(dir), &[Create, Write], why);
    let scope: Vec<String> = match (dir.literal(), sink.dirs()) {
        (Some(d), Some(ds)) => ds.iter().map(|c| paths::absolute(c, d, sink.cx.home)).collect(),
        _ => Vec::new(),
    };
    sink.out.unseen.push(Unseen::ProgramState { program: "git".into(), capability: Delete, scope, reason: why.to_string() });
}

/// The value of a global option, `--opt VALUE` or `--opt=VALUE`.
fn global_value(globals: &[Arg], name: &str) -> Option<Arg> {
    let mut found = None;
    for (i, a) in globals.iter().enumerate() {
        if a.text() == name {
            found = globals.get(i + 1).cloned();
        } else if let Some(v) = a.literal().and_then(|t| t.strip_prefix(name)).and_then(|t| t.strip_prefix('=')) {
            found = Some(Arg::Literal(v.to_string()));
        }
    }
    found
}

/// `git init [DIR]`: DIR (made when missing) and its `.git`, or DIR itself
/// with `--bare`, or the `--separate-git-dir` / `--git-dir` folder.
fn init(rest: &[Arg], git_dir: Option<&Arg>, sink: &mut Sink) {
    let s = split(rest, INIT_VALUES);
    for v in s.values(&["--template"]) {
        sink.path(&v, Read);
    }
    let dir = s.operands.first().map(|a| (*a).clone()).unwrap_or(Arg::Literal(".".into()));
    let Arg::Literal(d) = &dir else {
        sink.computed(Create, format!("`{}` is computed", dir.text()));
        return;
    };
    writers::missing_ancestors(sink, &Arg::Literal(format!("{}/x", d.trim_end_matches('/'))));
    let separate = s.values(&["--separate-git-dir"]).into_iter().next().or_else(|| git_dir.cloned());
    sink.out.makes_repository = separate.is_none();
    match separate {
        Some(repo) => {
            sink.path_with(&repo, create_or_write);
            if !s.has(&["--bare"]) {
                sink.path_with(&Arg::Literal(format!("{}/.git", d.trim_end_matches('/'))), create_or_write);
            }
        }
        None if s.has(&["--bare"]) => sink.path_with(&dir, create_or_write),
        // A `.git` already there is initialised again in place: its files
        // are git's own state, not a new repository pointer.
        None => sink.path_if_missing(&Arg::Literal(format!("{}/.git", d.trim_end_matches('/'))), Create),
    }
    sink.out.makes_repository = false;
}

/// `git clone URL [DIR]`: DIR, or the name the URL ends in.
fn clone(rest: &[Arg], sink: &mut Sink) {
    let s = split(rest, CLONE_VALUES);
    let Some(url) = s.operands.first() else { return };
    if let Some(local) = url.literal().and_then(local_repository) {
        sink.path(&Arg::Literal(local.to_string()), Read);
    }
    for v in s.values(&["--reference", "--reference-if-able", "--template"]) {
        sink.path(&v, Read);
    }
    let bare = s.has(&["--bare", "--mirror"]);
    let dir = match (s.operands.get(1), url.literal().and_then(humanish)) {
        (Some(d), _) => (*d).clone(),
        (None, Some(h)) => Arg::Literal(if bare { format!("{h}.git") } else { h }),
        (None, None) => {
            sink.computed(Create, format!("git clone names the folder after `{}`", url.text()));
            return;
        }
    };
    sink.path_with(&dir, create_or_write);
    for v in s.values(&["--separate-git-dir"]) {
        sink.path_with(&v, create_or_write);
    }
}

/// `git worktree add PATH`, `move FROM TO`, `remove PATH`, `repair [PATH…]`.
fn worktree(rest: &[Arg], sink: &mut Sink) {
    let Some(verb) = rest.first().map(Arg::text) else { return };
    let s = split(&rest[1..], &["-b", "-B", "--reason"]);
    let ops = &s.operands;
    match verb {
        // A new worktree: git makes the folder (or takes an empty one,
        // which it reads to tell) and writes the branch's files into it.
        "add" => {
            if let Some(p) = ops.first() {
                sink.makes_folder_as(p, &[Read, Create, Write]);
            }
        }
        "move" => {
            if let [from, to, ..] = ops.as_slice() {
                sink.path(from, Delete);
                sink.path(to, Create);
            }
        }
        "remove" => {
            for p in ops {
                sink.path(p, Delete);
            }
        }
        "repair" => {
            for p in ops {
                sink.path(p, Write);
            }
        }
        _ => {}
    }
}

/// `git bundle create FILE …` writes FILE; the other verbs read it.
fn bundle(rest: &[Arg], sink: &mut Sink) {
    let Some(verb) = rest.first().map(Arg::text) else { return };
    let s = split(&rest[1..], &[]);
    let Some(file) = s.operands.first() else { return };
    if verb == "create" {
        sink.fill(file);
    } else {
        sink.path(file, Read);
    }
}

/// A URL that names a local repository: a path, or `file://PATH`.
fn local_repository(url: &str) -> Option<&str> {
    if let Some(p) = url.strip_prefix("file://") {
        return Some(p);
    }
    let scp_like = url.split_once(':').is_some_and(|(host, _)| !host.contains('/'));
    (!url.contains("://") && !scp_like).then_some(url)
}

/// The folder name git derives from a URL: its last part without `.git`
/// (`https://h/a/b.git` → `b`, `h:a/b` → `b`, `/p/repo/.git` → `repo`).
pub(super) fn humanish(url: &str) -> Option<String> {
    let mut u = url.trim_end_matches('/');
    u = u.strip_suffix("/.git").unwrap_or(u).trim_end_matches('/');
    let last = u.rsplit(['/', ':']).next()?;
    let last = last.strip_suffix(".git").or_else(|| last.strip_suffix(".bundle")).unwrap_or(last);
    (!last.is_empty() && last != "." && last != "..").then(|| last.to_string())
}
