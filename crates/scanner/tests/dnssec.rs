//! DNSSEC chain validation against the lab's authoritative server: a signed child of
//! the signed `test.` is secure (and so are a signed grandchild and names below it that
//! are no zone cut), unsigned children are insecure, a child whose DS names another key
//! is bogus, and a wrong trust anchor makes everything bogus. The transport falls back
//! to TCP on truncation and gives up in time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hickory_resolver::proto::dnssec::crypto::EcdsaSigningKey;
use hickory_resolver::proto::dnssec::rdata::DNSKEY;
use hickory_resolver::proto::dnssec::{Algorithm, SigningKey};
use hickory_resolver::proto::op::Message;
use lab::{Lab, LabFile};
use scanner::dnssec::{DnssecError, Status, TrustAnchor, Validator};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

const FILE: &str = r#"{
  "dns": {"address": "127.77.60.53"},
  "port_map": {"53": 10153},
  "zones": [
    {"origin": "test", "dnssec": true},
    {"origin": "secure.test", "dnssec": true, "records": ["@ MX 10 mail", "deep.er TXT \"x\""]},
    {"origin": "sub.secure.test", "dnssec": true, "records": ["www TXT \"x\""]},
    {"origin": "bare.secure.test", "dnssec": true},
    {"origin": "open.secure.test"},
    {"origin": "plain.test", "records": ["@ MX 10 mail"]},
    {"origin": "rollover.test", "dnssec": true, "dnssec_bogus": true}
  ],
  "hosts": [
    {"name": "mail.secure.test", "address": "127.77.60.2"},
    {"name": "mail.plain.test", "address": "127.77.60.3"}
  ]
}"#;

/// The lab on its own addresses (tests run in parallel processes).
async fn lab_on(net: u8) -> Lab {
    let file = FILE.replace("127.77.60.", &format!("127.77.{net}."));
    Lab::up(&LabFile::parse(&file).unwrap()).await.unwrap()
}

/// The lab's anchors, read back from the lines the lab publishes.
fn anchors(lab: &Lab) -> Vec<TrustAnchor> {
    let text: String = lab.trust_anchors.iter().map(|a| a.dnskey_line() + "\n").collect();
    TrustAnchor::parse(&text).unwrap()
}

fn validator(lab: &Lab) -> Validator {
    Validator::new(lab.resolver.unwrap(), anchors(lab))
}

async fn status(v: &Validator, zone: &str) -> Status {
    v.zone_status(zone).await.unwrap_or_else(|e| panic!("{zone}: {e}"))
}

#[tokio::test]
async fn the_lab_anchor_parses_back_from_its_line() {
    let lab = lab_on(60).await;
    let parsed = anchors(&lab);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].zone.to_string(), "test.");
    assert_eq!(parsed[0].dnskeys, [lab.trust_anchors[0].dnskey.clone()]);
    lab.down().await;
}

#[tokio::test]
async fn signed_zones_are_secure_down_the_chain() {
    let lab = lab_on(61).await;
    let v = validator(&lab);
    for zone in ["test", "secure.test", "SECURE.test.", "sub.secure.test"] {
        assert_eq!(status(&v, zone).await, Status::Secure, "{zone}");
    }
    // Names below a zone apex that are no zone cut have the enclosing zone's status:
    // a name that does not exist, one that exists, an empty non-terminal below it.
    for name in ["www.secure.test", "mail.secure.test", "er.secure.test", "deep.er.secure.test", "a.b.sub.secure.test"]
    {
        assert_eq!(status(&v, name).await, Status::Secure, "{name}");
    }
    lab.down().await;
}

/// hickory-server leaves the NSEC out of an NXDOMAIN answer from a zone holding only its
/// apex, so nothing proves that a name below `bare.secure.test` has no DS: bogus, as
/// delv says too ("broken trust chain").
#[tokio::test]
async fn a_missing_denial_is_bogus() {
    let lab = lab_on(67).await;
    let v = validator(&lab);
    assert_eq!(status(&v, "bare.secure.test").await, Status::Secure);
    match status(&v, "www.bare.secure.test").await {
        Status::Bogus { reason } => assert!(
            reason.contains("no DS for www.bare.secure.test.")
                && reason.contains("no valid proof from bare.secure.test."),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    lab.down().await;
}

#[tokio::test]
async fn unsigned_zones_are_insecure() {
    let lab = lab_on(62).await;
    let v = validator(&lab);
    for (zone, cut) in [
        ("plain.test", "plain.test."),
        ("mail.plain.test", "plain.test."),
        ("open.secure.test", "open.secure.test."),
        ("www.open.secure.test", "open.secure.test."),
    ] {
        match status(&v, zone).await {
            Status::Insecure { reason } => {
                assert!(reason.contains(cut) && reason.contains("without a DS"), "{zone}: {reason}")
            }
            other => panic!("{zone}: {other:?}"),
        }
    }
    // No anchor covers a name outside the lab's tree.
    assert!(
        matches!(status(&v, "example.org").await, Status::Insecure { reason } if reason.contains("no trust anchor"))
    );
    lab.down().await;
}

#[tokio::test]
async fn a_zone_whose_ds_names_another_key_is_bogus() {
    let lab = lab_on(63).await;
    let v = validator(&lab);
    for zone in ["rollover.test", "www.rollover.test"] {
        match status(&v, zone).await {
            Status::Bogus { reason } => {
                assert!(reason.contains("DS") && reason.contains("rollover.test."), "{zone}: {reason}")
            }
            other => panic!("{zone}: {other:?}"),
        }
    }
    lab.down().await;
}

#[tokio::test]
async fn a_wrong_trust_anchor_makes_the_top_bogus() {
    let lab = lab_on(64).await;
    let pkcs8 = EcdsaSigningKey::generate_pkcs8(Algorithm::ECDSAP256SHA256).unwrap();
    let other = EcdsaSigningKey::from_pkcs8(&pkcs8, Algorithm::ECDSAP256SHA256).unwrap();
    let line = format!("test. 300 IN DNSKEY {}", DNSKEY::from_key(&other.to_public_key().unwrap()));
    let v = Validator::new(lab.resolver.unwrap(), TrustAnchor::parse(&line).unwrap());
    for zone in ["test", "secure.test", "plain.test"] {
        match status(&v, zone).await {
            Status::Bogus { reason } => {
                assert!(reason.contains("DNSKEY of test.") && reason.contains("trust anchor"), "{zone}: {reason}")
            }
            other => panic!("{zone}: {other:?}"),
        }
    }
    lab.down().await;
}

#[tokio::test]
async fn a_silent_server_is_an_error_in_time() {
    let silent = UdpSocket::bind("127.77.65.53:10153").await.unwrap();
    let v = Validator::new(silent.local_addr().unwrap(), vec![TrustAnchor::iana_root()])
        .with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = v.zone_status("example.org").await.unwrap_err();
    assert!(matches!(err, DnssecError::Query { .. }) && err.to_string().contains("no answer"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "two tries of 300 ms");
    assert!(matches!(v.zone_status("bad..name").await, Err(DnssecError::BadName(_))));
}

/// A server that answers every UDP query first with junk of another id (ignored), then
/// with the header only and TC set; over TCP it relays to the lab's server.
async fn truncating_proxy(at: SocketAddr, lab: SocketAddr) {
    let udp = UdpSocket::bind(at).await.unwrap();
    let tcp = TcpListener::bind(at).await.unwrap();
    tokio::spawn(async move {
        let mut buf = vec![0; 4096];
        while let Ok((n, from)) = udp.recv_from(&mut buf).await {
            let query = Message::from_vec(&buf[..n]).unwrap();
            let mut junk = query.clone();
            junk.metadata.id = query.metadata.id.wrapping_add(1);
            let _ = udp.send_to(&junk.to_vec().unwrap(), from).await;
            let mut truncated = query.clone().into_response();
            truncated.metadata.truncation = true;
            let _ = udp.send_to(&truncated.to_vec().unwrap(), from).await;
        }
    });
    tokio::spawn(async move {
        while let Ok((mut client, _)) = tcp.accept().await {
            tokio::spawn(async move {
                if let Ok(mut upstream) = TcpStream::connect(lab).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                }
            });
        }
    });
}

#[tokio::test]
async fn a_truncated_answer_is_asked_again_over_tcp() {
    let lab = lab_on(66).await;
    let proxy: SocketAddr = "127.77.66.54:10153".parse().unwrap();
    truncating_proxy(proxy, lab.resolver.unwrap()).await;
    let v = Validator::new(proxy, anchors(&lab));
    assert_eq!(status(&v, "secure.test").await, Status::Secure);
    assert!(matches!(status(&v, "plain.test").await, Status::Insecure { .. }));
    lab.down().await;
}
