//! The folders no walk of a project descends into: git's and tinytool's own, and
//! installed dependencies. Search, checkpoints and the sandbox's secret scan share it.

use std::ffi::OsStr;

/// Directory names that are never descended into below a walk's root.
pub const SKIP_DIRS: [&str; 5] = [".git", "node_modules", "vendor", ".tinycode", ".tinytool"];

/// Whether a directory with this base name is pruned.
pub fn is_skip_dir(name: &OsStr) -> bool {
    SKIP_DIRS.iter().any(|skip| name == OsStr::new(skip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_dirs_are_exactly_the_spec_list_plus_tinytool() {
        for name in [".git", "node_modules", "vendor", ".tinycode", ".tinytool"] {
            assert!(is_skip_dir(OsStr::new(name)), "{name}");
        }
        for name in [
            "git",
            ".github",
            "vendors",
            "node_module",
            "src",
            ".tinytools",
        ] {
            assert!(!is_skip_dir(OsStr::new(name)), "{name}");
        }
    }
}
