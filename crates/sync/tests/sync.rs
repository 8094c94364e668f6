//! `sync::sync` against a feed server on 127.0.0.1 that serves the real data of
//! ../shared/data in the official layout, into a real SQLite file.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use model::CveId;
use store::SqliteStore;
use store::prelude::*;
use sync::{Feed, SyncError, SyncOptions};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

fn data() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"));
    if p.is_dir() {
        Some(p)
    } else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        eprintln!("skipped: the test data folder {} is absent", p.display());
        None
    }
}

// --- the feed server -------------------------------------------------------------------

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    query: HashMap<String, String>,
    headers: HeaderMap,
    status: u16,
}

const KEV_ETAG: &str = "\"kev-2025.08.25\"";
const CAPEC_LAST_MODIFIED: &str = "Tue, 01 Jul 2025 00:00:00 GMT";
/// The server's page size: smaller than the 2000 asked for, so paging is exercised.
const PAGE_CAP: usize = 5;

const CAPEC_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Attack_Pattern_Catalog xmlns="http://capec.mitre.org/capec-3" Name="CAPEC" Version="3.9">
   <Attack_Patterns>
      <Attack_Pattern ID="63" Name="Cross-Site Scripting (XSS)" Abstraction="Standard" Status="Draft">
         <Description>An adversary embeds malicious scripts in content that will be served to web browsers.</Description>
         <Related_Weaknesses><Related_Weakness CWE_ID="79"/><Related_Weakness CWE_ID="20"/></Related_Weaknesses>
      </Attack_Pattern>
      <Attack_Pattern ID="209" Name="XSS Using MIME Type Mismatch" Abstraction="Detailed" Status="Draft">
         <Description>An adversary creates a file with scripting content but where the specified MIME type of the file is such that scripting is not expected.</Description>
      </Attack_Pattern>
   </Attack_Patterns>
</Attack_Pattern_Catalog>"#;

struct Feeds {
    data: PathBuf,
    seen: Mutex<Vec<Seen>>,
    /// How many more times the failing routes fail: year 2015 answers 500, /flaky/kev.json
    /// breaks off half-way.
    failures_left: AtomicUsize,
    /// How many more times /busy/kev.json answers 503 (with `Retry-After: 0`).
    busy_left: AtomicUsize,
    /// The NVD API 2.0 records, with their last-modified time.
    nvd20: Vec<(OffsetDateTime, serde_json::Value)>,
    epss_gz: Vec<u8>,
    cwe_zip: Mutex<Option<Vec<u8>>>,
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn last_modified(cve: &serde_json::Value) -> OffsetDateTime {
    model::timefmt::parse_datetime(cve["lastModified"].as_str().unwrap()).unwrap()
}

/// Every record of nvd-2.0/ (bare `cve` objects and one-record pages alike).
fn nvd20_records(data: &Path) -> Vec<(OffsetDateTime, serde_json::Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let cves: Vec<serde_json::Value> = match doc.get("vulnerabilities") {
            Some(v) => v.as_array().unwrap().iter().map(|w| w["cve"].clone()).collect(),
            None => vec![doc],
        };
        out.extend(cves.into_iter().map(|c| (last_modified(&c), c)));
    }
    out.sort_by(|a, b| a.1["id"].as_str().cmp(&b.1["id"].as_str()));
    out
}

impl Feeds {
    fn new(data: &Path) -> Arc<Self> {
        // The EPSS sample has no CVE of the years served: one row is added for one that is.
        let mut epss = std::fs::read(data.join("epss/epss_scores_sample_first100.csv")).unwrap();
        epss.extend_from_slice(b"CVE-2014-0160,0.94469,0.99985\n");
        Arc::new(Feeds {
            data: data.to_owned(),
            seen: Mutex::new(Vec::new()),
            failures_left: AtomicUsize::new(0),
            busy_left: AtomicUsize::new(0),
            nvd20: nvd20_records(data),
            epss_gz: gzip(&epss),
            cwe_zip: Mutex::new(None),
        })
    }

    /// A server for the routes that need no test data.
    fn new_empty(dir: &Path) -> Arc<Self> {
        Arc::new(Feeds {
            data: dir.to_owned(),
            seen: Mutex::new(Vec::new()),
            failures_left: AtomicUsize::new(0),
            busy_left: AtomicUsize::new(0),
            nvd20: Vec::new(),
            epss_gz: Vec::new(),
            cwe_zip: Mutex::new(None),
        })
    }

    fn kev(&self) -> Vec<u8> {
        std::fs::read(self.data.join("kev/known_exploited_vulnerabilities.json")).unwrap()
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn seen_path(&self, path: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.path == path).collect()
    }
}

async fn record(State(feeds): State<Arc<Feeds>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let query = Query::<HashMap<String, String>>::try_from_uri(request.uri()).map(|q| q.0).unwrap_or_default();
    let headers = request.headers().clone();
    let response = next.run(request).await;
    feeds.seen.lock().unwrap().push(Seen { path, query, headers, status: response.status().as_u16() });
    response
}

fn gz_response(bytes: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/gzip")], bytes).into_response()
}

async fn year_feed(State(feeds): State<Arc<Feeds>>, UrlPath(file): UrlPath<String>) -> Response {
    let year = file.strip_prefix("nvdcve-2.0-").and_then(|f| f.strip_suffix(".json.gz"));
    match year {
        Some(y @ ("2014" | "2015")) => {
            if y == "2015"
                && feeds.failures_left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
            {
                return (StatusCode::INTERNAL_SERVER_ERROR, "try again later").into_response();
            }
            // 1.1 content under the 2.0 name: the NVD reader takes both.
            gz_response(std::fs::read(feeds.data.join(format!("nvd-1.1/nvdcve-1.1-{y}.json.gz"))).unwrap())
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn cve_api(State(feeds): State<Arc<Feeds>>, Query(q): Query<HashMap<String, String>>) -> Response {
    let date = |name: &str| q.get(name).and_then(|v| OffsetDateTime::parse(v, &Rfc3339).ok());
    let (Some(start), Some(end)) = (date("lastModStartDate"), date("lastModEndDate")) else {
        return (StatusCode::BAD_REQUEST, "both dates are required").into_response();
    };
    if end < start || end - start > time::Duration::days(120) {
        return (StatusCode::BAD_REQUEST, "the date range is over 120 days").into_response();
    }
    let index: usize = q.get("startIndex").and_then(|v| v.parse().ok()).unwrap_or(0);
    let per_page: usize = q.get("resultsPerPage").and_then(|v| v.parse().ok()).unwrap_or(2000).min(PAGE_CAP);
    let matching: Vec<&serde_json::Value> =
        feeds.nvd20.iter().filter(|(t, _)| *t >= start && *t <= end).map(|(_, c)| c).collect();
    let page: Vec<serde_json::Value> =
        matching.iter().skip(index).take(per_page).map(|c| serde_json::json!({ "cve": c })).collect();
    axum::Json(serde_json::json!({
        "resultsPerPage": page.len(),
        "startIndex": index,
        "totalResults": matching.len(),
        "format": "NVD_CVE",
        "version": "2.0",
        "timestamp": "2026-11-22T00:00:00.000",
        "vulnerabilities": page,
    }))
    .into_response()
}

async fn kev(State(feeds): State<Arc<Feeds>>, headers: HeaderMap) -> Response {
    if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == KEV_ETAG) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, KEV_ETAG)]).into_response();
    }
    ([(header::ETAG, KEV_ETAG), (header::CONTENT_TYPE, "application/json")], feeds.kev()).into_response()
}

/// KEV with byte ranges (`Range: bytes=N-`).
async fn kev_ranges(State(feeds): State<Arc<Feeds>>, headers: HeaderMap) -> Response {
    let body = feeds.kev();
    let from = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok());
    match from {
        Some(n) if n < body.len() => {
            let range = format!("bytes {n}-{}/{}", body.len() - 1, body.len());
            (StatusCode::PARTIAL_CONTENT, [(header::CONTENT_RANGE, range)], body[n..].to_vec()).into_response()
        }
        Some(_) => StatusCode::RANGE_NOT_SATISFIABLE.into_response(),
        None => body.into_response(),
    }
}

/// KEV behind a server that is busy `busy_left` more times.
async fn kev_busy(State(feeds): State<Arc<Feeds>>) -> Response {
    let busy = feeds.busy_left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
    if busy {
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "0")], "busy").into_response();
    }
    feeds.kev().into_response()
}

/// KEV with a strong ETag, whose first full download breaks off half-way; ranges
/// are served when `If-Range` matches.
async fn kev_flaky(State(feeds): State<Arc<Feeds>>, headers: HeaderMap) -> Response {
    let body = feeds.kev();
    let range_ok = headers.get(header::IF_RANGE).is_none_or(|v| v == KEV_ETAG);
    let from = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|_| range_ok);
    if let Some(n) = from {
        let range = format!("bytes {n}-{}/{}", body.len() - 1, body.len());
        return (
            StatusCode::PARTIAL_CONTENT,
            [(header::CONTENT_RANGE, range), (header::ETAG, KEV_ETAG.into())],
            body[n..].to_vec(),
        )
            .into_response();
    }
    if feeds.failures_left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
        let half = body[..body.len() / 2].to_vec();
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            vec![Ok(half), Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut"))];
        let stream = futures_util::stream::iter(chunks);
        return ([(header::ETAG, KEV_ETAG)], axum::body::Body::from_stream(stream)).into_response();
    }
    ([(header::ETAG, KEV_ETAG)], body).into_response()
}

async fn epss(State(feeds): State<Arc<Feeds>>) -> Response {
    gz_response(feeds.epss_gz.clone())
}

fn cwe_xml(feeds: &Feeds) -> Vec<u8> {
    std::fs::read(feeds.data.join("cwe-capec/cwec_v4.15.xml")).unwrap()
}

async fn cwe_zip(State(feeds): State<Arc<Feeds>>) -> Response {
    let mut cached = feeds.cwe_zip.lock().unwrap();
    let zipped = cached.get_or_insert_with(|| {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(1));
        w.start_file("cwec_v4.15.xml", options).unwrap();
        w.write_all(&cwe_xml(&feeds)).unwrap();
        w.finish().unwrap().into_inner()
    });
    ([(header::CONTENT_TYPE, "application/zip")], zipped.clone()).into_response()
}

async fn cwe_plain(State(feeds): State<Arc<Feeds>>) -> Response {
    ([(header::CONTENT_TYPE, "application/xml")], cwe_xml(&feeds)).into_response()
}

async fn capec(headers: HeaderMap) -> Response {
    if headers.get(header::IF_MODIFIED_SINCE).is_some_and(|v| v == CAPEC_LAST_MODIFIED) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    ([(header::LAST_MODIFIED, CAPEC_LAST_MODIFIED), (header::CONTENT_TYPE, "application/xml")], CAPEC_XML)
        .into_response()
}

const ADVISORIES_ETAG: &str = "\"nginx-advisories-1\"";

/// nginx's security advisories, with an ETag.
async fn nginx_advisories(State(feeds): State<Arc<Feeds>>, headers: HeaderMap) -> Response {
    if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == ADVISORIES_ETAG) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, ADVISORIES_ETAG)]).into_response();
    }
    let xml = std::fs::read(feeds.data.join("vendor-advisories/nginx/security_advisories.xml")).unwrap();
    ([(header::ETAG, ADVISORIES_ETAG), (header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

/// A zip archive of a publisher's repository: two httpd advisories among files that are
/// not advisories.
async fn advisory_archive(State(feeds): State<Arc<Feeds>>) -> Response {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for cve in ["CVE-2021-41773", "CVE-2009-1890"] {
        let json = std::fs::read(feeds.data.join(format!("vendor-advisories/httpd/{cve}.json"))).unwrap();
        w.start_file(format!("httpd-site-main/content/security/json/{cve}.json"), options).unwrap();
        w.write_all(&json).unwrap();
    }
    w.start_file("httpd-site-main/package.json", options).unwrap();
    w.write_all(br#"{"name": "httpd-site", "private": true}"#).unwrap();
    w.start_file("httpd-site-main/README.md", options).unwrap();
    w.write_all(b"# not read").unwrap();
    ([(header::CONTENT_TYPE, "application/zip")], w.finish().unwrap().into_inner()).into_response()
}

/// 64 KiB with a Content-Length.
async fn big() -> Response {
    vec![b' '; 64 << 10].into_response()
}

/// 1 MiB that travels as 1 KiB: gzip transfer coding, no usable Content-Length.
async fn bomb() -> Response {
    let mut r = gzip(&vec![b'0'; 1 << 20]).into_response();
    r.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    r
}

/// A redirect to an internal address: never followed.
async fn moved() -> Response {
    (StatusCode::FOUND, [(header::LOCATION, "http://169.254.169.254/latest/meta-data/")]).into_response()
}

/// Answers after 30 s.
async fn slow() -> Response {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".into_response()
}

async fn serve(feeds: Arc<Feeds>) -> String {
    let app = Router::new()
        .route("/feeds/{file}", get(year_feed))
        .route("/rest/json/cves/2.0", get(cve_api))
        .route("/kev.json", get(kev))
        .route("/ranges/kev.json", get(kev_ranges))
        .route("/flaky/kev.json", get(kev_flaky))
        .route("/busy/kev.json", get(kev_busy))
        .route("/epss.csv.gz", get(epss))
        .route("/cwec.xml.zip", get(cwe_zip))
        .route("/cwec.xml", get(cwe_plain))
        .route("/capec.xml", get(capec))
        .route("/advisories/security_advisories.xml", get(nginx_advisories))
        .route("/advisories/httpd-site.zip", get(advisory_archive))
        .route("/big.json", get(big))
        .route("/bomb.csv", get(bomb))
        .route("/slow.json", get(slow))
        .route("/moved.json", get(moved))
        .layer(middleware::from_fn_with_state(feeds.clone(), record))
        .with_state(feeds);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

// --- helpers -----------------------------------------------------------------------------

struct Setup {
    feeds: Arc<Feeds>,
    base: String,
    dir: tempfile::TempDir,
    store: SqliteStore,
}

impl Setup {
    async fn new(data: &Path) -> Self {
        let feeds = Feeds::new(data);
        let base = serve(feeds.clone()).await;
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&format!("sqlite://{}", dir.path().join("rampart.db").display())).await.unwrap();
        Setup { feeds, base, dir, store }
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    fn options(&self, feeds: &[Feed]) -> SyncOptions {
        SyncOptions { feeds: feeds.to_vec(), ..local_options(&self.base, &self.cache()) }
    }

    async fn state(&self, feed: &str) -> serde_json::Value {
        let raw = self.store.feed_state(feed).await.unwrap().unwrap_or_else(|| panic!("no {feed} state"));
        serde_json::from_str(&raw).unwrap()
    }

    async fn cve(&self, id: &str) -> Option<model::CveRecord> {
        self.store.cve(&CveId::parse(id).unwrap()).await.unwrap()
    }

    fn cache_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.cache())
            .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// Every URL on the test server: nothing here reaches the official sources.
fn local_options(base: &str, cache: &Path) -> SyncOptions {
    SyncOptions {
        feeds: Feed::ALL.to_vec(),
        nvd_feed_base: format!("{base}/feeds"),
        nvd_api: format!("{base}/rest/json/cves/2.0"),
        nvd_api_key: None,
        nvd_pause: Duration::ZERO,
        kev_url: format!("{base}/kev.json"),
        epss_url: format!("{base}/epss.csv.gz"),
        cwe_url: format!("{base}/cwec.xml.zip"),
        capec_url: format!("{base}/capec.xml"),
        advisory_urls: Vec::new(),
        cache_dir: cache.to_owned(),
        first_year: 2014,
        progress: false,
        timeout: Duration::from_secs(120),
        max_file_bytes: 64 << 20,
        retries: 3,
        retry_pause: Duration::ZERO,
    }
}

fn current_year() -> i32 {
    OffsetDateTime::now_utc().year()
}

fn incomplete(err: SyncError) -> Box<sync::Incomplete> {
    match err {
        SyncError::Incomplete(i) => i,
        other => panic!("expected an incomplete sync, got {other}"),
    }
}

// --- tests -----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_sync_imports_the_nvd_years_and_every_file_feed_then_switches_to_incremental() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    let started = OffsetDateTime::now_utc();
    let report = sync::sync(&s.store, &s.options(&Feed::ALL)).await.unwrap();
    eprintln!("{report}");

    let nvd = report.feed(Feed::Nvd).unwrap();
    assert_eq!(nvd.files_fetched, 2, "{nvd:?}");
    assert!(nvd.read > 10_000 && nvd.written > 10_000, "{nvd:?}");
    assert_eq!(nvd.skipped.len(), (current_year() - 2015) as usize, "{:?}", nvd.skipped);
    for year in 2014..=current_year() {
        assert_eq!(s.feeds.seen_path(&format!("/feeds/nvdcve-2.0-{year}.json.gz")).len(), 1, "{year}");
    }
    let state = s.state("nvd").await;
    assert_eq!(state["mode"], "incremental", "{state}");
    let since = OffsetDateTime::parse(state["last_modified"].as_str().unwrap(), &Rfc3339).unwrap();
    assert!(since <= started && since >= started - time::Duration::days(3), "{state}");
    assert!(s.feeds.seen_path("/rest/json/cves/2.0").is_empty(), "the first sync reads the feed files only");

    for feed in [Feed::Kev, Feed::Epss, Feed::Cwe, Feed::Capec] {
        let r = report.feed(feed).unwrap();
        assert_eq!((r.files_fetched, r.unchanged, &r.error), (1, false, &None), "{r:?}");
        assert!(r.read > 0 && r.written > 0, "{r:?}");
    }
    assert_eq!(report.feed(Feed::Cwe).unwrap().read, 964);
    assert_eq!(report.feed(Feed::Capec).unwrap().read, 2);
    let sample = std::fs::read_to_string(data.join("epss/epss_scores_sample_first100.csv")).unwrap();
    let rows = sample.lines().filter(|l| l.starts_with("CVE-")).count();
    assert_eq!(report.feed(Feed::Epss).unwrap().read, rows + 1, "the sample and the row added");

    // The records, through the Store trait.
    let heartbleed = s.cve("CVE-2014-0160").await.expect("CVE-2014-0160 from the 2014 file");
    assert_eq!(heartbleed.kev.as_ref().map(|k| k["dateAdded"].clone()), Some("2022-05-04".into()));
    assert_eq!(heartbleed.epss, Some(0.94469));
    assert!(s.cve("CVE-2015-0204").await.is_some(), "CVE-2015-0204 from the 2015 file");
    assert!(s.cve("CVE-2021-44228").await.is_none(), "not served by any year file");
    // 63 names CWE-79 itself; 209 is there because the CWE catalogue lists it for CWE-79.
    let patterns = s.store.capec_for_cwes(&["CWE-79"]).await.unwrap().remove("CWE-79").unwrap_or_default();
    let ids: Vec<&str> = patterns.iter().filter_map(|p| p["id"].as_str()).collect();
    assert!(ids.contains(&"63") && ids.contains(&"209"), "{ids:?}");

    for feed in ["kev", "epss", "cwe", "capec"] {
        let state = s.state(feed).await;
        assert!(state["url"].as_str().unwrap().starts_with(&s.base), "{state}");
    }
    assert_eq!(s.state("kev").await["etag"], KEV_ETAG);
    assert_eq!(s.state("capec").await["last_modified"], CAPEC_LAST_MODIFIED);

    // NVD files are gone once imported; the last file of each other feed stays; no parts.
    assert_eq!(
        s.cache_files(),
        ["capec-capec.xml", "cwe-cwec.xml.zip", "cwe-cwec_v4.15.xml", "epss-epss.csv.gz", "kev-kev.json"]
    );
    // Every request says who is asking.
    assert!(s.feeds.seen().iter().all(|r| r.headers[header::USER_AGENT].to_str().unwrap().starts_with("Rampart/")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_syncs_read_the_api_by_windows_and_pages_and_honour_not_modified() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    let first = sync::sync(&s.store, &s.options(&[Feed::Kev, Feed::Capec])).await.unwrap();
    assert!(!first.feed(Feed::Kev).unwrap().unchanged);

    let since = OffsetDateTime::parse("2025-01-01T00:00:00Z", &Rfc3339).unwrap();
    s.store
        .set_feed_state("nvd", r#"{"mode":"incremental","last_modified":"2025-01-01T00:00:00.000Z"}"#)
        .await
        .unwrap();
    let mut opts = s.options(&[Feed::Nvd, Feed::Kev, Feed::Capec]);
    opts.nvd_api_key = Some("test-key".into());
    let started = OffsetDateTime::now_utc();
    let report = sync::sync(&s.store, &opts).await.unwrap();
    eprintln!("{report}");

    // What changed since 2025-01-01, each record once (no record sits on a window edge).
    let expected = s.feeds.nvd20.iter().filter(|(t, _)| *t >= since).count();
    let nvd = report.feed(Feed::Nvd).unwrap();
    assert!(expected > 40, "{expected}");
    assert_eq!((nvd.read, nvd.written), (expected, expected), "{nvd:?}");

    let requests = s.feeds.seen_path("/rest/json/cves/2.0");
    assert_eq!(nvd.files_fetched, requests.len());
    assert!(requests.iter().all(|r| r.status == 200 && r.headers["apiKey"] == "test-key"));
    assert!(requests.iter().all(|r| r.query["resultsPerPage"] == "2000"));
    // Windows of at most 120 days, one after the other, from the stored time to now.
    let mut windows: Vec<(String, String)> =
        requests.iter().map(|r| (r.query["lastModStartDate"].clone(), r.query["lastModEndDate"].clone())).collect();
    windows.dedup();
    assert_eq!(windows[0].0, "2025-01-01T00:00:00.000Z");
    let parse = |t: &str| OffsetDateTime::parse(t, &Rfc3339).unwrap();
    for (i, (start, end)) in windows.iter().enumerate() {
        assert!(parse(end) - parse(start) <= time::Duration::days(120), "{start} {end}");
        if let Some(next) = windows.get(i + 1) {
            assert_eq!(&next.0, end);
        }
    }
    let last_end = parse(&windows.last().unwrap().1);
    assert!(last_end >= started - time::Duration::seconds(5) && last_end <= OffsetDateTime::now_utc());
    // Pages: startIndex 0, 5, 10, ... within each window.
    for (start, _) in &windows {
        let indexes: Vec<usize> = requests
            .iter()
            .filter(|r| &r.query["lastModStartDate"] == start)
            .map(|r| r.query["startIndex"].parse().unwrap())
            .collect();
        assert_eq!(indexes, (0..indexes.len()).map(|i| i * PAGE_CAP).collect::<Vec<_>>(), "{start}");
    }
    assert!(requests.len() > windows.len(), "some window has several pages");

    let state = s.state("nvd").await;
    assert_eq!(state["mode"], "incremental");
    assert_eq!(parse(state["last_modified"].as_str().unwrap()), last_end);

    let log4shell = s.cve("CVE-2021-44228").await.expect("CVE-2021-44228 from the API");
    let modified = log4shell.last_modified.map(|t| t.0);
    assert_eq!(modified, Some(OffsetDateTime::parse("2025-04-03T20:53:22.977Z", &Rfc3339).unwrap()));
    assert!(log4shell.kev.is_some(), "the KEV catalogue of the first sync applies");
    assert!(s.cve("CVE-2024-3400").await.is_none(), "last modified in 2024: before the stored time");

    // KEV answered 304 to its ETag, CAPEC to its Last-Modified.
    for feed in [Feed::Kev, Feed::Capec] {
        let r = report.feed(feed).unwrap();
        assert!(r.unchanged && r.files_fetched == 0 && r.read == 0, "{r:?}");
    }
    assert!(report.to_string().contains("kev: unchanged"), "{report}");
    let kev = s.feeds.seen_path("/kev.json");
    assert_eq!(kev.len(), 2);
    assert_eq!(kev[1].headers[header::IF_NONE_MATCH], KEV_ETAG);
    assert_eq!(kev[1].status, 304);
    assert_eq!(s.feeds.seen_path("/capec.xml")[1].headers[header::IF_MODIFIED_SINCE], CAPEC_LAST_MODIFIED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_file_is_continued_with_a_range_request() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    vulndb::import::nvd_file(&s.store, &data.join("nvd-2.0/CVE-2021-44228.json")).await.unwrap();
    let kev = s.feeds.kev();
    let half = kev.len() / 2;
    std::fs::create_dir_all(s.cache()).unwrap();
    std::fs::write(s.cache().join("kev-kev.json.part"), &kev[..half]).unwrap();

    let mut opts = s.options(&[Feed::Kev]);
    opts.kev_url = format!("{}/ranges/kev.json", s.base);
    let report = sync::sync(&s.store, &opts).await.unwrap();

    let seen = s.feeds.seen_path("/ranges/kev.json");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].headers[header::RANGE], format!("bytes={half}-").as_str());
    assert_eq!(seen[0].status, 206);
    assert_eq!(std::fs::read(s.cache().join("kev-kev.json")).unwrap(), kev, "the completed file is the original");
    let entries =
        serde_json::from_slice::<serde_json::Value>(&kev).unwrap()["vulnerabilities"].as_array().unwrap().len();
    let r = report.feed(Feed::Kev).unwrap();
    assert_eq!((r.files_fetched, r.read, r.written), (1, entries, entries), "{r:?}");
    let log4shell = s.cve("CVE-2021-44228").await.unwrap();
    assert_eq!(log4shell.kev.map(|k| k["dateAdded"].clone()), Some("2021-12-10".into()));
    assert_eq!(s.cache_files(), ["kev-kev.json"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_broken_off_is_continued_by_the_next_run_with_if_range() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    s.feeds.failures_left.store(1, Ordering::SeqCst);
    let mut opts = s.options(&[Feed::Kev]);
    opts.kev_url = format!("{}/flaky/kev.json", s.base);
    let kev = s.feeds.kev();

    let failed = incomplete(sync::sync(&s.store, &opts).await.unwrap_err());
    let (_, e) = &failed.failures[0];
    let half = (kev.len() / 2) as u64;
    assert!(matches!(e, SyncError::Body { url, received, .. } if *url == opts.kev_url && *received == half), "{e:?}");
    assert_eq!(s.cache_files(), ["kev-kev.json.part", "kev-kev.json.part.meta"]);
    assert_eq!(std::fs::metadata(s.cache().join("kev-kev.json.part")).unwrap().len(), half);
    assert!(s.store.feed_state("kev").await.unwrap().is_none());

    let report = sync::sync(&s.store, &opts).await.unwrap();
    let seen = s.feeds.seen_path("/flaky/kev.json");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].headers[header::RANGE], format!("bytes={half}-").as_str());
    assert_eq!(seen[1].headers[header::IF_RANGE], KEV_ETAG);
    assert_eq!(seen[1].status, 206);
    assert_eq!(std::fs::read(s.cache().join("kev-kev.json")).unwrap(), kev);
    assert_eq!(s.cache_files(), ["kev-kev.json"]);
    assert!(report.feed(Feed::Kev).unwrap().written > 1000);
    assert_eq!(s.state("kev").await["etag"], KEV_ETAG);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_file_starts_over_when_the_server_sends_the_whole_file() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    std::fs::create_dir_all(s.cache()).unwrap();
    std::fs::write(s.cache().join("kev-kev.json.part"), b"not the start of the catalogue").unwrap();

    let report = sync::sync(&s.store, &s.options(&[Feed::Kev])).await.unwrap();
    let seen = s.feeds.seen_path("/kev.json");
    assert_eq!(seen[0].headers[header::RANGE], "bytes=30-");
    assert_eq!(seen[0].status, 200, "this route ignores ranges");
    assert_eq!(std::fs::read(s.cache().join("kev-kev.json")).unwrap(), s.feeds.kev());
    assert!(report.feed(Feed::Kev).unwrap().written > 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_first_nvd_sync_goes_on_with_the_next_year() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    s.feeds.failures_left.store(1, Ordering::SeqCst);
    let opts = s.options(&[Feed::Nvd]);

    let failed = incomplete(sync::sync(&s.store, &opts).await.unwrap_err());
    let message = failed.to_string();
    let url_2015 = format!("{}/feeds/nvdcve-2.0-2015.json.gz", s.base);
    assert!(message.contains(&url_2015) && message.contains("500 Internal Server Error: try again later"), "{message}");
    assert_eq!(failed.failures.len(), 1);
    let nvd = failed.report.feed(Feed::Nvd).unwrap();
    assert_eq!(nvd.files_fetched, 1);
    assert!(nvd.error.as_deref().is_some_and(|e| e.contains(&url_2015)));
    let state = s.state("nvd").await;
    assert_eq!((state["mode"].as_str(), state["done_through"].as_i64()), (Some("years"), Some(2014)), "{state}");
    let started_at = state["started_at"].clone();
    assert!(s.cve("CVE-2014-0160").await.is_some());
    assert!(s.cve("CVE-2015-0204").await.is_none());

    let report = sync::sync(&s.store, &opts).await.unwrap();
    let nvd = report.feed(Feed::Nvd).unwrap();
    assert_eq!(nvd.files_fetched, 1, "only 2015 is fetched again: {nvd:?}");
    assert_eq!(s.feeds.seen_path("/feeds/nvdcve-2.0-2014.json.gz").len(), 1);
    let tries: Vec<u16> = s.feeds.seen_path("/feeds/nvdcve-2.0-2015.json.gz").iter().map(|r| r.status).collect();
    assert_eq!(tries, [500, 200]);
    assert!(s.cve("CVE-2015-0204").await.is_some());
    let state = s.state("nvd").await;
    assert_eq!(state["mode"], "incremental", "{state}");
    // The incremental sync starts from the first run's start (less the feed lag).
    let first_start = OffsetDateTime::parse(started_at.as_str().unwrap(), &Rfc3339).unwrap();
    let since = OffsetDateTime::parse(state["last_modified"].as_str().unwrap(), &Rfc3339).unwrap();
    assert!(since < first_start, "{state} {started_at}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_max_file_bytes_is_an_error_naming_the_url() {
    // No test data needed: the bodies are made here.
    let dir = tempfile::tempdir().unwrap();
    let feeds = Feeds::new_empty(dir.path());
    let base = serve(feeds.clone()).await;
    let store = SqliteStore::open(&format!("sqlite://{}", dir.path().join("rampart.db").display())).await.unwrap();
    let cache = dir.path().join("cache");
    let opts = SyncOptions {
        feeds: vec![Feed::Kev, Feed::Epss],
        kev_url: format!("{base}/big.json"),
        epss_url: format!("{base}/bomb.csv"),
        max_file_bytes: 10_000,
        ..local_options(&base, &cache)
    };
    let failed = incomplete(sync::sync(&store, &opts).await.unwrap_err());
    assert_eq!(failed.failures.len(), 2, "{failed}");
    for (feed, url) in [(Feed::Kev, &opts.kev_url), (Feed::Epss, &opts.epss_url)] {
        let (_, e) = failed.failures.iter().find(|(f, _)| *f == feed).unwrap();
        assert!(matches!(e, SyncError::TooLarge { url: u, limit: 10_000 } if u == url), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(url.as_str()) && text.contains("10000 bytes"), "{text}");
    }
    // The gzip one came compressed: the bound holds for what it expands to.
    assert_eq!(feeds.seen_path("/bomb.csv")[0].status, 200);
    assert!(std::fs::read_dir(&cache).unwrap().next().is_none(), "no part is kept of a file over the limit");
    assert!(store.feed_state("kev").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cwe_mirror_xml_is_imported_without_unzipping() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    let mut opts = s.options(&[Feed::Cwe]);
    opts.cwe_url = format!("{}/cwec.xml", s.base);
    let report = sync::sync(&s.store, &opts).await.unwrap();
    let r = report.feed(Feed::Cwe).unwrap();
    assert_eq!((r.files_fetched, r.read), (1, 964), "{r:?}");
    assert_eq!(s.cache_files(), ["cwe-cwec.xml"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_source_is_an_error_naming_the_url() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    let opts = SyncOptions {
        feeds: vec![Feed::Capec],
        timeout: Duration::from_secs(5),
        ..local_options(&format!("http://127.0.0.1:{port}"), &dir.path().join("cache"))
    };
    let failed = incomplete(sync::sync(&store, &opts).await.unwrap_err());
    let text = failed.to_string();
    eprintln!("{text}");
    assert!(text.contains(&opts.capec_url) && text.contains("request failed"), "{text}");
    assert!(text.to_lowercase().contains("connect"), "the cause is told: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_not_followed_and_the_error_says_where_it_pointed() {
    let dir = tempfile::tempdir().unwrap();
    let feeds = Feeds::new_empty(dir.path());
    let base = serve(feeds.clone()).await;
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    let opts = SyncOptions {
        feeds: vec![Feed::Kev],
        kev_url: format!("{base}/moved.json"),
        retries: 0,
        ..local_options(&base, &dir.path().join("cache"))
    };
    let failed = incomplete(sync::sync(&store, &opts).await.unwrap_err());
    let text = failed.to_string();
    assert!(text.contains("302") && text.contains("169.254.169.254") && text.contains("not followed"), "{text}");
    assert_eq!(feeds.seen_path("/moved.json").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_timeout_is_an_error_naming_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let feeds = Feeds::new_empty(dir.path());
    let base = serve(feeds.clone()).await;
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    let opts = SyncOptions {
        feeds: vec![Feed::Kev],
        kev_url: format!("{base}/slow.json"),
        timeout: Duration::from_secs(1),
        ..local_options(&base, &dir.path().join("cache"))
    };
    let started = std::time::Instant::now();
    let failed = incomplete(sync::sync(&store, &opts).await.unwrap_err());
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = failed.to_string();
    assert!(text.contains(&opts.kev_url) && text.contains("timed out"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_server_is_asked_again_and_then_given_up_on() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    s.feeds.busy_left.store(2, Ordering::SeqCst);
    let opts = SyncOptions { kev_url: format!("{}/busy/kev.json", s.base), ..s.options(&[Feed::Kev]) };
    let report = sync::sync(&s.store, &opts).await.unwrap();
    assert_eq!(report.feed(Feed::Kev).unwrap().read, 1404);
    let tries: Vec<u16> = s.feeds.seen_path("/busy/kev.json").iter().map(|r| r.status).collect();
    assert_eq!(tries, [503, 503, 200]);

    s.feeds.busy_left.store(10, Ordering::SeqCst);
    let cache = tempfile::tempdir().unwrap();
    let opts = SyncOptions { retries: 1, cache_dir: cache.path().to_owned(), ..opts };
    let failed = incomplete(sync::sync(&s.store, &opts).await.unwrap_err());
    assert!(failed.to_string().contains("503"), "{failed}");
    assert_eq!(s.feeds.seen_path("/busy/kev.json").len(), 3 + 2, "one try and one retry");
}

/// The advisories feed: a vendor's file and an archive of a publisher's repository,
/// whose advisories are imported and whose other files are left out; the file unchanged
/// (304) the next time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advisories_come_from_files_and_archives_and_honour_not_modified() {
    let Some(data) = data() else { return };
    let s = Setup::new(&data).await;
    let urls =
        vec![format!("{}/advisories/security_advisories.xml", s.base), format!("{}/advisories/httpd-site.zip", s.base)];
    let options = SyncOptions { advisory_urls: urls.clone(), ..s.options(&[Feed::Advisories]) };
    let report = sync::sync(&s.store, &options).await.unwrap();
    let r = report.feed(Feed::Advisories).unwrap();
    assert_eq!((r.files_fetched, &r.error), (2, &None), "{r:?}");
    let nginx = s.store.advisories_for("f5", "nginx").await.unwrap();
    assert!(nginx.len() > 30, "{} nginx statements", nginx.len());
    let httpd: Vec<String> =
        s.store.advisories_for("apache", "http_server").await.unwrap().iter().map(|a| a.cve_id.to_string()).collect();
    assert_eq!(httpd, ["CVE-2009-1890", "CVE-2021-41773"], "the archive's advisories, not its other files");
    assert_eq!(r.read, nginx.len() + 2);
    let state = s.state("advisories").await;
    let kept: Vec<&str> = state["files"].as_array().unwrap().iter().map(|f| f["url"].as_str().unwrap()).collect();
    assert_eq!(kept, urls.iter().map(String::as_str).collect::<Vec<_>>(), "{state}");

    let again = sync::sync(&s.store, &options).await.unwrap();
    let r = again.feed(Feed::Advisories).unwrap();
    assert_eq!(r.files_fetched, 1, "the file is unchanged, the archive has no validators: {r:?}");
    let asked = s.feeds.seen_path("/advisories/security_advisories.xml");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1].status, 304);
    assert_eq!(asked[1].headers[header::IF_NONE_MATCH], ADVISORIES_ETAG);
    assert!(!r.unchanged, "the archive was fetched again");
    let file_only = SyncOptions { advisory_urls: urls[..1].to_vec(), ..options.clone() };
    let r = sync::sync(&s.store, &file_only).await.unwrap();
    assert!(r.feed(Feed::Advisories).unwrap().unchanged, "every source answered 304");

    // A file that is not an advisory fails the feed, naming the URL; the others ran.
    let bad = SyncOptions { advisory_urls: vec![format!("{}/kev.json", s.base), urls[0].clone()], ..options };
    let err = incomplete(sync::sync(&s.store, &bad).await.unwrap_err());
    let said = err.report.feed(Feed::Advisories).unwrap().error.clone().unwrap();
    assert!(said.contains("/kev.json"), "{said}");
}
