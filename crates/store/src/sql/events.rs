//! [`crate::Events`].

use model::{Delivery, Event, NewEvent, NewWebhook, Webhook};

use crate::events::{EVENT_COLUMNS, WEBHOOK_COLUMNS, kinds_text};

use super::*;

#[async_trait]
impl crate::Events for Backend {
    async fn record_events(&self, events: &[NewEvent]) -> Result<Vec<Event>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.begin().await?;
        let mut ids = Vec::new();
        for e in events {
            let id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO events (company_id, kind, subject, occurred_at, summary, data, links) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(e.company)
            .bind(e.kind.as_str())
            .bind(&e.subject)
            .bind(rfc3339_micros(e.occurred_at))
            .bind(&e.summary)
            .bind(to_json(&e.data)?)
            .bind(to_json(&e.links)?)
            .fetch_optional(&mut *tx)
            .await?;
            ids.extend(id);
        }
        let mut kept = Vec::with_capacity(ids.len());
        for id in ids {
            let sql =
                format!("SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id WHERE e.id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_one(&mut *tx).await?;
            kept.push(event_from_row(&row)?);
        }
        tx.commit().await?;
        Ok(kept)
    }

    async fn events(&self, companies: &[i64], page: Page) -> Result<Paged<Event>> {
        let ids = list(companies)?;
        let mut conn = self.reader().await?;
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM events WHERE {}",
            in_list("company_id", 1)
        )))
        .bind(&ids)
        .fetch_one(&mut *conn)
        .await?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id \
             WHERE {in_companies} \
             ORDER BY e.occurred_at DESC, e.id DESC LIMIT CAST($2 AS BIGINT) OFFSET $3",
            in_companies = in_list("e.company_id", 1)
        );
        let items = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&ids)
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(event_from_row)
            .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }

    async fn event(&self, id: i64) -> Result<Option<Event>> {
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id WHERE e.id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *self.reader().await?).await?;
        row.as_ref().map(event_from_row).transpose()
    }

    async fn add_webhook(&self, webhook: &NewWebhook) -> Result<Webhook> {
        let mut tx = self.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO webhooks (company_id, url, secret, kinds, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(webhook.company)
        .bind(&webhook.url)
        .bind(&webhook.secret)
        .bind(kinds_text(&webhook.kinds))
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .fetch_one(&mut *tx)
        .await?;
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id WHERE w.id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        webhook_from_row(&row)
    }

    async fn webhooks(&self) -> Result<Vec<Webhook>> {
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id ORDER BY w.id");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(webhook_from_row)
            .collect()
    }

    async fn webhook(&self, id: i64) -> Result<Option<Webhook>> {
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id WHERE w.id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *self.reader().await?).await?;
        row.as_ref().map(webhook_from_row).transpose()
    }

    async fn remove_webhook(&self, id: i64) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("DELETE FROM webhooks WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn webhooks_for(&self, company: i64) -> Result<Vec<Webhook>> {
        let sql = format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id \
             WHERE w.company_id = $1 OR w.company_id IN (SELECT parent_id FROM subsidiaries WHERE child_id = $1) \
             ORDER BY w.id"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(company)
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(webhook_from_row)
            .collect()
    }

    async fn record_delivery(&self, d: &Delivery) -> Result<()> {
        let mut tx = self.begin().await?;
        // A webhook removed while its delivery ran: nothing to log it under.
        sqlx::query(
            "INSERT INTO webhook_deliveries (webhook_id, event_id, attempt, at, status, outcome, error, millis) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1) \
             AND EXISTS (SELECT 1 FROM events WHERE id = $2)",
        )
        .bind(d.webhook)
        .bind(d.event)
        .bind(d.attempt)
        .bind(rfc3339_micros(d.at))
        .bind(d.status.map(i64::from))
        .bind(&d.outcome)
        .bind(d.error.as_deref())
        .bind(i64::try_from(d.millis).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn deliveries(&self, webhook: i64, limit: u32) -> Result<Vec<Delivery>> {
        sqlx::query("SELECT * FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT CAST($2 AS BIGINT)")
            .bind(webhook)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(delivery_from_row)
            .collect()
    }
}
