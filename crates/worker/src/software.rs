//! What the worker makes of the software a scan detected: the vulnerabilities findings
//! (CPE → CVE with the vulnerability database's matcher), and the applications and SBOM
//! components the store keeps.

use std::collections::BTreeMap;

use model::{Application, Cpe, CveId, Domain, OffsetDateTimeText, RiskVector, SbomComponent, Severity};
use scanner::ScanFinding;
use scanner::software::{Eol, Software, release_version};
use store::Store;
use time::OffsetDateTime;

/// CVEs looked at per CPE name (get-cve-from-cpe-id's default).
const CVE_LIMIT: u32 = 500;

/// What the store keeps of one scan's software.
#[derive(Debug, Default)]
pub struct Inventory {
    pub applications: Vec<Application>,
    pub components: Vec<SbomComponent>,
    /// `vulnerabilities.cve`: one per (host, CVE).
    pub findings: Vec<ScanFinding>,
    /// The vulnerabilities checks: one per host and detected product with a CPE name
    /// (not assessable without a version).
    pub checks: Vec<model::Check>,
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

/// Matches the versioned components against the vulnerability database and builds the
/// inventory. A detection without a version yields no CVE.
pub async fn inventory(
    store: &dyn Store,
    software: &[Software],
    eol: Option<&Eol>,
    now: OffsetDateTime,
) -> Result<Inventory, store::StoreError> {
    let mut out = Inventory::default();
    // CPE name → the CVEs that apply, why, and on what conditions: one search per name.
    let mut searched: BTreeMap<String, Vec<vulndb::search::CveMatch>> = BTreeMap::new();
    // What each host is known to run (every detected name), for the conditions of AND
    // configurations (the platform).
    let mut host_cpes: BTreeMap<&str, Vec<Cpe>> = BTreeMap::new();
    for s in software {
        let known = host_cpes.entry(s.host.as_str()).or_default();
        known.extend(s.cpes.iter().filter_map(|n| Cpe::parse(n).ok()));
    }
    let mut cves_of: BTreeMap<(String, Option<String>), Vec<CveId>> = BTreeMap::new();
    let mut records: BTreeMap<CveId, model::CveRecord> = BTreeMap::new();
    for s in software {
        out.applications.push(Application {
            name: s.name.clone(),
            version: s.version.clone(),
            categories: s.categories.clone(),
            host: s.host.clone(),
            cpe: s.cpe().map(str::to_owned),
            evidence: s.evidence.clone(),
            confidence: Some(s.confidence),
            first_seen: OffsetDateTimeText(now),
            last_seen: OffsetDateTimeText(now),
        });
        let check = format!("cves of {}", s.label());
        if s.version.as_deref().and_then(release_version).is_none() {
            if !s.cpes.is_empty() {
                let why = "no version detected: a CVE cannot be matched without one";
                out.checks.push(model::Check::not_assessable(RiskVector::Vulnerabilities, &check, &s.host, why));
            }
            continue;
        }
        let mut matched: Vec<(CveId, String, String, Vec<vulndb::matching::Node>)> = Vec::new();
        for name in &s.cpes {
            if !searched.contains_key(name) {
                let found = match Cpe::parse(name) {
                    Ok(cpe) => match vulndb::search::cves_for_cpe(store, &cpe, CVE_LIMIT).await {
                        Ok(found) => found,
                        Err(vulndb::search::SearchError::Store(e)) => return Err(e),
                        Err(e) => {
                            tracing::debug!(cpe = name, error = %e, "not searchable");
                            Vec::new()
                        }
                    },
                    Err(e) => {
                        tracing::debug!(cpe = name, error = %e, "CPE name does not parse");
                        Vec::new()
                    }
                };
                searched.insert(name.clone(), found);
            }
            for m in searched.get(name).into_iter().flatten() {
                if !matched.iter().any(|(id, ..)| *id == m.id) {
                    matched.push((m.id.clone(), m.why.clone(), name.clone(), m.conditions.clone()));
                }
            }
        }
        let missing: Vec<CveId> =
            matched.iter().map(|(id, ..)| id.clone()).filter(|id| !records.contains_key(id)).collect();
        if !missing.is_empty() {
            for r in store.cves(&missing).await? {
                records.insert(r.id.clone(), r);
            }
        }
        let label = s.label();
        let known = host_cpes.get(s.host.as_str()).map_or(&[][..], Vec::as_slice);
        // A CVE that holds only with another node of its configuration (the platform):
        // a finding when the host is seen to meet it, none when the host is seen to run
        // something else there, and a conditional one (a severity step lower) when
        // nothing on the host says.
        matched.retain(|(.., conditions)| !conditions.iter().any(|n| n.contradicted_by(known)));
        for (id, why, name, conditions) in &matched {
            let rec = records.get(id);
            let (cvss3, cvss2) = (rec.and_then(|r| r.cvss3), rec.and_then(|r| r.cvss));
            let kev = rec.is_some_and(|r| r.kev.is_some());
            let epss = rec.and_then(|r| r.epss);
            let unmet: Vec<String> =
                conditions.iter().filter(|n| !n.holds_for_set(known)).map(|n| n.describe()).collect();
            let mut evidence = format!("{label} ({name}) is covered by {why}");
            if !conditions.is_empty() && unmet.is_empty() {
                let met: Vec<String> = conditions.iter().map(|n| n.describe()).collect();
                evidence.push_str(&format!("; together with {}, detected on the host", met.join(" and ")));
            } else if !unmet.is_empty() {
                evidence.push_str(&format!(
                    "; conditional: it holds only with {}, which nothing on the host confirms or rules out",
                    unmet.join(" and ")
                ));
            }
            match (cvss3, cvss2) {
                (Some(v3), _) => evidence.push_str(&format!("; CVSS v3 {v3:.1}")),
                (None, Some(v2)) => evidence.push_str(&format!("; CVSS v2 {v2:.1}")),
                _ => {}
            }
            if kev {
                evidence.push_str("; in the CISA Known Exploited Vulnerabilities catalog");
            }
            if let Some(e) = epss {
                evidence.push_str(&format!("; EPSS {e:.3}"));
            }
            evidence.push_str(&format!("; detected by {}", s.evidence));
            let mut severity = cve_severity(cvss3, cvss2, kev);
            if !unmet.is_empty() {
                severity = one_step_lower(severity);
            }
            out.findings.push(
                ScanFinding::new("vulnerabilities.cve", &s.host, evidence)
                    .with_cve(id.as_str())
                    .with_component(label.clone())
                    .with_severity(severity),
            );
        }
        if !s.cpes.is_empty() {
            out.checks.push(if matched.is_empty() {
                let observed = format!("no CVE matches {}", s.cpes.join(", "));
                model::Check::pass(RiskVector::Vulnerabilities, &check, &s.host, observed)
            } else {
                model::Check::finding(
                    RiskVector::Vulnerabilities,
                    &check,
                    &s.host,
                    matched.iter().map(|(id, ..)| id.as_str()),
                )
            });
        }
        let ids = cves_of.entry((s.name.clone(), s.version.clone())).or_default();
        for (id, ..) in matched {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    // Components: one per name and version, with every host it runs on.
    let today = now.date();
    let mut components: BTreeMap<(String, Option<String>), SbomComponent> = BTreeMap::new();
    for s in software.iter().filter(|s| s.is_component()) {
        let key = (s.name.clone(), s.version.clone());
        let life = eol.and_then(|e| e.lifecycle(s, today));
        let c = components.entry(key.clone()).or_insert_with(|| SbomComponent {
            name: s.name.clone(),
            version: s.version.clone(),
            purl: s.purl.clone(),
            cpe: s.cpe().map(str::to_owned),
            hosts: Vec::new(),
            evidence: s.evidence.clone(),
            end_of_life: life.as_ref().map(|l| l.end_of_life),
            latest_version: life.as_ref().and_then(|l| l.latest.clone()),
            cves: cves_of.get(&key).cloned().unwrap_or_default(),
            confidence: Some(s.confidence),
            first_seen: OffsetDateTimeText(now),
            last_seen: OffsetDateTimeText(now),
        });
        if let Ok(host) = Domain::parse(&s.host)
            && !c.hosts.contains(&host)
        {
            c.hosts.push(host);
        }
        c.confidence = c.confidence.max(Some(s.confidence));
    }
    out.components = components.into_values().collect();
    Ok(out)
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
