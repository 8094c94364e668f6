//! digitalization beyond the built-in lab's cases: a catch-all server (every path answers
//! its login page) shows no admin panel at the curated paths; a directory listing linked
//! from the home page is found at its own path; a login page the home page links to is
//! the site's own, not an admin panel; a CNAME to a live name is not dangling, one to a
//! name that does not exist is; a zone without a wildcard has no wildcard finding.

use lab::{Lab, LabFile};
use scanner::probes::Context;
use scanner::scan::scan_domain;

#[tokio::test]
async fn catch_alls_links_and_cnames() {
    let login = r#"<html><head><title>Sign in</title></head><body><form><input name=u><input type="password" name=p></form></body></html>"#;
    let listing = r#"<html><head><title>Index of /docs/archive</title></head><body><h1>Index of /docs/archive</h1></body></html>"#;
    let home = r#"<html><head><title>Shop</title></head><body><a href="/docs/archive/">Archive</a> <a href="/account/login">Log in</a> <a href="https://elsewhere.test/x/">x</a></body></html>"#;
    let doc = serde_json::json!({
        "dns": {"address": "127.79.7.53"},
        "port_map": {"53": 10053, "80": 10080},
        "zones": [
            {"origin": "test"},
            {"origin": "spa.test", "records": ["legacy CNAME gone.nowhere.test.", "cdn CNAME www.spa.test."]}
        ],
        "hosts": [
            {"name": "app.spa.test", "address": "127.79.7.2", "services": [{"port": 80, "kind": "http", "http": {
                "any_path": true, "pages": [{"path": "/", "body": login}]}}]},
            {"name": "www.spa.test", "address": "127.79.7.3", "services": [{"port": 80, "kind": "http", "http": {
                "pages": [{"path": "/", "body": home}, {"path": "/docs/archive/", "body": listing},
                          {"path": "/account/login", "body": login}]}}]}
        ]
    });
    let file = LabFile::parse(&doc.to_string()).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let mut ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    ctx.vectors = vec![model::RiskVector::Digitalization];
    let wordlist: Vec<String> = ["www", "app", "legacy", "cdn"].iter().map(|s| (*s).to_owned()).collect();
    let scan = scan_domain(&ctx, "spa.test", Some("www.spa.test"), &wordlist).await.unwrap();
    lab.down().await;
    let mut found: Vec<(&str, &str)> = scan.findings.iter().map(|f| (f.code.as_str(), f.asset.as_str())).collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("digitalization.dangling_cname", "legacy.spa.test"),
            // The same server under its CNAME: the listing is reachable at both names.
            ("digitalization.directory_listing", "http://cdn.spa.test/docs/archive/"),
            ("digitalization.directory_listing", "http://www.spa.test/docs/archive/"),
        ],
        "{:#?}",
        scan.findings
    );
    let dangling = &scan.findings[scan.findings.iter().position(|f| f.code.ends_with("dangling_cname")).unwrap()];
    assert!(dangling.evidence.contains("gone.nowhere.test"), "{}", dangling.evidence);
    // The CNAME'd names stay in the inventory, with their targets.
    let cdn = scan.assets.iter().find(|a| a.name == "cdn.spa.test").unwrap();
    assert_eq!(cdn.cname.as_deref(), Some("www.spa.test"));
    let legacy = scan.assets.iter().find(|a| a.name == "legacy.spa.test").unwrap();
    assert!(legacy.addresses.is_empty());
}
