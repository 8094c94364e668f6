//! The lab's TLS services: HTTPS on a modern host checked with reqwest trusting only the
//! lab CA, failures for bad certificates, SMTP STARTTLS with tokio-rustls, and a legacy
//! host's ServerHello read from raw bytes.

use std::time::Duration;

use lab::{Lab, LabFile};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const FILE: &str = r#"{
  "hosts": [
    {"name": "www.bank.test", "address": "127.77.30.2", "services": [
      {"port": 443, "kind": "https", "http": {"headers": {"Strict-Transport-Security": "max-age=63072000"},
        "pages": [{"path": "/", "body": "welcome"}]}}]},
    {"name": "old.bank.test", "address": "127.77.30.3", "services": [
      {"port": 443, "kind": "https", "tls": {"cert": "expired"}}]},
    {"name": "mail.bank.test", "address": "127.77.30.4", "services": [
      {"port": 25, "kind": "smtp", "tls": {"cert": "valid"}}]},
    {"name": "legacy.bank.test", "address": "127.77.30.5", "services": [
      {"port": 443, "kind": "https", "tls": {"cert": "rsa1024", "legacy": {
        "versions": ["ssl3", "tls1.0"], "suites": ["TLS_RSA_WITH_RC4_128_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA"]}}}]},
    {"name": "imap.bank.test", "address": "127.77.30.6", "services": [
      {"port": 993, "kind": "tls", "tls": {"cert": "self_signed", "versions": ["tls1.2"]}}]}
  ]
}"#;

fn root(lab: &Lab) -> reqwest::Certificate {
    reqwest::Certificate::from_pem(lab.ca_root_pem.as_deref().expect("a lab CA").as_bytes()).unwrap()
}

#[tokio::test]
async fn https_validates_against_the_lab_ca_and_bad_certificates_fail() {
    let lab = Lab::up(&LabFile::parse(FILE).unwrap()).await.unwrap();
    let www = lab.endpoint("www.bank.test", 443).unwrap();
    let old = lab.endpoint("old.bank.test", 443).unwrap();
    let client = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(root(&lab))
        .resolve("www.bank.test", www)
        .resolve("old.bank.test", old)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let r = client.get(format!("https://www.bank.test:{}/", www.port())).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["strict-transport-security"], "max-age=63072000");
    assert_eq!(r.text().await.unwrap(), "welcome");
    let err = client.get(format!("https://old.bank.test:{}/", old.port())).send().await.unwrap_err();
    assert!(format!("{err:?}").contains("Expired"), "{err:?}");
    lab.down().await;
}

#[tokio::test]
async fn smtp_starttls_upgrades_with_the_lab_certificate() {
    let lab = Lab::up(&LabFile::parse(&FILE.replace("127.77.30.", "127.77.31.")).unwrap()).await.unwrap();
    let addr = lab.endpoint("mail.bank.test", 25).unwrap();
    let mut io = BufReader::new(TcpStream::connect(addr).await.unwrap());
    let mut line = String::new();
    io.read_line(&mut line).await.unwrap();
    assert!(line.starts_with("220 mail.bank.test ESMTP"), "{line}");
    io.get_mut().write_all(b"EHLO scanner.test\r\n").await.unwrap();
    let mut ehlo = String::new();
    while !ehlo.contains("250 ") {
        io.read_line(&mut ehlo).await.unwrap();
    }
    assert!(ehlo.contains("250-STARTTLS"), "{ehlo}");
    io.get_mut().write_all(b"STARTTLS\r\n").await.unwrap();
    line.clear();
    io.read_line(&mut line).await.unwrap();
    assert!(line.starts_with("220 "), "{line}");
    let config = labtls::lab_client_config(lab.ca_root_der.as_deref().unwrap()).unwrap();
    let connector = tokio_rustls::TlsConnector::from(config);
    let tls = connector
        .connect(ServerName::try_from("mail.bank.test").unwrap(), io.into_inner())
        .await
        .expect("the STARTTLS handshake completes and the certificate validates");
    let mut tls = BufReader::new(tls);
    tls.get_mut().write_all(b"EHLO scanner.test\r\n").await.unwrap();
    let mut again = String::new();
    while !again.contains("250 ") {
        tls.read_line(&mut again).await.unwrap();
    }
    assert!(!again.contains("STARTTLS"), "no STARTTLS offered inside TLS: {again}");
    lab.down().await;
}

/// A TLS 1.0 ClientHello offering RC4-SHA, 3DES and AES (no extensions).
fn client_hello() -> Vec<u8> {
    let mut body = vec![0x03, 0x01];
    body.extend_from_slice(&[7u8; 32]);
    body.push(0);
    let suites: [u16; 3] = [0x002f, 0x0005, 0x000a];
    body.extend_from_slice(&((suites.len() * 2) as u16).to_be_bytes());
    for s in suites {
        body.extend_from_slice(&s.to_be_bytes());
    }
    body.extend_from_slice(&[1, 0]);
    let mut hs = vec![1, 0, 0, body.len() as u8];
    hs.extend_from_slice(&body);
    let mut record = vec![0x16, 0x03, 0x01];
    record.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    record.extend_from_slice(&hs);
    record
}

#[tokio::test]
async fn a_legacy_host_answers_tls_10_with_rc4() {
    let lab = Lab::up(&LabFile::parse(&FILE.replace("127.77.30.", "127.77.32.")).unwrap()).await.unwrap();
    let mut s = TcpStream::connect(lab.endpoint("legacy.bank.test", 443).unwrap()).await.unwrap();
    s.write_all(&client_hello()).await.unwrap();
    let mut header = [0u8; 5];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut header)).await.unwrap().unwrap();
    assert_eq!(header[0], 0x16, "a handshake record");
    let mut body = vec![0u8; usize::from(u16::from_be_bytes([header[3], header[4]]))];
    s.read_exact(&mut body).await.unwrap();
    assert_eq!(body[0], 2, "ServerHello");
    assert_eq!(&body[4..6], &[0x03, 0x01], "TLS 1.0");
    let sid_len = usize::from(body[38]);
    let suite = u16::from_be_bytes([body[39 + sid_len], body[40 + sid_len]]);
    assert_eq!(suite, 0x0005, "RC4-SHA: the first suite of the client's that the host has");
    lab.down().await;
}

#[tokio::test]
async fn a_tls_only_endpoint_presents_its_self_signed_certificate() {
    let lab = Lab::up(&LabFile::parse(&FILE.replace("127.77.30.", "127.77.33.")).unwrap()).await.unwrap();
    let stream = TcpStream::connect(lab.endpoint("imap.bank.test", 993).unwrap()).await.unwrap();
    let connector =
        tokio_rustls::TlsConnector::from(labtls::lab_client_config(lab.ca_root_der.as_deref().unwrap()).unwrap());
    let err = connector.connect(ServerName::try_from("imap.bank.test").unwrap(), stream).await.unwrap_err();
    assert!(err.to_string().contains("UnknownIssuer") || err.to_string().contains("invalid peer certificate"), "{err}");
    lab.down().await;
}

#[test]
fn weak_settings_need_the_legacy_responder() {
    let bad = FILE.replace(r#""cert": "self_signed", "versions": ["tls1.2"]"#, r#""versions": ["tls1.0"]"#);
    assert!(LabFile::parse(&bad).is_err());
    let bad = FILE.replace(r#""cert": "expired""#, r#""cert": "rsa1024""#);
    assert!(LabFile::parse(&bad).is_err());
}
