//! The policy a decision reads: the five capabilities ([`capability`]), the
//! platform's tables ([`baseline`]), stored rules and command grants
//! ([`rules`], [`command_grant`]), the sandbox mode ([`mode`]) and the
//! precedence that says which tier speaks for one (path, capability)
//! ([`resolve`]). Pure: paths are resolved through the host.

use serde::{Deserialize, Serialize};

pub mod baseline;
pub mod capability;
pub mod command_grant;
pub mod environment;
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
    Rule,
    Grant,
    Baseline,
    Default,
}
