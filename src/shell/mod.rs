//! Command text → the commands a shell would run: tree-sitter-bash's parse
//! walked into simple commands with their working directories, words and
//! redirections ([`parse`]), braces expanded as bash does ([`braces`]),
//! with tree-sitter-bash built as [`grammar`] says.
//! Knows nothing of files' capabilities; asks the host only where a path
//! leads.

pub mod braces;
pub mod grammar;
pub mod parse;
