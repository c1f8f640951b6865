//! The prepared policy is reused, not rebuilt, while a host vouches for its
//! generation: each call is decided twice (the gate, then the guard with its
//! own one-shot grants), so two contexts alternate.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/request.rs"]
mod request;

use std::cell::Cell;

use dsh_allow::decide::decide;
use dsh_allow::host::{Host, LexicalHost, PathKind};
use dsh_allow::policy::capability::Access;
use dsh_allow::policy::rules::Rule;

/// The lexical host, counting the questions a policy's preparation asks.
struct Counting {
    roots: Cell<usize>,
    generation: u64,
}

impl Host for Counting {
    fn canonical(&self, path: &str) -> String {
        LexicalHost.canonical(path)
    }
    fn canonical_root(&self, path: &str) -> String {
        self.roots.set(self.roots.get() + 1);
        LexicalHost.canonical(path)
    }
    fn kind(&self, path: &str) -> PathKind {
        LexicalHost.kind(path)
    }
    fn which(&self, program: &str) -> Option<String> {
        LexicalHost.which(program)
    }
    fn generation(&self) -> Option<u64> {
        Some(self.generation)
    }
}

#[test]
fn the_gate_and_the_guard_each_reuse_their_prepared_policy() {
    let host = Counting { roots: Cell::new(0), generation: 7_001 };
    let gate = request::request("git commit -m x");
    let mut guard = gate.clone();
    guard.grants.push(Rule { id: String::new(), path: "/w/.git".into(), recursive: true, access: Access::all(), hits: 0, created_at: String::new() });
    decide(&gate, &host);
    decide(&guard, &host);
    let prepared = host.roots.get();
    assert!(prepared > 0, "preparing a policy asks about its roots");
    for _ in 0..3 {
        decide(&gate, &host);
        decide(&guard, &host);
    }
    assert_eq!(host.roots.get(), prepared, "a policy was prepared again for a context already seen in this generation");
    // A new generation prepares afresh.
    let next = Counting { roots: Cell::new(0), generation: 7_002 };
    decide(&gate, &next);
    assert!(next.roots.get() > 0);
}
