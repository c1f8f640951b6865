//! Who a kernel test runs as: root, or an unprivileged user (uid 65534,
//! through setpriv), whose runner takes the user-namespace path. Shared by
//! the suites that run each case as both.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The unprivileged user the suites become.
pub const NOBODY: u32 = 65534;

/// Whether this test can run as `user` here; otherwise a loud SKIP (or a
/// failure where Landlock is required).
pub fn usable(name: &str, user: Option<u32>) -> bool {
    if dsh_allow::runner::landlock_abi() == 0 {
        assert!(std::env::var("DSH_ALLOW_REQUIRE_LANDLOCK").is_err(), "Landlock is required but this kernel has none");
        eprintln!("SKIP {name}: this kernel has no Landlock");
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    if user.is_some() && (unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists()) {
        eprintln!("SKIP {name} as an unprivileged user: needs root and setpriv to become one here");
        return false;
    }
    true
}

/// Hand `base` and all below it to `user` (nothing to do for root).
pub fn own(base: &Path, user: Option<u32>) {
    if let Some(u) = user {
        assert!(Command::new("chown").arg("-R").arg(format!("{u}:{u}")).arg(base).status().unwrap().success());
    }
}

/// The words that become `user` before `argv` runs (none for root).
pub fn become_user(user: Option<u32>) -> Vec<String> {
    match user {
        Some(u) => vec!["/usr/bin/setpriv".into(), format!("--reuid={u}"), format!("--regid={u}"), "--clear-groups".into()],
        None => Vec::new(),
    }
}

/// `argv` as `user`.
pub fn command_as(user: Option<u32>, argv: &[&str]) -> Command {
    let full: Vec<String> = become_user(user).into_iter().chain(argv.iter().map(|s| s.to_string())).collect();
    let mut c = Command::new(&full[0]);
    c.args(&full[1..]);
    c
}

/// Run `c` and collect its output. A copy of the runner another test
/// thread was still writing when it forked is busy until that child execs
/// (ETXTBSY): try again.
pub fn output(c: &mut Command) -> std::process::Output {
    for _ in 0..50 {
        match c.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => std::thread::sleep(std::time::Duration::from_millis(20)),
            other => return other.unwrap(),
        }
    }
    panic!("the runner stayed busy (ETXTBSY)");
}

/// Copy the runner to `to` in a process of its own: a file this process
/// held open for writing would be inherited by a child another test
/// thread forks meanwhile, and the copy would be busy (ETXTBSY) when run.
pub fn copy_runner(from: &str, to: &Path) {
    let st = Command::new("cp").arg("--").arg(from).arg(to).status().expect("cp starts");
    assert!(st.success(), "cannot copy the runner to {}", to.display());
}
