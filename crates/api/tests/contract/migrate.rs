//! `rampart migrate`'s copy: a seeded SQLite database copied into PostgreSQL answers
//! every read operation exactly as the original does.

use std::sync::Arc;

use crate::helpers::{Backend, TestApp};

/// Every read operation, with parameters that name seeded data (and a few that page,
/// filter or name nothing).
const READS: &[&str] = &[
    "/general-getdomain-by-socialid?social_id=acme-robotics",
    "/general-getsocialid-by-companyname?company_name=acme%20robotics",
    "/general-getsocialid-by-companyname?company_name=pager%20sub&page=2",
    "/general-getsocialid-by-domain?domain=acme-robotics.example",
    "/vulnerability-describe-cve-id?cve_id=CVE-2021-44228",
    "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*",
    "/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:openssl:openssl",
    "/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:openssl:openssl&limit=1",
    "/vulnerability-get-last",
    "/vulnerability-get-last?limit=2",
    "/vulnerability-get-product-by-vendor?vendor=apache",
    "/vulnerability-get-vendors",
    "/vulnerability-search-by-vendor?vendor=openssl&product=openssl",
    "/underwriter-getcompanyinfo?social_id=acme-robotics",
    "/underwriter-getcompanyscores?social_id=acme-robotics",
    "/underwriter-getcompanyscore-history?social_id=acme-robotics",
    "/underwriter-getcompanyapplicationsassets?social_id=acme-robotics",
    "/underwriter-getcompanyinfrastructureassets?social_id=acme-robotics&page=2",
    "/underwriter-getcompanysbom?social_id=acme-robotics",
    "/underwriter-getcompanysbomcve?social_id=acme-robotics",
    "/underwriter-getcompanysbomdomain?social_id=acme-robotics&domain=acme-robotics.example",
    "/underwriter-getcompanystats?social_id=acme-robotics",
    "/underwriter-getcompanysubscores?social_id=acme-robotics",
    "/underwriter-getcompanysubsidiaries?social_id=pager-co",
    "/underwriter-getcompany-history?social_id=acme-robotics",
    "/underwriter-getcompany-history-domain?domain=acme-robotics.example",
    "/underwriter-getincidentdetail-by-id?incident_id=RP-INC-2024-0001",
    "/underwriter-getlastcompaniesscanned",
    "/underwriter-getcompanyinfo?social_id=nobody-here",
];

const MONITOR_READS: &[&str] = &[
    "/monitor-getcompanyinfo",
    "/monitor-getcompanyscores",
    "/monitor-getcompanysbom",
    "/monitor-getcompanysbomcve",
    "/monitor-getcompanysubsidiaries",
    "/monitor-listsubsidiaries",
    "/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example&risk_vector_type=DKIM",
    "/monitor-getall-subdomain-findings?subdomain=legacy.acme-robotics.example",
    "/monitor-getall-subdomain-findings",
    "/monitor-getall-vulnerability-detection",
    "/monitor-get-tail-risk-estimation?period=6",
    "/monitor-get-data-loss-prediction?period=3",
    "/monitor-get-incident-prediction?period=12",
];

#[tokio::test]
async fn a_database_copied_into_postgres_answers_every_read_the_same() {
    if Backend::from_env() != Backend::Sqlite {
        return; // the source is the SQLite server
    }
    let Some(schema) = store::testkit::PgSchema::create().await else { return };
    let original = TestApp::spawn().await;
    // A few writes first, so that usage, jobs and history are there to copy.
    for path in READS {
        original.get(path, &original.underwriter).await;
    }
    let source = store::SqliteStore::open(&original.db_url).await.unwrap();
    let target = schema.store().await;
    let copied = store::copy::sqlite_to_postgres(&source, &target).await.unwrap();
    let rows = |t: &str| copied.iter().find(|(name, _)| *name == t).map(|(_, n)| *n).unwrap_or(0);
    assert!(
        rows("companies") > 10 && rows("findings") > 20 && rows("cves") >= 3 && rows("api_keys") >= 3,
        "{copied:?}"
    );
    assert!(rows("usage_counters") > 0, "usage is copied: {copied:?}");
    assert!(
        store::copy::sqlite_to_postgres(&source, &target).await.is_err(),
        "a destination that is not empty is refused"
    );

    let copy = original.beside(Arc::new(target), Backend::Postgres, schema.url()).await;
    for (paths, key) in [(READS, &original.underwriter), (MONITOR_READS, &original.monitor)] {
        for path in paths {
            let (a, b) = (original.get(path, key).await, copy.get(path, key).await);
            assert_eq!(a, b, "{path}");
        }
    }
    // New rows on the copy get new ids after the copied ones.
    let k = copy.key(vec![model::Scope::General], None, 0, 0).await;
    assert_eq!(copy.get("/general-getdomain-by-socialid?social_id=acme-robotics", &k).await.0, 200);
}
