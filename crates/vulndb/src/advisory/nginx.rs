//! nginx.org's `security_advisories.xml`: an `<article>` whose `<security>` section holds
//! one `<item>` per advisory, with `cve` (the id without its `CVE-` prefix),
//! `vulnerable` and `good` (shown as "Not vulnerable") attributes:
//!
//! - `vulnerable`: `all`, or a comma-separated list of ranges (`0.9.6-1.31.2`) and single
//!   versions (`1.26.0`); a list may be prefixed by a platform (`nginx/Windows
//!   0.7.52-1.3.0`), which limits the statement to that platform.
//! - `good`: `none`, or a comma-separated list of `X.Y.Z+`. The highest one means that
//!   version and every later one; the others mean that version and the later ones of its
//!   branch X.Y (`1.30.4+` next to `1.31.3+` is 1.30.4 up to, not including, 1.31), since
//!   the branch after it is vulnerable until its own fix. A good version may fall inside
//!   a vulnerable range (`0.7.62+` with `0.1.0-0.8.14`): good wins.
//!
//! The list is complete for the product, so a version in neither list is not affected.
//! An item without a `cve` attribute (one names a CORE Security advisory instead) states
//! nothing about a CVE and is left out.

use model::version::Version;
use quick_xml::events::Event;

use super::{Affected, MAX_VERSION_BYTES, Source, Statement, Statements, cve_id};
use crate::FeedError;
use crate::cwe::support::{XmlStream, excerpt};

const WHAT: &str = "nginx advisories";

/// Reads `security_advisories.xml`: one statement per item and CVE.
pub fn parse_nginx(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    let mut xml = XmlStream::new(bytes, WHAT, "article");
    let mut buf = Vec::new();
    let mut out = Statements::new(WHAT);
    let mut items = 0usize;
    loop {
        let (event, _) = xml.next(&mut buf)?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) if e.local_name().as_ref() == b"item" => {
                let position = format!("item {items}");
                items += 1;
                let Some(cves) = xml.attr(e, "cve")? else { continue };
                let vulnerable = xml.attr(e, "vulnerable")?.unwrap_or_default();
                let good = xml.attr(e, "good")?.unwrap_or_default();
                let (platform, affected) = vulnerable_sets(&position, &vulnerable)?;
                let unaffected = good_sets(&position, &good)?;
                for cve in cves.split(|c: char| c == ',' || c.is_whitespace()).filter(|c| !c.is_empty()) {
                    let id = if cve.len() > 4 && cve[..4].eq_ignore_ascii_case("CVE-") {
                        cve.to_owned()
                    } else {
                        format!("CVE-{cve}")
                    };
                    out.push(
                        &position,
                        Statement {
                            cve: cve_id(WHAT, &position, &id)?,
                            source: Source::Nginx,
                            cpe_product: Some(("f5".to_owned(), "nginx".to_owned())),
                            package: None,
                            platform: platform.clone(),
                            affected: affected.clone(),
                            unaffected: unaffected.clone(),
                            unknown: Vec::new(),
                            otherwise: Some(false),
                        },
                    )?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out.finish())
}

/// An nginx version: digits and dots, starting with a digit.
fn nginx_version(position: &str, raw: &str) -> Result<String, FeedError> {
    let v = raw.trim();
    let ok = v.len() <= MAX_VERSION_BYTES
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if ok {
        Ok(v.to_owned())
    } else {
        Err(FeedError::format(WHAT, position, format!("{} is not an nginx version", excerpt(v))))
    }
}

/// The platform and the sets of a `vulnerable` attribute.
fn vulnerable_sets(position: &str, raw: &str) -> Result<(Option<String>, Vec<Affected>), FeedError> {
    let mut platform: Option<String> = None;
    let mut sets = Vec::new();
    let text = raw.trim();
    if text.eq_ignore_ascii_case("all") {
        return Ok((None, vec![Affected::All]));
    }
    if text.eq_ignore_ascii_case("none") || text.is_empty() {
        return Ok((None, sets));
    }
    for (i, part) in text.split(',').enumerate() {
        let mut part = part.trim();
        // `nginx/Windows 0.7.52-1.3.0`: the platform, then the versions.
        let this_platform = match part.strip_prefix("nginx/") {
            Some(rest) => {
                let (name, versions) = rest.split_once(' ').unwrap_or((rest, ""));
                part = versions.trim();
                Some(super::name(name))
            }
            None => None,
        };
        if i > 0 && this_platform != platform {
            return Err(FeedError::format(WHAT, position, format!("vulnerable {} mixes platforms", excerpt(text))));
        }
        platform = this_platform;
        sets.push(match part.split_once('-') {
            Some((from, to)) => Affected::Range {
                introduced: Some(nginx_version(position, from)?),
                fixed: None,
                last_affected: Some(nginx_version(position, to)?),
            },
            None => Affected::Exact(nginx_version(position, part)?),
        });
    }
    Ok((platform, sets))
}

/// The branch after the one of `v` (`1.30.4` → `1.31`), if `v` has two numbers.
fn next_branch(v: &str) -> Option<String> {
    let mut numbers = v.split('.');
    let major: u64 = numbers.next()?.parse().ok()?;
    let minor: u64 = numbers.next()?.parse().ok()?;
    Some(format!("{major}.{}", minor.checked_add(1)?))
}

/// The sets of a `good` attribute.
fn good_sets(position: &str, raw: &str) -> Result<Vec<Affected>, FeedError> {
    let text = raw.trim();
    if text.eq_ignore_ascii_case("none") || text.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        match part.strip_suffix('+') {
            Some(v) => parts.push((nginx_version(position, v)?, true)),
            None => parts.push((nginx_version(position, part)?, false)),
        }
    }
    let highest = parts.iter().filter(|(_, plus)| *plus).map(|(v, _)| Version::parse(v)).max();
    Ok(parts
        .into_iter()
        .map(|(v, plus)| {
            if !plus {
                return Affected::Exact(v);
            }
            let fixed = if Some(Version::parse(&v)) == highest { None } else { next_branch(&v) };
            Affected::Range { introduced: Some(v), fixed, last_affected: None }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(items: &str) -> String {
        format!(
            "<!-- c -->\n<!DOCTYPE article SYSTEM \"../../dtd/article.dtd\">\n<article name=\"a\"><section><security>{items}</security></section></article>"
        )
    }

    #[test]
    fn advisory_nginx_ranges_and_good_branches() {
        let v = parse_nginx(
            doc(r#"<item name="x" cve="2013-2070" good="1.5.0+, 1.4.1+, 1.2.9+" vulnerable="1.1.4-1.2.8, 1.3.9-1.4.0">
                   </item>
                   <item name="y" cve="2009-4487" good="none" vulnerable="all"/>
                   <item name="z" core="CORE-2010-0121" good="0.8.33+" vulnerable="nginx/Windows 0.7.52-0.8.32"/>
                   <item name="w" cve="2011-4963" good="1.3.1+, 1.2.1+" vulnerable="nginx/Windows 0.7.52-1.3.0"/>"#)
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(v.len(), 3, "the item without a CVE is left out");
        let s = &v[0];
        assert_eq!(s.cve.as_str(), "CVE-2013-2070");
        assert_eq!(s.cpe_product, Some(("f5".into(), "nginx".into())));
        for (version, expected) in [
            ("1.1.3", Some(false)),
            ("1.1.4", Some(true)),
            ("1.2.8", Some(true)),
            ("1.2.9", Some(false)),
            ("1.3.8", Some(false)),
            ("1.3.9", Some(true)),
            ("1.4.0", Some(true)),
            ("1.4.1", Some(false)),
            ("1.5.0", Some(false)),
            ("1.25.0", Some(false)),
        ] {
            assert_eq!(s.verdict(version), expected, "{version}");
        }
        assert_eq!(
            s.unaffected[1],
            Affected::Range { introduced: Some("1.4.1".into()), fixed: Some("1.5".into()), last_affected: None }
        );
        assert_eq!(v[1].verdict("1.25.0"), Some(true));
        assert_eq!(v[2].platform.as_deref(), Some("Windows"));
        assert_eq!(v[2].verdict("1.2.0"), Some(true));
    }

    #[test]
    fn advisory_nginx_refuses_odd_forms() {
        for item in [
            r#"<item cve="2020-1234" vulnerable="1.0-"/>"#,
            r#"<item cve="2020-1234" vulnerable="1.0 to 2.0"/>"#,
            r#"<item cve="2020-1234" vulnerable="nginx/Windows 1.0, 2.0"/>"#,
            r#"<item cve="2020-1234" good="1.2++"/>"#,
            r#"<item cve="banana" vulnerable="1.0"/>"#,
            r#"<item cve="2020-1234" vulnerable="1.0""#,
        ] {
            assert!(parse_nginx(doc(item).as_bytes()).is_err(), "{item}");
        }
        assert!(parse_nginx(b"<other/>").is_err());
        assert!(parse_nginx(b"").is_err());
        let text = doc(r#"<item cve="2020-1234" vulnerable="1.0"/>"#);
        assert!(parse_nginx(&text.as_bytes()[..text.len() - 3]).is_err());
        let huge = doc(&format!(r#"<item cve="2020-1234" vulnerable="{}"/>"#, "1".repeat(MAX_VERSION_BYTES + 1)));
        assert!(parse_nginx(huge.as_bytes()).is_err());
        let many = doc(&r#"<item cve="2020-1234" vulnerable="1.0"/>"#.repeat(super::super::MAX_STATEMENTS + 1));
        assert!(parse_nginx(many.as_bytes()).is_err());
    }
}
