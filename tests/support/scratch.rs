//! Where real-kernel tests build their trees: the cargo target dir, unless
//! that sits in a temp folder (the baseline opens temp folders fully, which
//! would hide every denial): then under $HOME/.cache/dsh-allow-tests.

use std::path::PathBuf;

pub fn root() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let real = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
    let under_temp = ["/tmp", "/var/tmp", "/dev/shm"].iter().any(|t| real.starts_with(t));
    if under_temp {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
        let dir = home.join(".cache").join("dsh-allow-tests");
        std::fs::create_dir_all(&dir).expect("a scratch folder outside the temp dirs");
        dir
    } else {
        target
    }
}
