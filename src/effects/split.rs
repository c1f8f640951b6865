//! Options and operands of one command line, as getopt reads them: the
//! split every role starts from, and the value of an option as a word.

use crate::shell::parse::Arg;

/// Options and operands of one command line, split by a program's table row.
pub(super) struct Split<'a> {
    /// (option name, its value, where the value starts in that word) in
    /// order; flags have `None`. `-oFILE` and `--out=FILE` carry their value
    /// in the option's own word.
    pub(super) options: Vec<(String, Option<&'a Arg>, usize)>,
    pub(super) operands: Vec<&'a Arg>,
}

impl<'a> Split<'a> {
    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(o, _, _)| names.contains(&o.as_str()))
    }
    /// The values of these options, each as its own word.
    pub(super) fn values(&self, names: &[&str]) -> Vec<Arg> {
        self.options
            .iter()
            .filter(|(o, _, _)| names.contains(&o.as_str()))
            .filter_map(|(_, v, at)| match (v, at) {
                (Some(v), 0) => Some((*v).clone()),
                // Bash expands no `~` inside `-t~`: keep it a name here.
                (Some(v), at) => Some(Arg::Literal(match v.text().get(*at..).unwrap_or("")
                {
                    rest if rest.starts_with('~') => format!("./{rest}"),
                    rest => rest.to_string(),
                })),
                (None, _) => None,
            })
            .collect()
    }
    /// A short flag letter appearing alone or in a cluster (`-rf`).
    pub(super) fn short(&self, letter: char) -> bool {
        self.options
            .iter()
            .any(|(o, _, _)| o.starts_with('-') && !o.starts_with("--") && o[1..].contains(letter))
    }
}

/// Split `args` into options and operands. `--` ends options. Attached
/// values (`-n5`, `--lines=5`) stay with their option.
pub(super) fn split<'a>(args: &'a [Arg], takes_value: &[&str]) -> Split<'a> {
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let text = a.text();
        if only_operands || !text.starts_with('-') || text == "-" || !matches!(a, Arg::Literal(_)) {
            operands.push(a);
            continue;
        }
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some((name, _)) = text.split_once('=').filter(|_| text.starts_with("--")) {
            options.push((name.to_string(), Some(a), name.len() + 1));
            continue;
        }
        if takes_value.contains(&text) || text.starts_with("--") {
            let value = if takes_value.contains(&text) { args.get(i) } else { None };
            i += usize::from(value.is_some());
            options.push((text.to_string(), value, 0));
            continue;
        }
        // A cluster of short flags, as getopt reads it: the first letter
        // that takes a value takes the rest of the word (`-n5`, `-so FILE`
        // → `-s -o FILE`, `-oFILE`), or the next word when nothing is left.
        for (at, letter) in text.char_indices().skip(1) {
            let flag = format!("-{letter}");
            if takes_value.contains(&flag.as_str()) {
                let rest = at + letter.len_utf8();
                if rest < text.len() {
                    options.push((flag, Some(a), rest));
                } else {
                    options.push((flag, args.get(i), 0));
                    i += 1;
                }
                break;
            }
            options.push((flag, None, 0));
        }
    }
    Split { options, operands }
}

/// An option's value as an argument: its literal text (see `option_value`),
/// or the computed word itself, so that a computed path is judged as one.
pub(super) fn option_arg(name: &str, value: &Arg) -> Arg {
    match option_value(name, value) {
        Some(text) => Arg::Literal(text.to_string()),
        None => value.clone(),
    }
}

/// The value of `--opt=value` or of a separate word.
pub(super) fn option_value<'a>(name: &str, value: &'a Arg) -> Option<&'a str> {
    let text = value.literal()?;
    if let Some(rest) = text.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
        return Some(rest);
    }
    Some(text)
}
