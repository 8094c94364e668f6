//! [`crate::Schedule`].

use crate::schedule::{RescanPlan, ScheduleRow, every, secs};

use super::*;

/// Whether an active monitor key is bound to the company `c`, or to a parent of it.
const WATCHED: &str = "(EXISTS (SELECT 1 FROM api_keys k WHERE k.active AND k.company = c.social_id \
       AND (',' || k.scopes || ',') LIKE '%,monitor,%') \
     OR EXISTS (SELECT 1 FROM subsidiaries l JOIN companies p ON p.id = l.parent_id \
       JOIN api_keys k ON k.company = p.social_id \
       WHERE l.child_id = c.id AND k.active AND (',' || k.scopes || ',') LIKE '%,monitor,%'))";

fn schedule_row(row: &DbRow) -> Result<ScheduleRow> {
    let time = |col: &str| -> Result<Option<OffsetDateTime>> {
        row.try_get::<Option<String>, _>(col)?.as_deref().map(ts).transpose()
    };
    let social: String = row.try_get("social_id")?;
    let last_scan = time("last_scanned_at")?.max(time("scan_error_at")?);
    Ok(ScheduleRow {
        company: row.try_get("id")?,
        social_id: SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?,
        last_scan,
        queued_at: time("queued_at")?,
        next_at: time("next_at")?,
        every: every(row.try_get("every_secs")?),
        planned_every: every(row.try_get("planned_secs")?),
        watched: row.try_get("watched")?,
    })
}

#[async_trait]
impl crate::Schedule for Backend {
    async fn hold_lease(&self, name: &str, holder: &str, ttl: Duration, now: OffsetDateTime) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query(
            "INSERT INTO role_leases (name, holder, until) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until \
             WHERE role_leases.holder = excluded.holder OR role_leases.until < $4",
        )
        .bind(name)
        .bind(holder)
        .bind(rfc3339_micros(now + ttl))
        .bind(rfc3339_micros(now))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn drop_lease(&self, name: &str, holder: &str) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM role_leases WHERE name = $1 AND holder = $2")
            .bind(name)
            .bind(holder)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn rescan_candidates(
        &self,
        now: OffsetDateTime,
        default_every: Duration,
        limit: u32,
    ) -> Result<Vec<ScheduleRow>> {
        let sql = format!(
            "SELECT c.id, c.social_id, c.last_scanned_at, c.scan_error_at, s.queued_at, s.next_at, s.every_secs, \
             s.planned_secs, {WATCHED} AS watched \
             FROM companies c LEFT JOIN rescan_schedule s ON s.company_id = c.id \
             WHERE s.next_at IS NULL OR s.next_at <= $1 OR s.planned_secs IS DISTINCT FROM COALESCE(s.every_secs, $2) \
             ORDER BY watched DESC, \
               (c.last_scanned_at IS NULL AND c.scan_error_at IS NULL AND s.queued_at IS NULL) DESC, \
               s.next_at IS NOT NULL, s.next_at, c.id \
             LIMIT CAST($3 AS BIGINT)"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(rfc3339_micros(now))
            .bind(secs(default_every))
            .bind(i64::from(limit))
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(schedule_row)
            .collect()
    }

    async fn plan_rescans(&self, plans: &[RescanPlan]) -> Result<()> {
        if plans.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin().await?;
        for plan in plans {
            sqlx::query(
                "INSERT INTO rescan_schedule (company_id, next_at, planned_secs, queued_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (company_id) DO UPDATE SET next_at = excluded.next_at, \
                 planned_secs = excluded.planned_secs, queued_at = COALESCE(excluded.queued_at, rescan_schedule.queued_at)",
            )
            .bind(plan.company)
            .bind(rfc3339_micros(plan.next_at))
            .bind(secs(plan.every))
            .bind(plan.queued_at.map(rfc3339_micros))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn set_cadence(&self, company: i64, every: Option<Duration>) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO rescan_schedule (company_id, every_secs) VALUES ($1, $2) \
             ON CONFLICT (company_id) DO UPDATE SET every_secs = excluded.every_secs, next_at = NULL",
        )
        .bind(company)
        .bind(every.map(secs))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn cadence(&self, company: i64) -> Result<Option<Duration>> {
        let secs: Option<Option<i64>> =
            sqlx::query_scalar("SELECT every_secs FROM rescan_schedule WHERE company_id = $1")
                .bind(company)
                .fetch_optional(&mut *self.reader().await?)
                .await?;
        Ok(every(secs.flatten()))
    }

    async fn next_rescans(&self, limit: u32) -> Result<Vec<(SocialId, OffsetDateTime)>> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT c.social_id, s.next_at FROM rescan_schedule s JOIN companies c ON c.id = s.company_id \
             WHERE s.next_at IS NOT NULL ORDER BY s.next_at, c.id LIMIT CAST($1 AS BIGINT)",
        )
        .bind(i64::from(limit))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.into_iter()
            .map(|(social, at)| Ok((SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?, ts(&at)?)))
            .collect()
    }

    async fn rating_times(&self) -> Result<Vec<OffsetDateTime>> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT last_scanned_at FROM companies WHERE last_scanned_at IS NOT NULL ORDER BY last_scanned_at",
        )
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let mut times = rows.iter().map(|t| ts(t)).collect::<Result<Vec<_>>>()?;
        times.sort();
        Ok(times)
    }
}
