//! Modern lab hosts: rustls with the ring provider.

use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore, ServerConfig, SupportedProtocolVersion};

use crate::{IssuedCert, TlsError, TlsVersion};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls server config for a modern host: TLS 1.2 and 1.3 (or only the `versions`
/// given, which must be `Tls12`/`Tls13`), ALPN `http/1.1`, serving `cert.chain`.
///
/// Errors when the variant is not [`CertVariant::modern_servable`](crate::CertVariant::modern_servable)
/// or a version is not one rustls speaks. The ring provider is passed explicitly, so no
/// process-wide default provider is needed.
pub fn modern_server_config(cert: &IssuedCert, versions: &[TlsVersion]) -> Result<Arc<ServerConfig>, TlsError> {
    if !cert.variant.modern_servable() {
        return Err(TlsError::NotModernServable(cert.variant, "ring cannot sign with an RSA key under 2048 bits"));
    }
    let mut protocols: Vec<&'static SupportedProtocolVersion> = Vec::new();
    let wanted = if versions.is_empty() { &[TlsVersion::Tls12, TlsVersion::Tls13][..] } else { versions };
    for &version in wanted {
        let protocol = match version {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
            other => return Err(TlsError::UnsupportedVersion { version: other, host: "modern (rustls)" }),
        };
        if !protocols.iter().any(|p| p.version == protocol.version) {
            protocols.push(protocol);
        }
    }
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&protocols)?
        .with_no_client_auth()
        .with_single_cert(cert.chain.clone(), cert.key.clone_key())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A rustls client config (ring, TLS 1.2 and 1.3) trusting only the lab root `root_der`:
/// what a scanner in lab mode, or a test, connects with.
pub fn lab_client_config(root_der: &[u8]) -> Result<Arc<ClientConfig>, TlsError> {
    let mut roots = RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from(root_der.to_vec()))?;
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
