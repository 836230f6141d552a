//! The framing of the language-server protocol, read incrementally and capped.
//!
//! A message is `Content-Length: N` (and optionally `Content-Type`) header lines, a blank
//! line, and N bytes of JSON. The bytes arrive in pieces from the server's stdout; the
//! decoder keeps what it has not yet framed and hands out whole bodies. A body over the cap
//! (or a header block that never ends) is an error, so a server cannot make tinytool
//! allocate what it announces: `lsp_server`'s own reader sizes its buffer from the header
//! before it reads.

/// The largest message body accepted.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// The longest header block accepted.
const MAX_HEADER: usize = 8 * 1024;

/// Frames bodies out of the bytes a server writes.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    /// The body length of the message being read, once its header is parsed.
    body: Option<usize>,
}

/// What the decoder refuses; the server is stopped and restarted after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

impl Decoder {
    /// Adds bytes and returns the bodies they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, FrameError> {
        self.buffer.extend_from_slice(bytes);
        let mut bodies = Vec::new();
        loop {
            match self.body {
                None => {
                    let Some(end) = memchr::memmem::find(&self.buffer, b"\r\n\r\n") else {
                        if self.buffer.len() > MAX_HEADER {
                            return Err(FrameError(
                                "a message header longer than 8 KiB".to_string(),
                            ));
                        }
                        break;
                    };
                    let length = content_length(&self.buffer[..end])?;
                    if length > MAX_BODY {
                        return Err(FrameError(format!(
                            "a message of {length} bytes (at most {MAX_BODY} are read)"
                        )));
                    }
                    self.buffer.drain(..end + 4);
                    self.body = Some(length);
                }
                Some(length) => {
                    if self.buffer.len() < length {
                        break;
                    }
                    let rest = self.buffer.split_off(length);
                    bodies.push(std::mem::replace(&mut self.buffer, rest));
                    self.body = None;
                }
            }
        }
        Ok(bodies)
    }
}

/// The `Content-Length` of a header block.
fn content_length(header: &[u8]) -> Result<usize, FrameError> {
    let text = String::from_utf8_lossy(header);
    for line in text.split("\r\n") {
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            return value.trim().parse().map_err(|_| {
                FrameError(format!("a Content-Length that is not a number: {value:?}"))
            });
        }
    }
    Err(FrameError(format!(
        "a message header without Content-Length: {text:?}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn bodies_are_framed_whatever_the_pieces() {
        let mut stream = frame("{\"a\":1}");
        stream.extend(frame("{\"b\":\"é\"}"));
        stream.extend(b"Content-Type: application/vscode-jsonrpc\r\ncontent-length: 2\r\n\r\n{}");
        for piece in [1, 3, 7, stream.len()] {
            let mut decoder = Decoder::default();
            let mut bodies = Vec::new();
            for chunk in stream.chunks(piece) {
                bodies.extend(decoder.push(chunk).unwrap());
            }
            let bodies: Vec<String> = bodies
                .into_iter()
                .map(|b| String::from_utf8(b).unwrap())
                .collect();
            assert_eq!(
                bodies,
                ["{\"a\":1}", "{\"b\":\"é\"}", "{}"],
                "pieces of {piece}"
            );
        }
    }

    #[test]
    fn announced_sizes_over_the_cap_and_broken_headers_are_refused() {
        let mut decoder = Decoder::default();
        let err = decoder
            .push(b"Content-Length: 4000000000\r\n\r\n")
            .unwrap_err();
        assert!(err.0.contains("4000000000"), "{err:?}");
        let mut decoder = Decoder::default();
        assert!(decoder.push(b"Content-Length: x\r\n\r\n").is_err());
        let mut decoder = Decoder::default();
        assert!(decoder.push(b"X-Other: 1\r\n\r\n").is_err());
        let mut decoder = Decoder::default();
        assert!(decoder.push(&vec![b'a'; MAX_HEADER + 1]).is_err());
    }
}
