//! Events: what changed about a company between two looks at it (a rating that moved, a
//! finding opened or closed, a new asset, a scan that failed or stopped short), kept
//! for the events operations and delivered to webhooks.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::SocialId;

/// What an event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The company was rated for the first time, its grade changed, or its score moved
    /// by at least [`SCORE_MOVE`] points.
    RatingChanged,
    /// A critical or high finding opened (new, or back after it had closed).
    FindingOpened,
    /// A finding closed: a scan no longer saw it, or the feeds no longer name its CVE.
    FindingClosed,
    /// A host was attributed to the company for the first time.
    AssetAttributed,
    /// A scan of the company failed for good (out of attempts, or its domains do not
    /// exist).
    ScanFailed,
    /// A scan stopped at its budget, or left out a domain that does not exist: what it
    /// did not look at keeps its findings.
    ScanTruncated,
    /// The company's rating became older than twice its rescan cadence (no scan has
    /// refreshed it): it is answered as stale.
    RatingStale,
}

/// How far a score moves (in points of 100) before the move is an event by itself.
pub const SCORE_MOVE: f64 = 5.0;

impl EventKind {
    pub const ALL: [EventKind; 7] = [
        EventKind::RatingChanged,
        EventKind::FindingOpened,
        EventKind::FindingClosed,
        EventKind::AssetAttributed,
        EventKind::ScanFailed,
        EventKind::ScanTruncated,
        EventKind::RatingStale,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::RatingChanged => "rating_changed",
            EventKind::FindingOpened => "finding_opened",
            EventKind::FindingClosed => "finding_closed",
            EventKind::AssetAttributed => "asset_attributed",
            EventKind::ScanFailed => "scan_failed",
            EventKind::ScanTruncated => "scan_truncated",
            EventKind::RatingStale => "rating_stale",
        }
    }

    pub fn parse(raw: &str) -> Result<EventKind, String> {
        let raw = raw.trim();
        EventKind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(raw)).ok_or_else(|| {
            let all: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
            format!("unknown event type {raw:?}: expected one of {}", all.join(", "))
        })
    }

    /// Parses a comma-separated list (`finding_opened,rating_changed`), without repeats,
    /// in the order of [`EventKind::ALL`].
    pub fn parse_list(raw: &str) -> Result<Vec<EventKind>, String> {
        let mut out = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let kind = EventKind::parse(part)?;
            if !out.contains(&kind) {
                out.push(kind);
            }
        }
        out.sort();
        Ok(out)
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an event's evidence is: an operation of the API (a path with its query).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLink {
    /// What the link shows: `scores`, `score_history`, `findings`, `assets`.
    pub rel: String,
    pub href: String,
}

/// An event to be kept ([`crate::Event`] once stored). Events of one company, kind and
/// subject at one time are one event: a job run again records nothing twice.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub company: i64,
    pub kind: EventKind,
    /// What the event is about within its kind (a finding's identity, a host name), so
    /// that the same change recorded twice is kept once.
    pub subject: String,
    pub occurred_at: OffsetDateTime,
    /// One line for people.
    pub summary: String,
    /// What changed, for programs (an object; its fields depend on the kind).
    pub data: Value,
    pub links: Vec<EventLink>,
}

/// A kept event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: i64,
    pub company: i64,
    pub social_id: SocialId,
    pub company_name: String,
    pub kind: EventKind,
    pub subject: String,
    pub occurred_at: OffsetDateTime,
    pub summary: String,
    pub data: Value,
    pub links: Vec<EventLink>,
}

impl Event {
    /// The event as the API lists it and a webhook receives it.
    pub fn body(&self) -> EventBody {
        EventBody {
            id: self.id,
            kind: self.kind,
            social_id: self.social_id.clone(),
            company_name: self.company_name.clone(),
            occurred_at: crate::timefmt::rfc3339(self.occurred_at),
            summary: self.summary.clone(),
            data: self.data.clone(),
            links: self.links.clone(),
        }
    }

    /// The body of a webhook delivery: [`Event::body`] as JSON, its members (and those of
    /// its links) in name order, as webhooks have always been sent.
    pub fn webhook_body(&self) -> Result<Vec<u8>, serde_json::Error> {
        // Through a `Value`, whose objects keep their members sorted by name.
        serde_json::to_vec(&serde_json::to_value(self.body())?)
    }
}

/// The one shape of an event outside Rampart: the body of a webhook delivery, and the
/// event as the API lists it (`api::responses::EventOut` is made from it and documents
/// it; a test there holds the two equal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventBody {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub social_id: SocialId,
    pub company_name: String,
    /// RFC 3339, UTC.
    pub occurred_at: String,
    pub summary: String,
    /// What changed, for programs (an object; its members depend on the kind).
    pub data: Value,
    pub links: Vec<EventLink>,
}

/// A webhook: where a company's events (and its subsidiaries') are delivered.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub id: i64,
    /// The company it follows; events of its subsidiaries are delivered too.
    pub company: i64,
    pub social_id: SocialId,
    pub url: String,
    /// The signing secret (`whsec_…`): shown once when the webhook is added, and used
    /// for every delivery's `Rampart-Signature`.
    pub secret: String,
    /// The kinds delivered; every kind when empty.
    pub kinds: Vec<EventKind>,
    pub created_at: OffsetDateTime,
}

impl Webhook {
    /// Whether events of `kind` go to this webhook.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }
}

/// A webhook to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWebhook {
    pub company: i64,
    pub url: String,
    pub secret: String,
    pub kinds: Vec<EventKind>,
}

/// One attempt to deliver an event to a webhook, as logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub webhook: i64,
    pub event: i64,
    /// 1 for the first attempt.
    pub attempt: i64,
    pub at: OffsetDateTime,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// `delivered` (a 2xx answer), `failed` (retried later) or `gave_up`.
    pub outcome: String,
    /// Why it failed: the error, or the start of the receiver's answer.
    pub error: Option<String>,
    pub millis: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        for k in EventKind::ALL {
            assert_eq!(EventKind::parse(k.as_str()), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), Value::String(k.as_str().into()));
        }
        assert_eq!(
            EventKind::parse_list("scan_failed, Finding_Opened,scan_failed").unwrap(),
            vec![EventKind::FindingOpened, EventKind::ScanFailed]
        );
        assert!(EventKind::parse_list("finding_opened,bogus").unwrap_err().contains("bogus"));
        assert_eq!(EventKind::parse_list("").unwrap(), vec![]);
    }
}
