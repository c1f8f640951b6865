//! The five file capabilities and the per-path access table a rule carries.

use serde::{Deserialize, Serialize};

/// What a command does to a path (the spec's 能力 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// Read a file, list a directory.
    Read,
    /// Change an existing file (content, mode, owner, times).
    Write,
    /// Make a new file or directory.
    Create,
    /// Unlink, remove, rmdir, rename away.
    Delete,
    /// Start the file as a program.
    Execute,
}

impl Capability {
    pub const ALL: [Capability; 5] = [
        Capability::Read,
        Capability::Write,
        Capability::Create,
        Capability::Delete,
        Capability::Execute,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Read => "read",
            Capability::Write => "write",
            Capability::Create => "create",
            Capability::Delete => "delete",
            Capability::Execute => "execute",
        }
    }

    pub fn parse(s: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Capabilities that change the file system.
    pub fn mutates(self) -> bool {
        matches!(self, Capability::Write | Capability::Create | Capability::Delete)
    }
}

/// A rule's access table. `Some(true)` grants, `Some(false)` speaks to deny,
/// `None` says nothing (a less specific rule or a lower tier decides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execute: Option<bool>,
}

impl Access {
    pub fn of(caps: &[Capability]) -> Access {
        let mut a = Access::default();
        for &c in caps {
            a.set(c, true);
        }
        a
    }

    pub fn all() -> Access {
        Access::of(&Capability::ALL)
    }

    pub fn get(&self, c: Capability) -> Option<bool> {
        match c {
            Capability::Read => self.read,
            Capability::Write => self.write,
            Capability::Create => self.create,
            Capability::Delete => self.delete,
            Capability::Execute => self.execute,
        }
    }

    pub fn set(&mut self, c: Capability, v: bool) {
        let slot = match c {
            Capability::Read => &mut self.read,
            Capability::Write => &mut self.write,
            Capability::Create => &mut self.create,
            Capability::Delete => &mut self.delete,
            Capability::Execute => &mut self.execute,
        };
        *slot = Some(v);
    }

    pub fn grants(&self, c: Capability) -> bool {
        self.get(c) == Some(true)
    }

    pub fn granted(&self) -> Vec<Capability> {
        Capability::ALL.into_iter().filter(|&c| self.grants(c)).collect()
    }

    pub fn is_empty(&self) -> bool {
        Capability::ALL.iter().all(|&c| self.get(c).is_none())
    }

    /// "read,write" style, for people.
    pub fn describe(&self) -> String {
        let caps: Vec<&str> = self.granted().iter().map(|c| c.as_str()).collect();
        caps.join(",")
    }
}
