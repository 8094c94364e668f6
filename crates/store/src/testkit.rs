//! What tests of other crates ask of a store that the product never does (the
//! `testkit` feature, turned on by their dev-dependencies only).

use model::Job;

use crate::{Queue, Result};

/// Jobs waiting or running, oldest first.
pub async fn pending_jobs(queue: &(impl Queue + ?Sized)) -> Result<Vec<Job>> {
    let mut jobs: Vec<Job> = queue
        .jobs(None, u32::MAX)
        .await?
        .into_iter()
        .filter(|j| matches!(j.status, model::JobStatus::Queued | model::JobStatus::Running))
        .collect();
    jobs.sort_by_key(|j| j.id);
    Ok(jobs)
}
