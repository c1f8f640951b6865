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
//! - `chromium`: chromium/chromium sandbox/policy/mac/common.sb.
//! - `codex`: openai/codex codex-rs/sandboxing/src/seatbelt_base_policy.sbpl
//!   and seatbelt.rs (the generator).
//! - `guide`: "Apple Sandbox Guide v1.0" (fG!, reverse.put.as, 2011), the
//!   operation reference with the kernel functions each applies to.
//! - `blazakis`: D. Blazakis, "The Apple Sandbox" (Black Hat DC 2011):
//!   libsandbox evaluates SBPL with a modified TinyScheme; `#"…"` raw strings
//!   are Apple's addition.
//! - `opnames`: an `operation_names[]` table dumped from libsandbox by a
//!   public reverse-engineering header (sbtool style, *OS Internals era).

/// One word and where it is spelled.
pub struct Word {
    pub name: &'static str,
    pub source: &'static str,
}

const fn w(name: &'static str, source: &'static str) -> Word {
    Word { name, source }
}

/// The top-level forms a profile of ours may hold.
pub const FORMS: &[Word] = &[
    w("version", "apple: every shipped profile opens with (version 1); guide"),
    w("allow", "apple: every shipped profile; chromium; codex; guide"),
    w("deny", "apple: (deny default) in usr/share/sandbox/cvmsServer.sb; chromium; codex; guide"),
];

/// Operations (the words after `allow` / `deny`).
pub const OPERATIONS: &[Word] = &[
    w("default", "apple: (deny default) in 214 shipped profiles; guide: the fallback of every operation"),
    w("file-read*", "apple: usr/share/sandbox/com.apple.bootinstalld.sb; chromium; codex"),
    w("file-read-data", "apple: usr/share/sandbox/cvmsServer.sb; chromium (allow file-read-data (path \"/dev/null\"))"),
    w("file-read-metadata", "apple: usr/share/sandbox/cvmsServer.sb; chromium (allow file-read-metadata (subpath \"/\"))"),
    w("file-read-xattr", "guide: vn_getxattr, vn_listxattr; opnames"),
    w("file-write*", "apple: usr/share/sandbox/kcm.sb; chromium; codex"),
    w("file-write-data", "apple: usr/share/sandbox/mDNSResponder.sb; chromium; codex (allow file-write-data (require-all (path \"/dev/null\") …))"),
    w("file-write-create", "apple: System/Library/Sandbox/Profiles/com.apple.touristd.sb, cloudpaird.sb"),
    w("file-write-unlink", "apple: com.apple.iconservicesd.sb; apple sbpl1.scm (define file-unlink file-write-unlink); chromium"),
    w("file-write-mode", "apple: com.apple.WindowServer.sb (allow file-write-mode file-write-owner (path \"/dev/console\"))"),
    w("file-write-owner", "apple: com.apple.WindowServer.sb, com.apple.DumpGPURestart.sb"),
    w("file-write-flags", "apple: com.apple.revisiond.sb (allow file-write-flags), cloudpaird.sb"),
    w("file-write-xattr", "apple: usr/share/sandbox/mds.sb"),
    // The one operation of ours no shipped profile of 10.9–10.15 names: it is
    // in the guide (setutimes) and in libsandbox's operation table.
    w("file-write-times", "guide: setutimes; opnames"),
    w("file-write-setugid", "apple: usr/share/sandbox/com.apple.mobileassetd.sb; guide"),
    w("file-ioctl", "apple: usr/share/sandbox/com.apple.smbd.sb; chromium; codex"),
    w("file-link", "apple: System/Library/Sandbox/Profiles/com.apple.email.maild.sb"),
    w("file-map-executable", "chromium (allow file-read* file-map-executable (subpath \"/System/Cryptexes/App\") …)"),
    w("process-exec", "apple: com.apple.bootinstalld.sb; apple sbpl1.scm (define process-exec process-exec*); chromium; codex"),
    w("process-exec*", "apple: usr/share/sandbox/com.apple.atsd.internal.sb"),
    w("process-fork", "apple: com.apple.bootinstalld.sb; codex"),
    w("signal", "chromium (allow signal (target self)); codex"),
    w("mach-lookup", "chromium; codex"),
    w("sysctl-read", "chromium; codex"),
    w("network-outbound", "chromium; guide"),
];

/// Filters that take one path: a string, or `(param "NAME")`.
pub const PATH_FILTERS: &[Word] = &[
    w("literal", "apple: 1,500+ uses, e.g. usr/share/sandbox/cvmsServer.sb; apple sbpl1.scm (define literal path); chromium; codex"),
    w("path", "apple sbpl1.scm; chromium (path (param log-file-path)); codex (path \"/dev/null\")"),
    w("subpath", "apple: com.apple.bootinstalld.sb (subpath (param \"TMPDIR\")); chromium; codex (subpath (param …))"),
    w("prefix", "apple: usr/share/sandbox/com.apple.smbd.sb; apple sbpl1.scm (define prefix path-prefix); chromium"),
];

/// Filters that take one regular expression: `#"…"` or a string.
pub const REGEX_FILTERS: &[Word] = &[
    w("regex", "apple: usr/share/sandbox/com.apple.netbiosd.sb; apple sbpl1.scm (define regex path-regex); chromium; codex"),
];

/// Filters that combine other filters.
pub const COMBINATORS: &[Word] = &[
    w("require-all", "apple: usr/share/sandbox/com.apple.netbiosd.sb; chromium; codex"),
    w("require-any", "apple: usr/share/sandbox/quicklook-satellite.sb"),
    w("require-not", "apple: usr/share/sandbox/com.apple.CommCenter.sb; codex (require-not (literal (param …)))"),
];

/// The value functions a filter may take its argument from.
pub const VALUES: &[Word] = &[
    w("param", "apple: com.apple.bootinstalld.sb (param \"TMPDIR\"); apple sbpl1.scm (param \"IMPORT_DIR\"); chromium; codex"),
];

/// What may follow `with` in a rule's `(with …)` modifier.
pub const MODIFIERS: &[Word] = &[
    w("report", "apple: System/Library/Sandbox/Profiles/com.apple.studentd.sb (with report)"),
    w("no-report", "apple: usr/share/sandbox/com.apple.taskgated-helper.sb (with no-report)"),
    w("no-log", "apple: usr/share/sandbox/kcm.sb (with no-log); apple sbpl1.scm (define no-log no-report); chromium"),
];

pub fn known(list: &[Word], name: &str) -> bool {
    list.iter().any(|x| x.name == name)
}
