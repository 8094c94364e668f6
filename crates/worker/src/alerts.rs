//! Alerts: after a job, each portfolio whose alert rules watch the company raises the
//! rules its change meets (`rating::alerts`), each explained by the rating change
//! (`rating::change::explain`); the scheduler's stale ratings raise `rating_stale`.
//! Kept once per portfolio, company, rule, subject and moment however often a job runs.

use model::alerts::AlertRules;
use store::{AlertWatch, NewAlert, Store, StoreError};
use time::OffsetDateTime;

use crate::events::{Before, identity};

/// The alerts the change from `before` to `now` (a job on `company` at `at`) raises.
pub async fn after_job(
    store: &dyn Store,
    company: i64,
    before: &Before,
    now: &Before,
    at: OffsetDateTime,
) -> Result<u64, StoreError> {
    if !before.watched && !now.watched {
        return Ok(0);
    }
    let watches = store.alert_watches(company).await?;
    if watches.is_empty() {
        return Ok(0);
    }
    // A first look's findings are not news (as for events): only its rating is.
    let (mut opened, mut closed) = (Vec::new(), Vec::new());
    if !before.first_look() {
        let was: std::collections::BTreeSet<_> = before.open.iter().map(identity).collect();
        let is: std::collections::BTreeSet<_> = now.open.iter().map(identity).collect();
        opened = now.open.iter().filter(|f| !was.contains(&identity(f))).cloned().collect();
        closed = before.open.iter().filter(|f| !is.contains(&identity(f))).cloned().collect();
    }
    opened.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.id.cmp(&b.id)));
    closed.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.id.cmp(&b.id)));
    let new_kev: Vec<String> =
        if before.first_look() { Vec::new() } else { now.kev.difference(&before.kev).cloned().collect() };
    let side = |r: &model::ScoreSnapshot| (r.score, r.grade);
    // The rating "after" is a new one only: the same rating read twice raised nothing.
    let fresh = now.rating.as_ref().filter(|r| before.rating.as_ref().is_none_or(|b| b.scanned_at != r.scanned_at));
    let seen = rating::alerts::Observed {
        before: before.rating.as_ref().map(side),
        after: fresh.map(side),
        opened: &opened,
        new_kev: &new_kev,
        stale: false,
    };
    let explanation = match &now.rating {
        Some(r) => rating::change::explain(
            before.rating.as_ref().map(|b| rating::change::Side { score: b.score, grade: b.grade }),
            rating::change::Side { score: r.score, grade: r.grade },
            r.reason.as_deref(),
            &opened,
            &closed,
        ),
        None => String::new(),
    };
    raise(store, company, &watches, &seen, &explanation, at).await
}

/// The `rating_stale` alerts of the stale-rating events just kept.
pub async fn stale(store: &dyn Store, events: &[model::Event]) -> Result<u64, StoreError> {
    let mut n = 0;
    for e in events.iter().filter(|e| e.kind == model::EventKind::RatingStale) {
        let watches = store.alert_watches(e.company).await?;
        let seen = rating::alerts::Observed { before: None, after: None, opened: &[], new_kev: &[], stale: true };
        n += raise(store, e.company, &watches, &seen, &e.summary, e.occurred_at).await?;
    }
    Ok(n)
}

async fn raise(
    store: &dyn Store,
    company: i64,
    watches: &[AlertWatch],
    seen: &rating::alerts::Observed<'_>,
    explanation: &str,
    at: OffsetDateTime,
) -> Result<u64, StoreError> {
    let mut alerts = Vec::new();
    for w in watches {
        // Rules are parsed before they are kept; a document that no longer parses (a
        // kind since retired) raises nothing rather than failing the job.
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&w.document) else { continue };
        let Ok(rules) = AlertRules::parse(&doc) else {
            tracing::warn!(portfolio = w.portfolio, "alert rules that no longer parse are skipped");
            continue;
        };
        for r in rating::alerts::raised(&rules, w.tier, seen) {
            alerts.push(NewAlert {
                org: w.org,
                portfolio: w.portfolio,
                company,
                rule_id: r.rule_id,
                kind: r.kind.to_owned(),
                subject: r.subject,
                summary: r.summary,
                explanation: explanation.to_owned(),
                created_at: at,
            });
        }
    }
    if alerts.is_empty() {
        return Ok(0);
    }
    let n = store.record_alerts(&alerts).await?;
    if n > 0 {
        tracing::info!(company, alerts = n, "alerts raised");
    }
    Ok(n)
}
