//! DKIM key records (RFC 6376 §3.6.1, tag-list syntax §3.2; key sizes RFC 8301;
//! Ed25519 RFC 8463). The parser is total over untrusted TXT data: it never panics and
//! rejects records over [`MAX_RECORD_LEN`] bytes or [`MAX_TAGS`] tags.
//!
//! Choices:
//! - `v`, when present, must be the first tag and exactly `DKIM1`.
//! - `k` must be `rsa` or `ed25519` (any case); another key type is an error
//!   ([`DkimError::UnknownKeyType`]), as the `dkim.syntax_error` verdict wants, so
//!   [`KeyType::Other`] is never produced by [`parse`].
//! - An RSA `p=` is a DER SubjectPublicKeyInfo or, as some publishers use, a bare
//!   PKCS#1 RSAPublicKey; an Ed25519 `p=` is the raw 32-byte key (or, leniently, an
//!   Ed25519 SubjectPublicKeyInfo).
//! - Unknown tags are ignored; a tag given twice is an error (§3.2); empty tag-specs
//!   (`;;`, a trailing `;`) are tolerated.

#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use x509_parser::oid_registry::{OID_PKCS1_RSAENCRYPTION, OID_SIG_ED25519};
use x509_parser::prelude::FromDer;
use x509_parser::public_key::{PublicKey, RSAPublicKey};
use x509_parser::x509::SubjectPublicKeyInfo;

/// The longest record accepted, in bytes.
pub const MAX_RECORD_LEN: usize = 64 * 1024;
/// The most tags accepted in one record.
pub const MAX_TAGS: usize = 64;

/// A parsed DKIM key record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DkimKey {
    /// `v`, when given (always `DKIM1`).
    pub version: Option<String>,
    /// `k`, default rsa.
    pub key_type: KeyType,
    /// `h`: the hash algorithms allowed, when restricted.
    pub hashes: Option<Vec<String>>,
    /// `t`: flags such as `y` (testing) and `s` (no subdomains).
    pub flags: Vec<String>,
    /// `s`: service types, when given (`*`, `email`).
    pub services: Option<Vec<String>>,
    /// `p=` is empty: the key is revoked.
    pub revoked: bool,
    /// The decoded `p=` (empty when revoked).
    pub public_key: Vec<u8>,
    /// RSA: the modulus length in bits (leading zeros not counted); Ed25519: 256;
    /// `None` when revoked.
    pub key_bits: Option<u32>,
}

impl DkimKey {
    /// `t=y`: the domain is testing DKIM; verifiers treat failures as unsigned.
    pub fn testing(&self) -> bool {
        self.flags.iter().any(|f| f.eq_ignore_ascii_case("y"))
    }

    /// `h=` is given and lists only `sha1`.
    pub fn sha1_only(&self) -> bool {
        self.hashes.as_ref().is_some_and(|h| !h.is_empty() && h.iter().all(|a| a.eq_ignore_ascii_case("sha1")))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyType {
    Rsa,
    Ed25519,
    /// Not produced by [`parse`], which rejects unknown key types; kept for callers that
    /// describe keys of other origins.
    Other(String),
}

/// Why a key record does not parse. Tag positions count from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DkimError {
    #[error("record is {len} bytes long, over the limit of {MAX_RECORD_LEN}")]
    TooLong { len: usize },
    #[error("record has more than {MAX_TAGS} tags")]
    TooManyTags,
    #[error("empty record")]
    Empty,
    #[error("malformed tag {position} \"{text}\": {reason}")]
    MalformedTag { position: usize, text: String, reason: &'static str },
    #[error("tag \"{name}\" given twice")]
    DuplicateTag { name: String },
    #[error("v must be the first tag")]
    VersionNotFirst,
    #[error("unsupported version v={0} (must be DKIM1)")]
    UnsupportedVersion(String),
    #[error("unknown key type k={0} (must be rsa or ed25519)")]
    UnknownKeyType(String),
    #[error("the p= tag (public key) is missing")]
    MissingKey,
    #[error("p= is not valid base64: {0}")]
    InvalidBase64(String),
    #[error("p= is not a valid {key_type} public key: {reason}")]
    InvalidKey { key_type: &'static str, reason: &'static str },
    #[error("invalid {tag}= value \"{value}\": {reason}")]
    InvalidValue { tag: &'static str, value: String, reason: &'static str },
}

const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Parses a DKIM key record (the TXT strings already concatenated).
pub fn parse(record: &str) -> Result<DkimKey, DkimError> {
    if record.len() > MAX_RECORD_LEN {
        return Err(DkimError::TooLong { len: record.len() });
    }
    let tags = tag_list(record)?;
    if tags.is_empty() {
        return Err(DkimError::Empty);
    }
    let value_of = |tag: &str| tags.iter().find(|(n, _)| *n == tag).map(|(_, v)| *v);

    let version = match tags.iter().position(|(n, _)| *n == "v") {
        None => None,
        Some(0) => {
            let v = value_of("v").unwrap_or_default();
            if v != "DKIM1" {
                return Err(DkimError::UnsupportedVersion(v.to_string()));
            }
            Some(v.to_string())
        }
        Some(_) => return Err(DkimError::VersionNotFirst),
    };
    let key_type = match value_of("k") {
        None => KeyType::Rsa,
        Some(k) if k.eq_ignore_ascii_case("rsa") => KeyType::Rsa,
        Some(k) if k.eq_ignore_ascii_case("ed25519") => KeyType::Ed25519,
        Some(k) => return Err(DkimError::UnknownKeyType(k.to_string())),
    };
    let hashes = value_of("h").map(|v| colon_list("h", v)).transpose()?;
    let services = value_of("s").map(|v| colon_list("s", v)).transpose()?;
    let flags = value_of("t").map(|v| colon_list("t", v)).transpose()?.unwrap_or_default();

    let p = value_of("p").ok_or(DkimError::MissingKey)?;
    let p: String = p.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let (public_key, key_bits) = if p.is_empty() {
        (Vec::new(), None)
    } else {
        let der = BASE64.decode(p.as_bytes()).map_err(|e| DkimError::InvalidBase64(e.to_string()))?;
        let bits = match key_type {
            KeyType::Ed25519 => ed25519_bits(&der)?,
            _ => rsa_bits(&der)?,
        };
        (der, Some(bits))
    };
    Ok(DkimKey { version, key_type, hashes, flags, services, revoked: public_key.is_empty(), public_key, key_bits })
}

/// The tag-list (RFC 6376 §3.2): `(name, value)` with white space around the value
/// removed. Names are case-sensitive.
fn tag_list(record: &str) -> Result<Vec<(&str, &str)>, DkimError> {
    let mut tags: Vec<(&str, &str)> = Vec::new();
    let mut position = 0;
    for spec in record.split(';') {
        let spec = spec.trim_matches(|c: char| c.is_ascii_whitespace());
        if spec.is_empty() {
            continue;
        }
        position += 1;
        if position > MAX_TAGS {
            return Err(DkimError::TooManyTags);
        }
        let malformed = |reason| DkimError::MalformedTag { position, text: spec.to_string(), reason };
        let (name, value) = spec.split_once('=').ok_or_else(|| malformed("no '='"))?;
        let name = name.trim_end_matches(|c: char| c.is_ascii_whitespace());
        let value = value.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let mut chars = name.chars();
        if !(chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(malformed("a tag name is a letter followed by letters, digits or '_'"));
        }
        if value.chars().any(|c| !(matches!(c, '!'..='~') || c.is_ascii_whitespace())) {
            return Err(malformed("a value holds only printable ASCII and white space"));
        }
        if tags.iter().any(|(n, _)| *n == name) {
            return Err(DkimError::DuplicateTag { name: name.to_string() });
        }
        tags.push((name, value));
    }
    Ok(tags)
}

/// `x *( [FWS] ":" [FWS] x )`: non-empty items without white space.
fn colon_list(tag: &'static str, value: &str) -> Result<Vec<String>, DkimError> {
    value
        .split(':')
        .map(|item| {
            let item = item.trim_matches(|c: char| c.is_ascii_whitespace());
            if item.is_empty() || item.contains(|c: char| c.is_ascii_whitespace()) {
                Err(DkimError::InvalidValue {
                    tag,
                    value: value.to_string(),
                    reason: "empty or spaced item in the list",
                })
            } else {
                Ok(item.to_string())
            }
        })
        .collect()
}

/// The modulus length of an RSA key given as a SubjectPublicKeyInfo or as a bare
/// PKCS#1 RSAPublicKey.
fn rsa_bits(der: &[u8]) -> Result<u32, DkimError> {
    let bad = |reason| DkimError::InvalidKey { key_type: "RSA", reason };
    if let Ok((rest, spki)) = SubjectPublicKeyInfo::from_der(der) {
        if !rest.is_empty() {
            return Err(bad("data after the SubjectPublicKeyInfo"));
        }
        if spki.algorithm.algorithm != OID_PKCS1_RSAENCRYPTION {
            return Err(bad("the SubjectPublicKeyInfo holds a key of another algorithm"));
        }
        return match spki.parsed() {
            Ok(PublicKey::RSA(key)) => modulus_bits(key.modulus).ok_or(bad("the modulus is zero")),
            _ => Err(bad("the SubjectPublicKeyInfo does not hold an RSAPublicKey")),
        };
    }
    match RSAPublicKey::from_der(der) {
        Ok(([], key)) => modulus_bits(key.modulus).ok_or(bad("the modulus is zero")),
        Ok(_) => Err(bad("data after the RSAPublicKey")),
        Err(_) => Err(bad("neither a SubjectPublicKeyInfo nor a PKCS#1 RSAPublicKey")),
    }
}

/// Bits of a big-endian unsigned integer, leading zeros excluded.
fn modulus_bits(modulus: &[u8]) -> Option<u32> {
    let start = modulus.iter().position(|b| *b != 0)?;
    let significant = modulus.get(start..)?;
    let first = significant.first()?;
    let len = u32::try_from(significant.len()).ok()?;
    Some(len.saturating_mul(8).saturating_sub(first.leading_zeros()))
}

fn ed25519_bits(der: &[u8]) -> Result<u32, DkimError> {
    let bad = |reason| DkimError::InvalidKey { key_type: "Ed25519", reason };
    if der.len() == 32 {
        return Ok(256);
    }
    match SubjectPublicKeyInfo::from_der(der) {
        Ok((rest, spki))
            if rest.is_empty()
                && spki.algorithm.algorithm == OID_SIG_ED25519
                && spki.subject_public_key.data.len() == 32 =>
        {
            Ok(256)
        }
        _ => Err(bad("not a 32-byte key")),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Generated with `openssl genrsa <bits> | openssl rsa -pubout -outform DER | base64 -w0`.
    const RSA_512: &str = "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAMHQ/B+wvOkyNK/6mOLg3OpZTQ6GyX4KFd93qPe2+ZHny8zd43blBnyy/nfm6hjen86t+fv9WT0yCQzxX6bHYYsCAwEAAQ==";
    const RSA_1023: &str = "MIGeMA0GCSqGSIb3DQEBAQUAA4GMADCBiAKBgHAuO8+Itn3djhvzCh3g9Qp5VAt5NRFjqAsF8tBM2XWB7I/heSfp45qwkK3V+Q7YXSccKnx0OKYGz5KR8/9jltZnG0HrP6WyYNkQTqJrVGdh3C84eBkHYO+kfARJf9p4XJbqAzX5MMCxS8F3QvpRK7UEIvp9eWn0TIcpHKwHlnzPAgMBAAE=";
    const RSA_1024: &str = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDFpDFhC8394c7Tba2heRDZqx8Z0YF/MKc0ROKp80+VjaKJg+22uW+lgrPfiTp/BKXVbySvbEU04gJdIRvBhLzeYq+S0zL5autQC6j52Q6PSsofATOW2ztVq6xo3L3bOdCG4TePGP5ugMr8BK2AJ7voih6yXn0wFyD451xGGqT6EwIDAQAB";
    const RSA_2048: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAyLoJzr7bGtHK2vjVxDksSLKxOdvJaysIVqIur+4CQlcU5z9qPrXKlEUbD4Jk8YRIlNOLb7VuDAsMrgCc95mHlE6B9UvsQ7U9qHFAl1juWSH0puTn8enw068feMK3O7BWHFYYZFM5vQRIjz1MEVqaJsFDZNAuDg4vmTPb7gkNTaATlQmAqpi1QRYHOQV+kRmIHCB7V+s12RzMC7kpZ4E8OJtBs+X1VcPZuiyqqMhkzpBB2V5iuui5M+aTqjnDbdp6RRwIGV+rEyvzCfxjgKWqV+cld7rogpklbkxrdCuAJNf+Ldij43DTuAeZKfwS/5caLSk14aIPu9UyVdDnwRegtwIDAQAB";
    // `openssl rsa -RSAPublicKey_out -outform DER`: a bare PKCS#1 RSAPublicKey.
    const RSA_PKCS1_1024: &str = "MIGJAoGBAOnfqOfHhQiypXRm+YXwv5jahKi3NI+plI2GM8Zza2mpgUUVl13AFPIeGYMDuD1/MA6+py976V1Miw0QNQAdcI2Iba0s/FhI5afAHvYXSdjaUfegPxYrIaLvQLC7P43s1ZVO7T9DPW7nBeAvesWh/45wR0sNR0ejNnmXQHnbgAlXAgMBAAE=";
    // `openssl genpkey -algorithm ed25519 | openssl pkey -pubout -outform DER`: the
    // SubjectPublicKeyInfo and its last 32 bytes (the raw key RFC 8463 publishes).
    const ED25519_SPKI: &str = "MCowBQYDK2VwAyEAWAkJ28D2LzZURO9nAuyYNavWRpU7fEL+Yup387ySNek=";
    const ED25519_RAW: &str = "WAkJ28D2LzZURO9nAuyYNavWRpU7fEL+Yup387ySNek=";
    // A P-256 SubjectPublicKeyInfo: a valid key, but not one DKIM can use as RSA.
    const EC_P256: &str = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEt4xWohCC3T6DiAu/9QGD6DgM8lHf7jdW68LdoEtj8dnMQpq2NVmk3Wedn1RaPBUG8Nl7QZ749Nm6FW6ilS51bQ==";

    fn ok(record: &str) -> DkimKey {
        match parse(record) {
            Ok(k) => k,
            Err(e) => panic!("{record:?} should parse: {e}"),
        }
    }

    #[test]
    fn key_sizes() {
        for (p, bits) in [(RSA_512, 512), (RSA_1023, 1023), (RSA_1024, 1024), (RSA_2048, 2048), (RSA_PKCS1_1024, 1024)]
        {
            let key = ok(&format!("v=DKIM1; k=rsa; p={p}"));
            assert_eq!(key.key_bits, Some(bits), "{p}");
            assert_eq!(key.key_type, KeyType::Rsa);
            assert!(!key.revoked);
            assert_eq!(key.public_key, BASE64.decode(p).unwrap());
            // k defaults to rsa; v is optional.
            assert_eq!(ok(&format!("p={p}")).key_bits, Some(bits));
        }
        for p in [ED25519_RAW, ED25519_SPKI] {
            let key = ok(&format!("v=DKIM1; k=ed25519; p={p}"));
            assert_eq!((key.key_type, key.key_bits), (KeyType::Ed25519, Some(256)));
        }
    }

    #[test]
    fn real_world_records() {
        // Google-style: a 2048-bit key split over two TXT strings (concatenated), with
        // folding white space inside p=.
        let (a, b) = RSA_2048.split_at(200);
        let key = ok(&format!("v=DKIM1; k=rsa; p={a}{b}"));
        assert_eq!(key.key_bits, Some(2048));
        let key = ok(&format!("v=DKIM1;\r\n\tk=rsa;\r\n\tp={a}\r\n\t {b}"));
        assert_eq!(key.key_bits, Some(2048));
        assert_eq!(key.version.as_deref(), Some("DKIM1"));
        assert!(!key.testing() && !key.sha1_only());
        assert_eq!((key.hashes.as_ref(), key.services.as_ref()), (None, None));

        // Microsoft 365 selector1: v, k, p and an n= note.
        let key = ok(&format!("v=DKIM1; k=rsa; p={RSA_1024}; n=1024,1452627113,1"));
        assert_eq!(key.key_bits, Some(1024));

        // Mailchimp/Mandrill style with h= and s=, trailing ';'.
        let key = ok(&format!("k=rsa; h=sha256; s=email; t=s; p={RSA_2048};"));
        assert_eq!(key.hashes, Some(vec!["sha256".to_string()]));
        assert_eq!(key.services, Some(vec!["email".to_string()]));
        assert_eq!(key.flags, vec!["s".to_string()]);
        assert!(!key.testing());

        let key = ok(&format!("v=DKIM1; k=rsa; t=y : s; h=sha1; p={RSA_1024}"));
        assert!(key.testing());
        assert!(key.sha1_only());
        assert_eq!(key.flags, vec!["y".to_string(), "s".to_string()]);
        assert!(!ok(&format!("h=sha1:sha256; p={RSA_1024}")).sha1_only());

        // Revoked keys.
        for record in ["v=DKIM1; k=rsa; p=", "v=DKIM1; p=;", "p= ", "v=DKIM1; k=ed25519; p="] {
            let key = ok(record);
            assert!(key.revoked, "{record}");
            assert_eq!((key.public_key.len(), key.key_bits), (0, None), "{record}");
        }

        // Unknown tags are ignored; padding is optional.
        let key = ok(&format!("v=DKIM1; g=*; x_y=1; p={}", RSA_1024.trim_end_matches('=')));
        assert_eq!(key.key_bits, Some(1024));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        for (record, message) in [
            ("v=DKIM1; k=rsa; p=NotBase64!!", "p= is not valid base64"),
            ("v=DKIM1; k=rsa", "the p= tag (public key) is missing"),
            ("", "empty record"),
            (" ; ", "empty record"),
            ("v=DKIM2; p=", "unsupported version v=DKIM2"),
            ("v=dkim1; p=", "unsupported version"),
            ("k=rsa; v=DKIM1; p=", "v must be the first tag"),
            ("v=DKIM1; k=dsa; p=", "unknown key type k=dsa"),
            ("v=DKIM1; p=; p=", "tag \"p\" given twice"),
            ("v=DKIM1; k=rsa; p=AAAA", "not a valid RSA public key"),
            ("v=DKIM1; k=ed25519; p=AAAA", "not a valid Ed25519 public key"),
            ("v=DKIM1; p", "malformed tag 2 \"p\": no '='"),
            ("v=DKIM1; 9=x; p=", "malformed tag 2"),
            ("v=DKIM1; n=caf\u{e9}; p=", "printable ASCII"),
            ("v=DKIM1; h=sha1::sha256; p=", "invalid h= value"),
            ("v=DKIM1; t=; p=", "invalid t= value"),
        ] {
            match parse(record) {
                Ok(k) => panic!("{record:?} should not parse, got {k:?}"),
                Err(e) => assert!(e.to_string().contains(message), "{record:?}: {e} should contain {message:?}"),
            }
        }
        let e = parse(&format!("v=DKIM1; k=rsa; p={EC_P256}")).unwrap_err();
        assert!(e.to_string().contains("another algorithm"), "{e}");
        let e = parse(&format!("v=DKIM1; k=rsa; p={ED25519_SPKI}")).unwrap_err();
        assert!(e.to_string().contains("another algorithm"), "{e}");
        let e = parse(&format!("v=DKIM1; k=ed25519; p={RSA_1024}")).unwrap_err();
        assert!(e.to_string().contains("Ed25519"), "{e}");
        // Trailing bytes after a key.
        let mut der = BASE64.decode(RSA_1024).unwrap();
        der.push(0);
        let e = parse(&format!("p={}", BASE64.encode(&der))).unwrap_err();
        assert!(e.to_string().contains("data after"), "{e}");
        assert!(matches!(parse(&format!("p={}", "A".repeat(MAX_RECORD_LEN))), Err(DkimError::TooLong { .. })));
        let many: String = (0..=MAX_TAGS).map(|i| format!("x{i}=1;")).collect();
        assert_eq!(parse(&many), Err(DkimError::TooManyTags));
    }

    #[test]
    fn modulus_bits_count_real_bits() {
        assert_eq!(modulus_bits(&[0, 0x80, 0]), Some(16));
        assert_eq!(modulus_bits(&[0, 0, 0x01, 0xff]), Some(9));
        assert_eq!(modulus_bits(&[0x7f]), Some(7));
        assert_eq!(modulus_bits(&[0, 0]), None);
        assert_eq!(modulus_bits(&[]), None);
    }

    /// The lab's DKIM records parse except where `dkim.syntax_error` is expected, and its
    /// DKIM verdicts follow from the parsed keys.
    #[test]
    fn lab_records() {
        let lab = super::super::spf::lab_records::Lab::load();
        let mut seen = 0;
        for (owner, txt) in lab.txt() {
            if !owner.contains("._domainkey.") {
                continue;
            }
            seen += 1;
            let expect_error = lab.expects(owner, "dkim.syntax_error");
            match parse(txt) {
                Ok(key) => {
                    assert!(!expect_error, "{owner}: {txt:?} parsed, but the lab expects dkim.syntax_error");
                    let bits = key.key_bits.unwrap_or(u32::MAX);
                    for (code, holds) in [
                        ("dkim.key_too_short", key.key_type == KeyType::Rsa && bits < 1024),
                        ("dkim.weak_key", key.key_type == KeyType::Rsa && (1024..2048).contains(&bits)),
                        ("dkim.testing_mode", key.testing()),
                        ("dkim.revoked_key", key.revoked),
                        ("dkim.sha1_only", key.sha1_only()),
                    ] {
                        assert_eq!(lab.expects(owner, code), holds, "{owner}: {code} for {txt:?} ({bits} bits)");
                    }
                }
                Err(e) => assert!(expect_error, "{owner}: {txt:?} does not parse: {e}"),
            }
        }
        assert!(seen > 10, "only {seen} DKIM records found in the lab");
    }

    proptest! {
        #[test]
        fn never_panics_on_strings(s in "\\PC{0,300}") {
            let _ = parse(&s);
            let _ = parse(&format!("v=DKIM1; p={s}"));
        }

        #[test]
        fn never_panics_on_base64_of_bytes(b in proptest::collection::vec(any::<u8>(), 0..400), ed in any::<bool>()) {
            let k = if ed { "ed25519" } else { "rsa" };
            let _ = parse(&format!("v=DKIM1; k={k}; p={}", BASE64.encode(&b)));
        }

        #[test]
        fn never_panics_on_mutated_keys(i in 0usize..294, byte in any::<u8>(), cut in 0usize..300) {
            let mut der = BASE64.decode(RSA_2048).unwrap();
            if let Some(b) = der.get_mut(i) {
                *b = byte;
            }
            der.truncate(cut.max(1));
            let _ = parse(&format!("p={}", BASE64.encode(&der)));
        }

        #[test]
        fn never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let s = String::from_utf8_lossy(&b);
            let _ = parse(&s);
            let _ = parse(&format!("v=DKIM1; k=rsa; p={s}"));
        }
    }
}
