//! The spf, dkim and dmarc components: the records are fetched through the scanner's DNS
//! client, parsed by `crate::mail`, and judged here. Every finding carries the record
//! it was judged on as evidence.

use std::collections::BTreeSet;

use crate::dns::{Dns, DnsError};
use crate::finding::ScanFinding;
use crate::mail::{dkim, dmarc, spf};

/// The DKIM selectors probed by default: the common ones of mail providers and MTAs.
pub const DEFAULT_SELECTORS: &[&str] = &[
    "google",
    "selector1",
    "selector2",
    "k1",
    "k2",
    "k3",
    "default",
    "s1",
    "s2",
    "s1024",
    "s2048",
    "dkim",
    "mail",
    "smtp",
    "mx",
    "email",
    "key1",
    "key2",
    "sig1",
    "mandrill",
    "mailjet",
    "everlytickey1",
    "everlytickey2",
    "zoho",
    "protonmail",
    "protonmail2",
    "protonmail3",
    "fm1",
    "fm2",
    "fm3",
    "mxvault",
    "dk",
    "sendgrid",
    "smtpapi",
    "pm",
    "amazonses",
    "cm",
    "krs",
    "turbo-smtp",
];

/// RFC 7208 §4.6.4: at most 10 terms that cause DNS queries, at most 2 void lookups.
const MAX_LOOKUPS: usize = 10;
const MAX_VOID: usize = 2;
/// How deep includes are followed (loops are caught before this).
const MAX_DEPTH: usize = 12;

/// The spf component for `domain`.
pub async fn spf(dns: &Dns, domain: &str, handles_mail: bool) -> Result<Vec<ScanFinding>, DnsError> {
    let texts = dns.txt(domain).await?;
    let records: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
    let mut out = Vec::new();
    let record = match records.as_slice() {
        [] if handles_mail => {
            out.push(ScanFinding::new("spf.missing", domain, "no v=spf1 TXT record; the domain has MX records"));
            return Ok(out);
        }
        [] => {
            out.push(ScanFinding::new("spf.missing_non_mail", domain, "no v=spf1 TXT record and no MX records"));
            return Ok(out);
        }
        [one] => *one,
        many => {
            let evidence = many.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join("; ");
            out.push(ScanFinding::new("spf.multiple_records", domain, format!("{} records: {evidence}", many.len())));
            return Ok(out);
        }
    };
    let parsed = match spf::parse(record) {
        Ok(p) => p,
        Err(e) => {
            out.push(ScanFinding::new("spf.syntax_error", domain, format!("\"{record}\": {e}")));
            return Ok(out);
        }
    };
    // Follow includes and redirects: count lookups and void lookups over the whole tree,
    // and find the `all` that applies (the redirect target's when there is a redirect).
    let mut walk = Walk::default();
    walk.visit(dns, domain, &parsed, 0).await?;
    let effective_all = effective_all(dns, &parsed, 0).await?;
    match effective_all {
        Some(spf::Qualifier::Pass) => out.push(ScanFinding::new("spf.pass_all", domain, format!("\"{record}\""))),
        Some(spf::Qualifier::Neutral) => out.push(ScanFinding::new("spf.neutral_all", domain, format!("\"{record}\""))),
        Some(spf::Qualifier::SoftFail) => {
            out.push(ScanFinding::new("spf.softfail_all", domain, format!("\"{record}\"")))
        }
        Some(spf::Qualifier::Fail) => {}
        None if parsed.redirect().is_none() => {
            out.push(ScanFinding::new("spf.no_all", domain, format!("\"{record}\": no all and no redirect=")))
        }
        None => {}
    }
    if walk.lookups > MAX_LOOKUPS {
        out.push(ScanFinding::new(
            "spf.too_many_lookups",
            domain,
            format!("{} DNS-querying terms through includes (limit 10): {}", walk.lookups, walk.trail.join(", ")),
        ));
    }
    if walk.void > MAX_VOID {
        out.push(ScanFinding::new(
            "spf.too_many_void_lookups",
            domain,
            format!("{} lookups returned no records (limit 2): {}", walk.void, walk.voids.join(", ")),
        ));
    }
    if walk.ptr {
        out.push(ScanFinding::new("spf.ptr_mechanism", domain, format!("\"{record}\" uses ptr")));
    }
    Ok(out)
}

#[derive(Default)]
struct Walk {
    lookups: usize,
    void: usize,
    ptr: bool,
    seen: BTreeSet<String>,
    trail: Vec<String>,
    voids: Vec<String>,
}

impl Walk {
    /// Counts the DNS-querying terms of `record` (published at `at`) and of everything
    /// it includes or redirects to. Void lookups are counted for include, a, mx and
    /// exists targets without macros.
    async fn visit(&mut self, dns: &Dns, at: &str, record: &spf::Spf, depth: usize) -> Result<(), DnsError> {
        if depth > MAX_DEPTH || !self.seen.insert(at.to_ascii_lowercase()) {
            return Ok(());
        }
        self.lookups += record.dns_lookup_terms();
        self.ptr |= record.uses_ptr();
        for term in &record.terms {
            let target = match term {
                spf::Term::Directive { mechanism, .. } => match mechanism {
                    spf::Mechanism::Include(d) => Some((d.clone(), "include")),
                    spf::Mechanism::A { domain, .. } => Some((domain.clone().unwrap_or_else(|| at.to_owned()), "a")),
                    spf::Mechanism::Mx { domain, .. } => Some((domain.clone().unwrap_or_else(|| at.to_owned()), "mx")),
                    spf::Mechanism::Exists(d) => Some((d.clone(), "exists")),
                    _ => None,
                },
                spf::Term::Redirect(d) => Some((d.clone(), "redirect")),
                _ => None,
            };
            let Some((target, kind)) = target else { continue };
            if spf::has_macros(&target) || self.lookups > MAX_LOOKUPS * 4 {
                continue;
            }
            self.trail.push(format!("{kind}:{target}"));
            match kind {
                "include" | "redirect" => {
                    // A failing lookup is a temporary error in RFC 7208's terms, not a
                    // void lookup: it is left out of both counts.
                    let Ok(texts) = dns.txt(&target).await else { continue };
                    let sub: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
                    match sub.as_slice() {
                        [] => {
                            self.void += 1;
                            self.voids.push(format!("{kind}:{target}"));
                        }
                        [one] => {
                            if let Ok(parsed) = spf::parse(one) {
                                Box::pin(self.visit(dns, &target, &parsed, depth + 1)).await?;
                            }
                        }
                        _ => {}
                    }
                }
                "mx" => {
                    if dns.mx(&target).await.is_ok_and(|mx| mx.is_empty()) {
                        self.void += 1;
                        self.voids.push(format!("mx:{target}"));
                    }
                }
                _ => {
                    if dns.addresses(&target).await.is_ok_and(|a| a.is_empty()) {
                        self.void += 1;
                        self.voids.push(format!("{kind}:{target}"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The `all` that decides for unlisted senders: the record's own, or (without one) the
/// redirect target's.
async fn effective_all(dns: &Dns, record: &spf::Spf, depth: usize) -> Result<Option<spf::Qualifier>, DnsError> {
    if let Some(q) = record.all() {
        return Ok(Some(q));
    }
    let Some(target) = record.redirect() else { return Ok(None) };
    if depth > MAX_DEPTH || spf::has_macros(target) {
        return Ok(None);
    }
    let Ok(texts) = dns.txt(target).await else { return Ok(None) };
    let sub: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
    match sub.as_slice() {
        [one] => match spf::parse(one) {
            Ok(parsed) => Box::pin(effective_all(dns, &parsed, depth + 1)).await,
            Err(_) => Ok(None),
        },
        _ => Ok(None),
    }
}

/// The dkim component for `domain`: every curated selector is queried.
pub async fn dkim(
    dns: &Dns,
    domain: &str,
    handles_mail: bool,
    selectors: &[String],
) -> Result<Vec<ScanFinding>, DnsError> {
    let mut out = Vec::new();
    let mut found = 0;
    for selector in selectors {
        let name = format!("{selector}._domainkey.{domain}");
        // A selector whose lookup fails is skipped, like one that does not exist.
        let Ok(texts) = dns.txt(&name).await else { continue };
        // A key record: v=DKIM1 or any record with a p= tag.
        let keys: Vec<&String> =
            texts.iter().filter(|t| t.trim_start().starts_with("v=DKIM1") || t.contains("p=")).collect();
        for record in keys {
            found += 1;
            let key = match dkim::parse(record) {
                Ok(k) => k,
                Err(e) => {
                    out.push(ScanFinding::new("dkim.syntax_error", &name, format!("\"{record}\": {e}")));
                    continue;
                }
            };
            if key.revoked {
                out.push(ScanFinding::new("dkim.revoked_key", &name, format!("\"{record}\": empty p=")));
                continue;
            }
            if let (dkim::KeyType::Rsa, Some(bits)) = (&key.key_type, key.key_bits) {
                if bits < 1024 {
                    out.push(ScanFinding::new("dkim.key_too_short", &name, format!("RSA key of {bits} bits")));
                } else if bits < 2048 {
                    out.push(ScanFinding::new("dkim.weak_key", &name, format!("RSA key of {bits} bits")));
                }
            }
            if key.testing() {
                out.push(ScanFinding::new("dkim.testing_mode", &name, format!("\"{record}\": t=y")));
            }
            if key.sha1_only() {
                out.push(ScanFinding::new("dkim.sha1_only", &name, format!("\"{record}\": h=sha1")));
            }
        }
    }
    if found == 0 && handles_mail {
        out.push(ScanFinding::new(
            "dkim.missing",
            domain,
            format!(
                "no DKIM key record at any of {} selectors ({}, …)",
                selectors.len(),
                selectors[..selectors.len().min(5)].join(", ")
            ),
        ));
    }
    Ok(out)
}

/// The organisational domain of `domain` (RFC 7489 §3.2): its registrable domain by the
/// Public Suffix List (a name under an unlisted suffix such as `.test` counts one label
/// as the suffix).
pub fn organisational_domain(domain: &str) -> String {
    psl::domain_str(domain).map_or_else(|| domain.to_owned(), str::to_owned)
}

/// The dmarc component for `domain`. A subdomain without its own record falls back to
/// the organisational domain's record, whose `sp` (or `p`) then applies (RFC 7489 §6.6.3).
pub async fn dmarc(dns: &Dns, domain: &str) -> Result<Vec<ScanFinding>, DnsError> {
    let name = format!("_dmarc.{domain}");
    let mut texts = dns.txt(&name).await?;
    let org = organisational_domain(domain);
    let mut inherited = None;
    if !texts.iter().any(|t| dmarc::is_dmarc(t)) && org != domain {
        let org_texts = dns.txt(&format!("_dmarc.{org}")).await?;
        if org_texts.iter().any(|t| dmarc::is_dmarc(t)) {
            texts = org_texts;
            inherited = Some(org.clone());
        }
    }
    let records: Vec<&String> = texts.iter().filter(|t| dmarc::is_dmarc(t)).collect();
    let mut out = Vec::new();
    let record = match records.as_slice() {
        [] => {
            let also = if org != domain { format!(" nor at _dmarc.{org}") } else { String::new() };
            out.push(ScanFinding::new("dmarc.missing", domain, format!("no v=DMARC1 TXT record at {name}{also}")));
            return Ok(out);
        }
        [one] => *one,
        many => {
            let evidence = many.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join("; ");
            out.push(ScanFinding::new("dmarc.multiple_records", domain, format!("{} records: {evidence}", many.len())));
            return Ok(out);
        }
    };
    let d = match dmarc::parse(record) {
        Ok(d) => d,
        Err(e) => {
            out.push(ScanFinding::new("dmarc.syntax_error", domain, format!("\"{record}\": {e}")));
            return Ok(out);
        }
    };
    let quoted = match &inherited {
        Some(org) => format!("\"{record}\" (inherited from _dmarc.{org})"),
        None => format!("\"{record}\""),
    };
    // For an inherited record, the subdomain policy is the one that applies.
    let policy = if inherited.is_some() { d.subdomain_policy.unwrap_or(d.policy) } else { d.policy };
    match policy {
        dmarc::Policy::None => out.push(ScanFinding::new("dmarc.policy_none", domain, quoted.clone())),
        dmarc::Policy::Quarantine => out.push(ScanFinding::new("dmarc.policy_quarantine", domain, quoted.clone())),
        dmarc::Policy::Reject => {}
    }
    let enforcing = policy != dmarc::Policy::None;
    if enforcing && d.pct < 100 {
        out.push(ScanFinding::new("dmarc.partial_pct", domain, format!("{quoted}: pct={}", d.pct)));
    }
    if inherited.is_none() && enforcing && d.subdomain_policy == Some(dmarc::Policy::None) {
        out.push(ScanFinding::new("dmarc.subdomain_policy_none", domain, format!("{quoted}: sp=none")));
    }
    if d.rua.is_empty() {
        out.push(ScanFinding::new("dmarc.no_rua", domain, format!("{quoted}: no rua=")));
    }
    // External report destinations must authorise the domain (RFC 7489 §7.1).
    // The domain that published the record is the one report destinations authorise.
    let own = inherited.clone().unwrap_or_else(|| domain.to_ascii_lowercase());
    let mut unauthorised = Vec::new();
    let mut checked = BTreeSet::new();
    for uri in d.rua.iter().chain(&d.ruf) {
        let Some(dest) = &uri.mailbox_domain else { continue };
        // Only another organisational domain must authorise (RFC 7489 §7.1).
        if organisational_domain(dest) == organisational_domain(&own) || !checked.insert(dest.clone()) {
            continue;
        }
        let auth = format!("{own}._report._dmarc.{dest}");
        // Unknown (the lookup failed) is not reported as unauthorised.
        let Ok(texts) = dns.txt(&auth).await else { continue };
        if !texts.iter().any(|t| dmarc::is_dmarc(t)) {
            unauthorised.push(format!("{} (no v=DMARC1 at {auth})", uri.uri));
        }
    }
    if !unauthorised.is_empty() {
        out.push(ScanFinding::new("dmarc.external_rua_unauthorized", domain, unauthorised.join("; ")));
    }
    Ok(out)
}
