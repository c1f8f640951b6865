//! Programs that start a command their arguments spell out: after a lock
//! file (`flock`), as a string for a shell (`script -c`, `watch`, `su -c`),
//! as words after a user (`runuser -u`), or for each match (`find -exec`). Each is followed to what it
//! runs; what cannot be followed is opaque, never "no file".

use super::sink::{Fold, Sink, Unseen};
use super::split::Split;
use crate::host::PathKind;
use crate::paths;
use crate::policy::capability::Capability::*;
use crate::shell::parse::{Arg, Cwd};

/// Options up to the first operand, as getopt reads them with `+` (these
/// programs stop at their first operand): `(option, value)` and where the
/// operands start. `assignments`: `env`'s `NAME=value` words and lone `-`
/// are passed over as options are. A computed word may be an option or the
/// program: either way the options end there (the program is computed).
pub(super) fn leading_options(args: &[Arg], takes_value: &[&str], assignments: bool) -> (Vec<(String, Option<Arg>)>, usize) {
    let mut opts = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        if t == "--" {
            return (opts, i + 1);
        }
        if assignments && (t == "-" || (t.contains('=') && !t.starts_with('-'))) {
            i += 1;
            continue;
        }
        if !t.starts_with('-') || t == "-" || !matches!(a, Arg::Literal(_)) {
            break;
        }
        i += 1;
        if let Some((o, v)) = t.split_once('=').filter(|_| t.starts_with("--")) {
            opts.push((o.to_string(), Some(Arg::Literal(v.to_string()))));
            continue;
        }
        if t.starts_with("--") || takes_value.contains(&t) {
            let value = if takes_value.contains(&t) { args.get(i).cloned() } else { None };
            i += usize::from(value.is_some());
            opts.push((t.to_string(), value));
            continue;
        }
        for (at, letter) in t.char_indices().skip(1) {
            let flag = format!("-{letter}");
            if takes_value.contains(&flag.as_str()) {
                let attached = &t[at + letter.len_utf8()..];
                let value = if attached.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(Arg::Literal(attached.to_string()))
                };
                opts.push((flag, value));
                break;
            }
            opts.push((flag, None));
        }
    }
    (opts, i.min(args.len()))
}

fn value_of(opts: &[(String, Option<Arg>)], names: &[&str]) -> Option<Arg> {
    opts.iter().rev().find(|(o, _)| names.contains(&o.as_str())).and_then(|(_, v)| v.clone())
}

/// `flock [opts] FILE cmd…`, `flock [opts] FILE -c CMD`, `flock [opts] FD`.
/// The lock file is opened for reading, and made when it is missing.
#[inline(never)]
pub(super) fn flock(args: &[Arg], sink: &mut Sink, depth: usize) {
    let (_, i) = leading_options(args, &["-w", "-E", "--timeout", "--wait", "--conflict-exit-code"], false);
    let Some(target) = args.get(i) else { return };
    let rest = &args[i + 1..];
    if rest.is_empty() && target.literal().is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit())) {
        return; // a descriptor the shell opened
    }
    sink.path_with(target, |_, kind| if kind == PathKind::Missing { Create } else { Read });
    match rest.first().map(Arg::text) {
        Some("-c" | "--command") => {
            if let Some(program) = rest.get(1) {
                sink.shell_program(program, depth);
            }
        }
        Some(_) => sink.start(rest, depth),
        None => {}
    }
}

/// `script [opts] [FILE]`: the session is logged to FILE (`typescript` when
/// no log is named), and `-c CMD` runs through the shell; without it an
/// interactive shell reads its commands from standard input.
#[inline(never)]
pub(super) fn script(s: &Split, args: &[Arg], sink: &mut Sink, depth: usize) {
    let logs = s.values(&["-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing", "--timing"]);
    for log in &logs {
        sink.fill(log);
    }
    // -t[FILE]: the timing log, attached only.
    for a in args {
        if let Some(f) = a.literal().and_then(|t| t.strip_prefix("-t")).filter(|f| !f.is_empty() && !a.text().starts_with("--")) {
            sink.fill(&Arg::Literal(f.to_string()));
        }
    }
    match s.operands.first() {
        Some(file) => sink.fill(file),
        None if !s.has(&["-O", "--log-out", "-B", "--log-io"]) => sink.fill(&Arg::Literal("typescript".into())),
        None => {}
    }
    match s.values(&["-c", "--command"]).first() {
        Some(program) => sink.shell_program(program, depth),
        None => sink.opaque("script starts an interactive shell that reads its commands from standard input".into()),
    }
}

/// `watch [opts] CMD…`: the words are joined with spaces and run by
/// `sh -c`, or exec'd as they are with `-x`.
#[inline(never)]
pub(super) fn watch(args: &[Arg], sink: &mut Sink, depth: usize) {
    let (opts, i) = leading_options(args, &["-n", "-q", "--interval", "--equexit"], false);
    let rest = &args[i..];
    if rest.is_empty() {
        return;
    }
    if opts.iter().any(|(o, _)| o == "-x" || o == "--exec") {
        sink.start(rest, depth);
        return;
    }
    let words: Option<Vec<&str>> = rest.iter().map(Arg::literal).collect();
    match words {
        Some(words) => sink.shell_program(&Arg::Literal(words.join(" ")), depth),
        None => sink.opaque("watch joins a computed command line and runs it with sh -c".into()),
    }
}

/// `su [opts] [-] [USER [ARGS…]]` and `runuser` alike: `-c CMD` (or ARGS
/// `-c CMD`, which the user's shell receives) runs through that shell;
/// `runuser -u USER CMD…` runs CMD itself. A login (`-`, `-l`) starts in the
/// user's home, which the line does not name; `~` is that user's home too.
/// With no command, the shell reads its commands from standard input.
#[inline(never)]
pub(super) fn switch_user(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    let values = &["-c", "-g", "-G", "-s", "-w", "-u", "--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment", "--user"];
    let (opts, mut i) = leading_options(args, values, false);
    let mut login = opts.iter().any(|(o, _)| matches!(o.as_str(), "-l" | "--login"));
    if args.get(i).map(Arg::text) == Some("-") {
        login = true;
        i += 1;
    }
    let cwd = if login { Cwd(None) } else { sink.cwd.clone() };
    let mut inner = Sink { cx: sink.cx, cwd: &cwd, out: sink.out };
    if name == "runuser" && value_of(&opts, &["-u", "--user"]).is_some() {
        let rest = &args[i..];
        if !rest.is_empty() {
            inner.start(rest, depth);
        } else {
            inner.opaque("runuser -u without a command starts the user's shell".into());
        }
        return;
    }
    // Past the user, the words go to the user's shell.
    let after_user = args.get(i + 1..).unwrap_or(&[]);
    let program = value_of(&opts, &["-c", "--command", "--session-command"]).or_else(|| match after_user.first().map(Arg::text) {
        Some("-c" | "--command") => after_user.get(1).cloned(),
        _ => None,
    });
    match program {
        Some(p) if p.text().contains('~') => inner.opaque(format!("{name} runs `{}` as another user, whose `~` the line does not name", p.text())),
        Some(p) => inner.shell_program(&p, depth),
        None if after_user.is_empty() => inner.opaque(format!("{name} starts a shell that reads its commands from standard input")),
        None => inner.opaque(format!("{name} passes these words to the user's shell")),
    }
}

/// `find START… EXPR`: the start points read, `-delete` and `-exec`'s
/// command computed under them, `-fprint` files filled.
#[inline(never)]
pub(super) fn find(args: &[Arg], sink: &mut Sink, depth: usize) {
    // Start points come before the first expression word.
    let mut starts = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text();
        if t.starts_with('-') || t == "(" || t == "!" {
            // -D LIST and -O<level> come before the starting points too.
            if t == "-D" && starts.is_empty() {
                i += 2;
                continue;
            }
            if (matches!(t, "-H" | "-L" | "-P") || (t.starts_with("-O") && t.len() > 2)) && starts.is_empty() {
                i += 1;
                continue;
            }
            break;
        }
        starts.push(&args[i]);
        i += 1;
    }
    let default_start = Arg::Literal(".".into());
    if starts.is_empty() {
        starts.push(&default_start);
    }
    for s in &starts {
        sink.path(s, Read);
    }
    let scope_of = |sink: &Sink| -> Vec<String> {
        let mut scope = Vec::new();
        for s in &starts {
            if let (Some(t), Some(ds)) = (s.literal(), sink.dirs()) {
                for d in ds {
                    scope.push(paths::absolute(d, t, sink.cx.home));
                }
            }
        }
        scope
    };
    while i < args.len() {
        let t = args[i].text();
        i += 1;
        match t {
            "-delete" => {
                let scope = scope_of(sink);
                sink.out.unseen.push(Unseen::Computed { capability: Delete, scope, reason: "find -delete removes what it matches".into() });
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(f) = args.get(i) {
                    sink.fill(f);
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[i..].iter().position(|a| matches!(a.text(), ";" | "+")).map(|p| i + p).unwrap_or(args.len());
                // `{}` stands for each match: the command's path effects are computed.
                let argv: Vec<Arg> = args[i..end]
                    .iter()
                    .map(|a| if a.text().contains("{}") { Arg::Computed { text: a.text().to_string() } } else { a.clone() })
                    .collect();
                let scope = scope_of(sink);
                // -execdir and -okdir run in each match's folder, not here:
                // the command's relative paths lie under the start points.
                let cwd = if t.ends_with("dir") { Cwd(None) } else { sink.cwd.clone() };
                sink.start_in(cwd, &argv, depth, Fold::ComputedUnder(scope));
                i = end + 1;
            }
            _ => {}
        }
    }
}

/// Programs outside the table whose words spell another program's command
/// line (`mywrap rm -rf ~/x`, `mywrap -- rm …`, `mywrap --exec 'rm …'`,
/// `mywrap --retries 3 rm …`): a word naming a program of the table (or
/// holding a whole line that starts with one) where a wrapper's command
/// would start — the first operand, after `--`, after an option that takes
/// a command, or after a value (a number, a time, a path, `K=V`) — begins
/// a command judged apart (see `Fold::SpelledBy`). A subcommand's word
/// (`gh run watch 1`) does not.
#[inline(never)]
pub(super) fn spelled_commands(program: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    const TAKES_COMMAND: &[&str] = &["-c", "-e", "-x", "--exec", "--run", "--command", "--cmd", "--shell-command", "-exec", "--"];
    let known = |word: &str| !word.starts_with('-') && super::table::program(paths::file_name(word)).is_some();
    let value_like = |word: &str| {
        word.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '/' | '.' | '~' | '@' | '+'))
            || word.contains(['=', ' ', ':'])
    };
    let who = format!("`{program}` is outside the table and its words spell a command it may run");
    let mut found = 0;
    let mut operands = 0;
    for (i, a) in args.iter().enumerate() {
        let word = a.text();
        let before = i.checked_sub(1).map(|j| args[j].text());
        let may_start = operands == 0 || before.is_some_and(|b| TAKES_COMMAND.contains(&b) || (!b.starts_with('-') && value_like(b)));
        if !word.starts_with('-') {
            operands += 1;
        }
        let Some(word) = a.literal().filter(|_| may_start && found < 4) else { continue };
        if known(word) {
            let cwd = sink.cwd.clone();
            sink.start_in(cwd, &args[i..], depth, Fold::SpelledBy(who.clone()));
            found += 1;
        } else if word.contains(char::is_whitespace) && word.split_whitespace().next().is_some_and(known) {
            sink.shell_program_as(a, depth, Fold::SpelledBy(who.clone()));
            found += 1;
        }
    }
}

/// `gdb [--args CMD…]`, `lldb [-- CMD…]`: the debugger runs the commands of
/// its options (`-ex`, `-x`, `-o`) and init files, which the line does not
/// show; the command it is given is judged as itself.
#[inline(never)]
pub(super) fn debugger(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    sink.opaque(format!("{name} runs the commands of its options and init files, which the line does not show"));
    let from = match name {
        "lldb" => args.iter().position(|a| a.text() == "--"),
        _ => args.iter().position(|a| a.text() == "--args"),
    };
    if let Some(at) = from {
        sink.start(&args[at + 1..], depth);
    }
}

/// Programs that run shell commands their words spell: `hyperfine`,
/// `watchexec`, `nodemon`, `entr`. Each command is judged as the line is.
#[inline(never)]
pub(super) fn runs(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    match name {
        "hyperfine" => hyperfine(args, sink, depth),
        "watchexec" => watchexec(args, sink, depth),
        "nodemon" => nodemon(args, sink, depth),
        "perf" => perf(args, sink, depth),
        _ => entr(args, sink, depth),
    }
}

/// `hyperfine [opts] CMD…`: every operand and `--prepare`, `--setup`,
/// `--cleanup`, `--conclude` value is a shell command (split into words with
/// `-N`/`--shell=none`); `--export-*` files are filled; another `--shell`
/// runs them through a program the line names.
fn hyperfine(args: &[Arg], sink: &mut Sink, depth: usize) {
    const COMMANDS: &[&str] = &["-p", "--prepare", "-s", "--setup", "-c", "--cleanup", "--conclude"];
    const FILES: &[&str] = &["--export-json", "--export-csv", "--export-markdown", "--export-asciidoc", "--export-orgmode"];
    const VALUES: &[&str] = &["-S", "--shell", "-w", "--warmup", "-r", "--runs", "-m", "--min-runs", "-M", "--max-runs", "-n", "--command-name", "-o", "--output", "-u", "--time-unit", "--style", "--sort", "-D", "--parameter-step-size", "--input", "--reference"];
    let s = super::split::split(args, &[COMMANDS, FILES, VALUES, &["-L", "--parameter-list", "-P", "--parameter-scan"]].concat());
    let no_shell = s.short('N') || s.values(&["-S", "--shell"]).iter().any(|v| v.text() == "none");
    if s.values(&["-S", "--shell"]).iter().any(|v| !matches!(v.text(), "none" | "sh" | "bash" | "zsh" | "dash")) {
        sink.opaque("hyperfine runs its commands through a shell the line names".into());
    }
    for f in s.values(FILES) {
        sink.fill(&f);
    }
    for f in s.values(&["--input"]) {
        sink.path(&f, Read);
    }
    let mut commands: Vec<Arg> = s.values(COMMANDS);
    // `-L VAR VALUES` / `-P VAR MIN MAX`: their extra words are no commands.
    let extra: usize = s.options.iter().map(|(o, _, _)| match o.as_str() { "-L" | "--parameter-list" => 1, "-P" | "--parameter-scan" => 2, _ => 0 }).sum();
    commands.extend(s.operands.iter().skip(extra).map(|a| (*a).clone()));
    for c in commands {
        match (no_shell, c.literal()) {
            (true, Some(t)) => sink.start(&t.split_whitespace().map(|w| Arg::Literal(w.to_string())).collect::<Vec<_>>(), depth),
            _ => sink.shell_program(&c, depth),
        }
    }
}

/// `watchexec [opts] [--] CMD…`: the words joined and run by the shell
/// (exec'd as words with `-n`/`--shell=none`), in `--workdir` when given.
fn watchexec(args: &[Arg], sink: &mut Sink, depth: usize) {
    const VALUES: &[&str] = &[
        "-w", "--watch", "-W", "--watch-non-recursive", "-F", "--watch-file", "-e", "--exts", "-f", "--filter", "--filter-file", "-j", "--filter-prog",
        "-i", "--ignore", "--ignore-file", "-s", "--signal", "--stop-signal", "--stop-timeout", "-d", "--debounce", "--delay-run", "--poll", "--shell",
        "-E", "--env", "--project-origin", "--workdir", "--on-busy-update", "-o", "--emit-events-to", "--log-file", "--wrap-process", "--color",
    ];
    let (opts, i) = leading_options(args, VALUES, false);
    let value = |n: &[&str]| opts.iter().rev().find(|(o, _)| n.contains(&o.as_str())).and_then(|(_, v)| v.clone());
    if value(&["-j", "--filter-prog"]).is_some() {
        sink.opaque("watchexec runs a filter program the line names".into());
    }
    let shell = value(&["--shell"]);
    if shell.as_ref().is_some_and(|v| !matches!(v.text(), "none" | "sh" | "bash" | "zsh" | "dash")) {
        sink.opaque("watchexec runs its command through a shell the line names".into());
    }
    let cwd = match value(&["--workdir"]) {
        Some(Arg::Literal(d)) => sink.chdir(&d),
        Some(_) => Cwd(None),
        None => sink.cwd.clone(),
    };
    let rest = &args[i..];
    let mut inner = Sink { cx: sink.cx, cwd: &cwd, out: &mut *sink.out };
    if opts.iter().any(|(o, _)| o == "-n") || shell.as_ref().is_some_and(|v| v.text() == "none") {
        inner.start(rest, depth);
        return;
    }
    match rest.iter().map(Arg::literal).collect::<Option<Vec<&str>>>() {
        Some(words) if !words.is_empty() => inner.shell_program(&Arg::Literal(words.join(" ")), depth),
        Some(_) => {}
        None => inner.opaque("watchexec joins a computed command line and runs it with the shell".into()),
    }
}

/// `nodemon [opts] [SCRIPT [ARGS…]]`: `--exec CMD` runs through the shell,
/// else `node SCRIPT`; its config (`nodemon.json`, `--config`, the
/// package's `nodemonConfig`) may name commands and event hooks the line
/// does not show.
fn nodemon(args: &[Arg], sink: &mut Sink, depth: usize) {
    const VALUES: &[&str] = &["-x", "--exec", "-w", "--watch", "-e", "--ext", "-i", "--ignore", "-d", "--delay", "--signal", "--config", "-C", "--cwd"];
    let s = super::split::split(args, VALUES);
    sink.opaque("nodemon runs the commands and event hooks of its config, which the line does not show".into());
    match s.values(&["-x", "--exec"]).into_iter().next() {
        Some(exec) => sink.shell_program(&exec, depth),
        None if !s.operands.is_empty() => {
            let mut argv = vec![Arg::Literal("node".into())];
            argv.extend(s.operands.iter().map(|a| (*a).clone()));
            sink.start(&argv, depth);
        }
        None => {}
    }
}

/// `perf stat|record|trace|mem|c2c|kmem|lock|sched record [opts] [--] CMD…`:
/// the command runs under the profiler; `-o FILE` is written.
fn perf(args: &[Arg], sink: &mut Sink, depth: usize) {
    const VALUES: &[&str] = &["-e", "--event", "-p", "--pid", "-t", "--tid", "-o", "--output", "-x", "-r", "--repeat", "-C", "--cpu", "-G", "--cgroup", "-I", "-F", "--freq", "-c", "--count", "--call-graph", "-u", "--uid", "-m", "--mmap-pages", "--filter"];
    let Some(sub) = args.first().map(Arg::text) else { return };
    let rest = &args[1..];
    let (opts, i) = leading_options(rest, VALUES, false);
    for (o, v) in &opts {
        if let ("-o" | "--output", Some(f)) = (o.as_str(), v) {
            sink.fill(f);
        }
    }
    let runs = matches!(sub, "stat" | "record" | "trace" | "mem" | "c2c" | "kmem" | "lock" | "sched" | "kvm");
    if runs && opts.iter().all(|(o, _)| !matches!(o.as_str(), "-p" | "--pid" | "-t" | "--tid")) {
        let from = usize::from(sub == "sched" && rest.get(i).map(Arg::text) == Some("record"));
        sink.start(&rest[(i + from).min(rest.len())..], depth);
    }
}

/// `entr [-acdnprsz] UTILITY [ARGS…]`: UTILITY runs on every change (a
/// shell command with `-s`); `/_` stands for the file that changed.
fn entr(args: &[Arg], sink: &mut Sink, depth: usize) {
    let (opts, i) = leading_options(args, &[], false);
    let rest: Vec<Arg> = args[i..].iter().map(|a| if a.text() == "/_" { Arg::Computed { text: "/_".into() } } else { a.clone() }).collect();
    if rest.is_empty() {
        return;
    }
    if opts.iter().any(|(o, _)| o == "-s") {
        sink.shell_program(&rest[0], depth);
    } else {
        sink.start(&rest, depth);
    }
}

/// Programs that set an environment from files the line does not show
/// (an `.envrc`, a tool's config, a Nix expression, a virtualenv whose
/// PATH decides what starts) and then run a command: opaque, and the
/// command judged as itself. Trusting an `.envrc` hands it to every later
/// shell in that folder, outside any fence.
#[inline(never)]
pub(super) fn environment(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    let words: Vec<&str> = args.iter().map(Arg::text).collect();
    let after = |at: usize| -> &[Arg] { args.get(at..).unwrap_or(&[]) };
    let dashes = words.iter().position(|w| *w == "--");
    let sub = words.iter().position(|w| !w.starts_with('-'));
    let why = format!("{name} sets the environment from files the line does not show (an .envrc, its config, a Nix expression, a virtualenv's PATH)");
    match (name, sub.map(|i| words[i])) {
        ("direnv", Some("allow" | "permit" | "grant")) | ("mise" | "rtx", Some("trust")) => {
            sink.out.unseen.push(Unseen::Escapes { program: None, reason: format!("{name} trusts a file every later shell in that folder runs, outside this process tree and its fence") });
        }
        ("direnv", Some("exec")) => {
            sink.opaque(why);
            sink.start(after(sub.unwrap_or(0) + 2), depth);
        }
        ("direnv", _) => {}
        ("nix-shell", _) => {
            sink.opaque(why);
            let s = super::split::split(args, &["--run", "--command", "-p", "--packages", "-A", "--attr", "-I", "--arg", "--argstr"]);
            for c in s.values(&["--run", "--command"]) {
                sink.shell_program(&c, depth);
            }
        }
        ("nix", Some("search" | "eval" | "flake" | "path-info" | "show-config" | "why-depends" | "log" | "hash")) | (_, Some("--version" | "version" | "--help" | "help")) => {}
        // `envdir DIR CMD`, `dotenv [-e F] -- CMD`, `chpst [opts] CMD`.
        ("envdir" | "dotenv" | "chpst", _) => {
            sink.opaque(why);
            let from = match (name, dashes) {
                (_, Some(d)) => d + 1,
                ("envdir", _) => 1.min(args.len()),
                _ => leading_options(args, &["-e", "-v", "-u", "-U", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t", "-/"], false).1,
            };
            sink.start(after(from), depth);
        }
        (_, Some(_)) => {
            sink.opaque(why);
            // `mise exec TOOL@V -- CMD`, `nix develop -c CMD`, `pipenv run CMD`.
            let from = dashes.map(|d| d + 1).or_else(|| words.iter().position(|w| matches!(*w, "-c" | "--command")).map(|c| c + 1)).or(sub.map(|s| s + 1));
            if let Some(from) = from.filter(|_| matches!(words[sub.unwrap_or(0)], "exec" | "x" | "run" | "develop" | "shell")) {
                sink.start(after(from), depth);
            }
        }
        (_, None) => {}
    }
}
