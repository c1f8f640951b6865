//! The core in real headless Chromium (`wasm-pack test --headless --chrome`):
//! the same vectors as the native suite, byte-identical answers.
#![cfg(target_arch = "wasm32")]

#[path = "../tests/support/vectors.rs"]
mod vectors;
#[path = "../tests/support/ledger_vectors.rs"]
mod ledger_vectors;
#[path = "../tests/support/audit.rs"]
mod audit;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn every_vector_gives_the_answer_the_spec_states_in_the_browser() {
    let mut failures = Vec::new();
    for case in vectors::cases() {
        let d = dsh_allow::decide::decide(&case.request, &case.fixture);
        for w in vectors::judge(&case, &d) {
            failures.push(format!("{}: {w}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[wasm_bindgen_test]
fn the_browser_core_answers_byte_for_byte_like_the_native_one() {
    let got = vectors::answers(|c| dsh_allow::decide::decide(&c.request, &c.fixture));
    let pinned: serde_json::Value = serde_json::from_str(vectors::ANSWERS).unwrap();
    for (name, answer) in &got {
        assert_eq!(
            serde_json::to_string(answer).unwrap(),
            serde_json::to_string(&pinned[name]).unwrap(),
            "answer for {name} differs from the native core"
        );
    }
    assert_eq!(pinned.as_object().unwrap().len(), got.len());
}

#[wasm_bindgen_test]
fn the_ledger_folds_the_same_in_the_browser() {
    let failed: Vec<String> = ledger_vectors::checks().into_iter().filter_map(|(n, w)| w.map(|w| format!("{n}: {w}"))).collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[wasm_bindgen_test]
fn every_audited_option_and_operand_is_judged_as_its_manual_says_in_the_browser() {
    let failures = audit::failures();
    assert!(audit::entries().len() >= 150);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
