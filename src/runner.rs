//! `dsh-allow run`: apply the compiled fence with Landlock, then exec.
//!
//! One job: read the profile request, compile it with the core, turn the plan
//! into a Landlock ruleset (compiling around the paths that must stay shut),
//! set no_new_privs, restrict, exec. If the ruleset cannot be applied,
//! nothing of the command runs.

use std::process::ExitCode;

use crate::fs_host::FsHost;
use crate::profile::{self, Enforce, FencePlan, ProfileRequest};

/// The runner itself failed (bad profile, ruleset not applied): nothing ran.
pub const EXIT_FAILED: u8 = 125;
/// The kernel has no usable Landlock: nothing ran.
pub const EXIT_UNAVAILABLE: u8 = 122;
/// Every stderr line of ours starts with this, so the plugin can tell a
/// runner failure from the command's own output.
pub const PREFIX: &str = "dsh-allow run: ";

pub fn main(args: &[String]) -> ExitCode {
    let Some(sep) = args.iter().position(|a| a == "--") else {
        return fail(EXIT_FAILED, "usage: dsh-allow run --profile-json JSON|--profile-file F -- PROGRAM [ARGS…]");
    };
    let (opts, argv) = (&args[..sep], &args[sep + 1..]);
    if argv.is_empty() {
        return fail(EXIT_FAILED, "no program to run after --");
    }
    let req = match read_request(opts) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    prepare_tool_state(&req, argv);
    let plan = profile::compile(&req, &FsHost::from_env());
    #[cfg(target_os = "linux")]
    {
        if plan.enforce != Enforce::Off {
            if let Err((code, e)) = linux::restrict(&plan) {
                return fail(code, &e);
            }
        }
        exec(argv)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (plan, argv);
        fail(EXIT_UNAVAILABLE, "Landlock exists only on Linux; on macOS the plugin runs sandbox-exec with the SBPL profile")
    }
}

/// Make the tool-state folders the workspace's tools will need (Landlock
/// fences only what exists when the call starts), and send Python's bytecode
/// cache to a temp folder: an import's cache write is an atomic replace,
/// which needs delete where the sources are.
fn prepare_tool_state(req: &ProfileRequest, argv: &[String]) {
    if req.mode != crate::api::Mode::WorkspaceWrite {
        return;
    }
    let ws = std::path::Path::new(&req.workspace);
    for (marker, folder) in crate::baseline::PREPARE {
        if ws.join(marker).is_file() && !ws.join(folder).exists() {
            let _ = std::fs::create_dir(ws.join(folder));
        }
    }
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
    for g in &req.grants {
        let p = std::path::Path::new(&g.path);
        let inside = crate::paths::within(&g.path, &req.workspace) && g.path != req.workspace;
        if inside && p.file_name().is_some_and(|n| n == ".git") && g.access.grants(crate::capability::Capability::Delete) && !p.exists() {
            let _ = std::fs::create_dir_all(p);
        }
    }
    if std::env::var_os("PYTHONPYCACHEPREFIX").is_none() {
        std::env::set_var("PYTHONPYCACHEPREFIX", "/tmp/dsh-allow-pycache");
    }
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
    let value = |name: &str| opts.iter().position(|a| a == name).and_then(|i| opts.get(i + 1)).cloned();
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

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("{PREFIX}{msg}");
    ExitCode::from(code)
}

#[cfg(unix)]
fn exec(argv: &[String]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    eprintln!("{PREFIX}cannot start {}: {err}", argv[0]);
    ExitCode::from(127)
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
    use std::path::Path;

    use landlock::{
        AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, ABI,
    };

    use super::{landlock_abi, EXIT_FAILED, EXIT_UNAVAILABLE};
    use crate::capability::Capability;
    use crate::profile::landlock::{never_granted, rights, since_abi, FILE_RIGHTS};
    use crate::profile::FencePlan;

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

    fn abi_enum(v: u32) -> ABI {
        match v {
            1 => ABI::V1,
            2 => ABI::V2,
            3 => ABI::V3,
            4 => ABI::V4,
            5 => ABI::V5,
            _ => ABI::V6,
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

    /// The (path, capabilities) rules a plan becomes once shut paths are
    /// compiled around: a granted folder holding a shut path is replaced by
    /// its other entries, down to the shut path's parent.
    pub fn expand(plan: &FencePlan) -> Result<Vec<(String, Vec<Capability>)>, String> {
        let mut out = Vec::new();
        for g in &plan.grants {
            around(&g.path, &g.except, &g.access, &mut out)?;
            if out.len() > MAX_RULES {
                return Err(format!("compiling around shut paths made more than {MAX_RULES} rules"));
            }
        }
        Ok(out)
    }

    fn around(root: &str, except: &[String], caps: &[Capability], out: &mut Vec<(String, Vec<Capability>)>) -> Result<(), String> {
        if except.is_empty() {
            out.push((root.to_string(), caps.to_vec()));
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(root) else { return Ok(()) };
        for entry in entries.flatten() {
            let child = Path::new(root).join(entry.file_name()).to_string_lossy().into_owned();
            if except.iter().any(|x| x == &child) {
                continue;
            }
            // A symlink here would open its target under this grant: the
            // target is judged by its own path instead.
            if entry.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
                continue;
            }
            let inside: Vec<String> = except.iter().filter(|x| crate::paths::within(x, &child)).cloned().collect();
            around(&child, &inside, caps, out)?;
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

    pub fn restrict(plan: &FencePlan) -> Result<(), (u8, String)> {
        let abi = landlock_abi();
        if abi == 0 {
            return Err((EXIT_UNAVAILABLE, "this kernel has no usable Landlock; nothing was run".into()));
        }
        let handled = flags(&plan.handled, abi, true, false);
        let rules = expand(plan).map_err(|e| (EXIT_FAILED, e))?;
        let mut created = Ruleset::default()
            .handle_access(handled)
            .and_then(|r| r.create())
            .map_err(|e| (EXIT_FAILED, format!("cannot create the Landlock ruleset: {e}; nothing was run")))?;
        let rules: Vec<(String, BitFlags<AccessFs>)> =
            rules.into_iter().map(|(path, caps)| (path, flags(&caps, abi, false, false) & handled)).collect();
        // Descriptors opened for rules close at exec (O_CLOEXEC): closing
        // them one by one first only costs system calls.
        let mut kept: Vec<PathFd> = Vec::new();
        for (path, access) in prune(rules) {
            // A path that is gone now simply gets no rule. The crate looks
            // at what the descriptor is and keeps only a file's rights for
            // a file (one fstat; no separate stat of ours).
            let Ok(fd) = PathFd::new(&path) else { continue };
            created = created
                .add_rule(PathBeneath::new(&fd, access))
                .map_err(|e| (EXIT_FAILED, format!("cannot add the rule for {path}: {e}; nothing was run")))?;
            if kept.len() < KEEP_OPEN {
                kept.push(fd);
            }
        }
        std::mem::forget(kept);
        let _ = abi_enum(abi);
        let status = created
            .restrict_self()
            .map_err(|e| (EXIT_FAILED, format!("cannot apply the Landlock ruleset: {e}; nothing was run")))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err((EXIT_UNAVAILABLE, "the kernel did not enforce the Landlock ruleset; nothing was run".into()));
        }
        if !status.no_new_privs {
            return Err((EXIT_FAILED, "no_new_privs could not be set; nothing was run".into()));
        }
        Ok(())
    }
}

/// What the kernel enforces for this profile, for `/allow status`.
pub fn status(plan: &FencePlan) -> serde_json::Value {
    #[cfg(target_os = "linux")]
    let abi = landlock_abi();
    #[cfg(not(target_os = "linux"))]
    let abi = 0;
    let mut caps = serde_json::Map::new();
    for c in crate::capability::Capability::ALL {
        let (cov, why) = if plan.handled.contains(&c) {
            profile::landlock::coverage(c, abi)
        } else {
            (profile::landlock::Coverage::Off, "not fenced at this tier")
        };
        caps.insert(c.as_str().into(), serde_json::json!({ "coverage": cov, "why": why }));
    }
    serde_json::json!({ "landlockAbi": abi, "enforce": plan.enforce, "capabilities": caps, "notes": plan.notes })
}
