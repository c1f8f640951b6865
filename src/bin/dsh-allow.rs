//! `dsh-allow`: see `src/cli.rs`.
//!
//! On Linux the runner starts in front of every confined command, so the
//! binary has no Rust runtime start-up (`no_main`): that start-up probes the
//! main thread's stack by reading /proc/self/maps and sets up a signal
//! stack, about 0.1 ms here. What is given up: SIGPIPE keeps its default
//! (a closed pipe ends the process, as for any Unix tool) and a stack
//! overflow is a plain SIGSEGV. What it did that matters is kept: standard
//! streams that are closed are opened on /dev/null, so no descriptor the
//! runner opens can land on them.
#![cfg_attr(target_os = "linux", no_main)]

#[cfg(target_os = "linux")]
#[no_mangle]
pub extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: three pollfd structs, a zero timeout.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0 {
        for p in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            // SAFETY: a NUL-terminated path; the lowest free descriptor is
            // the closed one, since those below it are open.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if fd != p.fd {
                return 125;
            }
        }
    }
    // Read from argv here: std reads them on its own only where the C
    // library passes them to initialisers (glibc does, musl does not).
    let mut args = Vec::new();
    for i in 1..usize::try_from(argc).unwrap_or(0) {
        // SAFETY: argv holds argc NUL-terminated strings.
        match unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) }.to_str() {
            Ok(a) => args.push(a.to_owned()),
            Err(_) => {
                eprintln!("dsh-allow: argument {i} is not UTF-8");
                return 2;
            }
        }
    }
    let status = dsh_allow::cli::main_with(args);
    // No runtime means no flush at exit.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::ffi::c_int::from(status)
}

/// Every allocation of the binary goes through the start-up arena
/// (src/runner/arena.rs), then the system allocator once it is closed.
#[cfg(target_os = "linux")]
struct StartUp;

#[cfg(target_os = "linux")]
// SAFETY: delegates each call, as made, to the arena.
unsafe impl std::alloc::GlobalAlloc for StartUp {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        unsafe { dsh_allow::runner::arena::START_UP.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        unsafe { dsh_allow::runner::arena::START_UP.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, size: usize) -> *mut u8 {
        unsafe { dsh_allow::runner::arena::START_UP.realloc(p, l, size) }
    }
}

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: StartUp = StartUp;

/// LLVM's libunwind as Debian ships it (`libunwind-19-dev`, the unwinder a
/// static musl binary links) is built against glibc, whose fortified
/// `fprintf` it calls to log when `LIBUNWIND_PRINT_*` is set. Those logs are
/// dropped; nothing else of glibc's is referenced. (C declares it variadic;
/// on x86_64 a callee that reads none of the variable arguments may be
/// declared without them.)
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[no_mangle]
pub extern "C" fn __fprintf_chk(_stream: *mut std::ffi::c_void, _flag: std::ffi::c_int, _format: *const std::ffi::c_char) -> std::ffi::c_int {
    0
}

#[cfg(all(unix, not(target_os = "linux")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(dsh_allow::cli::main())
}

#[cfg(not(unix))]
fn main() {
    eprintln!("dsh-allow: the command line runs on Linux and macOS");
}
