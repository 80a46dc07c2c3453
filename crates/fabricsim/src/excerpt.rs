//! Excerpts of user input for error messages: a syntax error's source lines, a bad token of an
//! input file, a value serde quotes, each cut to about 100 characters, so that a 1 MB line gives
//! a short error rather than 1 MB of stderr. At the bottom layer, beside [`crate::error`], so
//! that every layer that reads input (scenarios, workloads' files, htsim imports) can use it.

/// Characters of a source line that a syntax error quotes, around the error's column.
const EXCERPT_CHARS: usize = 100;

/// A TOML error message (`msg`, whose excerpt shows source lines as `N | text` and a caret line
/// under them) with each quoted line cut to [`EXCERPT_CHARS`] around `column` (0-based, in
/// characters), so that an error on a long line does not echo all of it.
pub fn short_excerpt(msg: &str, column: usize) -> String {
    let skip = column.saturating_sub(EXCERPT_CHARS / 2);
    let cut = |l: &str| -> String {
        let Some(bar) = l.find("| ") else { return l.to_string() };
        let (gutter, text) = l.split_at(bar + 2);
        if !gutter[..bar].trim().chars().all(|c| c.is_ascii_digit()) || text.chars().count() <= EXCERPT_CHARS {
            return l.to_string();
        }
        let (kept, more) = window(text, skip, EXCERPT_CHARS);
        let more = more && !kept.trim().is_empty();
        // A caret line keeps its alignment: "…" before the source text, a space before the caret.
        let lead = match (skip > 0, kept.trim_start().starts_with('^')) {
            (false, _) => "",
            (true, true) => " ",
            (true, false) => "…",
        };
        format!("{gutter}{lead}{kept}{}", if more { "…" } else { "" })
    };
    msg.lines().map(cut).collect::<Vec<_>>().join("\n")
}

/// At most `limit` characters of `text` from character `skip` on, and whether text follows
/// them.
fn window(text: &str, skip: usize, limit: usize) -> (String, bool) {
    let kept: String = text.chars().skip(skip).take(limit).collect();
    (kept, text.chars().nth(skip + limit).is_some())
}

/// `text` cut to `limit` characters, "… (N characters)" saying how long it was.
fn cut_to(text: &str, limit: usize) -> String {
    match window(text, 0, limit) {
        (kept, true) => format!("{kept}… ({} characters)", text.chars().count()),
        (kept, false) => kept,
    }
}

/// A token or line read from an input file as an error message quotes it: its first
/// [`EXCERPT_CHARS`] characters, so that a bad 1 MB token does not give 1 MB of error.
pub fn clip(text: &str) -> String {
    cut_to(text, EXCERPT_CHARS)
}

/// A message that quotes the input (serde's ``unknown variant `…` `` or `string "…"`) with
/// each quoted stretch [`clip`]ped. The message's own words, outside quotes, are kept up to
/// ten times as many characters: that bound holds a value whose own quote marks upset the
/// pairing.
pub fn clip_quoted(msg: &str) -> String {
    if msg.chars().nth(EXCERPT_CHARS).is_none() {
        return msg.to_string();
    }
    let piece = |quoted: bool, text: &str| if quoted { clip(text) } else { cut_to(text, 10 * EXCERPT_CHARS) };
    let (mut out, mut stretch, mut open) = (String::new(), String::new(), None);
    for c in msg.chars() {
        let boundary = match open {
            Some(q) => c == q,
            None => c == '`' || c == '"',
        };
        if !boundary {
            stretch.push(c);
            continue;
        }
        out.push_str(&piece(open.is_some(), &stretch));
        out.push(c);
        stretch.clear();
        open = if open.is_some() { None } else { Some(c) };
    }
    out.push_str(&piece(open.is_some(), &stretch));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_long_tokens_and_quoted_values() {
        assert_eq!(clip("12x"), "12x");
        assert_eq!(clip(&"é".repeat(101)), format!("{}… (101 characters)", "é".repeat(100)));
        let long = "9".repeat(1 << 20);
        let c = clip_quoted(&format!("unknown variant `{long}`, expected `a` or `b`"));
        assert!(c.len() < 250 && c.starts_with("unknown variant `9999") && c.contains("… (1048576 characters)`") && c.ends_with("expected `a` or `b`"), "{c}");
        // The message's own words are kept, however many.
        let prose = format!("`2 parsecs`: unknown unit; {}, e.g. \"2MiB\"", "expected a count ".repeat(10));
        assert_eq!(clip_quoted(&prose), prose);
    }
}
