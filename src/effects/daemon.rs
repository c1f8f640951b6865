//! Container clients (`docker`, `podman`, `nerdctl`, `docker compose`):
//! the client only talks to a daemon, and the daemon — outside this process
//! tree and beyond any fence of this call — does the work. Subcommands that
//! only ask the daemon what it has (`ps`, `logs`, `inspect`…) give it
//! nothing to run or mount; every other one hands it a command, an image
//! to build or a folder to mount, and is asked every time unless the user
//! stored a command grant for the client.

use super::sink::{Daemon, Sink, Unseen};
use crate::shell::parse::Arg;

/// Global options of the clients that take a value.
const GLOBAL_VALUES: &[&str] = &[
    "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey", "--url", "--connection",
    "--identity", "--root", "--runroot", "--storage-driver", "--namespace", "-n", "--address", "-a", "--cgroup-manager", "--runtime",
];
/// Options of `compose` (before its subcommand) that take a value.
const COMPOSE_VALUES: &[&str] = &["-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile", "--ansi", "--parallel", "--progress"];

/// Subcommands that report what the daemon has and start nothing.
const READS: &[&str] = &["ps", "images", "logs", "inspect", "version", "info", "top", "port", "stats", "history", "diff", "events", "search"];
/// `docker OBJECT VERB`: the verbs that only list or show.
const OBJECTS: &[&str] = &["image", "container", "network", "volume", "context", "system", "plugin", "node", "service", "stack", "secret", "config", "manifest", "buildx", "builder"];
const OBJECT_READS: &[&str] = &["ls", "list", "inspect", "history", "logs", "ps", "top", "port", "stats", "diff", "df", "info", "show", "version", "du"];
/// `compose SUB`: the subcommands that only report (`config` writes only with `-o`).
const COMPOSE_READS: &[&str] = &["ps", "logs", "config", "ls", "images", "top", "version", "port", "events", "stats"];

/// `NAME [globals] SUB …`: nothing when SUB only reports, else the command
/// escapes to the daemon (a command grant for NAME may carry the user's trust).
pub(super) fn client(name: &str, args: &[Arg], sink: &mut Sink) {
    let program = crate::paths::file_name(name);
    if !reports(name, args) {
        sink.out.unseen.push(Unseen::Escapes {
            program: Some(program.to_string()),
            reason: format!(
                "{program} hands this to its daemon, which runs containers, builds and mounts outside this process tree: no fence of this call reaches what the daemon runs"
            ),
        });
        return;
    }
    // docker's own daemon, only asked: its socket for this call (the line
    // names no other daemon: no -H/--host, -c/--context).
    if only_reports(name, args) {
        let reason = format!("{program} only asks the docker daemon what it has; the daemon is given nothing to run or mount");
        sink.out.unseen.push(Unseen::Socket { daemon: Daemon::Docker, program: program.to_string(), reads: Vec::new(), asks: false, reason });
    }
}

/// docker (or docker-compose) asking the default daemon what it has.
pub(super) fn only_reports(name: &str, args: &[Arg]) -> bool {
    let base = crate::paths::file_name(name);
    let elsewhere = args
        .iter()
        .map(Arg::text)
        .take_while(|t| t.starts_with('-'))
        .any(|t| matches!(t, "-H" | "--host" | "-c" | "--context") || t.starts_with("--host=") || t.starts_with("--context="));
    matches!(base, "docker" | "docker-compose") && !elsewhere && args.iter().all(|a| a.literal().is_some()) && reports(name, args)
}

/// Whether the subcommand only reports what the daemon has.
fn reports(name: &str, args: &[Arg]) -> bool {
    let compose_binary = name.ends_with("-compose");
    let (words, i) = past_options(args, if compose_binary { COMPOSE_VALUES } else { GLOBAL_VALUES });
    match words.get(i).map(String::as_str) {
        _ if compose_binary => compose_reads(&words[i..]),
        Some("compose") => {
            let (rest, j) = past_options(&args[i + 1..], COMPOSE_VALUES);
            compose_reads(&rest[j..])
        }
        Some(object) if OBJECTS.contains(&object) => {
            let verb = words.get(i + 1).map(String::as_str);
            verb.is_some_and(|v| OBJECT_READS.contains(&v)) && !(object == "system" && verb == Some("prune"))
        }
        Some(sub) => READS.contains(&sub) || matches!(sub, "--version" | "-v" | "help" | "--help"),
        None => true,
    }
}

fn compose_reads(words: &[String]) -> bool {
    match words.first().map(String::as_str) {
        Some("config") => !words.iter().any(|w| w == "-o" || w.starts_with("--output")),
        Some(sub) => COMPOSE_READS.contains(&sub),
        None => true,
    }
}

/// The words with literal text only, and where the first word past the
/// leading options is. A computed word is kept as an empty one, which no
/// table lists.
fn past_options(args: &[Arg], takes_value: &[&str]) -> (Vec<String>, usize) {
    let words: Vec<String> = args.iter().map(|a| a.literal().unwrap_or("").to_string()).collect();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if !w.starts_with('-') || w == "-" {
            break;
        }
        i += if takes_value.contains(&w.as_str()) { 2 } else { 1 };
    }
    (words, i.min(args.len()))
}
