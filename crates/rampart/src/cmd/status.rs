//! `rampart status`: how current the ratings are and what the workers have before them —
//! the queue by kind, the age of the ratings, the next scheduled rescans, dead jobs and
//! the age of each feed.

use std::time::Duration;

use anyhow::Result;
use model::{JobStatus, nearest_rank};
use store::Store;
use time::OffsetDateTime;

use crate::flags::DbArg;
use crate::flags::cadence::human;

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let store = crate::common::open(&args.db.db).await?;
    let report = report(&*store, OffsetDateTime::now_utc()).await?;
    say!("{}", report.trim_end());
    Ok(())
}

fn age(now: OffsetDateTime, then: OffsetDateTime) -> String {
    let d = now - then;
    if d.is_negative() {
        format!("in {}", human((-d).unsigned_abs()))
    } else {
        format!("{} ago", human(d.unsigned_abs()))
    }
}

/// What `rampart status` prints.
async fn report(store: &dyn Store, now: OffsetDateTime) -> Result<String> {
    use std::fmt::Write as _;
    let mut out = String::new();

    writeln!(out, "Queue (waiting, running, dead and cancelled jobs by kind):")?;
    let counts = store.job_counts().await?;
    if counts.is_empty() {
        writeln!(out, "  empty")?;
    }
    for c in &counts {
        writeln!(
            out,
            "  {:<8} {:<10} {:>7}   oldest queued {}",
            c.kind,
            c.status.as_str(),
            c.count,
            age(now, c.oldest)
        )?;
    }

    let companies = store.company_count().await?;
    let times = store.rating_times().await?;
    let mut ages: Vec<Duration> = times.iter().map(|t| (now - *t).unsigned_abs()).collect();
    ages.sort();
    writeln!(out, "Ratings: {} of {companies} companies rated", times.len())?;
    if let (Some(p50), Some(p90), Some(p99), Some(oldest)) =
        (nearest_rank(&ages, 0.5), nearest_rank(&ages, 0.9), nearest_rank(&ages, 0.99), ages.last())
    {
        writeln!(
            out,
            "  age of the latest rating: p50 {}, p90 {}, p99 {}, oldest {}",
            human(p50),
            human(p90),
            human(p99),
            human(*oldest)
        )?;
    }

    let next = store.next_rescans(5).await?;
    writeln!(out, "Next scheduled rescans:")?;
    if next.is_empty() {
        writeln!(out, "  none planned (no scheduler has run: rampart worker --rescan-every)")?;
    }
    for (id, at) in &next {
        writeln!(out, "  {:<32} {} ({})", id.as_str(), model::timefmt::rfc3339(*at), age(now, *at))?;
    }

    let dead = store.jobs(Some(JobStatus::Dead), 5).await?;
    writeln!(out, "Dead jobs (latest {}; rampart jobs list --status dead):", dead.len())?;
    if dead.is_empty() {
        writeln!(out, "  none")?;
    }
    for j in &dead {
        let error: String = j.last_error.as_deref().unwrap_or("").chars().take(120).collect();
        writeln!(out, "  #{:<6} {:<30} {error}", j.id, j.spec.to_string())?;
    }

    let open = store.disputes(None, Some(model::DisputeState::Open), model::Page::FIRST).await?.total;
    writeln!(out, "Disputes: {open} open (rampart disputes list)")?;
    let wrong = store.false_positives().await?;
    writeln!(out, "False positives by check (findings closed by an accepted `incorrect` dispute):")?;
    if wrong.is_empty() {
        writeln!(out, "  none")?;
    }
    for (code, n) in &wrong {
        writeln!(out, "  {code:<40} {n:>6}")?;
    }

    writeln!(out, "Feeds (last synchronised):")?;
    let feeds = store.feed_ages().await?;
    if feeds.is_empty() {
        writeln!(out, "  never synchronised (rampart sync)")?;
    }
    for (feed, at) in &feeds {
        writeln!(out, "  {feed:<6} {}", age(now, *at))?;
    }
    Ok(out)
}
