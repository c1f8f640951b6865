//! `sandbox-exec` for Linux: the Seatbelt model, a test instrument.
//!
//! `sandbox-exec [-f FILE | -p TEXT] [-D KEY=VALUE]… [--] PROGRAM [ARG]…`,
//! as sandbox-exec(1) takes it: compile the profile (an error prints
//! `sandbox-exec: …` and exits 65, as reported of the real one), apply it,
//! then exec PROGRAM in this very process (its pid, its exit status).
//!
//! Applying it: a supervisor process is split off first (detached, so it is
//! no child of PROGRAM and outlives it while any descendant runs), then this
//! process installs a seccomp filter with a listener, hands the listener to
//! the supervisor and closes its own copy before the exec, so nothing under
//! the profile can answer for itself.
//!
//! Nesting: Seatbelt refuses `sandbox_apply` inside a process that already
//! runs under a profile with any deny rule, printing `sandbox-exec:
//! sandbox_apply: Operation not permitted` with exit 71 (openai/codex#45657,
//! anthropic-experimental/sandbox-runtime#67; bisected in appandflow/stim#469:
//! an `(allow default)`-only outer profile nests, one deny of any kind does
//! not, whatever the inner profile says). The model gets the same from the
//! kernel: a process under a filter with a listener cannot install another
//! listener (EBUSY). A profile that denies nothing installs no fence, only
//! that check.
//!
//! `DSH_ALLOW_SEATBELT_MODEL_LOG=FILE` appends a line per profile applied,
//! per nesting refused and per operation refused.

#[path = "../../support/sbpl_check.rs"]
#[allow(dead_code)]
mod sbpl_check;
#[path = "../../support/sbpl_vocabulary.rs"]
#[allow(dead_code)]
mod sbpl_vocabulary;

#[path = "../../support/macos_links.rs"]
#[allow(dead_code)]
mod macos_links;
mod profile;
mod resolve;
// The runner's own seccomp layer (filter program, listener, answers).
#[path = "../../../src/runner/seccomp.rs"]
#[allow(dead_code)]
mod seccomp;
mod supervise;
mod syscalls;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const EX_USAGE: i32 = 64;
const EX_DATAERR: i32 = 65;
const EX_OSERR: i32 = 71;

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("sandbox-exec: {msg}");
    std::process::exit(code);
}

struct Args {
    text: String,
    params: BTreeMap<String, String>,
    argv: Vec<String>,
}

fn args() -> Args {
    let mut it = std::env::args().skip(1).peekable();
    let mut text = None;
    let mut params = BTreeMap::new();
    while let Some(a) = it.peek().cloned() {
        match a.as_str() {
            "-p" => {
                it.next();
                text = Some(it.next().unwrap_or_else(|| fail(EX_USAGE, "option requires an argument -- p")));
            }
            "-f" => {
                it.next();
                let f = it.next().unwrap_or_else(|| fail(EX_USAGE, "option requires an argument -- f"));
                text = Some(std::fs::read_to_string(&f).unwrap_or_else(|e| fail(EX_OSERR, &format!("{f}: {e}"))));
            }
            "-n" => fail(EX_USAGE, "the Seatbelt model knows no named profiles (-n)"),
            "-D" => {
                it.next();
                let kv = it.next().unwrap_or_else(|| fail(EX_USAGE, "option requires an argument -- D"));
                let (k, v) = kv.split_once('=').unwrap_or_else(|| fail(EX_USAGE, &format!("-D {kv}: expected KEY=VALUE")));
                params.insert(k.to_string(), v.to_string());
            }
            "--" => {
                it.next();
                break;
            }
            _ => break,
        }
    }
    let argv: Vec<String> = it.collect();
    let text = text.unwrap_or_else(|| fail(EX_USAGE, "usage: sandbox-exec [-f profile-file] [-p profile-string] [-D key=value ...] command [arguments ...]"));
    if argv.is_empty() {
        fail(EX_USAGE, "usage: sandbox-exec [-f profile-file] [-p profile-string] [-D key=value ...] command [arguments ...]");
    }
    Args { text, params, argv }
}

/// PROGRAM as execvp would find it.
fn program(name: &str) -> String {
    if name.contains('/') {
        return name.to_string();
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    for dir in path.split(':') {
        let cand = format!("{}/{name}", if dir.is_empty() { "." } else { dir });
        if std::fs::metadata(&cand).is_ok_and(|m| m.is_file()) {
            return cand;
        }
    }
    fail(EX_OSERR, &format!("execvp() of '{name}' failed: No such file or directory"))
}

fn exec(argv: &[String]) -> ! {
    let prog = CString::new(program(&argv[0])).unwrap_or_else(|_| fail(EX_USAGE, "a NUL in the program name"));
    let c: Vec<CString> = argv.iter().map(|a| CString::new(a.as_str()).unwrap_or_else(|_| fail(EX_USAGE, "a NUL in an argument"))).collect();
    let mut ptrs: Vec<*const libc::c_char> = c.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    unsafe { libc::execv(prog.as_ptr(), ptrs.as_ptr()) };
    let e = std::io::Error::last_os_error();
    fail(EX_OSERR, &format!("execvp() of '{}' failed: {e}", argv[0]))
}

fn main() {
    let a = args();
    let profile = profile::compile(&a.text, &a.params).unwrap_or_else(|e| fail(EX_DATAERR, &e));
    let open_log = || {
        std::env::var_os("DSH_ALLOW_SEATBELT_MODEL_LOG").and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok())
    };
    // Two handles, both opened before the filter: the supervisor's, and
    // this process's own (its later opens go through the profile).
    let log = open_log();
    let mut own_log = open_log();
    // A profile that denies nothing is applied without a fence (so nesting
    // below it works, stim#469), but is still refused inside one that does.
    if !profile.denies_anything() {
        if supervise::nested() {
            note(&mut own_log, &format!("nested {} refused {}", std::process::id(), a.argv[0]));
            fail(EX_OSERR, "sandbox_apply: Operation not permitted");
        }
        note(&mut own_log, &format!("apply {} {} (allow default only: no fence)", std::process::id(), a.argv[0]));
        drop(own_log);
        exec(&a.argv);
    }

    let mut pair = [0 as RawFd; 2];
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) } < 0 {
        fail(EX_OSERR, "sandbox_apply: socketpair failed");
    }
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };

    // The supervisor: a grandchild, so that it is nobody's child here.
    match unsafe { libc::fork() } {
        -1 => fail(EX_OSERR, "sandbox_apply: fork failed"),
        0 => {
            drop(ours);
            if unsafe { libc::fork() } != 0 {
                unsafe { libc::_exit(0) };
            }
            unsafe { libc::setsid() };
            detach_stdio();
            let Some(listener) = receive_fd(theirs.as_raw_fd()) else { unsafe { libc::_exit(0) } };
            drop(theirs);
            supervise::serve(listener, &profile, log);
            unsafe { libc::_exit(0) };
        }
        child => {
            let mut status = 0;
            unsafe { libc::waitpid(child, &mut status, 0) };
        }
    }
    drop(theirs);

    let listener = match supervise::install() {
        Ok(fd) => fd,
        Err(libc::EBUSY) => {
            note(&mut own_log, &format!("nested {} refused {}", std::process::id(), a.argv[0]));
            fail(EX_OSERR, "sandbox_apply: Operation not permitted")
        }
        Err(e) => fail(EX_OSERR, &format!("sandbox_apply: {}", std::io::Error::from_raw_os_error(e))),
    };
    if !send_fd(ours.as_raw_fd(), listener.as_raw_fd()) {
        fail(EX_OSERR, "sandbox_apply: the supervisor did not take the listener");
    }
    // Wait until the supervisor holds it, then let go of ours: nothing
    // under the profile may keep a way to answer its own calls.
    let mut ack = [0u8; 1];
    if unsafe { libc::read(ours.as_raw_fd(), ack.as_mut_ptr().cast(), 1) } != 1 {
        fail(EX_OSERR, "sandbox_apply: the supervisor is gone");
    }
    drop(listener);
    drop(ours);
    note(&mut own_log, &format!("apply {} {}", std::process::id(), a.argv[0]));
    drop(own_log);
    exec(&a.argv);
}

/// One line in the log, if there is one: `apply PID PROGRAM` when a profile
/// is in force, `nested PID refused PROGRAM` when nesting was refused, so a
/// test can count the profiles a call went through.
fn note(log: &mut Option<std::fs::File>, line: &str) {
    use std::io::Write;
    if let Some(f) = log {
        let _ = writeln!(f, "{line}");
    }
}

fn detach_stdio() {
    let null = CString::new("/dev/null").unwrap();
    let fd = unsafe { libc::open(null.as_ptr(), libc::O_RDWR) };
    if fd >= 0 {
        for target in 0..3 {
            unsafe { libc::dup2(fd, target) };
        }
        if fd > 2 {
            unsafe { libc::close(fd) };
        }
    }
}

/// One byte with room for one descriptor (SCM_RIGHTS) beside it.
struct RightsMsg {
    byte: [u8; 1],
    iov: libc::iovec,
    control: Vec<u8>,
    msg: libc::msghdr,
}

impl RightsMsg {
    fn new() -> Box<RightsMsg> {
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
        // Boxed: the header points into the same allocation.
        let mut m = Box::new(RightsMsg {
            byte: [0],
            iov: libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 1 },
            control: vec![0u8; space],
            msg: unsafe { std::mem::zeroed() },
        });
        m.iov.iov_base = m.byte.as_mut_ptr().cast();
        m.msg.msg_iov = &mut m.iov;
        m.msg.msg_iovlen = 1;
        m.msg.msg_control = m.control.as_mut_ptr().cast();
        m.msg.msg_controllen = space as _;
        m
    }
}

fn send_fd(sock: RawFd, fd: RawFd) -> bool {
    let m = RightsMsg::new();
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&m.msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<RawFd>(), fd);
        libc::sendmsg(sock, &m.msg, 0) == 1
    }
}

fn receive_fd(sock: RawFd) -> Option<OwnedFd> {
    let mut m = RightsMsg::new();
    unsafe {
        if libc::recvmsg(sock, &mut m.msg, libc::MSG_CMSG_CLOEXEC) != 1 {
            return None;
        }
        let c = libc::CMSG_FIRSTHDR(&m.msg);
        if c.is_null() || (*c).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<RawFd>());
        // Tell the sandboxed side it may close its copy.
        libc::write(sock, [1u8].as_ptr().cast(), 1);
        Some(OwnedFd::from_raw_fd(fd))
    }
}
