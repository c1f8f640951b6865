//! Command grants (whitelist-auto-approval.md): "this executable may write
//! these roots", bound to the program PATH and realpath resolve to, not to the
//! command string, and granted for that one call only.
//!
//! The criterion: when a grant matches, every place the whole command line can
//! write is inside what the matched program itself may write. So `strict`
//! accepts one simple pipeline — the program, then only neutral filters
//! (`tail`/`head`/`wc` with numeric or fixed flags), redirections that open
//! no path — optionally after one leading `cd <dir> &&`.

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use crate::policy::baseline;
use crate::policy::capability::{Access, Capability};
use crate::host::{Host, PathKind};
use crate::paths;
use crate::policy::rules::{CommandGrant, Rule, Shape};

/// A command grant that matched this call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantMatch {
    pub id: String,
    pub name: String,
    /// The roots as one-shot grants of this call (decision and profile).
    pub rules: Vec<Rule>,
}

/// Longer command lines are never matched.
pub const MAX_MATCH_BYTES: usize = 8 * 1024;

/// Marks the one "matched but not applied" answer of [`find`].
pub const CANNOT_CARRY: &str = "not carried";


pub struct MatchInput<'a> {
    pub command: &'a str,
    pub cwd: &'a str,
    pub workspace: &'a str,
    pub home: &'a str,
    pub platform: crate::policy::Platform,
}

/// Every grant that matches, their roots together (two grants for git, one
/// per repository, each apply where they say), or `Err` with why none did
/// (for the ledger).
pub fn find(grants: &[CommandGrant], input: &MatchInput, host: &dyn Host) -> Result<GrantMatch, String> {
    if grants.is_empty() {
        return Err("no command grants".into());
    }
    if input.command.len() > MAX_MATCH_BYTES {
        return Err("the command line is over 8 KiB".into());
    }
    let mut why = String::from("no command grant names this program");
    let mut not_carried: Option<String> = None;
    let mut found: Option<GrantMatch> = None;
    for g in grants {
        if let Err(e) = matches(g, input, host) {
            why = format!("command grant {}: {e}", label(g));
            continue;
        }
        match carried(g, input, host) {
            Ok(rules) => match &mut found {
                None => found = Some(GrantMatch { id: g.id.clone(), name: label(g), rules }),
                Some(m) => {
                    m.name = format!("{}; {}", m.name, label(g));
                    for r in rules {
                        if !m.rules.iter().any(|q| q.path == r.path && q.access == r.access) {
                            m.rules.push(r);
                        }
                    }
                }
            },
            Err(e) => {
                not_carried.get_or_insert(e);
            }
        }
    }
    match (found, not_carried) {
        (Some(m), _) => Ok(m),
        (None, Some(e)) => Err(e),
        (None, None) => Err(why),
    }
}

/// A matched grant's roots as this call's one-shot rules, and the program.
fn carried(g: &CommandGrant, input: &MatchInput, host: &dyn Host) -> Result<Vec<Rule>, String> {
    let access = g.access.unwrap_or_else(|| Access::of(&[Capability::Write, Capability::Create]));
    let mut rules = Vec::new();
    for root in &g.roots {
        let path = expand(root, input.home);
        // Landlock fences what exists; a root that does not is not carried.
        // A file (git's `.git/config`) is carried as itself.
        let kind = host.kind(&path);
        if kind == PathKind::Missing {
            return Err(format!("{CANNOT_CARRY}: command grant {}: root {path} does not exist, so the fence cannot carry it", label(g)));
        }
        let recursive = kind == PathKind::Dir;
        rules.push(Rule { id: format!("cmd:{}", label(g)), path, recursive, access, hits: 0, created_at: String::new() });
    }
    // The matched program itself may run: it is the trusted part.
    if let Some(program) = configured(g, host) {
        rules.push(Rule {
            id: format!("cmd:{}", label(g)),
            path: program,
            recursive: false,
            access: Access::of(&[Capability::Read, Capability::Execute]),
            hits: 0,
            created_at: String::new(),
        });
    }
    Ok(rules)
}

fn label(g: &CommandGrant) -> String {
    if g.name.is_empty() {
        g.command.clone()
    } else {
        g.name.clone()
    }
}

fn expand(root: &str, home: &str) -> String {
    if let Some(rest) = root.strip_prefix("$HOME") {
        paths::normalize(&format!("{home}/{rest}"))
    } else {
        paths::absolute("/", root, home)
    }
}

/// The configured program, as PATH and realpath resolve it now.
fn configured(g: &CommandGrant, host: &dyn Host) -> Option<String> {
    let found = if g.command.starts_with('/') { Some(g.command.clone()) } else { host.which(&g.command) };
    found.map(|p| host.canonical(&paths::normalize(&p)))
}

/// A program spelled `word` resolves to an executable outside the workspace
/// and temp dirs, and to `want` when given.
fn resolves(word: &str, g_command: &str, input: &MatchInput, host: &dyn Host) -> Result<String, String> {
    // `./tool` and `/tmp/x/tool`: the model chose the path; only the bare
    // name or the exact configured absolute path may match.
    if word.contains('/') && word != g_command {
        return Err(format!("`{word}` is a path the command chose"));
    }
    let found = if word.starts_with('/') { Some(word.to_string()) } else { host.which(word) };
    let Some(found) = found else { return Err(format!("`{word}` is not on PATH")) };
    let real = host.canonical(&paths::normalize(&found));
    let shadowing_areas = std::iter::once(input.workspace.to_string())
        .chain(baseline::temp_dirs(input.platform).iter().map(|s| s.to_string()));
    for area in shadowing_areas {
        let area_real = host.canonical(&area);
        if paths::within(&real, &area_real) || paths::within(&found, &area) {
            return Err(format!("`{word}` resolves inside {area}, where a command could plant it"));
        }
    }
    Ok(real)
}

fn matches(g: &CommandGrant, input: &MatchInput, host: &dyn Host) -> Result<(), String> {
    let want = configured(g, host).ok_or_else(|| format!("`{}` is not on PATH", g.command))?;
    let name = paths::file_name(&g.command).to_string();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&crate::shell::grammar::bash()).expect("grammar");
    let shadow: String = input.command.bytes().map(|b| if b < 0x80 { b as char } else { 'x' }).collect();
    let tree = parser.parse(&shadow, None).ok_or("the line cannot be parsed")?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("the line cannot be parsed".into());
    }
    let src = input.command.as_bytes();
    match g.shape {
        Shape::Any => {
            // Narrow roots buy a loose shape: the program must appear as a word.
            let mut found = false;
            visit_commands(root, src, &mut |words| {
                if let Some(first) = words.first() {
                    if (first == &name || first == &g.command) && resolves(first, &g.command, input, host).ok().as_deref() == Some(&want) {
                        found = true;
                    }
                }
            });
            if found {
                Ok(())
            } else {
                Err(format!("`{name}` does not appear as a program"))
            }
        }
        Shape::Strict => strict(root, src, g, &name, &want, input, host),
    }
}

fn strict(root: Node, src: &[u8], g: &CommandGrant, name: &str, want: &str, input: &MatchInput, host: &dyn Host) -> Result<(), String> {
    let stmts: Vec<Node> = named(root).into_iter().filter(|n| n.kind() != "comment").collect();
    if stmts.len() != 1 || children(root).iter().any(|n| n.kind() == "&") {
        return Err("more than one command, or one sent to the background (`;`, `&`, a newline)".into());
    }
    let mut shape = Flat { cd_prefixes: 0, segments: Vec::new(), redirects: Vec::new() };
    flatten(stmts[0], src, &mut shape)?;
    if shape.cd_prefixes > 1 || (shape.cd_prefixes == 1 && !g.allow_cd_prefix) {
        return Err("only one leading `cd <dir> &&` may come before the program".into());
    }
    for r in &shape.redirects {
        neutral_redirect(*r, src)?;
    }
    for (i, cmd) in shape.segments.iter().enumerate() {
        for r in named(*cmd).into_iter().filter(|n| n.kind().ends_with("redirect")) {
            neutral_redirect(r, src)?;
        }
        let words = plain_words(*cmd, src)?;
        let Some(first) = words.first() else { return Err("an empty command".into()) };
        if i == 0 {
            if first != name && first != &g.command {
                return Err(format!("the first program is `{first}`, not `{name}`"));
            }
            let real = resolves(first, &g.command, input, host)?;
            if real != want {
                return Err(format!("`{first}` resolves to {real}, not to the configured {want}"));
            }
        } else {
            neutral_filter(&words)?;
            resolves(first, first, input, host)?;
        }
    }
    Ok(())
}

/// One simple pipeline, whatever way the grammar nests it.
struct Flat<'t> {
    cd_prefixes: usize,
    segments: Vec<Node<'t>>,
    redirects: Vec<Node<'t>>,
}

fn flatten<'t>(n: Node<'t>, src: &[u8], out: &mut Flat<'t>) -> Result<(), String> {
    match n.kind() {
        "command" => {
            out.segments.push(n);
            Ok(())
        }
        "pipeline" => {
            if children(n).iter().any(|c| !c.is_named() && c.kind() != "|") {
                return Err("only plain `|` pipes".into());
            }
            for c in named(n) {
                flatten(c, src, out)?;
            }
            Ok(())
        }
        "redirected_statement" => {
            let parts = named(n);
            let Some(body) = parts.first() else { return Err("an empty statement".into()) };
            out.redirects.extend(parts[1..].iter().copied());
            flatten(*body, src, out)
        }
        "list" => {
            // Only `cd <dir> && …`, and only before anything else.
            let parts = children(n);
            let ops: Vec<&str> = parts.iter().filter(|c| !c.is_named()).map(|c| c.kind()).collect();
            let cmds: Vec<Node> = parts.iter().filter(|c| c.is_named()).copied().collect();
            let is_cd = cmds.first().is_some_and(|c| c.kind() == "command" && plain_words(*c, src).is_ok_and(|w| w.len() == 2 && w[0] == "cd"));
            if ops != ["&&"] || cmds.len() != 2 || !is_cd || !out.segments.is_empty() {
                return Err("`&&`, `||` or `;` beyond one leading `cd <dir> &&`".into());
            }
            out.cd_prefixes += 1;
            flatten(cmds[1], src, out)
        }
        other => Err(format!("a {other} is not a simple command")),
    }
}

/// Words of a simple command with quotes removed; substitutions refused.
fn plain_words(cmd: Node, src: &[u8]) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    for part in named(cmd) {
        if part.kind().ends_with("redirect") || part.kind() == "comment" {
            continue;
        }
        if part.kind() == "variable_assignment" {
            return Err("environment assignments before the program".into());
        }
        if has_kind(part, &["command_substitution", "process_substitution", "heredoc_redirect", "heredoc_body"]) {
            return Err("command or process substitution".into());
        }
        let raw = part.utf8_text(src).unwrap_or("");
        let node = if part.kind() == "command_name" { part.named_child(0).unwrap_or(part) } else { part };
        words.push(unquote(node, raw));
    }
    Ok(words)
}

fn unquote(node: Node, raw: &str) -> String {
    match node.kind() {
        "raw_string" => raw.trim_matches('\'').to_string(),
        "string" => raw.trim_matches('"').to_string(),
        _ => raw.to_string(),
    }
}

fn neutral_redirect(r: Node, src: &[u8]) -> Result<(), String> {
    let t: String = r.utf8_text(src).unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
    const OK: &[&str] = &["2>&1", "1>&2", ">&2", ">&-", "2>&-", ">/dev/null", "1>/dev/null", "2>/dev/null", ">>/dev/null", "2>>/dev/null", "&>/dev/null"];
    if OK.contains(&t.as_str()) {
        Ok(())
    } else {
        Err(format!("the redirection `{t}` opens a file"))
    }
}

/// `tail`/`head`/`wc` with numeric or fixed flags only, no operands.
fn neutral_filter(words: &[String]) -> Result<(), String> {
    let prog = words[0].as_str();
    if !matches!(prog, "tail" | "head" | "wc") {
        return Err(format!("`{prog}` is not one of the neutral filters (tail, head, wc)"));
    }
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        let ok = match prog {
            "tail" | "head" => {
                if (w == "-n" || w == "-c") && words.get(i + 1).is_some_and(|v| numeric(v)) {
                    i += 1;
                    true
                } else {
                    w.strip_prefix('-').is_some_and(|n| numeric(n) || n.strip_prefix('n').is_some_and(numeric) || n.strip_prefix('c').is_some_and(numeric))
                        || w.strip_prefix("--lines=").is_some_and(numeric)
                        || w.strip_prefix("--bytes=").is_some_and(numeric)
                        || w == "-q"
                }
            }
            "wc" => matches!(w, "-l" | "-w" | "-c" | "-m" | "--lines" | "--words" | "--bytes" | "--chars"),
            _ => return Err(format!("`{prog}` is not one of the neutral filters (tail, head, wc)")),
        };
        if !ok {
            return Err(format!("`{prog} {w}` is not a neutral filter"));
        }
        i += 1;
    }
    Ok(())
}

fn named(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

fn children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn has_kind(n: Node, kinds: &[&str]) -> bool {
    if kinds.contains(&n.kind()) {
        return true;
    }
    named(n).into_iter().any(|c| has_kind(c, kinds))
}

fn visit_commands(n: Node, src: &[u8], f: &mut dyn FnMut(&[String])) {
    if n.kind() == "command" {
        if let Ok(words) = plain_words(n, src) {
            f(&words);
        }
    }
    for c in named(n) {
        visit_commands(c, src, f);
    }
}

/// The system-prompt section telling the model which spellings pass.
pub fn prompt_section(grants: &[CommandGrant]) -> String {
    if grants.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "Some programs may write their own state outside the workspace without an approval prompt, still inside the sandbox:\n",
    );
    for g in grants {
        let roots = g.roots.join(", ");
        match g.shape {
            Shape::Strict => s.push_str(&format!(
                "- `{}` (writes {roots}): run it as one simple command — optionally `cd <dir> && ` first, optionally `2>&1` or `>/dev/null`, optionally piped into `tail -N`, `head -n N` or `wc -l`. Anything else (`;`, `&&` after it, `$(…)`, redirecting into a file, `tee`, `sh`) falls back to an approval prompt.\n",
                g.command
            )),
            Shape::Any => s.push_str(&format!("- `{}` (writes {roots}): any command line that runs it.\n", g.command)),
        }
    }
    s.push_str("Call these programs by their bare name; `./name` or a path you chose never matches.\n");
    s
}
