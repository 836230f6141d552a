//! The wildcard patterns of policy rules and config globs (DESIGN §4, reference §10.2):
//! `*` matches any run of characters including `/`, `?` exactly one character, a trailing
//! ` *` is optional (`git *` matches `git` and `git status`), everything else is literal
//! and case-sensitive, and the whole input must match.

/// Whether `input` matches `pattern`.
pub fn matches(pattern: &str, input: &str) -> bool {
    if let Some(stem) = pattern.strip_suffix(" *")
        && glob(stem, input)
    {
        return true;
    }
    glob(pattern, input)
}

/// Plain `*`/`?` matching over characters, with backtracking to the last `*`.
fn glob(pattern: &str, input: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = input.chars().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == s[si])) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((star_p, star_s)) = star {
            pi = star_p + 1;
            si = star_s + 1;
            star = Some((star_p, star_s + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn reference_cases() {
        let cases = [
            ("bash", "bash", true),
            ("*", "bash", true),
            ("bash *", "bash foo bar", true),
            ("?", "a", true),
            ("?", "ab", false),
            ("bash *", "bash", true),
            ("bash *", "bash --help", true),
            ("bash", "edit", false),
            ("file.txt", "file.txt", true),
            ("file.txt", "filextxt", false),
            ("a?", "a", false),
            (".env*", ".env", true),
            (".env*", ".env.local", true),
            (".env*", ".envrc", true),
            (".env*", "env", false),
            ("", "", true),
            ("/home/*/file.txt", "/home/user/file.txt", true),
            ("/home/*/file.txt", "/home/user/other.txt", false),
            ("src/*", "src/a/b/c.rs", true),
            ("*.lock", "Cargo.lock", true),
            ("*.lock", "Cargo.locks", false),
            ("git *", "gitk", false),
            ("Read", "read", false),
        ];
        for (pattern, input, want) in cases {
            assert_eq!(matches(pattern, input), want, "{pattern:?} vs {input:?}");
        }
    }
}
