//! ServerKeyExchange: DH groups, the ECDHE point, the EXPORT RSA key and signatures.

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair};

use super::suites::KeyExchange;
use crate::{IssuedCert, KeyType, TlsError};

/// Decodes a hex constant at compile time (a bad constant fails the build).
const fn unhex<const N: usize>(hex: &str) -> [u8; N] {
    const fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'F' => c - b'A' + 10,
            b'a'..=b'f' => c - b'a' + 10,
            _ => panic!("not hex"),
        }
    }
    let bytes = hex.as_bytes();
    assert!(bytes.len() == 2 * N, "hex constant has the wrong length");
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = (nibble(bytes[2 * i]) << 4) | nibble(bytes[2 * i + 1]);
        i += 1;
    }
    out
}

/// A fixed 512-bit safe prime (generated once with `openssl dhparam 512`, `keys/lab-dh512.pem`),
/// for EXPORT DHE suites.
static P512: [u8; 64] = unhex(concat!(
    "CF95599162A290E3319BFAA9A9BDBEE7A8316FDE4FB8A868EEEA9D37D8FD8A766B91DC156E019BBD3255F20591991382",
    "96CDC0E69F343E1943F56F1C92B4FEEF",
));

/// RFC 2409 §6.2, the second Oakley group (1024-bit MODP).
static P1024: [u8; 128] = unhex(concat!(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD",
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED",
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF",
));

/// RFC 3526 §3, group 14 (2048-bit MODP).
static P2048: [u8; 256] = unhex(concat!(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD",
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED",
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F",
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B",
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510",
    "15728E5A8AACAA68FFFFFFFFFFFFFFFF",
));

/// The DH prime for a group size (512, 1024 or 2048 bits); the generator is always 2.
pub(crate) fn dh_prime(bits: u16) -> Option<&'static [u8]> {
    match bits {
        512 => Some(&P512),
        1024 => Some(&P1024),
        2048 => Some(&P2048),
        _ => None,
    }
}

/// NamedCurve secp256r1.
pub(crate) const SECP256R1: u16 = 23;

fn push_vec16(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
}

fn random_bytes(rng: &SystemRandom, n: usize) -> Result<Vec<u8>, TlsError> {
    let mut out = vec![0u8; n];
    rng.fill(&mut out).map_err(|_| TlsError::Crypto("random"))?;
    Ok(out)
}

/// A DH public value with no secret exponent behind it: `r²` for a random `r` of half
/// the prime's length. A square is a quadratic residue, so it lies in the prime-order
/// subgroup of a safe-prime group — clients that check subgroup membership (OpenSSL does
/// for the RFC 3526 groups) accept it, as they would not accept random bytes half the
/// time. `r` starts with 0x80..=0xB0, so `r²` has the prime's length and stays below it.
fn placeholder_ys(len: usize, rng: &SystemRandom) -> Result<Vec<u8>, TlsError> {
    let mut r = random_bytes(rng, len / 2)?;
    r[0] = 0x80 | (r[0] % 0x31);
    Ok(square_be(&r))
}

/// The square of a big-endian number, `2 * r.len()` bytes long.
fn square_be(r: &[u8]) -> Vec<u8> {
    let n = r.len();
    let mut acc = vec![0u64; 2 * n];
    for (i, &a) in r.iter().enumerate() {
        for (j, &b) in r.iter().enumerate() {
            acc[i + j + 1] += u64::from(a) * u64::from(b);
        }
    }
    let mut out = vec![0u8; 2 * n];
    let mut carry = 0u64;
    for k in (0..2 * n).rev() {
        let v = acc[k] + carry;
        out[k] = v as u8;
        carry = v >> 8;
    }
    out
}

/// What a ServerKeyExchange is made from.
pub(crate) struct KxInput<'a> {
    pub kx: KeyExchange,
    pub version: u16,
    pub client_random: &'a [u8; 32],
    pub server_random: &'a [u8; 32],
    pub dh_bits: u16,
    pub cert: &'a IssuedCert,
}

/// The ServerKeyExchange body for the suite's key exchange, or `None` for static RSA.
pub(crate) fn server_key_exchange(input: &KxInput<'_>, rng: &SystemRandom) -> Result<Option<Vec<u8>>, TlsError> {
    let mut params = Vec::new();
    match input.kx {
        KeyExchange::Rsa => return Ok(None),
        KeyExchange::RsaExport => {
            let (modulus, exponent) = crate::ca::export_rsa_public()?;
            push_vec16(&mut params, &modulus);
            push_vec16(&mut params, &exponent);
        }
        KeyExchange::Dhe | KeyExchange::DhAnon | KeyExchange::DheExport | KeyExchange::DhAnonExport => {
            let bits = if matches!(input.kx, KeyExchange::DheExport | KeyExchange::DhAnonExport) {
                512
            } else {
                input.dh_bits
            };
            let p = dh_prime(bits).ok_or(TlsError::EmbeddedKey("DH group size"))?;
            let ys = placeholder_ys(p.len(), rng)?;
            push_vec16(&mut params, p);
            push_vec16(&mut params, &[2]);
            push_vec16(&mut params, &ys);
        }
        KeyExchange::Ecdhe | KeyExchange::EcdhAnon => {
            let private = ring::agreement::EphemeralPrivateKey::generate(&ring::agreement::ECDH_P256, rng)
                .map_err(|_| TlsError::Crypto("ECDHE key"))?;
            let public = private.compute_public_key().map_err(|_| TlsError::Crypto("ECDHE point"))?;
            params.push(3); // named_curve
            params.extend_from_slice(&SECP256R1.to_be_bytes());
            params.push(public.as_ref().len() as u8);
            params.extend_from_slice(public.as_ref());
        }
    }
    if !input.kx.anonymous() {
        let mut signed = Vec::with_capacity(64 + params.len());
        signed.extend_from_slice(input.client_random);
        signed.extend_from_slice(input.server_random);
        signed.extend_from_slice(&params);
        let signature = sign(input, &signed, rng)?;
        params.extend_from_slice(&signature);
    }
    Ok(Some(params))
}

/// The `digitally-signed` struct over the ServerKeyExchange params.
///
/// Real for ECDSA leaves (SHA-256 at TLS 1.2, SHA-1 below) and for the RSA 2048 leaf at
/// TLS 1.2; random bytes of the right length otherwise (RSA below TLS 1.2 signs a raw
/// MD5+SHA-1 concatenation ring cannot produce; ring refuses RSA 1024).
fn sign(input: &KxInput<'_>, signed: &[u8], rng: &SystemRandom) -> Result<Vec<u8>, TlsError> {
    let tls12 = input.version >= 0x0303;
    let key = input.cert.key.secret_der();
    let mut out = Vec::new();
    let signature = match input.cert.variant.key_type() {
        KeyType::EcdsaP256 => {
            if tls12 {
                out.extend_from_slice(&[4, 3]); // sha256, ecdsa
                let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, key, rng)
                    .map_err(|_| TlsError::Crypto("leaf ECDSA key"))?;
                pair.sign(rng, signed).map_err(|_| TlsError::Crypto("ECDSA signature"))?.as_ref().to_vec()
            } else {
                let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, signed);
                crate::ca::ecdsa_sha1_prehash_sign(key, digest.as_ref())?
            }
        }
        KeyType::Rsa2048 if tls12 => {
            out.extend_from_slice(&[4, 1]); // sha256, rsa
            let pair = RsaKeyPair::from_pkcs8(key).map_err(|_| TlsError::Crypto("leaf RSA key"))?;
            let mut sig = vec![0u8; pair.public().modulus_len()];
            pair.sign(&RSA_PKCS1_SHA256, rng, signed, &mut sig).map_err(|_| TlsError::Crypto("RSA signature"))?;
            sig
        }
        kind @ (KeyType::Rsa2048 | KeyType::Rsa1024) => {
            if tls12 {
                out.extend_from_slice(&[4, 1]);
            }
            let len = if kind == KeyType::Rsa2048 { 256 } else { 128 };
            let mut sig = random_bytes(rng, len)?;
            sig[0] &= 0x3f;
            sig
        }
    };
    push_vec16(&mut out, &signature);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_have_their_sizes() {
        for (bits, top) in [(512u16, 0xCF), (1024, 0xFF), (2048, 0xFF)] {
            let p = dh_prime(bits).unwrap();
            assert_eq!(p.len() * 8, usize::from(bits));
            assert_eq!(p[0], top);
            assert_eq!(p[p.len() - 1] & 1, 1);
        }
        assert!(dh_prime(768).is_none());
    }

    #[test]
    fn squares_are_right_and_below_the_primes() {
        assert_eq!(square_be(&[0xff, 0xff]), vec![0xff, 0xfe, 0x00, 0x01]);
        assert_eq!(square_be(&[0x01, 0x00]), vec![0x00, 0x01, 0x00, 0x00]);
        assert_eq!(square_be(&[0x12, 0x34, 0x56]), (0x123456u64 * 0x123456).to_be_bytes()[2..].to_vec());
        let rng = SystemRandom::new();
        for bits in [512u16, 1024, 2048] {
            let p = dh_prime(bits).unwrap();
            for _ in 0..50 {
                let ys = placeholder_ys(p.len(), &rng).unwrap();
                assert_eq!(ys.len(), p.len());
                assert!(ys[0] >= 0x40 && ys.as_slice() < p);
            }
        }
    }
}
