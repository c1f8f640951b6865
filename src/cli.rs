//! The `dsh-allow` command line: the core from a terminal (native, unix).
//!
//!   dsh-allow decide < request.json          JSON in, the decision as JSON out
//!   dsh-allow explain '<command>' [--cwd D --workspace W --rules F --mode M --platform P --home H --fence CAPS --persistence shut|open --managed F…]
//!   dsh-allow managed check FILE…             validate managed policy files
//!   dsh-allow run --profile-json '<json>' -- argv…   (Linux: run argv under the Landlock fence)

use std::io::Read;

use crate::api::{DecideRequest, Mode, Persistence, Platform};
use crate::policy::capability::Capability;
use crate::fs_host::FsHost;

/// Runs the command line; the process's exit status.
pub fn main() -> u8 {
    main_with(std::env::args().skip(1).collect())
}

/// [`main`] with the arguments after the program's name.
pub fn main_with(args: Vec<String>) -> u8 {
    match args.first().map(String::as_str) {
        Some("decide") => cmd_decide(),
        Some("explain") => cmd_explain(&args[1..]),
        Some("run") => crate::runner::main(&args[1..]),
        // The keeper of held fences, started by the runner (runner/keeper.rs).
        #[cfg(target_os = "linux")]
        Some("keep") if args.len() == 2 => crate::runner::keeper::serve(&args[1]),
        Some("profile") => cmd_profile(&args[1..]),
        Some("status") => cmd_status(&args[1..]),
        Some("managed") => cmd_managed(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            println!("{}", USAGE);
            0
        }
        Some(other) => {
            eprintln!("dsh-allow: unknown command {other:?}\n{USAGE}");
            2
        }
    }
}

const USAGE: &str = "usage:
  dsh-allow decide < request.json
  dsh-allow explain '<command>' [--cwd DIR] [--workspace DIR] [--home DIR] [--harness-home DIR]
                    [--rules FILE] [--mode read-only|workspace-write|danger-full-access]
                    [--platform linux|macos] [--fence read,write,create,delete,execute] [--persistence shut|open]
                    [--fence-level full|guarded|process|writes|off] [--managed FILE]…
  dsh-allow managed check FILE…             validate managed policy files (errors name the field)
  dsh-allow run --profile-json JSON [--enforce TIER] [--fence-cache DIR] [--report-fence] -- PROGRAM [ARGS…]
  dsh-allow profile --profile-json JSON [--format plan|sbpl|landlock]
  dsh-allow status --profile-json JSON      what the kernel enforces here, probed for real";

fn cmd_decide() -> u8 {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("dsh-allow decide: cannot read stdin: {e}");
        return 2;
    }
    let req: DecideRequest = match serde_json::from_str(&input) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dsh-allow decide: the request is not valid: {e}");
            return 2;
        }
    };
    let decision = crate::decide::decide(&req, &FsHost::from_env());
    println!("{}", serde_json::to_string(&decision).expect("decision serializes"));
    0
}

fn cmd_explain(args: &[String]) -> u8 {
    let mut command = None;
    let cwd_now = std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into());
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let opt = |name: &str| -> Option<String> { args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()) };
    let cwd = opt("--cwd").unwrap_or_else(|| cwd_now.clone());
    let workspace = opt("--workspace").unwrap_or_else(|| cwd.clone());
    let home = opt("--home").unwrap_or(home);
    let harness_home = opt("--harness-home").unwrap_or_else(|| format!("{home}/.dsh"));
    let platform = match opt("--platform").as_deref() {
        Some("macos") => Platform::Macos,
        Some("linux") | None => Platform::Linux,
        Some(p) => return usage_error(&format!("--platform: linux or macos, got {p:?}")),
    };
    let mode = match opt("--mode").as_deref() {
        Some("read-only") => Mode::ReadOnly,
        Some("danger-full-access") => Mode::DangerFullAccess,
        Some("workspace-write") | None => Mode::WorkspaceWrite,
        Some(m) => return usage_error(&format!("--mode: read-only, workspace-write or danger-full-access, got {m:?}")),
    };
    let fence_level = match opt("--fence-level") {
        None => None,
        Some(l) => match crate::api::Enforce::ORDER.into_iter().chain([crate::api::Enforce::Off]).find(|e| e.as_str() == l) {
            Some(e) => Some(e),
            None => return usage_error(&format!("--fence-level: full, guarded, process, writes or off, got {l:?}")),
        },
    };
    // A tier named alone stands behind its capabilities.
    let mut fence = if opt("--fence").is_none() { fence_level.map(|l| l.fenced()).unwrap_or_default() } else { Vec::new() };
    if let Some(f) = opt("--fence") {
        for c in f.split(',').filter(|c| !c.is_empty()) {
            match Capability::parse(c) {
                Some(c) => fence.push(c),
                None => return usage_error(&format!("--fence: unknown capability {c:?}")),
            }
        }
    }
    let rules_file = opt("--rules");
    let (rules, commands) = match &rules_file {
        None => (Vec::new(), Vec::new()),
        Some(f) => match std::fs::read_to_string(f) {
            Ok(text) => {
                let load = crate::policy::rules::parse_rules_file(&text);
                if let Some(e) = &load.error {
                    eprintln!("dsh-allow: {f}: {e} (a fault: the plugin asks before every call while the file is so; explained here with no rules)");
                }
                for w in &load.warnings {
                    eprintln!("dsh-allow: {f}: {w}");
                }
                (load.rules, load.commands)
            }
            Err(e) => return usage_error(&format!("--rules {f}: {e}")),
        },
    };
    let mut i = 0;
    while i < args.len() {
        if args[i].starts_with("--") {
            i += 2;
            continue;
        }
        command = Some(args[i].clone());
        i += 1;
    }
    let Some(command) = command else { return usage_error("explain needs a command") };
    let managed_files: Vec<&String> = args.windows(2).filter(|w| w[0] == "--managed").map(|w| &w[1]).collect();
    let managed = (!managed_files.is_empty()).then(|| crate::policy::managed::merge(&managed_files.iter().map(|f| read_source(f)).collect::<Vec<_>>()));
    let protected_files = vec![format!("{harness_home}/dsh-allow.json"), format!("{harness_home}/dsh-allow-audit.ndjson")];
    let req = DecideRequest {
        command: command.clone(),
        cwd,
        workspace,
        home,
        harness_home,
        platform,
        mode,
        rules,
        grants: Vec::new(),
        commands,
        protected_files,
        fence,
        persistence: if opt("--persistence").as_deref() == Some("shut") { Persistence::Shut } else { Persistence::Open },
        sockets: sockets_from_env(),
        fence_level,
        managed,
    };
    let d = crate::decide::decide(&req, &FsHost::from_env());
    print!("{}", crate::decide::explain::render(&req, &d));
    0
}

/// The daemons' sockets as this process's environment names them, as the
/// plugin reads them from the host's: docker's `DOCKER_HOST` (a unix one),
/// else `/var/run/docker.sock` when it is there; the ssh agent's
/// `SSH_AUTH_SOCK`.
fn sockets_from_env() -> crate::api::Sockets {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let docker = match var("DOCKER_HOST") {
        Some(h) => Some(h),
        None => std::path::Path::new("/var/run/docker.sock").exists().then(|| "/var/run/docker.sock".to_string()),
    };
    crate::api::Sockets { docker, ssh_agent: var("SSH_AUTH_SOCK") }
}

fn cmd_profile(args: &[String]) -> u8 {
    let req = match crate::runner::read_request(args) {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let host = FsHost::from_env();
    let plan = crate::fence::compile(&req, &host);
    let format = args.iter().position(|a| a == "--format").and_then(|i| args.get(i + 1)).map(String::as_str);
    match format {
        Some("sbpl") => {
            let sbpl = crate::fence::sbpl::render_for(&req, &plan, &host);
            if let Err(e) = sbpl.within_limits() {
                eprintln!("dsh-allow: {e}");
                return 1;
            }
            print!("{}", sbpl.text);
            for (k, v) in &sbpl.params {
                eprintln!("-D {k}={v}");
            }
        }
        #[cfg(target_os = "linux")]
        Some("landlock") => match crate::runner::linux::expand(&plan) {
            Ok(rules) => {
                for (path, caps) in rules {
                    let names: Vec<&str> = caps.iter().flat_map(|c| crate::fence::landlock::rights(*c).iter().copied()).collect();
                    println!("{path}\t{}", names.join("|"));
                }
            }
            Err(e) => return usage_error(&e),
        },
        Some("plan") | None => println!("{}", serde_json::to_string_pretty(&plan).expect("plan serializes")),
        Some(f) => return usage_error(&format!("--format: plan, sbpl or landlock, got {f:?}")),
    }
    0
}

fn cmd_status(args: &[String]) -> u8 {
    let req = match crate::runner::read_request(args) {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let plan = crate::fence::compile(&req, &FsHost::from_env());
    let mut status = crate::runner::status(&plan);
    // The real probe: the fenced process tree must start at all.
    let me = std::env::current_exe().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "dsh-allow".into());
    let json = serde_json::to_string(&req).expect("request serializes");
    let out = std::process::Command::new(&me)
        .args(["run", "--profile-json", &json, "--", "/bin/sh", "-c", "exit 0"])
        .output();
    let started = matches!(&out, Ok(o) if o.status.success());
    status["shellStarts"] = serde_json::Value::Bool(started);
    if let Ok(o) = &out {
        if !o.status.success() {
            status["probeError"] = serde_json::Value::String(String::from_utf8_lossy(&o.stderr).trim().to_string());
        }
    }
    println!("{}", serde_json::to_string_pretty(&status).expect("status serializes"));
    0
}

/// A managed file as the plugin reads it: its text, or why it cannot be read.
fn read_source(file: &str) -> crate::policy::managed::Source {
    match std::fs::read_to_string(file) {
        Ok(text) => crate::policy::managed::Source { file: file.to_string(), text: Some(text), error: None },
        Err(e) => crate::policy::managed::Source { file: file.to_string(), text: None, error: Some(e.to_string()) },
    }
}

/// `dsh-allow managed check FILE…`: each file alone, then what they enforce
/// together. Exit 1 when any is at fault, with the field named.
fn cmd_managed(args: &[String]) -> u8 {
    let ("check", files) = (args.first().map(String::as_str).unwrap_or(""), &args[args.len().min(1)..]) else {
        return usage_error("managed: the only subcommand is check FILE…");
    };
    if files.is_empty() {
        return usage_error("managed check needs a file");
    }
    let sources: Vec<_> = files.iter().map(|f| read_source(f)).collect();
    let merged = crate::policy::managed::merge(&sources);
    for e in &merged.errors {
        eprintln!("dsh-allow managed check: {e}");
    }
    if !merged.errors.is_empty() {
        return 1;
    }
    println!("{}: valid (managed policy version {})", files.join(", "), crate::policy::managed::MANAGED_VERSION);
    for line in merged.describe() {
        println!("  {line}");
    }
    0
}

fn usage_error(msg: &str) -> u8 {
    eprintln!("dsh-allow: {msg}\n{USAGE}");
    2
}

