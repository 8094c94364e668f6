//! A TLS report judged: certificate_info from the chain, certificate_conf from the
//! versions and suites (Mozilla's intermediate profile), certificate_cve for the named
//! weaknesses, each finding saying what was observed (version, suite, group, sizes).

use super::suites::{Kx, Suite};
use super::{TlsReport, Version};
use crate::finding::ScanFinding;

/// Suites allowed by Mozilla's intermediate profile (v5.7) in TLS 1.2.
const MOZILLA_INTERMEDIATE: &[u16] = &[0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0x009e, 0x009f, 0xccaa];

/// The Mozilla server-side TLS profile the configuration meets: `modern` (TLS 1.3
/// only), `intermediate` (TLS 1.2/1.3 with the intermediate suites, DH ≥ 2048),
/// `old` (TLS 1.0 or later, no NULL/anonymous/EXPORT/RC4), or `none`.
pub fn mozilla_profile(r: &TlsReport) -> &'static str {
    let tls: Vec<Version> = r.versions.iter().copied().filter(|v| *v >= Version::Ssl3).collect();
    if tls.is_empty() {
        return "none";
    }
    if r.accepts(Version::Ssl2) || r.accepts(Version::Ssl3) {
        return "none";
    }
    let legacy: Vec<&Suite> = r.legacy_suites().map(|(_, s)| s).collect();
    if legacy.iter().any(|s| s.null_cipher || s.anonymous() || s.export || s.rc4) {
        return "none";
    }
    if tls == [Version::Tls13] {
        return "modern";
    }
    let only_new = tls.iter().all(|v| *v >= Version::Tls12);
    let suites_ok = legacy.iter().all(|s| MOZILLA_INTERMEDIATE.contains(&s.id));
    if only_new && suites_ok && r.dh_bits.is_none_or(|b| b >= 2048) {
        return "intermediate";
    }
    "old"
}

fn names<'a>(suites: impl Iterator<Item = &'a (Version, &'static Suite)>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for (v, s) in suites {
        let text = format!("{} ({})", s.name, v.name());
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    let more = seen.len().saturating_sub(6);
    let mut out = seen.into_iter().take(6).collect::<Vec<_>>().join(", ");
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

/// The findings of one endpoint's report.
pub fn judge(r: &TlsReport) -> Vec<ScanFinding> {
    let asset = r.target.as_str();
    let mut out = Vec::new();
    let f = |code: &str, evidence: String| ScanFinding::new(code, asset, evidence);
    let speaks_tls = r.versions.iter().any(|v| *v >= Version::Ssl3);
    // --- certificate_conf: versions ---
    if r.accepts(Version::Ssl2) {
        out.push(f(
            "certificate_conf.sslv2_enabled",
            format!("SSLv2 SERVER-HELLO with cipher kinds {}", r.ssl2_ciphers.join(", ")),
        ));
        out.push(
            f("certificate_cve.drown", format!("SSLv2 accepted ({})", r.ssl2_ciphers.join(", ")))
                .with_cve("CVE-2016-0800"),
        );
    }
    let version_suites = |v: Version| {
        r.suites
            .iter()
            .find(|s| s.version == v)
            .map(|s| s.suites.iter().take(4).cloned().collect::<Vec<_>>().join(", "))
    };
    for (v, code) in [
        (Version::Ssl3, "certificate_conf.sslv3_enabled"),
        (Version::Tls10, "certificate_conf.tls10_enabled"),
        (Version::Tls11, "certificate_conf.tls11_enabled"),
    ] {
        if r.accepts(v) {
            out.push(f(code, format!("{} accepted, e.g. {}", v.name(), version_suites(v).unwrap_or_default())));
        }
    }
    if (speaks_tls || r.accepts(Version::Ssl2)) && !r.accepts(Version::Tls13) {
        let offered: Vec<&str> = r.versions.iter().map(|v| v.name()).collect();
        out.push(f("certificate_conf.no_tls13", format!("TLS 1.3 not accepted; accepted: {}", offered.join(", "))));
    }
    // --- suite classes over SSLv3 to TLS 1.2 ---
    let legacy: Vec<(Version, &'static Suite)> = r.legacy_suites().collect();
    let class = |pick: &dyn Fn(&Suite) -> bool| legacy.iter().filter(|(_, s)| pick(s)).collect::<Vec<_>>();
    let null = class(&|s| s.null_cipher);
    if !null.is_empty() {
        out.push(f("certificate_conf.null_suites", format!("accepted: {}", names(null.into_iter()))));
    }
    let anon = class(&|s| s.anonymous());
    if !anon.is_empty() {
        out.push(f("certificate_conf.anon_suites", format!("accepted: {}", names(anon.into_iter()))));
    }
    let export = class(&|s| s.export);
    if !export.is_empty() {
        out.push(f("certificate_conf.export_suites", format!("accepted: {}", names(export.into_iter()))));
    }
    let rc4 = class(&|s| s.rc4);
    if !rc4.is_empty() {
        out.push(f("certificate_conf.rc4_suites", format!("accepted: {}", names(rc4.iter().copied()))));
        out.push(
            f("certificate_cve.rc4", format!("RC4 accepted: {}", names(rc4.into_iter()))).with_cve("CVE-2013-2566"),
        );
    }
    let block64 = class(&|s| s.block64);
    if !block64.is_empty() {
        out.push(f("certificate_conf.triple_des_suites", format!("accepted: {}", names(block64.iter().copied()))));
        out.push(
            f("certificate_cve.sweet32", format!("64-bit block cipher accepted: {}", names(block64.into_iter())))
                .with_cve("CVE-2016-2183"),
        );
    }
    if speaks_tls && !r.accepts(Version::Tls13) && !legacy.is_empty() && !legacy.iter().any(|(_, s)| s.forward_secret())
    {
        out.push(f(
            "certificate_conf.no_forward_secrecy",
            format!("no ECDHE or DHE suite and no TLS 1.3; accepted: {}", names(legacy.iter())),
        ));
    }
    if !r.weak_dh.is_empty() {
        let seen: Vec<String> = r
            .weak_dh
            .iter()
            .map(|(id, bits)| format!("{} with a {bits}-bit group", super::suites::name(*id)))
            .collect();
        out.push(f("certificate_conf.weak_dh_group", seen.join(", ")));
    }
    // --- certificate_cve ---
    let cbc_in = |v: Version| legacy.iter().filter(move |(sv, s)| *sv == v && s.cbc).collect::<Vec<_>>();
    let ssl3_cbc = cbc_in(Version::Ssl3);
    if !ssl3_cbc.is_empty() {
        out.push(
            f("certificate_cve.poodle", format!("SSLv3 with CBC: {}", names(ssl3_cbc.iter().copied())))
                .with_cve("CVE-2014-3566"),
        );
    }
    let mut beast = ssl3_cbc;
    beast.extend(cbc_in(Version::Tls10));
    if !beast.is_empty() {
        out.push(
            f("certificate_cve.beast", format!("CBC in SSLv3/TLS 1.0: {}", names(beast.into_iter())))
                .with_cve("CVE-2011-3389"),
        );
    }
    if r.compression {
        out.push(
            f("certificate_cve.crime", "the server chose DEFLATE compression in its ServerHello".to_owned())
                .with_cve("CVE-2012-4929"),
        );
    }
    let rsa_export = class(&|s| s.export && s.kx == Kx::Rsa);
    if !rsa_export.is_empty() {
        out.push(
            f("certificate_cve.freak", format!("RSA EXPORT accepted: {}", names(rsa_export.into_iter())))
                .with_cve("CVE-2015-0204"),
        );
    }
    let dhe_export = class(&|s| s.export && s.kx == Kx::Dhe);
    let small_dh: Vec<String> = r
        .weak_dh
        .iter()
        .filter(|(_, b)| *b <= 1024)
        .map(|(id, b)| format!("{} with {b}-bit DH", super::suites::name(*id)))
        .collect();
    if !small_dh.is_empty() || !dhe_export.is_empty() {
        let mut seen = small_dh;
        if !dhe_export.is_empty() {
            seen.push(format!("DHE EXPORT: {}", names(dhe_export.into_iter())));
        }
        out.push(f("certificate_cve.logjam", seen.join("; ")).with_cve("CVE-2015-4000"));
    }
    if let Some(hb) = &r.heartbleed
        && hb.vulnerable
    {
        out.push(
            f(
                "certificate_cve.heartbleed",
                format!(
                    "a heartbeat request claiming 16384 bytes with none sent was answered with {} bytes",
                    hb.leaked
                ),
            )
            .with_cve("CVE-2014-0160"),
        );
    }
    if r.secure_renegotiation == Some(false) {
        out.push(
            f(
                "certificate_cve.insecure_renegotiation",
                "the ServerHello carries no renegotiation_info extension (RFC 5746)".to_owned(),
            )
            .with_cve("CVE-2009-3555"),
        );
    }
    // --- certificate_info ---
    if let Some(c) = &r.certificate {
        out.extend(certificate_findings(asset, c));
    }
    out
}

fn certificate_findings(asset: &str, c: &super::cert::CertReport) -> Vec<ScanFinding> {
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
    let weak: Vec<&String> = c.signatures.iter().filter(|s| super::cert::weak_signature(s)).collect();
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
