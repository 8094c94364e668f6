//! vulnerabilities: the CVEs the vulnerability database matched to each detected
//! product with a version (the worker asks it: the scanner opens no store), judged on
//! what the host is seen to run. A CVE that holds only together with another product
//! of its configuration (the platform) is a finding when the host is seen to run it,
//! none when it is seen to run something else there, and a conditional one (a severity
//! step lower) when nothing on the host says. A product without a version is not
//! assessable.

use model::{CveId, RiskVector, Severity};

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
    /// The product's CPE name that matched.
    pub cpe: String,
    /// The other nodes of the CVE's configuration (the platform it needs).
    pub conditions: Vec<Condition>,
    pub cvss3: Option<f64>,
    pub cvss2: Option<f64>,
    /// CISA lists it as exploited.
    pub kev: bool,
    pub epss: Option<f64>,
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

/// What the check of one detected product made: its findings (one per CVE), its check
/// (none for a product without a CPE name), and the CVEs that apply.
#[derive(Debug, Clone, Default)]
pub struct ProductJudged {
    pub findings: Vec<ScanFinding>,
    pub check: Option<Check>,
    pub cves: Vec<CveId>,
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
    let applies: Vec<&CveMatch> = matched.iter().filter(|m| !m.conditions.iter().any(|c| c.contradicted)).collect();
    for m in &applies {
        let unmet: Vec<&str> = m.conditions.iter().filter(|c| !c.holds).map(|c| c.text.as_str()).collect();
        let mut evidence = format!("{label} ({}) is covered by {}", m.cpe, m.why);
        if !m.conditions.is_empty() && unmet.is_empty() {
            let met: Vec<&str> = m.conditions.iter().map(|c| c.text.as_str()).collect();
            evidence.push_str(&format!("; together with {}, detected on the host", met.join(" and ")));
        } else if !unmet.is_empty() {
            evidence.push_str(&format!(
                "; conditional: it holds only with {}, which nothing on the host confirms or rules out",
                unmet.join(" and ")
            ));
        }
        match (m.cvss3, m.cvss2) {
            (Some(v3), _) => evidence.push_str(&format!("; CVSS v3 {v3:.1}")),
            (None, Some(v2)) => evidence.push_str(&format!("; CVSS v2 {v2:.1}")),
            _ => {}
        }
        if m.kev {
            evidence.push_str("; in the CISA Known Exploited Vulnerabilities catalog");
        }
        if let Some(e) = m.epss {
            evidence.push_str(&format!("; EPSS {e:.3}"));
        }
        evidence.push_str(&format!("; detected by {}", s.evidence));
        let mut severity = cve_severity(m.cvss3, m.cvss2, m.kev);
        if !unmet.is_empty() {
            severity = one_step_lower(severity);
        }
        out.findings.push(
            ScanFinding::new("vulnerabilities.cve", &s.host, evidence)
                .with_cve(m.id.as_str())
                .with_component(label.clone())
                .with_severity(severity),
        );
    }
    if !s.cpes.is_empty() {
        let check = check_name(s);
        out.check = Some(if applies.is_empty() {
            let observed = format!("no CVE matches {}", s.cpes.join(", "));
            Check::pass(RiskVector::Vulnerabilities, &check, &s.host, observed)
        } else {
            Check::finding(RiskVector::Vulnerabilities, &check, &s.host, applies.iter().map(|m| m.id.as_str()))
        });
    }
    out.cves = applies.into_iter().map(|m| m.id.clone()).collect();
    out
}

/// The hosts not reached: their software is not assessable.
pub fn rest(obs: &Observations, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(RiskVector::Vulnerabilities, "software", host, refusal.to_string()));
    }
}

/// The severity of a CVE finding (docs/FINDINGS.md): CVSS v3 base severity, v2 bands
/// when there is no v3, critical when CISA lists it as exploited.
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

/// A conditional finding's severity: one step below the CVE's own.
pub fn one_step_lower(s: Severity) -> Severity {
    match s {
        Severity::Critical => Severity::High,
        Severity::High => Severity::Medium,
        Severity::Medium => Severity::Low,
        Severity::Low | Severity::Info => Severity::Info,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
