//! The web app end to end, in headless Chromium driven by Playwright (tests/web/
//! scorecard.py): a lab, its companies scanned into a SQLite file, the API with the web
//! app served over it, and a browser that signs in, searches, opens a scorecard, a
//! finding, an incident and the predictions, downloads the report, and — once the lab's
//! DMARC record is fixed — rescans the finding and sees it close; then a key of an
//! organisation makes a portfolio, onboards an applicant by its domain (rated quick while
//! the page watches), sorts, filters, edits, downloads, searches findings and compares
//! (scorecard.py's phases say each step). Then `rampart report
//! --format pdf`, read back with pdftotext. Screenshots: target/web-e2e/.
//!
//! Needs Chromium, Python's Playwright (in target/venv, which scripts/test.sh makes) and
//! pdftotext: the test skips with the reason when one is missing, and fails when `CI` is
//! set.

#[allow(dead_code)] // the process helpers other tests use
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use model::{Scope, SocialId};

const OCTET: u8 = 102;
const COMPANY: &str = "kestrel-logistics";
const COMPANY_NAME: &str = "Kestrel Freight Logistics";
const SCANNED: [&str; 3] = ["kestrel-logistics", "kestrel-coldchain", "bluefin-bank"];
/// A lab applicant: Rampart knows nothing of it until the portfolio phase adds it.
const APPLICANT: &str = "harbourline.test";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Python with Playwright, Chromium and pdftotext, or why not.
fn tools() -> Result<(PathBuf, PathBuf), String> {
    let python = std::env::var_os("RAMPART_PLAYWRIGHT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/venv/bin/python"));
    let chromium =
        std::env::var_os("RAMPART_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| "/usr/bin/chromium".into());
    if !chromium.is_file() {
        return Err(format!("no Chromium at {} (apt-get install chromium)", chromium.display()));
    }
    let has_playwright =
        Command::new(&python).args(["-c", "import playwright"]).output().is_ok_and(|o| o.status.success());
    if !has_playwright {
        return Err(format!("{} cannot import playwright (scripts/test.sh installs it)", python.display()));
    }
    if Command::new("pdftotext").arg("-v").output().is_err() {
        return Err("no pdftotext (apt-get install poppler-utils)".to_owned());
    }
    Ok((python, chromium))
}

/// The keys the browser signs in with: an underwriter's, the monitor key of COMPANY,
/// and a key of an organisation with the portfolio scope.
type Keys = (String, String, String);

fn run_script(python: &Path, chromium: &Path, base: &str, keys: &Keys, phase: &str, shots: &Path) {
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/scorecard.py"))
        .args(["--base", base, "--underwriter", &keys.0, "--monitor", &keys.1, "--company", COMPANY_NAME])
        .args(["--portfolio-key", &keys.2, "--applicant", APPLICANT])
        .args(["--phase", phase, "--shots"])
        .arg(shots)
        .arg("--chromium")
        .arg(chromium)
        .output()
        .expect("run the browser script");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "phase {phase} failed:\n{said}");
    eprintln!("{said}");
}

async fn scan_context(
    file: &lab::LabFile,
    running: &lab::Lab,
    store: &dyn store::Store,
) -> Arc<scanner::probes::Context> {
    let ctx = scanner::probes::Context::lab(
        running.resolver.expect("lab DNS"),
        file.effective_port_map(),
        running.ca_root_der.clone(),
        &running.trust_anchor_text(),
    )
    .expect("context");
    Arc::new(worker::with_store_data(ctx, store).await.expect("store data"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scorecard_in_a_browser() {
    let (python, chromium) = match tools() {
        Ok(t) => t,
        Err(why) if std::env::var_os("CI").is_some() => panic!("CI is set and the browser test cannot run: {why}"),
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let shots = workspace().join("target/web-e2e");
    let _ = std::fs::remove_dir_all(&shots);
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = store::open(&db).await.unwrap();
    vulndb::import::nvd_bytes_all(&*store, lab::NVD_RECORDS).await.unwrap();
    vulndb::import::kev_bytes(&*store, "lab KEV", lab::KEV_CATALOG).await.unwrap();
    vulndb::import::epss_bytes(&*store, lab::EPSS_SAMPLE).await.unwrap();
    store.save_eol_products(&scanner::software::Eol::rows(lab::EOL_PRODUCTS, "lab").unwrap()).await.unwrap();

    // The lab's companies (parents first), three of them scanned, and their incidents.
    let mut file = lab::LabFile::builtin_at(OCTET).unwrap();
    let mut ordered: Vec<&lab::LabCompany> = file.companies.iter().collect();
    ordered.sort_by_key(|c| c.company.get("parent_social_id").is_some_and(|p| !p.is_null()));
    let lines: String = ordered.iter().map(|c| format!("{}\n", c.company)).collect();
    intel::import_companies(&*store, std::io::Cursor::new(lines)).await.unwrap();
    intel::link::import_veris_texts(&*store, lab::INCIDENTS).await.unwrap();
    let running = lab::Lab::up(&file).await.unwrap();
    let ctx = scan_context(&file, &running, &*store).await;
    for sid in SCANNED {
        let job = model::JobSpec::Scan { social_id: SocialId::parse(sid).unwrap() };
        worker::process(&*store, &ctx, &job).await.unwrap();
    }
    running.down().await;

    let key = |name: &str, scopes: Vec<Scope>, company: Option<&str>| {
        let k = api::generate_key(name, scopes, company.map(|c| SocialId::parse(c).unwrap()), 6000, 1_000_000).unwrap();
        (k.secret, k.record)
    };
    let (underwriter, u) = key("e2e underwriter", vec![Scope::General, Scope::Vulnerability, Scope::Underwriter], None);
    let (monitor, m) = key("e2e monitor", vec![Scope::Monitor], Some(COMPANY));
    store.create_key(&u).await.unwrap();
    store.create_key(&m).await.unwrap();
    let org = store.create_org("E2E Underwriting").await.unwrap();
    let (book, mut b) = key("e2e book", vec![Scope::General, Scope::Underwriter, Scope::Portfolio], None);
    b.org = Some(org.id);
    store.create_key(&b).await.unwrap();
    let keys = (underwriter.clone(), monitor, book);

    // The API with the web app, as `rampart serve` serves them.
    // Lab mode: the applicant's `.test` domain is onboarded (as `rampart serve --lab` does).
    let config = api::Config { lab_addresses: true, ..Default::default() };
    let state = api::AppState::with_store(store.clone(), config);
    let app = api::router(state.clone());
    let app = app.clone().merge(web::router(app));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve_app(listener, state, app, async move {
        let _ = stopped.await;
    }));

    let (py, ch, b, k, s) = (python.clone(), chromium.clone(), base.clone(), keys.clone(), shots.clone());
    tokio::task::spawn_blocking(move || run_script(&py, &ch, &b, &k, "browse", &s)).await.unwrap();

    // The company fixes its DMARC record; workers with the fixed lab run the rescan the
    // browser asks for.
    let zone = file.zones.iter_mut().find(|z| z.origin == "kestrelfreight.test").expect("zone");
    for r in zone.records.iter_mut().filter(|r| r.starts_with("_dmarc ")) {
        *r = "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:dmarc@kestrelfreight.test\"".to_owned();
    }
    let running = lab::Lab::up(&file).await.unwrap();
    let ctx = scan_context(&file, &running, &*store).await;
    let (stop_workers, workers_stopped) = tokio::sync::oneshot::channel::<()>();
    let config = worker::Config { concurrency: 1, ..Default::default() };
    let workers = tokio::spawn(worker::run(store.clone(), ctx, config, async move {
        let _ = workers_stopped.await;
    }));
    let (py, ch, b, k, s) = (python.clone(), chromium.clone(), base.clone(), keys.clone(), shots.clone());
    tokio::task::spawn_blocking(move || run_script(&py, &ch, &b, &k, "rescan", &s)).await.unwrap();
    let (py, ch, b, k, s) = (python.clone(), chromium.clone(), base.clone(), keys.clone(), shots.clone());
    tokio::task::spawn_blocking(move || run_script(&py, &ch, &b, &k, "portfolio", &s)).await.unwrap();
    // Two alerts of the portfolio the browser made (the worker's raising of them is
    // worker/tests/alerts.rs): the inbox shows, filters and acknowledges them.
    let book = store.portfolios(org.id).await.unwrap().into_iter().find(|p| p.name == "Book 2027").expect("the book");
    let kestrel = store.company_by_social_id(&model::SocialId::parse("kestrel-logistics").unwrap()).await.unwrap();
    let kestrel = kestrel.expect("kestrel-logistics");
    let raised = |rule: &str, kind: &str, subject: &str, summary: &str, minutes: i64| {
        store::NewAlert {
        org: org.id,
        portfolio: book.id,
        company: kestrel.id,
        rule_id: rule.into(),
        kind: kind.into(),
        subject: subject.into(),
        summary: summary.into(),
        explanation: "Score 81.0 → 74.0 (−7.0), grade B → C, by a scan: 1 finding opened (high dmarc.syntax_error on kestrelfreight.test).".into(),
        created_at: time::OffsetDateTime::now_utc() - time::Duration::minutes(minutes),
    }
    };
    store
        .record_alerts(&[
            raised("drop5", "score_drop", "", "Score fell 7.0 points (81.0 → 74.0)", 2),
            raised("high", "finding_opened", "9", "high finding opened: dmarc.syntax_error on kestrelfreight.test", 1),
        ])
        .await
        .unwrap();
    let (py, ch, b, k, s) = (python.clone(), chromium.clone(), base.clone(), keys.clone(), shots.clone());
    tokio::task::spawn_blocking(move || run_script(&py, &ch, &b, &k, "alerts", &s)).await.unwrap();
    let _ = stop_workers.send(());
    let _ = workers.await;
    running.down().await;

    // The report as PDF: pdftotext finds the company, its score and its first finding.
    let scores: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}/underwriter-getcompanyscores?social_id={COMPANY}"))
        .header("apikey", &underwriter)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let _ = stop.send(());
    let _ = server.await;
    let pdf = shots.join("report.pdf");
    let out = common::rampart()
        .args(["report", COMPANY, "--db", &db, "--format", "pdf", "--out"])
        .arg(&pdf)
        .env("RAMPART_CHROMIUM", &chromium)
        .output()
        .unwrap();
    assert!(out.status.success(), "rampart report: {}", String::from_utf8_lossy(&out.stderr));
    let text = Command::new("pdftotext").arg(&pdf).arg("-").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    let score = format!("{:.1}", scores["global_score"].as_f64().expect("a score"));
    let top = web::report::top_findings(&scores);
    let first =
        top.first().expect("a finding").1["title"].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [COMPANY_NAME, score.as_str(), first.as_str()] {
        assert!(text.contains(needle), "{needle:?} not in the PDF's text:\n{text}");
    }
}
