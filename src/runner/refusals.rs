//! Naming what the fence refused the call (Linux): each create, delete or
//! rename the supervisor saw refused becomes one line on the call's
//! standard error, once per (capability, path), in a form the plugin reads
//! back (fence/guidance.rs) to tell the model exactly what was missing and
//! what would grant it — the runner's own knowledge, not a guess from the
//! program's message.

use std::collections::HashSet;

/// How every refusal line starts (the socket and signal lines share it).
pub const PREFIX: &str = "dsh-allow: refused ";

/// The refusals named so far in this call.
#[derive(Clone, Debug, Default)]
pub struct Refusals {
    seen: HashSet<(&'static str, String)>,
}

impl Refusals {
    /// Name `capability` refused on `path` to `operation` of thread `tid`,
    /// unless already named in this call.
    pub fn report(&mut self, capability: &'static str, path: &str, operation: &str, tid: u32) {
        if self.seen.insert((capability, path.to_string())) {
            eprintln!("{}", line(capability, path, operation, &program_of(tid), tid));
        }
    }
}

/// `dsh-allow: refused delete "/w/app.db-journal" (unlink; sqlite3, pid 4242)`.
pub fn line(capability: &str, path: &str, operation: &str, program: &str, pid: u32) -> String {
    let quoted = serde_json::to_string(path).unwrap_or_else(|_| format!("{path:?}"));
    format!("{PREFIX}{capability} {quoted} ({operation}; {program}, pid {pid})")
}

fn program_of(tid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{tid}/comm")).map(|c| c.trim().to_string()).unwrap_or_else(|_| "gone".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_line_names_capability_quoted_path_operation_and_program() {
        assert_eq!(line("delete", "/w/a \"b\".db-journal", "unlink", "sqlite3", 42), "dsh-allow: refused delete \"/w/a \\\"b\\\".db-journal\" (unlink; sqlite3, pid 42)");
    }
}
