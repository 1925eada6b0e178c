//! Server-sent events (docs/protocol-notes.md, "SSE parsing"; the WHATWG event-stream format):
//! comments and keep-alives are skipped, CRLF, CR and LF line ends and multi-line `data:` handled,
//! one leading BOM dropped, `id:`/`retry:` ignored (A2A has no Last-Event-ID replay,
//! spec section 3.7). Our own small parser, so that hostile input has bounds: one event is capped
//! in size before it is buffered, invalid UTF-8 ends the stream at the line that carries it, and
//! the work per byte is constant whatever the chunking (the fuzzer in tests/fuzz.rs checks all
//! three).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;

use super::error::Error;

/// Default cap on one event (a2a-js caps at 4 MiB; we allow a little more).
pub const DEFAULT_FRAME_LIMIT: usize = 8 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Capacity a stream's buffers keep between reads. A stream may stay open for hours after one
/// large frame or one read of many frames; holding what those grew to would cost every open stream
/// that much (issue 23: memory per open stream), so past this the buffer is freed once used.
const KEPT_CAPACITY: usize = 4 * 1024;

/// One dispatched event: its `event:` name (`message` when absent) and its joined `data:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub event: String,
    pub data: String,
}

/// Parses a byte stream into frames. After an error (oversized frame, broken transport, bad
/// UTF-8) the stream ends: the caller treats that as "stream over" and asks GetTask.
pub fn frames<S, E>(bytes: S, limit: usize) -> impl Stream<Item = Result<Frame, Error>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    Frames::new(bytes, limit)
}

struct Frames<S> {
    inner: Pin<Box<S>>,
    parser: Parser,
    ready: VecDeque<Result<Frame, Error>>,
    done: bool,
}

impl<S> Frames<S> {
    fn new(bytes: S, limit: usize) -> Frames<S> {
        Frames {
            inner: Box::pin(bytes),
            parser: Parser::new(limit),
            ready: VecDeque::new(),
            done: false,
        }
    }
}

impl<S, E> Stream for Frames<S>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    type Item = Result<Frame, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.ready.pop_front() {
                if this.ready.is_empty() && this.ready.capacity() * size_of::<Result<Frame, Error>>() > KEPT_CAPACITY {
                    this.ready = VecDeque::new();
                }
                return Poll::Ready(Some(item));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let failure = match this.inner.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => this.parser.feed(&chunk, &mut this.ready).err(),
                Poll::Ready(Some(Err(e))) => Some(Error::Stream(e.to_string())),
                Poll::Ready(None) => {
                    this.done = true;
                    this.parser.finish().err()
                }
                Poll::Pending => return Poll::Pending,
            };
            if let Some(e) = failure {
                this.ready.push_back(Err(e));
                this.done = true;
            }
        }
    }
}

/// The line and event being read.
struct Parser {
    limit: usize,
    /// The stream's first line may open with a byte order mark.
    first_line: bool,
    line: Vec<u8>,
    /// The last line ended with CR: an LF right after it belongs to that line end.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl Parser {
    fn new(limit: usize) -> Parser {
        Parser {
            limit,
            first_line: true,
            line: Vec::new(),
            after_cr: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
        }
    }

    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<Result<Frame, Error>>) -> Result<(), Error> {
        if chunk.is_empty() {
            return Ok(());
        }
        let mut rest = chunk;
        if std::mem::take(&mut self.after_cr) && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        while !rest.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.line.extend_from_slice(rest);
                return self.check_size(0);
            };
            let frame = if self.line.is_empty() {
                // The whole line is in this read: read it where it lies, without a copy.
                self.check_size(end)?;
                self.end_line(&rest[..end])?
            } else {
                self.line.extend_from_slice(&rest[..end]);
                self.check_size(0)?;
                let line = std::mem::take(&mut self.line);
                let frame = self.end_line(&line);
                // The buffer is kept for the next line that spans reads, unless it grew large.
                if line.capacity() <= KEPT_CAPACITY {
                    self.line = line;
                    self.line.clear();
                }
                frame?
            };
            if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => rest = &rest[end + 2..],
                    Some(_) => rest = &rest[end + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[end + 1..];
            }
            if let Some(frame) = frame {
                out.push_back(Ok(frame));
            }
        }
        Ok(())
    }

    /// What is held for one event (the unfinished line, and `more` bytes of a line about to be
    /// read) stays under the limit.
    fn check_size(&self, more: usize) -> Result<(), Error> {
        if self.line.len() + more + self.data.len() + self.event.len() > self.limit {
            return Err(Error::FrameTooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// The end of the stream: an unfinished event is dropped (as browsers do), but a stream cut
    /// inside a character is still reported as not UTF-8.
    fn finish(&mut self) -> Result<(), Error> {
        std::str::from_utf8(&self.line).map(drop).map_err(|_| not_utf8())
    }

    fn end_line(&mut self, mut line: &[u8]) -> Result<Option<Frame>, Error> {
        if std::mem::take(&mut self.first_line) && line.starts_with(BOM) {
            line = &line[BOM.len()..];
        }
        let line = std::str::from_utf8(line).map_err(|_| not_utf8())?;
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            if !std::mem::take(&mut self.has_data) {
                return Ok(None);
            }
            let event = if event.is_empty() { "message".to_string() } else { event };
            return Ok(Some(Frame { event, data }));
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            // A line starting with a colon is a comment (keep-alives).
            "" => {}
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if std::mem::replace(&mut self.has_data, true) {
                    self.data.push('\n');
                }
                self.data.push_str(value);
            }
            _ => {}
        }
        // The line may have moved into the event: the limit still holds.
        self.check_size(0)?;
        Ok(None)
    }
}

fn not_utf8() -> Error {
    Error::Stream("the event stream is not UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn parse(chunks: &[&str], limit: usize) -> Vec<Result<Frame, String>> {
        let owned: Vec<Result<Bytes, std::io::Error>> = chunks
            .iter()
            .map(|c| Ok(Bytes::copy_from_slice(c.as_bytes())))
            .collect();
        let stream = frames(futures::stream::iter(owned), limit);
        futures::executor::block_on(stream.map(|r| r.map_err(|e| e.to_string())).collect())
    }

    fn frame(event: &str, data: &str) -> Result<Frame, String> {
        Ok(Frame {
            event: event.into(),
            data: data.into(),
        })
    }

    #[test]
    fn comments_crlf_and_multiline_data() {
        let got = parse(
            &[
                ": ping - 2026-01-01\r\n\r\n",
                "data: {\"a\":\r\ndata: 1}\r\n\r\n",
                "event: error\ndata: x\n\n",
            ],
            1024,
        );
        assert_eq!(got, vec![frame("message", "{\"a\":\n1}"), frame("error", "x")]);
    }

    #[test]
    fn frames_split_across_chunks_and_ids_ignored() {
        let got = parse(&["da", "ta: one\nid: 7\nretry: 10\n", "\ndata:two\n\n"], 1024);
        assert_eq!(got, vec![frame("message", "one"), frame("message", "two")]);
    }

    #[test]
    fn an_oversized_frame_is_refused_and_ends_the_stream() {
        let big = format!("data: {}\n\n", "x".repeat(100));
        let got = parse(&["data: small\n\n", &big, "data: after\n\n"], 64);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], frame("message", "small"));
        assert!(got[1].as_ref().unwrap_err().contains("over 64 bytes"));
    }

    #[test]
    fn many_small_frames_never_trip_the_cap() {
        let chunk = "data: 0123456789\r\n\r\n".repeat(50);
        let got = parse(&[&chunk], 32);
        assert_eq!(got.len(), 50);
        assert!(got.iter().all(Result::is_ok));
    }

    #[test]
    fn one_leading_bom_is_dropped_even_split_across_chunks() {
        let got = parse(&["\u{feff}data: a\n\n"], 1024);
        assert_eq!(got, vec![frame("message", "a")]);
        let bytes = "\u{feff}data: b\n\n".as_bytes();
        let owned: Vec<Result<Bytes, std::io::Error>> =
            bytes.chunks(1).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        let got: Vec<_> = futures::executor::block_on(frames(futures::stream::iter(owned), 1024).collect());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].as_ref().unwrap().data, "b");
        // Only the first is a byte order mark; a second one is part of the first line's field name.
        assert_eq!(parse(&["\u{feff}\u{feff}data: c\n\n"], 1024), vec![]);
    }

    #[test]
    fn cr_line_ends_split_from_their_lf_count_once() {
        let got = parse(&["data: a\r", "", "\ndata: b\r", "\r", "data: c\r\r"], 1024);
        assert_eq!(got, vec![frame("message", "a\nb"), frame("message", "c")]);
    }

    #[test]
    fn a_large_line_across_reads_is_not_kept_after_it_is_read() {
        let mut parser = Parser::new(1024 * 1024);
        let mut out = VecDeque::new();
        let big = "x".repeat(64 * 1024);
        for chunk in ["data: ", &big, "\n\n"] {
            parser.feed(chunk.as_bytes(), &mut out).unwrap();
        }
        assert_eq!(out.pop_front().unwrap().unwrap().data, big);
        assert!(parser.line.capacity() <= KEPT_CAPACITY, "{}", parser.line.capacity());
        // A small line that spans reads still reuses its buffer.
        for chunk in ["data: sm", "all\n\n"] {
            parser.feed(chunk.as_bytes(), &mut out).unwrap();
        }
        assert_eq!(out.pop_front().unwrap().unwrap().data, "small");
        assert!(parser.line.capacity() > 0);
    }

    #[test]
    fn a_read_of_many_frames_leaves_no_large_queue_once_they_are_taken() {
        let many = "data: 0123456789\n\n".repeat(1000);
        let chunks = [
            Ok::<_, std::io::Error>(Bytes::from(many)),
            Ok(Bytes::from_static(b"data: after")),
        ];
        let mut frames = Frames::new(futures::stream::iter(chunks), 1024);
        let taken = futures::executor::block_on((&mut frames).take(1000).count());
        assert_eq!(taken, 1000);
        assert!(frames.ready.is_empty());
        let kept = frames.ready.capacity() * size_of::<Result<Frame, Error>>();
        assert!(kept <= KEPT_CAPACITY, "{kept} bytes kept");
    }

    #[test]
    fn invalid_utf8_ends_the_stream_at_its_line() {
        // An endless stream after the bad byte: the parser must not buffer it waiting for more.
        let bad = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"data: \xFF\n\n"))]);
        let endless = futures::stream::repeat_with(|| Ok(Bytes::from_static(b"data: ok\n\n")));
        let got: Vec<_> = futures::executor::block_on(frames(bad.chain(endless), 1024).collect());
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().unwrap_err().to_string().contains("not UTF-8"));
    }
}
