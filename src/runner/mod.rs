//! `dsh-allow run`: apply the compiled fence with Landlock, then exec.
//!
//! One job: read the profile request, compile it with the core, turn the plan
//! into a Landlock ruleset (compiling around the paths that must stay shut),
//! set no_new_privs, restrict, exec. If the ruleset cannot be applied,
//! nothing of the command runs.
//!
//! The Linux runner is an adapter: it reads the real file system, keeps
//! compiled fences ([`kept`]), and in a mount namespace of its own makes the
//! tree read-only outside the roots the fence lets the call change
//! ([`readonly`]: Landlock has no right for chmod, chown, utimes or xattrs)
//! and shuts a repository's persistence surfaces ([`persistence`]), then
//! execs.

#[cfg(target_os = "linux")]
pub mod affinity;
#[cfg(target_os = "linux")]
pub mod arena;
#[cfg(target_os = "linux")]
pub mod caller;
#[cfg(target_os = "linux")]
pub mod creates;
#[cfg(target_os = "linux")]
pub mod datagrams;
#[cfg(target_os = "linux")]
pub mod hand;
#[cfg(target_os = "linux")]
pub mod init;
#[cfg(target_os = "linux")]
pub mod held;
#[cfg(target_os = "linux")]
pub mod hosts;
#[cfg(target_os = "linux")]
pub mod keeper;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod libc_mem;
#[cfg(target_os = "linux")]
pub mod listing;
#[cfg(target_os = "linux")]
pub mod kept;
#[cfg(target_os = "linux")]
pub mod logs;
#[cfg(target_os = "linux")]
pub mod own;
#[cfg(target_os = "linux")]
pub mod refusals;
#[cfg(target_os = "linux")]
pub mod rights;
#[cfg(target_os = "linux")]
pub mod sidecars;
#[cfg(target_os = "linux")]
pub mod target;
#[cfg(target_os = "linux")]
pub mod passing;
#[cfg(target_os = "linux")]
pub mod persistence;
#[cfg(target_os = "linux")]
pub mod arrivals;
#[cfg(target_os = "linux")]
pub mod code_caches;
#[cfg(target_os = "linux")]
pub mod dotenv;
#[cfg(target_os = "linux")]
pub mod folder_watch;
#[cfg(target_os = "linux")]
pub mod host_temp;
#[cfg(target_os = "linux")]
pub mod temp_watch;
#[cfg(target_os = "linux")]
pub mod isolate;
#[cfg(target_os = "linux")]
pub mod launch_files;
#[cfg(target_os = "linux")]
pub mod procs;
#[cfg(target_os = "linux")]
pub mod readonly;
#[cfg(target_os = "linux")]
pub mod removals;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(target_os = "linux")]
pub mod sockets;
#[cfg(target_os = "linux")]
pub mod supervise;


use crate::fs_host::FsHost;
use crate::fence::{self, FencePlan, ProfileRequest};

/// The runner itself failed (bad profile, ruleset not applied): nothing ran.
pub const EXIT_FAILED: u8 = 125;
/// The kernel has no usable Landlock: nothing ran.
pub const EXIT_UNAVAILABLE: u8 = 122;
/// Every stderr line of ours starts with this, so the plugin can tell a
/// runner failure from the command's own output.
pub const PREFIX: &str = "dsh-allow run: ";

pub fn main(args: &[String]) -> u8 {
    let Some(sep) = args.iter().position(|a| a == "--") else {
        return fail(
            EXIT_FAILED,
            "usage: dsh-allow run --profile-json JSON|--profile-file F [--fence-cache DIR] [--report-fence] -- PROGRAM [ARGS…]",
        );
    };
    let (opts, argv) = (&args[..sep], &args[sep + 1..]);
    if argv.is_empty() {
        return fail(EXIT_FAILED, "no program to run after --");
    }
    let req = match read_request(opts) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    // The gate refuses such a call first; a profile handed over anyway runs nothing.
    if let Some(why) = req.managed.as_ref().and_then(|m| m.refusal(req.mode, if req.fences() { req.enforce } else { crate::fence::Enforce::Off })) {
        return fail(EXIT_FAILED, &format!("{why}; nothing was run"));
    }
    let mut req = req;
    // No rule or grant opens the host's temp folders (the decision refuses
    // them whatever is stored): the supervisor never removes anything there.
    let outside_host_temp = |r: &crate::policy::rules::Rule| crate::policy::baseline::host_temp_folder(crate::api::Platform::Linux, &r.path).is_none();
    req.rules.retain(outside_host_temp);
    req.grants.retain(outside_host_temp);
    prepare_tool_state(&mut req, argv);
    #[cfg(target_os = "linux")]
    let made = if req.fences() { arrivals::prepare(&mut req) } else { Default::default() };
    // What the call replaces is copied first (`git restore FILE`); a file
    // that could not be kept is not granted for removal.
    #[cfg(target_os = "linux")]
    if req.fences() {
        let (lines, not_kept) = arrivals::keep(&req);
        req.grants.retain(|g| !not_kept.contains(&crate::paths::normalize(&g.path)));
        for line in lines {
            eprintln!("{line}");
        }
    }
    #[cfg(target_os = "linux")]
    {
        if req.fences() {
            return run_fenced(req, argv, opts, made);
        }
        exec(argv)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (req, argv);
        fail(EXIT_UNAVAILABLE, "Landlock exists only on Linux; on macOS the plugin runs sandbox-exec with the SBPL profile")
    }
}

/// Compile or reuse the fence, put it up in the child, and run the
/// command under the supervisor (Linux, a profile that fences).
#[cfg(target_os = "linux")]
fn run_fenced(req: ProfileRequest, argv: &[String], opts: &[String], made: own::Own) -> u8 {
    let cache_dir = option(opts, "--fence-cache");
    let cache = match cache_dir.as_deref().map(|d| crate::runner::kept::Cache::new(d, &req)).transpose() {
        Ok(c) => c,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let abi = landlock_abi();
    if abi == 0 {
        return fail(EXIT_UNAVAILABLE, "this kernel has no usable Landlock; nothing was run");
    }
    // The surfaces rules open, looked up by every part that shuts one.
    let opened = req.opened();
    let cache_dir = cache_dir.map(|d| crate::paths::normalize(&d));
    let here_and_surfaces = held::surfaces(&req, &opened);
    // The keeper is asked while the kept entry is proven: what it holds of
    // the fence, and which of the entry's folders it vouches for.
    let shut = req.persistence == crate::api::Persistence::Shut;
    // The temp folders, and the keeper's token for them as they are before
    // this call lists them (temp_watch.rs).
    let temps = host_temp::temps();
    let mut temp_token = None;
    let mut asked = None;
    let mut ask = |id: &str, version: &str| {
        let name = keeper::name(id, shut, &here_and_surfaces.1)?;
        let proven = keeper::get_proven(cache_dir.as_deref()?, &name, Some(version), &temps);
        asked = Some((name, proven.asked));
        temp_token = proven.temp;
        proven.vouched
    };
    let (rules, how, entry) = match fence(&req, abi, cache.as_ref(), &mut ask) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let vouched = match entry.as_ref().and_then(|e| e.vouched) {
        Some((by_keeper, of)) => format!("{by_keeper} of {of} vouched for by the keeper, the rest looked up"),
        None => "each looked up".to_string(),
    };
    // The supervisor reads the rules too (rights.rs). A kept entry
    // damaged past its first lines is compiled afresh.
    let rules = match rules.or_else(|| entry.as_ref()?.rules()) {
        Some(r) => r,
        None => match fence(&req, abi, None, &mut |_, _| None) {
            Ok((Some(r), _, _)) => r,
            Ok(_) => return fail(EXIT_FAILED, "no fence could be compiled; nothing was run"),
            Err(e) => return fail(EXIT_FAILED, &e),
        },
    };
    // What the keeper holds is asked for here, outside every namespace
    // (unless it was while the entry was proven).
    let mut plan = held::Plan::of(&req, here_and_surfaces, cache_dir.as_deref(), entry.as_ref().filter(|_| held::worth_holding(&rules)), asked);
    let mut hosts = host_pids(&req);
    hosts.extend(plan.keeper);
    // A `.env` the call makes where there was none is taken back
    // when it ends (launch_files.rs).
    let (launch_present, launch_missing) = launch_files::surfaces(&req, &opened);
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let judge = sockets::Judge { hosts: hosts::Hosts::new(&hosts, uid), socket_roots: req.socket_roots(), tree: None };
    let names = judge.clone();
    // The host's temp folders, listed once for the supervisor and the child.
    let (host_folders, found) = host_temp::folders(cache_dir.as_deref(), &hosts, &temps, temp_token.as_deref());
    // Code caches (made empty where missing) to be shut.
    let caches = code_caches::prepare(&req, &opened);
    let launch: Vec<String> = launch_present.iter().chain(&launch_missing).cloned().collect();
    let rules = std::rc::Rc::new(rules); // the supervisor's model's and the child's fence's
    let files = files_of(&req, &opened, &rules, made, &launch, &host_folders);
    // Mounted by every call after any held namespace is joined: they
    // change between calls, so no keeper holds them.
    plan.per_call = held::PerCall { launch: launch_present, caches, host_folders };
    // Only a workspace-write session changes files: in any other
    // nothing is made or removed, and nothing is watched.
    let watch_files = req.mode == crate::api::Mode::WorkspaceWrite;
    let report = opts.iter().any(|o| o == "--report-fence");
    // With mount fences the child enters a process namespace of the call's
    // own; as root (where the namespace's owner is the same whoever makes
    // it) the supervisor makes it before the fork, and the child is its init.
    // SAFETY: geteuid has no preconditions.
    let pids_first = req.persistence == crate::api::Persistence::Shut && unsafe { libc::geteuid() } == 0;
    // The child makes the mounts and applies Landlock: the supervisor
    // stays outside the namespaces it enters (from inside a user
    // namespace the host's descriptors could not be read).
    let fence = move |between: &mut supervise::Between| -> Result<Vec<String>, (u8, String)> {
        let lines = held::put_up(&req, &rules, abi, plan, between)?;
        let signals = if abi >= 6 { "scoped to the call (Landlock)" } else { "open (Landlock ABI < 6)" };
        Ok(if report {
            let mut out = vec![format!("dsh-allow fence: {how}")];
            if how == "reused" {
                out.push(format!("dsh-allow folders: {vouched}"));
            }
            out.extend(lines);
            out.push(format!("dsh-allow host temp folders: {}", match found {
                "unchanged" => "as last listed (the temp folders unchanged)",
                "vouched" => "as last listed (the keeper saw no host folder come or go)",
                _ => "listed",
            }));
            out.push(format!("dsh-allow signals: {signals}"));
            out
        } else {
            Vec::new()
        })
    };
    let relay = match isolate::Relay::for_terminals() {
        Ok(r) => r,
        Err(e) => return fail(EXIT_FAILED, &format!("{e}; nothing was run")),
    };
    let child = supervise::Child {
        argv,
        own_session: isolate::has_terminal(),
        relay,
        fence: Box::new(fence),
        files: watch_files,
        hand: None,
        status: -1,
        pids_first,
        granted: Box::new(move |p| names.names_socket(p)),
        report,
        settle: Box::new(move || launch_files::settle(&launch_missing)),
    };
    supervise::run(child, judge, files)
}

/// What the supervisor knows of the call's files before it starts: the
/// entries granted for removal, what was made for the call (its own), and
/// the fence as the supervisor reads it (the rules, the writable mounts,
/// what stays shut).
#[cfg(target_os = "linux")]
fn files_of(req: &ProfileRequest, opened: &crate::fence::Opened, rules: &std::rc::Rc<linux::Rules>, own: own::Own, launch: &[String], host_folders: &[String]) -> supervise::Files {
    let mounts = req.persistence == crate::api::Persistence::Shut;
    let mut shut: Vec<String> = req.protected_files.iter().map(|p| crate::paths::normalize(p)).collect();
    shut.extend(req.repository_surfaces(opened));
    let removals = removals::Removals::of(req, &shut);
    // What the runner's mounts shut stays shut to the supervisor, which
    // acts outside them: the workspace's `.env` (there or not), the code
    // caches, the host's temp folders.
    shut.extend(launch.iter().cloned());
    shut.extend(code_caches::shut_for(req, opened));
    shut.extend(host_folders.iter().cloned());
    let rules = rules.clone();
    let model: Box<dyn FnOnce() -> rights::Model> = Box::new(move || {
        let writable = mounts.then(|| readonly::writable_roots(&rules));
        rights::Model::of(rights::Rights::new(&rules, writable, shut))
    });
    supervise::Files { removals, own, model: std::cell::LazyCell::new(model), own_pids: false, hand: None, refusals: Default::default() }
}

/// The DSH host's processes: those the profile names, and this runner's
/// parent (under DSH the host itself spawns it).
#[cfg(target_os = "linux")]
fn host_pids(req: &ProfileRequest) -> Vec<i32> {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    let mut pids = req.host_pids.clone();
    if parent > 1 && !pids.contains(&parent) {
        pids.push(parent);
    }
    pids
}

/// The fence for this profile: the one kept in the cache while nothing it
/// was compiled from has changed, else compiled now (and kept when it can
/// be). The second value says which, for `--report-fence`.
#[cfg(target_os = "linux")]
type Ask<'a> = dyn FnMut(&str, &str) -> Option<kept::Vouched> + 'a;

fn fence(req: &ProfileRequest, abi: u32, cache: Option<&crate::runner::kept::Cache>, ask: &mut Ask) -> Result<(Option<linux::Rules>, String, Option<kept::Reused>), String> {
    use crate::runner::kept::{key, Outcome};
    let key = cache.and_then(|_| key(req, abi));
    if let (Some(cache), Some(key)) = (cache, &key) {
        // Its rules are read only if the keeper does not hold it.
        if let Some(reused) = cache.reuse(key, ask) {
            return Ok((None, "reused".into(), Some(reused)));
        }
    }
    let began = std::time::SystemTime::now();
    let host = FsHost::from_env();
    let mut listed = Vec::new();
    let dotenv = dotenv::found(&req.workspace, &mut listed);
    let plan = fence::compile_with(req, &host, &dotenv);
    let rules = linux::ruleset(&plan, abi, &host, &mut listed)?;
    let (how, entry) = match (cache, &key) {
        (Some(cache), Some(key)) => match cache.keep(key, &rules, crate::runner::kept::Walk { found: host.looked(), listed }, began) {
            (Outcome::Kept, entry) => ("compiled, kept".to_string(), entry),
            (Outcome::NotKept(why), _) => (format!("compiled, not kept: {why}"), None),
        },
        (Some(_), None) => ("compiled, not kept: this runner's own file cannot be identified".to_string(), None),
        _ => ("compiled".to_string(), None),
    };
    Ok((Some(rules), how, entry))
}

fn option(opts: &[String], name: &str) -> Option<String> {
    opts.iter().position(|a| a == name).and_then(|i| opts.get(i + 1)).cloned()
}

/// Make the repositories a git line was granted (Landlock fences only what
/// exists when the call starts), and turn off the caches calls would share.
fn prepare_tool_state(req: &mut ProfileRequest, argv: &[String]) {
    if req.fences() {
        no_shared_caches();
    }
    if req.mode != crate::api::Mode::WorkspaceWrite {
        return;
    }
    // No `target/` or `node_modules/` is made ahead any more: a first
    // build's folder is the call's own, and so is all it puts inside.
    let ws = std::path::Path::new(&req.workspace);
    // `git init` in the workspace renames lock files inside `.git` at once;
    // an empty `.git` made first lets the fence carry it (git initialises an
    // empty `.git` as usual).
    let runs_git_init = inits_here(&argv.join(" "));
    let in_workspace = std::env::current_dir().is_ok_and(|d| d == ws);
    if runs_git_init && in_workspace && !ws.join(".git").exists() {
        let _ = std::fs::create_dir(ws.join(".git"));
    }
    // A repository made below the workspace root (`git init sub`): its
    // `.git` was granted delete for this call (asked, bound to git), and the
    // grant needs the folder to exist before the fence goes up.
    // (The workspace's own `.git`, which every git line of its own carries,
    // is made only for `git init`, above: an empty one breaks git.)
    let own = format!("{}/{}", crate::paths::normalize(&req.workspace), crate::policy::baseline::REPOSITORY);
    let mut caches = Vec::new();
    for g in &req.grants {
        let p = std::path::Path::new(&g.path);
        let inside = crate::paths::within(&g.path, &req.workspace) && g.path != req.workspace && g.path != own;
        let deletes = g.access.grants(crate::policy::capability::Capability::Delete);
        if !inside || !deletes {
            continue;
        }
        match p.file_name().and_then(|n| n.to_str()) {
            Some(".git") if !p.exists() => drop(std::fs::create_dir_all(p)),
            // `python -m compileall DIR` was granted DIR's bytecode cache:
            // it compiles the packages below too, and renames each `.pyc`
            // into place, which needs delete in every `__pycache__`.
            // Only below a folder that is really there, as named: a grant
            // through a link (`lib -> ~/.local/lib/x`) plants no bytecode
            // where it leads.
            Some("__pycache__") if real_folder(p.parent().unwrap_or(p)) => caches.extend(package_caches(p.parent().unwrap_or(p), g)),
            _ => {}
        }
    }
    req.grants.extend(caches);
}

/// A folder reached with no link on the way (its real path is its path).
fn real_folder(p: &std::path::Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) && std::fs::canonicalize(p).is_ok_and(|c| c == p)
}

/// The `__pycache__` of every folder under `top` that holds Python sources
/// (made when missing), each with the grant `like` gives; bounded, and
/// never into dot-folders or other tools' state.
fn package_caches(top: &std::path::Path, like: &crate::policy::rules::Rule) -> Vec<crate::policy::rules::Rule> {
    let mut out = Vec::new();
    let mut todo = vec![(top.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = todo.pop() {
        seen += 1;
        if seen > 2000 {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut sources = false;
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && depth < 12 && !name.starts_with('.') && !matches!(name.as_ref(), "__pycache__" | "node_modules" | "target") {
                todo.push((e.path(), depth + 1));
            }
            sources |= !is_dir && name.ends_with(".py");
        }
        let cache = dir.join("__pycache__");
        if sources && (cache.is_dir() || std::fs::create_dir(&cache).is_ok()) {
            out.push(crate::policy::rules::Rule { path: cache.to_string_lossy().into_owned(), ..like.clone() });
        }
    }
    out
}

/// No cache one call can fill for the next to run. Python's bytecode
/// prefix was one folder in /tmp for every call: code planted there ran in
/// a later call with that call's grants. Python now writes no bytecode
/// (it still reads what is beside the sources, which only their owner
/// writes; an import's cache write in the workspace would need delete
/// there anyway), and Node keeps no compile cache.
fn no_shared_caches() {
    std::env::remove_var("PYTHONPYCACHEPREFIX");
    std::env::set_var("PYTHONDONTWRITEBYTECODE", "1");
    std::env::remove_var("NODE_COMPILE_CACHE");
    std::env::set_var("NODE_DISABLE_COMPILE_CACHE", "1");
}

/// `git [opts] init [opts]` in the directory the script starts in: no `cd`
/// or `pushd` before it and no folder operand after it (`git init sub` and
/// `cd sub && git init` make their repository elsewhere; the decision asks
/// for those, and a granted `.git` is made from the call's grants). A guess
/// from words: it only ever makes an empty `.git` git would make anyway.
pub fn inits_here(script: &str) -> bool {
    let mut tokens: Vec<&str> = Vec::new();
    let mut start = None;
    for (i, c) in script.char_indices() {
        let sep = ";&|()\n".contains(c);
        if c.is_whitespace() || sep {
            if let Some(s) = start.take() {
                tokens.push(&script[s..i]);
            }
            if sep {
                tokens.push(&script[i..i + c.len_utf8()]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        tokens.push(&script[s..]);
    }
    let separator = |t: &str| matches!(t, ";" | "&" | "|" | "(" | ")" | "\n");
    for (i, &t) in tokens.iter().enumerate() {
        if matches!(t, "cd" | "pushd") {
            return false;
        }
        if t != "git" {
            continue;
        }
        // Past git's own options (`-c k=v`, `-C dir`, `--bare`…) to the subcommand.
        let mut j = i + 1;
        while j < tokens.len() && tokens[j].starts_with('-') {
            if matches!(tokens[j], "-C") {
                return false;
            }
            j += if tokens[j] == "-c" { 2 } else { 1 };
        }
        if tokens.get(j) != Some(&"init") {
            continue;
        }
        let mut k = j + 1;
        while k < tokens.len() && tokens[k].starts_with('-') {
            k += if matches!(tokens[k], "-b" | "--initial-branch" | "--template" | "--separate-git-dir" | "--object-format") { 2 } else { 1 };
        }
        return tokens.get(k).is_none_or(|t| separator(t));
    }
    false
}

pub fn read_request(opts: &[String]) -> Result<ProfileRequest, String> {
    let value = |name: &str| option(opts, name);
    let text = match (value("--profile-json"), value("--profile-file")) {
        (Some(j), _) => j,
        (None, Some(f)) => std::fs::read_to_string(&f).map_err(|e| format!("cannot read {f}: {e}"))?,
        (None, None) => return Err("a profile is required (--profile-json or --profile-file)".into()),
    };
    let mut req: ProfileRequest = serde_json::from_str(&text).map_err(|e| format!("the profile is not valid: {e}"))?;
    if let Some(e) = value("--enforce") {
        req.enforce = serde_json::from_value(serde_json::Value::String(e.clone()))
            .map_err(|_| format!("--enforce: full, guarded, process, writes or off, got {e:?}"))?;
    }
    Ok(req)
}

pub(crate) fn fail(code: u8, msg: &str) -> u8 {
    eprintln!("{PREFIX}{msg}");
    code
}

#[cfg(unix)]
pub(crate) fn exec(argv: &[String]) -> u8 {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    eprintln!("{PREFIX}cannot start {}: {err}", argv[0]);
    127
}

/// The Landlock ABI this kernel speaks (0: none).
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> u32 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32) };
    if v < 0 {
        0
    } else {
        v as u32
    }
}

#[cfg(target_os = "linux")]
pub mod linux {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::path::Path;

    use landlock::{AccessFs, BitFlags, Ruleset, RulesetAttr, Scope};

    use super::{EXIT_FAILED, EXIT_UNAVAILABLE};
    pub use crate::fence::landlock::Rules;
    use crate::policy::capability::Capability;
    use crate::host::{Host, PathKind};
    use crate::fence::landlock::{never_granted, rights, since_abi, FILE_RIGHTS};
    use crate::fence::FencePlan;

    /// The Landlock rights (bits of `AccessFs`) that change something:
    /// write, create, delete. A rule holding any of them needs a writable
    /// mount ([`super::readonly`]).
    pub fn mutating_rights() -> u64 {
        flags(&[Capability::Write, Capability::Create, Capability::Delete], u32::MAX, true, false).bits()
    }

    /// Compiling around shut paths lists folders; past this many rules the
    /// profile is refused rather than silently trimmed.
    const MAX_RULES: usize = 20_000;

    fn right(name: &str) -> AccessFs {
        match name {
            "READ_FILE" => AccessFs::ReadFile,
            "READ_DIR" => AccessFs::ReadDir,
            "WRITE_FILE" => AccessFs::WriteFile,
            "TRUNCATE" => AccessFs::Truncate,
            "MAKE_REG" => AccessFs::MakeReg,
            "MAKE_DIR" => AccessFs::MakeDir,
            "MAKE_SYM" => AccessFs::MakeSym,
            "MAKE_FIFO" => AccessFs::MakeFifo,
            "MAKE_SOCK" => AccessFs::MakeSock,
            "MAKE_CHAR" => AccessFs::MakeChar,
            "MAKE_BLOCK" => AccessFs::MakeBlock,
            "REFER" => AccessFs::Refer,
            "REMOVE_FILE" => AccessFs::RemoveFile,
            "REMOVE_DIR" => AccessFs::RemoveDir,
            "EXECUTE" => AccessFs::Execute,
            other => unreachable!("unknown Landlock right {other}"),
        }
    }

    fn flags(caps: &[Capability], abi: u32, with_never: bool, file_only: bool) -> BitFlags<AccessFs> {
        let mut f = BitFlags::EMPTY;
        for &c in caps {
            let names = rights(c).iter().chain(if with_never { never_granted(c).iter() } else { [].iter() });
            for n in names {
                if since_abi(n) <= abi && (!file_only || FILE_RIGHTS.contains(n)) {
                    f |= right(n);
                }
            }
        }
        f
    }

    /// A folder whose entries were listed, with the hash of what was listed
    /// ([`super::kept::names_hash`]): a kept fence holds while it is the same.
    pub type Listing = (String, u64);

    /// The (path, capabilities) rules a plan becomes once shut paths are
    /// compiled around: a granted folder holding a shut path is replaced by
    /// its other entries, down to the shut path's parent.
    pub fn expand(plan: &FencePlan) -> Result<Vec<(String, Vec<Capability>)>, String> {
        expand_listing(plan, &mut Vec::new(), &mut Vec::new())
    }

    /// [`expand`], noting each folder whose entries were listed, and in
    /// `lists` those of them a read grant was compiled around: they keep
    /// their listing (`READ_DIR`), so `ls /etc` still works when
    /// `/etc/shadow` is shut, while the shut entry's contents stay closed.
    fn expand_listing(plan: &FencePlan, listed: &mut Vec<Listing>, lists: &mut Vec<String>) -> Result<Vec<(String, Vec<Capability>)>, String> {
        let mut out = Vec::new();
        for g in &plan.grants {
            let before = listed.len();
            around(&g.path, &g.except, &g.access, &mut out, listed)?;
            if g.access.contains(&Capability::Read) {
                lists.extend(listed[before..].iter().map(|(d, _)| d.clone()));
            }
            if out.len() > MAX_RULES {
                return Err(format!("compiling around shut paths made more than {MAX_RULES} rules"));
            }
        }
        Ok(out)
    }

    fn around(
        root: &str,
        except: &[String],
        caps: &[Capability],
        out: &mut Vec<(String, Vec<Capability>)>,
        listed: &mut Vec<Listing>,
    ) -> Result<(), String> {
        if except.is_empty() {
            out.push((root.to_string(), caps.to_vec()));
            return Ok(());
        }
        let entries = super::kept::entries(root);
        listed.push((root.to_string(), super::kept::names_hash(entries.as_deref())));
        for (name, link) in entries.unwrap_or_default() {
            let child = Path::new(root).join(name).to_string_lossy().into_owned();
            if except.iter().any(|x| x == &child) {
                continue;
            }
            // A symlink here would open its target under this grant: the
            // target is judged by its own path instead.
            if link {
                continue;
            }
            let inside: Vec<String> = except.iter().filter(|x| crate::paths::within(x, &child)).cloned().collect();
            around(&child, &inside, caps, out, listed)?;
        }
        Ok(())
    }

    /// Descriptors left for exec to close, well under any open-file limit.
    const KEEP_OPEN: usize = 256;

    /// Drop rules that add nothing: Landlock grants along the hierarchy, so
    /// a rule inside another rule's folder with no right the outer one lacks
    /// is redundant (e.g. `/usr/bin` inside `/usr` on a merged-/usr system).
    /// Rules with no right at all go too.
    pub fn prune(rules: Vec<(String, BitFlags<AccessFs>)>) -> Vec<(String, BitFlags<AccessFs>)> {
        // One entry per path (the union of its rights), in the plan's order.
        let mut by_path: std::collections::BTreeMap<String, BitFlags<AccessFs>> = Default::default();
        let mut order: Vec<String> = Vec::new();
        for (path, access) in rules {
            if access.is_empty() {
                continue;
            }
            match by_path.get_mut(&path) {
                Some(a) => *a |= access,
                None => {
                    by_path.insert(path.clone(), access);
                    order.push(path);
                }
            }
        }
        let covered = |path: &str, access: BitFlags<AccessFs>| {
            let mut up = path;
            while up != "/" {
                up = crate::paths::parent(up);
                if by_path.get(up).is_some_and(|outer| outer.contains(access)) {
                    return true;
                }
            }
            false
        };
        order
            .into_iter()
            .filter_map(|p| {
                let access = by_path[&p];
                (!covered(&p, access)).then_some((p, access))
            })
            .collect()
    }

    /// The Landlock rights a plan handles and the rules it needs on this
    /// kernel, in the kernel's terms (what [`apply`] sends): a rule on a
    /// file carries only a file's rights, and a path that is not there gets
    /// none. `listed` gets every folder whose entries were read to compile
    /// around shut paths.
    pub fn ruleset(plan: &FencePlan, abi: u32, host: &dyn Host, listed: &mut Vec<Listing>) -> Result<Rules, String> {
        let handled = flags(&plan.handled, abi, true, false);
        let file_rights = flags(&Capability::ALL, abi, true, true);
        let mut lists = Vec::new();
        let mut rules: Vec<(String, BitFlags<AccessFs>)> = expand_listing(plan, listed, &mut lists)?
            .into_iter()
            .filter_map(|(path, caps)| {
                let access = flags(&caps, abi, false, false) & handled;
                match host.kind(&path) {
                    PathKind::Missing => None,
                    PathKind::File => Some((path, access & file_rights)),
                    PathKind::Dir => Some((path, access)),
                }
            })
            .collect();
        // A folder compiled around for a read keeps its listing: READ_DIR
        // reaches no file's contents (it carries on to the folders below,
        // which then list their names). Not a folder holding a user data
        // area the read fence keeps (`/` under guarded): its names stay shut.
        let holds_user_data = |d: &str| crate::policy::baseline::read_fence_roots(crate::api::Platform::Linux).iter().any(|r| crate::paths::within(r, d));
        if handled.contains(AccessFs::ReadDir) {
            let keeps_listing = lists.into_iter().filter(|d| !holds_user_data(d) && host.kind(d) == PathKind::Dir);
            rules.extend(keeps_listing.map(|d| (d, BitFlags::from(AccessFs::ReadDir))));
        }
        Ok(Rules { handled: handled.bits(), rules: prune(rules).into_iter().map(|(p, a)| (p, a.bits())).collect() })
    }

    /// Open a rule's path for Landlock without following any symlink on the
    /// way: rule paths are real paths, so a link found there now was put
    /// there since, and gets no rule (the grant is not carried to its
    /// target).
    pub(crate) fn open_real(path: &str) -> std::io::Result<OwnedFd> {
        let c = CString::new(path).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: open_how is plain integers; all-zero is its empty value.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        how.resolve = libc::RESOLVE_NO_SYMLINKS;
        // SAFETY: a NUL-terminated path and an open_how of the size passed.
        let fd = unsafe {
            libc::syscall(libc::SYS_openat2, libc::AT_FDCWD, c.as_ptr(), &how as *const libc::open_how, std::mem::size_of::<libc::open_how>())
        };
        if fd >= 0 {
            // SAFETY: a new descriptor, owned here.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOSYS) {
            return Err(err);
        }
        // No openat2 (filtered out): at least the last component.
        // SAFETY: as above.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// `struct landlock_path_beneath_attr` of the kernel's UAPI.
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

    /// Shown each path with the descriptor opened on it: whether it is the
    /// very file the caller expects there.
    pub type SameFile<'a> = &'a dyn Fn(&str, &OwnedFd) -> bool;

    /// A ruleset built for a fence, and whether every rule was added on the
    /// very file the caller expected at its path (see [`build`]).
    pub struct Built {
        pub ruleset: OwnedFd,
        pub same: bool,
    }

    /// A new Landlock ruleset handling `handled` (bits of `AccessFs`), with
    /// the scopes this kernel has.
    pub fn create(handled: u64, abi: u32) -> Result<OwnedFd, (u8, String)> {
        let handled = BitFlags::<AccessFs>::from_bits_truncate(handled);
        // ABI 6: abstract unix sockets and signals reach only this call's
        // own processes (a signal to the host, SIGUSR1 opening Node's
        // inspector, or to any process outside, is refused).
        // (Asked only where the kernel has them: the crate refuses an empty set.)
        let created = Ruleset::default()
            .handle_access(handled)
            .and_then(|r| if abi >= 6 { r.scope(Scope::AbstractUnixSocket | Scope::Signal) } else { Ok(r) })
            .and_then(|r| r.create())
            .map_err(|e| (EXIT_FAILED, format!("cannot create the Landlock ruleset: {e}; nothing was run")))?;
        let ruleset_fd: Option<OwnedFd> = created.into();
        ruleset_fd.ok_or((EXIT_UNAVAILABLE, "the kernel did not create a Landlock ruleset; nothing was run".into()))
    }

    /// Add the rule `access` beneath the file open at `fd`. Rules are added
    /// with the system call itself, since [`ruleset`] already fitted each
    /// rule's rights to what is at its path (the crate would `fstat` every
    /// rule again to do that, a third of what applying costs).
    pub fn add(ruleset: &OwnedFd, fd: &OwnedFd, access: u64, handled: u64, path: &str) -> Result<(), (u8, String)> {
        let attr = PathBeneathAttr { allowed_access: access & handled, parent_fd: fd.as_raw_fd() };
        // SAFETY: a ruleset descriptor, a rule type the kernel knows and a
        // pointer to its attribute struct, live for the call.
        let r = unsafe { libc::syscall(libc::SYS_landlock_add_rule, ruleset.as_raw_fd(), LANDLOCK_RULE_PATH_BENEATH, &attr as *const PathBeneathAttr, 0u32) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            return Err((EXIT_FAILED, format!("cannot add the rule for {path}: {e}; nothing was run")));
        }
        Ok(())
    }

    /// Open a rule's path for its rule: `None` when it is gone, is a link
    /// now or is not ours to reach (it simply gets no rule); any other
    /// failure (out of descriptors, a filter refusing the call) is not
    /// taken for that.
    pub fn open_rule(path: &str) -> Result<Option<OwnedFd>, (u8, String)> {
        match open_real(path) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR | libc::EACCES)) => Ok(None),
            Err(e) => Err((EXIT_FAILED, format!("cannot open {path} for its rule: {e}; nothing was run"))),
        }
    }

    /// The Landlock ruleset of the rules of `set` that `wanted` picks. With
    /// `same_file`, each rule's descriptor is also shown to it, and `same`
    /// says whether it held for all.
    pub fn build(set: &Rules, abi: u32, wanted: &dyn Fn(&str) -> bool, same_file: Option<SameFile>) -> Result<Built, (u8, String)> {
        let ruleset = create(set.handled, abi)?;
        let same = add_rules(&ruleset, set, wanted, same_file)?;
        Ok(Built { ruleset, same })
    }

    /// Add the rules of `set` that `wanted` picks to `ruleset`, each opened
    /// by its path now; whether each was the file `same_file` expects.
    pub fn add_rules(ruleset: &OwnedFd, set: &Rules, wanted: &dyn Fn(&str) -> bool, same_file: Option<SameFile>) -> Result<bool, (u8, String)> {
        let mut same = true;
        // Descriptors opened for rules close at exec (O_CLOEXEC): closing
        // them one by one first only costs system calls.
        let mut kept: Vec<OwnedFd> = Vec::new();
        for (path, access) in set.rules.iter().filter(|(p, _)| wanted(p)) {
            let Some(fd) = open_rule(path)? else {
                same = false;
                continue;
            };
            if let Some(check) = same_file {
                same = same && check(path, &fd);
            }
            add(ruleset, &fd, *access, set.handled, path)?;
            if kept.len() < KEEP_OPEN {
                kept.push(fd);
            }
        }
        std::mem::forget(kept);
        Ok(same)
    }

    /// Set no_new_privs and restrict this process (and all it starts) to
    /// the ruleset.
    pub fn restrict(ruleset: &OwnedFd) -> Result<(), (u8, String)> {
        // SAFETY: prctl and landlock_restrict_self with integer arguments.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err((EXIT_FAILED, "no_new_privs could not be set; nothing was run".into()));
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0 {
                let e = std::io::Error::last_os_error();
                return Err((EXIT_FAILED, format!("cannot apply the Landlock ruleset: {e}; nothing was run")));
            }
        }
        Ok(())
    }

    /// The identity of an open file (device, inode).
    pub fn identity(fd: &OwnedFd) -> Option<(u64, u64)> {
        // SAFETY: a stat buffer of the right type for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
    }
}

/// What the kernel enforces for this profile, for `/allow status`.
pub fn status(plan: &FencePlan) -> serde_json::Value {
    #[cfg(target_os = "linux")]
    let abi = landlock_abi();
    #[cfg(not(target_os = "linux"))]
    let abi = 0;
    let mut caps = serde_json::Map::new();
    for c in crate::policy::capability::Capability::ALL {
        let (cov, why) = if plan.handled.contains(&c) {
            fence::landlock::coverage(c, abi)
        } else {
            (fence::landlock::Coverage::Off, "not fenced at this tier")
        };
        caps.insert(c.as_str().into(), serde_json::json!({ "coverage": cov, "why": why }));
    }
    #[cfg(target_os = "linux")]
    let persistence = match crate::runner::persistence::available() {
        Ok(()) => serde_json::json!({ "state": "shut", "why": "hooks, git config and .gitmodules are read-only bind mounts in the runner's own mount namespace" }),
        Err(e) => serde_json::json!({ "state": "open", "why": e }),
    };
    #[cfg(not(target_os = "linux"))]
    let persistence = serde_json::json!({ "state": "open", "why": "the runner's mount namespace exists only on Linux" });
    let metadata = metadata_status(plan);
    serde_json::json!({ "landlockAbi": abi, "enforce": plan.enforce, "capabilities": caps, "notes": plan.notes, "persistence": persistence, "metadata": metadata })
}

/// Whether chmod, chown, utimes and extended attributes are refused outside
/// the roots the fence lets the call change (Landlock has no right for them).
fn metadata_status(plan: &FencePlan) -> serde_json::Value {
    use crate::policy::capability::Capability;
    if !plan.handled.contains(&Capability::Write) {
        return serde_json::json!({ "state": "open", "why": "this tier fences no writes" });
    }
    #[cfg(target_os = "linux")]
    let probed = crate::runner::readonly::available();
    #[cfg(not(target_os = "linux"))]
    let probed: Result<(), String> = Err("the runner's mount namespace exists only on Linux".into());
    match probed {
        Ok(()) => serde_json::json!({ "state": "fenced", "why": "modes, owners, times and extended attributes are read-only outside the roots where the fence grants write, create or delete (the runner's own mount namespace)" }),
        Err(e) => serde_json::json!({ "state": "open", "why": e }),
    }
}
