//! Apache httpd's per-CVE JSON files (`CVE-*.json`, one per CVE).
//! Most files are CVE JSON 4.0 (`data_format` `MITRE`), whose
//! `affects.vendor.vendor_data[].product.product_data[].version.version_data[]` entries
//! pair an operator (`version_affected`) with a version (`version_value`); the recent
//! ones are CVE JSON 5 and are read by [`parse_cve5`](super::parse_cve5).
//!
//! The operators: `=` (or none) affected in that version; `<`, `<=`, `>=` affected below,
//! up to, from that version; a `!` prefix (`!<`, `!=`, `!`) states not affected, a `?`
//! prefix (`?=`, `?<`, `?`) states the status is unknown. The httpd files use `=`, `?=`,
//! `<=`, `!<` and `>=`. Entries of one product and platform with lower and upper bounds
//! are one range (CVE-2021-44224 writes `>= 2.4.7` and `<= 2.4.51`, meaning from 2.4.7
//! up to 2.4.51, not "either"): each upper bound takes the highest lower bound not above
//! it. `>` (an exclusive lower bound) has no place in [`Affected`] and is refused; no
//! httpd file uses it.
//!
//! The httpd project lists every affected version of its product, so a version of the
//! Apache HTTP Server in no entry is not affected ([`Statement::otherwise`] is
//! `Some(false)`); other products in CVE JSON 4 records are read with `None` there.

use std::collections::HashMap;

use serde::Deserialize;

use super::{
    Affected, MAX_STATEMENTS, Scheme, Source, Statement, Statements, cve_id, json, known_cpe, name, too_many, version,
};
use crate::FeedError;
use crate::cwe::support::excerpt;

const WHAT: &str = "httpd advisory";

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "CVE_data_meta")]
    meta: Meta,
    #[serde(default)]
    affects: Option<Affects>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "ID")]
    id: String,
    #[serde(rename = "STATE", default)]
    state: Option<String>,
}

#[derive(Deserialize)]
struct Affects {
    vendor: VendorList,
}

#[derive(Deserialize)]
struct VendorList {
    #[serde(default)]
    vendor_data: Vec<Vendor>,
}

#[derive(Deserialize)]
struct Vendor {
    #[serde(default)]
    vendor_name: String,
    product: ProductList,
}

#[derive(Deserialize)]
struct ProductList {
    #[serde(default)]
    product_data: Vec<Product>,
}

#[derive(Deserialize)]
struct Product {
    #[serde(default)]
    product_name: String,
    version: VersionList,
}

#[derive(Deserialize)]
struct VersionList {
    #[serde(default)]
    version_data: Vec<VersionEntry>,
}

#[derive(Deserialize)]
struct VersionEntry {
    #[serde(default)]
    version_affected: Option<String>,
    version_value: String,
    /// The release line the entry is about (`Apache HTTP Server 2.4`), when it names one.
    #[serde(default)]
    version_name: Option<String>,
    #[serde(default)]
    platform: Option<String>,
}

/// The release line a `version_name` names (`Apache HTTP Server 2.4` → `2.4`): its last
/// word, when that is `major.minor`.
fn branch(version_name: Option<&str>) -> Option<String> {
    let last = version_name?.split_whitespace().last()?;
    let mut parts = last.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let numeric = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (parts.next().is_none() && numeric(major) && numeric(minor)).then(|| last.to_owned())
}

/// What an operator states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polarity {
    Affected,
    Unaffected,
    Unknown,
}

/// The version bounds of one polarity, one product and one platform.
#[derive(Default)]
struct Bounds {
    exact: Vec<String>,
    lower: Vec<String>,
    /// The bound, whether it is inclusive (`<=`), and the release line its entry names.
    upper: Vec<(String, bool, Option<String>)>,
}

impl Bounds {
    fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.lower.is_empty() && self.upper.is_empty()
    }

    /// The sets: exact versions, then each upper bound with the highest unused lower bound
    /// not above it — or, with none, from the start of the release line its entry names
    /// (httpd writes `<= 2.4.48` under `Apache HTTP Server 2.4` for the 2.4 line, whose
    /// page it is on: 2.2 releases are not in it) — then the lower bounds left,
    /// open-ended.
    fn into_sets(self) -> Vec<Affected> {
        use model::version::Version;
        let mut out: Vec<Affected> = self.exact.into_iter().map(Affected::Exact).collect();
        let mut lower = self.lower;
        lower.sort_by_key(|v| Version::parse(v));
        let mut used = vec![false; lower.len()];
        let mut upper = self.upper;
        upper.sort_by_key(|(v, ..)| Version::parse(v));
        for (bound, inclusive, line) in upper {
            let top = Version::parse(&bound);
            let pick = (0..lower.len()).rev().find(|&i| !used[i] && Version::parse(&lower[i]) <= top);
            let introduced = match pick {
                Some(i) => {
                    used[i] = true;
                    Some(lower[i].clone())
                }
                None => line.filter(|l| bound.starts_with(&format!("{l}."))),
            };
            let (fixed, last_affected) = if inclusive { (None, Some(bound)) } else { (Some(bound), None) };
            out.push(Affected::Range { introduced, fixed, last_affected });
        }
        for (l, used) in lower.into_iter().zip(used) {
            if !used {
                out.push(Affected::Range { introduced: Some(l), fixed: None, last_affected: None });
            }
        }
        out
    }
}

/// One product and platform of the record, with its entries by polarity.
struct Group {
    vendor: String,
    product: String,
    platform: Option<String>,
    affected: Bounds,
    unaffected: Bounds,
    unknown: Bounds,
}

/// Reads one httpd advisory file: CVE JSON 4.0, or CVE JSON 5 (read by
/// [`parse_cve5`](super::parse_cve5)). A record in state `REJECT` or `RESERVED` states
/// nothing; a product with no version entries is left out.
pub fn parse_httpd(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    #[derive(Deserialize)]
    struct Sniff {
        #[serde(rename = "cveMetadata")]
        cve_metadata: Option<serde::de::IgnoredAny>,
    }
    if json::<Sniff>(WHAT, bytes)?.cve_metadata.is_some() {
        return super::parse_cve5(bytes);
    }
    let raw: Raw = json(WHAT, bytes)?;
    let cve = cve_id(WHAT, "CVE_data_meta.ID", &raw.meta.id)?;
    let state = raw.meta.state.as_deref().unwrap_or_default().trim().to_ascii_uppercase();
    if state == "REJECT" || state == "RESERVED" {
        return Ok(Vec::new());
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(String, String, Option<String>), usize> = HashMap::new();
    let vendors = raw.affects.map(|a| a.vendor.vendor_data).unwrap_or_default();
    for (vi, vendor) in vendors.into_iter().enumerate() {
        for (pi, product) in vendor.product.product_data.into_iter().enumerate() {
            for (ei, entry) in product.version.version_data.into_iter().enumerate() {
                let position = format!("vendor_data {vi}, product_data {pi}, version_data {ei}");
                let platform = entry.platform.as_deref().map(name).filter(|p| !p.is_empty());
                let (vendor_name, product_name) = (name(&vendor.vendor_name), name(&product.product_name));
                let key = (vendor_name, product_name, platform);
                let at = match index.get(&key) {
                    Some(&at) => at,
                    None => {
                        if groups.len() >= MAX_STATEMENTS {
                            return Err(too_many(WHAT, &position));
                        }
                        let (vendor, product, platform) = key.clone();
                        groups.push(Group {
                            vendor,
                            product,
                            platform,
                            affected: Bounds::default(),
                            unaffected: Bounds::default(),
                            unknown: Bounds::default(),
                        });
                        index.insert(key, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                let op = entry.version_affected.as_deref().unwrap_or("=").trim();
                let (polarity, op) = match op.as_bytes().first() {
                    Some(b'!') => (Polarity::Unaffected, &op[1..]),
                    Some(b'?') => (Polarity::Unknown, &op[1..]),
                    _ => (Polarity::Affected, op),
                };
                let value = version(WHAT, &position, Scheme::Upstream, &entry.version_value)?;
                let group = &mut groups[at];
                let bounds = match polarity {
                    Polarity::Affected => &mut group.affected,
                    Polarity::Unaffected => &mut group.unaffected,
                    Polarity::Unknown => &mut group.unknown,
                };
                match op {
                    "" | "=" => bounds.exact.push(value),
                    "<" => bounds.upper.push((value, false, branch(entry.version_name.as_deref()))),
                    "<=" => bounds.upper.push((value, true, branch(entry.version_name.as_deref()))),
                    ">=" => bounds.lower.push(value),
                    other => {
                        return Err(FeedError::format(
                            WHAT,
                            position,
                            format!("version_affected {} is not an operator this reader knows", excerpt(other)),
                        ));
                    }
                }
            }
        }
    }
    let mut out = Statements::new(WHAT);
    for group in groups {
        if group.affected.is_empty() && group.unaffected.is_empty() && group.unknown.is_empty() {
            continue;
        }
        let cpe_product = known_cpe(&group.vendor, &group.product);
        let httpd = cpe_product.as_ref().is_some_and(|(v, p)| v == "apache" && p == "http_server");
        let source = if httpd { Source::Httpd } else { Source::Cna { vendor: group.vendor, product: group.product } };
        out.push(
            "affects",
            Statement {
                cve: cve.clone(),
                source,
                cpe_product,
                package: None,
                platform: group.platform,
                affected: group.affected.into_sets(),
                unaffected: group.unaffected.into_sets(),
                unknown: group.unknown.into_sets(),
                otherwise: httpd.then_some(false),
            },
        )?;
    }
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(entries: &str) -> String {
        format!(
            r#"{{"data_type":"CVE","data_format":"MITRE","data_version":"4.0",
            "CVE_data_meta":{{"ID":"CVE-2021-33193","STATE":"PUBLIC"}},
            "affects":{{"vendor":{{"vendor_data":[{{"vendor_name":"Apache Software Foundation",
            "product":{{"product_data":[{{"product_name":"Apache HTTP Server",
            "version":{{"version_data":[{entries}]}}}}]}}}}]}}}}}}"#
        )
    }

    fn one(entries: &str) -> Statement {
        let mut v = parse_httpd(record(entries).as_bytes()).unwrap();
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn advisory_httpd_operators() {
        let s = one(r#"{"version_name":"2.4","version_affected":"<=","version_value":"2.4.48"},
               {"version_name":"2.4","version_affected":"!<","version_value":"2.4.17"}"#);
        assert_eq!(s.source, Source::Httpd);
        assert_eq!(s.cpe_product, Some(("apache".into(), "http_server".into())));
        assert_eq!(s.verdict("2.4.16"), Some(false));
        assert_eq!(s.verdict("2.4.17"), Some(true));
        assert_eq!(s.verdict("2.4.48"), Some(true));
        assert_eq!(s.verdict("2.4.49"), Some(false));

        // An upper bound alone, under a release line: from the start of that line.
        let s = one(r#"{"version_name":"Apache HTTP Server 2.4","version_affected":"<=","version_value":"2.4.48"}"#);
        assert_eq!((s.verdict("2.4.0"), s.verdict("2.4.48")), (Some(true), Some(true)));
        assert_eq!((s.verdict("2.2.34"), s.verdict("2.4.49")), (Some(false), Some(false)));
        // Without a line it is read as written.
        let s = one(r#"{"version_name":"Apache HTTP Server","version_affected":"<=","version_value":"2.4.48"}"#);
        assert_eq!(s.verdict("2.2.34"), Some(true));
        assert_eq!(branch(Some("Apache HTTP Server 2.4")).as_deref(), Some("2.4"));
        assert_eq!(branch(Some("2.4")).as_deref(), Some("2.4"));
        assert_eq!((branch(Some("Apache HTTP Server")), branch(Some("2.4.1")), branch(None)), (None, None, None));

        let s = one(r#"{"version_affected":">=","version_value":"2.4.7"},
               {"version_affected":"<=","version_value":"2.4.51"}"#);
        assert_eq!(
            s.affected,
            vec![Affected::Range {
                introduced: Some("2.4.7".into()),
                fixed: None,
                last_affected: Some("2.4.51".into())
            }]
        );
        assert_eq!(
            (s.verdict("2.4.6"), s.verdict("2.4.7"), s.verdict("2.4.52")),
            (Some(false), Some(true), Some(false))
        );

        let s = one(r#"{"version_affected":"=","version_value":"1.3.12"},
               {"version_affected":"?=","version_value":"1.3.11"},
               {"version_value":"1.3.20"},
               {"version_affected":"<","version_value":"1.2"},
               {"version_affected":"!","version_value":"1.1.5"}"#);
        assert_eq!(s.verdict("1.3.12"), Some(true));
        assert_eq!(s.verdict("1.3.20"), Some(true), "no operator is =");
        assert_eq!(s.verdict("1.3.11"), None, "?= is unknown");
        assert_eq!(s.verdict("1.3.13"), Some(false));
        assert_eq!(s.verdict("1.1.4"), Some(true));
        assert_eq!(s.verdict("1.1.5"), Some(false));
        assert_eq!(s.verdict("1.2"), Some(false));
    }

    #[test]
    fn advisory_httpd_platform_and_other_products() {
        let v = parse_httpd(
            record(
                r#"{"version_affected":"<=","version_value":"2.4.53","platform":"Windows"},
                   {"version_affected":"=","version_value":"2.4.1","platform":""}"#,
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].platform.as_deref(), Some("Windows"));
        assert_eq!(v[1].platform, None);

        let other = record(r#"{"version_value":"9.0.1"}"#).replace("Apache HTTP Server", "Apache Tomcat");
        let v = parse_httpd(other.as_bytes()).unwrap();
        assert_eq!(
            v[0].source,
            Source::Cna { vendor: "Apache Software Foundation".into(), product: "Apache Tomcat".into() }
        );
        assert_eq!((v[0].cpe_product.clone(), v[0].verdict("9.0.2")), (None, None));
    }

    #[test]
    fn advisory_httpd_refuses_bad_records() {
        for entries in [
            r#"{"version_affected":">","version_value":"2.4.1"}"#,
            r#"{"version_affected":"~","version_value":"2.4.1"}"#,
            r#"{"version_affected":"=","version_value":""}"#,
            r#"{"version_affected":"=","version_value":2}"#,
            r#"{"version_affected":"="}"#,
        ] {
            assert!(parse_httpd(record(entries).as_bytes()).is_err(), "{entries}");
        }
        let huge = format!(r#"{{"version_value":"{}"}}"#, "1".repeat(super::super::MAX_VERSION_BYTES + 1));
        assert!(parse_httpd(record(&huge).as_bytes()).is_err());
        let bad_id = record(r#"{"version_value":"1"}"#).replace("CVE-2021-33193", "CAN-2021-1");
        assert!(parse_httpd(bad_id.as_bytes()).is_err());
        let rejected = record(r#"{"version_value":"1"}"#).replace("PUBLIC", "REJECT");
        assert!(parse_httpd(rejected.as_bytes()).unwrap().is_empty());
        let text = record(r#"{"version_value":"1"}"#);
        for cut in [0, 1, text.len() / 2, text.len() - 1] {
            assert!(parse_httpd(&text.as_bytes()[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn advisory_httpd_statement_cap() {
        let products: Vec<String> = (0..=super::super::MAX_STATEMENTS)
            .map(|i| format!(r#"{{"product_name":"P{i}","version":{{"version_data":[{{"version_value":"1"}}]}}}}"#))
            .collect();
        let text = format!(
            r#"{{"CVE_data_meta":{{"ID":"CVE-2021-33193"}},"affects":{{"vendor":{{"vendor_data":[{{"vendor_name":"V",
            "product":{{"product_data":[{}]}}}}]}}}}}}"#,
            products.join(",")
        );
        let err = parse_httpd(text.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("more than 10000 statements"), "{err}");
    }
}
