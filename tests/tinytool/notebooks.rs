//! Jupyter notebooks: `read` shows cells (source, then outputs as text and images), `edit`
//! with `cell` or `cell_id` changes one cell's source and nothing else of the file.

use base64::Engine;
use serde_json::{Value, json};

use crate::util::{Room, plain_png};

/// A notebook as Jupyter writes it (indent 1, sources as lists of lines), with a plot.
fn notebook() -> String {
    let png = base64::engine::general_purpose::STANDARD.encode(plain_png(12, 8));
    format!(
        r##"{{
 "cells": [
  {{
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {{}},
   "source": [
    "# Analysis\n",
    "print(x) is explained below"
   ]
  }},
  {{
   "cell_type": "code",
   "execution_count": 2,
   "id": "calc",
   "metadata": {{}},
   "outputs": [
    {{
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "42\n"
     ]
    }},
    {{
     "data": {{
      "image/png": "{png}",
      "text/plain": [
       "<Figure size 640x480 with 1 Axes>"
      ]
     }},
     "metadata": {{}},
     "output_type": "display_data"
    }}
   ],
   "source": [
    "x = 42\n",
    "print(x)"
   ]
  }},
  {{
   "cell_type": "code",
   "execution_count": null,
   "id": "tail",
   "metadata": {{}},
   "outputs": [],
   "source": []
  }}
 ],
 "metadata": {{
  "language_info": {{
   "name": "python"
  }}
 }},
 "nbformat": 4,
 "nbformat_minor": 5
}}
"##
    )
}

#[test]
fn a_notebook_reads_as_cells_with_outputs_as_text_and_images() {
    let room = Room::new();
    room.write("a.ipynb", notebook());
    let run = room.exec(
        json!({"type": "tool_use", "id": "t1", "name": "read", "input": {"file_path": "a.ipynb"}}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    let output = result["output"].as_str().unwrap();
    assert!(
        output.starts_with(
            "[cell 0: markdown, id intro]\n# Analysis\nprint(x) is explained below\n\
             [cell 1: code, id calc, execution_count 2]\nx = 42\nprint(x)\n\
             [output 1.0: stream stdout]\n42\n[output 1.1: display_data]\n\
             [image 1: output 1.1, image/png, 12x8, "
        ),
        "{output}"
    );
    assert!(output.ends_with("[cell 2: code, id tail]\n"), "{output}");
    assert!(!output.contains("<Figure"), "{output}");
    // In the envelope's shape: text, the image, text.
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 3);
    assert_eq!(content[0]["type"], "text");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["source"]["media_type"], "image/png");
    assert_eq!(
        (
            result["metadata"]["cells"].as_u64(),
            result["metadata"]["images"].as_u64()
        ),
        (Some(3), Some(1))
    );
    // Paged by cells.
    let page = room
        .call(
            "read",
            json!({"file_path": "a.ipynb", "offset": 1, "limit": 1}),
        )
        .json();
    let text = page["output"].as_str().unwrap();
    assert!(text.starts_with("[cell 1: code"), "{text}");
    assert!(
        text.ends_with("[cells 1-1 of 3 shown, 1 more; continue with offset=2]\n"),
        "{text}"
    );
    let past = room.call("read", json!({"file_path": "a.ipynb", "offset": 3}));
    assert!(
        past.output().contains("last valid offset is 2"),
        "{}",
        past.output()
    );
}

#[test]
fn malformed_notebooks_get_a_clear_error() {
    let room = Room::new();
    room.write("broken.ipynb", "{\"cells\": [\n  {\"cell_type\": \"code\",");
    room.write("old.ipynb", r#"{"worksheets": [], "nbformat": 3}"#);
    room.write(
        "odd.ipynb",
        r#"{"cells": [{"cell_type": "code", "source": 7}]}"#,
    );
    for (file, reason) in [
        (
            "broken.ipynb",
            "Cannot read notebook broken.ipynb: not valid JSON at line 2",
        ),
        (
            "old.ipynb",
            "Cannot read notebook old.ipynb: an nbformat 3 notebook",
        ),
        (
            "odd.ipynb",
            "Cannot read notebook odd.ipynb: the source of cell 0 is neither a string nor a list of strings",
        ),
    ] {
        let run = room.call("read", json!({"file_path": file}));
        assert_eq!(run.code, 1, "{file}");
        assert!(run.output().starts_with(reason), "{file}: {}", run.output());
        let edit = room.call(
            "edit",
            json!({"file_path": file, "cell": 0, "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(edit.code, 1, "{file}");
        assert!(
            edit.output()
                .starts_with(&format!("Cannot edit a cell of {file}: ")),
            "{}",
            edit.output()
        );
    }
}

#[test]
fn edit_changes_one_cells_source_and_keeps_the_files_format() {
    let room = Room::new();
    let before = notebook();
    room.write("a.ipynb", &before);
    // `print(x)` is in cell 0 too: in cell 1 it is unique.
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell": 1, "old_string": "print(x)", "new_string": "print(x * 2)\nprint(x)"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(
        (
            result["metadata"]["cell"].as_u64(),
            result["metadata"]["cell_id"].as_str()
        ),
        (Some(1), Some("calc"))
    );
    assert!(
        result["metadata"]["diff"]
            .as_str()
            .unwrap()
            .contains("+++ b/a.ipynb#cell1")
    );
    let after = room.read("a.ipynb");
    assert_eq!(
        after,
        before.replace(
            "    \"x = 42\\n\",\n    \"print(x)\"\n",
            "    \"x = 42\\n\",\n    \"print(x * 2)\\n\",\n    \"print(x)\"\n"
        )
    );
    let parsed: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        parsed["cells"][1]["source"],
        json!(["x = 42\n", "print(x * 2)\n", "print(x)"])
    );

    // By id, into an empty source, with insert_line.
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell_id": "tail", "insert_line": 0, "new_string": "done = True\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let parsed: Value = serde_json::from_str(&room.read("a.ipynb")).unwrap();
    assert_eq!(parsed["cells"][2]["source"], json!(["done = True\n"]));

    // Text of another cell is not found in this one; a missing cell names the cells there are.
    let unchanged = room.read("a.ipynb");
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell": 2, "old_string": "x = 42", "new_string": "x = 1"}),
    );
    assert_eq!(run.code, 1);
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell": 7, "old_string": "x", "new_string": "y"}),
    );
    assert!(
        run.output()
            .contains("cell 7 does not exist: the notebook has 3 cells (0 to 2)"),
        "{}",
        run.output()
    );
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell_id": "nope", "old_string": "x", "new_string": "y"}),
    );
    assert!(
        run.output().contains("the ids are intro, calc, tail"),
        "{}",
        run.output()
    );
    let run = room.call(
        "edit",
        json!({"file_path": "a.ipynb", "cell": 1, "cell_id": "calc", "old_string": "x", "new_string": "y"}),
    );
    assert!(run.output().contains("not both"), "{}", run.output());
    assert_eq!(room.read("a.ipynb"), unchanged);
}

#[test]
fn claude_codes_notebook_edit_is_refused_with_the_edit_to_send() {
    let room = Room::new();
    room.write("a.ipynb", notebook());
    let run = room.exec(
        json!({"type": "tool_use", "id": "t", "name": "NotebookEdit",
        "input": {"notebook_path": "a.ipynb", "cell_id": "calc", "new_source": "x = 1"}}),
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.output()
            .contains("edit: file_path (the notebook), cell_id"),
        "{}",
        run.output()
    );
    assert_eq!(room.read("a.ipynb"), notebook());
}
