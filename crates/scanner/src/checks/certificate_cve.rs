//! certificate_cve: the named TLS weaknesses one endpoint shows (DROWN, RC4, SWEET32,
//! POODLE, BEAST, CRIME, FREAK, Logjam, Heartbleed, insecure renegotiation), each with
//! its CVE and what was observed.

use model::RiskVector;

use super::Judged;
use super::certificate_conf::suite_names as names;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::Observations;
use crate::tlsprobe::suites::{Kx, Suite};
use crate::tlsprobe::{TlsReport, Version};

const V: RiskVector = RiskVector::CertificateCve;

/// The hosts not reached (their port 443), then each TLS endpoint probed, then those
/// whose probe failed (not assessable).
pub fn rest(obs: &Observations, out: &mut Judged) {
    super::tls_endpoints(obs, out, V, judge, check);
}

/// The tls vulnerabilities check of the TLS endpoint `target`, judged from the findings
/// of this component among `found`.
pub fn check(target: &str, found: &[ScanFinding]) -> Check {
    let observed = "none of the known TLS vulnerabilities";
    check::judged(V, "tls vulnerabilities", target, &super::of_vector(found, V), observed)
}

/// The certificate_cve findings of one endpoint's report.
pub fn judge(r: &TlsReport) -> Vec<ScanFinding> {
    let asset = r.target.as_str();
    let mut out = Vec::new();
    let f = |code: &str, evidence: String| ScanFinding::new(code, asset, evidence);
    if r.accepts(Version::Ssl2) {
        out.push(
            f("certificate_cve.drown", format!("SSLv2 accepted ({})", r.ssl2_ciphers.join(", ")))
                .with_cve("CVE-2016-0800"),
        );
    }
    let legacy: Vec<(Version, &'static Suite)> = r.legacy_suites().collect();
    let class = |pick: &dyn Fn(&Suite) -> bool| legacy.iter().filter(|(_, s)| pick(s)).collect::<Vec<_>>();
    let rc4 = class(&|s| s.rc4);
    if !rc4.is_empty() {
        out.push(
            f("certificate_cve.rc4", format!("RC4 accepted: {}", names(rc4.into_iter()))).with_cve("CVE-2013-2566"),
        );
    }
    let block64 = class(&|s| s.block64);
    if !block64.is_empty() {
        out.push(
            f("certificate_cve.sweet32", format!("64-bit block cipher accepted: {}", names(block64.into_iter())))
                .with_cve("CVE-2016-2183"),
        );
    }
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
        .map(|(id, b)| format!("{} with {b}-bit DH", crate::tlsprobe::suites::name(*id)))
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
    out
}
