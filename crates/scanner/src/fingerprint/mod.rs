//! The fingerprint engine: what software a host runs, from what it shows.
//!
//! An [`Observation`] is what one response or service showed (headers, cookies, HTML
//! with its meta tags and script URLs, a TCP banner, the product a protocol probe
//! identified). [`analyze`] matches it against a [`RuleSet`] — the built-in rules
//! (`builtin.json`, Wappalyzer's format with our extensions) and any imported
//! Wappalyzer technologies — and returns [`Detection`]s with a version where the
//! evidence carries one, a confidence (0–100, Wappalyzer's sum of pattern confidences),
//! the categories, CPE prefixes and package URL of the technology, and the evidence.
//! `implies` adds technologies (never a version), `requires` and `excludes` are honoured.

mod rules;

use std::collections::BTreeMap;

use crate::software::Packaged;

pub use rules::{LoadReport, RuleSet, RulesError, Technology, cpe_prefix, wappalyzer_rows, with_category_names};

/// The most of a page the engine looks at (patterns run over it).
const MAX_HTML: usize = 512 * 1024;
/// The most meta tags and scripts taken from one page.
const MAX_TAGS: usize = 512;
/// Implication depth followed.
const MAX_IMPLY_DEPTH: usize = 4;

/// What one response or service showed.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    pub url: Option<String>,
    /// Header names lower case; repeated headers as separate entries.
    pub headers: Vec<(String, String)>,
    pub cookies: Vec<(String, String)>,
    pub html: String,
    pub meta: Vec<(String, String)>,
    pub script_src: Vec<String>,
    pub scripts: Vec<String>,
    /// The text a TCP service sent (or answered to a probe).
    pub banner: Option<String>,
    /// (product, version) a protocol probe identified.
    pub products: Vec<(String, Option<String>)>,
    /// The host's favicon hash ([`favicon_hash`]).
    pub favicon: Option<i32>,
}

/// The favicon hash Shodan indexes (`http.favicon.hash`): MurmurHash3 (x86, 32 bits,
/// seed 0, signed) of the icon's base64 with a line break every 76 characters and at
/// the end (Python's `base64.encodebytes`).
pub fn favicon_hash(icon: &[u8]) -> i32 {
    use base64::Engine as _;
    let flat = base64::engine::general_purpose::STANDARD.encode(icon);
    let mut text = String::with_capacity(flat.len() + flat.len() / 76 + 1);
    for chunk in flat.as_bytes().chunks(76) {
        text.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        text.push('\n');
    }
    murmur3::murmur3_32(&mut std::io::Cursor::new(text.as_bytes()), 0).unwrap_or_default() as i32
}

impl Observation {
    /// An HTTP response: headers, cookies from `Set-Cookie`, and the page's meta tags,
    /// script URLs and inline scripts.
    pub fn http(url: &str, headers: &reqwest::header::HeaderMap, body: &str) -> Observation {
        let headers: Vec<(String, String)> = headers
            .iter()
            .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str().to_ascii_lowercase(), v.to_owned())))
            .collect();
        Observation::from_parts(url, headers, body)
    }

    /// [`Observation::http`] from plain header pairs.
    pub fn from_parts(url: &str, headers: Vec<(String, String)>, body: &str) -> Observation {
        let mut html = body;
        if html.len() > MAX_HTML {
            let mut end = MAX_HTML;
            while !html.is_char_boundary(end) {
                end -= 1;
            }
            html = &html[..end];
        }
        let headers: Vec<(String, String)> = headers.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        let cookies = headers
            .iter()
            .filter(|(k, _)| k == "set-cookie")
            .flat_map(|(_, v)| v.lines())
            .filter_map(|c| {
                let pair = c.split(';').next()?.trim();
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (!name.is_empty()).then(|| (name.to_ascii_lowercase(), value.to_owned()))
            })
            .collect();
        let (meta, script_src, scripts) = page_tags(html);
        Observation {
            url: Some(url.to_owned()),
            headers,
            cookies,
            html: html.to_owned(),
            meta,
            script_src,
            scripts,
            banner: None,
            products: Vec::new(),
            favicon: None,
        }
    }

    /// A TCP service: its banner and what a protocol probe made of it.
    pub fn service(banner: &str, product: Option<&str>, version: Option<&str>) -> Observation {
        Observation {
            banner: (!banner.trim().is_empty()).then(|| banner.to_owned()),
            products: product.map(|p| (p.to_owned(), version.map(str::to_owned))).into_iter().collect(),
            ..Observation::default()
        }
    }
}

/// One technology found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Detection {
    pub name: String,
    pub version: Option<String>,
    pub confidence: u8,
    pub categories: Vec<String>,
    /// CPE 2.3 prefixes (`cpe:2.3:a:f5:nginx`), the primary first.
    pub cpes: Vec<String>,
    pub purl: Option<String>,
    /// What was seen, e.g. `header server: nginx/1.18.0`.
    pub evidence: String,
    /// The distribution package the text it was seen in names (`software::Packaged`).
    pub packaged: Option<Packaged>,
}

/// The attributes of an HTML tag starting at `tag` (lower-case names; values unquoted).
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = tag.as_bytes();
    // Skip the element name.
    let mut i = b.iter().position(|c| c.is_ascii_whitespace()).unwrap_or(b.len());
    while i < b.len() && out.len() < 32 {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'>' && b[i] != b'/' {
            i += 1;
        }
        if start == i {
            break;
        }
        let name = tag[start..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                let ve = b[vs..].iter().position(|&c| c == q).map_or(b.len(), |p| vs + p);
                value = tag[vs..ve].to_owned();
                i = (ve + 1).min(b.len());
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                    i += 1;
                }
                value = tag[vs..i].to_owned();
            }
        }
        out.push((name, value));
    }
    out
}

/// Meta tags (name or property → content), script URLs and inline scripts of a page.
fn page_tags(html: &str) -> (Vec<(String, String)>, Vec<String>, Vec<String>) {
    let lower = html.to_ascii_lowercase();
    let (mut meta, mut src, mut inline) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 0;
    while let Some(p) = lower[at..].find('<') {
        let start = at + p;
        let Some(len) = lower[start..].find('>') else { break };
        let end = start + len;
        let tag = &html[start + 1..end];
        let tag_lower = &lower[start + 1..end];
        at = end + 1;
        if tag_lower.starts_with("meta") && meta.len() < MAX_TAGS {
            let attrs = attributes(tag);
            let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            if let (Some(name), Some(content)) = (get("name").or_else(|| get("property")), get("content")) {
                meta.push((name.to_ascii_lowercase(), content));
            }
        } else if tag_lower.starts_with("script") && src.len() + inline.len() < MAX_TAGS {
            let attrs = attributes(tag);
            match attrs.into_iter().find(|(n, _)| n == "src") {
                Some((_, url)) => src.push(url),
                None => {
                    let body_end = lower[at..].find("</script").map_or(lower.len(), |p| at + p);
                    let body = html[at..body_end].trim();
                    if !body.is_empty() {
                        inline.push(body.chars().take(64 * 1024).collect());
                    }
                    at = body_end;
                }
            }
        }
    }
    (meta, src, inline)
}

/// A match: version, confidence, evidence, and the distribution package the matched
/// text names.
struct Hit {
    version: Option<String>,
    confidence: u8,
    evidence: String,
    packaged: Option<Packaged>,
}

fn shorten(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= 120 { s.to_owned() } else { format!("{}…", s.chars().take(120).collect::<String>()) }
}

fn try_pattern(p: &rules::Pattern, text: &str, evidence: impl FnOnce() -> String, hits: &mut Vec<Hit>) {
    // Most patterns do not match: the cheaper test first, the capture groups on a hit.
    if !p.regex.is_match(text) {
        return;
    }
    if let Some(caps) = p.regex.captures(text) {
        let version = p.version_of(&caps);
        let packaged = Packaged::in_text(text, version.as_deref());
        hits.push(Hit { version, confidence: p.confidence, evidence: evidence(), packaged });
    }
}

fn match_technology(t: &Technology, o: &Observation) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (name, p) in &t.headers {
        for (_, value) in o.headers.iter().filter(|(k, _)| k == name) {
            try_pattern(p, value, || format!("header {name}: {}", shorten(value)), &mut hits);
        }
    }
    for (name, p) in &t.cookies {
        for (_, value) in o.cookies.iter().filter(|(k, _)| k == name) {
            try_pattern(p, value, || format!("cookie {name}"), &mut hits);
        }
    }
    for (name, p) in &t.meta {
        for (_, content) in o.meta.iter().filter(|(k, _)| k == name) {
            try_pattern(p, content, || format!("meta {name}: {}", shorten(content)), &mut hits);
        }
    }
    for p in &t.script_src {
        for url in &o.script_src {
            try_pattern(p, url, || format!("script {}", shorten(url)), &mut hits);
        }
    }
    for p in &t.scripts {
        for body in &o.scripts {
            try_pattern(p, body, || "inline script".to_owned(), &mut hits);
        }
    }
    if !o.html.is_empty() {
        for p in &t.html {
            if !p.regex.is_match(&o.html) {
                continue;
            }
            if let Some(caps) = p.regex.captures(&o.html) {
                let seen = caps.get(0).map_or("", |m| m.as_str());
                hits.push(Hit {
                    version: p.version_of(&caps),
                    confidence: p.confidence,
                    evidence: format!("page contains {}", shorten(seen)),
                    packaged: None,
                });
            }
        }
    }
    if let Some(url) = &o.url {
        for p in &t.url {
            try_pattern(p, url, || format!("url {}", shorten(url)), &mut hits);
        }
    }
    if let Some(hash) = o.favicon
        && t.favicon.contains(&hash)
    {
        hits.push(Hit { version: None, confidence: 100, evidence: format!("favicon hash {hash}"), packaged: None });
    }
    if let Some(banner) = &o.banner {
        let first = banner.lines().next().unwrap_or_default();
        for p in &t.banner {
            try_pattern(p, banner, || format!("banner {}", shorten(first)), &mut hits);
        }
    }
    hits
}

/// What is gathered of one technology: version, confidence, evidence, distribution package.
type Found = (Option<String>, u32, Vec<String>, Option<Packaged>);

/// The technologies an observation shows.
pub fn analyze(rules: &RuleSet, o: &Observation) -> Vec<Detection> {
    let mut found: BTreeMap<usize, Found> = BTreeMap::new();
    for (i, t) in rules.techs.iter().enumerate() {
        let hits = match_technology(t, o);
        if hits.is_empty() {
            continue;
        }
        let entry = found.entry(i).or_insert((None, 0, Vec::new(), None));
        for h in hits {
            entry.1 += u32::from(h.confidence);
            if entry.3.as_ref().is_none_or(|p| p.revision.is_none()) && h.packaged.is_some() {
                entry.3 = h.packaged;
            }
            // The most specific version wins (the longest; the first among equals).
            if let Some(v) = h.version
                && entry.0.as_ref().is_none_or(|cur| v.len() > cur.len())
            {
                entry.0 = Some(v);
            }
            if !entry.2.contains(&h.evidence) && entry.2.len() < 4 {
                entry.2.push(h.evidence);
            }
        }
    }
    for (product, version) in &o.products {
        let key = product.to_ascii_lowercase();
        let mut targets: Vec<usize> = rules.by_product.get(&key).cloned().unwrap_or_default();
        if targets.is_empty()
            && let Some(&i) = rules.by_name.get(&key)
        {
            targets.push(i);
        }
        for i in targets {
            let entry = found.entry(i).or_insert((None, 0, Vec::new(), None));
            entry.1 += 100;
            if entry.3.as_ref().is_none_or(|p| p.revision.is_none())
                && let Some(p) = o.banner.as_deref().and_then(|b| Packaged::in_text(b, version.as_deref()))
            {
                entry.3 = Some(p);
            }
            if let Some(v) = version
                && entry.0.as_ref().is_none_or(|cur| v.len() > cur.len())
            {
                entry.0 = Some(v.clone());
            }
            let ev = match version {
                Some(v) => format!("service identified as {product} {v}"),
                None => format!("service identified as {product}"),
            };
            if !entry.2.contains(&ev) {
                entry.2.push(ev);
            }
        }
    }
    // Implications, breadth first and bounded.
    let mut frontier: Vec<usize> = found.keys().copied().collect();
    for _ in 0..MAX_IMPLY_DEPTH {
        let mut next = Vec::new();
        for i in frontier {
            let parent = &rules.techs[i];
            for (implied, confidence) in &parent.implies {
                let Some(&j) = rules.by_name.get(&implied.to_ascii_lowercase()) else { continue };
                if found.contains_key(&j) {
                    continue;
                }
                found.insert(j, (None, u32::from(*confidence), vec![format!("implied by {}", parent.name)], None));
                next.push(j);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    let present = |name: &str| rules.by_name.get(&name.to_ascii_lowercase()).is_some_and(|j| found.contains_key(j));
    let excluded: Vec<usize> = found
        .keys()
        .flat_map(|&i| rules.techs[i].excludes.iter())
        .filter_map(|n| rules.by_name.get(&n.to_ascii_lowercase()).copied())
        .collect();
    let mut out: Vec<Detection> = found
        .iter()
        .filter(|(i, _)| !excluded.contains(i))
        .filter(|(i, _)| rules.techs[**i].requires.iter().all(|r| present(r)))
        .map(|(&i, (version, confidence, evidence, packaged))| {
            let t = &rules.techs[i];
            Detection {
                name: t.name.clone(),
                version: version.clone(),
                confidence: (*confidence).min(100) as u8,
                categories: t.categories.clone(),
                cpes: t.cpes.clone(),
                purl: t.purl.clone(),
                evidence: evidence.join("; "),
                packaged: packaged.clone(),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> RuleSet {
        RuleSet::from_json_text(
            r#"{"categories": {"1": {"name": "CMS"}, "22": {"name": "Web servers"}, "27": {"name": "Programming languages"}},
                "technologies": {
                  "WordPress": {"cats": [1], "meta": {"generator": "^WordPress ?([\\d.]+)?\\;version:\\1"},
                                "html": ["/wp-content/"], "implies": ["PHP"], "cpe": "cpe:2.3:a:wordpress:wordpress:*:*:*:*:*:*:*:*"},
                  "PHP": {"cats": [27], "headers": {"X-Powered-By": "^php/?([\\d.]+)?\\;version:\\1"}},
                  "Nginx": {"cats": [22], "headers": {"Server": "nginx(?:/([\\d.]+))?\\;version:\\1"}, "products": ["nginx"]},
                  "Ghost": {"cats": [1], "meta": {"generator": "^Ghost"}, "excludes": ["WordPress"]},
                  "Plugin": {"cats": [1], "html": ["wp-plugin"], "requires": ["Drupal"]},
                  "OpenSSH": {"cats": [22], "banner": "^SSH-[\\d.]+-OpenSSH_([\\w.]+)\\;version:\\1"}
                }}"#,
        )
        .unwrap()
        .0
    }

    #[test]
    fn headers_meta_html_and_implies() {
        let page = r#"<html><head><META name="generator" content="WordPress 5.8.1"><meta content="Ghost 5" name=generator>
            <script src="/wp-content/x.js"></script><script>var a=1;</script></head><body>wp-plugin</body></html>"#;
        let o = Observation::from_parts(
            "https://x.test/",
            vec![("Server".into(), "nginx/1.18.0".into()), ("X-Powered-By".into(), "PHP/7.4.3".into())],
            page,
        );
        assert_eq!(o.meta.len(), 2);
        assert_eq!(o.script_src, vec!["/wp-content/x.js"]);
        assert_eq!(o.scripts, vec!["var a=1;"]);
        let d = analyze(&rules(), &o);
        let names: Vec<(&str, Option<&str>)> = d.iter().map(|d| (d.name.as_str(), d.version.as_deref())).collect();
        // Ghost excludes WordPress; Plugin requires a Drupal that is absent.
        assert_eq!(names, vec![("Ghost", None), ("Nginx", Some("1.18.0")), ("PHP", Some("7.4.3"))]);
    }

    #[test]
    fn implied_technologies_have_no_version() {
        let o =
            Observation::from_parts("https://x.test/", vec![], r#"<meta name="generator" content="WordPress 6.4.2">"#);
        let d = analyze(&rules(), &o);
        let wp = d.iter().find(|d| d.name == "WordPress").unwrap();
        assert_eq!(wp.version.as_deref(), Some("6.4.2"));
        assert_eq!(wp.cpes, vec!["cpe:2.3:a:wordpress:wordpress"]);
        let php = d.iter().find(|d| d.name == "PHP").unwrap();
        assert_eq!((php.version.as_deref(), php.evidence.as_str()), (None, "implied by WordPress"));
    }

    #[test]
    fn banners_and_products() {
        let d = analyze(&rules(), &Observation::service("SSH-2.0-OpenSSH_8.9p1 Ubuntu-3", None, None));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].version.as_deref(), Some("8.9p1"));
        let d = analyze(&rules(), &Observation::service("", Some("NGINX"), Some("1.24.0")));
        assert_eq!((d[0].name.as_str(), d[0].version.as_deref()), ("Nginx", Some("1.24.0")));
        assert_eq!(d[0].evidence, "service identified as NGINX 1.24.0");
    }

    #[test]
    fn favicon_hashes_are_shodans() {
        // Values from Python: mmh3.hash(codecs.encode(data, "base64")).
        assert_eq!(favicon_hash(b"FAVICON-TEST"), 182488843);
        let long: Vec<u8> = (0..=255u8).cycle().take(768).collect();
        assert_eq!(favicon_hash(&long), 1836528006);
        let rules = RuleSet::from_json_text(
            r#"{"technologies": {"Jenkins": {"categories": ["CI"], "favicon": ["81586312", 182488843]}}}"#,
        )
        .unwrap()
        .0;
        let o = Observation { favicon: Some(182488843), ..Observation::default() };
        let d = analyze(&rules, &o);
        assert_eq!((d[0].name.as_str(), d[0].evidence.as_str()), ("Jenkins", "favicon hash 182488843"));
    }

    #[test]
    fn cookies_come_from_set_cookie_lines() {
        let o = Observation::from_parts(
            "https://x.test/",
            vec![("set-cookie".into(), "PHPSESSID=abc; path=/\nwp_session=1".into())],
            "",
        );
        assert_eq!(o.cookies, vec![("phpsessid".into(), "abc".into()), ("wp_session".into(), "1".into())]);
    }

    #[test]
    fn hostile_pages_do_not_panic() {
        for page in ["<", "<meta", "<script src=", "<script>", "<meta name='a' content=\"", "<<<>>>", "<script src='x'"]
        {
            let o = Observation::from_parts("u", vec![], page);
            let _ = analyze(&rules(), &o);
        }
        let big = "<p>é</p>".repeat(200_000);
        let o = Observation::from_parts("u", vec![], &big);
        assert!(o.html.len() <= MAX_HTML);
    }
}
