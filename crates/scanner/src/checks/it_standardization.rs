//! it_standardization, as internet.nl tests it: DNSSEC, CAA, MTA-STS, TLS-RPT, IPv6 on
//! the website and mail hosts, security.txt (RFC 9116) and HTTPS availability of the
//! company's domain; HTTPS availability of every visited host; and stack consistency
//! across the hosts of the domain.

use std::collections::BTreeMap;

use model::RiskVector;
use time::OffsetDateTime;

use super::Judged;
use crate::check::{self, Check};
use crate::dnssec::Status;
use crate::finding::ScanFinding;
use crate::gather::{MailSeen, Observations, VisitSeen, WebsiteSeen};
use crate::probes::standards::{self, MtaStsPolicy, MtaStsSeen, SecurityTxt};
use crate::probes::web::Endpoint;

const IT: RiskVector = RiskVector::ItStandardization;

/// The domain's checks: DNSSEC, CAA, TLS-RPT and MTA-STS (for a domain that receives
/// mail), IPv6, and the website's security.txt and HTTPS. A lookup that failed makes
/// its check not assessable, with the reason.
pub fn domain(seen: &MailSeen, now: OffsetDateTime, out: &mut Judged) {
    let Some(s) = &seen.standards else { return };
    let domain = seen.domain.as_str();
    let na = |check: &str, asset: &str, why: &str| Check::not_assessable(IT, check, asset, why);
    match &s.dnssec {
        Some(status) => out.add(dnssec(status, domain)),
        None => out.checks.push(na("dnssec", domain, "no validating resolver with a trust anchor is configured")),
    }
    match &s.caa {
        Ok(has) => {
            let found = caa(*has, domain);
            out.checks.push(check::judged(IT, "caa", domain, &found, "CAA records name the CAs that may issue"));
            out.findings.extend(found);
        }
        Err(e) => out.checks.push(na("caa", domain, &format!("the CAA lookup failed: {e}"))),
    }
    if let Some(why) = &seen.mx_failed {
        out.checks.push(na("mta-sts", domain, why));
        out.checks.push(na("tls-rpt", domain, why));
    }
    match &s.tls_rpt {
        Some(Ok(records)) => {
            let found = tls_rpt(records, domain);
            out.checks.push(check::judged(IT, "tls-rpt", domain, &found, "a v=TLSRPTv1 record"));
            out.findings.extend(found);
        }
        Some(Err(e)) => out.checks.push(na("tls-rpt", domain, &format!("the TXT lookup failed: {e}"))),
        None => {}
    }
    match &s.mta_sts {
        Some(Ok(sts)) => {
            let found = mta_sts(sts, domain, &seen.mx);
            let observed = "an enforced policy over valid HTTPS that covers every MX host";
            out.checks.push(check::judged(IT, "mta-sts", domain, &found, observed));
            out.findings.extend(found);
        }
        Some(Err(e)) => out.checks.push(na("mta-sts", domain, &format!("the TXT lookup failed: {e}"))),
        None => {}
    }
    for (host, aaaa) in &s.ipv6 {
        match aaaa {
            Ok(has) => {
                let found = ipv6(*has, host);
                out.checks.push(check::judged(IT, "ipv6", host, &found, "AAAA records"));
                out.findings.extend(found);
            }
            Err(e) => out.checks.push(na("ipv6", host, &format!("the AAAA lookup failed: {e}"))),
        }
    }
    if let Some(web) = &s.website {
        out.add(security_txt(web, now));
        let found = https_available(web);
        if web.https || !found.is_empty() {
            out.checks.push(check::judged(IT, "https", &web.host, &found, "HTTPS answers on 443"));
        } else {
            out.checks.push(na("https", &web.host, "the website host answers on neither 443 nor 80"));
        }
        out.findings.extend(found);
    }
}

/// DNSSEC for a company domain: secure (the chain validates from the trust anchor), a
/// finding (unsigned: `dnssec_missing`, proven by the parent's signed denial of a DS;
/// a broken chain: `dnssec_bogus`), or not assessable when the chain cannot be followed
/// (a lookup failed, an answer did not parse).
pub fn dnssec(status: &Result<Status, crate::dnssec::DnssecError>, domain: &str) -> (Vec<ScanFinding>, Check) {
    let found = match status {
        Ok(Status::Secure) => Vec::new(),
        Ok(Status::Insecure { reason }) => vec![ScanFinding::new("it_standardization.dnssec_missing", domain, reason)],
        Ok(Status::Bogus { reason }) => vec![ScanFinding::new("it_standardization.dnssec_bogus", domain, reason)],
        Err(e) => {
            tracing::debug!(domain, error = %e, "DNSSEC status unknown");
            let why = format!("the chain of trust could not be followed from the trust anchor: {e}");
            return (Vec::new(), Check::not_assessable(IT, "dnssec", domain, why));
        }
    };
    let check = check::judged(IT, "dnssec", domain, &found, "signed; the chain validates from the trust anchor");
    (found, check)
}

/// CAA at the domain.
fn caa(has_records: bool, domain: &str) -> Vec<ScanFinding> {
    if has_records {
        Vec::new()
    } else {
        vec![ScanFinding::new("it_standardization.caa_missing", domain, format!("no CAA record at {domain}"))]
    }
}

/// TLS-RPT (RFC 8460) for a domain that handles mail.
fn tls_rpt(records: &[String], domain: &str) -> Vec<ScanFinding> {
    if records.iter().any(|t| t.trim_start().starts_with("v=TLSRPTv1")) {
        Vec::new()
    } else {
        vec![ScanFinding::new(
            "it_standardization.tls_rpt_missing",
            domain,
            format!("no v=TLSRPTv1 TXT record at _smtp._tls.{domain}"),
        )]
    }
}

/// MTA-STS (RFC 8461) for a domain that handles mail; `mx` are its MX hosts.
fn mta_sts(seen: &MtaStsSeen, domain: &str, mx: &[String]) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let Some(fetched) = seen.policy.as_ref().filter(|_| seen.records.iter().any(|t| standards::is_mta_sts(t))) else {
        out.push(ScanFinding::new(
            "it_standardization.mta_sts_missing",
            domain,
            format!("no v=STSv1 TXT record at _mta-sts.{domain}"),
        ));
        return out;
    };
    let host = format!("mta-sts.{domain}");
    let invalid = |why: String| ScanFinding::new("it_standardization.mta_sts_invalid", domain, why);
    match fetched {
        Err(e) => out.push(invalid(format!("policy not fetched over valid HTTPS: {e}"))),
        Ok((status, _)) if *status != 200 => {
            out.push(invalid(format!("https://{host}/.well-known/mta-sts.txt answered {status}")))
        }
        Ok((_, body)) => match MtaStsPolicy::parse(body) {
            Err(why) => out.push(invalid(format!("policy does not parse: {why}"))),
            Ok(policy) => {
                let uncovered: Vec<&String> = mx.iter().filter(|h| !policy.covers(h)).collect();
                if !uncovered.is_empty() {
                    out.push(invalid(format!(
                        "mx patterns {:?} do not cover MX host(s) {}",
                        policy.mx,
                        uncovered.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                } else if policy.mode == "testing" {
                    out.push(ScanFinding::new(
                        "it_standardization.mta_sts_testing",
                        domain,
                        format!("mode: testing ({})", body.trim().replace('\n', "; ")),
                    ));
                }
            }
        },
    }
    out
}

/// IPv6: an AAAA record on the host.
fn ipv6(has_aaaa: bool, host: &str) -> Vec<ScanFinding> {
    if has_aaaa {
        Vec::new()
    } else {
        vec![ScanFinding::new("it_standardization.ipv6_missing", host, format!("no AAAA record for {host}"))]
    }
}

/// security.txt on the website origin. Missing only when the server says so (404 or
/// 410); a fetch that fails or another status (a 5xx, a redirect, 401/403) leaves the
/// file unknown: not assessable.
fn security_txt(web: &WebsiteSeen, now: OffsetDateTime) -> (Vec<ScanFinding>, Check) {
    const CHECK: &str = "security.txt";
    let origin = format!("{}://{}/", if web.https { "https" } else { "http" }, web.host);
    let url = format!("{origin}.well-known/security.txt");
    let body = match &web.security_txt {
        Ok((200, body)) => body,
        Ok((status @ (404 | 410), _)) => {
            let found = vec![ScanFinding::new(
                "it_standardization.security_txt_missing",
                &origin,
                format!("{url} answered {status}"),
            )];
            let check = check::judged(IT, CHECK, &origin, &found, "");
            return (found, check);
        }
        Ok((status, _)) => {
            let why = format!("{url} answered {status} (neither the file nor 404)");
            return (Vec::new(), Check::not_assessable(IT, CHECK, &origin, why));
        }
        Err(e) => {
            let why = format!("{url} could not be fetched: {e}");
            return (Vec::new(), Check::not_assessable(IT, CHECK, &origin, why));
        }
    };
    let found = match SecurityTxt::parse(body) {
        Err(why) => vec![ScanFinding::new("it_standardization.security_txt_invalid", &origin, why)],
        Ok(s) if s.expires < now => vec![ScanFinding::new(
            "it_standardization.security_txt_expired",
            &origin,
            format!("Expires: {}", s.expires_text),
        )],
        Ok(_) => Vec::new(),
    };
    let check = check::judged(IT, CHECK, &origin, &found, format!("{url}: valid, not expired"));
    (found, check)
}

/// HTTPS availability of the website host: HTTP on 80 and nothing on 443.
fn https_available(web: &WebsiteSeen) -> Vec<ScanFinding> {
    if !web.https && web.http { vec![https_unavailable(&web.host)] } else { Vec::new() }
}

/// The finding for a host that serves HTTP on 80 and nothing on 443.
pub fn https_unavailable(host: &str) -> ScanFinding {
    ScanFinding::new(
        "it_standardization.https_unavailable",
        host,
        format!("{host} answers on port 80 but nothing listens on 443"),
    )
}

/// HTTPS availability of a visited host: HTTP on 80 and nothing on 443.
pub fn visit(seen: &VisitSeen, out: &mut Judged) {
    let v = &seen.visit;
    if !v.https() && v.http() {
        out.findings.push(https_unavailable(&v.host));
    }
}

/// The hosts not reached (their HTTPS is not assessable) and the stack's consistency.
pub fn rest(obs: &Observations, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(IT, "https", host, refusal.to_string()));
    }
    out.findings.extend(inconsistent_stack(&obs.domain, &obs.endpoints));
}

/// Stack consistency: two or more versions of one server product across the hosts of
/// `domain` is one finding per product on the domain, naming each version's hosts.
pub fn inconsistent_stack(domain: &str, endpoints: &[Endpoint]) -> Vec<ScanFinding> {
    let mut products: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for e in endpoints {
        if let (Some(product), Some(version)) = (&e.product, &e.version) {
            let hosts = products.entry(product.to_ascii_lowercase()).or_default().entry(version.clone()).or_default();
            let at = format!("{}:{}", e.host, e.port);
            if !hosts.contains(&at) {
                hosts.push(at);
            }
        }
    }
    products
        .into_iter()
        .filter(|(_, versions)| versions.len() > 1)
        .map(|(product, versions)| {
            let seen: Vec<String> =
                versions.iter().map(|(v, hosts)| format!("{product} {v} on {}", hosts.join(", "))).collect();
            ScanFinding::new(
                "it_standardization.inconsistent_stack",
                domain,
                format!("{} versions of {product}: {}", versions.len(), seen.join("; ")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(host: &str, server: &str) -> Endpoint {
        let (product, version) = crate::probes::web::server_product(server).unzip();
        Endpoint {
            host: host.into(),
            ip: "127.0.0.1".parse().unwrap(),
            port: 443,
            service: "https".into(),
            product,
            version: version.flatten(),
            banner: server.into(),
        }
    }

    #[test]
    fn one_finding_per_product_with_several_versions() {
        let seen = [
            endpoint("www.a.test", "nginx/1.18.0"),
            endpoint("track.a.test", "nginx/1.24.0"),
            endpoint("shop.a.test", "nginx/1.18.0"),
            endpoint("old.a.test", "Apache/2.4.62 (Unix)"),
            endpoint("plain.a.test", "nginx"),
        ];
        let found = inconsistent_stack("a.test", &seen);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].asset, "a.test");
        assert!(found[0].evidence.contains("nginx 1.18.0 on www.a.test:443, shop.a.test:443"), "{}", found[0].evidence);
        assert!(found[0].evidence.contains("nginx 1.24.0 on track.a.test:443"));
        assert!(inconsistent_stack("a.test", &seen[..1]).is_empty());
    }
}
