//! `skill`: runs a skill by name.
//!
//! Skills are folders holding a `SKILL.md`, discovered in order — the user's
//! `$XDG_CONFIG_HOME/tinytool/skills/*/`, the project's `.tinytool/skills/*/`, then each
//! `skills.paths` entry of the config — and the first skill of a name wins. A `SKILL.md` may
//! start with a `---` frontmatter block of `key: value` lines (`name`, `description`,
//! `params`). The body, after the frontmatter and one leading newline, is returned with
//! `$1…$N` replaced by the whitespace-separated arguments (highest number first) and then
//! `$ARGUMENTS` by the raw argument text.
//!
//! Serving a skill is reading a file, so it must not read what the `read` tool would be
//! refused. Each skill folder and its `SKILL.md` are resolved (symlinks followed); one that
//! resolves outside the skills folder that lists it is never read — a link
//! `.tinytool/skills/x/SKILL.md -> ../../../.env` would otherwise hand out the project's
//! secrets — and asking for it by name says what is wrong. Every other `SKILL.md` is read
//! only when the policy allows `read` of its resolved path: skills it does not allow
//! without asking are left out of the listing unread (named by their folder), and asking
//! for one by name makes that `read` the call's access, so the gate refuses it (exit 3,
//! naming the rule) or asks at the terminal. A folder the project chose (its
//! `.tinytool/skills`, or a `skills.paths` entry of the project config) is read like any
//! file the project points at: outside the project that also needs `external_directory`.
//! A folder the user chose (the user's skills folder, or the user config's `skills.paths`)
//! needs only `read`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::{CallContext, Session};
use crate::tool::{Access, Needs, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `skill` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "skill",
        summary: "Run a skill by name",
        description: "Load a skill (a reusable instruction set) by name and return its \
            instructions, with $1..$N and $ARGUMENTS replaced by the given arguments. An \
            unknown name lists the available skills. A skill whose SKILL.md resolves \
            outside its skills folder, or that the policy does not let you read, is not \
            served.",
        permission: "read",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: Some(Needs {
            doc: "skill needs at least one skill: a folder holding a SKILL.md in the user's skills folder \
                ($XDG_CONFIG_HOME/tinytool/skills/), the project's .tinytool/skills/, or a \
                folder that `skills.paths` of the config names.",
            missing: no_skills,
        }),
        after_changes: None,
        doc: ToolDoc {
            output: "The skill's instructions with the arguments substituted. metadata: skill \
                (its name) and file (its SKILL.md, symlinks resolved).",
            errors: "`Skill \"NAME\" not found.` followed by the available skills (or `No skills \
                are available.`) and the skills left out (resolving outside their folder, or \
                not readable under the policy); `Skill \"NAME\" is not served: its SKILL.md \
                ... resolves to PATH, outside its skills folder ...` when the skill's folder \
                or SKILL.md is a link leading out of the folder that lists it; `skill name is \
                required`. A skill the policy does not let you read is refused like a read of \
                its SKILL.md (exit 3, naming the rule; outside the project a folder the \
                project config names also needs `external_directory`).",
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

/// A discovered skill that may be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (frontmatter `name`, else the folder name).
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// The `SKILL.md` file, symlinks resolved.
    pub file: PathBuf,
}

/// A folder skills are discovered in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder (absolute).
    pub dir: PathBuf,
    /// Whether the project chose it (its `.tinytool/skills`, or the project config's
    /// `skills.paths`): then its files are read like any the project points at.
    pub project: bool,
}

/// What discovery found in one skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A skill that may be read; `access` is the `read` of its file.
    Skill(Skill, Access),
    /// The folder or its `SKILL.md` resolves outside the skills folder: never read.
    Outside {
        /// The folder's name.
        name: String,
        /// The `SKILL.md` as listed.
        listed: PathBuf,
        /// Where the folder or the file resolves, outside `root`.
        target: PathBuf,
        /// The skills folder (resolved).
        root: PathBuf,
    },
    /// The policy does not allow reading its `SKILL.md` without asking: not read yet.
    Refused {
        /// The folder's name.
        name: String,
        /// The `read` access of its resolved `SKILL.md`.
        access: Access,
    },
}

impl Found {
    /// The name a call asks for: the skill's own, else its folder's.
    pub fn name(&self) -> &str {
        match self {
            Found::Skill(skill, _) => &skill.name,
            Found::Outside { name, .. } | Found::Refused { name, .. } => name,
        }
    }
}

/// The call's accesses: `read` of the tool, and, when the name is a skill whose file can be
/// read (or whose reading the policy would have to allow), `read` of its resolved
/// `SKILL.md` — so a refusal comes from the gate and names the rule.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let mut accesses = vec![Access::new("read", "skill")];
    let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
    match discover(ctx).into_iter().find(|found| found.name() == name) {
        Some(Found::Skill(_, access) | Found::Refused { access, .. }) => accesses.push(access),
        Some(Found::Outside { .. }) | None => {}
    }
    accesses
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: SkillArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.name.trim().is_empty() {
        return Ok(ToolOutput::error("skill name is required"));
    }
    let found = discover(ctx);
    let skill = match found.iter().find(|f| f.name() == args.name) {
        Some(Found::Skill(skill, _)) => skill.clone(),
        // The gate has just allowed this read as the call's access (at the terminal).
        Some(Found::Refused { name, access }) => {
            match access.path.as_deref().and_then(|file| load(file, name)) {
                Some(skill) => skill,
                None => {
                    return Ok(ToolOutput::error(format!(
                        "Failed to read skill file: {}",
                        access.pattern
                    )));
                }
            }
        }
        Some(Found::Outside {
            listed,
            target,
            root,
            ..
        }) => {
            return Ok(ToolOutput::error(outside_message(
                ctx, &args.name, listed, target, root,
            )));
        }
        None => return Ok(ToolOutput::error(not_found_message(&args.name, &found))),
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

/// `Skill "NAME" not found.`, the skills that can be served, and those left out.
fn not_found_message(name: &str, found: &[Found]) -> String {
    let mut message = format!("Skill \"{name}\" not found.");
    let skills: Vec<&Skill> = found
        .iter()
        .filter_map(|f| match f {
            Found::Skill(skill, _) => Some(skill),
            _ => None,
        })
        .collect();
    if skills.is_empty() {
        message.push_str("\nNo skills are available.");
    } else {
        message.push_str("\nAvailable skills:");
        for s in skills {
            message.push_str(&format!("\n- {}", s.name));
            if !s.description.is_empty() {
                message.push_str(&format!(" - {}", s.description));
            }
        }
    }
    let left_out: Vec<String> = found
        .iter()
        .filter_map(|f| match f {
            Found::Skill(..) => None,
            Found::Outside { name, .. } => Some(format!(
                "{name} (its SKILL.md resolves outside its skills folder)"
            )),
            Found::Refused { name, .. } => Some(format!(
                "{name} (the policy does not let you read its SKILL.md)"
            )),
        })
        .collect();
    if !left_out.is_empty() {
        message.push_str(&format!("\nLeft out: {}.", left_out.join(", ")));
    }
    message
}

/// What is wrong with a skill that resolves outside its folder, and what to do.
fn outside_message(
    ctx: &CallContext,
    name: &str,
    listed: &Path,
    target: &Path,
    root: &Path,
) -> String {
    format!(
        "Skill \"{name}\" is not served: its SKILL.md {} resolves to {}, outside its skills \
         folder {}. A skill's folder and SKILL.md must stay inside the skills folder that \
         lists it, so that a link cannot hand out other files. Put the skill's files in that \
         folder instead of a link, or add the folder that really holds it to \"skills\": \
         {{\"paths\": [...]}} in your user config.",
        ctx.display(listed),
        ctx.display(target),
        ctx.display(root),
    )
}

/// The folders searched for skills, in order.
fn roots(session: &Session) -> Vec<Root> {
    let mut roots = Vec::new();
    if let Some(config) = crate::config::user_config_dir() {
        roots.push(Root {
            dir: config.join("skills"),
            project: false,
        });
    }
    roots.push(Root {
        dir: crate::project::tinytool_dir(&session.dir).join("skills"),
        project: true,
    });
    roots.extend(session.config.skill_paths.iter().map(|p| Root {
        dir: crate::paths::resolve(&session.dir, &p.path.to_string_lossy()),
        project: p.from_project,
    }));
    roots
}

/// Why `session` has no skill to serve: no skills folder holds one that could be read
/// (one the policy would ask about counts: it may be allowed when asked).
fn no_skills(session: &Session) -> Option<String> {
    let ctx = CallContext::new(session, "skill");
    let servable = discover(&ctx)
        .iter()
        .any(|found| matches!(found, Found::Skill(..) | Found::Refused { .. }));
    (!servable).then(|| {
        "no skill is installed: put a folder with a SKILL.md in the user's skills folder \
         ($XDG_CONFIG_HOME/tinytool/skills/) or the project's .tinytool/skills/, or name its \
         folder in `skills.paths` of config.json"
            .to_string()
    })
}

/// Every skill folder in the roots, in order, first name wins, each judged silently.
fn discover(ctx: &CallContext) -> Vec<Found> {
    scan(
        &roots(ctx.session),
        |root, file| read_access(ctx, root, file),
        |access| ctx.session.gate.permits(ctx, access),
    )
}

/// The `read` access of a skill's resolved `SKILL.md`: a file access (outside the project
/// also `external_directory`) when the project chose its folder or it is inside the
/// project; for a folder outside it that the user chose, the same `read` decision without
/// `external_directory` (the pattern is the absolute path, as for any file outside).
fn read_access(ctx: &CallContext, root: &Root, file: &Path) -> Access {
    if root.project || crate::paths::relative_inside(&ctx.session.dir, file).is_some() {
        Access::resolved(ctx, "read", file.to_path_buf())
    } else {
        Access::new("read", file.to_string_lossy())
    }
}

/// Skills in `roots` (each `<root>/<folder>/SKILL.md`, folders in name order), first name
/// wins; `access` gives the `read` of a resolved `SKILL.md` and `permits` whether the
/// policy allows it without asking. Only files inside their root that it allows are read.
pub fn scan(
    roots: &[Root],
    access: impl Fn(&Root, &Path) -> Access,
    permits: impl Fn(&Access) -> bool,
) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for root in roots {
        let Ok(real_root) = std::fs::canonicalize(&root.dir) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(&real_root) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            let Some(entry) = judge(root, &real_root, &folder, &access, &permits) else {
                continue;
            };
            if !found.iter().any(|f| f.name() == entry.name()) {
                found.push(entry);
            }
        }
    }
    found
}

/// Resolves one skill folder and decides what it is; `None` when it holds no `SKILL.md`.
fn judge(
    root: &Root,
    real_root: &Path,
    folder: &Path,
    access: &impl Fn(&Root, &Path) -> Access,
    permits: &impl Fn(&Access) -> bool,
) -> Option<Found> {
    let name = folder.file_name()?.to_string_lossy().into_owned();
    let listed = folder.join("SKILL.md");
    let file = std::fs::canonicalize(&listed).ok()?;
    if !file.is_file() {
        return None;
    }
    let real_folder = std::fs::canonicalize(folder).ok()?;
    let escape = [&real_folder, &file]
        .into_iter()
        .find(|path| !path.starts_with(real_root));
    if let Some(target) = escape {
        return Some(Found::Outside {
            name,
            listed,
            target: target.clone(),
            root: real_root.to_path_buf(),
        });
    }
    let read = access(root, &file);
    if !permits(&read) {
        return Some(Found::Refused { name, access: read });
    }
    load(&file, &name).map(|skill| Found::Skill(skill, read))
}

/// Reads a resolved `SKILL.md`'s frontmatter; `folder_name` names it when that does not.
fn load(file: &Path, folder_name: &str) -> Option<Skill> {
    let text = std::fs::read_to_string(file).ok()?;
    let (front, _) = split_frontmatter(&text);
    let field = |key: &str| {
        front.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let name = field("name")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| folder_name.to_string());
    Some(Skill {
        name,
        description: field("description").unwrap_or_default(),
        file: file.to_path_buf(),
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

    fn roots(dirs: &[&Path]) -> Vec<Root> {
        dirs.iter()
            .map(|dir| Root {
                dir: dir.to_path_buf(),
                project: true,
            })
            .collect()
    }

    fn read_of(_: &Root, file: &Path) -> Access {
        Access::new("read", file.to_string_lossy())
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
        let found = scan(&roots(&[&user, &project]), read_of, |_| true);
        let names: Vec<&str> = found.iter().map(Found::name).collect();
        assert_eq!(names, ["shared", "custom-name"]);
        let Found::Skill(first, _) = &found[0] else {
            panic!("{found:?}")
        };
        assert_eq!(first.description, "from user");
    }

    #[test]
    fn links_out_of_the_root_are_never_read_and_refused_files_stay_unread() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("skills");
        std::fs::create_dir_all(root.join("leak")).unwrap();
        std::fs::create_dir_all(root.join("inner")).unwrap();
        std::fs::create_dir_all(root.join("denied")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::fs::write(base.join(".env"), "---\nname: shown\n---\nTOP=1").unwrap();
        std::fs::write(base.join("elsewhere/SKILL.md"), "E").unwrap();
        std::fs::write(root.join("inner/SKILL.md"), "---\nname: in\n---\nI").unwrap();
        std::fs::write(root.join("denied/SKILL.md"), "---\nname: nope\n---\nD").unwrap();
        std::os::unix::fs::symlink(base.join(".env"), root.join("leak/SKILL.md")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("folder-link")).unwrap();
        // A link that stays inside the root is followed.
        std::fs::create_dir_all(root.join("alias")).unwrap();
        std::os::unix::fs::symlink("../inner/SKILL.md", root.join("alias/SKILL.md")).unwrap();
        let found = scan(&roots(&[&root]), read_of, |access| {
            !access.pattern.contains("denied")
        });
        let summary: Vec<(String, &str)> = found
            .iter()
            .map(|f| {
                let kind = match f {
                    Found::Skill(..) => "skill",
                    Found::Outside { .. } => "outside",
                    Found::Refused { .. } => "refused",
                };
                (f.name().to_string(), kind)
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("in".to_string(), "skill"),
                ("denied".to_string(), "refused"),
                ("folder-link".to_string(), "outside"),
                ("leak".to_string(), "outside"),
            ]
        );
        let Found::Outside { target, .. } = &found[3] else {
            panic!()
        };
        assert_eq!(target, &base.join(".env"));
    }
}
