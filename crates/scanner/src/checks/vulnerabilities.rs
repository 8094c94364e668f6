//! vulnerabilities: the CVEs the vulnerability database matched to each detected
//! product with a version (the worker asks it: the scanner opens no store), judged on
//! what the host is seen to run, each with its basis (`model::CveBasis`). A CVE whose
//! covering NVD entry names the version (a version, a pattern, a bounded range) is a
//! finding; one whose entry has no bounds, or is for an edition or platform the
//! detection does not name, is `unbounded`; one that holds only together with another
//! product of its configuration (the platform) is a finding when the host is seen to
//! run it, dropped when it is seen to run something else there, and
//! `platform-conditional` when nothing on the host says. Only scored bases open
//! findings; the others are kept on the SBOM with their basis. The software's vendor
//! (or the distribution that packages it) has the last word where it has spoken
//! (`vulndb::advisory`): a CVE it states the version affected by has the basis `vendor`
//! (`platform-conditional` when its statement is for one platform only), one it states
//! not affected is not matched at all (the worker drops it). A product without a
//! version is not assessable.

use model::{AttributedCve, CveBasis, CveId, RiskVector, Severity};

use super::Judged;
use crate::check::Check;
use crate::finding::ScanFinding;
use crate::gather::Observations;
use crate::software::{Software, release_version};

/// One CVE the vulnerability database matched to a detected product, with what it
/// records of the CVE.
#[derive(Debug, Clone)]
pub struct CveMatch {
    pub id: CveId,
    /// How the database matched it (the configuration that covers the product).
    pub why: String,
    /// Whether the covering entry names the versions it covers (see the module).
    pub bounded: bool,
    /// The product's CPE name that matched.
    pub cpe: String,
    /// The other nodes of the CVE's configuration (the platform it needs).
    pub conditions: Vec<Condition>,
    pub cvss3: Option<f64>,
    /// The CVSS v4.0 base score, which sets the severity when there is no v3.
    pub cvss4: Option<f64>,
    pub cvss2: Option<f64>,
    /// CISA lists it as exploited.
    pub kev: bool,
    pub epss: Option<f64>,
    /// The vendor's statement that the version is affected, when it made one.
    pub vendor: Option<VendorSays>,
    /// The distribution whose package the detection is, when its security data does not
    /// decide this CVE for the package's version: a fix may be backported.
    pub backport_unknown: Option<String>,
    /// The vendor that lists every CVE of its product and does not list this one.
    pub unlisted_by: Option<String>,
}

/// A vendor's (or distribution's) statement that a version is affected by a CVE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorSays {
    /// The statement as a reader reads it ("the OpenSSL project states 1.0.1f affected
    /// (from 1.0.1 before 1.0.1g)").
    pub statement: String,
    /// The one platform the statement is for, when the vendor limits it to one.
    pub platform: Option<String>,
}

/// A node of a CVE's configuration besides the product, as what the host is seen to
/// run bears on it.
#[derive(Debug, Clone)]
pub struct Condition {
    pub text: String,
    /// The host is seen to run something else there.
    pub contradicted: bool,
    /// The host is seen to run what it asks for.
    pub holds: bool,
}

/// What the check of one detected product made: its findings (one per scored CVE), its
/// check (none for a product without a CPE name), and the CVEs attributed to it, each
/// with its basis.
#[derive(Debug, Clone, Default)]
pub struct ProductJudged {
    pub findings: Vec<ScanFinding>,
    pub check: Option<Check>,
    pub cves: Vec<AttributedCve>,
}

impl CveMatch {
    /// Its basis, or `None` when the host is seen to run something else where its
    /// configuration needs a platform (it does not apply).
    pub fn basis(&self) -> Option<CveBasis> {
        let basis = match &self.vendor {
            Some(v) if v.platform.is_some() => CveBasis::PlatformConditional,
            Some(_) => CveBasis::Vendor,
            None if self.conditions.iter().any(|c| c.contradicted) => return None,
            None if self.unlisted_by.is_some() => CveBasis::VendorUnlisted,
            None if !self.bounded => CveBasis::Unbounded,
            None if self.conditions.iter().any(|c| !c.holds) => CveBasis::PlatformConditional,
            None => CveBasis::NvdRange,
        };
        Some(match self.backport_unknown {
            Some(_) if basis.scored() => CveBasis::DistributionBackportUnknown,
            _ => basis,
        })
    }
}

/// The name of the check of one product.
fn check_name(s: &Software) -> String {
    format!("cves of {}", s.label())
}

/// Can a CVE be matched to `s`? Not without a release version.
pub fn matchable(s: &Software) -> bool {
    s.version.as_deref().and_then(release_version).is_some()
}

/// The check of a product that is not [`matchable`]: not assessable, for a product with
/// a CPE name (none for one without).
pub fn unversioned(s: &Software) -> Option<Check> {
    let why = "no version detected: a CVE cannot be matched without one";
    (!s.cpes.is_empty()).then(|| Check::not_assessable(RiskVector::Vulnerabilities, &check_name(s), &s.host, why))
}

/// The findings and check of the versioned product `s`, from the CVEs the database
/// matched to it.
pub fn judge(s: &Software, matched: &[CveMatch]) -> ProductJudged {
    let mut out = ProductJudged::default();
    let label = s.label();
    let attributed: Vec<(&CveMatch, CveBasis)> = matched.iter().filter_map(|m| Some((m, m.basis()?))).collect();
    let scored: Vec<&CveMatch> = attributed.iter().filter(|(_, b)| b.scored()).map(|(m, _)| *m).collect();
    for m in &scored {
        let mut evidence = match &m.vendor {
            Some(v) => format!("{label} ({}): {}", m.cpe, v.statement),
            None => format!("{label} ({}) is covered by {}", m.cpe, m.why),
        };
        if m.vendor.is_none() && !m.conditions.is_empty() {
            let met: Vec<&str> = m.conditions.iter().map(|c| c.text.as_str()).collect();
            evidence.push_str(&format!("; together with {}, detected on the host", met.join(" and ")));
        }
        match (m.cvss3, m.cvss4, m.cvss2) {
            (Some(v3), ..) => evidence.push_str(&format!("; CVSS v3 {v3:.1}")),
            (None, Some(v4), _) => evidence.push_str(&format!("; CVSS v4.0 {v4:.1}")),
            (None, None, Some(v2)) => evidence.push_str(&format!("; CVSS v2 {v2:.1}")),
            _ => {}
        }
        if let Some(d) = &m.backport_unknown {
            evidence.push_str(&format!(
                "; lower confidence: {d} packages it and may have backported the fix, and no {d} security data \
                 Rampart holds decides this package version"
            ));
        }
        if m.kev {
            evidence.push_str("; in the CISA Known Exploited Vulnerabilities catalog");
        }
        if let Some(e) = m.epss {
            evidence.push_str(&format!("; EPSS {e:.3}"));
        }
        evidence.push_str(&format!("; detected by {}", s.evidence));
        out.findings.push(
            ScanFinding::new("vulnerabilities.cve", &s.host, evidence)
                .with_cve(m.id.as_str())
                .with_component(label.clone())
                .with_severity(cve_severity(m.cvss3.or(m.cvss4), m.cvss2, m.kev)),
        );
    }
    if !s.cpes.is_empty() {
        let check = check_name(s);
        out.check = Some(if scored.is_empty() {
            let unscored = attributed.len();
            let observed = if unscored == 0 {
                format!("no CVE matches {}", s.cpes.join(", "))
            } else {
                format!(
                    "no CVE names the version of {}; {unscored} listed unscored on the SBOM (unbounded or \
                     platform-conditional NVD entries, or ones the vendor does not list)",
                    s.cpes.join(", ")
                )
            };
            Check::pass(RiskVector::Vulnerabilities, &check, &s.host, observed)
        } else {
            Check::finding(RiskVector::Vulnerabilities, &check, &s.host, scored.iter().map(|m| m.id.as_str()))
        });
    }
    out.cves = attributed.into_iter().map(|(m, basis)| AttributedCve::new(m.id.clone(), basis)).collect();
    out
}

/// The hosts not reached: their software is not assessable.
pub fn rest(obs: &Observations, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(RiskVector::Vulnerabilities, "software", host, refusal.to_string()));
    }
}

/// The severity of a CVE finding (docs/FINDINGS.md): the CVSS v3 base severity (or
/// v4.0's, whose bands are the same, for a record without v3: pass it as `cvss3`), v2
/// bands when there is neither, critical when CISA lists it as exploited.
pub fn cve_severity(cvss3: Option<f64>, cvss2: Option<f64>, kev: bool) -> Severity {
    if kev {
        return Severity::Critical;
    }
    match (cvss3, cvss2) {
        (Some(s), _) if s >= 9.0 => Severity::Critical,
        (Some(s), _) if s >= 7.0 => Severity::High,
        (Some(s), _) if s >= 4.0 => Severity::Medium,
        (Some(s), _) if s > 0.0 => Severity::Low,
        (Some(_), _) => Severity::Info,
        (None, Some(s)) if s >= 7.0 => Severity::High,
        (None, Some(s)) if s >= 4.0 => Severity::Medium,
        (None, Some(_)) => Severity::Low,
        (None, None) => Severity::Medium,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(id: &str, bounded: bool, conditions: Vec<Condition>) -> CveMatch {
        CveMatch {
            id: CveId::parse(id).unwrap(),
            why: "cpe:2.3:a:apache:http_server:*".into(),
            bounded,
            cpe: "cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*".into(),
            conditions,
            cvss3: Some(9.8),
            cvss4: None,
            cvss2: None,
            kev: false,
            epss: None,
            vendor: None,
            backport_unknown: None,
            unlisted_by: None,
        }
    }

    fn condition(holds: bool, contradicted: bool) -> Condition {
        Condition { text: "cpe:2.3:o:redhat:enterprise_linux:5".into(), holds, contradicted }
    }

    #[test]
    fn only_scored_bases_open_findings_and_every_basis_is_listed() {
        let s = Software {
            host: "www.acme.test".into(),
            name: "Apache HTTP Server".into(),
            version: Some("2.4.49".into()),
            categories: vec![],
            cpes: vec!["cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*".into()],
            purl: None,
            confidence: 100,
            evidence: "Server header".into(),
            packaged: None,
        };
        let all = [
            matched("CVE-2021-41773", true, vec![]),
            matched("CVE-2009-1890", false, vec![]),
            matched("CVE-2008-3844", true, vec![condition(false, false)]),
            matched("CVE-2008-0001", true, vec![condition(false, true)]),
            matched("CVE-2008-0002", true, vec![condition(true, false)]),
        ];
        let judged = judge(&s, &all);
        let bases: Vec<(&str, CveBasis)> = judged.cves.iter().map(|c| (c.id.as_str(), c.basis)).collect();
        assert_eq!(
            bases,
            [
                ("CVE-2021-41773", CveBasis::NvdRange),
                ("CVE-2009-1890", CveBasis::Unbounded),
                ("CVE-2008-3844", CveBasis::PlatformConditional),
                ("CVE-2008-0002", CveBasis::NvdRange),
            ],
            "a contradicted platform drops the CVE; a met one counts"
        );
        let charged: Vec<Option<&str>> = judged.findings.iter().map(|f| f.cve.as_deref()).collect();
        assert_eq!(charged, [Some("CVE-2021-41773"), Some("CVE-2008-0002")]);
        assert!(judged.findings.iter().all(|f| f.severity == Severity::Critical), "no severity step for a basis");
        // A record scored only in CVSS v4.0: its score sets the severity.
        let v4 = CveMatch { cvss3: None, cvss4: Some(5.3), cvss2: Some(9.0), ..matched("CVE-2025-0001", true, vec![]) };
        let judged_v4 = judge(&s, std::slice::from_ref(&v4));
        assert_eq!(judged_v4.findings[0].severity, Severity::Medium);
        assert!(judged_v4.findings[0].evidence.contains("CVSS v4.0 5.3"), "{}", judged_v4.findings[0].evidence);
        let check = judged.check.unwrap();
        assert_eq!(check.detail, "CVE-2021-41773, CVE-2008-0002");
        // Nothing scored: the check passes and says what is listed unscored.
        let judged = judge(&s, &all[1..3]);
        assert!(judged.findings.is_empty() && judged.cves.len() == 2);
        let check = judged.check.unwrap();
        assert_eq!(check.outcome, model::CheckOutcome::Pass);
        assert!(check.detail.contains("2 listed unscored"), "{}", check.detail);

        // The vendor's word is the basis, over NVD's entry and its conditions; the
        // evidence quotes it.
        let says = |platform: Option<&str>| VendorSays {
            statement: "the Apache HTTP Server project states 2.4.49 affected (2.4.49)".into(),
            platform: platform.map(Into::into),
        };
        let vendor = [
            CveMatch { vendor: Some(says(None)), ..matched("CVE-2009-1890", false, vec![condition(false, true)]) },
            CveMatch { vendor: Some(says(Some("Windows"))), ..matched("CVE-2021-41773", true, vec![]) },
        ];
        let judged = judge(&s, &vendor);
        let bases: Vec<CveBasis> = judged.cves.iter().map(|c| c.basis).collect();
        assert_eq!(bases, [CveBasis::Vendor, CveBasis::PlatformConditional], "a platform-only statement is not scored");
        assert_eq!(judged.findings.len(), 1);
        assert!(
            judged.findings[0].evidence.contains("(cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*): the Apache HTTP Server project states 2.4.49 affected"),
            "{}",
            judged.findings[0].evidence
        );
        assert!(!judged.findings[0].evidence.contains("together with"), "NVD's conditions are not the reason");

        // A distribution's package its distribution has not spoken of: scored, with doubt;
        // an unscored basis stays unscored.
        let packaged = [
            CveMatch { backport_unknown: Some("Ubuntu".into()), ..matched("CVE-2021-41773", true, vec![]) },
            CveMatch { backport_unknown: Some("Ubuntu".into()), ..matched("CVE-2009-1890", false, vec![]) },
        ];
        let judged = judge(&s, &packaged);
        let bases: Vec<CveBasis> = judged.cves.iter().map(|c| c.basis).collect();
        assert_eq!(bases, [CveBasis::DistributionBackportUnknown, CveBasis::Unbounded]);
        assert_eq!(judged.findings.len(), 1);
        assert!(
            judged.findings[0].evidence.contains("lower confidence: Ubuntu packages it"),
            "{}",
            judged.findings[0].evidence
        );
        // NVD's match that the vendor's complete list leaves out: listed, not scored.
        let unlisted =
            CveMatch { unlisted_by: Some("the OpenSSL project".into()), ..matched("CVE-2014-3566", true, vec![]) };
        let judged = judge(&s, std::slice::from_ref(&unlisted));
        assert_eq!(judged.cves[0].basis, CveBasis::VendorUnlisted);
        assert!(judged.findings.is_empty());
    }

    #[test]
    fn severities() {
        assert_eq!(cve_severity(Some(9.8), None, false), Severity::Critical);
        assert_eq!(cve_severity(Some(7.5), Some(5.0), false), Severity::High);
        assert_eq!(cve_severity(Some(6.1), Some(4.3), false), Severity::Medium);
        assert_eq!(cve_severity(Some(3.1), None, false), Severity::Low);
        assert_eq!(cve_severity(None, Some(7.5), false), Severity::High);
        assert_eq!(cve_severity(None, Some(5.0), false), Severity::Medium);
        assert_eq!(cve_severity(None, Some(2.1), false), Severity::Low);
        assert_eq!(cve_severity(Some(5.3), None, true), Severity::Critical);
    }
}
