//! macOS's symbolic links at the root, as a table: the Seatbelt model spells
//! every resolved path through it, and the suites that run under the model
//! spell their expectations the same way. Seatbelt matches the path after
//! resolution, so on a Mac `/tmp/x` is checked as `/private/tmp/x` (Apple's
//! File System Programming Guide lists `/tmp`, `/var` and `/etc` as links
//! into `/private`; Codex and srt write their profiles' temp rules with the
//! `/private` spelling for that reason).

/// (link, target).
pub const MACOS_LINKS: &[(&str, &str)] = &[("/tmp", "/private/tmp"), ("/var", "/private/var"), ("/etc", "/private/etc")];

/// A resolved Linux path as macOS would spell it.
pub fn macos_spelling(path: &str) -> String {
    MACOS_LINKS.iter().find_map(|(link, target)| swap_prefix(path, link, target)).unwrap_or_else(|| path.to_string())
}

/// A macOS spelling as this machine names the same file.
pub fn linux_spelling(path: &str) -> String {
    MACOS_LINKS.iter().find_map(|(link, target)| swap_prefix(path, target, link)).unwrap_or_else(|| path.to_string())
}

/// `path` with its leading folder `from` (whole components) replaced by `to`.
fn swap_prefix(path: &str, from: &str, to: &str) -> Option<String> {
    if path == from {
        return Some(to.to_string());
    }
    path.strip_prefix(from).filter(|rest| rest.starts_with('/')).map(|rest| format!("{to}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::{linux_spelling, macos_spelling};

    #[test]
    fn macos_spells_tmp_var_and_etc_under_private() {
        assert_eq!(macos_spelling("/tmp"), "/private/tmp");
        assert_eq!(macos_spelling("/tmp/a/b"), "/private/tmp/a/b");
        assert_eq!(macos_spelling("/etc/hosts"), "/private/etc/hosts");
        assert_eq!(macos_spelling("/var/folders/x"), "/private/var/folders/x");
        assert_eq!(macos_spelling("/tmpx"), "/tmpx");
        assert_eq!(macos_spelling("/Users/me"), "/Users/me");
        assert_eq!(linux_spelling("/private/tmp/a"), "/tmp/a");
        assert_eq!(linux_spelling("/private/tmpx"), "/private/tmpx");
    }
}
