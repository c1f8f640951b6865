//! The rules file: stored path rules and command grants, parsed and validated
//! here so every adapter reports the same errors, naming the field at fault.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::policy::capability::{Access, Capability};

pub const RULES_VERSION: u64 = 3;

/// A stored rule, a deployment grant or a one-shot grant: a path and what it may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default)]
    pub id: String,
    pub path: String,
    #[serde(default = "yes")]
    pub recursive: bool,
    pub access: Access,
    #[serde(default)]
    pub hits: u64,
    #[serde(default)]
    pub created_at: String,
}

fn yes() -> bool {
    true
}

/// How strictly a command grant checks the command line's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    Strict,
    Any,
}

/// "This executable may write these roots" (whitelist-auto-approval.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandGrant {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub command: String,
    #[serde(default = "home_root")]
    pub roots: Vec<String>,
    #[serde(default = "strict")]
    pub shape: Shape,
    /// Capabilities the roots get; write + create unless listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    #[serde(default = "yes")]
    pub allow_cd_prefix: bool,
}

fn home_root() -> Vec<String> {
    vec!["$HOME".to_string()]
}

fn strict() -> Shape {
    Shape::Strict
}

/// What reading a rules file produced. A file that is not exactly the
/// current version, well formed, yields no rules and an `error`: the caller
/// must keep the file untouched and ask before every call, since what it
/// could not read may include the user's denials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesLoad {
    pub rules: Vec<Rule>,
    pub commands: Vec<CommandGrant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub warnings: Vec<String>,
}

/// The keys a version-3 file may hold at its top level.
const FILE_KEYS: &[&str] = &["version", "rules", "commands"];

/// Parse the text of a rules file. Only version 3 is read; every other
/// shape is an error, never fewer rules: an empty file (cut, or wiped), no
/// `version`, another version (older ones stored command prefixes, which
/// describe no file capability and cannot be translated; a newer one may
/// hold fields this version would drop), a top-level key this version does
/// not know. There is no older file-capability format to migrate.
pub fn parse_rules_file(text: &str) -> RulesLoad {
    if text.trim().is_empty() {
        return failed("the rules file is empty (cut short or wiped?); write {\"version\": 3, \"rules\": []} for no rules".into());
    }
    let value: Value = match distinct_json(text) {
        Ok(v) => v,
        Err(e) if e.is_data() => return failed(format!("the rules file {e}")),
        Err(e) => return failed(format!("the rules file is not JSON: {e}")),
    };
    let Some(obj) = value.as_object() else {
        return failed("the rules file must be a JSON object with \"version\": 3 and \"rules\"".into());
    };
    if let Some(e) = version_error(obj) {
        return failed(e);
    }
    if let Some(k) = obj.keys().find(|k| !FILE_KEYS.contains(&k.as_str())) {
        return failed(format!("{k}: unknown field (a version-3 file holds only version, rules and commands)"));
    }
    let mut load = RulesLoad::default();
    match obj.get("rules") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match parse_rule(item, &format!("rules[{i}]")) {
                    Ok(r) => load.rules.push(r),
                    Err(e) => return failed(e),
                }
            }
        }
        Some(_) => return failed("rules: expected an array".into()),
    }
    match obj.get("commands") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match parse_command_grant(item, &format!("commands[{i}]")) {
                    Ok((g, warning)) => {
                        if let Some(w) = warning {
                            load.warnings.push(w);
                        } else {
                            load.commands.push(g);
                        }
                    }
                    Err(e) => return failed(e),
                }
            }
        }
        Some(_) => return failed("commands: expected an array".into()),
    }
    load
}

/// `text` as JSON whose objects give each key once (see [`Distinct`]).
pub(crate) fn distinct_json(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Distinct>(text).map(|Distinct(v)| v)
}

/// JSON whose objects give each key once. A plain JSON reader keeps the
/// last of two equal keys, so `{"rules": [deny…], "rules": []}` would read
/// as no rules; here it is an error.
struct Distinct(Value);

impl<'de> Deserialize<'de> for Distinct {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DistinctVisitor).map(Distinct)
    }
}

struct DistinctVisitor;

impl<'de> Visitor<'de> for DistinctVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Distinct(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if obj.contains_key(&key) {
                return Err(de::Error::custom(format!("gives the key {key:?} twice")));
            }
            let Distinct(v) = map.next_value()?;
            obj.insert(key, v);
        }
        Ok(Value::Object(obj))
    }
}

/// Why the file's `version` is not the one this build reads, if it is not.
fn version_error(obj: &Map<String, Value>) -> Option<String> {
    let prefixes = obj.get("rules").and_then(Value::as_array).is_some_and(|r| !r.is_empty() && r.iter().all(Value::is_string));
    match obj.get("version") {
        Some(v) if v.as_u64() == Some(RULES_VERSION) => None,
        None if prefixes => Some(
            "the rules file is dsh-allow 0.1's list of command prefixes, which describe commands, not file capabilities, and cannot be translated; move it aside and add rules with /allow add".into(),
        ),
        None => Some(format!("version: missing (this dsh-allow reads version {RULES_VERSION}; add \"version\": {RULES_VERSION} if the rules are in its shape)")),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > RULES_VERSION) => {
            Some(format!("version: {n} was written by a newer dsh-allow (this one reads version {RULES_VERSION})"))
        }
        Some(v) => Some(format!("version: {v} is not a version this dsh-allow reads (it reads the number {RULES_VERSION}; older formats cannot be translated)")),
    }
}

fn failed(error: String) -> RulesLoad {
    RulesLoad { error: Some(error), ..RulesLoad::default() }
}

/// Validate one rule object (also used for deployment grants from config).
pub fn parse_rule(v: &Value, at: &str) -> Result<Rule, String> {
    let obj = v.as_object().ok_or(format!("{at}: expected an object"))?;
    known_keys(obj, at, &["id", "path", "recursive", "access", "hits", "createdAt"])?;
    let path = string_field(obj, at, "path")?.ok_or(format!("{at}.path: required"))?;
    check_rule_path(&path, &format!("{at}.path"))?;
    let recursive = match obj.get("recursive") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(format!("{at}.recursive: expected true or false")),
    };
    let access = parse_access(obj.get("access"), &format!("{at}.access"))?;
    let hits = match obj.get("hits") {
        None => 0,
        Some(h) => h.as_u64().ok_or(format!("{at}.hits: expected a non-negative integer"))?,
    };
    Ok(Rule {
        id: string_field(obj, at, "id")?.unwrap_or_default(),
        path,
        recursive,
        access,
        hits,
        created_at: string_field(obj, at, "createdAt")?.unwrap_or_default(),
    })
}

fn parse_access(v: Option<&Value>, at: &str) -> Result<Access, String> {
    let obj = v.and_then(Value::as_object).ok_or(format!("{at}: required, an object of capabilities"))?;
    let mut access = Access::default();
    for (k, val) in obj {
        let cap = Capability::parse(k)
            .ok_or(format!("{at}.{k}: unknown capability (read, write, create, delete, execute)"))?;
        let b = val.as_bool().ok_or(format!("{at}.{k}: expected true or false"))?;
        access.set(cap, b);
    }
    if access.is_empty() {
        return Err(format!("{at}: names no capability"));
    }
    Ok(access)
}

fn parse_command_grant(v: &Value, at: &str) -> Result<(CommandGrant, Option<String>), String> {
    let obj = v.as_object().ok_or(format!("{at}: expected an object"))?;
    known_keys(obj, at, &["id", "name", "command", "roots", "shape", "access", "allowCdPrefix"])?;
    let command = string_field(obj, at, "command")?.ok_or(format!("{at}.command: required"))?;
    if command.is_empty() || (command.contains('/') && !command.starts_with('/')) {
        return Err(format!("{at}.command: a bare program name or a fixed absolute path"));
    }
    if command.contains(char::is_whitespace) {
        return Err(format!("{at}.command: one program, without arguments"));
    }
    let roots = match obj.get("roots") {
        None => home_root(),
        Some(Value::Array(items)) => {
            let mut roots = Vec::new();
            for (i, r) in items.iter().enumerate() {
                let s = r.as_str().ok_or(format!("{at}.roots[{i}]: expected a string"))?;
                if !(s.starts_with('/') || s.starts_with("~") || s.starts_with("$HOME")) {
                    return Err(format!("{at}.roots[{i}]: an absolute path, ~ or $HOME"));
                }
                roots.push(s.to_string());
            }
            if roots.is_empty() {
                return Err(format!("{at}.roots: names no root"));
            }
            roots
        }
        Some(_) => return Err(format!("{at}.roots: expected an array of paths")),
    };
    let shape = match obj.get("shape").map(|s| s.as_str()) {
        None | Some(Some("strict")) => Shape::Strict,
        Some(Some("any")) => Shape::Any,
        _ => return Err(format!("{at}.shape: \"strict\" or \"any\"")),
    };
    let access = match obj.get("access") {
        None => None,
        a => Some(parse_access(a, &format!("{at}.access"))?),
    };
    let allow_cd_prefix = match obj.get("allowCdPrefix") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(format!("{at}.allowCdPrefix: expected true or false")),
    };
    let grant = CommandGrant {
        id: string_field(obj, at, "id")?.unwrap_or_default(),
        name: string_field(obj, at, "name")?.unwrap_or_else(|| command.clone()),
        command,
        roots,
        shape,
        access,
        allow_cd_prefix,
    };
    // `any` trades the shape check for narrow roots; with the whole home it
    // would let any spelling write anywhere the user can.
    let too_wide = grant.shape == Shape::Any
        && grant.roots.iter().any(|r| {
            let r = r.trim_end_matches('/');
            r == "$HOME" || r == "~" || r == "/" || r == "/Users" || r == "/home" || r == "/root"
        });
    let warning = too_wide.then(|| {
        format!("{at}: shape \"any\" with $HOME (or an ancestor of it) as a root is rejected; name the program's own directories in roots")
    });
    Ok((grant, warning))
}

fn known_keys(obj: &Map<String, Value>, at: &str, keys: &[&str]) -> Result<(), String> {
    match obj.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(format!("{at}.{k}: unknown field")),
        None => Ok(()),
    }
}

fn string_field(obj: &Map<String, Value>, at: &str, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{key}: expected a string")),
    }
}

fn check_rule_path(path: &str, at: &str) -> Result<(), String> {
    if !(path.starts_with('/') || path == "~" || path.starts_with("~/")) {
        return Err(format!("{at}: an absolute path (or ~/…), got {path:?}"));
    }
    if path.contains('\0') {
        return Err(format!("{at}: contains a NUL byte"));
    }
    Ok(())
}

/// Render rules as the version-3 file text (pretty, stable key order).
pub fn render_rules_file(rules: &[Rule], commands: &[CommandGrant]) -> String {
    #[derive(Serialize)]
    struct File<'a> {
        version: u64,
        rules: &'a [Rule],
        #[serde(skip_serializing_if = "<[CommandGrant]>::is_empty")]
        commands: &'a [CommandGrant],
    }
    let mut s = serde_json::to_string_pretty(&File { version: RULES_VERSION, rules, commands })
        .expect("rules serialize");
    s.push('\n');
    s
}
