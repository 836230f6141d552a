//! `question`: asks the user.
//!
//! A command-line program has nobody in the conversation, so the answer comes from, in
//! order: the answers file (`--answers FILE` / `TINYTOOL_ANSWERS`: a JSON list, used in
//! order per session, the count used stored in the session state), the MCP client through
//! elicitation (when it offers it), the controlling terminal (options numbered), or nowhere — then the call fails and says how to supply an
//! answer. `question.asked` is published before asking.

use std::io::{BufRead, BufReader, Write};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::{CallContext, Session};
use crate::tool::{Needs, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `question` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "question",
        summary: "Ask the user a question",
        description: "Ask the user a question and wait for the answer. Give options when the \
            answer is one of a few choices.",
        permission: "read",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: Some(Needs {
            doc: "question needs someone to answer: an answers file (`--answers FILE` or TINYTOOL_ANSWERS), an \
                MCP client that offers elicitation, or a controlling terminal.",
            missing: nobody_to_ask,
        }),
        after_changes: None,
        doc: ToolDoc {
            output: "The answer text. metadata: source (answers file or terminal), answer.",
            errors: "With no answers file entry left and no terminal: a message telling the model that \
                no user is reachable and to proceed with its best judgement or stop; stderr says \
                how to supply answers (`--answers FILE` or `TINYTOOL_ANSWERS`, a JSON list of strings). \
                An answers file that is not a JSON list is an error naming the file.",
            examples: &[
                (
                    "Ask on the terminal",
                    "tinytool question --question 'Deploy now?' --options '[\"yes\",\"no\"]'",
                ),
                (
                    "Answer from a file",
                    "echo '[\"yes\"]' > answers.json && tinytool --answers answers.json question --question 'Deploy now?'",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "question": {"type": "string", "description": "The question to ask."},
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Choices to offer (optional)."
            }
        }),
        &["question"],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionArgs {
    question: String,
    #[serde(default)]
    options: Vec<String>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: QuestionArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.question.trim().is_empty() {
        return Ok(ToolOutput::error(
            "question is required: say what you want to ask",
        ));
    }
    let id = crate::events::new_id("que");
    let mut asked = json!({"question": args.question});
    if !args.options.is_empty() {
        let labels: Vec<Value> = args.options.iter().map(|o| json!({"label": o})).collect();
        asked["options"] = Value::Array(labels);
    }
    let mut props = Map::new();
    props.insert("id".into(), Value::String(id));
    props.insert("questions".into(), Value::Array(vec![asked]));
    ctx.publish("question.asked", props);

    if let Some(path) = &ctx.session.answers {
        match answer_from_file(ctx, path)? {
            Ok(Some(answer)) => return Ok(answered(answer, "answers file")),
            Ok(None) => {}
            Err(message) => return Ok(ToolOutput::error(message)),
        }
    }
    if let Some(asker) = &ctx.session.asker {
        match asker.ask(&args.question, &args.options) {
            Ok(Some(answer)) => return Ok(answered(answer, "client")),
            Ok(None) => {}
            Err(message) => return Ok(ToolOutput::error(message)),
        }
    }
    if let Some(answer) = ask_terminal(&args)? {
        return Ok(answered(answer, "terminal"));
    }
    // The hint on supplying answers is for the person running tinytool (stderr and the
    // man page); the model cannot pass flags, so its message says what it can do.
    eprintln!(
        "tinytool: question {:?} had no answer ({}); supply answers with --answers FILE \
         (or TINYTOOL_ANSWERS): a JSON list of strings, used in order",
        args.question,
        match &ctx.session.answers {
            Some(path) => format!("every answer in {} has been used", path.display()),
            None => "no terminal and no answers file".to_string(),
        }
    );
    Ok(ToolOutput::error(format!(
        "No user is reachable to answer the question {:?}. Proceed with your best judgement \
         (say which assumption you made), or stop if you cannot continue safely.",
        args.question
    )))
}

/// Why nobody could answer a question in `session`: no answers file, no client that
/// offers elicitation, no terminal. (An answers file whose answers are used up still
/// counts: it says so when asked, and may be refilled.)
fn nobody_to_ask(session: &Session) -> Option<String> {
    let client = session
        .asker
        .as_ref()
        .is_some_and(|asker| asker.reachable());
    (session.answers.is_none() && !client && !terminal()).then(|| {
        "nobody can answer: there is no terminal, no answers file (--answers FILE or \
         TINYTOOL_ANSWERS) and no MCP client offering elicitation"
            .to_string()
    })
}

/// Whether the process has a controlling terminal to ask on.
fn terminal() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

fn answered(answer: String, source: &str) -> ToolOutput {
    ToolOutput::text(answer.clone())
        .with("source", source)
        .with("answer", answer)
}

/// The session's next answer from the file; `Ok(Ok(None))` when they are used up, and
/// `Ok(Err(message))` when the file is unusable.
fn answer_from_file(
    ctx: &CallContext,
    path: &std::path::Path,
) -> anyhow::Result<Result<Option<String>, String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            return Ok(Err(format!(
                "cannot read the answers file {}: {err}",
                path.display()
            )));
        }
    };
    let answers: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(answers)) => answers,
        Ok(_) | Err(_) => {
            return Ok(Err(format!(
                "the answers file {} must hold a JSON list of answers, e.g. [\"yes\", \"blue\"]",
                path.display()
            )));
        }
    };
    let session = &ctx.session.id;
    let index = ctx
        .session
        .state
        .write(|store| store.take_answer_index(session))?;
    match answers.get(index as usize) {
        Some(Value::String(answer)) => Ok(Ok(Some(answer.clone()))),
        Some(other) => Ok(Ok(Some(other.to_string()))),
        None => {
            ctx.session
                .state
                .write(|store| store.untake_answer_index(session))?;
            Ok(Ok(None))
        }
    }
}

/// Asks on the controlling terminal; `None` when there is none.
fn ask_terminal(args: &QuestionArgs) -> anyhow::Result<Option<String>> {
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Ok(None);
    };
    let mut writer = &tty;
    writeln!(writer, "{}", args.question)?;
    for (i, option) in args.options.iter().enumerate() {
        writeln!(writer, "  {}. {option}", i + 1)?;
    }
    write!(writer, "> ")?;
    writer.flush()?;
    let mut line = String::new();
    if BufReader::new(&tty).read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let line = line.trim().to_string();
    let chosen = line
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| args.options.get(i).cloned());
    Ok(Some(chosen.unwrap_or(line)))
}
