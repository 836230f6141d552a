//! Issue 23: arguments as models trained on other agents send them, and messages a model
//! can act on.

use serde_json::json;

use crate::util::Room;

#[test]
fn todos_in_other_agents_words_are_accepted_and_listed_as_repairs() {
    let room = Room::new();
    let run = room.call(
        "todowrite",
        json!({"todos": [
            {"content": "a", "status": "completed", "priority": "medium"},
            {"content": "b", "status": "cancelled"},
            {"content": "c", "status": "in_progress", "activeForm": "Doing c"},
        ]}),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let repairs = run.json()["metadata"]["repairs"].clone();
    assert_eq!(
        repairs,
        json!([
            "todo[0]: status \"completed\" read as \"done\"",
            "todo[0]: priority \"medium\" read as \"normal\"",
            "todo[1]: no priority, \"normal\" assumed",
            "todo[2]: no priority, \"normal\" assumed",
            "todo[2]: activeForm ignored",
        ])
    );
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([
            {"content": "a", "status": "done", "priority": "normal"},
            {"content": "b", "status": "cancelled", "priority": "normal"},
            {"content": "c", "status": "in_progress", "priority": "normal"},
        ])
    );
}

#[test]
fn edit_with_opencode_parameter_names_works_and_lists_the_aliases() {
    let room = Room::new();
    room.write("a.txt", "hello world\n");
    let run = room.call(
        "edit",
        json!({"filePath": "a.txt", "oldString": "world", "newString": "there"}),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(room.read("a.txt"), "hello there\n");
    assert_eq!(
        run.json()["metadata"]["repairs"],
        json!([
            "renamed parameter filePath to file_path",
            "renamed parameter oldString to old_string",
            "renamed parameter newString to new_string",
        ])
    );
}

#[test]
fn an_alias_next_to_its_canonical_name_is_not_guessed() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    let run = room.call("read", json!({"filePath": "a.txt", "file_path": "a.txt"}));
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.output().contains("filePath"), "{}", run.output());
}

#[test]
fn websearch_without_its_key_names_the_key() {
    let mut room = Room::new();
    room.set_env("EXA_API_KEY", "");
    let run = room.exec(json!({"id": "c", "name": "websearch", "arguments": {"query": "rust"}}));
    let text = run.stdout.clone();
    assert!(
        text.contains("websearch is not configured: set EXA_API_KEY"),
        "{text}"
    );
    assert!(!text.contains("Unknown tool"), "{text}");
}
