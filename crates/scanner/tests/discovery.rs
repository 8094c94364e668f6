//! Discovery against a lab zone (every source attributes its hosts with evidence, and a
//! wildcard does not turn every wordlist label into a host), and the mail checks when
//! secondary lookups fail.

use lab::{Lab, LabFile};
use scanner::Dns;
use scanner::discovery::discover;

const FILE: &str = r#"{
  "dns": {"address": "127.77.70.53"},
  "port_map": {"53": 10053},
  "zones": [
    {"origin": "found.test", "records": [
      "@ MX 10 mx1", "@ NS ns1.found.test.", "_imaps._tcp SRV 0 1 993 imap",
      "old CNAME gone.elsewhere.test.", "@ TXT \"v=spf1 -all\""]},
    {"origin": "wild.test", "records": ["* A 127.77.70.99", "www A 127.77.70.20"]}
  ],
  "hosts": [
    {"name": "mx1.found.test", "address": "127.77.70.2"},
    {"name": "ns1.found.test", "address": "127.77.70.3"},
    {"name": "imap.found.test", "address": "127.77.70.4"},
    {"name": "staging.found.test", "address": "127.77.70.5"},
    {"name": "notinlist-xyz.found.test", "address": "127.77.70.6"}
  ]
}"#;

#[tokio::test]
async fn every_source_attributes_its_hosts_and_wildcards_are_not_hosts() {
    let lab = Lab::up(&LabFile::parse(FILE).unwrap()).await.unwrap();
    let dns = Dns::with_server(lab.resolver.unwrap()).unwrap();
    let words: Vec<String> = ["www", "staging", "old", "dev"].iter().map(|s| (*s).to_owned()).collect();

    let found = discover(&dns, "found.test", &words, &[], 1000, later()).await.unwrap().assets;
    let rows: Vec<(&str, &str, &str)> =
        found.iter().map(|a| (a.name.as_str(), a.source.as_str(), a.evidence.as_str())).collect();
    assert_eq!(
        rows,
        [
            ("imap.found.test", "srv", "_imaps._tcp.found.test SRV 993 imap.found.test"),
            ("mx1.found.test", "mx", "MX 10 mx1.found.test"),
            ("ns1.found.test", "ns", "NS ns1.found.test"),
            ("old.found.test", "cname", "CNAME gone.elsewhere.test"),
            ("staging.found.test", "wordlist", "A 127.77.70.5"),
        ],
        "a host not in the wordlist and named nowhere is not found; the apex has no address"
    );

    let wildcard = scanner::discovery::wildcard_addresses(&dns, "wild.test").await;
    let wild = discover(&dns, "wild.test", &words, &wildcard, 1000, later()).await.unwrap().assets;
    let names: Vec<&str> = wild.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["www.wild.test"], "only the name with its own address, not the wildcard's");
    lab.down().await;
}

/// A lookup that fails (here: the server refuses a zone it does not serve) is neither a
/// void lookup nor the end of the domain's checks.
#[tokio::test]
async fn failing_secondary_lookups_do_not_abort_the_mail_checks() {
    let file = r#"{
      "dns": {"address": "127.77.71.53"},
      "port_map": {"53": 10053},
      "zones": [{"origin": "robust.test", "records": [
        "@ MX 10 mail",
        "@ TXT \"v=spf1 include:_spf.unserved.example a:x.unserved.example a:y.unserved.example mx -all\"",
        "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@reports.unserved.example\""]}],
      "hosts": [{"name": "mail.robust.test", "address": "127.77.71.2"}]
    }"#;
    let lab = Lab::up(&LabFile::parse(file).unwrap()).await.unwrap();
    let guard = scanner::Guard::new(
        scanner::Policy { allow_private: true, ..Default::default() },
        Dns::with_server(lab.resolver.unwrap()).unwrap(),
    );
    let ctx = scanner::probes::Context::new(guard);
    let checked = scanner::scan::mail_and_standards_checked(&ctx, "robust.test", None, &[]).await.unwrap();
    let codes: Vec<&str> = checked.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(!codes.iter().any(|c| c.starts_with("spf.")), "{codes:?}");
    assert!(!codes.contains(&"dmarc.external_rua_unauthorized"), "unknown is not unauthorised: {codes:?}");
    // No key at the curated selectors, and none named: not assessable, not missing.
    assert!(!codes.contains(&"dkim.missing"), "{codes:?}");
    let dkim = checked.checks.iter().find(|c| c.risk_vector == model::RiskVector::Dkim).unwrap();
    assert_eq!(dkim.outcome, scanner::check::Outcome::NotAssessable, "{dkim:?}");
    lab.down().await;
}

/// A subdomain without its own DMARC record takes the organisational domain's (found by
/// the Public Suffix List), and its `sp` policy applies.
#[tokio::test]
async fn a_subdomain_inherits_the_organisational_dmarc_record() {
    let file = r#"{
      "dns": {"address": "127.77.72.53"},
      "port_map": {"53": 10053},
      "zones": [{"origin": "orgdomain.test", "records": [
        "_dmarc TXT \"v=DMARC1; p=reject; sp=none; rua=mailto:d@orgdomain.test\"",
        "_dmarc.own TXT \"v=DMARC1; p=quarantine; rua=mailto:d@orgdomain.test\""]}]
    }"#;
    let lab = Lab::up(&LabFile::parse(file).unwrap()).await.unwrap();
    let dns = Dns::with_server(lab.resolver.unwrap()).unwrap();
    assert_eq!(scanner::probes::mail::organisational_domain("shop.orgdomain.test"), "orgdomain.test");
    assert_eq!(scanner::probes::mail::organisational_domain("a.b.example.co.uk"), "example.co.uk");

    let dmarc = async |domain: &str| {
        let seen = scanner::probes::mail::dmarc(&dns, domain).await.unwrap();
        scanner::checks::dmarc::judge(&seen, domain)
    };
    let sub = dmarc("shop.orgdomain.test").await;
    let codes: Vec<&str> = sub.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["dmarc.policy_none"], "sp=none applies to the subdomain");
    assert!(sub[0].evidence.contains("inherited from _dmarc.orgdomain.test"), "{}", sub[0].evidence);
    assert_eq!(sub[0].asset, "shop.orgdomain.test");

    let own = dmarc("own.orgdomain.test").await;
    let codes: Vec<&str> = own.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["dmarc.policy_quarantine"], "its own record wins");
    lab.down().await;
}

/// The web round and certificate-transparency search find hosts no wordlist names: a SAN
/// of the website's certificate, a link on its front page, a redirect of that linked
/// host, and a name only a (local, crt.sh-compatible) CT search knows. Names outside the
/// domain are ignored, and each asset says why it belongs to the company.
#[tokio::test]
async fn certificates_links_redirects_and_ct_search_discover_hosts() {
    let file = r#"{
      "dns": {"address": "127.77.73.53"},
      "port_map": {"53": 10053, "80": 10080, "443": 10443},
      "zones": [{"origin": "web.test", "records": ["@ TXT \"v=spf1 -all\""]}],
      "hosts": [
        {"name": "www.web.test", "address": "127.77.73.2", "services": [
          {"port": 443, "kind": "https", "tls": {"sans": ["san-only.web.test", "*.wild.web.test"]},
           "http": {"headers": {"Server": "nginx/1.24.0"}, "pages": [{"path": "/",
             "body": "<a href=\"https://linked.web.test/x\">x</a> <a href=\"https://elsewhere.test/\">y</a>"}]}}]},
        {"name": "san-only.web.test", "address": "127.77.73.3", "services": [
          {"port": 80, "kind": "http", "http": {"headers": {"Server": "nginx/1.18.0"}}}]},
        {"name": "linked.web.test", "address": "127.77.73.4", "services": [
          {"port": 443, "kind": "https", "http": {"redirect": "https://redirected.web.test/"}}]},
        {"name": "redirected.web.test", "address": "127.77.73.5", "services": [
          {"port": 443, "kind": "https"}]},
        {"name": "ct-only.web.test", "address": "127.77.73.6", "services": [
          {"port": 443, "kind": "https"}]},
        {"name": "wild.web.test", "address": "127.77.73.7"}
      ]
    }"#;
    let lab_file = LabFile::parse(file).unwrap();
    let lab = Lab::up(&lab_file).await.unwrap();

    // A crt.sh-compatible search on loopback that answers only the query it expects.
    let listener = tokio::net::TcpListener::bind("127.77.73.100:0").await.unwrap();
    let ct_addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 4096];
        let n = stream.read(&mut request).await.unwrap();
        let request = String::from_utf8_lossy(&request[..n]).into_owned();
        let body = if request.starts_with("GET /?q=%25.web.test&output=json ") {
            r#"[{"id": 7, "issuer_name": "O=Lab CA", "not_before": "2026-01-01T00:00:00",
                 "common_name": "ct-only.web.test", "name_value": "ct-only.web.test\nunrelated.test\ngone.web.test"}]"#
        } else {
            "[]"
        };
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(reply.as_bytes()).await.unwrap();
        request
    });

    let mut ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        lab_file.effective_port_map(),
        lab.ca_root_der.clone(),
        "",
    )
    .unwrap();
    ctx.ct_search = Some(format!("http://{ct_addr}/?q=%25.{{domain}}&output=json"));
    let words = vec!["www".to_owned()];
    let scan = scanner::scan::scan_domain(&ctx, "web.test", Some("www.web.test"), &words).await.unwrap();
    let request = server.await.unwrap();
    assert!(request.starts_with("GET /?q=%25.web.test&output=json "), "{request}");

    let rows: Vec<(&str, &str, &str)> =
        scan.assets.iter().map(|a| (a.name.as_str(), a.source.as_str(), a.evidence.as_str())).collect();
    assert_eq!(
        rows,
        [
            (
                "ct-only.web.test",
                "ct",
                "certificate-transparency entry 7 (issuer O=Lab CA, not before 2026-01-01T00:00:00)"
            ),
            ("linked.web.test", "link", "linked from https://www.web.test/"),
            ("redirected.web.test", "link", "https://linked.web.test/ redirects to https://redirected.web.test/"),
            ("san-only.web.test", "certificate", "named by the certificate of www.web.test:443"),
            ("wild.web.test", "certificate", "named by the certificate of www.web.test:443"),
            ("www.web.test", "wordlist", "A 127.77.73.2"),
        ]
    );
    let endpoints: Vec<(&str, u16, &str, Option<&str>)> =
        scan.endpoints.iter().map(|e| (e.host.as_str(), e.port, e.service.as_str(), e.version.as_deref())).collect();
    assert_eq!(
        endpoints,
        [
            ("ct-only.web.test", 443, "https", None),
            ("linked.web.test", 443, "https", None),
            ("redirected.web.test", 443, "https", None),
            ("san-only.web.test", 80, "http", Some("1.18.0")),
            ("www.web.test", 443, "https", Some("1.24.0")),
        ]
    );
    let codes: Vec<(&str, &str)> = scan
        .findings
        .iter()
        .filter(|f| f.code.contains("https_unavailable") || f.code.contains("inconsistent_stack"))
        .map(|f| (f.code.as_str(), f.asset.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("it_standardization.https_unavailable", "san-only.web.test"),
            ("it_standardization.inconsistent_stack", "web.test"),
        ]
    );
    lab.down().await;
}

/// A deadline far enough away not to matter.
fn later() -> tokio::time::Instant {
    tokio::time::Instant::now() + std::time::Duration::from_secs(60)
}
