//! `dsh-allow`: see `src/cli.rs`.
//!
//! On Linux the runner starts in front of every confined command, so the
//! binary has no Rust runtime start-up (`no_main`): that start-up probes the
//! main thread's stack by reading /proc/self/maps and sets up a signal
//! stack, about 0.1 ms here. What is given up: SIGPIPE keeps its default
//! (a closed pipe ends the process, as for any Unix tool) and a stack
//! overflow is a plain SIGSEGV.
#![cfg_attr(target_os = "linux", no_main)]

#[cfg(target_os = "linux")]
#[no_mangle]
pub extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // std reads the arguments on its own (glibc passes them at start-up).
    let status = dsh_allow::cli::main();
    // No runtime means no flush at exit.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::ffi::c_int::from(status)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(dsh_allow::cli::main())
}

#[cfg(not(unix))]
fn main() {
    eprintln!("dsh-allow: the command line runs on Linux and macOS");
}
