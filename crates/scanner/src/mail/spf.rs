//! SPF records (RFC 7208): recognition (§4.5), the term grammar (§4.6.1, §5, §6, §12)
//! and macro syntax (§7). The parser is total over untrusted TXT data: it never panics,
//! rejects records over [`MAX_RECORD_LEN`] bytes or [`MAX_TERMS`] terms, and does work
//! linear in the record's length.
//!
//! Only syntax is checked here; evaluation (DNS lookups through includes, void lookups)
//! belongs to the probe. A record that does not parse ends in `permerror` (§4.6).

#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The longest record accepted, in bytes (a TXT RRset over TCP cannot be much longer).
pub const MAX_RECORD_LEN: usize = 64 * 1024;
/// The most terms accepted in one record.
pub const MAX_TERMS: usize = 1024;

/// Whether a TXT string (the strings of one record concatenated) is an SPF record:
/// `v=spf1` (any case) followed by a space or the end (RFC 7208 §4.5).
pub fn is_spf(txt: &str) -> bool {
    let b = txt.as_bytes();
    match b.get(..6) {
        Some(v) if v.eq_ignore_ascii_case(b"v=spf1") => matches!(b.get(6), None | Some(b' ')),
        _ => false,
    }
}

/// Whether a domain-spec (or any macro-string) contains a `%{…}` macro. `%%`, `%_` and
/// `%-` are escapes, not macros.
pub fn has_macros(domain_spec: &str) -> bool {
    let mut bytes = domain_spec.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            match bytes.next() {
                Some(b'{') => return true,
                Some(_) => {}
                None => return false,
            }
        }
    }
    false
}

/// A parsed SPF record: its terms in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spf {
    pub terms: Vec<Term>,
}

/// One term of the record (RFC 7208 §4.6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    Directive {
        qualifier: Qualifier,
        mechanism: Mechanism,
    },
    /// `redirect=<domain-spec>`
    Redirect(String),
    /// `exp=<domain-spec>`
    Exp(String),
    /// A modifier this implementation does not know: allowed and ignored (§6).
    Unknown {
        name: String,
        value: String,
    },
}

/// The result a matching directive gives (RFC 7208 §4.6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Qualifier {
    /// `+`, the default
    Pass,
    /// `-`
    Fail,
    /// `~`
    SoftFail,
    /// `?`
    Neutral,
}

impl Qualifier {
    pub fn symbol(self) -> char {
        match self {
            Qualifier::Pass => '+',
            Qualifier::Fail => '-',
            Qualifier::SoftFail => '~',
            Qualifier::Neutral => '?',
        }
    }

    fn from_symbol(c: char) -> Option<Self> {
        match c {
            '+' => Some(Qualifier::Pass),
            '-' => Some(Qualifier::Fail),
            '~' => Some(Qualifier::SoftFail),
            '?' => Some(Qualifier::Neutral),
            _ => None,
        }
    }
}

/// A mechanism (RFC 7208 §5). Domain-specs are kept as written (macros unexpanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    All,
    Include(String),
    A { domain: Option<String>, v4_prefix: Option<u8>, v6_prefix: Option<u8> },
    Mx { domain: Option<String>, v4_prefix: Option<u8>, v6_prefix: Option<u8> },
    Ptr(Option<String>),
    Ip4 { addr: Ipv4Addr, prefix: Option<u8> },
    Ip6 { addr: Ipv6Addr, prefix: Option<u8> },
    Exists(String),
}

impl Mechanism {
    /// The mechanism's name as the record writes it (lowercase).
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::All => "all",
            Mechanism::Include(_) => "include",
            Mechanism::A { .. } => "a",
            Mechanism::Mx { .. } => "mx",
            Mechanism::Ptr(_) => "ptr",
            Mechanism::Ip4 { .. } => "ip4",
            Mechanism::Ip6 { .. } => "ip6",
            Mechanism::Exists(_) => "exists",
        }
    }

    /// Whether evaluating the mechanism queries the DNS (RFC 7208 §4.6.4).
    pub fn is_dns_lookup(&self) -> bool {
        matches!(
            self,
            Mechanism::Include(_)
                | Mechanism::A { .. }
                | Mechanism::Mx { .. }
                | Mechanism::Ptr(_)
                | Mechanism::Exists(_)
        )
    }
}

/// Why a record does not parse. Term numbers count from 1, the first term after
/// `v=spf1`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpfError {
    #[error("not an SPF record: it does not start with \"v=spf1\" followed by a space or the end")]
    NotSpf,
    #[error("record is {len} bytes long, over the limit of {MAX_RECORD_LEN}")]
    TooLong { len: usize },
    #[error("record has more than {MAX_TERMS} terms")]
    TooManyTerms,
    #[error("invalid character {ch:?} in term {term}")]
    InvalidCharacter { ch: char, term: usize },
    #[error("unknown mechanism \"{name}\" at term {term}")]
    UnknownMechanism { name: String, term: usize },
    #[error("qualifier without a mechanism at term {term}")]
    LoneQualifier { term: usize },
    #[error("misplaced qualifier in \"{text}\" at term {term}: a qualifier goes once, before the mechanism")]
    MisplacedQualifier { text: String, term: usize },
    #[error("qualifier on the modifier \"{name}\" at term {term}: only mechanisms take qualifiers")]
    QualifierOnModifier { name: String, term: usize },
    #[error("invalid modifier name \"{name}\" at term {term}")]
    InvalidModifierName { name: String, term: usize },
    #[error("{modifier} given twice (term {term})")]
    DuplicateModifier { modifier: &'static str, term: usize },
    #[error("{mechanism} at term {term} needs a domain: \"{mechanism}:<domain>\"")]
    MissingDomain { mechanism: &'static str, term: usize },
    #[error("{mechanism} at term {term} takes no argument, found \"{found}\"")]
    UnexpectedArgument { mechanism: &'static str, found: String, term: usize },
    #[error("invalid ip4 address \"{value}\" at term {term}")]
    InvalidIp4 { value: String, term: usize },
    #[error("invalid ip6 address \"{value}\" at term {term}")]
    InvalidIp6 { value: String, term: usize },
    #[error("invalid {family} prefix /{prefix} at term {term} (0–{max}, no leading zeros)")]
    InvalidPrefix { family: &'static str, prefix: String, max: u8, term: usize },
    #[error("bad macro at position {position} of \"{spec}\" (term {term}): {reason}")]
    BadMacro { spec: String, position: usize, reason: &'static str, term: usize },
    #[error("invalid domain-spec \"{spec}\" at term {term}: {reason}")]
    InvalidDomainSpec { spec: String, reason: &'static str, term: usize },
}

/// Parses an SPF record (the strings of the TXT record already concatenated, §3.3).
pub fn parse(record: &str) -> Result<Spf, SpfError> {
    if record.len() > MAX_RECORD_LEN {
        return Err(SpfError::TooLong { len: record.len() });
    }
    if !is_spf(record) {
        return Err(SpfError::NotSpf);
    }
    // is_spf checked that the first six bytes are ASCII.
    let rest = record.get(6..).unwrap_or_default();
    let mut terms = Vec::new();
    let mut redirect_seen = false;
    let mut exp_seen = false;
    for (i, text) in rest.split(' ').filter(|t| !t.is_empty()).enumerate() {
        let n = i + 1;
        if n > MAX_TERMS {
            return Err(SpfError::TooManyTerms);
        }
        let term = parse_term(text, n)?;
        match term {
            Term::Redirect(_) if redirect_seen => {
                return Err(SpfError::DuplicateModifier { modifier: "redirect", term: n });
            }
            Term::Redirect(_) => redirect_seen = true,
            Term::Exp(_) if exp_seen => return Err(SpfError::DuplicateModifier { modifier: "exp", term: n }),
            Term::Exp(_) => exp_seen = true,
            _ => {}
        }
        terms.push(term);
    }
    Ok(Spf { terms })
}

fn parse_term(text: &str, n: usize) -> Result<Term, SpfError> {
    if let Some(ch) = text.chars().find(|c| !matches!(c, '!'..='~')) {
        return Err(SpfError::InvalidCharacter { ch, term: n });
    }
    let mut chars = text.chars();
    let (qualifier, body) = match chars.next().and_then(Qualifier::from_symbol) {
        Some(q) => (Some(q), chars.as_str()),
        None => (None, text),
    };
    if body.is_empty() {
        return Err(SpfError::LoneQualifier { term: n });
    }
    // A modifier is `name=`; anything whose first separator is ':' or '/' (or none) is
    // a directive.
    let sep = body.find([':', '/', '=']);
    if let Some(pos) = sep
        && body.get(pos..pos + 1) == Some("=")
    {
        let (name, value) = body.split_at_checked(pos).unwrap_or((body, ""));
        let value = value.get(1..).unwrap_or_default();
        return parse_modifier(qualifier.is_some(), name, value, n);
    }
    let (name, args) = body.split_at_checked(sep.unwrap_or(body.len())).unwrap_or((body, ""));
    let mechanism = parse_mechanism(name, args, n)?;
    Ok(Term::Directive { qualifier: qualifier.unwrap_or(Qualifier::Pass), mechanism })
}

fn parse_modifier(qualified: bool, name: &str, value: &str, n: usize) -> Result<Term, SpfError> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if qualified {
        return Err(SpfError::QualifierOnModifier { name: name.to_string(), term: n });
    }
    if !valid {
        if name.starts_with(['+', '-', '~', '?']) {
            return Err(SpfError::MisplacedQualifier { text: format!("{name}={value}"), term: n });
        }
        return Err(SpfError::InvalidModifierName { name: name.to_string(), term: n });
    }
    if name.eq_ignore_ascii_case("redirect") {
        domain_spec(value, n)?;
        Ok(Term::Redirect(value.to_string()))
    } else if name.eq_ignore_ascii_case("exp") {
        domain_spec(value, n)?;
        Ok(Term::Exp(value.to_string()))
    } else {
        scan_macro_string(value, true).map_err(|(position, reason)| SpfError::BadMacro {
            spec: value.to_string(),
            position,
            reason,
            term: n,
        })?;
        Ok(Term::Unknown { name: name.to_string(), value: value.to_string() })
    }
}

fn parse_mechanism(name: &str, args: &str, n: usize) -> Result<Mechanism, SpfError> {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "all" => {
            no_argument("all", args, n)?;
            Ok(Mechanism::All)
        }
        "include" => Ok(Mechanism::Include(required_domain("include", args, n)?)),
        "exists" => Ok(Mechanism::Exists(required_domain("exists", args, n)?)),
        "ptr" => match args.strip_prefix(':') {
            Some(spec) => Ok(Mechanism::Ptr(Some(domain_spec(spec, n)?))),
            None => {
                no_argument("ptr", args, n)?;
                Ok(Mechanism::Ptr(None))
            }
        },
        "a" => {
            let (domain, v4_prefix, v6_prefix) = a_args("a", args, n)?;
            Ok(Mechanism::A { domain, v4_prefix, v6_prefix })
        }
        "mx" => {
            let (domain, v4_prefix, v6_prefix) = a_args("mx", args, n)?;
            Ok(Mechanism::Mx { domain, v4_prefix, v6_prefix })
        }
        "ip4" => {
            let value = args.strip_prefix(':').ok_or(SpfError::MissingDomain { mechanism: "ip4", term: n })?;
            let (addr, prefix) = match value.split_once('/') {
                Some((a, p)) => (a, Some(prefix(p, 32, "ip4", n)?)),
                None => (value, None),
            };
            let addr = addr.parse().map_err(|_| SpfError::InvalidIp4 { value: addr.to_string(), term: n })?;
            Ok(Mechanism::Ip4 { addr, prefix })
        }
        "ip6" => {
            let value = args.strip_prefix(':').ok_or(SpfError::MissingDomain { mechanism: "ip6", term: n })?;
            let (addr, prefix) = match value.split_once('/') {
                Some((a, p)) => (a, Some(prefix(p, 128, "ip6", n)?)),
                None => (value, None),
            };
            let addr = addr.parse().map_err(|_| SpfError::InvalidIp6 { value: addr.to_string(), term: n })?;
            Ok(Mechanism::Ip6 { addr, prefix })
        }
        _ if name.starts_with(['+', '-', '~', '?']) => {
            Err(SpfError::MisplacedQualifier { text: format!("{name}{args}"), term: n })
        }
        _ => Err(SpfError::UnknownMechanism { name: name.to_string(), term: n }),
    }
}

fn no_argument(mechanism: &'static str, args: &str, n: usize) -> Result<(), SpfError> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(SpfError::UnexpectedArgument { mechanism, found: args.to_string(), term: n })
    }
}

fn required_domain(mechanism: &'static str, args: &str, n: usize) -> Result<String, SpfError> {
    match args.strip_prefix(':') {
        Some("") => Err(SpfError::MissingDomain { mechanism, term: n }),
        Some(spec) => domain_spec(spec, n),
        None if args.is_empty() => Err(SpfError::MissingDomain { mechanism, term: n }),
        None => Err(SpfError::UnexpectedArgument { mechanism, found: args.to_string(), term: n }),
    }
}

type AArgs = (Option<String>, Option<u8>, Option<u8>);

/// `[ ":" domain-spec ] [ dual-cidr-length ]` of `a` and `mx`.
fn a_args(mechanism: &'static str, args: &str, n: usize) -> Result<AArgs, SpfError> {
    let (spec, v4, v6) = match args.strip_prefix(':') {
        Some(rest) => split_dual_cidr(rest),
        None => split_dual_cidr(args),
    };
    let v4 = v4.map(|p| prefix(p, 32, "ip4", n)).transpose()?;
    let v6 = v6.map(|p| prefix(p, 128, "ip6", n)).transpose()?;
    let domain = if args.starts_with(':') {
        if spec.is_empty() {
            return Err(SpfError::MissingDomain { mechanism, term: n });
        }
        Some(domain_spec(spec, n)?)
    } else if spec.is_empty() {
        None
    } else {
        return Err(SpfError::UnexpectedArgument { mechanism, found: args.to_string(), term: n });
    };
    Ok((domain, v4, v6))
}

/// Splits `<rest>[/<v4>][//<v6>]` from the end; the prefixes are returned unchecked
/// (digits only).
fn split_dual_cidr(s: &str) -> (&str, Option<&str>, Option<&str>) {
    fn trailing<'a>(s: &'a str, slashes: &str) -> Option<(&'a str, &'a str)> {
        let head = s.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = s.get(head.len()..)?;
        if digits.is_empty() {
            return None;
        }
        let head = head.strip_suffix(slashes)?;
        Some((head, digits))
    }
    let (s, v6) = match trailing(s, "//") {
        Some((head, d)) => (head, Some(d)),
        None => (s, None),
    };
    let (s, v4) = match trailing(s, "/") {
        Some((head, d)) if !head.ends_with('/') => (head, Some(d)),
        _ => (s, None),
    };
    (s, v4, v6)
}

/// A CIDR length: "0" or digits without a leading zero, at most `max`.
fn prefix(digits: &str, max: u8, family: &'static str, n: usize) -> Result<u8, SpfError> {
    let bad = || SpfError::InvalidPrefix { family, prefix: digits.to_string(), max, term: n };
    let well_formed = !digits.is_empty()
        && digits.len() <= 3
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !well_formed {
        return Err(bad());
    }
    match digits.parse::<u8>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(bad()),
    }
}

/// Checks a domain-spec (RFC 7208 §7.1): a macro-string whose end is a macro or
/// `"." toplabel ["."]`. Returns it as an owned string.
fn domain_spec(spec: &str, n: usize) -> Result<String, SpfError> {
    if spec.is_empty() {
        return Err(SpfError::InvalidDomainSpec { spec: String::new(), reason: "empty", term: n });
    }
    let ends_with_macro = scan_macro_string(spec, false).map_err(|(position, reason)| SpfError::BadMacro {
        spec: spec.to_string(),
        position,
        reason,
        term: n,
    })?;
    if !ends_with_macro {
        let body = spec.strip_suffix('.').unwrap_or(spec);
        let ok = body.rsplit_once('.').is_some_and(|(_, top)| is_toplabel(top));
        if !ok {
            return Err(SpfError::InvalidDomainSpec {
                spec: spec.to_string(),
                reason: "it must end in \".<top-level label>\" or a macro",
                term: n,
            });
        }
    }
    Ok(spec.to_string())
}

/// toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum )
fn is_toplabel(label: &str) -> bool {
    let b = label.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-') {
        return false;
    }
    if b.contains(&b'-') {
        first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric()
    } else {
        b.iter().any(u8::is_ascii_alphabetic)
    }
}

/// Scans a macro-string (RFC 7208 §7.1). Returns whether it ends with a macro-expand,
/// or the 1-based position of the fault and why. `c`, `r` and `t` are allowed only when
/// `explanation_letters` is set (§7.3: they belong to explanation text).
fn scan_macro_string(s: &str, explanation_letters: bool) -> Result<bool, (usize, &'static str)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut ends_with_macro = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'%' => {
                let start = i + 1;
                match b.get(i + 1) {
                    Some(b'%' | b'_' | b'-') => i += 2,
                    Some(b'{') => {
                        i += 2;
                        let letter = b.get(i).ok_or((start, "unterminated macro"))?.to_ascii_lowercase();
                        match letter {
                            b's' | b'l' | b'o' | b'd' | b'i' | b'p' | b'h' | b'v' => {}
                            b'c' | b'r' | b't' if explanation_letters => {}
                            b'c' | b'r' | b't' => {
                                return Err((i + 1, "macros c, r and t are allowed only in explanation text"));
                            }
                            b'}' => return Err((i + 1, "macro without a letter")),
                            _ => return Err((i + 1, "unknown macro letter")),
                        }
                        i += 1;
                        let digits_start = i;
                        let mut value: u32 = 0;
                        while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
                            value = value.saturating_mul(10).saturating_add(u32::from(d - b'0'));
                            i += 1;
                        }
                        if i > digits_start && value == 0 {
                            return Err((digits_start + 1, "the digit transformer must not be zero"));
                        }
                        if matches!(b.get(i), Some(b'r' | b'R')) {
                            i += 1;
                        }
                        while matches!(b.get(i), Some(b'.' | b'-' | b'+' | b',' | b'/' | b'_' | b'=')) {
                            i += 1;
                        }
                        match b.get(i) {
                            Some(b'}') => i += 1,
                            Some(_) => return Err((i + 1, "expected a delimiter or '}' in the macro")),
                            None => return Err((start, "unterminated macro")),
                        }
                    }
                    Some(_) => return Err((start, "'%' must be followed by '{', '%', '_' or '-'")),
                    None => return Err((start, "'%' at the end")),
                }
                ends_with_macro = true;
            }
            0x21..=0x7e => {
                i += 1;
                ends_with_macro = false;
            }
            _ => return Err((i + 1, "invalid character")),
        }
    }
    Ok(ends_with_macro)
}

impl Spf {
    /// The qualifier of the (first) `all` mechanism, if any: evaluation stops there.
    pub fn all(&self) -> Option<Qualifier> {
        self.directives().find(|(_, m)| matches!(m, Mechanism::All)).map(|(q, _)| q)
    }

    /// The `redirect=` target, if any.
    pub fn redirect(&self) -> Option<&str> {
        self.terms.iter().find_map(|t| match t {
            Term::Redirect(d) => Some(d.as_str()),
            _ => None,
        })
    }

    /// The `exp=` domain-spec, if any.
    pub fn exp(&self) -> Option<&str> {
        self.terms.iter().find_map(|t| match t {
            Term::Exp(d) => Some(d.as_str()),
            _ => None,
        })
    }

    /// The terms of this record that query the DNS (`include`, `a`, `mx`, `ptr`,
    /// `exists`, `redirect`; RFC 7208 §4.6.4). Includes are not followed.
    pub fn dns_lookup_terms(&self) -> usize {
        self.terms
            .iter()
            .filter(|t| match t {
                Term::Directive { mechanism, .. } => mechanism.is_dns_lookup(),
                Term::Redirect(_) => true,
                _ => false,
            })
            .count()
    }

    /// The `include:` targets, in order.
    pub fn includes(&self) -> Vec<&str> {
        self.directives()
            .filter_map(|(_, m)| match m {
                Mechanism::Include(d) => Some(d.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether the record uses the deprecated `ptr` mechanism (RFC 7208 §5.5).
    pub fn uses_ptr(&self) -> bool {
        self.directives().any(|(_, m)| matches!(m, Mechanism::Ptr(_)))
    }

    fn directives(&self) -> impl Iterator<Item = (Qualifier, &Mechanism)> {
        self.terms.iter().filter_map(|t| match t {
            Term::Directive { qualifier, mechanism } => Some((*qualifier, mechanism)),
            _ => None,
        })
    }
}

impl fmt::Display for Qualifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.symbol())
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match self {
            Mechanism::All | Mechanism::Ptr(None) => Ok(()),
            Mechanism::Include(d) | Mechanism::Exists(d) | Mechanism::Ptr(Some(d)) => write!(f, ":{d}"),
            Mechanism::A { domain, v4_prefix, v6_prefix } | Mechanism::Mx { domain, v4_prefix, v6_prefix } => {
                if let Some(d) = domain {
                    write!(f, ":{d}")?;
                }
                if let Some(p) = v4_prefix {
                    write!(f, "/{p}")?;
                }
                if let Some(p) = v6_prefix {
                    write!(f, "//{p}")?;
                }
                Ok(())
            }
            Mechanism::Ip4 { addr, prefix } => {
                write!(f, ":{addr}")?;
                prefix.map_or(Ok(()), |p| write!(f, "/{p}"))
            }
            Mechanism::Ip6 { addr, prefix } => {
                write!(f, ":{addr}")?;
                prefix.map_or(Ok(()), |p| write!(f, "/{p}"))
            }
        }
    }
}

impl fmt::Display for Term {
    /// The canonical form: the `+` qualifier is left out, names are lowercase.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Directive { qualifier: Qualifier::Pass, mechanism } => write!(f, "{mechanism}"),
            Term::Directive { qualifier, mechanism } => write!(f, "{qualifier}{mechanism}"),
            Term::Redirect(d) => write!(f, "redirect={d}"),
            Term::Exp(d) => write!(f, "exp={d}"),
            Term::Unknown { name, value } => write!(f, "{name}={value}"),
        }
    }
}

impl fmt::Display for Spf {
    /// `v=spf1` and the terms separated by single spaces; `parse` gives back the same
    /// value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("v=spf1")?;
        for t in &self.terms {
            write!(f, " {t}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(record: &str) -> Spf {
        match parse(record) {
            Ok(s) => s,
            Err(e) => panic!("{record:?} should parse: {e}"),
        }
    }

    fn err(record: &str) -> String {
        match parse(record) {
            Ok(s) => panic!("{record:?} should not parse, got {s:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn recognises_spf_records() {
        for (txt, expected) in [
            ("v=spf1", true),
            ("v=spf1 -all", true),
            ("V=SPF1 -all", true),
            ("v=spf1  ", true),
            ("v=spf10 -all", false),
            ("v=spf1-all", false),
            (" v=spf1 -all", false),
            ("v=spf", false),
            ("spf2.0/pra -all", false),
            ("", false),
            ("v=spf1\t-all", false),
            ("v=sp\u{e9}1", false),
        ] {
            assert_eq!(is_spf(txt), expected, "{txt:?}");
        }
    }

    #[test]
    fn real_world_records() {
        // (record, all, lookups, includes, redirect, ptr)
        type Case<'a> = (&'a str, Option<Qualifier>, usize, &'a [&'a str], Option<&'a str>, bool);
        let cases: &[Case] = &[
            ("v=spf1 include:_spf.google.com ~all", Some(Qualifier::SoftFail), 1, &["_spf.google.com"], None, false),
            (
                "v=spf1 include:spf.protection.outlook.com -all",
                Some(Qualifier::Fail),
                1,
                &["spf.protection.outlook.com"],
                None,
                false,
            ),
            ("v=spf1 redirect=_spf.google.com", None, 1, &[], Some("_spf.google.com"), false),
            (
                "v=spf1 ip4:35.190.247.0/24 ip4:64.233.160.0/19 ip6:2001:4860:4000::/36 ip6:2404:6800:4000::/36 ~all",
                Some(Qualifier::SoftFail),
                0,
                &[],
                None,
                false,
            ),
            (
                "v=spf1 include:servers.mcsv.net include:mailgun.org include:sendgrid.net mx a -all",
                Some(Qualifier::Fail),
                5,
                &["servers.mcsv.net", "mailgun.org", "sendgrid.net"],
                None,
                false,
            ),
            // Mailchimp/Mandrill-style and Amazon SES-style macros.
            (
                "v=spf1 exists:%{i}._spf.mta.salesforce.com include:%{ir}.%{v}._spf.example.net ?all",
                Some(Qualifier::Neutral),
                2,
                &["%{ir}.%{v}._spf.example.net"],
                None,
                false,
            ),
            ("v=spf1 exists:%{l1r+-}._spf.%{d} -all", Some(Qualifier::Fail), 1, &[], None, false),
            (
                "v=spf1 ptr:mail.example.com mx/24 a:a.example.com/24//64 +all",
                Some(Qualifier::Pass),
                3,
                &[],
                None,
                true,
            ),
            ("v=spf1 -all", Some(Qualifier::Fail), 0, &[], None, false),
            ("v=spf1", None, 0, &[], None, false),
            ("v=spf1 all", Some(Qualifier::Pass), 0, &[], None, false),
            ("V=SPF1 INCLUDE:_spf.Example.COM MX -ALL", Some(Qualifier::Fail), 2, &["_spf.Example.COM"], None, false),
            (
                "v=spf1 mx include:_spf.example.com redirect=_spf.example.org exp=explain._spf.%{d} moo=%{s}bar",
                None,
                3,
                &["_spf.example.com"],
                Some("_spf.example.org"),
                false,
            ),
            ("v=spf1 a:example.com. -all", Some(Qualifier::Fail), 1, &[], None, false),
            ("v=spf1 ip4:192.0.2.1 ip6:::1 ip6:::ffff:192.0.2.1/128 -all", Some(Qualifier::Fail), 0, &[], None, false),
            ("v=spf1   mx    -all   ", Some(Qualifier::Fail), 1, &[], None, false),
        ];
        for &(record, all, lookups, includes, redirect, ptr) in cases {
            let spf = ok(record);
            assert_eq!(spf.all(), all, "{record}");
            assert_eq!(spf.dns_lookup_terms(), lookups, "{record}");
            assert_eq!(spf.includes(), includes, "{record}");
            assert_eq!(spf.redirect(), redirect, "{record}");
            assert_eq!(spf.uses_ptr(), ptr, "{record}");
            assert_eq!(parse(&spf.to_string()), Ok(spf.clone()), "{record} → {spf}");
        }
    }

    #[test]
    fn terms_are_parsed_in_detail() {
        let spf = ok(
            "v=spf1 -a/24//64 ~mx:mx.example.com//48 ?ptr ip4:192.0.2.0/24 ip6:2001:db8::/32 exists:%{i}.x.example FOO=bar",
        );
        assert_eq!(
            spf.terms,
            vec![
                Term::Directive {
                    qualifier: Qualifier::Fail,
                    mechanism: Mechanism::A { domain: None, v4_prefix: Some(24), v6_prefix: Some(64) }
                },
                Term::Directive {
                    qualifier: Qualifier::SoftFail,
                    mechanism: Mechanism::Mx {
                        domain: Some("mx.example.com".into()),
                        v4_prefix: None,
                        v6_prefix: Some(48)
                    }
                },
                Term::Directive { qualifier: Qualifier::Neutral, mechanism: Mechanism::Ptr(None) },
                Term::Directive {
                    qualifier: Qualifier::Pass,
                    mechanism: Mechanism::Ip4 { addr: Ipv4Addr::new(192, 0, 2, 0), prefix: Some(24) }
                },
                Term::Directive {
                    qualifier: Qualifier::Pass,
                    mechanism: Mechanism::Ip6 { addr: "2001:db8::".parse().unwrap(), prefix: Some(32) }
                },
                Term::Directive { qualifier: Qualifier::Pass, mechanism: Mechanism::Exists("%{i}.x.example".into()) },
                Term::Unknown { name: "FOO".into(), value: "bar".into() },
            ]
        );
        assert_eq!(
            spf.to_string(),
            "v=spf1 -a/24//64 ~mx:mx.example.com//48 ?ptr ip4:192.0.2.0/24 ip6:2001:db8::/32 exists:%{i}.x.example FOO=bar"
        );
        assert_eq!(ok("v=spf1 +all").to_string(), "v=spf1 all");
    }

    #[test]
    fn errors_say_what_and_where() {
        for (record, message) in [
            ("v=spf1 mx foo -all", "unknown mechanism \"foo\" at term 2"),
            ("v=spf1 mx ip4:127.78.12.300 -all", "invalid ip4 address \"127.78.12.300\" at term 2"),
            ("v=spf1 ip4:192.0.2.0/33", "invalid ip4 prefix /33 at term 1"),
            ("v=spf1 ip4:192.0.2.0/024", "invalid ip4 prefix /024"),
            ("v=spf1 ip4:192.0.2.0/", "invalid ip4 prefix /"),
            ("v=spf1 ip4:01.2.3.4", "invalid ip4 address"),
            ("v=spf1 ip6:2001:db8::/129", "invalid ip6 prefix /129 at term 1"),
            ("v=spf1 ip6:2001:db8::g", "invalid ip6 address"),
            ("v=spf1 ip6:192.0.2.1", "invalid ip6 address"),
            ("v=spf1 a/33", "invalid ip4 prefix /33"),
            ("v=spf1 mx//129", "invalid ip6 prefix /129"),
            ("v=spf1 redirect=a.example redirect=b.example", "redirect given twice (term 2)"),
            ("v=spf1 exp=a.example exp=b.example", "exp given twice"),
            ("v=spf1 -redirect=a.example", "qualifier on the modifier \"redirect\" at term 1"),
            ("v=spf1 -+all", "misplaced qualifier"),
            ("v=spf1 - all", "qualifier without a mechanism at term 1"),
            ("v=spf1 include", "include at term 1 needs a domain"),
            ("v=spf1 include:", "include at term 1 needs a domain"),
            ("v=spf1 exists", "exists at term 1 needs a domain"),
            ("v=spf1 all:example.com", "all at term 1 takes no argument"),
            ("v=spf1 all/24", "all at term 1 takes no argument"),
            ("v=spf1 ptr/24", "ptr at term 1 takes no argument"),
            ("v=spf1 include:%{x}.example.com", "bad macro at position 3"),
            ("v=spf1 include:%{d0}.example.com", "must not be zero"),
            ("v=spf1 include:%{d", "unterminated macro"),
            ("v=spf1 include:%{d}%", "'%' at the end"),
            ("v=spf1 include:100%.example.com", "'%' must be followed by"),
            ("v=spf1 include:%{d2r!}.example.com", "expected a delimiter or '}'"),
            ("v=spf1 exists:%{c}.example.com", "allowed only in explanation text"),
            ("v=spf1 include:localhost", "invalid domain-spec \"localhost\""),
            ("v=spf1 include:example.123", "must end in"),
            ("v=spf1 include:example.-com", "must end in"),
            ("v=spf1 a:example.com/x", "must end in"),
            ("v=spf1 redirect=", "invalid domain-spec \"\""),
            ("v=spf1 1foo=bar", "invalid modifier name \"1foo\""),
            ("v=spf1 foo=%{z}", "bad macro"),
            ("v=spf1 include:ex\u{e4}mple.com", "invalid character 'ä' in term 1"),
            ("v=spf1 mx\t-all", "invalid character '\\t' in term 1"),
            ("v=spf2 -all", "not an SPF record"),
        ] {
            let e = err(record);
            assert!(e.contains(message), "{record:?}: {e:?} should contain {message:?}");
        }
        assert!(matches!(parse(&format!("v=spf1 {}", "a".repeat(MAX_RECORD_LEN))), Err(SpfError::TooLong { .. })));
        assert_eq!(parse(&format!("v=spf1{}", " mx".repeat(MAX_TERMS + 1))), Err(SpfError::TooManyTerms));
        assert!(parse(&format!("v=spf1{}", " mx".repeat(MAX_TERMS))).is_ok());
    }

    #[test]
    fn macros_are_validated() {
        for spec in [
            "%{s}.example.com",
            "%{l}.%{o}.%{d}.%{i}.%{p}.%{h}.%{v}.example.com",
            "%{ir}.%{v}._spf.%{d2}",
            "%{d}",
            "%{L15r-}.example.com",
            "%{S1r.-+,/_=}.example.com",
            "%%.%_.%-.example.com",
            "%{i}",
            "a.b.c-d",
            "x.1-2",
        ] {
            assert!(parse(&format!("v=spf1 include:{spec}")).is_ok(), "{spec}");
        }
        // Explanation-only letters are fine in unknown modifiers' macro-strings.
        assert!(parse("v=spf1 note=%{c}%{r}%{t}").is_ok());
        assert!(has_macros("%{i}._spf.example.com"));
        assert!(has_macros("x.%{d2r}"));
        assert!(!has_macros("_spf.example.com"));
        assert!(!has_macros("%%{i}"));
        assert!(!has_macros("%-%_"));
        assert!(!has_macros("%"));
    }

    /// Every SPF record of the built-in lab parses, except those whose domain expects
    /// `spf.syntax_error`; and the lab's SPF verdicts follow from the parsed records.
    #[test]
    fn lab_records() {
        let lab = lab_records::Lab::load();
        let mut seen = 0;
        for (owner, txt) in lab.txt() {
            if !is_spf(txt) {
                continue;
            }
            seen += 1;
            let expect_error = lab.expects(owner, "spf.syntax_error");
            match parse(txt) {
                Ok(spf) => {
                    assert!(!expect_error, "{owner}: {txt:?} parsed, but the lab expects spf.syntax_error");
                    let check = |code: &str, holds: bool| {
                        if lab.expects(owner, code) {
                            assert!(holds, "{owner}: {code} expected but {txt:?} does not show it");
                        }
                    };
                    check("spf.pass_all", spf.all() == Some(Qualifier::Pass));
                    check("spf.neutral_all", spf.all() == Some(Qualifier::Neutral));
                    check("spf.softfail_all", spf.all() == Some(Qualifier::SoftFail));
                    check("spf.no_all", spf.all().is_none() && spf.redirect().is_none());
                    check("spf.ptr_mechanism", spf.uses_ptr());
                    assert_eq!(parse(&spf.to_string()), Ok(spf.clone()));
                }
                Err(e) => assert!(expect_error, "{owner}: {txt:?} does not parse: {e}"),
            }
        }
        assert!(seen > 20, "only {seen} SPF records found in the lab");
    }

    fn label() -> impl Strategy<Value = String> {
        "[a-z0-9_][a-z0-9_-]{0,8}"
    }

    fn macro_expand(letters: &'static str) -> impl Strategy<Value = String> {
        (proptest::sample::select(letters.chars().collect::<Vec<_>>()), 0u8..20, any::<bool>(), "[-.+,/_=]{0,3}")
            .prop_map(|(l, d, r, delims)| {
                let d = if d == 0 { String::new() } else { d.to_string() };
                format!("%{{{l}{d}{}{delims}}}", if r { "r" } else { "" })
            })
    }

    fn domain_spec_strategy() -> impl Strategy<Value = String> {
        let part = prop_oneof![label(), macro_expand("slodiphvSLODIPHV"), Just("%%".into()), Just("%-".into())];
        let end = prop_oneof![
            "[a-z]{1,6}".prop_map(|t| format!(".{t}")),
            "[a-z]{1,6}".prop_map(|t| format!(".{t}.")),
            "[a-z0-9]{1,3}-[a-z0-9]{1,3}".prop_map(|t| format!(".{t}")),
            macro_expand("slodiphv"),
        ];
        (proptest::collection::vec(part, 1..4), end).prop_map(|(parts, end)| format!("{}{end}", parts.join(".")))
    }

    fn qualifier() -> impl Strategy<Value = Qualifier> {
        prop_oneof![Just(Qualifier::Pass), Just(Qualifier::Fail), Just(Qualifier::SoftFail), Just(Qualifier::Neutral)]
    }

    fn mechanism() -> impl Strategy<Value = Mechanism> {
        let dom = || proptest::option::of(domain_spec_strategy());
        prop_oneof![
            Just(Mechanism::All),
            domain_spec_strategy().prop_map(Mechanism::Include),
            domain_spec_strategy().prop_map(Mechanism::Exists),
            dom().prop_map(Mechanism::Ptr),
            (dom(), proptest::option::of(0u8..=32), proptest::option::of(0u8..=128))
                .prop_map(|(domain, v4_prefix, v6_prefix)| Mechanism::A { domain, v4_prefix, v6_prefix }),
            (dom(), proptest::option::of(0u8..=32), proptest::option::of(0u8..=128))
                .prop_map(|(domain, v4_prefix, v6_prefix)| Mechanism::Mx { domain, v4_prefix, v6_prefix }),
            (any::<u32>(), proptest::option::of(0u8..=32))
                .prop_map(|(a, prefix)| Mechanism::Ip4 { addr: Ipv4Addr::from(a), prefix }),
            (any::<u128>(), proptest::option::of(0u8..=128))
                .prop_map(|(a, prefix)| Mechanism::Ip6 { addr: Ipv6Addr::from(a), prefix }),
        ]
    }

    fn record() -> impl Strategy<Value = Spf> {
        let directive =
            (qualifier(), mechanism()).prop_map(|(qualifier, mechanism)| Term::Directive { qualifier, mechanism });
        let unknown = ("[a-zA-Z][a-zA-Z0-9_.-]{0,8}", "([a-z0-9.]|%\\{[crt]\\}|%%){0,6}")
            .prop_filter("a known modifier", |(n, _)| {
                !n.eq_ignore_ascii_case("redirect") && !n.eq_ignore_ascii_case("exp")
            })
            .prop_map(|(name, value)| Term::Unknown { name, value });
        (
            proptest::collection::vec(prop_oneof![4 => directive, 1 => unknown], 0..12),
            proptest::option::of(domain_spec_strategy()),
            proptest::option::of(domain_spec_strategy()),
        )
            .prop_map(|(mut terms, redirect, exp)| {
                terms.extend(redirect.map(Term::Redirect));
                terms.extend(exp.map(Term::Exp));
                Spf { terms }
            })
    }

    proptest! {
        #[test]
        fn display_round_trips(spf in record()) {
            let text = spf.to_string();
            prop_assert!(is_spf(&text));
            prop_assert_eq!(parse(&text), Ok(spf), "{}", text);
        }

        #[test]
        fn never_panics_on_strings(s in "\\PC{0,200}") {
            let _ = parse(&s);
            let _ = parse(&format!("v=spf1 {s}"));
            let _ = has_macros(&s);
        }

        #[test]
        fn never_panics_on_spf_like_strings(s in "(v=spf1)?( |[-+~?]|all|a|mx|ptr|ip[46]|include|exists|redirect|exp|[:/=%{}.0-9a-z]|\\PC)*") {
            if let Ok(spf) = parse(&s) {
                prop_assert_eq!(parse(&spf.to_string()), Ok(spf));
            }
        }

        #[test]
        fn never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let s = String::from_utf8_lossy(&b);
            let _ = parse(&s);
            let _ = parse(&format!("v=spf1 {s}"));
        }
    }
}

/// The TXT records of the built-in lab and its expected findings, for the parsers'
/// tests.
#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod lab_records {
    pub(crate) struct Lab {
        /// (owner name, the record's strings concatenated)
        txt: Vec<(String, String)>,
        /// (asset, code)
        expected: Vec<(String, String)>,
    }

    impl Lab {
        pub(crate) fn load() -> Self {
            let file = lab::LabFile::builtin().expect("the built-in lab parses");
            let mut txt = Vec::new();
            for zone in &file.zones {
                for record in &zone.records {
                    let Some(pos) = record.find(" TXT ") else { continue };
                    let name = record.split_whitespace().next().unwrap_or("@");
                    let owner = if name == "@" { zone.origin.clone() } else { format!("{name}.{}", zone.origin) };
                    txt.push((owner, quoted_strings(&record[pos + 5..]).concat()));
                }
            }
            let expected = file
                .every_company()
                .flat_map(|c| c.expected.iter().map(|e| (e.asset.clone(), e.code.clone())))
                .collect();
            Lab { txt, expected }
        }

        pub(crate) fn txt(&self) -> impl Iterator<Item = (&str, &str)> {
            self.txt.iter().map(|(o, t)| (o.as_str(), t.as_str()))
        }

        pub(crate) fn expects(&self, asset: &str, code: &str) -> bool {
            self.expected.iter().any(|(a, c)| a == asset && c == code)
        }
    }

    /// The character-strings of master-file TXT data: `"a" "b"` → ["a", "b"].
    fn quoted_strings(data: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut chars = data.chars();
        while let Some(c) = chars.next() {
            if c != '"' {
                continue;
            }
            let mut s = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => s.extend(chars.next()),
                    c => s.push(c),
                }
            }
            out.push(s);
        }
        out
    }
}
