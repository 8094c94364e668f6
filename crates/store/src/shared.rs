//! Text cut from one larger string without copying it.
//!
//! A CVE answer of 500 records is about 1.3 MB, read from the database as one string
//! (see the SQLite backend's `served_cves`). Copying each record out of it cost as much
//! as reading it; a [`SharedStr`] keeps its piece of the one string instead.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A piece of a shared string.
#[derive(Clone)]
pub struct SharedStr {
    text: Arc<String>,
    range: Range<usize>,
}

impl SharedStr {
    /// The piece of `text` at `range`, or `None` when the range is out of bounds or
    /// does not fall on character boundaries.
    pub fn slice(text: &Arc<String>, range: Range<usize>) -> Option<SharedStr> {
        text.get(range.clone())?;
        Some(SharedStr { text: Arc::clone(text), range })
    }

    /// `piece`, a part of `text` (found in it by `split`, say), shared with it; `None`
    /// when `piece` lies outside `text`.
    pub fn within(text: &Arc<String>, piece: &str) -> Option<SharedStr> {
        let start = (piece.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
        SharedStr::slice(text, start..start.checked_add(piece.len())?)
    }

    pub fn as_str(&self) -> &str {
        // The range was checked when the piece was cut, and the text never changes.
        self.text.get(self.range.clone()).unwrap_or_default()
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        let range = 0..s.len();
        SharedStr { text: Arc::new(s), range }
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr { text: Arc::new(s.to_owned()), range: 0..s.len() }
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_the_parts_of_the_text() {
        let text = Arc::new("ab\u{1e}\u{1e}cé\u{1e}".to_owned());
        let pieces: Vec<SharedStr> = text.split('\u{1e}').map(|p| SharedStr::within(&text, p).unwrap()).collect();
        assert_eq!(pieces, ["ab", "", "cé", ""].map(SharedStr::from));
        assert_eq!(SharedStr::slice(&text, 4..7).as_deref(), Some("cé"));
        // Not on a character boundary, or beyond the end.
        assert!(SharedStr::slice(&text, 6..7).is_none());
        assert!(SharedStr::slice(&text, 4..9).is_none());
        assert!(SharedStr::within(&text, "ab").is_none());
        assert_eq!(SharedStr::from("x").to_string(), "x");
        assert_eq!(format!("{:?}", SharedStr::from("x")), "\"x\"");
    }
}
