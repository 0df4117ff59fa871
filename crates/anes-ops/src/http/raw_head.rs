//! What hyper's parser hides of a request: it trims the whitespace after a header value (RFC 9110
//! section 5.5), so `Authorization: Bearer <token> ` reaches the handlers as `Bearer <token>`. The
//! server's rule is that the credential compared is the one sent (docs/OPERATIONS.md, Authorization),
//! so [`HeadTap`] reads the bytes hyper reads, follows the requests' framing on the connection (heads,
//! `Content-Length` and chunked bodies), and keeps, for each request in order, its Authorization values
//! as sent when one of them ends in whitespace.
//!
//! A connection the tap cannot follow (a framing hyper refuses, a head over the limit) stops being
//! followed: hyper answers such a request with an error and closes the connection.

use std::collections::VecDeque;

/// The Authorization values of one request as sent, when one ends in a space or a tab.
pub(crate) type RawAuthorization = Option<Vec<Vec<u8>>>;

/// Follows the requests on one connection from the bytes read off it.
#[derive(Debug)]
pub(crate) struct HeadTap {
    state: State,
    // The head (or a chunk-size or trailer line) read so far.
    line: Vec<u8>,
    max_head_bytes: usize,
    heads: VecDeque<RawAuthorization>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Body { left: u64 },
    ChunkSize,
    ChunkData { left: u64 },
    ChunkEnd,
    Trailers,
    Lost,
}

impl HeadTap {
    pub(crate) fn new(max_head_bytes: usize) -> HeadTap {
        HeadTap { state: State::Head, line: Vec::new(), max_head_bytes, heads: VecDeque::new() }
    }

    /// The next request's Authorization values as sent, for the request hyper parses next; `None`
    /// when they end in no whitespace, or the connection is no longer followed.
    pub(crate) fn next_request(&mut self) -> RawAuthorization {
        self.heads.pop_front().flatten()
    }

    /// Takes the bytes hyper just read.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            bytes = match self.state {
                State::Lost => return,
                State::Head => self.read_head(bytes),
                State::Body { left } | State::ChunkData { left } => {
                    let taken = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                    let left = left - taken as u64;
                    self.state = match self.state {
                        State::ChunkData { .. } if left == 0 => State::ChunkEnd,
                        State::ChunkData { .. } => State::ChunkData { left },
                        _ if left == 0 => State::Head,
                        _ => State::Body { left },
                    };
                    &bytes[taken..]
                }
                State::ChunkSize | State::ChunkEnd | State::Trailers => self.read_line(bytes),
            };
        }
    }

    fn read_head<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let mut bytes = bytes;
        // Empty lines before a request line are skipped (RFC 9112 section 2.2), as hyper does.
        if self.line.is_empty() {
            let start = bytes.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(bytes.len());
            bytes = &bytes[start..];
        }
        let searched_from = self.line.len().saturating_sub(3);
        let before = self.line.len();
        self.line.extend_from_slice(bytes);
        let Some(end) = head_end(&self.line[searched_from..]).map(|e| e + searched_from) else {
            if self.line.len() > self.max_head_bytes {
                self.lose();
            }
            return &[];
        };
        let head = std::mem::take(&mut self.line);
        self.take_head(&head[..end]);
        &bytes[end - before..]
    }

    fn read_line<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let Some(newline) = bytes.iter().position(|&b| b == b'\n') else {
            self.line.extend_from_slice(bytes);
            if self.line.len() > self.max_head_bytes {
                self.lose();
            }
            return &[];
        };
        self.line.extend_from_slice(&bytes[..newline]);
        let line = std::mem::take(&mut self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        self.state = match self.state {
            State::ChunkSize => {
                let digits = line.split(|&b| b == b';' || b == b' ' || b == b'\t').next().unwrap_or_default();
                match std::str::from_utf8(digits).ok().and_then(|d| u64::from_str_radix(d, 16).ok()) {
                    Some(0) => State::Trailers,
                    Some(size) => State::ChunkData { left: size },
                    None => State::Lost,
                }
            }
            State::ChunkEnd if line.is_empty() => State::ChunkSize,
            State::Trailers if line.is_empty() => State::Head,
            State::Trailers => State::Trailers,
            _ => State::Lost,
        };
        &bytes[newline + 1..]
    }

    /// Records one complete head and the framing of the body that follows it.
    fn take_head(&mut self, head: &[u8]) {
        let mut authorization = Vec::new();
        let mut content_length: Option<u64> = None;
        let mut transfer_encoding: Option<Vec<u8>> = None;
        let mut framing_known = true;
        for line in head.split(|&b| b == b'\n').skip(1) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
            let (name, value) = (&line[..colon], &line[colon + 1..]);
            let start = value.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(value.len());
            let value = &value[start..];
            if name.eq_ignore_ascii_case(b"authorization") {
                authorization.push(value.to_vec());
            } else if name.eq_ignore_ascii_case(b"content-length") {
                let parsed = std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<u64>().ok());
                match (parsed, content_length) {
                    (Some(n), None) => content_length = Some(n),
                    (Some(n), Some(m)) if n == m => {}
                    _ => framing_known = false,
                }
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                let codings = transfer_encoding.get_or_insert_with(Vec::new);
                if !codings.is_empty() {
                    codings.push(b',');
                }
                codings.extend_from_slice(value);
            }
        }
        let padded = authorization.iter().any(|v| v.last().is_some_and(|&b| b == b' ' || b == b'\t'));
        self.heads.push_back(padded.then_some(authorization));
        self.state = match (transfer_encoding, content_length) {
            _ if !framing_known => State::Lost,
            // Transfer-Encoding wins over Content-Length; a last coding other than chunked is refused.
            (Some(codings), _) => {
                let last = codings.rsplit(|&b| b == b',').next().unwrap_or_default();
                if last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                    State::ChunkSize
                } else {
                    State::Lost
                }
            }
            (None, Some(0) | None) => State::Head,
            (None, Some(n)) => State::Body { left: n },
        };
    }

    fn lose(&mut self) {
        self.state = State::Lost;
        self.line = Vec::new();
    }
}

/// Where a head ends in `bytes`: just after its empty line (CRLF CRLF, or bare LFs).
fn head_end(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len()).find_map(|i| {
        let rest = &bytes[i..];
        if rest.starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if rest.starts_with(b"\n\r\n") {
            Some(i + 3)
        } else if rest.starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const PADDED: &[u8] = b"POST /a HTTP/1.1\r\nAuthorization: Bearer t \r\nContent-Length: 5\r\n\r\nhello";
    const PLAIN: &[u8] = b"GET /b HTTP/1.1\r\nAuthorization: Bearer t\r\n\r\n";
    const CHUNKED: &[u8] =
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\nAuthorization:\tBearer t\t\r\n\r\n\
          5;ext=1\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n";

    fn verdicts(tap: &mut HeadTap, n: usize) -> Vec<RawAuthorization> {
        (0..n).map(|_| tap.next_request()).collect()
    }

    #[test]
    fn each_request_gets_its_own_heads_values_whatever_the_reads() {
        let stream = [PADDED, PLAIN, CHUNKED, b"\r\n", PLAIN].concat();
        let expected = vec![
            Some(vec![b"Bearer t ".to_vec()]),
            None,
            Some(vec![b"Bearer t\t".to_vec()]),
            None,
            // Nothing more was sent.
            None,
        ];
        for piece in [1, 2, 3, 7, 64, stream.len()] {
            let mut tap = HeadTap::new(1 << 16);
            for chunk in stream.chunks(piece) {
                tap.feed(chunk);
            }
            assert_eq!(verdicts(&mut tap, 5), expected, "read {piece} bytes at a time");
        }
    }

    #[test]
    fn a_framing_it_cannot_follow_stops_it() {
        let mut tap = HeadTap::new(1 << 16);
        tap.feed(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab");
        tap.feed(PADDED);
        assert_eq!(verdicts(&mut tap, 2), [None, None]);
        let mut tap = HeadTap::new(64);
        tap.feed(&[b'a'; 100]);
        tap.feed(PADDED);
        assert_eq!(tap.next_request(), None);
    }

    proptest! {
        #[test]
        fn any_bytes_are_taken_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..2000), piece in 1usize..50) {
            let mut tap = HeadTap::new(512);
            for chunk in bytes.chunks(piece) {
                tap.feed(chunk);
            }
            let _ = verdicts(&mut tap, 4);
        }
    }
}
