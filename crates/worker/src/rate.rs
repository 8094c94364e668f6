//! The rating after a scan: the company's open findings, judged by the `rating` crate
//! against what the scan assessed per component, become a rating in the history. A
//! rescan re-rates with the assets the last computed rating counted (a rescan looks at
//! one host, not the whole footprint); an imported rating is not re-rated by a rescan.

use std::collections::{BTreeMap, BTreeSet};

use model::{OffsetDateTimeText, RiskVector, ScoreSnapshot};
use scanner::probes::DomainScan;
use store::Store;
use time::OffsetDateTime;

/// What a full scan assessed, summed over the company's domains.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Assessed {
    /// Company domains checked (SPF, DMARC, DNSSEC, CAA…).
    pub domains: u32,
    /// Domains that receive mail (DKIM, MTA-STS, TLS-RPT apply).
    pub mail_domains: u32,
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
}

fn n(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl Assessed {
    /// Adds one domain's scan.
    pub fn add_scan(&mut self, scan: &DomainScan) {
        self.domains += 1;
        self.mail_domains += u32::from(scan.mail);
        self.hosts += n(scan.assets.len());
        self.addressed_hosts += n(scan.assets.iter().filter(|a| !a.addresses.is_empty()).count());
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
                    V::Spf | V::Dmarc | V::ItStandardization => self.domains,
                    V::Dkim => self.mail_domains,
                    V::CertificateInfo | V::CertificateConf | V::CertificateCve => self.tls_endpoints,
                    V::OpenPorts => self.addressed_hosts,
                    V::WebHeaders => self.web_origins,
                    V::Digitalization => self.hosts,
                    V::Sbom => self.components,
                    V::Vulnerabilities => self.versioned_components,
                };
                (*v, count)
            })
            .collect()
    }
}

/// The assets each component of a stored rating judged.
pub fn assets_of(snapshot: &ScoreSnapshot) -> BTreeMap<RiskVector, u32> {
    snapshot.components.iter().map(|(v, c)| (*v, c.assets_checked)).collect()
}

/// The CVEs of `findings` that CISA KEV lists (exploited in the wild).
pub async fn kev_among(store: &dyn Store, findings: &[model::Finding]) -> Result<BTreeSet<String>, store::StoreError> {
    let cves: Vec<model::CveId> =
        findings.iter().filter_map(|f| f.cve.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    if cves.is_empty() {
        return Ok(BTreeSet::new());
    }
    Ok(store.served_cves(&cves).await?.into_iter().filter(|c| c.kev.is_some()).map(|c| c.id.to_string()).collect())
}

/// The host of a company's website (`https://www.acme.test/x` → `www.acme.test`).
pub fn website_host(website: &str) -> Option<String> {
    website
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .split(['/', ':'])
        .next()
        .map(str::to_ascii_lowercase)
        .filter(|h| !h.is_empty())
}

/// Rates the company from its open findings and records the rating at `now`; returns
/// the rating (none when nothing at all was assessable).
pub async fn rate(
    store: &dyn Store,
    company: i64,
    website_host: Option<&str>,
    assets: &BTreeMap<RiskVector, u32>,
    notes: &[String],
    now: OffsetDateTime,
) -> Result<Option<ScoreSnapshot>, store::StoreError> {
    let findings = store.open_findings(company).await?;
    let kev = kev_among(store, &findings).await?;
    let rating = rating::rate(&rating::Input { findings: &findings, assets_checked: assets, kev: &kev, website_host });
    let Some(mut snapshot) = rating::snapshot(&rating, OffsetDateTimeText(now)) else { return Ok(None) };
    snapshot.notes = notes.to_vec();
    // Timestamps are whole seconds: a rescan finishing within the second of the last
    // rating replaces it (the newer state of the findings wins).
    store.replace_rating(company, &snapshot).await?;
    Ok(Some(snapshot))
}
