//! A POSIX-shell lexer (with the bash extensions agents type): words with their quoting
//! kept apart, operators, redirections and here-documents.
//!
//! It never fails: an unterminated quote or substitution runs to the end of the input, as
//! a shell that reads more lines would see it. What it keeps for the detectors:
//!
//! - a word is a list of [`Part`]s: literal text (quoted or not), parameter expansions
//!   (`$X`, `${X:-default}`), command and process substitutions (`$(…)`, backticks,
//!   `<(…)`, `>(…)`, whose text is code to be judged in turn) and arithmetic;
//! - quote removal happens here (`r''m` is the literal `rm` split in three parts), `\x`
//!   outside quotes is `x`, a backslash-newline disappears, `$'…'` escapes are decoded;
//! - comments (`#` at the start of a word) are dropped;
//! - operators: `;` `&` `&&` `||` `|` `|&` `(` `)` newline and the case terminators;
//! - redirections with their optional file descriptor and target word; a here-document's
//!   body (read after the next newline, up to its delimiter) is attached to it.

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text after quote removal; `quoted` text is never globbed, split or
    /// brace-expanded.
    Lit {
        /// The text.
        text: String,
        /// Whether it came from inside quotes (or a backslash escape).
        quoted: bool,
    },
    /// `$NAME`, `${NAME}`, `${NAME:-default}` and the other `${…}` forms.
    Var {
        /// The parameter name (`HOME`, `1`, `@`).
        name: String,
        /// The raw text of a `-`, `:-`, `=` or `:=` default, to be read as a word.
        default: Option<String>,
        /// Whether the expansion was inside double quotes (no field splitting).
        quoted: bool,
    },
    /// `$(…)`, backticks, `<(…)` or `>(…)`: the inner text is shell code.
    Sub {
        /// The inner code.
        code: String,
        /// Whether it was inside double quotes.
        quoted: bool,
    },
    /// `$((…))`: arithmetic, never a command or a path.
    Arith,
}

/// A word as written: its parts in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The parts, concatenated by the shell.
    pub parts: Vec<Part>,
}

impl Word {
    /// The word's text when it is a plain literal (all parts literal), else `None`.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// Whether any part was quoted.
    pub fn has_quotes(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Lit { quoted, .. } | Part::Var { quoted, .. } | Part::Sub { quoted, .. } => {
                *quoted
            }
            Part::Arith => false,
        })
    }

    fn push_char(&mut self, c: char, quoted: bool) {
        if let Some(Part::Lit { text, quoted: q }) = self.parts.last_mut()
            && *q == quoted
        {
            text.push(c);
            return;
        }
        self.parts.push(Part::Lit {
            text: c.to_string(),
            quoted,
        });
    }

    fn push_str(&mut self, s: &str, quoted: bool) {
        for c in s.chars() {
            self.push_char(c, quoted);
        }
        if s.is_empty() && quoted {
            // `''` is an empty quoted word, not nothing.
            self.parts.push(Part::Lit {
                text: String::new(),
                quoted: true,
            });
        }
    }
}

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `;`
    Semi,
    /// `&`
    Amp,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `|`
    Pipe,
    /// `|&`
    PipeAll,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// A newline.
    Newline,
    /// `;;`, `;&` or `;;&` (end of a case branch).
    CaseEnd,
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirOp {
    /// `<`
    In,
    /// `>`, `>|`
    Out,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&` (to a descriptor, or both streams to a file)
    DupOut,
    /// `&>`, `&>>`
    OutAll,
    /// `<<`, `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl RedirOp {
    /// Whether the target is opened for writing.
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirOp::Out | RedirOp::Append | RedirOp::ReadWrite | RedirOp::DupOut | RedirOp::OutAll
        )
    }
}

/// A redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redir {
    /// The explicit file descriptor (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirOp,
    /// The target word (for a here-document: its delimiter).
    pub target: Word,
    /// For a here-document: its index in [`Lexed::heredocs`].
    pub heredoc: Option<usize>,
}

/// A here-document's body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HereDoc {
    /// The lines between the operator's line and the delimiter.
    pub body: String,
    /// Whether the delimiter was quoted (then the body is not expanded).
    pub quoted: bool,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// An operator.
    Op(Op),
    /// A redirection.
    Redir(Redir),
}

/// The tokens of a text and the bodies of its here-documents.
#[derive(Debug, Clone, Default)]
pub struct Lexed {
    /// Tokens in order.
    pub tokens: Vec<Token>,
    /// Here-document bodies, referenced by [`Redir::heredoc`].
    pub heredocs: Vec<HereDoc>,
    /// The byte range of each token in the source, parallel to `tokens` (a newline's
    /// range also covers the here-document bodies read after it).
    pub spans: Vec<std::ops::Range<usize>>,
}

/// Lexes shell source text.
pub fn lex(src: &str) -> Lexed {
    let mut lexer = Lexer {
        s: src.chars().collect(),
        i: 0,
        out: Lexed::default(),
        pending: Vec::new(),
    };
    lexer.run();
    // Spans were recorded in characters; report them in bytes of the source.
    let mut bytes = Vec::with_capacity(lexer.s.len() + 1);
    let mut at = 0;
    for c in &lexer.s {
        bytes.push(at);
        at += c.len_utf8();
    }
    bytes.push(at);
    let mut out = lexer.out;
    for span in &mut out.spans {
        *span = bytes[span.start.min(bytes.len() - 1)]..bytes[span.end.min(bytes.len() - 1)];
    }
    out
}

/// The parts of a text read as if it were inside double quotes: what an unquoted
/// here-document body expands (its `$(…)` and backticks run).
pub fn double_quoted_parts(text: &str) -> Vec<Part> {
    let mut lexer = Lexer {
        s: text.chars().collect(),
        i: 0,
        out: Lexed::default(),
        pending: Vec::new(),
    };
    let mut word = Word::default();
    while lexer.i < lexer.s.len() {
        let c = lexer.s[lexer.i];
        match c {
            '\\' if matches!(lexer.peek(1), Some('$' | '`' | '\\')) => {
                word.push_char(lexer.s[lexer.i + 1], true);
                lexer.i += 2;
            }
            '$' => lexer.dollar(&mut word, true),
            '`' => lexer.backtick(&mut word, true),
            _ => {
                word.push_char(c, true);
                lexer.i += 1;
            }
        }
    }
    word.parts
}

struct PendingDoc {
    delimiter: String,
    strip_tabs: bool,
    index: usize,
}

struct Lexer {
    s: Vec<char>,
    i: usize,
    out: Lexed,
    pending: Vec<PendingDoc>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.s.get(self.i + ahead).copied()
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(k, c)| self.s.get(self.i + k) == Some(&c))
    }

    fn run(&mut self) {
        while self.i < self.s.len() {
            let start = self.i;
            let before = self.out.tokens.len();
            self.run_one();
            for _ in before..self.out.tokens.len() {
                self.out.spans.push(start..self.i);
            }
        }
    }

    /// Lexes what starts at `self.i`: blanks, a comment, an operator or a word.
    fn run_one(&mut self) {
        {
            let c = self.s[self.i];
            match c {
                ' ' | '\t' | '\r' => self.i += 1,
                '\\' if self.peek(1) == Some('\n') => self.i += 2,
                '\n' => {
                    self.i += 1;
                    self.out.tokens.push(Token::Op(Op::Newline));
                    self.read_heredocs();
                }
                '#' => {
                    while self.i < self.s.len() && self.s[self.i] != '\n' {
                        self.i += 1;
                    }
                }
                ';' => {
                    if self.starts_with(";;&") {
                        self.i += 3;
                        self.out.tokens.push(Token::Op(Op::CaseEnd));
                    } else if self.starts_with(";;") || self.starts_with(";&") {
                        self.i += 2;
                        self.out.tokens.push(Token::Op(Op::CaseEnd));
                    } else {
                        self.i += 1;
                        self.out.tokens.push(Token::Op(Op::Semi));
                    }
                }
                '&' => {
                    if self.starts_with("&&") {
                        self.i += 2;
                        self.out.tokens.push(Token::Op(Op::And));
                    } else if self.starts_with("&>") {
                        let append = self.starts_with("&>>");
                        self.i += if append { 3 } else { 2 };
                        self.redirect(None, RedirOp::OutAll);
                    } else {
                        self.i += 1;
                        self.out.tokens.push(Token::Op(Op::Amp));
                    }
                }
                '|' => {
                    if self.starts_with("||") {
                        self.i += 2;
                        self.out.tokens.push(Token::Op(Op::Or));
                    } else if self.starts_with("|&") {
                        self.i += 2;
                        self.out.tokens.push(Token::Op(Op::PipeAll));
                    } else {
                        self.i += 1;
                        self.out.tokens.push(Token::Op(Op::Pipe));
                    }
                }
                '(' => {
                    self.i += 1;
                    self.out.tokens.push(Token::Op(Op::LParen));
                }
                ')' => {
                    self.i += 1;
                    self.out.tokens.push(Token::Op(Op::RParen));
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    let word = self.word();
                    self.out.tokens.push(Token::Word(word));
                }
                '<' | '>' => self.redirection(None),
                _ => {
                    let start = self.i;
                    let word = self.word();
                    // A word of digits directly followed by `<` or `>` is a descriptor.
                    let digits: String = self.s[start..self.i].iter().collect();
                    if !digits.is_empty()
                        && digits.chars().all(|d| d.is_ascii_digit())
                        && matches!(self.peek(0), Some('<' | '>'))
                        && self.peek(1) != Some('(')
                    {
                        self.redirection(digits.parse().ok());
                    } else if self.i == start {
                        // Cannot happen for a non-meta character; move on rather than loop.
                        self.i += 1;
                    } else {
                        self.out.tokens.push(Token::Word(word));
                    }
                }
            }
        }
    }

    /// Reads a redirection operator at `self.i` (which is `<` or `>`).
    fn redirection(&mut self, fd: Option<u32>) {
        let (op, len) = if self.starts_with("<<<") {
            (RedirOp::HereString, 3)
        } else if self.starts_with("<<-") {
            self.heredoc(fd, true, 3);
            return;
        } else if self.starts_with("<<") {
            self.heredoc(fd, false, 2);
            return;
        } else if self.starts_with("<>") {
            (RedirOp::ReadWrite, 2)
        } else if self.starts_with("<&") {
            (RedirOp::DupIn, 2)
        } else if self.starts_with(">>") {
            (RedirOp::Append, 2)
        } else if self.starts_with(">&") {
            (RedirOp::DupOut, 2)
        } else if self.starts_with(">|") {
            (RedirOp::Out, 2)
        } else if self.starts_with("<") {
            (RedirOp::In, 1)
        } else {
            (RedirOp::Out, 1)
        };
        self.i += len;
        self.redirect(fd, op);
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn redirect(&mut self, fd: Option<u32>, op: RedirOp) {
        self.skip_blanks();
        let target = if self.peek(0).is_some_and(|c| !is_meta(c)) {
            self.word()
        } else {
            Word::default()
        };
        self.out.tokens.push(Token::Redir(Redir {
            fd,
            op,
            target,
            heredoc: None,
        }));
    }

    fn heredoc(&mut self, fd: Option<u32>, strip_tabs: bool, len: usize) {
        self.i += len;
        self.skip_blanks();
        let target = if self.peek(0).is_some_and(|c| !is_meta(c)) {
            self.word()
        } else {
            Word::default()
        };
        let delimiter: String = target
            .parts
            .iter()
            .map(|p| match p {
                Part::Lit { text, .. } => text.clone(),
                Part::Var { name, .. } => format!("${name}"),
                _ => String::new(),
            })
            .collect();
        let index = self.out.heredocs.len();
        self.out.heredocs.push(HereDoc {
            body: String::new(),
            quoted: target.has_quotes(),
        });
        self.pending.push(PendingDoc {
            delimiter,
            strip_tabs,
            index,
        });
        self.out.tokens.push(Token::Redir(Redir {
            fd,
            op: RedirOp::HereDoc,
            target,
            heredoc: Some(index),
        }));
    }

    /// Reads the bodies of the here-documents opened on the line that just ended.
    fn read_heredocs(&mut self) {
        for doc in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.i < self.s.len() {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != '\n' {
                    self.i += 1;
                }
                let mut line: String = self.s[start..self.i].iter().collect();
                if self.i < self.s.len() {
                    self.i += 1;
                }
                if doc.strip_tabs {
                    line = line.trim_start_matches('\t').to_string();
                }
                if line == doc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(slot) = self.out.heredocs.get_mut(doc.index) {
                slot.body = body;
            }
        }
    }

    /// Reads one word starting at `self.i`.
    fn word(&mut self) -> Word {
        let mut word = Word::default();
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.i += 2;
                    let code = self.balanced(')');
                    word.parts.push(Part::Sub {
                        code,
                        quoted: false,
                    });
                }
                c if is_meta(c) => break,
                '\\' => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(next) => {
                        word.push_char(next, true);
                        self.i += 2;
                    }
                    None => {
                        self.i += 1;
                    }
                },
                '\'' => {
                    self.i += 1;
                    let start = self.i;
                    while self.i < self.s.len() && self.s[self.i] != '\'' {
                        self.i += 1;
                    }
                    let text: String = self.s[start..self.i].iter().collect();
                    self.i += 1;
                    word.push_str(&text, true);
                }
                '"' => {
                    self.i += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word, false),
                '`' => self.backtick(&mut word, false),
                _ => {
                    word.push_char(c, false);
                    self.i += 1;
                }
            }
        }
        // An unterminated quote may have stepped past the end.
        self.i = self.i.min(self.s.len());
        word
    }

    /// Reads the inside of `"…"` (the opening quote is consumed).
    fn double_quoted(&mut self, word: &mut Word) {
        let before = word.parts.len();
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                '"' => {
                    self.i += 1;
                    break;
                }
                '\\' => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        word.push_char(next, true);
                        self.i += 2;
                    }
                    _ => {
                        word.push_char('\\', true);
                        self.i += 1;
                    }
                },
                '$' => self.dollar(word, true),
                '`' => self.backtick(word, true),
                _ => {
                    word.push_char(c, true);
                    self.i += 1;
                }
            }
        }
        if word.parts.len() == before {
            word.push_str("", true);
        }
    }

    /// Reads a `$…` form at `self.i`.
    fn dollar(&mut self, word: &mut Word, quoted: bool) {
        match self.peek(1) {
            Some('\'') if !quoted => {
                self.i += 2;
                let text = self.ansi_c();
                word.push_str(&text, true);
            }
            Some('"') if !quoted => {
                self.i += 2;
                self.double_quoted(word);
            }
            Some('(') if self.peek(2) == Some('(') => {
                self.i += 3;
                let body = self.balanced_arith();
                // Substitutions inside arithmetic still run: `$(( $(cmd) + 1 ))`.
                push_subs(word, &body, quoted);
                word.parts.push(Part::Arith);
            }
            Some('(') => {
                self.i += 2;
                let code = self.balanced(')');
                word.parts.push(Part::Sub { code, quoted });
            }
            Some('{') => {
                self.i += 2;
                let inner = self.braced();
                let part = parameter(&inner, quoted);
                // Every other `${…}` operator (`${a[$(…)]}`, `${a/$(…)/y}`, `${a:$(…)}`)
                // runs the substitutions in it; a default is expanded (and judged) itself.
                if matches!(&part, Part::Var { default: None, .. }) {
                    push_subs(word, &inner, quoted);
                }
                word.parts.push(part);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.i += 1;
                let start = self.i;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
                let name: String = self.s[start..self.i].iter().collect();
                word.parts.push(Part::Var {
                    name,
                    default: None,
                    quoted,
                });
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.i += 2;
                word.parts.push(Part::Var {
                    name: c.to_string(),
                    default: None,
                    quoted,
                });
            }
            _ => {
                word.push_char('$', quoted);
                self.i += 1;
            }
        }
    }

    /// Reads the inside of a backtick substitution (the opening backtick at `self.i`).
    fn backtick(&mut self, word: &mut Word, quoted: bool) {
        self.i += 1;
        let mut code = String::new();
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                '`' => {
                    self.i += 1;
                    break;
                }
                '\\' if matches!(self.peek(1), Some('`' | '\\' | '$')) => {
                    code.push(self.s[self.i + 1]);
                    self.i += 2;
                }
                _ => {
                    code.push(c);
                    self.i += 1;
                }
            }
        }
        word.parts.push(Part::Sub { code, quoted });
    }

    /// Reads up to the `close` that balances an already consumed opener, skipping quotes
    /// and nested substitutions; returns the text in between.
    fn balanced(&mut self, close: char) -> String {
        let open = if close == ')' { '(' } else { '{' };
        let start = self.i;
        let mut depth = 1usize;
        // Open `case … esac` at the outer level: a pattern's `)` there ends no `$(`.
        let mut cases = 0usize;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if close == ')' && depth == 1 && self.at_word_start() {
                if self.reserved_word_here("case") {
                    cases += 1;
                } else if self.reserved_word_here("esac") {
                    cases = cases.saturating_sub(1);
                }
            }
            match c {
                ')' if close == ')' && depth == 1 && cases > 0 => self.i += 1,
                '\\' => self.i += 2,
                '\'' => {
                    self.i += 1;
                    while self.i < self.s.len() && self.s[self.i] != '\'' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                quote @ ('"' | '`') => {
                    self.i += 1;
                    while self.i < self.s.len() && self.s[self.i] != quote {
                        if self.s[self.i] == '\\' {
                            self.i += 1;
                        }
                        self.i += 1;
                    }
                    self.i += 1;
                }
                c if c == open => {
                    depth += 1;
                    self.i += 1;
                }
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        let text: String = self.s[start..self.i].iter().collect();
                        self.i += 1;
                        return text;
                    }
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        let end = self.s.len().min(self.i);
        self.i = self.s.len();
        self.s[start.min(end)..end].iter().collect()
    }

    /// Whether `self.i` starts a word (after a blank, an operator or the start).
    fn at_word_start(&self) -> bool {
        self.i == 0
            || matches!(
                self.s[self.i - 1],
                ' ' | '\t' | '\n' | ';' | '(' | '&' | '|'
            )
    }

    /// Whether the reserved word `word` stands at `self.i` (followed by a blank or end).
    fn reserved_word_here(&self, word: &str) -> bool {
        self.starts_with(word)
            && self
                .peek(word.chars().count())
                .is_none_or(|c| matches!(c, ' ' | '\t' | '\n' | ';' | ')'))
    }

    /// Skips an arithmetic expansion body up to its `))`.
    fn balanced_arith(&mut self) -> String {
        let start = self.i;
        let mut depth = 0usize;
        while self.i < self.s.len() {
            match self.s[self.i] {
                '(' => depth += 1,
                ')' if depth == 0 && self.peek(1) == Some(')') => {
                    let text: String = self.s[start..self.i].iter().collect();
                    self.i += 2;
                    return text;
                }
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.i += 1;
        }
        self.s[start..].iter().collect()
    }

    /// Reads the inside of `${…}` (opening consumed), honouring nested braces and quotes.
    fn braced(&mut self) -> String {
        self.balanced('}')
    }

    /// Decodes the inside of `$'…'` (opening consumed) up to the closing quote.
    fn ansi_c(&mut self) -> String {
        let mut out = String::new();
        while self.i < self.s.len() {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                '\'' => break,
                '\\' => {
                    let Some(e) = self.peek(0) else { break };
                    self.i += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'a' => out.push('\u{7}'),
                        'b' => out.push('\u{8}'),
                        'e' | 'E' => out.push('\u{1b}'),
                        'f' => out.push('\u{c}'),
                        'v' => out.push('\u{b}'),
                        'x' => out.push(self.code_point(16, 2)),
                        'u' => out.push(self.code_point(16, 4)),
                        'U' => out.push(self.code_point(16, 8)),
                        '0'..='7' => {
                            self.i -= 1;
                            out.push(self.code_point(8, 3));
                        }
                        other => out.push(other),
                    }
                }
                _ => out.push(c),
            }
        }
        out
    }

    fn code_point(&mut self, radix: u32, max: usize) -> char {
        let (decoded, taken) = code_point(self.s.get(self.i..).unwrap_or_default(), radix, max);
        self.i += taken;
        decoded
    }
}

/// The character written as up to `max` digits of `radix` at the start of `chars` (an
/// escape's `HH` or `NNN`; U+FFFD when the value is no character), and how many digits
/// it took.
pub fn code_point(chars: &[char], radix: u32, max: usize) -> (char, usize) {
    let mut value = 0u32;
    let mut taken = 0;
    while let Some(digit) = chars
        .get(taken)
        .filter(|_| taken < max)
        .and_then(|c| c.to_digit(radix))
    {
        value = value.saturating_mul(radix).saturating_add(digit);
        taken += 1;
    }
    (char::from_u32(value).unwrap_or('\u{fffd}'), taken)
}

/// Adds the command substitutions found in `text` (an arithmetic body, a parameter
/// expansion's operands) to `word` as parts of their own.
fn push_subs(word: &mut Word, text: &str, quoted: bool) {
    if !text.contains(['$', '`']) {
        return;
    }
    for part in double_quoted_parts(text) {
        if let Part::Sub { code, .. } = part {
            word.parts.push(Part::Sub { code, quoted });
        }
    }
}

/// Reads the inside of `${…}` into a parameter part.
fn parameter(inner: &str, quoted: bool) -> Part {
    let inner = inner.strip_prefix('#').unwrap_or(inner);
    let inner = inner.strip_prefix('!').unwrap_or(inner);
    let end = inner
        .char_indices()
        .find(|(k, c)| {
            !(c.is_ascii_alphanumeric() || *c == '_' || (*k == 0 && "@*#?-$!".contains(*c)))
        })
        .map_or(inner.len(), |(k, _)| k);
    let name = inner[..end].to_string();
    let rest = &inner[end..];
    let default = ["-", ":-", "=", ":="]
        .iter()
        .filter_map(|op| rest.strip_prefix(op))
        .next()
        .filter(|_| !rest.starts_with(":?") && !rest.starts_with(":+"))
        .map(str::to_string);
    Part::Var {
        name,
        default,
        quoted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<String> {
        lex(src)
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(
                    w.parts
                        .iter()
                        .map(|p| match p {
                            Part::Lit { text, .. } => text.clone(),
                            Part::Var { name, .. } => format!("${{{name}}}"),
                            Part::Sub { code, .. } => format!("$({code})"),
                            Part::Arith => "$((…))".into(),
                        })
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn quotes_are_removed_and_escapes_decoded() {
        assert_eq!(words(r#"r''m -"r"f \/tmp"#), ["rm", "-rf", "/tmp"]);
        assert_eq!(words(r"$'\x2e'env"), [".env"]);
        assert_eq!(words("echo 'a b' \"c $X d\""), ["echo", "a b", "c ${X} d"]);
        assert_eq!(words("ec\\\nho hi"), ["echo", "hi"]);
    }

    #[test]
    fn substitutions_keep_their_code() {
        assert_eq!(
            words("echo $(rm -rf \"$(pwd)\") `ls`"),
            ["echo", "$(rm -rf \"$(pwd)\")", "$(ls)"]
        );
        assert_eq!(words("diff <(sort a) b"), ["diff", "$(sort a)", "b"]);
        assert_eq!(words("echo $((1+(2*3))) x"), ["echo", "$((…))", "x"]);
    }

    #[test]
    fn operators_comments_and_redirections() {
        let lexed = lex("a && b || c | d |& e; f & # rm -rf /\n2>/dev/null g >> out <in");
        let ops: Vec<Op> = lexed
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Op(op) => Some(*op),
                _ => None,
            })
            .collect();
        assert_eq!(
            ops,
            [
                Op::And,
                Op::Or,
                Op::Pipe,
                Op::PipeAll,
                Op::Semi,
                Op::Amp,
                Op::Newline
            ]
        );
        let redirs: Vec<(Option<u32>, RedirOp, Option<String>)> = lexed
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Redir(r) => Some((r.fd, r.op, r.target.literal())),
                _ => None,
            })
            .collect();
        assert_eq!(
            redirs,
            [
                (Some(2), RedirOp::Out, Some("/dev/null".into())),
                (None, RedirOp::Append, Some("out".into())),
                (None, RedirOp::In, Some("in".into())),
            ]
        );
        assert!(!words("x # rm -rf /").contains(&"rm".to_string()));
    }

    #[test]
    fn heredoc_bodies_are_attached() {
        let lexed = lex("psql <<'EOF' && echo ok\nDROP TABLE x;\nEOF\nls");
        assert_eq!(lexed.heredocs.len(), 1);
        assert_eq!(lexed.heredocs[0].body, "DROP TABLE x;\n");
        assert!(lexed.heredocs[0].quoted);
        let names = words("psql <<'EOF' && echo ok\nDROP TABLE x;\nEOF\nls");
        assert_eq!(names, ["psql", "echo", "ok", "ls"]);
    }

    #[test]
    fn parameters_with_defaults() {
        let lexed = lex("${RM:-rm} ${#X} ${Y:+z}");
        let parts: Vec<Part> = lexed
            .tokens
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(mut w) => w.parts.pop(),
                _ => None,
            })
            .collect();
        assert_eq!(
            parts[0],
            Part::Var {
                name: "RM".into(),
                default: Some("rm".into()),
                quoted: false
            }
        );
        assert!(matches!(&parts[2], Part::Var { default: None, .. }));
    }

    #[test]
    fn unterminated_input_never_panics() {
        for src in [
            "'abc", "\"abc", "$(abc", "`abc", "${abc", "$'\\x", "a <<", "a >", "\\",
        ] {
            let _ = lex(src);
        }
    }
}
