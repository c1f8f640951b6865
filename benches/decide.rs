//! decide() over the fixed corpus of agent commands (benches/corpus.txt),
//! natively: with the real file system as host, and with the lexical host
//! (the pure core alone). The Node bench (benches/decide.mjs) runs the same
//! corpus through the wasm API.

use criterion::{criterion_group, criterion_main, Criterion};
use dsh_allow::api::{DecideRequest, Mode, Platform};
use dsh_allow::policy::capability::Capability;
use dsh_allow::fs_host::FsHost;
use dsh_allow::host::LexicalHost;

fn corpus() -> Vec<String> {
    include_str!("corpus.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

fn request(command: &str, ws: &str, home: &str) -> DecideRequest {
    DecideRequest {
        command: command.to_string(),
        cwd: ws.into(),
        workspace: ws.into(),
        home: home.into(),
        harness_home: format!("{home}/.dsh"),
        platform: Platform::Linux,
        mode: Mode::WorkspaceWrite,
        rules: vec![],
        grants: vec![],
        commands: vec![],
        protected_files: vec![format!("{home}/.dsh/dsh-allow.json"), format!("{home}/.dsh/dsh-allow-audit.ndjson")],
        fence: Capability::ALL.to_vec(),
        persistence: dsh_allow::api::Persistence::Shut,
        sockets: Default::default(),
        fence_level: None,
        managed: None,
    }
}

fn bench(c: &mut Criterion) {
    let commands = corpus();
    assert!(commands.len() >= 200, "the corpus has {} commands", commands.len());
    let ws = std::env::current_dir().unwrap().to_string_lossy().into_owned();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let reqs: Vec<DecideRequest> = commands.iter().map(|c| request(c, &ws, &home)).collect();
    let mut g = c.benchmark_group(format!("decide x{} commands", reqs.len()));
    g.bench_function("native, file-system host", |b| {
        b.iter(|| {
            for r in &reqs {
                // A fresh host per call, as the CLI has. Its generation
                // never changes, so within this process the prepared policy
                // and PATH answers are reused; each named path is looked up.
                let fs = FsHost::from_env();
                std::hint::black_box(dsh_allow::decide::decide(r, &fs));
            }
        })
    });
    g.bench_function("native, lexical host (core only)", |b| {
        b.iter(|| {
            for r in &reqs {
                std::hint::black_box(dsh_allow::decide::decide(r, &LexicalHost));
            }
        })
    });
    g.finish();
}

/// The runner's own work before exec: the default fence compiled from the
/// profile on the real file system (a fresh host, as each run has).
fn compile(c: &mut Criterion) {
    let ws = std::env::current_dir().unwrap().to_string_lossy().into_owned();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let req: dsh_allow::fence::ProfileRequest = serde_json::from_value(serde_json::json!({
        "workspace": ws, "home": home, "harnessHome": format!("{home}/.dsh"), "platform": "linux",
        "mode": "workspace-write", "protectedFiles": [format!("{home}/.dsh/dsh-allow.json")], "enforce": "full",
    }))
    .unwrap();
    c.bench_function("compile the default fence, file-system host", |b| {
        b.iter(|| std::hint::black_box(dsh_allow::fence::compile(&req, &FsHost::from_env())))
    });
}

criterion_group!(benches, bench, compile);
criterion_main!(benches);
