//! The shell's own commands that change what later words run or where
//! (issue 34, family 2): an alias, `shopt -s expand_aliases`, `hash -p`,
//! `enable -f`, a `mapfile -C` callback, an exported function, a name with
//! code in its subscript, and `kill -1`, which signals every process. What
//! the line defines as a function is judged where it is called (the
//! parser walks its body there); shadowing a builtin or a program of the
//! table is inline code.

use super::sink::{Sink, Unseen};
use super::table::{program, BUILTINS};
use super::variables::holds_code_in_subscript;
use crate::shell::parse::Arg;

/// Builtins that read a word as a variable name, which bash evaluates as
/// arithmetic when it has a subscript.
const TAKE_NAMES: &[&str] =
    &["let", "declare", "typeset", "local", "readonly", "export", "read", "unset", "test", "[", "[[", "printf", "mapfile", "readarray", "getopts", "wait"];

/// Shell keywords a function may not be named after without hiding them.
const KEYWORDS: &[&str] = &["if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "in", "function", "select", "time", "coproc"];

/// `name ARGS…` for a shell builtin.
#[inline(never)]
pub(super) fn builtin(name: &str, args: &[Arg], sink: &mut Sink) {
    let words: Vec<&str> = args.iter().map(Arg::text).collect();
    let flag = |f: char| words.iter().any(|w| w.starts_with('-') && !w.starts_with("--") && w[1..].contains(f));
    let hidden = match name {
        "alias" if words.iter().any(|w| w.contains('=')) => Some("an alias makes a later word run code the line does not show".to_string()),
        "shopt" if flag('s') && words.iter().any(|w| matches!(*w, "expand_aliases" | "cdable_vars" | "extdebug")) => {
            Some("shopt turns on aliases, `cd` into variables' values or the debug trap's control of commands".into())
        }
        "hash" if flag('p') => Some("hash -p makes a name start another program".into()),
        "enable" if flag('f') || flag('n') || flag('d') => Some("enable loads or turns off a builtin, so its name starts something else".into()),
        "mapfile" | "readarray" if flag('C') => Some(format!("{name} -C runs its callback for the lines it reads")),
        "compgen" | "complete" if flag('C') || flag('F') => Some(format!("{name} runs (or registers) a command or a function to complete")),
        "bind" if flag('x') => Some("bind -x runs a command on a key".into()),
        "fc" if !flag('l') => Some("fc edits and runs commands from the history, which the line does not show".into()),
        "export" | "declare" | "typeset" | "readonly" if flag('f') && (name == "export" || flag('x')) => {
            Some("a function exported to every bash the line starts runs in place of a command there".into())
        }
        _ => None,
    };
    if let Some(why) = hidden {
        sink.opaque(why);
    }
    if TAKE_NAMES.contains(&name) && words.iter().any(|w| holds_code_in_subscript(w)) {
        sink.opaque(format!("{name} evaluates a subscript with a command substitution in it as arithmetic, which runs it"));
    }
    if name == "kill" {
        signals(name, args, sink);
    }
}

/// `kill -SIG -1` signals every process the user may signal: outside
/// this process tree, asked every time.
pub(super) fn signals(name: &str, args: &[Arg], sink: &mut Sink) {
    let words: Vec<&str> = args.iter().map(Arg::text).collect();
    if name == "kill" && signals_every_process(&words) {
        let reason = "kill -1 signals every process the user may signal, outside this process tree".to_string();
        sink.out.unseen.push(Unseen::Escapes { program: None, reason });
    }
}

/// `kill [-SIG | -s SIG | -n N] PID…` with the pid `-1`.
fn signals_every_process(words: &[&str]) -> bool {
    let mut i = 0;
    let mut pids = false;
    while let Some(w) = words.get(i) {
        i += 1;
        match *w {
            "--" => pids = true,
            "-s" | "-n" if !pids => i += 1,
            "-l" | "-L" if !pids => return false,
            "-1" if pids => return true,
            w if w.starts_with('-') && !pids => pids = true, // the signal
            _ => pids = true,
        }
    }
    false
}

/// A function the line defines under the name of a builtin, a keyword or
/// a program of the table runs where the line shows something else.
pub(super) fn defines(name: &str, sink: &mut Sink) {
    let shadows = BUILTINS.contains(&name) || KEYWORDS.contains(&name) || program(name).is_some() || name == "command_not_found_handle";
    if shadows {
        sink.opaque(format!("the line defines a function `{name}`, which runs in place of what the name shows"));
    }
}
