//! The last line of a failed sandboxed command's output: which sandbox rule stopped it and
//! which policy setting would allow it, recognised from the command's own error messages.
//!
//! - under Landlock alone, `Permission denied`: the writable set;
//! - `Read-only file system`, or `Device or resource busy` / `Permission denied` /
//!   `Invalid cross-device link` (a hard link to a bound file) on a protected path: the filesystem rule (`sandbox.writable` opens a path outside the
//!   project; protected paths cannot be opened);
//! - a masked secret named in the output: the masking rule (`secret-shell` allow);
//! - `Connection refused`, `Network is unreachable`, `Could not resolve host`, … with the
//!   network off: `sandbox.network`.

/// The explanation for a failed command whose output is `text`, or `None` when nothing in
/// it points at the sandbox.
pub fn explain(
    text: &str,
    network_off: bool,
    landlock: bool,
    masked: &[String],
    protected: &[String],
) -> Option<String> {
    let names_protected = protected
        .iter()
        .any(|p| !p.is_empty() && text.contains(p.as_str()));
    // Under Landlock alone a write outside the writable set fails with EACCES.
    if landlock && text.contains("Permission denied") {
        return Some("[sandbox: Landlock allows writes only in --dir, /tmp and sandbox.writable; add the path to \"sandbox\": {\"writable\": [...]} in the user policy to allow it]".to_string());
    }
    if text.contains("Read-only file system")
        || ((text.contains("Device or resource busy")
            || text.contains("Permission denied")
            || text.contains("Invalid cross-device link"))
            && names_protected)
    {
        return Some(if names_protected {
            "[sandbox: a protected path (git config and hooks, .tinytool/, the policy file, the user config and state directories) is read-only inside the sandbox; no policy setting opens it]".to_string()
        } else {
            "[sandbox: the file system outside --dir and /tmp is read-only; add the path to \"sandbox\": {\"writable\": [...]} in the user policy to allow it]".to_string()
        });
    }
    if network_off {
        const SIGNS: [&str; 12] = [
            "Connection refused",
            "Network is unreachable",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Name or service not known",
            "Couldn't connect to server",
            "No route to host",
            "Failed to connect",
            "Connection timed out",
            "ECONNREFUSED",
            "ENETUNREACH",
            "EAI_AGAIN",
        ];
        if SIGNS.iter().any(|s| text.contains(s)) {
            return Some("[sandbox: the network is off for commands (\"sandbox\": {\"network\": false}); only the command's own loopback exists]".to_string());
        }
    }
    if masked
        .iter()
        .any(|m| !m.is_empty() && text.contains(m.as_str()))
    {
        return Some("[sandbox: secret files read as empty inside the sandbox; a secret-shell allow rule for the command lifts the masking]".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_rule_from_the_error() {
        assert!(
            explain(
                "touch: cannot touch '/etc/x': Read-only file system",
                false,
                false,
                &[],
                &[]
            )
            .unwrap()
            .contains("writable")
        );
        assert!(
            explain(
                "mv: cannot move '.git' to '.g': Device or resource busy",
                false,
                false,
                &[],
                &[".git".into()]
            )
            .unwrap()
            .contains("protected")
        );
        assert!(
            explain("curl: (7) Connection refused", true, false, &[], &[])
                .unwrap()
                .contains("network")
        );
        assert_eq!(
            explain("curl: (7) Connection refused", false, false, &[], &[]),
            None
        );
        assert_eq!(explain("all good", true, false, &[], &[]), None);
    }
}
