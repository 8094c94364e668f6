//! The built-in sample: fictional companies on `.example` domains and a few real CVE
//! records, used by `rampart demo` and by mock mode. Loaded through the same import
//! path as any operator's file.

use store::Store;

use crate::{ImportError, ImportReport, import_companies, import_cve_records};

pub const COMPANIES: &str = include_str!("../sample/companies.jsonl");
pub const CVES: &str = include_str!("../sample/cves.jsonl");

/// The company mock mode reports on, and a CVE and incident it falls back to.
pub const MOCK_COMPANY: &str = "acme-robotics";
pub const MOCK_CVE: &str = "CVE-2021-44228";
pub const MOCK_INCIDENT: &str = "RP-INC-2024-0001";

/// Loads the sample into `store`.
pub async fn load(store: &dyn Store) -> Result<ImportReport, ImportError> {
    let cves = import_cve_records(store, CVES.as_bytes()).await?;
    let companies = import_companies(store, COMPANIES.as_bytes()).await?;
    Ok(ImportReport { cves_written: cves.cves_written, cves_unchanged: cves.cves_unchanged, ..companies })
}
