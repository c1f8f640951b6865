//! The grammar the core parses with is tree-sitter-bash with its lexer split
//! into parts (build.rs: the whole lexer as one function cost the host
//! process ~22 MiB once V8 optimised it). The split must change nothing:
//! every text below parses to the same tree, node for node and byte for
//! byte, as with the crate's own grammar.

use dsh_allow::shell::grammar;
use tree_sitter::{Language, Node, Parser};

fn parser(language: &Language) -> Parser {
    let mut p = Parser::new();
    p.set_language(language).expect("tree-sitter-bash matches the runtime");
    p
}

/// Every node: its kind, byte range, whether it is missing or an error, in
/// document order.
fn flatten(node: Node, out: &mut Vec<String>) {
    out.push(format!("{}{}{} {}..{}", node.kind(), if node.is_missing() { "!missing" } else { "" }, if node.is_error() { "!error" } else { "" }, node.start_byte(), node.end_byte()));
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        flatten(child, out);
    }
}

fn trees_differ(split: &mut Parser, crate_own: &mut Parser, text: &str) -> Option<String> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten(split.parse(text, None)?.root_node(), &mut a);
    flatten(crate_own.parse(text, None)?.root_node(), &mut b);
    let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    (a != b).then(|| format!("{text:?}: split lexer gives {:?}, the crate's {:?}", a.get(at), b.get(at)))
}

/// The corpus, every vector's command and every audited operand's command.
fn known_texts() -> Vec<String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap_or_else(|e| panic!("{p}: {e}"));
    let mut texts: Vec<String> = read("benches/corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("\\n", "\n"))
        .collect();
    let vectors: serde_json::Value = serde_json::from_str(&read("tests/vectors/core.json")).unwrap();
    for case in vectors["cases"].as_array().unwrap() {
        texts.push(case["command"].as_str().unwrap().to_string());
    }
    let audit: serde_json::Value = serde_json::from_str(&read("tests/audit/file_operands.json")).unwrap();
    for row in audit["rows"].as_array().unwrap() {
        for file in row["files"].as_array().into_iter().flatten() {
            texts.extend(file["command"].as_str().map(str::to_string));
        }
    }
    texts
}

#[test]
fn the_core_parses_with_the_split_lexer() {
    assert!(grammar::SPLIT_LEXER, "build.rs fell back to the crate's unsplit lexer (its cargo warning says why)");
}

#[test]
fn every_known_command_parses_alike_with_the_split_lexer() {
    let (mut split, mut crate_own) = (parser(&grammar::bash()), parser(&tree_sitter_bash::LANGUAGE.into()));
    let texts = known_texts();
    assert!(texts.len() > 900, "only {} texts", texts.len());
    let wrong: Vec<String> = texts.iter().filter_map(|t| trees_differ(&mut split, &mut crate_own, t)).collect();
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), texts.len(), wrong.join("\n"));
}

/// Texts spliced from pieces of shell syntax that reach the lexer's odd
/// states (heredocs, nested quotes and expansions, arithmetic, unfinished
/// input), and every prefix of each: a cut-off text ends in any state.
#[test]
fn spliced_and_cut_off_texts_parse_alike_with_the_split_lexer() {
    const PIECES: &[&str] = &[
        "echo ", "'a b'", "\"x $y ${z:-w} $(ls)\"", "$((1 + 2 * x))", "<<EOF\nline $v\nEOF\n", "<<-'E'\n\tq\n\tE\n", " | ", " && ", " || ", ";", "\n",
        "for i in *; do ", "done", "if [[ -f x && $a =~ ^b+$ ]]; then ", "fi", "case $x in a|b) ", ";; esac", "{ ", " }", "( ", " )", "f() ", "`cmd`",
        "> out", ">> log 2>&1", "<(sort a)", ">(tee b)", "arr=(1 2)", "${arr[@]}", "$'\\t'", "\\", "#c\n", "!", "~/x", "a=b ", "--opt=v ", "-- ",
        "{a,b}", "*.rs", "[[ ", " ]]", "((i++))", "$", "\"", "'", "$(", "${", "<<", "&", "|&", "2>", "&>", "${#x}", "${x/a/b}", "$@", "$?", "\t",
    ];
    let (mut split, mut crate_own) = (parser(&grammar::bash()), parser(&tree_sitter_bash::LANGUAGE.into()));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut wrong = Vec::new();
    let mut parsed = 0;
    for _ in 0..1500 {
        let n = 1 + (next() % 12) as usize;
        let text: String = (0..n).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect();
        for cut in (1..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            parsed += 1;
            if let Some(why) = trees_differ(&mut split, &mut crate_own, &text[..cut]) {
                wrong.push(why);
            }
        }
    }
    assert!(parsed > 50_000, "only {parsed} texts");
    assert!(wrong.is_empty(), "{} of {parsed} differ, e.g.:\n{}", wrong.len(), wrong.iter().take(5).cloned().collect::<Vec<_>>().join("\n"));
}
