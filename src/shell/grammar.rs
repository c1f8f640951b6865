//! The bash grammar the parser uses: tree-sitter-bash as build.rs compiled
//! it, its lexer split into parts (why: build.rs), or the crate's own where
//! the sources could not be found at build time.

use tree_sitter::Language;

#[cfg(dsh_allow_split_lexer)]
extern "C" {
    fn dsh_allow_tree_sitter_bash() -> *const ();
}

/// tree-sitter-bash, lexer split (see build.rs).
#[cfg(dsh_allow_split_lexer)]
pub fn bash() -> Language {
    // SAFETY: build.rs compiled tree-sitter-bash's generated parser.c under
    // this name; only ts_lex's body was rearranged.
    unsafe { tree_sitter_language::LanguageFn::from_raw(dsh_allow_tree_sitter_bash) }.into()
}

/// tree-sitter-bash as the crate ships it.
#[cfg(not(dsh_allow_split_lexer))]
pub fn bash() -> Language {
    tree_sitter_bash::LANGUAGE.into()
}

/// Whether [`bash`] is the split build (the differential test needs it).
pub const SPLIT_LEXER: bool = cfg!(dsh_allow_split_lexer);
