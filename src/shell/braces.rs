//! Brace expansion, as bash does it before anything else: `src/{a,b}.rs`
//! is two words, `f{1..3}` three. Only for words written without quotes
//! (the parser decides that); what is not a valid expansion stays as it is.

/// At most this many words from one: past it the word counts as computed.
pub const MAX_WORDS: usize = 256;
/// Longer words, or words with more `{`, are not expanded here.
const MAX_TEXT: usize = 4096;
const MAX_GROUPS: usize = 64;

/// The words `text` expands to (itself alone when nothing expands), or
/// `None` when there would be more than [`MAX_WORDS`].
pub fn expand(text: &str) -> Option<Vec<String>> {
    // Each word rescans what follows its group, and groups nest by
    // recursion: a long or deep word is left to the shell (computed).
    if text.len() > MAX_TEXT || text.bytes().filter(|&b| b == b'{').count() > MAX_GROUPS {
        return None;
    }
    let mut out = Vec::new();
    expand_into(text, &mut out)?;
    Some(out)
}

fn expand_into(text: &str, out: &mut Vec<String>) -> Option<()> {
    let Some((open, close, parts)) = first_expansion(text)? else {
        push(out, text.to_string())?;
        return Some(());
    };
    let (pre, post) = (&text[..open], &text[close + 1..]);
    for part in parts {
        // Braces inside a part and after the group expand in turn.
        let mut tails = Vec::new();
        expand_into(&format!("{part}{post}"), &mut tails)?;
        for tail in tails {
            push(out, format!("{pre}{tail}"))?;
        }
    }
    Some(())
}

fn push(out: &mut Vec<String>, word: String) -> Option<()> {
    out.push(word);
    (out.len() <= MAX_WORDS).then_some(())
}

/// The first `{…}` that expands: its bounds and its alternatives (`None`
/// inside: nothing expands; `None`: a sequence too long).
#[allow(clippy::type_complexity)]
fn first_expansion(text: &str) -> Option<Option<(usize, usize, Vec<String>)>> {
    let bytes = text.as_bytes();
    for open in (0..bytes.len()).filter(|&i| bytes[i] == b'{') {
        let Some((close, commas)) = group(bytes, open) else { continue };
        let inner = &text[open + 1..close];
        if !commas.is_empty() {
            let mut parts = Vec::new();
            let mut start = open + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                parts.push(text[start..c].to_string());
                start = c + 1;
            }
            return Some(Some((open, close, parts)));
        }
        if let Some(seq) = sequence(inner) {
            return Some(Some((open, close, seq?)));
        }
    }
    Some(None)
}

/// The `}` closing the `{` at `open`, and the commas at its own level.
fn group(bytes: &[u8], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0;
    let mut commas = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// `a..e`, `1..10`, `01..10`, `10..1..2`: the words of a sequence (`None`
/// inside: too many).
fn sequence(inner: &str) -> Option<Option<Vec<String>>> {
    let fields: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match fields.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i64 = match step {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let too_many = b.checked_sub(a).and_then(i64::checked_abs).is_none_or(|d| d / step >= MAX_WORDS as i64);
        if too_many {
            return Some(None);
        }
        let padded = |s: &str| s.trim_start_matches('-').len() > 1 && s.trim_start_matches('-').starts_with('0');
        let width = if padded(from) || padded(to) { from.len().max(to.len()) } else { 0 };
        let dir = if b >= a { 1 } else { -1 };
        let mut words = Vec::new();
        let mut n = a;
        while (dir == 1 && n <= b) || (dir == -1 && n >= b) {
            words.push(format!("{n:0width$}"));
            let Some(next) = n.checked_add(dir * step) else { break };
            n = next;
        }
        return Some(Some(words));
    }
    let (a, b) = (single_letter(from)?, single_letter(to)?);
    let (lo, hi) = (a.min(b), a.max(b));
    let mut words: Vec<String> = (lo..=hi).step_by(step as usize).map(|c| (c as char).to_string()).collect();
    if a > b {
        words.reverse();
    }
    Some(Some(words))
}

fn single_letter(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::expand;

    fn words(s: &str) -> Vec<String> {
        expand(s).unwrap()
    }

    #[test]
    fn a_comma_list_makes_one_word_per_part_with_what_surrounds_it() {
        assert_eq!(words("src/{a,b,c}.rs"), ["src/a.rs", "src/b.rs", "src/c.rs"]);
        assert_eq!(words("README.md{,.bak}"), ["README.md", "README.md.bak"]);
        assert_eq!(words("{~/.ssh/id_rsa,x}"), ["~/.ssh/id_rsa", "x"]);
    }

    #[test]
    fn groups_nest_and_follow_one_another() {
        assert_eq!(words("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
    }

    #[test]
    fn sequences_count_letters_and_numbers_with_padding_and_steps() {
        assert_eq!(words("f{1..3}.txt"), ["f1.txt", "f2.txt", "f3.txt"]);
        assert_eq!(words("{c..a}"), ["c", "b", "a"]);
        assert_eq!(words("{08..10}"), ["08", "09", "10"]);
        assert_eq!(words("{1..7..3}"), ["1", "4", "7"]);
    }

    #[test]
    fn what_is_not_an_expansion_stays_one_word() {
        for s in ["{}", "{x}..y", "src/{a,b", "HEAD@{1}..HEAD", "{a..}", "plain"] {
            assert_eq!(words(s), [s], "{s}");
        }
    }

    #[test]
    fn too_many_words_is_no_answer() {
        assert!(expand("{1..100000}").is_none());
        assert!(expand("{-9223372036854775808..9223372036854775807}").is_none());
        assert_eq!(expand("{9223372036854775806..9223372036854775807..5}").unwrap().len(), 1);
        assert!(expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").is_none());
        assert!(expand(&"{a,".repeat(12_000)).is_none());
        assert!(expand(&format!("{}{}", "{a,b}".repeat(8), "{".repeat(20_000))).is_none());
    }
}
