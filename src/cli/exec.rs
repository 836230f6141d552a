//! `tinytool exec [--jsonl]`: registry dispatch of tool calls in the providers' shapes (see
//! `wire`). Without `--jsonl`, standard input holds one call and the exit status is the
//! call's. With `--jsonl`, each line is a call and each gets one result line, in order,
//! flushed at once; a bad line gets an error result and the stream goes on; the `exit`
//! tool or end of input ends it, with status 0.
//!
//! A result that holds images (an image read, a notebook) carries them once, in `content`,
//! in the shape of the call's envelope (`wire::shape_of`, `media::render`): Anthropic image
//! blocks for a `tool_use`, `input_image` items for a Responses `function_call`,
//! `inlineData` parts for Gemini, `image_url` parts for Chat Completions. Its `output` has
//! a placeholder where each image stands, never the image's data.

use std::io::Read;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::Output;
use crate::exit::ExitStatus;
use crate::media::Shape;
use crate::registry::{CallResult, Registry};
use crate::session::Session;
use crate::wire;

/// The `exec` subcommand.
pub fn command() -> Command {
    Command::new("exec")
        .about("Run tool calls given as JSON on standard input")
        .long_about(
            "Run a tool call given as JSON on standard input, in the OpenAI shape \
             ({\"id\", \"name\", \"arguments\"} or {\"type\": \"function\", \"function\": {...}}) \
             or the Anthropic shape ({\"type\": \"tool_use\", \"id\", \"name\", \"input\"}), \
             the Responses API's {\"type\": \"function_call\", \"call_id\", ...} or Gemini's \
             {\"functionCall\": {\"id\", \"name\", \"args\"}} (or function_call), and print its \
             result. A result with images (an image or notebook read) carries them once, in \
             \"content\", in the shape of the call's provider (Anthropic image blocks, OpenAI \
             image_url or input_image parts, Gemini inlineData parts); \"output\" then says \
             [image N: ...] where each stands. Arguments sent as a string are repaired when they carry a markdown \
             fence or trailing commas, and decoded when they were encoded twice. Other agents' \
             tool and parameter names are translated (OTHER AGENTS' NAMES in tinytool(1)).",
        )
        .arg(
            Arg::new("jsonl")
                .long("jsonl")
                .action(ArgAction::SetTrue)
                .help(
                    "Read one call per line until end of input (or the exit tool), answering each",
                ),
        )
}

/// Runs `exec`.
pub fn run(
    registry: &Registry,
    session: &Session,
    sub: &ArgMatches,
    out: &mut Output,
) -> ExitStatus {
    if sub.get_flag("jsonl") {
        if out.is_text() {
            // Texts alone would run together, and the stream's status is always 0: nothing
            // would tell where one result ends or whether it failed.
            return super::usage(
                "--text cannot be used with exec --jsonl: each result is one JSON line; \
                 drop --text and read each line's \"output\"",
            );
        }
        return run_stream(registry, session, out);
    }
    let mut input = Vec::new();
    if let Err(err) = std::io::stdin().lock().read_to_end(&mut input) {
        return super::usage(&format!("cannot read the call from standard input: {err}"));
    }
    let (result, shape) = run_line(registry, session, &input);
    out.result_in(&result, shape)
}

fn run_stream(registry: &Registry, session: &Session, out: &mut Output) -> ExitStatus {
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut line = Vec::new();
    loop {
        match wire::read_message(&mut reader, &mut line) {
            Ok(true) => {}
            Ok(false) => break,
            Err(err) => {
                return super::usage(&format!("cannot read calls from standard input: {err}"));
            }
        }
        let (result, shape) = run_line(registry, session, &line);
        out.result_in(&result, shape);
        if out.is_closed() || result.ends_loop() {
            break;
        }
    }
    ExitStatus::Success
}

/// Parses and runs one call given as raw bytes (one `exec` input or `--jsonl` line); input
/// that is not a call gets an error result.
pub fn call_line(registry: &Registry, session: &Session, bytes: &[u8]) -> CallResult {
    run_line(registry, session, bytes).0
}

/// [`call_line`], with the shape the call's envelope names for the result's images.
fn run_line(registry: &Registry, session: &Session, bytes: &[u8]) -> (CallResult, Shape) {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let message = format!("Invalid tool call: the input is not UTF-8 ({err})");
            return (
                CallResult::failure(None, "", message, ExitStatus::Usage),
                Shape::default(),
            );
        }
    };
    match wire::parse_envelope(text) {
        Ok((call, shape)) => (registry.execute(session, call), shape),
        Err((id, message)) => (
            CallResult::failure(id, "", message, ExitStatus::Usage),
            Shape::default(),
        ),
    }
}
