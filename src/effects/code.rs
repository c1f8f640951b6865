//! Programs that run code: shells (`bash script.sh`, `bash -c WORD`,
//! whose literal program is read like the line itself) and interpreters,
//! whose inline code (`python3 -c`, `node -e`, `-m MODULE`) is opaque and
//! whose script is read, not executed.

use super::packages;
use super::sink::Sink;
use super::split::{split, Split};
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;

/// `bash [-c PROGRAM | SCRIPT]`, and the other shells.
#[inline(never)]
pub(super) fn shell(s: &Split, args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(pos) = args.iter().position(|a| a.literal().is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'))) else {
        // `bash script.sh [args]` reads the script; the kernel bounds what it does.
        match s.operands.first() {
            Some(script) => sink.path(script, Read),
            None => sink.opaque("a shell reading its commands from standard input".into()),
        }
        return;
    };
    match args.get(pos + 1) {
        Some(program) => sink.shell_program(program, depth),
        None => sink.opaque("a shell -c without a program".into()),
    }
}

/// `python -m compileall DIR…` / `py_compile FILE…`: reads the sources and
/// writes their bytecode into `__pycache__` beside them, replacing an old
/// `.pyc` through a temp file (create and delete there). The call gets
/// that `__pycache__`, the cache and not the sources' folder: a module of
/// the workspace named `compileall` would run instead of the real one, and
/// may have it too — bytecode of the workspace's own sources, which it can
/// already change. (Fenced calls write no bytecode on import: the runner
/// turns it off.)
fn compile_bytecode(python: &str, rest: &[Arg], sink: &mut Sink) {
    let s = split(rest, &["-d", "-s", "-p", "-x", "-i", "-r", "-j", "-o", "--invalidation-mode", "-e"]);
    let reason = format!("{python} -m compileall replaces bytecode in the __pycache__ folders it compiles into, through temp files");
    for op in &s.operands {
        sink.path(op, Read);
        let Arg::Literal(p) = op else { continue };
        let cache = if p.ends_with(".py") {
            match p.rfind('/') {
                Some(i) => format!("{}/__pycache__", &p[..i]),
                None => "__pycache__".to_string(),
            }
        } else {
            format!("{}/__pycache__", p.trim_end_matches('/'))
        };
        sink.regenerable(python, &[Create, Write, Delete], &cache, &reason);
    }
}

/// Python's `-m MODULE`, `-mMODULE` or a cluster of flags ending in it
/// (`-Im pytest`, `-um http.server`): the module and the words after it.
fn python_module<'a>(name: &str, t: &str, after: &'a [Arg]) -> Option<(Arg, &'a [Arg])> {
    let cluster = t.strip_prefix('-').filter(|c| name.starts_with("python") && !c.starts_with('-'))?;
    let at = cluster.find('m')?;
    // Only flags that take no value may come before it.
    if !cluster[..at].chars().all(|c| "bBdEhiIOPqRsSuvVx".contains(c)) {
        return None;
    }
    match &cluster[at + 1..] {
        "" => Some((after.first()?.clone(), &after[1..])),
        attached => Some((Arg::Literal(attached.to_string()), after)),
    }
}

/// Interpreters: inline code opaque, a script read.
#[inline(never)]
pub(super) fn interpreter(name: &str, args: &[Arg], sink: &mut Sink) {
    // `perl -pi` with a plain substitution runs nothing and opens only the
    // files it names: its temp file beside each is granted for the call.
    if name == "perl" {
        if let Some(files) = super::editors::plain_perl_edit(args) {
            for f in &files {
                sink.path(f, Read);
                sink.path(f, Write);
                super::editors::replaces_beside(sink, "perl", f);
            }
            return;
        }
    }
    let inline: &[&str] = match name {
        "node" | "nodejs" | "deno" | "bun" => &["-e", "--eval", "-p", "--print"],
        "perl" | "ruby" => &["-e", "-E"],
        "php" => &["-r"],
        "lua" => &["-e"],
        "Rscript" => &["-e"],
        "osascript" => &["-e"],
        "pwsh" | "powershell" => &["-c", "-Command", "-command", "-EncodedCommand"],
        _ => &["-c"],
    };
    // Options that take the next word as their value, per interpreter: that
    // word is not the script (it is judged as a read all the same). A word
    // starting with `-` is never taken as a value: it may be `-c`.
    let takes_value: &[&str] = match name {
        n if n.starts_with("python") => &["-W", "-X", "--check-hash-based-pycs"],
        "node" | "nodejs" | "deno" | "bun" => &["-r", "--require", "--import", "--loader", "--input-type", "-C", "--conditions"],
        "ruby" => &["-I", "-r"],
        _ => &[],
    };
    let mut value_next = false;
    for (i, a) in args.iter().enumerate() {
        let t = a.text();
        if std::mem::take(&mut value_next) && !t.starts_with('-') {
            sink.path(a, Read);
            continue;
        }
        if takes_value.contains(&t) {
            value_next = true;
            continue;
        }
        if inline.contains(&t) || (name.starts_with("python") && t.starts_with('-') && !t.starts_with("--") && t.ends_with('c') && t.len() <= 4) {
            sink.opaque(format!("`{name} {t}` runs inline code the command line does not show"));
            return;
        }
        if let Some((module, rest)) = python_module(name, t, &args[i + 1..]) {
            // A module runs code the line does not show, as `-c` does; the
            // ones this table reads like programs are read so.
            match module.literal() {
                Some("pip" | "pip3") => packages::pip(rest, sink),
                Some("venv" | "virtualenv") => {
                    for dir in split(rest, &["--prompt"]).operands {
                        sink.makes_folder(dir);
                    }
                }
                Some("compileall" | "py_compile") => compile_bytecode(name, rest, sink),
                _ => sink.opaque(format!("`{name} -m {}` runs a module's code the command line does not show", module.text())),
            }
            return;
        }
        if name == "perl" && t.starts_with('-') && !t.starts_with("--") && t.contains('i') {
            // perl -pi -e CODE FILES: the files are edited in place (read,
            // written, replaced through a temp file); the code is inline.
            let mut j = i + 1;
            let mut files = Vec::new();
            while j < args.len() {
                let a = &args[j];
                if matches!(a.text(), "-e" | "-E") {
                    j += 2;
                    continue;
                }
                if !a.text().starts_with('-') {
                    files.push(a);
                }
                j += 1;
            }
            for f in files {
                sink.path(f, Read);
                sink.path(f, Write);
                sink.in_place_replace(name, f);
            }
            sink.opaque(format!("`{name} {t}` edits files with inline code"));
            return;
        }
        if !t.starts_with('-') {
            // The script: read, not executed (it is not execve'd).
            sink.path(a, Read);
            if name.starts_with("python") {
                django_collects(a, &args[i + 1..], sink);
            }
            return;
        }
    }
    sink.opaque(format!("`{name}` reading its program from standard input"));
}

/// `python manage.py collectstatic`: Django copies the static files into
/// STATIC_ROOT, removing each one it collected before whose source changed
/// (and, with `--clear`, all of them) before writing it again. Where
/// STATIC_ROOT is, only the project's settings say: the card says so, every
/// time, and Allow once lets that call delete under the project's folder.
fn django_collects(script: &Arg, rest: &[Arg], sink: &mut Sink) {
    let Some(path) = script.literal() else { return };
    let command = rest.iter().map(Arg::text).find(|w| !w.starts_with('-'));
    if crate::paths::file_name(path) != "manage.py" || command != Some("collectstatic") {
        return;
    }
    let project = match path.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => path[..i].to_string(),
        None => ".".to_string(),
    };
    let reason = format!(
        "`manage.py collectstatic` removes the files it collected before into STATIC_ROOT (wherever the project's settings put it) and writes them again{}",
        if rest.iter().any(|a| matches!(a.text(), "--clear" | "-c")) { ", and with --clear removes everything there first" } else { "" }
    );
    sink.asks_each_time("manage.py collectstatic", &[Delete], &project, &reason);
}
