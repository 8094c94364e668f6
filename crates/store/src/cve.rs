//! CVE intelligence (records, their match index, KEV, EPSS, CWE, CAPEC, feed state) and the reference data the scanner reads (fingerprint rules, end-of-life products).

use std::collections::BTreeMap;

use model::{CveId, CveRecord};

use crate::{Result, SharedStr};
use async_trait::async_trait;

/// One `cpeMatch` entry of a CVE, indexed for lookups by vendor and product. Version
/// fields are keys whose byte order is the version order (`vulndb::version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpeMatchRow {
    pub part: String,
    pub vendor: String,
    pub product: String,
    /// The criteria's version attribute as written (`*`, `-`, a version, a pattern).
    pub version: String,
    /// Key of the version when the criteria names one exactly.
    pub version_key: Option<String>,
    pub start_incl: Option<String>,
    pub start_excl: Option<String>,
    pub end_incl: Option<String>,
    pub end_excl: Option<String>,
    pub vulnerable: bool,
    pub criteria: String,
}

/// A vulnerability record as stored: the record served, its configurations (JSON, for
/// matching) and their index rows.
#[derive(Debug, Clone)]
pub struct StoredCve {
    pub record: CveRecord,
    /// The record as JSON when its served form does not reproduce it
    /// ([`CveRecord::served_form_reproduces`]); `None` keeps only the served form, from
    /// which the record is read back. NVD records need no copy of their own.
    pub record_json: Option<String>,
    pub configurations: String,
    /// Whether a match needs the configurations evaluated, or the index rows suffice.
    pub needs_eval: bool,
    /// The record as list responses serve it (JSON object), without the members joined
    /// from other feeds.
    pub served: String,
    /// The products the CVE has vulnerable entries for.
    pub products: Vec<ProductRow>,
    pub matches: Vec<CpeMatchRow>,
}

/// What [`Store::cve_candidates`] looks for: CVEs with a vulnerable entry for `part`
/// (any when `None`), `vendor` and `product` that may cover `version_key` (all of them
/// when `None`), newest first, after `after` (last-modified, id) when given, at most
/// `batch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CandidateQuery<'a> {
    pub part: Option<&'a str>,
    pub vendor: &'a str,
    pub product: &'a str,
    pub version_key: Option<&'a str>,
    /// Configurations with every candidate, not only those that need evaluating.
    pub all_configurations: bool,
    pub after: Option<&'a (String, CveId)>,
    pub batch: u32,
    /// Each candidate's served form with it, read in the same query.
    pub served: bool,
}

/// A CVE that may match a name, with what is needed to decide.
#[derive(Debug, Clone)]
pub struct CveCandidate {
    pub id: CveId,
    pub last_modified: SharedStr,
    /// The configurations, when they must be evaluated (or were asked for).
    pub configurations: Option<SharedStr>,
    /// The served form, when asked for ([`CandidateQuery::served`]).
    pub served: Option<ServedCve>,
}

/// A product a CVE has vulnerable entries for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductRow {
    pub vendor: String,
    pub product: String,
    /// The parts (`a`, `o`, `h`) of those entries.
    pub parts: String,
    /// Whether the CVE applies to the product asked about without a version (decided
    /// at import by evaluating the configurations).
    pub applies_any_version: bool,
}

/// A record in its served form, with what other feeds add to it.
#[derive(Debug, Clone)]
pub struct ServedCve {
    pub id: CveId,
    pub cwe: SharedStr,
    /// The served JSON object.
    pub json: SharedStr,
    /// The KEV entry (JSON object), when listed.
    pub kev: Option<SharedStr>,
    pub epss: Option<f64>,
    pub percentile: Option<f64>,
}

/// A publisher's statement about one CVE (`vulndb::advisory::Statement`) as the store
/// keeps it: the keys it is found by, and the statement itself as JSON, whose form the
/// vulnerability database owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdvisoryRow {
    pub cve_id: CveId,
    /// Unique per CVE: the publisher, the product or package and the platform it speaks of.
    pub key: String,
    /// The CPE vendor and product it speaks of, where known.
    pub vendor: Option<String>,
    pub product: Option<String>,
    /// The package (npm name, distribution source package), for a package's statement.
    pub package: Option<String>,
    pub statement: String,
}

#[derive(Debug, Clone)]
pub struct KevRow {
    pub cve_id: CveId,
    pub date_added: String,
    pub entry: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct EpssRow {
    pub cve_id: CveId,
    pub epss: f64,
    pub percentile: f64,
}

#[derive(Debug, Clone)]
pub struct CweRow {
    pub id: u32,
    pub name: String,
    pub capec_ids: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct CapecRow {
    pub id: u32,
    /// The pattern as cve-search shows it in a CVE's `capec`.
    pub record: serde_json::Value,
    /// `CWE-n` names.
    pub related_weaknesses: Vec<String>,
}

/// CVE intelligence (records, their match index, KEV, EPSS, CWE, CAPEC, feed state) and the reference data the scanner reads (fingerprint rules, end-of-life products).
#[async_trait]
pub trait Intel: Send + Sync + 'static {
    /// Inserts or replaces records in one transaction; a record never replaces a newer
    /// one (by last-modified). Returns how many were written.
    async fn upsert_cves(&self, cves: &[StoredCve]) -> Result<usize>;

    /// Writes the batches `batches` yields as [`Intel::upsert_cves`] would, `per_commit`
    /// batches to a transaction (a bulk import: pages that several batches change are
    /// written once per transaction, not once per batch). A batch that fails rolls back
    /// the batches of its transaction, so nothing of it is committed; the batches of
    /// earlier transactions stay. Returns how many records were written.
    async fn upsert_cve_batches(
        &self,
        batches: &mut tokio::sync::mpsc::Receiver<Vec<StoredCve>>,
        per_commit: usize,
    ) -> Result<usize> {
        let _ = per_commit;
        let mut written = 0;
        while let Some(batch) = batches.recv().await {
            written += self.upsert_cves(&batch).await?;
        }
        Ok(written)
    }

    /// After a bulk write: folds what the backend logged on the side (SQLite's
    /// write-ahead log) into the database, so that readers and the next writer start
    /// from a compact file.
    async fn settle(&self) -> Result<()> {
        Ok(())
    }

    /// A record, with its KEV entry and EPSS figures when known.
    async fn cve(&self, id: &CveId) -> Result<Option<CveRecord>>;

    /// Records in the order asked for (unknown ids are left out), with KEV and EPSS.
    async fn cves(&self, ids: &[CveId]) -> Result<Vec<CveRecord>>;

    /// The served forms of records, in the order asked for (unknown ids left out).
    async fn served_cves(&self, ids: &[CveId]) -> Result<Vec<ServedCve>>;

    /// The CVEs `query` describes, newest first. Configurations come with the
    /// candidates that need evaluating, or with all when `all_configurations`.
    async fn cve_candidates(&self, query: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>>;

    async fn last_cves(&self, limit: u32) -> Result<Vec<CveRecord>>;

    async fn vendors(&self) -> Result<Vec<String>>;

    async fn products(&self, vendor: &str) -> Result<Vec<String>>;

    /// Replaces the KEV catalogue.
    async fn save_kev(&self, entries: &[KevRow]) -> Result<usize>;

    /// Upserts EPSS figures.
    async fn save_epss(&self, scores: &[EpssRow], score_date: &str) -> Result<usize>;

    async fn save_cwe(&self, weaknesses: &[CweRow]) -> Result<usize>;

    async fn save_capec(&self, patterns: &[CapecRow]) -> Result<usize>;

    /// The attack patterns cve-search lists for each CWE (`CWE-79`): those the
    /// weakness names, else those that name the weakness; by CAPEC id. CWEs without
    /// patterns (and values that are not CWE ids) are left out of the map.
    async fn capec_for_cwes(&self, cwes: &[&str]) -> Result<BTreeMap<String, Vec<serde_json::Value>>>;

    async fn feed_state(&self, feed: &str) -> Result<Option<String>>;

    async fn set_feed_state(&self, feed: &str, value: &str) -> Result<()>;

    /// The oldest `limit` changes of the vulnerability data not yet handled: (sequence,
    /// CVE) for each CVE written and each KEV entry added, changed or removed.
    async fn cve_changes(&self, limit: u32) -> Result<Vec<(i64, model::CveId)>>;

    /// Forgets the changes up to `through` (handled); returns how many.
    async fn forget_cve_changes(&self, through: i64) -> Result<u64>;

    /// Every feed with a sync state, and when that state was last written, by feed.
    async fn feed_ages(&self) -> Result<Vec<(String, time::OffsetDateTime)>>;

    /// Stores imported fingerprint rules `(name, rule JSON)` from `source`, replacing
    /// rules of the same name; returns how many were written.
    async fn save_fingerprints(&self, source: &str, rules: &[(String, String)]) -> Result<usize>;

    /// Every imported fingerprint rule `(name, rule JSON)`, by name.
    async fn fingerprints(&self) -> Result<Vec<(String, String)>>;

    /// Stores endoflife.date products `(name, product JSON)`, replacing same names.
    async fn save_eol_products(&self, products: &[(String, String)]) -> Result<usize>;

    /// Every stored endoflife.date product `(name, product JSON)`, by name.
    async fn eol_products(&self) -> Result<Vec<(String, String)>>;

    /// Saves publishers' statements, each replacing the one with its CVE and key; a
    /// statement saved or changed joins the change log (the feed rematch follows it).
    /// Returns how many were given.
    async fn save_advisories(&self, rows: &[AdvisoryRow]) -> Result<usize>;

    /// Every statement that speaks of the CPE product `vendor`:`product`, by CVE and key.
    async fn advisories_for(&self, vendor: &str, product: &str) -> Result<Vec<AdvisoryRow>>;
}
