//! [`crate::Companies`].

use super::*;

#[async_trait]
impl crate::Companies for Backend {
    async fn save_company(&self, snapshot: &CompanySnapshot) -> Result<Company> {
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut tx = self.begin().await?;
        let id = upsert_profile(&mut tx, &snapshot.profile, &now).await?;
        write_snapshot(&mut tx, id, snapshot).await?;
        tx.commit().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{COMPANY_SELECT} WHERE c.id = $1")))
            .bind(id)
            .fetch_one(self.writer())
            .await?;
        company_from_row(&row)
    }

    async fn company_by_social_id(&self, social_id: &SocialId) -> Result<Option<Company>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{COMPANY_SELECT} WHERE c.social_id = $1")))
            .bind(social_id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(company_from_row).transpose()
    }

    async fn company_ids(&self, after: i64, limit: u32) -> Result<Vec<(i64, SocialId)>> {
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT id, social_id FROM companies WHERE id > $1 ORDER BY id LIMIT CAST($2 AS BIGINT)")
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(&mut *self.reader().await?)
                .await?;
        rows.into_iter()
            .map(|(id, s)| Ok((id, SocialId::parse(&s).map_err(|_| StoreError::Corrupt(format!("social_id {s:?}")))?)))
            .collect()
    }

    async fn company_count(&self) -> Result<u64> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM companies").fetch_one(&mut *self.reader().await?).await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn company_by_domain(&self, domain: &Domain) -> Result<Option<Company>> {
        for name in domain.self_and_parents() {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "{COMPANY_SELECT} WHERE c.id IN (SELECT company_id FROM domains WHERE name = $1 AND verified) \
                 ORDER BY (c.domain = $1) DESC, c.id LIMIT 1"
            )))
            .bind(name)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
            if let Some(row) = row {
                return company_from_row(&row).map(Some);
            }
        }
        Ok(None)
    }

    async fn search_companies(&self, needle: &str, page: Page) -> Result<Paged<Company>> {
        if has_nul(needle) {
            return Ok(Paged { items: Vec::new(), total: 0 });
        }
        let needle = needle.trim().to_lowercase();
        let pattern = format!("%{}%", like_escape(&needle));
        let prefix = format!("{}%", like_escape(&needle));
        self.companies_page(
            "c.name_lc LIKE $1 ESCAPE '\\'",
            "(c.name_lc = $3) DESC, (c.name_lc LIKE $2 ESCAPE '\\') DESC, c.name_lc, c.id",
            &[&pattern, &prefix, &needle],
            None,
            Some(page),
        )
        .await
    }

    async fn companies_by_normalised_name(&self, name: &str, limit: u32) -> Result<Vec<Company>> {
        if name.is_empty() || has_nul(name) {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "{COMPANY_SELECT} WHERE c.name_norm = $1 ORDER BY c.id LIMIT {limit}"
        )))
        .bind(name)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(company_from_row).collect()
    }

    async fn set_scan_error(&self, company: i64, error: Option<&str>) -> Result<()> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        sqlx::query(
            "UPDATE companies SET scan_error = $2, scan_error_at = CASE WHEN $2 IS NULL THEN NULL ELSE $3 END WHERE id = $1",
        )
        .bind(company)
        .bind(error)
        .bind(&now)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    async fn scan_error(&self, company: i64) -> Result<Option<(String, OffsetDateTime)>> {
        let row: Option<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT scan_error, scan_error_at FROM companies WHERE id = $1")
                .bind(company)
                .fetch_optional(&mut *self.reader().await?)
                .await?;
        let Some((Some(error), Some(at))) = row else { return Ok(None) };
        let at = OffsetDateTime::parse(&at, &time::format_description::well_known::Rfc3339)
            .map_err(|e| corrupt("scan_error_at", e.to_string()))?;
        Ok(Some((error, at)))
    }

    async fn set_dkim_selectors(&self, company: i64, selectors: &[String]) -> Result<()> {
        let json = (!selectors.is_empty())
            .then(|| serde_json::to_string(selectors))
            .transpose()
            .map_err(|e| corrupt("dkim_selectors", e.to_string()))?;
        self.grouped_one(move |tx| {
            Box::pin(async move {
                sqlx::query("UPDATE companies SET dkim_selectors = $2 WHERE id = $1")
                    .bind(company)
                    .bind(json)
                    .execute(&mut *tx)
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn dkim_selectors(&self, company: i64) -> Result<Vec<String>> {
        let row: Option<(Option<String>,)> = sqlx::query_as("SELECT dkim_selectors FROM companies WHERE id = $1")
            .bind(company)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        match row {
            Some((Some(json),)) => serde_json::from_str(&json).map_err(|e| corrupt("dkim_selectors", e.to_string())),
            _ => Ok(Vec::new()),
        }
    }

    async fn data_versions(&self) -> Result<crate::DataVersions> {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT scope, version FROM data_versions").fetch_all(&mut *self.reader().await?).await?;
        Ok(crate::DataVersions::from_rows(rows))
    }

    async fn add_lookups(&self, counts: &[(i64, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.grouped(move |tx| {
            Box::pin(async move {
                for (id, n) in counts {
                    sqlx::query("UPDATE companies SET searched_by = searched_by + $2 WHERE id = $1")
                        .bind(id)
                        .bind(n)
                        .execute(&mut *tx)
                        .await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn last_scanned(&self, page: Page) -> Result<Paged<Company>> {
        self.companies_page("c.last_scanned_at IS NOT NULL", "c.last_scanned_at DESC, c.id DESC", &[], None, Some(page))
            .await
    }

    async fn link_subsidiary(&self, parent: i64, child: i64) -> Result<bool> {
        if parent == child {
            return Err(StoreError::Invalid("a company cannot be its own subsidiary".into()));
        }
        let now = rfc3339(OffsetDateTime::now_utc());
        self.grouped_one(move |tx| Box::pin(async move { link(tx, parent, child, &now).await })).await
    }

    async fn record_subsidiary_request(
        &self,
        parent: i64,
        child: i64,
        key_id: Option<i64>,
        state: SubsidiaryState,
    ) -> Result<i64> {
        if parent == child {
            return Err(StoreError::Invalid("a company cannot be its own subsidiary".into()));
        }
        let now = rfc3339(OffsetDateTime::now_utc());
        self.grouped(move |tx| {
            Box::pin(async move {
                if state == SubsidiaryState::Pending {
                    // Two processes asking at once: the unique index on pending requests
                    // lets one insert; the other inserts nothing and reads its id.
                    let inserted: Option<i64> = sqlx::query_scalar(
                        "INSERT INTO subsidiary_requests (parent_id, child_id, key_id, state, created_at) \
                         VALUES ($1, $2, $3, 'pending', $4) ON CONFLICT DO NOTHING RETURNING id",
                    )
                    .bind(parent)
                    .bind(child)
                    .bind(key_id)
                    .bind(&now)
                    .fetch_optional(&mut *tx)
                    .await?;
                    return match inserted {
                        Some(id) => Ok(id),
                        None => Ok(sqlx::query_scalar(
                            "SELECT id FROM subsidiary_requests WHERE parent_id = $1 AND child_id = $2 AND state = 'pending'",
                        )
                        .bind(parent)
                        .bind(child)
                        .fetch_one(&mut *tx)
                        .await?),
                    };
                }
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO subsidiary_requests (parent_id, child_id, key_id, state, created_at) \
                     VALUES ($1, $2, $3, $4, $5) RETURNING id",
                )
                .bind(parent)
                .bind(child)
                .bind(key_id)
                .bind(state.as_str())
                .bind(&now)
                .fetch_one(&mut *tx)
                .await?;
                if state == SubsidiaryState::Created {
                    link(tx, parent, child, &now).await?;
                }
                Ok(id)
            })
        })
        .await
    }

    async fn subsidiary_requests(&self, state: Option<SubsidiaryState>) -> Result<Vec<SubsidiaryRequest>> {
        self.requests(state, None).await
    }

    async fn decide_subsidiary_request(&self, id: i64, approve: bool, note: &str) -> Result<Option<SubsidiaryRequest>> {
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut tx = self.begin().await?;
        let decided: Option<(i64, i64)> = sqlx::query_as(
            "UPDATE subsidiary_requests SET state = $2, decided_at = $3, note = $4 WHERE id = $1 AND state = 'pending' \
             RETURNING parent_id, child_id",
        )
        .bind(id)
        .bind(if approve { "approved" } else { "rejected" })
        .bind(&now)
        .bind(note)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((parent, child)) = decided else {
            tx.commit().await?;
            return Ok(None);
        };
        if approve {
            link(&mut tx, parent, child, &now).await?;
        }
        tx.commit().await?;
        Ok(self.requests(None, Some(id)).await?.pop())
    }

    async fn companies_created_by_key(&self, key_id: i64, since: OffsetDateTime) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM subsidiary_requests WHERE key_id = $1 AND state = 'created' AND created_at >= $2",
        )
        .bind(key_id)
        .bind(rfc3339(since))
        .fetch_one(&mut *self.reader().await?)
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn unlink_subsidiary(&self, parent: i64, child: i64) -> Result<bool> {
        // No link, nothing to write: found on a read (a repeated delete takes no write).
        if !self.is_subsidiary(parent, child).await? {
            return Ok(false);
        }
        self.grouped_one(move |tx| {
            Box::pin(async move {
                let done = sqlx::query("DELETE FROM subsidiaries WHERE parent_id = $1 AND child_id = $2")
                    .bind(parent)
                    .bind(child)
                    .execute(&mut *tx)
                    .await?;
                Ok(done.rows_affected() > 0)
            })
        })
        .await
    }

    async fn is_subsidiary(&self, parent: i64, child: i64) -> Result<bool> {
        let linked: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM subsidiaries WHERE parent_id = $1 AND child_id = $2)")
                .bind(parent)
                .bind(child)
                .fetch_one(&mut *self.reader().await?)
                .await?;
        Ok(linked)
    }

    async fn subsidiaries(&self, parent: i64, page: Option<Page>) -> Result<Paged<Company>> {
        self.companies_page(
            "c.id IN (SELECT child_id FROM subsidiaries WHERE parent_id = $1)",
            "c.name_lc, c.id",
            &[],
            Some(parent),
            page,
        )
        .await
    }
}
