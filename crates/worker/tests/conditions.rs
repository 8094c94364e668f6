//! CVEs whose configuration is "product AND platform" (Acrobat 10.1.11 on Windows or
//! macOS, CVE-2014-8445 in the real 2014 NVD feed), judged against what the same host is
//! seen to run: with Windows detected it is a finding at the CVE's severity; with Linux
//! detected (another operating system) it is none; with no operating system known it is
//! no finding either, and the SBOM lists it with the basis `platform-conditional`.

use std::path::PathBuf;
use std::sync::Arc;

use model::Severity;
use scanner::software::Software;
use store::Store;

fn software(host: &str, name: &str, version: Option<&str>, cpe: &str) -> Software {
    Software {
        host: host.to_owned(),
        name: name.to_owned(),
        version: version.map(str::to_owned),
        categories: Vec::new(),
        cpes: vec![cpe.to_owned()],
        purl: None,
        confidence: 100,
        evidence: "test".to_owned(),
        packaged: None,
    }
}

#[tokio::test]
async fn a_platform_condition_is_judged_by_what_the_host_runs() {
    let feed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/nvd-1.1/nvdcve-1.1-2014.json.gz");
    if !feed.exists() {
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: {} is absent", feed.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("c.db").display())).await.unwrap();
    vulndb::import::nvd_file(&*store, &feed).await.unwrap();
    let acrobat =
        |host: &str| software(host, "Adobe Acrobat", Some("10.1.11"), "cpe:2.3:a:adobe:acrobat:10.1.11:*:*:*:*:*:*:*");
    let detected = vec![
        acrobat("win.test"),
        software("win.test", "Windows Server", None, "cpe:2.3:o:microsoft:windows:*:*:*:*:*:*:*:*"),
        acrobat("linux.test"),
        software("linux.test", "Linux", Some("5.4"), "cpe:2.3:o:linux:linux_kernel:5.4:*:*:*:*:*:*:*"),
        acrobat("bare.test"),
    ];
    let inventory =
        worker::software::inventory(&*store, &detected, None, time::OffsetDateTime::now_utc()).await.unwrap();
    let finding = |host: &str| {
        inventory.findings.iter().find(|f| f.asset == host && f.cve.as_deref() == Some("CVE-2014-8445")).cloned()
    };
    let on_windows = finding("win.test").expect("Windows is detected: the condition is met");
    assert_eq!(on_windows.severity, Severity::High, "CVSS v2 10.0");
    assert!(on_windows.evidence.contains("together with cpe:2.3:o:microsoft:windows"), "{}", on_windows.evidence);
    assert!(finding("linux.test").is_none(), "another operating system: not a finding");
    assert!(finding("bare.test").is_none(), "nothing says: not charged");

    // Alone, the host where nothing says lists the CVE on its component, unscored.
    let bare = vec![acrobat("bare.test")];
    let inventory = worker::software::inventory(&*store, &bare, None, time::OffsetDateTime::now_utc()).await.unwrap();
    assert!(inventory.findings.iter().all(|f| f.cve.as_deref() != Some("CVE-2014-8445")));
    let listed = inventory.components[0].cves.iter().find(|c| c.id.as_str() == "CVE-2014-8445").expect("listed");
    assert_eq!(listed.basis, model::CveBasis::PlatformConditional);
}
