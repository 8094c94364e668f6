//! `rampart status`: how current the ratings are and what the workers have before them —
//! the queue by kind, the age of the ratings, the next scheduled rescans, dead jobs and
//! the age of each feed. And the cadence arguments (`--rescan-every`, `set-cadence`).

use std::time::Duration;

use anyhow::Result;
use model::{JobStatus, nearest_rank};
use store::Store;
use time::OffsetDateTime;

/// A cadence: a number with a unit (`90s`, `30m`, `24h`, `7d`; a bare number is
/// seconds), from one minute to a year.
pub fn parse_every(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (number, unit) = raw.split_at(split);
    let n: u64 = number.parse().map_err(|_| format!("{raw:?} is not a period like 90s, 30m, 24h or 7d"))?;
    let unit_secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("{raw:?}: the unit is s, m, h or d")),
    };
    let secs = n.checked_mul(unit_secs).ok_or_else(|| format!("{raw:?} is too long"))?;
    if !(60..=366 * 86_400).contains(&secs) {
        return Err(format!("{raw:?}: a period is between 1m and 366d"));
    }
    Ok(Duration::from_secs(secs))
}

/// `--rescan-every`: a cadence, or `off` (`None`) for no scheduler in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RescanEvery(pub Option<Duration>);

pub fn parse_rescan_every(raw: &str) -> Result<RescanEvery, String> {
    if raw.eq_ignore_ascii_case("off") { Ok(RescanEvery(None)) } else { parse_every(raw).map(|d| RescanEvery(Some(d))) }
}

/// A duration as people read it: `3d 4h`, `2h 5m`, `4m 10s`, `12s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    let (days, hours, mins, secs) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match () {
        _ if days > 0 => format!("{days}d {hours}h"),
        _ if hours > 0 => format!("{hours}h {mins}m"),
        _ if mins > 0 => format!("{mins}m {secs}s"),
        _ => format!("{secs}s"),
    }
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
pub async fn report(store: &dyn Store, now: OffsetDateTime) -> Result<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cadences_parse_with_their_units_and_bounds() {
        assert_eq!(parse_every("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_every("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_every("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_every("7d"), Ok(Duration::from_secs(7 * 86_400)));
        for bad in ["", "h", "10", "59s", "367d", "1w", "-5m", "1.5h", "99999999999999999999d", "5 m"] {
            assert!(parse_every(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_rescan_every("off"), Ok(RescanEvery(None)));
        assert_eq!(parse_rescan_every("12h"), Ok(RescanEvery(Some(Duration::from_secs(43_200)))));
    }

    #[test]
    fn durations_read_as_people_read_them() {
        assert_eq!(human(Duration::from_secs(12)), "12s");
        assert_eq!(human(Duration::from_secs(250)), "4m 10s");
        assert_eq!(human(Duration::from_secs(7_500)), "2h 5m");
        assert_eq!(human(Duration::from_secs(3 * 86_400 + 4 * 3_600 + 5)), "3d 4h");
    }
}
