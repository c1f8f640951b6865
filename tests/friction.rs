//! Friction: how many of the corpus's everyday commands (benches/corpus.txt)
//! the decision asks about, with the kernel fencing all five capabilities
//! and the persistence surfaces shut (this machine's runner), in this
//! repository as the workspace. A gate that asks too often gets answered
//! without reading; this keeps the count from growing unnoticed.
//!
//! `cargo test --test friction -- --nocapture` prints the count and each ask,
//! and the same on the vectors' fixture with a fence of all five and with
//! none.
#![cfg(not(target_arch = "wasm32"))]

use dsh_allow::api::{DecideRequest, Outcome};
use dsh_allow::decide::decide;
use dsh_allow::fs_host::FsHost;
use dsh_allow::host::FixtureHost;
use dsh_allow::policy::capability::Capability;
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

/// On the vectors' Linux world (`/w`, home `/h`, every program found), the
/// asks and refusals under a fence of all five, as measured for issue 28;
/// they may only go down. With no fence (`enforce: off`, no Landlock) the
/// count is printed: inline code asks there by design.
const FIXTURE_FENCED_MOST: usize = 30;

fn corpus() -> Vec<String> {
    include_str!("../benches/corpus.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

/// The commands that do not run without a card, under `fence`.
fn asking(fence: &[Capability]) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(include_str!("vectors/core.json")).unwrap();
    let host: FixtureHost = serde_json::from_value(doc["fixtures"]["linux"].clone()).unwrap();
    corpus()
        .into_iter()
        .filter(|command| {
            let mut req = doc["defaults"]["linux"].clone();
            req["command"] = command.as_str().into();
            let mut req: DecideRequest = serde_json::from_value(req).unwrap();
            req.fence = fence.to_vec();
            decide(&req, &host).decision != Outcome::Allow
        })
        .collect()
}

#[test]
fn on_the_fixture_with_and_without_a_fence() {
    let fenced = asking(&Capability::ALL);
    let unfenced = asking(&[]);
    println!("corpus: {} commands", corpus().len());
    println!("asking under a fence of all five: {}", fenced.len());
    for c in &fenced {
        println!("  fenced   | {}", c.replace('\n', "\\n"));
    }
    println!("asking with no fence: {}", unfenced.len());
    for c in &unfenced {
        println!("  no fence | {}", c.replace('\n', "\\n"));
    }
    assert!(fenced.len() <= FIXTURE_FENCED_MOST, "{} corpus commands ask under a fence of all five (at most {FIXTURE_FENCED_MOST})", fenced.len());
}
