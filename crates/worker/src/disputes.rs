//! What disputes do to scans and ratings: a rescan decides the `fixed` disputes it
//! covers; an operator's decision re-rates the company with the reason; a company's
//! footprint changes become what its scans include and leave out.

use model::{Company, Dispute, DisputeReason, DisputeState, Page, RiskVector, ScoreSnapshot};
use store::{Decision, Store, StoreError};
use time::OffsetDateTime;

use crate::{events, rate};

/// Pages of open disputes read at most (10 each) when a rescan looks for those it decides.
const MAX_PAGES: u64 = 100;

/// The open disputes of a company, at most [`MAX_PAGES`] pages.
pub async fn open_disputes(store: &dyn Store, company: i64) -> Result<Vec<Dispute>, StoreError> {
    let mut out = Vec::new();
    for n in 1..=MAX_PAGES {
        let page = Page::parse(Some(&n.to_string())).unwrap_or(Page::FIRST);
        let got = store.disputes(Some(&[company]), Some(DisputeState::Open), page).await?;
        let done =
            out.len() + got.items.len() >= usize::try_from(got.total).unwrap_or(usize::MAX) || got.items.is_empty();
        out.extend(got.items);
        if done {
            break;
        }
    }
    Ok(out)
}

/// Decides the open `fixed` disputes of the findings a rescan of `vector` on `host`
/// covered: a finding the rescan closed is accepted, one it saw again (its `last_seen`
/// is the rescan's time) is rejected with what it saw; a finding the rescan did not
/// look at (a truncated rescan) stays disputed. Returns what was decided, as the
/// rating's reason says it.
pub async fn settle_fixed(
    store: &dyn Store,
    company: i64,
    vector: RiskVector,
    host: &str,
    at: OffsetDateTime,
) -> Result<Vec<String>, StoreError> {
    let mut said = Vec::new();
    let when = model::timefmt::rfc3339(at);
    for d in open_disputes(store, company).await? {
        let (Some(fid), DisputeReason::Fixed) = (d.finding_id, d.reason) else { continue };
        if d.risk_vector != Some(vector) || !model::asset_under(&d.asset, host) {
            continue;
        }
        let Some(stored) = store.finding_by_id(fid).await? else { continue };
        let what = format!("{} on {}", stored.finding.code, stored.finding.asset);
        let (accept, note) = if stored.closed_at.is_some() {
            (true, format!("the rescan at {when} no longer sees {what}"))
        } else if stored.finding.last_seen.0.unix_timestamp() == at.unix_timestamp() {
            (false, format!("the rescan at {when} still sees {what}: {}", stored.finding.evidence))
        } else {
            continue;
        };
        let decision = Decision { accept, note: &note, by: "rescan", at };
        if store.decide_dispute(d.id, &decision).await?.is_some() {
            said.push(format!(
                "dispute {} ({}) {}: {note}",
                d.id,
                d.reason,
                if accept { "accepted" } else { "rejected" }
            ));
        }
    }
    Ok(said)
}

/// Re-rates `company` after a dispute was decided (over the assets of its last computed
/// rating; an imported rating is left alone), the reason saying which dispute and how;
/// announces what changed. Returns the new rating.
pub async fn rerate_after(
    store: &dyn Store,
    company: &Company,
    dispute: &Dispute,
    at: OffsetDateTime,
) -> Result<Option<ScoreSnapshot>, StoreError> {
    let Some(last) = store.latest_score(company.id).await?.filter(|s| s.methodology.is_some()) else {
        return Ok(None);
    };
    let before = events::Before::read(store, company.id).await?;
    let reason = format!(
        "dispute {} ({}) {} by {}{}",
        dispute.id,
        dispute.reason,
        dispute.state,
        dispute.decided_by.as_deref().unwrap_or("an operator"),
        dispute.note.as_deref().filter(|n| !n.is_empty()).map(|n| format!(": {n}")).unwrap_or_default()
    );
    let basis = rate::Basis { reason: Some(reason), ..rate::basis_of(&last) };
    let website = model::website_host(&company.website);
    // A rating a second after the last one at least: each decision is its own entry.
    let at = at.max(last.scanned_at.0 + time::Duration::seconds(1));
    let rated = rate::rate(store, company.id, website.as_deref(), &basis, at).await?;
    events::after(store, company, before, at, None).await?;
    Ok(rated)
}

/// What a company's scans take from its footprint changes: the names and addresses it
/// added (with who, when and why), and what accepted disputes removed. An asset added
/// and later removed stays out.
pub fn footprint_of(changes: &[model::FootprintChange]) -> scanner::gather::Footprint {
    let mut footprint = scanner::gather::Footprint::default();
    for c in changes {
        let Some(asset) = c.parsed() else { continue };
        if c.change == "removed" {
            footprint.excluded.push(asset);
        } else {
            let date = c.at.0.date();
            footprint.claimed.push((asset, format!("added by the company ({}) on {date}: {}", c.by, c.reason)));
        }
    }
    let excluded = footprint.excluded.clone();
    footprint.claimed.retain(|(a, _)| !excluded.iter().any(|x| x.covers(&a.to_string())));
    footprint
}

/// Is `asset` (a finding's, a host's) removed from the footprint?
pub fn excluded(footprint: &scanner::gather::Footprint, asset: &str) -> bool {
    footprint.excluded.iter().any(|x| x.covers(asset))
}
