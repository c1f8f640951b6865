//! git's own subcommands: which rewrite the worktree (`git_worktree`),
//! which write the repository's configuration (what git runs later), which
//! make earlier history unrecoverable, and the repositories below the
//! workspace root whose lock files git keeps.

use super::sink::{Sink, Unseen};
use super::split::{option_arg, split};
use super::{git_paths, git_worktree};
use crate::host::PathKind;
use crate::policy::capability::Capability::*;
use crate::shell::parse::{Arg, Cwd};
use crate::paths;

/// git: the worktree-rewriting subcommands replace tracked files (unlink
/// and create again), which needs delete across the worktree
/// (`git_worktree`: self-guarded or destructive); `.git` itself is tool
/// state. `rm` names its paths.
#[inline(never)]
pub(super) fn git(args: &[Arg], sink: &mut Sink) {
    let mut i = 0;
    let mut cwd = sink.cwd.clone();
    let mut expires = false;
    while i < args.len() {
        let t = args[i].text();
        match t {
            "-C" => {
                cwd = match args.get(i + 1).and_then(Arg::literal) {
                    Some(d) => Sink { cx: sink.cx, cwd: &cwd, out: sink.out }.chdir(d),
                    None => Cwd(None),
                };
                i += 2;
            }
            "-c" | "--config-env" => {
                // Configuration given on the line: git's own writes are no
                // longer git's alone, and some keys name a command to run.
                // A key that only says who commits or which transports git
                // may use (`-c user.name=…`, `-c protocol.file.allow=always`)
                // changes neither.
                let plain = t == "-c" && matches!(args.get(i + 1), Some(Arg::Literal(kv)) if git_key_is_plain(kv));
                if !plain {
                    sink.out.runs_code = true;
                }
                match args.get(i + 1) {
                    Some(Arg::Literal(kv)) if !git_key_runs_code(kv.split('=').next().unwrap_or(kv), kv.split_once('=').map(|(_, v)| v)) => {
                        expires |= git_key_expires_history(kv.split('=').next().unwrap_or(kv));
                    }
                    _ => sink.opaque(format!("git {t} sets configuration that may name a command git runs")),
                }
                i += 2;
            }
            "--exec-path" => {
                sink.out.runs_code = true;
                sink.opaque("git --exec-path starts its subcommands from another folder".into());
                i += 2;
            }
            "--git-dir" | "--work-tree" | "--namespace" | "--attr-source" => i += 2,
            _ if t.starts_with("--exec-path=") => {
                sink.out.runs_code = true;
                sink.opaque("git --exec-path starts its subcommands from another folder".into());
                i += 1;
            }
            _ if t.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Arg::literal) else { return };
    let rest = &args[i + 1..];
    sink.out.writes_repository |= writes_repository(sub, rest);
    let flag = |f: &str| rest.iter().any(|a| a.text() == f);
    // Subcommands that run a command the line names.
    let runs = match sub {
        "rebase" => rest.iter().any(|a| matches!(a.text(), "-x" | "--exec") || a.text().starts_with("--exec=")),
        "bisect" => rest.first().map(Arg::text) == Some("run"),
        "submodule" => rest.iter().any(|a| a.text() == "foreach"),
        "difftool" | "mergetool" | "filter-branch" | "filter-repo" => true,
        _ => false,
    };
    if runs {
        sink.out.runs_code = true;
        sink.opaque(format!("git {sub} runs a command the line names"));
    }
    if sub == "credential" || sub.starts_with("credential-") {
        let reason = format!("git {sub} asks the credential helpers (a keychain, a cache daemon) for a secret, which it hands out");
        sink.out.unseen.push(Unseen::Escapes { program: None, reason });
    }
    if let Some(why) = runs_a_program(sub, rest) {
        sink.out.runs_code = true;
        sink.opaque(format!("git {sub} {why}"));
    }
    let mut inner = Sink { cx: sink.cx, cwd: &cwd, out: sink.out };
    config_writes(sub, rest, &mut inner);
    git_paths::git_files(&args[..i], sub, rest, &mut inner);
    // `git diff --output=F` (and the log family) writes where it is told.
    for (j, a) in rest.iter().enumerate() {
        match a.text() {
            "--output" => {
                if let Some(v) = rest.get(j + 1) {
                    inner.fill(v);
                }
            }
            t if t.starts_with("--output=") => inner.fill(&option_arg("--output", a)),
            _ => {}
        }
    }
    match sub {
        "rm" => {
            for a in rest.iter().filter(|a| !a.text().starts_with('-')) {
                if !flag("--cached") {
                    inner.path(a, Delete);
                }
            }
        }
        "diff" if flag("--no-index") => {
            // Two paths anywhere, compared outside any repository.
            for a in rest.iter().filter(|a| !a.text().starts_with('-')) {
                inner.path(a, Read);
            }
        }
        _ => git_worktree::rewrites(sub, rest, &mut inner),
    }
    history_and_nested(sub, rest, expires, &mut inner);
    maintenance(sub, rest, &mut inner);
    if sub == "apply" && rest.iter().any(|a| a.text() == "--unsafe-paths") {
        inner.opaque("git apply --unsafe-paths writes wherever the patch's paths say, outside the worktree too".into());
    }
}

/// `git maintenance start|register|stop|unregister`: the repository goes
/// into the global configuration (`~/.gitconfig`'s maintenance.repo), and
/// `start`/`stop` schedule (or unschedule) git with the system's timers,
/// which run it later, outside this process tree.
fn maintenance(sub: &str, rest: &[Arg], sink: &mut Sink) {
    let verb = rest.iter().map(Arg::text).find(|w| !w.starts_with('-'));
    if sub != "maintenance" || !matches!(verb, Some("start" | "stop" | "register" | "unregister")) {
        return;
    }
    let global = Arg::Literal(format!("{}/.gitconfig", sink.cx.home.trim_end_matches('/')));
    sink.path(&global, Write);
    if matches!(verb, Some("start" | "stop")) {
        let reason = "git maintenance schedules git with the system's timers (systemd, cron, launchd), which run it outside this process tree".to_string();
        sink.out.unseen.push(Unseen::Escapes { program: None, reason });
    }
}

/// Options of a subcommand that make git start a program the line names or
/// that a new repository brings (issue 34): the other side of a transfer
/// (`--upload-pack`, `clone -u`, `--receive-pack`, `--exec`), the `ext::`
/// transport, `grep -O`'s pager, send-email's commands, and a clone's or
/// init's template (its hooks) or configuration naming a command.
fn runs_a_program(sub: &str, rest: &[Arg]) -> Option<&'static str> {
    let words: Vec<&str> = rest.iter().map(Arg::text).collect();
    let has = |name: &str| words.iter().any(|w| *w == name || w.strip_prefix(name).is_some_and(|r| r.starts_with('=')));
    if words.iter().any(|w| w.starts_with("ext::")) {
        return Some("uses the ext:: transport, which runs the command its URL spells");
    }
    let transfer = match sub {
        "clone" => has("--upload-pack") || words.contains(&"-u"),
        "fetch" | "pull" | "ls-remote" | "fetch-pack" | "remote" => has("--upload-pack"),
        "push" | "send-pack" => has("--receive-pack") || has("--exec"),
        "archive" => has("--exec"),
        _ => false,
    };
    if transfer {
        return Some("runs the program it names as the other side of the transfer");
    }
    match sub {
        "grep" if words.iter().any(|w| w.starts_with("-O") || w.starts_with("--open-files-in-pager")) => Some("opens the matches in a pager it starts"),
        "send-email" if ["--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd"].iter().any(|o| has(o)) || words.iter().any(|w| w.starts_with("--smtp-server=/")) => {
            Some("runs the commands its options name")
        }
        "clone" | "init" if has("--template") => Some("copies the hooks of a template folder into the new repository"),
        "clone" => {
            let s = split(rest, &["-c", "--config"]);
            let code = s.values(&["-c", "--config"]).iter().any(|kv| match kv.literal() {
                Some(kv) => git_key_runs_code(kv.split('=').next().unwrap_or(kv), kv.split_once('=').map(|(_, v)| v)),
                None => true,
            });
            code.then_some("sets configuration in the new repository that names a command git runs")
        }
        _ => None,
    }
}

/// What git needs beyond the worktree: delete over the history it destroys,
/// and in a repository below the workspace root.
fn history_and_nested(sub: &str, rest: &[Arg], expires: bool, inner: &mut Sink) {
    let expired = expires.then_some("runs with configuration that expires the reflog or unreachable objects now");
    if let Some(why) = destroys_history(sub, rest).or(expired) {
        // Asked as a worktree rewrite is, bound to git, but over the
        // repository's own folder: the fence grants git's lines delete
        // there for lock files, so only the card stands before this.
        let scope = repository_dir(inner).map(|g| vec![g]).unwrap_or_else(|| inner.dirs().cloned().unwrap_or_default());
        let what = format!("`git {sub}` {why}");
        inner.out.unseen.push(Unseen::ProgramState { program: "git".into(), capability: Delete, scope, reason: what.clone() });
        inner.out.discards.push(what);
    }
    // A repository below the workspace root keeps its lock files in its own
    // `.git`, which is not the workspace's tool state: every subcommand
    // (even `status` refreshes the index) needs delete there. Asked once,
    // bound to git.
    let repos = nested_repositories(sub, rest, inner);
    if !repos.is_empty() {
        let reason = format!("git keeps its lock files in {}, a repository below the workspace root", repos.join(", "));
        inner.out.unseen.push(Unseen::ProgramState { program: "git".into(), capability: Delete, scope: repos, reason });
    }
}


/// Keys whose value is a command (or a file of configuration, or a place
/// hooks are found) that git, or a tool it starts, later runs: setting one
/// changes what runs outside any fence.
fn git_key_runs_code(key: &str, value: Option<&str>) -> bool {
    let key = key.to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or("");
    let first = key.split('.').next().unwrap_or("");
    matches!(
        key.as_str(),
        "core.hookspath" | "core.fsmonitor" | "core.sshcommand" | "core.pager" | "core.editor" | "core.askpass" | "core.gitproxy"
            | "sequence.editor" | "diff.external" | "include.path" | "credential.helper" | "gpg.program" | "pager.log"
            | "web.browser" | "instaweb.httpd" | "sendemail.smtpserver" | "uploadpack.packobjectshook"
    ) || matches!(first, "includeif" | "filter" | "pager" | "credential" | "gpg" | "browser")
        || matches!(last, "command" | "driver" | "textconv" | "helper" | "cmd" | "program" | "process" | "clean" | "smudge" | "tool" | "path")
        || (first == "alias" && value.is_none_or(|v| v.trim_start().starts_with('!')))
}

/// `-c KEY=VALUE` that names no program, no file git reads or writes, and
/// nothing about what git keeps: who commits, which transports it may use,
/// its messages' looks. Anything else makes the line's git not git's alone.
fn git_key_is_plain(kv: &str) -> bool {
    let Some((key, value)) = kv.split_once('=') else { return false };
    let key = key.to_ascii_lowercase();
    let first = key.split('.').next().unwrap_or("");
    let off = matches!(value.to_ascii_lowercase().as_str(), "false" | "no" | "off" | "0");
    matches!(key.as_str(), "user.name" | "user.email" | "author.name" | "author.email" | "committer.name" | "committer.email" | "init.defaultbranch" | "core.quotepath")
        || (key.starts_with("protocol.") && key.ends_with(".allow"))
        || matches!(first, "advice" | "color")
        || (matches!(key.as_str(), "commit.gpgsign" | "tag.gpgsign") && off)
}

/// Whether `git SUB REST` changes the repository (its index, refs, objects
/// or the worktree's entries in `.git`), which git does through lock files it
/// makes and removes there. Reading subcommands refresh the index only when
/// they can, and go on when they cannot (`git status` under a shut `.git`).
fn writes_repository(sub: &str, rest: &[Arg]) -> bool {
    const READS: &[&str] = &[
        "status", "diff", "log", "show", "ls-files", "ls-tree", "ls-remote", "grep", "blame", "describe", "rev-parse", "rev-list", "shortlog",
        "cat-file", "for-each-ref", "show-ref", "reflog", "help", "version", "check-ignore", "check-attr", "name-rev", "var", "count-objects",
        "fsck", "verify-commit", "verify-tag", "whatchanged", "diff-files", "diff-index", "diff-tree", "merge-base", "cherry", "range-diff",
        "archive", "format-patch", "bundle", "show-branch", "annotate", "difftool", "request-pull", "--version", "--help",
    ];
    let words: Vec<&str> = rest.iter().map(Arg::text).collect();
    let listing = |flags: &[&str]| words.is_empty() || words.iter().all(|w| w.starts_with('-') && flags.contains(w));
    match sub {
        _ if READS.contains(&sub) => false,
        "branch" => !listing(&["-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "-l", "--show-current", "--no-color", "--color"]),
        "tag" => !listing(&["-l", "--list", "-n", "--no-color", "--color"]),
        "remote" => words.first().is_some_and(|w| !matches!(*w, "-v" | "--verbose" | "show" | "get-url")),
        "stash" => !matches!(words.first(), Some(&("list" | "show"))),
        "worktree" => !matches!(words.first(), Some(&"list")),
        "config" => words.iter().any(|w| !w.starts_with('-')) && !words.iter().any(|w| matches!(*w, "--get" | "--get-all" | "--get-regexp" | "-l" | "--list" | "get" | "list")),
        _ => true,
    }
}

/// Keys that decide how soon git forgets history (`gc.reflogExpire=now`
/// makes the next `gc` or `gc --auto` drop every reflog entry), or where
/// the worktree is: set on a line, or written, they lose work or point the
/// repository elsewhere.
fn git_key_expires_history(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    matches!(key.as_str(), "gc.reflogexpire" | "gc.reflogexpireunreachable" | "gc.pruneexpire" | "gc.worktreepruneexpire" | "gc.rerereresolved" | "gc.rerereunresolved" | "core.worktree")
        || (key.starts_with("gc.") && key.ends_with(".reflogexpire"))
        || (key.starts_with("gc.") && key.ends_with(".reflogexpireunreachable"))
}

/// `git config` writes (and the subcommands that set configuration as they
/// go) change the repository's `.git/config`, which decides what git runs
/// later. Plain keys ask once, bound to git; a key that names a command is
/// a write the card shows as such, every time.
fn config_writes(sub: &str, rest: &[Arg], sink: &mut Sink) {
    let words: Vec<&str> = rest.iter().map(Arg::text).collect();
    let has = |f: &[&str]| words.iter().any(|w| f.contains(w));
    let (writes, key, value) = match sub {
        "config" => {
            let reads = has(&["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list", "--show-origin", "--show-scope", "-h"])
                || matches!(words.first(), Some(&"get" | &"list"));
            // Past the options (and the new `set`/`unset` verbs) to key [value].
            let mut i = 0;
            let mut file: Option<&Arg> = None;
            let mut scope_global = false;
            let mut verb_write = false;
            while i < rest.len() {
                let w = words[i];
                match w {
                    "-f" | "--file" | "--blob" => {
                        file = rest.get(i + 1);
                        i += 2;
                        continue;
                    }
                    "--global" | "--system" => scope_global = true,
                    "set" | "unset" | "rename-section" | "remove-section" | "edit" if i == 0 => verb_write = true,
                    "--add" | "--unset" | "--unset-all" | "--replace-all" | "--rename-section" | "--remove-section" | "-e" | "--edit" => verb_write = true,
                    "--type" | "--default" | "--comment" | "--value" => {
                        i += 2;
                        continue;
                    }
                    _ if w.starts_with('-') => {}
                    _ => break,
                }
                i += 1;
            }
            let operands: Vec<&str> = words[i.min(words.len())..].iter().copied().filter(|w| !w.starts_with('-')).collect();
            let writes = !reads && (verb_write || operands.len() >= 2);
            if writes {
                if let Some(f) = file {
                    sink.path(f, Read);
                    sink.path(f, Write);
                    return;
                }
                if scope_global {
                    // ~/.gitconfig or /etc/gitconfig: outside the workspace, asked as a write.
                    let target = if words.contains(&"--system") { "/etc/gitconfig".to_string() } else { format!("{}/.gitconfig", sink.cx.home) };
                    sink.path(&Arg::Literal(target), Write);
                    return;
                }
            }
            (writes, operands.first().map(|k| k.to_string()), operands.get(1).map(|v| v.to_string()))
        }
        "remote" => (matches!(words.first(), Some(&"add" | &"rename" | &"remove" | &"rm" | &"set-url" | &"set-branches" | &"set-head" | &"prune")), None, None),
        "branch" => (has(&["-u", "--set-upstream-to", "--unset-upstream", "-m", "-M", "--edit-description", "--track"]) || words.iter().any(|w| w.starts_with("--set-upstream-to=")), None, None),
        "push" => (has(&["-u", "--set-upstream"]), None, None),
        "checkout" | "switch" => (has(&["-t", "--track"]) || words.iter().any(|w| w.starts_with("--track=")), None, None),
        "submodule" => (matches!(words.first(), Some(&"add" | &"init" | &"sync" | &"update" | &"deinit" | &"set-branch" | &"set-url")), None, None),
        _ => (false, None, None),
    };
    if !writes {
        return;
    }
    let Some(config) = repository_config(sink) else {
        sink.opaque(format!("git {sub} writes the configuration of a repository found only at run time"));
        return;
    };
    if key.as_deref().is_some_and(|k| git_key_runs_code(k, value.as_deref()) || git_key_expires_history(k)) {
        sink.out.configures_code = true;
        sink.path(&Arg::Literal(config), Write);
    } else {
        sink.out.unseen.push(Unseen::ProgramState {
            program: "git".into(),
            capability: Write,
            scope: vec![config],
            reason: format!("git {sub} writes the repository's configuration"),
        });
    }
}

/// Subcommands that make earlier work unrecoverable: what the reflog,
/// unreachable objects or replaced refs still held is gone for good, which
/// no fence of the call can tell from git's own lock-file deletes.
fn destroys_history(sub: &str, rest: &[Arg]) -> Option<&'static str> {
    let words: Vec<&str> = rest.iter().map(Arg::text).collect();
    let has = |f: &str| words.iter().any(|w| *w == f || w.starts_with(&format!("{f}=")));
    match sub {
        "reflog" if matches!(words.first(), Some(&"expire" | &"delete")) => Some("drops reflog entries, the record that finds lost commits"),
        // `--prune` alone is git's default grace period; any other date drops recent objects.
        "gc" if words.iter().any(|w| w.starts_with("--prune=")) => Some("prunes unreachable objects sooner than git's grace period"),
        "prune" => Some("deletes unreachable objects"),
        "update-ref" if has("-d") || has("--stdin") => Some("deletes or rewrites refs without a reflog to bring them back"),
        "filter-branch" | "filter-repo" => Some("rewrites the history of every branch it is given"),
        "replace" if !(has("-l") || has("--list") || words.is_empty()) => Some("changes which objects the history shows"),
        _ => None,
    }
}

/// The `.git` folder of the repository git works in from here: the
/// nearest one at or above the working directory.
fn repository_dir(sink: &Sink) -> Option<String> {
    repository_config(sink).map(|c| c.trim_end_matches("/config").to_string())
}

/// The `config` file of the repository git works in from here: the nearest
/// `.git` folder at or above the working directory.
fn repository_config(sink: &Sink) -> Option<String> {
    let dirs = sink.dirs()?;
    let d = dirs.first()?;
    let mut at = paths::normalize(d);
    loop {
        let git = if at == "/" { "/.git".to_string() } else { format!("{at}/.git") };
        if sink.cx.host.kind(&git) == PathKind::Dir {
            return Some(format!("{git}/config"));
        }
        if at == "/" {
            return None;
        }
        at = paths::parent(&at).to_string();
    }
}

/// The `.git` folders of the repositories below the workspace root this git
/// call works in: `git init DIR` names its own; otherwise the nearest
/// ancestor of the working directory holding a `.git` folder.
fn nested_repositories(sub: &str, rest: &[Arg], sink: &Sink) -> Vec<String> {
    let ws = paths::normalize(sink.cx.workspace);
    let Some(dirs) = sink.dirs() else { return Vec::new() };
    let mut out = Vec::new();
    for d in dirs {
        if !paths::within(d, &ws) {
            continue;
        }
        let repo = if sub == "init" {
            let split = split(rest, &["-b", "--initial-branch", "--template", "--separate-git-dir", "--object-format", "--ref-format"]);
            match split.operands.first() {
                Some(Arg::Literal(dir)) => Some(paths::absolute(d, dir, sink.cx.home)),
                Some(_) => None,
                None => Some(d.clone()),
            }
        } else {
            let mut at = d.clone();
            loop {
                if sink.cx.host.kind(&format!("{at}/.git")) == PathKind::Dir {
                    break Some(at);
                }
                if at == ws || at == "/" {
                    break None;
                }
                at = paths::parent(&at).to_string();
            }
        };
        if let Some(repo) = repo.filter(|r| r != &ws && paths::within(r, &ws)) {
            let git_dir = format!("{repo}/.git");
            if !out.contains(&git_dir) {
                out.push(git_dir);
            }
        }
    }
    out
}
