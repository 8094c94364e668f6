//! [`crate::Findings`].

use super::*;

#[async_trait]
impl crate::Findings for Backend {
    async fn findings(&self, company: i64, filter: FindingFilter<'_>, page: Page) -> Result<Paged<Finding>> {
        const WHERE: &str =
            "company_id = $1 AND closed_at IS NULL AND ($2 IS NULL OR asset = $2) AND ($3 IS NULL OR risk_vector = $3)";
        let rv = filter.risk_vector.map(RiskVector::as_str);
        let total: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM findings WHERE {WHERE}")))
                .bind(company)
                .bind(filter.asset)
                .bind(rv)
                .fetch_one(&mut *self.reader().await?)
                .await?;
        let items = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT * FROM findings WHERE {WHERE} ORDER BY severity_rank DESC, risk_vector, asset, code, id LIMIT CAST($4 AS BIGINT) OFFSET $5"
        )))
        .bind(company)
        .bind(filter.asset)
        .bind(rv)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }

    async fn record_scan(
        &self,
        company: i64,
        scope: ScanScope<'_>,
        findings: &[Finding],
        scanned_at: OffsetDateTime,
    ) -> Result<ScanOutcome> {
        let vectors: Vec<&str> = scope.risk_vectors.iter().map(|v| v.as_str()).collect();
        let mut tx = self.begin().await?;
        let mut outcome = ScanOutcome::default();
        let mut kept = Vec::with_capacity(findings.len());
        for f in findings {
            let in_scope = match scope.asset {
                None => true,
                Some(a) if scope.below => crate::asset_under(&f.asset, a),
                Some(a) => a == f.asset,
            };
            if !scope.risk_vectors.contains(&f.risk_vector) || !in_scope {
                return Err(StoreError::Invalid(format!(
                    "finding {} on {} is outside the scan's scope",
                    f.code, f.asset
                )));
            }
            let open: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM findings WHERE company_id = $1 AND risk_vector = $2 AND asset = $3 AND code = $4 \
                 AND subject = $5 AND closed_at IS NULL",
            )
            .bind(company)
            .bind(f.risk_vector.as_str())
            .bind(&f.asset)
            .bind(&f.code)
            .bind(crate::finding_subject(f))
            .fetch_optional(&mut *tx)
            .await?;
            if open.is_some() {
                outcome.seen_again += 1;
            } else {
                outcome.opened += 1;
            }
            kept.push(upsert_finding(&mut tx, company, f).await?);
        }
        if !scope.close_missing {
            tx.commit().await?;
            return Ok(outcome);
        }
        kept.extend_from_slice(scope.keep_open);
        let closed = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET closed_at = $4 WHERE company_id = $1 AND closed_at IS NULL \
             AND {vectors} \
             AND ($3 IS NULL OR asset = $3 OR ($6 AND (asset LIKE '%.' || $3 OR asset LIKE '%.' || $3 || ':%' \
                  OR asset LIKE '%://' || $3 || '/%' OR asset LIKE '%.' || $3 || '/%' OR asset LIKE $3 || ':%'))) \
             AND NOT ({kept})",
            vectors = in_list("risk_vector", 2),
            kept = in_list("id", 5),
        )))
        .bind(company)
        .bind(list(&vectors)?)
        .bind(scope.asset)
        .bind(rfc3339(scanned_at))
        .bind(list(&kept)?)
        .bind(scope.below)
        .execute(&mut *tx)
        .await?;
        outcome.closed = u32::try_from(closed.rows_affected()).unwrap_or(u32::MAX);
        tx.commit().await?;
        Ok(outcome)
    }

    async fn closed_findings(&self, company: i64) -> Result<Vec<(Finding, OffsetDateTimeText)>> {
        let rows = sqlx::query(
            "SELECT * FROM findings WHERE company_id = $1 AND closed_at IS NOT NULL ORDER BY closed_at DESC, id",
        )
        .bind(company)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let closed: String = r.try_get("closed_at")?;
                Ok((finding_from_row(r)?, ts_text(&closed)?))
            })
            .collect()
    }

    async fn top_findings(&self, company: i64, per_vector: u32) -> Result<Vec<Finding>> {
        sqlx::query(
            "SELECT * FROM (SELECT f.*, row_number() OVER (PARTITION BY risk_vector \
             ORDER BY severity_rank DESC, asset, code, id) AS rn FROM findings f WHERE company_id = $1 AND closed_at IS NULL) t \
             WHERE rn <= $2 ORDER BY risk_vector, rn",
        )
        .bind(company)
        .bind(i64::from(per_vector))
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect()
    }

    async fn open_findings(&self, company: i64) -> Result<Vec<Finding>> {
        sqlx::query(
            "SELECT * FROM findings WHERE company_id = $1 AND closed_at IS NULL ORDER BY risk_vector, asset, code, id",
        )
        .bind(company)
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect()
    }

    async fn replace_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM scores WHERE company_id = $1 AND scanned_at = $2")
            .bind(company)
            .bind(rfc3339(rating.scanned_at.0))
            .execute(&mut *tx)
            .await?;
        insert_score(&mut tx, company, rating).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn latest_score(&self, company: i64) -> Result<Option<ScoreSnapshot>> {
        Ok(self.score_history(company, 1).await?.into_iter().next())
    }

    async fn score_history(&self, company: i64, limit: u32) -> Result<Vec<ScoreSnapshot>> {
        let rows = sqlx::query(
            "SELECT id, scanned_at, score, grade, methodology, notes, reason, depth FROM scores WHERE company_id = $1 ORDER BY scanned_at DESC LIMIT CAST($2 AS BIGINT)",
        )
        .bind(company)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        self.load_scores(rows).await
    }

    async fn score_history_page(&self, company: i64, page: model::Page) -> Result<crate::Paged<ScoreSnapshot>> {
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM scores WHERE company_id = $1")
            .bind(company)
            .fetch_one(&mut *self.reader().await?)
            .await?;
        let rows = sqlx::query(
            "SELECT id, scanned_at, score, grade, methodology, notes, reason, depth FROM scores WHERE company_id = $1 \
             ORDER BY scanned_at DESC, id DESC LIMIT CAST($2 AS BIGINT) OFFSET $3",
        )
        .bind(company)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        Ok(crate::Paged { items: self.load_scores(rows).await?, total: u64::try_from(total).unwrap_or(0) })
    }
}
