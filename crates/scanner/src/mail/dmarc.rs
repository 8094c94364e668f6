//! DMARC policy records (RFC 7489 §6.3, §6.4; report URIs §7.1). The parser is total
//! over untrusted TXT data: it never panics and rejects records over
//! [`MAX_RECORD_LEN`] bytes or [`MAX_TAGS`] tags.
//!
//! Strictness, chosen for the `dmarc.syntax_error` verdict of docs/FINDINGS.md:
//! - `v=DMARC1` must be the first tag and `p` the second (the §6.4 grammar).
//! - A record without a valid `p` is an error, even when it has a valid `rua`: §6.6.3
//!   lets receivers treat such a record as `p=none`, but the publisher's record is still
//!   broken. [`DmarcError::MissingPolicy`] says whether a valid `rua` was present, for a
//!   caller that wants the receiver's view.
//! - Tag names are case-insensitive; unknown tags are kept, not errors; a tag given
//!   twice is an error (RFC 6376 §3.2, which DMARC's tag-value syntax follows).
//! - Empty tag-specs (`;;`, a trailing `;`) are tolerated.

#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt;

/// The longest record accepted, in bytes.
pub const MAX_RECORD_LEN: usize = 64 * 1024;
/// The most tags accepted in one record.
pub const MAX_TAGS: usize = 256;

const WSP: [char; 2] = [' ', '\t'];

/// The default `ri` (one day, §6.3).
pub const DEFAULT_RI: u32 = 86_400;

/// Whether a TXT string is a DMARC record: it starts with `v=DMARC1` (any case, spaces
/// or tabs allowed around `=`), followed by `;` or the end. Also true of the bare
/// `v=DMARC1` that authorises external report destinations (§7.1).
pub fn is_dmarc(txt: &str) -> bool {
    after_version(txt).is_some()
}

/// What follows `v=DMARC1` (empty or starting with `;`).
fn after_version(txt: &str) -> Option<&str> {
    let t = txt.strip_prefix(['v', 'V'])?.trim_start_matches(WSP);
    let t = t.strip_prefix('=')?.trim_start_matches(WSP);
    let (version, rest) = t.split_at_checked(6)?;
    if !version.eq_ignore_ascii_case("DMARC1") {
        return None;
    }
    let rest = rest.trim_start_matches(WSP);
    (rest.is_empty() || rest.starts_with(';')).then_some(rest)
}

/// A parsed DMARC policy record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dmarc {
    /// `p`
    pub policy: Policy,
    /// `sp`; when absent, subdomains get `p`.
    pub subdomain_policy: Option<Policy>,
    /// `pct`, 0–100, default 100.
    pub pct: u8,
    pub rua: Vec<ReportUri>,
    pub ruf: Vec<ReportUri>,
    /// `adkim`, default relaxed.
    pub adkim: Alignment,
    /// `aspf`, default relaxed.
    pub aspf: Alignment,
    /// `fo` as written (options separated by `:`), default `0`.
    pub fo: String,
    /// `ri` in seconds, default 86400.
    pub ri: u32,
    /// `rf` as written, default `afrf`.
    pub rf: String,
    /// Tags this parser does not know, each as written: `name=value`.
    pub unknown_tags: Vec<String>,
}

impl Dmarc {
    /// The policy for subdomains: `sp`, or `p` when `sp` is absent.
    pub fn effective_subdomain_policy(&self) -> Policy {
        self.subdomain_policy.unwrap_or(self.policy)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Policy {
    None,
    Quarantine,
    Reject,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Quarantine => "quarantine",
            Policy::Reject => "reject",
        }
    }

    fn parse(value: &str) -> Option<Self> {
        [Policy::None, Policy::Quarantine, Policy::Reject].into_iter().find(|p| value.eq_ignore_ascii_case(p.as_str()))
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Alignment {
    Relaxed,
    Strict,
}

impl Alignment {
    pub fn as_str(self) -> &'static str {
        match self {
            Alignment::Relaxed => "r",
            Alignment::Strict => "s",
        }
    }
}

/// One `rua`/`ruf` destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportUri {
    /// The URI as written, without the size limit.
    pub uri: String,
    /// For a `mailto:` URI, the lowercase domain of the address (no trailing dot): the
    /// domain that must authorise reports for another domain (§7.1).
    pub mailbox_domain: Option<String>,
    /// The `!<size>` suffix without the `!`, e.g. `10m`.
    pub size_limit: Option<String>,
}

impl fmt::Display for ReportUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.uri)?;
        match &self.size_limit {
            Some(s) => write!(f, "!{s}"),
            None => Ok(()),
        }
    }
}

/// Why a record does not parse. Tag positions count from 1 (`v` is tag 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DmarcError {
    #[error("not a DMARC record: it does not start with \"v=DMARC1\"")]
    NotDmarc,
    #[error("record is {len} bytes long, over the limit of {MAX_RECORD_LEN}")]
    TooLong { len: usize },
    #[error("record has more than {MAX_TAGS} tags")]
    TooManyTags,
    #[error("malformed tag {position} \"{text}\": {reason}")]
    MalformedTag { position: usize, text: String, reason: &'static str },
    #[error("tag \"{name}\" given twice")]
    DuplicateTag { name: String },
    #[error("the required p tag is missing{}", rua_note(.rua_valid))]
    MissingPolicy { rua_valid: bool },
    #[error("p must come right after v=DMARC1, found \"{found}\" as tag 2")]
    PolicyNotSecond { found: String },
    #[error("invalid {tag} \"{value}\": must be none, quarantine or reject")]
    InvalidPolicy { tag: &'static str, value: String },
    #[error("invalid pct \"{0}\": must be an integer from 0 to 100")]
    InvalidPct(String),
    #[error("invalid {tag} \"{value}\": must be r or s")]
    InvalidAlignment { tag: &'static str, value: String },
    #[error("invalid {tag} URI \"{uri}\": {reason}")]
    InvalidUri { tag: &'static str, uri: String, reason: &'static str },
    #[error("invalid fo \"{0}\": must be 0, 1, d or s, separated by ':'")]
    InvalidFo(String),
    #[error("invalid ri \"{0}\": must be a number of seconds")]
    InvalidRi(String),
    #[error("invalid rf \"{0}\": must be report format names separated by ':'")]
    InvalidRf(String),
}

fn rua_note(rua_valid: &bool) -> &'static str {
    if *rua_valid { " (receivers treat a record with a valid rua as p=none)" } else { "" }
}

/// Parses a DMARC policy record (the TXT strings already concatenated).
pub fn parse(record: &str) -> Result<Dmarc, DmarcError> {
    if record.len() > MAX_RECORD_LEN {
        return Err(DmarcError::TooLong { len: record.len() });
    }
    let rest = after_version(record).ok_or(DmarcError::NotDmarc)?;

    // Split the tag list; tag 1 is v.
    // (lowercase name, name as written, value)
    let mut tags: Vec<(String, &str, &str)> = Vec::new();
    let mut position = 1;
    for spec in rest.split(';') {
        let spec = spec.trim_matches(|c: char| c.is_ascii_whitespace());
        if spec.is_empty() {
            continue;
        }
        position += 1;
        if position > MAX_TAGS {
            return Err(DmarcError::TooManyTags);
        }
        let malformed = |reason| DmarcError::MalformedTag { position, text: spec.to_string(), reason };
        let (name, value) = spec.split_once('=').ok_or_else(|| malformed("no '='"))?;
        let name = name.trim_end_matches(WSP);
        let value = value.trim_start_matches(WSP);
        let mut chars = name.chars();
        if !(chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(malformed("a tag name is a letter followed by letters, digits or '_'"));
        }
        if let Some(c) = value.chars().find(|c| !matches!(c, '!'..='~' | ' ' | '\t')) {
            return Err(if c.is_ascii() {
                malformed("control character in the value")
            } else {
                malformed("non-ASCII character in the value")
            });
        }
        let lower = name.to_ascii_lowercase();
        if lower == "v" || tags.iter().any(|(n, _, _)| *n == lower) {
            return Err(DmarcError::DuplicateTag { name: name.to_string() });
        }
        tags.push((lower, name, value));
    }

    let value_of = |tag: &str| tags.iter().find(|(n, _, _)| n == tag).map(|(_, _, v)| *v);
    let Some(p) = value_of("p") else {
        let rua_valid = value_of("rua").is_some_and(|v| uri_list("rua", v).is_ok_and(|l| !l.is_empty()));
        return Err(DmarcError::MissingPolicy { rua_valid });
    };
    if let Some((first, _, _)) = tags.first()
        && first != "p"
    {
        return Err(DmarcError::PolicyNotSecond { found: first.clone() });
    }
    let policy = Policy::parse(p).ok_or_else(|| DmarcError::InvalidPolicy { tag: "p", value: p.to_string() })?;

    let mut dmarc = Dmarc {
        policy,
        subdomain_policy: None,
        pct: 100,
        rua: Vec::new(),
        ruf: Vec::new(),
        adkim: Alignment::Relaxed,
        aspf: Alignment::Relaxed,
        fo: "0".to_string(),
        ri: DEFAULT_RI,
        rf: "afrf".to_string(),
        unknown_tags: Vec::new(),
    };
    for &(ref lower, name, value) in &tags {
        match lower.as_str() {
            "p" => {}
            "sp" => {
                dmarc.subdomain_policy = Some(
                    Policy::parse(value)
                        .ok_or_else(|| DmarcError::InvalidPolicy { tag: "sp", value: value.to_string() })?,
                );
            }
            "pct" => dmarc.pct = pct(value)?,
            "rua" => dmarc.rua = uri_list("rua", value)?,
            "ruf" => dmarc.ruf = uri_list("ruf", value)?,
            "adkim" => dmarc.adkim = alignment("adkim", value)?,
            "aspf" => dmarc.aspf = alignment("aspf", value)?,
            "fo" => {
                let ok = value.split(':').map(|o| o.trim_matches(WSP)).all(|o| matches!(o, "0" | "1" | "d" | "s"));
                if !ok {
                    return Err(DmarcError::InvalidFo(value.to_string()));
                }
                dmarc.fo = value.to_string();
            }
            "ri" => {
                let ok = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
                dmarc.ri = value.parse().ok().filter(|_| ok).ok_or_else(|| DmarcError::InvalidRi(value.to_string()))?;
            }
            "rf" => {
                let ok = value.split(':').map(|k| k.trim_matches(WSP)).all(|k| {
                    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') && !k.ends_with('-')
                });
                if !ok {
                    return Err(DmarcError::InvalidRf(value.to_string()));
                }
                dmarc.rf = value.to_string();
            }
            _ => dmarc.unknown_tags.push(format!("{name}={value}")),
        }
    }
    Ok(dmarc)
}

fn pct(value: &str) -> Result<u8, DmarcError> {
    let ok = (1..=3).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit());
    match value.parse::<u8>() {
        Ok(v) if ok && v <= 100 => Ok(v),
        _ => Err(DmarcError::InvalidPct(value.to_string())),
    }
}

fn alignment(tag: &'static str, value: &str) -> Result<Alignment, DmarcError> {
    if value.eq_ignore_ascii_case("r") {
        Ok(Alignment::Relaxed)
    } else if value.eq_ignore_ascii_case("s") {
        Ok(Alignment::Strict)
    } else {
        Err(DmarcError::InvalidAlignment { tag, value: value.to_string() })
    }
}

/// `dmarc-uri *(*WSP "," *WSP dmarc-uri)`
fn uri_list(tag: &'static str, value: &str) -> Result<Vec<ReportUri>, DmarcError> {
    value.split(',').map(|item| report_uri(tag, item.trim_matches(WSP))).collect()
}

/// `URI [ "!" 1*DIGIT [ "k" / "m" / "g" / "t" ] ]`
fn report_uri(tag: &'static str, item: &str) -> Result<ReportUri, DmarcError> {
    let bad = |reason| DmarcError::InvalidUri { tag, uri: item.to_string(), reason };
    if item.is_empty() {
        return Err(bad("empty URI"));
    }
    let (uri, size_limit) = match item.split_once('!') {
        Some((uri, size)) => {
            let digits = size.trim_end_matches(['k', 'm', 'g', 't', 'K', 'M', 'G', 'T']);
            let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && size.len() <= digits.len() + 1;
            if !ok {
                return Err(bad("the size limit after '!' must be digits and an optional k, m, g or t"));
            }
            (uri, Some(size.to_string()))
        }
        None => (item, None),
    };
    let (scheme, rest) = uri.split_once(':').ok_or_else(|| bad("no scheme (e.g. mailto:)"))?;
    let mut chars = scheme.chars();
    if !(chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    {
        return Err(bad("invalid scheme"));
    }
    if rest.is_empty() {
        return Err(bad("nothing after the scheme"));
    }
    if rest.contains([' ', '\t']) {
        return Err(bad("white space inside the URI"));
    }
    let mailbox_domain = if scheme.eq_ignore_ascii_case("mailto") {
        let address = rest.split_once('?').map_or(rest, |(a, _)| a);
        let address = percent_decode(address).ok_or_else(|| bad("invalid percent-encoding"))?;
        let (local, domain) = address.rsplit_once('@').ok_or_else(|| bad("mailto: address without '@'"))?;
        if local.is_empty() {
            return Err(bad("mailto: address without a local part"));
        }
        let domain = domain.strip_suffix('.').unwrap_or(domain);
        let valid_domain = !domain.is_empty()
            && domain.split('.').all(|l| {
                !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !valid_domain {
            return Err(bad("mailto: address with an invalid domain"));
        }
        Some(domain.to_ascii_lowercase())
    } else {
        None
    };
    Ok(ReportUri { uri: uri.to_string(), mailbox_domain, size_limit })
}

fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = char::from(bytes.next()?).to_digit(16)?;
            let lo = char::from(bytes.next()?).to_digit(16)?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

impl fmt::Display for Dmarc {
    /// `v=DMARC1; p=…` and the tags that differ from their defaults; `parse` gives back
    /// the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v=DMARC1; p={}", self.policy)?;
        if let Some(sp) = self.subdomain_policy {
            write!(f, "; sp={sp}")?;
        }
        if self.pct != 100 {
            write!(f, "; pct={}", self.pct)?;
        }
        for (tag, list) in [("rua", &self.rua), ("ruf", &self.ruf)] {
            if !list.is_empty() {
                write!(f, "; {tag}=")?;
                for (i, u) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{u}")?;
                }
            }
        }
        if self.adkim != Alignment::Relaxed {
            write!(f, "; adkim={}", self.adkim.as_str())?;
        }
        if self.aspf != Alignment::Relaxed {
            write!(f, "; aspf={}", self.aspf.as_str())?;
        }
        if self.fo != "0" {
            write!(f, "; fo={}", self.fo)?;
        }
        if self.ri != DEFAULT_RI {
            write!(f, "; ri={}", self.ri)?;
        }
        if self.rf != "afrf" {
            write!(f, "; rf={}", self.rf)?;
        }
        for t in &self.unknown_tags {
            write!(f, "; {t}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(record: &str) -> Dmarc {
        match parse(record) {
            Ok(d) => d,
            Err(e) => panic!("{record:?} should parse: {e}"),
        }
    }

    fn mailto(addr: &str, domain: &str, size: Option<&str>) -> ReportUri {
        ReportUri {
            uri: format!("mailto:{addr}"),
            mailbox_domain: Some(domain.into()),
            size_limit: size.map(str::to_string),
        }
    }

    #[test]
    fn recognises_dmarc_records() {
        for (txt, expected) in [
            ("v=DMARC1", true),
            ("v=DMARC1;", true),
            ("v=DMARC1; p=none", true),
            ("v = DMARC1 ;p=none", true),
            ("V=dmarc1; p=none", true),
            ("v=DMARC1p=none", false),
            ("v=DMARC10; p=none", false),
            ("v=DMARC", false),
            (" v=DMARC1; p=none", false),
            ("p=none; v=DMARC1", false),
            ("v=spf1 -all", false),
            ("", false),
            ("v=DMAR\u{e7}1", false),
        ] {
            assert_eq!(is_dmarc(txt), expected, "{txt:?}");
        }
    }

    #[test]
    fn real_world_records() {
        let d = ok("v=DMARC1; p=reject; rua=mailto:mailauth-reports@google.com");
        assert_eq!(d.policy, Policy::Reject);
        assert_eq!(d.rua, vec![mailto("mailauth-reports@google.com", "google.com", None)]);
        assert_eq!((d.pct, d.adkim, d.aspf, d.ri), (100, Alignment::Relaxed, Alignment::Relaxed, 86_400));
        assert_eq!((d.fo.as_str(), d.rf.as_str()), ("0", "afrf"));

        let d = ok("v=DMARC1; p=reject; pct=100; rua=mailto:d@rua.agari.com; ruf=mailto:d@ruf.agari.com; fo=1");
        assert_eq!(d.ruf, vec![mailto("d@ruf.agari.com", "ruf.agari.com", None)]);
        assert_eq!(d.fo, "1");

        let d = ok("v=DMARC1; p=quarantine; sp=none; pct=25; adkim=s; aspf=r; \
             rua=mailto:dmarc@Example.COM!10m , mailto:x%40y@Reports.Vendor.NET.!50; \
             ruf=mailto:forensics@example.com!1G; fo=0:1:d:s; ri=3600; rf=afrf:iodef; np=reject");
        assert_eq!(d.policy, Policy::Quarantine);
        assert_eq!(d.subdomain_policy, Some(Policy::None));
        assert_eq!(d.effective_subdomain_policy(), Policy::None);
        assert_eq!((d.pct, d.adkim, d.aspf, d.ri), (25, Alignment::Strict, Alignment::Relaxed, 3600));
        assert_eq!(
            d.rua,
            vec![
                mailto("dmarc@Example.COM", "example.com", Some("10m")),
                mailto("x%40y@Reports.Vendor.NET.", "reports.vendor.net", Some("50")),
            ]
        );
        assert_eq!(d.ruf, vec![mailto("forensics@example.com", "example.com", Some("1G"))]);
        assert_eq!(d.fo, "0:1:d:s");
        assert_eq!(d.rf, "afrf:iodef");
        assert_eq!(d.unknown_tags, vec!["np=reject".to_string()]);
        assert_eq!(parse(&d.to_string()), Ok(d.clone()));

        let d = ok("v=DMARC1;p=none;");
        assert_eq!((d.policy, d.rua.len()), (Policy::None, 0));
        let d = ok("V = DMARC1 ; P = Reject ; RUA = https://dmarc.example.com/report ; X_Custom = a b");
        assert_eq!(d.policy, Policy::Reject);
        assert_eq!(d.effective_subdomain_policy(), Policy::Reject);
        assert_eq!(
            d.rua,
            vec![ReportUri { uri: "https://dmarc.example.com/report".into(), mailbox_domain: None, size_limit: None }]
        );
        assert_eq!(d.unknown_tags, vec!["X_Custom=a b".to_string()]);
        assert_eq!(ok("v=DMARC1; p=reject; pct=0").pct, 0);
        assert_eq!(ok("v=DMARC1; p=reject; pct=007").pct, 7);
        assert_eq!(
            ok("v=DMARC1; p=reject; ruf=mailto:a@b.example?subject=dmarc").ruf[0].mailbox_domain.as_deref(),
            Some("b.example")
        );
    }

    #[test]
    fn errors_say_what_is_wrong() {
        for (record, message) in [
            ("v=DMARC1", "the required p tag is missing"),
            ("v=DMARC1; rua=mailto:d@example.com", "missing (receivers treat a record with a valid rua as p=none)"),
            ("v=DMARC1; rua=mailto:d@example.com; p=reject", "p must come right after v=DMARC1, found \"rua\""),
            ("v=DMARC1; p=rejected; rua=mailto:dmarc@saltmarsh.test", "invalid p \"rejected\""),
            ("v=DMARC1; p=", "invalid p \"\""),
            ("v=DMARC1; p=none; sp=all", "invalid sp \"all\""),
            ("v=DMARC1; p=none; pct=101", "invalid pct \"101\""),
            ("v=DMARC1; p=none; pct=-1", "invalid pct"),
            ("v=DMARC1; p=none; pct=50.5", "invalid pct"),
            ("v=DMARC1; p=none; pct=0100", "invalid pct"),
            ("v=DMARC1; p=none; adkim=strict", "invalid adkim \"strict\""),
            ("v=DMARC1; p=none; aspf=", "invalid aspf"),
            ("v=DMARC1; p=none; rua=dmarc@example.com", "invalid rua URI \"dmarc@example.com\": no scheme"),
            ("v=DMARC1; p=none; rua=mailto:dmarc.example.com", "without '@'"),
            ("v=DMARC1; p=none; rua=mailto:@example.com", "without a local part"),
            ("v=DMARC1; p=none; rua=mailto:d@exa mple.com", "white space"),
            ("v=DMARC1; p=none; rua=mailto:d@", "invalid domain"),
            ("v=DMARC1; p=none; rua=mailto:d@example..com", "invalid domain"),
            ("v=DMARC1; p=none; rua=mailto:a@example.com,", "empty URI"),
            ("v=DMARC1; p=none; rua=", "empty URI"),
            ("v=DMARC1; p=none; rua=mailto:a@example.com!10x", "size limit"),
            ("v=DMARC1; p=none; rua=mailto:a@example.com!", "size limit"),
            ("v=DMARC1; p=none; rua=mailto:a@example.com!1!2", "size limit"),
            ("v=DMARC1; p=none; rua=mailto:a%4@example.com", "percent-encoding"),
            ("v=DMARC1; p=none; fo=2", "invalid fo \"2\""),
            ("v=DMARC1; p=none; ri=1h", "invalid ri \"1h\""),
            ("v=DMARC1; p=none; ri=99999999999", "invalid ri"),
            ("v=DMARC1; p=none; rf=", "invalid rf"),
            ("v=DMARC1; p=none; pct", "malformed tag 3 \"pct\": no '='"),
            ("v=DMARC1; p=none; 1x=y", "malformed tag 3"),
            ("v=DMARC1; p=none; x=\u{e9}", "non-ASCII"),
            ("v=DMARC1; p=none; p=reject", "tag \"p\" given twice"),
            ("v=DMARC1; p=none; v=DMARC1", "tag \"v\" given twice"),
            ("v=DMARC1; p=none; RUA=mailto:a@b.example; rua=mailto:a@b.example", "given twice"),
            ("p=none; v=DMARC1", "not a DMARC record"),
        ] {
            match parse(record) {
                Ok(d) => panic!("{record:?} should not parse, got {d:?}"),
                Err(e) => assert!(e.to_string().contains(message), "{record:?}: {e} should contain {message:?}"),
            }
        }
        assert_eq!(parse("v=DMARC1; rua=mailto:nope"), Err(DmarcError::MissingPolicy { rua_valid: false }));
        assert!(matches!(
            parse(&format!("v=DMARC1; p=none; x={}", "a".repeat(MAX_RECORD_LEN))),
            Err(DmarcError::TooLong { .. })
        ));
        assert_eq!(
            parse(&format!("v=DMARC1; p=none{}", (0..MAX_TAGS).map(|i| format!(";x{i}=1")).collect::<String>())),
            Err(DmarcError::TooManyTags)
        );
    }

    /// The lab's `_dmarc` records parse except where `dmarc.syntax_error` is expected,
    /// and its DMARC verdicts follow from the parsed records.
    #[test]
    fn lab_records() {
        let lab = super::super::spf::lab_records::Lab::load();
        let mut seen = 0;
        for (owner, txt) in lab.txt() {
            if !is_dmarc(txt) {
                continue;
            }
            let Some(domain) = owner.strip_prefix("_dmarc.") else {
                // `<domain>._report._dmarc.<rua domain>` authorisations: just `v=DMARC1`.
                assert!(owner.contains("._report._dmarc."), "{owner}");
                continue;
            };
            seen += 1;
            let expect_error = lab.expects(domain, "dmarc.syntax_error");
            match parse(txt) {
                Ok(d) => {
                    assert!(!expect_error, "{owner}: {txt:?} parsed, but the lab expects dmarc.syntax_error");
                    let check = |code: &str, holds: bool| {
                        if lab.expects(domain, code) {
                            assert!(holds, "{owner}: {code} expected but {txt:?} does not show it");
                        }
                    };
                    check("dmarc.policy_none", d.policy == Policy::None);
                    check("dmarc.policy_quarantine", d.policy == Policy::Quarantine);
                    check("dmarc.partial_pct", d.pct < 100 && d.policy != Policy::None);
                    check("dmarc.subdomain_policy_none", d.subdomain_policy == Some(Policy::None));
                    check("dmarc.no_rua", d.rua.is_empty());
                    check(
                        "dmarc.external_rua_unauthorized",
                        d.rua.iter().chain(&d.ruf).any(|u| u.mailbox_domain.as_deref() != Some(domain)),
                    );
                    assert_eq!(parse(&d.to_string()), Ok(d.clone()));
                }
                Err(e) => assert!(expect_error, "{owner}: {txt:?} does not parse: {e}"),
            }
        }
        assert!(seen > 10, "only {seen} DMARC records found in the lab");
    }

    fn report_uri_strategy() -> impl Strategy<Value = ReportUri> {
        let size = proptest::option::of("[0-9]{1,4}[kmgtKMGT]?");
        prop_oneof![
            ("[a-z0-9._+-]{1,10}", "[a-z0-9-]{1,10}(\\.[a-zA-Z0-9-]{1,10}){0,3}", size.clone()).prop_map(
                |(local, domain, size_limit)| ReportUri {
                    uri: format!("mailto:{local}@{domain}"),
                    mailbox_domain: Some(domain.to_ascii_lowercase()),
                    size_limit,
                }
            ),
            ("https?://[a-z0-9.]{1,12}/[a-z0-9/]{0,10}", size).prop_map(|(uri, size_limit)| ReportUri {
                uri,
                mailbox_domain: None,
                size_limit
            }),
        ]
    }

    fn policy() -> impl Strategy<Value = Policy> {
        prop_oneof![Just(Policy::None), Just(Policy::Quarantine), Just(Policy::Reject)]
    }

    fn alignment_strategy() -> impl Strategy<Value = Alignment> {
        prop_oneof![Just(Alignment::Relaxed), Just(Alignment::Strict)]
    }

    fn record() -> impl Strategy<Value = Dmarc> {
        (
            (policy(), proptest::option::of(policy()), 0u8..=100),
            proptest::collection::vec(report_uri_strategy(), 0..3),
            proptest::collection::vec(report_uri_strategy(), 0..3),
            (alignment_strategy(), alignment_strategy()),
            ("[01ds](:[01ds]){0,3}", any::<u32>(), "[a-z]{1,6}(:[a-z]{1,6})?"),
            proptest::collection::btree_map("x[a-z0-9_]{0,6}", "[a-z0-9!-:<-~]{0,8}", 0..3),
        )
            .prop_map(|((policy, subdomain_policy, pct), rua, ruf, (adkim, aspf), (fo, ri, rf), unknown)| {
                Dmarc {
                    policy,
                    subdomain_policy,
                    pct,
                    rua,
                    ruf,
                    adkim,
                    aspf,
                    fo,
                    ri,
                    rf,
                    unknown_tags: unknown.into_iter().map(|(n, v)| format!("{n}={v}")).collect(),
                }
            })
    }

    proptest! {
        #[test]
        fn display_round_trips(d in record()) {
            let text = d.to_string();
            prop_assert!(is_dmarc(&text));
            prop_assert_eq!(parse(&text), Ok(d), "{}", text);
        }

        #[test]
        fn never_panics_on_strings(s in "\\PC{0,200}") {
            let _ = parse(&s);
            let _ = parse(&format!("v=DMARC1; p=none; {s}"));
            let _ = is_dmarc(&s);
        }

        #[test]
        fn never_panics_on_dmarc_like_strings(s in "(v=DMARC1)?([; =,!:@%.]|p|sp|pct|rua|ruf|mailto|adkim|fo|ri|rf|[0-9a-z]|\\PC)*") {
            if let Ok(d) = parse(&s) {
                prop_assert_eq!(parse(&d.to_string()), Ok(d));
            }
        }

        #[test]
        fn never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let s = String::from_utf8_lossy(&b);
            let _ = parse(&s);
            let _ = parse(&format!("v=DMARC1; p=none; {s}"));
        }
    }
}
