//! Command text → the simple commands it would run, each with the working
//! directories it may run in and its redirections.
//!
//! tree-sitter-bash gives the structure; this module walks it, decoding words
//! (quotes, escapes, `~`), marking what only the running shell can know
//! (expansions, globs, substitutions), and tracking `cd`/`pushd`/`popd`
//! through lists so `cd sub && rm x` deletes `sub/x`.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use crate::host::{Host, PathKind};
use crate::paths;

/// Commands longer than this are refused before parsing.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Syntax nesting beyond this is refused rather than walked.
const MAX_NESTING: usize = 96;

/// One word of a command line after the shell's quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Fully known text.
    Literal(String),
    /// A pathname pattern; `dir` is its literal directory part (may be empty
    /// = the working directory), `escapes` when a `..` follows the pattern.
    Glob { text: String, dir: String, escapes: bool },
    /// Text only the running shell knows (`$X`, `$(…)`, `{a,b}`).
    Computed { text: String },
    /// A process substitution: a pipe, no file.
    Stream,
}

impl Arg {
    pub fn literal(&self) -> Option<&str> {
        match self {
            Arg::Literal(s) => Some(s),
            _ => None,
        }
    }
    /// The text as written (for messages and for matching option names).
    pub fn text(&self) -> &str {
        match self {
            Arg::Literal(s) | Arg::Glob { text: s, .. } | Arg::Computed { text: s } => s,
            Arg::Stream => "<(…)",
        }
    }
}

/// The directories a command may run in: several when a `cd` may or may
/// not have happened; `None` when only the running shell knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cwd(pub Option<Vec<String>>);

impl Cwd {
    pub fn known(dir: &str) -> Cwd {
        Cwd(Some(vec![dir.to_string()]))
    }
    fn union(&self, other: &Cwd) -> Cwd {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => {
                let mut all = a.clone();
                for d in b {
                    if !all.contains(d) {
                        all.push(d.clone());
                    }
                }
                // More than a handful of possibilities means we are guessing.
                if all.len() > 4 {
                    Cwd(None)
                } else {
                    Cwd(Some(all))
                }
            }
            _ => Cwd(None),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`
    Truncate,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&`, `<&`, `2>&1`: duplicates a descriptor.
    Duplicate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub op: RedirectOp,
    pub target: Arg,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub argv: Vec<Arg>,
    pub redirects: Vec<Redirect>,
    pub cwd: Cwd,
    /// `NAME=value` words before the program.
    pub assignments: Vec<(String, Arg)>,
}

/// What a command line would do, flattened in execution order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Command(SimpleCommand),
    /// A redirection on a compound statement (`{ …; } > f`, `done < f`).
    Redirect { redirect: Redirect, cwd: Cwd },
    /// A function definition: what a later word of this name runs is its
    /// body (walked again where it is called), not the program or builtin
    /// it shadows.
    Defines { name: String, cwd: Cwd },
    /// Shell code the line holds but does not show as a command: a
    /// prompt expansion (`${x@P}`), a redirection on a function definition.
    Hidden { reason: String, cwd: Cwd },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

/// Walked command lines by (text, cwd, home): agents repeat themselves (`git
/// status`, `cargo test`) and the plugin decides a call again after its card
/// is answered. A walk that asked the host something (a `cd` into a folder
/// that may not exist) is not kept: the answer may change.
const WALK_CACHE: usize = 256;

/// One walk, shared: a hit hands out the same items without copying them.
pub type Walked = Result<std::rc::Rc<Vec<Item>>, ParseError>;

#[derive(Default)]
struct WalkCache {
    /// Keyed by `walk_key`: one string, so a lookup builds one key.
    walks: std::collections::BTreeMap<String, Walked>,
    /// Insertion order, for evicting the oldest.
    order: std::collections::VecDeque<String>,
}

/// The three inputs of a walk in one string; the lengths up front keep
/// two different triples from spelling the same key.
fn walk_key(text: &str, cwd: &str, home: &str) -> String {
    let mut key = String::with_capacity(text.len() + cwd.len() + home.len() + 24);
    key.push_str(&format!("{}:{}:", cwd.len(), home.len()));
    key.push_str(cwd);
    key.push_str(home);
    key.push_str(text);
    key
}

thread_local! {
    static WALKS: RefCell<WalkCache> = RefCell::new(Default::default());
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut p = Parser::new();
        p.set_language(&super::grammar::bash()).expect("tree-sitter-bash matches the runtime");
        p
    });
}

/// Parse `text` as it would run in `cwd`.
pub fn parse(text: &str, cwd: &str, home: &str, host: &dyn Host) -> Walked {
    if text.len() > MAX_COMMAND_BYTES {
        return Err(ParseError(format!(
            "the command is {} bytes, over the {} KiB this layer reads",
            text.len(),
            MAX_COMMAND_BYTES / 1024
        )));
    }
    if text.contains('\0') {
        return Err(ParseError("the command contains a NUL byte".into()));
    }
    let key = walk_key(text, cwd, home);
    if let Some(hit) = WALKS.with(|w| w.borrow().walks.get(&key).cloned()) {
        return hit;
    }
    let asked = std::cell::Cell::new(false);
    let watched = Watched { inner: host, asked: &asked };
    let walked = walk(text, cwd, home, &watched).map(std::rc::Rc::new);
    if !asked.get() {
        WALKS.with(|w| {
            let mut w = w.borrow_mut();
            if w.order.len() >= WALK_CACHE {
                if let Some(old) = w.order.pop_front() {
                    w.walks.remove(&old);
                }
            }
            w.order.push_back(key.clone());
            w.walks.insert(key, walked.clone());
        });
    }
    walked
}

/// A host that notes whether it was asked anything.
struct Watched<'a> {
    inner: &'a dyn Host,
    asked: &'a std::cell::Cell<bool>,
}

impl Host for Watched<'_> {
    fn canonical(&self, path: &str) -> String {
        self.asked.set(true);
        self.inner.canonical(path)
    }
    fn canonical_root(&self, path: &str) -> String {
        self.asked.set(true);
        self.inner.canonical_root(path)
    }
    fn kind(&self, path: &str) -> PathKind {
        self.asked.set(true);
        self.inner.kind(path)
    }
    fn which(&self, program: &str) -> Option<String> {
        self.asked.set(true);
        self.inner.which(program)
    }
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}

fn walk(text: &str, cwd: &str, home: &str, host: &dyn Host) -> Result<Vec<Item>, ParseError> {
    // The grammar's scanner hands non-ASCII code points to C's isdigit(),
    // which is undefined (and crashes with glibc) past 255. Bash treats those
    // bytes as word characters; so does the grammar for 'x'. Parsing a copy
    // with every non-ASCII byte replaced keeps every byte offset, and node
    // text is read from the original.
    let shadow: String = text.bytes().map(|b| if b < 0x80 { b as char } else { 'x' }).collect();
    let tree = PARSER
        .with(|p| p.borrow_mut().parse(&shadow, None))
        .ok_or_else(|| ParseError("the shell cannot parse this line".into()))?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(ParseError("the shell cannot parse this line".into()));
    }
    let mut walker = Walker { src: text.as_bytes(), home, host, items: Vec::new(), functions: Vec::new() };
    let mut state = State { cwd: Cwd::known(cwd), stack: Some(Vec::new()), cdpath: false };
    walker.statements(root, &mut state, 0)?;
    Ok(walker.items)
}

#[derive(Debug, Clone)]
struct State {
    cwd: Cwd,
    /// The `pushd` stack; `None` once unknowable.
    stack: Option<Vec<Cwd>>,
    /// `CDPATH` was set earlier in the line: a `cd NAME` may land in any of
    /// its folders, which only the shell's search knows.
    cdpath: bool,
}

struct Walker<'a> {
    src: &'a [u8],
    home: &'a str,
    host: &'a dyn Host,
    items: Vec<Item>,
    /// The functions the line defines so far, by name: a call runs the
    /// body in the caller's shell (its `cd` moves the caller too).
    functions: Vec<(String, Node<'a>)>,
}

type Walk = Result<(), ParseError>;

impl<'a> Walker<'a> {
    fn text(&self, node: Node<'a>) -> &'a str {
        node.utf8_text(self.src).unwrap_or("")
    }

    fn deeper(depth: usize) -> Result<usize, ParseError> {
        if depth > MAX_NESTING {
            Err(ParseError("the command nests deeper than this layer reads".into()))
        } else {
            Ok(depth + 1)
        }
    }

    /// A sequence of statements sharing one shell (program, `{ }`, bodies).
    fn statements(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let depth = Self::deeper(depth)?;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            if !child.is_named() || child.kind() == "comment" {
                continue;
            }
            // `a & b`: a runs in the background, in a copy of the shell.
            let background = children.get(i + 1).is_some_and(|n| n.kind() == "&");
            if background {
                let mut copy = st.clone();
                self.statement(*child, &mut copy, depth)?;
            } else {
                self.statement(*child, st, depth)?;
            }
        }
        Ok(())
    }

    fn statement(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let depth = Self::deeper(depth)?;
        match node.kind() {
            "command" => self.command(node, Vec::new(), st, depth),
            "redirected_statement" => self.redirected(node, st, depth),
            "list" => self.list(node, st, depth),
            "pipeline" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    let mut copy = st.clone();
                    self.statement(child, &mut copy, depth)?;
                }
                Ok(())
            }
            "subshell" => {
                let mut copy = st.clone();
                self.statements(node, &mut copy, depth)
            }
            "compound_statement" | "do_group" | "else_clause" | "elif_clause" => {
                self.statements(node, st, depth)
            }
            "if_statement" | "while_statement" | "for_statement" | "c_style_for_statement"
            | "case_statement" | "case_item" => {
                // Bodies may or may not run: a `cd` inside leaves either directory.
                let before = st.clone();
                let mut inner = st.clone();
                self.control(node, &mut inner, depth)?;
                st.cwd = before.cwd.union(&inner.cwd);
                if inner.stack != before.stack {
                    st.stack = None;
                }
                Ok(())
            }
            "function_definition" => self.function_definition(node, st, depth),
            "negated_command" => self.statements(node, st, depth),
            "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" | "test_command" => {
                st.cdpath |= self.text(node).contains("CDPATH");
                self.builtin_statement(node, st, depth)
            }
            "comment" => Ok(()),
            // Any other statement-level node (arithmetic, words used as
            // statements): only its substitutions run.
            _ => self.substitutions_in(node, st, depth),
        }
    }

    /// `name() BODY [REDIRECTS]`: the body is judged where it is defined
    /// (it may run later, from anywhere) and again at each call in this
    /// line; a redirection on the definition applies at every call.
    fn function_definition(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_string()).unwrap_or_default();
        self.items.push(Item::Defines { name: name.clone(), cwd: st.cwd.clone() });
        let mut cursor = node.walk();
        if node.named_children(&mut cursor).any(|c| matches!(c.kind(), "file_redirect" | "heredoc_redirect" | "herestring_redirect")) {
            let reason = format!("a redirection on the definition of `{name}` applies each time it is called");
            self.items.push(Item::Hidden { reason, cwd: st.cwd.clone() });
        }
        if let Some(body) = node.child_by_field_name("body") {
            let mut copy = st.clone();
            self.statement(body, &mut copy, depth)?;
            self.functions.retain(|(n, _)| n != &name);
            self.functions.push((name, body));
        }
        Ok(())
    }

    /// Assignments and the builtins the grammar gives as statements of their
    /// own (`export`, `declare`, `local`, `readonly`, `typeset`, `unset`,
    /// `[[ … ]]`): a command with the builtin's name and its words, and the
    /// assignments it makes, so the effects read them as any command's.
    fn builtin_statement(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let mut argv = Vec::new();
        let mut assignments = Vec::new();
        match node.kind() {
            "variable_assignment" => assignments.push(self.assignment(node, st, depth)?),
            "variable_assignments" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'a>> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "variable_assignment" => assignments.push(self.assignment(child, st, depth)?),
                        _ => self.substitutions_in(child, st, depth)?,
                    }
                }
            }
            kind => {
                argv.push(Arg::Literal(if kind == "test_command" { "[[".to_string() } else { self.first_token(node) }));
                self.builtin_words(node, st, depth, &mut argv, &mut assignments)?;
            }
        }
        self.items.push(Item::Command(SimpleCommand { argv, redirects: Vec::new(), cwd: st.cwd.clone(), assignments }));
        Ok(())
    }

    /// The keyword a declaration or `unset` statement starts with.
    fn first_token(&self, node: Node<'a>) -> String {
        node.child(0).map(|c| self.text(c).to_string()).unwrap_or_default()
    }

    /// The words of a builtin statement, its expressions' operands
    /// included, and its assignments.
    fn builtin_words(&mut self, node: Node<'a>, st: &State, depth: usize, argv: &mut Vec<Arg>, assignments: &mut Vec<(String, Arg)>) -> Walk {
        let depth = Self::deeper(depth)?;
        let mut cursor = node.walk();
        let children: Vec<Node<'a>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => assignments.push(self.assignment(child, st, depth)?),
                "unary_expression" | "binary_expression" | "parenthesized_expression" | "negated_expression" | "ternary_expression" | "postfix_expression" => {
                    self.builtin_words(child, st, depth, argv, assignments)?
                }
                "test_operator" | "variable_name" => argv.push(Arg::Literal(self.text(child).to_string())),
                "comment" => {}
                _ => argv.extend(self.words(child, st, depth)?),
            }
        }
        Ok(())
    }

    /// `NAME=value` (its substitutions run).
    fn assignment(&mut self, node: Node<'a>, st: &State, depth: usize) -> Result<(String, Arg), ParseError> {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_string()).unwrap_or_default();
        let value = match node.child_by_field_name("value") {
            Some(v) if v.kind() == "array" => {
                self.substitutions_in(v, st, depth)?;
                Arg::Computed { text: self.text(v).to_string() }
            }
            Some(v) => self.word(v, st, depth)?,
            None => Arg::Literal(String::new()),
        };
        Ok((name, value))
    }

    /// Walk the parts of a control statement in order, in one shell.
    fn control(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "comment" => {}
                // Loop values, case subjects and patterns are words: only
                // their substitutions run.
                "word" | "string" | "raw_string" | "concatenation" | "simple_expansion" | "expansion"
                | "command_substitution" | "number" | "variable_name" | "extglob_pattern" => {
                    self.substitutions_in(child, st, depth)?
                }
                "case_item" => {
                    let mut copy = st.clone();
                    self.control(child, &mut copy, depth)?;
                    st.cwd = st.cwd.union(&copy.cwd);
                }
                _ => self.statement(child, st, depth)?,
            }
        }
        Ok(())
    }

    fn list(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let mut op = "";
        for child in children {
            if !child.is_named() {
                op = child.kind();
                continue;
            }
            if child.kind() == "comment" {
                continue;
            }
            if op == "||" {
                // The right side runs when the left failed — perhaps before
                // its `cd` took effect: it may run in either directory.
                let before = st.clone();
                let mut alt = st.clone();
                self.statement(child, &mut alt, depth)?;
                st.cwd = before.cwd.union(&alt.cwd);
            } else {
                self.statement(child, st, depth)?;
            }
        }
        Ok(())
    }

    fn redirected(&mut self, node: Node<'a>, st: &mut State, depth: usize) -> Walk {
        let mut redirects = Vec::new();
        let mut body = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, st, depth, &mut redirects)?
                }
                _ if body.is_none() => body = Some(child),
                _ => self.substitutions_in(child, st, depth)?,
            }
        }
        match body {
            Some(b) if b.kind() == "command" => self.command(b, redirects, st, depth),
            Some(b) => {
                let start = st.cwd.clone();
                self.statement(b, st, depth)?;
                for r in redirects {
                    self.items.push(Item::Redirect { redirect: r, cwd: start.clone() });
                }
                Ok(())
            }
            None => {
                for r in redirects {
                    self.items.push(Item::Redirect { redirect: r, cwd: st.cwd.clone() });
                }
                Ok(())
            }
        }
    }

    fn redirect(&mut self, node: Node<'a>, st: &State, depth: usize, out: &mut Vec<Redirect>) -> Walk {
        match node.kind() {
            "file_redirect" => {
                let mut op_text = "";
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !child.is_named() {
                        op_text = child.kind();
                    }
                }
                let Some(dest) = node.child_by_field_name("destination") else {
                    return Ok(());
                };
                let target = self.word(dest, st, depth)?;
                let op = match op_text {
                    "<" => RedirectOp::Read,
                    ">" | ">|" | "&>" => RedirectOp::Truncate,
                    ">>" | "&>>" => RedirectOp::Append,
                    "<>" => RedirectOp::ReadWrite,
                    ">&" | "<&" | ">&-" | "<&-" => {
                        // `>&file` (not a number or `-`) is `&>file`.
                        match target.literal() {
                            Some(t) if t.chars().all(|c| c.is_ascii_digit()) || t == "-" => {
                                RedirectOp::Duplicate
                            }
                            _ if op_text.starts_with('>') => RedirectOp::Truncate,
                            _ => RedirectOp::Read,
                        }
                    }
                    _ => RedirectOp::Truncate,
                };
                out.push(Redirect { op, target });
                Ok(())
            }
            "heredoc_redirect" => {
                // The body is data, but an unquoted body's `$(…)` runs; a
                // pipeline or redirect written after the delimiter runs too.
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "heredoc_body" => self.substitutions_in(child, st, depth)?,
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, st, depth, out)?
                        }
                        "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
                        _ => {
                            let mut copy = st.clone();
                            self.statement(child, &mut copy, depth)?
                        }
                    }
                }
                Ok(())
            }
            _ => self.substitutions_in(node, st, depth),
        }
    }

    fn command(&mut self, node: Node<'a>, mut redirects: Vec<Redirect>, st: &mut State, depth: usize) -> Walk {
        let mut argv = Vec::new();
        let mut assignments = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut next = 0;
        while next < children.len() {
            let child = children[next];
            next += 1;
            match child.kind() {
                "variable_assignment" => {
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| self.text(n).to_string())
                        .unwrap_or_default();
                    let value = match child.child_by_field_name("value") {
                        Some(v) => self.word(v, st, depth)?,
                        None => Arg::Literal(String::new()),
                    };
                    assignments.push((name, value));
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, st, depth, &mut redirects)?
                }
                "command_name" => {
                    let inner = child.named_child(0).unwrap_or(child);
                    argv.push(self.word(inner, st, depth)?);
                }
                "subshell" => {
                    let mut copy = st.clone();
                    self.statements(child, &mut copy, depth)?;
                }
                "comment" => {}
                _ => {
                    // One shell word may come as several touching nodes
                    // (`{\,,x}`): they are joined again before expansion.
                    let first = next - 1;
                    while next < children.len() && !NOT_WORDS.contains(&children[next].kind()) && self.touching(children[next - 1], children[next]) {
                        next += 1;
                    }
                    argv.extend(self.words_of(&children[first..next], st, depth)?);
                }
            }
        }
        let cwd_before = st.cwd.clone();
        let called = argv.first().and_then(Arg::literal).and_then(|n| self.functions.iter().rev().find(|(f, _)| f == n)).map(|(_, body)| *body);
        if let Some(body) = called {
            // A call runs the body in this shell, where the caller is now.
            for redirect in redirects {
                self.items.push(Item::Redirect { redirect, cwd: cwd_before.clone() });
            }
            if !assignments.is_empty() {
                self.items.push(Item::Command(SimpleCommand { argv: Vec::new(), redirects: Vec::new(), cwd: cwd_before, assignments }));
            }
            let depth = Self::deeper(depth)?;
            return self.statement(body, st, depth);
        }
        let cdpath = st.cdpath || assignments.iter().any(|(name, _)| name == "CDPATH");
        self.track_directory(&argv, st, cdpath);
        self.items.push(Item::Command(SimpleCommand { argv, redirects, cwd: cwd_before, assignments }));
        Ok(())
    }

    /// `cd`, `pushd`, `popd` change where the following commands run.
    fn track_directory(&self, argv: &[Arg], st: &mut State, cdpath: bool) {
        // `builtin cd DIR` and `command cd DIR` are cd too.
        let mut argv = argv;
        while matches!(argv.first().and_then(Arg::literal), Some("builtin" | "command")) && argv.get(1).and_then(Arg::literal).is_some_and(|n| matches!(n, "cd" | "pushd" | "popd" | "builtin" | "command")) {
            argv = &argv[1..];
        }
        let Some(name) = argv.first().and_then(Arg::literal) else { return };
        let operands: Vec<&Arg> = argv[1..]
            .iter()
            .filter(|a| !matches!(a.literal(), Some(s) if s.starts_with('-') && s.len() > 1))
            .collect();
        // The shell searches CDPATH for a name whose first part is neither
        // `/`, `.` nor `..` (`.ssh` is searched).
        let first_part = |t: &str| t.split('/').next().unwrap_or("").to_string();
        let searched = |a: Option<&&Arg>| cdpath && a.and_then(|a| a.literal()).is_some_and(|t| !t.is_empty() && t != "-" && !t.starts_with('/') && !matches!(first_part(t).as_str(), "." | ".."));
        if matches!(name, "cd" | "pushd") && searched(operands.first()) {
            if let (Some(stack), "pushd") = (st.stack.as_mut(), name) {
                stack.push(st.cwd.clone());
            }
            st.cwd = Cwd(None);
            return;
        }
        match name {
            "cd" => {
                let target = match operands.first() {
                    None => Some(self.home.to_string()),
                    Some(a) => a.literal().filter(|s| *s != "-").map(str::to_string),
                };
                st.cwd = self.change_to(&st.cwd, target.as_deref());
            }
            // `pushd +N`, `popd -N` rotate or drop stack entries: where the
            // shell then is, only its stack knows.
            "pushd" | "popd" if operands.first().and_then(|a| a.literal()).is_some_and(|t| t.len() > 1 && t.starts_with(['+', '-']) && t[1..].bytes().all(|b| b.is_ascii_digit())) => {
                st.cwd = Cwd(None);
                st.stack = None;
            }
            "pushd" => {
                let target = operands.first().and_then(|a| a.literal()).map(str::to_string);
                if let Some(stack) = st.stack.as_mut() {
                    stack.push(st.cwd.clone());
                }
                st.cwd = self.change_to(&st.cwd, target.as_deref());
            }
            "popd" => {
                st.cwd = match st.stack.as_mut().and_then(|s| s.pop()) {
                    Some(prev) => prev,
                    None => Cwd(None),
                };
            }
            _ => {}
        }
    }

    fn change_to(&self, cwd: &Cwd, target: Option<&str>) -> Cwd {
        let (Some(dirs), Some(target)) = (&cwd.0, target) else { return Cwd(None) };
        let mut next: Vec<String> = Vec::new();
        for d in dirs {
            // bash's cd is logical, but falls back to the physical path when
            // the logical one fails (and `cd -P` is physical): a `..` may
            // land either way.
            let joined = paths::join(d, target, self.home);
            if joined.len() > 4096 {
                return Cwd(None);
            }
            if joined.split('/').any(|seg| seg == "..") {
                match crate::host::land(&joined, self.host, &|_| None) {
                    crate::host::Landing::Path(p) if !next.contains(&p) => next.push(p),
                    crate::host::Landing::Path(_) => {}
                    _ => return Cwd(None),
                }
                // As spelled too: paths from there are walked again, through
                // the links the line makes, which only the effects know.
                if !next.contains(&joined) {
                    next.push(joined.clone());
                }
            }
            let logical = paths::normalize(&joined);
            if !next.contains(&logical) {
                next.push(logical);
            }
        }
        let all_exist = next.iter().all(|d| self.host.kind(d) == PathKind::Dir);
        let moved = Cwd(Some(next));
        // A `cd` into a directory that does not exist yet may fail; then the
        // next command runs where we were.
        if all_exist {
            moved
        } else {
            cwd.union(&moved)
        }
    }

    /// Run every `$(…)`, `` `…` `` and `<(…)` inside `node` as its own subshell.
    fn substitutions_in(&mut self, node: Node<'a>, st: &State, depth: usize) -> Walk {
        let depth = Self::deeper(depth)?;
        if matches!(node.kind(), "command_substitution" | "process_substitution") {
            let mut copy = st.clone();
            return self.statements(node, &mut copy, depth);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.substitutions_in(child, st, depth)?;
        }
        Ok(())
    }

    /// Decode one word as the shell would, running its substitutions.
    fn word(&mut self, node: Node<'a>, st: &State, depth: usize) -> Result<Arg, ParseError> {
        let mut words = self.words(node, st, depth)?;
        // A redirection or assignment is one word: several are computed.
        Ok(if words.len() == 1 { words.remove(0) } else { Arg::Computed { text: self.text(node).to_string() } })
    }

    /// Decode one word as the shell would, braces expanded.
    fn words(&mut self, node: Node<'a>, st: &State, depth: usize) -> Result<Vec<Arg>, ParseError> {
        self.words_of(&[node], st, depth)
    }

    /// The same for a word the grammar gave as touching pieces; text between
    /// them that is no piece (an unnamed token) makes the word computed.
    fn words_of(&mut self, pieces: &[Node<'a>], st: &State, depth: usize) -> Result<Vec<Arg>, ParseError> {
        let mut w = WordBuilder::default();
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 && pieces[i - 1].end_byte() != piece.start_byte() {
                w.computed = true;
            }
            self.word_part(*piece, st, depth, &mut w, i == 0)?;
        }
        Ok(w.finish_words(self.home))
    }

    /// `b` follows `a` with no blank between: the same shell word.
    fn touching(&self, a: Node<'a>, b: Node<'a>) -> bool {
        let gap = &self.src[a.end_byte().min(b.start_byte())..b.start_byte()];
        !gap.iter().any(|c| c.is_ascii_whitespace())
    }

    fn word_part(&mut self, node: Node<'a>, st: &State, depth: usize, w: &mut WordBuilder, first: bool) -> Walk {
        let depth = Self::deeper(depth)?;
        match node.kind() {
            "word" | "number" => {
                let raw = self.text(node);
                let raw = match (first, raw) {
                    (true, "~") => self.home.to_string(),
                    (true, r) if r.starts_with("~/") => format!("{}{}", self.home, &r[1..]),
                    (true, r) if r.starts_with('~') => {
                        w.computed = true; // ~user
                        r.to_string()
                    }
                    (_, r) => r.to_string(),
                };
                w.unquoted(&raw);
            }
            // `{1..3}`: the grammar's own node for a numeric sequence.
            "brace_expression" => w.unquoted(self.text(node)),
            "raw_string" => {
                let t = self.text(node);
                w.quoted(t.get(1..t.len().saturating_sub(1)).unwrap_or(""));
            }
            "ansi_c_string" => {
                let t = self.text(node);
                let inner = t.get(2..t.len().saturating_sub(1)).unwrap_or("");
                match decode_ansi_c(inner) {
                    Some(s) => w.quoted(&s),
                    None => w.computed = true,
                }
            }
            "string" | "translated_string" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "string_content" => w.quoted(&decode_double_quoted(self.text(child))),
                        "string" => self.word_part(child, st, depth, w, false)?,
                        _ => self.expansion(child, st, depth, w)?,
                    }
                }
            }
            "concatenation" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for (i, child) in children.into_iter().enumerate() {
                    self.word_part(child, st, depth, w, first && i == 0)?;
                }
            }
            "process_substitution" => {
                let mut copy = st.clone();
                self.statements(node, &mut copy, depth)?;
                w.stream = true;
            }
            _ => self.expansion(node, st, depth, w)?,
        }
        Ok(())
    }

    fn expansion(&mut self, node: Node<'a>, st: &State, depth: usize, w: &mut WordBuilder) -> Walk {
        let text = self.text(node);
        if matches!(text, "$HOME" | "${HOME}") {
            w.quoted(self.home);
            return Ok(());
        }
        if text.starts_with("${") && text.ends_with("@P}") {
            let reason = format!("`{text}` expands the variable's value as a prompt, running the command substitutions it holds");
            self.items.push(Item::Hidden { reason, cwd: st.cwd.clone() });
        }
        self.substitutions_in(node, st, depth)?;
        w.computed = true;
        w.text.push_str(text);
        Ok(())
    }
}

/// Children of a command that are not (pieces of) its words.
const NOT_WORDS: &[&str] =
    &["variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect", "command_name", "subshell", "comment"];

#[derive(Default)]
struct WordBuilder {
    text: String,
    /// Literal text up to the first unquoted pattern character.
    before_glob: Option<String>,
    after_glob: String,
    computed: bool,
    stream: bool,
    /// An unquoted `{` was seen: the word may expand to several.
    brace: bool,
    /// Part of the word was quoted, escaped or substituted: bash expands
    /// only unquoted braces, which the text alone no longer tells.
    mixed: bool,
}

impl WordBuilder {
    fn quoted(&mut self, s: &str) {
        self.mixed = true;
        self.push(s);
    }

    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        if self.before_glob.is_some() {
            self.after_glob.push_str(s);
        }
    }

    fn unquoted(&mut self, raw: &str) {
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => {
                        self.mixed = true;
                        self.push(&n.to_string())
                    }
                },
                '*' | '?' | '[' => {
                    if self.before_glob.is_none() {
                        self.before_glob = Some(self.text.clone());
                    }
                    self.push(&c.to_string());
                }
                // The word may be split into pieces anywhere between braces:
                // expansion is judged on the whole word (see `finish_words`).
                '{' => {
                    self.brace = true;
                    self.push("{");
                }
                _ => self.push(&c.to_string()),
            }
        }
    }

    /// The words this one becomes after brace expansion, `~` expanded in
    /// each as bash does next.
    fn finish_words(self, home: &str) -> Vec<Arg> {
        if !self.brace || self.computed || self.stream {
            return vec![self.finish()];
        }
        let may_expand = self.text.contains(',') || self.text.contains("..");
        if self.mixed {
            return if may_expand { vec![Arg::Computed { text: self.text }] } else { vec![self.finish()] };
        }
        match crate::shell::braces::expand(&self.text) {
            Some(words) if words.len() == 1 => vec![self.finish()],
            Some(words) => words
                .into_iter()
                .map(|word| {
                    let word = match word.as_str() {
                        "~" => home.to_string(),
                        w if w.starts_with("~/") => format!("{home}{}", &w[1..]),
                        w if w.starts_with('~') => return Arg::Computed { text: word },
                        _ => word,
                    };
                    let mut one = WordBuilder::default();
                    one.unquoted(&word.replace('\\', "\\\\"));
                    one.finish()
                })
                .collect(),
            None => vec![Arg::Computed { text: self.text }],
        }
    }

    fn finish(self) -> Arg {
        if self.stream {
            return Arg::Stream;
        }
        if self.computed {
            return Arg::Computed { text: self.text };
        }
        match self.before_glob {
            None => Arg::Literal(self.text),
            Some(prefix) => {
                let dir = match prefix.rfind('/') {
                    Some(0) => "/".to_string(),
                    Some(i) => prefix[..i].to_string(),
                    None => String::new(),
                };
                let escapes = self.after_glob.split('/').any(|seg| seg == "..");
                Arg::Glob { text: self.text, dir, escapes }
            }
        }
    }
}

fn decode_double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => out.push(chars.next().unwrap()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `$'…'` with the common escapes; anything else is left to the shell.
fn decode_ansi_c(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            _ => return None,
        }
    }
    Some(out)
}
