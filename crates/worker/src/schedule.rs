//! Scheduled rescans: every company's rating is refreshed once per cadence without
//! anyone asking.
//!
//! Each company has its place in the period, its *slot*: a phase from its row id
//! (Fibonacci hashing, so companies created one after another land far apart and the
//! slots of many companies spread evenly over the period) plus every multiple of the
//! cadence. A company is queued at its first slot after its last refresh plus half a
//! cadence: in the steady state exactly once per cadence, at its slot, so 10,000
//! companies on a daily cadence start about one every nine seconds rather than all at
//! midnight. The last refresh is when the scheduler last queued it, else (before its
//! first scheduled rescan) when it was last rated or its scan failed; a company never
//! scanned is queued at once.
//!
//! One process schedules at a time: the holder of the store's `scheduler` lease (a
//! row, renewed every round and taken over when it lapses, on both backends), so any
//! number of workers may run the scheduler. A round takes the candidates in order —
//! companies a monitor key watches first, never-scanned ones next, then the longest
//! due — and queues at most what the workers drain: the background work waiting is
//! kept under twice what was drained since the last round (at least twice this
//! worker's concurrency). Jobs are queued at background priority (below work someone
//! waits on) and de-duplicated by the queue, so no company is scanned twice at once.
//! Rounds come every sixtieth of the cadence (one to thirty seconds), every second
//! while due companies wait for room.

use std::sync::Arc;
use std::time::Duration;

use model::JobSpec;
use store::{RescanPlan, ScheduleRow, Store};
use time::OffsetDateTime;

/// The lease the scheduling process holds.
pub const LEASE: &str = "scheduler";
/// Candidates read per round.
const CANDIDATES: u32 = 500;

/// How the scheduler runs.
#[derive(Debug, Clone)]
pub struct ScheduleConfig {
    /// The cadence of companies without one of their own (`--rescan-every`).
    pub every: Duration,
    /// Time between rounds ([`ScheduleConfig::tick_for`]).
    pub tick: Duration,
    /// The least background work kept waiting for the workers (twice their
    /// concurrency): more is queued only as the workers drain it.
    pub floor: u64,
    /// Who holds the lease: unique per process.
    pub holder: String,
}

impl ScheduleConfig {
    pub fn new(every: Duration, concurrency: usize, name: &str) -> ScheduleConfig {
        ScheduleConfig {
            every,
            tick: ScheduleConfig::tick_for(every),
            floor: 2 * concurrency.max(1) as u64,
            holder: crate::lease_holder(name, LEASE),
        }
    }

    /// A sixtieth of the cadence, between one and thirty seconds.
    pub fn tick_for(every: Duration) -> Duration {
        (every / 60).clamp(Duration::from_secs(1), Duration::from_secs(30))
    }
}

/// The company's phase: where in each period its slots fall.
pub fn phase(company: i64, every: Duration) -> Duration {
    let spread = (company as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let nanos = every.as_nanos().max(1);
    let at = (u128::from(spread) * nanos) >> 64;
    Duration::from_nanos(u64::try_from(at).unwrap_or(u64::MAX))
}

/// The company's first slot strictly after `t` (slots: its phase plus every multiple of
/// the cadence, counted from the Unix epoch).
pub fn next_slot_after(t: OffsetDateTime, company: i64, every: Duration) -> OffsetDateTime {
    let period = i128::try_from(every.as_nanos().max(1)).unwrap_or(i128::MAX);
    let phase = i128::try_from(phase(company, every).as_nanos()).unwrap_or(0);
    let since = t.unix_timestamp_nanos() - phase;
    let slot = (since.div_euclid(period) + 1) * period + phase;
    OffsetDateTime::from_unix_timestamp_nanos(slot).unwrap_or(t)
}

/// What a round does with one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Queue its rescan now; the one after is due at `next_at`.
    Queue { next_at: OffsetDateTime },
    /// Its next rescan is due at `next_at`.
    Wait { next_at: OffsetDateTime },
}

/// The decision for `row` at `now`, and the cadence it was made with.
pub fn decide(row: &ScheduleRow, now: OffsetDateTime, default_every: Duration) -> (Duration, Decision) {
    let every = row.every.unwrap_or(default_every);
    let half = every / 2;
    let after_queue = || next_slot_after(now + half, row.company, every);
    let decision = match row.queued_at.or(row.last_scan) {
        None => Decision::Queue { next_at: after_queue() },
        Some(last) => {
            let due = next_slot_after(last + half, row.company, every);
            if due <= now { Decision::Queue { next_at: after_queue() } } else { Decision::Wait { next_at: due } }
        }
    };
    (every, decision)
}

/// What one round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    /// Whether this process held the lease (nothing else is done without it).
    pub leader: bool,
    /// Rescans queued.
    pub queued: u64,
    /// Companies due that waited for the workers to drain what is queued.
    pub held_back: u64,
    /// Companies planned for later.
    pub planned: u64,
    /// Background jobs waiting when the round began.
    pub waiting: u64,
}

/// The scheduler: rounds over the store, remembering what the last one left waiting
/// (to measure how fast the workers drain).
pub struct Scheduler {
    store: Arc<dyn Store>,
    config: ScheduleConfig,
    /// Background jobs waiting after the last round (those it found plus those it queued).
    left: Option<u64>,
}

impl Scheduler {
    pub fn new(store: Arc<dyn Store>, config: ScheduleConfig) -> Scheduler {
        Scheduler { store, config, left: None }
    }

    /// One round at `now`.
    pub async fn round(&mut self, now: OffsetDateTime) -> Result<Round, store::StoreError> {
        let ttl = (self.config.tick * 3).max(Duration::from_secs(10));
        if !self.store.hold_lease(LEASE, &self.config.holder, ttl, now).await? {
            self.left = None;
            return Ok(Round::default());
        }
        let waiting = self.store.waiting_jobs(JobSpec::BACKGROUND, now).await?;
        let drained = self.left.map_or(0, |left| left.saturating_sub(waiting));
        let mut budget = self.config.floor.max(2 * drained).saturating_sub(waiting);
        let mut round = Round { leader: true, waiting, ..Round::default() };
        let rows = self.store.rescan_candidates(now, self.config.every, CANDIDATES).await?;
        let mut plans = Vec::with_capacity(rows.len());
        let mut stale = Vec::new();
        for row in &rows {
            let (every, decision) = decide(row, now, self.config.every);
            if let Some(event) = crate::events::stale_rating(row, every, now) {
                stale.push(event);
            }
            match decision {
                Decision::Queue { next_at } => {
                    if budget == 0 {
                        round.held_back += 1;
                        continue;
                    }
                    let job = JobSpec::Scan { social_id: row.social_id.clone() };
                    self.store.enqueue_with(&job, JobSpec::BACKGROUND, now).await?;
                    budget -= 1;
                    round.queued += 1;
                    plans.push(RescanPlan { company: row.company, next_at, every, queued_at: Some(now) });
                }
                Decision::Wait { next_at } => {
                    round.planned += 1;
                    plans.push(RescanPlan { company: row.company, next_at, every, queued_at: None });
                }
            }
        }
        self.store.plan_rescans(&plans).await?;
        // Kept once per company and rating (the event's time is when it became stale).
        if !stale.is_empty() {
            let kept = crate::events::announce(&*self.store, &stale).await?;
            crate::alerts::stale(&*self.store, &kept).await?;
        }
        self.left = Some(waiting + round.queued);
        crate::metrics::scheduled(round.queued, round.held_back);
        Ok(round)
    }

    /// Rounds every tick until `shutdown`, then gives up the lease.
    pub async fn run(mut self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        tracing::info!(
            every_secs = self.config.every.as_secs(),
            tick_ms = self.config.tick.as_millis() as u64,
            "scheduler started"
        );
        loop {
            // While due companies wait for room in the queue, rounds come every second,
            // so the queue is topped up as the workers drain it.
            let mut pause = self.config.tick;
            match self.round(OffsetDateTime::now_utc()).await {
                Ok(r) => {
                    if r.queued > 0 || r.held_back > 0 {
                        tracing::info!(
                            queued = r.queued,
                            held_back = r.held_back,
                            planned = r.planned,
                            waiting = r.waiting,
                            "scheduled rescans"
                        );
                    }
                    if r.held_back > 0 {
                        pause = pause.min(Duration::from_secs(1));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "a scheduling round failed; trying again"),
            }
            tokio::select! {
                () = &mut shutdown => break,
                () = tokio::time::sleep(pause) => {}
            }
        }
        if let Err(e) = self.store.drop_lease(LEASE, &self.config.holder).await {
            tracing::warn!(error = %e, "giving up the scheduler's lease failed; it lapses");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row(company: i64, last: Option<OffsetDateTime>, queued: Option<OffsetDateTime>) -> ScheduleRow {
        ScheduleRow {
            company,
            social_id: model::SocialId::parse("acme").unwrap(),
            last_scan: last,
            queued_at: queued,
            next_at: None,
            every: None,
            planned_every: None,
            watched: false,
        }
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn slots_of_many_companies_spread_evenly_over_the_period() {
        // 10,000 companies created one after another: every hour of the day gets its
        // share (417 on average), none more than 5 % over.
        let mut hours = [0u32; 24];
        for id in 1..=10_000 {
            hours[(phase(id, DAY).as_secs() / 3_600) as usize] += 1;
        }
        let (least, most) = (hours.iter().min().unwrap(), hours.iter().max().unwrap());
        assert!(*least >= 395 && *most <= 437, "{hours:?}");
    }

    #[test]
    fn a_never_scanned_company_is_queued_at_once_and_then_once_per_cadence() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let (every, first) = decide(&row(7, None, None), now, DAY);
        assert_eq!(every, DAY);
        let Decision::Queue { next_at } = first else { panic!("{first:?}") };
        assert!(next_at > now + DAY / 2 && next_at <= now + DAY * 3 / 2, "{next_at}");
        // Queued then, it is queued again at that slot, and from then on every cadence.
        let (_, early) = decide(&row(7, None, Some(now)), next_at - Duration::from_secs(1), DAY);
        assert_eq!(early, Decision::Wait { next_at });
        let (_, then) = decide(&row(7, None, Some(now)), next_at, DAY);
        assert_eq!(then, Decision::Queue { next_at: next_at + DAY });
        let (_, before) = decide(&row(7, None, Some(next_at)), next_at + DAY - Duration::from_secs(1), DAY);
        assert_eq!(before, Decision::Wait { next_at: next_at + DAY });
        let (_, after) = decide(&row(7, None, Some(next_at)), next_at + DAY, DAY);
        assert_eq!(after, Decision::Queue { next_at: next_at + DAY * 2 });
        // A rating made meanwhile (a rescan someone asked for) does not move the slots.
        let (_, rated) = decide(&row(7, Some(next_at + DAY / 2), Some(next_at)), next_at + DAY, DAY);
        assert_eq!(rated, after);
    }

    #[test]
    fn a_company_of_its_own_cadence_follows_it() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let mut r = row(3, Some(now - Duration::from_secs(3_600)), None);
        assert!(matches!(decide(&r, now, DAY).1, Decision::Wait { .. }), "an hour old on a daily cadence");
        r.every = Some(Duration::from_secs(600));
        let (every, d) = decide(&r, now, DAY);
        assert_eq!(
            (every, d),
            (
                Duration::from_secs(600),
                Decision::Queue { next_at: next_slot_after(now + Duration::from_secs(300), 3, every) }
            )
        );
    }

    proptest! {
        /// A rating is refreshed at a slot of its company, never sooner than half a
        /// cadence after the last refresh and never later than one and a half.
        #[test]
        fn refreshes_fall_on_slots_between_half_and_one_and_a_half_cadences(
            company in 1i64..1_000_000,
            every_s in 60u64..1_000_000,
            last_s in 1_600_000_000i64..1_900_000_000,
        ) {
            let every = Duration::from_secs(every_s);
            let last = OffsetDateTime::from_unix_timestamp(last_s).unwrap();
            let r = row(company, Some(last), None);
            let Decision::Wait { next_at } = decide(&r, last, every).1 else { panic!("due at once") };
            prop_assert!(next_at > last + every / 2 && next_at <= last + every * 3 / 2 + Duration::from_nanos(1));
            prop_assert_eq!(decide(&r, next_at - Duration::from_millis(1), every).1, Decision::Wait { next_at });
            let Decision::Queue { next_at: after } = decide(&r, next_at, every).1 else { panic!("not due at its slot") };
            prop_assert_eq!(after, next_at + every);
            let off = (next_at.unix_timestamp_nanos() - phase(company, every).as_nanos() as i128) % every.as_nanos() as i128;
            prop_assert_eq!(off, 0);
        }
    }
}
