//! Static analysis of policy rules: whether one pattern covers everything another matches
//! (for `policy check`'s shadowed rules), and how close a rule came to matching a value
//! (for the near-miss line of refusals and `policy explain`).
//!
//! Patterns are the wildcards of [`crate::wildcard`]: `*` any run, `?` one character, a
//! trailing ` *` optional.

use super::{Action, Rule, Source};
use crate::access::Access;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Star,
    One,
    Char(char),
}

fn tokens(pattern: &str) -> Vec<Token> {
    pattern
        .chars()
        .map(|c| match c {
            '*' => Token::Star,
            '?' => Token::One,
            c => Token::Char(c),
        })
        .collect()
}

/// The alternatives a pattern stands for: `git *` is `git` or `git *`.
fn alternatives(pattern: &str) -> Vec<String> {
    match pattern.strip_suffix(" *") {
        Some(stem) => vec![stem.to_string(), pattern.to_string()],
        None => vec![pattern.to_string()],
    }
}

/// Whether every value `inner` matches is also matched by `outer`. Sound (a `true` is
/// always right); a few exotic inclusions are not recognised.
pub fn covers(outer: &str, inner: &str) -> bool {
    alternatives(inner).iter().all(|inner| {
        alternatives(outer)
            .iter()
            .any(|outer| token_covers(&tokens(outer), &tokens(inner)))
    })
}

/// Token-wise inclusion: a `*` of `outer` absorbs any run of `inner` tokens; a `?` absorbs
/// one literal or `?`; a literal only itself.
fn token_covers(outer: &[Token], inner: &[Token]) -> bool {
    let (n, m) = (outer.len(), inner.len());
    // reach[i][j]: outer[..i] covers inner[..j].
    let mut reach = vec![vec![false; m + 1]; n + 1];
    reach[0][0] = true;
    for i in 0..=n {
        for j in 0..=m {
            if !reach[i][j] {
                continue;
            }
            if i < n && outer[i] == Token::Star {
                reach[i + 1][j] = true;
                if j < m {
                    reach[i][j + 1] = true;
                }
            }
            if i < n && j < m {
                let step = match (outer[i], inner[j]) {
                    (Token::One, Token::Char(_) | Token::One) => true,
                    (Token::Char(a), Token::Char(b)) => a == b,
                    _ => false,
                };
                if step {
                    reach[i + 1][j + 1] = true;
                }
            }
        }
    }
    reach[n][m]
}

/// Whether a rule's permission covers everything another rule's permission covers.
pub fn permission_covers(outer: &str, inner: &str) -> bool {
    let norm = |p: &str| {
        if p == "bash" {
            "shell".to_string()
        } else {
            p.to_string()
        }
    };
    covers(&norm(outer), &norm(inner))
}

/// How far a value got into a pattern before they parted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// Characters of the value that matched.
    pub matched: usize,
    /// The rest of the value.
    pub value_rest: String,
    /// What the pattern still expected.
    pub pattern_rest: String,
}

/// Where matching `value` against `pattern` stopped: the longest prefix of the value some
/// prefix of the pattern matches (preferring the alignment that used most of the
/// pattern). `None` when the pattern matches the whole value.
pub fn miss(pattern: &str, value: &str) -> Option<Miss> {
    if crate::wildcard::matches(pattern, value) {
        return None;
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = value.chars().collect();
    let (n, m) = (p.len(), s.len());
    let mut reach = vec![vec![false; m + 1]; n + 1];
    reach[0][0] = true;
    let mut best = (0usize, 0usize);
    for i in 0..=n {
        for j in 0..=m {
            if !reach[i][j] {
                continue;
            }
            // A star standing in for nothing is not progress worth reporting.
            let progress = (j, i);
            if progress > (best.1, best.0) {
                best = (i, j);
            }
            if i < n && p[i] == '*' {
                reach[i + 1][j] = true;
                if j < m {
                    reach[i][j + 1] = true;
                }
            }
            if i < n && j < m && (p[i] == '?' || (p[i] != '*' && p[i] == s[j])) {
                reach[i + 1][j + 1] = true;
            }
        }
    }
    let (i, j) = best;
    Some(Miss {
        matched: j,
        value_rest: s[j..].iter().collect(),
        pattern_rest: p[i..].iter().collect(),
    })
}

/// The allow rule that came closest to allowing a refused access, with a sentence saying
/// where it stopped matching. Built-in rules are not candidates.
pub fn closest_allow(chain: &[Rule], access: &Access) -> Option<(Rule, String)> {
    let kind = match access.permission.as_str() {
        "shell" | "destructive-shell" | "secret-shell" => "command",
        "webfetch" => "URL",
        _ if access.path.is_some() => "path",
        _ => "value",
    };
    let mut best: Option<(usize, &Rule, String)> = None;
    for rule in chain.iter().filter(|r| r.action == Action::Allow) {
        if matches!(
            rule.source,
            Source::Default | Source::PlanBuiltin | Source::Protection
        ) {
            continue;
        }
        let subject = rule.subject(access);
        let (score, sentence) = if rule.covers_permission(&access.permission) {
            let Some(miss) = miss(&expand(&rule.pattern), &subject) else {
                continue;
            };
            if miss.matched == 0 {
                continue;
            }
            let sentence = if miss.value_rest.is_empty() {
                format!(
                    "the {kind} ends after `{subject}` where the rule still expects `{}`",
                    miss.pattern_rest
                )
            } else {
                format!(
                    "the {kind} continues with `{}` where the rule expects `{}`",
                    miss.value_rest, miss.pattern_rest
                )
            };
            (miss.matched, sentence)
        } else if rule.pattern != "*" && rule.matches_pattern(access) {
            // A rule of another permission is a near miss only when its pattern names
            // this value; `*` matches anything and says nothing about it (a
            // `destructive-shell *` allow is no hint for an `undo`).
            let sentence = format!(
                "its pattern matches, but it is for `{}` and this needs `{}`",
                rule.permission, access.permission
            );
            (subject.chars().count(), sentence)
        } else {
            continue;
        };
        if best.as_ref().is_none_or(|(s, _, _)| score >= *s) {
            best = Some((score, rule, sentence));
        }
    }
    best.map(|(_, rule, sentence)| (rule.clone(), sentence))
}

fn expand(pattern: &str) -> String {
    if pattern.starts_with('~') {
        crate::paths::expand_home(pattern)
            .to_string_lossy()
            .into_owned()
    } else {
        pattern.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_of_patterns() {
        assert!(covers("*", "git *"));
        assert!(covers("git *", "git status*"));
        assert!(covers("git *", "git"));
        assert!(covers("src/*", "src/a/*.rs"));
        assert!(covers("*.rs", "src/*.rs"));
        assert!(!covers("git *", "gitk"));
        assert!(!covers("?.rs", "*.rs"));
        assert!(!covers("src/*", "*"));
        assert!(!covers("git status*", "git *"));
        assert!(covers("a?c", "abc"));
        assert!(permission_covers("*", "edit"));
        assert!(permission_covers("bash", "shell"));
        assert!(!permission_covers("edit", "*"));
    }

    #[test]
    fn misses_say_where_matching_stopped() {
        let m = miss("git status*", "git push").unwrap();
        assert_eq!(
            (m.value_rest.as_str(), m.pattern_rest.as_str()),
            ("push", "status*")
        );
        let m = miss(".envrc", ".env").unwrap();
        assert_eq!(
            (m.matched, m.value_rest.as_str(), m.pattern_rest.as_str()),
            (4, "", "rc")
        );
        assert_eq!(miss("git *", "git log"), None);
        let m = miss("*.rs", "a.py").unwrap();
        assert_eq!(m.value_rest, "");
    }
}
