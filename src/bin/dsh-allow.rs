//! `dsh-allow`: see `src/cli.rs`.

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    dsh_allow::cli::main()
}

#[cfg(not(unix))]
fn main() {
    eprintln!("dsh-allow: the command line runs on Linux and macOS");
}
