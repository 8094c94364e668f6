//! The legacy responder against hand-built ClientHellos; answers parsed with tls-parser.

use labtls::CertVariant;
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use tls_parser::{TlsMessage, TlsMessageHandshake, parse_dh_params, parse_tls_plaintext};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use x509_parser::prelude::*;

use crate::support::{Hello, Record, exchange, legacy_server, read_records};

/// The client random every [`Hello`] carries.
fn client_random() -> Vec<u8> {
    (0..32u8).map(|i| i.wrapping_mul(7)).collect()
}

#[derive(Debug, Default)]
struct Flight {
    version: u16,
    suite: u16,
    compression: u8,
    server_random: Vec<u8>,
    extensions: Vec<u16>,
    certs: Option<Vec<Vec<u8>>>,
    ske: Option<Vec<u8>>,
    done: bool,
    alert: Option<u8>,
}

fn parse_flight(records: &[Record]) -> Flight {
    let mut flight = Flight::default();
    for r in records {
        let mut raw = vec![r.kind];
        raw.extend_from_slice(&r.version.to_be_bytes());
        raw.extend_from_slice(&(r.body.len() as u16).to_be_bytes());
        raw.extend_from_slice(&r.body);
        let (rest, plain) = parse_tls_plaintext(&raw).unwrap_or_else(|e| panic!("tls-parser: {e:?}"));
        assert!(rest.is_empty());
        for message in plain.msg {
            match message {
                TlsMessage::Handshake(TlsMessageHandshake::ServerHello(sh)) => {
                    flight.version = sh.version.0;
                    flight.suite = sh.cipher.0;
                    flight.compression = sh.compression.0;
                    flight.server_random = sh.random.to_vec();
                    assert_eq!(sh.session_id.map(<[u8]>::len), Some(32));
                    let mut ext = sh.ext.unwrap_or_default();
                    while ext.len() >= 4 {
                        flight.extensions.push(u16::from_be_bytes([ext[0], ext[1]]));
                        let len = usize::from(u16::from_be_bytes([ext[2], ext[3]]));
                        ext = &ext[4 + len..];
                    }
                    assert!(ext.is_empty());
                }
                TlsMessage::Handshake(TlsMessageHandshake::Certificate(c)) => {
                    flight.certs = Some(c.cert_chain.iter().map(|c| c.data.to_vec()).collect());
                }
                TlsMessage::Handshake(TlsMessageHandshake::ServerKeyExchange(ske)) => {
                    flight.ske = Some(ske.parameters.to_vec());
                }
                TlsMessage::Handshake(TlsMessageHandshake::ServerDone(_)) => flight.done = true,
                TlsMessage::Alert(a) => flight.alert = Some(a.code.0),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    flight
}

async fn flight(config: &str, variant: CertVariant, hello: Hello) -> Flight {
    let (addr, _) = legacy_server(config, variant).await;
    let (_, records) = exchange(addr, &hello.bytes()).await;
    parse_flight(&records)
}

fn vec16(data: &[u8]) -> (&[u8], &[u8]) {
    let len = usize::from(u16::from_be_bytes([data[0], data[1]]));
    (&data[2..2 + len], &data[2 + len..])
}

#[tokio::test]
async fn ssl3_rc4_and_3des_in_client_or_server_order() {
    let config =
        r#"{"versions":["ssl3","tls1.0"],"suites":["TLS_RSA_WITH_RC4_128_MD5","TLS_RSA_WITH_3DES_EDE_CBC_SHA"]}"#;
    let (addr, cert) = legacy_server(config, CertVariant::Rsa2048).await;
    let (_, records) = exchange(addr, &Hello::new(0x0300, &[0x000a, 0x0004]).bytes()).await;
    assert!(records.iter().all(|r| r.version == 0x0300));
    let f = parse_flight(&records);
    assert_eq!((f.version, f.suite, f.compression), (0x0300, 0x000a, 0));
    assert_eq!(f.certs.as_ref().map(Vec::len), Some(2));
    assert_eq!(f.certs.unwrap()[0], cert.chain[0].as_ref());
    assert!(f.ske.is_none() && f.done && f.alert.is_none());
    assert!(f.extensions.is_empty(), "no extensions to a client without any");

    let preferring = r#"{"versions":["ssl3"],"suites":["RC4-MD5","DES-CBC3-SHA"],"server_preference":true}"#;
    let f = flight(preferring, CertVariant::Rsa2048, Hello::new(0x0301, &[0x000a, 0x0004])).await;
    assert_eq!((f.version, f.suite), (0x0300, 0x0004), "highest configured version ≤ the client's");
}

#[tokio::test]
async fn null_and_rsa_export() {
    let f = flight(
        r#"{"versions":["tls1.0"],"suites":["TLS_RSA_WITH_NULL_SHA"]}"#,
        CertVariant::Rsa2048,
        Hello::new(0x0301, &[0x0002]),
    )
    .await;
    assert_eq!((f.version, f.suite), (0x0301, 0x0002));
    assert!(f.ske.is_none() && f.done);

    let config = r#"{"versions":["tls1.0"],"suites":["TLS_RSA_EXPORT_WITH_RC4_40_MD5"]}"#;
    let f = flight(config, CertVariant::Rsa1024, Hello::new(0x0301, &[0x0003, 0x002f])).await;
    assert_eq!(f.suite, 0x0003);
    let ske = f.ske.unwrap();
    let (modulus, rest) = vec16(&ske);
    let (exponent, signature) = vec16(rest);
    assert_eq!(modulus.len() * 8, 512);
    assert!(modulus[0] & 0x80 != 0);
    assert_eq!(exponent, &[1, 0, 1]);
    assert_eq!(vec16(signature).0.len(), 128, "RSA 1024 signature size");
}

#[tokio::test]
async fn dhe_1024_at_tls10_and_a_real_signature_at_tls12() {
    let config = r#"{"versions":["tls1.0","tls1.2"],"suites":["TLS_DHE_RSA_WITH_AES_128_CBC_SHA"],"dh_bits":1024}"#;
    let (addr, cert) = legacy_server(config, CertVariant::Rsa2048).await;
    let (_, records) = exchange(addr, &Hello::new(0x0301, &[0x0033]).bytes()).await;
    let f = parse_flight(&records);
    assert_eq!((f.version, f.suite), (0x0301, 0x0033));
    assert!(f.certs.is_some());
    let ske = f.ske.unwrap();
    let (rest, dh) = parse_dh_params(&ske).unwrap();
    assert_eq!(dh.dh_p.len() * 8, 1024);
    assert_eq!(dh.dh_p[..8], [0xff; 8]);
    assert_eq!(dh.dh_g, &[2]);
    assert_eq!(dh.dh_ys.len(), 128);
    assert_eq!(vec16(rest).0.len(), 256, "TLS 1.0 RSA signature: no algorithm prefix");

    let (_, records) = exchange(addr, &Hello::new(0x0303, &[0x0033]).bytes()).await;
    let f = parse_flight(&records);
    assert_eq!(f.version, 0x0303);
    let ske = f.ske.unwrap();
    let (signature, params) = {
        let (rest, _) = parse_dh_params(&ske).unwrap();
        (rest, &ske[..ske.len() - rest.len()])
    };
    assert_eq!(&signature[..2], &[4, 1], "sha256 + rsa");
    let (sig, _) = vec16(&signature[2..]);
    let mut signed = client_random();
    signed.extend_from_slice(&f.server_random);
    signed.extend_from_slice(params);
    let (_, leaf) = X509Certificate::from_der(&cert.chain[0]).unwrap();
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &leaf.public_key().subject_public_key.data,
    );
    key.verify(&signed, sig).expect("ServerKeyExchange signature verifies with the leaf key");
}

#[tokio::test]
async fn ecdhe_ecdsa_signatures_verify_with_sha1_and_sha256() {
    let config = r#"{"versions":["tls1.0","tls1.2"],"suites":["TLS_ECDHE_ECDSA_WITH_RC4_128_SHA","ECDHE-ECDSA-AES128-GCM-SHA256"]}"#;
    let (addr, cert) = legacy_server(config, CertVariant::Valid).await;
    let (_, leaf) = X509Certificate::from_der(&cert.chain[0]).unwrap();
    let point = leaf.public_key().subject_public_key.data.to_vec();
    for (version, suite) in [(0x0301u16, 0xc007u16), (0x0303, 0xc02b)] {
        // supported_groups secp256r1, ec_point_formats uncompressed
        let hello = Hello::new(version, &[0xc02b, 0xc007]).ext(10, &[0, 2, 0, 23]).ext(11, &[1, 0]);
        let (_, records) = exchange(addr, &hello.bytes()).await;
        let f = parse_flight(&records);
        assert_eq!((f.version, f.suite), (version, suite), "GCM only at TLS 1.2");
        assert!(f.extensions.contains(&11));
        let ske = f.ske.unwrap();
        assert_eq!(&ske[..3], &[3, 0, 23], "named_curve secp256r1");
        assert_eq!(ske[3], 65);
        assert_eq!(ske[4], 4, "uncompressed point");
        let params = &ske[..4 + 65];
        let mut signature = &ske[4 + 65..];
        if version == 0x0303 {
            assert_eq!(&signature[..2], &[4, 3]);
            signature = &signature[2..];
        }
        let (sig, _) = vec16(signature);
        let mut signed = client_random();
        signed.extend_from_slice(&f.server_random);
        signed.extend_from_slice(params);
        let alg = if version == 0x0303 { &ring::digest::SHA256 } else { &ring::digest::SHA1_FOR_LEGACY_USE_ONLY };
        let digest = ring::digest::digest(alg, &signed);
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&point).unwrap();
        key.verify_prehash(digest.as_ref(), &p256::ecdsa::Signature::from_der(sig).unwrap()).unwrap();
    }
    // A client without secp256r1 gets no ECDHE suite.
    let (_, records) = exchange(addr, &Hello::new(0x0303, &[0xc02b]).ext(10, &[0, 2, 0, 24]).bytes()).await;
    assert_eq!(parse_flight(&records).alert, Some(40));
}

#[tokio::test]
async fn anonymous_dh_sends_no_certificate_and_the_default_2048_group() {
    let config =
        r#"{"versions":["tls1.0"],"suites":["TLS_DH_anon_WITH_AES_128_CBC_SHA","TLS_DH_anon_EXPORT_WITH_RC4_40_MD5"]}"#;
    let f = flight(config, CertVariant::Valid, Hello::new(0x0301, &[0x0034])).await;
    assert_eq!(f.suite, 0x0034);
    assert!(f.certs.is_none());
    let ske = f.ske.unwrap();
    let (rest, dh) = parse_dh_params(&ske).unwrap();
    assert_eq!(dh.dh_p.len() * 8, 2048);
    assert!(rest.is_empty(), "anonymous: no signature");

    let f = flight(config, CertVariant::Valid, Hello::new(0x0301, &[0x0017])).await;
    let ske = f.ske.unwrap();
    assert_eq!(parse_dh_params(&ske).unwrap().1.dh_p.len() * 8, 512, "EXPORT DH group");
}

#[tokio::test]
async fn alerts_for_no_common_version_or_suite() {
    let config = r#"{"versions":["tls1.1","tls1.2"],"suites":["AES128-SHA","AES128-GCM-SHA256"]}"#;
    let f = flight(config, CertVariant::Rsa2048, Hello::new(0x0301, &[0x002f])).await;
    assert_eq!(f.alert, Some(70), "protocol_version");
    assert!(!f.done);
    let f = flight(config, CertVariant::Rsa2048, Hello::new(0x0303, &[0x0004, 0x000a])).await;
    assert_eq!(f.alert, Some(40), "handshake_failure");
    let f = flight(config, CertVariant::Rsa2048, Hello::new(0x0302, &[0x009c])).await;
    assert_eq!(f.alert, Some(40), "a TLS 1.2 suite is not chosen at TLS 1.1");
    let f = flight(config, CertVariant::Rsa2048, Hello::new(0x0302, &[0x009c, 0x002f])).await;
    assert_eq!((f.version, f.suite), (0x0302, 0x002f));
}

#[tokio::test]
async fn renegotiation_compression_and_heartbeat_extensions() {
    let config = r#"{"versions":["tls1.0"],"suites":["AES128-SHA"],"compression":true,"heartbleed":true}"#;
    let hello = Hello::new(0x0301, &[0x002f, 0x00ff]).ext(15, &[1]);
    let mut hello = hello;
    hello.compression = vec![1, 0];
    let f = flight(config, CertVariant::Rsa2048, hello.clone()).await;
    assert_eq!(f.compression, 1, "DEFLATE (CRIME)");
    assert!(f.extensions.contains(&0xff01), "SCSV → renegotiation_info");
    assert!(f.extensions.contains(&15), "heartbeat");

    let config = r#"{"versions":["tls1.0"],"suites":["AES128-SHA"],"secure_renegotiation":false}"#;
    let f = flight(config, CertVariant::Rsa2048, hello.ext(0xff01, &[0])).await;
    assert_eq!(f.compression, 0);
    assert!(f.extensions.is_empty(), "{:?}", f.extensions);
}

async fn heartbeat_exchange(heartbleed: bool) -> Vec<Record> {
    let config = format!(r#"{{"versions":["tls1.0"],"suites":["AES128-SHA"],"heartbleed":{heartbleed}}}"#);
    let (addr, _) = legacy_server(&config, CertVariant::Rsa2048).await;
    let (mut stream, records) = exchange(addr, &Hello::new(0x0301, &[0x002f]).ext(15, &[1]).bytes()).await;
    assert!(parse_flight(&records).done);
    // heartbeat_request claiming 16384 bytes, carrying 3
    stream.write_all(&[24, 3, 1, 0, 6, 1, 0x40, 0x00, b'a', b'b', b'c']).await.unwrap();
    // then a close_notify alert, which ends the connection
    stream.write_all(&[21, 3, 1, 0, 2, 1, 0]).await.unwrap();
    read_records(&mut stream, |r| r.kind == 24).await
}

#[tokio::test]
async fn heartbleed_leaks_the_claimed_length() {
    let records = heartbeat_exchange(true).await;
    let beat = records.iter().find(|r| r.kind == 24).expect("a heartbeat response");
    assert_eq!(beat.body[0], 2, "heartbeat_response");
    let claimed = usize::from(u16::from_be_bytes([beat.body[1], beat.body[2]]));
    assert_eq!(claimed, 16384);
    assert!(beat.body.len() > 3 + 3);
    assert_eq!(&beat.body[3..6], b"abc");
    let leaked = String::from_utf8_lossy(&beat.body);
    assert!(leaked.contains("Cookie: session=lab-secret"));
}

#[tokio::test]
async fn a_patched_host_leaks_nothing() {
    let records = heartbeat_exchange(false).await;
    assert!(records.iter().all(|r| r.kind != 24), "{records:?}");
}

#[tokio::test]
async fn sslv2_compatible_hello_gets_a_tls_answer() {
    let config = r#"{"versions":["tls1.0"],"suites":["DES-CBC3-SHA"]}"#;
    let (addr, _) = legacy_server(config, CertVariant::Rsa2048).await;
    let mut body = vec![1, 0x03, 0x01, 0, 6, 0, 0, 0, 16];
    body.extend_from_slice(&[0x07, 0x00, 0xc0, 0x00, 0x00, 0x0a]);
    body.extend_from_slice(&[5u8; 16]);
    let mut hello = vec![0x80, body.len() as u8];
    hello.extend_from_slice(&body);
    let (_, records) = exchange(addr, &hello).await;
    let f = parse_flight(&records);
    assert_eq!((f.version, f.suite), (0x0301, 0x000a));
    assert!(f.done);
}

#[tokio::test]
async fn sslv2_hello_gets_an_sslv2_server_hello_when_configured() {
    let config = r#"{"versions":["ssl2","ssl3"],"suites":["SSL_CK_RC4_128_WITH_MD5","SSL_CK_DES_192_EDE3_CBC_WITH_MD5","RC4-MD5"]}"#;
    let (addr, cert) = legacy_server(config, CertVariant::Rsa2048).await;
    let mut body = vec![1, 0x00, 0x02, 0, 9, 0, 0, 0, 16];
    body.extend_from_slice(&[0x07, 0x00, 0xc0, 0x01, 0x00, 0x80, 0x02, 0x00, 0x80]);
    body.extend_from_slice(&[5u8; 16]);
    let mut hello = vec![0x80, body.len() as u8];
    hello.extend_from_slice(&body);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&hello).await.unwrap();
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).await.unwrap();
    assert!(head[0] & 0x80 != 0);
    let len = (usize::from(head[0] & 0x7f) << 8) | usize::from(head[1]);
    let mut msg = vec![0u8; len];
    stream.read_exact(&mut msg).await.unwrap();
    assert_eq!(msg[0], 4, "SERVER-HELLO");
    assert_eq!(&msg[3..5], &[0, 2], "SSL 2.0");
    let cert_len = usize::from(u16::from_be_bytes([msg[5], msg[6]]));
    let specs_len = usize::from(u16::from_be_bytes([msg[7], msg[8]]));
    assert_eq!(&msg[11..11 + cert_len], cert.chain[0].as_ref());
    let specs = &msg[11 + cert_len..11 + cert_len + specs_len];
    assert_eq!(specs, &[0x01, 0x00, 0x80, 0x07, 0x00, 0xc0], "server order, common kinds only");
}

#[tokio::test]
async fn garbage_is_survived() {
    let config = r#"{"versions":["tls1.0"],"suites":["AES128-SHA"]}"#;
    let (addr, _) = legacy_server(config, CertVariant::Rsa2048).await;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut bytes: Vec<u8> = (0..(x % 700) as usize + 1).map(|j| (x >> (j % 60)) as u8 ^ j as u8).collect();
        bytes[0] = [22, 0x80, 0x16, 1][i % 4];
        if i % 3 == 0 {
            // a real hello, truncated and corrupted
            let mut hello = Hello::new(0x0301, &[0x002f]).ext(15, &[1]).bytes();
            let at = (x as usize) % hello.len();
            hello[at] ^= 0x5a;
            hello.truncate(hello.len() - (x as usize % 5));
            bytes = hello;
        }
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let _ = stream.write_all(&bytes).await;
        let _ = stream.shutdown().await;
        let _ = read_records(&mut stream, |_| false).await;
    }
    let f = flight(config, CertVariant::Rsa2048, Hello::new(0x0301, &[0x002f])).await;
    assert!(f.done, "still serving");
    // the same server too
    let (_, records) = exchange(addr, &Hello::new(0x0301, &[0x002f]).bytes()).await;
    assert!(parse_flight(&records).done);
}
