//! Wrappers: programs that start another program their words name (`sudo`,
//! `env`, `nice`, `timeout`, `xargs`…), read with their own options and
//! followed to what they start, which is judged as itself.

use super::sink::{Fold, Sink};
use super::starts;
use super::variables;
use super::table::{Program, Wrapper, FILLS};
use crate::policy::capability::Capability::*;
use crate::shell::parse::{Arg, Cwd};

/// `name ARGS…` for a wrapper row: its own options' files, where it runs
/// the command, and the command it starts.
#[inline(never)]
pub(super) fn wrapper(w: Wrapper, prog: &Program, name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    // Options end at the first word that is not one (or at `--`), read as
    // getopt reads them: `-la NAME` is `-l -a NAME`, `-uroot` is `-u root`.
    let (opts, i) = starts::leading_options(args, prog.takes_value, w == Wrapper::Env);
    let has = |names: &[&str]| opts.iter().any(|(o, _)| names.contains(&o.as_str()));
    let values = |names: &[&str]| -> Vec<Arg> { opts.iter().filter(|(o, _)| names.contains(&o.as_str())).filter_map(|(_, v)| v.clone()).collect() };
    if w == Wrapper::Command && has(&["-v", "-V"]) {
        return; // only looks the name up
    }
    let mut rest = &args[i.min(args.len())..];
    // The environment it sets: `env NAME=value …`, `sudo NAME=value cmd`.
    let mut set = if w == Wrapper::Env { variables::leading_assignments(&args[..i.min(args.len())]) } else { Vec::new() };
    if matches!(name, "sudo" | "doas") {
        let n = rest.iter().take_while(|a| !variables::leading_assignments(std::slice::from_ref(*a)).is_empty()).count();
        set.extend(variables::leading_assignments(&rest[..n]));
        rest = &rest[n..];
    }
    if !set.is_empty() {
        variables::assignments(&set, sink, depth);
    }
    // Files an option names: xargs' argument file, time's and strace's
    // output.
    if w == Wrapper::Xargs {
        for v in values(&["-a", "--arg-file"]) {
            sink.path(&v, Read);
        }
    }
    for (names, fills) in FILLS {
        if names.contains(&name) {
            for v in values(fills) {
                sink.fill(&v);
            }
        }
    }
    let cwd = where_it_runs(name, &opts, sink);
    let mut sink = Sink { cx: sink.cx, cwd: &cwd, out: &mut *sink.out };
    if let Some(v) = values(&["-S", "--split-string"]).first().filter(|_| w == Wrapper::Env) {
        // env splits the string into words and reads them as its own
        // arguments (options and assignments included). Its quotes,
        // escapes, `${VAR}` and `#` are its own syntax, and it expands no
        // `~`: only the plain case is read.
        let words = v.literal().filter(|t| !t.contains(['\\', '\'', '"', '$', '#', '~', '`']));
        let Some(words) = words else {
            sink.opaque(format!("env -S `{}` splits a command line at run time", v.text()));
            return;
        };
        let mut again: Vec<Arg> = words.split_whitespace().map(|w| Arg::Literal(w.to_string())).collect();
        again.extend(rest.iter().cloned());
        wrapper(w, prog, name, &again, &mut sink, depth);
        return;
    }
    if name == "sudoedit" || (name == "sudo" && has(&["-e", "--edit"])) {
        // sudoedit copies each file out and writes it back when the editor exits.
        for f in rest {
            sink.path(f, Read);
            sink.fill(f);
        }
        return;
    }
    match w {
        Wrapper::Timeout if !rest.is_empty() => rest = &rest[1..], // the duration
        Wrapper::Leading => {
            // chrt -p / -m and taskset -p work on a running process or only report.
            if has(&["-p", "--pid", "-m", "--max"]) {
                return;
            }
            let numeric = rest.first().and_then(Arg::literal).is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
            // runcon's CONTEXT operand is absent when options give its parts.
            if name == "taskset" || numeric || (name == "runcon" && opts.is_empty()) {
                rest = rest.get(1..).unwrap_or(&[]);
            }
        }
        Wrapper::Operand => {
            // The operand (an architecture, a time), then options again.
            rest = rest.get(1..).unwrap_or(&[]);
            let (_, j) = starts::leading_options(rest, prog.takes_value, false);
            rest = &rest[j.min(rest.len())..];
        }
        _ => {}
    }
    if rest.is_empty() {
        // sudo -s / -i and doas -s with no command start a shell that reads
        // its commands from standard input.
        if (name == "sudo" && has(&["-s", "--shell", "-i", "--login"])) || (name == "doas" && has(&["-s"])) {
            sink.opaque(format!("{name} starts a shell that reads its commands from standard input"));
        }
        return;
    }
    if w == Wrapper::Xargs {
        // The program is visible, its operands arrive on stdin: every path
        // effect it has is computed.
        let mut probe = rest.to_vec();
        probe.push(Arg::Computed { text: "<input from xargs>".into() });
        let scope = cwd.0.clone().unwrap_or_default();
        sink.start_in(cwd.clone(), &probe, depth, Fold::FromInput(scope));
        return;
    }
    sink.start(rest, depth);
}

/// Where the command runs: env -C, sudo -D; sudo -i starts in the target
/// user's home, which the line does not name.
fn where_it_runs(name: &str, opts: &[(String, Option<Arg>)], sink: &mut Sink) -> Cwd {
    let mut cwd = sink.cwd.clone();
    for (o, v) in opts {
        let changes = match (name, o.as_str()) {
            ("env", "-C" | "--chdir") | ("sudo", "-D" | "--chdir") => true,
            ("sudo", "-i" | "--login") => {
                cwd = Cwd(None);
                false
            }
            _ => false,
        };
        if changes {
            cwd = match v.as_ref().and_then(Arg::literal) {
                Some(d) => Sink { cx: sink.cx, cwd: &cwd, out: &mut *sink.out }.chdir(d),
                None => Cwd(None),
            };
        }
    }
    cwd
}

/// A multi-call binary asked to be one of its programs: `busybox [--]
/// APPLET …`, `toybox APPLET …`, `coreutils --coreutils-prog=NAME …`;
/// `busybox --install [-s] [DIR]` makes a link for every applet in DIR.
#[inline(never)]
pub(super) fn multi_call(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(first) = args.first() else { return };
    match first {
        Arg::Literal(t) if t.starts_with("--coreutils-prog=") => {
            let mut argv = vec![Arg::Literal(t["--coreutils-prog=".len()..].to_string())];
            argv.extend(args[1..].iter().cloned());
            sink.start(&argv, depth);
        }
        Arg::Literal(t) if t == "--install" => {
            let dir = args[1..].iter().find(|a| !a.text().starts_with('-')).cloned().unwrap_or(Arg::Literal("/bin".into()));
            sink.unknown_names_in(Some(&dir), &[Create], &format!("{name} --install makes a link for each of its programs"));
        }
        Arg::Literal(t) if t == "--" => sink.start(&args[1..], depth),
        Arg::Literal(t) if t.starts_with('-') => {} // --help, --list
        Arg::Literal(_) => sink.start(args, depth),
        _ => sink.opaque(format!("{name} is asked to be a program the line computes")),
    }
}
