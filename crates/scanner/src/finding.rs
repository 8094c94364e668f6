//! Findings and the catalog of finding codes.
//!
//! The catalog IS docs/FINDINGS.md: its tables are compiled in and read once, so the
//! severity, remediation and references a finding carries cannot drift from the
//! document the operators read.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use model::{RiskVector, Severity};
use serde::Serialize;

const FINDINGS_MD: &str = include_str!("../../../docs/FINDINGS.md");

/// One row of docs/FINDINGS.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeInfo {
    pub code: &'static str,
    pub risk_vector: RiskVector,
    pub condition: String,
    pub severity: Severity,
    /// The severity comes from the CVE's CVSS score (`severity` is then a fallback).
    pub severity_from_cvss: bool,
    pub remediation: String,
    pub references: Vec<String>,
}

impl CodeInfo {
    /// A short title: the condition's first clause — up to the first colon, semicolon
    /// or full stop that ends a clause (followed by a space or the end), so "X.224",
    /// "TLS 1.0" and "https://" stay whole.
    pub fn title(&self) -> String {
        let c = self.condition.replace('`', "");
        let bytes = c.as_bytes();
        let end = bytes
            .iter()
            .enumerate()
            .position(|(i, b)| matches!(b, b':' | b';' | b'.') && bytes.get(i + 1).is_none_or(|n| *n == b' '))
            .unwrap_or(c.len());
        c[..end].trim().to_owned()
    }
}

/// Every code of docs/FINDINGS.md.
pub static CATALOG: LazyLock<BTreeMap<&'static str, CodeInfo>> = LazyLock::new(|| parse_catalog(FINDINGS_MD));

fn parse_catalog(md: &'static str) -> BTreeMap<&'static str, CodeInfo> {
    let mut out = BTreeMap::new();
    for line in md.lines() {
        let Some(rest) = line.strip_prefix("| `") else { continue };
        let Some((code, rest)) = rest.split_once("` |") else { continue };
        let cells: Vec<&str> = rest.split(" | ").map(str::trim).collect();
        let [condition, severity, remediation, references] = cells[..] else { continue };
        let references = references.trim_end_matches('|').trim();
        let Some((vector, _)) = code.split_once('.') else { continue };
        let severity_from_cvss = severity == "CVSS";
        let severity = if severity_from_cvss { Ok(Severity::Medium) } else { Severity::parse(severity) };
        let (Ok(risk_vector), Ok(severity)) = (RiskVector::parse(vector), severity) else {
            continue;
        };
        out.insert(
            code,
            CodeInfo {
                code,
                risk_vector,
                condition: condition.to_owned(),
                severity,
                severity_from_cvss,
                remediation: remediation.to_owned(),
                references: references.split(';').map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect(),
            },
        );
    }
    out
}

/// What a probe found: a code of the catalog on an asset, with what was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScanFinding {
    /// Stable across scans: derived from the code, the asset and the CVE.
    pub id: String,
    pub code: String,
    pub risk_vector: RiskVector,
    pub asset: String,
    pub severity: Severity,
    pub title: String,
    /// What was observed, raw (the record, header, banner…).
    pub evidence: String,
    pub remediation: String,
    pub references: Vec<String>,
    /// The CVE a `vulnerabilities.cve` or `certificate_cve` finding names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cve: Option<String>,
    /// The software component (`name version`) an `sbom` or `vulnerabilities` finding is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
}

impl ScanFinding {
    /// A finding of `code` (which must be in the catalog) on `asset`.
    ///
    /// # Panics
    /// Never on input: an unknown code is a programming error caught by the tests that
    /// run every probe; in release builds it yields an `info` finding titled by its code.
    pub fn new(code: &str, asset: impl Into<String>, evidence: impl Into<String>) -> ScanFinding {
        let info = CATALOG.get(code);
        debug_assert!(info.is_some(), "finding code {code} is not in docs/FINDINGS.md");
        let vector = code.split('.').next().and_then(|v| RiskVector::parse(v).ok());
        let asset = asset.into();
        ScanFinding {
            id: finding_id(code, &asset, None),
            code: code.to_owned(),
            risk_vector: info.map(|i| i.risk_vector).or(vector).unwrap_or(RiskVector::ItStandardization),
            asset,
            severity: info.map_or(Severity::Info, |i| i.severity),
            title: info.map_or_else(|| code.to_owned(), CodeInfo::title),
            evidence: evidence.into(),
            remediation: info.map(|i| i.remediation.clone()).unwrap_or_default(),
            references: info.map(|i| i.references.clone()).unwrap_or_default(),
            cve: None,
            component: None,
        }
    }

    pub fn with_cve(mut self, cve: impl Into<String>) -> Self {
        let cve = cve.into();
        self.id = finding_id(&self.code, &self.asset, Some(&cve));
        self.cve = Some(cve);
        self
    }

    /// The component the finding is about; it tells apart findings of one code on one
    /// host (the CVE does, when there is one).
    pub fn with_component(mut self, component: impl Into<String>) -> Self {
        let component = component.into();
        if self.cve.is_none() {
            self.id = finding_id(&self.code, &self.asset, Some(&component));
        }
        self.component = Some(component);
        self
    }

    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

/// The first 16 hex digits of SHA-256(code, asset, cve): the same finding gets the same
/// id on every scan and every machine.
fn finding_id(code: &str, asset: &str, cve: Option<&str>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [code, asset, cve.unwrap_or("")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_holds_every_code_of_findings_md() {
        let rows = FINDINGS_MD.lines().filter(|l| l.starts_with("| `")).count();
        assert_eq!(CATALOG.len(), rows, "every table row of docs/FINDINGS.md parses");
        assert!(CATALOG.len() >= 100);
        let spf = &CATALOG["spf.softfail_all"];
        assert_eq!(spf.severity, Severity::Low);
        assert_eq!(spf.risk_vector, RiskVector::Spf);
        assert_eq!(spf.title(), "The record ends in ~all");
        assert_eq!(CATALOG["open_ports.rdp_exposed"].title(), "An RDP service answers an X.224 connection request");
        assert_eq!(CATALOG["certificate_conf.tls10_enabled"].title(), "The endpoint accepts TLS 1.0");
        for info in CATALOG.values() {
            let t = info.title();
            assert!(!t.ends_with(" X") && !t.ends_with(" TLS 1") && !t.ends_with("https"), "{}: {t}", info.code);
        }
        assert_eq!(spf.references, ["RFC 7208 §8.4"]);
        for info in CATALOG.values() {
            assert!(!info.title().is_empty() && !info.remediation.is_empty(), "{}", info.code);
            assert_eq!(info.code.split('.').next(), Some(info.risk_vector.as_str()), "{}", info.code);
        }
    }

    #[test]
    fn a_finding_takes_severity_and_remediation_from_the_catalog() {
        let f = ScanFinding::new("dmarc.policy_none", "acme.test", "v=DMARC1; p=none");
        assert_eq!(f.severity, Severity::Medium);
        assert_eq!(f.risk_vector, RiskVector::Dmarc);
        assert!(f.remediation.starts_with("Move to"));
        assert_eq!(f.id.len(), 16);
        assert_eq!(f.id, ScanFinding::new("dmarc.policy_none", "acme.test", "other evidence").id, "stable");
        assert_ne!(f.id, ScanFinding::new("dmarc.policy_none", "other.test", "").id);
    }
}
