//! The CVE statements of [`crate::Intel`] that differ on SQLite: the bulk writes, the
//! one-row answers, the candidate scans and the JSON arrays of CWE and CAPEC.

use super::*;

impl SqliteStore {
    pub(super) async fn bulk_upsert_cves(
        &self,
        batches: &mut Receiver<Vec<StoredCve>>,
        per_commit: usize,
    ) -> Result<usize> {
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

    pub(super) async fn settle_after_bulk(&self) -> Result<()> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.write).await?;
        Ok(())
    }

    pub(super) async fn served_cves_joined(&self, ids: &[CveId]) -> Result<Vec<ServedCve>> {
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

    pub(super) async fn candidates(&self, q: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>> {
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
                self.served_cves_joined(&missing).await?.into_iter().map(|s| (s.id.clone(), s)).collect();
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

    pub(super) async fn capec_of_cwes(&self, cwes: &[&str]) -> Result<BTreeMap<String, Vec<serde_json::Value>>> {
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
}
