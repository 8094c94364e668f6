//! The it_standardization component, as internet.nl tests it: DNSSEC (validated by
//! `crate::dnssec`), CAA, MTA-STS (TXT record and the policy over HTTPS with a valid
//! certificate), TLS-RPT, IPv6 on the website and mail hosts, security.txt (RFC 9116)
//! and HTTPS availability. Stack consistency needs the fingerprints of the web probes and
//! arrives with them.

use hickory_resolver::proto::rr::RecordType;
use time::OffsetDateTime;

use model::RiskVector;

use crate::check::{self, Check};
use crate::dns::DnsError;
use crate::dnssec::{Status, Validator};
use crate::finding::ScanFinding;
use crate::guard::Guard;
use crate::http::{self, Verify};

/// DNSSEC for a company domain: secure (the chain validates from the trust anchor), a
/// finding (unsigned: `dnssec_missing`, proven by the parent's signed denial of a DS;
/// a broken chain: `dnssec_bogus`), or not assessable when the chain cannot be followed
/// (a lookup failed, an answer did not parse).
pub async fn dnssec(validator: &Validator, domain: &str) -> (Vec<ScanFinding>, Check) {
    let it = RiskVector::ItStandardization;
    let found = match validator.zone_status(domain).await {
        Ok(Status::Secure) => Vec::new(),
        Ok(Status::Insecure { reason }) => vec![ScanFinding::new("it_standardization.dnssec_missing", domain, reason)],
        Ok(Status::Bogus { reason }) => vec![ScanFinding::new("it_standardization.dnssec_bogus", domain, reason)],
        Err(e) => {
            tracing::debug!(domain, error = %e, "DNSSEC status unknown");
            let why = format!("the chain of trust could not be followed from the trust anchor: {e}");
            return (Vec::new(), Check::not_assessable(it, "dnssec", domain, why));
        }
    };
    let check = check::judged(it, "dnssec", domain, &found, "signed; the chain validates from the trust anchor");
    (found, check)
}

/// CAA at the domain.
pub async fn caa(guard: &Guard, domain: &str) -> Result<Vec<ScanFinding>, DnsError> {
    Ok(if guard.dns().lookup(domain, RecordType::CAA).await?.is_empty() {
        vec![ScanFinding::new("it_standardization.caa_missing", domain, format!("no CAA record at {domain}"))]
    } else {
        Vec::new()
    })
}

/// TLS-RPT (RFC 8460) for a domain that handles mail.
pub async fn tls_rpt(guard: &Guard, domain: &str) -> Result<Vec<ScanFinding>, DnsError> {
    let rpt = guard.dns().txt(&format!("_smtp._tls.{domain}")).await?;
    Ok(if rpt.iter().any(|t| t.trim_start().starts_with("v=TLSRPTv1")) {
        Vec::new()
    } else {
        vec![ScanFinding::new(
            "it_standardization.tls_rpt_missing",
            domain,
            format!("no v=TLSRPTv1 TXT record at _smtp._tls.{domain}"),
        )]
    })
}

/// MTA-STS (RFC 8461) for a domain that handles mail; `mx` are its MX hosts.
pub async fn mta_sts(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    domain: &str,
    mx: &[String],
) -> Result<Vec<ScanFinding>, DnsError> {
    let mut out = Vec::new();
    let sts = guard.dns().txt(&format!("_mta-sts.{domain}")).await?;
    if !sts.iter().any(|t| t.trim_start().starts_with("v=STSv1")) {
        out.push(ScanFinding::new(
            "it_standardization.mta_sts_missing",
            domain,
            format!("no v=STSv1 TXT record at _mta-sts.{domain}"),
        ));
        return Ok(out);
    }
    let host = format!("mta-sts.{domain}");
    let fetched = http::get(guard, lab_root, true, &host, "/.well-known/mta-sts.txt", Verify::Yes).await;
    let invalid = |why: String| ScanFinding::new("it_standardization.mta_sts_invalid", domain, why);
    match fetched {
        Err(e) => out.push(invalid(format!("policy not fetched over valid HTTPS: {e}"))),
        Ok(r) if r.status != 200 => {
            out.push(invalid(format!("https://{host}/.well-known/mta-sts.txt answered {}", r.status)))
        }
        Ok(r) => match MtaStsPolicy::parse(&r.body) {
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
                        format!("mode: testing ({})", r.body.trim().replace('\n', "; ")),
                    ));
                }
            }
        },
    }
    Ok(out)
}

/// An MTA-STS policy file (RFC 8461 §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtaStsPolicy {
    pub mode: String,
    pub mx: Vec<String>,
    pub max_age: u64,
}

impl MtaStsPolicy {
    pub fn parse(text: &str) -> Result<MtaStsPolicy, String> {
        let (mut version, mut mode, mut mx, mut max_age) = (None, None, Vec::new(), None);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (key, value) = line.split_once(':').ok_or_else(|| format!("line {line:?} is not key: value"))?;
            let value = value.trim();
            match key.trim() {
                "version" => version = Some(value.to_owned()),
                "mode" => mode = Some(value.to_owned()),
                "mx" => mx.push(value.to_ascii_lowercase()),
                "max_age" => max_age = Some(value.parse::<u64>().map_err(|_| format!("max_age {value:?}"))?),
                _ => {}
            }
        }
        if version.as_deref() != Some("STSv1") {
            return Err("version is not STSv1".to_owned());
        }
        let mode = mode.ok_or("no mode")?;
        if !matches!(mode.as_str(), "enforce" | "testing" | "none") {
            return Err(format!("mode {mode:?}"));
        }
        let max_age = max_age.ok_or("no max_age")?;
        if mx.is_empty() && mode != "none" {
            return Err("no mx".to_owned());
        }
        Ok(MtaStsPolicy { mode, mx, max_age })
    }

    /// Does an `mx` pattern match `host` (`*.` covers exactly one label)?
    pub fn covers(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.mx.iter().any(|p| match p.strip_prefix("*.") {
            Some(suffix) => host.split_once('.').is_some_and(|(_, rest)| rest == suffix),
            None => *p == host,
        })
    }
}

/// IPv6: an AAAA record on each of `hosts` (the website host and the mail hosts).
pub async fn ipv6(guard: &Guard, hosts: &[String]) -> Result<Vec<ScanFinding>, DnsError> {
    let mut out = Vec::new();
    for host in hosts {
        if guard.dns().lookup(host, RecordType::AAAA).await?.is_empty() {
            out.push(ScanFinding::new("it_standardization.ipv6_missing", host, format!("no AAAA record for {host}")));
        }
    }
    Ok(out)
}

/// Does `host` accept connections on the standard `port`?
pub async fn listens(guard: &Guard, host: &str, port: u16) -> bool {
    guard.connect_host(host, port).await.is_ok()
}

/// HTTPS availability of a web host: HTTP on 80 and nothing on 443.
pub async fn https_available(guard: &Guard, host: &str) -> Vec<ScanFinding> {
    let https = listens(guard, host, 443).await;
    https_available_given(guard, host, https).await
}

/// The same, when whether 443 answers is already known.
pub async fn https_available_given(guard: &Guard, host: &str, https: bool) -> Vec<ScanFinding> {
    if !https && listens(guard, host, 80).await { vec![https_unavailable(host)] } else { Vec::new() }
}

/// The finding for a host that serves HTTP on 80 and nothing on 443.
pub fn https_unavailable(host: &str) -> ScanFinding {
    ScanFinding::new(
        "it_standardization.https_unavailable",
        host,
        format!("{host} answers on port 80 but nothing listens on 443"),
    )
}

/// security.txt on the website origin (`https://` when the host serves HTTPS). Missing
/// only when the server says so (404 or 410); a fetch that fails or another status
/// (a 5xx, a redirect, 401/403) leaves the file unknown: not assessable.
pub async fn security_txt(
    guard: &Guard,
    website_host: &str,
    https: bool,
    now: OffsetDateTime,
) -> (Vec<ScanFinding>, Check) {
    let it = RiskVector::ItStandardization;
    const CHECK: &str = "security.txt";
    let origin = format!("{}://{website_host}/", if https { "https" } else { "http" });
    let url = format!("{origin}.well-known/security.txt");
    let fetched = http::get(guard, None, https, website_host, "/.well-known/security.txt", Verify::No).await;
    let body = match fetched {
        Ok(r) if r.status == 200 => r.body,
        Ok(r) if matches!(r.status, 404 | 410) => {
            let found = vec![ScanFinding::new(
                "it_standardization.security_txt_missing",
                &origin,
                format!("{url} answered {}", r.status),
            )];
            let check = check::judged(it, CHECK, &origin, &found, "");
            return (found, check);
        }
        Ok(r) => {
            let why = format!("{url} answered {} (neither the file nor 404)", r.status);
            return (Vec::new(), Check::not_assessable(it, CHECK, &origin, why));
        }
        Err(e) => {
            let why = format!("{url} could not be fetched: {e}");
            return (Vec::new(), Check::not_assessable(it, CHECK, &origin, why));
        }
    };
    let found = match SecurityTxt::parse(&body) {
        Err(why) => vec![ScanFinding::new("it_standardization.security_txt_invalid", &origin, why)],
        Ok(s) if s.expires < now => vec![ScanFinding::new(
            "it_standardization.security_txt_expired",
            &origin,
            format!("Expires: {}", s.expires_text),
        )],
        Ok(_) => Vec::new(),
    };
    let check = check::judged(it, CHECK, &origin, &found, format!("{url}: valid, not expired"));
    (found, check)
}

/// The fields of a security.txt that RFC 9116 requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityTxt {
    pub contacts: Vec<String>,
    pub expires: OffsetDateTime,
    pub expires_text: String,
}

impl SecurityTxt {
    pub fn parse(text: &str) -> Result<SecurityTxt, String> {
        let (mut contacts, mut expires) = (Vec::new(), Vec::new());
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with("-----") {
                continue;
            }
            let Some((field, value)) = line.split_once(':') else { continue };
            match field.trim().to_ascii_lowercase().as_str() {
                "contact" => contacts.push(value.trim().to_owned()),
                "expires" => expires.push(value.trim().to_owned()),
                _ => {}
            }
        }
        if contacts.is_empty() {
            return Err("no Contact field".to_owned());
        }
        let expires_text = match expires.as_slice() {
            [] => return Err("no Expires field".to_owned()),
            [one] => one.clone(),
            _ => return Err("Expires given more than once".to_owned()),
        };
        let expires = OffsetDateTime::parse(&expires_text, &time::format_description::well_known::Rfc3339)
            .map_err(|e| format!("Expires {expires_text:?} is not RFC 3339: {e}"))?;
        Ok(SecurityTxt { contacts, expires, expires_text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mta_sts_policies_parse_and_match_mx_patterns() {
        let p = MtaStsPolicy::parse(
            "version: STSv1\nmode: enforce\nmx: mail.acme.test\nmx: *.mx.acme.test\nmax_age: 604800\n",
        )
        .unwrap();
        assert!(p.covers("mail.acme.test") && p.covers("a.mx.acme.test") && p.covers("MAIL.acme.test."));
        assert!(!p.covers("b.a.mx.acme.test") && !p.covers("other.test"));
        assert!(MtaStsPolicy::parse("version: STSv1\nmode: enforce\nmax_age: 1\n").is_err(), "no mx");
        assert!(MtaStsPolicy::parse("mode: enforce\nmx: a\nmax_age: 1").is_err(), "no version");
        assert!(MtaStsPolicy::parse("<html>").is_err());
    }

    #[test]
    fn security_txt_needs_contact_and_a_valid_expires() {
        let ok = SecurityTxt::parse("Contact: mailto:s@acme.test\nExpires: 2030-01-01T00:00:00Z\n").unwrap();
        assert_eq!(ok.contacts, ["mailto:s@acme.test"]);
        assert!(SecurityTxt::parse("Expires: 2030-01-01T00:00:00Z").unwrap_err().contains("Contact"));
        assert!(SecurityTxt::parse("Contact: x").unwrap_err().contains("Expires"));
        assert!(SecurityTxt::parse("Contact: x\nExpires: soon").unwrap_err().contains("RFC 3339"));
    }
}
