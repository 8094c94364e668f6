//! TLS for lab services: which certificate a service presents (from the lab CA made at
//! start, crate `labtls`), and whether rustls serves it (modern hosts) or the lab's
//! legacy responder answers the handshake (old protocols, weak suites, Heartbleed).

use std::sync::Arc;

use labtls::{CertVariant, IssuedCert, LabCa, LegacyConfig, TlsVersion};
use serde::Deserialize;
use tokio_rustls::TlsAcceptor;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSpec {
    #[serde(default = "valid")]
    pub cert: CertVariant,
    /// The versions a modern host accepts (default TLS 1.2 and 1.3).
    #[serde(default)]
    pub versions: Vec<TlsVersion>,
    /// When present, the legacy responder answers the handshake instead of rustls.
    #[serde(default)]
    pub legacy: Option<LegacyConfig>,
    /// Names the certificate covers besides the host's own.
    #[serde(default)]
    pub sans: Vec<String>,
    /// The subject's organisation (`O=`), as an OV certificate names its holder; absent,
    /// the lab's own name (the issuer's), as on every other lab certificate.
    #[serde(default)]
    pub organization: Option<String>,
}

fn valid() -> CertVariant {
    CertVariant::Valid
}

/// How a TLS service is served.
#[derive(Clone)]
pub(crate) enum Tls {
    Modern(TlsAcceptor),
    Legacy(Arc<LegacyConfig>, Arc<IssuedCert>),
}

impl TlsSpec {
    pub(crate) fn check(&self, host: &str) -> Result<(), String> {
        if self.legacy.is_none() && !self.cert.modern_servable() {
            return Err(format!(
                "{host}: a {:?} certificate can only be served by the legacy responder (add \"legacy\")",
                self.cert
            ));
        }
        if self.legacy.is_none() && self.versions.iter().any(|v| *v < TlsVersion::Tls12) {
            return Err(format!("{host}: versions below TLS 1.2 need the legacy responder (add \"legacy\")"));
        }
        Ok(())
    }

    /// The certificate for `host` and the way to serve it.
    pub(crate) fn build(&self, ca: &LabCa, host: &str) -> Result<Tls, String> {
        let names: Vec<String> = std::iter::once(host.to_owned()).chain(self.sans.iter().cloned()).collect();
        let cert = ca
            .issue_to(&names, self.cert, self.organization.as_deref())
            .map_err(|e| format!("{host}: certificate: {e}"))?;
        match &self.legacy {
            Some(legacy) => Ok(Tls::Legacy(Arc::new(legacy.clone()), Arc::new(cert))),
            None => {
                let versions = if self.versions.is_empty() {
                    vec![TlsVersion::Tls12, TlsVersion::Tls13]
                } else {
                    self.versions.clone()
                };
                let config =
                    labtls::modern_server_config(&cert, &versions).map_err(|e| format!("{host}: TLS config: {e}"))?;
                Ok(Tls::Modern(TlsAcceptor::from(config)))
            }
        }
    }
}
