//! Destructive SQL (and database-client commands): `DROP …`, `TRUNCATE [TABLE] …`,
//! `DELETE FROM …` and `UPDATE … SET …` without `WHERE`, `ALTER TABLE … DROP …`, and the
//! key-value stores' `FLUSHALL` / `FLUSHDB`. String literals and comments are skipped, so
//! `SELECT 'drop table x'` is harmless.

/// The first destructive statement in `code`, whitespace-collapsed and cut to 100
/// characters.
pub fn check(code: &str) -> Option<String> {
    for statement in statements(code) {
        let words: Vec<&str> = statement.words.iter().map(String::as_str).collect();
        let Some(first) = words.first() else { continue };
        let has = |w: &str| words.contains(&w);
        let hit = match *first {
            "DROP" | "TRUNCATE" | "FLUSHALL" | "FLUSHDB" => true,
            "DELETE" => !has("WHERE"),
            "UPDATE" => has("SET") && !has("WHERE"),
            "ALTER" => has("DROP"),
            _ => false,
        };
        if hit {
            return Some(shorten(&statement.text));
        }
    }
    None
}

/// Collapses whitespace and cuts to 100 characters.
pub fn shorten(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > 100 {
        let cut: String = collapsed.chars().take(99).collect();
        format!("{cut}…")
    } else {
        collapsed
    }
}

struct Statement {
    text: String,
    words: Vec<String>,
}

/// Splits SQL into statements at `;`, with each statement's upper-cased words (string
/// literals, comments and dollar-quoted bodies left out).
fn statements(code: &str) -> Vec<Statement> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    let flush_word = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(word.to_ascii_uppercase());
            word.clear();
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            // `-- …` and MySQL's `# …` comments.
            '-' | '#' if c == '#' || next == Some('-') => {
                flush_word(&mut word, &mut words);
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == Some('*') => {
                flush_word(&mut word, &mut words);
                i = past_pair(&chars, i + 2, ['*', '/']);
                continue;
            }
            '\'' => {
                flush_word(&mut word, &mut words);
                text.push('\'');
                i += 1;
                while i < chars.len() {
                    if chars[i] == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                text.push_str("…'");
                i += 1;
                continue;
            }
            '$' if next == Some('$') => {
                flush_word(&mut word, &mut words);
                i = past_pair(&chars, i + 2, ['$', '$']);
                continue;
            }
            '"' | '`' => {
                // A quoted identifier: a word.
                flush_word(&mut word, &mut words);
                let close = c;
                i += 1;
                let mut ident = String::new();
                while i < chars.len() && chars[i] != close {
                    ident.push(chars[i]);
                    i += 1;
                }
                i += 1;
                text.push(close);
                text.push_str(&ident);
                text.push(close);
                words.push(format!("\"{ident}\""));
                continue;
            }
            ';' => {
                flush_word(&mut word, &mut words);
                out.push(Statement {
                    text: std::mem::take(&mut text),
                    words: std::mem::take(&mut words),
                });
                i += 1;
                continue;
            }
            c if c.is_alphanumeric() || c == '_' => word.push(c),
            _ => flush_word(&mut word, &mut words),
        }
        text.push(c);
        i += 1;
    }
    flush_word(&mut word, &mut words);
    out.push(Statement { text, words });
    out
}

/// The index just past the first `pair` of characters at or after `i` (the end of a
/// `/* … */` comment or a `$$ … $$` body), or past the end of `chars`.
fn past_pair(chars: &[char], mut i: usize, pair: [char; 2]) -> usize {
    while i < chars.len() && !(chars[i] == pair[0] && chars.get(i + 1) == Some(&pair[1])) {
        i += 1;
    }
    i + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_statements() {
        for sql in [
            "DROP TABLE users",
            "drop database prod;",
            "BEGIN; TRUNCATE sessions; COMMIT;",
            "delete from users",
            "UPDATE users SET admin = true",
            "ALTER TABLE users DROP COLUMN email",
            "flushall",
            "-- cleanup\nDROP SCHEMA public CASCADE",
        ] {
            assert!(check(sql).is_some(), "{sql}");
        }
    }

    #[test]
    fn harmless_statements() {
        for sql in [
            "SELECT * FROM users WHERE name = 'drop table users'",
            "DELETE FROM sessions WHERE expires < now()",
            "UPDATE users SET seen = now() WHERE id = 3",
            "select count(*) from orders -- drop table later",
            "INSERT INTO log VALUES ('TRUNCATE')",
            "CREATE TABLE drop_list (id int)",
        ] {
            assert_eq!(check(sql), None, "{sql}");
        }
    }
}
