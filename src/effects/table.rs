//! The program effects table: what each program does to its operands and
//! which of its options take a value, one row per program family, and the
//! option tables that name files a program fills, updates, runs or makes
//! names in. Reads like the spec's list; `super` applies it.

use crate::policy::capability::Capability::{self, *};

/// Shell builtins and keywords: no binary is started.
pub(super) const BUILTINS: &[&str] = &[
    "cd", "pushd", "popd", "dirs", "echo", "printf", "test", "[", "[[", "true", "false", ":", "export",
    "set", "unset", "read", "pwd", "exit", "return", "shift", "local", "declare", "typeset", "readonly",
    "alias", "unalias", "type", "hash", "wait", "jobs", "fg", "bg", "kill", "trap", "umask", "let",
    "getopts", "break", "continue", "shopt", "builtin", "history", "disown", "ulimit", "help", "mapfile",
    "readarray", "caller", "compgen", "complete", "enable", "logout", "suspend", "fc", "bind",
];

/// What a program does with its operands (after options are set aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Every operand gets these capabilities.
    Each(&'static [Capability]),
    /// Reads its operands, or the working directory when there are none.
    ListOrCwd,
    /// Write if the operand exists, create if not (touch, tee, truncate).
    CreateOrWrite,
    /// The first operand is not a path (a mode, an owner), the rest are written.
    WriteAfterFirst,
    /// The first operand is not a path (a pattern, a program, a filter), the
    /// rest are read, unless an option supplied it (`-e`, `-f`).
    ReadAfterFirst,
    /// Sources read, last operand (or `-t DIR`) created or written.
    Copy,
    /// Sources deleted, last operand (or `-t DIR`) created.
    Move,
    /// The last operand (or `DIR/name`) is created.
    Link,
    /// `mknod NAME TYPE …`: only the first operand is a path.
    CreateFirst,
    /// `uniq [in [out]]`: the first read, the second written.
    InOut,
    Sed,
    /// vim and friends: operands read and saved; saving renames the original
    /// to a backup and swap files come and go beside it, which needs create
    /// and delete in each file's folder (the editor's need, program-bound).
    Vim,
    /// `ed FILE`: read, and written back in place.
    Ed,
    Dd,
    Curl,
    Wget,
    Tar,
    Unzip,
    Zip,
    Compress,
    Find,
    /// Subcommands that rewrite the worktree replace tracked files.
    Git,
    Shell,
    Interpreter,
    /// `eval`, `source`, `.`: shell code the text does not show.
    Opaque,
    Shred,
    Sort,
    Jq,
    /// `yq`: a `jq` filter, and with `-i` the files are rewritten in place.
    Yq,
    /// `split`/`csplit`: the input read, the pieces made from a prefix
    /// (names only the program knows, in the prefix's folder).
    Split,
    /// `mktemp`: a file or folder made from a template, in `-p DIR`,
    /// `$TMPDIR` or the working directory.
    Mktemp,
    /// `patch`: the files the diff names, under the working directory (or
    /// `-d DIR`), or the one `-o FILE`.
    Patch,
    /// `xxd [in [out]]`, its options read as whole words.
    Xxd,
    /// Archivers whose first word is a command: `7z`, `ar`, `cpio`, `unrar`.
    Archiver,
    /// Package managers and builders (`packages::package_manager`): what
    /// an option or operand names, and opaque where they install into a
    /// place their configuration chooses.
    Packages,
    /// `flock FILE cmd…` / `flock FILE -c CMD`.
    Flock,
    /// `script [-c CMD] [FILE]`: the session is logged to FILE.
    Script,
    /// `watch CMD…`: the words joined and run by `sh -c` (exec'd with `-x`).
    Watch,
    /// `su`/`runuser`: `-c CMD` through the user's shell, or `-u USER cmd…`.
    SwitchUser,
    /// Starts what the command line cannot show (the reason says what).
    Hidden(&'static str),
    /// Hands its command to a process outside this tree (the reason says which).
    Escapes(&'static str),
    /// `ssh HOST [CMD]`: sshd starts the command on the other side.
    RemoteShell,
    /// `ssh-add`: lists the agent's keys, or hands it the keys the line names.
    SshAdd,
    /// Compilers: sources read, `-o FILE` filled (`tools::compiler`).
    Compiler,
    /// `sqlite3 DB [SQL]`: the database read and written.
    Sqlite,
    /// `ssh-keygen`: the key file `-f` names, made, read or rewritten.
    SshKeygen,
    /// `openssl SUB`: `-in` read, `-out`/`-keyout` filled.
    Openssl,
    /// `history -w|-a|-r|-n [FILE]`.
    History,
    /// `make`: with `-C DIR`/`-f FILE`, recipes the line does not show.
    Make,
    /// A container client (`daemon::client`): subcommands that only ask the
    /// daemon what it has start nothing; the rest hand it a command to run.
    Daemon,
    /// A multi-call binary (`busybox rm …`, `coreutils --coreutils-prog=rm
    /// …`): judged as the program it is asked to be.
    MultiCall,
    /// A debugger (`gdb --args CMD…`, `lldb -- CMD…`): the command judged as
    /// itself, and the debugger's own commands and init files opaque.
    Debugger,
    /// Runs the shell commands its operands and options spell (`hyperfine
    /// 'CMD' --prepare 'CMD'`, `watchexec -- CMD`, `nodemon --exec CMD`,
    /// `entr CMD`): each judged as the line itself.
    Runs,
    /// Sets an environment from files the line does not show, then starts
    /// a command (`direnv exec DIR CMD`, `mise exec -- CMD`, `nix-shell
    /// --run CMD`, `pipenv run CMD`): opaque, and the command judged too.
    Environment,
    /// `gio SUB …`: its file subcommands read as the programs they are.
    Gio,
    /// In-place converters (`dos2unix`, `unix2dos`): each file rewritten
    /// through a temp file beside it, or `-n IN OUT`.
    Convert,
    /// Hands its work to something outside this process tree (the reason
    /// says what), unless its first word only asks (listed).
    EscapesUnless(&'static str, &'static [&'static str]),
    /// Hands its work outside this process tree when one of these words
    /// is given (`kitty @ …`, `wezterm cli …`).
    EscapesWith(&'static str, &'static [&'static str]),
    /// `kill`, `pkill`, `killall`: signals processes (`kill -1`: every one).
    Signals,
}

/// How a wrapper finds the program it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrapper {
    /// Options (some taking values), then the command.
    Options,
    /// `env`: NAME=value words and options (`-C DIR` changes directory).
    Env,
    /// `timeout [opts] DURATION cmd`.
    Timeout,
    /// `command`: `-v`/`-V` only look the name up.
    Command,
    /// `xargs`: the command's operands come from input, so its path
    /// effects are computed.
    Xargs,
    /// `chrt [opts] PRIORITY cmd`, `taskset [opts] MASK cmd`: one operand
    /// before the command (chrt's only when it is a number); with `-p` the
    /// operand is a running process and nothing is started.
    Leading,
    /// `setarch ARCH [opts] cmd`, `faketime [opts] TIME cmd`: one operand
    /// always before the command, options again after it.
    Operand,
}

pub(super) struct Program {
    pub(super) names: &'static [&'static str],
    /// Options whose value is the next word (or attached).
    pub(super) takes_value: &'static [&'static str],
    pub(super) kind: Kind,
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Role(Role),
    Wrapper(Wrapper),
}

/// The program effects table. Keep it reading like the spec's list.
pub(super) const PROGRAMS: &[Program] = &[
    // Delete their operands.
    Program { names: &["rm", "rmdir", "unlink"], takes_value: &[], kind: Kind::Role(Role::Each(&[Delete])) },
    Program { names: &["shred"], takes_value: &["-n", "-s", "--iterations", "--size", "--random-source"], kind: Kind::Role(Role::Shred) },
    // Create their operands.
    Program { names: &["mkdir"], takes_value: &["-m", "--mode"], kind: Kind::Role(Role::Each(&[Create])) },
    Program { names: &["mkfifo"], takes_value: &["-m", "--mode"], kind: Kind::Role(Role::Each(&[Create])) },
    Program { names: &["mknod"], takes_value: &["-m", "--mode"], kind: Kind::Role(Role::CreateFirst) },
    Program { names: &["touch"], takes_value: &["-d", "-t", "-r", "--date", "--reference", "--time"], kind: Kind::Role(Role::CreateOrWrite) },
    Program { names: &["tee"], takes_value: &[], kind: Kind::Role(Role::CreateOrWrite) },
    Program { names: &["truncate"], takes_value: &["-s", "-r", "--size", "--reference"], kind: Kind::Role(Role::CreateOrWrite) },
    Program { names: &["chmod", "chown", "chgrp"], takes_value: &["--reference", "--from"], kind: Kind::Role(Role::WriteAfterFirst) },
    // chcon's context is its first operand unless -u/-r/-t/-l give parts of it.
    Program { names: &["chcon"], takes_value: &["--reference", "-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range"], kind: Kind::Role(Role::WriteAfterFirst) },
    Program { names: &["mv"], takes_value: &["-t", "-S", "--target-directory", "--suffix"], kind: Kind::Role(Role::Move) },
    Program { names: &["cp"], takes_value: &["-t", "-S", "--target-directory", "--suffix", "--sparse"], kind: Kind::Role(Role::Copy) },
    Program { names: &["install"], takes_value: &["-m", "-o", "-g", "-t", "-S", "--mode", "--owner", "--group", "--target-directory", "--suffix"], kind: Kind::Role(Role::Copy) },
    Program { names: &["rsync"], takes_value: &["-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "--files-from", "-T", "--temp-dir", "--log-file", "--password-file", "--chmod", "--chown", "-B", "--block-size", "--max-size", "--min-size", "--partial-dir", "--backup-dir", "--suffix", "--compare-dest", "--copy-dest", "--link-dest"], kind: Kind::Role(Role::Copy) },
    Program { names: &["ln"], takes_value: &["-t", "-S", "--target-directory", "--suffix"], kind: Kind::Role(Role::Link) },
    Program { names: &["link"], takes_value: &[], kind: Kind::Role(Role::Link) },
    Program { names: &["sed"], takes_value: &["-e", "-f", "-l", "--expression", "--file", "--line-length"], kind: Kind::Role(Role::Sed) },
    // Editors run by a script (`vim -Es -c … f`, `ex -sc '…|x' f`): the vim
    // family saves by renaming (backup, swap files), `ed` writes in place.
    Program { names: &["vim", "vi", "nvim", "ex", "view", "vimdiff", "rvim"], takes_value: &["-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-w", "-W", "--servername", "--startuptime"], kind: Kind::Role(Role::Vim) },
    Program { names: &["ed", "red"], takes_value: &["-p", "--prompt"], kind: Kind::Role(Role::Ed) },
    Program { names: &["dd"], takes_value: &[], kind: Kind::Role(Role::Dd) },
    Program { names: &["curl"], takes_value: &["--libcurl", "--etag-save", "--hsts", "--alt-svc", "-o", "--output", "-T", "--upload-file", "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "-H", "--header", "-X", "--request", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "-K", "--config", "-F", "--form", "-w", "--write-out", "-m", "--max-time", "--connect-timeout", "-x", "--proxy", "--url", "--output-dir", "-r", "--range", "--retry", "-E", "--cert", "--key", "--cacert", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "-z", "--time-cond", "--netrc-file", "--capath", "--proxy-cacert", "--proxy-cert", "--proxy-key", "--crlfile", "--variable", "--json", "--url-query", "--unix-socket", "--abstract-unix-socket"], kind: Kind::Role(Role::Curl) },
    Program { names: &["wget"], takes_value: &["-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix", "-i", "--input-file", "-t", "--tries", "-T", "--timeout", "-U", "--user-agent", "--header", "--user", "--password", "-e", "--execute", "--config", "--use-askpass", "--post-data", "--post-file", "--load-cookies", "--save-cookies", "-l", "--level", "-A", "-R", "--accept", "--reject"], kind: Kind::Role(Role::Wget) },
    Program { names: &["tar", "bsdtar", "gtar"], takes_value: &["-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "--exclude", "-b", "--blocking-factor", "--owner", "--group", "--mode", "--mtime", "-I", "--use-compress-program", "--transform", "--strip-components", "-N", "--newer", "-g", "--listed-incremental", "-V", "--label", "-F", "--info-script", "--new-volume-script", "--rsh-command", "--to-command", "--checkpoint-action", "--index-file", "--volno-file", "-H", "--format", "-K", "--starting-file", "-L", "--tape-length", "--record-size", "--suffix", "--add-file", "--exclude-tag", "--exclude-tag-all", "--exclude-tag-under", "--exclude-ignore", "--exclude-ignore-recursive", "--group-map", "--owner-map", "--newer-mtime", "--after-date", "--quoting-style", "--sort", "--warning"], kind: Kind::Role(Role::Tar) },
    Program { names: &["unzip"], takes_value: &["-d", "-x", "-P"], kind: Kind::Role(Role::Unzip) },
    Program { names: &["zip"], takes_value: &["-x", "-i", "-b", "-P", "-t", "-tt", "-n", "-Z", "-s", "-O", "-TT", "--output-file", "--unzip-command", "--temp-path"], kind: Kind::Role(Role::Zip) },
    Program { names: &["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lz4"], takes_value: &["-S", "--suffix", "-T", "--threads"], kind: Kind::Role(Role::Compress) },
    // zstd's -T takes its count attached (-T4) only.
    Program { names: &["zstd", "unzstd"], takes_value: &["-o", "-D", "--suffix", "--output-dir-flat", "--output-dir-mirror", "--patch-from"], kind: Kind::Role(Role::Compress) },
    // Readers. Each row lists only the options that take a separate value for
    // those programs: a flag taken for one would hide the file after it.
    Program { names: &["cat", "rev", "readlink", "realpath", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "strings", "bat", "comm", "unexpand"], takes_value: &[], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["wc"], takes_value: &["--files0-from"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["tac"], takes_value: &["-s", "--separator"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["less"], takes_value: &["-b", "-h", "-j", "-p", "-P", "-x", "-y", "-z", "-o", "-O", "-k", "--pattern", "--tabs", "--log-file", "--LOG-FILE", "--lesskey-file"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["more"], takes_value: &["-n", "--lines"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["base64"], takes_value: &["-w", "--wrap"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["file"], takes_value: &["-F", "-e", "-P", "--separator", "--exclude", "--parameter"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["diff"], takes_value: &["-x", "-X", "-F", "-I", "-U", "-C", "-D", "-S", "-W", "--label", "--exclude", "--exclude-from", "--show-function-line", "--ignore-matching-lines", "--unified", "--context", "--ifdef", "--starting-file", "--width", "--line-format", "--old-line-format", "--new-line-format", "--unchanged-line-format", "--tabsize"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["cmp"], takes_value: &["-i", "-n", "--ignore-initial", "--bytes"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["join"], takes_value: &["-t", "-v", "-a", "-e", "-o", "-1", "-2", "-j"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["expand"], takes_value: &["-t", "--tabs"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["pr"], takes_value: &["-h", "-l", "-o", "-w", "-W", "-N", "--header", "--length", "--indent", "--width", "--page-width", "--first-line-number"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["nl"], takes_value: &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["head", "tail"], takes_value: &["-n", "-c", "-s", "--lines", "--bytes", "--sleep-interval", "--pid", "--max-unchanged-stats"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["cut"], takes_value: &["-b", "-c", "-d", "-f", "--bytes", "--characters", "--delimiter", "--fields", "--output-delimiter"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["paste"], takes_value: &["-d", "--delimiters"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["column"], takes_value: &["-s", "-o", "-c", "-N", "-E", "-H", "-l", "-R", "-r", "-W", "--separator", "--output-separator", "--output-width", "--table-columns"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["fold"], takes_value: &["-w", "--width"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["fmt"], takes_value: &["-w", "-p", "-g", "--width", "--prefix", "--goal"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["ls", "dir", "vdir"], takes_value: &["-I", "-w", "-T", "--hide", "--ignore", "--time-style", "--block-size", "--width", "--tabsize", "--format", "--sort", "--time", "--quoting-style", "--indicator-style"], kind: Kind::Role(Role::ListOrCwd) },
    Program { names: &["tree"], takes_value: &["-I", "-L", "-P", "-o", "-H", "-T", "--filelimit", "--charset", "--timefmt", "--sort"], kind: Kind::Role(Role::ListOrCwd) },
    Program { names: &["du"], takes_value: &["-d", "-B", "-t", "--max-depth", "--exclude", "--block-size", "--threshold", "--time-style", "--files0-from"], kind: Kind::Role(Role::ListOrCwd) },
    Program { names: &["stat"], takes_value: &["-c", "--format", "--printf"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["od"], takes_value: &["-A", "-j", "-N", "-S", "-t", "--address-radix", "--skip-bytes", "--read-bytes", "--strings", "--format", "--width"], kind: Kind::Role(Role::Each(&[Read])) },
    // xxd reads its options as whole words (-ps is -postscript), not as getopt.
    Program { names: &["xxd"], takes_value: &[], kind: Kind::Role(Role::Xxd) },
    Program { names: &["hexdump"], takes_value: &["-e", "-f", "-n", "-s"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["sort"], takes_value: &["-k", "-t", "-T", "-S", "-o", "--compress-program", "--random-source", "--key", "--field-separator", "--temporary-directory", "--buffer-size", "--output", "--parallel", "--files0-from"], kind: Kind::Role(Role::Sort) },
    Program { names: &["uniq"], takes_value: &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"], kind: Kind::Role(Role::InOut) },
    // grep's own: -E, -T are flags and --color takes its value only as --color=WHEN.
    Program { names: &["grep", "egrep", "fgrep", "zgrep", "zegrep", "zfgrep", "bzgrep", "xzgrep", "zstdgrep"], takes_value: &["-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context", "--include", "--exclude", "--exclude-dir", "--exclude-from", "--label", "--binary-files", "--devices", "--directories", "--group-separator"], kind: Kind::Role(Role::ReadAfterFirst) },
    Program { names: &["rg"], takes_value: &["-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "-j", "-M", "--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context", "--include", "--exclude", "--exclude-dir", "--glob", "--type", "--type-not", "--threads", "--max-columns", "--color", "--colors", "--label", "--max-depth", "--sort", "--sortr", "-E", "--encoding", "-d", "-D", "--binary-files", "--devices", "--directories", "--pre", "--pre-glob", "--ignore-file", "--hostname-bin"], kind: Kind::Role(Role::ReadAfterFirst) },
    Program { names: &["ag"], takes_value: &["-A", "-B", "-C", "-G", "-g", "-m", "-p", "-W", "--depth", "--ignore", "--ignore-dir", "--workers", "--after", "--before", "--context", "--file-search-regex", "--max-count", "--path-to-ignore", "--width"], kind: Kind::Role(Role::ReadAfterFirst) },
    Program { names: &["awk", "gawk", "mawk", "nawk"], takes_value: &["-f", "-v", "-F", "--file", "--assign", "--field-separator"], kind: Kind::Role(Role::ReadAfterFirst) },
    Program { names: &["jq"], takes_value: &["-f", "--from-file", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-L"], kind: Kind::Role(Role::Jq) },
    // kislyuk's yq (a jq wrapper) and mikefarah's (`yq eval`): `-i` rewrites the files.
    Program { names: &["yq"], takes_value: &["-f", "--from-file", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-L", "-w", "--width", "--yaml-output-grammar-version", "--yml-out-ver", "-o", "--output-format", "-p", "--input-format", "-I", "--split-exp"], kind: Kind::Role(Role::Yq) },
    Program { names: &["find"], takes_value: &[], kind: Kind::Role(Role::Find) },
    Program { names: &["git"], takes_value: &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"], kind: Kind::Role(Role::Git) },
    // Writers whose output names the program makes up from a prefix or a
    // template: the folder is known, the names are not.
    Program { names: &["split"], takes_value: &["-a", "-b", "-C", "-l", "-n", "-t", "--suffix-length", "--additional-suffix", "--bytes", "--line-bytes", "--lines", "--number", "--separator", "--filter"], kind: Kind::Role(Role::Split) },
    Program { names: &["csplit"], takes_value: &["-b", "-f", "-n", "--suffix-format", "--prefix", "--digits"], kind: Kind::Role(Role::Split) },
    Program { names: &["mktemp"], takes_value: &["-p", "--suffix"], kind: Kind::Role(Role::Mktemp) },
    Program { names: &["patch"], takes_value: &["-p", "-F", "-i", "-o", "-r", "-D", "-V", "-B", "-Y", "-z", "-g", "-d", "--strip", "--fuzz", "--input", "--output", "--reject-file", "--ifdef", "--version-control", "--prefix", "--basename-prefix", "--suffix", "--get", "--directory", "--quoting-style", "--reject-format", "--read-only"], kind: Kind::Role(Role::Patch) },
    Program { names: &["shuf"], takes_value: &["-n", "-o", "-i", "--head-count", "--output", "--input-range", "--random-source"], kind: Kind::Role(Role::Sort) },
    Program { names: &["sdiff"], takes_value: &["-o", "-w", "-I", "--output", "--width", "--ignore-matching-lines", "--diff-program", "--tabsize"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["diff3"], takes_value: &["-L", "--label", "--diff-program"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["zcat", "gzcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "zless", "zmore"], takes_value: &[], kind: Kind::Role(Role::Each(&[Read])) },
    // pigz's own: -p is its thread count.
    Program { names: &["pigz", "unpigz"], takes_value: &["-b", "-p", "-S", "--blocksize", "--processes", "--suffix"], kind: Kind::Role(Role::Compress) },
    // Archivers whose first word is a command (`7z x`, `ar rcs`, `cpio -i`, `unrar x`).
    Program { names: &["7z", "7za", "7zr", "7zz", "ar", "cpio", "unrar"], takes_value: &[], kind: Kind::Role(Role::Archiver) },
    // Package managers and builders: see `packages`.
    Program { names: &["npm", "pnpm", "yarn", "npx", "pnpx", "pip", "pip3", "pipx", "uv", "uvx", "cargo", "rustup", "go", "apt", "apt-get", "aptitude", "dpkg", "dpkg-deb", "gem", "bundle", "bundler", "brew", "conda", "mamba", "micromamba", "poetry", "virtualenv", "vite"], takes_value: &[], kind: Kind::Role(Role::Packages) },
    // Programs that start a command their arguments spell out.
    Program { names: &["flock"], takes_value: &["-w", "-E", "--timeout", "--wait", "--conflict-exit-code"], kind: Kind::Role(Role::Flock) },
    Program { names: &["script"], takes_value: &["-c", "-I", "-O", "-B", "-T", "-m", "-E", "-o", "--command", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--echo", "--output-limit"], kind: Kind::Role(Role::Script) },
    Program { names: &["watch"], takes_value: &["-n", "-q", "--interval", "--equexit"], kind: Kind::Role(Role::Watch) },
    Program { names: &["su", "runuser", "sg", "newgrp"], takes_value: &["-c", "-g", "-G", "-s", "-w", "-u", "--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment", "--user"], kind: Kind::Role(Role::SwitchUser) },
    // Programs whose command runs where the text cannot follow it: another
    // root or mount namespace, composed from input, or started by a service
    // manager outside this process tree (and outside the kernel fence).
    Program { names: &["parallel"], takes_value: &[], kind: Kind::Role(Role::Hidden("GNU parallel composes its command lines from its inputs at run time")) },
    Program { names: &["systemd-run", "systemctl"], takes_value: &[], kind: Kind::Role(Role::Escapes("the service manager starts what it is given outside this process tree and its fence")) },
    Program { names: &["at", "batch", "crontab"], takes_value: &[], kind: Kind::Role(Role::Escapes("the command is scheduled with a daemon that runs it later, outside this process tree and its fence")) },
    Program { names: &["tmux", "screen"], takes_value: &[], kind: Kind::Role(Role::Escapes("the command runs in a terminal server that may have been started outside this process tree and its fence")) },
    Program { names: &["docker", "podman", "nerdctl", "docker-compose", "podman-compose"], takes_value: &[], kind: Kind::Role(Role::Daemon) },
    Program { names: &["launchctl"], takes_value: &[], kind: Kind::Role(Role::Escapes("a daemon outside this process tree runs what it is given, beyond this call's fence")) },
    // More of the same (issue 34): service managers and their clients,
    // session buses, terminal servers and multiplexers, process managers,
    // the desktop, the host outside a sandbox.
    Program { names: &["run0"], takes_value: &[], kind: Kind::Role(Role::Escapes("run0 has the service manager start the command as a transient service, outside this process tree and its fence")) },
    Program { names: &["autossh"], takes_value: &[], kind: Kind::Role(Role::Escapes("autossh keeps an ssh connection (and its forwards) alive, restarting it outside this call")) },
    Program { names: &["flatpak-spawn", "host-spawn", "distrobox-host-exec"], takes_value: &[], kind: Kind::Role(Role::Escapes("the command runs on the host or in a new sandbox, started outside this process tree and its fence")) },
    Program { names: &["emacsclient"], takes_value: &[], kind: Kind::Role(Role::Escapes("emacsclient hands files and Lisp to a running Emacs, outside this process tree and its fence")) },
    Program { names: &["byobu", "dtach", "abduco"], takes_value: &[], kind: Kind::Role(Role::Escapes("the command runs in a terminal session that may have been started outside this process tree and its fence")) },
    Program { names: &["incrontab", "service", "xdg-open", "open", "killall5", "machinectl", "sbatch", "srun", "qsub", "salloc"], takes_value: &[], kind: Kind::Role(Role::Escapes("a daemon or the desktop outside this process tree does the work, beyond this call's fence")) },
    Program { names: &["busctl"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("busctl calls a service on the bus (systemd's among them), which acts outside this process tree", &["list", "status", "tree", "introspect", "monitor", "capture", "help"])) },
    Program { names: &["gdbus"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("gdbus calls a service on the bus (systemd's among them), which acts outside this process tree", &["introspect", "monitor", "help"])) },
    Program { names: &["dbus-send", "qdbus", "dbus-launch"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("a message to a service on the bus (systemd's among them) is acted on outside this process tree", &[])) },
    Program { names: &["loginctl"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("loginctl changes sessions or lets the user's services run on after logout (linger), outside this process tree", &["list-sessions", "list-users", "list-seats", "show-session", "show-user", "show-seat", "session-status", "user-status", "seat-status", "help"])) },
    Program { names: &["gsettings"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("a setting the desktop acts on later (a keybinding's command, an autostart), outside any fence", &["get", "list-schemas", "list-relocatable-schemas", "list-keys", "list-children", "list-recursively", "range", "describe", "writable", "monitor", "help"])) },
    Program { names: &["dconf"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("a setting the desktop acts on later (a keybinding's command, an autostart), outside any fence", &["read", "list", "dump", "watch", "help"])) },
    Program { names: &["pm2", "forever"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("the process manager's daemon starts and restarts the command outside this process tree and its fence", &["list", "ls", "l", "status", "jlist", "prettylist", "logs", "show", "describe", "info", "monit", "help"])) },
    Program { names: &["pueue"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("the pueue daemon runs the queued command outside this process tree and its fence", &["status", "log", "follow", "help"])) },
    Program { names: &["supervisorctl"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("supervisord starts the program outside this process tree and its fence", &["status", "avail", "help", "version", "pid", "tail"])) },
    Program { names: &["flatpak"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("flatpak's system helper and portal do the work outside this process tree and its fence", &["list", "info", "search", "remotes", "remote-ls", "history", "ps", "documents", "permissions", "--version", "help"])) },
    Program { names: &["kitty", "kitten"], takes_value: &[], kind: Kind::Role(Role::EscapesWith("kitty's remote control has a running terminal run it, outside this process tree", &["@"])) },
    Program { names: &["wezterm"], takes_value: &[], kind: Kind::Role(Role::EscapesWith("wezterm cli has a running terminal run it, outside this process tree", &["cli"])) },
    Program { names: &["zellij"], takes_value: &[], kind: Kind::Role(Role::EscapesWith("zellij has a running session run it, outside this process tree", &["run", "action", "edit", "pipe", "attach", "a"])) },
    Program { names: &["alacritty"], takes_value: &[], kind: Kind::Role(Role::EscapesWith("alacritty msg has a running terminal open it, outside this process tree", &["msg"])) },
    Program { names: &["gnome-terminal", "konsole", "xfce4-terminal", "tilix"], takes_value: &[], kind: Kind::Role(Role::Escapes("the terminal server runs the command outside this process tree and its fence")) },
    Program { names: &["kill", "pkill", "killall"], takes_value: &[], kind: Kind::Role(Role::Signals) },
    Program { names: &["virsh", "lxc", "incus", "multipass", "ctr", "crictl"], takes_value: &[], kind: Kind::Role(Role::EscapesUnless("a virtualisation or container daemon runs what it is given, outside this process tree and its fence", &["list", "ls", "info", "version", "--version", "help", "images", "image", "dominfo", "nodeinfo"])) },
    Program { names: &["chroot", "unshare", "nsenter", "bwrap", "firejail", "proot", "fakechroot", "systemd-nspawn"], takes_value: &[], kind: Kind::Role(Role::Hidden("the command runs under another root or mount namespace, where paths name other files")) },
    // Outputs of the tools agents run most (`tools`): compilers' `-o`,
    // sqlite3's database, ssh-keygen's keys, openssl's `-in`/`-out`, the
    // history file; make's recipes from elsewhere; a remote shell.
    Program { names: &["gcc", "cc", "clang", "g++", "c++", "clang++", "rustc"], takes_value: &[], kind: Kind::Role(Role::Compiler) },
    Program { names: &["sqlite3"], takes_value: &[], kind: Kind::Role(Role::Sqlite) },
    Program { names: &["ssh-keygen"], takes_value: &[], kind: Kind::Role(Role::SshKeygen) },
    Program { names: &["openssl"], takes_value: &[], kind: Kind::Role(Role::Openssl) },
    Program { names: &["history"], takes_value: &[], kind: Kind::Role(Role::History) },
    Program { names: &["make", "gmake"], takes_value: &[], kind: Kind::Role(Role::Make) },
    Program { names: &["ssh", "slogin"], takes_value: &[], kind: Kind::Role(Role::RemoteShell) },
    Program { names: &["ssh-add"], takes_value: &[], kind: Kind::Role(Role::SshAdd) },
    Program { names: &["scp"], takes_value: &["-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-X"], kind: Kind::Role(Role::Copy) },
    // Programs that run code.
    Program { names: &["bash", "sh", "zsh", "dash", "ksh", "mksh", "fish"], takes_value: &["-o", "-O", "--rcfile", "--init-file"], kind: Kind::Role(Role::Shell) },
    Program { names: &["python", "python2", "python3", "node", "nodejs", "perl", "ruby", "php", "deno", "bun", "lua", "Rscript", "osascript", "pwsh", "powershell", "expect", "tclsh", "wish"], takes_value: &["-W", "-X", "-r", "--require", "--import", "--loader", "-I", "-M", "--input-type"], kind: Kind::Role(Role::Interpreter) },
    Program { names: &["eval", "source", "."], takes_value: &[], kind: Kind::Role(Role::Opaque) },
    // Wrappers, followed to the program they start.
    Program { names: &["sudo", "sudoedit"], takes_value: &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R", "-a", "-c", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--close-from"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["doas"], takes_value: &["-u", "-C", "-a"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["env"], takes_value: &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"], kind: Kind::Wrapper(Wrapper::Env) },
    Program { names: &["nice"], takes_value: &["-n", "--adjustment"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["nohup", "setsid"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["timeout", "gtimeout"], takes_value: &["-s", "-k", "--signal", "--kill-after"], kind: Kind::Wrapper(Wrapper::Timeout) },
    Program { names: &["command"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Command) },
    Program { names: &["exec"], takes_value: &["-a"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["ionice"], takes_value: &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["stdbuf"], takes_value: &["-i", "-o", "-e", "--input", "--output", "--error"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["time"], takes_value: &["-f", "-o", "--format", "--output"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["chrt"], takes_value: &["-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"], kind: Kind::Wrapper(Wrapper::Leading) },
    Program { names: &["taskset"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Leading) },
    Program { names: &["unbuffer"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["runcon"], takes_value: &["-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range"], kind: Kind::Wrapper(Wrapper::Leading) },
    Program { names: &["strace"], takes_value: &["-e", "-o", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a", "-X", "-O", "-S", "--output", "--attach", "--string-limit", "--user", "--env", "--trace-path", "--columns"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["ltrace"], takes_value: &["-e", "-o", "-p", "-s", "-u", "-a", "-n", "-l", "-x", "-A", "-D", "-F", "--output", "--library", "--align", "--indent"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["setpriv"], takes_value: &["--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["prlimit"], takes_value: &["-p", "--pid"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["caffeinate"], takes_value: &["-t", "-w"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["xargs"], takes_value: &["-I", "-n", "-P", "-d", "-a", "-E", "-L", "-s", "--max-args", "--max-procs", "--delimiter", "--arg-file", "--max-lines", "--max-chars", "--process-slot-var"], kind: Kind::Wrapper(Wrapper::Xargs) },
    // More wrappers (issue 34): each starts the command its words spell,
    // which is judged as itself.
    Program { names: &["eatmydata", "chronic", "catchsegv", "dbus-run-session", "ccache", "sccache", "distcc", "icecc", "linux32", "linux64", "i386", "x86_64", "uname26", "arch"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Options) },
    // valgrind's own options are `--name=value` or flags; its `--log-file=F` is written.
    Program { names: &["valgrind"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["cpulimit"], takes_value: &["-l", "-p", "-e", "--limit", "--pid", "--exe"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["run-one", "run-this-one", "torify"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["ssh-agent"], takes_value: &["-a", "-E", "-P", "-t"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["mpirun", "mpiexec"], takes_value: &["-n", "-np", "-c", "-H", "--host", "--hostfile", "-machinefile", "--map-by", "--bind-to", "-x", "-wdir", "--wdir"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["gosu", "su-exec", "setuidgid", "envuidgid"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Operand) },
    Program { names: &["fakeroot"], takes_value: &["-l", "-s", "-i", "-b", "--lib", "--faked"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["faketime"], takes_value: &["-p", "--date-prog"], kind: Kind::Wrapper(Wrapper::Operand) },
    Program { names: &["setarch"], takes_value: &[], kind: Kind::Wrapper(Wrapper::Operand) },
    Program { names: &["numactl"], takes_value: &["-N", "-m", "-C", "-i", "-p", "-P", "-w", "--cpunodebind", "--membind", "--physcpubind", "--interleave", "--preferred", "--preferred-many", "--weighted-interleave"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["tini", "tini-static"], takes_value: &["-p", "-e"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["xvfb-run"], takes_value: &["-n", "-s", "-f", "-e", "-p", "-w", "--server-num", "--server-args", "--auth-file", "--error-file", "--xauth-protocol", "--wait"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["rlwrap"], takes_value: &["-b", "-C", "-D", "-e", "-f", "-g", "-H", "-l", "-M", "-O", "-p", "-P", "-q", "-s", "-S", "-t", "-w", "-z", "--break-chars", "--command-name", "--history-no-dupes", "--extra-char-after-completion", "--file", "--forget-matching", "--history-filename", "--logfile", "--multi-line", "--only-cook", "--prompt-colour", "--pre-given", "--quote-characters", "--histsize", "--substitute-prompt", "--set-term-name", "--wait-before-prompt", "--filter"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["proxychains", "proxychains4", "torsocks", "tsocks"], takes_value: &["-f", "-a", "-u", "-p", "-P"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["trickle"], takes_value: &["-u", "-d", "-w", "-t", "-l", "-n"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["systemd-inhibit"], takes_value: &["--what", "--who", "--why", "--mode"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["pkexec"], takes_value: &["--user"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["xcrun"], takes_value: &["--sdk", "--toolchain", "-sdk", "-toolchain"], kind: Kind::Wrapper(Wrapper::Options) },
    Program { names: &["busybox", "toybox", "coreutils"], takes_value: &[], kind: Kind::Role(Role::MultiCall) },
    Program { names: &["gdb", "lldb", "cgdb"], takes_value: &[], kind: Kind::Role(Role::Debugger) },
    Program { names: &["hyperfine", "watchexec", "nodemon", "entr", "perf"], takes_value: &[], kind: Kind::Role(Role::Runs) },
    Program { names: &["direnv", "mise", "rtx", "asdf", "nix-shell", "nix", "pipenv", "pdm", "hatch", "rye", "envdir", "dotenv", "chpst"], takes_value: &[], kind: Kind::Role(Role::Environment) },
    // Programs outside the coreutils that write or delete what their
    // operands and options name (issue 34).
    Program { names: &["gio"], takes_value: &[], kind: Kind::Role(Role::Gio) },
    Program { names: &["sponge"], takes_value: &[], kind: Kind::Role(Role::CreateOrWrite) },
    Program { names: &["fallocate"], takes_value: &["-l", "-o", "--length", "--offset"], kind: Kind::Role(Role::CreateOrWrite) },
    Program { names: &["trash-put", "trash", "rmtrash", "gtrash"], takes_value: &[], kind: Kind::Role(Role::Each(&[Delete])) },
    Program { names: &["dos2unix", "unix2dos", "mac2unix", "unix2mac"], takes_value: &["-c", "--convmode", "-f"], kind: Kind::Role(Role::Convert) },
    Program { names: &["iconv"], takes_value: &["-f", "-t", "-o", "--from-code", "--to-code", "--output"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["setfacl"], takes_value: &["-m", "-M", "-x", "-X", "--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file", "--restore"], kind: Kind::Role(Role::Each(&[Write])) },
    Program { names: &["setfattr"], takes_value: &["-n", "-v", "-x", "--name", "--value", "--remove", "--restore"], kind: Kind::Role(Role::Each(&[Write])) },
    Program { names: &["chattr"], takes_value: &["-v", "-p"], kind: Kind::Role(Role::WriteAfterFirst) },
    Program { names: &["getfacl", "lsattr", "ldd", "nm", "size", "namei"], takes_value: &[], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["getfattr"], takes_value: &["-n", "-e", "-m", "--name", "--encoding", "--match"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["objdump"], takes_value: &["-j", "-M", "-b", "-m", "--section", "--disassembler-options", "--target", "--architecture"], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["readelf"], takes_value: &[], kind: Kind::Role(Role::Each(&[Read])) },
    Program { names: &["which", "whereis", "whatis", "apropos", "info", "tldr", "pgrep", "pidof", "basename", "dirname"], takes_value: &[], kind: Kind::Role(Role::Each(&[])) },
    Program { names: &["man"], takes_value: &["-P", "--pager", "-H", "--html", "-M", "--manpath", "-C", "--config-file", "-L", "--locale", "-m", "--systems", "-S", "-s", "--sections", "-E", "--encoding", "-p", "--preprocessor", "-R", "--recode"], kind: Kind::Role(Role::Each(&[])) },
    // sftp reads its commands, `!` local shell commands included, from
    // standard input or a batch file.
    Program { names: &["sftp"], takes_value: &[], kind: Kind::Role(Role::Hidden("sftp reads its commands (local `!` commands included) from standard input or a batch file")) },
];

/// Options whose value names a file the program fills (creates, or
/// overwrites when it exists): `(programs, options)`. Read as the row in
/// `PROGRAMS` splits the line; the rows' own roles add the rest.
pub(super) const FILLS: &[(&[&str], &[&str])] = &[
    (&["tree"], &["-o"]),
    (&["less"], &["-o", "-O", "--log-file", "--LOG-FILE"]),
    (&["shuf"], &["-o", "--output"]),
    (&["sdiff"], &["-o", "--output"]),
    (&["tar", "bsdtar", "gtar"], &["--index-file", "--volno-file"]),
    (&["zip"], &["-O", "--output-file"]),
    (&["rsync"], &["--log-file", "--write-batch", "--only-write-batch"]),
    (&["wget"], &["--save-cookies", "--hsts-file"]),
    (&["strace", "ltrace"], &["-o", "--output"]),
    (&["time"], &["-o", "--output"]),
    (&["xvfb-run"], &["-e", "--error-file", "-f", "--auth-file"]),
    (&["rlwrap"], &["-l", "--logfile", "-H", "--history-filename"]),
    (&["iconv"], &["-o", "--output"]),
    (&["valgrind"], &["--log-file", "--xml-file"]),
];

/// Options whose value names a file the program reads and writes back.
pub(super) const UPDATES: &[(&[&str], &[&str])] = &[(&["tar", "bsdtar", "gtar"], &["-g", "--listed-incremental"])];

/// Options whose value is a command the program runs (through a shell, or
/// split into words): judged like `sh -c VALUE`.
pub(super) const RUNS: &[(&[&str], &[&str])] = &[
    (&["tar", "bsdtar", "gtar"], &["-I", "--use-compress-program", "--to-command", "-F", "--info-script", "--new-volume-script", "--rsh-command"]),
    (&["sort"], &["--compress-program"]),
    (&["sdiff", "diff3"], &["--diff-program"]),
    (&["rsync"], &["-e", "--rsh"]),
    (&["scp"], &["-S"]),
    (&["zip"], &["-TT", "--unzip-command"]),
    (&["install"], &["--strip-program"]),
    (&["rg"], &["--pre"]),
    (&["split"], &["--filter"]),
    (&["rlwrap"], &["-z", "--filter"]),
    (&["rg"], &["--hostname-bin"]),
    (&["man"], &["-P", "--pager", "-H", "--html"]),
    (&["wget"], &["--use-askpass"]),
];

/// Options whose value is a file of names the program reads as if they
/// were operands (`-` for standard input): the file read, and the names
/// computed.
pub(super) const NAMES_FROM: &[(&[&str], &[&str])] = &[
    (&["sort", "du", "wc"], &["--files0-from"]),
    (&["tar", "bsdtar", "gtar"], &["-T", "--files-from"]),
    (&["rsync"], &["--files-from"]),
];

/// Options whose value is a folder the program makes files in, with names
/// only it knows: `(programs, options, what it does there)`.
pub(super) const MAKES_IN: &[(&[&str], &[&str], &[Capability])] = &[
    (&["sort"], &["-T", "--temporary-directory"], &[Create, Write, Delete]),
    (&["rsync"], &["-T", "--temp-dir", "--partial-dir"], &[Create, Write, Delete]),
    (&["rsync"], &["--backup-dir"], &[Create, Write]),
    (&["zip"], &["-b", "--temp-path"], &[Create, Write, Delete]),
    (&["zstd", "unzstd"], &["--output-dir-flat", "--output-dir-mirror"], &[Create, Write]),
];

impl Program {
    /// Whether the program runs code its command line does not show.
    pub(super) fn runs_code(&self) -> bool {
        matches!(
            self.kind,
            Kind::Role(
                Role::Shell | Role::Interpreter | Role::Opaque | Role::Vim | Role::Packages | Role::Hidden(_) | Role::Escapes(_) | Role::EscapesUnless(..) | Role::EscapesWith(..)
                    | Role::Daemon | Role::Make | Role::RemoteShell | Role::Debugger | Role::Environment
            )
        )
    }
}

/// `cargo new`/`cargo init` write a fresh package from cargo's own template
/// (no build script, no configuration naming a program on the line).
pub(super) fn cargo_runs_no_code(words: &[&str]) -> bool {
    let words: Vec<&str> = words.iter().copied().filter(|w| !w.starts_with('+')).collect();
    matches!(words.first(), Some(&("new" | "init"))) && !words.iter().any(|w| w.starts_with("--config") || *w == "-Z" || *w == "-C")
}

/// rustup managing toolchains (not `run`, which starts a program, nor
/// `self`, which replaces rustup itself).
pub(super) fn rustup_runs_no_code(words: &[&str]) -> bool {
    let sub = words.iter().find(|w| !w.starts_with('-'));
    matches!(sub, Some(&("install" | "update" | "uninstall" | "toolchain" | "component" | "target" | "default" | "set" | "override" | "show" | "check")))
}

/// `go get` and `go mod download` with plain flags: modules fetched and
/// verified, nothing built (Go 1.18 on).
pub(super) fn go_get_runs_no_code(words: &[&str]) -> bool {
    let plain = |w: &&str| !w.starts_with('-') || matches!(*w, "-u" | "-t" | "-x" | "-v" | "-d" | "-json" | "-u=patch");
    let subs: Vec<&str> = words.iter().copied().filter(|w| !w.starts_with('-')).take(2).collect();
    let fetches = matches!(subs.as_slice(), ["get", ..] | ["mod", "download"]);
    fetches && words.iter().all(plain)
}

/// Every program name the table has a row for (the audit in
/// `tests/audit/` checks each is listed there).
pub fn table_names() -> Vec<&'static str> {
    PROGRAMS.iter().flat_map(|p| p.names.iter().copied()).collect()
}

pub(super) fn program(name: &str) -> Option<&'static Program> {
    // `python3.12`, `python2.7`: the interpreter's row, whatever its version.
    let versioned = name.strip_prefix("python").is_some_and(|v| v.contains('.') && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    let name = if versioned { "python3" } else { name };
    PROGRAMS.iter().find(|p| p.names.contains(&name))
}

/// What a variable in the environment decides (issue 34, family 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Var {
    /// Its value is a command line a program runs (an editor, a pager, a
    /// compiler, an ssh): judged as that command; code it hides makes the
    /// line inline code.
    Command,
    /// It makes a program load code the line does not show (a library, a
    /// module path, options that require a module, a file a shell sources).
    Loads,
    /// `PATH`: which binary every later name starts.
    Path,
    /// Configuration a program reads (git's, a home, an XDG folder): it may
    /// name commands to run.
    Config,
    /// Where git keeps the repository (`GIT_DIR` and kin): git's state is
    /// written there, as with `--git-dir`.
    Repository,
    /// The worktree git writes (`GIT_WORK_TREE`), as with `--work-tree`.
    Worktree,
    /// Where programs make their temp files.
    Temp,
    /// A prompt the shell expands (`PS4` with `set -x`): its command
    /// substitutions run.
    Prompt,
}

/// Variables that name code or move the repository, each with what it
/// decides: `(names, what)`; `*` stands for any text (`BASH_FUNC_*`: an
/// exported function, `CARGO_TARGET_*_RUNNER`). Read from the line's
/// assignments, `export`/`declare`, `env NAME=value` and `make NAME=value`.
pub(super) const ENVIRONMENT: &[(&[&str], Var)] = &[
    (&["PATH"], Var::Path),
    (
        &[
            "EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
            "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "BROWSER", "SHELL", "CONFIG_SHELL", "CC", "CXX", "CPP", "LD", "AR", "AS",
            "FC", "RUSTC", "RUSTDOC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "CARGO_TARGET_*_RUNNER", "CARGO_TARGET_*_LINKER",
            "LESSOPEN", "LESSCLOSE", "PROMPT_COMMAND", "npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", "TERMINAL", "DIFF", "MERGE",
            "SUDO_EDITOR", "FCEDIT", "SYSTEMD_EDITOR", "SYSTEMD_PAGER", "BAT_PAGER", "DELTA_PAGER", "GH_PAGER", "GH_EDITOR",
        ],
        Var::Command,
    ),
    (
        &[
            "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "BASH_ENV", "ENV", "BASH_FUNC_*", "BASHOPTS", "SHELLOPTS", "PYTHONPATH",
            "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PERL5LIB", "PERLLIB", "PERL5OPT", "PERL5DB",
            "RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH", "npm_config_node_options", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
            "DOTNET_STARTUP_HOOKS", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GOFLAGS", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "MAKEFILES", "MAKEFLAGS",
            "MFLAGS", "GNUMAKEFLAGS", "LUA_PATH", "LUA_CPATH", "LUA_INIT", "TCLLIBPATH", "R_PROFILE_USER", "R_ENVIRON_USER",
            "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "GLIBC_TUNABLES", "CLASSPATH", "MAVEN_OPTS", "GRADLE_OPTS",
            "JAVA_OPTS", "ANT_OPTS", "SBT_OPTS", "GOROOT", "GOTOOLCHAIN", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "npm_config_prefix",
            "NPM_CONFIG_PREFIX", "PYTHONEXECUTABLE", "VIRTUAL_ENV",
        ],
        Var::Loads,
    ),
    (
        &[
            "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZDOTDIR", "INPUTRC", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*", "GIT_CONFIG_PARAMETERS", "GIT_ATTR_SOURCE", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
            "npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_globalconfig", "PIP_CONFIG_FILE", "GNUPGHOME", "DOCKER_CONFIG", "KUBECONFIG",
        ],
        Var::Config,
    ),
    (&["GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_INDEX_FILE"], Var::Repository),
    (&["GIT_WORK_TREE"], Var::Worktree),
    (&["TMPDIR", "TMP", "TEMP", "TEMPDIR", "CARGO_TARGET_DIR"], Var::Temp),
    (&["PS0", "PS1", "PS2", "PS3", "PS4"], Var::Prompt),
];

/// Sockets of daemons that act on what they are sent outside this process
/// tree (a container engine, the system bus, the service manager, the
/// user's session bus): a word naming one hands work to them.
pub(super) const DAEMON_SOCKETS: &[&str] =
    &["docker.sock", "podman.sock", "containerd.sock", "buildkitd.sock", "system_bus_socket", "/run/systemd/private", "libvirt-sock", "/run/user/"];

/// What the variable `name` decides, if it is in [`ENVIRONMENT`] (a `*`
/// in a listed name stands for any text).
pub(super) fn variable(name: &str) -> Option<Var> {
    let matches = |pattern: &str| match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => name.len() > head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail),
    };
    ENVIRONMENT.iter().find(|(names, _)| names.iter().any(|n| matches(n))).map(|(_, v)| *v)
}

/// Programs that hand out a secret a daemon or keychain keeps (issue 34,
/// family 9): `(programs, uses)`. A use is words that must appear in
/// order among the program's (its subcommand, a flag); none means any use.
/// `*` in a name stands for any text (`docker-credential-*`).
pub(super) const SECRETS: &[(&[&str], &[&[&str]])] = &[
    (&["gh"], &[&["auth", "token"], &["auth", "status", "--show-token"], &["auth", "status", "-t"], &["auth", "git-credential"]]),
    (&["glab"], &[&["auth", "token"], &["config", "get", "token"]]),
    (&["secret-tool", "op", "bw", "lpass", "rbw", "pass", "gopass", "kwallet-query", "vault", "docker-credential-*", "git-credential-*"], &[]),
    (&["keyctl"], &[&["print"], &["read"], &["pipe"]]),
    (&["security"], &[&["find-generic-password"], &["find-internet-password"], &["dump-keychain"], &["export"]]),
    (&["gcloud"], &[&["print-access-token"], &["print-identity-token"], &["config-helper"], &["secrets", "versions", "access"]]),
    (&["az"], &[&["get-access-token"], &["keyvault", "secret", "show"]]),
    (&["aws"], &[&["export-credentials"], &["get-session-token"], &["get-login-password"], &["get-secret-value"], &["configure", "get"], &["--with-decryption"]]),
    (&["kubectl"], &[&["view", "--raw"], &["create", "token"], &["get", "secret"], &["get", "secrets"]]),
    (&["sops"], &[&["-d"], &["--decrypt"], &["exec-env"], &["exec-file"]]),
    (&["systemd-creds"], &[&["decrypt"], &["cat"]]),
    (&["heroku"], &[&["auth:token"]]),
    (&["gpg", "gpg2"], &[&["--export-secret-keys"], &["--export-secret-subkeys"], &["-d"], &["--decrypt"]]),
];

/// The use of a secret client `name ARGS…` hands out a secret, if any.
pub(super) fn hands_out_secret(name: &str, words: &[&str]) -> bool {
    let named = |n: &str| match n.split_once('*') {
        None => n == name,
        Some((head, tail)) => name.starts_with(head) && name.ends_with(tail) && name.len() > head.len() + tail.len(),
    };
    SECRETS.iter().filter(|(names, _)| names.iter().any(|n| named(n))).any(|(_, uses)| {
        uses.is_empty()
            || uses.iter().any(|used| {
                let mut at = 0;
                used.iter().all(|u| match words[at..].iter().position(|w| w == u) {
                    Some(p) => {
                        at += p + 1;
                        true
                    }
                    None => false,
                })
            })
    }) && !words.iter().any(|w| matches!(*w, "--help" | "-h" | "--version"))
}
