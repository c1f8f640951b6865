//! The request most suites start from: Linux, workspace `/w`, home `/h`,
//! workspace-write, the store protected, the kernel fencing all five.

use dsh_allow::api::{DecideRequest, Mode, Platform};

pub fn request(command: &str) -> DecideRequest {
    DecideRequest {
        command: command.into(),
        cwd: "/w".into(),
        workspace: "/w".into(),
        home: "/h".into(),
        harness_home: "/h/.dsh".into(),
        platform: Platform::Linux,
        mode: Mode::WorkspaceWrite,
        rules: vec![],
        grants: vec![],
        commands: vec![],
        protected_files: vec!["/h/.dsh/dsh-allow.json".into()],
        fence: dsh_allow::policy::capability::Capability::ALL.to_vec(),
        persistence: dsh_allow::api::Persistence::Shut,
        sockets: Default::default(),
        fence_level: None,
        managed: None,
    }
}
