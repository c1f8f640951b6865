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

/// The sibling modules a file's code (not its comments or its tests) names
/// through `super::` or `crate::<stage>::`.
fn sibling_uses(text: &str, stage: &str, siblings: &[String]) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for prefix in ["super::".to_string(), format!("crate::{stage}::")] {
            let mut rest = line;
            while let Some(at) = rest.find(&prefix) {
                rest = &rest[at + prefix.len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if siblings.contains(&name) && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// A circle through `from` in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, Vec<String>>, from: &str) -> Option<Vec<String>> {
    let mut todo = vec![vec![from.to_string()]];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(path) = todo.pop() {
        for next in graph.get(path.last().unwrap()).into_iter().flatten() {
            if next == from {
                return Some([path.clone(), vec![next.clone()]].concat());
            }
            if seen.insert(next.clone()) {
                todo.push([path.clone(), vec![next.clone()]].concat());
            }
        }
    }
    None
}

#[test]
fn the_modules_of_a_stage_import_one_another_in_one_direction() {
    let (src, files) = all();
    let mut wrong = Vec::new();
    let stages: std::collections::BTreeSet<String> = files.iter().filter(|f| f.parent() != Some(src.as_path())).map(|f| stage(&src, f)).collect();
    for st in stages {
        let dir = src.join(&st);
        let mine: Vec<&PathBuf> = files.iter().filter(|f| f.parent() == Some(dir.as_path()) && f.file_name().is_some_and(|n| n != "mod.rs")).collect();
        let siblings: Vec<String> = mine.iter().map(|f| f.file_stem().unwrap().to_string_lossy().into_owned()).collect();
        let graph: BTreeMap<String, Vec<String>> = mine
            .iter()
            .zip(&siblings)
            .map(|(f, name)| (name.clone(), sibling_uses(&std::fs::read_to_string(f).unwrap(), &st, &siblings).into_iter().filter(|u| u != name).collect()))
            .collect();
        for name in &siblings {
            if let Some(c) = circle(&graph, name) {
                let text = format!("src/{st}: {}", c.join(" -> "));
                if !wrong.iter().any(|w: &String| c.iter().all(|m| w.contains(m.as_str())) && w.starts_with(&format!("src/{st}:"))) {
                    wrong.push(text);
                }
            }
        }
    }
    assert!(wrong.is_empty(), "modules that import each other, round in a circle:\n{}", wrong.join("\n"));
}

#[test]
fn a_circle_of_imports_is_found() {
    let siblings = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    assert_eq!(sibling_uses("use super::b::X; // super::c\n#[cfg(test)]\nuse super::c;", "runner", &siblings), vec!["b"]);
    let graph: BTreeMap<String, Vec<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])].into_iter().map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect())).collect();
    assert_eq!(circle(&graph, "a"), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let line: BTreeMap<String, Vec<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec![])].into_iter().map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect())).collect();
    assert_eq!(circle(&line, "a"), None);
}
