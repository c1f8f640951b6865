/*
 * The floor under a fenced call: the kernel mechanisms dsh-allow's promise
 * rests on, and nothing else, so that `benches/runner.mjs --floor` can say
 * how much of a call's cost the runner would pay on this kernel whatever
 * else it did.
 *
 *   floor RUNG [-r PATH]… [-w PATH]… [-R DIR -k N] [-H PID:FD] -- PROGRAM [ARGS…]
 *   floor hold [-r PATH]… [-w PATH]… -R DIR -k N [-M]
 *
 * Each rung adds to the one before it:
 *   0  a process between the caller and the program (fork, exec, wait);
 *   1  the program in pid and mount namespaces of its own, with its own
 *      /proc (a user namespace too when not root), under an init;
 *   2  no_new_privs and a Landlock domain: every file-system right handled,
 *      -r paths readable and executable, -w paths granted everything,
 *      signals and abstract sockets scoped;
 *   3  the bounding set emptied, a seccomp filter that hands removals and
 *      renames to a listener (and kills x32 calls), and the init as their
 *      supervisor: it sleeps in poll on the listener and the program's
 *      pidfd, and lets each removal go on (refuses it with EPERM when
 *      FLOOR_REFUSE is set, so a test can see that it decides).
 *
 * With many rules (`benches/rules.mjs --floor`): -R adds a rule on each
 * of DIR's entries r0 … r(N-1), every third granting everything as the
 * rules bench's store does, the rest read. `hold` builds that Landlock
 * ruleset once and a mount namespace with each of those third entries
 * bound writable on itself (one mount a root), prints `ready PID:FD` and
 * keeps both until its stdin closes, as the runner's keeper holds a
 * fence; -H runs each call in a copy of that namespace, restricted by that
 * ruleset (taken with pidfd_getfd), as the runner's calls join the held
 * fence. Each call adds a rule for its own /proc to the held ruleset, as
 * the runner's do, so a byte `r` on the holder's stdin builds it afresh
 * (the runner's keeper does so every 32 calls). -M holds no binds: the
 * rules' Landlock part alone. Both need root.
 *
 * No profile, no kept fence, no covers, no terminal, no hand: a lower bound
 * for a runner built this way (an init, its own /proc, a supervisor in
 * poll), not a fence. Exits with the program's status (125 when a
 * mechanism fails). Built static against musl where there is one (glibc's
 * static start probes the CPU, which a VM traps).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The kernel's ABI, spelled out: musl's headers carry no <linux/…>. */
#define LL_CREATE_VERSION 1u
#define LL_RULE_PATH_BENEATH 1
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET 1ull
#define LL_SCOPE_SIGNAL 2ull
#define FS_EXECUTE (1ull << 0)
#define FS_WRITE_FILE (1ull << 1)
#define FS_READ_FILE (1ull << 2)
#define FS_READ_DIR (1ull << 3)
#define FS_REFER (1ull << 13)
#define FS_TRUNCATE (1ull << 14)
#define FS_IOCTL_DEV (1ull << 15)
#define FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

struct ll_ruleset_attr {
    uint64_t handled_access_fs, handled_access_net, scoped;
};
struct __attribute__((packed)) ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
};

struct sock_filter {
    uint16_t code;
    uint8_t jt, jf;
    uint32_t k;
};
struct sock_fprog {
    unsigned short len;
    struct sock_filter *filter;
};
#define BPF_LD_W_ABS 0x20
#define BPF_JEQ_K 0x15
#define BPF_JGE_K 0x35
#define X32_SYSCALL_BIT 0x40000000u
#define BPF_RET_K 0x06
#define AUDIT_ARCH_X86_64 0xc000003eu
#define RET_ALLOW 0x7fff0000u
#define RET_USER_NOTIF 0x7fc00000u
#define RET_KILL_PROCESS 0x80000000u
#define SECCOMP_SET_MODE_FILTER 1
#define FILTER_NEW_LISTENER (1u << 3)
#define NOTIF_RECV 0xc0502100ul /* _IOWR('!', 0, struct notif) */
#define NOTIF_SEND 0xc0182101ul /* _IOWR('!', 1, struct notif_resp) */
#define NOTIF_CONTINUE 1u

struct notif {
    uint64_t id;
    uint32_t pid, flags;
    int32_t nr;
    uint32_t arch;
    uint64_t ip, args[6];
};
struct notif_resp {
    uint64_t id;
    int64_t val;
    int32_t error;
    uint32_t flags;
};

#define MAX_RULES 256

static int rung;
static int listener = -1;
static const char *reads[MAX_RULES], *writes[MAX_RULES];
static int nreads, nwrites;
static const char *rules_dir, *held;
static int held_ruleset = -1, no_binds;
static long rules_n;

static void die(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
    _exit(125);
}

/* Every right the kernel knows, by its ABI. */
static uint64_t handled_now;

static uint64_t handled_fs(int abi) {
    uint64_t all = (1ull << 13) - 1;
    if (abi >= 2) all |= FS_REFER;
    if (abi >= 3) all |= FS_TRUNCATE;
    if (abi >= 5) all |= FS_IOCTL_DEV;
    return all;
}

static void add_rule(int ruleset, const char *path, uint64_t access) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return; /* a path that is not here grants nothing */
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= FILE_RIGHTS;
    struct ll_path_beneath rule = {.allowed_access = access & handled_now, .parent_fd = fd};
    if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0) die("landlock_add_rule");
    close(fd);
}

/* The rules bench's store: rN for N below `n`, every third writable. */
static void each_rule(const char *dir, long n, void (*f)(const char *path, int writable, void *arg), void *arg) {
    char path[4096];
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/r%ld", dir, i);
        f(path, i % 3 == 0, arg);
    }
}

static void add_store_rule(const char *path, int writable, void *arg) {
    int ruleset = *(int *)arg;
    add_rule(ruleset, path, writable ? ~0ull : FS_READ_FILE | FS_READ_DIR | FS_EXECUTE);
}

static int build_ruleset(void) {
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
    if (abi < 1) die("Landlock");
    uint64_t all = handled_fs(abi);
    handled_now = all;
    struct ll_ruleset_attr attr = {.handled_access_fs = all};
    if (abi >= 6) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    /* The attribute's size by ABI: scopes came with 6, networks with 4. */
    size_t size = abi >= 6 ? sizeof attr : sizeof attr.handled_access_fs;
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) die("landlock_create_ruleset");
    for (int i = 0; i < nreads; i++) add_rule(ruleset, reads[i], FS_READ_FILE | FS_READ_DIR | FS_EXECUTE);
    for (int i = 0; i < nwrites; i++) add_rule(ruleset, writes[i], all);
    if (rules_dir) each_rule(rules_dir, rules_n, add_store_rule, &ruleset);
    return ruleset;
}

/* The held ruleset (PID:FD), or one built here. */
static void landlock(void) {
    int ruleset = held_ruleset >= 0 ? held_ruleset : build_ruleset();
    /* The call's own /proc is a new instance no held rule names. */
    if (held_ruleset >= 0) {
        handled_now = handled_fs((int)syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION));
        add_rule(ruleset, "/proc", FS_READ_FILE | FS_READ_DIR);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) die("landlock_restrict_self");
    close(ruleset);
}

/* Removals and renames go to the listener; everything else runs. */
static void seccomp_listener(void) {
    /* Up to the first number the kernel does not know. */
    for (int cap = 0;; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
        if (errno != EINVAL) die("PR_CAPBSET_DROP");
        break;
    }
    static const uint32_t handed[] = {SYS_unlink, SYS_unlinkat, SYS_rmdir, SYS_rename, SYS_renameat, SYS_renameat2};
    enum { N = sizeof handed / sizeof handed[0] };
    struct sock_filter f[5 + N + 3];
    int i = 0;
    f[i++] = (struct sock_filter){BPF_LD_W_ABS, 0, 0, 4}; /* arch */
    f[i++] = (struct sock_filter){BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64};
    f[i++] = (struct sock_filter){BPF_RET_K, 0, 0, RET_KILL_PROCESS};
    f[i++] = (struct sock_filter){BPF_LD_W_ABS, 0, 0, 0}; /* nr */
    /* x32 numbers name the same calls: to the last instruction, a kill. */
    f[i++] = (struct sock_filter){BPF_JGE_K, (uint8_t)(N + 2), 0, X32_SYSCALL_BIT};
    for (int n = 0; n < N; n++) f[i++] = (struct sock_filter){BPF_JEQ_K, (uint8_t)(N - n), 0, handed[n]};
    f[i++] = (struct sock_filter){BPF_RET_K, 0, 0, RET_ALLOW};
    f[i++] = (struct sock_filter){BPF_RET_K, 0, 0, RET_USER_NOTIF};
    f[i++] = (struct sock_filter){BPF_RET_K, 0, 0, RET_KILL_PROCESS};
    struct sock_fprog prog = {.len = (unsigned short)i, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
    listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, FILTER_NEW_LISTENER, &prog);
    if (listener < 0) die("seccomp");
}

/* Until the program ends: each removal it asks for goes on as asked. */
static void supervise(pid_t pid) {
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) die("pidfd_open");
    int refuse = getenv("FLOOR_REFUSE") != NULL;
    struct pollfd fds[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = listener, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (fds[0].revents) break;
        if (fds[1].revents & POLLIN) {
            struct notif n;
            memset(&n, 0, sizeof n);
            if (ioctl(listener, NOTIF_RECV, &n) != 0) {
                if (errno == ENOENT || errno == EINTR) continue; /* gone before it was read */
                die("SECCOMP_IOCTL_NOTIF_RECV");
            }
            struct notif_resp r = {.id = n.id};
            if (refuse) r.error = -EPERM;
            else r.flags = NOTIF_CONTINUE;
            if (ioctl(listener, NOTIF_SEND, &r) != 0 && errno != ENOENT) die("SECCOMP_IOCTL_NOTIF_SEND");
        }
    }
    close(pidfd);
}

static int wait_for(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) die("waitpid");
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The init: its own /proc, the fence, then the program beside it. */
static int init(char **argv) {
    /* A held namespace was made private when it was built. */
    if (!held && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("mount --make-rprivate /");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount /proc");
    if (rung >= 2) landlock();
    if (rung >= 3) seccomp_listener();
    pid_t pid = vfork();
    if (pid < 0) die("vfork");
    if (pid == 0) {
        if (listener >= 0) close(listener);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (listener >= 0) supervise(pid);
    return wait_for(pid);
}

static void bind_writable(const char *path, int writable, void *arg) {
    (void)arg;
    if (writable && mount(path, path, NULL, MS_BIND, NULL) != 0) die(path);
}

/* A mount namespace with one bind a writable store rule, kept until stdin
 * closes: what the keeper holds for the runner's calls. */
static int hold(void) {
    int ruleset = build_ruleset();
    if (unshare(CLONE_NEWNS) != 0) die("unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("mount --make-rprivate /");
    if (rules_dir && !no_binds) each_rule(rules_dir, rules_n, bind_writable, NULL);
    printf("ready %d:%d\n", getpid(), ruleset);
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
        /* Afresh, at the same number: a call takes the old or the new. */
        if (c != 'r') continue;
        int fresh = build_ruleset();
        if (dup2(fresh, ruleset) < 0) die("dup2");
        close(fresh);
    }
    return 0;
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die(path);
    close(fd);
}

int main(int argc, char **argv) {
    int i = 2;
    if (argc < 3) goto usage;
    int holding = strcmp(argv[1], "hold") == 0;
    rung = atoi(argv[1]);
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
        if (strcmp(argv[i], "-M") == 0) {
            no_binds = 1;
            i--; /* a flag: one word, not two */
            continue;
        }
        if (i + 1 >= argc || (nreads >= MAX_RULES || nwrites >= MAX_RULES)) goto usage;
        if (strcmp(argv[i], "-r") == 0) reads[nreads++] = argv[i + 1];
        else if (strcmp(argv[i], "-w") == 0) writes[nwrites++] = argv[i + 1];
        else if (strcmp(argv[i], "-R") == 0) rules_dir = argv[i + 1];
        else if (strcmp(argv[i], "-k") == 0) rules_n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-H") == 0 && strchr(argv[i + 1], ':')) held = argv[i + 1];
        else goto usage;
    }
    if (holding) return i == argc ? hold() : 125;
    if (i + 1 >= argc || rung < 0 || rung > 3) goto usage;
    char **program = argv + i + 1;
    if (rung == 0) {
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            execvp(program[0], program);
            _exit(127);
        }
        return wait_for(pid);
    }
    /* Not root: a user namespace maps this uid to itself, once the parent
     * has written the maps (the child waits on a pipe for them). */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int user = uid != 0;
    int ready[2];
    if (user && pipe2(ready, O_CLOEXEC) != 0) die("pipe");
    if (held) {
        /* Taken here: the holder's pid means nothing in the call's namespace. */
        int pidfd = (int)syscall(SYS_pidfd_open, atoi(held), 0);
        if (pidfd < 0) die("pidfd_open of the holder");
        held_ruleset = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(strchr(held, ':') + 1), 0);
        if (held_ruleset < 0) die("the held ruleset");
        close(pidfd);
        char ns_path[64];
        snprintf(ns_path, sizeof ns_path, "/proc/%d/ns/mnt", atoi(held));
        int ns = open(ns_path, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWNS) != 0) die(ns_path);
        close(ns);
    }
    long flags = CLONE_NEWNS | CLONE_NEWPID | (user ? CLONE_NEWUSER : 0) | SIGCHLD;
    pid_t pid = (pid_t)syscall(SYS_clone, flags, 0, 0, 0, 0);
    if (pid < 0) die("clone");
    if (pid == 0) {
        if (user) {
            char c;
            close(ready[1]);
            if (read(ready[0], &c, 1) != 1) _exit(125);
        }
        _exit(init(program));
    }
    if (user) {
        char path[64], map[64];
        close(ready[0]);
        snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
        write_file(path, "deny");
        snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
        snprintf(map, sizeof map, "%u %u 1", uid, uid);
        write_file(path, map);
        snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
        snprintf(map, sizeof map, "%u %u 1", gid, gid);
        write_file(path, map);
        if (write(ready[1], "", 1) != 1) die("pipe");
        close(ready[1]);
    }
    return wait_for(pid);
usage:
    fprintf(stderr, "usage: floor 0|1|2|3 [-r PATH]… [-w PATH]… [-R DIR -k N] [-H PID:FD] -- PROGRAM [ARGS…]\n"
                    "       floor hold [-r PATH]… [-w PATH]… [-R DIR -k N] [-M]\n");
    return 125;
}
