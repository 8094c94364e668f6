//! CPE names: the CPE 2.3 formatted string (`cpe:2.3:a:vendor:product:version:…`) and
//! the older 2.2 URI (`cpe:/a:vendor:product:version`), parsed into one form.
//!
//! Matching and version ranges live in the vulnerability database; this is the name.

use std::fmt;

/// Why a text is not a CPE name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CpeError {
    #[error("expected cpe:2.3:PART:VENDOR:PRODUCT[:VERSION...] or cpe:/PART:VENDOR:PRODUCT[:VERSION...]")]
    Prefix,
    #[error("the name is too long")]
    TooLong,
    #[error("a CPE 2.3 name has 3 to 13 colon-separated parts")]
    Attributes,
    #[error("the part must be a (application), o (operating system) or h (hardware)")]
    Part,
    #[error("an attribute is empty (use * for any)")]
    Empty,
    #[error("a backslash must quote a printable character")]
    Escape,
    #[error("only printable ASCII characters are allowed")]
    Character,
    #[error("a percent sign must start two hex digits")]
    Percent,
}

/// The eleven attributes of a CPE 2.3 name, each in the formatted-string encoding
/// (`*` any, `-` not applicable, special characters escaped with `\`), lower case.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cpe {
    attrs: [String; 11],
}

const NAMES_LEN: usize = 11;
const MAX_URI: usize = 1024;
const MAX_FORMATTED: usize = 2 * MAX_URI + 64;

impl Cpe {
    pub fn parse(raw: &str) -> Result<Self, CpeError> {
        let raw = raw.trim();
        let lower = raw.to_ascii_lowercase();
        // A URI's formatted string can be twice as long (escapes), so the formatted
        // limit leaves room for every URI accepted.
        let cpe = if let Some(rest) = lower.strip_prefix("cpe:2.3:") {
            if raw.len() > MAX_FORMATTED {
                return Err(CpeError::TooLong);
            }
            Self::parse_formatted(rest)?
        } else if let Some(rest) = lower.strip_prefix("cpe:/") {
            if raw.len() > MAX_URI {
                return Err(CpeError::TooLong);
            }
            Self::parse_uri(rest)?
        } else {
            return Err(CpeError::Prefix);
        };
        // Quoting and the attributes left out can make the canonical form longer than
        // what was read: a name is accepted only when its canonical form parses again
        // (found by the cpe fuzz target: 2 000 `|` quoted to 4 000 bytes).
        let formatted = "cpe:2.3:".len() + cpe.attrs.iter().map(String::len).sum::<usize>() + NAMES_LEN - 1;
        if formatted > MAX_FORMATTED {
            return Err(CpeError::TooLong);
        }
        Ok(cpe)
    }

    fn parse_formatted(rest: &str) -> Result<Self, CpeError> {
        let mut attrs: Vec<String> = Vec::with_capacity(NAMES_LEN);
        let mut cur = String::new();
        let mut chars = rest.chars();
        // Canonical quoting (NISTIR 7695 formatted-string binding, as NVD writes it):
        // letters, digits, `_`, `-`, `.` plain; the wildcards `*` and `?` plain; every
        // other printable character quoted with `\`.
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let next = chars.next().ok_or(CpeError::Escape)?;
                    if !next.is_ascii_graphic() {
                        return Err(CpeError::Escape);
                    }
                    if !(next.is_ascii_alphanumeric() || matches!(next, '_' | '-' | '.')) {
                        cur.push('\\');
                    }
                    cur.push(next);
                }
                ':' => attrs.push(std::mem::take(&mut cur)),
                c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | '?') => cur.push(c),
                c if c.is_ascii_graphic() => {
                    cur.push('\\');
                    cur.push(c);
                }
                _ => return Err(CpeError::Character),
            }
        }
        attrs.push(cur);
        // Trailing attributes may be left out; they mean ANY.
        if attrs.len() > NAMES_LEN || attrs.len() < 3 {
            return Err(CpeError::Attributes);
        }
        attrs.resize(NAMES_LEN, "*".to_owned());
        Self::from_attrs(attrs)
    }

    fn parse_uri(rest: &str) -> Result<Self, CpeError> {
        let parts: Vec<&str> = rest.split(':').collect();
        if parts.len() > 7 || parts.len() < 2 {
            return Err(CpeError::Attributes);
        }
        let value = |p: &str| -> Result<String, CpeError> {
            Ok(match p {
                "" => "*".to_owned(),
                "-" => "-".to_owned(),
                v => uri_to_formatted(v)?,
            })
        };
        let mut attrs: Vec<String> = Vec::with_capacity(NAMES_LEN);
        let mut extended: Vec<String> = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            // A packed edition (NISTIR 7695 §6.1.3): ~edition~sw_edition~target_sw~target_hw~other.
            if let Some(packed) = p.strip_prefix('~').filter(|_| i == 5) {
                let fields: Vec<&str> = packed.split('~').collect();
                if fields.len() != 5 {
                    return Err(CpeError::Attributes);
                }
                attrs.push(value(fields[0])?);
                for f in &fields[1..] {
                    extended.push(value(f)?);
                }
            } else {
                attrs.push(value(p)?);
            }
        }
        attrs.resize(7, "*".to_owned());
        if extended.is_empty() {
            attrs.resize(NAMES_LEN, "*".to_owned());
        } else {
            attrs.extend(extended);
        }
        Self::from_attrs(attrs)
    }

    fn from_attrs(attrs: Vec<String>) -> Result<Self, CpeError> {
        if !matches!(attrs[0].as_str(), "a" | "o" | "h" | "*") {
            return Err(CpeError::Part);
        }
        if attrs.iter().any(|a| a.is_empty()) {
            return Err(CpeError::Empty);
        }
        let attrs: [String; NAMES_LEN] = attrs.try_into().map_err(|_| CpeError::Attributes)?;
        Ok(Self { attrs })
    }

    pub fn part(&self) -> &str {
        &self.attrs[0]
    }
    pub fn vendor(&self) -> &str {
        &self.attrs[1]
    }
    pub fn product(&self) -> &str {
        &self.attrs[2]
    }
    pub fn version(&self) -> &str {
        &self.attrs[3]
    }

    /// The eleven attributes: part, vendor, product, version, update, edition,
    /// language, sw_edition, target_sw, target_hw, other.
    pub fn attrs(&self) -> &[String; 11] {
        &self.attrs
    }

    /// A value without its quoting: `1.0\+1` gives `1.0+1`.
    pub fn unquote(value: &str) -> String {
        let mut out = String::with_capacity(value.len());
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
        }
        out
    }

    /// A concrete value (not ANY or NA) or `None`.
    pub fn specific(attr: &str) -> Option<&str> {
        (attr != "*" && attr != "-").then_some(attr)
    }

    /// The CPE 2.2 URI binding, as cve-search shows it in `vulnerable_configuration_cpe_2_2`.
    pub fn to_uri(&self) -> String {
        Self::uri_of(&std::array::from_fn(|i| self.attrs[i].as_str()))
    }

    /// [`Cpe::to_uri`] of the name with these attributes (as [`Cpe::attrs`] or
    /// [`Cpe::canonical_attrs`] give them).
    pub fn uri_of(attrs: &[&str; NAMES_LEN]) -> String {
        let mut out = String::from("cpe:/");
        let bind = |a: &&str| match *a {
            "*" => String::new(),
            "-" => "-".to_owned(),
            v => formatted_to_uri(v),
        };
        let mut fields: Vec<String> = attrs[..7].iter().map(bind).collect();
        // Attributes the URI has no place for are packed into the edition.
        if attrs[7..].iter().any(|a| *a != "*") {
            let packed: Vec<String> = std::iter::once(&attrs[5]).chain(&attrs[7..]).map(bind).collect();
            fields[5] = format!("~{}", packed.join("~"));
        }
        while fields.last().is_some_and(|f| f.is_empty()) {
            fields.pop();
        }
        out.push_str(&fields.join(":"));
        out
    }

    /// The eleven attributes of a name already in canonical form (what `Display`
    /// writes: all eleven, lower case, every character other than letters, digits, `_`,
    /// `-`, `.` and the wildcards quoted with `\\`), as slices of it, read without
    /// allocating; `None` for a name in any other form (parse it). For `Some`, parsing
    /// gives the same attributes and `Display` the same text. NVD writes its names
    /// this way, and the store keeps them so: import and matching read them here.
    pub fn canonical_attrs(raw: &str) -> Option<[&str; NAMES_LEN]> {
        let attrs = canonical_fields::<NAMES_LEN>(raw, true)?;
        matches!(attrs[0], "a" | "o" | "h" | "*").then_some(attrs)
    }

    /// The first `N` attributes of a name, when they are in canonical form, without
    /// reading the rest: for a name that parses, they are its first attributes. Matching
    /// reads part, vendor and product this way to pass over other products' names.
    pub fn canonical_head<const N: usize>(raw: &str) -> Option<[&str; N]> {
        canonical_fields::<N>(raw, false)
    }
}

impl fmt::Display for Cpe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpe:2.3:{}", self.attrs.join(":"))
    }
}

/// The first `N` attributes of `raw` in canonical form (exactly `N` and nothing after
/// them when `whole`); `None` at the first character out of that form, an empty
/// attribute, or a name longer than parsing accepts.
fn canonical_fields<const N: usize>(raw: &str, whole: bool) -> Option<[&str; N]> {
    if raw.len() > MAX_FORMATTED {
        return None;
    }
    let rest = raw.strip_prefix("cpe:2.3:")?;
    let bytes = rest.as_bytes();
    let mut out = [""; N];
    let (mut start, mut n, mut i) = (0, 0, 0);
    loop {
        match bytes.get(i) {
            Some(b'\\') => {
                // Only what parsing keeps quoted.
                let next = *bytes.get(i + 1)?;
                if !next.is_ascii_graphic() || next.is_ascii_uppercase() || canonical_plain(next) {
                    return None;
                }
                i += 2;
                continue;
            }
            Some(b':') | None => {
                if start == i || n == N {
                    return None;
                }
                out[n] = &rest[start..i];
                n += 1;
                if i == bytes.len() || (n == N && !whole) {
                    break;
                }
                start = i + 1;
            }
            Some(&b) if canonical_plain(b) || b == b'*' || b == b'?' => {}
            Some(_) => return None,
        }
        i += 1;
    }
    (n == N).then_some(out)
}

/// A character the canonical form writes without quoting (besides the wildcards).
fn canonical_plain(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.')
}

fn uri_to_formatted(v: &str) -> Result<String, CpeError> {
    let mut out = String::new();
    let bytes = v.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let ch = if c == b'%' {
            let hex = v.get(i + 1..i + 3).ok_or(CpeError::Percent)?;
            i += 2;
            // Names compare in lower case, decoded characters included.
            u8::from_str_radix(hex, 16).map_err(|_| CpeError::Percent)?.to_ascii_lowercase()
        } else {
            c
        };
        if !ch.is_ascii_graphic() {
            return Err(CpeError::Character);
        }
        if !(ch.is_ascii_alphanumeric() || matches!(ch, b'_' | b'.' | b'-')) {
            out.push('\\');
        }
        out.push(char::from(ch));
        i += 1;
    }
    Ok(out)
}

fn formatted_to_uri(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        let c = if c == '\\' { chars.next().unwrap_or('\\') } else { c };
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else {
            out.push_str(&format!("%{:02x}", c as u32 & 0xff));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formatted_strings() {
        let c = Cpe::parse("cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*").unwrap();
        assert_eq!((c.part(), c.vendor(), c.product(), c.version()), ("a", "apache", "log4j", "2.14.1"));
        assert_eq!(c.to_string(), "cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*");
        assert_eq!(c.to_uri(), "cpe:/a:apache:log4j:2.14.1");
        let short = Cpe::parse("cpe:2.3:a:Apache:HTTP_Server").unwrap();
        assert_eq!(short.to_string(), "cpe:2.3:a:apache:http_server:*:*:*:*:*:*:*:*");
        // Quoting is canonical: needless quotes go, missing ones are added.
        assert_eq!(
            Cpe::parse(r"cpe:2.3:a:foo:b\.ar:1.0+1:*:*:*:*:*:*:*").unwrap(),
            Cpe::parse(r"cpe:2.3:a:foo:b.ar:1.0\+1:*:*:*:*:*:*:*").unwrap()
        );
        assert_eq!(Cpe::unquote(r"1.0\+1"), "1.0+1");
        let esc = Cpe::parse(r"cpe:2.3:a:foo\:bar:baz:1.0\+1:*:*:*:*:*:*:*").unwrap();
        assert_eq!(esc.vendor(), r"foo\:bar");
        assert_eq!(esc.to_uri(), "cpe:/a:foo%3abar:baz:1.0%2b1");
        assert_eq!(Cpe::canonical_attrs(&esc.to_string()).map(|a| a[1]), Some(r"foo\:bar"));
        for not_canonical in [
            "cpe:2.3:a:apache:log4j",
            "cpe:2.3:a:Apache:log4j:*:*:*:*:*:*:*:*",
            r"cpe:2.3:a:foo:b\.ar:*:*:*:*:*:*:*:*",
            "cpe:2.3:a:foo:b+ar:*:*:*:*:*:*:*:*",
            "cpe:2.3:a:foo::*:*:*:*:*:*:*:*",
            "cpe:2.3:x:foo:bar:*:*:*:*:*:*:*:*",
            "cpe:2.3:a:foo:bar:*:*:*:*:*:*:*:*:*",
        ] {
            assert!(Cpe::canonical_attrs(not_canonical).is_none(), "{not_canonical}");
        }
        for bad in
            ["", "cpe:2.3:x:a:b", "cpe:2.3:a", "cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:l", "cpe:2.3:a::b", "cpe:2.3:a:b:c\\"]
        {
            assert!(Cpe::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn long_uris_still_round_trip() {
        // Found by the fuzzer: escaping made the formatted string too long to re-parse.
        let uri = format!("cpe:/a:{}:x", "&".repeat(1000));
        let c = Cpe::parse(&uri).unwrap();
        assert_eq!(Cpe::parse(&c.to_string()).unwrap(), c);
        assert!(Cpe::parse(&format!("cpe:/a:{}:x", "a".repeat(1100))).is_err());
    }

    #[test]
    fn a_formatted_name_whose_quoting_outgrows_the_limit_is_refused() {
        // Found by the cpe fuzz target: unquoted `|` are quoted when read, so a name
        // within the limit could read as one whose canonical form is over it.
        let long = format!("cpe:2.3:a:{}:x", "|".repeat(1500));
        assert_eq!(Cpe::parse(&long).unwrap_err(), CpeError::TooLong);
        let fits = format!("cpe:2.3:a:{}:x", "|".repeat(900));
        let c = Cpe::parse(&fits).unwrap();
        assert_eq!(Cpe::parse(&c.to_string()).unwrap(), c);
    }

    #[test]
    fn packed_editions() {
        let c = Cpe::parse("cpe:/a:hp:insight_diagnostics:7.4.0.1570:-:~~online~win2003~x64~").unwrap();
        assert_eq!(c.to_string(), "cpe:2.3:a:hp:insight_diagnostics:7.4.0.1570:-:*:*:online:win2003:x64:*");
        assert_eq!(c.to_uri(), "cpe:/a:hp:insight_diagnostics:7.4.0.1570:-:~~online~win2003~x64~");
        assert_eq!(Cpe::parse(&c.to_uri()).unwrap(), c);
        assert_eq!(Cpe::parse("cpe:/a:x:y:1:-:~a~b~c").unwrap_err(), CpeError::Attributes);
        let plain = Cpe::parse("cpe:2.3:a:x:y:1:*:*:*:*:*:*:*").unwrap();
        assert_eq!(plain.to_uri(), "cpe:/a:x:y:1");
    }

    #[test]
    fn uris() {
        let c = Cpe::parse("cpe:/a:openbsd:openssh:7.4").unwrap();
        assert_eq!(c.to_string(), "cpe:2.3:a:openbsd:openssh:7.4:*:*:*:*:*:*:*");
        assert_eq!(c.to_uri(), "cpe:/a:openbsd:openssh:7.4");
        assert!(Cpe::parse("cpe:/a:x:y:%zz").is_err());
        // Found by the fuzzer: a percent-encoded capital is a lower-case letter too.
        assert_eq!(Cpe::parse("cpe:/a:x:%55p").unwrap().product(), "up");
    }

    proptest! {
        #[test]
        fn never_panics(s in "cpe:(2\\.3|/)[a-z:*\\-\\\\%0-9.]{0,60}") {
            if let Ok(c) = Cpe::parse(&s) {
                // The formatted string of a parsed name parses to the same name.
                prop_assert_eq!(Cpe::parse(&c.to_string()).unwrap(), c.clone());
                let _ = c.to_uri();
            }
        }

        #[test]
        fn arbitrary_input_never_panics(s in "\\PC{0,200}") {
            let _ = Cpe::parse(&s);
            let _ = Cpe::canonical_attrs(&s);
        }

        #[test]
        fn a_canonical_name_is_read_as_parsing_reads_it(
            part in "[aoh*]", vendor in "[a-z0-9_.!:\\\\*?-]{1,10}", product in "[a-z0-9_.!:*?-]{1,10}",
            version in "[a-z0-9.:+-]{0,6}", rest in "(:[a-z0-9*\\-]{1,3}){0,7}"
        ) {
            let raw = format!("cpe:2.3:{part}:{}:{}:{}{rest}", vendor.replace(':', "\\:"), product.replace(':', "\\:"), version.replace(':', "\\:"));
            if let Ok(cpe) = Cpe::parse(&raw) {
                let canonical = cpe.to_string();
                let attrs = Cpe::canonical_attrs(&canonical).expect("a canonical name is read without parsing");
                prop_assert_eq!(attrs.to_vec(), cpe.attrs().iter().map(String::as_str).collect::<Vec<_>>());
                prop_assert_eq!(Cpe::uri_of(&attrs), cpe.to_uri());
            }
        }

        #[test]
        fn the_head_of_a_name_is_its_first_attributes(
            raw in "cpe:2.3:[aohx*](:([a-zA-Z0-9_.!*?-]|\\\\[a-zA-Z0-9_.!:*\\\\-]){1,3}){2,10}"
        ) {
            if let (Some(h), Ok(cpe)) = (Cpe::canonical_head::<3>(&raw), Cpe::parse(&raw)) {
                prop_assert_eq!(h.to_vec(), cpe.attrs()[..3].iter().map(String::as_str).collect::<Vec<_>>());
            }
        }

        #[test]
        fn what_is_read_without_parsing_is_what_parsing_gives(
            raw in "cpe:2.3:[aohx*](:([a-zA-Z0-9_.!*?-]|\\\\[a-z0-9_.!:*\\\\-]){0,3}){9,11}|cpe:2.3:[aoh*](:([a-z0-9_.*?-]|\\\\[a-zA-Z0-9_.!:*\\\\-]){1,3}){10}"
        ) {
            if let Some(attrs) = Cpe::canonical_attrs(&raw) {
                let cpe = Cpe::parse(&raw).map_err(|e| TestCaseError::fail(format!("{raw}: {e}")))?;
                prop_assert_eq!(attrs.to_vec(), cpe.attrs().iter().map(String::as_str).collect::<Vec<_>>());
                prop_assert_eq!(cpe.to_string(), raw);
            }
        }
    }
}
