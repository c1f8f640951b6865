//! `dsh-allow run`: placeholder until the Landlock runner lands.

use std::process::ExitCode;

pub fn main(_args: &[String]) -> ExitCode {
    eprintln!("dsh-allow run: the kernel runner is not built in this version");
    ExitCode::from(125)
}
