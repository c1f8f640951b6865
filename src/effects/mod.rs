//! Simple commands → the (path, capability) pairs they need.
//!
//! One declarative table ([`PROGRAMS`]) says what each program does to its
//! arguments; nothing is inferred from how a name sounds. A program not in
//! the table yields only the execute effect on its binary.

use crate::policy::capability::Capability::{self, *};
use crate::host::{Host, Landing, PathKind};
use crate::shell::parse::{self, Arg, Cwd, Item, RedirectOp, SimpleCommand};
use crate::paths;

pub use table::table_names;
use table::{program, Kind, Program, Role, Wrapper, BUILTINS, FILLS, MAKES_IN, RUNS, UPDATES};
mod archives;
mod daemon;
mod editors;
mod fetch;
mod git;
mod git_paths;
mod git_worktree;
mod packages;
mod readers;
mod starts;
mod table;
mod tools;
mod writers;

/// A known path and what the command does to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    pub path: String,
    pub capability: Capability,
}

/// What the text names but cannot locate, or cannot show at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unseen {
    /// The operation is visible, the path is computed at run time; it lies
    /// somewhere under `scope` (the working directory, or a glob's directory).
    Computed { capability: Capability, scope: Vec<String>, reason: String },
    /// Inline code or a shell program the parser cannot reduce.
    Opaque { reason: String },
    /// A program PATH lookup cannot find now; the kernel decides at exec time.
    NotOnPath { program: String },
    /// A program that rewrites files it chooses under `scope` (git switching
    /// branches): "Always allow" grants it to that program, not to the folder.
    ProgramState { program: String, capability: Capability, scope: Vec<String>, reason: String },
    /// A known program's own rewrite under `scope` that its own checks keep
    /// from losing anything (git refusing to overwrite uncommitted work, sed
    /// replacing only the file it names): granted for this call alone when
    /// the line hides nothing, else asked as [`Unseen::ProgramState`].
    SelfGuarded { program: String, capabilities: Vec<Capability>, scope: Vec<String>, reason: String },
    /// A path through one of a process's links in /proc (`path` as written):
    /// it leads wherever that process points when it runs. No rule or grant
    /// can name where, so only the kernel fence bounds it.
    ProcessLink { capability: Capability, path: String },
    /// A command handed to something outside this process tree (a service
    /// manager, a scheduler, a terminal server, a container daemon): no
    /// fence of this call reaches it, so it is asked every time.
    /// `program`: the program that hands it over, when a command grant for
    /// it may carry the user's trust (docker), else `None`.
    Escapes { program: Option<String>, reason: String },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub effects: Vec<Effect>,
    pub unseen: Vec<Unseen>,
    /// Links this command line makes (`ln`, `link`): a path through one
    /// reaches its target, which no lookup made before the line runs can
    /// see. Filled by a first pass over the whole line, since a loop, a
    /// pipeline, a function or a trap may meet a link made later in the text.
    pub made: Vec<MadeLink>,
    /// While the first pass runs: links found so far.
    found: Vec<MadeLink>,
    /// Set while a link's own name is recorded (ln creates the link, it does
    /// not go through it).
    plain: bool,
    /// The line starts a program that runs code its text does not show: one
    /// not in the table, an interpreter, a shell, an editor, a path.
    pub runs_code: bool,
    /// The line starts git (found on PATH by name).
    pub runs_git: bool,
    /// The line sets configuration that names a command to run later (`git
    /// config core.hooksPath …`): asked every time, never under a command
    /// grant.
    pub configures_code: bool,
    /// What the line would lose for good (`git reset --hard` discards
    /// uncommitted changes): said on the card.
    pub discards: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeLink {
    /// Where the link is made, as spelled (absolute) and as really placed.
    pub at: String,
    pub real_at: String,
    /// What it points to, absolute but with its `..` kept; `None`: computed.
    pub target: Option<String>,
}

/// Where a path a command names lands, as the kernel will open it.
enum Located {
    Path(String),
    /// Through a process's link in /proc (the spelling, for the reason).
    ProcessLink(String),
    /// Through a link this line makes to a computed target.
    Computed(String),
}

/// Nested `bash -c '…'` is followed this deep, then treated as opaque.
const MAX_SHELL_DEPTH: usize = 3;

pub struct Context<'a> {
    /// Landlock checks opening a just-created file for writing on its own,
    /// so on Linux filling a new file needs write as well as create.
    pub fill_needs_write: bool,
    pub cwd: &'a str,
    pub home: &'a str,
    /// The workspace root as spelled: its own `.git` is tool state.
    pub workspace: &'a str,
    /// The harness home and the permission store's files: with the
    /// credential stores, what any program's words are checked against.
    pub harness_home: &'a str,
    pub protected_files: &'a [String],
    pub host: &'a dyn Host,
}

/// Everything `items` would do.
pub fn analyse(items: &[Item], cx: &Context, depth: usize) -> Analysis {
    let mut out = Analysis::default();
    analyse_into(items, cx, depth, &mut out);
    // Judge the line again, every path both as the disk has it now and
    // through every link the line makes; a link made inside another one is
    // placed right once that one is known, so again until nothing moves.
    for _ in 0..4 {
        if out.found.is_empty() || out.found == out.made {
            break;
        }
        out = Analysis { made: std::mem::take(&mut out.found), ..Default::default() };
        analyse_into(items, cx, depth, &mut out);
    }
    if !out.found.is_empty() && out.found != out.made {
        out.unseen.push(Unseen::Opaque { reason: "the links this line makes lead into one another too deeply to follow".into() });
    }
    dedupe(&mut out);
    out
}

/// A fresh analysis for a part of the line (a nested shell, xargs' or
/// find's command) that knows the links the line makes.
fn part_of(out: &Analysis) -> Analysis {
    Analysis { made: out.made.clone(), ..Default::default() }
}

/// What a part of the line starts counts for the whole line.
fn starts_of(out: &mut Analysis, part: &Analysis) {
    out.runs_code |= part.runs_code;
    out.runs_git |= part.runs_git;
    out.configures_code |= part.configures_code;
    out.discards.extend(part.discards.iter().cloned());
}

/// `analyse` adding to `out`.
fn analyse_into(items: &[Item], cx: &Context, depth: usize, out: &mut Analysis) {
    for item in items {
        match item {
            Item::Command(cmd) => command(cmd, cx, depth, out),
            Item::Redirect { redirect, cwd } => redirection(redirect, cwd, cx, out),
        }
    }
}

fn dedupe(out: &mut Analysis) {
    let mut seen = Vec::new();
    out.effects.retain(|e| {
        if seen.contains(e) {
            false
        } else {
            seen.push(e.clone());
            true
        }
    });
    let mut seen_d = Vec::new();
    out.discards.retain(|d| {
        let fresh = !seen_d.contains(d);
        seen_d.push(d.clone());
        fresh
    });
    let mut seen_u = Vec::new();
    out.unseen.retain(|u| {
        if seen_u.contains(u) {
            false
        } else {
            seen_u.push(u.clone());
            true
        }
    });
}

/// Options and operands of one command line, split by a program's table row.
struct Split<'a> {
    /// (option name, its value, where the value starts in that word) in
    /// order; flags have `None`. `-oFILE` and `--out=FILE` carry their value
    /// in the option's own word.
    options: Vec<(String, Option<&'a Arg>, usize)>,
    operands: Vec<&'a Arg>,
}

impl<'a> Split<'a> {
    fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(o, _, _)| names.contains(&o.as_str()))
    }
    /// The values of these options, each as its own word.
    fn values(&self, names: &[&str]) -> Vec<Arg> {
        self.options
            .iter()
            .filter(|(o, _, _)| names.contains(&o.as_str()))
            .filter_map(|(_, v, at)| match (v, at) {
                (Some(v), 0) => Some((*v).clone()),
                // Bash expands no `~` inside `-t~`: keep it a name here.
                (Some(v), at) => Some(Arg::Literal(match v.text().get(*at..).unwrap_or("")
                {
                    rest if rest.starts_with('~') => format!("./{rest}"),
                    rest => rest.to_string(),
                })),
                (None, _) => None,
            })
            .collect()
    }
    /// A short flag letter appearing alone or in a cluster (`-rf`).
    fn short(&self, letter: char) -> bool {
        self.options
            .iter()
            .any(|(o, _, _)| o.starts_with('-') && !o.starts_with("--") && o[1..].contains(letter))
    }
}

/// Split `args` into options and operands. `--` ends options. Attached
/// values (`-n5`, `--lines=5`) stay with their option.
fn split<'a>(args: &'a [Arg], takes_value: &[&str]) -> Split<'a> {
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let text = a.text();
        if only_operands || !text.starts_with('-') || text == "-" || !matches!(a, Arg::Literal(_)) {
            operands.push(a);
            continue;
        }
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some((name, _)) = text.split_once('=').filter(|_| text.starts_with("--")) {
            options.push((name.to_string(), Some(a), name.len() + 1));
            continue;
        }
        if takes_value.contains(&text) || text.starts_with("--") {
            let value = if takes_value.contains(&text) { args.get(i) } else { None };
            i += usize::from(value.is_some());
            options.push((text.to_string(), value, 0));
            continue;
        }
        // A cluster of short flags, as getopt reads it: the first letter
        // that takes a value takes the rest of the word (`-n5`, `-so FILE`
        // → `-s -o FILE`, `-oFILE`), or the next word when nothing is left.
        for (at, letter) in text.char_indices().skip(1) {
            let flag = format!("-{letter}");
            if takes_value.contains(&flag.as_str()) {
                let rest = at + letter.len_utf8();
                if rest < text.len() {
                    options.push((flag, Some(a), rest));
                } else {
                    options.push((flag, args.get(i), 0));
                    i += 1;
                }
                break;
            }
            options.push((flag, None, 0));
        }
    }
    Split { options, operands }
}

/// The value of `--opt=value` or of a separate word.
/// An option's value as an argument: its literal text (see `option_value`),
/// or the computed word itself, so that a computed path is judged as one.
fn option_arg(name: &str, value: &Arg) -> Arg {
    match option_value(name, value) {
        Some(text) => Arg::Literal(text.to_string()),
        None => value.clone(),
    }
}

/// The commands a vim run is given (`-c`, `--cmd`, `+cmd`) may write or
/// run any file (`:w FILE`, `:!cmd`, `:call system()`), and a script,
/// vimrc or key file (`-S`, `-u`, `-s`) is not shown by the line: opaque,
/// unless every command is one that names no file and runs nothing.
fn vim_commands(name: &str, s: &Split, sink: &mut Sink) {
    let plain_rc = |v: &Arg| v.literal().is_some_and(|p| matches!(p, "NONE" | "NORC" | "DEFAULTS"));
    let scripts = !s.values(&["-S"]).is_empty() || s.values(&["-u", "-U"]).iter().any(|v| !plain_rc(v));
    // `-s` is silent mode for ex (and with -e/-E); otherwise it names a file of keys.
    let keys = s.short('s') && !(name == "ex" || s.short('e') || s.short('E'));
    let mut commands: Vec<String> = s.values(&["-c", "--cmd"]).iter().map(|v| v.text().to_string()).collect();
    commands.extend(s.operands.iter().filter_map(|op| op.text().strip_prefix('+')).map(str::to_string));
    if scripts || keys || !commands.iter().all(|c| vim_command_is_plain(c)) {
        sink.opaque(format!("{name} is given commands or a script that may write or run files the line does not show"));
    }
}

/// An Ex command line (`|`-separated) that names no file and runs nothing:
/// write/quit forms without a file name, substitutions without `\=`, `g`/`v`
/// over such a command, line edits, and a few buffer options.
fn vim_command_is_plain(line: &str) -> bool {
    const OPTIONS: &[&str] = &[
        "ff", "fileformat", "et", "expandtab", "noet", "noexpandtab", "ts", "tabstop", "sw", "shiftwidth", "sts", "softtabstop", "tw", "textwidth",
        "ft", "filetype", "fenc", "fileencoding", "bomb", "nobomb", "eol", "noeol", "fixeol", "nofixeol", "fixendofline", "nofixendofline",
        "ai", "autoindent", "noai", "noautoindent", "paste", "nopaste", "ic", "ignorecase", "noic", "noignorecase", "nu", "number", "nonu", "nonumber",
    ];
    line.split('|').all(|cmd| {
        let cmd = cmd.trim().trim_start_matches(':');
        let cmd = cmd.trim_start_matches(|c: char| "%.$,;0123456789+- ".contains(c));
        if cmd.is_empty() {
            return true;
        }
        let word: String = cmd.chars().take_while(char::is_ascii_alphabetic).collect();
        let rest = cmd[word.len()..].trim_start_matches('!').trim();
        match word.as_str() {
            "w" | "write" | "wq" | "x" | "xit" | "exit" | "q" | "quit" | "qa" | "qall" | "quitall" | "wa" | "wall" | "wqa" | "wqall" | "xa" | "xall" | "up"
            | "update" | "noh" | "nohlsearch" | "d" | "delete" | "retab" | "j" | "join" | "le" | "left" | "ri" | "right" | "ce" | "center" | "y" | "yank"
            | "u" | "undo" | "red" | "redo" => rest.is_empty() || rest.bytes().all(|b| b.is_ascii_digit() || b == b' '),
            "s" | "substitute" => !rest.contains("\\="),
            "g" | "global" | "v" | "vglobal" => {
                let mut chars = rest.chars();
                let Some(delim) = chars.next().filter(|d| !d.is_alphanumeric() && *d != '\\' && *d != '"' && *d != '|') else { return false };
                let body = chars.as_str();
                let mut escaped = false;
                let end = body.char_indices().find(|&(_, c)| {
                    let hit = c == delim && !escaped;
                    escaped = c == '\\' && !escaped;
                    hit
                });
                end.is_some_and(|(at, _)| vim_command_is_plain(&body[at + delim.len_utf8()..]))
            }
            "set" | "se" | "setlocal" | "setl" => rest.split_whitespace().all(|o| {
                let (option, value) = o.split_once(['=', ':']).unwrap_or((o, ""));
                OPTIONS.contains(&option.trim_end_matches(['!', '&', '^', '+', '-'])) && !value.contains(['/', '`', '$'])
            }),
            _ => false,
        }
    })
}

/// gawk's options before the program: a program or library from a file
/// (`-f`, `-i`, `-E`, `-l`) is not shown by the line; `-o`, `-p` and `-d`
/// write a file (attached, or `awkprof.out` / `awkvars.out` in the working
/// directory).
fn awk_options(name: &str, args: &[Arg], sink: &mut Sink) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        if t == "--" || !t.starts_with('-') || t == "-" {
            break;
        }
        let (key, attached) = match t.strip_prefix("--") {
            Some(long) => match long.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (long.to_string(), None),
            },
            None => {
                let mut letters = t[1..].chars();
                let key = letters.next().map(String::from).unwrap_or_default();
                (key, Some(letters.as_str().to_string()).filter(|v| !v.is_empty()))
            }
        };
        match key.as_str() {
            "f" | "file" | "i" | "include" | "E" | "exec" | "l" | "load" => {
                sink.opaque(format!("{name} runs a program or library from a file the line does not show"));
                i += usize::from(attached.is_none());
            }
            "v" | "assign" | "F" | "field-separator" | "W" => i += usize::from(attached.is_none()),
            "o" | "pretty-print" | "p" | "profile" => sink.fill(&Arg::Literal(attached.unwrap_or_else(|| "awkprof.out".into()))),
            "d" | "dump-variables" => sink.fill(&Arg::Literal(attached.unwrap_or_else(|| "awkvars.out".into()))),
            "e" | "source" => break,
            _ => {}
        }
    }
}

/// The awk program redirects output, reads with getline or runs commands.
fn awk_touches_files(s: &Split) -> bool {
    let program = s.operands.first().map(|a| a.text()).unwrap_or("");
    let prints = program.contains("print");
    program.contains("getline") || program.contains("system") || (prints && (program.contains('>') || program.contains('|')))
}

fn option_value<'a>(name: &str, value: &'a Arg) -> Option<&'a str> {
    let text = value.literal()?;
    if let Some(rest) = text.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
        return Some(rest);
    }
    Some(text)
}

struct Sink<'a, 'b> {
    cx: &'a Context<'b>,
    cwd: &'a Cwd,
    out: &'a mut Analysis,
}

impl Sink<'_, '_> {
    fn dirs(&self) -> Option<&Vec<String>> {
        self.cwd.0.as_ref()
    }

    /// Record `cap` on the path `arg` names (resolved against each possible cwd).
    fn path(&mut self, arg: &Arg, cap: Capability) {
        self.record(arg, |_, _| cap, false);
    }

    /// Record an effect whose capability depends on what is there now.
    fn path_with(&mut self, arg: &Arg, cap: impl Fn(&str, PathKind) -> Capability) {
        self.record(arg, cap, true);
    }

    /// `ask_kind`: only then is the host asked what is at the path.
    fn record(&mut self, arg: &Arg, cap: impl Fn(&str, PathKind) -> Capability, ask_kind: bool) {
        let host = self.cx.host;
        let kind = |p: &str| if ask_kind { host.kind(p) } else { PathKind::Missing };
        match arg {
            Arg::Stream => {}
            Arg::Literal(s) if is_stream_path(s) => {}
            Arg::Literal(s) => {
                if s.is_empty() {
                    return;
                }
                let bases = match self.dirs().cloned() {
                    Some(dirs) => dirs,
                    None if s.starts_with('/') || s.starts_with('~') => vec!["/".to_string()],
                    None => Vec::new(),
                };
                let mut located = Vec::new();
                for d in &bases {
                    located.push(self.locate(d, s, false));
                    if !self.out.made.is_empty() {
                        located.push(if self.out.plain { self.locate_name(d, s) } else { self.locate(d, s, true) });
                    }
                }
                for l in located {
                    match l {
                        Located::Path(p) => {
                            let c = cap(&p, kind(&p));
                            self.out.effects.push(Effect { path: p, capability: c });
                        }
                        Located::ProcessLink(spelled) => {
                            let c = cap(&spelled, PathKind::Missing);
                            self.out.unseen.push(Unseen::ProcessLink { capability: c, path: spelled });
                        }
                        Located::Computed(why) => {
                            let c = cap("", PathKind::Missing);
                            self.computed(c, why);
                        }
                    }
                }
                if bases.is_empty() {
                    let c = cap("", PathKind::Missing);
                    self.computed(c, format!("`{s}` is relative to a directory only the shell knows"));
                }
            }
            Arg::Glob { dir, escapes: false, text } if self.dirs().is_some() => {
                let c = cap("", PathKind::Missing);
                let scope: Vec<String> = self
                    .dirs()
                    .unwrap()
                    .iter()
                    .map(|d| if dir.is_empty() { d.clone() } else { paths::absolute(d, dir, self.cx.home) })
                    .collect();
                self.out.unseen.push(Unseen::Computed {
                    capability: c,
                    scope,
                    reason: format!("`{text}` names files only the shell's expansion knows"),
                });
            }
            Arg::Glob { text, .. } | Arg::Computed { text } => {
                let c = cap("", PathKind::Missing);
                self.computed(c, format!("`{text}` is computed when the command runs"));
            }
        }
    }

    /// A file opened for writing: written if it exists, created (and, where
    /// the kernel checks the open separately, also written) if not.
    fn fill(&mut self, arg: &Arg) {
        let before = self.out.effects.len();
        self.path_with(arg, create_or_write);
        if self.cx.fill_needs_write {
            let made: Vec<Effect> = self.out.effects[before..].iter().filter(|e| e.capability == Create).cloned().collect();
            for e in made {
                self.out.effects.push(Effect { path: e.path, capability: Write });
            }
        }
    }

    /// `cap` on the path `arg` names, only where nothing is there yet
    /// (the folders `mkdir -p` makes on the way).
    fn path_if_missing(&mut self, arg: &Arg, cap: Capability) {
        let before = self.out.effects.len();
        self.path_with(arg, |_, kind| if kind == PathKind::Missing { cap } else { Read });
        let mut i = before;
        while i < self.out.effects.len() {
            if self.out.effects[i].capability == Read {
                self.out.effects.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// `s` from `base` as the kernel will open it: a `..` climbs from where
    /// the path before it really is (links followed), not from its spelling,
    /// as `cat link/../x` does. `through_made`: links this line makes are
    /// followed too (see `Analysis::made`).
    fn locate(&self, base: &str, s: &str, through_made: bool) -> Located {
        let joined = paths::join(base, s, self.cx.home);
        let no_links = !through_made || self.out.made.is_empty();
        if no_links && !joined.split('/').any(|seg| seg == "..") {
            return Located::Path(paths::normalize(&joined));
        }
        self.locate_joined(&joined, s, through_made, 0)
    }

    fn locate_joined(&self, joined: &str, s: &str, through_made: bool, depth: usize) -> Located {
        // The kernel gives up after 40 links and on paths over PATH_MAX;
        // past those (or many `..`) the path is not followed here either.
        if depth > 40 || joined.len() > 4096 || joined.split('/').filter(|seg| *seg == "..").count() > 64 {
            return Located::Computed(format!("`{s}` is too long or winding to follow before it runs"));
        }
        let made = |p: &str| if through_made { self.made_at(p) } else { None };
        match crate::host::land(joined, self.cx.host, &made) {
            Landing::Path(p) => Located::Path(p),
            Landing::ProcessLink => Located::ProcessLink(joined.to_string()),
            Landing::Made { target: None, .. } => {
                Located::Computed(format!("`{s}` goes through a link this command line makes to a computed target"))
            }
            // Go on from the link's target, its own `..` included.
            Landing::Made { target: Some(target), rest } => self.locate_joined(&format!("{target}/{rest}"), s, through_made, depth + 1),
        }
    }

    /// Where the name `s` itself lands (a link being made there is not gone
    /// through), its folder through the links this line makes.
    fn locate_name(&self, base: &str, s: &str) -> Located {
        let joined = paths::join(base, s, self.cx.home);
        let (folder, name) = joined.rsplit_once('/').unwrap_or(("", &joined));
        if matches!(name, "" | "." | "..") {
            return self.locate(base, s, true);
        }
        match self.locate_joined(if folder.is_empty() { "/" } else { folder }, s, true, 0) {
            Located::Path(p) => Located::Path(if p == "/" { format!("/{name}") } else { format!("{p}/{name}") }),
            other => other,
        }
    }

    /// Where a program runs after changing to `d` (`-C d`): as the kernel's
    /// chdir finds it; unknown when that goes through a process link.
    fn chdir(&self, d: &str) -> Cwd {
        let Some(dirs) = self.dirs() else { return Cwd(None) };
        let mut next = Vec::new();
        for base in dirs {
            match self.locate(base, d, true) {
                Located::Path(p) if !paths::through_process_link(&p) => next.push(p),
                _ => return Cwd(None),
            }
        }
        Cwd(Some(next))
    }

    /// The target of a link this line makes at `p` (spelled so, or where
    /// `p` really is): `Some(None)` when the target is computed.
    fn made_at(&self, p: &str) -> Option<Option<String>> {
        if self.out.made.is_empty() {
            return None;
        }
        if let Some(l) = self.out.made.iter().find(|l| l.at == p) {
            return Some(l.target.clone());
        }
        // Asked for every folder on a path: a very deep one is not followed.
        if paths::depth(p) > 64 {
            return Some(None);
        }
        let real = self.cx.host.canonical(p);
        self.out.made.iter().find(|l| l.real_at == real).map(|l| l.target.clone())
    }

    fn computed(&mut self, cap: Capability, reason: String) {
        let scope = self.dirs().cloned().unwrap_or_default();
        self.out.unseen.push(Unseen::Computed { capability: cap, scope, reason });
    }

    /// Names only known at run time, created (and overwritten) inside `dir`.
    fn unknown_names_in(&mut self, dir: Option<&Arg>, caps: &[Capability], why: &str) {
        let dirs: Option<Vec<String>> = match dir {
            None => self.dirs().cloned(),
            Some(Arg::Literal(d)) => self.chdir(d).0,
            Some(_) => None,
        };
        for &cap in caps {
            self.out.unseen.push(Unseen::Computed {
                capability: cap,
                scope: dirs.clone().unwrap_or_default(),
                reason: why.to_string(),
            });
        }
    }

    fn opaque(&mut self, reason: String) {
        self.out.unseen.push(Unseen::Opaque { reason });
    }
}

/// Descriptors and devices that are not files a rule is about.
fn is_stream_path(s: &str) -> bool {
    let descriptor = |prefix: &str| s.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    matches!(s, "-" | "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "/dev/random" | "/dev/urandom")
        || descriptor("/dev/fd/")
        || descriptor("/proc/self/fd/")
}

fn create_or_write(_: &str, kind: PathKind) -> Capability {
    if kind == PathKind::Missing {
        Create
    } else {
        Write
    }
}

fn redirection(r: &parse::Redirect, cwd: &Cwd, cx: &Context, out: &mut Analysis) {
    let mut sink = Sink { cx, cwd, out };
    match r.op {
        RedirectOp::Duplicate => {}
        RedirectOp::Read => sink.path(&r.target, Read),
        RedirectOp::Truncate | RedirectOp::Append => sink.fill(&r.target),
        RedirectOp::ReadWrite => {
            sink.path(&r.target, Read);
            sink.fill(&r.target);
        }
    }
}

fn command(cmd: &SimpleCommand, cx: &Context, depth: usize, out: &mut Analysis) {
    for r in &cmd.redirects {
        redirection(r, &cmd.cwd, cx, out);
    }
    run(&cmd.argv, &cmd.cwd, cx, depth, out);
}

/// Effects of starting `argv` in `cwd`.
fn run(argv: &[Arg], cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis) {
    let Some(first) = argv.first() else { return };
    let Some(name) = first.literal() else {
        let mut sink = Sink { cx, cwd, out };
        sink.opaque(format!("the program name `{}` is computed when the command runs", first.text()));
        return;
    };
    let base = paths::file_name(name);
    if !BUILTINS.contains(&name) && !(matches!(name, "command" | "exec" | "time" | "eval" | "source" | ".")) {
        execute(name, cwd, cx, out);
    }
    // A program named by a path may be anything (`./cat` is not cat).
    let known = !name.contains('/') && (BUILTINS.contains(&name) || program(base).is_some_and(|p| !p.runs_code()));
    out.runs_code |= !known;
    out.runs_git |= name == "git";
    let args = &argv[1..];
    if name == "trap" || (name == "builtin" && args.first().map(Arg::text) == Some("trap")) {
        trap(if name == "trap" { args } else { &args[1..] }, cwd, cx, depth, out);
        return;
    }
    if name == "builtin" {
        // `builtin NAME …` runs the shell's own NAME (`builtin exec cat f`).
        run(args, cwd, cx, depth, out);
        return;
    }
    let Some(prog) = program(base) else {
        if !BUILTINS.contains(&name) {
            readers::named_secrets(args.iter(), &mut Sink { cx, cwd, out });
        }
        return;
    };
    match prog.kind {
        Kind::Wrapper(w) => wrapper(w, prog, base, args, cwd, cx, depth, out),
        Kind::Role(role) => {
            let s = split(args, prog.takes_value);
            let mut sink = Sink { cx, cwd, out };
            // The row says what its operands are; its options' words are
            // checked as any program's are.
            readers::named_secrets(args.iter().filter(|a| !s.operands.iter().any(|o| std::ptr::eq(*o, *a))), &mut sink);
            operands(role, base, &s, args, &mut sink, depth);
            option_files(base, &s, &mut sink, depth);
        }
    }
}

/// What the option tables (`FILLS`, `UPDATES`, `RUNS`, `MAKES_IN`) say
/// `name`'s options do.
fn option_files(name: &str, s: &Split, sink: &mut Sink, depth: usize) {
    let of = |table: &[(&[&str], &'static [&'static str])]| -> Vec<&'static str> {
        table.iter().filter(|(names, _)| names.contains(&name)).flat_map(|(_, opts)| opts.iter().copied()).collect()
    };
    for v in s.values(&of(FILLS)) {
        sink.fill(&v);
    }
    for v in s.values(&of(UPDATES)) {
        sink.path(&v, Read);
        sink.fill(&v);
    }
    for v in s.values(&of(RUNS)) {
        nested_program(&v, sink, depth);
    }
    for (names, opts, caps) in MAKES_IN {
        if names.contains(&name) {
            for v in s.values(opts) {
                sink.unknown_names_in(Some(&v), caps, &format!("{name} makes files only it names in `{}`", v.text()));
            }
        }
    }
}

/// The execute effect on the binary a name starts.
fn execute(name: &str, cwd: &Cwd, cx: &Context, out: &mut Analysis) {
    if name.contains('/') {
        let mut sink = Sink { cx, cwd, out };
        sink.path(&Arg::Literal(name.to_string()), Execute);
        return;
    }
    match cx.host.which(name) {
        Some(p) => out.effects.push(Effect { path: paths::normalize(&p), capability: Execute }),
        None => out.unseen.push(Unseen::NotOnPath { program: name.to_string() }),
    }
}

#[allow(clippy::too_many_arguments)]
fn wrapper(w: Wrapper, prog: &Program, name: &str, args: &[Arg], cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis) {
    // Options end at the first word that is not one (or at `--`), read as
    // getopt reads them: `-la NAME` is `-l -a NAME`, `-uroot` is `-u root`.
    let mut cwd = cwd.clone();
    let (opts, i) = starts::leading_options(args, prog.takes_value, w == Wrapper::Env);
    let has = |names: &[&str]| opts.iter().any(|(o, _)| names.contains(&o.as_str()));
    let values = |names: &[&str]| -> Vec<Arg> { opts.iter().filter(|(o, _)| names.contains(&o.as_str())).filter_map(|(_, v)| v.clone()).collect() };
    if w == Wrapper::Command && has(&["-v", "-V"]) {
        return; // only looks the name up
    }
    let mut rest = &args[i.min(args.len())..];
    {
        let mut sink = Sink { cx, cwd: &cwd, out };
        // Files an option names: xargs' argument file, time's and strace's
        // output.
        if w == Wrapper::Xargs {
            for v in values(&["-a", "--arg-file"]) {
                sink.path(&v, Read);
            }
        }
        for (names, fills) in FILLS {
            if names.contains(&name) {
                for v in values(fills) {
                    sink.fill(&v);
                }
            }
        }
    }
    // Where the command runs: env -C, sudo -D; sudo -i starts in the
    // target user's home, which the line does not name.
    for (o, v) in &opts {
        let changes = match (name, o.as_str()) {
            ("env", "-C" | "--chdir") | ("sudo", "-D" | "--chdir") => true,
            ("sudo", "-i" | "--login") => {
                cwd = Cwd(None);
                false
            }
            _ => false,
        };
        if changes {
            cwd = match v.as_ref().and_then(Arg::literal) {
                Some(d) => Sink { cx, cwd: &cwd, out }.chdir(d),
                None => Cwd(None),
            };
        }
    }
    if let Some(v) = values(&["-S", "--split-string"]).first().filter(|_| w == Wrapper::Env) {
        // env splits the string into words and reads them as its own
        // arguments (options and assignments included). Its quotes,
        // escapes, `${VAR}` and `#` are its own syntax, and it expands no
        // `~`: only the plain case is read.
        let words = v.literal().filter(|t| !t.contains(['\\', '\'', '"', '$', '#', '~', '`']));
        let Some(words) = words else {
            Sink { cx, cwd: &cwd, out }.opaque(format!("env -S `{}` splits a command line at run time", v.text()));
            return;
        };
        let mut again: Vec<Arg> = words.split_whitespace().map(|w| Arg::Literal(w.to_string())).collect();
        again.extend(rest.iter().cloned());
        wrapper(w, prog, name, &again, &cwd, cx, depth, out);
        return;
    }
    if name == "sudoedit" || (name == "sudo" && has(&["-e", "--edit"])) {
        // sudoedit copies each file out and writes it back when the editor exits.
        let mut sink = Sink { cx, cwd: &cwd, out };
        for f in rest {
            sink.path(f, Read);
            sink.fill(f);
        }
        return;
    }
    match w {
        Wrapper::Timeout if !rest.is_empty() => rest = &rest[1..], // the duration
        Wrapper::Leading => {
            // chrt -p / -m and taskset -p work on a running process or only report.
            if has(&["-p", "--pid", "-m", "--max"]) {
                return;
            }
            let numeric = rest.first().and_then(Arg::literal).is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
            // runcon's CONTEXT operand is absent when options give its parts.
            if name == "taskset" || numeric || (name == "runcon" && opts.is_empty()) {
                rest = rest.get(1..).unwrap_or(&[]);
            }
        }
        _ => {}
    }
    if rest.is_empty() {
        // sudo -s / -i and doas -s with no command start a shell that reads
        // its commands from standard input.
        if (name == "sudo" && has(&["-s", "--shell", "-i", "--login"])) || (name == "doas" && has(&["-s"])) {
            Sink { cx, cwd: &cwd, out }.opaque(format!("{name} starts a shell that reads its commands from standard input"));
        }
        return;
    }
    if w == Wrapper::Xargs {
        // The program is visible, its operands arrive on stdin: every path
        // effect it has is computed.
        let mut inner = part_of(out);
        let mut probe = rest.to_vec();
        probe.push(Arg::Computed { text: "<input from xargs>".into() });
        run(&probe, &cwd, cx, depth, &mut inner);
        starts_of(out, &inner);
        for e in inner.effects {
            if e.capability == Execute {
                out.effects.push(e);
            } else {
                out.unseen.push(Unseen::Computed {
                    capability: e.capability,
                    scope: cwd.0.clone().unwrap_or_default(),
                    reason: "xargs supplies the operands at run time".into(),
                });
            }
        }
        out.unseen.extend(inner.unseen);
        out.found.extend(inner.found);
        return;
    }
    run(rest, &cwd, cx, depth, out);
}

/// Each role's reader is kept out of line (`#[inline(never)]` on them):
/// inlined, this dispatch was one 69 KB wasm function, and V8's optimizing
/// compiler kept ~18 MiB in the host process after compiling it, memory that
/// every fork the host makes then copies (README, Performance).
fn operands(role: Role, name: &str, s: &Split, args: &[Arg], sink: &mut Sink, depth: usize) {
    match role {
        Role::Each(_) if name == "file" && s.short('C') => readers::file_compile(sink),
        Role::Each(caps) => readers::each(name, caps, s, sink),
        Role::ListOrCwd => readers::list_or_cwd(s, sink),
        Role::Shred => writers::shred(s, sink),
        Role::CreateOrWrite => writers::creates_or_writes(name, s, sink),
        Role::WriteAfterFirst => writers::write_after_first(name, s, sink),
        Role::CreateFirst => writers::create_first(s, sink),
        Role::ReadAfterFirst => readers::read_after_first(name, s, args, sink),
        Role::Jq => readers::jq(s, args, sink),
        Role::Sort => readers::sort(s, sink),
        Role::InOut => readers::in_out(s, sink),
        Role::Copy | Role::Move | Role::Link => {
            transfer(role, s, sink);
            transfer_extras(name, s, sink);
        }
        Role::Sed => editors::sed(name, s, sink),
        Role::Vim => editors::vim(name, s, sink),
        Role::Ed => editors::ed(name, s, sink),
        Role::Dd => writers::dd(s, sink),
        Role::Curl => fetch::curl(s, sink),
        Role::Wget => fetch::wget(s, sink),
        Role::Tar => tar(s, args, sink),
        Role::Unzip => archives::unzip(s, sink),
        Role::Zip => archives::zip(s, sink),
        Role::Compress => archives::compress(name, s, sink),
        Role::Find => find(args, sink, depth),
        Role::Git => git::git(args, sink),
        Role::Shell => shell(s, args, sink, depth),
        Role::Interpreter => interpreter(name, args, sink),
        Role::Opaque => readers::opaque(name, s, sink),
        Role::Yq => readers::yq(name, s, args, sink, depth),
        Role::Split => writers::split_pieces(name, s, sink),
        Role::Mktemp => writers::mktemp(s, sink),
        Role::Patch => writers::patch(s, sink),
        Role::Xxd => writers::xxd(args, sink),
        Role::Archiver => writers::archiver(name, args, sink),
        Role::Packages => packages::package_manager(name, args, sink, depth),
        Role::Flock => starts::flock(args, sink, depth),
        Role::Script => starts::script(s, args, sink, depth),
        Role::Watch => starts::watch(args, sink, depth),
        Role::SwitchUser => starts::switch_user(name, args, sink, depth),
        Role::Hidden(why) => sink.opaque(why.to_string()),
        Role::Escapes(why) => sink.out.unseen.push(Unseen::Escapes { program: None, reason: why.to_string() }),
        Role::Daemon => daemon::client(name, args, sink),
        Role::RemoteShell => tools::remote_shell(args, sink),
        Role::Compiler => tools::compiler(name, args, sink),
        Role::Sqlite => tools::sqlite(args, sink),
        Role::SshKeygen => tools::ssh_keygen(args, sink),
        Role::Openssl => tools::openssl(args, sink),
        Role::History => tools::history(args, sink),
        Role::Make => tools::make(args, sink),
    }
}

/// An in-place editor writes a temp file beside `file` and renames it over
/// the original: create and delete in the folder holding it (a rename needs
/// delete of the source and create of the target), with names only the
/// editor knows.
fn in_place_replace(sink: &mut Sink, program: &str, file: &Arg) {
    let why = format!("{program} edits in place: its temp file is renamed over the original");
    renames_beside(sink, program, file, &why);
}

/// Create and program-bound delete in the folder holding `file`.
fn renames_beside(sink: &mut Sink, program: &str, file: &Arg, why: &str) {
    let Arg::Literal(f) = file else { return };
    let dir = match f.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => f[..i].to_string(),
        None => ".".to_string(),
    };
    // The temp file and the delete are the editor's need, not the folder's:
    // "Always allow" grants them to the program (a command grant), so `rm`
    // and `touch` keep asking there.
    let scope: Vec<String> = sink.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, &dir, sink.cx.home)).collect()).unwrap_or_default();
    for capability in [Create, Delete] {
        sink.out.unseen.push(Unseen::ProgramState { program: program.to_string(), capability, scope: scope.clone(), reason: why.to_string() });
    }
}

fn compress_suffix(name: &str) -> &'static str {
    match name {
        "bzip2" | "bunzip2" => ".bz2",
        "xz" | "unxz" => ".xz",
        "zstd" | "unzstd" => ".zst",
        "lz4" => ".lz4",
        _ => ".gz",
    }
}

fn url_file_name(url: &str) -> Option<&str> {
    let path = url.split(['?', '#']).next()?;
    let after_host = path.split_once("://").map(|(_, r)| r).unwrap_or(path);
    let (_, p) = after_host.split_once('/')?;
    let name = p.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// `ln`: paths through `link` reach `src` (see `Analysis::made`).
fn made_link(sink: &mut Sink, src: &Arg, link: &str, symbolic: bool) {
    let Some(dirs) = sink.dirs().cloned() else { return };
    for d in dirs {
        let at = match sink.locate_name(&d, link) {
            Located::Path(p) => p,
            _ => paths::absolute(&d, link, sink.cx.home),
        };
        let real_at = match sink.cx.host.canonical(paths::parent(&at)) {
            dir if dir == "/" => format!("/{}", paths::file_name(&at)),
            dir => format!("{dir}/{}", paths::file_name(&at)),
        };
        let target = link_target(sink, src, &at, &d, symbolic);
        sink.out.found.push(MadeLink { at, real_at, target });
    }
}

/// What a link made at `at` from `src` (run in `d`) points to. A symbolic
/// link's text is read from the folder it lives in; `..` in it climbs from
/// where that really is, so it is kept.
fn link_target(sink: &Sink, src: &Arg, at: &str, d: &str, symbolic: bool) -> Option<String> {
    src.literal().map(|t| paths::join(if symbolic { paths::parent(at) } else { d }, t, sink.cx.home))
}

/// What cp / mv / ln / install / rsync do besides copying to the
/// destination: backups beside it, the folders `install -D` makes, a
/// destination `-f` replaces, the paths rsync -R recreates.
#[inline(never)]
fn transfer_extras(name: &str, s: &Split, sink: &mut Sink) {
    let (ops, to_remote, from_remote) = local_operands(s);
    let target_dir = s.values(&["-t", "--target-directory"]).into_iter().next();
    let dest: Option<Arg> = target_dir.clone().or_else(|| ops.last().filter(|_| !to_remote && (ops.len() >= 2 || from_remote)).map(|a| (*a).clone()));
    if name == "install" && s.short('d') {
        for op in &ops {
            sink.path(op, Create);
            writers::missing_ancestors(sink, op);
        }
        return;
    }
    let Some(dest) = dest else { return };
    let dest_is_dir = target_dir.is_some()
        || dest.text().ends_with('/')
        || ops.len() > 2
        || dest.literal().is_some_and(|d| sink.dirs().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&paths::absolute(b, d, sink.cx.home)) == PathKind::Dir)));
    let folder = match (&dest, dest_is_dir) {
        (_, true) => dest.clone(),
        (Arg::Literal(d), false) => Arg::Literal(writers::folder_of(d)),
        (other, false) => other.clone(),
    };
    if s.short('b') || s.has(&["--backup"]) {
        sink.unknown_names_in(Some(&folder), &[Create, Write], &format!("{name} keeps a backup of each file it replaces (`~` or --suffix)"));
    }
    if name == "install" && s.short('D') {
        writers::missing_ancestors(sink, &if dest_is_dir { Arg::Literal(format!("{}/x", dest.text().trim_end_matches('/'))) } else { dest.clone() });
    }
    let replaces = (name == "ln" && (s.short('f') || s.has(&["--force"]))) || (name == "cp" && s.has(&["--remove-destination"]));
    if replaces && !dest_is_dir {
        // The link's own name, not where a link this line makes there leads.
        sink.out.plain = name == "ln";
        sink.path_with(&dest, |_, kind| if kind == PathKind::Missing { Create } else { Delete });
        sink.out.plain = false;
    }
    // (rsync --delete and --remove-source-files: see `transfer`.)
    if name == "rsync" {
        if s.short('R') || s.has(&["--relative"]) {
            sink.unknown_names_in(Some(&dest), &[Create, Write], "rsync --relative recreates the sources' paths below the destination");
        }
    }
}

/// The local operands of a copy, and whether it sends to another host or
/// fetches from one: rsync/scp-style remote operands (`host:path`,
/// `rsync://…`) are no local files, but the local ones are read (sent) or
/// written (fetched into).
fn local_operands<'a>(s: &Split<'a>) -> (Vec<&'a Arg>, bool, bool) {
    let remote = |a: &&Arg| a.literal().is_some_and(|t| t.split_once(':').is_some_and(|(h, _)| !h.contains('/') && !h.is_empty()));
    let to_remote = s.operands.len() >= 2 && s.operands.last().is_some_and(remote);
    let from_remote = !to_remote && s.operands.iter().rev().skip(1).any(remote);
    (s.operands.iter().copied().filter(|a| !remote(a)).collect(), to_remote, from_remote)
}

/// cp / mv / ln / install / rsync / scp: sources and one destination.
#[inline(never)]
fn transfer(role: Role, s: &Split, sink: &mut Sink) {
    let target_dir = s.values(&["-t", "--target-directory"]).into_iter().next();
    let no_target_dir = s.short('T') || s.has(&["--no-target-directory"]);
    let (ops, to_remote, from_remote) = local_operands(s);
    if role == Role::Copy && !from_remote && s.short('d') && s.options.iter().any(|(o, _, _)| o == "-d") && ops.len() == 1 {
        // install -d DIR
        sink.path(ops[0], Create);
        return;
    }
    let (sources, dest): (Vec<&Arg>, Option<Arg>) = match target_dir {
        Some(v) => (ops.clone(), Some(match option_value("--target-directory", &v) { Some(d) => Arg::Literal(format!("{d}/")), None => v.clone() })),
        None if role == Role::Link && ops.len() == 1 => (ops.clone(), Some(Arg::Literal("./".into()))),
        // Sent to another host: every local operand is read.
        None if to_remote => (ops.clone(), None),
        None if ops.len() >= 2 || (from_remote && ops.len() == 1) => (ops[..ops.len() - 1].to_vec(), Some(ops[ops.len() - 1].clone())),
        None => (ops.clone(), None),
    };
    let symbolic = s.short('s') || s.has(&["--symbolic"]);
    for src in &sources {
        match role {
            Role::Copy => sink.path(src, Read),
            // A hard link is the file itself under another name: whatever
            // may read or write the new name reads and writes it.
            Role::Link if !symbolic => {
                sink.path(src, Read);
                sink.path(src, Write);
            }
            Role::Move => {
                sink.path(src, Read);
                sink.path(src, Delete);
            }
            _ => {}
        }
    }
    if role == Role::Copy {
        // rsync: --delete removes from the destination what the sources
        // lack (names known only at run time); --remove-source-files
        // deletes the sources it sent.
        if s.options.iter().any(|(o, _, _)| o == "--del" || o.starts_with("--delete")) {
            sink.unknown_names_in(dest.as_ref(), &[Delete], "rsync --delete removes what the sources do not have");
        }
        if s.has(&["--remove-source-files"]) {
            for src in &sources {
                sink.path(src, Delete);
            }
        }
    }
    let Some(dest) = dest else { return };
    let into_folder = dest.text().ends_with('/') || dest.literal().is_some_and(|d| sink.dirs().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&paths::absolute(b, d, sink.cx.home)) == PathKind::Dir)));
    if from_remote && into_folder {
        sink.unknown_names_in(Some(&dest), &[Create, Write], "the files fetched from the other host keep the names they have there");
    }
    sink.out.plain = role == Role::Link;
    // cp --parents copies `a/b/f` to `DEST/a/b/f`.
    let parents = role == Role::Copy && s.has(&["--parents"]);
    transfer_to(role, &sources, &dest, no_target_dir, symbolic, parents, sink);
    sink.out.plain = false;
}

fn transfer_to(role: Role, sources: &[&Arg], dest: &Arg, no_target_dir: bool, symbolic: bool, parents: bool, sink: &mut Sink) {
    match dest {
        Arg::Literal(d) => {
            let dirs = sink.dirs().cloned();
            let resolve = |base: &str| paths::absolute(base, d, sink.cx.home);
            let into_dir = !no_target_dir
                && (d.ends_with('/')
                    || sources.len() > 1
                    || dirs.as_ref().is_some_and(|ds| ds.iter().any(|b| sink.cx.host.kind(&resolve(b)) == PathKind::Dir)));
            // A link this line makes may be a folder the disk does not show
            // yet: the sources may land inside it, too.
            // (Not the link this very `ln` makes there.)
            let onto_made = dirs.as_ref().is_some_and(|ds| {
                ds.iter().any(|b| {
                    let at = resolve(b);
                    sink.out.made.iter().any(|l| {
                        (l.at == at || l.real_at == at)
                            && !(role == Role::Link && sources.iter().any(|src| l.target == link_target(sink, src, &at, b, symbolic)))
                    })
                })
            });
            if into_dir || onto_made {
                for src in sources {
                    match src.literal() {
                        Some(sname) => {
                            let leaf = if parents {
                                sname.trim_end_matches('/').trim_start_matches('/')
                            } else {
                                paths::file_name(sname.trim_end_matches('/'))
                            };
                            let p = format!("{}/{}", d.trim_end_matches('/'), leaf);
                            if role != Role::Copy {
                                sink.path(&Arg::Literal(p.clone()), Create);
                            } else {
                                sink.fill(&Arg::Literal(p.clone()));
                            }
                            if role == Role::Link {
                                made_link(sink, src, &p, symbolic);
                            }
                        }
                        None => sink.unknown_names_in(Some(&dest), &[Create, Write], "the names copied in are computed"),
                    }
                }
            }
            if into_dir {
            } else if role == Role::Copy {
                sink.fill(&dest);
            } else {
                sink.path(&dest, Create);
                if role == Role::Link {
                    if let Some(src) = sources.first() {
                        made_link(sink, src, d, symbolic);
                    }
                }
                if role == Role::Move {
                    // Renaming over an existing file replaces it.
                    sink.path_with(&dest, |_, k| if k == PathKind::Missing { Create } else { Write });
                }
            }
        }
        other => {
            let cap = if role == Role::Copy { Write } else { Create };
            sink.computed(Create, format!("`{}` is computed", other.text()));
            if cap == Write {
                sink.computed(Write, format!("`{}` is computed", other.text()));
            }
        }
    }
}

#[inline(never)]
fn tar(s: &Split, args: &[Arg], sink: &mut Sink) {
    // Old style: the first word is a bundle of mode letters without a dash.
    let bundle = args.first().and_then(Arg::literal).filter(|t| !t.starts_with('-') && t.chars().all(|c| c.is_ascii_alphabetic())).unwrap_or("");
    let letters: String = s
        .options
        .iter()
        .filter(|(o, _, _)| o.starts_with('-') && !o.starts_with("--"))
        .map(|(o, _, _)| o[1..].to_string())
        .collect::<String>()
        + bundle;
    let long = |n: &str| s.has(&[n]);
    let create = letters.contains('c') || long("--create");
    let extract = letters.contains('x') || long("--extract") || long("--get");
    let append = letters.contains('r') || letters.contains('u') || letters.contains('A') || long("--append") || long("--update") || long("--catenate") || long("--concatenate") || long("--delete");
    let mut archive: Option<Arg> = s.values(&["-f", "--file"]).first().map(|v| option_arg("--file", &v));
    let mut operands: Vec<&Arg> = s.operands.clone();
    if !bundle.is_empty() {
        operands.remove(0);
        if bundle.contains('f') && archive.is_none() && !operands.is_empty() {
            archive = Some(operands.remove(0).clone());
        }
    }
    let dir = s.values(&["-C", "--directory"]).first().map(|v| option_arg("--directory", &v));
    if create || append {
        if let Some(a) = &archive {
            sink.fill(a);
        }
        let base_cwd;
        let members_cwd = match (&dir, sink.cwd.0.as_ref()) {
            (None, _) => sink.cwd,
            (Some(Arg::Literal(d)), Some(_)) => {
                base_cwd = sink.chdir(d);
                &base_cwd
            }
            _ => {
                base_cwd = Cwd(None);
                &base_cwd
            }
        };
        let mut inner = Sink { cx: sink.cx, cwd: members_cwd, out: sink.out };
        let removes = long("--remove-files");
        for m in operands {
            if long("--delete") {
                continue; // member names inside the archive
            }
            inner.path(m, Read);
            if removes {
                inner.path(m, Delete);
            }
        }
    } else {
        if let Some(a) = &archive {
            sink.path(a, Read);
        }
        if extract {
            let unlinks = letters.contains('U') || long("--unlink-first") || long("--recursive-unlink");
            let caps: &[Capability] = if unlinks { &[Create, Write, Delete] } else { &[Create, Write] };
            sink.unknown_names_in(dir.as_ref(), caps, "tar extracts names the archive holds");
        }
    }
}

#[inline(never)]
fn find(args: &[Arg], sink: &mut Sink, depth: usize) {
    // Start points come before the first expression word.
    let mut starts = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text();
        if t.starts_with('-') || t == "(" || t == "!" {
            // -D LIST and -O<level> come before the starting points too.
            if t == "-D" && starts.is_empty() {
                i += 2;
                continue;
            }
            if (matches!(t, "-H" | "-L" | "-P") || (t.starts_with("-O") && t.len() > 2)) && starts.is_empty() {
                i += 1;
                continue;
            }
            break;
        }
        starts.push(&args[i]);
        i += 1;
    }
    let default_start = Arg::Literal(".".into());
    if starts.is_empty() {
        starts.push(&default_start);
    }
    for s in &starts {
        sink.path(s, Read);
    }
    let scope_of = |sink: &Sink| -> Vec<String> {
        let mut scope = Vec::new();
        for s in &starts {
            if let (Some(t), Some(ds)) = (s.literal(), sink.dirs()) {
                for d in ds {
                    scope.push(paths::absolute(d, t, sink.cx.home));
                }
            }
        }
        scope
    };
    while i < args.len() {
        let t = args[i].text();
        i += 1;
        match t {
            "-delete" => {
                let scope = scope_of(sink);
                sink.out.unseen.push(Unseen::Computed { capability: Delete, scope, reason: "find -delete removes what it matches".into() });
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(f) = args.get(i) {
                    sink.fill(f);
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[i..].iter().position(|a| matches!(a.text(), ";" | "+")).map(|p| i + p).unwrap_or(args.len());
                // `{}` stands for each match: the command's path effects are computed.
                let argv: Vec<Arg> = args[i..end]
                    .iter()
                    .map(|a| if a.text().contains("{}") { Arg::Computed { text: a.text().to_string() } } else { a.clone() })
                    .collect();
                let mut inner = part_of(sink.out);
                run(&argv, sink.cwd, sink.cx, depth, &mut inner);
                starts_of(sink.out, &inner);
                sink.out.found.extend(std::mem::take(&mut inner.found));
                let scope = scope_of(sink);
                for e in inner.effects {
                    sink.out.effects.push(e);
                }
                for u in inner.unseen {
                    match u {
                        Unseen::Computed { capability, reason, .. } => {
                            sink.out.unseen.push(Unseen::Computed { capability, scope: scope.clone(), reason })
                        }
                        other => sink.out.unseen.push(other),
                    }
                }
                i = end + 1;
            }
            _ => {}
        }
    }
}

/// `trap ACTION SIGNAL…`: the action is a shell program run later, in this
/// shell; it is read like `bash -c`.
fn trap(args: &[Arg], cwd: &Cwd, cx: &Context, depth: usize, out: &mut Analysis) {
    let mut sink = Sink { cx, cwd, out };
    let args = match args.first().map(Arg::text) {
        Some("--") => &args[1..],
        _ => args,
    };
    match args {
        // `trap`, `trap -l`, `trap -p …`, `trap - SIG` (reset), `trap SIG` (reset)
        [] | [_] => {}
        [first, ..] if matches!(first.literal(), Some(t) if t.starts_with('-')) => {}
        [action, ..] => nested_program(action, &mut sink, depth),
    }
}

#[inline(never)]
fn shell(s: &Split, args: &[Arg], sink: &mut Sink, depth: usize) {
    let Some(pos) = args.iter().position(|a| a.literal().is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'))) else {
        // `bash script.sh [args]` reads the script; the kernel bounds what it does.
        match s.operands.first() {
            Some(script) => sink.path(script, Read),
            None => sink.opaque("a shell reading its commands from standard input".into()),
        }
        return;
    };
    match args.get(pos + 1) {
        Some(program) => nested_program(program, sink, depth),
        None => sink.opaque("a shell -c without a program".into()),
    }
}

/// A shell program given as a word (`bash -c WORD`, `trap WORD …`): read
/// and judged like the line itself when it is literal, opaque otherwise.
fn nested_program(program: &Arg, sink: &mut Sink, depth: usize) {
    match program {
        Arg::Literal(code) if depth < MAX_SHELL_DEPTH => {
            let Some(dirs) = sink.dirs().cloned() else {
                sink.opaque("a shell program run from a directory only the shell knows".into());
                return;
            };
            for d in dirs {
                match parse::parse(code, &d, sink.cx.home, sink.cx.host) {
                    Ok(items) => {
                        let inner_cx = Context { cwd: &d, ..*sink.cx };
                        let mut a = part_of(sink.out);
                        analyse_into(&items, &inner_cx, depth + 1, &mut a);
                        starts_of(sink.out, &a);
                        sink.out.effects.extend(a.effects);
                        sink.out.unseen.extend(a.unseen);
                        sink.out.found.extend(a.found);
                    }
                    Err(e) => sink.opaque(format!("the inner shell program cannot be read ({})", e.0)),
                }
            }
        }
        Arg::Literal(_) => sink.opaque("shell programs nested this deep are not read".into()),
        other => sink.opaque(format!("the shell program `{}` is computed when the command runs", other.text())),
    }
}

/// Python's `-m MODULE`, `-mMODULE` or a cluster of flags ending in it
/// (`-Im pytest`, `-um http.server`): the module and the words after it.
fn python_module<'a>(name: &str, t: &str, after: &'a [Arg]) -> Option<(Arg, &'a [Arg])> {
    let cluster = t.strip_prefix('-').filter(|c| name.starts_with("python") && !c.starts_with('-'))?;
    let at = cluster.find('m')?;
    // Only flags that take no value may come before it.
    if !cluster[..at].chars().all(|c| "bBdEhiIOPqRsSuvVx".contains(c)) {
        return None;
    }
    match &cluster[at + 1..] {
        "" => Some((after.first()?.clone(), &after[1..])),
        attached => Some((Arg::Literal(attached.to_string()), after)),
    }
}

#[inline(never)]
fn interpreter(name: &str, args: &[Arg], sink: &mut Sink) {
    let inline: &[&str] = match name {
        "node" | "nodejs" | "deno" | "bun" => &["-e", "--eval", "-p", "--print"],
        "perl" | "ruby" => &["-e", "-E"],
        "php" => &["-r"],
        "lua" => &["-e"],
        "Rscript" => &["-e"],
        "osascript" => &["-e"],
        "pwsh" | "powershell" => &["-c", "-Command", "-command", "-EncodedCommand"],
        _ => &["-c"],
    };
    // Options that take the next word as their value, per interpreter: that
    // word is not the script (it is judged as a read all the same). A word
    // starting with `-` is never taken as a value: it may be `-c`.
    let takes_value: &[&str] = match name {
        n if n.starts_with("python") => &["-W", "-X", "--check-hash-based-pycs"],
        "node" | "nodejs" | "deno" | "bun" => &["-r", "--require", "--import", "--loader", "--input-type", "-C", "--conditions"],
        "ruby" => &["-I", "-r"],
        _ => &[],
    };
    let mut value_next = false;
    for (i, a) in args.iter().enumerate() {
        let t = a.text();
        if std::mem::take(&mut value_next) && !t.starts_with('-') {
            sink.path(a, Read);
            continue;
        }
        if takes_value.contains(&t) {
            value_next = true;
            continue;
        }
        if inline.contains(&t) || (name.starts_with("python") && t.starts_with('-') && !t.starts_with("--") && t.ends_with('c') && t.len() <= 4) {
            sink.opaque(format!("`{name} {t}` runs inline code the command line does not show"));
            return;
        }
        if let Some((module, rest)) = python_module(name, t, &args[i + 1..]) {
            // A module runs code the line does not show, as `-c` does; the
            // ones this table reads like programs are read so.
            match module.literal() {
                Some("pip" | "pip3") => packages::pip(rest, sink),
                Some("venv" | "virtualenv") => {
                    for dir in split(rest, &["--prompt"]).operands {
                        sink.path_with(dir, create_or_write);
                    }
                }
                _ => sink.opaque(format!("`{name} -m {}` runs a module's code the command line does not show", module.text())),
            }
            return;
        }
        if name == "perl" && t.starts_with('-') && !t.starts_with("--") && t.contains('i') {
            // perl -pi -e CODE FILES: the files are edited in place (read,
            // written, replaced through a temp file); the code is inline.
            let mut j = i + 1;
            let mut files = Vec::new();
            while j < args.len() {
                let a = &args[j];
                if matches!(a.text(), "-e" | "-E") {
                    j += 2;
                    continue;
                }
                if !a.text().starts_with('-') {
                    files.push(a);
                }
                j += 1;
            }
            for f in files {
                sink.path(f, Read);
                sink.path(f, Write);
                in_place_replace(sink, name, f);
            }
            sink.opaque(format!("`{name} {t}` edits files with inline code"));
            return;
        }
        if !t.starts_with('-') {
            // The script: read, not executed (it is not execve'd).
            sink.path(a, Read);
            let _ = i;
            return;
        }
    }
    sink.opaque(format!("`{name}` reading its program from standard input"));
}
