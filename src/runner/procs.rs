//! Processes as `/proc` names them (Linux): a pid with its start time, a
//! process's children, the process a thread belongs to.
//!
//! A pid alone may be reused by the time it is looked at again, so a
//! process kept across judgements is named by its pid and its start time.
//! Both the socket judge and the list of DSH hosts read these; they live
//! here so neither imports the other for them.

use std::io::Read;

/// A process named by pid and start time (a pid alone may be reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub start: u64,
}

impl Proc {
    pub fn of(pid: i32) -> Option<Proc> {
        Some(Proc { pid, start: start_time(pid)? })
    }

    /// Still running as the process first seen (not a reuse of its pid).
    pub fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

/// A process's start time (clock ticks since boot), field 22 of its stat.
pub fn start_time(pid: i32) -> Option<u64> {
    start_time_in(&read_small(&format!("/proc/{pid}/stat"))?)
}

/// A small /proc file (a few KiB at most). /proc says a size of 0, so
/// `read_to_string` into an empty string starts at 32 bytes and doubles
/// (six to eight reads); with room made up front it is one read and one
/// that finds the end.
pub fn read_small(path: &str) -> Option<String> {
    let mut text = String::with_capacity(4096);
    std::fs::File::open(path).ok()?.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Field 22 of a stat line. The name (field 2) may hold spaces and
/// parentheses: count from its last `)`.
fn start_time_in(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A process's children, over all its threads.
pub fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(text.split_whitespace().filter_map(|c| c.parse::<i32>().ok()));
        }
    }
    out
}

/// The process a thread belongs to.
pub fn thread_group_of(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_counted_from_the_last_parenthesis_of_a_name_that_holds_spaces_and_parentheses() {
        let fields: Vec<String> = (3..=22).map(|n| n.to_string()).collect();
        let line = format!("42 (a (b) c) ) {}\n", fields.join(" "));
        assert_eq!(start_time_in(&line), Some(22));
        assert_eq!(start_time_in("42 (no end"), None, "a line without the name's end names no start");
    }

    #[test]
    fn a_running_process_is_alive_and_a_reused_pid_is_not() {
        let me = Proc::of(std::process::id() as i32).expect("this process has a stat");
        assert!(me.alive());
        assert!(!Proc { start: me.start + 1, ..me }.alive(), "another start time is another process");
    }

    #[test]
    fn a_thread_belongs_to_its_process_and_a_child_is_listed() {
        let me = std::process::id() as i32;
        let (tid, group) = std::thread::spawn(|| {
            // SAFETY: gettid has no arguments and cannot fail.
            let tid = unsafe { libc::gettid() };
            (tid, thread_group_of(tid))
        })
        .join()
        .unwrap();
        assert_ne!(tid, me);
        assert_eq!(group, Some(me), "a thread's process is the one that started it");
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let listed = children_of(me).contains(&(child.id() as i32));
        child.kill().ok();
        child.wait().ok();
        assert!(listed, "a child of any thread is among the process's children");
    }
}
