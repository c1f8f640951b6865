//! The layout shows the pipeline (ARCHITECTURE.md): each stage imports
//! only the stages below it, so data flows one way, and no function grows
//! past what a reader holds in view.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The stages, lowest first: a module may use only those of a lower rank
/// (and itself). Adapters sit on top.
const RANKS: &[(&str, u8)] = &[
    ("paths", 0),
    ("host", 1),
    ("ledger", 1),
    ("shell", 2),
    ("policy", 3),
    ("effects", 4),
    ("api", 5),
    ("decide", 6),
    ("fence", 6),
    ("fs_host", 7),
    ("runner", 8),
    ("cli", 9),
    ("wasm", 9),
];

/// Longer functions are split into named steps.
const MAX_FUNCTION_LINES: usize = 120;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The stage a source file belongs to: its first folder or file under src/.
fn stage(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The stages a file's code (not its comments) names through `crate::`.
fn uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn all() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.retain(|f| !f.starts_with(src.join("bin")) && f.file_name().is_some_and(|n| n != "lib.rs"));
    files.sort();
    (src, files)
}

#[test]
fn every_stage_imports_only_the_stages_below_it() {
    let ranks: BTreeMap<&str, u8> = RANKS.iter().copied().collect();
    let (src, files) = all();
    let mut wrong = Vec::new();
    for f in &files {
        let me = stage(&src, f);
        let Some(&mine) = ranks.get(me.as_str()) else {
            wrong.push(format!("{}: the stage `{me}` has no rank in tests/layout.rs", f.display()));
            continue;
        };
        for used in uses(&std::fs::read_to_string(f).unwrap()) {
            if used == me {
                continue;
            }
            match ranks.get(used.as_str()) {
                Some(&r) if r < mine => {}
                Some(_) => wrong.push(format!("{}: `{me}` uses `{used}`, which is not below it", f.display())),
                None => wrong.push(format!("{}: uses `crate::{used}`, a stage with no rank", f.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "the data no longer flows one way:\n{}", wrong.join("\n"));
}

#[test]
fn no_function_is_longer_than_a_reader_holds_in_view() {
    let (_, files) = all();
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            let is_fn = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "].iter().any(|p| t.starts_with(p));
            if !is_fn || l.trim_end().ends_with(';') {
                continue;
            }
            let indent = &l[..l.len() - t.len()];
            let close = format!("{indent}}}");
            if let Some(n) = lines[i + 1..].iter().position(|x| *x == close) {
                if n + 2 > MAX_FUNCTION_LINES {
                    long.push(format!("{}:{} `{}` is {} lines", f.display(), i + 1, t.split('(').next().unwrap_or(t), n + 2));
                }
            }
        }
    }
    assert!(long.is_empty(), "split these into named steps:\n{}", long.join("\n"));
}
