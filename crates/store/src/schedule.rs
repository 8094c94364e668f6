//! What the rescan scheduler keeps: each company's cadence and next planned rescan, and
//! the leases of roles one process holds at a time (the scheduler's).

use std::time::Duration;

use async_trait::async_trait;
use model::SocialId;
use time::OffsetDateTime;

use crate::Result;

/// A company as the scheduler sees it ([`Schedule::rescan_candidates`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRow {
    pub company: i64,
    pub social_id: SocialId,
    /// When its latest rating was made, or its last scan could not rate it.
    pub last_scan: Option<OffsetDateTime>,
    /// When the scheduler last queued its rescan.
    pub queued_at: Option<OffsetDateTime>,
    /// When its next rescan is due, as last planned.
    pub next_at: Option<OffsetDateTime>,
    /// Its own cadence (`rampart companies set-cadence`); `None`: the scheduler's.
    pub every: Option<Duration>,
    /// The cadence `next_at` was planned with.
    pub planned_every: Option<Duration>,
    /// Whether a monitor key watches it (a key bound to it or to a parent of it).
    pub watched: bool,
}

impl ScheduleRow {
    /// Never rated, never failed, never queued by the scheduler.
    pub fn never_scanned(&self) -> bool {
        self.last_scan.is_none() && self.queued_at.is_none()
    }
}

/// A plan for one company ([`Schedule::plan_rescans`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RescanPlan {
    pub company: i64,
    /// When its next rescan is due.
    pub next_at: OffsetDateTime,
    /// The cadence that was planned with.
    pub every: Duration,
    /// Set when the scheduler queued a rescan now.
    pub queued_at: Option<OffsetDateTime>,
}

/// The scheduler's reads and writes.
#[async_trait]
pub trait Schedule: Send + Sync + 'static {
    /// Takes the lease `name` for `holder` until `now + ttl` when it is free, lapsed or
    /// `holder`'s already; true when `holder` holds it now.
    async fn hold_lease(&self, name: &str, holder: &str, ttl: Duration, now: OffsetDateTime) -> Result<bool>;

    /// Gives up the lease `name` when `holder` holds it.
    async fn drop_lease(&self, name: &str, holder: &str) -> Result<()>;

    /// Companies whose next rescan is due by `now`, is not planned, or was planned with
    /// a cadence other than theirs (their own, else `default_every`): watched ones first,
    /// then never-scanned ones, then unplanned ones, then by due time; at most `limit`.
    async fn rescan_candidates(
        &self,
        now: OffsetDateTime,
        default_every: Duration,
        limit: u32,
    ) -> Result<Vec<ScheduleRow>>;

    /// Records the plans, in one transaction.
    async fn plan_rescans(&self, plans: &[RescanPlan]) -> Result<()>;

    /// Sets a company's own cadence (`None`: the scheduler's); its next rescan is planned
    /// again at the scheduler's next round.
    async fn set_cadence(&self, company: i64, every: Option<Duration>) -> Result<()>;

    /// A company's own cadence, if it has one.
    async fn cadence(&self, company: i64) -> Result<Option<Duration>>;

    /// The next planned rescans, soonest first, at most `limit`.
    async fn next_rescans(&self, limit: u32) -> Result<Vec<(SocialId, OffsetDateTime)>>;

    /// When each rated company was last rated (its latest rating), oldest first.
    async fn rating_times(&self) -> Result<Vec<OffsetDateTime>>;
}

/// A cadence as stored: whole seconds, at least one.
pub(crate) fn secs(every: Duration) -> i64 {
    i64::try_from(every.as_secs().max(1)).unwrap_or(i64::MAX)
}

/// A stored cadence.
pub(crate) fn every(secs: Option<i64>) -> Option<Duration> {
    secs.and_then(|s| u64::try_from(s).ok()).filter(|s| *s > 0).map(Duration::from_secs)
}
