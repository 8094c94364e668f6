//! What a company's rating judges, read from the store: its open findings less those on a
//! key's unproven claims, and the KEV-listed CVEs among them. The worker rates from this
//! and the API plans from it, so both judge the same findings.

use std::collections::BTreeSet;

use model::{CveId, Finding};

use crate::{Result, Store};

/// The CVEs of `findings` that CISA KEV lists (exploited in the wild).
pub async fn kev_among(store: &dyn Store, findings: &[Finding]) -> Result<BTreeSet<String>> {
    let cves: Vec<CveId> = findings.iter().filter_map(|f| f.cve.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    if cves.is_empty() {
        return Ok(BTreeSet::new());
    }
    Ok(store.served_cves(&cves).await?.into_iter().filter(|c| c.kev.is_some()).map(|c| c.id.to_string()).collect())
}

/// The company's domains that are a key's unverified claims, when it also holds a
/// verified one (a company known by claims alone is rated on them, and not shown outside
/// its tree: docs/API.md, "Domain ownership").
pub async fn unproven_claims(store: &dyn Store, company: i64) -> Result<Vec<String>> {
    Ok(crate::disputes::unproven(&store.domain_claims(company).await?))
}

/// The findings a rating of the company judges, and the KEV-listed CVEs among them:
/// hosts a key claims but has not proved can neither improve nor worsen a grade.
pub async fn rated_findings(store: &dyn Store, company: i64) -> Result<(Vec<Finding>, BTreeSet<String>)> {
    let mut findings = store.open_findings(company).await?;
    let unproven = unproven_claims(store, company).await?;
    findings.retain(|f| !unproven.iter().any(|d| crate::asset_under(&f.asset, d)));
    let kev = kev_among(store, &findings).await?;
    Ok((findings, kev))
}
