//! The runner that ships has the code a fenced call runs side by side
//! (scripts/build.sh links it so, from scripts/runner-hot-functions.txt):
//! each process of a call faults the binary's text in again, 16 pages a
//! fault, so that code spread over the whole text cost ~60 faults a call.
//! And it is linked statically: it names no program interpreter.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const LIST: &str = "scripts/runner-hot-functions.txt";

/// Every function of `bin`'s text: name → (address, size).
fn functions(bin: &Path) -> BTreeMap<String, (u64, u64)> {
    let out = Command::new("nm").args(["--defined-only", "-S"]).arg(bin).output().expect("nm runs");
    assert!(out.status.success(), "nm {}: {}", bin.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [at, size, kind, name] = f[..] else { return None };
            if !matches!(kind, "t" | "T" | "W" | "w") {
                return None;
            }
            Some((name.to_string(), (u64::from_str_radix(at, 16).ok()?, u64::from_str_radix(size, 16).ok()?)))
        })
        .collect()
}

#[test]
fn the_shipped_runner_keeps_what_a_call_runs_side_by_side() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join(format!("pkg/bin/linux-{}/dsh-allow", if cfg!(target_arch = "x86_64") { "x64" } else { "arm64" }));
    if !bin.exists() {
        eprintln!("SKIP hot_layout: {} is not built (make build)", bin.display());
        return;
    }
    let listed: Vec<String> = std::fs::read_to_string(root.join(LIST)).unwrap().lines().map(|l| l.split('#').next().unwrap().trim().to_string()).filter(|l| !l.is_empty()).collect();
    assert!(listed.len() > 100, "{LIST} lists {} functions", listed.len());
    let all = functions(&bin);
    let found: Vec<(u64, u64)> = listed.iter().filter_map(|n| all.get(n).copied()).collect();
    // Names carry a hash of the crate's version, toolchain and dependencies
    // (not of a function's body): a bump of any renames most of them, and a
    // list gone stale loses the layout without a word from the linker.
    assert!(found.len() * 10 >= listed.len() * 9, "the list is stale: only {} of the {} functions in {LIST} are in the runner; run scripts/runner-hot-functions.sh again (root)", found.len(), listed.len());
    let start = found.iter().map(|f| f.0).min().unwrap();
    let end = found.iter().map(|f| f.0 + f.1).max().unwrap();
    let size: u64 = found.iter().map(|f| f.1).sum();
    let text = all.values().map(|f| f.0 + f.1).max().unwrap() - all.values().map(|f| f.0).min().unwrap();
    // Side by side: the span they take is not much more than their size
    // (alignment, and a function only some builds inline).
    assert!(end - start <= size + size / 4 + 64 * 1024, "the {} hot functions ({size} bytes) span {} bytes of a {text}-byte text: linked without the ordering?", found.len(), end - start);
}

/// The program interpreter an ELF executable names (`PT_INTERP`), if any.
fn interpreter(bin: &Path) -> Option<String> {
    let f = std::fs::read(bin).expect("the binary reads");
    assert_eq!(&f[..5], b"\x7fELF\x02", "{}: not a 64-bit ELF file", bin.display());
    let u16_at = |at: usize| u16::from_le_bytes(f[at..at + 2].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(f[at..at + 8].try_into().unwrap()) as usize;
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    (0..phnum).map(|i| phoff + i * phentsize).find(|&ph| u32::from_le_bytes(f[ph..ph + 4].try_into().unwrap()) == 3).map(|ph| {
        let (off, size) = (u64_at(ph + 8), u64_at(ph + 32));
        String::from_utf8_lossy(&f[off..off + size]).trim_end_matches('\0').to_string()
    })
}

#[test]
fn the_shipped_runner_needs_no_program_interpreter() {
    // A dynamic program names one: the reading is checked on it first.
    assert!(interpreter(Path::new("/bin/sh")).is_some_and(|i| i.contains("ld-")), "/bin/sh names no interpreter?");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join(format!("pkg/bin/linux-{}/dsh-allow", if cfg!(target_arch = "x86_64") { "x64" } else { "arm64" }));
    if !bin.exists() {
        eprintln!("SKIP hot_layout: {} is not built (make build)", bin.display());
        return;
    }
    // Linked statically (scripts/build.sh): an interpreter named there,
    // such as musl's loader, is missing on most users' machines and the
    // runner would not start at all.
    assert_eq!(interpreter(&bin), None, "{} names a program interpreter", bin.display());
}
