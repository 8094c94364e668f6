//! A real server on an ephemeral port over a real database — a SQLite file, or with
//! `RAMPART_TEST_BACKEND=postgres` a PostgreSQL schema of its own — seeded through the
//! public import path, and a small typed client.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use model::{Scope, SocialId};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use store::{SqliteStore, Store};

/// Where the test servers keep their data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// `RAMPART_TEST_BACKEND` (`sqlite`, the default, or `postgres`).
    pub fn from_env() -> Backend {
        match std::env::var("RAMPART_TEST_BACKEND").as_deref() {
            Ok("postgres") => Backend::Postgres,
            Ok("sqlite") | Err(_) => Backend::Sqlite,
            Ok(other) => panic!("RAMPART_TEST_BACKEND={other}: expected sqlite or postgres"),
        }
    }
}

pub struct TestApp {
    pub addr: SocketAddr,
    pub store: Arc<dyn Store>,
    pub backend: Backend,
    /// The database URL the server's store was opened with.
    pub db_url: String,
    pub client: reqwest::Client,
    /// general, vulnerability, underwriter, portfolio; unbound; of the organisation
    /// [`ORG`], whose portfolio [`BOOK`] holds acme-robotics and the paging company.
    pub underwriter: String,
    /// Every scope, bound to acme-robotics.
    pub monitor: String,
    /// Every scope, bound to the paging company.
    pub pager: String,
    _dir: tempfile::TempDir,
    _schema: Option<store::testkit::PgSchema>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

pub const PAGER: &str = "pager-co";
/// The organisation of the underwriter key, and its portfolio's id.
pub const ORG: &str = "Test Underwriting";
pub const BOOK: i64 = 1;
pub const PAGED_ITEMS: usize = 23;

/// A company with 23 of everything and 12 subsidiaries, in the import format.
fn pager_lines() -> String {
    let t = "2026-11-01T00:00:00Z";
    let comp: serde_json::Map<String, Value> = super::shapes::COMPONENTS
        .iter()
        .map(|c| {
            (
                c.to_string(),
                json!({"score": 90.0, "grade": "A", "weight": 8.33, "assets_checked": 1, "findings_count": 2}),
            )
        })
        .collect();
    let n = PAGED_ITEMS;
    let subs: Vec<Value> = (0..12)
        .map(|i| json!({"social_id": format!("pager-sub-{i:02}"), "company_name": format!("Pager Sub {i:02}"), "website": format!("https://sub{i}.pager.example"),
                        "scores": [{"scanned_at": t, "score": 50 + i, "grade": "E", "components": comp}]}))
        .collect();
    let pager = json!({
        "social_id": PAGER, "company_name": "Pager Co", "website": "https://www.pager.example", "domain": "pager.example",
        "industry": "Testing", "description": "Has 23 of everything", "naics_code": 541511,
        "applications": (0..n).map(|i| json!({"name": format!("app{i:02}"), "version": "1.0", "host": format!("h{i:02}.pager.example"), "first_seen": t, "last_seen": t})).collect::<Vec<_>>(),
        "network_endpoints": (0..n).map(|i| json!({"ip": format!("192.0.2.{i}"), "port": 443, "first_seen": t, "last_seen": t})).collect::<Vec<_>>(),
        "sbom": (0..n).map(|i| json!({"name": format!("lib{i:02}"), "version": "1.0", "hosts": [format!("h{i:02}.pager.example")], "cves": ["CVE-2021-44228"], "first_seen": t, "last_seen": t})).collect::<Vec<_>>(),
        "findings": (0..n).map(|i| json!({"risk_vector": if i % 2 == 0 {"dkim"} else {"vulnerabilities"}, "asset": "mail.pager.example", "severity": "high",
                                           "code": format!("code{i:02}"), "title": "t", "first_seen": t, "last_seen": t})).collect::<Vec<_>>(),
        "scores": [{"scanned_at": t, "score": 90.0, "grade": "A", "components": comp}],
        "subsidiaries": subs,
    });
    format!("{pager}\n")
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(api::Config {
            key_cache_ttl: Duration::ZERO,
            read_cache_ttl: Duration::ZERO,
            cve_cache_ttl: Duration::ZERO,
            version_poll: Duration::from_millis(50),
            flush_every: Duration::from_millis(50),
            mock: None,
            auth_failures_per_minute: api::FAILURES_PER_MINUTE,
            request_timeout: api::REQUEST_TIMEOUT,
            trusted_proxies: Vec::new(),
            metrics: Some(std::sync::Arc::new(api::metrics::Metrics::new(Default::default()))),
            metrics_on_api: true,
            lab_addresses: true,
            default_cadence: api::DEFAULT_CADENCE,
        })
        .await
    }

    pub async fn spawn_with(config: api::Config) -> TestApp {
        let dir = tempfile::tempdir().expect("tempdir");
        let backend = Backend::from_env();
        let (store, db_url, schema): (Arc<dyn Store>, String, _) = match backend {
            Backend::Sqlite => {
                let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
                (Arc::new(SqliteStore::open(&url).await.expect("open")), url, None)
            }
            Backend::Postgres => {
                let schema = store::testkit::PgSchema::create().await.expect("PostgreSQL for RAMPART_TEST_BACKEND");
                (Arc::new(schema.store().await), schema.url(), Some(schema))
            }
        };
        intel::sample::load(&*store).await.expect("sample");
        vulndb::import::sample(&*store).await.expect("sample CVEs");
        intel::import_companies(&*store, pager_lines().as_bytes()).await.expect("pager");
        let org = store.create_org(ORG).await.expect("organisation");
        let underwriter = Self::org_key_in(&*store, org.id).await;
        let book = store.create_portfolio(org.id, "Book", 100).await.expect("portfolio").expect("made");
        assert_eq!(book.id, BOOK);
        let mut members = Vec::new();
        for sid in ["acme-robotics", PAGER] {
            let c = store.company_by_social_id(&SocialId::parse(sid).unwrap()).await.unwrap().expect("seeded");
            members.push((c.id, model::VendorRecord::default()));
        }
        store.add_to_portfolio(book.id, &members).await.expect("members");
        let monitor = Self::key_in(&*store, Scope::ALL.to_vec(), Some("acme-robotics"), 0, 0).await;
        let pager = Self::key_in(&*store, Scope::ALL.to_vec(), Some(PAGER), 0, 0).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let state = api::AppState::with_store(store.clone(), config);
        tokio::spawn(api::serve(listener, state, async move {
            let _ = rx.await;
        }));
        TestApp {
            addr,
            store,
            backend,
            db_url,
            client: reqwest::Client::builder().timeout(Duration::from_secs(20)).build().expect("client"),
            underwriter,
            monitor,
            pager,
            _dir: dir,
            _schema: schema,
            _shutdown: tx,
        }
    }

    /// A second server with this one's keys over `store` (a copy of this one's data).
    pub async fn beside(&self, store: Arc<dyn Store>, backend: Backend, db_url: String) -> TestApp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let config = api::Config {
            key_cache_ttl: Duration::ZERO,
            read_cache_ttl: Duration::ZERO,
            cve_cache_ttl: Duration::ZERO,
            version_poll: Duration::from_millis(50),
            flush_every: Duration::from_millis(50),
            mock: None,
            auth_failures_per_minute: api::FAILURES_PER_MINUTE,
            request_timeout: api::REQUEST_TIMEOUT,
            trusted_proxies: Vec::new(),
            metrics: Some(std::sync::Arc::new(api::metrics::Metrics::new(Default::default()))),
            metrics_on_api: true,
            lab_addresses: true,
            default_cadence: api::DEFAULT_CADENCE,
        };
        let state = api::AppState::with_store(store.clone(), config);
        tokio::spawn(api::serve(listener, state, async move {
            let _ = rx.await;
        }));
        TestApp {
            addr,
            store,
            backend,
            db_url,
            client: self.client.clone(),
            underwriter: self.underwriter.clone(),
            monitor: self.monitor.clone(),
            pager: self.pager.clone(),
            _dir: tempfile::tempdir().expect("tempdir"),
            _schema: None,
            _shutdown: tx,
        }
    }

    /// Runs `sql` on the server's database behind the store's back.
    pub async fn execute_raw(&self, sql: &'static str) {
        use sqlx::Connection as _;
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.db_url).await.expect("connect");
                sqlx::query(sql).execute(&mut conn).await.expect("raw sql");
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.db_url).await.expect("connect");
                sqlx::query(sql).execute(&mut conn).await.expect("raw sql");
            }
        }
    }

    pub async fn key_in(
        store: &dyn Store,
        scopes: Vec<Scope>,
        company: Option<&str>,
        per_minute: u32,
        monthly: u64,
    ) -> String {
        let company = company.map(|c| SocialId::parse(c).expect("company"));
        let k = api::generate_key("test", scopes, company, per_minute, monthly).expect("key");
        store.create_key(&k.record).await.expect("create key");
        k.secret
    }

    /// An underwriter key (general, vulnerability, underwriter, portfolio) of the
    /// organisation `org`.
    pub async fn org_key_in(store: &dyn Store, org: i64) -> String {
        let scopes = vec![Scope::General, Scope::Vulnerability, Scope::Underwriter, Scope::Portfolio];
        let mut k = api::generate_key("test", scopes, None, 0, 0).expect("key");
        k.record.org = Some(org);
        store.create_key(&k.record).await.expect("create key");
        k.secret
    }

    pub async fn key(&self, scopes: Vec<Scope>, company: Option<&str>, per_minute: u32, monthly: u64) -> String {
        Self::key_in(&*self.store, scopes, company, per_minute, monthly).await
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}{}", self.addr, path_and_query)
    }

    pub async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        key: Option<&str>,
        body: Option<&str>,
    ) -> (StatusCode, Value, reqwest::header::HeaderMap) {
        let mut req = self.client.request(method, self.url(path_and_query));
        if let Some(k) = key {
            req = req.header("apikey", k);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_owned());
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"));
        (status, value, headers)
    }

    /// A second API server on the same database, as a second `rampart serve` process
    /// would be: its own store handle (its own connections), its own caches.
    pub async fn second_server(&self) -> SocketAddr {
        let store = store::open(&self.db_url).await.expect("a second handle on the database");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let config = api::Config {
            key_cache_ttl: Duration::ZERO,
            read_cache_ttl: Duration::ZERO,
            lab_addresses: true,
            ..Default::default()
        };
        let state = api::AppState::with_store(store, config);
        tokio::spawn(api::serve(listener, state, std::future::pending::<()>()));
        addr
    }

    pub async fn get(&self, path_and_query: &str, key: &str) -> (StatusCode, Value) {
        let (s, v, _) = self.call(Method::GET, path_and_query, Some(key), None).await;
        (s, v)
    }

    /// GET that must succeed; checks the spec shape of the operation.
    pub async fn ok(&self, path_and_query: &str, key: &str) -> Value {
        let (s, v) = self.get(path_and_query, key).await;
        assert_eq!(s, StatusCode::OK, "{path_and_query}: {v}");
        let path = path_and_query.split('?').next().unwrap_or("");
        super::shapes::check(path, &v);
        v
    }
}

/// Every operation with a request that succeeds against the sample data, and which
/// key kind it needs (`true`: monitor).
/// The issue's example guidelines (docs/API.md, "Underwriting guidelines").
pub const GUIDELINES: &str = r#"{"rules": [
    {"id": "min-score", "kind": "min_global_score", "value": 80, "action": "refer"},
    {"id": "no-rdp", "kind": "forbidden_finding", "code": "open_ports.rdp_exposed", "action": "decline"},
    {"id": "no-kev", "kind": "no_kev_cve", "action": "decline"},
    {"id": "dmarc", "kind": "min_component_grade", "component": "dmarc", "value": "B", "action": "refer"}]}"#;

/// Operations beyond the spec (docs/API.md, "Extensions").
pub fn extensions() -> Vec<(Method, &'static str, bool, Option<&'static str>)> {
    vec![
        (Method::GET, "/underwriter-getcompanyscore-history?social_id=acme-robotics", false, None),
        (Method::GET, "/monitor-getcompanyscore-history", true, None),
        (Method::GET, "/underwriter-getevents?social_id=acme-robotics", false, None),
        (Method::GET, "/monitor-getevents", true, None),
        (
            Method::POST,
            "/monitor-dispute-finding",
            true,
            Some(r#"{"finding_id":1,"reason":"fixed","explanation":"x"}"#),
        ),
        (Method::GET, "/monitor-getdisputes", true, None),
        (Method::POST, "/monitor-add-asset", true, Some(r#"{"asset":"shop.acme-robotics.example","reason":"x"}"#)),
        (Method::POST, "/monitor-remove-asset", true, Some(r#"{"asset":"old.acme-robotics.example","reason":"x"}"#)),
        (Method::POST, "/monitor-verify-domain", true, Some(r#"{"domain":"acme-robotics.example"}"#)),
        (Method::GET, "/underwriter-getcompanyfindings?social_id=acme-robotics", false, None),
        (Method::GET, "/monitor-getcompanyfindings", true, None),
        (Method::GET, "/underwriter-getimprovementplan?social_id=acme-robotics&target_grade=A", false, None),
        (Method::GET, "/monitor-getimprovementplan?target_grade=A", true, None),
        (Method::GET, "/underwriter-get-incident-prediction?social_id=acme-robotics&period=6", false, None),
        (Method::GET, "/underwriter-get-data-loss-prediction?social_id=acme-robotics&period=6", false, None),
        (Method::GET, "/underwriter-get-tail-risk-estimation?social_id=acme-robotics&period=6", false, None),
        (Method::POST, "/portfolio-create", false, Some(r#"{"name":"Second book"}"#)),
        (Method::GET, "/portfolio-list", false, None),
        (Method::POST, "/portfolio-rename", false, Some(r#"{"portfolio_id":1,"name":"Main book"}"#)),
        (Method::DELETE, "/portfolio-delete?portfolio_id=1", false, None),
        (
            Method::POST,
            "/portfolio-add-companies",
            false,
            Some(r#"{"portfolio_id":1,"companies":[{"domain":"globex-logistics.example","tier":2}]}"#),
        ),
        (Method::PUT, "/portfolio-update-company?portfolio_id=1&social_id=acme-robotics", false, Some(r#"{"tier":1}"#)),
        (Method::DELETE, "/portfolio-remove-company?portfolio_id=1&social_id=acme-robotics", false, None),
        (Method::GET, "/portfolio-getcompanies?portfolio_id=1", false, None),
        (Method::GET, "/portfolio-getsummary?portfolio_id=1", false, None),
        (Method::GET, "/portfolio-getfindings?portfolio_id=1", false, None),
        (Method::POST, "/portfolio-set-guidelines", false, Some(GUIDELINES)),
        (Method::GET, "/portfolio-getguidelines", false, None),
        (Method::GET, "/portfolio-getchanges?portfolio_id=1", false, None),
        (
            Method::POST,
            "/portfolio-set-alert-rules",
            false,
            Some(r#"{"portfolio_id":1,"rules":[{"id":"g","kind":"grade_drop"}]}"#),
        ),
        (Method::GET, "/portfolio-getalertrules?portfolio_id=1", false, None),
        (Method::GET, "/portfolio-getalerts", false, None),
        (Method::POST, "/portfolio-ack-alert", false, Some(r#"{"alert_id":1}"#)),
        (Method::GET, "/underwriter-evaluate-guidelines?social_id=acme-robotics", false, None),
    ]
}

pub fn operations() -> Vec<(Method, &'static str, bool, Option<&'static str>)> {
    use Method as M;
    vec![
        (M::GET, "/general-getdomain-by-socialid?social_id=acme-robotics", false, None),
        (M::GET, "/general-getsocialid-by-companyname?company_name=acme", false, None),
        (M::GET, "/general-getsocialid-by-domain?domain=acme-robotics.example", false, None),
        (M::GET, "/vulnerability-describe-cve-id?cve_id=CVE-2021-44228", false, None),
        (M::GET, "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.14.1", false, None),
        (M::GET, "/vulnerability-get-last", false, None),
        (M::GET, "/vulnerability-get-product-by-vendor?vendor=apache", false, None),
        (M::GET, "/vulnerability-get-vendors", false, None),
        (M::GET, "/vulnerability-search-by-vendor?vendor=apache&product=log4j", false, None),
        (M::GET, "/underwriter-getcompanyinfo?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanyapplicationsassets?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanyinfrastructureassets?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanysbom?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanysbomcve?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanysbomdomain?social_id=acme-robotics&domain=acme-robotics.example", false, None),
        (M::GET, "/underwriter-getcompanyscores?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanystats?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompanysubscores?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getincidentdetail-by-id?incident_id=RP-INC-2024-0001", false, None),
        (M::GET, "/underwriter-getlastcompaniesscanned", false, None),
        (M::GET, "/underwriter-getcompany-history?social_id=acme-robotics", false, None),
        (M::GET, "/underwriter-getcompany-history-domain?domain=acme-robotics.example", false, None),
        (M::GET, "/monitor-getcompanyinfo", true, None),
        (M::GET, "/monitor-getcompanyapplicationsassets", true, None),
        (M::GET, "/monitor-getcompanyinfrastructureassets", true, None),
        (M::GET, "/monitor-getcompanysbom", true, None),
        (M::GET, "/monitor-getcompanysbomcve", true, None),
        (M::GET, "/monitor-getcompanysbomdomain?domain=acme-robotics.example", true, None),
        (M::GET, "/monitor-getcompanyscores", true, None),
        (M::GET, "/monitor-getcompanystats", true, None),
        (M::GET, "/monitor-getcompanysubscores", true, None),
        (M::GET, "/monitor-getcompanysubsidiaries", true, None),
        (M::GET, "/monitor-listsubsidiaries", true, None),
        (M::GET, "/monitor-getcompany-history", true, None),
        (M::GET, "/monitor-getall-vulnerability-detection", true, None),
        (M::GET, "/monitor-getall-subdomain-findings?subdomain=legacy.acme-robotics.example", true, None),
        (
            M::GET,
            "/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example&risk_vector_type=DKIM",
            true,
            None,
        ),
        (M::GET, "/monitor-get-tail-risk-estimation?period=6", true, None),
        (M::GET, "/monitor-get-data-loss-prediction?period=6", true, None),
        (M::GET, "/monitor-get-incident-prediction?period=6", true, None),
        (
            M::PUT,
            "/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim&subdomain=mail.acme-robotics.example",
            true,
            None,
        ),
        (
            M::POST,
            "/monitor-add-subsidiary",
            true,
            Some(
                r#"{"name":"Acme Drones","website":"https://acme-drones.example","employees":40,"followers":900,"industry":"Aviation","sub_industry":"Drones","social_id":"acme-drones","parent_company_name":"Acme Robotics","parent_social_id":"acme-robotics"}"#,
            ),
        ),
        (M::DELETE, "/monitor-delete-subsidiary?subsidiary_id=acme-robotics-labs", true, None),
    ]
}

/// An open finding of `code` on `asset` as a scan reports it (seen now).
pub fn finding(asset: &str, code: &str, vector: model::RiskVector) -> model::Finding {
    let now = time::OffsetDateTime::now_utc();
    model::Finding {
        id: 0,
        risk_vector: vector,
        asset: asset.into(),
        severity: model::Severity::High,
        code: code.into(),
        title: "RDP exposed".into(),
        evidence: "X.224 connection confirm".into(),
        remediation: "Put RDP behind a VPN".into(),
        references: Vec::new(),
        cve: None,
        component: None,
        first_seen: model::OffsetDateTimeText(now),
        last_seen: model::OffsetDateTimeText(now),
        disputed: false,
        no_weight: false,
    }
}
