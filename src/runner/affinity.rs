//! The call's set-up on one CPU (Linux).
//!
//! Setting a call up is a chain of hand-overs between its processes: the
//! runner forks the init, the init starts the command, the command hands
//! its filter's listener to the supervisor and waits for the answer, the
//! init greets the supervisor. Each wakes a process that sleeps; when that
//! process last ran on another CPU the wake is an interrupt sent there,
//! and on a virtual machine an exit to the hypervisor, tens of
//! microseconds of CPU each. So the supervisor pins itself to the CPU it
//! runs on before its fork, and its processes inherit that: every wake of
//! the set-up stays on one CPU. What the user runs never inherits it: the
//! command takes the CPUs it was started with back before its exec, the
//! init and the supervisor once the set-up is over. Best effort: where the
//! kernel refuses, nothing is pinned and nothing changes.

use std::sync::OnceLock;

/// The CPUs this process was allowed before [`pin_here`].
static BEFORE: OnceLock<libc::cpu_set_t> = OnceLock::new();

/// Run on the current CPU only, remembering the CPUs allowed before.
pub fn pin_here() {
    // SAFETY: a zeroed set for the kernel to fill, of the size passed.
    let mut before: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut before) } != 0 {
        return;
    }
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    if cpu < 0 || BEFORE.set(before).is_err() {
        return;
    }
    // SAFETY: a set with one CPU, one the process runs on, so allowed.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut one);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
    }
}

/// Take back the CPUs allowed before [`pin_here`] (nothing when it pinned
/// nothing). Async-signal-safe: a child between fork and exec calls it.
pub fn unpin() {
    if let Some(before) = BEFORE.get() {
        // SAFETY: the set read by sched_getaffinity, of its size.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), before) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> usize {
        // SAFETY: as in pin_here.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }, 0);
        (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).count()
    }

    #[test]
    fn a_pinned_process_runs_on_one_cpu_and_gets_every_cpu_back_when_unpinned() {
        // In a thread of its own: affinity is a thread's, and the test
        // harness's other threads keep theirs.
        std::thread::spawn(|| {
            let before = allowed();
            pin_here();
            assert_eq!(allowed(), 1);
            unpin();
            assert_eq!(allowed(), before);
        })
        .join()
        .unwrap();
    }
}
