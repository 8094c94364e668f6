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

/// PostgreSQL text cannot hold NUL: a lookup by such a value finds nothing (as it does
/// on SQLite) instead of failing.
pub(crate) fn has_nul(text: &str) -> bool {
    text.contains('\0')
}
