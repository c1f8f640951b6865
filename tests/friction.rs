//! Friction: how many of the corpus's everyday commands (benches/corpus.txt)
//! the decision asks about, with the kernel fencing all five capabilities
//! and the persistence surfaces shut (this machine's runner), in this
//! repository as the workspace. A gate that asks too often gets answered
//! without reading; this keeps the count from growing unnoticed.
//!
//! `cargo test --test friction -- --nocapture` prints the count and each ask.

use dsh_allow::api::{DecideRequest, Outcome};
use dsh_allow::fs_host::FsHost;
use serde_json::json;

/// The asks measured when the call-scoped grants of issue 27 landed (28
/// before them); more means a change made the gate noisier.
const MOST_ASKS: usize = 21;

#[test]
fn the_corpus_asks_no_more_often_than_measured() {
    let ws = env!("CARGO_MANIFEST_DIR");
    let home = std::env::temp_dir().join("dsh-allow-friction-home");
    let home = home.to_string_lossy();
    let host = FsHost::with_path("/usr/local/bin:/usr/bin:/bin");
    let mut asks = Vec::new();
    let mut total = 0;
    for line in include_str!("../benches/corpus.txt").lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let command = line.replace("\\n", "\n");
        let req: DecideRequest = serde_json::from_value(json!({
            "command": command, "cwd": ws, "workspace": ws, "home": home, "harnessHome": format!("{home}/.dsh"),
            "platform": "linux", "mode": "workspace-write", "protectedFiles": [format!("{home}/.dsh/dsh-allow.json")],
            "fence": ["read", "write", "create", "delete", "execute"], "persistence": "shut",
        }))
        .unwrap();
        let d = dsh_allow::decide::decide(&req, &host);
        total += 1;
        if d.decision == Outcome::Prompt {
            asks.push(format!("{command}  —  {}", d.reason));
        }
    }
    println!("friction: {} of {total} corpus commands ask\n{}", asks.len(), asks.join("\n"));
    assert!(asks.len() <= MOST_ASKS, "{} of {total} ask, at most {MOST_ASKS}:\n{}", asks.len(), asks.join("\n"));
}
