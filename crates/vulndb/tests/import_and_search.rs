//! Importing real feeds into a SQLite file and searching them as the API does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use model::{Cpe, CveId};
use store::{SqliteStore, Store};
use vulndb::import;
use vulndb::search::cve_ids_for_cpe;

fn data() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if p.is_dir() {
        Some(p)
    } else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        eprintln!("skipped: {} is absent", p.display());
        None
    }
}

async fn store(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    Arc::new(SqliteStore::open(&format!("sqlite://{}", dir.path().join("v.db").display())).await.unwrap())
}

async fn ids(store: &dyn Store, cpe: &str, limit: u32) -> Vec<String> {
    cve_ids_for_cpe(store, &Cpe::parse(cpe).unwrap(), limit).await.unwrap().into_iter().map(|c| c.to_string()).collect()
}

#[tokio::test]
async fn nvd_20_records_import_and_match_by_version() {
    let Some(data) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let mut total = 0;
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            total += import::nvd_file(&*store, &path).await.unwrap().written;
        }
    }
    assert!(total >= 80, "{total}");
    // Importing again writes nothing: same lastModified.
    let again = import::nvd_file(&*store, &data.join("nvd-2.0/CVE-2021-44228.json")).await.unwrap();
    assert_eq!((again.read, again.written), (1, 0));

    let vulnerable = ids(&*store, "cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", 500).await;
    assert!(vulnerable.contains(&"CVE-2021-44228".to_owned()), "{vulnerable:?}");
    assert!(vulnerable.contains(&"CVE-2021-45046".to_owned()), "{vulnerable:?}");
    let fixed = ids(&*store, "cpe:2.3:a:apache:log4j:2.17.1", 500).await;
    assert!(
        !fixed.contains(&"CVE-2021-44228".to_owned()) && !fixed.contains(&"CVE-2021-45046".to_owned()),
        "{fixed:?}"
    );
    let heart = ids(&*store, "cpe:2.3:a:openssl:openssl:1.0.1f", 500).await;
    assert!(heart.contains(&"CVE-2014-0160".to_owned()), "{heart:?}");
    assert!(!ids(&*store, "cpe:2.3:a:openssl:openssl:1.0.1g", 500).await.contains(&"CVE-2014-0160".to_owned()));

    // No version: every CVE of the product, newest first, limit honoured.
    let any = ids(&*store, "cpe:2.3:a:apache:http_server", 500).await;
    assert!(any.len() >= 5, "{any:?}");
    let recs = store.cves(&any.iter().map(|s| CveId::parse(s).unwrap()).collect::<Vec<_>>()).await.unwrap();
    for w in recs.windows(2) {
        assert!(w[0].last_modified >= w[1].last_modified, "newest first");
    }
    assert_eq!(ids(&*store, "cpe:2.3:a:apache:http_server", 2).await, any[..2]);
    // A product the corpus does not name matches nothing.
    assert!(ids(&*store, "cpe:2.3:a:nobody:nothing:1.0", 500).await.is_empty());
    assert!(store.vendors().await.unwrap().contains(&"apache".to_owned()));
    assert!(store.products("apache").await.unwrap().contains(&"log4j".to_owned()));
}

#[tokio::test]
async fn side_feeds_join_the_records() {
    let Some(data) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    import::nvd_file(&*store, &data.join("nvd-2.0/CVE-2021-44228.json")).await.unwrap();
    let kev = import::kev_file(&*store, &data.join("kev/known_exploited_vulnerabilities.json")).await.unwrap();
    assert_eq!(kev.read, 1404);
    let epss = import::epss_file(&*store, &data.join("epss/epss_scores_sample_first100.csv")).await.unwrap();
    assert_eq!(epss.read, 99);
    let cwe = import::cwe_file(&*store, &data.join("cwe-capec/cwec_v4.15.xml")).await.unwrap();
    assert_eq!(cwe.read, 964);
    let mut patterns = 0;
    for entry in std::fs::read_dir(data.join("cwe-capec/capec-stix")).unwrap() {
        patterns += import::capec_file(&*store, &entry.unwrap().path()).await.unwrap().read;
    }
    assert_eq!(patterns, 559, "615 bundles less the deprecated patterns");

    let log4shell = store.cve(&CveId::parse("CVE-2021-44228").unwrap()).await.unwrap().unwrap();
    let kev = log4shell.kev.expect("Log4Shell is in the KEV catalogue");
    assert_eq!(kev["dateAdded"], "2021-12-10");
    assert!(!store.capec_for_cwes(&["CWE-79"]).await.unwrap().remove("CWE-79").unwrap_or_default().is_empty());
    assert!(
        store
            .capec_for_cwes(&["CWE-917"])
            .await
            .unwrap()
            .remove("CWE-917")
            .unwrap_or_default()
            .iter()
            .all(|c| c["id"].is_string())
    );
}

#[tokio::test]
async fn a_corrupt_feed_names_the_file_and_commits_no_partial_batch() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let path = dir.path().join("broken.json");
    let good = r#"{"cve":{"id":"CVE-2020-0001","published":"2020-01-01T00:00:00.000","lastModified":"2020-01-02T00:00:00.000","descriptions":[{"lang":"en","value":"x"}]}}"#;
    std::fs::write(&path, format!("{{\"vulnerabilities\": [{good}, {{\"cve\": {{\"id\": \"CVE-2020-0002\", \"publ"))
        .unwrap();
    let err = import::nvd_file(&*store, &path).await.unwrap_err().to_string();
    assert!(err.contains("broken.json") && err.contains("line 1"), "{err}");
    assert!(
        store.cve(&CveId::parse("CVE-2020-0001").unwrap()).await.unwrap().is_none(),
        "the failed batch wrote nothing"
    );
}

#[tokio::test]
async fn the_files_before_a_corrupt_one_are_committed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let record = |id: &str| {
        format!(
            r#"{{"cve":{{"id":"{id}","published":"2020-01-01T00:00:00.000","lastModified":"2020-01-02T00:00:00.000","descriptions":[{{"lang":"en","value":"x"}}]}}}}"#
        )
    };
    let good = dir.path().join("good.json");
    let many: Vec<String> = (1..=2500).map(|n| record(&format!("CVE-2020-{n:05}"))).collect();
    std::fs::write(&good, format!("{{\"vulnerabilities\": [{}]}}", many.join(","))).unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        format!("{{\"vulnerabilities\": [{}, {{\"cve\": {{\"id\": \"CVE-2021-0002\", \"publ", record("CVE-2021-0001")),
    )
    .unwrap();
    let err = import::nvd_files(&*store, &[good, broken]).await.unwrap_err().to_string();
    assert!(err.contains("broken.json"), "{err}");
    for n in [1, 1000, 1001, 2500] {
        let id = CveId::parse(&format!("CVE-2020-{n:05}")).unwrap();
        assert!(store.cve(&id).await.unwrap().is_some(), "{id} of the good file");
    }
    assert!(store.cve(&CveId::parse("CVE-2021-0001").unwrap()).await.unwrap().is_none(), "the failed batch");
}

/// The same real feed in SQLite and in PostgreSQL: every lookup answers alike (the ids
/// and their order, with and without versions, parts and limits), and so do the served
/// forms the API sends.
#[tokio::test]
async fn postgres_matches_what_sqlite_matches_on_a_real_feed() {
    let Some(data) = data() else { return };
    let Some(schema) = store::testkit::PgSchema::create().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = store(&dir).await;
    let postgres: Arc<dyn Store> = Arc::new(schema.store().await);
    let feed = data.join("nvd-1.1/nvdcve-1.1-2014.json.gz");
    let (a, b) = (import::nvd_file(&*sqlite, &feed).await.unwrap(), import::nvd_file(&*postgres, &feed).await.unwrap());
    assert_eq!((a.read, a.written), (b.read, b.written));
    assert!(a.written > 7000, "{a:?}");
    let cpes = [
        "cpe:2.3:a:openssl:openssl:1.0.1f",
        "cpe:2.3:a:openssl:openssl:1.0.1g",
        "cpe:2.3:a:openssl:openssl",
        "cpe:/a:openssl:openssl:0.9.8",
        "cpe:2.3:a:apache:http_server:2.2.22",
        "cpe:2.3:a:apache:http_server",
        "cpe:2.3:o:linux:linux_kernel:3.2",
        "cpe:2.3:o:linux:linux_kernel",
        "cpe:2.3:a:php:php:5.4.1",
        "cpe:2.3:a:wordpress:wordpress:3.8",
        "cpe:2.3:*:microsoft:internet_explorer:9",
        "cpe:2.3:a:gnu:bash:4.3",
        "cpe:2.3:a:nobody:nothing:1.0",
    ];
    for cpe in cpes {
        for limit in [1, 20, 500] {
            let (x, y) = (ids(&*sqlite, cpe, limit).await, ids(&*postgres, cpe, limit).await);
            assert_eq!(x, y, "{cpe} limit {limit}");
        }
        let parsed = Cpe::parse(cpe).unwrap();
        let x = vulndb::search::served_for_cpe(&*sqlite, &parsed, 50).await.unwrap();
        let y = vulndb::search::served_for_cpe(&*postgres, &parsed, 50).await.unwrap();
        let text = |v: &[(store::cve::ServedCve, Vec<String>)]| -> Vec<(String, String, Vec<String>)> {
            v.iter().map(|(s, m)| (s.id.to_string(), s.json.to_string(), m.clone())).collect()
        };
        assert_eq!(text(&x), text(&y), "{cpe}");
    }
    assert!(!ids(&*postgres, "cpe:2.3:a:openssl:openssl:1.0.1f", 500).await.is_empty());
    assert_eq!(sqlite.vendors().await.unwrap(), postgres.vendors().await.unwrap());
    assert_eq!(sqlite.products("openssl").await.unwrap(), postgres.products("openssl").await.unwrap());
    assert_eq!(
        sqlite.last_cves(30).await.unwrap().iter().map(|c| c.id.to_string()).collect::<Vec<_>>(),
        postgres.last_cves(30).await.unwrap().iter().map(|c| c.id.to_string()).collect::<Vec<_>>()
    );
}
