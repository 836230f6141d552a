//! From tokens to the simple commands a shell would run, in order.
//!
//! The detectors need every simple command (with its assignments and redirections) and,
//! for pipelines, which command feeds which; they do not need the tree. So the parse is
//! flat: lists (`;` `&` `&&` `||` newline), pipelines, subshells, brace groups and the
//! compound commands (`if`/`then`/`elif`/`else`/`fi`, `while`/`until`/`do`/`done`,
//! `for`/`select`, `case … in … esac`, function definitions) are split into their simple
//! commands. Reserved words count only where a command name could stand, as in the shell
//! (`echo fi` is an echo). A `for` loop becomes an [`Item::Loop`] so that the loop
//! variable has a value, and a function definition an [`Item::Function`].

use super::lex::{Lexed, Op, Part, Redir, Token, Word};

/// A simple command.
#[derive(Debug, Clone, Default)]
pub struct Simple {
    /// `NAME=value` words before the command name.
    pub assigns: Vec<(String, Word)>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Redirections, in order.
    pub redirs: Vec<Redir>,
    /// Whether its standard input is the output of the previous simple command (`a | b`).
    pub piped: bool,
}

impl Simple {
    fn is_empty(&self) -> bool {
        self.assigns.is_empty() && self.words.is_empty() && self.redirs.is_empty()
    }
}

/// One thing the script does, in order.
#[derive(Debug, Clone)]
pub enum Item {
    /// A simple command.
    Simple(Simple),
    /// `for NAME in WORDS`: the variable takes these values in the body.
    Loop {
        /// The loop variable.
        var: String,
        /// The words it iterates over.
        items: Vec<Word>,
    },
    /// A function definition `NAME () …` or `function NAME …`; its body follows as items.
    Function {
        /// The function's name.
        name: String,
    },
}

/// Words that open or close compound commands where a command name could stand.
const SKIPPED_RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "{", "}", "!", "esac",
];

/// Splits lexed source into its simple commands.
pub fn parse(lexed: &Lexed) -> Vec<Item> {
    let mut parser = Parser {
        items: Vec::new(),
        current: Simple::default(),
        next_piped: false,
        case_depth: 0,
        in_pattern: false,
    };
    let tokens = &lexed.tokens;
    let mut i = 0;
    while i < tokens.len() {
        i = parser.step(tokens, i);
    }
    parser.flush();
    parser.items
}

struct Parser {
    items: Vec<Item>,
    current: Simple,
    next_piped: bool,
    case_depth: usize,
    in_pattern: bool,
}

/// The literal text of a word that has no quotes and no expansions.
fn bare(word: &Word) -> Option<String> {
    if word.has_quotes() {
        return None;
    }
    word.literal()
}

/// Splits `NAME=value` (also `NAME+=value`, `NAME[i]=value`) into name and value.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = word.parts.first()
    else {
        return None;
    };
    let eq = text.find('=')?;
    let lhs = &text[..eq];
    let name = lhs.strip_suffix('+').unwrap_or(lhs);
    let name = name.split('[').next().unwrap_or(name);
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut value = Word::default();
    let rest = &text[eq + 1..];
    if !rest.is_empty() {
        value.parts.push(Part::Lit {
            text: rest.to_string(),
            quoted: false,
        });
    }
    value.parts.extend(word.parts[1..].iter().cloned());
    Some((name.to_string(), value))
}

impl Parser {
    fn flush(&mut self) {
        let simple = std::mem::take(&mut self.current);
        if !simple.is_empty() {
            self.items.push(Item::Simple(simple));
        }
    }

    fn at_command_start(&self) -> bool {
        self.current.words.is_empty() && self.current.assigns.is_empty()
    }

    /// Handles the token at `i`, returns the index of the next one to handle.
    fn step(&mut self, tokens: &[Token], i: usize) -> usize {
        match &tokens[i] {
            Token::Op(op) => {
                self.operator(*op);
                i + 1
            }
            Token::Redir(redir) => {
                self.current.redirs.push(redir.clone());
                i + 1
            }
            Token::Word(word) => self.word(tokens, i, word),
        }
    }

    fn operator(&mut self, op: Op) {
        if self.in_pattern {
            if op == Op::RParen {
                self.in_pattern = false;
            }
            return;
        }
        self.flush();
        match op {
            Op::Pipe | Op::PipeAll => self.next_piped = true,
            Op::CaseEnd => {
                self.next_piped = false;
                if self.case_depth > 0 {
                    self.in_pattern = true;
                }
            }
            // `a | (b)`: the pipe feeds the first command inside the parentheses.
            Op::LParen | Op::RParen => {}
            _ => self.next_piped = false,
        }
    }

    fn word(&mut self, tokens: &[Token], i: usize, word: &Word) -> usize {
        if self.in_pattern {
            if bare(word).as_deref() == Some("esac") {
                self.in_pattern = false;
                self.case_depth = self.case_depth.saturating_sub(1);
            }
            return i + 1;
        }
        if self.at_command_start()
            && let Some(text) = bare(word)
        {
            {
                if text == "esac" {
                    self.case_depth = self.case_depth.saturating_sub(1);
                    return i + 1;
                }
                if SKIPPED_RESERVED.contains(&text.as_str()) {
                    return i + 1;
                }
                // `time [-p] PIPELINE`: the keyword hides nothing (`time ! rm -rf x`).
                if text == "time" {
                    let next = tokens.get(i + 1).and_then(|t| match t {
                        Token::Word(w) => bare(w),
                        _ => None,
                    });
                    return if next.as_deref() == Some("-p") {
                        i + 2
                    } else {
                        i + 1
                    };
                }
                match text.as_str() {
                    "case" => return self.case_header(tokens, i),
                    "for" | "select" => return self.for_header(tokens, i),
                    "function" => {
                        if let Some(Token::Word(name)) = tokens.get(i + 1) {
                            let name = name.literal().unwrap_or_default();
                            self.items.push(Item::Function { name });
                            let mut next = i + 2;
                            if matches!(tokens.get(next), Some(Token::Op(Op::LParen)))
                                && matches!(tokens.get(next + 1), Some(Token::Op(Op::RParen)))
                            {
                                next += 2;
                            }
                            return next;
                        }
                        return i + 1;
                    }
                    _ => {}
                }
                // `name ( )` defines a function.
                if matches!(tokens.get(i + 1), Some(Token::Op(Op::LParen)))
                    && matches!(tokens.get(i + 2), Some(Token::Op(Op::RParen)))
                {
                    self.items.push(Item::Function { name: text });
                    return i + 3;
                }
            }
        }
        if self.current.words.is_empty()
            && let Some((name, value)) = assignment(word)
        {
            {
                // `NAME=(a b c)`: an array; its elements are data.
                if value.parts.is_empty()
                    && matches!(tokens.get(i + 1), Some(Token::Op(Op::LParen)))
                {
                    let mut j = i + 2;
                    let mut elements = Word::default();
                    while j < tokens.len() && !matches!(tokens[j], Token::Op(Op::RParen)) {
                        if let Token::Word(w) = &tokens[j] {
                            if !elements.parts.is_empty() {
                                elements.parts.push(Part::Lit {
                                    text: " ".into(),
                                    quoted: true,
                                });
                            }
                            elements.parts.extend(w.parts.iter().cloned());
                        }
                        j += 1;
                    }
                    self.start_if_needed();
                    self.current.assigns.push((name, elements));
                    return j + 1;
                }
                self.start_if_needed();
                self.current.assigns.push((name, value));
                return i + 1;
            }
        }
        self.start_if_needed();
        self.current.words.push(word.clone());
        i + 1
    }

    /// Marks the command being started as fed by a pipe when one is pending.
    fn start_if_needed(&mut self) {
        if self.at_command_start() && self.next_piped {
            self.current.piped = true;
            self.next_piped = false;
        }
    }

    /// `case WORD in`: the subject is data; patterns follow.
    fn case_header(&mut self, tokens: &[Token], i: usize) -> usize {
        let mut j = i + 1;
        // The subject word may hold substitutions: keep it as a command of its own so
        // that they are judged, under a name no rule knows.
        if let Some(Token::Word(subject)) = tokens.get(j) {
            if subject.parts.iter().any(|p| matches!(p, Part::Sub { .. })) {
                self.items.push(Item::Simple(Simple {
                    words: vec![
                        Word {
                            parts: vec![Part::Lit {
                                text: "case".into(),
                                quoted: false,
                            }],
                        },
                        subject.clone(),
                    ],
                    ..Simple::default()
                }));
            }
            j += 1;
        }
        while matches!(tokens.get(j), Some(Token::Op(Op::Newline))) {
            j += 1;
        }
        if let Some(Token::Word(w)) = tokens.get(j)
            && bare(w).as_deref() == Some("in")
        {
            j += 1;
        }
        self.case_depth += 1;
        self.in_pattern = true;
        j
    }

    /// `for NAME [in WORDS]` up to the `;` or newline before `do`.
    fn for_header(&mut self, tokens: &[Token], i: usize) -> usize {
        let mut j = i + 1;
        // `for ((…))`: arithmetic, nothing to judge.
        if matches!(tokens.get(j), Some(Token::Op(Op::LParen))) {
            while j < tokens.len() && !matches!(tokens[j], Token::Op(Op::Semi | Op::Newline)) {
                j += 1;
            }
            return j;
        }
        let Some(Token::Word(var)) = tokens.get(j) else {
            return j;
        };
        let var = var.literal().unwrap_or_default();
        j += 1;
        while matches!(tokens.get(j), Some(Token::Op(Op::Newline))) {
            j += 1;
        }
        let mut items = Vec::new();
        if let Some(Token::Word(w)) = tokens.get(j)
            && bare(w).as_deref() == Some("in")
        {
            j += 1;
            while let Some(Token::Word(w)) = tokens.get(j) {
                items.push(w.clone());
                j += 1;
            }
        }
        self.items.push(Item::Loop { var, items });
        j
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::*;

    fn commands(src: &str) -> Vec<(bool, Vec<String>)> {
        parse(&lex(src))
            .into_iter()
            .filter_map(|item| match item {
                Item::Simple(s) => Some((
                    s.piped,
                    s.words
                        .iter()
                        .map(|w| w.literal().unwrap_or_else(|| "<expansion>".into()))
                        .collect(),
                )),
                _ => None,
            })
            .collect()
    }

    fn names(src: &str) -> Vec<String> {
        commands(src)
            .into_iter()
            .filter_map(|(_, w)| w.first().cloned())
            .collect()
    }

    #[test]
    fn lists_pipelines_and_groups_split_into_simple_commands() {
        assert_eq!(
            names("a; b && c || d & e | f |& g\nh"),
            ["a", "b", "c", "d", "e", "f", "g", "h"]
        );
        assert_eq!(names("(cd x && make) | tee log"), ["cd", "make", "tee"]);
        assert_eq!(names("{ a; b; } > out"), ["a", "b"]);
        let piped: Vec<bool> = commands("echo x | sh; ls").iter().map(|c| c.0).collect();
        assert_eq!(piped, [false, true, false]);
        assert!(commands("(echo x) | sh")[1].0);
    }

    #[test]
    fn compound_commands_expose_their_bodies() {
        assert_eq!(
            names("if test -f x; then rm -rf y; elif z; then w; else v; fi"),
            ["test", "rm", "z", "w", "v"]
        );
        assert_eq!(names("while true; do sleep 1; done"), ["true", "sleep"]);
        assert_eq!(
            names("case $x in a|b) rm -rf a;; *) echo no;; esac; ls"),
            ["rm", "echo", "ls"]
        );
        assert_eq!(names("f() { rm -rf x; }; f"), ["rm", "f"]);
        assert_eq!(names("echo if then fi"), ["echo"]);
    }

    #[test]
    fn loops_and_assignments() {
        let items = parse(&lex("for c in rm mv; do $c -rf x; done"));
        assert!(matches!(&items[0], Item::Loop { var, items } if var == "c" && items.len() == 2));
        let items = parse(&lex("X=1 Y=(a b) cmd arg"));
        let Item::Simple(s) = &items[0] else {
            panic!("simple expected")
        };
        assert_eq!(s.assigns.len(), 2);
        assert_eq!(s.words.len(), 2);
    }
}
