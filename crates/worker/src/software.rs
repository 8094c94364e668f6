//! What the worker makes of the software a scan detected: the CVEs the vulnerability
//! database's matcher finds for each CPE name, judged by the vulnerabilities check
//! (`scanner::checks::vulnerabilities`), and the applications and SBOM components the
//! store keeps.

use std::collections::BTreeMap;

use model::dpkg::DpkgVersion;
use model::{Application, Cpe, CveId, Domain, OffsetDateTimeText, SbomComponent};
use scanner::ScanFinding;
use scanner::checks::vulnerabilities::{self, VendorSays};
use scanner::software::{Eol, Software};
use store::Store;
use time::OffsetDateTime;
use vulndb::advisory::{Scheme, Statement};

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
    /// CPE product (vendor, product) → the publishers' statements about it.
    advised: BTreeMap<(String, String), Vec<Statement>>,
}

/// What the publishers say of one detection's CVEs.
#[derive(Default)]
struct Words {
    by_cve: BTreeMap<CveId, Word>,
    /// The CVEs the distribution whose package the detection is has decided.
    by_distribution: std::collections::BTreeSet<CveId>,
    /// That distribution, when the detection is a distribution's package.
    packaged: Option<String>,
    /// The vendor that lists every CVE of the product, and the newest year of the CVEs it
    /// lists: a CVE up to that year it leaves out is not one it confirms.
    registry: Option<(String, u16)>,
    /// Every CVE an upstream statement about the product names, whatever it says.
    mentioned: std::collections::BTreeSet<CveId>,
}

/// What the vendor says of one CVE for a detected version.
enum Word {
    /// Affected (everywhere, or on the one platform named).
    Affected(VendorSays),
    /// Not affected: NVD's match is dropped.
    NotAffected,
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
        // The vendor's word over NVD's: a CVE it states the version not affected by is
        // dropped; one it states affected is charged on its word, matched by NVD or not.
        let words = self.words(store, s, &names).await?;
        matched.retain(|(id, ..)| !matches!(words.by_cve.get(id), Some(Word::NotAffected)));
        let primary = s.cpe().unwrap_or_default().to_owned();
        for (id, word) in &words.by_cve {
            if let Word::Affected(says) = word
                && !matched.iter().any(|(m, ..)| m == id)
            {
                matched.push((id.clone(), says.statement.clone(), true, primary.clone(), Vec::new()));
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
            // A CVE is charged once its record is in the database (one only a vendor
            // names may not be).
            .filter(|(id, ..)| self.records.contains_key(id))
            .map(|(id, why, bounded, cpe, conditions)| {
                let rec = self.records.get(&id);
                // On a distribution's package, only the distribution's word decides; the
                // upstream vendor's leaves a backport possible.
                let decided = words.packaged.is_none() || words.by_distribution.contains(&id);
                let vendor = match words.by_cve.get(&id) {
                    Some(Word::Affected(says)) if decided => Some(says.clone()),
                    _ => None,
                };
                let unlisted_by = match &words.registry {
                    Some((publisher, newest)) if !words.mentioned.contains(&id) && id.year() <= *newest => {
                        Some(publisher.clone())
                    }
                    _ => None,
                };
                vulnerabilities::CveMatch {
                    vendor,
                    unlisted_by,
                    backport_unknown: words.packaged.clone().filter(|_| !decided),
                    conditions: conditions
                        .iter()
                        .map(|n| vulnerabilities::Condition {
                            text: n.describe(),
                            contradicted: n.contradicted_by(known),
                            holds: n.holds_for_set(known),
                        })
                        .collect(),
                    cvss3: rec.and_then(|r| r.cvss3),
                    cvss4: rec.and_then(|r| r.cvss4),
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

impl Matcher {
    /// What the publishers' statements about `s`'s product (under each of its `names`)
    /// say of its version, per CVE: affected if any statement for every platform says
    /// so; else affected on a platform if a statement for one platform says so; else not
    /// affected if a statement says so; a CVE no statement decides is not in the map.
    async fn words(&mut self, store: &dyn Store, s: &Software, names: &[String]) -> Result<Words, store::StoreError> {
        let mut words = Words { packaged: s.packaged.as_ref().map(|p| p.distribution.clone()), ..Words::default() };
        let Some(version) = s.version.as_deref().and_then(scanner::software::release_version) else {
            return Ok(words);
        };
        let package = s.packaged.as_ref().and_then(|p| {
            let cpe = Cpe::parse(s.cpe()?).ok()?;
            let name = vulndb::aliases::package_of(cpe.vendor(), cpe.product(), &version)?;
            // The version the package has: the detected one if it carries the revision
            // (`5.7.33-0ubuntu0.18.04.1`), else the release and the banner's revision.
            let detected = s.version.as_deref().unwrap_or_default();
            let full = if detected.contains('-') { Some(detected.to_owned()) } else { p.version(detected) };
            Some((p.distribution.clone(), name, full))
        });
        let mut products: Vec<(String, String)> = Vec::new();
        for name in names {
            if let Ok(cpe) = Cpe::parse(name) {
                let product = (cpe.vendor().to_owned(), cpe.product().to_owned());
                if !products.contains(&product) {
                    products.push(product);
                }
            }
        }
        for product in products {
            if !self.advised.contains_key(&product) {
                let rows = store.advisories_for(&product.0, &product.1).await?;
                let statements = rows
                    .iter()
                    .filter_map(|r| match Statement::from_row(r) {
                        Ok(st) => Some(st),
                        Err(e) => {
                            tracing::warn!(cve = %r.cve_id, key = r.key, error = %e, "stored advisory does not read");
                            None
                        }
                    })
                    .collect();
                self.advised.insert(product.clone(), statements);
            }
            // Upstream statements speak of the release a banner shows; a distribution's
            // of its package versions (below).
            for st in self.advised.get(&product).into_iter().flatten() {
                if st.source.scheme() != Scheme::Upstream {
                    continue;
                }
                words.mentioned.insert(st.cve.clone());
                if st.source.lists_every_cve() {
                    let year = st.cve.year();
                    match &mut words.registry {
                        Some((_, newest)) => *newest = (*newest).max(year),
                        None => words.registry = Some((st.source.publisher(), year)),
                    }
                }
                let words = &mut words.by_cve;
                let word = match st.verdict(&version) {
                    Some(true) => {
                        Word::Affected(VendorSays { statement: st.explain(&version), platform: st.platform.clone() })
                    }
                    Some(false) if st.platform.is_none() => Word::NotAffected,
                    _ => continue,
                };
                let stronger = match (words.get(&st.cve), &word) {
                    (None, _) => true,
                    (Some(Word::NotAffected), Word::Affected(_)) => true,
                    (Some(Word::Affected(kept)), Word::Affected(new)) => {
                        kept.platform.is_some() && new.platform.is_none()
                    }
                    _ => false,
                };
                if stronger {
                    words.insert(st.cve.clone(), word);
                }
            }
            // The distribution's word on its package's version, from the statements of
            // the release the version is of; it overrides the upstream vendor's.
            let Some((distribution, package, Some(full))) = &package else { continue };
            for st in self.advised.get(&product).into_iter().flatten() {
                if st.package.as_deref() != Some(package.as_str()) || !of_distribution(st, distribution, full) {
                    continue;
                }
                let Some(ours) = as_release_of(st, full) else { continue };
                match st.verdict(&ours) {
                    Some(true) => {
                        let says = VendorSays { statement: st.explain(&ours), platform: None };
                        words.by_cve.insert(st.cve.clone(), Word::Affected(says));
                    }
                    Some(false) => {
                        // Fixed in one statement, affected in another of the same
                        // release: affected.
                        if !(words.by_distribution.contains(&st.cve)
                            && matches!(words.by_cve.get(&st.cve), Some(Word::Affected(_))))
                        {
                            words.by_cve.insert(st.cve.clone(), Word::NotAffected);
                        }
                    }
                    None => continue,
                }
                words.by_distribution.insert(st.cve.clone());
            }
        }
        Ok(words)
    }
}

/// Whether `st` is a statement of `distribution` (`Ubuntu`, `Debian`) about the channel
/// of its packages the version `full` is from: Ubuntu's FIPS builds are a channel of
/// their own (`…ubuntu0.fips.0.8`), its Pro (ESM) updates continue the release's.
fn of_distribution(st: &Statement, distribution: &str, full: &str) -> bool {
    match &st.source {
        vulndb::advisory::Source::Osv { ecosystem, .. } => {
            ecosystem.split(':').next() == Some(distribution)
                && ecosystem.contains("FIPS") == full.to_ascii_lowercase().contains("fips")
        }
        vulndb::advisory::Source::Debian { .. } => distribution == "Debian",
        _ => false,
    }
}

/// The package version `full` (`8.2p1-4ubuntu0.5`, no epoch: a banner shows none) as a
/// version of the release `st` speaks of, or `None` when `st` is about another release:
/// one distribution release ships one upstream version of a package, so a statement is
/// about ours when a version it names has our upstream version. The epoch is the one
/// that statement's versions carry (`1:8.2p1-4ubuntu0.8` → `1:8.2p1-4ubuntu0.5`).
fn as_release_of(st: &Statement, full: &str) -> Option<String> {
    let ours = DpkgVersion::parse(full).ok()?;
    let named = st.versions().filter_map(|v| DpkgVersion::parse(v).ok()).find(|v| v.upstream() == ours.upstream())?;
    Some(if named.epoch() > 0 && !full.contains(':') { format!("{}:{full}", named.epoch()) } else { full.to_owned() })
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
