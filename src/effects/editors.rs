//! Editors run by a script: `sed`, the vim family and `ed`. In-place
//! edits replace the file through a temp file beside it (program-bound
//! create and delete); scripts that open files or run code are opaque.

use super::*;

/// `sed`: files read, and edited in place with `-i`; scripts that open files are opaque.
#[inline(never)]
pub(super) fn sed(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if sed_touches_files(s) {
        sink.opaque("the sed script reads, writes or runs something itself (r, w, e)".into());
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
            in_place_replace(sink, name, op);
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
        renames_beside(sink, name, op, &why);
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
