//! Identifiers: social_id, web domain, CVE id.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("social_id is not valid")]
    SocialId,
    #[error("domain is not valid")]
    Domain,
    #[error("cve_id is not valid")]
    CveId,
    #[error("website is not valid")]
    Website,
    #[error(
        "dkim_selectors: at most 16 selectors, each one to three dot-separated labels of letters, digits, '-' and '_'"
    )]
    DkimSelector,
}

/// The most DKIM selectors a company may name.
pub const MAX_DKIM_SELECTORS: usize = 16;

/// DKIM selectors a company names (RFC 6376 §3.1: a selector is one or more
/// dot-separated labels; underscores are common in practice): one to three labels of 1
/// to 63 letters, digits, `-` or `_` each, at most [`MAX_DKIM_SELECTORS`]. Stored in
/// lower case, each once, in the order given. (The OpenAPI document states the same
/// rule as a pattern.)
pub fn dkim_selectors<S: AsRef<str>>(raw: &[S]) -> Result<Vec<String>, IdError> {
    let mut out: Vec<String> = Vec::new();
    for s in raw {
        let s = s.as_ref().to_ascii_lowercase();
        let ok = !s.is_empty()
            && s.split('.').count() <= 3
            && s.split('.').all(|l| {
                !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !ok {
            return Err(IdError::DkimSelector);
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.len() > MAX_DKIM_SELECTORS {
        return Err(IdError::DkimSelector);
    }
    Ok(out)
}

/// A company's identifier on the networking site: the slug of its company page.
///
/// 1 to 100 characters of ASCII letters, digits, `-`, `_` and `.`, starting with a
/// letter or digit. Stored and compared in lower case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocialId(String);

impl SocialId {
    pub const MAX_LEN: usize = 100;

    pub fn parse(raw: &str) -> Result<Self, IdError> {
        let ok = !raw.is_empty()
            && raw.len() <= Self::MAX_LEN
            && raw.as_bytes()[0].is_ascii_alphanumeric()
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if ok { Ok(Self(raw.to_ascii_lowercase())) } else { Err(IdError::SocialId) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A DNS host or domain name in its canonical form: lower case, no trailing dot,
/// at least two labels, letters/digits/hyphens only (IDNs in their `xn--` form).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Domain(String);

impl Domain {
    pub fn parse(raw: &str) -> Result<Self, IdError> {
        let s = raw.strip_suffix('.').unwrap_or(raw).to_ascii_lowercase();
        if s.is_empty() || s.len() > 253 {
            return Err(IdError::Domain);
        }
        let labels: Vec<&str> = s.split('.').collect();
        if labels.len() < 2 {
            return Err(IdError::Domain);
        }
        for label in &labels {
            let b = label.as_bytes();
            if b.is_empty()
                || b.len() > 63
                || b[0] == b'-'
                || b[b.len() - 1] == b'-'
                || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            {
                return Err(IdError::Domain);
            }
        }
        let tld = labels[labels.len() - 1];
        if tld.bytes().all(|c| c.is_ascii_digit()) {
            return Err(IdError::Domain);
        }
        Ok(Self(s))
    }

    /// Parses the host of a URL such as `https://www.example.com:8443/path`, or a bare name.
    pub fn from_url(url: &str) -> Result<Self, IdError> {
        let rest = url
            .split_once("://")
            .map(|(scheme, rest)| {
                if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") {
                    Ok(rest)
                } else {
                    Err(IdError::Domain)
                }
            })
            .transpose()?
            .unwrap_or(url);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host_port = authority.rsplit('@').next().unwrap_or("");
        let host = match host_port.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host_port,
        };
        Self::parse(host)
    }

    /// The web domain of a website URL: its host without a leading `www.`.
    pub fn from_website(url: &str) -> Result<Self, IdError> {
        Ok(Self::from_url(url)?.without_www())
    }

    /// The web domain of a website's host: the host without a leading `www.` (unless
    /// that leaves one label).
    fn without_www(self) -> Self {
        match self.0.strip_prefix("www.") {
            Some(rest) if rest.contains('.') => Self(rest.to_owned()),
            _ => self,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// This name and every parent with at least two labels, most specific first:
    /// `a.b.example.com` gives `a.b.example.com`, `b.example.com`, `example.com`.
    pub fn self_and_parents(&self) -> impl Iterator<Item = &str> {
        let s = self.0.as_str();
        std::iter::once(s).chain(s.match_indices('.').map(move |(i, _)| &s[i + 1..])).filter(|d| d.contains('.'))
    }

    /// True when `self` is `other` or a name below it.
    pub fn is_within(&self, other: &Domain) -> bool {
        self.0 == other.0
            || (self.0.len() > other.0.len()
                && self.0.ends_with(&other.0)
                && self.0.as_bytes()[self.0.len() - other.0.len() - 1] == b'.')
    }
}

/// A company's website as it is stored and shown: an `http` or `https` URL whose host
/// is a [`Domain`], with an optional port and an optional path of URL-safe characters
/// only (RFC 3986 unreserved characters and `/`, percent-escapes allowed). No query,
/// fragment, userinfo, whitespace, quotes or angle brackets: the text is shown in
/// answers and pages, so nothing in it may be markup. A bare host name means `https`.
///
/// Normalised: scheme and host in lower case, the scheme's default port left out,
/// percent-escapes in upper case; the path as given (`https://www.x.example` and
/// `https://www.x.example/` stay as they are).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Website(String, Domain);

/// The host of a company's website as stored (`https://www.acme.test/x` →
/// `www.acme.test`), in lower case; none when there is none.
pub fn website_host(website: &str) -> Option<String> {
    website
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .split(['/', ':'])
        .next()
        .map(str::to_ascii_lowercase)
        .filter(|h| !h.is_empty())
}

impl Website {
    /// Longer than any website a company gives; the API refuses longer text anyway.
    pub const MAX_LEN: usize = 2048;

    pub fn parse(raw: &str) -> Result<Self, IdError> {
        if raw.len() > Self::MAX_LEN {
            return Err(IdError::Website);
        }
        let (scheme, rest) = match raw.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => ("https", rest),
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => ("http", rest),
            Some(_) => return Err(IdError::Website),
            None => ("https", raw),
        };
        let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        // `Domain::parse` takes letters, digits, `-` and `.` only: no userinfo, no IP
        // literal, nothing else in the host.
        let host = Domain::parse(host).map_err(|_| IdError::Website)?;
        let port = match port {
            None => None,
            Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => match p.parse::<u16>() {
                Ok(0) | Err(_) => return Err(IdError::Website),
                Ok(443) if scheme == "https" => None,
                Ok(80) if scheme == "http" => None,
                Ok(n) => Some(n),
            },
            Some(_) => return Err(IdError::Website),
        };
        let mut url = format!("{scheme}://{}", host.as_str());
        if let Some(n) = port {
            url.push_str(&format!(":{n}"));
        }
        let mut bytes = path.bytes();
        while let Some(b) = bytes.next() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => url.push(char::from(b)),
                b'%' => {
                    let (Some(hi), Some(lo)) = (bytes.next(), bytes.next()) else {
                        return Err(IdError::Website);
                    };
                    if !hi.is_ascii_hexdigit() || !lo.is_ascii_hexdigit() {
                        return Err(IdError::Website);
                    }
                    url.extend(['%', char::from(hi.to_ascii_uppercase()), char::from(lo.to_ascii_uppercase())]);
                }
                _ => return Err(IdError::Website),
            }
        }
        Ok(Self(url, host.without_www()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The web domain: the host without a leading `www.` (as [`Domain::from_website`]).
    pub fn domain(&self) -> &Domain {
        &self.1
    }
}

/// A CVE identifier, `CVE-YYYY-NNNN…`, stored in upper case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CveId(String);

impl CveId {
    pub fn parse(raw: &str) -> Result<Self, IdError> {
        let up = raw.trim().to_ascii_uppercase();
        let mut parts = up.splitn(3, '-');
        let (Some("CVE"), Some(year), Some(num)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(IdError::CveId);
        };
        let year_ok = year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit()) && year.as_bytes()[0] != b'0';
        let num_ok = (4..=19).contains(&num.len()) && num.bytes().all(|b| b.is_ascii_digit());
        if year_ok && num_ok { Ok(Self(up)) } else { Err(IdError::CveId) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The year of its id (`CVE-2014-0160` → 2014), checked by [`CveId::parse`].
    pub fn year(&self) -> u16 {
        self.0.get(4..8).and_then(|y| y.parse().ok()).unwrap_or(0)
    }
}

macro_rules! string_newtype_impls {
    ($t:ty) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl AsRef<str> for $t {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(d)?;
                <$t>::parse(&raw).map_err(serde::de::Error::custom)
            }
        }
        impl std::str::FromStr for $t {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                <$t>::parse(s)
            }
        }
    };
}
string_newtype_impls!(SocialId);
string_newtype_impls!(Domain);
string_newtype_impls!(CveId);
string_newtype_impls!(Website);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn social_ids() {
        assert_eq!(SocialId::parse("Acme-Corp").unwrap().as_str(), "acme-corp");
        for bad in ["", "-acme", "acme corp", "acme/x", "é", &"a".repeat(101)] {
            assert!(SocialId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn domains() {
        assert_eq!(Domain::parse("WWW.Example.COM.").unwrap().as_str(), "www.example.com");
        for bad in ["", "com", "a..b", "-a.com", "a-.com", "a_b.com", "1.2.3.4", "a.b/c"] {
            assert!(Domain::parse(bad).is_err(), "{bad:?}");
        }
        let d = Domain::from_url("https://user@Shop.Acme.example:8443/x?y").unwrap();
        assert_eq!(d.as_str(), "shop.acme.example");
        assert!(Domain::from_url("ftp://acme.example").is_err());
        assert_eq!(Domain::from_website("https://www.acme.example/").unwrap().as_str(), "acme.example");
        assert_eq!(Domain::from_website("http://www.example").unwrap().as_str(), "www.example");
        let parents: Vec<&str> = d.self_and_parents().collect();
        assert_eq!(parents, ["shop.acme.example", "acme.example"]);
        assert!(d.is_within(&Domain::parse("acme.example").unwrap()));
        assert!(!Domain::parse("xacme.example").unwrap().is_within(&Domain::parse("acme.example").unwrap()));
    }

    #[test]
    fn websites() {
        let ok = [
            ("https://www.acme.example/", "https://www.acme.example/", "acme.example"),
            ("HTTPS://WWW.Acme.Example/about", "https://www.acme.example/about", "acme.example"),
            ("http://shop.acme.example:8080/a/b.html", "http://shop.acme.example:8080/a/b.html", "shop.acme.example"),
            ("https://acme.example:443", "https://acme.example", "acme.example"),
            ("http://acme.example:80/", "http://acme.example/", "acme.example"),
            ("https://acme.example:8443/", "https://acme.example:8443/", "acme.example"),
            ("www.acme.example", "https://www.acme.example", "acme.example"),
            ("acme.example/about-us", "https://acme.example/about-us", "acme.example"),
            ("https://acme.example./caf%c3%a9~x_y", "https://acme.example/caf%C3%A9~x_y", "acme.example"),
            ("http://www.example", "http://www.example", "www.example"),
        ];
        for (raw, stored, domain) in ok {
            let w = Website::parse(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
            assert_eq!((w.as_str(), w.domain().as_str()), (stored, domain), "{raw:?}");
            assert_eq!(w.domain(), &Domain::from_website(raw).unwrap(), "{raw:?}");
        }
        for bad in [
            "",
            "https://",
            "https:///x",
            "ftp://acme.example",
            "javascript:alert(1)",
            "https://x.example/<script>alert(1)</script>",
            "https://x.example/a b",
            "https://x.example/\"onmouseover=\"x",
            "https://x.example/it's",
            "https://x.example/?q=1",
            "https://x.example/#top",
            "https://x.example?q=1",
            "https://user:pw@x.example/",
            "https://x.example@evil.example/",
            "https://x.example:/",
            "https://x.example:0/",
            "https://x.example:65536/",
            "https://x.example:+80/",
            "https://x.example:8080:1/",
            "https://1.2.3.4/",
            "https://[::1]/",
            "https://x_y.example/",
            "https://x.example/%zz",
            "https://x.example/%4",
            "https://x.example/a\tb",
            " https://x.example/",
            "https://x.example/\u{7f}",
            "https://x.example/é",
            "https://x.example\\evil.example",
        ] {
            assert!(Website::parse(bad).is_err(), "{bad:?}");
        }
        // Percent-escapes stay escaped: what they stand for is never markup in the text.
        assert_eq!(Website::parse("https://x.example/%3c").unwrap().as_str(), "https://x.example/%3C");
        assert!(Website::parse(&format!("https://x.example/{}", "a".repeat(Website::MAX_LEN))).is_err());
    }

    /// An accepted website parses again to itself and holds nothing a page could take
    /// for markup.
    fn website_is_inert(raw: &str) -> Result<(), TestCaseError> {
        if let Ok(w) = Website::parse(raw) {
            prop_assert_eq!(Website::parse(w.as_str()), Ok(w.clone()));
            prop_assert!(
                !w.as_str().chars().any(|c| matches!(c, '<' | '>' | '"' | '\'') || c.is_whitespace() || c.is_control()),
                "{:?} from {:?}",
                w.as_str(),
                raw
            );
            prop_assert!(w.as_str().starts_with("http://") || w.as_str().starts_with("https://"));
        }
        Ok(())
    }

    #[test]
    fn cve_ids() {
        assert_eq!(CveId::parse("cve-2021-44228").unwrap().as_str(), "CVE-2021-44228");
        assert_eq!(CveId::parse("CVE-2014-0160").unwrap().year(), 2014);
        for bad in ["CVE-21-1234", "CVE-2021-123", "CVE-2021-12a4", "2021-1234", "CVE-2021-", "CVE-0999-1234"] {
            assert!(CveId::parse(bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,300}") {
            let _ = SocialId::parse(&s);
            let _ = Domain::parse(&s);
            let _ = Domain::from_url(&s);
            let _ = Website::parse(&s);
            let _ = CveId::parse(&s);
        }

        #[test]
        fn any_accepted_website_roundtrips(s in "\\PC{0,120}") {
            website_is_inert(&s)?;
        }

        #[test]
        fn url_shaped_websites_roundtrip(
            s in "((https?|HTTPS?|ftp|javascript):(//)?)?(user@)?[a-zA-Z0-9.-]{1,20}(:[0-9+]{0,6})?(/[a-zA-Z0-9._~%<>\"' \t?#@!$&()*+,;=:-]{0,12}){0,3}"
        ) {
            website_is_inert(&s)?;
        }

        #[test]
        fn domain_parse_is_idempotent(s in "[a-zA-Z0-9.-]{1,80}") {
            if let Ok(d) = Domain::parse(&s) {
                prop_assert_eq!(Domain::parse(d.as_str()).unwrap(), d);
            }
        }

        #[test]
        fn social_id_roundtrip(s in "[a-z0-9][a-z0-9._-]{0,99}") {
            let parsed = SocialId::parse(&s).unwrap();
            prop_assert_eq!(parsed.as_str(), s.as_str());
        }
    }

    #[test]
    fn dkim_selectors_are_labels() {
        assert_eq!(
            dkim_selectors(&["Sel1", "google", "s1.mail", "k_2", "sel1"]).unwrap(),
            ["sel1", "google", "s1.mail", "k_2"]
        );
        for bad in ["", "a b", " sel1", "a.b.c.d", "sel1._domainkey.x.", "a..b", "é", &"x".repeat(64)] {
            assert!(dkim_selectors(&[bad]).is_err(), "{bad:?}");
        }
        let many: Vec<String> = (0..17).map(|i| format!("s{i}")).collect();
        assert!(dkim_selectors(&many).is_err());
        assert_eq!(dkim_selectors::<&str>(&[]).unwrap(), Vec::<String>::new());
    }
}
