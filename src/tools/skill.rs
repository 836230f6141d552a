//! `skill`: runs a skill by name (spec 8.3, reference §9).
//!
//! Skills are folders holding a `SKILL.md`, discovered in order — the user's
//! `$XDG_CONFIG_HOME/tinytool/skills/*/`, the project's `.tinytool/skills/*/`, then each
//! `skills.paths` entry of the config — and the first skill of a name wins. A `SKILL.md` may
//! start with a `---` frontmatter block of `key: value` lines (`name`, `description`,
//! `params`). The body, after the frontmatter and one leading newline, is returned with
//! `$1…$N` replaced by the whitespace-separated arguments (highest number first) and then
//! `$ARGUMENTS` by the raw argument text.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `skill` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "skill",
        summary: "Run a skill by name",
        description: "Load a skill (a reusable instruction set) by name and return its \
            instructions, with $1..$N and $ARGUMENTS replaced by the given arguments. An \
            unknown name lists the available skills.",
        permission: "read",
        schema: parameters,
        execute,
        access: None,
        doc: ToolDoc {
            output: "The skill's instructions with the arguments substituted.",
            errors: "`Skill \"NAME\" not found.` followed by the available skills (or `No skills \
                are available.`); `skill name is required`.",
            examples: &[(
                "Run the review skill on a file",
                "tinytool skill --name review --arguments src/main.rs",
            )],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "name": {"type": "string", "description": "The skill's name."},
            "arguments": {"type": "string", "description": "Space-separated arguments ($1, $2, ..., $ARGUMENTS)."}
        }),
        &["name"],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillArgs {
    name: String,
    arguments: Option<String>,
}

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (frontmatter `name`, else the folder name).
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// The `SKILL.md` file.
    pub file: PathBuf,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: SkillArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.name.trim().is_empty() {
        return Ok(ToolOutput::error("skill name is required"));
    }
    let skills = discover(&search_dirs(ctx));
    let Some(skill) = skills.iter().find(|s| s.name == args.name) else {
        let mut message = format!("Skill \"{}\" not found.", args.name);
        if skills.is_empty() {
            message.push_str("\nNo skills are available.");
        } else {
            message.push_str("\nAvailable skills:");
            for s in &skills {
                message.push_str(&format!("\n- {}", s.name));
                if !s.description.is_empty() {
                    message.push_str(&format!(" - {}", s.description));
                }
            }
        }
        return Ok(ToolOutput::error(message));
    };
    let text = match std::fs::read_to_string(&skill.file) {
        Ok(text) => text,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Failed to read skill file: {err}"
            )));
        }
    };
    let (_, body) = split_frontmatter(&text);
    let body = body.strip_prefix('\n').unwrap_or(body);
    let arguments = args.arguments.unwrap_or_default();
    Ok(ToolOutput::text(substitute(body, &arguments))
        .with("skill", skill.name.clone())
        .with("file", skill.file.to_string_lossy().into_owned()))
}

/// The folders searched for skills, in order.
fn search_dirs(ctx: &CallContext) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(config) = crate::config::user_config_dir() {
        dirs.push(config.join("skills"));
    }
    dirs.push(crate::project::tinytool_dir(&ctx.session.dir).join("skills"));
    dirs.extend(
        ctx.session
            .config
            .skill_paths
            .iter()
            .map(|p| crate::paths::resolve(&ctx.session.dir, &p.to_string_lossy())),
    );
    dirs
}

/// Skills in `dirs` (each `<dir>/<skill>/SKILL.md`), first name wins, folders in name order.
pub fn discover(dirs: &[PathBuf]) -> Vec<Skill> {
    let mut skills: Vec<Skill> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            if let Some(skill) = load(&folder)
                && !skills.iter().any(|s| s.name == skill.name)
            {
                skills.push(skill);
            }
        }
    }
    skills
}

fn load(folder: &Path) -> Option<Skill> {
    let file = folder.join("SKILL.md");
    let text = std::fs::read_to_string(&file).ok()?;
    let (front, _) = split_frontmatter(&text);
    let field = |key: &str| {
        front.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let name = field("name")
        .filter(|n| !n.is_empty())
        .or_else(|| folder.file_name().map(|n| n.to_string_lossy().into_owned()))?;
    Some(Skill {
        name,
        description: field("description").unwrap_or_default(),
        file,
    })
}

/// Splits `---\n<frontmatter>\n---<body>`; text without a closing marker is all body.
fn split_frontmatter(text: &str) -> (&str, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return ("", text);
    };
    match rest.find("\n---") {
        Some(end) => (&rest[..end], &rest[end + 4..]),
        None => ("", text),
    }
}

/// Replaces `$N` (highest first, so `$10` is not eaten by `$1`) and then `$ARGUMENTS`.
fn substitute(body: &str, arguments: &str) -> String {
    let words: Vec<&str> = arguments.split_whitespace().collect();
    let mut text = body.to_string();
    for (i, word) in words.iter().enumerate().rev() {
        text = text.replace(&format!("${}", i + 1), word);
    }
    text.replace("$ARGUMENTS", arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_follows_the_reference_cases() {
        let cases = [
            (
                "Hello $1, welcome to $2!",
                "Alice Wonderland",
                "Hello Alice, welcome to Wonderland!",
            ),
            ("Run: $ARGUMENTS", "foo bar baz", "Run: foo bar baz"),
            (
                "Name: $1\nAll: $ARGUMENTS",
                "alpha beta",
                "Name: alpha\nAll: alpha beta",
            ),
            (
                "Static content with $1 placeholder",
                "",
                "Static content with $1 placeholder",
            ),
            ("Args: $ARGUMENTS end", "", "Args:  end"),
            ("$1 and $2 and $3", "a b", "a and b and $3"),
            ("args: $1 $10", "A B C D E F G H I J", "args: A J"),
            ("got $10 and $1", "A B C D E F G H I J", "got J and A"),
        ];
        for (body, args, want) in cases {
            assert_eq!(substitute(body, args), want, "{body:?} with {args:?}");
        }
    }

    #[test]
    fn frontmatter_is_split_only_when_closed() {
        assert_eq!(
            split_frontmatter("---\nname: greet\n---\nHello $1!"),
            ("name: greet", "\nHello $1!")
        );
        assert_eq!(
            split_frontmatter("---\nname: x\nno close"),
            ("", "---\nname: x\nno close")
        );
        assert_eq!(split_frontmatter("plain"), ("", "plain"));
    }

    #[test]
    fn discovery_takes_the_first_name_and_ignores_folders_without_skill_md() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("user");
        let project = tmp.path().join("project");
        for (dir, folder, text) in [
            (&user, "shared", "---\ndescription: from user\n---\nU"),
            (&project, "shared", "---\ndescription: from project\n---\nP"),
            (
                &project,
                "dir-name",
                "---\nname: custom-name\n---\nLoaded OK $1",
            ),
        ] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
            std::fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
        }
        std::fs::create_dir_all(project.join("empty")).unwrap();
        std::fs::write(project.join("plain-file"), "x").unwrap();
        let skills = discover(&[user, project]);
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["shared", "custom-name"]);
        assert_eq!(skills[0].description, "from user");
    }
}
