//! What discovery and a full scan attribute to a company: domains, hosts, endpoints, applications and the SBOM.

use std::collections::BTreeMap;

use model::{Application, Domain, DomainAsset, NetworkEndpoint, Page, SbomComponent, Severity};

use crate::{Paged, Result};
use async_trait::async_trait;

/// SQL, the same on both backends: true when the host name in `host` (a column of a row of
/// the company in `company`) lies under none of the company's unproven claims, the names
/// [`crate::disputes::unproven`] leaves out of its rating (a key's claim, not within a
/// verified domain, of a company that holds one). The asset lists show what the rating
/// counts; a row without a host name (an address in a range) is kept.
pub(crate) fn rated_host(host: &str, company: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM domains u WHERE u.company_id = {company} AND NOT u.verified \
         AND ({host} = u.name OR {host} LIKE '%.' || u.name) \
         AND EXISTS (SELECT 1 FROM domains v WHERE v.company_id = {company} AND v.verified) \
         AND NOT EXISTS (SELECT 1 FROM domains v WHERE v.company_id = {company} AND v.verified \
             AND (u.name = v.name OR u.name LIKE '%.' || v.name)))"
    )
}

/// SQL: the SBOM component `c` was seen on a host the rating counts (or on none recorded).
pub(crate) fn rated_component() -> String {
    format!(
        "(NOT EXISTS (SELECT 1 FROM sbom_hosts sh WHERE sh.component_id = c.id) \
         OR EXISTS (SELECT 1 FROM sbom_hosts sh WHERE sh.component_id = c.id AND {}))",
        rated_host("sh.host", "c.company_id")
    )
}

/// Subdomain (host) with the SBOM components seen on it.
#[derive(Debug, Clone)]
pub struct HostComponents {
    pub host: String,
    pub components: Vec<SbomComponent>,
}

/// Per-company counts used by the subsidiary statistics.
#[derive(Debug, Clone, Default)]
pub struct CompanyCounts {
    pub applications: u64,
    pub network_endpoints: u64,
    pub ip_addresses: u64,
    pub sbom_components: u64,
    pub findings: BTreeMap<Severity, u64>,
}

/// What discovery and a full scan attribute to a company: domains, hosts, endpoints, applications and the SBOM.
#[async_trait]
pub trait Assets: Send + Sync + 'static {
    async fn domains(&self, company: i64) -> Result<Vec<DomainAsset>>;

    async fn counts(&self, company: i64) -> Result<CompanyCounts>;

    async fn applications(&self, company: i64, page: Page) -> Result<Paged<Application>>;

    async fn network_endpoints(&self, company: i64, page: Page) -> Result<Paged<NetworkEndpoint>>;

    /// SBOM components; only those with CVEs when `with_cves`.
    async fn sbom(&self, company: i64, page: Page, with_cves: bool) -> Result<Paged<SbomComponent>>;

    /// Hosts within `domain` that carry SBOM components, by host name.
    async fn sbom_by_domain(&self, company: i64, domain: &Domain, page: Page) -> Result<Paged<HostComponents>>;

    /// Records what discovery attributed to the company: host names (inserted, or
    /// refreshed with their latest addresses and attribution, first_seen kept) and the
    /// endpoints a scan observed (matched by ip, port and protocol; first_seen kept,
    /// everything else from the scan), in one transaction.
    async fn record_discovery(
        &self,
        company: i64,
        hosts: &[model::DiscoveredHost],
        endpoints: &[NetworkEndpoint],
        seen_at: time::OffsetDateTime,
    ) -> Result<()>;

    /// Records the software a full scan detected: applications (matched by name, version
    /// and host) and SBOM components (matched by name and version) keep their first_seen;
    /// the company's rows that the scan did not see again are removed. One transaction.
    async fn record_software(
        &self,
        company: i64,
        applications: &[Application],
        components: &[SbomComponent],
        seen_at: time::OffsetDateTime,
    ) -> Result<()>;

    /// The discovered host names of a company, by name.
    async fn hosts(&self, company: i64) -> Result<Vec<model::DiscoveredHost>>;

    /// True when `host` is one of the company's attributed names or carries an asset.
    async fn owns_host(&self, company: i64, host: &Domain) -> Result<bool>;

    /// Keeps what a company's full scan detected (the scanner's detections as JSON text,
    /// matched again when the feeds change) and the products (vendor, product) its CPE
    /// names name, replacing what was kept.
    async fn save_detected_software(
        &self,
        company: i64,
        software: &str,
        products: &[(String, String)],
        at: time::OffsetDateTime,
    ) -> Result<()>;

    /// What the company's last full scan detected, as kept.
    async fn detected_software(&self, company: i64) -> Result<Option<String>>;

    /// Companies a change of these CVEs may concern: their detected software names a
    /// product the CVEs list, or an open finding names one of them. By id.
    async fn companies_affected_by(&self, cves: &[model::CveId]) -> Result<Vec<(i64, model::SocialId)>>;

    /// Sets the CVEs of the company's SBOM components (matched by name and version),
    /// nothing else of them: what a feed update changes.
    async fn set_component_cves(&self, company: i64, components: &[SbomComponent]) -> Result<()>;
}
