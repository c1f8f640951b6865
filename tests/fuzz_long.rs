//! A long fuzz run over command text (ignored by default; it runs for
//! DSH_ALLOW_FUZZ_SECS seconds, 600 unless set):
//!   cargo test --release --test fuzz_long -- --ignored --nocapture
//! Inputs are corpus commands mutated byte- and token-wise plus random shell
//! soup; each must not panic, and text the grammar rejects is never allowed.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod request;

use dsh_allow::api::Outcome;
use dsh_allow::decide::decide;
use dsh_allow::host::LexicalHost;

fn req(command: String) -> dsh_allow::api::DecideRequest {
    request::request(&command)
}

#[test]
#[ignore = "long run"]
fn ten_minutes_of_mutated_commands_never_panic_and_never_allow_rejected_text() {
    let secs: u64 = std::env::var("DSH_ALLOW_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    let corpus: Vec<Vec<u8>> = include_str!("../benches/corpus.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.replace("\\n", "\n").into_bytes())
        .collect();
    let tokens: &[&[u8]] = &[b"$(", b")", b"`", b"'", b"\"", b"<<EOF\n", b"\nEOF\n", b"&&", b"||", b";", b"|", b"&", b">", b">>", b"<", b"2>&1", b"{", b"}", b"(", b")", b"${", b"*", b"~/", b"../", b"\\", b"\n", b"cd ", b"rm -rf ", b"bash -c '", b"eval ", b"\xe4\xbd\xa0", b"\xc2\xae", b"\0", b",", b"{a,b}", b"{1..3}", b"..", b"ln -s ", b"/proc/self/cwd/", b"trap '", b"-C ", b"builtin ", b"env -S '", b"flock f ", b"watch ", b"su -c '", b"7z a -o", b"xxd -c", b"gawk -o", b"vim -c '", b"git init ", b"split ", b"patch -o ", b"npm -g ", b"go -o ", b"exec -la "];
    let mut seed: u64 = 0x243f_6a88_85a3_08d3;
    let mut rnd = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    let start = std::time::Instant::now();
    let (mut runs, mut allowed_rejected, mut refused) = (0u64, 0u64, 0u64);
    while start.elapsed().as_secs() < secs {
        let mut input = corpus[rnd(corpus.len())].clone();
        for _ in 0..1 + rnd(6) {
            let at = if input.is_empty() { 0 } else { rnd(input.len() + 1) };
            match rnd(4) {
                0 => input.splice(at..at, tokens[rnd(tokens.len())].iter().copied()).for_each(drop),
                1 if !input.is_empty() => {
                    let end = (at + 1 + rnd(4)).min(input.len());
                    input.drain(at.min(input.len())..end);
                }
                2 => input.insert(at, rnd(256) as u8),
                _ => input.extend_from_slice(&corpus[rnd(corpus.len())]),
            }
        }
        let text = String::from_utf8_lossy(&input).into_owned();
        let d = decide(&req(text.clone()), &LexicalHost);
        runs += 1;
        if d.decision == Outcome::Refuse {
            refused += 1;
        }
        let shadow: String = text.bytes().map(|b| if b < 0x80 { b as char } else { 'x' }).collect();
        let rejected = parser.parse(&shadow, None).map(|t| t.root_node().has_error()).unwrap_or(true);
        if rejected && d.decision == Outcome::Allow {
            allowed_rejected += 1;
            eprintln!("ALLOWED REJECTED TEXT: {text:?}");
        }
    }
    eprintln!("fuzz: {runs} executions in {secs} s, {refused} refused, {allowed_rejected} rejected texts allowed");
    assert_eq!(allowed_rejected, 0);
}
