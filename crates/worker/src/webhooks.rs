//! Webhook deliveries, signed the way Stripe signs its own.
//!
//! Each delivery is a `POST` of the event's JSON ([`model::Event::wire`]) with the
//! headers `Content-Type: application/json`, `Rampart-Event: <type>`,
//! `Rampart-Delivery: <event id>` (the same on every attempt: a receiver keeps the ids it
//! has handled and ignores repeats) and
//!
//! ```text
//! Rampart-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//! ```
//!
//! The receiver checks it with [`verify`]: it takes `t` and every `v1`, computes the
//! HMAC-SHA256 of the timestamp, a dot and the raw body with the webhook's secret,
//! compares in constant time, and refuses a timestamp more than [`TOLERANCE`] from its
//! clock (a replayed delivery). A delivery that does not get a 2xx answer (or none in
//! time) fails and its job is retried with exponential backoff ([`retry_after`]); every
//! attempt is logged with its status (`rampart webhooks deliveries ID`). The URL goes
//! through the scanner's guard: resolved once, the address checked (no loopback or
//! private address outside lab mode), no redirect followed.

use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use model::{Delivery, JobSpec};
use scanner::http::Origin;
use scanner::probes::Context;
use sha2::Sha256;
use store::Store;
use time::OffsetDateTime;

use crate::JobError;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "Rampart-Signature";
/// How far a signature's timestamp may be from the receiver's clock.
pub const TOLERANCE: Duration = Duration::from_secs(300);
/// The most of a receiver's answer read (and kept, 200 characters of it, in the log).
const ANSWER_LIMIT: usize = 4096;
/// A delivery attempt's overall deadline.
const DEADLINE: Duration = Duration::from_secs(15);

/// A new signing secret: `whsec_` and 32 random bytes in hex.
pub fn new_secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("whsec_{}", hex::encode(bytes)))
}

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The `Rampart-Signature` value of `body` sent at `timestamp` (Unix seconds).
pub fn signature_header(secret: &str, timestamp: i64, body: &[u8]) -> String {
    format!("t={timestamp},v1={}", hex::encode(mac(secret, timestamp, body).finalize().into_bytes()))
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the signature header is not t=<seconds>,v1=<hex>")]
    Malformed,
    #[error("no v1 signature matches the body")]
    Mismatch,
    #[error("the timestamp is {0} s from now: more than the tolerance")]
    Stale(i64),
}

/// Checks a delivery as a receiver does: `header` (the `Rampart-Signature` value) signs
/// `body` with `secret`, at a time within `tolerance` of `now` (Unix seconds).
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64, tolerance: Duration) -> Result<(), VerifyError> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for item in header.split(',').take(16) {
        match item.trim().split_once('=') {
            Some(("t", t)) => timestamp = Some(t.parse::<i64>().map_err(|_| VerifyError::Malformed)?),
            Some(("v1", v)) => signatures.push(hex::decode(v).map_err(|_| VerifyError::Malformed)?),
            _ => {}
        }
    }
    let (Some(t), false) = (timestamp, signatures.is_empty()) else { return Err(VerifyError::Malformed) };
    // Constant-time comparison (`Mac::verify_slice`).
    if !signatures.iter().any(|s| mac(secret, t, body).verify_slice(s).is_ok()) {
        return Err(VerifyError::Mismatch);
    }
    let off = now.saturating_sub(t);
    if off.unsigned_abs() > tolerance.as_secs() {
        return Err(VerifyError::Stale(off));
    }
    Ok(())
}

/// The wait before a delivery's next attempt after `attempts` failed ones: `unit` × 3ⁿ
/// (30 s, 90 s, 4.5 min, … with the default 10 s unit), at most six hours.
pub fn retry_after(attempts: i64, unit: Duration) -> Duration {
    let n = u32::try_from(attempts.clamp(1, 20)).unwrap_or(1);
    unit.saturating_mul(3u32.saturating_pow(n)).min(Duration::from_secs(6 * 3600))
}

/// Checks a webhook URL before it is kept: an absolute `http(s)://` URL without user
/// information whose host is a name or an IP address; an IP address in an internal range
/// (loopback, private, …) only when `allow_private` (lab mode), one that routes nowhere
/// (documentation, multicast, …) never. A name is resolved and
/// checked at each delivery.
pub fn check_url(url: &str, allow_private: bool) -> Result<(), String> {
    if url.len() > 2048 {
        return Err("the URL is longer than 2048 characters".into());
    }
    let (origin, _) = Origin::parse_url(url).map_err(|e| e.to_string())?;
    if let scanner::guard::Target::Ip(ip) = origin.target
        && let Some(why) = model::net::special_range(ip)
        && (!allow_private || scanner::guard::unroutable(why))
    {
        return Err(format!("{ip} is a {why} address: webhooks go to public addresses (lab mode admits the others)"));
    }
    Ok(())
}

/// One attempt to deliver `event` to `webhook` (the job's `attempt`-th; `last` when
/// the job is not tried again after a failure). A webhook or event that is gone ends
/// the job: nothing to deliver.
pub async fn deliver(
    store: &dyn Store,
    ctx: &Context,
    spec: &JobSpec,
    attempt: i64,
    last: bool,
) -> Result<(), JobError> {
    let JobSpec::Deliver { webhook, event, .. } = spec else {
        return Err(JobError::Payload(format!("{spec} is not a delivery")));
    };
    let (Some(hook), Some(event)) = (store.webhook(*webhook).await?, store.event(*event).await?) else {
        tracing::info!(webhook, event, "the webhook or the event is gone: nothing to deliver");
        return Ok(());
    };
    let body = event.webhook_body().map_err(|e| JobError::Payload(e.to_string()))?;
    let timestamp = OffsetDateTime::now_utc().unix_timestamp();
    let signature = signature_header(&hook.secret, timestamp, &body);
    let id = event.id.to_string();
    let headers = [
        ("Content-Type", "application/json"),
        ("Rampart-Event", event.kind.as_str()),
        ("Rampart-Delivery", id.as_str()),
        (SIGNATURE_HEADER, signature.as_str()),
    ];
    let started = Instant::now();
    let sent = async {
        let (origin, path) = Origin::parse_url(&hook.url).map_err(|e| e.to_string())?;
        scanner::http::post(&ctx.guard, ctx.lab_root.as_deref(), &origin, &path, &headers, body, ANSWER_LIMIT)
            .await
            .map_err(|e| e.to_string())
    };
    let answer = match tokio::time::timeout(DEADLINE, sent).await {
        Ok(answer) => answer,
        Err(_) => Err(format!("no answer within {} s", DEADLINE.as_secs())),
    };
    let took = started.elapsed();
    let (status, error) = match &answer {
        Ok((status, _, _)) if (200..300).contains(status) => (Some(*status), None),
        Ok((status, _, text)) => {
            let text: String = String::from_utf8_lossy(text).chars().filter(|c| !c.is_control()).take(200).collect();
            (Some(*status), Some(format!("HTTP {status}: {text}")))
        }
        Err(e) => (None, Some(e.chars().take(500).collect::<String>())),
    };
    let outcome = match (&error, last) {
        (None, _) => "delivered",
        (Some(_), false) => "failed",
        (Some(_), true) => "gave_up",
    };
    crate::metrics::delivery(outcome, took);
    store
        .record_delivery(&Delivery {
            webhook: hook.id,
            event: event.id,
            attempt,
            at: OffsetDateTime::now_utc(),
            status,
            outcome: outcome.to_owned(),
            error: error.clone(),
            millis: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        })
        .await?;
    match error {
        None => {
            tracing::info!(webhook = hook.id, event = event.id, attempt, status, "webhook delivered");
            Ok(())
        }
        Some(e) => {
            Err(JobError::Delivery(format!("webhook {} ({}): {e}", hook.id, scanner::guard::printable(&hook.url))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_and_a_changed_byte_does_not() {
        let secret = new_secret().unwrap();
        assert!(secret.starts_with("whsec_") && secret.len() == 6 + 64);
        let body = br#"{"id":1,"type":"finding_opened"}"#;
        let header = signature_header(&secret, 1_764_000_000, body);
        let tol = TOLERANCE;
        assert_eq!(verify(&secret, &header, body, 1_764_000_010, tol), Ok(()));
        assert_eq!(
            verify(&secret, &header, br#"{"id":2,"type":"finding_opened"}"#, 1_764_000_010, tol),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(verify("whsec_other", &header, body, 1_764_000_010, tol), Err(VerifyError::Mismatch));
        assert_eq!(verify(&secret, &header, body, 1_764_000_301, tol), Err(VerifyError::Stale(301)));
        // The timestamp is signed: moving it breaks the signature.
        let moved = header.replace("t=1764000000", "t=1764000100");
        assert_eq!(verify(&secret, &moved, body, 1_764_000_100, tol), Err(VerifyError::Mismatch));
        // Several v1 values (a secret being rolled): one that matches is enough.
        let two = format!("t=1764000000,v1={},{}", "00".repeat(32), header.split(',').nth(1).unwrap());
        assert_eq!(verify(&secret, &two, body, 1_764_000_000, tol), Ok(()));
        for bad in ["", "t=x,v1=00", "v1=00", "t=1764000000", "t=1764000000,v1=zz"] {
            assert_eq!(verify(&secret, bad, body, 1_764_000_000, tol), Err(VerifyError::Malformed), "{bad}");
        }
    }

    #[test]
    fn a_known_vector() {
        // HMAC-SHA256("whsec_test", "<t>.{}") computed with Python's hmac module (the
        // second is docs/API.md's example).
        assert_eq!(
            signature_header("whsec_test", 1_700_000_000, b"{}"),
            "t=1700000000,v1=35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91"
        );
        assert_eq!(
            signature_header("whsec_test", 1_764_302_400, b"{}"),
            "t=1764302400,v1=831d69f2af90b8a880ec583b5b10469982aa247bab914e3443992710be322627"
        );
    }

    #[test]
    fn retries_back_off_exponentially_up_to_six_hours() {
        let unit = Duration::from_secs(10);
        let waits: Vec<u64> = (1..=8).map(|n| retry_after(n, unit).as_secs()).collect();
        assert_eq!(waits, vec![30, 90, 270, 810, 2430, 7290, 21600, 21600]);
        assert_eq!(retry_after(1, Duration::from_millis(100)), Duration::from_millis(300));
    }

    #[test]
    fn urls_are_checked_before_they_are_kept() {
        assert!(check_url("https://hooks.example.com/rampart?x=1", false).is_ok());
        assert!(check_url("http://203.0.113.9:8080/", false).unwrap_err().contains("documentation"));
        assert!(check_url("http://127.0.0.1:9000/hook", false).unwrap_err().contains("loopback"));
        assert!(check_url("http://10.0.0.7/hook", false).is_err());
        assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
        assert!(check_url("http://203.0.113.9:8080/", true).is_err());
        assert!(check_url("ftp://hooks.example.com/", false).is_err());
        assert!(check_url("https://user:pw@hooks.example.com/", false).is_err());
        assert!(check_url("not a url", false).is_err());
    }
}
