//! The built-in tools, one file each, and the registration list.
//!
//! Adding a tool is one file here plus one line in [`builtin`]: its subcommand, flags,
//! `exec` dispatch, `tools` listing, man page and completions follow from the definition.

mod apply_patch;
mod bash;
mod checkpoint;
mod diagnostics;
mod edit;
mod exit;
mod glob;
mod grep;
mod invalid;
pub mod monitor;
mod notepad;
mod plan;
mod question;
mod read;
mod report_findings;
mod skill;
pub mod task;
mod todowrite;
mod webfetch;
pub mod websearch;
mod write;

use crate::registry::Registry;

/// Every tool name tinytool knows, registered here or not (websearch only
/// exists with `EXA_API_KEY`): what a policy's `disabled` list may name.
pub const ALL_NAMES: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "grep",
    "glob",
    "question",
    "webfetch",
    "invalid",
    "task",
    "todowrite",
    "report_findings",
    "monitor",
    "notepad",
    "plan_enter",
    "plan_exit",
    "exit",
    "skill",
    "websearch",
    "checkpoint",
    "diagnostics",
];

/// The result of a command `required` mode kept from running (its spawn failed because a
/// sandbox layer was missing); `None` when that is not why it failed.
pub fn sandbox_refusal(
    plan: &Option<std::sync::Arc<crate::sandbox::Plan>>,
) -> Option<crate::tool::ToolOutput> {
    let plan = plan.as_ref()?;
    let message = plan.refusal()?;
    let mut meta = plan.metadata();
    meta["refused"] = serde_json::json!(true);
    Some(crate::tool::ToolOutput::error(message).with("sandbox", meta))
}

/// The registry of every built-in tool, in the reference's order (its `RegisterBuiltins`, then
/// `RegisterConditional`). `websearch` is registered only when `EXA_API_KEY` is set.
pub fn builtin() -> Registry {
    let mut registry = always();
    if websearch::enabled() {
        registry.register(websearch::definition());
    }
    registry
}

/// The tools registered whatever the environment, in order.
fn always() -> Registry {
    let mut registry = Registry::new();
    registry.register(read::definition());
    registry.register(write::definition());
    registry.register(edit::definition());
    registry.register(apply_patch::definition());
    registry.register(bash::definition());
    registry.register(grep::definition());
    registry.register(glob::definition());
    registry.register(question::definition());
    registry.register(webfetch::definition());
    registry.register(invalid::definition());
    registry.register(task::definition());
    registry.register(todowrite::definition());
    registry.register(report_findings::definition());
    registry.register(monitor::definition());
    registry.register(notepad::definition());
    registry.register(plan::enter());
    registry.register(plan::exit());
    registry.register(exit::definition());
    registry.register(skill::definition());
    registry.register(checkpoint::definition());
    registry.register(diagnostics::definition());
    registry
}

/// Every tool that can exist, whatever the environment: what the command line, man pages
/// and completions describe.
pub fn documented() -> Registry {
    let mut registry = always();
    registry.register(websearch::definition());
    registry
}

#[cfg(test)]
mod tests {
    //! Invariants every registered tool keeps, checked by looping over the registry (a new
    //! tool is covered by registering it).

    use serde_json::{Value, json};

    use super::*;
    use crate::registry::{Arguments, ToolCall};
    use crate::session::Session;
    use crate::tool::Covers;

    /// The permission categories a tool can be decided as.
    const CATEGORIES: &[&str] = &[
        "read",
        "edit",
        "shell",
        "webfetch",
        "plan_enter",
        "plan_exit",
        "undo",
    ];
    /// The tools that never ask the policy.
    const UNCATEGORIZED: &[&str] = &["notepad", "report_findings", "exit"];

    fn is_snake_case(name: &str) -> bool {
        name.starts_with(|c: char| c.is_ascii_lowercase())
            && !name.ends_with('_')
            && !name.contains("__")
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }

    #[test]
    fn names_are_unique_snake_case_and_every_tool_is_described() {
        let registry = documented();
        let mut seen = Vec::new();
        for def in registry.all() {
            assert!(is_snake_case(def.name), "{}: not snake_case", def.name);
            assert!(!seen.contains(&def.name), "{}: registered twice", def.name);
            seen.push(def.name);
            assert!(!def.summary.trim().is_empty(), "{}: no summary", def.name);
            assert!(
                !def.summary.contains('\n'),
                "{}: the summary is one line",
                def.name
            );
            assert!(
                !def.description.trim().is_empty(),
                "{}: no description",
                def.name
            );
            assert!(
                !def.doc.output.trim().is_empty(),
                "{}: no doc.output",
                def.name
            );
            if let Some(needs) = def.needs {
                // The man page's AVAILABILITY paragraph names the tool first.
                assert!(
                    needs.doc.starts_with(&format!("{} needs ", def.name)),
                    "{}: needs.doc starts with the tool's name",
                    def.name
                );
            }
        }
    }

    #[test]
    fn permission_categories_are_the_specs() {
        for def in documented().all() {
            if def.permission.is_empty() {
                assert!(
                    UNCATEGORIZED.contains(&def.name),
                    "{}: only {UNCATEGORIZED:?} may have no permission category",
                    def.name
                );
            } else {
                assert!(
                    CATEGORIES.contains(&def.permission),
                    "{}: {:?} is not a permission category",
                    def.name,
                    def.permission
                );
            }
        }
    }

    #[test]
    fn schemas_are_objects_whose_required_names_are_parameters() {
        for def in documented().all() {
            let schema = (def.schema)();
            assert_eq!(schema["type"], "object", "{}", def.name);
            let properties = schema["properties"].as_object().unwrap();
            for name in schema["required"].as_array().unwrap() {
                let name = name.as_str().unwrap();
                assert!(properties.contains_key(name), "{}: {name}", def.name);
            }
            for (name, prop) in properties {
                assert!(is_snake_case(name), "{}: parameter {name}", def.name);
                assert!(
                    prop.get("description")
                        .and_then(Value::as_str)
                        .is_some_and(|d| !d.trim().is_empty()),
                    "{}: parameter {name} has no description",
                    def.name
                );
            }
        }
    }

    #[test]
    fn tools_with_required_parameters_reject_an_empty_call_clearly() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("test", tmp.path());
        let registry = documented();
        for def in registry.all() {
            let required: Vec<String> = crate::schema::parameters(&(def.schema)())
                .into_iter()
                .filter(|(_, required)| *required)
                .map(|(name, _)| name)
                .collect();
            if required.is_empty() {
                continue;
            }
            let result = registry.execute(
                &session,
                ToolCall {
                    id: None,
                    name: def.name.to_string(),
                    arguments: Arguments::Value(json!({})),
                },
            );
            assert!(result.is_error, "{}: accepted {{}}", def.name);
            assert_eq!(result.status, crate::exit::ExitStatus::ToolError);
            for name in &required {
                assert!(
                    result
                        .output
                        .contains(&format!("missing required parameter `{name}`")),
                    "{}: the error does not name `{name}`: {}",
                    def.name,
                    result.output
                );
            }
        }
    }

    #[test]
    fn no_parameter_flag_collides_with_an_option() {
        let cmd = crate::cli::command();
        let mut taken: Vec<String> = cmd
            .get_arguments()
            .filter_map(|arg| arg.get_long().map(str::to_string))
            .collect();
        // Every tool subcommand has these too.
        taken.extend(["help", "version", "stdin"].map(String::from));
        for def in documented().all() {
            for (name, _) in crate::schema::parameters(&(def.schema)()) {
                let flag = crate::cli::flag_name(&name);
                assert!(
                    !taken.contains(&flag),
                    "{}: parameter {name} would be --{flag}, which is an option already",
                    def.name
                );
            }
        }
    }

    #[test]
    fn only_calls_that_may_change_the_project_get_a_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let session = crate::session::Session::new("s", dir.path());
        let registry = builtin();
        let shown = |tool: &str, args: Value| {
            let def = registry.get(tool).unwrap();
            def.checkpoint
                .and_then(|rule| rule(&session, args.as_object().unwrap()))
                .map(|rule| (rule.shown, rule.covers))
        };
        let files = |shown: &str| Some((shown.to_string(), Covers::EditedFiles));
        let project = |shown: &str| Some((shown.to_string(), Covers::Project));
        assert_eq!(shown("write", json!({"file_path": "a"})), files("a"));
        assert_eq!(shown("edit", json!({"file_path": "b"})), files("b"));
        assert_eq!(
            shown("apply_patch", json!({"patch": "x"})),
            files("apply_patch")
        );
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-x\n+y\n*** End Patch\n";
        assert_eq!(
            shown("apply_patch", json!({"patch": patch})),
            files("a.txt, b.txt, c.txt")
        );
        assert_eq!(
            shown("bash", json!({"command": "make clean"})),
            project("make clean")
        );
        assert!(shown("bash", json!({"command": "ls\nrm -rf src"})).is_some());
        assert_eq!(
            shown("bash", json!({"command": "ls -la && git status"})),
            None
        );
        assert_eq!(shown("read", json!({"file_path": "a"})), None);
        assert_eq!(
            shown("monitor", json!({"command": "npm run dev"})),
            project("npm run dev")
        );
        assert_eq!(
            shown("monitor", json!({"action": "read", "monitor_id": "m"})),
            None
        );
        assert_eq!(shown("monitor", json!({"command": ""})), None);
        assert_eq!(
            shown("task", json!({"description": "tidy", "prompt": "p"})),
            project("tidy")
        );
        let mut deep = crate::session::Session::new("s", dir.path());
        deep.depth = crate::session::MAX_SUBAGENT_DEPTH;
        let task = registry.get("task").unwrap().checkpoint.unwrap();
        assert_eq!(
            task(&deep, json!({"description": "tidy"}).as_object().unwrap()),
            None
        );
    }
}
