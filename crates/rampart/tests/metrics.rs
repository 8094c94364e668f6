//! Observability of a running `rampart serve --workers 1`: `/metrics` parses as the
//! Prometheus text format and its counters move with requests and a scan; every request
//! has an id (answered in X-Request-Id, the client's own kept) and one access-log line
//! (JSON with --log-format json) that never holds the key; `--metrics-listen` moves
//! `/metrics` to an address of its own.

mod common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Server, free_port, rampart, wait_healthy};

/// The samples of a scrape: (name, sorted labels) → value.
type Samples = BTreeMap<(String, Vec<(String, String)>), f64>;

async fn scrape(url: &str) -> Samples {
    let r = reqwest::get(url).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = r.text().await.unwrap();
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let parsed = prometheus_parse::Scrape::parse(lines).unwrap_or_else(|e| panic!("not the text format: {e}\n{text}"));
    let mut out = Samples::new();
    for s in parsed.samples {
        let mut labels: Vec<(String, String)> = s.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        labels.sort();
        let value = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            prometheus_parse::Value::Histogram(buckets) => {
                // The count of a histogram: its +Inf bucket.
                buckets.iter().find(|b| b.less_than.is_infinite()).map_or(0.0, |b| b.count)
            }
            prometheus_parse::Value::Summary(_) => continue,
        };
        out.insert((s.metric, labels), value);
    }
    out
}

fn get(samples: &Samples, name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut want: Vec<(String, String)> = labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    want.sort();
    samples.get(&(name.to_owned(), want)).copied().unwrap_or(0.0)
}

#[tokio::test]
async fn metrics_parse_and_move_with_requests_and_a_scan_and_every_request_is_logged_with_its_id() {
    let file = lab::LabFile::builtin_at(99).unwrap();
    let lab = lab::Lab::up(&file).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let lab_dir = dir.path().join("lab");
    lab.write_scanner_files(&file, &lab_dir).unwrap();
    let db = format!("sqlite://{}", dir.path().join("m.db").display());
    let store = store::open(&db).await.unwrap();
    let profile = model::CompanyProfile {
        social_id: Some(model::SocialId::parse("bluefin-bank").unwrap()),
        company_name: "Bluefin Savings Bank".into(),
        website: "https://www.bluefinbank.test".into(),
        domain: Some(model::Domain::parse("bluefinbank.test").unwrap()),
        ..Default::default()
    };
    store.save_company(&store::CompanySnapshot { profile, ..Default::default() }).await.unwrap();
    let out = rampart().stdout(Stdio::piped()).args(["keys", "create", "--db", &db, "--name", "m"]).output().unwrap();
    assert!(out.status.success());
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let log = dir.path().join("serve.log");
    let server = Server(
        rampart()
            .env("RAMPART_LOG", "warn,api::access=info")
            .args(["serve", "--db", &db, "--listen", &format!("127.0.0.1:{port}"), "--workers", "1"])
            .args(["--rescan-every", "off", "--log-format", "json", "--lab", lab_dir.to_str().unwrap()])
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_healthy(&base).await;
    let before = scrape(&format!("{base}/metrics")).await;
    assert_eq!(get(&before, "rampart_companies", &[]), 1.0);
    assert_eq!(get(&before, "rampart_companies_rated", &[]), 0.0);

    // A request that queues the scan, one without a key, one nowhere; ids made and kept.
    let client = reqwest::Client::new();
    let scores = format!("{base}/underwriter-getcompanyscores?social_id=bluefin-bank");
    let first = client.get(&scores).header("apikey", &key).send().await.unwrap();
    let made = first.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(made.len() == 16 && made.bytes().all(|b| b.is_ascii_hexdigit()), "{made}");
    let unauthorised = client.get(&scores).send().await.unwrap();
    assert_eq!(unauthorised.status(), 401);
    let lost = client.get(format!("{base}/no-such-thing")).header("x-request-id", "trace-42").send().await.unwrap();
    assert_eq!((lost.status().as_u16(), lost.headers()["x-request-id"].to_str().unwrap()), (404, "trace-42"));
    for forged in ["a b\"c<script>", &"x".repeat(65)] {
        let r = client.get(format!("{base}/healthz")).header("x-request-id", forged).send().await.unwrap();
        let given = r.headers()["x-request-id"].to_str().unwrap();
        assert!(given != forged && given.len() == 16, "an id that is not a plain token is replaced: {given}");
    }

    // The scan runs in the server's worker.
    let deadline = Instant::now() + Duration::from_secs(90);
    while !store::testkit::pending_jobs(&*store).await.unwrap().is_empty()
        || store.jobs(None, 10).await.unwrap().is_empty()
    {
        assert!(Instant::now() < deadline, "the scan did not run: {:?}", store.jobs(None, 10).await.unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The store's figures are read at most every five seconds (api::metrics::STORE_READ_EVERY).
    let scraped = Instant::now();
    let after = loop {
        let now = scrape(&format!("{base}/metrics")).await;
        if get(&now, "rampart_companies_rated", &[]) == 1.0 {
            break now;
        }
        assert!(scraped.elapsed() < Duration::from_secs(10), "the rated company is not counted: {now:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let op = ("operation", "/underwriter-getcompanyscores");
    let moved = |name: &str, labels: &[(&str, &str)]| get(&after, name, labels) - get(&before, name, labels);
    // Not rated yet: the spec's 400 (a scan is queued).
    assert_eq!(moved("rampart_http_requests_total", &[op, ("status", "400")]), 1.0, "{after:?}");
    assert_eq!(moved("rampart_http_requests_total", &[op, ("status", "401")]), 1.0);
    assert_eq!(moved("rampart_http_requests_total", &[("operation", "unmatched"), ("status", "404")]), 1.0);
    assert_eq!(moved("rampart_http_request_duration_seconds", &[op]), 2.0, "the latency histogram counts both");
    assert_eq!(get(&after, "rampart_jobs_finished_total", &[("kind", "scan"), ("outcome", "done")]), 1.0);
    assert_eq!(get(&after, "rampart_job_duration_seconds", &[("kind", "scan")]), 1.0);
    assert_eq!(get(&after, "rampart_companies_rated", &[]), 1.0);
    let age = get(&after, "rampart_rating_age_seconds", &[("quantile", "1")]);
    assert!((0.0..90.0).contains(&age), "the rating is {age} s old");
    drop(server);

    // One JSON line per request, with its id, operation, status and time; no key.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&key) && !text.contains(&key[..11]), "a key was logged");
    let access: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("not JSON: {e}: {l}")))
        .filter(|v| v["target"] == "api::access")
        .collect();
    let by_id = |id: &str| {
        access.iter().find(|v| v["request_id"] == id).unwrap_or_else(|| panic!("no line for {id}: {access:?}"))
    };
    let line = by_id(&made);
    assert_eq!(line["operation"], "/underwriter-getcompanyscores");
    assert!(line["micros"].as_u64().is_some() && line["method"] == "GET", "{line}");
    assert_eq!(by_id("trace-42")["status"], 404);
    assert!(access.iter().any(|v| v["status"] == 401));

    // --metrics-listen: /metrics on its own address, not on the API's.
    let (api_port, metrics_port) = (free_port(), free_port());
    let _apart = Server(
        rampart()
            .args(["serve", "--db", &db, "--listen", &format!("127.0.0.1:{api_port}")])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
            .spawn()
            .unwrap(),
    );
    let api_base = format!("http://127.0.0.1:{api_port}");
    wait_healthy(&api_base).await;
    assert_eq!(reqwest::get(format!("{api_base}/metrics")).await.unwrap().status(), 404);
    let own = scrape(&format!("http://127.0.0.1:{metrics_port}/metrics")).await;
    assert_eq!(get(&own, "rampart_companies_rated", &[]), 1.0);
    lab.down().await;
}
