//! OSV records (the format of osv.dev): GitHub's reviewed advisories (`GHSA-…`, npm and
//! other ecosystems) and the Ubuntu Security Team's `USN-…` and `UBUNTU-CVE-…` records.
//! Each `affected[]` entry names a package in an ecosystem, `ranges[]` of `introduced` /
//! `fixed` / `last_affected` events, and explicit `versions`; a version is affected when
//! a range or the list holds it, and only then.
//!
//! The CVE a record is about: its `id` or `aliases` when they are CVE ids, and its
//! `upstream` ids (a USN's `upstream` lists `UBUNTU-CVE-…` ids, which name the CVE after
//! their prefix; a `UBUNTU-CVE-…` id names its own). `related` is not read: OSV defines
//! it as other, related vulnerabilities. A USN covers several CVEs, not all of them in
//! every release: when an entry carries `database_specific.cves_map`, its CVEs are the
//! ones listed there for that ecosystem (USN-6885-1 fixes CVE-2024-38474 in 22.04 and
//! 24.04 but not 20.04).
//!
//! One statement per CVE, package, ecosystem and purl `distro`: entries with the same
//! three are one statement (their sets are joined). Ranges of type `GIT` name commits
//! and are left out; `limit` events only bound those.

use std::collections::HashMap;

use serde::Deserialize;

use super::{
    Affected, MAX_STATEMENTS, Scheme, Source, Statement, cve_in, json, known_cpe, lower_bound, name, too_many, version,
};
use crate::FeedError;
use crate::cwe::support::excerpt;

const WHAT: &str = "OSV record";

#[derive(Deserialize)]
struct Raw {
    id: String,
    #[serde(default)]
    aliases: Option<Vec<String>>,
    #[serde(default)]
    upstream: Option<Vec<String>>,
    #[serde(default)]
    withdrawn: Option<String>,
    #[serde(default)]
    affected: Option<Vec<RawAffected>>,
}

#[derive(Deserialize)]
struct RawAffected {
    #[serde(default)]
    package: Option<RawPackage>,
    #[serde(default)]
    ranges: Option<Vec<RawRange>>,
    #[serde(default)]
    versions: Option<Vec<String>>,
    /// Free-form: only `cves_map` is read, and only when it has the shape Ubuntu gives it.
    #[serde(default)]
    database_specific: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawPackage {
    ecosystem: String,
    name: String,
    #[serde(default)]
    purl: Option<String>,
}

#[derive(Deserialize)]
struct RawRange {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    events: Vec<RawEvent>,
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(default)]
    introduced: Option<String>,
    #[serde(default)]
    fixed: Option<String>,
    #[serde(default)]
    last_affected: Option<String>,
}

/// The CVE ids Ubuntu's `database_specific.cves_map.cves[].id` lists for an entry, or
/// `None` when the entry has no such map.
fn cves_map(value: Option<&serde_json::Value>) -> Option<Vec<model::CveId>> {
    let cves = value?.get("cves_map")?.get("cves")?.as_array()?;
    Some(cves.iter().filter_map(|c| c.get("id")?.as_str()).filter_map(cve_in).collect())
}

/// The `distro` qualifier of a purl (`pkg:deb/ubuntu/openssh@1:8.2p1?arch=source&distro=focal`).
/// Ubuntu's older records write `?arch=src?distro=focal` (two `?`), which is read too.
fn purl_distro(purl: &str) -> Option<String> {
    let (_, qualifiers) = purl.split_once('?')?;
    qualifiers
        .split(['&', '?'])
        .find_map(|q| q.strip_prefix("distro="))
        .map(|d| name(d.split('#').next().unwrap_or(d)))
        .filter(|d| !d.is_empty())
}

/// Reads one OSV record. A withdrawn record states nothing.
pub fn parse_osv(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    let raw: Raw = json(WHAT, bytes)?;
    if raw.withdrawn.is_some() {
        return Ok(Vec::new());
    }
    let mut record_cves = Vec::new();
    let ids = std::iter::once(&raw.id).chain(raw.aliases.iter().flatten()).chain(raw.upstream.iter().flatten());
    for cve in ids.filter_map(|id| cve_in(id)) {
        if !record_cves.contains(&cve) {
            record_cves.push(cve);
        }
    }
    let mut statements: Vec<Statement> = Vec::new();
    let mut index: HashMap<(model::CveId, String, String, Option<String>), usize> = HashMap::new();
    for (ai, entry) in raw.affected.unwrap_or_default().into_iter().enumerate() {
        let position = format!("affected {ai}");
        let Some(package) = entry.package else { continue };
        let ecosystem = name(&package.ecosystem);
        let distro = package.purl.as_deref().and_then(purl_distro);
        let source = Source::Osv { ecosystem: ecosystem.clone(), distro: distro.clone() };
        let scheme = source.scheme();
        let mut sets = Vec::new();
        for (ri, range) in entry.ranges.into_iter().flatten().enumerate() {
            if range.kind.trim().eq_ignore_ascii_case("GIT") {
                continue;
            }
            sets.extend(range_sets(&format!("{position}, ranges {ri}"), scheme, range.events)?);
        }
        for (vi, v) in entry.versions.into_iter().flatten().enumerate() {
            sets.push(Affected::Exact(version(WHAT, &format!("{position}, versions {vi}"), scheme, &v)?));
        }
        let cves = cves_map(entry.database_specific.as_ref()).unwrap_or_else(|| record_cves.clone());
        let package_name = name(&package.name);
        for cve in cves {
            let key = (cve, ecosystem.clone(), package_name.clone(), distro.clone());
            if let Some(&at) = index.get(&key) {
                statements[at].affected.extend(sets.iter().cloned());
                continue;
            }
            if statements.len() >= MAX_STATEMENTS {
                return Err(too_many(WHAT, &position));
            }
            index.insert(key.clone(), statements.len());
            statements.push(Statement {
                cve: key.0,
                source: source.clone(),
                cpe_product: known_cpe(&ecosystem, &package_name),
                package: Some(package_name.clone()),
                platform: None,
                affected: sets.clone(),
                unaffected: Vec::new(),
                unknown: Vec::new(),
                otherwise: Some(false),
            });
        }
    }
    Ok(statements)
}

/// The ranges of one `events` list: each `introduced` opens a range (`0`: from the first
/// version), the next `fixed` or `last_affected` closes it, and a range still open at the
/// end has no upper bound.
fn range_sets(position: &str, scheme: Scheme, events: Vec<RawEvent>) -> Result<Vec<Affected>, FeedError> {
    let mut out = Vec::new();
    let mut open: Option<Option<String>> = None;
    for (ei, event) in events.into_iter().enumerate() {
        let position = format!("{position}, events {ei}");
        match (event.introduced, event.fixed, event.last_affected) {
            (Some(introduced), None, None) => {
                // A second `introduced` inside an open range changes nothing.
                if open.is_none() {
                    open = Some(lower_bound(WHAT, &position, scheme, &introduced)?);
                }
            }
            (None, Some(fixed), None) => out.push(close(&position, scheme, &mut open, fixed, false)?),
            (None, None, Some(last)) => out.push(close(&position, scheme, &mut open, last, true)?),
            // `limit` (or an event this reader does not know) bounds nothing it reads.
            (None, None, None) => {}
            _ => {
                return Err(FeedError::format(
                    WHAT,
                    position,
                    "an event holds more than one of introduced, fixed, last_affected",
                ));
            }
        }
    }
    if let Some(introduced) = open {
        out.push(Affected::Range { introduced, fixed: None, last_affected: None });
    }
    Ok(out)
}

/// Closes the open range at `end` (exclusive for `fixed`, inclusive for `last_affected`).
fn close(
    position: &str,
    scheme: Scheme,
    open: &mut Option<Option<String>>,
    end: String,
    inclusive: bool,
) -> Result<Affected, FeedError> {
    let Some(introduced) = open.take() else {
        return Err(FeedError::format(WHAT, position, format!("{} comes before any introduced event", excerpt(&end))));
    };
    let end = version(WHAT, position, scheme, &end)?;
    let (fixed, last_affected) = if inclusive { (None, Some(end)) } else { (Some(end), None) };
    Ok(Affected::Range { introduced, fixed, last_affected })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advisory_osv_ghsa() {
        let v = parse_osv(
            br#"{"id":"GHSA-xxxx-yyyy-zzzz","aliases":["CVE-2020-11022"],"related":["CVE-2020-11023"],
            "affected":[
              {"package":{"ecosystem":"npm","name":"jquery"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"1.2.0"},{"fixed":"3.5.0"}]},
                         {"type":"GIT","repo":"x","events":[{"introduced":"abc"},{"limit":"def"}]}]},
              {"package":{"ecosystem":"RubyGems","name":"jquery-rails"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"last_affected":"4.3.9"},
                                                        {"introduced":"5.0"}]}],
               "versions":["4.4.0-beta"]}]}"#,
        )
        .unwrap();
        assert_eq!(v.len(), 2, "related CVEs are not this record's");
        let npm = &v[0];
        assert_eq!(npm.cve.as_str(), "CVE-2020-11022");
        assert_eq!(npm.source, Source::Osv { ecosystem: "npm".into(), distro: None });
        assert_eq!(
            (npm.cpe_product.clone(), npm.package.as_deref()),
            (Some(("jquery".into(), "jquery".into())), Some("jquery"))
        );
        assert_eq!(npm.affected.len(), 1, "the GIT range is left out");
        assert_eq!(
            (npm.verdict("1.1.9"), npm.verdict("1.2.0"), npm.verdict("3.4.1"), npm.verdict("3.5.0")),
            (Some(false), Some(true), Some(true), Some(false))
        );
        let gem = &v[1];
        assert_eq!(gem.cpe_product, None);
        assert_eq!(
            (gem.verdict("4.3.9"), gem.verdict("4.4.0"), gem.verdict("4.4.0-beta"), gem.verdict("6.1")),
            (Some(true), Some(false), Some(true), Some(true))
        );
    }

    #[test]
    fn advisory_osv_ubuntu_cves_map_and_channels() {
        let v = parse_osv(
            br#"{"id":"USN-1-1","aliases":[],"upstream":["UBUNTU-CVE-2024-0001","UBUNTU-CVE-2024-0002"],
            "affected":[
              {"package":{"ecosystem":"Ubuntu:20.04:LTS","name":"apache2","purl":"pkg:deb/ubuntu/apache2@2.4.41-4ubuntu3.19?arch=source&distro=focal"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"2.4.41-4ubuntu3.19"}]}],
               "versions":["2.4.41-4ubuntu3.17"],
               "database_specific":{"cves_map":{"ecosystem":"Ubuntu:20.04:LTS","cves":[{"id":"CVE-2024-0001"}]}}},
              {"package":{"ecosystem":"Ubuntu:Pro:FIPS:16.04:LTS","name":"openssh","purl":"pkg:deb/ubuntu/openssh?arch=src?distro=fips/xenial"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"}]}]},
              {"package":{"ecosystem":"Ubuntu:Pro:FIPS:16.04:LTS","name":"openssh","purl":"pkg:deb/ubuntu/openssh@1:7.2p2-4ubuntu2.fips.2.10.4?arch=source&distro=fips-updates/xenial"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"1:7.2p2-4ubuntu2.fips.2.10.4"}]}]}]}"#,
        )
        .unwrap();
        let ids: Vec<_> =
            v.iter().map(|s| (s.cve.as_str(), s.source.to_string(), s.package.as_deref().unwrap_or(""))).collect();
        assert_eq!(
            ids,
            [
                ("CVE-2024-0001", "osv Ubuntu:20.04:LTS".to_owned(), "apache2"),
                ("CVE-2024-0001", "osv Ubuntu:Pro:FIPS:16.04:LTS".to_owned(), "openssh"),
                ("CVE-2024-0002", "osv Ubuntu:Pro:FIPS:16.04:LTS".to_owned(), "openssh"),
                ("CVE-2024-0001", "osv Ubuntu:Pro:FIPS:16.04:LTS".to_owned(), "openssh"),
                ("CVE-2024-0002", "osv Ubuntu:Pro:FIPS:16.04:LTS".to_owned(), "openssh"),
            ]
        );
        let apache = &v[0];
        assert_eq!(apache.source, Source::Osv { ecosystem: "Ubuntu:20.04:LTS".into(), distro: Some("focal".into()) });
        assert_eq!(apache.verdict("2.4.41-4ubuntu3.14"), Some(true));
        assert_eq!(apache.verdict("2.4.41-4ubuntu3.19"), Some(false));
        assert_eq!(apache.verdict("2.4.41-4ubuntu3.20"), Some(false));
        assert_eq!(v[1].verdict("1:7.2p2-4ubuntu2.fips.2.10.4"), Some(true), "fips/xenial is unfixed");
        assert_eq!(v[3].verdict("1:7.2p2-4ubuntu2.fips.2.10.4"), Some(false), "fips-updates/xenial is fixed");
        assert_eq!(
            v[3].source,
            Source::Osv { ecosystem: "Ubuntu:Pro:FIPS:16.04:LTS".into(), distro: Some("fips-updates/xenial".into()) }
        );
    }

    #[test]
    fn advisory_osv_refuses_bad_records() {
        for text in [
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"Ubuntu:20.04:LTS","name":"x"},"versions":["not a dpkg version!"]}]}"#,
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"npm","name":"x"},"ranges":[{"type":"SEMVER","events":[{"fixed":"1.0"}]}]}]}"#,
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"npm","name":"x"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0","fixed":"1.0"}]}]}]}"#,
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"npm","name":"x"},"versions":[""]}]}"#,
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"npm"}}]}"#,
            r#"{"id":"CVE-2024-0001","affected":{"package":1}}"#,
            r#"{"id":7,"affected":[]}"#,
            r#"{"id":"CVE-2024-0001","affected":[{"package":{"ecosystem":"npm","name":"x"},"versions":["1.0"]}]"#,
        ] {
            assert!(parse_osv(text.as_bytes()).is_err(), "{text}");
        }
        let huge = format!(
            r#"{{"id":"CVE-2024-0001","affected":[{{"package":{{"ecosystem":"npm","name":"x"}},"versions":["{}"]}}]}}"#,
            "1".repeat(super::super::MAX_VERSION_BYTES + 1)
        );
        assert!(parse_osv(huge.as_bytes()).is_err());
        let entries: Vec<String> = (0..=MAX_STATEMENTS)
            .map(|i| format!(r#"{{"package":{{"ecosystem":"npm","name":"p{i}"}},"versions":["1.0"]}}"#))
            .collect();
        let many = format!(r#"{{"id":"CVE-2024-0001","affected":[{}]}}"#, entries.join(","));
        let err = parse_osv(many.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("more than 10000 statements"), "{err}");
        let withdrawn = r#"{"id":"CVE-2024-0001","withdrawn":"2024-01-01T00:00:00Z","affected":[{"package":{"ecosystem":"npm","name":"x"},"versions":["1.0"]}]}"#;
        assert!(parse_osv(withdrawn.as_bytes()).unwrap().is_empty());
        let no_cve = r#"{"id":"GHSA-1","affected":[{"package":{"ecosystem":"npm","name":"x"},"versions":["1.0"]}]}"#;
        assert!(parse_osv(no_cve.as_bytes()).unwrap().is_empty());
    }
}
