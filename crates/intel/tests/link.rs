//! Linking incidents to companies on the real VCDB files and on made-up cases: an exact
//! normalised name links, a similar name does not, two companies with the same
//! normalised name make the incident ambiguous (linked to none), a cited URL on the
//! victim's own domain links, a news site does not.

use std::path::PathBuf;
use std::sync::Arc;

use store::Store;

fn vcdb() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/vcdb/incidents");
    dir.is_dir().then_some(dir)
}

async fn store_with(lines: &str) -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("i.db").display())).await.unwrap();
    intel::import_companies(&*store, std::io::Cursor::new(lines.to_owned())).await.unwrap();
    (dir, store)
}

async fn company(store: &dyn Store, id: &str) -> model::Company {
    store.company_by_social_id(&model::SocialId::parse(id).unwrap()).await.unwrap().unwrap()
}

#[tokio::test]
async fn the_real_incidents_link_by_exact_name_only() {
    let Some(dir) = vcdb() else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: ../shared/data/vcdb is not there");
        return;
    };
    let (_tmp, store) = store_with(concat!(
        r#"{"social_id": "northrop-grumman", "company_name": "Northrop Grumman", "website": "https://www.northropgrumman.com", "domain": "northropgrumman.com"}"#,
        "\n",
        r#"{"social_id": "northrop-services", "company_name": "Northrop Services", "website": "https://www.northrop-services.example", "domain": "northrop-services.example"}"#,
        "\n",
        r#"{"social_id": "uber-a", "company_name": "Uber", "website": "https://www.uber.com", "domain": "uber.com"}"#,
        "\n",
        r#"{"social_id": "uber-b", "company_name": "UBER Inc.", "website": "https://uber.example", "domain": "uber.example"}"#,
        "\n",
    ))
    .await;
    let report = intel::link::import_veris(&*store, &[dir.as_path()]).await.unwrap();
    assert_eq!((report.files_read, report.stored), (100, 99), "{report:?}");
    assert_eq!(report.errors.len(), 1, "the one duplicate: {:?}", report.errors);
    assert_eq!(report.linked_by_name, 1, "{report:?}");
    // Uber matches two companies of the same normalised name: linked to neither.
    assert_eq!(report.ambiguous.len(), 1, "{report:?}");
    assert_eq!(report.ambiguous[0].1, ["uber-a", "uber-b"]);
    let ng = company(&*store, "northrop-grumman").await;
    let linked = store.incidents_for_company(ng.id).await.unwrap();
    assert_eq!(linked.len(), 1);
    assert_eq!(linked[0].incident_id, "011E42B7-DF7F-4D2E-BB85-24A0DD159C64");
    for other in ["northrop-services", "uber-a", "uber-b"] {
        let c = company(&*store, other).await;
        assert!(store.incidents_for_company(c.id).await.unwrap().is_empty(), "{other}");
    }
    // Every incident is stored, linked or not.
    let uber = store.incident(&report.ambiguous[0].0).await.unwrap().expect("stored, unlinked");
    assert!(uber.title.starts_with("Uber"), "{}", uber.title);
}

#[tokio::test]
async fn a_notice_on_the_victims_own_domain_links_and_a_news_site_does_not() {
    let (_tmp, store) = store_with(concat!(
        r#"{"social_id": "acme-bank", "company_name": "Acme Bank Holding", "website": "https://www.acmebank.com", "domain": "acmebank.com"}"#,
        "\n",
        r#"{"social_id": "daily-news", "company_name": "Daily News", "website": "https://www.dailynews.example", "domain": "dailynews.example"}"#,
        "\n",
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let incident = |id: &str, victim: &str, reference: &str| {
        serde_json::json!({
            "schema_version": "1.3.7", "incident_id": id, "security_incident": "Confirmed",
            "summary": "Test", "timeline": {"incident": {"year": 2023, "month": 4}},
            "victim": {"victim_id": victim}, "action": {"hacking": {"variety": ["Use of stolen creds"], "vector": ["Web application"]}},
            "actor": {"external": {"variety": ["Organized crime"], "motive": ["Financial"]}},
            "reference": reference,
        })
        .to_string()
    };
    std::fs::write(dir.path().join("a.json"), incident("A-1", "AcmeBank", "https://www.acmebank.com/security-notice"))
        .unwrap();
    std::fs::write(
        dir.path().join("b.json"),
        incident("B-1", "Acme Trust", "https://www.dailynews.example/acme-breach"),
    )
    .unwrap();
    let report = intel::link::import_veris(&*store, &[dir.path()]).await.unwrap();
    assert_eq!((report.stored, report.linked_by_domain, report.linked_by_name), (2, 1, 0), "{report:?}");
    let bank = company(&*store, "acme-bank").await;
    let linked = store.incidents_for_company(bank.id).await.unwrap();
    assert_eq!(linked.iter().map(|i| i.incident_id.as_str()).collect::<Vec<_>>(), ["A-1"]);
    let news = company(&*store, "daily-news").await;
    assert!(store.incidents_for_company(news.id).await.unwrap().is_empty(), "a news site is not the victim");
}

#[tokio::test]
async fn names_with_punctuation_and_ampersands_link() {
    let (_tmp, store) = store_with(concat!(
        r#"{"social_id": "att", "company_name": "AT&T", "website": "https://www.att.example", "domain": "att.example"}"#,
        "\n",
        r#"{"social_id": "pg", "company_name": "Procter & Gamble", "website": "https://pg.example", "domain": "pg.example"}"#,
        "\n",
        r#"{"social_id": "t-mobile", "company_name": "T-Mobile", "website": "https://t-mobile.example", "domain": "t-mobile.example"}"#,
        "\n",
        r#"{"social_id": "jpm", "company_name": "J.P. Morgan", "website": "https://jpm.example", "domain": "jpm.example"}"#,
        "\n",
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("c0e45760-0001-4000-8000-000000000001", "AT&T Inc.", "att"),
        ("c0e45760-0002-4000-8000-000000000002", "Procter and Gamble Co.", "pg"),
        ("c0e45760-0003-4000-8000-000000000003", "T-Mobile", "t-mobile"),
        ("c0e45760-0004-4000-8000-000000000004", "JP Morgan", "jpm"),
    ];
    for (i, (id, victim, _)) in cases.iter().enumerate() {
        let doc = serde_json::json!({
            "schema_version": "1.3.7", "incident_id": id, "security_incident": "Confirmed",
            "summary": "Test", "timeline": {"incident": {"year": 2023, "month": 4}},
            "victim": {"victim_id": victim}, "action": {"hacking": {"variety": ["Use of stolen creds"], "vector": ["Web application"]}},
            "actor": {"external": {"variety": ["Organized crime"], "motive": ["Financial"]}},
        });
        std::fs::write(dir.path().join(format!("{i}.json")), doc.to_string()).unwrap();
    }
    let report = intel::link::import_veris(&*store, &[dir.path()]).await.unwrap();
    assert_eq!((report.stored, report.linked_by_name), (4, 4), "{report:?}");
    for (id, _, owner) in cases {
        let c = company(&*store, owner).await;
        let linked = store.incidents_for_company(c.id).await.unwrap();
        assert_eq!(linked.iter().map(|i| i.incident_id.to_lowercase()).collect::<Vec<_>>(), [id], "{owner}");
        // VERIS writes the id in lower case; the lookup finds it however it is written.
        assert!(store.incident(id).await.unwrap().is_some(), "{id}");
        assert_eq!(store.incident_company(id).await.unwrap(), Some(c.id), "{id}");
    }
}
