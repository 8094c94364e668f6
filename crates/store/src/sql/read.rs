//! The reads several roles share: subsidiary requests, SBOM components and scores of
//! rows, a page of companies.

use super::*;

impl Backend {
    /// Subsidiary requests in `state` and/or with `id` (either unset: any), oldest first.
    pub(crate) async fn requests(
        &self,
        state: Option<SubsidiaryState>,
        id: Option<i64>,
    ) -> Result<Vec<SubsidiaryRequest>> {
        let rows = sqlx::query(
            "SELECT r.*, p.social_id AS parent_social_id, c.social_id AS child_social_id, c.company_name AS child_name \
             FROM subsidiary_requests r JOIN companies p ON p.id = r.parent_id JOIN companies c ON c.id = r.child_id \
             WHERE ($1 IS NULL OR r.state = $1) AND ($2 IS NULL OR r.id = $2) ORDER BY r.id",
        )
        .bind(state.map(SubsidiaryState::as_str))
        .bind(id)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(subsidiary_request_from_row).collect()
    }

    pub(crate) async fn load_sbom(&self, rows: Vec<DbRow>) -> Result<Vec<SbomComponent>> {
        let ids: Vec<i64> = rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
        let ids_list = list(&ids)?;
        let mut hosts: BTreeMap<i64, Vec<Domain>> = BTreeMap::new();
        for r in sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT component_id, host FROM sbom_hosts h JOIN sbom_components c ON c.id = h.component_id \
             WHERE {} AND {} ORDER BY host",
            in_list("component_id", 1),
            crate::assets::rated_host("h.host", "c.company_id")
        )))
        .bind(&ids_list)
        .fetch_all(&mut *self.reader().await?)
        .await?
        {
            let h: String = r.try_get("host")?;
            hosts
                .entry(r.try_get("component_id")?)
                .or_default()
                .push(Domain::parse(&h).map_err(|_| corrupt("host", &h))?);
        }
        let mut cves: BTreeMap<i64, Vec<model::AttributedCve>> = BTreeMap::new();
        for r in sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT component_id, cve_id, basis FROM sbom_cves WHERE {} ORDER BY cve_id",
            in_list("component_id", 1)
        )))
        .bind(&ids_list)
        .fetch_all(&mut *self.reader().await?)
        .await?
        {
            let (c, basis): (String, String) = (r.try_get("cve_id")?, r.try_get("basis")?);
            let id = CveId::parse(&c).map_err(|_| corrupt("cve_id", &c))?;
            let basis = model::CveBasis::parse(&basis).ok_or_else(|| corrupt("basis", &basis))?;
            cves.entry(r.try_get("component_id")?).or_default().push(model::AttributedCve::new(id, basis));
        }
        rows.iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                Ok(SbomComponent {
                    name: row.try_get("name")?,
                    version: row.try_get("version")?,
                    purl: row.try_get("purl")?,
                    cpe: row.try_get("cpe")?,
                    hosts: hosts.remove(&id).unwrap_or_default(),
                    evidence: row.try_get("evidence")?,
                    end_of_life: row.try_get("end_of_life")?,
                    latest_version: row.try_get("latest_version")?,
                    cves: cves.remove(&id).unwrap_or_default(),
                    confidence: confidence(row)?,
                    first_seen: ts_text(row.try_get("first_seen")?)?,
                    last_seen: ts_text(row.try_get("last_seen")?)?,
                })
            })
            .collect()
    }

    pub(crate) async fn load_scores(&self, rows: Vec<DbRow>) -> Result<Vec<ScoreSnapshot>> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let sid: i64 = row.try_get("id")?;
            let grade: String = row.try_get("grade")?;
            let mut components = BTreeMap::new();
            for c in sqlx::query("SELECT risk_vector, score, grade, weight, assets_checked, findings_count, not_assessable, checks FROM component_scores WHERE score_id = $1")
                .bind(sid)
                .fetch_all(&mut *self.reader().await?)
                .await?
            {
                let rv: String = c.try_get("risk_vector")?;
                let g: String = c.try_get("grade")?;
                components.insert(
                    RiskVector::parse(&rv).map_err(|_| corrupt("risk_vector", &rv))?,
                    ComponentScore {
                        score: score(c.try_get("score")?)?,
                        grade: Grade::parse(&g).map_err(|_| corrupt("grade", &g))?,
                        weight: score(c.try_get("weight")?)?,
                        assets_checked: u32::try_from(c.try_get::<i64, _>("assets_checked")?).unwrap_or(0),
                        findings_count: u32::try_from(c.try_get::<i64, _>("findings_count")?).unwrap_or(0),
                        not_assessable: c.try_get("not_assessable")?,
                        checks: c.try_get::<Option<String>, _>("checks")?.as_deref().map(json).transpose()?,
                    },
                );
            }
            out.push(ScoreSnapshot {
                scanned_at: ts_text(row.try_get("scanned_at")?)?,
                score: score(row.try_get("score")?)?,
                grade: Grade::parse(&grade).map_err(|_| corrupt("grade", &grade))?,
                components,
                methodology: row.try_get("methodology")?,
                notes: row.try_get::<Option<String>, _>("notes")?.as_deref().map(json).transpose()?.unwrap_or_default(),
                reason: row.try_get("reason")?,
                quick: row.try_get::<String, _>("depth")? == "quick",
            });
        }
        Ok(out)
    }

    pub(crate) async fn companies_page(
        &self,
        where_sql: &'static str,
        order_sql: &'static str,
        binds: &[&str],
        id_bind: Option<i64>,
        page: Option<Page>,
    ) -> Result<Paged<Company>> {
        let count_sql = format!("SELECT count(*) FROM companies c WHERE {where_sql}");
        let mut cq = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(count_sql));
        if let Some(id) = id_bind {
            cq = cq.bind(id);
        }
        for b in binds {
            cq = cq.bind(*b);
        }
        let total = count(cq.fetch_one(&mut *self.reader().await?).await?);
        let (limit, offset) = page.map_or((i64::MAX, 0), |p| (p.limit(), p.offset()));
        let sql = format!("{COMPANY_SELECT} WHERE {where_sql} ORDER BY {order_sql} LIMIT {limit} OFFSET {offset}");
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(id) = id_bind {
            q = q.bind(id);
        }
        for b in binds {
            q = q.bind(*b);
        }
        let items =
            q.fetch_all(&mut *self.reader().await?).await?.iter().map(company_from_row).collect::<Result<_>>()?;
        Ok(Paged { items, total })
    }
}
