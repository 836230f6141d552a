//! The layers of `src/` hold (ARCHITECTURE.md): every top-level module is in exactly one
//! layer of `layers.toml`, no module imports one of a higher layer, and the modules of one
//! layer import each other without a cycle. Imports are every `crate::NAME` path (and
//! `crate::{…}` list) and every `super::` path that leaves its top-level module, in the
//! code and its doc links alike, test code left out (a file's `#[cfg(test)] mod` and the
//! files of test-only modules).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first, each with its modules, from the text of `layers.toml`.
fn parse_layers(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (name, list) = line.split_once('=').expect("NAME = [\"module\", …]");
            let modules = list
                .trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|m| m.trim().trim_matches('"').to_string())
                .filter(|m| !m.is_empty())
                .collect();
            (name.trim().to_string(), modules)
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file of `src/` (`src/a/b.rs` and `src/a/b/mod.rs` are `[a, b]`;
/// lib.rs and main.rs are the crate itself, `[]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    let last = parts.pop().unwrap();
    match last.trim_end_matches(".rs") {
        "mod" => {}
        "lib" | "main" if parts.is_empty() => {}
        name => parts.push(name.to_string()),
    }
    parts
}

/// The code of a file without its test module (`#[cfg(test)] mod NAME { … }`, by house
/// style the end of the file).
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod ") {
        Some(at) if !text[at..].lines().nth(1).unwrap_or("").ends_with(';') => &text[..at],
        _ => text,
    }
}

/// The modules a file declares test-only (`#[cfg(test)] mod NAME;`).
fn test_only_children(text: &str) -> Vec<String> {
    text.match_indices("#[cfg(test)]\nmod ")
        .filter_map(|(at, found)| {
            let rest = &text[at + found.len()..];
            let line = rest.lines().next()?;
            line.strip_suffix(';').map(str::to_string)
        })
        .collect()
}

/// The top-level modules a file at module path `me` names: after `crate::` (each item of a
/// `crate::{…}` list), and after a run of `super::` that climbs out of its own top-level
/// module.
fn imported(me: &[String], text: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        // `tinycrate::x` is not `crate::x`.
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let list = &list[..list.find('}').unwrap_or(list.len())];
            for item in list.split(',') {
                names.insert(word(item.trim()));
            }
        } else {
            names.insert(word(rest));
        }
    }
    for (at, _) in text.match_indices("super::") {
        let before = &text[..at];
        if before.ends_with("super::")
            || before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let mut rest = &text[at..];
        let mut up = 0;
        while let Some(next) = rest.strip_prefix("super::") {
            up += 1;
            rest = next;
        }
        if up == me.len() {
            names.insert(word(rest));
        }
    }
    names.remove("");
    names
}

/// What is wrong with the layering of `files` (module path, code) against `layers`.
fn problems(layers: &[(String, Vec<String>)], files: &[(Vec<String>, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut layer_of: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (_, modules)) in layers.iter().enumerate() {
        for module in modules {
            if layer_of.insert(module.clone(), i).is_some() {
                problems.push(format!("module {module} is in two layers of layers.toml"));
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut present = BTreeSet::new();
    for (path, text) in files {
        let Some(from) = path.first() else {
            continue;
        };
        present.insert(from.clone());
        if !layer_of.contains_key(from) {
            problems.push(format!("module {from} is in no layer of layers.toml"));
        }
        for to in imported(path, without_tests(text)) {
            if &to != from && layer_of.contains_key(&to) {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    for module in layer_of.keys() {
        if !present.contains(module) {
            problems.push(format!(
                "layers.toml names {module}, which src/ does not have"
            ));
        }
    }
    for (from, tos) in &edges {
        for to in tos {
            let (a, b) = (layer_of.get(from), layer_of.get(to));
            if let (Some(a), Some(b)) = (a, b)
                && b > a
            {
                problems.push(format!(
                    "{from} ({}) imports {to} ({}), a higher layer",
                    layers[*a].0, layers[*b].0
                ));
            }
        }
    }
    // Cycles within a layer: a module that reaches itself through its own layer.
    for from in edges.keys() {
        let layer = layer_of.get(from);
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = edges[from].iter().collect();
        while let Some(next) = stack.pop() {
            if layer_of.get(next) != layer || !seen.insert(next.clone()) {
                continue;
            }
            if next == from {
                problems.push(format!("{from} is in a cycle within its layer"));
                break;
            }
            stack.extend(edges.get(next).into_iter().flatten());
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

/// The code files of `src/` by module path, test-only files left out.
fn project_files(src: &Path) -> Vec<(Vec<String>, String)> {
    let mut paths = Vec::new();
    sources(src, &mut paths);
    let files: Vec<(PathBuf, Vec<String>, String)> = paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.clone(), module_path(src, &p), text)
        })
        .collect();
    let test_only: BTreeSet<Vec<String>> = files
        .iter()
        .flat_map(|(_, path, text)| {
            test_only_children(text).into_iter().map(move |child| {
                let mut full = path.clone();
                full.push(child);
                full
            })
        })
        .collect();
    files
        .into_iter()
        .filter(|(_, path, _)| !test_only.iter().any(|t| path.starts_with(t)))
        .map(|(_, path, text)| (path, text))
        .collect()
}

#[test]
fn no_module_imports_a_higher_layer_and_no_layer_has_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let layers = parse_layers(&std::fs::read_to_string(root.join("layers.toml")).unwrap());
    let files = project_files(&root.join("src"));
    assert!(files.len() > 100, "src/ was read ({} files)", files.len());
    let problems = problems(&layers, &files);
    assert!(
        problems.is_empty(),
        "{} problems with the layers (ARCHITECTURE.md, layers.toml):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn file(path: &[&str], text: &str) -> (Vec<String>, String) {
    (
        path.iter().map(|p| p.to_string()).collect(),
        text.to_string(),
    )
}

fn two_layers() -> Vec<(String, Vec<String>)> {
    parse_layers("# bottom first\nlow = [\"a\", \"b\"]\nhigh = [\"c\"]\n")
}

#[test]
fn an_upward_import_is_found_in_code_and_in_doc_links() {
    let layers = two_layers();
    let fine = [
        file(&["a"], "use crate::b::x;"),
        file(&["b"], ""),
        file(&["c"], "use crate::{a, b::y};"),
    ];
    assert_eq!(problems(&layers, &fine), Vec::<String>::new());
    for upward in [
        "use crate::c::Thing;",
        "fn f() { crate::c::g() }",
        "use crate::{b, c::h};",
        "//! See [`crate::c::Thing`].",
    ] {
        let files = [file(&["a"], upward), file(&["b"], ""), file(&["c"], "")];
        assert_eq!(
            problems(&layers, &files),
            ["a (low) imports c (high), a higher layer"],
            "{upward}"
        );
    }
}

#[test]
fn super_paths_that_leave_their_module_are_imports() {
    let layers = two_layers();
    let files = [
        file(&["a"], "use super::c::Thing;"),
        file(
            &["b", "inner"],
            "use super::super::c::x; use super::sibling;",
        ),
        file(&["b"], "use super::b_is_me;"),
        file(&["c"], ""),
    ];
    assert_eq!(
        problems(&layers, &files),
        [
            "a (low) imports c (high), a higher layer",
            "b (low) imports c (high), a higher layer",
        ]
    );
}

#[test]
fn cycles_within_a_layer_and_unlisted_modules_are_found() {
    let layers = two_layers();
    let files = [
        file(&["a"], "use crate::b::x;"),
        file(&["b"], "use crate::a::y;"),
        file(&["c"], ""),
        file(&["d"], ""),
    ];
    assert_eq!(
        problems(&layers, &files),
        [
            "a is in a cycle within its layer",
            "b is in a cycle within its layer",
            "module d is in no layer of layers.toml",
        ]
    );
    let missing = [file(&["a"], ""), file(&["b"], "")];
    assert_eq!(
        problems(&layers, &missing),
        ["layers.toml names c, which src/ does not have"]
    );
}

#[test]
fn test_code_may_reach_anything() {
    let layers = two_layers();
    let text = "fn f() {}\n\n#[cfg(test)]\nmod tests {\n    use crate::c::Thing;\n}\n";
    let files = [file(&["a"], text), file(&["b"], ""), file(&["c"], "")];
    assert_eq!(problems(&layers, &files), Vec::<String>::new());
    assert_eq!(
        test_only_children("#[cfg(test)]\nmod tests;\n"),
        ["tests".to_string()]
    );
}

/// The top-level modules of `src/` (its `.rs` files and folders, lib.rs and main.rs aside).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if entry.path().is_dir() {
                Some(name)
            } else {
                let module = name.strip_suffix(".rs")?;
                (module != "lib" && module != "main").then(|| module.to_string())
            }
        })
        .collect()
}

#[test]
fn the_readme_layout_and_architecture_name_every_module_and_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let layout = readme
        .split("\n## Layout\n")
        .nth(1)
        .expect("README.md has a Layout section");
    let layout = layout.split("\n## ").next().unwrap();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for module in top_level_modules(&root.join("src")) {
        let file = format!("`src/{module}.rs`");
        let folder = format!("`src/{module}/`");
        if !layout.contains(&file) && !layout.contains(&folder) {
            missing.push(format!("README.md's layout leaves out {module}"));
        }
        if !architecture.contains(&format!("`{module}`")) {
            missing.push(format!("ARCHITECTURE.md leaves out {module}"));
        }
    }
    let layers = parse_layers(&std::fs::read_to_string(root.join("layers.toml")).unwrap());
    for (layer, _) in &layers {
        if !architecture.contains(&format!("**{layer}**")) {
            missing.push(format!(
                "ARCHITECTURE.md does not describe the layer {layer}"
            ));
        }
    }
    // Every path the layout table names exists.
    for line in layout.lines().filter(|l| l.starts_with("| `")) {
        let first = line.split(" | ").next().unwrap();
        for path in first.split('`').skip(1).step_by(2) {
            if !root.join(path).exists() {
                missing.push(format!(
                    "README.md's layout names {path}, which does not exist"
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
