//! The fence plan in Landlock's vocabulary: which access rights each
//! capability maps to, and what each Landlock ABI can enforce.

use serde::Serialize;

use crate::policy::capability::Capability;

/// Landlock filesystem access rights by name (uapi `LANDLOCK_ACCESS_FS_*`).
pub fn rights(cap: Capability) -> &'static [&'static str] {
    match cap {
        Capability::Read => &["READ_FILE", "READ_DIR"],
        Capability::Write => &["WRITE_FILE", "TRUNCATE"],
        // A rename or link into another directory also needs REFER.
        Capability::Create => &["MAKE_REG", "MAKE_DIR", "MAKE_SYM", "MAKE_FIFO", "MAKE_SOCK", "REFER"],
        Capability::Delete => &["REMOVE_FILE", "REMOVE_DIR"],
        // The kernel maps a program only when it may also be read.
        Capability::Execute => &["EXECUTE", "READ_FILE"],
    }
}

/// Rights handled for a capability but never granted by any rule.
pub fn never_granted(cap: Capability) -> &'static [&'static str] {
    match cap {
        Capability::Create => &["MAKE_CHAR", "MAKE_BLOCK"],
        _ => &[],
    }
}

/// A fence in the kernel's terms: the Landlock rights handled, and each
/// rule's real path with the rights it grants (bits of `AccessFs`). The
/// runner applies it; kept fences store it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub handled: u64,
    pub rules: Vec<(String, u64)>,
}

/// Rights that make sense on a regular file (the rest apply to directories).
pub const FILE_RIGHTS: &[&str] = &["READ_FILE", "WRITE_FILE", "TRUNCATE", "EXECUTE"];

/// The ABI version that first carries a right.
pub fn since_abi(right: &str) -> u32 {
    match right {
        "REFER" => 2,
        "TRUNCATE" => 3,
        _ => 1,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Coverage {
    Full,
    Partial,
    Off,
}

/// How well a kernel with Landlock ABI `abi` (0 = none) enforces `cap`.
pub fn coverage(cap: Capability, abi: u32) -> (Coverage, &'static str) {
    if abi == 0 {
        return (Coverage::Off, "this kernel has no Landlock");
    }
    match cap {
        Capability::Write if abi < 3 => (Coverage::Partial, "truncate(2) is not fenced before Landlock ABI 3"),
        Capability::Create if abi < 2 => {
            (Coverage::Partial, "renames and links across folders are always refused before Landlock ABI 2")
        }
        _ => (Coverage::Full, "fenced by path"),
    }
}

/// What Landlock cannot say as precisely as the decision, for `/allow status`.
pub fn degrade_notes() -> Vec<String> {
    vec![
        "Landlock attaches delete to the folder holding an entry: a delete rule on a folder lets its contents go, while removing the folder itself needs delete on its parent".into(),
        "Landlock fences paths that exist when the call starts: a rule on a path that does not exist yet is carried by the decision, not the kernel".into(),
    ]
}
