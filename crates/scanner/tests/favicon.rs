//! The web round hashes a host's `/favicon.ico` the way Shodan does, and a rule with that
//! hash names the software; a host whose `/favicon.ico` is an HTML error page has none.

use lab::{Lab, LabFile};
use scanner::fingerprint::{Observation, RuleSet, analyze, favicon_hash};
use scanner::probes::{Context, web};

#[tokio::test]
async fn favicons_are_hashed_and_matched() {
    let file = LabFile::parse(
        r#"{"dns": {"address": "127.79.6.53"}, "port_map": {"53": 10053, "80": 10080},
            "zones": [{"origin": "test"}, {"origin": "icons.test"}],
            "hosts": [
              {"name": "ci.icons.test", "address": "127.79.6.2", "services": [{"port": 80, "kind": "http", "http": {
                 "pages": [{"path": "/", "body": "<html><title>Dashboard</title></html>"},
                           {"path": "/favicon.ico", "body": "FAVICON-TEST", "headers": {"Content-Type": "image/x-icon"}}]}}]},
              {"name": "www.icons.test", "address": "127.79.6.3", "services": [{"port": 80, "kind": "http", "http": {
                 "pages": [{"path": "/", "body": "<html><title>Home</title></html>"}]}}]}
            ]}"#,
    )
    .unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    let ci = web::visit(&ctx, "ci.icons.test").await;
    let www = web::visit(&ctx, "www.icons.test").await;
    lab.down().await;
    assert_eq!(ci.favicon, Some(favicon_hash(b"FAVICON-TEST")));
    assert_eq!(ci.favicon, Some(182488843));
    assert_eq!(www.favicon, None, "a 404 is no icon");
    let rules = RuleSet::from_json_text(
        r#"{"technologies": {"Build server": {"categories": ["CI"], "favicon": ["182488843"]}}}"#,
    )
    .unwrap()
    .0;
    let software = scanner::gather::detect(&rules, &[ci, www], &[]);
    assert_eq!(software.len(), 1);
    assert_eq!((software[0].host.as_str(), software[0].name.as_str()), ("ci.icons.test", "Build server"));
    assert!(analyze(&rules, &Observation::default()).is_empty());
}
