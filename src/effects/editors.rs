//! Editors run by a script: `sed`, the vim family and `ed`. In-place
//! edits replace the file through a temp file beside it (program-bound
//! create and delete); scripts that open files or run code are opaque.

use super::sink::{Sink, Unseen};
use super::split::{option_arg, Split};
use crate::paths;
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;

/// `sed`: files read, and edited in place with `-i`; scripts that open files are opaque.
#[inline(never)]
pub(super) fn sed(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if !sed_scripts(s).iter().all(|script| plain_sed(script)) {
        sink.opaque("the sed script reads, writes or runs something itself (r, R, w, W, e, or the s command's w or e flag)".into());
    }
    if s.has(&["-f", "--file"]) {
        sink.opaque("sed reads its script from a file the line does not show, and it may write (w) or run (e) files".into());
    }
    let in_place = s.options.iter().any(|(o, _, _)| o == "-i" || o.starts_with("-i") && !o.starts_with("--") || o == "--in-place")
        || s.options.iter().any(|(o, _, _)| o.starts_with('-') && !o.starts_with("--") && o.contains('i') && o.len() <= 4 && o.chars().skip(1).all(|c| "niEsrz".contains(c)));
    let script_given = s.has(&["-e", "--expression", "-f", "--file"]);
    for v in s.values(&["-f", "--file"]) {
        {
            sink.path(&option_arg("--file", &v), Read);
        }
    }
    for op in ops.iter().skip(if script_given { 0 } else { 1 }) {
        sink.path(op, Read);
        if in_place {
            sink.path(op, Write);
            replaces_beside(sink, name, op);
        }
    }
}

/// The vim family: operands read and saved by renaming beside them (program-bound create and delete).
#[inline(never)]
pub(super) fn vim(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    // Script files and a vimrc are read; `-w`/`-W` record keys to a file.
    // (`-s` is taken as the flag: silent in Ex mode, `ex -sc …`.)
    for v in s.values(&["-S", "-u", "-U"]) {
        if let Some(p) = v.literal().filter(|p| !matches!(*p, "NONE" | "NORC" | "DEFAULTS")) {
            sink.path(&Arg::Literal(p.to_string()), Read);
        }
    }
    for v in s.values(&["-w", "-W"]) {
        sink.fill(&v);
    }
    for v in s.values(&["-i"]).iter().filter(|v| v.text() != "NONE") {
        sink.fill(v);
    }
    vim_commands(name, s, sink);
    let read_only = name == "view" || s.has(&["-R", "-M"]);
    // `+cmd` operands are commands, not files.
    for op in ops.iter().filter(|op| !op.text().starts_with('+')) {
        sink.path(op, Read);
        if !read_only {
            sink.fill(op);
        }
        let why = format!("{name} keeps swap and backup files beside the file and saves by renaming");
        sink.renames_beside(name, op, &why);
    }
}

/// `ed FILE`: read and written back in place; its commands come from stdin.
#[inline(never)]
pub(super) fn ed(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    for op in ops.iter().filter(|op| !op.text().starts_with('!')) {
        sink.path(op, Read);
        sink.fill(op);
    }
    sink.opaque(format!("{name} reads its commands from standard input, and they may write (w FILE) or run (!cmd) anything"));
}

/// sed's temp file beside `file`, renamed over it: create and delete in
/// its folder. A plain script touches nothing else, so this is granted for
/// the call when the line hides nothing.
pub(super) fn replaces_beside(sink: &mut Sink, program: &str, file: &Arg) {
    let Arg::Literal(f) = file else { return };
    let dir = match f.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => f[..i].to_string(),
        None => ".".to_string(),
    };
    let scope: Vec<String> = sink.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, &dir, sink.cx.home)).collect()).unwrap_or_default();
    let reason = format!("{program} edits in place: its temp file is renamed over the original, and a plain script touches nothing else");
    sink.out.unseen.push(Unseen::SelfGuarded { program: program.to_string(), capabilities: vec![Create, Delete], scope, reason });
}

/// The scripts a sed line runs: the `-e` values, else its first operand.
fn sed_scripts(s: &Split) -> Vec<String> {
    let mut scripts: Vec<String> = s.values(&["-e", "--expression"]).iter().map(|a| a.text().to_string()).collect();
    if scripts.is_empty() && !s.has(&["-f", "--file"]) {
        scripts.extend(s.operands.first().map(|a| a.text().to_string()));
    }
    scripts
}

/// A sed script that opens no file and runs nothing: no `r`, `R`, `w`,
/// `W`, `e` command, no `w` or `e` flag on `s`. Read command by command;
/// anything not understood is not plain.
pub(super) fn plain_sed(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Past a delimited part (`/re/`, `\cREc`'s body): the index after the closing delimiter.
    let part = |mut i: usize, delim: char| -> Option<usize> {
        while i < b.len() {
            match b[i] {
                '\\' => i += 2,
                c if c == delim => return Some(i + 1),
                '\n' if delim != '\n' => return None,
                _ => i += 1,
            }
        }
        None
    };
    while i < b.len() {
        let c = b[i];
        // Separators, blanks, and addresses (`3`, `$`, `/re/I`, `\%re%`, `1,+2`, `0~4`, `!`).
        if c.is_whitespace() || matches!(c, ';' | '}' | '{' | ',' | '+' | '~' | '!' | '$') || c.is_ascii_digit() {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let (delim, from) = if c == '/' { ('/', i + 1) } else { (b.get(i + 1).copied().unwrap_or('\n'), i + 2) };
            let Some(j) = part(from, delim) else { return false };
            i = j;
            while i < b.len() && matches!(b[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            's' | 'y' => {
                let Some(&delim) = b.get(i) else { return false };
                if delim == '\n' || delim == '\\' {
                    return false;
                }
                let Some(j) = part(i + 1, delim).and_then(|j| part(j, delim)) else { return false };
                i = j;
                while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                    if c == 'y' || !matches!(b[i], 'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9') {
                        return false;
                    }
                    i += 1;
                }
            }
            // Text to the end of the line, labels to the end of the command.
            'a' | 'i' | 'c' | '#' => i = b[i..].iter().position(|&x| x == '\n').map_or(b.len(), |p| i + p),
            ':' | 'b' | 't' | 'T' => i = b[i..].iter().position(|&x| x == '\n' || x == ';').map_or(b.len(), |p| i + p),
            'd' | 'D' | 'p' | 'P' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q' | 'Q' | 'z' | 'F' => {}
            _ => return false,
        }
    }
    true
}

/// The commands a vim run is given (`-c`, `--cmd`, `+cmd`) may write or
/// run any file (`:w FILE`, `:!cmd`, `:call system()`), and a script,
/// vimrc or key file (`-S`, `-u`, `-s`) is not shown by the line: opaque,
/// unless every command is one that names no file and runs nothing.
fn vim_commands(name: &str, s: &Split, sink: &mut Sink) {
    let plain_rc = |v: &Arg| v.literal().is_some_and(|p| matches!(p, "NONE" | "NORC" | "DEFAULTS"));
    let scripts = !s.values(&["-S"]).is_empty() || s.values(&["-u", "-U"]).iter().any(|v| !plain_rc(v));
    // `-s` is silent mode for ex (and with -e/-E); otherwise it names a file of keys.
    let keys = s.short('s') && !(name == "ex" || s.short('e') || s.short('E'));
    let mut commands: Vec<String> = s.values(&["-c", "--cmd"]).iter().map(|v| v.text().to_string()).collect();
    commands.extend(s.operands.iter().filter_map(|op| op.text().strip_prefix('+')).map(str::to_string));
    if scripts || keys || !commands.iter().all(|c| vim_command_is_plain(c)) {
        sink.opaque(format!("{name} is given commands or a script that may write or run files the line does not show"));
    }
}

/// An Ex command line (`|`-separated) that names no file and runs nothing:
/// write/quit forms without a file name, substitutions without `\=`, `g`/`v`
/// over such a command, line edits, and a few buffer options.
fn vim_command_is_plain(line: &str) -> bool {
    const OPTIONS: &[&str] = &[
        "ff", "fileformat", "et", "expandtab", "noet", "noexpandtab", "ts", "tabstop", "sw", "shiftwidth", "sts", "softtabstop", "tw", "textwidth",
        "ft", "filetype", "fenc", "fileencoding", "bomb", "nobomb", "eol", "noeol", "fixeol", "nofixeol", "fixendofline", "nofixendofline",
        "ai", "autoindent", "noai", "noautoindent", "paste", "nopaste", "ic", "ignorecase", "noic", "noignorecase", "nu", "number", "nonu", "nonumber",
    ];
    line.split('|').all(|cmd| {
        let cmd = cmd.trim().trim_start_matches(':');
        let cmd = cmd.trim_start_matches(|c: char| "%.$,;0123456789+- ".contains(c));
        if cmd.is_empty() {
            return true;
        }
        let word: String = cmd.chars().take_while(char::is_ascii_alphabetic).collect();
        let rest = cmd[word.len()..].trim_start_matches('!').trim();
        match word.as_str() {
            "w" | "write" | "wq" | "x" | "xit" | "exit" | "q" | "quit" | "qa" | "qall" | "quitall" | "wa" | "wall" | "wqa" | "wqall" | "xa" | "xall" | "up"
            | "update" | "noh" | "nohlsearch" | "d" | "delete" | "retab" | "j" | "join" | "le" | "left" | "ri" | "right" | "ce" | "center" | "y" | "yank"
            | "u" | "undo" | "red" | "redo" => rest.is_empty() || rest.bytes().all(|b| b.is_ascii_digit() || b == b' '),
            "s" | "substitute" => !rest.contains("\\="),
            "g" | "global" | "v" | "vglobal" => {
                let mut chars = rest.chars();
                let Some(delim) = chars.next().filter(|d| !d.is_alphanumeric() && *d != '\\' && *d != '"' && *d != '|') else { return false };
                let body = chars.as_str();
                let mut escaped = false;
                let end = body.char_indices().find(|&(_, c)| {
                    let hit = c == delim && !escaped;
                    escaped = c == '\\' && !escaped;
                    hit
                });
                end.is_some_and(|(at, _)| vim_command_is_plain(&body[at + delim.len_utf8()..]))
            }
            "set" | "se" | "setlocal" | "setl" => rest.split_whitespace().all(|o| {
                let (option, value) = o.split_once(['=', ':']).unwrap_or((o, ""));
                OPTIONS.contains(&option.trim_end_matches(['!', '&', '^', '+', '-'])) && !value.contains(['/', '`', '$'])
            }),
            _ => false,
        }
    })
}

/// `perl -pi -e SCRIPT FILES` (`-0pi`, `-0777 -pi`, `-i.bak -pe`…) whose
/// script is only substitutions (`s/PAT/REPL/FLAGS`) and transliterations
/// (`tr/A/B/`, `y///`), with no `e` flag (which evaluates the replacement),
/// no code blocks or interpolated expressions (`(?{…})`, `@{[…]}`,
/// `${…}`), no variable but the match's own (`$1`, `$&`): it runs nothing
/// and opens only the files the line names. The files it edits, or None.
pub(super) fn plain_perl_edit(args: &[Arg]) -> Option<Vec<Arg>> {
    let mut in_place = false;
    let mut prints = false;
    let mut scripts = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    let mut operands = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.literal()?;
        if operands || !t.starts_with('-') || t == "-" {
            operands = true;
            files.push(a.clone());
            continue;
        }
        if t == "--" {
            operands = true;
            continue;
        }
        let mut rest = &t[1..];
        while let Some(c) = rest.chars().next() {
            rest = &rest[1..];
            match c {
                'p' => prints = true,
                'l' | 'w' | 'n' => {}
                '0' => rest = rest.trim_start_matches(|d: char| d.is_ascii_digit()),
                // -i[SUFFIX]: the rest of the word names the backup.
                'i' => {
                    in_place = true;
                    if !rest.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-')) {
                        return None;
                    }
                    rest = "";
                }
                'e' | 'E' if rest.is_empty() => {
                    scripts.push(args.get(i)?.literal()?.to_string());
                    i += 1;
                }
                _ => return None,
            }
        }
    }
    (in_place && prints && !scripts.is_empty() && !files.is_empty() && scripts.iter().all(|s| plain_perl_script(s))).then_some(files)
}

fn plain_perl_script(script: &str) -> bool {
    let statements: Vec<&str> = script.split(';').map(str::trim).filter(|s| !s.is_empty()).collect();
    !statements.is_empty() && statements.iter().all(|s| plain_perl_statement(s))
}

/// One `s///`, `tr///` or `y///` with plain parts and harmless flags.
fn plain_perl_statement(s: &str) -> bool {
    let (body, parts_flags): (&str, &str) = if let Some(b) = s.strip_prefix("tr") {
        (b, "cdsr")
    } else if let Some(b) = s.strip_prefix('y').or_else(|| s.strip_prefix('s')) {
        (b, if s.starts_with('s') { "gimsxr" } else { "cdsr" })
    } else {
        return false;
    };
    let Some(delim) = body.chars().next() else { return false };
    if !"/|#,!:%~".contains(delim) {
        return false;
    }
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in body[delim.len_utf8()..].chars() {
        match c {
            _ if escaped => {
                parts.last_mut().unwrap().push('\\');
                parts.last_mut().unwrap().push(c);
                escaped = false;
            }
            '\\' => escaped = true,
            _ if c == delim => parts.push(String::new()),
            _ => parts.last_mut().unwrap().push(c),
        }
    }
    if parts.len() != 3 || escaped {
        return false;
    }
    let (pat, repl, flags) = (&parts[0], &parts[1], &parts[2]);
    let code = |p: &str| p.contains('@') || p.contains("(?{") || p.contains("(??{") || p.contains("${") || p.contains("$(") || p.contains("\\N{");
    // A `$` in the pattern anchors (end, before `)` or `|`); in the
    // replacement only the match's groups and `$&`.
    let pat_dollars_ok = pat.match_indices('$').all(|(at, _)| matches!(pat[at + 1..].chars().next(), None | Some(')' | '|')));
    let repl_dollars_ok = repl.match_indices('$').all(|(at, _)| matches!(repl[at + 1..].chars().next(), Some('0'..='9' | '&')));
    flags.chars().all(|f| parts_flags.contains(f)) && !code(pat) && !code(repl) && pat_dollars_ok && repl_dollars_ok
}
