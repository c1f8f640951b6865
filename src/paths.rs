//! Path spellings → absolute paths, compared segment by segment.
//!
//! Lexical work only; the file system's answers (symlinks, directories, PATH)
//! come through [`crate::host::Host`].

/// Make `spelling` absolute against `base`, expanding a leading `~` to `home`
/// and folding `.` and `..` lexically.
pub fn absolute(base: &str, spelling: &str, home: &str) -> String {
    normalize(&join(base, spelling, home))
}

/// `spelling` against `base` with a leading `~` expanded, `.` and `..` kept
/// (a `..` after a symlink climbs from where the link lands, which only the
/// file system can say).
pub fn join(base: &str, spelling: &str, home: &str) -> String {
    if spelling == "~" {
        home.to_string()
    } else if let Some(rest) = spelling.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if spelling.starts_with('/') {
        spelling.to_string()
    } else {
        format!("{base}/{spelling}")
    }
}

/// Fold `.`, `..` and repeated slashes of an absolute path.
pub fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    if out.is_empty() {
        "/".to_string()
    } else {
        let mut s = String::with_capacity(path.len());
        for seg in out {
            s.push('/');
            s.push_str(seg);
        }
        s
    }
}

/// Already absolute and folded: no empty, `.` or `..` segment, no trailing
/// slash (the common case, answered with one pass over the bytes).
fn is_normal(path: &str) -> bool {
    if path == "/" {
        return true;
    }
    if !path.starts_with('/') || path.ends_with('/') {
        return false;
    }
    path[1..].split('/').all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// `path` equals `root` or lies beneath it. `/w/build` does not contain `/w/build-2`.
pub fn within(path: &str, root: &str) -> bool {
    if root == "/" {
        return path.starts_with('/');
    }
    match path.strip_prefix(root) {
        Some("") => true,
        Some(rest) => rest.starts_with('/'),
        None => false,
    }
}

/// Number of segments: a longer root is a more specific one.
pub fn depth(path: &str) -> usize {
    path.split('/').filter(|s| !s.is_empty()).count()
}

pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => "/",
    }
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `path` goes through one of a process's links in /proc (`cwd`, `root`,
/// `exe`, `fd/N`, `map_files/…`, `ns/…`, also under `task/<tid>/`): it leads
/// wherever that process (often the very shell that runs it) points, which
/// no lookup made before the command runs can tell.
pub fn through_process_link(path: &str) -> bool {
    // /dev/fd/N is the reading process's descriptor N (a link to
    // /proc/self/fd on Linux): below it lies whatever that descriptor is.
    if path.strip_prefix("/dev/fd/").is_some_and(|rest| !rest.is_empty()) {
        return true;
    }
    let Some(rest) = path.strip_prefix("/proc/") else { return false };
    let mut segs = rest.split('/');
    let is_process = |s: &str| s == "self" || s == "thread-self" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if !segs.next().is_some_and(is_process) {
        return false;
    }
    let mut next = segs.next();
    if next == Some("task") {
        if !segs.next().is_some_and(is_process) {
            return false;
        }
        next = segs.next();
    }
    // The fd, ns and map_files folders only list links; what is below them leads away.
    match next {
        Some("cwd" | "root" | "exe") => true,
        Some("fd" | "map_files" | "ns") => segs.next().is_some_and(|s| !s.is_empty()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_relative_dot_and_dotdot_fold_to_one_absolute_path() {
        assert_eq!(absolute("/w/sub", "../x/./y", "/h"), "/w/x/y");
        assert_eq!(absolute("/w", "~/.ssh/id", "/h"), "/h/.ssh/id");
        assert_eq!(absolute("/w", "/../../etc//passwd", "/h"), "/etc/passwd");
    }

    #[test]
    fn a_root_never_covers_a_sibling_with_the_same_prefix() {
        assert!(within("/w/build/x", "/w/build"));
        assert!(within("/w/build", "/w/build"));
        assert!(!within("/w/build-2", "/w/build"));
        assert!(within("/anything", "/"));
    }

    #[test]
    fn a_process_link_in_proc_is_told_apart_from_what_proc_reports() {
        for linked in ["/proc/self/cwd", "/proc/self/cwd/.ssh/id_rsa", "/proc/123/root/etc", "/proc/thread-self/fd/3", "/proc/1/task/2/cwd/x", "/proc/self/exe", "/proc/7/map_files/a-b", "/proc/self/ns/mnt", "/dev/fd/3", "/dev/fd/3/h/.ssh"] {
            assert!(through_process_link(linked), "{linked}");
        }
        for plain in ["/proc", "/proc/self", "/proc/self/status", "/proc/cpuinfo", "/proc/sys/kernel/cwd", "/proc/self/fdinfo/3", "/proc/self/fd", "/proc/self/ns", "/home/u/proc/self/cwd", "/procx/self/cwd", "/dev/fd", "/dev/fdx/1"] {
            assert!(!through_process_link(plain), "{plain}");
        }
    }
}
