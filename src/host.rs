//! The one seam between the pure core and the world.
//!
//! The core never touches the file system: the JS plugin (fs), the CLI (std::fs)
//! and the tests (a fixture) each answer these three questions.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::paths;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    Missing,
    File,
    Dir,
}

/// Where an absolute spelling with its `..` kept lands, as the kernel walks it.
pub enum Landing {
    Path(String),
    /// A `..` after one of a process's links in /proc.
    ProcessLink,
    /// At `at` the walk meets a link the caller knows of (one the command
    /// line makes): `target` (`None`: computed), then `rest` below it.
    Made { target: Option<String>, rest: String },
}

/// Walk `joined` component by component: each `..` climbs from where the
/// path before it really is (links followed, as `cat link/../x` opens),
/// not from its spelling. `made` names links the disk does not show yet.
pub fn land(joined: &str, host: &dyn Host, made: &dyn Fn(&str) -> Option<Option<String>>) -> Landing {
    let segs: Vec<&str> = joined.split('/').collect();
    let mut cur = String::from("/");
    for (i, seg) in segs.iter().enumerate() {
        match *seg {
            "" | "." => {}
            ".." => {
                let real = host.canonical(&cur);
                if paths::through_process_link(&cur) || paths::through_process_link(&real) {
                    return Landing::ProcessLink;
                }
                cur = paths::parent(&real).to_string();
            }
            name => {
                if !cur.ends_with('/') {
                    cur.push('/');
                }
                cur.push_str(name);
                if let Some(target) = made(&cur) {
                    return Landing::Made { target, rest: segs[i + 1..].join("/") };
                }
            }
        }
    }
    Landing::Path(cur)
}

pub trait Host {
    /// The real path of an absolute spelling: the deepest existing ancestor
    /// resolved through symlinks, the rest re-appended.
    fn canonical(&self, path: &str) -> String;
    /// The same for a root of the policy (workspace, baseline, rule roots),
    /// asked when the policy is prepared: the answer is kept with the policy
    /// for the host's generation, so a host that watches what it read must
    /// watch this lookup too (a named path's own lookup is never kept).
    fn canonical_root(&self, path: &str) -> String {
        self.canonical(path)
    }
    /// What is at an absolute path (following symlinks).
    fn kind(&self, path: &str) -> PathKind;
    /// The absolute path PATH lookup finds for a bare program name.
    fn which(&self, program: &str) -> Option<String>;
    /// While this number stays the same, answers about the policy's own
    /// roots (workspace, baseline, rules) may be reused across decisions.
    /// `None`: never reuse. Paths a command names are always asked afresh.
    fn generation(&self) -> Option<u64> {
        None
    }
}

/// Memoises a host for the span of one decision: the same path is asked
/// about several times (spelling, rule roots, baseline roots).
pub struct Memo<'a> {
    inner: &'a dyn Host,
    // Ordered maps: a decision asks about a handful of paths, a fence
    // compile about a hundred; neither needs random hash keys (which cost a
    // trip to JS in wasm).
    canonical: std::cell::RefCell<BTreeMap<String, String>>,
    /// Roots apart: a root's answer must come from the host's root lookup.
    roots: std::cell::RefCell<BTreeMap<String, String>>,
    kind: std::cell::RefCell<BTreeMap<String, PathKind>>,
}

impl<'a> Memo<'a> {
    pub fn new(inner: &'a dyn Host) -> Self {
        Memo { inner, canonical: Default::default(), roots: Default::default(), kind: Default::default() }
    }
}

impl Host for Memo<'_> {
    fn canonical(&self, path: &str) -> String {
        if let Some(c) = self.canonical.borrow().get(path) {
            return c.clone();
        }
        let c = paths::normalize(&self.inner.canonical(path));
        self.canonical.borrow_mut().insert(path.to_string(), c.clone());
        c
    }
    fn canonical_root(&self, path: &str) -> String {
        if let Some(c) = self.roots.borrow().get(path) {
            return c.clone();
        }
        let c = paths::normalize(&self.inner.canonical_root(path));
        self.roots.borrow_mut().insert(path.to_string(), c.clone());
        c
    }
    fn kind(&self, path: &str) -> PathKind {
        if let Some(k) = self.kind.borrow().get(path) {
            return *k;
        }
        let k = self.inner.kind(path);
        self.kind.borrow_mut().insert(path.to_string(), k);
        k
    }
    fn which(&self, program: &str) -> Option<String> {
        self.inner.which(program)
    }
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}

/// A host that knows nothing: paths are their own real paths, nothing
/// exists, nothing is on PATH. Used where no file system is at hand.
pub struct LexicalHost;

impl Host for LexicalHost {
    /// Its answers never change. The value differs from every other host's
    /// (the file-system host says 0, Node's host the clock's second), so the
    /// caches keyed by generation are never shared between kinds of host.
    fn generation(&self) -> Option<u64> {
        Some(u64::MAX)
    }
    fn canonical(&self, path: &str) -> String {
        paths::normalize(path)
    }
    fn kind(&self, _path: &str) -> PathKind {
        PathKind::Missing
    }
    fn which(&self, _program: &str) -> Option<String> {
        None
    }
}

/// A described file system, for test vectors shared by the native and the
/// wasm suites (the spec's `/Users/me/project` exists on neither machine).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FixtureHost {
    #[serde(default)]
    pub symlinks: BTreeMap<String, String>,
    #[serde(default)]
    pub dirs: BTreeSet<String>,
    #[serde(default)]
    pub files: BTreeSet<String>,
    /// PATH, in lookup order; executables are files in these dirs.
    #[serde(default)]
    pub path: Vec<String>,
    /// After `path`, every other program name is found here (so a table of
    /// vectors need not list each binary).
    #[serde(default)]
    pub bin_dir: Option<String>,
    /// Names PATH lookup must not find.
    #[serde(default)]
    pub not_on_path: BTreeSet<String>,
}

impl FixtureHost {
    fn resolve_links(&self, path: &str) -> String {
        let mut current = paths::normalize(path);
        // Bounded like the kernel's ELOOP limit.
        for _ in 0..40 {
            let mut changed = false;
            let segs: Vec<&str> = current.split('/').filter(|s| !s.is_empty()).collect();
            let mut prefix = String::new();
            for (i, seg) in segs.iter().enumerate() {
                prefix.push('/');
                prefix.push_str(seg);
                if let Some(target) = self.symlinks.get(&prefix) {
                    let rest = segs[i + 1..].join("/");
                    let base = paths::parent(&prefix).to_string();
                    let t = paths::absolute(&base, target, "/");
                    current = if rest.is_empty() { t } else { paths::normalize(&format!("{t}/{rest}")) };
                    changed = true;
                    break;
                }
            }
            if !changed {
                return current;
            }
        }
        current
    }
}

impl Host for FixtureHost {
    fn generation(&self) -> Option<u64> {
        None
    }
    fn canonical(&self, path: &str) -> String {
        self.resolve_links(path)
    }
    fn kind(&self, path: &str) -> PathKind {
        let real = self.resolve_links(path);
        if self.dirs.contains(&real) || self.dirs.iter().any(|d| d != &real && paths::within(d, &real)) {
            PathKind::Dir
        } else if self.files.contains(&real) {
            PathKind::File
        } else if self.files.iter().any(|f| paths::within(f, &real) && f != &real) {
            PathKind::Dir
        } else {
            PathKind::Missing
        }
    }
    fn which(&self, program: &str) -> Option<String> {
        if self.not_on_path.contains(program) {
            return None;
        }
        self.path
            .iter()
            .map(|dir| format!("{dir}/{program}"))
            .find(|p| {
                let real = self.resolve_links(p);
                self.files.contains(&real)
            })
            .or_else(|| self.bin_dir.as_ref().map(|d| format!("{d}/{program}")))
    }
}
