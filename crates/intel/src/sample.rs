//! The built-in sample: fictional companies on `.example` domains, used by
//! `rampart demo` and by mock mode. Loaded through the same import path as any
//! operator's file. (The sample CVE records live in `vulndb`.)

use store::Store;

use crate::{ImportError, ImportReport, import_companies};

pub const COMPANIES: &str = include_str!("../sample/companies.jsonl");

/// The company mock mode reports on, and an incident it falls back to.
pub const MOCK_COMPANY: &str = "acme-robotics";
pub const MOCK_INCIDENT: &str = "RP-INC-2024-0001";

/// Loads the sample companies into `store`.
pub async fn load(store: &dyn Store) -> Result<ImportReport, ImportError> {
    import_companies(store, COMPANIES.as_bytes()).await
}
