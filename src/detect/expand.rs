//! Word expansion as far as it can be known without running anything.
//!
//! Variables assigned earlier in the same command line (`X=rm; $X -rf /`) and `for` loop
//! variables have their values; an unknown variable keeps its text (`$HOME/.env` still
//! names `.env`) unless it has a default (`${RM:-rm}` is `rm`). Unquoted values are split
//! into fields. A command substitution's code is collected for judging, and the output of
//! the few that can be known (`$(echo rm)`, `$(which rm)`, `$(printf …)`) is used in
//! place. Unquoted braces expand (`.e{n,}v` is `.env` and `.ev`). Globs are kept as text
//! with a flag, for the secret-file rules to match. What a download prints is unknown but
//! marked as fetched ([`Feed::Fetched`], [`FETCHED`]), so that running it can be judged.

use std::collections::HashMap;

use super::lex::{self, Part, Token, Word};
use super::parse::{self, Item};

/// Variables known from the command line itself.
pub type Vars = HashMap<String, String>;

/// The variables every shell starts with that obfuscations use (`rm${IFS}-rf`).
pub fn initial_vars() -> Vars {
    let mut vars = Vars::new();
    vars.insert("IFS".to_string(), " ".to_string());
    vars
}

/// One expanded field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The text after expansion and quote removal.
    pub text: String,
    /// Whether it holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
}

/// The most fields one word may expand to (brace expansion can multiply).
const MAX_FIELDS: usize = 64;
/// How deep static evaluation of nested substitutions goes.
const MAX_EVAL_DEPTH: usize = 4;

/// How deep nested `${…:-default}` defaults are expanded.
const MAX_DEFAULT_DEPTH: usize = 16;

type Field = Vec<(char, bool)>;

/// Expands a word into fields, collecting the code of its command substitutions.
pub fn expand(word: &Word, vars: &Vars, subs: &mut Vec<String>) -> Vec<Arg> {
    expand_at(word, vars, subs, 0)
}

fn expand_at(word: &Word, vars: &Vars, subs: &mut Vec<String>, depth: usize) -> Vec<Arg> {
    let mut fields: Vec<Field> = vec![Vec::new()];
    let mut produced = false;
    for part in &word.parts {
        match part {
            Part::Lit { text, quoted } => {
                produced |= *quoted || !text.is_empty();
                push(&mut fields, text, *quoted);
            }
            Part::Var {
                name,
                default,
                quoted,
            } => {
                let value = vars.get(name).cloned().or_else(|| {
                    default
                        .as_ref()
                        .map(|d| expand_text(d, vars, subs, depth + 1))
                });
                match value {
                    Some(value) => {
                        produced |= *quoted || !value.trim().is_empty();
                        insert_value(&mut fields, &value, *quoted);
                    }
                    None => {
                        produced = true;
                        let raw = if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                            format!("${name}")
                        } else {
                            format!("${{{name}}}")
                        };
                        push(&mut fields, &raw, true);
                    }
                }
            }
            Part::Sub { code, quoted } => {
                subs.push(code.clone());
                produced = true;
                match static_feed(code, vars, depth) {
                    Some(Feed::Text(value)) => {
                        insert_value(&mut fields, value.trim_end_matches('\n'), *quoted);
                    }
                    Some(Feed::Fetched(_)) => push(&mut fields, FETCHED, true),
                    _ => push(&mut fields, "$(…)", true),
                }
            }
            Part::Arith => {
                produced = true;
                push(&mut fields, "$((…))", true);
            }
        }
    }
    if !produced {
        return Vec::new();
    }
    let mut out = Vec::new();
    for field in fields {
        for expanded in braces(&field, 0) {
            if out.len() >= MAX_FIELDS {
                break;
            }
            out.push(Arg {
                text: expanded.iter().map(|(c, _)| *c).collect(),
                glob: expanded
                    .iter()
                    .any(|(c, quoted)| !quoted && matches!(c, '*' | '?' | '[')),
            });
        }
    }
    out
}

/// Expands raw word text (a `${X:-default}` default) into one string.
fn expand_text(raw: &str, vars: &Vars, subs: &mut Vec<String>, depth: usize) -> String {
    // Nested defaults (`${a:-${a:-…}}`) are followed only so far: each level lexes the
    // rest again, so without a bound the work is quadratic and the recursion unbounded.
    if depth > MAX_DEFAULT_DEPTH {
        return raw.to_string();
    }
    let mut texts = Vec::new();
    for token in lex::lex(raw).tokens {
        if let Token::Word(word) = token {
            texts.extend(
                expand_at(&word, vars, subs, depth)
                    .into_iter()
                    .map(|a| a.text),
            );
        }
    }
    texts.join(" ")
}

fn push(fields: &mut [Field], text: &str, quoted: bool) {
    if let Some(last) = fields.last_mut() {
        last.extend(text.chars().map(|c| (c, quoted)));
    }
}

/// Inserts an expansion's value: quoted as is, unquoted split into fields at blanks.
/// Expanded text is never brace-expanded again, so it is marked quoted, except that glob
/// characters in an unquoted value still glob.
fn insert_value(fields: &mut Vec<Field>, value: &str, quoted: bool) {
    if quoted {
        push(fields, value, true);
        return;
    }
    let starts_blank = value.starts_with(char::is_whitespace);
    let ends_blank = value.ends_with(char::is_whitespace);
    let pieces: Vec<&str> = value.split_whitespace().collect();
    if starts_blank && fields.last().is_some_and(|f| !f.is_empty()) {
        fields.push(Vec::new());
    }
    for (k, piece) in pieces.iter().enumerate() {
        if k > 0 {
            fields.push(Vec::new());
        }
        if let Some(last) = fields.last_mut() {
            last.extend(piece.chars().map(|c| (c, !matches!(c, '*' | '?' | '['))));
        }
    }
    if ends_blank && !pieces.is_empty() {
        fields.push(Vec::new());
    }
}

/// Brace expansion of one field: `a{b,c}d` → `abd`, `acd` (unquoted braces only).
fn braces(field: &Field, depth: usize) -> Vec<Field> {
    if depth > 8 {
        return vec![field.clone()];
    }
    let Some((open, close, commas)) = find_brace(field) else {
        return vec![field.clone()];
    };
    let prefix = &field[..open];
    let suffix = &field[close + 1..];
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let mut expanded: Field = prefix.to_vec();
        expanded.extend_from_slice(&field[pair[0] + 1..pair[1]]);
        expanded.extend_from_slice(suffix);
        out.extend(braces(&expanded, depth + 1));
        if out.len() >= MAX_FIELDS {
            break;
        }
    }
    out
}

/// The first unquoted `{…}` with a top-level comma: positions of `{`, `}` and the commas.
fn find_brace(field: &Field) -> Option<(usize, usize, Vec<usize>)> {
    for (start, (c, quoted)) in field.iter().enumerate() {
        if *c != '{' || *quoted || (start > 0 && field[start - 1] == ('$', false)) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (k, (c, quoted)) in field.iter().enumerate().skip(start + 1) {
            if *quoted {
                continue;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    if commas.is_empty() {
                        break;
                    }
                    return Some((start, k, commas));
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(k),
                _ => {}
            }
        }
    }
    None
}

/// The output of a substitution as far as it is known without running anything: a
/// pipeline of commands whose output [`printed`] knows (`$(echo rm)`, `$(which rm)`,
/// `$(echo cm0= | base64 -d)`, `$(curl -fsSL URL)` as fetched text).
fn static_feed(code: &str, vars: &Vars, depth: usize) -> Option<Feed> {
    if depth >= MAX_EVAL_DEPTH {
        return None;
    }
    let lexed = lex::lex(code);
    let items = parse::parse(&lexed);
    let mut feed: Option<Feed> = None;
    for (k, item) in items.iter().enumerate() {
        let Item::Simple(simple) = item else {
            return None;
        };
        if k > 0 && !simple.piped {
            return None;
        }
        let mut input = feed.take();
        for redir in &simple.redirs {
            let doc = redir.heredoc.and_then(|i| lexed.heredocs.get(i));
            match (redir.op, doc) {
                (lex::RedirOp::HereDoc, Some(doc)) => input = Some(Feed::Text(doc.body.clone())),
                (lex::RedirOp::HereString, _) => {
                    let mut ignored = Vec::new();
                    let text: Vec<String> = expand_at(&redir.target, vars, &mut ignored, depth + 1)
                        .into_iter()
                        .map(|a| a.text)
                        .collect();
                    input = Some(Feed::Text(format!("{}\n", text.join(" "))));
                }
                // Standard error and other descriptors do not change what is printed
                // (`$(curl -fsSL URL 2>/dev/null)`).
                _ if redir.fd.is_some_and(|fd| fd >= 2) => {}
                _ => return None,
            }
        }
        let mut ignored = Vec::new();
        let args: Vec<String> = simple
            .words
            .iter()
            .flat_map(|w| expand_at(w, vars, &mut ignored, depth + 1))
            .map(|a| a.text)
            .collect();
        feed = printed(&args, input.as_ref());
    }
    feed
}

/// What a command writes to its standard output, as far as it is known without running
/// it: for a pipe into an interpreter, and for command substitutions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feed {
    /// Known text (`echo`, `printf`, `cat <<EOF`, `base64 -d` of known text).
    Text(String),
    /// Unknown output of a command with these arguments: the only text there is, judged as
    /// code when piped into an interpreter (`awk '{print "rm -rf " $1}' | sh`).
    Args(Vec<String>),
    /// Unknown text fetched from the network by this command (`curl -fsSL URL`), or
    /// derived from such text further down a pipeline: code nobody has seen when an
    /// interpreter runs it.
    Fetched(String),
}

/// The text a word holds in place of a substitution that fetches from the network
/// (`bash -c "$(curl -fsSL URL)"`, `source <(wget -qO- URL)`): code holding it runs code
/// fetched from the network.
pub const FETCHED: &str = "$(download…)";

/// What `argv` prints given its standard input `input` (here-documents included).
pub fn printed(argv: &[String], input: Option<&Feed>) -> Option<Feed> {
    if fetch(argv) == Some(Fetch::Stdout) {
        return Some(Feed::Fetched(argv.join(" ")));
    }
    let own = printed_own(argv, input);
    match (input, own) {
        // A filter of fetched text prints text derived from it (`curl … | gunzip`).
        (Some(Feed::Fetched(source)), None | Some(Feed::Args(_))) => {
            Some(Feed::Fetched(source.clone()))
        }
        (_, own) => own,
    }
}

fn printed_own(argv: &[String], input: Option<&Feed>) -> Option<Feed> {
    let (name, args) = argv.split_first()?;
    let input_text = match input {
        Some(Feed::Text(text)) => Some(text.as_str()),
        _ => None,
    };
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match super::args::command_name(name) {
        "echo" => {
            let mut escapes = false;
            let mut newline = true;
            let words: Vec<&str> = args
                .iter()
                .map(String::as_str)
                .skip_while(|a| {
                    let flag = a.len() > 1
                        && a.starts_with('-')
                        && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'));
                    escapes |= flag && a.contains('e');
                    newline &= !(flag && a.contains('n'));
                    flag
                })
                .collect();
            let mut text = words.join(" ");
            if escapes {
                text = unescape(&text);
            }
            if newline {
                text.push('\n');
            }
            Some(Feed::Text(text))
        }
        "printf" => {
            let (format, values) = args.split_first()?;
            Some(Feed::Text(printf(format, values)))
        }
        "which" | "type" => operands.first().map(|o| Feed::Text(format!("{o}\n"))),
        "command" if args.iter().any(|a| a == "-v" || a == "-V") => {
            operands.first().map(|o| Feed::Text(format!("{o}\n")))
        }
        "cat" if operands.is_empty() => input.cloned(),
        "cat" => None,
        // tee copies its input to standard output as well as to its files.
        "tee" => input.cloned(),
        "base64" | "b64"
            if operands.is_empty()
                && args
                    .iter()
                    .any(|a| matches!(a.as_str(), "-d" | "--decode" | "-D")) =>
        {
            let text = input_text?;
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(compact.as_bytes())
                .or_else(|_| {
                    base64::engine::general_purpose::STANDARD_NO_PAD
                        .decode(compact.trim_end_matches('=').as_bytes())
                })
                .ok()?;
            String::from_utf8(bytes).ok().map(Feed::Text)
        }
        "rev" if operands.is_empty() => {
            let text = input_text?;
            let reversed: Vec<String> = text.lines().map(|l| l.chars().rev().collect()).collect();
            Some(Feed::Text(format!("{}\n", reversed.join("\n"))))
        }
        _ => Some(Feed::Args(args.to_vec())),
    }
}

/// Where a command that downloads puts what it fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    /// Standard output (`curl URL`, `wget -qO- URL`).
    Stdout,
    /// A file (`curl -o x.sh URL`, `curl -O URL`, `wget URL`).
    File(String),
}

/// How many wrappers deep a download is looked for (`sudo timeout 10 curl …`).
const MAX_FETCH_DEPTH: usize = 8;

/// Whether `argv` downloads from the network (curl, wget, HTTPie/xh), and where to.
pub fn fetch(argv: &[String]) -> Option<Fetch> {
    fetch_at(argv, 0)
}

fn fetch_at(argv: &[String], depth: usize) -> Option<Fetch> {
    let (first, args) = argv.split_first()?;
    match super::args::command_name(first) {
        "curl" | "curlie" => Some(curl(args)),
        "wget" | "wget2" => Some(wget(args)),
        "http" | "https" | "xh" | "xhs" => {
            let to_file = args.iter().any(|a| {
                matches!(a.as_str(), "-d" | "--download" | "-o" | "--output")
                    || a.starts_with("--output=")
            });
            (!to_file).then_some(Fetch::Stdout)
        }
        _ if depth < MAX_FETCH_DEPTH => {
            super::runs::inners(argv)
                .iter()
                .find_map(|inner| match inner {
                    super::runs::Inner::Argv(next) => fetch_at(next, depth + 1),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// curl: standard output unless `-o FILE` (not `-`) or `-O` (the URL's last segment).
fn curl(args: &[String]) -> Fetch {
    // Short options that take a value, and long ones (the rest are flags).
    const SHORT: &str = "AbcCdDeEFHKmoPQrTtuUwxXyYz";
    const LONG: &[&str] = &[
        "output",
        "data",
        "data-raw",
        "data-binary",
        "data-urlencode",
        "data-ascii",
        "header",
        "request",
        "user",
        "user-agent",
        "referer",
        "cookie",
        "cookie-jar",
        "form",
        "form-string",
        "output-dir",
        "config",
        "max-time",
        "connect-timeout",
        "retry",
        "retry-delay",
        "retry-max-time",
        "proxy",
        "cert",
        "key",
        "cacert",
        "capath",
        "write-out",
        "upload-file",
        "range",
        "resolve",
        "url",
        "continue-at",
        "limit-rate",
        "max-filesize",
        "dump-header",
        "trace",
        "trace-ascii",
        "stderr",
        "interface",
        "oauth2-bearer",
        "json",
        "variable",
        "proto",
        "proto-redir",
        "connect-to",
        "pass",
        "aws-sigv4",
        "netrc-file",
        "max-redirs",
        "ciphers",
        "expect100-timeout",
    ];
    let mut output: Option<String> = None;
    let mut remote = false;
    let mut url: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some(("output", value)) => output = Some(value.to_string()),
                Some((_, _)) => {}
                None if long == "remote-name" || long == "remote-name-all" => remote = true,
                None if long == "output" => {
                    output = args.get(i + 1).cloned();
                    i += 1;
                }
                None if long == "url" => {
                    url = args.get(i + 1).map(String::as_str).or(url);
                    i += 1;
                }
                None if LONG.contains(&long) => i += 1,
                None => {}
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let taken = short_value(args, &mut i, SHORT, |c| remote |= c == 'O');
            if let Some(('o', value)) = taken {
                output = value;
            }
        } else if url.is_none() {
            url = Some(arg);
        }
        i += 1;
    }
    match output {
        Some(file) if file != "-" => Fetch::File(file),
        Some(_) => Fetch::Stdout,
        None if remote => url
            .and_then(url_file_name)
            .map_or(Fetch::Stdout, Fetch::File),
        None => Fetch::Stdout,
    }
}

/// In the cluster of short options `args[*i]` (`-sSLo FILE`), the first letter that takes
/// a value, with that value: the rest of the word, else the next word (which `*i` then
/// moves to). `on_flag` sees each letter without a value before it.
fn short_value(
    args: &[String],
    i: &mut usize,
    takes_value: &str,
    mut on_flag: impl FnMut(char),
) -> Option<(char, Option<String>)> {
    let arg = args.get(*i)?.as_str();
    for (k, c) in arg.get(1..)?.char_indices() {
        if takes_value.contains(c) {
            let rest = &arg[1 + k + c.len_utf8()..];
            let value = if rest.is_empty() {
                *i += 1;
                args.get(*i).cloned()
            } else {
                Some(rest.to_string())
            };
            return Some((c, value));
        }
        on_flag(c);
    }
    None
}

/// wget: a file (`-O FILE`, else the URL's last segment) unless `-O -`.
fn wget(args: &[String]) -> Fetch {
    const SHORT: &str = "OoaeiBPUTtwQlARDIX";
    let mut output: Option<String> = None;
    let mut url: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if let Some(long) = arg.strip_prefix("--") {
            if let Some(value) = long.strip_prefix("output-document=") {
                output = Some(value.to_string());
            } else if long == "output-document" {
                output = args.get(i + 1).cloned();
                i += 1;
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            if let Some(('O', value)) = short_value(args, &mut i, SHORT, |_| {}) {
                output = value;
            }
        } else if url.is_none() {
            url = Some(arg);
        }
        i += 1;
    }
    match output {
        Some(file) if file == "-" => Fetch::Stdout,
        Some(file) => Fetch::File(file),
        None => Fetch::File(
            url.and_then(url_file_name)
                .unwrap_or_else(|| "index.html".to_string()),
        ),
    }
}

/// The file name a URL is saved under: its path's last segment, without query.
fn url_file_name(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let after_scheme = path.split_once("://").map_or(path, |(_, rest)| rest);
    let (_, path) = after_scheme.split_once('/')?;
    let name = path.rsplit('/').next().unwrap_or(path);
    (!name.is_empty()).then(|| name.to_string())
}

/// A sketch of `printf`: escapes decoded, `%s`/`%b`/`%d` replaced by the arguments in
/// turn, `%%` a percent sign.
pub fn printf(format: &str, values: &[String]) -> String {
    let format = unescape(format);
    let mut out = String::new();
    let mut values = values.iter().peekable();
    // The format is reused while arguments remain, as printf does.
    for _ in 0..64 {
        let before = values.len();
        printf_once(&format, &mut values, &mut out);
        if values.peek().is_none() || values.len() == before {
            break;
        }
    }
    out
}

fn printf_once<'a>(
    format: &str,
    values: &mut std::iter::Peekable<std::slice::Iter<'a, String>>,
    out: &mut String,
) {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // Skip flags, width and precision.
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || "-+ #.".contains(*c))
        {
            chars.next();
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('b') => out.push_str(&unescape(values.next().map_or("", |v| v.as_str()))),
            Some(_) => out.push_str(values.next().map_or("", |v| v.as_str())),
            None => out.push('%'),
        }
    }
}

/// Decodes `echo -e`/`printf` escapes: `\n`, `\t`, `\\`, `\xHH`, `\0NNN`.
fn unescape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&escaped) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        match escaped {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '\\' => out.push('\\'),
            'x' | '0' => {
                let (radix, max) = if escaped == 'x' { (16, 2) } else { (8, 3) };
                let (decoded, taken) = lex::code_point(&chars[i..], radix, max);
                out.push(decoded);
                i += taken;
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str, vars: &Vars) -> Vec<String> {
        let mut subs = Vec::new();
        lex::lex(src)
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w),
                _ => None,
            })
            .flat_map(|w| expand(w, vars, &mut subs))
            .map(|a| a.text)
            .collect()
    }

    #[test]
    fn known_variables_expand_and_split() {
        let mut vars = Vars::new();
        vars.insert("X".into(), "rm -rf".into());
        assert_eq!(texts("$X /tmp", &vars), ["rm", "-rf", "/tmp"]);
        assert_eq!(texts("\"$X\"", &vars), ["rm -rf"]);
        assert_eq!(texts("$HOME/.env", &vars), ["$HOME/.env"]);
        assert_eq!(texts("${RM:-rm} -r", &vars), ["rm", "-r"]);
    }

    #[test]
    fn known_substitutions_are_evaluated() {
        let vars = Vars::new();
        assert_eq!(texts("$(echo rm) -rf", &vars), ["rm", "-rf"]);
        assert_eq!(texts("`which rm` -rf", &vars), ["rm", "-rf"]);
        assert_eq!(texts("$(printf '%s' r m)", &vars), ["rm"]);
        assert_eq!(texts("$(date)", &vars), ["$(…)"]);
    }

    #[test]
    fn braces_expand_only_unquoted() {
        let vars = Vars::new();
        assert_eq!(texts(".e{n,}v", &vars), [".env", ".ev"]);
        assert_eq!(texts("'{a,b}'", &vars), ["{a,b}"]);
        assert_eq!(texts("{}", &vars), ["{}"]);
        assert_eq!(texts("${X}", &vars), ["$X"]);
    }

    #[test]
    fn globs_are_flagged_when_unquoted() {
        let mut subs = Vec::new();
        let vars = Vars::new();
        let lexed = lex::lex(".env* '*.key'");
        let args: Vec<Arg> = lexed
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(expand(w, &vars, &mut subs)),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(args[0].glob);
        assert!(!args[1].glob);
    }

    fn argv(command: &str) -> Vec<String> {
        command.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn downloads_and_where_they_go() {
        let file = |f: &str| Some(Fetch::File(f.to_string()));
        assert_eq!(
            fetch(&argv("curl -fsSL https://x/i.sh")),
            Some(Fetch::Stdout)
        );
        assert_eq!(
            fetch(&argv("curl -o - https://x/i.sh")),
            Some(Fetch::Stdout)
        );
        assert_eq!(fetch(&argv("curl -fsSLo i.sh https://x/a")), file("i.sh"));
        assert_eq!(
            fetch(&argv("curl --output=/tmp/a.sh https://x")),
            file("/tmp/a.sh")
        );
        assert_eq!(
            fetch(&argv("curl -LO https://x/get.py?v=1")),
            file("get.py")
        );
        assert_eq!(
            fetch(&argv("curl -H X:1 -X POST -O https://x/d/s.sh")),
            file("s.sh")
        );
        assert_eq!(fetch(&argv("wget -qO- https://x")), Some(Fetch::Stdout));
        assert_eq!(fetch(&argv("wget -O - https://x")), Some(Fetch::Stdout));
        assert_eq!(fetch(&argv("wget https://x/s.sh")), file("s.sh"));
        assert_eq!(fetch(&argv("wget https://x")), file("index.html"));
        assert_eq!(fetch(&argv("wget -O a.sh https://x/s.sh")), file("a.sh"));
        assert_eq!(
            fetch(&argv("sudo timeout 9 curl https://x")),
            Some(Fetch::Stdout)
        );
        assert_eq!(fetch(&argv("http --download https://x/a")), None);
        assert_eq!(fetch(&argv("cat x")), None);
    }

    #[test]
    fn fetched_text_flows_through_filters_and_substitutions() {
        let source = Feed::Fetched("curl https://x".to_string());
        assert_eq!(printed(&argv("curl https://x"), None), Some(source.clone()));
        assert_eq!(
            printed(&argv("gunzip"), Some(&source)),
            Some(source.clone())
        );
        assert_eq!(
            printed(&argv("tee log"), Some(&source)),
            Some(source.clone())
        );
        assert_eq!(
            printed(&argv("echo hi"), Some(&source)),
            Some(Feed::Text("hi\n".to_string()))
        );
        let vars = Vars::new();
        assert_eq!(
            texts("\"$(curl -fsSL https://x 2>/dev/null)\"", &vars),
            [FETCHED]
        );
        assert_eq!(texts("<(wget -qO- https://x)", &vars), [FETCHED]);
        assert_eq!(texts("$(curl -o f https://x)", &vars), ["$(…)"]);
    }

    #[test]
    fn printf_and_escapes() {
        assert_eq!(
            printf("%s -rf %s\\n", &["rm".into(), "/".into()]),
            "rm -rf /\n"
        );
        assert_eq!(unescape("a\\x41\\0102"), "aAB");
    }
}
