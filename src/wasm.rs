//! The wasm-bindgen adapter: one exported function per core entry point,
//! JS values in and out through serde, errors as thrown `Error`s with a
//! message a user can act on. No policy lives here.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::api::DecideRequest;
use crate::host::{Host, LexicalHost, PathKind};

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&ser).map_err(|e| JsError::new(&e.to_string()))
}

fn from_js<T: serde::de::DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("{what}: {e}")))
}

/// The JS object `{canonical(p), kind(p), which(name)}` as the core's host.
struct JsHost {
    canonical: js_sys::Function,
    kind: js_sys::Function,
    which: js_sys::Function,
    /// Optional: how long the host vouches for its answers (see Host::generation).
    generation: Option<js_sys::Function>,
    /// Optional: `canonical` for the policy's roots (see Host::canonical_root).
    canonical_root: Option<js_sys::Function>,
    /// Which host object this is: the core keeps its prepared policy and
    /// PATH answers by generation, and two hosts may count alike.
    id: u64,
    /// The first question the host failed (threw, or answered with something
    /// that is not an answer) during the current call: the call then fails
    /// rather than decide on a guess.
    failed: std::cell::RefCell<Option<String>>,
}

thread_local! {
    static NEXT_HOST_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

thread_local! {
    /// The last host object and its functions: the Node wrapper passes the
    /// same frozen `nodeHost` on every call, and reading four properties
    /// across the boundary each time costs more than one identity check.
    static LAST_HOST: std::cell::RefCell<Option<(JsValue, std::rc::Rc<JsHost>)>> = const { std::cell::RefCell::new(None) };
}

impl JsHost {
    /// The host for `obj`, reused while the same object is passed again
    /// (`Object.is`); a frozen host object is the intended use.
    fn cached(obj: &JsValue) -> Result<std::rc::Rc<JsHost>, JsError> {
        let hit = LAST_HOST.with(|l| {
            l.borrow().as_ref().filter(|(o, _)| js_sys::Object::is(o, obj)).map(|(_, h)| h.clone())
        });
        if let Some(h) = hit {
            return Ok(h);
        }
        let h = std::rc::Rc::new(JsHost::from(obj)?);
        // Only a frozen object cannot have its functions swapped afterwards.
        if obj.is_object() && js_sys::Object::is_frozen(obj.unchecked_ref::<js_sys::Object>()) {
            LAST_HOST.with(|l| *l.borrow_mut() = Some((obj.clone(), h.clone())));
        }
        Ok(h)
    }

    /// No host (`undefined`/`null`) means paths as spelled.
    fn for_value(obj: &JsValue) -> Result<Option<std::rc::Rc<JsHost>>, JsError> {
        if obj.is_undefined() || obj.is_null() {
            Ok(None)
        } else {
            JsHost::cached(obj).map(Some)
        }
    }

    fn from(obj: &JsValue) -> Result<JsHost, JsError> {
        let get = |name: &str| -> Result<js_sys::Function, JsError> {
            js_sys::Reflect::get(obj, &JsValue::from_str(name))
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .ok_or_else(|| JsError::new(&format!("host.{name} must be a function")))
        };
        let canonical_root = get("canonicalRoot").ok();
        // What a generation vouches for is what `canonicalRoot` answers: the
        // node host walks the policy's roots apart from the paths commands
        // name, and may forget the latter while the generation holds. A host
        // without it (the node host's other functions taken alone) reuses
        // nothing.
        let generation = get("generation").ok().filter(|_| canonical_root.is_some());
        let id = NEXT_HOST_ID.with(|n| n.replace(n.get() + 1));
        Ok(JsHost {
            canonical: get("canonical")?,
            kind: get("kind")?,
            which: get("which")?,
            generation,
            canonical_root,
            id,
            failed: Default::default(),
        })
    }

    /// `host.<name>(arg)` as a string; `None` for null/undefined when
    /// `absent_ok` (which: not found). Anything else is a failure, kept for
    /// `outcome`, and answered with `None`.
    fn call(&self, name: &str, f: &js_sys::Function, arg: &str, absent_ok: bool) -> Option<String> {
        let problem = match f.call1(&JsValue::NULL, &JsValue::from_str(arg)) {
            Ok(v) if v.is_string() => return v.as_string(),
            Ok(v) if absent_ok && v.is_null_or_undefined() => return None,
            Ok(v) => format!("answered {} instead of a string", v.js_typeof().as_string().unwrap_or_default()),
            Err(e) => match e.dyn_ref::<js_sys::Error>() {
                Some(err) => format!("threw: {}", String::from(err.message())),
                None => format!("threw: {}", e.as_string().unwrap_or_else(|| "a non-Error value".into())),
            },
        };
        let mut failed = self.failed.borrow_mut();
        if failed.is_none() {
            *failed = Some(format!("host.{name}({arg:?}) {problem}"));
        }
        None
    }

    /// Starts a call: nothing failed yet. What an enclosing call (a decide
    /// made from inside this host's own callback) saw is handed back to it
    /// by `outcome`.
    fn begin(&self) -> Option<String> {
        self.failed.borrow_mut().take()
    }

    /// `value`, unless the host failed a question while it was computed.
    fn outcome<T>(&self, value: T, enclosing: Option<String>) -> Result<T, JsError> {
        let failed = std::mem::replace(&mut *self.failed.borrow_mut(), enclosing);
        match failed {
            None => Ok(value),
            Some(why) => {
                crate::decide::forget_reused();
                Err(JsError::new(&format!("{why}; nothing was decided on a guess")))
            }
        }
    }
}

impl Host for JsHost {
    // A failed question is answered with the spelling or "missing" so the
    // core can finish; the call then fails (see `outcome`).
    fn canonical(&self, path: &str) -> String {
        self.call("canonical", &self.canonical, path, false).unwrap_or_else(|| path.to_string())
    }
    fn canonical_root(&self, path: &str) -> String {
        match &self.canonical_root {
            Some(f) => self.call("canonicalRoot", f, path, false).unwrap_or_else(|| path.to_string()),
            None => self.canonical(path),
        }
    }
    fn kind(&self, path: &str) -> PathKind {
        match self.call("kind", &self.kind, path, false).as_deref() {
            Some("dir") => PathKind::Dir,
            Some("file") => PathKind::File,
            Some("missing") | None => PathKind::Missing,
            Some(other) => {
                self.failed.borrow_mut().get_or_insert_with(|| format!("host.kind({path:?}) answered {other:?}, not dir, file or missing"));
                PathKind::Missing
            }
        }
    }
    fn which(&self, program: &str) -> Option<String> {
        self.call("which", &self.which, program, true)
    }
    fn generation(&self) -> Option<u64> {
        let f = self.generation.as_ref()?;
        let g = f.call0(&JsValue::NULL).ok()?.as_f64().filter(|g| g.is_finite() && *g >= 0.0)? as u64;
        // A host not kept between calls (not frozen) gets a new id each
        // call, so nothing it said is reused by another call.
        Some((self.id << 40) ^ (g & ((1 << 40) - 1)))
    }
}

/// `decide(request, host?)`: without a host, paths are taken as spelled.
#[wasm_bindgen]
pub fn decide(request: JsValue, host: JsValue) -> Result<JsValue, JsError> {
    let request: DecideRequest = from_js(request, "request")?;
    let decision = if host.is_undefined() || host.is_null() {
        crate::decide::decide(&request, &LexicalHost)
    } else {
        let host = JsHost::from(&host)?;
        host.outcome(crate::decide::decide(&request, &host), None)?
    };
    to_js(&decision)
}

/// `decideJson(requestJson, host?) -> decisionJson`: the same call with JSON
/// text across the boundary, which is several times cheaper than converting
/// JS objects field by field; the Node wrapper's `decide` uses it.
#[wasm_bindgen(js_name = decideJson)]
pub fn decide_json(request: &str, host: JsValue) -> Result<String, JsError> {
    let request: DecideRequest = serde_json::from_str(request).map_err(|e| JsError::new(&format!("request: {e}")))?;
    let decision = match JsHost::for_value(&host)? {
        None => crate::decide::decide(&request, &LexicalHost),
        Some(h) => {
            let enclosing = h.begin();
            h.outcome(crate::decide::decide(&request, &*h), enclosing)?
        }
    };
    Ok(serde_json::to_string(&decision).expect("decision serializes"))
}

thread_local! {
    /// The request context (everything but `command` and `cwd`) last sent to
    /// `decideIn`: a session sends the same workspace, rules and fence on
    /// nearly every call, and reading them again is a fifth of a decision.
    static CONTEXT: std::cell::RefCell<Option<DecideRequest>> = const { std::cell::RefCell::new(None) };
}

/// `decideIn(command, cwd, contextJson, host?) -> decisionJson`: `decideJson`
/// with the request split. `contextJson` is the request without `command`
/// and `cwd`, or `""` for the same context as the last call; the Node
/// wrapper sends it only when it changed.
#[wasm_bindgen(js_name = decideIn)]
pub fn decide_in(command: &str, cwd: &str, context: &str, host: JsValue) -> Result<String, JsError> {
    let mut request = if context.is_empty() {
        // Taken out while deciding: a host that called back in would find
        // no context and get an error rather than a second borrow.
        CONTEXT.with(|c| c.borrow_mut().take()).ok_or_else(|| JsError::new("decideIn: no request context was sent yet"))?
    } else {
        let mut json = serde_json::from_str::<serde_json::Value>(context).map_err(|e| JsError::new(&format!("request: {e}")))?;
        // The two per-call fields are filled in below; a context carrying
        // them is a caller mistake that must not shadow the arguments.
        if let Some(obj) = json.as_object_mut() {
            if obj.contains_key("command") || obj.contains_key("cwd") {
                return Err(JsError::new("decideIn: the context must not hold command or cwd"));
            }
            obj.insert("command".into(), serde_json::Value::String(String::new()));
            obj.insert("cwd".into(), serde_json::Value::String(String::new()));
        }
        serde_json::from_value(json).map_err(|e| JsError::new(&format!("request: {e}")))?
    };
    request.command.clear();
    request.command.push_str(command);
    request.cwd.clear();
    request.cwd.push_str(cwd);
    let decision = match JsHost::for_value(&host) {
        Ok(None) => Ok(crate::decide::decide(&request, &LexicalHost)),
        Ok(Some(h)) => {
            let enclosing = h.begin();
            let d = crate::decide::decide(&request, &*h);
            h.outcome(d, enclosing)
        }
        Err(e) => Err(e),
    };
    // The context stays for the next call, whatever happened to this one.
    CONTEXT.with(|c| *c.borrow_mut() = Some(request));
    Ok(serde_json::to_string(&decision?).expect("decision serializes"))
}

#[wasm_bindgen(js_name = parseRules)]
pub fn parse_rules(text: &str) -> Result<JsValue, JsError> {
    to_js(&crate::policy::rules::parse_rules_file(text))
}

/// `managedPolicy([{file, text?, error?}])`: the managed files as one policy.
#[wasm_bindgen(js_name = managedPolicy)]
pub fn managed_policy(sources: JsValue) -> Result<JsValue, JsError> {
    let sources: Vec<crate::policy::managed::Source> = from_js(sources, "managed sources")?;
    to_js(&crate::policy::managed::merge(&sources))
}

#[wasm_bindgen(js_name = describeManaged)]
pub fn describe_managed(policy: JsValue) -> Result<JsValue, JsError> {
    let policy: crate::policy::managed::Managed = from_js(policy, "managed policy")?;
    to_js(&policy.describe())
}

/// `managedRuleCheck(policy, rule, home, platform)`: may `/allow add` store this rule.
#[wasm_bindgen(js_name = managedRuleCheck)]
pub fn managed_rule_check(policy: JsValue, rule: JsValue, home: &str, platform: JsValue) -> Result<JsValue, JsError> {
    let policy: crate::policy::managed::Managed = from_js(policy, "managed policy")?;
    let rule: crate::policy::rules::Rule = from_js(rule, "rule")?;
    let platform: crate::api::Platform = from_js(platform, "platform")?;
    to_js(&policy.check_rule(&rule, home, platform))
}

#[wasm_bindgen(js_name = managedSystemFile)]
pub fn managed_system_file(platform: JsValue) -> Result<String, JsError> {
    let platform: crate::api::Platform = from_js(platform, "platform")?;
    Ok(crate::policy::managed::system_file(platform).to_string())
}

/// Why a session's workspace is not taken as one (`/`, or above home), or
/// undefined. Lexical: the caller passes real paths.
#[wasm_bindgen(js_name = workspaceRefusal)]
pub fn workspace_refusal(workspace: &str, home: &str) -> Option<String> {
    crate::policy::baseline::workspace_refusal(workspace, home)
}

/// `codeVariables(names)`: those of `names` that name code, configuration
/// or a repository (the text layer's table). The plugin removes them from
/// every fenced call when the host took them from the workspace's `.env`.
#[wasm_bindgen(js_name = codeVariables)]
pub fn code_variables(names: JsValue) -> Result<JsValue, JsError> {
    let names: Vec<String> = from_js(names, "variable names")?;
    to_js(&names.into_iter().filter(|n| crate::effects::names_code(n)).collect::<Vec<_>>())
}

#[wasm_bindgen(js_name = renderRules)]
pub fn render_rules(rules: JsValue, commands: JsValue) -> Result<String, JsError> {
    let rules: Vec<crate::policy::rules::Rule> = from_js(rules, "rules")?;
    let commands: Vec<crate::policy::rules::CommandGrant> =
        if commands.is_undefined() { Vec::new() } else { from_js(commands, "commands")? };
    Ok(crate::policy::rules::render_rules_file(&rules, &commands))
}

/// `compileProfile(request, host?)`: the fence plan and its Seatbelt text.
#[wasm_bindgen(js_name = compileProfile)]
pub fn compile_profile(request: JsValue, host: JsValue) -> Result<JsValue, JsError> {
    let request: crate::fence::ProfileRequest = from_js(request, "profile request")?;
    let compile = |host: &dyn Host| {
        let plan = crate::fence::compile(&request, host);
        let sbpl = crate::fence::sbpl::render_for(&request, &plan, host);
        // A profile sandbox-exec cannot take is thrown, never run unfenced.
        sbpl.within_limits().map(|()| serde_json::json!({ "plan": plan, "sbpl": sbpl }))
    };
    let compiled = match JsHost::for_value(&host)? {
        None => compile(&LexicalHost),
        Some(h) => {
            // A fence compiled from guesses is no fence.
            let enclosing = h.begin();
            let c = compile(&*h);
            h.outcome(c, enclosing)?
        }
    };
    to_js(&compiled.map_err(|e| JsError::new(&format!("dsh-allow: {e}")))?)
}

/// `withheldAt(plan, path)`: the capabilities a compiled fence plan refuses
/// at a real path (what a bare "Permission denied" there can have been).
#[wasm_bindgen(js_name = withheldAt)]
pub fn withheld_at(plan: JsValue, path: &str) -> Result<JsValue, JsError> {
    let plan: crate::fence::FencePlan = from_js(plan, "fence plan")?;
    to_js(&plan.withheld_at(path))
}

/// `foldLedger(text, {sessionId?, limit?, baseline?})`: one row per call.
#[wasm_bindgen(js_name = foldLedger)]
pub fn fold_ledger(text: &str, options: JsValue) -> Result<JsValue, JsError> {
    let options: crate::ledger::FoldOptions =
        if options.is_undefined() || options.is_null() { Default::default() } else { from_js(options, "fold options")? };
    to_js(&crate::ledger::fold(text, &options))
}

/// `foldLedgerJson(text, optionsJson) -> foldedJson`: the same fold with JSON
/// text out, cheaper than building the JS objects field by field (and the
/// rows' lists passed through as the ledger wrote them).
#[wasm_bindgen(js_name = foldLedgerJson)]
pub fn fold_ledger_json(text: &str, options: &str) -> Result<String, JsError> {
    let options: crate::ledger::FoldOptions = if options.trim().is_empty() {
        Default::default()
    } else {
        serde_json::from_str(options).map_err(|e| JsError::new(&format!("fold options: {e}")))?
    };
    Ok(crate::ledger::fold_json(text, &options))
}

/// `explainDenials(stderr, cwd, home)`: kernel denials as guidance for the model.
#[wasm_bindgen(js_name = explainDenials)]
pub fn explain_denials(stderr: &str, cwd: &str, home: &str) -> Result<JsValue, JsError> {
    to_js(&crate::fence::guidance::explain_denials(stderr, cwd, home))
}

/// `redact(command)`: secrets replaced before anything is written.
#[wasm_bindgen]
pub fn redact(text: &str) -> String {
    crate::ledger::redact(text)
}

/// `resolveMode(events, explicit?, defaultMode)` per dsh-sandbox-policy.
#[wasm_bindgen(js_name = resolveMode)]
pub fn resolve_mode(events: JsValue, explicit: JsValue, default_mode: JsValue) -> Result<JsValue, JsError> {
    let events: Vec<crate::policy::mode::SessionEvent> = from_js(events, "events")?;
    let explicit: Option<crate::api::Mode> =
        if explicit.is_undefined() || explicit.is_null() { None } else { Some(from_js(explicit, "explicit mode")?) };
    let default_mode: crate::api::Mode = from_js(default_mode, "default mode")?;
    to_js(&crate::policy::mode::resolve_mode(&events, explicit, default_mode))
}

/// `commandGrantPrompt(commands)`: the model's prompt section for them.
#[wasm_bindgen(js_name = commandGrantPrompt)]
pub fn command_grant_prompt(commands: JsValue) -> Result<String, JsError> {
    let commands: Vec<crate::policy::rules::CommandGrant> = from_js(commands, "commands")?;
    Ok(crate::policy::command_grant::prompt_section(&commands))
}

#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// A fresh rule id: the only randomness, kept at the edge.
#[wasm_bindgen(js_name = newRuleId)]
pub fn new_rule_id() -> Result<String, JsError> {
    let mut bytes = [0u8; 6];
    getrandom::getrandom(&mut bytes).map_err(|e| JsError::new(&e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `buildReviewInput(request)`: what the auto-reviewer is shown, or `null`
/// when there is nothing it could allow.
#[wasm_bindgen(js_name = buildReviewInput)]
pub fn build_review_input(request: JsValue) -> Result<JsValue, JsError> {
    let request: crate::decide::review::ReviewRequest = from_js(request, "review request")?;
    to_js(&crate::decide::review::review_input(&request))
}

/// `reviewSystemPrompt()`: the reviewer's fixed instructions.
#[wasm_bindgen(js_name = reviewSystemPrompt)]
pub fn review_system_prompt() -> String {
    crate::decide::review::SYSTEM_PROMPT.to_string()
}

/// `parseReviewAnswer(text) -> {verdict: 'ALLOW' | 'ASK', reason}`.
#[wasm_bindgen(js_name = parseReviewAnswer)]
pub fn parse_review_answer(text: &str) -> Result<JsValue, JsError> {
    to_js(&crate::decide::review::parse_answer(text))
}
