//! Package managers and builders. What an option or operand names (an
//! output file, a target or prefix folder, a new project) is judged as a
//! path; a default place outside the project (`~/.cargo`, `~/go`, the
//! system's `/usr`) is computed there; an install into a place only their
//! configuration or environment names (a global prefix, an interpreter's
//! site-packages, `GEM_HOME`) is opaque, as is running a package they may
//! download first (`npx`). The project's own code they run (build and
//! lifecycle scripts, tests) is the kernel's business, as a script's is.

use super::sink::{create_or_write, Sink};
use super::split::{split, Split};
use crate::policy::capability::Capability::{self, *};
use crate::shell::parse::Arg;

/// Judges `name ARGS…`.
#[inline(never)]
pub(super) fn package_manager(name: &str, args: &[Arg], sink: &mut Sink, depth: usize) {
    match name {
        "npm" | "pnpm" | "yarn" => node(name, args, sink),
        "npx" | "pnpx" | "uvx" => sink.opaque(format!("{name} runs a package it may download first")),
        "pip" | "pip3" => pip(args, sink),
        "pipx" if !matches!(first_word(args), Some("list" | "environment" | "--version" | "help") | None) => {
            sink.opaque("pipx installs and runs applications in environments it chooses".into());
        }
        "uv" => uv(args, sink),
        "virtualenv" => {
            // `virtualenv DIR`: a new environment, seeded from wheels it ships.
            let s = split(args, &["-p", "--python", "--prompt", "--seeder", "--activators", "--creator", "--app-data", "--extra-search-dir", "--pip", "--setuptools", "--wheel", "--discovery", "--read-only-app-data", "--copies"]);
            if !s.values(&["--app-data", "--extra-search-dir"]).is_empty() {
                sink.opaque("virtualenv seeds from a folder the line names, whose wheels run code".into());
            }
            for dir in &s.operands {
                sink.makes_folder(dir);
            }
        }
        "cargo" => cargo(args, sink),
        "rustup" => rustup(args, sink, depth),
        "go" => go(args, sink),
        "apt" | "apt-get" | "aptitude" => apt(args, sink),
        "dpkg" | "dpkg-deb" => dpkg(name, args, sink),
        "gem" => gem(args, sink),
        "bundle" | "bundler" => bundle(args, sink, depth),
        "poetry" => poetry(args, sink, depth),
        "vite" => vite(args, sink),
        "brew" => {
            let changes = ["install", "uninstall", "remove", "rm", "upgrade", "reinstall", "tap", "untap", "link", "unlink", "cleanup", "autoremove", "pin", "unpin", "bundle", "update", "postinstall", "migrate", "services"];
            if first_word(args).is_some_and(|w| changes.contains(&w)) {
                sink.opaque("brew changes its prefix and runs formula code".into());
            }
        }
        "conda" | "mamba" | "micromamba" => {
            let s = split(args, &["-n", "--name", "-p", "--prefix", "-c", "--channel", "-f", "--file"]);
            let changes = ["install", "create", "remove", "uninstall", "update", "upgrade", "env", "clean", "config", "init", "run"];
            if s.operands.first().is_some_and(|w| changes.contains(&w.text())) {
                match s.values(&["-p", "--prefix"]).first() {
                    Some(p) if s.operands.first().map(|a| a.text()) != Some("run") => sink.unknown_names_in(Some(p), &[Create, Write, Delete], &format!("{name} installs into the environment `{}`", p.text())),
                    _ => sink.opaque(format!("{name} changes or runs an environment its configuration names")),
                }
            }
        }
        _ => {}
    }
}

/// `vite build [root]`: vite empties its output folder (`dist` below the
/// root, or `--outDir`) before it writes the new build there. That folder
/// holds only what vite makes, so delete in it is granted for the call even
/// beside the code vite runs (its config, its plugins). An `outDir` set only
/// in the config is not known here: that build's removals meet the fence.
fn vite(args: &[Arg], sink: &mut Sink) {
    // Options that always take a value (vite's optional ones are written `--opt=value`).
    let s = split(args, &["--outDir", "--assetsDir", "--base", "--mode", "-m", "--config", "-c", "--logLevel", "-l", "--target", "--filter"]);
    let words: Vec<&str> = s.operands.iter().map(|a| a.text()).collect();
    if words.first() != Some(&"build") {
        return;
    }
    let empties = !args.iter().any(|a| matches!(a.text(), "--emptyOutDir=false" | "--no-emptyOutDir"));
    let root = s.operands.get(1).and_then(|a| a.literal()).unwrap_or(".");
    let out = s.values(&["--outDir"]).first().and_then(|v| v.literal().map(str::to_string)).unwrap_or_else(|| "dist".into());
    if !empties || !s.values(&["--outDir"]).iter().all(|v| v.literal().is_some()) {
        return;
    }
    let dir = if out.starts_with('/') { out } else { format!("{}/{out}", root.trim_end_matches('/')) };
    sink.regenerable("vite", &[Delete], &dir, "vite empties its own output folder before each build (it writes it again from the sources)");
}

/// The first word that is not an option.
fn first_word(args: &[Arg]) -> Option<&str> {
    args.iter().map(Arg::text).find(|t| !t.starts_with('-'))
}

fn home(sink: &Sink, rest: &str) -> Arg {
    Arg::Literal(format!("{}/{rest}", sink.cx.home.trim_end_matches('/')))
}

/// Files and folders made under `dir` with names the tool chooses.
fn under(sink: &mut Sink, dir: &Arg, caps: &[Capability], why: &str) {
    sink.unknown_names_in(Some(dir), caps, why);
}

/// npm, pnpm, yarn.
fn node(name: &str, args: &[Arg], sink: &mut Sink) {
    let mut values = vec!["--prefix", "-C", "--dir", "--cwd", "--cache", "--userconfig", "--globalconfig", "--registry", "-w", "--workspace", "--filter", "--loglevel", "--location", "--pack-destination", "--tag", "--otp", "--script-shell"];
    if name == "yarn" {
        values.extend(["-f", "--filename", "-o", "--out", "--modules-folder"]);
    }
    let s = split(args, &values);
    let words: Vec<&str> = s.operands.iter().map(|a| a.text()).collect();
    let sub = words.first().copied().unwrap_or("install");
    let global = s.has(&["--global"]) || s.short('g') || s.values(&["--location"]).iter().any(|v| v.text() == "global") || (name == "yarn" && sub == "global");
    let prefix = s.values(&["--prefix", "-C", "--dir", "--cwd"]).into_iter().next();
    if s.has(&["--script-shell"]) {
        sink.opaque(format!("{name} runs its scripts through a shell the line names"));
    }
    // npm keeps its cache and logs in ~/.npm, a package cache of the
    // baseline: made first when a fresh home has none (the fence attaches
    // only to what exists, and npm fails when it cannot make it).
    if name == "npm" && !s.has(&["--cache"]) {
        let cache = format!("{}/.npm", sink.cx.home.trim_end_matches('/'));
        if sink.cx.host.kind(&cache) == crate::host::PathKind::Missing {
            sink.makes_folder(&Arg::Literal(cache));
        }
    }
    const INSTALLS: &[&str] = &[
        "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add", "ci", "clean-install", "ic",
        "install-clean", "update", "up", "upgrade", "udpate", "uninstall", "remove", "rm", "r", "un", "unlink", "prune", "dedupe", "ddp",
        "rebuild", "rb", "install-test", "it", "install-ci-test", "cit", "import", "audit", "global",
    ];
    match sub {
        _ if INSTALLS.contains(&sub) || matches!(sub, "link" | "ln") => {
            if global || matches!(sub, "link" | "ln") && words.len() == 1 {
                sink.opaque(format!("{name} {sub} changes the global prefix its configuration names"));
            } else if let Some(p) = &prefix {
                under(sink, p, &[Create, Write, Delete], &format!("{name} {sub} installs into `{}`", p.text()));
            } else {
                project_install(name, sink);
            }
            if let Some(dir) = s.values(&["--modules-folder"]).first() {
                under(sink, dir, &[Create, Write, Delete], &format!("{name} installs into `{}`", dir.text()));
            }
        }
        "exec" | "x" | "dlx" | "create" => sink.opaque(format!("{name} {sub} runs a package it may download first")),
        // `npm version patch`: the manifest and lock file written, and in a
        // repository a commit and a tag made by the git it runs.
        "version" if words.len() > 1 => {
            let dir = prefix.as_ref().and_then(Arg::literal).unwrap_or(".").trim_end_matches('/').to_string();
            sink.fill(&Arg::Literal(format!("{dir}/package.json")));
            // The lock file is written where there is one.
            sink.path_with(&Arg::Literal(format!("{dir}/package-lock.json")), |_, kind| if kind == crate::host::PathKind::Missing { Read } else { Write });
            sink.out.writes_repository = true;
        }
        "init" | "innit" => {
            if words.len() > 1 {
                sink.opaque(format!("{name} init runs the initializer package `{}`", words[1]));
            } else {
                let dir = prefix.as_ref().and_then(Arg::literal).unwrap_or(".");
                sink.fill(&Arg::Literal(format!("{}/package.json", dir.trim_end_matches('/'))));
            }
        }
        "pack" => {
            match s.values(&["-f", "--filename", "-o", "--out"]).first().filter(|_| name == "yarn") {
                Some(f) => sink.fill(f),
                None => {
                    let dir = s.values(&["--pack-destination"]).into_iter().next().or(prefix);
                    under(sink, dir.as_ref().unwrap_or(&Arg::Literal(".".into())), &[Create, Write], &format!("{name} pack names the tarball after the package"));
                }
            }
        }
        "config" | "c" | "set" | "login" | "adduser" | "add-user" | "logout" | "token" => {
            let writes = matches!(sub, "set" | "login" | "adduser" | "add-user" | "logout" | "token") || matches!(words.get(1), Some(&("set" | "delete" | "edit" | "rm" | "fix")));
            if !writes {
                return;
            }
            let location = s.values(&["--location"]).first().map(|v| v.text().to_string());
            match (name, s.values(&["--userconfig"]).first(), location.as_deref()) {
                ("npm", _, Some("global")) => sink.opaque("npm writes the global npmrc its prefix names".into()),
                ("npm", _, Some("project")) => sink.fill(&Arg::Literal(".npmrc".into())),
                ("npm", Some(f), _) => sink.fill(f),
                ("npm", None, _) if !global => {
                    let npmrc = home(sink, ".npmrc");
                    sink.fill(&npmrc);
                }
                _ => sink.opaque(format!("{name} {sub} writes a configuration file it chooses")),
            }
        }
        "cache" => {
            if matches!(words.get(1), Some(&("clean" | "clear" | "add" | "verify" | "rm"))) {
                let dir = s.values(&["--cache"]).into_iter().next().unwrap_or_else(|| home(sink, if name == "yarn" { ".cache/yarn" } else { ".npm" }));
                under(sink, &dir, &[Create, Write, Delete], &format!("{name} cache changes `{}`", dir.text()));
            }
        }
        "store" => sink.opaque(format!("{name} store changes the store its configuration names")),
        _ => {}
    }
}

/// An install into the project where it runs: its `node_modules` filled,
/// its manifest and lock file written (in the workspace, the baseline's;
/// elsewhere — another project, the harness's own profile — asked or
/// refused as those paths are).
fn project_install(name: &str, sink: &mut Sink) {
    let lock = match name {
        "pnpm" => "pnpm-lock.yaml",
        "yarn" => "yarn.lock",
        _ => "package-lock.json",
    };
    sink.path_with(&Arg::Literal("node_modules".into()), create_or_write);
    for file in ["package.json", lock] {
        sink.fill(&Arg::Literal(file.into()));
    }
    // pnpm's store and metadata cache (package caches of the baseline):
    // made first when missing, since the fence attaches only to what exists.
    if name == "pnpm" {
        for cache in [".local/share/pnpm/store", ".cache/pnpm"] {
            sink.makes_folder(&home(sink, cache));
        }
        // pnpm writes its lockfile to a temp file and renames it into place:
        // that one entry, for this call (runner/removals.rs).
        sink.regenerable("pnpm", &[Delete], lock, "pnpm replaces its own lockfile through a temp file (it writes it again from package.json)");
    }
}

/// pip / pip3 (and `python -m pip`).
pub(super) fn pip(args: &[Arg], sink: &mut Sink) {
    let s = split(
        args,
        &[
            "--log", "--log-file", "--cache-dir", "--python", "--proxy", "--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert",
            "--src", "-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "-d", "--dest", "-w", "--wheel-dir", "-i",
            "--index-url", "--extra-index-url", "-f", "--find-links", "--platform", "--python-version", "--implementation", "--abi", "--upgrade-strategy",
            "--progress-bar", "--report", "-e", "--editable", "--global-option", "--config-settings", "-C", "--no-binary", "--only-binary", "--format",
            "--exclude", "--path", "--keyring-provider", "--use-feature", "--use-deprecated", "--group",
        ],
    );
    for v in s.values(&["--log", "--log-file", "--report"]) {
        sink.fill(&v);
    }
    for v in s.values(&["-r", "--requirement", "-c", "--constraint"]) {
        sink.path(&v, Read);
    }
    let sub = s.operands.first().map(|a| a.text()).unwrap_or("");
    match sub {
        "install" if !s.has(&["--dry-run"]) => {
            for v in s.values(&["--src"]) {
                under(sink, &v, &[Create, Write], "pip checks editable projects out into `--src`");
            }
            if let Some(t) = s.values(&["-t", "--target", "--prefix", "--root"]).first() {
                under(sink, t, &[Create, Write, Delete], &format!("pip installs into `{}`", t.text()));
            } else if s.has(&["--user"]) {
                let local = home(sink, ".local");
                under(sink, &local, &[Create, Write, Delete], "pip --user installs into ~/.local");
            } else {
                sink.opaque("pip install writes into the environment of the interpreter it belongs to, which the line does not name".into());
            }
        }
        "uninstall" => sink.opaque("pip uninstall removes files from the environment of the interpreter it belongs to".into()),
        "download" => {
            let d = s.values(&["-d", "--dest"]).into_iter().next().unwrap_or(Arg::Literal(".".into()));
            under(sink, &d, &[Create, Write], "pip download names the files after the packages");
        }
        "wheel" => {
            let d = s.values(&["-w", "--wheel-dir"]).into_iter().next().unwrap_or(Arg::Literal(".".into()));
            under(sink, &d, &[Create, Write], "pip wheel names the wheels after the packages");
        }
        "cache" if matches!(s.operands.get(1).map(|a| a.text()), Some("purge" | "remove")) => {
            let d = s.values(&["--cache-dir"]).into_iter().next().unwrap_or_else(|| home(sink, ".cache/pip"));
            under(sink, &d, &[Delete], "pip cache removes cached files");
        }
        "config" if matches!(s.operands.get(1).map(|a| a.text()), Some("set" | "unset" | "edit")) => {
            if s.has(&["--global"]) {
                sink.fill(&Arg::Literal("/etc/pip.conf".into()));
            } else if s.has(&["--site"]) {
                sink.opaque("pip config --site writes the configuration of the interpreter's environment".into());
            } else {
                let conf = home(sink, ".config/pip/pip.conf");
                sink.fill(&conf);
            }
        }
        _ => {}
    }
}

/// uv.
fn uv(args: &[Arg], sink: &mut Sink) {
    let s = split(
        args,
        &[
            "--directory", "--project", "--cache-dir", "--config-file", "-p", "--python", "--color", "--index", "--index-url", "--default-index",
            "--extra-index-url", "-f", "--find-links", "-o", "--output-file", "--out-dir", "-t", "--target", "--prefix", "-r", "--requirements",
            "--with", "--package", "--extra", "--group", "--script", "--name",
        ],
    );
    let words: Vec<&str> = s.operands.iter().map(|a| a.text()).collect();
    let project = s.values(&["--directory", "--project"]).into_iter().next();
    for v in s.values(&["-o", "--output-file"]) {
        sink.fill(&v);
    }
    match words.first().copied().unwrap_or("") {
        "venv" => {
            let dir = s.operands.get(1).map(|a| (*a).clone()).unwrap_or(Arg::Literal(".venv".into()));
            sink.makes_folder(&dir);
            if s.values(&["--cache-dir"]).is_empty() {
                sink.makes_folder(&home(sink, ".cache/uv"));
            }
        }
        "init" => {
            if let Some(p) = s.operands.get(1) {
                sink.path_with(p, create_or_write);
            }
        }
        "pip" if matches!(words.get(1), Some(&("install" | "uninstall" | "sync"))) => match s.values(&["-t", "--target", "--prefix"]).first() {
            Some(t) => under(sink, t, &[Create, Write, Delete], &format!("uv installs into `{}`", t.text())),
            None => sink.opaque("uv pip writes into the environment it finds at run time (VIRTUAL_ENV, .venv, --system)".into()),
        },
        "run" | "tool" | "python" | "self" => sink.opaque(format!("uv {} installs into and runs from environments it chooses", words[0])),
        "build" => {
            if let Some(d) = s.values(&["-o", "--out-dir"]).first() {
                under(sink, d, &[Create, Write], "uv build names the distributions after the package");
            }
        }
        "cache" if matches!(words.get(1), Some(&("clean" | "prune"))) => {
            let d = s.values(&["--cache-dir"]).into_iter().next().unwrap_or_else(|| home(sink, ".cache/uv"));
            under(sink, &d, &[Delete], "uv cache removes cached files");
        }
        "add" | "remove" | "sync" | "lock" => {
            if let Some(p) = &project {
                under(sink, p, &[Create, Write, Delete], &format!("uv changes the project in `{}`", p.text()));
            }
        }
        _ => {}
    }
}

/// cargo.
fn cargo(args: &[Arg], sink: &mut Sink) {
    let s = split(
        args,
        &[
            "--manifest-path", "--target-dir", "--artifact-dir", "--out-dir", "--root", "--path", "-p", "--package", "-j", "--jobs", "--target",
            "--features", "-F", "--bin", "--example", "--test", "--bench", "--profile", "--message-format", "--color", "--config", "-Z",
            "--lockfile-path", "--index", "--registry", "--git", "--branch", "--tag", "--rev", "--version", "--vers", "--name", "--vcs", "--edition",
            "--exclude", "--format-version", "-C", "--token",
        ],
    );
    let words: Vec<&Arg> = s.operands.iter().copied().filter(|a| !a.text().starts_with('+')).collect();
    if let Some(d) = s.values(&["-C"]).first() {
        sink.opaque(format!("cargo -C `{}` runs in another folder", d.text()));
        return;
    }
    // `--config KEY=VALUE` (or a file) may name a rustc wrapper, a linker
    // or a runner.
    if !s.values(&["--config"]).is_empty() {
        sink.opaque("cargo --config sets configuration that may name a program cargo runs".into());
    }
    for d in s.values(&["--target-dir"]) {
        under(sink, &d, &[Create, Write, Delete], &format!("cargo builds into `{}`", d.text()));
    }
    for d in s.values(&["--artifact-dir", "--out-dir"]) {
        under(sink, &d, &[Create, Write], &format!("cargo copies its artifacts into `{}`", d.text()));
    }
    let root = s.values(&["--root"]).into_iter().next().unwrap_or_else(|| home(sink, ".cargo"));
    match words.first().map(|a| a.text()).unwrap_or("") {
        "install" => under(sink, &root, &[Create, Write, Delete], &format!("cargo install puts binaries under `{}`", root.text())),
        "uninstall" => under(sink, &root, &[Write, Delete], &format!("cargo uninstall removes binaries under `{}`", root.text())),
        "new" => {
            if let Some(p) = words.get(1) {
                sink.makes_folder(p);
                workspace_manifests(p, sink);
            }
        }
        "init" => {
            let p = words.get(1).map(|a| (*a).clone()).unwrap_or(Arg::Literal(".".into()));
            workspace_manifests(&p, sink);
            sink.path_with(&p, create_or_write);
        }
        "vendor" => {
            let p = words.get(1).map(|a| (*a).clone()).unwrap_or(Arg::Literal("vendor".into()));
            sink.path_with(&p, create_or_write);
        }
        "login" | "logout" => {
            let credentials = home(sink, ".cargo/credentials.toml");
            sink.fill(&credentials);
        }
        _ => {}
    }
}

/// `cargo new`/`init` in a cargo workspace adds the new package to the
/// workspace's `Cargo.toml`, writing it anew through a temp file renamed
/// over it: that file's own need, granted for the call (cargo edits the
/// manifest and keeps everything else in it).
fn workspace_manifests(package: &Arg, sink: &mut Sink) {
    let Some(p) = package.literal() else { return };
    let Some(dirs) = sink.dirs().cloned() else { return };
    let ws = crate::paths::normalize(sink.cx.workspace);
    for d in dirs {
        let mut at = crate::paths::parent(&crate::paths::absolute(&d, p, sink.cx.home)).to_string();
        while crate::paths::within(&at, &ws) {
            let manifest = format!("{}/Cargo.toml", at.trim_end_matches('/'));
            if sink.cx.host.kind(&manifest) == crate::host::PathKind::File {
                sink.path(&Arg::Literal(manifest.clone()), Write);
                let reason = "cargo adds the new package to its workspace's Cargo.toml, which it rewrites through a temp file renamed over it".to_string();
                sink.out.unseen.push(super::sink::Unseen::SelfGuarded { program: "cargo".into(), capabilities: vec![Delete], scope: vec![manifest], reason });
                break;
            }
            if at == ws {
                break;
            }
            at = crate::paths::parent(&at).to_string();
        }
    }
}

/// rustup: toolchains live in `~/.rustup`; `rustup run TOOLCHAIN CMD…` runs CMD.
fn rustup(args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(at) = args.iter().position(|a| !a.text().starts_with('-')) else { return };
    match args[at].text() {
        "run" => {
            let rest = args.get(at + 2..).unwrap_or(&[]);
            let from = rest.iter().position(|a| !a.text().starts_with('-')).unwrap_or(rest.len());
            sink.start(&rest[from..], depth);
        }
        "install" | "update" | "uninstall" | "toolchain" | "component" | "target" | "default" | "set" | "override" => {
            sink.own_home("rustup", ".rustup", &[Create, Write, Delete], "rustup installs toolchains it fetches and checks against their published hashes into its own ~/.rustup, which holds nothing of yours");
        }
        "self" => {
            let dir = home(sink, ".rustup");
            under(sink, &dir, &[Create, Write, Delete], "rustup changes its toolchains under ~/.rustup");
            let bin = home(sink, ".cargo/bin");
            under(sink, &bin, &[Create, Write, Delete], "rustup self replaces its programs in ~/.cargo/bin");
        }
        _ => {}
    }
}

/// go: its flags are words (`-coverprofile`), each `-name value` or
/// `-name=value`; only those listed take a separate value.
fn go(args: &[Arg], sink: &mut Sink) {
    const VALUES: &[&str] = &[
        "o", "C", "p", "modfile", "mod", "tags", "ldflags", "gcflags", "asmflags", "run", "bench", "count", "timeout", "coverprofile", "cpuprofile",
        "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "exec", "toolexec", "overlay", "pgo", "covermode", "coverpkg",
        "benchtime", "parallel", "cpu", "fuzz", "fuzztime", "buildmode", "compiler", "installsuffix", "pkgdir", "buildvcs", "shuffle", "skip",
        "list", "vet", "fuzzminimizetime", "benchmem", "coverprofile", "json", "reuse",
    ];
    let mut flags: Vec<(String, Option<Arg>)> = Vec::new();
    let mut words: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text();
        if t.starts_with('-') && t.len() > 1 && matches!(a, Arg::Literal(_)) {
            let name = t.trim_start_matches('-');
            match name.split_once('=') {
                Some((n, v)) => flags.push((n.to_string(), Some(Arg::Literal(v.to_string())))),
                None if VALUES.contains(&name) && !matches!(name, "json" | "benchmem") => {
                    flags.push((name.to_string(), args.get(i).cloned()));
                    i += 1;
                }
                None => flags.push((name.to_string(), None)),
            }
        } else {
            words.push(a);
        }
    }
    let value = |n: &[&str]| -> Vec<Arg> { flags.iter().filter(|(f, _)| n.contains(&f.as_str())).filter_map(|(_, v)| v.clone()).collect() };
    let has = |n: &str| flags.iter().any(|(f, _)| f == n);
    let sub = words.first().map(|a| a.text()).unwrap_or("");
    if let Some(d) = value(&["C"]).first() {
        sink.opaque(format!("go -C `{}` runs in another folder", d.text()));
        return;
    }
    for f in value(&["modfile"]) {
        sink.path(&f, Read);
        sink.fill(&f);
    }
    for program in value(&["exec", "toolexec"]) {
        // go starts it with each compiled tool or test binary as its words,
        // which the line does not show.
        sink.opaque(format!("go -{} `{}` runs that program around every tool or test binary it starts", if value(&["toolexec"]).contains(&program) { "toolexec" } else { "exec" }, program.text()));
        sink.shell_program(&program, 0);
    }
    let outdir = value(&["outputdir"]).into_iter().next();
    if let Some(d) = &outdir {
        under(sink, d, &[Create, Write], "go test writes its profiles into -outputdir");
    }
    for f in value(&["coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace"]) {
        match (&outdir, f.literal()) {
            (Some(Arg::Literal(d)), Some(t)) if !t.starts_with('/') => sink.fill(&Arg::Literal(format!("{d}/{t}"))),
            _ => sink.fill(&f),
        }
    }
    let gopath = home(sink, "go");
    let modcache = home(sink, "go/pkg/mod");
    match sub {
        "build" | "test" => {
            for o in value(&["o"]) {
                if o.text().ends_with('/') {
                    under(sink, &o, &[Create, Write], "go build names the binaries after the packages");
                } else {
                    sink.fill(&o);
                }
            }
        }
        "install" => {
            let bin = home(sink, "go/bin");
            under(sink, &bin, &[Create, Write, Delete], "go install puts binaries in GOBIN (by default ~/go/bin)");
            under(sink, &modcache, &[Create, Write], "go fetches modules into GOMODCACHE (by default ~/go/pkg/mod)");
        }
        "get" | "mod" if sub == "get" || words.get(1).map(|a| a.text()) == Some("download") => {
            let why = "go fetches modules into its own module cache (~/go/pkg/mod), each checked against go.sum and the checksum database, and builds nothing";
            sink.own_home("go", "go/pkg/mod", &[Create, Write, Delete], why);
            if sub == "get" {
                for f in ["go.mod", "go.sum"] {
                    sink.fill(&Arg::Literal(f.into()));
                }
            }
        }
        "mod" if words.get(1).map(|a| a.text()) == Some("vendor") => {
            let dir = value(&["o"]).into_iter().next().unwrap_or(Arg::Literal("vendor".into()));
            sink.path_with(&dir, create_or_write);
        }
        "clean" => {
            if has("cache") || has("testcache") || has("fuzzcache") {
                let cache = home(sink, ".cache/go-build");
                under(sink, &cache, &[Delete], "go clean removes the build cache");
            }
            if has("modcache") {
                under(sink, &modcache, &[Delete], "go clean -modcache removes the module cache");
            }
            if has("i") {
                under(sink, &gopath, &[Delete], "go clean -i removes installed binaries");
            }
        }
        "env" if has("w") || has("u") => {
            let env = home(sink, ".config/go/env");
            sink.fill(&env);
        }
        _ => {}
    }
}

/// apt, apt-get, aptitude: the system's packages live in `/usr` (and
/// `/etc`, `/var/lib/dpkg`), which no one may change here.
fn apt(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-o", "-c", "-t", "-a", "--option", "--config-file", "--target-release", "--host-architecture"]);
    let simulate = s.short('s') || s.has(&["--simulate", "--dry-run", "--just-print", "--recon", "--no-act"]);
    for deb in s.operands.iter().skip(1).filter(|a| a.text().contains('/') && a.text().ends_with(".deb")) {
        sink.path(deb, Read);
    }
    match s.operands.first().map(|a| a.text()).unwrap_or("") {
        "install" | "reinstall" | "remove" | "purge" | "upgrade" | "full-upgrade" | "dist-upgrade" | "autoremove" | "autopurge" | "build-dep" | "satisfy" | "markauto" => {
            if simulate {
            } else if s.short('d') || s.has(&["--download-only"]) {
                under(sink, &Arg::Literal("/var/cache/apt/archives".into()), &[Create, Write], "apt downloads the packages into its cache");
            } else {
                under(sink, &Arg::Literal("/usr".into()), &[Create, Write, Delete], "apt changes the system's installed files");
            }
        }
        "update" => under(sink, &Arg::Literal("/var/lib/apt/lists".into()), &[Create, Write, Delete], "apt update replaces the package lists"),
        "download" | "source" => under(sink, &Arg::Literal(".".into()), &[Create, Write], "apt names the files after the packages"),
        "clean" | "autoclean" => under(sink, &Arg::Literal("/var/cache/apt/archives".into()), &[Delete], "apt removes its cached packages"),
        _ => {}
    }
}

/// dpkg and dpkg-deb.
fn dpkg(name: &str, args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["--admindir", "--instdir", "--root", "-D", "--debug", "--log", "--status-fd", "--path-include", "--path-exclude", "-Z", "-z", "--field"]);
    for v in s.values(&["--log"]) {
        sink.fill(&v);
    }
    let ops = &s.operands;
    let action = |short: char, long: &[&str]| s.options.iter().any(|(o, _, _)| !o.starts_with("--") && o.len() == 2 && o.ends_with(short)) || s.has(long);
    if action('x', &["--extract"]) || action('X', &["--vextract"]) || action('R', &["--raw-extract"]) && name == "dpkg-deb" {
        if let Some(deb) = ops.first() {
            sink.path(deb, Read);
        }
        if let Some(dir) = ops.get(1) {
            under(sink, dir, &[Create, Write], "dpkg extracts the names the package holds");
        }
    } else if action('b', &["--build"]) {
        let Some(dir) = ops.first() else { return };
        sink.path(dir, Read);
        match (ops.get(1), dir.literal()) {
            (Some(out), _) if out.text().ends_with('/') => under(sink, out, &[Create, Write], "dpkg-deb names the package after its control file"),
            (Some(out), _) => sink.fill(out),
            (None, Some(d)) => sink.fill(&Arg::Literal(format!("{}.deb", d.trim_end_matches('/')))),
            (None, None) => sink.computed(Create, format!("`{}` is computed", dir.text())),
        }
    } else if name == "dpkg"
        && (action('i', &["--install"])
            || action('r', &["--remove"])
            || action('P', &["--purge"])
            || action('a', &["--pending"])
            || s.has(&["--unpack", "--configure", "--triggers-only", "--add-architecture", "--remove-architecture", "--set-selections", "--clear-selections", "--update-avail", "--merge-avail", "--clear-avail", "--forget-old-unavail"]))
    {
        if action('i', &["--install"]) || s.has(&["--unpack"]) {
            for deb in ops {
                sink.path(deb, Read);
            }
        }
        let root = s.values(&["--root", "--instdir"]).into_iter().next().unwrap_or(Arg::Literal("/usr".into()));
        under(sink, &root, &[Create, Write, Delete], "dpkg changes the system's installed files");
    }
}

/// gem.
fn gem(args: &[Arg], sink: &mut Sink) {
    let s = split(args, &["-i", "--install-dir", "-n", "--bindir", "-v", "--version", "-o", "--output", "--source", "-s", "--platform"]);
    match s.operands.first().map(|a| a.text()).unwrap_or("") {
        "install" | "update" | "uninstall" | "cleanup" | "pristine" => {
            if let Some(d) = s.values(&["-i", "--install-dir"]).first() {
                under(sink, d, &[Create, Write, Delete], &format!("gem installs into `{}`", d.text()));
            } else if s.has(&["--user-install"]) {
                let dir = home(sink, ".gem");
                under(sink, &dir, &[Create, Write, Delete], "gem --user-install installs into ~/.gem");
            } else {
                sink.opaque("gem installs into the GEM_HOME its configuration names".into());
            }
            for d in s.values(&["-n", "--bindir"]) {
                under(sink, &d, &[Create, Write, Delete], "gem puts executables into --bindir");
            }
        }
        "build" => {
            if let Some(o) = s.values(&["-o", "--output"]).first() {
                sink.fill(o);
            }
        }
        _ => {}
    }
}

/// bundle: `bundle exec CMD…` runs CMD.
fn bundle(args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(at) = args.iter().position(|a| !a.text().starts_with('-')) else { return };
    let rest = &args[at + 1..];
    match args[at].text() {
        "exec" => {
            let from = rest.iter().position(|a| !a.text().starts_with('-')).unwrap_or(rest.len());
            sink.start(&rest[from..], depth);
        }
        "install" | "update" | "add" => {
            let s = split(rest, &["--path", "--gemfile", "-j", "--jobs", "--retry", "--without", "--with", "--binstubs"]);
            match s.values(&["--path"]).first() {
                Some(p) => under(sink, p, &[Create, Write, Delete], &format!("bundle installs into `{}`", p.text())),
                None => sink.opaque("bundle installs into the path its configuration names".into()),
            }
        }
        "config" => {
            let s: Split = split(rest, &[]);
            if matches!(s.operands.first().map(|a| a.text()), Some("set" | "unset")) {
                let file = if s.has(&["--local"]) { Arg::Literal(".bundle/config".into()) } else { home(sink, ".bundle/config") };
                sink.fill(&file);
            }
        }
        _ => {}
    }
}

/// poetry: `poetry run CMD…` runs CMD in the environment poetry chose.
fn poetry(args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(at) = args.iter().position(|a| !a.text().starts_with('-')) else { return };
    let rest = &args[at + 1..];
    let s = split(rest, &["-o", "--output", "-f", "--format", "-C", "--directory", "-P", "--project", "--name"]);
    match args[at].text() {
        "run" => {
            sink.opaque("poetry run runs the command in a virtualenv poetry chooses (by default under ~/.cache/pypoetry)".into());
            let from = rest.iter().position(|a| !a.text().starts_with('-')).unwrap_or(rest.len());
            sink.start(&rest[from..], depth);
        }
        "new" => {
            if let Some(p) = s.operands.first() {
                sink.path_with(p, create_or_write);
            }
        }
        "install" | "add" | "remove" | "update" | "sync" | "self" | "shell" | "env" | "config" | "source" => {
            sink.opaque(format!("poetry {} changes a virtualenv or configuration poetry chooses", args[at].text()));
        }
        "build" => {
            if let Some(d) = s.values(&["-o", "--output"]).first() {
                under(sink, d, &[Create, Write], "poetry build names the distributions after the package");
            }
        }
        "export" => {
            for o in s.values(&["-o", "--output"]) {
                sink.fill(&o);
            }
        }
        _ => {}
    }
}
