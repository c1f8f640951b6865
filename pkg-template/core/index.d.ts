// Types of dsh-allow's decision core ('dsh-allow/core'). They follow
// wit/dsh-allow.wit, the one contract: JSON field names are the camelCase of
// the WIT's kebab-case names, WIT enums are string unions, `option<T>` is a
// field that may be absent (inputs) or omitted / null (outputs).

export type Capability = 'read' | 'write' | 'create' | 'delete' | 'execute';
export type Platform = 'macos' | 'linux';
export type Mode = 'read-only' | 'workspace-write' | 'danger-full-access';
export type Outcome = 'allow' | 'prompt' | 'refuse';
export type Tier = 'protected' | 'managed' | 'rule' | 'grant' | 'baseline' | 'default';
export type Enforce = 'full' | 'guarded' | 'process' | 'writes' | 'off';
export type Shape = 'strict' | 'any';
export type PathKind = 'missing' | 'file' | 'dir';

/** A rule's access table: true grants, false speaks to deny, absent says nothing. */
export interface Access {
  read?: boolean | null;
  write?: boolean | null;
  create?: boolean | null;
  delete?: boolean | null;
  execute?: boolean | null;
}

/** A stored rule, a deployment grant or a one-shot grant. */
export interface Rule {
  id: string;
  path: string;
  recursive: boolean;
  access: Access;
  hits: number;
  createdAt: string;
}

/** "This executable may write these roots." */
export interface CommandGrant {
  id: string;
  name: string;
  command: string;
  roots: string[];
  shape: Shape;
  access?: Access | null;
  allowCdPrefix: boolean;
}

/** One call to `decide`. The list fields may be omitted (empty). Rule and
 * command-grant fields with defaults in the core may be omitted on input. */
export interface DecideRequest {
  command: string;
  cwd: string;
  workspace: string;
  home: string;
  harnessHome: string;
  platform: Platform;
  mode: Mode;
  rules?: RuleInput[];
  grants?: RuleInput[];
  commands?: CommandGrantInput[];
  protectedFiles?: string[];
  /** Capabilities the kernel fence enforces right now. */
  fence?: Capability[];
  /** Whether that fence shuts the repository's hooks and config (absent:
   * open, so inline code in a repository asks). */
  persistence?: 'shut' | 'open';
  /** The daemons' sockets this host reaches: docker's (a unix DOCKER_HOST,
   * else /var/run/docker.sock) and the ssh agent's (SSH_AUTH_SOCK). */
  sockets?: { docker?: string; sshAgent?: string };
  /** The kernel fence's tier now (the probe's), which a managed
   * `requireFence` is held to; absent: the weakest `fence` is consistent with. */
  fenceLevel?: Enforce;
  /** The administrator's managed policy (`managedPolicy` of its files). */
  managed?: Managed;
}

/**
 * The managed policy: a floor the user's rules, cards and modes cannot
 * lower. `deny` is refused for everyone (and compiled into the fence),
 * `ask` is always a card; a file at fault (`errors`) refuses every call.
 */
export interface Managed {
  files: string[];
  deny: Rule[];
  ask: Rule[];
  alwaysAllow: boolean;
  autoReview: boolean;
  modes?: Mode[] | null;
  requireFence?: Enforce | null;
  audit: 'optional' | 'required';
  errors?: string[];
}

/** One managed file as read: its text, or why it could not be read. */
export interface ManagedSource {
  file: string;
  text?: string;
  error?: string;
}

/** The managed policy's part in one decision. */
export interface ManagedVerdict {
  /** It is why the call is refused or asked (the ledger's decided-by `managed`). */
  decided: boolean;
  /** The card may offer Always allow. */
  alwaysAllow: boolean;
  /** The auto-reviewer may answer the card. */
  autoReview: boolean;
  files: string[];
}

export type RuleInput = Pick<Rule, 'path' | 'access'> & Partial<Rule>;
export type CommandGrantInput = Pick<CommandGrant, 'command'> & Partial<CommandGrant>;

/** One (path, capability) the command needs and how it resolved. */
export interface EffectVerdict {
  path: string;
  capability: Capability;
  granted: boolean;
  /** Not granted and not grantable by a card click. */
  refused: boolean;
  tier: Tier;
  ruleId?: string | null;
}

export interface PathCapability {
  path: string;
  capability: Capability;
}

/** What the command text cannot show. */
export interface Unknown {
  capability?: Capability | null;
  reason: string;
  bounded: boolean;
}

/** A rule "Always allow" would store. */
export interface Proposal {
  path: string;
  recursive: boolean;
  access: Access;
}

export interface Decision {
  decision: Outcome;
  reason: string;
  effects: EffectVerdict[];
  missing: PathCapability[];
  unknown: Unknown[];
  proposals: Proposal[];
  /** The command grant that matched this call: its roots are this call's one-shot grants. */
  commandGrant?: GrantMatch | null;
  /** This call's grants beyond the policy, carried by its fence when the line
   * hides no code: delete in the workspace's repository for git, the worktree
   * for git's self-guarded operations (checkout, merge, stash…), create and
   * delete beside each file a plain `sed -i` edits; claimed like a one-shot grant. */
  fenceGrants?: Rule[];
  /** Folders the line makes that are not there yet: carried into the call's
   * profile (`folders`), so the runner makes those outside the workspace
   * before the fence and lets the call remove what it made inside them. */
  folders?: string[];
  /** What the kernel carries wider than granted (a path that does not exist
   * yet), in plain words: said on the card and kept in the ledger. */
  widened?: string[];
  /** The daemons' sockets the line reaches (docker's, the ssh agent's) and
   * whether this call holds each (in `fenceGrants`; on a card, once allowed). */
  sockets?: SocketNeed[];
  /** Files the call replaces whose content the runner keeps first (`git
   * restore FILE`): carried into the call's profile (`kept`). */
  kept?: string[];
  /** Present when the request carries a managed policy. */
  managed?: ManagedVerdict;
}

/** A daemon's socket a line reaches. */
export interface SocketNeed {
  daemon: 'docker' | 'ssh-agent' | string;
  /** Absent: no socket of that daemon is known here. */
  path?: string;
  granted: boolean;
  sentence: string;
}

/** A command grant that matched one call. */
export interface GrantMatch {
  id: string;
  name: string;
  /** The roots as one-shot grants of this call (decision and profile). */
  rules: Rule[];
}

/**
 * What reading a rules file produced. On `error` (any shape but version 3,
 * well formed: an empty file, no or another version, an unknown key) there
 * are no rules: keep the file untouched and ask before every call.
 */
export interface RulesLoad {
  rules: Rule[];
  commands: CommandGrant[];
  error?: string | null;
  warnings: string[];
}

/** What the core asks the world (the WIT `host` interface). */
export interface Host {
  /** Real path: deepest existing ancestor through symlinks, rest re-appended. */
  canonical(path: string): string;
  /** What is at an absolute path, following symlinks. */
  kind(path: string): PathKind;
  /** Absolute path PATH lookup finds for a bare program name, or null. */
  which(program: string): string | null;
  /** Optional: `canonical` for the policy's roots, asked when the policy is
   * prepared and kept with it for the generation. */
  canonicalRoot?(path: string): string;
  /** Optional, and only with `canonicalRoot`: while this number stays the
   * same, the prepared policy and PATH answers (what `canonicalRoot` and
   * `which` answered) may be reused across decisions. */
  generation?(): number;
  /* A function that throws, or answers something other than a string (for
   * `which`: a string or null), makes the call throw an Error naming the
   * question: nothing is decided on a guess. */
}

/** The node:fs host `decide` uses by default. */
export declare const nodeHost: Host;
/**
 * Something may have moved files (a tool call ran): before `nodeHost` reuses
 * what it read (folders on the way to named paths, the policy's roots, PATH
 * answers), it proves that every lookup they came from would answer the
 * same (unchanged folder times, one `stat` per folder; else the lookups
 * made again), and starts afresh if one would not. Without a call it proves
 * it once a second. The named path itself is always looked up afresh.
 */
export declare function invalidate(): void;

/**
 * Decide one shell call. `host` defaults to `nodeHost`; `null` takes paths
 * as spelled. Throws an Error naming the field when the request is malformed.
 */
export declare function decide(request: DecideRequest, host?: Host | null): Decision;
/** Parse and validate a rules file's text. Never throws for bad content: see `error`. */
export declare function parseRules(text: string): RulesLoad;
/** Managed policy files as read, merged into one policy (a file at fault is in `errors`). */
export declare function managedPolicy(sources: ManagedSource[]): Managed;
/** What a managed policy enforces, one line each (`/allow status`). */
export declare function describeManaged(policy: Managed): string[];
/** May `/allow add` store this rule: refused at or inside a managed deny or ask
 * for a capability it grants (or when Always allow is off); notes for entries inside it. */
export declare function managedRuleCheck(policy: Managed, rule: RuleInput, home: string, platform: Platform): { refused?: string; notes: string[] };
/** Where the administrator's managed file lives on a platform. */
export declare function managedSystemFile(platform: Platform): string;
/** Why a session's workspace is not taken as one (`/`, or a folder above home): no workspace grant there. Pass real paths. */
export declare function workspaceRefusal(workspace: string, home: string): string | undefined;
/** Which of these variable names name code, configuration or a repository (the text layer's table): removed from fenced calls when the host took them from the workspace's `.env`. */
export declare function codeVariables(names: string[]): string[];
/** Render rules and command grants as rules-file text. */
export declare function renderRules(rules: RuleInput[], commands?: CommandGrantInput[]): string;
/** The model's system-prompt section for these command grants ('' for none). */
export declare function commandGrantPrompt(commands: CommandGrant[]): string;
/** The core's version (the crate's). */
export declare function version(): string;
/** A fresh random rule id. */
export declare function newRuleId(): string;
/** The capabilities a compiled fence plan (`compileProfile(...).plan`) refuses at a real path. */
export declare function withheldAt(plan: object, path: string): Capability[];

/** What the optional auto-reviewer is given: the analysed prompt and the session's events. */
export interface ReviewRequest {
  command: string;
  cwd: string;
  workspace: string;
  /** The decision's `missing`: exactly what "Allow once" would grant. */
  missing: PathCapability[];
  /** Session events; only `user/message`s whose source is the user are read. */
  events?: { type: string; data: unknown }[];
}

/** What the reviewer is shown: the request and the user's own last words. */
export interface ReviewInput {
  command: string;
  cwd: string;
  workspace: string;
  requestedPermissions: { operation: Capability; path: string }[];
  /** At most three, oldest first, each capped in length. */
  userMessages: string[];
}

/** The reviewer's answer as read: anything but a clear ALLOW is ASK. */
export interface ReviewAnswer {
  verdict: 'ALLOW' | 'ASK';
  reason: string;
}

/** The reviewer's input, or null when there is nothing it could allow. */
export declare function buildReviewInput(request: ReviewRequest): ReviewInput | null;
/** The reviewer's fixed system prompt. */
export declare function reviewSystemPrompt(): string;
/** Read the model's answer text. */
export declare function parseReviewAnswer(text: string): ReviewAnswer;
