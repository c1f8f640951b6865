//! An SBPL profile compiled to rules, and the verdict for one (operation,
//! path) pair, with Seatbelt's semantics as public sources state them.
//!
//! Sources (the same abbreviations as tests/support/sbpl_vocabulary.rs):
//! - `guide`: "Apple Sandbox Guide v1.0" (fG!, 2011): several filters in one
//!   rule match when any of them does; `subpath` matches the path and
//!   everything below it, `literal` the path alone, `regex` a POSIX extended
//!   expression against the whole path string.
//! - `sbpl1.scm`: libsandbox's SBPL prelude as published in
//!   knightsc/sandbox_profiles: `(define process-exec process-exec*)`,
//!   `(define file-unlink file-write-unlink)`, `subpath` refuses an empty
//!   string or one ending in `/`.
//! - `spec`: our own spec (dsh-allow.md, "Seatbelt"), measured by its
//!   authors: for the same operation the later rule wins, and a wildcard
//!   deny loses to a specific allow.
//! - `issue 25`: observed by two other projects, not documented: a rule with
//!   no filter does not override a path-scoped one, and a rule naming an
//!   operation outright beats one reached through a wildcard.
//!
//! Where they disagree the model takes the stricter reading: a pair is
//! allowed only when every reading allows it (see `verdict`).

use std::collections::BTreeMap;

use crate::sbpl_check::{parse, Expr};
use crate::sbpl_vocabulary::{self as vocab, known};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Deny,
}

#[derive(Debug)]
pub enum Filter {
    Literal(String),
    Subpath(String),
    Prefix(String),
    Regex(regex::Regex),
    Any(Vec<Filter>),
    All(Vec<Filter>),
    Not(Box<Filter>),
    /// A filter on something other than a path (`remote ip …`, `target …`):
    /// it matches no path, so no path query meets its rule.
    NotAPath,
}

impl Filter {
    fn matches(&self, path: &str) -> bool {
        match self {
            Filter::Literal(p) => path == p,
            // guide: "the path and everything below it"; `/` holds every path.
            Filter::Subpath(p) => p == "/" || path == p || path.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with('/')),
            Filter::Prefix(p) => path.starts_with(p.as_str()),
            Filter::Regex(r) => r.is_match(path),
            Filter::Any(fs) => fs.iter().any(|f| f.matches(path)),
            Filter::All(fs) => fs.iter().all(|f| f.matches(path)),
            Filter::Not(f) => !f.matches(path),
            Filter::NotAPath => false,
        }
    }
}

#[derive(Debug)]
pub struct Rule {
    pub action: Action,
    pub operations: Vec<String>,
    /// Any of them (guide); none means every path.
    pub filters: Vec<Filter>,
    pub line: usize,
}

/// How a rule's operation reaches the one asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Default,
    Wildcard,
    Named,
}

/// `process-exec` is an alias of `process-exec*` (sbpl1.scm): it names the
/// exec of a program outright and reaches its interpreter as a wildcard.
fn reach(rule_op: &str, op: &str) -> Option<Reach> {
    if rule_op == op {
        return Some(Reach::Named);
    }
    if rule_op == "default" {
        return Some(Reach::Default);
    }
    let stem = if rule_op == "process-exec" { "process-exec" } else { rule_op.strip_suffix('*')? };
    op.starts_with(stem).then_some(Reach::Wildcard)
}

#[derive(Debug)]
pub struct Profile {
    pub rules: Vec<Rule>,
}

/// Why a pair was refused: the rule each reading ended on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// The readings that refused, by name, with the line of their rule.
    pub refused_by: Vec<(&'static str, usize)>,
}

impl Profile {
    /// Whether any rule denies anything: only then is a profile applied with
    /// a fence that a nested `sandbox-exec` runs into (see main.rs).
    pub fn denies_anything(&self) -> bool {
        self.rules.iter().any(|r| r.action == Action::Deny)
    }

    /// The verdict on `op` at `path` (an absolute path as macOS spells it).
    /// Three readings, each a "last matching rule wins" over a different set:
    /// - `last-match` (spec, guide): every matching rule;
    /// - `filtered-first` (issue 25): the path-scoped rules, when any match;
    /// - `named-first` (issue 25): the rules naming the operation outright,
    ///   else those reaching it through a wildcard, else `default`.
    ///
    /// A pair no rule matches is allowed (Seatbelt without `(deny default)`).
    pub fn verdict(&self, op: &str, path: &str) -> Verdict {
        let matching: Vec<(&Rule, Reach)> = self
            .rules
            .iter()
            .filter_map(|r| {
                let reach = r.operations.iter().filter_map(|o| reach(o, op)).max()?;
                (r.filters.is_empty() || r.filters.iter().any(|f| f.matches(path))).then_some((r, reach))
            })
            .collect();
        let last = |set: &mut dyn Iterator<Item = &(&Rule, Reach)>| set.last().map(|(r, _)| (r.action, r.line));
        let mut readings: Vec<(&'static str, Option<(Action, usize)>)> = vec![("last-match", last(&mut matching.iter()))];
        let filtered = matching.iter().any(|(r, _)| !r.filters.is_empty());
        readings.push(("filtered-first", last(&mut matching.iter().filter(|(r, _)| !filtered || !r.filters.is_empty()))));
        let best = matching.iter().map(|(_, reach)| *reach).max();
        readings.push(("named-first", last(&mut matching.iter().filter(|(_, reach)| Some(*reach) == best))));
        let reading = reading();
        readings.retain(|(name, _)| matches!(reading, Reading::Strictest | Reading::Loosest) || reading == Reading::One(name));
        let refused_by: Vec<(&'static str, usize)> =
            readings.into_iter().filter_map(|(name, end)| matches!(end, Some((Action::Deny, _))).then(|| (name, end.unwrap().1))).collect();
        // The loosest reading refuses only when every reading refuses.
        let allowed = if reading == Reading::Loosest { refused_by.len() < 3 } else { refused_by.is_empty() };
        Verdict { allowed, refused_by }
    }
}

/// Which reading of rule order the model enforces: all three at once (the
/// stricter; the default), one alone, or the loosest (allowed when any
/// reading allows). `DSH_ALLOW_SEATBELT_MODEL_READING` = `strictest`,
/// `last-match`, `filtered-first`, `named-first` or `loosest`, so a suite
/// can be run under each: a profile whose meaning depends on the reading
/// fails here before it fails on a Mac.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Strictest,
    One(&'static str),
    Loosest,
}

pub const READINGS: &[&str] = &["last-match", "filtered-first", "named-first"];

pub fn reading() -> Reading {
    static READING: std::sync::OnceLock<Reading> = std::sync::OnceLock::new();
    *READING.get_or_init(|| match std::env::var("DSH_ALLOW_SEATBELT_MODEL_READING").as_deref() {
        Err(_) | Ok("" | "strictest") => Reading::Strictest,
        Ok("loosest") => Reading::Loosest,
        Ok(r) => match READINGS.iter().find(|&&n| n == r) {
            Some(n) => Reading::One(n),
            None => {
                eprintln!("sandbox-exec: DSH_ALLOW_SEATBELT_MODEL_READING={r}: one of strictest, loosest, {}", READINGS.join(", "));
                std::process::exit(64);
            }
        },
    })
}

/// Compile profile text with its `-D` parameters, as sandbox-exec does
/// before it applies anything: any error means nothing runs. Messages read
/// like sandbox-exec's (`unbound variable: X`, with the line).
pub fn compile(text: &str, params: &BTreeMap<String, String>) -> Result<Profile, String> {
    let forms = parse(text).map_err(|e| format!("{e} at <input string>"))?;
    let mut rules = Vec::new();
    let mut version = false;
    for form in &forms {
        let Expr::List(items, line) = form else {
            return Err(format!("a bare value at the top level at <input string>, line {}", line_of(form)));
        };
        let line = *line;
        match items.first() {
            Some(Expr::Symbol(v, _)) if v == "version" => {
                if !matches!(items.as_slice(), [_, Expr::Symbol(n, _)] if n == "1") {
                    return Err(format!("unsupported version at <input string>, line {line}"));
                }
                version = true;
            }
            Some(Expr::Symbol(a, _)) if a == "allow" || a == "deny" => {
                let action = if a == "allow" { Action::Allow } else { Action::Deny };
                rules.push(rule(action, &items[1..], line, params)?);
            }
            Some(Expr::Symbol(other, _)) => return Err(format!("unbound variable: {other} at <input string>, line {line}")),
            _ => return Err(format!("a form that does not start with its name at <input string>, line {line}")),
        }
    }
    if !version {
        // libsandbox requires the version form (guide: "(version 1)" first).
        return Err("no (version 1) in the profile".into());
    }
    Ok(Profile { rules })
}

fn line_of(e: &Expr) -> usize {
    match e {
        Expr::List(_, l) | Expr::Symbol(_, l) | Expr::Str(_, l) | Expr::Regex(_, l) => *l,
    }
}

fn rule(action: Action, rest: &[Expr], line: usize, params: &BTreeMap<String, String>) -> Result<Rule, String> {
    let mut operations = Vec::new();
    let mut filters = Vec::new();
    for item in rest {
        match item {
            Expr::Symbol(op, _) if known(vocab::OPERATIONS, op) => operations.push(op.clone()),
            Expr::Symbol(op, _) => return Err(format!("unbound variable: {op} at <input string>, line {line}")),
            Expr::List(inner, _) if matches!(inner.first(), Some(Expr::Symbol(s, _)) if s == "with") => {
                match inner.as_slice() {
                    [_, Expr::Symbol(m, _)] if known(vocab::MODIFIERS, m) => {}
                    _ => return Err(format!("invalid modifier at <input string>, line {line}")),
                }
            }
            Expr::List(..) => filters.push(filter(item, line, params)?),
            _ => return Err(format!("invalid rule at <input string>, line {line}")),
        }
    }
    if operations.is_empty() {
        return Err(format!("a rule with no operation at <input string>, line {line}"));
    }
    Ok(Rule { action, operations, filters, line })
}

fn filter(e: &Expr, line: usize, params: &BTreeMap<String, String>) -> Result<Filter, String> {
    let Expr::List(items, _) = e else { return Err(format!("invalid filter at <input string>, line {line}")) };
    let Some((Expr::Symbol(name, _), args)) = items.split_first() else {
        return Err(format!("invalid filter at <input string>, line {line}"));
    };
    let name = name.as_str();
    if known(vocab::PATH_FILTERS, name) {
        let [arg] = args else { return Err(format!("{name} takes one path at <input string>, line {line}")) };
        let value = match arg {
            Expr::Str(s, _) => s.clone(),
            Expr::List(v, _) => match v.as_slice() {
                [Expr::Symbol(f, _), Expr::Str(k, _)] if f == "param" => {
                    params.get(k).cloned().ok_or_else(|| format!("unbound variable: {k} at <input string>, line {line}"))?
                }
                _ => return Err(format!("invalid value at <input string>, line {line}")),
            },
            _ => return Err(format!("invalid value at <input string>, line {line}")),
        };
        return Ok(match name {
            "subpath" => {
                // sbpl1.scm: an empty subpath or one ending in a slash is an error.
                if value.is_empty() || (value.len() > 1 && value.ends_with('/')) {
                    return Err(format!("subpaths must not end with a slash: {value:?} at <input string>, line {line}"));
                }
                Filter::Subpath(value)
            }
            "prefix" => Filter::Prefix(value),
            // `path` is `literal` (sbpl1.scm: (define literal path)).
            _ => Filter::Literal(value),
        });
    }
    if known(vocab::REGEX_FILTERS, name) {
        let [Expr::Regex(r, _) | Expr::Str(r, _)] = args else {
            return Err(format!("regex takes one expression at <input string>, line {line}"));
        };
        let re = regex::Regex::new(r).map_err(|e| format!("invalid regex {r:?}: {e} at <input string>, line {line}"))?;
        return Ok(Filter::Regex(re));
    }
    if vocab::other_filter(name).is_some() {
        return Ok(Filter::NotAPath);
    }
    let inner = || args.iter().map(|a| filter(a, line, params)).collect::<Result<Vec<_>, _>>();
    match name {
        "require-any" => Ok(Filter::Any(inner()?)),
        "require-all" => Ok(Filter::All(inner()?)),
        "require-not" => {
            let mut v = inner()?;
            if v.len() != 1 {
                return Err(format!("require-not takes one filter at <input string>, line {line}"));
            }
            Ok(Filter::Not(Box::new(v.remove(0))))
        }
        other => Err(format!("unbound variable: {other} at <input string>, line {line}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str) -> Profile {
        let params: BTreeMap<String, String> = [("WS", "/Users/me/ws"), ("STORE", "/Users/me/.dsh/dsh-allow.json")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        compile(text, &params).unwrap()
    }

    #[test]
    fn for_the_same_operation_the_later_rule_wins() {
        let p = profile("(version 1)(allow default)(deny file-write-data (subpath \"/Users\"))(allow file-write-data (subpath (param \"WS\")))");
        assert!(p.verdict("file-write-data", "/Users/me/ws/a").allowed);
        assert!(!p.verdict("file-write-data", "/Users/me/other").allowed);
        assert!(p.verdict("file-write-data", "/private/tmp/x").allowed, "no path rule: allow default");
    }

    #[test]
    fn a_deny_after_a_grant_shuts_a_literal_inside_it() {
        let p = profile(
            "(version 1)(allow default)(deny file-write-data)(allow file-write-data (subpath \"/Users/me\"))(deny file-write-data (literal (param \"STORE\")))",
        );
        assert!(p.verdict("file-write-data", "/Users/me/.dsh/other").allowed);
        assert!(!p.verdict("file-write-data", "/Users/me/.dsh/dsh-allow.json").allowed);
    }

    #[test]
    fn subpath_holds_the_path_and_what_lies_below_it_but_not_a_longer_name() {
        let p = profile("(version 1)(allow default)(deny file-read-data (subpath \"/Users/me/ws\"))");
        assert!(!p.verdict("file-read-data", "/Users/me/ws").allowed);
        assert!(!p.verdict("file-read-data", "/Users/me/ws/a/b").allowed);
        assert!(p.verdict("file-read-data", "/Users/me/ws2").allowed);
    }

    #[test]
    fn a_wildcard_reaches_every_operation_below_it() {
        let p = profile("(version 1)(allow default)(deny file-write* (subpath \"/Users\"))");
        for op in ["file-write-data", "file-write-create", "file-write-unlink", "file-write-mode", "file-write-xattr"] {
            assert!(!p.verdict(op, "/Users/x").allowed, "{op}");
        }
        assert!(p.verdict("file-read-data", "/Users/x").allowed);
    }

    #[test]
    fn the_stricter_reading_wins_where_sources_disagree() {
        // Later wildcard allow over an earlier named deny: last-match allows,
        // named-first refuses; the model refuses.
        let p = profile("(version 1)(allow default)(deny file-write-data (subpath \"/Users\"))(allow file-write* (subpath \"/Users\"))");
        let v = p.verdict("file-write-data", "/Users/x");
        assert!(!v.allowed);
        assert_eq!(v.refused_by.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec!["named-first"]);
        // A later unfiltered deny over a path-scoped allow: last-match refuses.
        let p = profile("(version 1)(allow default)(allow file-write-data (subpath \"/Users\"))(deny file-write-data)");
        assert!(!p.verdict("file-write-data", "/Users/x").allowed);
        // An earlier unfiltered deny under a later path-scoped allow: every reading allows.
        let p = profile("(version 1)(allow default)(deny file-write-data)(allow file-write-data (subpath \"/Users\"))");
        assert!(p.verdict("file-write-data", "/Users/x").allowed);
    }

    #[test]
    fn process_exec_reaches_the_interpreter_of_a_script() {
        let p = profile("(version 1)(allow default)(deny process-exec)(allow process-exec (subpath \"/usr/bin\"))");
        assert!(!p.verdict("process-exec-interpreter", "/opt/sh").allowed);
        assert!(p.verdict("process-exec-interpreter", "/usr/bin/sh").allowed);
    }

    #[test]
    fn regex_literal_prefix_and_combinators_match_as_written() {
        let p = profile(
            "(version 1)(allow default)(deny file-read-data (regex #\"^/Users/[^/]+/\\.ssh/\") (literal \"/etc/x\") (prefix \"/opt/se\"))\
             (deny file-write-data (require-all (subpath \"/Users\") (require-not (subpath \"/Users/me/ws\"))))",
        );
        assert!(!p.verdict("file-read-data", "/Users/me/.ssh/id").allowed);
        assert!(!p.verdict("file-read-data", "/etc/x").allowed);
        assert!(!p.verdict("file-read-data", "/opt/secret").allowed);
        assert!(p.verdict("file-read-data", "/etc/x2").allowed);
        assert!(!p.verdict("file-write-data", "/Users/me/a").allowed);
        assert!(p.verdict("file-write-data", "/Users/me/ws/a").allowed);
    }

    #[test]
    fn a_misspelt_operation_an_unbound_parameter_or_a_broken_list_fails_the_compile() {
        let none = BTreeMap::new();
        let e = compile("(version 1)(allow default)(deny file-wirte-data)", &none).unwrap_err();
        assert!(e.contains("unbound variable: file-wirte-data"), "{e}");
        let e = compile("(version 1)(deny file-write-data (subpath (param \"P9\")))", &none).unwrap_err();
        assert!(e.contains("unbound variable: P9"), "{e}");
        assert!(compile("(version 1)(allow default", &none).is_err());
        assert!(compile("(version 1)(deny file-write-data (subpath \"/a/\"))", &none).is_err());
        assert!(compile("(allow default)", &none).is_err(), "no version");
    }

    #[test]
    fn only_a_profile_with_a_deny_rule_denies_anything() {
        assert!(!profile("(version 1)(allow default)").denies_anything());
        assert!(profile("(version 1)(allow default)(deny file-write-data (literal \"/x\"))").denies_anything());
    }
}
