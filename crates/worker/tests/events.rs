//! Events and webhooks (docs/API.md, "Events and webhooks"): a lab company's DMARC record
//! is broken, the scheduled rescan finds it, and the event reaches a local receiver
//! signed as docs/API.md says; a receiver that fails twice gets it on the third try; a
//! body changed on the way fails the check.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, EventKind, NewWebhook, SocialId};
use scanner::probes::Context;
use sha2::Sha256;
use store::{CompanySnapshot, Store};
use worker::webhooks::{SIGNATURE_HEADER, TOLERANCE, VerifyError, verify};

const DNS: &str = "127.79.14.53";

fn lab_file(dmarc: &str) -> LabFile {
    LabFile::parse(&format!(
        r#"{{"dns": {{"address": "{DNS}"}}, "port_map": {{"53": 10053}},
            "zones": [{{"origin": "watch.test", "records": [
              "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"", "mail A 127.79.14.2",
              "_dmarc TXT \"{dmarc}\""]}}]}}"#
    ))
    .unwrap()
}

/// What a receiver got: its path, the signature header, the delivery id, the body.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    signature: String,
    delivery: String,
    body: Vec<u8>,
}

#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Got>>>,
}

fn got(path: &str, headers: &HeaderMap, body: &[u8]) -> Got {
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    Got {
        path: path.into(),
        signature: header(SIGNATURE_HEADER),
        delivery: header("Rampart-Delivery"),
        body: body.to_vec(),
    }
}

async fn ok(State(r): State<Receiver>, headers: HeaderMap, body: axum::body::Bytes) -> StatusCode {
    r.got.lock().unwrap().push(got("/ok", &headers, &body));
    StatusCode::NO_CONTENT
}

/// Fails the first two deliveries of each event, takes the third.
async fn flaky(State(r): State<Receiver>, headers: HeaderMap, body: axum::body::Bytes) -> (StatusCode, &'static str) {
    let mut all = r.got.lock().unwrap();
    let this = got("/flaky", &headers, &body);
    let before = all.iter().filter(|g| g.path == "/flaky" && g.delivery == this.delivery).count();
    all.push(this);
    if before < 2 { (StatusCode::INTERNAL_SERVER_ERROR, "try again later") } else { (StatusCode::OK, "thanks") }
}

async fn receiver() -> (Receiver, String) {
    let r = Receiver::default();
    let app = axum::Router::new()
        .route("/ok", axum::routing::post(ok))
        .route("/flaky", axum::routing::post(flaky))
        .with_state(r.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (r, base)
}

/// Waits up to `secs` for what `find` finds among the deliveries received.
async fn wait_for<T>(r: &Receiver, secs: u64, what: &str, find: impl Fn(&[Got]) -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(t) = find(&r.got.lock().unwrap()) {
            return t;
        }
        assert!(Instant::now() < until, "no {what} within {secs} s: {:?}", r.got.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn json(g: &Got) -> serde_json::Value {
    serde_json::from_slice(&g.body).unwrap()
}

/// The documented check, written out: HMAC-SHA256 over "<t>.<body>" with the secret,
/// hex, equal to the v1 value.
fn documented_check(secret: &str, header: &str, body: &[u8]) -> bool {
    let t = header.split(',').find_map(|p| p.strip_prefix("t=")).unwrap();
    let v1 = header.split(',').find_map(|p| p.strip_prefix("v1=")).unwrap();
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    mac.verify_slice(&hex::decode(v1).unwrap()).is_ok()
}

#[tokio::test]
async fn a_broken_dmarc_record_reaches_the_webhooks_signed_and_a_failing_receiver_gets_it_on_the_third_try() {
    let good = "v=DMARC1; p=reject; rua=mailto:d@watch.test";
    let mut lab = Lab::up(&lab_file(good)).await.unwrap();
    let file = lab_file(good);
    let ctx = Arc::new(Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("e.db").display())).await.unwrap();
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("watch-co").unwrap()),
        company_name: "Watch Co".into(),
        website: "https://www.watch.test".into(),
        domain: Some(Domain::parse("watch.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("watch.test").unwrap(), attribution: "test".into() }];
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();

    let (r, base) = receiver().await;
    let mut hooks = Vec::new();
    for (path, kinds) in [("/ok", vec![]), ("/flaky", vec![EventKind::FindingOpened])] {
        let secret = worker::webhooks::new_secret().unwrap();
        let url = format!("{base}{path}");
        worker::webhooks::check_url(&url, true).unwrap();
        hooks.push(store.add_webhook(&NewWebhook { company: c.id, url, secret, kinds }).await.unwrap());
    }
    let (ok_hook, flaky_hook) = (hooks[0].clone(), hooks[1].clone());

    // One worker: it scans the company at once (never scanned), then at its slots.
    let config = worker::Config {
        concurrency: 2,
        idle: Duration::from_millis(50),
        rescan_every: Some(Duration::from_secs(15)),
        retry_unit: Duration::from_millis(100),
        name: "events".into(),
        ..worker::Config::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(worker::run(store.clone(), ctx, config, async move {
        let _ = stopped.await;
    }));

    // The first rating is one event: the company was rated.
    let first = wait_for(&r, 60, "first rating", |all| {
        all.iter().find(|g| g.path == "/ok" && json(g)["type"] == "rating_changed").cloned()
    })
    .await;
    let first_json = json(&first);
    assert_eq!(first_json["social_id"], "watch-co");
    assert_eq!(first_json["data"]["previous"], serde_json::Value::Null);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert_eq!(verify(&ok_hook.secret, &first.signature, &first.body, now, TOLERANCE), Ok(()));

    // The DMARC record breaks; the scheduled rescan finds it.
    lab.down().await;
    lab = Lab::up(&lab_file("v=DMARC1; p=bogus")).await.unwrap();
    let opened = wait_for(&r, 90, "finding_opened for dmarc.syntax_error", |all| {
        all.iter()
            .find(|g| {
                g.path == "/ok"
                    && json(g)["type"] == "finding_opened"
                    && json(g)["data"]["code"] == "dmarc.syntax_error"
            })
            .cloned()
    })
    .await;
    let event = json(&opened);
    assert_eq!(event["data"]["severity"], "high");
    assert_eq!(event["data"]["asset"], "watch.test");
    assert_eq!(event["company_name"], "Watch Co");
    assert!(event["summary"].as_str().unwrap().contains("dmarc.syntax_error"), "{event}");
    let links: Vec<&str> = event["links"].as_array().unwrap().iter().map(|l| l["href"].as_str().unwrap()).collect();
    assert!(
        links.contains(&"/monitor-get-subdomain-findings?subdomain=watch.test&risk_vector_type=dmarc"),
        "{links:?}"
    );
    assert_eq!(opened.delivery, event["id"].to_string());

    // Signed: the library's check and the documented one agree; a tampered body fails.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert_eq!(verify(&ok_hook.secret, &opened.signature, &opened.body, now, TOLERANCE), Ok(()));
    assert!(documented_check(&ok_hook.secret, &opened.signature, &opened.body));
    let tampered = String::from_utf8(opened.body.clone()).unwrap().replace("\"high\"", "\"low\"");
    assert_ne!(tampered.as_bytes(), &opened.body[..]);
    assert_eq!(
        verify(&ok_hook.secret, &opened.signature, tampered.as_bytes(), now, TOLERANCE),
        Err(VerifyError::Mismatch)
    );
    assert!(!documented_check(&ok_hook.secret, &opened.signature, tampered.as_bytes()));
    assert_eq!(verify(&flaky_hook.secret, &opened.signature, &opened.body, now, TOLERANCE), Err(VerifyError::Mismatch));

    // The flaky receiver: two failures, then the same event (same delivery id) taken.
    let tries = wait_for(&r, 30, "a third try at the flaky receiver", |all| {
        let tries: Vec<Got> =
            all.iter().filter(|g| g.path == "/flaky" && g.delivery == opened.delivery).cloned().collect();
        (tries.len() >= 3).then_some(tries)
    })
    .await;
    assert_eq!(tries.len(), 3, "delivered once it was taken");
    for t in &tries {
        assert_eq!(json(t)["id"], event["id"]);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        assert_eq!(verify(&flaky_hook.secret, &t.signature, &t.body, now, TOLERANCE), Ok(()));
    }
    // Only the kind it asked for reached it.
    assert!(r.got.lock().unwrap().iter().filter(|g| g.path == "/flaky").all(|g| json(g)["type"] == "finding_opened"));
    // The log has each attempt with its status.
    let mut log = Vec::new();
    for _ in 0..50 {
        log = store.deliveries(flaky_hook.id, 50).await.unwrap();
        if log.iter().any(|d| d.outcome == "delivered") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let event_id = event["id"].as_i64().unwrap();
    let mut of_event: Vec<(i64, Option<u16>, String)> =
        log.iter().filter(|d| d.event == event_id).map(|d| (d.attempt, d.status, d.outcome.clone())).collect();
    of_event.sort();
    assert_eq!(
        of_event,
        vec![(1, Some(500), "failed".into()), (2, Some(500), "failed".into()), (3, Some(200), "delivered".into())]
    );
    assert!(
        log.iter()
            .find(|d| d.attempt == 1 && d.event == event_id)
            .unwrap()
            .error
            .as_deref()
            .unwrap()
            .contains("try again later")
    );

    // The events are kept: the first rating and the finding, newest first.
    let kept = store.events(&[c.id], model::Page::FIRST).await.unwrap();
    let kinds: Vec<EventKind> = kept.items.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::FindingOpened) && kinds.contains(&EventKind::RatingChanged), "{kinds:?}");
    assert_eq!(kept.items.last().unwrap().kind, EventKind::RatingChanged);

    let _ = stop.send(());
    run.await.unwrap();
    lab.down().await;
}
