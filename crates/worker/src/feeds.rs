//! The feeds keep the ratings current without a rescan.
//!
//! Every write of the vulnerability data that can change a finding (a CVE added or
//! changed, a KEV entry added, changed or removed) leaves its CVE in the store's change
//! log (`Intel::cve_changes`, filled by triggers whoever writes: `rampart sync`, an
//! import, the scheduled sync below). [`rematch`] takes the log in batches: the
//! companies whose detected software names a product of a changed CVE, or whose open
//! findings name one, have their stored detections (those of their last full scan)
//! matched again — only they, and nothing is scanned — so the `vulnerabilities`
//! findings of the changed CVEs open, change severity (a KEV entry makes one critical)
//! and close (the others stay as the scans left them); the components'
//! CVE lists follow, and each company is re-rated over its last rating's basis with the
//! reason `feed update`. `certificate_cve` findings are verdicts of the TLS probe (a
//! protocol test names its CVE), not matches: a feed does not open or close them, but a
//! KEV entry for their CVE re-rates their company (the KEV cap).
//!
//! [`Maintainer`] runs in a worker: under the store's `feeds` lease (one process at a
//! time), every few seconds it matches what changed, and once per `--sync-every` it
//! runs `rampart sync` for the configured feeds first.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use model::{CveId, RiskVector};
use scanner::software::{Eol, Software};
use store::{ScanScope, Store};
use time::OffsetDateTime;

use crate::{JobContexts, JobError, rate, software};

/// The lease the maintaining process holds.
pub const LEASE: &str = "feeds";
/// The feed-state key of the last scheduled sync (its start, RFC 3339).
pub const SYNC_RUN: &str = "sync:run";
/// Changes taken per batch.
const BATCH: u32 = 20_000;

/// What one [`rematch`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rematch {
    /// Change-log rows handled.
    pub changes: usize,
    /// Companies matched again.
    pub companies: usize,
    /// Findings opened and closed.
    pub opened: u32,
    pub closed: u32,
    /// Companies re-rated.
    pub rerated: usize,
}

/// The products (vendor, product) the detections' CPE names name: what
/// `Assets::companies_affected_by` finds a company by.
pub fn products(detected: &[Software]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = detected
        .iter()
        .flat_map(|s| s.cpes.iter())
        .filter_map(|n| model::Cpe::parse(n).ok())
        .map(|c| (c.vendor().to_owned(), c.product().to_owned()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Handles every change in the log: matches the affected companies again, re-rates
/// them, and forgets the changes.
pub async fn rematch(store: &dyn Store, eol: Option<&Eol>, now: OffsetDateTime) -> Result<Rematch, JobError> {
    let mut done = Rematch::default();
    loop {
        let changes = store.cve_changes(BATCH).await?;
        let Some(&(through, _)) = changes.last() else { break };
        done.changes += changes.len();
        let changed: BTreeSet<CveId> = changes.into_iter().map(|(_, id)| id).collect();
        let ids: Vec<CveId> = changed.iter().cloned().collect();
        for (company, social_id) in store.companies_affected_by(&ids).await? {
            if let Some((opened, closed, rerated)) =
                rematch_company(store, eol, company, &social_id, &changed, now).await?
            {
                done.companies += 1;
                done.opened += opened;
                done.closed += closed;
                done.rerated += usize::from(rerated);
            }
        }
        store.forget_cve_changes(through).await?;
    }
    Ok(done)
}

/// Matches one company's stored detections again (when it has some) and re-rates it:
/// (opened, closed, re-rated). A company concerned only through an open finding that
/// names a changed CVE (a `certificate_cve` verdict whose CVE KEV now lists, say) is
/// re-rated alone: the KEV cap follows the catalogue.
async fn rematch_company(
    store: &dyn Store,
    eol: Option<&Eol>,
    company: i64,
    social_id: &model::SocialId,
    changed: &BTreeSet<CveId>,
    now: OffsetDateTime,
) -> Result<Option<(u32, u32, bool)>, JobError> {
    let mut outcome = store::ScanOutcome::default();
    let mut checks = None;
    let Some(found_company) = store.company_by_social_id(social_id).await? else { return Ok(None) };
    let before = crate::events::Before::read(store, company).await?;
    if let Some(text) = store.detected_software(company).await? {
        let detected: Vec<Software> = serde_json::from_str(&text)
            .map_err(|e| JobError::Payload(format!("the detected software of {social_id} does not read: {e}")))?;
        let inventory = software::inventory(store, &detected, eol, now).await?;
        store.set_component_cves(company, &inventory.components).await?;
        let vectors = [RiskVector::Vulnerabilities];
        let scope =
            ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
        // Only the changed CVEs are judged again: their findings follow this match (open,
        // change, close); every other open finding stays as the scans left it (a scan
        // cut short kept findings it could not look at again, and a feed says nothing
        // about them).
        let of_changed = |cve: &Option<CveId>| cve.as_ref().is_some_and(|c| changed.contains(c));
        let mut found: Vec<model::Finding> =
            crate::to_findings(inventory.findings, now).into_iter().filter(|f| of_changed(&f.cve)).collect();
        found.extend(
            store
                .open_findings(company)
                .await?
                .into_iter()
                .filter(|f| f.risk_vector == RiskVector::Vulnerabilities && !of_changed(&f.cve)),
        );
        outcome = store.record_scan(company, scope, &found, now).await?;
        checks = Some(model::ComponentChecks::of(&inventory.checks, RiskVector::Vulnerabilities));
    }
    // Re-rated over the last computed rating's basis (an imported one is left alone),
    // the vulnerabilities checks replaced by this match's.
    let Some(last) = store.latest_score(company).await?.filter(|s| s.methodology.is_some()) else {
        crate::events::after(store, &found_company, before, now, None).await?;
        return Ok(Some((outcome.opened, outcome.closed, false)));
    };
    let mut basis = rate::basis_of(&last);
    basis.reason = Some(model::RATED_BY_FEED_UPDATE.to_owned());
    match checks {
        Some(Some(checks)) => {
            basis.checks.insert(RiskVector::Vulnerabilities, checks);
        }
        Some(None) => {
            basis.checks.remove(&RiskVector::Vulnerabilities);
        }
        None => {}
    }
    let website = model::website_host(&found_company.website);
    let rated = rate::rate(store, company, website.as_deref(), &basis, now).await?.is_some();
    crate::events::after(store, &found_company, before, now, None).await?;
    tracing::info!(company = %social_id, opened = outcome.opened, closed = outcome.closed, "matched again after a feed update");
    Ok(Some((outcome.opened, outcome.closed, rated)))
}

/// How the feeds are kept.
#[derive(Debug, Clone)]
pub struct FeedsConfig {
    /// How often `rampart sync` runs (`None`: never here; changes written by others are
    /// still matched).
    pub sync_every: Option<Duration>,
    /// What the scheduled sync fetches, and from where.
    pub sync: sync::SyncOptions,
    /// Time between rounds.
    pub tick: Duration,
    /// Who holds the lease: unique per process.
    pub holder: String,
}

impl FeedsConfig {
    pub fn new(sync_every: Option<Duration>, sync: sync::SyncOptions, name: &str) -> FeedsConfig {
        FeedsConfig { sync_every, sync, tick: Duration::from_secs(5), holder: crate::lease_holder(name, LEASE) }
    }
}

/// Keeps the feeds and the findings that follow them (see the module's text).
pub struct Maintainer {
    store: Arc<dyn Store>,
    contexts: Arc<JobContexts>,
    config: FeedsConfig,
}

impl Maintainer {
    pub fn new(store: Arc<dyn Store>, contexts: Arc<JobContexts>, config: FeedsConfig) -> Maintainer {
        Maintainer { store, contexts, config }
    }

    /// Whether the scheduled sync is due at `now`.
    async fn sync_due(&self, every: Duration, now: OffsetDateTime) -> Result<bool, store::StoreError> {
        let last = self.store.feed_state(SYNC_RUN).await?;
        let last = last.as_deref().and_then(model::timefmt::parse_datetime);
        Ok(last.is_none_or(|t| now - t >= every))
    }

    /// One round at `now`: the sync when due, then the matching of what changed.
    pub async fn round(&self, now: OffsetDateTime) -> Result<Option<Rematch>, JobError> {
        let ttl = (self.config.tick * 6).max(Duration::from_secs(30));
        if !self.store.hold_lease(LEASE, &self.config.holder, ttl, now).await? {
            return Ok(None);
        }
        if let Some(every) = self.config.sync_every
            && self.sync_due(every, now).await?
        {
            // Recorded first: a sync that fails (or a process that dies in it) is tried
            // again next period, not every round.
            self.store.set_feed_state(SYNC_RUN, &model::timefmt::rfc3339(now)).await?;
            // The sync may take long: the lease is renewed while it runs.
            let options = self.config.sync.clone();
            let sync = sync::sync(&*self.store, &options);
            tokio::pin!(sync);
            let report = loop {
                tokio::select! {
                    r = &mut sync => break r,
                    () = tokio::time::sleep(ttl / 3) => {
                        let at = OffsetDateTime::now_utc();
                        if let Err(e) = self.store.hold_lease(LEASE, &self.config.holder, ttl, at).await {
                            tracing::warn!(error = %e, "renewing the feeds lease failed");
                        }
                    }
                }
            };
            match report {
                Ok(r) => tracing::info!(report = %r, "scheduled sync done"),
                Err(e) => tracing::warn!(error = %e, "scheduled sync incomplete"),
            }
        }
        let ctx = self.contexts.for_job(&*self.store, now).await?;
        let done = rematch(&*self.store, ctx.eol.as_deref(), now).await?;
        if done.changes > 0 {
            tracing::info!(
                changes = done.changes,
                companies = done.companies,
                opened = done.opened,
                closed = done.closed,
                rerated = done.rerated,
                "findings matched again after feed changes"
            );
        }
        Ok(Some(done))
    }

    /// Rounds every tick until `shutdown`, then gives up the lease.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let round = self.round(OffsetDateTime::now_utc());
            tokio::select! {
                () = &mut shutdown => break,
                r = round => if let Err(e) = r {
                    tracing::warn!(error = %e, "a feeds round failed; trying again");
                },
            }
            tokio::select! {
                () = &mut shutdown => break,
                () = tokio::time::sleep(self.config.tick) => {}
            }
        }
        if let Err(e) = self.store.drop_lease(LEASE, &self.config.holder).await {
            tracing::warn!(error = %e, "giving up the feeds lease failed; it lapses");
        }
    }
}
