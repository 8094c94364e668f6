//! ClientHello parsing: TLS records (possibly fragmented) and the SSLv2 format.

use crate::TlsError;

/// Largest TLSPlaintext fragment.
pub(crate) const MAX_FRAGMENT: usize = 16384;
/// Largest ClientHello handshake message accepted.
pub(crate) const MAX_HELLO: usize = 16384;

/// A ClientHello as the responder needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientHello {
    /// The record layer version (for the SSLv2 format: the hello's version).
    pub record_version: u16,
    pub client_version: u16,
    pub random: [u8; 32],
    pub suites: Vec<u16>,
    /// SSLv2 cipher kinds offered in an SSLv2-format hello.
    pub ssl2_ciphers: Vec<u32>,
    pub compression: Vec<u8>,
    /// `None` when the hello carries no extensions block.
    pub extensions: Option<Vec<(u16, Vec<u8>)>>,
    pub sslv2_format: bool,
}

impl ClientHello {
    pub fn extension(&self, kind: u16) -> Option<&[u8]> {
        self.extensions.as_ref()?.iter().find(|(k, _)| *k == kind).map(|(_, d)| d.as_slice())
    }
}

/// What the bytes received so far amount to.
#[derive(Debug)]
pub(crate) enum Parsed {
    Incomplete,
    /// A hello and how many bytes of the input it took.
    Hello(ClientHello, usize),
}

fn malformed(what: &'static str) -> TlsError {
    TlsError::Malformed(what)
}

/// A bounds-checked cursor.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], TlsError> {
        if self.buf.len() < n {
            return Err(malformed("truncated"));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8, TlsError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, TlsError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn vec8(&mut self) -> Result<&'a [u8], TlsError> {
        let n = usize::from(self.u8()?);
        self.take(n)
    }
    pub fn vec16(&mut self) -> Result<&'a [u8], TlsError> {
        let n = usize::from(self.u16()?);
        self.take(n)
    }
}

/// Parses the start of a connection: TLS handshake records holding a ClientHello, or an
/// SSLv2-format ClientHello.
pub(crate) fn parse_client_hello(buf: &[u8]) -> Result<Parsed, TlsError> {
    match buf.first() {
        None => Ok(Parsed::Incomplete),
        Some(&b) if b & 0x80 != 0 => parse_sslv2(buf),
        Some(22) => parse_records(buf),
        Some(_) => Err(malformed("not a TLS handshake record")),
    }
}

fn parse_records(buf: &[u8]) -> Result<Parsed, TlsError> {
    let mut payload = Vec::new();
    let mut pos = 0usize;
    let mut record_version = None;
    loop {
        let Some(header) = buf.get(pos..pos + 5) else { return Ok(Parsed::Incomplete) };
        if header[0] != 22 {
            return Err(malformed("ClientHello interleaved with another record type"));
        }
        let version = u16::from_be_bytes([header[1], header[2]]);
        if header[1] != 3 {
            return Err(malformed("record version"));
        }
        record_version.get_or_insert(version);
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len == 0 || len > MAX_FRAGMENT {
            return Err(malformed("record length"));
        }
        let Some(fragment) = buf.get(pos + 5..pos + 5 + len) else { return Ok(Parsed::Incomplete) };
        payload.extend_from_slice(fragment);
        pos += 5 + len;
        if payload.len() >= 4 {
            if payload[0] != 1 {
                return Err(malformed("first handshake message is not a ClientHello"));
            }
            let msg_len = (usize::from(payload[1]) << 16) | (usize::from(payload[2]) << 8) | usize::from(payload[3]);
            if msg_len > MAX_HELLO {
                return Err(malformed("ClientHello too long"));
            }
            if let Some(body) = payload.get(4..4 + msg_len) {
                let hello = parse_hello_body(body, record_version.unwrap_or(version))?;
                return Ok(Parsed::Hello(hello, pos));
            }
        }
    }
}

fn parse_hello_body(body: &[u8], record_version: u16) -> Result<ClientHello, TlsError> {
    let mut r = Reader::new(body);
    let client_version = r.u16()?;
    let mut random = [0u8; 32];
    random.copy_from_slice(r.take(32)?);
    let session_id = r.vec8()?;
    if session_id.len() > 32 {
        return Err(malformed("session id longer than 32"));
    }
    let suites_raw = r.vec16()?;
    if suites_raw.is_empty() || suites_raw.len() % 2 != 0 {
        return Err(malformed("cipher suite list"));
    }
    let suites = suites_raw.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let compression = r.vec8()?.to_vec();
    if compression.is_empty() {
        return Err(malformed("compression methods"));
    }
    let extensions = if r.rest().is_empty() {
        None
    } else {
        let mut block = Reader::new(r.vec16()?);
        let mut extensions = Vec::new();
        while !block.rest().is_empty() {
            let kind = block.u16()?;
            let data = block.vec16()?;
            extensions.push((kind, data.to_vec()));
        }
        Some(extensions)
    };
    Ok(ClientHello {
        record_version,
        client_version,
        random,
        suites,
        ssl2_ciphers: Vec::new(),
        compression,
        extensions,
        sslv2_format: false,
    })
}

/// An SSLv2-format CLIENT-HELLO (2-byte header), from an SSLv2 client or an SSLv3/TLS
/// client being compatible.
fn parse_sslv2(buf: &[u8]) -> Result<Parsed, TlsError> {
    let Some(header) = buf.get(..2) else { return Ok(Parsed::Incomplete) };
    let len = (usize::from(header[0] & 0x7f) << 8) | usize::from(header[1]);
    if len > MAX_FRAGMENT {
        return Err(malformed("SSLv2 record length"));
    }
    let Some(body) = buf.get(2..2 + len) else { return Ok(Parsed::Incomplete) };
    let mut r = Reader::new(body);
    if r.u8()? != 1 {
        return Err(malformed("SSLv2 message is not a CLIENT-HELLO"));
    }
    let client_version = r.u16()?;
    let specs_len = usize::from(r.u16()?);
    let session_len = usize::from(r.u16()?);
    let challenge_len = usize::from(r.u16()?);
    if specs_len == 0 || specs_len % 3 != 0 || session_len > 32 || !(16..=32).contains(&challenge_len) {
        return Err(malformed("SSLv2 CLIENT-HELLO lengths"));
    }
    let specs = r.take(specs_len)?;
    r.take(session_len)?;
    let challenge = r.take(challenge_len)?;
    let mut suites = Vec::new();
    let mut ssl2_ciphers = Vec::new();
    for spec in specs.chunks_exact(3) {
        if spec[0] == 0 {
            suites.push(u16::from_be_bytes([spec[1], spec[2]]));
        } else {
            ssl2_ciphers.push((u32::from(spec[0]) << 16) | (u32::from(spec[1]) << 8) | u32::from(spec[2]));
        }
    }
    let mut random = [0u8; 32];
    random[32 - challenge_len..].copy_from_slice(challenge);
    let hello = ClientHello {
        record_version: client_version,
        client_version,
        random,
        suites,
        ssl2_ciphers,
        compression: vec![0],
        extensions: None,
        sslv2_format: true,
    };
    Ok(Parsed::Hello(hello, 2 + len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tls_hello(version: u16, suites: &[u16], extensions: Option<&[u8]>) -> Vec<u8> {
        let mut body = version.to_be_bytes().to_vec();
        body.extend_from_slice(&[7u8; 32]);
        body.push(0);
        body.extend_from_slice(&((suites.len() * 2) as u16).to_be_bytes());
        for s in suites {
            body.extend_from_slice(&s.to_be_bytes());
        }
        body.extend_from_slice(&[1, 0]);
        if let Some(ext) = extensions {
            body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
            body.extend_from_slice(ext);
        }
        let mut hs = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut rec = vec![22, 3, 1, (hs.len() >> 8) as u8, hs.len() as u8];
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn parses_a_tls_hello_with_extensions() {
        let ext = [0xff, 0x01, 0x00, 0x01, 0x00, 0x00, 0x0f, 0x00, 0x01, 0x01];
        let bytes = tls_hello(0x0301, &[0x0004, 0x000a], Some(&ext));
        let Parsed::Hello(h, used) = parse_client_hello(&bytes).unwrap() else { panic!("incomplete") };
        assert_eq!(used, bytes.len());
        assert_eq!(h.client_version, 0x0301);
        assert_eq!(h.suites, vec![4, 10]);
        assert_eq!(h.extension(0xff01), Some(&[0u8][..]));
        assert_eq!(h.extension(15), Some(&[1u8][..]));
    }

    #[test]
    fn every_prefix_is_incomplete_and_fragmented_records_join() {
        let bytes = tls_hello(0x0300, &[0x0004], None);
        for n in 0..bytes.len() {
            assert!(matches!(parse_client_hello(&bytes[..n]), Ok(Parsed::Incomplete)), "{n}");
        }
        // The same handshake message split over two records.
        let hs = &bytes[5..];
        let (a, b) = hs.split_at(10);
        let mut split = vec![22, 3, 0, 0, a.len() as u8];
        split.extend_from_slice(a);
        split.extend_from_slice(&[22, 3, 0, 0, b.len() as u8]);
        split.extend_from_slice(b);
        let Parsed::Hello(h, used) = parse_client_hello(&split).unwrap() else { panic!("incomplete") };
        assert_eq!(used, split.len());
        assert_eq!(h.suites, vec![4]);
        assert!(h.extensions.is_none());
    }

    #[test]
    fn parses_an_sslv2_hello() {
        let mut body = vec![1, 0x03, 0x01, 0, 6, 0, 0, 0, 16];
        body.extend_from_slice(&[0x01, 0x00, 0x80, 0x00, 0x00, 0x2f]);
        body.extend_from_slice(&[9u8; 16]);
        let mut bytes = vec![0x80, body.len() as u8];
        bytes.extend_from_slice(&body);
        let Parsed::Hello(h, _) = parse_client_hello(&bytes).unwrap() else { panic!("incomplete") };
        assert!(h.sslv2_format);
        assert_eq!(h.client_version, 0x0301);
        assert_eq!(h.suites, vec![0x002f]);
        assert_eq!(h.ssl2_ciphers, vec![0x010080]);
        assert_eq!(&h.random[16..], &[9u8; 16]);
    }

    #[test]
    fn random_bytes_never_panic() {
        // A cheap deterministic generator on top of proptest below.
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 300) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|i| (x >> (i % 56)) as u8 ^ i as u8).collect();
            if let Some(first) = bytes.first_mut() {
                *first = [22, 0x80, 0x81, 0x16, 0][(x % 5) as usize];
            }
            let _ = parse_client_hello(&bytes);
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = parse_client_hello(&bytes);
        }

        #[test]
        fn truncated_or_corrupted_hellos_never_panic(cut in 0usize..200, flip in 0usize..200, bit in 0u8..8) {
            let ext = [0xff, 0x01, 0x00, 0x01, 0x00, 0x00, 0x0f, 0x00, 0x01, 0x01];
            let mut bytes = tls_hello(0x0303, &[0x0004, 0xc02f, 0x00ff], Some(&ext));
            let flip = flip % bytes.len();
            bytes[flip] ^= 1 << bit;
            bytes.truncate(cut.min(bytes.len()));
            let _ = parse_client_hello(&bytes);
        }
    }
}
