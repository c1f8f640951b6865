//! Friction: how many of the everyday commands in `benches/corpus.txt` ask
//! (or are refused), decided on the vectors' Linux world (`/w`, home `/h`)
//! with the fence this machine's `enforce: auto` takes (all five) and with
//! none (`enforce: off`, or no Landlock). Run with `--nocapture` to see the
//! counts and every command that asks. A new rule that makes everyday work
//! ask more under the default fence fails here.
#![cfg(not(target_arch = "wasm32"))]

use dsh_allow::api::{DecideRequest, Outcome};
use dsh_allow::decide::decide;
use dsh_allow::host::FixtureHost;
use dsh_allow::policy::capability::Capability;

/// Prompts (and refusals) on the corpus under a fence of all five, as
/// measured when this counter was written; it may only go down.
const FENCED_CEILING: usize = 37;

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
fn everyday_commands_ask_no_more_than_they_did() {
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
    assert!(fenced.len() <= FENCED_CEILING, "{} corpus commands ask under the default fence (ceiling {FENCED_CEILING})", fenced.len());
}
