//! The bytes of a TLS handshake's first flight: ClientHello building (SSLv2 format, and
//! SSLv3 to TLS 1.3), and total parsers for what a server answers (records, ServerHello
//! and its extensions, Certificate, ServerKeyExchange, ServerHelloDone, alerts, SSLv2
//! SERVER-HELLO). Every parser takes any bytes and returns a value or an error, never
//! panics; lengths are checked before every slice.

use super::Version;

pub const RECORD_HANDSHAKE: u8 = 22;
pub const RECORD_ALERT: u8 = 21;
pub const RECORD_HEARTBEAT: u8 = 24;
/// The largest record body a server may send (TLSCiphertext bound).
pub const MAX_RECORD: usize = 16384 + 2048;

const HS_SERVER_HELLO: u8 = 2;
const HS_CERTIFICATE: u8 = 11;
const HS_SERVER_KEY_EXCHANGE: u8 = 12;
const HS_SERVER_HELLO_DONE: u8 = 14;
const HS_CERTIFICATE_STATUS: u8 = 22;

pub const EXT_SERVER_NAME: u16 = 0;
pub const EXT_STATUS_REQUEST: u16 = 5;
pub const EXT_SUPPORTED_GROUPS: u16 = 10;
pub const EXT_EC_POINT_FORMATS: u16 = 11;
pub const EXT_SIGNATURE_ALGORITHMS: u16 = 13;
pub const EXT_HEARTBEAT: u16 = 15;
pub const EXT_ALPN: u16 = 16;
pub const EXT_EXTENDED_MASTER_SECRET: u16 = 23;
pub const EXT_SESSION_TICKET: u16 = 35;
pub const EXT_SUPPORTED_VERSIONS: u16 = 43;
pub const EXT_PSK_MODES: u16 = 45;
pub const EXT_KEY_SHARE: u16 = 51;
pub const EXT_RENEGOTIATION_INFO: u16 = 0xff01;

/// The signalling suite value of RFC 7507.
pub const TLS_FALLBACK_SCSV: u16 = 0x5600;
/// The renegotiation signalling suite of RFC 5746.
pub const TLS_EMPTY_RENEGOTIATION_INFO_SCSV: u16 = 0x00ff;

/// The random of a HelloRetryRequest (RFC 8446 §4.1.3).
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11,
    0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// Named groups offered, strongest and most common first.
pub const GROUPS: &[(u16, &str)] = &[
    (0x001d, "x25519"),
    (0x0017, "secp256r1"),
    (0x0018, "secp384r1"),
    (0x0019, "secp521r1"),
    (0x001e, "x448"),
    (0x0100, "ffdhe2048"),
    (0x0101, "ffdhe3072"),
    (0x0102, "ffdhe4096"),
    (0x0103, "ffdhe6144"),
    (0x0104, "ffdhe8192"),
    (0x0016, "secp256k1"),
    (0x0015, "secp224r1"),
    (0x0014, "secp224k1"),
    (0x0013, "secp192r1"),
    (0x0012, "secp192k1"),
    (0x001a, "brainpoolP256r1"),
    (0x001b, "brainpoolP384r1"),
    (0x001c, "brainpoolP512r1"),
];

/// The name of a named group.
pub fn group_name(id: u16) -> String {
    GROUPS.iter().find(|(g, _)| *g == id).map_or_else(|| format!("group 0x{id:04x}"), |(_, n)| (*n).to_owned())
}

/// Signature algorithms offered in TLS 1.2 and 1.3 hellos (old ones included, to see them).
const SIGNATURE_ALGORITHMS: &[u16] = &[
    0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809, 0x080a, 0x080b, 0x0401, 0x0501, 0x0601,
    0x0303, 0x0301, 0x0302, 0x0402, 0x0502, 0x0602, 0x0201, 0x0203, 0x0202,
];

/// What a ClientHello offers.
#[derive(Debug, Clone)]
pub struct Hello<'a> {
    pub version: Version,
    pub suites: &'a [u16],
    /// Also offered: TLS_FALLBACK_SCSV (a fallback connection, RFC 7507).
    pub fallback_scsv: bool,
    pub sni: Option<&'a str>,
    /// Named groups for supported_groups (and, in TLS 1.3, the first one's key share).
    pub groups: &'a [u16],
    /// Offer DEFLATE compression besides NULL.
    pub deflate: bool,
    pub random: [u8; 32],
    /// The TLS 1.3 key share's public value for the first group (32 bytes for x25519);
    /// empty for no share at all (the server then asks for one in a HelloRetryRequest).
    pub key_share: &'a [u8],
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_u24(out: &mut Vec<u8>, v: usize) {
    let v = u32::try_from(v).unwrap_or(u32::MAX).min(0x00ff_ffff);
    out.extend_from_slice(&v.to_be_bytes()[1..]);
}

/// `body` behind a u16 length.
fn vec16(out: &mut Vec<u8>, body: &[u8]) {
    put_u16(out, u16::try_from(body.len()).unwrap_or(u16::MAX));
    out.extend_from_slice(&body[..body.len().min(usize::from(u16::MAX))]);
}

fn extension(out: &mut Vec<u8>, kind: u16, body: &[u8]) {
    put_u16(out, kind);
    vec16(out, body);
}

/// A ClientHello in TLS records (SSLv3 to TLS 1.3). Extensions are sent from TLS 1.0 up.
pub fn client_hello(h: &Hello<'_>) -> Vec<u8> {
    let legacy_version = match h.version {
        Version::Tls13 => Version::Tls12.wire(),
        v => v.wire(),
    };
    let mut body = Vec::with_capacity(1024);
    put_u16(&mut body, legacy_version);
    body.extend_from_slice(&h.random);
    // A 32-byte session id in TLS 1.3 hellos (middlebox compatibility), none otherwise.
    if h.version == Version::Tls13 {
        body.push(32);
        body.extend_from_slice(&h.random);
    } else {
        body.push(0);
    }
    let mut suites = Vec::with_capacity(h.suites.len() * 2 + 4);
    for s in h.suites {
        put_u16(&mut suites, *s);
    }
    if h.fallback_scsv {
        put_u16(&mut suites, TLS_FALLBACK_SCSV);
    }
    vec16(&mut body, &suites);
    if h.deflate && h.version != Version::Tls13 {
        body.extend_from_slice(&[2, 1, 0]);
    } else {
        body.extend_from_slice(&[1, 0]);
    }
    if h.version != Version::Ssl3 {
        let mut ext = Vec::with_capacity(512);
        if let Some(name) = h.sni {
            let mut list = vec![0u8];
            vec16(&mut list, name.as_bytes());
            let mut sni = Vec::new();
            vec16(&mut sni, &list);
            extension(&mut ext, EXT_SERVER_NAME, &sni);
        }
        let mut groups = Vec::new();
        for g in h.groups {
            put_u16(&mut groups, *g);
        }
        let mut list = Vec::new();
        vec16(&mut list, &groups);
        extension(&mut ext, EXT_SUPPORTED_GROUPS, &list);
        extension(&mut ext, EXT_EC_POINT_FORMATS, &[1, 0]);
        if h.version >= Version::Tls12 {
            let mut algs = Vec::new();
            for a in SIGNATURE_ALGORITHMS {
                put_u16(&mut algs, *a);
            }
            let mut list = Vec::new();
            vec16(&mut list, &algs);
            extension(&mut ext, EXT_SIGNATURE_ALGORITHMS, &list);
        }
        extension(&mut ext, EXT_RENEGOTIATION_INFO, &[0]);
        extension(&mut ext, EXT_STATUS_REQUEST, &[1, 0, 0, 0, 0]);
        extension(&mut ext, EXT_HEARTBEAT, &[1]);
        extension(&mut ext, EXT_SESSION_TICKET, &[]);
        extension(&mut ext, EXT_EXTENDED_MASTER_SECRET, &[]);
        // ALPN: h2 and http/1.1.
        let mut protocols = Vec::new();
        for p in [&b"h2"[..], b"http/1.1"] {
            protocols.push(u8::try_from(p.len()).unwrap_or(0));
            protocols.extend_from_slice(p);
        }
        let mut alpn = Vec::new();
        vec16(&mut alpn, &protocols);
        extension(&mut ext, EXT_ALPN, &alpn);
        if h.version == Version::Tls13 {
            extension(&mut ext, EXT_SUPPORTED_VERSIONS, &[2, 0x03, 0x04]);
            extension(&mut ext, EXT_PSK_MODES, &[1, 1]);
            let mut share = Vec::new();
            if let Some(g) = h.groups.first()
                && !h.key_share.is_empty()
            {
                put_u16(&mut share, *g);
                vec16(&mut share, h.key_share);
            }
            let mut shares = Vec::new();
            vec16(&mut shares, &share);
            extension(&mut ext, EXT_KEY_SHARE, &shares);
        }
        vec16(&mut body, &ext);
    }
    let mut handshake = Vec::with_capacity(body.len() + 4);
    handshake.push(1);
    put_u24(&mut handshake, body.len());
    handshake.extend_from_slice(&body);
    let record_version = match h.version {
        Version::Ssl3 => 0x0300,
        _ => 0x0301,
    };
    let mut out = Vec::with_capacity(handshake.len() + 5);
    out.push(RECORD_HANDSHAKE);
    put_u16(&mut out, record_version);
    vec16(&mut out, &handshake);
    out
}

/// The SSLv2 cipher kinds offered in an SSLv2 CLIENT-HELLO (RFC 6101 App. E).
pub const SSL2_CIPHERS: &[([u8; 3], &str)] = &[
    ([0x01, 0x00, 0x80], "SSL_CK_RC4_128_WITH_MD5"),
    ([0x02, 0x00, 0x80], "SSL_CK_RC4_128_EXPORT40_WITH_MD5"),
    ([0x03, 0x00, 0x80], "SSL_CK_RC2_128_CBC_WITH_MD5"),
    ([0x04, 0x00, 0x80], "SSL_CK_RC2_128_CBC_EXPORT40_WITH_MD5"),
    ([0x05, 0x00, 0x80], "SSL_CK_IDEA_128_CBC_WITH_MD5"),
    ([0x06, 0x00, 0x40], "SSL_CK_DES_64_CBC_WITH_MD5"),
    ([0x07, 0x00, 0xc0], "SSL_CK_DES_192_EDE3_CBC_WITH_MD5"),
];

/// An SSLv2-format CLIENT-HELLO offering every SSLv2 cipher kind.
pub fn ssl2_client_hello(challenge: &[u8; 16]) -> Vec<u8> {
    let mut body = vec![1, 0x00, 0x02];
    let specs: Vec<u8> = SSL2_CIPHERS.iter().flat_map(|(c, _)| *c).collect();
    put_u16(&mut body, u16::try_from(specs.len()).unwrap_or(0));
    put_u16(&mut body, 0);
    put_u16(&mut body, 16);
    body.extend_from_slice(&specs);
    body.extend_from_slice(challenge);
    let len = u16::try_from(body.len()).unwrap_or(0) | 0x8000;
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// A bounds-checked reader.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3).map(|b| (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u8()?);
        self.take(n)
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u16()?);
        self.take(n)
    }
    fn vec24(&mut self) -> Option<&'a [u8]> {
        let n = self.u24()?;
        self.take(n)
    }
}

/// One record: its type, version and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: u8,
    pub version: u16,
    pub body: &'a [u8],
}

/// The first whole record of `buf` and the bytes after it; `Ok(None)` when more bytes
/// are needed; an error when the bytes cannot be a TLS record.
pub fn record(buf: &[u8]) -> Result<Option<(Record<'_>, &[u8])>, String> {
    let Some(header) = buf.get(..5) else { return Ok(None) };
    let kind = header[0];
    if !(20..=24).contains(&kind) {
        return Err(format!("not a TLS record (type {kind})"));
    }
    if header[1] != 3 {
        return Err(format!("not a TLS record (version {}.{})", header[1], header[2]));
    }
    let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
    if len > MAX_RECORD {
        return Err(format!("record of {len} bytes"));
    }
    let Some(body) = buf.get(5..5 + len) else { return Ok(None) };
    let version = u16::from_be_bytes([header[1], header[2]]);
    Ok(Some((Record { kind, version, body }, &buf[5 + len..])))
}

/// A handshake message's type, its body, and the bytes after it.
pub type Message<'a> = (u8, &'a [u8], &'a [u8]);

/// The first handshake message of `buf`; `Ok(None)` when more bytes are needed.
pub fn handshake_message(buf: &[u8]) -> Result<Option<Message<'_>>, String> {
    let mut r = Reader { buf };
    let Some(kind) = r.u8() else { return Ok(None) };
    let Some(len) = r.u24() else { return Ok(None) };
    if len > 1 << 20 {
        return Err(format!("handshake message of {len} bytes"));
    }
    match r.take(len) {
        Some(body) => Ok(Some((kind, body, r.buf))),
        None => Ok(None),
    }
}

/// What a ServerHello says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The negotiated version (supported_versions in TLS 1.3).
    pub version: u16,
    pub suite: u16,
    pub compression: u8,
    pub hello_retry: bool,
    /// Extension types present.
    pub extensions: Vec<u16>,
    pub alpn: Option<String>,
    /// The key-share group (TLS 1.3 ServerHello or HelloRetryRequest).
    pub key_share_group: Option<u16>,
    /// The renegotiation_info extension is present and empty (RFC 5746 first handshake).
    pub secure_renegotiation: bool,
}

pub fn server_hello(body: &[u8]) -> Result<ServerHello, String> {
    let short = || "ServerHello too short".to_owned();
    let mut r = Reader { buf: body };
    let legacy_version = r.u16().ok_or_else(short)?;
    let random = r.take(32).ok_or_else(short)?;
    r.vec8().ok_or_else(short)?;
    let suite = r.u16().ok_or_else(short)?;
    let compression = r.u8().ok_or_else(short)?;
    let mut hello = ServerHello {
        version: legacy_version,
        suite,
        compression,
        hello_retry: random == HRR_RANDOM,
        ..ServerHello::default()
    };
    if r.buf.is_empty() {
        return Ok(hello);
    }
    let mut exts = Reader { buf: r.vec16().ok_or_else(|| "ServerHello extensions truncated".to_owned())? };
    while !exts.buf.is_empty() {
        let kind = exts.u16().ok_or_else(|| "extension truncated".to_owned())?;
        let data = exts.vec16().ok_or_else(|| "extension truncated".to_owned())?;
        hello.extensions.push(kind);
        let mut d = Reader { buf: data };
        match kind {
            EXT_SUPPORTED_VERSIONS => hello.version = d.u16().ok_or_else(|| "supported_versions".to_owned())?,
            EXT_KEY_SHARE => hello.key_share_group = d.u16(),
            EXT_RENEGOTIATION_INFO => hello.secure_renegotiation = data == [0],
            EXT_ALPN => {
                let mut list = Reader { buf: d.vec16().unwrap_or_default() };
                hello.alpn = list.vec8().map(|p| String::from_utf8_lossy(p).into_owned());
            }
            _ => {}
        }
    }
    Ok(hello)
}

/// The DER certificates of a Certificate message (TLS ≤ 1.2), leaf first.
pub fn certificates(body: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut r = Reader { buf: body };
    let mut list = Reader { buf: r.vec24().ok_or_else(|| "Certificate message truncated".to_owned())? };
    let mut out = Vec::new();
    while !list.buf.is_empty() {
        let cert = list.vec24().ok_or_else(|| "certificate entry truncated".to_owned())?;
        out.push(cert.to_vec());
    }
    Ok(out)
}

/// What a ServerKeyExchange shows of the key exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyExchange {
    /// Finite-field DH with a prime of this many bits.
    Dh { bits: usize },
    /// ECDH on a named group.
    Ecdh { group: u16 },
    /// An RSA EXPORT key of this many bits.
    Rsa { bits: usize },
}

/// Bits of a big-endian unsigned integer (leading zero bytes ignored).
pub fn bit_length(n: &[u8]) -> usize {
    let n = match n.iter().position(|b| *b != 0) {
        Some(i) => &n[i..],
        None => return 0,
    };
    n.len() * 8 - n[0].leading_zeros() as usize
}

/// Parses the parameters of a ServerKeyExchange for the suite's key exchange.
pub fn server_key_exchange(body: &[u8], kx: super::suites::Kx) -> Option<KeyExchange> {
    let mut r = Reader { buf: body };
    match kx {
        super::suites::Kx::Dhe | super::suites::Kx::AnonDh => Some(KeyExchange::Dh { bits: bit_length(r.vec16()?) }),
        super::suites::Kx::Ecdhe | super::suites::Kx::AnonEcdh => {
            // curve_type 3 = named_curve.
            (r.u8()? == 3).then_some(())?;
            Some(KeyExchange::Ecdh { group: r.u16()? })
        }
        super::suites::Kx::Rsa => Some(KeyExchange::Rsa { bits: bit_length(r.vec16()?) }),
        _ => None,
    }
}

/// What came back for one ClientHello.
#[derive(Debug, Clone, Default)]
pub struct Flight {
    pub hello: Option<ServerHello>,
    pub certificates: Vec<Vec<u8>>,
    pub key_exchange_body: Option<Vec<u8>>,
    pub stapled: bool,
    pub done: bool,
    /// A fatal alert (its description) instead of a ServerHello.
    pub alert: Option<u8>,
}

/// Feeds the bytes received so far; returns the flight once it is complete (ServerHello
/// in TLS 1.3 / HelloRetryRequest, ServerHelloDone otherwise, or an alert), `Ok(None)`
/// when more bytes are needed.
pub fn flight(buf: &[u8]) -> Result<Option<Flight>, String> {
    let mut rest = buf;
    let mut handshake = Vec::new();
    let mut out = Flight::default();
    loop {
        let Some((rec, after)) = record(rest)? else { return Ok(None) };
        rest = after;
        match rec.kind {
            RECORD_ALERT => {
                let level = rec.body.first().copied().unwrap_or(0);
                let description = rec.body.get(1).copied().unwrap_or(0);
                if level == 2 || out.hello.is_none() {
                    out.alert = Some(description);
                    return Ok(Some(out));
                }
            }
            RECORD_HANDSHAKE => {
                handshake.extend_from_slice(rec.body);
                let mut msgs: &[u8] = &handshake;
                while let Some((kind, body, after)) = handshake_message(msgs)? {
                    msgs = after;
                    match kind {
                        HS_SERVER_HELLO => {
                            let hello = server_hello(body)?;
                            let tls13 = hello.version == Version::Tls13.wire();
                            out.hello = Some(hello);
                            if tls13 {
                                return Ok(Some(out));
                            }
                        }
                        HS_CERTIFICATE => out.certificates = certificates(body)?,
                        HS_SERVER_KEY_EXCHANGE => out.key_exchange_body = Some(body.to_vec()),
                        HS_CERTIFICATE_STATUS => out.stapled = true,
                        HS_SERVER_HELLO_DONE => {
                            out.done = true;
                            return Ok(Some(out));
                        }
                        _ => {}
                    }
                }
                // Keep only the unparsed tail of the handshake stream.
                let consumed = handshake.len() - msgs.len();
                handshake.drain(..consumed);
            }
            // ChangeCipherSpec (TLS 1.3 compatibility) or anything else: skip.
            _ => {}
        }
    }
}

/// The cipher kinds (by name) and the certificate of an SSLv2 SERVER-HELLO.
pub type Ssl2Hello = (Vec<String>, Vec<u8>);

/// An SSLv2 SERVER-HELLO: the cipher kinds the server accepts (by name) and its
/// certificate; `Ok(None)` when more bytes are needed.
pub fn ssl2_server_hello(buf: &[u8]) -> Result<Option<Ssl2Hello>, String> {
    let mut r = Reader { buf };
    let Some(header) = r.u16() else { return Ok(None) };
    if header & 0x8000 == 0 {
        return Err("not an SSLv2 record".into());
    }
    let len = usize::from(header & 0x7fff);
    let Some(body) = r.take(len) else { return Ok(None) };
    let mut b = Reader { buf: body };
    if b.u8() != Some(4) {
        return Err("not an SSLv2 SERVER-HELLO".into());
    }
    let short = || "SSLv2 SERVER-HELLO too short".to_owned();
    b.u8().ok_or_else(short)?; // session id hit
    b.u8().ok_or_else(short)?; // certificate type
    b.u16().ok_or_else(short)?; // version
    let cert_len = usize::from(b.u16().ok_or_else(short)?);
    let specs_len = usize::from(b.u16().ok_or_else(short)?);
    b.u16().ok_or_else(short)?; // connection id length
    let cert = b.take(cert_len).ok_or_else(short)?.to_vec();
    let specs = b.take(specs_len).ok_or_else(short)?;
    let names = specs
        .chunks_exact(3)
        .map(|c| {
            SSL2_CIPHERS
                .iter()
                .find(|(code, _)| code[..] == *c)
                .map_or_else(|| format!("SSL2 0x{:02x}{:02x}{:02x}", c[0], c[1], c[2]), |(_, n)| (*n).to_owned())
        })
        .collect();
    Ok(Some((names, cert)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_lengths() {
        assert_eq!(bit_length(&[0, 0x80, 0]), 16);
        assert_eq!(bit_length(&[0x01]), 1);
        assert_eq!(bit_length(&[]), 0);
        assert_eq!(bit_length(&[0xff; 128]), 1024);
    }

    #[test]
    fn a_hello_is_one_well_formed_record() {
        let suites = [0x1301u16, 0x1302];
        let hello = Hello {
            version: Version::Tls13,
            suites: &suites,
            fallback_scsv: false,
            sni: Some("www.example.test"),
            groups: &[0x001d],
            deflate: false,
            random: [7; 32],
            key_share: &[9; 32],
        };
        let bytes = client_hello(&hello);
        let (rec, rest) = record(&bytes).unwrap().unwrap();
        assert!(rest.is_empty());
        assert_eq!((rec.kind, rec.version), (RECORD_HANDSHAKE, 0x0301));
        let (kind, body, after) = handshake_message(rec.body).unwrap().unwrap();
        assert_eq!((kind, after.len()), (1, 0));
        assert_eq!(&body[..2], &[3, 3]);
        assert!(bytes.windows(16).any(|w| w == b"www.example.test"));
    }

    #[test]
    fn parsers_are_total() {
        use proptest::prelude::*;
        proptest!(|(bytes in proptest::collection::vec(any::<u8>(), 0..600))| {
            let _ = flight(&bytes);
            let _ = server_hello(&bytes);
            let _ = certificates(&bytes);
            let _ = ssl2_server_hello(&bytes);
            let _ = server_key_exchange(&bytes, super::super::suites::Kx::Dhe);
            let _ = server_key_exchange(&bytes, super::super::suites::Kx::Ecdhe);
        });
    }
}
