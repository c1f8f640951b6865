//! A static check of one Seatbelt profile and its `-D` parameters, as
//! `sandbox-exec -p TEXT -D K=V …` would receive them: the text reads as
//! SBPL, names only words in `sbpl_vocabulary`, uses exactly the parameters
//! it is given, and stays within the limits below. Test-only: nothing here
//! ships; it stands in for the compiler a Mac would run.

use std::collections::BTreeSet;

use crate::sbpl_vocabulary::{self as vocab, known};

/// The longest string, regex or `-D` value, in bytes. macOS's PATH_MAX is
/// 1024 bytes with the terminating NUL (XNU bsd/sys/syslimits.h), so no path
/// the kernel resolves is longer than 1023; reports of Seatbelt put its own
/// cap on a string "near 1 KiB". The stricter of the two.
pub const MAX_STRING_BYTES: usize = 1023;

/// The most bytes `sandbox-exec`, `-p`, the profile and its `-D` pairs may
/// take of the exec argument area. macOS's ARG_MAX is 1 MiB for argv and the
/// environment together (syslimits.h); the command itself (up to 64 KiB, see
/// tests/parser_limits.rs) and the environment need the rest. A quarter of
/// it: 256 KiB, which is the ARG_MAX the same header gives Apple's other
/// systems.
pub const MAX_ARGV_BYTES: usize = 256 * 1024;

/// A parsed expression, with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    List(Vec<Expr>, usize),
    Symbol(String, usize),
    Str(String, usize),
    Regex(String, usize),
}

impl Expr {
    fn line(&self) -> usize {
        match self {
            Expr::List(_, l) | Expr::Symbol(_, l) | Expr::Str(_, l) | Expr::Regex(_, l) => *l,
        }
    }
}

/// What a profile that passed the check used.
#[derive(Debug, Default)]
pub struct Seen {
    pub operations: BTreeSet<String>,
    pub filters: BTreeSet<String>,
    pub params: BTreeSet<String>,
    /// Parameters used as a `subpath`, whose values libsandbox checks.
    pub subpaths: BTreeSet<String>,
    /// Parameters used as any path.
    pub paths: BTreeSet<String>,
}

/// Read SBPL text into expressions: balanced lists, `;` comments to the end
/// of a line, `"…"` strings with TinyScheme's escapes (`\\ \" \n \t \r
/// \xHH`), Apple's `#"…"` raw strings, `#t`/`#f`, symbols. Anything else is
/// refused rather than guessed at.
pub fn parse(text: &str) -> Result<Vec<Expr>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut line = 1;
    // Open lists: (items, line it opened on).
    let mut stack: Vec<(Vec<Expr>, usize)> = vec![(Vec::new(), 0)];
    while at < chars.len() {
        let c = chars[at];
        match c {
            '\n' => {
                line += 1;
                at += 1;
            }
            c if c.is_whitespace() => at += 1,
            ';' => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
            }
            '(' => {
                stack.push((Vec::new(), line));
                at += 1;
            }
            ')' => {
                if stack.len() == 1 {
                    return Err(format!("line {line}: `)` closes nothing"));
                }
                let (items, opened) = stack.pop().unwrap();
                stack.last_mut().unwrap().0.push(Expr::List(items, opened));
                at += 1;
            }
            '"' => {
                let start = line;
                let (s, next) = string_literal(&chars, at + 1, &mut line)?;
                stack.last_mut().unwrap().0.push(Expr::Str(s, start));
                at = next;
            }
            '#' => {
                let start = line;
                match chars.get(at + 1) {
                    Some('"') => {
                        let mut end = at + 2;
                        while end < chars.len() && chars[end] != '"' {
                            if chars[end] == '\n' {
                                line += 1;
                            }
                            end += 1;
                        }
                        if end == chars.len() {
                            return Err(format!("line {start}: unterminated #\"…\" regex"));
                        }
                        stack.last_mut().unwrap().0.push(Expr::Regex(chars[at + 2..end].iter().collect(), start));
                        at = end + 1;
                    }
                    Some('t') | Some('f') if chars.get(at + 2).is_none_or(|c| delimits(*c)) => {
                        stack.last_mut().unwrap().0.push(Expr::Symbol(format!("#{}", chars[at + 1]), start));
                        at += 2;
                    }
                    _ => return Err(format!("line {line}: unsupported `#` syntax")),
                }
            }
            _ => {
                let from = at;
                while at < chars.len() && !delimits(chars[at]) {
                    at += 1;
                }
                let word: String = chars[from..at].iter().collect();
                if word.contains('\'') || word.contains('`') {
                    return Err(format!("line {line}: quoting is not SBPL a generator of ours writes: {word}"));
                }
                stack.last_mut().unwrap().0.push(Expr::Symbol(word, line));
            }
        }
    }
    if stack.len() > 1 {
        let (_, opened) = stack.last().unwrap();
        return Err(format!("line {opened}: `(` never closed"));
    }
    Ok(stack.pop().unwrap().0)
}

fn delimits(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '"' | ';')
}

/// A `"…"` literal from just after its opening quote: its value and the
/// index after its closing quote.
fn string_literal(chars: &[char], mut at: usize, line: &mut usize) -> Result<(String, usize), String> {
    let start = *line;
    let mut s = String::new();
    while at < chars.len() {
        match chars[at] {
            '"' => return Ok((s, at + 1)),
            '\\' => {
                let e = chars.get(at + 1).ok_or(format!("line {start}: unterminated string"))?;
                match e {
                    '\\' => s.push('\\'),
                    '"' => s.push('"'),
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'x' => {
                        let hex: String = chars.get(at + 2..at + 4).map(|h| h.iter().collect()).unwrap_or_default();
                        let b = u8::from_str_radix(&hex, 16).map_err(|_| format!("line {start}: \\x needs two hex digits"))?;
                        s.push(b as char);
                        at += 2;
                    }
                    other => return Err(format!("line {start}: unknown escape \\{other} in a string")),
                }
                at += 2;
            }
            c => {
                if c == '\n' {
                    *line += 1;
                }
                s.push(c);
                at += 1;
            }
        }
    }
    Err(format!("line {start}: unterminated string"))
}

/// Check one profile as sandbox-exec would get it. Every problem is listed.
pub fn check(text: &str, params: &[(String, String)]) -> Result<Seen, Vec<String>> {
    let mut wrong = Vec::new();
    let mut seen = Seen::default();
    match parse(text) {
        Ok(forms) => check_forms(&forms, &mut seen, &mut wrong),
        Err(e) => wrong.push(format!("does not parse: {e}")),
    }
    check_params(text, params, &seen, &mut wrong);
    if wrong.is_empty() {
        Ok(seen)
    } else {
        Err(wrong)
    }
}

fn check_forms(forms: &[Expr], seen: &mut Seen, wrong: &mut Vec<String>) {
    match forms.first() {
        Some(Expr::List(items, _)) if matches!(items.as_slice(), [Expr::Symbol(v, _), Expr::Symbol(n, _)] if v == "version" && n == "1") => {}
        _ => wrong.push("the profile does not open with (version 1)".into()),
    }
    for form in forms.iter().skip(1) {
        let Expr::List(items, line) = form else {
            wrong.push(format!("line {}: a bare value at the top level", form.line()));
            continue;
        };
        match items.first() {
            Some(Expr::Symbol(action, _)) if action == "allow" || action == "deny" => check_rule(&items[1..], *line, seen, wrong),
            Some(Expr::Symbol(other, _)) if known(vocab::FORMS, other) => wrong.push(format!("line {line}: ({other} …) again")),
            Some(Expr::Symbol(other, _)) => wrong.push(format!("line {line}: unknown form ({other} …)")),
            _ => wrong.push(format!("line {line}: a form that does not start with its name")),
        }
    }
}

/// `(allow|deny OPERATION… [FILTER…] [(with MODIFIER)…])`.
fn check_rule(rest: &[Expr], line: usize, seen: &mut Seen, wrong: &mut Vec<String>) {
    let mut operations = 0;
    let mut filters = 0;
    for item in rest {
        match item {
            Expr::Symbol(op, _) if filters > 0 => wrong.push(format!("line {line}: operation {op} after a filter")),
            Expr::Symbol(op, _) if known(vocab::OPERATIONS, op) => {
                seen.operations.insert(op.clone());
                operations += 1;
                // A path filter only where the operation takes paths; a
                // filter on something else only where it names the operation.
                for e in rest {
                    let Expr::List(inner, _) = e else { continue };
                    let Some(Expr::Symbol(f, _)) = inner.first() else { continue };
                    if f == "with" {
                        continue;
                    }
                    match vocab::other_filter(f) {
                        Some(other) if !other.operations.contains(&op.as_str()) => wrong.push(format!("line {line}: ({f} …) does not go with {op}")),
                        Some(_) => {}
                        None if !vocab::takes_path(op) => wrong.push(format!("line {line}: {op} takes no path filter")),
                        None => {}
                    }
                }
            }
            Expr::Symbol(op, _) => wrong.push(format!("line {line}: unknown operation {op}")),
            Expr::List(inner, _) if matches!(inner.first(), Some(Expr::Symbol(s, _)) if s == "with") => check_modifier(&inner[1..], line, wrong),
            Expr::List(..) => {
                filters += 1;
                check_filter(item, line, seen, wrong);
            }
            other => wrong.push(format!("line {line}: a literal where an operation or filter goes: {other:?}")),
        }
    }
    if operations == 0 {
        wrong.push(format!("line {line}: a rule with no operation"));
    }
    let default = rest.iter().any(|e| matches!(e, Expr::Symbol(s, _) if s == "default"));
    if default && (operations > 1 || filters > 0) {
        wrong.push(format!("line {line}: `default` stands alone, with no other operation or filter"));
    }
}

fn check_modifier(args: &[Expr], line: usize, wrong: &mut Vec<String>) {
    match args {
        [Expr::Symbol(m, _)] if known(vocab::MODIFIERS, m) => {}
        [Expr::Symbol(m, _)] => wrong.push(format!("line {line}: unknown modifier (with {m})")),
        _ => wrong.push(format!("line {line}: (with …) takes one modifier")),
    }
}

fn check_filter(filter: &Expr, line: usize, seen: &mut Seen, wrong: &mut Vec<String>) {
    let Expr::List(items, _) = filter else {
        wrong.push(format!("line {line}: a filter must be a list"));
        return;
    };
    let (name, args) = match items.split_first() {
        Some((Expr::Symbol(n, _), args)) => (n.as_str(), args),
        _ => {
            wrong.push(format!("line {line}: a filter that does not start with its name"));
            return;
        }
    };
    if known(vocab::PATH_FILTERS, name) {
        match args {
            [Expr::Str(s, _)] => {
                limit(s, line, wrong);
                if name == "subpath" {
                    if let Some(why) = bad_subpath(s) {
                        wrong.push(format!("line {line}: (subpath {s:?}): {why}"));
                    }
                }
            }
            [value @ Expr::List(..)] => {
                if let Some(param) = check_value(value, line, seen, wrong) {
                    if name == "subpath" {
                        seen.subpaths.insert(param.clone());
                    }
                    seen.paths.insert(param);
                }
            }
            _ => wrong.push(format!("line {line}: ({name} …) takes one path")),
        }
    } else if known(vocab::REGEX_FILTERS, name) {
        match args {
            [Expr::Regex(r, _) | Expr::Str(r, _)] => limit(r, line, wrong),
            _ => wrong.push(format!("line {line}: ({name} …) takes one regular expression")),
        }
    } else if let Some(other) = vocab::other_filter(name) {
        check_other(other, args, line, wrong);
    } else if known(vocab::COMBINATORS, name) {
        let arity_ok = if name == "require-not" { args.len() == 1 } else { !args.is_empty() };
        if !arity_ok {
            wrong.push(format!("line {line}: ({name} …) with {} filters", args.len()));
        }
        for a in args {
            check_filter(a, line, seen, wrong);
        }
    } else {
        wrong.push(format!("line {line}: unknown filter ({name} …)"));
        return;
    }
    seen.filters.insert(name.to_string());
}

/// `(target KIND)`, `(remote ip "HOST:PORT")`, `(remote unix-socket)`: the
/// kind is one the sources spell; an address names `localhost` or `*` and a
/// port number or `*` (what Seatbelt takes: no other host names).
fn check_other(other: &vocab::OtherFilter, args: &[Expr], line: usize, wrong: &mut Vec<String>) {
    let name = other.name;
    let (kind, rest) = match args.split_first() {
        Some((Expr::Symbol(k, _), rest)) if other.kinds.contains(&k.as_str()) => (k.as_str(), rest),
        _ => {
            wrong.push(format!("line {line}: ({name} …) takes one of {:?}", other.kinds));
            return;
        }
    };
    match (name, kind, rest) {
        ("remote", "ip", [Expr::Str(addr, _)]) => {
            let ok = addr.split_once(':').is_some_and(|(host, port)| matches!(host, "localhost" | "*") && (port == "*" || port.parse::<u16>().is_ok()));
            if !ok {
                wrong.push(format!("line {line}: (remote ip {addr:?}): an address is localhost or * with a port or *"));
            }
        }
        ("remote", "ip", _) => wrong.push(format!("line {line}: (remote ip …) takes one \"HOST:PORT\"")),
        (_, _, []) => {}
        _ => wrong.push(format!("line {line}: ({name} {kind}) takes nothing more")),
    }
}

/// What libsandbox refuses in a subpath (sbpl1.scm, `(define subpath …)`):
/// an empty string, or one ending in a slash other than `/` itself.
fn bad_subpath(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("a subpath cannot be empty")
    } else if s.len() > 1 && s.ends_with('/') {
        Some("subpaths must not end with a slash")
    } else {
        None
    }
}

/// `(param "NAME")`, the only value function our profiles use: its name.
fn check_value(value: &Expr, line: usize, seen: &mut Seen, wrong: &mut Vec<String>) -> Option<String> {
    match value {
        Expr::List(items, _) => match items.as_slice() {
            [Expr::Symbol(f, _), Expr::Str(name, _)] if known(vocab::VALUES, f) => {
                limit(name, line, wrong);
                seen.params.insert(name.clone());
                return Some(name.clone());
            }
            [Expr::Symbol(f, _), ..] if known(vocab::VALUES, f) => wrong.push(format!("line {line}: ({f} …) takes one string")),
            [Expr::Symbol(f, _), ..] => wrong.push(format!("line {line}: unknown value function ({f} …)")),
            _ => wrong.push(format!("line {line}: a value that is not (param \"NAME\")")),
        },
        _ => wrong.push(format!("line {line}: a value that is not (param \"NAME\")")),
    }
    None
}

fn limit(s: &str, line: usize, wrong: &mut Vec<String>) {
    if s.len() > MAX_STRING_BYTES {
        wrong.push(format!("line {line}: a {}-byte string (the cap is {MAX_STRING_BYTES})", s.len()));
    }
}

/// Every referenced parameter is passed, every passed one is used, and the
/// argv they make fits.
fn check_params(text: &str, params: &[(String, String)], seen: &Seen, wrong: &mut Vec<String>) {
    let mut names = BTreeSet::new();
    for (k, v) in params {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            wrong.push(format!("-D {k:?}: a name must be non-empty, without `=` or NUL"));
        }
        if !names.insert(k.clone()) {
            wrong.push(format!("-D {k} passed twice"));
        }
        if v.len() > MAX_STRING_BYTES {
            wrong.push(format!("-D {k}: a {}-byte value (the cap is {MAX_STRING_BYTES})", v.len()));
        }
        if v.contains('\0') {
            wrong.push(format!("-D {k}: an argument cannot carry a NUL byte"));
        }
        // Seatbelt matches the absolute path the kernel resolved: a relative
        // one never matches, and a denial on it would shut nothing.
        if seen.paths.contains(k) && !v.starts_with('/') {
            wrong.push(format!("-D {k}={v:?} is used as a path but is not absolute"));
        }
        if seen.subpaths.contains(k) {
            if let Some(why) = bad_subpath(v) {
                wrong.push(format!("-D {k}={v:?} is used as a subpath: {why}"));
            }
        }
        if !seen.params.contains(k) {
            wrong.push(format!("-D {k} is passed but never used"));
        }
    }
    for used in &seen.params {
        if !names.contains(used) {
            wrong.push(format!("(param \"{used}\") is used but not passed with -D"));
        }
    }
    if text.contains('\0') {
        wrong.push("the profile text carries a NUL byte".into());
    }
    let bytes = argv_bytes(text, params);
    if bytes > MAX_ARGV_BYTES {
        wrong.push(format!("sandbox-exec -p and its -D pairs take {bytes} bytes of argv (the budget is {MAX_ARGV_BYTES})"));
    }
}

/// What `/usr/bin/sandbox-exec -p TEXT -D K=V …` costs of the exec argument
/// area: each string with its NUL, and a pointer to it.
pub fn argv_bytes(text: &str, params: &[(String, String)]) -> usize {
    let each = |s: usize| s + 1 + std::mem::size_of::<usize>();
    let mut n = each("/usr/bin/sandbox-exec".len()) + each(2) + each(text.len());
    for (k, v) in params {
        n += each(2) + each(k.len() + 1 + v.len());
    }
    n
}
