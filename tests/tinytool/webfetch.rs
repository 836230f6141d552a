//! webfetch seen from outside, against a loopback server the test starts and opens with
//! the user config's `webfetch.allow_hosts`: formats, redirects (and refused hops), the
//! body cap, status codes, header dropping, binary bodies, SSRF refusals, the policy.

use encoding_rs::{Encoding, SHIFT_JIS, WINDOWS_1252};
use serde_json::{Value, json};

use crate::httpd::{Payload, Reply, Server};
use crate::util::Room;

const PAGE: &str = r#"<!DOCTYPE html>
<html>
<head><title>Page title</title><style>h1 { color: red }</style>
<script>var token = "script text";</script></head>
<body>
<noscript>Enable JavaScript</noscript>
<h1>Getting started</h1>
<p>Read the <a href="https://example.com/guide">guide</a> or the <a href="/api">API docs</a>.</p>
<h2>Install</h2>
<ul><li>Download the binary</li><li>Put it on your <code>PATH</code></li></ul>
<h3>Steps</h3>
<ol><li>Configure</li><li>Run</li></ol>
<pre><code class="language-sh">tinytool webfetch --url https://example.com
</code></pre>
<script>console.log("more script text")</script>
</body>
</html>"#;

/// A room whose user config opens the server's host and whose user policy allows
/// webfetch (the default asks, and ask means deny without a terminal).
fn web_room(server: &Server) -> Room {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"webfetch": {"allow_hosts": [format!("127.0.0.1:{}", server.port)]}}).to_string(),
    );
    room.write_user("policy.json", ALLOW_WEBFETCH);
    room
}

const ALLOW_WEBFETCH: &str =
    r#"{"rules":[{"permission":"webfetch","pattern":"*","action":"allow"}]}"#;

/// The result with the server's port and the room's home replaced, for snapshots.
fn redacted(result: &Value, server: &Server, room: &Room) -> Value {
    let text = result
        .to_string()
        .replace(&format!("127.0.0.1:{}", server.port), "127.0.0.1:PORT")
        .replace(&room.home.to_string_lossy().into_owned(), "HOME");
    serde_json::from_str(&text).unwrap()
}

fn fetch(room: &Room, args: Value) -> (i32, Value) {
    let run = room.call("webfetch", args);
    (run.code, run.json())
}

fn output(result: &Value) -> &str {
    result["output"].as_str().unwrap_or_default()
}

fn page_server() -> Server {
    Server::start(|r| match r.path.as_str() {
        "/page" => Reply::ok("text/html; charset=utf-8", PAGE),
        "/json" => Reply::ok("application/json", r#"{"a": [1, 2]}"#),
        "/plain" => Reply::ok("text/plain", "just text\n"),
        "/untyped" => Reply {
            status: 200,
            headers: vec![],
            payload: Payload::Bytes(PAGE.as_bytes().to_vec()),
        },
        _ => Reply::new(404, "text/html", "<h1>Not here</h1><p>Try /page</p>"),
    })
}

#[test]
fn markdown_has_headings_links_lists_and_code_without_script_text() {
    let server = page_server();
    let room = web_room(&server);
    let (code, result) = fetch(
        &room,
        json!({"url": server.url("/page"), "format": "markdown"}),
    );
    assert_eq!(code, 0, "{result}");
    let out = output(&result);
    for hidden in [
        "script text",
        "Page title",
        "color: red",
        "Enable JavaScript",
    ] {
        assert!(!out.contains(hidden), "{hidden:?} leaked: {out}");
    }
    crate::snapshot!("webfetch_markdown", redacted(&result, &server, &room));
}

#[test]
fn text_is_the_default_format() {
    let server = page_server();
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/page")}));
    assert_eq!(code, 0, "{result}");
    let out = output(&result);
    assert!(!out.contains("script text"));
    // Plain text: none of Markdown's marks.
    for mark in ["# ", "**", "`", "](", "][", "* ", "```"] {
        assert!(!out.contains(mark), "{mark:?} in {out}");
    }
    for line in [
        "\n\nGetting started\n\n",
        "Read the guide [1] or the API docs [2].",
        "\n\nInstall\n\n- Download the binary\n- Put it on your PATH\n",
        "\n\nSteps\n\n1. Configure\n2. Run\n",
        "\n\ntinytool webfetch --url https://example.com\n",
        "\n\nLinks:\n[1] https://example.com/guide\n[2] http://127.0.0.1:",
    ] {
        assert!(out.contains(line), "{line:?} not in {out}");
    }
    crate::snapshot!("webfetch_text", redacted(&result, &server, &room));
    let accept = server.requests()[0].header("accept").map(str::to_string);
    assert_eq!(
        accept.as_deref(),
        Some("text/plain, text/html;q=0.9, */*;q=0.8")
    );
}

#[test]
fn html_format_returns_the_page_as_it_is() {
    let server = page_server();
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/page"), "format": "html"}));
    assert_eq!(code, 0);
    assert_eq!(output(&result), format!("HTTP 200 OK\n\n{PAGE}"));
    assert_eq!(result["metadata"]["bytes"], PAGE.len());
}

#[test]
fn other_text_is_returned_as_it_is_and_untyped_html_still_converts() {
    let server = page_server();
    let room = web_room(&server);
    for format in ["text", "markdown"] {
        let (_, result) = fetch(&room, json!({"url": server.url("/json"), "format": format}));
        assert_eq!(output(&result), "HTTP 200 OK\n\n{\"a\": [1, 2]}");
        assert_eq!(result["metadata"]["content_type"], "application/json");
    }
    let (_, result) = fetch(
        &room,
        json!({"url": server.url("/plain"), "format": "markdown"}),
    );
    assert_eq!(output(&result), "HTTP 200 OK\n\njust text\n");
    let (_, result) = fetch(
        &room,
        json!({"url": server.url("/untyped"), "format": "markdown"}),
    );
    assert!(output(&result).contains("# Getting started"), "{result}");
    assert_eq!(result["metadata"]["content_type"], Value::Null);
}

#[test]
fn status_400_and_above_is_an_error_that_keeps_the_body() {
    let server = page_server();
    let room = web_room(&server);
    let (code, result) = fetch(
        &room,
        json!({"url": server.url("/missing"), "format": "markdown"}),
    );
    assert_eq!(code, 1);
    assert_eq!(result["is_error"], true);
    assert_eq!(
        output(&result),
        "HTTP 404 Not Found\n\n# Not here\n\nTry /page\n"
    );
    assert_eq!(result["metadata"]["status"], 404);
    let server = Server::start(|r| match r.path.as_str() {
        "/500" => Reply::new(500, "text/plain", "boom"),
        "/204" => Reply {
            status: 204,
            headers: vec![],
            payload: Payload::Bytes(vec![]),
        },
        _ => Reply::new(418, "text/plain", "teapot"),
    });
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/500")}));
    assert_eq!(
        (code, output(&result)),
        (1, "HTTP 500 Internal Server Error\n\nboom")
    );
    let (code, result) = fetch(&room, json!({"url": server.url("/204")}));
    assert_eq!(
        (code, output(&result)),
        (0, "HTTP 204 No Content\n\n(empty body)")
    );
    let (code, result) = fetch(&room, json!({"url": server.url("/418")}));
    assert_eq!(
        (code, output(&result)),
        (1, "HTTP 418 I'm a teapot\n\nteapot")
    );
}

#[test]
fn binary_bodies_are_described_by_type_and_size() {
    let server = Server::start(|r| match r.path.as_str() {
        "/png" => {
            let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
            png.resize(2048, 7);
            Reply::ok("image/png", png)
        }
        _ => Reply::ok("application/octet-stream", vec![0u8, 1, 2, 3, 0, 5]),
    });
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/png")}));
    assert_eq!(code, 0);
    assert_eq!(
        output(&result),
        "HTTP 200 OK\n\n[binary body: image/png, 2048 bytes, not shown]"
    );
    assert_eq!(result["metadata"]["binary"], true);
    let (_, result) = fetch(&room, json!({"url": server.url("/bin"), "format": "html"}));
    assert_eq!(
        output(&result),
        "HTTP 200 OK\n\n[binary body: application/octet-stream, 6 bytes, not shown]"
    );
}

#[test]
fn redirects_are_followed_and_the_final_url_reported() {
    let server = Server::start(|r| match r.path.as_str() {
        "/old" => Reply::redirect(301, "/middle"),
        "/middle" => Reply::redirect(302, "/new?x=1"),
        _ => Reply::ok("text/plain", "arrived"),
    });
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/old")}));
    assert_eq!(code, 0);
    assert_eq!(output(&result), "HTTP 200 OK\n\narrived");
    assert_eq!(result["metadata"]["final_url"], server.url("/new?x=1"));
    assert_eq!(result["metadata"]["redirects"], 2);
    assert_eq!(server.paths(), ["/old", "/middle", "/new?x=1"]);
}

#[test]
fn a_redirect_to_an_internal_address_is_refused_before_it_is_requested() {
    let other = Server::start(|_| Reply::ok("text/plain", "internal secret"));
    let other_url = other.url("/secret");
    let server = Server::start(move |r| match r.path.as_str() {
        "/meta" => Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/v6" => Reply::redirect(307, "http://[::1]/"),
        "/mapped" => Reply::redirect(301, "http://[::ffff:127.0.0.1]:9/"),
        "/localhost" => Reply::redirect(302, "http://localhost/admin"),
        "/octal" => Reply::redirect(302, "http://0177.0.0.1/"),
        "/port" => Reply::redirect(302, &other_url),
        "/file" => Reply::redirect(302, "file:///etc/passwd"),
        "/gopher" => Reply::redirect(302, "gopher://127.0.0.1:70/"),
        _ => Reply::ok("text/plain", "fine"),
    });
    let room = web_room(&server);
    for (path, first_line) in [
        (
            "/meta",
            "blocked: URL resolves to private/internal network address 169.254.169.254 (169.254.0.0/16 link-local, cloud metadata)",
        ),
        (
            "/v6",
            "blocked: URL resolves to private/internal network address ::1 (::1/128 loopback)",
        ),
        (
            "/mapped",
            "blocked: URL resolves to private/internal network address ::ffff:127.0.0.1 (::ffff:0:0/96 IPv4-mapped, embedding 127.0.0.1 in 127.0.0.0/8 loopback)",
        ),
        (
            "/localhost",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "/octal",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "/port",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        ("/file", "only http and https URLs are allowed (got file)"),
        (
            "/gopher",
            "only http and https URLs are allowed (got gopher)",
        ),
    ] {
        let (code, result) = fetch(&room, json!({"url": server.url(path)}));
        assert_eq!(code, 1, "{path}: {result}");
        let out = output(&result);
        assert_eq!(out.lines().next(), Some(first_line), "{path}");
        assert!(
            out.contains(&format!("while following redirect 1: {}", server.url(path))),
            "{out}"
        );
    }
    assert!(
        other.requests().is_empty(),
        "another port of an allowed host is not allowed"
    );
    let (_, result) = fetch(&room, json!({"url": server.url("/meta")}));
    crate::snapshot!(
        "webfetch_redirect_refused",
        redacted(&result, &server, &room)
    );
}

#[test]
fn redirects_stop_after_ten() {
    let server = Server::start(|r| {
        let n: u32 = r.path.trim_start_matches('/').parse().unwrap_or(0);
        Reply::redirect(302, &format!("/{}", n + 1))
    });
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/0")}));
    assert_eq!(code, 1);
    assert_eq!(
        output(&result),
        format!(
            "Fetch error: stopped after 10 redirects (last: {} -> /11)",
            server.url("/10")
        )
    );
    assert_eq!(server.requests().len(), 11);
}

#[test]
fn see_other_turns_a_post_into_a_get_and_307_keeps_it() {
    let server = Server::start(|r| match r.path.as_str() {
        "/form" => Reply::redirect(303, "/done"),
        "/temp" => Reply::redirect(307, "/done"),
        _ => Reply::ok("text/plain", "done"),
    });
    let room = web_room(&server);
    let headers = json!({"Content-Type": "application/json"});
    for path in ["/form", "/temp"] {
        let (code, _) = fetch(
            &room,
            json!({"url": server.url(path), "method": "post", "body": "{\"a\":1}", "headers": headers}),
        );
        assert_eq!(code, 0);
    }
    let seen: Vec<(String, String, Option<String>)> = server
        .requests()
        .into_iter()
        .map(|r| {
            let ct = r.header("content-type").map(str::to_string);
            (r.method, String::from_utf8(r.body).unwrap(), ct)
        })
        .collect();
    let json_ct = Some("application/json".to_string());
    assert_eq!(
        seen,
        [
            ("POST".into(), "{\"a\":1}".into(), json_ct.clone()),
            ("GET".into(), String::new(), None),
            ("POST".into(), "{\"a\":1}".into(), json_ct.clone()),
            ("POST".into(), "{\"a\":1}".into(), json_ct),
        ]
    );
}

#[test]
fn a_six_megabyte_body_is_cut_at_five_and_says_so() {
    let server = Server::start(|r| Reply {
        status: 200,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        payload: Payload::Repeat {
            byte: b'x',
            len: 6 * 1024 * 1024,
            sized: r.path == "/sized",
        },
    });
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/sized")}));
    assert_eq!(code, 0, "{result}");
    let out = output(&result);
    assert!(
        out.ends_with("\n\n[body cut at 5 MB of 6291456 bytes]"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
    let meta = &result["metadata"];
    assert_eq!(meta["body_truncated"], true);
    assert_eq!(meta["bytes"], 5 * 1024 * 1024);
    assert_eq!(meta["total_bytes"], 6 * 1024 * 1024);
    assert_eq!(result["truncated"], true, "the output is previewed");
    let (code, result) = fetch(&room, json!({"url": server.url("/stream")}));
    assert_eq!(code, 0);
    assert!(output(&result).ends_with("\n\n[body cut at 5 MB of unknown size]"));
    assert_eq!(result["metadata"]["body_truncated"], true);
    assert!(result["metadata"].get("total_bytes").is_none());
}

#[test]
fn credential_and_connection_headers_are_dropped() {
    let server = Server::start(|_| Reply::ok("text/plain", "ok"));
    let room = web_room(&server);
    let headers = json!({
        "Authorization": "Bearer secret",
        "cookie": "session=secret",
        "Set-Cookie": "a=b",
        "Proxy-Authorization": "Basic secret",
        "X-API-Key": "secret",
        "Host": "evil.example",
        "Transfer-Encoding": "chunked",
        "X-Custom": "kept",
        "User-Agent": "custom-agent/2"
    });
    let (code, result) = fetch(
        &room,
        json!({"url": server.url("/h"), "headers": headers, "format": "html"}),
    );
    assert_eq!(code, 0, "{result}");
    assert_eq!(
        result["metadata"]["dropped_headers"],
        json!([
            "Authorization",
            "cookie",
            "Set-Cookie",
            "Proxy-Authorization",
            "X-API-Key",
            "Host",
            "Transfer-Encoding"
        ])
    );
    let request = &server.requests()[0];
    let all = format!("{:?}", request.headers);
    assert!(
        !all.contains("secret") && !all.contains("evil.example"),
        "{all}"
    );
    assert_eq!(request.header("x-custom"), Some("kept"));
    assert_eq!(request.header("user-agent"), Some("custom-agent/2"));
    assert_eq!(
        request.header("host"),
        Some(format!("127.0.0.1:{}", server.port).as_str())
    );
    assert_eq!(
        request.header("accept"),
        Some("text/html, application/xhtml+xml;q=0.9, */*;q=0.8")
    );
    // Credentials in the URL are not sent either.
    let url = format!("http://user:pw@127.0.0.1:{}/u#frag", server.port);
    let (code, result) = fetch(&room, json!({"url": url}));
    assert_eq!(code, 0);
    assert_eq!(result["metadata"]["final_url"], server.url("/u"));
    assert_eq!(server.requests()[1].header("authorization"), None);
    let ua = server.requests()[1]
        .header("user-agent")
        .unwrap()
        .to_string();
    assert!(
        ua.starts_with("tinytool/") && ua.ends_with(" (compatible; fetch tool)"),
        "{ua}"
    );
}

#[test]
fn loopback_is_refused_unless_the_user_config_opens_it() {
    let server = Server::start(|_| Reply::ok("text/plain", "hello world"));
    let room = Room::new();
    let policy = room.write("web.json", ALLOW_WEBFETCH);
    let policy = policy.to_string_lossy().into_owned();
    let call = json!({"url": server.url("/")}).to_string();
    let run = room.run(&["--policy", &policy, "webfetch"], Some(&call));
    assert_eq!(run.code, 1);
    assert!(run.output().starts_with(
        "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)\n"
    ));
    assert!(run.output().contains("allow_hosts"));
    // The project config cannot open it.
    room.write(
        ".tinytool/config.json",
        json!({"webfetch": {"allow_hosts": [format!("127.0.0.1:{}", server.port)]}}).to_string(),
    );
    let run = room.run(&["--policy", &policy, "webfetch"], Some(&call));
    assert_eq!(run.code, 1);
    assert!(server.requests().is_empty());
    // A user config entry for another port does not open this one.
    room.write_user(
        "config.json",
        r#"{"webfetch": {"allow_hosts": ["127.0.0.1:1", "localhost"]}}"#,
    );
    let run = room.run(&["--policy", &policy, "webfetch"], Some(&call));
    assert_eq!(run.code, 1);
    assert!(server.requests().is_empty());
    // The exact host:port does.
    room.write_user(
        "config.json",
        json!({"webfetch": {"allow_hosts": [format!("127.0.0.1:{}", server.port)]}}).to_string(),
    );
    let run = room.run(&["--policy", &policy, "webfetch"], Some(&call));
    assert_eq!(
        (run.code, run.output()),
        (0, "HTTP 200 OK\n\nhello world".to_string())
    );
}

#[test]
fn without_a_policy_that_allows_it_webfetch_is_refused_with_exit_3() {
    let server = Server::start(|_| Reply::ok("text/plain", "hello"));
    let room = Room::new();
    let run = room.call("webfetch", json!({"url": server.url("/")}));
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(run.output().contains("webfetch"), "{}", run.output());
    // The pattern checked is the URL: a rule for another site does not allow this one.
    let policy = room.write(
        "docs-only.json",
        r#"{"rules":[{"permission":"webfetch","pattern":"https://docs.rs/*","action":"allow"}]}"#,
    );
    let call = json!({"url": server.url("/")}).to_string();
    let run = room.run(
        &["--policy", &policy.to_string_lossy(), "webfetch"],
        Some(&call),
    );
    assert_eq!(run.code, 3);
    assert!(server.requests().is_empty());
}

#[test]
fn ssrf_tricks_are_refused_without_any_request() {
    let room = Room::new();
    room.write_user("policy.json", ALLOW_WEBFETCH);
    for (url, first_line) in [
        (
            "http://0x7f.1/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://2130706433/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://017700000001/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://127.1/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://[::ffff:127.0.0.1]/",
            "blocked: URL resolves to private/internal network address ::ffff:127.0.0.1 (::ffff:0:0/96 IPv4-mapped, embedding 127.0.0.1 in 127.0.0.0/8 loopback)",
        ),
        (
            "http://evil@127.0.0.1/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://127.0.0.1#@example.com",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            "blocked: URL resolves to private/internal network address 169.254.169.254 (169.254.0.0/16 link-local, cloud metadata)",
        ),
        (
            "http://[fd00::1]/",
            "blocked: URL resolves to private/internal network address fd00::1 (fc00::/7 unique local)",
        ),
        (
            "http://metadata.localhost/",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        (
            "file:///etc/passwd",
            "only http and https URLs are allowed (got file)",
        ),
        (
            "gopher://example.com/1",
            "only http and https URLs are allowed (got gopher)",
        ),
        ("://bad-url", "invalid URL: relative URL without a base"),
        ("http://", "invalid URL: empty host"),
    ] {
        let run = room.call("webfetch", json!({"url": url}));
        assert_eq!(run.code, 1, "{url}: {}", run.stdout);
        assert_eq!(run.output().lines().next(), Some(first_line), "{url}");
    }
    let run = room.call("webfetch", json!({"url": "http://0x7f.1/"}));
    let home = room.home.to_string_lossy().into_owned();
    let result: Value = serde_json::from_str(&run.stdout.replace(&home, "HOME")).unwrap();
    crate::snapshot!("webfetch_blocked", result);
}

#[test]
fn bad_arguments_are_explained() {
    let server = Server::start(|_| Reply::ok("text/plain", "ok"));
    let room = web_room(&server);
    for (args, expected) in [
        (
            json!({"url": server.url("/"), "method": "CONNECT"}),
            "method CONNECT is not supported",
        ),
        (
            json!({"url": server.url("/"), "method": "GE T"}),
            "method \"GE T\" is not a valid HTTP method",
        ),
        (
            json!({"url": server.url("/"), "headers": {"Bad Name": "x"}}),
            "headers: \"Bad Name\" is not a valid header name",
        ),
        (
            json!({"url": server.url("/"), "headers": {"X-A": "a\nb"}}),
            "headers.X-A: the value is not a valid header value",
        ),
        (json!({"url": server.url("/"), "format": "pdf"}), "format"),
    ] {
        let run = room.call("webfetch", args.clone());
        assert_ne!(run.code, 0, "{args}");
        assert!(run.output().contains(expected), "{args}: {}", run.output());
    }
    assert!(server.requests().is_empty());
    room.write_user("config.json", r#"{"webfetch": {"allow_hosts": ["h:p"]}}"#);
    let run = room.call("webfetch", json!({"url": server.url("/")}));
    assert_eq!(run.code, 1);
    assert!(
        run.output()
            .starts_with("webfetch.allow_hosts: \"h:p\" is not a host or host:port")
    );
}

#[test]
fn a_closed_port_is_a_fetch_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let room = Room::new();
    room.write_user("policy.json", ALLOW_WEBFETCH);
    room.write_user(
        "config.json",
        json!({"webfetch": {"allow_hosts": [format!("127.0.0.1:{port}")]}}).to_string(),
    );
    let run = room.call(
        "webfetch",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output()
            .starts_with(&format!("Fetch error: GET http://127.0.0.1:{port}/: ")),
        "{}",
        run.output()
    );
}

#[test]
fn https_goes_through_tls() {
    // A plain-HTTP server on an allowlisted port: the TLS handshake fails, cleanly.
    let server = Server::start(|_| Reply::ok("text/plain", "not tls"));
    let room = web_room(&server);
    let url = format!("https://127.0.0.1:{}/", server.port);
    let (code, result) = fetch(&room, json!({"url": url}));
    assert_eq!(code, 1);
    assert!(
        output(&result).starts_with(&format!("Fetch error: GET {url}: ")),
        "{result}"
    );
    assert!(
        server.requests().is_empty(),
        "the server got a TLS handshake, not an HTTP request"
    );
}

/// A page with text that only decodes right from its charset: French, typographic
/// punctuation (windows-1252's 0x80-0x9F) and Japanese, in `encoding` (characters the
/// charset lacks become numeric references), with `head` inside its `<head>`.
fn page_in(encoding: &'static Encoding, head: &str) -> Vec<u8> {
    let page = format!(
        "<!DOCTYPE html><html><head>{head}<title>t</title></head><body>\
         <h1>Caf\u{e9} cr\u{e8}me</h1><p>\u{201c}Quoted\u{201d} \u{2014} 5 \u{20ac}</p>\
         <ul><li>\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30da}\u{30fc}\u{30b8}</li></ul></body></html>"
    );
    encoding.encode(&page).0.into_owned()
}

/// What each charset's page reads as, whatever the format.
const DECODED: [&str; 5] = ["Café crème", "“Quoted”", "—", "5 €", "日本語のページ"];

fn charset_server() -> Server {
    Server::start(|r| match r.path.as_str() {
        "/latin1-header" => Reply::ok("text/html; charset=iso-8859-1", page_in(WINDOWS_1252, "")),
        "/cp1252-meta" => Reply::ok(
            "text/html",
            page_in(WINDOWS_1252, r#"<meta charset="windows-1252">"#),
        ),
        "/sjis-header" => Reply::ok("text/html; charset=Shift_JIS", page_in(SHIFT_JIS, "")),
        "/sjis-pragma" => Reply::ok(
            "text/html",
            page_in(
                SHIFT_JIS,
                r#"<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">"#,
            ),
        ),
        "/untyped-sjis-meta" => Reply {
            status: 200,
            headers: vec![],
            payload: Payload::Bytes(page_in(SHIFT_JIS, "<meta charset=sjis>")),
        },
        "/plain-latin1" => Reply::ok(
            "text/plain; charset=ISO-8859-1",
            WINDOWS_1252
                .encode("Caf\u{e9} cr\u{e8}me <b>not html</b>\n")
                .0,
        ),
        "/plain-cp1252" => Reply::ok(
            "text/plain; charset=windows-1252",
            WINDOWS_1252
                .encode("\u{201c}Quoted\u{201d} \u{2014} 5 \u{20ac}\n")
                .0,
        ),
        "/plain-sjis" => Reply::ok(
            "text/plain; charset=shift_jis",
            SHIFT_JIS
                .encode("\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30da}\u{30fc}\u{30b8}\n")
                .0,
        ),
        "/csv-utf16" => {
            let mut body = vec![0xff, 0xfe];
            body.extend(
                "name,city\nJos\u{e9},M\u{fc}nchen\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            );
            Reply::ok("text/csv; charset=iso-8859-1", body)
        }
        "/no-charset" => Reply::ok("text/html", page_in(WINDOWS_1252, "")),
        "/no-charset-sjis" => {
            // Mostly Japanese: far more bytes outside ASCII than a binary sniff allows text.
            let page = format!(
                "<h1>Caf&eacute; cr&egrave;me</h1><p>{}</p>",
                "\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30da}\u{30fc}\u{30b8}".repeat(200)
            );
            Reply::ok("text/html", SHIFT_JIS.encode(&page).0.into_owned())
        }
        _ => Reply::new(404, "text/plain", "no"),
    })
}

#[test]
fn html_in_other_charsets_is_decoded_by_header_or_meta_in_every_format() {
    let server = charset_server();
    let room = web_room(&server);
    // Raw HTML keeps the references a charset spelled what it lacks with.
    let cp1252_raw = [
        "<h1>Café crème</h1><p>“Quoted” — 5 €</p>",
        "<li>&#26085;&#26412;&#35486;&#12398;&#12506;&#12540;&#12472;</li>",
    ];
    let sjis_raw = [
        "<h1>Caf&#233; cr&#232;me</h1><p>“Quoted” &#8212; 5 &#8364;</p>",
        "<li>日本語のページ</li>",
    ];
    for (path, charset, raw) in [
        ("/latin1-header", "windows-1252", cp1252_raw),
        ("/cp1252-meta", "windows-1252", cp1252_raw),
        ("/sjis-header", "Shift_JIS", sjis_raw),
        ("/sjis-pragma", "Shift_JIS", sjis_raw),
        ("/untyped-sjis-meta", "Shift_JIS", sjis_raw),
    ] {
        for format in ["text", "markdown", "html"] {
            let (code, result) = fetch(&room, json!({"url": server.url(path), "format": format}));
            assert_eq!(code, 0, "{path} {format}: {result}");
            let out = output(&result);
            let expected = match format {
                "html" => raw.to_vec(),
                _ => DECODED.to_vec(),
            };
            for text in expected {
                assert!(out.contains(text), "{path} {format}: {text:?} not in {out}");
            }
            assert!(!out.contains('\u{fffd}'), "{path} {format}: {out}");
            let meta = &result["metadata"];
            assert_eq!(meta["charset"], charset, "{path} {format}");
            assert!(meta.get("lossy").is_none(), "{path} {format}: {meta}");
        }
        let (_, text) = fetch(&room, json!({"url": server.url(path)}));
        assert!(output(&text).contains("\n\nCafé crème\n\n"), "{text}");
        let (_, markdown) = fetch(
            &room,
            json!({"url": server.url(path), "format": "markdown"}),
        );
        assert!(
            output(&markdown).contains("\n\n# Café crème\n\n"),
            "{markdown}"
        );
    }
    let (_, result) = fetch(&room, json!({"url": server.url("/sjis-pragma")}));
    crate::snapshot!("webfetch_text_shift_jis", redacted(&result, &server, &room));
}

#[test]
fn other_text_in_other_charsets_is_decoded_by_its_header() {
    let server = charset_server();
    let room = web_room(&server);
    for (path, charset, expected) in [
        (
            "/plain-latin1",
            "windows-1252",
            "Café crème <b>not html</b>\n",
        ),
        ("/plain-cp1252", "windows-1252", "“Quoted” — 5 €\n"),
        ("/plain-sjis", "Shift_JIS", "日本語のページ\n"),
        // A byte order mark wins over the header.
        ("/csv-utf16", "UTF-16LE", "name,city\nJosé,München\n"),
    ] {
        for format in ["text", "markdown", "html"] {
            let (code, result) = fetch(&room, json!({"url": server.url(path), "format": format}));
            assert_eq!(code, 0, "{path} {format}: {result}");
            assert_eq!(
                output(&result),
                format!("HTTP 200 OK\n\n{expected}"),
                "{path} {format}"
            );
            assert_eq!(result["metadata"]["charset"], charset, "{path} {format}");
            assert!(result["metadata"].get("lossy").is_none(), "{path} {format}");
        }
    }
}

#[test]
fn a_page_that_names_no_charset_is_utf8_and_says_what_it_replaced() {
    let server = charset_server();
    let room = web_room(&server);
    for format in ["text", "markdown", "html"] {
        let (code, result) = fetch(
            &room,
            json!({"url": server.url("/no-charset"), "format": format}),
        );
        assert_eq!(code, 0, "{result}");
        assert!(
            output(&result).contains("Caf\u{fffd} cr\u{fffd}me"),
            "{result}"
        );
        assert_eq!(result["metadata"]["charset"], "UTF-8");
        assert_eq!(result["metadata"]["lossy"], true);
    }
    // Mostly bytes outside ASCII that are not UTF-8: still the declared HTML, shown with
    // replacements (what the page spells with references survives), not taken for binary.
    for format in ["text", "markdown", "html"] {
        let (code, result) = fetch(
            &room,
            json!({"url": server.url("/no-charset-sjis"), "format": format}),
        );
        assert_eq!(code, 0, "{result}");
        let out = output(&result);
        assert!(!out.contains("[binary body"), "{format}: {out}");
        assert!(out.contains('\u{fffd}'), "{format}: {out}");
        if format != "html" {
            assert!(out.contains("Café crème"), "{format}: {out}");
        }
        assert_eq!(result["metadata"]["charset"], "UTF-8");
        assert_eq!(result["metadata"]["lossy"], true);
        assert!(result["metadata"].get("binary").is_none());
    }
    // UTF-8 itself is not lossy; neither empty nor binary bodies name a charset.
    let server = page_server();
    let room = web_room(&server);
    let (_, result) = fetch(&room, json!({"url": server.url("/page")}));
    assert_eq!(result["metadata"]["charset"], "UTF-8");
    assert!(result["metadata"].get("lossy").is_none());
    let server = Server::start(|r| match r.path.as_str() {
        "/png" => Reply::ok("image/png; charset=utf-8", vec![0x89, b'P', b'N', b'G']),
        _ => Reply::ok("text/plain; charset=latin1", Vec::new()),
    });
    let room = web_room(&server);
    for path in ["/png", "/empty"] {
        let (_, result) = fetch(&room, json!({"url": server.url(path)}));
        assert!(result["metadata"].get("charset").is_none(), "{result}");
    }
}

#[test]
fn a_cut_body_in_a_multibyte_charset_loses_only_its_partial_last_character() {
    // Lines of 49 two-byte characters; the 5 MB cut falls inside one of them.
    let line = SHIFT_JIS
        .encode(&format!("{}\n", "\u{3042}".repeat(49)))
        .0
        .into_owned();
    let mut body = b"x".to_vec();
    while body.len() < 6 * 1024 * 1024 {
        body.extend_from_slice(&line);
    }
    let cut = 5 * 1024 * 1024;
    assert!(
        SHIFT_JIS.decode_without_bom_handling(&body[..cut]).1,
        "the cut must split a character for this test to mean anything"
    );
    let total = body.len();
    let server = Server::start(move |_| Reply::ok("text/plain; charset=shift_jis", body.clone()));
    let room = web_room(&server);
    let (code, result) = fetch(&room, json!({"url": server.url("/big")}));
    assert_eq!(code, 0, "{}", &result.to_string()[..500]);
    let out = output(&result);
    assert!(
        out.ends_with(&format!("\u{3042}\n\n[body cut at 5 MB of {total} bytes]")),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    assert!(!out.contains('\u{fffd}'));
    let meta = &result["metadata"];
    assert_eq!(meta["charset"], "Shift_JIS");
    assert_eq!(meta["body_truncated"], true);
    assert!(meta.get("lossy").is_none(), "{meta}");
}

#[test]
fn a_bad_url_is_a_tool_error_before_the_policy_is_asked() {
    let room = Room::new();
    for url in ["not a url", "ftp://example.com/x", "http://"] {
        let run = room.run(&["webfetch", "--url", url], None);
        assert_eq!(run.code, 1, "{url}: {run:?}");
        let result = run.json();
        assert!(
            result["metadata"].get("suggested_rule").is_none(),
            "{result}"
        );
        assert!(!run.output().contains("To allow it"), "{result}");
    }
}
