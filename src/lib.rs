//! dsh-allow's decision core.
//!
//! Data flows one way: command text → [`parse`] → [`effects`] (path,
//! capability) → [`resolve`] (which tier speaks) → [`decide`] (allow / prompt /
//! refuse). Rules → [`profile`] (Seatbelt SBPL, Landlock). Ledger lines →
//! [`ledger`] rows. Nothing here touches the file system, a clock or
//! randomness; the world comes in through [`host::Host`].

pub mod api;
pub mod baseline;
pub mod braces;
pub mod capability;
#[cfg(unix)]
pub mod cli;
pub mod command_grant;
pub mod decide;
pub mod effects;
pub mod explain;
#[cfg(target_os = "linux")]
pub mod fence_cache;
#[cfg(unix)]
pub mod fs_host;
pub mod guidance;
pub mod host;
pub mod ledger;
pub mod mode;
pub mod parse;
pub mod paths;
#[cfg(target_os = "linux")]
pub mod persistence;
pub mod profile;
pub mod resolve;
pub mod review;
pub mod rules;
#[cfg(unix)]
pub mod runner;

#[cfg(target_arch = "wasm32")]
mod wasm;
