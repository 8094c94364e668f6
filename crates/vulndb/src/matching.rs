//! Matching CPE names against NVD applicability statements.
//!
//! Attribute comparison follows NISTIR 7696: ANY (`*`) matches everything, NA (`-`)
//! only NA, a value with unquoted wildcards (`*` any run, `?` one character) is a
//! pattern, anything else must be equal. A `cpeMatch` entry adds version ranges
//! (`versionStart/End` `Including/Excluding`) compared with [`Version`]. A
//! configuration is a tree of AND/OR nodes, each possibly negated.

use std::borrow::Cow;

use model::Cpe;
use serde::{Deserialize, Serialize};

use crate::version::Version;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operator {
    And,
    #[default]
    Or,
}

/// One `cpeMatch` of NVD (`cpe_match` in the 1.1 feeds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpeMatch {
    pub vulnerable: bool,
    /// The CPE 2.3 name, canonical.
    pub criteria: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_start_including: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_start_excluding: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_end_including: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_end_excluding: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Node {
    pub operator: Operator,
    #[serde(default)]
    pub negate: bool,
    pub matches: Vec<CpeMatch>,
}

/// One configuration: nodes joined by `operator`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Configuration {
    pub operator: Operator,
    #[serde(default)]
    pub negate: bool,
    pub nodes: Vec<Node>,
}

fn has_wildcard(v: &str) -> bool {
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' => return true,
            _ => {}
        }
    }
    false
}

/// Glob match of a quoted pattern against a quoted value: `*` any run, `?` one char.
fn glob(pattern: &str, value: &str) -> bool {
    fn tokens(s: &str) -> Vec<(char, bool)> {
        // (character, is_wildcard)
        let mut out = Vec::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push((chars.next().unwrap_or('\\'), false)),
                '*' | '?' => out.push((c, true)),
                _ => out.push((c, false)),
            }
        }
        out
    }
    let p = tokens(pattern);
    let v: Vec<char> = tokens(value).into_iter().map(|(c, _)| c).collect();
    // Iterative matcher with backtracking on the last `*`.
    let (mut pi, mut vi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while vi < v.len() {
        match p.get(pi) {
            Some(('?', true)) => {
                pi += 1;
                vi += 1;
            }
            Some(('*', true)) => {
                star = Some((pi, vi));
                pi += 1;
            }
            Some((c, false)) if *c == v[vi] => {
                pi += 1;
                vi += 1;
            }
            _ => match star {
                Some((sp, sv)) => {
                    pi = sp + 1;
                    vi = sv + 1;
                    star = Some((sp, sv + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|t| *t == ('*', true))
}

/// NISTIR 7696 attribute match: does the `source` value (from a CVE) cover `target`
/// (the name asked about)? A target of ANY is covered by everything: asking about
/// "any version" finds every CVE of the product.
pub fn attr_matches(source: &str, target: &str) -> bool {
    // Equal values always match (a pattern matches itself); unequal ones without any
    // wildcard character never do. Most comparisons end here.
    if source == target {
        return true;
    }
    let wild = |s: &str| s.bytes().any(|b| b == b'*' || b == b'?');
    if !wild(source) && !wild(target) {
        return false;
    }
    attr_matches_by_rules(source, target)
}

/// [`attr_matches`] by the rules alone, without its shortcuts.
fn attr_matches_by_rules(source: &str, target: &str) -> bool {
    if source == "*" || target == "*" {
        return true;
    }
    if source == "-" || target == "-" {
        return source == target;
    }
    if has_wildcard(source) {
        return glob(source, target);
    }
    if has_wildcard(target) {
        return glob(target, source);
    }
    source == target
}

/// A value without its quoting, borrowed when it has none.
fn unquoted(value: &str) -> Cow<'_, str> {
    if value.contains('\\') { Cow::Owned(Cpe::unquote(value)) } else { Cow::Borrowed(value) }
}

/// A name asked about, with its version key worked out once for all the entries it is
/// compared with.
#[derive(Debug, Clone)]
pub struct Probe<'a> {
    cpe: &'a Cpe,
    /// The key of a concrete version (not ANY, NA or a pattern).
    version_key: Option<String>,
}

impl<'a> Probe<'a> {
    pub fn new(cpe: &'a Cpe) -> Self {
        let v = cpe.version();
        let concrete = v != "*" && v != "-" && !has_wildcard(v);
        Probe { cpe, version_key: concrete.then(|| Version::key_of(&unquoted(v))) }
    }
}

impl CpeMatch {
    pub fn has_range(&self) -> bool {
        self.version_start_including.is_some()
            || self.version_start_excluding.is_some()
            || self.version_end_including.is_some()
            || self.version_end_excluding.is_some()
    }

    /// Whether the entry names the versions it covers (a version, a pattern such as
    /// `2.4.*`, or a range with a bound) and asks for no edition (CPE 2.2's field, as in
    /// `http_server:*:*:win32`) or target platform that `probe` leaves open. One that
    /// does not (`wordpress:*` with no bounds, or an entry for the win32 build of a
    /// server seen without its platform) covers the name without saying that its version
    /// is affected. The software edition is not such a restriction: NVD uses it to tell a
    /// product's open-source line from its commercial one (`f5:nginx:…:open_source`),
    /// which a banner names by the product alone.
    pub fn bounded_for(&self, probe: &Probe<'_>) -> bool {
        self.with_attrs(|c| {
            let names_versions = self.has_range() || c[3] != "*";
            // edition, target_sw, target_hw (the update is part of the version).
            let t = probe.cpe.attrs();
            let unobserved = [5, 8, 9].into_iter().any(|i| c[i] != "*" && c[i] != "-" && t[i] == "*");
            names_versions && !unobserved
        })
        .unwrap_or(false)
    }

    /// `f` of the criteria's eleven attributes, read from its canonical text or, for a
    /// name that is not canonical, parsed; `None` when it does not parse.
    fn with_attrs<R>(&self, f: impl FnOnce([&str; 11]) -> R) -> Option<R> {
        if let Some(c) = Cpe::canonical_attrs(&self.criteria) {
            return Some(f(c));
        }
        let parsed = Cpe::parse(&self.criteria).ok()?;
        Some(f(std::array::from_fn(|i| parsed.attrs()[i].as_str())))
    }

    /// Whether this entry covers the name `target`.
    pub fn matches(&self, target: &Cpe) -> bool {
        self.covers(&Probe::new(target))
    }

    /// [`CpeMatch::matches`] for a name whose version is worked out already.
    pub fn covers(&self, probe: &Probe<'_>) -> bool {
        let t = probe.cpe.attrs();
        // Most entries of a configuration name other products: part, vendor and product
        // are compared first, straight from the text of a canonical name.
        if let Some(head) = Cpe::canonical_head::<3>(&self.criteria)
            && !head.iter().zip(t).all(|(c, t)| attr_matches(c, t))
        {
            return false;
        }
        self.with_attrs(|c| (0..11).all(|i| i == 3 || attr_matches(c[i], &t[i])) && self.version_matches(c[3], probe))
            .unwrap_or(false)
    }

    /// [`CpeMatch::matches`] by parsing the whole name (what [`CpeMatch::covers`] must
    /// agree with).
    #[cfg(test)]
    fn matches_parsed(&self, target: &Cpe) -> bool {
        let Ok(criteria) = Cpe::parse(&self.criteria) else { return false };
        let (c, t) = (criteria.attrs(), target.attrs());
        (0..11).all(|i| i == 3 || attr_matches(&c[i], &t[i])) && self.version_matches(&c[3], &Probe::new(target))
    }

    fn version_matches(&self, source: &str, probe: &Probe<'_>) -> bool {
        let target = probe.cpe.version();
        let Some(key) = &probe.version_key else {
            // ANY, NA or a pattern: attribute comparison, except that a range applies to
            // any version and to no NA or pattern.
            return if self.has_range() { target == "*" } else { attr_matches(source, target) };
        };
        if !self.has_range() {
            if source == "*" || source == "-" || has_wildcard(source) {
                return attr_matches(source, target);
            }
            return source == target || Version::key_of(&unquoted(source)) == *key;
        }
        // A range applies to the versions the criteria leaves open.
        if !attr_matches(source, target) {
            return false;
        }
        let key = key.as_str();
        let bound = |b: &Option<String>| b.as_deref().map(Version::key_of);
        bound(&self.version_start_including).is_none_or(|s| key >= s.as_str())
            && bound(&self.version_start_excluding).is_none_or(|s| key > s.as_str())
            && bound(&self.version_end_including).is_none_or(|e| key <= e.as_str())
            && bound(&self.version_end_excluding).is_none_or(|e| key < e.as_str())
    }
}

impl Node {
    fn holds_for(&self, probes: &[Probe<'_>]) -> bool {
        let hit = |m: &CpeMatch| probes.iter().any(|p| m.covers(p));
        let value = match self.operator {
            Operator::Or => self.matches.iter().any(hit),
            Operator::And => !self.matches.is_empty() && self.matches.iter().all(hit),
        };
        value != self.negate
    }

    /// The node as a condition a reader checks: its entries joined by its operator,
    /// `not (…)` when negated.
    pub fn describe(&self) -> String {
        let joiner = match self.operator {
            Operator::Or => " or ",
            Operator::And => " and ",
        };
        let inner = self.matches.iter().map(CpeMatch::describe).collect::<Vec<_>>().join(joiner);
        if self.negate { format!("not ({inner})") } else { inner }
    }

    /// Does the node hold for everything in `cpes` (a host's detected software)?
    pub fn holds_for_set(&self, cpes: &[Cpe]) -> bool {
        let probes: Vec<Probe<'_>> = cpes.iter().map(Probe::new).collect();
        self.holds_for(&probes)
    }

    /// Does the node speak of the same kind of thing (an operating system or a device)
    /// as one of `cpes` without holding for it? Then the host is known to run something else there (a
    /// Linux host for a Windows-only condition).
    pub fn contradicted_by(&self, cpes: &[Cpe]) -> bool {
        if self.negate || self.holds_for_set(cpes) {
            return false;
        }
        // The node names operating systems (or hardware), and the host has one of that
        // part which no entry covers.
        let parts: Vec<&str> =
            self.matches.iter().filter_map(|m| Cpe::canonical_head::<1>(&m.criteria).map(|[part]| part)).collect();
        cpes.iter().any(|c| matches!(c.part(), "o" | "h") && parts.contains(&c.part()))
    }
}

impl Configuration {
    /// Full evaluation against everything known to run together (a host's software):
    /// the tree holds and a vulnerable entry matched one of `cpes`.
    pub fn applies_to_set(&self, cpes: &[Cpe]) -> bool {
        let probes: Vec<Probe<'_>> = cpes.iter().map(Probe::new).collect();
        let holds = match self.operator {
            Operator::Or => self.nodes.iter().any(|n| n.holds_for(&probes)),
            Operator::And => !self.nodes.is_empty() && self.nodes.iter().all(|n| n.holds_for(&probes)),
        } != self.negate;
        holds
            && self
                .nodes
                .iter()
                .filter(|n| !n.negate)
                .any(|n| n.matches.iter().any(|m| m.vulnerable && probes.iter().any(|p| m.covers(p))))
    }

    /// Evaluation for one name alone (the get-cve-from-cpe-id rule, as NVD's `cpeName`
    /// search and cve-search apply it): a vulnerable entry of a node that is not negated
    /// matches the name (version ranges applied). The nodes of an AND that the name does
    /// not satisfy by itself (the platform it runs on, in older records often marked
    /// vulnerable too) are the conditions under which it holds:
    /// [`Configuration::conditions`].
    pub fn applies_to(&self, cpe: &Cpe) -> bool {
        self.applies_to_probe(&Probe::new(cpe))
    }

    /// [`Configuration::applies_to`] for a name whose version is worked out already.
    pub fn applies_to_probe(&self, probe: &Probe<'_>) -> bool {
        !self.negate
            && self
                .nodes
                .iter()
                .filter(|n| !n.negate)
                .any(|n| n.matches.iter().any(|m| m.vulnerable && m.covers(probe)))
    }

    /// The nodes of an AND configuration that do not hold for the name alone: what else
    /// must be present for it to apply. Empty for an OR, or when the name meets every
    /// node by itself.
    pub fn conditions(&self, probe: &Probe<'_>) -> Vec<&Node> {
        match self.operator {
            Operator::Or => Vec::new(),
            Operator::And => self.nodes.iter().filter(|n| !n.holds_for(std::slice::from_ref(probe))).collect(),
        }
    }
}

/// The conditions under which a CVE applies to the name: `None` when no configuration
/// applies, an empty list when one applies unconditionally, else the unmet nodes of the
/// first configuration that applies.
pub fn cve_conditions<'c>(configurations: &'c [Configuration], probe: &Probe<'_>) -> Option<Vec<&'c Node>> {
    let mut first: Option<Vec<&Node>> = None;
    for c in configurations.iter().filter(|c| c.applies_to_probe(probe)) {
        let conditions = c.conditions(probe);
        if conditions.is_empty() {
            return Some(conditions);
        }
        first.get_or_insert(conditions);
    }
    first
}

/// Whether any configuration of a CVE applies to `cpe`.
pub fn cve_applies(configurations: &[Configuration], cpe: &Cpe) -> bool {
    cve_applies_to(configurations, &Probe::new(cpe))
}

/// [`cve_applies`] for a name whose version is worked out already (one [`Probe`] for
/// all the CVEs of a lookup).
pub fn cve_applies_to(configurations: &[Configuration], probe: &Probe<'_>) -> bool {
    configurations.iter().any(|c| c.applies_to_probe(probe))
}

impl CpeMatch {
    /// The entry as a reader checks it: the criteria and its version range.
    pub fn describe(&self) -> String {
        let mut range = Vec::new();
        if let Some(v) = &self.version_start_including {
            range.push(format!(">= {v}"));
        }
        if let Some(v) = &self.version_start_excluding {
            range.push(format!("> {v}"));
        }
        if let Some(v) = &self.version_end_including {
            range.push(format!("<= {v}"));
        }
        if let Some(v) = &self.version_end_excluding {
            range.push(format!("< {v}"));
        }
        if range.is_empty() {
            self.criteria.clone()
        } else {
            format!("{} versions {}", self.criteria, range.join(", "))
        }
    }
}

/// The vulnerable entries that cover `probe`, in the configurations that apply to it.
fn covering<'c>(configurations: &'c [Configuration], probe: &Probe<'_>) -> impl Iterator<Item = &'c CpeMatch> {
    configurations
        .iter()
        .filter(|c| c.applies_to_probe(probe))
        .flat_map(|c| c.nodes.iter().filter(|n| !n.negate))
        .flat_map(|n| n.matches.iter())
        .filter(|m| m.vulnerable && m.covers(probe))
}

/// Why a CVE applies to `cpe`: the covering vulnerable entry, described
/// ([`CpeMatch::describe`]) — a [bounded](CpeMatch::bounded_for) one when there is one,
/// else the first — and whether it is bounded; none when no configuration applies.
pub fn explain(configurations: &[Configuration], probe: &Probe<'_>) -> Option<(String, bool)> {
    let mut first = None;
    for m in covering(configurations, probe) {
        if m.bounded_for(probe) {
            return Some((m.describe(), true));
        }
        first.get_or_insert(m);
    }
    first.map(|m| (m.describe(), false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cpe(s: &str) -> Cpe {
        Cpe::parse(s).unwrap()
    }

    fn m(criteria: &str, vulnerable: bool) -> CpeMatch {
        CpeMatch {
            vulnerable,
            criteria: cpe(criteria).to_string(),
            version_start_including: None,
            version_start_excluding: None,
            version_end_including: None,
            version_end_excluding: None,
        }
    }

    #[test]
    fn attributes_per_nistir_7696() {
        assert!(attr_matches("*", "anything"));
        assert!(attr_matches("foo", "*"));
        assert!(attr_matches("-", "-"));
        assert!(!attr_matches("-", "foo") && !attr_matches("foo", "-"));
        assert!(attr_matches("2.4.*", "2.4.49"));
        assert!(!attr_matches("2.4.*", "2.5.0"));
        assert!(attr_matches("1.0.?", "1.0.1") && !attr_matches("1.0.?", "1.0.10"));
        assert!(attr_matches("*_firmware", "ios_firmware"));
        assert!(!attr_matches(r"foo\*", "foobar"), "a quoted star is a literal");
        assert!(attr_matches(r"foo\*", r"foo\*"));
    }

    #[test]
    fn an_entry_is_bounded_when_it_names_versions_and_no_unseen_platform() {
        let seen = cpe("cpe:2.3:a:apache:http_server:2.4.49");
        let probe = Probe::new(&seen);
        let bounded = |e: &CpeMatch| e.covers(&probe) && e.bounded_for(&probe);
        assert!(bounded(&m("cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*", true)), "the version itself");
        assert!(bounded(&m("cpe:2.3:a:apache:http_server:2.4.*:*:*:*:*:*:*:*", true)), "a pattern");
        let mut ranged = m("cpe:2.3:a:apache:http_server:*:*:*:*:*:*:*:*", true);
        ranged.version_end_excluding = Some("2.4.50".into());
        assert!(bounded(&ranged), "one bound is enough");
        let any = m("cpe:2.3:a:apache:http_server:*:*:*:*:*:*:*:*", true);
        assert!(any.covers(&probe) && !any.bounded_for(&probe), "a wildcard with no bounds");
        let win32 = m("cpe:2.3:a:apache:http_server:*:*:win32:*:*:*:*:*", true);
        assert!(win32.covers(&probe) && !win32.bounded_for(&probe), "an edition the detection does not name");
        let mut windows = m("cpe:2.3:a:apache:http_server:*:*:*:*:*:windows:*:*", true);
        windows.version_start_including = Some("2.4.0".into());
        assert!(windows.covers(&probe) && !windows.bounded_for(&probe), "a platform the detection does not name");
        let on_windows = cpe("cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:windows:*:*");
        assert!(windows.bounded_for(&Probe::new(&on_windows)), "the platform named by the detection too");
        let mut open_source = m("cpe:2.3:a:f5:nginx:*:*:*:*:open_source:*:*:*", true);
        open_source.version_end_excluding = Some("1.23.2".into());
        let nginx = cpe("cpe:2.3:a:f5:nginx:1.18.0");
        assert!(
            open_source.covers(&Probe::new(&nginx)) && open_source.bounded_for(&Probe::new(&nginx)),
            "a software edition is no restriction"
        );
        // explain prefers a bounded entry to a stray unbounded one.
        let config = Configuration {
            operator: Operator::Or,
            negate: false,
            nodes: vec![Node { operator: Operator::Or, negate: false, matches: vec![win32.clone(), ranged.clone()] }],
        };
        let (why, is_bounded) = explain(std::slice::from_ref(&config), &probe).unwrap();
        assert!(is_bounded && why.contains("< 2.4.50"), "{why}");
        let stray = Configuration { nodes: vec![Node { matches: vec![win32], ..config.nodes[0].clone() }], ..config };
        assert_eq!(explain(std::slice::from_ref(&stray), &probe).map(|e| e.1), Some(false));
    }

    #[test]
    fn exact_versions_and_ranges() {
        let exact = m("cpe:2.3:a:openssl:openssl:1.0.1f:*:*:*:*:*:*:*", true);
        assert!(exact.matches(&cpe("cpe:2.3:a:openssl:openssl:1.0.1f")));
        assert!(!exact.matches(&cpe("cpe:2.3:a:openssl:openssl:1.0.1g")));
        assert!(exact.matches(&cpe("cpe:2.3:a:openssl:openssl")), "no version: any");
        assert!(!exact.matches(&cpe("cpe:2.3:a:openssl:libressl:1.0.1f")));

        let mut range = m("cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*", true);
        range.version_start_including = Some("2.0-beta9".into());
        range.version_end_excluding = Some("2.3.1".into());
        for (v, want) in [
            ("2.0-beta8", false),
            ("2.0-beta9", true),
            ("2.0", true),
            ("2.3.0", true),
            ("2.3.1", false),
            ("2.15.0", false),
        ] {
            assert_eq!(range.matches(&cpe(&format!("cpe:2.3:a:apache:log4j:{v}"))), want, "{v}");
        }
        assert!(range.matches(&cpe("cpe:2.3:a:apache:log4j")));
        assert!(!range.matches(&cpe("cpe:2.3:a:apache:log4j:-")));
        range.version_end_excluding = None;
        range.version_end_including = Some("2.14.1".into());
        assert!(range.matches(&cpe("cpe:2.3:a:apache:log4j:2.14.1")));
        assert!(!range.matches(&cpe("cpe:2.3:a:apache:log4j:2.15.0")));
        // Other attributes still count: an update given by the criteria must match.
        let upd = m("cpe:2.3:a:openbsd:openssh:7.4:p1:*:*:*:*:*:*", true);
        assert!(upd.matches(&cpe("cpe:2.3:a:openbsd:openssh:7.4:p1")));
        assert!(!upd.matches(&cpe("cpe:2.3:a:openbsd:openssh:7.4:p2")));
    }

    #[test]
    fn configurations_with_platforms() {
        // Firmware vulnerable only on a given device: AND(OR(firmware, vulnerable), OR(device)).
        let conf = Configuration {
            operator: Operator::And,
            negate: false,
            nodes: vec![
                Node {
                    operator: Operator::Or,
                    negate: false,
                    matches: vec![m("cpe:2.3:o:acme:fw:1.0:*:*:*:*:*:*:*", true)],
                },
                Node {
                    operator: Operator::Or,
                    negate: false,
                    matches: vec![m("cpe:2.3:h:acme:box:-:*:*:*:*:*:*:*", false)],
                },
            ],
        };
        let fw = cpe("cpe:2.3:o:acme:fw:1.0");
        let bx = cpe("cpe:2.3:h:acme:box:-");
        assert!(conf.applies_to(&fw), "alone, the platform is taken as present");
        assert!(!conf.applies_to(&bx), "the platform alone is not vulnerable");
        let conditions: Vec<String> = conf.conditions(&Probe::new(&fw)).iter().map(|n| n.describe()).collect();
        assert_eq!(conditions, ["cpe:2.3:h:acme:box:-:*:*:*:*:*:*:*"]);
        assert_eq!(cve_conditions(std::slice::from_ref(&conf), &Probe::new(&fw)).map(|c| c.len()), Some(1));
        assert!(cve_conditions(std::slice::from_ref(&conf), &Probe::new(&bx)).is_none());
        // Older records mark the platform vulnerable too (Acrobat AND Windows): the
        // product still applies, on the condition of the platform.
        let mut old = conf.clone();
        old.nodes[1].matches[0].vulnerable = true;
        assert!(old.applies_to(&fw));
        assert_eq!(old.conditions(&Probe::new(&fw)).len(), 1);
        // What the host runs decides: the device there, another device, or none known.
        let node = &conf.nodes[1];
        assert!(node.holds_for_set(&[fw.clone(), bx.clone()]));
        assert!(node.contradicted_by(&[cpe("cpe:2.3:h:other:router:-")]));
        assert!(!node.contradicted_by(&[cpe("cpe:2.3:a:nginx:nginx:1.0")]), "no device known: not contradicted");
        assert!(conf.applies_to_set(&[fw.clone(), bx.clone()]));
        assert!(!conf.applies_to_set(std::slice::from_ref(&fw)), "with the full set, the platform must be there");
        let mut negated = conf.clone();
        negated.nodes[1].negate = true;
        assert!(negated.applies_to_set(std::slice::from_ref(&fw)));
        assert!(!negated.applies_to_set(&[fw, bx]));
    }

    proptest! {
        #[test]
        fn the_shortcuts_agree_with_the_rules(
            a in "[*-]|[ab.*?-]{1,4}|[ab]{0,2}\\\\[*?]", b in "[*-]|[ab.*?-]{1,4}|[ab]{0,2}\\\\[*?]"
        ) {
            prop_assert_eq!(attr_matches(&a, &b), attr_matches_by_rules(&a, &b), "{} {}", a, b);
        }

        #[test]
        fn a_literal_matches_itself_and_any(s in "[a-z0-9_.]{1,12}") {
            prop_assert!(attr_matches(&s, &s));
            prop_assert!(attr_matches("*", &s));
            let (pattern, value) = (format!("{s}*"), format!("{s}tail"));
            prop_assert!(glob(&pattern, &value));
        }

        #[test]
        fn a_match_without_parsing_is_the_match_by_parsing(
            c in "cpe:2.3:[ao*]:[abA*?-]{1,2}:[abB*?-]{1,2}:[12.*?-]{1,3}(:[ab*-]){0,2}",
            // The name asked about: the criteria's own attributes, one of them (or none)
            // replaced, so that names often differ in one attribute only.
            which in 0usize..5,
            other in "[ao*-]|[ab12.*?-]{1,2}",
            range in proptest::option::of("[0-9]\\.[0-9]"),
        ) {
            if let Ok(parsed) = Cpe::parse(&c) {
                let mut attrs = parsed.attrs().clone();
                if let Some(a) = attrs.get_mut(which).filter(|_| which < 4) {
                    *a = other.clone();
                }
                let Ok(t) = Cpe::parse(&format!("cpe:2.3:{}", attrs.join(":"))) else { return Ok(()) };
                // The criteria as given (any form) and in its canonical form.
                for criteria in [c.clone(), parsed.to_string()] {
                    let m = CpeMatch { vulnerable: true, criteria, version_start_including: range.clone(),
                        version_start_excluding: None, version_end_including: None, version_end_excluding: None };
                    prop_assert_eq!(m.matches(&t), m.matches_parsed(&t), "{} {}", m.criteria, t);
                }
            }
        }

        #[test]
        fn glob_never_panics(p in "[a-z*?\\\\]{0,12}", v in "[a-z\\\\]{0,12}") {
            let _ = glob(&p, &v);
        }
    }
}
