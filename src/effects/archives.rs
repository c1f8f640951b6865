//! Archives and compressors: what `tar`, `unzip`, `zip` and gzip-like
//! tools read, create and replace.

use super::sink::Sink;
use super::split::{option_arg, Split};
use crate::policy::capability::Capability::{self, *};
use crate::shell::parse::{Arg, Cwd};

/// `unzip`: the archive read, names made in the target folder.
#[inline(never)]
pub(super) fn unzip(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let list_only = s.short('l') || s.short('t') || s.short('Z') || s.short('p');
    let Some(archive) = ops.first() else { return };
    sink.path(archive, Read);
    if !list_only {
        let dir = s.values(&["-d"]).into_iter().next();
        sink.unknown_names_in(dir.as_ref(), &[Create, Write], "unzip creates the names the archive holds");
        // Told to overwrite (`-o`) or to freshen or update existing files
        // (`-f`, `-u`), unzip removes each file it replaces before writing
        // it again: replacing the archive's own names, the same as writing
        // them, which is what the line asks.
        if s.short('o') || s.short('f') || s.short('u') {
            sink.self_guarded("unzip", &[Delete], dir.as_ref(), REPLACES);
        }
    }
}

/// Why an extraction over existing files is granted delete for its call.
const REPLACES: &str = "extracting over existing files removes each one the archive holds before writing it again, which replaces it as writing over it would";

/// `zip`: the archive created or written, its sources read.
#[inline(never)]
pub(super) fn zip(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let Some(archive) = ops.first() else { return };
    if s.has(&["-O", "--output-file"]) {
        sink.path(archive, Read);
    } else {
        sink.fill(archive);
        // Updating an archive, zip writes the new one beside it, removes
        // the old and renames the new into its place: that one entry.
        let exists = sink.dirs().is_some_and(|ds| archive.literal().is_some_and(|a| ds.iter().any(|d| sink.cx.host.kind(&crate::paths::absolute(d, a, sink.cx.home)) == crate::host::PathKind::File)));
        if exists {
            sink.self_guarded("zip", &[Delete], Some(archive), "zip replaces the archive it updates with the one it wrote beside it");
        }
    }
    for op in &ops[1..] {
        sink.path(op, Read);
    }
    // `-@`: the names come from standard input; `-i@F`/`-x@F`: a list file.
    if s.options.iter().any(|(o, _, _)| o == "-@") {
        sink.computed(Read, "zip -@ reads the names to add from standard input".into());
    }
    for v in s.values(&["-i", "-x"]) {
        if let Some(f) = v.literal().and_then(|t| t.strip_prefix('@')) {
            sink.path(&Arg::Literal(f.to_string()), Read);
        }
    }
    if s.short('m') {
        for op in &ops[1..] {
            sink.path(op, Delete);
        }
    }
}

/// gzip and kin: each file read and replaced by its compressed (or decompressed) twin.
#[inline(never)]
pub(super) fn compress(name: &str, s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let to_stdout = s.short('c') || s.has(&["--stdout", "--to-stdout", "-l", "--list", "-t", "--test"]);
    // zstd keeps its input unless told --rm.
    let keep = s.short('k') || s.has(&["--keep"]) || (name.contains("zstd") && !s.has(&["--rm"]));
    let decompress = s.short('d') || s.has(&["--decompress", "--uncompress"]) || name.starts_with("gun") || name.starts_with("bun") || name.starts_with("un");
    // One named output: zstd -o FILE, lz4 IN OUT.
    let lz4_pair = name == "lz4" && ops.len() == 2 && !s.short('m') && !s.has(&["--multiple"]);
    let named_out = if lz4_pair { Some(ops[1].clone()) } else if name.contains("zstd") { s.values(&["-o"]).into_iter().next() } else { None };
    let output_dir = s.has(&["--output-dir-flat", "--output-dir-mirror"]);
    let recursive = s.short('r') || s.has(&["--recursive"]);
    if let Some(o) = named_out.as_ref().filter(|_| !to_stdout) {
        sink.fill(o);
    }
    for op in &ops[..if lz4_pair { 1 } else { ops.len() }] {
        sink.path(op, Read);
        if to_stdout {
            continue;
        }
        if recursive {
            // Every file below the folder is replaced by its (de)compressed twin.
            let caps: &[Capability] = if keep { &[Create, Write] } else { &[Create, Write, Delete] };
            sink.unknown_names_in(Some(op), caps, &format!("{name} -r (de)compresses every file below `{}`", op.text()));
            continue;
        }
        if named_out.is_some() || output_dir {
        } else if let Arg::Literal(f) = op {
            let suffix = compress_suffix(name);
            let other = if decompress {
                f.strip_suffix(suffix).map(str::to_string).unwrap_or_else(|| format!("{f}.out"))
            } else {
                format!("{f}{suffix}")
            };
            sink.fill(&Arg::Literal(other));
        } else {
            sink.computed(Create, format!("`{}` is computed", op.text()));
        }
        if !keep {
            sink.path(op, Delete);
        }
    }
}

fn compress_suffix(name: &str) -> &'static str {
    match name {
        "bzip2" | "bunzip2" => ".bz2",
        "xz" | "unxz" => ".xz",
        "zstd" | "unzstd" => ".zst",
        "lz4" => ".lz4",
        _ => ".gz",
    }
}

/// `tar`: members read into an archive it fills, or names the archive
/// holds extracted.
#[inline(never)]
pub(super) fn tar(s: &Split, args: &[Arg], sink: &mut Sink) {
    // Old style: the first word is a bundle of mode letters without a dash.
    let bundle = args.first().and_then(Arg::literal).filter(|t| !t.starts_with('-') && t.chars().all(|c| c.is_ascii_alphabetic())).unwrap_or("");
    let letters: String = s
        .options
        .iter()
        .filter(|(o, _, _)| o.starts_with('-') && !o.starts_with("--"))
        .map(|(o, _, _)| o[1..].to_string())
        .collect::<String>()
        + bundle;
    let long = |n: &str| s.has(&[n]);
    let create = letters.contains('c') || long("--create");
    let extract = letters.contains('x') || long("--extract") || long("--get");
    let append = letters.contains('r') || letters.contains('u') || letters.contains('A') || long("--append") || long("--update") || long("--catenate") || long("--concatenate") || long("--delete");
    let mut archive: Option<Arg> = s.values(&["-f", "--file"]).first().map(|v| option_arg("--file", &v));
    let mut operands: Vec<&Arg> = s.operands.clone();
    if !bundle.is_empty() {
        operands.remove(0);
        if bundle.contains('f') && archive.is_none() && !operands.is_empty() {
            archive = Some(operands.remove(0).clone());
        }
    }
    let dir = s.values(&["-C", "--directory"]).first().map(|v| option_arg("--directory", &v));
    // `--checkpoint-action=exec=CMD` runs CMD at each checkpoint.
    for v in s.values(&["--checkpoint-action"]) {
        match v.literal() {
            Some(t) => {
                if let Some(cmd) = t.strip_prefix("exec=") {
                    sink.shell_program(&Arg::Literal(cmd.to_string()), 0);
                }
            }
            None => sink.opaque(format!("tar runs the checkpoint action `{}`", v.text())),
        }
    }
    if create || append {
        if let Some(a) = &archive {
            sink.fill(a);
        }
        let base_cwd;
        let members_cwd = match (&dir, sink.cwd.0.as_ref()) {
            (None, _) => sink.cwd,
            (Some(Arg::Literal(d)), Some(_)) => {
                base_cwd = sink.chdir(d);
                &base_cwd
            }
            _ => {
                base_cwd = Cwd(None);
                &base_cwd
            }
        };
        let mut inner = Sink { cx: sink.cx, cwd: members_cwd, out: sink.out };
        let removes = long("--remove-files");
        for m in operands {
            if long("--delete") {
                continue; // member names inside the archive
            }
            inner.path(m, Read);
            if removes {
                inner.path(m, Delete);
            }
        }
    } else {
        if let Some(a) = &archive {
            sink.path(a, Read);
        }
        if extract {
            let unlinks = letters.contains('U') || long("--unlink-first") || long("--recursive-unlink");
            let caps: &[Capability] = if unlinks { &[Create, Write, Delete] } else { &[Create, Write] };
            sink.unknown_names_in(dir.as_ref(), caps, "tar extracts names the archive holds");
            // By default GNU tar removes a file the archive holds that is
            // already there, then makes it again; bsdtar does the same.
            let keeps = letters.contains('k') || long("--keep-old-files") || long("--skip-old-files") || long("--keep-newer-files") || long("--to-stdout") || letters.contains('O');
            if !unlinks && !keeps {
                sink.self_guarded("tar", &[Delete], dir.as_ref(), REPLACES);
            }
        }
    }
}
