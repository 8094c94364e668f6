//! What the it_standardization checks judge, as internet.nl tests it: CAA, MTA-STS (the
//! TXT record and the policy over HTTPS with a valid certificate), TLS-RPT, IPv6 on the
//! website and mail hosts, security.txt (RFC 9116) and whether a host listens; DNSSEC is
//! `crate::dnssec`'s. The policy parsers are here; the verdicts are in
//! `crate::checks::it_standardization`.

use hickory_resolver::proto::rr::RecordType;
use time::OffsetDateTime;

use crate::dns::DnsError;
use crate::guard::Guard;
use crate::http::{self, Verify};

/// Does the domain publish CAA records?
pub async fn caa(guard: &Guard, domain: &str) -> Result<bool, DnsError> {
    Ok(!guard.dns().lookup(domain, RecordType::CAA).await?.is_empty())
}

/// The TXT records at `_smtp._tls.<domain>` (TLS-RPT, RFC 8460).
pub async fn tls_rpt(guard: &Guard, domain: &str) -> Result<Vec<String>, DnsError> {
    guard.dns().txt(&format!("_smtp._tls.{domain}")).await
}

/// What the MTA-STS check (RFC 8461) of a domain judges.
#[derive(Debug)]
pub struct MtaStsSeen {
    /// The TXT records at `_mta-sts.<domain>`.
    pub records: Vec<String>,
    /// When they include a `v=STSv1` one: what `https://mta-sts.<domain>/.well-known/mta-sts.txt`
    /// answered over valid HTTPS (status and body), or why it could not be fetched.
    pub policy: Option<Result<(u16, String), String>>,
}

/// Is `record` an MTA-STS record?
pub fn is_mta_sts(record: &str) -> bool {
    record.trim_start().starts_with("v=STSv1")
}

/// The MTA-STS record of `domain` and, when it publishes one, its policy.
pub async fn mta_sts(guard: &Guard, lab_root: Option<&[u8]>, domain: &str) -> Result<MtaStsSeen, DnsError> {
    let records = guard.dns().txt(&format!("_mta-sts.{domain}")).await?;
    if !records.iter().any(|t| is_mta_sts(t)) {
        return Ok(MtaStsSeen { records, policy: None });
    }
    let host = format!("mta-sts.{domain}");
    let fetched = http::get(guard, lab_root, true, &host, "/.well-known/mta-sts.txt", Verify::Yes).await;
    let policy = fetched.map(|r| (r.status, r.body)).map_err(|e| e.to_string());
    Ok(MtaStsSeen { records, policy: Some(policy) })
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

/// Does `host` have an AAAA record?
pub async fn ipv6(guard: &Guard, host: &str) -> Result<bool, DnsError> {
    Ok(!guard.dns().lookup(host, RecordType::AAAA).await?.is_empty())
}

/// Does `host` accept connections on the standard `port`?
pub async fn listens(guard: &Guard, host: &str, port: u16) -> bool {
    guard.connect_host(host, port).await.is_ok()
}

/// What `/.well-known/security.txt` of the website origin answered (`https://` when the
/// host serves HTTPS): its status and body, or why it could not be fetched.
pub async fn security_txt(guard: &Guard, website_host: &str, https: bool) -> Result<(u16, String), String> {
    let fetched = http::get(guard, None, https, website_host, "/.well-known/security.txt", Verify::No).await;
    fetched.map(|r| (r.status, r.body)).map_err(|e| e.to_string())
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
