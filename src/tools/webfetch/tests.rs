//! Unit tests of the fetch loop against loopback servers started here: deadlines with
//! short limits (the tool's are 30 s), the guard layers one at a time, the body cap.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{Connector, NextTimeout, TcpConnector};

use super::*;

/// Starts a server on 127.0.0.1 that hands each connection, after its request head was
/// read, to `reply`; returns the port.
fn serve(reply: fn(&str, &mut TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    head.push_str(&line);
                    line.clear();
                }
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                reply(&path, &mut stream);
            });
        }
    });
    port
}

/// Fetches `path` of the loopback server on `port`, which the allow list opens.
fn fetch_local(port: u16, path: &str, limits: Limits) -> Result<Fetched, FetchError> {
    fetch(
        get(&format!("http://127.0.0.1:{port}{path}")),
        allow(port),
        limits,
    )
}

fn allow(port: u16) -> Arc<AllowList> {
    Arc::new(AllowList::parse(&[format!("127.0.0.1:{port}")]).unwrap())
}

fn get(url: &str) -> Request {
    Request {
        url: ssrf::parse_url(url).unwrap(),
        method: Method::GET,
        headers: HeaderMap::new(),
        body: None,
    }
}

/// The refusal inside an error of the agent.
fn blocked_of(err: &ureq::Error) -> String {
    match err {
        ureq::Error::Other(inner) => match inner.downcast_ref::<Blocked>() {
            Some(blocked) => blocked.to_string(),
            None => panic!("not a refusal: {err}"),
        },
        _ => panic!("not a refusal: {err}"),
    }
}

fn failure_text(result: Result<Fetched, FetchError>) -> String {
    match result {
        Ok(fetched) => panic!("fetched {:?}", fetched.status),
        Err(FetchError::Failed(text)) => text,
        Err(FetchError::Refused { refusal, hop }) => format!("refused: {refusal} {hop:?}"),
    }
}

#[test]
fn the_deadline_covers_a_body_that_stalls() {
    let port = serve(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nten bytes.");
        std::thread::sleep(Duration::from_secs(5));
    });
    // Only the overall deadline is short: nothing else can fire first on a slow machine.
    let limits = Limits {
        deadline: Duration::from_millis(800),
        ..Limits::default()
    };
    let text = failure_text(fetch_local(port, "/", limits));
    assert_eq!(
        text,
        "Error reading response: timed out: the fetch did not finish within 800 ms \
         (the deadline covers every redirect and the whole body)"
    );
}

#[test]
fn a_server_that_never_answers_times_out() {
    let port = serve(|_, _| std::thread::sleep(Duration::from_secs(5)));
    let limits = Limits {
        response: Duration::from_millis(300),
        ..Limits::default()
    };
    let text = failure_text(fetch_local(port, "/x", limits));
    assert_eq!(
        text,
        format!(
            "Fetch error: GET http://127.0.0.1:{port}/x: timed out: no response headers within 300 ms"
        )
    );
}

#[test]
fn the_deadline_spans_redirect_hops() {
    // Each hop answers after 150 ms: the third hop starts after the 400 ms deadline.
    let port = serve(|path, s| {
        std::thread::sleep(Duration::from_millis(150));
        let next: u32 = path.trim_start_matches('/').parse().unwrap_or(0) + 1;
        let _ = write!(
            s,
            "HTTP/1.1 302 Found\r\nLocation: /{next}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    });
    let limits = Limits {
        deadline: Duration::from_millis(400),
        ..Limits::default()
    };
    let text = failure_text(fetch_local(port, "/0", limits));
    assert!(text.contains("did not finish within 400 ms"), "{text}");
}

#[test]
fn the_body_cap_keeps_the_first_bytes_and_counts_the_rest() {
    let port = serve(|path, s| {
        let body = vec![b'a'; 5_000];
        let head = if path == "/sized" {
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
        } else {
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_string()
        };
        let _ = s.write_all(head.as_bytes());
        let _ = s.write_all(&body);
    });
    let limits = Limits {
        max_body: 1_000,
        ..Limits::default()
    };
    let fetched = fetch_local(port, "/sized", limits).unwrap();
    assert_eq!(
        (fetched.body.len(), fetched.truncated, fetched.total),
        (1_000, true, Some(5_000))
    );
    let fetched = fetch_local(port, "/unsized", limits).unwrap();
    assert_eq!(
        (fetched.body.len(), fetched.truncated, fetched.total),
        (1_000, true, None)
    );
    // Exactly at the cap is not a cut.
    let limits = Limits {
        max_body: 5_000,
        ..Limits::default()
    };
    let fetched = fetch_local(port, "/sized", limits).unwrap();
    assert_eq!((fetched.body.len(), fetched.truncated), (5_000, false));
}

#[test]
fn the_resolver_refuses_a_blocked_host_by_itself() {
    let resolver = GuardResolver::new(Arc::new(AllowList::default()));
    let config = Agent::config_builder().build();
    for uri in [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "http://[::1]:9/",
        "http://0x7f.1:9/",
    ] {
        let uri: ureq::http::Uri = uri.parse().unwrap();
        let err = resolver
            .resolve(&uri, &config, NextTimeout::default())
            .unwrap_err();
        assert!(
            blocked_of(&err).starts_with(ssrf::BLOCKED_PREFIX),
            "{uri}: {err}"
        );
    }
    let uri: ureq::http::Uri = "http://127.0.0.1:9/".parse().unwrap();
    let open = GuardResolver::new(allow(9));
    let addrs = open.resolve(&uri, &config, NextTimeout::default()).unwrap();
    assert_eq!(addrs.len(), 1);
}

/// A resolver that answers every name with loopback: what a hostile DNS server does.
#[derive(Debug)]
struct RebindingResolver(u16);

impl Resolver for RebindingResolver {
    fn resolve(
        &self,
        _: &ureq::http::Uri,
        _: &ureq::config::Config,
        _: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let mut out = self.empty();
        out.push(SocketAddr::from(([127, 0, 0, 1], self.0)));
        Ok(out)
    }
}

#[test]
fn the_connector_refuses_a_blocked_address_the_resolver_let_through() {
    let port = serve(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret");
    });
    let config = Agent::config_builder().proxy(None).build();
    let connector =
        GuardConnector::new(Arc::new(AllowList::default())).chain(TcpConnector::default());
    let agent = Agent::with_parts(config, connector, RebindingResolver(port));
    let err = agent
        .get(format!("http://public.example:{port}/"))
        .call()
        .unwrap_err();
    assert_eq!(
        blocked_of(&err).lines().next(),
        Some(
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)"
        )
    );
    // The same chain with the host allowlisted connects.
    let allowed = Arc::new(AllowList::parse(&["public.example".to_string()]).unwrap());
    let connector = GuardConnector::new(allowed).chain(TcpConnector::default());
    let config = Agent::config_builder().proxy(None).build();
    let agent = Agent::with_parts(config, connector, RebindingResolver(port));
    let body = agent
        .get(format!("http://public.example:{port}/"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert_eq!(body, "secret");
}

#[test]
fn every_hop_is_judged_before_it_is_requested() {
    let port = serve(|path, s| {
        let location = match path {
            "/meta" => "http://169.254.169.254/latest/meta-data/",
            "/v6" => "http://[::1]/",
            "/name" => "http://localhost/",
            "/scheme" => "file:///etc/passwd",
            _ => "/",
        };
        let _ = write!(
            s,
            "HTTP/1.1 301 Moved\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
        );
    });
    for (path, first_line) in [
        (
            "meta",
            "blocked: URL resolves to private/internal network address 169.254.169.254 (169.254.0.0/16 link-local, cloud metadata)",
        ),
        (
            "v6",
            "blocked: URL resolves to private/internal network address ::1 (::1/128 loopback)",
        ),
        (
            "name",
            "blocked: URL resolves to private/internal network address 127.0.0.1 (127.0.0.0/8 loopback)",
        ),
        ("scheme", "only http and https URLs are allowed (got file)"),
    ] {
        let result = fetch_local(port, &format!("/{path}"), Limits::default());
        let Err(FetchError::Refused { refusal, hop }) = result else {
            panic!("{path}: {result:?}");
        };
        assert_eq!(refusal.to_string().lines().next(), Some(first_line));
        assert!(
            hop.is_some_and(|h| h.starts_with("while following redirect 1: ")),
            "{path}"
        );
    }
}

#[test]
fn methods_and_headers_are_checked() {
    assert_eq!(parse_method(None), Ok(Method::GET));
    assert_eq!(parse_method(Some(" post ")), Ok(Method::POST));
    assert_eq!(
        parse_method(Some("propfind")).map(|m| m.to_string()),
        Ok("PROPFIND".into())
    );
    assert!(parse_method(Some("CONNECT")).is_err());
    assert!(parse_method(Some("GE T")).is_err());
}

#[test]
fn access_is_the_trimmed_url() {
    let session = crate::session::Session::new("t", &std::env::temp_dir());
    let ctx = CallContext::new(&session, "webfetch");
    let mut args = Map::new();
    args.insert("url".into(), json!("  https://docs.rs/ureq \n"));
    assert_eq!(
        access(&ctx, &args),
        vec![Access::new("webfetch", "https://docs.rs/ureq")]
    );
}
