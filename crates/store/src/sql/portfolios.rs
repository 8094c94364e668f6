//! [`crate::Portfolios`]: organisations, portfolios, vendor records, a portfolio's list
//! and findings searches.

use std::collections::HashMap;

use model::{Org, Portfolio, Relationship, Score, Stage, Tier, VendorRecord};

use super::*;
use crate::portfolios::{
    Alert, AlertQuery, AlertWatch, CHANGE_DAYS, FindingQuery, FindingStatus, FindingsOf, FoundFinding, NewAlert,
    PortfolioRow, RatingChange, RatingChanges, RowRating, StoredAlertRules,
};

fn org_from_row(row: &DbRow) -> Result<Org> {
    Ok(Org { id: row.try_get("id")?, name: row.try_get("name")?, created_at: ts_text(row.try_get("created_at")?)? })
}

fn portfolio_from_row(row: &DbRow) -> Result<Portfolio> {
    let companies: i64 = row.try_get("companies")?;
    Ok(Portfolio {
        id: row.try_get("id")?,
        org: row.try_get("org_id")?,
        name: row.try_get("name")?,
        companies: count(companies),
        created_at: ts_text(row.try_get("created_at")?)?,
        updated_at: ts_text(row.try_get("updated_at")?)?,
    })
}

/// The vendor record of a `portfolio_companies` row.
fn record_from_row(row: &DbRow) -> Result<VendorRecord> {
    let tier: Option<i64> = row.try_get("tier")?;
    let tags: String = row.try_get("tags")?;
    let relationship: String = row.try_get("relationship")?;
    let stage: String = row.try_get("stage")?;
    Ok(VendorRecord {
        tier: tier.map(Tier::new).transpose().map_err(|_| corrupt("tier", tier))?,
        tags: serde_json::from_str(&tags).map_err(|_| corrupt("tags", &tags))?,
        custom_id: row.try_get("custom_id")?,
        relationship: Relationship::parse(&relationship).map_err(|_| corrupt("relationship", &relationship))?,
        stage: Stage::parse(&stage).map_err(|_| corrupt("stage", &stage))?,
        owner: row.try_get("owner")?,
        note: row.try_get("note")?,
    })
}

const PORTFOLIO_SELECT: &str = "SELECT p.*, (SELECT count(*) FROM portfolio_companies pc WHERE pc.portfolio_id = p.id) \
     AS companies FROM portfolios p";

/// The WHERE clause and its text parameters ($2 …) of a findings search; $1 is the
/// company or portfolio.
fn finding_where(of: FindingsOf, q: &FindingQuery) -> (String, Vec<Option<String>>) {
    let mut clauses = vec![match of {
        FindingsOf::Company(_) => "f.company_id = $1".to_owned(),
        FindingsOf::Portfolio(_) => {
            "f.company_id IN (SELECT company_id FROM portfolio_companies WHERE portfolio_id = $1)".to_owned()
        }
    }];
    let mut binds: Vec<Option<String>> = Vec::new();
    let bind = |binds: &mut Vec<Option<String>>, v: String| {
        binds.push(Some(v));
        binds.len() + 1
    };
    match q.status {
        FindingStatus::Open => clauses.push("f.closed_at IS NULL".into()),
        FindingStatus::Closed => clauses.push("f.closed_at IS NOT NULL".into()),
        FindingStatus::All => {}
    }
    if let Some(s) = q.severity {
        let n = bind(&mut binds, s.as_str().to_owned());
        clauses.push(format!("f.severity = ${n}"));
    }
    if let Some(v) = q.risk_vector {
        let n = bind(&mut binds, v.as_str().to_owned());
        clauses.push(format!("f.risk_vector = ${n}"));
    }
    if let Some(code) = &q.code {
        let n = bind(&mut binds, code.clone());
        clauses.push(format!("f.code = ${n}"));
    }
    if let Some(host) = &q.host {
        // A parsed domain has no LIKE wildcard (letters, digits, hyphens and dots): the
        // host itself, a port or record on it, an origin of it, or a name below it.
        let h = host.as_str();
        let exact = bind(&mut binds, h.to_owned());
        let port = bind(&mut binds, format!("{h}:%"));
        let origin = bind(&mut binds, format!("%://{h}/%"));
        let origin_port = bind(&mut binds, format!("%://{h}:%"));
        let below = bind(&mut binds, format!("%.{h}"));
        let below_port = bind(&mut binds, format!("%.{h}:%"));
        let below_origin = bind(&mut binds, format!("%.{h}/%"));
        clauses.push(format!(
            "(f.asset = ${exact} OR f.asset LIKE ${port} OR f.asset LIKE ${origin} OR f.asset LIKE ${origin_port} \
             OR f.asset LIKE ${below} OR f.asset LIKE ${below_port} OR f.asset LIKE ${below_origin})"
        ));
    }
    if let Some(since) = q.since {
        let n = bind(&mut binds, rfc3339(since));
        clauses.push(format!("f.first_seen >= ${n}"));
    }
    match q.disputed {
        Some(true) => clauses.push("f.disputed = TRUE".into()),
        Some(false) => clauses.push("f.disputed = FALSE".into()),
        None => {}
    }
    (clauses.join(" AND "), binds)
}

fn found_from_row(row: &DbRow) -> Result<FoundFinding> {
    let sid: String = row.try_get("c_social_id")?;
    let closed: Option<String> = row.try_get("closed_at")?;
    Ok(FoundFinding {
        company: row.try_get("company_id")?,
        social_id: SocialId::parse(&sid).map_err(|_| corrupt("social_id", &sid))?,
        finding: finding_from_row(row)?,
        closed_at: closed.as_deref().map(ts_text).transpose()?,
    })
}

impl Backend {
    async fn found_findings(
        &self,
        of: FindingsOf,
        q: &FindingQuery,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<FoundFinding>> {
        let (clause, binds) = finding_where(of, q);
        let n = binds.len() + 2;
        let sql = format!(
            "SELECT f.*, c.social_id AS c_social_id FROM findings f JOIN companies c ON c.id = f.company_id \
             WHERE {clause} ORDER BY f.severity_rank DESC, c.social_id, f.risk_vector, f.asset, f.code, f.id \
             LIMIT CAST(${n} AS BIGINT) OFFSET ${}",
            n + 1
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(of_id(of));
        for b in &binds {
            query = query.bind(b.as_deref());
        }
        query.bind(limit).bind(offset).fetch_all(&mut *self.reader().await?).await?.iter().map(found_from_row).collect()
    }
}

const ALERT_SELECT: &str = "SELECT a.*, p.name AS portfolio_name, c.social_id, c.company_name FROM alerts a \
     JOIN portfolios p ON p.id = a.portfolio_id JOIN companies c ON c.id = a.company_id";

fn alert_from_row(r: &DbRow) -> Result<Alert> {
    let sid: String = r.try_get("social_id")?;
    let acked: Option<String> = r.try_get("acknowledged_at")?;
    Ok(Alert {
        id: r.try_get("id")?,
        portfolio: r.try_get("portfolio_id")?,
        portfolio_name: r.try_get("portfolio_name")?,
        company: r.try_get("company_id")?,
        social_id: SocialId::parse(&sid).map_err(|_| corrupt("social_id", &sid))?,
        company_name: r.try_get("company_name")?,
        rule_id: r.try_get("rule_id")?,
        kind: r.try_get("kind")?,
        subject: r.try_get("subject")?,
        summary: r.try_get("summary")?,
        explanation: r.try_get("explanation")?,
        created_at: ts_text(r.try_get("created_at")?)?,
        acknowledged_at: acked.as_deref().map(ts_text).transpose()?,
        acknowledged_by: r.try_get("acknowledged_by")?,
    })
}

/// The score of each member's latest rating at or before `at`.
async fn scores_at(conn: &mut DbConnection, portfolio: i64, at: OffsetDateTime) -> Result<HashMap<i64, Score>> {
    let rows = sqlx::query(
        "SELECT s.company_id, s.score FROM scores s \
         JOIN portfolio_companies pc ON pc.company_id = s.company_id AND pc.portfolio_id = $1 \
         WHERE s.scanned_at = (SELECT max(s2.scanned_at) FROM scores s2 \
         WHERE s2.company_id = s.company_id AND s2.scanned_at <= $2)",
    )
    .bind(portfolio)
    .bind(rfc3339(at))
    .fetch_all(&mut *conn)
    .await?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        let score: i64 = r.try_get("score")?;
        out.insert(r.try_get("company_id")?, Score::from_hundredths(score).map_err(|_| corrupt("score", score))?);
    }
    Ok(out)
}

/// `query` with a vendor record's seven columns bound, in the order of the table:
/// tier, tags, custom_id, relationship, stage, owner, note.
fn bind_record<'q>(
    query: sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments>,
    r: &'q VendorRecord,
) -> Result<sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments>> {
    Ok(query
        .bind(r.tier.map(|t| i64::from(t.get())))
        .bind(to_json(&r.tags)?)
        .bind(r.custom_id.as_deref())
        .bind(r.relationship.as_str())
        .bind(r.stage.as_str())
        .bind(&r.owner)
        .bind(&r.note))
}

fn of_id(of: FindingsOf) -> i64 {
    match of {
        FindingsOf::Company(id) | FindingsOf::Portfolio(id) => id,
    }
}

#[async_trait]
impl crate::Portfolios for Backend {
    async fn create_org(&self, name: &str) -> Result<Org> {
        let row = sqlx::query("INSERT INTO orgs (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING *")
            .bind(name)
            .bind(rfc3339(OffsetDateTime::now_utc()))
            .fetch_optional(self.writer())
            .await?;
        match row {
            Some(row) => org_from_row(&row),
            None => Err(StoreError::Invalid(format!("an organisation named {name:?} exists already"))),
        }
    }

    async fn org_by_name(&self, name: &str) -> Result<Option<Org>> {
        if has_nul(name) {
            return Ok(None);
        }
        let row = sqlx::query("SELECT * FROM orgs WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(org_from_row).transpose()
    }

    async fn orgs(&self) -> Result<Vec<Org>> {
        sqlx::query("SELECT * FROM orgs ORDER BY name")
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(org_from_row)
            .collect()
    }

    async fn create_portfolio(&self, org: i64, name: &str, max: u64) -> Result<Option<Portfolio>> {
        let mut tx = self.begin().await?;
        // The organisation's row, locked: the count and the insert are one step.
        sqlx::query("UPDATE orgs SET name = name WHERE id = $1").bind(org).execute(&mut *tx).await?;
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM portfolios WHERE org_id = $1")
            .bind(org)
            .fetch_one(&mut *tx)
            .await?;
        if count(n) >= max {
            return Ok(None);
        }
        let now = rfc3339(OffsetDateTime::now_utc());
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO portfolios (org_id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(org)
        .bind(name)
        .bind(&now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(id) = id else { return Ok(None) };
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{PORTFOLIO_SELECT} WHERE p.id = $1")))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let made = portfolio_from_row(&row)?;
        tx.commit().await?;
        Ok(Some(made))
    }

    async fn portfolios(&self, org: i64) -> Result<Vec<Portfolio>> {
        sqlx::query(sqlx::AssertSqlSafe(format!("{PORTFOLIO_SELECT} WHERE p.org_id = $1 ORDER BY p.name, p.id")))
            .bind(org)
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(portfolio_from_row)
            .collect()
    }

    async fn portfolio(&self, org: i64, id: i64) -> Result<Option<Portfolio>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{PORTFOLIO_SELECT} WHERE p.id = $1 AND p.org_id = $2")))
            .bind(id)
            .bind(org)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(portfolio_from_row).transpose()
    }

    async fn rename_portfolio(&self, org: i64, id: i64, name: &str) -> Result<Option<Portfolio>> {
        let mut tx = self.begin().await?;
        let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM portfolios WHERE org_id = $1 AND name = $2")
            .bind(org)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
        if taken.is_some_and(|t| t != id) {
            return Err(StoreError::Invalid(format!("a portfolio named {name:?} exists already")));
        }
        let done = sqlx::query("UPDATE portfolios SET name = $3, updated_at = $4 WHERE id = $1 AND org_id = $2")
            .bind(id)
            .bind(org)
            .bind(name)
            .bind(rfc3339(OffsetDateTime::now_utc()))
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{PORTFOLIO_SELECT} WHERE p.id = $1")))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let renamed = portfolio_from_row(&row)?;
        tx.commit().await?;
        Ok(Some(renamed))
    }

    async fn delete_portfolio(&self, org: i64, id: i64) -> Result<bool> {
        let mut tx = self.begin().await?;
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM portfolios WHERE id = $1 AND org_id = $2")
            .bind(id)
            .bind(org)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            return Ok(false);
        }
        sqlx::query("DELETE FROM portfolio_companies WHERE portfolio_id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM portfolios WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn add_to_portfolio(&self, portfolio: i64, members: &[(i64, VendorRecord)]) -> Result<Vec<bool>> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut added = Vec::with_capacity(members.len());
        for (company, r) in members {
            let query = sqlx::query(
                "INSERT INTO portfolio_companies (portfolio_id, company_id, tier, tags, custom_id, relationship, stage, \
                 owner, note, added_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(portfolio)
            .bind(company);
            let done = bind_record(query, r)?.bind(&now).execute(&mut *tx).await?;
            added.push(done.rows_affected() > 0);
        }
        if added.iter().any(|a| *a) {
            sqlx::query("UPDATE portfolios SET updated_at = $2 WHERE id = $1")
                .bind(portfolio)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn member(&self, portfolio: i64, company: i64) -> Result<Option<VendorRecord>> {
        let row = sqlx::query("SELECT * FROM portfolio_companies WHERE portfolio_id = $1 AND company_id = $2")
            .bind(portfolio)
            .bind(company)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(record_from_row).transpose()
    }

    async fn update_member(&self, portfolio: i64, company: i64, r: &VendorRecord) -> Result<bool> {
        let query = sqlx::query(
            "UPDATE portfolio_companies SET tier = $3, tags = $4, custom_id = $5, relationship = $6, stage = $7, \
             owner = $8, note = $9, updated_at = $10 WHERE portfolio_id = $1 AND company_id = $2",
        )
        .bind(portfolio)
        .bind(company);
        let done = bind_record(query, r)?.bind(rfc3339(OffsetDateTime::now_utc())).execute(self.writer()).await?;
        Ok(done.rows_affected() > 0)
    }

    async fn remove_member(&self, portfolio: i64, company: i64) -> Result<bool> {
        let done = sqlx::query("DELETE FROM portfolio_companies WHERE portfolio_id = $1 AND company_id = $2")
            .bind(portfolio)
            .bind(company)
            .execute(self.writer())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn onboard(
        &self,
        key: Option<i64>,
        since: OffsetDateTime,
        at: OffsetDateTime,
        cap: u64,
        rows: &[crate::portfolios::Onboarding],
    ) -> Result<Vec<Option<i64>>> {
        let now = rfc3339(at);
        let queued_at = rfc3339_micros(at);
        let mut tx = self.begin().await?;
        let mut room = match key {
            Some(key) => cap.saturating_sub(disputes::creations_since(&mut tx, key, since).await?),
            None => u64::MAX,
        };
        let mut out = Vec::with_capacity(rows.len());
        let mut queued = false;
        for row in rows {
            if room == 0 {
                out.push(None);
                continue;
            }
            room -= 1;
            if let Some(key) = key {
                disputes::record_creation(&mut tx, key, &now).await?;
            }
            let id = write::upsert_profile(&mut tx, &row.profile, &now).await?;
            if row.name_derived {
                sqlx::query("UPDATE companies SET name_derived = TRUE WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some((domain, attribution)) = &row.domain {
                disputes::claim(&mut tx, id, domain, attribution, true).await?;
            }
            if let Some(job) = &row.job {
                // A new company has no job yet; one of its key already waiting or
                // running is left as it is (the partial unique index).
                sqlx::query(
                    "INSERT INTO jobs (kind, payload, dedup_key, status, priority, run_after, created_at, updated_at) \
                     VALUES ($1, $2, $3, 'queued', $4, $5, $5, $5) ON CONFLICT DO NOTHING",
                )
                .bind(job.kind())
                .bind(to_json(&job.payload())?)
                .bind(job.dedup_key())
                .bind(i64::from(job.default_priority()))
                .bind(&queued_at)
                .execute(&mut *tx)
                .await?;
                queued = true;
            }
            out.push(Some(id));
        }
        tx.commit().await?;
        if queued {
            self.announce_jobs().await;
        }
        Ok(out)
    }

    async fn name_from_site(&self, company: i64, name: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE companies SET company_name = $2, name_lc = lower($2), name_norm = $3 \
             WHERE id = $1 AND name_derived = TRUE AND company_name <> $2",
        )
        .bind(company)
        .bind(name)
        .bind(model::normalise_name(name))
        .execute(self.writer())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn website_from_site(&self, company: i64, website: &model::Website) -> Result<bool> {
        let done =
            sqlx::query("UPDATE companies SET website = $2 WHERE id = $1 AND name_derived = TRUE AND website <> $2")
                .bind(company)
                .bind(website.as_str())
                .execute(self.writer())
                .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn portfolio_rows(&self, portfolio: i64, now: OffsetDateTime) -> Result<Vec<PortfolioRow>> {
        let mut conn = self.reader().await?;
        let members = sqlx::query(
            "SELECT pc.*, c.social_id, c.company_name, c.name_derived, c.domain, c.industry, c.last_scanned_at, \
             c.scan_error, c.scan_error_at, rs.every_secs FROM portfolio_companies pc \
             JOIN companies c ON c.id = pc.company_id LEFT JOIN rescan_schedule rs ON rs.company_id = c.id \
             WHERE pc.portfolio_id = $1 ORDER BY c.social_id",
        )
        .bind(portfolio)
        .fetch_all(&mut *conn)
        .await?;
        let mut rows = Vec::with_capacity(members.len());
        let mut at: HashMap<i64, usize> = HashMap::with_capacity(members.len());
        for m in &members {
            let company: i64 = m.try_get("company_id")?;
            let sid: String = m.try_get("social_id")?;
            let scanned: Option<String> = m.try_get("last_scanned_at")?;
            let error: Option<String> = m.try_get("scan_error")?;
            let error_at: Option<String> = m.try_get("scan_error_at")?;
            let every: Option<i64> = m.try_get("every_secs")?;
            at.insert(company, rows.len());
            rows.push(PortfolioRow {
                company,
                social_id: SocialId::parse(&sid).map_err(|_| corrupt("social_id", &sid))?,
                name: m.try_get("company_name")?,
                name_derived: m.try_get("name_derived")?,
                domain: m.try_get("domain")?,
                industry: m.try_get("industry")?,
                record: record_from_row(m)?,
                added_at: ts_text(m.try_get("added_at")?)?,
                rating: None,
                score_before: [None; 3],
                open: [0; 5],
                open_by_vector: [[0; 5]; 12],
                kev: 0,
                last_scanned_at: scanned.as_deref().map(ts_text).transpose()?,
                scan_error: match (error, error_at) {
                    (Some(why), Some(when)) => Some((why, ts_text(&when)?)),
                    _ => None,
                },
                cadence: every.and_then(|s| u64::try_from(s).ok()).map(std::time::Duration::from_secs),
            });
        }
        if rows.is_empty() {
            return Ok(rows);
        }
        // The latest rating of each member, then the latest at or before each look-back.
        let latest = sqlx::query(
            "SELECT s.company_id, s.score, s.grade, s.scanned_at, s.depth FROM scores s \
             JOIN portfolio_companies pc ON pc.company_id = s.company_id AND pc.portfolio_id = $1 \
             WHERE s.scanned_at = (SELECT max(s2.scanned_at) FROM scores s2 WHERE s2.company_id = s.company_id)",
        )
        .bind(portfolio)
        .fetch_all(&mut *conn)
        .await?;
        for r in &latest {
            let Some(i) = at.get(&r.try_get::<i64, _>("company_id")?) else { continue };
            let score: i64 = r.try_get("score")?;
            let grade: String = r.try_get("grade")?;
            rows[*i].rating = Some(RowRating {
                score: Score::from_hundredths(score).map_err(|_| corrupt("score", score))?,
                grade: Grade::parse(&grade).map_err(|_| corrupt("grade", &grade))?,
                scanned_at: ts_text(r.try_get("scanned_at")?)?,
                depth: r.try_get("depth")?,
            });
        }
        for (k, days) in CHANGE_DAYS.iter().enumerate() {
            for (company, score) in scores_at(&mut conn, portfolio, now - time::Duration::days(*days)).await? {
                if let Some(i) = at.get(&company) {
                    rows[*i].score_before[k] = Some(score);
                }
            }
        }
        let open = sqlx::query(
            "SELECT f.company_id, f.risk_vector, f.severity, count(*) AS n FROM findings f \
             JOIN portfolio_companies pc ON pc.company_id = f.company_id AND pc.portfolio_id = $1 \
             WHERE f.closed_at IS NULL GROUP BY f.company_id, f.risk_vector, f.severity",
        )
        .bind(portfolio)
        .fetch_all(&mut *conn)
        .await?;
        for r in &open {
            let Some(i) = at.get(&r.try_get::<i64, _>("company_id")?) else { continue };
            let severity: String = r.try_get("severity")?;
            let s = Severity::parse(&severity).map_err(|_| corrupt("severity", &severity))?;
            let vector: String = r.try_get("risk_vector")?;
            let v = RiskVector::parse(&vector).map_err(|_| corrupt("risk_vector", &vector))?;
            let n = u32::try_from(r.try_get::<i64, _>("n")?).unwrap_or(u32::MAX);
            let (Some(k), Some(j)) =
                (Severity::ALL.iter().position(|x| *x == s), RiskVector::ALL.iter().position(|x| *x == v))
            else {
                continue;
            };
            rows[*i].open[k] = rows[*i].open[k].saturating_add(n);
            rows[*i].open_by_vector[j][k] = n;
        }
        let kev = sqlx::query(
            "SELECT f.company_id, count(*) AS n FROM findings f \
             JOIN portfolio_companies pc ON pc.company_id = f.company_id AND pc.portfolio_id = $1 \
             JOIN kev k ON k.cve_id = f.cve WHERE f.closed_at IS NULL GROUP BY f.company_id",
        )
        .bind(portfolio)
        .fetch_all(&mut *conn)
        .await?;
        for r in &kev {
            let Some(i) = at.get(&r.try_get::<i64, _>("company_id")?) else { continue };
            let n: i64 = r.try_get("n")?;
            rows[*i].kev = u32::try_from(n).unwrap_or(u32::MAX);
        }
        Ok(rows)
    }

    async fn portfolio_scores_at(&self, portfolio: i64, at: OffsetDateTime) -> Result<HashMap<i64, Score>> {
        scores_at(&mut *self.reader().await?, portfolio, at).await
    }

    async fn search_findings(&self, of: FindingsOf, q: &FindingQuery, page: Page) -> Result<Paged<FoundFinding>> {
        let (clause, binds) = finding_where(of, q);
        let sql = format!("SELECT count(*) FROM findings f WHERE {clause}");
        let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).bind(of_id(of));
        for b in &binds {
            query = query.bind(b.as_deref());
        }
        let total = query.fetch_one(&mut *self.reader().await?).await?;
        let items = self.found_findings(of, q, page.limit(), page.offset()).await?;
        Ok(Paged { items, total: count(total) })
    }

    async fn all_findings(&self, of: FindingsOf, q: &FindingQuery, limit: u64) -> Result<Vec<FoundFinding>> {
        self.found_findings(of, q, i64::try_from(limit).unwrap_or(i64::MAX), 0).await
    }

    async fn rating_changes(&self, of: FindingsOf, since: OffsetDateTime, max_findings: u32) -> Result<RatingChanges> {
        let whose = |alias: &str| match of {
            FindingsOf::Company(_) => format!("{alias}.company_id = $1"),
            FindingsOf::Portfolio(_) => {
                format!("{alias}.company_id IN (SELECT company_id FROM portfolio_companies WHERE portfolio_id = $1)")
            }
        };
        let mut conn = self.reader().await?;
        // Each company's ratings after `since`, and the last one at or before it (the
        // "before" of the first change).
        let sql = format!(
            "SELECT s.company_id, s.scanned_at, s.score, s.grade, s.depth, s.reason FROM scores s WHERE {} \
             AND (s.scanned_at > $2 OR s.scanned_at = (SELECT max(s2.scanned_at) FROM scores s2 \
             WHERE s2.company_id = s.company_id AND s2.scanned_at <= $2)) ORDER BY s.company_id, s.scanned_at, s.id",
            whose("s")
        );
        let at = rfc3339(since);
        let ratings = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(of_id(of)).bind(&at).fetch_all(&mut *conn).await?;
        let mut changes = Vec::new();
        let mut previous: Option<(i64, RowRating)> = None;
        for r in &ratings {
            let company: i64 = r.try_get("company_id")?;
            let grade: String = r.try_get("grade")?;
            let rating = RowRating {
                score: score(r.try_get("score")?)?,
                grade: Grade::parse(&grade).map_err(|_| corrupt("grade", &grade))?,
                scanned_at: ts_text(r.try_get("scanned_at")?)?,
                depth: r.try_get("depth")?,
            };
            let before = previous.take().filter(|(c, _)| *c == company).map(|(_, b)| b);
            if rating.scanned_at.0 > since {
                changes.push(RatingChange {
                    company,
                    before,
                    after: rating.clone(),
                    reason: r.try_get("reason")?,
                    opened: Vec::new(),
                    closed: Vec::new(),
                });
            }
            previous = Some((company, rating));
        }
        // The findings that opened or closed since, each in the change whose interval
        // holds the moment (worst first: the read's order).
        let sql = format!(
            "SELECT f.* FROM findings f WHERE {} AND (f.opened_at > $2 OR f.closed_at > $2) \
             ORDER BY f.company_id, f.severity_rank DESC, f.risk_vector, f.asset, f.code, f.id LIMIT CAST($3 AS BIGINT)",
            whose("f")
        );
        let limit = i64::from(max_findings) + 1;
        let rows =
            sqlx::query(sqlx::AssertSqlSafe(sql)).bind(of_id(of)).bind(&at).bind(limit).fetch_all(&mut *conn).await?;
        let truncated = rows.len() > max_findings as usize;
        let holding = |company: i64, t: OffsetDateTime| {
            changes.iter().position(|c| {
                c.company == company
                    && c.before.as_ref().is_none_or(|b| t > b.scanned_at.0)
                    && t <= c.after.scanned_at.0
            })
        };
        let mut placed: Vec<(usize, bool, Finding)> = Vec::new();
        for row in rows.iter().take(max_findings as usize) {
            let company: i64 = row.try_get("company_id")?;
            let finding = finding_from_row(row)?;
            let opened: String = row.try_get("opened_at")?;
            let closed: Option<String> = row.try_get("closed_at")?;
            if let Some(t) = model::timefmt::parse_datetime(&opened).filter(|t| *t > since)
                && let Some(i) = holding(company, t)
            {
                placed.push((i, true, finding.clone()));
            }
            if let Some(t) = closed.as_deref().map(ts).transpose()?.filter(|t| *t > since)
                && let Some(i) = holding(company, t)
            {
                placed.push((i, false, finding));
            }
        }
        for (i, opened, finding) in placed {
            let change = &mut changes[i];
            if opened { change.opened.push(finding) } else { change.closed.push(finding) }
        }
        Ok(RatingChanges { changes, truncated })
    }

    async fn set_alert_rules(&self, portfolio: i64, document: &str, by: &str, at: OffsetDateTime) -> Result<()> {
        sqlx::query(
            "INSERT INTO alert_rules (portfolio_id, document, updated_at, updated_by) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (portfolio_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at, \
             updated_by = excluded.updated_by",
        )
        .bind(portfolio)
        .bind(document)
        .bind(rfc3339(at))
        .bind(by)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    async fn alert_rules(&self, portfolio: i64) -> Result<Option<StoredAlertRules>> {
        let row = sqlx::query("SELECT * FROM alert_rules WHERE portfolio_id = $1")
            .bind(portfolio)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| -> Result<StoredAlertRules> {
            Ok(StoredAlertRules {
                document: r.try_get("document")?,
                updated_at: ts_text(r.try_get("updated_at")?)?,
                updated_by: r.try_get("updated_by")?,
            })
        })
        .transpose()
    }

    async fn alert_watches(&self, company: i64) -> Result<Vec<AlertWatch>> {
        let rows = sqlx::query(
            "SELECT p.org_id, p.id AS portfolio_id, pc.tier, r.document FROM portfolio_companies pc \
             JOIN portfolios p ON p.id = pc.portfolio_id JOIN alert_rules r ON r.portfolio_id = p.id \
             WHERE pc.company_id = $1 ORDER BY p.id",
        )
        .bind(company)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let tier: Option<i64> = r.try_get("tier")?;
                Ok(AlertWatch {
                    org: r.try_get("org_id")?,
                    portfolio: r.try_get("portfolio_id")?,
                    tier: tier.map(|t| u8::try_from(t).map_err(|_| corrupt("tier", t))).transpose()?,
                    document: r.try_get("document")?,
                })
            })
            .collect()
    }

    async fn record_alerts(&self, alerts: &[NewAlert]) -> Result<u64> {
        let mut tx = self.begin().await?;
        let mut new = 0;
        for a in alerts {
            let done = sqlx::query(
                "INSERT INTO alerts (org_id, portfolio_id, company_id, rule_id, kind, subject, summary, explanation, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (portfolio_id, company_id, rule_id, subject, created_at) DO NOTHING",
            )
            .bind(a.org)
            .bind(a.portfolio)
            .bind(a.company)
            .bind(&a.rule_id)
            .bind(&a.kind)
            .bind(&a.subject)
            .bind(&a.summary)
            .bind(&a.explanation)
            .bind(rfc3339(a.created_at))
            .execute(&mut *tx)
            .await?;
            new += done.rows_affected();
        }
        tx.commit().await?;
        Ok(new)
    }

    async fn alerts(&self, org: i64, q: &AlertQuery, page: Page) -> Result<Paged<Alert>> {
        let mut clauses = vec!["a.org_id = $1".to_owned()];
        let mut binds: Vec<String> = Vec::new();
        if let Some(p) = q.portfolio {
            binds.push(p.to_string());
            clauses.push(format!("a.portfolio_id = CAST(${} AS BIGINT)", binds.len() + 1));
        }
        match q.acknowledged {
            Some(true) => clauses.push("a.acknowledged_at IS NOT NULL".into()),
            Some(false) => clauses.push("a.acknowledged_at IS NULL".into()),
            None => {}
        }
        if let Some(k) = &q.kind {
            binds.push(k.clone());
            clauses.push(format!("a.kind = ${}", binds.len() + 1));
        }
        let clause = clauses.join(" AND ");
        let mut conn = self.reader().await?;
        let sql = format!("SELECT count(*) FROM alerts a WHERE {clause}");
        let mut count_q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)).bind(org);
        for b in &binds {
            count_q = count_q.bind(b.as_str());
        }
        let total = count_q.fetch_one(&mut *conn).await?;
        let n = binds.len() + 2;
        let sql = format!(
            "{ALERT_SELECT} WHERE {clause} ORDER BY a.created_at DESC, a.id DESC LIMIT CAST(${n} AS BIGINT) OFFSET ${}",
            n + 1
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org);
        for b in &binds {
            query = query.bind(b.as_str());
        }
        let rows = query.bind(page.limit()).bind(page.offset()).fetch_all(&mut *conn).await?;
        Ok(Paged { items: rows.iter().map(alert_from_row).collect::<Result<_>>()?, total: count(total) })
    }

    async fn ack_alert(&self, org: i64, id: i64, by: &str, at: OffsetDateTime) -> Result<Option<Alert>> {
        sqlx::query(
            "UPDATE alerts SET acknowledged_at = $3, acknowledged_by = $4 \
             WHERE id = $1 AND org_id = $2 AND acknowledged_at IS NULL",
        )
        .bind(id)
        .bind(org)
        .bind(rfc3339(at))
        .bind(by)
        .execute(self.writer())
        .await?;
        let sql = format!("{ALERT_SELECT} WHERE a.id = $1 AND a.org_id = $2");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(org).fetch_optional(self.writer()).await?;
        row.as_ref().map(alert_from_row).transpose()
    }

    async fn save_guidelines(&self, org: i64, document: &str, by: &str, at: OffsetDateTime) -> Result<i64> {
        // The next version in the same statement: two saves at once cannot take one number
        // (the primary key refuses the second, which the writer's order rules out anyway).
        let row = sqlx::query(
            "INSERT INTO guidelines (org_id, version, document, created_at, created_by) \
             SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, $4 FROM guidelines WHERE org_id = $1 RETURNING version",
        )
        .bind(org)
        .bind(document)
        .bind(rfc3339(at))
        .bind(by)
        .fetch_one(self.writer())
        .await?;
        Ok(row.try_get("version")?)
    }

    async fn guidelines(&self, org: i64) -> Result<Option<crate::StoredGuidelines>> {
        let row = sqlx::query("SELECT * FROM guidelines WHERE org_id = $1 ORDER BY version DESC LIMIT 1")
            .bind(org)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| -> Result<crate::StoredGuidelines> {
            Ok(crate::StoredGuidelines {
                version: r.try_get("version")?,
                document: r.try_get("document")?,
                created_at: ts_text(r.try_get("created_at")?)?,
                created_by: r.try_get("created_by")?,
            })
        })
        .transpose()
    }
}
