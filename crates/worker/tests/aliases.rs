//! A detection is matched under every name NVD gives its product (`vulndb::aliases`):
//! nginx, detected as `f5:nginx` (NVD's name since F5), is charged with CVE-2021-23017,
//! which the real 2021 NVD 1.1 feed records under the older `nginx:nginx`.

use std::path::PathBuf;
use std::sync::Arc;

use scanner::software::Software;
use store::Store;

#[tokio::test]
async fn a_detection_matches_the_records_of_every_name_of_its_product() {
    let feed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/nvd-1.1/nvdcve-1.1-2021.json.gz");
    if !feed.exists() {
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: {} is absent", feed.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("a.db").display())).await.unwrap();
    vulndb::import::nvd_file(&*store, &feed).await.unwrap();
    let nginx = |version: &str| Software {
        host: "www.acme.test".to_owned(),
        name: "Nginx".to_owned(),
        version: Some(version.to_owned()),
        categories: Vec::new(),
        cpes: vec![format!("cpe:2.3:a:f5:nginx:{version}:*:*:*:*:*:*:*")],
        purl: None,
        confidence: 100,
        evidence: "Server header".to_owned(),
        packaged: None,
    };
    let charged = |inventory: &worker::software::Inventory, id: &str| {
        inventory.findings.iter().find(|f| f.cve.as_deref() == Some(id)).cloned()
    };
    let now = time::OffsetDateTime::now_utc();
    let old = worker::software::inventory(&*store, &[nginx("1.18.0")], None, now).await.unwrap();
    let f = charged(&old, "CVE-2021-23017").expect("CVE-2021-23017 through nginx:nginx");
    assert!(f.evidence.contains("cpe:2.3:a:nginx:nginx:1.18.0"), "{}", f.evidence);
    assert_eq!(
        old.components[0].cves.iter().find(|c| c.id.as_str() == "CVE-2021-23017").map(|c| c.basis),
        Some(model::CveBasis::NvdRange)
    );
    // The fixed release is not charged under either name.
    let fixed = worker::software::inventory(&*store, &[nginx("1.20.1")], None, now).await.unwrap();
    assert!(charged(&fixed, "CVE-2021-23017").is_none());
}
