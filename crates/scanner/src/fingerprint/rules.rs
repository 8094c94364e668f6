//! Technology rules in the Wappalyzer 6.x format, compiled for the engine.
//!
//! One loader reads both our built-in rules (`builtin.json`) and a Wappalyzer
//! `technologies/*.json` + `categories.json` tree (`rampart import fingerprints DIR`).
//! Supported keys: `cats` (or `categories`, names), `cpe`, `website`, `headers`,
//! `cookies`, `meta`, `scriptSrc`, `scripts`, `html`, `url`, `implies`, `excludes`,
//! `requires`; our extensions: `banner` (patterns over a TCP service's banner),
//! `products` (the names a protocol probe reports), `favicon` (Shodan-style favicon
//! hashes), `cpes` (more CPE prefixes NVD files the product under) and `purl` (package
//! URL without version). Keys that need a browser
//! (`js`, `dom`, `css`, `xhr`) or other sources (`dns`, `robots`, `certIssuer`, `text`)
//! are counted as unsupported and skipped.
//!
//! A pattern is a regular expression, then `\;version:TEMPLATE` and `\;confidence:N`.
//! It is compiled case-insensitively with the `regex` crate (ASCII classes first, Unicode
//! when the pattern needs it); one that does not compile (lookaround, backreferences) is
//! skipped and reported, never fatal.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

/// Compiled-program bound per pattern: a hostile rule file cannot exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The largest rule file read.
const MAX_RULE_FILE: u64 = 32 * 1024 * 1024;

/// Why rules could not be loaded at all (single bad patterns are only reported).
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("{path}: {message}")]
    Read { path: String, message: String },
    #[error("{0}")]
    Format(String),
}

/// One pattern: where it is matched, the expression and how to read a version.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub(crate) regex: Regex,
    pub(crate) version: Option<String>,
    pub(crate) confidence: u8,
}

/// A technology: what it is and how it shows.
#[derive(Debug, Clone, Default)]
pub struct Technology {
    pub name: String,
    pub categories: Vec<String>,
    /// CPE 2.3 prefixes `cpe:2.3:PART:VENDOR:PRODUCT` (first = the primary one).
    pub cpes: Vec<String>,
    /// Package URL without a version.
    pub purl: Option<String>,
    pub website: Option<String>,
    pub(crate) headers: Vec<(String, Pattern)>,
    pub(crate) cookies: Vec<(String, Pattern)>,
    pub(crate) meta: Vec<(String, Pattern)>,
    pub(crate) script_src: Vec<Pattern>,
    pub(crate) scripts: Vec<Pattern>,
    pub(crate) html: Vec<Pattern>,
    pub(crate) url: Vec<Pattern>,
    pub(crate) banner: Vec<Pattern>,
    /// Lower-case product names a protocol probe reports for this technology.
    pub(crate) products: Vec<String>,
    /// Shodan-style favicon hashes (MurmurHash3 of the base64 of `/favicon.ico`).
    pub(crate) favicon: Vec<i32>,
    pub(crate) implies: Vec<(String, u8)>,
    pub(crate) excludes: Vec<String>,
    pub(crate) requires: Vec<String>,
}

/// What a load saw: counts, and the patterns and keys it could not use.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    pub technologies: usize,
    pub patterns: usize,
    /// (technology, pattern, why) for each pattern skipped.
    pub skipped: Vec<(String, String, String)>,
    /// Keys present but not evaluated (they need a browser or other sources), with counts.
    pub unsupported: BTreeMap<String, usize>,
}

/// A compiled rule set.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub(crate) techs: Vec<Technology>,
    pub(crate) by_name: HashMap<String, usize>,
    /// Lower-case product name → technologies reported under it.
    pub(crate) by_product: HashMap<String, Vec<usize>>,
}

const UNSUPPORTED: [&str; 9] = ["js", "dom", "css", "xhr", "dns", "robots", "certIssuer", "text", "probe"];

impl RuleSet {
    /// The rules written here (compiled once per process).
    pub fn builtin() -> &'static RuleSet {
        static RULES: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
        RULES.get_or_init(|| {
            let (rules, report) = RuleSet::from_json_text(include_str!("builtin.json")).unwrap_or_default();
            for (tech, pattern, why) in &report.skipped {
                tracing::warn!(tech, pattern, why, "built-in fingerprint pattern skipped");
            }
            rules
        })
    }

    /// Rules from one document `{"categories": {id: {"name"}}, "technologies": {name: {...}}}`.
    pub fn from_json_text(text: &str) -> Result<(RuleSet, LoadReport), RulesError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| RulesError::Format(e.to_string()))?;
        let categories = category_names(doc.get("categories"));
        let techs = doc
            .get("technologies")
            .and_then(Value::as_object)
            .ok_or_else(|| RulesError::Format("no \"technologies\" object".into()))?;
        let mut report = LoadReport::default();
        let mut set = RuleSet::default();
        for (name, spec) in techs {
            set.add(compile_technology(name, spec, &categories, &mut report));
        }
        report.technologies = set.techs.len();
        Ok((set, report))
    }

    /// A Wappalyzer tree: `DIR/categories.json` and `DIR/technologies/*.json` (or
    /// `DIR/src/...`, or a single `technologies.json` of older releases).
    pub fn load_wappalyzer_dir(dir: &Path) -> Result<(RuleSet, LoadReport), RulesError> {
        let (categories, specs) = wappalyzer_specs(dir)?;
        let mut report = LoadReport::default();
        let mut set = RuleSet::default();
        for (name, spec) in &specs {
            set.add(compile_technology(name, spec, &categories, &mut report));
        }
        report.technologies = set.techs.len();
        Ok((set, report))
    }

    /// Technologies as stored: `(name, JSON with category names resolved)` rows.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str)>) -> (RuleSet, LoadReport) {
        let mut report = LoadReport::default();
        let mut set = RuleSet::default();
        let none = BTreeMap::new();
        for (name, json) in rows {
            match serde_json::from_str::<Value>(json) {
                Ok(spec) => set.add(compile_technology(name, &spec, &none, &mut report)),
                Err(e) => report.skipped.push((name.to_owned(), String::new(), e.to_string())),
            }
        }
        report.technologies = set.techs.len();
        (set, report)
    }

    /// `other`'s technologies added; a name both define keeps this set's rule.
    pub fn merged(mut self, other: &RuleSet) -> RuleSet {
        for t in &other.techs {
            if !self.by_name.contains_key(&t.name.to_ascii_lowercase()) {
                self.add(t.clone());
            }
        }
        self
    }

    fn add(&mut self, tech: Technology) {
        let key = tech.name.to_ascii_lowercase();
        if let Some(&i) = self.by_name.get(&key) {
            // A later definition of the same name replaces the earlier one.
            self.techs[i] = tech;
            self.reindex();
            return;
        }
        let i = self.techs.len();
        for p in &tech.products {
            self.by_product.entry(p.clone()).or_default().push(i);
        }
        self.by_name.insert(key, i);
        self.techs.push(tech);
    }

    fn reindex(&mut self) {
        self.by_product.clear();
        for (i, t) in self.techs.iter().enumerate() {
            for p in &t.products {
                self.by_product.entry(p.clone()).or_default().push(i);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.techs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.techs.is_empty()
    }

    pub fn technology(&self, name: &str) -> Option<&Technology> {
        self.by_name.get(&name.to_ascii_lowercase()).map(|&i| &self.techs[i])
    }

    pub fn technologies(&self) -> impl Iterator<Item = &Technology> {
        self.techs.iter()
    }
}

fn read_error(path: &Path, e: std::io::Error) -> RulesError {
    RulesError::Read { path: path.display().to_string(), message: e.to_string() }
}

fn read_json(path: &Path) -> Result<Value, RulesError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| read_error(path, e))?;
    let mut text = String::new();
    file.take(MAX_RULE_FILE).read_to_string(&mut text).map_err(|e| read_error(path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| RulesError::Read { path: path.display().to_string(), message: e.to_string() })
}

fn category_names(v: Option<&Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(map) = v.and_then(Value::as_object) {
        for (id, c) in map {
            if let Some(name) = c.get("name").and_then(Value::as_str) {
                out.insert(id.clone(), name.to_owned());
            }
        }
    }
    out
}

/// The strings of a value that is a string or an array of strings.
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// `cpe:2.3:a:f5:nginx:*:…` (or `cpe:/a:f5:nginx`) → `cpe:2.3:a:f5:nginx`.
pub fn cpe_prefix(cpe: &str) -> Option<String> {
    let cpe = cpe.trim();
    let parts: Vec<&str> = if let Some(rest) = cpe.strip_prefix("cpe:2.3:") {
        rest.splitn(4, ':').take(3).collect()
    } else if let Some(rest) = cpe.strip_prefix("cpe:/") {
        rest.splitn(4, ':').take(3).collect()
    } else {
        return None;
    };
    let [part, vendor, product] = parts.as_slice() else { return None };
    let ok = |s: &str| !s.is_empty() && s != "*" && s != "-";
    (matches!(*part, "a" | "o" | "h") && ok(vendor) && ok(product))
        .then(|| format!("cpe:2.3:{part}:{}:{}", vendor.to_ascii_lowercase(), product.to_ascii_lowercase()))
}

fn compile_technology(
    name: &str,
    spec: &Value,
    categories: &BTreeMap<String, String>,
    report: &mut LoadReport,
) -> Technology {
    let mut t = Technology { name: name.to_owned(), ..Technology::default() };
    let Some(obj) = spec.as_object() else { return t };
    if let Some(Value::Array(ids)) = obj.get("cats") {
        for id in ids {
            let key = match id {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                _ => continue,
            };
            if let Some(c) = categories.get(&key) {
                t.categories.push(c.clone());
            }
        }
    }
    t.categories.extend(strings(obj.get("categories")));
    t.categories.dedup();
    t.cpes.extend(obj.get("cpe").and_then(Value::as_str).and_then(cpe_prefix));
    for extra in strings(obj.get("cpes")) {
        if let Some(p) = cpe_prefix(&extra)
            && !t.cpes.contains(&p)
        {
            t.cpes.push(p);
        }
    }
    t.purl = obj.get("purl").and_then(Value::as_str).filter(|p| p.starts_with("pkg:")).map(str::to_owned);
    t.website = obj.get("website").and_then(Value::as_str).map(str::to_owned);
    let mut compile = |raw: &str| -> Option<Pattern> {
        report.patterns += 1;
        match parse_pattern(raw) {
            Ok(p) => Some(p),
            Err(why) => {
                report.skipped.push((name.to_owned(), raw.to_owned(), why));
                None
            }
        }
    };
    for (key, out) in [("headers", &mut t.headers), ("cookies", &mut t.cookies), ("meta", &mut t.meta)] {
        if let Some(Value::Object(map)) = obj.get(key) {
            for (field, pats) in map {
                for raw in strings(Some(pats)) {
                    if let Some(p) = compile(&raw) {
                        out.push((field.to_ascii_lowercase(), p));
                    }
                }
            }
        }
    }
    for (key, out) in [
        ("scriptSrc", &mut t.script_src),
        ("scripts", &mut t.scripts),
        ("html", &mut t.html),
        ("url", &mut t.url),
        ("banner", &mut t.banner),
    ] {
        for raw in strings(obj.get(key)) {
            if let Some(p) = compile(&raw) {
                out.push(p);
            }
        }
    }
    t.products = strings(obj.get("products")).iter().map(|p| p.to_ascii_lowercase()).collect();
    t.favicon = match obj.get("favicon") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .collect(),
        Some(Value::String(s)) => s.trim().parse().ok().into_iter().collect(),
        Some(Value::Number(n)) => n.as_i64().and_then(|n| i32::try_from(n).ok()).into_iter().collect(),
        _ => Vec::new(),
    };
    for raw in strings(obj.get("implies")) {
        let (target, confidence) = split_confidence(&raw);
        t.implies.push((target, confidence));
    }
    t.excludes = strings(obj.get("excludes"));
    t.requires = strings(obj.get("requires"));
    for key in UNSUPPORTED {
        if obj.contains_key(key) {
            *report.unsupported.entry(key.to_owned()).or_default() += 1;
        }
    }
    t
}

/// `Name\;confidence:50` → (`Name`, 50).
fn split_confidence(raw: &str) -> (String, u8) {
    let mut parts = raw.split("\\;");
    let name = parts.next().unwrap_or_default().trim().to_owned();
    let mut confidence = 100;
    for tag in parts {
        if let Some(n) = tag.strip_prefix("confidence:") {
            confidence = n.trim().parse::<u8>().map_or(100, |n| n.min(100));
        }
    }
    (name, confidence)
}

/// Parses `regex\;version:\1\;confidence:50`.
pub(crate) fn parse_pattern(raw: &str) -> Result<Pattern, String> {
    let mut parts = raw.split("\\;");
    let expr = parts.next().unwrap_or_default();
    let mut version = None;
    let mut confidence = 100u8;
    for tag in parts {
        if let Some(v) = tag.strip_prefix("version:") {
            version = Some(v.to_owned()).filter(|v| !v.is_empty());
        } else if let Some(c) = tag.strip_prefix("confidence:") {
            confidence = c.trim().parse::<u8>().map_err(|_| format!("confidence {c:?} is not a number"))?.min(100);
        }
    }
    Ok(Pattern { regex: compile_regex(expr)?, version, confidence })
}

fn compile_regex(expr: &str) -> Result<Regex, String> {
    let build = |unicode: bool| {
        RegexBuilder::new(expr)
            .case_insensitive(true)
            .unicode(unicode)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
    };
    // ASCII classes are smaller and faster; a pattern with Unicode needs gets it.
    build(false)
        .or_else(|_| build(true))
        .map_err(|e| e.to_string().lines().last().unwrap_or_default().trim().to_owned())
}

impl Pattern {
    /// The version the template makes of a match (`\1`, and `\1?yes:no` ternaries).
    pub(crate) fn version_of(&self, caps: &regex::Captures<'_>) -> Option<String> {
        let template = self.version.as_deref()?;
        let mut out = template.to_owned();
        for i in (1..caps.len()).rev() {
            let value = caps.get(i).map_or("", |m| m.as_str());
            let marker = format!("\\{i}");
            // Ternary `\i?a:b`: a when group i matched something, else b.
            while let Some(pos) = out.find(&format!("{marker}?")) {
                let rest = &out[pos + marker.len() + 1..];
                let (yes, no) = rest.split_once(':').unwrap_or((rest, ""));
                let end = no.find(['\\', ';']).unwrap_or(no.len());
                let chosen = if value.is_empty() { &no[..end] } else { yes };
                let replaced = format!("{}{}{}", &out[..pos], chosen, &no[end..]);
                out = replaced;
            }
            out = out.replace(&marker, value);
        }
        let out = out.trim().to_owned();
        (!out.is_empty() && out.len() <= 64).then_some(out)
    }
}

/// Resolves category ids to names in a Wappalyzer technology object (what the store
/// keeps, so the rules load without the categories file).
pub fn with_category_names(spec: &Value, categories: &BTreeMap<String, String>) -> Value {
    let mut out: Map<String, Value> = spec.as_object().cloned().unwrap_or_default();
    if let Some(Value::Array(ids)) = out.remove("cats") {
        let mut names: Vec<Value> = strings(out.get("categories")).into_iter().map(Value::String).collect();
        for id in ids {
            let key = match &id {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                _ => continue,
            };
            if let Some(c) = categories.get(&key) {
                names.push(Value::String(c.clone()));
            }
        }
        out.insert("categories".into(), Value::Array(names));
    }
    Value::Object(out)
}

/// Category id → name, and the technology objects of a tree in file and name order.
type Specs = (BTreeMap<String, String>, Vec<(String, Value)>);

/// The category names and technology objects of a Wappalyzer tree, files in name order.
fn wappalyzer_specs(dir: &Path) -> Result<Specs, RulesError> {
    let root = if dir.join("src").join("technologies").is_dir() { dir.join("src") } else { dir.to_path_buf() };
    let categories = read_json(&root.join("categories.json")).map(|v| category_names(Some(&v))).unwrap_or_default();
    let mut files = Vec::new();
    let tech_dir = root.join("technologies");
    if tech_dir.is_dir() {
        for entry in std::fs::read_dir(&tech_dir).map_err(|e| read_error(&tech_dir, e))? {
            let path = entry.map_err(|e| read_error(&tech_dir, e))?.path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    } else if root.join("technologies.json").is_file() {
        files.push(root.join("technologies.json"));
    } else {
        return Err(RulesError::Format(format!("{}: no technologies/ folder or technologies.json", dir.display())));
    }
    files.sort();
    let mut specs = Vec::new();
    for path in files {
        let doc = read_json(&path)?;
        // technologies.json of old releases wraps the map.
        let map = doc.get("technologies").and_then(Value::as_object).or_else(|| doc.as_object());
        for (name, spec) in map.into_iter().flatten() {
            specs.push((name.clone(), spec.clone()));
        }
    }
    Ok((categories, specs))
}

/// The technologies of a Wappalyzer tree as `(name, JSON)` rows with category names
/// resolved, for the store; the report says what compiles.
pub fn wappalyzer_rows(dir: &Path) -> Result<(Vec<(String, String)>, LoadReport), RulesError> {
    let (categories, specs) = wappalyzer_specs(dir)?;
    let mut report = LoadReport::default();
    let mut rows = Vec::with_capacity(specs.len());
    for (name, spec) in &specs {
        compile_technology(name, spec, &categories, &mut report);
        rows.push((name.clone(), with_category_names(spec, &categories).to_string()));
        report.technologies += 1;
    }
    Ok((rows, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_carry_version_and_confidence() {
        let p = parse_pattern("nginx(?:/([\\d.]+))?\\;version:\\1\\;confidence:50").unwrap();
        assert_eq!(p.confidence, 50);
        let caps = p.regex.captures("NGINX/1.18.0").unwrap();
        assert_eq!(p.version_of(&caps).as_deref(), Some("1.18.0"));
        let caps = p.regex.captures("nginx").unwrap();
        assert_eq!(p.version_of(&caps), None);
    }

    #[test]
    fn ternary_templates() {
        let p = parse_pattern("foo(bar)?\\;version:\\1?2.x:1.x").unwrap();
        assert_eq!(p.version_of(&p.regex.captures("foobar").unwrap()).as_deref(), Some("2.x"));
        assert_eq!(p.version_of(&p.regex.captures("foo").unwrap()).as_deref(), Some("1.x"));
    }

    #[test]
    fn lookaround_is_reported_not_fatal() {
        let doc = r#"{"technologies": {"X": {"cats": [1], "html": ["a(?!b)", "<x-app"]}}}"#;
        let (set, report) = RuleSet::from_json_text(doc).unwrap();
        assert_eq!(set.len(), 1);
        assert_eq!(report.patterns, 2);
        assert_eq!(report.skipped.len(), 1);
        assert_eq!(set.technology("x").unwrap().html.len(), 1);
    }

    #[test]
    fn cpe_prefixes() {
        assert_eq!(cpe_prefix("cpe:2.3:a:f5:nginx:*:*:*:*:*:*:*:*").as_deref(), Some("cpe:2.3:a:f5:nginx"));
        assert_eq!(cpe_prefix("cpe:/a:Apache:http_server").as_deref(), Some("cpe:2.3:a:apache:http_server"));
        assert_eq!(cpe_prefix("cpe:2.3:a:*:nginx"), None);
        assert_eq!(cpe_prefix("nginx"), None);
    }

    #[test]
    fn the_builtin_rules_compile_whole() {
        let (set, report) = RuleSet::from_json_text(include_str!("builtin.json")).unwrap();
        assert!(report.skipped.is_empty(), "built-in patterns that do not compile: {:?}", report.skipped);
        assert!(set.len() >= 60, "{} technologies", set.len());
        for t in set.technologies() {
            assert!(!t.categories.is_empty(), "{} has no category", t.name);
            for (_, implied) in t.implies.iter().map(|(n, c)| (c, n)) {
                assert!(set.technology(implied).is_some(), "{} implies unknown {implied}", t.name);
            }
        }
    }
}
