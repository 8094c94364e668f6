//! `rampart jobs list|scan|retry|cancel`: the job queue.

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use model::SocialId;

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Jobs, newest first, with their state, priority, attempts, when they may run and last error.
    List {
        #[command(flatten)]
        db: DbArg,
        /// Only jobs in this state: queued, running, done, dead, cancelled.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Queue full scans: of the companies named, or of every company (--all). Work of
    /// the same kind already waiting is not queued twice (it is brought forward when
    /// asked for sooner).
    Scan {
        #[command(flatten)]
        db: DbArg,
        /// Social ids of the companies to scan.
        social_ids: Vec<String>,
        /// Every company in the store.
        #[arg(long, conflicts_with = "social_ids")]
        all: bool,
        /// Higher runs first among ready jobs (a rescan asked through the API: 20, a scan:
        /// 10, background refreshes: 0).
        #[arg(long, default_value_t = 10)]
        priority: i16,
        /// Not before this many seconds from now.
        #[arg(long, default_value_t = 0)]
        delay_secs: u64,
    },
    /// Queue a dead or cancelled job again (its attempts start over).
    Retry {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
    /// Cancel a queued or running job (a running job's worker stops it at its next
    /// lease renewal).
    Cancel {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
}

/// The companies `jobs scan` queues: those named (checked), or every one.
enum Companies {
    Named(Vec<SocialId>),
    All,
}

/// `--status` of `jobs list`, read.
fn job_status(status: Option<&str>) -> Result<Option<model::JobStatus>> {
    match status {
        None => Ok(None),
        Some(s) => Ok(Some(
            model::JobStatus::parse(&s.to_ascii_lowercase())
                .with_context(|| format!("{s:?} is not a job state (queued, running, done, dead, cancelled)"))?,
        )),
    }
}

/// The companies of `jobs scan`: `--all`, or the social ids named.
fn companies(social_ids: &[String], all: bool) -> Result<Companies> {
    if social_ids.is_empty() && !all {
        bail!("name the companies to scan, or --all");
    }
    let ids: Vec<SocialId> = social_ids.iter().map(|s| SocialId::parse(s)).collect::<Result<_, _>>()?;
    Ok(if all { Companies::All } else { Companies::Named(ids) })
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::List { db, status, limit } => {
            let status = job_status(status.as_deref())?;
            let store = open(&db.db).await?;
            let jobs = store.jobs(status, limit).await?;
            say!(
                "{:<8} {:<8} {:<10} {:<5} {:<8} {:<20} {:<20} {:<24} {:<28} LAST ERROR",
                "ID",
                "KIND",
                "STATE",
                "PRIO",
                "ATTEMPTS",
                "RUN AFTER",
                "UPDATED",
                "WORKER",
                "TARGET"
            );
            for j in &jobs {
                let target = match &j.spec {
                    model::JobSpec::Scan { social_id } | model::JobSpec::Quick { social_id } => social_id.to_string(),
                    model::JobSpec::Rescan { social_id, subdomain, risk_vector } => {
                        format!("{social_id} {subdomain} {risk_vector}")
                    }
                    model::JobSpec::Deliver { social_id, webhook, event } => {
                        format!("{social_id} event {event} → webhook {webhook}")
                    }
                    model::JobSpec::Verify { social_id, domain } => format!("{social_id} {domain}"),
                };
                let payload = crate::common::clip(&target, 28);
                let error: String = j.last_error.as_deref().unwrap_or("").chars().take(200).collect();
                let updated: String = j.updated_at.chars().take(19).collect();
                let run_after: String = j.run_after.chars().take(19).collect();
                say!(
                    "{:<8} {:<8} {:<10} {:<5} {:<8} {:<20} {:<20} {:<24} {:<28} {error}",
                    j.id,
                    j.spec.kind(),
                    j.status.as_str(),
                    j.priority,
                    j.attempts,
                    run_after,
                    updated,
                    j.worker.as_deref().unwrap_or("-"),
                    payload
                );
            }
            if jobs.is_empty() {
                eprintln!("no jobs");
            }
            Ok(())
        }
        Action::Scan { db, social_ids, all, priority, delay_secs } => {
            let companies = companies(&social_ids, all)?;
            let store = open(&db.db).await?;
            let run_at = time::OffsetDateTime::now_utc() + std::time::Duration::from_secs(delay_secs);
            let (mut queued, mut waiting) = (0u64, 0u64);
            let mut enqueue = async |id: SocialId| -> Result<()> {
                if store.enqueue_with(&model::JobSpec::Scan { social_id: id }, priority, run_at).await? {
                    queued += 1;
                } else {
                    waiting += 1;
                }
                Ok(())
            };
            match companies {
                Companies::All => {
                    let mut after = 0;
                    loop {
                        let page = store.company_ids(after, 1000).await?;
                        let Some((last, _)) = page.last() else { break };
                        after = *last;
                        for (_, id) in page {
                            enqueue(id).await?;
                        }
                    }
                }
                Companies::Named(ids) => {
                    for id in &ids {
                        if store.company_by_social_id(id).await?.is_none() {
                            bail!("no company {id}: nothing queued");
                        }
                    }
                    for id in ids {
                        enqueue(id).await?;
                    }
                }
            }
            eprintln!("{queued} scans queued; {waiting} already waiting or running");
            Ok(())
        }
        Action::Retry { db, id } => {
            let store = open(&db.db).await?;
            if !store.retry_job(id).await? {
                bail!("job {id} is not dead or cancelled (or another job of the same target is waiting)");
            }
            say!("job {id} queued again");
            Ok(())
        }
        Action::Cancel { db, id } => {
            let store = open(&db.db).await?;
            if !store.cancel_job(id).await? {
                bail!("job {id} is not queued or running");
            }
            say!("job {id} cancelled");
            Ok(())
        }
    }
}
