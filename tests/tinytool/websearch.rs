//! websearch seen from outside: registered only with `EXA_API_KEY`, the request and the
//! output format of the reference, against a fake Exa server on loopback named by the user
//! config's `websearch.endpoint`.

use serde_json::{Value, json};

use crate::httpd::{Reply, Server};
use crate::util::Room;

fn tool_names(room: &Room) -> Vec<String> {
    let run = room.run(&["tools"], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// A room with the key set and the user config pointing websearch at `server`.
fn search_room(server: &Server) -> Room {
    let mut room = Room::new();
    room.set_env("EXA_API_KEY", "test-key");
    room.write_user(
        "config.json",
        json!({"websearch": {"endpoint": server.url("/search")}}).to_string(),
    );
    room
}

fn exa() -> Server {
    Server::start(|r| {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match body["query"].as_str() {
            Some("nothing") => Reply::ok("application/json", r#"{"results":[]}"#),
            Some("fail") => Reply::new(500, "text/plain", "upstream exploded"),
            Some("garbage") => Reply::ok("application/json", "<html>not json</html>"),
            _ => Reply::ok(
                "application/json",
                json!({"results": [
                    {"title": "Go Testing", "url": "https://example.com/go-testing", "text": "A guide to testing in Go", "score": 0.9},
                    {"title": "Table tests", "url": "https://example.com/table"}
                ]})
                .to_string(),
            ),
        }
    })
}

#[test]
fn websearch_is_listed_only_with_an_api_key() {
    let mut room = Room::new();
    assert!(!tool_names(&room).contains(&"websearch".to_string()));
    assert!(tool_names(&room).contains(&"webfetch".to_string()));
    room.set_env("EXA_API_KEY", "");
    assert!(!tool_names(&room).contains(&"websearch".to_string()));
    room.set_env("EXA_API_KEY", "k");
    let names = tool_names(&room);
    assert_eq!(
        names.last().map(String::as_str),
        Some("websearch"),
        "{names:?}"
    );
}

#[test]
fn a_search_posts_the_query_and_prints_the_reference_format() {
    let server = exa();
    let room = search_room(&server);
    let run = room.call("websearch", json!({"query": "golang testing"}));
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.output(),
        "## Search results for: golang testing\n\n\
         ### 1. Go Testing\n**URL:** https://example.com/go-testing\n\nA guide to testing in Go\n\n\
         ### 2. Table tests\n**URL:** https://example.com/table\n\n"
    );
    crate::snapshot!("websearch_results", run.json());
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/search");
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body, json!({"query": "golang testing", "numResults": 8}));
}

#[test]
fn num_results_is_passed_on_and_defaults_to_eight() {
    let server = exa();
    let room = search_room(&server);
    for (n, sent) in [
        (json!(3), 3),
        (json!(0), 8),
        (json!(-2), 8),
        (json!(50), 50),
    ] {
        let run = room.call("websearch", json!({"query": "q", "num_results": n}));
        assert_eq!(run.code, 0);
        let request = server.requests().pop().unwrap();
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(body["numResults"], sent);
    }
}

#[test]
fn errors_follow_the_reference() {
    let server = exa();
    let room = search_room(&server);
    let run = room.call("websearch", json!({"query": "nothing"}));
    assert_eq!(
        (run.code, run.output()),
        (0, "No results found for: nothing".to_string())
    );
    let run = room.call("websearch", json!({"query": "fail"}));
    assert_eq!(
        (run.code, run.output()),
        (1, "Exa API error (HTTP 500): upstream exploded".to_string())
    );
    let run = room.call("websearch", json!({"query": "garbage"}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().starts_with("Failed to parse response: "),
        "{}",
        run.output()
    );
    let run = room.call("websearch", json!({"query": ""}));
    assert_eq!(
        (run.code, run.output()),
        (1, "query is required".to_string())
    );
    assert_eq!(server.requests().len(), 3, "an empty query sends nothing");
}

#[test]
fn an_unreachable_endpoint_is_a_failed_request() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut room = Room::new();
    room.set_env("EXA_API_KEY", "k");
    room.write_user(
        "config.json",
        json!({"websearch": {"endpoint": format!("http://127.0.0.1:{port}/search")}}).to_string(),
    );
    let run = room.call("websearch", json!({"query": "q"}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().starts_with("Search request failed: "),
        "{}",
        run.output()
    );
}

#[test]
fn the_project_config_cannot_redirect_the_api_key() {
    let user = exa();
    let project = exa();
    let room = search_room(&user);
    room.write(
        ".tinytool/config.json",
        json!({"websearch": {"endpoint": project.url("/search")}}).to_string(),
    );
    let run = room.call("websearch", json!({"query": "q"}));
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(user.requests().len(), 1);
    assert!(project.requests().is_empty());
}
