//! The request and answer types every adapter shares (wasm, CLI, tests).
//!
//! They are defined once, here, and mirrored by `wit/dsh-allow.wit` and the
//! TypeScript declarations; `tests/wit_contract.rs` fails when they drift.

use serde::{Deserialize, Serialize};

use crate::policy::capability::{Access, Capability};
pub use crate::policy::command_grant::GrantMatch;
pub use crate::policy::managed::Managed;
pub use crate::policy::{Enforce, Mode, Platform, Tier};
use crate::policy::rules::{CommandGrant, Rule};

/// One call to `decide`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecideRequest {
    pub command: String,
    pub cwd: String,
    pub workspace: String,
    pub home: String,
    pub harness_home: String,
    pub platform: Platform,
    pub mode: Mode,
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub grants: Vec<Rule>,
    #[serde(default)]
    pub commands: Vec<CommandGrant>,
    #[serde(default)]
    pub protected_files: Vec<String>,
    /// Capabilities the kernel fence enforces right now; absent means none.
    #[serde(default)]
    pub fence: Vec<Capability>,
    /// Whether that fence also shuts the repository's persistence surfaces
    /// (hooks, git config); absent means open, so hidden code in a
    /// repository asks.
    #[serde(default)]
    pub persistence: Persistence,
    /// The daemons' sockets this host reaches (the plugin reads them from
    /// its environment): a line that only asks docker what it has, or
    /// tests an ssh key, gets write on that one socket for the call.
    #[serde(default)]
    pub sockets: Sockets,
    /// The kernel fence's tier right now (the plugin's probe), which a
    /// managed `requireFence` is held to; absent: the weakest tier `fence`
    /// is consistent with (all five capabilities read as guarded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence_level: Option<Enforce>,
    /// The administrator's managed policy, its files merged; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<Managed>,
}

impl DecideRequest {
    /// The fence tier this call runs under: none under full access, where
    /// DSH confines nothing.
    pub fn fence_tier(&self) -> Enforce {
        use Capability::*;
        if self.mode == Mode::DangerFullAccess {
            return Enforce::Off;
        }
        if let Some(level) = self.fence_level {
            return level;
        }
        let has = |caps: &[Capability]| caps.iter().all(|c| self.fence.contains(c));
        if has(&Capability::ALL) {
            Enforce::Guarded
        } else if has(&[Write, Create, Delete, Execute]) {
            Enforce::Process
        } else if has(&[Write, Create, Delete]) {
            Enforce::Writes
        } else {
            Enforce::Off
        }
    }
}

/// Where the daemons a call may be granted listen: docker's (`DOCKER_HOST`
/// when it names a unix socket, else `/var/run/docker.sock` when there is
/// one) and the ssh agent's (`SSH_AUTH_SOCK`). Absent: none known, and no
/// call is granted one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sockets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_agent: Option<String>,
}

/// Whether the kernel shuts the persistence surfaces for fenced calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Persistence {
    Shut,
    #[default]
    Open,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Allow,
    Prompt,
    Refuse,
}

/// One (path, capability) the command needs and how it resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectVerdict {
    pub path: String,
    pub capability: Capability,
    pub granted: bool,
    /// Not granted and not grantable by a card click (protected path,
    /// credential store, read-only session).
    pub refused: bool,
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PathCapability {
    pub path: String,
    pub capability: Capability,
}

/// What the command text cannot show: an operation whose path is computed,
/// inline code, a program not on PATH.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unknown {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
    pub reason: String,
    /// Whether the fence or the working directory's grants bound it.
    pub bounded: bool,
}

/// A rule "Always allow" would store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub path: String,
    pub recursive: bool,
    pub access: Access,
    /// When set, "Always allow" stores a command grant for this program
    /// (roots = `path`) instead of a path rule: the capability is the
    /// program's need, not the folder's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub decision: Outcome,
    pub reason: String,
    pub effects: Vec<EffectVerdict>,
    pub missing: Vec<PathCapability>,
    pub unknown: Vec<Unknown>,
    pub proposals: Vec<Proposal>,
    /// The command grant that matched this call: its roots are one-shot
    /// grants of this call, in the decision and in the call's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_grant: Option<GrantMatch>,
    /// What this call's fence carries beyond the policy, for a line that
    /// hides no code: delete in the workspace's repository for git; create,
    /// write and delete in the worktree for git's self-guarded operations
    /// (`checkout BRANCH`, `merge`, `stash`…); create and delete beside each
    /// file a plain `sed -i` edits. Claimed by the call like a one-shot
    /// grant; never stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fence_grants: Vec<Rule>,
    /// Folders the line makes that are not there yet: the call's profile
    /// carries them (`ProfileRequest::folders`), and the Linux runner makes
    /// those outside the workspace before the fence so the call's grants
    /// attach, and lets the call remove what it made inside each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<String>,
    /// Where the kernel cannot carry exactly what this call is granted (a
    /// path that does not exist yet), what it carries instead, in plain
    /// words: the card says it before "Allow once", and the ledger keeps it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widened: Vec<String>,
    /// The daemons' sockets the line reaches (docker's, the ssh agent's):
    /// whether this call holds it (in `fenceGrants`; on a card, once
    /// allowed), for the card and `dsh-allow explain`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<SocketNeed>,
    /// Files the call replaces whose content the runner keeps first (`git
    /// restore FILE`): carried into the profile (`ProfileRequest::kept`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// What the managed policy does to this call (present when the request
    /// carries one): whether it is why, and which answers the card offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<ManagedVerdict>,
}

/// The managed policy's part in one decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedVerdict {
    /// The managed policy is why the call is refused or asked: the ledger's
    /// decided-by is then `managed`.
    pub decided: bool,
    /// The card may offer Always allow (and store its proposals).
    pub always_allow: bool,
    /// The auto-reviewer may answer the card.
    pub auto_review: bool,
    /// The files the policy was read from.
    pub files: Vec<String>,
}

impl Decision {
    /// The answers a card for this decision offers: Deny, Always allow when
    /// there is a rule to store and nothing forbids storing it, Allow once.
    pub fn answers(&self) -> Vec<&'static str> {
        if self.decision != Outcome::Prompt {
            return Vec::new();
        }
        let stores = !self.proposals.is_empty() && self.managed.as_ref().is_none_or(|m| m.always_allow);
        if stores {
            vec!["Deny", "Always allow", "Allow once"]
        } else {
            vec!["Deny", "Allow once"]
        }
    }
}

/// A daemon's socket a line reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SocketNeed {
    /// `docker` or `ssh-agent`.
    pub daemon: String,
    /// The socket, as the host knows it; absent: none known here, so the
    /// program will not reach its daemon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Granted to this call (on a card: once allowed).
    pub granted: bool,
    /// In words, for the card and `explain`.
    pub sentence: String,
}


