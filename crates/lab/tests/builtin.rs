//! The built-in lab: its ground truth is complete enough to test the scanner against
//! (12+ companies, 80+ expected findings over all twelve components, clean assets), every
//! finding code is documented, and the whole lab comes up, answers and goes down.
//!
//! This is the only test that brings the built-in lab up (its addresses are fixed).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use hickory_resolver::Resolver;
use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::RecordType;
use lab::{Lab, LabFile};

const COMPONENTS: [&str; 12] = [
    "spf",
    "dkim",
    "dmarc",
    "certificate_info",
    "certificate_conf",
    "certificate_cve",
    "open_ports",
    "web_headers",
    "it_standardization",
    "digitalization",
    "vulnerabilities",
    "sbom",
];
const SEVERITIES: [&str; 5] = ["info", "low", "medium", "high", "critical"];

#[test]
fn the_ground_truth_covers_every_component_and_every_code_is_documented() {
    let file = LabFile::builtin().unwrap();
    assert!(file.companies.len() >= 12, "{} companies", file.companies.len());
    let expected: Vec<_> = file.every_company().flat_map(|c| &c.expected).collect();
    assert!(expected.len() >= 80, "{} expected findings", expected.len());
    let clean: usize = file.every_company().map(|c| c.clean.len()).sum();
    assert!(clean >= 10, "{clean} clean assets");
    assert!(file.companies.iter().any(|c| c.expected.is_empty()), "an excellent company with no finding");

    let findings_md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FINDINGS.md")).unwrap();
    let mut per_component: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &expected {
        assert!(COMPONENTS.contains(&f.risk_vector.as_str()), "{f:?}");
        assert!(SEVERITIES.contains(&f.severity.as_str()), "{f:?}");
        assert!(f.code.starts_with(&format!("{}.", f.risk_vector)), "a code is prefixed by its component: {f:?}");
        assert!(findings_md.contains(&format!("`{}`", f.code)), "{} is not in docs/FINDINGS.md", f.code);
        if f.code == "vulnerabilities.cve" {
            assert!(f.cve.as_deref().is_some_and(|c| c.starts_with("CVE-")), "a CVE finding names its CVE: {f:?}");
        }
        *per_component.entry(f.risk_vector.as_str()).or_default() += 1;
    }
    for c in COMPONENTS {
        assert!(per_component.contains_key(c), "no expected finding for {c}");
    }
    println!("expected findings per component: {per_component:?}");

    // The company profiles are importable records with unique social ids, and parents exist.
    let ids: BTreeSet<&str> = file.companies.iter().map(|c| c.social_id()).collect();
    assert_eq!(ids.len(), file.companies.len(), "social ids are unique");
    for c in &file.companies {
        if let Some(parent) = c.company.get("parent_social_id").and_then(|p| p.as_str()) {
            assert!(ids.contains(parent), "{}: parent {parent} is not a lab company", c.social_id());
        }
        let domain = c.company["domain"].as_str().unwrap();
        assert!(domain.ends_with(".test"), "{domain}: lab domains are under .test");
    }
    // Every host name is under .test, and its zone is served.
    let origins: Vec<String> = file.zones.iter().map(|z| format!(".{}", z.origin)).collect();
    for h in &file.hosts {
        assert!(origins.iter().any(|o| format!(".{}", h.name).ends_with(o.as_str())), "{}: no zone", h.name);
    }
}

#[tokio::test]
async fn the_builtin_lab_comes_up_answers_and_goes_down() {
    let file = LabFile::builtin().unwrap();
    let started = Instant::now();
    let lab = Lab::up(&file).await.unwrap();
    println!(
        "built-in lab up in {} ms: {} hosts, {} services, {} zones",
        started.elapsed().as_millis(),
        file.hosts.len(),
        lab.endpoints.len(),
        file.zones.len()
    );
    // Every host resolves to its address through the lab's DNS server.
    let addr = lab.resolver.unwrap();
    let mut server = NameServerConfig::udp(addr.ip());
    for c in &mut server.connections {
        c.port = addr.port();
    }
    let mut opts = ResolverOpts::default();
    opts.cache_size = 0;
    let resolver = Resolver::builder_with_config(
        ResolverConfig::from_parts(None, vec![], vec![server]),
        TokioRuntimeProvider::default(),
    )
    .with_options(opts)
    .build()
    .unwrap();
    for h in &file.hosts {
        let a = resolver.lookup(format!("{}.", h.name), RecordType::A).await;
        let a = a.unwrap_or_else(|e| panic!("{}: {e}", h.name));
        let got: Vec<String> = a.answers().iter().map(|r| r.data.to_string()).collect();
        assert!(got.contains(&h.address.to_string()), "{} resolves to {got:?}, not {}", h.name, h.address);
    }
    // The record types the scanner reads are all served somewhere in the lab.
    let srv = resolver.lookup("_imaps._tcp.northwindshield.test.", RecordType::SRV).await.unwrap();
    assert_eq!(srv.answers()[0].data.to_string(), "0 1 993 mail.northwindshield.test.");
    let wildcard = resolver.lookup("anything.kestrelcoldchain.test.", RecordType::A).await.unwrap();
    assert!(!wildcard.answers().is_empty(), "wildcard records answer any name");
    // Every service accepts a connection.
    for (host, port, addr) in &lab.endpoints {
        tokio::net::TcpStream::connect(addr).await.unwrap_or_else(|e| panic!("{host}:{port} at {addr}: {e}"));
    }
    let addrs: Vec<_> = lab.endpoints.iter().map(|(_, _, a)| *a).collect();
    let started = Instant::now();
    lab.down().await;
    println!("down in {} ms", started.elapsed().as_millis());
    for a in addrs {
        assert!(tokio::net::TcpStream::connect(a).await.is_err(), "{a} still listens after down");
    }
}
