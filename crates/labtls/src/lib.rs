//! The TLS part of the lab: the simulated internet on 127.0.0.0/8 that Rampart's TLS
//! scanner is tested against.
//!
//! Three pieces:
//!
//! - [`LabCa`]: a lab certificate authority made at start (an ECDSA P-256 root and an
//!   intermediate, both only in memory) that issues leaf certificates in good and bad
//!   shapes ([`CertVariant`]): expired, not yet valid, about to expire, self-signed,
//!   wrong host, weak RSA key, SHA-1 signature, too long a validity, missing intermediate.
//!   A scanner in lab mode trusts [`LabCa::root_pem`] / [`LabCa::root_der`].
//! - [`modern_server_config`]: a rustls server config (TLS 1.2 and 1.3, ALPN `http/1.1`)
//!   for hosts a modern stack can serve.
//! - [`serve_legacy`]: a responder speaking just enough SSLv2/SSLv3/TLS 1.0–1.2 to answer
//!   a ClientHello with the versions, cipher suites (RC4, 3DES, EXPORT, NULL, anonymous
//!   DH, …), DH group sizes, compression, renegotiation and Heartbleed behaviour a
//!   [`LegacyConfig`] asks for. Debian's OpenSSL compiles those out and rustls never had
//!   them, so the lab writes the handshake messages itself.
//!
//! # What is real and what is placeholder
//!
//! Real: every certificate (DER built by rcgen, signed by its issuer; the SHA-1 leaf is
//! re-signed with a genuine `ecdsa-with-SHA1` signature by the intermediate's key), the
//! rustls hosts (full handshakes), the legacy ServerHello / Certificate / ServerHelloDone
//! messages and record framing, the DH groups (RFC 2409 group 2, RFC 3526 group 14, a
//! fixed 512-bit safe prime for export suites), the ECDHE point (a fresh P-256 key), the
//! 512-bit export RSA key (fixed, embedded), and the ServerKeyExchange signature when the
//! leaf key is ECDSA (SHA-256 for TLS 1.2, SHA-1 below) or RSA 2048 under TLS 1.2.
//!
//! Placeholder: the legacy responder never completes a handshake — after ServerHelloDone
//! it only answers heartbeat requests and closes on anything else, so no keys are agreed
//! and no data is encrypted. The DH public value `Ys` is the square of a random number
//! (a valid subgroup element, but no secret exponent is known), and the ServerKeyExchange signature of an RSA leaf below TLS
//! 1.2 (MD5+SHA-1) or of the RSA 1024 leaf is random bytes of the right length: well
//! formed, but it does not verify. A scanner that only reads the server's first flight
//! (versions, suites, certificates, group sizes, extensions, Heartbleed) sees a faithful
//! server; a client that insists on finishing the handshake sees the connection close.
//! The Heartbleed "memory" is a fixed fake buffer of leaked-looking text.
//!
//! The lab only listens on 127.0.0.0/8 and never connects anywhere. All keys in `keys/`
//! are public lab test keys.

mod ca;
mod der;
pub mod legacy;
mod modern;

use serde::Deserialize;

pub use ca::{CertVariant, IssuedCert, KeyType, LabCa};
pub use legacy::{CipherSuite, KeyExchange, LegacyConfig, SUITES, serve_legacy};
pub use modern::{lab_client_config, modern_server_config};

/// A protocol version as named in lab files (`"ssl2"`, `"ssl3"`, `"tls1.0"`, `"tls1.1"`,
/// `"tls1.2"`, `"tls1.3"`).
///
/// Modern (rustls) hosts speak TLS 1.2 and 1.3; the legacy responder speaks SSLv2 (just
/// the ServerHello, for DROWN-style checks), SSLv3, TLS 1.0, 1.1 and 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub enum TlsVersion {
    #[serde(rename = "ssl2")]
    Ssl2,
    #[serde(rename = "ssl3")]
    Ssl3,
    #[serde(rename = "tls1.0")]
    Tls10,
    #[serde(rename = "tls1.1")]
    Tls11,
    #[serde(rename = "tls1.2")]
    Tls12,
    #[serde(rename = "tls1.3")]
    Tls13,
}

impl TlsVersion {
    /// The version's code on the wire (`0x0002` for SSLv2, `0x0300` … `0x0304`).
    pub fn wire(self) -> u16 {
        match self {
            TlsVersion::Ssl2 => 0x0002,
            TlsVersion::Ssl3 => 0x0300,
            TlsVersion::Tls10 => 0x0301,
            TlsVersion::Tls11 => 0x0302,
            TlsVersion::Tls12 => 0x0303,
            TlsVersion::Tls13 => 0x0304,
        }
    }

    /// The version with this wire code, if it is one of the six.
    pub fn from_wire(code: u16) -> Option<TlsVersion> {
        [TlsVersion::Ssl2, TlsVersion::Ssl3, TlsVersion::Tls10, TlsVersion::Tls11, TlsVersion::Tls12, TlsVersion::Tls13]
            .into_iter()
            .find(|v| v.wire() == code)
    }
}

/// Everything that can go wrong making certificates, configs, or answering a client.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("certificate generation failed: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("rustls: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("a certificate needs at least one name")]
    NoNames,
    #[error("a {0:?} certificate cannot be served by a modern (rustls) host: {1}")]
    NotModernServable(CertVariant, &'static str),
    #[error("a {host} host cannot speak {version:?}")]
    UnsupportedVersion { version: TlsVersion, host: &'static str },
    #[error("unknown cipher suite name {0:?}")]
    UnknownSuite(String),
    #[error("invalid legacy TLS config: {0}")]
    Config(String),
    #[error("embedded lab key or group is unusable: {0}")]
    EmbeddedKey(&'static str),
    #[error("crypto operation failed: {0}")]
    Crypto(&'static str),
    #[error("malformed client message: {0}")]
    Malformed(&'static str),
    #[error("timed out waiting for the client")]
    Timeout,
    #[error("the client closed the connection")]
    Closed,
}
