//! Events: what a job changed about a company, told apart by comparing what the store
//! held before the job ([`Before::read`]) with what it holds after ([`after`]).
//!
//! A rating that was made for the first time, changed grade or moved by
//! [`model::SCORE_MOVE`] points or more; a critical or high finding that opened (or
//! whose severity rose to high or critical); a finding that closed; a host attributed
//! for the first time; a scan that stopped short or failed. On the first look at a
//! company (nothing known before), its first rating is the one event: what that scan
//! found is not news. Each event names the company, says what changed (a summary line
//! and a data object) and links to the operations that show the evidence. Events are
//! kept once however often a job runs (the store's key: company, kind, subject, time),
//! then a delivery job is queued for each webhook that follows the company.

use std::collections::{BTreeMap, BTreeSet};

use model::{
    Company, EventKind, EventLink, Finding, JobSpec, NewEvent, RiskVector, SCORE_MOVE, ScoreSnapshot, Severity,
};
use serde_json::{Value, json};
use store::{Store, StoreError};
use time::OffsetDateTime;

/// Events of one kind one job records at most (a first scan of a large estate could
/// otherwise attribute thousands of hosts at once); the rest are counted in the last.
pub const MAX_PER_KIND: usize = 100;

/// What the store held about a company before a job.
#[derive(Debug, Clone, Default)]
pub struct Before {
    pub(crate) rating: Option<ScoreSnapshot>,
    pub(crate) open: Vec<Finding>,
    hosts: BTreeSet<String>,
    /// The KEV-listed CVEs among the open findings, read only when a portfolio's alert
    /// rules watch the company (`watched`).
    pub(crate) kev: BTreeSet<String>,
    pub(crate) watched: bool,
}

impl Before {
    pub async fn read(store: &dyn Store, company: i64) -> Result<Before, StoreError> {
        let open = store.open_findings(company).await?;
        let watched = !store.alert_watches(company).await?.is_empty();
        let kev = if watched { store::judged::kev_among(store, &open).await? } else { BTreeSet::new() };
        Ok(Before {
            rating: store.latest_score(company).await?,
            open,
            hosts: store.hosts(company).await?.into_iter().map(|h| h.name).collect(),
            kev,
            watched,
        })
    }

    /// Nothing was known: the company's first look.
    pub(crate) fn first_look(&self) -> bool {
        self.rating.is_none() && self.open.is_empty() && self.hosts.is_empty()
    }
}

/// What identifies a finding across scans.
pub(crate) fn identity(f: &Finding) -> (RiskVector, &str, &str, &str) {
    (f.risk_vector, f.asset.as_str(), f.code.as_str(), store::finding_subject(f))
}

/// The host an asset names (`https://www.acme.test/` → `www.acme.test`).
fn host_of(asset: &str) -> &str {
    let host = asset.split_once("://").map_or(asset, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    host.split(':').next().unwrap_or(host)
}

/// `path?name=value&…` with the values encoded.
fn link(rel: &str, path: &str, query: &[(&str, &str)]) -> EventLink {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in query {
        q.append_pair(k, v);
    }
    EventLink { rel: rel.to_owned(), href: format!("{path}?{}", q.finish()) }
}

fn score_links(social_id: &str) -> Vec<EventLink> {
    vec![
        link("scores", "/underwriter-getcompanyscores", &[("social_id", social_id)]),
        link("score_history", "/underwriter-getcompanyscore-history", &[("social_id", social_id)]),
    ]
}

fn finding_data(f: &Finding) -> Value {
    json!({
        "finding_id": f.id,
        "risk_vector": f.risk_vector.as_str(),
        "asset": f.asset,
        "severity": f.severity.as_str(),
        "code": f.code,
        "title": f.title,
        "evidence": f.evidence,
        "cve": f.cve.as_ref().map(|c| c.as_str()),
        "component": f.component,
    })
}

fn finding_links(social_id: &str, f: &Finding) -> Vec<EventLink> {
    let mut links = vec![link(
        "findings",
        "/monitor-get-subdomain-findings",
        &[("subdomain", host_of(&f.asset)), ("risk_vector_type", f.risk_vector.as_str())],
    )];
    links.extend(score_links(social_id));
    links
}

fn rating_view(r: &ScoreSnapshot) -> Value {
    json!({"score": r.score.as_f64(), "grade": r.grade.as_str()})
}

/// The events between `before` and what the store holds now, after a job that ran at
/// `at` on `company`; `truncated` holds the notes of a scan that stopped short. They
/// are kept, and their deliveries queued.
pub async fn after(
    store: &dyn Store,
    company: &Company,
    before: Before,
    at: OffsetDateTime,
    truncated: Option<&[String]>,
) -> Result<Vec<model::Event>, StoreError> {
    let now = Before::read(store, company.id).await?;
    let whose = Whose { id: company.id, social_id: company.social_id.as_str(), name: &company.company_name };
    let events = changes(whose, &before, &now, at, truncated);
    let kept = announce(store, &events).await?;
    crate::alerts::after_job(store, company.id, &before, &now, at).await?;
    Ok(kept)
}

/// The company events are about.
#[derive(Debug, Clone, Copy)]
pub struct Whose<'a> {
    pub id: i64,
    pub social_id: &'a str,
    pub name: &'a str,
}

/// The events that tell `before` from `now` (pure: [`after`] reads and writes).
pub fn changes(
    company: Whose<'_>,
    before: &Before,
    now: &Before,
    at: OffsetDateTime,
    truncated: Option<&[String]>,
) -> Vec<NewEvent> {
    let sid = company.social_id;
    let name = company.name;
    let event = |kind, subject: String, summary: String, data: Value, links| NewEvent {
        company: company.id,
        kind,
        subject,
        occurred_at: at,
        summary,
        data,
        links,
    };
    let mut out = Vec::new();
    if let Some(notes) = truncated {
        out.push(event(
            EventKind::ScanTruncated,
            String::new(),
            format!("{name}: the scan stopped short ({}); what it did not look at keeps its findings", notes.len()),
            json!({"notes": notes.iter().take(MAX_PER_KIND).collect::<Vec<_>>()}),
            score_links(sid),
        ));
    }
    // The rating: a new one (not the one held before) that is the first, another grade,
    // or a move of SCORE_MOVE points or more.
    if let Some(rating) = &now.rating
        && before.rating.as_ref().is_none_or(|b| b.scanned_at != rating.scanned_at || b.score != rating.score)
    {
        let moved = match &before.rating {
            None => true,
            Some(b) => b.grade != rating.grade || (rating.score.as_f64() - b.score.as_f64()).abs() >= SCORE_MOVE,
        };
        if moved {
            let summary = match &before.rating {
                None => format!("{name} rated {} ({})", rating.grade, rating.score.as_f64()),
                Some(b) => format!(
                    "{name}: rating {} ({}) → {} ({})",
                    b.grade,
                    b.score.as_f64(),
                    rating.grade,
                    rating.score.as_f64()
                ),
            };
            let mut data = rating_view(rating);
            data["previous"] = before.rating.as_ref().map_or(Value::Null, rating_view);
            data["reason"] = rating.reason.as_deref().map_or(Value::Null, |r| Value::String(r.to_owned()));
            data["methodology"] = rating.methodology.as_deref().map_or(Value::Null, |m| Value::String(m.to_owned()));
            if before.first_look() {
                let mut by_severity: BTreeMap<&str, u64> = BTreeMap::new();
                for f in &now.open {
                    *by_severity.entry(f.severity.as_str()).or_default() += 1;
                }
                data["open_findings"] = json!(by_severity);
                data["hosts"] = json!(now.hosts.len());
            }
            out.push(event(EventKind::RatingChanged, String::new(), summary, data, score_links(sid)));
        }
    }
    if before.first_look() {
        return out;
    }
    // Findings that opened as high or critical, or rose to it; findings that closed.
    let was: BTreeMap<_, &Finding> = before.open.iter().map(|f| (identity(f), f)).collect();
    let is: BTreeMap<_, &Finding> = now.open.iter().map(|f| (identity(f), f)).collect();
    let serious = |s: Severity| s >= Severity::High;
    let mut opened = Vec::new();
    for (key, f) in &is {
        let previous = was.get(key).map(|p| p.severity);
        if serious(f.severity) && previous.is_none_or(|p| !serious(p)) {
            let mut data = finding_data(f);
            data["previous_severity"] = previous.map_or(Value::Null, |p| Value::String(p.as_str().to_owned()));
            let summary = match previous {
                None => format!("{name}: {} finding opened: {} on {}", f.severity, f.code, f.asset),
                Some(p) => format!("{name}: {} on {} is now {} (was {p})", f.code, f.asset, f.severity),
            };
            opened.push(event(EventKind::FindingOpened, f.id.to_string(), summary, data, finding_links(sid, f)));
        }
    }
    let mut closed = Vec::new();
    for (key, f) in &was {
        if !is.contains_key(key) {
            let summary = format!("{name}: {} finding closed: {} on {}", f.severity, f.code, f.asset);
            closed.push(event(
                EventKind::FindingClosed,
                f.id.to_string(),
                summary,
                finding_data(f),
                finding_links(sid, f),
            ));
        }
    }
    let mut attributed = Vec::new();
    for host in now.hosts.difference(&before.hosts) {
        attributed.push(event(
            EventKind::AssetAttributed,
            host.clone(),
            format!("{name}: new host {host}"),
            json!({"host": host}),
            vec![link("assets", "/underwriter-getcompanyinfrastructureassets", &[("social_id", sid)])],
        ));
    }
    for mut list in [opened, closed, attributed] {
        if list.len() > MAX_PER_KIND {
            let left = list.len() - MAX_PER_KIND;
            list.truncate(MAX_PER_KIND);
            if let Some(last) = list.last_mut() {
                last.data["more"] = json!(left);
                last.summary.push_str(&format!(" (and {left} more)"));
            }
        }
        out.extend(list);
    }
    out
}

/// A scan of the company that failed for good.
pub async fn scan_failed(
    store: &dyn Store,
    spec: &JobSpec,
    error: &str,
    at: OffsetDateTime,
) -> Result<Vec<model::Event>, StoreError> {
    let Some(company) = store.company_by_social_id(spec.company()).await? else { return Ok(Vec::new()) };
    let shown: String = error.chars().take(500).collect();
    // A full scan that failed for good leaves the kept rating stale: the answers say so
    // (with this reason) until a scan succeeds.
    if matches!(spec, JobSpec::Scan { .. }) {
        store.set_scan_error(company.id, Some(&shown)).await?;
    }
    let event = NewEvent {
        company: company.id,
        kind: EventKind::ScanFailed,
        subject: spec.dedup_key(),
        occurred_at: at,
        summary: format!("{}: the {} failed: {shown}", company.company_name, spec.kind()),
        data: json!({"job": spec.kind(), "error": shown}),
        links: score_links(company.social_id.as_str()),
    };
    announce(store, &[event]).await
}

/// The `rating_stale` event of a company whose rating (at `row.last_scan`) is older than
/// twice its cadence `every` at `now`; its time is the moment it became stale, so the
/// scheduler's every round records it once.
pub fn stale_rating(row: &store::ScheduleRow, every: std::time::Duration, now: OffsetDateTime) -> Option<NewEvent> {
    let rated = row.last_scan?;
    let since = rated + every * 2;
    if since > now {
        return None;
    }
    let at = model::timefmt::rfc3339(rated);
    Some(NewEvent {
        company: row.company,
        kind: EventKind::RatingStale,
        subject: at.clone(),
        occurred_at: since,
        summary: format!(
            "{}: the rating of {at} is stale (older than twice its cadence of {} s, and no scan refreshed it)",
            row.social_id,
            every.as_secs()
        ),
        data: json!({"rated_at": at, "cadence_secs": every.as_secs()}),
        links: score_links(row.social_id.as_str()),
    })
}

/// Keeps `events` and queues a delivery of each new one to every webhook that follows
/// its company and wants its kind.
pub async fn announce(store: &dyn Store, events: &[NewEvent]) -> Result<Vec<model::Event>, StoreError> {
    let kept = store.record_events(events).await?;
    let mut hooks: BTreeMap<i64, Vec<model::Webhook>> = BTreeMap::new();
    for e in &kept {
        crate::metrics::event_recorded(e.kind);
        tracing::info!(company = %e.social_id, kind = %e.kind, summary = %e.summary, "event");
        let following = match hooks.entry(e.company) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(store.webhooks_for(e.company).await?),
        };
        for hook in following.iter().filter(|h| h.wants(e.kind)) {
            let job = JobSpec::Deliver { social_id: e.social_id.clone(), webhook: hook.id, event: e.id };
            store.enqueue(&job).await?;
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{Grade, OffsetDateTimeText, Score};

    fn company() -> Whose<'static> {
        Whose { id: 7, social_id: "acme", name: "Acme" }
    }

    /// A rating older than twice its cadence is a `rating_stale` event (docs/API.md,
    /// "Events and webhooks") once, timed when it became stale (so every later round
    /// records the same event).
    #[test]
    fn a_rating_past_twice_its_cadence_is_a_stale_event_once() {
        let day = std::time::Duration::from_secs(86_400);
        let rated = OffsetDateTime::from_unix_timestamp(1_780_000_000).unwrap();
        let row = store::ScheduleRow {
            company: 7,
            social_id: model::SocialId::parse("acme").unwrap(),
            last_scan: Some(rated),
            queued_at: None,
            next_at: None,
            every: None,
            planned_every: None,
            watched: false,
        };
        assert!(stale_rating(&row, day, rated + day).is_none(), "one cadence old is not stale");
        let e = stale_rating(&row, day, rated + day * 3).unwrap();
        let again = stale_rating(&row, day, rated + day * 4).unwrap();
        assert_eq!((e.kind, e.occurred_at), (EventKind::RatingStale, rated + day * 2));
        assert_eq!((e.subject.as_str(), e.occurred_at), (again.subject.as_str(), again.occurred_at));
        assert_eq!(e.data["cadence_secs"], 86_400);
        assert!(stale_rating(&store::ScheduleRow { last_scan: None, ..row }, day, rated + day * 9).is_none());
    }

    fn rating(score: f64, grade: Grade, at: i64) -> ScoreSnapshot {
        ScoreSnapshot {
            scanned_at: OffsetDateTimeText(OffsetDateTime::from_unix_timestamp(at).unwrap()),
            score: Score::from_f64(score).unwrap(),
            grade,
            components: BTreeMap::new(),
            methodology: Some("1".into()),
            notes: vec![],
            reason: Some("scan".into()),
            quick: false,
        }
    }

    fn finding(id: i64, code: &str, severity: Severity) -> Finding {
        Finding {
            id,
            risk_vector: RiskVector::Dmarc,
            asset: "acme.test".into(),
            severity,
            code: code.into(),
            title: code.into(),
            evidence: String::new(),
            remediation: String::new(),
            references: vec![],
            cve: None,
            component: None,
            first_seen: OffsetDateTimeText(OffsetDateTime::UNIX_EPOCH),
            last_seen: OffsetDateTimeText(OffsetDateTime::UNIX_EPOCH),
            disputed: false,
            no_weight: false,
        }
    }

    fn kinds(events: &[NewEvent]) -> Vec<(EventKind, String)> {
        events.iter().map(|e| (e.kind, e.subject.clone())).collect()
    }

    #[test]
    fn the_first_look_is_one_rating_event() {
        let now = Before {
            rating: Some(rating(91.0, Grade::A, 100)),
            open: vec![finding(1, "dmarc.missing", Severity::High)],
            hosts: ["www.acme.test".to_owned()].into(),
            ..Default::default()
        };
        let got = changes(company(), &Before::default(), &now, OffsetDateTime::UNIX_EPOCH, None);
        assert_eq!(kinds(&got), vec![(EventKind::RatingChanged, String::new())]);
        assert_eq!(got[0].data["previous"], Value::Null);
        assert_eq!(got[0].data["open_findings"]["high"], 1);
        assert_eq!(got[0].data["hosts"], 1);
        assert_eq!(got[0].links[0].href, "/underwriter-getcompanyscores?social_id=acme");
    }

    #[test]
    fn findings_assets_and_ratings_that_moved_are_events() {
        let before = Before {
            rating: Some(rating(91.0, Grade::A, 100)),
            open: vec![
                finding(1, "dmarc.policy_none", Severity::Medium),
                finding(2, "dmarc.no_rua", Severity::Info),
                finding(3, "dmarc.partial_pct", Severity::Low),
            ],
            hosts: ["www.acme.test".to_owned()].into(),
            ..Default::default()
        };
        let mut raised = finding(1, "dmarc.policy_none", Severity::High);
        raised.asset = "https://www.acme.test:8443/x".into();
        let mut before = before;
        before.open[0].asset = raised.asset.clone();
        let now = Before {
            rating: Some(rating(84.5, Grade::B, 200)),
            open: vec![
                raised,
                finding(3, "dmarc.partial_pct", Severity::Low),
                finding(4, "dmarc.missing", Severity::Critical),
            ],
            hosts: ["www.acme.test".to_owned(), "api.acme.test".to_owned()].into(),
            ..Default::default()
        };
        let notes = vec!["acme.test: the deadline was reached".to_owned()];
        let got = changes(company(), &before, &now, OffsetDateTime::UNIX_EPOCH, Some(&notes));
        let mut k = kinds(&got);
        k.sort();
        assert_eq!(
            k,
            vec![
                (EventKind::RatingChanged, String::new()),
                (EventKind::FindingOpened, "1".into()),
                (EventKind::FindingOpened, "4".into()),
                (EventKind::FindingClosed, "2".into()),
                (EventKind::AssetAttributed, "api.acme.test".into()),
                (EventKind::ScanTruncated, String::new()),
            ]
        );
        let rated = got.iter().find(|e| e.kind == EventKind::RatingChanged).unwrap();
        assert_eq!(rated.data["previous"]["grade"], "A");
        assert_eq!(rated.data["grade"], "B");
        let raised = got.iter().find(|e| e.subject == "1").unwrap();
        assert_eq!(raised.data["previous_severity"], "medium");
        assert_eq!(
            raised.links[0].href,
            "/monitor-get-subdomain-findings?subdomain=www.acme.test&risk_vector_type=dmarc"
        );
    }

    #[test]
    fn a_small_move_of_the_same_grade_is_not_an_event_and_lists_are_capped() {
        let before = Before {
            rating: Some(rating(91.0, Grade::A, 100)),
            open: vec![],
            hosts: ["a".into()].into(),
            ..Default::default()
        };
        let hosts: BTreeSet<String> = (0..250).map(|i| format!("h{i:03}.acme.test")).collect();
        let now = Before { rating: Some(rating(87.0, Grade::A, 200)), open: vec![], hosts, ..Default::default() };
        let got = changes(company(), &before, &now, OffsetDateTime::UNIX_EPOCH, None);
        assert!(got.iter().all(|e| e.kind == EventKind::AssetAttributed));
        assert_eq!(got.len(), MAX_PER_KIND);
        assert_eq!(got.last().unwrap().data["more"], 150);
        // The rating held before, read again: nothing moved.
        let same =
            Before { rating: before.rating.clone(), open: vec![], hosts: before.hosts.clone(), ..Default::default() };
        assert!(changes(company(), &before, &same, OffsetDateTime::UNIX_EPOCH, None).is_empty());
    }
}
