//! A TLS handshake that only looks: it takes whatever certificate chain the server
//! presents (trust is judged elsewhere, by the certificate probes) so discovery can read
//! the names a certificate covers. The connection goes through the guard, and the
//! handshake has the guard's read timeout.

use rustls::pki_types::CertificateDer;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

use crate::guard::{Guard, GuardError};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error(transparent)]
    Guard(#[from] GuardError),
    #[error("{host}: TLS handshake: {message}")]
    Handshake { host: String, message: String },
}

/// The chain `host` presents on the standard `port` (lab port in lab mode), leaf first.
pub async fn peer_chain(guard: &Guard, host: &str, port: u16) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let connection = guard.connect_host(host, port).await?;
    let seen = crate::tlsprobe::cert::rustls_handshake(connection, host, guard.policy().read_timeout)
        .await
        .map_err(|message| TlsError::Handshake { host: host.to_owned(), message })?;
    Ok(seen.chain.into_iter().map(CertificateDer::from).collect())
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
