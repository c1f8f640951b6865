//! The rules file: version 3 parses; every other shape — empty, no or
//! another version, an unknown key, malformed — is an error naming what is
//! wrong, with no rules: never read as fewer rules.

use dsh_allow::policy::rules::{parse_rules_file, render_rules_file};

#[test]
fn a_version_3_file_round_trips() {
    let text = r#"{"version": 3, "rules": [{"id": "f1", "path": "/Users/me/project/build", "recursive": true,
        "access": {"write": true, "create": true, "delete": true}, "hits": 2, "createdAt": "2026-01-01T00:00:00.000Z"}]}"#;
    let load = parse_rules_file(text);
    assert_eq!(load.error, None);
    assert_eq!(load.rules.len(), 1);
    assert_eq!(load.rules[0].access.describe(), "write,create,delete");
    let again = parse_rules_file(&render_rules_file(&load.rules, &load.commands));
    assert_eq!(again.rules, load.rules);
}

#[test]
fn any_version_but_the_number_3_is_an_error_never_fewer_rules() {
    let deny = r#"[{"path": "/w/secret", "access": {"read": false}}]"#;
    let cases = [
        (format!(r#"{{"rules": {deny}}}"#), "version: missing"),
        (format!(r#"{{"version": 2, "rules": {deny}}}"#), "version: 2"),
        (format!(r#"{{"version": "3", "rules": {deny}}}"#), r#"version: "3""#),
        (format!(r#"{{"version": 3.0, "rules": {deny}}}"#), "version: 3.0"),
        (format!(r#"{{"version": 4, "rules": {deny}}}"#), "newer dsh-allow"),
        (format!(r#"{{"version": null, "rules": {deny}}}"#), "version: null"),
    ];
    for (text, says) in cases {
        let load = parse_rules_file(&text);
        let err = load.error.unwrap_or_else(|| panic!("no error for {text}"));
        assert!(err.contains(says), "{err:?} does not say {says:?}");
        assert!(load.rules.is_empty() && load.commands.is_empty());
    }
}

#[test]
fn the_command_prefix_format_of_0_1_is_named_and_kept_as_an_error() {
    for old in [r#"{"rules": ["git status", "npm test"]}"#, r#"{"version": 2, "allow": [{"prefix": "ls"}]}"#, r#"[{"command": "ls"}]"#] {
        let load = parse_rules_file(old);
        assert!(load.rules.is_empty(), "{old}");
        assert!(load.error.is_some(), "an older format is an error, not no rules: {old}");
    }
    assert!(parse_rules_file(r#"{"rules": ["git status"]}"#).error.unwrap().contains("command prefixes"));
}

#[test]
fn a_key_given_twice_is_an_error_not_the_last_one_winning() {
    for text in [
        r#"{"version": 3, "rules": [{"path": "/w/secret", "access": {"read": false}}], "rules": []}"#,
        r#"{"version": 3, "rules": [{"path": "/w/secret", "access": {"read": false, "read": true}}]}"#,
        r#"{"version": 3, "version": 2, "rules": []}"#,
    ] {
        let load = parse_rules_file(text);
        let err = load.error.unwrap_or_else(|| panic!("no error for {text}"));
        assert!(err.contains("twice"), "{err}");
        assert!(load.rules.is_empty());
    }
}

#[test]
fn a_top_level_key_this_version_does_not_know_is_an_error() {
    let load = parse_rules_file(r#"{"version": 3, "rules": [], "deny": [{"path": "/w/secret"}]}"#);
    assert!(load.error.unwrap().starts_with("deny: unknown field"));
}

#[test]
fn malformed_rules_are_reported_with_the_field_that_is_wrong() {
    let cases = [
        ("{\"version\": 3, \"rules\": [", "not JSON"),
        (r#"{"version": 3, "rules": {}}"#, "rules: expected an array"),
        (r#"{"version": 3, "rules": [{"path": "relative/x", "access": {"read": true}}]}"#, "rules[0].path"),
        (r#"{"version": 3, "rules": [{"path": "/x"}]}"#, "rules[0].access"),
        (r#"{"version": 3, "rules": [{"path": "/x", "access": {"fly": true}}]}"#, "rules[0].access.fly"),
        (r#"{"version": 3, "rules": [{"path": "/x", "access": {"read": "yes"}}]}"#, "rules[0].access.read"),
        (r#"{"version": 3, "rules": [{"path": "/x", "recursive": 1, "access": {"read": true}}]}"#, "rules[0].recursive"),
        (r#"{"version": 3, "rules": [{"path": "/x", "access": {"read": true}, "colour": 1}]}"#, "rules[0].colour"),
        (r#"{"version": 3, "rules": [{"path": "/x", "access": {"read": true}}, {"path": 7, "access": {}}]}"#, "rules[1].path"),
        (r#"{"version": 3, "rules": [], "commands": [{"command": "./lark-cli"}]}"#, "commands[0].command"),
        (r#"{"version": 3, "rules": [], "commands": [{"command": "gh", "shape": "loose"}]}"#, "commands[0].shape"),
    ];
    for (text, field) in cases {
        let load = parse_rules_file(text);
        let err = load.error.unwrap_or_else(|| panic!("no error for {text}"));
        assert!(err.contains(field), "error {err:?} does not name {field}");
        assert!(load.rules.is_empty(), "a broken file yields no rules, never half of them");
    }
}

#[test]
fn shape_any_with_the_whole_home_is_rejected_with_a_warning() {
    let load = parse_rules_file(r#"{"version": 3, "rules": [], "commands": [
        {"command": "lark-cli", "shape": "any"},
        {"command": "gh", "shape": "any", "roots": ["~/.config/gh"]}]}"#);
    assert_eq!(load.error, None);
    assert_eq!(load.commands.len(), 1);
    assert_eq!(load.commands[0].command, "gh");
    assert!(load.warnings.iter().any(|w| w.contains("commands[0]") && w.contains("$HOME")));
}

#[test]
fn an_empty_file_is_an_error_not_an_empty_rule_set() {
    for text in ["", "  \n", "\n\n"] {
        let load = parse_rules_file(text);
        assert!(load.error.unwrap().contains("empty"), "{text:?}");
    }
    let none = parse_rules_file(r#"{"version": 3, "rules": []}"#);
    assert!(none.error.is_none() && none.rules.is_empty());
}
