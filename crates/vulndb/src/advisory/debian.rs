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
//! packages and issues, and refused as soon as it holds more than
//! [`MAX_STATEMENTS`](super::MAX_STATEMENTS) statements (one per CVE, package and
//! release), before the rest is read. The whole export holds far more than that, so it
//! has to be split (by package) before it is read.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};

use super::{Affected, MAX_STATEMENTS, Scheme, Source, Statement, name, version};
use crate::FeedError;
use crate::cwe::support::json_error;

const WHAT: &str = "Debian security tracker";

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
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Packages { out: &mut out }.deserialize(&mut de).map_err(|e| json_error(WHAT, e))?;
    de.end().map_err(|e| json_error(WHAT, e))?;
    Ok(out)
}

/// The top-level object: package name → issues.
struct Packages<'a> {
    out: &'a mut Vec<Statement>,
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
            map.next_value_seed(Issues { package: name(&package), out: &mut *self.out })?;
        }
        Ok(())
    }
}

/// One package's object: issue id → issue.
struct Issues<'a> {
    package: String,
    out: &'a mut Vec<Statement>,
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
                if self.out.len() >= MAX_STATEMENTS {
                    return Err(A::Error::custom(format!("the file holds more than {MAX_STATEMENTS} statements")));
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
    fn advisory_debian_tracker_refuses_bad_input() {
        for text in [
            r#"[]"#,
            r#"{"apache2": []}"#,
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
        let packages: Vec<String> = (0..=MAX_STATEMENTS)
            .map(|i| format!(r#""p{i}": {{"CVE-2021-41773": {{"releases": {{"sid": {{"status": "open"}}}}}}}}"#))
            .collect();
        let err = parse_debian_tracker(format!("{{{}}}", packages.join(",")).as_bytes()).unwrap_err();
        assert!(err.to_string().contains("more than 10000 statements"), "{err}");
        let huge = format!(
            r#"{{"p": {{"CVE-2021-41773": {{"releases": {{"sid": {{"status": "resolved", "fixed_version": "{}"}}}}}}}}}}"#,
            "1".repeat(super::super::MAX_VERSION_BYTES + 1)
        );
        assert!(parse_debian_tracker(huge.as_bytes()).is_err());
    }
}
