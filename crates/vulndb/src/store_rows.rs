//! From an imported CVE to what the store keeps: the record, the configurations as
//! JSON, and one index row per `cpeMatch` with version keys.

use model::{Cpe, CveRecord};
use std::collections::BTreeMap;

use store::{CpeMatchRow, ProductRow, StoredCve};

use crate::matching::{Configuration, CpeMatch, Node, Operator};
use crate::nvd::ImportedCve;
use crate::version::Version;

fn key(v: &Option<String>) -> Option<String> {
    v.as_deref().map(|v| Version::parse(v).key().to_owned())
}

fn is_concrete(v: &str) -> bool {
    v != "*" && v != "-" && !v.chars().any(|c| c == '*' || c == '?')
}

fn row(m: &CpeMatch, cpe: &Cpe) -> CpeMatchRow {
    let version = cpe.version().to_owned();
    let version_key = is_concrete(&version).then(|| Version::parse(&Cpe::unquote(&version)).key().to_owned());
    CpeMatchRow {
        part: cpe.part().to_owned(),
        vendor: cpe.vendor().to_owned(),
        product: cpe.product().to_owned(),
        version,
        version_key,
        start_incl: key(&m.version_start_including),
        start_excl: key(&m.version_start_excluding),
        end_incl: key(&m.version_end_including),
        end_excl: key(&m.version_end_excluding),
        vulnerable: m.vulnerable,
        criteria: m.criteria.clone(),
    }
}

/// Every `cpeMatch` of the configurations with its name parsed (once).
type Entries<'a> = Vec<(&'a CpeMatch, Option<Cpe>)>;

fn entries(configurations: &[Configuration]) -> Entries<'_> {
    configurations
        .iter()
        .flat_map(|c| c.nodes.iter())
        .flat_map(|n| n.matches.iter())
        .map(|m| (m, Cpe::parse(&m.criteria).ok()))
        .collect()
}

/// Whether the index rows alone decide a plain query (vendor, product, version): no
/// AND of several parts, no negation, no NA or pattern versions.
fn needs_eval(configurations: &[Configuration], entries: &Entries<'_>) -> bool {
    configurations.iter().any(|c| {
        c.negate
            || (c.operator == Operator::And && c.nodes.len() > 1)
            || c.nodes.iter().any(|n| n.negate || (n.operator == Operator::And && n.matches.len() > 1))
    }) || entries.iter().any(|(_, c)| c.as_ref().is_none_or(|c| !is_concrete(c.version()) && c.version() != "*"))
}

/// The products with vulnerable entries, and whether the CVE applies to each when it
/// is asked about without a version. Without AND, negation or odd versions
/// (`needs_eval` false) every vulnerable entry matches a name that leaves the version
/// open, so the CVE applies to each of its products; otherwise the configurations are
/// evaluated.
fn products(configurations: &[Configuration], entries: &Entries<'_>, needs_eval: bool) -> Vec<ProductRow> {
    let mut by_product: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for (_, cpe) in entries.iter().filter(|(m, _)| m.vulnerable) {
        let Some(cpe) = cpe else { continue };
        let parts = by_product.entry((cpe.vendor(), cpe.product())).or_default();
        if !parts.contains(cpe.part()) {
            parts.push_str(cpe.part());
        }
    }
    by_product
        .into_iter()
        .map(|((vendor, product), parts)| {
            let applies_any_version = !needs_eval
                || parts.chars().any(|part| {
                    Cpe::parse(&format!("cpe:2.3:{part}:{vendor}:{product}"))
                        .is_ok_and(|probe| crate::matching::cve_applies(configurations, &probe))
                });
            ProductRow { vendor: vendor.to_owned(), product: product.to_owned(), parts, applies_any_version }
        })
        .collect()
}

/// The store's form of an imported CVE.
pub fn stored(cve: &ImportedCve) -> StoredCve {
    into_stored(cve.clone())
}

/// [`stored`], taking the record.
pub fn into_stored(cve: ImportedCve) -> StoredCve {
    let entries = entries(&cve.configurations);
    let matches = entries.iter().filter_map(|(m, c)| Some(row(m, c.as_ref()?))).collect();
    let needs_eval = needs_eval(&cve.configurations, &entries);
    let products = products(&cve.configurations, &entries, needs_eval);
    drop(entries);
    let record_json =
        (!cve.record.served_form_reproduces()).then(|| serde_json::to_string(&cve.record).unwrap_or_default());
    StoredCve {
        configurations: serde_json::to_string(&cve.configurations).unwrap_or_else(|_| "[]".to_owned()),
        needs_eval,
        served: crate::render::list_form(&cve.record),
        record: cve.record,
        record_json,
        products,
        matches,
    }
}

/// A cve-search record carries no configurations: its `vulnerable_product` names
/// become one OR node of vulnerable entries with exact versions.
pub fn from_cve_search(mut record: CveRecord) -> ImportedCve {
    // A CWE id never holds control characters; the store joins rows with them.
    if record.cwe.chars().any(char::is_control) {
        record.cwe = "Unknown".to_owned();
    }
    let matches = record
        .vulnerable_product
        .iter()
        .filter_map(|p| Cpe::parse(p).ok())
        .map(|c| CpeMatch {
            vulnerable: true,
            criteria: c.to_string(),
            version_start_including: None,
            version_start_excluding: None,
            version_end_including: None,
            version_end_excluding: None,
        })
        .collect::<Vec<_>>();
    let configurations = if matches.is_empty() {
        Vec::new()
    } else {
        vec![Configuration {
            operator: Operator::Or,
            negate: false,
            nodes: vec![Node { operator: Operator::Or, negate: false, matches }],
        }]
    };
    ImportedCve { record, configurations }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_version_keys() {
        let m = CpeMatch {
            vulnerable: true,
            criteria: "cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*".into(),
            version_start_including: Some("2.0".into()),
            version_start_excluding: None,
            version_end_including: None,
            version_end_excluding: Some("2.3.1".into()),
        };
        let r = row(&m, &Cpe::parse(&m.criteria).unwrap());
        assert_eq!((r.vendor.as_str(), r.product.as_str(), r.version.as_str()), ("apache", "log4j", "*"));
        assert!(r.version_key.is_none());
        let probe = Version::parse("2.1").key().to_owned();
        assert!(r.start_incl.as_deref().unwrap() <= probe.as_str() && probe.as_str() < r.end_excl.as_deref().unwrap());
        let exact = CpeMatch { criteria: "cpe:2.3:a:openssl:openssl:1.0.1f:*:*:*:*:*:*:*".into(), ..m };
        let exact = row(&exact, &Cpe::parse(&exact.criteria).unwrap());
        assert_eq!(exact.version_key.as_deref(), Some(Version::parse("1.0.1f").key()));
    }
}
