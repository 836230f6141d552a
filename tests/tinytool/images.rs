//! Images in results: sent once, sized for the client, in each receiver's own shape (read
//! as a subcommand, `exec` in every provider's envelope, MCP over stdio), and bad images
//! refused with a reason.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use base64::Engine;
use serde_json::{Value, json};

use crate::util::{Room, bomb_png, image_size, noise_png, plain_png};

/// The MCP messages' cap by default, and the TypeScript SDK's stdio read buffer.
const EIGHT_MIB: usize = 8 * 1024 * 1024;

/// Runs `tinytool mcp` on stdio, reads one file with `read`, and returns the raw line of
/// the call's answer (every byte the client would have to buffer).
fn mcp_read_line(room: &Room, file: &str) -> String {
    let mut child = room
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": file}}}),
    ] {
        writeln!(input, "{message}").unwrap();
    }
    input.flush().unwrap();
    let answer = loop {
        let mut line = String::new();
        assert!(output.read_line(&mut line).unwrap() > 0, "the server ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break line;
        }
    };
    drop(input);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    answer
}

#[test]
fn a_5_mb_png_over_stdio_is_one_message_under_8_mib_with_its_data_once() {
    let room = Room::new();
    let png = noise_png(1300, 1300);
    assert!(png.len() > 5_000_000, "{}", png.len());
    room.write("noise.png", &png);
    let line = mcp_read_line(&room, "noise.png");
    assert!(line.len() < EIGHT_MIB, "{} bytes", line.len());
    let answer: Value = serde_json::from_str(&line).unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{}", result["content"][0]);
    let image = &result["content"][0];
    assert_eq!(
        (&image["type"], &image["mimeType"]),
        (&json!("image"), &json!("image/png"))
    );
    let data = image["data"].as_str().unwrap();
    // Sent once: the structured half refers to it.
    assert_eq!(line.matches(data).count(), 1);
    let output = result["structuredContent"]["output"].as_str().unwrap();
    assert!(
        output.starts_with("[image 1: noise.png, image/png, "),
        "{output}"
    );
    assert!(output.contains("downscaled from 1300x1300"), "{output}");
    assert!(output.contains("images.max_bytes"), "{output}");
    // What came is the downscaled picture the metadata describes, within the default cap.
    let (w, h) = image_size(data);
    assert!(w < 1300 && w == h, "{w}x{h}");
    let metadata = &result["structuredContent"]["metadata"];
    assert_eq!(
        (metadata["width"].as_u64(), metadata["height"].as_u64()),
        (Some(w.into()), Some(h.into()))
    );
    let sent = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert!(sent.len() <= 3_932_160, "{}", sent.len());
    assert_eq!(metadata["downscaled_from"]["bytes"], png.len());
}

#[test]
fn a_raised_image_cap_sends_the_original_and_a_lowered_message_cap_downscales_it() {
    let room = Room::new();
    let png = noise_png(1300, 1300);
    room.write("noise.png", &png);
    room.write_user("config.json", r#"{"images": {"max_bytes": 6000000}}"#);
    let line = mcp_read_line(&room, "noise.png");
    assert!(line.len() < EIGHT_MIB, "{} bytes", line.len());
    let answer: Value = serde_json::from_str(&line).unwrap();
    let data = answer["result"]["content"][0]["data"].as_str().unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        png
    );

    // A message cap of 2 MiB: whatever images.max_bytes allows, the image is downscaled to
    // fit one message rather than left out.
    room.write_user(
        "config.json",
        r#"{"images": {"max_bytes": 6000000}, "mcp": {"max_message_bytes": 2097152}}"#,
    );
    let line = mcp_read_line(&room, "noise.png");
    assert!(line.len() <= 2_097_152, "{} bytes", line.len());
    let answer: Value = serde_json::from_str(&line).unwrap();
    let result = &answer["result"];
    let image = &result["content"][0];
    assert_eq!(image["type"], "image", "{result}");
    let (width, _) = crate::util::image_size(image["data"].as_str().unwrap());
    assert!(width < 1300, "{width}");
    let text = result["structuredContent"]["output"].as_str().unwrap();
    assert!(text.contains("downscaled from 1300x1300"), "{text}");
    assert_eq!(result["structuredContent"]["truncated"], false);
    // A project cannot raise the caps the user set.
    room.write(
        ".tinytool/config.json",
        r#"{"mcp": {"max_message_bytes": 99999999}}"#,
    );
    let line = mcp_read_line(&room, "noise.png");
    assert!(line.len() <= 2_097_152, "{} bytes", line.len());
}

#[test]
fn an_image_read_through_exec_comes_back_in_the_envelopes_own_shape() {
    let room = Room::new();
    let png = plain_png(30, 20);
    room.write("pic.png", &png);
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    let uri = format!("data:image/png;base64,{data}");
    let args = json!({"file_path": "pic.png"});
    let cases = [
        (
            json!({"type": "tool_use", "id": "toolu_1", "name": "read", "input": args}),
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}),
            json!({"type": "text", "text": "[image 1: pic.png, image/png, 30x20, N bytes]\n"}),
        ),
        (
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": args.to_string()}),
            json!({"type": "input_image", "image_url": uri}),
            json!({"type": "input_text", "text": "[image 1: pic.png, image/png, 30x20, N bytes]\n"}),
        ),
        (
            json!({"id": "call_2", "type": "function", "function": {"name": "read", "arguments": args.to_string()}}),
            json!({"type": "image_url", "image_url": {"url": uri}}),
            json!({"type": "text", "text": "[image 1: pic.png, image/png, 30x20, N bytes]\n"}),
        ),
        (
            json!({"functionCall": {"id": "g1", "name": "read", "args": args}}),
            json!({"inlineData": {"mimeType": "image/png", "data": data}}),
            json!({"text": "[image 1: pic.png, image/png, 30x20, N bytes]\n"}),
        ),
        (
            json!({"function_call": {"id": "g2", "name": "read", "args": args}, "text": null}),
            json!({"inline_data": {"mime_type": "image/png", "data": data}}),
            json!({"text": "[image 1: pic.png, image/png, 30x20, N bytes]\n"}),
        ),
    ];
    let size = png.len().to_string();
    for (call, image, label) in cases {
        let run = room.exec(call.clone());
        assert_eq!(run.code, 0, "{call}: {run:?}");
        let result = run.json();
        let label = serde_json::from_str::<Value>(&label.to_string().replace('N', &size)).unwrap();
        assert_eq!(result["content"], json!([image, label]), "{call}");
        // The data is in `content` only: `output` refers to it.
        assert_eq!(run.stdout.matches(&data).count(), 1, "{call}");
        assert_eq!(
            result["output"],
            label
                .as_object()
                .unwrap()
                .values()
                .next_back()
                .unwrap()
                .clone()
        );
    }
    // A text result has no `content`: the output is all there is.
    room.write("a.txt", "hello\n");
    let run = room.exec(
        json!({"type": "tool_use", "id": "t", "name": "read", "input": {"file_path": "a.txt"}}),
    );
    assert!(run.json().get("content").is_none());
}

#[test]
fn a_subcommand_prints_the_mcp_shape_and_text_mode_the_placeholder() {
    let room = Room::new();
    let png = plain_png(8, 6);
    room.write("pic.PNG", &png);
    let result = room.call("read", json!({"file_path": "pic.PNG"})).json();
    assert_eq!(result["truncated"], false);
    assert_eq!(result["content"][0]["type"], "image");
    assert_eq!(result["content"][0]["mimeType"], "image/png");
    let data = result["content"][0]["data"].as_str().unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        png
    );
    assert_eq!(
        (
            result["metadata"]["width"].as_u64(),
            result["metadata"]["height"].as_u64()
        ),
        (Some(8), Some(6))
    );
    let text = room.run(&["--text", "read", "--file-path", "pic.PNG"], None);
    assert_eq!(
        text.stdout,
        format!("[image 1: pic.PNG, image/png, 8x6, {} bytes]\n", png.len())
    );
}

#[test]
fn an_image_is_judged_by_its_content_not_its_extension() {
    let room = Room::new();
    let png = plain_png(5, 5);
    room.write("really-a-png.jpg", &png);
    let result = room
        .call("read", json!({"file_path": "really-a-png.jpg"}))
        .json();
    assert_eq!(result["metadata"]["mime"], "image/png");
    assert_eq!(result["content"][0]["mimeType"], "image/png");
}

#[test]
fn bad_images_are_refused_with_a_reason_never_decoded() {
    let room = Room::new();
    room.write("fake.png", b"\x89PNG\r\n\x1a\n1234");
    room.write("text.jpg", "not an image at all\n");
    room.write("bomb.png", bomb_png(100_000, 100_000));
    let mut cut = noise_png(300, 300);
    cut.truncate(cut.len() / 2);
    room.write("cut.png", &cut);
    room.write_user("config.json", r#"{"images": {"max_bytes": 50000}}"#);
    for (file, reason) in [
        (
            "fake.png",
            "Cannot read image fake.png: a broken PNG header",
        ),
        (
            "text.jpg",
            "Cannot read image text.jpg: not a PNG, JPEG, GIF or WebP image",
        ),
        (
            "bomb.png",
            "Cannot read image bomb.png: 100000x100000 is 10000000000 pixels, more than the 32000000-pixel cap (images.max_pixels",
        ),
        (
            "cut.png",
            "Cannot read image cut.png: the PNG data does not decode",
        ),
    ] {
        let run = room.call("read", json!({"file_path": file}));
        assert_eq!(run.code, 1, "{file}: {run:?}");
        assert!(run.output().starts_with(reason), "{file}: {}", run.output());
        assert!(run.json().get("content").is_none());
    }
    // A file over what read takes at all is refused unread (a sparse file: nothing to read).
    let big = std::fs::File::create(room.path("huge.webp")).unwrap();
    big.set_len(65 * 1024 * 1024).unwrap();
    let run = room.call("read", json!({"file_path": "huge.webp"}));
    assert!(
        run.output()
            .starts_with("Image too large: huge.webp is 68157440 bytes"),
        "{}",
        run.output()
    );
}

#[test]
fn an_image_under_every_cap_is_still_decoded_and_refused_when_broken() {
    let room = Room::new();
    // Half a PNG, far under the byte cap: a receiver would refuse it, and with it every
    // later request of the conversation.
    let mut cut = noise_png(300, 300);
    cut.truncate(cut.len() / 2);
    room.write("cut.png", &cut);
    // A header that claims the most pixels a PNG can: the pixel cap, not a broken header.
    room.write("giant.png", bomb_png(2_147_483_647, 2_147_483_647));
    for (file, reason) in [
        (
            "cut.png",
            "Cannot read image cut.png: the PNG data does not decode",
        ),
        (
            "giant.png",
            "Cannot read image giant.png: 2147483647x2147483647 is",
        ),
    ] {
        let run = room.call("read", json!({"file_path": file}));
        assert_eq!(run.code, 1, "{file}: {run:?}");
        assert!(run.output().starts_with(reason), "{file}: {}", run.output());
        assert!(
            !file.starts_with("giant") || run.output().contains("images.max_pixels"),
            "{}",
            run.output()
        );
    }
}

#[test]
fn a_side_longer_than_the_side_cap_is_downscaled_to_it() {
    let room = Room::new();
    // A strip of 20,000 x 2 pixels: a few kilobytes, but no provider takes such a side.
    room.write("strip.png", plain_png(20_000, 2));
    let result = room.call("read", json!({"file_path": "strip.png"})).json();
    assert_eq!(result["is_error"], false, "{}", result["output"]);
    let (w, h) = image_size(result["content"][0]["data"].as_str().unwrap());
    assert_eq!((w, h), (8000, 1));
    let output = result["output"].as_str().unwrap();
    assert!(
        output.contains("downscaled from 20000x2") && output.contains("images.max_side"),
        "{output}"
    );
    // The user may allow longer sides.
    room.write_user("config.json", r#"{"images": {"max_side": 30000}}"#);
    let result = room.call("read", json!({"file_path": "strip.png"})).json();
    let (w, _) = image_size(result["content"][0]["data"].as_str().unwrap());
    assert_eq!(w, 20_000);
}

#[test]
fn an_image_over_the_byte_cap_is_downscaled_and_says_so() {
    let room = Room::new();
    room.write("noise.png", noise_png(400, 300));
    room.write_user("config.json", r#"{"images": {"max_bytes": 60000}}"#);
    let result = room.call("read", json!({"file_path": "noise.png"})).json();
    assert_eq!(result["is_error"], false, "{}", result["output"]);
    let (w, h) = image_size(result["content"][0]["data"].as_str().unwrap());
    assert!(w < 400 && h < 300 && w * 3 / 4 <= h + 1, "{w}x{h}");
    assert!(result["metadata"]["bytes"].as_u64() <= Some(60_000));
    assert_eq!(result["metadata"]["downscaled_from"]["width"], 400);
    let output = result["output"].as_str().unwrap();
    assert!(
        output.contains(&format!("{w}x{h}")) && output.contains("downscaled from 400x300"),
        "{output}"
    );
    assert!(
        output.contains("the 60000-byte cap (images.max_bytes in config.json raises it)"),
        "{output}"
    );
}

#[test]
fn over_http_too_a_large_image_is_one_message_under_the_cap() {
    use crate::mcp_http::{Server, events, header};
    let room = Room::new();
    room.write("noise.png", noise_png(1300, 1300));
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    let (status, headers, body) = server.post(
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "noise.png"}}}),
    );
    assert_eq!(status, 200, "{body}");
    let streamed = header(&headers, "content-type").is_some_and(|t| t.contains("event-stream"));
    let messages: Vec<Value> = if streamed {
        events(&body)
    } else {
        vec![serde_json::from_str(&body).unwrap()]
    };
    let answer = messages.iter().find(|m| m["id"] == 2).unwrap();
    assert!(answer.to_string().len() < EIGHT_MIB);
    let data = answer["result"]["content"][0]["data"].as_str().unwrap();
    assert_eq!(body.matches(data).count(), 1);
    assert!(image_size(data).0 < 1300);
}
