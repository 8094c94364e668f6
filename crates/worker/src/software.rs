//! What the worker makes of the software a scan detected: the CVEs the vulnerability
//! database's matcher finds for each CPE name, judged by the vulnerabilities check
//! (`scanner::checks::vulnerabilities`), and the applications and SBOM components the
//! store keeps.

use std::collections::BTreeMap;

use model::{Application, Cpe, CveId, Domain, OffsetDateTimeText, SbomComponent};
use scanner::ScanFinding;
use scanner::checks::vulnerabilities;
use scanner::software::{Eol, Software};
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

pub use scanner::checks::vulnerabilities::cve_severity;

/// Matches the versioned components against the vulnerability database and builds the
/// inventory; the vulnerabilities check (`scanner::checks::vulnerabilities`) judges what
/// the database matched. A detection without a version yields no CVE.
pub async fn inventory(
    store: &dyn Store,
    software: &[Software],
    eol: Option<&Eol>,
    now: OffsetDateTime,
) -> Result<Inventory, store::StoreError> {
    let mut out = Inventory::default();
    let mut db = Matcher::default();
    // What each host is known to run (every detected name), for the conditions of AND
    // configurations (the platform).
    let mut host_cpes: BTreeMap<&str, Vec<Cpe>> = BTreeMap::new();
    for s in software {
        let known = host_cpes.entry(s.host.as_str()).or_default();
        known.extend(s.cpes.iter().filter_map(|n| Cpe::parse(n).ok()));
    }
    let mut cves_of: BTreeMap<(String, Option<String>), Vec<model::AttributedCve>> = BTreeMap::new();
    for s in software {
        out.applications.push(application(s, now));
        if !vulnerabilities::matchable(s) {
            out.checks.extend(vulnerabilities::unversioned(s));
            continue;
        }
        let known = host_cpes.get(s.host.as_str()).map_or(&[][..], Vec::as_slice);
        let matched = db.matches(store, s, known).await?;
        let judged = vulnerabilities::judge(s, &matched);
        out.findings.extend(judged.findings);
        out.checks.extend(judged.check);
        let ids = cves_of.entry((s.name.clone(), s.version.clone())).or_default();
        for cve in judged.cves {
            // The same product on several hosts: one attribution per CVE, the strongest.
            match ids.iter_mut().find(|c| c.id == cve.id) {
                Some(kept) => kept.basis = kept.basis.min(cve.basis),
                None => ids.push(cve),
            }
        }
    }
    out.components = components(software, eol, &cves_of, now);
    Ok(out)
}

/// The application a detection is.
fn application(s: &Software, now: OffsetDateTime) -> Application {
    Application {
        name: s.name.clone(),
        version: s.version.clone(),
        categories: s.categories.clone(),
        host: s.host.clone(),
        cpe: s.cpe().map(str::to_owned),
        evidence: s.evidence.clone(),
        confidence: Some(s.confidence),
        first_seen: OffsetDateTimeText(now),
        last_seen: OffsetDateTimeText(now),
    }
}

/// The vulnerability database as one inventory asks it: one search per CPE name, one
/// read per CVE record.
#[derive(Default)]
struct Matcher {
    /// CPE name → the CVEs that apply, why, and on what conditions.
    searched: BTreeMap<String, Vec<vulndb::search::CveMatch>>,
    records: BTreeMap<CveId, model::CveRecord>,
}

impl Matcher {
    /// The CVEs the database matches to one of the CPE names of `s`, each once, with
    /// its record and its conditions as the host (which runs `known`) bears on them.
    async fn matches(
        &mut self,
        store: &dyn Store,
        s: &Software,
        known: &[Cpe],
    ) -> Result<Vec<vulnerabilities::CveMatch>, store::StoreError> {
        let mut matched: Vec<(CveId, String, bool, String, Vec<vulndb::matching::Node>)> = Vec::new();
        // Every name of the product: its detected names, then their aliases (NVD names
        // one product differently across the years, `vulndb::aliases`).
        let mut names: Vec<String> = s.cpes.clone();
        for n in &s.cpes {
            for alias in Cpe::parse(n).map(|c| vulndb::aliases::aliases_of(&c)).unwrap_or_default() {
                let alias = alias.to_string();
                if !names.contains(&alias) {
                    names.push(alias);
                }
            }
        }
        for name in &names {
            if !self.searched.contains_key(name) {
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
                self.searched.insert(name.clone(), found);
            }
            for m in self.searched.get(name).into_iter().flatten() {
                let found = (m.id.clone(), m.why.clone(), m.bounded, name.clone(), m.conditions.clone());
                // Matched through several of its names: the bounded entry, if one is.
                match matched.iter_mut().find(|(id, ..)| *id == m.id) {
                    Some(kept) if !kept.2 && m.bounded => *kept = found,
                    Some(_) => {}
                    None => matched.push(found),
                }
            }
        }
        let missing: Vec<CveId> =
            matched.iter().map(|(id, ..)| id.clone()).filter(|id| !self.records.contains_key(id)).collect();
        if !missing.is_empty() {
            for r in store.cves(&missing).await? {
                self.records.insert(r.id.clone(), r);
            }
        }
        Ok(matched
            .into_iter()
            .map(|(id, why, bounded, cpe, conditions)| {
                let rec = self.records.get(&id);
                vulnerabilities::CveMatch {
                    conditions: conditions
                        .iter()
                        .map(|n| vulnerabilities::Condition {
                            text: n.describe(),
                            contradicted: n.contradicted_by(known),
                            holds: n.holds_for_set(known),
                        })
                        .collect(),
                    cvss3: rec.and_then(|r| r.cvss3),
                    cvss2: rec.and_then(|r| r.cvss),
                    kev: rec.is_some_and(|r| r.kev.is_some()),
                    epss: rec.and_then(|r| r.epss),
                    id,
                    why,
                    bounded,
                    cpe,
                }
            })
            .collect())
    }
}

/// The SBOM components: one per name and version, with every host it runs on, its
/// lifecycle and the CVEs that apply (`cves_of`).
fn components(
    software: &[Software],
    eol: Option<&Eol>,
    cves_of: &BTreeMap<(String, Option<String>), Vec<model::AttributedCve>>,
    now: OffsetDateTime,
) -> Vec<SbomComponent> {
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
    components.into_values().collect()
}
