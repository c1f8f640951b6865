//! Copies, moves and links: `cp`, `mv`, `ln`, `link`, `install`, `rsync`,
//! `scp`. Sources are read (and deleted by a move), the destination is
//! created or written (a folder: each source's name inside it), and a link
//! is remembered so a path through it is judged where it leads.

use super::sink::{Located, MadeLink, Sink};
use super::split::{option_value, Split};
use super::table::Role;
use super::writers;
use crate::host::PathKind;
use crate::paths;
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;

/// cp / mv / ln / install / rsync / scp: sources and one destination, and
/// what each does besides (backups, `install -D`'s folders, `ln -f`).
#[inline(never)]
pub(super) fn transfer(role: Role, name: &str, s: &Split, sink: &mut Sink) {
    copy_or_move(role, s, sink);
    transfer_extras(name, s, sink);
}


/// `ln`: paths through `link` reach `src` (see `Analysis::made`).
fn made_link(sink: &mut Sink, src: &Arg, link: &str, symbolic: bool) {
    let Some(dirs) = sink.dirs().cloned() else { return };
    for d in dirs {
        let at = match sink.locate_name(&d, link) {
            Located::Path(p) => p,
            _ => paths::absolute(&d, link, sink.cx.home),
        };
        let real_at = match sink.cx.host.canonical(paths::parent(&at)) {
            dir if dir == "/" => format!("/{}", paths::file_name(&at)),
            dir => format!("{dir}/{}", paths::file_name(&at)),
        };
        let target = link_target(sink, src, &at, &d, symbolic);
        sink.out.found.push(MadeLink { at, real_at, target });
    }
}

/// What a link made at `at` from `src` (run in `d`) points to. A symbolic
/// link's text is read from the folder it lives in; `..` in it climbs from
/// where that really is, so it is kept.
fn link_target(sink: &Sink, src: &Arg, at: &str, d: &str, symbolic: bool) -> Option<String> {
    src.literal().map(|t| paths::join(if symbolic { paths::parent(at) } else { d }, t, sink.cx.home))
}

/// What cp / mv / ln / install / rsync do besides copying to the
/// destination: backups beside it, the folders `install -D` makes, a
/// destination `-f` replaces, the paths rsync -R recreates.
#[inline(never)]
fn transfer_extras(name: &str, s: &Split, sink: &mut Sink) {
    let (ops, to_remote, from_remote) = local_operands(s);
    let target_dir = s.values(&["-t", "--target-directory"]).into_iter().next();
    let dest: Option<Arg> = target_dir.clone().or_else(|| ops.last().filter(|_| !to_remote && (ops.len() >= 2 || from_remote)).map(|a| (*a).clone()));
    if name == "install" && s.short('d') {
        for op in &ops {
            sink.path(op, Create);
            writers::missing_ancestors(sink, op);
        }
        return;
    }
    let Some(dest) = dest else { return };
    let dest_is_dir = target_dir.is_some()
        || dest.text().ends_with('/')
        || ops.len() > 2
        || dest.literal().is_some_and(|d| sink.dirs().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&paths::absolute(b, d, sink.cx.home)) == PathKind::Dir)));
    let folder = match (&dest, dest_is_dir) {
        (_, true) => dest.clone(),
        (Arg::Literal(d), false) => Arg::Literal(writers::folder_of(d)),
        (other, false) => other.clone(),
    };
    if s.short('b') || s.has(&["--backup"]) {
        sink.unknown_names_in(Some(&folder), &[Create, Write], &format!("{name} keeps a backup of each file it replaces (`~` or --suffix)"));
    }
    if name == "install" && s.short('D') {
        writers::missing_ancestors(sink, &if dest_is_dir { Arg::Literal(format!("{}/x", dest.text().trim_end_matches('/'))) } else { dest.clone() });
    }
    let replaces = (name == "ln" && (s.short('f') || s.has(&["--force"]))) || (name == "cp" && s.has(&["--remove-destination"]));
    if replaces && !dest_is_dir {
        // The link's own name, not where a link this line makes there leads.
        sink.out.plain = name == "ln";
        sink.path_with(&dest, |_, kind| if kind == PathKind::Missing { Create } else { Delete });
        sink.out.plain = false;
    }
    // (rsync --delete and --remove-source-files: see `copy_or_move`.)
    if name == "rsync" {
        if s.short('R') || s.has(&["--relative"]) {
            sink.unknown_names_in(Some(&dest), &[Create, Write], "rsync --relative recreates the sources' paths below the destination");
        }
    }
}

/// The local operands of a copy, and whether it sends to another host or
/// fetches from one: rsync/scp-style remote operands (`host:path`,
/// `rsync://…`) are no local files, but the local ones are read (sent) or
/// written (fetched into).
fn local_operands<'a>(s: &Split<'a>) -> (Vec<&'a Arg>, bool, bool) {
    let remote = |a: &&Arg| a.literal().is_some_and(|t| t.split_once(':').is_some_and(|(h, _)| !h.contains('/') && !h.is_empty()));
    let to_remote = s.operands.len() >= 2 && s.operands.last().is_some_and(remote);
    let from_remote = !to_remote && s.operands.iter().rev().skip(1).any(remote);
    (s.operands.iter().copied().filter(|a| !remote(a)).collect(), to_remote, from_remote)
}

/// Sources and one destination.
#[inline(never)]
fn copy_or_move(role: Role, s: &Split, sink: &mut Sink) {
    let target_dir = s.values(&["-t", "--target-directory"]).into_iter().next();
    let no_target_dir = s.short('T') || s.has(&["--no-target-directory"]);
    let (ops, to_remote, from_remote) = local_operands(s);
    if role == Role::Copy && !from_remote && s.short('d') && s.options.iter().any(|(o, _, _)| o == "-d") && ops.len() == 1 {
        // install -d DIR
        sink.path(ops[0], Create);
        return;
    }
    let (sources, dest): (Vec<&Arg>, Option<Arg>) = match target_dir {
        Some(v) => (ops.clone(), Some(match option_value("--target-directory", &v) { Some(d) => Arg::Literal(format!("{d}/")), None => v.clone() })),
        None if role == Role::Link && ops.len() == 1 => (ops.clone(), Some(Arg::Literal("./".into()))),
        // Sent to another host: every local operand is read.
        None if to_remote => (ops.clone(), None),
        None if ops.len() >= 2 || (from_remote && ops.len() == 1) => (ops[..ops.len() - 1].to_vec(), Some(ops[ops.len() - 1].clone())),
        None => (ops.clone(), None),
    };
    let symbolic = s.short('s') || s.has(&["--symbolic"]);
    for src in &sources {
        match role {
            Role::Copy => sink.path(src, Read),
            // A hard link is the file itself under another name: whatever
            // may read or write the new name reads and writes it.
            Role::Link if !symbolic => {
                sink.path(src, Read);
                sink.path(src, Write);
            }
            Role::Move => {
                sink.path(src, Read);
                sink.path(src, Delete);
            }
            _ => {}
        }
    }
    if role == Role::Copy {
        // rsync: --delete removes from the destination what the sources
        // lack (names known only at run time); --remove-source-files
        // deletes the sources it sent.
        if s.options.iter().any(|(o, _, _)| o == "--del" || o.starts_with("--delete")) {
            sink.unknown_names_in(dest.as_ref(), &[Delete], "rsync --delete removes what the sources do not have");
        }
        if s.has(&["--remove-source-files"]) {
            for src in &sources {
                sink.path(src, Delete);
            }
        }
    }
    let Some(dest) = dest else { return };
    let into_folder = dest.text().ends_with('/') || dest.literal().is_some_and(|d| sink.dirs().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&paths::absolute(b, d, sink.cx.home)) == PathKind::Dir)));
    if from_remote && into_folder {
        sink.unknown_names_in(Some(&dest), &[Create, Write], "the files fetched from the other host keep the names they have there");
    }
    sink.out.plain = role == Role::Link;
    // cp --parents copies `a/b/f` to `DEST/a/b/f`.
    let parents = role == Role::Copy && s.has(&["--parents"]);
    transfer_to(role, &sources, &dest, no_target_dir, symbolic, parents, sink);
    sink.out.plain = false;
}

fn transfer_to(role: Role, sources: &[&Arg], dest: &Arg, no_target_dir: bool, symbolic: bool, parents: bool, sink: &mut Sink) {
    match dest {
        Arg::Literal(d) => {
            let dirs = sink.dirs().cloned();
            let resolve = |base: &str| paths::absolute(base, d, sink.cx.home);
            let into_dir = !no_target_dir
                && (d.ends_with('/')
                    || sources.len() > 1
                    || dirs.as_ref().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&resolve(b)) == PathKind::Dir)));
            // A link this line makes may be a folder the disk does not show
            // yet: the sources may land inside it, too.
            // (Not the link this very `ln` makes there.)
            let onto_made = dirs.as_ref().is_some_and(|ds| {
                ds.iter().any(|b| {
                    let at = resolve(b);
                    sink.out.made.iter().any(|l| {
                        (l.at == at || l.real_at == at)
                            && !(role == Role::Link && sources.iter().any(|src| l.target == link_target(sink, src, &at, b, symbolic)))
                    })
                })
            });
            if into_dir || onto_made {
                for src in sources {
                    match src.literal() {
                        Some(sname) => {
                            let leaf = if parents {
                                sname.trim_end_matches('/').trim_start_matches('/')
                            } else {
                                paths::file_name(sname.trim_end_matches('/'))
                            };
                            let p = format!("{}/{}", d.trim_end_matches('/'), leaf);
                            if role != Role::Copy {
                                sink.path(&Arg::Literal(p.clone()), Create);
                            } else {
                                sink.fill(&Arg::Literal(p.clone()));
                            }
                            if role == Role::Link {
                                made_link(sink, src, &p, symbolic);
                            }
                        }
                        None => sink.unknown_names_in(Some(&dest), &[Create, Write], "the names copied in are computed"),
                    }
                }
            }
            if into_dir {
            } else if role == Role::Copy {
                sink.fill(&dest);
            } else {
                sink.path(&dest, Create);
                if role == Role::Link {
                    if let Some(src) = sources.first() {
                        made_link(sink, src, d, symbolic);
                    }
                }
                if role == Role::Move {
                    // Renaming over an existing file replaces it.
                    sink.path_with(&dest, |_, k| if k == PathKind::Missing { Create } else { Write });
                }
            }
        }
        other => {
            let cap = if role == Role::Copy { Write } else { Create };
            sink.computed(Create, format!("`{}` is computed", other.text()));
            if cap == Write {
                sink.computed(Write, format!("`{}` is computed", other.text()));
            }
        }
    }
}
