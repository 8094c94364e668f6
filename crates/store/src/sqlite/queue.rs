//! The statements of [`crate::Queue`] that differ on SQLite: a job is enqueued and leased on the one writer, in group commits.

use model::JobSpec;

use super::*;

impl SqliteStore {
    pub(super) async fn enqueue_job(&self, job: &JobSpec, priority: i16, run_at: OffsetDateTime) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let run_at = rfc3339_micros(run_at);
        let (kind, payload, key) = (job.kind(), to_json(&job.payload())?, job.dedup_key());
        // Both are RFC 3339 in UTC with microseconds: they order as text.
        let due = run_at <= now;
        // Asked again for work that waits already as soon and as high, or runs: nothing
        // to write (found on a reader, so repeated asks do not queue on the writer).
        let waiting: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE dedup_key = ?1 AND dedup_key IS NOT NULL \
             AND status IN ('queued', 'running') AND (status = 'running' \
             OR (status = 'queued' AND run_after <= ?2 AND priority >= ?3)))",
        )
        .bind(&key)
        .bind(&run_at)
        .bind(i64::from(priority))
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        if waiting {
            return Ok(false);
        }
        let queued = self
            .grouped(move |tx| {
                Box::pin(async move {
                    // The same work waiting: brought forward and raised, not queued twice.
                    let waiting = sqlx::query(
                        "UPDATE jobs SET run_after = MIN(run_after, ?2), priority = MAX(priority, ?3), updated_at = ?4 \
                     WHERE dedup_key = ?1 AND dedup_key IS NOT NULL AND status IN ('queued', 'running') \
                     AND status = 'queued'",
                    )
                    .bind(&key)
                    .bind(&run_at)
                    .bind(i64::from(priority))
                    .bind(&now)
                    .execute(&mut *tx)
                    .await?;
                    if waiting.rows_affected() > 0 {
                        return Ok(false);
                    }
                    // A running job of that key makes the insert a no-op (the partial unique index).
                    let done = sqlx::query(
                    "INSERT INTO jobs (kind, payload, dedup_key, status, priority, run_after, created_at, updated_at) \
                     VALUES (?1, ?2, ?3, 'queued', ?4, ?5, ?6, ?6) ON CONFLICT DO NOTHING",
                )
                .bind(kind)
                .bind(payload)
                .bind(&key)
                .bind(i64::from(priority))
                .bind(&run_at)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
                    Ok(done.rows_affected() > 0)
                })
            })
            .await?;
        if queued && due {
            self.jobs_queued.notify_waiters();
        }
        Ok(queued)
    }

    pub(super) async fn lease_next(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>> {
        let now_t = OffsetDateTime::now_utc();
        let now = rfc3339_micros(now_t);
        let until = rfc3339_micros(now_t + lease);
        let worker = worker.to_owned();
        self.grouped(move |tx| Box::pin(async move {
        // Jobs whose lease lapsed on their last attempt: the worker died or hung running
        // them each time. They are not handed to another worker to crash.
        sqlx::query(
            "UPDATE jobs SET status = 'dead', lease_until = NULL, lease_token = NULL, updated_at = ?1, \
             last_error = 'the lease expired on attempt ' || attempts || ' of ' || ?2 || \
             ' (the worker died or hung)' || COALESCE('; before: ' || last_error, '') \
             WHERE status = 'running' AND lease_until < ?1 AND attempts >= ?2",
        )
        .bind(&now)
        .bind(max_attempts)
        .execute(&mut *tx)
        .await?;
        loop {
            let Some(row) = sqlx::query(
                "UPDATE jobs SET status = 'running', lease_until = ?2, worker = ?3, attempts = attempts + 1, \
                 updated_at = ?1, started_at = COALESCE(started_at, ?1), lease_token = lower(hex(randomblob(16))) \
                 WHERE id = (SELECT id FROM (\
                   SELECT * FROM (SELECT id, priority, run_after FROM jobs INDEXED BY jobs_queued \
                     WHERE status = 'queued' AND run_after <= ?1 ORDER BY priority DESC, run_after, id LIMIT 1) \
                   UNION ALL \
                   SELECT * FROM (SELECT id, priority, run_after FROM jobs WHERE status = 'running' AND lease_until < ?1 \
                     ORDER BY priority DESC, run_after, id LIMIT 1)) \
                 ORDER BY priority DESC, run_after, id LIMIT 1) RETURNING *",
            )
            .bind(&now)
            .bind(&until)
            .bind(&worker)
            .fetch_optional(&mut *tx)
            .await?
            else {
                                return Ok(None);
            };
            match job_from_row(&row) {
                Ok(job) => {
                                        return Ok(Some(job));
                }
                // A job no worker can read (written by another version, or damaged) is
                // dead with the reason, not handed out again and again.
                Err(StoreError::Corrupt(why)) => {
                    let id: i64 = row.try_get("id")?;
                    sqlx::query(
                        "UPDATE jobs SET status = 'dead', lease_until = NULL, lease_token = NULL, last_error = ?2 \
                         WHERE id = ?1",
                    )
                    .bind(id)
                    .bind(format!("unreadable job: {why}"))
                    .execute(&mut *tx)
                    .await?;
                }
                Err(e) => return Err(e),
            }
        }
        }))
        .await
    }

    pub(super) async fn fail_leased(
        &self,
        job_id: i64,
        token: &str,
        error: &str,
        retry_after: Duration,
        give_up: bool,
    ) -> Result<bool> {
        let now = OffsetDateTime::now_utc();
        let token = token.to_owned();
        let error = error.to_owned();
        self.grouped(move |tx| {
            Box::pin(async move {
                let done = sqlx::query(
                    "UPDATE jobs SET status = CASE WHEN ?4 THEN 'dead' ELSE 'queued' END, last_error = ?2, \
                     run_after = ?3, lease_until = NULL, lease_token = NULL, updated_at = ?5 \
                     WHERE id = ?1 AND lease_token = ?6 AND status = 'running'",
                )
                .bind(job_id)
                .bind(&error)
                .bind(rfc3339_micros(now + retry_after))
                .bind(give_up)
                .bind(rfc3339_micros(now))
                .bind(&token)
                .execute(&mut *tx)
                .await?;
                Ok(done.rows_affected() > 0)
            })
        })
        .await
    }

    /// Waits `at_most`: SQLite hears of no new job (the worker polls).
    /// Tells the workers waiting on this store that jobs were queued (after a commit that
    /// queued them outside [`Self::enqueue_job`]).
    pub(super) async fn announce_jobs(&self) {
        self.jobs_queued.notify_waiters();
    }

    /// Waits at most `at_most`, less when a job is queued through this store (the API's
    /// and the workers' of one process: `serve --workers`); other processes' jobs are
    /// seen at the next poll.
    pub(super) async fn wait_for_notice(&self, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, self.jobs_queued.notified()).await;
    }
}
