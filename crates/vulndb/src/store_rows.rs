//! From an imported CVE to what the store keeps: the record, the configurations as
//! JSON, and one index row per `cpeMatch` with version keys.

use model::{Cpe, CveRecord};
use std::collections::{BTreeMap, HashSet};

use store::cve::{CpeMatchRow, ProductRow, StoredCve};

use crate::matching::{Configuration, CpeMatch, Node, Operator, attr_matches};
use crate::nvd::ImportedCve;
use crate::version::Version;

fn key(v: &Option<String>) -> Option<String> {
    v.as_deref().map(Version::key_of)
}

fn is_concrete(v: &str) -> bool {
    v != "*" && v != "-" && !v.chars().any(|c| c == '*' || c == '?')
}

fn row(m: &CpeMatch, cpe: &Name<'_>) -> CpeMatchRow {
    let version = cpe.version().to_owned();
    let version_key = is_concrete(&version).then(|| Version::key_of(&Cpe::unquote(&version)));
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

/// The attributes of an entry's name: slices of it when it is canonical (as NVD writes
/// them), parsed otherwise.
enum Name<'a> {
    Canonical([&'a str; 11]),
    Parsed(Cpe),
}

impl<'a> Name<'a> {
    fn of(criteria: &'a str) -> Option<Self> {
        match Cpe::canonical_attrs(criteria) {
            Some(attrs) => Some(Name::Canonical(attrs)),
            None => Cpe::parse(criteria).ok().map(Name::Parsed),
        }
    }

    fn attr(&self, i: usize) -> &str {
        match self {
            Name::Canonical(attrs) => attrs[i],
            Name::Parsed(cpe) => &cpe.attrs()[i],
        }
    }

    fn part(&self) -> &str {
        self.attr(0)
    }
    fn vendor(&self) -> &str {
        self.attr(1)
    }
    fn product(&self) -> &str {
        self.attr(2)
    }
    fn version(&self) -> &str {
        self.attr(3)
    }
}

/// Every `cpeMatch` of the configurations with its name read (once).
type Entries<'a> = Vec<(&'a CpeMatch, Option<Name<'a>>)>;

fn entries(configurations: &[Configuration]) -> Entries<'_> {
    configurations
        .iter()
        .flat_map(|c| c.nodes.iter())
        .flat_map(|n| n.matches.iter())
        .map(|m| (m, Name::of(&m.criteria)))
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
/// evaluated (what [`crate::matching::cve_applies`] says for `cpe:2.3:PART:VENDOR:PRODUCT`).
fn products(configurations: &[Configuration], entries: &Entries<'_>, needs_eval: bool) -> Vec<ProductRow> {
    let mut by_product: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for (_, cpe) in entries.iter().filter(|(m, _)| m.vulnerable) {
        let Some(cpe) = cpe else { continue };
        let parts = by_product.entry((cpe.vendor(), cpe.product())).or_default();
        if !parts.contains(cpe.part()) {
            parts.push_str(cpe.part());
        }
    }
    let named = needs_eval.then(|| Named::of(configurations, entries));
    by_product
        .into_iter()
        .map(|((vendor, product), parts)| {
            let applies_any_version = named.as_ref().is_none_or(|named| {
                parts.chars().any(|part| {
                    let mut buf = [0; 4];
                    let part: &str = part.encode_utf8(&mut buf);
                    let head = [part, vendor, product];
                    named.holds(head) || {
                        // Only the AND configurations with a vulnerable entry for it.
                        let mut and = named.and.iter().filter(|(_, heads)| heads.iter().any(|h| covers(h, head)));
                        and.next().is_some_and(|first| {
                            Cpe::parse(&format!("cpe:2.3:{part}:{vendor}:{product}")).is_ok_and(|probe| {
                                let probe = crate::matching::Probe::new(&probe);
                                std::iter::once(first).chain(and).any(|(c, _)| c.applies_to_probe(&probe))
                            })
                        })
                    }
                })
            });
            ProductRow { vendor: vendor.to_owned(), product: product.to_owned(), parts, applies_any_version }
        })
        .collect()
}

/// What decides whether a CVE applies to a product asked about without a version. A
/// configuration applies only if one of its vulnerable entries outside negated nodes
/// names the product (part, vendor and product match; every other attribute and any
/// range cover ANY), and for an OR configuration (not negated) that is enough: those
/// names are gathered once. AND configurations are evaluated, each only for the
/// products its vulnerable entries name.
struct Named<'a> {
    /// Part, vendor and product of those entries of the OR configurations.
    names: HashSet<[&'a str; 3]>,
    /// Whether any of them holds a wildcard (then a set lookup is not enough).
    patterns: bool,
    /// The AND configurations (not negated), each with the names of those entries.
    and: Vec<(&'a Configuration, Vec<[&'a str; 3]>)>,
}

/// Whether the part, vendor and product of an entry cover those asked about.
fn covers(entry: &[&str; 3], asked: [&str; 3]) -> bool {
    entry.iter().zip(asked).all(|(e, a)| attr_matches(e, a))
}

impl<'a> Named<'a> {
    fn of(configurations: &'a [Configuration], entries: &'a Entries<'a>) -> Self {
        let mut named = Named { names: HashSet::new(), patterns: false, and: Vec::new() };
        // `entries` are the configurations' entries in order.
        let mut entries = entries.iter();
        for c in configurations {
            let mut heads = Vec::new();
            for n in &c.nodes {
                for (m, name) in entries.by_ref().take(n.matches.len()) {
                    if let (true, Some(name)) = (!n.negate && m.vulnerable, name) {
                        heads.push([name.part(), name.vendor(), name.product()]);
                    }
                }
            }
            match (c.operator, c.negate) {
                (_, true) => {}
                (Operator::Or, false) => {
                    for head in heads {
                        named.patterns |= head.iter().any(|a| a.contains(['*', '?']));
                        named.names.insert(head);
                    }
                }
                (Operator::And, false) => named.and.push((c, heads)),
            }
        }
        named
    }

    /// Whether an OR configuration applies to the product named by `head`.
    fn holds(&self, head: [&str; 3]) -> bool {
        self.names.contains(&head)
            || ((self.patterns || head.iter().any(|a| a.contains(['*', '?'])))
                && self.names.iter().any(|n| covers(n, head)))
    }
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

    fn entry(criteria: &str, vulnerable: bool) -> CpeMatch {
        CpeMatch {
            vulnerable,
            criteria: criteria.into(),
            version_start_including: None,
            version_start_excluding: None,
            version_end_including: None,
            version_end_excluding: None,
        }
    }

    #[test]
    fn products_apply_without_a_version_as_evaluation_says() {
        let node = |negate, operator, matches| Node { operator, negate, matches };
        let configurations = vec![
            // A negated node's entry does not count; a pattern names several vendors.
            Configuration {
                operator: Operator::Or,
                negate: false,
                nodes: vec![
                    node(true, Operator::Or, vec![entry("cpe:2.3:a:acme:tool:1.0:*:*:*:*:*:*:*", true)]),
                    node(false, Operator::Or, vec![entry("cpe:2.3:a:ac*:tool:*:*:*:*:*:*:*:*", true)]),
                    node(true, Operator::Or, vec![entry("cpe:2.3:a:other:thing:1.0:*:*:*:*:*:*:*", true)]),
                ],
            },
            // An AND: the firmware on its device, evaluated.
            Configuration {
                operator: Operator::And,
                negate: false,
                nodes: vec![
                    node(false, Operator::Or, vec![entry("cpe:2.3:o:acme:fw:2.0:*:*:*:*:*:*:*", true)]),
                    node(false, Operator::Or, vec![entry("cpe:2.3:h:acme:box:-:*:*:*:*:*:*:*", false)]),
                ],
            },
            // Negated as a whole: applies to nothing.
            Configuration {
                operator: Operator::Or,
                negate: true,
                nodes: vec![node(false, Operator::Or, vec![entry("cpe:2.3:a:gone:app:1:*:*:*:*:*:*:*", true)])],
            },
        ];
        let entries = entries(&configurations);
        let got: Vec<(String, bool)> = products(&configurations, &entries, true)
            .into_iter()
            .map(|p| (format!("{}:{}", p.vendor, p.product), p.applies_any_version))
            .collect();
        let evaluated =
            |p: &str| crate::matching::cve_applies(&configurations, &Cpe::parse(&format!("cpe:2.3:*:{p}")).unwrap());
        for (product, applies) in &got {
            assert_eq!(*applies, evaluated(product), "{product}");
        }
        let want =
            [("ac*:tool", true), ("acme:fw", true), ("acme:tool", true), ("gone:app", false), ("other:thing", false)];
        assert_eq!(got, want.map(|(p, a)| (p.to_owned(), a)));
    }

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
        let r = row(&m, &Name::of(&m.criteria).unwrap());
        assert_eq!((r.vendor.as_str(), r.product.as_str(), r.version.as_str()), ("apache", "log4j", "*"));
        assert!(r.version_key.is_none());
        let probe = Version::parse("2.1").key().to_owned();
        assert!(r.start_incl.as_deref().unwrap() <= probe.as_str() && probe.as_str() < r.end_excl.as_deref().unwrap());
        let exact = CpeMatch { criteria: "cpe:2.3:a:openssl:openssl:1.0.1f:*:*:*:*:*:*:*".into(), ..m };
        let exact = row(&exact, &Name::Parsed(Cpe::parse(&exact.criteria).unwrap()));
        assert_eq!(exact.version_key.as_deref(), Some(Version::parse("1.0.1f").key()));
    }
}
