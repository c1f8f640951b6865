//! The DSH control planes on this machine, found when a connection is
//! judged, not when the call began (Linux).
//!
//! A process a call leaves running outlives the call and the host that
//! started it: the list of host processes the profile named is stale the
//! moment `dsh web` restarts, a second one starts on the same DSH_HOME, or
//! one runs with another DSH_HOME. So every judgement looks again: the
//! processes the profile named (the plugin's registry) that still run as
//! named, the runner's parent, and every process of this user running
//! DSH's command line (node with DSH's entry script, or a program called
//! `dsh`). What DSH answers on its ports and sockets changes the user's
//! policy and modes; none of them is a fenced call's to reach.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::procs::{start_time, Proc};

/// The processes known to be DSH hosts, and what was learnt of the others.
#[derive(Clone, Debug, Default)]
pub struct Hosts {
    /// Named by the profile (and the runner's parent), as started then.
    named: Arc<Vec<Named>>,
    /// Whose processes count: this user's.
    uid: u32,
    /// Each process seen so far, by pid and start time: a DSH host or not.
    seen: Arc<Mutex<HashMap<i32, (u64, bool)>>>,
}

impl Hosts {
    pub fn new(named: &[i32], uid: u32) -> Hosts {
        Hosts { named: Arc::new(named.iter().filter_map(|&p| Named::of(p)).collect()), uid, seen: Default::default() }
    }

    /// Every DSH host process running now.
    pub fn live(&self) -> Vec<i32> {
        let mut out: Vec<i32> = self.named.iter().filter_map(Named::alive).collect();
        let Ok(dir) = std::fs::read_dir("/proc") else { return out };
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut now: HashMap<i32, (u64, bool)> = HashMap::with_capacity(seen.len());
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            let Some(start) = start_time(pid) else { continue };
            let dsh = match seen.get(&pid) {
                Some(&(s, dsh)) if s == start => dsh,
                _ => owner(pid) == Some(self.uid) && runs_dsh(pid),
            };
            now.insert(pid, (start, dsh));
            if dsh && !out.contains(&pid) {
                out.push(pid);
            }
        }
        *seen = now;
        out
    }
}

/// A named host process. A pidfd names that very process (not a later
/// one given its pid) and costs one system call, where its start time is a
/// read of its /proc entry; the start time where pidfds are missing.
#[derive(Debug)]
enum Named {
    Fd(i32, std::os::fd::OwnedFd),
    Stat(Proc),
}

impl Named {
    fn of(pid: i32) -> Option<Named> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open with a pid and no flags.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            // SAFETY: a descriptor just made, ours alone.
            return Some(Named::Fd(pid, unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) }));
        }
        Proc::of(pid).map(Named::Stat)
    }

    /// Its pid while it runs (or has ended and not been reaped).
    fn alive(&self) -> Option<i32> {
        use std::os::fd::AsRawFd;
        match self {
            Named::Fd(pid, fd) => {
                // SAFETY: signal 0 (nothing sent, only the check) by pidfd.
                let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), 0, std::ptr::null::<libc::siginfo_t>(), 0) };
                // Only ESRCH says it ended. Any other refusal (not ours to
                // signal, a filter's ENOSYS) counts it as running: a host
                // wrongly counted is refused to the call, never opened to it.
                (r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)).then_some(*pid)
            }
            Named::Stat(p) => p.alive().then_some(p.pid),
        }
    }
}

fn owner(pid: i32) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}")).ok().map(|m| m.uid())
}

/// Whether a process runs DSH: its program or the script its interpreter
/// runs is DSH's (`…/@deepseek-ai/dsh/…`, or a file named `dsh`, which is
/// how its package installs the command).
fn runs_dsh(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    is_dsh_command(&cmdline)
}

/// The test on a NUL-separated command line: the program or the first
/// argument that does not start with `-` (the script an interpreter runs).
pub fn is_dsh_command(cmdline: &[u8]) -> bool {
    let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).filter(|w| !w.is_empty()).collect();
    let script = words.iter().skip(1).find(|w| !w.starts_with(b"-"));
    words.first().into_iter().chain(script).any(|w| {
        let text = String::from_utf8_lossy(w);
        let name = text.rsplit('/').next().unwrap_or(&text);
        name == "dsh" || text.contains("/@deepseek-ai/dsh/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsh_is_known_by_its_command_however_it_was_started() {
        assert!(is_dsh_command(b"node\0/home/me/x/node_modules/.bin/dsh\0web\0--port=0\0"));
        assert!(is_dsh_command(b"/usr/bin/node\0--enable-source-maps\0/usr/lib/node_modules/@deepseek-ai/dsh/lib/bin.js\0web\0"));
        assert!(is_dsh_command(b"/usr/local/bin/dsh\0"));
        assert!(!is_dsh_command(b"node\0server.js\0--name\0dsh\0"), "an argument that merely says dsh is not DSH");
        assert!(!is_dsh_command(b"python3\0-m\0http.server\0"));
        assert!(!is_dsh_command(b"/usr/bin/dshell\0"));
    }

    #[test]
    fn a_named_host_counts_while_it_runs_and_not_once_it_has_ended() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let pid = child.id() as i32;
        // SAFETY: getuid has no preconditions.
        let hosts = Hosts::new(&[pid], unsafe { libc::getuid() });
        assert!(hosts.live().contains(&pid), "a named host that runs is live");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!hosts.live().contains(&pid), "an ended host is not (nor whatever takes its pid later)");
    }

    #[test]
    fn a_process_running_dsh_is_found_without_being_named() {
        let dir = std::env::temp_dir().join(format!("hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dsh = dir.join("dsh");
        std::fs::write(&dsh, "#!/bin/sh\nsleep 5\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dsh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut child = std::process::Command::new(&dsh).spawn().unwrap();
        // SAFETY: getuid has no preconditions.
        let hosts = Hosts::new(&[], unsafe { libc::getuid() });
        std::thread::sleep(std::time::Duration::from_millis(100));
        let live = hosts.live();
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(live.contains(&(child.id() as i32)), "{live:?}");
    }
}
