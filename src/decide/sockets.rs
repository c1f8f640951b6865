//! A daemon's socket granted to one call (issues 32 and 33).
//!
//! The runner lets a fenced call reach a unix socket only when a rule or
//! grant of the call with write names it (runner/sockets.rs), and clears the
//! variable that points at it otherwise. A line that only asks a daemon
//! something that changes no file — `docker ps`, `ssh -T git@host` through
//! the agent, `ssh-add -l` — gets write on exactly that socket for the call,
//! when the line shows everything it runs: hidden code in the same call
//! would hold the socket too, and the docker daemon runs whatever it is
//! asked to, as root. Such a line with code it does not show asks every
//! time, and Allow once carries the socket. `ssh-add KEY` hands a key to
//! the agent: asked every time, the key read for that call alone (never a
//! stored rule on a credential store).

use crate::api::{DecideRequest, Mode, SocketNeed};
use crate::effects::{Analysis, Daemon, Unseen};
use crate::host::{Host, PathKind};
use crate::paths;
use crate::policy::capability::{Access, Capability};
use crate::policy::rules::Rule;

/// What the line asks of a daemon (an `Unseen::Socket`).
pub struct Need<'a> {
    pub daemon: Daemon,
    pub program: &'a str,
    pub reads: &'a [String],
    pub asks: bool,
    pub reason: &'a str,
}

/// How one need was judged.
pub struct Judged {
    pub granted: bool,
    /// Asked every time (the grants go with Allow once).
    pub asks: bool,
    pub sentence: String,
    pub public: SocketNeed,
}

/// Judge one need; the call's grants it carries go into `grants`.
pub fn judge(req: &DecideRequest, analysis: &Analysis, host: &dyn Host, need: Need, grants: &mut Vec<Rule>) -> Judged {
    let known = match need.daemon {
        Daemon::Docker => req.sockets.docker.as_deref(),
        Daemon::SshAgent => req.sockets.ssh_agent.as_deref(),
    };
    let path = known.and_then(socket_path);
    let name = match need.daemon {
        Daemon::Docker => "docker",
        Daemon::SshAgent => "ssh-agent",
    };
    let public = |granted: bool, sentence: &str| SocketNeed { daemon: name.into(), path: path.clone(), granted, sentence: sentence.to_string() };
    let Some(socket) = path.clone() else {
        let sentence = format!("{}: no socket of {} is known here, so `{}` will not reach it", need.reason, need.daemon.label(), need.program);
        return Judged { granted: false, asks: need.asks, public: public(false, &sentence), sentence };
    };
    if req.mode != Mode::WorkspaceWrite {
        // Full access runs unfenced; a read-only session is given no write.
        let sentence = format!("{}; `{}` reaches {} at {socket}", need.reason, need.program, need.daemon.label());
        return Judged { granted: req.mode == Mode::DangerFullAccess, asks: need.asks, public: public(req.mode == Mode::DangerFullAccess, &sentence), sentence };
    }
    let clear = shows_everything(analysis);
    let asks = need.asks || !clear;
    // A key handed over is read for the call only when nothing else in
    // the line could read it too.
    let reads: &[String] = if clear { need.reads } else { &[] };
    let mut also = String::new();
    for r in reads.iter().filter(|r| host.kind(r) != PathKind::Missing) {
        push(grants, r, Capability::Read);
        also.push_str(&format!(" and reads {r}"));
    }
    for s in spellings(&socket, host) {
        push(grants, &s, Capability::Write);
    }
    let sentence = if !asks {
        format!("{}, so {}'s socket {socket} is granted to this one command{also}", need.reason, need.daemon.label())
    } else if !clear {
        format!(
            "{}, but this line also runs code its text does not show, which would hold the socket too: allowing it grants {}'s socket {socket} to this one command",
            need.reason,
            need.daemon.label()
        )
    } else {
        format!("{}: allowing it grants {}'s socket {socket} to this one command{also}", need.reason, need.daemon.label())
    };
    Judged { granted: true, asks, public: public(true, &sentence), sentence }
}

/// Nothing in the line runs code its text does not show.
fn shows_everything(analysis: &Analysis) -> bool {
    !analysis.runs_code && !analysis.unseen.iter().any(|u| matches!(u, Unseen::Opaque { .. } | Unseen::NotOnPath { .. } | Unseen::ProcessLink { .. } | Unseen::Escapes { .. }))
}

/// The socket's path from a variable's value (`unix:///run/docker.sock`,
/// a plain path); a TCP `DOCKER_HOST` names no socket.
fn socket_path(v: &str) -> Option<String> {
    let p = v.strip_prefix("unix://").unwrap_or(v);
    p.starts_with('/').then(|| paths::normalize(p))
}

/// The socket as spelled (the runner keeps the variable naming it) and as
/// it really is (what the supervisor judges a connect by).
fn spellings(socket: &str, host: &dyn Host) -> Vec<String> {
    let real = host.canonical(socket);
    if real == socket {
        vec![real]
    } else {
        vec![socket.to_string(), real]
    }
}

fn push(grants: &mut Vec<Rule>, path: &str, cap: Capability) {
    match grants.iter_mut().find(|r| r.path == path) {
        Some(r) => r.access.set(cap, true),
        None => grants.push(Rule { id: String::new(), path: path.to_string(), recursive: false, access: Access::of(&[cap]), hits: 0, created_at: String::new() }),
    }
}
