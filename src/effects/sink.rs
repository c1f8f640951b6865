//! What a role records: the (path, capability) effects a command line has,
//! what it names but cannot locate or show ([`Unseen`]), and the commands
//! it starts ([`Started`]). [`Sink`] is a role's whole view of the world:
//! it resolves each path the way the kernel will open it (each possible
//! working directory, `..` from where the path really is, links the line
//! makes) and records the result in the [`Analysis`].

use crate::host::{Host, Landing, PathKind};
use crate::paths;
use crate::policy::capability::Capability::{self, *};
use crate::shell::parse::{Arg, Cwd};


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
    /// A cache `program` rewrites under `scope` that holds only what it
    /// regenerates (bytecode): granted for this call even beside code the
    /// line does not show, since nothing there is the user's.
    Regenerable { program: String, capabilities: Vec<Capability>, scope: Vec<String>, reason: String },
    /// A path through one of a process's links in /proc (`path` as written):
    /// it leads wherever that process points when it runs. No rule or grant
    /// can name where, so only the kernel fence bounds it.
    ProcessLink { capability: Capability, path: String },
    /// A path a program outside the table names (an operand, an option's
    /// value, or the folder it runs in): what the program does there the
    /// line does not show. Under a fence of write, create and delete the
    /// kernel bounds it ("execute only"); without one it is judged as a
    /// change to that path, allowed only inside the workspace (a
    /// persistence surface excepted) or where the policy grants it.
    Named { program: String, path: String },
    /// A command handed to something outside this process tree (a service
    /// manager, a scheduler, a terminal server, a container daemon): no
    /// fence of this call reaches it, so it is asked every time.
    /// `program`: the program that hands it over, when a command grant for
    /// it may carry the user's trust (docker), else `None`.
    Escapes { program: Option<String>, reason: String },
    /// A line that reaches a daemon through its unix socket to ask it
    /// something that changes no file (`docker ps`, `ssh -T git@host`
    /// through the agent): that socket is granted to the call when the line
    /// shows everything it runs. `reads`: what the program also reads to do
    /// it, granted with the socket (ssh's `known_hosts`, the key `ssh-add`
    /// hands the agent). `asks`: the user answers every time (a key handed
    /// over, the agent's keys changed), and the grants go with Allow once.
    Socket { daemon: Daemon, program: String, reads: Vec<String>, asks: bool, reason: String },
    /// A tool's own state under home that only it writes (rustup's
    /// `~/.rustup`, go's module cache, both checked against hashes when
    /// fetched): granted for the call when the line shows everything it
    /// runs, else asked as the program's need.
    OwnHome { program: String, capabilities: Vec<Capability>, dir: String, reason: String },
    /// Files a program replaces that the runner keeps a copy of first (`git
    /// restore FILE`): delete of exactly those entries for the call, when
    /// the line shows everything it runs, else asked as a discard.
    Kept { program: String, files: Vec<String>, reason: String },
    /// A removal the line asks for without naming what it removes, made by
    /// code it does not show (`make clean`'s recipe, `manage.py
    /// collectstatic` replacing what it collected before): one card up
    /// front, asked every time, that says so; Allow once carries
    /// `capabilities` under `scope` for that call alone.
    AsksEachTime { program: String, capabilities: Vec<Capability>, scope: Vec<String>, reason: String },
}

/// The daemons whose socket a call can be granted (`DecideRequest::sockets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Daemon {
    Docker,
    SshAgent,
}

impl Daemon {
    pub fn label(self) -> &'static str {
        match self {
            Daemon::Docker => "the docker daemon",
            Daemon::SshAgent => "the ssh agent",
        }
    }
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
    pub(super) found: Vec<MadeLink>,
    /// Set while a link's own name is recorded (ln creates the link, it does
    /// not go through it).
    pub(super) plain: bool,
    /// Set while git records the `.git` it makes for a new repository; any
    /// other `.git` a command makes is a gitlink, which takes content.
    pub(super) makes_repository: bool,
    /// The line starts a program that runs code its text does not show: one
    /// not in the table, an interpreter, a shell, an editor, a path.
    pub runs_code: bool,
    /// The line starts git (found on PATH by name).
    pub runs_git: bool,
    /// The line changes a repository through git: a git subcommand that
    /// writes it (`add`, `commit`, `submodule add`…), or a program that runs
    /// git to do so (`npm version` commits and tags).
    pub writes_repository: bool,
    /// The line sets configuration that names a command to run later (`git
    /// config core.hooksPath …`): asked every time, never under a command
    /// grant.
    pub configures_code: bool,
    /// What the line would lose for good (`git reset --hard` discards
    /// uncommitted changes): said on the card.
    pub discards: Vec<String>,
    /// Folders the line makes that are not there now (`mkdir -p a/b`, a new
    /// virtualenv, `cargo new x`), each as the kernel will open it: the
    /// runner makes those outside the workspace before the fence (Landlock
    /// and the read-only tree attach only to what exists) and lets the call
    /// remove what it made inside them (runner/arrivals.rs).
    pub folders: Vec<String>,
    /// Commands the roles found inside the one being read, for the walk to
    /// judge once the role is done (see [`Started`]).
    pub(super) started: Vec<Started>,
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
pub(super) enum Located {
    Path(String),
    /// Through a process's link in /proc (the spelling, for the reason).
    ProcessLink(String),
    /// Through a link this line makes to a computed target.
    Computed(String),
}

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

/// A command a role finds inside the one it reads (a wrapper's, `find
/// -exec`'s, `bash -c`'s, `flock`'s): the role records it here and the walk
/// judges it as soon as the role returns, so a role never calls back into
/// the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Started {
    pub(super) what: Start,
    /// Where it runs (a wrapper may change directory first).
    pub(super) cwd: Cwd,
    pub(super) depth: usize,
    pub(super) fold: Fold,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Start {
    /// The words of a command (`sudo rm x` starts `rm x`).
    Argv(Vec<Arg>),
    /// A shell program given as one word (`bash -c WORD`, `flock F -c WORD`).
    Shell(Arg),
}

/// How what the started command does counts for the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fold {
    /// As the line's own.
    AsIs,
    /// `find -exec`: `{}` stands for each match, so what it computes lies
    /// under the start points.
    ComputedUnder(Vec<String>),
    /// `xargs`: the operands arrive on standard input, so every path effect
    /// but the program's execute is computed, under the working directory.
    FromInput(Vec<String>),
    /// A command the words of a program outside the table spell (`mytool
    /// rm -rf ~/x`): whether that program runs it the line does not show.
    /// Anything it would do beyond reading makes the line inline code.
    SpelledBy(String),
    /// A command a variable names (`GIT_EDITOR=CMD`): it runs, so what it
    /// does counts; code it hides makes the line inline code.
    NamedBy(String),
}

pub(super) struct Sink<'a, 'b> {
    pub(super) cx: &'a Context<'b>,
    pub(super) cwd: &'a Cwd,
    pub(super) out: &'a mut Analysis,
}

impl Sink<'_, '_> {
    pub(super) fn dirs(&self) -> Option<&Vec<String>> {
        self.cwd.0.as_ref()
    }

    /// Record `cap` on the path `arg` names (resolved against each possible cwd).
    pub(super) fn path(&mut self, arg: &Arg, cap: Capability) {
        self.record(arg, |_, _| cap, false);
    }

    /// Record an effect whose capability depends on what is there now.
    pub(super) fn path_with(&mut self, arg: &Arg, cap: impl Fn(&str, PathKind) -> Capability) {
        self.record(arg, cap, true);
    }

    /// `ask_kind`: only then is the host asked what is at the path.
    pub(super) fn record(&mut self, arg: &Arg, cap: impl Fn(&str, PathKind) -> Capability, ask_kind: bool) {
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
                            // A `.git` made by anything but git's own init is
                            // a gitlink file, whose content moves the
                            // repository: judged as written.
                            let gitlink = c == Create && paths::file_name(&p) == ".git" && !self.out.makes_repository;
                            self.out.effects.push(Effect { path: p.clone(), capability: c });
                            if gitlink {
                                self.out.effects.push(Effect { path: p, capability: Write });
                            }
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

    /// A folder the line makes (a new virtualenv, `cargo new x`): created
    /// where it is missing now, written where it is there, and noted among
    /// the line's [`Analysis::folders`] when missing.
    pub(super) fn makes_folder(&mut self, arg: &Arg) {
        let before = self.out.effects.len();
        self.path_with(arg, create_or_write);
        self.note_folders(before);
    }

    /// `mkdir`'s operand: `caps` on it, noted as a folder when missing.
    pub(super) fn makes_folder_as(&mut self, arg: &Arg, caps: &[Capability]) {
        let before = self.out.effects.len();
        for &c in caps {
            self.path(arg, c);
        }
        self.note_folders(before);
    }

    /// The creates recorded since `before` whose path is missing now are
    /// folders the line makes.
    pub(super) fn note_folders(&mut self, before: usize) {
        let host = self.cx.host;
        let made: Vec<String> = self.out.effects[before..]
            .iter()
            .filter(|e| e.capability == Create && host.kind(&e.path) == PathKind::Missing)
            .map(|e| e.path.clone())
            .collect();
        for p in made {
            if !self.out.folders.contains(&p) {
                self.out.folders.push(p);
            }
        }
    }

    /// A file opened for writing: written if it exists, created (and, where
    /// the kernel checks the open separately, also written) if not.
    pub(super) fn fill(&mut self, arg: &Arg) {
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
    pub(super) fn path_if_missing(&mut self, arg: &Arg, cap: Capability) {
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
    pub(super) fn locate(&self, base: &str, s: &str, through_made: bool) -> Located {
        let joined = paths::join(base, s, self.cx.home);
        let no_links = !through_made || self.out.made.is_empty();
        if no_links && !joined.split('/').any(|seg| seg == "..") {
            return Located::Path(paths::normalize(&joined));
        }
        self.locate_joined(&joined, s, through_made, 0)
    }

    pub(super) fn locate_joined(&self, joined: &str, s: &str, through_made: bool, depth: usize) -> Located {
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
    pub(super) fn locate_name(&self, base: &str, s: &str) -> Located {
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
    pub(super) fn chdir(&self, d: &str) -> Cwd {
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
    pub(super) fn made_at(&self, p: &str) -> Option<Option<String>> {
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

    pub(super) fn computed(&mut self, cap: Capability, reason: String) {
        let scope = self.dirs().cloned().unwrap_or_default();
        self.out.unseen.push(Unseen::Computed { capability: cap, scope, reason });
    }

    /// Names only known at run time, created (and overwritten) inside `dir`.
    pub(super) fn unknown_names_in(&mut self, dir: Option<&Arg>, caps: &[Capability], why: &str) {
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

    pub(super) fn opaque(&mut self, reason: String) {
        self.out.unseen.push(Unseen::Opaque { reason });
    }

    /// An in-place editor writes a temp file beside `file` and renames it
    /// over the original: create and delete in the folder holding it (a
    /// rename needs delete of the source and create of the target), with
    /// names only the editor knows.
    pub(super) fn in_place_replace(&mut self, program: &str, file: &Arg) {
        let why = format!("{program} edits in place: its temp file is renamed over the original");
        self.renames_beside(program, file, &why);
    }

    /// Create and program-bound delete in the folder holding `file`.
    pub(super) fn renames_beside(&mut self, program: &str, file: &Arg, why: &str) {
        let Arg::Literal(f) = file else { return };
        let dir = match f.rfind('/') {
            Some(0) => "/".to_string(),
            Some(i) => f[..i].to_string(),
            None => ".".to_string(),
        };
        // The temp file and the delete are the editor's need, not the folder's:
        // "Always allow" grants them to the program (a command grant), so `rm`
        // and `touch` keep asking there.
        let scope: Vec<String> = self.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, &dir, self.cx.home)).collect()).unwrap_or_default();
        for capability in [Create, Delete] {
            self.out.unseen.push(Unseen::ProgramState { program: program.to_string(), capability, scope: scope.clone(), reason: why.to_string() });
        }
    }

    /// A tool's own state at `rel` under home (decide/: `OwnHome`); a
    /// folder the line makes when it is not there yet.
    pub(super) fn own_home(&mut self, program: &str, rel: &str, capabilities: &[Capability], reason: &str) {
        let dir = format!("{}/{rel}", self.cx.home.trim_end_matches('/'));
        if self.cx.host.kind(&dir) == PathKind::Missing && !self.out.folders.contains(&dir) {
            self.out.folders.push(dir.clone());
        }
        self.out.unseen.push(Unseen::OwnHome { program: program.to_string(), capabilities: capabilities.to_vec(), dir, reason: reason.to_string() });
    }

    /// A self-guarded rewrite by `program` under `dir` (relative to the
    /// working directory; `None`: the working directory), see
    /// [`Unseen::SelfGuarded`]. A computed folder gets nothing.
    pub(super) fn self_guarded(&mut self, program: &str, capabilities: &[Capability], dir: Option<&Arg>, reason: &str) {
        let Some(dir) = dir.map_or(Some("."), Arg::literal) else { return };
        let scope: Vec<String> = self.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, dir, self.cx.home)).collect()).unwrap_or_default();
        self.out.unseen.push(Unseen::SelfGuarded { program: program.to_string(), capabilities: capabilities.to_vec(), scope, reason: reason.to_string() });
    }

    /// One card up front for what `program` removes under `dir` (relative to
    /// the working directory), see [`Unseen::AsksEachTime`].
    pub(super) fn asks_each_time(&mut self, program: &str, capabilities: &[Capability], dir: &str, reason: &str) {
        let scope: Vec<String> = self.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, dir, self.cx.home)).collect()).unwrap_or_default();
        self.out.unseen.push(Unseen::AsksEachTime { program: program.to_string(), capabilities: capabilities.to_vec(), scope, reason: reason.to_string() });
    }

    /// A cache `program` regenerates in `dir` (relative to the working
    /// directory): granted for the call (decide/: `Regenerable`).
    pub(super) fn regenerable(&mut self, program: &str, capabilities: &[Capability], dir: &str, reason: &str) {
        let scope: Vec<String> = self.dirs().map(|ds| ds.iter().map(|c| paths::absolute(c, dir, self.cx.home)).collect()).unwrap_or_default();
        self.out.unseen.push(Unseen::Regenerable { program: program.to_string(), capabilities: capabilities.to_vec(), scope, reason: reason.to_string() });
    }

    /// `argv` starts here, as its own command (judged once the role returns).
    pub(super) fn start(&mut self, argv: &[Arg], depth: usize) {
        let cwd = self.cwd.clone();
        self.start_in(cwd, argv, depth, Fold::AsIs);
    }

    /// `argv` starts in `cwd`, its effects folded into the line's by `fold`.
    pub(super) fn start_in(&mut self, cwd: Cwd, argv: &[Arg], depth: usize, fold: Fold) {
        self.out.started.push(Started { what: Start::Argv(argv.to_vec()), cwd, depth, fold });
    }

    /// A shell program given as one word runs here (`bash -c WORD`): read
    /// and judged like the line itself when it is literal, opaque otherwise.
    pub(super) fn shell_program(&mut self, program: &Arg, depth: usize) {
        self.shell_program_as(program, depth, Fold::AsIs);
    }

    /// [`Sink::shell_program`], folded into the line by `fold`.
    pub(super) fn shell_program_as(&mut self, program: &Arg, depth: usize, fold: Fold) {
        self.out.started.push(Started { what: Start::Shell(program.clone()), cwd: self.cwd.clone(), depth, fold });
    }
}

/// Descriptors and devices that are not files a rule is about.
pub(super) fn is_stream_path(s: &str) -> bool {
    let descriptor = |prefix: &str| s.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    matches!(s, "-" | "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "/dev/random" | "/dev/urandom")
        || descriptor("/dev/fd/")
        || descriptor("/proc/self/fd/")
}

pub(super) fn create_or_write(_: &str, kind: PathKind) -> Capability {
    if kind == PathKind::Missing {
        Create
    } else {
        Write
    }
}

