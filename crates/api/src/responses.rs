//! Response bodies: the exact JSON of the spec, mapped from domain types here and
//! nowhere else. Mock mode serialises these same types.

use std::collections::BTreeMap;

use model::timefmt::{cve_search_datetime, rfc3339};
use model::{
    Application, Company, CpeEntry, CveRecord, Finding, Incident, NetworkEndpoint, Pagination, RiskVector,
    SbomComponent, ScoreSnapshot,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub mod alerts;
pub mod changes;
pub mod guidelines;
pub mod portfolio;

/// The pagination object of every paged answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PaginationOut {
    pub current_page: u64,
    pub page_size: u32,
    pub total_pages: u64,
    pub total_items: u64,
}

impl From<Pagination> for PaginationOut {
    fn from(p: Pagination) -> Self {
        Self {
            current_page: p.current_page,
            page_size: p.page_size,
            total_pages: p.total_pages,
            total_items: p.total_items,
        }
    }
}

/// `{"message": "..."}`: the result of a write.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MessageOut {
    pub message: String,
}

// --- General ---------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DomainBySocialId {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub domain: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct NameAndSocialId {
    pub company_name: String,
    pub social_id: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SocialIdsByName {
    pub data: Vec<NameAndSocialId>,
    pub pagination: PaginationOut,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SocialIdByDomain {
    pub social_id: String,
}

// --- Company records ----------------------------------------------------------------------

/// The company information record. `score` and `naics_code` are null only
/// for a company not rated yet or whose NAICS code is unknown.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CompanyInfo {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub industry: String,
    pub description: String,
    pub company_id: String,
    pub funding_id: String,
    pub employees_number: String,
    /// Null when no source gave the count.
    pub followers_number: Option<i64>,
    pub score: Option<f64>,
    pub naics_code: Option<i64>,
    pub searched_by: i64,
    /// Names of subsidiaries (company info responses only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subsidiaries_list: Option<Vec<String>>,
    pub ip_addresses: u64,
}

impl CompanyInfo {
    pub fn new(c: &Company, searched_by: i64, ip_addresses: u64, subsidiaries: Option<Vec<String>>) -> Self {
        Self {
            social_id: c.social_id.to_string(),
            company_name: c.company_name.clone(),
            website: c.website.clone(),
            industry: c.industry.clone(),
            description: c.description.clone(),
            company_id: c.company_id.clone(),
            funding_id: c.funding_id.clone(),
            employees_number: c.employees_number.clone(),
            followers_number: c.followers_number,
            score: c.score.map(|s| s.as_f64()),
            naics_code: c.naics_code,
            searched_by,
            subsidiaries_list: subsidiaries,
            ip_addresses,
        }
    }
}

/// A company information record as the list-subsidiaries response spells it
/// (`serched_by`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ListedSubsidiary {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub industry: String,
    pub description: String,
    pub company_id: String,
    pub funding_id: String,
    pub employees_number: String,
    /// Null when no source gave the count.
    pub followers_number: Option<i64>,
    pub score: Option<f64>,
    pub naics_code: Option<i64>,
    pub serched_by: i64,
    pub ip_addresses: u64,
}

impl From<CompanyInfo> for ListedSubsidiary {
    fn from(c: CompanyInfo) -> Self {
        Self {
            social_id: c.social_id,
            company_name: c.company_name,
            website: c.website,
            industry: c.industry,
            description: c.description,
            company_id: c.company_id,
            funding_id: c.funding_id,
            employees_number: c.employees_number,
            followers_number: c.followers_number,
            score: c.score,
            naics_code: c.naics_code,
            serched_by: c.searched_by,
            ip_addresses: c.ip_addresses,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ListSubsidiaries {
    pub social_id: String,
    pub subsidiaries_list: Vec<ListedSubsidiary>,
    pub pagination: PaginationOut,
}

// --- Findings and scores ----------------------------------------------------------------

/// A finding: what was observed on which asset, how bad it is and how to fix it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FindingOut {
    pub id: i64,
    pub risk_vector: String,
    pub asset: String,
    pub severity: String,
    pub code: String,
    pub title: String,
    pub evidence: String,
    pub remediation: String,
    pub references: Vec<String>,
    /// The CVE the finding is about (certificate_cve, vulnerabilities); its record is
    /// served by `/vulnerability-describe-cve-id`.
    pub cve: Option<String>,
    /// The software component (`name version`) an sbom or vulnerabilities finding is about.
    pub component: Option<String>,
    /// Extension: of a vulnerabilities finding whose CVE record is known, the CVSS metric
    /// its severity is computed from, with its version and vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity_cvss: Option<CvssOut>,
    pub first_seen: String,
    pub last_seen: String,
    /// Extension: present (true) while an open dispute names the finding
    /// (`/monitor-getdisputes`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disputed: bool,
    /// Extension: present (true) when an operator accepted a compensating control: the
    /// finding is shown and weighs nothing in the rating.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compensating_control: bool,
}

impl From<&Finding> for FindingOut {
    fn from(f: &Finding) -> Self {
        Self {
            id: f.id,
            risk_vector: f.risk_vector.as_str().to_owned(),
            asset: f.asset.clone(),
            severity: f.severity.as_str().to_owned(),
            code: f.code.clone(),
            title: f.title.clone(),
            evidence: f.evidence.clone(),
            remediation: f.remediation.clone(),
            references: f.references.clone(),
            cve: f.cve.as_ref().map(|c| c.as_str().to_owned()),
            component: f.component.clone(),
            severity_cvss: None,
            first_seen: rfc3339(f.first_seen.0),
            last_seen: rfc3339(f.last_seen.0),
            disputed: f.disputed,
            compensating_control: f.no_weight,
        }
    }
}

/// One of the twelve components of a score.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ComponentOut {
    /// 0–100; null when the component was not assessable (see `not_assessable`).
    pub score: Option<f64>,
    /// A–F; null when the component was not assessable.
    pub grade: Option<String>,
    /// Share of the global score, in percent (0 when not assessable: the global score is
    /// re-weighted over the assessable components).
    pub weight: f64,
    pub assets_checked: u32,
    pub findings_count: u32,
    /// Why the component could not be assessed (nothing of its kind was found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_assessable: Option<String>,
    /// The version of docs/METHODOLOGY.md that produced the rating, or `imported` for a
    /// rating that came with the company's import.
    pub methodology: String,
    /// The worst findings of this component.
    pub findings: Vec<FindingOut>,
    /// Extension: the checks the scan made for this component — how many passed, found
    /// something or could not be made, and a list of them (at most 50, those not
    /// assessable first). Absent for an imported rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ChecksOut>,
    /// Extension: present (true) while an open dispute names one of the component's
    /// findings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disputed: bool,
}

/// The checks of one component (extension).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ChecksOut {
    pub pass: u32,
    pub finding: u32,
    pub not_assessable: u32,
    pub list: Vec<CheckOut>,
}

/// One check: what was checked on which asset, and how it came out.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CheckOut {
    pub check: String,
    pub asset: String,
    /// `pass`, `finding` or `not_assessable`.
    pub outcome: String,
    /// A pass: what was observed; a finding: the codes raised; not assessable: why.
    pub detail: String,
}

impl From<&model::ComponentChecks> for ChecksOut {
    fn from(c: &model::ComponentChecks) -> Self {
        let outcome = |o: model::CheckOutcome| match o {
            model::CheckOutcome::Pass => "pass",
            model::CheckOutcome::Finding => "finding",
            model::CheckOutcome::NotAssessable => "not_assessable",
        };
        ChecksOut {
            pass: c.pass,
            finding: c.finding,
            not_assessable: c.not_assessable,
            list: c
                .list
                .iter()
                .map(|k| CheckOut {
                    check: k.check.clone(),
                    asset: k.asset.clone(),
                    outcome: outcome(k.outcome).to_owned(),
                    detail: k.detail.clone(),
                })
                .collect(),
        }
    }
}

/// The score object: exactly the twelve components.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScoreComponents {
    pub spf: ComponentOut,
    pub dkim: ComponentOut,
    pub certificate_conf: ComponentOut,
    pub certificate_info: ComponentOut,
    pub open_ports: ComponentOut,
    pub web_headers: ComponentOut,
    pub dmarc: ComponentOut,
    pub it_standardization: ComponentOut,
    pub digitalization: ComponentOut,
    pub certificate_cve: ComponentOut,
    pub vulnerabilities: ComponentOut,
    pub sbom: ComponentOut,
}

impl ScoreComponents {
    /// The findings of the twelve components.
    pub fn findings_mut(&mut self) -> impl Iterator<Item = &mut FindingOut> {
        [
            &mut self.spf,
            &mut self.dkim,
            &mut self.certificate_conf,
            &mut self.certificate_info,
            &mut self.open_ports,
            &mut self.web_headers,
            &mut self.dmarc,
            &mut self.it_standardization,
            &mut self.digitalization,
            &mut self.certificate_cve,
            &mut self.vulnerabilities,
            &mut self.sbom,
        ]
        .into_iter()
        .flat_map(|c| c.findings.iter_mut())
    }

    /// Builds the twelve members from a rating and the top findings of each vector.
    /// A component the rating could not assess (or lacks) has a null score and grade,
    /// weight 0 and the reason.
    pub fn new(snap: &ScoreSnapshot, top: &[Finding], disputed: &[RiskVector]) -> Self {
        let mut by_vector: BTreeMap<RiskVector, Vec<FindingOut>> = BTreeMap::new();
        for f in top {
            by_vector.entry(f.risk_vector).or_default().push(f.into());
        }
        let methodology = snap.methodology.clone().unwrap_or_else(|| "imported".to_owned());
        let mut one = |rv: RiskVector| {
            let findings = by_vector.remove(&rv).unwrap_or_default();
            match snap.components.get(&rv) {
                Some(c) if c.not_assessable.is_none() => ComponentOut {
                    score: Some(c.score.as_f64()),
                    grade: Some(c.grade.as_str().to_owned()),
                    weight: c.weight.as_f64(),
                    assets_checked: c.assets_checked,
                    findings_count: c.findings_count,
                    not_assessable: None,
                    methodology: methodology.clone(),
                    findings,
                    checks: c.checks.as_ref().map(ChecksOut::from),
                    disputed: disputed.contains(&rv),
                },
                Some(c) => ComponentOut {
                    score: None,
                    grade: None,
                    weight: 0.0,
                    assets_checked: c.assets_checked,
                    findings_count: c.findings_count,
                    not_assessable: c.not_assessable.clone(),
                    methodology: methodology.clone(),
                    findings,
                    checks: c.checks.as_ref().map(ChecksOut::from),
                    disputed: disputed.contains(&rv),
                },
                None => ComponentOut {
                    score: None,
                    grade: None,
                    weight: 0.0,
                    assets_checked: 0,
                    findings_count: 0,
                    not_assessable: Some("the rating has no such component".to_owned()),
                    methodology: methodology.clone(),
                    findings,
                    checks: None,
                    disputed: disputed.contains(&rv),
                },
            }
        };
        Self {
            spf: one(RiskVector::Spf),
            dkim: one(RiskVector::Dkim),
            certificate_conf: one(RiskVector::CertificateConf),
            certificate_info: one(RiskVector::CertificateInfo),
            open_ports: one(RiskVector::OpenPorts),
            web_headers: one(RiskVector::WebHeaders),
            dmarc: one(RiskVector::Dmarc),
            it_standardization: one(RiskVector::ItStandardization),
            digitalization: one(RiskVector::Digitalization),
            certificate_cve: one(RiskVector::CertificateCve),
            vulnerabilities: one(RiskVector::Vulnerabilities),
            sbom: one(RiskVector::Sbom),
        }
    }
}

/// The company scores response. `global_score`, `grade` and
/// `scanned_at` are Rampart's additions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CompanyScores {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub domain: String,
    pub industry: String,
    pub description: String,
    pub subsidiaries_number: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanned_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreComponents>,
    /// Instead of `score` when the company has no rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Extension: what limited the scan of the latest rating (a cap or the deadline
    /// reached, names refused, domains that do not exist); absent when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scan_notes: Vec<String>,
    /// Extension: where the global score stands among rated companies of the same NAICS
    /// sector and size band, and among all (absent without a rating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_benchmarks: Option<PeerBenchmarks>,
    /// Extension: whether the rating is stale — its last full scan failed, or it is
    /// older than twice its company's rescan cadence (absent without a rating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Extension: why the rating is stale (absent when it is not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reason: Option<String>,
    /// Extension: when the company was last scanned successfully (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_successful_scan: Option<String>,
    /// Extension: how deep the scan behind the rating looked: `quick` (a new company's
    /// first rating in seconds: DNS and mail, the web root, TLS on 443, the common
    /// ports; its full scan follows) or `full` (absent without a rating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<String>,
}

/// The company's percentile among its peers (extension; docs/METHODOLOGY.md, "Peer
/// benchmarks").
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PeerBenchmarks {
    /// Rated companies of the same NAICS sector and employee band.
    pub sector_and_size: BenchmarkOut,
    /// All rated companies.
    pub overall: BenchmarkOut,
}

/// The company's standing in one peer group.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenchmarkOut {
    /// The group, e.g. `NAICS 52 Finance and Insurance, 250-999 employees`.
    pub group: String,
    /// Rated companies in the group besides this one.
    pub peers: u64,
    /// Percentile rank of the global score among the peers, 0-100: the share scoring
    /// lower (ties count half). Null under 10 peers or when the group is unknown.
    pub percentile: Option<f64>,
    /// Why there is no percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<rating::peers::Benchmark> for BenchmarkOut {
    fn from(b: rating::peers::Benchmark) -> Self {
        BenchmarkOut { group: b.group, peers: b.peers as u64, percentile: b.percentile, note: b.note }
    }
}

// --- Disputes (extension) -------------------------------------------------------------------

/// A dispute of a finding, or (reason `not_ours`, no finding) the asked removal of an asset.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DisputeOut {
    pub id: i64,
    pub social_id: String,
    /// Null for the removal of an asset.
    pub finding_id: Option<i64>,
    pub asset: String,
    pub risk_vector: Option<String>,
    pub code: Option<String>,
    pub title: Option<String>,
    /// `fixed`, `compensating_control`, `not_ours` or `incorrect`.
    pub reason: String,
    pub explanation: String,
    /// `open`, `accepted` or `rejected`.
    pub state: String,
    pub opened_at: String,
    /// The key that opened it (`key N`).
    pub opened_by: String,
    pub decided_at: Option<String>,
    /// The operator, or `rescan`.
    pub decided_by: Option<String>,
    /// Why it was decided so (a rejected `fixed`: what the rescan still saw).
    pub note: Option<String>,
}

impl From<&model::Dispute> for DisputeOut {
    fn from(d: &model::Dispute) -> Self {
        DisputeOut {
            id: d.id,
            social_id: d.company.to_string(),
            finding_id: d.finding_id,
            asset: d.asset.clone(),
            risk_vector: d.risk_vector.map(|v| v.as_str().to_owned()),
            code: d.code.clone(),
            title: d.title.clone(),
            reason: d.reason.as_str().to_owned(),
            explanation: d.explanation.clone(),
            state: d.state.as_str().to_owned(),
            opened_at: rfc3339(d.opened_at.0),
            opened_by: d.opened_by.clone(),
            decided_at: d.decided_at.map(|t| rfc3339(t.0)),
            decided_by: d.decided_by.clone(),
            note: d.note.clone(),
        }
    }
}

/// The answer to a dispute or a removal: what happens next, and the dispute.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DisputeAnswer {
    pub message: String,
    pub dispute: DisputeOut,
}

/// The disputes of a monitor key's company and subsidiaries (extension).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DisputesOut {
    pub social_id: String,
    pub disputes: Vec<DisputeOut>,
    pub pagination: PaginationOut,
}

// --- Assets -------------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApplicationOut {
    pub name: String,
    pub version: Option<String>,
    pub categories: Vec<String>,
    pub host: String,
    pub cpe: Option<String>,
    pub evidence: String,
    /// How sure the detection is, 0–100 (absent for imported data).
    pub confidence: Option<u8>,
    pub first_seen: String,
    pub last_seen: String,
}

impl From<Application> for ApplicationOut {
    fn from(a: Application) -> Self {
        Self {
            name: a.name,
            version: a.version,
            categories: a.categories,
            host: a.host,
            cpe: a.cpe,
            evidence: a.evidence,
            confidence: a.confidence,
            first_seen: rfc3339(a.first_seen.0),
            last_seen: rfc3339(a.last_seen.0),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApplicationsAssets {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub industry: String,
    pub description: String,
    pub number_of_applications: u64,
    pub applications: Vec<ApplicationOut>,
    pub pagination: PaginationOut,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EndpointOut {
    pub ip: String,
    pub port: u16,
    pub protocol: String,
    pub host: Option<String>,
    pub service: Option<String>,
    pub product: Option<String>,
    pub version: Option<String>,
    pub banner: String,
    /// Why the endpoint is the company's.
    pub attribution: AttributionOut,
    pub first_seen: String,
    pub last_seen: String,
}

/// How an asset was attributed to the company: the discovery source (`domain`, `mx`,
/// `ns`, `srv`, `cname`, `wordlist`, `certificate`, `link`, `ct`, or `import` for data
/// imported with the company) and what was observed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AttributionOut {
    pub source: String,
    pub evidence: String,
}

impl From<NetworkEndpoint> for EndpointOut {
    fn from(e: NetworkEndpoint) -> Self {
        Self {
            ip: e.ip.to_string(),
            port: e.port,
            protocol: e.protocol,
            host: e.host,
            service: e.service,
            product: e.product,
            version: e.version,
            banner: e.banner,
            attribution: match e.attribution {
                Some(a) => AttributionOut { source: a.source, evidence: a.evidence },
                None => AttributionOut { source: "import".into(), evidence: "imported with the company's data".into() },
            },
            first_seen: rfc3339(e.first_seen.0),
            last_seen: rfc3339(e.last_seen.0),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct InfrastructureAssets {
    pub social_id: String,
    pub company_name: String,
    pub website: String,
    pub industry: String,
    pub description: String,
    pub number_of_infrastructure_endpoint: u64,
    pub network_endpoints: Vec<EndpointOut>,
    pub pagination: PaginationOut,
}

/// A CVE attributed to an SBOM component, with its basis and the figures that rank it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ComponentCve {
    pub id: String,
    /// Why it is attributed: `vendor` (the vendor's advisory names the version),
    /// `nvd-range` (an NVD version or bounded range), `distribution-backport-unknown` (as
    /// `nvd-range`, for a distribution's package whose distribution's security data does
    /// not decide it: a fix may be backported; scored with a lower confidence),
    /// `platform-conditional` (an AND with a platform the scan did not observe) or
    /// `unbounded` (an NVD entry without version bounds, or for an edition or platform not
    /// observed) or `vendor-unlisted` (the vendor lists every CVE of its product, and not
    /// this one). Only the first three are scored.
    #[schema(example = "nvd-range")]
    pub basis: String,
    /// Whether it opens a finding and counts in the rating.
    pub scored: bool,
    pub summary: Option<String>,
    pub cvss3: Option<f64>,
    pub cvss: Option<f64>,
    pub kev: bool,
    pub epss: Option<f64>,
    /// Extension: the CVSS metric the CVE's severity is computed from, with its version
    /// and vector; null when its record is unknown or has no CVSS.
    pub severity_cvss: Option<CvssOut>,
}

/// A CVSS base metric: the one a CVE finding's severity is computed from
/// (docs/FINDINGS.md): v3 (3.1 or 3.0) when the record has it, else v4.0, else v2; a
/// CISA KEV listing makes the finding critical whatever the metric says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CvssOut {
    /// `3.1`, `3.0`, `4.0` or `2.0`; `3` for a v3 score stored before its vector was kept.
    #[schema(example = "3.1")]
    pub version: String,
    #[schema(example = 9.8)]
    pub score: f64,
    /// The base vector: a v3 vector names its version, a v2 vector has no prefix; null
    /// when the record has none.
    #[schema(example = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H")]
    pub vector: Option<String>,
}

impl CvssOut {
    /// The metric of `r` that sets a CVE finding's severity ([`CveRecord::severity_metric`]).
    pub fn severity_of(r: &CveRecord) -> Option<Self> {
        r.severity_metric().map(|m| Self { version: m.version, score: m.score, vector: m.vector })
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SbomOut {
    pub name: String,
    pub version: Option<String>,
    pub purl: Option<String>,
    pub cpe: Option<String>,
    pub hosts: Vec<String>,
    pub evidence: String,
    pub end_of_life: Option<bool>,
    pub latest_version: Option<String>,
    /// How sure the detection is, 0–100 (absent for imported data).
    pub confidence: Option<u8>,
    pub first_seen: String,
    pub last_seen: String,
    /// Present in SBOM-with-CVE responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cves: Option<Vec<ComponentCve>>,
}

impl SbomOut {
    pub fn new(c: SbomComponent, cves: Option<Vec<ComponentCve>>) -> Self {
        Self {
            name: c.name,
            version: c.version,
            purl: c.purl,
            cpe: c.cpe,
            hosts: c.hosts.iter().map(ToString::to_string).collect(),
            evidence: c.evidence,
            end_of_life: c.end_of_life,
            latest_version: c.latest_version,
            confidence: c.confidence,
            first_seen: rfc3339(c.first_seen.0),
            last_seen: rfc3339(c.last_seen.0),
            cves,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SbomPage {
    pub data: Vec<SbomOut>,
    pub pagination: PaginationOut,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SbomHost {
    pub subdomain: String,
    pub components: Vec<SbomOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SbomDomainData {
    pub domain_name: String,
    pub subdomain: Vec<SbomHost>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SbomByDomain {
    pub data: SbomDomainData,
    pub pagination: PaginationOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

// --- Subsidiaries and last scanned ---------------------------------------------------------

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingsBySeverity {
    pub critical: u64,
    pub high: u64,
    pub medium: u64,
    pub low: u64,
    pub info: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubsidiaryStats {
    pub social_id: String,
    pub company_name: String,
    pub domain: Option<String>,
    pub score: Option<f64>,
    pub grade: Option<String>,
    pub last_scanned: Option<String>,
    pub number_of_applications: u64,
    pub number_of_infrastructure_endpoint: u64,
    pub ip_addresses: u64,
    pub sbom_components: u64,
    pub findings: FindingsBySeverity,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyStats {
    pub parent_social_id: String,
    pub subsidiaries_stats: Vec<SubsidiaryStats>,
    pub pagination: PaginationOut,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SubsidiaryScore {
    pub social_id: String,
    pub company_name: String,
    pub domain: Option<String>,
    pub score: Option<f64>,
    pub grade: Option<String>,
    pub scanned_at: Option<String>,
    /// Component scores by name (null: not assessable); empty when not rated.
    pub components: BTreeMap<String, Option<f64>>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CompanySubScores {
    pub social_id: String,
    pub subsidiaries_scores: Vec<SubsidiaryScore>,
    pub pagination: PaginationOut,
}

/// One rating of a company's history (an extension of the spec).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RatingOut {
    pub scanned_at: String,
    pub score: f64,
    pub grade: String,
    /// The methodology version that produced it, or `imported`.
    pub methodology: String,
    /// Component scores by name; null for a component that was not assessable.
    pub components: BTreeMap<String, Option<f64>>,
    /// What limited the scan of this rating; absent when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Why it was made: `scan`, `rescan` (one host and risk vector scanned again) or
    /// `feed update` (the vulnerability feeds changed what the company's detected
    /// software matches; nothing was scanned); absent for imported ratings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&ScoreSnapshot> for RatingOut {
    fn from(s: &ScoreSnapshot) -> Self {
        RatingOut {
            scanned_at: rfc3339(s.scanned_at.0),
            score: s.score.as_f64(),
            grade: s.grade.as_str().to_owned(),
            methodology: s.methodology.clone().unwrap_or_else(|| "imported".to_owned()),
            components: s
                .components
                .iter()
                .map(|(v, c)| (v.as_str().to_owned(), c.not_assessable.is_none().then(|| c.score.as_f64())))
                .collect(),
            notes: s.notes.clone(),
            reason: s.reason.clone(),
        }
    }
}

/// A company's ratings, newest first (extension: /underwriter-getcompanyscore-history).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScoreHistory {
    pub social_id: String,
    pub company_name: String,
    pub data: Vec<RatingOut>,
    pub pagination: PaginationOut,
}

/// Where an event's evidence is shown: an operation of this API with its query.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventLinkOut {
    /// `scores`, `score_history`, `findings` or `assets`.
    pub rel: String,
    pub href: String,
}

/// One event of a company (an extension of the spec): what changed, when, and where the
/// evidence is. The same object is the body of a webhook delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventOut {
    pub id: i64,
    /// `rating_changed`, `finding_opened`, `finding_closed`, `asset_attributed`,
    /// `scan_failed` or `scan_truncated`.
    #[serde(rename = "type")]
    pub kind: String,
    pub social_id: String,
    pub company_name: String,
    /// RFC 3339, UTC.
    pub occurred_at: String,
    pub summary: String,
    /// What changed; its members depend on the type (docs/API.md, "Events").
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    pub links: Vec<EventLinkOut>,
}

/// The event as a webhook receives it ([`model::EventBody`], the one definition of its
/// members), documented here: `event_out_is_the_webhook_body` holds the two equal.
impl From<model::EventBody> for EventOut {
    fn from(e: model::EventBody) -> Self {
        EventOut {
            id: e.id,
            kind: e.kind.as_str().to_owned(),
            social_id: e.social_id.to_string(),
            company_name: e.company_name,
            occurred_at: e.occurred_at,
            summary: e.summary,
            data: e.data,
            links: e.links.into_iter().map(|l| EventLinkOut { rel: l.rel, href: l.href }).collect(),
        }
    }
}

impl From<&model::Event> for EventOut {
    fn from(e: &model::Event) -> Self {
        e.body().into()
    }
}

/// A company's events, newest first (extension: /monitor-getevents,
/// /underwriter-getevents).
#[derive(Debug, Serialize, ToSchema)]
pub struct Events {
    pub social_id: String,
    pub data: Vec<EventOut>,
    pub pagination: PaginationOut,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScannedCompany {
    pub social_id: String,
    pub company_name: String,
    pub domain: Option<String>,
    pub score: Option<f64>,
    pub grade: Option<String>,
    pub scanned_at: Option<String>,
}

impl From<&Company> for ScannedCompany {
    fn from(c: &Company) -> Self {
        Self {
            social_id: c.social_id.to_string(),
            company_name: c.company_name.clone(),
            domain: c.domain.as_ref().map(ToString::to_string),
            score: c.score.map(|s| s.as_f64()),
            grade: c.grade.map(|g| g.as_str().to_owned()),
            scanned_at: c.last_scanned_at.map(rfc3339),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LastScanned {
    pub data: Vec<ScannedCompany>,
    pub pagination: PaginationOut,
}

// --- Incidents ----------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncidentSummary {
    pub incident_id: String,
    pub title: String,
    pub date_detected: Option<String>,
    pub date_publicly_disclosed: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub attack_vector: String,
    pub threat_actor: String,
    pub investigation_status: String,
}

impl From<&Incident> for IncidentSummary {
    fn from(i: &Incident) -> Self {
        Self {
            incident_id: i.incident_id.clone(),
            title: i.title.clone(),
            date_detected: i.date_detected.map(|d| model::timefmt::format_date(d.0)),
            date_publicly_disclosed: i.date_publicly_disclosed.map(|d| model::timefmt::format_date(d.0)),
            kind: i.kind.clone(),
            attack_vector: i.attack_vector.clone(),
            threat_actor: i.threat_actor.clone(),
            investigation_status: i.investigation_status.clone(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CompanyHistory {
    pub social_id: String,
    pub incidents: Vec<IncidentSummary>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DomainHistory {
    pub domain: String,
    pub incidents: Vec<IncidentSummary>,
}

/// The incident data object.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncidentData {
    pub title: String,
    pub description: String,
    /// `YYYY-MM-DD`, null when unknown.
    pub date_detected: Option<String>,
    pub date_publicly_disclosed: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub attack_vector: String,
    pub threat_actor: String,
    pub motivation: String,
    #[schema(value_type = Object)]
    pub impact: Value,
    #[schema(value_type = Vec<Object>)]
    pub affected_entities: Value,
    #[schema(value_type = Object)]
    pub response: Value,
    #[schema(value_type = Object)]
    pub data_breach: Value,
    #[schema(value_type = Object)]
    pub ransomware: Value,
    /// Where the incident was reported: URLs, or the names of sources.
    pub references: Vec<String>,
    pub investigation_status: String,
    pub stakeholder_advisories: String,
    pub customer_advisories: String,
}

/// An incident's references as the strings the document promises: a string as it is,
/// an object by its `url` (or `href`), anything else as its JSON text.
fn reference_texts(v: &Value) -> Vec<String> {
    let one = |r: &Value| match r {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            o.get("url").or_else(|| o.get("href")).and_then(Value::as_str).map_or_else(|| r.to_string(), str::to_owned)
        }
        other => other.to_string(),
    };
    match v {
        Value::Array(items) => items.iter().filter(|r| !r.is_null()).map(one).collect(),
        Value::Null => Vec::new(),
        other => vec![one(other)],
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncidentDetail {
    pub incident_id: String,
    pub data: IncidentData,
}

impl From<Incident> for IncidentDetail {
    fn from(i: Incident) -> Self {
        Self {
            incident_id: i.incident_id,
            data: IncidentData {
                title: i.title,
                description: i.description,
                date_detected: i.date_detected.map(|d| model::timefmt::format_date(d.0)),
                date_publicly_disclosed: i.date_publicly_disclosed.map(|d| model::timefmt::format_date(d.0)),
                kind: i.kind,
                attack_vector: i.attack_vector,
                threat_actor: i.threat_actor,
                motivation: i.motivation,
                impact: i.impact,
                affected_entities: i.affected_entities,
                response: i.response,
                data_breach: i.data_breach,
                ransomware: i.ransomware,
                references: reference_texts(&i.references),
                investigation_status: i.investigation_status,
                stakeholder_advisories: i.stakeholder_advisories,
                customer_advisories: i.customer_advisories,
            },
        }
    }
}

// --- Monitor-only ----------------------------------------------------------------------------

#[derive(Debug, Serialize, ToSchema)]
pub struct VulnerabilityDetections {
    pub social_id: String,
    pub data: Vec<FindingOut>,
    pub pagination: PaginationOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubdomainFindingsData {
    pub domain_name: String,
    pub subdomain: Vec<FindingOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubdomainFindings {
    pub data: SubdomainFindingsData,
    pub pagination: PaginationOut,
}

// --- Predictions (docs/PREDICTIONS.md) ------------------------------------------------------

/// Text of the model's own (borrowed) or read back from an answer (owned, by the web app).
pub type Text = std::borrow::Cow<'static, str>;

/// The factors of the annual event rate (each multiplies `base`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RateFactors {
    pub base: f64,
    pub size: f64,
    pub industry: f64,
    pub score: f64,
    pub history: f64,
    /// The exposure factors applied, composed (their product up to 3, then bending
    /// towards 8: docs/PREDICTIONS.md).
    pub exposure: f64,
}

/// An exposure factor applied to the event rate, with the findings that triggered it
/// (docs/PREDICTIONS.md, "Exposure factors").
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExposureFactorOut {
    #[schema(value_type = String)]
    pub code: Text,
    #[schema(value_type = String)]
    pub label: Text,
    pub multiplier: f64,
    /// The published figure it rests on, as published.
    #[schema(value_type = String)]
    pub figure: Text,
    #[schema(value_type = String)]
    pub source: Text,
    /// True when no published figure sets the multiplier: the model's assumption.
    pub assumption: bool,
    /// The ids of the open findings that trigger it.
    pub findings: Vec<i64>,
}

/// The prediction with one triggering finding fixed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WhatIfOut {
    pub finding_id: i64,
    pub code: String,
    pub asset: String,
    /// The annual event rate with this finding fixed.
    pub annual_event_rate: f64,
    /// The prediction's figure at the end of the period with this finding fixed: the
    /// probability of an incident, of a breach, or the expected loss in US dollars.
    pub at_period: f64,
    /// `at_period` less the figure with every finding open: negative when the fix lowers
    /// it. A fix can raise a figure (fewer events, but more of them breaches).
    pub change: f64,
    /// Why the figure moves as it does: the exposure factors that stop applying, the
    /// event rate, the share of events that are breaches when the figure reads it.
    pub why: String,
}

/// What a prediction was computed from.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PredictionInputs {
    pub score: Option<f64>,
    pub naics_code: Option<u32>,
    pub revenue_usd: f64,
    /// How `revenue_usd` was obtained (the employee band, or the size assumed).
    pub revenue_basis: String,
    pub public_incidents: usize,
    pub annual_event_rate: f64,
    pub rate_factors: RateFactors,
    /// The exposure factors the company's open findings trigger.
    pub exposure_factors: Vec<ExposureFactorOut>,
    /// The share of loss events that are data breaches (the event mix), and why.
    pub breach_share: f64,
    #[schema(value_type = String)]
    pub breach_share_basis: Text,
}

impl PredictionInputs {
    pub fn new(p: &rating::predict::Profile, f: &rating::predict::Frequency) -> Self {
        Self {
            score: p.score,
            naics_code: p.naics,
            revenue_usd: p.revenue_usd,
            revenue_basis: p.revenue_basis.clone(),
            public_incidents: p.incident_ages_months.len(),
            annual_event_rate: f.lambda,
            rate_factors: RateFactors {
                base: f.base,
                size: f.size_factor,
                industry: f.industry_factor,
                score: f.score_factor,
                history: f.history_factor,
                exposure: f.exposure_factor,
            },
            exposure_factors: f
                .exposure
                .iter()
                .map(|a| ExposureFactorOut {
                    code: a.factor.code.into(),
                    label: a.factor.label.into(),
                    multiplier: a.factor.multiplier,
                    figure: a.factor.figure.into(),
                    source: a.factor.source.into(),
                    assumption: a.factor.assumption,
                    findings: a.findings.clone(),
                })
                .collect(),
            breach_share: f.breach_share.share,
            breach_share_basis: f.breach_share.basis.into(),
        }
    }
}

/// The probability of at least one incident within `horizon_months`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncidentMonthOut {
    pub month: u32,
    pub horizon_months: u32,
    pub probability: f64,
    pub expected_incidents: f64,
    #[schema(value_type = String)]
    pub units: Text,
    pub inputs: PredictionInputs,
    #[schema(value_type = String)]
    pub methodology: Text,
}

/// The probability of at least one data breach within `horizon_months`, and the records
/// expected lost.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DataLossMonthOut {
    pub month: u32,
    pub horizon_months: u32,
    pub breach_probability: f64,
    pub expected_records: f64,
    #[schema(value_type = String)]
    pub units: Text,
    pub inputs: PredictionInputs,
    #[schema(value_type = String)]
    pub methodology: Text,
}

/// One point of the loss exceedance curve.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExceedanceOut {
    pub threshold_usd: f64,
    pub probability: f64,
}

/// The aggregate loss over `horizon_months`, from a seeded Monte Carlo.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TailRiskOut {
    pub horizon_months: u32,
    pub probability_of_loss: f64,
    pub expected_loss_usd: f64,
    pub var95_usd: f64,
    pub var99_usd: f64,
    pub tvar95_usd: f64,
    pub loss_given_event_p50_usd: f64,
    pub loss_given_event_p95_usd: f64,
    pub exceedance: Vec<ExceedanceOut>,
    pub cap_per_event_usd: f64,
    pub paths: u32,
    pub seed: u64,
    #[schema(value_type = String)]
    pub units: Text,
    pub inputs: PredictionInputs,
    #[schema(value_type = String)]
    pub methodology: Text,
}

/// The units each prediction states.
pub const INCIDENT_UNITS: &str = "probability of at least one security incident within horizon_months; expected count";
pub const DATA_LOSS_UNITS: &str =
    "probability of at least one data breach within horizon_months; expected records lost";
pub const TAIL_RISK_UNITS: &str = "US dollars of aggregate loss over horizon_months (nominal)";

/// An incident prediction: one item per month of the period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncidentPrediction {
    pub social_id: String,
    pub period: u32,
    pub data: Vec<IncidentMonthOut>,
    /// The prediction with each finding that triggers an exposure factor fixed.
    pub what_if: Vec<WhatIfOut>,
    /// A notice when no prediction is available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A data-loss prediction: one item per month of the period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DataLossPrediction {
    pub social_id: String,
    pub period: u32,
    pub data: Vec<DataLossMonthOut>,
    /// The prediction with each finding that triggers an exposure factor fixed.
    pub what_if: Vec<WhatIfOut>,
    /// A notice when no prediction is available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A tail-risk estimation: one item, at the horizon.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TailRiskPrediction {
    pub social_id: String,
    pub period: u32,
    pub data: Vec<TailRiskOut>,
    /// The prediction with each finding that triggers an exposure factor fixed.
    pub what_if: Vec<WhatIfOut>,
    /// A notice when no prediction is available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

// --- Vulnerability (cve-search shape) ----------------------------------------------------------

#[derive(Debug, Serialize, ToSchema)]
pub struct CvssAccessOut {
    pub authentication: String,
    pub complexity: String,
    pub vector: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CiaOut {
    pub availability: String,
    pub confidentiality: String,
    pub integrity: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Exploitability3Out {
    pub attackvector: String,
    pub attackcomplexity: String,
    pub privilegesrequired: String,
    pub userinteraction: String,
    pub scope: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CpeObject {
    pub id: String,
    pub title: String,
}

impl From<CpeEntry> for CpeObject {
    fn from(e: CpeEntry) -> Self {
        Self { id: e.id, title: e.title }
    }
}

/// `vulnerable_configuration_cpe_2_2`: objects in the describe response, names elsewhere.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Cpe22List {
    Objects(Vec<CpeObject>),
    Names(Vec<String>),
}

/// A CVE record in the shape cve-search gives it. CVSS figures are null when the
/// record has no metric of that version.
#[derive(Debug, Serialize, ToSchema)]
pub struct CveOut {
    pub id: String,
    pub summary: String,
    pub published: String,
    pub modified: String,
    #[serde(rename = "lastModified")]
    pub last_modified: String,
    #[serde(rename = "cvssTime")]
    pub cvss_time: Option<String>,
    pub assigner: String,
    pub cwe: String,
    pub cvss: Option<f64>,
    #[serde(rename = "impactScore")]
    pub impact_score: Option<f64>,
    #[serde(rename = "exploitabilityScore")]
    pub exploitability_score: Option<f64>,
    #[serde(rename = "cvssVector")]
    pub cvss_vector: Option<String>,
    pub cvss3: Option<f64>,
    #[serde(rename = "impactScore3")]
    pub impact_score3: Option<f64>,
    #[serde(rename = "exploitabilityScore3")]
    pub exploitability_score3: Option<f64>,
    /// Extension: the CVSS v3 base vector, which names its version
    /// (`CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H`); null without a v3 metric.
    #[serde(rename = "cvss3Vector")]
    #[schema(example = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H")]
    pub cvss3_vector: Option<String>,
    /// Extension: the CVSS v4.0 base score (NVD 2.0 records); null without one.
    pub cvss4: Option<f64>,
    /// Extension: the CVSS v4.0 base vector (`CVSS:4.0/AV:N/…`); null without one.
    #[serde(rename = "cvss4Vector")]
    pub cvss4_vector: Option<String>,
    pub access: CvssAccessOut,
    pub impact: CiaOut,
    pub impact3: CiaOut,
    pub exploitability3: Exploitability3Out,
    pub refmap: BTreeMap<String, Vec<String>>,
    pub vulnerable_configuration: Vec<CpeObject>,
    pub vulnerable_configuration_cpe_2_2: Cpe22List,
    pub vulnerable_product: Vec<String>,
    #[schema(value_type = Vec<Object>)]
    pub msbulletin: Vec<Value>,
    #[schema(value_type = Vec<Object>)]
    pub capec: Vec<Value>,
    pub references: Vec<String>,
    /// CISA Known Exploited Vulnerabilities entry, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub kev: Option<Value>,
    /// FIRST EPSS probability, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
    /// Extension (get-cve-from-cpe-id): the record holds for the asked name only
    /// together with these other nodes of its configuration (the platform, e.g.
    /// `cpe:2.3:o:microsoft:windows:*:*:*:*:*:*:*:*`); absent when the name alone is enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<String>>,
}

fn cia(c: Option<&model::CvssImpact>) -> CiaOut {
    let c = c.cloned().unwrap_or_default();
    CiaOut { availability: c.availability, confidentiality: c.confidentiality, integrity: c.integrity }
}

fn exploitability3(r: &CveRecord) -> Exploitability3Out {
    let e = r.exploitability3.clone().unwrap_or_default();
    Exploitability3Out {
        attackvector: e.attackvector,
        attackcomplexity: e.attackcomplexity,
        privilegesrequired: e.privilegesrequired,
        userinteraction: e.userinteraction,
        scope: e.scope,
    }
}

fn cpe22(r: &CveRecord, as_objects: bool) -> Cpe22List {
    if as_objects {
        Cpe22List::Objects(r.vulnerable_configuration_cpe_2_2.iter().cloned().map(CpeObject::from).collect())
    } else {
        Cpe22List::Names(r.vulnerable_configuration_cpe_2_2.iter().map(|e| e.id.clone()).collect())
    }
}

impl CveOut {
    /// `describe` selects the object form of `vulnerable_configuration_cpe_2_2`.
    pub fn new(r: CveRecord, describe: bool) -> Self {
        let access = r.access.clone().unwrap_or_default();
        let exploitability3 = exploitability3(&r);
        let cpe22 = cpe22(&r, describe);
        Self {
            id: r.id.to_string(),
            summary: r.summary.clone(),
            published: cve_search_datetime(r.published.0),
            modified: cve_search_datetime(r.modified.0),
            last_modified: cve_search_datetime(r.last_modified.unwrap_or(r.modified).0),
            cvss_time: r.cvss_time.map(|t| cve_search_datetime(t.0)),
            assigner: r.assigner.clone(),
            cwe: r.cwe.clone(),
            cvss: r.cvss,
            impact_score: r.impact_score,
            exploitability_score: r.exploitability_score,
            cvss_vector: r.cvss_vector,
            cvss3: r.cvss3,
            impact_score3: r.impact_score3,
            exploitability_score3: r.exploitability_score3,
            cvss3_vector: r.cvss3_vector,
            cvss4: r.cvss4,
            cvss4_vector: r.cvss4_vector,
            access: CvssAccessOut {
                authentication: access.authentication,
                complexity: access.complexity,
                vector: access.vector,
            },
            impact: cia(r.impact.as_ref()),
            impact3: cia(r.impact3.as_ref()),
            exploitability3,
            vulnerable_configuration_cpe_2_2: cpe22,
            refmap: r.refmap,
            vulnerable_configuration: r.vulnerable_configuration.into_iter().map(CpeObject::from).collect(),
            vulnerable_product: r.vulnerable_product,
            msbulletin: r.msbulletin,
            capec: r.capec,
            references: r.references,
            kev: r.kev,
            epss: r.epss,
            percentile: r.percentile,
            conditions: None,
        }
    }
}

/// The reduced record of get-last: these fourteen members only.
#[derive(Debug, Serialize, ToSchema)]
pub struct CveLastOut {
    pub vulnerable_configuration_cpe_2_2: Vec<String>,
    pub modified: String,
    pub published: String,
    pub assigner: String,
    pub cwe: String,
    pub id: String,
    pub impact3: CiaOut,
    pub exploitability3: Exploitability3Out,
    pub cvss3: Option<f64>,
    #[serde(rename = "impactScore3")]
    pub impact_score3: Option<f64>,
    #[serde(rename = "exploitabilityScore3")]
    pub exploitability_score3: Option<f64>,
    #[serde(rename = "lastModified")]
    pub last_modified: String,
    pub references: Vec<String>,
    pub summary: String,
}

impl From<&CveRecord> for CveLastOut {
    fn from(r: &CveRecord) -> Self {
        Self {
            vulnerable_configuration_cpe_2_2: r.vulnerable_configuration_cpe_2_2.iter().map(|e| e.id.clone()).collect(),
            modified: cve_search_datetime(r.modified.0),
            published: cve_search_datetime(r.published.0),
            assigner: r.assigner.clone(),
            cwe: r.cwe.clone(),
            id: r.id.to_string(),
            impact3: cia(r.impact3.as_ref()),
            exploitability3: exploitability3(r),
            cvss3: r.cvss3,
            impact_score3: r.impact_score3,
            exploitability_score3: r.exploitability_score3,
            last_modified: cve_search_datetime(r.last_modified.unwrap_or(r.modified).0),
            references: r.references.clone(),
            summary: r.summary.clone(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VendorProducts {
    pub vendor: String,
    pub product: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Vendors {
    pub vendor: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResults {
    pub results: Vec<CveOut>,
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn incident_references_are_strings_whatever_was_stored() {
        let stored = json!(["https://a.example/x", {"url": "https://b.example/y"}, {"source": "press"}, 7, null]);
        assert_eq!(
            reference_texts(&stored),
            ["https://a.example/x", "https://b.example/y", r#"{"source":"press"}"#, "7"]
        );
        assert!(reference_texts(&Value::Null).is_empty());
        assert_eq!(reference_texts(&json!("https://c.example")), ["https://c.example"]);
    }
}

#[cfg(test)]
mod event_tests {
    use super::*;
    use serde_json::json;

    fn keys(object: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = object.as_object().into_iter().flat_map(|o| o.keys()).map(String::as_str).collect();
        keys.sort_unstable();
        keys
    }

    /// A webhook receives an event as the API lists it, member for member, and the
    /// document describes those members (all of them required).
    #[test]
    fn event_out_is_the_webhook_body() {
        let event = model::Event {
            id: 42,
            company: 7,
            social_id: model::SocialId::parse("acme-corp").unwrap(),
            company_name: "Acme Corp".into(),
            kind: model::EventKind::FindingOpened,
            subject: "tls-expired@www.acme.example".into(),
            occurred_at: time::macros::datetime!(2025-03-04 05:06:07.5 UTC),
            summary: "A high finding opened on www.acme.example".into(),
            data: json!({"code": "tls-expired", "asset": "www.acme.example", "severity": "high"}),
            links: vec![model::EventLink {
                rel: "findings".into(),
                href: "/monitor-getall-subdomain-findings?subdomain=www.acme.example".into(),
            }],
        };
        let webhook: Value = serde_json::from_slice(&event.webhook_body().unwrap()).unwrap();
        let listed = serde_json::to_value(EventOut::from(&event)).unwrap();
        assert_eq!(listed, webhook);
        assert_eq!(listed["type"], "finding_opened");
        assert_eq!(listed["occurred_at"], "2025-03-04T05:06:07Z");

        let documented = |schema: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| {
            let schema = serde_json::to_value(schema).unwrap();
            let mut required: Vec<String> = serde_json::from_value(schema["required"].clone()).unwrap();
            required.sort_unstable();
            (keys(&schema["properties"]).into_iter().map(str::to_owned).collect::<Vec<_>>(), required)
        };
        let (properties, required) = documented(<EventOut as utoipa::PartialSchema>::schema());
        assert_eq!(properties, keys(&webhook));
        assert_eq!(required, properties);
        let (properties, required) = documented(<EventLinkOut as utoipa::PartialSchema>::schema());
        assert_eq!(properties, keys(&webhook["links"][0]));
        assert_eq!(required, properties);
    }
}

// --- Improvement plans --------------------------------------------------------------------

/// One fix of an improvement plan.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlanStepOut {
    /// What fixing this finding alone would add to the global score.
    pub gain: f64,
    /// The global score and grade once it and every step before it are fixed.
    pub score_after: f64,
    pub grade_after: String,
    /// The cap below the target that this finding sets (every such finding must be fixed
    /// to lift it), if any.
    pub lifts_cap: Option<String>,
    pub finding: FindingOut,
}

/// The answer of GET /underwriter-getimprovementplan (and the Monitor's): the smallest set
/// of open findings whose fix reaches the target grade, exact under the published method.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ImprovementPlanOut {
    pub social_id: String,
    pub company_name: String,
    /// The rating now.
    pub score: f64,
    pub grade: String,
    pub target_grade: String,
    /// The least score of the target grade.
    pub target_score: f64,
    /// `reached` (the rating is at the target already), `plan` (fix the steps) or
    /// `unreachable` (`why` says why).
    pub outcome: String,
    pub why: Option<String>,
    /// The score and grade once every step is fixed.
    pub score_after: Option<f64>,
    pub grade_after: Option<String>,
    /// Ordered to raise the score soonest (the fixes that lift one cap together).
    pub steps: Vec<PlanStepOut>,
    /// The method the plan is exact under.
    pub methodology: String,
}
