//! `webfetch`: fetch a URL over http or https and show it as text, Markdown or raw HTML,
//! with SSRF protection a security team can sign off
//! on ([`ssrf`]).
//!
//! One fetch is at most 10 redirect hops, each followed here rather than by the HTTP
//! client, so every hop is parsed with WHATWG rules and judged again (scheme, address)
//! before it is requested. One 30 s deadline covers the whole fetch: lookups, connects
//! (10 s each), waits for response headers (15 s each), every hop and the body. The body is
//! read into a buffer of at most 5 MB; a longer body keeps its first 5 MB and says so. TLS
//! is rustls with the ring provider, TLS 1.2 and 1.3 only. No proxy is used, whatever the
//! environment says: a proxy would resolve the target itself, out of the guard's sight.
//!
//! Request headers: `User-Agent: tinytool/<version> (compatible; fetch tool)` and an
//! `Accept` fitting the format, both replaceable by the caller. Caller headers that carry
//! credentials (`Authorization`, `Cookie`, `Set-Cookie`, `Proxy-Authorization`,
//! `X-Api-Key`) or that belong to the connection (`Host`, `Content-Length`,
//! `Transfer-Encoding`, `Connection`, ...) are dropped and listed in
//! `metadata.dropped_headers`; credentials in the URL's userinfo are not sent either.
//!
//! Output: `HTTP <code> <reason>`, a blank line, the body. A text body is decoded from its
//! charset ([`charset`]: byte order mark, `Content-Type`, an HTML page's `<meta>`, else
//! UTF-8). HTML is converted for `text` ([`plain`]) and `markdown` ([`convert`]); other
//! text is shown as it is; binary bodies are described by type and size. A status of 400
//! or more is a tool error that keeps the body.

mod charset;
mod convert;
mod groups;
mod plain;
mod ssrf;

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use ureq::http::{self, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use ureq::unversioned::transport::{Connector, RustlsConnector, TcpConnector};
use ureq::{Agent, AsSendBody};
use url::Url;

use self::convert::Kind;
use self::ssrf::{AllowList, Blocked, GuardConnector, GuardResolver, LookupFailed, Refusal};
use crate::schema;
use crate::session::CallContext;
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};
use crate::truncate::Capture;

/// Most body bytes kept (spec `maxFetchSize`, 5 MB).
pub const MAX_BODY: u64 = 5 * 1024 * 1024;
/// Deadline of the whole fetch, redirects and body included (spec `fetchTimeout`).
const DEADLINE: Duration = Duration::from_secs(30);
/// Longest wait for a name lookup, and for a connection (TLS handshake included).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the response headers once the request is sent.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(15);
/// Redirects followed before giving up.
const MAX_REDIRECTS: u32 = 10;

/// Caller headers that carry credentials: never sent (the reference's list).
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "set-cookie",
    "proxy-authorization",
    "x-api-key",
];

/// Caller headers the HTTP client owns (framing, connection, content coding): never sent
/// as given, since a wrong one would desynchronize the connection.
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "accept-encoding",
];

/// The `User-Agent` sent unless the caller gives one.
fn user_agent() -> String {
    format!(
        "tinytool/{} (compatible; fetch tool)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The `webfetch` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "webfetch",
        summary: "Fetch a URL as text, Markdown or HTML",
        description: "Fetch a URL (http or https) and return `HTTP <code> <reason>`, a blank \
            line and the body. format `text` (default) converts HTML pages to plain text with \
            links numbered `[N]` and listed at the end; `markdown` converts them to Markdown \
            with inline links (both drop scripts, styles and the head); `html` returns the \
            page as it is. Bodies are decoded from their charset to UTF-8. Other text is \
            returned as it is and binary bodies are described. Bodies over 5 MB are \
            cut. Loopback, private, link-local and other internal addresses are refused on \
            every redirect hop. Status 400 and above is an error that keeps the body. The \
            default policy asks before every fetch (`webfetch * ask`); where nobody can \
            answer, a policy rule must allow the URLs (see man tinytool-policy).",
        permission: "webfetch",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: Some(precheck),
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`HTTP <code> <reason>`, a blank line, then the body, decoded to UTF-8 \
                from the charset a byte order mark, the Content-Type header or (for HTML) a \
                `<meta>` in the first 1024 bytes names, else UTF-8 (WHATWG labels: \
                iso-8859-1 decodes as windows-1252). HTML converted to plain text (`text`: \
                no Markdown marks, wrapped at 120 columns; headings as their text between \
                blank lines, `- ` and `1. ` list items, tables as space-separated columns, \
                images as `[image: ALT]`, each link as its text and ` [N]`, with `Links:` and \
                one `[N] URL` per line at the end, a repeated URL keeping its number) or \
                Markdown (`markdown`: ATX headings, inline links, lists, fenced code), with \
                relative links made absolute; the page as it is for `html`; other text as it \
                is; `[binary body: TYPE, N bytes, not shown]` for \
                binary content; `(empty body)` when there is none. A body over 5 MB keeps its \
                first 5 MB and ends with `[body cut at 5 MB of N bytes]` (or `of unknown \
                size`). metadata: status, content_type, final_url (after redirects), bytes \
                (body bytes received), body_truncated, redirects; charset (the encoding \
                the body was decoded from, e.g. UTF-8, windows-1252, Shift_JIS) for a \
                shown body; total_bytes when a cut body's size is known; dropped_headers \
                when caller headers were not sent; binary when the body is not shown; lossy \
                when bytes invalid in the charset were replaced by U+FFFD.",
            errors: "`invalid URL: REASON`; `only http and https URLs are allowed (got \
                SCHEME)`; `blocked: URL resolves to private/internal network address ADDR \
                (RANGE)` for loopback, private, link-local, CGNAT, benchmarking, multicast, \
                reserved and broadcast IPv4, and the IPv6 equivalents including IPv4-mapped, \
                IPv4-compatible, NAT64 and 6to4 forms of those (checked before the request, \
                at lookup and at connect, on every redirect hop; only the user config's \
                webfetch.allow_hosts can open a host); `Fetch error: ...` for lookups, \
                connections, TLS, timeouts (30 s for the whole fetch) and more than 10 \
                redirects; `Error reading response: ...` when the body breaks off. A status \
                of 400 or more is an error whose output is the response as usual. A blocked \
                address is also in metadata: blocked_address, blocked_range.",
            examples: &[
                (
                    "A documentation page as Markdown",
                    "tinytool webfetch --url https://docs.rs/ureq --format markdown",
                ),
                (
                    "Raw HTML of a page",
                    "tinytool webfetch --url https://example.com --format html",
                ),
                (
                    "A JSON API call with a header and a body",
                    "tinytool webfetch --url https://httpbin.org/post --method POST --headers '{\"Content-Type\":\"application/json\"}' --body '{\"a\":1}'",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "url": {
                "type": "string",
                "description": "The URL to fetch (http or https)."
            },
            "method": {
                "type": "string",
                "description": "HTTP method (default GET)."
            },
            "headers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Additional request headers, name to value. Credential headers (Authorization, Cookie, X-Api-Key, ...) are not sent."
            },
            "body": {
                "type": "string",
                "description": "Request body, sent when not empty."
            },
            "format": {
                "type": "string",
                "enum": ["text", "markdown", "html"],
                "description": "How to return an HTML page: text (default; plain text, links numbered and listed at the end), markdown (inline links), or html (raw)."
            }
        }),
        &["url"],
    )
}

/// The syntactic check made before the policy is asked: a URL that does not parse, or
/// is not http(s), is a tool error, never a question about a rule for it.
pub fn precheck(args: &Map<String, Value>) -> Option<String> {
    let url = args.get("url").and_then(Value::as_str)?;
    match ssrf::parse_url(url) {
        Err(refusal @ (ssrf::Refusal::Invalid(_) | ssrf::Refusal::Scheme(_))) => {
            Some(refusal.to_string())
        }
        _ => None,
    }
}

/// A fetch needs `webfetch` of the URL as given (trimmed).
fn access(_ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let url = args.get("url").and_then(Value::as_str).unwrap_or_default();
    vec![Access::new("webfetch", url.trim())]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    url: String,
    method: Option<String>,
    headers: Option<Map<String, Value>>,
    body: Option<String>,
    format: Option<Format>,
}

/// What to make of an HTML page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Readable plain text.
    #[default]
    Text,
    /// Markdown.
    Markdown,
    /// The page as it is.
    Html,
}

impl Format {
    fn accept(self) -> &'static str {
        match self {
            Format::Text => "text/plain, text/html;q=0.9, */*;q=0.8",
            Format::Markdown => "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.7",
            Format::Html => "text/html, application/xhtml+xml;q=0.9, */*;q=0.8",
        }
    }
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: FetchArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let allow = match AllowList::parse(&ctx.session.config.allow_hosts) {
        Ok(allow) => Arc::new(allow),
        Err(message) => {
            return Ok(ToolOutput::error(format!(
                "{message}\nFix the entry in the user config ({}).",
                user_config_path()
            )));
        }
    };
    let format = args.format.unwrap_or_default();
    let url = match ssrf::parse_url(&args.url) {
        Ok(url) => url,
        Err(refusal) => return Ok(refused(&refusal, None)),
    };
    let method = match parse_method(args.method.as_deref()) {
        Ok(method) => method,
        Err(message) => return Ok(ToolOutput::error(message)),
    };
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::USER_AGENT,
        HeaderValue::from_str(&user_agent())?,
    );
    headers.insert(
        http::header::ACCEPT,
        HeaderValue::from_static(format.accept()),
    );
    let mut dropped = Vec::new();
    for (name, value) in args.headers.unwrap_or_default() {
        let Some(text) = value.as_str() else {
            return Ok(ToolOutput::error(format!(
                "headers.{name}: expected a string value, got {value}"
            )));
        };
        let lower = name.trim().to_ascii_lowercase();
        if CREDENTIAL_HEADERS.contains(&lower.as_str())
            || TRANSPORT_HEADERS.contains(&lower.as_str())
        {
            dropped.push(name);
            continue;
        }
        let header = HeaderName::from_bytes(lower.as_bytes());
        let value = HeaderValue::from_str(text);
        match (header, value) {
            (Ok(header), Ok(value)) => {
                headers.insert(header, value);
            }
            (Err(_), _) => {
                return Ok(ToolOutput::error(format!(
                    "headers: {name:?} is not a valid header name"
                )));
            }
            (_, Err(_)) => {
                return Ok(ToolOutput::error(format!(
                    "headers.{name}: the value is not a valid header value (no control characters or line breaks)"
                )));
            }
        }
    }
    let request = Request {
        url,
        method,
        headers,
        body: args.body.filter(|b| !b.is_empty()).map(String::into_bytes),
    };
    let fetched = match fetch(request, allow, Limits::default()) {
        Ok(fetched) => fetched,
        Err(FetchError::Refused { refusal, hop }) => return Ok(refused(&refusal, hop.as_deref())),
        Err(FetchError::Failed(message)) => return Ok(ToolOutput::error(message)),
    };
    let mut output = render(ctx, &fetched, format);
    if !dropped.is_empty() {
        output = output.with("dropped_headers", dropped);
    }
    Ok(output)
}

fn parse_method(method: Option<&str>) -> Result<Method, String> {
    let name = method
        .map(str::trim)
        .unwrap_or_default()
        .to_ascii_uppercase();
    if name.is_empty() {
        return Ok(Method::GET);
    }
    if name == "CONNECT" {
        return Err("method CONNECT is not supported: webfetch makes requests, not tunnels".into());
    }
    Method::from_bytes(name.as_bytes())
        .map_err(|_| format!("method {name:?} is not a valid HTTP method (GET, POST, PUT, ...)"))
}

fn user_config_path() -> String {
    crate::config::user_config_dir()
        .map(|d| d.join("config.json").display().to_string())
        .unwrap_or_else(|| "~/.config/tinytool/config.json".to_string())
}

/// The tool error for a refused URL: the refusal first, then where and what to do.
fn refused(refusal: &Refusal, hop: Option<&str>) -> ToolOutput {
    let mut text = refusal.to_string();
    if let Some(hop) = hop {
        text.push('\n');
        text.push_str(hop);
    }
    let mut output = ToolOutput::error(String::new());
    if let Refusal::Blocked(blocked) = refusal {
        output = output
            .with("blocked_address", blocked.addr.to_string())
            .with("blocked_range", blocked.range.clone());
        text.push_str(&format!(
            "\nwebfetch never reaches loopback, private, link-local or other internal \
             addresses. A host you trust can be opened in the user config ({}): \
             {{\"webfetch\": {{\"allow_hosts\": [\"host:port\"]}}}}",
            user_config_path()
        ));
    }
    output.body = crate::tool::Body::Text(text);
    output
}

/// The time limits and caps of one fetch; [`Limits::default`] is the tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The whole fetch, body included.
    pub deadline: Duration,
    /// Each lookup and each connection.
    pub connect: Duration,
    /// Each wait for response headers.
    pub response: Duration,
    /// Body bytes kept.
    pub max_body: u64,
    /// Redirects followed.
    pub max_redirects: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: DEADLINE,
            connect: CONNECT_TIMEOUT,
            response: RESPONSE_TIMEOUT,
            max_body: MAX_BODY,
            max_redirects: MAX_REDIRECTS,
        }
    }
}

/// A request, checked and ready.
#[derive(Debug, Clone)]
pub struct Request {
    /// Where to (already through [`ssrf::parse_url`]).
    pub url: Url,
    /// The method.
    pub method: Method,
    /// Every header to send.
    pub headers: HeaderMap,
    /// The body, when there is one.
    pub body: Option<Vec<u8>>,
}

/// What a fetch brought back.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// Status code of the last response.
    pub status: StatusCode,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// The URL that answered (after redirects).
    pub final_url: Url,
    /// The body, at most `max_body` bytes.
    pub body: Vec<u8>,
    /// Whether the body was longer than `max_body`.
    pub truncated: bool,
    /// The body's full size when the response declared it (identity coding only).
    pub total: Option<u64>,
    /// Redirects followed.
    pub redirects: u32,
    /// The cap that applied.
    pub max_body: u64,
}

/// Why a fetch ended without a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// Refused by the URL rules or the SSRF guard; `hop` says which redirect, if any.
    Refused {
        /// The refusal.
        refusal: Refusal,
        /// `while following redirect N: FROM -> TO`.
        hop: Option<String>,
    },
    /// Anything else, with the full message (`Fetch error: ...`).
    Failed(String),
}

/// Builds the agent: no proxy, no automatic redirects, statuses as responses, the guard
/// resolver and the guard in front of TCP and TLS.
fn agent(allow: &Arc<AllowList>, limits: &Limits) -> Agent {
    let config = Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .allow_non_standard_methods(true)
        .user_agent("")
        .accept("")
        .timeout_resolve(Some(limits.connect))
        .timeout_connect(Some(limits.connect))
        .timeout_recv_response(Some(limits.response))
        .build();
    let connector = GuardConnector::new(Arc::clone(allow))
        .chain(TcpConnector::default())
        .chain(RustlsConnector::default());
    Agent::with_parts(config, connector, GuardResolver::new(Arc::clone(allow)))
}

/// Runs a request, following redirects hop by hop, each hop judged again.
pub fn fetch(
    request: Request,
    allow: Arc<AllowList>,
    limits: Limits,
) -> Result<Fetched, FetchError> {
    let started = Instant::now();
    let agent = agent(&allow, &limits);
    let Request {
        mut url,
        mut method,
        mut headers,
        mut body,
    } = request;
    let mut redirects = 0;
    let mut hop: Option<String> = None;
    loop {
        ssrf::check_url(&url, &allow).map_err(|blocked| FetchError::Refused {
            refusal: Refusal::Blocked(blocked),
            hop: hop.clone(),
        })?;
        let remaining = limits
            .deadline
            .checked_sub(started.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                FetchError::Failed(format!(
                    "Fetch error: {}",
                    describe_timeout(ureq::Timeout::Global, &limits)
                ))
            })?;
        let sent = match &body {
            Some(bytes) => send(&agent, &url, &method, &headers, bytes.as_slice(), remaining),
            None => send(&agent, &url, &method, &headers, (), remaining),
        };
        let response = sent.map_err(|err| failure(&err, &method, &url, hop.as_deref(), &limits))?;
        let status = response.status();
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
        if let (true, Some(location)) = (status.is_redirection(), location) {
            if redirects >= limits.max_redirects {
                return Err(FetchError::Failed(format!(
                    "Fetch error: stopped after {} redirects (last: {url} -> {location})",
                    limits.max_redirects
                )));
            }
            redirects += 1;
            let from = url.to_string();
            let next =
                ssrf::parse_location(&url, &location).map_err(|refusal| FetchError::Refused {
                    refusal,
                    hop: Some(format!(
                        "while following redirect {redirects}: {from} -> {location}"
                    )),
                })?;
            hop = Some(format!(
                "while following redirect {redirects}: {from} -> {next}"
            ));
            let keeps_body = matches!(status.as_u16(), 307 | 308);
            let to_get = match status.as_u16() {
                301 | 302 => method == Method::POST,
                303 => method != Method::GET && method != Method::HEAD,
                _ => false,
            };
            if to_get {
                method = Method::GET;
            }
            if !keeps_body && body.take().is_some() {
                for name in [
                    http::header::CONTENT_TYPE,
                    http::header::CONTENT_ENCODING,
                    http::header::CONTENT_LANGUAGE,
                    http::header::CONTENT_LOCATION,
                ] {
                    headers.remove(name);
                }
            }
            url = next;
            continue;
        }
        return read_body(response, url, redirects, &limits);
    }
}

/// One request of a fetch, with what remains of the deadline as its global timeout.
fn send(
    agent: &Agent,
    url: &Url,
    method: &Method,
    headers: &HeaderMap,
    body: impl AsSendBody,
    remaining: Duration,
) -> Result<http::Response<ureq::Body>, ureq::Error> {
    let mut request = http::Request::builder()
        .method(method.clone())
        .uri(url.as_str())
        .body(body)?;
    *request.headers_mut() = headers.clone();
    let request = agent
        .configure_request(request)
        .timeout_global(Some(remaining))
        .build();
    agent.run(request)
}

/// Reads at most `max_body` bytes of the body; one byte more tells whether it was cut.
fn read_body(
    response: http::Response<ureq::Body>,
    final_url: Url,
    redirects: u32,
    limits: &Limits,
) -> Result<Fetched, FetchError> {
    let status = response.status();
    let header = |name: http::header::HeaderName| {
        response
            .headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
    };
    let content_type = header(http::header::CONTENT_TYPE).filter(|t| !t.is_empty());
    let identity = header(http::header::CONTENT_ENCODING)
        .is_none_or(|e| e.is_empty() || e.eq_ignore_ascii_case("identity"));
    let declared = response.body().content_length().filter(|_| identity);
    let capacity = declared.unwrap_or(64 * 1024).min(limits.max_body);
    let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    let mut reader = response.into_body().into_reader();
    let read_error = |err: std::io::Error| {
        let inner = err
            .get_ref()
            .and_then(|e| e.downcast_ref::<ureq::Error>())
            .map(|e| describe(e, limits));
        FetchError::Failed(format!(
            "Error reading response: {}",
            inner.unwrap_or_else(|| err.to_string())
        ))
    };
    (&mut reader)
        .take(limits.max_body)
        .read_to_end(&mut body)
        .map_err(read_error)?;
    // One byte more tells whether the body was longer than the cap. A body that stalls
    // or breaks right at the cap is reported as cut: its end was never seen.
    let mut probe = [0u8; 1];
    let truncated = body.len() as u64 == limits.max_body
        && loop {
            match reader.read(&mut probe) {
                Ok(n) => break n > 0,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break true,
            }
        };
    Ok(Fetched {
        status,
        content_type,
        final_url,
        body,
        truncated,
        total: declared.filter(|_| truncated),
        redirects,
        max_body: limits.max_body,
    })
}

/// The message of a failed request: a refusal when the guard said no, else `Fetch error:`.
fn failure(
    err: &ureq::Error,
    method: &Method,
    url: &Url,
    hop: Option<&str>,
    limits: &Limits,
) -> FetchError {
    if let ureq::Error::Other(inner) = err
        && let Some(blocked) = inner.downcast_ref::<Blocked>()
    {
        return FetchError::Refused {
            refusal: Refusal::Blocked(blocked.clone()),
            hop: hop.map(str::to_string),
        };
    }
    let mut message = format!("Fetch error: {method} {url}: {}", describe(err, limits));
    if let Some(hop) = hop {
        message.push('\n');
        message.push_str(hop);
    }
    FetchError::Failed(message)
}

fn describe(err: &ureq::Error, limits: &Limits) -> String {
    match err {
        ureq::Error::Timeout(which) => describe_timeout(*which, limits),
        ureq::Error::Other(inner) => match inner.downcast_ref::<LookupFailed>() {
            Some(lookup) => lookup.to_string(),
            None => inner.to_string(),
        },
        ureq::Error::Io(io) => io.to_string(),
        ureq::Error::Rustls(tls) => format!("TLS: {tls}"),
        ureq::Error::Tls(tls) => format!("TLS: {tls}"),
        ureq::Error::HostNotFound => "DNS lookup found no address".to_string(),
        other => other.to_string(),
    }
}

fn describe_timeout(which: ureq::Timeout, limits: &Limits) -> String {
    match which {
        ureq::Timeout::Global => format!(
            "timed out: the fetch did not finish within {} (the deadline covers every \
             redirect and the whole body)",
            seconds(limits.deadline)
        ),
        ureq::Timeout::Resolve => format!(
            "timed out: the DNS lookup took longer than {}",
            seconds(limits.connect)
        ),
        ureq::Timeout::Connect => format!(
            "timed out: connecting took longer than {}",
            seconds(limits.connect)
        ),
        ureq::Timeout::RecvResponse => format!(
            "timed out: no response headers within {}",
            seconds(limits.response)
        ),
        other => format!("timed out ({other})"),
    }
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// "5 MB" for the default cap.
fn size_label(bytes: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The tool output for a response.
fn render(ctx: &CallContext, fetched: &Fetched, format: Format) -> ToolOutput {
    let status = fetched.status;
    let mut capture = Capture::new(ctx.session.limits.clone());
    capture.push_str(&format!("HTTP {}", status.as_u16()));
    if let Some(reason) = status.canonical_reason() {
        capture.push_str(&format!(" {reason}"));
    }
    capture.push_str("\n\n");
    let content_type = fetched.content_type.as_deref();
    let html = convert::may_be_html(content_type, &fetched.body);
    let charset = charset::detect(content_type, &fetched.body, html);
    let kind = convert::classify(content_type, &fetched.body, charset.encoding);
    let mut lossy = false;
    let shown = !fetched.body.is_empty() && kind != Kind::Binary;
    if fetched.body.is_empty() {
        capture.push_str("(empty body)");
    } else if kind == Kind::Binary {
        capture.push_str(&format!(
            "[binary body: {}, {} bytes, not shown]",
            content_type.unwrap_or("no content type"),
            fetched.body.len()
        ));
    } else {
        let (text, replaced) = charset::decode(&fetched.body, &charset, !fetched.truncated);
        lossy = replaced;
        match (kind, format) {
            (Kind::Html, Format::Markdown) => {
                let sink = &mut |part: &str| capture.push_str(part);
                convert::markdown_into(&text, Some(&fetched.final_url), sink);
            }
            (Kind::Html, Format::Text) => {
                let sink = &mut |part: &str| capture.push_str(part);
                convert::text_into(&text, Some(&fetched.final_url), sink);
            }
            _ => capture.push_str(&text),
        }
    }
    if fetched.truncated {
        let of = match fetched.total {
            Some(total) => format!("{total} bytes"),
            None => "unknown size".to_string(),
        };
        capture.push_str(&format!(
            "\n\n[body cut at {} of {of}]",
            size_label(fetched.max_body)
        ));
    }
    let mut output = ToolOutput::captured(capture);
    output.is_error = status.as_u16() >= 400;
    let mut output = output
        .with("status", status.as_u16())
        .with(
            "content_type",
            fetched
                .content_type
                .clone()
                .map_or(Value::Null, Value::String),
        )
        .with("final_url", fetched.final_url.to_string())
        .with("bytes", fetched.body.len())
        .with("body_truncated", fetched.truncated)
        .with("redirects", fetched.redirects);
    if let Some(total) = fetched.total {
        output = output.with("total_bytes", total);
    }
    if kind == Kind::Binary && !fetched.body.is_empty() {
        output = output.with("binary", true);
    }
    if shown {
        output = output.with("charset", charset.name());
    }
    if lossy {
        output = output.with("lossy", true);
    }
    output
}

#[cfg(test)]
mod tests;
