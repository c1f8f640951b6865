//! git's subcommands that rewrite the worktree, in two kinds.
//!
//! **Self-guarded**: git itself refuses to overwrite uncommitted work
//! (`checkout BRANCH`, `switch`, `merge`, `rebase`, `pull`, `cherry-pick`,
//! `revert`, `am`, `apply`, `stash`, `stash pop`, `mv`), and what they
//! replace stays in the object store and the reflog. Their need (create,
//! write and delete across the worktree) is granted for the one call when
//! the line hides nothing.
//!
//! **Destructive**: `reset --hard`, `clean -f`, `checkout -- PATHS` /
//! `checkout -f` / `checkout .`, `restore`, `switch -f`, `stash drop` /
//! `clear`, `mv -f` lose work nothing keeps. They keep asking, and the card
//! says what would be lost.

use super::sink::{Sink, Unseen};
use super::split::split;
use crate::host::PathKind;
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;
use crate::paths;

/// What `git SUB REST` does to the worktree (`mv`'s operands included).
pub(super) fn rewrites(sub: &str, rest: &[Arg], sink: &mut Sink) {
    let words: Vec<&str> = rest.iter().map(Arg::text).collect();
    let has = |f: &[&str]| words.iter().any(|w| f.contains(w));
    let verb = words.iter().copied().find(|w| !w.starts_with('-'));
    let kind = match sub {
        "checkout" => checkout(rest, sink),
        "switch" if has(&["-f", "--force", "--discard-changes", "-m", "--merge"]) => Kind::Discards("uncommitted changes"),
        "switch" => Kind::Guarded,
        "restore" if has(&["--staged", "-S"]) && !has(&["--worktree", "-W"]) => Kind::None,
        "restore" => return restore(rest, sink),
        "reset" if has(&["--hard"]) => Kind::Discards("uncommitted changes"),
        // `--keep` and `--merge` abort when a file they would change has local changes.
        "reset" if has(&["--keep", "--merge"]) => Kind::Guarded,
        // Without `-f` git refuses unless the configuration says otherwise.
        "clean" if has(&["-n", "--dry-run"]) => Kind::None,
        "clean" => Kind::Discards("untracked files"),
        "stash" => match verb {
            Some("list" | "show") => Kind::None,
            Some("drop" | "clear") => Kind::Discards("stashed changes"),
            _ => Kind::Guarded,
        },
        // An interactive rebase hands the plan to an editor the line does not show.
        "rebase" if has(&["-i", "--interactive"]) => Kind::Asked,
        "merge" | "rebase" | "cherry-pick" | "revert" | "pull" | "am" | "apply" => Kind::Guarded,
        "mv" => return mv(rest, sink),
        // The plumbing that writes the worktree from the index: forced, it
        // overwrites what is there; `read-tree -u` with `--reset` too.
        "checkout-index" if has(&["-f", "--force"]) || words.iter().any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('f')) => {
            Kind::Discards("uncommitted changes")
        }
        "checkout-index" => Kind::Guarded,
        "read-tree" if has(&["-u"]) && !has(&["-m"]) => Kind::Discards("uncommitted changes"),
        "read-tree" if has(&["-u"]) => Kind::Guarded,
        // Forced, submodules' worktrees lose what is uncommitted in them.
        "submodule" if matches!(verb, Some("deinit" | "update")) && has(&["-f", "--force"]) => Kind::Discards("uncommitted changes in submodules"),
        _ => Kind::None,
    };
    match kind {
        Kind::None => {}
        Kind::Guarded => guarded(sink, &format!("git {sub} refuses to overwrite uncommitted work; what it replaces stays in the history")),
        Kind::Asked => asked(sink, &format!("git {sub} replaces tracked files across the worktree")),
        Kind::Discards(what) => {
            let scope = worktree(sink);
            let line: String = std::iter::once(sub).chain(words.iter().copied()).collect::<Vec<_>>().join(" ").chars().take(60).collect();
            let what = format!("`git {line}` discards {what} in {}", scope.join(", "));
            asked(sink, &what);
            sink.out.discards.push(what);
        }
    }
}

enum Kind {
    None,
    Guarded,
    /// Rewrites the worktree, asked as before (bound to git on "Always allow").
    Asked,
    Discards(&'static str),
}

/// `checkout BRANCH`, `-b`/`-B NEW [START]`, `--detach`: self-guarded.
/// Paths (after `--`, `.`, an operand that exists, a second operand),
/// `-f`, `-p`, `--ours`/`--theirs`, `-m`: the files' changes are discarded.
fn checkout(rest: &[Arg], sink: &Sink) -> Kind {
    let s = split(rest, &["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"]);
    let destructive = ["-f", "--force", "-p", "--patch", "--ours", "--theirs", "-m", "--merge", "--pathspec-from-file", "--"];
    if s.has(&destructive) || rest.iter().any(|a| a.text() == "--") || s.short('f') || s.short('p') || s.short('m') {
        return Kind::Discards("uncommitted changes");
    }
    let new_branch = s.has(&["-b", "-B", "--orphan"]);
    let ops = &s.operands;
    let names_path = |a: &Arg| match a.literal() {
        Some(t) => t == "." || t.contains('*') || sink.dirs().is_some_and(|ds| ds.iter().any(|d| sink.cx.host.kind(&paths::absolute(d, t, sink.cx.home)) != PathKind::Missing)),
        None => true,
    };
    match ops.as_slice() {
        [] => Kind::Guarded,
        [one] if !names_path(one) => Kind::Guarded,
        [_] => Kind::Discards("uncommitted changes"),
        // `checkout -b NEW START` names no path; `checkout TREE PATHS…` does.
        [_, ..] if new_branch => Kind::Asked,
        _ => Kind::Discards("uncommitted changes"),
    }
}

/// `git restore [-W] [-q] [-s TREE] [--] FILE…` of files (not folders,
/// globs or `.`): each file's content is kept by the runner before git
/// replaces it (decide/: `Kept`), so nothing is lost; anything else
/// discards changes and asks.
fn restore(rest: &[Arg], sink: &mut Sink) {
    let s = split(rest, &["-s", "--source"]);
    let plain_options = rest.iter().map(Arg::text).take_while(|t| *t != "--").filter(|t| t.starts_with('-')).all(|t| {
        matches!(t, "-W" | "--worktree" | "-q" | "--quiet" | "-s" | "--source" | "--no-progress" | "--ignore-unmerged") || t.starts_with("--source=")
    });
    let files: Option<Vec<String>> = s
        .operands
        .iter()
        .map(|a| {
            let t = a.literal()?;
            let plain = !t.is_empty() && t != "." && !t.ends_with('/') && !t.contains(['*', '?', '[', ':']);
            let dirs = sink.dirs()?;
            let [d] = dirs.as_slice() else { return None };
            let p = paths::absolute(d, t, sink.cx.home);
            (plain && sink.cx.host.kind(&p) != PathKind::Dir).then_some(p)
        })
        .collect();
    match files {
        Some(files) if plain_options && !files.is_empty() => {
            for f in &files {
                sink.path_with(&Arg::Literal(f.clone()), super::sink::create_or_write);
            }
            let reason = "git restore replaces the files it names with their committed content, and the runner keeps a copy of each as it was first".to_string();
            sink.out.unseen.push(Unseen::Kept { program: "git".into(), files, reason });
        }
        _ => {
            let scope = worktree(sink);
            let what = format!("`git restore` discards uncommitted changes in {}", scope.join(", "));
            asked(sink, &what);
            sink.out.discards.push(what);
        }
    }
}

/// `git mv SRC… DEST`: git refuses to overwrite DEST without `-f`, and the
/// sources' content moves with them (self-guarded). With `-f`, DEST's own
/// content is replaced: its delete is visible and asked.
fn mv(rest: &[Arg], sink: &mut Sink) {
    let s = split(rest, &[]);
    let Some((dest, sources)) = s.operands.split_last() else { return };
    let force = s.has(&["--force"]) || s.short('f');
    for src in sources {
        sink.path(src, Read);
        if force {
            sink.path(src, Delete);
        }
    }
    sink.path(dest, Create);
    if force {
        let what = format!("git mv -f replaces `{}` if it exists", dest.text());
        sink.out.discards.push(what);
    } else {
        guarded(sink, "git mv refuses to overwrite an existing file; the moved files keep their content");
    }
}

/// The worktree root of the repository git works in: the nearest folder at
/// or above the working directory holding a `.git` inside the workspace,
/// else the working directory itself.
fn worktree(sink: &Sink) -> Vec<String> {
    let ws = paths::normalize(sink.cx.workspace);
    let Some(dirs) = sink.dirs() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for d in dirs {
        let mut at = paths::normalize(d);
        let root = loop {
            if !paths::within(&at, &ws) {
                break paths::normalize(d);
            }
            if sink.cx.host.kind(&format!("{}/.git", at.trim_end_matches('/'))) != PathKind::Missing {
                break at;
            }
            if at == ws || at == "/" {
                break paths::normalize(d);
            }
            at = paths::parent(&at).to_string();
        };
        if !out.contains(&root) {
            out.push(root);
        }
    }
    out
}

fn guarded(sink: &mut Sink, why: &str) {
    let scope = worktree(sink);
    sink.out.unseen.push(Unseen::SelfGuarded { program: "git".into(), capabilities: vec![Create, Write, Delete], scope, reason: why.to_string() });
}

fn asked(sink: &mut Sink, why: &str) {
    let scope = worktree(sink);
    sink.out.unseen.push(Unseen::ProgramState { program: "git".into(), capability: Delete, scope, reason: why.to_string() });
}
