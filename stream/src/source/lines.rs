//! Lines of bounded length under the readers, so that reading holds at most one line of
//! at most `limit` bytes, whatever the input sends.
//!
//! [`BoundedLines`] passes whole lines through. A line longer than the limit is dropped
//! (its rest is read and discarded up to the next newline, in constant memory) and
//! replaced by [`TOO_LONG`], a line no real input holds, which the readers turn into
//! [`ReadErrorKind::LineTooLong`](super::ReadErrorKind::LineTooLong) on the same line
//! number — so `--on-error skip` skips it like any other bad row.
//!
//! Memory: one line buffer of at most `limit + 1` bytes.

use std::io::{self, BufRead, Read};

/// What stands in for a line over the limit (NUL bytes: never a number or a label).
pub const TOO_LONG: &[u8] = b"\0line-too-long\0\n";

/// A line without its end, as the readers compare it with [`TOO_LONG`].
pub(crate) fn is_too_long(line: &str) -> bool {
    TOO_LONG.strip_suffix(b"\n") == Some(line.trim_end_matches(['\n', '\r']).as_bytes())
}

/// Lines read from an input before it is handed to a reader (the first line, read to
/// detect the format) and the input after them, as one input.
pub type Replay<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// An input read one line at a time, each at most `limit` bytes.
pub struct BoundedLines<R> {
    inner: R,
    line: Vec<u8>,
    consumed: usize,
    limit: usize,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `inner`, at most `limit` bytes each (the newline not counted).
    pub fn new(inner: R, limit: usize) -> Self {
        BoundedLines { inner, line: Vec::new(), consumed: 0, limit }
    }

    /// Reads the next line into the buffer (empty at the end of the input).
    fn next_line(&mut self) -> io::Result<()> {
        self.consumed = 0;
        read_line(&mut self.inner, self.limit, &mut self.line)
    }
}

/// Reads one line of `input` into `line` (replacing its contents; empty at the end of the
/// input): the line as it is when it has at most `limit` bytes, else [`TOO_LONG`] after
/// the rest of it was read and dropped.
///
/// # Errors
/// What reading `input` fails with.
pub fn read_line(input: &mut impl BufRead, limit: usize, line: &mut Vec<u8>) -> io::Result<()> {
    line.clear();
    let most = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    input.take(most).read_until(b'\n', line)?;
    if line.len() > limit && line.last() != Some(&b'\n') {
        input.skip_until(b'\n')?;
        line.clear();
        line.extend_from_slice(TOO_LONG);
    }
    Ok(())
}

impl<R: BufRead> Read for BoundedLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        for (to, from) in buf.iter_mut().zip(available) {
            *to = *from;
        }
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for BoundedLines<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.consumed == self.line.len() {
            self.next_line()?;
        }
        Ok(self.line.get(self.consumed..).unwrap_or_default())
    }

    fn consume(&mut self, amount: usize) {
        self.consumed = (self.consumed + amount).min(self.line.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_replaced_and_the_rest_passes() {
        let text = format!("short\n{}\nexactly5\n12345\n{}", "x".repeat(100), "y".repeat(9));
        let mut lines = BoundedLines::new(text.as_bytes(), 8);
        let mut out = Vec::new();
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap() > 0 {
            out.push(std::mem::take(&mut line));
        }
        assert_eq!(out, ["short\n", "\0line-too-long\0\n", "exactly5\n", "12345\n", "\0line-too-long\0\n"]);
        assert!(is_too_long(&out[1]) && !is_too_long(&out[0]));
    }

    #[test]
    fn an_endless_line_is_read_in_constant_memory() {
        // 64 MiB without a newline, then a good line: the buffer never grows past the limit.
        let endless = io::repeat(b'1').take(64 << 20).chain(&b"\n1 1:2\n"[..]);
        let mut lines = BoundedLines::new(io::BufReader::new(endless), 1024);
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        assert!(is_too_long(&line));
        line.clear();
        lines.read_line(&mut line).unwrap();
        assert_eq!((line.as_str(), lines.line.capacity() <= 2048), ("1 1:2\n", true));
    }
}
