//! Discovery: the hosts of a company domain, each with why it is attributed to the
//! company (the source and what was observed). Sources: the domain itself, its MX, NS
//! and SRV targets inside the domain, CNAMEs, a curated wordlist (names that a wildcard
//! record would answer anyway are not counted as found), an optional
//! certificate-transparency search, and — in the web round of a scan
//! (`probes::web`) — the SANs of the certificates the hosts serve and the links and
//! redirects of their pages.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use hickory_resolver::proto::rr::{RData, RecordType};
use serde::Serialize;

use crate::dns::{Dns, DnsError, host_name};

/// Host labels tried under every company domain: common service names.
pub const DEFAULT_WORDLIST: &[&str] = &[
    "www",
    "mail",
    "webmail",
    "smtp",
    "imap",
    "pop",
    "mx",
    "mta-sts",
    "autodiscover",
    "vpn",
    "remote",
    "gateway",
    "portal",
    "intranet",
    "intranet-old",
    "extranet",
    "partners",
    "supplier",
    "suppliers",
    "edi",
    "sftp",
    "ftp",
    "files",
    "share",
    "docs",
    "wiki",
    "confluence",
    "jira",
    "git",
    "gitlab",
    "ci",
    "jenkins",
    "build",
    "api",
    "api2",
    "app",
    "apps",
    "m",
    "mobile",
    "shop",
    "store",
    "pay",
    "billing",
    "checkout",
    "blog",
    "news",
    "press",
    "media",
    "video",
    "cdn",
    "static",
    "assets",
    "img",
    "login",
    "sso",
    "auth",
    "id",
    "account",
    "accounts",
    "admin",
    "administrator",
    "manage",
    "dashboard",
    "console",
    "cpanel",
    "panel",
    "monitor",
    "grafana",
    "kibana",
    "status",
    "search",
    "db",
    "sql",
    "mysql",
    "postgres",
    "redis",
    "cache",
    "mongo",
    "elastic",
    "backup",
    "dev",
    "development",
    "staging",
    "stage",
    "test",
    "testing",
    "qa",
    "uat",
    "demo",
    "beta",
    "old",
    "legacy",
    "legacyapp",
    "archive",
    "crm",
    "erp",
    "hr",
    "careers",
    "jobs",
    "apply",
    "support",
    "help",
    "helpdesk",
    "track",
    "tracking",
    "online",
    "reports",
    "analytics",
    "research",
    "research-db",
    "lims",
    "results",
    "claims",
    "scada",
    "ns1",
    "ns2",
    "promo",
];

/// Candidate names resolved at once.
const CONCURRENT_LOOKUPS: usize = 32;

/// SRV names whose targets are hosts of the domain.
const SRV_NAMES: &[&str] = &[
    "_imaps._tcp",
    "_imap._tcp",
    "_submission._tcp",
    "_submissions._tcp",
    "_pop3s._tcp",
    "_autodiscover._tcp",
    "_sip._tls",
    "_sip._tcp",
    "_sips._tcp",
    "_xmpp-server._tcp",
    "_xmpp-client._tcp",
    "_ldap._tcp",
    "_caldavs._tcp",
];

/// A host attributed to the company.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Asset {
    pub name: String,
    pub addresses: Vec<IpAddr>,
    /// How it was found: `domain`, `mx`, `ns`, `srv`, `cname`, `wordlist`, `certificate`
    /// (a SAN of a certificate the company's hosts serve), `link` (a link or redirect in
    /// one of its pages) or `ct` (certificate-transparency search).
    pub source: String,
    /// What was observed, e.g. `MX 10 mail.acme.test` or `A 127.78.1.2`.
    pub evidence: String,
    /// The name's CNAME target, when it has one (followed or not: a dangling CNAME is
    /// kept as an asset without addresses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cname: Option<String>,
}

/// A name to try, with the source and evidence that would attribute it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub source: String,
    /// Empty: the evidence is the name's addresses.
    pub evidence: String,
}

impl Candidate {
    pub fn new(name: impl Into<String>, source: &str, evidence: impl Into<String>) -> Candidate {
        Candidate { name: host_name(&name.into()), source: source.to_owned(), evidence: evidence.into() }
    }
}

/// Is `name` the domain or a name under it?
pub fn inside(name: &str, domain: &str) -> bool {
    name == domain || name.ends_with(&format!(".{domain}"))
}

/// A name a source offered that was not taken: it is not a host name (`model::Domain`
/// refuses it), or the scan's name budget was spent. Recorded on the scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The name as offered, made printable ([`crate::guard::printable`]).
    pub name: String,
    pub source: String,
    pub evidence: String,
    pub reason: String,
}

/// What resolving candidates gave: the hosts, and the names skipped.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub assets: Vec<Asset>,
    pub skipped: Vec<Skipped>,
    /// Candidates looked up (each costs DNS questions, whether it became a host or not).
    pub looked_up: usize,
    /// Candidates left unresolved because the name budget was spent.
    pub over_budget: usize,
    /// Candidates whose lookups had not finished by the deadline (left out).
    pub late: usize,
}

/// Why `name` is not a host name, or `None` when `model::Domain` takes it.
pub fn refusal(name: &str) -> Option<&'static str> {
    if model::Domain::parse(name).is_ok() {
        return None;
    }
    let bare = name.trim_end_matches('.');
    Some(if bare.parse::<IpAddr>().is_ok() {
        "an IP address, not a name"
    } else if bare.contains('\\') {
        "an escaped character (a label holding a dot, a backslash or a byte that is not printable)"
    } else if bare.len() > 253 {
        "longer than 253 characters"
    } else if bare.split('.').any(|l| l.len() > 63) {
        "a label longer than 63 characters"
    } else if !bare.contains('.') {
        "a single label"
    } else if bare.rsplit('.').next().is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit())) {
        "an all-numeric last label (reads as an IPv4 address)"
    } else {
        "not letters, digits and hyphens in dot-separated labels"
    })
}

/// The hosts of `domain` found in DNS and by the wordlist (one entry per name, the first
/// source that found it). `wildcard` is what [`wildcard_addresses`] answered for it;
/// at most `max_names` names are resolved, and those not resolved by `until` are left
/// out ([`Resolved::late`]).
pub async fn discover(
    dns: &Dns,
    domain: &str,
    wordlist: &[String],
    wildcard: &[IpAddr],
    max_names: usize,
    until: tokio::time::Instant,
) -> Result<Resolved, DnsError> {
    let domain = host_name(domain);
    let mut candidates = vec![Candidate::new(domain.clone(), "domain", "the company domain")];
    for r in dns.lookup(&domain, RecordType::MX).await? {
        if let RData::MX(mx) = &r.data {
            let host = host_name(&mx.exchange.to_ascii());
            candidates.push(Candidate::new(host.clone(), "mx", format!("MX {} {host}", mx.preference)));
        }
    }
    for r in dns.lookup(&domain, RecordType::NS).await? {
        if let RData::NS(ns) = &r.data {
            let host = host_name(&ns.0.to_ascii());
            candidates.push(Candidate::new(host.clone(), "ns", format!("NS {host}")));
        }
    }
    for srv in SRV_NAMES {
        let name = format!("{srv}.{domain}");
        for r in dns.lookup(&name, RecordType::SRV).await? {
            if let RData::SRV(s) = &r.data {
                let host = host_name(&s.target.to_ascii());
                candidates.push(Candidate::new(host.clone(), "srv", format!("{name} SRV {} {host}", s.port)));
            }
        }
    }
    for label in wordlist {
        candidates.push(Candidate::new(format!("{label}.{domain}"), "wordlist", String::new()));
    }
    Ok(resolve_candidates(dns, &domain, candidates, wildcard, &[], max_names, until).await)
}

/// The addresses a wildcard record under `domain` answers for any label (empty when
/// there is none): they do not make a wordlist name a host.
pub async fn wildcard_addresses(dns: &Dns, domain: &str) -> Vec<IpAddr> {
    dns.addresses(&format!("rampart-wildcard-probe-7f3c1.{domain}")).await.unwrap_or_default()
}

/// Sources whose names a record of the zone gives explicitly: such a name is a host even
/// when the zone's wildcard would answer it the same. Names from every other source
/// (the wordlist, certificates, links, redirects, CT search) that answer only what the
/// wildcard answers are not hosts.
const NAMED_BY_RECORD: &[&str] = &["domain", "mx", "ns", "srv", "rescan"];

/// Resolves the candidates inside `domain` that are not in `known` (concurrently,
/// bounded) and keeps those that exist, in candidate order: the first source that names
/// a host is its attribution. A name that is not a host name (`model::Domain` refuses
/// it) is skipped with the reason; a name that answers only what the wildcard answers
/// is not a host unless a record names it ([`NAMED_BY_RECORD`]). At most `max_names`
/// names are resolved; the rest are counted in `over_budget`. Lookups still running at
/// `until` are stopped and their names counted in `late`.
pub async fn resolve_candidates(
    dns: &Dns,
    domain: &str,
    mut candidates: Vec<Candidate>,
    wildcard: &[IpAddr],
    known: &[String],
    max_names: usize,
    until: tokio::time::Instant,
) -> Resolved {
    let mut out = Resolved::default();
    let mut found: BTreeMap<String, Asset> = BTreeMap::new();
    let known: std::collections::HashSet<&str> = known.iter().map(String::as_str).collect();
    candidates.retain(|c| {
        if c.name.starts_with("*.") || !inside(&c.name, domain) || known.contains(c.name.as_str()) {
            return false;
        }
        match refusal(&c.name) {
            None => true,
            Some(reason) => {
                if out.skipped.len() < MAX_SKIPPED {
                    out.skipped.push(Skipped {
                        name: crate::guard::printable(&c.name),
                        source: c.source.clone(),
                        evidence: crate::guard::printable(&c.evidence),
                        reason: reason.to_owned(),
                    });
                }
                false
            }
        }
    });
    let mut seen = std::collections::BTreeSet::new();
    candidates.retain(|c| seen.insert(c.name.clone()) || NAMED_BY_RECORD.contains(&c.source.as_str()));
    if candidates.len() > max_names {
        out.over_budget = candidates.len() - max_names;
        candidates.truncate(max_names);
    }
    out.looked_up = candidates.len();
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(CONCURRENT_LOOKUPS));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, candidate) in candidates.iter().enumerate() {
        let (dns, name, limit) = (dns.clone(), candidate.name.clone(), limit.clone());
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            // One name's failure (a CNAME into a zone nobody serves, say) leaves that
            // name without addresses; it does not end the discovery.
            let target = match dns.lookup(&name, RecordType::CNAME).await {
                Ok(cname) => cname.iter().find_map(|r| match &r.data {
                    RData::CNAME(c) => Some(host_name(&c.0.to_ascii())),
                    _ => None,
                }),
                Err(e) => {
                    tracing::debug!(name, error = %e, "CNAME lookup failed");
                    None
                }
            };
            let addresses = dns.addresses(&name).await.unwrap_or_else(|e| {
                tracing::debug!(name, error = %e, "address lookup failed");
                Vec::new()
            });
            (index, target, addresses)
        });
    }
    let mut resolved = vec![None; candidates.len()];
    loop {
        match tokio::time::timeout_at(until, tasks.join_next()).await {
            Ok(None) => break,
            Ok(Some(Ok((index, target, addresses)))) => {
                if let Some(slot) = resolved.get_mut(index) {
                    *slot = Some((target, addresses));
                }
            }
            Ok(Some(Err(_))) => {}
            Err(_) => {
                // The deadline: the lookups still running are stopped (dropping the set
                // aborts them) and their names left out.
                out.late = tasks.len();
                break;
            }
        }
    }
    drop(tasks);
    for (Candidate { name, source, evidence }, answer) in candidates.into_iter().zip(resolved) {
        let Some((target, addresses)) = answer else { continue };
        if found.contains_key(&name) {
            continue;
        }
        if !NAMED_BY_RECORD.contains(&source.as_str())
            && target.is_none()
            && !addresses.is_empty()
            && same_addresses(&addresses, wildcard)
        {
            continue;
        }
        if addresses.is_empty() && target.is_none() {
            continue;
        }
        // A CNAME target is only looked up (the dangling check), never connected to;
        // one that is not a host name is noted and left out.
        let target = match target.as_deref().and_then(refusal) {
            Some(reason) => {
                if out.skipped.len() < MAX_SKIPPED {
                    out.skipped.push(Skipped {
                        name: crate::guard::printable(target.as_deref().unwrap_or_default()),
                        source: "cname".into(),
                        evidence: format!("CNAME of {name}"),
                        reason: reason.to_owned(),
                    });
                }
                None
            }
            None => target,
        };
        let evidence = match (&target, evidence.is_empty(), source.as_str()) {
            (Some(t), _, "wordlist") => format!("CNAME {t}"),
            (_, true, _) => addresses
                .iter()
                .map(|a| if a.is_ipv4() { format!("A {a}") } else { format!("AAAA {a}") })
                .collect::<Vec<_>>()
                .join(", "),
            (_, false, _) => evidence,
        };
        let source = if target.is_some() && source == "wordlist" { "cname".to_owned() } else { source };
        found.insert(name.clone(), Asset { name, addresses, source, evidence, cname: target });
    }
    out.assets = found.into_values().collect();
    out
}

/// The most skipped names one resolution records (the rest are still skipped).
const MAX_SKIPPED: usize = 100;

/// The same set of addresses, in any order.
fn same_addresses(a: &[IpAddr], b: &[IpAddr]) -> bool {
    !b.is_empty() && a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

/// The most links of one page looked at.
const MAX_LINKS: usize = 4096;

/// The host names of the absolute links of an HTML page (`href`, `src` and `action`
/// attributes, `//host/...` links included), lower case, each once, in page order.
/// Relative links name no new host. Anything that does not parse as a URL is skipped.
pub fn link_hosts(html: &str) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    let bytes = html.as_bytes();
    let mut links = 0;
    let mut i = 0;
    while i < bytes.len() && links < MAX_LINKS {
        let rest = &bytes[i..];
        let attr = [&b"href"[..], b"src", b"action"]
            .into_iter()
            .find(|a| rest.len() >= a.len() && rest[..a.len()].eq_ignore_ascii_case(a));
        let preceded = i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'/');
        let Some(attr) = attr.filter(|_| preceded) else {
            i += 1;
            continue;
        };
        let mut j = i + attr.len();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if bytes.get(j) != Some(&b'=') {
            i += attr.len();
            continue;
        }
        j += 1;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let (start, end) = match bytes.get(j) {
            Some(q @ (b'"' | b'\'')) => {
                let end = bytes[j + 1..].iter().position(|b| b == q).map_or(bytes.len(), |p| j + 1 + p);
                (j + 1, end)
            }
            Some(_) => {
                let end = bytes[j..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b'>')
                    .map_or(bytes.len(), |p| j + p);
                (j, end)
            }
            None => break,
        };
        links += 1;
        i = end.max(i + 1);
        // The attribute value sits between ASCII delimiters, so these are char boundaries.
        let Some(value) = html.get(start..end) else { continue };
        if let Some(host) = url_host(value.trim())
            && !hosts.contains(&host)
        {
            hosts.push(host);
        }
    }
    hosts
}

/// The host name of an absolute http(s) URL or a `//host/...` link.
pub fn url_host(value: &str) -> Option<String> {
    let absolute;
    let value = if value.starts_with("//") {
        absolute = format!("https:{value}");
        absolute.as_str()
    } else {
        value
    };
    let url = reqwest::Url::parse(value).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.domain().map(host_name)
}

/// The names of a certificate-transparency search answer in crt.sh's JSON form: an array
/// of entries whose `name_value` holds names one per line (and `common_name` one more).
/// Each name comes with its evidence: the entry's id, issuer and time.
pub fn ct_names(json: &[u8]) -> Result<Vec<(String, String)>, String> {
    let entries: Vec<serde_json::Value> =
        serde_json::from_slice(json).map_err(|e| format!("not a crt.sh JSON array: {e}"))?;
    let mut out: Vec<(String, String)> = Vec::new();
    for entry in &entries {
        let text = |k: &str| entry.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let id = entry.get("id").map(|v| v.to_string()).unwrap_or_default();
        let evidence = format!(
            "certificate-transparency entry {id} (issuer {}, not before {})",
            text("issuer_name"),
            text("not_before")
        );
        for name in text("name_value").lines().chain(std::iter::once(text("common_name"))) {
            let name = host_name(name.trim().trim_start_matches("*."));
            if !name.is_empty() && !name.contains(char::is_whitespace) && !out.iter().any(|(n, _)| *n == name) {
                out.push((name, evidence.clone()));
            }
        }
    }
    Ok(out)
}

/// The most of a certificate-transparency answer read.
const MAX_CT_BODY: usize = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum CtError {
    #[error("certificate-transparency search {url}: {message}")]
    Search { url: String, message: String },
}

/// Asks a crt.sh-compatible search for the names under `domain`. `template` is the
/// search URL with `{domain}` where the domain goes, e.g.
/// `https://crt.sh/?q=%25.{domain}&output=json`. The search service is configured by the
/// operator, not a scan target, so it is not subject to the guard; it has a timeout
/// and a bounded read.
pub async fn ct_search(template: &str, domain: &str, timeout: Duration) -> Result<Vec<(String, String)>, CtError> {
    let url = template.replace("{domain}", domain);
    let err = |message: String| CtError::Search { url: url.clone(), message };
    let client = egress::service::ServiceClient {
        user_agent: crate::guard::USER_AGENT.to_owned(),
        timeout,
        connect_timeout: timeout,
        env_proxy: false,
    }
    .build()
    .map_err(|e| err(e.to_string()))?;
    let mut response = client.get(&url).send().await.map_err(|e| err(e.to_string()))?;
    if response.status().is_redirection() {
        let to = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("");
        return Err(err(format!(
            "answered {} to {}; redirects are not followed (configure the final URL)",
            response.status(),
            crate::guard::printable(to)
        )));
    }
    if !response.status().is_success() {
        return Err(err(format!("answered {}", response.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| err(e.to_string()))? {
        if body.len() + chunk.len() > MAX_CT_BODY {
            return Err(err(format!("answer larger than {MAX_CT_BODY} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    ct_names(&body).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_of_a_page() {
        let html = r#"<a href="https://Shop.Acme.test/cart">shop</a> <img src='//cdn.acme.test/x.png'>
            <form action=http://forms.acme.test/send method=post></form> <a href="/relative">r</a>
            <a href="mailto:x@acme.test">m</a> <a href="https://127.0.0.1/">ip</a> <a data-href="https://no.acme.test/">
            <a HREF = "https://shop.acme.test/again">"#;
        assert_eq!(link_hosts(html), ["shop.acme.test", "cdn.acme.test", "forms.acme.test"]);
    }

    #[test]
    fn links_survive_broken_html() {
        for html in ["href", "href=", "href=\"", "<a href='https://a.test", "src = ", "\u{e9}href=\"//\u{e9}.test\""] {
            let _ = link_hosts(html);
        }
        assert_eq!(link_hosts("<a href='https://a.test"), ["a.test"]);
    }

    #[test]
    fn ct_answers() {
        let json = br#"[{"id": 42, "issuer_name": "C=US, O=Lab CA", "not_before": "2026-01-01T00:00:00",
            "common_name": "acme.test", "name_value": "acme.test\n*.portal.acme.test\nVPN.acme.test"},
            {"id": 43, "name_value": "vpn.acme.test"}]"#;
        let names = ct_names(json).unwrap();
        let just: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(just, ["acme.test", "portal.acme.test", "vpn.acme.test"]);
        assert!(names[0].1.contains("entry 42") && names[0].1.contains("Lab CA"), "{}", names[0].1);
        assert!(ct_names(b"{\"not\": \"an array\"}").is_err());
        assert!(ct_names(b"[1, \"x\", null]").unwrap().is_empty());
    }
}
