//! `websearch`: a web search through the Exa API. Registered only
//! when `EXA_API_KEY` is set; the key is read again at call time.
//!
//! The request is `POST <endpoint>` with `{"query": Q, "numResults": N}` (N = 8 when absent
//! or not positive), `Content-Type: application/json` and `x-api-key: KEY`, 30 s for the
//! whole exchange, at most 5 MB of response read. The endpoint is
//! `https://api.exa.ai/search` unless the **user** config sets `websearch.endpoint` (the
//! project config cannot: a cloned repository must not be able to send the key elsewhere).
//!
//! The SSRF guard of webfetch does not apply here, deliberately: the destination is never
//! chosen by the caller (only the query and the count are), it is either Exa or an endpoint
//! the user configured, and a user may well point it at a local proxy or test server on
//! loopback. Proxy variables of the environment are honoured for the same reason.
//!
//! Output: `## Search results for: Q`, a blank line, then per result `### i. TITLE`,
//! `**URL:** URL`, the text (when Exa returned any) after a blank line, and a blank line;
//! `No results found for: Q` when there are none.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput, parse_args};

/// The Exa search endpoint used unless the user config names another.
const DEFAULT_ENDPOINT: &str = "https://api.exa.ai/search";
/// Deadline of one search request, response included.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Results asked for when `num_results` is absent or not positive.
const DEFAULT_RESULTS: i64 = 8;
/// Most response bytes read.
const MAX_RESPONSE: u64 = 5 * 1024 * 1024;
/// The environment variable holding the Exa API key.
const KEY_VAR: &str = "EXA_API_KEY";

/// Whether websearch is available in this environment (`EXA_API_KEY` set, not empty).
pub fn enabled() -> bool {
    std::env::var_os(KEY_VAR).is_some_and(|k| !k.is_empty())
}

/// The `websearch` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "websearch",
        summary: "Search the web (Exa API)",
        description: "Search the web. Returns the results as Markdown: a heading per result \
            with its title, its URL, and an excerpt when one is available. Use webfetch to \
            read a result in full.",
        permission: "read",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`## Search results for: QUERY`, a blank line, then for each result `### N. \
                TITLE`, `**URL:** URL`, its text after a blank line when the API returned some, \
                and a blank line. `No results found for: QUERY` when there are none. Only \
                available when the EXA_API_KEY environment variable is set; the endpoint is \
                https://api.exa.ai/search unless the user config sets websearch.endpoint.",
            errors: "`query is required`; `EXA_API_KEY environment variable is not set`; \
                `Search request failed: ...` (network, 30 s timeout); `Exa API error (HTTP \
                CODE): BODY` for any status but 200; `Failed to read response: ...`; \
                `Failed to parse response: ...` when the answer is not the expected JSON.",
            examples: &[
                (
                    "Search with the default of 8 results",
                    "tinytool websearch --query 'rust ureq timeout'",
                ),
                (
                    "Ask for 3 results",
                    "tinytool websearch --query 'sqlite WAL busy timeout' --num-results 3",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "query": {
                "type": "string",
                "description": "The search query."
            },
            "num_results": {
                "type": "integer",
                "description": "Number of results (default 8)."
            }
        }),
        &["query"],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    num_results: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct SearchResponse {
    results: Vec<SearchResult>,
}

#[derive(Debug, Deserialize)]
struct SearchResult {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: SearchArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.query.is_empty() {
        return Ok(ToolOutput::error("query is required"));
    }
    let key = std::env::var(KEY_VAR).unwrap_or_default();
    if key.is_empty() {
        return Ok(ToolOutput::error(format!(
            "{KEY_VAR} environment variable is not set"
        )));
    }
    let num_results = args
        .num_results
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_RESULTS);
    let endpoint = ctx
        .session
        .config
        .websearch_endpoint
        .clone()
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    let payload = json!({"query": args.query, "numResults": num_results});
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let response = agent
        .post(&endpoint)
        .header("Content-Type", "application/json")
        .header("x-api-key", &key)
        .send(payload.to_string());
    let mut response = match response {
        Ok(response) => response,
        Err(err) => return Ok(ToolOutput::error(format!("Search request failed: {err}"))),
    };
    let status = response.status().as_u16();
    let body = match response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
    {
        Ok(body) => String::from_utf8_lossy(&body).into_owned(),
        Err(err) => return Ok(ToolOutput::error(format!("Failed to read response: {err}"))),
    };
    if status != 200 {
        return Ok(
            ToolOutput::error(format!("Exa API error (HTTP {status}): {body}"))
                .with("status", status),
        );
    }
    let parsed: SearchResponse = match serde_json::from_str(&body) {
        Ok(parsed) => parsed,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Failed to parse response: {err}"
            )));
        }
    };
    let count = parsed.results.len();
    Ok(ToolOutput::text(format_results(&args.query, &parsed.results)).with("results", count))
}

/// The reference's output format.
fn format_results(query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("No results found for: {query}");
    }
    let mut out = format!("## Search results for: {query}\n\n");
    for (i, result) in results.iter().enumerate() {
        out.push_str(&format!(
            "### {}. {}\n**URL:** {}\n",
            i + 1,
            result.title.as_deref().unwrap_or_default(),
            result.url.as_deref().unwrap_or_default()
        ));
        if let Some(text) = result.text.as_deref().filter(|t| !t.is_empty()) {
            out.push('\n');
            out.push_str(text);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(title: &str, url: &str, text: Option<&str>) -> SearchResult {
        SearchResult {
            title: Some(title.into()),
            url: Some(url.into()),
            text: text.map(str::to_string),
        }
    }

    #[test]
    fn results_format_as_the_reference() {
        let out = format_results(
            "test query",
            &[
                result("First", "https://a.example/1", Some("First text")),
                result("Second", "https://b.example/2", None),
                result("Third", "https://c.example/3", Some("")),
            ],
        );
        assert_eq!(
            out,
            "## Search results for: test query\n\n\
             ### 1. First\n**URL:** https://a.example/1\n\nFirst text\n\n\
             ### 2. Second\n**URL:** https://b.example/2\n\n\
             ### 3. Third\n**URL:** https://c.example/3\n\n"
        );
        assert_eq!(format_results("q", &[]), "No results found for: q");
    }

    #[test]
    fn responses_parse_with_missing_and_extra_fields() {
        let parsed: SearchResponse = serde_json::from_str(
            r#"{"results":[{"title":"T","url":"U","score":0.5},{"url":"V","text":null}],"requestId":"x"}"#,
        )
        .unwrap();
        assert_eq!(parsed.results.len(), 2);
        assert_eq!(parsed.results[1].title, None);
        assert!(serde_json::from_str::<SearchResponse>(r#"{"data":[]}"#).is_err());
    }
}
