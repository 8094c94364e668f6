//! A TLS handshake that only looks: it takes whatever certificate chain the server
//! presents (trust is judged elsewhere, by the certificate probes) so discovery can read
//! the names a certificate covers. The connection goes through the guard, and the
//! handshake has the guard's read timeout.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

use crate::guard::{Guard, GuardError};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error(transparent)]
    Guard(#[from] GuardError),
    #[error("{host}: TLS handshake: {message}")]
    Handshake { host: String, message: String },
    #[error("{host}: TLS handshake timed out")]
    Timeout { host: String },
}

/// The chain `host` presents on the standard `port` (lab port in lab mode), leaf first.
pub async fn peer_chain(guard: &Guard, host: &str, port: u16) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let connection = guard.connect_host(host, port).await?;
    let handshake_err = |message: String| TlsError::Handshake { host: host.to_owned(), message };
    let name = ServerName::try_from(host.to_owned()).map_err(|e| handshake_err(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| handshake_err(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let timeout = guard.policy().read_timeout;
    let stream = tokio::time::timeout(timeout, connector.connect(name, connection.stream))
        .await
        .map_err(|_| TlsError::Timeout { host: host.to_owned() })?
        .map_err(|e| handshake_err(e.to_string()))?;
    let chain = stream.get_ref().1.peer_certificates().map(|c| c.iter().map(|c| c.clone().into_owned()).collect());
    Ok(chain.unwrap_or_default())
}

/// The DNS names a certificate covers: its subjectAltName dNSNames, or its subject
/// common name when it has no SAN extension. Lower case, without a trailing dot;
/// wildcards kept as `*.example.com`. A certificate that does not parse covers nothing.
pub fn certificate_names(der: &[u8]) -> Vec<String> {
    let Ok((_, cert)) = x509_parser::certificate::X509Certificate::from_der(der) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for general in &san.value.general_names {
            if let GeneralName::DNSName(n) = general {
                names.push(n.trim_end_matches('.').to_ascii_lowercase());
            }
        }
        return names;
    }
    for cn in cert.subject().iter_common_name() {
        if let Ok(text) = cn.as_str() {
            names.push(text.trim_end_matches('.').to_ascii_lowercase());
        }
    }
    names
}

/// Accepts every certificate but still checks the handshake signatures with the
/// provider's algorithms (a server must hold the key of the certificate it shows).
#[derive(Debug)]
struct AcceptAny(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
