//! Modern hosts: tokio-rustls server, rustls client trusting only the lab root.

use std::net::SocketAddr;

use labtls::{CertVariant, IssuedCert, TlsError, TlsVersion, lab_client_config, modern_server_config};
use rustls::pki_types::ServerName;
use rustls::{CertificateError, Error};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::support::{HOST, ca, issue};

/// Serves one connection (echoing one byte) with `cert`, connects with a lab client.
async fn connect(cert: &IssuedCert, versions: &[TlsVersion]) -> Result<rustls::ProtocolVersion, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::from(modern_server_config(cert, versions).unwrap());
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        if let Ok(mut tls) = acceptor.accept(tcp).await {
            let mut byte = [0u8; 1];
            if tls.read_exact(&mut byte).await.is_ok() {
                let _ = tls.write_all(&byte).await;
                let _ = tls.flush().await;
            }
        }
    });
    let mut client = (*lab_client_config(&ca().root_der()).unwrap()).clone();
    client.alpn_protocols = vec![b"http/1.1".to_vec()];
    let connector = TlsConnector::from(std::sync::Arc::new(client));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let result = connector.connect(ServerName::try_from(HOST).unwrap(), tcp).await;
    let outcome = match result {
        Ok(mut tls) => {
            tls.write_all(b"x").await.unwrap();
            let mut byte = [0u8; 1];
            tls.read_exact(&mut byte).await.unwrap();
            assert_eq!(&byte, b"x");
            let (_, conn) = tls.get_ref();
            assert_eq!(conn.alpn_protocol(), Some(&b"http/1.1"[..]));
            Ok(conn.protocol_version().unwrap())
        }
        Err(e) => {
            let inner = e.get_ref().and_then(|i| i.downcast_ref::<Error>()).cloned();
            Err(inner.unwrap_or_else(|| panic!("not a rustls error: {e}")))
        }
    };
    server.abort();
    outcome
}

#[tokio::test]
async fn valid_completes_with_tls13_by_default_and_tls12_when_asked() {
    let cert = issue(CertVariant::Valid);
    assert_eq!(connect(&cert, &[]).await.unwrap(), rustls::ProtocolVersion::TLSv1_3);
    assert_eq!(connect(&cert, &[TlsVersion::Tls12]).await.unwrap(), rustls::ProtocolVersion::TLSv1_2);
}

#[tokio::test]
async fn acceptable_variants_complete() {
    for variant in
        [CertVariant::ExpiresIn14Days, CertVariant::ExpiresIn30Days, CertVariant::LongValidity, CertVariant::Rsa2048]
    {
        let cert = issue(variant);
        for versions in [&[TlsVersion::Tls12][..], &[TlsVersion::Tls13]] {
            connect(&cert, versions).await.unwrap_or_else(|e| panic!("{variant:?} {versions:?}: {e}"));
        }
    }
}

#[tokio::test]
async fn bad_variants_fail_with_the_expected_error() {
    use CertificateError as C;
    type Expected = fn(&CertificateError) -> bool;
    let cases: [(CertVariant, Expected); 6] = [
        (CertVariant::Expired, |e| matches!(e, C::Expired | C::ExpiredContext { .. })),
        (CertVariant::NotYetValid, |e| matches!(e, C::NotValidYet | C::NotValidYetContext { .. })),
        (CertVariant::SelfSigned, |e| matches!(e, C::UnknownIssuer)),
        (CertVariant::WrongHost, |e| matches!(e, C::NotValidForName | C::NotValidForNameContext { .. })),
        (CertVariant::MissingIntermediate, |e| matches!(e, C::UnknownIssuer)),
        // webpki has no ecdsa-with-SHA1.
        (CertVariant::Sha1Signature, |e| matches!(e, C::UnsupportedSignatureAlgorithmContext { .. })),
    ];
    for (variant, expected) in cases {
        let cert = issue(variant);
        match connect(&cert, &[]).await {
            Err(Error::InvalidCertificate(e)) => assert!(expected(&e), "{variant:?}: {e:?}"),
            other => panic!("{variant:?}: {other:?}"),
        }
    }
}

#[test]
fn rsa1024_and_old_versions_are_refused_not_panicked() {
    let rsa1024 = issue(CertVariant::Rsa1024);
    assert!(!CertVariant::Rsa1024.modern_servable());
    assert!(matches!(modern_server_config(&rsa1024, &[]), Err(TlsError::NotModernServable(..))));
    let valid = issue(CertVariant::Valid);
    assert!(matches!(
        modern_server_config(&valid, &[TlsVersion::Tls10]),
        Err(TlsError::UnsupportedVersion { version: TlsVersion::Tls10, .. })
    ));
    for variant in CertVariant::ALL {
        assert_eq!(modern_server_config(&issue(variant), &[]).is_ok(), variant.modern_servable(), "{variant:?}");
    }
}
