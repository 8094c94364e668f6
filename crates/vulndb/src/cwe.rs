//! MITRE CWE (Common Weakness Enumeration) catalogue, XML schema 7.x as published in the
//! `cwec_v4.*.xml` files: a `<Weakness_Catalog>` whose `<Weaknesses>` list every weakness
//! with its id, name and, under `<Related_Attack_Patterns>`, the CAPEC attack patterns
//! that exploit it (which is how cve-search fills a CVE's `capec` field). The file is
//! about 15 MB, so it is read as a stream of XML events and never held as a DOM.

use std::io::BufRead;

use quick_xml::events::Event;

use crate::FeedError;
use support::XmlStream;

const WHAT: &str = "CWE catalogue";

/// One CWE weakness: its numeric id (79 for CWE-79), its name, and the ids of the CAPEC
/// attack patterns listed in its `<Related_Attack_Patterns>`, in document order without
/// duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weakness {
    /// The CWE number, without the `CWE-` prefix.
    pub id: u32,
    /// The weakness name (at most 64 KiB).
    pub name: String,
    /// The CAPEC numbers of the related attack patterns.
    pub capec_ids: Vec<u32>,
}

/// Reads every `<Weakness>` of the `<Weaknesses>` section of a CWE catalogue.
///
/// Errors carry the byte offset in the document where reading stopped.
pub fn parse_cwe<R: BufRead>(reader: R) -> Result<Vec<Weakness>, FeedError> {
    let mut xml = XmlStream::new(reader, WHAT, "Weakness_Catalog");
    let mut buf = Vec::new();
    let mut weaknesses = Vec::new();
    // Levels (root = 1) of the open elements this parser cares about.
    let mut weaknesses_level: Option<usize> = None;
    let mut current: Option<(usize, Weakness)> = None;
    let mut related_level: Option<usize> = None;

    loop {
        let (event, level) = xml.next(&mut buf)?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_empty = matches!(event, Event::Empty(_));
                let parent = level - 1;
                match e.local_name().as_ref() {
                    b"Weaknesses" if !is_empty && weaknesses_level.is_none() && current.is_none() => {
                        weaknesses_level = Some(level);
                    }
                    b"Weakness" if weaknesses_level == Some(parent) => {
                        let id = xml.required_attr(e, "ID")?;
                        let id = xml.parse_id(&id, "ID")?;
                        let name = support::cap_text(xml.required_attr(e, "Name")?);
                        let weakness = Weakness { id, name, capec_ids: Vec::new() };
                        if is_empty {
                            weaknesses.push(weakness);
                        } else {
                            current = Some((level, weakness));
                        }
                    }
                    b"Related_Attack_Patterns" if !is_empty && current.as_ref().is_some_and(|(l, _)| *l == parent) => {
                        related_level = Some(level);
                    }
                    b"Related_Attack_Pattern" if related_level == Some(parent) => {
                        let capec = xml.required_attr(e, "CAPEC_ID")?;
                        let capec = xml.parse_id(&capec, "CAPEC_ID")?;
                        if let Some((_, weakness)) = current.as_mut()
                            && !weakness.capec_ids.contains(&capec)
                        {
                            weakness.capec_ids.push(capec);
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                if related_level == Some(level) {
                    related_level = None;
                }
                if current.as_ref().is_some_and(|(l, _)| *l == level)
                    && let Some((_, weakness)) = current.take()
                {
                    weaknesses.push(weakness);
                }
                if weaknesses_level == Some(level) {
                    weaknesses_level = None;
                }
            }
            Event::Eof => return Ok(weaknesses),
            _ => {}
        }
    }
}

/// Bounded reading shared by the KEV, EPSS, CWE and CAPEC parsers: text capping, error
/// mapping, markup-to-text, and an XML event stream that limits the size of each event
/// and the nesting depth.
pub(crate) mod support {
    use std::borrow::Cow;
    use std::io::{self, BufRead, Read};

    use quick_xml::events::{BytesStart, Event};

    use crate::FeedError;

    /// The largest text field a parser keeps, in bytes.
    pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024;
    /// The largest single XML event (a tag with its attributes, or a run of text).
    pub(crate) const MAX_EVENT_BYTES: usize = 1024 * 1024;
    /// The deepest element nesting accepted.
    pub(crate) const MAX_DEPTH: usize = 256;

    /// Cuts `s` to at most [`MAX_TEXT_BYTES`], on a character boundary.
    pub(crate) fn cap_text(mut s: String) -> String {
        if s.len() > MAX_TEXT_BYTES {
            let mut end = MAX_TEXT_BYTES;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
        }
        s
    }

    /// A short, printable excerpt of untrusted input for error messages.
    pub(crate) fn excerpt(s: &str) -> String {
        const MAX: usize = 80;
        match s.char_indices().nth(MAX) {
            Some((end, _)) => format!("{:?}…", &s[..end]),
            None => format!("{s:?}"),
        }
    }

    /// A `serde_json` error as a [`FeedError`] about `what`, positioned by line and column
    /// (I/O errors stay I/O errors).
    pub(crate) fn json_error(what: &str, e: serde_json::Error) -> FeedError {
        if e.is_io() {
            FeedError::Io { what: what.to_owned(), source: e.into() }
        } else {
            FeedError::format(what, format!("line {}, column {}", e.line(), e.column()), e.to_string())
        }
    }

    /// Accumulates text with its whitespace runs collapsed to single spaces, trimmed, and
    /// capped at [`MAX_TEXT_BYTES`].
    #[derive(Debug, Default)]
    pub(crate) struct Text {
        buf: String,
        pending_space: bool,
        full: bool,
    }

    impl Text {
        /// Appends `s`.
        pub(crate) fn push(&mut self, s: &str) {
            for c in s.chars() {
                if self.full {
                    return;
                }
                if c.is_whitespace() {
                    self.pending_space = !self.buf.is_empty();
                    continue;
                }
                let needed = c.len_utf8() + usize::from(self.pending_space);
                if self.buf.len() + needed > MAX_TEXT_BYTES {
                    self.full = true;
                    return;
                }
                if std::mem::take(&mut self.pending_space) {
                    self.buf.push(' ');
                }
                self.buf.push(c);
            }
        }

        /// Marks a word boundary (an element edge such as `</p><p>`).
        pub(crate) fn boundary(&mut self) {
            self.pending_space = !self.buf.is_empty();
        }

        /// The text collected.
        pub(crate) fn finish(self) -> String {
            self.buf
        }
    }

    /// Whether an XHTML element only styles text inside a line (no word break around it).
    pub(crate) fn is_inline(local_name: &[u8]) -> bool {
        matches!(
            local_name,
            b"a" | b"b" | b"i" | b"u" | b"em" | b"strong" | b"code" | b"span" | b"sub" | b"sup" | b"tt" | b"font"
        )
    }

    /// The text of a markup fragment such as `<xhtml:p>One</xhtml:p><xhtml:p>Two</xhtml:p>`
    /// ("One Two"), or the fragment itself, whitespace-collapsed, when it is not
    /// well-formed markup.
    pub(crate) fn markup_text(fragment: &str) -> String {
        fn parse(fragment: &str) -> Option<String> {
            let mut reader = quick_xml::Reader::from_str(fragment);
            let mut text = Text::default();
            let mut depth = 0usize;
            loop {
                match reader.read_event().ok()? {
                    Event::Start(e) => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return None;
                        }
                        if !is_inline(e.local_name().as_ref()) {
                            text.boundary();
                        }
                    }
                    Event::End(e) => {
                        depth = depth.saturating_sub(1);
                        if !is_inline(e.local_name().as_ref()) {
                            text.boundary();
                        }
                    }
                    Event::Empty(_) => text.boundary(),
                    Event::Text(t) => text.push(&t.xml10_content().ok()?),
                    Event::CData(t) => text.push(&t.decode().ok()?),
                    Event::GeneralRef(r) => text.push(&resolve_ref(&r).ok()?),
                    Event::Eof => return (depth == 0).then(|| text.finish()),
                    _ => {}
                }
            }
        }
        if !fragment.contains('<') && !fragment.contains('&') {
            let mut text = Text::default();
            text.push(fragment);
            return text.finish();
        }
        parse(fragment).unwrap_or_else(|| {
            let mut text = Text::default();
            text.push(fragment);
            text.finish()
        })
    }

    /// The text a general reference (`&amp;`, `&#233;`) stands for; an entity that XML
    /// does not predefine is kept as written.
    fn resolve_ref(r: &quick_xml::events::BytesRef<'_>) -> Result<Cow<'static, str>, quick_xml::Error> {
        if let Some(c) = r.resolve_char_ref()? {
            return Ok(Cow::Owned(c.to_string()));
        }
        let name = r.decode()?;
        Ok(match quick_xml::escape::resolve_predefined_entity(&name) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(format!("&{name};")),
        })
    }

    /// Raised by [`EventLimited`] when one XML event grows past [`MAX_EVENT_BYTES`].
    #[derive(Debug, thiserror::Error)]
    #[error("an XML event is longer than {MAX_EVENT_BYTES} bytes")]
    struct EventTooLarge;

    /// A reader that fails once more than [`MAX_EVENT_BYTES`] were consumed since the
    /// last [`reset`](Self::reset): it bounds the buffer quick-xml fills for one event.
    struct EventLimited<R> {
        inner: R,
        since_reset: usize,
    }

    impl<R: BufRead> Read for EventLimited<R> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = {
                let available = self.fill_buf()?;
                let n = available.len().min(out.len());
                out[..n].copy_from_slice(&available[..n]);
                n
            };
            self.consume(n);
            Ok(n)
        }
    }

    impl<R: BufRead> BufRead for EventLimited<R> {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            // Hand out at most one byte past the allowance, so that an oversized event fails
            // at the next call instead of being buffered whole.
            let Some(allowance) = (MAX_EVENT_BYTES + 1).checked_sub(self.since_reset).filter(|a| *a > 0) else {
                return Err(io::Error::other(EventTooLarge));
            };
            let available = self.inner.fill_buf()?;
            Ok(&available[..available.len().min(allowance)])
        }

        fn consume(&mut self, amount: usize) {
            self.since_reset = self.since_reset.saturating_add(amount);
            self.inner.consume(amount);
        }
    }

    /// A stream of XML events with bounded event size and nesting, that tracks element
    /// levels and turns every problem into a [`FeedError`] positioned at a byte offset.
    pub(crate) struct XmlStream<R> {
        reader: quick_xml::Reader<EventLimited<R>>,
        what: &'static str,
        root: &'static str,
        depth: usize,
        root_seen: bool,
    }

    impl<R: BufRead> XmlStream<R> {
        /// Reads `inner`, a document whose root element must be named `root`.
        pub(crate) fn new(inner: R, what: &'static str, root: &'static str) -> Self {
            let mut reader = quick_xml::Reader::from_reader(EventLimited { inner, since_reset: 0 });
            let config = reader.config_mut();
            config.check_end_names = true;
            config.allow_unmatched_ends = false;
            config.expand_empty_elements = false;
            Self { reader, what, root, depth: 0, root_seen: false }
        }

        /// The next event with its level: for a start, empty or end tag the level of that
        /// element (the root is 1), otherwise the level of the enclosing element.
        /// `Eof` is only returned for a complete document.
        pub(crate) fn next<'b>(&mut self, buf: &'b mut Vec<u8>) -> Result<(Event<'b>, usize), FeedError> {
            buf.clear();
            self.reader.get_mut().since_reset = 0;
            let event = match self.reader.read_event_into(buf) {
                Ok(event) => event,
                Err(quick_xml::Error::Io(e)) => {
                    return Err(match e.get_ref().and_then(|inner| inner.downcast_ref::<EventTooLarge>()) {
                        Some(too_large) => self.error(too_large.to_string()),
                        None => FeedError::Io {
                            what: self.what.to_owned(),
                            source: std::sync::Arc::try_unwrap(e)
                                .unwrap_or_else(|shared| io::Error::new(shared.kind(), shared.to_string())),
                        },
                    });
                }
                Err(e) => return Err(self.error(e.to_string())),
            };
            let level = match &event {
                Event::Start(e) | Event::Empty(e) => {
                    let level = self.depth + 1;
                    if level > MAX_DEPTH {
                        return Err(self.error(format!("elements nested deeper than {MAX_DEPTH}")));
                    }
                    if level == 1 {
                        if self.root_seen {
                            return Err(self.error("more than one root element"));
                        }
                        self.root_seen = true;
                        if e.local_name().as_ref() != self.root.as_bytes() {
                            let found = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                            return Err(self.error(format!(
                                "the root element is {}, expected {}",
                                excerpt(&found),
                                self.root
                            )));
                        }
                    }
                    if matches!(event, Event::Start(_)) {
                        self.depth = level;
                    }
                    level
                }
                Event::End(_) => {
                    let level = self.depth;
                    self.depth = self.depth.saturating_sub(1);
                    level
                }
                Event::Eof if self.depth > 0 => return Err(self.error("the document ends inside an element")),
                Event::Eof if !self.root_seen => return Err(self.error("no root element")),
                _ => self.depth,
            };
            Ok((event, level))
        }

        /// A format error at the current byte offset.
        pub(crate) fn error(&self, message: impl Into<String>) -> FeedError {
            FeedError::format(self.what, format!("byte {}", self.reader.buffer_position()), message)
        }

        /// The unescaped value of attribute `name` of `e`, if present.
        pub(crate) fn attr(&self, e: &BytesStart<'_>, name: &str) -> Result<Option<String>, FeedError> {
            let attr = e.try_get_attribute(name).map_err(|err| self.error(err.to_string()))?;
            attr.map(|a| {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(Cow::into_owned)
                    .map_err(|err| self.error(err.to_string()))
            })
            .transpose()
        }

        /// The unescaped value of attribute `name` of `e`, which must be present.
        pub(crate) fn required_attr(&self, e: &BytesStart<'_>, name: &str) -> Result<String, FeedError> {
            self.attr(e, name)?.ok_or_else(|| {
                let element = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                self.error(format!("<{element}> has no {name} attribute"))
            })
        }

        /// Parses a decimal id attribute.
        pub(crate) fn parse_id(&self, value: &str, name: &str) -> Result<u32, FeedError> {
            value.trim().parse().map_err(|_| self.error(format!("{name} {} is not a number", excerpt(value))))
        }

        /// The text carried by a text, CDATA or reference event, `None` for other events.
        pub(crate) fn text<'e>(&self, event: &'e Event<'_>) -> Result<Option<Cow<'e, str>>, FeedError> {
            let text = match event {
                Event::Text(t) => t.xml10_content().map_err(quick_xml::Error::from),
                Event::CData(t) => t.decode().map_err(quick_xml::Error::from),
                Event::GeneralRef(r) => resolve_ref(r),
                _ => return Ok(None),
            };
            text.map(Some).map_err(|e| self.error(e.to_string()))
        }
    }

    /// The shared test data folder joined with `relative`, or `None` (with the reason
    /// printed) when the folder is absent.
    #[cfg(test)]
    pub(crate) fn shared_data(relative: &str) -> Option<std::path::PathBuf> {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"));
        if dir.is_dir() {
            Some(dir.join(relative))
        } else {
            // With CI set the data is always there: its absence is a failure, not a skip.
            assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
            eprintln!("skipped: the shared data folder {} is absent", dir.display());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{BufReader, Cursor, Read};

    use proptest::prelude::*;

    use super::*;

    const SMALL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Weakness_Catalog Name="CWE" xmlns="http://cwe.mitre.org/cwe-7" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <Weaknesses>
    <Weakness ID="79" Name="Cross-site &apos;Scripting&apos;" Status="Stable">
      <Description>Text with <xhtml:b>markup</xhtml:b>.</Description>
      <Related_Weaknesses><Related_Weakness Nature="ChildOf" CWE_ID="74"/></Related_Weaknesses>
      <Related_Attack_Patterns>
        <Related_Attack_Pattern CAPEC_ID="63"/>
        <Related_Attack_Pattern CAPEC_ID="588"/>
        <Related_Attack_Pattern CAPEC_ID="63"/>
      </Related_Attack_Patterns>
    </Weakness>
    <Weakness ID="1004" Name="Empty"/>
  </Weaknesses>
  <Categories>
    <Category ID="1" Name="Not a weakness"><Related_Attack_Patterns>
      <Related_Attack_Pattern CAPEC_ID="1"/></Related_Attack_Patterns></Category>
  </Categories>
</Weakness_Catalog>"#;

    #[test]
    fn small_catalogue() {
        let weaknesses = parse_cwe(SMALL.as_bytes()).unwrap();
        assert_eq!(
            weaknesses,
            vec![
                Weakness { id: 79, name: "Cross-site 'Scripting'".into(), capec_ids: vec![63, 588] },
                Weakness { id: 1004, name: "Empty".into(), capec_ids: vec![] },
            ]
        );
    }

    #[test]
    fn wrong_root_and_bad_ids_are_errors() {
        let err = parse_cwe(&b"<Attack_Pattern_Catalog/>"[..]).unwrap_err();
        assert!(err.to_string().contains("expected Weakness_Catalog"), "{err}");
        let bad = SMALL.replace(r#"CAPEC_ID="588""#, r#"CAPEC_ID="x588""#);
        let err = parse_cwe(bad.as_bytes()).unwrap_err();
        assert!(matches!(&err, FeedError::Format { position, .. } if position.starts_with("byte ")), "{err}");
        assert!(parse_cwe(&b""[..]).is_err());
    }

    #[test]
    fn oversized_event_is_an_error() {
        let huge = format!("<Weakness_Catalog>{}</Weakness_Catalog>", "x".repeat(support::MAX_EVENT_BYTES + 10));
        let err = parse_cwe(huge.as_bytes()).unwrap_err();
        assert!(matches!(err, FeedError::Format { .. }), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let deep = format!("<Weakness_Catalog>{}", "<a>".repeat(support::MAX_DEPTH + 1));
        let err = parse_cwe(deep.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("nested deeper"), "{err}");
    }

    #[test]
    fn markup_text_collects_text() {
        assert_eq!(
            support::markup_text("\n <xhtml:p>One &amp; <xhtml:b>t</xhtml:b>wo</xhtml:p><xhtml:p>Three</xhtml:p>"),
            "One & two Three"
        );
        assert_eq!(support::markup_text("a < b  and\n c"), "a < b and c");
    }

    #[test]
    fn real_catalogue() {
        let Some(path) = support::shared_data("cwe-capec/cwec_v4.15.xml") else { return };
        let weaknesses = parse_cwe(BufReader::new(File::open(path).unwrap())).unwrap();
        assert_eq!(weaknesses.len(), 964);
        let xss = weaknesses.iter().find(|w| w.id == 79).unwrap();
        assert_eq!(xss.name, "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting')");
        assert!(xss.capec_ids.contains(&63), "{:?}", xss.capec_ids);
    }

    #[test]
    fn truncated_real_catalogue_is_a_format_error() {
        let Some(path) = support::shared_data("cwe-capec/cwec_v4.15.xml") else { return };
        let mut head = Vec::new();
        File::open(path).unwrap().take(200_000).read_to_end(&mut head).unwrap();
        for cut in [head.len(), 100_123, 5000] {
            let err = parse_cwe(Cursor::new(&head[..cut])).unwrap_err();
            assert!(matches!(err, FeedError::Format { .. }), "{err}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(input in "(<Weakness_Catalog>|<Weaknesses>|<Weakness ID=\"1\" Name=\"n\">|</Weakness>|<Related_Attack_Patterns>|<Related_Attack_Pattern CAPEC_ID=\"[0-9x]{1,3}\"/>|</Weaknesses>|</Weakness_Catalog>|&amp;|&#0;|<|>|\"|[a-z ]{0,5}){0,40}") {
            let _ = parse_cwe(input.as_bytes());
        }
    }
}
