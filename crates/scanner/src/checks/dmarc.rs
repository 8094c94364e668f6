//! dmarc: the domain's DMARC policy (RFC 7489) as it applies to it — its own record, or
//! for a subdomain without one the organisational domain's, whose `sp` (or `p`) then
//! applies (§6.6.3) — with its reporting, and the authorisation of report destinations
//! in other organisational domains (§7.1).

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::MailSeen;
use crate::mail::dmarc;
use crate::probes::mail::DmarcSeen;

const CHECK: &str = "dmarc record";

/// The dmarc check of a company domain: not assessable when the lookup of its record
/// failed.
pub fn domain(seen: &MailSeen, out: &mut Judged) {
    let domain = seen.domain.as_str();
    match &seen.dmarc {
        Some(Ok(dmarc)) => {
            let found = judge(dmarc, domain);
            out.checks.push(check::judged(RiskVector::Dmarc, CHECK, domain, &found, "p=reject, with reports"));
            out.findings.extend(found);
        }
        Some(Err(e)) => {
            let why = format!("the TXT lookup of _dmarc.{domain} failed: {e}");
            out.checks.push(Check::not_assessable(RiskVector::Dmarc, CHECK, domain, why));
        }
        None => {}
    }
}

/// The findings of `domain`'s DMARC record.
pub fn judge(seen: &DmarcSeen, domain: &str) -> Vec<ScanFinding> {
    let (org, inherited) = (&seen.org, &seen.inherited);
    let records: Vec<&String> = seen.texts.iter().filter(|t| dmarc::is_dmarc(t)).collect();
    let mut out = Vec::new();
    let record = match records.as_slice() {
        [] => {
            let also = if org != domain { format!(" nor at _dmarc.{org}") } else { String::new() };
            out.push(ScanFinding::new(
                "dmarc.missing",
                domain,
                format!("no v=DMARC1 TXT record at _dmarc.{domain}{also}"),
            ));
            return out;
        }
        [one] => *one,
        many => {
            let evidence = many.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join("; ");
            out.push(ScanFinding::new("dmarc.multiple_records", domain, format!("{} records: {evidence}", many.len())));
            return out;
        }
    };
    let d = match dmarc::parse(record) {
        Ok(d) => d,
        Err(e) => {
            out.push(ScanFinding::new("dmarc.syntax_error", domain, format!("\"{record}\": {e}")));
            return out;
        }
    };
    let quoted = match inherited {
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
    // External report destinations must authorise the domain (RFC 7489 §7.1); unknown
    // (the lookup failed) is not reported as unauthorised.
    let unauthorised: Vec<String> = seen
        .destinations
        .iter()
        .filter(|d| d.records.as_ref().is_some_and(|texts| !texts.iter().any(|t| dmarc::is_dmarc(t))))
        .map(|d| format!("{} (no v=DMARC1 at {})", d.uri, d.auth))
        .collect();
    if !unauthorised.is_empty() {
        out.push(ScanFinding::new("dmarc.external_rua_unauthorized", domain, unauthorised.join("; ")));
    }
    out
}
