//! Readers and filters: the operands they read, and the few files their
//! options write (`sort -o`, `jq`/`yq -i`, `uniq`'s output operand).

use super::sink::{Sink, Unseen};
use super::split::{option_arg, Split};
use super::writers;
use crate::host::PathKind;
use crate::paths;
use crate::policy::capability::Capability::{self, *};
use crate::shell::parse::Arg;

/// `file -C`: compiles the magic files into NAME.mgc in the working directory.
#[inline(never)]
pub(super) fn file_compile(sink: &mut Sink) {
    // file -C compiles the -m magic files into NAME.mgc in the working directory.
    sink.unknown_names_in(None, &[Create, Write], "file -C writes the compiled magic file in the working directory");
}

/// Every operand gets these capabilities (`mkdir -p` and `rmdir -p` also their missing or emptied parents).
#[inline(never)]
pub(super) fn each(name: &str, caps: &[Capability], s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    // less runs `+!CMD` and `+|CMD` as its first commands (a shell command).
    if name == "less" && ops.iter().any(|o| o.text().starts_with('+') && o.text().contains(['!', '|'])) {
        sink.opaque("less is given a first command that runs a shell command (+!…, +|…)".into());
    }
    let parents = s.short('p') || s.has(&["--parents"]);
    for op in ops {
        // mkdir -p makes the missing folders on the way; rmdir -p
        // removes each parent in turn.
        if parents && name == "mkdir" {
            writers::missing_ancestors(sink, op);
        }
        if name == "mkdir" {
            sink.makes_folder_as(op, caps);
            continue;
        }
        for &c in caps {
            sink.path(op, c);
        }
        if parents && name == "rmdir" {
            for p in writers::parent_chain(op) {
                sink.path(&p, Delete);
            }
        }
    }
}

/// Reads its operands, or the working directory when there are none.
#[inline(never)]
pub(super) fn list_or_cwd(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if ops.is_empty() {
        sink.path(&Arg::Literal(".".into()), Read);
    }
    for op in ops {
        sink.path(op, Read);
    }
}

/// The first operand is a pattern or program unless an option gave one; the rest are read.
#[inline(never)]
pub(super) fn read_after_first(name: &str, s: &Split, args: &[Arg], sink: &mut Sink) {
    let ops = &s.operands;
    if name.ends_with("awk") && awk_touches_files(s) {
        sink.opaque("the awk program opens files, loads code or runs commands itself (print >, getline, system, @include, @load)".into());
    }
    if name.ends_with("awk") {
        awk_options(name, args, sink);
    }
    // With the pattern in an option, or none (`rg --files`, `ag -g`), every operand is a path.
    let pattern_given = s.has(&["-e", "--regexp", "-f", "--file", "--files"]) || (name == "ag" && s.has(&["-g"]));
    for v in s.values(&["-f", "--file", "--exclude-from", "--ignore-file"]) {
        sink.path(&option_arg("--file", &v), Read);
    }
    let skip = if pattern_given { 0 } else { 1 };
    let files: Vec<&&Arg> = ops.iter().skip(skip).collect();
    if files.is_empty() && (s.short('r') || s.short('R') || matches!(name, "rg" | "ag")) && name != "awk" {
        // Recursive search with no path searches the working directory.
        sink.path(&Arg::Literal(".".into()), Read);
    }
    for op in files {
        sink.path(op, Read);
    }
}

/// `jq`: filter files read, `-i` (gojq) writes in place.
#[inline(never)]
pub(super) fn jq(s: &Split, args: &[Arg], sink: &mut Sink) {
    let ops = &s.operands;
    let filter_given = s.has(&["-f", "--from-file"]);
    for v in s.values(&["-f", "--from-file"]) {
        {
            sink.path(&option_arg("--from-file", &v), Read);
        }
    }
    // --arg/--argjson take two words, --slurpfile/--rawfile name a file second.
    let mut extra_skip: Vec<*const Arg> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a.text() {
            "--arg" | "--argjson" | "--slurpfile" | "--rawfile" => {
                if let Some(v) = args.get(i + 2) {
                    extra_skip.push(v as *const Arg);
                    if matches!(a.text(), "--slurpfile" | "--rawfile") {
                        sink.path(v, Read);
                    }
                }
            }
            _ => {}
        }
    }
    let files: Vec<&&Arg> =
        ops.iter().filter(|a| !extra_skip.contains(&(**a as *const Arg))).skip(if filter_given { 0 } else { 1 }).collect();
    for op in files {
        sink.path(op, Read);
    }
}

/// `sort`: operands read, `-o FILE` written.
#[inline(never)]
pub(super) fn sort(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    for v in s.values(&["-o", "--output"]) {
        {
            sink.fill(&option_arg("--output", &v));
        }
    }
    for op in ops {
        sink.path(op, Read);
    }
}

/// `uniq [in [out]]`: the first read, the second written.
#[inline(never)]
pub(super) fn in_out(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if let Some(i) = ops.first() {
        sink.path(i, Read);
    }
    if let Some(o) = ops.get(1) {
        sink.fill(o);
    }
}

/// `eval` and `source`: shell code the text does not show (a sourced file is read).
pub(super) fn opaque(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let what = if name == "eval" { "eval runs text as shell code" } else { "source runs a file as shell code" };
    if name != "eval" {
        if let Some(f) = ops.first() {
            sink.path(f, Read);
        }
    }
    sink.opaque(what.to_string());
}

/// `yq`: files read, written in place with `-i`.
#[inline(never)]
pub(super) fn yq(name: &str, s: &Split, args: &[Arg], sink: &mut Sink) {
    let ops = &s.operands;
    jq(s, args, sink);
    // mikefarah's yq reads any file its expression names (`load("F")`).
    let loads = |e: &str| {
        e.match_indices("load").any(|(at, _)| {
            let before = e[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let after = &e[at + 4..];
            before && ["(", "_str(", "_xml(", "_props(", "_base64("].iter().any(|p| after.trim_start().starts_with(p))
        })
    };
    if ops.iter().any(|o| loads(o.text())) {
        sink.opaque(format!("{name}'s expression loads files it names (load, load_str)"));
    }
    // mikefarah's yq names a subcommand first (`yq eval -i EXPR f`).
    let sub = usize::from(matches!(ops.first().map(|a| a.text()), Some("eval" | "e" | "eval-all" | "ea")));
    let filter = usize::from(!s.has(&["-f", "--from-file"]));
    if s.short('i') || s.has(&["--in-place", "--inplace"]) {
        for f in ops.iter().skip(sub + filter) {
            sink.path(f, Write);
            sink.in_place_replace(name, f);
        }
    }
    if s.has(&["--split-exp"]) {
        sink.unknown_names_in(None, &[Create, Write], "yq --split-exp names a file for each document");
    }
}

/// The one departure from "a program outside the table derives no file
/// effects": a word of any program that names an existing path in a
/// credential store, the harness home or the permission store is a read of
/// it (`openssl rsa -in ~/.ssh/id_rsa`, `ssh-keygen -y -f KEY`,
/// `tool --key=KEY`, `tool -fKEY`). Nothing else a word names is taken for
/// a file, so everyday words stay data.
#[inline(never)]
pub(super) fn named_secrets<'a>(words: impl Iterator<Item = &'a Arg>, sink: &mut Sink) {
    for a in words {
        let Arg::Literal(word) = a else { continue };
        for spelled in word_paths(word) {
            if names_secret(spelled, sink) {
                sink.path(&Arg::Literal(spelled.to_string()), Read);
            }
        }
    }
}

/// Family 6 of issue 34: a program outside the table may write, replace or
/// delete what its words name (`pandoc -o F`, `sponge F`, `gio trash F`).
/// Each word that names a path — absolute, from `~`, with a `/` in it, or
/// one that exists where the program runs — is recorded as named by the
/// program ([`Unseen::Named`]), and so is the folder it runs in, which it
/// may fill. The decision judges them; the kernel bounds them when it
/// fences every change.
#[inline(never)]
pub(super) fn named_paths<'a>(program: &str, words: impl Iterator<Item = &'a Arg>, sink: &mut Sink) {
    let cx = sink.cx;
    let Some(dirs) = sink.dirs().cloned() else { return };
    let mut named: Vec<String> = dirs.clone();
    for a in words {
        let Arg::Literal(word) = a else { continue };
        for spelled in word_paths(word) {
            let path_like = spelled.starts_with('/') || spelled.starts_with('~') || spelled.contains('/');
            for base in &dirs {
                let at = paths::absolute(base, spelled, cx.home);
                // A bare name counts when it is there, or is a repository's
                // surface even before it exists (`.gitmodules`, `.git`).
                let surface = crate::policy::baseline::repository_surface(&at).is_some() || paths::file_name(&at) == ".git";
                if (path_like || surface || cx.host.kind(&at) != PathKind::Missing) && !named.contains(&at) {
                    named.push(at);
                }
            }
        }
    }
    for path in named {
        sink.out.unseen.push(Unseen::Named { program: program.to_string(), path });
    }
}

/// What a word may spell as a path: itself, an option's value after `=`, a
/// short option's attached value (`-fFILE`), `file:PATH`, curl's `@PATH`.
fn word_paths(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if !word.starts_with('-') {
        out.push(word);
    }
    match word.split_once('=') {
        Some((_, value)) => out.push(value),
        None if word.starts_with('-') && !word.starts_with("--") => out.extend(word.get(2..)),
        None => {}
    }
    let prefixed: Vec<&str> = out.iter().filter_map(|w| w.strip_prefix("file:").or_else(|| w.strip_prefix('@'))).collect();
    out.extend(prefixed);
    out.retain(|w| !w.is_empty() && !w.contains("://"));
    out
}

/// `spelled`, from each place the program may run, is an existing path in
/// a credential store, the harness home or a protected file (as spelled, or
/// where its links lead).
fn names_secret(spelled: &str, sink: &Sink) -> bool {
    let cx = sink.cx;
    let bases = match sink.dirs() {
        Some(dirs) => dirs.clone(),
        None if spelled.starts_with('/') || spelled.starts_with('~') => vec!["/".to_string()],
        None => return false,
    };
    let harness = paths::absolute("/", cx.harness_home, cx.home);
    let stores = crate::policy::baseline::credential_paths(cx.home, if cx.harness_home.is_empty() { "" } else { &harness });
    let sensitive = |p: &str| {
        stores.iter().any(|store| paths::within(p, store))
            || (!cx.harness_home.is_empty() && paths::within(p, &harness))
            || cx.protected_files.iter().any(|f| paths::within(p, &paths::absolute("/", f, cx.home)))
    };
    bases.iter().any(|base| {
        let at = paths::absolute(base, spelled, cx.home);
        // Links are looked up only where a word or a `cd` could go through one.
        let named = sensitive(&at) || ((spelled.contains('/') || base != cx.cwd) && sensitive(&cx.host.canonical(&at)));
        named && cx.host.kind(&at) != PathKind::Missing
    })
}

/// gawk's options before the program: a program or library from a file
/// (`-f`, `-i`, `-E`, `-l`) is not shown by the line; `-o`, `-p` and `-d`
/// write a file (attached, or `awkprof.out` / `awkvars.out` in the working
/// directory).
fn awk_options(name: &str, args: &[Arg], sink: &mut Sink) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        if t == "--" || !t.starts_with('-') || t == "-" {
            break;
        }
        let (key, attached) = match t.strip_prefix("--") {
            Some(long) => match long.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (long.to_string(), None),
            },
            None => {
                let mut letters = t[1..].chars();
                let key = letters.next().map(String::from).unwrap_or_default();
                (key, Some(letters.as_str().to_string()).filter(|v| !v.is_empty()))
            }
        };
        match key.as_str() {
            "f" | "file" | "i" | "include" | "E" | "exec" | "l" | "load" => {
                sink.opaque(format!("{name} runs a program or library from a file the line does not show"));
                i += usize::from(attached.is_none());
            }
            "v" | "assign" | "F" | "field-separator" | "W" => i += usize::from(attached.is_none()),
            "o" | "pretty-print" | "p" | "profile" => sink.fill(&Arg::Literal(attached.unwrap_or_else(|| "awkprof.out".into()))),
            "d" | "dump-variables" => sink.fill(&Arg::Literal(attached.unwrap_or_else(|| "awkvars.out".into()))),
            "e" | "source" => break,
            _ => {}
        }
    }
}

/// The awk program redirects output, reads with getline or runs commands.
fn awk_touches_files(s: &Split) -> bool {
    let program = s.operands.first().map(|a| a.text()).unwrap_or("");
    let prints = program.contains("print");
    // gawk's `@include` reads a program file, `@load` a shared library.
    program.contains("getline") || program.contains("system") || program.contains("@include") || program.contains("@load") || (prints && (program.contains('>') || program.contains('|')))
}
