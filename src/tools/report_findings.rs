//! `report_findings`: appends structured review findings to the session.
//! At most 50 per call; every item is validated before anything is stored.

use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::state::Finding;
use crate::tool::{ToolDef, ToolDoc, ToolOutput};

/// Most findings one call may report.
const MAX_PER_CALL: usize = 50;
const SEVERITIES: &[&str] = &["critical", "high", "medium", "low", "info"];

/// The `report_findings` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "report_findings",
        summary: "Record review findings for the session",
        description: "Record structured findings (for example from a code review) in the \
            session: each has a file, a summary, and optionally a line, a severity (critical, \
            high, medium, low, info), a category and a failure scenario. At most 50 per call.",
        permission: "",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Reported N findings (K critical, ...)`, with ` at LEVEL effort level` when a \
                level is given. `tinytool state findings` lists everything reported.",
            errors: "`Too many findings: N exceeds maximum of 50 per call`; `Validation errors:` \
                with one line per problem (`finding[0]: file is required`, ...).",
            examples: &[
                (
                    "Report one finding",
                    "tinytool report_findings --findings '[{\"file\":\"src/a.rs\",\"line\":3,\"severity\":\"high\",\"summary\":\"unchecked index\"}]'",
                ),
                (
                    "Report a finding without a line",
                    "tinytool report_findings --findings '[{\"file\":\"a.rs\",\"severity\":\"low\",\"summary\":\"typo\"}]'",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "findings": {
                "type": "array",
                "description": "The findings (at most 50).",
                "items": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string"},
                        "line": {"type": "integer"},
                        "severity": {"type": "string", "enum": SEVERITIES},
                        "category": {"type": "string"},
                        "summary": {"type": "string"},
                        "failure_scenario": {"type": "string"}
                    },
                    "required": ["file", "summary"],
                    "additionalProperties": false
                }
            },
            "level": {"type": "string", "description": "Effort level of the review (optional)."}
        }),
        &["findings"],
    )
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let items = match args.get("findings") {
        Some(Value::Array(items)) => items.as_slice(),
        _ => &[],
    };
    let level = args
        .get("level")
        .and_then(Value::as_str)
        .map(str::to_string);
    if items.len() > MAX_PER_CALL {
        return Ok(ToolOutput::error(format!(
            "Too many findings: {} exceeds maximum of {MAX_PER_CALL} per call",
            items.len()
        )));
    }
    let (findings, problems) = validate(items, level.as_deref());
    if !problems.is_empty() {
        return Ok(ToolOutput::error(format!(
            "Validation errors:\n{}",
            problems.join("\n")
        )));
    }
    let session = &ctx.session.id;
    let total = ctx
        .session
        .state
        .write(|store| store.add_findings(session, &findings))?;
    let mut props = Map::new();
    props.insert("count".into(), json!(findings.len()));
    props.insert("total".into(), json!(total));
    ctx.publish("session.findings.reported", props);
    let counts: Vec<String> = SEVERITIES
        .iter()
        .filter_map(|sev| {
            let n = findings
                .iter()
                .filter(|f| f.severity.as_deref() == Some(*sev))
                .count();
            (n > 0).then(|| format!("{n} {sev}"))
        })
        .collect();
    let mut text = format!("Reported {} findings", findings.len());
    if !counts.is_empty() {
        text.push_str(&format!(" ({})", counts.join(", ")));
    }
    if let Some(level) = &level {
        text.push_str(&format!(" at {level} effort level"));
    }
    Ok(ToolOutput::text(text)
        .with("count", findings.len())
        .with("total", total))
}

fn validate(items: &[Value], level: Option<&str>) -> (Vec<Finding>, Vec<String>) {
    let mut findings = Vec::new();
    let mut problems = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(fields) = item.as_object() else {
            problems.push(format!(
                "finding[{i}]: must be an object with file and summary"
            ));
            continue;
        };
        let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_string);
        let file = text("file").unwrap_or_default();
        let summary = text("summary").unwrap_or_default();
        if file.trim().is_empty() {
            problems.push(format!("finding[{i}]: file is required"));
        }
        if summary.trim().is_empty() {
            problems.push(format!("finding[{i}]: summary is required"));
        }
        let severity = text("severity");
        if let Some(sev) = &severity
            && !SEVERITIES.contains(&sev.as_str())
        {
            problems.push(format!(
                "finding[{i}]: invalid severity \"{sev}\" (must be critical/high/medium/low/info)"
            ));
        }
        let line = match fields.get("line") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_i64() {
                Some(n) if n >= 0 => Some(n),
                _ => {
                    problems.push(format!("finding[{i}]: line must be a non-negative integer"));
                    None
                }
            },
        };
        for key in fields.keys() {
            if ![
                "file",
                "line",
                "severity",
                "category",
                "summary",
                "failure_scenario",
            ]
            .contains(&key.as_str())
            {
                problems.push(format!(
                    "finding[{i}]: unknown field \"{key}\" (fields are file, line, severity, category, summary, failure_scenario)"
                ));
            }
        }
        findings.push(Finding {
            file,
            line,
            severity,
            category: text("category"),
            summary,
            failure_scenario: text("failure_scenario"),
            level: level.map(str::to_string),
        });
    }
    (findings, problems)
}
