//! The cipher suites the prober offers: the IANA registry as tls-parser ships it, with
//! what the grading needs to know about each (key exchange, EXPORT, NULL, RC4, 64-bit
//! block ciphers, CBC, forward secrecy, the versions it may be used in).

use std::sync::OnceLock;

use tls_parser::{TlsCipherAu, TlsCipherEnc, TlsCipherEncMode, TlsCipherKx, TlsCipherMac, TlsCipherSuite};

use super::Version;

/// Key exchange, as the findings see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kx {
    Rsa,
    /// Static DH or ECDH (certificate key).
    Static,
    Dhe,
    Ecdhe,
    AnonDh,
    AnonEcdh,
    /// PSK, SRP, Kerberos and the like.
    Other,
    Tls13,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub id: u16,
    pub name: &'static str,
    pub kx: Kx,
    pub export: bool,
    pub null_cipher: bool,
    pub rc4: bool,
    /// A 64-bit block cipher: 3DES, DES, IDEA, RC2.
    pub block64: bool,
    pub cbc: bool,
    /// Usable only from TLS 1.2 (AEAD, SHA-256/384 MAC or PRF).
    pub tls12_only: bool,
    pub enc_bits: u16,
}

impl Suite {
    pub fn anonymous(&self) -> bool {
        matches!(self.kx, Kx::AnonDh | Kx::AnonEcdh)
    }
    /// Authenticated ephemeral key exchange.
    pub fn forward_secret(&self) -> bool {
        matches!(self.kx, Kx::Dhe | Kx::Ecdhe | Kx::Tls13)
    }
    /// May this suite be negotiated in `version`?
    pub fn allowed_in(&self, version: Version) -> bool {
        match version {
            Version::Ssl2 => false,
            Version::Tls13 => self.kx == Kx::Tls13,
            Version::Tls12 => self.kx != Kx::Tls13,
            _ => self.kx != Kx::Tls13 && !self.tls12_only,
        }
    }
}

fn classify(s: &TlsCipherSuite) -> Suite {
    let anon = s.au == TlsCipherAu::Null;
    let kx = match s.kx {
        TlsCipherKx::Tls13 => Kx::Tls13,
        TlsCipherKx::Rsa => Kx::Rsa,
        TlsCipherKx::Dhe => Kx::Dhe,
        TlsCipherKx::Ecdhe => Kx::Ecdhe,
        TlsCipherKx::Aecdh => Kx::AnonEcdh,
        TlsCipherKx::Dh if anon => Kx::AnonDh,
        TlsCipherKx::Ecdh if anon => Kx::AnonEcdh,
        TlsCipherKx::Dh | TlsCipherKx::Ecdh => Kx::Static,
        _ => Kx::Other,
    };
    let tls12_only = matches!(s.enc_mode, TlsCipherEncMode::Gcm | TlsCipherEncMode::Ccm)
        || s.enc == TlsCipherEnc::Chacha20_Poly1305
        || matches!(s.mac, TlsCipherMac::HmacSha256 | TlsCipherMac::HmacSha384 | TlsCipherMac::Aead)
        || s.name.ends_with("_SHA256")
        || s.name.ends_with("_SHA384");
    Suite {
        id: s.id.0,
        name: s.name,
        kx,
        export: s.name.contains("EXPORT"),
        null_cipher: s.enc == TlsCipherEnc::Null,
        rc4: s.enc == TlsCipherEnc::Rc4,
        block64: matches!(s.enc, TlsCipherEnc::TripleDes | TlsCipherEnc::Des | TlsCipherEnc::Idea | TlsCipherEnc::Rc2),
        cbc: s.enc_mode == TlsCipherEncMode::Cbc,
        tls12_only,
        enc_bits: s.enc_size,
    }
}

/// Every registered suite except the signalling values and TLS_NULL_WITH_NULL_NULL,
/// by id.
pub fn all() -> &'static [Suite] {
    static ALL: OnceLock<Vec<Suite>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<Suite> =
            tls_parser::CIPHERS.values().filter(|s| !s.name.ends_with("_SCSV") && s.id.0 != 0).map(classify).collect();
        v.sort_by_key(|s| s.id);
        v
    })
}

/// The suite with this id, when registered.
pub fn by_id(id: u16) -> Option<&'static Suite> {
    all().binary_search_by_key(&id, |s| s.id).ok().and_then(|i| all().get(i))
}

/// The name of a suite id (registered, or its number).
pub fn name(id: u16) -> String {
    by_id(id).map_or_else(|| format!("0x{id:04X}"), |s| s.name.to_owned())
}

/// The suites that may be offered in `version`, strongest families first (so a server
/// that stops reading a long list still sees the ones that matter).
pub fn for_version(version: Version) -> Vec<u16> {
    let mut v: Vec<&Suite> = all().iter().filter(|s| s.allowed_in(version)).collect();
    v.sort_by_key(|s| {
        let rank = match s.kx {
            Kx::Tls13 | Kx::Ecdhe => 0,
            Kx::Dhe => 1,
            Kx::Rsa => 2,
            Kx::Static => 3,
            Kx::AnonDh | Kx::AnonEcdh => 4,
            Kx::Other => 5,
        };
        (rank, s.id)
    });
    v.into_iter().map(|s| s.id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_classified() {
        assert!(all().len() > 300, "{}", all().len());
        let s = by_id(0x000a).unwrap();
        assert_eq!(s.name, "TLS_RSA_WITH_3DES_EDE_CBC_SHA");
        assert!(s.block64 && s.cbc && !s.forward_secret() && s.allowed_in(Version::Ssl3));
        let e = by_id(0x0003).unwrap();
        assert!(e.export && e.rc4);
        assert!(by_id(0x0018).unwrap().anonymous(), "TLS_DH_anon_WITH_RC4_128_MD5");
        assert!(by_id(0xc018).unwrap().anonymous(), "TLS_ECDH_anon_WITH_AES_128_CBC_SHA");
        assert!(by_id(0x0002).unwrap().null_cipher);
        let gcm = by_id(0xc02f).unwrap();
        assert!(
            gcm.forward_secret() && gcm.tls12_only && !gcm.allowed_in(Version::Tls11) && gcm.allowed_in(Version::Tls12)
        );
        assert!(!by_id(0x003c).unwrap().allowed_in(Version::Tls10), "TLS_RSA_WITH_AES_128_CBC_SHA256 is TLS 1.2");
        let v13 = for_version(Version::Tls13);
        assert!((0x1301..=0x1305).all(|id| v13.contains(&id)), "{v13:?}");
        assert_eq!(v13.len(), 11, "RFC 8446, RFC 8998 (SM4), RFC 9150 (integrity-only), AEGIS: {v13:?}");
        assert!(for_version(Version::Tls12).len() > for_version(Version::Tls10).len());
        assert!(by_id(0x00ff).is_none() && by_id(0x5600).is_none());
    }
}
