//! Robustness: random bytes, random text and mutated tool calls go through the same code
//! as `exec` (bytes → `wire::parse_call` → `Registry::execute`), the argument repair and the
//! flag parser, in-process. Every input must give a JSON result, never a panic.
//!
//! Valid calls are generated from each registered tool's schema, so a new tool is fuzzed by
//! registering it; then fields are removed, retyped or nulled, unknown keys added, and the
//! text truncated, fenced, given trailing commas, huge numbers, deep nesting or random
//! unicode. Side effects are confined: the session runs in a temporary directory behind a
//! gate that refuses shell and network permissions, paths outside that directory, and the
//! `question` tool (it could wait on a terminal).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use tinytool::cli;
use tinytool::registry::{Arguments, CallResult, Registry, ToolCall};
use tinytool::repair;
use tinytool::session::{CallContext, PermissionGate, Refusal, Session};
use tinytool::tool::Access;

/// Cases per property: enough to find shallow panics, few enough to stay a few seconds in
/// a debug build on a 2-core machine.
const CASES: u32 = 1000;

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: CASES,
        // A failure is shrunk and printed; it becomes a named regression test, not a file.
        failure_persistence: None,
        ..Config::default()
    })
}

/// Allows what cannot reach beyond the room: no shell, no network, no interactive
/// question, no path outside the directory.
struct Confined {
    dir: PathBuf,
}

impl PermissionGate for Confined {
    fn check(&self, ctx: &CallContext, accesses: &[Access]) -> Result<(), Refusal> {
        let refuse = |why: String| {
            Err(Refusal {
                message: format!("refused by the fuzz gate: {why}"),
                metadata: Map::new(),
            })
        };
        if matches!(ctx.tool, "question" | "webfetch" | "websearch") {
            return refuse(ctx.tool.to_string());
        }
        for access in accesses {
            if access.permission.contains("shell") || access.permission.contains("web") {
                return refuse(access.permission.clone());
            }
            if let Some(path) = &access.path
                && !path.starts_with(&self.dir)
            {
                return refuse(path.display().to_string());
            }
        }
        Ok(())
    }

    fn permits(&self, ctx: &CallContext, access: &Access) -> bool {
        self.check(ctx, std::slice::from_ref(access)).is_ok()
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    session: Session,
    registry: Registry,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    write(&dir, "a.txt", b"alpha\nbeta\n");
    write(&dir, "src/lib.rs", b"fn main() {}\n");
    write(&dir, "bin.dat", &[0u8, 1, 2, 3, 0, 0, 0, 9]);
    write(&dir, "img.png", b"\x89PNG\r\n\x1a\nnot really");
    write(&dir, "nonl.txt", "x".repeat(5000).as_bytes());
    let mut session = Session::new("fuzz", &dir);
    session.gate = Box::new(Confined { dir: dir.clone() });
    Fixture {
        _tmp: tmp,
        session,
        registry: tinytool::tools::builtin(),
    }
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The contract: a result that serializes to a JSON object with the fields of the wire
/// format, and an error when the call failed.
fn assert_json_result(result: &CallResult, input: &dyn std::fmt::Debug) {
    let line = result.to_json_line();
    let value: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("result is not JSON ({e}): {line}\ninput: {input:?}"));
    assert!(value["tool"].is_string(), "{line}");
    assert!(value["output"].is_string(), "{line}");
    assert!(value["is_error"].is_boolean(), "{line}");
    assert!(value["truncated"].is_boolean(), "{line}");
    assert!(value["metadata"].is_object(), "{line}");
    assert!(!line.contains('\n'), "a result is one line");
}

// ---------------------------------------------------------------------------------------
// Generators

/// Text that stresses parsers: random unicode, control characters, quotes and brackets.
fn nasty_text() -> BoxedStrategy<String> {
    prop_oneof![
        any::<String>(),
        "[\\PC\\p{Cc}\"\\\\{}\\[\\],:]{0,40}",
        Just(String::new()),
        Just("\u{0}\u{feff}\u{202e}\u{1F600}".to_string()),
    ]
    .boxed()
}

/// Paths that a read-like tool might get: existing, missing, odd, outside.
fn path_text() -> BoxedStrategy<String> {
    prop_oneof![
        Just("a.txt".to_string()),
        Just("src/lib.rs".to_string()),
        Just("bin.dat".to_string()),
        Just("img.png".to_string()),
        Just("nonl.txt".to_string()),
        Just("src".to_string()),
        Just("missing.txt".to_string()),
        Just("a.tx".to_string()),
        Just("../outside".to_string()),
        Just("/etc/hostname".to_string()),
        Just("~/x".to_string()),
        nasty_text(),
    ]
    .boxed()
}

/// Any JSON value, a few levels deep.
fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        nasty_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,8}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
    .boxed()
}

/// A value that fits a property schema (enum, type, bounds), sometimes at its edges.
fn value_for(name: &str, prop: &Value) -> BoxedStrategy<Value> {
    if let Some(values) = prop.get("enum").and_then(Value::as_array)
        && !values.is_empty()
    {
        return proptest::sample::select(values.clone()).boxed();
    }
    let min = prop.get("minimum").and_then(Value::as_i64).unwrap_or(-5);
    let max = prop.get("maximum").and_then(Value::as_i64).unwrap_or(5_000);
    match prop.get("type").and_then(Value::as_str).unwrap_or("string") {
        "integer" => prop_oneof![
            (min..=max.max(min)).prop_map(Value::from),
            Just(Value::from(min)),
            Just(Value::from(max)),
        ]
        .boxed(),
        "number" => (-1.0e6..1.0e6f64).prop_map(|f| json!(f)).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "array" => {
            let item = prop.get("items").cloned().unwrap_or(json!({}));
            prop::collection::vec(value_for(name, &item).prop_union(any_json().boxed()), 0..3)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => prop::collection::vec(("[a-z_]{1,6}", nasty_text()), 0..3)
            .prop_map(|pairs| {
                Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k, Value::String(v)))
                        .collect(),
                )
            })
            .boxed(),
        _ if name.contains("path") => path_text().prop_map(Value::String).boxed(),
        _ => nasty_text().prop_map(Value::String).boxed(),
    }
}

/// A valid argument object for one tool: every required parameter, some optional ones.
fn valid_args(schema: &Value) -> BoxedStrategy<Map<String, Value>> {
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = tinytool::schema::parameters(schema)
        .into_iter()
        .filter(|(_, r)| *r)
        .map(|(n, _)| n)
        .collect();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .into_iter()
        .map(|(name, prop)| {
            let value = value_for(&name, &prop);
            let key = name.clone();
            let pair = value.prop_map(move |v| Some((key.clone(), v)));
            if required.contains(&name) {
                pair.boxed()
            } else {
                prop_oneof![Just(None), pair].boxed()
            }
        })
        .collect();
    fields
        .prop_map(|pairs| pairs.into_iter().flatten().collect())
        .boxed()
}

/// A structural change of an argument object.
#[derive(Debug, Clone)]
enum Mutation {
    Keep,
    Remove(usize),
    Retype(usize, Value),
    Null(usize),
    Unknown(String, Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => Just(Mutation::Keep),
        1 => any::<usize>().prop_map(Mutation::Remove),
        2 => (any::<usize>(), any_json()).prop_map(|(i, v)| Mutation::Retype(i, v)),
        1 => any::<usize>().prop_map(Mutation::Null),
        1 => ("[a-z_]{1,10}", any_json()).prop_map(|(k, v)| Mutation::Unknown(k, v)),
    ]
}

fn mutate(mut args: Map<String, Value>, mutation: &Mutation) -> Map<String, Value> {
    let key_at = |args: &Map<String, Value>, i: usize| {
        (!args.is_empty())
            .then(|| args.keys().nth(i % args.len()).cloned())
            .flatten()
    };
    match mutation {
        Mutation::Keep => {}
        Mutation::Remove(i) => {
            if let Some(key) = key_at(&args, *i) {
                args.remove(&key);
            }
        }
        Mutation::Retype(i, value) => {
            if let Some(key) = key_at(&args, *i) {
                args.insert(key, value.clone());
            }
        }
        Mutation::Null(i) => {
            if let Some(key) = key_at(&args, *i) {
                args.insert(key, Value::Null);
            }
        }
        Mutation::Unknown(key, value) => {
            args.insert(key.clone(), value.clone());
        }
    }
    args
}

/// The call envelopes `exec` accepts.
#[derive(Debug, Clone, Copy)]
enum Shape {
    OpenAiString,
    OpenAiObject,
    Nested,
    Anthropic,
    Gemini,
}

fn envelope(shape: Shape, name: &str, args: &Map<String, Value>, id: &Value) -> String {
    let args = Value::Object(args.clone());
    match shape {
        Shape::OpenAiString => json!({"id": id, "name": name, "arguments": args.to_string()}),
        Shape::OpenAiObject => json!({"id": id, "name": name, "arguments": args}),
        Shape::Nested => {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        }
        Shape::Anthropic => json!({"type": "tool_use", "id": id, "name": name, "input": args}),
        Shape::Gemini => json!({"functionCall": {"name": name, "args": args}}),
    }
    .to_string()
}

/// A change of the call's text.
#[derive(Debug, Clone)]
enum TextMutation {
    Keep,
    Truncate(usize),
    Insert(usize, String),
    TrailingCommas,
    Fence,
    HugeNumber(usize, &'static str),
    DeepNesting(usize, usize),
}

fn text_mutation() -> impl Strategy<Value = TextMutation> {
    let huge = proptest::sample::select(vec![
        "1e999",
        "-1e999",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1.7976931348623157e308",
        "0.0000000000000000000000000001",
        "-0",
    ]);
    prop_oneof![
        3 => Just(TextMutation::Keep),
        1 => any::<usize>().prop_map(TextMutation::Truncate),
        1 => (any::<usize>(), nasty_text()).prop_map(|(i, s)| TextMutation::Insert(i, s)),
        1 => Just(TextMutation::TrailingCommas),
        1 => Just(TextMutation::Fence),
        1 => (any::<usize>(), huge).prop_map(|(i, h)| TextMutation::HugeNumber(i, h)),
        1 => (any::<usize>(), 1usize..400).prop_map(|(i, d)| TextMutation::DeepNesting(i, d)),
    ]
}

/// The char boundary nearest below `i % (len + 1)`.
fn boundary(text: &str, i: usize) -> usize {
    let mut at = i % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn mutate_text(text: &str, mutation: &TextMutation) -> String {
    match mutation {
        TextMutation::Keep => text.to_string(),
        TextMutation::Truncate(i) => text[..boundary(text, *i)].to_string(),
        TextMutation::Insert(i, s) => {
            let at = boundary(text, *i);
            format!("{}{s}{}", &text[..at], &text[at..])
        }
        TextMutation::TrailingCommas => text.replace('}', ",}").replace(']', ",]"),
        TextMutation::Fence => format!("```json\n{text}\n```"),
        TextMutation::HugeNumber(i, number) => replace_value_at(text, *i, number),
        TextMutation::DeepNesting(i, depth) => {
            let nested = format!("{}{}", "[".repeat(*depth), "]".repeat(*depth));
            replace_value_at(text, *i, &nested)
        }
    }
}

/// Puts `raw` after the n-th `:` of the text (a value position in an object), or wraps
/// the text when there is none.
fn replace_value_at(text: &str, n: usize, raw: &str) -> String {
    let colons: Vec<usize> = text.match_indices(':').map(|(i, _)| i).collect();
    match colons.get(n % colons.len().max(1)) {
        Some(&at) => format!("{}{raw},\"_\":{}", &text[..=at], &text[at + 1..]),
        None => format!("{{\"x\":{raw}}}"),
    }
}

/// One generated exec input: a tool's valid call, mutated structurally and textually.
fn mutated_call(registry: &Registry) -> BoxedStrategy<String> {
    let tools: Vec<(String, Value)> = registry
        .all()
        .iter()
        .map(|def| (def.name.to_string(), (def.schema)()))
        .collect();
    let names: Vec<String> = tools.iter().map(|(n, _)| n.clone()).collect();
    let per_tool: Vec<BoxedStrategy<(String, Map<String, Value>)>> = tools
        .into_iter()
        .map(|(name, schema)| {
            valid_args(&schema)
                .prop_map(move |args| (name.clone(), args))
                .boxed()
        })
        .collect();
    let call = proptest::strategy::Union::new(per_tool);
    let shape = proptest::sample::select(vec![
        Shape::OpenAiString,
        Shape::OpenAiObject,
        Shape::Nested,
        Shape::Anthropic,
        Shape::Gemini,
    ]);
    let name = prop_oneof![
        8 => Just(None),
        1 => proptest::sample::select(names).prop_map(|n| Some(n.to_uppercase())),
        1 => nasty_text().prop_map(Some),
    ];
    let id = prop_oneof![
        Just(json!("call_1")),
        any::<i64>().prop_map(Value::from),
        any_json(),
    ];
    // Half the time the text mutation hits the arguments string (which the registry
    // repairs or routes to `invalid`), half the time the whole envelope.
    (
        call,
        shape,
        name,
        id,
        mutation(),
        text_mutation(),
        any::<bool>(),
    )
        .prop_map(|((tool, args), shape, rename, id, m, tm, in_arguments)| {
            let name = rename.unwrap_or(tool);
            let args = mutate(args, &m);
            if in_arguments {
                let arguments = mutate_text(&Value::Object(args).to_string(), &tm);
                json!({"id": id, "name": name, "arguments": arguments}).to_string()
            } else {
                mutate_text(&envelope(shape, &name, &args, &id), &tm)
            }
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------
// Properties

#[test]
fn random_bytes_to_exec_give_a_json_result() {
    let fx = fixture();
    let inputs = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        any::<String>().prop_map(String::into_bytes),
        any_json().prop_map(|v| v.to_string().into_bytes()),
    ];
    runner()
        .run(&inputs, |bytes| {
            let result = cli::call_line(&fx.registry, &fx.session, &bytes);
            assert_json_result(&result, &String::from_utf8_lossy(&bytes));
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_calls_to_exec_give_a_json_result() {
    let fx = fixture();
    runner()
        .run(&mutated_call(&fx.registry), |text| {
            let result = cli::call_line(&fx.registry, &fx.session, text.as_bytes());
            assert_json_result(&result, &text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_argument_text_repairs_or_routes_to_invalid() {
    let fx = fixture();
    let schema_of_read = (fx.registry.get("read").unwrap().schema)();
    let text = (valid_args(&schema_of_read), mutation(), text_mutation())
        .prop_map(|(args, m, tm)| mutate_text(&Value::Object(mutate(args, &m)).to_string(), &tm));
    let inputs = prop_oneof![text.boxed(), nasty_text()];
    runner()
        .run(&inputs, |text| {
            // The repair function alone: a value or a message, nothing else.
            if let Err(message) = repair::parse_arguments(&text) {
                assert!(!message.is_empty());
            }
            // And through the registry, as OpenAI string arguments.
            let call = ToolCall {
                id: None,
                name: "read".to_string(),
                arguments: Arguments::Text(text.clone()),
            };
            let result = fx.registry.execute(&fx.session, call);
            assert_json_result(&result, &text);
            if repair::parse_arguments(&text).is_err() {
                assert_eq!(result.tool, "invalid", "{text:?}");
                assert!(result.is_error && result.output.contains("\"read\""));
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_command_lines_never_panic_the_flag_parser() {
    let fx = fixture();
    let cmd = cli::command();
    let mut words: Vec<String> = [
        "exec",
        "tools",
        "completions",
        "help",
        "--jsonl",
        "--format",
    ]
    .map(String::from)
    .to_vec();
    for arg in cmd.get_arguments() {
        words.extend(arg.get_long().map(|l| format!("--{l}")));
    }
    for sub in cmd.get_subcommands() {
        words.push(sub.get_name().to_string());
        for arg in sub.get_arguments() {
            words.extend(arg.get_long().map(|l| format!("--{l}")));
        }
    }
    let token = prop_oneof![
        4 => proptest::sample::select(words),
        2 => nasty_text(),
        1 => "--[a-z-]{1,10}(=[\\PC]{0,8})?",
        1 => proptest::sample::select(vec!["-", "--", "-1", "1e999", "[]", "{}", "[1,", "true", "=", "-h"])
            .prop_map(String::from),
        1 => any_json().prop_map(|v| v.to_string()),
    ];
    let args = prop::collection::vec(token, 0..8);
    runner()
        .run(&args, |args| {
            let argv: Vec<OsString> = std::iter::once("tinytool".to_string())
                .chain(args.iter().cloned())
                .map(OsString::from)
                .collect();
            match cmd.clone().try_get_matches_from(argv) {
                Err(err) => {
                    // Rendering the error (what the user sees) must not panic either.
                    let _ = err.render().to_string();
                }
                Ok(matches) => {
                    if let Some((name, sub)) = matches.subcommand()
                        && let Some(def) = fx.registry.get(name)
                    {
                        // A direct call without stdin: the flags are the arguments.
                        if let Ok(flags) = cli::flag_values(def, sub) {
                            let call = ToolCall {
                                id: None,
                                name: name.to_string(),
                                arguments: Arguments::Value(Value::Object(flags)),
                            };
                            let result = fx.registry.execute(&fx.session, call);
                            assert_json_result(&result, &args);
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
