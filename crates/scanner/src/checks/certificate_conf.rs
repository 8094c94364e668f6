//! certificate_conf: the protocol versions and cipher suites one TLS endpoint accepts,
//! judged against Mozilla's intermediate profile, each finding saying what was observed
//! (version, suite, group, sizes).

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::Observations;
use crate::tlsprobe::suites::Suite;
use crate::tlsprobe::{TlsReport, Version};

const V: RiskVector = RiskVector::CertificateConf;

/// The hosts not reached (their port 443), then each TLS endpoint probed, then those
/// whose probe failed (not assessable).
pub fn rest(obs: &Observations, out: &mut Judged) {
    super::tls_endpoints(obs, out, V, judge, check);
}

/// The tls configuration check of the TLS endpoint `target`, judged from the findings
/// of this component among `found`.
pub fn check(target: &str, found: &[ScanFinding]) -> Check {
    check::judged(V, "tls configuration", target, &super::of_vector(found, V), "modern versions and suites only")
}

/// The names of `suites` with their versions, each once, at most six and how many more.
pub(crate) fn suite_names<'a>(suites: impl Iterator<Item = &'a (Version, &'static Suite)>) -> String {
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

/// The certificate_conf findings of one endpoint's report.
pub fn judge(r: &TlsReport) -> Vec<ScanFinding> {
    let asset = r.target.as_str();
    let mut out = Vec::new();
    let f = |code: &str, evidence: String| ScanFinding::new(code, asset, evidence);
    let speaks_tls = r.versions.iter().any(|v| *v >= Version::Ssl3);
    // Versions.
    if r.accepts(Version::Ssl2) {
        out.push(f(
            "certificate_conf.sslv2_enabled",
            format!("SSLv2 SERVER-HELLO with cipher kinds {}", r.ssl2_ciphers.join(", ")),
        ));
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
    // Suite classes over SSLv3 to TLS 1.2.
    let legacy: Vec<(Version, &'static Suite)> = r.legacy_suites().collect();
    let class = |pick: &dyn Fn(&Suite) -> bool| legacy.iter().filter(|(_, s)| pick(s)).collect::<Vec<_>>();
    let null = class(&|s| s.null_cipher);
    if !null.is_empty() {
        out.push(f("certificate_conf.null_suites", format!("accepted: {}", suite_names(null.into_iter()))));
    }
    let anon = class(&|s| s.anonymous());
    if !anon.is_empty() {
        out.push(f("certificate_conf.anon_suites", format!("accepted: {}", suite_names(anon.into_iter()))));
    }
    let export = class(&|s| s.export);
    if !export.is_empty() {
        out.push(f("certificate_conf.export_suites", format!("accepted: {}", suite_names(export.into_iter()))));
    }
    let rc4 = class(&|s| s.rc4);
    if !rc4.is_empty() {
        out.push(f("certificate_conf.rc4_suites", format!("accepted: {}", suite_names(rc4.into_iter()))));
    }
    let block64 = class(&|s| s.block64);
    if !block64.is_empty() {
        out.push(f("certificate_conf.triple_des_suites", format!("accepted: {}", suite_names(block64.into_iter()))));
    }
    if speaks_tls && !r.accepts(Version::Tls13) && !legacy.is_empty() && !legacy.iter().any(|(_, s)| s.forward_secret())
    {
        out.push(f(
            "certificate_conf.no_forward_secrecy",
            format!("no ECDHE or DHE suite and no TLS 1.3; accepted: {}", suite_names(legacy.iter())),
        ));
    }
    if !r.weak_dh.is_empty() {
        let seen: Vec<String> = r
            .weak_dh
            .iter()
            .map(|(id, bits)| format!("{} with a {bits}-bit group", crate::tlsprobe::suites::name(*id)))
            .collect();
        out.push(f("certificate_conf.weak_dh_group", seen.join(", ")));
    }
    out
}
