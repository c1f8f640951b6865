//! The environment a line sets (issue 34, family 3): `NAME=value` before a
//! command or alone, `export`/`declare`/`local`, `env NAME=value`, `make
//! NAME=value`. Each variable the table names ([`ENVIRONMENT`]) is judged as
//! what it names: a command line as that command, code loaded or a changed
//! `PATH` as inline code, the repository or a temp folder as that path.
//!
//! [`ENVIRONMENT`]: super::table::ENVIRONMENT

use super::sink::{Fold, Sink, Unseen};
use super::table::{variable, Var};
use crate::paths;
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;

/// Judge each `(name, value)` the line assigns, where it assigns it.
#[inline(never)]
pub(super) fn assignments(list: &[(String, Arg)], sink: &mut Sink, depth: usize) {
    for (name, value) in list {
        if value.literal().is_some_and(holds_code_in_subscript) {
            sink.opaque(format!("`{name}` holds a subscript with a command substitution, which arithmetic on it runs"));
        }
        let Some(var) = variable(name) else { continue };
        if value.literal() == Some("") {
            continue;
        }
        match var {
            Var::Path => sink.opaque(format!("`{name}` is set: which program each later name starts only the shell's lookup knows")),
            Var::Loads => sink.opaque(format!("`{name}` makes the programs it reaches load code the line does not show")),
            Var::Config => sink.opaque(format!("`{name}` points programs at configuration that may name commands to run")),
            Var::Prompt if value.text().contains("$(") || value.text().contains('`') => {
                sink.opaque(format!("`{name}` is a prompt whose command substitutions the shell runs when it expands it"))
            }
            Var::Prompt => {}
            Var::Command => match value.literal() {
                // LESSOPEN='|cmd %s': less pipes the command's output.
                Some(t) => {
                    let line = Arg::Literal(t.trim_start_matches('|').replace("%s", "FILE"));
                    sink.shell_program_as(&line, depth, Fold::NamedBy(format!("`{name}` names a command a program runs")));
                }
                None => sink.opaque(format!("`{name}` names a command computed when the line runs")),
            },
            Var::Repository if name == "GIT_INDEX_FILE" => sink.fill(value),
            Var::Repository | Var::Worktree => {
                let why = format!("`{name}` moves git's repository or worktree to `{}`", value.text());
                sink.unknown_names_in(Some(value), &[Create, Write], &why);
                let scope: Vec<String> = match (value.literal(), sink.dirs()) {
                    (Some(d), Some(ds)) => ds.iter().map(|c| paths::absolute(c, d, sink.cx.home)).collect(),
                    _ => Vec::new(),
                };
                sink.out.unseen.push(Unseen::ProgramState { program: "git".into(), capability: Delete, scope, reason: why });
            }
            Var::Temp => {
                sink.unknown_names_in(Some(value), &[Create, Write, Delete], &format!("`{name}` makes programs put their temp files in `{}`", value.text()))
            }
        }
    }
}

/// Whether the variable `name`, wherever it comes from, names code a
/// program runs or loads, configuration that may name commands, or where
/// git finds its repository or worktree (the table's rows but `PATH`, the
/// temp folders and the prompts). The plugin removes such a variable from
/// every fenced call when the host took it from the workspace's `.env`.
pub fn names_code(name: &str) -> bool {
    matches!(variable(name), Some(Var::Command | Var::Loads | Var::Config | Var::Repository | Var::Worktree))
}

/// `a[$(cmd)]`: bash evaluates an array subscript as arithmetic wherever a
/// name is read as one (`let`, `declare`, `read`, `printf -v`, `[[ -v ]]`,
/// `unset`, `$((x))` of a variable holding it), and that runs the command
/// substitution inside, quoted or not.
pub(super) fn holds_code_in_subscript(text: &str) -> bool {
    text.find('[').is_some_and(|at| {
        let inside = &text[at..];
        inside.contains("$(") || inside.contains('`')
    })
}

/// `NAME=value` words (env's, sudo's, make's operands): the assignments, and
/// how many words they were.
pub(super) fn leading_assignments(words: &[Arg]) -> Vec<(String, Arg)> {
    words
        .iter()
        .filter_map(|w| {
            let t = w.literal().unwrap_or(w.text());
            let (name, value) = t.split_once('=')?;
            let valid = !name.is_empty() && !name.starts_with('-') && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '%'));
            valid.then(|| (name.to_string(), if w.literal().is_some() { Arg::Literal(value.to_string()) } else { Arg::Computed { text: value.to_string() } }))
        })
        .collect()
}
