//! [`crate::Intel`]: the vulnerability database (CVE records, KEV, EPSS, CWE, CAPEC),
//! the feeds' state, fingerprints and end-of-life products. What differs per backend
//! (bulk writes, one-row answers, candidate scans, JSON arrays) is each backend's
//! `intel` module.

use super::*;

#[async_trait]
impl crate::Intel for Backend {
    async fn upsert_cves(&self, cves: &[StoredCve]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let written = write_cves(&mut tx, cves).await?;
        self.commit_cves(tx, written).await
    }

    async fn upsert_cve_batches(&self, batches: &mut Receiver<Vec<StoredCve>>, per_commit: usize) -> Result<usize> {
        self.bulk_upsert_cves(batches, per_commit).await
    }

    async fn settle(&self) -> Result<()> {
        self.settle_after_bulk().await
    }

    async fn cve(&self, id: &CveId) -> Result<Option<CveRecord>> {
        Ok(self.cves(std::slice::from_ref(id)).await?.into_iter().next())
    }

    async fn cves(&self, ids: &[CveId]) -> Result<Vec<CveRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<&str> = ids.iter().map(CveId::as_str).collect();
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT c.id, c.record, CASE WHEN c.record = '' THEN s.served END AS served, k.entry AS kev, e.epss, \
             e.percentile FROM cves c LEFT JOIN cve_served s ON s.id = c.id \
             LEFT JOIN kev k ON k.cve_id = c.id LEFT JOIN epss e ON e.cve_id = c.id \
             WHERE {}",
            in_list("c.id", 1)
        )))
        .bind(list(&wanted)?)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let mut by_id: std::collections::HashMap<String, CveRecord> =
            std::collections::HashMap::with_capacity(rows.len());
        for row in rows {
            let mut rec = record(row.try_get("record")?, row.try_get("served")?)?;
            let kev: Option<String> = row.try_get("kev")?;
            if let Some(k) = kev {
                rec.kev = Some(json(&k)?);
            }
            if let Some(e) = row.try_get::<Option<f64>, _>("epss")? {
                rec.epss = Some(e);
                rec.percentile = row.try_get("percentile")?;
            }
            by_id.insert(row.try_get("id")?, rec);
        }
        Ok(ids.iter().filter_map(|id| by_id.remove(id.as_str())).collect())
    }

    async fn served_cves(&self, ids: &[CveId]) -> Result<Vec<ServedCve>> {
        self.served_cves_joined(ids).await
    }

    async fn cve_candidates(&self, q: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>> {
        self.candidates(q).await
    }

    async fn last_cves(&self, limit: u32) -> Result<Vec<CveRecord>> {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT c.record, CASE WHEN c.record = '' THEN s.served END FROM cves c \
             LEFT JOIN cve_served s ON s.id = c.id ORDER BY c.last_modified DESC, c.id DESC LIMIT CAST($1 AS BIGINT)",
        )
        .bind(i64::from(limit))
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(|(r, served)| record(r, served.as_deref()))
        .collect()
    }

    async fn vendors(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT DISTINCT vendor FROM cpe_products ORDER BY vendor")
            .fetch_all(&mut *self.reader().await?)
            .await?)
    }

    async fn products(&self, vendor: &str) -> Result<Vec<String>> {
        if has_nul(vendor) {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_scalar("SELECT product FROM cpe_products WHERE vendor = $1 ORDER BY product")
            .bind(vendor)
            .fetch_all(&mut *self.reader().await?)
            .await?)
    }

    async fn save_kev(&self, entries: &[KevRow]) -> Result<usize> {
        // The catalogue replaces the stored one, and only what differs is written: each
        // write leaves its CVE in the change log (`cve_changes`), whose companies are
        // matched again.
        let mut tx = self.begin().await?;
        let stored: BTreeMap<String, (String, String)> =
            sqlx::query_as::<_, (String, String, String)>("SELECT cve_id, date_added, entry FROM kev")
                .fetch_all(&mut *tx)
                .await?
                .into_iter()
                .map(|(id, date, entry)| (id, (date, entry)))
                .collect();
        let mut given = std::collections::BTreeSet::new();
        for e in entries {
            let entry = to_json(&e.entry)?;
            given.insert(e.cve_id.as_str());
            if stored.get(e.cve_id.as_str()).is_some_and(|(date, old)| *date == e.date_added && *old == entry) {
                continue;
            }
            sqlx::query("INSERT INTO kev (cve_id, date_added, entry) VALUES ($1, $2, $3) ON CONFLICT (cve_id) DO UPDATE SET date_added = excluded.date_added, entry = excluded.entry")
                .bind(e.cve_id.as_str())
                .bind(&e.date_added)
                .bind(entry)
                .execute(&mut *tx)
                .await?;
        }
        for gone in stored.keys().filter(|id| !given.contains(id.as_str())) {
            sqlx::query("DELETE FROM kev WHERE cve_id = $1").bind(gone).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(entries.len())
    }

    async fn save_epss(&self, scores: &[EpssRow], score_date: &str) -> Result<usize> {
        let mut tx = self.begin().await?;
        for e in scores {
            sqlx::query(
                "INSERT INTO epss (cve_id, epss, percentile, score_date) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (cve_id) DO UPDATE SET epss = excluded.epss, percentile = excluded.percentile, score_date = excluded.score_date",
            )
            .bind(e.cve_id.as_str())
            .bind(e.epss)
            .bind(e.percentile)
            .bind(score_date)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(scores.len())
    }

    async fn save_cwe(&self, weaknesses: &[CweRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        for w in weaknesses {
            sqlx::query("INSERT INTO cwe (id, name, capec_ids) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET name = excluded.name, capec_ids = excluded.capec_ids")
                .bind(i64::from(w.id))
                .bind(&w.name)
                .bind(to_json(&w.capec_ids)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(weaknesses.len())
    }

    async fn save_capec(&self, patterns: &[CapecRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        for p in patterns {
            sqlx::query("INSERT INTO capec (id, record, related_weaknesses) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET record = excluded.record, related_weaknesses = excluded.related_weaknesses")
                .bind(i64::from(p.id))
                .bind(to_json(&p.record)?)
                .bind(to_json(&p.related_weaknesses)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(patterns.len())
    }

    async fn capec_for_cwes(&self, cwes: &[&str]) -> Result<BTreeMap<String, Vec<serde_json::Value>>> {
        self.capec_of_cwes(cwes).await
    }

    async fn feed_state(&self, feed: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT value FROM feed_state WHERE feed = $1")
            .bind(feed)
            .fetch_optional(&mut *self.reader().await?)
            .await?)
    }

    async fn cve_changes(&self, limit: u32) -> Result<Vec<(i64, CveId)>> {
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT seq, cve_id FROM cve_changes ORDER BY seq LIMIT CAST($1 AS BIGINT)")
                .bind(i64::from(limit))
                .fetch_all(&mut *self.reader().await?)
                .await?;
        rows.into_iter().map(|(seq, id)| Ok((seq, CveId::parse(&id).map_err(|_| corrupt("CVE id", &id))?))).collect()
    }

    async fn forget_cve_changes(&self, through: i64) -> Result<u64> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("DELETE FROM cve_changes WHERE seq <= $1").bind(through).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }

    async fn feed_ages(&self) -> Result<Vec<(String, OffsetDateTime)>> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT feed, updated_at FROM feed_state ORDER BY feed")
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.into_iter().map(|(feed, at)| Ok((feed, ts(&at)?))).collect()
    }

    async fn set_feed_state(&self, feed: &str, value: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO feed_state (feed, value, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (feed) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(feed)
        .bind(value)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(self.writer())
        .await?;
        Ok(())
    }

    async fn save_fingerprints(&self, source: &str, rules: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, rule) in rules {
            sqlx::query(
                "INSERT INTO fingerprints (name, source, rule, imported_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (name) DO UPDATE SET source = excluded.source, rule = excluded.rule, imported_at = excluded.imported_at",
            )
            .bind(name)
            .bind(source)
            .bind(rule)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(rules.len())
    }

    async fn fingerprints(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT name, rule FROM fingerprints ORDER BY name")
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("rule")?))).collect()
    }

    async fn save_eol_products(&self, products: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, product) in products {
            sqlx::query(
                "INSERT INTO eol_products (name, product, imported_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET product = excluded.product, imported_at = excluded.imported_at",
            )
            .bind(name)
            .bind(product)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(products.len())
    }

    async fn eol_products(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT name, product FROM eol_products ORDER BY name")
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("product")?))).collect()
    }

    async fn save_advisories(&self, rows: &[AdvisoryRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for r in rows {
            sqlx::query(
                "INSERT INTO advisories (cve_id, key, vendor, product, package, statement, imported_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (cve_id, key) DO UPDATE SET vendor = excluded.vendor, product = excluded.product, \
                 package = excluded.package, statement = excluded.statement, imported_at = excluded.imported_at \
                 WHERE advisories.statement <> excluded.statement OR advisories.vendor IS DISTINCT FROM excluded.vendor \
                 OR advisories.product IS DISTINCT FROM excluded.product",
            )
            .bind(r.cve_id.as_str())
            .bind(&r.key)
            .bind(r.vendor.as_deref())
            .bind(r.product.as_deref())
            .bind(r.package.as_deref())
            .bind(&r.statement)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(rows.len())
    }

    async fn advisories_for(&self, vendor: &str, product: &str) -> Result<Vec<AdvisoryRow>> {
        let rows = sqlx::query(
            "SELECT cve_id, key, vendor, product, package, statement FROM advisories \
             WHERE vendor = $1 AND product = $2 ORDER BY cve_id, key",
        )
        .bind(vendor)
        .bind(product)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let cve: String = r.try_get("cve_id")?;
                Ok(AdvisoryRow {
                    cve_id: CveId::parse(&cve).map_err(|_| corrupt("advisory CVE id", &cve))?,
                    key: r.try_get("key")?,
                    vendor: r.try_get("vendor")?,
                    product: r.try_get("product")?,
                    package: r.try_get("package")?,
                    statement: r.try_get("statement")?,
                })
            })
            .collect()
    }
}
