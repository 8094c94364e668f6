//! CVE JSON 5 records (`dataType` `CVE_RECORD`), as the OpenSSL project and, for its
//! recent CVEs, the httpd project publish them: the CNA container's `affected[]` entries
//! name a vendor and product, a `defaultStatus` and `versions[]` entries (a `version`
//! with a `status`, optionally a range up to `lessThan` or `lessThanOrEqual`, optionally
//! `changes` of status inside the range).
//!
//! Only the CNA container is read: it is the publisher's own statement (the ADP
//! containers are third parties' additions). A `version` of `0` or a placeholder
//! (`unspecified`, `n/a`, `*`) as the start of a range means from the first version, and
//! `lessThan` `*` means no upper bound; a single placeholder version states a status for
//! versions nobody named, so it becomes an unknown [`Affected::All`]. Entries with
//! `versionType` `git` name commits, not releases, and are left out.

use serde::Deserialize;

use super::{
    Affected, Scheme, Source, Statement, Statements, cve_id, is_placeholder, json, known_cpe, lower_bound, name,
    version,
};
use crate::FeedError;
use crate::cwe::support::excerpt;

const WHAT: &str = "CVE record";

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "cveMetadata")]
    meta: Meta,
    #[serde(default)]
    containers: Option<Containers>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "cveId")]
    cve_id: String,
    #[serde(default)]
    state: Option<String>,
}

#[derive(Deserialize)]
struct Containers {
    #[serde(default)]
    cna: Option<Cna>,
}

#[derive(Deserialize)]
struct Cna {
    #[serde(default)]
    affected: Vec<RawAffected>,
}

#[derive(Deserialize)]
struct RawAffected {
    #[serde(default)]
    vendor: Option<String>,
    #[serde(default)]
    product: Option<String>,
    #[serde(default, rename = "packageName")]
    package_name: Option<String>,
    #[serde(default, rename = "collectionURL")]
    collection_url: Option<String>,
    #[serde(default, rename = "defaultStatus")]
    default_status: Option<String>,
    #[serde(default)]
    versions: Vec<RawVersion>,
    #[serde(default)]
    platforms: Vec<String>,
    #[serde(default)]
    cpes: Vec<String>,
}

#[derive(Deserialize)]
struct RawVersion {
    version: String,
    status: String,
    #[serde(default, rename = "versionType")]
    version_type: Option<String>,
    #[serde(default, rename = "lessThan")]
    less_than: Option<String>,
    #[serde(default, rename = "lessThanOrEqual")]
    less_than_or_equal: Option<String>,
    #[serde(default)]
    changes: Vec<RawChange>,
}

#[derive(Deserialize)]
struct RawChange {
    at: String,
    status: String,
}

/// A CVE 5 status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Affected,
    Unaffected,
    Unknown,
}

fn status(position: &str, raw: &str) -> Result<Status, FeedError> {
    match raw.trim() {
        "affected" => Ok(Status::Affected),
        "unaffected" => Ok(Status::Unaffected),
        "unknown" => Ok(Status::Unknown),
        other => Err(FeedError::format(WHAT, position, format!("status {} is not a CVE 5 status", excerpt(other)))),
    }
}

/// Reads one CVE JSON 5 record: one statement per CNA `affected[]` entry that states
/// something (versions, or a `defaultStatus` other than `unknown`). A record in state
/// `REJECTED` states nothing.
pub fn parse_cve5(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    let raw: Raw = json(WHAT, bytes)?;
    let cve = cve_id(WHAT, "cveMetadata.cveId", &raw.meta.cve_id)?;
    if raw.meta.state.as_deref().is_some_and(|s| s.trim().eq_ignore_ascii_case("REJECTED")) {
        return Ok(Vec::new());
    }
    let entries = raw.containers.and_then(|c| c.cna).map(|c| c.affected).unwrap_or_default();
    let mut out = Statements::new(WHAT);
    for (ai, entry) in entries.into_iter().enumerate() {
        let position = format!("containers.cna.affected {ai}");
        let otherwise = match entry.default_status.as_deref().map(|s| status(&position, s)).transpose()? {
            Some(Status::Affected) => Some(true),
            Some(Status::Unaffected) => Some(false),
            Some(Status::Unknown) | None => None,
        };
        let mut lists = [Vec::new(), Vec::new(), Vec::new()];
        for (vi, v) in entry.versions.into_iter().enumerate() {
            let position = format!("{position}, versions {vi}");
            if v.version_type.as_deref().is_some_and(|t| t.trim().eq_ignore_ascii_case("git")) {
                continue;
            }
            for (status, set) in sets(&position, v)? {
                lists[status as usize].push(set);
            }
        }
        let [affected, unaffected, unknown] = lists;
        if affected.is_empty() && unaffected.is_empty() && unknown.is_empty() && otherwise.is_none() {
            continue;
        }
        let vendor = name(entry.vendor.as_deref().or(entry.collection_url.as_deref()).unwrap_or_default());
        let product = name(entry.product.as_deref().or(entry.package_name.as_deref()).unwrap_or_default());
        let cpe_product = known_cpe(&vendor, &product).or_else(|| {
            entry
                .cpes
                .iter()
                .find_map(|c| model::Cpe::parse(c).ok())
                .map(|c| (c.vendor().to_owned(), c.product().to_owned()))
        });
        let source = match cpe_product.as_ref().map(|(v, p)| (v.as_str(), p.as_str())) {
            Some(("apache", "http_server")) => Source::Httpd,
            Some(("openssl", "openssl")) => Source::Openssl,
            _ => Source::Cna { vendor, product },
        };
        let platforms: Vec<String> = entry.platforms.iter().map(|p| name(p)).filter(|p| !p.is_empty()).collect();
        out.push(
            &position,
            Statement {
                cve: cve.clone(),
                source,
                cpe_product,
                package: None,
                platform: (!platforms.is_empty()).then(|| platforms.join(", ")),
                affected,
                unaffected,
                unknown,
                otherwise,
            },
        )?;
    }
    Ok(out.finish())
}

/// The sets one `versions[]` entry states, with their status: one for a single version or
/// a plain range, one per segment for a range with `changes`.
fn sets(position: &str, v: RawVersion) -> Result<Vec<(Status, Affected)>, FeedError> {
    let first = status(position, &v.status)?;
    let scheme = Scheme::Upstream;
    let upper = match (&v.less_than, &v.less_than_or_equal) {
        (None, None) => None,
        (lt, le) => {
            let bound = |b: &Option<String>| {
                b.as_deref().filter(|b| b.trim() != "*").map(|b| version(WHAT, position, scheme, b)).transpose()
            };
            Some((bound(lt)?, bound(le)?))
        }
    };
    let Some((fixed, last_affected)) = upper else {
        if v.version.len() <= super::MAX_VERSION_BYTES && is_placeholder(&v.version) {
            let set = if v.version.trim() == "*" { (first, Affected::All) } else { (Status::Unknown, Affected::All) };
            return Ok(vec![set]);
        }
        return Ok(vec![(first, Affected::Exact(version(WHAT, position, scheme, &v.version)?))]);
    };
    let introduced = lower_bound(WHAT, position, scheme, &v.version)?;
    if v.changes.is_empty() {
        return Ok(vec![(first, Affected::Range { introduced, fixed, last_affected })]);
    }
    // Segments: [version, at₁) in `status`, [atᵢ, atᵢ₊₁) in changeᵢ's status, the last
    // one up to the range's own end.
    let mut changes = v
        .changes
        .iter()
        .map(|c| Ok((version(WHAT, position, scheme, &c.at)?, status(position, &c.status)?)))
        .collect::<Result<Vec<_>, FeedError>>()?;
    changes.sort_by_key(|(at, _)| model::version::Version::parse(at));
    let mut out = Vec::with_capacity(changes.len() + 1);
    let mut start = (introduced, first);
    for (at, next) in changes {
        out.push((start.1, Affected::Range { introduced: start.0, fixed: Some(at.clone()), last_affected: None }));
        start = (Some(at), next);
    }
    out.push((start.1, Affected::Range { introduced: start.0, fixed, last_affected }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(affected: &str) -> String {
        format!(
            r#"{{"dataType":"CVE_RECORD","dataVersion":"5.1",
            "cveMetadata":{{"cveId":"CVE-2014-0076","state":"PUBLISHED"}},
            "containers":{{"cna":{{"affected":[{affected}]}}}}}}"#
        )
    }

    #[test]
    fn advisory_cve5_ranges_and_default_status() {
        let v = parse_cve5(
            record(
                r#"{"vendor":"OpenSSL","product":"OpenSSL","defaultStatus":"unaffected","versions":[
                {"version":"1.0.1","lessThan":"1.0.1g","status":"affected","versionType":"custom"},
                {"version":"0","lessThanOrEqual":"0.9.8y","status":"affected"},
                {"version":"0.9.8m","status":"unaffected"},
                {"version":"abc123","lessThan":"def456","status":"affected","versionType":"git"}]}"#,
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(v.len(), 1);
        let s = &v[0];
        assert_eq!(
            (s.source.clone(), s.cpe_product.clone()),
            (Source::Openssl, Some(("openssl".into(), "openssl".into())))
        );
        assert_eq!(s.affected.len(), 2, "the git range is left out");
        assert_eq!(s.verdict("1.0.1f"), Some(true));
        assert_eq!(s.verdict("1.0.1g"), Some(false));
        assert_eq!(s.verdict("0.9.8a"), Some(true));
        assert_eq!(s.verdict("0.9.8m"), Some(false));
        assert_eq!(s.verdict("1.1.1"), Some(false));
    }

    #[test]
    fn advisory_cve5_changes_platforms_and_unknown_default() {
        let v = parse_cve5(
            record(
                r#"{"vendor":"Example","product":"Widget","platforms":["Windows","macOS"],
                "cpes":["cpe:2.3:a:example:widget:*:*:*:*:*:*:*:*"],"versions":[
                {"version":"2.0","lessThan":"*","status":"affected",
                 "changes":[{"at":"2.5","status":"unaffected"},{"at":"2.2","status":"unknown"}]},
                {"version":"unspecified","status":"affected"}]}"#,
            )
            .as_bytes(),
        )
        .unwrap();
        let s = &v[0];
        assert_eq!(s.source, Source::Cna { vendor: "Example".into(), product: "Widget".into() });
        assert_eq!(s.cpe_product, Some(("example".into(), "widget".into())));
        assert_eq!(s.platform.as_deref(), Some("Windows, macOS"));
        assert_eq!(s.verdict("1.9"), None, "defaultStatus absent is unknown");
        assert_eq!(s.verdict("2.1"), Some(true));
        assert_eq!(s.verdict("2.3"), None);
        assert_eq!(s.verdict("2.5"), Some(false));
        assert_eq!(s.verdict("9.0"), Some(false));

        let v = parse_cve5(record(r#"{"vendor":"V","product":"P","defaultStatus":"affected"}"#).as_bytes()).unwrap();
        assert_eq!(v[0].verdict("1.0"), Some(true));
        let v = parse_cve5(record(r#"{"vendor":"V","product":"P","defaultStatus":"unknown"}"#).as_bytes()).unwrap();
        assert!(v.is_empty(), "an entry that states nothing is left out");
    }

    #[test]
    fn advisory_cve5_refuses_bad_records() {
        for affected in [
            r#"{"vendor":"V","product":"P","versions":[{"version":"1","status":"vulnerable"}]}"#,
            r#"{"vendor":"V","product":"P","defaultStatus":"maybe"}"#,
            r#"{"vendor":"V","product":"P","versions":[{"version":"1"}]}"#,
            r#"{"vendor":"V","product":"P","versions":[{"version":1,"status":"affected"}]}"#,
            r#"{"vendor":"V","product":"P","versions":"1.0"}"#,
            r#"{"vendor":"V","product":"P","versions":[{"version":"1","lessThan":"","status":"affected"}]}"#,
        ] {
            assert!(parse_cve5(record(affected).as_bytes()).is_err(), "{affected}");
        }
        let huge = format!(
            r#"{{"vendor":"V","product":"P","versions":[{{"version":"{}","status":"affected"}}]}}"#,
            "9".repeat(super::super::MAX_VERSION_BYTES + 1)
        );
        assert!(parse_cve5(record(&huge).as_bytes()).is_err());
        let rejected =
            record(r#"{"vendor":"V","product":"P","defaultStatus":"affected"}"#).replace("PUBLISHED", "REJECTED");
        assert!(parse_cve5(rejected.as_bytes()).unwrap().is_empty());
        let many = vec![r#"{"vendor":"V","product":"P","defaultStatus":"affected"}"#; super::super::MAX_STATEMENTS + 1];
        assert!(parse_cve5(record(&many.join(",")).as_bytes()).is_err());
    }
}
