//! The rating after a scan: the company's open findings, judged by the `rating` crate
//! against what the scan assessed per component, become a rating in the history. A
//! rescan re-rates with the assets the last computed rating counted (a rescan looks at
//! one host, not the whole footprint); an imported rating is not re-rated by a rescan.

use std::collections::BTreeMap;

use model::{OffsetDateTimeText, RiskVector, ScoreSnapshot};
use scanner::scan::DomainScan;
use store::Store;
use time::OffsetDateTime;

/// What a full scan assessed, summed over the company's domains.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Assessed {
    /// Domains whose SPF, DKIM, DMARC check could be made (a failed lookup, or no key
    /// at any selector anyone named, leaves it not assessable), and those with at
    /// least one it_standardization check made.
    pub spf_domains: u32,
    pub dkim_domains: u32,
    pub dmarc_domains: u32,
    pub it_domains: u32,
    /// Every check the scans made.
    pub checks: Vec<model::Check>,
    /// Host names discovered (digitalization's footprint).
    pub hosts: u32,
    /// Hosts with an address (port-scanned).
    pub addressed_hosts: u32,
    /// TLS endpoints probed (certificates and their configuration).
    pub tls_endpoints: u32,
    /// Web origins assessed for headers.
    pub web_origins: u32,
    /// Software components detected, and those with a version (CVE-matchable).
    pub components: u32,
    pub versioned_components: u32,
    /// Per component, the targets the scan could not reach that carry open findings
    /// from an earlier probe: judged on those (a host hidden from the scanner is not
    /// clean, and not absent either).
    pub carried: BTreeMap<RiskVector, u32>,
}

fn n(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl Assessed {
    /// Adds one domain's scan.
    pub fn add_scan(&mut self, scan: &DomainScan) {
        use scanner::check::Outcome;
        let made = |v: RiskVector| {
            u32::from(scan.checks.iter().any(|c| c.risk_vector == v && c.outcome != Outcome::NotAssessable))
        };
        self.spf_domains += made(RiskVector::Spf);
        self.dkim_domains += made(RiskVector::Dkim);
        self.dmarc_domains += made(RiskVector::Dmarc);
        self.it_domains += made(RiskVector::ItStandardization);
        self.checks.extend(scan.checks.iter().cloned());
        self.hosts += n(scan.assets.len());
        // Hosts whose port scan could not be made are not counted as scanned.
        let unreached = |host: &str| {
            scan.checks.iter().any(|c| c.unreached && c.risk_vector == RiskVector::OpenPorts && c.asset == host)
        };
        self.addressed_hosts +=
            n(scan.assets.iter().filter(|a| !a.addresses.is_empty() && !unreached(&a.name)).count());
        self.tls_endpoints += n(scan.tls.len());
        self.web_origins += scan.web_origins;
    }

    /// Counts the company's software (after merging the domains' detections).
    pub fn set_software(&mut self, software: &[scanner::software::Software]) {
        self.components = n(software.len());
        self.versioned_components = n(software.iter().filter(|s| s.version.is_some()).count());
    }

    /// The assets each component judged.
    pub fn per_component(&self) -> BTreeMap<RiskVector, u32> {
        use RiskVector as V;
        RiskVector::ALL
            .iter()
            .map(|v| {
                let count = match v {
                    V::Spf => self.spf_domains,
                    V::Dmarc => self.dmarc_domains,
                    V::ItStandardization => self.it_domains,
                    V::Dkim => self.dkim_domains,
                    V::CertificateInfo | V::CertificateConf | V::CertificateCve => self.tls_endpoints,
                    V::OpenPorts => self.addressed_hosts,
                    V::WebHeaders => self.web_origins,
                    V::Digitalization => self.hosts,
                    V::Sbom => self.components,
                    V::Vulnerabilities => self.versioned_components,
                };
                (*v, count.saturating_add(self.carried.get(v).copied().unwrap_or(0)))
            })
            .collect()
    }

    /// Why each component with nothing assessed could not be: the first few checks that
    /// could not be made ("asset (check): why"), when there were some.
    pub fn not_assessable_reasons(&self) -> BTreeMap<RiskVector, String> {
        let mut reasons: BTreeMap<RiskVector, Vec<String>> = BTreeMap::new();
        for c in self.checks.iter().filter(|c| c.outcome == model::CheckOutcome::NotAssessable) {
            let why = reasons.entry(c.risk_vector).or_default();
            if why.len() < MAX_REASONS {
                why.push(format!("{} ({}): {}", c.asset, c.check, c.detail));
            }
        }
        reasons.into_iter().map(|(v, why)| (v, why.join("; "))).collect()
    }

    /// What a rating of these scans rests on.
    pub fn basis(&self, notes: &[String]) -> Basis {
        Basis {
            assets: self.per_component(),
            reasons: self.not_assessable_reasons(),
            checks: RiskVector::ALL
                .iter()
                .filter_map(|v| Some((*v, model::ComponentChecks::of(&self.checks, *v)?)))
                .collect(),
            notes: notes.to_vec(),
            reason: Some(model::RATED_BY_SCAN.to_owned()),
            quick: false,
        }
    }
}

/// The reasons kept per component.
const MAX_REASONS: usize = 3;

/// What a rating rests on besides the findings: the assets each component assessed,
/// why those that assessed nothing could not, the checks made, and what limited the
/// scans.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basis {
    pub assets: BTreeMap<RiskVector, u32>,
    pub reasons: BTreeMap<RiskVector, String>,
    pub checks: BTreeMap<RiskVector, model::ComponentChecks>,
    pub notes: Vec<String>,
    /// Why the rating is made (`model::RATED_BY_*`).
    pub reason: Option<String>,
    /// The scans behind it were quick ones (`scanner::probes::Context::quick`).
    pub quick: bool,
}

/// The basis of a stored rating (a rescan re-rates over it; the checks stay those of
/// the last full scan), with its reason.
pub fn basis_of(snapshot: &ScoreSnapshot) -> Basis {
    Basis {
        assets: assets_of(snapshot),
        reasons: snapshot.components.iter().filter_map(|(v, c)| Some((*v, c.not_assessable.clone()?))).collect(),
        checks: snapshot.components.iter().filter_map(|(v, c)| Some((*v, c.checks.clone()?))).collect(),
        notes: snapshot.notes.clone(),
        reason: snapshot.reason.clone(),
        quick: snapshot.quick,
    }
}

/// The stored rating of `rating`, with what it rests on: the reasons of the components
/// not assessable, the checks, the notes.
pub fn snapshot_of(rating: &rating::Rating, basis: &Basis, scanned_at: OffsetDateTimeText) -> Option<ScoreSnapshot> {
    let mut rating = rating.clone();
    explain(&mut rating, &basis.reasons);
    let mut snapshot = rating::snapshot(&rating, scanned_at)?;
    for (v, c) in snapshot.components.iter_mut() {
        c.checks = basis.checks.get(v).cloned();
    }
    snapshot.notes = basis.notes.clone();
    snapshot.quick = basis.quick;
    snapshot.reason = basis.reason.clone();
    Some(snapshot)
}

/// Puts `reasons` on the components of `rating` that were not assessable (in place of
/// the generic reason).
pub fn explain(rating: &mut rating::Rating, reasons: &BTreeMap<RiskVector, String>) {
    for c in &mut rating.components {
        if c.not_assessable.is_some()
            && let Some(why) = reasons.get(&c.risk_vector)
        {
            c.not_assessable = Some(why.clone());
        }
    }
}

/// The assets each component of a stored rating judged.
pub fn assets_of(snapshot: &ScoreSnapshot) -> BTreeMap<RiskVector, u32> {
    snapshot.components.iter().map(|(v, c)| (*v, c.assets_checked)).collect()
}

/// Rates the company from its open findings and records the rating at `now`; returns
/// the rating (none when nothing at all was assessable).
pub async fn rate(
    store: &dyn Store,
    company: i64,
    website_host: Option<&str>,
    basis: &Basis,
    now: OffsetDateTime,
) -> Result<Option<ScoreSnapshot>, store::StoreError> {
    // A company's unverified claims (names a key added that it has not proved) are
    // scanned but not rated, unless the company is known by claims alone.
    let (findings, kev) = store::judged::rated_findings(store, company).await?;
    let rating =
        rating::rate(&rating::Input { findings: &findings, assets_checked: &basis.assets, kev: &kev, website_host });
    let Some(snapshot) = snapshot_of(&rating, basis, OffsetDateTimeText(now)) else { return Ok(None) };
    // Timestamps are whole seconds: a rescan finishing within the second of the last
    // rating replaces it (the newer state of the findings wins).
    store.replace_rating(company, &snapshot).await?;
    Ok(Some(snapshot))
}
