//! Unicode punctuation folded to ASCII, as Codex's context search folds
//! it: models type `-`, `'`, `"`, `...` and a plain space where the file has typographic
//! ones.
//!
//! The folding, character by character:
//! - dashes and minus (U+2010–U+2015, U+2212) → `-`
//! - single quotes (U+2018–U+201B) → `'`
//! - double quotes (U+201C–U+201F) → `"`
//! - ellipsis (U+2026) → `...`
//! - non-ASCII spaces (U+00A0, U+2002–U+200A, U+202F, U+205F, U+3000) → ` `
//!
//! Every other character is itself. Folding is only ever used to *compare*: what is written
//! keeps the file's own characters outside the replaced lines.

use std::borrow::Cow;

/// The ASCII form of `c`, when it is one of the folded characters (module doc).
pub fn fold_char(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => "-",
        '\u{2018}'..='\u{201b}' => "'",
        '\u{201c}'..='\u{201f}' => "\"",
        '\u{2026}' => "...",
        '\u{a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => " ",
        _ => return None,
    })
}

/// `new` with the foldable characters of `old` that `found` (the file's matched text) does
/// not have folded to ASCII: the model's text carried typographic punctuation where the
/// file has ASCII, so its new lines carry the same artefact, which must not reach the file.
/// Characters the file itself uses, and any the model adds that `old` lacks, are kept.
pub fn fold_foreign(old: &str, found: &str, new: &str) -> Option<String> {
    let mut foreign: Vec<char> = old
        .chars()
        .filter(|&c| fold_char(c).is_some() && !found.contains(c))
        .collect();
    foreign.sort_unstable();
    foreign.dedup();
    if foreign.is_empty() || !new.contains(&foreign[..]) {
        return None;
    }
    let mut out = String::with_capacity(new.len());
    for c in new.chars() {
        match fold_char(c).filter(|_| foreign.contains(&c)) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(c),
        }
    }
    Some(out)
}

/// Whether `s` has a character the folding changes.
pub fn has_foldable(s: &str) -> bool {
    s.chars().any(|c| fold_char(c).is_some())
}

/// `s` folded (module doc); borrowed when nothing changes.
pub fn fold(s: &str) -> Cow<'_, str> {
    if !has_foldable(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match fold_char(c) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` folded, with the offset in `s` of the character every output byte came from.
pub fn fold_with_origin(s: &str) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(s.len());
    let mut origin = Vec::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        let before = out.len();
        match fold_char(c) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(c),
        }
        origin.extend(std::iter::repeat_n(i as u32, out.len() - before));
    }
    (out, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_models_artefacts_are_folded() {
        let old = "log(\u{201c}Key %s\u{201d})";
        let found = "log(\"Key %s\")";
        let new = "log(\u{201c}Key %s\u{201d}, stacklevel=2)  # \u{2014} note";
        assert_eq!(
            fold_foreign(old, found, new).unwrap(),
            "log(\"Key %s\", stacklevel=2)  # \u{2014} note"
        );
        // The file uses the curly quotes itself: nothing to fold.
        assert_eq!(fold_foreign(old, old, new), None);
    }

    #[test]
    fn typographic_punctuation_folds_to_ascii() {
        assert_eq!(
            fold("\u{201c}It\u{2019}s\u{201d} \u{2014} done\u{2026}\u{a0}ok \u{2212}1"),
            "\"It's\" - done... ok -1"
        );
        assert!(matches!(fold("plain -'\""), Cow::Borrowed(_)));
        let (folded, origin) = fold_with_origin("a\u{2026}b");
        assert_eq!(folded, "a...b");
        assert_eq!(origin, vec![0, 1, 1, 1, 4]);
    }
}
