//! Discovery: the hosts of a company domain, each with why it is attributed to the
//! company (the source and what was observed). Sources so far: the domain itself, its
//! MX, NS and SRV targets inside the domain, CNAMEs, and a curated wordlist (names that
//! a wildcard record would answer anyway are not counted as found). Certificate SANs,
//! links in pages and certificate-transparency search join with the TLS and web probes.

use std::collections::BTreeMap;
use std::net::IpAddr;

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
    /// How it was found: `domain`, `mx`, `ns`, `srv`, `cname`, `wordlist`.
    pub source: String,
    /// What was observed, e.g. `MX 10 mail.acme.test` or `A 127.78.1.2`.
    pub evidence: String,
}

fn inside(name: &str, domain: &str) -> bool {
    name == domain || name.ends_with(&format!(".{domain}"))
}

/// The hosts of `domain` (one entry per name, the first source that found it).
pub async fn discover(dns: &Dns, domain: &str, wordlist: &[String]) -> Result<Vec<Asset>, DnsError> {
    let domain = host_name(domain);
    let mut found: BTreeMap<String, Asset> = BTreeMap::new();
    let mut candidates: Vec<(String, String, String)> =
        vec![(domain.clone(), "domain".into(), "the company domain".into())];
    for r in dns.lookup(&domain, RecordType::MX).await? {
        if let RData::MX(mx) = &r.data {
            let host = host_name(&mx.exchange.to_ascii());
            candidates.push((host.clone(), "mx".into(), format!("MX {} {host}", mx.preference)));
        }
    }
    for r in dns.lookup(&domain, RecordType::NS).await? {
        if let RData::NS(ns) = &r.data {
            let host = host_name(&ns.0.to_ascii());
            candidates.push((host.clone(), "ns".into(), format!("NS {host}")));
        }
    }
    for srv in SRV_NAMES {
        let name = format!("{srv}.{domain}");
        for r in dns.lookup(&name, RecordType::SRV).await? {
            if let RData::SRV(s) = &r.data {
                let host = host_name(&s.target.to_ascii());
                candidates.push((host.clone(), "srv".into(), format!("{name} SRV {} {host}", s.port)));
            }
        }
    }
    // A wildcard answers any label: its addresses do not make a wordlist name a host.
    let probe = format!("rampart-wildcard-probe-7f3c1.{domain}");
    let wildcard: Vec<IpAddr> = dns.addresses(&probe).await.unwrap_or_default();
    for label in wordlist {
        candidates.push((format!("{label}.{domain}"), "wordlist".into(), String::new()));
    }
    // Resolve the candidates concurrently (bounded), then keep them in candidate order:
    // the first source that names a host is its attribution.
    candidates.retain(|(name, _, _)| inside(name, &domain));
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(CONCURRENT_LOOKUPS));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, (name, _, _)) in candidates.iter().enumerate() {
        let (dns, name, limit) = (dns.clone(), name.clone(), limit.clone());
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
    while let Some(joined) = tasks.join_next().await {
        let Ok((index, target, addresses)) = joined else { continue };
        if let Some(slot) = resolved.get_mut(index) {
            *slot = Some((target, addresses));
        }
    }
    for ((name, source, evidence), answer) in candidates.into_iter().zip(resolved) {
        let Some((target, addresses)) = answer else { continue };
        if found.contains_key(&name) {
            continue;
        }
        if source == "wordlist" && target.is_none() && !addresses.is_empty() && addresses == wildcard {
            continue;
        }
        if addresses.is_empty() && target.is_none() {
            continue;
        }
        let evidence = match (&target, evidence.is_empty()) {
            (Some(t), _) => format!("CNAME {t}"),
            (None, true) => addresses
                .iter()
                .map(|a| if a.is_ipv4() { format!("A {a}") } else { format!("AAAA {a}") })
                .collect::<Vec<_>>()
                .join(", "),
            (None, false) => evidence,
        };
        let source = if target.is_some() && source == "wordlist" { "cname".to_owned() } else { source };
        found.insert(name.clone(), Asset { name, addresses, source, evidence });
    }
    Ok(found.into_values().collect())
}
