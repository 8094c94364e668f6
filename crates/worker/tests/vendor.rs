//! The vendor's word over NVD's (`vulndb::advisory`), on the real records and the real
//! advisories of ../shared/data: OpenSSL 1.0.1f is charged with CVE-2014-0076, which NVD's
//! version list skips and the OpenSSL project states affects 1.0.0 to 1.0.1f; Apache httpd
//! 2.4.49 is not charged with CVE-2009-1890, which NVD's unbounded win32 entry covers and
//! the Apache HTTP Server project states affects 2.2.0 to 2.2.11 only; CVE-2021-41773
//! is charged on the Apache project's word; and POODLE (CVE-2014-3566), which NVD files
//! under OpenSSL and the OpenSSL project does not list, is not charged.

use std::path::PathBuf;
use std::sync::Arc;

use model::CveBasis;
use scanner::software::Software;
use store::Store;
use worker::software::Inventory;

fn detection(name: &str, cpe: &str, version: &str) -> Software {
    Software {
        host: "www.acme.test".to_owned(),
        name: name.to_owned(),
        version: Some(version.to_owned()),
        categories: Vec::new(),
        cpes: vec![format!("cpe:2.3:a:{cpe}:{version}:*:*:*:*:*:*:*")],
        purl: None,
        confidence: 100,
        evidence: "Server header".to_owned(),
        packaged: None,
    }
}

fn basis(inventory: &Inventory, id: &str) -> Option<CveBasis> {
    inventory.components.iter().flat_map(|c| &c.cves).find(|c| c.id.as_str() == id).map(|c| c.basis)
}

fn evidence(inventory: &Inventory, id: &str) -> Option<String> {
    inventory.findings.iter().find(|f| f.cve.as_deref() == Some(id)).map(|f| f.evidence.clone())
}

/// The shared data folder and a fresh store, or `None` (skipped) without the data.
async fn setup() -> Option<(PathBuf, tempfile::TempDir, Arc<dyn Store>)> {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if !data.is_dir() {
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: {} is absent", data.display());
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("v.db").display())).await.unwrap();
    Some((data, dir, store))
}

#[tokio::test]
async fn a_vendor_statement_overrides_nvd_both_ways() {
    let Some((data, _dir, store)) = setup().await else { return };
    let mut feeds: Vec<PathBuf> =
        ["2009", "2014", "2021"].iter().map(|y| data.join(format!("nvd-1.1/nvdcve-1.1-{y}.json.gz"))).collect();
    feeds.push(data.join("nvd-2.0/CVE-2021-41773.json"));
    vulndb::import::nvd_files(&*store, &feeds).await.unwrap();
    let now = time::OffsetDateTime::now_utc();
    let openssl = [detection("OpenSSL", "openssl:openssl", "1.0.1f")];
    let httpd = [detection("Apache HTTP Server", "apache:http_server", "2.4.49")];

    // NVD alone.
    let before = worker::software::inventory(&*store, &openssl, None, now).await.unwrap();
    assert_eq!(basis(&before, "CVE-2014-0076"), None, "NVD's list skips 1.0.1f");
    let before_httpd = worker::software::inventory(&*store, &httpd, None, now).await.unwrap();
    assert_eq!(basis(&before_httpd, "CVE-2009-1890"), Some(CveBasis::Unbounded));
    assert_eq!(basis(&before_httpd, "CVE-2021-41773"), Some(CveBasis::NvdRange));

    let advisories: Vec<PathBuf> =
        ["httpd", "openssl", "nginx"].iter().map(|d| data.join("vendor-advisories").join(d)).collect();
    let imported = vulndb::import::advisory_files(&*store, &advisories).await.unwrap();
    assert!(imported.read > 500, "{imported:?}");
    let again = vulndb::import::advisory_files(&*store, &advisories).await.unwrap();
    assert_eq!(again, imported, "an import again reads and gives the same");

    let after = worker::software::inventory(&*store, &openssl, None, now).await.unwrap();
    assert_eq!(basis(&after, "CVE-2014-0076"), Some(CveBasis::Vendor));
    let why = evidence(&after, "CVE-2014-0076").expect("charged");
    assert!(why.contains("the OpenSSL project states 1.0.1f affected (from 1.0.1 before 1.0.1g)"), "{why}");
    // POODLE, a flaw of SSL 3.0 that NVD also files under OpenSSL, is not on the OpenSSL
    // project's list of its CVEs: listed, not charged (the TLS check finds SSL 3.0 itself).
    assert_eq!(basis(&before, "CVE-2014-3566"), Some(CveBasis::NvdRange));
    assert_eq!(basis(&after, "CVE-2014-3566"), Some(CveBasis::VendorUnlisted));
    assert!(evidence(&after, "CVE-2014-3566").is_none());
    // The fixed release is charged with neither.
    let fixed = worker::software::inventory(&*store, &[detection("OpenSSL", "openssl:openssl", "1.0.1g")], None, now)
        .await
        .unwrap();
    assert_eq!(basis(&fixed, "CVE-2014-0076"), None);

    let after_httpd = worker::software::inventory(&*store, &httpd, None, now).await.unwrap();
    assert_eq!(basis(&after_httpd, "CVE-2009-1890"), None, "the Apache project: 2.2.0 to 2.2.11 only");
    assert_eq!(basis(&after_httpd, "CVE-2021-41773"), Some(CveBasis::Vendor));
    let why = evidence(&after_httpd, "CVE-2021-41773").expect("charged");
    assert!(why.contains("the Apache HTTP Server project states 2.4.49 affected"), "{why}");
    // Every CVE charged on the vendor's word, and none NVD charged that the vendor denies.
    let charged: Vec<_> = after_httpd.components[0].cves.iter().filter(|c| c.basis.scored()).collect();
    assert!(charged.iter().all(|c| c.basis == CveBasis::Vendor), "{charged:?}");
}

/// A distribution's package is judged by the distribution's word on its package version
/// (Ubuntu's OSV records, ../shared/data/ubuntu-osv, in dpkg order, the epoch taken from
/// the record); where it has none, the upstream match is scored as
/// `distribution-backport-unknown`.
#[tokio::test]
async fn a_distribution_package_is_judged_by_the_distribution() {
    let Some((data, _dir, store)) = setup().await else { return };
    let records: Vec<PathBuf> =
        ["CVE-2023-38408", "CVE-2024-6387"].iter().map(|id| data.join(format!("nvd-2.0/{id}.json"))).collect();
    vulndb::import::nvd_files(&*store, &records).await.unwrap();
    let now = time::OffsetDateTime::now_utc();
    let ssh = |version: &str, banner: &str| {
        let mut s = detection("OpenSSH", "openbsd:openssh", version);
        s.packaged = scanner::software::Packaged::in_text(banner, Some(version));
        assert!(s.packaged.is_some(), "{banner}");
        s
    };
    let judged = async |s: Software| worker::software::inventory(&*store, &[s], None, now).await.unwrap();

    // No Ubuntu data yet: upstream's range, with doubt.
    let focal_old = ssh("8.2p1", "SSH-2.0-OpenSSH_8.2p1 Ubuntu-4ubuntu0.5");
    let before = judged(focal_old.clone()).await;
    assert_eq!(basis(&before, "CVE-2023-38408"), Some(CveBasis::DistributionBackportUnknown));
    let why = evidence(&before, "CVE-2023-38408").expect("scored");
    assert!(why.contains("lower confidence: Ubuntu packages it"), "{why}");

    let imported = vulndb::import::advisory_files(&*store, &[data.join("ubuntu-osv/openssh")]).await.unwrap();
    assert!(imported.read > 10, "{imported:?}");

    // 1:8.2p1-4ubuntu0.5 is before focal's fix 1:8.2p1-4ubuntu0.8: affected, on Ubuntu's word.
    let after = judged(focal_old).await;
    assert_eq!(basis(&after, "CVE-2023-38408"), Some(CveBasis::Vendor));
    let why = evidence(&after, "CVE-2023-38408").unwrap();
    assert!(why.contains("Ubuntu (Ubuntu:20.04:LTS") && why.contains("1:8.2p1-4ubuntu0.5 affected"), "{why}");
    assert!(why.contains("before 1:8.2p1-4ubuntu0.8"), "{why}");
    // A later focal package has the fix backported: not charged, though upstream 8.2p1 is.
    let fixed = judged(ssh("8.2p1", "SSH-2.0-OpenSSH_8.2p1 Ubuntu-4ubuntu0.11")).await;
    assert_eq!(basis(&fixed, "CVE-2023-38408"), None, "0.11 sorts after 0.8 in dpkg order");
    let upstream = judged(detection("OpenSSH", "openbsd:openssh", "8.2p1")).await;
    assert_eq!(basis(&upstream, "CVE-2023-38408"), Some(CveBasis::NvdRange));

    // Jammy's 8.9p1: regreSSHion fixed in 1:8.9p1-3ubuntu0.10.
    let jammy_old = judged(ssh("8.9p1", "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6")).await;
    assert_eq!(basis(&jammy_old, "CVE-2024-6387"), Some(CveBasis::Vendor));
    assert_eq!(basis(&jammy_old, "CVE-2023-38408"), None, "fixed in 1:8.9p1-3ubuntu0.3");
    let jammy_new = judged(ssh("8.9p1", "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10")).await;
    assert_eq!(basis(&jammy_new, "CVE-2024-6387"), None);
    // Without a revision the package version is unknown: upstream's range, with doubt.
    let bare = judged(ssh("8.9p1", "OpenSSH 8.9p1 (Ubuntu)")).await;
    assert_eq!(basis(&bare, "CVE-2024-6387"), Some(CveBasis::DistributionBackportUnknown));
    // A Debian package: Ubuntu's word is not Debian's.
    let debian = judged(ssh("8.9p1", "SSH-2.0-OpenSSH_8.9p1 Debian-3ubuntu0.6")).await;
    assert_eq!(basis(&debian, "CVE-2024-6387"), Some(CveBasis::DistributionBackportUnknown));
}
