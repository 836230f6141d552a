//! The wildcard patterns of policy rules and config globs:
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

/// Plain `*`/`?` matching over characters, with backtracking to the last `*`. Matching
/// allocates nothing: grep and glob judge every file they meet against the read rules.
fn glob(pattern: &str, input: &str) -> bool {
    if input.is_ascii() {
        // Every input character is one byte, so `?` matching one byte is matching one
        // character, and a pattern character of several bytes can match no input byte.
        glob_bytes(pattern.as_bytes(), input.as_bytes())
    } else {
        glob_chars(pattern, input)
    }
}

/// [`glob`] over bytes, for ASCII input.
fn glob_bytes(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || (p[pi] != b'*' && p[pi] == s[si])) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((star_p, star_s)) = star {
            pi = star_p + 1;
            si = star_s + 1;
            star = Some((star_p, si));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// [`glob`] over characters: both strings are walked by byte offset, one character
/// decoded at a time.
fn glob_chars(pattern: &str, input: &str) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while let Some(sc) = input[si..].chars().next() {
        let pc = pattern[pi..].chars().next();
        if let Some(pc) = pc
            && (pc == '?' || (pc != '*' && pc == sc))
        {
            pi += pc.len_utf8();
            si += sc.len_utf8();
        } else if pc == Some('*') {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((star_p, star_s)) = star {
            // Let the last `*` take one more character and retry after it.
            let taken = input[star_s..].chars().next().map_or(1, char::len_utf8);
            pi = star_p + 1;
            si = star_s + taken;
            star = Some((star_p, si));
        } else {
            return false;
        }
    }
    pattern[pi..].bytes().all(|c| c == b'*')
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
            ("?", "é", true),
            ("?b", "éb", true),
            ("*é", "aéé", true),
            ("a*ü?", "aüüx", true),
            ("a*ü?", "axü", false),
            ("*a*b", "xaybzb", true),
            ("*a*b", "xaybzc", false),
            ("é*", "e", false),
            ("*é", "xe", false),
            ("?*.pem", "k.pem", true),
            ("*.pem", "keys/server.pem", true),
            ("*.pem", "keys/server.pem.txt", false),
        ];
        for (pattern, input, want) in cases {
            assert_eq!(matches(pattern, input), want, "{pattern:?} vs {input:?}");
        }
    }
}
