//! The lab certificate authority and the certificate variants it issues.

use p256::ecdsa::signature::hazmat::PrehashSigner;
use p256::pkcs8::DecodePrivateKey;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, PKCS_RSA_SHA256, PublicKeyData, SerialNumber, SignatureAlgorithm,
};
use ring::rand::{SecureRandom, SystemRandom};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use serde::Deserialize;
use time::{Duration, OffsetDateTime};

use crate::TlsError;
use crate::der;

/// Lab-only RSA 2048 key (public test material, see `keys/README.md`).
const RSA2048_KEY_PEM: &[u8] = include_bytes!("../keys/lab-rsa2048.key.pem");
const RSA2048_PUB_PEM: &[u8] = include_bytes!("../keys/lab-rsa2048.pub.pem");
/// Lab-only RSA 1024 key (public test material, see `keys/README.md`).
const RSA1024_KEY_PEM: &[u8] = include_bytes!("../keys/lab-rsa1024.key.pem");
const RSA1024_PUB_PEM: &[u8] = include_bytes!("../keys/lab-rsa1024.pub.pem");

/// The only name in a [`CertVariant::WrongHost`] certificate.
pub const WRONG_HOST_NAME: &str = "wrong-host.invalid.test";

/// `AlgorithmIdentifier { ecdsa-with-SHA1 }` (1.2.840.10045.4.1, no parameters).
const ECDSA_WITH_SHA1: &[u8] = &[0x30, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01];

/// The shape of a leaf certificate the lab CA issues.
///
/// Every variant's leaf key is a fresh ECDSA P-256 key except `Rsa1024` and `Rsa2048`,
/// whose keys are fixed lab test keys embedded in the crate (RSA key generation is too
/// slow for a lab that starts in under a second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CertVariant {
    /// Signed by the intermediate; served chain leaf + intermediate; valid from 30 days
    /// ago for 90 days (so it expires in 60 days, clear of expiry warnings).
    Valid,
    /// Valid 120 days ago until 30 days ago.
    Expired,
    /// Valid from 30 days ahead.
    NotYetValid,
    /// Expires in 10 days (inside a 14-day warning window).
    #[serde(rename = "expires_in_14_days")]
    ExpiresIn14Days,
    /// Expires in 25 days (inside a 30-day window, outside a 14-day one).
    #[serde(rename = "expires_in_30_days")]
    ExpiresIn30Days,
    /// Self-signed leaf, not from the lab CA.
    SelfSigned,
    /// Valid chain, but the only name is [`WRONG_HOST_NAME`].
    WrongHost,
    /// Leaf with a 1024-bit RSA key, signed by the intermediate. Legacy responder only.
    Rsa1024,
    /// Leaf signed by the intermediate with `ecdsa-with-SHA1` (a real signature).
    Sha1Signature,
    /// Valid chain, 825 days of validity (more than the 398 browsers accept).
    LongValidity,
    /// Signed by the intermediate, but the served chain is the leaf alone.
    MissingIntermediate,
    /// A good leaf with a 2048-bit RSA key (for RSA-authenticated suites: `TLS_RSA_*`,
    /// `*_DHE_RSA_*`, `*_ECDHE_RSA_*`, RSA EXPORT). Addition to the original list.
    Rsa2048,
}

/// The kind of key in a leaf certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    EcdsaP256,
    Rsa1024,
    Rsa2048,
}

impl CertVariant {
    /// All variants, in declaration order.
    pub const ALL: [CertVariant; 12] = [
        CertVariant::Valid,
        CertVariant::Expired,
        CertVariant::NotYetValid,
        CertVariant::ExpiresIn14Days,
        CertVariant::ExpiresIn30Days,
        CertVariant::SelfSigned,
        CertVariant::WrongHost,
        CertVariant::Rsa1024,
        CertVariant::Sha1Signature,
        CertVariant::LongValidity,
        CertVariant::MissingIntermediate,
        CertVariant::Rsa2048,
    ];

    /// Whether a modern (rustls/ring) host can serve this certificate.
    ///
    /// Every variant but `Rsa1024` can: rustls does not check its own certificate's
    /// dates, names or signature algorithm, and only needs the leaf key to sign the
    /// handshake. ring refuses RSA keys under 2048 bits, so an `Rsa1024` host must be a
    /// legacy one (the legacy responder never signs with the leaf key).
    pub fn modern_servable(self) -> bool {
        self != CertVariant::Rsa1024
    }

    /// The leaf's key type.
    pub fn key_type(self) -> KeyType {
        match self {
            CertVariant::Rsa1024 => KeyType::Rsa1024,
            CertVariant::Rsa2048 => KeyType::Rsa2048,
            _ => KeyType::EcdsaP256,
        }
    }

    /// (notBefore, notAfter) for a leaf issued at `now`.
    fn validity(self, now: OffsetDateTime) -> (OffsetDateTime, OffsetDateTime) {
        let days = Duration::days;
        match self {
            CertVariant::Expired => (now - days(120), now - days(30)),
            CertVariant::NotYetValid => (now + days(30), now + days(120)),
            CertVariant::ExpiresIn14Days => (now - days(80), now + days(10)),
            CertVariant::ExpiresIn30Days => (now - days(65), now + days(25)),
            CertVariant::LongValidity => (now - days(1), now - days(1) + days(825)),
            _ => (now - days(30), now + days(60)),
        }
    }
}

/// A certificate chain as served and the leaf's private key.
#[derive(Debug)]
pub struct IssuedCert {
    /// As served, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key (PKCS#8).
    pub key: PrivateKeyDer<'static>,
    pub variant: CertVariant,
}

impl Clone for IssuedCert {
    fn clone(&self) -> Self {
        IssuedCert { chain: self.chain.clone(), key: self.key.clone_key(), variant: self.variant }
    }
}

impl IssuedCert {
    /// The leaf certificate (DER).
    pub fn leaf(&self) -> Option<&CertificateDer<'static>> {
        self.chain.first()
    }
}

/// A subject public key rcgen can put in a certificate without holding the private key.
struct RsaPublicKey {
    bits: Vec<u8>,
}

impl PublicKeyData for RsaPublicKey {
    fn der_bytes(&self) -> &[u8] {
        &self.bits
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        // Only its SubjectPublicKeyInfo algorithm (rsaEncryption, NULL) is used.
        &PKCS_RSA_SHA256
    }
}

/// An embedded RSA lab key: the public key bits and the PKCS#8 private key.
fn embedded_rsa(key_pem: &[u8], pub_pem: &[u8]) -> Result<(RsaPublicKey, PrivateKeyDer<'static>), TlsError> {
    let key = PrivatePkcs8KeyDer::from_pem_slice(key_pem).map_err(|_| TlsError::EmbeddedKey("RSA private key PEM"))?;
    let spki = SubjectPublicKeyInfoDer::from_pem_slice(pub_pem).map_err(|_| TlsError::EmbeddedKey("RSA public PEM"))?;
    let bits = der::spki_key_bits(&spki)?.to_vec();
    Ok((RsaPublicKey { bits }, PrivateKeyDer::Pkcs8(key)))
}

/// The embedded 512-bit RSA key of EXPORT suites: (modulus, exponent).
pub(crate) fn export_rsa_public() -> Result<(Vec<u8>, Vec<u8>), TlsError> {
    const PUB: &[u8] = include_bytes!("../keys/lab-rsa512.pub.pem");
    let spki = SubjectPublicKeyInfoDer::from_pem_slice(PUB).map_err(|_| TlsError::EmbeddedKey("RSA 512 PEM"))?;
    let (n, e) = der::rsa_public_parts(der::spki_key_bits(&spki)?)?;
    Ok((n.to_vec(), e.to_vec()))
}

/// A lab certificate authority made at start: an ECDSA P-256 root and an intermediate,
/// both in memory only.
pub struct LabCa {
    root_der: CertificateDer<'static>,
    root_pem: String,
    intermediate_der: CertificateDer<'static>,
    intermediate: Issuer<'static, KeyPair>,
    /// The intermediate's key as PKCS#8, for the SHA-1 re-signature.
    intermediate_pkcs8: Vec<u8>,
    rng: SystemRandom,
}

impl std::fmt::Debug for LabCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LabCa").field("root", &"Rampart Lab Root CA").finish_non_exhaustive()
    }
}

fn name(cn: &str) -> DistinguishedName {
    named(cn, "Rampart Lab")
}

fn named(cn: &str, organization: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, organization);
    dn.push(DnType::CommonName, cn);
    dn
}

fn random_serial(rng: &SystemRandom) -> Result<SerialNumber, TlsError> {
    let mut serial = [0u8; 16];
    rng.fill(&mut serial).map_err(|_| TlsError::Crypto("random serial"))?;
    serial[0] = (serial[0] & 0x7f) | 0x40; // positive, 16 octets
    Ok(SerialNumber::from_slice(&serial))
}

impl LabCa {
    /// Makes the root and the intermediate (two P-256 keys: milliseconds).
    pub fn new() -> Result<LabCa, TlsError> {
        let rng = SystemRandom::new();
        let now = OffsetDateTime::now_utc();

        let root_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut root_params = CertificateParams::default();
        root_params.distinguished_name = name("Rampart Lab Root CA");
        root_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        root_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        root_params.not_before = now - Duration::days(365);
        root_params.not_after = now + Duration::days(3650);
        root_params.serial_number = Some(random_serial(&rng)?);
        let root_cert = root_params.self_signed(&root_key)?;
        let root = Issuer::new(root_params, root_key);

        let inter_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut inter_params = CertificateParams::default();
        inter_params.distinguished_name = name("Rampart Lab Intermediate CA");
        inter_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        inter_params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        inter_params.not_before = now - Duration::days(365);
        inter_params.not_after = now + Duration::days(1825);
        inter_params.serial_number = Some(random_serial(&rng)?);
        inter_params.use_authority_key_identifier_extension = true;
        let inter_cert = inter_params.signed_by(&inter_key, &root)?;
        let intermediate_pkcs8 = inter_key.serialize_der();

        Ok(LabCa {
            root_pem: root_cert.pem(),
            root_der: root_cert.der().clone(),
            intermediate_der: inter_cert.der().clone(),
            intermediate: Issuer::new(inter_params, inter_key),
            intermediate_pkcs8,
            rng,
        })
    }

    /// The trust anchor a scanner loads in lab mode (PEM).
    pub fn root_pem(&self) -> String {
        self.root_pem.clone()
    }

    /// The trust anchor (DER).
    pub fn root_der(&self) -> Vec<u8> {
        self.root_der.to_vec()
    }

    /// The intermediate CA certificate (DER), which signs every leaf but `SelfSigned`.
    pub fn intermediate_der(&self) -> Vec<u8> {
        self.intermediate_der.to_vec()
    }

    /// Issues a leaf for `names` (DNS names or IP addresses; the first is also the CN) in
    /// the shape `variant` asks for.
    pub fn issue(&self, names: &[String], variant: CertVariant) -> Result<IssuedCert, TlsError> {
        self.issue_to(names, variant, None)
    }

    /// [`LabCa::issue`] to `organization` (the subject's `O=`, as in an OV certificate;
    /// `None`: the lab's own name, as on every lab leaf).
    pub fn issue_to(
        &self,
        names: &[String],
        variant: CertVariant,
        organization: Option<&str>,
    ) -> Result<IssuedCert, TlsError> {
        if names.is_empty() {
            return Err(TlsError::NoNames);
        }
        let names: Vec<String> =
            if variant == CertVariant::WrongHost { vec![WRONG_HOST_NAME.to_owned()] } else { names.to_vec() };
        let (not_before, not_after) = variant.validity(OffsetDateTime::now_utc());
        let mut params = CertificateParams::new(names.clone())?;
        params.distinguished_name = named(&names[0], organization.unwrap_or("Rampart Lab"));
        params.not_before = not_before;
        params.not_after = not_after;
        params.serial_number = Some(random_serial(&self.rng)?);
        params.is_ca = IsCa::ExplicitNoCa;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = match variant.key_type() {
            KeyType::EcdsaP256 => vec![KeyUsagePurpose::DigitalSignature],
            KeyType::Rsa1024 | KeyType::Rsa2048 => {
                vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment]
            }
        };
        params.use_authority_key_identifier_extension = variant != CertVariant::SelfSigned;

        let (leaf, key) = match variant {
            CertVariant::SelfSigned => {
                let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
                (params.self_signed(&key)?.der().clone(), pkcs8(&key))
            }
            CertVariant::Rsa1024 | CertVariant::Rsa2048 => {
                let (public, key) = if variant == CertVariant::Rsa1024 {
                    embedded_rsa(RSA1024_KEY_PEM, RSA1024_PUB_PEM)?
                } else {
                    embedded_rsa(RSA2048_KEY_PEM, RSA2048_PUB_PEM)?
                };
                (params.signed_by(&public, &self.intermediate)?.der().clone(), key)
            }
            CertVariant::Sha1Signature => {
                let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
                let cert = params.signed_by(&key, &self.intermediate)?;
                let resigned = resign_ecdsa_sha1(cert.der(), &self.intermediate_pkcs8)?;
                (CertificateDer::from(resigned), pkcs8(&key))
            }
            _ => {
                let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
                (params.signed_by(&key, &self.intermediate)?.der().clone(), pkcs8(&key))
            }
        };

        let chain = match variant {
            CertVariant::SelfSigned | CertVariant::MissingIntermediate => vec![leaf],
            _ => vec![leaf, self.intermediate_der.clone()],
        };
        Ok(IssuedCert { chain, key, variant })
    }
}

fn pkcs8(key: &KeyPair) -> PrivateKeyDer<'static> {
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()))
}

/// Rewrites a certificate's two signatureAlgorithm fields to `ecdsa-with-SHA1` and signs
/// the new tbsCertificate with SHA-1 by the issuer's P-256 key (`issuer_pkcs8`).
///
/// rcgen cannot sign with SHA-1, so the certificate is taken apart at the DER level:
/// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }` and
/// `tbsCertificate ::= SEQUENCE { [0] version, serialNumber, signature, ... }`.
pub(crate) fn resign_ecdsa_sha1(cert_der: &[u8], issuer_pkcs8: &[u8]) -> Result<Vec<u8>, TlsError> {
    let (cert, _) = der::expect_tlv(cert_der, 0x30)?;
    let (tbs, _) = der::expect_tlv(cert.content, 0x30)?;

    let mut fields = Vec::with_capacity(tbs.content.len());
    let (first, rest) = der::read_tlv(tbs.content)?;
    let rest = if first.tag == 0xa0 {
        fields.extend_from_slice(first.raw);
        let (serial, rest) = der::expect_tlv(rest, 0x02)?;
        fields.extend_from_slice(serial.raw);
        rest
    } else {
        fields.extend_from_slice(first.raw);
        rest
    };
    let (_old_alg, rest) = der::expect_tlv(rest, 0x30)?;
    fields.extend_from_slice(ECDSA_WITH_SHA1);
    fields.extend_from_slice(rest);
    let new_tbs = der::tlv(0x30, &fields);

    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &new_tbs);
    let signature = ecdsa_sha1_prehash_sign(issuer_pkcs8, digest.as_ref())?;
    let mut bit_string = Vec::with_capacity(signature.len() + 1);
    bit_string.push(0);
    bit_string.extend_from_slice(&signature);

    let mut body = new_tbs;
    body.extend_from_slice(ECDSA_WITH_SHA1);
    der::write_tlv(0x03, &bit_string, &mut body);
    Ok(der::tlv(0x30, &body))
}

/// An ECDSA P-256 signature (DER `Ecdsa-Sig-Value`) over a precomputed digest, e.g. SHA-1,
/// which ring cannot sign with.
pub(crate) fn ecdsa_sha1_prehash_sign(pkcs8: &[u8], digest: &[u8]) -> Result<Vec<u8>, TlsError> {
    let key = p256::ecdsa::SigningKey::from_pkcs8_der(pkcs8).map_err(|_| TlsError::Crypto("P-256 key for SHA-1"))?;
    let signature: p256::ecdsa::Signature =
        key.sign_prehash(digest).map_err(|_| TlsError::Crypto("ECDSA prehash signature"))?;
    Ok(signature.to_der().as_bytes().to_vec())
}
