//! sbom: the lifecycle of every detected component (endoflife.date): end of life, or
//! a supported release cycle with a newer release. A component without a version, or
//! one endoflife.date has no lifecycle for, is not assessable.

use model::RiskVector;
use time::Date;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::Observations;
use crate::software::{Eol, Software};

/// The hosts not reached, then the lifecycle of every component; without lifecycle
/// data, not assessable.
pub fn rest(obs: &Observations, eol: Option<&Eol>, today: Date, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(RiskVector::Sbom, "software", host, refusal.to_string()));
    }
    match eol {
        Some(eol) => {
            let found = sbom_findings(&obs.software, eol, today);
            out.checks.extend(sbom_checks(&obs.software, eol, today, &found));
            out.findings.extend(found);
        }
        None => {
            let why = "no lifecycle data (endoflife.date) is loaded";
            out.checks.push(Check::not_assessable(RiskVector::Sbom, "lifecycles", &obs.domain, why));
        }
    }
}

/// The sbom checks of the detected components: one per host and component, judged
/// from `found` (its [`sbom_findings`]); not assessable when the component has no
/// version or endoflife.date has no lifecycle for it.
pub fn sbom_checks(software: &[Software], eol: &Eol, today: Date, found: &[ScanFinding]) -> Vec<Check> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for s in software.iter().filter(|s| s.is_component()) {
        if !seen.insert((s.host.clone(), s.name.clone(), s.version.clone())) {
            continue;
        }
        let label = s.label();
        let check = format!("lifecycle of {label}");
        let c = match eol.lifecycle(s, today) {
            None if s.version.is_none() => {
                Check::not_assessable(RiskVector::Sbom, &check, &s.host, "no version detected")
            }
            None => Check::not_assessable(RiskVector::Sbom, &check, &s.host, "endoflife.date has no lifecycle for it"),
            Some(l) => {
                let mine: Vec<ScanFinding> = found
                    .iter()
                    .filter(|f| f.asset == s.host && f.component.as_deref() == Some(label.as_str()))
                    .cloned()
                    .collect();
                let observed = format!("the {} {} release cycle is supported and current", l.product, l.cycle);
                check::judged(RiskVector::Sbom, &check, &s.host, &mine, observed)
            }
        };
        out.push(c);
    }
    out
}

/// The `sbom` findings of the software: one per component that is end-of-life or
/// outdated, on its host.
pub fn sbom_findings(software: &[Software], eol: &Eol, today: Date) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for s in software.iter().filter(|s| s.is_component()) {
        let Some(l) = eol.lifecycle(s, today) else { continue };
        if !seen.insert((s.host.clone(), s.name.clone(), s.version.clone())) {
            continue;
        }
        let label = s.label();
        if l.end_of_life {
            let when = l.eol_date.as_deref().map_or_else(String::new, |d| format!(" on {d}"));
            let evidence = format!(
                "{label}: the {} release cycle {} reached its end of life{when} (endoflife.date); latest {} is {}",
                l.product,
                l.cycle,
                l.cycle,
                l.latest.as_deref().unwrap_or("unknown")
            );
            out.push(ScanFinding::new("sbom.end_of_life", &s.host, evidence).with_component(label));
        } else if l.outdated {
            let evidence = format!(
                "{label}: the {} {} release cycle is supported, its latest release is {} (endoflife.date)",
                l.product,
                l.cycle,
                l.latest.as_deref().unwrap_or_default()
            );
            out.push(ScanFinding::new("sbom.outdated", &s.host, evidence).with_component(label));
        }
    }
    out
}
