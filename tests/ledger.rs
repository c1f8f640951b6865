//! Folding the audit ledger, natively (the same vectors run in Chromium).

#[path = "support/ledger_vectors.rs"]
mod ledger_vectors;

#[test]
fn the_ledger_folds_as_the_spec_describes() {
    let failed: Vec<String> = ledger_vectors::checks().into_iter().filter_map(|(name, wrong)| wrong.map(|w| format!("{name}: {w}"))).collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
