//! What both backends share: decoding of stored text (timestamps, scores, JSON), the
//! one-row answers of CVE queries, and the row decoders (`row_decoders!`, instantiated
//! for each backend's row type: the columns are the same on both).

use std::sync::Arc;

use model::timefmt::parse_datetime;
use model::{CveId, CveRecord, OffsetDateTimeText, Score, Severity};
use time::OffsetDateTime;

use crate::{Result, SharedStr, StoreError};

/// A CVE record from its row: its own JSON, or (when that is empty) its served form.
pub(crate) fn record(own: &str, served: Option<&str>) -> Result<CveRecord> {
    if !own.is_empty() {
        return json(own);
    }
    let served = served.ok_or_else(|| corrupt("cve record", "neither a record nor a served form"))?;
    CveRecord::from_served_form(served).map_err(|e| corrupt("served cve record", e.to_string()))
}

pub(crate) fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Corrupt(format!("{what}: {value:?}"))
}

/// Reads the records of an answer that came as one row. A few hundred rows crossing
/// sqlx's worker channel one by one cost several times what SQLite spends finding them,
/// so SQLite joins them into one string: fields split by US (0x1f), records by RS
/// (0x1e), which JSON text never holds unescaped. `each` reads one record; the pieces
/// it keeps share the one string ([`SharedStr`]) instead of copying it.
pub(crate) fn answer_rows<T>(
    joined: Option<String>,
    mut each: impl FnMut(&Arc<String>, &str) -> Result<T>,
) -> Result<Vec<T>> {
    let text = Arc::new(joined.unwrap_or_default());
    text.split('\u{1e}').filter(|r| !r.is_empty()).map(|row| each(&text, row)).collect()
}

/// `piece` of `text`, shared with it.
pub(crate) fn shared(text: &Arc<String>, piece: &str) -> Result<SharedStr> {
    SharedStr::within(text, piece).ok_or_else(|| corrupt("answer row", piece.get(..40).unwrap_or(piece)))
}

/// The next field of an answer row.
pub(crate) fn field<'a>(fields: &mut impl Iterator<Item = &'a str>, row: &str) -> Result<&'a str> {
    fields.next().ok_or_else(|| corrupt("answer row", row.get(..60).unwrap_or(row)))
}

/// The next field of an answer row, a CVE id.
pub(crate) fn cve_id_field<'a>(fields: &mut impl Iterator<Item = &'a str>, row: &str) -> Result<CveId> {
    let id = field(fields, row)?;
    CveId::parse(id).map_err(|_| corrupt("cve id", id))
}

/// The KEV entry, EPSS score and percentile of a record: the next three fields of an
/// answer row, each '' when absent.
pub(crate) fn side_feeds<'a>(
    text: &Arc<String>,
    fields: &mut impl Iterator<Item = &'a str>,
    row: &str,
) -> Result<(Option<SharedStr>, Option<f64>, Option<f64>)> {
    let number = |s: &str| -> Result<Option<f64>> {
        if s.is_empty() { Ok(None) } else { s.parse().map(Some).map_err(|_| corrupt("epss", s)) }
    };
    let kev = field(fields, row)?;
    let kev = if kev.is_empty() { None } else { Some(shared(text, kev)?) };
    Ok((kev, number(field(fields, row)?)?, number(field(fields, row)?)?))
}

/// RFC 3339 UTC with microseconds: CVE timestamps keep their fraction, and the fixed
/// width keeps text order equal to time order.
pub(crate) fn rfc3339_micros(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.format(time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"))
        .unwrap_or_default()
}

pub(crate) fn ts(raw: &str) -> Result<OffsetDateTime> {
    parse_datetime(raw).ok_or_else(|| corrupt("timestamp", raw))
}

pub(crate) fn ts_text(raw: &str) -> Result<OffsetDateTimeText> {
    ts(raw).map(OffsetDateTimeText)
}

pub(crate) fn score(h: i64) -> Result<Score> {
    Score::from_hundredths(h).map_err(|_| corrupt("score", h))
}

pub(crate) fn json<T: serde::de::DeserializeOwned>(raw: &str) -> Result<T> {
    serde_json::from_str(raw).map_err(|e| corrupt("json", e.to_string()))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(e.to_string()))
}

pub(crate) fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

pub(crate) const COMPANY_SELECT: &str = "SELECT c.id, c.social_id, c.company_name, c.website, c.domain, c.industry, \
     c.description, c.company_id, c.funding_id, c.employees_number, c.followers AS followers_number, c.naics_code, \
     c.searched_by, c.last_scanned_at, s.score AS score, s.grade AS grade, \
     NOT EXISTS (SELECT 1 FROM domains dv WHERE dv.company_id = c.id AND dv.name = c.domain AND NOT dv.verified) \
     AS domain_verified \
     FROM companies c LEFT JOIN scores s ON s.id = \
     (SELECT id FROM scores WHERE company_id = c.id ORDER BY scanned_at DESC LIMIT 1)";

pub(crate) fn severity_rank(s: Severity) -> i64 {
    match s {
        Severity::Info => 0,
        Severity::Low => 1,
        Severity::Medium => 2,
        Severity::High => 3,
        Severity::Critical => 4,
    }
}

pub(crate) fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The decoders of the rows both schemas share, for a backend's row type.
macro_rules! row_decoders {
    ($row:ty) => {
        pub(crate) fn company_from_row(row: &$row) -> Result<Company> {
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

        pub(crate) fn application_from_row(row: &$row) -> Result<Application> {
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
        pub(crate) fn confidence(row: &$row) -> Result<Option<u8>> {
            match row.try_get::<Option<i64>, _>("confidence")? {
                Some(n) => u8::try_from(n).map(Some).map_err(|_| corrupt("confidence", n)),
                None => Ok(None),
            }
        }

        pub(crate) fn endpoint_from_row(row: &$row) -> Result<NetworkEndpoint> {
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
                attribution: match (
                    row.try_get::<Option<String>, _>("source")?,
                    row.try_get::<Option<String>, _>("evidence")?,
                ) {
                    (Some(source), Some(evidence)) => Some(Attribution { source, evidence }),
                    _ => None,
                },
                first_seen: ts_text(row.try_get("first_seen")?)?,
                last_seen: ts_text(row.try_get("last_seen")?)?,
            })
        }

        pub(crate) fn host_from_row(row: &$row) -> Result<DiscoveredHost> {
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

        pub(crate) fn finding_from_row(row: &$row) -> Result<Finding> {
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

        pub(crate) fn key_from_row(row: &$row) -> Result<ApiKey> {
            let scopes: String = row.try_get("scopes")?;
            let company: Option<String> = row.try_get("company")?;
            let per_minute: i64 = row.try_get("per_minute")?;
            let monthly: i64 = row.try_get("monthly")?;
            Ok(ApiKey {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                prefix: row.try_get("prefix")?,
                hash: row.try_get("hash")?,
                scopes: Scope::parse_list(&scopes).map_err(|e| corrupt("scopes", e))?,
                company: company
                    .as_deref()
                    .map(SocialId::parse)
                    .transpose()
                    .map_err(|_| corrupt("company", &company))?,
                per_minute: u32::try_from(per_minute).map_err(|_| corrupt("per_minute", per_minute))?,
                monthly: u64::try_from(monthly).map_err(|_| corrupt("monthly", monthly))?,
                active: row.try_get("active")?,
                created_at: ts(row.try_get("created_at")?)?,
            })
        }

        pub(crate) fn subsidiary_request_from_row(row: &$row) -> Result<SubsidiaryRequest> {
            let state: &str = row.try_get("state")?;
            Ok(SubsidiaryRequest {
                id: row.try_get("id")?,
                parent: SocialId::parse(row.try_get("parent_social_id")?)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                child: SocialId::parse(row.try_get("child_social_id")?)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                child_name: row.try_get("child_name")?,
                key_id: row.try_get("key_id")?,
                state: SubsidiaryState::parse(state)
                    .ok_or_else(|| StoreError::Corrupt(format!("subsidiary request state {state:?}")))?,
                created_at: row.try_get("created_at")?,
                decided_at: row.try_get("decided_at")?,
                note: row.try_get("note")?,
            })
        }

        pub(crate) fn job_from_row(row: &$row) -> Result<Job> {
            let status: &str = row.try_get("status")?;
            Ok(Job {
                id: row.try_get("id")?,
                spec: model::JobSpec::from_stored(row.try_get("kind")?, row.try_get("payload")?)
                    .map_err(StoreError::Corrupt)?,
                attempts: row.try_get("attempts")?,
                status: model::JobStatus::parse(status)
                    .ok_or_else(|| StoreError::Corrupt(format!("job status {status:?}")))?,
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

        pub(crate) fn event_from_row(row: &$row) -> Result<model::Event> {
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

        pub(crate) fn webhook_from_row(row: &$row) -> Result<model::Webhook> {
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

        pub(crate) fn delivery_from_row(row: &$row) -> Result<model::Delivery> {
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
    };
}
pub(crate) use row_decoders;
