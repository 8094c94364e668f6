//! Timestamp formats used across the store and the API.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// RFC 3339 in UTC with whole seconds, as stored: `2026-01-31T12:00:00Z`.
pub fn rfc3339(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC).replace_nanosecond(0).unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_default()
}

/// Parses RFC 3339, or a zone-less ISO 8601 date-time (taken as UTC), or a bare date.
pub fn parse_datetime(raw: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(raw, &Rfc3339) {
        return Some(t.to_offset(UtcOffset::UTC));
    }
    let no_zone = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second][optional [.[subsecond]]]");
    if let Ok(t) = PrimitiveDateTime::parse(raw, no_zone) {
        return Some(t.assume_utc());
    }
    // NVD 1.1 feeds write minutes only: 2014-01-31T23:55Z.
    let minutes = format_description!("[year]-[month]-[day]T[hour]:[minute]Z");
    if let Ok(t) = PrimitiveDateTime::parse(raw, minutes) {
        return Some(t.assume_utc());
    }
    parse_date(raw).map(|d| d.midnight().assume_utc())
}

/// `YYYY-MM-DD`.
pub fn parse_date(raw: &str) -> Option<Date> {
    Date::parse(raw, format_description!("[year]-[month]-[day]")).ok()
}

pub fn format_date(d: Date) -> String {
    d.format(format_description!("[year]-[month]-[day]")).unwrap_or_default()
}

/// cve-search's form: ISO 8601 without zone, microsecond precision.
pub fn cve_search_datetime(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    t.format(format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]"))
        .unwrap_or_default()
}

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// The calendar month of `t` in UTC, `YYYY-MM`: the unit of monthly quotas.
pub fn month(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!("{:04}-{:02}", t.year(), u8::from(t.month()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t = parse_datetime("2021-12-10T10:15:09.143").unwrap();
        assert_eq!(cve_search_datetime(t), "2021-12-10T10:15:09.143000");
        assert_eq!(rfc3339(t), "2021-12-10T10:15:09Z");
        assert_eq!(rfc3339(parse_datetime("2021-12-10T12:15:09+02:00").unwrap()), "2021-12-10T10:15:09Z");
        assert_eq!(rfc3339(parse_datetime("2021-12-10").unwrap()), "2021-12-10T00:00:00Z");
        assert!(parse_datetime("yesterday").is_none());
        assert_eq!(rfc3339(parse_datetime("2014-01-31T23:55Z").unwrap()), "2014-01-31T23:55:00Z");
    }
}
