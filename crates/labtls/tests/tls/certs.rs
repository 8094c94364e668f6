//! Every variant read back with x509-parser: chain, names, validity, signature algorithm,
//! key size; the SHA-1 signature verified independently (RustCrypto p256 over ring's SHA-1).

use std::time::Instant;

use labtls::{CertVariant, LabCa};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use x509_parser::prelude::*;

use crate::support::{HOST, ca, issue};

const ECDSA_SHA256: &str = "1.2.840.10045.4.3.2";
const ECDSA_SHA1: &str = "1.2.840.10045.4.1";

#[test]
fn ca_and_all_variants_are_fast() {
    let started = Instant::now();
    let ca = LabCa::new().unwrap();
    let made = started.elapsed();
    for variant in CertVariant::ALL {
        ca.issue(&[HOST.to_owned()], variant).unwrap();
    }
    let total = started.elapsed();
    println!(
        "LabCa::new {:?}; + issuing all {} variants: {:?} in total (debug build)",
        made,
        CertVariant::ALL.len(),
        total
    );
    assert!(ca.root_pem().starts_with("-----BEGIN CERTIFICATE-----"));
}

#[test]
fn root_and_intermediate_are_p256_cas() {
    let root_der = ca().root_der();
    let (_, root) = X509Certificate::from_der(&root_der).unwrap();
    assert_eq!(root.subject(), root.issuer());
    assert!(root.is_ca());
    assert_eq!(root.public_key().algorithm.algorithm.to_id_string(), "1.2.840.10045.2.1");
    let inter_der = ca().intermediate_der();
    let (_, inter) = X509Certificate::from_der(&inter_der).unwrap();
    assert_eq!(inter.issuer(), root.subject());
    assert!(inter.is_ca());
    let verifying = p256::ecdsa::VerifyingKey::from_sec1_bytes(&root.public_key().subject_public_key.data).unwrap();
    let signature = p256::ecdsa::Signature::from_der(&inter.signature_value.data).unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, inter.tbs_certificate.as_ref());
    verifying.verify_prehash(digest.as_ref(), &signature).unwrap();
}

fn days_from_now(t: ASN1Time) -> i64 {
    (t.timestamp() - ::time::OffsetDateTime::now_utc().unix_timestamp()) / 86_400
}

#[test]
fn every_variant_has_its_shape() {
    let inter_der = ca().intermediate_der();
    let (_, inter) = X509Certificate::from_der(&inter_der).unwrap();
    for variant in CertVariant::ALL {
        let issued = issue(variant);
        assert_eq!(issued.variant, variant);
        let (rest, leaf) = X509Certificate::from_der(&issued.chain[0]).unwrap();
        assert!(rest.is_empty(), "{variant:?}");

        let chain_len = match variant {
            CertVariant::SelfSigned | CertVariant::MissingIntermediate => 1,
            _ => 2,
        };
        assert_eq!(issued.chain.len(), chain_len, "{variant:?}");
        if chain_len == 2 {
            assert_eq!(issued.chain[1].as_ref(), inter_der.as_slice());
        }
        if variant == CertVariant::SelfSigned {
            assert_eq!(leaf.issuer(), leaf.subject());
        } else {
            assert_eq!(leaf.issuer(), inter.subject(), "{variant:?}");
        }
        assert!(!leaf.is_ca());

        let sans: Vec<String> = leaf
            .subject_alternative_name()
            .unwrap()
            .unwrap()
            .value
            .general_names
            .iter()
            .map(|n| match n {
                GeneralName::DNSName(d) => d.to_string(),
                GeneralName::IPAddress(ip) => format!("{ip:?}"),
                other => format!("{other:?}"),
            })
            .collect();
        if variant == CertVariant::WrongHost {
            assert_eq!(sans, vec!["wrong-host.invalid.test".to_owned()]);
        } else {
            assert_eq!(sans[0], HOST, "{variant:?}");
            assert_eq!(sans.len(), 2, "{variant:?}: {sans:?}");
        }

        let v = leaf.validity();
        let (from, until) = (days_from_now(v.not_before), days_from_now(v.not_after));
        let span = (v.not_after.timestamp() - v.not_before.timestamp()) / 86_400;
        match variant {
            CertVariant::Expired => assert!(until <= -29, "{until}"),
            CertVariant::NotYetValid => assert!(from >= 29, "{from}"),
            CertVariant::ExpiresIn14Days => assert!((9..=10).contains(&until), "{until}"),
            CertVariant::ExpiresIn30Days => assert!((24..=25).contains(&until), "{until}"),
            CertVariant::LongValidity => assert_eq!(span, 825),
            _ => {
                assert!(from <= 0 && until >= 59, "{variant:?} {from} {until}");
                assert_eq!(span, 90);
            }
        }

        let sig_alg = leaf.signature_algorithm.algorithm.to_id_string();
        let tbs_alg = leaf.tbs_certificate.signature.algorithm.to_id_string();
        let expected = if variant == CertVariant::Sha1Signature { ECDSA_SHA1 } else { ECDSA_SHA256 };
        assert_eq!(sig_alg, expected, "{variant:?}");
        assert_eq!(tbs_alg, expected, "{variant:?}");

        match leaf.public_key().parsed().unwrap() {
            x509_parser::public_key::PublicKey::RSA(rsa) => {
                let bits = rsa.key_size();
                match variant {
                    CertVariant::Rsa1024 => assert_eq!(bits, 1024),
                    CertVariant::Rsa2048 => assert_eq!(bits, 2048),
                    _ => panic!("{variant:?} has an RSA key"),
                }
            }
            x509_parser::public_key::PublicKey::EC(point) => {
                assert!(!matches!(variant, CertVariant::Rsa1024 | CertVariant::Rsa2048));
                assert_eq!(point.key_size(), 256, "{variant:?}");
            }
            other => panic!("{variant:?}: {other:?}"),
        }

        // Every signature verifies against its issuer with the algorithm it names.
        let issuer_key = if variant == CertVariant::SelfSigned { leaf.public_key() } else { inter.public_key() };
        let verifying = p256::ecdsa::VerifyingKey::from_sec1_bytes(&issuer_key.subject_public_key.data).unwrap();
        let signature = p256::ecdsa::Signature::from_der(&leaf.signature_value.data).unwrap();
        let digest = if variant == CertVariant::Sha1Signature {
            ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, leaf.tbs_certificate.as_ref())
        } else {
            ring::digest::digest(&ring::digest::SHA256, leaf.tbs_certificate.as_ref())
        };
        verifying.verify_prehash(digest.as_ref(), &signature).unwrap_or_else(|e| panic!("{variant:?}: {e}"));
    }
}

#[test]
fn sha1_signature_does_not_verify_as_sha256() {
    let issued = issue(CertVariant::Sha1Signature);
    let (_, leaf) = X509Certificate::from_der(&issued.chain[0]).unwrap();
    let inter_der = ca().intermediate_der();
    let (_, inter) = X509Certificate::from_der(&inter_der).unwrap();
    let verifying = p256::ecdsa::VerifyingKey::from_sec1_bytes(&inter.public_key().subject_public_key.data).unwrap();
    let signature = p256::ecdsa::Signature::from_der(&leaf.signature_value.data).unwrap();
    let sha256 = ring::digest::digest(&ring::digest::SHA256, leaf.tbs_certificate.as_ref());
    assert!(verifying.verify_prehash(sha256.as_ref(), &signature).is_err());
}

#[test]
fn no_names_is_an_error_and_ips_become_ip_sans() {
    assert!(ca().issue(&[], CertVariant::Valid).is_err());
    let issued = ca().issue(&["10.0.0.1".to_owned()], CertVariant::Valid).unwrap();
    let (_, leaf) = X509Certificate::from_der(&issued.chain[0]).unwrap();
    let san = leaf.subject_alternative_name().unwrap().unwrap();
    assert!(matches!(san.value.general_names[0], GeneralName::IPAddress(ip) if ip == [10, 0, 0, 1]));
}
