//! Cross-checks with the `openssl` CLI (skipped, with a printed reason, when it is absent).
//!
//! Debian's OpenSSL has no SSLv3/RC4/3DES/EXPORT/NULL, but it speaks TLS 1.0 with
//! AES-CBC at `@SECLEVEL=0`, which is enough to see it accept the legacy responder's
//! first flight: it answers ServerHelloDone with a ClientKeyExchange only after parsing
//! the ServerHello, the Certificate and the ServerKeyExchange and checking its signature.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use labtls::{CertVariant, modern_server_config};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::support::{HOST, ca, issue, legacy_server};

fn openssl_available() -> bool {
    match Command::new("openssl").arg("version").output() {
        Ok(out) if out.status.success() => true,
        _ => {
            println!("SKIPPED: the openssl CLI is not on this machine");
            false
        }
    }
}

async fn s_client(addr: SocketAddr, args: &[&str]) -> String {
    let mut all = vec!["s_client".to_owned(), "-connect".to_owned(), addr.to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let output =
        tokio::task::spawn_blocking(move || Command::new("openssl").args(&all).stdin(Stdio::null()).output().unwrap())
            .await
            .unwrap();
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[tokio::test]
async fn openssl_accepts_the_legacy_first_flight() {
    if !openssl_available() {
        return;
    }
    let cases = [
        ("tls1.0", "-tls1", "AES128-SHA", CertVariant::Rsa2048, false),
        ("tls1.0", "-tls1", "ECDHE-ECDSA-AES128-SHA", CertVariant::Valid, true),
        ("tls1.2", "-tls1_2", "DHE-RSA-AES128-SHA", CertVariant::Rsa2048, true),
        ("tls1.2", "-tls1_2", "ECDHE-ECDSA-AES128-GCM-SHA256", CertVariant::Valid, true),
    ];
    for (version, flag, suite, variant, has_ske) in cases {
        let config = format!(r#"{{"versions":["{version}"],"suites":["{suite}"]}}"#);
        let (addr, _) = legacy_server(&config, variant).await;
        let cipher = format!("{suite}:@SECLEVEL=0");
        // Several rounds: key shares and signatures are fresh each time.
        for _ in 0..3 {
            let out = s_client(addr, &[flag, "-cipher", &cipher, "-msg", "-servername", HOST]).await;
            for needle in ["ServerHello", "Certificate", "ServerHelloDone", "ClientKeyExchange"] {
                assert!(out.contains(needle), "{suite}: no {needle} in\n{out}");
            }
            assert_eq!(out.contains("ServerKeyExchange"), has_ske, "{suite}:\n{out}");
            assert!(!out.contains("bad signature") && !out.contains("decode error"), "{suite}:\n{out}");
        }
    }
}

#[tokio::test]
async fn openssl_completes_with_a_modern_host_and_verifies_the_chain() {
    if !openssl_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root.pem");
    std::fs::write(&root, ca().root_pem()).unwrap();
    let cert = issue(CertVariant::Valid);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::from(modern_server_config(&cert, &[]).unwrap());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    let root_arg = root.to_string_lossy().into_owned();
    let out = s_client(
        addr,
        &["-tls1_3", "-CAfile", &root_arg, "-verify_return_error", "-verify_hostname", HOST, "-alpn", "http/1.1"],
    )
    .await;
    assert!(out.contains("Verify return code: 0 (ok)"), "{out}");
    assert!(out.contains("ALPN protocol: http/1.1"), "{out}");
}

#[test]
fn openssl_reads_the_sha1_leaf_and_verifies_it_at_level_0() {
    if !openssl_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cert = issue(CertVariant::Sha1Signature);
    let pem = to_pem;
    let (root, inter, leaf) = (dir.path().join("root.pem"), dir.path().join("inter.pem"), dir.path().join("leaf.pem"));
    std::fs::write(&root, ca().root_pem()).unwrap();
    std::fs::write(&inter, pem(&cert.chain[1])).unwrap();
    std::fs::write(&leaf, pem(&cert.chain[0])).unwrap();
    let text = Command::new("openssl").args(["x509", "-noout", "-text", "-in"]).arg(&leaf).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Signature Algorithm: ecdsa-with-SHA1"), "{text}");
    let verify = Command::new("openssl")
        .args(["verify", "-auth_level", "0", "-CAfile"])
        .arg(&root)
        .arg("-untrusted")
        .arg(&inter)
        .arg(&leaf)
        .output()
        .unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&verify.stdout), String::from_utf8_lossy(&verify.stderr));
    assert!(verify.status.success() && out.contains(": OK"), "{out}");
}

/// PEM without a PEM crate: base64 by hand.
fn to_pem(der: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = String::new();
    for chunk in der.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                b64.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                b64.push('=');
            }
        }
    }
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}
