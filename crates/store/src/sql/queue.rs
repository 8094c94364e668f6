//! [`crate::Queue`]: the job queue. Enqueueing, leasing and failing a job, and waiting
//! for one, differ per backend (each backend's `queue` module); the rest is here.

use model::JobSpec;

use super::*;

#[async_trait]
impl crate::Queue for Backend {
    async fn enqueue_with(&self, job: &JobSpec, priority: i16, run_at: OffsetDateTime) -> Result<bool> {
        self.enqueue_job(job, priority, run_at).await
    }

    async fn lease_job(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>> {
        self.lease_next(worker, lease, max_attempts).await
    }

    async fn fail_job(
        &self,
        job_id: i64,
        token: &str,
        error: &str,
        retry_after: Duration,
        give_up: bool,
    ) -> Result<bool> {
        self.fail_leased(job_id, token, error, retry_after, give_up).await
    }

    async fn wait_for_jobs(&self, at_most: Duration) {
        self.wait_for_notice(at_most).await
    }

    async fn renew_lease(&self, job_id: i64, token: &str, lease: Duration) -> Result<bool> {
        let now = OffsetDateTime::now_utc();
        let token = token.to_owned();
        self.grouped_one(move |tx| {
            Box::pin(async move {
                let done = sqlx::query(
                    "UPDATE jobs SET lease_until = $3, updated_at = $4 WHERE id = $1 AND lease_token = $2 AND status = 'running'",
                )
                .bind(job_id)
                .bind(&token)
                .bind(rfc3339_micros(now + lease))
                .bind(rfc3339_micros(now))
                .execute(&mut *tx)
                .await?;
        Ok(done.rows_affected() > 0)
            })
        })
        .await
    }

    async fn complete_job(&self, job_id: i64, token: &str) -> Result<bool> {
        let token = token.to_owned();
        self.grouped_one(move |tx| {
            Box::pin(async move {
                let done = sqlx::query(
                    "UPDATE jobs SET status = 'done', lease_until = NULL, lease_token = NULL, updated_at = $3 \
                     WHERE id = $1 AND lease_token = $2 AND status = 'running'",
                )
                .bind(job_id)
                .bind(&token)
                .bind(rfc3339_micros(OffsetDateTime::now_utc()))
                .execute(&mut *tx)
                .await?;
                Ok(done.rows_affected() > 0)
            })
        })
        .await
    }

    async fn release_job(&self, job_id: i64, token: &str) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let token = token.to_owned();
        self.grouped_one(move |tx| {
            Box::pin(async move {
                let done = sqlx::query(
                    "UPDATE jobs SET status = 'queued', run_after = $3, lease_until = NULL, lease_token = NULL, \
                     attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = $3 WHERE id = $1 AND lease_token = $2 AND status = 'running'",
                )
                .bind(job_id)
                .bind(&token)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
        Ok(done.rows_affected() > 0)
            })
        })
        .await
    }

    async fn jobs(&self, status: Option<model::JobStatus>, limit: u32) -> Result<Vec<Job>> {
        sqlx::query("SELECT * FROM jobs WHERE $1 IS NULL OR status = $1 ORDER BY id DESC LIMIT CAST($2 AS BIGINT)")
            .bind(status.map(model::JobStatus::as_str))
            .bind(i64::from(limit))
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(job_from_row)
            .collect()
    }

    async fn job_counts(&self) -> Result<Vec<crate::JobCount>> {
        let rows: Vec<(String, String, i64, String)> = sqlx::query_as(
            "SELECT kind, status, count(*), min(created_at) FROM jobs \
             WHERE status IN ('queued', 'running', 'dead', 'cancelled') GROUP BY kind, status ORDER BY kind, status",
        )
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.into_iter()
            .map(|(kind, status, n, oldest)| {
                Ok(crate::JobCount {
                    kind,
                    status: model::JobStatus::parse(&status).ok_or_else(|| corrupt("job status", &status))?,
                    count: count(n),
                    oldest: ts(&oldest)?,
                })
            })
            .collect()
    }

    async fn waiting_jobs(&self, max_priority: i16, now: OffsetDateTime) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM jobs WHERE status = 'queued' AND priority <= $1 AND run_after <= $2",
        )
        .bind(i64::from(max_priority))
        .bind(rfc3339_micros(now))
        .fetch_one(&mut *self.reader().await?)
        .await?;
        Ok(count(n))
    }

    async fn cancel_job(&self, job_id: i64) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let done = sqlx::query(
            "UPDATE jobs SET status = 'cancelled', lease_until = NULL, lease_token = NULL, updated_at = $2 \
             WHERE id = $1 AND status IN ('queued', 'running')",
        )
        .bind(job_id)
        .bind(&now)
        .execute(self.writer())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn retry_job(&self, job_id: i64) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        // A dead job whose dedup key a newer job holds stays dead (the unique index).
        let done = sqlx::query(
            "UPDATE jobs SET status = 'queued', attempts = 0, started_at = NULL, run_after = $2, updated_at = $2 \
             WHERE id = $1 AND status IN ('dead', 'cancelled') AND NOT EXISTS (SELECT 1 FROM jobs o \
             WHERE o.dedup_key = jobs.dedup_key AND o.id <> jobs.id AND o.status IN ('queued', 'running'))",
        )
        .bind(job_id)
        .bind(&now)
        .execute(self.writer())
        .await;
        match done {
            Ok(done) => Ok(done.rows_affected() > 0),
            // The key was taken between the check and the write.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}
