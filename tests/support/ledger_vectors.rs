//! Folding vectors shared by the native and the browser suites.

use dsh_allow::ledger::{fold, FoldOptions};

fn line(v: serde_json::Value) -> String {
    let mut s = v.to_string();
    s.push('\n');
    s
}

fn decision(session: &str, call: &str, decision: &str, source: &str, command: &str) -> String {
    line(serde_json::json!({"dshAllow": 1, "kind": "decision", "time": format!("t-{call}"), "sessionId": session,
        "callId": call, "tool": "bash", "command": command, "cwd": "/w", "mode": "workspace-write",
        "decision": decision, "source": source, "missing": [{"path": "/w/build", "capability": "delete"}]}))
}

fn answer(session: &str, call: &str, action: &str) -> String {
    line(serde_json::json!({"dshAllow": 1, "kind": "answer", "sessionId": session, "callId": call, "action": action,
        "stored": if action == "always-allow" { serde_json::json!([{"path": "/w/build", "access": {"delete": true}}]) } else { serde_json::json!([]) }}))
}

/// Each check returns a description of what went wrong, if anything.
pub fn checks() -> Vec<(&'static str, Option<String>)> {
    let mut out = Vec::new();
    let all = FoldOptions { session_id: Some("s1".into()), limit: None, baseline: true };

    let text = decision("s1", "c1", "prompt", "policy", "rm -rf build") + &answer("s1", "c1", "always-allow");
    let f = fold(&text, &all);
    out.push(("a_prompt_and_the_human_answer_fold_into_one_human_row", (|| {
        let [r] = f.rows.as_slice() else { return Some(format!("{} rows", f.rows.len())) };
        (r.source != "human" || r.outcome != "allowed" || r.action.as_deref() != Some("always-allow") || r.stored.len() != 1)
            .then(|| format!("{r:?}"))
    })()));

    let text = decision("s1", "a", "allow", "baseline", "cat x") + &decision("s1", "b", "prompt", "policy", "rm b")
        + &decision("s1", "c", "refuse", "policy", "cat ~/.ssh/id") + &answer("s1", "b", "deny")
        + &decision("s1", "a", "allow", "baseline", "cat x");
    let f = fold(&text, &all);
    let order: Vec<&str> = f.rows.iter().map(|r| r.call_id.as_str()).collect();
    out.push(("rows_keep_the_order_of_first_appearance", (order != ["a", "b", "c"]).then(|| format!("{order:?}"))));
    out.push(("a_denied_prompt_is_a_human_denial", (f.rows.get(1).map(|r| (r.outcome.as_str(), r.source.as_str())) != Some(("denied", "human"))).then(|| format!("{:?}", f.rows.get(1)))));

    let hidden = fold(&text, &FoldOptions { session_id: Some("s1".into()), limit: None, baseline: false });
    out.push(("default_allows_are_hidden_until_asked_for", (hidden.rows.len() != 2 || hidden.hidden_baseline != 1).then(|| format!("{} rows, {} hidden", hidden.rows.len(), hidden.hidden_baseline))));

    let text = String::from("not json\n{\"dshAllow\":1,\"kind\":\"decision\",\"callId\":\"x\",\"decision\":\"allow\"}\n{\"foreign\":true}\n")
        + "{\"dshAllow\":1,\"kind\":\"answer\",\"sessionId\":\"s1\",\"callId\":\"nobody\",\"action\":\"deny\"}\n"
        + &decision("s1", "ok", "allow", "rule", "rm x") + "{\"dshAllow\":1,\"kind\":\"decis";
    // Without a session filter every line is read (with one, lines that do
    // not mention the session are passed over before parsing).
    let f = fold(&text, &FoldOptions { session_id: None, limit: None, baseline: true });
    out.push(("broken_foreign_and_sessionless_lines_are_skipped_not_fatal", (f.rows.len() != 1 || f.skipped != 5).then(|| format!("{} rows, {} skipped", f.rows.len(), f.skipped))));

    let kernel = |call: &str, denied: serde_json::Value| {
        line(serde_json::json!({"dshAllow": 1, "kind": "kernel", "sessionId": "s1", "callId": call, "denied": denied}))
    };
    let text = decision("s1", "py", "allow", "fence", "python3 -c 'print(open(k).read())'")
        + &kernel("py", serde_json::json!([{"path": "/h/.ssh/id_ed25519", "capability": "read"}]));
    let f = fold(&text, &all);
    out.push(("an_opaque_call_the_fence_bounded_is_decided_by_the_fence_and_names_what_the_kernel_denied", (|| {
        let [r] = f.rows.as_slice() else { return Some(format!("{} rows", f.rows.len())) };
        (r.source != "fence" || r.outcome != "allowed" || r.kernel != [serde_json::json!({"path": "/h/.ssh/id_ed25519", "capability": "read"})])
            .then(|| format!("{r:?}"))
    })()));

    let text = decision("s1", "m1", "refuse", "managed", "cat ~/secrets/key") + &decision("s1", "m2", "prompt", "managed", "rm -rf prod/x")
        + &line(serde_json::json!({"dshAllow": 1, "kind": "mode", "sessionId": "s1", "callId": "mode-1", "command": "sandbox mode → danger-full-access", "source": "managed", "mode": "danger-full-access"}));
    let f = fold(&text, &all);
    let got: Vec<(&str, &str)> = f.rows.iter().map(|r| (r.outcome.as_str(), r.source.as_str())).collect();
    let want = [("refused", "managed"), ("asked", "managed"), ("changed", "managed")];
    out.push(("what_the_managed_policy_refused_or_asked_is_decided_by_it", (got != want).then(|| format!("{got:?}"))));

    let text = decision("s1", "cat", "allow", "baseline", "cat x") + &kernel("cat", serde_json::json!([{"path": "/w/x", "capability": "read"}]))
        + &kernel("nobody", serde_json::json!([{"path": "/w/y", "capability": "read"}])) + &kernel("cat", serde_json::json!("not a list"));
    let hidden = fold(&text, &FoldOptions { session_id: Some("s1".into()), limit: None, baseline: false });
    out.push(("a_default_allow_the_kernel_then_stopped_stays_visible_and_stray_kernel_lines_are_skipped", (hidden.rows.len() != 1 || hidden.rows[0].kernel.len() != 1 || hidden.skipped != 2)
        .then(|| format!("{} rows, {} skipped", hidden.rows.len(), hidden.skipped))));

    let text = decision("s1", "mine", "allow", "rule", "x") + &decision("s2", "theirs", "allow", "rule", "y");
    let f = fold(&text, &all);
    out.push(("only_the_asked_session_is_folded", (f.rows.len() != 1 || f.rows[0].call_id != "mine").then(|| format!("{:?}", f.rows))));

    let mut text = String::new();
    for i in 0..700 {
        text += &decision("s1", &format!("c{i}"), "allow", "rule", "x");
    }
    let f = fold(&text, &FoldOptions { session_id: Some("s1".into()), limit: Some(10_000), baseline: true });
    out.push(("at_most_500_rows_the_newest", (f.rows.len() != 500 || f.rows.last().map(|r| r.call_id.as_str()) != Some("c699")).then(|| format!("{} rows", f.rows.len()))));
    let f = fold(&text, &FoldOptions { session_id: Some("s1".into()), limit: Some(20), baseline: true });
    out.push(("the_limit_keeps_the_newest_rows", (f.rows.len() != 20 || f.rows[0].call_id != "c680").then(|| format!("{} rows", f.rows.len()))));

    let text = decision("s1", "r", "prompt", "policy", "cp a ~/Downloads/a")
        + &line(serde_json::json!({"dshAllow": 1, "kind": "review", "sessionId": "s1", "callId": "r", "verdict": "ALLOW", "reason": "asked for", "latencyMs": 812, "route": "deepseek/deepseek-chat"}));
    let f = fold(&text, &all);
    out.push(("an_auto_review_allow_is_the_deciding_source", (f.rows.first().map(|r| r.source.as_str()) != Some("auto-review")).then(|| format!("{:?}", f.rows))));

    let text = line(serde_json::json!({"dshAllow": 1, "kind": "decision", "sessionId": "s1", "callId": "w", "tool": "bash",
        "command": "rm -rf build", "cwd": "/w", "workspace": "/w", "home": "/h", "mode": "workspace-write",
        "decision": "prompt", "source": "policy", "missing": [{"path": "/w/build", "capability": "delete"}]}))
        + &decision("s1", "old", "allow", "rule", "x");
    let f = fold(&text, &all);
    out.push(("a_row_says_where_the_call_stood_so_its_paths_can_be_read_relative_to_the_workspace_and_home", (|| {
        let [w, old] = f.rows.as_slice() else { return Some(format!("{} rows", f.rows.len())) };
        (w.workspace.as_deref() != Some("/w") || w.home.as_deref() != Some("/h") || old.workspace.is_some()).then(|| format!("{w:?} / {old:?}"))
    })()));

    let text = decision("s1", "py", "allow", "fence", "python3 -c 'import os; os.remove(p)'")
        + &kernel("py", serde_json::json!([{"path": "/w/build/x", "capability": null, "withheld": ["delete", "execute"]}]));
    let f = fold(&text, &all);
    out.push(("a_denial_the_error_does_not_name_keeps_the_capabilities_its_fence_withheld", (|| {
        let [r] = f.rows.as_slice() else { return Some(format!("{} rows", f.rows.len())) };
        (r.kernel != [serde_json::json!({"path": "/w/build/x", "capability": null, "withheld": ["delete", "execute"]})]).then(|| format!("{r:?}"))
    })()));

    let background = |call: &str, pids: serde_json::Value| line(serde_json::json!({"dshAllow": 1, "kind": "background", "sessionId": "s1", "callId": call, "pids": pids}));
    let text = decision("s1", "dev", "allow", "baseline", "npm run dev &") + &background("dev", serde_json::json!([4242, 4243]))
        + &background("dev", serde_json::json!([])) + &background("nobody", serde_json::json!([7]));
    let f = fold(&text, &all);
    out.push(("a_call_that_left_processes_running_says_which_and_stray_or_empty_lines_are_skipped", (|| {
        let [r] = f.rows.as_slice() else { return Some(format!("{} rows", f.rows.len())) };
        (r.background != [4242, 4243] || f.skipped != 2).then(|| format!("{r:?}, {} skipped", f.skipped))
    })()));
    out
}
