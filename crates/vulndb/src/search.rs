//! get-cve-from-cpe-id: the CVEs whose configurations apply to a CPE name.
//!
//! The store narrows by vendor, product and version key (exact versions and ranges);
//! every candidate is then evaluated against its full configurations
//! ([`Configuration::applies_to`]). A name without a version (`*`) matches every CVE
//! with a vulnerable entry for the product. Newest first (last-modified).

use model::{Cpe, CveId};
use store::{Store, StoreError};

use crate::matching::{Configuration, explain};
use crate::version::Version;

/// Candidates fetched per round trip.
const BATCH: u32 = 1000;

/// Why a name cannot be searched.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("cpe must name a vendor and a product")]
    Unspecific,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The ids of the CVEs that apply to `cpe`, at most `limit`, newest first.
pub async fn cve_ids_for_cpe(store: &dyn Store, cpe: &Cpe, limit: u32) -> Result<Vec<CveId>, SearchError> {
    Ok(cves_for_cpe(store, cpe, limit).await?.into_iter().map(|(id, _)| id).collect())
}

/// [`cve_ids_for_cpe`] with the reason of each match: the vulnerable configuration entry
/// that covers `cpe` (criteria and version range), or the index entry when the record
/// carries no configurations.
pub async fn cves_for_cpe(store: &dyn Store, cpe: &Cpe, limit: u32) -> Result<Vec<(CveId, String)>, SearchError> {
    let (Some(vendor), Some(product)) = (Cpe::specific(cpe.vendor()), Cpe::specific(cpe.product())) else {
        return Err(SearchError::Unspecific);
    };
    if vendor.contains(['*', '?']) || product.contains(['*', '?']) {
        return Err(SearchError::Unspecific);
    }
    let version = cpe.version();
    let concrete = version != "*" && version != "-" && !version.contains(['*', '?']);
    // The key narrows in SQL only for a concrete version; NA and patterns are decided
    // by evaluation, and so is any query that sets attributes beyond the version.
    let key = concrete.then(|| Version::parse(&Cpe::unquote(version)).key().to_owned());
    let evaluate_all = (!concrete && version != "*") || cpe.attrs()[4..].iter().any(|a| a != "*");
    let part = Cpe::specific(cpe.part());
    let mut out = Vec::new();
    let mut after: Option<(String, CveId)> = None;
    while (out.len() as u32) < limit {
        // Most candidates match: ask for little more than is still wanted.
        let remaining = limit - out.len() as u32;
        let want = remaining.saturating_add(remaining / 8 + 16).min(BATCH);
        let batch =
            store.cve_candidates(part, vendor, product, key.as_deref(), evaluate_all, after.as_ref(), want).await?;
        let done = (batch.len() as u32) < want;
        for c in &batch {
            // Without configurations the index rows have decided already.
            let why = match &c.configurations {
                None => Some(format!("the vulnerable products of {} list {}:{}", c.id, vendor, product)),
                Some(json) => explain(&serde_json::from_str::<Vec<Configuration>>(json).unwrap_or_default(), cpe),
            };
            if let Some(why) = why {
                out.push((c.id.clone(), why));
                if out.len() as u32 >= limit {
                    break;
                }
            }
        }
        match batch.last() {
            Some(last) if !done => after = Some((last.last_modified.clone(), last.id.clone())),
            _ => break,
        }
    }
    Ok(out)
}
