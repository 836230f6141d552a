//! Standard output and standard error as one stream of lines, in the order they arrived:
//! what a person sees in a terminal, without a terminal (the command keeps its pipes and
//! behaves as it does anywhere else).
//!
//! Each stream's bytes are gathered into lines; a complete line goes into the one
//! [`Capture`] as soon as it arrives, a standard error line marked with [`STDERR_MARK`]
//! (as monitor marks them). So the order is line-granular: two lines written a few
//! milliseconds apart to different streams keep their order, two halves of one line
//! stay together, and writes closer than the reader's wake-ups may come in either order.
//!
//! Memory stays bounded: a line longer than [`LONG_LINE`] bytes is handed to the capture
//! as it comes (the other stream's lines then wait for its end, up to the same bound).

use crate::truncate::Capture;

/// What starts a standard error line.
pub const STDERR_MARK: &str = "STDERR: ";

/// How much of an unfinished line is held back before it is handed on in pieces.
const LONG_LINE: usize = 64 * 1024;

/// Which stream bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

impl Source {
    fn index(self) -> usize {
        match self {
            Source::Out => 0,
            Source::Err => 1,
        }
    }
}

/// The two streams merged line by line into one capture.
#[derive(Debug)]
pub struct Interleaved {
    capture: Capture,
    /// Per stream, the unfinished line.
    pending: [Vec<u8>; 2],
    /// The stream whose long line the capture is in the middle of.
    open: Option<Source>,
}

impl Interleaved {
    /// Merges into `capture`.
    pub fn new(capture: Capture) -> Self {
        Interleaved {
            capture,
            pending: [Vec::new(), Vec::new()],
            open: None,
        }
    }

    /// Takes bytes of one stream.
    pub fn push(&mut self, source: Source, mut bytes: &[u8]) {
        if self.open == Some(source) {
            match memchr::memchr(b'\n', bytes) {
                Some(end) => {
                    self.capture.push(&bytes[..=end]);
                    self.open = None;
                    bytes = &bytes[end + 1..];
                    self.flush_complete(other(source));
                }
                None => {
                    self.capture.push(bytes);
                    return;
                }
            }
        }
        let i = source.index();
        self.pending[i].extend_from_slice(bytes);
        if self.open.is_none() {
            self.flush_complete(source);
            if self.pending[i].len() > LONG_LINE {
                self.start_line(source);
                let piece = std::mem::take(&mut self.pending[i]);
                self.capture.push(&piece);
                self.open = Some(source);
            }
        } else if self.pending[i].len() > 4 * LONG_LINE {
            // The other stream's line has gone on too long: end it here.
            self.capture.push(b"\n");
            self.open = None;
            self.flush_complete(source);
        }
    }

    /// Hands every complete pending line of `source` to the capture (standard output's in
    /// one piece: they need no mark).
    fn flush_complete(&mut self, source: Source) {
        let i = source.index();
        let Some(last) = memchr::memrchr(b'\n', &self.pending[i]) else {
            return;
        };
        if source == Source::Out {
            self.capture.push(&self.pending[i][..=last]);
            self.pending[i].drain(..=last);
            return;
        }
        let lines: Vec<u8> = self.pending[i].drain(..=last).collect();
        for line in lines.split_inclusive(|b| *b == b'\n') {
            self.start_line(source);
            self.capture.push(line);
        }
    }

    fn start_line(&mut self, source: Source) {
        if source == Source::Err {
            self.capture.push(STDERR_MARK.as_bytes());
        }
    }

    /// The capture, with the unfinished lines of both streams (standard output's first),
    /// each on a line of its own.
    pub fn finish(mut self) -> Capture {
        if let Some(source) = self.open.take() {
            let i = source.index();
            let rest = std::mem::take(&mut self.pending[i]);
            self.capture.push(&rest);
            if !self.pending[other(source).index()].is_empty() {
                self.capture.push(b"\n");
            }
            self.flush_complete(other(source));
        }
        let out = std::mem::take(&mut self.pending[0]);
        let err = std::mem::take(&mut self.pending[1]);
        if !out.is_empty() {
            self.capture.push(&out);
            if !err.is_empty() {
                self.capture.push(b"\n");
            }
        }
        if !err.is_empty() {
            self.start_line(Source::Err);
            self.capture.push(&err);
        }
        self.capture
    }
}

fn other(source: Source) -> Source {
    match source {
        Source::Out => Source::Err,
        Source::Err => Source::Out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::truncate::Limits;

    fn merged(pieces: &[(Source, &str)]) -> String {
        let mut both = Interleaved::new(Capture::new(Limits {
            max_bytes: 1 << 20,
            ..Limits::default()
        }));
        for (source, text) in pieces {
            both.push(*source, text.as_bytes());
        }
        both.finish().finish().text
    }

    #[test]
    fn lines_keep_the_order_they_arrived_in_and_error_lines_are_marked() {
        use Source::*;
        assert_eq!(
            merged(&[
                (Out, "one\n"),
                (Err, "oops\n"),
                (Out, "two\n"),
                (Err, "bad\nworse\n")
            ]),
            "one\nSTDERR: oops\ntwo\nSTDERR: bad\nSTDERR: worse\n"
        );
    }

    #[test]
    fn halves_of_a_line_stay_together_whatever_comes_between() {
        use Source::*;
        assert_eq!(
            merged(&[
                (Out, "Compil"),
                (Err, "warn"),
                (Out, "ing\n"),
                (Err, "ing\n")
            ]),
            "Compiling\nSTDERR: warning\n"
        );
    }

    #[test]
    fn unfinished_last_lines_end_the_output_standard_output_first() {
        use Source::*;
        assert_eq!(merged(&[(Err, "e"), (Out, "o")]), "o\nSTDERR: e");
        assert_eq!(merged(&[(Out, "a\nb")]), "a\nb");
    }

    #[test]
    fn a_line_longer_than_the_bound_is_handed_on_in_pieces_and_others_wait_for_it() {
        use Source::*;
        let long = "x".repeat(LONG_LINE + 10);
        let text = merged(&[(Out, &long), (Err, "meanwhile\n"), (Out, "end\n")]);
        assert_eq!(text, format!("{long}end\nSTDERR: meanwhile\n"));
    }
}
