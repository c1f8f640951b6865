//! Archives and compressors: what `unzip`, `zip` and gzip-like tools
//! read, create and replace.

use super::*;

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
    }
}

/// `zip`: the archive created or written, its sources read.
#[inline(never)]
pub(super) fn zip(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    let Some(archive) = ops.first() else { return };
    if s.has(&["-O", "--output-file"]) {
        sink.path(archive, Read);
    } else {
        sink.fill(archive);
    }
    for op in &ops[1..] {
        sink.path(op, Read);
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
