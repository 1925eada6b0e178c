//! Server-sent events, through eventsource-stream (PROTOCOL.md section 3 "SSE parsing"):
//! comments and keep-alives are skipped, CRLF and multi-line `data:` handled, `id:`/`retry:`
//! ignored (A2A has no Last-Event-ID replay, spec section 3.7). What we add is a cap on the
//! size of one event, so a hostile or broken server cannot make us buffer without bound.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};

use super::error::Error;

/// Default cap on one event (a2a-js caps at 4 MiB; we allow a little more).
pub const DEFAULT_FRAME_LIMIT: usize = 8 * 1024 * 1024;

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
    let guarded = SizeGuard {
        inner: Box::pin(bytes),
        limit,
        event_len: 0,
        newlines: 0,
        last_cr: false,
        tripped: false,
    };
    let mut failed = false;
    guarded
        .eventsource()
        .map(move |item| match item {
            Ok(ev) => Ok(Frame {
                event: ev.event,
                data: ev.data,
            }),
            Err(eventsource_stream::EventStreamError::Transport(GuardError::TooLarge)) => {
                Err(Error::FrameTooLarge { limit })
            }
            Err(eventsource_stream::EventStreamError::Transport(GuardError::Inner(msg))) => Err(Error::Stream(msg)),
            Err(other) => Err(Error::Stream(other.to_string())),
        })
        .take_while(move |item| {
            let keep = !failed;
            failed |= item.is_err();
            std::future::ready(keep)
        })
}

enum GuardError {
    TooLarge,
    Inner(String),
}

impl std::fmt::Display for GuardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuardError::TooLarge => f.write_str("frame too large"),
            GuardError::Inner(m) => f.write_str(m),
        }
    }
}

/// Counts the bytes of the current event (since the last blank line) and fails the stream once
/// it passes the limit, before the parser has buffered it all.
struct SizeGuard<S> {
    inner: Pin<Box<S>>,
    limit: usize,
    event_len: usize,
    /// Line ends seen in a row; two end an event. `\r\n` counts once.
    newlines: u8,
    last_cr: bool,
    tripped: bool,
}

impl<S> SizeGuard<S> {
    fn admit(&mut self, chunk: &[u8]) -> bool {
        let mut rest = chunk;
        while let Some(&first) = rest.first() {
            // Ordinary bytes are counted a run at a time, up to the next line end.
            let run = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
            if run > 0 {
                if self.newlines >= 2 {
                    self.event_len = 0;
                }
                self.newlines = 0;
                self.last_cr = false;
                self.event_len += run;
                if self.event_len > self.limit {
                    return false;
                }
                rest = &rest[run..];
                continue;
            }
            if first == b'\r' {
                self.newlines = self.newlines.saturating_add(1);
                self.last_cr = true;
            } else if !std::mem::take(&mut self.last_cr) {
                self.newlines = self.newlines.saturating_add(1);
            }
            rest = &rest[1..];
        }
        true
    }
}

impl<S, E> Stream for SizeGuard<S>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    type Item = Result<Bytes, GuardError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.tripped {
            return Poll::Ready(None);
        }
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if self.admit(&chunk) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.tripped = true;
                    Poll::Ready(Some(Err(GuardError::TooLarge)))
                }
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(GuardError::Inner(e.to_string())))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
