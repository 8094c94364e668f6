//! The Debian security tracker's JSON export (all of the tracker in one document): an
//! object of source packages, each an object of issues (`CVE-…`, or `TEMP-…` for the
//! ones without a CVE id yet), each with `releases`: per release code name a `status`
//! and, once fixed, the `fixed_version` of the package in that release:
//!
//! - `resolved` with `fixed_version` `0`: the release's package was never affected;
//! - `resolved` with a version: affected below it;
//! - `open`: affected in every version (no fix yet, whatever the urgency);
//! - `undetermined`, `resolved` without a version, or any other status: unknown.
//!
//! The export is large (every package of every release), so it is read as a stream of
//! packages and issues, and only the source packages Rampart maps to a product it
//! detects (`crate::aliases::PACKAGES`: `apache2`, `openssh`, `php8.1`, …) become
//! statements: the others are skipped unread, since no detection would ever consult
//! them. A file is refused as soon as it holds more than [`MAX_TRACKER_STATEMENTS`]
//! statements of those packages (one per CVE, package and release).

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};

use super::{Affected, Scheme, Source, Statement, name, version};
use crate::FeedError;
use crate::cwe::support::json_error;

const WHAT: &str = "Debian security tracker";

/// The most statements read from one tracker export (of the packages kept): the whole
/// export holds some tens of thousands for them.
pub const MAX_TRACKER_STATEMENTS: usize = 1_000_000;

#[derive(Deserialize)]
struct RawIssue {
    #[serde(default)]
    releases: BTreeMap<String, RawRelease>,
}

#[derive(Deserialize)]
struct RawRelease {
    status: String,
    #[serde(default)]
    fixed_version: Option<String>,
}

/// Reads the tracker's JSON export: one statement per CVE, source package and release.
/// Issues that are not CVEs (`TEMP-…`) are left out.
pub fn parse_debian_tracker(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    parse_capped(bytes, MAX_TRACKER_STATEMENTS)
}

fn parse_capped(bytes: &[u8], cap: usize) -> Result<Vec<Statement>, FeedError> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Packages { out: &mut out, cap }.deserialize(&mut de).map_err(|e| json_error(WHAT, e))?;
    de.end().map_err(|e| json_error(WHAT, e))?;
    Ok(out)
}

/// The top-level object: package name → issues.
struct Packages<'a> {
    out: &'a mut Vec<Statement>,
    cap: usize,
}

impl<'de> DeserializeSeed<'de> for Packages<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Packages<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of source packages")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(package) = map.next_key::<String>()? {
            if crate::aliases::package_product(package.trim()).is_none() {
                // Still an object of issues, or this is not the tracker's export.
                map.next_value_seed(SkipIssues)?;
                continue;
            }
            map.next_value_seed(Issues { package: name(&package), out: &mut *self.out, cap: self.cap })?;
        }
        Ok(())
    }
}

/// A skipped package's object: checked to be an object, its issues unread.
struct SkipIssues;

impl<'de> DeserializeSeed<'de> for SkipIssues {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SkipIssues {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of issues")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// One package's object: issue id → issue.
struct Issues<'a> {
    package: String,
    out: &'a mut Vec<Statement>,
    cap: usize,
}

impl<'de> DeserializeSeed<'de> for Issues<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Issues<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of issues")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(id) = map.next_key::<String>()? {
            let Ok(cve) = model::CveId::parse(&id) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let issue: RawIssue = map.next_value()?;
            for (release, r) in issue.releases {
                if self.out.len() >= self.cap {
                    return Err(A::Error::custom(format!("the file holds more than {} statements", self.cap)));
                }
                let statement = statement(&self.package, cve.clone(), &release, r).map_err(|e| match e {
                    FeedError::Format { message, .. } => A::Error::custom(message),
                    other => A::Error::custom(other.to_string()),
                })?;
                self.out.push(statement);
            }
        }
        Ok(())
    }
}

fn statement(package: &str, cve: model::CveId, release: &str, r: RawRelease) -> Result<Statement, FeedError> {
    let position = format!("{package} {} {release}", cve.as_str());
    let (affected, unaffected, unknown, otherwise) = match (r.status.trim(), r.fixed_version.as_deref().map(str::trim))
    {
        ("resolved", Some("0")) => (vec![], vec![Affected::All], vec![], Some(false)),
        ("resolved", Some(fixed)) => {
            let fixed = version(WHAT, &position, Scheme::Dpkg, fixed)?;
            (
                vec![Affected::Range { introduced: None, fixed: Some(fixed), last_affected: None }],
                vec![],
                vec![],
                Some(false),
            )
        }
        ("open", _) => (vec![Affected::All], vec![], vec![], Some(true)),
        _ => (vec![], vec![], vec![Affected::All], None),
    };
    Ok(Statement {
        cve,
        source: Source::Debian { release: name(release) },
        cpe_product: None,
        package: Some(package.to_owned()),
        platform: None,
        affected,
        unaffected,
        unknown,
        otherwise,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{
      "apache2": {
        "CVE-2021-41773": {
          "scope": "remote",
          "releases": {
            "bullseye": {"status": "resolved", "repositories": {"bullseye": "2.4.62-1~deb11u1"},
                         "fixed_version": "0", "urgency": "not yet assigned"},
            "sid": {"status": "resolved", "repositories": {"sid": "2.4.62-3"}, "fixed_version": "2.4.50-1",
                    "urgency": "not yet assigned"}
          }
        },
        "CVE-2024-99999": {
          "releases": {
            "bookworm": {"status": "open", "repositories": {"bookworm": "2.4.62-1~deb12u2"}, "urgency": "unimportant"},
            "trixie": {"status": "undetermined", "repositories": {"trixie": "2.4.63-1"}, "urgency": "not yet assigned"}
          }
        },
        "TEMP-0000000-2A7E3C": {"releases": {"sid": {"status": "open"}}}
      },
      "openssh": {
        "CVE-2023-38408": {
          "description": "...",
          "releases": {
            "bookworm": {"status": "resolved", "fixed_version": "1:9.2p1-2+deb12u1", "urgency": "not yet assigned"}
          }
        }
      }
    }"#;

    #[test]
    fn advisory_debian_tracker_statuses() {
        let v = parse_debian_tracker(SAMPLE.as_bytes()).unwrap();
        assert_eq!(v.len(), 5);
        let find = |package: &str, cve: &str, release: &str| {
            v.iter()
                .find(|s| {
                    s.package.as_deref() == Some(package)
                        && s.cve.as_str() == cve
                        && s.source == Source::Debian { release: release.into() }
                })
                .unwrap_or_else(|| panic!("{package} {cve} {release}"))
        };
        let never = find("apache2", "CVE-2021-41773", "bullseye");
        assert_eq!(never.verdict("2.4.49-1"), Some(false));
        let sid = find("apache2", "CVE-2021-41773", "sid");
        assert_eq!(
            (sid.verdict("2.4.49-4"), sid.verdict("2.4.50-1"), sid.verdict("2.4.62-3")),
            (Some(true), Some(false), Some(false))
        );
        assert_eq!(find("apache2", "CVE-2024-99999", "bookworm").verdict("2.4.62-1~deb12u2"), Some(true));
        assert_eq!(find("apache2", "CVE-2024-99999", "trixie").verdict("2.4.63-1"), None);
        let ssh = find("openssh", "CVE-2023-38408", "bookworm");
        assert_eq!((ssh.verdict("1:9.2p1-2"), ssh.verdict("1:9.2p1-2+deb12u1")), (Some(true), Some(false)));
        assert_eq!(ssh.source.scheme(), Scheme::Dpkg);
    }

    #[test]
    fn advisory_debian_tracker_keeps_the_packages_of_detected_products() {
        let text = r#"{"libfoo": {"CVE-2021-1": {"releases": {"sid": {"status": 3}}}},
            "php8.2": {"CVE-2024-4577": {"releases": {"bookworm": {"status": "resolved", "fixed_version": "8.2.20-1~deb12u1"}}}},
            "apache2-doc": {"CVE-2021-2": {"releases": {"sid": {"status": "open"}}}}}"#;
        let v = parse_debian_tracker(text.as_bytes()).unwrap();
        let kept: Vec<(&str, &str)> = v.iter().map(|s| (s.package.as_deref().unwrap(), s.cve.as_str())).collect();
        assert_eq!(kept, [("php8.2", "CVE-2024-4577")], "other packages are skipped unread");
        assert_eq!(v[0].product(), Some(("php".into(), "php".into())));
        assert_eq!(v[0].verdict("8.2.7-1~deb12u1"), Some(true));
    }

    #[test]
    fn advisory_debian_tracker_refuses_bad_input() {
        for text in [
            r#"[]"#,
            r#"{"apache2": []}"#,
            r#"{"libfoo": []}"#,
            r#"{"title": "CISA Catalog of Known Exploited Vulnerabilities"}"#,
            r#"{"apache2": {"CVE-2021-41773": {"releases": {"sid": {"fixed_version": "1.0"}}}}}"#,
            r#"{"apache2": {"CVE-2021-41773": {"releases": {"sid": {"status": "resolved", "fixed_version": "bad version!"}}}}}"#,
            r#"{"apache2": {"CVE-2021-41773": {"releases": {"sid": {"status": 3}}}}}"#,
            r#"{"apache2": {}} trailing"#,
        ] {
            assert!(parse_debian_tracker(text.as_bytes()).is_err(), "{text}");
        }
        for cut in [1, SAMPLE.len() / 3, SAMPLE.len() - 2] {
            assert!(parse_debian_tracker(&SAMPLE.as_bytes()[..cut]).is_err(), "cut at {cut}");
        }
        // Past the cap the file is refused; below it, more than a vendor file's cap is read.
        let issues: Vec<String> = (0..=super::super::MAX_STATEMENTS)
            .map(|i| format!(r#""CVE-2021-{}": {{"releases": {{"sid": {{"status": "open"}}}}}}"#, 10_000 + i))
            .collect();
        let many = format!(r#"{{"openssl": {{{}}}}}"#, issues.join(","));
        assert_eq!(parse_debian_tracker(many.as_bytes()).unwrap().len(), super::super::MAX_STATEMENTS + 1);
        let err = parse_capped(many.as_bytes(), 100).unwrap_err();
        assert!(err.to_string().contains("more than 100 statements"), "{err}");
        let huge = format!(
            r#"{{"openssl": {{"CVE-2021-41773": {{"releases": {{"sid": {{"status": "resolved", "fixed_version": "{}"}}}}}}}}}}"#,
            "1".repeat(super::super::MAX_VERSION_BYTES + 1)
        );
        assert!(parse_debian_tracker(huge.as_bytes()).is_err());
    }
}
