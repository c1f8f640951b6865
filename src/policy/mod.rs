//! The policy a decision reads: the five capabilities ([`capability`]), the
//! platform's tables ([`baseline`]), stored rules and command grants
//! ([`rules`], [`command_grant`]), the sandbox mode ([`mode`]) and the
//! precedence that says which tier speaks for one (path, capability)
//! ([`resolve`]). Pure: paths are resolved through the host.

use serde::{Deserialize, Serialize};

use capability::Capability;

pub mod baseline;
pub mod capability;
pub mod command_grant;
pub mod environment;
pub mod managed;
pub mod mode;
pub mod resolve;
pub mod rules;

/// Which kernel and which platform tables apply. macOS policy is computable on
/// Linux so the spec's `/Users/me/project` examples can be tested anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Macos,
    Linux,
}

/// The host's sandbox mode (`@deepseek-ai/dsh-sandbox`'s vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::DangerFullAccess => "danger-full-access",
        }
    }
}

/// Which precedence tier spoke for an effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Protected,
    /// The administrator's managed policy: its denials and its asks.
    Managed,
    Rule,
    Grant,
    Baseline,
    Default,
}

/// How much of the policy the kernel carries (the spec's 层级 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Enforce {
    /// Every read is fenced; rules re-open.
    Full,
    /// write/create/delete/execute, and reads of the user data areas.
    Guarded,
    /// write/create/delete/execute.
    Process,
    /// write/create/delete only.
    Writes,
    Off,
}

impl Enforce {
    pub const ORDER: [Enforce; 4] = [Enforce::Full, Enforce::Guarded, Enforce::Process, Enforce::Writes];

    /// The capabilities the kernel stands behind at this tier, as the
    /// decision's `fence` input. Guarded counts as all five: what it leaves
    /// readable is outside the user data areas.
    pub fn fenced(self) -> Vec<Capability> {
        use Capability::*;
        match self {
            Enforce::Full | Enforce::Guarded => Capability::ALL.to_vec(),
            Enforce::Process => vec![Write, Create, Delete, Execute],
            Enforce::Writes => vec![Write, Create, Delete],
            Enforce::Off => Vec::new(),
        }
    }

    /// Whether this tier carries at least what `other` does (full >
    /// guarded > process > writes > off): a managed `requireFence`.
    pub fn at_least(self, other: Enforce) -> bool {
        self.rank() >= other.rank()
    }

    fn rank(self) -> u8 {
        match self {
            Enforce::Off => 0,
            Enforce::Writes => 1,
            Enforce::Process => 2,
            Enforce::Guarded => 3,
            Enforce::Full => 4,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Enforce::Full => "full",
            Enforce::Guarded => "guarded",
            Enforce::Process => "process",
            Enforce::Writes => "writes",
            Enforce::Off => "off",
        }
    }
}
