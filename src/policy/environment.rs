//! Environment variables that name a door out of the fence.
//!
//! A fenced call inherits the host's environment. Some variables are only
//! addresses: of the DSH host's own control plane (its web server and the
//! session it serves), and of agents and buses that act for whoever
//! connects to their socket (ssh-agent signs with the user's key, the
//! session bus starts units, a terminal or editor server runs commands).
//! The runner refuses the sockets themselves ([`crate::runner`]); clearing
//! the variables too means a program fails plainly ("no agent") instead of
//! meeting a refused connection, and hidden code learns no address.

/// The host's control plane: always cleared. DSH 0.1.0-rc.8 puts these in
/// every bash call's environment (dsh-shell-env `collect`, dsh-web-app's
/// `web-runtime` contributor): `DSH_WEB_URL` is the loopback server that
/// answers cards, stores rules and switches a session's mode,
/// `DSH_SESSION_ID` the session to aim at, `DSH_SESSION_JSONL` its
/// transcript; `DSH_PTY_SESSION_ID` the terminal session of the `minimal`
/// preset's persistent shell. (`DSH_HOME` and `DSH_SHELL` only say where and
/// that DSH runs.)
pub const CONTROL_PLANE: &[&str] = &["DSH_WEB_URL", "DSH_SESSION_ID", "DSH_SESSION_JSONL", "DSH_PTY_SESSION_ID"];

/// Agents and servers reached through a unix socket the variable names:
/// cleared unless a rule or grant of the call names that socket (write),
/// e.g. `ssh-add`, or `git push` over ssh, granted by a person.
pub const AGENT_SOCKETS: &[&str] = &[
    // OpenSSH's agent (ssh-agent(1)).
    "SSH_AUTH_SOCK",
    // GnuPG's agent (old protocol; gpg-agent(1)), GNOME Keyring's control socket.
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    // D-Bus (dbus-daemon(1): "unix:path=…" or "unix:abstract=…").
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    // Terminal multiplexers and terminals that take commands on a socket.
    "TMUX",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "ZELLIJ_SOCKET_DIR",
    // Editors' servers (nvim --listen, VS Code's CLI and git helpers, emacs).
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "EMACS_SOCKET_NAME",
    // Container engines' daemons.
    "DOCKER_HOST",
    "CONTAINER_HOST",
];

/// Variables that only identify an agent named by another variable:
/// cleared with it.
pub const AGENT_COMPANIONS: &[(&str, &str)] = &[("SSH_AGENT_PID", "SSH_AUTH_SOCK"), ("TMUX_PANE", "TMUX")];

/// The socket path a variable's value names, when it names one by path:
/// a plain path, `unix:path=P` (D-Bus), `unix://P` (Docker), `P:pid:n`
/// (GnuPG's old form, tmux's `P,pid,n`).
pub fn socket_path(value: &str) -> Option<&str> {
    let v = value.split(';').next()?;
    let p = if let Some(rest) = v.strip_prefix("unix:path=") {
        rest.split(',').next()?
    } else if let Some(rest) = v.strip_prefix("unix://") {
        rest
    } else {
        v.split([':', ',']).next()?
    };
    p.starts_with('/').then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_spelling_of_a_socket_address_gives_its_path() {
        assert_eq!(socket_path("/tmp/ssh-x/agent.1"), Some("/tmp/ssh-x/agent.1"));
        assert_eq!(socket_path("unix:path=/run/user/1000/bus"), Some("/run/user/1000/bus"));
        assert_eq!(socket_path("unix:path=/run/user/1000/bus,guid=abc"), Some("/run/user/1000/bus"));
        assert_eq!(socket_path("unix:///var/run/docker.sock"), Some("/var/run/docker.sock"));
        assert_eq!(socket_path("/tmp/tmux-0/default,123,0"), Some("/tmp/tmux-0/default"));
        assert_eq!(socket_path("/run/user/0/gnupg/S.gpg-agent:0:1"), Some("/run/user/0/gnupg/S.gpg-agent"));
        assert_eq!(socket_path("unix:abstract=/tmp/dbus-x"), None, "an abstract name is no path");
        assert_eq!(socket_path("tcp://127.0.0.1:2375"), None);
    }
}
