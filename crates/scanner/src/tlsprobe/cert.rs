//! The certificate chain an endpoint presents, judged: validity window, expiry soon,
//! self-signed, trust to the Mozilla root store (webpki-roots) or the lab CA, a complete
//! chain, host-name match (RFC 6125), key type and size, signature algorithms, validity
//! length and embedded SCTs. Fields come from x509-parser; the path check is webpki's
//! (through rustls). A certificate that does not parse is reported as such.

use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use serde::Serialize;
use time::OffsetDateTime;
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
use x509_parser::public_key::PublicKey;

/// The chain's leaf and what was concluded about the chain.
#[derive(Debug, Clone, Serialize)]
pub struct CertReport {
    pub subject: String,
    pub issuer: String,
    /// The leaf subject's organisation (`O=`), when it names someone other than its
    /// issuer's (an OV or EV certificate says whose site it is; a CA naming itself, as
    /// a private or lab CA does on every leaf, says nothing of the site). At most
    /// [`crate::identity::MAX_NAME`] characters, control characters dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    pub names: Vec<String>,
    pub not_before: String,
    pub not_after: String,
    /// Whole days until `notAfter` (negative when expired).
    pub days_left: i64,
    pub validity_days: i64,
    /// `RSA 2048`, `EC P-256`, …
    pub key: String,
    pub key_bits: usize,
    pub key_is_rsa: bool,
    /// Signature algorithms of the leaf and the intermediates sent, leaf first.
    pub signatures: Vec<String>,
    pub chain_length: usize,
    pub self_signed: bool,
    /// `None` when the chain leads to a trusted root; else what webpki said.
    pub untrusted: Option<String>,
    /// The leaf's issuer is not among the certificates sent.
    pub issuer_missing: bool,
    pub hostname_matches: bool,
    pub embedded_scts: bool,
    /// The leaf did not parse (what x509-parser said); the other fields are empty then.
    pub unparsed: Option<String>,
}

const OID_SCT_LIST: &str = "1.3.6.1.4.1.11129.2.4.2";

/// Does `pattern` (a SAN dNSName, possibly `*.`-wildcarded in the left-most label) cover
/// `host`? RFC 6125 §6.4.3: the wildcard stands for exactly one label.
pub fn name_matches(pattern: &str, host: &str) -> bool {
    let (pattern, host) =
        (pattern.trim_end_matches('.').to_ascii_lowercase(), host.trim_end_matches('.').to_ascii_lowercase());
    match pattern.strip_prefix("*.") {
        Some(suffix) => host.split_once('.').is_some_and(|(label, rest)| !label.is_empty() && rest == suffix),
        None => pattern == host,
    }
}

fn signature_name(oid: &str) -> String {
    match oid {
        "1.2.840.113549.1.1.4" => "md5WithRSAEncryption",
        "1.2.840.113549.1.1.5" => "sha1WithRSAEncryption",
        "1.2.840.113549.1.1.11" => "sha256WithRSAEncryption",
        "1.2.840.113549.1.1.12" => "sha384WithRSAEncryption",
        "1.2.840.113549.1.1.13" => "sha512WithRSAEncryption",
        "1.2.840.113549.1.1.10" => "rsassa-pss",
        "1.2.840.10045.4.1" => "ecdsa-with-SHA1",
        "1.2.840.10045.4.3.2" => "ecdsa-with-SHA256",
        "1.2.840.10045.4.3.3" => "ecdsa-with-SHA384",
        "1.2.840.10045.4.3.4" => "ecdsa-with-SHA512",
        "1.2.840.10040.4.3" => "dsa-with-sha1",
        "1.3.101.112" => "ed25519",
        other => return other.to_owned(),
    }
    .to_owned()
}

/// Is this signature algorithm SHA-1 or MD5 based?
pub fn weak_signature(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("sha1") || n.contains("md5") || n.contains("md2")
}

fn curve_name(oid: &str) -> &'static str {
    match oid {
        "1.2.840.10045.3.1.7" => "P-256",
        "1.3.132.0.34" => "P-384",
        "1.3.132.0.35" => "P-521",
        "1.3.132.0.10" => "secp256k1",
        _ => "EC",
    }
}

/// Judges `chain` (DER, leaf first) for `host` at `now`, trusting `lab_root` (DER)
/// when given, else the Mozilla root store.
pub fn analyse(chain: &[Vec<u8>], host: &str, lab_root: Option<&[u8]>, now: OffsetDateTime) -> CertReport {
    let mut report = CertReport {
        subject: String::new(),
        issuer: String::new(),
        organization: None,
        names: Vec::new(),
        not_before: String::new(),
        not_after: String::new(),
        days_left: 0,
        validity_days: 0,
        key: String::new(),
        key_bits: 0,
        key_is_rsa: false,
        signatures: Vec::new(),
        chain_length: chain.len(),
        self_signed: false,
        untrusted: None,
        issuer_missing: false,
        hostname_matches: false,
        embedded_scts: false,
        unparsed: None,
    };
    let Some(leaf_der) = chain.first() else {
        report.unparsed = Some("no certificate".into());
        return report;
    };
    let leaf = match X509Certificate::from_der(leaf_der) {
        Ok((_, c)) => c,
        Err(e) => {
            report.unparsed = Some(e.to_string());
            return report;
        }
    };
    report.subject = leaf.subject().to_string();
    report.issuer = leaf.issuer().to_string();
    let org = |n: &x509_parser::x509::X509Name<'_>| {
        n.iter_organization().next().and_then(|a| a.as_str().ok()).and_then(crate::identity::clean)
    };
    report.organization = org(leaf.subject()).filter(|o| org(leaf.issuer()).as_ref() != Some(o));
    let validity = leaf.validity();
    let (nb, na) = (validity.not_before.to_datetime(), validity.not_after.to_datetime());
    report.not_before = model::timefmt::rfc3339(nb);
    report.not_after = model::timefmt::rfc3339(na);
    report.days_left = (na - now).whole_days();
    report.validity_days = (na - nb).whole_days();
    if let Ok(Some(san)) = leaf.subject_alternative_name() {
        for g in &san.value.general_names {
            if let GeneralName::DNSName(n) = g {
                report.names.push(n.to_ascii_lowercase());
            }
        }
    }
    report.hostname_matches = report.names.iter().any(|n| name_matches(n, host));
    match leaf.public_key().parsed() {
        Ok(PublicKey::RSA(rsa)) => {
            report.key_bits = super::wire::bit_length(rsa.modulus);
            report.key_is_rsa = true;
            report.key = format!("RSA {}", report.key_bits);
        }
        Ok(PublicKey::EC(_)) => {
            let curve = leaf
                .public_key()
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map_or("EC", |oid| curve_name(&oid.to_id_string()));
            report.key_bits = match curve {
                "P-384" => 384,
                "P-521" => 521,
                "P-256" | "secp256k1" => 256,
                _ => leaf.public_key().parsed().map(|k| k.key_size()).unwrap_or(0),
            };
            report.key = format!("EC {curve}");
        }
        Ok(other) => {
            report.key_bits = other.key_size();
            report.key = format!("other ({} bits)", report.key_bits);
        }
        Err(e) => report.key = format!("unparsed key ({e})"),
    }
    report.embedded_scts = leaf.extensions().iter().any(|e| e.oid.to_id_string() == OID_SCT_LIST);
    use x509_parser::extensions::ParsedExtension;
    let aki = leaf.extensions().iter().find_map(|e| match e.parsed_extension() {
        ParsedExtension::AuthorityKeyIdentifier(a) => a.key_identifier.as_ref().map(|k| k.0.to_vec()),
        _ => None,
    });
    let ski = leaf.extensions().iter().find_map(|e| match e.parsed_extension() {
        ParsedExtension::SubjectKeyIdentifier(k) => Some(k.0.to_vec()),
        _ => None,
    });
    report.self_signed = leaf.subject() == leaf.issuer() && (aki.is_none() || aki == ski);
    // Signatures of the leaf and of every intermediate sent (a root's own is not used).
    report.signatures.push(signature_name(&leaf.signature_algorithm.algorithm.to_id_string()));
    let mut issuer_sent = false;
    for der in chain.iter().skip(1) {
        if let Ok((_, c)) = X509Certificate::from_der(der) {
            if c.subject() == leaf.issuer() {
                issuer_sent = true;
            }
            if c.subject() != c.issuer() {
                report.signatures.push(signature_name(&c.signature_algorithm.algorithm.to_id_string()));
            }
        }
    }
    report.issuer_missing = !report.self_signed && !issuer_sent;
    // The path check at a time inside the leaf's validity: expiry is judged above.
    let at = now.clamp(nb, na);
    let weak_signed = report.signatures.iter().any(|s| weak_signature(s));
    report.untrusted = trust(chain, host, lab_root, at, weak_signed).err();
    report
}

fn roots(lab_root: Option<&[u8]>) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    match lab_root {
        Some(der) => {
            let _ = roots.add(CertificateDer::from(der.to_vec()));
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    roots
}

/// webpki's verdict on the path. A name mismatch is not a path problem, and neither is
/// a SHA-1/MD5 signature webpki refuses to check when `weak_signed` (that is
/// `certificate_info.weak_signature`'s finding).
fn trust(
    chain: &[Vec<u8>],
    host: &str,
    lab_root: Option<&[u8]>,
    at: OffsetDateTime,
    weak_signed: bool,
) -> Result<(), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots(lab_root)), provider)
        .build()
        .map_err(|e| e.to_string())?;
    let leaf = CertificateDer::from(chain[0].clone());
    let intermediates: Vec<CertificateDer<'_>> =
        chain.iter().skip(1).map(|c| CertificateDer::from(c.clone())).collect();
    let name = ServerName::try_from(host.to_owned())
        .unwrap_or_else(|_| ServerName::try_from("invalid.invalid").expect("valid"));
    let secs = u64::try_from(at.unix_timestamp()).unwrap_or(0);
    match verifier.verify_server_cert(
        &leaf,
        &intermediates,
        &name,
        &[],
        UnixTime::since_unix_epoch(Duration::from_secs(secs)),
    ) {
        Ok(_) => Ok(()),
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. },
        )) => Ok(()),
        #[allow(deprecated)]
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::UnsupportedSignatureAlgorithm
            | rustls::CertificateError::UnsupportedSignatureAlgorithmContext { .. },
        )) if weak_signed => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// What a rustls handshake saw.
pub struct RustlsSeen {
    pub chain: Vec<Vec<u8>>,
    pub stapled: bool,
    pub alpn: Option<Vec<u8>>,
}

/// A full TLS 1.2/1.3 handshake by rustls on `stream`, accepting any certificate (it is
/// judged by [`analyse`]): the chain, a stapled OCSP response, the ALPN protocol.
pub async fn rustls_handshake(
    stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    sni: &str,
    timeout: Duration,
) -> Result<RustlsSeen, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let recorder = Arc::new(Recorder { provider: provider.clone(), seen: std::sync::Mutex::default() });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(recorder.clone())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = ServerName::try_from(sni.to_owned()).map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tls = tokio::time::timeout(timeout, connector.connect(name, stream))
        .await
        .map_err(|_| "handshake timed out".to_owned())?
        .map_err(|e| e.to_string())?;
    let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    let (chain, stapled) = recorder.seen.lock().map(|s| s.clone()).unwrap_or_default();
    Ok(RustlsSeen { chain, stapled, alpn })
}

#[derive(Debug)]
struct Recorder {
    provider: Arc<rustls::crypto::CryptoProvider>,
    seen: std::sync::Mutex<(Vec<Vec<u8>>, bool)>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chain = std::iter::once(end_entity).chain(intermediates).map(|c| c.to_vec()).collect();
        if let Ok(mut seen) = self.seen.lock() {
            *seen = (chain, !ocsp.is_empty());
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_one_label() {
        assert!(name_matches("*.example.test", "www.example.test"));
        assert!(!name_matches("*.example.test", "example.test"));
        assert!(!name_matches("*.example.test", "a.b.example.test"));
        assert!(name_matches("WWW.example.test.", "www.example.test"));
        assert!(!name_matches("www.example.test", "ww.example.test"));
        assert!(weak_signature("sha1WithRSAEncryption") && !weak_signature("ecdsa-with-SHA256"));
    }

    #[test]
    fn garbage_is_reported_not_panicked() {
        let r = analyse(&[vec![0x30, 0x03, 1, 2, 3]], "x.test", None, OffsetDateTime::now_utc());
        assert!(r.unparsed.is_some());
        let r = analyse(&[], "x.test", None, OffsetDateTime::now_utc());
        assert!(r.unparsed.is_some());
    }
}
