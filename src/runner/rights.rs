//! What the call's fence lets it do at a path, for what the supervisor does
//! itself (Linux).
//!
//! Landlock cannot be asked; the supervisor sometimes must know its answer
//! to act in the call's stead (a rename that replaces a file the call may
//! write, SQLite's journal beside a database the call may write) or to
//! name a refusal the call meets. This is the compiled ruleset read the way
//! Landlock reads it — a rule on a folder reaches everything beneath it, a
//! right the ruleset does not handle is never refused — together with the
//! runner's mounts: outside the writable roots nothing changes (read-only
//! tree), and the shut surfaces and protected files never change. Paths
//! here are real paths: every prefix of one is a real folder, so the rules
//! that reach it are the rules on its prefixes.

use std::collections::HashMap;

use landlock::{AccessFs, BitFlags};

use crate::fence::landlock::Rules;
use crate::paths;

/// The rights (bits of `AccessFs`) that name what the supervisor asks.
pub fn bit(a: AccessFs) -> u64 {
    BitFlags::from(a).bits()
}

#[derive(Clone, Debug, Default)]
pub struct Rights {
    handled: u64,
    by_path: HashMap<String, u64>,
    /// Where the mounts let anything change; None: the tree is not made
    /// read-only (no mount namespace), so only Landlock decides.
    writable: Option<Vec<String>>,
    /// Never changed by the supervisor: protected files, repository
    /// surfaces, and anything in a `.git`.
    shut: Vec<String>,
}

impl Rights {
    pub fn new(rules: &Rules, writable: Option<Vec<String>>, shut: Vec<String>) -> Rights {
        let mut by_path: HashMap<String, u64> = HashMap::with_capacity(rules.rules.len());
        for (p, a) in &rules.rules {
            *by_path.entry(p.clone()).or_default() |= *a;
        }
        Rights { handled: rules.handled, by_path, writable, shut }
    }

    /// The rights the rules give at `path` (itself and every folder above).
    pub fn at(&self, path: &str) -> u64 {
        let mut bits = 0;
        let mut at = path;
        loop {
            if let Some(b) = self.by_path.get(at) {
                bits |= b;
            }
            if at == "/" {
                return bits;
            }
            at = paths::parent(at);
        }
    }

    /// Whether Landlock grants every right of `want` at `path`.
    pub fn grants(&self, path: &str, want: u64) -> bool {
        let asked = want & self.handled;
        self.at(path) & asked == asked
    }

    /// Whether `path` may change at all: on a writable mount, not shut.
    pub fn changeable(&self, path: &str) -> bool {
        let mounted = self.writable.as_ref().is_none_or(|roots| roots.iter().any(|r| paths::within(path, r)));
        mounted && !self.shut.iter().any(|s| paths::within(path, s))
    }

    /// Whether `path` lies in a repository's `.git`: the supervisor changes
    /// nothing there that is not the call's own (a repository the call made
    /// itself, `cargo new`'s).
    pub fn in_repository(path: &str) -> bool {
        path.split('/').any(|c| c == ".git")
    }

    /// The call may write the file at `path`.
    pub fn may_write(&self, path: &str) -> bool {
        self.changeable(path) && !Rights::in_repository(path) && self.grants(path, bit(AccessFs::WriteFile))
    }

    /// The call may make an entry of this kind (`MAKE_*` right) at `path`,
    /// judged on the folder that would hold it.
    pub fn may_make(&self, path: &str, make: u64) -> bool {
        self.changeable(path) && self.grants(paths::parent(path), make)
    }

    /// Landlock itself lets the call remove the entry at `path` (delete on
    /// the folder holding it): nothing for the supervisor to do.
    pub fn removes(&self, path: &str, dir: bool) -> bool {
        let right = if dir { AccessFs::RemoveDir } else { AccessFs::RemoveFile };
        self.changeable(path) && self.grants(paths::parent(path), bit(right))
    }

    /// Why a change at `path` fails when the kernel refuses it: EROFS off
    /// the writable mounts (the read-only tree answers first), else EACCES.
    pub fn refusal_errno(&self, path: &str) -> i32 {
        let mounted = self.writable.as_ref().is_none_or(|roots| roots.iter().any(|r| paths::within(path, r)));
        if mounted {
            libc::EACCES
        } else {
            libc::EROFS
        }
    }

    /// The folders where Landlock grants removal of files: an entry made
    /// there is the kernel's to remove, so the runner need not know it.
    pub fn removal_roots(&self) -> Vec<String> {
        let rm = bit(AccessFs::RemoveFile);
        if self.handled & rm == 0 {
            return vec!["/".into()];
        }
        let mut roots: Vec<String> = self.by_path.iter().filter(|(_, b)| **b & rm != 0).map(|(p, _)| p.clone()).collect();
        roots.sort();
        roots
    }
}

/// The fence as the supervisor reads it: made at the first removal or
/// rename it judges, or creation it is asked to make. A call that makes
/// none (most calls that only read) never pays for it.
pub struct Model {
    pub rights: Rights,
    /// Where Landlock grants removal itself (see creates.rs).
    pub quick: Vec<String>,
}

impl Model {
    pub fn of(rights: Rights) -> Model {
        Model { quick: rights.removal_roots(), rights }
    }
}

/// The model, made when first read.
pub type Lazy = std::cell::LazyCell<Model, Box<dyn FnOnce() -> Model>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[(&str, &[AccessFs])]) -> Rules {
        let all = BitFlags::<AccessFs>::all().bits();
        Rules { handled: all, rules: list.iter().map(|(p, a)| (p.to_string(), a.iter().fold(0u64, |m, r| m | bit(*r)))).collect() }
    }

    #[test]
    fn a_rule_on_a_folder_reaches_what_is_beneath_it_and_nothing_beside() {
        let r = Rights::new(&rules(&[("/w", &[AccessFs::WriteFile, AccessFs::MakeReg]), ("/w/target", &[AccessFs::RemoveFile])]), Some(vec!["/w".into()]), vec!["/w/.git/hooks".into()]);
        assert!(r.may_write("/w/src/a.rs"));
        assert!(!r.may_write("/wx/a.rs"), "a sibling whose name starts alike is not beneath /w");
        assert!(r.may_make("/w/new.txt", bit(AccessFs::MakeReg)));
        assert!(!r.may_make("/w/new", bit(AccessFs::MakeDir)));
        assert!(r.removes("/w/target/x.o", false) && !r.removes("/w/x.o", false));
        assert!(!r.may_write("/w/.git/config"), "nothing of a repository is written by the supervisor's hand");
        assert!(!r.changeable("/w/.git/hooks/pre-commit"), "a shut surface never changes");
        assert_eq!(r.refusal_errno("/etc/passwd"), libc::EROFS);
        assert_eq!(r.refusal_errno("/w/x"), libc::EACCES);
        assert_eq!(r.removal_roots(), vec!["/w/target".to_string()]);
    }
}
