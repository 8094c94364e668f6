//! The statements of [`crate::Queue`] that differ on PostgreSQL: a lease takes the oldest ready job with `FOR UPDATE SKIP LOCKED`, so workers of
//! many processes never wait for each other, and a new job is announced with `NOTIFY`.

use model::JobSpec;

use super::*;

impl PgStore {
    pub(super) async fn enqueue_job(&self, job: &JobSpec, priority: i16, run_at: OffsetDateTime) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let run_at = rfc3339_micros(run_at);
        // Asked again for work that waits already as soon and as high, or runs: nothing
        // to write (a read, so repeated asks take no row lock and no commit).
        let waiting: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE dedup_key = $1 AND dedup_key IS NOT NULL \
             AND status IN ('queued', 'running') AND (status = 'running' \
             OR (status = 'queued' AND run_after <= $2 AND priority >= $3)))",
        )
        .bind(job.dedup_key())
        .bind(&run_at)
        .bind(i64::from(priority))
        .fetch_one(&self.pool)
        .await?;
        if waiting {
            return Ok(false);
        }
        // One statement, one round trip: the same work waiting is brought forward and
        // raised; else the job is inserted (a no-op when a job of the key runs, or one was
        // queued by another process meanwhile: the partial unique index). Idle workers
        // listening on the channel hear of either at commit.
        let row = sqlx::query(
            "WITH waiting AS (\
               UPDATE jobs SET run_after = LEAST(run_after, $5), priority = GREATEST(priority, $4), updated_at = $6 \
               WHERE dedup_key = $3 AND status = 'queued' RETURNING id), \
             inserted AS (\
               INSERT INTO jobs (kind, payload, dedup_key, status, priority, run_after, created_at, updated_at) \
               SELECT $1, $2, $3, 'queued', $4, $5, $6, $6 WHERE NOT EXISTS (SELECT 1 FROM waiting) \
               ON CONFLICT DO NOTHING RETURNING id), \
             told AS (\
               SELECT pg_notify($7, $1) FROM (SELECT id FROM waiting UNION ALL SELECT id FROM inserted) t LIMIT 1) \
             SELECT (SELECT count(*) FROM inserted) AS inserted, (SELECT count(*) FROM told) AS told",
        )
        .bind(job.kind())
        .bind(to_json(&job.payload())?)
        .bind(job.dedup_key())
        .bind(i64::from(priority))
        .bind(&run_at)
        .bind(&now)
        .bind(JOBS_CHANNEL)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get::<i64, _>("inserted")? > 0)
    }

    pub(super) async fn lease_next(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>> {
        let now_t = OffsetDateTime::now_utc();
        let now = rfc3339_micros(now_t);
        let until = rfc3339_micros(now_t + lease);
        loop {
            // One statement (one round trip, one commit):
            // - jobs whose lease lapsed on their last attempt (the worker died or hung
            //   running them each time) are dead, not handed to another worker to crash;
            // - the ready job of highest priority (the partial index `jobs_queued`, read
            //   in order) or a job whose lease lapsed is leased, rows other workers are
            //   taking skipped.
            let row = sqlx::query(
                "WITH dead AS (\
                   UPDATE jobs SET status = 'dead', lease_until = NULL, lease_token = NULL, updated_at = $1, \
                   last_error = 'the lease expired on attempt ' || attempts || ' of ' || $2 || \
                   ' (the worker died or hung)' || COALESCE('; before: ' || last_error, '') \
                   WHERE id IN (SELECT id FROM jobs WHERE status = 'running' AND lease_until < $1 AND attempts >= $2 \
                   FOR UPDATE SKIP LOCKED) RETURNING id), \
                 ready AS (\
                   SELECT id, priority, run_after FROM jobs WHERE status = 'queued' AND run_after <= $1 \
                   ORDER BY priority DESC, run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED), \
                 lapsed AS (\
                   SELECT id, priority, run_after FROM jobs WHERE status = 'running' AND lease_until < $1 \
                   AND attempts < $2 ORDER BY priority DESC, run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED), \
                 chosen AS (SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed) c \
                   ORDER BY priority DESC, run_after, id LIMIT 1) \
                 UPDATE jobs SET status = 'running', lease_until = $3, worker = $4, attempts = attempts + 1, \
                 updated_at = $1, started_at = COALESCE(started_at, $1), \
                 lease_token = md5(random()::text || clock_timestamp()::text) \
                 FROM chosen WHERE jobs.id = chosen.id AND (SELECT count(*) FROM dead) >= 0 RETURNING jobs.*",
            )
            .bind(&now)
            .bind(max_attempts)
            .bind(&until)
            .bind(worker)
            .fetch_optional(&self.pool)
            .await?;
            let Some(row) = row else { return Ok(None) };
            match job_from_row(&row) {
                Ok(job) => return Ok(Some(job)),
                // A job no worker can read (written by another version, or damaged) is
                // dead with the reason, not handed out again and again.
                Err(StoreError::Corrupt(why)) => {
                    let id: i64 = row.try_get("id")?;
                    sqlx::query(
                        "UPDATE jobs SET status = 'dead', lease_until = NULL, lease_token = NULL, last_error = $2 \
                         WHERE id = $1",
                    )
                    .bind(id)
                    .bind(format!("unreadable job: {why}"))
                    .execute(&self.pool)
                    .await?;
                }
                Err(e) => return Err(e),
            }
        }
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
        let done = sqlx::query(
            "UPDATE jobs SET status = CASE WHEN $4 THEN 'dead' ELSE 'queued' END, last_error = $2, \
             run_after = $3, lease_until = NULL, lease_token = NULL, updated_at = $5 \
             WHERE id = $1 AND lease_token = $6 AND status = 'running'",
        )
        .bind(job_id)
        .bind(error)
        .bind(rfc3339_micros(now + retry_after))
        .bind(give_up)
        .bind(rfc3339_micros(now))
        .bind(token)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Tells the listening workers that jobs were queued (after a commit that queued
    /// them outside [`Self::enqueue_job`]); a failed notice leaves them to their poll.
    pub(super) async fn announce_jobs(&self) {
        if let Err(e) = sqlx::query("SELECT pg_notify($1, 'jobs')").bind(JOBS_CHANNEL).execute(&self.pool).await {
            tracing::warn!(error = %e, "NOTIFY {JOBS_CHANNEL} failed; the workers see the jobs at their next poll");
        }
    }

    pub(super) async fn wait_for_notice(&self, at_most: Duration) {
        let mut listener = self.listener.lock().await;
        if listener.is_none() {
            match sqlx::postgres::PgListener::connect_with(&self.pool).await {
                Ok(mut l) => match l.listen(JOBS_CHANNEL).await {
                    Ok(()) => *listener = Some(l),
                    Err(e) => tracing::warn!(error = %e, "LISTEN {JOBS_CHANNEL} failed; polling"),
                },
                Err(e) => tracing::warn!(error = %e, "no connection to listen for jobs; polling"),
            }
        }
        let Some(l) = listener.as_mut() else {
            drop(listener);
            tokio::time::sleep(at_most).await;
            return;
        };
        // A notice that came while no one waited wakes the next wait at once.
        if let Ok(Err(e)) = tokio::time::timeout(at_most, l.recv()).await {
            tracing::warn!(error = %e, "the job listener failed; it is opened again on the next wait");
            *listener = None;
        }
    }
}
