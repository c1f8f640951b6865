//! dsh-allow's decision core.
//!
//! The folders are the pipeline's stages, and data flows one way through
//! them (ARCHITECTURE.md draws it):
//!
//! - command text → [`shell`] (parsed commands) → [`effects`] (path,
//!   capability) → [`policy`] (which tier speaks) → [`decide`] (allow /
//!   prompt / refuse, and what is missing);
//! - rules → [`fence`] (the plan, Landlock rules, Seatbelt SBPL), applied
//!   on Linux by the [`runner`];
//! - ledger lines → [`ledger`] rows.
//!
//! [`api`] holds the request and answer types every adapter shares;
//! [`paths`] and [`host`] are the ground everything stands on. Nothing here
//! touches the file system, a clock or randomness except the adapters at
//! the edge ([`cli`], [`fs_host`], [`runner`], the wasm bindings); the
//! world comes in through [`host::Host`].

pub mod api;
pub mod decide;
pub mod effects;
pub mod fence;
pub mod host;
pub mod ledger;
pub mod paths;
pub mod policy;
pub mod shell;

#[cfg(unix)]
pub mod cli;
#[cfg(unix)]
pub mod fs_host;
#[cfg(unix)]
pub mod runner;
#[cfg(target_arch = "wasm32")]
mod wasm;
