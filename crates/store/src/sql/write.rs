//! The writes several roles share: a company's profile and snapshot, its findings,
//! software, endpoints and scores, a subsidiary link.

use super::*;

/// Adds one rating to the history (a rating already stored for the same time is kept)
/// and moves the company's last scan time forward; true when it was added.
pub(crate) async fn insert_score(tx: &mut Transaction<'_, Db>, id: i64, snap: &ScoreSnapshot) -> Result<bool> {
    let at = rfc3339(snap.scanned_at.0);
    let sid: Option<i64> = sqlx::query_scalar(
        "INSERT INTO scores (company_id, scanned_at, score, grade, methodology, notes, reason, depth) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(id)
    .bind(&at)
    .bind(snap.score.hundredths())
    .bind(snap.grade.as_str())
    .bind(snap.methodology.as_deref())
    .bind(if snap.notes.is_empty() { None } else { Some(to_json(&snap.notes)?) })
    .bind(snap.reason.as_deref())
    .bind(snap.depth())
    .fetch_optional(&mut **tx)
    .await?;
    let Some(sid) = sid else { return Ok(false) };
    for (rv, c) in &snap.components {
        sqlx::query(
            "INSERT INTO component_scores (score_id, risk_vector, score, grade, weight, assets_checked, findings_count, \
             not_assessable, checks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(sid)
        .bind(rv.as_str())
        .bind(c.score.hundredths())
        .bind(c.grade.as_str())
        .bind(c.weight.hundredths())
        .bind(i64::from(c.assets_checked))
        .bind(i64::from(c.findings_count))
        .bind(c.not_assessable.as_deref())
        .bind(c.checks.as_ref().map(to_json).transpose()?)
        .execute(&mut **tx)
        .await?;
    }
    sqlx::query(
        "UPDATE companies SET last_scanned_at = $2 WHERE id = $1 AND (last_scanned_at IS NULL OR last_scanned_at < $2)",
    )
    .bind(id)
    .bind(&at)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// Inserts a finding or refreshes the stored one (same company, risk vector, asset and
/// code): first_seen is kept, last_seen moves on, a closed finding reopens (opened_at is
/// then the scan that saw it again).
pub(crate) async fn upsert_finding(tx: &mut Transaction<'_, Db>, company: i64, f: &Finding) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO findings (company_id, risk_vector, asset, severity, severity_rank, code, title, evidence, remediation, refs, first_seen, last_seen, cve, component, subject, opened_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $12) \
         ON CONFLICT (company_id, risk_vector, asset, code, subject) DO UPDATE SET severity = excluded.severity, \
         severity_rank = excluded.severity_rank, title = excluded.title, evidence = excluded.evidence, \
         remediation = excluded.remediation, refs = excluded.refs, cve = excluded.cve, component = excluded.component, \
         first_seen = CASE WHEN findings.first_seen <= excluded.first_seen THEN findings.first_seen ELSE excluded.first_seen END, last_seen = excluded.last_seen, \
         opened_at = CASE WHEN findings.closed_at IS NOT NULL AND NOT findings.false_positive THEN excluded.last_seen ELSE findings.opened_at END, \
         closed_at = CASE WHEN findings.false_positive THEN findings.closed_at ELSE NULL END RETURNING id",
    )
    .bind(company)
    .bind(f.risk_vector.as_str())
    .bind(&f.asset)
    .bind(f.severity.as_str())
    .bind(severity_rank(f.severity))
    .bind(&f.code)
    .bind(&f.title)
    .bind(&f.evidence)
    .bind(&f.remediation)
    .bind(to_json(&f.references)?)
    .bind(rfc3339(f.first_seen.0))
    .bind(rfc3339(f.last_seen.0))
    .bind(f.cve.as_ref().map(|c| c.as_str()))
    .bind(f.component.as_deref())
    .bind(crate::finding_subject(f))
    .fetch_one(&mut **tx)
    .await?)
}

pub(crate) async fn insert_application(tx: &mut Transaction<'_, Db>, company: i64, a: &Application) -> Result<()> {
    sqlx::query("INSERT INTO applications (company_id, name, version, categories, host, cpe, evidence, confidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
        .bind(company)
        .bind(&a.name)
        .bind(a.version.as_deref())
        .bind(to_json(&a.categories)?)
        .bind(&a.host)
        .bind(a.cpe.as_deref())
        .bind(&a.evidence)
        .bind(a.confidence.map(i64::from))
        .bind(rfc3339(a.first_seen.0))
        .bind(rfc3339(a.last_seen.0))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub(crate) async fn insert_component(tx: &mut Transaction<'_, Db>, company: i64, c: &SbomComponent) -> Result<()> {
    let cid: i64 = sqlx::query_scalar("INSERT INTO sbom_components (company_id, name, version, purl, cpe, evidence, end_of_life, latest_version, confidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id")
        .bind(company)
        .bind(&c.name)
        .bind(c.version.as_deref())
        .bind(c.purl.as_deref())
        .bind(c.cpe.as_deref())
        .bind(&c.evidence)
        .bind(c.end_of_life)
        .bind(c.latest_version.as_deref())
        .bind(c.confidence.map(i64::from))
        .bind(rfc3339(c.first_seen.0))
        .bind(rfc3339(c.last_seen.0))
        .fetch_one(&mut **tx)
        .await?;
    for h in &c.hosts {
        sqlx::query("INSERT INTO sbom_hosts (component_id, host) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(h.as_str())
            .execute(&mut **tx)
            .await?;
    }
    for cve in &c.cves {
        sqlx::query("INSERT INTO sbom_cves (component_id, cve_id, basis) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(cve.id.as_str())
            .bind(cve.basis.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

pub(crate) async fn insert_endpoint(tx: &mut Transaction<'_, Db>, company: i64, e: &NetworkEndpoint) -> Result<()> {
    sqlx::query(
        "INSERT INTO network_endpoints (company_id, ip, port, protocol, host, service, product, version, banner, \
         source, evidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(company)
    .bind(e.ip.to_string())
    .bind(i64::from(e.port))
    .bind(&e.protocol)
    .bind(e.host.as_deref())
    .bind(e.service.as_deref())
    .bind(e.product.as_deref())
    .bind(e.version.as_deref())
    .bind(&e.banner)
    .bind(e.attribution.as_ref().map(|a| a.source.as_str()))
    .bind(e.attribution.as_ref().map(|a| a.evidence.as_str()))
    .bind(rfc3339(e.first_seen.0))
    .bind(rfc3339(e.last_seen.0))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Links `child` below `parent` (nothing when the link exists); whether it was new.
pub(crate) async fn link(conn: &mut DbConnection, parent: i64, child: i64, now: &str) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO subsidiaries (parent_id, child_id, added_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    )
    .bind(parent)
    .bind(child)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn upsert_profile(tx: &mut Transaction<'_, Db>, p: &CompanyProfile, now: &str) -> Result<i64> {
    let social_id = p.social_id.as_ref().ok_or_else(|| StoreError::Invalid("social_id is required".into()))?;
    let pending_id = format!("pending:{social_id}");
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO companies (social_id, company_name, name_lc, website, domain, industry, description, \
         company_id, funding_id, employees_number, followers, naics_code, created_at, updated_at, name_norm) \
         VALUES ($1, $2, lower($2), $3, $4, $5, $6, coalesce($7, $8), $9, $10, $11, $12, $13, $13, $14) \
         ON CONFLICT (social_id) DO UPDATE SET company_name = excluded.company_name, name_lc = excluded.name_lc, \
         name_norm = excluded.name_norm, \
         website = excluded.website, domain = excluded.domain, industry = excluded.industry, \
         description = excluded.description, company_id = coalesce($7, companies.company_id), \
         funding_id = excluded.funding_id, employees_number = excluded.employees_number, \
         followers = excluded.followers, naics_code = excluded.naics_code, \
         updated_at = excluded.updated_at RETURNING id",
    )
    .bind(social_id.as_str())
    .bind(&p.company_name)
    .bind(&p.website)
    .bind(p.domain.as_ref().map(Domain::as_str))
    .bind(&p.industry)
    .bind(&p.description)
    .bind(p.company_id.as_deref())
    .bind(&pending_id)
    .bind(&p.funding_id)
    .bind(&p.employees_number)
    .bind(p.followers_number)
    .bind(p.naics_code)
    .bind(now)
    .bind(model::normalise_name(&p.company_name))
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query("UPDATE companies SET company_id = $3 WHERE id = $1 AND company_id = $2")
        .bind(id)
        .bind(&pending_id)
        .bind(format!("RP{id:08}"))
        .execute(&mut **tx)
        .await?;
    if let Some(d) = &p.domain {
        sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES ($1, $2, 'web domain of the company profile') ON CONFLICT DO NOTHING")
            .bind(id)
            .bind(d.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(id)
}

pub(crate) async fn write_snapshot(tx: &mut Transaction<'_, Db>, id: i64, s: &CompanySnapshot) -> Result<()> {
    if let Some(domains) = &s.domains {
        sqlx::query(
            "DELETE FROM domains WHERE company_id = $1 AND name IS DISTINCT FROM (SELECT domain FROM companies WHERE id = $1) \
             AND verified AND verified_by IS NULL AND attribution NOT LIKE 'added by the company%'",
        )
        .bind(id)
        .execute(&mut **tx)
        .await?;
        for d in domains {
            sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES ($1, $2, $3) ON CONFLICT (company_id, name) DO UPDATE SET attribution = excluded.attribution, verified = TRUE")
                .bind(id)
                .bind(d.name.as_str())
                .bind(&d.attribution)
                .execute(&mut **tx)
                .await?;
        }
    }
    if let Some(apps) = &s.applications {
        sqlx::query("DELETE FROM applications WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for a in apps {
            insert_application(tx, id, a).await?;
        }
    }
    if let Some(eps) = &s.network_endpoints {
        sqlx::query("DELETE FROM network_endpoints WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for e in eps {
            insert_endpoint(tx, id, e).await?;
        }
    }
    if let Some(sbom) = &s.sbom {
        sqlx::query("DELETE FROM sbom_components WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for c in sbom {
            insert_component(tx, id, c).await?;
        }
    }
    if let Some(findings) = &s.findings {
        let mut kept: Vec<i64> = Vec::with_capacity(findings.len());
        for f in findings {
            let fid = upsert_finding(tx, id, f).await?;
            kept.push(fid);
        }
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET closed_at = $3 WHERE company_id = $1 AND closed_at IS NULL AND NOT ({})",
            in_list("id", 2)
        )))
        .bind(id)
        .bind(list(&kept)?)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(&mut **tx)
        .await?;
    }
    for snap in &s.scores {
        insert_score(tx, id, snap).await?;
    }
    for inc in &s.incidents {
        sqlx::query(
            "INSERT INTO incidents (incident_id, company_id, domain, date_detected, record) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (incident_id) DO UPDATE SET company_id = excluded.company_id, domain = excluded.domain, \
             date_detected = excluded.date_detected, record = excluded.record",
        )
        .bind(&inc.incident_id)
        .bind(id)
        .bind(s.profile.domain.as_ref().map(Domain::as_str))
        .bind(inc.date_detected.map(|d| model::timefmt::format_date(d.0)))
        .bind(to_json(inc)?)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
