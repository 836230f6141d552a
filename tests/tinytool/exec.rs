//! `exec` and `exec --jsonl`: call shapes, ids, repair, routing to `invalid`, streams.

use serde_json::json;

use crate::util::Room;

fn room_with_file() -> Room {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    room
}

#[test]
fn openai_flat_nested_and_anthropic_shapes_run_the_same_call() {
    let room = room_with_file();
    let flat = room
        .exec(json!({"id": "call_1", "name": "read", "arguments": "{\"file_path\":\"a.txt\"}"}));
    let nested = room.exec(json!({"id": "call_2", "type": "function",
        "function": {"name": "read", "arguments": {"file_path": "a.txt"}}}));
    let anthropic = room.exec(json!({"type": "tool_use", "id": "toolu_1", "name": "read",
        "input": {"file_path": "a.txt"}}));
    for (run, id) in [(flat, "call_1"), (nested, "call_2"), (anthropic, "toolu_1")] {
        assert_eq!(run.code, 0);
        let result = run.json();
        assert_eq!(result["id"], id);
        assert_eq!(result["output"], "1\thello\n");
    }
}

#[test]
fn results_without_an_id_leave_it_out() {
    let room = room_with_file();
    let result = room
        .exec(json!({"name": "read", "arguments": {"file_path": "a.txt"}}))
        .json();
    assert!(result.get("id").is_none());
    crate::snapshot!("exec_result_shape", result);
}

#[test]
fn fenced_arguments_with_a_trailing_comma_are_repaired() {
    let room = room_with_file();
    let args = "```json\n{\"file_path\": \"a.txt\",}\n```";
    let run = room.exec(json!({"id": "c", "name": "read", "arguments": args}));
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(result["output"], "1\thello\n");
    assert_eq!(
        result["metadata"]["repairs"],
        json!(["stripped a markdown code fence", "removed trailing commas"])
    );
}

#[test]
fn garbage_arguments_go_to_invalid_naming_the_tool() {
    let room = room_with_file();
    let run = room.exec(json!({"id": "c", "name": "read", "arguments": "{\"file_path\": \"a.txt"}));
    assert_eq!(run.code, 1);
    let result = run.json();
    assert_eq!(result["tool"], "invalid");
    assert_eq!(result["id"], "c");
    assert_eq!(result["is_error"], true);
    let out = result["output"].as_str().unwrap();
    assert!(
        out.starts_with("Tool call to \"read\" failed: the arguments were not valid JSON."),
        "{out}"
    );
    assert!(out.contains("Please retry"));
}

#[test]
fn empty_arguments_are_an_empty_object() {
    let room = room_with_file();
    let run = room.exec(json!({"name": "read", "arguments": ""}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Invalid arguments: missing required parameter `file_path`"
    );
}

#[test]
fn unknown_tools_and_unknown_parameters() {
    let room = room_with_file();
    let run = room.exec(json!({"name": "nosuchtool", "arguments": {}}));
    assert_eq!(run.code, 2);
    assert_eq!(
        run.output(),
        "Unknown tool: nosuchtool. Available tools: read, write, edit, apply_patch, bash, grep, \
         glob, webfetch, todowrite, report_findings, monitor, notepad, plan_enter, plan_exit, \
         exit, checkpoint, diagnostics."
    );
    let run = room.exec(json!({"name": "read", "arguments": {"pth": "a.txt"}}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Invalid arguments: unknown parameter \"pth\" (valid parameters are file_path, offset, limit, char_offset); missing required parameter `file_path`"
    );
}

#[test]
fn messages_that_quote_huge_input_are_previewed_too() {
    let room = room_with_file();
    let huge = "k".repeat(200_000);
    let run = room.exec(json!({"name": huge, "arguments": {}}));
    assert_eq!(run.code, 2);
    assert!(
        run.output().starts_with(&format!(
            "Unknown tool: {}…. Available tools: read,",
            &huge[..200]
        )),
        "{}",
        &run.output()[..300]
    );
    let calls = [
        json!({"name": "read", "arguments": {"file_path": "a.txt", huge.clone(): 1}}),
        json!({"name": "read", "arguments": {"file_path": "a.txt", "limit": huge}}),
    ];
    for call in calls {
        let run = room.exec(call);
        let result = run.json();
        assert!(run.stdout.len() < 60_000, "{} bytes", run.stdout.len());
        assert_eq!(result["truncated"], true);
        assert_eq!(result["is_error"], true);
    }
}

#[test]
fn null_optional_parameters_are_absent() {
    let room = room_with_file();
    let run = room.exec(
        json!({"name": "read", "arguments": {"file_path": "a.txt", "offset": null, "limit": null}}),
    );
    assert_eq!(run.code, 0);
}

#[test]
fn a_malformed_envelope_is_a_usage_error_with_json() {
    let room = room_with_file();
    let run = room.run(&["exec"], Some("this is not json"));
    assert_eq!(run.code, 2);
    assert!(run.output().starts_with("Invalid tool call"));
}

#[test]
fn jsonl_refuses_text_mode() {
    let room = room_with_file();
    let call = json!({"name": "read", "arguments": {"file_path": "a.txt"}}).to_string();
    let run = room.run(&["--text", "exec", "--jsonl"], Some(&call));
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--text cannot be used with exec --jsonl"),
        "{run:?}"
    );
}

#[test]
fn jsonl_answers_every_line_in_order_even_a_malformed_one() {
    let room = room_with_file();
    let mut input = String::new();
    for i in 0..1000 {
        if i == 500 {
            input.push_str("{oops\n");
        } else {
            input.push_str(&json!({"id": format!("c{i}"), "name": "read", "arguments": {"file_path": "a.txt"}}).to_string());
            input.push('\n');
        }
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    assert_eq!(run.code, 0);
    let lines = run.lines();
    assert_eq!(lines.len(), 1000);
    for (i, line) in lines.iter().enumerate() {
        if i == 500 {
            assert_eq!(line["is_error"], true);
            assert!(
                line["output"]
                    .as_str()
                    .unwrap()
                    .starts_with("Invalid tool call")
            );
        } else {
            assert_eq!(line["id"], format!("c{i}"));
            assert_eq!(line["output"], "1\thello\n");
        }
    }
}

#[test]
fn the_exit_tool_ends_a_stream() {
    let room = room_with_file();
    let input = [
        json!({"id": 1, "name": "read", "arguments": {"file_path": "a.txt"}}),
        json!({"id": 2, "name": "exit", "arguments": {"reason": "done"}}),
        json!({"id": 3, "name": "read", "arguments": {"file_path": "a.txt"}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    let lines = run.lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["output"], "Exiting: done");
    assert_eq!(lines[0]["id"], 1);
}

#[test]
fn a_65_kb_nested_default_is_refused_and_the_stream_survives() {
    let room = room_with_file();
    let mut nested = String::from("x");
    while nested.len() < 65_000 {
        nested = format!("${{a:-{nested}}}");
    }
    let mut input = String::new();
    for (id, name, arguments) in [
        ("c1", "bash", json!({"command": format!("echo {nested}")})),
        (
            "c2",
            "monitor",
            json!({"command": format!("echo {nested}")}),
        ),
        ("c3", "read", json!({"file_path": "a.txt"})),
    ] {
        input.push_str(&json!({"id": id, "name": name, "arguments": arguments}).to_string());
        input.push('\n');
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    let lines = run.lines();
    assert_eq!(lines.len(), 3, "{run:?}");
    for refused in &lines[..2] {
        assert_eq!(refused["is_error"], true);
        let reason = refused["metadata"]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("too complex to judge"), "{reason}");
    }
    assert_eq!(lines[2]["is_error"], false, "{}", lines[2]);
}

#[test]
fn a_responses_function_call_item_is_answered_with_its_call_id() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    let run = room.exec(serde_json::json!({
        "type": "function_call", "id": "fc_123", "call_id": "call_abc",
        "name": "read", "arguments": "{\"file_path\":\"a.txt\"}"
    }));
    assert_eq!(run.json()["id"], "call_abc");
    let gemini = room.exec(serde_json::json!({
        "function_call": {"name": "read", "args": {"file_path": "a.txt"}}
    }));
    assert_eq!(gemini.json()["output"], "1\tx\n");
}

/// Each SDK's tool call as it serializes it, on one `exec --jsonl` stream: the name, the
/// arguments and the id of every one come back in its result.
#[test]
fn every_sdk_call_shape_keeps_its_name_arguments_and_id() {
    let room = Room::new();
    room.write("a.txt", "first\nsecond\n");
    let args = json!({"file_path": "a.txt", "limit": 1});
    let text = args.to_string();
    let shapes: Vec<(&str, serde_json::Value, serde_json::Value)> = vec![
        (
            "OpenAI Chat Completions message.tool_calls[i]",
            json!({"id": "call_chat", "type": "function", "function": {"name": "read", "arguments": text}}),
            json!("call_chat"),
        ),
        (
            "OpenAI Responses output item (function_call)",
            json!({"type": "function_call", "id": "fc_item", "call_id": "call_resp", "name": "read",
                "arguments": text, "status": "completed"}),
            json!("call_resp"),
        ),
        (
            "OpenAI flat (Agents SDK, Realtime)",
            json!({"id": "call_flat", "name": "read", "arguments": text}),
            json!("call_flat"),
        ),
        (
            "Anthropic content block (tool_use)",
            json!({"type": "tool_use", "id": "toolu_01A", "name": "read", "input": args, "caller": null}),
            json!("toolu_01A"),
        ),
        (
            "Gemini REST / JavaScript Part",
            json!({"functionCall": {"id": "gem-rest", "name": "read", "args": args}, "thoughtSignature": "c2ln"}),
            json!("gem-rest"),
        ),
        (
            "Gemini Python Part.model_dump() (snake_case, unset fields null)",
            json!({"video_metadata": null, "thought": null, "inline_data": null, "file_data": null,
                "thought_signature": null, "function_call": {"id": "gem-py", "args": args, "name": "read"},
                "code_execution_result": null, "executable_code": null, "function_response": null,
                "text": null}),
            json!("gem-py"),
        ),
        (
            "Gemini Python Part.model_dump(by_alias=True, exclude_none=True)",
            json!({"functionCall": {"id": "gem-alias", "args": args, "name": "read"}}),
            json!("gem-alias"),
        ),
        (
            "Gemini FunctionCall alone",
            json!({"id": "gem-bare", "name": "read", "args": args}),
            json!("gem-bare"),
        ),
        (
            "a numeric id",
            json!({"id": 7, "name": "read", "arguments": args}),
            json!(7),
        ),
    ];
    let input: String = shapes
        .iter()
        .map(|(_, call, _)| format!("{call}\n"))
        .collect();
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    let results = run.lines();
    assert_eq!(results.len(), shapes.len(), "{}", run.stdout);
    for ((what, _, id), result) in shapes.iter().zip(&results) {
        assert_eq!(&result["id"], id, "{what}");
        assert_eq!(result["tool"], "read", "{what}");
        // The arguments arrived: limit 1 shows one line of two.
        assert_eq!(
            result["output"],
            "1\tfirst\n[lines 1-1 of 2 shown, 1 more lines; continue with offset=1]\n",
            "{what}"
        );
    }
}
