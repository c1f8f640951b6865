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
                let cwd = sink.cwd.clone();
                sink.start_in(cwd, &argv, depth, Fold::ComputedUnder(scope));
                i = end + 1;
            }
            _ => {}
        }
    }
}
