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
    for (link, target) in MACOS_LINKS {
        if path == *link {
            return target.to_string();
        }
        if let Some(rest) = path.strip_prefix(link) {
            if rest.starts_with('/') {
                return format!("{target}{rest}");
            }
        }
    }
    path.to_string()
}

#[cfg(test)]
mod tests {
    use super::macos_spelling;

    #[test]
    fn macos_spells_tmp_var_and_etc_under_private() {
        assert_eq!(macos_spelling("/tmp"), "/private/tmp");
        assert_eq!(macos_spelling("/tmp/a/b"), "/private/tmp/a/b");
        assert_eq!(macos_spelling("/etc/hosts"), "/private/etc/hosts");
        assert_eq!(macos_spelling("/var/folders/x"), "/private/var/folders/x");
        assert_eq!(macos_spelling("/tmpx"), "/tmpx");
        assert_eq!(macos_spelling("/Users/me"), "/Users/me");
    }
}
