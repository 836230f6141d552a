//! Reading a command's arguments the way its option parser does: short option clusters
//! (`-rf`, `-n5`), long options with `=` or a separate value, `--` ending the options,
//! abbreviated long options, and the split between options and operands.

/// Which options take a value (then the next argument, or the rest of a cluster, is the
/// value and not an operand).
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec<'a> {
    /// Short option letters that take a value.
    pub short: &'a str,
    /// Long option names (without `--`) that take a value.
    pub long: &'a [&'a str],
}

impl<'a> Spec<'a> {
    /// A spec.
    pub const fn new(short: &'a str, long: &'a [&'a str]) -> Self {
        Spec { short, long }
    }
}

/// One parsed argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opt<'a> {
    /// A short option and its value, if it takes one.
    Short(char, Option<&'a str>),
    /// A long option (name without `--`) and its value, if given or taken.
    Long(&'a str, Option<&'a str>),
    /// An operand, with its index in the argument list.
    Operand(usize, &'a str),
}

/// Parses GNU style: options may follow operands; `--` ends options; `-` alone is an
/// operand.
pub fn parse<'a>(args: &'a [String], spec: Spec) -> Vec<Opt<'a>> {
    parse_from(args, spec, false)
}

/// Parses POSIX style: the first operand ends the options (the rest are operands).
pub fn parse_posix<'a>(args: &'a [String], spec: Spec) -> Vec<Opt<'a>> {
    parse_from(args, spec, true)
}

fn parse_from<'a>(args: &'a [String], spec: Spec, posix: bool) -> Vec<Opt<'a>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let arg = args[i].as_str();
        if only_operands || arg == "-" || !arg.starts_with('-') {
            out.push(Opt::Operand(i, arg));
            if posix {
                only_operands = true;
            }
            i += 1;
            continue;
        }
        if arg == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => out.push(Opt::Long(name, Some(value))),
                None if spec.long.contains(&long) => {
                    let value = args.get(i + 1).map(String::as_str);
                    out.push(Opt::Long(long, value));
                    i += 1;
                }
                None => out.push(Opt::Long(long, None)),
            }
            i += 1;
            continue;
        }
        let cluster = &arg[1..];
        let mut consumed_next = false;
        for (k, c) in cluster.char_indices() {
            if spec.short.contains(c) {
                let rest = &cluster[k + c.len_utf8()..];
                let value = if rest.is_empty() {
                    consumed_next = true;
                    args.get(i + 1).map(String::as_str)
                } else {
                    Some(rest)
                };
                out.push(Opt::Short(c, value));
                break;
            }
            out.push(Opt::Short(c, None));
        }
        i += if consumed_next { 2 } else { 1 };
    }
    out
}

/// The operands of a parse.
pub fn operands<'a>(opts: &[Opt<'a>]) -> Vec<&'a str> {
    opts.iter()
        .filter_map(|o| match o {
            Opt::Operand(_, s) => Some(*s),
            _ => None,
        })
        .collect()
}

/// Whether a short option letter was given.
pub fn has_short(opts: &[Opt], letter: char) -> bool {
    opts.iter()
        .any(|o| matches!(o, Opt::Short(c, _) if *c == letter))
}

/// Whether a long option was given, spelled out or abbreviated to at least `min` letters
/// (tools built on getopt_long and git's parser accept unambiguous prefixes).
pub fn has_long(opts: &[Opt], full: &str, min: usize) -> bool {
    opts.iter()
        .any(|o| matches!(o, Opt::Long(name, _) if long_is(name, full, min)))
}

/// The value of a short or long option, the last one given.
pub fn value<'a>(opts: &[Opt<'a>], short: Option<char>, long: &str) -> Option<&'a str> {
    opts.iter()
        .filter_map(|o| match o {
            Opt::Short(c, v) if Some(*c) == short => *v,
            Opt::Long(name, v) if *name == long => *v,
            _ => None,
        })
        .next_back()
}

/// Whether `given` (without dashes) names the long option `full`, exactly or as a prefix
/// of at least `min` characters.
fn long_is(given: &str, full: &str, min: usize) -> bool {
    given == full || (given.len() >= min && full.starts_with(given))
}

/// The index of the first operand under POSIX parsing, i.e. where a wrapped command
/// starts.
pub fn first_operand(args: &[String], spec: Spec) -> Option<usize> {
    parse_posix(args, spec).iter().find_map(|o| match o {
        Opt::Operand(i, _) => Some(*i),
        _ => None,
    })
}

/// The name a command is looked up by: the last path component (`/bin/rm` is `rm`).
pub fn command_name(word: &str) -> &str {
    let trimmed = word.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn clusters_values_and_operands() {
        let args = strings(&[
            "-rfv",
            "-n5",
            "--color=auto",
            "--depth",
            "2",
            "x",
            "--",
            "-y",
        ]);
        let opts = parse(&args, Spec::new("n", &["depth"]));
        assert!(has_short(&opts, 'r') && has_short(&opts, 'f') && has_short(&opts, 'v'));
        assert_eq!(value(&opts, Some('n'), "lines"), Some("5"));
        assert_eq!(value(&opts, None, "depth"), Some("2"));
        assert_eq!(operands(&opts), ["x", "-y"]);
    }

    #[test]
    fn posix_parsing_stops_at_the_first_operand() {
        let args = strings(&["-u", "root", "rm", "-rf", "x"]);
        assert_eq!(first_operand(&args, Spec::new("u", &[])), Some(2));
    }

    #[test]
    fn abbreviations_and_names() {
        assert!(long_is("har", "hard", 3));
        assert!(!long_is("ha", "hard", 3));
        assert_eq!(command_name("/usr/bin/rm"), "rm");
        assert_eq!(command_name("rm"), "rm");
    }
}
