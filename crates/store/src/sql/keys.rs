//! [`crate::Keys`]: API keys and their monthly usage.

use super::*;

#[async_trait]
impl crate::Keys for Backend {
    async fn create_key(&self, key: &NewApiKey) -> Result<ApiKey> {
        let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
        let row = sqlx::query(
            "INSERT INTO api_keys (name, prefix, hash, scopes, company, per_minute, monthly, active, created_at, org_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8, $9) RETURNING *",
        )
        .bind(&key.name)
        .bind(&key.prefix)
        .bind(&key.hash)
        .bind(scopes.join(","))
        .bind(key.company.as_ref().map(SocialId::as_str))
        .bind(i64::from(key.per_minute))
        .bind(i64::try_from(key.monthly).unwrap_or(i64::MAX))
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .bind(key.org)
        .fetch_one(self.writer())
        .await?;
        key_from_row(&row)
    }

    async fn key_by_hash(&self, hash: &str) -> Result<Option<ApiKey>> {
        if has_nul(hash) {
            return Ok(None);
        }
        let row = sqlx::query("SELECT * FROM api_keys WHERE hash = $1")
            .bind(hash)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn keys(&self) -> Result<Vec<ApiKey>> {
        sqlx::query("SELECT * FROM api_keys ORDER BY id")
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(key_from_row)
            .collect()
    }

    async fn set_key_active(&self, id_or_prefix: &str, active: bool) -> Result<bool> {
        if has_nul(id_or_prefix) {
            return Ok(false);
        }
        let matches: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM api_keys WHERE CAST(id AS TEXT) = $1 OR prefix = $1")
                .bind(id_or_prefix)
                .fetch_all(self.writer())
                .await?;
        match matches.as_slice() {
            [] => Ok(false),
            [id] => {
                sqlx::query("UPDATE api_keys SET active = $2 WHERE id = $1")
                    .bind(id)
                    .bind(active)
                    .execute(self.writer())
                    .await?;
                Ok(true)
            }
            _ => Err(StoreError::Invalid(format!("{id_or_prefix:?} matches several keys: use the id"))),
        }
    }

    async fn usage(&self, key_id: i64, month: &str) -> Result<u64> {
        let n: Option<i64> = sqlx::query_scalar("SELECT requests FROM usage_counters WHERE key_id = $1 AND month = $2")
            .bind(key_id)
            .bind(month)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(n.map_or(0, count))
    }

    async fn add_usage(&self, key_id: i64, month: &str, requests: u64) -> Result<()> {
        let month = month.to_owned();
        self.grouped_one(move |tx| {
            Box::pin(async move {
                sqlx::query(
                    "INSERT INTO usage_counters (key_id, month, requests) VALUES ($1, $2, $3) \
                     ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counters.requests + excluded.requests",
                )
                .bind(key_id)
                .bind(&month)
                .bind(i64::try_from(requests).unwrap_or(i64::MAX))
                .execute(&mut *tx)
                .await?;
                Ok(())
            })
        })
        .await
    }
}
