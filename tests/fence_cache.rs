//! The kept-fence file: what is written reads back the same, and anything
//! cut short or malformed reads as no fence (the runner then compiles).
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;

use dsh_allow::fence::landlock::Rules;
use dsh_allow::fs_host::{Found, Looked};
use dsh_allow::runner::kept::{parse, render, Entry, Seen};

fn entry() -> Entry {
    let mut folders = BTreeMap::new();
    folders.insert("/".to_string(), Some(Seen { dev: 1, ino: 2, mtime_ns: 1_700_000_000_123_456_789, ctime_ns: 1_700_000_000_223_456_789 }));
    folders.insert("/home/me/a folder".to_string(), Some(Seen { dev: 1, ino: 99, mtime_ns: 5, ctime_ns: 6 }));
    folders.insert("/proc".to_string(), None);
    let mut found = BTreeMap::new();
    found.insert("/home".to_string(), Looked { found: Found::Dir, id: Some((2049, 12)) });
    found.insert("/home/me/a folder/.envrc".to_string(), Looked { found: Found::Missing, id: None });
    found.insert("/home/me/a folder/x y".to_string(), Looked { found: Found::Link("../with space/t".into()), id: None });
    found.insert("/etc/hostname".to_string(), Looked { found: Found::File, id: Some((2049, 777)) });
    let mut listed = BTreeMap::new();
    listed.insert("/etc".to_string(), 1234567890123u64);
    Entry {
        key: r#"abi=7 exe=1:2:3.4:5 {"workspace":"/home/me/w"}"#.to_string(),
        id: "0123456789abcdef0123456789abcdef".to_string(),
        folders,
        found,
        listed,
        rules: Rules { handled: 32767, rules: vec![("/usr".into(), 8197), ("/home/me/w/with space".into(), 32767)] },
    }
}

#[test]
fn a_kept_fence_reads_back_as_written() {
    let e = entry();
    assert_eq!(parse(&render(&e).unwrap()), Some(e));
}

#[test]
fn a_kept_fence_cut_short_or_malformed_reads_as_none() {
    let text = render(&entry()).unwrap();
    // Every proper prefix lacks the closing line.
    for cut in 0..text.len() - 1 {
        assert_eq!(parse(&text[..cut]), None, "cut at {cut}");
    }
    for (from, to) in [
        ("dsh-allow fence 4", "dsh-allow fence 3"),
        ("key 46 abi=", "key 47 abi="),
        ("key 46 abi=", "key 45 abi="),
        ("key 46 abi=", "key -1 abi="),
        ("id 0123", "idx 0123"),
        ("found d 2049:12 ", "found d 2049-12 "),
        ("rule 8197", "rule x8197"),
        ("handled ", "handled -"),
        ("folder 1 99", "folder 1 z9"),
        ("found d ", "found x "),
        ("link 21 ", "link 999 "),
        ("list 1234567890123", "list -1"),
    ] {
        assert!(text.contains(from), "{from}");
        assert_eq!(parse(&text.replacen(from, to, 1)), None, "{from} → {to}");
    }
    assert_eq!(parse(&text.replacen("rule 8197 /usr\n", "rule 8197 /usr\nsomething else\n", 1)), None);
}

#[test]
fn a_fence_with_a_line_break_in_a_path_is_not_kept() {
    let mut e = entry();
    e.rules.rules.push(("/home/me/w/odd\nname".into(), 1));
    assert_eq!(render(&e), None);
    let mut e = entry();
    e.folders.insert("/x\ny".into(), None);
    assert_eq!(render(&e), None);
    let mut e = entry();
    e.found.insert("/x".into(), Looked { found: Found::Link("a\nb".into()), id: None });
    assert_eq!(render(&e), None);
}

#[test]
fn every_field_of_the_profile_is_in_a_kept_fences_key_or_named_as_one_the_compile_never_reads() {
    use dsh_allow::runner::kept::{meaning, NOT_COMPILED};
    let rule = serde_json::json!({ "id": "r", "path": "/w/a", "recursive": true, "access": { "read": true } });
    let req: dsh_allow::fence::ProfileRequest = serde_json::from_value(serde_json::json!({
        "workspace": "/w", "home": "/h", "harnessHome": "/h/.dsh", "platform": "linux", "mode": "workspace-write",
        "rules": [rule], "grants": [rule], "protectedFiles": ["/h/.dsh/p"], "enforce": "full", "persistence": "shut",
        "hostPids": [1], "hostPorts": [2], "folders": ["/w/b"], "kept": ["/w/c"],
        "managed": { "files": ["/etc/dsh/managed.json"], "deny": [rule] },
    }))
    .unwrap();
    let all = serde_json::to_value(&req).unwrap();
    let keyed: serde_json::Value = serde_json::from_str(&meaning(&req)).unwrap();
    for field in all.as_object().unwrap().keys() {
        assert!(
            keyed.get(field).is_some() || NOT_COMPILED.contains(&field.as_str()),
            "the profile's {field:?} is neither in a kept fence's key nor named as a field the compile never reads"
        );
    }
    assert!(keyed["managed"]["deny"].is_array(), "the managed policy's denials are in the key");
}
