//! The lab's DNS server checked with an independent client (hickory-resolver), over UDP
//! and TCP, and its DNSSEC chain validated by BIND's delv from the lab's trust anchor.

use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::dnssec::rdata::DNSSECRData;
use hickory_resolver::proto::op::{Message, MessageType, ResponseCode};
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::{Resolver, TokioResolver};
use lab::{Lab, LabFile};

const FILE: &str = r#"{
  "dns": {"address": "127.77.9.53"},
  "port_map": {"53": 10053},
  "zones": [
    {"origin": "test", "dnssec": true},
    {"origin": "secure.test", "dnssec": true, "records": [
      "@ MX 10 mail",
      "@ TXT \"v=spf1 mx -all\""]},
    {"origin": "sub.secure.test", "dnssec": true},
    {"origin": "rollover.test", "dnssec": true, "dnssec_bogus": true, "records": ["@ MX 10 mail.secure.test."]},
    {"origin": "flat.test", "records": [
      "@ MX 10 mail",
      "a.b.c TXT \"deep\"",
      "selector1._domainkey TXT \"v=DKIM1; k=rsa; p=MIGf\""]},
    {"origin": "plain.test", "records": [
      "@ MX 10 mail",
      "@ TXT \"v=spf1 include:_spf.plain.test ~all\"",
      "@ TXT \"google-site-verification=abc123\"",
      "_dmarc TXT \"v=DMARC1; p=none; rua=mailto:dmarc@plain.test\"",
      "selector1._domainkey TXT \"v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC1\"",
      "_mta-sts TXT \"v=STSv1; id=20260101\"",
      "_smtp._tls TXT \"v=TLSRPTv1; rua=mailto:tls@plain.test\"",
      "@ CAA 0 issue \"lab-ca.test\"",
      "_sip._tcp SRV 10 5 5060 sip",
      "www AAAA 2001:db8::10",
      "old CNAME gone-app.cloudhost.test.",
      "*.apps A 127.77.9.20"]}
  ],
  "hosts": [
    {"name": "mail.plain.test", "address": "127.77.9.2"},
    {"name": "www.plain.test", "address": "127.77.9.3"},
    {"name": "mail.secure.test", "address": "127.77.9.4"}
  ]
}"#;

/// The lab file on its own addresses (tests run in parallel processes).
async fn lab_on(net: u8) -> Lab {
    let file = FILE.replace("127.77.9.", &format!("127.77.{net}."));
    Lab::up(&LabFile::parse(&file).unwrap()).await.unwrap()
}

fn resolver(lab: &Lab, tcp: bool) -> TokioResolver {
    let addr = lab.resolver.expect("the lab runs a DNS server");
    let mut server = if tcp { NameServerConfig::tcp(addr.ip()) } else { NameServerConfig::udp(addr.ip()) };
    for c in &mut server.connections {
        c.port = addr.port();
    }
    let config = ResolverConfig::from_parts(None, vec![], vec![server]);
    let mut opts = ResolverOpts::default();
    opts.cache_size = 0;
    Resolver::builder_with_config(config, TokioRuntimeProvider::default()).with_options(opts).build().unwrap()
}

fn texts(lookup: &hickory_resolver::lookup::Lookup) -> Vec<String> {
    lookup.answers().iter().map(|r| r.data.to_string()).collect()
}

#[tokio::test]
async fn zones_answer_over_udp_and_tcp() {
    let lab = lab_on(9).await;
    for tcp in [false, true] {
        let r = resolver(&lab, tcp);
        let a = r.lookup("mail.plain.test.", RecordType::A).await.unwrap();
        assert_eq!(texts(&a), ["127.77.9.2"], "tcp={tcp}");
        let mx = r.lookup("plain.test.", RecordType::MX).await.unwrap();
        assert_eq!(texts(&mx), ["10 mail.plain.test."]);
        let txt = r.lookup("plain.test.", RecordType::TXT).await.unwrap();
        let mut t = texts(&txt);
        t.sort();
        assert_eq!(t, ["google-site-verification=abc123", "v=spf1 include:_spf.plain.test ~all"]);
        for (name, want) in [
            ("_dmarc.plain.test.", "v=DMARC1; p=none"),
            ("selector1._domainkey.plain.test.", "v=DKIM1; k=rsa"),
            ("_mta-sts.plain.test.", "v=STSv1"),
            ("_smtp._tls.plain.test.", "v=TLSRPTv1"),
        ] {
            let l = r.lookup(name, RecordType::TXT).await.unwrap();
            assert!(texts(&l)[0].starts_with(want), "{name}: {:?}", texts(&l));
        }
        let caa = r.lookup("plain.test.", RecordType::CAA).await.unwrap();
        assert!(texts(&caa)[0].contains("lab-ca.test"), "{:?}", texts(&caa));
        let srv = r.lookup("_sip._tcp.plain.test.", RecordType::SRV).await.unwrap();
        assert_eq!(texts(&srv), ["10 5 5060 sip.plain.test."]);
        let aaaa = r.lookup("www.plain.test.", RecordType::AAAA).await.unwrap();
        assert_eq!(texts(&aaaa), ["2001:db8::10"]);
        // The host's own A record is added beside the zone's AAAA.
        let a = r.lookup("www.plain.test.", RecordType::A).await.unwrap();
        assert_eq!(texts(&a), ["127.77.9.3"]);
        // Wildcard.
        let w = r.lookup("anything.apps.plain.test.", RecordType::A).await.unwrap();
        assert_eq!(texts(&w), ["127.77.9.20"]);
        // A name that does not exist.
        assert!(r.lookup("nothing.plain.test.", RecordType::A).await.unwrap_err().is_nx_domain());
    }
    lab.down().await;
}

#[tokio::test]
async fn a_dangling_cname_points_at_a_name_that_does_not_exist() {
    let lab = lab_on(10).await;
    let r = resolver(&lab, false);
    let cname = r.lookup("old.plain.test.", RecordType::CNAME).await.unwrap();
    assert_eq!(texts(&cname), ["gone-app.cloudhost.test."]);
    let target = r.lookup("gone-app.cloudhost.test.", RecordType::A).await;
    let err = target.unwrap_err();
    assert!(err.is_nx_domain() || err.is_no_records_found(), "{err}");
    lab.down().await;
}

#[tokio::test]
async fn the_ds_of_a_signed_child_is_served_from_the_parent_with_its_signature() {
    let lab = lab_on(11).await;
    assert_eq!(lab.trust_anchors.len(), 1, "one anchor: the signed parent zone test.");
    let r = resolver(&lab, false);
    let ds = r.lookup("secure.test.", RecordType::DS).await.unwrap();
    assert_eq!(ds.answers().len(), 1, "{:?}", texts(&ds));
    let want = lab.trust_anchors[0].zone.to_string();
    assert_eq!(want, "test.");
    // The DNSKEY the DS digests is the child's own.
    let key = r.lookup("secure.test.", RecordType::DNSKEY).await.unwrap();
    let (RData::DNSSEC(DNSSECRData::DS(ds)), RData::DNSSEC(DNSSECRData::DNSKEY(key))) =
        (&ds.answers()[0].data, &key.answers()[0].data)
    else {
        panic!("DS and DNSKEY expected");
    };
    assert!(ds.covers(&"secure.test.".parse().unwrap(), key).unwrap());
    // An unsigned child has no DS.
    assert!(r.lookup("plain.test.", RecordType::DS).await.is_err());
    lab.down().await;
}

/// A delv configuration trusting the lab's anchor (the DNSKEY of `test.`).
fn anchor_conf(lab: &Lab, dir: &std::path::Path) -> std::path::PathBuf {
    let anchor = &lab.trust_anchors[0];
    let key = anchor.dnskey.to_string();
    let conf = dir.join("anchor.conf");
    let mut parts = key.split_whitespace();
    let (flags, proto, alg) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let material: String = parts.collect();
    std::fs::write(&conf, format!("trust-anchors {{ test. static-key {flags} {proto} {alg} \"{material}\"; }};\n"))
        .unwrap();
    conf
}

/// delv's output (stdout and stderr) for one query to the lab's server.
fn delv(conf: &std::path::Path, addr: std::net::SocketAddr, name: &str, kind: &str) -> String {
    let out = std::process::Command::new("delv")
        .args(["-a", conf.to_str().unwrap(), &format!("@{}", addr.ip()), "-p", &addr.port().to_string()])
        .args([name, kind, "+root=test"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

/// Full validation by BIND's `delv` (an independent validator) from the lab's trust
/// anchor: the signed child and grandchild validate, the unsigned child is insecure, and
/// a missing name in the signed zone is a validated NXDOMAIN.
#[tokio::test]
async fn delv_validates_the_signed_zone_from_the_lab_trust_anchor() {
    if std::process::Command::new("delv").arg("-v").output().is_err() {
        println!("skipped: delv is not installed (Debian bind9-dnsutils; .ci/run installs it)");
        return;
    }
    let lab = lab_on(12).await;
    let dir = tempfile::tempdir().unwrap();
    let conf = anchor_conf(&lab, dir.path());
    let addr = lab.resolver.unwrap();
    let delv = move |name: &str, kind: &str| delv(&conf, addr, name, kind);
    let out = tokio::task::spawn_blocking(move || {
        (
            delv("secure.test", "MX"),
            delv("mail.plain.test", "A"),
            delv("nothing.secure.test", "A"),
            delv("sub.secure.test", "SOA"),
        )
    })
    .await
    .unwrap();
    assert!(out.0.contains("; fully validated") && out.0.contains("10 mail.secure.test."), "{}", out.0);
    assert!(out.1.contains("; unsigned answer"), "{}", out.1);
    assert!(out.2.contains("negative response, fully validated"), "{}", out.2);
    // A signed grandchild: the DS of secure.test comes from test. although secure.test is
    // a parent itself.
    assert!(out.3.contains("; fully validated"), "{}", out.3);
    lab.down().await;
}

/// A `dnssec_bogus` zone is signed, but the DS in its parent names another key: delv
/// (from the same anchor that validates `secure.test`) refuses the answer.
#[tokio::test]
async fn delv_rejects_a_zone_whose_ds_names_another_key() {
    if std::process::Command::new("delv").arg("-v").output().is_err() {
        println!("skipped: delv is not installed (Debian bind9-dnsutils; .ci/run installs it)");
        return;
    }
    let lab = lab_on(14).await;
    let r = resolver(&lab, false);
    // Signed as usual: its own DNSKEY is served, but the parent's DS does not cover it.
    let ds = r.lookup("rollover.test.", RecordType::DS).await.unwrap();
    let key = r.lookup("rollover.test.", RecordType::DNSKEY).await.unwrap();
    let (RData::DNSSEC(DNSSECRData::DS(ds)), RData::DNSSEC(DNSSECRData::DNSKEY(key))) =
        (&ds.answers()[0].data, &key.answers()[0].data)
    else {
        panic!("DS and DNSKEY expected");
    };
    assert!(!ds.covers(&"rollover.test.".parse().unwrap(), key).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let conf = anchor_conf(&lab, dir.path());
    let addr = lab.resolver.unwrap();
    let out = tokio::task::spawn_blocking(move || {
        (delv(&conf, addr, "rollover.test", "MX"), delv(&conf, addr, "secure.test", "MX"))
    })
    .await
    .unwrap();
    assert!(out.0.contains("resolution failed") && !out.0.contains("fully validated"), "{}", out.0);
    assert!(out.1.contains("; fully validated"), "{}", out.1);
    lab.down().await;
}

#[tokio::test]
async fn dnssec_bogus_needs_a_signed_zone() {
    let file = FILE.replace(r#""origin": "rollover.test", "dnssec": true,"#, r#""origin": "rollover.test","#);
    let file = LabFile::parse(&file.replace("127.77.9.", "127.77.15.")).unwrap();
    let err = Lab::up(&file).await.err().expect("refused");
    assert!(err.to_string().contains("dnssec_bogus"), "{err}");
}

#[tokio::test]
async fn non_loopback_addresses_are_refused() {
    assert!(LabFile::parse(&FILE.replace("127.77.9.53", "10.0.0.53")).is_err());
    assert!(LabFile::parse(&FILE.replace("127.77.9.2", "192.0.2.2")).is_err());
}

#[tokio::test]
async fn zone_records_may_not_point_off_the_machine() {
    for (from, to) in [("*.apps A 127.77.9.20", "*.apps A 192.0.2.20"), ("www AAAA 2001:db8::10", "www AAAA 2600::10")]
    {
        let file = LabFile::parse(&FILE.replace(from, to).replace("127.77.9.", "127.77.13.")).unwrap();
        let err = Lab::up(&file).await.err().expect("refused");
        assert!(err.to_string().contains("outside 127.0.0.0/8"), "{err}");
    }
}

/// One raw query over UDP, with or without EDNS (DO set), and the parsed response.
async fn ask(addr: std::net::SocketAddr, name: &str, kind: RecordType, edns: bool) -> Message {
    use hickory_resolver::proto::op::{Edns, Query};
    use hickory_resolver::proto::rr::Name;
    let mut m = Message::query();
    m.metadata.id = 4242;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), kind));
    if edns {
        let mut e = Edns::new();
        e.set_dnssec_ok(true);
        e.set_max_payload(1232);
        m.set_edns(e);
    }
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    socket.send_to(&m.to_vec().unwrap(), addr).await.unwrap();
    let mut buf = vec![0; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), socket.recv(&mut buf)).await.unwrap().unwrap();
    Message::from_vec(&buf[..n]).unwrap()
}

/// NXDOMAIN for a name absent from a simple zone (unsigned, no wildcard or delegation)
/// is answered without hickory's zone walk: the answer must be the one hickory gives
/// (plain.test has a wildcard, so hickory answers there), and names that exist or are
/// empty non-terminals must not be denied.
#[tokio::test]
async fn a_name_missing_from_a_simple_zone_is_denied_as_hickory_denies_it() {
    let lab = lab_on(16).await;
    let addr = lab.resolver.expect("the lab runs a DNS server");
    for edns in [true, false] {
        let fast = ask(addr, "nothing._domainkey.FLAT.test.", RecordType::TXT, edns).await;
        let walked = ask(addr, "nothing.plain.test.", RecordType::TXT, edns).await;
        for (m, zone) in [(&fast, "flat.test."), (&walked, "plain.test.")] {
            assert_eq!(m.metadata.response_code, ResponseCode::NXDomain, "{m:?}");
            assert!(m.metadata.authoritative && m.metadata.message_type == MessageType::Response);
            assert_eq!(m.metadata.id, 4242);
            assert!(m.answers.is_empty());
            assert_eq!(m.authorities.len(), 1, "{m:?}");
            assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
            assert_eq!(m.authorities[0].name.to_ascii().to_ascii_lowercase(), zone);
            assert_eq!(m.queries.len(), 1);
            assert_eq!(m.edns.is_some(), edns);
            if let Some(e) = &m.edns {
                assert!(e.flags().dnssec_ok && e.version() == 0);
            }
        }
        assert_eq!(fast.metadata.recursion_available, walked.metadata.recursion_available);
        assert_eq!(
            fast.authorities[0].data.to_string(),
            walked.authorities[0].data.to_string().replace("plain", "flat")
        );
    }
    // Empty non-terminals and names that exist are answered by hickory, whatever the case.
    for (name, answers) in
        [("c.flat.test.", 0), ("B.c.flat.test.", 0), ("a.B.C.flat.TEST.", 1), ("selector1._domainkey.flat.test.", 1)]
    {
        let m = ask(addr, name, RecordType::TXT, true).await;
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{name}: {m:?}");
        assert_eq!(m.answers.len(), answers, "{name}: {m:?}");
    }
    let mx = ask(addr, "flat.test.", RecordType::MX, false).await;
    assert_eq!(mx.answers.len(), 1);
    // A signed zone's denial still carries its NSEC proof.
    let signed = ask(addr, "nothing.secure.test.", RecordType::TXT, true).await;
    assert_eq!(signed.metadata.response_code, ResponseCode::NXDomain);
    assert!(signed.authorities.iter().any(|r| r.record_type() == RecordType::NSEC), "{signed:?}");
    lab.down().await;
}
