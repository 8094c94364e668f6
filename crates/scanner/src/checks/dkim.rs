//! dkim: the key records found at the selectors tried ([`crate::probes::mail::dkim`]),
//! each judged (syntax, revoked, key size, testing mode, SHA-1 only). When no key is
//! found, what that means depends on what Rampart can know: a key at a selector nobody
//! named is invisible from outside, so with no named selector the check is not
//! assessable; with named selectors and no key at them, DKIM is missing
//! (`dkim.missing`). A selector whose lookup failed (timeout, SERVFAIL, REFUSED) leaves
//! "no key" unknown: not assessable. A domain that receives no mail (no MX) is not
//! judged.

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::MailSeen;
use crate::mail::dkim;
use crate::probes::mail::DkimSeen;

const CHECK: &str = "dkim keys";

/// The dkim check of a company domain: not assessable when the MX lookup failed.
pub fn domain(seen: &MailSeen, out: &mut Judged) {
    let domain = seen.domain.as_str();
    match (&seen.mx_failed, &seen.dkim) {
        (Some(why), _) => out.checks.push(Check::not_assessable(RiskVector::Dkim, CHECK, domain, why)),
        (None, Some(dkim)) => out.add(judge(dkim, domain, seen.handles_mail)),
        (None, None) => {}
    }
}

/// The findings of `domain`'s DKIM keys and the check's outcome.
pub fn judge(seen: &DkimSeen, domain: &str, handles_mail: bool) -> (Vec<ScanFinding>, Check) {
    let mut out = Vec::new();
    let mut with_keys = Vec::new();
    let mut failed = Vec::new();
    for (selector, answer) in &seen.tried {
        let name = format!("{selector}._domainkey.{domain}");
        let texts = match answer {
            Ok(t) => t,
            Err(e) => {
                failed.push(format!("{selector}: {e}"));
                continue;
            }
        };
        // A key record: v=DKIM1 or any record with a p= tag.
        let keys: Vec<&String> =
            texts.iter().filter(|t| t.trim_start().starts_with("v=DKIM1") || t.contains("p=")).collect();
        if !keys.is_empty() {
            with_keys.push(selector.as_str());
        }
        for record in keys {
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
    if !with_keys.is_empty() {
        let check = check::judged(RiskVector::Dkim, CHECK, domain, &out, format!("keys at {}", with_keys.join(", ")));
        return (out, check);
    }
    if !handles_mail {
        let why = "the domain receives no mail (no MX): DKIM is judged on the domains that do";
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    let tried: Vec<&str> = seen.tried.iter().map(|(s, _)| s.as_str()).collect();
    if !failed.is_empty() {
        let why = format!(
            "no key found, but {} of {} selector lookups failed ({}{})",
            failed.len(),
            tried.len(),
            failed[..failed.len().min(2)].join("; "),
            if failed.len() > 2 { "; …" } else { "" }
        );
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    if seen.named.is_empty() {
        let why = format!(
            "no key at the {} selectors tried ({}, …); a key at another selector cannot be seen from outside \
             (name the company's selectors: dkim_selectors)",
            tried.len(),
            tried[..tried.len().min(5)].join(", ")
        );
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    out.push(ScanFinding::new(
        "dkim.missing",
        domain,
        format!(
            "no DKIM key record at the selectors the company names ({}) nor at the {} curated selectors",
            seen.named.join(", "),
            seen.curated
        ),
    ));
    let check = check::judged(RiskVector::Dkim, CHECK, domain, &out, String::new());
    (out, check)
}
