//! The Seatbelt (SBPL) words the static check accepts, as data: each entry
//! names where its spelling was read in public material. Listing fewer words
//! than Seatbelt knows only makes the check stricter; a word goes in when a
//! generator of ours needs it and a source below spells it.
//!
//! Sources, abbreviated in each entry:
//! - `apple:<file>`: Apple's shipped profiles as published in
//!   knightsc/sandbox_profiles (macOS 10.9–10.15, laid out as installed:
//!   /System/Library/Sandbox/Profiles, /usr/share/sandbox), and `sbpl1.scm`
//!   there, libsandbox's own SBPL v1 prelude (10.15).
//! - `optable #N`: the operation table in that `sbpl1.scm` as of macOS
//!   10.10.5 (commit 4b9db4b there): each operation with its code and the
//!   filters it takes; `path` in that list is what `takes_path` records.
//! - `chromium`: chromium/chromium sandbox/policy/mac/common.sb.
//! - `codex`: openai/codex codex-rs/sandboxing/src/seatbelt_base_policy.sbpl
//!   and seatbelt.rs (the generator).
//! - `guide`: "Apple Sandbox Guide v1.0" (fG!, reverse.put.as, 2011), the
//!   operation reference with the kernel functions each applies to.
//! - `blazakis`: D. Blazakis, "The Apple Sandbox" (Black Hat DC 2011):
//!   libsandbox evaluates SBPL with a modified TinyScheme; `#"…"` raw strings
//!   are Apple's addition.

/// One word and where it is spelled.
pub struct Word {
    pub name: &'static str,
    pub source: &'static str,
    /// For an operation: whether it takes path filters (`literal`,
    /// `subpath`, …); a path filter on one that does not is an error.
    pub takes_path: bool,
}

const fn w(name: &'static str, source: &'static str) -> Word {
    Word { name, source, takes_path: false }
}

/// An operation that takes path filters.
const fn p(name: &'static str, source: &'static str) -> Word {
    Word { name, source, takes_path: true }
}

/// The top-level forms a profile of ours may hold.
pub const FORMS: &[Word] = &[
    w("version", "apple: every shipped profile opens with (version 1); guide"),
    w("allow", "apple: every shipped profile; chromium; codex; guide"),
    w("deny", "apple: (deny default) in usr/share/sandbox/cvmsServer.sb; chromium; codex; guide"),
];

/// Operations (the words after `allow` / `deny`).
pub const OPERATIONS: &[Word] = &[
    w("default", "optable #0 (no filters); apple: (deny default) in 214 shipped profiles; guide"),
    p("file-read*", "optable #14; apple: usr/share/sandbox/com.apple.bootinstalld.sb; chromium; codex"),
    p("file-read-data", "optable #15; apple: usr/share/sandbox/cvmsServer.sb; chromium"),
    p("file-read-metadata", "optable #16; apple: usr/share/sandbox/cvmsServer.sb; chromium"),
    p("file-read-xattr", "optable #17; guide: vn_getxattr, vn_listxattr"),
    p("file-write*", "optable #21; apple: usr/share/sandbox/kcm.sb; chromium; codex"),
    p("file-write-create", "optable #22; apple: System/Library/Sandbox/Profiles/com.apple.touristd.sb, cloudpaird.sb"),
    p("file-write-data", "optable #23; apple: usr/share/sandbox/mDNSResponder.sb; chromium; codex"),
    p("file-write-flags", "optable #24; apple: com.apple.revisiond.sb, cloudpaird.sb"),
    p("file-write-mode", "optable #25; apple: com.apple.WindowServer.sb (allow file-write-mode file-write-owner (path \"/dev/console\"))"),
    p("file-write-owner", "optable #26; apple: com.apple.WindowServer.sb, com.apple.DumpGPURestart.sb"),
    p("file-write-setugid", "optable #27; apple: usr/share/sandbox/com.apple.mobileassetd.sb; guide"),
    // Named by a shipped profile only in 10.9 (com.apple.revisiond.sb);
    // the operation table and the guide (setutimes) carry it throughout.
    p("file-write-times", "optable #28; apple 10.9.5: com.apple.revisiond.sb; guide: setutimes"),
    p("file-write-unlink", "optable #29; apple: com.apple.iconservicesd.sb; apple sbpl1.scm (define file-unlink file-write-unlink); chromium"),
    p("file-write-xattr", "optable #30; apple: usr/share/sandbox/mds.sb"),
    p("file-ioctl", "optable #9; apple: usr/share/sandbox/com.apple.smbd.sb; chromium; codex"),
    p("file-map-executable", "optable #11; chromium (allow file-read* file-map-executable (subpath …))"),
    p("process-exec*", "optable #78; apple: usr/share/sandbox/com.apple.atsd.internal.sb"),
    p("process-exec", "apple sbpl1.scm (define process-exec process-exec*); apple: com.apple.bootinstalld.sb; chromium; codex"),
    w("process-fork", "optable #80 (no path filter); apple: com.apple.bootinstalld.sb; codex"),
    w("signal", "optable #90; chromium (allow signal (target self)); codex"),
    w("process-info*", "claude-code's macOS sandbox policy (allow process-info* (target same-sandbox)); agent-safehouse's profiles"),
    w("mach-lookup", "optable #63; chromium; codex"),
    w("sysctl-read", "optable #92; chromium; codex"),
    p("network-outbound", "optable #73 (path, for unix sockets); chromium (allow network-outbound (literal \"/private/var/run/syslog\")); guide"),
];

/// Filters that take one path: a string, or `(param "NAME")`.
pub const PATH_FILTERS: &[Word] = &[
    w("literal", "apple sbpl1.scm 10.10.5 (%string-filter path path literal regex); apple: 1,500+ uses, e.g. usr/share/sandbox/cvmsServer.sb; apple sbpl1.scm (define literal path); chromium; codex"),
    w("path", "apple sbpl1.scm; chromium (path (param log-file-path)); codex (path \"/dev/null\")"),
    w("subpath", "apple sbpl1.scm 10.10.5 (define subpath …): non-empty strings, \"subpaths must not end with a slash\"; apple: com.apple.bootinstalld.sb (subpath (param \"TMPDIR\")); chromium; codex (subpath (param …))"),
    w("prefix", "apple: usr/share/sandbox/com.apple.smbd.sb; apple sbpl1.scm (define prefix path-prefix); chromium"),
];

/// Filters that take one regular expression: `#"…"` or a string.
pub const REGEX_FILTERS: &[Word] = &[
    w("regex", "apple: usr/share/sandbox/com.apple.netbiosd.sb; apple sbpl1.scm (define regex path-regex); chromium; codex"),
];

/// Filters on something other than a path: the operations each goes with,
/// and the words its first argument may be.
pub struct OtherFilter {
    pub name: &'static str,
    pub source: &'static str,
    pub operations: &'static [&'static str],
    pub kinds: &'static [&'static str],
}

pub const OTHER_FILTERS: &[OtherFilter] = &[
    OtherFilter {
        name: "target",
        source: "chromium common.sb (allow signal (target self)); claude-code's macOS sandbox policy (allow signal (target same-sandbox)), (allow process-info* (target same-sandbox))",
        operations: &["signal", "process-info*"],
        kinds: &["self", "same-sandbox", "others"],
    },
    OtherFilter {
        name: "remote",
        source: "codex (allow network-outbound (remote ip \"localhost:*\")); srt and sandbox-exec loopback profiles (remote ip \"localhost:*\"), (remote unix-socket)",
        operations: &["network-outbound"],
        kinds: &["ip", "unix-socket"],
    },
];

pub fn other_filter(name: &str) -> Option<&'static OtherFilter> {
    OTHER_FILTERS.iter().find(|f| f.name == name)
}

/// Filters that combine other filters.
pub const COMBINATORS: &[Word] = &[
    w("require-all", "apple sbpl1.scm 10.10.5 (define require-all (%combination-filter …)); apple: usr/share/sandbox/com.apple.netbiosd.sb; chromium; codex"),
    w("require-any", "apple: usr/share/sandbox/quicklook-satellite.sb"),
    w("require-not", "apple: usr/share/sandbox/com.apple.CommCenter.sb; codex (require-not (literal (param …)))"),
];

/// The value functions a filter may take its argument from.
pub const VALUES: &[Word] = &[
    w("param", "apple: com.apple.bootinstalld.sb (param \"TMPDIR\"); apple sbpl1.scm (param \"IMPORT_DIR\"); chromium; codex"),
];

/// What may follow `with` in a rule's `(with …)` modifier.
pub const MODIFIERS: &[Word] = &[
    w("report", "optable: every file operation lists (send-signal report no-report …); apple: System/Library/Sandbox/Profiles/com.apple.studentd.sb (with report)"),
    w("no-report", "apple: usr/share/sandbox/com.apple.taskgated-helper.sb (with no-report)"),
    w("no-log", "apple: usr/share/sandbox/kcm.sb (with no-log); apple sbpl1.scm (define no-log no-report); chromium"),
];

pub fn known(list: &[Word], name: &str) -> bool {
    list.iter().any(|x| x.name == name)
}

pub fn takes_path(operation: &str) -> bool {
    OPERATIONS.iter().any(|x| x.name == operation && x.takes_path)
}
