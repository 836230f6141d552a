//! The folders that are not the project's own work, which no walk of a project descends
//! into: git's and tinytool's own, installed packages, virtual environments, caches and
//! build outputs. Search (grep, glob), checkpoints and the sandbox's secret scan share
//! this one list, and say what they left out with the reasons given here.
//!
//! A folder is left out by its name alone only where the name means one thing everywhere
//! ([`BY_NAME`]: `node_modules`, `__pycache__`, `.tox`, …); a build output is known by a
//! marker, never by a name that is source in other projects (`dist/`, `build/`): a folder
//! holding one of [`MARKERS`] (`pyvenv.cfg`: any Python virtual environment, whatever its
//! name; `CACHEDIR.TAG`: a cache that says so), or a folder named as a tool's output
//! beside that tool's project file ([`BESIDE`]: `target/` beside `Cargo.toml`). A walk's
//! root is never left out: naming such a folder as a search's path searches it.

use std::ffi::OsStr;
use std::path::Path;

/// Folders left out wherever they are, by name, with what they are.
pub const BY_NAME: [(&str, &str); 15] = [
    (".git", "git's own"),
    (".tinytool", "tinytool's own"),
    (".tinycode", "tinycode's own"),
    ("node_modules", "installed packages"),
    ("vendor", "vendored dependencies"),
    ("site-packages", "installed packages"),
    ("__pycache__", "Python bytecode"),
    (".tox", "tox environments"),
    (".nox", "nox environments"),
    (".mypy_cache", "mypy's cache"),
    (".pytest_cache", "pytest's cache"),
    (".ruff_cache", "ruff's cache"),
    (".gradle", "Gradle's cache"),
    (".terraform", "Terraform's providers and modules"),
    (".venv", "a Python virtual environment"),
];

/// Files whose presence makes the folder holding them not the project's, with what the
/// folder then is.
pub const MARKERS: [(&str, &str); 2] = [
    ("pyvenv.cfg", "a Python virtual environment"),
    ("CACHEDIR.TAG", "a cache (it holds CACHEDIR.TAG)"),
];

/// Build outputs known by the project file beside them: (folder, file beside it, what
/// the folder is).
pub const BESIDE: [(&str, &str, &str); 2] = [
    ("target", "Cargo.toml", "Cargo's build output"),
    ("target", "pom.xml", "Maven's build output"),
];

/// Whether a folder of this name is git's or tinytool's own: always left out, and too
/// well known to be worth naming in a summary line.
pub fn is_own(name: &OsStr) -> bool {
    [".git", ".tinytool", ".tinycode"]
        .iter()
        .any(|own| name == OsStr::new(own))
}

/// What a config's `not_project.add` entry is, in a summary line.
const ADDED: &str = "listed in the config's not_project.add";

/// The list in effect: the built-in one, with the folder names a config adds and the
/// names it keeps (walks them after all). git's and tinytool's own folders cannot be
/// kept. The default is the built-in list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct NotProject {
    added: Vec<String>,
    kept: Vec<String>,
}

impl NotProject {
    /// The built-in list with `added` names left out too and `kept` names walked.
    pub fn new(added: Vec<String>, kept: Vec<String>) -> NotProject {
        let kept = kept
            .into_iter()
            .filter(|name| !is_own(OsStr::new(name)))
            .collect();
        NotProject { added, kept }
    }

    fn keeps(&self, name: &str) -> bool {
        self.kept.iter().any(|k| k == name)
    }

    /// Why the folder `name` is not the project's, judged by its name and by what is
    /// beside it (`beside` answers whether its parent holds an entry of that name);
    /// `None` when the name says nothing.
    pub fn by_name(&self, name: &OsStr, beside: impl Fn(&str) -> bool) -> Option<&'static str> {
        let text = name.to_str()?;
        if self.keeps(text) {
            return None;
        }
        if let Some((_, why)) = BY_NAME.iter().find(|(n, _)| text == *n) {
            return Some(why);
        }
        if self.added.iter().any(|a| a == text) {
            return Some(ADDED);
        }
        BESIDE
            .iter()
            .find(|(n, file, _)| text == *n && beside(file))
            .map(|(_, _, why)| *why)
    }

    /// Why a folder is not the project's, judged by its own entries (`holds` answers
    /// whether it holds an entry of that name): a marker file (unless the config keeps
    /// the marker's name).
    pub fn by_content(&self, holds: impl Fn(&str) -> bool) -> Option<&'static str> {
        MARKERS
            .iter()
            .find(|(marker, _)| !self.keeps(marker) && holds(marker))
            .map(|(_, why)| *why)
    }

    /// Why the folder at `path` is not the project's, asking the file system (for walkers
    /// that have no listing of it or its parent): by name, what is beside it, and what it
    /// holds.
    pub fn judge(&self, path: &Path) -> Option<&'static str> {
        let name = path.file_name()?;
        let parent = path.parent();
        self.by_name(name, |file| {
            parent.is_some_and(|p| std::fs::symlink_metadata(p.join(file)).is_ok())
        })
        .or_else(|| self.by_content(|marker| std::fs::symlink_metadata(path.join(marker)).is_ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_mean_one_thing_are_left_out_by_name() {
        for name in [
            ".git",
            "node_modules",
            "vendor",
            ".tinycode",
            ".tinytool",
            "__pycache__",
            ".tox",
            ".nox",
            ".mypy_cache",
            ".pytest_cache",
            ".ruff_cache",
            "site-packages",
            ".gradle",
            ".terraform",
            ".venv",
        ] {
            assert!(
                NotProject::default()
                    .by_name(OsStr::new(name), |_| false)
                    .is_some(),
                "{name}"
            );
        }
        for name in [
            "git",
            ".github",
            "vendors",
            "node_module",
            "src",
            ".tinytools",
            "dist",
            "build",
            "target",
            "venv",
            "env",
            "out",
        ] {
            assert!(
                NotProject::default()
                    .by_name(OsStr::new(name), |_| false)
                    .is_none(),
                "{name}"
            );
        }
    }

    #[test]
    fn build_outputs_are_known_by_a_marker_never_by_their_name_alone() {
        let list = NotProject::default();
        let target = OsStr::new("target");
        assert_eq!(
            list.by_name(target, |f| f == "Cargo.toml"),
            Some("Cargo's build output")
        );
        assert_eq!(
            list.by_name(target, |f| f == "pom.xml"),
            Some("Maven's build output")
        );
        assert_eq!(list.by_name(target, |f| f == "package.json"), None);
        assert_eq!(
            list.by_content(|f| f == "pyvenv.cfg"),
            Some("a Python virtual environment")
        );
        assert!(list.by_content(|f| f == "CACHEDIR.TAG").is_some());
        assert_eq!(list.by_content(|f| f == "setup.py"), None);
    }

    #[test]
    fn the_file_system_is_asked_where_there_is_no_listing() {
        let judge = |path: &Path| NotProject::default().judge(path);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for folder in ["env/lib", "rust/target", "java/target", "dist", "cache"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::write(root.join("env/pyvenv.cfg"), "home = /usr\n").unwrap();
        std::fs::write(root.join("rust/Cargo.toml"), "").unwrap();
        std::fs::write(
            root.join("cache/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        assert_eq!(
            judge(&root.join("env")),
            Some("a Python virtual environment")
        );
        assert_eq!(
            judge(&root.join("rust/target")),
            Some("Cargo's build output")
        );
        assert_eq!(judge(&root.join("java/target")), None);
        assert_eq!(judge(&root.join("dist")), None);
        assert!(judge(&root.join("cache")).is_some());
        assert!(is_own(OsStr::new(".git")) && !is_own(OsStr::new("node_modules")));
    }

    #[test]
    fn a_config_adds_names_and_keeps_any_but_gits_and_tinytools_own() {
        let list = NotProject::new(
            vec!["dist".into()],
            vec!["vendor".into(), ".git".into(), "pyvenv.cfg".into()],
        );
        let name = |n: &str| list.by_name(OsStr::new(n), |_| false);
        assert_eq!(name("dist"), Some(ADDED));
        assert_eq!(name("vendor"), None, "kept");
        assert_eq!(name(".git"), Some("git's own"), "never kept");
        assert_eq!(name("node_modules"), Some("installed packages"));
        assert_eq!(
            list.by_content(|f| f == "pyvenv.cfg"),
            None,
            "a kept marker"
        );
        assert!(list.by_content(|f| f == "CACHEDIR.TAG").is_some());
    }
}
