//! Writers whose outputs the command line names only in part: pieces made
//! from a prefix (`split`, `csplit`), a file made from a template
//! (`mktemp`), the files a diff names (`patch`), `xxd`'s output operand, and
//! archivers whose first word is a command (`7z`, `ar`, `cpio`, `unrar`).
//! Where the names are the program's own, the folder they land in is known
//! and the effect is computed there.

use super::sink::{create_or_write, Sink, Unseen};
use super::split::{option_arg, split, Split};
use crate::policy::capability::Capability::*;
use crate::shell::parse::{Arg, Cwd};

/// The folder a name made from `prefix` lands in: the prefix itself when it
/// ends in `/`, else its parent as spelled.
pub(super) fn folder_of(prefix: &str) -> String {
    if prefix.ends_with('/') {
        return prefix.to_string();
    }
    match prefix.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => prefix[..i].to_string(),
        None => ".".into(),
    }
}

/// Files named `PREFIX…`, made (and filled) in the prefix's folder.
fn made_from_prefix(sink: &mut Sink, prefix: &Arg, why: &str) {
    match prefix {
        Arg::Literal(p) => sink.unknown_names_in(Some(&Arg::Literal(folder_of(p))), &[Create, Write], why),
        _ => {
            sink.computed(Create, format!("`{}` is computed", prefix.text()));
            sink.computed(Write, format!("`{}` is computed", prefix.text()));
        }
    }
}

/// `split [FILE [PREFIX]]` (pieces `PREFIXaa`…, prefix `x`) and
/// `csplit FILE PATTERN…` (pieces `xx00`…, prefix `-f`).
#[inline(never)]
pub(super) fn split_pieces(name: &str, s: &Split, sink: &mut Sink) {
    if let Some(input) = s.operands.first() {
        sink.path(input, Read);
    }
    let prefix = if name == "csplit" {
        s.values(&["-f", "--prefix"]).into_iter().next().unwrap_or(Arg::Literal("xx".into()))
    } else if s.has(&["--filter"]) {
        // Each piece goes to the command instead (judged from `RUNS`).
        return;
    } else {
        s.operands.get(1).map(|a| (*a).clone()).unwrap_or(Arg::Literal("x".into()))
    };
    made_from_prefix(sink, &prefix, &format!("{name} names its pieces after the prefix `{}`", prefix.text()));
}

/// `mktemp [-d] [-p DIR | --tmpdir[=DIR] | -t] [TEMPLATE]`: one new file
/// (or folder) whose name only mktemp knows. Without a template, or with
/// `-t`/`--tmpdir`, it is made in `$TMPDIR`, taken here as `/tmp`; a
/// template alone is relative to the working directory.
#[inline(never)]
pub(super) fn mktemp(s: &Split, sink: &mut Sink) {
    if s.short('u') || s.has(&["--dry-run"]) {
        return;
    }
    let template = s.operands.first().and_then(|a| a.literal());
    let tmpdir_value = s.values(&["--tmpdir"]).into_iter().next();
    let dir_option = s.values(&["-p"]).into_iter().next().or(tmpdir_value);
    let in_tmp = template.is_none() || s.short('t') || s.has(&["--tmpdir"]);
    let base: Arg = match (&dir_option, in_tmp) {
        (Some(d), _) => d.clone(),
        (None, true) => Arg::Literal("/tmp".into()),
        (None, false) => Arg::Literal(".".into()),
    };
    let folder = match (template.map(folder_of), &base) {
        // -t takes the template as a single name.
        (Some(f), Arg::Literal(b)) if f != "." && !s.short('t') => {
            if f.starts_with('/') || f.starts_with('~') {
                Arg::Literal(f)
            } else {
                Arg::Literal(format!("{}/{f}", b.trim_end_matches('/')))
            }
        }
        _ => base,
    };
    let what = if s.short('d') || s.has(&["--directory"]) { "folder" } else { "file" };
    sink.unknown_names_in(Some(&folder), &[Create], &format!("mktemp makes a {what} whose name only it knows"));
}

/// `patch [ORIGFILE [PATCHFILE]]`: every file the diff names, under the
/// working directory (or `-d DIR`; patch refuses absolute names and `..`),
/// or the one `-o FILE`. Each is written through a temp file made beside it
/// and renamed over it (or removed), which needs create and delete there.
#[inline(never)]
pub(super) fn patch(s: &Split, sink: &mut Sink) {
    for v in s.values(&["-i", "--input"]) {
        sink.path(&v, Read);
    }
    if let Some(p) = s.operands.get(1) {
        sink.path(p, Read);
    }
    if s.has(&["--dry-run"]) {
        return;
    }
    // An ed script is run by ed, whose `!` runs shell commands.
    if s.short('e') || s.has(&["--ed"]) {
        sink.opaque("patch -e runs the patch as an ed script, which may run commands".into());
    }
    let cwd = match s.values(&["-d", "--directory"]).into_iter().next() {
        Some(Arg::Literal(d)) => sink.chdir(&d),
        Some(_) => Cwd(None),
        None => sink.cwd.clone(),
    };
    let mut inner = Sink { cx: sink.cx, cwd: &cwd, out: sink.out };
    let output = s.values(&["-o", "--output"]).into_iter().next();
    let target = output.clone().or_else(|| s.operands.first().map(|a| (*a).clone()));
    match &target {
        Some(Arg::Literal(t)) if t == "-" => {}
        Some(t) => {
            if output.is_none() {
                inner.path(t, Read);
            }
            inner.fill(t);
            if output.is_none() {
                super::editors::replaces_beside(&mut inner, "patch", t);
            } else {
                inner.renames_beside("patch", t, "patch writes a temp file beside the file it writes and renames it");
            }
        }
        None => {
            inner.unknown_names_in(None, &[Create, Write], "patch changes the files its diff names");
            let scope = inner.dirs().cloned().unwrap_or_default();
            // patch changes a file only where its current lines match the
            // diff's, and what it removes is written in the diff: `patch
            // -R` puts it back. Granted for the call when the line hides
            // nothing (with -e the diff is an ed script: opaque, above).
            inner.out.unseen.push(Unseen::SelfGuarded {
                program: "patch".into(),
                capabilities: vec![Create, Delete],
                scope,
                reason: "patch changes only files whose lines match its diff, and what it removes is in the diff (patch -R puts it back)".into(),
            });
        }
    }
    for r in s.values(&["-r", "--reject-file"]) {
        inner.fill(&r);
    }
}

/// `xxd [options] [infile [outfile]]`: options come first and are whole
/// words (`-ps` is `-postscript`); `-c -g -l -n -o -s -R` take a value,
/// attached (`-c8`) or, spelled alone or out (`-cols`), the next word.
#[inline(never)]
pub(super) fn xxd(args: &[Arg], sink: &mut Sink) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        if !t.starts_with('-') || t == "-" || !matches!(a, Arg::Literal(_)) {
            break;
        }
        i += 1;
        let b = t.as_bytes();
        if b.len() >= 2 && matches!(b[1], b'c' | b'g' | b'l' | b'n' | b'o' | b's' | b'R') && b[2..].iter().all(u8::is_ascii_alphabetic) {
            i += 1;
        }
    }
    if let Some(input) = args.get(i) {
        sink.path(input, Read);
    }
    if let Some(output) = args.get(i + 1) {
        sink.fill(output);
    }
}

/// Archivers whose first word is a command.
#[inline(never)]
pub(super) fn archiver(name: &str, args: &[Arg], sink: &mut Sink) {
    match name {
        "ar" => ar(args, sink),
        "cpio" => cpio(args, sink),
        "unrar" => unrar(args, sink),
        _ => seven_zip(name, args, sink),
    }
}

/// `7z CMD [-switches…] ARCHIVE [names…]`: switches anywhere, values
/// attached (`-oDIR`, `-wDIR`).
fn seven_zip(name: &str, args: &[Arg], sink: &mut Sink) {
    let switches: Vec<&str> = args.iter().skip(1).map(Arg::text).filter(|t| t.starts_with('-')).collect();
    let words: Vec<&Arg> = args.iter().skip(1).filter(|a| !a.text().starts_with('-')).collect();
    let switch = |p: &str| switches.iter().find(|s| s.get(..p.len()).is_some_and(|head| head.eq_ignore_ascii_case(p))).and_then(|s| s.get(p.len()..));
    let Some(cmd) = args.first().map(|a| a.text().to_ascii_lowercase()) else { return };
    let Some((archive, names)) = words.split_first() else { return };
    for w in switches.iter().filter_map(|s| s.strip_prefix("-w")) {
        let dir = if w.is_empty() { "/tmp" } else { w };
        sink.unknown_names_in(Some(&Arg::Literal(dir.into())), &[Create, Write, Delete], &format!("{name} builds the new archive in `{dir}`"));
    }
    for list in names.iter().filter_map(|n| n.literal().and_then(|t| t.strip_prefix('@'))) {
        sink.path(&Arg::Literal(list.into()), Read);
    }
    let names: Vec<&&Arg> = names.iter().filter(|n| !n.text().starts_with('@')).collect();
    match cmd.as_str() {
        "a" | "u" => {
            sink.path(archive, Read);
            sink.fill(archive);
            for n in &names {
                sink.path(n, Read);
                if switch("-sdel").is_some() {
                    sink.path(n, Delete);
                }
            }
        }
        "d" | "rn" => {
            sink.path(archive, Read);
            sink.fill(archive);
        }
        "x" | "e" => {
            sink.path(archive, Read);
            if switch("-so").is_none() {
                let dir = switch("-o").map(|d| Arg::Literal(d.to_string()));
                sink.unknown_names_in(dir.as_ref(), &[Create, Write], &format!("{name} extracts the names the archive holds"));
            }
        }
        "l" | "t" | "h" => sink.path(archive, Read),
        "b" | "i" => {}
        other => sink.opaque(format!("{name} `{other}` is a command this table does not know")),
    }
}

/// `ar [-]KEY[modifiers] [--output DIR] [relpos] [count] ARCHIVE [member…]`.
fn ar(args: &[Arg], sink: &mut Sink) {
    let mut out_dir = None;
    let mut words: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.text() {
            "--plugin" | "--target" | "--output" | "--record-libdeps" => {
                if a.text() == "--output" {
                    out_dir = args.get(i).cloned();
                }
                i += 1;
            }
            t if t.starts_with("--output=") => out_dir = Some(Arg::Literal(t["--output=".len()..].to_string())),
            t if t.starts_with("--") || t.starts_with("-X") || (t.starts_with('@') && words.is_empty()) => {}
            _ => words.push(a),
        }
    }
    let Some((key, rest)) = words.split_first() else { return };
    let key = key.text().trim_start_matches('-');
    let Some(op) = key.chars().find(|c| "dmpqrstx".contains(*c)) else {
        sink.opaque(format!("ar `{key}` names no command this table knows"));
        return;
    };
    // a/b/i name a member to place after or before, N a count: operands before the archive.
    let skip = usize::from(key.contains(['a', 'b', 'i']) && matches!(op, 'm' | 'r' | 'q')) + usize::from(key.contains('N'));
    let Some((archive, members)) = rest.get(skip..).and_then(|r| r.split_first()) else { return };
    sink.path(archive, Read);
    match op {
        'q' | 'r' => {
            sink.fill(archive);
            for m in members {
                sink.path(m, Read);
            }
        }
        'd' | 'm' | 's' => sink.fill(archive),
        'x' => sink.unknown_names_in(out_dir.as_ref(), &[Create, Write], "ar extracts the members the archive holds"),
        _ => {}
    }
}

/// `cpio -o` (archive to `-O`/`-F FILE` or stdout), `cpio -i` (from `-I`/
/// `-F FILE` or stdin, extracted into `-D DIR` or the working directory),
/// `cpio -p DIR` (names on stdin copied into DIR).
fn cpio(args: &[Arg], sink: &mut Sink) {
    let s = split(
        args,
        &["-C", "-E", "-F", "-H", "-I", "-M", "-O", "-R", "-D", "--block-size", "--io-size", "--file", "--format", "--message", "--owner", "--pattern-file", "--rsh-command", "--directory"],
    );
    for v in s.values(&["-E", "--pattern-file"]) {
        sink.path(&v, Read);
    }
    for v in s.values(&["--rsh-command"]) {
        sink.shell_program(&v, 0);
    }
    let archive: Vec<Arg> = s.values(&["-F", "--file", "-O", "-I"]);
    if s.short('o') || s.has(&["--create"]) {
        for a in &archive {
            sink.fill(a);
        }
    } else if s.short('p') || s.has(&["--pass-through"]) {
        let dir = s.operands.first().map(|a| (*a).clone());
        sink.unknown_names_in(dir.as_ref(), &[Create, Write], "cpio copies the names its input lists into the folder");
    } else if s.short('i') || s.has(&["--extract"]) {
        for a in &archive {
            sink.path(a, Read);
        }
        let listing = s.short('t') || s.has(&["--list", "--only-verify-crc", "--to-stdout"]);
        if !listing {
            let dir = s.values(&["-D", "--directory"]).into_iter().next();
            sink.unknown_names_in(dir.as_ref(), &[Create, Write], "cpio extracts the names the archive holds");
        }
    } else {
        sink.opaque("cpio without -o, -i or -p".into());
    }
}

/// `unrar CMD [-switches] ARCHIVE [names…] [DEST/]`.
fn unrar(args: &[Arg], sink: &mut Sink) {
    let Some(cmd) = args.first().map(Arg::text) else { return };
    let words: Vec<&Arg> = args.iter().skip(1).filter(|a| !a.text().starts_with('-')).collect();
    let Some((archive, rest)) = words.split_first() else { return };
    sink.path(archive, Read);
    if matches!(cmd, "x" | "e") {
        let option_dir = args.iter().find_map(|a| a.literal().and_then(|t| t.strip_prefix("-op")).map(|d| Arg::Literal(d.to_string())));
        let dest = option_dir.or_else(|| rest.last().filter(|d| d.text().ends_with('/')).map(|d| (*d).clone()));
        sink.unknown_names_in(dest.as_ref(), &[Create, Write], "unrar extracts the names the archive holds");
    }
}

/// Folders `mkdir -p` (and `install -D`) makes on the way: the ancestors
/// of `op` as spelled that do not exist yet.
pub(super) fn missing_ancestors(sink: &mut Sink, op: &Arg) {
    let Arg::Literal(p) = op else { return };
    let mut at = p.trim_end_matches('/');
    let mut chain = Vec::new();
    while let Some(i) = at.rfind('/') {
        at = &at[..i];
        if at.is_empty() || at == "~" || at == "." || at.ends_with("/..") || at == ".." {
            break;
        }
        chain.push(at.to_string());
    }
    // Outermost first: the order `mkdir -p` makes them in.
    for a in chain.into_iter().rev() {
        let before = sink.out.effects.len();
        sink.path_if_missing(&Arg::Literal(a), Create);
        sink.note_folders(before);
    }
}

/// Folders `rmdir -p a/b/c` removes after `c`: `a/b`, then `a`.
pub(super) fn parent_chain(op: &Arg) -> Vec<Arg> {
    let Arg::Literal(p) = op else { return Vec::new() };
    let mut at = p.trim_end_matches('/');
    let mut out = Vec::new();
    while let Some(i) = at.rfind('/') {
        at = &at[..i];
        out.push(Arg::Literal(if at.is_empty() { "/".to_string() } else { at.to_string() }));
        if at.is_empty() {
            break;
        }
    }
    out
}

/// `shred`: operands overwritten, removed with `-u`.
#[inline(never)]
pub(super) fn shred(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let remove = s.short('u') || s.has(&["--remove", "--remove=unlink", "--remove=wipe", "--remove=wipesync"]);
    for op in ops {
        sink.path(op, Write);
        if remove {
            sink.path(op, Delete);
        }
    }
}

/// Write if the operand exists, create if not (touch, tee, truncate).
#[inline(never)]
pub(super) fn creates_or_writes(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    for v in s.values(&["-r", "--reference"]) {
        {
            sink.path(&option_arg("--reference", &v), Read);
        }
    }
    for op in ops {
        // touch makes an empty file; tee and truncate fill theirs.
        if name == "touch" {
            sink.path_with(op, create_or_write);
        } else {
            sink.fill(op);
        }
    }
}

/// The first operand is a mode or an owner; the rest are written.
#[inline(never)]
pub(super) fn write_after_first(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    // `chmod -w f`: a symbolic mode spelled like options is the mode
    // (chmod's own short flags are -c -f -v -R).
    let mode_as_option = name == "chmod" && s.options.iter().any(|(o, _, _)| o.len() == 2 && o.starts_with('-') && !"cfvR-".contains(&o[1..]));
    let context_in_options = name == "chcon" && s.has(&["-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range"]);
    let skip = if s.has(&["--reference"]) || mode_as_option || context_in_options { 0 } else { 1 };
    for op in ops.iter().skip(skip) {
        sink.path(op, Write);
    }
}

/// `mknod NAME TYPE …`: only the first operand is a path.
#[inline(never)]
pub(super) fn create_first(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if let Some(op) = ops.first() {
        sink.path(op, Create);
    }
}

/// `dd`: `if=` read, `of=` created or written.
#[inline(never)]
pub(super) fn dd(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    for op in ops {
        if let Some(t) = op.literal() {
            if let Some(p) = t.strip_prefix("if=") {
                sink.path(&Arg::Literal(p.to_string()), Read);
            } else if let Some(p) = t.strip_prefix("of=") {
                sink.fill(&Arg::Literal(p.to_string()));
            }
        } else if op.text().starts_with("if=") {
            sink.computed(Read, format!("`{}` is computed", op.text()));
        } else if op.text().starts_with("of=") {
            sink.computed(Create, format!("`{}` is computed", op.text()));
        }
    }
}

/// `dos2unix FILE…` (and kin): each file rewritten in place through a temp
/// file beside it; `-n IN OUT` writes OUT instead.
#[inline(never)]
pub(super) fn convert(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    if s.short('n') || s.has(&["--newfile"]) {
        for pair in ops.chunks(2) {
            sink.path(pair[0], Read);
            if let Some(out) = pair.get(1) {
                sink.fill(out);
            }
        }
        return;
    }
    for f in ops {
        sink.path(f, Read);
        sink.path(f, Write);
        sink.in_place_replace(name, f);
    }
}
