//! [`crate::Events`] on SQLite.

use model::{Delivery, Event, EventKind, EventLink, NewEvent, NewWebhook, Webhook};

use crate::events::{kinds_of, kinds_text};

use super::*;

const EVENT_COLUMNS: &str = "e.id, e.company_id, c.social_id, c.company_name, e.kind, e.subject, e.occurred_at, \
     e.summary, e.data, e.links";
const WEBHOOK_COLUMNS: &str = "w.id, w.company_id, c.social_id, w.url, w.secret, w.kinds, w.created_at";

fn event_from_row(row: &SqliteRow) -> Result<Event> {
    let kind: String = row.try_get("kind")?;
    let social: String = row.try_get("social_id")?;
    let data: String = row.try_get("data")?;
    let links: String = row.try_get("links")?;
    let at: String = row.try_get("occurred_at")?;
    Ok(Event {
        id: row.try_get("id")?,
        company: row.try_get("company_id")?,
        social_id: SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?,
        company_name: row.try_get("company_name")?,
        kind: EventKind::parse(&kind).map_err(|_| corrupt("event kind", &kind))?,
        subject: row.try_get("subject")?,
        occurred_at: ts(&at)?,
        summary: row.try_get("summary")?,
        data: json(&data)?,
        links: json::<Vec<EventLink>>(&links)?,
    })
}

fn webhook_from_row(row: &SqliteRow) -> Result<Webhook> {
    let social: String = row.try_get("social_id")?;
    let kinds: String = row.try_get("kinds")?;
    let at: String = row.try_get("created_at")?;
    Ok(Webhook {
        id: row.try_get("id")?,
        company: row.try_get("company_id")?,
        social_id: SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?,
        url: row.try_get("url")?,
        secret: row.try_get("secret")?,
        kinds: kinds_of(&kinds)?,
        created_at: ts(&at)?,
    })
}

fn delivery_from_row(row: &SqliteRow) -> Result<Delivery> {
    let at: String = row.try_get("at")?;
    let status: Option<i64> = row.try_get("status")?;
    let millis: i64 = row.try_get("millis")?;
    Ok(Delivery {
        webhook: row.try_get("webhook_id")?,
        event: row.try_get("event_id")?,
        attempt: row.try_get("attempt")?,
        at: ts(&at)?,
        status: status.and_then(|s| u16::try_from(s).ok()),
        outcome: row.try_get("outcome")?,
        error: row.try_get("error")?,
        millis: u64::try_from(millis).unwrap_or(0),
    })
}

#[async_trait]
impl crate::Events for SqliteStore {
    async fn record_events(&self, events: &[NewEvent]) -> Result<Vec<Event>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.begin().await?;
        let mut ids = Vec::new();
        for e in events {
            let id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO events (company_id, kind, subject, occurred_at, summary, data, links) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING RETURNING id",
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
                format!("SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id WHERE e.id = ?1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_one(&mut *tx).await?;
            kept.push(event_from_row(&row)?);
        }
        tx.commit().await?;
        Ok(kept)
    }

    async fn events(&self, companies: &[i64], page: Page) -> Result<Paged<Event>> {
        let ids = to_json(&companies)?;
        let mut conn = self.read.get().await?;
        let total: i64 =
            sqlx::query_scalar("SELECT count(*) FROM events WHERE company_id IN (SELECT value FROM json_each(?1))")
                .bind(&ids)
                .fetch_one(&mut *conn)
                .await?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id \
             WHERE e.company_id IN (SELECT value FROM json_each(?1)) \
             ORDER BY e.occurred_at DESC, e.id DESC LIMIT CAST(?2 AS INTEGER) OFFSET ?3"
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
            format!("SELECT {EVENT_COLUMNS} FROM events e JOIN companies c ON c.id = e.company_id WHERE e.id = ?1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *self.read.get().await?).await?;
        row.as_ref().map(event_from_row).transpose()
    }

    async fn add_webhook(&self, webhook: &NewWebhook) -> Result<Webhook> {
        let mut tx = self.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO webhooks (company_id, url, secret, kinds, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        )
        .bind(webhook.company)
        .bind(&webhook.url)
        .bind(&webhook.secret)
        .bind(kinds_text(&webhook.kinds))
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .fetch_one(&mut *tx)
        .await?;
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id WHERE w.id = ?1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        webhook_from_row(&row)
    }

    async fn webhooks(&self) -> Result<Vec<Webhook>> {
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id ORDER BY w.id");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(webhook_from_row)
            .collect()
    }

    async fn webhook(&self, id: i64) -> Result<Option<Webhook>> {
        let sql =
            format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id WHERE w.id = ?1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *self.read.get().await?).await?;
        row.as_ref().map(webhook_from_row).transpose()
    }

    async fn remove_webhook(&self, id: i64) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("DELETE FROM webhooks WHERE id = ?1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn webhooks_for(&self, company: i64) -> Result<Vec<Webhook>> {
        let sql = format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks w JOIN companies c ON c.id = w.company_id \
             WHERE w.company_id = ?1 OR w.company_id IN (SELECT parent_id FROM subsidiaries WHERE child_id = ?1) \
             ORDER BY w.id"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(company)
            .fetch_all(&mut *self.read.get().await?)
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
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?1) \
             AND EXISTS (SELECT 1 FROM events WHERE id = ?2)",
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
        sqlx::query("SELECT * FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT CAST(?2 AS INTEGER)")
            .bind(webhook)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(delivery_from_row)
            .collect()
    }
}
