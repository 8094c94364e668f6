//! get-cve-from-cpe-id: the CVEs whose configurations apply to a CPE name.
//!
//! The store narrows by vendor, product and version key (exact versions and ranges);
//! every candidate is then evaluated against its full configurations
//! ([`Configuration::applies_to`]). A name without a version (`*`) matches every CVE
//! with a vulnerable entry for the product. Newest first (last-modified).

use model::{Cpe, CveId};
use store::cve::{CandidateQuery, CveCandidate, ServedCve};
use store::{Store, StoreError};

use crate::matching::{Configuration, Node, Probe, cve_applies_to, cve_conditions, explain};
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
    let probe = Probe::new(cpe);
    Ok(walk(store, cpe, limit, false, applies(&probe)).await?.into_iter().map(|(c, ())| c.id).collect())
}

/// [`cve_ids_for_cpe`] with each record's served form ([`store::ServedCve`]), read in the
/// same queries as the candidates: the records of a get-cve-from-cpe-id answer. Each
/// comes with the conditions under which it holds (the other nodes of an AND
/// configuration, described; empty when it holds for the name alone).
pub async fn served_for_cpe(
    store: &dyn Store,
    cpe: &Cpe,
    limit: u32,
) -> Result<Vec<(ServedCve, Vec<String>)>, SearchError> {
    let probe = Probe::new(cpe);
    let found = walk(store, cpe, limit, true, |_, configurations| match configurations {
        None => Some(Vec::new()),
        Some(c) => cve_conditions(c, &probe).map(|nodes| nodes.iter().map(|n| n.describe()).collect()),
    })
    .await?;
    Ok(found.into_iter().filter_map(|(c, conditions)| c.served.map(|s| (s, conditions))).collect())
}

/// A CVE that applies to a name: why (the covering entry), whether that entry bounds
/// the versions it covers ([`crate::matching::CpeMatch::bounded_for`]), and the
/// configuration nodes that must hold besides (the platform; empty when the name alone
/// is enough).
#[derive(Debug, Clone)]
pub struct CveMatch {
    pub id: CveId,
    pub why: String,
    pub bounded: bool,
    pub conditions: Vec<Node>,
}

/// The decision of [`walk`] when only whether a candidate applies matters.
fn applies<'a>(probe: &'a Probe<'_>) -> impl FnMut(&CveCandidate, Option<&[Configuration]>) -> Option<()> + 'a {
    |_, configurations| configurations.is_none_or(|c| cve_applies_to(c, probe)).then_some(())
}

/// [`cve_ids_for_cpe`] with the reason of each match: the vulnerable configuration entry
/// that covers `cpe` (criteria and version range) and whether it is bounded, or the
/// index entry when the record carries no configurations (a record imported from a
/// cve-search dump, whose vulnerable products name versions: taken as bounded); and the
/// conditions it holds under. Every candidate's configurations are evaluated: what a
/// company is charged with rests on the entry that covers its version.
pub async fn cves_for_cpe(store: &dyn Store, cpe: &Cpe, limit: u32) -> Result<Vec<CveMatch>, SearchError> {
    let (vendor, product) = (cpe.vendor(), cpe.product());
    let probe = Probe::new(cpe);
    let found = walk_with(store, cpe, limit, false, true, |c, configurations| match configurations {
        None => Some((format!("the vulnerable products of {} list {vendor}:{product}", c.id), true, Vec::new())),
        Some(configurations) => {
            let conditions = cve_conditions(configurations, &probe)?.into_iter().cloned().collect();
            let (why, bounded) = explain(configurations, &probe)?;
            Some((why, bounded, conditions))
        }
    })
    .await?;
    Ok(found
        .into_iter()
        .map(|(c, (why, bounded, conditions))| CveMatch { id: c.id, why, bounded, conditions })
        .collect())
}

/// The candidates that apply to `cpe`, at most `limit`, newest first, each with what
/// `decide` makes of it: it is given the candidate and its configurations (`None` when
/// the index rows have decided already) and returns `None` for a candidate that does
/// not apply. With `served`, each candidate comes with its served form.
async fn walk<T>(
    store: &dyn Store,
    cpe: &Cpe,
    limit: u32,
    served: bool,
    decide: impl FnMut(&CveCandidate, Option<&[Configuration]>) -> Option<T>,
) -> Result<Vec<(CveCandidate, T)>, SearchError> {
    walk_with(store, cpe, limit, served, false, decide).await
}

/// [`walk`], with every candidate's configurations read and given to `decide` when
/// `configurations` is set (not only where the index rows cannot decide).
async fn walk_with<T>(
    store: &dyn Store,
    cpe: &Cpe,
    limit: u32,
    served: bool,
    configurations: bool,
    mut decide: impl FnMut(&CveCandidate, Option<&[Configuration]>) -> Option<T>,
) -> Result<Vec<(CveCandidate, T)>, SearchError> {
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
        let query = CandidateQuery {
            part,
            vendor,
            product,
            version_key: key.as_deref(),
            all_configurations: evaluate_all || configurations,
            after: after.as_ref(),
            batch: want,
            served,
        };
        let batch = store.cve_candidates(&query).await?;
        let done = (batch.len() as u32) < want;
        let next = batch.last().map(|last| (last.last_modified.to_string(), last.id.clone()));
        for c in batch {
            let decided = match &c.configurations {
                None => decide(&c, None),
                Some(json) => {
                    let configurations = serde_json::from_str::<Vec<Configuration>>(json).unwrap_or_default();
                    decide(&c, Some(&configurations))
                }
            };
            if let Some(d) = decided {
                out.push((c, d));
                if out.len() as u32 >= limit {
                    break;
                }
            }
        }
        match next {
            Some(next) if !done => after = Some(next),
            _ => break,
        }
    }
    Ok(out)
}
