//! The tables the precedence reads: reserved paths (tier 1), the platform
//! baseline (tier 3) and the credential stores that stay refused by default
//! (tier 4). Each reads like the spec's lists; README.md renders them.

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
    v
}

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

/// The surfaces of a repository the runner shuts in the kernel, relative to
/// the folder holding `.git` (read-only bind mounts; see runner.rs).
pub const REPOSITORY_SURFACES: &[&str] = &[".git/hooks", ".git/config", ".gitmodules"];

/// Whether `path` is a persistence surface inside a repository, and which:
/// the surface's own path (the `hooks` folder, the `config` file,
/// `.gitmodules`).
pub fn repository_surface(path: &str) -> Option<String> {
    let mut at = 0usize;
    let mut in_git = false;
    for seg in path.split('/') {
        let end = at + seg.len();
        if in_git && (seg == "hooks" || ((seg == "config" || seg == "config.worktree") && end == path.len())) {
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

/// Folders the runner makes before the fence goes up (Landlock fences what
/// exists), when the workspace shows the tool that owns them.
pub const PREPARE: &[(&str, &str)] = &[("Cargo.toml", "target"), ("package.json", "node_modules")];

/// Caches under home that package managers write on every install.
pub const HOME_TOOL_STATE: &[&str] = &[".npm", ".cache/pip", ".cache/go-build", ".cache/yarn", ".pnpm-store"];

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

/// Tier 4 exception: credential stores under home. Not granted by default and
/// not grantable by a card click; only an explicit rule opens them.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/op",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    "Library/Keychains",
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
];

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
