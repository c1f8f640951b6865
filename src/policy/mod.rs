//! The policy a decision reads: the five capabilities ([`capability`]), the
//! platform's tables ([`baseline`]), stored rules and command grants
//! ([`rules`], [`command_grant`]), the sandbox mode ([`mode`]) and the
//! precedence that says which tier speaks for one (path, capability)
//! ([`resolve`]). Pure: paths are resolved through the host.

pub mod baseline;
pub mod capability;
pub mod command_grant;
pub mod mode;
pub mod resolve;
pub mod rules;
