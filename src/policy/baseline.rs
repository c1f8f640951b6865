//! The tables the precedence reads: reserved paths (tier 1), the platform
//! baseline (tier 3) and the credential stores that stay refused by default
//! (tier 4). Each reads like the spec's lists; docs/policy.md renders them.

use crate::policy::Platform;
use crate::policy::capability::Capability::{self, *};

/// Where a table entry is rooted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Abs(&'static str),
    /// Relative to the user's home.
    Home(&'static str),
    Workspace,
    /// Relative to the workspace.
    InWorkspace(&'static str),
    HarnessHome,
}

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub root: Root,
    pub recursive: bool,
    /// What the entry grants; everything else it leaves unsaid, except that
    /// the workspace and harness home speak "not granted" for the rest.
    pub grants: &'static [Capability],
    pub speaks_for_all: bool,
}

const RX: &[Capability] = &[Read, Execute];
const R: &[Capability] = &[Read];
const ALL: &[Capability] = &[Read, Write, Create, Delete, Execute];
const WORKSPACE: &[Capability] = &[Read, Write, Create, Execute];

const fn e(root: Root, grants: &'static [Capability]) -> Entry {
    Entry { root, recursive: true, grants, speaks_for_all: false }
}
const fn file(root: Root, grants: &'static [Capability]) -> Entry {
    Entry { root, recursive: false, grants, speaks_for_all: false }
}

/// Tier 1: the platform's reserved paths. write/create/delete refused for
/// everyone, rules included.
pub fn reserved(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Macos => &["/System", "/bin", "/sbin", "/usr", "/AppleInternal", "/private/var/db", "/dev"],
        Platform::Linux => &["/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc", "/sys", "/dev"],
    }
}

/// Holes in the reserved list.
pub fn reserved_exceptions(_platform: Platform) -> &'static [&'static str] {
    &["/usr/local"]
}

/// Temp directories: all five capabilities.
pub fn temp_dirs(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Macos => &["/tmp", "/private/tmp", "/var/folders", "/private/var/folders"],
        Platform::Linux => &["/tmp", "/var/tmp", "/dev/shm"],
    }
}

/// The DSH host's own folders in the system temp folder, by the prefix
/// each is made with (`mkdtemp`, one per host process): `dsh-spill-*` holds
/// every session's oversized tool results (`session-<hash of its id>/`),
/// `dsh-subprocess-*` the output of commands that overflow. The host writes
/// there during and after calls and hands the files back to the model, so
/// a folder swapped for a link would have the host write wherever it
/// leads, and another session's results are there to read. No call reads or
/// changes them; the temp folder around them stays as open as before.
pub const HOST_TEMP_PREFIXES: &[&str] = &["dsh-spill-", "dsh-subprocess-"];

/// A name the host gives one of its temp folders: a prefix of
/// [`HOST_TEMP_PREFIXES`] and the six letters or digits `mkdtemp` adds.
pub fn is_host_temp_name(name: &str) -> bool {
    HOST_TEMP_PREFIXES.iter().any(|p| name.strip_prefix(p).is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric())))
}

/// The host's temp folder `path` is or lies in: a folder named as
/// [`is_host_temp_name`] says inside one of the platform's temp folders (on
/// macOS the host's is a per-user `T` folder below `/var/folders`).
pub fn host_temp_folder(platform: Platform, path: &str) -> Option<String> {
    // Resolving `.` and `..` only drops segments: a path naming no such
    // folder anywhere is none (the common case, asked once per rule).
    if !HOST_TEMP_PREFIXES.iter().any(|p| path.contains(p)) {
        return None;
    }
    let path = crate::paths::normalize(path);
    let temps = temp_dirs(platform);
    let mut at = 0usize;
    for seg in path.split('/') {
        let end = at + seg.len();
        if is_host_temp_name(seg) {
            let parent = &path[..at.saturating_sub(1)];
            if temps.iter().any(|t| crate::paths::within(parent, t)) {
                return Some(path[..end].to_string());
            }
        }
        at = end + 1;
    }
    None
}

/// Why `workspace` is not taken as a workspace, when it is not: `/` or a
/// folder above the user's home (`/home`, `/Users`) would hand the workspace
/// baseline — read, write, create, execute — to the whole system or to every
/// user's files. Such a session gets no workspace grant; rules and cards
/// still work. Paths compare as given (callers pass each spelling).
pub fn workspace_refusal(workspace: &str, home: &str) -> Option<String> {
    let ws = crate::paths::normalize(workspace);
    let home = crate::paths::normalize(home);
    if ws == "/" {
        return Some("/ is not a workspace: nothing there is granted by default".into());
    }
    if home != ws && crate::paths::within(&home, &ws) {
        return Some(format!("{ws} is not a workspace (it holds the home folder {home}): nothing there is granted by default"));
    }
    None
}

/// Tier 3: the platform baseline, before mode narrowing.
pub fn baseline(platform: Platform) -> Vec<Entry> {
    let mut v = vec![
        Entry { root: Root::Workspace, recursive: true, grants: WORKSPACE, speaks_for_all: true },
        Entry { root: Root::HarnessHome, recursive: true, grants: R, speaks_for_all: true },
    ];
    v.extend_from_slice(TOOL_STATE);
    for t in temp_dirs(platform) {
        v.push(e(Root::Abs(t), ALL));
    }
    match platform {
        Platform::Macos => {
            for p in ["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec", "/System", "/Library/Apple", "/Library/Developer"] {
                v.push(e(Root::Abs(p), RX));
            }
            for p in ["/etc", "/private/etc", "/var", "/private/var", "/usr", "/usr/share", "/Library", "/Applications", "/dev", "/opt/homebrew"] {
                v.push(e(Root::Abs(p), R));
            }
        }
        Platform::Linux => {
            for p in ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix/store"] {
                v.push(e(Root::Abs(p), RX));
            }
            for p in ["/etc", "/proc", "/sys", "/dev", "/run", "/var", "/opt", "/snap"] {
                v.push(e(Root::Abs(p), R));
            }
        }
    }
    for p in toolchains(platform) {
        v.push(e(Root::Home(p), RX));
    }
    // Package-manager caches under home: content-addressed, regenerable,
    // written on every install (npm measured: `npm install` fails without).
    for p in HOME_TOOL_STATE {
        v.push(e(Root::Home(p), ALL));
    }
    for p in [".gitconfig", ".gitignore"] {
        v.push(file(Root::Home(p), R));
    }
    v.push(e(Root::Home(".config/git"), R));
    // Tool state under home that holds code, read and never written: black
    // unpickles its cache (a pickle written there would run in black's next
    // process), and fails outright when the cache is there but unreadable;
    // it goes on without writing one.
    for p in HOME_READ_ONLY_STATE {
        v.push(e(Root::Home(p), R));
    }
    v
}

/// Tool state under home that a tool must read to work but that holds
/// code a later run would execute: read only (see [`baseline`]).
pub const HOME_READ_ONLY_STATE: &[&str] = &[".cache/black"];

const D: &[Capability] = &[Delete];

/// Tool state inside the workspace: delete is granted by default because
/// these are regenerable and never user data, and the tools that own them
/// replace files atomically (write a temp file, rename it over the target),
/// which needs delete (issue 9's measurements: cargo, npm). `build/` is
/// deliberately absent: it is often hand-made, and `rm -rf build` asks.
///
/// `.git` is not here: it holds the project's history, which nothing
/// regenerates. Git's own calls get delete there (see [`REPOSITORY`]);
/// any other program's visible delete in it asks.
pub const TOOL_STATE: &[Entry] = &[
    e(Root::InWorkspace("target"), D),
    e(Root::InWorkspace("node_modules"), D),
    e(Root::InWorkspace(".venv"), D),
    e(Root::InWorkspace(".pytest_cache"), D),
    e(Root::InWorkspace(".mypy_cache"), D),
    e(Root::InWorkspace(".ruff_cache"), D),
];

/// The workspace's repository, relative to its root. A line that starts git
/// and nothing that runs hidden code gets delete in it for that call, in the
/// decision and in the call's fence: git replaces its index, refs and
/// objects through lock files and renames. Everything else (`rm -rf .git`,
/// `find .git -delete`, `python3 -c 'shutil.rmtree(".git/objects")'`) is
/// refused delete there by the kernel and asks at the gate.
pub const REPOSITORY: &str = ".git";

/// Persistence surfaces: files whose contents decide what runs later,
/// outside any fence, when the user runs git or opens a shell. Write, create
/// and delete on them are not granted unless a rule or grant names them (a
/// rule on a folder holding one does not), whatever tier would otherwise
/// grant it. In a repository, anywhere: a `hooks` folder or a `config` file
/// inside a `.git` folder, and `.gitmodules`. Under home: the shell's
/// start-up files and git's global configuration.
pub const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".config/fish",
    ".gitconfig",
    ".config/git/config",
    ".config/autostart",
    ".config/systemd/user",
];

/// Files in the workspace the DSH host reads when it starts, relative to
/// the workspace: `.env`, whose variables it puts into its own environment
/// and so into every later call's (dsh-app-boot `loadLayeredEnv`; its
/// blocklist lets through `GIT_CONFIG_PARAMETERS`, `OPENSSL_CONF`,
/// `npm_config_*`, providers' `*_BASE_URL`). A persistence surface like a
/// repository's hooks: only a rule or grant naming it opens it.
pub const LAUNCH_FILES: &[&str] = &[".env"];

/// The surfaces of a repository the runner shuts in the kernel, relative to
/// the folder holding `.git` (read-only bind mounts; see runner.rs).
pub const REPOSITORY_SURFACES: &[&str] = &[".git/hooks", ".git/config", ".gitmodules"];

/// Files inside a `.git` folder (at any depth: a worktree's own folder in
/// `.git/worktrees/NAME` too) whose contents decide what git runs or where
/// it finds its repository: its configuration, and the pointers that move
/// the repository elsewhere (gitrepository-layout(5): `commondir`, a
/// worktree's `gitdir`, `objects/info/alternates`).
pub const REPOSITORY_FILES: &[&str] = &["config", "config.worktree", "commondir", "gitdir", "alternates", "http-alternates"];

/// Whether `path` is a persistence surface inside a repository, and which:
/// the surface's own path (the `hooks` folder, a [`REPOSITORY_FILES`] file,
/// `.gitmodules`).
pub fn repository_surface(path: &str) -> Option<String> {
    let mut at = 0usize;
    let mut in_git = false;
    for seg in path.split('/') {
        let end = at + seg.len();
        if in_git && (seg == "hooks" || (REPOSITORY_FILES.contains(&seg) && end == path.len())) {
            return Some(path[..end].to_string());
        }
        if seg == ".git" {
            in_git = true;
        }
        if seg == ".gitmodules" && end == path.len() {
            return Some(path.to_string());
        }
        at = end + 1;
    }
    None
}

/// Caches under home that package managers write on every install (pnpm's
/// store where pnpm 7+ keeps it, `$XDG_DATA_HOME/pnpm/store`, and its
/// metadata cache; content-addressed and checked against integrity hashes
/// on read, like npm's), and uv's cache (wheels keyed by their hashes).
pub const HOME_TOOL_STATE: &[&str] = &[".npm", ".cache/pip", ".cache/go-build", ".cache/yarn", ".pnpm-store", ".local/share/pnpm/store", ".cache/pnpm", ".cache/uv"];

/// Caches under home of packages a package manager downloads and later
/// runs with no integrity check (npx and `npm exec` from `~/.npm/_npx`,
/// `pnpm dlx` from its dlx cache): code planted there runs at the user's
/// next `npx`. Only the package manager's own call writes them (the
/// decision grants the cache for that call; the runner shuts it read-only
/// for every other), and a visible write by anything else asks, as on a
/// persistence surface.
/// `(folder under home, the package manager's programs)`.
pub const CODE_CACHES: &[(&str, &[&str])] = &[(".npm/_npx", &["npx", "npm"]), (".cache/pnpm/dlx", &["pnpm", "pnpx"])];

/// User-installed toolchains under home: programs and settings, not credentials.
pub fn toolchains(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Macos => &[
            ".nvm", ".local", ".cargo", ".rustup", ".bun", ".deno", ".volta", ".pyenv", ".rbenv", ".sdkman", ".go", ".asdf", ".gem", "Library/pnpm",
        ],
        Platform::Linux => &[
            ".nvm", ".local", ".cargo", ".rustup", ".bun", ".deno", ".volta", ".pyenv", ".rbenv", ".sdkman", ".go", "go", ".asdf", ".gem",
        ],
    }
}

/// Where a credential store lives: under the user's home, at an absolute
/// path, or in the harness home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Home(&'static str),
    Abs(&'static str),
    Harness(&'static str),
}

/// One credential store and where its place is documented.
#[derive(Debug, Clone, Copy)]
pub struct Store {
    pub at: At,
    pub source: &'static str,
}

const fn home(p: &'static str, source: &'static str) -> Store {
    Store { at: At::Home(p), source }
}
const fn abs(p: &'static str, source: &'static str) -> Store {
    Store { at: At::Abs(p), source }
}

/// Tier 4 exception: credential stores. Not granted by default and not
/// grantable by a card click; only a rule written for one (or inside it)
/// opens it. They stay shut where a baseline root holds them (git's
/// `~/.config/git`, `~/.local`, `/etc`, `/run`, the harness home): the
/// decision refuses them, and the fence compiles those roots around them
/// (Landlock grants the folder's other entries; Seatbelt denies the store
/// after the allow). Each row says where the place is documented.
pub const CREDENTIAL_STORES: &[Store] = &[
    home(".ssh", "ssh(1): identity files, known hosts, config"),
    home(".aws", "AWS CLI: credentials and config"),
    home(".gnupg", "gpg(1): private keys and trust database"),
    home(".config/gh", "GitHub CLI: hosts.yml holds the OAuth token"),
    home(".config/hub", "hub: its OAuth token"),
    home(".config/glab-cli", "GitLab CLI: config.yml holds the token"),
    home(".config/gcloud", "Google Cloud SDK: credentials.db, access tokens"),
    home(".config/op", "1Password CLI: its session and config"),
    home(".azure", "Azure CLI: msal token cache"),
    home(".kube", "kubectl: kubeconfig with client keys and tokens"),
    home(".docker/config.json", "docker login: registry auths"),
    home(".config/containers/auth.json", "containers-auth.json(5): podman, buildah, skopeo logins"),
    home(".netrc", "netrc(5): passwords for curl, git, ftp"),
    home(".git-credentials", "git-credential-store(1): the default file"),
    home(".config/git/credentials", "git-credential-store(1): the $XDG_CONFIG_HOME/git/credentials file, inside ~/.config/git"),
    home(".npmrc", "npm: _authToken"),
    home(".pypirc", "twine: PyPI passwords and tokens"),
    home(".pgpass", "libpq: PostgreSQL passwords"),
    home(".my.cnf", "MySQL client: password"),
    home(".vault-token", "HashiCorp Vault: the CLI's token"),
    home(".password-store", "pass(1): the encrypted store"),
    home(".config/rclone/rclone.conf", "rclone: remotes' tokens and keys"),
    home(".local/share/keyrings", "GNOME Keyring: the keyring files"),
    home(".local/share/password-store", "pass(1) with PASSWORD_STORE_DIR under ~/.local"),
    home(".local/share/gopass", "gopass: its stores, inside ~/.local"),
    home(".local/share/remmina", "Remmina: saved connections and their passwords, inside ~/.local"),
    home(".local/share/TelegramDesktop", "Telegram Desktop: its session keys, inside ~/.local"),
    home(".gnome2/keyrings", "GNOME Keyring: the older location"),
    home(".local/share/kwalletd", "KWallet (KDE Frameworks 5 and later): the wallets"),
    home(".kde/share/apps/kwallet", "KWallet (KDE 4): the wallets"),
    home(".kde4/share/apps/kwallet", "KWallet (KDE 4): the wallets"),
    home(".local/share/python_keyring", "keyrings.alt: keyring_pass.cfg and crypted_pass.cfg, inside ~/.local"),
    home(".local/share/jupyter/runtime", "jupyter --runtime-dir: kernel connection files with their HMAC keys, inside ~/.local"),
    home("Library/Jupyter/runtime", "jupyter --runtime-dir on macOS"),
    home(".cargo/credentials", "cargo login: the registry token, inside ~/.cargo"),
    home(".cargo/credentials.toml", "cargo login: the registry token, inside ~/.cargo"),
    home(".gem/credentials", "gem push: the API key, inside ~/.gem"),
    home(".terraform.d/credentials.tfrc.json", "terraform login: API tokens"),
    home("Library/Keychains", "macOS: the login keychains"),
    // What was typed, passwords and tokens included.
    home(".bash_history", "bash(1): HISTFILE"),
    home(".zsh_history", "zsh: the usual HISTFILE"),
    home(".zhistory", "zsh: another usual HISTFILE"),
    home(".histfile", "zsh: the newuser HISTFILE"),
    home(".sh_history", "ksh, sh: HISTFILE"),
    home(".local/share/fish/fish_history", "fish: its history file, inside ~/.local"),
    home(".local/share/zsh/history", "zsh: HISTFILE under $XDG_DATA_HOME, inside ~/.local"),
    home(".local/state/zsh/history", "zsh: HISTFILE under $XDG_STATE_HOME, inside ~/.local"),
    home(".local/state/bash/history", "bash: HISTFILE under $XDG_STATE_HOME, inside ~/.local"),
    home(".local/state/python_history", "python: PYTHON_HISTORY under $XDG_STATE_HOME, inside ~/.local"),
    home(".local/share/atuin", "atuin: history.db and the key that encrypts its sync, inside ~/.local"),
    home(".python_history", "python: the REPL's history"),
    home(".node_repl_history", "node: the REPL's history"),
    home(".irb_history", "irb: the REPL's history"),
    home(".psql_history", "psql: its history"),
    home(".mysql_history", "mysql: its history"),
    home(".sqlite_history", "sqlite3: its history"),
    home(".rediscli_history", "redis-cli: its history"),
    home(".dbshell", "mongo shell: its history"),
    home(".lesshst", "less: search and shell-command history"),
    // The harness's own secrets, inside the harness home it may read.
    Store { at: At::Harness(".credentials.yaml"), source: "DSH (dsh-credentials-local): model providers' keys, inside the harness home" },
    Store { at: At::Harness(".env"), source: "DSH (dsh-app-boot): the harness home's .env, loaded into the host's environment at start (providers' keys)" },
    // What the harness keeps of its sessions: a key a session once printed
    // under a temporary rule stays in its log.
    Store { at: At::Harness("sessions"), source: "DSH (session-persistence-jsonl): every session's log (zstd JSONL), with all it printed" },
    Store { at: At::Harness("storages"), source: "DSH web (storage-json): the web app's storages" },
    Store { at: At::Harness("attachments"), source: "DSH (attachment-local): files and images attached to sessions" },
    // System places, inside /etc and /run, which the baseline opens for reading.
    abs("/etc/shadow", "shadow(5): password hashes"),
    abs("/etc/shadow-", "shadow(5): the backup"),
    abs("/etc/gshadow", "gshadow(5): group password hashes"),
    abs("/etc/gshadow-", "gshadow(5): the backup"),
    abs("/etc/master.passwd", "macOS and BSD: password hashes"),
    abs("/etc/ssh/ssh_host_rsa_key", "sshd(8): the host's private keys (ssh-keygen -A makes these four)"),
    abs("/etc/ssh/ssh_host_ecdsa_key", "sshd(8): the host's private keys"),
    abs("/etc/ssh/ssh_host_ed25519_key", "sshd(8): the host's private keys"),
    abs("/etc/ssh/ssh_host_dsa_key", "sshd(8): the host's private keys"),
    abs("/etc/ssl/private", "Debian ssl-cert: TLS private keys"),
    abs("/etc/letsencrypt", "certbot: account and certificate keys"),
    abs("/etc/krb5.keytab", "Kerberos: the host's keys"),
    abs("/etc/NetworkManager/system-connections", "NetworkManager: Wi-Fi and VPN secrets"),
    abs("/etc/wireguard", "WireGuard: private keys"),
    abs("/etc/ipsec.secrets", "strongSwan/Libreswan: pre-shared keys"),
    abs("/etc/openvpn", "OpenVPN: keys and credentials beside its configs"),
    abs("/etc/pki/tls/private", "RHEL, Fedora: TLS private keys"),
    abs("/etc/mysql/debian.cnf", "Debian MySQL: the maintenance account's password"),
    abs("/etc/rancher/k3s/k3s.yaml", "k3s: the cluster admin's kubeconfig (its client key)"),
    abs("/etc/rancher/rke2/rke2.yaml", "RKE2: the cluster admin's kubeconfig"),
    abs("/var/lib/rancher/k3s/server/token", "k3s: the token that joins nodes to the cluster"),
    abs("/var/lib/rancher/k3s/server/tls", "k3s: the cluster's CA and client keys"),
    abs("/var/lib/rancher/k3s/server/cred", "k3s: the control plane's kubeconfigs and passwords"),
    abs("/etc/kubernetes/admin.conf", "kubeadm: the cluster admin's kubeconfig"),
    abs("/etc/kubernetes/super-admin.conf", "kubeadm: the break-glass kubeconfig"),
    abs("/etc/kubernetes/pki", "kubeadm: the cluster's CA and service-account keys"),
    abs("/run/secrets", "Docker and Compose secrets; Kubernetes mounts here too"),
    abs("/var/run/secrets", "Kubernetes: the service account's token (kubernetes.io/serviceaccount/token)"),
    abs("/run/user", "the per-user runtime folders: agent and keyring sockets, containers/auth.json"),
    abs("/Library/Keychains", "macOS: the system keychain"),
];

/// System folders where deployed applications keep their secrets in a
/// `.env` file (`/var/www/html/.env`, `/opt/app/.env`, `/srv/app/.env`),
/// which the baseline opens for reading. A `.env` or `.env.*` file below
/// one, outside the workspace, is a credential store: the decision refuses
/// it by name, the Linux fence compiles around each one the runner finds
/// two folders deep (runner/dotenv.rs), Seatbelt denies the pattern.
pub fn dotenv_roots(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Linux => &["/etc", "/opt", "/srv", "/var/www"],
        Platform::Macos => &["/etc", "/private/etc", "/opt", "/srv", "/var/www", "/private/var/www"],
    }
}

/// A file name `.env` files go by: `.env`, `.env.production`, `.env.local`…
pub fn is_dotenv(name: &str) -> bool {
    name == ".env" || (name.starts_with(".env.") && name.len() > ".env.".len())
}

/// Whether `path` is a `.env` file below a system folder of [`dotenv_roots`]
/// (the caller leaves out the workspace's own).
pub fn system_dotenv(platform: Platform, path: &str) -> bool {
    is_dotenv(crate::paths::file_name(path)) && dotenv_roots(platform).iter().any(|r| crate::paths::within(path, r) && path != *r)
}

/// Every credential store as an absolute path, for this home and harness
/// home (a harness-home store only when there is one).
pub fn credential_paths(home: &str, harness_home: &str) -> Vec<String> {
    let home = home.trim_end_matches('/');
    let harness = harness_home.trim_end_matches('/');
    CREDENTIAL_STORES
        .iter()
        .filter_map(|s| match s.at {
            At::Home(p) => Some(format!("{home}/{p}")),
            At::Abs(p) => Some(p.to_string()),
            At::Harness(p) => (!harness.is_empty()).then(|| format!("{harness}/{p}")),
        })
        .collect()
}

/// The user data areas the macOS read fence closes first (spec: 读围栏).
pub fn read_fence_roots(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Macos => &["/Users", "/Volumes"],
        Platform::Linux => &["/home", "/root", "/mnt", "/media"],
    }
}

/// Devices every program reads and writes (terminals, the bit bucket). The
/// decision ignores them as redirect targets; the fence opens them by name.
pub const DEVICE_STREAMS: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"];
