//! The decoders of the rows both schemas share.

use super::*;

pub(crate) fn company_from_row(row: &DbRow) -> Result<Company> {
    let social_id: String = row.try_get("social_id")?;
    let domain: Option<String> = row.try_get("domain")?;
    let last: Option<String> = row.try_get("last_scanned_at")?;
    let sc: Option<i64> = row.try_get("score")?;
    let grade: Option<String> = row.try_get("grade")?;
    Ok(Company {
        id: row.try_get("id")?,
        social_id: SocialId::parse(&social_id).map_err(|_| corrupt("social_id", &social_id))?,
        company_name: row.try_get("company_name")?,
        website: row.try_get("website")?,
        domain: domain.as_deref().map(Domain::parse).transpose().map_err(|_| corrupt("domain", &domain))?,
        domain_verified: row.try_get("domain_verified")?,
        industry: row.try_get("industry")?,
        description: row.try_get("description")?,
        company_id: row.try_get("company_id")?,
        funding_id: row.try_get("funding_id")?,
        employees_number: row.try_get("employees_number")?,
        followers_number: row.try_get("followers_number")?,
        naics_code: row.try_get("naics_code")?,
        searched_by: row.try_get("searched_by")?,
        last_scanned_at: last.as_deref().map(ts).transpose()?,
        score: sc.map(score).transpose()?,
        grade: grade.as_deref().map(Grade::parse).transpose().map_err(|_| corrupt("grade", &grade))?,
    })
}

pub(crate) fn application_from_row(row: &DbRow) -> Result<Application> {
    Ok(Application {
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        categories: json(row.try_get::<&str, _>("categories")?)?,
        host: row.try_get("host")?,
        cpe: row.try_get("cpe")?,
        evidence: row.try_get("evidence")?,
        confidence: confidence(row)?,
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

/// A detection's confidence column (0–100, NULL for imported rows).
pub(crate) fn confidence(row: &DbRow) -> Result<Option<u8>> {
    match row.try_get::<Option<i64>, _>("confidence")? {
        Some(n) => u8::try_from(n).map(Some).map_err(|_| corrupt("confidence", n)),
        None => Ok(None),
    }
}

pub(crate) fn endpoint_from_row(row: &DbRow) -> Result<NetworkEndpoint> {
    let ip: String = row.try_get("ip")?;
    let port: i64 = row.try_get("port")?;
    Ok(NetworkEndpoint {
        ip: ip.parse().map_err(|_| corrupt("ip", &ip))?,
        port: u16::try_from(port).map_err(|_| corrupt("port", port))?,
        protocol: row.try_get("protocol")?,
        host: row.try_get("host")?,
        service: row.try_get("service")?,
        product: row.try_get("product")?,
        version: row.try_get("version")?,
        banner: row.try_get("banner")?,
        attribution: match (row.try_get::<Option<String>, _>("source")?, row.try_get::<Option<String>, _>("evidence")?)
        {
            (Some(source), Some(evidence)) => Some(Attribution { source, evidence }),
            _ => None,
        },
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

pub(crate) fn host_from_row(row: &DbRow) -> Result<DiscoveredHost> {
    let addresses: String = row.try_get("addresses")?;
    Ok(DiscoveredHost {
        name: row.try_get("name")?,
        addresses: addresses
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| a.parse().map_err(|_| corrupt("addresses", a)))
            .collect::<Result<_>>()?,
        attribution: Attribution { source: row.try_get("source")?, evidence: row.try_get("evidence")? },
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

pub(crate) fn finding_from_row(row: &DbRow) -> Result<Finding> {
    let rv: String = row.try_get("risk_vector")?;
    let sev: String = row.try_get("severity")?;
    Ok(Finding {
        id: row.try_get("id")?,
        risk_vector: RiskVector::parse(&rv).map_err(|_| corrupt("risk_vector", &rv))?,
        asset: row.try_get("asset")?,
        severity: Severity::parse(&sev).map_err(|_| corrupt("severity", &sev))?,
        code: row.try_get("code")?,
        title: row.try_get("title")?,
        evidence: row.try_get("evidence")?,
        remediation: row.try_get("remediation")?,
        references: json(row.try_get::<&str, _>("refs")?)?,
        cve: match row.try_get::<Option<String>, _>("cve")? {
            Some(text) => Some(CveId::parse(&text).map_err(|_| corrupt("cve", &text))?),
            None => None,
        },
        component: row.try_get("component")?,
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
        disputed: row.try_get("disputed")?,
        no_weight: row.try_get("no_weight")?,
    })
}

pub(crate) fn key_from_row(row: &DbRow) -> Result<ApiKey> {
    let scopes: String = row.try_get("scopes")?;
    let company: Option<String> = row.try_get("company")?;
    let per_minute: i64 = row.try_get("per_minute")?;
    let monthly: i64 = row.try_get("monthly")?;
    let org: Option<i64> = row.try_get("org_id")?;
    Ok(ApiKey {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        hash: row.try_get("hash")?,
        scopes: Scope::parse_list(&scopes).map_err(|e| corrupt("scopes", e))?,
        company: company.as_deref().map(SocialId::parse).transpose().map_err(|_| corrupt("company", &company))?,
        org,
        per_minute: u32::try_from(per_minute).map_err(|_| corrupt("per_minute", per_minute))?,
        monthly: u64::try_from(monthly).map_err(|_| corrupt("monthly", monthly))?,
        active: row.try_get("active")?,
        created_at: ts(row.try_get("created_at")?)?,
    })
}

pub(crate) fn subsidiary_request_from_row(row: &DbRow) -> Result<SubsidiaryRequest> {
    let state: &str = row.try_get("state")?;
    Ok(SubsidiaryRequest {
        id: row.try_get("id")?,
        parent: SocialId::parse(row.try_get("parent_social_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        child: SocialId::parse(row.try_get("child_social_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        child_name: row.try_get("child_name")?,
        key_id: row.try_get("key_id")?,
        state: SubsidiaryState::parse(state)
            .ok_or_else(|| StoreError::Corrupt(format!("subsidiary request state {state:?}")))?,
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
        note: row.try_get("note")?,
    })
}

pub(crate) fn job_from_row(row: &DbRow) -> Result<Job> {
    let status: &str = row.try_get("status")?;
    Ok(Job {
        id: row.try_get("id")?,
        spec: model::JobSpec::from_stored(row.try_get("kind")?, row.try_get("payload")?)
            .map_err(StoreError::Corrupt)?,
        attempts: row.try_get("attempts")?,
        status: model::JobStatus::parse(status).ok_or_else(|| StoreError::Corrupt(format!("job status {status:?}")))?,
        priority: i16::try_from(row.try_get::<i64, _>("priority")?)
            .map_err(|_| StoreError::Corrupt("job priority out of range".into()))?,
        run_after: row.try_get("run_after")?,
        started_at: row.try_get("started_at")?,
        lease_token: row.try_get("lease_token")?,
        worker: row.try_get("worker")?,
        last_error: row.try_get("last_error")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(crate) fn event_from_row(row: &DbRow) -> Result<model::Event> {
    let kind: String = row.try_get("kind")?;
    let social: String = row.try_get("social_id")?;
    let data: String = row.try_get("data")?;
    let links: String = row.try_get("links")?;
    let at: String = row.try_get("occurred_at")?;
    Ok(model::Event {
        id: row.try_get("id")?,
        company: row.try_get("company_id")?,
        social_id: SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?,
        company_name: row.try_get("company_name")?,
        kind: model::EventKind::parse(&kind).map_err(|_| corrupt("event kind", &kind))?,
        subject: row.try_get("subject")?,
        occurred_at: ts(&at)?,
        summary: row.try_get("summary")?,
        data: json(&data)?,
        links: json::<Vec<model::EventLink>>(&links)?,
    })
}

pub(crate) fn webhook_from_row(row: &DbRow) -> Result<model::Webhook> {
    let social: String = row.try_get("social_id")?;
    let kinds: String = row.try_get("kinds")?;
    let at: String = row.try_get("created_at")?;
    Ok(model::Webhook {
        id: row.try_get("id")?,
        company: row.try_get("company_id")?,
        social_id: SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?,
        url: row.try_get("url")?,
        secret: row.try_get("secret")?,
        kinds: crate::events::kinds_of(&kinds)?,
        created_at: ts(&at)?,
    })
}

pub(crate) fn delivery_from_row(row: &DbRow) -> Result<model::Delivery> {
    let at: String = row.try_get("at")?;
    let status: Option<i64> = row.try_get("status")?;
    let millis: i64 = row.try_get("millis")?;
    Ok(model::Delivery {
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
