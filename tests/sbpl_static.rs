//! The static Seatbelt check: every profile the core can emit — every tier
//! and mode, every vector's rules and grants, seeded random rule sets, paths
//! with quotes, backslashes, newlines, spaces, non-ASCII and great length —
//! reads as SBPL, names only operations, filters and modifiers Seatbelt
//! defines (tests/support/sbpl_vocabulary.rs, each with its public source),
//! references exactly the parameters it passes with `-D`, and fits the
//! string and argument limits. It runs everywhere, no Mac needed; what it
//! cannot see is what the kernel then does with a well-formed profile.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/sbpl_vocabulary.rs"]
mod sbpl_vocabulary;

#[path = "support/sbpl_check.rs"]
mod sbpl_check;

#[path = "support/vectors.rs"]
#[allow(dead_code)]
mod vectors;

use std::collections::BTreeSet;

use dsh_allow::api::{Mode, Persistence, Platform};
use dsh_allow::fence::sbpl::{operations, render_for, Sbpl};
use dsh_allow::fence::{compile, Enforce, ProfileRequest};
use dsh_allow::host::{FixtureHost, Host};
use dsh_allow::policy::capability::Capability;
use dsh_allow::policy::rules::Rule;

use sbpl_check::{check, MAX_ARGV_BYTES, MAX_STRING_BYTES};

const TIERS: [Enforce; 5] = [Enforce::Full, Enforce::Guarded, Enforce::Process, Enforce::Writes, Enforce::Off];
const MODES: [Mode; 3] = [Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess];

/// A line past the test harness's capture: the counts show in a passing run.
fn loud(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{line}");
}

fn host() -> FixtureHost {
    serde_json::from_value(serde_json::json!({
        "dirs": ["/Users/me/project", "/Users/me/project/build", "/Users/me/.dsh", "/private/tmp", "/Users/me/other", "/opt/homebrew/bin"],
        "files": ["/Users/me/.dsh/dsh-allow.json", "/Users/me/.ssh/id_ed25519", "/opt/homebrew/Cellar/gh/2.0/bin/gh"],
        "symlinks": {"/tmp": "private/tmp", "/var": "private/var", "/etc": "private/etc", "/opt/homebrew/bin/gh": "../Cellar/gh/2.0/bin/gh"}
    }))
    .unwrap()
}

fn request(workspace: &str, home: &str, enforce: Enforce, mode: Mode, rules: Vec<Rule>, grants: Vec<Rule>) -> ProfileRequest {
    ProfileRequest {
        workspace: workspace.into(),
        home: home.into(),
        harness_home: format!("{home}/.dsh"),
        platform: Platform::Macos,
        mode,
        rules,
        grants,
        protected_files: vec![format!("{home}/.dsh/dsh-allow.json"), format!("{home}/.dsh/dsh-allow-audit.ndjson")],
        enforce,
        persistence: Persistence::Shut,
        host_pids: vec![],
        host_ports: vec![3080],
        folders: vec![],
        kept: vec![],
        managed: None,
    }
}

fn rule(path: &str, recursive: bool, caps: &[Capability]) -> Rule {
    let access: serde_json::Map<String, serde_json::Value> = caps.iter().map(|c| (c.as_str().to_string(), true.into())).collect();
    serde_json::from_value(serde_json::json!({"id": "r", "path": path, "recursive": recursive, "access": access})).unwrap()
}

/// What the check saw over many profiles.
#[derive(Default)]
struct Tally {
    profiles: usize,
    operations: BTreeSet<String>,
    filters: BTreeSet<String>,
    wrong: Vec<String>,
}

impl Tally {
    /// Compile and render `req` as the plugin does, then check the result.
    fn profile(&mut self, label: &str, req: &ProfileRequest, host: &dyn Host) -> Sbpl {
        let plan = compile(req, host);
        let s = render_for(req, &plan, host);
        self.judge(label, &s);
        s
    }

    fn judge(&mut self, label: &str, s: &Sbpl) {
        self.profiles += 1;
        match check(&s.text, &s.params) {
            Ok(seen) => {
                self.operations.extend(seen.operations);
                self.filters.extend(seen.filters);
            }
            Err(problems) => self.wrong.push(format!("{label}: {problems:#?}\n{}", s.text)),
        }
        // What the product refuses to hand sandbox-exec is what the check rejects.
        if let Err(e) = s.within_limits() {
            self.wrong.push(format!("{label}: the generator's own limits refused a profile the core emitted here: {e}"));
        }
    }

    fn done(self, what: &str) {
        loud(&format!(
            "SBPL static check, {what}: {} profiles, {} distinct operations {:?}, {} distinct filters {:?}",
            self.profiles,
            self.operations.len(),
            self.operations,
            self.filters.len(),
            self.filters
        ));
        assert!(self.profiles > 0);
        assert!(self.wrong.is_empty(), "{} of {} profiles failed the static check:\n{}", self.wrong.len(), self.profiles, self.wrong.join("\n\n"));
    }
}

fn tiers_and_modes(t: &mut Tally) {
    use Capability::*;
    let h = host();
    let rule_sets: Vec<Vec<Rule>> = vec![
        vec![],
        vec![rule("/Users/me/other", true, &[Read, Write])],
        vec![rule("/Users/me/.dsh", true, &[Write, Create, Delete])],
        vec![rule("/Users/me", true, &[Read]), rule("/Users/me/project", true, &[Write, Create, Delete])],
        vec![rule("/opt/homebrew/bin/gh", false, &[Execute]), rule("/Users/me/project/.git/hooks/pre-commit", false, &[Write, Create])],
        vec![rule("/", true, &Capability::ALL)],
    ];
    for enforce in TIERS {
        for mode in MODES {
            for (i, rules) in rule_sets.iter().enumerate() {
                let req = request("/Users/me/project", "/Users/me", enforce, mode, rules.clone(), vec![]);
                t.profile(&format!("{enforce:?} {mode:?} rule set {i}"), &req, &h);
            }
            // This call's one-shot grant, as the plugin claims one.
            let req = request("/Users/me/project", "/Users/me", enforce, mode, vec![], vec![rule("/Users/me/project/build", true, &[Delete])]);
            t.profile(&format!("{enforce:?} {mode:?} with a one-shot grant"), &req, &h);
        }
        // The plugin's probe profile (plugin/fence.js probeSeatbelt).
        let root = "/Users/me/.dsh/.dsh-allow-probe-x";
        let mut probe = request(&format!("{root}/ws"), &format!("{root}/home"), enforce, Mode::WorkspaceWrite, vec![], vec![]);
        probe.harness_home = format!("{root}/harness");
        probe.protected_files.clear();
        t.profile(&format!("{enforce:?} probe"), &probe, &h);
    }
}

#[test]
fn every_tier_and_mode_emits_sbpl_that_parses_and_names_only_seatbelt_words() {
    let mut t = Tally::default();
    tiers_and_modes(&mut t);
    t.done("tiers x modes");
}

fn vector_profiles(t: &mut Tally) {
    for case in vectors::cases() {
        let r = &case.request;
        // The call's profile carries its grants and what the decision adds
        // to the fence beyond the policy (the plugin's profileFor).
        let d = dsh_allow::decide::decide(r, &case.fixture);
        let mut grants = r.grants.clone();
        grants.extend(d.fence_grants.iter().cloned());
        for platform in [r.platform, Platform::Macos] {
            for enforce in TIERS {
                let req = ProfileRequest {
                    workspace: r.workspace.clone(),
                    home: r.home.clone(),
                    harness_home: r.harness_home.clone(),
                    platform,
                    mode: r.mode,
                    rules: r.rules.clone(),
                    grants: grants.clone(),
                    protected_files: r.protected_files.clone(),
                    enforce,
                    persistence: r.persistence,
                    host_pids: vec![],
        host_ports: vec![3080],
        folders: vec![],
        kept: vec![],
        managed: None,
                };
                t.profile(&format!("vector {} ({platform:?}, {enforce:?})", case.name), &req, &case.fixture);
            }
        }
    }
}

#[test]
fn every_vector_rule_set_compiles_to_a_well_formed_profile_in_every_tier() {
    let mut t = Tally::default();
    vector_profiles(&mut t);
    t.done("tests/vectors/core.json");
}

/// Names a rule or a workspace may carry that an SBPL text must never see
/// raw: the profile's own syntax, escapes, control characters, non-ASCII.
const ADVERSARIAL: &[&str] = &[
    "has space",
    "quote\"d",
    "back\\slash",
    "new\nline",
    "tab\there",
    "paren)(allow default)(",
    "semi;colon",
    "hash#\"raw\"",
    "(param \"X\")) (allow default",
    "中文目录",
    "emoji-🦀",
    "é-accent",
    "trailing\\",
    "\u{7f}del",
];

/// A seeded xorshift, as tests/kernel.rs's differential uses.
struct Seed(u64);

impl Seed {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn random_path(rnd: &mut Seed) -> String {
    let roots = ["/Users/me/project", "/Users/me", "/Users/me/.ssh", "/tmp", "/private/tmp", "/opt/homebrew/bin", "/", "/Volumes/ext", "/usr/local", "~", "/Users/me/project/.git"];
    let mut p = roots[rnd.below(roots.len())].to_string();
    for _ in 0..rnd.below(4) {
        let seg = match rnd.below(3) {
            0 => ADVERSARIAL[rnd.below(ADVERSARIAL.len())].to_string(),
            1 => ["src", "build", "target", "node_modules", ".venv", "a", "..", ".", "hooks"][rnd.below(9)].to_string(),
            _ => "d".repeat(1 + rnd.below(200)),
        };
        if !p.ends_with('/') {
            p.push('/');
        }
        p.push_str(&seg);
    }
    p
}

fn random_rules(rnd: &mut Seed, most: usize) -> Vec<Rule> {
    let mut rules = Vec::new();
    for _ in 0..rnd.below(most + 1) {
        let caps: Vec<Capability> = Capability::ALL.iter().copied().filter(|_| rnd.below(2) == 0).collect();
        if caps.is_empty() {
            continue;
        }
        rules.push(rule(&random_path(rnd), rnd.below(4) != 0, &caps));
    }
    rules
}

fn random_rule_sets(t: &mut Tally, sets: usize) {
    let h = host();
    let mut rnd = Seed(0x2545_f491_4f6c_dd1d);
    for n in 0..sets {
        let enforce = TIERS[rnd.below(TIERS.len())];
        let mode = MODES[rnd.below(MODES.len())];
        let rules = random_rules(&mut rnd, 8);
        let grants = random_rules(&mut rnd, 2);
        let req = request("/Users/me/project", "/Users/me", enforce, mode, rules, grants);
        t.profile(&format!("random rule set {n} ({enforce:?}, {mode:?}): {:?}", req.rules), &req, &h);
    }
}

#[test]
fn seeded_random_rule_sets_compile_to_well_formed_profiles() {
    let mut t = Tally::default();
    random_rule_sets(&mut t, 600);
    t.done("600 seeded random rule sets");
}

#[test]
fn adversarial_paths_go_in_as_parameters_verbatim_and_never_into_the_text() {
    let mut t = Tally::default();
    let h = host();
    for name in ADVERSARIAL {
        let ws = format!("/Users/me/{name}");
        let home = format!("/Users/{name}");
        for enforce in TIERS {
            let rules = vec![rule(&format!("{ws}/{name}"), true, &Capability::ALL), rule(&format!("{home}/x {name}"), false, &[Capability::Read])];
            let req = request(&ws, &home, enforce, Mode::WorkspaceWrite, rules, vec![]);
            let s = t.profile(&format!("workspace {ws:?} ({enforce:?})"), &req, &h);
            if enforce != Enforce::Off {
                assert!(s.params.iter().any(|(_, v)| v == &ws), "{ws:?} is not passed verbatim: {:?}", s.params);
            }
            assert!(!s.text.contains(name), "{name:?} reached the profile text:\n{}", s.text);
        }
    }
    // Long but within what macOS can name: accepted, byte for byte.
    let deep = format!("/Users/me/project/{}", "x".repeat(MAX_STRING_BYTES - "/Users/me/project/".len()));
    assert_eq!(deep.len(), MAX_STRING_BYTES);
    let s = t.profile("a 1023-byte rule", &request("/Users/me/project", "/Users/me", Enforce::Full, Mode::WorkspaceWrite, vec![rule(&deep, true, &[Capability::Write])], vec![]), &h);
    assert!(s.params.iter().any(|(_, v)| v == &deep));
    t.done("adversarial paths");
}

/// A path longer than Seatbelt and macOS can hold: the core refuses the
/// profile (compileProfile throws, the call does not run) and the check
/// rejects it too — never a profile sandbox-exec would choke on.
#[test]
fn a_path_longer_than_seatbelt_takes_is_refused_by_the_generator_and_by_the_check() {
    let h = host();
    let long = format!("/Users/me/{}", "y".repeat(MAX_STRING_BYTES));
    for (what, rules, ws) in [
        ("a rule", vec![rule(&long, true, &Capability::ALL)], "/Users/me/project".to_string()),
        ("the workspace", vec![], long.clone()),
    ] {
        for enforce in [Enforce::Full, Enforce::Guarded, Enforce::Process, Enforce::Writes] {
            let req = request(&ws, "/Users/me", enforce, Mode::WorkspaceWrite, rules.clone(), vec![]);
            let s = render_for(&req, &compile(&req, &h), &h);
            let problems = check(&s.text, &s.params).expect_err(&format!("{what} ({enforce:?}): a {}-byte -D value passed the check", long.len()));
            assert!(problems.iter().any(|p| p.contains("-byte value")), "{problems:?}");
            let refused = s.within_limits().expect_err("the generator handed on a path macOS cannot name");
            assert!(refused.contains("-byte path"), "{refused}");
        }
    }
}

/// A NUL cannot travel in an argument: a rule carrying one is refused, not
/// cut short at the NUL (which would name another path).
#[test]
fn a_path_with_a_nul_byte_is_refused_by_the_generator_and_by_the_check() {
    let h = host();
    let req = request("/Users/me/project", "/Users/me", Enforce::Full, Mode::WorkspaceWrite, vec![rule("/Users/me/a\0b", true, &Capability::ALL)], vec![]);
    let s = render_for(&req, &compile(&req, &h), &h);
    assert!(s.params.iter().any(|(_, v)| v.contains('\0')), "the rule did not reach the profile: {:?}", s.params);
    assert!(check(&s.text, &s.params).unwrap_err().iter().any(|p| p.contains("NUL")));
    assert!(s.within_limits().unwrap_err().contains("NUL"));
}

/// Rules pile up (one per `/allow add`); past the argument budget the core
/// refuses the profile, and the check agrees on exactly where that is.
#[test]
fn the_argument_budget_is_held_by_the_generator_and_the_check_alike() {
    let h = host();
    let mut rules = Vec::new();
    let mut crossed = false;
    for i in 0..400 {
        rules.push(rule(&format!("/Users/me/r{i:03}/{}", "z".repeat(900)), true, &[Capability::Read, Capability::Write]));
        let req = request("/Users/me/project", "/Users/me", Enforce::Full, Mode::WorkspaceWrite, rules.clone(), vec![]);
        let s = render_for(&req, &compile(&req, &h), &h);
        let over = sbpl_check::argv_bytes(&s.text, &s.params) > MAX_ARGV_BYTES;
        assert_eq!(check(&s.text, &s.params).is_err(), over, "{i} rules: the check and the budget disagree");
        assert_eq!(s.within_limits().is_err(), over, "{i} rules: the generator and the check disagree on the budget");
        if over {
            crossed = true;
            loud(&format!("SBPL static check: {} rules of ~900-byte paths pass the {MAX_ARGV_BYTES}-byte argument budget ({} bytes)", i + 1, sbpl_check::argv_bytes(&s.text, &s.params)));
            break;
        }
    }
    assert!(crossed, "400 long rules never reached the budget: the test proves nothing");
}

// --- the check itself: what it must reject ----------------------------------------

const GOOD: &str = "(version 1)\n(allow default)\n; a comment (with a paren\n(deny file-write-unlink (subpath (param \"P0\")))\n";

fn p0() -> Vec<(String, String)> {
    vec![("P0".into(), "/w".into())]
}

fn rejects(text: &str, params: &[(String, String)], why: &str) {
    let problems = check(text, params).expect_err(&format!("accepted:\n{text}"));
    assert!(problems.iter().any(|p| p.contains(why)), "rejected, but not for {why:?}: {problems:?}");
}

#[test]
fn a_well_formed_profile_passes() {
    let seen = check(GOOD, &p0()).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(seen.operations.contains("file-write-unlink") && seen.filters.contains("subpath") && seen.params.contains("P0"));
}

/// The reader is not narrower than SBPL where the vocabulary is not: raw
/// regexes, escapes, combinators and modifiers as Apple's and Chromium's
/// profiles write them (our own text, in their shapes).
#[test]
fn richer_sbpl_in_the_shapes_of_shipped_profiles_passes() {
    let text = "(version 1)\n(deny default (with no-log))\n\
        (allow file-read* file-read-metadata (subpath \"/usr/lib\") (literal \"/a \\\"b\\\\c\\x41\"))\n\
        (allow file-write-data (require-all (path (param \"LOG\")) (require-not (regex #\"^/private/tmp/[a-z]+\\.lock$\"))))\n\
        (allow process-exec (with report) (prefix \"/opt/tools\")) ; trailing comment\n";
    let seen = check(text, &[("LOG".into(), "/var/log/x".into())]).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    for f in ["subpath", "literal", "require-all", "path", "require-not", "regex", "prefix"] {
        assert!(seen.filters.contains(f), "{f} not seen: {:?}", seen.filters);
    }
    let forms = sbpl_check::parse(text).unwrap();
    let literal = format!("{forms:?}");
    assert!(literal.contains("/a \\\"b\\\\cA"), "escapes not read as TinyScheme reads them: {literal}");
}

#[test]
fn a_misspelt_operation_fails_the_check() {
    rejects(&GOOD.replace("file-write-unlink", "file-write-unlnk"), &p0(), "unknown operation file-write-unlnk");
    rejects(&GOOD.replace("file-write-unlink", "file-write"), &p0(), "unknown operation file-write");
    rejects(&GOOD.replace("(allow default)", "(allow defualt)"), &p0(), "unknown operation defualt");
}

#[test]
fn an_unknown_filter_or_modifier_fails_the_check() {
    rejects(&GOOD.replace("subpath", "sub-path"), &p0(), "unknown filter (sub-path");
    rejects(&GOOD.replace("(subpath (param \"P0\"))", "(subpath (param \"P0\")) (with no-lgo)"), &p0(), "unknown modifier");
    rejects(&GOOD.replace("(param \"P0\")", "(parm \"P0\")"), &[], "unknown value function (parm");
}

#[test]
fn a_side_door_filter_is_checked_for_its_operation_kind_and_address() {
    let ok = "(version 1)\n(allow default)\n(deny network-outbound (remote ip \"localhost:3080\"))\n(deny signal)\n(allow signal (target same-sandbox))\n";
    assert!(check(ok, &[]).is_ok(), "{:?}", check(ok, &[]));
    rejects(&ok.replace("remote ip", "remote ipv9"), &[], "(remote …) takes one of");
    rejects(&ok.replace("localhost:3080", "127.0.0.1:3080"), &[], "an address is localhost or *");
    rejects(&ok.replace("localhost:3080", "localhost:http"), &[], "an address is localhost or *");
    rejects(&ok.replace("(allow signal (target same-sandbox))", "(allow signal (target everyone))"), &[], "(target …) takes one of");
    rejects(&ok.replace("(deny signal)", "(deny signal (remote ip \"localhost:1\"))"), &[], "(remote …) does not go with signal");
    rejects(&ok.replace("(allow signal (target same-sandbox))", "(allow file-read-data (target self))"), &[], "(target …) does not go with file-read-data");
}

#[test]
fn unbalanced_parentheses_fail_the_check() {
    rejects(&GOOD.replace("(param \"P0\")))", "(param \"P0\"))"), &p0(), "never closed");
    rejects(&format!("{GOOD})"), &p0(), "closes nothing");
}

#[test]
fn an_unterminated_or_badly_escaped_string_fails_the_check() {
    rejects(&GOOD.replace("(param \"P0\")", "(param \"P0)"), &p0(), "unterminated string");
    rejects(&GOOD.replace("\"P0\"", "\"P\\q0\""), &p0(), "unknown escape");
    rejects("(version 1)\n(deny file-read-data (regex #\"^/x))\n", &[], "unterminated #\"");
}

#[test]
fn a_parameter_not_passed_or_not_used_fails_the_check() {
    rejects(GOOD, &[], "(param \"P0\") is used but not passed");
    let mut extra = p0();
    extra.push(("P1".into(), "/x".into()));
    rejects(GOOD, &extra, "-D P1 is passed but never used");
    rejects(GOOD, &[("P0".into(), "/w".into()), ("P0".into(), "/w".into())], "passed twice");
}

#[test]
fn a_profile_without_its_version_or_with_foreign_forms_fails_the_check() {
    rejects(&GOOD.replace("(version 1)\n", ""), &p0(), "(version 1)");
    rejects(&format!("{GOOD}(import \"bsd.sb\")\n"), &p0(), "unknown form (import");
    rejects(&format!("{GOOD}(deny)\n"), &p0(), "no operation");
    rejects(&format!("{GOOD}(deny (subpath (param \"P0\")) file-write-data)\n"), &p0(), "after a filter");
    rejects(&format!("{GOOD}(allow default (literal (param \"P0\")))\n"), &p0(), "`default` stands alone");
}

#[test]
fn what_libsandbox_refuses_in_a_filter_fails_the_check() {
    // sbpl1.scm: "subpaths must not end with a slash"; the value comes in by -D.
    rejects(GOOD, &[("P0".into(), "/w/".into())], "subpaths must not end with a slash");
    rejects(GOOD, &[("P0".into(), "".into())], "cannot be empty");
    rejects(GOOD, &[("P0".into(), "w".into())], "not absolute");
    rejects(&format!("{GOOD}(deny file-read-data (subpath \"/x/\"))\n"), &p0(), "subpaths must not end with a slash");
    // The operation table gives process-fork no path filter.
    rejects(&GOOD.replace("file-write-unlink", "process-fork"), &p0(), "process-fork takes no path filter");
    assert!(check(GOOD, &[("P0".into(), "/".into())]).is_ok(), "/ is the one subpath that ends in a slash");
}

/// Rule paths as a user or a store may write them: empty, relative, `~`,
/// doubled and trailing slashes, `.` and `..`. Whatever the core makes of
/// them, the profile must still be one libsandbox compiles.
#[test]
fn odd_rule_paths_still_make_well_formed_profiles() {
    let mut t = Tally::default();
    let h = host();
    for path in ["", ".", "..", "relative/dir", "/a/", "//double//slash//", "~", "~/", "~/x/", "/Users/me/project/../other/", "/./", "/x/./y/."] {
        for enforce in TIERS {
            for recursive in [true, false] {
                let req = request("/Users/me/project/", "~/", enforce, Mode::WorkspaceWrite, vec![rule(path, recursive, &Capability::ALL)], vec![rule(path, true, &[Capability::Delete])]);
                t.profile(&format!("rule path {path:?} ({enforce:?}, recursive {recursive})"), &req, &h);
            }
        }
    }
    t.done("odd rule paths");
}

#[test]
fn strings_and_values_past_the_cap_fail_the_check() {
    let long = "/".to_string() + &"a".repeat(MAX_STRING_BYTES);
    rejects(GOOD, &[("P0".into(), long.clone())], "-byte value");
    rejects(&format!("{GOOD}(deny file-read-data (literal \"{long}\"))\n"), &p0(), "-byte string");
    rejects(GOOD, &[("P0".into(), "/a\0b".into())], "NUL");
}

// --- the vocabulary ---------------------------------------------------------------

#[test]
fn every_vocabulary_entry_names_its_source_once() {
    use sbpl_vocabulary::*;
    let mut names = BTreeSet::new();
    for list in [FORMS, OPERATIONS, PATH_FILTERS, REGEX_FILTERS, COMBINATORS, VALUES, MODIFIERS] {
        for w in list {
            assert!(w.source.len() > 8, "{} has no source", w.name);
            assert!(names.insert(w.name), "{} listed twice", w.name);
        }
    }
}

#[test]
fn every_operation_a_capability_maps_to_is_a_seatbelt_operation() {
    for cap in Capability::ALL {
        for op in operations(cap) {
            assert!(sbpl_vocabulary::known(sbpl_vocabulary::OPERATIONS, op), "{op} ({}) is not in the vocabulary", cap.as_str());
        }
    }
}
