//! The file-operand audit, natively: every option and operand the audit
//! lists (`tests/audit/file_operands.json`) is reported as its manual says,
//! and every program the effects table knows is audited.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/audit.rs"]
mod audit;

#[test]
fn every_audited_option_and_operand_is_judged_as_its_manual_says() {
    let entries = audit::entries();
    assert!(entries.len() >= 150, "the audit shrank to {} entries", entries.len());
    let failures = audit::failures();
    assert!(failures.is_empty(), "{} of {} audit entries failed:\n{}", failures.len(), entries.len(), failures.join("\n"));
}

#[test]
fn every_program_in_the_effects_table_is_audited() {
    let audited = audit::audited_programs();
    let missing: Vec<&str> = dsh_allow::effects::table_names()
        .into_iter()
        .filter(|name| !audited.iter().any(|(p, listed)| p == name && *listed))
        .collect();
    assert!(missing.is_empty(), "programs in PROGRAMS with no audit row (files, or `none` with why): {missing:?}");
}

#[test]
fn every_audit_entry_runs_a_program_of_its_row() {
    let stray: Vec<String> = audit::entries()
        .iter()
        .filter(|e| !e.command.split_whitespace().next().is_some_and(|first| e.programs.iter().any(|p| p == first)))
        .map(|e| format!("{:?}: `{}`", e.programs, e.command))
        .collect();
    assert!(stray.is_empty(), "entries whose command starts another program: {stray:?}");
}
