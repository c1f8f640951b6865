//! Deployed applications' `.env` files in system folders, found before the
//! fence is compiled (Linux).
//!
//! The baseline opens `/etc`, `/opt` and `/var` for reading, and a
//! web application keeps its database password and API keys in
//! `/var/www/html/.env` or `/opt/app/.env`. The decision refuses such a
//! file by its name wherever it lies (`baseline::dotenv_roots`); Landlock
//! only grants by folder, so the runner looks for them where deployments
//! put them — in each system folder, and one and two folders below it —
//! and the fence compiles around each one found, as around a credential
//! store. The folders it looked in are kept with a kept fence, so one that
//! gains a `.env` later is compiled again.

use crate::api::Platform;
use crate::paths;
use crate::policy::baseline::{dotenv_roots, is_dotenv};

/// At most this many folders are listed (a large `/opt` stays cheap).
const MOST_LISTED: usize = 4000;

/// The `.env` files at depth 0 to 2 below the system folders, outside
/// `workspace`; `listed` gets every folder whose entries were read, with
/// the hash of those very entries (a kept fence holds while it is the same).
pub fn found(workspace: &str, listed: &mut Vec<crate::runner::linux::Listing>) -> Vec<String> {
    let ws = paths::normalize(workspace);
    let mut out = Vec::new();
    let mut todo: Vec<(String, usize)> = dotenv_roots(Platform::Linux).iter().map(|r| (r.to_string(), 0)).collect();
    let mut seen = 0;
    while let Some((dir, depth)) = todo.pop() {
        seen += 1;
        if seen > MOST_LISTED {
            break;
        }
        let Some(entries) = crate::runner::listing::list(std::path::Path::new(&dir)) else { continue };
        let mut names = Vec::new();
        for e in entries {
            // Hashed as kept::entries lists (a kind not told is a link).
            let unknown = e.kind == libc::DT_UNKNOWN;
            names.push((e.name.clone(), e.is_link() || unknown));
            let name = e.name.to_string_lossy();
            let path = format!("{}/{name}", dir.trim_end_matches('/'));
            if paths::within(&path, &ws) || unknown {
                continue;
            }
            // Not followed: a link is judged where it leads, by its own path.
            if is_dotenv(&name) && !e.is_dir() {
                out.push(path);
            } else if e.is_dir() && depth < 2 && !name.starts_with('.') && !matches!(name.as_ref(), "node_modules" | "vendor" | "site-packages") {
                todo.push((path, depth + 1));
            }
        }
        names.sort();
        let hash = crate::runner::kept::names_hash(Some(&names));
        listed.push((dir, hash));
    }
    out.sort();
    out
}
