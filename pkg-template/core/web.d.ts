// Types of 'dsh-allow/core/web': the same core as 'dsh-allow/core', loaded
// with `init()` and without a file-system host.
import type { CommandGrantInput, Decision, DecideRequest, Host, RuleInput, RulesLoad } from './index.js';

export type * from './index.js';

/** What `init` accepts: a URL (default: dsh_allow_bg.wasm beside this file),
 * a fetch Response, the bytes, or a compiled module. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module;

/** Load the core once; later calls return the same promise. */
export declare function init(wasmUrlOrBytes?: InitInput | Promise<InitInput>): Promise<unknown>;
/** Load the core synchronously from bytes or a compiled module. */
export declare function initSync(module: BufferSource | WebAssembly.Module): unknown;

/** Decide one shell call; paths are taken as spelled unless a host is given. */
export declare function decide(request: DecideRequest, host?: Host | null): Decision;
export declare function parseRules(text: string): RulesLoad;
export declare function renderRules(rules: RuleInput[], commands?: CommandGrantInput[]): string;
export declare function version(): string;
export declare function newRuleId(): string;
