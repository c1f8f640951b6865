//! The core's test vectors, natively. The same file runs in headless Chrome
//! (web-tests/web.rs) and must give byte-identical answers there.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/vectors.rs"]
mod vectors;

use dsh_allow::decide::decide;

#[test]
fn every_vector_gives_the_answer_the_spec_states() {
    let mut failures = Vec::new();
    let cases = vectors::cases();
    for case in &cases {
        let d = decide(&case.request, &case.fixture);
        for w in vectors::judge(case, &d) {
            failures.push(format!("{}: `{}`: {w}", case.name, case.request.command));
        }
    }
    assert!(cases.len() >= 150, "the vector table shrank to {}", cases.len());
    assert!(failures.is_empty(), "{} of {} vectors failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// answers.json pins every full decision so the wasm build can be compared
/// with the native one byte for byte. Regenerate with DSH_ALLOW_BLESS=1.
#[test]
fn the_pinned_answers_match_the_native_core() {
    let got = vectors::answers(|c| decide(&c.request, &c.fixture));
    let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
    if std::env::var("DSH_ALLOW_BLESS").is_ok() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/answers.json"), &text).unwrap();
        return;
    }
    let pinned: serde_json::Value = serde_json::from_str(vectors::ANSWERS).expect("answers.json is JSON; run with DSH_ALLOW_BLESS=1");
    for (name, answer) in &got {
        assert_eq!(Some(answer), pinned.get(name), "answer for {name} changed; review and re-bless");
    }
    assert_eq!(pinned.as_object().map(|o| o.len()), Some(got.len()), "answers.json has stale entries");
}
