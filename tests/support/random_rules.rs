//! The random rule sets of the differential suites (the core against
//! Landlock in tests/kernel.rs, against Seatbelt in tests/sbpl.rs): a fixed
//! xorshift sequence, so a mismatch replays on every run.

pub struct Xorshift(u64);

impl Xorshift {
    pub fn new(seed: u64) -> Xorshift {
        Xorshift(seed)
    }

    /// The next number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One rule of a set: on `dirs[dir]` (recursive), or on the file `f1` in it.
pub struct Pick {
    pub dir: usize,
    pub caps: Vec<&'static str>,
    pub file: bool,
}

/// Up to three rules, each with a random non-empty set of capabilities.
pub fn rule_set(rng: &mut Xorshift, dirs: usize) -> Vec<Pick> {
    let mut set = Vec::new();
    for _ in 0..rng.below(4) {
        let dir = rng.below(dirs);
        let caps: Vec<&'static str> = ["read", "write", "create", "delete", "execute"].into_iter().filter(|_| rng.below(2) == 0).collect();
        if caps.is_empty() {
            continue;
        }
        set.push(Pick { dir, caps, file: rng.below(3) == 0 });
    }
    set
}
