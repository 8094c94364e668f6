//! Discovery against a lab zone: every source attributes its hosts with evidence, and a
//! wildcard does not turn every wordlist label into a host.

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

    let found = discover(&dns, "found.test", &words).await.unwrap();
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

    let wild = discover(&dns, "wild.test", &words).await.unwrap();
    let names: Vec<&str> = wild.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["www.wild.test"], "only the name with its own address, not the wildcard's");
    lab.down().await;
}
