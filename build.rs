// Builds tree-sitter-bash's grammar with its lexer split into parts.
//
// The generated lexer `ts_lex` is one function of ~190 KB of wasm. Once it
// runs hot, V8 compiles it again with its optimizing compiler, and the
// memory that compile takes stays with the host process (~22 MiB measured:
// malloc keeps it); every fork the host makes to run a tool call then
// copies it. Split into parts of a few KB each, the same states compile in
// small pieces. The rewrite is mechanical (each `case` moves whole, the
// loop that advances stays in `ts_lex`) and `tests/grammar.rs` parses the
// corpus and the vectors with both grammars and compares every tree.
//
// The sources come from the tree-sitter-bash crate the lock file names, in
// cargo's registry. Where they cannot be found (vendored sources, another
// layout) the crate's own grammar is used, with a warning.

use std::path::{Path, PathBuf};
use std::{env, fs};

/// Parts the lexer's states are split into.
const PARTS: usize = 32;
const HEADER: &str = "static bool ts_lex(TSLexer *lexer, TSStateId state) {\n  START_LEXER();\n  eof = lexer->eof(lexer);\n  switch (state) {\n";
const FOOTER: &str = "    default:\n      return false;\n  }\n}\n";

fn main() {
    println!("cargo:rustc-check-cfg=cfg(dsh_allow_split_lexer)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.lock");
    // The runner's link order (scripts/build.sh): a new list links again.
    println!("cargo:rerun-if-changed=scripts/runner-hot-functions.txt");
    let Some(src) = grammar_sources() else {
        println!("cargo:warning=tree-sitter-bash sources not found in cargo's registry: using the crate's unsplit lexer");
        return;
    };
    let parser = fs::read_to_string(src.join("parser.c")).expect("read tree-sitter-bash parser.c");
    let split = match split_lexer(&parser) {
        Ok(text) => text,
        Err(why) => {
            println!("cargo:warning=tree-sitter-bash's lexer was not split ({why}): using the crate's unsplit lexer");
            return;
        }
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("parser.c"), split).expect("write the split parser.c");

    // Our own symbols throughout, so the crate's grammar can be linked
    // beside this one (the differential test does).
    let mut build = cc::Build::new();
    build
        .std("c11")
        .include(&src)
        // Generated code: its warnings are tree-sitter's, not ours.
        .warnings(false)
        .extra_warnings(false)
        .define("tree_sitter_bash", "dsh_allow_tree_sitter_bash");
    for f in ["create", "destroy", "scan", "serialize", "deserialize"] {
        build.define(
            &format!("tree_sitter_bash_external_scanner_{f}"),
            Some(format!("dsh_allow_bash_scanner_{f}").as_str()),
        );
    }
    build.file(out.join("parser.c")).file(src.join("scanner.c")).compile("dsh-allow-bash");
    println!("cargo:rustc-cfg=dsh_allow_split_lexer");
}

/// `src/` of the tree-sitter-bash version in Cargo.lock, in cargo's registry.
fn grammar_sources() -> Option<PathBuf> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").ok()?);
    let lock = fs::read_to_string(root.join("Cargo.lock")).ok()?;
    let at = lock.find("name = \"tree-sitter-bash\"\nversion = \"")?;
    let rest = &lock[at + "name = \"tree-sitter-bash\"\nversion = \"".len()..];
    let version = &rest[..rest.find('"')?];
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let registry = home.join("registry").join("src");
    for index in fs::read_dir(registry).ok()?.flatten() {
        let src = index.path().join(format!("tree-sitter-bash-{version}")).join("src");
        if src.join("parser.c").is_file() && src.join("scanner.c").is_file() {
            println!("cargo:rerun-if-changed={}", src.join("parser.c").display());
            return Some(src);
        }
    }
    None
}

/// parser.c with `ts_lex` rewritten as a loop over PARTS functions, each
/// holding a contiguous run of the states' cases unchanged. Inside a part,
/// ADVANCE/SKIP (`goto next_state`) hand the next state back to the loop and
/// END_STATE returns the result; `default` (no such state) returns false.
fn split_lexer(parser: &str) -> Result<String, String> {
    let start = parser.find(HEADER).ok_or("ts_lex's opening is not the expected one")?;
    let body_at = start + HEADER.len();
    let end = body_at + parser[body_at..].find(FOOTER).ok_or("ts_lex's closing is not the expected one")?;
    let body = &parser[body_at..end];

    // Case starts, each with its state; a part may begin only at a case
    // whose predecessor ended its state (no fall-through between parts).
    let mut cases: Vec<(usize, u32)> = Vec::new();
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        if let Some(n) = line.strip_prefix("    case ").and_then(|l| l.strip_suffix(":\n")) {
            let state: u32 = n.parse().map_err(|_| format!("case label {n:?}"))?;
            if cases.last().is_some_and(|&(_, prev)| prev >= state) {
                return Err("states are not in ascending order".into());
            }
            let ended = offset == 0 || body[..offset].ends_with("      END_STATE();\n");
            if !ended {
                return Err(format!("state {state} is entered by fall-through"));
            }
            cases.push((offset, state));
        }
        offset += line.len();
    }
    if cases.len() < PARTS {
        return Err("fewer states than parts".into());
    }
    let target = body.len() / PARTS;
    let mut bounds = vec![0usize];
    for &(at, _) in &cases {
        if at >= bounds.last().unwrap() + target && bounds.len() < PARTS {
            bounds.push(at);
        }
    }
    bounds.push(body.len());

    let mut out = String::with_capacity(parser.len() + 64 * 1024);
    out.push_str(&parser[..start]);
    out.push_str("/* dsh-allow build.rs: ts_lex split into parts (see there why). */\n");
    out.push_str("#undef END_STATE\n#define END_STATE() { *result_io = result; return false; }\n");
    let mut firsts = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let first_state = cases.iter().find(|&&(at, _)| at == w[0]).map(|&(_, s)| s).unwrap();
        firsts.push(first_state);
        out.push_str(&format!(
            "static bool ts_lex_part{k}(TSLexer *lexer, TSStateId *state_io, bool *result_io, bool *skip_io, bool eof, int32_t lookahead) {{\n  TSStateId state = *state_io;\n  bool result = *result_io;\n  bool skip = false;\n  switch (state) {{\n"
        ));
        out.push_str(&body[w[0]..w[1]]);
        out.push_str("    default:\n      *result_io = false;\n      return false;\n  }\nnext_state:\n  *state_io = state;\n  *result_io = result;\n  *skip_io = skip;\n  return true;\n}\n\n");
    }
    out.push_str("#undef END_STATE\n#define END_STATE() return result;\n\n");
    // Which part holds each state: one byte per state, one indirect call.
    let last = cases.last().unwrap().1;
    let mut table = String::new();
    let mut part = 0;
    for state in 0..=last {
        while part + 1 < firsts.len() && state >= firsts[part + 1] {
            part += 1;
        }
        table.push_str(&format!("{part},"));
    }
    let parts: Vec<String> = (0..firsts.len()).map(|k| format!("ts_lex_part{k}")).collect();
    out.push_str(&format!(
        "typedef bool (*ts_lex_part_fn)(TSLexer *, TSStateId *, bool *, bool *, bool, int32_t);\nstatic const ts_lex_part_fn ts_lex_parts[] = {{ {} }};\nstatic const uint8_t ts_lex_part_of[{}] = {{ {table} }};\n\n",
        parts.join(", "),
        last + 1
    ));
    out.push_str(&format!(
        "static bool ts_lex(TSLexer *lexer, TSStateId state) {{\n  bool result = false;\n  bool skip = false;\n  goto start;\nnext_state:\n  lexer->advance(lexer, skip);\nstart:\n  skip = false;\n  if (state > {last}) return false;\n  {{\n    int32_t lookahead = lexer->lookahead;\n    bool eof = lexer->eof(lexer);\n    if (ts_lex_parts[ts_lex_part_of[state]](lexer, &state, &result, &skip, eof, lookahead)) goto next_state;\n  }}\n  return result;\n}}\n"
    ));
    out.push_str(&parser[end + FOOTER.len()..]);
    Ok(out)
}
