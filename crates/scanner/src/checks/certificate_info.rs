//! certificate_info: the certificate chain of one TLS endpoint: parsed, valid for the
//! name, trusted, not expiring soon, a strong key and signature, a validity that is not
//! too long.

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::Observations;
use crate::tlsprobe::TlsReport;

const V: RiskVector = RiskVector::CertificateInfo;

/// The hosts not reached (their port 443), then each TLS endpoint probed, then those
/// whose probe failed (not assessable).
pub fn rest(obs: &Observations, out: &mut Judged) {
    super::tls_endpoints(obs, out, V, judge, check);
}

/// The certificate check of the TLS endpoint `target`, judged from the findings of this
/// component among `found`.
pub fn check(target: &str, found: &[ScanFinding]) -> Check {
    check::judged(
        V,
        "certificate",
        target,
        &super::of_vector(found, V),
        "a valid chain for the name, not expiring soon",
    )
}

/// The certificate_info findings of one endpoint's report.
pub fn judge(r: &TlsReport) -> Vec<ScanFinding> {
    match &r.certificate {
        Some(c) => certificate_findings(r.target.as_str(), c),
        None => Vec::new(),
    }
}

fn certificate_findings(asset: &str, c: &crate::tlsprobe::cert::CertReport) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let f = |code: &str, evidence: String| ScanFinding::new(code, asset, evidence);
    if let Some(e) = &c.unparsed {
        out.push(f("certificate_info.untrusted_chain", format!("the leaf certificate does not parse: {e}")));
        return out;
    }
    let who = format!("subject {}, issuer {}", c.subject, c.issuer);
    if c.days_left < 0 {
        out.push(f("certificate_info.expired", format!("notAfter {} ({} days ago); {who}", c.not_after, -c.days_left)));
    } else if c.days_left <= 14 {
        out.push(f(
            "certificate_info.expires_within_14_days",
            format!("notAfter {} ({} days left)", c.not_after, c.days_left),
        ));
    } else if c.days_left <= 30 {
        out.push(f(
            "certificate_info.expires_within_30_days",
            format!("notAfter {} ({} days left)", c.not_after, c.days_left),
        ));
    }
    if c.days_left >= 0 && c.validity_days >= 0 && c.days_left > c.validity_days {
        out.push(f("certificate_info.not_yet_valid", format!("notBefore {} is in the future; {who}", c.not_before)));
    }
    if c.self_signed {
        out.push(f("certificate_info.self_signed", format!("issuer = subject ({})", c.subject)));
    } else if let Some(why) = &c.untrusted {
        if c.issuer_missing && c.chain_length == 1 {
            out.push(f(
                "certificate_info.incomplete_chain",
                format!("only the leaf was sent; its issuer {} is not in the chain ({why})", c.issuer),
            ));
        } else {
            out.push(f("certificate_info.untrusted_chain", format!("{why}; {who}")));
        }
    }
    if !c.hostname_matches {
        out.push(f(
            "certificate_info.hostname_mismatch",
            format!(
                "{} is not among the certificate's names [{}]",
                asset.rsplit_once(':').map_or(asset, |(h, _)| h),
                c.names.join(", ")
            ),
        ));
    }
    let weak_key = if c.key_is_rsa { c.key_bits < 2048 } else { c.key_bits > 0 && c.key_bits < 256 };
    if weak_key {
        out.push(f("certificate_info.weak_key", format!("{} key", c.key)));
    }
    let weak: Vec<&String> = c.signatures.iter().filter(|s| crate::tlsprobe::cert::weak_signature(s)).collect();
    if !weak.is_empty() {
        out.push(f(
            "certificate_info.weak_signature",
            format!("signed with {}", weak.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
        ));
    }
    if c.validity_days > 398 {
        out.push(f(
            "certificate_info.validity_too_long",
            format!("valid {} days ({} to {})", c.validity_days, c.not_before, c.not_after),
        ));
    }
    out
}
