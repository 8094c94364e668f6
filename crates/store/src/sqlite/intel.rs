//! [`crate::Intel`] on SQLite.

use super::*;

#[async_trait]
impl crate::Intel for SqliteStore {
    async fn upsert_cves(&self, cves: &[StoredCve]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let written = write_cves(&mut tx, cves).await?;
        self.commit_cves(tx, written).await
    }

    async fn upsert_cve_batches(&self, batches: &mut Receiver<Vec<StoredCve>>, per_commit: usize) -> Result<usize> {
        let (mut committed, mut pending, mut in_tx) = (0, Vec::new(), 0);
        let mut tx = None;
        while let Some(batch) = batches.recv().await {
            let open = match &mut tx {
                Some(open) => open,
                None => tx.insert(self.begin().await?),
            };
            pending.extend(write_cves(open, &batch).await?);
            in_tx += 1;
            if in_tx >= per_commit.max(1)
                && let Some(open) = tx.take()
            {
                committed += self.commit_cves(open, std::mem::take(&mut pending)).await?;
                in_tx = 0;
            }
        }
        if let Some(open) = tx {
            committed += self.commit_cves(open, pending).await?;
        }
        Ok(committed)
    }

    async fn settle(&self) -> Result<()> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.write).await?;
        Ok(())
    }

    async fn cve(&self, id: &CveId) -> Result<Option<CveRecord>> {
        Ok(self.cves(std::slice::from_ref(id)).await?.into_iter().next())
    }

    async fn cves(&self, ids: &[CveId]) -> Result<Vec<CveRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<&str> = ids.iter().map(CveId::as_str).collect();
        let rows = sqlx::query(
            "SELECT c.id, c.record, CASE WHEN c.record = '' THEN s.served END AS served, k.entry AS kev, e.epss, \
             e.percentile FROM cves c LEFT JOIN cve_served s ON s.id = c.id \
             LEFT JOIN kev k ON k.cve_id = c.id LEFT JOIN epss e ON e.cve_id = c.id \
             WHERE c.id IN (SELECT value FROM json_each(?1))",
        )
        .bind(to_json(&wanted)?)
        .fetch_all(&mut *self.read.get().await?)
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
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // One row for the whole answer (see `answer_rows`).
        let wanted: Vec<&str> = ids.iter().map(CveId::as_str).collect();
        let joined: Option<String> = sqlx::query_scalar(
            "SELECT group_concat(concat(s.id, char(31), k.entry, char(31), e.epss, char(31), e.percentile, char(31), \
             s.cwe, char(31), s.served), char(30)) \
             FROM json_each(?1) j JOIN cve_served s ON s.id = j.value \
             LEFT JOIN kev k ON k.cve_id = s.id LEFT JOIN epss e ON e.cve_id = s.id",
        )
        .bind(to_json(&wanted)?)
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        let served = answer_rows(joined, |text, row| {
            let mut f = row.splitn(6, '\u{1f}');
            let id = cve_id_field(&mut f, row)?;
            let (kev, epss, percentile) = side_feeds(text, &mut f, row)?;
            let (cwe, json) = (shared(text, field(&mut f, row)?)?, shared(text, field(&mut f, row)?)?);
            Ok(ServedCve { id, cwe, json, kev, epss, percentile })
        })?;
        let mut by_id: std::collections::HashMap<CveId, ServedCve> =
            served.into_iter().map(|s| (s.id.clone(), s)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    async fn cve_candidates(&self, q: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>> {
        // Two seeks: the rows naming this exact version, and the rows without a version
        // whose range holds it ('' stands for an absent bound). `IN` drops the repeats.
        const EXACT_OR_RANGE: &str = "SELECT cve_id FROM cve_cpe_matches WHERE vendor = ?1 AND product = ?2 \
             AND version_key = ?3 AND (?7 IS NULL OR part = ?7) \
             UNION ALL SELECT cve_id FROM cve_cpe_matches WHERE vendor = ?1 AND product = ?2 \
             AND version_key = '' AND (?7 IS NULL OR part = ?7) \
             AND (start_incl = '' OR start_incl <= ?3) AND (start_excl = '' OR start_excl < ?3) \
             AND (end_incl = '' OR end_incl >= ?3) AND (end_excl = '' OR end_excl > ?3)";
        let sql = if q.version_key.is_some() {
            // The candidates are ordered from the index `cves_candidate` alone (migration
            // 11); the configurations are read for the batch kept, and only where needed,
            // by the rowid that the index carries.
            format!(
                "SELECT x.id, x.last_modified, f.configurations FROM \
                 (SELECT c.rowid AS rid, c.id, c.last_modified, c.needs_eval FROM cves c INDEXED BY cves_candidate \
                 WHERE c.id IN ({EXACT_OR_RANGE}) AND (?4 IS NULL OR (c.last_modified, c.id) < (?4, ?5)) \
                 ORDER BY c.last_modified DESC, c.id DESC LIMIT CAST(?6 AS INTEGER)) x \
                 LEFT JOIN cves f ON f.rowid = x.rid AND (x.needs_eval OR ?8)"
            )
        } else {
            // Any version: walk the product's CVEs newest first and stop at the limit; the
            // import decided which apply, so only a query with more attributes evaluates.
            "SELECT p.cve_id AS id, p.last_modified, \
             CASE WHEN ?8 THEN (SELECT configurations FROM cves WHERE id = p.cve_id) END AS configurations \
             FROM cve_product_index p \
             WHERE p.vendor = ?1 AND p.product = ?2 AND ?3 IS NULL AND (?7 IS NULL OR instr(p.parts, ?7) > 0) \
             AND (p.applies OR ?8) \
             AND (?4 IS NULL OR (p.last_modified, p.cve_id) < (?4, ?5)) \
             ORDER BY p.last_modified DESC, p.cve_id DESC LIMIT CAST(?6 AS INTEGER)"
                .to_owned()
        };
        // One row for the whole batch (see `answer_rows`), its records in no particular
        // order: they are sorted here. Configurations carry a flag byte so that an absent
        // one ('0') differs from an empty one.
        let candidate =
            "c.id, char(31), c.last_modified, char(31), iif(c.configurations IS NULL, '0', '1'), c.configurations";
        let sql = if q.served {
            // The side feeds come with the candidates; the served forms from memory, or
            // from a second query for those not kept (`ServedCache`).
            format!(
                "SELECT group_concat(concat({candidate}, char(31), k.entry, char(31), e.epss, char(31), e.percentile), \
                 char(30)) FROM ({sql}) c LEFT JOIN kev k ON k.cve_id = c.id LEFT JOIN epss e ON e.cve_id = c.id"
            )
        } else {
            format!("SELECT group_concat(concat({candidate}), char(30)) FROM ({sql}) c")
        };
        let joined: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(q.vendor)
            .bind(q.product)
            .bind(q.version_key)
            .bind(q.after.map(|a| a.0.as_str()))
            .bind(q.after.map(|a| a.1.as_str()))
            .bind(i64::from(q.batch))
            .bind(q.part)
            .bind(q.all_configurations)
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        type SideFeeds = (Option<SharedStr>, Option<f64>, Option<f64>);
        let mut rows: Vec<(CveCandidate, Option<SideFeeds>)> = answer_rows(joined, |text, row| {
            let mut f = row.splitn(if q.served { 6 } else { 3 }, '\u{1f}');
            let id = cve_id_field(&mut f, row)?;
            let last_modified = shared(text, field(&mut f, row)?)?;
            let configurations = match field(&mut f, row)?.strip_prefix('1') {
                Some(c) => Some(shared(text, c)?),
                None => None,
            };
            let side = if q.served { Some(side_feeds(text, &mut f, row)?) } else { None };
            Ok((CveCandidate { id, last_modified, configurations, served: None }, side))
        })?;
        rows.sort_unstable_by(|(a, _), (b, _)| {
            (b.last_modified.as_str(), b.id.as_str()).cmp(&(a.last_modified.as_str(), a.id.as_str()))
        });
        if !q.served {
            return Ok(rows.into_iter().map(|(c, _)| c).collect());
        }
        let mut forms = self.served.get_many(rows.iter().map(|(c, _)| (&c.id, c.last_modified.as_str())));
        let missing: Vec<CveId> =
            rows.iter().zip(&forms).filter(|(_, f)| f.is_none()).map(|((c, _), _)| c.id.clone()).collect();
        if !missing.is_empty() {
            // Those not kept, read as `served_cves` reads them (its side feeds are not
            // needed: the candidates brought theirs).
            let mut read: std::collections::HashMap<CveId, ServedCve> =
                self.served_cves(&missing).await?.into_iter().map(|s| (s.id.clone(), s)).collect();
            for ((c, _), form) in rows.iter().zip(forms.iter_mut()).filter(|(_, f)| f.is_none()) {
                if let Some(s) = read.remove(&c.id) {
                    self.served.insert(&c.id, &c.last_modified, &s.cwe, &s.json);
                    *form = Some((s.cwe, s.json));
                }
            }
        }
        Ok(rows
            .into_iter()
            .zip(forms)
            .map(|((mut c, side), form)| {
                if let (Some((cwe, json)), Some((kev, epss, percentile))) = (form, side) {
                    c.served = Some(ServedCve { id: c.id.clone(), cwe, json, kev, epss, percentile });
                }
                c
            })
            .collect())
    }

    async fn last_cves(&self, limit: u32) -> Result<Vec<CveRecord>> {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT c.record, CASE WHEN c.record = '' THEN s.served END FROM cves c \
             LEFT JOIN cve_served s ON s.id = c.id ORDER BY c.last_modified DESC, c.id DESC LIMIT CAST(?1 AS INTEGER)",
        )
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(|(r, served)| record(r, served.as_deref()))
        .collect()
    }

    async fn vendors(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT DISTINCT vendor FROM cpe_products ORDER BY vendor")
            .fetch_all(&mut *self.read.get().await?)
            .await?)
    }

    async fn products(&self, vendor: &str) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT product FROM cpe_products WHERE vendor = ?1 ORDER BY product")
            .bind(vendor)
            .fetch_all(&mut *self.read.get().await?)
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
            sqlx::query("INSERT INTO kev (cve_id, date_added, entry) VALUES (?1, ?2, ?3) ON CONFLICT (cve_id) DO UPDATE SET date_added = excluded.date_added, entry = excluded.entry")
                .bind(e.cve_id.as_str())
                .bind(&e.date_added)
                .bind(entry)
                .execute(&mut *tx)
                .await?;
        }
        for gone in stored.keys().filter(|id| !given.contains(id.as_str())) {
            sqlx::query("DELETE FROM kev WHERE cve_id = ?1").bind(gone).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(entries.len())
    }

    async fn save_epss(&self, scores: &[EpssRow], score_date: &str) -> Result<usize> {
        let mut tx = self.begin().await?;
        for e in scores {
            sqlx::query(
                "INSERT INTO epss (cve_id, epss, percentile, score_date) VALUES (?1, ?2, ?3, ?4) \
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
            sqlx::query("INSERT INTO cwe (id, name, capec_ids) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET name = excluded.name, capec_ids = excluded.capec_ids")
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
            sqlx::query("INSERT INTO capec (id, record, related_weaknesses) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET record = excluded.record, related_weaknesses = excluded.related_weaknesses")
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
        let numbers: Vec<i64> =
            cwes.iter().filter_map(|c| c.strip_prefix("CWE-").and_then(|n| n.parse::<i64>().ok())).collect();
        let mut out: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
        if numbers.is_empty() {
            return Ok(out);
        }
        let wanted = to_json(&numbers)?;
        // Patterns each weakness names.
        for r in sqlx::query(
            "SELECT w.id AS cwe, p.record FROM cwe w, json_each(w.capec_ids) j JOIN capec p ON p.id = j.value \
             WHERE w.id IN (SELECT value FROM json_each(?1)) ORDER BY w.id, p.id",
        )
        .bind(&wanted)
        .fetch_all(&mut *self.read.get().await?)
        .await?
        {
            out.entry(format!("CWE-{}", r.try_get::<i64, _>("cwe")?)).or_default().push(json(r.try_get("record")?)?);
        }
        // Weaknesses that name none: the patterns that name the weakness.
        let rest: Vec<String> = numbers.iter().map(|n| format!("CWE-{n}")).filter(|c| !out.contains_key(c)).collect();
        if !rest.is_empty() {
            for r in sqlx::query(
                "SELECT j.value AS cwe, p.record FROM capec p, json_each(p.related_weaknesses) j \
                 WHERE j.value IN (SELECT value FROM json_each(?1)) ORDER BY p.id",
            )
            .bind(to_json(&rest)?)
            .fetch_all(&mut *self.read.get().await?)
            .await?
            {
                out.entry(r.try_get("cwe")?).or_default().push(json(r.try_get("record")?)?);
            }
        }
        Ok(out)
    }

    async fn feed_state(&self, feed: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT value FROM feed_state WHERE feed = ?1")
            .bind(feed)
            .fetch_optional(&mut *self.read.get().await?)
            .await?)
    }

    async fn cve_changes(&self, limit: u32) -> Result<Vec<(i64, CveId)>> {
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT seq, cve_id FROM cve_changes ORDER BY seq LIMIT CAST(?1 AS INTEGER)")
                .bind(i64::from(limit))
                .fetch_all(&mut *self.read.get().await?)
                .await?;
        rows.into_iter().map(|(seq, id)| Ok((seq, CveId::parse(&id).map_err(|_| corrupt("CVE id", &id))?))).collect()
    }

    async fn forget_cve_changes(&self, through: i64) -> Result<u64> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("DELETE FROM cve_changes WHERE seq <= ?1").bind(through).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }

    async fn feed_ages(&self) -> Result<Vec<(String, OffsetDateTime)>> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT feed, updated_at FROM feed_state ORDER BY feed")
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        rows.into_iter().map(|(feed, at)| Ok((feed, ts(&at)?))).collect()
    }

    async fn set_feed_state(&self, feed: &str, value: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO feed_state (feed, value, updated_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (feed) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(feed)
        .bind(value)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn save_fingerprints(&self, source: &str, rules: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, rule) in rules {
            sqlx::query(
                "INSERT INTO fingerprints (name, source, rule, imported_at) VALUES (?1, ?2, ?3, ?4) \
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
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("rule")?))).collect()
    }

    async fn save_eol_products(&self, products: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, product) in products {
            sqlx::query(
                "INSERT INTO eol_products (name, product, imported_at) VALUES (?1, ?2, ?3) \
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
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("product")?))).collect()
    }
}
