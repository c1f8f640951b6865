//! The kernel's seccomp interface as the runner uses it: a classic BPF
//! filter over the call number and its register arguments, installed with
//! a user-notification listener (seccomp(2), seccomp_unotify(2)).
//!
//! The filter decides what it can from registers alone (a flag, a null
//! pointer, a request number); what needs the process's memory (a socket
//! address) goes to the supervisor ([`super::supervise`]).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

// include/uapi/linux/seccomp.h, filter.h, audit.h.
const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
/// Linux 5.19: once the supervisor has read a notification, only a fatal
/// signal interrupts the caller. Without it a signal restarts the call
/// after the supervisor already made its file, and an `O_EXCL` open then
/// finds its own file there.
const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
/// x86_64's x32 calls carry this bit in the number; the filter kills them
/// (another table of numbers would walk around this one).
const X32_BIT: u32 = 0x4000_0000;

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
const JA: u16 = 0x05;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub instruction_pointer: u64,
    pub args: [u64; 6],
}

/// `struct seccomp_notif`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct Notif {
    pub id: u64,
    pub pid: u32,
    pub flags: u32,
    pub data: SeccompData,
}

/// `struct seccomp_notif_resp`.
#[repr(C)]
struct NotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

// _IOWR('!', 0, struct seccomp_notif), _IOWR('!', 1, struct seccomp_notif_resp),
// _IOW('!', 2, __u64).
const IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const IOCTL_NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102;

/// What the filter does with one call, decided from registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Ask the supervisor.
    Notify,
    /// Fail with this errno, nothing done.
    Errno(u16),
}

/// One line of the filter: a call number, optionally only when an argument
/// (its low 32 bits) has a bit of `mask` set, or equals `value`.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    pub nr: i64,
    pub when: When,
    pub action: Action,
}

#[derive(Clone, Copy, Debug)]
pub enum When {
    Always,
    /// The argument's low word has any bit of the mask.
    AnyBit { arg: u8, mask: u32 },
    /// The argument's low word equals the value. Only the low word: the
    /// kernel takes an int where the register holds a long (ioctl's
    /// request), so a high word set by hand must not walk past the line.
    Equals { arg: u8, value: u32 },
    /// The argument (a pointer) is not null.
    NotNull { arg: u8 },
}

const fn stmt(code: u16, k: u32) -> SockFilter {
    SockFilter { code, jt: 0, jf: 0, k }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> SockFilter {
    SockFilter { code, jt, jf, k }
}

fn arg_low(arg: u8) -> u32 {
    16 + 8 * arg as u32
}

fn ret(action: Action) -> SockFilter {
    match action {
        Action::Notify => stmt(RET_K, RET_USER_NOTIF),
        Action::Errno(e) => stmt(RET_K, RET_ERRNO | e as u32),
    }
}

/// The program for `lines`: another architecture's calls and x32's are
/// killed; the call's number is found by a binary search over the numbers
/// the lines name, then that number's lines are tried in their order;
/// everything else runs.
///
/// A search, not a line after another: when the filter is installed the
/// kernel runs it once for every call number to learn which always run
/// (seccomp's action cache), and the JIT'd filter runs on every call the
/// cache cannot answer (an `openat` with its flags read): both walk a few
/// comparisons instead of one per line.
pub fn program(lines: &[Line]) -> Vec<SockFilter> {
    let mut p = vec![
        stmt(LD_W_ABS, 4), // seccomp_data.arch
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, RET_KILL_PROCESS),
        stmt(LD_W_ABS, 0), // seccomp_data.nr
        jump(JGE_K, X32_BIT, 0, 1),
        stmt(RET_K, RET_KILL_PROCESS),
    ];
    let mut numbers: Vec<u32> = lines.iter().map(|l| l.nr as u32).collect();
    numbers.sort_unstable();
    numbers.dedup();
    p.extend(search(&numbers, lines));
    p
}

/// At most this many numbers are compared one by one at the end of a search.
const LEAF: usize = 3;

/// The search over `numbers` (sorted), with `A` holding the call's number.
fn search(numbers: &[u32], lines: &[Line]) -> Vec<SockFilter> {
    if numbers.len() <= LEAF {
        let mut p = Vec::new();
        for &nr in numbers {
            let group = group(nr, lines);
            p.push(jump(JEQ_K, nr, 0, short(group.len())));
            p.extend(group);
        }
        p.push(stmt(RET_K, RET_ALLOW));
        return p;
    }
    let mid = numbers.len() / 2;
    let (below, from) = (search(&numbers[..mid], lines), search(&numbers[mid..], lines));
    let mut p = Vec::with_capacity(below.len() + from.len() + 2);
    match u8::try_from(from.len()) {
        // At or above the middle number: the part that follows; else past it.
        Ok(past) => p.push(jump(JGE_K, numbers[mid], 0, past)),
        Err(_) => {
            p.push(jump(JGE_K, numbers[mid], 1, 0));
            p.push(stmt(JA, from.len() as u32));
        }
    }
    p.extend(from);
    p.extend(below);
    p
}

/// The lines of call `nr`, in their order; when none holds, the call runs.
fn group(nr: u32, lines: &[Line]) -> Vec<SockFilter> {
    let mut p = Vec::new();
    for line in lines.iter().filter(|l| l.nr as u32 == nr) {
        match line.when {
            When::Always => {
                p.push(ret(line.action));
                // Nothing after an unconditional line is reached.
                return p;
            }
            When::AnyBit { arg, mask } => p.extend([stmt(LD_W_ABS, arg_low(arg)), jump(JSET_K, mask, 0, 1), ret(line.action)]),
            When::Equals { arg, value } => p.extend([stmt(LD_W_ABS, arg_low(arg)), jump(JEQ_K, value, 0, 1), ret(line.action)]),
            When::NotNull { arg } => p.extend([
                stmt(LD_W_ABS, arg_low(arg)),
                jump(JEQ_K, 0, 0, 2),
                stmt(LD_W_ABS, arg_low(arg) + 4),
                jump(JEQ_K, 0, 1, 0),
                ret(line.action),
            ]),
        }
    }
    p.push(stmt(RET_K, RET_ALLOW));
    p
}

/// A jump over `n` instructions within one number's lines (a few each).
fn short(n: usize) -> u8 {
    u8::try_from(n).expect("one call's lines span fewer than 256 instructions")
}

/// Install `prog` on this thread (and all it starts) with a listener; the
/// listener (close-on-exec), or the errno: EBUSY when a filter above this
/// process already has one (seccomp allows one listener per chain).
/// Needs no_new_privs or CAP_SYS_ADMIN.
pub fn install(prog: &[SockFilter]) -> Result<OwnedFd, i32> {
    let fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    let with = |flags: libc::c_ulong| {
        // SAFETY: a filter program that lives for the call.
        unsafe { libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog as *const SockFprog) }
    };
    let mut fd = with(SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
    if fd < 0 && errno() == libc::EINVAL {
        // Before Linux 5.19.
        fd = with(SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor, owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

// _IOW('!', 4, __u64), Linux 6.6.
const IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// Ask the kernel to hand over the CPU directly between a caller and the
/// supervisor (a synchronous wake-up each way): a notification is a round
/// trip between two tasks, and most of its cost is the two wake-ups. A
/// kernel before 6.6 refuses the flag; nothing changes then.
pub fn wake_synchronously(listener: RawFd) {
    // SAFETY: a listener descriptor and the flags word, by value.
    unsafe { libc::ioctl(listener, IOCTL_NOTIF_SET_FLAGS as _, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) };
}

/// The next notification, or None when the caller went away before it was
/// read (ENOENT) or the wait was interrupted.
pub fn receive(listener: RawFd) -> Option<Notif> {
    let mut n = Notif::default();
    // SAFETY: a listener descriptor and a zeroed struct of the size the request names.
    let r = unsafe { libc::ioctl(listener, IOCTL_NOTIF_RECV as _, &mut n as *mut Notif) };
    (r == 0).then_some(n)
}

/// Whether the caller of notification `id` is still waiting for its answer:
/// what was read from its memory or /proc was its own only while it is.
pub fn still_waiting(listener: RawFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: as above, for a u64.
    unsafe { libc::ioctl(listener, IOCTL_NOTIF_ID_VALID as _, &mut id as *mut u64) == 0 }
}

/// Answer notification `id`: the call returns `result` (a value, or a
/// negative errno), done by the supervisor on the caller's behalf; the
/// kernel never runs the call itself, so nothing is read twice.
pub fn answer(listener: RawFd, id: u64, result: Result<i64, i32>) {
    let resp = match result {
        Ok(val) => NotifResp { id, val, error: 0, flags: 0 },
        Err(e) => NotifResp { id, val: 0, error: -e, flags: 0 },
    };
    // SAFETY: as above. A caller that died meanwhile makes this fail: nothing to do.
    unsafe { libc::ioctl(listener, IOCTL_NOTIF_SEND as _, &resp as *const NotifResp) };
}

/// Let notification `id`'s call run as the caller made it. Only where a
/// later check stands behind it: the kernel reads the call's arguments
/// again (for a signal, Landlock's scope judges the target once more).
pub fn let_run(listener: RawFd, id: u64) {
    let resp = NotifResp { id, val: 0, error: 0, flags: SECCOMP_USER_NOTIF_FLAG_CONTINUE };
    // SAFETY: as above.
    unsafe { libc::ioctl(listener, IOCTL_NOTIF_SEND as _, &resp as *const NotifResp) };
}

const SECCOMP_USER_NOTIF_FLAG_CONTINUE: u32 = 1;

/// `struct seccomp_notif_addfd`.
#[repr(C)]
struct NotifAddfd {
    id: u64,
    flags: u32,
    srcfd: u32,
    newfd: u32,
    newfd_flags: u32,
}
// _IOW('!', 3, struct seccomp_notif_addfd)
const IOCTL_NOTIF_ADDFD: libc::c_ulong = 0x4018_2103;
/// Give the caller of notification `id` a copy of `fd` (the lowest free
/// number, close-on-exec when `cloexec`), its call still waiting: the
/// number, to answer the call with once nothing else holds the file (a copy
/// held elsewhere while the call runs keeps a file made for writing busy:
/// an exec of it fails with ETXTBSY). `fd` itself is closed here.
pub fn add_fd(listener: RawFd, id: u64, fd: OwnedFd, cloexec: bool) -> Result<i64, i32> {
    let add = NotifAddfd { id, flags: 0, srcfd: fd.as_raw_fd() as u32, newfd: 0, newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 } };
    // SAFETY: a listener descriptor and an addfd struct of the size the request names.
    let r = unsafe { libc::ioctl(listener, IOCTL_NOTIF_ADDFD as _, &add as *const NotifAddfd) };
    if r < 0 {
        return Err(errno());
    }
    Ok(i64::from(r))
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tiny interpreter for the instructions [`program`] emits, to check
    /// the jumps land where they should.
    fn run(p: &[SockFilter], d: &SeccompData) -> u32 {
        let word = |off: u32| -> u32 {
            let bytes: [u8; 64] = unsafe { std::mem::transmute(*d) };
            u32::from_ne_bytes(bytes[off as usize..off as usize + 4].try_into().unwrap())
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => a = word(i.k),
                RET_K => return i.k,
                JA => pc += i.k as usize,
                JEQ_K | JGE_K | JSET_K => {
                    let hit = match i.code {
                        JEQ_K => a == i.k,
                        JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += if hit { i.jt } else { i.jf } as usize;
                }
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    fn call(nr: i64, args: [u64; 6]) -> SeccompData {
        SeccompData { nr: nr as i32, arch: AUDIT_ARCH, instruction_pointer: 0, args }
    }

    #[test]
    fn each_line_matches_only_its_call_and_condition() {
        let lines = [
            Line { nr: 42, when: When::Always, action: Action::Notify },
            Line { nr: 44, when: When::NotNull { arg: 4 }, action: Action::Notify },
            Line { nr: 46, when: When::AnyBit { arg: 2, mask: 0x2000_0000 }, action: Action::Errno(95) },
            Line { nr: 16, when: When::Equals { arg: 1, value: 0x5412 }, action: Action::Errno(1) },
        ];
        let p = program(&lines);
        assert_eq!(run(&p, &call(42, [0; 6])), RET_USER_NOTIF);
        assert_eq!(run(&p, &call(44, [3, 1, 1, 0, 0, 0])), RET_ALLOW, "sendto with no address runs");
        assert_eq!(run(&p, &call(44, [3, 1, 1, 0, 0x7fff_0000_0000, 16])), RET_USER_NOTIF, "a high-word pointer is not null");
        assert_eq!(run(&p, &call(44, [3, 1, 1, 0, 0x1000, 16])), RET_USER_NOTIF);
        assert_eq!(run(&p, &call(46, [3, 1, 0x2000_0000, 0, 0, 0])), RET_ERRNO | 95);
        assert_eq!(run(&p, &call(46, [3, 1, 0x40, 0, 0, 0])), RET_ALLOW);
        assert_eq!(run(&p, &call(16, [0, 0x5412, 0, 0, 0, 0])), RET_ERRNO | 1);
        assert_eq!(run(&p, &call(16, [0, 0x1_0000_5412, 0, 0, 0, 0])), RET_ERRNO | 1, "the kernel reads an int: a high word changes nothing");
        assert_eq!(run(&p, &call(16, [0, 0x5413, 0, 0, 0, 0])), RET_ALLOW);
        assert_eq!(run(&p, &call(0, [0; 6])), RET_ALLOW);
        let other_arch = SeccompData { arch: 0x4000_0003, ..call(42, [0; 6]) };
        assert_eq!(run(&p, &other_arch), RET_KILL_PROCESS);
        assert_eq!(run(&p, &call(X32_BIT as i64 | 42, [0; 6])), RET_KILL_PROCESS);
    }

    /// What the lines say of one call: the first line of its number whose
    /// condition holds, else it runs.
    fn meant(lines: &[Line], d: &SeccompData) -> u32 {
        let low = |arg: u8| d.args[arg as usize] as u32;
        let hit = lines.iter().find(|l| {
            l.nr as i32 == d.nr
                && match l.when {
                    When::Always => true,
                    When::AnyBit { arg, mask } => low(arg) & mask != 0,
                    When::Equals { arg, value } => low(arg) == value,
                    When::NotNull { arg } => d.args[arg as usize] != 0,
                }
        });
        hit.map_or(RET_ALLOW, |l| ret(l.action).k)
    }

    /// Arguments that make each line's condition hold, and miss.
    fn argument_sets(lines: &[Line]) -> Vec<[u64; 6]> {
        let mut sets = vec![[0; 6], [u64::MAX; 6], [0x1_0000_0000; 6]];
        for l in lines {
            match l.when {
                When::Always => {}
                When::AnyBit { arg, mask } => {
                    let mut a = [0; 6];
                    a[arg as usize] = u64::from(mask & mask.wrapping_neg());
                    sets.push(a);
                    a[arg as usize] = u64::from(!mask);
                    sets.push(a);
                }
                When::Equals { arg, value } => {
                    let mut a = [0; 6];
                    a[arg as usize] = u64::from(value);
                    sets.push(a);
                    a[arg as usize] = u64::from(value ^ 1);
                    sets.push(a);
                }
                When::NotNull { arg } => {
                    let mut a = [0; 6];
                    a[arg as usize] = 0x7fff_0000_0000;
                    sets.push(a);
                }
            }
        }
        sets
    }

    /// Panics unless `program(lines)` decides every call as the lines say.
    pub(crate) fn program_says_what_the_lines_say(lines: &[Line]) {
        let p = program(lines);
        for args in argument_sets(lines) {
            for nr in 0..1100 {
                let d = call(nr, args);
                assert_eq!(run(&p, &d), meant(lines, &d), "call {nr} with {args:x?}");
            }
        }
    }

    #[test]
    fn a_filter_too_long_for_a_short_jump_still_finds_every_number() {
        // 300 numbers with a condition each: the search's halves span more
        // than a conditional jump can (255), so it jumps with JA.
        let lines: Vec<Line> = (0..300).map(|i| Line { nr: 3 * i + 1, when: When::NotNull { arg: (i % 6) as u8 }, action: Action::Notify }).collect();
        let p = program(&lines);
        assert!(p.iter().any(|i| i.code == JA), "the long program needs a far jump");
        program_says_what_the_lines_say(&lines);
    }

    /// The most steps `program(lines)` takes for a call number the lines
    /// do not name (below 460), as the kernel's cache emulation walks it.
    pub(crate) fn most_steps_for_an_unnamed_call(lines: &[Line]) -> usize {
        let p = program(lines);
        let steps = |d: &SeccompData| {
            let (mut pc, mut n) = (0usize, 0);
            loop {
                let i = p[pc];
                n += 1;
                pc += 1;
                match i.code {
                    RET_K => return n,
                    JA => pc += i.k as usize,
                    JEQ_K | JGE_K | JSET_K => {
                        let hit = match i.code {
                            JEQ_K => d.nr as u32 == i.k,
                            JGE_K => d.nr as u32 >= i.k,
                            _ => d.nr as u32 & i.k != 0,
                        };
                        pc += if hit { i.jt } else { i.jf } as usize;
                    }
                    _ => {}
                }
            }
        };
        (0..460).filter(|&nr| !lines.iter().any(|l| l.nr == nr)).map(|nr| steps(&call(nr, [0; 6]))).max().unwrap()
    }
}
