//! The tools agents run most whose outputs their options name: compilers
//! (`-o`), `sqlite3`'s database, `ssh-keygen`'s key files, `openssl`'s
//! `-in`/`-out`, `history`'s file; `make -C DIR` / `-f FILE`, which runs
//! recipes the line does not show; and `ssh`, whose remote command sshd
//! starts outside this process tree.

use super::starts::leading_options;
use super::sink::{Daemon, Sink, Unseen};
use super::split::split;
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;
use crate::paths;

/// Compiler options whose value is the next word (gcc and clang spell
/// several as one dash and a name, so no cluster is read as getopt would:
/// `-fno-omit-frame-pointer` holds no `-o`).
const CC_VALUES: &[&str] = &[
    "-I", "-L", "-l", "-D", "-U", "-x", "-MT", "-MQ", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-isysroot", "-B", "-T",
    "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xclang", "-e", "-u", "-z", "-arch", "-target", "-aux-info", "-dumpbase", "-dumpdir", "--param",
    "-mllvm",
];
const RUSTC_VALUES: &[&str] = &[
    "-L", "-l", "--crate-name", "--crate-type", "--edition", "--emit", "--target", "-C", "--codegen", "--cfg", "--check-cfg", "--extern", "--cap-lints",
    "-W", "-A", "-D", "-F", "--warn", "--allow", "--deny", "--forbid", "--sysroot", "--error-format", "--json", "--color", "--remap-path-prefix", "-Z",
    "--print", "--explain",
];

/// `gcc`, `cc`, `clang`, `g++`, `c++`, `rustc`: sources read; the output
/// `-o FILE` (or `-oFILE`) filled; without one, objects or the program are
/// made in the working directory under names the compiler chooses.
#[inline(never)]
pub(super) fn compiler(name: &str, args: &[Arg], sink: &mut Sink) {
    let rustc = name == "rustc";
    let values = if rustc { RUSTC_VALUES } else { CC_VALUES };
    let (mut output, mut out_dir, mut sources, mut only_prints) = (None, None, Vec::new(), false);
    let (mut compile_only, mut assembly, mut library) = (false, false, false);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        match t {
            "-o" => {
                output = args.get(i).cloned();
                i += 1;
            }
            "--out-dir" | "-MF" => {
                let v = args.get(i).cloned();
                i += 1;
                match (t, v) {
                    ("-MF", Some(v)) => sink.fill(&v),
                    (_, v) => out_dir = v,
                }
            }
            "-E" | "-M" | "-MM" | "-fsyntax-only" | "--version" | "-V" | "-v" | "--help" | "-dumpversion" | "-dumpmachine" => only_prints = true,
            "-c" if !rustc => compile_only = true,
            "-S" if !rustc => assembly = true,
            "--crate-type" | "--crate-name" => {
                library |= t == "--crate-name" || args.get(i).is_some_and(|v| v.text() != "bin");
                i += 1;
            }
            _ if values.contains(&t) => i += 1,
            _ if t.starts_with("--out-dir=") => out_dir = Some(Arg::Literal(t["--out-dir=".len()..].to_string())),
            _ if t.starts_with("-o") && !rustc && t.len() > 2 => output = Some(Arg::Literal(t[2..].to_string())),
            _ if t.starts_with('@') => sink.path(&Arg::Literal(t[1..].to_string()), Read),
            _ if t.starts_with('-') && t != "-" => {}
            _ => {
                sources.push(a);
                sink.path(a, Read);
            }
        }
    }
    if let Some(o) = output {
        sink.fill(&o);
        return;
    }
    if sources.is_empty() || only_prints {
        return;
    }
    // Without `-o`: gcc makes `STEM.o` (`-c`) or `STEM.s` (`-S`) in the
    // working directory, else `a.out`; rustc makes the crate's program
    // `STEM` (in `--out-dir`), and names a library itself.
    let stem = |a: &Arg| a.literal().map(|t| paths::file_name(t).rsplit_once('.').map_or(paths::file_name(t), |(stem, _)| stem).to_string());
    let outputs: Option<Vec<String>> = match (rustc, compile_only || assembly) {
        (false, true) => sources.iter().map(|a| stem(a).map(|s| format!("{s}.{}", if compile_only { "o" } else { "s" }))).collect(),
        (false, false) => Some(vec!["a.out".into()]),
        (true, _) if library => None,
        (true, _) => sources.first().and_then(|a| stem(a)).map(|s| vec![s]),
    };
    let folder = out_dir.as_ref().and_then(Arg::literal).map(|d| format!("{}/", d.trim_end_matches('/'))).unwrap_or_default();
    match outputs {
        Some(names) if out_dir.as_ref().is_none_or(|d| d.literal().is_some()) => {
            for n in names {
                sink.fill(&Arg::Literal(format!("{folder}{n}")));
            }
        }
        _ => sink.unknown_names_in(out_dir.as_ref(), &[Create, Write], &format!("{name} names its outputs after the crate")),
    }
}

/// `sqlite3 [opts] DB [SQL…]`: the database is read and written (made when
/// missing); dot commands and SQL that open other files or run programs
/// (`.output`, `.shell`, `ATTACH`, `readfile`), commands from standard input
/// and `-init`/`-cmd` are code the line does not show.
#[inline(never)]
pub(super) fn sqlite(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-init", "-cmd", "-separator", "-newline", "-nullvalue", "-vfs", "-mmap", "-lookaside", "-pagecache", "-heap", "-maxsize", "-escape"]);
    if s.has(&["-version", "-help", "--version", "--help"]) {
        return;
    }
    let Some(db) = s.operands.first() else {
        sink.opaque("sqlite3 reads its commands from standard input".into());
        return;
    };
    if !matches!(db.literal(), Some(":memory:" | "")) {
        sink.path(db, Read);
        if !s.has(&["-readonly"]) {
            sink.fill(db);
        }
    }
    let safe = s.has(&["-safe"]);
    let hidden = !s.values(&["-init", "-cmd"]).is_empty() || (s.operands.len() == 1) || s.operands[1..].iter().any(|sql| !sql_is_plain(sql.text()));
    if hidden && !safe {
        sink.opaque("sqlite3 is given commands that may open other files or run programs, or reads them from standard input".into());
    }
}

/// SQL and dot commands that touch no file but the database.
fn sql_is_plain(sql: &str) -> bool {
    const DOTS: &[&str] = &[".dump", ".schema", ".tables", ".indexes", ".indices", ".headers", ".mode", ".quit", ".exit", ".timeout", ".width", ".show", ".databases", ".help", ".fullschema", ".dbinfo", ".changes", ".nullvalue", ".separator", ".timer", ".eqp", ".stats", ".bail", ".echo"];
    let lower = sql.to_ascii_lowercase();
    let dots_plain = lower.lines().map(str::trim).filter(|l| l.starts_with('.')).all(|l| DOTS.contains(&l.split_whitespace().next().unwrap_or("")));
    let opens = ["attach", "vacuum into", "readfile", "writefile", "load_extension", "edit(", "fts3_tokenizer", "zipfile", "sqlar", "fileio"];
    dots_plain && !opens.iter().any(|w| lower.contains(w))
}

/// `ssh-keygen`: `-f FILE` is the key it makes (FILE and FILE.pub), or
/// the one it reads (`-y`, `-l`, `-e`, `-i`, `-F`, `-B`) or rewrites in place
/// (`-p`, `-c`; `-R`/`-H` on a known-hosts file, keeping FILE.old). With no
/// `-f`, a new key goes to `~/.ssh/id_TYPE`, a credential store.
#[inline(never)]
pub(super) fn ssh_keygen(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-a", "-b", "-C", "-D", "-E", "-F", "-f", "-G", "-I", "-J", "-j", "-K", "-m", "-M", "-N", "-n", "-O", "-P", "-r", "-R", "-s", "-t", "-V", "-w", "-Y", "-Z", "-z"]);
    let home = sink.cx.home.trim_end_matches('/').to_string();
    let file = s.values(&["-f"]).into_iter().next();
    let known_hosts = || Arg::Literal(format!("{home}/.ssh/known_hosts"));
    let with_suffix = |f: &Arg, suffix: &str| f.literal().map(|t| Arg::Literal(format!("{t}{suffix}")));
    if s.has(&["-A"]) {
        sink.unknown_names_in(Some(&Arg::Literal("/etc/ssh".into())), &[Create, Write], "ssh-keygen -A makes the missing host keys");
        return;
    }
    if let Some(ca) = s.values(&["-s"]).into_iter().next() {
        // Signing: each public key gets a `-cert.pub` beside it.
        sink.path(&ca, Read);
        for key in &s.operands {
            sink.path(key, Read);
            if let Some(t) = key.literal() {
                sink.fill(&Arg::Literal(format!("{}-cert.pub", t.trim_end_matches(".pub"))));
            }
        }
        return;
    }
    let reads = s.has(&["-y", "-l", "-e", "-i", "-F", "-B", "-D", "-Q", "-Y"]) || s.short('y') || s.short('l') || s.short('e') || s.short('i') || s.short('B');
    let rewrites = s.has(&["-p", "-c", "-R", "-H"]) || s.short('p') || s.short('c') || s.short('H');
    if s.has(&["-Y"]) {
        for f in &s.operands {
            sink.path(f, Read);
        }
    }
    if rewrites {
        let target = file.or_else(|| (s.has(&["-R"]) || s.short('H')).then(known_hosts));
        if let Some(f) = target {
            sink.path(&f, Read);
            sink.path(&f, Write);
            if s.has(&["-R"]) || s.short('H') {
                if let Some(old) = with_suffix(&f, ".old") {
                    sink.fill(&old);
                }
            }
        }
    } else if reads {
        match file {
            Some(f) => sink.path(&f, Read),
            None if s.has(&["-F"]) => sink.path(&known_hosts(), Read),
            None => {}
        }
    } else if s.has(&["-k"]) || s.short('k') {
        if let Some(f) = file {
            sink.fill(&f);
        }
    } else {
        let kind = s.values(&["-t"]).into_iter().next().and_then(|t| t.literal().map(|t| t.replace('-', "_"))).unwrap_or_else(|| "ed25519".into());
        let key = file.unwrap_or_else(|| Arg::Literal(format!("{home}/.ssh/id_{kind}")));
        sink.fill(&key);
        if let Some(public) = with_suffix(&key, ".pub") {
            sink.fill(&public);
        }
    }
}

/// openssl options whose value is a file it reads, or fills.
const OPENSSL_READS: &[&str] = &[
    "-in", "-key", "-inkey", "-CAfile", "-cert", "-signkey", "-CA", "-CAkey", "-config", "-certfile", "-untrusted", "-kfile", "-paramfile", "-peerkey",
    "-sigfile", "-signature", "-rand", "-extfile", "-dcert", "-dkey", "-chain", "-CRL", "-crl", "-trusted", "-sess_in", "-recip", "-signer", "-content",
    "-data", "-verify_file", "-CAserial",
];
const OPENSSL_FILLS: &[&str] = &["-out", "-keyout", "-writerand", "-sess_out", "-certout", "-msgfile", "-CAserial"];
/// Subcommands whose operands are files (digests, certificates to verify).
const OPENSSL_FILE_OPERANDS: &[&str] = &["dgst", "verify", "gendsa", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3-256", "sha3-512", "asn1parse"];

/// `openssl SUB [opts] [operands]`: `-in` and its kin read, `-out`,
/// `-keyout` and their kin filled, `-passin file:PATH` read; other options
/// take their next word as a value that names no file.
#[inline(never)]
pub(super) fn openssl(args: &[Arg], sink: &mut Sink) {
    let sub = args.first().map(Arg::text).unwrap_or("");
    let mut i = 1;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        let next = args.get(i).cloned();
        if OPENSSL_READS.contains(&t) || OPENSSL_FILLS.contains(&t) {
            if let Some(v) = next {
                if OPENSSL_READS.contains(&t) {
                    sink.path(&v, Read);
                }
                if OPENSSL_FILLS.contains(&t) {
                    sink.fill(&v);
                }
            }
            i += 1;
        } else if matches!(t, "-passin" | "-passout" | "-pass" | "-newkey" | "-pkeyopt") {
            if let Some(f) = next.and_then(|v| v.literal().and_then(|v| v.strip_prefix("file:").or_else(|| v.strip_prefix("param:"))).map(str::to_string)) {
                sink.path(&Arg::Literal(f), Read);
            }
            i += 1;
        } else if t.starts_with('-') {
            // An option's value, if it takes one, is never read as a file:
            // options that name files are listed above.
            if args.get(i).is_some_and(|v| !v.text().starts_with('-')) && !OPENSSL_FILE_OPERANDS.contains(&sub) {
                i += 1;
            }
        } else if OPENSSL_FILE_OPERANDS.contains(&sub) {
            sink.path(a, Read);
        }
    }
}

/// `history -w|-a [FILE]` writes the list (to `$HISTFILE`, `~/.bash_history`,
/// when no file is named), `-r|-n [FILE]` reads one.
#[inline(never)]
pub(super) fn history(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-d"]);
    if s.has(&["-p", "-s"]) || s.short('p') || s.short('s') {
        return; // its words are history text, not files
    }
    let file = s.operands.first().map(|f| (*f).clone()).unwrap_or_else(|| Arg::Literal(format!("{}/.bash_history", sink.cx.home.trim_end_matches('/'))));
    if s.short('w') || s.short('a') {
        sink.fill(&file);
    }
    if s.short('r') || s.short('n') {
        sink.path(&file, Read);
    }
}

/// `make -C DIR`, `make -f FILE`, `make --eval=…`: the recipes run are
/// another folder's or file's, which the line does not show (a plain `make`
/// runs the project's own, which the kernel bounds like its scripts).
#[inline(never)]
pub(super) fn make(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-C", "-f", "-I", "-o", "-W", "-E", "--directory", "--file", "--makefile", "--include-dir", "--old-file", "--assume-old", "--what-if", "--new-file", "--assume-new", "--eval"]);
    // `make SHELL=… CC=…`: the variables the recipes run with.
    let set: Vec<Arg> = s.operands.iter().map(|a| (*a).clone()).collect();
    super::variables::assignments(&super::variables::leading_assignments(&set), sink, 0);
    if s.has(&["-C", "--directory", "-f", "--file", "--makefile", "-E", "--eval"]) {
        sink.opaque("make runs the recipes of a folder or makefile the command line names but does not show".into());
        return;
    }
    // The cleaning targets remove what earlier builds made, by recipes the
    // line does not show: one card up front says so, every time.
    if let Some(target) = s.operands.iter().filter_map(|a| a.literal()).find(|t| CLEANS.contains(t)) {
        let reason = format!("`make {target}` runs the Makefile's {target} recipe, which removes what earlier builds made here (the Makefile, not the line, names what)");
        sink.asks_each_time("make", &[Delete], ".", &reason);
    }
}

/// The targets by which a Makefile removes what it built (the GNU coding
/// standards' names and their usual kin).
const CLEANS: &[&str] = &["clean", "distclean", "mostlyclean", "maintainer-clean", "realclean", "clobber"];

/// ssh's options that run a program here, not on the other host:
/// `-o ProxyCommand=`, `LocalCommand=`, `KnownHostsCommand=`, `Match exec`,
/// the providers it loads (`PKCS11Provider`, `SecurityKeyProvider`, `-I`),
/// and a config file (`-F`), which may hold any of them. Shared by ssh and
/// scp.
pub(super) fn ssh_runs_local(options: &[Arg], config_or_library: bool, sink: &mut Sink) {
    const RUN: &[&str] = &["proxycommand", "localcommand", "knownhostscommand", "pkcs11provider", "securitykeyprovider", "match", "include", "remotecommand"];
    let named = options.iter().any(|o| {
        let key = o.text().split(['=', ' ', '\t']).next().unwrap_or("").to_ascii_lowercase();
        RUN.contains(&key.as_str()) || !matches!(o, Arg::Literal(_))
    });
    if named || config_or_library {
        sink.opaque("ssh runs a program here that its options or config name (ProxyCommand, LocalCommand, a provider library)".into());
    }
}

/// ssh options that take a value.
const SSH_VALUES: &[&str] = &["-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-P", "-Q", "-R", "-S", "-W", "-w"];

/// `ssh [opts] HOST [CMD…]`: sshd on the other side starts the command, or
/// a shell that reads standard input, outside this process tree and any
/// fence of this call. Only what connects to run nothing (`-N`, `-W`, `-O`,
/// `-G`, `-V`, `-Q`) stays local; its files are read (`-i`, `-F`) or
/// written (`-E`).
#[inline(never)]
pub(super) fn remote_shell(args: &[Arg], sink: &mut Sink) {
    let (opts, i) = leading_options(args, SSH_VALUES, false);
    for (o, v) in &opts {
        match (o.as_str(), v) {
            ("-i" | "-F", Some(f)) => sink.path(f, Read),
            ("-E", Some(f)) => sink.fill(f),
            _ => {}
        }
    }
    let values = |names: &[&str]| -> Vec<Arg> { opts.iter().filter(|(o, _)| names.contains(&o.as_str())).filter_map(|(_, v)| v.clone()).collect() };
    ssh_runs_local(&values(&["-o"]), !values(&["-F"]).is_empty() || !values(&["-I"]).is_empty(), sink);
    // A remote forward (or a tunnel device) lets the other host reach this
    // one; a forward sent to the background outlives the call; `-O` talks
    // to a master connection started outside it, and `-M` is one. (A local
    // forward in the foreground ends with the call.)
    let has = |names: &[&str]| opts.iter().any(|(o, _)| names.contains(&o.as_str()));
    if has(&["-R", "-w", "-O", "-M"]) || (has(&["-f"]) && has(&["-L", "-D"])) {
        let reason = "ssh forwards ports from the other host, outlives the call or controls a master connection, which carry connections outside this process tree and its fence";
        sink.out.unseen.push(Unseen::Escapes { program: None, reason: reason.into() });
        return;
    }
    let runs_nothing = opts.iter().any(|(o, _)| matches!(o.as_str(), "-N" | "-W" | "-O" | "-G" | "-V" | "-Q"));
    if ssh_auth_test(args) {
        // The host's key is checked against known_hosts, which ssh reads
        // (public keys, no secret); the key itself stays in the agent.
        let ssh = format!("{}/.ssh", sink.cx.home.trim_end_matches('/'));
        let reason = "ssh -T git@HOST only tests that the host accepts your key: no command runs there (a git host's shell runs none) and the key stays in the agent".to_string();
        sink.out.unseen.push(Unseen::Socket { daemon: Daemon::SshAgent, program: "ssh".into(), reads: vec![format!("{ssh}/known_hosts")], asks: false, reason });
        return;
    }
    if args.get(i).is_some() && !runs_nothing {
        let reason = "sshd on the other host starts the command (or a shell reading standard input) outside this process tree and its fence";
        sink.out.unseen.push(Unseen::Escapes { program: None, reason: reason.into() });
    }
}

/// `ssh -T [plain options] git@HOST` and nothing after it: the
/// authentication test a git host answers ("Hi …! You've successfully
/// authenticated") without running anything. Options that forward, name a
/// config, a key file, a program or a command make it something else.
pub(super) fn ssh_auth_test(args: &[Arg]) -> bool {
    let (opts, i) = leading_options(args, SSH_VALUES, false);
    let plain = opts.iter().all(|(o, _)| matches!(o.as_str(), "-T" | "-v" | "-vv" | "-vvv" | "-q" | "-4" | "-6" | "-p" | "-x" | "-a" | "-C" | "-n"));
    let has_t = opts.iter().any(|(o, _)| o == "-T");
    let dest = args.get(i).and_then(Arg::literal).unwrap_or("");
    plain && has_t && args.len() == i + 1 && dest.strip_prefix("git@").is_some_and(|h| !h.is_empty() && !h.contains(['@', '/', ' ']))
}

/// `ssh-add`: `-l`/`-L` only list what the agent holds (its socket, for the
/// call); a key the line names is handed to the agent, which the user
/// approves each time (the key is read for that call alone, never stored as
/// a rule on a credential store); with no key named it adds the default keys
/// in `~/.ssh`, a credential store, which no card opens.
#[inline(never)]
pub(super) fn ssh_add(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-E", "-S", "-t", "-h", "-H"]);
    let lists = s.short('l') || s.short('L');
    if lists && s.operands.is_empty() {
        let reason = "ssh-add -l only lists the keys the agent holds".to_string();
        sink.out.unseen.push(Unseen::Socket { daemon: Daemon::SshAgent, program: "ssh-add".into(), reads: Vec::new(), asks: false, reason });
        return;
    }
    if s.operands.is_empty() {
        if !(s.short('D') || s.short('x') || s.short('X') || s.short('e') || s.short('s')) {
            sink.path(&Arg::Literal(format!("{}/.ssh", sink.cx.home.trim_end_matches('/'))), Read);
        }
        let reason = "ssh-add changes what your ssh agent holds".to_string();
        sink.out.unseen.push(Unseen::Socket { daemon: Daemon::SshAgent, program: "ssh-add".into(), reads: Vec::new(), asks: true, reason });
        return;
    }
    for key in &s.operands {
        let Some(k) = key.literal() else {
            sink.opaque("ssh-add is handed a key whose name is computed when the line runs".into());
            continue;
        };
        let dirs = sink.dirs().cloned().unwrap_or_else(|| vec!["/".into()]);
        for d in dirs {
            let path = crate::paths::absolute(&d, k, sink.cx.home);
            let reason = format!("ssh-add hands the key {path} to your ssh agent");
            sink.out.unseen.push(Unseen::Socket { daemon: Daemon::SshAgent, program: "ssh-add".into(), reads: vec![path.clone(), format!("{path}.pub")], asks: true, reason });
        }
    }
}

/// `gio SUB …`: its file subcommands read as the programs they are
/// (`copy` as cp, `move` as mv, `remove`/`trash` as rm, `mkdir`), `save`
/// fills its file, `set` and `rename` change theirs; `open`, `launch` and
/// `mount` hand the work to the desktop, outside this process tree.
/// `file://` locations are paths; other locations are computed.
#[inline(never)]
pub(super) fn gio(args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(sub) = args.first().map(Arg::text) else { return };
    let rest: Vec<Arg> = args[1..]
        .iter()
        .map(|a| match a.literal() {
            Some(t) if t.starts_with("file://") => Arg::Literal(t["file://".len()..].to_string()),
            Some(t) if t.contains("://") => Arg::Computed { text: t.to_string() },
            _ => a.clone(),
        })
        .collect();
    let as_program = |program: &str| -> Vec<Arg> { std::iter::once(Arg::Literal(program.into())).chain(rest.iter().cloned()).collect() };
    let s = split(&rest, &["-a", "--attributes", "-t", "--type", "-e", "--etag"]);
    match sub {
        "copy" => sink.start(&as_program("cp"), depth),
        "move" => sink.start(&as_program("mv"), depth),
        "remove" | "trash" => {
            for f in &s.operands {
                sink.path(f, Delete);
            }
            if sub == "trash" && s.has(&["--empty"]) {
                let trash = Arg::Literal(format!("{}/.local/share/Trash", sink.cx.home.trim_end_matches('/')));
                sink.unknown_names_in(Some(&trash), &[Delete], "gio trash --empty removes what the trash holds");
            }
        }
        "mkdir" => sink.start(&as_program("mkdir"), depth),
        "save" => {
            if let Some(f) = s.operands.first() {
                sink.fill(f);
            }
        }
        "set" => {
            if let Some(f) = s.operands.first() {
                sink.path(f, Write);
            }
        }
        "rename" => {
            if let [from, to, ..] = s.operands.as_slice() {
                sink.path(from, Delete);
                if let (Some(f), Some(t)) = (from.literal(), to.literal()) {
                    sink.path(&Arg::Literal(format!("{}/{t}", super::writers::folder_of(f).trim_end_matches('/'))), Create);
                } else {
                    sink.computed(Create, "gio rename names the new file at run time".into());
                }
            }
        }
        "cat" | "info" | "list" | "tree" => {
            for f in &s.operands {
                sink.path(f, Read);
            }
        }
        "open" | "launch" | "mount" => sink.out.unseen.push(Unseen::Escapes {
            program: None,
            reason: format!("gio {sub} hands the work to the desktop, outside this process tree and its fence"),
        }),
        _ => {}
    }
}
