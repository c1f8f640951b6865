//! Bad input gets a clear answer and is never allowed: over-long lines,
//! unparsable text, NUL bytes, deep nesting; and arbitrary text never panics.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod request;

use dsh_allow::api::Outcome;
use dsh_allow::decide::decide;
use dsh_allow::host::LexicalHost;
use proptest::prelude::*;

fn req(command: &str) -> dsh_allow::api::DecideRequest {
    request::request(command)
}

#[test]
fn commands_over_64_kib_are_refused_with_a_clear_reason() {
    let long = format!("echo {}", "a".repeat(64 * 1024));
    let d = decide(&req(&long), &LexicalHost);
    assert_eq!(d.decision, Outcome::Refuse);
    assert!(d.reason.contains("64 KiB"), "{}", d.reason);
}

#[test]
fn a_nul_byte_is_refused() {
    assert_eq!(decide(&req("cat a\0b"), &LexicalHost).decision, Outcome::Refuse);
}

#[test]
fn nesting_deeper_than_the_walker_reads_is_refused_not_overflowed() {
    let deep = format!("{}echo x{}", "( ".repeat(5000), " )".repeat(5000));
    assert_eq!(decide(&req(&deep), &LexicalHost).decision, Outcome::Refuse);
}

/// The grammar's verdict, on the text as the core feeds it (non-ASCII bytes
/// read as word characters, which is what bash does with them; the raw text
/// would crash the grammar's scanner natively, see src/parse.rs).
fn grammar_rejects(text: &str) -> bool {
    let shadow: String = text.bytes().map(|b| if b < 0x80 { b as char } else { 'x' }).collect();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    p.parse(&shadow, None).map(|t| t.root_node().has_error()).unwrap_or(true)
}

#[test]
fn non_ascii_text_after_a_brace_does_not_crash_the_scanner() {
    // Reached C isdigit() with a code point past 255 before the shadow copy.
    for text in ["head -\u{e9}d x", "tar -c\u{fc} f", "echo {\u{10FFFF}", "{®", "echo {日本..", "a=${x:-\u{1F600}}"] {
        let _ = decide(&req(text), &LexicalHost);
    }
    assert_eq!(decide(&req("echo 你好 > 报告.md"), &LexicalHost).decision, Outcome::Allow);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary text never panics, and text the grammar rejects is never allowed.
    #[test]
    fn arbitrary_text_never_panics_and_rejected_text_is_never_allowed(text in "\\PC{0,200}") {
        let d = decide(&req(&text), &LexicalHost);
        if grammar_rejects(&text) {
            prop_assert_ne!(d.decision, Outcome::Allow);
        }
    }

    /// Shell-shaped text (the characters that matter to the grammar).
    #[test]
    fn shell_shaped_text_never_panics(text in "[a-z ./~$'\"(){};&|<>*?\\[\\]=`\\\\#\n-]{0,120}") {
        let d = decide(&req(&text), &LexicalHost);
        if grammar_rejects(&text) {
            prop_assert_ne!(d.decision, Outcome::Allow);
        }
    }
}
