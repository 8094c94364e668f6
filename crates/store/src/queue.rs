//! The durable job queue: leases with tokens, renewals, retries, dead jobs.

use std::time::Duration;

use model::{Job, JobSpec};

use crate::Result;
use async_trait::async_trait;

/// Jobs of one kind in one status ([`Queue::job_counts`]).
#[derive(Debug, Clone, PartialEq)]
pub struct JobCount {
    pub kind: String,
    pub status: model::JobStatus,
    pub count: u64,
    /// When the oldest of them was queued.
    pub oldest: time::OffsetDateTime,
}

/// The durable job queue: leases with tokens, renewals, retries, dead jobs.
#[async_trait]
pub trait Queue: Send + Sync + 'static {
    /// Queues a job to run now at its [`JobSpec::default_priority`], unless one with the
    /// same [`JobSpec::dedup_key`] waits or runs; returns whether a job was queued.
    async fn enqueue(&self, job: &JobSpec) -> Result<bool> {
        self.enqueue_with(job, job.default_priority(), time::OffsetDateTime::now_utc()).await
    }

    /// Queues a job not to be leased before `run_at`, taken before ready jobs of lower
    /// `priority`. When the same work already waits (its dedup key), no second job is
    /// queued: the waiting one is brought forward to `run_at` and raised to `priority`
    /// if those are sooner or higher (asking now for work scheduled for tomorrow runs it
    /// now), and false is returned. A job of that key that runs is left alone.
    async fn enqueue_with(&self, job: &JobSpec, priority: i16, run_at: time::OffsetDateTime) -> Result<bool>;
    /// Takes the ready job of highest priority, oldest `run_after` first (or one whose
    /// lease expired) for `lease`, with a new
    /// lease token. A job whose lease expired after `max_attempts` attempts (its worker
    /// died or hung each time: a job that crashes workers) is marked dead instead.
    async fn lease_job(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>>;

    /// Extends a running job's lease to `lease` from now. False when `token` no longer
    /// holds the lease (it lapsed and another worker took the job, or it was cancelled).
    async fn renew_lease(&self, job_id: i64, token: &str, lease: Duration) -> Result<bool>;

    /// Marks a leased job done; false (and nothing written) when `token` no longer holds
    /// the lease.
    async fn complete_job(&self, job_id: i64, token: &str) -> Result<bool>;

    /// Marks a leased job failed: retried after `retry_after`, or dead when `give_up`.
    /// False (and nothing written) when `token` no longer holds the lease.
    async fn fail_job(
        &self,
        job_id: i64,
        token: &str,
        error: &str,
        retry_after: Duration,
        give_up: bool,
    ) -> Result<bool>;

    /// Gives a leased job back to the queue at once, the attempt not counted (a worker
    /// shutting down). False when `token` no longer holds the lease.
    async fn release_job(&self, job_id: i64, token: &str) -> Result<bool>;

    /// Jobs in `status` (any when `None`), newest first, at most `limit`.
    async fn jobs(&self, status: Option<model::JobStatus>, limit: u32) -> Result<Vec<Job>>;

    /// How many jobs wait, run, are dead or cancelled, by kind (done jobs are not
    /// counted), with the oldest `created_at` of each group.
    async fn job_counts(&self) -> Result<Vec<JobCount>>;

    /// Jobs queued and ready by `now` whose priority is at most `max_priority`: the work
    /// of that rank waiting for a worker.
    async fn waiting_jobs(&self, max_priority: i16, now: time::OffsetDateTime) -> Result<u64>;

    /// Queues a dead or cancelled job again with its attempts reset; false when the job
    /// is not dead or cancelled.
    async fn retry_job(&self, job_id: i64) -> Result<bool>;

    /// Cancels a queued or running job (a running job's worker then finds its lease
    /// gone); false when the job is not queued or running.
    async fn cancel_job(&self, job_id: i64) -> Result<bool>;

    /// Waits until a job may be ready: at most `at_most`, less when the backend hears of
    /// a new job (PostgreSQL: `LISTEN`). Polling an empty queue waits here between
    /// leases.
    async fn wait_for_jobs(&self, at_most: Duration) {
        tokio::time::sleep(at_most).await;
    }
}
