//! A JSON document read as raw values: the members of its top-level object, and the
//! elements of an array one at a time, each handed out as the bytes it spans.
//!
//! NVD feeds are one object holding an array of thousands of records. Parsing the
//! stream with serde_json's reader goes byte by byte through `Read` with position
//! tracking; finding where each record ends (strings, escapes and nesting are all it
//! takes) and parsing its bytes as a slice is several times faster. Only the structure
//! is checked here: the bytes of every value are parsed (and so validated) by serde_json
//! afterwards.

use std::io::BufRead;

/// Where a byte is: 1-based line and column (in bytes), as serde_json counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

impl Position {
    /// The file position of a position inside a value that starts at `self`.
    pub fn inner(self, line: usize, column: usize) -> Position {
        if line <= 1 {
            Position { line: self.line, column: self.column + column.saturating_sub(1) as u64 }
        } else {
            Position { line: self.line + line as u64 - 1, column: column as u64 }
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)
    }
}

/// Why the structure could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{at}: {message}")]
    Syntax { at: Position, message: String },
}

/// A reader of raw JSON values.
pub struct Splitter<R> {
    reader: R,
    /// The position of the next byte.
    at: Position,
}

impl<R: BufRead> Splitter<R> {
    pub fn new(reader: R) -> Self {
        Self { reader, at: Position { line: 1, column: 1 } }
    }

    /// The position of the next byte.
    pub fn position(&self) -> Position {
        self.at
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, SplitError> {
        Err(SplitError::Syntax { at: self.at, message: message.into() })
    }

    /// Skips whitespace and returns the next byte without consuming it (None at the end).
    pub fn peek(&mut self) -> Result<Option<u8>, SplitError> {
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let blank = buf.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            let n = blank.unwrap_or(buf.len());
            let next = blank.map(|i| buf[i]);
            advance(&mut self.at, &buf[..n]);
            self.reader.consume(n);
            if next.is_some() {
                return Ok(next);
            }
        }
    }

    /// Consumes `byte` (after whitespace), or fails saying what was expected.
    pub fn expect(&mut self, byte: u8, what: &str) -> Result<(), SplitError> {
        self.either(byte, byte, what).map(drop)
    }

    /// Consumes one of `a` or `b` (after whitespace) and returns it.
    pub fn either(&mut self, a: u8, b: u8, what: &str) -> Result<u8, SplitError> {
        match self.peek()? {
            Some(c) if c == a || c == b => {
                self.reader.consume(1);
                self.at.column += 1;
                Ok(c)
            }
            Some(c) => self.error(format!("expected {what}, found `{}`", char::from(c).escape_default())),
            None => self.error(format!("unexpected end of file, expected {what}")),
        }
    }

    /// Appends the bytes of the next value (after whitespace) to `out`: a string, an
    /// object or array (to its matching close), or a scalar (to the next delimiter).
    /// Fails at the end of the input inside the value, or past `max` bytes.
    pub fn value(&mut self, out: &mut Vec<u8>, max: usize) -> Result<(), SplitError> {
        let start = out.len();
        let Some(first) = self.peek()? else {
            return self.error("unexpected end of file, expected a value");
        };
        if matches!(first, b'}' | b']' | b',' | b':') {
            return self.error(format!("expected a value, found `{}`", char::from(first)));
        }
        let scalar = !matches!(first, b'"' | b'{' | b'[');
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if scalar && out.len() > start {
                    return Ok(());
                }
                return self.error("unexpected end of file inside a value");
            }
            let mut end = None;
            let mut i = 0;
            while i < buf.len() {
                let b = buf[i];
                if in_string {
                    if escaped {
                        escaped = false;
                    } else {
                        // Jump to the next quote or backslash: most bytes are text.
                        match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                            Some(j) => {
                                i += j;
                                if buf[i] == b'\\' {
                                    escaped = true;
                                } else {
                                    in_string = false;
                                    if depth == 0 {
                                        end = Some(i + 1);
                                        break;
                                    }
                                }
                            }
                            None => {
                                i = buf.len();
                                continue;
                            }
                        }
                    }
                } else if scalar {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        end = Some(i);
                        break;
                    }
                } else {
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i + 1);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            let n = end.unwrap_or(buf.len());
            if out.len() - start + n > max {
                return self.error(format!("a value longer than {} MiB", max >> 20));
            }
            out.extend_from_slice(&buf[..n]);
            advance(&mut self.at, &buf[..n]);
            self.reader.consume(n);
            if end.is_some() {
                return Ok(());
            }
        }
    }
}

/// Moves `at` past `consumed`.
fn advance(at: &mut Position, consumed: &[u8]) {
    match memchr::memrchr(b'\n', consumed) {
        Some(last) => {
            at.line += memchr::memchr_iter(b'\n', consumed).count() as u64;
            at.column = (consumed.len() - last) as u64;
        }
        None => at.column += consumed.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<String> {
        let mut s = Splitter::new(text.as_bytes());
        s.expect(b'[', "`[`").unwrap();
        let mut out = Vec::new();
        if s.peek().unwrap() == Some(b']') {
            return out;
        }
        loop {
            let mut v = Vec::new();
            s.value(&mut v, 1 << 20).unwrap();
            out.push(String::from_utf8(v).unwrap());
            if s.either(b',', b']', "`,` or `]`").unwrap() == b']' {
                return out;
            }
        }
    }

    #[test]
    fn values_end_where_json_says() {
        assert_eq!(
            values(r#" [ "a\"]}", {"b": [1, "]", {"c": "\\"}]}, 12.5e3 , true,null,[[]],{} ] "#),
            [r#""a\"]}""#, r#"{"b": [1, "]", {"c": "\\"}]}"#, "12.5e3", "true", "null", "[[]]", "{}"]
        );
        assert!(values("[]").is_empty());
    }

    #[test]
    fn a_value_cut_short_is_an_error_at_the_end() {
        let mut s = Splitter::new(&b"{\"a\":\n  \"unterminated"[..]);
        s.expect(b'{', "`{`").unwrap();
        let mut v = Vec::new();
        s.value(&mut v, 100).unwrap();
        s.expect(b':', "`:`").unwrap();
        let err = s.value(&mut v, 100).unwrap_err().to_string();
        assert_eq!(err, "line 2 column 16: unexpected end of file inside a value");
    }

    #[test]
    fn positions_count_lines_and_columns() {
        let mut s = Splitter::new(&b"\n\n   [1,\n 2]"[..]);
        s.expect(b'[', "`[`").unwrap();
        assert_eq!(s.position(), Position { line: 3, column: 5 });
        let mut v = Vec::new();
        s.value(&mut v, 10).unwrap();
        s.expect(b',', "`,`").unwrap();
        assert_eq!(s.peek().unwrap(), Some(b'2'));
        assert_eq!(s.position(), Position { line: 4, column: 2 });
        assert_eq!(Position { line: 4, column: 2 }.inner(1, 5), Position { line: 4, column: 6 });
        assert_eq!(Position { line: 4, column: 2 }.inner(3, 5), Position { line: 6, column: 5 });
    }

    #[test]
    fn a_value_past_the_bound_is_refused() {
        let mut s = Splitter::new(&b"\"0123456789\""[..]);
        let mut v = Vec::new();
        assert!(s.value(&mut v, 5).is_err());
    }

    #[test]
    fn a_stray_close_is_not_a_value() {
        let mut s = Splitter::new(&b" ]"[..]);
        assert!(s.value(&mut Vec::new(), 5).is_err());
    }
}
