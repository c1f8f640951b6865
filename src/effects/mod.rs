//! Simple commands → the (path, capability) pairs they need.
//!
//! One declarative table ([`PROGRAMS`]) says what each program does to its
//! arguments; nothing is inferred from how a name sounds. A program not in
//! the table yields only the execute effect on its binary.
//!
//! This file is the walk: it reads each simple command, finds the program's
//! row and hands the line to the role file that reads it. A role records
//! what it finds through a [`Sink`] (`sink.rs`), including the commands it
//! starts, which the walk then judges in turn: the role files never call
//! back into the walk.

use crate::paths;
use crate::policy::capability::Capability::*;
use crate::shell::parse::{self, Arg, Cwd, Item, RedirectOp, SimpleCommand};

pub use sink::{Analysis, Context, Daemon, Effect, MadeLink, Unseen};
pub use table::table_names;
use sink::{Fold, Sink, Start, Started};
use split::{split, Split};
use table::{program, Kind, Role, BUILTINS, FILLS, MAKES_IN, NAMES_FROM, RUNS, UPDATES};
mod archives;
mod builtins;
mod code;
mod daemon;
mod editors;
mod fetch;
mod git;
mod git_paths;
mod git_worktree;
mod packages;
mod readers;
mod sink;
mod split;
mod starts;
mod table;
mod tools;
mod transfer;
mod variables;
mod wrappers;
mod writers;

/// Nested `bash -c '…'` is followed this deep, then treated as opaque.
const MAX_SHELL_DEPTH: usize = 3;

/// Everything `items` would do.
pub fn analyse(items: &[Item], cx: &Context, depth: usize) -> Analysis {
    let mut out = Analysis::default();
    analyse_into(items, cx, depth, &mut out);
    // Judge the line again, every path both as the disk has it now and
    // through every link the line makes; a link made inside another one is
    // placed right once that one is known, so again until nothing moves.
    for _ in 0..4 {
        if out.found.is_empty() || out.found == out.made {
            break;
        }
        out = Analysis { made: std::mem::take(&mut out.found), ..Default::default() };
        analyse_into(items, cx, depth, &mut out);
    }
    if !out.found.is_empty() && out.found != out.made {
        out.unseen.push(Unseen::Opaque { reason: "the links this line makes lead into one another too deeply to follow".into() });
    }
    dedupe(&mut out);
    out
}

/// A fresh analysis for a part of the line (a nested shell, xargs' or
/// find's command) that knows the links the line makes.
fn part_of(out: &Analysis) -> Analysis {
    Analysis { made: out.made.clone(), ..Default::default() }
}

/// What a part of the line starts counts for the whole line.
fn starts_of(out: &mut Analysis, part: &Analysis) {
    out.runs_code |= part.runs_code;
    out.runs_git |= part.runs_git;
    out.writes_repository |= part.writes_repository;
    out.configures_code |= part.configures_code;
    out.discards.extend(part.discards.iter().cloned());
}

/// Lines of programs that otherwise run code their text does not show which
/// run none here: `cargo new`/`init` (cargo's own template), a container
/// client's reporting subcommands (the daemon is asked, given nothing to
/// run), `ssh -T git@HOST` (the authentication test: no command, no
/// config naming a program), rustup managing toolchains, `go get` / `go mod
/// download` (fetch and verify, build nothing) and `perl -pi` with a plain
/// substitution.
fn runs_no_code(program: &str, args: &[Arg]) -> bool {
    match program {
        "cargo" => table::cargo_runs_no_code(&args.iter().map(Arg::text).collect::<Vec<_>>()),
        "docker" | "docker-compose" => daemon::only_reports(program, args),
        "ssh" => tools::ssh_auth_test(args),
        "rustup" => table::rustup_runs_no_code(&args.iter().map(Arg::text).collect::<Vec<_>>()),
        "go" => table::go_get_runs_no_code(&args.iter().map(Arg::text).collect::<Vec<_>>()),
        "perl" => editors::plain_perl_edit(args).is_some(),
        _ => false,
    }
}

/// `analyse` adding to `out`.
fn analyse_into(items: &[Item], cx: &Context, depth: usize, out: &mut Analysis) {
    for item in items {
        match item {
            Item::Command(cmd) => command(cmd, cx, depth, out),
            Item::Redirect { redirect, cwd } => redirection(redirect, cwd, cx, out),
            Item::Defines { name, cwd } => builtins::defines(name, &mut Sink { cx, cwd, out }),
            Item::Hidden { reason, cwd } => Sink { cx, cwd, out }.opaque(reason.clone()),
        }
    }
}

fn dedupe(out: &mut Analysis) {
    let mut seen = Vec::new();
    out.effects.retain(|e| {
        if seen.contains(e) {
            false
        } else {
            seen.push(e.clone());
            true
        }
    });
    let mut seen_d = Vec::new();
    out.discards.retain(|d| {
        let fresh = !seen_d.contains(d);
        seen_d.push(d.clone());
        fresh
    });
    let mut seen_u = Vec::new();
    out.unseen.retain(|u| {
        if seen_u.contains(u) {
            false
        } else {
            seen_u.push(u.clone());
            true
        }
    });
}

fn redirection(r: &parse::Redirect, cwd: &Cwd, cx: &Context, out: &mut Analysis) {
    let mut sink = Sink { cx, cwd, out };
    match r.op {
        RedirectOp::Duplicate => {}
        RedirectOp::Read => sink.path(&r.target, Read),
        RedirectOp::Truncate | RedirectOp::Append => sink.fill(&r.target),
        RedirectOp::ReadWrite => {
            sink.path(&r.target, Read);
            sink.fill(&r.target);
        }
    }
}

fn command(cmd: &SimpleCommand, cx: &Context, depth: usize, out: &mut Analysis) {
    for r in &cmd.redirects {
        redirection(r, &cmd.cwd, cx, out);
    }
    if !cmd.assignments.is_empty() {
        variables::assignments(&cmd.assignments, &mut Sink { cx, cwd: &cmd.cwd, out }, depth);
        what_it_starts(cx, out);
    }
    run(&cmd.argv, &cmd.cwd, cx, depth, out);
}

/// Effects of starting `argv` in `cwd`.
fn run(argv: &[Arg], cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis) {
    let Some(first) = argv.first() else { return };
    let Some(name) = first.literal() else {
        let mut sink = Sink { cx, cwd, out };
        sink.opaque(format!("the program name `{}` is computed when the command runs", first.text()));
        return;
    };
    let base = paths::file_name(name);
    if !BUILTINS.contains(&name) && !(matches!(name, "command" | "exec" | "time" | "eval" | "source" | ".")) {
        execute(name, cwd, cx, out);
    }
    // A program named by a path may be anything (`./cat` is not cat).
    let known = !name.contains('/') && (BUILTINS.contains(&name) || program(base).is_some_and(|p| !p.runs_code()) || runs_no_code(base, &argv[1..]));
    out.runs_code |= !known;
    let words: Vec<&str> = argv[1..].iter().map(Arg::text).collect();
    if words.iter().any(|w| table::DAEMON_SOCKETS.iter().any(|s| w.contains(s))) {
        let reason = format!("`{base}` talks to a daemon through its socket, and the daemon acts outside this process tree");
        out.unseen.push(Unseen::Escapes { program: None, reason });
    }
    if table::hands_out_secret(base, &words) {
        let reason = format!("`{base}` hands out a secret a daemon or keychain keeps, outside any file capability");
        out.unseen.push(Unseen::Escapes { program: None, reason });
    }
    if !known && program(base).is_some() || (name.contains('/') && !project_program(name, cwd, cx)) {
        // Code its text does not show runs in this folder, and may fill it.
        for d in cwd.0.iter().flatten() {
            out.unseen.push(Unseen::Named { program: name.to_string(), path: d.clone() });
        }
    }
    out.runs_git |= name == "git";
    let args = &argv[1..];
    if name == "trap" || (name == "builtin" && args.first().map(Arg::text) == Some("trap")) {
        trap(if name == "trap" { args } else { &args[1..] }, cwd, cx, depth, out);
        return;
    }
    if BUILTINS.contains(&name) {
        builtins::builtin(name, args, &mut Sink { cx, cwd, out });
    }
    if name == "builtin" {
        // `builtin NAME …` runs the shell's own NAME (`builtin exec cat f`).
        run(args, cwd, cx, depth, out);
        return;
    }
    let Some(prog) = program(base) else {
        if !BUILTINS.contains(&name) {
            let mut sink = Sink { cx, cwd, out };
            readers::named_secrets(args.iter(), &mut sink);
            // The project's own programs (`./configure --prefix=/usr/local`)
            // run as its scripts do; any other program outside the table is
            // judged by what its words name.
            if !project_program(name, cwd, cx) {
                readers::named_paths(name, args.iter(), &mut sink);
                starts::spelled_commands(name, args, &mut sink, depth);
                what_it_starts(cx, out);
            }
        }
        return;
    };
    match prog.kind {
        Kind::Wrapper(w) => {
            wrappers::wrapper(w, prog, base, args, &mut Sink { cx, cwd, out }, depth);
            what_it_starts(cx, out);
        }
        Kind::Role(role) => {
            let s = split(args, prog.takes_value);
            let mut sink = Sink { cx, cwd, out };
            // The row says what its operands are; its options' words are
            // checked as any program's are.
            readers::named_secrets(args.iter().filter(|a| !s.operands.iter().any(|o| std::ptr::eq(*o, *a))), &mut sink);
            operands(role, base, &s, args, &mut sink, depth);
            what_it_starts(cx, sink.out);
            option_files(base, &s, &mut Sink { cx, cwd, out }, depth);
        }
    }
}

/// Judge the commands the role just read starts (see [`Started`]), each
/// folded into the line as the role said.
#[inline(never)]
fn what_it_starts(cx: &Context, out: &mut Analysis) {
    for Started { what, cwd, depth, fold } in std::mem::take(&mut out.started) {
        match (what, fold) {
            (what, Fold::SpelledBy(who)) => judged_apart(&who, what, &cwd, cx, depth, out, false),
            (what, Fold::NamedBy(who)) => judged_apart(&who, what, &cwd, cx, depth, out, true),
            (Start::Argv(argv), Fold::AsIs) => run(&argv, &cwd, cx, depth, out),
            (Start::Shell(program), _) => nested_program(&program, &mut Sink { cx, cwd: &cwd, out }, depth),
            (Start::Argv(argv), Fold::ComputedUnder(scope)) => {
                let mut inner = part_of(out);
                run(&argv, &cwd, cx, depth, &mut inner);
                starts_of(out, &inner);
                out.found.extend(std::mem::take(&mut inner.found));
                out.effects.extend(inner.effects);
                for u in inner.unseen {
                    match u {
                        Unseen::Computed { capability, reason, .. } => out.unseen.push(Unseen::Computed { capability, scope: scope.clone(), reason }),
                        other => out.unseen.push(other),
                    }
                }
            }
            (Start::Argv(argv), Fold::FromInput(scope)) => {
                let mut inner = part_of(out);
                run(&argv, &cwd, cx, depth, &mut inner);
                starts_of(out, &inner);
                for e in inner.effects {
                    if e.capability == Execute {
                        out.effects.push(e);
                    } else {
                        let reason = "xargs supplies the operands at run time".into();
                        out.unseen.push(Unseen::Computed { capability: e.capability, scope: scope.clone(), reason });
                    }
                }
                out.unseen.extend(inner.unseen);
                out.found.extend(inner.found);
            }
        }
    }
}

/// A command the line names without running it itself (spelled in the
/// words of a program outside the table, or named by a variable): judged
/// apart; if it would do more than read, or run code, the line is inline
/// code (allowed only under a full fence). `merge`: what it does counts for
/// the line too (a variable's command does run).
fn judged_apart(who: &str, what: Start, cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis, merge: bool) {
    let mut part = part_of(out);
    let text = match &what {
        Start::Argv(argv) => {
            run(argv, cwd, cx, depth, &mut part);
            argv.iter().map(Arg::text).collect::<Vec<_>>().join(" ")
        }
        Start::Shell(code) => {
            nested_program(code, &mut Sink { cx, cwd, out: &mut part }, depth);
            code.text().to_string()
        }
    };
    let changes = part.effects.iter().any(|e| !matches!(e.capability, Read | Execute));
    // A program PATH cannot find now starts nothing anyone can name.
    let hides = part.unseen.iter().any(|u| !matches!(u, Unseen::NotOnPath { .. } | Unseen::Computed { capability: Read, .. }));
    if part.runs_code || changes || hides {
        let shown: String = text.chars().take(60).collect();
        out.unseen.push(Unseen::Opaque { reason: format!("{who} (`{shown}`)") });
    }
    if merge {
        starts_of(out, &part);
        out.effects.extend(part.effects);
        out.unseen.extend(part.unseen);
        out.found.extend(part.found);
    }
}

/// What the option tables (`FILLS`, `UPDATES`, `RUNS`, `MAKES_IN`) say
/// `name`'s options do.
fn option_files(name: &str, s: &Split, sink: &mut Sink, depth: usize) {
    let of = |table: &[(&[&str], &'static [&'static str])]| -> Vec<&'static str> {
        table.iter().filter(|(names, _)| names.contains(&name)).flat_map(|(_, opts)| opts.iter().copied()).collect()
    };
    for v in s.values(&of(FILLS)) {
        sink.fill(&v);
    }
    for v in s.values(&of(UPDATES)) {
        sink.path(&v, Read);
        sink.fill(&v);
    }
    for v in s.values(&of(RUNS)) {
        nested_program(&v, sink, depth);
    }
    for v in s.values(&of(NAMES_FROM)) {
        if v.text() != "-" {
            sink.path(&v, Read);
        }
        sink.computed(Read, format!("{name} reads the files `{}` names", v.text()));
    }
    if name == "scp" {
        tools::ssh_runs_local(&s.values(&["-o"]), s.has(&["-F"]), sink);
    }
    for (names, opts, caps) in MAKES_IN {
        if names.contains(&name) {
            for v in s.values(opts) {
                sink.unknown_names_in(Some(&v), caps, &format!("{name} makes files only it names in `{}`", v.text()));
            }
        }
    }
}

/// A program named by a path inside the workspace: the project's own.
fn project_program(name: &str, cwd: &Cwd, cx: &Context) -> bool {
    let ws = paths::normalize(cx.workspace);
    name.contains('/') && cwd.0.as_ref().is_some_and(|dirs| dirs.iter().all(|d| paths::within(&paths::absolute(d, name, cx.home), &ws)))
}

/// The execute effect on the binary a name starts.
fn execute(name: &str, cwd: &Cwd, cx: &Context, out: &mut Analysis) {
    if name.contains('/') {
        let mut sink = Sink { cx, cwd, out };
        sink.path(&Arg::Literal(name.to_string()), Execute);
        return;
    }
    match cx.host.which(name) {
        Some(p) => out.effects.push(Effect { path: paths::normalize(&p), capability: Execute }),
        None => out.unseen.push(Unseen::NotOnPath { program: name.to_string() }),
    }
}

/// Each role's reader is kept out of line (`#[inline(never)]` on them):
/// inlined, this dispatch was one 69 KB wasm function, and V8's optimizing
/// compiler kept ~18 MiB in the host process after compiling it, memory that
/// every fork the host makes then copies (docs/performance.md).
fn operands(role: Role, name: &str, s: &Split, args: &[Arg], sink: &mut Sink, depth: usize) {
    match role {
        Role::Each(_) if name == "file" && s.short('C') => readers::file_compile(sink),
        Role::Each(caps) => readers::each(name, caps, s, sink),
        Role::ListOrCwd => readers::list_or_cwd(s, sink),
        Role::Shred => writers::shred(s, sink),
        Role::CreateOrWrite => writers::creates_or_writes(name, s, sink),
        Role::WriteAfterFirst => writers::write_after_first(name, s, sink),
        Role::CreateFirst => writers::create_first(s, sink),
        Role::ReadAfterFirst => readers::read_after_first(name, s, args, sink),
        Role::Jq => readers::jq(s, args, sink),
        Role::Sort => readers::sort(s, sink),
        Role::InOut => readers::in_out(s, sink),
        Role::Copy | Role::Move | Role::Link => transfer::transfer(role, name, s, sink),
        Role::Sed => editors::sed(name, s, sink),
        Role::Vim => editors::vim(name, s, sink),
        Role::Ed => editors::ed(name, s, sink),
        Role::Dd => writers::dd(s, sink),
        Role::Curl => fetch::curl(s, sink),
        Role::Wget => fetch::wget(s, sink),
        Role::Tar => archives::tar(s, args, sink),
        Role::Unzip => archives::unzip(s, sink),
        Role::Zip => archives::zip(s, sink),
        Role::Compress => archives::compress(name, s, sink),
        Role::Find => starts::find(args, sink, depth),
        Role::Git => git::git(args, sink),
        Role::Shell => code::shell(s, args, sink, depth),
        Role::Interpreter => code::interpreter(name, args, sink),
        Role::Opaque => readers::opaque(name, s, sink),
        Role::Yq => readers::yq(name, s, args, sink),
        Role::Split => writers::split_pieces(name, s, sink),
        Role::Mktemp => writers::mktemp(s, sink),
        Role::Patch => writers::patch(s, sink),
        Role::Xxd => writers::xxd(args, sink),
        Role::Archiver => writers::archiver(name, args, sink),
        Role::Packages => packages::package_manager(name, args, sink, depth),
        Role::Flock => starts::flock(args, sink, depth),
        Role::Script => starts::script(s, args, sink, depth),
        Role::Watch => starts::watch(args, sink, depth),
        Role::SwitchUser => starts::switch_user(name, args, sink, depth),
        Role::Hidden(why) => sink.opaque(why.to_string()),
        Role::Escapes(why) => sink.out.unseen.push(Unseen::Escapes { program: None, reason: why.to_string() }),
        Role::Daemon => daemon::client(name, args, sink),
        Role::RemoteShell => tools::remote_shell(args, sink),
        Role::SshAdd => tools::ssh_add(args, sink),
        Role::Compiler => tools::compiler(name, args, sink),
        Role::Sqlite => tools::sqlite(args, sink),
        Role::SshKeygen => tools::ssh_keygen(args, sink),
        Role::Openssl => tools::openssl(args, sink),
        Role::History => tools::history(args, sink),
        Role::Make => tools::make(args, sink),
        Role::MultiCall => wrappers::multi_call(name, args, sink, depth),
        Role::Debugger => starts::debugger(name, args, sink, depth),
        Role::Runs => starts::runs(name, args, sink, depth),
        Role::Environment => starts::environment(name, args, sink, depth),
        Role::Gio => tools::gio(args, sink, depth),
        Role::Convert => writers::convert(name, s, sink),
        Role::EscapesUnless(why, asks) => {
            if s.operands.first().is_some_and(|w| !asks.contains(&w.text())) {
                sink.out.unseen.push(Unseen::Escapes { program: None, reason: why.to_string() });
            }
        }
        Role::EscapesWith(why, words) => {
            if args.iter().any(|a| words.contains(&a.text())) {
                sink.out.unseen.push(Unseen::Escapes { program: None, reason: why.to_string() });
            }
        }
        Role::Signals => builtins::signals(name, args, sink),
    }
}

/// `trap ACTION SIGNAL…`: the action is a shell program run later, in this
/// shell; it is read like `bash -c`.
fn trap(args: &[Arg], cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis) {
    let mut sink = Sink { cx, cwd, out };
    let args = match args.first().map(Arg::text) {
        Some("--") => &args[1..],
        _ => args,
    };
    match args {
        // `trap`, `trap -l`, `trap -p …`, `trap - SIG` (reset), `trap SIG` (reset)
        [] | [_] => {}
        [first, ..] if matches!(first.literal(), Some(t) if t.starts_with('-')) => {}
        [action, signals @ ..] => {
            // These run before every command, on every return, on every
            // failure: in whatever folder the shell is then.
            if signals.iter().any(|s| matches!(s.text().trim_start_matches("SIG"), "DEBUG" | "RETURN" | "ERR")) {
                sink.opaque("a DEBUG, RETURN or ERR trap runs its action around the commands that follow, wherever they run".into());
            }
            nested_program(action, &mut sink, depth)
        }
    }
}

/// A shell program given as a word (`bash -c WORD`, `trap WORD …`): read
/// and judged like the line itself when it is literal, opaque otherwise.
fn nested_program(program: &Arg, sink: &mut Sink, depth: usize) {
    match program {
        Arg::Literal(code) if depth < MAX_SHELL_DEPTH => {
            let Some(dirs) = sink.dirs().cloned() else {
                sink.opaque("a shell program run from a directory only the shell knows".into());
                return;
            };
            for d in dirs {
                match parse::parse(code, &d, sink.cx.home, sink.cx.host) {
                    Ok(items) => {
                        let inner_cx = Context { cwd: &d, ..*sink.cx };
                        let mut a = part_of(sink.out);
                        analyse_into(&items, &inner_cx, depth + 1, &mut a);
                        starts_of(sink.out, &a);
                        sink.out.effects.extend(a.effects);
                        sink.out.unseen.extend(a.unseen);
                        sink.out.found.extend(a.found);
                    }
                    Err(e) => sink.opaque(format!("the inner shell program cannot be read ({})", e.0)),
                }
            }
        }
        Arg::Literal(_) => sink.opaque("shell programs nested this deep are not read".into()),
        other => sink.opaque(format!("the shell program `{}` is computed when the command runs", other.text())),
    }
}
