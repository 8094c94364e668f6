//! Cipher suite names ↔ code points, and what each suite needs from the server.

/// How a suite agrees keys, which decides the ServerKeyExchange the responder sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyExchange {
    /// Static RSA: no ServerKeyExchange.
    Rsa,
    /// RSA EXPORT: a ServerKeyExchange with a temporary 512-bit RSA key.
    RsaExport,
    /// Ephemeral DH signed with the certificate's key.
    Dhe,
    /// Ephemeral DH, EXPORT strength: the 512-bit group.
    DheExport,
    /// Anonymous DH: no certificate, unsigned parameters.
    DhAnon,
    /// Anonymous DH, EXPORT strength: the 512-bit group.
    DhAnonExport,
    /// Ephemeral ECDH on secp256r1, signed with the certificate's key.
    Ecdhe,
    /// Anonymous ECDH on secp256r1: no certificate.
    EcdhAnon,
}

impl KeyExchange {
    /// Anonymous suites send no Certificate and no signature.
    pub fn anonymous(self) -> bool {
        matches!(self, KeyExchange::DhAnon | KeyExchange::DhAnonExport | KeyExchange::EcdhAnon)
    }

    /// Elliptic-curve suites (they need secp256r1 from the client and bring ec_point_formats).
    pub fn elliptic(self) -> bool {
        matches!(self, KeyExchange::Ecdhe | KeyExchange::EcdhAnon)
    }
}

/// Which certificate key a suite's authentication needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Authentication {
    Rsa,
    Ecdsa,
    Anonymous,
}

/// One TLS cipher suite the legacy responder can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CipherSuite {
    /// The IANA name (`TLS_RSA_WITH_RC4_128_MD5`).
    pub iana: &'static str,
    /// The OpenSSL name (`RC4-MD5`).
    pub openssl: &'static str,
    pub code: u16,
    pub kx: KeyExchange,
    pub auth: Authentication,
    /// Defined for TLS 1.2 only (SHA-256/384 PRF, AEAD): never chosen below TLS 1.2.
    pub tls12_only: bool,
}

/// An SSLv2 cipher kind (3-byte code), for the SSLv2 ServerHello.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ssl2Cipher {
    pub name: &'static str,
    pub code: u32,
}

macro_rules! suites {
    ($( $iana:literal, $openssl:literal, $code:literal, $kx:ident, $auth:ident, $tls12:literal; )*) => {
        /// Every suite the legacy responder knows, by code point.
        pub const SUITES: &[CipherSuite] = &[
            $( CipherSuite {
                iana: $iana,
                openssl: $openssl,
                code: $code,
                kx: KeyExchange::$kx,
                auth: Authentication::$auth,
                tls12_only: $tls12,
            }, )*
        ];
    };
}

suites! {
    "TLS_RSA_WITH_NULL_MD5", "NULL-MD5", 0x0001, Rsa, Rsa, false;
    "TLS_RSA_WITH_NULL_SHA", "NULL-SHA", 0x0002, Rsa, Rsa, false;
    "TLS_RSA_EXPORT_WITH_RC4_40_MD5", "EXP-RC4-MD5", 0x0003, RsaExport, Rsa, false;
    "TLS_RSA_WITH_RC4_128_MD5", "RC4-MD5", 0x0004, Rsa, Rsa, false;
    "TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA", 0x0005, Rsa, Rsa, false;
    "TLS_RSA_EXPORT_WITH_RC2_CBC_40_MD5", "EXP-RC2-CBC-MD5", 0x0006, RsaExport, Rsa, false;
    "TLS_RSA_WITH_IDEA_CBC_SHA", "IDEA-CBC-SHA", 0x0007, Rsa, Rsa, false;
    "TLS_RSA_EXPORT_WITH_DES40_CBC_SHA", "EXP-DES-CBC-SHA", 0x0008, RsaExport, Rsa, false;
    "TLS_RSA_WITH_DES_CBC_SHA", "DES-CBC-SHA", 0x0009, Rsa, Rsa, false;
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA", 0x000A, Rsa, Rsa, false;
    "TLS_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA", "EXP-EDH-RSA-DES-CBC-SHA", 0x0014, DheExport, Rsa, false;
    "TLS_DHE_RSA_WITH_DES_CBC_SHA", "EDH-RSA-DES-CBC-SHA", 0x0015, Dhe, Rsa, false;
    "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA", "EDH-RSA-DES-CBC3-SHA", 0x0016, Dhe, Rsa, false;
    "TLS_DH_anon_EXPORT_WITH_RC4_40_MD5", "EXP-ADH-RC4-MD5", 0x0017, DhAnonExport, Anonymous, false;
    "TLS_DH_anon_WITH_RC4_128_MD5", "ADH-RC4-MD5", 0x0018, DhAnon, Anonymous, false;
    "TLS_DH_anon_EXPORT_WITH_DES40_CBC_SHA", "EXP-ADH-DES-CBC-SHA", 0x0019, DhAnonExport, Anonymous, false;
    "TLS_DH_anon_WITH_DES_CBC_SHA", "ADH-DES-CBC-SHA", 0x001A, DhAnon, Anonymous, false;
    "TLS_DH_anon_WITH_3DES_EDE_CBC_SHA", "ADH-DES-CBC3-SHA", 0x001B, DhAnon, Anonymous, false;
    "TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA", 0x002F, Rsa, Rsa, false;
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "DHE-RSA-AES128-SHA", 0x0033, Dhe, Rsa, false;
    "TLS_DH_anon_WITH_AES_128_CBC_SHA", "ADH-AES128-SHA", 0x0034, DhAnon, Anonymous, false;
    "TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA", 0x0035, Rsa, Rsa, false;
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", "DHE-RSA-AES256-SHA", 0x0039, Dhe, Rsa, false;
    "TLS_DH_anon_WITH_AES_256_CBC_SHA", "ADH-AES256-SHA", 0x003A, DhAnon, Anonymous, false;
    "TLS_RSA_WITH_NULL_SHA256", "NULL-SHA256", 0x003B, Rsa, Rsa, true;
    "TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256", 0x003C, Rsa, Rsa, true;
    "TLS_RSA_WITH_AES_256_CBC_SHA256", "AES256-SHA256", 0x003D, Rsa, Rsa, true;
    "TLS_RSA_WITH_CAMELLIA_128_CBC_SHA", "CAMELLIA128-SHA", 0x0041, Rsa, Rsa, false;
    "TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA", "DHE-RSA-CAMELLIA128-SHA", 0x0045, Dhe, Rsa, false;
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", "DHE-RSA-AES128-SHA256", 0x0067, Dhe, Rsa, true;
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", "DHE-RSA-AES256-SHA256", 0x006B, Dhe, Rsa, true;
    "TLS_DH_anon_WITH_AES_128_CBC_SHA256", "ADH-AES128-SHA256", 0x006C, DhAnon, Anonymous, true;
    "TLS_DH_anon_WITH_AES_256_CBC_SHA256", "ADH-AES256-SHA256", 0x006D, DhAnon, Anonymous, true;
    "TLS_RSA_WITH_CAMELLIA_256_CBC_SHA", "CAMELLIA256-SHA", 0x0084, Rsa, Rsa, false;
    "TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA", "DHE-RSA-CAMELLIA256-SHA", 0x0088, Dhe, Rsa, false;
    "TLS_RSA_WITH_SEED_CBC_SHA", "SEED-SHA", 0x0096, Rsa, Rsa, false;
    "TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256", 0x009C, Rsa, Rsa, true;
    "TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384", 0x009D, Rsa, Rsa, true;
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256", 0x009E, Dhe, Rsa, true;
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", "DHE-RSA-AES256-GCM-SHA384", 0x009F, Dhe, Rsa, true;
    "TLS_DH_anon_WITH_AES_128_GCM_SHA256", "ADH-AES128-GCM-SHA256", 0x00A6, DhAnon, Anonymous, true;
    "TLS_DH_anon_WITH_AES_256_GCM_SHA384", "ADH-AES256-GCM-SHA384", 0x00A7, DhAnon, Anonymous, true;
    "TLS_ECDHE_ECDSA_WITH_NULL_SHA", "ECDHE-ECDSA-NULL-SHA", 0xC006, Ecdhe, Ecdsa, false;
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA", 0xC007, Ecdhe, Ecdsa, false;
    "TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-ECDSA-DES-CBC3-SHA", 0xC008, Ecdhe, Ecdsa, false;
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA", 0xC009, Ecdhe, Ecdsa, false;
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA", 0xC00A, Ecdhe, Ecdsa, false;
    "TLS_ECDHE_RSA_WITH_NULL_SHA", "ECDHE-RSA-NULL-SHA", 0xC010, Ecdhe, Rsa, false;
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA", 0xC011, Ecdhe, Rsa, false;
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA", 0xC012, Ecdhe, Rsa, false;
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", 0xC013, Ecdhe, Rsa, false;
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA", 0xC014, Ecdhe, Rsa, false;
    "TLS_ECDH_anon_WITH_NULL_SHA", "AECDH-NULL-SHA", 0xC015, EcdhAnon, Anonymous, false;
    "TLS_ECDH_anon_WITH_RC4_128_SHA", "AECDH-RC4-SHA", 0xC016, EcdhAnon, Anonymous, false;
    "TLS_ECDH_anon_WITH_3DES_EDE_CBC_SHA", "AECDH-DES-CBC3-SHA", 0xC017, EcdhAnon, Anonymous, false;
    "TLS_ECDH_anon_WITH_AES_128_CBC_SHA", "AECDH-AES128-SHA", 0xC018, EcdhAnon, Anonymous, false;
    "TLS_ECDH_anon_WITH_AES_256_CBC_SHA", "AECDH-AES256-SHA", 0xC019, EcdhAnon, Anonymous, false;
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256", 0xC023, Ecdhe, Ecdsa, true;
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "ECDHE-ECDSA-AES256-SHA384", 0xC024, Ecdhe, Ecdsa, true;
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256", 0xC027, Ecdhe, Rsa, true;
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "ECDHE-RSA-AES256-SHA384", 0xC028, Ecdhe, Rsa, true;
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", 0xC02B, Ecdhe, Ecdsa, true;
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", 0xC02C, Ecdhe, Ecdsa, true;
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", 0xC02F, Ecdhe, Rsa, true;
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", 0xC030, Ecdhe, Rsa, true;
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", 0xCCA8, Ecdhe, Rsa, true;
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", 0xCCA9, Ecdhe, Ecdsa, true;
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "DHE-RSA-CHACHA20-POLY1305", 0xCCAA, Dhe, Rsa, true;
}

/// The SSLv2 cipher kinds (for an `ssl2` legacy host; DROWN).
pub const SSL2_CIPHERS: &[Ssl2Cipher] = &[
    Ssl2Cipher { name: "SSL_CK_RC4_128_WITH_MD5", code: 0x010080 },
    Ssl2Cipher { name: "SSL_CK_RC4_128_EXPORT40_WITH_MD5", code: 0x020080 },
    Ssl2Cipher { name: "SSL_CK_RC2_128_CBC_WITH_MD5", code: 0x030080 },
    Ssl2Cipher { name: "SSL_CK_RC2_128_CBC_EXPORT40_WITH_MD5", code: 0x040080 },
    Ssl2Cipher { name: "SSL_CK_IDEA_128_CBC_WITH_MD5", code: 0x050080 },
    Ssl2Cipher { name: "SSL_CK_DES_64_CBC_WITH_MD5", code: 0x060040 },
    Ssl2Cipher { name: "SSL_CK_DES_192_EDE3_CBC_WITH_MD5", code: 0x0700C0 },
];

/// The suite with this IANA or OpenSSL name (ASCII case-insensitive).
pub fn suite_by_name(name: &str) -> Option<&'static CipherSuite> {
    SUITES.iter().find(|s| s.iana.eq_ignore_ascii_case(name) || s.openssl.eq_ignore_ascii_case(name))
}

/// The suite with this code point.
pub fn suite_by_code(code: u16) -> Option<&'static CipherSuite> {
    SUITES.iter().find(|s| s.code == code)
}

/// The SSLv2 cipher kind with this name.
pub fn ssl2_cipher_by_name(name: &str) -> Option<&'static Ssl2Cipher> {
    SSL2_CIPHERS.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_codes_are_unique() {
        let mut codes = HashSet::new();
        let mut names = HashSet::new();
        for s in SUITES {
            assert!(codes.insert(s.code), "{}", s.iana);
            assert!(names.insert(s.iana.to_ascii_lowercase()), "{}", s.iana);
            assert!(names.insert(s.openssl.to_ascii_lowercase()), "{}", s.openssl);
            assert_eq!(s.kx.anonymous(), s.auth == Authentication::Anonymous, "{}", s.iana);
            assert_eq!(
                s.iana.contains("EXPORT"),
                matches!(s.kx, KeyExchange::RsaExport | KeyExchange::DheExport | KeyExchange::DhAnonExport)
            );
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(suite_by_name("TLS_RSA_WITH_RC4_128_MD5").map(|s| s.code), Some(0x0004));
        assert_eq!(suite_by_name("des-cbc3-sha").map(|s| s.code), Some(0x000A));
        assert_eq!(suite_by_name("TLS_DH_anon_WITH_AES_128_CBC_SHA").map(|s| s.kx), Some(KeyExchange::DhAnon));
        assert!(suite_by_name("TLS_NOPE").is_none());
        assert_eq!(suite_by_code(0xC02F).map(|s| s.openssl), Some("ECDHE-RSA-AES128-GCM-SHA256"));
        assert!(ssl2_cipher_by_name("SSL_CK_DES_192_EDE3_CBC_WITH_MD5").is_some());
    }
}
