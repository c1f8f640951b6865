//! The rules file: version 3 parses, older formats read as no rules and ask
//! for a backup, malformed files are reported with the field at fault.

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
fn the_command_prefix_format_of_0_1_reads_as_no_rules_and_asks_for_a_backup() {
    for old in [r#"{"rules": ["git status", "npm test"]}"#, r#"{"version": 2, "allow": [{"prefix": "ls"}]}"#, r#"[{"command": "ls"}]"#] {
        let load = parse_rules_file(old);
        assert!(load.rules.is_empty(), "{old}");
        if old.starts_with('{') {
            assert!(load.keep_backup, "an older format must be kept as .v2.bak: {old}");
            assert!(load.error.is_none());
        } else {
            assert!(load.error.is_some(), "a non-object is an error: {old}");
        }
    }
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
fn an_empty_file_is_an_empty_rule_set() {
    let load = parse_rules_file("  \n");
    assert!(load.rules.is_empty() && load.error.is_none() && !load.keep_backup);
}
