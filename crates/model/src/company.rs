//! Companies and everything known about them: assets, findings, scores, incidents,
//! vulnerability records, API keys and jobs.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::{Date, OffsetDateTime};

use crate::{CveId, Domain, Grade, RiskVector, Score, Severity, SocialId};

/// A company as the store knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Company {
    /// Row id in the store; never shown to clients.
    pub id: i64,
    pub social_id: SocialId,
    pub company_name: String,
    pub website: String,
    pub domain: Option<Domain>,
    /// Whether the company holds `domain` on evidence (an operator's import, discovery,
    /// or its proof of control); false for a key's unverified claim (docs/API.md, "Domain
    /// ownership").
    pub domain_verified: bool,
    pub industry: String,
    pub description: String,
    /// The service's own public identifier of the company.
    pub company_id: String,
    pub funding_id: String,
    pub employees_number: String,
    /// Followers on the networking site, when a source gave the count.
    pub followers_number: Option<i64>,
    pub naics_code: Option<i64>,
    pub searched_by: i64,
    pub last_scanned_at: Option<OffsetDateTime>,
    /// Global score of the latest scan.
    pub score: Option<Score>,
    pub grade: Option<Grade>,
}

/// Identity and profile of a company to create or update.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompanyProfile {
    pub social_id: Option<SocialId>,
    pub company_name: String,
    pub website: String,
    pub domain: Option<Domain>,
    pub industry: String,
    pub description: String,
    pub company_id: Option<String>,
    pub funding_id: String,
    pub employees_number: String,
    /// Followers on the networking site, when a source gave the count.
    pub followers_number: Option<i64>,
    pub naics_code: Option<i64>,
}

/// A domain or subdomain attributed to a company, with the reason for the attribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainAsset {
    pub name: Domain,
    #[serde(default)]
    pub attribution: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Application {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    pub host: String,
    #[serde(default)]
    pub cpe: Option<String>,
    #[serde(default)]
    pub evidence: String,
    /// How sure the detection is, 0–100 (absent for imported data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
    pub first_seen: OffsetDateTimeText,
    pub last_seen: OffsetDateTimeText,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkEndpoint {
    pub ip: std::net::IpAddr,
    pub port: u16,
    #[serde(default = "tcp")]
    pub protocol: String,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub service: Option<String>,
    #[serde(default)]
    pub product: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub banner: String,
    /// Why the endpoint is the company's; `None` for endpoints imported with the
    /// company's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    pub first_seen: OffsetDateTimeText,
    pub last_seen: OffsetDateTimeText,
}

/// Why an asset is attributed to a company: how discovery found it (`domain`, `mx`,
/// `ns`, `srv`, `cname`, `wordlist`, `certificate`, `link`, `ct`) and what it observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    pub source: String,
    pub evidence: String,
}

/// A host name discovery attributed to a company, with the addresses it resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredHost {
    pub name: String,
    pub addresses: Vec<std::net::IpAddr>,
    pub attribution: Attribution,
    pub first_seen: OffsetDateTimeText,
    pub last_seen: OffsetDateTimeText,
}

fn tcp() -> String {
    "tcp".to_owned()
}

/// One component of the external software bill of materials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbomComponent {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub purl: Option<String>,
    #[serde(default)]
    pub cpe: Option<String>,
    #[serde(default)]
    pub hosts: Vec<Domain>,
    #[serde(default)]
    pub evidence: String,
    #[serde(default)]
    pub end_of_life: Option<bool>,
    #[serde(default)]
    pub latest_version: Option<String>,
    /// The CVEs attributed to it, each with its basis: only the scored ones
    /// ([`crate::CveBasis::scored`]) open findings and count in the rating.
    #[serde(default)]
    pub cves: Vec<crate::AttributedCve>,
    /// How sure the detection is, 0–100 (absent for imported data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
    pub first_seen: OffsetDateTimeText,
    pub last_seen: OffsetDateTimeText,
}

/// What a probe observed on one asset, with its evidence and the way to fix it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Store id; 0 before the finding is stored.
    #[serde(default)]
    pub id: i64,
    pub risk_vector: RiskVector,
    pub asset: String,
    pub severity: Severity,
    pub code: String,
    pub title: String,
    #[serde(default)]
    pub evidence: String,
    #[serde(default)]
    pub remediation: String,
    #[serde(default)]
    pub references: Vec<String>,
    /// The CVE the finding is about (certificate_cve, vulnerabilities), a record of the
    /// vulnerability database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cve: Option<CveId>,
    /// The software component the finding is about (sbom, vulnerabilities): `name version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    pub first_seen: OffsetDateTimeText,
    pub last_seen: OffsetDateTimeText,
    /// An open dispute names it (a stored finding; a scan's are never disputed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disputed: bool,
    /// An operator accepted a compensating control: the finding stays visible and
    /// weighs nothing in the rating.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_weight: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentScore {
    pub score: Score,
    pub grade: Grade,
    /// Share of the global score, in percent.
    pub weight: Score,
    #[serde(default)]
    pub assets_checked: u32,
    #[serde(default)]
    pub findings_count: u32,
    /// Why the component could not be assessed (nothing of its kind was found); its
    /// score then carries no weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_assessable: Option<String>,
    /// The checks the scan made for this component (none for an imported rating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<crate::ComponentChecks>,
}

/// The result of rating one scan: global score and the twelve components.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreSnapshot {
    pub scanned_at: OffsetDateTimeText,
    pub score: Score,
    pub grade: Grade,
    pub components: BTreeMap<RiskVector, ComponentScore>,
    /// The version of docs/METHODOLOGY.md that produced the rating (none for imported
    /// ratings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// What limited the scan the rating comes from: a cap or the deadline reached, names
    /// refused, domains that do not exist. Empty when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Why the rating was made: [`RATED_BY_SCAN`], [`RATED_BY_RESCAN`] or
    /// [`RATED_BY_FEED_UPDATE`]; none for imported ratings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The scan behind the rating was a quick one (DNS and mail, the web root, TLS on
    /// 443, the common ports: a company's first rating); false for a full scan.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick: bool,
}

impl ScoreSnapshot {
    /// `quick` or `full`: how deep the scan behind the rating looked.
    pub fn depth(&self) -> &'static str {
        if self.quick { "quick" } else { "full" }
    }
}

/// A rating made by a full scan.
pub const RATED_BY_SCAN: &str = "scan";
/// A rating made again after the rescan of one host and risk vector.
pub const RATED_BY_RESCAN: &str = "rescan";
/// A rating made again because the vulnerability feeds changed what the company's
/// detected software matches (no scan).
pub const RATED_BY_FEED_UPDATE: &str = "feed update";

/// A public security incident.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    pub incident_id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub date_detected: Option<DateText>,
    #[serde(default)]
    pub date_publicly_disclosed: Option<DateText>,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub attack_vector: String,
    #[serde(default)]
    pub threat_actor: String,
    #[serde(default)]
    pub motivation: String,
    #[serde(default = "empty_object")]
    pub impact: Value,
    #[serde(default = "empty_array")]
    pub affected_entities: Value,
    #[serde(default = "empty_object")]
    pub response: Value,
    #[serde(default = "empty_object")]
    pub data_breach: Value,
    #[serde(default = "empty_object")]
    pub ransomware: Value,
    #[serde(default = "empty_array")]
    pub references: Value,
    #[serde(default)]
    pub investigation_status: String,
    #[serde(default)]
    pub stakeholder_advisories: String,
    #[serde(default)]
    pub customer_advisories: String,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}
fn empty_array() -> Value {
    Value::Array(Vec::new())
}

/// A timestamp that reads RFC 3339 (or zone-less ISO 8601) and writes RFC 3339 UTC,
/// keeping any fraction of a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct OffsetDateTimeText(pub OffsetDateTime);

impl Serialize for OffsetDateTimeText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0.to_offset(time::UtcOffset::UTC);
        let text = t.format(&time::format_description::well_known::Rfc3339).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for OffsetDateTimeText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        crate::timefmt::parse_datetime(&raw)
            .map(OffsetDateTimeText)
            .ok_or_else(|| serde::de::Error::custom(format!("not a date-time: {raw:?}")))
    }
}

/// A calendar date written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateText(pub Date);

impl Serialize for DateText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::timefmt::format_date(self.0))
    }
}

impl<'de> Deserialize<'de> for DateText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        crate::timefmt::parse_date(&raw)
            .map(DateText)
            .ok_or_else(|| serde::de::Error::custom(format!("not a YYYY-MM-DD date: {raw:?}")))
    }
}

/// A vulnerability record in the shape cve-search publishes (docs/IMPORT.md), plus the
/// CISA KEV entry and the EPSS figures where known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CveRecord {
    pub id: CveId,
    #[serde(default)]
    pub summary: String,
    pub published: OffsetDateTimeText,
    pub modified: OffsetDateTimeText,
    #[serde(rename = "lastModified", default)]
    pub last_modified: Option<OffsetDateTimeText>,
    #[serde(rename = "cvssTime", default)]
    pub cvss_time: Option<OffsetDateTimeText>,
    #[serde(default)]
    pub assigner: String,
    #[serde(default = "unknown_cwe")]
    pub cwe: String,
    #[serde(default)]
    pub cvss: Option<f64>,
    #[serde(rename = "impactScore", default)]
    pub impact_score: Option<f64>,
    #[serde(rename = "exploitabilityScore", default)]
    pub exploitability_score: Option<f64>,
    #[serde(rename = "cvssVector", default)]
    pub cvss_vector: Option<String>,
    #[serde(default)]
    pub cvss3: Option<f64>,
    #[serde(rename = "impactScore3", default)]
    pub impact_score3: Option<f64>,
    #[serde(rename = "exploitabilityScore3", default)]
    pub exploitability_score3: Option<f64>,
    /// Extension: the CVSS v3 base vector, which names its version
    /// (`CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H`), when the record has a v3 metric.
    #[serde(rename = "cvss3Vector", default)]
    pub cvss3_vector: Option<String>,
    /// Extension: the CVSS v4.0 base score, when the record has a v4.0 metric (NVD 2.0).
    #[serde(default)]
    pub cvss4: Option<f64>,
    /// Extension: the CVSS v4.0 base vector (`CVSS:4.0/AV:N/…`).
    #[serde(rename = "cvss4Vector", default)]
    pub cvss4_vector: Option<String>,
    #[serde(default)]
    pub access: Option<CvssAccess>,
    #[serde(default)]
    pub impact: Option<CvssImpact>,
    #[serde(default)]
    pub impact3: Option<CvssImpact>,
    #[serde(default)]
    pub exploitability3: Option<CvssExploitability3>,
    #[serde(default)]
    pub refmap: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub vulnerable_configuration: Vec<CpeEntry>,
    #[serde(default)]
    pub vulnerable_configuration_cpe_2_2: Vec<CpeEntry>,
    #[serde(default)]
    pub vulnerable_product: Vec<String>,
    #[serde(default)]
    pub msbulletin: Vec<Value>,
    #[serde(default)]
    pub capec: Vec<Value>,
    #[serde(default)]
    pub references: Vec<String>,
    #[serde(default)]
    pub kev: Option<Value>,
    #[serde(default)]
    pub epss: Option<f64>,
    #[serde(default)]
    pub percentile: Option<f64>,
}

impl CveRecord {
    /// Whether the record's served form (the cve-search list form that
    /// `vulndb::render::list_form` writes, without `capec`, `kev`, `epss` and
    /// `percentile`) reads back, by [`CveRecord::from_served_form`], as exactly this
    /// record. The store then keeps only the served form.
    pub fn served_form_reproduces(&self) -> bool {
        let whole_micros = |t: &OffsetDateTimeText| t.0.nanosecond().is_multiple_of(1000);
        let utc = |t: &OffsetDateTimeText| t.0.offset().is_utc();
        let times = [Some(&self.published), Some(&self.modified), self.last_modified.as_ref(), self.cvss_time.as_ref()];
        self.capec.is_empty()
            && self.kev.is_none()
            && self.epss.is_none()
            && self.percentile.is_none()
            && self.last_modified.is_some()
            && times.into_iter().flatten().all(|t| whole_micros(t) && utc(t))
            && self.access.as_ref().is_none_or(|a| *a != CvssAccess::default())
            && self.impact.as_ref().is_none_or(|a| *a != CvssImpact::default())
            && self.impact3.as_ref().is_none_or(|a| *a != CvssImpact::default())
            && self.exploitability3.as_ref().is_none_or(|a| *a != CvssExploitability3::default())
            && self.vulnerable_configuration_cpe_2_2.iter().all(|e| e.title == e.id)
            && self.vulnerable_configuration.iter().all(|e| !e.title.is_empty())
    }

    /// The CVSS metric a CVE finding's severity is computed from (docs/FINDINGS.md,
    /// `scanner::checks::vulnerabilities::cve_severity`): v3 (3.1 or 3.0, as its vector
    /// says), else v4.0, else v2; none without any.
    pub fn severity_metric(&self) -> Option<CvssMetric> {
        if let Some(score) = self.cvss3 {
            let vector = self.cvss3_vector.clone().filter(|v| !v.is_empty());
            let version = vector
                .as_deref()
                .and_then(|v| v.strip_prefix("CVSS:"))
                .and_then(|v| v.split('/').next())
                .unwrap_or("3")
                .to_owned();
            return Some(CvssMetric { version, score, vector });
        }
        if let Some(score) = self.cvss4 {
            let vector = self.cvss4_vector.clone().filter(|v| !v.is_empty());
            return Some(CvssMetric { version: "4.0".to_owned(), score, vector });
        }
        let score = self.cvss?;
        Some(CvssMetric {
            version: "2.0".to_owned(),
            score,
            vector: self.cvss_vector.clone().filter(|v| !v.is_empty()),
        })
    }

    /// Reads a record back from its served form: the served form writes absent CVSS
    /// details as objects of empty strings, which read back as absent.
    pub fn from_served_form(json: &str) -> Result<CveRecord, serde_json::Error> {
        let mut r: CveRecord = serde_json::from_str(json)?;
        if r.access.as_ref().is_some_and(|a| *a == CvssAccess::default()) {
            r.access = None;
        }
        if r.impact.as_ref().is_some_and(|a| *a == CvssImpact::default()) {
            r.impact = None;
        }
        if r.impact3.as_ref().is_some_and(|a| *a == CvssImpact::default()) {
            r.impact3 = None;
        }
        if r.exploitability3.as_ref().is_some_and(|a| *a == CvssExploitability3::default()) {
            r.exploitability3 = None;
        }
        Ok(r)
    }
}

/// One CVSS base metric of a record: its version (`3.1`, `3.0`, `2.0`; `3` when a v3
/// score came without its vector), base score and vector (v2 vectors have no prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct CvssMetric {
    pub version: String,
    pub score: f64,
    pub vector: Option<String>,
}

fn unknown_cwe() -> String {
    "Unknown".to_owned()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CvssAccess {
    #[serde(default)]
    pub authentication: String,
    #[serde(default)]
    pub complexity: String,
    #[serde(default)]
    pub vector: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CvssImpact {
    #[serde(default)]
    pub availability: String,
    #[serde(default)]
    pub confidentiality: String,
    #[serde(default)]
    pub integrity: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CvssExploitability3 {
    #[serde(default)]
    pub attackvector: String,
    #[serde(default)]
    pub attackcomplexity: String,
    #[serde(default)]
    pub privilegesrequired: String,
    #[serde(default)]
    pub userinteraction: String,
    #[serde(default)]
    pub scope: String,
}

/// A CPE name in a vulnerable configuration, with its title where known.
/// Accepts either a bare string or cve-search's `{"id": …, "title": …}` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpeEntry {
    pub id: String,
    pub title: String,
}

impl<'de> Deserialize<'de> for CpeEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Entry {
                id: String,
                #[serde(default)]
                title: String,
            },
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Name(id) => CpeEntry { title: id.clone(), id },
            Raw::Entry { id, title } => CpeEntry { title: if title.is_empty() { id.clone() } else { title }, id },
        })
    }
}

/// What an API key may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    General,
    Vulnerability,
    Underwriter,
    Monitor,
    /// The organisation's portfolios (extension; granted with `underwriter` by
    /// `rampart keys create`): needs a key of an organisation.
    Portfolio,
}

impl Scope {
    pub const ALL: [Scope; 5] =
        [Scope::General, Scope::Vulnerability, Scope::Underwriter, Scope::Monitor, Scope::Portfolio];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::General => "general",
            Scope::Vulnerability => "vulnerability",
            Scope::Underwriter => "underwriter",
            Scope::Monitor => "monitor",
            Scope::Portfolio => "portfolio",
        }
    }

    pub fn parse(raw: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str().eq_ignore_ascii_case(raw.trim()))
    }

    /// Parses a comma-separated list such as `general,underwriter`.
    pub fn parse_list(raw: &str) -> Result<Vec<Scope>, String> {
        let mut out = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let s = Scope::parse(part).ok_or_else(|| {
                format!("unknown scope {part:?}: expected general, vulnerability, underwriter, monitor or portfolio")
            })?;
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out.sort();
        Ok(out)
    }
}

/// An API key as stored: only the hash of the secret is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: i64,
    pub name: String,
    /// The first characters of the key, to recognise it in listings.
    pub prefix: String,
    /// SHA-256 of the key, hex.
    pub hash: String,
    pub scopes: Vec<Scope>,
    /// For monitor keys: the company the key reports on.
    pub company: Option<SocialId>,
    /// The organisation the key belongs to: its portfolios are the key's.
    pub org: Option<i64>,
    pub per_minute: u32,
    pub monthly: u64,
    pub active: bool,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewApiKey {
    pub name: String,
    pub prefix: String,
    pub hash: String,
    pub scopes: Vec<Scope>,
    pub company: Option<SocialId>,
    pub org: Option<i64>,
    pub per_minute: u32,
    pub monthly: u64,
}

/// What a job is to do: the typed seam between whoever queues work (the API, the demo,
/// the CLI) and the worker. Stored as its `kind` and the JSON of its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum JobSpec {
    /// A full scan of the company's domains, then a rating.
    Scan { social_id: SocialId },
    /// A new company's first rating in seconds: a quick scan of its domains (DNS and
    /// mail, the web root, TLS on 443, the common ports), a rating of depth `quick`,
    /// then its full scan queued. Nothing is done for a company rated already.
    Quick { social_id: SocialId },
    /// One host and risk vector of the company scanned again (after a fix), then a
    /// re-rating.
    Rescan { social_id: SocialId, subdomain: Domain, risk_vector: RiskVector },
    /// One event of the company delivered to one webhook (signed; retried with
    /// exponential backoff until the receiver answers 2xx, [`JobSpec::max_attempts`]).
    Deliver { social_id: SocialId, webhook: i64, event: i64 },
    /// The company's proof of control of one of its claimed domains looked for (a TXT
    /// record at `_rampart-challenge.<domain>`, or the file
    /// `/.well-known/rampart-challenge`, holding the token issued for it).
    Verify { social_id: SocialId, domain: Domain },
}

impl JobSpec {
    /// The name stored beside the fields (`scan`, `rescan`).
    pub fn kind(&self) -> &'static str {
        match self {
            JobSpec::Scan { .. } => "scan",
            JobSpec::Quick { .. } => "quick",
            JobSpec::Rescan { .. } => "rescan",
            JobSpec::Deliver { .. } => "deliver",
            JobSpec::Verify { .. } => "verify",
        }
    }

    /// The company the job is about.
    pub fn company(&self) -> &SocialId {
        match self {
            JobSpec::Scan { social_id }
            | JobSpec::Quick { social_id }
            | JobSpec::Rescan { social_id, .. }
            | JobSpec::Deliver { social_id, .. }
            | JobSpec::Verify { social_id, .. } => social_id,
        }
    }

    /// Jobs with the same key are the same work: one is not queued while another waits
    /// or runs.
    pub fn dedup_key(&self) -> String {
        match self {
            JobSpec::Scan { social_id } => format!("scan:{social_id}"),
            JobSpec::Quick { social_id } => format!("quick:{social_id}"),
            JobSpec::Rescan { social_id, subdomain, risk_vector } => {
                format!("rescan:{social_id}:{subdomain}:{risk_vector}")
            }
            JobSpec::Deliver { webhook, event, .. } => format!("deliver:{webhook}:{event}"),
            JobSpec::Verify { social_id, domain } => format!("verify:{social_id}:{domain}"),
        }
    }

    /// Whether the job scans the company (a full scan or a rescan): its failure is an
    /// event of the company.
    pub fn scans(&self) -> bool {
        matches!(self, JobSpec::Scan { .. } | JobSpec::Quick { .. } | JobSpec::Rescan { .. })
    }

    /// Attempts before the job is given up, when the kind has its own number (a
    /// delivery is tried for about a day); `None`: the worker's `--max-attempts`.
    pub fn max_attempts(&self) -> Option<i64> {
        match self {
            JobSpec::Deliver { .. } => Some(10),
            JobSpec::Verify { .. } => Some(3),
            JobSpec::Scan { .. } | JobSpec::Quick { .. } | JobSpec::Rescan { .. } => None,
        }
    }

    /// How soon a worker should take the job when several are ready: higher first.
    /// A new company's quick rating is someone waiting to see it; a delivery is one
    /// short request someone's system waits for; a rescan is someone waiting on one
    /// answer (the API's request-a-rescan); a full scan comes next; work that only
    /// keeps ratings fresh takes [`JobSpec::BACKGROUND`].
    pub fn default_priority(&self) -> i16 {
        match self {
            JobSpec::Quick { .. } => 40,
            JobSpec::Deliver { .. } | JobSpec::Verify { .. } => 30,
            JobSpec::Rescan { .. } => 20,
            JobSpec::Scan { .. } => 10,
        }
    }

    /// The priority of work nobody waits on (scheduled refreshes).
    pub const BACKGROUND: i16 = 0;

    /// The fields as stored (a JSON object without `kind`).
    pub fn payload(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.remove("kind");
        }
        v
    }

    /// The job a stored `kind` and payload describe.
    pub fn from_stored(kind: &str, payload: &str) -> Result<JobSpec, String> {
        let mut v: Value = serde_json::from_str(payload).map_err(|e| format!("job payload: {e}"))?;
        let Value::Object(map) = &mut v else {
            return Err(format!("job payload is not an object: {payload}"));
        };
        map.insert("kind".into(), Value::String(kind.to_owned()));
        serde_json::from_value(v).map_err(|e| format!("{kind} job: {e}"))
    }
}

impl fmt::Display for JobSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobSpec::Scan { social_id } => write!(f, "scan {social_id}"),
            JobSpec::Quick { social_id } => write!(f, "quick scan {social_id}"),
            JobSpec::Rescan { social_id, subdomain, risk_vector } => {
                write!(f, "rescan {social_id} {subdomain} {risk_vector}")
            }
            JobSpec::Deliver { social_id, webhook, event } => {
                write!(f, "deliver event {event} of {social_id} to webhook {webhook}")
            }
            JobSpec::Verify { social_id, domain } => write!(f, "verify {domain} for {social_id}"),
        }
    }
}

/// A unit of background work in the durable queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub spec: JobSpec,
    pub attempts: i64,
    pub status: JobStatus,
    /// Higher runs first among ready jobs ([`JobSpec::default_priority`]).
    pub priority: i16,
    /// Not leased before this time (RFC 3339, UTC): a delayed job, or a retry's backoff.
    pub run_after: String,
    /// When the job was first leased (RFC 3339, UTC; none before): the time its effects
    /// are recorded at on every attempt, so a job run again replaces what an earlier
    /// attempt wrote.
    pub started_at: Option<String>,
    /// The token of the current lease (a leased job); every call that ends or renews
    /// the lease must give it.
    pub lease_token: Option<String>,
    /// The worker that holds or last held the lease.
    pub worker: Option<String>,
    pub last_error: Option<String>,
    pub updated_at: String,
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobStatus {
    /// Waiting for its `run_after` time and a worker.
    Queued,
    /// Leased by a worker.
    Running,
    Done,
    /// Given up: out of attempts, not retryable, or panicked. `last_error` says why.
    Dead,
    /// Cancelled by an operator.
    Cancelled,
}

impl JobStatus {
    pub const ALL: [JobStatus; 5] =
        [JobStatus::Queued, JobStatus::Running, JobStatus::Done, JobStatus::Dead, JobStatus::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Dead => "dead",
            JobStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(raw: &str) -> Option<JobStatus> {
        JobStatus::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// Legal-form words removed from the end of a name.
const LEGAL_FORMS: [&str; 22] = [
    "inc",
    "incorporated",
    "llc",
    "ltd",
    "limited",
    "corp",
    "corporation",
    "co",
    "company",
    "plc",
    "gmbh",
    "ag",
    "sa",
    "sas",
    "bv",
    "nv",
    "srl",
    "spa",
    "pty",
    "lp",
    "llp",
    "the",
];

/// Victim names that name nobody.
const VAGUE: [&str; 5] = ["unknown", "other", "na", "n a", "none"];

/// The form in which company names are compared (incident linking): lower case, `&` as
/// `and`, punctuation as spaces, runs of single letters joined (`J.P.` and `JP`), a
/// leading `the` and trailing legal forms removed, spaces collapsed:
/// `NORTHROP GRUMMAN CORP.` → `northrop grumman`, `AT&T` → `at and t`.
pub fn normalise_name(name: &str) -> String {
    let lower = name.to_lowercase().replace('&', " and ");
    let cleaned: String = lower.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let mut joined: Vec<String> = Vec::new();
    let mut letters_run = false;
    for w in cleaned.split_whitespace() {
        let single = w.chars().count() == 1;
        match joined.last_mut() {
            Some(last) if single && letters_run => last.push_str(w),
            _ => joined.push(w.to_owned()),
        }
        letters_run = single;
    }
    let mut words: Vec<&str> = joined.iter().map(String::as_str).collect();
    if words.first() == Some(&"the") {
        words.remove(0);
    }
    while words.len() > 1 && words.last().is_some_and(|w| LEGAL_FORMS.contains(w)) {
        words.pop();
    }
    let out = words.join(" ");
    if VAGUE.contains(&out.as_str()) { String::new() } else { out }
}

#[cfg(test)]
mod name_tests {
    use super::normalise_name;

    #[test]
    fn names_normalise_conservatively() {
        assert_eq!(normalise_name("Northrop Grumman Corporation"), "northrop grumman");
        assert_eq!(normalise_name("NORTHROP GRUMMAN CORP."), "northrop grumman");
        assert_eq!(normalise_name("The Home Depot, Inc."), "home depot");
        assert_eq!(normalise_name("AT&T"), "at and t");
        assert_eq!(normalise_name("AT & T Corp."), "at and t");
        assert_eq!(normalise_name("Procter & Gamble Co."), "procter and gamble");
        assert_eq!(normalise_name("Procter and Gamble"), "procter and gamble");
        assert_eq!(normalise_name("T-Mobile"), "t mobile");
        assert_eq!(normalise_name("J.P. Morgan"), "jp morgan");
        assert_eq!(normalise_name("JP Morgan"), "jp morgan");
        assert_eq!(normalise_name("U.S. Bank"), "us bank");
        assert_eq!(normalise_name("Unknown"), "");
        assert_eq!(normalise_name("Co"), "co", "a name is never emptied by its legal form");
        assert_ne!(normalise_name("Acme Robotics"), normalise_name("Acme Robotics Labs"));
    }
}

#[cfg(test)]
mod job_tests {
    use super::JobSpec;
    use crate::{Domain, RiskVector, SocialId};

    #[test]
    fn a_job_reads_back_from_its_kind_and_payload() {
        let rescan = JobSpec::Rescan {
            social_id: SocialId::parse("acme").unwrap(),
            subdomain: Domain::parse("www.acme.test").unwrap(),
            risk_vector: RiskVector::Dmarc,
        };
        let payload = rescan.payload();
        assert!(payload.get("kind").is_none(), "the kind is stored apart: {payload}");
        assert_eq!(JobSpec::from_stored(rescan.kind(), &payload.to_string()).unwrap(), rescan);
        assert_eq!(rescan.dedup_key(), "rescan:acme:www.acme.test:dmarc");
        // Rows written before the typed seam: the same fields.
        let old = JobSpec::from_stored("scan", r#"{"social_id": "acme"}"#).unwrap();
        assert_eq!(old, JobSpec::Scan { social_id: SocialId::parse("acme").unwrap() });
        assert_eq!(old.dedup_key(), "scan:acme");
    }

    #[test]
    fn a_job_that_does_not_parse_says_why() {
        for (kind, payload) in [
            ("teleport", r#"{"social_id": "acme"}"#),
            ("scan", r#"{"social_id": "Not An Id!"}"#),
            ("scan", r#"{"social_id": "acme", "extra": 1}"#),
            ("rescan", r#"{"social_id": "acme", "subdomain": "www.acme.test", "risk_vector": "warp"}"#),
            ("scan", "[1]"),
            ("scan", "{"),
        ] {
            assert!(JobSpec::from_stored(kind, payload).is_err(), "{kind} {payload}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(v: serde_json::Value) -> CveRecord {
        let mut base = serde_json::json!({"id": "CVE-2022-26134", "published": "2022-06-03T22:15:09.143000",
            "modified": "2024-11-21T06:53:29.000000"});
        base.as_object_mut().unwrap().extend(v.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    /// The metric that sets a finding's severity: v3 with the version its vector names,
    /// else v2; a v4.0 metric does not.
    #[test]
    fn the_severity_metric_is_v3_else_v4_else_v2() {
        let v31 = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H";
        let r = record(serde_json::json!({"cvss3": 9.8, "cvss3Vector": v31, "cvss": 7.5,
            "cvssVector": "AV:N/AC:L/Au:N/C:P/I:P/A:P", "cvss4": 9.3, "cvss4Vector": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}));
        assert_eq!(
            r.severity_metric(),
            Some(CvssMetric { version: "3.1".into(), score: 9.8, vector: Some(v31.into()) })
        );
        let r =
            record(serde_json::json!({"cvss3": 6.1, "cvss3Vector": "CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"}));
        assert_eq!(r.severity_metric().map(|m| m.version), Some("3.0".into()));
        // A v3 score read back from a store written before vectors were kept.
        let r = record(serde_json::json!({"cvss3": 6.1}));
        assert_eq!(r.severity_metric(), Some(CvssMetric { version: "3".into(), score: 6.1, vector: None }));
        let r = record(serde_json::json!({"cvss": 5.0, "cvssVector": "AV:N/AC:L/Au:N/C:P/I:N/A:N"}));
        assert_eq!(
            r.severity_metric(),
            Some(CvssMetric { version: "2.0".into(), score: 5.0, vector: Some("AV:N/AC:L/Au:N/C:P/I:N/A:N".into()) })
        );
        // A record with only a v4.0 metric (recent CNA-scored records): v4.0 sets it.
        let v4 = "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N";
        assert_eq!(
            record(serde_json::json!({"cvss4": 9.3, "cvss4Vector": v4, "cvss": 5.0})).severity_metric(),
            Some(CvssMetric { version: "4.0".into(), score: 9.3, vector: Some(v4.into()) })
        );
        assert_eq!(record(serde_json::json!({})).severity_metric(), None);
    }
}
