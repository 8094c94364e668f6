//! The software commands as a user runs them: `rampart import eol|nvd|kev|fingerprints`,
//! a scan of a lab company by a worker, `rampart scan --cve-db`, and `rampart sbom
//! --format cyclonedx` validated against the CycloneDX 1.5 schema (cyclonedx-python-lib,
//! installed into target/venv by scripts/test.sh), and the API operations that serve
//! the scanned software.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;

fn rampart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(args)
        .env_remove("RAMPART_DB")
        .env("RAMPART_LOG", "warn")
        .output()
        .expect("run rampart")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn data() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    ["nvd-2.0", "kev", "endoflife", "wappalyzer"].iter().all(|d| dir.join(d).is_dir()).then_some(dir)
}

fn validator() -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/venv/bin/python");
    let ok = python.exists()
        && Command::new(&python).args(["-c", "import cyclonedx.validation.json"]).status().is_ok_and(|s| s.success());
    ok.then_some(python)
}

fn validate(python: &Path, file: &Path) -> Result<(), String> {
    let script = "import sys\nfrom cyclonedx.validation.json import JsonStrictValidator\nfrom cyclonedx.schema import SchemaVersion\n\
                  e = JsonStrictValidator(SchemaVersion.V1_5).validate_str(open(sys.argv[1]).read())\n\
                  print(e.data.message if e is not None else 'valid')\nsys.exit(1 if e is not None else 0)";
    let out = Command::new(python).args(["-c", script]).arg(file).output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() { Ok(()) } else { Err(format!("{text} {}", String::from_utf8_lossy(&out.stderr))) }
}

const LAB: &str = r#"{"dns": {"address": "127.79.5.53"}, "port_map": {"53": 10053, "80": 10080},
    "zones": [{"origin": "test"}, {"origin": "shop.test", "records": ["www A 127.79.5.2"]}],
    "hosts": [{"name": "www.shop.test", "address": "127.79.5.2", "services": [
        {"port": 80, "kind": "http", "http": {
            "headers": {"Server": "nginx/1.18.0", "X-Powered-By": "PHP/7.4.3"},
            "pages": [{"path": "/", "body": "<html><head><title>Shop</title><meta name=\"generator\" content=\"WordPress 5.8.1\"><script src=\"/wp-includes/js/jquery/jquery-1.12.4.min.js\"></script></head><body>Shop</body></html>"}]}}]}]}"#;

#[tokio::test]
async fn imports_a_scan_and_the_cyclonedx_export() {
    let Some(data) = data() else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: ../shared/data is not there");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("r.db").display());

    // The importers.
    let eol = data.join("endoflife/endoflife_products_all.json");
    let out = rampart(&["import", "eol", "--db", &db, eol.to_str().unwrap()]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("products stored"), "{out:?}");
    let mut nvd: Vec<String> =
        std::fs::read_dir(data.join("nvd-2.0")).unwrap().map(|e| e.unwrap().path().display().to_string()).collect();
    nvd.sort();
    let mut args = vec!["import", "nvd", "--db", &db];
    args.extend(nvd.iter().map(String::as_str));
    ok(&rampart(&args));
    let kev = data.join("kev/known_exploited_vulnerabilities.json");
    ok(&rampart(&["import", "kev", "--db", &db, kev.to_str().unwrap()]));
    let out = rampart(&["import", "fingerprints", "--db", &db, data.join("wappalyzer").to_str().unwrap()]);
    ok(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("3425 technologies") && said.contains("3425 stored"), "{said}");
    let company = dir.path().join("company.jsonl");
    // Rated once (an imported rating), so that the API reports on it.
    let components: serde_json::Map<String, Value> = model::RiskVector::ALL
        .iter()
        .map(|v| (v.as_str().to_owned(), serde_json::json!({"score": 80.0, "grade": "B", "weight": 8.33, "assets_checked": 1, "findings_count": 0})))
        .collect();
    let line = serde_json::json!({
        "social_id": "shop-test", "company_name": "Shop Test", "website": "http://www.shop.test", "domain": "shop.test",
        "domains": [{"name": "shop.test", "attribution": "test"}],
        "scores": [{"scanned_at": "2026-11-01T00:00:00Z", "score": 80.0, "grade": "B", "components": components}],
    });
    std::fs::write(&company, format!("{line}\n")).unwrap();
    ok(&rampart(&["import", "companies", "--db", &db, company.to_str().unwrap()]));

    // A worker scans the company in a lab.
    let file = lab::LabFile::parse(LAB).unwrap();
    let running = lab::Lab::up(&file).await.unwrap();
    let lab_dir = dir.path().join("lab");
    std::fs::create_dir_all(&lab_dir).unwrap();
    running.write_scanner_files(&file, &lab_dir).unwrap();
    let store: Arc<dyn store::Store> = store::open(&db).await.unwrap();
    let mut ctx =
        scanner::probes::Context::lab(running.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    let rows = store.eol_products().await.unwrap();
    ctx.eol = Some(Arc::new(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())))));
    worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: model::SocialId::parse("shop-test").unwrap() })
        .await
        .unwrap();

    // `rampart scan --cve-db`: the same software and CVEs without touching the company.
    let lab_arg = lab_dir.to_str().unwrap().to_owned();
    let db_arg = db.clone();
    let out = tokio::task::spawn_blocking(move || {
        rampart(&[
            "scan",
            "shop.test",
            "--lab",
            &lab_arg,
            "--cve-db",
            &db_arg,
            "--format",
            "json",
            "--vectors",
            "sbom,vulnerabilities",
        ])
    })
    .await
    .unwrap();
    running.down().await;
    let report: Value = serde_json::from_str(&ok(&out)).unwrap();
    let software: Vec<(String, Option<String>)> = report["software"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s["version"].as_str().map(str::to_owned)))
        .collect();
    for (name, version) in [("WordPress", "5.8.1"), ("PHP", "7.4.3"), ("Nginx", "1.18.0"), ("jQuery", "1.12.4")] {
        assert!(software.contains(&(name.to_owned(), Some(version.to_owned()))), "{name} in {software:?}");
    }
    let cves: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "vulnerabilities.cve")
        .filter_map(|f| f["cve"].as_str())
        .collect();
    for cve in ["CVE-2021-23017", "CVE-2022-21661", "CVE-2022-31625", "CVE-2015-9251"] {
        assert!(cves.contains(&cve), "{cve} in {cves:?}");
    }
    let eol: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "sbom.end_of_life")
        .filter_map(|f| f["component"].as_str())
        .collect();
    assert!(eol.contains(&"WordPress 5.8.1") && eol.contains(&"Nginx 1.18.0"), "{eol:?}");

    // The CycloneDX export of what the worker stored.
    let bom_text = ok(&rampart(&["sbom", "shop-test", "--db", &db, "--format", "cyclonedx"]));
    let bom: Value = serde_json::from_str(&bom_text).unwrap();
    assert_eq!((bom["bomFormat"].as_str(), bom["specVersion"].as_str()), (Some("CycloneDX"), Some("1.5")));
    let components = bom["components"].as_array().unwrap();
    let wp = components.iter().find(|c| c["name"] == "WordPress").expect("WordPress component");
    assert_eq!(wp["version"], "5.8.1");
    assert_eq!(wp["cpe"], "cpe:2.3:a:wordpress:wordpress:5.8.1:*:*:*:*:*:*:*");
    assert_eq!(wp["evidence"]["occurrences"][0]["location"], "www.shop.test");
    let jq = components.iter().find(|c| c["name"] == "jQuery").expect("jQuery component");
    assert_eq!(jq["purl"], "pkg:npm/jquery@1.12.4");
    assert_eq!(jq["type"], "library");
    let vulns = bom["vulnerabilities"].as_array().unwrap();
    let wp_cve = vulns.iter().find(|v| v["id"] == "CVE-2022-21661").expect("CVE-2022-21661");
    assert_eq!(wp_cve["affects"][0]["ref"], wp["bom-ref"]);
    assert_eq!(wp_cve["ratings"][0]["method"], "CVSSv3");
    let path = dir.path().join("bom.json");
    std::fs::write(&path, &bom_text).unwrap();
    match validator() {
        Some(python) => validate(&python, &path).unwrap(),
        None => {
            println!("schema validation skipped: target/venv has no cyclonedx-python-lib (scripts/test.sh installs it)")
        }
    }
    // A broken document fails the validator: the check can fail.
    if let Some(python) = validator() {
        let mut broken = bom.clone();
        broken["components"][0]["type"] = Value::from("spaceship");
        std::fs::write(&path, broken.to_string()).unwrap();
        assert!(validate(&python, &path).is_err());
    }

    // `rampart explain` recomputes the stored rating and shows what each finding cost.
    let explained: Value =
        serde_json::from_str(&ok(&rampart(&["explain", "shop-test", "--db", &db, "--format", "json"])))
            .expect("explain --format json");
    let store_score = store
        .latest_score(
            store.company_by_social_id(&model::SocialId::parse("shop-test").unwrap()).await.unwrap().unwrap().id,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store_score.methodology.as_deref(), Some(rating::METHODOLOGY_VERSION));
    assert_eq!(explained["rating"]["score"].as_f64(), Some(store_score.score.as_f64()), "{explained}");
    let vulns = explained["rating"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["risk_vector"] == "vulnerabilities")
        .unwrap();
    assert!(vulns["penalties"].as_array().unwrap().iter().any(|p| p["cve"] == "CVE-2022-21661"), "{vulns}");
    // Alone in its database: no peers, no percentile, and said so.
    assert_eq!(explained["peer_benchmarks"]["overall"]["peers"], 0, "{explained}");
    assert!(explained["peer_benchmarks"]["overall"]["percentile"].is_null());
    let text = ok(&rampart(&["explain", "www.shop.test", "--db", &db]));
    assert!(
        text.contains("methodology 2026.11") && text.contains("vulnerabilities.cve CVE-2022-21661 on www.shop.test"),
        "{text}"
    );
    assert!(text.contains("overall: no percentile: fewer than 10 rated peers (0 peers"), "{text}");

    // `rampart rescore` recomputes the history: a rating tampered with comes back.
    let company_id =
        store.company_by_social_id(&model::SocialId::parse("shop-test").unwrap()).await.unwrap().unwrap().id;
    let mut tampered = store_score.clone();
    tampered.score = model::Score::from_f64(12.0).unwrap();
    store.replace_rating(company_id, &tampered).await.unwrap();
    let said = ok(&rampart(&["rescore", "--db", &db, "--company", "shop-test"]));
    assert!(said.contains("1 rating(s) recomputed under 2026.11, 1 changed"), "{said}");
    assert_eq!(store.latest_score(company_id).await.unwrap().as_ref(), Some(&store_score));
    assert!(!rampart(&["rescore", "--db", &db, "--methodology", "1999.1"]).status.success());

    // The API serves what the scan stored (the company was rated once, by the import:
    // an unrated company is queued for a scan instead).
    served(&db).await;
}

/// A child process stopped when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The applications, infrastructure, SBOM, SBOM-with-CVE, SBOM-by-domain and
/// vulnerability-detection operations over the scanned company.
async fn served(db: &str) {
    let key = ok(&rampart(&["keys", "create", "--db", db, "--name", "u"])).trim().to_owned();
    let monitor =
        ok(&rampart(&["keys", "create", "--db", db, "--name", "m", "--company", "shop-test"])).trim().to_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_rampart"))
            .args(["serve", "--db", db, "--listen", &format!("127.0.0.1:{port}")])
            .env_remove("RAMPART_DB")
            .env("RAMPART_LOG", "warn")
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while client.get(format!("{base}/healthz")).send().await.is_err() {
        assert!(std::time::Instant::now() < deadline, "the server did not come up");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let get = |path: String, key: String| {
        let (client, base) = (client.clone(), base.clone());
        async move {
            let r = client.get(format!("{base}{path}")).header("apikey", key).send().await.unwrap();
            let status = r.status();
            let body: Value = r.json().await.unwrap();
            assert_eq!(status, 200, "{path}: {body}");
            body
        }
    };
    let apps = get("/underwriter-getcompanyapplicationsassets?social_id=shop-test".into(), key.clone()).await;
    let wp = apps["applications"].as_array().unwrap().iter().find(|a| a["name"] == "WordPress").expect("WordPress");
    assert_eq!((wp["version"].as_str(), wp["host"].as_str()), (Some("5.8.1"), Some("www.shop.test")));
    assert!(wp["evidence"].as_str().unwrap().contains("generator"), "{wp}");
    assert!(wp["categories"].as_array().unwrap().iter().any(|c| c == "CMS"), "{wp}");

    let infra = get("/underwriter-getcompanyinfrastructureassets?social_id=shop-test".into(), key.clone()).await;
    let endpoints = infra["network_endpoints"].as_array().unwrap();
    assert!(endpoints.iter().any(|e| e["host"] == "www.shop.test" && e["port"] == 80), "{infra}");

    let sbom = get("/underwriter-getcompanysbomcve?social_id=shop-test".into(), key.clone()).await;
    let wp = sbom["data"].as_array().unwrap().iter().find(|c| c["name"] == "WordPress").expect("WordPress");
    assert_eq!(wp["purl"], "pkg:generic/wordpress@5.8.1");
    assert_eq!(wp["end_of_life"], true);
    assert!(wp["cves"].as_array().unwrap().iter().any(|c| c["id"] == "CVE-2022-21661"), "{wp}");

    let by_domain =
        get("/underwriter-getcompanysbomdomain?social_id=shop-test&domain=shop.test".into(), key.clone()).await;
    let hosts = by_domain["data"]["subdomain"].as_array().unwrap();
    let www = hosts.iter().find(|h| h["subdomain"] == "www.shop.test").expect("www.shop.test");
    assert!(www["components"].as_array().unwrap().iter().any(|c| c["name"] == "jQuery"), "{www}");

    // The score history (an extension): the scan's rating above the imported one.
    let history = get("/underwriter-getcompanyscore-history?social_id=shop-test".into(), key.clone()).await;
    let methods: Vec<&str> =
        history["data"].as_array().unwrap().iter().map(|r| r["methodology"].as_str().unwrap()).collect();
    assert_eq!(methods, ["2026.11", "imported"], "{history}");

    let detections = get("/monitor-getall-vulnerability-detection".into(), monitor).await;
    let cves: Vec<&str> = detections["data"].as_array().unwrap().iter().filter_map(|f| f["cve"].as_str()).collect();
    assert!(cves.contains(&"CVE-2022-21661") && cves.contains(&"CVE-2021-23017"), "{cves:?}");
}
