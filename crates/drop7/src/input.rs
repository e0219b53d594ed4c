//! The one line reader behind every line-based input (root lines of `decide`
//! and `leaf`, root files of `bench`): accepts a UTF-8 byte-order mark at the
//! start and `\n` or `\r\n` line ends, and refuses a line longer than
//! [`MAX_LINE_BYTES`] without holding it in memory (the rest of such a line is
//! skipped in buffer-sized pieces).
//!
//! ```
//! use drop7::input::{LineProblem, LineReader};
//! let data = b"\xEF\xBB\xBFfirst\r\nsecond\nxxxxxxxxxx\nlast";
//! let mut r = LineReader::with_limit(&data[..], 8);
//! assert_eq!(r.next_line().unwrap().unwrap().text, Ok("first".to_string()));
//! assert_eq!(r.next_line().unwrap().unwrap().text, Ok("second".to_string()));
//! let long = r.next_line().unwrap().unwrap();
//! assert_eq!((long.number, long.text), (3, Err(LineProblem::TooLong { limit: 8 })));
//! assert_eq!(r.next_line().unwrap().unwrap().text, Ok("last".to_string()));
//! assert!(r.next_line().unwrap().is_none());
//! ```

use std::io::{self, BufRead};

/// The longest line accepted, in bytes without its line end: 64 KiB (a root
/// line is under 200 bytes).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Why a line was not returned as text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// Longer than the limit (in bytes, line end excluded); skipped unread.
    #[error("line is longer than {limit} bytes")]
    TooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// Not valid UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// Line 1 is not UTF-8 and starts as gzip data does ([`is_gzip`]).
    #[error("line is gzip-compressed data, not text: gunzip the input first")]
    Gzip,
}

/// Whether `bytes` start as gzip data does (the magic `1f 8b`, RFC 1952): a
/// compressed file given where text is read is named as such.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// One input line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// The text without BOM and line end, or why it is refused.
    pub text: Result<String, LineProblem>,
    /// The line's length in bytes as read, without its line end (`\n`,
    /// `\r\n`, or a `\r` at the end of the input); a BOM counts. Counted
    /// for a line over the limit too (its bytes are not held).
    pub len: usize,
}

/// Reads lines from any [`BufRead`] (see the module docs).
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    limit: usize,
    number: usize,
    buf: Vec<u8>,
    /// Return a too-long line as soon as it passes the limit (the rest of
    /// it unread): see [`LineReader::stopping_at_long_lines`].
    stop_at_long: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the limit [`MAX_LINE_BYTES`].
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    /// A reader refusing lines over `limit` bytes.
    pub fn with_limit(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            limit,
            number: 0,
            buf: Vec::new(),
            stop_at_long: false,
        }
    }

    /// This reader, returning a line over the limit as soon as it passes
    /// the limit, without reading the rest of it: for a file that is refused
    /// at its first bad line (a line that never ends, such as `/dev/zero`'s,
    /// is then refused at once instead of being skipped forever). Reading
    /// on after such a line starts in its middle.
    pub fn stopping_at_long_lines(mut self) -> Self {
        self.stop_at_long = true;
        self
    }

    /// The next line; `Ok(None)` at the end of the input.
    ///
    /// # Errors
    /// An I/O error of the underlying reader (interrupted reads are retried).
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.buf.clear();
        // Keep at most limit + 4 bytes: the line plus a possible BOM and '\r'.
        let keep = self.limit.saturating_add(4);
        let mut too_long = false;
        let mut any = false;
        // The bytes of the line before its '\n', and the last of them.
        let (mut len, mut last) = (0usize, None);
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (part, used, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], i + 1, true),
                None => (chunk, chunk.len(), false),
            };
            len = len.saturating_add(part.len());
            last = part.last().copied().or(last);
            if !too_long {
                if self.buf.len() + part.len() > keep {
                    too_long = true;
                    self.buf.clear();
                    if self.stop_at_long {
                        self.inner.consume(used);
                        break;
                    }
                } else {
                    self.buf.extend_from_slice(part);
                }
            }
            self.inner.consume(used);
            if done {
                break;
            }
        }
        self.number += 1;
        if last == Some(b'\r') {
            len -= 1;
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        let mut bytes = &self.buf[..];
        if self.number == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let text = if too_long || bytes.len() > self.limit {
            Err(LineProblem::TooLong { limit: self.limit })
        } else {
            std::str::from_utf8(bytes).map(str::to_owned).map_err(|_| {
                if self.number == 1 && is_gzip(bytes) {
                    LineProblem::Gzip
                } else {
                    LineProblem::NotUtf8
                }
            })
        };
        Ok(Some(Line {
            number: self.number,
            text,
            len,
        }))
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = io::Result<Line>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &[u8], limit: usize) -> Vec<Result<String, LineProblem>> {
        LineReader::with_limit(data, limit)
            .map(|l| l.unwrap().text)
            .collect()
    }

    #[test]
    fn bom_crlf_and_limits() {
        assert_eq!(lines(b"", 4), vec![]);
        assert_eq!(lines(b"\n", 4), vec![Ok(String::new())]);
        assert_eq!(
            lines(b"ab\r\n\r\ncd", 4),
            vec![Ok("ab".into()), Ok("".into()), Ok("cd".into())]
        );
        assert_eq!(lines(b"\xEF\xBB\xBFabcd\r\n", 4), vec![Ok("abcd".into())]);
        // A BOM only counts at the very start.
        assert_eq!(lines(b"a\n\xEF\xBB\xBFb", 8)[1], Ok("\u{FEFF}b".into()));
        let too_long = Err(LineProblem::TooLong { limit: 4 });
        assert_eq!(
            lines(b"abcde\nabcd\r", 4),
            vec![too_long.clone(), Ok("abcd".into())]
        );
        assert_eq!(lines(b"abcd\r\r\n", 4), vec![too_long]);
        assert_eq!(lines(b"\xFF\n", 4), vec![Err(LineProblem::NotUtf8)]);
        assert_eq!(
            lines(b"\x1f\x8b\x08\xff\n\x1f\x8b\xff\n", 8),
            vec![Err(LineProblem::Gzip), Err(LineProblem::NotUtf8)]
        );
        let lens: Vec<usize> =
            LineReader::with_limit(&b"\xEF\xBB\xBFab\r\n\r\nabcdef\r\r\nx\r"[..], 4)
                .map(|l| l.unwrap().len)
                .collect();
        assert_eq!(lens, [5, 0, 7, 1]);
    }

    #[test]
    fn long_line_is_not_held() {
        // A small-buffered reader over a 1 MB line: the buffer never grows past the limit.
        let mut data = vec![b'x'; 1 << 20];
        data.extend_from_slice(b"\nok\n");
        let mut r = LineReader::with_limit(io::BufReader::with_capacity(4096, &data[..]), 100);
        let first = r.next_line().unwrap().unwrap();
        assert_eq!(first.text, Err(LineProblem::TooLong { limit: 100 }));
        assert_eq!(first.len, 1 << 20);
        assert!(r.buf.capacity() <= 8192);
        assert_eq!(r.next_line().unwrap().unwrap().text, Ok("ok".into()));
    }

    #[test]
    fn a_line_that_never_ends_is_refused_at_once() {
        // `/dev/zero` as a file of lines: no line end, ever.
        let zeros = io::BufReader::with_capacity(4096, io::repeat(0));
        let mut r = LineReader::with_limit(zeros, 100).stopping_at_long_lines();
        let first = r.next_line().unwrap().unwrap();
        assert_eq!(
            (first.number, first.text),
            (1, Err(LineProblem::TooLong { limit: 100 }))
        );
        // Short lines are read as before.
        let mut r = LineReader::with_limit(&b"ab\ncd"[..], 4).stopping_at_long_lines();
        assert_eq!(r.next_line().unwrap().unwrap().text, Ok("ab".into()));
        assert_eq!(r.next_line().unwrap().unwrap().text, Ok("cd".into()));
        assert!(r.next_line().unwrap().is_none());
    }
}
