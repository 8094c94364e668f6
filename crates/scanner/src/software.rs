//! From detections to the software inventory: applications and SBOM components with
//! CPE names and package URLs, and their lifecycle from endoflife.date (what the `sbom`
//! check, `crate::checks::sbom`, judges).
//!
//! A detection is a component when it names a product (a CPE or a package URL): the
//! CPE name carries the detected version with distribution suffixes removed
//! (`5.7.33-0ubuntu0.18.04.1` → `5.7.33`). Lifecycle: the endoflife.date product is
//! found by CPE vendor and product, else by package URL, else by name; the release cycle
//! is the longest cycle name that the version starts with at a separator
//! (`1.18.0` → `1.18`, `1.0.1f` → `1.0.1`, `6.8.0` → `6`); a cycle whose `eol` is `true`
//! or a date on or before the scan day is end-of-life, else a `latest` newer than the
//! version makes it outdated.

use std::collections::{BTreeMap, HashMap};

use model::Version;
use serde::Serialize;
use serde_json::Value;
use time::Date;

use crate::fingerprint::{Detection, cpe_prefix};

/// One technology seen on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Software {
    pub host: String,
    pub name: String,
    pub version: Option<String>,
    pub categories: Vec<String>,
    /// CPE 2.3 names with the version (`*` without one), the primary first.
    pub cpes: Vec<String>,
    /// Package URL with the version where known.
    pub purl: Option<String>,
    pub confidence: u8,
    pub evidence: String,
    /// The distribution whose package it is, when the banner says (`Apache/2.4.41
    /// (Ubuntu)`, `OpenSSH_8.2p1 Ubuntu-4ubuntu0.5`): its security fixes may be
    /// backported, so upstream version ranges may not hold for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packaged: Option<Packaged>,
}

/// A distribution's package, as a banner names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Packaged {
    /// `Ubuntu` or `Debian`.
    pub distribution: String,
    /// The Debian revision of the package when the banner shows it (`4ubuntu0.5`,
    /// `1~deb10u1`), checked to be one.
    pub revision: Option<String>,
}

/// The longest package revision read from a banner.
const MAX_REVISION: usize = 64;

impl Packaged {
    /// The distribution package `text` (a header value or banner in which `version` was
    /// seen) names: a revision after the version (`PHP/7.4.3-4ubuntu2.19`,
    /// `5.7.33-0ubuntu0.18.04.1`), after the distribution's name (`OpenSSH_8.2p1
    /// Ubuntu-4ubuntu0.5`, `OpenSSH_7.9p1 Debian-10+deb10u2`), or the name alone
    /// (`Apache/2.4.41 (Ubuntu)`). Only Ubuntu and Debian are recognised.
    pub fn in_text(text: &str, version: Option<&str>) -> Option<Packaged> {
        let revision_ok = |r: &str| {
            !r.is_empty()
                && r.len() <= MAX_REVISION
                && r.starts_with(|c: char| c.is_ascii_digit())
                && r.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '~'))
        };
        let family = |r: &str| {
            let lower = r.to_ascii_lowercase();
            if lower.contains("ubuntu") {
                Some("Ubuntu")
            } else if lower.contains("deb") {
                Some("Debian")
            } else {
                None
            }
        };
        let token_end =
            |t: &str| t.find(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | ')' | '(')).unwrap_or(t.len());
        // A revision after the version: in the version itself, or right after it in the text.
        if let Some(v) = version {
            let after = match v.split_once('-') {
                Some((_, rev)) => Some(rev.to_owned()),
                None => text.find(v).and_then(|at| {
                    let rest = text[at + v.len()..].strip_prefix('-')?;
                    Some(rest[..token_end(rest)].to_owned())
                }),
            };
            if let Some(rev) = after.filter(|r| revision_ok(r))
                && let Some(distribution) = family(&rev)
            {
                return Some(Packaged { distribution: distribution.to_owned(), revision: Some(rev) });
            }
        }
        for distribution in ["Ubuntu", "Debian"] {
            let Some(at) = text.find(distribution) else { continue };
            let rest = &text[at + distribution.len()..];
            let revision = rest.strip_prefix('-').map(|r| &r[..token_end(r)]).filter(|r| revision_ok(r));
            let alone = rest.is_empty() || rest.starts_with(|c: char| !c.is_ascii_alphanumeric());
            if revision.is_some() || alone {
                return Some(Packaged { distribution: distribution.to_owned(), revision: revision.map(str::to_owned) });
            }
        }
        None
    }

    /// The package's version: `upstream` and the revision (`8.2p1-4ubuntu0.5`), without
    /// an epoch, which a banner never shows. `None` without a revision.
    pub fn version(&self, upstream: &str) -> Option<String> {
        self.revision.as_ref().map(|r| format!("{upstream}-{r}"))
    }
}

impl Software {
    pub fn cpe(&self) -> Option<&str> {
        self.cpes.first().map(String::as_str)
    }

    /// A component of the SBOM: it names a product.
    pub fn is_component(&self) -> bool {
        !self.cpes.is_empty() || self.purl.is_some()
    }

    /// `name version` (or the name alone): the subject of its findings.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The release part of a detected version: leading digits, dots and letters up to a
/// distribution or build suffix (`-`, `+`, `~`, `_`, space, `(`).
pub fn release_version(raw: &str) -> Option<String> {
    let v = raw.trim().trim_start_matches(['v', 'V']);
    let end = v.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).unwrap_or(v.len());
    let v = v[..end].trim_end_matches('.');
    (v.starts_with(|c: char| c.is_ascii_digit()) && v.len() <= 32).then(|| v.to_owned())
}

/// A CPE 2.3 formatted-string value: characters other than letters, digits, `_`, `-`
/// and `.` are quoted (NISTIR 7695 §6.2).
fn cpe_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') {
            out.push('\\');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// `cpe:2.3:a:f5:nginx` + `1.18.0` → `cpe:2.3:a:f5:nginx:1.18.0:*:*:*:*:*:*:*`.
pub fn cpe_name(prefix: &str, version: Option<&str>) -> String {
    let v = version.map_or_else(|| "*".to_owned(), cpe_value);
    format!("{prefix}:{v}:*:*:*:*:*:*:*")
}

/// `pkg:npm/jquery` + `1.12.4` → `pkg:npm/jquery@1.12.4`.
fn purl_with(purl: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => {
            let enc: String = v
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || ".-_~".contains(c) {
                        c.to_string()
                    } else {
                        format!("%{:02X}", c as u32 & 0xff)
                    }
                })
                .collect();
            format!("{purl}@{enc}")
        }
        None => purl.to_owned(),
    }
}

/// The software of a host from its detections (one entry per name and version).
pub fn from_detections(host: &str, detections: &[Detection]) -> Vec<Software> {
    let mut out: Vec<Software> = Vec::new();
    for d in detections {
        let release = d.version.as_deref().and_then(release_version);
        let cpes = d.cpes.iter().map(|p| cpe_name(p, release.as_deref())).collect();
        let purl = d.purl.as_deref().map(|p| purl_with(p, release.as_deref()));
        let s = Software {
            host: host.to_owned(),
            name: d.name.clone(),
            version: d.version.clone(),
            categories: d.categories.clone(),
            cpes,
            purl,
            confidence: d.confidence,
            evidence: d.evidence.clone(),
            packaged: d.packaged.clone(),
        };
        merge(&mut out, s);
    }
    out
}

/// Adds `s` to `all`, folding it into an entry of the same host, name and version (a
/// versionless sighting is folded into a versioned one of the same name).
pub fn merge(all: &mut Vec<Software>, s: Software) {
    let same = |o: &Software| o.host == s.host && o.name == s.name;
    if let Some(o) = all.iter_mut().find(|o| same(o) && o.version == s.version) {
        o.confidence = o.confidence.max(s.confidence);
        if o.packaged.as_ref().is_none_or(|p| p.revision.is_none()) && s.packaged.is_some() {
            o.packaged = s.packaged.clone().or(o.packaged.take());
        }
        if !o.evidence.contains(&s.evidence) && o.evidence.len() < 400 {
            o.evidence = format!("{}; {}", o.evidence, s.evidence);
        }
        return;
    }
    if s.version.is_none() && all.iter().any(|o| same(o) && o.version.is_some()) {
        return;
    }
    if s.version.is_some() {
        all.retain(|o| !(same(o) && o.version.is_none()));
    }
    all.push(s);
}

/// A release cycle of an endoflife.date product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    pub name: String,
    /// `Some(true)`/`Some(false)` when given as a flag.
    pub eol_flag: Option<bool>,
    pub eol_date: Option<Date>,
    pub latest: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EolProduct {
    pub name: String,
    pub title: String,
    pub cpes: Vec<String>,
    pub purls: Vec<String>,
    pub cycles: Vec<Cycle>,
}

/// What the lifecycle data says of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lifecycle {
    pub product: String,
    pub cycle: String,
    pub end_of_life: bool,
    pub eol_date: Option<String>,
    pub latest: Option<String>,
    pub outdated: bool,
}

/// Lifecycle data of many products, indexed.
#[derive(Debug, Clone, Default)]
pub struct Eol {
    products: Vec<EolProduct>,
    by_cpe: HashMap<String, usize>,
    by_purl: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
}

#[derive(Debug, thiserror::Error)]
#[error("endoflife data: {0}")]
pub struct EolError(String);

fn date(s: &str) -> Option<Date> {
    Date::parse(s.get(..10)?, time::macros::format_description!("[year]-[month]-[day]")).ok()
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One product object in any of the shapes endoflife.date publishes: the converted
/// product files (`releases[].releaseCycle/eol/latest`), the v1 API product
/// (`result.releases[].name/isEol/eolFrom/latest.name`) or the legacy API cycle list
/// (`[{"cycle", "eol", "latest"}]`, named by `name`).
fn parse_product(name: &str, v: &Value) -> Option<EolProduct> {
    let v = v.get("result").unwrap_or(v);
    let (releases, meta) = match v {
        Value::Array(a) => (a.as_slice(), None),
        Value::Object(o) => (o.get("releases")?.as_array()?.as_slice(), Some(o)),
        _ => return None,
    };
    let mut p = EolProduct {
        name: name.to_owned(),
        title: meta
            .and_then(|o| text(o.get("title")).or_else(|| text(o.get("label"))))
            .unwrap_or_else(|| name.to_owned()),
        cpes: Vec::new(),
        purls: Vec::new(),
        cycles: Vec::new(),
    };
    if let Some(ids) = meta.and_then(|o| o.get("identifiers")).and_then(Value::as_array) {
        for id in ids {
            // {"cpe": "..."} or {"type": "cpe", "id": "..."} (v1 API).
            let (kind, value) = match (id.get("type").and_then(Value::as_str), text(id.get("id"))) {
                (Some(k), Some(v)) => (k.to_owned(), v),
                _ => match id.as_object().and_then(|o| o.iter().next()) {
                    Some((k, v)) => (k.clone(), v.as_str().unwrap_or_default().to_owned()),
                    None => continue,
                },
            };
            match kind.as_str() {
                "cpe" => p.cpes.extend(cpe_prefix(&value)),
                "purl" => p.purls.push(value.split('@').next().unwrap_or_default().to_ascii_lowercase()),
                _ => {}
            }
        }
    }
    for r in releases {
        let Some(cycle) = text(r.get("releaseCycle")).or_else(|| text(r.get("cycle"))).or_else(|| text(r.get("name")))
        else {
            continue;
        };
        let (eol_flag, eol_date) = match r.get("eol").or_else(|| r.get("eolFrom")) {
            Some(Value::Bool(b)) => (Some(*b), None),
            Some(Value::String(s)) => (None, date(s)),
            _ => (r.get("isEol").and_then(Value::as_bool), None),
        };
        let latest = match r.get("latest") {
            Some(Value::Object(o)) => text(o.get("name")),
            other => text(other),
        };
        p.cycles.push(Cycle { name: cycle, eol_flag, eol_date, latest });
    }
    Some(p)
}

impl Eol {
    /// Parses an endoflife.date document: a map of products (`{name: product}`), one
    /// product (named by `fallback_name`, its `permalink` or `result.name`), or a cycle
    /// list. Returns `(name, product JSON)` rows for the store.
    pub fn rows(text: &str, fallback_name: &str) -> Result<Vec<(String, String)>, EolError> {
        let v: Value = serde_json::from_str(text).map_err(|e| EolError(e.to_string()))?;
        let single = v.get("releases").is_some() || v.get("result").is_some() || v.is_array();
        let mut out = Vec::new();
        if single {
            let name = text_of(&v, "permalink")
                .map(|p| p.trim_start_matches('/').to_owned())
                .or_else(|| v.get("result").and_then(|r| text_of(r, "name")))
                .unwrap_or_else(|| fallback_name.to_owned());
            parse_product(&name, &v).ok_or_else(|| EolError(format!("{name}: no release cycles")))?;
            out.push((name, v.to_string()));
        } else {
            let map = v.as_object().ok_or_else(|| EolError("expected an object of products".into()))?;
            for (name, product) in map {
                if parse_product(name, product).is_some_and(|p| !p.cycles.is_empty()) {
                    out.push((name.clone(), product.to_string()));
                }
            }
        }
        if out.is_empty() {
            return Err(EolError("no product with release cycles".into()));
        }
        Ok(out)
    }

    /// Lifecycle data from stored rows; rows that do not parse are skipped.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str)>) -> Eol {
        let mut eol = Eol::default();
        for (name, json) in rows {
            if let Ok(v) = serde_json::from_str::<Value>(json)
                && let Some(p) = parse_product(name, &v)
            {
                eol.add(p);
            }
        }
        eol
    }

    fn add(&mut self, p: EolProduct) {
        let i = self.products.len();
        for c in &p.cpes {
            self.by_cpe.entry(c.clone()).or_insert(i);
        }
        for u in &p.purls {
            self.by_purl.entry(u.clone()).or_insert(i);
        }
        self.by_name.entry(p.name.to_ascii_lowercase()).or_insert(i);
        self.by_name.entry(p.title.to_ascii_lowercase()).or_insert(i);
        self.products.push(p);
    }

    pub fn len(&self) -> usize {
        self.products.len()
    }

    pub fn is_empty(&self) -> bool {
        self.products.is_empty()
    }

    fn product_of(&self, s: &Software) -> Option<&EolProduct> {
        let by_cpe = s.cpes.iter().filter_map(|c| cpe_prefix(c)).find_map(|p| self.by_cpe.get(&p));
        let by_purl = || {
            let p = s.purl.as_deref()?.split('@').next()?.to_ascii_lowercase();
            self.by_purl.get(&p)
        };
        let by_name = || self.by_name.get(&s.name.to_ascii_lowercase());
        by_cpe.or_else(by_purl).or_else(by_name).map(|&i| &self.products[i])
    }

    /// The lifecycle of `s` on `today`; none without a version, a product or a cycle.
    pub fn lifecycle(&self, s: &Software, today: Date) -> Option<Lifecycle> {
        let version = release_version(s.version.as_deref()?)?;
        let p = self.product_of(s)?;
        let lower = version.to_ascii_lowercase();
        let cycle = p
            .cycles
            .iter()
            .filter(|c| {
                let name = c.name.to_ascii_lowercase();
                lower == name
                    || lower.strip_prefix(&name).is_some_and(|rest| {
                        let next = rest.chars().next().unwrap_or('.');
                        // A cycle `1.2` is not a prefix of `1.20`; `1.0.1` is of `1.0.1f`.
                        !next.is_ascii_digit() && (next == '.' || !name.ends_with(|c: char| c.is_ascii_alphabetic()))
                    })
            })
            .max_by_key(|c| c.name.len())?;
        let end_of_life = cycle.eol_flag.unwrap_or(false) || cycle.eol_date.is_some_and(|d| d <= today);
        let outdated =
            !end_of_life && cycle.latest.as_deref().is_some_and(|l| Version::parse(l) > Version::parse(&version));
        Some(Lifecycle {
            product: p.title.clone(),
            cycle: cycle.name.clone(),
            end_of_life,
            eol_date: cycle.eol_date.map(|d| d.to_string()),
            latest: cycle.latest.clone(),
            outdated,
        })
    }
}

fn text_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Applications grouped for reporting: `name → hosts`.
pub fn hosts_by_name(software: &[Software]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in software {
        let hosts = out.entry(s.label()).or_default();
        if !hosts.contains(&s.host) {
            hosts.push(s.host.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_banner_names_its_distribution_package() {
        let p =
            |text: &str, version: Option<&str>| Packaged::in_text(text, version).map(|p| (p.distribution, p.revision));
        let pkg = |d: &str, r: Option<&str>| Some((d.to_owned(), r.map(str::to_owned)));
        assert_eq!(p("SSH-2.0-OpenSSH_8.2p1 Ubuntu-4ubuntu0.5", Some("8.2p1")), pkg("Ubuntu", Some("4ubuntu0.5")));
        assert_eq!(p("SSH-2.0-OpenSSH_7.9p1 Debian-10+deb10u2", Some("7.9p1")), pkg("Debian", Some("10+deb10u2")));
        assert_eq!(p("Apache/2.4.41 (Ubuntu)", Some("2.4.41")), pkg("Ubuntu", None));
        assert_eq!(p("Apache/2.4.7 (Ubuntu) OpenSSL/1.0.1f", Some("1.0.1f")), pkg("Ubuntu", None));
        assert_eq!(p("nginx/1.18.0 (Debian)", Some("1.18.0")), pkg("Debian", None));
        assert_eq!(p("PHP/7.4.3-4ubuntu2.19", Some("7.4.3")), pkg("Ubuntu", Some("4ubuntu2.19")));
        assert_eq!(p("PHP/7.3.31-1~deb10u1", Some("7.3.31")), pkg("Debian", Some("1~deb10u1")));
        assert_eq!(
            p("5.7.33-0ubuntu0.18.04.1", Some("5.7.33-0ubuntu0.18.04.1")),
            pkg("Ubuntu", Some("0ubuntu0.18.04.1"))
        );
        for plain in
            ["nginx/1.18.0", "Apache/2.4.49 (Unix)", "SSH-2.0-OpenSSH_9.9", "Apache/2.4.41 (Ubuntuish)", "PHP/8.1.2-1"]
        {
            assert_eq!(p(plain, Some("1.18.0")), None, "{plain}");
        }
        // A revision that is not one is not kept.
        assert_eq!(p("SSH-2.0-OpenSSH_8.2p1 Ubuntu-<script>", Some("8.2p1")), pkg("Ubuntu", None));
        let long = format!("SSH-2.0-OpenSSH_8.2p1 Ubuntu-4{}", "1".repeat(100));
        assert_eq!(p(&long, Some("8.2p1")), pkg("Ubuntu", None));
        let pk = Packaged { distribution: "Ubuntu".into(), revision: Some("4ubuntu0.5".into()) };
        assert_eq!(pk.version("8.2p1").as_deref(), Some("8.2p1-4ubuntu0.5"));
    }

    use super::*;

    fn sw(name: &str, version: Option<&str>, cpe: &str) -> Software {
        Software {
            host: "www.x.test".into(),
            name: name.into(),
            version: version.map(str::to_owned),
            categories: vec![],
            cpes: vec![cpe_name(cpe, version.and_then(release_version).as_deref())],
            purl: None,
            confidence: 100,
            evidence: String::new(),
            packaged: None,
        }
    }

    fn eol() -> Eol {
        let doc = r#"{
          "nginx": {"title": "nginx", "identifiers": [{"cpe": "cpe:2.3:a:f5:nginx"}],
                    "releases": [{"releaseCycle": "1.24", "eol": "2024-04-23", "latest": "1.24.0"},
                                 {"releaseCycle": "1.2", "eol": "2013-04-24", "latest": "1.2.9"},
                                 {"releaseCycle": "1.31", "eol": false, "latest": "1.31.4"}]},
          "openssl": {"title": "OpenSSL", "identifiers": [{"cpe": "cpe:/a:openssl:openssl"}],
                      "releases": [{"releaseCycle": "1.0.1", "eol": "2016-12-31", "latest": "1.0.1u"},
                                   {"releaseCycle": "1.0.2", "eol": "2019-12-31", "latest": "1.0.2u"}]},
          "jquery": {"title": "jQuery", "identifiers": [{"purl": "pkg:npm/jquery"}],
                     "releases": [{"releaseCycle": "1", "eol": true, "latest": "1.12.4"}, {"releaseCycle": "3", "eol": false, "latest": "3.7.1"}]}
        }"#;
        let rows = Eol::rows(doc, "x").unwrap();
        Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())))
    }

    #[test]
    fn release_versions() {
        assert_eq!(release_version("5.7.33-0ubuntu0.18.04.1").as_deref(), Some("5.7.33"));
        assert_eq!(release_version("1.0.1f").as_deref(), Some("1.0.1f"));
        assert_eq!(release_version("8.9p1").as_deref(), Some("8.9p1"));
        assert_eq!(release_version("v2.4.1").as_deref(), Some("2.4.1"));
        assert_eq!(release_version("10.6.12-MariaDB").as_deref(), Some("10.6.12"));
        assert_eq!(release_version("latest"), None);
    }

    #[test]
    fn cpe_names_quote_and_carry_the_version() {
        assert_eq!(cpe_name("cpe:2.3:a:f5:nginx", Some("1.18.0")), "cpe:2.3:a:f5:nginx:1.18.0:*:*:*:*:*:*:*");
        assert_eq!(cpe_name("cpe:2.3:a:x:y", None), "cpe:2.3:a:x:y:*:*:*:*:*:*:*:*");
        assert_eq!(cpe_name("cpe:2.3:a:x:y", Some("1:2")), "cpe:2.3:a:x:y:1\\:2:*:*:*:*:*:*:*");
        assert!(model::Cpe::parse(&cpe_name("cpe:2.3:a:x:y", Some("1.0+b"))).is_ok());
    }

    #[test]
    fn cycles_end_of_life_and_outdated() {
        let today = Date::from_calendar_date(2026, time::Month::November, 1).unwrap();
        let e = eol();
        let l = e.lifecycle(&sw("Nginx", Some("1.24.0"), "cpe:2.3:a:f5:nginx"), today).unwrap();
        assert_eq!((l.cycle.as_str(), l.end_of_life, l.outdated), ("1.24", true, false));
        // 1.2 is not the cycle of 1.20.x, and no cycle is no lifecycle.
        assert_eq!(e.lifecycle(&sw("Nginx", Some("1.20.1"), "cpe:2.3:a:f5:nginx"), today), None);
        let l = e.lifecycle(&sw("Nginx", Some("1.31.0"), "cpe:2.3:a:f5:nginx"), today).unwrap();
        assert_eq!((l.end_of_life, l.outdated, l.latest.as_deref()), (false, true, Some("1.31.4")));
        let l = e.lifecycle(&sw("OpenSSL", Some("1.0.1f"), "cpe:2.3:a:openssl:openssl"), today).unwrap();
        assert_eq!((l.cycle.as_str(), l.end_of_life), ("1.0.1", true));
        // By package URL when no CPE is known, and a flag instead of a date.
        let mut jq = sw("jQuery", Some("1.12.4"), "cpe:2.3:a:nope:nope");
        jq.purl = Some("pkg:npm/jquery@1.12.4".into());
        assert!(e.lifecycle(&jq, today).unwrap().end_of_life);
        // Before the end-of-life date the cycle is alive.
        let early = Date::from_calendar_date(2024, time::Month::April, 22).unwrap();
        assert!(!e.lifecycle(&sw("Nginx", Some("1.24.0"), "cpe:2.3:a:f5:nginx"), early).unwrap().end_of_life);
        // No version, no verdict.
        assert_eq!(e.lifecycle(&sw("Nginx", None, "cpe:2.3:a:f5:nginx"), today), None);
    }

    #[test]
    fn findings_one_per_component() {
        let today = Date::from_calendar_date(2026, time::Month::November, 1).unwrap();
        let all = vec![
            sw("Nginx", Some("1.24.0"), "cpe:2.3:a:f5:nginx"),
            sw("OpenSSL", Some("1.0.1f"), "cpe:2.3:a:openssl:openssl"),
            sw("Nginx", Some("1.31.0"), "cpe:2.3:a:f5:nginx"),
        ];
        let f = crate::checks::sbom::sbom_findings(&all, &eol(), today);
        let codes: Vec<(&str, Option<&str>)> = f.iter().map(|f| (f.code.as_str(), f.component.as_deref())).collect();
        assert_eq!(
            codes,
            vec![
                ("sbom.end_of_life", Some("Nginx 1.24.0")),
                ("sbom.end_of_life", Some("OpenSSL 1.0.1f")),
                ("sbom.outdated", Some("Nginx 1.31.0"))
            ]
        );
    }

    #[test]
    fn other_shapes_of_the_data() {
        let v1 = r#"{"result": {"name": "redis", "label": "Redis", "identifiers": [{"type": "cpe", "id": "cpe:2.3:a:redis:redis"}],
                     "releases": [{"name": "5.0", "isEol": true, "eolFrom": "2022-04-27", "latest": {"name": "5.0.14"}}]}}"#;
        let rows = Eol::rows(v1, "x").unwrap();
        assert_eq!(rows[0].0, "redis");
        let e = Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        let today = Date::from_calendar_date(2026, time::Month::November, 1).unwrap();
        assert!(e.lifecycle(&sw("Redis", Some("5.0.7"), "cpe:2.3:a:redis:redis"), today).unwrap().end_of_life);
        let legacy = r#"[{"cycle": "4.92", "eol": "2019-12-08", "latest": "4.92.3"}]"#;
        let rows = Eol::rows(legacy, "exim").unwrap();
        let e = Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        assert!(e.lifecycle(&sw("Exim", Some("4.92"), "cpe:2.3:a:exim:exim"), today).unwrap().end_of_life);
        assert!(Eol::rows("{}", "x").is_err());
        assert!(Eol::rows("not json", "x").is_err());
    }
}
